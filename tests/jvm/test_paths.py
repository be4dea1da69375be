#!/usr/bin/env python3
"""Paths another user prepared are refused (issue 37, items 2 and 3), with a real second user:
uid 65534 (nobody), through a preexec_fn that drops root as test_attach.py does.

  foreign_socket_dir JDK   nobody makes /tmp/vtpin-0 (root's default socket directory without
                           XDG_RUNTIME_DIR) and runs a real collector in it: a root JVM with
                           `collector` (no path) does not connect, says why, runs to its end;
                           root's `vtpin status` refuses it (exit 1). In a mount namespace with
                           a tmpfs of its own on /tmp: the machine's /tmp/vtpin-0 is never touched.
  collector_dirs           the collector refuses a socket directory another user made, one others
                           can write (the default one too), a recording directory that is a link;
                           it still takes a directory of its own
  run_foreign_dir JDK      `vtpin run --dir D`: D made by nobody with nobody's collector in it, D a
                           link, D/collector a link: refused (exit 1), nothing sent or written there
  record_mode JDK          record= files are 0600, record_mode=0640 gives 0640, also to a file
                           that existed with 0644
  own_files JDK            tracefile= and log= are 0600 too; a link at record=, tracefile= or
                           log=, or nobody's file there, stops the load saying why, and nothing
                           is written through the link or into nobody's file
  collector_owner JDK      a collector nobody runs in a directory of its own: a root JVM refuses
                           it and says collector_owner=; with collector_owner=nobody it streams
                           there, and nobody's collector lists it
Root only (others skip)."""
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time

from collector_fixture import CollectorProcess
from test_collector_daemon import wait_for  # noqa: E402 (the one poll-until of the collector tests)
from harness import AGENT, BUILD, CLASSES, FIXTURE_LIB, VTPIN, Failure, Run, check, jdk_home, main, skip, tempdir

NOBODY = 65534


def need_root():
    if os.geteuid() != 0:
        skip("needs root to act as a second user (uid %d); running as uid %d" % (NOBODY, os.geteuid()))


def as_nobody():
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)




def nobody_dir(path, mode=0o755):
    """A directory as nobody would make it (made here, then given to nobody)."""
    os.mkdir(path, mode)
    os.chmod(path, mode)
    os.chown(path, NOBODY, NOBODY)
    return path


class NobodyCollector(CollectorProcess):
    """A real `vtpin collector` run by nobody on socket, recording into rec; asked as nobody."""

    def __init__(self, socket_path, rec, log):
        super().__init__(os.path.dirname(socket_path), socket=socket_path, sessions=rec, log_path=log, log_mode="w",
                         preexec_fn=as_nobody, cwd="/", ready="socket_file", start_timeout=20, stop_timeout=30)
        self.start()

    def jvms(self):
        """The JVMs nobody's collector has seen, asked as nobody."""
        p = self.run("status", "--json")
        check(p.returncode == 0, "nobody's status of its own collector: %d %s" % (p.returncode, p.stderr))
        return json.loads(p.stdout)["jvms"]


def kept_in_tmp():
    """The top directories of /tmp the test itself lives in (a checkout or a build under /tmp: a clean
    clone may be there), which the private /tmp keeps by bind mounts."""
    keep = set()
    for path in (os.path.dirname(os.path.abspath(__file__)), BUILD):
        parts = os.path.realpath(path).split("/")
        if len(parts) > 2 and parts[1] == "tmp":
            keep.add(parts[2])
    return sorted(keep)


def in_private_tmp(case, args):
    """Runs case again in a mount namespace with a fresh tmpfs on /tmp (socket_path.c's /tmp is
    fixed), the test's own directories under /tmp bound into it: True when this process is that
    run, else exits with its status."""
    if os.environ.get("VTPIN_TEST_PRIVATE_TMP") == "1":
        return True
    unshare = shutil.which("unshare")
    if not unshare:
        skip("no unshare(1): cannot give the test a /tmp of its own")
    env = dict(os.environ, VTPIN_TEST_PRIVATE_TMP="1", VTPIN_TEST_KEPT_TMP=" ".join(kept_in_tmp()))
    # the tmpfs is made at a fresh directory (an empty one on the machine, removed at the end), the
    # kept directories bound into it, and then moved onto /tmp (a bind from /tmp after a tmpfs covers
    # it would resolve into the tmpfs)
    stage = tempdir(prefix="vtpin-private-tmp-")
    script = ('mount -t tmpfs -o mode=1777 vtpin-test "$STAGE" && for d in $VTPIN_TEST_KEPT_TMP; do '
              'mkdir "$STAGE/$d" && mount --bind "/tmp/$d" "$STAGE/$d" || exit 3; done && '
              'mount --move "$STAGE" /tmp && exec "$0" "$@"')
    p = subprocess.run([unshare, "--mount", "--propagation", "private", "sh", "-c", script,
                        sys.executable, os.path.abspath(__file__), case] + list(args), env=dict(env, STAGE=stage))
    if p.returncode not in (0, 1, 77):
        print("FAIL: unshare/mount of a private /tmp failed (%d)" % p.returncode)
        sys.exit(1)
    sys.exit(p.returncode)


def case_foreign_socket_dir(jdk="21"):
    need_root()
    in_private_tmp("foreign_socket_dir", [jdk])
    kept = os.environ.get("VTPIN_TEST_KEPT_TMP", "").split()
    check(sorted(os.listdir("/tmp")) == sorted(kept), "the private /tmp holds what the test lives in alone: %s"
          % os.listdir("/tmp"))
    os.environ.pop("XDG_RUNTIME_DIR", None)  # root's default socket: /tmp/vtpin-0/collector.sock
    sock = "/tmp/vtpin-0/collector.sock"
    nobody_dir("/tmp/vtpin-0")
    rec = nobody_dir("/tmp/nobody-rec", 0o700)
    col = NobodyCollector(sock, rec, "/tmp/nobody-collector.log")
    try:
        check(os.stat(sock).st_uid == NOBODY, "the socket is nobody's")
        r = Run(int(jdk), "Repro", props=["-Djdk.virtualThreadScheduler.parallelism=4"], agent_opts="collector")
        r.run()  # the JVM runs to its end (exit 0), whatever happens to the collector output
        err = r.stderr()
        check("connected to the collector" not in err, "the root JVM connected to nobody's collector:\n" + err)
        check("refused" in err and "/tmp/vtpin-0" in err and "uid 65534" in err,
              "the JVM does not say why it does not stream to /tmp/vtpin-0:\n" + err)
        check(r.report()["pins"], "the JVM's own recording has its pins")
        check(col.jvms() == [], "nobody's collector saw root's JVM")
        p = subprocess.run([VTPIN, "status"], capture_output=True, text=True, timeout=30)
        check(p.returncode == 1 and "refusing" in p.stderr and "uid 65534" in p.stderr and p.stdout == "",
              "root's vtpin status on nobody's collector: %d out %r err %r" % (p.returncode, p.stdout, p.stderr))
    finally:
        col.stop()


def collector_verdict(args, socket_path, env=None):
    """Starts `vtpin collector args`: ("refused", output) when it exits, ("listening", output)
    when its socket appears (then it is stopped)."""
    out = os.path.join(tempdir(), "collector.log")
    with open(out, "w") as log:
        p = subprocess.Popen([VTPIN, "collector"] + args, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            wait_for(lambda: p.poll() is not None or os.path.exists(socket_path), 20, "the collector to start or exit")
            verdict = "refused" if p.poll() is not None and p.returncode != 0 else "listening"
        finally:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
            p.wait(30)
    with open(out) as f:
        return verdict, f.read()


def case_collector_dirs():
    need_root()
    d = tempdir()
    rec = os.path.join(d, "rec")
    foreign = nobody_dir(os.path.join(d, "foreign"))
    sock = os.path.join(foreign, "c.sock")
    v, text = collector_verdict(["--socket", sock, "--dir", rec], sock)
    check(v == "refused" and "belongs to uid 65534" in text, "a socket directory nobody made: %s\n%s" % (v, text))
    check(not os.path.exists(sock), "a socket was made in nobody's directory")

    open_dir = os.path.join(d, "open")
    os.mkdir(open_dir)
    os.chmod(open_dir, 0o777)
    sock = os.path.join(open_dir, "c.sock")
    v, text = collector_verdict(["--socket", sock, "--dir", rec], sock)
    check(v == "refused" and "can be written by other users" in text, "a socket directory open to all: %s\n%s"
          % (v, text))
    check(stat.S_IMODE(os.stat(open_dir).st_mode) == 0o777, "the open directory was changed, not refused")

    # the default socket directory (XDG_RUNTIME_DIR/vtpin) found open to all: refused, not tightened
    xdg = os.path.join(d, "xdg")
    os.mkdir(xdg, 0o700)
    os.mkdir(os.path.join(xdg, "vtpin"))
    os.chmod(os.path.join(xdg, "vtpin"), 0o777)
    env = dict(os.environ, XDG_RUNTIME_DIR=xdg)
    sock = os.path.join(xdg, "vtpin", "collector.sock")
    v, text = collector_verdict(["--dir", rec], sock, env=env)
    check(v == "refused" and "can be written by other users" in text, "an open default socket directory: %s\n%s"
          % (v, text))

    # a recording directory that is a link (a run's DIR/collector planted by someone): refused
    target = os.path.join(d, "target")
    os.mkdir(target, 0o700)
    link = os.path.join(d, "reclink")
    os.symlink(target, link)
    mine = os.path.join(d, "mine")
    os.mkdir(mine, 0o700)
    sock = os.path.join(mine, "c.sock")
    v, text = collector_verdict(["--socket", sock, "--dir", link], sock)
    check(v == "refused" and "symbolic link" in text, "a recording directory that is a link: %s\n%s" % (v, text))

    # its own directories, made by the same user: taken
    v, text = collector_verdict(["--socket", sock, "--dir", rec], sock)
    check(v == "listening", "a socket directory of its own was refused:\n" + text)


def java(jdk, fixture):
    return [os.path.join(jdk_home(jdk), "bin", "java"), "-Djdk.virtualThreadScheduler.parallelism=4",
            "-Djava.library.path=" + FIXTURE_LIB, "-cp", CLASSES, fixture]


def vtpin_run(run_dir, jdk):
    return subprocess.run([VTPIN, "run", "--dir", run_dir, "--", *java(jdk, "Repro")], capture_output=True,
                          text=True, timeout=180)


def case_run_foreign_dir(jdk="21"):
    need_root()
    jdk = int(jdk)
    d = tempdir()
    os.chmod(d, 0o755)  # nobody reaches its own directories in it
    # DIR made by nobody, nobody's collector listening where the run's would
    run_dir = nobody_dir(os.path.join(d, "run"))
    col = NobodyCollector(os.path.join(run_dir, "collector.sock"), nobody_dir(os.path.join(d, "nrec"), 0o700),
                          os.path.join(d, "nobody.log"))
    try:
        p = vtpin_run(run_dir, jdk)
        check(p.returncode == 1 and "refusing" in p.stderr and "uid 65534" in p.stderr,
              "vtpin run --dir (nobody's): %d\nout %s\nerr %s" % (p.returncode, p.stdout, p.stderr))
        check("gates passed" not in p.stdout, "the run went on in nobody's directory:\n" + p.stdout)
        check(col.jvms() == [], "nobody's collector saw the run's JVM")
        check(not [f for f in os.listdir(run_dir) if f.endswith(".vtp")], "a recording was written in nobody's DIR")
    finally:
        col.stop()

    # DIR/collector a link to a directory elsewhere: nothing written through it
    target = os.path.join(d, "target")
    os.mkdir(target, 0o700)
    run_dir = os.path.join(d, "run2")
    os.mkdir(run_dir, 0o700)
    os.symlink(target, os.path.join(run_dir, "collector"))
    p = vtpin_run(run_dir, jdk)
    check(p.returncode == 1 and "symbolic link" in p.stderr,
          "vtpin run --dir with DIR/collector a link: %d\nout %s\nerr %s" % (p.returncode, p.stdout, p.stderr))
    check(os.listdir(target) == [], "written through DIR/collector: %s" % os.listdir(target))

    # DIR itself a link
    link = os.path.join(d, "runlink")
    os.symlink(target, link)
    p = vtpin_run(link, jdk)
    check(p.returncode == 1 and "symbolic link" in p.stderr,
          "vtpin run --dir LINK: %d\nout %s\nerr %s" % (p.returncode, p.stdout, p.stderr))
    check(os.listdir(target) == [], "written through the --dir link: %s" % os.listdir(target))


def case_record_mode(jdk="21"):
    jdk = int(jdk)
    old = os.umask(0o022)  # the usual umask, which would leave a file created 0644 so
    try:
        r = Run(jdk, "Repro", props=["-Djdk.virtualThreadScheduler.parallelism=4"]).run()
        mode = stat.S_IMODE(os.stat(r.record).st_mode)
        check(mode == 0o600, "record= file mode %04o, want 0600" % mode)
        check(r.report()["pins"], "the recording holds the pins")
        # asked for: the group may read it; a file that was there (0644) gets the mode too
        d = tempdir()
        with open(os.path.join(d, "pins.vtp"), "w"):
            pass
        os.chmod(os.path.join(d, "pins.vtp"), 0o644)
        r = Run(jdk, "Repro", props=["-Djdk.virtualThreadScheduler.parallelism=4"], agent_opts="record_mode=0640",
                workdir=d).run()
        mode = stat.S_IMODE(os.stat(r.record).st_mode)
        check(mode == 0o640, "record_mode=0640 gave %04o" % mode)
        check(r.report()["pins"], "the recording holds the pins")
    finally:
        os.umask(old)


def case_own_files(jdk="21"):
    need_root()
    jdk = int(jdk)
    home = jdk_home(jdk)
    old = os.umask(0o022)  # the usual umask, which would leave a file created 0644 so
    try:
        d = tempdir(prefix="vtpin-own-files-")
        log = os.path.join(d, "agent.log")
        r = Run(jdk, "Repro", props=["-Djdk.virtualThreadScheduler.parallelism=4"], agent_opts="log=" + log,
                workdir=d).run()
        for path in (r.trace, log):
            mode = stat.S_IMODE(os.stat(path).st_mode)
            check(mode == 0o600, "%s: mode %04o, want 0600" % (os.path.basename(path), mode))
        with open(log) as f:
            check("detecting pins" in f.read(), "the log holds the agent's messages")

        def refused(option, path, why):
            """java with the agent's option=path: the load stops (the JVM exits 1), saying why."""
            p = subprocess.run([os.path.join(home, "bin", "java"), "-agentpath:%s=%s=%s" % (AGENT, option, path),
                                "-cp", CLASSES, "Repro"], capture_output=True, text=True, timeout=60)
            check(p.returncode != 0 and why in p.stderr and path in p.stderr,
                  "%s=%s: exit %d, want a refusal saying %r:\n%s" % (option, path, p.returncode, why, p.stderr))

        target = os.path.join(d, "target")
        with open(target, "w") as f:
            f.write("not vtpin's\n")
        nobodys = os.path.join(d, "nobodys")
        with open(nobodys, "w") as f:
            f.write("nobody's\n")
        os.chown(nobodys, NOBODY, NOBODY)
        for option in ("record", "tracefile", "log"):
            link = os.path.join(d, option + ".link")
            os.symlink(target, link)
            refused(option, link, "symbolic link")
            refused(option, nobodys, "another user")
        with open(target) as f:
            check(f.read() == "not vtpin's\n", "nothing written through the links")
        with open(nobodys) as f:
            check(f.read() == "nobody's\n", "nothing written into nobody's file")
        shutil.rmtree(d, ignore_errors=True)
    finally:
        os.umask(old)


def case_collector_owner(jdk="21"):
    need_root()
    d = tempdir(prefix="vtpin-owner-")
    os.chmod(d, 0o711)  # nobody reaches its own directories in it
    sock = os.path.join(nobody_dir(os.path.join(d, "run")), "c.sock")
    col = NobodyCollector(sock, nobody_dir(os.path.join(d, "rec"), 0o700), os.path.join(d, "collector.log"))
    try:
        refused = Run(int(jdk), "Repro", props=["-Djdk.virtualThreadScheduler.parallelism=4"],
                      agent_opts="collector=" + sock).run()
        err = refused.stderr()
        check("connected to the collector" not in err and "refused" in err and "uid 65534" in err and
              "collector_owner=USER" in err, "without collector_owner= a root JVM refuses nobody's collector, "
              "saying how to trust it:\n" + err)
        check(not [j for j in col.jvms() if j["pid"] == refused.proc.pid], "nobody's collector saw the refused JVM")
        trusted = Run(int(jdk), "Repro", props=["-Djdk.virtualThreadScheduler.parallelism=4"],
                      agent_opts="collector=%s,collector_owner=nobody" % sock).run()
        err = trusted.stderr()
        check("refused" not in err, "collector_owner=nobody: refused anyway:\n" + err)
        seen = wait_for(lambda: [j for j in col.jvms() if j["pid"] == trusted.proc.pid and j["pins_total"] > 0], 10,
                        "nobody's collector listing the root JVM that trusts it, with its pins")
        check(seen[0]["pins_total"] == len(trusted.report()["pins"]), "every pin reached nobody's collector: %s vs %d"
              % (seen[0]["pins_total"], len(trusted.report()["pins"])))
    finally:
        col.stop()


if __name__ == "__main__":
    sys.exit(main({"foreign_socket_dir": case_foreign_socket_dir, "collector_dirs": case_collector_dirs,
                   "run_foreign_dir": case_run_foreign_dir, "record_mode": case_record_mode,
                   "own_files": case_own_files, "collector_owner": case_collector_owner}))
