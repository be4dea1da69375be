#!/usr/bin/env python3
"""Who blocks the carrier (issue 20): a pin blocked entering a contended monitor names the monitor's
owner (its name, id, whether virtual, its carrier, its state, its stack, and its own pin when it is
pinned itself); a pin in Object.wait says it waits for a notify. Real JVMs, JDK 21 and 24+ (where
the waiters pin only under a native frame)."""
import os
import shutil
import signal
import subprocess

from harness import VTPIN, Run, check, describe, main, scheduler

OWNER = {"platform": ("lock-owner", False, "sleeping"),
         "virtual": ("vlock-owner", True, "parked"),  # a virtual thread's sleep is a park
         "pinned": ("vlock-owner", True, "parked")}


def frames(stack):
    return ["%s.%s" % (f["class"], f["method"]) for f in stack]


def case_owner(jdk, kind):
    """LockOwner KIND: three virtual threads enter a monitor another thread holds for 300 ms."""
    jdk = int(jdk)
    r = Run(jdk, "LockOwner", args=(kind, 3, 300), props=scheduler(4)).run()
    check("LockOwner: owner=%s" % kind in r.stdout(), "the fixture ran:\n" + r.stdout())
    rep = r.report()
    waits = [p for p in rep["pins"] if (p["vthread"]["name"] or "").startswith("waiter-")]
    check(len(waits) == 3, "3 waiters pinned: %s" % [describe(p) for p in rep["pins"]])
    name, virtual, state = OWNER[kind]
    owner_pins = [p for p in rep["pins"] if p["vthread"]["name"] == name]
    for p in waits:
        check(p["reason"] == ("MONITOR_ENTER" if jdk < 24 else "NATIVE"), "reason: %s" % describe(p))
        b = p["blocker"]
        check(b and b["what"] == "monitor" and b["object_class"] == "java.lang.Object", "the monitor: %s" % b)
        t = b["thread"]
        check(t and t["name"] == name and t["virtual"] is virtual and t["id"] > 0, "its owner: %s" % b)
        check(b["state"] == state, "the owner is %s: %s" % (state, b["state"]))
        check("LockOwner.holdLong" in frames(b["stack"]), "the owner's stack: %s" % frames(b["stack"]))
        if virtual:
            check(t["carrier"] and t["carrier"].startswith("ForkJoinPool"), "a virtual owner's carrier: %s" % t)
            check(len(owner_pins) == 1 and b["pin"] == owner_pins[0]["id"],
                  "the owner is pinned itself, its pin linked: %s, owner's pins %s" %
                  (b["pin"], [describe(q) for q in owner_pins]))
        else:
            check(t["carrier"] is None and b["pin"] is None, "a platform owner: no carrier, no pin: %s" % b)
    # the agent's own cost: one GetObjectMonitorUsage (a safepoint) per monitor blocker looked up, no more
    calls = rep["stats"]["jvmti_calls"]
    looked = [p for p in rep["pins"] if p["blocker"] and p["blocker"]["what"] == "monitor"]
    check(calls and calls["GetObjectMonitorUsage"] == len(looked) and calls["GetCurrentContendedMonitor"] >= len(looked),
          "JVMTI calls counted, one monitor usage per blocker: %s, %d blockers" % (calls, len(looked)))
    check(rep["stats"]["agent_cpu_ns"] > 0, "the writer's CPU: %s" % rep["stats"]["agent_cpu_ns"])
    text = subprocess.run([VTPIN, "report", r.record], capture_output=True, text=True, timeout=60).stdout
    check("the agent's own cost: writer thread CPU " in text and "GetObjectMonitorUsage %d" % len(looked) in text,
          "the text report says what the agent cost:\n" + text)
    line = 'blocked by "%s" (%s' % (name, "virtual on " if virtual else "platform, %s) at " % state)
    check(line in text and "LockOwner.holdLong(LockOwner.java:" in text, "the text report says %r:\n%s" %
          (line, text))
    page = os.path.join(r.dir, "r.html")
    subprocess.run([VTPIN, "report", "--format", "html", "-o", page, r.record], check=True, timeout=60)
    with open(page, encoding="utf-8") as f:
        check('blocked by \\"%s\\"' % name in f.read(), "the HTML report's site shows the blocker")
    shutil.rmtree(r.dir, ignore_errors=True)


def case_notify(jdk):
    """Object.wait pins wait for a notify, which no thread owes: said so, no owner."""
    jdk = int(jdk)
    if jdk < 24:
        r = Run(jdk, "WaitPin", props=scheduler(4)).run()
        waits = [p for p in r.report()["pins"] if p["reason"] == "OBJECT_WAIT"]
    else:
        r = Run(jdk, "JniLocked", args=(2, 100, "wait"), props=scheduler(4)).run()
        waits = [p for p in r.report()["pins"] if p["reason"] == "NATIVE" and "waitInNative" in str(p["stack"])]
    rep = r.report()
    check(waits, "Object.wait pinned: %s" % [describe(p) for p in rep["pins"]])
    # WaitPin's 50 waiters cross the threshold at once: past the looks a second, counted, not looked up
    # (the count is of every pin not looked up: a JDK-internal contended entry among them on 21)
    looked = [p for p in waits if p["blocker"]]
    skipped = rep["stats"]["blockers_skipped"]
    blockable = [p for p in rep["pins"] if p["reason"] in ("MONITOR_ENTER", "OBJECT_WAIT", "NATIVE", "CRITICAL_SECTION")]
    check(looked and len(looked) + skipped >= len(waits) and skipped <= len(blockable) - len(looked),
          "each waiter looked up or counted: %d looked up, %d skipped, %d waits, %d pins that could be" %
          (len(looked), skipped, len(waits), len(blockable)))
    for p in looked:
        b = p["blocker"]
        check(b and b["what"] == "notify" and b["thread"] is None, "waits for a notify: %s" % b)
        if jdk < 24:
            check(b["object_class"] == "java.lang.Object", "on the waited object's class: %s" % b)
    text = subprocess.run([VTPIN, "report", r.record], capture_output=True, text=True, timeout=60).stdout
    check("waits for notify" in text, "the text report says so:\n" + text)
    shutil.rmtree(r.dir, ignore_errors=True)


def case_live(jdk):
    """While the waiters are pinned, the collector's live view names their blocker: `vtpin top`'s
    BLOCKER column and the carriers of `top --json` / `status --json`."""
    from test_collector import Collector, streaming
    jdk = int(jdk)
    coll = Collector().start()
    r = streaming(jdk, coll, "LockOwner", args=("platform", 2, 4000), props=scheduler(4)).start()
    want = 'blocked by "lock-owner" (platform, sleeping) at LockOwner.holdLong(LockOwner.java:'
    try:
        def waiting(t):
            return [c for jv in t["jvms"] if jv["pid"] == r.proc.pid for c in jv["carriers"]
                    if c["state"] == "pinned" and "LockOwner.enter" in (c["culprit"] or "")]
        pinned = waiting(coll.wait_for(coll.top, lambda t: len(waiting(t)) == 2, timeout=60))
        for c in pinned:
            check(c["blocker"] and c["blocker"].startswith(want), "top --json names the blocker: %s" % c)
        text = subprocess.run([VTPIN, "top", "--once", "--socket", coll.socket], capture_output=True, text=True,
                              timeout=30).stdout
        check(any(l.startswith("CARRIER ") and " BLOCKER " in l for l in text.splitlines()),
              "top has a BLOCKER column:\n" + text)
        rows = [l for l in text.splitlines() if "LockOwner.enter" in l]
        check(len(rows) == 2 and all('blocked by "lock-owner" (platform, sleeping)' in l for l in rows),
              "each pinned carrier's row shows its blocker:\n" + text)
        r.wait(60)
    finally:
        r.kill()
        coll.kill(signal.SIGTERM)


if __name__ == "__main__":
    raise SystemExit(main({"owner": case_owner, "notify": case_notify, "live": case_live}))
