#!/usr/bin/env python3
"""Interleaved mount-churn ratios, both thread parities pooled.

A quick, focused companion of bench.py for the mount path: every round runs each
configuration once with idle=0 and once with idle=1 (BenchMountChurn starts that
many idle platform threads before its first virtual thread, which flips whether
the carriers' thread handles share a cache line on JDK 25), in A B C ... order;
each run's wall and CPU time is divided by the no-agent run of the same round
and parity. Prints median (min-max) per configuration over all rounds and both
parities, and the per-parity medians.

usage: bench/mountratio.py --jdk 25 --rounds 5 [--configs none,floor,jfr,...]
       [--threads 100000] [--perf DIR]
"""
import argparse, os, re, statistics, subprocess, sys, tempfile

from bench import median_interval, target_verdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
JDKS = {"21": os.environ.get("JAVA21_HOME", "/root/.cache/vtpin/jdk/openjdk-21/root/usr/lib/jvm/java-21-openjdk-amd64"),
        "25": os.environ.get("JAVA25_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")}
AGENT = os.environ.get("VTPIN_AGENT", os.path.join(BUILD, "agent", "libvtpin.so"))
EMPTY = os.path.join(BUILD, "bench", "libemptyagent.so")


PASSES = 5


def flags(config, tmp):
    rec = os.path.join(tmp, "rec.vtpin")
    table = {
        "none": [],
        "floor": ["-agentpath:" + EMPTY],
        "floor-thread": ["-agentpath:" + EMPTY + "=thread"],
        "jfr": ["-XX:StartFlightRecording=settings=default,filename=" + os.path.join(tmp, "r.jfr")],
        "vtpin-pins": ["-agentpath:%s=occupancy=off,record=%s,quiet" % (AGENT, rec)],
        "vtpin-sampled": ["-agentpath:%s=occupancy=sampled,record=%s,quiet" % (AGENT, rec)],
        "vtpin-exact": ["-agentpath:%s=occupancy=exact,record=%s,quiet" % (AGENT, rec)],
    }
    if config.startswith("old-"):  # the same configuration with the agent in $VTPIN_OLD_AGENT (before/after)
        return [f.replace(AGENT, os.environ["VTPIN_OLD_AGENT"]) for f in flags(config[4:], tmp)]
    if config.startswith("vtpin:"):  # vtpin:opt=v;opt=v  any agent options (';' for ',')
        return ["-agentpath:%s=%s,record=%s,quiet" % (AGENT, config[6:].replace(";", ","), rec)]
    return table[config]


def run(jdk, config, idle, threads, perf_dir, tag):
    with tempfile.TemporaryDirectory(prefix="mountratio-") as tmp:
        cmd = [os.path.join(JDKS[jdk], "bin", "java"), "-Xms1g", "-Xmx1g"]
        if perf_dir:
            cmd += ["-XX:+UnlockDiagnosticVMOptions", "-XX:+PreserveFramePointer"]
        cmd += flags(config, tmp)
        cmd += ["-cp", os.path.join(BUILD, "java-fixtures", "classes"), "BenchMountChurn", "shape=steady",
                "concurrent=16", "threads=%d" % threads, "yields=10", "warmup=50000", "warmupPasses=1",
                "idle=%d" % idle, "passes=%d" % PASSES]
        if perf_dir:
            out = os.path.join(perf_dir, "%s-%s-idle%d.data" % (tag, config.replace(":", "_").replace(",", "_").replace("=", "-"), idle))
            cmd = ["perf", "record", "-q", "-g", "-o", out, "--"] + cmd
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        m = re.search(r"elapsed_ns=(\d+) cpu_ns=(\d+)", p.stdout)
        if not m:
            sys.stderr.write("run failed: %s\n%s\n%s\n" % (" ".join(cmd), p.stdout[-2000:], p.stderr[-2000:]))
            return None
        return int(m.group(1)) / 1e6, int(m.group(2)) / 1e6


def fmt(vals):
    if not vals:
        return "n/a"
    return "%.2f (%.2f-%.2f)" % (statistics.median(vals), min(vals), max(vals))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jdk", default="25")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--configs", default="none,floor,jfr,vtpin-pins,vtpin-sampled")
    ap.add_argument("--threads", type=int, default=100000)
    ap.add_argument("--perf", default="")
    ap.add_argument("--passes", type=int, default=5, help="measured passes per JVM, the fastest counts")
    a = ap.parse_args()
    global PASSES
    PASSES = a.passes
    configs = a.configs.split(",")
    if "none" not in configs:
        configs.insert(0, "none")
    res = {c: {0: [], 1: []} for c in configs}
    by_run = {c: {} for c in configs}  # (round, idle) -> (wall ratio, CPU ratio), for the paired targets
    for r in range(a.rounds):
        for idle in (0, 1):
            base = None
            got = {}
            for c in configs:
                got[c] = run(a.jdk, c, idle, a.threads, a.perf, "r%d" % r)
            base = got["none"]
            if not base:
                continue
            for c in configs:
                if got[c]:
                    res[c][idle].append((got[c][0], got[c][1], got[c][0] / base[0], got[c][1] / base[1]))
                    by_run[c][(r, idle)] = (got[c][0] / base[0], got[c][1] / base[1])
            sys.stderr.write("round %d idle %d: %s\n" % (r, idle, " ".join(
                "%s=%.0f" % (c, got[c][0]) if got[c] else c + "=fail" for c in configs)))
    print("JDK %s, BenchMountChurn shape=steady concurrent=16 threads=%d yields=10 passes=%d (fastest), "
          "%d rounds x idle 0/1" % (a.jdk, a.threads, a.passes, a.rounds))
    print("| configuration | wall ms idle=0 | wall ms idle=1 | wall x none (pooled) | CPU x none (pooled) "
          "| wall x none idle=0 | idle=1 |")
    print("|---|---|---|---|---|---|---|")
    for c in configs:
        w0 = [x[0] for x in res[c][0]]
        w1 = [x[0] for x in res[c][1]]
        pooled = [x[2] for i in (0, 1) for x in res[c][i]]
        cpu = [x[3] for i in (0, 1) for x in res[c][i]]
        print("| %s | %s | %s | %s | %s | %s | %s |" % (
            c, "%.0f" % statistics.median(w0) if w0 else "n/a", "%.0f" % statistics.median(w1) if w1 else "n/a",
            fmt(pooled), fmt(cpu), fmt([x[2] for x in res[c][0]]), fmt([x[2] for x in res[c][1]])))
    print_targets(configs, by_run)


def print_targets(configs, by_run):
    """Issue 9's mount-churn target, as bench.py judges it: vtpin × no agent − JFR × no agent
    ≤ +0.05, the median of the paired runs with its 90 % bootstrap interval."""
    if "jfr" not in configs:
        return
    print()
    print("| target | runs | median | 90 % interval | verdict |")
    print("|---|---|---|---|---|")
    for c in ("vtpin-sampled", "vtpin-pins"):
        if c not in configs:
            continue
        keys = sorted(set(by_run[c]) & set(by_run["jfr"]))
        for i, measure in ((0, "wall"), (1, "CPU")):
            values = [by_run[c][k][i] - by_run["jfr"][k][i] for k in keys]
            if len(values) < 2:
                continue
            lo, hi = median_interval(values)
            print("| %s: %s × no agent − jfr × no agent ≤ +0.05 | %d | %+.3f | %+.3f … %+.3f | %s |" % (
                measure, c, len(values), statistics.median(values), lo, hi, target_verdict(lo, hi, 0.05)))


if __name__ == "__main__":
    main()
