#!/usr/bin/env python3
"""What a pinning check costs a test suite: 200 small JUnit 5 tests, each starting and joining 50
virtual threads (each computes a little and parks 0.1 ms, so it mounts twice), run by JUnit's
console launcher in one JVM, four ways, interleaved round by round:

  none        plain JUnit: no agent, no check
  agent       the agent loaded (-agentpath, quiet), no check: the JVMTI floor alone
  nopinning   the agent and @NoPinning on every test class: what a team adds
  jfr         no agent; per test a JFR recording of jdk.VirtualThreadPinned (threshold 0) started,
              stopped, dumped and read back, as Quarkus's @ShouldNotPin and Helidon's checks do
              (the events it finds are counted and said, not failed: the suite pins nowhere in its
              own code, so any is the JDK's)

Printed per JDK: the median wall time of the whole launcher run (JVM start to exit) and of the
tests alone (the launcher's "Test run finished after N ms"), and each check's ratio to `none`,
median (min-max) over the rounds. Target (issue 33): nopinning <= 1.10 x none, wall time.

usage: python3 bench/junit_suite.py [--rounds 5] [--jdks 21,25] [--tests 200] [--threads 50]
Needs build/ (the agent, build/java/vtpin-junit.jar) and Debian's junit5. The JDKs come from
JAVA<N>_HOME, else ~/.cache/vtpin/jdks.env.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from zerotouch_idle import jdk_homes  # bench/, beside this file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("VTPIN_BUILD_DIR", os.path.join(ROOT, "build"))
AGENT = os.path.join(BUILD, "agent", "libvtpin.so")
JAR = os.path.join(BUILD, "java", "vtpin-junit.jar")
LAUNCHER = "/usr/share/java/junit-platform-console-standalone.jar"
JUNIT_API = ["/usr/share/java/%s.jar" % j for j in ("junit-jupiter-api", "junit-platform-commons", "opentest4j",
                                                    "apiguardian-api")]
CONFIGS = ["none", "agent", "nopinning", "jfr"]
CLASSES = 10  # the tests spread over this many classes, as a suite's are
TARGET = 1.10

JFR_CHECK = """
package bench;

import java.nio.file.Files;
import java.nio.file.Path;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/** A pinning check built on JFR, per test: record jdk.VirtualThreadPinned, then read it back. */
public class JfrPinCheck implements BeforeEachCallback, AfterEachCallback {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(JfrPinCheck.class);

    @Override
    public void beforeEach(ExtensionContext context) {
        Recording r = new Recording();
        r.enable("jdk.VirtualThreadPinned").withThreshold(java.time.Duration.ZERO).withStackTrace();
        r.start();
        context.getStore(NS).put("recording", r);
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        Recording r = context.getStore(NS).remove("recording", Recording.class);
        r.stop();
        Path file = Files.createTempFile("pins", ".jfr");
        try {
            r.dump(file);
            long pins = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("jdk.VirtualThreadPinned")).count();
            if (pins > 0) {
                // a check would fail the test here; the bench counts them instead (junit_suite.py)
                System.err.println("jfr-pinned: " + pins + " in " + context.getDisplayName());
            }
        } finally {
            r.close();
            Files.deleteIfExists(file);
        }
    }
}
"""


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def test_class(name, annotation, tests, threads):
    """One test class of `tests` tests, each starting and joining `threads` virtual threads."""
    body = []
    for t in range(tests):
        body.append("""
    @Test
    void t%d() throws Exception {
        Thread[] ts = new Thread[%d];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = Thread.ofVirtual().start(Work::run);
        }
        for (Thread t : ts) {
            t.join();
        }
    }""" % (t, threads))
    return """package bench;

import org.junit.jupiter.api.Test;

%s
class %s {
    static {
        Work.run(); // Work initialized here, on a platform thread: 50 virtual threads that wait for its
                    // initialization would be VM_BLOCK pins (real ones), in the first test to touch it
    }
%s
}
""" % (annotation, name, "".join(body))


WORK = """package bench;

import java.util.concurrent.locks.LockSupport;

final class Work {
    static volatile long sink;

    static void run() {
        long x = 0;
        for (int i = 0; i < 2000; i++) {
            x += i * 31L;
        }
        sink = x;
        LockSupport.parkNanos(100_000L); // unmounts and mounts again
    }
}
"""


def compile_suites(home, work, tests, threads):
    """Three builds of the same suite: plain, with @NoPinning, with the JFR check. {config: classes dir}."""
    per_class = tests // CLASSES
    annotations = {"none": "", "nopinning": "@dev.vtpin.junit.NoPinning",
                   "jfr": "@org.junit.jupiter.api.extension.ExtendWith(JfrPinCheck.class)"}
    dirs = {}
    for kind, annotation in annotations.items():
        src = os.path.join(work, "src-" + kind, "bench")
        os.makedirs(src)
        with open(os.path.join(src, "Work.java"), "w") as f:
            f.write(WORK)
        if kind == "jfr":
            with open(os.path.join(src, "JfrPinCheck.java"), "w") as f:
                f.write(JFR_CHECK)
        for c in range(CLASSES):
            with open(os.path.join(src, "Suite%dTest.java" % c), "w") as f:
                f.write(test_class("Suite%dTest" % c, annotation, per_class, threads))
        out = os.path.join(work, "classes-" + kind)
        sources = [os.path.join(src, n) for n in sorted(os.listdir(src))]
        subprocess.run([os.path.join(home, "bin", "javac"), "--release", "21", "-d", out,
                        "-cp", ":".join([JAR] + JUNIT_API)] + sources, check=True)
        dirs[kind] = out
    dirs["agent"] = dirs["none"]
    return dirs


def run_once(home, config, classes):
    """(wall s, tests ms, tests passed, JFR's pinned events) of one launcher run; fails loudly when a
    test failed."""
    cmd = [os.path.join(home, "bin", "java")]
    if config in ("agent", "nopinning"):
        cmd.append("-agentpath:%s=quiet" % AGENT)
    cmd += ["-jar", LAUNCHER, "--disable-banner", "--details=summary", "-cp", ":".join([classes, JAR]),
            "--select-package", "bench"]
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    m = re.search(r"Test run finished after (\d+) ms", p.stdout)
    ok = re.search(r"\[\s*(\d+) tests successful", p.stdout)
    if p.returncode != 0 or not m or not ok:
        raise SystemExit("junit_suite: %s failed (exit %d)\n%s%s" % (config, p.returncode, p.stdout[-8000:],
                                                                   p.stderr[-2000:]))
    jfr_pins = sum(int(n) for n in re.findall(r"^jfr-pinned: (\d+)", p.stderr, re.M))
    return wall, int(m.group(1)), int(ok.group(1)), jfr_pins


def fmt(values):
    return "%.2f (%.2f-%.2f)" % (statistics.median(values), min(values), max(values))


def measure(rounds, jdks, tests, threads):
    """The table (markdown) and the raw numbers."""
    for path in [AGENT, JAR, LAUNCHER] + JUNIT_API:
        if not os.path.exists(path):
            raise SystemExit("junit_suite: %s missing (build first; Debian's junit5 for the jars)" % path)
    homes = jdk_homes(jdks)
    lines = ["| JDK | config | wall s | tests ms | wall × none | tests × none |", "|---|---|---|---|---|---|"]
    raw = {}
    notes = []
    for jdk in jdks:
        work = tempfile.mkdtemp(prefix="vtpin-junit-bench-")
        try:
            dirs = compile_suites(homes[jdk], work, tests, threads)
            run_once(homes[jdk], "none", dirs["none"])  # warm-up: page cache, CDS
            res = {c: [] for c in CONFIGS}
            jfr_pins = 0
            for r in range(rounds):
                for c in CONFIGS:
                    wall, ms, passed, pins = run_once(homes[jdk], c, dirs[c])
                    jfr_pins += pins
                    if passed != tests:
                        raise SystemExit("junit_suite: %s ran %d tests of %d" % (c, passed, tests))
                    res[c].append((wall, ms))
                log("junit_suite: JDK %s round %d/%d: %s" % (jdk, r + 1, rounds, ", ".join(
                    "%s %.2f s" % (c, res[c][-1][0]) for c in CONFIGS)))
            raw[jdk] = {"runs": res, "jfr_pinned_events": jfr_pins}
            notes.append("JDK %s: JFR recorded %d jdk.VirtualThreadPinned event(s) over %d runs of the suite, which "
                         "pins nowhere in its own code (a JFR check with no origin rule fails on them)"
                         % (jdk, jfr_pins, rounds))
            for c in CONFIGS:
                walls = [w for w, _ in res[c]]
                mss = [m for _, m in res[c]]
                rw = [w / n for (w, _), (n, _) in zip(res[c], res["none"])]
                rm = [m / n for (_, m), (_, n) in zip(res[c], res["none"])]
                lines.append("| %s | %s | %s | %s | %s | %s |" % (jdk, c, fmt(walls), "%d (%d-%d)" % (
                    statistics.median(mss), min(mss), max(mss)), fmt(rw), fmt(rm)))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return "\n".join(lines) + "\n\n" + "\n".join("- " + n for n in notes), raw


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--jdks", default="21,25")
    ap.add_argument("--tests", type=int, default=200)
    ap.add_argument("--threads", type=int, default=50)
    args = ap.parse_args()
    table, _ = measure(args.rounds, args.jdks.split(","), args.tests, args.threads)
    print("%d tests x %d virtual threads, %d rounds, target: nopinning <= %.2f x none (wall)\n" % (
        args.tests, args.threads, args.rounds, TARGET))
    print(table)


if __name__ == "__main__":
    main()
