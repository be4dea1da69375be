#!/usr/bin/env python3
"""The collector's kernel view (libbpf) with real JVMs and the real agent: kernel
off-CPU intervals joined to pins in the collector's recording and report, kernel
times in status/top while a carrier sleeps, and the unavailable path with the
capabilities dropped. Needs root (CAP_BPF, CAP_PERFMON) and a kernel with BTF."""
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import time

from collector_fixture import CollectorProcess
from harness import (CLASSES, CLOCKS_AGREE_NS, VTPIN, Failure, Run, back_to_back_rounds, check, check_one_pin_per_round,
                     class_init_wait, describe, forget_stale_attach_socket, jfr_options, jfr_parks_by_round,
                     jfr_pinned_events, main, native_block_in, report_json, scheduler, set_aside, skip, tempdir,
                     wait_ready)

BTF = "/sys/kernel/btf/vmlinux"
DROP_CAPS = ["setpriv", "--inh-caps=-all", "--bounding-set=-all", "--"]


def need_kernel_view():
    if not os.path.exists(BTF):
        skip("the kernel has no BTF (%s): the kernel view cannot load" % BTF)
    if os.geteuid() != 0:
        skip("the kernel view needs CAP_BPF and CAP_PERFMON: run as root (CI does)")


class Collector(CollectorProcess):
    """This file's collector, in a fresh temporary directory, under an optional command prefix."""

    def __init__(self, args=(), prefix=()):
        super().__init__(tempdir(prefix="vtpin-kernel-test-"), *args, prefix=prefix)
        self.logpath = self.log_path

    def recordings(self):
        return sorted(glob.glob(os.path.join(self.sessions, "*")))

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def streaming(jdk, coll, fixture, args=(), props=(), stdin_pipe=False):
    return Run(jdk, fixture, args=args, props=props, agent_opts="collector=%s" % coll.socket, stdin_pipe=stdin_pipe)


def wait_tracked(coll, r, n):
    """Until the collector tracks n carriers of r's JVM in the kernel view."""
    coll.wait_for(lambda: coll.ask("status"),
                  lambda s: any(j["pid"] == r.proc.pid and j["connected"] and
                                sum(1 for c in j["kernel_carriers"] if c["kernel"]) >= n for j in s["jvms"]))


def names_nanosleep(k):
    return "nanosleep" in (k.get("syscall") or "") or any("nanosleep" in f for f in k["stack"])


def check_timed_by_kernel(p):
    """A watchdog block timed by the kernel: from the start of the sleep the watchdog found it in
    to the end of its last sleep, not a sample period late at either end."""
    parks = p["kernel"]["parks"]
    check(p["timed_by"] == "kernel" and parks, "timed by the kernel: %s" % p)
    check(p["start_ns"] == parks[0]["start_ns"], "starts as its first sleep: %s vs %s" % (p["start_ns"], parks))
    check(p["start_ns"] + p["duration_ns"] == parks[-1]["start_ns"] + parks[-1]["duration_ns"],
          "ends as its last sleep: %s vs %s" % (p, parks))


def case_native_block(jdk):
    """NativeBlock in nanosleep: while the carriers sleep, status/top show them off CPU
    (seen as they cross the minimum, not when they wake); afterwards every NATIVE_BLOCK
    pin of the collector's recording carries the kernel's interval naming the sleep."""
    need_kernel_view()
    jdk = int(jdk)
    coll = Collector(["--kernel=on"]).start()
    d = tempdir(prefix="vtpin-native-block-")
    go = os.path.join(d, "go")
    r = None
    try:
        st = coll.ask("status")
        kv = st["collector"]["kernel_view"]
        check(kv["enabled"] is True, "kernel view on: %s" % kv)
        # read before any agent came: loading them at the first interval stalled the loop as pins came in
        check(kv["kernel_symbols"] > 1000, "kernel symbols loaded at start: %s" % kv)
        r = streaming(jdk, coll, "NativeBlock", args=("nanosleep", 2, 3000, go), props=scheduler(2)).start()
        # the blocks begin once the collector tracks both (warmed-up) carriers: a carrier tracked
        # after its block began has only /proc's word that it sleeps, from then on (no start)
        wait_tracked(coll, r, 2)
        open(go, "w").close()

        def sleeping(top):
            cs = [c for jv in top["jvms"] if jv["pid"] == r.proc.pid for c in jv["carriers"]]
            return [c for c in cs if c.get("kernel") and c["kernel"]["state"] == "sleeping"
                    and (c["kernel"]["off_cpu_for_ns"] or 0) >= 100_000_000 and c["state"] == "native_block"]
        top = coll.wait_for(lambda: coll.ask("top", "--once"), lambda t: len(sleeping(t)) == 2)
        for c in sleeping(top):
            k = c["kernel"]
            print("carrier while blocked: %s" % json.dumps(c))
            check(k["host_tid"] > 0 and k["off_cpu_ns"] >= k["off_cpu_for_ns"], "kernel times of a tracked carrier: %s" % k)
            check(k["syscall"] in ("nanosleep", "clock_nanosleep"), "the syscall in progress: %s" % k)
        st = coll.ask("status")
        check(st["collector"]["kernel_view"]["carriers_tracked"] >= 2, "tracked: %s" % st["collector"])
        check(st["collector"]["kernel_view"]["crossings"] >= 2, "crossings seen by the scan: %s" % st["collector"])
        jv = [j for j in st["jvms"] if j["pid"] == r.proc.pid][0]
        check(len(jv["kernel_carriers"]) >= 2 and all(c["kernel"] for c in jv["kernel_carriers"]),
              "status lists per-carrier kernel times: %s" % jv["kernel_carriers"])
        r.wait(60)
        coll.wait_for(lambda: coll.ask("status"),
                      lambda s: not [j for j in s["jvms"] if j["pid"] == r.proc.pid and j["connected"]])
        coll.stop()
        recs = coll.recordings()
        check(len(recs) == 1, "one recording: %s" % recs)
        rep = report_json(recs[0])
        blocks = [p for p in rep["pins"] if native_block_in(p, "NativeBlock")]
        check(len(blocks) == 2, "two NATIVE_BLOCK pins: %s" % [p["reason"] for p in rep["pins"]])
        for p in blocks:
            k = p["kernel"]
            print("pin kernel: %s" % json.dumps(k)[:600])
            check(k is not None, "the pin carries the kernel's view: %s" % p)
            check(k["state"] == "sleeping", "state: %s" % k)
            check(names_nanosleep(k), "the syscall or the stack names the sleep: %s" % k)
            check(k["stack"] and not k["stack"][0].startswith("0x"), "a symbolized kernel stack: %s" % k["stack"])
            # the pin covers a 3 s nanosleep: nearly all of it is off CPU
            check(k["off_cpu_ns"] >= p["duration_ns"] // 2, "off CPU %d of %d ns" % (k["off_cpu_ns"], p["duration_ns"]))
            check_timed_by_kernel(p)
            # the fixture's 3 s nanosleep, timed by the kernel to the sleep in progress at the
            # watchdog's last sample (the kernel has been seen to end it in two intervals, the
            # second of a few ms, with no signal in an strace of the same fixture)
            check(2_900_000_000 <= p["duration_ns"] < 3_500_000_000, "a 3 s sleep: %d ns" % p["duration_ns"])
        kt = {c["tid"]: c for c in rep["kernel_times"]["carriers"]}
        for p in blocks:
            c = kt.get(p["carrier"]["tid"])
            check(c and c["off_cpu_ns"] >= p["kernel"]["off_cpu_ns"] and c["name"] == p["carrier"]["name"],
                  "the carrier's kernel times in the report: %s vs %s" % (c, p["kernel"]))
        text = subprocess.run([VTPIN, "report", recs[0]], capture_output=True, text=True, timeout=60).stdout
        check("kernel: sleeping in " in text and "kernel view (collector)" in text,
              "the text report shows the kernel view:\n" + text)
    finally:
        if r:
            r.kill()
            shutil.rmtree(r.dir, ignore_errors=True)
        shutil.rmtree(d, ignore_errors=True)
        coll.cleanup()


def finish(coll, r):
    """Waits for r's JVM to end and leave the collector; stops the collector; returns the report of its recording."""
    r.wait(120)
    coll.wait_for(lambda: coll.ask("status"),
                  lambda s: not [j for j in s["jvms"] if j["pid"] == r.proc.pid and j["connected"]])
    coll.stop()
    recs = coll.recordings()
    check(len(recs) == 1, "one recording: %s" % recs)
    return report_json(recs[0])


def case_cpu_jni(jdk):
    """CPU-bound JNI (NativeBlock burn, 2 x 1.5 s): neither the agent nor the collector
    calls it a block, and the kernel saw the carriers on CPU (or waiting for one) all along."""
    need_kernel_view()
    jdk = int(jdk)
    coll = Collector(["--kernel=on"]).start()
    r = None
    try:
        r = streaming(jdk, coll, "NativeBlock", args=("burn", 2, 1500), props=scheduler(2)).start()
        # while it burns (the machine may be loaded: no timing), top never shows a native block
        while r.proc.poll() is None:
            top = coll.ask("top", "--once")
            cs = [c for jv in top["jvms"] if jv["pid"] == r.proc.pid for c in jv["carriers"]]
            check(all(c["state"] != "native_block" for c in cs), "a CPU-bound carrier shown native-blocked: %s" % cs)
            check(all(c["blocked"] is None for c in cs), "a CPU-bound carrier shown blocked by the kernel: %s" % cs)
            time.sleep(0.1)
        rep = finish(coll, r)
        # the JDK's own short pins (origin jdk, as `vtpin run` sets aside) are not the fixture's, nor are
        # contended entries: NativeBlock has no synchronized code, they are the JDK's own while its
        # virtual threads start (a 3 ms MONITOR_ENTER on 21 under ASan), with NativeBlock's frames below;
        # both capped, so a 1.5 s burn reported as either still fails
        aside = set_aside([p for p in rep["pins"] if p["origin"] == "jdk" or p["reason"] == "MONITOR_ENTER"],
                          "the JDK's own pins and contended entries")
        mine = [p for p in rep["pins"] if p not in aside]
        check(mine == [], "CPU-bound JNI reported as pins: %s" % [(p["reason"], p["kernel"]) for p in mine])
        # each burn lasts 1.5 s of wall clock, all of it on CPU or waiting for one (tracking may
        # begin a little into it: the agent announces its carriers from its writer thread)
        kt = rep["kernel_times"]["carriers"]
        check(any(c["on_cpu_ns"] + c["runqueue_ns"] >= 500_000_000 for c in kt), "burning carriers: %s" % kt)
    finally:
        if r:
            r.kill()
            shutil.rmtree(r.dir, ignore_errors=True)
        coll.cleanup()


def case_class_init(jdk):
    """A class-initialization wait (harness.class_init_wait) through the collector: each VM_BLOCK pin carries the kernel's view of
    the wait (sleeping in futex, inside the JVM)."""
    need_kernel_view()
    jdk = int(jdk)
    coll = Collector(["--kernel=on"]).start()
    r = None
    try:
        fixture, args, _, _, _ = class_init_wait(jdk)
        args = args[:-1] + (1000,)
        # every carrier tracked before a waiter blocks: a new carrier's first sleep, begun before the kernel
        # view tracked it, is not in the kernel's data (a clean-clone run: the block timed by the agent)
        r = streaming(jdk, coll, fixture, args=args, props=scheduler(4) + ["-Dwarmup.carriers=4"],
                      stdin_pipe=True).start()
        wait_ready(r.proc, os.path.join(r.dir, "stdout.txt"), "%s: carriers ready" % fixture)
        wait_tracked(coll, r, 4)
        r.proc.stdin.write(b"go\n")
        r.proc.stdin.close()
        rep = finish(coll, r)
        blocks = [p for p in rep["pins"] if p["reason"] == "VM_BLOCK"]
        check(len(blocks) == 2, "2 VM_BLOCK pins: %s" % [describe(p) for p in rep["pins"]])
        for p in blocks:
            k = p["kernel"]
            print("VM_BLOCK kernel: %s" % json.dumps(k)[:600])
            check(k is not None and k["state"] == "sleeping", "the kernel saw the wait: %s" % p)
            check(k["syscall"] == "futex" or any("futex" in f for f in k["stack"]),
                  "a JVM-internal wait sleeps in futex: %s" % k)
            check(k["off_cpu_ns"] >= p["duration_ns"] // 2, "off CPU %d of %d ns" % (k["off_cpu_ns"], p["duration_ns"]))
            check_timed_by_kernel(p)
    finally:
        if r:
            r.kill()
            shutil.rmtree(r.dir, ignore_errors=True)
        coll.cleanup()


def sleeps_per_vthread(pins, sleep_ns=15_000_000):
    """BackToBack's sleeps per virtual thread (sorted counts): consecutive pins of one
    virtual thread less than 1 ms apart whose parks together last at most 1.2 sleeps are one
    sleep the carrier woke from early and parked again for. (Not their span: a sleep that
    parked late, for only the rest of its time, is followed within 1 ms by the next one; an
    ASan run under load saw 6.5 ms then 15.1 ms, two sleeps.)"""
    counts = []
    for vt in {p["vthread"]["id"] for p in pins}:
        mine = sorted((p for p in pins if p["vthread"]["id"] == vt), key=lambda p: p["start_ns"])
        sleeps = []  # [end, parked]
        for p in mine:
            end = p["start_ns"] + p["duration_ns"]
            if sleeps and p["start_ns"] - sleeps[-1][0] < 1_000_000 and \
                    sleeps[-1][1] + p["duration_ns"] <= sleep_ns * 6 // 5:
                sleeps[-1] = [end, sleeps[-1][1] + p["duration_ns"]]
            else:
                sleeps.append([end, p["duration_ns"]])
        counts.append(len(sleeps))
    return sorted(counts)


# BackToBack's System.nanoTime() against the report's times, both on the monotonic clock
# (back_to_back_rounds): they agree to microseconds, and 5 ms here gave a round whose park began 10 ms
# late (its first sleep) to the next round, which began 4.98 ms after that park. Its Instant.now()
# did not: a CI machine's wall clock was stepped 20 ms after the agent's Hello
CLOCKS_NS = CLOCKS_AGREE_NS


def case_back_to_back_startup(jdk):
    """JDK 21 at startup: 2 virtual threads x 20 rounds of synchronized { sleep(15 ms) }
    make 40 exact MONITOR pins; the kernel's off-CPU intervals match them one to one."""
    need_kernel_view()
    jdk = int(jdk)
    if jdk >= 24:
        skip("synchronized + sleep does not pin on JDK 24+ (JEP 491)")
    coll = Collector(["--kernel=on"]).start()
    d = tempdir(prefix="vtpin-b2b-start-")
    go = os.path.join(d, "go")
    r = None
    try:
        r = streaming(jdk, coll, "BackToBack", args=(2, 20, 15, go), props=scheduler(2)).start()
        # the rounds begin once the collector tracks both (warmed-up) carriers: a pin that starts
        # before its carrier's announcement reached the collector has no kernel view (a clean-clone
        # run under ASan lost the first 13 ms pin so, its carrier tracked after it ended)
        coll.wait_for(lambda: coll.ask("status"),
                      lambda s: any(j["pid"] == r.proc.pid and j["connected"] and
                                    sum(1 for c in j["kernel_carriers"] if c["kernel"]) >= 2 for j in s["jvms"]))
        open(go, "w").close()
        rep = finish(coll, r)
        pins = [p for p in rep["pins"] if p["reason"] == "MONITOR"]
        # Each pin belongs to the round whose sleep began last before it (BackToBack prints when
        # each began): it ends at that round's deadline or later, before the next round began, and
        # every round has a pin, or parked below the threshold (a sleep whose thread got the CPU
        # late parks only for the rest of its time; JFR agrees). A round the carrier woke from
        # early is parked again for the rest: two pins of one round.
        starts = back_to_back_rounds(r.stdout(), rep)
        check(len(starts) == 2 and all(len(v) == 20 for v in starts.values()), "BackToBack's rounds: %s" % starts)
        covered, stray = set(), []
        for p in pins:
            rounds = starts.get(p["vthread"]["name"], [])
            r_i = max([i for i, t in enumerate(rounds) if t <= p["start_ns"] + CLOCKS_NS] or [-1])
            end = p["start_ns"] + p["duration_ns"]
            nxt = rounds[r_i + 1] if 0 <= r_i < len(rounds) - 1 else None
            if r_i < 0 or end + CLOCKS_NS < rounds[r_i] + 15_000_000 or (nxt and end > nxt + CLOCKS_NS):
                stray.append((p["vthread"]["name"], r_i, p["start_ns"], p["duration_ns"]))
            else:
                covered.add((p["vthread"]["name"], r_i))
        below = rep["stats"]["pins_below_threshold"] or 0
        print("%d pins cover %d of the 40 rounds, %d below the threshold" % (len(pins), len(covered), below))
        check(not stray, "every pin is one round's park, ending at its deadline: %s" % stray)
        check(len(covered) + below >= 40,
              "40 rounds in %d pins (%d below the threshold): %d covered" % (len(pins), below, len(covered)))
        seen = set()
        for p in pins:
            k = p["kernel"]
            # the sleep; a carrier that leaves the park into a safepoint or a handshake (the
            # writer taking a stack) sleeps a second time before the pin ends
            check(k and 1 <= len(k["parks"]) <= 2 and k["parks"][0]["state"] == "sleeping",
                  "the pin's kernel park: %s" % p)
            seen.add(k["parks"][0]["start_ns"])
        check(len(seen) == len(pins), "a distinct park for each pin: %d" % len(seen))
    finally:
        if r:
            r.kill()
            shutil.rmtree(r.dir, ignore_errors=True)
        coll.cleanup()


def case_back_to_back_attach(jdk):
    """JDK 21, agent attached after start: 2 virtual threads x 20 rounds of
    synchronized { sleep(30 ms) }. The report of the collector's recording times each park
    the sampler saw by the kernel's sleep of that virtual thread: 40 pins of ~30 ms, one per
    round, each timed by the kernel (split_from), as at startup (case back_to_back_startup), or
    as many as JFR's parks in a round the JDK parked twice in.
    30 ms is three sample periods: a park is seen by a sampler up to 20 ms late (under load or
    ASan); a round may go without a pin only where the agent says its sampler went 30 ms without
    a look (stats.sample_gap_max_ns; seen once in 16 ASan runs beside two CPU burners and a whole CI
    test run, never alone)."""
    need_kernel_view()
    jdk = int(jdk)
    if jdk >= 24:
        skip("synchronized + sleep does not pin on JDK 24+ (JEP 491)")
    coll = Collector(["--kernel=on"]).start()
    d = tempdir(prefix="vtpin-b2b-")
    go = os.path.join(d, "go")
    home = os.environ.get("JAVA%d_HOME" % jdk)
    jfr = os.path.join(d, "pins.jfr")
    out = open(os.path.join(d, "stdout.txt"), "w")
    jvm = subprocess.Popen([os.path.join(home, "bin", "java")] + jfr_options(jfr) + ["-cp", CLASSES] + scheduler(2) +
                           ["BackToBack", "2", "20", "30", go], stdout=out, stderr=subprocess.STDOUT,
                           start_new_session=True)
    try:
        wait_ready(jvm, os.path.join(d, "stdout.txt"), "BackToBack: ready")
        forget_stale_attach_socket(jvm.pid)
        p = subprocess.run([VTPIN, "attach", str(jvm.pid), "collector=%s" % coll.socket], capture_output=True,
                           text=True, timeout=60)
        check(p.returncode == 0, "attach: %s %s" % (p.stdout, p.stderr))
        # the agent found the (warmed-up) carriers and the collector tracks them
        coll.wait_for(lambda: coll.ask("status"),
                      lambda s: any(j["pid"] == jvm.pid and j["connected"] and j["mode"] == "attach" and
                                    sum(1 for c in j["kernel_carriers"] if c["kernel"]) >= 2 for j in s["jvms"]))
        open(go, "w").close()
        check(jvm.wait(timeout=120) == 0, "the JVM failed:\n" + open(os.path.join(d, "stdout.txt")).read())

        class Done:  # finish() wants a Run-like object
            proc = jvm

            @staticmethod
            def wait(timeout):
                pass
        rep = finish(coll, Done)
        pins = [p for p in rep["pins"] if any(f["class"] == "BackToBack" for f in p["stack"])]
        pins = list({p["id"]: p for p in pins}.values())  # a pin re-sent on (re)connection counts once
        split = [p for p in pins if p["split_from"] is not None]
        detail = [(p["id"], p["split_from"], p["duration_ns"] // 1000) for p in pins]
        print("%d pins after attach, %d split from %d sampled pins: %s" %
              (len(pins), len(split), len({p["split_from"] for p in split}), detail))
        check(rep["recording"]["pins_split"] >= 1, "sampled pins split: %s" % rep["recording"])
        for c in held_carriers(rep):
            print("after attach: carrier %s held %.1f ms, %.2f %% in pins; largest unexplained: %s" %
                  (c["name"], c["held_ns"] / 1e6, 100.0 * c["held_in_pins_ns"] / c["held_ns"], c["unexplained"]))
        # Counted exactly: one pin per round, neither the carrier's idle park nor a JDK wait inside
        # a park among them. The collector joins each interval whatever order it reads the agent's
        # events and the ring buffer in (it lost 5-7 parks under load when the agent's batch came first).
        rounds = back_to_back_rounds(open(os.path.join(d, "stdout.txt")).read(), rep)
        check_one_pin_per_round(pins, rounds, 40, rep["stats"], 30_000_000,
                                jfr_parks_by_round(jfr_pinned_events(home, jfr, rep), rounds))
        check(len(split) == len(pins), "every pin timed by the kernel: %s" % detail)
        for p in split:
            # timed by the kernel: a sleep, ~30 ms (generous bounds: not a timing test)
            check(p["duration_ns"] <= 100_000_000, "a pin of ~30 ms: %s" % (p["duration_ns"],))
            check(p["reason"] == "MONITOR", "the sampled pin's reason: %s" % p["reason"])
            ks = p["kernel"]["parks"]
            check(len(ks) == 1 and ks[0]["state"] == "sleeping" and ks[0]["start_ns"] == p["start_ns"] and
                  ks[0]["duration_ns"] == p["duration_ns"], "the pin is its park: %s" % p)
        starts = sorted(p["start_ns"] for p in split)
        check(len(set(starts)) == len(starts), "distinct parks: %s" % starts)
        for vt in {p["vthread"]["id"] for p in split}:
            mine = sorted((p for p in split if p["vthread"]["id"] == vt), key=lambda p: p["start_ns"])
            for a, b in zip(mine, mine[1:]):
                check(a["start_ns"] + a["duration_ns"] <= b["start_ns"], "parks in order, apart: %s %s" % (a, b))
            # A park the carrier woke from early (Thread.sleep then parks again for the rest: the
            # JDK's own second park, which startup mode and JFR count too) is two pins that
            # together last one sleep; joined, each virtual thread slept at most 20 times.
            check(sleeps_per_vthread(mine)[0] <= 20, "at most 20 sleeps per virtual thread in %d pins" % len(mine))
        # the text report counts them too
        text = subprocess.run([VTPIN, "report", coll.recordings()[-1]], capture_output=True, text=True).stdout
        check("split into the parks the kernel view saw" in text, "the text report says so:\n" + text)
    finally:
        if jvm.poll() is None:
            os.killpg(jvm.pid, signal.SIGKILL)
            jvm.wait()
        out.close()
        shutil.rmtree(d, ignore_errors=True)
        coll.cleanup()


def case_unavailable(jdk):
    """Capabilities dropped (setpriv): auto logs one line and runs on without the kernel
    view (status says why); --kernel=on refuses to start with the same reason."""
    jdk = int(jdk)
    if not shutil.which("setpriv"):
        skip("setpriv (util-linux) not installed")
    if os.geteuid() != 0:
        skip("dropping capabilities needs a root test run (as a user there are none to drop)")
    coll = Collector(["--kernel=auto"], prefix=DROP_CAPS).start()
    r = None
    try:
        kv = coll.ask("status")["collector"]["kernel_view"]
        check(kv["enabled"] is False and "CAP_BPF" in kv["reason"], "disabled with a reason: %s" % kv)
        lines = [l for l in coll.log().splitlines() if "kernel view" in l]
        check(len(lines) == 1 and "CAP_BPF" in lines[0], "one log line says why: %s" % lines)
        # the collector runs on as without the kernel view: pins still arrive
        r = streaming(jdk, coll, "JniSleep", args=(6, 100), props=scheduler(2)).start()
        r.wait(60)
        st = coll.wait_for(lambda: coll.ask("status"),
                           lambda s: any(j["pid"] == r.proc.pid and j["pins_total"] >= 6 for j in s["jvms"]))
        jv = [j for j in st["jvms"] if j["pid"] == r.proc.pid][0]
        check(jv["kernel_carriers"] == [], "no kernel times without the kernel view: %s" % jv)
        top = coll.ask("top", "--once")
        cs = [c for j in top["jvms"] for c in j["carriers"]]
        check(cs and all(c["kernel"] is None for c in cs), "top without kernel times: %s" % cs)
    finally:
        if r:
            r.kill()
            shutil.rmtree(r.dir, ignore_errors=True)
        coll.cleanup()
    on = Collector(["--kernel=on"], prefix=DROP_CAPS)
    try:
        with open(on.logpath, "a") as log:
            rc = subprocess.run(on.cmd, stdout=log, stderr=log, timeout=30).returncode
        check(rc == 1, "--kernel=on without privileges exits 1, not %d" % rc)
        check("kernel view (--kernel=on): no CAP_BPF" in on.log(), "it says why:\n" + on.log())
    finally:
        on.cleanup()


def occupancy_shares(jv):
    """The JVM's agent (exact) and kernel occupancy as shares of each source's own total:
    busy (on CPU, mounted), held (asleep in a pin), idle, and the kernel's run queue."""
    ag, ko = jv["agent_occupancy"], jv["kernel_occupancy"]
    at = ag["busy_ns"] + ag["idle_ns"]
    kt = ko["busy_ns"] + ko["held_ns"] + ko["idle_ns"]  # runqueue_ns is a part of them
    check(at > 0 and kt > 0, "both sources accounted time: %s" % jv)
    agent = {"busy": (ag["busy_ns"] - ag["pinned_ns"]) / at, "held": ag["pinned_ns"] / at, "idle": ag["idle_ns"] / at}
    kernel = {k: ko[k + "_ns"] / kt for k in ("busy", "held", "idle", "runqueue")}
    return agent, kernel


def case_occupancy(jdk):
    """OccMix (2 carriers: 8 s of rounds of 30 ms pinned asleep in a JNI upcall, 20 ms of
    CPU, 50 ms with nothing mounted; then 1.5 s idle) with occupancy=exact in the agent and
    the kernel view on: the collector's kernel busy/held/idle per JVM are within 2 % of the
    exact source's (exact busy minus pinned against kernel busy). Asked once, in the idle
    tail: the agent's events arrive in batches, and a query accounts each carrier up to its
    time with the state last heard of, so asking mid-round would skew the exact source.
    Measured on a shared 2-core VM: within 1 %. With two extra CPU hogs the kernel's held
    share fell 3-4 % short at the default --kernel-min=1ms (sub-millisecond off-CPU slices
    inside pins count as idle) and was within 1 % again at 50us: VTPIN_TEST_KMIN=50us
    passes --kernel-min to the collector to measure that."""
    need_kernel_view()
    jdk = int(jdk)
    coll = Collector(["--kernel=on"] + (["--kernel-min", os.environ["VTPIN_TEST_KMIN"]] if os.environ.get("VTPIN_TEST_KMIN") else [])).start()
    r = None
    try:
        r = Run(jdk, "OccMix", args=(8, 2, 30, 20, 50, 1500), props=scheduler(2),
                agent_opts="collector=%s,occupancy=exact" % coll.socket).start()

        def jvm(s):
            js = [j for j in s["jvms"] if j["pid"] == r.proc.pid]
            return js[0] if js else None
        coll.wait_for(lambda: coll.ask("status"),
                      lambda s: jvm(s) and jvm(s)["kernel_occupancy"] and jvm(s)["kernel_occupancy"]["carriers"] == 2)
        deadline = time.monotonic() + 120
        while "rounds done" not in open(os.path.join(r.dir, "stdout.txt")).read():
            check(r.proc.poll() is None and time.monotonic() < deadline, "OccMix ended its rounds")
            time.sleep(0.05)
        time.sleep(0.5)  # the last events are in
        jv = jvm(coll.ask("status"))
        check(r.proc.poll() is None, "OccMix still running when asked")
        check(jv["occupancy"] == "exact" and jv["agent_occupancy"]["source"] == "exact", "exact source: %s" % jv)
        check(jv["occupancy_source"] == "kernel", "the kernel is the source when tracking: %s" % jv)
        agent, kernel = occupancy_shares(jv)
        print("agent (exact): %s" % {k: round(100 * v, 2) for k, v in agent.items()})
        print("kernel:        %s" % {k: round(100 * v, 2) for k, v in kernel.items()})
        print("agent: %s\nkernel: %s" % (jv["agent_occupancy"], jv["kernel_occupancy"]))
        for k in ("busy", "held", "idle"):
            v = kernel[k]
            check(abs(v - agent[k]) <= BOUND, "%s: kernel %.2f %% vs exact %.2f %%" % (k, 100 * v, 100 * agent[k]))
        check(agent["held"] > 0.1 and agent["busy"] > 0.05 and agent["idle"] > 0.1, "the mix has all three: %s" % agent)
        top = coll.ask("top", "--once")
        tj = [j for j in top["jvms"] if j["pid"] == r.proc.pid][0]
        check(tj["occupancy_source"] == "kernel" and tj["kernel_occupancy"]["carriers"] == 2, "top: %s" % tj)
        check(all(c["kernel"] and c["kernel"]["occupancy"]["carriers"] == 1 for c in tj["carriers"]),
              "per-carrier kernel occupancy in top: %s" % tj["carriers"])
        text = subprocess.run([VTPIN, "top", "--socket", coll.socket, "--once", "--pid", str(r.proc.pid)],
                              capture_output=True, text=True, timeout=30).stdout
        print(text)
        check("kernel occupancy: busy" in text and text.count("held ") >= 3,
              "top shows the kernel occupancy of the JVM and of each carrier:\n" + text)
        r.wait(120)
    finally:
        if r:
            r.kill()
            shutil.rmtree(r.dir, ignore_errors=True)
        coll.cleanup()


BOUND = 0.02


def case_carrier_blocked(jdk):
    """WarmBlock (NativeBlock's nanosleep, 2 x 3 s, once the carriers are tracked) with the
    agent sampling every 400 ms: the collector
    shows each carrier blocked (kernel asleep, virtual thread mounted per a sample taken
    during the sleep, no pin) before the agent's watchdog reports its NATIVE_BLOCK pin
    (two sleeping samples), and no longer once the pin is in; the kernel occupancy then
    holds the carrier since it fell asleep."""
    need_kernel_view()
    jdk = int(jdk)
    coll = Collector(["--kernel=on"]).start()
    r = None
    try:
        r = Run(jdk, "WarmBlock", args=(2, 3000, 1000), props=scheduler(2),
                agent_opts="collector=%s,sample=400ms" % coll.socket).start()
        blocked_first, pinned = {}, {}
        deadline = time.monotonic() + 120
        text = None
        while len(pinned) < 2 and time.monotonic() < deadline and r.proc.poll() is None:
            top = coll.ask("top", "--once")
            for jv in top["jvms"]:
                if jv["pid"] != r.proc.pid:
                    continue
                for c in jv["carriers"]:
                    if os.environ.get("VTPIN_TEST_DEBUG"):
                        print(time.monotonic(), c["tid"], c["state"], c["blocked"], c["kernel"] and c["kernel"]["state"])
                    if c["blocked"] is not None:
                        check(c["state"] == "running" and c["blocked"]["state"] == "sleeping"
                              and c["blocked"]["for_ns"] >= 20_000_000, "a blocked carrier: %s" % c)
                        check(jv["carriers_blocked"] >= 1, "counted: %s" % jv)
                        if c["tid"] not in blocked_first:
                            print("blocked before the pin: %s" % json.dumps(c))
                            text = subprocess.run([VTPIN, "top", "--socket", coll.socket, "--once"],
                                                  capture_output=True, text=True, timeout=30).stdout
                        blocked_first.setdefault(c["tid"], c)
                    if c["state"] == "native_block":
                        check(c["blocked"] is None, "a pinned carrier is not also blocked: %s" % c)
                        k = c["kernel"]
                        if k["state"] == "sleeping":  # held since it fell asleep, not since the pin was found
                            check(k["occupancy"]["held_ns"] >= k["off_cpu_for_ns"], "held from the sleep's start: %s" % k)
                        pinned.setdefault(c["tid"], c)
            time.sleep(0.02)
        check(len(pinned) == 2, "the agent reported both blocks: %s" % pinned)
        check(set(blocked_first) == set(pinned),
              "the collector saw each carrier blocked before its pin: blocked %s, pinned %s"
              % (sorted(blocked_first), sorted(pinned)))
        for c in blocked_first.values():
            check(c["blocked"]["syscall"] in ("nanosleep", "clock_nanosleep"), "asleep in nanosleep: %s" % c)
        print(text)
        check(text is not None and "CARRIER BLOCKED" in text and "no pin yet" in text, "top says it:\n%s" % text)
        r.wait(120)
    finally:
        if r:
            r.kill()
            shutil.rmtree(r.dir, ignore_errors=True)
        coll.cleanup()


def held_scenario(jdk, fixture, args, opts="", live=None, props=scheduler(2)):
    """Runs fixture (its last argument the go file) streaming to a collector with the kernel view,
    once the collector tracks its two carriers; live(coll, run) while it runs. The report."""
    coll = Collector(["--kernel=on"]).start()
    d = tempdir(prefix="vtpin-held-")
    go = os.path.join(d, "go")
    r = None
    try:
        r = Run(jdk, fixture, args=tuple(a if a != "GO" else go for a in args), props=props,
                agent_opts="collector=%s%s" % (coll.socket, opts)).start()
        wait_tracked(coll, r, 2)
        open(go, "w").close()
        if live:
            live(coll, r)
        rep = finish(coll, r)
        text = subprocess.run([VTPIN, "report", coll.recordings()[0]], capture_output=True, text=True,
                              timeout=60).stdout
        return rep, text
    finally:
        if r:
            r.kill()
            shutil.rmtree(r.dir, ignore_errors=True)
        shutil.rmtree(d, ignore_errors=True)
        coll.cleanup()


def held_carriers(rep):
    return [c for c in rep["kernel_times"]["carriers"] if c["held_ns"]]


def check_explained(rep, what, at_least_ns):
    """Pins explain at least 99 % of each carrier's held time (asleep with a virtual thread mounted)."""
    held = held_carriers(rep)
    total = sum(c["held_ns"] for c in held)
    for c in held:
        print("%s: carrier %s held %.1f ms, %.2f %% in pins; largest unexplained: %s" %
              (what, c["name"], c["held_ns"] / 1e6, 100.0 * c["held_in_pins_ns"] / c["held_ns"], c["unexplained"]))
    check(total >= at_least_ns, "%s: held %d ns in all, at least %d expected: %s" %
          (what, total, at_least_ns, rep["kernel_times"]))
    vm_own = set()
    for c in held:
        check(c["held_in_pins_ns"] <= c["held_ns"], "%s: in pins within held: %s" % (what, c))
        outside = c["held_ns"] - c["held_in_pins_ns"]
        # One sleep in the JVM's own code (java_wait "other": not a park, a wait or native code, so no
        # pin) may hold the carrier beyond that 1 %: ci45, 3.2 ms in mprotect waiting for the mmap lock
        # (state disk, rwsem_down_write_slowpath). The rest is still held to 99 %.
        u = c["unexplained"]
        if outside * 100 > c["held_ns"] and u and u["java_wait"] == "other":
            outside -= u["outside_pins_ns"]
            vm_own.add(c["name"])
        check(outside * 100 <= c["held_ns"],
              "%s: pins explain %.2f %% of %s's held time: %s" %
              (what, 100.0 * c["held_in_pins_ns"] / c["held_ns"], c["name"], c))
    unexplained = [n for n in rep["notices"] if n["code"] == "kernel.held_unexplained" and
                   not any(name in n["text"] for name in vm_own)]
    check(not unexplained, "%s: no notice of unexplained held time: %s" % (what, unexplained))


def case_held_explained(jdk):
    """Every held millisecond explained: the time each carrier slept with a virtual thread mounted
    (the kernel view) lies in reported pins, at least 99 % of it, for back-to-back pinned sleeps and
    monitor waits (21) and one native call with several sleeps (21, 25); status and top show it
    live. With the pins below the threshold, the same sleeps are unexplained and a notice names the
    carrier, how long and the kernel stack of the largest."""
    need_kernel_view()
    jdk = int(jdk)
    if jdk < 24:
        for mode in ("sleep", "wait"):
            # On 21-23 Object.wait first asks the pool to compensate, which can start a carrier while
            # the waiter is mounted, before its wait begins (seen: 3-59 ms in a futex under ASan beside
            # two CPU burners; read "vm" now, as every futex sleep in the VM's own code, it was "other"
            # and held). A pool at its maximum size starts none: this measures the waits themselves.
            rep, _ = held_scenario(jdk, "BackToBack", (2, 20, 15, "GO", mode),
                                   props=scheduler(2, 2) if mode == "wait" else scheduler(2))
            # 2 x 20 x 15 ms; a round whose carrier woke late sleeps less
            check_explained(rep, "BackToBack " + mode, 400_000_000)

    def live(coll, r):
        def held(s):
            return [c["kernel"] for j in s["jvms"] if j["pid"] == r.proc.pid for c in j["kernel_carriers"]
                    if c["kernel"] and (c["kernel"]["held_ns"] or 0) >= 200_000_000]
        cs = coll.wait_for(lambda: coll.ask("status"), lambda s: len(held(s)) == 2)
        for k in held(cs):
            check(k["held_in_pins_ns"] + k["unexplained_ns"] == k["held_ns"], "status's held figures: %s" % k)
        top = subprocess.run([VTPIN, "top", "--once", "--socket", coll.socket], capture_output=True, text=True,
                             timeout=30).stdout
        check("; held " in top and "unexplained" in top, "top shows the held time:\n" + top)

    rep, text = held_scenario(jdk, "NativeBlock", ("sleeps", 2, 1500, "GO"), live=live)
    blocks = [p for p in rep["pins"] if native_block_in(p, "NativeBlock")]
    t0 = min((p["start_ns"] for p in rep["pins"]), default=0)
    check(len(blocks) == 2, "one NATIVE_BLOCK per call: %s\nkernel: %s" % (
        ["%s %.1f ms at +%.1f ms, carrier %s, timed by %s, split from %s, kernel %s" % (
            p["reason"], p["duration_ns"] / 1e6, (p["start_ns"] - t0) / 1e6, p["carrier"]["tid"], p["timed_by"],
            p["split_from"], p["kernel"]) for p in rep["pins"]], held_carriers(rep)))
    check_explained(rep, "NativeBlock sleeps", 2_000_000_000)
    check("in pins" in text, "the text report shows the held time:\n" + text)

    # the same calls, their pins below the threshold: unexplained, and said
    rep, text = held_scenario(jdk, "NativeBlock", ("sleeps", 2, 1500, "GO"), opts=",threshold=60s")
    check(not [p for p in rep["pins"] if native_block_in(p, "NativeBlock")], "no pin reported: %s" % rep["pins"])
    said = [n for n in rep["notices"] if n["code"] == "kernel.held_unexplained"]
    print("notices: %s" % said)
    check(len(said) == 2, "a notice per carrier: %s" % rep["notices"])
    for c in held_carriers(rep):
        u = c["unexplained"]
        check(u and u["outside_pins_ns"] >= 90_000_000 and u["java_wait"] == "in_native" and
              u["stack"] and any("nanosleep" in f for f in u["stack"]),
              "the largest unexplained sleep, a 100 ms nanosleep in native: %s" % c)
        check(any(c["name"] and c["name"] in n["text"] and "below the threshold" in n["text"] and
                  "kernel stack: do_nanosleep" in n["text"] for n in said),
              "the notice names %s, its stack below the switch out, the threshold: %s" % (c["name"], said))
    check("kernel.held_unexplained" in text, "the text report lists the notice:\n" + text)


def case_held_vm_wait(jdk):
    """A virtual thread stalled inside the JVM is not a held carrier: GcStall's allocations wait for
    the GC locker (JDK 21) in a VM condition variable, in the same futex operation and thread state as
    a park, for about 400 ms three times on each carrier. The agent's Hello gives the kernel view
    where VirtualThread.state is, and the state (not PINNED) says these sleeps are waits on the VM:
    no held time, and no unexplained sleep of a carrier is one of them. (Without it they were read as
    parks: about 2.4 s held, outside every pin, and a notice per carrier naming a "blocked" sleep.) The
    program's own short held sleeps are no stall and may be unexplained, truthfully: its two virtual
    threads can meet on a monitor as they finish (ci49: 1.1 ms in monitor_enter, its pin below the
    agent's threshold of 1 ms, the notice saying so), or on a class's initialization lock (ci47)."""
    need_kernel_view()
    rep, _ = held_scenario(int(jdk), "GcStall", (3, 400, 2, "GO"), props=scheduler(2) + ["-Xmx64m"])
    held = sum(c["held_ns"] for c in held_carriers(rep))
    said = [n for n in rep["notices"] if n["code"] == "kernel.held_unexplained"]
    print("held %.1f ms in all: %s; notices %s" % (held / 1e6, held_carriers(rep), said))
    check(held < 400_000_000, "the stalls are no held time: %.1f ms held (%s)" % (held / 1e6, held_carriers(rep)))
    stalls = [c for c in held_carriers(rep) if c["unexplained"] and c["unexplained"]["java_wait"] == "blocked"]
    check(not stalls, "no unexplained sleep is a stall read as a park: %s" % stalls)


if __name__ == "__main__":
    raise SystemExit(main({
        "native_block": case_native_block,
        "unavailable": case_unavailable,
        "cpu_jni": case_cpu_jni,
        "class_init": case_class_init,
        "back_to_back_attach": case_back_to_back_attach,
        "back_to_back_startup": case_back_to_back_startup,
        "occupancy": case_occupancy,
        "carrier_blocked": case_carrier_blocked,
        "held_explained": case_held_explained,
        "held_vm_wait": case_held_vm_wait,
    }))
