#!/usr/bin/env python3
"""Cost of the collector's kernel view on JVM workloads (issue 8: within 1.03x).

Two collectors run side by side for the whole benchmark, one with --kernel=off
and one with --kernel=on (root, a kernel with BTF); every round runs the same
JVM with the same agent options (collector=SOCKET, default sampled occupancy)
once against each, alternating which goes first. For mount churn each round is
run at both thread parities (idle=0 and idle=1, see JVMTI-FACTS.md). Prints the
median wall and CPU time of each and the ratio on/off. A pass/fail bound is not
asserted: the numbers are for the README.

usage: bench/kernel_view_jvm.py [--jdks 21,25] [--rounds 5] [--workloads mountchurn-steady,service]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("VTPIN_BUILD_DIR", os.path.join(ROOT, "build"))
AGENT = os.path.join(BUILD, "agent", "libvtpin.so")
VTPIN = os.path.join(BUILD, "vtpin")
CLASSES = os.path.join(BUILD, "java-fixtures", "classes")
JDKS = {"21": os.environ.get("JAVA21_HOME"), "25": os.environ.get("JAVA25_HOME")}

WORKLOADS = {
    "mountchurn-steady": ("BenchMountChurn", ["shape=steady", "concurrent=16", "threads=400000", "yields=10",
                                              "warmup=20000", "warmupPasses=1"], True),
    "service": ("BenchService", ["requests=12000", "concurrency=16", "warmup=2000", "work=4096", "sleepMs=1"], False),
}


class Collector:
    def __init__(self, tmp, kernel):
        self.dir = os.path.join(tmp, "kernel-" + kernel)
        os.makedirs(self.dir)
        self.socket = os.path.join(self.dir, "s")
        self.log = open(os.path.join(self.dir, "log"), "w")
        self.proc = subprocess.Popen([VTPIN, "collector", "--kernel=" + kernel, "--socket", self.socket,
                                      "--dir", os.path.join(self.dir, "rec"), "--jvms=agents"], stderr=self.log)
        for _ in range(200):
            if os.path.exists(self.socket):
                break
            time.sleep(0.05)
        else:
            raise SystemExit("collector --kernel=%s did not start (%s)" % (kernel, self.log.name))

    def kernel_view(self):
        p = subprocess.run([VTPIN, "status", "--json", "--socket", self.socket], capture_output=True, text=True)
        return json.loads(p.stdout).get("collector", {}).get("kernel_view", {})

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        self.log.close()


def one_run(jdk, workload, collector, idle):
    main, args, parity = WORKLOADS[workload]
    cmd = [os.path.join(JDKS[jdk], "bin", "java"), "-Xms1g", "-Xmx1g",
           "-agentpath:%s=collector=%s,quiet" % (AGENT, collector.socket), "-cp", CLASSES, main] + args
    if parity:
        cmd.append("idle=%d" % idle)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit("%s failed: %s" % (" ".join(cmd), p.stderr[-2000:]))
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jdks", default="21,25")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("the kernel view needs root", file=sys.stderr)
        return 77
    with tempfile.TemporaryDirectory(prefix="vtpin-kview-bench-") as tmp:
        off, on = Collector(tmp, "off"), Collector(tmp, "on")
        try:
            kv = on.kernel_view()
            if not kv.get("enabled"):
                raise SystemExit("the kernel view did not load: %s" % kv)
            print("| workload | JDK | wall off / on (s, median) | wall on/off | CPU off / on (s) | CPU on/off |")
            print("|---|---|---|---|---|---|")
            for workload in a.workloads.split(","):
                for jdk in a.jdks.split(","):
                    res = {"off": [], "on": []}
                    for r in range(a.rounds):
                        for idle in ((0, 1) if WORKLOADS[workload][2] else (0,)):
                            order = (("off", off), ("on", on)) if (r + idle) % 2 == 0 else (("on", on), ("off", off))
                            for name, coll in order:
                                res[name].append(one_run(jdk, workload, coll, idle))
                    w = {k: statistics.median(x[0] for x in v) for k, v in res.items()}
                    c = {k: statistics.median(x[1] for x in v) for k, v in res.items()}
                    print("| %s | %s | %.2f / %.2f | %.3f | %.2f / %.2f | %.3f |" % (
                        workload, jdk, w["off"], w["on"], w["on"] / w["off"], c["off"], c["on"], c["on"] / c["off"]))
                    sys.stdout.flush()
            kv = on.kernel_view()
            print("kernel view during the runs: %s" % {k: kv.get(k) for k in ("carriers_tracked", "intervals")})
        finally:
            off.stop()
            on.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
