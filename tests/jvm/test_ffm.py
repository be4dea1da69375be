#!/usr/bin/env python3
"""FFM (java.lang.foreign) downcalls that pin, on JDK 22+ (final there; preview on 21, not tested).

Each case is one CTest entry: `test_ffm.py CASE JDK`.
- qsort: libc qsort through a downcall, the comparator (an upcall) sleeps: NATIVE pins whose culprit
  is the frame that invoked the downcall handle, marked with the target (qsort, libc.so.6), the
  comparator as the blocking operation, the upcall stub marked.
- marked: downcalls=marked, the same without reading the target.
- jfr: the same at threshold 0, counted against JFR's jdk.VirtualThreadPinned in the same run.
- native_block: usleep through a downcall blocks in C (never parks): the watchdog's NATIVE_BLOCK pin
  names the downcall frame and its target.
- collector: `vtpin top` names the downcall of a carrier blocked in it.
- attach: the qsort fixture with the agent attached: the same culprit, inferred from the stack."""
import functools
import os
import shutil
import signal
import subprocess

from harness import (Run, VTPIN, attach_when_ready, check, check_timed_like_jfr, classpath, culprit, jdk_home,
                     jfr_duration_ns, jfr_pinned_events, jfr_touches, main, pins_in, report_json, scheduler, set_aside,
                     skip, tempdir)


RUNS = []


def cleaning(case):
    """Removes the temp dirs of the case's runs (and collector) when it ends, passed or failed."""
    @functools.wraps(case)
    def run(*args):
        try:
            return case(*args)
        finally:
            for d in RUNS:
                shutil.rmtree(d, ignore_errors=True)
    return run


def tracked(run):
    RUNS.append(run.dir)
    return run


def needs_ffm(jdk):
    jdk = int(jdk)
    if jdk < 22:
        skip("FFM is a preview API on JDK %d; its pins are tested on 22+" % jdk)
    return jdk


def frame_at(pin, key):
    i = pin.get(key)
    return pin["stack"][i] if i is not None and 0 <= i < len(pin["stack"]) else None


def is_monitor_pin(p):
    """The blocking operation is the top frame, a monitor entry above the comparator (not its sleep)."""
    b = frame_at(p, "blocking_frame")
    return p["blocking_frame"] == 0 and b is not None and (b["class"], b["method"]) != ("FfmQsort", "compare")


def check_qsort_pin(p, target_known=True):
    check(p["reason"] == "NATIVE", "reason NATIVE, got %s" % p["reason"])
    c = culprit(p)
    check(c and (c["class"], c["method"]) == ("FfmQsort", "sortInC") and c["kind"] == "java" and not c["native"],
          "the culprit is the frame that invoked the downcall handle, FfmQsort.sortInC: %s" % c)
    dc = c["downcall"]
    check(dc is not None and dc["api"] == "ffm", "the culprit carries the FFM downcall: %s" % c)
    if target_known:
        check(dc["symbol"] == "qsort" and dc["library"] and os.path.basename(dc["library"]) == "libc.so.6",
              "the downcall target is qsort in libc.so.6: %s" % dc)
    b = frame_at(p, "blocking_frame")
    if is_monitor_pin(p):
        # JDK 24+: a contended entry under the comparator (the JDK's own, e.g. a ConcurrentHashMap
        # bin while the first upcalls link their var handles) cannot unmount: the entering frame blocks
        check(any((f["class"], f["method"]) == ("FfmQsort", "compare") for f in p["stack"][1:]),
              "a contended entry under the comparator: %s" % p["stack"][:8])
    else:
        check(b and (b["class"], b["method"]) == ("FfmQsort", "compare"),
              "the blocking operation is the comparator: %s" % b)
    kinds = [f["kind"] for f in p["stack"]]
    down = [i for i, k in enumerate(kinds) if k == "downcall_stub"]
    up = [i for i, k in enumerate(kinds) if k == "upcall_stub"]
    check(down and up and p["blocking_frame"] < up[0] < down[0] < p["culprit"],
          "stack order: comparator, upcall stub, downcall stub, culprit: %s" % kinds)
    check(all(f["downcall"] is None for i, f in enumerate(p["stack"]) if i != p["culprit"]),
          "only the culprit frame carries a downcall")


def case_qsort(jdk):
    jdk = needs_ffm(jdk)
    threads, elements = 4, 3
    r = tracked(Run(jdk, "FfmQsort", args=(threads, elements, 50), props=scheduler(2))).run()
    rep = r.report()
    mine = pins_in(rep, "FfmQsort")
    pins = [p for p in mine if p["reason"] == "NATIVE"]
    # qsort compares at least n-1 times per array: every comparison sleeps 50 ms, far over the threshold
    check(len(pins) >= threads * (elements - 1), "at least %d pins, got %d" % (threads * (elements - 1), len(pins)))
    # The JDK's own linkage of the first upcalls can pin besides, under the same frames: a contended
    # entry or critical section (var handles, class loading) or a wait for another thread's class
    # initialization (VM_BLOCK); seen under load, 1 run in 3
    others = set_aside([p for p in mine if p["reason"] != "NATIVE"], "the JDK's linkage of the first upcalls")
    check(all(p["reason"] in ("MONITOR_ENTER", "CRITICAL_SECTION", "VM_BLOCK") for p in others),
          "only NATIVE pins besides the JDK's linkage: %s" % [p["reason"] for p in others])
    for p in pins:
        check_qsort_pin(p)
    trace = r.trace_text()
    for text in ("FfmQsort.sortInC(FfmQsort.java:52) <== native (FFM downcall qsort, libc.so.6)",
                 "FfmQsort.compare(FfmQsort.java:38) <== blocking operation", "invoke(Unknown Source) <== upcall"):
        check(text in trace, "the trace shows %r:\n%s" % (text, trace[:3000]))
    text = subprocess.run([VTPIN, "report", r.record], capture_output=True, text=True, timeout=60).stdout
    check("#1  FfmQsort.sortInC(FfmQsort.java:52) <== native (FFM downcall qsort, libc.so.6)" in text and
          "blocking operation: FfmQsort.compare(FfmQsort.java:38)" in text,
          "the text report names the site, its target and the blocking operation:\n" + text[:3000])
    site = rep["sites"][0]
    check(site["culprit"]["downcall"] == culprit(pins[0])["downcall"] and
          site["stack"][site["blocking_frame"]]["method"] == "compare", "the site carries them too: %s" % site)


def case_marked(jdk):
    """downcalls=marked: the same culprit and markers, no target, and the locals capability not taken."""
    jdk = needs_ffm(jdk)
    r = tracked(Run(jdk, "FfmQsort", args=(2, 2, 20), props=scheduler(2), agent_opts="downcalls=marked")).run()
    rep = r.report()
    check("access_local_variables" not in rep["jvm"]["capabilities_missing"],
          "not missing: not asked for: %s" % rep["jvm"]["capabilities_missing"])
    mine = pins_in(rep, "FfmQsort")
    pins = [p for p in mine if p["reason"] == "NATIVE"]
    check(len(pins) >= 2, "pins of both threads, got %d" % len(pins))
    # the JDK's own linkage of the first upcalls can pin besides, as in case_qsort
    others = set_aside([p for p in mine if p["reason"] != "NATIVE"], "the JDK's linkage of the first upcalls")
    check(all(p["reason"] in ("MONITOR_ENTER", "CRITICAL_SECTION", "VM_BLOCK") for p in others),
          "only NATIVE pins besides the JDK's linkage: %s" % [p["reason"] for p in others])
    for p in pins:
        check_qsort_pin(p, target_known=False)
        check(culprit(p)["downcall"] == {"api": "ffm", "symbol": None, "library": None}, "target not read: %s" % culprit(p))
    check("FfmQsort.sortInC(FfmQsort.java:52) <== native (FFM downcall, target unknown)" in r.trace_text(),
          "the trace marks the downcall:\n" + r.trace_text()[:2000])


def case_jfr(jdk):
    """Every pin, at threshold 0: vtpin's count agrees with JFR's in the same run, the comparator's
    sleeps and the contended monitor entries under it (JDK 24+: they cannot unmount either), each
    reason against JFR's pinnedReason."""
    jdk = needs_ffm(jdk)
    r = tracked(Run(jdk, "FfmQsort", args=(4, 4, 5), props=scheduler(2), agent_opts="threshold=0",
                    jfr=True)).run(timeout=180)
    rep = r.report()
    mine = pins_in(rep, "FfmQsort")
    events = [e for e in jfr_pinned_events(r.home, r.jfr, rep) if jfr_touches(e, "FfmQsort")]

    def jfr_reason(e):
        return e["values"].get("pinnedReason")

    # JFR names a critical section by the JDK's freeze result 2 (freeze_pinned_cs), or, for a
    # monitor entry inside a class initializer the VM runs, "VM call to X.<clinit> on stack", where
    # the JDK's Continuation.isPinned0 answers the same critical section (a CI run under ASan)
    jfr = [e for e in events if jfr_reason(e) == "Native or VM frame on stack"]
    jfr_cs = [e for e in events if jfr_reason(e) == "Freeze or preempt failed (2)" or
              (jfr_reason(e) or "").startswith("VM call to ")]
    jfr_enter = [e for e in jfr if e["values"].get("blockingOperation") == "Contended monitor enter"]
    native = [p for p in mine if p["reason"] == "NATIVE"]
    cs = [p for p in mine if p["reason"] == "CRITICAL_SECTION"]
    native_enter = [p for p in native if is_monitor_pin(p)]
    print("vtpin %d NATIVE pins (%d monitor entries), %d CRITICAL_SECTION; JFR %d 'Native or VM frame on "
          "stack' (%d contended monitor enter), %d critical section, %d in all" % (
              len(native), len(native_enter), len(cs), len(jfr), len(jfr_enter), len(jfr_cs), len(events)))
    for e in events:
        if e not in jfr or e in jfr_enter:
            top = ((e["values"].get("stackTrace") or {}).get("frames") or [{}])[0].get("method", {})
            print("  JFR %s / %s at %s.%s, %d ns" % (jfr_reason(e), e["values"].get("blockingOperation"),
                                                     top.get("type", {}).get("name"), top.get("name"),
                                                     jfr_duration_ns(e)))
    for p in mine:
        b = frame_at(p, "blocking_frame")
        print("  vtpin %s %s at %s.%s (blocking %s), %d ns" % (
            p["reason"], p["vthread"]["name"], p["stack"][0]["class"], p["stack"][0]["method"],
            b and "%s.%s" % (b["class"], b["method"]), p["duration_ns"]))
    # JDK start-up also waits for class initialization by another thread (JFR's pinnedReason "Waited
    # for initialization of X by another thread"): the watchdog's VM_BLOCK when it lasts two samples
    # (under load: 20 ms, JFR 17 ms), else not seen
    vm = [p for p in mine if p["reason"] == "VM_BLOCK"]
    jfr_init = [e for e in events if (jfr_reason(e) or "").startswith("Waited for initialization")]
    check(len(native) + len(cs) + len(vm) == len(mine),
          "only NATIVE, CRITICAL_SECTION and VM_BLOCK: %s" % [p["reason"] for p in mine])
    check(len(vm) <= len(jfr_init), "VM_BLOCK: vtpin %d, JFR's class initialization waits %d" % (
        len(vm), len(jfr_init)))
    check(len(native) == len(jfr) and native, "NATIVE: vtpin %d, JFR %d" % (len(native), len(jfr)))
    check(len(native_enter) == len(jfr_enter),
          "contended entries under the upcall: vtpin %d, JFR %d" % (len(native_enter), len(jfr_enter)))
    check(len(cs) == len(jfr_cs), "CRITICAL_SECTION: vtpin %d, JFR %d" % (len(cs), len(jfr_cs)))
    for p in native:
        # at threshold 0 the writer may look after a 5 ms pin ended: the target can be unknown, never wrong
        check_qsort_pin(p, target_known=False)
        dc = culprit(p)["downcall"]
        check(dc["symbol"] in ("qsort", None), "target qsort or unknown: %s" % dc)
    for p in cs:
        # e.g. a contended entry while the JDK initializes a class (its critical section) for the upcall
        # the monitor entry (frame 0) blocks: named as the blocking operation, or as the culprit
        # itself when the entry is in the critical section's own native frame (a CI run under ASan:
        # Unsafe.ensureClassInitialized0, blocking_frame None, as JFR's "Contended monitor enter" there)
        check(p["blocking_frame"] == 0 or (p["blocking_frame"] is None and p["culprit"] == 0),
              "a critical section's monitor entry is the blocking operation (culprit %s, blocking %s): %s" %
              (p["culprit"], p["blocking_frame"], p["stack"][:6]))
    # the same pins timed twice: JFR from the freeze failure to its commit, vtpin from the entry of
    # parkOnCarrierThread to its return, just after each
    check_timed_like_jfr(native, jfr)
    # critical sections only happen to occur (the JDK's own class initialization), 0 to 2 a run: too
    # few for a median, so they are matched to JFR's without their durations
    check_timed_like_jfr(cs, jfr_cs, median_ns=None)


def case_native_block(jdk):
    """usleep through FFM never parks: no JVMTI or JFR event; the watchdog names the downcall."""
    jdk = needs_ffm(jdk)
    r = tracked(Run(jdk, "FfmSleep", args=(2, 1500), props=scheduler(2))).run()
    rep = r.report()
    # the fixture's blocks, by culprit: the JDK may block briefly in native code of its own under them
    pins = [p for p in pins_in(rep, "FfmSleep")
            if p["reason"] == "NATIVE_BLOCK" and (culprit(p) or {}).get("method") == "sleepInC"]
    check(len(pins) == 2, "2 NATIVE_BLOCK pins, got %d: %s" % (len(pins), [p["reason"] for p in rep["pins"]]))
    for p in pins:
        c = culprit(p)
        check(c and (c["class"], c["method"]) == ("FfmSleep", "sleepInC"), "culprit is the downcall's caller: %s" % c)
        dc = c["downcall"]
        check(dc and dc["api"] == "ffm" and dc["symbol"] == "usleep" and os.path.basename(dc["library"] or "") == "libc.so.6",
              "target usleep in libc.so.6: %s" % dc)
        check(p["blocking_frame"] is None, "nothing above the downcall blocks: %s" % p["blocking_frame"])
        check(p["blocked_in"] and "nanosleep" in p["blocked_in"], "the kernel says nanosleep: %s" % p["blocked_in"])
        check(p["duration_ns"] is not None and p["duration_ns"] >= 1000e6, "blocked ~1.5 s: %s" % p["duration_ns"])
    check("FfmSleep.sleepInC(FfmSleep.java:28) <== native (FFM downcall usleep, libc.so.6)" in r.trace_text(),
          "the trace marks the downcall:\n" + r.trace_text()[:2000])


def case_collector(jdk):
    """`vtpin top` through the collector, while two carriers are blocked in usleep: the culprit
    says it is an FFM downcall and names its target."""
    jdk = needs_ffm(jdk)
    from test_collector import Collector, streaming
    coll = Collector().start()
    RUNS.append(coll.dir)
    r = tracked(streaming(jdk, coll, "FfmSleep", args=(2, 3000), props=scheduler(2))).start()
    try:
        for c in coll.native_blocks(r.proc.pid, 2):
            check(c["reason"] == "NATIVE_BLOCK" and c["culprit"].startswith("FfmSleep.sleepInC(") and
                  c["culprit"].endswith("<== native (FFM downcall usleep, libc.so.6)"), "culprit: %s" % c)
        r.wait(60)
    finally:
        r.kill()
        coll.kill(signal.SIGTERM)


def case_attach(jdk):
    """Attached to a running JVM (no breakpoints, no locals): the pins are found by sampling and the
    culprit inferred from the stack; the downcall is marked, its target unknown."""
    jdk = needs_ffm(jdk)
    home = jdk_home(jdk)
    d = tempdir(prefix="vtpin-ffm-attach-")
    RUNS.append(d)
    record, trace = os.path.join(d, "a.vtp"), os.path.join(d, "t.txt")
    cmd = [os.path.join(home, "bin", "java"), "--enable-native-access=ALL-UNNAMED", "-cp", classpath(jdk)] + \
        scheduler(2) + ["FfmQsort", "2", "3", "100", "--ready"]
    attach_when_ready(cmd, "FfmQsort", d, "record=%s,tracefile=%s" % (record, trace))
    rep = report_json(record)
    check(rep["jvm"]["mode"] == "attach", "attach mode: %s" % rep["jvm"])
    check("access_local_variables" in rep["jvm"]["capabilities_missing"],
          "says it cannot read the downcall target after attach: %s" % rep["jvm"]["capabilities_missing"])
    # The JDK's own linkage of the first upcalls can pin besides, as in case_qsort: a contended entry
    # inside its critical sections (JFR: "Freeze or preempt failed"), or a wait for another thread's
    # class initialization (VM_BLOCK: seen under load); not this test's subject
    mine = pins_in(rep, "FfmQsort")
    pins = [p for p in mine if p["reason"] == "NATIVE"]
    others = set_aside([p for p in mine if p["reason"] != "NATIVE"], "the JDK's linkage of the first upcalls")
    check(all(p["reason"] in ("MONITOR_ENTER", "CRITICAL_SECTION", "VM_BLOCK") for p in others),
          "only NATIVE pins besides the JDK's linkage: %s" % [p["reason"] for p in others])
    # 2 threads x at least 2 comparisons of 100 ms; comparisons back to back look like one pin to
    # the 10 ms sampler (the thread never leaves parkOnCarrierThread for a whole sample)
    check(len(pins) >= 2 and len({p["vthread"]["id"] for p in pins}) == 2,
          "pins of both threads found by sampling, got %d" % len(pins))
    for p in pins:
        check_qsort_pin(p, target_known=False)
        check(culprit(p)["downcall"] == {"api": "ffm", "symbol": None, "library": None}, "target unknown after attach")
    with open(trace) as f:
        check("<== native (FFM downcall, target unknown)" in f.read(), "the trace marks the downcall")


if __name__ == "__main__":
    raise SystemExit(main({name: cleaning(case) for name, case in {
        "qsort": case_qsort,
        "marked": case_marked,
        "jfr": case_jfr,
        "native_block": case_native_block,
        "collector": case_collector,
        "attach": case_attach,
    }.items()}))
