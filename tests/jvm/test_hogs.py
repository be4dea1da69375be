#!/usr/bin/env python3
"""Carrier hogs (issue 20): a virtual thread that computes on its carrier for longer than hog=
without unmounting holds that carrier as a pin does, though nothing is pinned. Real JVMs with the
real agent: a hog is found with its thread, carrier, frame and duration; code that yields or
sleeps between slices is never one; the collector shows hogs live (top, status, metrics, the
starvation alert); attach finds them too."""
import os
import re
import shutil
import signal
import subprocess

from harness import (VTPIN, Run, attach_when_ready, check, classpath, describe, jdk_home, main, report_json, scheduler,
                     tempdir)

HOG_NS = 200_000_000  # the agent's default hog=


def app_pins(rep):
    return [p for p in rep["pins"] if p["origin"] == "app"]


def frame(f):
    return "%s.%s" % (f["class"], f["method"]) if f else None


def check_spin_hogs(rep, threads, run_ms):
    hogs = rep["hogs"]
    names = sorted(h["vthread"]["name"] for h in hogs)
    check(names == ["spin-%d" % i for i in range(threads)], "one hog per spinning thread: %s" % hogs)
    for h in hogs:
        check(frame(h["culprit"]) == "CarrierHog.spin", "the hog's frame: %s" % h["culprit"])
        check("CarrierHog.spin" in [frame(f) for f in h["stack"]], "its stack: %s" % h["stack"])
        check(h["carrier"]["name"].startswith("ForkJoinPool") and h["carrier"]["tid"] > 0, "its carrier: %s" % h)
        check(not h["ongoing"] and h["duration_ns"] >= HOG_NS, "ended, at least hog= long: %s" % h)
        check(h["duration_ns"] <= run_ms * 1_000_000 + 500_000_000, "no longer than it ran: %s" % h)
    check(rep["stats"]["hogs"] == threads, "stats.hogs: %s" % rep["stats"])
    check(app_pins(rep) == [], "nothing pinned: %s" % [describe(p) for p in rep["pins"]])


def case_spin(jdk):
    """Two virtual threads compute for 800 ms each on two carriers without unmounting: two hogs."""
    jdk = int(jdk)
    r = Run(jdk, "CarrierHog", args=("spin", 2, 800), props=scheduler(2)).run()
    check("CarrierHog: mode=spin threads=2" in r.stdout(), "the fixture ran:\n" + r.stdout())
    rep = r.report()
    check_spin_hogs(rep, 2, 800)
    text = subprocess.run([VTPIN, "report", r.record], capture_output=True, text=True, timeout=60).stdout
    check("carrier hogs" in text and "CarrierHog.spin(CarrierHog.java:" in text, "the text report's hogs:\n" + text)
    check(r.trace_text().count("started: VirtualThread[#") == 2 and "hog #2 ended: " in r.trace_text(),
          "the trace says so:\n" + r.trace_text())
    page = os.path.join(r.dir, "r.html")
    subprocess.run([VTPIN, "report", "--format", "html", "-o", page, r.record], check=True, timeout=60)
    with open(page, encoding="utf-8") as f:
        check("spin-0" in f.read(), "the HTML report has the hogs")
    shutil.rmtree(r.dir, ignore_errors=True)


def case_no_hog(jdk, mode, occupancy):
    """Virtual threads on two carriers compute in slices with Thread.yield (six) or a 1 ms sleep
    (four) between them for 800 ms: each unmounts at every slice, and none is a hog. yieldwork: two
    threads whose slices compute for 2 ms, each alone on its carrier, which the JDK hands it straight
    back at every yield: a sample rarely falls between the unmount and the mount, so only counted
    mounts tell it from a hog. Sampled occupancy counts them on demand as a watch nears hog=
    (agent/callbacks/mount_events.h): before that, this run reported a false hog in 3 runs of 3 on JDK 21 and
    2 of 3 on 25 (six threads)."""
    jdk = int(jdk)
    opts = "occupancy=exact" if occupancy == "exact" else ""
    threads = {"yield": 6, "yieldwork": 2}.get(mode, 4)
    r = Run(jdk, "CarrierHog", args=(mode, threads, 800), props=scheduler(2), agent_opts=opts).run()
    check("CarrierHog: mode=%s" % mode in r.stdout(), "the fixture ran:\n" + r.stdout())
    rep = r.report()
    for h in rep["hogs"]:  # what the next failure needs to be explained (one in ~170 runs on 27 was not)
        print("hog %s: %d ns from %d, carrier %s, seen_unmounting %s, stack %s" % (
            h["vthread"]["name"], h["duration_ns"], h["start_ns"], h["carrier"], h.get("seen_unmounting"),
            [frame(f) for f in (h["stack"] or [])[:8]]))
    if rep["hogs"]:
        print("stats: sample_gaps %s (at most %s ns), mode %s" % (rep["stats"]["sample_gaps"],
                                                                  rep["stats"]["sample_gap_max_ns"], rep["jvm"]))
    check(rep["hogs"] == [] and rep["stats"]["hogs"] == 0, "no hog: %s" % [
        (h["vthread"]["name"], h["duration_ns"], frame(h["culprit"])) for h in rep["hogs"]])
    check(app_pins(rep) == [], "nothing pinned: %s" % [describe(p) for p in rep["pins"]])
    shutil.rmtree(r.dir, ignore_errors=True)


# The loads a yielding program must show no hog under (tests/jvm/load.py): 2x and 4x
# oversubscription of 2 cores, bursts that preempt the JVM, and a 20 % CPU quota that freezes
# it for 80 ms in every 100 ms (JDK 21 sampled: a false hog in 3 runs of 6 before the fix).
LOADS = {"busy2x": dict(busy=2), "busy4x": dict(busy=6), "preempt": dict(preempt=2), "quota": dict(quota_pct=20)}


def says_late(rep, text):
    """The report says when the sampler ran late, exactly as often as its stats count, and not
    otherwise: where the machine cannot promise a hog, the output says so."""
    gaps = rep["stats"]["sample_gaps"]
    line = re.search(r"^  sampler late (\d+) time\(s\), a carrier at most .* and a carrier hog too$", text, re.M)
    if gaps:
        check(line and int(line.group(1)) == gaps, "the text report says the sampler was late %d times:\n%s"
              % (gaps, text))
    else:
        check(not line, "no late sampler, no such line:\n" + text)
    return gaps


def case_no_hog_loaded(jdk, load_name, mode="yield", runs=3):
    """A yielding program under load is no hog, run after run: a carrier frozen with a yielder mounted
    (a quota, busy loops) is no hog, nor a sampler that ran late. The JDK hands a yielder its carrier
    straight back when nothing else is queued for that carrier (measured: one yielder alone on its
    carrier for its whole 800 ms while four others waited, on 21 and 25), and only counted mounts tell
    that from a hog (docs/agent.md). yield: six yielders, exact occupancy (every mount counted);
    yieldwork: two that compute 2 ms between yields, sampled occupancy (the default: mounts counted
    on demand near hog=, in a window where the carrier ran). Pins are not this test's
    subject (no_hog checks that the same program pins nothing): under a 20 % quota the JVM's own work in
    the VM stretches fivefold, and a clean-clone run had the watchdog report a 185 ms VM_BLOCK at
    CarrierHog.spin's call of System.nanoTime, labelled class initialization (issue 35's note: that
    label does not tell a class's initialization from other waits in the VM)."""
    from load import Load
    jdk = int(jdk)
    with Load(**LOADS[load_name]) as load:
        for run in range(int(runs)):
            exact = mode == "yield"
            r = Run(jdk, "CarrierHog", args=(mode, 6 if exact else 2, 800), props=scheduler(2),
                    agent_opts="occupancy=exact" if exact else "", load=load).run(timeout=240)
            rep = r.report()
            text = subprocess.run([VTPIN, "report", r.record], capture_output=True, text=True, timeout=60).stdout
            gaps = says_late(rep, text)
            print("run %d of %s under %s: %d hog(s), sampler late %d time(s), at most %s ms" % (
                run, mode, load.describe(), len(rep["hogs"]), gaps, rep["stats"]["sample_gap_max_ns"] // 1_000_000))
            check(rep["hogs"] == [] and rep["stats"]["hogs"] == 0, "run %d under %s: no hog, got %s" % (
                run, load.describe(), [(h["vthread"]["name"], h["duration_ns"]) for h in rep["hogs"]]))
            if app_pins(rep):
                print("pins (not this test's subject): %s" % [describe(p) for p in app_pins(rep)])
            if load_name == "quota":  # frozen 80 ms in every 100: the sampler cannot keep its period
                check(gaps > 0, "under a 20 %% quota the sampler ran late: %s" % rep["stats"])
            shutil.rmtree(r.dir, ignore_errors=True)


def case_off(jdk):
    """hog=0: not looked for."""
    jdk = int(jdk)
    r = Run(jdk, "CarrierHog", args=("spin", 1, 500), props=scheduler(2), agent_opts="hog=0").run()
    rep = r.report()
    check(rep["hogs"] == [] and rep["stats"]["hogs"] == 0, "hog=0 finds none: %s" % rep["hogs"])
    shutil.rmtree(r.dir, ignore_errors=True)


def case_attach(jdk):
    """Attached to a running JVM: the same hogs."""
    jdk = int(jdk)
    d = tempdir(prefix="vtpin-hog-attach-")
    rec = os.path.join(d, "a.vtp")
    cmd = [os.path.join(jdk_home(jdk), "bin", "java"), "-cp", classpath(jdk)] + scheduler(2) + \
          ["CarrierHog", "--ready", "spin", 2, 800]
    attach_when_ready([str(c) for c in cmd], "CarrierHog", d, "record=%s" % rec)
    check_spin_hogs(report_json(rec), 2, 800)
    shutil.rmtree(d, ignore_errors=True)


def stats_counters():
    """The counters of message Stats in proto/vtpin.proto: its optional fields."""
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "proto", "vtpin.proto")) as f:
        body = re.search(r"^message Stats \{(.*?)^\}", f.read(), re.S | re.M).group(1)
    return set(re.findall(r"^\s*optional\s+\w+\s+(\w+)\s*=", body, re.M))


def case_live(jdk):
    """Two virtual threads hog both carriers for 4 s: the collector shows them live (top and status
    --json, vtpin top, the metrics), and its starvation alert counts hogged carriers."""
    from test_metrics import MetricsCollector, samples, select
    jdk = int(jdk)
    d = tempdir(prefix="vtpin-hog-live-")
    coll = MetricsCollector(d, extra=("--alert-after", "500ms")).start()
    r = Run(jdk, "CarrierHog", args=("spin", 2, 4000), props=scheduler(2),
            agent_opts="collector=%s" % coll.socket).start()
    try:
        ask = coll  # the same collector asked through vtpin top/status

        def hogged(t):
            return [c for jv in t["jvms"] if jv["pid"] == r.proc.pid for c in jv["carriers"] if c["state"] == "hog"]
        carriers = hogged(ask.wait_for(ask.top, lambda t: len(hogged(t)) == 2, timeout=60))
        for c in carriers:
            check("CarrierHog.spin" in (c["culprit"] or "") and c["hogged_for_ns"] > 0, "a hog's carrier: %s" % c)
        j = ask.wait_for(lambda: ask.jvm(r.proc.pid), lambda j: j and j["alert"]["active"], timeout=20)
        check(j["hogs_total"] == 2 and j["carriers_hogged"] == 2, "status counts the hogs: %s" % j)
        # the agent's own cost, from its stats: a hog's stack is one GetStackTrace at least
        j = ask.wait_for(lambda: ask.jvm(r.proc.pid), lambda j: j and (j["agent_cost"] or {}).get("jvmti_calls", 0) >= 2,
                         timeout=10)
        check(j["agent_cost"]["cpu_ns"] > 0, "status says what the agent costs: %s" % j["agent_cost"])
        # every counter of the agent's Stats, by the schema's names (the model the report keeps too)
        j = ask.wait_for(lambda: ask.jvm(r.proc.pid), lambda j: j and (j["stats"] or {}).get("hogs") == 2, timeout=20)
        check(set(j["stats"]) == stats_counters() | {"jvmti_calls"} and j["stats"]["pins"] is not None and
              sum(j["stats"]["jvmti_calls"].values()) >= 2, "status has the agent's counters: %s" % j["stats"])
        text = subprocess.run([VTPIN, "top", "--once", "--socket", coll.socket], capture_output=True, text=True,
                              timeout=30).stdout
        check(text.count(" hog ") >= 2 and "CarrierHog.spin" in text, "vtpin top shows the hogs:\n" + text)
        s = samples(coll.scrape())
        check([v for _, v in select(s, "vtpin_carriers_hogged", jvm=r.proc.pid)] == [2.0], "gauge: %s" %
              select(s, "vtpin_carriers_hogged"))
        check(sum(v for _, v in select(s, "vtpin_hogs_total", jvm=r.proc.pid)) == 2, "counter: %s" %
              select(s, "vtpin_hogs_total"))
        r.wait(60)
    finally:
        r.kill()
        coll.stop()
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main({"spin": case_spin, "no_hog": case_no_hog, "no_hog_loaded": case_no_hog_loaded, "off": case_off,
                           "attach": case_attach, "live": case_live}))
