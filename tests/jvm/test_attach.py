#!/usr/bin/env python3
"""`vtpin attach`: loading the agent into a running JVM through HotSpot's attach
protocol, on JDK 21 and 25, and failing clearly when it cannot.

Each case is one CTest entry: `test_attach.py CASE [JDK]` (e.g. `attach 21`).
The JVMs here start WITHOUT the agent: ReproLoop runs until its stop file appears."""
import os
import re
import shutil
import socket
import signal
import subprocess
import time

from harness import (CLASSES, FIXTURE_LIB, VTPIN, Failure, check, forget_stale_attach_socket, jdk_home, main,
                     native_block_in, report_json, scheduler, skip, tempdir, wait_ready)


class Target:
    """A ReproLoop JVM with no agent, its output in files."""

    def __init__(self, feature, jvm_args=(), duration=120, wrap=(), workdir=None):
        self.home = jdk_home(int(feature))
        self.dir = workdir or tempdir("vtpin-attach-")
        self.stop_file = os.path.join(self.dir, "stop")
        self.cmd = list(wrap) + [os.path.join(self.home, "bin", "java")] + list(jvm_args) + [
            "-cp", CLASSES, "ReproLoop", str(duration), self.stop_file]
        self.proc = None
        self.pid = None

    def start(self, pid_of=None):
        self.out = open(os.path.join(self.dir, "stdout.txt"), "w")
        self.err = open(os.path.join(self.dir, "stderr.txt"), "w")
        self.proc = subprocess.Popen(self.cmd, stdout=self.out, stderr=self.err, cwd=self.dir,
                                     start_new_session=True)
        deadline = time.monotonic() + 30
        while "ReproLoop: ready pid=" not in self.stdout():
            check(self.proc.poll() is None, "the JVM exited before it was ready:\n" + self.stderr())
            check(time.monotonic() < deadline, "the JVM did not get ready within 30 s:\n" + self.stderr())
            time.sleep(0.05)
        self.pid = pid_of(self) if pid_of else self.proc.pid
        return self

    def alive(self):
        return self.proc.poll() is None

    def stop(self, timeout=60):
        """Ends ReproLoop through its stop file; it must exit 0."""
        with open(self.stop_file, "w"):
            pass
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Failure("the JVM did not stop within %d s of its stop file\n%s" % (timeout, self.stderr()))
        check(rc == 0, "the JVM exited %d:\n%s" % (rc, self.stderr()))

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stderr(self):
        with open(os.path.join(self.dir, "stderr.txt"), errors="replace") as f:
            return f.read()

    def stdout(self):
        with open(os.path.join(self.dir, "stdout.txt"), errors="replace") as f:
            return f.read()

    def wait_stderr(self, text, timeout=10):
        deadline = time.monotonic() + timeout
        while text not in self.stderr():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True


def attach(*args, timeout=60):
    """Runs `vtpin attach ARGS`; returns (exit status, stdout, stderr, seconds). The pid is the first
    argument of digits alone, after the options (ci41: attach_disabled's pid, after --timeout, met an
    earlier JVM's socket that this did not remove)."""
    pid = next((int(a) for a in args if str(a).isdigit()), None)
    if pid is not None:
        forget_stale_attach_socket(pid)
    start = time.monotonic()
    p = subprocess.run([VTPIN, "attach"] + [str(a) for a in args], capture_output=True, text=True, timeout=timeout)
    took = time.monotonic() - start
    print("$ vtpin attach %s  -> exit %d in %.2f s" % (" ".join(str(a) for a in args), p.returncode, took))
    for line in (p.stdout + p.stderr).splitlines():
        print("  | " + line)
    return p.returncode, p.stdout, p.stderr, took


def trigger_files(t, nspid):
    """Trigger files left behind in the target's cwd or /tmp."""
    names = [os.path.join(t.dir, ".attach_pid%d" % nspid), "/proc/%d/root/tmp/.attach_pid%d" % (t.pid, nspid)]
    return [n for n in names if os.path.exists(n)]


def load_stop_report(t, record, trace, jdk):
    """Attach, attach again, stop, end the JVM, read the recording: what every attach case checks."""
    rc, out, err, _ = attach(t.pid, "record=%s,tracefile=%s" % (record, trace))
    check(rc == 0, "attach exits 0, got %d: %s" % (rc, err))
    check("return code: 0" in out, "stdout shows the JVM's reply: %r" % out)
    check(t.wait_stderr("detecting pins"), "the agent says it is detecting pins:\n" + t.stderr())
    check("attach mode" in t.stderr(), "the agent knows it was attached:\n" + t.stderr())

    rc, out, err, _ = attach(t.pid, "record=%s,tracefile=%s" % (record, trace))
    check(rc == 1 and "vtpin is already running in %d" % t.pid in err and "stop` first" in err,
          "a second attach while running changes nothing and fails clearly, got %d: %s" % (rc, err))
    check(t.wait_stderr("already running"), "the agent says it is already running:\n" + t.stderr())
    time.sleep(0.5)
    check(t.alive(), "the JVM keeps running after the second attach:\n" + t.stderr())

    rc, out, err, _ = attach(t.pid, "stop")
    check(rc == 0, "attach PID stop exits 0, got %d: %s" % (rc, err))
    check(t.alive(), "the JVM keeps running after stop:\n" + t.stderr())
    t.stop()
    print("JVM stderr:\n" + "\n".join("  | " + line for line in t.stderr().splitlines()))
    rep = report_json(record)
    check(rep["jvm"].get("mode") == "attach", "the Hello says mode attach: %s" % rep["jvm"])
    check(rep["jvm"]["java_version"].startswith(str(jdk)), "the Hello names JDK %s: %s" % (jdk, rep["jvm"]))
    print("JDK %s: %d pins recorded in attach mode (missing capabilities: %s)" % (
        jdk, len(rep["pins"]), rep["jvm"].get("capabilities_missing")))
    return rep


def case_attach(jdk):
    t = Target(jdk).start()
    try:
        rep = load_stop_report(t, os.path.join(t.dir, "a.vtp"), os.path.join(t.dir, "t.txt"), jdk)
        check(not trigger_files(t, t.pid), "the trigger file is removed: %s" % trigger_files(t, t.pid))
    finally:
        t.kill()
    pins = [p for p in rep["pins"] if any(f["class"] == "ReproLoop" for f in p["stack"])]
    if int(jdk) >= 24:
        check(not pins, "no monitor pins on 24+: %s" % pins[:1])
        return
    # Without breakpoints the sampler finds the pins, the bytecode names the monitor holder.
    check(pins, "pins seen after attach on 21")
    for p in pins:
        check(p["reason"] == "MONITOR", "reason inferred as MONITOR: %s" % p["reason"])
        c = p["stack"][p["culprit"]]
        check(c["class"] == "ReproLoop" and c["method"] == "settle" and c["monitors"] == 1,
              "culprit ReproLoop.settle holds 1 monitor (from its bytecode): %s" % c)
        check(p["carrier"]["tid"] > 0, "carrier tid known after attach: %s" % p["carrier"])


class FiledJvm:
    """A JVM started in directory d, its stdout and stderr in files there: what they say so far, and a
    wait for a line in one of them while the JVM lives. A context: killed and d removed at its end."""

    def __init__(self, cmd, d, stdin=None):
        self.dir = d
        self.out, self.err = open(os.path.join(d, "stdout.txt"), "w"), open(os.path.join(d, "stderr.txt"), "w")
        self.proc = subprocess.Popen(cmd, stdin=stdin, stdout=self.out, stderr=self.err, cwd=d,
                                     start_new_session=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.out.close()
        self.err.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def text(self, name):
        with open(os.path.join(self.dir, name), errors="replace") as f:
            return f.read()

    def wait_for(self, name, needle, count=1, timeout=30):
        deadline = time.monotonic() + timeout
        while self.text(name).count(needle) < count:
            check(self.proc.poll() is None, "the JVM exited:\n" + self.text("stderr.txt"))
            check(time.monotonic() < deadline, "no %r (x%d) in %s:\n%s" % (needle, count, name, self.text(name)))
            time.sleep(0.05)


def case_reattach(jdk):
    """attach, stop, attach again with new options: detection runs again (new record file,
    writer, events) and finds the pins that follow. Two threads blocked in nanosleep are
    NATIVE_BLOCK pins on every JDK, found by the watchdog after attach."""
    home = jdk_home(int(jdk))
    d = tempdir(prefix="vtpin-reattach-")
    first, second, trace = (os.path.join(d, n) for n in ("first.vtp", "second.vtp", "second.txt"))
    cmd = [os.path.join(home, "bin", "java"), "--enable-native-access=ALL-UNNAMED",
           "-Djava.library.path=" + FIXTURE_LIB, "-cp", CLASSES] + scheduler(2) + ["NativeBlock", "nanosleep", "2",
                                                                                 "60000"]
    with FiledJvm(cmd, d) as jvm:
        proc, text, wait_for = jvm.proc, jvm.text, jvm.wait_for
        wait_for("stdout.txt", "NativeBlock: started")
        rc, _, e, _ = attach(proc.pid, "record=" + first)
        check(rc == 0, "first attach exits 0: %s" % e)
        wait_for("stderr.txt", "detecting pins")
        rc, _, e, _ = attach(proc.pid, "stop")
        check(rc == 0, "stop exits 0: %s" % e)
        wait_for("stderr.txt", "stopped")
        rep = report_json(first)
        check(rep["recording"]["complete"], "the first recording ends with its Goodbye: %s" % rep["recording"])
        first_stats, first_missing = rep["stats"], rep["jvm"]["capabilities_missing"]
        # stop gives back the capabilities (all but NativeMethodBind's), as the JVM itself then says
        gave = re.search(r"gave back (\d+) of its (\d+) JVMTI capabilities", text("stderr.txt"))
        check(gave and int(gave.group(1)) == int(gave.group(2)) - 1 >= 5, "stop gave them back:\n" + text("stderr.txt"))

        # a load after stop that cannot start fails (exit 1) and the agent says why
        rc, _, e, _ = attach(proc.pid, "record=%s/no-such-dir/x.vtp" % d)
        check(rc == 1 and "refused to start" in e, "a failed restart exits 1: %d %s" % (rc, e))
        wait_for("stderr.txt", "cannot open record file")
        # options fixed at the first load: asking for another value fails, naming it, and starts nothing
        for opts, name in (("carriers=8", "carriers="), ("ring=128", "ring="), ("occupancy=exact", "occupancy="),
                           ("carriers=8,occupancy=exact", "carriers=, occupancy=")):
            rc, _, e, _ = attach(proc.pid, "record=%s,%s" % (second, opts))
            check(rc == 1 and (name + " ") in e and "cannot change" in e,
                  "attach %s after stop fails naming %s: %d %s" % (opts, name, rc, e))
            wait_for("stderr.txt", "cannot change after the first load")
        check(text("stderr.txt").count("detecting pins") == 1 and not os.path.exists(second),
              "nothing was started by the refused loads:\n" + text("stderr.txt"))
        rc, o, e, _ = attach(proc.pid, "record=%s,tracefile=%s,threshold=5ms" % (second, trace))
        check(rc == 0, "attach after stop exits 0: %s %s" % (o, e))
        wait_for("stderr.txt", "detecting pins", count=2)
        check("already running" not in text("stderr.txt"), "not refused as already running:\n" + text("stderr.txt"))
        check(os.path.exists(second), "the new record file is opened")
        deadline = time.monotonic() + 30
        while True:  # the watchdog reports the blocks once they pass the threshold
            pins = [p for p in report_json(second)["pins"] if native_block_in(p, "NativeBlock")]
            if len(pins) >= 2:
                break
            check(time.monotonic() < deadline, "no NATIVE_BLOCK pins in the new recording:\n" + text("stderr.txt"))
            time.sleep(0.2)
        check("NATIVE_BLOCK" in open(trace).read(), "the new trace file gets them too")
        # an attach while it runs: fails clearly, changes nothing
        rc, _, e, _ = attach(proc.pid, "record=%s/third.vtp" % d)
        check(rc == 1 and "vtpin is already running in %d" % proc.pid in e and "vtpin attach %d stop" % proc.pid in e,
              "attach while running fails, saying to stop first: %d %s" % (rc, e))
        check(not os.path.exists(os.path.join(d, "third.vtp")), "the running session's options are kept")
        # the watchdog needs each carrier's OS tid, from HotSpot's VMStructs after attach (25 moved _osthread)
        check(all(p["carrier"]["tid"] > 0 for p in pins), "carrier tids known after attach: %s" % [
            p["carrier"] for p in pins])
        rc, _, e, _ = attach(proc.pid, "stop")
        check(rc == 0, "second stop exits 0: %s" % e)
        wait_for("stderr.txt", "stopped", count=2)
        rep = report_json(second)
        print("counters: first session %s; second %s" % (first_stats, rep["stats"]))
        check(rep["jvm"]["mode"] == "attach" and rep["recording"]["complete"], "second session: %s" % rep["recording"])
        # each session reports its own counters (issue 37: they went on from the first session's). The
        # second stops once both blocks were reported: it saw those two pins, no more. The first stops
        # at once: a block the watchdog found less than the threshold before the stop is a pin seen,
        # in progress and never reported (Stats.pins counts it; seen once on JDK 27), so it is judged
        # by the pins it reported, and saw at most the two blocks
        st = rep["stats"]
        first_pins = len(report_json(first)["pins"])
        check(st["pins"] == st["pins_reported"] == len(rep["pins"]) and first_stats["pins_reported"] == first_pins and
              first_pins <= first_stats["pins"] <= 2,
              "each session counts its own pins: first %d (reported %d) of %d, second %d (reported %d) of %d" % (
                  first_stats["pins"], first_stats["pins_reported"], first_pins, st["pins"], st["pins_reported"],
                  len(rep["pins"])))
        check(rep["jvm"]["options"].startswith("record=" + second), "the Hello has the new options: %s" % rep["jvm"])
        check(rep["jvm"]["capabilities_missing"] == first_missing, "the next attach took every capability again: %s, "
              "first %s" % (rep["jvm"]["capabilities_missing"], first_missing))
        check(proc.poll() is None, "the JVM runs on")


def case_dynamic_loading_disabled(jdk):
    t = Target(jdk, ["-XX:-EnableDynamicAgentLoading"]).start()
    try:
        rc, out, err, _ = attach(t.pid, "record=%s" % os.path.join(t.dir, "a.vtp"))
        check(rc == 1, "attach must fail (exit 1), got %d" % rc)
        check("EnableDynamicAgentLoading" in err and "refuses to load agents" in err,
              "stderr says dynamic loading is disabled: %r" % err)
        check("Dynamic agent loading is not enabled" in out, "stdout shows the JVM's reply: %r" % out)
        time.sleep(0.5)
        check(t.alive(), "the JVM keeps running:\n" + t.stderr())
        check("vtpin:" not in t.stderr(), "the agent was not loaded:\n" + t.stderr())
        check(not os.path.exists(os.path.join(t.dir, "a.vtp")), "no recording was started")
        t.stop()
    finally:
        t.kill()


def case_attach_disabled(jdk):
    """-XX:+DisableAttachMechanism: SIGQUIT only prints a thread dump; we give up after --timeout."""
    t = Target(jdk, ["-XX:+DisableAttachMechanism"]).start()
    try:
        rc, out, err, took = attach("--timeout", "2s", t.pid)
        check(rc == 1, "attach must fail (exit 1), got %d" % rc)
        check("did not start within 2 s" in err and "DisableAttachMechanism" in err,
              "stderr names the timeout and the flag: %r" % err)
        check(1.9 <= took < 6, "gave up after the 2 s timeout, took %.2f s" % took)
        check(t.alive(), "the JVM keeps running:\n" + t.stderr())
        check(not trigger_files(t, t.pid), "the trigger file is removed: %s" % trigger_files(t, t.pid))
        t.stop()
    finally:
        t.kill()


def case_not_a_jvm():
    """A process without libjvm.so is not signalled (SIGQUIT kills sleep, and stops many servers
    that catch it): attach fails clearly within the timeout and the process lives on."""
    sleeper = subprocess.Popen(["sleep", "30"])
    out_path = os.path.join(tempdir("vtpin-attach-trap-"), "trap.txt")
    with open(out_path, "w") as out:  # a shell that catches SIGQUIT and says so
        trapper = subprocess.Popen(["sh", "-c", "trap 'echo got SIGQUIT' QUIT; echo trapping; i=0; "
                                    "while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done"], stdout=out)
    try:
        wait_ready(trapper, out_path, "trapping")  # its trap is set
        for p in (sleeper, trapper):
            rc, out, err, took = attach("--timeout", "2s", p.pid)
            check(rc == 1, "attach must fail (exit 1), got %d" % rc)
            check("not a HotSpot JVM" in err, "stderr says it is not a HotSpot JVM: %r" % err)
            check(took < 6, "failed within the 2 s timeout, took %.2f s" % took)
        time.sleep(0.5)
        check(sleeper.poll() is None, "sleep was not killed by a SIGQUIT")
        check(trapper.poll() is None, "the shell is still running")
        with open(out_path) as f:
            check("got SIGQUIT" not in f.read(), "the shell was not sent SIGQUIT")
    finally:
        for p in (sleeper, trapper):
            p.kill()
            p.wait()


def case_not_a_jvm_other_user():
    """Not a JVM, of another user, with an agent that user cannot read: the message says it is not
    a JVM (not a permission or agent-library problem). Root only (to start a process as nobody)."""
    if os.geteuid() != 0:
        skip("not root: cannot start a process as another user")
    d = tempdir(prefix="vtpin-attach-notjvm-")
    sleeper = None
    try:
        os.chmod(d, 0o700)  # nobody cannot read the agent in here
        agent = os.path.join(d, "libvtpin.so")
        shutil.copy(os.path.join(os.path.dirname(VTPIN), "agent", "libvtpin.so"), agent)

        def as_nobody():
            os.setgid(65534)
            os.setuid(65534)
        sleeper = subprocess.Popen(["sleep", "30"], preexec_fn=as_nobody, cwd="/")
        time.sleep(0.3)
        rc, out, err, _ = attach("--agent", agent, "--timeout", "2s", sleeper.pid)
        check(rc == 1, "attach must fail (exit 1), got %d" % rc)
        check("is not a HotSpot JVM" in err and "no libjvm.so" in err, "stderr says it is not a JVM: %r" % err)
        check("permission" not in err and "agent library" not in err, "no misleading cause: %r" % err)
        check(sleeper.poll() is None, "sleep was not killed")
        try:
            init_is_jvm = "libjvm.so" in open("/proc/1/maps").read()
        except OSError:
            init_is_jvm = False  # unreadable even for root: protected, so no JVM we could attach to
        if not init_is_jvm:
            rc, out, err, _ = attach("--timeout", "2s", 1)  # the example
            check(rc == 1 and "is not a HotSpot JVM" in err and "agent library" not in err,
                  "vtpin attach 1: %d %r" % (rc, err))
            # the same as nobody, who cannot read pid 1's maps: what anyone may see says it is no JVM
            with open("/proc/1/status") as f:
                name1 = [l.split(None, 1)[1].strip() for l in f if l.startswith("Name:")][0]
            rc, out, err = attach_as_nobody("--timeout", "2s", 1)
            check(rc == 1 and ("process 1 (%s) does not look like a JVM" % name1) in err,
                  "as nobody, vtpin attach 1 says it does not look like a JVM: %d %r" % (rc, err))
            check("run vtpin attach as root" in err, "and what it would take if it were one: %r" % err)
        # the control: a JVM of root's, attached by nobody, is not called a non-JVM (only a permission problem)
        t = Target(21).start()
        try:
            rc, out, err = attach_as_nobody("--timeout", "2s", t.pid)
            check(rc == 1 and "permission" in err and "run vtpin attach as root" in err and
                  "does not look like a JVM" not in err, "nobody attaching root's JVM: %d %r" % (rc, err))
        finally:
            t.kill()
            shutil.rmtree(t.dir, ignore_errors=True)
    finally:
        if sleeper:
            sleeper.kill()
            sleeper.wait()
        shutil.rmtree(d, ignore_errors=True)


def attach_as_nobody(*args, timeout=60):
    """`vtpin attach ARGS` run as nobody (we are root); returns (exit status, stdout, stderr)."""
    def as_nobody():
        os.setgid(65534)
        os.setgroups([])
        os.setuid(65534)
    p = subprocess.run([VTPIN, "attach"] + [str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                       preexec_fn=as_nobody, cwd="/")
    print("$ (as nobody) vtpin attach %s  -> exit %d" % (" ".join(str(a) for a in args), p.returncode))
    for line in (p.stdout + p.stderr).splitlines():
        print("  | " + line)
    return p.returncode, p.stdout, p.stderr


def case_dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    rc, out, err, took = attach(p.pid)
    check(rc == 1, "attach must fail (exit 1), got %d" % rc)
    check("no such process: %d" % p.pid in err, "stderr says there is no such process: %r" % err)
    check(took < 1, "fails at once, took %.2f s" % took)


def nobody_target(jdk):
    """A Target JVM run as nobody (we are root), in a work directory it may write: (target, work).
    Skips where that cannot be (not root, no setpriv, a JDK nobody cannot run)."""
    if os.geteuid() != 0:
        skip("needs root (a JVM of another user)")
    setpriv = shutil.which("setpriv")
    if not setpriv:
        skip("needs setpriv (util-linux) to start a JVM as another user")
    as_nobody = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    java = os.path.join(jdk_home(int(jdk)), "bin", "java")
    probe = subprocess.run(as_nobody + [java, "-cp", CLASSES, "-version"], capture_output=True, text=True)
    if probe.returncode != 0:
        skip("uid 65534 cannot run %s (or read %s): %s" % (java, CLASSES, probe.stderr.strip()[:200]))
    work = tempdir("vtpin-attach-")
    os.chmod(work, 0o777)
    return Target(jdk, wrap=as_nobody, workdir=work).start(), work


def case_other_user(jdk):
    """Root attaching to a JVM that runs as nobody: vtpin takes the JVM's uid/gid to talk to it."""
    t, work = nobody_target(jdk)
    try:
        with open("/proc/%d/status" % t.pid) as f:
            check("Uid:\t65534" in f.read(), "the JVM runs as uid 65534")
        load_stop_report(t, os.path.join(work, "a.vtp"), os.path.join(work, "t.txt"), jdk)
        sock = "/tmp/.java_pid%d" % t.pid
        if os.path.exists(sock):
            check(os.stat(sock).st_uid == 65534, "the attach socket is the JVM's user's")
    finally:
        t.kill()


def case_stale_socket(jdk):
    """A JVM of nobody whose pid has root's attach socket, left by an earlier JVM killed with SIGKILL:
    the JVM cannot listen there, and vtpin refuses it saying why (older than the JVM); once it is
    removed, the attach works."""
    t, work = nobody_target(jdk)
    sock = "/proc/%d/root/tmp/.java_pid%d" % (t.pid, t.pid)
    left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        if os.path.exists(sock):  # not attached yet: one there is stale already (ci54)
            os.unlink(sock)
        left.bind(sock)  # root's, as a JVM of root killed with SIGKILL leaves it
        hour_ago = time.time() - 3600
        os.utime(sock, (hour_ago, hour_ago))
        p = subprocess.run([VTPIN, "attach", str(t.pid), "record=%s" % os.path.join(work, "a.vtp")],
                           capture_output=True, text=True, timeout=60)
        print(p.stderr)
        check(p.returncode != 0 and "belongs to uid 0, not to the JVM's uid 65534, and is older than the JVM: an "
              "earlier process with this pid left it" in p.stderr,
              "refused, saying why: %d %s" % (p.returncode, p.stderr))
        forget_stale_attach_socket(t.pid)
        check(not os.path.exists(sock), "the tests' helper removed it")
        load_stop_report(t, os.path.join(work, "a.vtp"), os.path.join(work, "t.txt"), jdk)
    finally:
        left.close()
        t.kill()


def child_java(t):
    """The java process under `unshare --fork`: the child of the one we started."""
    children = "/proc/%d/task/%d/children" % (t.proc.pid, t.proc.pid)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(children) as f:
            for pid in f.read().split():
                with open("/proc/%s/comm" % pid) as c:
                    if c.read().strip() == "java":
                        return int(pid)
        time.sleep(0.1)
    raise Failure("no java process under unshare %d" % t.proc.pid)


def case_container(jdk):
    """A JVM in its own pid and mount namespaces with a private /tmp, like in a container:
    it is pid 1 there, its socket is in its /tmp, which we reach through /proc/PID/root."""
    if os.geteuid() != 0:
        skip("needs root (unshare of pid and mount namespaces)")
    unshare = shutil.which("unshare")
    if not unshare or subprocess.run([unshare, "--pid", "--fork", "--mount", "--mount-proc", "true"]).returncode:
        skip("unshare --pid --mount does not work here")
    home = jdk_home(int(jdk))
    for path in (CLASSES, home, os.path.dirname(os.path.abspath(VTPIN))):
        if os.path.realpath(path).startswith("/tmp/"):
            skip("%s is under /tmp, which the JVM's private /tmp would hide" % path)
    work = tempdir("vtpin-attach-")
    # inside: a tmpfs of its own on /tmp (the socket and the recording live there), cwd /
    script = "mount -t tmpfs vtpin-test /tmp && cd / && exec %s -cp %s ReproLoop 120 /tmp/stop" % (
        os.path.join(home, "bin", "java"), CLASSES)
    t = Target(jdk, workdir=work)
    t.cmd = [unshare, "--pid", "--fork", "--mount", "--mount-proc", "sh", "-c", script]
    t.start(pid_of=child_java)
    try:
        with open("/proc/%d/status" % t.pid) as f:
            nspid = [l for l in f if l.startswith("NSpid:")][0].split()
        check(nspid[-1] == "1" and len(nspid) == 3, "the JVM is pid 1 in its namespace: %s" % nspid)
        check("ReproLoop: ready pid=1" in t.stdout(), "the JVM sees itself as pid 1")
        rc, out, err, _ = attach(t.pid, "record=/tmp/a.vtp")
        check(rc == 0, "attach exits 0, got %d: %s" % (rc, err))
        check(t.wait_stderr("detecting pins"), "the agent runs:\n" + t.stderr())
        check(os.path.exists("/proc/%d/root/tmp/.java_pid1" % t.pid), "the socket is in the JVM's own /tmp")
        check(not os.path.exists("/tmp/.java_pid1") or os.stat("/tmp/.java_pid1").st_ino !=
              os.stat("/proc/%d/root/tmp/.java_pid1" % t.pid).st_ino, "not in ours")
        rc, out, err, _ = attach(t.pid, "stop")
        check(rc == 0, "stop exits 0, got %d: %s" % (rc, err))
        rep = report_json("/proc/%d/root/tmp/a.vtp" % t.pid)
        check(rep["jvm"].get("mode") == "attach", "the Hello says mode attach: %s" % rep["jvm"])
        print("the JVM's Hello gives pid %s (its own namespace's)" % rep["jvm"]["pid"])
        with open("/proc/%d/root/tmp/stop" % t.pid, "w"):
            pass
        rc = t.proc.wait(timeout=60)
        check(rc == 0, "the JVM exited %d:\n%s" % (rc, t.stderr()))
    finally:
        t.kill()


def case_stop_quiet(jdk):
    """After `stop` the agent is out of the JVM's mounts, and the next session counts its own (issue
    37: a stopped agent still took every mount and unmount, counting them as dropped, and the next
    session reported those drops as its own). occupancy=exact with ring=64: four virtual threads
    that sleep 1 ms between slices mount thousands of times while vtpin is stopped, far past the
    rings; then a second session, in which nothing mounts, must report 0 mount records dropped."""
    from harness import classpath, scheduler
    jdk = int(jdk)
    d = tempdir(prefix="vtpin-stop-quiet-")
    first, second = os.path.join(d, "first.vtp"), os.path.join(d, "second.vtp")
    cmd = [os.path.join(jdk_home(jdk), "bin", "java"), "-cp", classpath(jdk)] + scheduler(2) + \
        ["CarrierHog", "--ready", "sleep", "4", "500"]
    with FiledJvm(cmd, d, stdin=subprocess.PIPE) as jvm:
        proc, text, wait_for = jvm.proc, jvm.text, jvm.wait_for
        wait_for("stdout.txt", "CarrierHog: ready pid=")
        for n, record in ((1, first), (2, second)):
            rc, _, e, _ = attach(proc.pid, "record=%s,occupancy=exact,ring=64" % record)
            check(rc == 0, "attach %d exits 0: %s" % (n, e))
            wait_for("stderr.txt", "detecting pins", count=n)
            rc, _, e, _ = attach(proc.pid, "stop")
            check(rc == 0, "stop %d exits 0: %s" % (n, e))
            wait_for("stderr.txt", "stopped", count=n)
            if n == 1:  # the mounts, all while vtpin is stopped
                proc.stdin.write(b"go\n")
                proc.stdin.flush()
                wait_for("stdout.txt", "CarrierHog: mode=sleep threads=4 run_ms=500 done")
        proc.stdin.close()
        check(proc.wait(timeout=60) == 0, "the JVM exits 0:\n" + text("stderr.txt"))
        one, two = report_json(first), report_json(second)
        print("mount records dropped: first session %s, second %s" % (
            one["stats"]["transitions_dropped"], two["stats"]["transitions_dropped"]))
        check(one["recording"]["complete"] and two["recording"]["complete"], "both sessions ended with a Goodbye")
        check(two["stats"]["transitions_dropped"] == 0,
              "the second session, in which nothing mounted, dropped no mount record: %s" % two["stats"])


def case_exact_mounts(jdk):
    """occupancy=exact after attach records the carriers' mounts: four virtual threads that sleep 1 ms
    between slices on two carriers mount hundreds of times, and the recording's exact occupancy shows
    both carriers busy and idle (issue 37: the carriers found at attach never got their thread-local slot,
    so exact occupancy after attach recorded no mount at all, where startup records every one)."""
    import json
    from harness import attach_when_ready, classpath, scheduler
    jdk = int(jdk)
    d = tempdir(prefix="vtpin-attach-exact-")
    rec = os.path.join(d, "a.vtp")
    cmd = [os.path.join(jdk_home(jdk), "bin", "java"), "-cp", classpath(jdk)] + scheduler(2) + \
          ["CarrierHog", "--ready", "sleep", "4", "400"]
    attach_when_ready(cmd, "CarrierHog", d, "record=%s,occupancy=exact" % rec)
    rep = report_json(rec)
    check(rep["jvm"].get("mode") == "attach", "attached: %s" % rep["jvm"])
    p = subprocess.run([VTPIN, "report", "--format", "perfetto", rec], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "perfetto: %s" % p.stderr)
    counters = [e for e in json.loads(p.stdout)["traceEvents"] if e["ph"] == "C"]
    carriers = {e["tid"] for e in counters}
    print("exact occupancy after attach: %d busy/idle changes on %d carriers" % (len(counters), len(carriers)))
    check(len(carriers) == 2 and {e["args"]["busy"] for e in counters} == {0, 1} and len(counters) >= 100,
          "both carriers' mounts recorded, busy and idle, hundreds of them: %d changes on %s" % (
              len(counters), carriers))


if __name__ == "__main__":
    raise SystemExit(main({
        "exact_mounts": case_exact_mounts,
        "stop_quiet": case_stop_quiet,
        "attach": case_attach,
        "reattach": case_reattach,
        "dynamic_loading_disabled": case_dynamic_loading_disabled,
        "attach_disabled": case_attach_disabled,
        "not_a_jvm": case_not_a_jvm,
        "not_a_jvm_other_user": case_not_a_jvm_other_user,
        "dead_pid": case_dead_pid,
        "other_user": case_other_user,
        "stale_socket": case_stale_socket,
        "container": case_container,
    }))
