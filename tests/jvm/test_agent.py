#!/usr/bin/env python3
"""The agent as a guest: bad options stop the JVM with a clear line, a JVM
without virtual threads runs on, and the outputs work as documented."""
import glob
import os
import signal
import subprocess
import time

from harness import (AGENT, CLASSES, EXTRA_AGENT_OPTS, FIXTURE_LIB, Failure, Run, check, describe,
                     forget_stale_attach_socket, frames_of, jdk_home,
                     main, report_json, scheduler, tempdir, touches)


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
    # control characters in an option's value are said escaped, never raw to the terminal (issue 37)
    p = java(home, "record=/nonexistent-dir/\x1b[31mred\x07.vtp", "-version")
    check(p.returncode != 0 and "\x1b" not in p.stderr and "\x07" not in p.stderr and
          "'/nonexistent-dir/\\x1b[31mred\\x07.vtp'" in p.stderr,
          "the escape sequence is said as \\x1b and \\x07, not sent raw: %r" % p.stderr)
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


def case_scheduler_set_in_main(jdk):
    """The agent at startup leaves java.lang.VirtualThread uninitialized: its static initializer builds the
    default scheduler from system properties, which main may still be setting before its first virtual thread
    (JNI's FindClass and GetFieldID initialize a class; the agent had 2 carriers where the program asked for
    processors + 1, and the JVM without it obeyed). Pin detection, which reads the class's fields, works on."""
    jdk = int(jdk)
    r = Run(jdk, "SchedulerSetInMain").run()
    out = r.stdout()
    check(any(l.startswith("SchedulerSetInMain: met ") for l in out.splitlines()),
          "the scheduler took main's parallelism: %s\n%s" % (out, r.stderr()))
    pins = r.report()["pins"]
    if jdk < 24:
        check([p["reason"] for p in pins if p["vthread"]["name"] == "pinner"] == ["MONITOR"],
              "the sleep in synchronized is a MONITOR pin: %s" % [describe(p) for p in pins])
    check(not [p for p in pins if p["vthread"]["name"].startswith("spinner")],
          "spinning pins nothing: %s" % [describe(p) for p in pins])


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


SECOND = "loaded a second time"  # the one line a second load says


def jni_sleep_cmd(home, agents, threads, ms):
    """java with each of agents (an option string each) as an -agentpath, running JniSleep."""
    return ([os.path.join(home, "bin", "java")] + ["-agentpath:%s=%s" % (AGENT, a) for a in agents] +
            ["-Djava.library.path=" + FIXTURE_LIB, "-cp", CLASSES] + scheduler(threads) +
            ["JniSleep", str(threads), str(ms)])


def fixture_pins(record):
    """JniSleep's own NATIVE pins in a recording (the JDK may add short ones of its own)."""
    return [p for p in report_json(record)["pins"] if p["reason"] == "NATIVE" and touches(p, "JniSleep")]


def second_load_checks(d, p, first, log=None):
    """What every second load must leave: the JVM ran, the first agent's pins of JniSleep's 4 threads, one line,
    nothing else."""
    check(p.returncode == 0, "the JVM starts and exits 0 with a second vtpin, got %d:\n%s" % (p.returncode, p.stderr))
    check("fixture JniSleep done" in p.stdout, "the program ran:\n" + p.stdout)
    said = [line for line in p.stderr.splitlines() if SECOND in line]
    check(len(said) == 1, "one line on stderr says why the second load stands down, got:\n" + p.stderr)
    check("no JNI environment" not in p.stderr and "vtpin: error:" not in p.stderr, "no error:\n" + p.stderr)
    if log:
        text = open(log).read()
        check(text.count(SECOND) == 1, "and the first agent's log says it once:\n" + text)
        check("detecting pins" in text, "the first agent runs on, logging to its log:\n" + text)
    # The first agent runs with threshold=0, so each sleep's park is a pin however long it lasts. A sleep
    # need not park for its 50 ms: a thread that the loaded machine holds off its CPU between scheduling
    # its wake-up and parking finds the wake-up already there, and its park lasts microseconds (seen
    # under ASan side by side: 3 pins of 50 ms and one below a 1 ms threshold).
    pins = fixture_pins(first)
    rep = report_json(first)
    threads = sorted({(x.get("vthread") or {}).get("name") or "" for x in pins})
    check(threads == ["jnisleep-%d" % t for t in range(4)],
          "the first agent reports a pin of each of JniSleep's 4 virtual threads, as alone: %s; every pin it "
          "reported: %s; its stats: %s; its notices: %s" % (
              threads, [describe(x) for x in rep["pins"]], rep["stats"], rep["notices"]))
    files = sorted(f for f in os.listdir(d) if f.endswith(".vtp") or f.startswith("trace"))
    check(files == [os.path.basename(first)], "no recording or trace of the second load: %s" % files)


def case_second_agent(jdk):
    """-agentpath of libvtpin twice (same options, other options), and JAVA_TOOL_OPTIONS plus
    -agentpath (what `vtpin run` does to a build that loads vtpin itself): the second load stands
    down with one line, the JVM starts, the first agent sees every pin, no stub recording is left."""
    home = jdk_home(int(jdk))
    extra = "," + EXTRA_AGENT_OPTS if EXTRA_AGENT_OPTS else ""
    d = tempdir("vtpin-second-same-")
    same = "record=%s/first.vtp,threshold=0%s" % (d, extra)
    p = subprocess.run(jni_sleep_cmd(home, [same, same], 4, 50), capture_output=True, text=True, timeout=120)
    print("same options:\n" + p.stderr)
    second_load_checks(d, p, os.path.join(d, "first.vtp"))

    d = tempdir("vtpin-second-other-")
    first = "record=%s/first.vtp,log=%s/first.log,threshold=0%s" % (d, d, extra)
    other = "record=%s/second.vtp,tracefile=%s/trace2.txt,threshold=5ms%s" % (d, d, extra)
    p = subprocess.run(jni_sleep_cmd(home, [first, other], 4, 50), capture_output=True, text=True, timeout=120)
    print("other options:\n" + p.stderr)
    second_load_checks(d, p, os.path.join(d, "first.vtp"), log=os.path.join(d, "first.log"))

    d = tempdir("vtpin-second-tool-")
    env = dict(os.environ, JAVA_TOOL_OPTIONS="-agentpath:%s=record=%s/first.vtp,log=%s/first.log,threshold=0%s" % (
        AGENT, d, d, extra))
    p = subprocess.run(jni_sleep_cmd(home, ["record=%s/second.vtp%s" % (d, extra)], 4, 50), env=env,
                       capture_output=True, text=True, timeout=120)
    print("JAVA_TOOL_OPTIONS and -agentpath:\n" + p.stderr)
    second_load_checks(d, p, os.path.join(d, "first.vtp"), log=os.path.join(d, "first.log"))


def case_attach_second(jdk):
    """jcmd JVMTI.agent_load of libvtpin into a JVM started with it: the load stands down (it says
    so on stderr and in the first agent's log), the JVM and the first agent run on, nothing else is
    recorded. The JVM waits in ReproLoop until the load is done, then JniSleep pins 4 times."""
    home = jdk_home(int(jdk))
    d = tempdir("vtpin-second-attach-")
    extra = "," + EXTRA_AGENT_OPTS if EXTRA_AGENT_OPTS else ""
    log, first, stop = os.path.join(d, "first.log"), os.path.join(d, "first.vtp"), os.path.join(d, "stop")
    cmd = jni_sleep_cmd(home, ["record=%s,log=%s%s" % (first, log, extra)], 4, 50)
    cmd[-3:-3] = ["Chain", "ReproLoop", "600", stop, "1", "10", "--"]  # before JniSleep 4 50
    out, err = open(os.path.join(d, "stdout.txt"), "w+"), open(os.path.join(d, "stderr.txt"), "w+")
    proc = subprocess.Popen(cmd, stdout=out, stderr=err, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while "ReproLoop: ready pid=" not in open(os.path.join(d, "stdout.txt")).read():
            check(proc.poll() is None and time.monotonic() < deadline, "the JVM did not get ready")
            time.sleep(0.05)
        forget_stale_attach_socket(proc.pid)
        j = subprocess.run([os.path.join(home, "bin", "jcmd"), str(proc.pid), "JVMTI.agent_load", AGENT,
                            "record:%s/second.vtp,tracefile:%s/trace2.txt" % (d, d)],
                           capture_output=True, text=True, timeout=60)
        print("jcmd: %d\n%s%s" % (j.returncode, j.stdout, j.stderr))
        check(j.returncode == 0 and "return code: " in j.stdout, "jcmd got the JVM's reply: %s" % j.stdout)
        check(proc.poll() is None, "the JVM runs on after the second load")
        open(stop, "w").close()  # ReproLoop ends, JniSleep runs
        rc = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    out.seek(0)
    err.seek(0)
    p = subprocess.CompletedProcess(cmd, rc, out.read(), err.read())
    print("JVM stderr:\n" + p.stderr)
    second_load_checks(d, p, first, log=log)


if __name__ == "__main__":
    raise SystemExit(main({
        "bad_options": case_bad_options,
        "no_virtual_threads": case_no_virtual_threads,
        "threshold": case_threshold,
        "scheduler_set_in_main": case_scheduler_set_in_main,
        "trace_short": case_trace_short,
        "record_complete": case_record_complete,
        "writer_detached": case_writer_detached,
        "second_agent": case_second_agent,
        "attach_second": case_attach_second,
    }))
