#!/usr/bin/env python3
"""Captures the corpus (tests/corpus/README.md): real recordings from real runs on this machine, kept
small, with what each run proved alongside (`NAME.run.json`: the JDK, the command, BackToBack's round
times, JFR's pinned events), so tests/corpus/test_corpus.py can replay them without a JVM.

usage: VTPIN_BUILD=build JAVA21_HOME=... tests/corpus/capture.py [NAME ...]   (default: all)
The kernel-view captures need root and a kernel with BTF (as the bpf tests). Each capture replaces
tests/corpus/NAME.vtp and NAME.run.json; re-run test_corpus.py NAME --update afterwards and read the
diff of NAME.expected.json before committing it."""
import datetime
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "jvm"))

from harness import (CLASSES, VTPIN, Failure, Run, check, jdk_home, jfr_pinned_events, jfr_touches,  # noqa: E402
                     remove_tempdirs, scheduler, tempdir, wait_ready)
from test_kernel import Collector, finish, need_kernel_view, wait_tracked  # noqa: E402


def save(name, recording, facts):
    shutil.copyfile(recording, os.path.join(HERE, name + ".vtp"))
    facts = dict(facts, captured=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                 host_kernel=os.uname().release)
    with open(os.path.join(HERE, name + ".run.json"), "w") as f:
        json.dump(facts, f, indent=1, sort_keys=True)
        f.write("\n")
    print("%s: %d bytes" % (name, os.path.getsize(os.path.join(HERE, name + ".vtp"))))


def java_version(home):
    p = subprocess.run([os.path.join(home, "bin", "java"), "-version"], capture_output=True, text=True)
    return p.stderr.splitlines()[0]


def rounds_of(stdout):
    return [line for line in stdout.splitlines() if " sleeps_from_unix_ns=" in line]


def capture_b2b_attach():
    """back_to_back_attach (tests/jvm/test_kernel.py): BackToBack 2 x 20 x 30 ms on JDK 21, the agent
    attached, streaming to a collector with the kernel view: sampled parks split by the kernel."""
    need_kernel_view()
    home = jdk_home(21)
    coll = Collector(["--kernel=on"]).start()
    d = tempdir(prefix="vtpin-corpus-")
    go, outp = os.path.join(d, "go"), os.path.join(d, "stdout.txt")
    cmd = [os.path.join(home, "bin", "java"), "-cp", CLASSES] + scheduler(2) + ["BackToBack", "2", "20", "30", go]
    out = open(outp, "w")
    jvm = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_ready(jvm, outp, "BackToBack: ready")
        a = subprocess.run([VTPIN, "attach", str(jvm.pid), "collector=%s" % coll.socket], capture_output=True,
                           text=True, timeout=60)
        check(a.returncode == 0, "attach: %s %s" % (a.stdout, a.stderr))
        coll.wait_for(lambda: coll.ask("status"),
                      lambda s: any(j["pid"] == jvm.pid and j["connected"] and j["mode"] == "attach" and
                                    sum(1 for c in j["kernel_carriers"] if c["kernel"]) >= 2 for j in s["jvms"]))
        open(go, "w").close()
        check(jvm.wait(timeout=120) == 0, "the JVM failed:\n" + open(outp).read())

        class Done:
            proc = jvm

            @staticmethod
            def wait(timeout):
                pass
        finish(coll, Done)
        save("b2b_attach", coll.recordings()[0], {
            "jdk": java_version(home), "command": " ".join(cmd[1:]).replace(go, "GO"),
            "how": "vtpin attach PID collector=SOCKET, once ready; vtpin collector --kernel=on; GO created once "
                   "the collector tracked both carriers",
            "rounds": rounds_of(open(outp).read()), "sleep_ns": 30_000_000})
    finally:
        if jvm.poll() is None:
            jvm.kill()
            jvm.wait()
        out.close()
        coll.cleanup()


def streamed(name, fixture, args, props, opts="", facts=None):
    """fixture at startup, streaming to a collector with the kernel view; its go file created once both
    carriers are tracked (test_kernel.held_scenario)."""
    need_kernel_view()
    home = jdk_home(21)
    coll = Collector(["--kernel=on"]).start()
    d = tempdir(prefix="vtpin-corpus-")
    go = os.path.join(d, "go")
    r = None
    try:
        r = Run(21, fixture, args=tuple(go if a == "GO" else a for a in args), props=props,
                agent_opts="collector=%s%s" % (coll.socket, opts)).start()
        wait_tracked(coll, r, 2)
        open(go, "w").close()
        finish(coll, r)
        cmd = " ".join([fixture] + [str(a) for a in args])
        save(name, coll.recordings()[0], dict(facts or {}, jdk=java_version(home), command=cmd, props=list(props),
                                              how="-agentpath:libvtpin.so=collector=SOCKET%s; vtpin collector "
                                                  "--kernel=on; GO created once both carriers were tracked" % opts,
                                              rounds=rounds_of(r.stdout())))
    finally:
        if r:
            r.kill()
        coll.cleanup()


def capture_b2b_held():
    """held_explained's BackToBack sleep (tests/jvm/test_kernel.py) at startup: 2 x 20 x 15 ms."""
    streamed("b2b_held", "BackToBack", (2, 20, 15, "GO", "sleep"), scheduler(2), facts={"sleep_ns": 15_000_000})


def capture_native_held():
    """held_explained's NativeBlock sleeps: one native call per carrier sleeping 100 ms at a time."""
    streamed("native_held", "NativeBlock", ("sleeps", 2, 1500, "GO"), scheduler(2))


def capture_native_unexplained():
    """The same calls with threshold=60s: no pin, the held time unexplained and said."""
    streamed("native_unexplained", "NativeBlock", ("sleeps", 2, 1500, "GO"), scheduler(2), opts=",threshold=60s")


def recorded(name, fixture, args, props, opts="", jfr=False):
    home = jdk_home(21)
    r = Run(21, fixture, args=args, props=props, agent_opts=opts, jfr=jfr).run(timeout=240)
    facts = {"jdk": java_version(home), "command": " ".join([fixture] + [str(a) for a in args]),
             "props": list(props), "how": "-agentpath:libvtpin.so=record=FILE%s" % ("," + opts if opts else ""),
             "stdout": r.stdout().splitlines()[:20]}
    if jfr:
        events = jfr_pinned_events(home, r.jfr, r.report())
        facts["jfr_pinned"] = [{"javaThreadId": e["values"]["eventThread"]["javaThreadId"],
                                "startTime": e["values"]["startTime"], "start_ns": e["start_ns"],
                                "duration": e["values"]["duration"], "touches": jfr_touches(e, fixture)}
                               for e in events]
    save(name, r.record, facts)


def capture_hogs():
    """test_hogs.py spin: two virtual threads compute 800 ms each without unmounting."""
    recorded("hogs", "CarrierHog", ("spin", 2, 800), scheduler(2))


def capture_blockers():
    """test_blockers.py owner pinned: three waiters enter a monitor a pinned virtual thread holds 300 ms."""
    recorded("blockers", "LockOwner", ("pinned", 3, 300), scheduler(4))


def capture_repro():
    """test_pins.py jfr_repro: Repro at startup, threshold=0, JFR alongside."""
    recorded("repro", "Repro", (), scheduler(4, 4), opts="threshold=0", jfr=True)


def alternating(name, kernel, rounds=6):
    """test_attach_exact.py alternating_sampled / alternating_kernel: AlternatingMonitor (6 virtual threads
    x 6 rounds of synchronized { sleep(15 ms) } on one monitor, 2 carriers), the agent attached at
    threshold=0 through a collector with (--kernel=on) or without (--kernel=off) the kernel view, JFR
    alongside: the sampled parks bounded by the waits to enter (and split by the kernel). rounds: more
    of them, a session long enough for the report to bound its parks in windows as it reads them."""
    from test_attach_exact import Jvm, attached, jfr_at
    if kernel:
        need_kernel_view()
    jvm = Jvm(21, "alternating", "sampled", "")
    at = jvm.cmd.index(jvm.main) + 2  # AlternatingMonitor THREADS ROUNDS SLEEP_MS GO
    jvm.cmd[at] = str(rounds)
    coll = Collector(["--kernel=on" if kernel else "--kernel=off"]).start()
    try:
        jvm.start()
        a = subprocess.run([VTPIN, "attach", str(jvm.proc.pid), "collector=%s,threshold=0" % coll.socket],
                           capture_output=True, text=True, timeout=60)
        check(a.returncode == 0, "attach exits 0: %s %s" % (a.stdout, a.stderr))
        attached(coll, jvm.proc.pid, kernel)
        holds = jvm.finish()

        class Done:
            proc = jvm.proc

            @staticmethod
            def wait(timeout):
                pass
        rep = finish(coll, Done)
        events = [e for e in jfr_pinned_events(jvm.home, jvm.jfr, rep) if jfr_at(e, jvm.site)]
        cmd = [c for c in jvm.cmd[1:] if not c.startswith(("-XX:StartFlightRecording", "-Dvtpin.clockmark"))]
        save(name, coll.recordings()[0], {
            "jdk": java_version(jvm.home), "command": " ".join(cmd).replace(jvm.go, "GO"), "holds": holds,
            "how": "vtpin attach PID collector=SOCKET,threshold=0 once ready; vtpin collector --kernel=%s; JFR "
                   "(java-fixtures/pin.jfc) from the start; GO created once attached%s" %
                   ("on" if kernel else "off", " and both carriers tracked" if kernel else ""),
            "site": list(jvm.site),
            "jfr_pinned": [{"javaThreadId": e["values"]["eventThread"]["javaThreadId"],
                            "startTime": e["values"]["startTime"], "start_ns": e["start_ns"],
                            "duration": e["values"]["duration"]}
                           for e in events]})
    finally:
        jvm.kill()
        coll.cleanup()


def capture_alternating_sampled():
    alternating("alternating_sampled", False)


def capture_alternating_kernel():
    alternating("alternating_kernel", True)


def capture_alternating_long():
    alternating("alternating_long", False, rounds=60)


CAPTURES = {"alternating_sampled": capture_alternating_sampled, "alternating_kernel": capture_alternating_kernel,
            "alternating_long": capture_alternating_long,
            "b2b_attach": capture_b2b_attach, "b2b_held": capture_b2b_held, "native_held": capture_native_held,
            "native_unexplained": capture_native_unexplained, "hogs": capture_hogs, "blockers": capture_blockers,
            "repro": capture_repro}

if __name__ == "__main__":
    names = sys.argv[1:] or sorted(CAPTURES)
    try:
        for n in names:
            CAPTURES[n]()
    except Failure as e:
        print("FAIL: %s" % e)
        sys.exit(1)
    finally:
        remove_tempdirs()
