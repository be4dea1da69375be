#!/usr/bin/env python3
"""What changes from one JDK to the next (issue 19), on real JVMs:
- jdk_reason: vtpin's words for each pin equal JFR's pinnedReason of the same pin, same run (24+),
  and their 21-23 equivalents;
- class initialization: a VM-called <clinit> that sleeps is NATIVE on every JDK; a wait for another
  thread's initialization under Class.forName is a VM_BLOCK on every JDK, the class named; on getstatic
  it is a VM_BLOCK on 21-25, and from 26 (JDK-8369238) the waiter unmounts: no pin, for JFR neither;
- a JDK newer than any tested one runs, saying so once."""
import os
import shutil
import subprocess

from harness import (VTPIN, Failure, Run, check, check_timed_like_jfr, culprit, describe, jfr_pinned_events, main, scheduler)

# Each ClassInitPaths virtual thread is named MODE-i; JniSleep's jnisleep-i. Three of them: JFR's
# durations are compared by their median (check_timed_like_jfr), which needs three.
THREADS = 3
FIXTURES = {
    "runs": ("ClassInitPaths", ("runs", THREADS, 300), "runs-"),
    "forname": ("ClassInitPaths", ("forname", THREADS, 300), "forname-"),
    "getstatic": ("ClassInitPaths", ("getstatic", THREADS, 300), "getstatic-"),
    "jnisleep": ("JniSleep", (), "jnisleep-"),
}
SLOW = "ClassInitPaths$Slow"


def waited_ns(r, name):
    """How long virtual thread name spent in (or waiting for) its class's initialization, as
    ClassInitPaths measured it."""
    for line in r.stdout().splitlines():
        if line.startswith("ClassInitPaths: %s waited_ns=" % name):
            return int(line.rsplit("=", 1)[1])
    raise Failure("ClassInitPaths did not say how long %s waited:\n%s" % (name, r.stdout()))


def run_case(jdk, case, jfr, agent_opts="threshold=0"):
    fixture, args, prefix = FIXTURES[case]
    r = Run(jdk, fixture, args=args, props=scheduler(4), agent_opts=agent_opts, jfr=jfr).run(timeout=180)
    rep = r.report()
    pins = [p for p in rep["pins"] if (p["vthread"]["name"] or "").startswith(prefix)]
    events = []
    if jfr:
        events = [e for e in jfr_pinned_events(r.home, r.jfr, rep)
                  if (e["values"]["eventThread"].get("javaName") or "").startswith(prefix)]
    return r, rep, pins, events


def case_jdk_reason_jfr(jdk, case):
    """At threshold 0 every pin of the fixture's virtual threads is one of JFR's events of the same run
    (harness.check_timed_like_jfr), and its jdk_reason is that event's pinnedReason, word for word."""
    jdk = int(jdk)
    r, rep, pins, events = run_case(jdk, case, jfr=True)
    print("vtpin %d pins, JFR %d events" % (len(pins), len(events)))
    check(pins, "the fixture pinned: %s" % [describe(p) for p in rep["pins"]])
    # a wait under Class.forName is found by sampling (VM_BLOCK): it starts at the first sample that
    # sees it and ends at the first that sees it over, each up to a period (sample=, 10 ms) late, or
    # up to the longest span the agent says its sampler left a carrier unlooked at (sample_gap_max_ns:
    # 12.6 ms longer than JFR's under ASan beside another test, in a clean-clone run)
    gap = rep["stats"]["sample_gap_max_ns"] or 0
    check_timed_like_jfr(pins, events, median_ns=2e6 if case != "forname" else max(10e6, gap) + 2e6)
    by_thread = {}
    for e in events:
        by_thread.setdefault(e["values"]["eventThread"]["javaThreadId"], []).append(e)
    for p in pins:
        theirs = sorted(by_thread[p["vthread"]["id"]], key=lambda e: e["values"]["startTime"])
        mine = sorted([q for q in pins if q["vthread"]["id"] == p["vthread"]["id"]], key=lambda q: q["start_ns"])
        e = theirs[mine.index(p)]
        check(p["jdk_reason"] == e["values"]["pinnedReason"],
              "jdk_reason %r, JFR's pinnedReason %r: %s" % (p["jdk_reason"], e["values"]["pinnedReason"], describe(p)))
    print("jdk_reason as JFR's: %s" % sorted({p["jdk_reason"] for p in pins}))
    shutil.rmtree(r.dir, ignore_errors=True)


# 21-23: JFR's event has no pinnedReason; vtpin gives the equivalents (agent/callbacks/jdk_words.c)
WORDS_21 = {
    "runs": ("NATIVE", "VM call to ClassInitPaths$Runs%d.<clinit> on stack"),
    "forname": ("VM_BLOCK", "Waited for initialization of %s by another thread" % SLOW),
    "getstatic": ("VM_BLOCK", "Waited for initialization of %s by another thread" % SLOW),
    "jnisleep": ("NATIVE", "Native or VM frame on stack"),
}


def case_jdk_reason_21(case):
    r, rep, pins, _ = run_case(21, case, jfr=False)
    reason, words = WORDS_21[case]
    check(len(pins) >= 2, "the fixture pinned: %s" % [describe(p) for p in rep["pins"]])
    for p in pins:
        want = words % int(p["vthread"]["name"].rsplit("-", 1)[1]) if "%d" in words else words
        check(p["reason"] == reason and p["jdk_reason"] == want, "%s %r, want %s %r: %s" %
              (p["reason"], p["jdk_reason"], reason, want, describe(p, 20)))
    shutil.rmtree(r.dir, ignore_errors=True)


def case_class_init(jdk, mode):
    """ClassInitPaths MODE: what pins, its reason (the same on every JDK), the class named; the text
    report and the trace say the JDK's words too."""
    jdk = int(jdk)
    r, rep, pins, events = run_case(jdk, mode, jfr=jdk >= 24, agent_opts="")
    names = [describe(p) for p in rep["pins"]]
    if mode == "getstatic" and jdk >= 26:
        # JDK-8369238: the waiter unmounts; nothing holds a carrier
        check(pins == [], "getstatic waits unmount from 26 on: %s" % names)
        check(events == [], "JFR sees no pin either: %d events" % len(events))
        check("ClassInitPaths: mode=getstatic threads=%d" % THREADS in r.stdout(), "the fixture ran:\n" + r.stdout())
        return
    check(len(pins) == THREADS, "%d pins, one per virtual thread: %s" % (THREADS, names))
    if jdk >= 24:
        check(len(events) == THREADS, "JFR has them too: %d events" % len(events))
    for p in pins:
        c = culprit(p)
        if mode == "runs":
            i = int(p["vthread"]["name"].rsplit("-", 1)[1])
            cls = "ClassInitPaths$Runs%d" % i
            check(p["reason"] == "NATIVE", "a park under a VM-called <clinit> is NATIVE: %s" % describe(p))
            check(p["jdk_reason"] == "VM call to %s.<clinit> on stack" % cls, "words: %r" % p["jdk_reason"])
        else:
            check(p["reason"] == "VM_BLOCK", "a wait for another thread's <clinit> is VM_BLOCK: %s" % describe(p))
            check(p["jdk_reason"] == "Waited for initialization of %s by another thread" % SLOW,
                  "the class named: %r" % p["jdk_reason"])
            where = "Class.forName (class initialization)" if mode == "forname" else "getstatic of %s" % SLOW
            check(p["blocked_in"] and where in p["blocked_in"], "blocked in %s: %s" % (where, p["blocked_in"]))
            method = "forName" if mode == "forname" else "touch"
            check(c and c["class"] == "ClassInitPaths" and c["method"] == method,
                  "the culprit is the application's frame: %s" % c)
            # who it waits for: the platform thread running Slow's <clinit>, asleep in it
            b = p["blocker"]
            check(b and b["what"] == "class_init" and b["object_class"] == SLOW, "waits for Slow's initializer: %s" % b)
            t = b["thread"]
            check(t and t["name"] == "initializer" and t["virtual"] is False and t["id"] > 0 and t["carrier"] is None,
                  "the initializing thread named: %s" % b)
            check(b["state"] == "sleeping", "which sleeps in <clinit>: %s" % b["state"])
            owner = ["%s.%s" % (f["class"], f["method"]) for f in b["stack"]]
            check("%s.<clinit>" % SLOW in owner and "ClassInitPaths.sleepInInit" in owner,
                  "its stack, in Slow's <clinit>: %s" % owner)
        # the pin spans the thread's time in <clinit> or its wait for it (as the fixture measured it),
        # not cut short: a VM_BLOCK begins at the first sample that sees it, a park pin at its park
        waited = waited_ns(r, p["vthread"]["name"])
        check(p["duration_ns"] and p["duration_ns"] >= waited / 2,
              "held for the thread's %.1f ms: %s" % (waited / 1e6, describe(p)))
    text = subprocess.run([VTPIN, "report", r.record], capture_output=True, text=True, timeout=60).stdout
    # the text report shows a site's example pin; the trace every pin
    check(any("the JDK says: " + p["jdk_reason"] in text for p in pins), "the text report says the JDK's words:\n" + text)
    if mode != "runs":
        line = 'waits for "initializer" (platform, sleeping) to initialize %s at ClassInitPaths.sleepInInit(' % SLOW
        check(line in text, "the text report names the initializer (%r):\n%s" % (line, text))
    for p in pins:
        check("(JDK: %s)" % p["jdk_reason"] in r.trace_text(), "so does the trace:\n" + r.trace_text()[:2000])
    shutil.rmtree(r.dir, ignore_errors=True)


def case_untested(jdk):
    """A JDK newer than the newest tested one (made so by lowering the bound) runs and says so once;
    the real newest says nothing."""
    jdk = int(jdk)
    os.environ["VTPIN_NEWEST_TESTED_JDK"] = str(jdk - 1)
    r = Run(jdk, "JniSleep").run()
    del os.environ["VTPIN_NEWEST_TESTED_JDK"]
    rep = r.report()
    said = [n for n in rep["notices"] if n["code"] == "jdk.untested"]
    check(len(said) == 1 and ("JDK %d is newer than any vtpin was tested on" % jdk) in said[0]["text"],
          "one notice: %s" % rep["notices"])
    check("all present" in said[0]["text"], "the internals it reads are all there: %s" % said[0]["text"])
    check(r.stderr().count("is newer than any vtpin was tested on") == 1, "said once on stderr:\n" + r.stderr())
    check(len([p for p in rep["pins"] if p["reason"] == "NATIVE"]) == 4, "and finds its pins: %s" %
          [describe(p) for p in rep["pins"]])
    r2 = Run(jdk, "JniSleep").run()
    check(not [n for n in r2.report()["notices"] if n["code"].startswith(("jdk.", "internals."))],
          "a tested JDK: no such notice: %s" % r2.report()["notices"])


if __name__ == "__main__":
    raise SystemExit(main({
        "jdk_reason_jfr": case_jdk_reason_jfr,
        "jdk_reason_21": case_jdk_reason_21,
        "class_init": case_class_init,
        "untested": case_untested,
    }))
