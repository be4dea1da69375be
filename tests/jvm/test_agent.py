#!/usr/bin/env python3
"""The agent as a guest: bad options stop the JVM with a clear line, a JVM
without virtual threads runs on, and the outputs work as documented."""
import glob
import os
import subprocess

from harness import AGENT, CLASSES, Failure, Run, check, frames_of, jdk_home, main, report_json, scheduler


def java(home, agent_opts, *args, timeout=60):
    cmd = [os.path.join(home, "bin", "java"), "-agentpath:%s=%s" % (AGENT, agent_opts)] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def case_bad_options(jdk):
    home = jdk_home(int(jdk))
    for opts, needle in [("bogus", "unknown option 'bogus'"),
                         ("threshold=fast", "bad value for option 'threshold'"),
                         ("trace=loud", "bad value for option 'trace'"),
                         ("depth=0", "bad value for option 'depth'"),
                         ("record=/nonexistent-dir/x.vtp", "cannot open record file '/nonexistent-dir/x.vtp'")]:
        p = java(home, opts, "-version")
        check(p.returncode != 0, "JVM must not start with %r (exit %d)" % (opts, p.returncode))
        lines = [l for l in p.stderr.splitlines() if l.startswith("vtpin: error:")]
        check(lines and needle in lines[0], "one clear line naming the option for %r, got:\n%s" % (opts, p.stderr))
    # jcmd splits key=value, so key:value is accepted too
    p = java(home, "threshold:5ms,quiet", "-version")
    check(p.returncode == 0, "key:value accepted: " + p.stderr)


def case_no_virtual_threads():
    homes = [h for h in glob.glob("/usr/lib/jvm/*17*") if os.path.exists(os.path.join(h, "bin", "java"))]
    if not homes:
        print("SKIP: no JDK 17 under /usr/lib/jvm")
        raise SystemExit(77)
    p = java(homes[0], "trace", "-cp", CLASSES, "-version")
    check(p.returncode == 0, "JDK 17 runs on without vtpin: %s" % p.stderr)
    check("vtpin: warning:" in p.stderr and "no virtual threads" in p.stderr,
          "clear message on JDK 17, got: %s" % p.stderr)


def case_threshold(jdk):
    """Pins shorter than the threshold are counted, not reported."""
    jdk = int(jdk)
    r = Run(jdk, "JniSleep", args=(4, 50), props=scheduler(2), agent_opts="threshold=10s").run()
    rep = r.report()
    check(not rep["pins"], "no pin reaches 10 s: %s" % rep["pins"][:1])
    check(rep["stats"]["pins_below_threshold"] >= 4, "short pins counted: %s" % rep["stats"])
    r0 = Run(jdk, "JniSleep", args=(4, 50), props=scheduler(2), agent_opts="threshold=0").run()
    check(len([p for p in r0.report()["pins"] if p["reason"] == "NATIVE"]) >= 4, "threshold=0 reports them")


def case_trace_short(jdk):
    jdk = int(jdk)
    r = Run(jdk, "JniSleep", props=scheduler(2), agent_opts="trace=short").run()
    t = r.trace_text()
    check("JniSleep.sleepInNative(Native Method) <== native (libvtpinfixture.so)" in t,
          "short trace shows the culprit native frame with its library:\n" + t[:2000])
    check("reason:NATIVE" in t, "reason printed")
    check("java.lang.Thread.sleep" not in t, "short trace omits unmarked frames:\n" + t[:2000])


def case_record_complete(jdk):
    """The recording's Hello and Goodbye are there after a clean exit; stdout untouched."""
    jdk = int(jdk)
    r = Run(jdk, "CpuBound", args=(1000, 1000)).run()
    rep = report_json(r.record)
    check(not rep["recording"]["truncated"], "complete recording after a clean exit")
    check(rep["jvm"]["mode"] == "startup", "startup mode: %s" % rep["jvm"])
    check("fixture CpuBound done" in r.stdout(), "the program ran normally")


def case_writer_detached(jdk):
    """The writer joins the JVM only for its JVMTI work: it is no Java thread before the first
    carrier (so it leaves the carriers' thread layout alone), yet the pins are reported with their
    stacks. Once carriers exist it stays joined (the watchdog looks at blocked carriers for
    VM_BLOCK, and sampled occupancy every 10 ms): a few joins, not one per round. Each join is
    counted in the log."""
    jdk = int(jdk)
    r = Run(jdk, "WriterPresence", args=(2, 50, 2500), props=scheduler(2), agent_opts="occupancy=off").run()
    out = r.stdout()
    check("phase=start writer=no" in out, "no writer thread before any work:\n" + out)
    pins = [p for p in r.report()["pins"] if p["reason"] == "NATIVE"]
    check(len(pins) >= 2, "both pins reported: %s" % r.report()["pins"])
    check(all(any(f["method"] == "sleepInNative" for f in frames_of(p)) for p in pins),
          "their stacks were taken by the joined writer: %s" % pins[:1])
    joins = [l for l in r.stderr().splitlines() if "the writer joined the JVM" in l]
    check(joins, "the agent says how often it joined:\n" + r.stderr())
    n = int(joins[0].split("joined the JVM ")[1].split()[0])
    check(1 <= n <= 10, "a few joins for a few pins, not one per round: %d" % n)
    s = Run(jdk, "WriterPresence", args=(2, 50, 2500), props=scheduler(2), agent_opts="occupancy=sampled").run()
    out = s.stdout()
    check("phase=start writer=no" in out, "sampled: no writer thread before the first carrier:\n" + out)
    check("phase=idle writer=yes" in out, "sampled: the writer stays joined between samples:\n" + out)
    check(len([p for p in s.report()["pins"] if p["reason"] == "NATIVE"]) >= 2, "sampled: pins reported")


if __name__ == "__main__":
    raise SystemExit(main({
        "bad_options": case_bad_options,
        "no_virtual_threads": case_no_virtual_threads,
        "threshold": case_threshold,
        "trace_short": case_trace_short,
        "record_complete": case_record_complete,
        "writer_detached": case_writer_detached,
    }))
