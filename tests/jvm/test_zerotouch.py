"""Zero-touch (docs/zero-touch.md): `vtpin collector --jvms=all` finds the pins of JVMs that run
with no agent, from the kernel view alone (root, BTF).

Each case starts the real collector, then a real JVM with no agent that waits at a gate
(ZeroTouch's goFile, NativeBlock's) until the collector says it watches it, and reads what
the collector reports: status, top, metrics and the recording it writes. No case sleeps to
synchronise: each waits on a condition, against a deadline.
"""
import glob
import os
import re
import shutil
import sys

from collector_fixture import CollectorProcess
from harness import (Run, check, check_timed_like_jfr, describe, jfr_duration_ns, jfr_pinned_events,
                     main, report_clock_offset, report_json, scheduler, skip, tempdir, wait_ready)
from test_kernel import need_kernel_view
from test_metrics import samples, select
from test_collector_daemon import event_fields, split_frames
from test_pprof import go_pprof

# -v: the collector logs each interval that starts or ends a zero-touch pin (zt_trace)
JVMS_ALL = ["--kernel=on", "--jvms=all", "-v"]
# The collector's --kernel-min: the shortest off-CPU interval its kernel view keeps.
KERNEL_MIN_NS = 1_000_000


class Collector(CollectorProcess):
    """A collector with /metrics, in a fresh temporary directory: its args say --jvms=all, or (none) it
    runs with the collector's own default."""

    def __init__(self, args=()):
        super().__init__(tempdir(prefix="vtpin-zt-collector-"), *args, metrics="127.0.0.1:0", jvms=None)

    def recordings(self):
        return sorted(glob.glob(os.path.join(self.sessions, "*")))

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def watched(coll, pid):
    """The collector's zero-touch entry of JVM pid once it has one, else None."""
    zt = coll.status()["collector"]["zero_touch"]
    return next((j for j in zt["jvms"] if j["pid"] == pid), None)


def start_gated(jdk, coll, fixture, args, go, marker, props=(), jfr=False):
    """Starts fixture (no agent) and waits until it reached its gate and the collector watches it."""
    r = Run(jdk, fixture, args=args, props=props, jfr=jfr, agent=False).start()
    wait_ready(r.proc, os.path.join(r.dir, "stdout.txt"), marker)
    j = coll.wait_for(lambda: watched(coll, r.proc.pid), lambda j: j is not None and j["state"] != "starting")
    check(j["state"] in ("watching", "session"), "the collector watches the JVM: %s" % j)
    r.watch = j  # its zero-touch entry in status, as the gate opened
    open(go, "w").close()
    return r


def finish(coll, r, timeout=120):
    """Waits for r's JVM to exit and for the collector to see it gone (it forgets the JVM, and closes
    its session if it had one); its recording's report."""
    r.wait(timeout)
    coll.wait_for(lambda: coll.status(),
                  lambda s: not [j for j in s["collector"]["zero_touch"]["jvms"] if j["pid"] == r.proc.pid] and
                  not [j for j in s["jvms"] if j["pid"] == r.proc.pid and j["connected"]])
    recs = [p for p in coll.recordings() if os.path.basename(p).startswith("%d-" % r.proc.pid)]
    check(len(recs) <= 1, "at most one recording of the JVM: %s" % recs)
    return report_json(recs[0]) if recs else None


def zt_trace(coll, pid):
    """The collector's log of process pid in zero-touch, for a failure's message: when it was seen to
    begin to run java and when it was watched (or why not), each interval that started or ended a
    pin, and any pin the JVM exited in (with -v)."""
    return "\n".join(line for line in coll.log().splitlines()
                     if "zero-touch: " in line and ("pid %d " % pid in line or "pid %d:" % pid in line))


def kernel_pins(rep):
    return [p for p in rep["pins"]] if rep else []


def lasted(p, ns):
    """The pin ended, and lasted at least ns (a pin with no end in the recording fails the check by its
    message, not by a TypeError: seen once under ASan, zt_jni)."""
    return p["duration_ns"] is not None and p["duration_ns"] >= ns


def check_sleeps_like_jfr(r, rep, pins, sleeps, ms):
    """The pins are JFR's pins of the fixture's sleeps in the same run, one to one: per virtual thread
    as many, each overlapping its event and no other (check_timed_like_jfr without durations: these
    cases run beside others, and zt_monitor, alone, compares the durations). Not a floor on each pin's
    length: a sleep's deadline runs from the JDK's parkNanos, and what it does before the carrier falls
    asleep (its failed yield, the unparker it schedules) comes off the park when the carrier waits for
    the CPU or the VM meanwhile (zt_jni under ASan beside a busy loop: one park of a 100 ms sleep
    86.6 ms, begun 14 ms after its virtual thread mounted, where a floor of 90 ms failed it). JFR's
    events of those sleeps are those of at least half a sleep; its shorter ones are the JDK's own
    (class loading), which the kernel view need not see under --kernel-min."""
    every = jfr_pinned_events(r.home, r.jfr, rep)
    events = [e for e in every if jfr_duration_ns(e) >= ms * 1_000_000 // 2]
    print("JFR's shorter pins, not compared: %s" % [(e["values"]["eventThread"]["javaThreadId"], jfr_duration_ns(e))
                                                    for e in every if jfr_duration_ns(e) < ms * 1_000_000 // 2])
    check(len(events) == sleeps, "JFR saw the %d sleeps pin: %d" % (sleeps, len(events)))
    check_timed_like_jfr(pins, events, median_ns=None)


def case_monitor(jdk):
    """JDK 21, no agent: 40 virtual threads each sleep 150 ms inside synchronized (a pin each).
    The collector reports 40 pins of this JVM, each a park on its carrier, MONITOR as the JVM's
    held-monitor count says (JFR says the same), each timed like JFR's jdk.VirtualThreadPinned event
    of the same pin in the same run. The collector runs with no --jvms option: zero-touch is its
    default where the kernel view is on."""
    need_kernel_view()
    jdk = int(jdk)
    coll = Collector(["--kernel=on"]).start()
    try:
        go = os.path.join(tempdir(prefix="vtpin-zt-"), "go")
        r = start_gated(jdk, coll, "ZeroTouch", ("monitor", go, 40, 150), go, "ZeroTouch: ready", props=scheduler(2),
                        jfr=True)
        how = r.watch["park_reasons"]
        check(how.startswith("read: a critical section") and "monitors held" in how,
              "status says how a park's reason is read: %s" % how)
        rep = finish(coll, r)
        pins = kernel_pins(rep)
        for p in pins[:3]:
            print("pin: %s" % describe(p))
        check(rep is not None and rep["jvm"]["mode"] == "kernel", "a kernel session: %s" %
              (rep and rep["jvm"]))
        # JFR's pins of the 40 sleeps (its threshold is 0: a JDK-internal pin under --kernel-min, which the
        # kernel view cannot see, is not one of them)
        every = jfr_pinned_events(r.home, r.jfr, rep)
        events = [e for e in every if jfr_duration_ns(e) >= 100_000_000]
        print("JFR's shorter pins, not compared: %s" % [(e["values"]["eventThread"]["javaThreadId"], jfr_duration_ns(e))
                                                        for e in every if jfr_duration_ns(e) < 100_000_000])
        theirs = {e["values"]["eventThread"]["javaThreadId"] for e in events}
        mine = {p["vthread"]["id"]: p["duration_ns"] for p in pins}
        check(len(pins) == 40 and len(mine) == 40,
              "40 pins, one per sleep: %d; JFR's virtual threads the collector has no pin of: %s; its pins by carrier: "
              "%s" % (len(pins), sorted(theirs - set(mine)),
                      sorted((p["carrier"]["tid"], p["start_ns"], p["duration_ns"], p["vthread"]["id"]) for p in pins)))
        for p in pins:
            check(p["reason"] == "MONITOR" and p["vthread"]["id"] > 0 and p["carrier"]["tid"] > 0 and
                  lasted(p, 1), "a park on its carrier, holding a monitor: %s" % describe(p))
        check(len(events) == 40, "JFR saw the same 40: %d" % len(events))
        for e in events:
            vt = e["values"]["eventThread"]["javaThreadId"]
            check(vt in mine, "JFR's pin of virtual thread %d is one of the collector's" % vt)
        # Timed as JFR's (not each at least so long: check_sleeps_like_jfr says why), by the harness's
        # one rule: each pin overlaps its event and no other, and the median difference is within 2 ms.
        # Not each pin: JFR begins its event before the park, the kernel times the sleep, and a carrier
        # that loses the CPU between the two makes that one pin differ (ci58, ASan stage: one of 40 was
        # 2.4 ms shorter than JFR's, the other 39 within 2 ms).
        check_timed_like_jfr(pins, events)
        st = coll.status()
        jv = [j for j in st["jvms"] if j["pid"] == r.proc.pid][0]
        check(jv["pins_total"] == 40 and jv["mode"] == "kernel", "status: %s" % {k: jv.get(k) for k in
                                                                              ("pins_total", "mode", "pid")})
        info = [l for l in coll.scrape().splitlines() if l.startswith('vtpin_jvm_info{jvm="%d",' % r.proc.pid)]
        check(len(info) == 1 and 'source="kernel"' in info[0] and 'java_version="21.' in info[0],
              "the JVM in /metrics, its pins from the kernel: %s" % info)
    finally:
        coll.cleanup()


def case_unmounted(jdk):
    """No agent, virtual threads that sleep holding a ReentrantLock (they unmount): the collector
    watches the JVM and reports no pin, and no session of it."""
    need_kernel_view()
    jdk = int(jdk)
    coll = Collector(JVMS_ALL).start()
    try:
        go = os.path.join(tempdir(prefix="vtpin-zt-"), "go")
        r = start_gated(jdk, coll, "ZeroTouch", ("unmounted", go, 40, 100), go, "ZeroTouch: ready",
                        props=scheduler(2))
        rep = finish(coll, r)
        check(rep is None, "no session for a JVM that never pinned: %s" % (rep and rep["pins"][:3]))
        check(not [j for j in coll.status()["jvms"] if j["pid"] == r.proc.pid], "not listed as a JVM with pins")
    finally:
        coll.cleanup()


def case_reasons(jdk):
    """JDK 21, no agent: Object.wait inside synchronized is OBJECT_WAIT, a contended entry is
    MONITOR_ENTER (the holder's own sleep is a park holding the monitor: MONITOR)."""
    need_kernel_view()
    jdk = int(jdk)
    coll = Collector(JVMS_ALL).start()
    try:
        d = tempdir(prefix="vtpin-zt-")
        go = os.path.join(d, "go-wait")
        r = start_gated(jdk, coll, "ZeroTouch", ("wait", go, 8, 100), go, "ZeroTouch: ready", props=scheduler(2))
        pins = kernel_pins(finish(coll, r))
        check(len(pins) == 8 and all(p["reason"] == "OBJECT_WAIT" for p in pins),
              "8 OBJECT_WAIT pins: %s\nthe collector's log:\n%s" % ([describe(p) for p in pins],
                                                                   zt_trace(coll, r.proc.pid)))
        go = os.path.join(d, "go-contended")
        r = start_gated(jdk, coll, "ZeroTouch", ("contended", go, 6, 100), go, "ZeroTouch: ready",
                        props=scheduler(2))
        pins = kernel_pins(finish(coll, r))
        reasons = sorted(set(p["reason"] for p in pins))
        check("MONITOR_ENTER" in reasons and set(reasons) <= {"MONITOR_ENTER", "MONITOR"},
              "contended entries: %s" % [describe(p) for p in pins])
    finally:
        coll.cleanup()


def case_native_block(jdk):
    """No agent, two virtual threads that sleep 2 s in C (NativeBlock): two NATIVE_BLOCK pins, in
    nanosleep, each with the native frames read while it lasted (unwound from outside by the modules'
    call frame information: ustack.h), down to the JNI function that blocks, its culprit: the fixture's
    library and Java_NativeBlock_blockInNanosleep are named. (2 s: a block is seen in progress within a
    second on a thread that never carried before, docs/zero-touch.md; a second more for a loaded CI.)"""
    need_kernel_view()
    jdk = int(jdk)
    coll = Collector(JVMS_ALL).start()
    try:
        go = os.path.join(tempdir(prefix="vtpin-zt-"), "go")
        r = start_gated(jdk, coll, "NativeBlock", ("nanosleep", 2, 2000, go), go, "NativeBlock: ready",
                        props=scheduler(2))
        rep = finish(coll, r)
        pins = kernel_pins(rep)
        check(len(pins) == 2 and all(p["reason"] == "NATIVE_BLOCK" and "nanosleep" in (p["blocked_in"] or "")
                                     for p in pins),
              "two NATIVE_BLOCK pins in nanosleep: %s" % [describe(p) for p in pins])
        for p in pins:
            stack, c = p["stack"] or [], p["culprit"]
            top = stack[c] if c is not None and c < len(stack) else {}
            check(top.get("method") == "Java_NativeBlock_blockInNanosleep" and
                  top.get("class") == "libvtpinfixture.so" and (top.get("library") or "").endswith("/libvtpinfixture.so"),
                  "the culprit is the JNI function, in its library: %s" % (stack,))
            check(c == len(stack) - 1 and any("nanosleep" in f["method"] for f in stack[:c]),
                  "the frames from the sleep in libc down to it: %s" % [(f["class"], f["method"]) for f in stack])
        # the two blocks are one stack, defined once (a block that recurs does not define it again)
        rec = [f for f in coll.recordings() if os.path.basename(f).startswith("%d-" % r.proc.pid)][0]
        with open(rec, "rb") as f:
            defs = [e for e in split_frames(f.read()) if 4 in event_fields(e[4:])]  # Event.stack: StackDef
        check(len(defs) == 1, "one StackDef for the two blocks of one stack: %d" % len(defs))
        if jdk != 21:
            return  # the profile's path is the same on every JDK: go tool pprof once (the suite's time)
        # the pinned profile has them too, under the JVM
        raw = go_pprof(["-raw", "-unit=ns", "http://127.0.0.1:%d/debug/pprof/pinned?seconds=60" % coll.port],
                       tempdir(prefix="vtpin-zt-pprof-"))
        check("pid:[%d]" % r.proc.pid in raw and "Java_NativeBlock_blockInNanosleep" in raw,
              "/debug/pprof/pinned names the JNI function:\n" + raw[:3000])
    finally:
        coll.cleanup()


def case_jni(jdk):
    """No agent, virtual threads in a JNI method that calls back into Java, which sleeps: the native
    frame pins on every JDK. Without the agent it is a park on its carrier: NATIVE, as the JVM's counts
    say (held monitors and pin count 0: a frame the freeze could not take); status says how they are
    read."""
    need_kernel_view()
    jdk = int(jdk)
    coll = Collector(JVMS_ALL).start()
    try:
        go = os.path.join(tempdir(prefix="vtpin-zt-"), "go")
        r = start_gated(jdk, coll, "ZeroTouch", ("jni", go, 8, 100), go, "ZeroTouch: ready", props=scheduler(2),
                        jfr=True)
        how = r.watch["park_reasons"]
        want = "NATIVE"
        check(how.startswith("read"), "status says how a park's reason is read: %s" % how)
        rep = finish(coll, r)
        pins = kernel_pins(rep)
        check(len(pins) == 8 and all(p["reason"] == want and lasted(p, 1) for p in pins),
              "8 parks on their carriers, %s (reason, carrier, virtual thread, start, duration): %s\nthe collector's "
              "log:\n%s" % (want, sorted((p["reason"], p["carrier"]["tid"], p["vthread"]["id"], p["start_ns"],
                                           p["duration_ns"]) for p in pins), zt_trace(coll, r.proc.pid)))
        check_sleeps_like_jfr(r, rep, pins, 8, 100)
    finally:
        coll.cleanup()


def case_critical(jdk):
    """No agent, virtual threads that sleep inside a continuation critical section (Continuation.pin):
    each park on its carrier is a CRITICAL_SECTION pin, as the JDK's freeze decided; this proves the
    pin count's offset, which the other fixtures leave at 0. Status names where the offsets came from:
    JVMCI's VM structs, checked against Continuation::pin's machine code, where the build has them (25,
    26), else that code alone (21, 27)."""
    need_kernel_view()
    jdk = int(jdk)
    coll = Collector(JVMS_ALL).start()
    try:
        go = os.path.join(tempdir(prefix="vtpin-zt-"), "go")
        r = start_gated(jdk, coll, "ZeroTouch", ("critical", go, 4, 100), go, "ZeroTouch: ready",
                        props=scheduler(2) + ["--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED"], jfr=True)
        how = r.watch["park_reasons"]
        source = ("from JVMCI's VM structs, which the machine code of Continuation::pin agrees with" if jdk in (25, 26)
                  else "from the machine code of Continuation::pin")
        check(how.startswith("read: a critical section") and source in how, "status: the pin count is read, %s: %s"
              % (source, how))
        rep = finish(coll, r)
        pins = kernel_pins(rep)
        check(len(pins) == 4 and all(p["reason"] == "CRITICAL_SECTION" and lasted(p, 1) for p in pins),
              "4 CRITICAL_SECTION pins: %s\nthe collector's log:\n%s" % ([describe(p) for p in pins],
                                                                        zt_trace(coll, r.proc.pid)))
        check_sleeps_like_jfr(r, rep, pins, 4, 100)
    finally:
        coll.cleanup()


def case_before(jdk):
    """A JVM that was running before the collector started is found at its start, and its pins too."""
    need_kernel_view()
    jdk = int(jdk)
    go = os.path.join(tempdir(prefix="vtpin-zt-"), "go")
    r = Run(jdk, "ZeroTouch", args=("jni", go, 8, 100), props=scheduler(2), agent=False).start()
    coll = None
    try:
        wait_ready(r.proc, os.path.join(r.dir, "stdout.txt"), "ZeroTouch: ready")
        coll = Collector(JVMS_ALL).start()
        j = coll.wait_for(lambda: watched(coll, r.proc.pid), lambda j: j is not None)
        check(j["state"] == "watching" and j["app"] == "ZeroTouch", "watched from the collector's start: %s" % j)
        open(go, "w").close()
        pins = kernel_pins(finish(coll, r))
        check(len(pins) == 8, "its 8 pins: %s" % [describe(p) for p in pins])
    finally:
        r.kill()
        if coll:
            coll.cleanup()


def case_first_second(jdk):
    """A JVM that pins at once, in its first half second: every pin is found. The kernel view tells
    the collector of a process that begins to run java, and the collector looks at it every 10 ms
    until it is a JVM (with only the look at /proc every second, 5 runs found none of the 8 pins).
    Each of the 8 virtual threads sleeps once: one pin for each that JFR saw park for --kernel-min
    or longer (a carrier born before the JVM was watched is tracked asleep, and its first pin timed
    from then: no duration is checked). A sleep whose thread got the CPU 60 ms late parks only for
    what is left: under a 4 % CPU quota JFR had a pin of 1.9 us for one of them, which no kernel view
    sees, 1 run in 8."""
    need_kernel_view()
    jdk = int(jdk)
    coll = Collector(JVMS_ALL).start()
    try:
        check(coll.status()["collector"]["zero_touch"]["finds_starting"], "the kernel tells of starting JVMs")
        go = os.path.join(tempdir(prefix="vtpin-zt-"), "go")
        open(go, "w").close()  # no gate: it pins as soon as main runs
        r = Run(jdk, "ZeroTouch", args=("monitor", go, 8, 60), props=scheduler(2), agent=False, jfr=True).start()
        rep = finish(coll, r)
        pins = kernel_pins(rep)
        events = [e for e in jfr_pinned_events(r.home, r.jfr, rep)
                  if (e["values"]["eventThread"].get("javaName") or "").startswith("zt-")]
        seen = sorted(e["values"]["eventThread"]["javaThreadId"] for e in events if jfr_duration_ns(e) >= KERNEL_MIN_NS)
        print("JFR's parks shorter than %d ns, which no kernel view sees: %s" % (
            KERNEL_MIN_NS, [(e["values"]["eventThread"]["javaThreadId"], jfr_duration_ns(e)) for e in events
                            if jfr_duration_ns(e) < KERNEL_MIN_NS]))
        check(len(events) >= 8 and len(seen) >= 1, "JFR saw the 8 virtual threads park: %d parks, %d of %d ns or more"
              % (len(events), len(seen), KERNEL_MIN_NS))
        check(sorted(p["vthread"]["id"] for p in pins) == seen and all(lasted(p, 1) for p in pins),
              "its pins, from its first, one for each virtual thread JFR saw park (%s): %s\nthe collector's log:\n%s" %
              (seen, ["vt %s %s" % (p["vthread"]["id"], describe(p)) for p in pins], zt_trace(coll, r.proc.pid)))
    finally:
        coll.cleanup()


def case_in_progress(jdk):
    """JDK 21, no agent: two carriers pinned for 3 s each. While they are, status counts two pins in
    progress, top shows both carriers pinned (a hang shows as it happens, not after), and the
    starvation alert is raised, in status and in the metrics. Once they ended, /debug/pprof/pinned
    holds the JVM's pinned time, exactly the recording's, under the pin's reason."""
    need_kernel_view()
    jdk = int(jdk)
    coll = Collector(JVMS_ALL + ["--alert-after", "200ms"]).start()
    try:
        go = os.path.join(tempdir(prefix="vtpin-zt-"), "go")
        r = start_gated(jdk, coll, "ZeroTouch", ("monitor", go, 2, 3000), go, "ZeroTouch: ready", props=scheduler(2))

        def pinned_carriers(top):
            return [c for jv in top["jvms"] if jv["pid"] == r.proc.pid for c in jv["carriers"]
                    if c["state"] == "pinned"]
        top = coll.wait_for(coll.top, lambda t: len(pinned_carriers(t)) == 2)
        print("carriers while pinned: %s" % pinned_carriers(top))
        jv = [j for j in coll.status()["jvms"] if j["pid"] == r.proc.pid][0]
        check(jv["pins_in_progress"] == 2 and jv["connected"], "two pins in progress: %s" %
              {k: jv.get(k) for k in ("pins_in_progress", "pins_total", "connected")})
        # the starvation alert: both carriers held for longer than --alert-after (the pins last 3 s)
        st = coll.wait_for(coll.status, lambda s: any(j["pid"] == r.proc.pid and (j["alert"] or {}).get("active")
                                                     for j in s["jvms"]))
        print("alert: %s" % [j["alert"] for j in st["jvms"] if j["pid"] == r.proc.pid])
        alert = select(samples(coll.scrape()), "vtpin_starvation_alert", jvm=r.proc.pid)
        check([v for _, v in alert] == [1], "the alert gauge of the JVM: %s" % alert)
        rep = finish(coll, r)
        pins = kernel_pins(rep)
        check(len(pins) == 2 and all(lasted(p, 2_900_000_000) for p in pins),
              "two 3 s pins: %s" % [describe(p) for p in pins])
        # the pprof profile: the same pinned time as the recording, to the nanosecond, labelled with the JVM
        home = tempdir(prefix="vtpin-zt-pprof-")
        base = "http://127.0.0.1:%d/debug/pprof/pinned" % coll.port
        raw = go_pprof(["-raw", "-unit=ns", base + "?seconds=60"], home)
        want = sum(p["duration_ns"] for p in pins)
        # each sample's values, then its labels on the next line (the host's other JVMs are watched too)
        got = [int(m.group(1)) for m in re.finditer(r"^\s*(\d+)\s+\d+\s+\d+: .*\n\s+(.*)$", raw, re.M)
               if "pid:[%d]" % r.proc.pid in m.group(2)]
        print("go tool pprof -raw:\n%s" % raw[:1500])
        check("pid:[%d]" % r.proc.pid in raw and "app:[ZeroTouch]" in raw and "reason:[MONITOR]" in raw and
              "[no stack: MONITOR]" in raw, "labels name the JVM, the stack the reason:\n" + raw[:3000])
        check(sum(got) == want, "pprof's pinned ns %s add up to the recording's %d" % (got, want))
    finally:
        coll.cleanup()


def jvm_child(pid):
    """The pid of the java process below pid (unshare's child), or None."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = [int(k) for k in f.read().split()]
    except OSError:
        return None
    for k in kids:
        try:
            if os.readlink("/proc/%d/exe" % k).endswith("/java"):
                return k
        except OSError:
            pass
        deeper = jvm_child(k)
        if deeper:
            return deeper
    return None


def case_container(jdk):
    """A JVM in a pid namespace of its own (pid 1 there): found by its host pid, its threads mapped to
    the host's, its pins reported and its recording named by the host pid."""
    need_kernel_view()
    if not shutil.which("unshare"):
        skip("unshare (util-linux) not installed")
    jdk = int(jdk)
    coll = Collector(JVMS_ALL).start()
    try:
        go = os.path.join(tempdir(prefix="vtpin-zt-"), "go")
        r = Run(jdk, "ZeroTouch", args=("jni", go, 8, 100), props=scheduler(2), agent=False)
        r.cmd = ["unshare", "-p", "-f", "--mount-proc"] + r.cmd
        r.start()
        wait_ready(r.proc, os.path.join(r.dir, "stdout.txt"), "ZeroTouch: ready")
        host_pid = jvm_child(r.proc.pid)
        check(host_pid is not None, "the JVM below unshare")
        j = coll.wait_for(lambda: watched(coll, host_pid), lambda j: j is not None)
        check(j["state"] == "watching", "watched by its host pid: %s" % j)
        open(go, "w").close()
        r.wait(60)
        coll.wait_for(lambda: coll.status(),
                      lambda s: any(j["pid"] == host_pid and not j["connected"] for j in s["jvms"]))
        recs = [p for p in coll.recordings() if os.path.basename(p).startswith("%d-" % host_pid)]
        check(len(recs) == 1, "its recording, named by its host pid: %s" % coll.recordings())
        rep = report_json(recs[0])
        check(rep["jvm"]["pid"] == 1, "pid 1 in its own namespace: %s" % rep["jvm"])
        check(len(rep["pins"]) == 8 and all(p["carrier"]["tid"] > 0 for p in rep["pins"]),
              "its 8 pins: %s" % [describe(p) for p in rep["pins"]])
    finally:
        r.kill()
        coll.cleanup()


def check_refused(coll, r, go, words):
    """r's JVM, at its gate: the collector gives up on it, saying words in why; then, once it ran
    its pins, nothing was reported of it."""
    wait_ready(r.proc, os.path.join(r.dir, "stdout.txt"), "ZeroTouch: ready")
    j = coll.wait_for(lambda: watched(coll, r.proc.pid), lambda j: j is not None)
    print("zero-touch entry: %s" % j)
    check(j["state"] == "gave_up" and words in (j["why"] or ""), "it says why: %s" % j)
    open(go, "w").close()
    check(finish(coll, r) is None, "nothing reported of it")


def case_unverified(jdk):
    """A JVM whose threads cannot be read right (ZGC moves thread objects while the JVM runs, and a
    sleeping carrier's handle goes on naming the old copy): listed with why, and nothing false
    reported while it pins."""
    need_kernel_view()
    jdk = int(jdk)
    coll = Collector(JVMS_ALL).start()
    try:
        go = os.path.join(tempdir(prefix="vtpin-zt-"), "go")
        r = Run(jdk, "ZeroTouch", args=("monitor", go, 8, 100), agent=False,
                props=scheduler(2) + ["-XX:+UseZGC"] + (["-XX:+ZGenerational"] if jdk < 24 else []))
        # ZGC's heap views do not start beside the ASan runtime a sanitized test run preloads into every
        # process: this JVM has no agent, so it runs without it (the collector keeps it)
        r.cmd = ["env", "-u", "LD_PRELOAD"] + r.cmd
        r.start()
        check_refused(coll, r, go, "not verified")
    finally:
        coll.cleanup()


def case_untrusted(jdk):
    """A JVM whose libjvm.so another user owns (here a copy owned by nobody, bind-mounted over the
    JDK's in the JVM's own mount namespace): the root collector does not parse a file its owner could
    change as it is read, says so, and reports nothing of it."""
    need_kernel_view()
    if not shutil.which("unshare"):
        skip("unshare (util-linux) not installed")
    jdk = int(jdk)
    d = tempdir(prefix="vtpin-zt-")
    go = os.path.join(d, "go")
    r = Run(jdk, "ZeroTouch", args=("jni", go, 2, 50), props=scheduler(2), agent=False)
    libjvm = os.path.join(r.home, "lib", "server", "libjvm.so")
    copy = os.path.join(d, "libjvm.so")
    shutil.copyfile(libjvm, copy)
    os.chmod(copy, 0o755)
    os.chown(copy, 65534, 65534)
    os.chmod(d, 0o755)
    # unshare and sh exec in place: the JVM keeps the pid the test started
    r.cmd = ["unshare", "-m", "sh", "-c", 'mount --bind "$1" "$2" && shift 2 && exec "$@"', "sh", copy, libjvm] + r.cmd
    coll = Collector(JVMS_ALL).start()
    try:
        r.start()
        check_refused(coll, r, go, "owned by uid 65534")
    finally:
        r.kill()
        coll.cleanup()



def case_attach_on_pin(jdk):
    """JDK 21, --attach-on-pin: the kernel finds the first pins of a JVM with no agent, the collector
    loads the agent into it (vtpin attach), and the later pins come from the agent, with stacks and
    culprits. The layout the agent's Hello gives agrees with the one the collector read from outside.
    Each of the 40 virtual threads sleeps once, and every park of that sleep is one pin of one of
    the two sessions (JFR, recording from the start, says how many parks each thread made: JDK 21's
    sleep parks again for what is left when a park returns early), except a park in progress
    during the handover (from the attach's start to the agent's Hello): the agent may report it
    again, and the collector counts such parks (pins_handed_over; seen: 4 + 38 pins for 40 sleeps
    before pins that ended during the handover were counted)."""
    need_kernel_view()
    jdk = int(jdk)
    go = os.path.join(tempdir(prefix="vtpin-zt-"), "go")
    # only into this test's JVM (its gate file is on its command line): a neighbour test's JVM that pins,
    # on the same host, is none of its business (ci3: the ASan agent attached into exact_tomcat_kernel's
    # JVM, which then failed to start: "ASan runtime does not come first")
    coll = Collector(JVMS_ALL + ["--attach-on-pin", "--attach-only=*%s*" % go]).start()
    try:
        r = start_gated(jdk, coll, "ZeroTouch", ("monitor", go, 40, 150), go, "ZeroTouch: ready",
                        props=scheduler(2), jfr=True)
        # its zero-touch entry once the agent took over (what it counts is final then), read while the JVM
        # runs: the collector forgets a JVM that exited (seen under ASan: gone before the sessions were)
        zt = coll.wait_for(lambda: watched(coll, r.proc.pid), lambda j: j is not None and j["state"] == "agent")
        r.wait(60)
        st = coll.wait_for(coll.status, lambda s: [j["mode"] for j in s["jvms"] if j["pid"] == r.proc.pid
                                                    and not j["connected"]] == ["kernel", "attach"])
        kernel, agent = [j for j in st["jvms"] if j["pid"] == r.proc.pid]
        print("kernel %d pins, agent %d, handed over %d; %s" % (kernel["pins_total"], agent["pins_total"],
                                                                  zt["pins_handed_over"], zt))
        check(zt["state"] == "agent" and zt["attach"]["state"] in ("running", "done"), "attached on its pin: %s" % zt)
        check(zt["agent_layout"] == "agrees", "the agent's layout is the one read from outside: %s" % zt)
        check(kernel["pins_total"] >= 1 and agent["pins_total"] >= 1, "pins before and after the attach")
        recs = [p for p in coll.recordings() if os.path.basename(p).startswith("%d-" % r.proc.pid)]
        reps = sorted((report_json(p) for p in recs), key=lambda rep: rep["recording"]["start_unix_ns"])
        check([rep["jvm"]["mode"] for rep in reps] == ["kernel", "attach"], "two recordings: %s" % recs)
        # each virtual thread's pins as the report has them (a sampled pin after attach split into the parks the
        # kernel view saw), oldest first: one that begins before the previous ends (or the previous
        # was cut by the handover, no end) is the same park reported by both sessions. Each session's
        # Unix times come from its own clock pair: the kernel session's are brought to the agent's.
        by_vthread = {}
        for rep in reps:
            shift = report_clock_offset(reps[-1]) - report_clock_offset(rep)
            for p in rep["pins"]:
                by_vthread.setdefault(p["vthread"]["id"], []).append(
                    (p["start_ns"] + shift, p["duration_ns"], rep["jvm"]["mode"], p["carrier"]["tid"], p["timed_by"]))
        parks, again = {}, []
        for vt, ps in by_vthread.items():
            ps.sort()
            parks[vt] = 1
            for prev, cur in zip(ps, ps[1:]):
                if prev[1] is None or cur[0] < prev[0] + prev[1]:
                    again.append((vt, prev, cur))
                else:
                    parks[vt] += 1
        # JFR times the Java call: a park that returned at once (JDK 21: a permit an earlier unpark left
        # on the carrier; the sleep parks again for the rest) is an event of a microsecond. Neither
        # session can see one: the kernel view keeps off-CPU intervals from --kernel-min (1 ms), the
        # agent's sampler looks every 10 ms. ci17: 1.1 us, then 149.7 ms, which was one pin.
        jfr, jfr_at, unseeable = {}, {}, []
        for e in jfr_pinned_events(r.home, r.jfr, reps[-1]):
            vt = e["values"]["eventThread"]["javaThreadId"]
            at = (e["start_ns"], jfr_duration_ns(e))
            if at[1] < KERNEL_MIN_NS:
                unseeable.append((vt, at))
                continue
            jfr[vt] = jfr.get(vt, 0) + 1
            jfr_at.setdefault(vt, []).append(at)
        print("JFR's parks shorter than %d ns, which no session can see: %s" % (KERNEL_MIN_NS, unseeable))
        print("parks reported twice at the handover: %s" % again)
        check(len(parks) == 40, "each of the 40 sleeping virtual threads has its pins: %d; JFR's pins of the others "
              "(start, duration): %s; the sessions (mode, start, end): %s; the pins (start, duration, session, "
              "virtual thread): %s\nthe collector's log:\n%s" % (
                  len(parks), {vt: jfr_at[vt] for vt in jfr_at if vt not in parks},
                  [(rep["jvm"]["mode"], rep["recording"]["start_unix_ns"], rep["recording"].get("end_unix_ns"))
                   for rep in reps], sorted((p[0], p[1], p[2], vt) for vt, ps in by_vthread.items() for p in ps),
                  zt_trace(coll, r.proc.pid)))
        differ = [vt for vt in set(parks) | set(jfr) if parks.get(vt) != jfr.get(vt)]
        check(parks == jfr, "each virtual thread's parks, as many as JFR's: differ at %s; their pins: %s; JFR's "
              "(start, duration): %s; the sessions (mode, start, end): %s\nthe collector's log:\n%s" % (
                  {vt: (parks.get(vt), jfr.get(vt)) for vt in differ}, {vt: by_vthread.get(vt) for vt in differ},
                  {vt: jfr_at.get(vt) for vt in differ},
                  [(rep["jvm"]["mode"], rep["recording"]["start_unix_ns"], rep["recording"].get("end_unix_ns"))
                   for rep in reps], zt_trace(coll, r.proc.pid)))
        check(len(again) <= zt["pins_handed_over"], "parks reported by both sessions: %d, counted as handed over %d" %
              (len(again), zt["pins_handed_over"]))
        later = reps[1]["pins"]
        check(later and all(p["reason"] == "MONITOR" and "ZeroTouch" in describe(p) for p in later),
              "the agent's pins have their reason and culprit: %s" % [describe(p) for p in later[:3]])
    finally:
        coll.cleanup()


def case_agent(jdk):
    """A JVM with the agent streaming to this collector is the agent's: one session, the agent's pins."""
    need_kernel_view()
    jdk = int(jdk)
    coll = Collector(JVMS_ALL).start()
    try:
        go = os.path.join(tempdir(prefix="vtpin-zt-"), "go")
        r = Run(jdk, "ZeroTouch", args=("monitor", go, 8, 100), props=scheduler(2),
                agent_opts="collector=%s" % coll.socket).start()
        wait_ready(r.proc, os.path.join(r.dir, "stdout.txt"), "ZeroTouch: ready")
        coll.wait_for(lambda: coll.status(), lambda s: any(j["pid"] == r.proc.pid for j in s["jvms"]))
        open(go, "w").close()
        r.wait(60)
        st = coll.wait_for(lambda: coll.status(),
                           lambda s: not [j for j in s["jvms"] if j["pid"] == r.proc.pid and j["connected"]])
        mine = [j for j in st["jvms"] if j["pid"] == r.proc.pid]
        check(len(mine) == 1 and mine[0]["mode"] == "startup" and mine[0]["pins_total"] == 8,
              "one session, the agent's 8 pins: %s" % [{k: j.get(k) for k in ("mode", "pins_total")} for j in mine])
        zt = [j for j in st["collector"]["zero_touch"]["jvms"] if j["pid"] == r.proc.pid]
        check(all(j["state"] == "agent" for j in zt), "zero-touch leaves it to the agent: %s" % zt)
    finally:
        coll.cleanup()


if __name__ == "__main__":
    sys.exit(main({
        "monitor": case_monitor,
        "unmounted": case_unmounted,
        "reasons": case_reasons,
        "critical": case_critical,
        "native_block": case_native_block,
        "jni": case_jni,
        "before": case_before,
        "in_progress": case_in_progress,
        "first_second": case_first_second,
        "container": case_container,
        "untrusted": case_untrusted,
        "attach_on_pin": case_attach_on_pin,
        "unverified": case_unverified,
        "agent": case_agent,
    }))
