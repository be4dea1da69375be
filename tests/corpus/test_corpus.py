#!/usr/bin/env python3
"""Replays a recorded input (tests/corpus/NAME.vtp, captured once from a real run by capture.py)
through the real `vtpin report`, without a JVM or a clock, and checks:

1. determinism: two runs of `vtpin report --format json` give the same bytes;
2. the golden: what the report computes from these inputs (the pin machine's pins, the kernel join,
   attach bounds, held-time accounting, hogs, blockers, sites, counters) equals NAME.expected.json,
   field for field;
3. the proof: the same facts the live test asserted of that run (NAME.run.json keeps what the run
   itself said: BackToBack's round times, JFR's pinned events), so the golden is not merely what
   the code said the day it was written. A golden that the proof rejects cannot be committed.

usage: test_corpus.py NAME [--update]   (--update rewrites NAME.expected.json, after the proof)
Environment: VTPIN_BUILD, the build directory (its vtpin)."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "jvm"))

from harness import (CLOCKS_AGREE_NS, VTPIN, Failure, check, check_one_pin_per_round, check_timed_like_jfr,  # noqa: E402
                     culprit, jfr_duration_ns, jfr_instant_ns, native_block_in)


def vtpin_report(name, fmt):
    # run in HERE on the bare file name: the report names the file it read
    p = subprocess.run([VTPIN, "report", "--format", fmt, name + ".vtp"], cwd=HERE, capture_output=True, timeout=60)
    check(p.returncode == 0, "vtpin report --format %s %s.vtp exits 0: %d %s" % (fmt, name, p.returncode, p.stderr))
    check(p.stderr == b"", "no warning for a sound recording: %s" % p.stderr)
    return p.stdout


def frame(f):
    return "%s.%s" % (f["class"], f["method"]) if f else None


def extract(rep):
    """The computed fields of a report: what a change to the report's passes would move."""
    def kernel(k):
        if k is None:
            return None
        return {"state": k["state"], "syscall": k["syscall"], "off_cpu_ns": k["off_cpu_ns"],
                "runqueue_ns": k["runqueue_ns"], "intervals": k["intervals"],
                "parks": [[q["start_ns"], q["duration_ns"], q["state"], q.get("vthread_id"), q.get("java_wait")]
                          for q in k["parks"]]}

    def blocker(b):
        if b is None:
            return None
        t = b["thread"]
        return {"what": b["what"], "object_class": b["object_class"], "state": b["state"], "pin": b["pin"],
                "thread": t and {"name": t["name"], "id": t["id"], "virtual": t["virtual"],
                                 "carrier": t["carrier"]},
                "stack": [frame(f) for f in b["stack"]]}

    rec = rep["recording"]
    st = rep["stats"] or {}
    kt = rep["kernel_times"]
    return {
        "jvm": {k: rep["jvm"][k] for k in ("mode", "jdk_feature", "java_version", "parallelism")},
        "threshold_ns": rep["threshold_ns"],
        "recording": {k: rec[k] for k in ("start_unix_ns", "end_unix_ns", "duration_ns", "complete", "sessions",
                                          "events", "unknown_refs", "unmatched_pin_ends", "duplicate_pin_events",
                                          "pins_split", "pins_sampled", "pins_bounded")},
        "pins": [{"id": p["id"], "reason": p["reason"], "origin": p["origin"], "vthread": p["vthread"],
                  "carrier_tid": p["carrier"]["tid"], "start_ns": p["start_ns"], "duration_ns": p["duration_ns"],
                  "ongoing": p["ongoing"], "timed_by": p["timed_by"], "split_from": p["split_from"],
                  "culprit": frame(culprit(p)), "blocked_in": p["blocked_in"], "kernel": kernel(p["kernel"]),
                  "blocker": blocker(p["blocker"])} for p in rep["pins"]],
        "hogs": [{"id": h["id"], "vthread": h["vthread"], "carrier_tid": h["carrier"]["tid"],
                  "start_ns": h["start_ns"], "end_ns": h["end_ns"], "duration_ns": h["duration_ns"],
                  "last_running_ns": h["last_running_ns"], "ongoing": h["ongoing"], "culprit": frame(h["culprit"])}
                 for h in rep["hogs"]],
        "sites": [{"origin": s["origin"], "reason": s["reason"], "culprit": frame(s["culprit"]), "count": s["count"],
                   "total_ns": s["total_ns"], "max_ns": s["max_ns"]} for s in rep["sites"]],
        "notices": [[n["code"], n["severity"], n["text"]] for n in rep["notices"]],
        "stats": {k: st.get(k) for k in ("pins", "pins_reported", "pins_below_threshold", "hogs", "sample_gaps",
                                         "sample_gap_max_ns", "blockers_skipped", "events_dropped")},
        "kernel_times": kt and [{"tid": c["tid"], "name": c["name"], "on_cpu_ns": c["on_cpu_ns"],
                                 "off_cpu_ns": c["off_cpu_ns"], "runqueue_ns": c["runqueue_ns"],
                                 "held_ns": c["held_ns"], "held_in_pins_ns": c["held_in_pins_ns"],
                                 "unexplained": c["unexplained"]} for c in kt["carriers"]],
    }


def first_difference(a, b, where="$"):
    """Where two JSON values first differ, as a path and both values (short)."""
    if type(a) is not type(b):
        return "%s: %r != %r" % (where, a, b)
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return "%s.%s: only in %s" % (where, k, "the report" if k in a else "the golden")
            d = first_difference(a[k], b[k], "%s.%s" % (where, k))
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, "%s[%d]" % (where, i))
            if d:
                return d
        return None if len(a) == len(b) else "%s: %d items, golden %d" % (where, len(a), len(b))
    return None if a == b else "%s: %r, golden %r" % (where, a, b)


# ---- the proofs: what the live run showed, asserted of its recording ----

def rounds(facts):
    out = {}
    for line in facts["rounds"]:
        name, _, times = line.partition(" sleeps_from_unix_ns=")
        out[name] = [int(t) for t in times.split(",")]
    return out


def back_to_back(rep):
    pins = [p for p in rep["pins"] if any(f["class"] == "BackToBack" for f in p["stack"])]
    return list({p["id"]: p for p in pins}.values())


def held(rep):
    return [c for c in rep["kernel_times"]["carriers"] if c["held_ns"]]


def all_held_in_pins(rep, at_least_ns):
    """test_kernel.check_explained: pins explain at least 99 % of each carrier's held time."""
    hs = held(rep)
    check(sum(c["held_ns"] for c in hs) >= at_least_ns, "held at least %d ns: %s" % (at_least_ns, hs))
    for c in hs:
        check(c["held_in_pins_ns"] <= c["held_ns"] and c["held_in_pins_ns"] * 100 >= c["held_ns"] * 99,
              "pins explain 99 %% of %s's held time: %s" % (c["name"], c))
    check(not [n for n in rep["notices"] if n["code"] == "kernel.held_unexplained"], "no unexplained notice")


def prove_b2b_attach(rep, text, facts):
    """test_kernel.case_back_to_back_attach: one pin per round (BackToBack printed when each began),
    each the kernel's park of that round (split from a sampled pin, its one sleep), held time in pins."""
    pins = back_to_back(rep)
    check(rep["jvm"]["mode"] == "attach" and rep["recording"]["pins_split"] >= 1, "split after attach: %s" %
          rep["recording"])
    check_one_pin_per_round(pins, rounds(facts), 40, rep["stats"], facts["sleep_ns"])
    for p in pins:
        ks = p["kernel"]["parks"]
        check(p["split_from"] is not None and p["timed_by"] == "kernel" and p["reason"] == "MONITOR",
              "timed by the kernel: %s" % p)
        check(len(ks) == 1 and ks[0]["state"] == "sleeping" and ks[0]["start_ns"] == p["start_ns"] and
              ks[0]["duration_ns"] == p["duration_ns"], "the pin is its park: %s" % p)
        check(facts["sleep_ns"] * 9 // 10 <= p["duration_ns"] <= facts["sleep_ns"] * 2, "a ~30 ms park: %s" % p)
    all_held_in_pins(rep, 1_000_000_000)
    check("split into the parks the kernel view saw" in text, "the text report says so")


def prove_b2b_held(rep, text, facts):
    """test_kernel.case_held_explained (BackToBack sleep) and case_back_to_back_startup: at startup
    every round is one MONITOR pin with its kernel sleep; the carriers' held time lies in the pins."""
    pins = [p for p in back_to_back(rep) if p["reason"] == "MONITOR"]
    # the agent saw one pin per round (40), and reported all but those below its threshold (a round whose
    # thread got its carrier back late parks only for the rest of its sleep: JFR agrees); each reported pin
    # is the one of its round, and the rounds without one are exactly as many as the pins below
    st = rep["stats"]
    check(st["pins"] == 40 and st["pins_reported"] + st["pins_below_threshold"] == 40, "40 pins seen: %s" % st)
    by_round = {}
    for p in pins:
        times = rounds(facts)[p["vthread"]["name"]]
        r = max([i for i, t in enumerate(times) if t <= p["start_ns"] + CLOCKS_AGREE_NS] or [-1])
        check(r >= 0 and (p["vthread"]["name"], r) not in by_round, "one pin per round: %s" % p)
        by_round[(p["vthread"]["name"], r)] = p
        nxt = times[r + 1] if r + 1 < len(times) else None
        end = p["start_ns"] + p["duration_ns"]
        check(end + CLOCKS_AGREE_NS >= times[r] + facts["sleep_ns"] and (nxt is None or end <= nxt + CLOCKS_AGREE_NS),
              "the pin ends at its round's deadline, before the next round: %s" % p)
    check(len(pins) == 40 - st["pins_below_threshold"], "%d pins, %d below" % (len(pins), st["pins_below_threshold"]))
    for p in pins:
        k = p["kernel"]
        check(p["timed_by"] == "agent" and p["split_from"] is None, "hooked, timed by the agent: %s" % p)
        check(k and 1 <= len(k["parks"]) <= 2 and k["parks"][0]["state"] == "sleeping", "its kernel park: %s" % p)
    check(len({p["kernel"]["parks"][0]["start_ns"] for p in pins}) == len(pins), "a distinct park per pin")
    all_held_in_pins(rep, 400_000_000)
    check("in pins" in text, "the text report shows the held time")


def prove_native_held(rep, text, facts):
    """test_kernel.case_held_explained (NativeBlock sleeps): one NATIVE_BLOCK per call, timed by the
    kernel from its first sleep to its last; 100 % of 1.4 s per carrier in pins."""
    blocks = [p for p in rep["pins"] if native_block_in(p, "NativeBlock")]
    check(len(blocks) == 2, "one NATIVE_BLOCK per call: %s" % [p["reason"] for p in rep["pins"]])
    for p in blocks:
        parks = p["kernel"]["parks"]
        check(p["timed_by"] == "kernel" and p["start_ns"] == parks[0]["start_ns"] and
              p["start_ns"] + p["duration_ns"] == parks[-1]["start_ns"] + parks[-1]["duration_ns"],
              "timed by the kernel, from its first sleep to its last: %s" % p)
    all_held_in_pins(rep, 2_000_000_000)
    check("in pins" in text, "the text report shows the held time")


def prove_native_unexplained(rep, text, facts):
    """test_kernel.case_held_explained, threshold=60s: no pin, a notice per carrier naming its largest
    unexplained sleep, a 100 ms nanosleep in native."""
    check(not [p for p in rep["pins"] if native_block_in(p, "NativeBlock")], "no pin reported")
    said = [n for n in rep["notices"] if n["code"] == "kernel.held_unexplained"]
    check(len(said) == 2, "a notice per carrier: %s" % said)
    for c in held(rep):
        u = c["unexplained"]
        check(u and u["outside_pins_ns"] >= 90_000_000 and u["java_wait"] == "in_native" and
              any("nanosleep" in f for f in u["stack"]), "a 100 ms nanosleep in native: %s" % c)
        check(any(c["name"] in n["text"] and "below the threshold" in n["text"] and
                  "kernel stack: do_nanosleep" in n["text"] for n in said), "the notice names %s" % c["name"])
    check("kernel.held_unexplained" in text, "the text report lists the notice")


def prove_hogs(rep, text, facts):
    """test_hogs.case_spin: one hog per spinning thread, at CarrierHog.spin, 200 ms to 1.3 s, nothing pinned."""
    hogs = rep["hogs"]
    check(sorted(h["vthread"]["name"] for h in hogs) == ["spin-0", "spin-1"], "one hog per thread: %s" % hogs)
    for h in hogs:
        check(frame(h["culprit"]) == "CarrierHog.spin" and not h["ongoing"] and
              200_000_000 <= h["duration_ns"] <= 1_300_000_000, "a hog of CarrierHog.spin: %s" % h)
        check(h["carrier"]["name"].startswith("ForkJoinPool") and h["carrier"]["tid"] > 0, "its carrier: %s" % h)
    check(rep["stats"]["hogs"] == 2, "stats.hogs")
    check(not [p for p in rep["pins"] if p["origin"] == "app"], "nothing pinned")
    check("carrier hogs" in text and "CarrierHog.spin(CarrierHog.java:" in text, "the text report's hogs")


def prove_blockers(rep, text, facts):
    """test_blockers.case_owner pinned: three waiters blocked entering the monitor of a virtual owner
    pinned itself (holding it through a 300 ms sleep); each names it, parked, with its pin linked."""
    waits = [p for p in rep["pins"] if (p["vthread"]["name"] or "").startswith("waiter-")]
    owner = [p for p in rep["pins"] if p["vthread"]["name"] == "vlock-owner"]
    check(len(waits) == 3 and len(owner) == 1, "3 waiters and the owner pinned: %s" % [p["reason"] for p in rep["pins"]])
    for p in waits:
        b = p["blocker"]
        check(p["reason"] == "MONITOR_ENTER" and b and b["what"] == "monitor" and
              b["object_class"] == "java.lang.Object" and b["state"] == "parked", "the monitor: %s" % b)
        t = b["thread"]
        check(t["name"] == "vlock-owner" and t["virtual"] is True and t["carrier"].startswith("ForkJoinPool"),
              "its owner: %s" % t)
        check(b["pin"] == owner[0]["id"] and "LockOwner.holdLong" in [frame(f) for f in b["stack"]],
              "the owner's pin and stack: %s" % b)
        check(owner[0]["start_ns"] <= p["start_ns"] <= owner[0]["start_ns"] + owner[0]["duration_ns"],
              "blocked while the owner held it")
    calls = rep["stats"]["jvmti_calls"]
    check(calls["GetObjectMonitorUsage"] == 3, "one monitor usage per blocker: %s" % calls)
    check('blocked by "vlock-owner" (virtual on ' in text, "the text report names the owner")


def prove_repro(rep, text, facts):
    """test_pins.case_jfr_crosscheck Repro: at threshold 0, one pin per JFR jdk.VirtualThreadPinned
    event of the same run, per virtual thread, each overlapping its event and no other."""
    mine = [p for p in rep["pins"] if any(f["class"].split("$")[0] == "Repro" for f in p["stack"])
            and p["reason"] in ("MONITOR", "NATIVE", "CRITICAL_SECTION")]
    # start_ns: JFR's start in the report's times (harness.jfr_pinned_events); a capture older than it
    # kept JFR's own Unix time, from a machine whose wall clock was not stepped during the run
    events = [{"values": {"eventThread": {"javaThreadId": e["javaThreadId"]}, "startTime": e["startTime"],
                          "duration": e["duration"]}, "start_ns": e.get("start_ns", jfr_instant_ns(e["startTime"]))}
              for e in facts["jfr_pinned"] if e["touches"]]
    check(len(mine) == len(events) and len(mine) >= 100, "vtpin %d pins, JFR %d events" % (len(mine), len(events)))
    check_timed_like_jfr(mine, events)


def prove_alternating(rep, text, facts, kernel):
    """test_attach_exact.py alternating_sampled / _kernel: after attach, the holders of the one monitor
    (MONITOR pins at AlternatingMonitor.round) never overlap each other nor a wait to enter of their own
    virtual thread: what the attach bounds (sampled) and the kernel's split make of sampled parks. With
    the kernel view, also their count and total within 5 % of JFR's events of the same JVM, and each
    holder at least half within a JFR event of its thread."""
    from test_attach_exact import SHARE, TOLERANCE_NS, holder, overlap_ns
    pins = list({p["id"]: p for p in rep["pins"]}.values())
    site = tuple(facts["site"])
    holders = sorted((p for p in pins if holder(p, site)), key=lambda p: p["start_ns"])
    events = [{"start_ns": e.get("start_ns", jfr_instant_ns(e["startTime"])), "tid": e["javaThreadId"],
               "duration_ns": jfr_duration_ns({"values": {"duration": e["duration"]}})} for e in facts["jfr_pinned"]]
    check(rep["jvm"]["mode"] == "attach" and holders, "holders after attach: %d" % len(holders))
    check(len(events) >= facts["holds"] - 1, "JFR saw the holds park: %d for %d" % (len(events), facts["holds"]))
    overlaps = [(a["id"], b["id"]) for i, a in enumerate(holders) for b in holders[i + 1:]
                if overlap_ns(a, b) > TOLERANCE_NS]
    check(not overlaps, "no two holders of the one monitor overlap: %s" % overlaps)
    enters = [p for p in pins if p["reason"] == "MONITOR_ENTER" and p["duration_ns"] is not None]
    check(enters, "the waits to enter are there to bound the holders")
    waits = [(h["id"], w["id"]) for h in holders for w in enters
             if w["vthread"]["id"] == h["vthread"]["id"] and overlap_ns(h, w) > TOLERANCE_NS]
    check(not waits, "no wait to enter is a hold: %s" % waits)
    if kernel:
        total, jfr_total = sum(p["duration_ns"] for p in holders), sum(e["duration_ns"] for e in events)
        check(abs(len(holders) - len(events)) <= SHARE * len(events) and abs(total - jfr_total) <= SHARE * jfr_total,
              "within 5 %% of JFR: %d holders %d ns, JFR %d events %d ns" % (len(holders), total, len(events),
                                                                            jfr_total))
        outside = [p["id"] for p in holders if max([overlap_ns(p, e) for e in events
                                                    if e["tid"] == p["vthread"]["id"]] or [0]) < p["duration_ns"] // 2]
        check(not outside, "every holder lies within a JFR event of its thread: %s" % outside)
    else:
        check(rep["recording"]["pins_sampled"] > 0 and rep["recording"]["pins_bounded"] > 0,
              "sampled parks, some bounded: %s" % rep["recording"])


PROOFS = {"alternating_sampled": lambda r, t, f: prove_alternating(r, t, f, False),
          "alternating_kernel": lambda r, t, f: prove_alternating(r, t, f, True),
          "alternating_long": lambda r, t, f: prove_alternating(r, t, f, False),
          "b2b_attach": prove_b2b_attach, "b2b_held": prove_b2b_held, "native_held": prove_native_held,
          "native_unexplained": prove_native_unexplained, "hogs": prove_hogs, "blockers": prove_blockers,
          "repro": prove_repro}


def run(name, update):
    with open(os.path.join(HERE, name + ".run.json")) as f:
        facts = json.load(f)
    out = vtpin_report(name, "json")
    check(vtpin_report(name, "json") == out, "the same input gives the same report, byte for byte")
    rep = json.loads(out)
    text = vtpin_report(name, "text").decode()
    PROOFS[name](rep, text, facts)
    got = extract(rep)
    golden = os.path.join(HERE, name + ".expected.json")
    if update:
        with open(golden, "w") as f:
            json.dump(got, f, indent=1, sort_keys=True)
            f.write("\n")
        print("wrote %s" % golden)
        return
    with open(golden) as f:
        want = json.load(f)
    d = first_difference(got, want)
    check(d is None, "the report of %s.vtp differs from %s.expected.json: %s" % (name, name, d))
    print("%s: %d pins, %d hogs, %d notices as recorded in the golden" % (
        name, len(got["pins"]), len(got["hogs"]), len(got["notices"])))


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in PROOFS:
        print("usage: %s NAME [--update]\nnames: %s" % (sys.argv[0], " ".join(sorted(PROOFS))))
        sys.exit(2)
    if not os.path.exists(VTPIN):
        print("FAIL: %s missing: build first" % VTPIN)
        sys.exit(1)
    try:
        run(sys.argv[1], "--update" in sys.argv[2:])
    except Failure as e:
        print("FAIL: %s" % e)
        sys.exit(1)
    print("PASS: %s" % sys.argv[1])
