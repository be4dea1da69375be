#!/usr/bin/env python3
"""The collector with real JVMs and the real agent, JDK 21 and 25: several JVMs at
once, a collector started late, killed and restarted, per-carrier occupancy and
native blocks as `vtpin status`/`vtpin top` report them."""
import json
import os
import re
import signal
import socket
import subprocess
import time

from collector_fixture import CollectorProcess
from harness import VTPIN, Failure, Run, check, main, report_json, report_json_of_rotated, scheduler, skip, tempdir


class Collector(CollectorProcess):
    """This file's collector: in d (a fresh temporary directory by default), alerting after 500 ms."""

    def __init__(self, d=None):
        super().__init__(d or tempdir("vtpin-coll-test-"), "--alert-after", "500ms", poll_interval=0.1,
                         stop_timeout=10)

    def native_blocks(self, pid, n, timeout=30):
        """`vtpin top`'s carriers of JVM pid in a native block, once there are n of them."""
        def blocked(t):
            return [c for jv in t["jvms"] if jv["pid"] == pid for c in jv["carriers"] if c["state"] == "native_block"]
        return blocked(self.wait_for(self.top, lambda t: len(blocked(t)) == n, timeout))


def streaming(jdk, coll, fixture, args=(), props=(), opts="", stdin_pipe=False):
    return Run(jdk, fixture, args=args, props=props, stdin_pipe=stdin_pipe,
               agent_opts="collector=%s%s" % (coll.socket, "," + opts if opts else ""))


def case_two_jvms(jdk):
    jdk = int(jdk)
    coll = Collector().start()
    try:
        a = streaming(jdk, coll, "ReproLoop", args=(6,), props=scheduler(2)).start()
        b = streaming(jdk, coll, "JniSleep", args=(40, 100), props=scheduler(2)).start()
        pids = {a.proc.pid, b.proc.pid}
        # both seen, not both connected at one poll: a JVM slow to start (load, the ASan agent) may
        # connect after the other one's 2 s run ended
        st = coll.wait_for(coll.status, lambda s: pids <= {j["pid"] for j in s["jvms"] if j["connections"] >= 1})
        for j in st["jvms"]:
            check(j["java_version"].startswith(str(jdk)), "Hello names the JDK: %s" % j)
        b.wait(60)
        a.wait(60)
        # JniSleep pins on every JDK: its native pins reached the collector
        jb = coll.wait_for(lambda: coll.jvm(b.proc.pid), lambda j: j and j["pins_total"] >= 40)
        check(jb["drops"]["events_dropped"] == 0, "nothing dropped: %s" % jb["drops"])
    finally:
        coll.kill(signal.SIGTERM)


def case_late_collector(jdk):
    """The JVM starts first; a collector started later still learns the pins in progress."""
    jdk = int(jdk)
    coll = Collector()
    fixture, props = ("WaitPin", scheduler(2, 2)) if jdk < 24 else ("NativeBlock", scheduler(2))
    args = () if jdk < 24 else ("nanosleep", 2, 6000)
    r = streaming(jdk, coll, fixture, args=args, props=props).start()
    try:
        time.sleep(1.5)  # pinned (21: hung in Object.wait; 25: blocked in nanosleep) before any collector exists
        check(r.proc.poll() is None, "the JVM runs on without a collector")
        coll.start()
        j = coll.wait_for(lambda: coll.jvm(r.proc.pid), lambda j: j and j["pins_in_progress"] >= 2, timeout=20)
        top = coll.top()
        carriers = [c for jv in top["jvms"] if jv["pid"] == r.proc.pid for c in jv["carriers"]]
        held = [c for c in carriers if c["state"] in ("pinned", "native_block")]
        check(len(held) >= 2, "held carriers shown by top: %s" % carriers)
        for c in held:
            check(c["culprit"] and fixture in c["culprit"], "culprit frame named: %s" % c)
            check(c["pinned_for_ns"] and c["pinned_for_ns"] >= 1e9, "pinned since before the collector: %s" % c)
        # every carrier held for over --alert-after: the starvation alert comes up on the collector's next tick
        coll.wait_for(lambda: coll.jvm(r.proc.pid), lambda j: j and j["alert"]["active"], timeout=10)
        log = open(os.path.join(coll.dir, "collector.log")).read()
        check("carrier starvation" in log and str(r.proc.pid) in log, "one log line names the JVM:\n" + log[-1500:])
    finally:
        r.kill()
        coll.kill(signal.SIGTERM)


def case_restart(jdk):
    """Collector killed mid-run: the JVM never waits on it; after a restart events arrive again
    and what was dropped meanwhile is counted. The JVM pins round after round until the test closes
    its input, so it outlives the outage whatever the machine's speed (a ~2 s program once ended
    before a slow restart, and the test timed out waiting for a reconnect that could not come)."""
    jdk = int(jdk)
    coll = Collector().start()
    r = streaming(jdk, coll, "JniSleep", args=(2, 50, "until-eof"), props=scheduler(2), stdin_pipe=True).start()
    try:
        coll.wait_for(lambda: coll.jvm(r.proc.pid), lambda j: j and j["pins_total"] >= 4)
        coll.kill()  # SIGKILL: no goodbye
        time.sleep(1.0)  # the outage: pins go on meanwhile (a round is 50 ms)
        check(r.proc.poll() is None, "the JVM runs on with its collector gone")
        coll.start()
        j = coll.wait_for(lambda: coll.jvm(r.proc.pid),
                          lambda j: j and j["connections"] >= 1 and j["drops"]["collector_dropped"] > 0, timeout=30)
        # dropped: the JVM went on pinning while its collector was gone, never waiting on it
        print("reconnected; %d events dropped while the collector was away" % j["drops"]["collector_dropped"])
        # pins made after the reconnect reach the new collector
        after = j["pins_total"]
        j = coll.wait_for(lambda: coll.jvm(r.proc.pid), lambda j: j and j["pins_total"] >= after + 4)
        r.proc.stdin.close()
        r.wait(60)
        check("fixture JniSleep done" in r.stdout(), "the program ran to its end:\n" + r.stdout())
        print("pins after the restart: %d" % coll.jvm(r.proc.pid)["pins_total"])
    finally:
        r.kill()
        coll.kill(signal.SIGTERM)


def case_occupancy(jdk):
    """Repro with 4 carriers: on 21 every carrier is >= 90 % pinned while it runs; on 25 they are mostly idle."""
    jdk = int(jdk)
    coll = Collector().start()
    fixture, args = ("Repro", ()) if jdk < 24 else ("ReproLoop", (4,))
    r = streaming(jdk, coll, fixture, args=args, props=scheduler(4, 4)).start()
    try:
        time.sleep(3.0)  # the shares over 3 s of the run (a measurement window, not a wait for an event)
        check(r.proc.poll() is None, "still running")
        top = coll.top()
        carriers = [c for jv in top["jvms"] if jv["pid"] == r.proc.pid for c in jv["carriers"]]
        print(json.dumps(carriers)[:800])
        check(len(carriers) == 4, "4 carriers: %s" % carriers)
        for c in carriers:
            if jdk < 24:
                check(c["pinned_pct"] >= 90, "carrier %s pinned %.1f %%" % (c["name"], c["pinned_pct"]))
            else:
                check(c["pinned_pct"] < 5 and c["idle_pct"] >= 50,
                      "carrier %s: pinned %.1f %%, idle %.1f %%" % (c["name"], c["pinned_pct"], c["idle_pct"]))
        r.wait(60)
    finally:
        r.kill()
        coll.kill(signal.SIGTERM)


def case_native_block(jdk, mode):
    jdk = int(jdk)
    coll = Collector().start()
    r = streaming(jdk, coll, "NativeBlock", args=(mode, 2, 3000), props=scheduler(2)).start()
    try:
        for c in coll.native_blocks(r.proc.pid, 2):
            check(c["reason"] == "NATIVE_BLOCK" and "NativeBlock.block" in c["culprit"], "culprit: %s" % c)
        r.wait(60)
    finally:
        r.kill()
        coll.kill(signal.SIGTERM)


def case_running(jdk):
    """Sampled occupancy (the default) names the virtual thread each carrier runs: two virtual
    threads spin in Java on two carriers, and `vtpin top` shows each carrier running one of them.
    The ids are read from the carrier's continuation (no JVMTI call): the agent must not say it
    fell back to asking JVMTI. Hogs are off (hog=0): a spinning thread is a hog after 200 ms, and a
    carrier that shows `hog` no longer shows `running` (seen under load: both were hogs before the
    first answer)."""
    jdk = int(jdk)
    coll = Collector().start()
    r = streaming(jdk, coll, "SpinIds", args=(2, 4000), props=scheduler(2), opts="hog=0").start()
    try:
        deadline = time.monotonic() + 10
        ids = set()
        while len(ids) < 2:
            check(time.monotonic() < deadline, "the fixture's threads never started: " + r.stdout())
            ids = {int(l.split()[-1]) for l in r.stdout().splitlines() if l.startswith("SpinIds vthread ")}
            time.sleep(0.05)

        def running(t):
            return {c["vthread"] for jv in t["jvms"] if jv["pid"] == r.proc.pid
                    for c in jv["carriers"] if c["state"] == "running"}
        top = coll.wait_for(coll.top, lambda t: running(t) == ids, timeout=3)
        print("spinning %s; carriers %s" % (sorted(ids), json.dumps(top)[:600]))
        r.wait(60)
        check("Thread.cont layout" not in r.stderr(), "the agent read the ids without JVMTI:\n" + r.stderr())
    finally:
        r.kill()
        coll.kill(signal.SIGTERM)


def fill(path):
    """Writes path/filler until the file system is full."""
    with open(os.path.join(path, "filler"), "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 65536)
        except OSError:
            pass
        try:
            while True:
                f.write(b"\0" * 512)
        except OSError:
            pass
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def pinning_until_stopped(jdk, d, sessions, what):
    """A collector recording into sessions (on a full tmpfs) and a JVM that pins all along on every
    JDK (OccMix: a native frame, 2 carriers, rounds of 30 ms pins) streaming to it, until status
    shows that JVM's recording stopped: (collector, run, pid, mine: a status answer's entries of that
    JVM, the status answer's JVM)."""
    from test_metrics import MetricsCollector
    coll = MetricsCollector(d, sessions=sessions).start()
    os.makedirs(os.path.join(d, "jvm"))
    r = Run(jdk, "OccMix", args=(120, 2, 30, 10, 20), props=scheduler(2), agent_opts="collector=" + coll.socket,
            workdir=os.path.join(d, "jvm")).start()
    pid = r.proc.pid

    def mine(s):
        return [j for j in s["jvms"] if j["pid"] == pid]
    st = coll_wait(coll, lambda s: mine(s) and (mine(s)[0].get("recording_error") or {}).get("active"), what)
    return coll, r, pid, mine, mine(st)[0]


def case_recording_disk_full(jdk):
    """The collector's recording directory fills up (a 1 MiB tmpfs, root): status (text and JSON),
    top and /metrics say which JVM's recording stopped, when and why; once space is freed the
    recording resumes, says in a notice how much was lost, and holds new events again."""
    from test_metrics import samples, select
    jdk = int(jdk)
    if os.geteuid() != 0:
        skip("mounting a small tmpfs needs root")
    d = tempdir("vtpin-coll-disk-")
    small = os.path.join(d, "small")
    os.mkdir(small)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", small], capture_output=True, text=True)
    if p.returncode != 0:
        skip("cannot mount a tmpfs here: " + p.stderr.strip())
    coll, r = None, None
    try:
        sessions = os.path.join(small, "sessions")
        os.mkdir(sessions, 0o700)
        left = fill(small)
        print("tmpfs full: %d bytes free" % left)
        coll, r, pid, mine, j = pinning_until_stopped(jdk, d, sessions, "the JVM's recording stopped")
        e = j["recording_error"]
        print("stopped: %s" % json.dumps(e))
        check(e["error"] == "No space left on device" and e["errno"] == 28, "why: %s" % e)
        check(abs(e["since_unix_ns"] / 1e9 - time.time()) < 120, "when: %s" % e)
        check(e["stops"] >= 1, "counted: %s" % e)
        text = ask_text(coll, "status")
        check(re.search(r"recording .*\n\s+STOPPED since \S+ \(.* ago\): No space left on device", text),
              "status text says the recording stopped, when and why:\n" + text)
        top = ask_text(coll, "top", "--once")
        check("RECORDING STOPPED" in top and "No space left on device" in top, "top says it:\n" + top)
        tj = ask_json(coll, "top", "--once")
        check(any(x["pid"] == pid and (x.get("recording_error") or {}).get("active") for x in tj["jvms"]),
              "top's JSON says it")
        s = samples(coll.scrape())
        check([v for _, v in select(s, "vtpin_recording_stopped", jvm=pid)] == [1], "the stopped gauge is 1: %s" %
              select(s, "vtpin_recording_stopped", jvm=pid))
        check(sum(v for _, v in select(s, "vtpin_recording_errors_total", jvm=pid)) >= 1, "the error is counted")
        log = open(coll.log_path).read()
        check(log.count("No space left on device") >= 1, "logged:\n" + log[-1500:])
        # a few more frames that cannot be written, counted as lost while the recording is stopped
        lost = j["recording_error"]["frames_lost"]
        coll_wait(coll, lambda s: mine(s) and mine(s)[0]["recording_error"]["frames_lost"] >= lost + 5,
                  "frames lost while the recording is stopped")
        # space again: the recording resumes on its own
        os.unlink(os.path.join(small, "filler"))
        st = coll_wait(coll, lambda s: mine(s) and mine(s)[0].get("recording_error") and not mine(s)[0][
            "recording_error"]["active"] and mine(s)[0]["recording_error"]["resumed_unix_ns"], "the recording resumed")
        e = mine(st)[0]["recording_error"]
        print("resumed: %s" % json.dumps(e))
        check(e["frames_lost"] > 0 and e["bytes_lost"] > 0, "what was lost is counted: %s" % e)
        check(e["resumed_unix_ns"] > e["since_unix_ns"], "resumed after it stopped: %s" % e)
        text = ask_text(coll, "status")
        check(re.search(r"resumed .* after .* stopped \(No space left on device\): \d+ frames", text),
              "status text says it resumed and what was lost:\n" + text)
        path = mine(st)[0]["recording"]
        size = os.path.getsize(path)
        coll_wait(coll, lambda s: os.path.getsize(path) > size, "events written again after %d bytes" % size)
        s = samples(coll.scrape())
        check([v for _, v in select(s, "vtpin_recording_stopped", jvm=pid)] == [0], "the stopped gauge is 0")
        lost = select(s, "vtpin_events_dropped_total", jvm=pid, kind="recording")
        check(lost and lost[0][1] == e["frames_lost"], "lost frames as a drop kind: %s (%s)" % (lost, e))
        r.kill()
        coll.stop()
        coll = None
        rep = report_json(path)
        gap = [n for n in rep["notices"] if n.get("code") == "collector.recording_gap"]
        check(gap and "No space left on device" in gap[0]["text"] and str(e["frames_lost"]) in gap[0]["text"],
              "the recording says where it lost what: %s" % rep["notices"])
        check(rep["jvm"]["pid"] == pid, "the recording starts with the JVM's Hello: %s" % rep["jvm"])
        check(rep["pins"], "pins after the gap are in it")
        rec = rep["recording"]
        check(rec["unknown_refs"] == 0 and rec["unmatched_pin_ends"] == 0 and rec["duplicate_pin_events"] == 0,
              "what came after the gap has the definitions and the starts sent in it: %s" % rec)
    finally:
        if r:
            r.kill()
        if coll:
            coll.stop()
        subprocess.run(["umount", small])


def case_recording_no_inode(jdk):
    """No file can be created in the recording directory (a tmpfs out of inodes, root): the JVM's
    recording is shown stopped from its start with the reason; once a file can be created it is,
    starting with the JVM's Hello, the gap notice and what the session said so far (its
    definitions, the starts of its pins in progress: as a rotated file does), so that what comes
    after the gap reads whole."""
    from test_metrics import samples, select, wait_for
    jdk = int(jdk)
    if os.geteuid() != 0:
        skip("mounting a small tmpfs needs root")
    d = tempdir("vtpin-coll-inode-")
    small = os.path.join(d, "small")
    os.mkdir(small)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,nr_inodes=16", "tmpfs", small], capture_output=True,
                       text=True)
    if p.returncode != 0:
        skip("cannot mount a tmpfs here: " + p.stderr.strip())
    coll, r = None, None
    try:
        sessions = os.path.join(small, "sessions")
        os.mkdir(sessions, 0o700)
        fillers = []
        try:
            while len(fillers) < 64:
                path = os.path.join(small, "f%d" % len(fillers))
                open(path, "w").close()
                fillers.append(path)
        except OSError:
            pass
        check(0 < len(fillers) < 64, "the tmpfs ran out of inodes: %d files" % len(fillers))
        coll, r, pid, mine, j = pinning_until_stopped(jdk, d, sessions, "the JVM's recording stopped from its start")
        print("stopped: %s %s" % (j["recording"], json.dumps(j["recording_error"])))
        check(j["recording_error"]["error"] == "No space left on device", "why: %s" % j["recording_error"])
        check(j["recording"] and not os.path.exists(j["recording"]), "named, not created: %s" % j["recording"])
        check("creating the recording failed: No space left on device" in open(coll.log_path).read(), "logged")
        s = samples(coll.scrape())
        check([v for _, v in select(s, "vtpin_recording_stopped", jvm=pid)] == [1], "the stopped gauge is 1")
        coll_wait(coll, lambda s: mine(s) and mine(s)[0]["recording_error"]["frames_lost"] > 0,
                  "frames lost while no recording could be created")
        os.unlink(fillers[-1])  # room for one file
        st = coll_wait(coll, lambda s: mine(s) and not mine(s)[0]["recording_error"]["active"], "the recording resumed")
        e = mine(st)[0]["recording_error"]
        check(e["frames_lost"] > 0 and e["resumed_unix_ns"], "what was lost is counted: %s" % e)
        path = mine(st)[0]["recording"]
        coll_wait(coll, lambda s: os.path.exists(path) and os.path.getsize(path) > 0, "the recording created")

        def ended_pins():
            return [p for p in report_json(path)["pins"] if p["duration_ns"] is not None]
        # a pin ended in the file, not only the file: each OccMix thread is between two pins part of the
        # time, and a CI run killed the JVM while the file held the Hello, the gap notice and the
        # definitions, no pin in progress at the resume to restate and none begun since
        wait_for(ended_pins, lambda pins: pins, 60, "a pin ended in the created recording")
        r.kill()
        coll.stop()
        coll = None
        rep = report_json(path)
        check(rep["jvm"]["pid"] == pid, "the created recording starts with the JVM's Hello: %s" % rep["jvm"])
        gap = [n for n in rep["notices"] if n.get("code") == "collector.recording_gap"]
        check(gap and "No space left on device" in gap[0]["text"], "and says what it lost: %s" % rep["notices"])
        rec = rep["recording"]
        check(rep["pins"] and rec["unknown_refs"] == 0 and rec["unmatched_pin_ends"] == 0,
              "the pins after the gap have the definitions and starts sent before it: %s" % rec)
    finally:
        if r:
            r.kill()
        if coll:
            coll.stop()
        subprocess.run(["umount", small])


def case_run_disk_full(jdk):
    """`vtpin run` on a full disk (a 1 MiB tmpfs, root): its report says which JVM's recording at
    the run's collector stopped, when and why."""
    jdk = int(jdk)
    if os.geteuid() != 0:
        skip("mounting a small tmpfs needs root")
    d = tempdir("vtpin-run-disk-")
    small = os.path.join(d, "small")
    os.mkdir(small)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", small], capture_output=True, text=True)
    if p.returncode != 0:
        skip("cannot mount a tmpfs here: " + p.stderr.strip())
    try:
        run_dir = os.path.join(small, "run")
        os.mkdir(run_dir)
        print("tmpfs full: %d bytes free" % fill(small))
        java = Run(jdk, "JniSleep", args=(20, 100), props=scheduler(2))  # its command line, not its agent
        cmd = [c for c in java.cmd if not c.startswith("-agentpath:")]
        p = subprocess.run([VTPIN, "run", "--dir", run_dir, "--"] + cmd, capture_output=True, text=True, timeout=180)
        print(p.stdout[-1500:])
        m = re.search(r"^vtpin run: warning: the collector's recording of JVM (\d+) stopped at (\S+): "
                      r"No space left on device; (still stopped|resumed) after (?:[0-9.]+ [a-z]+|[0-9]+[mh][0-9]+[sm]), (\d+) frames .* not written \((\S+)\)$",
                      p.stdout, re.M)
        check(m, "the run's report says which JVM's recording stopped, when and why:\n%s\n%s" % (
            p.stdout[-2000:], p.stderr[-2000:]))
        check(int(m.group(4)) > 0 and os.path.basename(m.group(5)).startswith(m.group(1) + "-"),
              "with what it lost and the recording's name: %s" % m.group(0))
    finally:
        subprocess.run(["umount", small])


def case_recording_rotation(jdk):
    """--record-max (issue 37: recordings grew 0.7 GB a day with no cap): 3000 pins at threshold 0
    streamed to a collector with --record-max=256k rotate its recording several times. Each file is
    a whole recording `vtpin report` reads alone: its Hello, every definition it refers to (the
    stacks were defined in the first file only), the starts of the pins in progress (each end finds
    its start), no damage. None is past the cap by more than a frame, the files together hold every
    pin the agent's own recording holds, with its stack, and --record-keep bounds how many stay."""
    jdk = int(jdk)
    pins = 3000
    for keep in (100, 2):
        coll = CollectorProcess(tempdir("vtpin-coll-rot-"), "--record-max", "256k", "--record-keep", str(keep),
                                stop_timeout=10).start()
        r = streaming(jdk, coll, "StressPins", args=("native", pins, 1), props=scheduler(4, 4), opts="threshold=0")
        try:
            r.run(timeout=120)
            check("StressPins: pinned=%d" % pins in r.stdout(), "the fixture pinned:\n" + r.stdout())
            # the connection's last flush done: the JVM shows disconnected
            st = coll.wait_for(lambda: coll.jvm(r.proc.pid), lambda j: j and not j["connected"])
            text_rotations = re.search(r"recording +\S+ \(rotated (\d+) times?, --record-max", coll.text("status"))
            coll.stop()
            names = os.listdir(coll.sessions)
            path = [os.path.join(coll.sessions, n) for n in names if n.endswith(".vtp")]
            check(len(path) == 1, "one recording, and its rotated files: %s" % names)
            path = path[0]
            rotated = sorted((n for n in names if not n.endswith(".vtp")), key=lambda n: int(n.rsplit(".", 1)[1]))
            check(rotated == ["%s.%d" % (os.path.basename(path), i) for i in range(1, len(rotated) + 1)],
                  "PATH.1 .. PATH.N, none missing: %s" % rotated)
            files = [path] + [os.path.join(coll.sessions, n) for n in rotated]
            sizes = [os.path.getsize(f) for f in files]
            print("--record-keep=%d: %d files, %s bytes, %d rotations" % (keep, len(files), sizes,
                                                                           st["recording_rotations"]))
            # every rotation counted, those the connection's last writes cause too; with 100 kept, each
            # rotated file is one
            check(st["recording"] == path and (st["recording_rotations"] == len(rotated) if keep == 100 else
                                               st["recording_rotations"] >= len(rotated)),
                  "status names the newest file and counts the rotations (%d files rotated out): %s" %
                  (len(rotated), st))
            check(text_rotations and int(text_rotations.group(1)) == st["recording_rotations"],
                  "status text says it: %s" % text_rotations)
            if keep == 2:
                check(len(rotated) == 2, "--record-keep=2: two rotated files kept: %s" % rotated)
                continue
            check(len(rotated) >= 3, "3000 pins past 256 KiB rotate several times: %s" % sizes)
            # the cap, and at most one frame and the rotation's notice past it
            check(all(sz <= (256 + 1) * 1024 for sz in sizes), "no file past the cap: %s" % sizes)
            own = {p["id"] for p in report_json(r.record)["pins"]}
            found, newer = {}, None
            for i, f in enumerate(files):
                rep = report_json(f)
                rec = rep["recording"]
                check(rep["jvm"]["pid"] == r.proc.pid and not rec["damaged"], "%s: a whole recording of this JVM: %s" %
                      (f, rec))
                check(rec["unknown_refs"] == 0 and rec["unmatched_pin_ends"] == 0,
                      "%s: every definition it refers to and every start its ends need are in it: %s" % (f, rec))
                codes = [n["code"] for n in rep["notices"]]
                check((i < len(files) - 1) == ("collector.recording_rotated" in codes),
                      "%s: says it continues the one before, unless it is the first: %s" % (f, codes))
                check(rec["rotated"] == (i > 0) and rec["complete"] == (i == 0), "%s: %s" % (f, rec))
                ids = {p["id"]: p for p in rep["pins"]}
                for p in rep["pins"]:
                    check(p["stack"] and all(fr["method"] != "<unknown>" for fr in p["stack"]),
                          "%s: pin %d has its stack: %s" % (f, p["id"], p["stack"]))
                    found.setdefault(p["id"], p)
                if newer is not None:
                    went_on = [p["id"] for p in rep["pins"] if p["ongoing"]]
                    check(all(x in newer and not newer[x]["ongoing"] for x in went_on),
                          "%s: the pins in progress at its rotation go on in the newer file, ended there: %s" %
                          (f, went_on))
                newer = ids
            check(set(found) == own, "the files together hold the agent's pins: %d of %d" % (len(found), len(own)))
            # concatenated in order, oldest first: one session, each pin once, ended
            rep = report_json_of_rotated(files, os.path.join(coll.dir, "whole.vtp"))
            rec = rep["recording"]
            check(rec["sessions"] == 1 and rec["parts"] == len(files) and rec["complete"] and not rec["rotated"],
                  "the files in order are one session: %s" % rec)
            ids = [p["id"] for p in rep["pins"]]
            check(sorted(ids) == sorted(own) and not any(p["ongoing"] for p in rep["pins"]),
                  "each pin once, ended: %d pins, %d distinct, the agent's %d" % (len(ids), len(set(ids)), len(own)))
            check(rec["duplicate_pin_events"] == 0 and rec["unmatched_pin_ends"] == 0 and rec["unknown_refs"] == 0,
                  "what each file says again is no duplicate: %s" % rec)
        finally:
            r.kill()
            coll.stop()


def coll_wait(coll, cond, what, timeout=60):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = ask_json(coll, "status")
        if cond(last):
            return last
        time.sleep(0.2)
    raise Failure("timed out waiting for %s; last: %s" % (what, json.dumps(last)[:2500]))


def ask_json(coll, what, *args):
    return coll.ask(what, *args)


def ask_text(coll, what, *args):
    return coll.text(what, *args)


if __name__ == "__main__":
    raise SystemExit(main({
        "two_jvms": case_two_jvms,
        "late_collector": case_late_collector,
        "restart": case_restart,
        "occupancy": case_occupancy,
        "native_block": case_native_block,
        "running": case_running,
        "recording_disk_full": case_recording_disk_full,
        "run_disk_full": case_run_disk_full,
        "recording_no_inode": case_recording_no_inode,
        "recording_rotation": case_recording_rotation,
    }))
