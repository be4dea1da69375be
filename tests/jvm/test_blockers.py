#!/usr/bin/env python3
"""Who blocks the carrier (issue 20): a pin blocked entering a contended monitor names the monitor's
owner (its name, id, whether virtual, its carrier, its state, its stack, and its own pin when it is
pinned itself); a pin in Object.wait says it waits for a notify; a pinned park on a
java.util.concurrent lock names the lock's owner (issue 34). Real JVMs, JDK 21 and 24+ (where
the waiters pin only under a native frame)."""
import os
import shutil
import signal
import subprocess
import time

from harness import (FIXTURE_LIB, VTPIN, Run, attach_when_ready, check, classpath, describe, jdk_home, main,
                     report_json, scheduler, tempdir, wait_ready)

OWNER = {"platform": ("lock-owner", False, "sleeping"),
         "virtual": ("vlock-owner", True, "parked"),  # a virtual thread's sleep is a park
         "pinned": ("vlock-owner", True, "parked")}


def frames(stack):
    return ["%s.%s" % (f["class"], f["method"]) for f in stack]


def case_owner(jdk, kind, idle="0"):
    """LockOwner KIND: three virtual threads enter a monitor another thread holds for 300 ms. A
    virtual owner sleeps holding it: pinned on 21-23, unmounted on 24+, where JVMTI names no such
    owner and the agent finds it with the JDK's thread snapshots (agent/jvm/vowner.h), among IDLE more
    parked virtual threads."""
    jdk = int(jdk)
    unmounted = kind == "virtual" and jdk >= 24
    r = Run(jdk, "LockOwner", args=(kind, 3, 300, idle), props=scheduler(4)).run()
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
        if unmounted:
            check(t["carrier"] is None and b["pin"] is None, "an unmounted owner: no carrier, no pin: %s" % b)
        elif virtual:
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
    # an unmounted owner: one look over the virtual threads (the owner and IDLE more), then one snapshot
    # for each other waiter, which checks the owner found; none where JVMTI or the carriers named it
    snapshots = calls.get("ThreadSnapshot.of", 0)
    # more means another look: say for which pins (ci36: 1417 snapshots for 1000 idle, a look of about 414 for
    # an idler's pin on a class-loading lock, which the fixture now takes once on main)
    t0 = min(p["start_ns"] for p in rep["pins"])
    check(snapshots == 0 if not unmounted else 3 <= snapshots <= int(idle) + 3,
          "thread snapshots: %d for %s idle virtual threads; JVMTI calls %s; the pins looked up (from the first "
          "pin, ms): %s" % (snapshots, idle, calls, [
              "%s %s %.1f+%.1f, owner %s, at %s" % (
                  p["vthread"]["name"], p["reason"], (p["start_ns"] - t0) / 1e6, (p["duration_ns"] or 0) / 1e6,
                  p["blocker"]["thread"], frames(p["stack"])[:4]) for p in looked]))
    check(rep["stats"]["agent_cpu_ns"] > 0, "the writer's CPU: %s" % rep["stats"]["agent_cpu_ns"])
    text = subprocess.run([VTPIN, "report", r.record], capture_output=True, text=True, timeout=60).stdout
    check("the agent's own cost: writer thread CPU " in text and "GetObjectMonitorUsage %d" % len(looked) in text,
          "the text report says what the agent cost:\n" + text)
    line = 'blocked by "%s" (%s' % (name, "virtual, unmounted, " if unmounted else "virtual on " if virtual
                                     else "platform, %s) at " % state)
    check(line in text and "LockOwner.holdLong(LockOwner.java:" in text, "the text report says %r:\n%s" %
          (line, text))
    page = os.path.join(r.dir, "r.html")
    subprocess.run([VTPIN, "report", "--format", "html", "-o", page, r.record], check=True, timeout=60)
    with open(page, encoding="utf-8") as f:
        check('blocked by \\"%s\\"' % name in f.read(), "the HTML report's site shows the blocker")
    shutil.rmtree(r.dir, ignore_errors=True)


SYNC = {"lock": "java.util.concurrent.locks.ReentrantLock$NonfairSync",
        "write": "java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync",
        "read": "java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync"}


def check_lock_pins(rep, record, jdk, kind, holder="virtual"):
    """LockChain KIND's two waiters: pinned, parked in lock(), their blocker the lock and its owner
    (virtual and unmounted, platform, or virtual and pinned itself: sleeping, its stack), or for a
    lock held shared, no owner, said so."""
    waits = [p for p in rep["pins"] if (p["vthread"]["name"] or "").startswith("lock-waiter-")]
    check(len(waits) == 2, "2 waiters pinned: %s" % [describe(p) for p in rep["pins"]])
    for p in waits:
        check(p["reason"] == ("MONITOR" if jdk < 24 else "NATIVE"), "reason: %s" % describe(p))
        check("LockChain.takeAndRelease" in frames(p["stack"]), "parked in lock(): %s" % frames(p["stack"]))
        b = p["blocker"]
        check(b and b["what"] == "lock" and b["object_class"] == SYNC[kind], "the lock: %s" % b)
        if kind == "read":
            check(b["thread"] is None and b["state"] is None and b["stack"] == [], "held shared, no owner: %s" % b)
            continue
        t = b["thread"]
        check(t and t["name"] == "lock-holder" and t["virtual"] is (holder != "platform") and t["id"] > 0,
              "its owner: %s" % b)
        if holder == "pinned":
            own = [q for q in rep["pins"] if q["vthread"]["name"] == "lock-holder"]
            check(t["carrier"] and t["carrier"].startswith("ForkJoinPool"), "a mounted owner's carrier: %s" % t)
            check(len(own) == 1 and b["pin"] == own[0]["id"], "the owner is pinned itself, its pin linked: %s, "
                  "owner's pins %s" % (b["pin"], [describe(q) for q in own]))
        else:
            check(t["carrier"] is None and b["pin"] is None, "the owner is on no carrier, not pinned: %s" % b)
        check(b["state"] in (("sleeping",) if holder == "platform" else ("parked", "sleeping")),
              "the owner sleeps: %s" % b["state"])
        check("LockChain.hold" in frames(b["stack"]), "the owner's stack: %s" % frames(b["stack"]))
    calls = rep["stats"]["jvmti_calls"]
    check(calls and calls.get("GetObjectMonitorUsage", 0) == 0, "no monitor looks for a lock: %s" % calls)
    # a long contention, with a carrier free for the owner: not a deadlock
    check(not [n for n in rep["notices"] if n["code"].startswith("deadlock")], "no deadlock: %s" % rep["notices"])
    text = subprocess.run([VTPIN, "report", record], capture_output=True, text=True, timeout=60).stdout
    if kind == "read":
        line = "parked on a %s, which no single thread owns" % SYNC[kind]
    else:
        line = 'blocked by "lock-holder" (%s' % {"virtual": "virtual, unmounted, ", "platform": "platform, sleeping)",
                                                 "pinned": "virtual on ForkJoinPool"}[holder]
        check(" holding a %s at LockChain.hold(LockChain.java:" % SYNC[kind] in text,
              "the text report names the lock and the owner's frame:\n" + text)
    check(line in text, "the text report says %r:\n%s" % (line, text))


def case_lock(jdk, kind, holder="virtual"):
    """LockChain KIND HOLDER: two virtual threads park, pinned, on a java.util.concurrent lock that
    lock-holder holds, sleeping 300 ms: a virtual thread, unmounted meanwhile (4 carriers: it mounts
    again to unlock), a platform thread, or a virtual thread pinned itself. Their blocker names the
    lock and its owner; a lock held shared (the read lock) has no single owner, and the blocker says so."""
    jdk = int(jdk)
    r = Run(jdk, "LockChain", args=(kind, 2, 300, holder), props=scheduler(4)).run()
    check("LockChain: %s waiters=2 holder=%s entries=3 done" % (kind, holder) in r.stdout(),
          "the fixture ran:\n" + r.stdout())
    check_lock_pins(r.report(), r.record, jdk, kind, holder)
    shutil.rmtree(r.dir, ignore_errors=True)


def case_chain(jdk, via):
    """LockChain lock chained|chained-monitor: the lock's owner "lock-holder" is itself blocked,
    parked on a second ReentrantLock (a virtual holder, unmounted) or entering a monitor (a platform
    holder), which the platform thread "deep-holder" holds, sleeping 300 ms. The waiters' blocker
    names the owner, then the chain: what the owner waits for and who holds that, where the chain
    ends (deep-holder waits for nothing). The text report says it in one line."""
    jdk = int(jdk)
    holder = {"lock": "chained", "monitor": "chained-monitor"}[via]
    r = Run(jdk, "LockChain", args=("lock", 2, 300, holder), props=scheduler(4)).run()
    check("LockChain: lock waiters=2 holder=%s entries=3 done" % holder in r.stdout(), "the fixture ran:\n" +
          r.stdout())
    rep = r.report()
    waits = [p for p in rep["pins"] if (p["vthread"]["name"] or "").startswith("lock-waiter-")]
    check(len(waits) == 2, "2 waiters pinned: %s" % [describe(p) for p in rep["pins"]])
    for p in waits:
        b = p["blocker"]
        t = b and b["thread"]
        check(b and b["what"] == "lock" and b["object_class"] == SYNC["lock"] and t and t["name"] == "lock-holder" and
              t["virtual"] is (via == "lock") and b["state"] == ("parked" if via == "lock" else "blocked"),
              "the owner, itself waiting: %s" % b)
        check("LockChain.holdThenWait" in frames(b["stack"]), "the owner's stack: %s" % frames(b["stack"]))
        chain = b["chain"]
        check(len(chain) == 1, "one hop past the owner, where deep-holder waits for nothing: %s" % chain)
        h = chain[0]
        check(h["what"] == via and h["object_class"] == (SYNC["lock"] if via == "lock" else "java.lang.Object"),
              "what the owner waits for: %s" % h)
        check(h["thread"] and h["thread"]["name"] == "deep-holder" and h["thread"]["virtual"] is False and
              h["thread"]["id"] > 0 and h["thread"]["carrier"] is None and h["state"] == "sleeping",
              "who holds it: %s" % h)
    calls = rep["stats"]["jvmti_calls"]
    # a lock hop is JNI reads; a monitor hop one GetObjectMonitorUsage each
    check(calls.get("GetObjectMonitorUsage", 0) == (0 if via == "lock" else 2), "monitor looks: %s" % calls)
    check(not [n for n in rep["notices"] if n["code"].startswith("deadlock")], "no deadlock: %s" % rep["notices"])
    text = subprocess.run([VTPIN, "report", r.record], capture_output=True, text=True, timeout=60).stdout
    line = '; "lock-holder" in turn is blocked by "deep-holder" (platform, sleeping)%s' % (
        " holding a %s" % SYNC["lock"] if via == "lock" else "")
    check(line in text, "the text report says %r:\n%s" % (line, text))
    shutil.rmtree(r.dir, ignore_errors=True)


def case_lock_attach(jdk):
    """The same after attach, where JVMTI gives no monitor_info (a monitor's owner goes unnamed): the
    sampler finds the parks, and a lock's owner is named all the same (JNI reads only)."""
    jdk = int(jdk)
    d = tempdir(prefix="vtpin-lock-attach-")
    rec = os.path.join(d, "a.vtp")
    cmd = [os.path.join(jdk_home(jdk), "bin", "java"), "-cp", classpath(jdk), "-Djava.library.path=" + FIXTURE_LIB] + \
        scheduler(4) + ["LockChain", "--ready", "lock", 2, 600]
    attach_when_ready([str(c) for c in cmd], "LockChain", d, "record=%s" % rec)
    check_lock_pins(report_json(rec), rec, jdk, "lock")
    shutil.rmtree(d, ignore_errors=True)


DEADLOCK = "deadlock (carrier starvation): all 2 carriers of the scheduler (parallelism 2) are pinned"


HOG_DEADLOCK = ("deadlock (carrier starvation): all 2 carriers of the scheduler (parallelism 2) are pinned or "
                "hogged (1 pinned, 1 hogged), each pin by a park on a java.util.concurrent lock")


def case_lock_hog_live(jdk):
    """The incident with a hog in place of one pin: 2 carriers, one pinned by a waiter parked on a
    ReentrantLock whose owner is unmounted, the other held by a virtual thread that computes for ever.
    The owner never gets a carrier back; the agent says it is a deadlock, naming the pin and the hog,
    on its log and in its recording, which holds it after the hung JVM is killed."""
    r = Run(int(jdk), "LockChain", ("lock", 1, 200, "virtual", 1), props=scheduler(2)).start()
    try:
        deadline = time.monotonic() + 60
        while HOG_DEADLOCK not in r.stderr():
            check(r.proc.poll() is None and time.monotonic() < deadline,
                  "the agent says the deadlock within 60 s:\n" + r.stderr()[-3000:])
            time.sleep(0.05)
        line = next(l for l in r.stderr().splitlines() if HOG_DEADLOCK in l)
        print(line)
        check('"lock-holder" (virtual thread ' in line and 'that "lock-waiter-0" waits for' in line and
              "and no hog gives up" in line and ' by "lock-waiter-0" (pin #' in line and
              ' by "carrier-hog-0" (virtual thread ' in line,
              "it names the owner, the pinned waiter and the hog: %s" % line)
    finally:
        r.kill()
    said = [n for n in r.report()["notices"] if n["code"] == "deadlock.carrier_starvation"]
    check(len(said) == 1 and HOG_DEADLOCK in said[0]["text"], "the recording holds it once: %s" % said)


def case_lock_hog_ends(jdk):
    """A hog that ends is no deadlock: one waiter pinned behind the unmounted owner and a hog that
    computes 700 ms on the other carrier; when the hog ends the owner mounts, unlocks, and the
    program ends, with no deadlock said (the starvation held for less than the second it must)."""
    r = Run(int(jdk), "LockChain", ("lock", 1, 200, "virtual", 1, 700), props=scheduler(2)).run()
    check("LockChain: lock waiters=1 holder=virtual entries=" in r.stdout(), "the program ended:\n" + r.stdout())
    rep = r.report()
    check(any(h["vthread"]["name"] == "carrier-hog-0" and not h["ongoing"] for h in rep["hogs"]),
          "the hog was reported, and ended: %s" % rep["hogs"])
    check(not [n for n in rep["notices"] if n["code"].startswith("deadlock")], "no deadlock: %s" % rep["notices"])


def case_lock_live(jdk):
    """The incident itself, live: 2 carriers, both pinned by waiters parked on a ReentrantLock whose
    owner, an unmounted virtual thread, can never mount again to unlock it. The program hangs; the
    collector's `top` names the owner on each pinned carrier while it does, and the agent says it is
    a deadlock: on its log, to the collector, and in its recording, which holds it after the hung
    JVM is killed. The collector's starvation alert names the deadlock too."""
    from collector_fixture import CollectorProcess
    from test_collector import streaming
    from test_metrics import samples, select
    jdk = int(jdk)
    coll = CollectorProcess(tempdir("vtpin-lock-live-"), metrics="127.0.0.1:0", poll_interval=0.1,
                            stop_timeout=10).start()
    r = streaming(jdk, coll, "LockChain", args=("lock", 2, 200), props=scheduler(2)).start()
    want = 'blocked by "lock-holder" (virtual, unmounted, '
    try:
        def pinned(t):
            return [c for jv in t["jvms"] if jv["pid"] == r.proc.pid for c in jv["carriers"]
                    if c["state"] == "pinned" and c["blocker"]]
        carriers = pinned(coll.wait_for(coll.top, lambda t: len(pinned(t)) == 2, timeout=60))
        for c in carriers:
            check(c["blocker"] and c["blocker"].startswith(want) and
                  " holding a java.util.concurrent.locks.ReentrantLock$NonfairSync at LockChain.hold(" in c["blocker"],
                  "top --json names the lock's owner: %s" % c)
        text = subprocess.run([VTPIN, "top", "--once", "--socket", coll.socket], capture_output=True, text=True,
                              timeout=30).stdout
        rows = [l for l in text.splitlines() if want in l]
        check(len(rows) == 2, "each pinned carrier's row shows the owner:\n" + text)
        said = coll.wait_for(coll.log, lambda log: DEADLOCK in log, timeout=60)
        line = next(l for l in said.splitlines() if DEADLOCK in l)
        print(line)
        check('"lock-holder" (virtual thread ' in line and "holds the java.util.concurrent.locks.ReentrantLock$"
              "NonfairSync that \"lock-waiter-" in line and "can release it only on a carrier" in line and
              line.count(" by \"lock-waiter-") == 2 and line.count('waits for \"lock-holder\")') == 2,
              "the deadlock names the owner, the lock, each carrier and its waiter: %s" % line)
        check(DEADLOCK in r.stderr(), "the agent's log says it too:\n" + r.stderr())
        # and the collector's live views: status and top (JSON and text), the metric
        jv = coll.jvm(r.proc.pid)
        check(jv["deadlock"] and jv["deadlock"]["kind"] == "carrier_starvation" and DEADLOCK in jv["deadlock"]["text"]
              and jv["deadlock"]["found"] == 1, "status --json has the deadlock: %s" % jv.get("deadlock"))
        tops = [jv for jv in coll.top()["jvms"] if jv["pid"] == r.proc.pid]
        check(tops and tops[0]["deadlock"] and tops[0]["deadlock"]["kind"] == "carrier_starvation",
              "top --json has it: %s" % (tops and tops[0].get("deadlock")))
        for cmd in ("status", "top"):
            text = subprocess.run([VTPIN, cmd] + (["--once"] if cmd == "top" else []) + ["--socket", coll.socket],
                                  capture_output=True, text=True, timeout=30).stdout
            check("  DEADLOCK (carrier_starvation, found live " in text and DEADLOCK in text,
                  "vtpin %s says it:\n%s" % (cmd, text))
        check(select(samples(coll.scrape()), "vtpin_deadlocks_total", jvm=r.proc.pid)[0][1] == 1,
              "the metric counts it")
        # the starvation alert (both carriers pinned over the default 1 s) names it: at its start, or
        # said again once the deadlock was found, whichever came first
        alert = "JVM pid %d: carrier starvation" % r.proc.pid
        said = coll.wait_for(coll.log, lambda log: any(alert in l and "; DEADLOCK (carrier_starvation, "
                                                       "docs/deadlocks.md): " in l for l in log.splitlines()),
                             timeout=60)
        print(next(l for l in said.splitlines() if alert in l and "; DEADLOCK (" in l))
        check(r.proc.poll() is None, "the program hangs: every carrier is pinned behind the unmounted owner")
        r.kill()  # SIGKILL, as a hung process is ended
        notices = [n for n in report_json(r.record)["notices"] if n["code"] == "deadlock.carrier_starvation"]
        check(len(notices) == 1 and notices[0]["severity"] == "error" and DEADLOCK in notices[0]["text"],
              "the killed JVM's recording holds the deadlock, once: %s" % notices)
    finally:
        r.kill()
        coll.kill(signal.SIGTERM)


def starvation_said(r):
    """The agent's carrier-starvation line on the hung JVM r's log, once it is there."""
    marker = "deadlock (carrier starvation)"
    wait_ready(r.proc, os.path.join(r.dir, "stderr.txt"), marker, timeout=60)
    line = next(l for l in r.stderr().splitlines() if marker in l)
    print(line)
    return line


def killed_holds(r, line):
    """r still hangs; SIGKILLed, as a hung process is ended, its recording holds the line, once."""
    check(r.proc.poll() is None, "the program hangs: every carrier is pinned behind the unmounted owner")
    r.kill()
    notices = [n for n in report_json(r.record)["notices"] if n["code"] == "deadlock.carrier_starvation"]
    check(len(notices) == 1 and notices[0]["text"] in line, "the killed JVM's recording holds it, once: %s" % notices)


def case_monitor_deadlock(jdk):
    """24+, the incident with a monitor: 2 carriers, both pinned by waiters (under a native frame)
    blocked entering a monitor whose owner, a virtual thread, unmounted as it slept holding it, and
    can never mount again to leave it. The agent says it is a carrier-starvation deadlock, naming the
    owner and the monitor, on its log and in its recording, which holds it after the hung JVM is
    killed."""
    jdk = int(jdk)
    r = Run(jdk, "LockOwner", args=("virtual", 2, 200), props=scheduler(2)).start()
    try:
        line = starvation_said(r)
        check(DEADLOCK + ", each by an entry to a monitor whose owner is a virtual thread on no carrier; "
              '"vlock-owner" (virtual thread ' in line and "holds the java.lang.Object monitor that \"waiter-" in line
              and line.count(' by "waiter-') == 2 and line.count('waits for "vlock-owner")') == 2,
              "the deadlock names the owner, the monitor, each carrier and its waiter: %s" % line)
        killed_holds(r, line)
    finally:
        r.kill()


def case_chain_deadlock(jdk):
    """The incident one hop longer: 2 carriers, both pinned by waiters parked on a ReentrantLock that
    a platform thread holds, itself parked on a second ReentrantLock held by a virtual thread that
    unmounted as it slept. That one needs a carrier to go on, and the platform thread waits for it:
    the agent follows the chain and says it is a carrier-starvation deadlock, naming both owners; the
    killed JVM's recording holds it."""
    jdk = int(jdk)
    r = Run(jdk, "LockChain", args=("lock", 2, 200, "chained-to-virtual"), props=scheduler(2)).start()
    try:
        line = starvation_said(r)
        check(DEADLOCK + ", each by a park on a java.util.concurrent lock whose owner is, or waits for, a virtual "
              'thread on no carrier; "deep-holder" (virtual thread ' in line and
              'holds what "lock-holder" waits for, which holds the %s that "lock-waiter-' % SYNC["lock"] in line and
              line.count('waits for "lock-holder", which waits for "deep-holder")') == 2,
              "the deadlock names both owners, the lock, each carrier and its waiter: %s" % line)
        killed_holds(r, line)
    finally:
        r.kill()


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
    # (a park, MONITOR on 21, is looked at too: its lock's owner)
    blockable = [p for p in rep["pins"]
                 if p["reason"] in ("MONITOR_ENTER", "OBJECT_WAIT", "NATIVE", "CRITICAL_SECTION", "MONITOR")]
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
    raise SystemExit(main({"owner": case_owner, "notify": case_notify, "live": case_live, "lock": case_lock,
                           "chain": case_chain, "monitor_deadlock": case_monitor_deadlock,
                           "chain_deadlock": case_chain_deadlock,
                           "lock_attach": case_lock_attach, "lock_live": case_lock_live,
                           "lock_hog_live": case_lock_hog_live, "lock_hog_ends": case_lock_hog_ends}))
