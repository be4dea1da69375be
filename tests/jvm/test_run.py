#!/usr/bin/env python3
"""vtpin run: gates pass and fail as documented, the JUnit XML is well-formed and says
which sites failed, and every JVM of a shell wrapper is instrumented."""
import json
import os
import re
import shutil
import signal
import subprocess
import time
import xml.dom.minidom

from harness import (AGENT, BUILD, CLASSES, EXTRA_AGENT_OPTS, FIXTURE_LIB, VTPIN, Failure, check, describe, jdk_home,
                     main, native_block_in, report_json, run_peak_rss, skip, tempdir)

GATE_FAILED = 3


def vtpin_run(gates, java_cmds, shell=False):
    d = tempdir("vtpin-run-test-")
    junit = os.path.join(d, "pins.xml")
    if shell:
        command = ["sh", "-c", " ; ".join(" ".join(c) for c in java_cmds)]
    else:
        command = java_cmds[0]
    extra = ["--agent-options", EXTRA_AGENT_OPTS] if EXTRA_AGENT_OPTS else []
    p = subprocess.run([VTPIN, "run", "--dir", os.path.join(d, "run"), "--junit", junit] + extra + gates + ["--"] + command,
                       capture_output=True, text=True, timeout=180)
    return p, junit, os.path.join(d, "run")


def java(jdk, fixture, *args, parallelism=None):
    cmd = [os.path.join(jdk_home(jdk), "bin", "java"), "--enable-native-access=ALL-UNNAMED",
           "-Djava.library.path=" + FIXTURE_LIB, "-cp", CLASSES]
    if parallelism:
        cmd += ["-Djdk.virtualThreadScheduler.parallelism=%d" % parallelism,
                "-Djdk.virtualThreadScheduler.maxPoolSize=%d" % parallelism]
    return cmd + [fixture] + [str(a) for a in args]


def junit_cases(path):
    doc = xml.dom.minidom.parse(path)  # raises on malformed XML
    suite = doc.getElementsByTagName("testsuite")[0]
    cases = doc.getElementsByTagName("testcase")
    check(int(suite.getAttribute("tests")) == len(cases), "tests attribute matches the cases")
    failed = [c for c in cases if c.getElementsByTagName("failure")]
    check(int(suite.getAttribute("failures")) == len(failed), "failures attribute matches")
    return cases, failed


def case_fail_on_pins():
    p, junit, _ = vtpin_run(["--fail-on-pins", "1"], [java(21, "Repro", parallelism=4)])
    check(p.returncode == GATE_FAILED, "exit %d, expected %d\n%s" % (p.returncode, GATE_FAILED, p.stdout[-1500:]))
    # Repro's 100; the JDK itself may add a short pin of its own now and then
    check(re.search(r"--fail-on-pins 1: (\d+) pins", p.stdout) and
          int(re.search(r"--fail-on-pins 1: (\d+) pins", p.stdout).group(1)) >= 100,
          "the failing gate is named with Repro's 100 pins:\n" + p.stdout[-800:])
    cases, failed = junit_cases(junit)
    names = [c.getAttribute("name") for c in failed]
    check("gates" in names and "Repro.settle(Repro.java:20)" in names, "failed cases: %s" % names)


def case_fail_on_hogs():
    """--fail-on-hogs: two virtual threads that compute 600 ms without unmounting fail it; --allow on
    their frame sets them aside; threads that yield between slices pass."""
    p, junit, _ = vtpin_run(["--fail-on-hogs", "1"], [java(21, "CarrierHog", "spin", 2, 600, parallelism=2)])
    check(p.returncode == GATE_FAILED, "exit %d, expected %d\n%s" % (p.returncode, GATE_FAILED, p.stdout[-1500:]))
    check("--fail-on-hogs 1: 2 carrier hog(s)" in p.stdout and "2 carrier hog(s) (" in p.stdout,
          "the failing gate is named with the two hogs:\n" + p.stdout[-1500:])
    # the JUnit report has a case per hog, failed, at its frame
    cases, failed = junit_cases(junit)
    hogs = [c for c in failed if c.getAttribute("classname").endswith(".HOG")]
    check(len(hogs) == 2 and all(c.getAttribute("name").startswith("CarrierHog.spin(") for c in hogs),
          "two failed hog cases at CarrierHog.spin: %s" % [(c.getAttribute("classname"), c.getAttribute("name"))
                                                        for c in failed])
    p, junit, _ = vtpin_run(["--fail-on-hogs", "1", "--allow", "CarrierHog.spin"],
                            [java(21, "CarrierHog", "spin", 2, 600, parallelism=2)])
    check(p.returncode == 0 and "gates passed" in p.stdout and "0 carrier hog(s)" in p.stdout,
          "allowed hogs pass: exit %d\n%s" % (p.returncode, p.stdout[-1500:]))
    cases, failed = junit_cases(junit)
    hogs = [c for c in cases if c.getAttribute("classname").endswith(".HOG")]
    check(not failed and len(hogs) == 2 and all("not counted (--allow)" in c.toxml() for c in hogs),
          "allowed hogs are listed, not counted: %s" % [c.toxml()[:300] for c in cases])
    p, _, _ = vtpin_run(["--fail-on-hogs", "1"], [java(21, "CarrierHog", "yield", 6, 600, parallelism=2)])
    check(p.returncode == 0 and "0 carrier hog(s)" in p.stdout, "yielding code passes: exit %d\n%s" %
          (p.returncode, p.stdout[-1500:]))


def case_pass_on_25():
    """Repro does not pin on 25, so the gate passes. Positive control in the same JVM: JniSleep
    runs first (Chain) and pins twice in native code; those pins are allowed, so they must be
    reported as allowed: an agent that detects nothing fails here instead of passing."""
    p, junit, _ = vtpin_run(["--fail-on-pins", "1", "--allow", "JniSleep.*"],
                            [java(25, "Chain", "JniSleep", 2, 100, "--", "Repro", parallelism=4)])
    check(p.returncode == 0, "JDK 25 does not pin on monitors: exit %d\n%s" % (p.returncode, p.stdout[-800:]))
    check("gates passed" in p.stdout, p.stdout[-500:])
    check(re.search(r"\b2 allowed\b", p.stdout), "the control's 2 JniSleep pins are found (and allowed):\n" +
          p.stdout[-800:])
    cases, failed = junit_cases(junit)
    check(not failed, "no failed case")
    check(any("JniSleep" in c.getAttribute("name") for c in cases), "the control's site is listed: %s" %
          [c.getAttribute("name") for c in cases])


JDK_PREFIXES = ("java.", "javax.", "jdk.", "sun.", "com.sun.")


def case_allow():
    """Pins with a frame matching --allow are reported as allowed and do not count. The JDK 21
    may add a short pin of its own (contended method-handle linkage when the virtual threads
    link one call site at once): with only the JDK's frames it is set aside as JDK-internal,
    with an application frame it counts. The verdict is checked against the recording."""
    p, junit, run_dir = vtpin_run(["--fail-on-pins", "1", "--allow", "Repro.settle"],
                                  [java(21, "Repro", parallelism=4)])
    recs = [os.path.join(run_dir, f) for f in os.listdir(run_dir) if f.endswith(".vtp")]
    check(len(recs) == 1, "one recording: %s" % recs)
    pins = report_json(recs[0])["pins"]
    mine = [q for q in pins if any(f["class"] == "Repro" and f["method"] == "settle" for f in q["stack"] or [])]
    others = [q for q in pins if q not in mine]
    jdk_only = [q for q in others if q["stack"] and all(f["class"].startswith(JDK_PREFIXES) for f in q["stack"])]
    counted = [q for q in others if q not in jdk_only]
    for q in others:
        top = q["stack"][q["culprit"]] if q["stack"] and q["culprit"] is not None else {}
        print("not allowed: %s %s.%s, %s ns, %d frames%s%s" % (
            q["reason"], top.get("class"), top.get("method"), q["duration_ns"], len(q["stack"] or []),
            " (truncated)" if q["stack_truncated"] else "", " (JDK-internal)" if q in jdk_only else ""))
        check(top.get("class", "").startswith(JDK_PREFIXES), "only the JDK's own pins: %s" % top)
    check(len(mine) >= 100, "Repro's 100 pins are in the recording: %d" % len(mine))
    check("%d allowed, %d JDK-internal" % (len(mine), len(jdk_only)) in p.stdout,
          "they are the allowed ones, the JDK's own are set aside:\n" + p.stdout[-400:])
    check(p.returncode == (GATE_FAILED if counted else 0),
          "allowed pins do not count, the %d others do: exit %d\n%s" % (len(counted), p.returncode, p.stdout[-800:]))
    cases, failed = junit_cases(junit)
    site = "Repro.settle(Repro.java:20)"
    check(any(c.getAttribute("name") == site for c in cases), "the site is listed")
    check(site not in [c.getAttribute("name") for c in failed], "and not failed")
    check(bool(failed) == bool(counted), "failed cases only for the counted others: %d" % len(failed))


def case_pinned_time():
    p, _, _ = vtpin_run(["--fail-on-pinned-time", "1s"], [java(25, "JniSleep", 4, 300, parallelism=2)])
    check(p.returncode == GATE_FAILED, "4 x 300 ms >= 1 s: exit %d\n%s" % (p.returncode, p.stdout[-600:]))
    p, _, _ = vtpin_run(["--fail-on-pinned-time", "10s"], [java(25, "JniSleep", 4, 300, parallelism=2)])
    check(p.returncode == 0, "under 10 s: exit %d" % p.returncode)


def case_native_block(jdk):
    p, _, _ = vtpin_run(["--fail-on-native-block"], [java(int(jdk), "NativeBlock", "read", 2, 500, parallelism=2)])
    check(p.returncode == GATE_FAILED, "exit %d\n%s" % (p.returncode, p.stdout[-600:]))
    check("native-block" in p.stdout, p.stdout[-400:])


DROP_CAPS = ["setpriv", "--inh-caps=-all", "--bounding-set=-all", "--"]


def json_reports(stdout):
    """The vtpin.report/1 documents vtpin run --format json printed, after the JVM's own lines."""
    dec, docs, pos = json.JSONDecoder(), [], 0
    while True:
        pos = stdout.find("\n{", pos)
        if pos < 0:
            return docs
        doc, end = dec.raw_decode(stdout, pos + 1)
        docs.append(doc)
        pos = end


def run_native_block_nanosleep(jdk, d, prefix=(), wrap=(), tracked=False):
    """vtpin run --format json over NativeBlock's 2 x 1 s nanosleep on 2 carriers (its java
    command after wrap, e.g. unshare). tracked: the blocks begin once the run's collector
    tracks both carriers in its kernel view (a carrier tracked after its block began has only
    /proc's word that it sleeps, from then on: no start to time the pin by)."""
    run_dir = os.path.join(d, "run")
    go = os.path.join(d, "go")
    cmd = list(prefix) + [VTPIN, "run", "--dir", run_dir, "--format", "json", "--"] + \
        list(wrap) + java(int(jdk), "NativeBlock", "nanosleep", 2, 1000, *((go,) if tracked else ()), parallelism=2)
    if tracked:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            sock, status, deadline = os.path.join(run_dir, "collector.sock"), None, time.monotonic() + 120
            while time.monotonic() < deadline and p.poll() is None:
                q = subprocess.run([VTPIN, "status", "--json", "--socket", sock], capture_output=True, text=True)
                if q.returncode == 0:
                    status = json.loads(q.stdout)
                    if any(sum(1 for c in j.get("kernel_carriers") or [] if c["kernel"]) >= 2 for j in status["jvms"]):
                        break
                time.sleep(0.1)
            check(p.poll() is None, "vtpin run ended before its collector tracked the carriers: %s" % status)
            check(time.monotonic() < deadline, "the run's collector did not track 2 carriers: %s" % status)
            open(go, "w").close()
            out, err = p.communicate(timeout=240)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        p = subprocess.CompletedProcess(cmd, p.returncode, out, err)
    else:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    check(p.returncode == 0, "exit %d\n%s\n%s" % (p.returncode, p.stdout[-800:], p.stderr[-800:]))
    reports = json_reports(p.stdout)
    check(len(reports) == 1, "one JVM, one report: %d\n%s" % (len(reports), p.stdout[-800:]))
    # the fixture's blocks (the JDK 25 can block briefly in native code of its own, e.g. a futex)
    blocks = [x for x in reports[0]["pins"] if native_block_in(x, "NativeBlock")]
    check(len(blocks) >= 2, "the agent found the 2 native blocks: %s" % [x["reason"] for x in reports[0]["pins"]])
    return p, blocks


def case_kernel_view(jdk, container=False):
    """As root, the run's collector has the kernel view: the start line says so and the run's
    report gives each NATIVE_BLOCK pin what the kernel saw (the nanosleep, its off-CPU time).
    container: the JVM in a pid namespace of its own (pid 1 there), which the run's collector
    names by its host pid: the kernel view is joined all the same."""
    if os.geteuid() != 0:
        skip("the kernel view needs root (CI runs as root)")
    wrap = ()
    if container:
        if not shutil.which("unshare"):
            skip("unshare (util-linux) not installed")
        wrap = ("unshare", "-p", "-f", "--mount-proc")
    d = tempdir("vtpin-run-kernel-")
    try:
        p, blocks = run_native_block_nanosleep(jdk, d, wrap=wrap, tracked=True)
        if container:
            check(all(r["jvm"]["pid"] == 1 for r in json_reports(p.stdout)), "the JVM was pid 1 in its namespace")
        check(re.search(r"^vtpin run: kernel view on\b", p.stderr, re.M), "the start line: %s\n%s" % (
            re.findall(r"^vtpin.*$", p.stderr, re.M)[:8], p.stderr[-800:]))
        for b in blocks:
            k = b["kernel"]
            check(k is not None, "the kernel view is joined to the pin: %s" % b)
            check(k["syscall"] in ("nanosleep", "clock_nanosleep") or
                  any("nanosleep" in f for f in k["stack"]), "the kernel's syscall names the sleep: %s" % k)
            # the 1 s sleep: most of the pin is off CPU (no timing gate, just not nothing)
            check(k["off_cpu_ns"] > 0 and k["intervals"] >= 1, "off-CPU time from the kernel: %s" % k)
            # timed by the kernel as `vtpin report` times a collector's recording, not a sample late
            parks = k["parks"]
            check(b["timed_by"] == "kernel" and parks and b["start_ns"] == parks[0]["start_ns"],
                  "timed by the kernel's sleep: %s" % b)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def case_kernel_view_container(jdk):
    case_kernel_view(jdk, container=True)


def case_kernel_view_off(jdk):
    """Without privileges (capabilities dropped) the run works as before, from the agents'
    recordings, and the start line says why the kernel view is off."""
    if not shutil.which("setpriv"):
        skip("setpriv (util-linux) not installed")
    if os.geteuid() != 0:
        skip("dropping capabilities needs a root test run (as a user there are none to drop)")
    d = tempdir("vtpin-run-kernel-off-")
    try:
        p, blocks = run_native_block_nanosleep(jdk, d, prefix=DROP_CAPS)
        line = re.search(r"^vtpin run: kernel view off: (.*)$", p.stderr, re.M)
        check(line and "CAP_BPF" in line.group(1), "the start line says why:\n" + p.stderr[-800:])
        check(all(b["kernel"] is None for b in blocks), "no kernel view, none joined: %s" % blocks)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def case_attach_on_pin(jdk):
    """--attach-on-pin: a command whose JVM sheds JAVA_TOOL_OPTIONS (env -u) has no agent, and a plain run
    judges nothing (exit 4). With --attach-on-pin, the run's collector watches that JVM from the kernel,
    loads the agent at its first pin, and the run judges both sessions: the kernel's pins before the
    attach, the agent's after (with their culprit), and --fail-on-pins fails on them. A JVM outside the
    run (started beside it, pinning too) is not watched: the run's collector is scoped to its command."""
    if os.geteuid() != 0:
        skip("the kernel view needs root (CI runs as root)")
    jdk = int(jdk)
    d = tempdir("vtpin-run-attach-")
    try:
        go = os.path.join(d, "go")
        open(go, "w").close()  # ZeroTouch pins at once: 40 sleeps of 150 ms on 2 carriers, about 3 s
        shed = ["env", "-u", "JAVA_TOOL_OPTIONS"] + java(jdk, "ZeroTouch", "monitor", go, 40, 150, parallelism=2)
        p, _, _ = vtpin_run(["--fail-on-pins", "1"], [shed])
        print("without --attach-on-pin: exit %d\n%s%s" % (p.returncode, p.stdout[-600:], p.stderr[-600:]))
        check(p.returncode == 4 and re.search(r"^vtpin run: nothing judged", p.stdout, re.M),
              "a JVM that shed the agent is not judged: exit %d" % p.returncode)
        # beside the run: the same program, no agent, not the run's, pinning all through it (400 sleeps of
        # 150 ms on 2 carriers: 30 s; stopped once the run is over)
        beside_go = os.path.join(d, "go-beside")
        beside = subprocess.Popen(java(jdk, "ZeroTouch", "monitor", beside_go, 400, 150, parallelism=2),
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            check(beside.stdout.readline().strip() == "ZeroTouch: ready", "the JVM beside the run is ready")
            open(beside_go, "w").close()
            p, _, _ = vtpin_run(["--fail-on-pins", "1", "--format", "json", "--attach-on-pin"], [shed])
            check(beside.poll() is None, "the JVM beside the run pinned all through it")
        finally:
            beside.kill()
            beside.wait(60)
        print("with --attach-on-pin: exit %d\n%s" % (p.returncode, p.stderr[-1500:]))
        check(re.search(r"^vtpin run: attach on pin: 1 JVM\(s\) without the agent", p.stderr, re.M),
              "the run says it judged one JVM from its collector:\n" + p.stderr[-1500:])
        reports = json_reports(p.stdout)
        modes = sorted(r["jvm"]["mode"] for r in reports)
        check(modes == ["attach", "kernel"] and len({r["jvm"]["pid"] for r in reports}) == 1,
              "one JVM, its kernel session and its attached agent's: %s" % [(r["jvm"]["pid"], r["jvm"]["mode"])
                                                                             for r in reports])
        check(beside.pid not in {r["jvm"]["pid"] for r in reports}, "the JVM beside the run is not judged")
        kernel = [r for r in reports if r["jvm"]["mode"] == "kernel"][0]["pins"]
        agent = [r for r in reports if r["jvm"]["mode"] == "attach"][0]["pins"]
        check(kernel and all(x["reason"] == "MONITOR" and not x["stack"] for x in kernel),
              "the kernel's pins before the attach, MONITOR (read from the JVM), no stack: %s" %
              [describe(x) for x in kernel[:3]])
        check(agent and any(x["reason"] == "MONITOR" and "ZeroTouch" in describe(x) for x in agent),
              "the agent's pins after it, with their culprit: %s" % [describe(x) for x in agent[:3]])
        m = re.search(r"--fail-on-pins 1: (\d+) pins", p.stdout)
        check(p.returncode == GATE_FAILED and m and int(m.group(1)) >= len(kernel) + 1,
              "the gate judged both sessions' pins: exit %d\n%s" % (p.returncode, p.stdout[-1500:]))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def case_wrapper():
    """Two JVMs started by a shell script: both instrumented, both counted; the command's status comes back."""
    p, _, run_dir = vtpin_run([], [java(25, "JniSleep", 2, 50, parallelism=2), java(25, "CpuBound", 100, 100),
                                   ["exit", "7"]], shell=True)
    recordings = [f for f in os.listdir(run_dir) if f.startswith("jvm-") and f.endswith(".vtp")]
    check(len(recordings) == 2, "two JVMs recorded: %s" % recordings)
    check("2 JVM(s)" in p.stdout, p.stdout[-400:])
    check(p.returncode == 7, "no gate failed: the command's status (7), got %d" % p.returncode)


def alive(pid):
    """True while pid runs (a zombie counts as gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


DEADLOCK = "deadlock (carrier starvation): all 2 carriers of the scheduler (parallelism 2) are pinned"


def case_fail_on_deadlock(keep="end"):
    """The gate that is on by default: a test JVM that hangs in the incident (2 carriers pinned behind a
    ReentrantLock whose owner, unmounted, never gets one back) fails the run, with the deadlock named in
    the report, first, and as a JUnit case. By default the run ends the hung command itself once its
    collector has the deadlock (SIGTERM: exit 143); keep (--no-end-on-deadlock): it runs on until its
    wrapper kills it, as a test timeout does (exit 137)."""
    d = tempdir(prefix="vtpin-run-deadlock-")
    jvm = None
    try:
        run_dir = os.path.join(d, "run")
        junit = os.path.join(d, "pins.xml")
        opts = ["--no-end-on-deadlock"] if keep == "keep" else []
        cmd = [VTPIN, "run", "--dir", run_dir, "--junit", junit] + opts + ["--"] + \
            java(21, "LockChain", "lock", 2, 200, parallelism=2)
        out, err = open(os.path.join(d, "out"), "w+"), open(os.path.join(d, "err"), "w+")
        p = subprocess.Popen(cmd, stdout=out, stderr=err, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and p.poll() is None and DEADLOCK not in open(err.name).read():
                time.sleep(0.1)
            check(DEADLOCK in open(err.name).read(), "the agent did not say the deadlock on the JVM's stderr:\n" +
                  open(err.name).read()[-1500:])
            if keep == "keep":
                q = subprocess.run([VTPIN, "status", "--json", "--socket", os.path.join(run_dir, "collector.sock")],
                                   capture_output=True, text=True, timeout=30)
                jvms = json.loads(q.stdout)["jvms"] if q.returncode == 0 else []
                check(len(jvms) == 1 and alive(jvms[0]["pid"]), "the hung JVM, in the run's collector: %s" % q.stdout)
                jvm = jvms[0]["pid"]
                os.kill(jvm, signal.SIGKILL)  # as a test's timeout ends a hung JVM
            rc = p.wait(90)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        stderr = open(err.name).read()
        ended = "vtpin run: ended the command: a deadlock found live never ends by itself"
        if keep == "keep":
            check("ending COMMAND" not in stderr and ended not in open(out.name).read(),
                  "--no-end-on-deadlock: the run let it run:\n" + stderr[-1500:])
        else:
            check(re.search(r"^vtpin run: JVM \d+: DEADLOCK \(carrier_starvation\) found live, which never ends by "
                            r"itself: ending COMMAND \(SIGTERM, SIGKILL after the grace\)", stderr, re.M),
                  "the run says it ends the command, and why:\n" + stderr[-1500:])
            check(ended in open(out.name).read(), "and says so after the report:\n" + open(out.name).read()[-800:])
        stdout = open(out.name).read()
        check(rc == GATE_FAILED, "exit %d, expected %d\n%s" % (rc, GATE_FAILED, stdout[-1500:]))
        check("--fail-on-deadlock: 1 deadlock(s) found live (carrier_starvation)" in stdout and
              "1 deadlock(s); command exited %d" % (137 if keep == "keep" else 143) in stdout,
              "the failed gate names the deadlock:\n" + stdout[-1500:])
        lines = stdout.splitlines()
        first = next(i for i, l in enumerate(lines) if l.startswith("DEADLOCK (carrier_starvation, found live"))
        sites = next(i for i, l in enumerate(lines) if " pin" in l and " site" in l and "pinned in total" in l)
        check(first < sites and DEADLOCK in lines[first] and '"lock-holder" (virtual thread ' in lines[first],
              "the report says the deadlock first, before its pins:\n" + "\n".join(lines[:first + 3]))
        cases, failed = junit_cases(junit)
        dead = [c for c in failed if c.getAttribute("classname").endswith(".DEADLOCK")]
        check(len(dead) == 1 and dead[0].getAttribute("name") == "carrier_starvation" and
              DEADLOCK in dead[0].getElementsByTagName("failure")[0].getAttribute("message"),
              "one failed DEADLOCK case: %s" % [(c.getAttribute("classname"), c.getAttribute("name")) for c in failed])
        recs = [f for f in os.listdir(run_dir) if f.endswith(".vtp")]
        rep = report_json(os.path.join(run_dir, recs[0]))
        check(len(recs) == 1 and [x["kind"] for x in rep["deadlocks"]] == ["carrier_starvation"] and
              DEADLOCK in rep["deadlocks"][0]["text"], "the JSON report's deadlocks: %s" % rep["deadlocks"])
        # the HTML page, rendered by Chromium, shows it in its own section, first
        page = os.path.join(d, "report.html")
        subprocess.run([VTPIN, "report", "--format", "html", "-o", page, os.path.join(run_dir, recs[0])],
                       check=True, timeout=60)
        from chromium import Chromium
        from test_views import Dom
        with Chromium(d) as c:
            dom = Dom(c.dom("file://" + page))
        section = dom.by_id("deadlocks-section")
        shown = [e["text"] for e in dom.by_class("deadlock", "li")]
        check(section is not None and "hidden" not in section["attrs"] and len(shown) == 1 and
              shown[0].startswith("carrier_starvation: ") and DEADLOCK in shown[0],
              "the HTML page's deadlock section: %s %s" % (section and section["attrs"], shown))
    finally:
        if jvm and alive(jvm):
            os.kill(jvm, signal.SIGKILL)
        shutil.rmtree(d, ignore_errors=True)


def case_signal(name):
    """SIGTERM/SIGHUP/SIGINT to vtpin run alone: forwarded to the JVM, the run's collector stopped,
    the report of what ran printed, exit 128+signal."""
    sig = getattr(signal, "SIG" + name)
    d = tempdir(prefix="vtpin-run-signal-")
    jvm = collector = None
    try:
        run_dir = os.path.join(d, "run")
        sock = os.path.join(run_dir, "collector.sock")
        # 400 native pins of 300 ms on 2 carriers: about a minute, far longer than the test waits
        cmd = [VTPIN, "run", "--dir", run_dir, "--format", "json", "--"] + java(25, "JniSleep", 400, 300,
                                                                                  parallelism=2)
        out, err = open(os.path.join(d, "out"), "w+"), open(os.path.join(d, "err"), "w+")
        p = subprocess.Popen(cmd, stdout=out, stderr=err, start_new_session=True)
        try:
            status, deadline = None, time.monotonic() + 120
            while time.monotonic() < deadline and p.poll() is None:
                q = subprocess.run([VTPIN, "status", "--json", "--socket", sock], capture_output=True, text=True)
                if q.returncode == 0:
                    status = json.loads(q.stdout)
                    if status["jvms"] and status["jvms"][0]["pins_total"] >= 2:
                        break
                time.sleep(0.2)
            check(p.poll() is None and status and status["jvms"] and status["jvms"][0]["pins_total"] >= 2,
                  "the JVM did not get to pin under vtpin run (%s)" % status)
            jvm, collector = status["jvms"][0]["pid"], status["collector"]["pid"]
            check(alive(jvm) and alive(collector), "JVM %d and collector %d run" % (jvm, collector))
            os.kill(p.pid, sig)  # vtpin alone, not its group
            try:
                rc = p.wait(90)
            except subprocess.TimeoutExpired:
                raise Failure("vtpin run did not exit after SIG%s" % name)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
        check(rc == 128 + sig, "exit %d, expected %d\n%s\n%s" % (rc, 128 + sig, stdout[-800:], stderr[-800:]))
        check(not alive(jvm), "the JVM %d still runs after SIG%s to vtpin run" % (jvm, name))
        check(not alive(collector), "the run's collector %d still runs" % collector)
        check(("stopped by signal %d" % sig) in stdout and "1 JVM(s)" in stdout, stdout[-800:])
        start = stdout.index("\n{") + 1  # after the JVM's own lines
        report, _ = json.JSONDecoder().raw_decode(stdout[start:])
        check(report["jvm"]["pid"] == jvm, "the report is the JVM's: %s" % report["jvm"])
        check(len(report["pins"]) >= 2 and all(p_["reason"] == "NATIVE" for p_ in report["pins"]),
              "the pins seen before the signal are reported, all NATIVE: %d\n  %s" %
              (len(report["pins"]), "\n  ".join(describe(p_) for p_ in report["pins"] if p_["reason"] != "NATIVE")))
    finally:
        for pid in (jvm, collector):  # what a failing vtpin left behind
            if pid and alive(pid):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(d, ignore_errors=True)


def children_of(pid):
    """The pids whose parent is pid, from /proc."""
    kids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        kids.append(int(name))
            except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
                pass
    return kids


def wait_gone(pids, seconds):
    """Polls /proc until none of pids runs; those still running after seconds."""
    deadline = time.monotonic() + seconds
    while True:
        left = [x for x in pids if alive(x)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


class DeafWrapper:
    """vtpin run over `sh -c "trap '' TERM INT HUP; java A & java B; wait"`: a wrapper (and two JVMs
    under it, which inherit the ignored signals) that only SIGKILL ends. Started in a session of its
    own, so that what the test sends reaches vtpin alone."""

    def __init__(self, jdk, grace_ms=None):
        self.d = tempdir(prefix="vtpin-run-deaf-")
        self.run_dir = os.path.join(self.d, "run")
        jvm = " ".join(java(jdk, "JniSleep", 2000, 300, parallelism=2))  # 5 minutes of pins
        script = "trap '' TERM INT HUP; %s & %s; wait" % (jvm, jvm)
        extra = ["--agent-options", EXTRA_AGENT_OPTS] if EXTRA_AGENT_OPTS else []
        cmd = [VTPIN, "run", "--dir", self.run_dir] + extra + ["--", "sh", "-c", script]
        self.out, self.err = open(os.path.join(self.d, "out"), "w+"), open(os.path.join(self.d, "err"), "w+")
        env = dict(os.environ, VTPIN_RUN_GRACE_MS=str(grace_ms)) if grace_ms is not None else None
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=self.err, start_new_session=True, env=env)
        self.pids = []

    def wait_pinning(self):
        """Until both JVMs pin: then the pids of sh, both JVMs and the collector."""
        sock = os.path.join(self.run_dir, "collector.sock")
        status, deadline = None, time.monotonic() + 120
        while time.monotonic() < deadline and self.proc.poll() is None:
            q = subprocess.run([VTPIN, "status", "--json", "--socket", sock], capture_output=True, text=True)
            if q.returncode == 0:
                status = json.loads(q.stdout)
                if len(status["jvms"]) == 2 and all(j["pins_total"] >= 2 for j in status["jvms"]):
                    break
            time.sleep(0.2)
        check(self.proc.poll() is None and status and len(status["jvms"]) == 2 and
              all(j["pins_total"] >= 2 for j in status["jvms"]),
              "the two JVMs did not get to pin under vtpin run (%s)\n%s" % (status, self.stderr()))
        sh = [k for k in children_of(self.proc.pid) if open("/proc/%d/comm" % k).read().strip() == "sh"]
        check(len(sh) == 1, "vtpin run's child is the sh wrapper: %s" % children_of(self.proc.pid))
        jvms = [j["pid"] for j in status["jvms"]]
        check(sorted(children_of(sh[0])) == sorted(jvms), "both JVMs are the wrapper's children")
        self.pids = {"sh": sh[0], "jvm1": jvms[0], "jvm2": jvms[1], "collector": status["collector"]["pid"]}
        check(all(alive(x) for x in self.pids.values()), "all run: %s" % self.pids)
        return self.pids

    def stdout(self):
        self.out.seek(0)
        return self.out.read()

    def stderr(self):
        self.err.seek(0)
        return self.err.read()

    def cleanup(self):
        """Whatever a failing vtpin left behind."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pid in self.pids.values() if self.pids else ():
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def case_term_ignored(jdk):
    """SIGTERM (twice, then SIGINT) to vtpin run whose command ignores them: forwarded, then after
    the grace (VTPIN_RUN_GRACE_MS, 3 s here; 10 s by default) SIGKILL of the whole group, not
    before; the report of what ran is printed, exit 128+15."""
    grace_s = 3
    w = DeafWrapper(int(jdk), grace_ms=grace_s * 1000)
    try:
        pids = w.wait_pinning()
        start = time.monotonic()
        for sig in (signal.SIGTERM, signal.SIGTERM, signal.SIGINT):
            os.kill(w.proc.pid, sig)
            time.sleep(0.5)
        try:
            rc = w.proc.wait(60)  # the grace and the report; a vtpin that waits forever fails here
        except subprocess.TimeoutExpired:
            left = [n for n, x in pids.items() if alive(x)]
            raise Failure("vtpin run still runs 60 s after SIGTERM (alive: %s)\n%s" % (left, w.stderr()))
        took = time.monotonic() - start
        print("vtpin run exited %d %.1f s after SIGTERM\n%s" % (rc, took, w.stderr()))
        left = wait_gone(pids.values(), 5)
        check(not left, "still running after vtpin run exited: %s" % [n for n, x in pids.items() if x in left])
        check(rc == 128 + signal.SIGTERM, "exit 128+15, got %d" % rc)
        check("still running %d.0 s after the signal: killing them" % grace_s in w.stderr(),
              "it says it killed what ignored the signal after the grace:\n" + w.stderr())
        check(took >= grace_s, "the group was killed %.1f s after SIGTERM, before the %d s grace" % (took, grace_s))
        out = w.stdout()
        check("stopped by signal 15" in out and "2 JVM(s)" in out, "the report is written:\n" + out[-800:])
    finally:
        w.cleanup()


def case_sigkill(jdk):
    """SIGKILL of vtpin run: the wrapper, both JVMs under it and the run's collector die with it."""
    w = DeafWrapper(int(jdk))
    try:
        pids = w.wait_pinning()
        os.kill(w.proc.pid, signal.SIGKILL)
        w.proc.wait()
        left = wait_gone(pids.values(), 10)
        check(not left, "still running 10 s after SIGKILL of vtpin run: %s" % [
            n for n, x in pids.items() if x in left])
        check(("vtpin run (pid %d) was killed: killing its command" % w.proc.pid) in w.stderr(),
              "the watchman says what it did:\n" + w.stderr())
    finally:
        w.cleanup()


def case_agent_already(jdk):
    """A command whose JVM already loads vtpin (JAVA_TOOL_OPTIONS, or -agentpath on its command line):
    vtpin run adds no second agent; it judges what that agent records (its record=), watches live on
    its collector, and says what it could not do when the agent records nowhere it can read."""
    jdk = int(jdk)
    d = tempdir(prefix="vtpin-run-already-")
    extra = "," + EXTRA_AGENT_OPTS if EXTRA_AGENT_OPTS else ""
    sock = os.path.join(d, "own.sock")
    coll = subprocess.Popen([VTPIN, "collector", "--socket", sock, "--dir", os.path.join(d, "coll"), "--jvms=agents"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(sock):
            check(coll.poll() is None and time.monotonic() < deadline, "the test's collector did not start")
            time.sleep(0.05)

        def run(command, env, run_dir):
            p = subprocess.run([VTPIN, "run", "--dir", run_dir, "--fail-on-pins", "1", "--"] + command, env=env,
                               capture_output=True, text=True, timeout=180)
            print("$ vtpin run -- %s\n-> %d\n%s%s" % (" ".join(command), p.returncode, p.stdout[-600:], p.stderr))
            check("loaded a second time" not in p.stderr, "no second agent was loaded:\n" + p.stderr)
            check(not [f for f in os.listdir(run_dir) if f.startswith("jvm-")], "no recording of an agent of its own")
            return p

        # in JAVA_TOOL_OPTIONS, with record= and collector=
        tool = "-agentpath:%s=record=%s/tool-%%p.vtp,collector=%s%s" % (AGENT, d, sock, extra)
        p = run(java(jdk, "JniSleep", 4, 50, parallelism=2), dict(os.environ, JAVA_TOOL_OPTIONS=tool),
                os.path.join(d, "run1"))
        check(p.returncode == GATE_FAILED and "1 JVM(s)" in p.stdout and "4 pin(s) counted" in p.stdout,
              "the run judges the agent's own recording (JniSleep's 4 pins)")
        check("already loads vtpin" in p.stderr and ("vtpin top --socket " + sock) in p.stderr,
              "it says so, and where to watch: its collector")
        check(("Picked up JAVA_TOOL_OPTIONS: %s\n" % tool) in p.stderr, "JAVA_TOOL_OPTIONS is passed on unchanged")
        q = subprocess.run([VTPIN, "status", "--json", "--socket", sock], capture_output=True, text=True, timeout=30)
        check(q.returncode == 0 and any(j["pins_total"] >= 4 for j in json.loads(q.stdout)["jvms"]),
              "the JVM streamed to its own collector: %s" % q.stdout[-400:])

        # on the command line, record= only
        env = {k: v for k, v in os.environ.items() if k != "JAVA_TOOL_OPTIONS"}
        cmd = java(jdk, "JniSleep", 4, 50, parallelism=2)
        own = cmd[:1] + ["-agentpath:%s=record=%s/cmd-%%p.vtp%s" % (AGENT, d, extra)] + cmd[1:]
        p = run(own, env, os.path.join(d, "run2"))
        check(p.returncode == GATE_FAILED and "1 JVM(s)" in p.stdout and "4 pin(s) counted" in p.stdout,
              "the run judges the command line agent's recording")
        check("already loads vtpin" in p.stderr and "no live view" in p.stderr, "it says there is no collector")
        check("Picked up JAVA_TOOL_OPTIONS" not in p.stderr, "nothing added to JAVA_TOOL_OPTIONS")

        # records nowhere vtpin run can read: said clearly
        own = cmd[:1] + ["-agentpath:%s=quiet%s" % (AGENT, extra)] + cmd[1:]
        p = run(own, env, os.path.join(d, "run3"))
        check("records nowhere vtpin run can read" in p.stderr, "it says what it could not do")
    finally:
        coll.terminate()
        coll.wait()


def case_reused_dir():
    """A second run in the same --dir judges only its own JVMs."""
    d = tempdir(prefix="vtpin-run-reuse-")
    try:
        run_dir = os.path.join(d, "run")
        first = subprocess.run([VTPIN, "run", "--dir", run_dir, "--fail-on-pins", "1", "--"] +
                               java(25, "JniSleep", 2, 50, parallelism=2), capture_output=True, text=True, timeout=180)
        check(first.returncode == GATE_FAILED and "1 JVM(s)" in first.stdout,
              "the first run pins (positive control): %d\n%s" % (first.returncode, first.stdout[-600:]))
        second = subprocess.run([VTPIN, "run", "--dir", run_dir, "--fail-on-pins", "1", "--", "true"],
                                capture_output=True, text=True, timeout=180)
        check(second.returncode == 4 and "0 JVM(s)" in second.stdout and "nothing judged" in second.stdout,
              "the second run started no JVM, judged nothing: %d\n%s" % (second.returncode, second.stdout[-600:]))
        check("no JVM ran with vtpin" in second.stderr, second.stderr)
        check(len([f for f in os.listdir(run_dir) if f.startswith("jvm-")]) == 1, "the first run's file is kept")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def background_script(d, jvm_cmds):
    """A script that starts each JVM in the background, writes their pids to d/pids and exits at once."""
    pids = os.path.join(d, "pids")
    lines = ["%s >/dev/null 2>&1 &\necho $! >> %s" % (" ".join(c), pids) for c in jvm_cmds]
    script = os.path.join(d, "start.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\n" + "\n".join(lines) + "\nexit 0\n")
    return ["sh", script], pids


def read_pids(path):
    with open(path) as f:
        return [int(x) for x in f.read().split()]


def case_background():
    """A command that starts 3 pinning JVMs in the background and exits at once: the run waits for
    them (they are what the command started) and judges all 3, their 4 pins each counted."""
    d = tempdir(prefix="vtpin-run-bg-")
    command, pids_file = background_script(d, [java(25, "JniSleep", 4, 300, parallelism=2)] * 3)
    p = subprocess.run([VTPIN, "run", "--dir", os.path.join(d, "run"), "--fail-on-pins", "1", "--"] + command,
                       capture_output=True, text=True, timeout=240)
    pids = read_pids(pids_file)
    left = [x for x in pids if alive(x)]
    for x in left:
        os.kill(x, signal.SIGKILL)
    check(not left, "JVMs still running after vtpin run exited: %s\n%s" % (left, p.stdout[-800:]))
    check(p.returncode == GATE_FAILED, "exit %d, expected %d\n%s\n%s" % (p.returncode, GATE_FAILED, p.stdout[-800:],
                                                                      p.stderr[-800:]))
    check("3 JVM(s), 12 pin(s) counted" in p.stdout, "all 3 JVMs judged, 4 pins each:\n" + p.stdout[-800:])
    check("--fail-on-pins 1: 12 pins" in p.stdout, "the gate names them:\n" + p.stdout[-400:])


def case_background_timeout():
    """JVMs the command left running past --background-timeout: the run fails its gate naming each
    one it could not judge (pid and command line), and leaves them be."""
    d = tempdir(prefix="vtpin-run-bgt-")
    command, pids_file = background_script(d, [java(25, "JniSleep", 2000, 300, parallelism=2)] * 2)
    pids = []
    try:
        start = time.monotonic()
        p = subprocess.run([VTPIN, "run", "--dir", os.path.join(d, "run"), "--background-timeout", "5s", "--"] +
                           command, capture_output=True, text=True, timeout=240)
        took = time.monotonic() - start
        pids = read_pids(pids_file)
        print("exit %d after %.1f s\n%s\n%s" % (p.returncode, took, p.stdout[-1500:], p.stderr[-1500:]))
        check(took >= 5, "the run waited the 5 s: %.1f s" % took)
        check(p.returncode == GATE_FAILED, "exit %d, expected %d" % (p.returncode, GATE_FAILED))
        check("gates passed" not in p.stdout, "no pass with JVMs unjudged")
        for x in pids:
            line = re.search(r"^vtpin run: not judged: JVM %d still running .*JniSleep" % x, p.stdout, re.M)
            check(line, "JVM %d is named with its command line" % x)
        check(re.search(r"^not judged: 2 JVM\(s\) still running", p.stdout, re.M), "the failed gate says why")
        check(all(alive(x) for x in pids), "the JVMs are left running: %s" % [x for x in pids if not alive(x)])
    finally:
        for x in pids:
            if alive(x):
                os.kill(x, signal.SIGKILL)


def case_agent_options_outputs():
    """--agent-options with record= or collector= would replace the run's own outputs (the agent takes
    one of each): refused as a usage error before COMMAND runs, never "gates passed" over pins unseen."""
    d = tempdir(prefix="vtpin-run-opts-")
    cmd = java(25, "JniSleep", 2, 50, parallelism=2)
    for opts in ("record=%s/x-%%p.vtp" % d, "threshold=0,record:%s/x-%%p.vtp" % d,
                 "collector=%s/other.sock" % d, "collector"):
        p = subprocess.run([VTPIN, "run", "--dir", os.path.join(d, "run"), "--fail-on-pins", "1",
                            "--agent-options", opts, "--"] + cmd, capture_output=True, text=True, timeout=180)
        print("--agent-options %s -> %d\n%s%s" % (opts, p.returncode, p.stdout[-300:], p.stderr[-600:]))
        check(p.returncode == 2, "refused (exit 2): %d" % p.returncode)
        check("gates passed" not in p.stdout, "no verdict")
        key = "record" if "record" in opts else "collector"
        check(re.search(r"--agent-options: %s.* would replace the run's own" % key, p.stderr),
              "it says why:\n" + p.stderr)
        check(not [f for f in os.listdir(d) if f.startswith("x-")], "COMMAND did not run")


def case_nothing_judged():
    """A command that runs no JVM: nothing was judged, said so, exit 4 (distinct from a failed gate, 3);
    a command that failed keeps its own status."""
    d = tempdir(prefix="vtpin-run-none-")
    for command, want in ((["true"], 4), (["sh", "-c", "exit 7"], 7)):
        p = subprocess.run([VTPIN, "run", "--dir", os.path.join(d, "run"), "--fail-on-pins", "1", "--"] + command,
                           capture_output=True, text=True, timeout=180)
        print("%s -> %d\n%s%s" % (command, p.returncode, p.stdout[-300:], p.stderr[-300:]))
        check(p.returncode == want, "exit %d, expected %d" % (p.returncode, want))
        check("gates passed" not in p.stdout, "no pass over nothing")
        check(re.search(r"^vtpin run: nothing judged: no JVM ran with vtpin", p.stdout, re.M), "the verdict says so")


def run_pins(run_dir):
    """Every pin of the run's recordings (the JSON report's)."""
    pins = []
    for f in sorted(os.listdir(run_dir)):
        if f.endswith(".vtp"):
            pins += report_json(os.path.join(run_dir, f))["pins"]
    return pins


def site_of(pin):
    """A pin's baseline site as docs/run.md defines it, computed here from the JSON report."""
    stack, c = pin["stack"] or [], pin["culprit"]
    top = stack[c] if c is not None and c < len(stack) else None
    if not top:
        return ("(no stack)", "", pin["reason"])
    return (top["class"].split("/0x")[0], top["method"], pin["reason"])


def case_baseline(jdk):
    """--write-baseline, then --baseline on a run with one site more: Repro's sites are accepted and
    only the new one (JniSleep's native pins) fails the run, named; the verdict is the one computed
    here from the run's own recordings (a site of the run that is not in the baseline, or has more
    than twice its pins). --only with a pattern no culprit matches counts nothing."""
    jdk = int(jdk)
    d = tempdir("vtpin-baseline-")
    base = os.path.join(d, "baseline.json")
    p, _, run_dir = vtpin_run(["--write-baseline", base], [java(jdk, "Repro", parallelism=20)])
    print(p.stdout[-600:])
    check(p.returncode == 0 and "vtpin run: wrote the baseline %s" % base in p.stdout,
          "the baseline written: exit %d\n%s%s" % (p.returncode, p.stdout[-800:], p.stderr[-800:]))
    with open(base) as f:
        text = f.read()
    doc = json.loads(text)
    check(doc["format"] == "vtpin.baseline/1", "the format: %s" % text[:200])
    known = {(s["class"], s["method"], s["reason"]): s["pins"] for s in doc["sites"]}
    counted = [q for q in run_pins(run_dir) if q["origin"] == "app"]
    check(sorted(known) == sorted(set(site_of(q) for q in counted)), "the baseline's sites are the run's: %s vs %s"
          % (sorted(known), sorted(set(site_of(q) for q in counted))))
    check(not re.search(r'"line"|\.java:', text), "no line numbers in the baseline:\n" + text)
    if jdk < 24:
        check(known.get(("Repro", "settle", "MONITOR"), 0) >= 100, "Repro's 100 monitor pins: %s" % known)
    else:
        check(("Repro", "settle", "MONITOR") not in known, "no monitor pins on 24+ (JEP 491): %s" % known)

    p, junit, run_dir = vtpin_run(["--baseline", base],
                                  [java(jdk, "Chain", "Repro", "--", "JniSleep", 2, 100, parallelism=20)])
    print(p.stdout[-1500:])
    now = {}
    for q in run_pins(run_dir):
        if q["origin"] == "app":
            now[site_of(q)] = now.get(site_of(q), 0) + 1
    failing = sorted(s for s, n in now.items() if s not in known or n > 2 * known[s])
    check(("JniSleep", "sleep", "NATIVE") in failing or any(s[0] == "JniSleep" and s[2] == "NATIVE" for s in failing),
          "JniSleep's native pins are a new site: %s" % failing)
    named = re.findall(r"^--baseline: (?:new|grown) pin site (\S+) (\S+)", p.stdout, re.M)
    check(sorted("%s%s%s %s" % (s[0], "." if s[1] else "", s[1], s[2]) for s in failing) ==
          sorted("%s %s" % n for n in named), "the run names exactly the new or grown sites: %s vs %s"
          % (failing, named))
    check(p.returncode == GATE_FAILED, "a new site fails the run: exit %d" % p.returncode)
    check(not re.search(r"^--baseline: .*Repro\.settle", p.stdout, re.M), "Repro's known site is not named")
    if jdk < 24:
        check(re.search(r"--baseline %s: (\d+) pin\(s\) at its" % re.escape(base), p.stdout) and
              int(re.search(r"--baseline %s: (\d+) pin\(s\) at its" % re.escape(base), p.stdout).group(1)) >= 100,
              "Repro's pins accepted:\n" + p.stdout[-800:])
    _, failed = junit_cases(junit)
    check(any("JniSleep" in c.getAttribute("name") for c in failed), "the JUnit case of the new site fails: %s"
          % [c.getAttribute("name") for c in failed])

    p, _, run_dir = vtpin_run(["--only", "com.nosuch.*", "--fail-on-pins", "1"],
                              [java(jdk, "Chain", "Repro", "--", "JniSleep", 2, 100, parallelism=20)])
    app = [q for q in run_pins(run_dir) if q["origin"] == "app"]
    check(p.returncode == 0 and "vtpin run: %d pin(s) and hog(s) blamed outside --only, not counted" % len(app)
          in p.stdout, "--only counts only what it names: exit %d, %d app pins\n%s" % (p.returncode, len(app),
                                                                                      p.stdout[-800:]))
    shutil.rmtree(d, ignore_errors=True)


# A command that plays N JVMs: it writes a copy of a recording ($0) where the run's agent would record
# for pids 1..N (the record= path of the JAVA_TOOL_OPTIONS the run exported).
PLAY_JVMS = ('rec=${JAVA_TOOL_OPTIONS#*record=}; rec=${rec%%,*}; i=0; '
             'while [ $i -lt "$1" ]; do i=$((i+1)); cp "$0" "$(printf %s "$rec" | sed "s/%p/$i/")"; done')


def case_memory():
    """The run reads its JVMs' recordings one at a time (issue 37): 12 recordings of 20,000 pins each
    are judged in about the memory of one (peak RSS by GNU time at most the run over one's and 8 MiB:
    17 MiB against 16.5; before, every recording was kept at once, 58 MiB, and the JUnit cases were
    built in memory), and judged as 12 times one: the pins counted, the baseline's sites and their
    pins, the JUnit cases."""
    synth = os.path.join(BUILD, "tests", "unit", "synth_recording")
    d = tempdir("vtpin-run-memory-")
    rec = os.path.join(d, "one.vtp")
    subprocess.run([synth, rec, "20000", "8"], check=True, timeout=120)
    runs = {}
    for jvms in (1, 12):
        out = os.path.join(d, str(jvms))
        os.mkdir(out)
        junit, base = os.path.join(out, "pins.xml"), os.path.join(out, "baseline.json")
        p, rss = run_peak_rss([VTPIN, "run", "--no-collector", "--dir", os.path.join(out, "run"), "--fail-on-pins", "1",
                               "--junit", junit, "--write-baseline", base, "--", "sh", "-c", PLAY_JVMS, rec,
                               str(jvms)])
        stdout = p.stdout.decode()
        print("%d JVM(s): peak RSS %d KiB, exit %d\n%s" % (jvms, rss, p.returncode, stdout[-400:]))
        check(p.returncode == GATE_FAILED, "the pins gate fails: exit %d\n%s" % (p.returncode, p.stderr.decode()))
        m = re.search(r"^vtpin run: (\d+) JVM\(s\), (\d+) pin\(s\) counted", stdout, re.M)
        check(m and int(m.group(1)) == jvms, "%d JVM(s) judged: %s" % (jvms, m and m.group(0)))
        cases, _ = junit_cases(junit)
        with open(base) as f:
            sites = {(s["class"], s["method"], s["reason"]): s["pins"] for s in json.load(f)["sites"]}
        runs[jvms] = (rss, int(m.group(2)), len(cases), sites)
    (rss1, pins1, cases1, sites1), (rss12, pins12, cases12, sites12) = runs[1], runs[12]
    check(pins1 > 0 and pins12 == 12 * pins1, "12 times the pins of one: %d, %d" % (pins12, pins1))
    check(cases12 - 1 == 12 * (cases1 - 1), "12 times one's JUnit cases (and the gates' case): %d, %d" % (
        cases12, cases1))
    check(sites1 and sites12 == {k: 12 * v for k, v in sites1.items()}, "the same sites, 12 times the pins")
    check(rss12 <= rss1 + 8 * 1024, "peak RSS %d KiB for 12 recordings, over one's (%d KiB) and 8 MiB" % (
        rss12, rss1))


def case_memory_long():
    """A JVM's one long session (issue 37, item 8): the run sums its ended pins up as it reads them
    (cli/report/pin_groups.h), so 1,000,000 pins are judged in what 125,000 take, 8 MiB more at most
    (before: 230 MiB against 30), and every pin is judged: those counted and those set aside add up
    to the pins of the baseline's sites and the set-aside ones, and the baseline holds them all."""
    synth = os.path.join(BUILD, "tests", "unit", "synth_recording")
    d = tempdir("vtpin-run-long-")
    runs = {}
    for pins in (125000, 1000000):
        rec, out = os.path.join(d, "%d.vtp" % pins), os.path.join(d, str(pins))
        subprocess.run([synth, rec, str(pins), "8"], check=True, timeout=120)
        os.mkdir(out)
        base = os.path.join(out, "baseline.json")
        p, rss = run_peak_rss([VTPIN, "run", "--no-collector", "--dir", os.path.join(out, "run"), "--fail-on-pins", "1",
                               "--count-jdk-pins", "--junit", os.path.join(out, "pins.xml"), "--write-baseline", base,
                               "--", "sh", "-c", PLAY_JVMS, rec, "1"])
        stdout = p.stdout.decode()
        print("%d pins: peak RSS %d KiB, exit %d\n%s" % (pins, rss, p.returncode, stdout[-300:]))
        check(p.returncode == GATE_FAILED, "the pins gate fails: exit %d\n%s" % (p.returncode, p.stderr.decode()))
        m = re.search(r"^vtpin run: 1 JVM\(s\), (\d+) pin\(s\) counted", stdout, re.M)
        with open(base) as f:
            in_sites = sum(s["pins"] for s in json.load(f)["sites"])
        check(m and int(m.group(1)) == pins and in_sites == pins, "every pin judged: %s counted, %d in the baseline's "
              "sites, of %d" % (m and m.group(1), in_sites, pins))
        runs[pins] = rss
        os.remove(rec)
    check(runs[1000000] <= runs[125000] + 8 * 1024, "peak RSS %d KiB for 1,000,000 pins, over 125,000's (%d KiB) and "
          "8 MiB" % (runs[1000000], runs[125000]))
    shutil.rmtree(d, ignore_errors=True)


def case_deadlock_cycle():
    """A monitor cycle (21): "cycle-1" holds A and enters B, "cycle-2" holds B and enters A, both
    pinned. The agent says the deadlock live, kind cycle, naming both threads, their culprit frame
    and what each waits for; the run ends the hung command and its deadlock gate fails."""
    d = tempdir(prefix="vtpin-run-cycle-")
    run_dir = os.path.join(d, "run")
    p = subprocess.run([VTPIN, "run", "--dir", run_dir, "--"] + java(21, "MonitorCycle", parallelism=4),
                       capture_output=True, text=True, timeout=120)
    print(p.stdout[-1500:] + p.stderr[-800:])
    check(p.returncode == GATE_FAILED, "exit %d, expected %d" % (p.returncode, GATE_FAILED))
    check(re.search(r"^vtpin run: JVM \d+: DEADLOCK \(cycle\) found live", p.stderr, re.M),
          "the run ends the hung command, naming the kind")
    check("--fail-on-deadlock: 1 deadlock(s) found live (cycle)" in p.stdout, "the gate names the cycle")
    line = next((l for l in p.stdout.splitlines() if l.startswith("DEADLOCK (cycle, found live")), "")
    check('deadlock (cycle): 2 pinned virtual threads wait for each other' in line and '"cycle-1"' in line and
          '"cycle-2"' in line and line.count("MonitorCycle.holdThenEnter(MonitorCycle.java:") == 2 and
          line.count("waits for the java.lang.Object monitor held by") == 2,
          "the report says the cycle first, each thread, its frame and its monitor:\n" + line)
    shutil.rmtree(d, ignore_errors=True)


def case_usage():
    p = subprocess.run([VTPIN, "run", "--fail-on-pins", "x", "--", "true"], capture_output=True, text=True)
    check(p.returncode == 2 and "--fail-on-pins" in p.stderr, "bad gate value: %d %s" % (p.returncode, p.stderr))
    p = subprocess.run([VTPIN, "run"], capture_output=True, text=True)
    check(p.returncode == 2, "no command")


if __name__ == "__main__":
    raise SystemExit(main({
        "fail_on_pins": case_fail_on_pins,
        "fail_on_hogs": case_fail_on_hogs,
        "fail_on_deadlock": case_fail_on_deadlock,
        "pass_on_25": case_pass_on_25,
        "allow": case_allow,
        "pinned_time": case_pinned_time,
        "native_block": case_native_block,
        "wrapper": case_wrapper,
        "attach_on_pin": case_attach_on_pin,
        "usage": case_usage,
        "signal": case_signal,
        "reused_dir": case_reused_dir,
        "term_ignored": case_term_ignored,
        "sigkill": case_sigkill,
        "agent_already": case_agent_already,
        "background": case_background,
        "background_timeout": case_background_timeout,
        "agent_options_outputs": case_agent_options_outputs,
        "nothing_judged": case_nothing_judged,
        "memory": case_memory,
        "memory_long": case_memory_long,
        "baseline": case_baseline,
        "deadlock_cycle": case_deadlock_cycle,
        "kernel_view": case_kernel_view,
        "kernel_view_off": case_kernel_view_off,
        "kernel_view_container": case_kernel_view_container,
    }))
