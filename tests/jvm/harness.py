"""Runs fixtures on a real JVM under the real agent and reads what vtpin reported.

Used by the CTest entries in tests/CMakeLists.txt. Environment:
  VTPIN_BUILD    the build directory (libvtpin.so, vtpin, java-fixtures/)
  JAVA21_HOME, JAVA25_HOME, JAVA26_HOME, JAVA27_HOME   the JDKs; a missing one skips its tests (exit 77)
  VTPIN_TEST_AGENT_OPTIONS  more agent options for every run (a mutation check: e.g.
                 threshold=600s, an agent that reports nothing, must fail the absence tests)
  VTPIN_PRELOAD  the ASan runtime of a sanitized build (VTPIN_SANITIZE=ON): preloaded
                 into every process the tests start, so java can load the ASan agent
"""
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
BUILD = os.environ.get("VTPIN_BUILD", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
AGENT = os.path.join(BUILD, "agent", "libvtpin.so")
VTPIN = os.path.join(BUILD, "vtpin")
CLASSES = os.path.join(BUILD, "java-fixtures", "classes")
CLASSES25 = os.path.join(BUILD, "java-fixtures", "classes25")  # FFM fixtures (JDK 22+)
CLASSES_JNA = os.path.join(BUILD, "java-fixtures", "classes-jna")  # JNA fixtures (with jna.jar)
CLASSES_TOMCAT = os.path.join(BUILD, "java-fixtures", "classes-tomcat")  # embedded Tomcat fixtures
FIXTURE_LIB = os.path.join(BUILD, "java-fixtures", "lib")
JFC = os.path.join(os.path.dirname(__file__), "..", "..", "java-fixtures", "pin.jfc")
EXTRA_AGENT_OPTS = os.environ.get("VTPIN_TEST_AGENT_OPTIONS", "")
if os.environ.get("VTPIN_PRELOAD"):
    # inherited by java started directly, by `vtpin run` and by attach targets alike
    os.environ["LD_PRELOAD"] = os.environ["VTPIN_PRELOAD"]


from collector_fixture import Failure  # noqa: E402  (one Failure for every test file)


_TEMP_DIRS = []


def tempdir(prefix="vtpin-test-"):
    """A fresh temporary directory, removed when main() returns, passed or failed."""
    d = tempfile.mkdtemp(prefix=prefix)
    _TEMP_DIRS.append(d)
    return d


def remove_tempdirs():
    while _TEMP_DIRS:
        shutil.rmtree(_TEMP_DIRS.pop(), ignore_errors=True)


def skip(reason):
    print("SKIP: " + reason)
    sys.exit(SKIP)


def wait_ready(proc, out_path, marker, timeout=30):
    """Waits until the process's output file holds marker (a fixture's "ready" line);
    fails when the process ends first or timeout seconds pass."""
    deadline = time.monotonic() + timeout
    while marker not in open(out_path).read():
        if proc.poll() is not None:
            raise Failure("the JVM did not get ready (exit %s)%s" % (proc.poll(), jvm_crash(out_path)))
        check(time.monotonic() < deadline, "the JVM did not get ready")
        time.sleep(0.05)


def jvm_crash(out_path, frames=40):
    """What HotSpot said of its own crash, or "": the banner it prints on the JVM's stdout, and from the
    error report it names there, the crashing thread and its native frames (the report is in the JVM's
    working directory, which a CI run does not keep); or the JNI check's fatal error (-Xcheck:jni) and
    its frames."""
    with open(out_path, errors="replace") as f:
        out = f.read()
    jni = out.find("FATAL ERROR in native method")
    if jni >= 0:
        return "\n" + "\n".join(out[jni:].splitlines()[:frames])
    banner = out.find("# A fatal error has been detected")
    if banner < 0:
        return ""
    said = "\n" + out[banner:][:3000]
    report = re.search(r"^# +(/\S*hs_err_pid\d+\.log)", out[banner:], re.M)
    if report and os.path.exists(report.group(1)):
        with open(report.group(1), errors="replace") as f:
            lines = f.read().splitlines()
        at = next((i for i, line in enumerate(lines) if line.startswith("Current thread")), None)
        if at is not None:
            said += "\n".join([""] + lines[at:at + frames])
    return said


def check(cond, message):
    if not cond:
        raise Failure(message)


def jdk_home(feature):
    home = os.environ.get("JAVA%d_HOME" % feature)
    if not home or not os.path.exists(os.path.join(home, "bin", "java")):
        skip("JDK %d not available: set JAVA%d_HOME (scripts/setup.sh provides it)" % (feature, feature))
    return home


def scheduler(parallelism, max_pool=None):
    props = ["-Djdk.virtualThreadScheduler.parallelism=%d" % parallelism]
    if max_pool:
        props.append("-Djdk.virtualThreadScheduler.maxPoolSize=%d" % max_pool)
    return props


def for_jdk(table, feature):
    """A per-JDK table's entry: the JDK's own, else 21's for 21-23 and 25's for 24+ (what pins is
    the same within each)."""
    return table.get(feature) or table[21 if feature < 24 else 25]


def class_init_wait(feature):
    """A wait for another thread's <clinit> that pins on this JDK, as (fixture, args, the waiting
    frame's method, blocked_in's text, the waiters' name prefix): getstatic on 21-25; from 26
    (JDK-8369238) a getstatic waiter unmounts and Class.forName is what still pins."""
    if feature < 26:
        return "ClassInitWait", (2, 400), "touch", "getstatic of ClassInitWait$Slow", "toucher-"
    return "ClassInitPaths", ("forname", 2, 400), "forName", "Class.forName (class initialization)", "forname-"


def classpath(feature):
    """The fixtures, and from JDK 22 on the FFM fixtures too."""
    return CLASSES + (":" + CLASSES25 if feature >= 22 and os.path.isdir(CLASSES25) else "")


def tomcat_classpath():
    """The Tomcat fixtures and the Tomcat jars they were compiled against (java-fixtures/CMakeLists.txt
    writes them down), as extra_cp entries; skips, saying why, when they were not built."""
    listed = os.path.join(BUILD, "java-fixtures", "classes-tomcat.classpath")
    if not os.path.isfile(listed) or not os.path.isdir(CLASSES_TOMCAT):
        skip("the Tomcat fixtures are not built (%s): install libtomcat10-java (scripts/setup.sh) and re-run cmake"
             % CLASSES_TOMCAT)
    with open(listed) as f:
        jars = [j for j in f.read().strip().split(":") if j]
    missing = [j for j in jars if not os.path.isfile(j)]
    if missing:
        skip("Tomcat jars gone since cmake ran: %s" % missing)
    return [CLASSES_TOMCAT] + jars


class Run:
    """One JVM run of a fixture with the agent recording to a temp file (agent=False: with no agent)."""

    def __init__(self, feature, fixture, args=(), props=(), agent_opts="", jfr=False, workdir=None, extra_cp=(),
                 stdin_pipe=False, load=None, agent=True):
        self.load = load  # a load.Load: the JVM starts inside its CPU quota, if it has one
        self.stdin_pipe = stdin_pipe  # the test ends a fixture that runs until its input ends (proc.stdin.close())
        self.home = jdk_home(feature)
        self.feature = feature
        self.dir = workdir or tempdir()
        self.record = os.path.join(self.dir, "pins.vtp")
        self.trace = os.path.join(self.dir, "trace.txt")
        self.jfr = os.path.join(self.dir, "run.jfr") if jfr else None
        opts = "record=%s,tracefile=%s" % (self.record, self.trace)
        if agent_opts:
            opts += "," + agent_opts
        if EXTRA_AGENT_OPTS:
            opts += "," + EXTRA_AGENT_OPTS
        self.cmd = [os.path.join(self.home, "bin", "java")] + (["-agentpath:%s=%s" % (AGENT, opts)] if agent else []) + [
                    "--enable-native-access=ALL-UNNAMED", "-Djava.library.path=" + FIXTURE_LIB,
                    "-cp", ":".join([classpath(feature)] + list(extra_cp))] + list(props)
        if self.jfr:
            self.cmd += jfr_options(self.jfr)
        self.cmd += [fixture] + [str(a) for a in args]
        self.proc = None

    def start(self):
        self.out = open(os.path.join(self.dir, "stdout.txt"), "w")
        self.err = open(os.path.join(self.dir, "stderr.txt"), "w")
        cmd = self.load.wrap(self.cmd) if self.load else self.cmd
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if self.stdin_pipe else None, stdout=self.out,
                                     stderr=self.err, start_new_session=True)
        self.started = time.monotonic()
        return self

    def wait(self, timeout=120):
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Failure("%s did not finish within %d s\n%s" % (" ".join(self.cmd), timeout, self.stderr()))
        self.out.close()
        self.err.close()
        if rc != 0:
            raise Failure("JVM exited %d: %s\n%s" % (rc, " ".join(self.cmd), self.stderr()))
        return self

    def run(self, timeout=120):
        return self.start().wait(timeout)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stderr(self):
        with open(os.path.join(self.dir, "stderr.txt")) as f:
            return f.read()

    def stdout(self):
        with open(os.path.join(self.dir, "stdout.txt")) as f:
            return f.read()

    def trace_text(self):
        if not os.path.exists(self.trace):
            return ""
        with open(self.trace) as f:
            return f.read()

    def report(self):
        return report_json(self.record)


def run_peak_rss(cmd, timeout=300):
    """Runs cmd; returns (its CompletedProcess, bytes captured, and its peak RSS in KiB) as GNU time
    measures it (Debian package time). Not wait4's own: a child this Python starts inherits its
    peak at exec (vfork or fork alike), so nothing under about 28 MiB could be told apart; GNU time
    is small. The peak is the largest of cmd and the children it waited for."""
    gnu_time = shutil.which("time", path="/usr/bin:/bin")
    if not gnu_time:
        raise Failure("GNU time missing (Debian package time; scripts/setup.sh installs it)")
    with tempfile.NamedTemporaryFile() as peak:
        p = subprocess.run([gnu_time, "-f", "%M", "-o", peak.name] + list(cmd), capture_output=True, timeout=timeout)
        with open(peak.name) as f:
            return p, int(f.read().split()[-1])


def report_json(path):
    p = subprocess.run([VTPIN, "report", "--format", "json", path], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise Failure("vtpin report failed (%d): %s" % (p.returncode, p.stderr))
    return json.loads(p.stdout)


def report_json_of_rotated(files, path):
    """The JSON report of a rotated recording's files (newest first: PATH, PATH.1, ...) concatenated
    into path in the order they were written, oldest first."""
    with open(path, "wb") as out:
        for f in reversed(files):
            with open(f, "rb") as part:
                out.write(part.read())
    return report_json(path)


def forget_stale_attach_socket(pid):
    """Removes /tmp/.java_pid<pid> when an earlier process with this pid left it (made before this
    process started): a JVM killed with SIGKILL leaves its attach socket, and pid_max is 32768 here,
    so a long test run reuses pids. A JVM whose pid has another user's stale socket cannot be attached
    (its listener cannot replace the file in /tmp; vtpin and jcmd refuse it): the environment's
    leftover, not what a test judges (ci54: jvm.25.attach_other_user, a root socket 7 hours old)."""
    path = "/proc/%d/root/tmp/.java_pid%d" % (pid, pid)
    try:
        made = os.stat(path).st_mtime
        with open("/proc/stat") as f:
            boot = int(next(line for line in f if line.startswith("btime ")).split()[1])
        with open("/proc/%d/stat" % pid) as f:
            started = boot + int(f.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, StopIteration, IndexError, ValueError):
        return
    if made < started - 1:
        os.unlink(path)
        print("note: removed %s, which an earlier process with pid %d left" % (path, pid))


def attach_when_ready(cmd, fixture, workdir, options):
    """Runs cmd (a fixture started with --ready) in workdir; once it prints "<fixture>: ready pid=",
    attaches vtpin with options, lets it go once the agent detects pins, and requires it to exit 0."""
    out, err = open(os.path.join(workdir, "stdout.txt"), "w"), open(os.path.join(workdir, "stderr.txt"), "w")
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=out, stderr=err, cwd=workdir, start_new_session=True)

    def read(name):
        with open(os.path.join(workdir, name), errors="replace") as f:
            return f.read()
    try:
        deadline = time.monotonic() + 30
        while "%s: ready pid=" % fixture not in read("stdout.txt"):
            check(proc.poll() is None and time.monotonic() < deadline, "not ready:\n" + read("stderr.txt"))
            time.sleep(0.05)
        forget_stale_attach_socket(proc.pid)
        a = subprocess.run([VTPIN, "attach", str(proc.pid), options], capture_output=True, text=True, timeout=60)
        check(a.returncode == 0, "attach exits 0: %s %s" % (a.stdout, a.stderr))
        deadline = time.monotonic() + 10
        while "detecting pins" not in read("stderr.txt"):
            check(time.monotonic() < deadline, "the agent did not start:\n" + read("stderr.txt"))
            time.sleep(0.05)
        proc.stdin.write(b"go\n")
        proc.stdin.close()
        check(proc.wait(timeout=120) == 0, "%s exits 0:\n%s" % (fixture, read("stderr.txt")))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        out.close()
        err.close()


def frames_of(pin):
    return pin.get("stack") or []


def culprit(pin):
    stack = frames_of(pin)
    i = pin.get("culprit")
    return stack[i] if i is not None and 0 <= i < len(stack) else None


def native_block_in(pin, cls):
    """A NATIVE_BLOCK pin blocked in a native method of cls (its culprit): not one of the JDK's own
    short blocks in native code (e.g. a futex) that a fixture's frames merely sit below."""
    c = culprit(pin)
    return pin["reason"] == "NATIVE_BLOCK" and c is not None and c["class"] == cls and c["native"]


def touches(pin, cls):
    """True when a frame of the pin's stack belongs to class cls (or its nested classes)."""
    return any(f["class"] == cls or f["class"].startswith(cls + "$") for f in frames_of(pin))


def pins_in(report, cls):
    return [p for p in report["pins"] if touches(p, cls)]


def set_aside(pins, why, max_count=10, max_ms=250):
    """Pins a test sets aside as not its subject (why: whose they are and how they arise), capped:
    at most max_count of them and none longer than max_ms, so a regression that reports the
    fixture's own pins so cannot hide among them. Printed, so every run shows what it set aside."""
    if pins:
        print("set aside (%s):\n  %s" % (why, "\n  ".join(describe(p, 6) for p in pins)))
    check(len(pins) <= max_count, "at most %d pins set aside (%s), got %d" % (max_count, why, len(pins)))
    for p in pins:
        check(p["duration_ns"] <= max_ms * 1e6, "a pin set aside (%s) lasts at most %d ms: %s %s %d ns" %
              (why, max_ms, p["reason"], frame_name(culprit(p)), p["duration_ns"]))
    return pins


def frame_name(f):
    return "%s.%s" % (f["class"], f["method"]) if f else None


def describe(p, frames=10):
    """One pin in a line, enough to tell whose it is when a check fails."""
    return "%s/%s %s ns on %s, blocked in %s, culprit %s, stack %s" % (
        p["reason"], p["origin"], p["duration_ns"], (p.get("vthread") or {}).get("name"), p["blocked_in"],
        frame_name(culprit(p)), [frame_name(f) for f in (p["stack"] or [])[:frames]])


def report_clock_offset(rep):
    """unix - mono of the report's session: its clock pair (recording.start_unix_ns, start_mono_ns)."""
    rec = rep["recording"]
    check(rec.get("start_unix_ns") is not None and rec.get("start_mono_ns") is not None,
          "the report's clock pair: %s" % rec)
    return rec["start_unix_ns"] - rec["start_mono_ns"]


def mono_in_report(rep, mono_ns):
    """A CLOCK_MONOTONIC time (Java's System.nanoTime()) in the report's Unix times: exact, however the
    wall clock was stepped since the report's Hello (Instant.now() there would be off by the step)."""
    return mono_ns + report_clock_offset(rep)


def jfr_pinned_events(home, jfr_file, rep=None):
    """JFR's jdk.VirtualThreadPinned events. With rep (the vtpin report of the same JVM) each has
    "start_ns", its start in rep's Unix times: JFR's own Unix times come from JFR's clock pair, which
    differs from vtpin's by any wall-clock step between the two (20 ms in a CI run). The fixture's
    ClockMarks (System.nanoTime() just before and after a JFR event began; java-fixtures/src/ClockMark.java)
    give JFR's pair: the tightest, to half its width."""
    p = subprocess.run([os.path.join(home, "bin", "jfr"), "print", "--json", "--stack-depth", "64", "--events",
                        "jdk.VirtualThreadPinned,vtpin.ClockMark", jfr_file], capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        raise Failure("jfr print failed: " + p.stderr)
    events = json.loads(p.stdout)["recording"]["events"]
    marks = [e for e in events if e["type"] == "vtpin.ClockMark"]
    pinned = [e for e in events if e["type"] == "jdk.VirtualThreadPinned"]
    if rep is not None:
        check(marks, "the fixture's ClockMarks in JFR's recording (ClockMark.markIfAsked() first in its main, "
              "-Dvtpin.clockmark=true)")
        best = min(marks, key=lambda m: int(m["values"]["nanoAfter"]) - int(m["values"]["nanoBefore"]))["values"]
        jfr_offset = jfr_instant_ns(best["startTime"]) - (int(best["nanoBefore"]) + int(best["nanoAfter"])) // 2
        offset = report_clock_offset(rep)
        for e in pinned:
            e["start_ns"] = jfr_instant_ns(e["values"]["startTime"]) - jfr_offset + offset
    return pinned


def jfr_start_ns(event):
    """A JFR event's start in the report's Unix times (jfr_pinned_events given the report)."""
    if "start_ns" not in event:
        raise Failure("JFR's event has no start on the report's clock: read the events with the report, "
                      "jfr_pinned_events(home, file, rep)")
    return event["start_ns"]


def jfr_duration_ns(event):
    """JFR prints durations as ISO-8601 ("PT0.200123S")."""
    d = event["values"]["duration"]
    if isinstance(d, (int, float)):
        return int(d)
    check(d.startswith("PT") and d.endswith("S"), "unexpected JFR duration format: %r" % d)
    body = d[2:-1]
    minutes = 0.0
    if "M" in body:
        m, body = body.split("M", 1)
        minutes = float(m)
    return int((minutes * 60 + float(body or 0)) * 1e9)


def jfr_instant_ns(text):
    """JFR's startTime ("2026-12-02T04:58:00.953963131Z") as Unix epoch ns."""
    check(text.endswith("Z"), "JFR instant in UTC: %r" % text)
    whole, _, frac = text[:-1].partition(".")
    t = datetime.datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 1_000_000_000 + int((frac + "000000000")[:9])


# vtpin's times against a fixture's or JFR's, each brought to the report's Unix times on the
# monotonic clock (mono_in_report, jfr_pinned_events with rep): what is left is where each stamps
CLOCKS_AGREE_NS = 200_000


def back_to_back_rounds(stdout, rep):
    """BackToBack's rounds from its output: {virtual thread name: [rep's Unix ns just before each round's
    sleep]}; BackToBack prints System.nanoTime(), a wall-clock step does not move it."""
    rounds = {}
    for line in stdout.splitlines():
        name, sep, times = line.partition(" sleeps_from_mono_ns=")
        if sep:
            rounds[name] = [mono_in_report(rep, int(t)) for t in times.split(",")]
    return rounds


CLOCKSTEP_LIB = os.path.join(FIXTURE_LIB, "libvtpinclockstep.so")


def clockstep_env(step_dir):
    """The environment of a JVM whose wall clock the test steps (step_wall_clock; the library
    java-fixtures/native/vtpin_clockstep.c), preloaded after what the harness preloads (an ASan
    runtime comes first)."""
    env = dict(os.environ)
    env["LD_PRELOAD"] = ":".join(p for p in (env.get("LD_PRELOAD"), CLOCKSTEP_LIB) if p)
    env["VTPIN_CLOCKSTEP_DIR"] = step_dir
    return env


def step_wall_clock(step_dir, k, ms):
    """Step k (1, 2, ...) of that JVM's wall clock: ms more (or less) from its next reading on."""
    tmp = os.path.join(step_dir, "step-%d.tmp" % k)
    with open(tmp, "w") as f:
        f.write("%d\n" % ms)
    os.rename(tmp, os.path.join(step_dir, "step-%d" % k))


def jfr_options(path):
    """The java options that record every pinned park (java-fixtures/pin.jfc) to path, dumped at exit,
    with the fixture's ClockMark (jfr_pinned_events)."""
    return ["-XX:StartFlightRecording=filename=%s,settings=%s" % (path, JFC), "-Dvtpin.clockmark=true"]


def round_of(rounds, name, start_ns):
    """The index of BackToBack's round of thread name whose sleep began last before start_ns (to
    CLOCKS_AGREE_NS), -1 before the first."""
    return max([i for i, t in enumerate(rounds.get(name, [])) if t <= start_ns + CLOCKS_AGREE_NS] or [-1])


def jfr_parks_by_round(events, rounds):
    """JFR's jdk.VirtualThreadPinned events of BackToBack's threads by round: {(name, round): [(start, end)]}."""
    out = {}
    for e in events:
        name = (e["values"].get("eventThread") or {}).get("javaName") or ""
        start = jfr_start_ns(e)
        r = round_of(rounds, name, start)
        if r >= 0:
            out.setdefault((name, r), []).append((start, start + jfr_duration_ns(e)))
    return out


def check_one_pin_per_round(pins, rounds, expect_rounds, stats=None, park_ns=None, jfr_parks=None):
    """Counted exactly: each of BackToBack's rounds is one pin of its thread, and no pin is anything else.
    A pin belongs to the round whose sleep began last before the pin did (to CLOCKS_AGREE_NS); a pin
    before its thread's first round, or a second one in a round (a park split in two, an idle park or
    the thread's computing after its last round taken for a park), fails, and so does a round with none,
    unless (stats, park_ns given: a sampled park) the agent says its sampler went at least park_ns
    without a look (stats.sample_gap_max_ns): then a park may have gone unseen, as documented.
    The JDK itself parks twice in a round now and then: its carrier, woken early (a first park of
    38 us in one run, a stale unpark of the carrier), parks again for the rest of the sleep, and JFR
    has two events there (1 round in 1000 after attach, ASan, beside CPU burners). With jfr_parks
    (jfr_parks_by_round of the same run) a round may have as many pins as JFR's parks in it, each
    overlapping one of them."""
    def name(p):
        return "%s %s at %d for %s ms" % (p["reason"], p["vthread"]["name"], p["start_ns"],
                                         p["duration_ns"] and round(p["duration_ns"] / 1e6, 1))

    def overlaps(p, park):
        return p["start_ns"] < park[1] + CLOCKS_AGREE_NS and park[0] < p["start_ns"] + p["duration_ns"] + CLOCKS_AGREE_NS

    check(sum(len(v) for v in rounds.values()) == expect_rounds, "BackToBack's rounds: %s" % rounds)
    by_round, stray = {}, []
    for p in pins:
        r = round_of(rounds, p["vthread"]["name"], p["start_ns"])
        if r < 0:
            stray.append(name(p))
        else:
            by_round.setdefault((p["vthread"]["name"], r), []).append(p)
    reparked = {k: v for k, v in by_round.items() if len(v) > 1 and jfr_parks is not None and
                len(jfr_parks.get(k, [])) >= len(v) and all(any(overlaps(p, park) for park in jfr_parks[k]) for p in v)}
    for k, v in reparked.items():
        print("round %s: %d pins, and JFR's %d parks there (the JDK parked again): %s" %
              (k, len(v), len(jfr_parks[k]), [name(p) for p in v]))
    twice = {k: [name(p) for p in v] for k, v in by_round.items() if len(v) > 1 and k not in reparked}
    if jfr_parks is not None:
        for k in twice:
            print("round %s: JFR's parks there: %s" % (k, jfr_parks.get(k)))
    missed = [(t, r) for t, times in rounds.items() for r in range(len(times)) if (t, r) not in by_round]
    print("%d pins for %d rounds: %d rounds without a pin, %d with more than one, %d pins outside any" %
          (len(pins), expect_rounds, len(missed), len(twice), len(stray)))
    if stats is not None:
        gaps, gap_max = stats.get("sample_gaps"), stats.get("sample_gap_max_ns")
        print("the sampler ran late %s time(s), a carrier at most %s ms without a look" %
              (gaps, gap_max and round(gap_max / 1e6, 1)))
        if missed and gap_max is not None and gap_max >= park_ns:
            print("rounds the late sampler may have missed: %s" % missed)
            missed = []
    check(not stray and not twice and not missed,
          "one pin per round, no other: rounds without a pin %s, rounds with more than one %s, pins before the "
          "rounds %s" % (missed, twice, stray))


def check_timed_like_jfr(pins, events, median_ns=2e6):
    """vtpin's pins and JFR's jdk.VirtualThreadPinned events of one run are the same pins: per virtual
    thread as many, the k-th pin overlapping the k-th event and no other event of its thread (a pin
    merged with the next, cut at the wrong end, or of another thread fails). The two are stamped at
    different instructions of one method (JFR at its begin and commit, vtpin at the breakpoints or
    monitor callbacks around them), so a carrier that loses the CPU or stops at a safepoint between
    the two stamps makes that one pin differ (JDK 25 FFM: up to 1.7 ms with six busy loops, 4.5 ms
    in a CI run): the durations are compared by their median difference, which a wrong timing rule
    moves and one late stamp does not. That needs 3 pins or more: the median of 2 is the larger, one
    pin's own (a CI run under ASan: one of 2 pins 2.7 ms longer than JFR's). Its bound is the 2 ms
    each pin had. median_ns=None compares the pins without their durations, for a handful of pins
    that only happen to occur. Each pin is stamped where
    JFR's event begins: a park's once its callback's work is done (the JDK's reason, the stack; stamped
    before, a CI run had two of four pins 2.4 ms longer than JFR's), a monitor's as its callback is
    entered, since the JVM begins its event before it posts the callback (stamped after, a CI run under
    ASan had two of three Object.wait pins 4 ms shorter)."""
    def span(start, duration):
        return start, start + duration

    mine, theirs = {}, {}
    for p in pins:
        check(p["start_ns"] is not None and p["duration_ns"] is not None, "a timed pin: %s" % p)
        mine.setdefault(p["vthread"]["id"], []).append(span(p["start_ns"], p["duration_ns"]))
    for e in events:
        theirs.setdefault(e["values"]["eventThread"]["javaThreadId"], []).append(
            span(jfr_start_ns(e), jfr_duration_ns(e)))
    differences = []
    for tid in sorted(set(mine) | set(theirs)):
        a, b = sorted(mine.get(tid, [])), sorted(theirs.get(tid, []))
        check(len(a) == len(b), "virtual thread %d: vtpin %d pins, JFR %d events" % (tid, len(a), len(b)))
        for k, pin in enumerate(a):
            for j, event in enumerate(b):
                shared = min(pin[1], event[1]) - max(pin[0], event[0])
                if j == k:
                    check(shared > 0, "virtual thread %d: pin %d (%s) overlaps JFR's event %d (%s)" % (tid, k, pin, j, event))
                else:
                    check(shared <= CLOCKS_AGREE_NS, "virtual thread %d: pin %d (%s) overlaps JFR's event %d (%s) "
                          "by %d ns" % (tid, k, pin, j, event, shared))
            differences.append((pin[1] - pin[0]) - (b[k][1] - b[k][0]))
    if median_ns is None:
        return
    check(len(differences) >= 3, "3 pins or more to compare durations by their median: %d" % len(differences))
    differences.sort()
    median = differences[len(differences) // 2]
    print("vtpin - JFR per pin: median %d ns, from %d to %d ns" % (median, differences[0], differences[-1]))
    check(abs(median) <= median_ns, "durations differ: median vtpin - JFR %d ns over %d pins" %
          (median, len(differences)))


def jfr_touches(event, cls):
    frames = ((event["values"].get("stackTrace") or {}).get("frames")) or []
    for f in frames:
        name = f["method"]["type"]["name"]
        if name == cls or name.startswith(cls + "$"):
            return True
    return False


def main(cases):
    """Runs the case named by argv[1]; prints a closing line CTest shows."""
    if len(sys.argv) < 2 or sys.argv[1] not in cases:
        print("usage: %s CASE\ncases: %s" % (sys.argv[0], " ".join(sorted(cases))))
        return 2
    for path in (AGENT, VTPIN, CLASSES):
        if not os.path.exists(path):
            print("FAIL: %s missing: build first" % path)
            return 1
    try:
        cases[sys.argv[1]](*sys.argv[2:])
    except Failure as e:
        print("FAIL: %s" % e)
        return 1
    finally:
        remove_tempdirs()
    print("PASS: %s" % sys.argv[1])
    return 0
