#!/usr/bin/env python3
"""Verdicts of the detection engine on the fixtures, JDK 21 and 25.

Each case is one CTest entry: `test_pins.py CASE JDK` (e.g. `repro 21`).
Asserts on what the real agent recorded (read back with `vtpin report`)."""
import os
import subprocess
import time

from harness import (CLASSES, FIXTURE_LIB, VTPIN, Failure, Run, check, check_timed_like_jfr, culprit, describe,
                     forget_stale_attach_socket, jdk_home, jfr_pinned_events, jfr_touches, main, native_block_in, pins_in, report_json, scheduler,
                     set_aside, tempdir, touches, wait_ready)

PARK_REASONS = {"MONITOR", "NATIVE", "CRITICAL_SECTION"}


# The positive control of every test that asserts an absence: the same JVM first runs
# JniSleep (2 virtual threads sleeping through a native frame: 2 NATIVE pins on every
# JDK), so an agent that detects nothing fails the test instead of passing it.
CONTROL = ["JniSleep", "2", "100"]


def chained(fixture, args=()):
    """(main class, args) running the control, then fixture with args, in one JVM (Chain)."""
    return "Chain", CONTROL + ["--", fixture] + [str(a) for a in args]


def control_found(report, jdk):
    pins = [p for p in pins_in(report, "JniSleep") if p["reason"] == "NATIVE"]
    check(len(pins) == 2, "JDK %s: the positive control (JniSleep in the same JVM) must find 2 NATIVE pins, got %d: "
          "the agent detected nothing in this run, so the absence below proves nothing" % (jdk, len(pins)))


def no_pins_of(report, cls, jdk):
    """No pins in cls, in a run made with chained(): the control's pins must be there."""
    control_found(report, jdk)
    pins = pins_in(report, cls)
    check(not pins, "JDK %s: expected no pins in %s, got %d (first: %s)" % (jdk, cls, len(pins), pins[:1]))


def case_repro(jdk):
    jdk = int(jdk)
    main_class, args = chained("Repro") if jdk >= 24 else ("Repro", ())
    r = Run(jdk, main_class, args=args, props=scheduler(4, 4)).run()
    rep = r.report()
    check(rep["jvm"]["pid"] > 0 and rep["jvm"]["java_version"].startswith(str(jdk)),
          "Hello names the JVM: %s" % rep["jvm"])
    if jdk >= 24:
        no_pins_of(rep, "Repro", jdk)
        return
    mine = pins_in(rep, "Repro")
    # The JDK's own contended entries under settle (e.g. class loading locks while 100 virtual threads
    # reach their first sleep at once: a 4 ms one seen under ASan) pin too, as MONITOR_ENTER at the
    # entering frame, with Repro's monitor held below: a few, never in place of a sleep's pin.
    entries = set_aside([p for p in mine if p["reason"] == "MONITOR_ENTER"],
                        "the JDK's own contended entries under Repro.settle", max_ms=150)
    pins = [p for p in mine if p["reason"] != "MONITOR_ENTER"]
    for p in entries:
        held = [f for f in p["stack"] if (f["class"], f["method"]) == ("Repro", "settle")]
        check(len(held) == 1 and held[0]["monitors"] == 1,
              "an entry pinned by Repro.settle's monitor: %s" % p["stack"][:12])
    # What Repro guarantees: each of its 100 virtual threads holds its monitor through a
    # Thread.sleep(200), which never returns early. Not that one pin lasts 200 ms: the pin is
    # the park on the carrier (parkOnCarrierThread), and JDK 21's parkNanos first tries to
    # yield, fails (pinned), and then parks for what is left of the 200 ms; on a loaded machine
    # the failed yield can take tens of ms (a 134 ms pin was seen). A park may also return early
    # (a spurious wakeup, a permit left on the carrier thread) and the sleep parks again: two
    # pins of one virtual thread. So: the pins of 100 virtual threads, each pin at least the
    # threshold (1 ms), and typically (the median virtual thread) pinned for about the 200 ms.
    by_vthread = {}
    for p in pins:
        by_vthread.setdefault(p["vthread"]["id"], []).append(p)
    check(len(by_vthread) == 100 and len(pins) >= 100,
          "expected the pins of 100 virtual threads, got %d pins of %d (counters %s)" % (
              len(pins), len(by_vthread), rep["stats"]))
    totals = sorted(sum(p["duration_ns"] or 0 for p in its) for its in by_vthread.values())
    median = totals[len(totals) // 2]
    check(180e6 <= median <= 400e6, "the median virtual thread is pinned about 200 ms, got %.1f ms (shortest %.1f)"
          % (median / 1e6, totals[0] / 1e6))
    if len(pins) > 100:
        print("note: %d sleeps parked more than once: %s" % (len(pins) - 100, sorted(
            [p["duration_ns"] for p in its] for its in by_vthread.values() if len(its) > 1)))
    for p in pins:
        check(p["reason"] == "MONITOR", "reason %s, expected MONITOR" % p["reason"])
        c = culprit(p)
        check(c and c["class"] == "Repro" and c["method"] == "settle" and c["monitors"] == 1,
              "culprit frame should be Repro.settle holding 1 monitor, got %s" % c)
        check(c["line"] == 20, "Repro.settle's pinning line is 20, got %s" % c["line"])
        check(p["duration_ns"] is not None and p["duration_ns"] >= 1e6,
              "a reported pin lasts at least the threshold (1 ms), got %s" % p["duration_ns"])
        check(p["carrier"]["name"].startswith("ForkJoinPool") and p["carrier"]["tid"] > 0,
              "carrier named with its OS tid: %s" % p["carrier"])
        check(p["vthread"]["id"] > 0, "virtual thread id: %s" % p["vthread"])
        # top frame first: parkOnCarrierThread when the callback took the stack, Unsafe.park when
        # the writer took it as the pin crossed the threshold
        top = p["stack"][0]
        check(top["class"] == "java.lang.VirtualThread" or (top["class"], top["method"]) ==
              ("jdk.internal.misc.Unsafe", "park"), "top frame first: %s" % top)
    carriers = {p["carrier"]["tid"] for p in pins}
    check(len(carriers) == 4, "4 carriers pinned with parallelism 4, got %d" % len(carriers))
    check(rep["sites"] and rep["sites"][0]["count"] == len(pins), "one site with all %d pins: %s" % (
        len(pins), rep["sites"][:1]))
    trace = r.trace_text()
    check("Repro.settle(Repro.java:20) <== monitors:1" in trace, "trace marks the monitor frame:\n" + trace[:2000])
    check("reason:MONITOR" in trace and "ended:" in trace, "trace has reasons and durations")


def case_waitpin_hang(jdk):
    """JDK 21 with 2 carriers and no spare: WaitPin hangs. The pins must be
    visible while it hangs; on 24+ it completes without pins."""
    jdk = int(jdk)
    if jdk >= 24:
        main_class, args = chained("WaitPin")
        rep = Run(jdk, main_class, args=args, props=scheduler(2, 2)).run(timeout=60).report()
        no_pins_of(rep, "WaitPin", jdk)
        return
    r = Run(jdk, "WaitPin", props=scheduler(2, 2))
    r.start()
    try:
        seen = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            check(r.proc.poll() is None, "WaitPin should hang on JDK 21, but it exited:\n" + r.stderr())
            if r.trace_text().count("reason:OBJECT_WAIT") >= 2:
                seen = time.monotonic() - r.started
                break
            time.sleep(0.05)
        check(seen is not None, "no OBJECT_WAIT pins reported within 60 s:\n" + r.trace_text())
        print("pins visible %.0f ms after the JVM started (the hang starts at once)" % (seen * 1e3))
        time.sleep(1.0)
        check(r.proc.poll() is None, "still hung")
        rep = report_json(r.record)  # read while the JVM is alive: the recording is flushed live
    finally:
        r.kill()
    pins = pins_in(rep, "WaitPin")
    check(len(pins) == 2, "2 carriers pinned in Object.wait, got %d: %s" % (len(pins), [describe(p) for p in pins]))
    for p in pins:
        check(p["reason"] == "OBJECT_WAIT", "reason %s" % p["reason"])
        check(p["duration_ns"] is None, "the pin is still in progress: duration null, got %s" % p["duration_ns"])
        c = culprit(p)
        check(c and c["class"] == "WaitPin" and c["method"].startswith("lambda$main$"),
              "culprit is the waiter lambda: %s" % c)
        check(any(f["class"] == "java.lang.Object" and f["method"].startswith("wait") for f in p["stack"]),
              "stack shows Object.wait")
    check(len({p["carrier"]["tid"] for p in pins}) == 2, "two different carriers")


def case_waitpin_compensate(jdk):
    """Without the maxPoolSize cap JDK 21 lends Object.wait extra carriers: still pins, and vtpin says so."""
    jdk = int(jdk)
    main_class, args = chained("WaitPin") if jdk >= 24 else ("WaitPin", ())
    rep = Run(jdk, main_class, args=args, props=scheduler(2)).run(timeout=60).report()
    if jdk >= 24:
        no_pins_of(rep, "WaitPin", jdk)
        return
    pins = pins_in(rep, "WaitPin")
    check(len(pins) >= 2 and all(p["reason"] == "OBJECT_WAIT" for p in pins),
          "OBJECT_WAIT pins, got %s" % [p["reason"] for p in pins])
    codes = [n["code"] for n in rep["notices"]]
    check("scheduler.compensation" in codes, "a scheduler.compensation notice, got %s" % codes)
    check(rep["stats"]["compensations"] >= 1, "compensations counted: %s" % rep["stats"])


def case_contended(jdk):
    jdk = int(jdk)
    main_class, args = chained("Contended") if jdk >= 24 else ("Contended", ())
    rep = Run(jdk, main_class, args=args, agent_opts="threshold=0").run().report()
    if jdk >= 24:
        no_pins_of(rep, "Contended", jdk)
        # its ~200 contended entries unmount: not pins, so not counted among the pins seen either
        st = rep["stats"]
        check(st["pins"] == st["pins_reported"] + st["pins_below_threshold"] and st["pins"] < 50,
              "pins seen = reported + below the threshold: %s" % st)
        return
    pins = pins_in(rep, "Contended")
    check(len(pins) >= 10, "contended entries pin on 21, got %d" % len(pins))
    for p in pins:
        check(p["reason"] == "MONITOR_ENTER", "reason %s: %s" % (p["reason"], describe(p)))
        check(culprit(p)["class"] == "Contended", "culprit in Contended: %s" % culprit(p))


def case_jnisleep(jdk):
    jdk = int(jdk)
    rep = Run(jdk, "JniSleep", props=scheduler(2)).run().report()
    pins = pins_in(rep, "JniSleep")
    check(len(pins) == 4, "4 NATIVE pins, got %d" % len(pins))
    for p in pins:
        check(p["reason"] == "NATIVE", "reason %s" % p["reason"])
        c = culprit(p)
        check(c and c["class"] == "JniSleep" and c["method"] == "sleepInNative" and c["native"],
              "culprit is the native method: %s" % c)
        check(c["library"] and os.path.basename(c["library"]) == "libvtpinfixture.so",
              "native frame names its library: %s" % c["library"])
        check(c["kind"] == "native" and c["downcall"] is None, "a JNI frame, not a downcall: %s" % c)
        b = p["stack"][p["blocking_frame"]] if p["blocking_frame"] is not None else None
        check(b and (b["class"], b["method"]) == ("JniSleep", "sleepCallback"),
              "the callback that sleeps is the blocking operation: %s" % b)


def case_jni_contended(jdk):
    """A contended synchronized block entered from a JNI callback: one pin per virtual thread on every
    JDK. 21-23: MONITOR_ENTER at the synchronized frame. 24+: the entry cannot unmount under the
    native frame, so NATIVE, the culprit the native method and the synchronized frame the blocking
    operation; the count agrees with JFR's jdk.VirtualThreadPinned in the same run. Each virtual
    thread holds a monitor of its own below the native call (JniLocked.enterHolding): the stack shows
    it there (on 24+ the callback keeps only the frames of a contended entry that may pin, and the
    writer reads the monitors when it reports the pin)."""
    jdk = int(jdk)
    threads = 3
    r = Run(jdk, "JniLocked", args=(threads, 100), props=scheduler(threads), jfr=jdk >= 24).run(timeout=120)
    rep = r.report()
    pins = pins_in(rep, "JniLocked")
    print("pins: %s" % [(p["reason"], p["duration_ns"]) for p in pins])
    check(len(pins) == threads, "one pin per contending virtual thread: %d, got %d (stats %s)" % (
        threads, len(pins), rep["stats"]))
    check(len({p["vthread"]["id"] for p in pins}) == threads, "each virtual thread once")
    for p in pins:
        check(p["stack"], "with its stack: %s" % p)
        top = p["stack"][0]
        check((top["class"], top["method"]) == ("JniLocked", "enterCallback"),
              "top frame: the synchronized block: %s" % top)
        holding = [f for f in p["stack"] if (f["class"], f["method"]) == ("JniLocked", "enterHolding")]
        check(len(holding) == 1 and holding[0]["monitors"] == 1,
              "the frame holding its own monitor shows it: %s" % p["stack"][:6])
        c = culprit(p)
        if jdk < 24:
            check(p["reason"] == "MONITOR_ENTER", "reason %s, expected MONITOR_ENTER" % p["reason"])
            check(p["culprit"] == 0, "the frame entering the monitor is the culprit: %s" % c)
            continue
        check(p["reason"] == "NATIVE", "reason %s, expected NATIVE" % p["reason"])
        check(c and (c["class"], c["method"]) == ("JniLocked", "enterInNative") and c["native"] and
              c["kind"] == "native", "culprit is the native method: %s" % c)
        check(p["blocking_frame"] == 0, "the synchronized frame is the blocking operation: %s" % p["blocking_frame"])
        check(c["monitors"] == 0 and top["monitors"] == 0, "nothing held while blocked: %s" % p["stack"][:3])
    if jdk < 24:
        return
    check("JniLocked.enterInNative(Native Method) <== native" in r.trace_text() and
          "<== blocking operation" in r.trace_text(), "the trace marks both:\n" + r.trace_text()[:3000])
    jfr = [e for e in jfr_pinned_events(r.home, r.jfr, rep) if jfr_touches(e, "JniLocked")]
    print("JFR: %s" % [(e["values"].get("pinnedReason"), e["values"].get("blockingOperation")) for e in jfr])
    check(len(jfr) == threads and all(e["values"].get("pinnedReason") == "Native or VM frame on stack" for e in jfr),
          "JFR sees the same %d native pins: %s" % (threads, [e["values"].get("pinnedReason") for e in jfr]))
    check_timed_like_jfr(pins, jfr)


def case_jni_wait(jdk):
    """Object.wait from a JNI callback: one pin per virtual thread on every JDK. 21-23: OBJECT_WAIT.
    24+: Object.wait cannot unmount under the native frame: NATIVE, the culprit the native method, the
    frame that waits the blocking operation; JFR agrees in the same run."""
    jdk = int(jdk)
    threads = 3
    r = Run(jdk, "JniLocked", args=(threads, 100, "wait"), props=scheduler(threads),
            jfr=jdk >= 24).run(timeout=120)
    rep = r.report()
    pins = pins_in(rep, "JniLocked")
    print("pins: %s" % [(p["reason"], p["duration_ns"]) for p in pins])
    check(len(pins) == threads, "one pin per waiting virtual thread: %d, got %d (stats %s)" % (
        threads, len(pins), rep["stats"]))
    for p in pins:
        c = culprit(p)
        check(p["stack"] and (p["stack"][0]["class"], p["stack"][0]["method"]) == ("java.lang.Object", "wait0"),
              "top frame Object.wait0: %s" % p["stack"][:1])
        if jdk < 24:
            check(p["reason"] == "OBJECT_WAIT", "reason %s, expected OBJECT_WAIT" % p["reason"])
            check(c and (c["class"], c["method"]) == ("JniLocked", "waitCallback"), "culprit the waiter: %s" % c)
            continue
        check(p["reason"] == "NATIVE", "reason %s, expected NATIVE" % p["reason"])
        check(c and (c["class"], c["method"]) == ("JniLocked", "waitInNative") and c["native"],
              "culprit is the native method: %s" % c)
        b = p["stack"][p["blocking_frame"]] if p["blocking_frame"] is not None else None
        check(b and (b["class"], b["method"]) == ("JniLocked", "waitCallback"),
              "the frame that waits is the blocking operation: %s" % b)
    if jdk < 24:
        return
    jfr = [e for e in jfr_pinned_events(r.home, r.jfr, rep) if jfr_touches(e, "JniLocked")]
    print("JFR: %s" % [(e["values"].get("pinnedReason"), e["values"].get("blockingOperation")) for e in jfr])
    check(len(jfr) == threads and all(e["values"].get("pinnedReason") == "Native or VM frame on stack" for e in jfr),
          "JFR sees the same %d native pins: %s" % (threads, [e["values"].get("pinnedReason") for e in jfr]))
    check_timed_like_jfr(pins, jfr)


def case_no_pins(jdk, fixture, *args):
    jdk = int(jdk)
    props = scheduler(4, 4) if fixture == "LockSleep" else []
    main_class, chain_args = chained(fixture, args)
    rep = Run(jdk, main_class, args=chain_args, props=props).run().report()
    no_pins_of(rep, fixture, jdk)
    # The JDK pins now and then in its own code (JDK 21: contended entry into method-handle
    # linkage when many virtual threads link the same call site at once): shown, capped, not failed.
    for p in set_aside([p for p in rep["pins"] if not touches(p, "JniSleep")], "the JDK's own pins"):
        top = p["stack"][p["culprit"]] if p["stack"] and p["culprit"] is not None else {}
        check(top.get("class", "").startswith(("java.", "jdk.", "sun.")), "only JDK-internal pins: %s" % top)


def case_jfr_crosscheck(jdk, fixture, loaded=None):
    """Park-based pins: vtpin's count and durations agree with JFR at threshold 0, same run. loaded:
    the JVM under a 30 % CPU quota with two preempting burst loops beside it (tests/jvm/load.py):
    still one pin per JFR event. There a sleep's park sometimes wakes just before its deadline and
    parks again for the rest: both vtpin and JFR count that second, sub-millisecond pin (seen once
    in 25 loaded Repro runs: 101 events, 100 pins of 1 ms or more and 1 below the default
    threshold)."""
    from load import Load
    jdk = int(jdk)
    props = scheduler(4, 4) if fixture == "Repro" else scheduler(2)
    with Load(quota_pct=30, preempt=2) if loaded else Load() as load:
        r = Run(jdk, fixture, props=props, agent_opts="threshold=0", jfr=True, load=load).run(timeout=240)
    rep = r.report()
    mine = [p for p in pins_in(rep, fixture) if p["reason"] in PARK_REASONS]
    jfr = [e for e in jfr_pinned_events(r.home, r.jfr, rep) if jfr_touches(e, fixture)]
    print("vtpin %d pins, JFR %d events (%s; the sampler late %s time(s))" % (
        len(mine), len(jfr), load.describe(), rep["stats"]["sample_gaps"]))
    check(len(mine) == len(jfr), "count: vtpin %d, JFR %d" % (len(mine), len(jfr)))
    check(len(mine) > 0, "the fixture pins")
    # on 21-23 vtpin's breakpoints sit just outside JFR's begin/commit in the same method
    check_timed_like_jfr(mine, jfr)


def case_native_block(jdk, mode):
    """A JNI method blocking in C never parks: no JVMTI or JFR event. The watchdog sees it. sleeps: one
    call that sleeps 100 ms at a time with 15 ms of CPU between is one block, not one per sleep."""
    jdk = int(jdk)
    r = Run(jdk, "NativeBlock", args=(mode, 2, 1500), props=scheduler(2)).run()
    rep = r.report()
    # the fixture's blocks (the JDK can block briefly in native code of its own under the fixture's frames)
    pins = [p for p in rep["pins"] if native_block_in(p, "NativeBlock")]
    check(len(pins) == 2, "2 NATIVE_BLOCK pins, got %d: %s" % (len(pins), [p["reason"] for p in rep["pins"]]))
    method = {"nanosleep": "blockInNanosleep", "read": "blockInRead", "sleeps": "blockInSleeps"}[mode]
    kernel = {"nanosleep": "nanosleep", "read": "read", "sleeps": "nanosleep"}[mode]
    for p in pins:
        c = culprit(p)
        check(c and c["method"] == method and c["native"], "culprit is the native method: %s" % c)
        check(c["library"] and c["library"].endswith("libvtpinfixture.so"), "with its library: %s" % c)
        check(p["blocking_frame"] is None, "blocked in the native method itself: %s" % p["blocking_frame"])
        check(p["duration_ns"] is not None and p["duration_ns"] >= 1000e6, "blocked ~1.5 s: %s" % p["duration_ns"])
    check(("blocked in %s" % kernel) in r.trace_text() or ("blocked in clock_%s" % kernel) in r.trace_text(),
          "the trace says where the kernel sleeps:\n" + r.trace_text()[:1500])


def case_native_sleeps_attach(jdk):
    """After attach too (no breakpoints: the watchdog alone): one native call that sleeps 100 ms at a
    time with 15 ms of CPU between is one NATIVE_BLOCK."""
    jdk = int(jdk)
    d = tempdir(prefix="vtpin-sleeps-attach-")
    go, rec = os.path.join(d, "go"), os.path.join(d, "a.vtp")
    out = open(os.path.join(d, "stdout.txt"), "w")
    cmd = [os.path.join(jdk_home(jdk), "bin", "java"), "--enable-native-access=ALL-UNNAMED",
           "-Djava.library.path=" + FIXTURE_LIB, "-cp", CLASSES] + scheduler(2) + \
          ["NativeBlock", "sleeps", "2", "1500", go]
    jvm = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_ready(jvm, os.path.join(d, "stdout.txt"), "NativeBlock: ready")
        forget_stale_attach_socket(jvm.pid)
        a = subprocess.run([VTPIN, "attach", str(jvm.pid), "record=%s" % rec], capture_output=True, text=True,
                           timeout=60)
        check(a.returncode == 0, "attach: %s %s" % (a.stdout, a.stderr))
        open(go, "w").close()
        check(jvm.wait(timeout=60) == 0, "the fixture exits 0")
    finally:
        if jvm.poll() is None:
            jvm.kill()
            jvm.wait()
        out.close()
    pins = [p for p in report_json(rec)["pins"] if native_block_in(p, "NativeBlock")]
    check(len(pins) == 2 and all(culprit(p)["method"] == "blockInSleeps" for p in pins),
          "2 NATIVE_BLOCK pins, one per call: %s" % [describe(p) for p in pins])
    check(all(p["duration_ns"] and p["duration_ns"] >= 1000e6 for p in pins), "each ~1.5 s: %s" %
          [p["duration_ns"] for p in pins])


if __name__ == "__main__":
    raise SystemExit(main({
        "native_sleeps_attach": case_native_sleeps_attach,
        "repro": case_repro,
        "waitpin_hang": case_waitpin_hang,
        "waitpin_compensate": case_waitpin_compensate,
        "contended": case_contended,
        "jnisleep": case_jnisleep,
        "jni_contended": case_jni_contended,
        "jni_wait": case_jni_wait,
        "no_pins": case_no_pins,
        "jfr_crosscheck": case_jfr_crosscheck,
        "native_block": case_native_block,
    }))
