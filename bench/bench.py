#!/usr/bin/env python3
"""vtpin benchmark harness: the engine behind bench/run.sh (read bench/README.md).

Three parts, each optional (--only):
  overhead  Bench* workloads x configurations (no agent, empty JVMTI agent, JFR,
            vtpin modes), interleaved rounds, medians and paired ratios with min-max.
  latency   how long after a pin starts it is visible: vtpin trace file, vtpin
            recording, the collector (vtpin top queries), JFR streaming.
  ingest    the collector's decode rate and memory (bench/ingest.c).
  zerotouch-idle  (only when named) what `vtpin collector --jvms=all` costs with N idle JVMs
            (bench/zerotouch_idle.py).
  junit-suite  (only when named) what @NoPinning costs a suite of 200 small tests, beside a
            JFR-based check (bench/junit_suite.py).

Expects JAVA21_HOME / JAVA25_HOME in the environment and the builds done by
bench/run.sh (build/agent/libvtpin.so, build/vtpin, build/java-fixtures,
build/bench/{libemptyagent.so,benchtool,ingest}).
"""
import argparse
import atexit
import datetime
import fcntl
import glob
import json
import math
import os
import platform
import random
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("VTPIN_BUILD_DIR", os.path.join(ROOT, "build"))
AGENT = os.path.join(BUILD, "agent", "libvtpin.so")
EMPTY_AGENT = os.path.join(BUILD, "bench", "libemptyagent.so")
BENCHTOOL = os.path.join(BUILD, "bench", "benchtool")
INGEST = os.path.join(BUILD, "bench", "ingest")
VTPIN = os.path.join(BUILD, "vtpin")
CLASSES = os.path.join(BUILD, "java-fixtures", "classes")
FIXTURE_LIB = os.path.join(BUILD, "java-fixtures", "lib")
PIN_JFC = os.path.join(ROOT, "java-fixtures", "pin.jfc")

# Same heap for every run: no resizing noise between configurations.
JVM_COMMON = ["-Xms1g", "-Xmx1g", "--enable-native-access=ALL-UNNAMED"]

WORKLOADS = {
    # name: (main class, full args, quick args, what it is)
    "mountchurn": ("BenchMountChurn",
                   ["threads=200000", "yields=10", "warmup=50000", "warmupPasses=1"],
                   ["threads=40000", "yields=10", "warmup=20000", "warmupPasses=1"],
                   "worst case: short virtual threads that only Thread.yield()"),
    "mountchurn-steady": ("BenchMountChurn",
                          ["shape=steady", "concurrent=16", "threads=200000", "yields=10", "warmup=50000",
                           "warmupPasses=1"],
                          ["shape=steady", "concurrent=16", "threads=40000", "yields=10", "warmup=20000",
                           "warmupPasses=1"],
                          "the same 2.2M mounts from 16 long-lived virtual threads that only yield: "
                          "nothing but mount/unmount"),
    "service": ("BenchService",
                ["requests=20000", "concurrency=16", "warmup=25000", "work=4096", "sleepMs=1"],
                ["requests=2000", "concurrency=16", "warmup=1000", "work=4096", "sleepMs=1"],
                "HttpServer, virtual thread per request, SHA-256 of 4 KB + sleep(1) + queue hop, "
                "loopback keep-alive client on 16 platform threads"),
    "cpu": ("BenchCpu",
            ["threads=10000", "iterations=100000", "warmup=3000"],
            ["threads=2000", "iterations=100000", "warmup=1000"],
            "CPU-bound virtual threads, no blocking"),
}

CONFIGS = ["none", "floor", "jfr", "jfr-pinned", "zero-touch", "vtpin-pins", "vtpin-exact", "vtpin-sampled",
           "vtpin-collector"]
EXTRA_CONFIGS = ["floor-thread", "floor-caps", "floor-caps-nolocals", "vtpin-marked"]  # only when named
CONFIG_TEXT = {
    "none": "no agent",
    "floor": "empty JVMTI agent (bench/empty_agent.c): creates a JVMTI env, nothing else",
    "floor-thread": "the empty agent plus one idle JVMTI agent thread (like vtpin's writer thread)",
    "floor-caps": "the empty agent holding vtpin's load-time capabilities, no events",
    "floor-caps-nolocals": "floor-caps without can_access_local_variables/can_suspend",
    "vtpin-marked": "vtpin default (sampled) with downcalls=marked: no can_access_local_variables",
    "jfr": "-XX:StartFlightRecording=settings=default",
    "jfr-pinned": "JFR with java-fixtures/pin.jfc (jdk.VirtualThreadPinned, threshold 0, stacks)",
    "vtpin-pins": "vtpin occupancy=off, record=FILE (pins only)",
    "vtpin-exact": "vtpin occupancy=exact, record=FILE (every mount/unmount)",
    "vtpin-sampled": "vtpin occupancy=sampled (the default: occupancy every 40 ms, watchdog every 10 ms), record=FILE",
    "vtpin-collector": "vtpin collector=SOCKET (occupancy sampled), streaming to `vtpin collector`",
    "zero-touch": "no agent; a `vtpin collector --jvms=all --kernel=on` watches the JVM from outside "
                  "(its kernel view tracks every Java thread)",
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def java_bin(jdk):
    home = os.environ.get("JAVA%s_HOME" % jdk)
    if not home:
        raise SystemExit("bench: JAVA%s_HOME is not set (source ~/.cache/vtpin/jdks.env or run bench/run.sh)" % jdk)
    return os.path.join(home, "bin", "java")


def java_version(jdk):
    r = subprocess.run([java_bin(jdk), "-version"], capture_output=True, text=True)
    return r.stderr.strip()


def machine_info():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = open("/proc/loadavg").read().split()[:3]
    except OSError:
        load = ["?"]
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "kernel": platform.release(),
        "loadavg_at_start": " ".join(load),
        "vtpin_commit": commit + (" + uncommitted changes" if dirty else ""),
    }


def pct(values, q):
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    s = sorted(values)
    k = max(0, min(len(s) - 1, math.ceil(q / 100.0 * len(s)) - 1))
    return s[k]


# ---------------------------------------------------------------------------------------------
# the collector


class Collector:
    """A `vtpin collector` started (and stopped) by the harness."""

    def __init__(self, workdir, name="collector", extra=()):
        # more collector options, e.g. --jvms=all; else the benchmark's own JVMs only (agents)
        self.extra = list(extra) if any(e.startswith("--jvms") for e in extra) else ["--jvms=agents"] + list(extra)
        self.dir = os.path.join(workdir, name)
        os.makedirs(os.path.join(self.dir, "rec"), exist_ok=True)
        self.socket = os.path.join(self.dir, "c.sock")
        self.log = os.path.join(self.dir, "collector.log")
        self.proc = None

    @staticmethod
    def available():
        if not os.access(VTPIN, os.X_OK):
            return False
        r = subprocess.run([VTPIN, "collector", "--help"], capture_output=True, text=True)
        return r.returncode == 0 and "collector" in r.stdout + r.stderr

    def start(self):
        out = open(self.log, "ab")
        self.proc = subprocess.Popen([VTPIN, "collector", "--socket", self.socket, "--dir",
                                      os.path.join(self.dir, "rec")] + self.extra, stdout=out, stderr=out,
                                     stdin=subprocess.DEVNULL)
        out.close()
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                last = open(self.log, errors="replace").read().strip().splitlines()[-1:]
                raise RuntimeError("vtpin collector exited with %s%s (log: %s)" % (
                    self.proc.returncode, (": " + last[0][-200:]) if last else "", self.log))
            if os.path.exists(self.socket):
                r = subprocess.run([VTPIN, "status", "--socket", self.socket, "--json"], capture_output=True,
                                   text=True)
                if r.returncode == 0:
                    return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("vtpin collector did not answer within 10 s (log: %s)" % self.log)

    @property
    def pid(self):
        return self.proc.pid

    def recording_of(self, jvm_pid, wait_s=3.0):
        """The collector's recording of JVM jvm_pid once it is complete (or the last look)."""
        deadline = time.time() + wait_s
        stats = None
        files = []
        while time.time() < deadline:
            files = glob.glob(os.path.join(self.dir, "rec", "%d-*.vtp" % jvm_pid))
            if files:
                stats = recording_stats(files[0])
                if stats and stats.get("complete") == "1":
                    break
            time.sleep(0.1)
        return files, stats

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def proc_cpu_s(pid):
    """utime + stime of a process, in seconds (clock ticks)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def collector_status(socket, usage=None):
    """`vtpin status --json` of the collector at socket, or None. The query is reaped with wait4 and
    its rusage appended to usage (a list): inside a run, run_jvm's RUSAGE_CHILDREN counts it too."""
    p = subprocess.Popen([VTPIN, "status", "--socket", socket, "--json"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    out = p.stdout.read()
    p.stdout.close()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if usage is not None:
        usage.append(ru)
    try:
        return json.loads(out) if p.returncode == 0 else None
    except ValueError:
        return None


def proc_rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(next(l for l in f if l.startswith("VmRSS:")).split()[1])


# A zero-touch run: the JVM has no agent and a `vtpin collector --jvms=all --kernel=on` watches it.
ZT_ARGS = ["--jvms=all", "--kernel=on"]
ZT_GATE_S = 10.0  # how long a JVM is held for the collector to watch it


def task_ctxsw(pid):
    """Context switches (voluntary + involuntary) of every live thread of pid, from /proc."""
    n = 0
    for status in glob.glob("/proc/%d/task/*/status" % pid):
        try:
            with open(status) as f:
                n += sum(int(l.split()[1]) for l in f if l.startswith(("voluntary_ctxt", "nonvoluntary_ctxt")))
        except (OSError, ValueError):  # a thread that ended meanwhile
            pass
    return n


def proc_alive(pid):
    """pid exists and is not a zombie (checked without reaping it)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class ZeroTouch:
    """The collector of one zero-touch run, and the gate that holds the JVM until it is watched.

    The collector is started for each run, not once per JDK: with --jvms=all it watches every JVM
    of the host, so kept running it would watch the `none`, `floor` and `jfr` runs too.

    The collector lists /proc once a second, and a quick run's warm-up (and a full mount-churn
    one's) is shorter than that: left alone, the measured part would often start unwatched. So the
    JVM's stdout is a pipe of one page, all but a byte of it filled before the JVM starts: the
    workload's first line (`java.version = …`, printed before its warm-up, before any virtual
    thread) waits in write(2) until the collector lists the JVM as watching or session (or
    ZT_GATE_S passes) and the gate drains the pipe. Nothing is loaded into the JVM, nothing it
    runs changes, no thread of it is stopped (a SIGSTOP after that line would catch the warm-up
    with virtual threads mounted: off-CPU carriers the collector could count as pins). The gate
    then copies the JVM's output to its .out file and, when the BENCH line comes, asks the
    collector once more: threads tracked and pins at the end of the measured part, before the JVM
    exits."""

    FILL = 4095  # a one-page pipe with one byte free: a line longer than that waits

    def __init__(self, workdir):
        self.col = Collector(workdir, "zero-touch", ZT_ARGS)
        self.rfd = None
        self.usage = []  # rusage of the status queries made during the run
        self.info = {"watched": False}
        self.thread = None

    def start(self):
        self.col.start()
        self.cpu0 = proc_cpu_s(self.col.pid)
        return self

    def stdout(self):
        """The JVM's stdout: the write end of the full pipe (run_jvm closes it once the JVM has it)."""
        self.rfd, wfd = os.pipe()
        fcntl.fcntl(wfd, fcntl.F_SETPIPE_SZ, 4096)
        os.write(wfd, b"\0" * self.FILL)
        return wfd

    def follow(self, pid, stdout_path):
        """run_jvm's on_start: the gate, in a thread, while run_jvm waits for the JVM."""
        self.thread = threading.Thread(target=self._gate, args=(pid, stdout_path), daemon=True)
        self.thread.start()

    def _entry(self, pid):
        st = collector_status(self.col.socket, self.usage)
        jvms = ((st or {}).get("collector", {}).get("zero_touch") or {}).get("jvms", [])
        live = [j for j in jvms if j["state"] in ("watching", "session")]
        self.info["others_watched"] = sum(1 for j in live if j["pid"] != pid)
        return next((j for j in jvms if j["pid"] == pid), None)

    def _hold(self, pid):
        t0 = time.monotonic()
        while time.monotonic() - t0 < ZT_GATE_S and proc_alive(pid):
            j = self._entry(pid)
            if j and j["state"] in ("watching", "session"):
                self.info.update(watched=True, threads_tracked=j["threads_tracked"])
                # from here on: the collector's CPU and the JVM's switches while it watches
                self.cpu_watched0, self.ctxsw_watched0 = proc_cpu_s(self.col.pid), task_ctxsw(pid)
                break
            if j:
                self.info["why"] = "%s: %s" % (j["state"], j.get("why"))
                break
            time.sleep(0.05)
        self.info["watched_after_ms"] = (time.monotonic() - t0) * 1000

    def _gate(self, pid, stdout_path):
        try:
            self._hold(pid)
        finally:
            with open(stdout_path, "wb") as out:
                skip, seen, asked = self.FILL, b"", False
                while True:
                    chunk = os.read(self.rfd, 65536)
                    if not chunk:
                        break
                    drop = min(skip, len(chunk))
                    skip -= drop
                    out.write(chunk[drop:])
                    seen = (seen + chunk[drop:])[-4096:]
                    if not asked and b"\nBENCH " in seen:
                        asked = True
                        out.flush()
                        j = self._entry(pid)
                        if j:
                            self.info.update(threads_tracked_end=j["threads_tracked"], carriers=j["carriers"],
                                             pins=j["pins"], state_end=j["state"])
            os.close(self.rfd)

    def finish(self, res):
        """After run_jvm: the collector's CPU over the run, per context switch of the JVM and per
        pin, into res; then the collector is stopped and its recordings deleted."""
        if self.thread:
            self.thread.join(timeout=30)
        elif self.rfd is not None:  # the JVM did not start
            os.close(self.rfd)
        try:
            cpu1 = proc_cpu_s(self.col.pid)
            res["collector_cpu_s"] = cpu1 - self.cpu0
            res["collector_rss_kb"] = proc_rss_kb(self.col.pid)
        finally:
            self.col.stop()
            shutil.rmtree(self.col.dir, ignore_errors=True)
        # From the moment it was watched to its exit: the collector's CPU (without taking the JVM
        # on: reading libjvm.so's symbols and layout) over the JVM's context switches meanwhile:
        # those of its whole life (its rusage, every thread, the ended ones too; less the status
        # queries reaped meanwhile) less those of its threads when it was taken on.
        if hasattr(self, "cpu_watched0"):
            cpu = cpu1 - self.cpu_watched0
            switches = LAST_RUN.get("ctxsw", 0) - sum(u.ru_nvcsw + u.ru_nivcsw for u in self.usage) - \
                self.ctxsw_watched0
            self.info.update(collector_cpu_watched_s=cpu, ctxsw=switches)
            if switches > 0:
                self.info["collector_ns_per_switch"] = cpu * 1e9 / switches
            if self.info.get("pins"):
                self.info["collector_us_per_pin"] = cpu * 1e6 / self.info["pins"]
        res["zero_touch"] = self.info


def recording_stats(path):
    r = subprocess.run([BENCHTOOL, "stats", path], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return dict(kv.split("=", 1) for kv in r.stdout.split() if "=" in kv)


# ---------------------------------------------------------------------------------------------
# one JVM run


CLK_TCK = os.sysconf("SC_CLK_TCK")


def busy_cpu_s():
    """CPU seconds the whole machine spent busy (every process), from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...
    return (v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)) / CLK_TCK


LAST_RUN = {}
LOAD = None  # --load: the tests' load harness (tests/jvm/load.py) around every measured JVM


def parse_load(spec):
    """--load busy=N,quota=PCT,preempt=N into a Load (the tests' own harness: one meaning of "under load")."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "jvm"))
    from load import Load
    names = {"busy": "busy", "quota": "quota_pct", "preempt": "preempt"}
    kw = {}
    for part in filter(None, spec.split(",")):
        key, _, value = part.partition("=")
        if key not in names or not value.isdigit():
            raise SystemExit("--load: %r: want busy=N, quota=PCT, preempt=N" % part)
        kw[names[key]] = int(value)
    return Load(**kw)


def run_jvm(cmd, timeout, stdout_path, stderr_path, env=None, stdout_fd=None, on_start=None):
    """Runs cmd; returns (returncode, wall_s, cpu_s, pid) with cpu from the children's rusage.
    LAST_RUN["others_cores"]: how many cores other processes kept busy meanwhile; LAST_RUN["ctxsw"]:
    the children's context switches (voluntary + involuntary, every thread). stdout_fd: the
    JVM's stdout instead of stdout_path (closed here once the JVM has it); on_start(proc) is called
    once the process is started."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy0 = busy_cpu_s()
    t0 = time.monotonic()
    with open(stdout_path if stdout_fd is None else os.devnull, "wb") as out, open(stderr_path, "wb") as err:
        try:
            p = subprocess.Popen(LOAD.wrap(cmd) if LOAD else cmd, stdout=out if stdout_fd is None else stdout_fd,
                                 stderr=err, stdin=subprocess.DEVNULL, env=env)
        finally:
            if stdout_fd is not None:
                os.close(stdout_fd)
        if on_start:
            on_start(p)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            rc = "timeout"
    wall = time.monotonic() - t0
    busy1 = busy_cpu_s()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    LAST_RUN["others_cores"] = max(0.0, (busy1 - busy0 - cpu) / wall) if wall > 0 else 0.0
    LAST_RUN["ctxsw"] = (after.ru_nvcsw - before.ru_nvcsw) + (after.ru_nivcsw - before.ru_nivcsw)
    return rc, wall, cpu, p.pid


def config_flags(config, tmp, collector):
    rec = os.path.join(tmp, "run.vtp")
    if config.startswith("old-"):  # the same vtpin configuration with another build of the agent
        return [f.replace(AGENT, os.environ["VTPIN_OLD_AGENT"]) for f in config_flags(config[4:], tmp, collector)]
    if config in ("none", "zero-touch"):  # zero-touch: nothing in the JVM, the collector watches it
        return []
    if config == "floor":
        return ["-agentpath:" + EMPTY_AGENT]
    if config == "floor-thread":
        return ["-agentpath:%s=thread" % EMPTY_AGENT]
    if config in ("floor-caps", "floor-caps-nolocals"):
        return ["-agentpath:%s=%s" % (EMPTY_AGENT, config[len("floor-"):])]
    if config == "jfr":
        return ["-XX:StartFlightRecording=settings=default"]
    if config == "jfr-pinned":
        return ["-XX:StartFlightRecording=settings=" + PIN_JFC]
    if config == "vtpin-pins":
        return ["-agentpath:%s=occupancy=off,record=%s,quiet" % (AGENT, rec)]
    if config == "vtpin-exact":
        return ["-agentpath:%s=occupancy=exact,record=%s,quiet" % (AGENT, rec)]
    if config == "vtpin-sampled":
        return ["-agentpath:%s=occupancy=sampled,record=%s,quiet" % (AGENT, rec)]
    if config == "vtpin-marked":
        return ["-agentpath:%s=occupancy=sampled,downcalls=marked,record=%s,quiet" % (AGENT, rec)]
    if config == "vtpin-collector":
        return ["-agentpath:%s=collector=%s,quiet" % (AGENT, collector.socket)]
    raise ValueError(config)


BENCH_RE = re.compile(r"^BENCH (.*)$", re.M)


def one_run(jdk, workload, config, args, tmp, collector, timeout, keep_logs_dir, tag, idle=0):
    main, full, quick, _ = WORKLOADS[workload]
    wargs = quick if args.quick else full
    if main == "BenchMountChurn":
        # Thread parity (JDK 25: whether the two carriers' thread handles share a cache line
        # depends on how many threads were created before them): odd rounds start one idle
        # thread first, so the medians pool both parities instead of measuring layout luck.
        wargs = wargs + ["idle=%d" % idle]
    if config == "vtpin-collector" and collector is None:
        return {"status": "n/a", "why": "no collector"}
    rec = os.path.join(tmp, "run.vtp")
    if os.path.exists(rec):
        os.unlink(rec)
    cmd = [java_bin(jdk)] + JVM_COMMON + config_flags(config, tmp, collector) + [
        "-cp", CLASSES, "-Djava.library.path=" + FIXTURE_LIB, main] + wargs
    base = os.path.join(keep_logs_dir, "%s-%s-%s-%s" % (jdk, workload, config, tag))
    col_cpu0 = proc_cpu_s(collector.pid) if config == "vtpin-collector" else None
    zt = None
    if config == "zero-touch":
        if collector is None:
            return {"status": "n/a", "why": "no collector"}
        try:
            zt = ZeroTouch(tmp).start()
        except RuntimeError as e:
            return {"status": "n/a", "why": str(e)}
    res = {}
    try:
        rc, wall, cpu, pid = run_jvm(cmd, timeout, base + ".out", base + ".err",
                                     stdout_fd=zt.stdout() if zt else None,
                                     on_start=(lambda p: zt.follow(p.pid, base + ".out")) if zt else None)
    finally:
        if zt:
            zt.finish(res)
    out = open(base + ".out", errors="replace").read()
    res.update({"rc": rc, "wall_s": wall, "cpu_s": cpu, "cmd": " ".join(cmd),
                "others_cores": LAST_RUN.get("others_cores", 0.0)})
    m = BENCH_RE.search(out)
    if rc != 0 or not m:
        res["status"] = "failed"
        err = open(base + ".err", errors="replace").read().strip().splitlines()
        res["why"] = "rc %s%s" % (rc, (": " + err[-1][:160]) if err else "")
        return res
    fields = dict(kv.split("=", 1) for kv in m.group(1).split() if "=" in kv)
    res["status"] = "ok"
    res["elapsed_ns"] = int(fields["elapsed_ns"])
    res["cpu_ns"] = int(fields.get("cpu_ns", 0))
    res["loadavg"] = open("/proc/loadavg").read().split()[0]
    res["fields"] = fields
    if config in ("vtpin-pins", "vtpin-exact", "vtpin-sampled", "vtpin-marked") and os.path.exists(rec):
        res["recording"] = recording_stats(rec)
        res["recording_bytes"] = os.path.getsize(rec)
        os.unlink(rec)
    if config == "vtpin-collector":
        files, st = collector.recording_of(pid)
        res["collector_cpu_s"] = proc_cpu_s(collector.pid) - col_cpu0
        res["recording"] = st
        if not files:
            res["note"] = "no collector recording: the agent did not connect"
        for f in files:
            res["recording_bytes"] = os.path.getsize(f)
            os.unlink(f)
    return res


# ---------------------------------------------------------------------------------------------
# overhead tables


def fmt_range(med, lo, hi, digits=2):
    f = "%%.%df" % digits
    return (f + " (" + f + "–" + f + ")") % (med, lo, hi)


def paired(rounds, c, ref, key):
    """Per-round ratios run[c][key] / run[ref][key] over the rounds where both ran."""
    out = []
    for r in rounds:
        a, b = r.get(c), r.get(ref)
        if a and b and a.get("status") == "ok" and b.get("status") == "ok" and a.get(key) and b.get(key):
            out.append(a[key] / b[key])
    return out


def overhead_table(jdk, workload, configs, rounds, args):
    """Markdown for one JDK x workload from rounds[r][config] = result."""
    main, full, quick, what = WORKLOADS[workload]
    wargs = quick if args.quick else full
    lines = ["#### JDK %s — %s (`%s %s`)" % (jdk, workload, main, " ".join(wargs)), "",
             "%s. %d measured round(s)%s. Wall = elapsed time of the measured part; CPU = the process's CPU "
             "time in it (all threads, the agent's included). Ratios are per round against the same round's "
             "no-agent / floor run: median (min–max) over rounds.%s" % (
                 what[0].upper() + what[1:], len(rounds),
                 "" if args.quick else " after 1 discarded warm-up round",
                 " Rounds alternate idle=0 and idle=1 (one idle thread started before the carriers), so "
                 "both thread parities are pooled (docs/performance.md)." if main == "BenchMountChurn" else ""), "",
             "| configuration | wall ms, median (min–max) | wall × no agent | wall × floor | CPU × no agent | "
             "CPU × floor | notes |",
             "|---|---|---|---|---|---|---|"]
    summary = {}
    for c in configs:
        runs = [r.get(c) for r in rounds]
        ok = [x for x in runs if x and x.get("status") == "ok"]
        notes = []
        if any(x and x.get("status") == "n/a" for x in runs):
            lines.append("| %s | n/a (%s) | | | | | |" % (c, runs[0].get("why", "")))
            continue
        failed = [x for x in runs if x and x.get("status") == "failed"]
        if failed:
            notes.append("%d/%d runs failed: %s" % (len(failed), len(runs), failed[0].get("why", "")))
        if not ok:
            lines.append("| %s | failed | | | | | %s |" % (c, "; ".join(notes)))
            continue
        ms = [x["elapsed_ns"] / 1e6 for x in ok]
        row = [c, fmt_range(statistics.median(ms), min(ms), max(ms), 0)]
        s = {"median_ms": statistics.median(ms), "ms": ms}
        for key, label in (("elapsed_ns", "wall"), ("cpu_ns", "cpu")):
            for ref in ("none", "floor"):
                ratios = paired(rounds, c, ref, key)
                if c == ref:
                    row.append("1")
                elif ratios:
                    row.append(fmt_range(statistics.median(ratios), min(ratios), max(ratios)))
                    s["%s_x_%s" % (label, ref)] = (statistics.median(ratios), min(ratios), max(ratios))
                else:
                    row.append("–")
        recs = [x.get("recording") for x in ok if x.get("recording")]
        if recs:
            last = recs[-1]
            te = int(last.get("transition_entries", 0))
            td = int(last.get("transitions_dropped", 0) or 0)
            pins = last.get("pins")
            if te or td:
                notes.append("transitions recorded %s, dropped %s" % (human(te), human(td)))
            if pins is not None and int(pins):
                notes.append("pins seen %s, reported %s" % (pins, last.get("pins_reported")))
            cpu = [int(x["agent_cpu_ns"]) for x in recs if x.get("agent_cpu_ns")]
            calls = [int(x["jvmti_calls"]) for x in recs if x.get("jvmti_calls")]
            if cpu:  # the agent's own figures: deterministic beside the noisy ratios
                notes.append("agent's writer CPU %.1f ms, JVMTI calls %s (medians, from the recording)" %
                             (statistics.median(cpu) / 1e6, human(int(statistics.median(calls))) if calls else 0))
            for k in ("events_dropped", "collector_dropped"):
                if int(last.get(k, 0) or 0):
                    notes.append("%s %s" % (k.replace("_", " "), last[k]))
            if last.get("complete") != "1":
                notes.append("recording incomplete")
            b = [x.get("recording_bytes", 0) for x in ok]
            if max(b) > 1 << 20:
                notes.append("recording %s" % human_bytes(statistics.median(b)))
        col = [x["collector_cpu_s"] for x in ok if "collector_cpu_s" in x]
        if col:
            notes.append("collector CPU %.0f ms per run (whole run)" % (statistics.median(col) * 1000))
        zts = [x["zero_touch"] for x in ok if x.get("zero_touch")]
        if zts:
            notes += zero_touch_notes(zts)
        if workload == "service":
            p99 = [int(x["fields"].get("p99_us", 0)) for x in ok]
            p99x = paired(with_p99(rounds), c, "none", "p99")
            notes.append("request p99 %.1f ms%s" % (
                statistics.median(p99) / 1000,
                " (× no agent %s)" % fmt_range(statistics.median(p99x), min(p99x), max(p99x))
                if p99x and c != "none" else ""))
        for x in ok:
            if x.get("note"):
                notes.append(x["note"])
                break
        row.append("; ".join(notes))
        lines.append("| " + " | ".join(row) + " |")
        summary[c] = s
    others = [x["others_cores"] for r in rounds for x in r.values() if x and "others_cores" in x]
    if others:
        lines += ["", "Other processes on the machine kept %.2f cores busy during these runs (median; "
                  "max %.2f, of %d)." % (statistics.median(others), max(others), os.cpu_count())]
    return "\n".join(lines) + "\n" + target_checks(workload, configs, rounds), summary


def zero_touch_notes(zts):
    """The notes of a zero-touch row: was each JVM watched before its warm-up, what the collector
    tracked, and its CPU per context switch of the JVM and per pin (medians over the runs)."""
    def med(key):
        v = [z[key] for z in zts if z.get(key) is not None]
        return statistics.median(v) if v else None
    watched = [z for z in zts if z.get("watched")]
    notes = ["watched before its warm-up in %d/%d runs, %.0f ms after the JVM started (median)" % (
        len(watched), len(zts), med("watched_after_ms") or 0)]
    why = next((z["why"] for z in zts if z.get("why")), None)
    if why:
        notes.append("not watched: " + why)
    if med("threads_tracked_end") is not None:
        notes.append("threads tracked %d at the BENCH line (%d carriers), %d at the gate" % (
            med("threads_tracked_end"), med("carriers") or 0, med("threads_tracked") or 0))
    if med("collector_cpu_watched_s") is not None:
        notes.append("collector CPU while it watched (JVM taken on → exit) %.0f ms" % (
            med("collector_cpu_watched_s") * 1000))
    if med("collector_ns_per_switch") is not None:
        notes.append("%.0f ns per context switch of the JVM meanwhile (%s switches)" % (
            med("collector_ns_per_switch"), human(med("ctxsw"))))
    pins = [z.get("pins", 0) for z in zts]
    if any(pins):
        notes.append("pins %d per run, collector CPU %.0f µs per pin" % (statistics.median(pins),
                                                                       med("collector_us_per_pin") or 0))
    if any(z.get("others_watched") for z in zts):
        notes.append("the collector also watched %d other JVMs of the host" % max(z.get("others_watched", 0)
                                                                                   for z in zts))
    return notes


# Issue 9's targets (vtpin), and zero-touch's (no agent, the collector watching: within 2 % of no
# agent in wall time on mount churn and the service), judged per round against the same round's
# runs. (workload, measure, config, reference, bound): the median over rounds of (config × no
# agent) − (reference × no agent) must be ≤ bound when reference is a configuration, or the median
# of (config × no agent) ≤ 1 + bound when it is None.
TARGETS = [
    ("mountchurn-steady", "elapsed_ns", "vtpin-sampled", "jfr", 0.05),
    ("mountchurn-steady", "cpu_ns", "vtpin-sampled", "jfr", 0.05),
    ("mountchurn-steady", "elapsed_ns", "vtpin-pins", "jfr", 0.05),
    ("mountchurn-steady", "cpu_ns", "vtpin-pins", "jfr", 0.05),
    ("service", "elapsed_ns", "vtpin-sampled", None, 0.02),
    ("service", "cpu_ns", "vtpin-sampled", None, 0.02),
    ("service", "p99", "vtpin-sampled", None, 0.05),
    ("service", "elapsed_ns", "vtpin-pins", None, 0.02),
    ("service", "cpu_ns", "vtpin-pins", None, 0.02),
    ("service", "p99", "vtpin-pins", None, 0.05),
    ("mountchurn", "elapsed_ns", "zero-touch", None, 0.02),
    ("mountchurn-steady", "elapsed_ns", "zero-touch", None, 0.02),
    ("service", "elapsed_ns", "zero-touch", None, 0.02),
]
MEASURE_TEXT = {"elapsed_ns": "wall", "cpu_ns": "CPU", "p99": "request p99"}


def with_p99(rounds):
    """rounds with each ok service run's request p99 (µs) as run["p99"]."""
    return [{k: dict(v, p99=int(v["fields"].get("p99_us", 0))) if v and v.get("status") == "ok" else v
             for k, v in r.items()} for r in rounds]


def median_interval(values, level=0.90, resamples=4000):
    """A bootstrap interval (percentile method, fixed seed: the same data give the same
    interval) of the median of values."""
    rng = random.Random(1)
    meds = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(resamples))
    tail = (1 - level) / 2
    return meds[int(tail * resamples)], meds[min(resamples - 1, int((1 - tail) * resamples))]


def target_verdict(lo, hi, limit):
    """met: the whole interval within the bound; not met: the whole of it beyond."""
    return "met" if hi <= limit else "not met" if lo > limit else "not decided (the noise straddles it)"


def target_checks(workload, configs, rounds):
    """Markdown: each of TARGETS for this workload, with the per-round differences' median, its
    90 % bootstrap interval and a verdict: met (the whole interval within the bound), not met
    (the whole interval beyond it) or not decided (the noise straddles the bound)."""
    lines = []
    rounds = with_p99(rounds)
    for w, key, c, ref, bound in TARGETS:
        if w != workload or c not in configs or (ref and ref not in configs):
            continue
        if ref:
            # only the rounds where both ran (a failed run on one side would shift the pairs)
            both = [r for r in rounds if all(r.get(k) and r[k].get("status") == "ok" for k in (c, ref, "none"))]
            values = [a - b for a, b in zip(paired(both, c, "none", key), paired(both, ref, "none", key))]
            what = "%s × no agent − %s × no agent ≤ %+.2f" % (c, ref, bound)
            limit = bound
        else:
            values = paired(rounds, c, "none", key)
            what = "%s × no agent ≤ %.2f" % (c, 1 + bound)
            limit = 1 + bound
        if len(values) < 2:
            continue
        med = statistics.median(values)
        lo, hi = median_interval(values)
        verdict = target_verdict(lo, hi, limit)
        lines.append("| %s: %s | %d | %+.3f | %+.3f … %+.3f | %s |" % (
            MEASURE_TEXT[key], what, len(values), med, lo, hi, verdict) if ref else
            "| %s: %s | %d | %.3f | %.3f … %.3f | %s |" % (MEASURE_TEXT[key], what, len(values), med, lo, hi, verdict))
    if not lines:
        return ""
    return "\n".join(["", "Targets (issue 9's for vtpin, zero-touch's), per round against the same round's runs: "
                       "median over rounds and its 90 % bootstrap interval; met only when the whole interval is "
                       "within the bound.", "",
                       "| target | rounds | median | 90 % interval | verdict |", "|---|---|---|---|---|"] + lines) + "\n"


def human(n):
    n = float(n)
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= div:
            return "%.1f%s" % (n / div, unit)
    return "%d" % n


def human_bytes(n):
    for unit, div in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= div:
            return "%.0f %s" % (n / div, unit)
    return "%d B" % n


def run_overhead(jdk, args, workdir, collector, out):
    configs = [c for c in args.configs]
    results = {}
    logs = os.path.join(workdir, "logs")
    os.makedirs(logs, exist_ok=True)
    timeout = 120 if args.quick else 300
    for w in args.workloads:
        rounds = []
        total = (0 if args.quick else 1) + args.rounds
        for r in range(total):
            warm = not args.quick and r == 0
            this = {}
            # measured rounds rotate the order, so no configuration always runs first or last
            k = 0 if warm else (r if args.quick else r - 1) % len(configs)
            for c in configs[k:] + configs[:k]:
                tag = "warmup" if warm else "r%d" % (r if args.quick else r - 1)
                res = one_run(jdk, w, c, args, workdir, collector, timeout, logs, tag,
                              idle=0 if warm else (r if args.quick else r - 1) % 2)
                this[c] = res
                log("  jdk %s %-10s %-16s %-7s %s" % (
                    jdk, w, c, tag,
                    ("%.0f ms" % (res["elapsed_ns"] / 1e6)) if res.get("status") == "ok"
                    else res.get("status", "?") + " " + res.get("why", "")))
            if not warm:
                rounds.append(this)
        table, summary = overhead_table(jdk, w, configs, rounds, args)
        print(table, flush=True)
        out.append(table)
        results[w] = {"rounds": rounds, "summary": summary}
    return results


# ---------------------------------------------------------------------------------------------
# detection latency

TRACE_START_RE = re.compile(r"^vtpin: pin #(\d+) started: VirtualThread\[#(\d+),([^\]]*)\]", re.M)
STAMP_RE = re.compile(r"^PinTimer start_nanotime=(\d+) start_epoch_nanos=(\d+) seq=(\d+)", re.M)


def parse_kv_lines(text, prefix):
    rows = []
    for line in text.splitlines():
        if line.startswith(prefix + " "):
            rows.append(dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv))
    return rows


def start_watcher(cmd, path):
    f = open(path, "wb")
    p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    f.close()
    deadline = time.time() + 5
    while time.time() < deadline:
        if "READY" in open(path, errors="replace").read():
            return p
        if p.poll() is not None:
            raise RuntimeError("watcher exited: " + open(path, errors="replace").read())
        time.sleep(0.01)
    return p


def stop_watcher(p, stopfile):
    open(stopfile, "w").close()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    os.unlink(stopfile)


def latency_mode(jdk, args):
    return "monitor" if jdk == "21" else "native"


def pintimer_cmd(jdk, agent_opts, mode, count, sleep_ms, main="PinTimer"):
    cmd = [java_bin(jdk), "--enable-native-access=ALL-UNNAMED"]
    if agent_opts is not None:
        cmd.append("-agentpath:%s=%s" % (AGENT, agent_opts))
    cmd += ["-cp", CLASSES, "-Djava.library.path=" + FIXTURE_LIB, main]
    if mode == "native":
        cmd.append("--native")
    return cmd + [str(count), str(sleep_ms)]


def lat_summary(values_ns):
    if not values_ns:
        return None
    ms = [v / 1e6 for v in values_ns]
    return {"n": len(ms), "median_ms": statistics.median(ms), "p99_ms": pct(ms, 99), "max_ms": max(ms),
            "min_ms": min(ms)}


class CpuLoad:
    """A CPU-bound JVM (BenchCpu, one virtual thread per core's worth of work, for
    minutes) that keeps every core busy while a latency run measures: the agent's
    writer thread and the collector must then win the CPU from it."""

    def __init__(self, jdk, path):
        self.jdk, self.path, self.proc = jdk, path, None

    def __enter__(self):
        f = open(self.path, "wb")
        self.proc = subprocess.Popen([java_bin(self.jdk), "-cp", CLASSES, "BenchCpu", "threads=100000000",
                                      "iterations=1000000", "warmup=0"], stdout=f, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        f.close()
        time.sleep(1.0)  # let it reach full speed
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def stamps_of(path):
    return {int(m.group(3)): int(m.group(1)) for m in STAMP_RE.finditer(open(path, errors="replace").read())}


def latency_files(jdk, mode, count, sleep_ms, d, tag):
    """PinTimer with tracefile= and record=, both followed with inotify. Returns rows, cold, raw."""
    trace, rec, stop = (os.path.join(d, "%s-%s" % (tag, n)) for n in ("trace.txt", "run.vtp", "stop"))
    for p in (trace, rec):
        open(p, "w").close()
    wfile = os.path.join(d, "%s-watch.out" % tag)
    w = start_watcher([BENCHTOOL, "watch-files", "--trace", trace, "--record", rec, "--stop", stop,
                       "--timeout", "300"], wfile)
    cmd = pintimer_cmd(jdk, "threshold=0,tracefile=%s,record=%s,quiet" % (trace, rec), mode, count, sleep_ms)
    rc, _, _, _ = run_jvm(cmd, 300, os.path.join(d, "%s-pintimer.out" % tag), os.path.join(d, "%s-pintimer.err" % tag))
    time.sleep(0.2)
    stop_watcher(w, stop)
    stamps = stamps_of(os.path.join(d, "%s-pintimer.out" % tag))
    wout = open(wfile).read()
    seen_trace, seen_rec, agent_start = {}, {}, {}
    for r in parse_kv_lines(wout, "TRACE"):
        if r["name"].startswith("pintimer-"):
            seen_trace.setdefault(int(r["name"].split("-")[1]), int(r["seen_ns"]))
    for r in parse_kv_lines(wout, "RECORD"):
        if r["name"].startswith("pintimer-"):
            seq = int(r["name"].split("-")[1])
            seen_rec.setdefault(seq, int(r["seen_ns"]))
            agent_start.setdefault(seq, int(r["start_ns"]))
    warm = [x for x in stamps if x >= 1]  # pin 0 is cold (the JVM's first pinned park): reported apart
    series = [
        ("vtpin trace file (tracefile=, inotify)", [seen_trace[x] - stamps[x] for x in warm if x in seen_trace]),
        ("vtpin recording (record=, inotify)", [seen_rec[x] - stamps[x] for x in warm if x in seen_rec]),
        ("  of which: fixture stamp → agent's pin start", [agent_start[x] - stamps[x] for x in warm if x in agent_start]),
        ("  of which: agent's pin start → in the file", [seen_rec[x] - agent_start[x] for x in warm if x in seen_rec]),
    ]
    rows = []
    for k, v in series:
        note = "" if len(v) >= len(warm) and warm else "%d of %d pins seen (rc %s)" % (len(v), len(warm), rc)
        rows.append((k, lat_summary(v), note))
    cold = {}
    if 0 in stamps and 0 in seen_rec:
        cold["vtpin recording"] = (seen_rec[0] - stamps[0]) / 1e6
    os.unlink(rec)
    return rows, cold, {"rc": rc, "stamps": stamps, "trace": seen_trace, "record": seen_rec,
                        "agent_start": agent_start}


def latency_collector(jdk, mode, count, sleep_ms, d, tag, collector, poll_us):
    """PinTimer with collector=, the collector asked for `top` back to back."""
    stop = os.path.join(d, "%s-stop" % tag)
    trace = os.path.join(d, "%s-trace.txt" % tag)  # vthread id -> pintimer-N
    wfile = os.path.join(d, "%s-watch.out" % tag)
    w = start_watcher([BENCHTOOL, "watch-collector", "--socket", collector.socket, "--interval-us", str(poll_us),
                       "--stop", stop, "--timeout", "300"], wfile)
    cmd = pintimer_cmd(jdk, "threshold=0,tracefile=%s,collector=%s,quiet" % (trace, collector.socket), mode, count,
                       sleep_ms)
    rc, _, _, pid = run_jvm(cmd, 300, os.path.join(d, "%s-pintimer.out" % tag), os.path.join(d, "%s-pintimer.err" % tag))
    time.sleep(0.2)
    stop_watcher(w, stop)
    stamps = stamps_of(os.path.join(d, "%s-pintimer.out" % tag))
    names = {int(m.group(2)): m.group(3) for m in TRACE_START_RE.finditer(open(trace, errors="replace").read())}
    wout = open(wfile).read()
    seen = {}
    for r in parse_kv_lines(wout, "COLLECTOR"):
        name = names.get(int(r["vthread"]), "")
        if name.startswith("pintimer-"):
            seen.setdefault(int(name.split("-")[1]), (int(r["seen_ns"]), int(r["sent_ns"]), int(r["pinned_for_ns"])))
    rtt = parse_kv_lines(wout, "COLLECTOR_RTT")
    warm = [x for x in stamps if x >= 1]
    v = [seen[x][0] - stamps[x] for x in warm if x in seen]
    vlo = [seen[x][1] - stamps[x] for x in warm if x in seen]
    # the collector's own view: how long the pin had been going (from the agent's start time)
    # when the first reply showing it was made
    vagent = [seen[x][2] for x in warm if x in seen and seen[x][2] >= 0]
    note = "query round trip median %s µs, p99 %s µs; a query every %d µs + round trip" % (
        rtt[0].get("median_us", "?"), rtt[0].get("p99_us", "?"), poll_us) if rtt else ""
    if len(v) < len(warm) or not warm:
        note = "%d of %d pins seen (rc %s); " % (len(v), len(warm), rc) + note
    cold = {"vtpin collector": (seen[0][0] - stamps[0]) / 1e6} if 0 in stamps and 0 in seen else {}
    for f in glob.glob(os.path.join(collector.dir, "rec", "%d-*.vtp" % pid)):
        os.unlink(f)
    return (lat_summary(v), lat_summary(vlo), lat_summary(vagent), note), cold, {
        "rc": rc, "stamps": stamps, "seen": seen, "rtt": rtt}


def latency_jfr(jdk, mode, count, sleep_ms, d):
    cmd = pintimer_cmd(jdk, None, mode, count, sleep_ms, main="BenchJfrLatency")
    rc, _, _, _ = run_jvm(cmd, 300, os.path.join(d, "jfr.out"), os.path.join(d, "jfr.err"))
    jr = parse_kv_lines(open(os.path.join(d, "jfr.out")).read(), "JFRLAT")
    jwarm = [r for r in jr if int(r["seq"]) >= 1]
    got = [r for r in jwarm if int(r["delivered_nanotime"]) > 0]
    v = [int(r["delivered_nanotime"]) - int(r["start_nanotime"]) for r in got]
    vend = [int(r["delivered_nanotime"]) - int(r["end_nanotime"]) for r in got]
    by_time = sum(1 for r in got if r.get("matched_by") == "time")
    note = "" if len(got) == len(jwarm) and jwarm else "%d of %d pins delivered (rc %s)" % (len(got), len(jwarm), rc)
    if by_time:
        note = (note + "; " if note else "") + ("%d events had no eventThread and were matched by start time"
                                                % by_time)
    return [("JFR RecordingStream in-process (event delivered)", lat_summary(v), note),
            ("  JFR: delivered after the pin ended", lat_summary(vend), "")], {"rc": rc, "rows": jr}


def run_latency(jdk, args, workdir, collector, out):
    mode = latency_mode(jdk, args)
    count, sleep_ms = args.pins, 20
    d = os.path.join(workdir, "latency-%s" % jdk)
    os.makedirs(d, exist_ok=True)
    rows, cold, raw = [], {}, {}

    r, c, raw["files"] = latency_files(jdk, mode, count, sleep_ms, d, "files")
    rows += r
    cold.update(c)
    if collector is None:
        rows.append(("vtpin collector (`top` queries)", None, "n/a (no collector)"))
    else:
        (s, slo, sag, note), c, raw["collector"] = latency_collector(jdk, mode, count, sleep_ms, d, "collector",
                                                                     collector, args.poll_us)
        rows.append(("vtpin collector (`top` reply received)", s, note))
        rows.append(("  lower bound: that query was sent", slo, ""))
        rows.append(("  of which: agent's pin start → in the collector's answer", sag,
                     "`pinned_for_ns` of the first answer that shows the pin"))
        cold.update(c)
    r, raw["jfr"] = latency_jfr(jdk, mode, count, sleep_ms, d)
    rows += r
    # the same with every core kept busy by another JVM
    with CpuLoad(jdk, os.path.join(d, "load.out")):
        r, _, raw["files_loaded"] = latency_files(jdk, mode, count, sleep_ms, d, "files-loaded")
        rows.append(("**machine saturated** (a CPU-bound JVM on every core):", None, "-"))
        rows += [("  " + what.strip(), s_, n_) for what, s_, n_ in r[1:2] + r[3:4]]
        if collector is not None:
            (s, slo, sag, note), _, raw["collector_loaded"] = latency_collector(
                jdk, mode, count, sleep_ms, d, "collector-loaded", collector, args.poll_us)
            rows.append(("  vtpin collector (`top` reply received)", s, note))
            rows.append(("  of which: agent's pin start → in the collector's answer", sag, ""))

    title = "#### JDK %s — detection latency (`PinTimer%s %d %d`, %s pins)" % (
        jdk, " --native" if mode == "native" else "", count, sleep_ms, "NATIVE" if mode == "native" else "MONITOR")
    lines = [title, "",
             "From the fixture's `System.nanoTime()` just before each pin to the moment the pin's start is "
             "visible to another process (CLOCK_MONOTONIC on both sides): the agent's trace file and recording "
             "followed with inotify, the collector asked for `vtpin top` back to back, JFR's in-process "
             "RecordingStream. %d pins of %d ms one after another; pin 0 (the JVM's first pinned park, cold) is "
             "left out. p99 is nearest-rank." % (count - 1, sleep_ms), "",
             "| where the pin is visible | n | median ms | p99 ms | max ms | notes |", "|---|---|---|---|---|---|"]
    for what, s_, note in rows:
        if s_:
            lines.append("| %s | %d | %.3f | %.3f | %.3f | %s |" % (what, s_["n"], s_["median_ms"], s_["p99_ms"],
                                                                  s_["max_ms"], note))
        elif note == "-":
            lines.append("| %s | | | | | |" % what)
        else:
            lines.append("| %s | – | – | – | – | %s |" % (what, note or "no data"))
    if cold:
        lines += ["", "Cold first pin (pin 0): " + ", ".join("%s %.2f ms" % kv for kv in cold.items()) + "."]
    table = "\n".join(lines) + "\n"
    print(table, flush=True)
    out.append(table)
    return {"rows": rows, "cold_ms": cold, "raw": raw}


# ---------------------------------------------------------------------------------------------
# collector ingest


def run_ingest(args, workdir, out):
    if not os.access(INGEST, os.X_OK):
        out.append("Ingest: bench/ingest.c was not built.\n")
        return None
    scale = 0.1 if args.quick else 1.0
    runs = [
        # (label, conns, carriers, events, batch)
        ("1 JVM, 8 carriers, batches of 1024", 1, 8, int(20e6 * scale), 1024),
        ("4 JVMs, 8 carriers, batches of 1024", 4, 8, int(50e6 * scale), 1024),
        ("4 JVMs, 8 carriers, batches of 64", 4, 8, int(20e6 * scale), 64),
        ("16 JVMs, 4 carriers, batches of 16", 16, 4, int(10e6 * scale), 16),
        ("64 JVMs, 2 carriers, batches of 256", 64, 2, int(40e6 * scale), 256),
    ]
    lines = ["#### Collector ingest (`bench/ingest.c`)", "",
             "Synthetic agent sessions over the collector's Unix socket, as fast as the generator can pack them "
             "(both share the machine's %d cores). Events = mount/unmount entries + pin starts + pin ends "
             "(one pin every 5000 entries); the collector decodes them, keeps occupancy and writes each "
             "session's recording. Collector CPU from /proc/PID/stat." % os.cpu_count(), "",
             "| load | events | wall s | events/s | collector CPU s | events per collector CPU-second | "
             "collector RSS before → peak |", "|---|---|---|---|---|---|---|"]
    raw = []
    for label, conns, carriers, events, batch in runs:
        col = Collector(workdir, "ingest-collector").start()
        try:
            r = subprocess.run([INGEST, "--socket", col.socket, "--collector-pid", str(col.pid), "--conns",
                                str(conns), "--carriers", str(carriers), "--events", str(events), "--batch",
                                str(batch), "--pin-every", "5000"], capture_output=True, text=True, timeout=300)
        finally:
            col.stop()
            shutil.rmtree(col.dir, ignore_errors=True)
        res = parse_kv_lines(r.stdout, "INGEST")
        if r.returncode != 0 or not res:
            lines.append("| %s | failed: %s | | | | | |" % (label, (r.stderr or r.stdout).strip()[:160]))
            continue
        x = res[0]
        raw.append(dict(x, label=label))
        lines.append("| %s | %s | %s | %s | %s | %s | %s → %s MB |" % (
            label, human(int(x["events"])), x["wall_s"], human(float(x["events_per_s"])), x["collector_cpu_s"],
            human(float(x["events_per_collector_cpu_s"])), "%.1f" % (int(x["rss_before_kb"]) / 1024),
            "%.1f" % (int(x["rss_peak_kb"]) / 1024)))
        log("  ingest %s: %s" % (label, r.stdout.strip()))
    # memory: many connected JVMs, few vs many carriers
    mem = []
    for conns, carriers in ((50, 2), (50, 64)):
        col = Collector(workdir, "ingest-collector").start()
        try:
            r = subprocess.run([INGEST, "--mode", "memory", "--socket", col.socket, "--collector-pid",
                                str(col.pid), "--conns", str(conns), "--carriers", str(carriers), "--events",
                                str(conns * carriers * 2000), "--batch", "1000", "--pin-every", "1000",
                                "--hold-ms", "1500"], capture_output=True, text=True, timeout=300)
        finally:
            col.stop()
            shutil.rmtree(col.dir, ignore_errors=True)
        res = parse_kv_lines(r.stdout, "INGEST_MEM")
        log("  ingest memory %d x %d: %s" % (conns, carriers, r.stdout.strip() or r.stderr.strip()))
        if res:
            mem.append(res[0])
    if len(mem) == 2:
        a, b = mem
        per_jvm = float(a["per_jvm_kb"])
        per_carrier = (float(b["per_jvm_kb"]) - float(a["per_jvm_kb"])) / (int(b["carriers"]) - int(a["carriers"]))
        lines += ["", "Collector memory with JVMs connected (each carrier with 2000 mount/unmount entries and "
                  "pins already sent): %s JVMs × %s carriers: RSS %.1f → %.1f MB (%.0f KB per JVM); %s JVMs × %s "
                  "carriers: %.1f → %.1f MB (%.0f KB per JVM). Per carrier ≈ %.1f KB; per JVM without its "
                  "carriers ≈ %.0f KB." % (
                      a["conns"], a["carriers"], int(a["rss_before_kb"]) / 1024, int(a["rss_held_kb"]) / 1024,
                      per_jvm, b["conns"], b["carriers"], int(b["rss_before_kb"]) / 1024,
                      int(b["rss_held_kb"]) / 1024, float(b["per_jvm_kb"]), per_carrier,
                      per_jvm - per_carrier * int(a["carriers"]))]
    table = "\n".join(lines) + "\n"
    print(table, flush=True)
    out.append(table)
    return {"runs": raw, "memory": mem}


# ---------------------------------------------------------------------------------------------
# zero-touch with idle JVMs


PARTS = ["overhead", "latency", "ingest", "zerotouch-idle", "junit-suite"]


def run_zerotouch_idle(args, stamp, suffix):
    """bench/zerotouch_idle.py's measurement (50 idle JVMs, 30 s windows; quick: 10 JVMs, 10 s)."""
    import zerotouch_idle  # bench/, beside this file
    table, raw = zerotouch_idle.measure(10 if args.quick else 50, 10 if args.quick else 30)
    print(table, flush=True)
    path = os.path.join(args.out, "%s-zerotouch-idle%s.md" % (stamp, suffix))
    with open(path, "w") as f:
        f.write("# vtpin zero-touch with idle JVMs — %s\n\n%s" % (stamp, table))
    with open(path[:-3] + ".json", "w") as f:
        json.dump(raw, f, indent=1)
    log("bench: wrote %s" % path)


def run_junit_suite(args, stamp, suffix):
    """bench/junit_suite.py's measurement (200 tests x 50 virtual threads; quick: 1 round)."""
    import junit_suite  # bench/, beside this file
    table, raw = junit_suite.measure(args.rounds, args.jdks, 200, 50)
    print(table, flush=True)
    path = os.path.join(args.out, "%s-junit-suite%s.md" % (stamp, suffix))
    with open(path, "w") as f:
        f.write("# vtpin @NoPinning on a test suite — %s\n\n200 tests x 50 virtual threads, %d round(s)\n\n%s\n"
                % (stamp, args.rounds, table))
    with open(path[:-3] + ".json", "w") as f:
        json.dump(raw, f, indent=1)
    log("bench: wrote %s" % path)


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 round, no warm-up round, small workloads")
    ap.add_argument("--load", default="", metavar="SPEC",
                    help="every measured JVM under the tests' load (tests/jvm/load.py): busy=N busy loops, "
                         "quota=PCT a CPU quota on the JVM, preempt=N preempting burst loops, e.g. busy=2,quota=50")
    ap.add_argument("--rounds", type=int, default=6, help="measured rounds (default 6: even, both thread parities)")
    ap.add_argument("--jdks", default="21,25")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--only", default="overhead,latency,ingest",
                    help="parts: %s (zerotouch-idle and junit-suite only when named)" % ",".join(PARTS))
    ap.add_argument("--pins", type=int, default=101, help="PinTimer pins in the latency runs (default 101)")
    ap.add_argument("--poll-us", type=int, default=200, help="pause between collector queries (latency)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs of every run)")
    ap.add_argument("--tables-from", metavar="JSON",
                    help="print the overhead tables (and target checks) of an earlier run's .json, run nothing")
    args = ap.parse_args()
    if args.tables_from:
        with open(args.tables_from) as f:
            raw = json.load(f)
        old = argparse.Namespace(**raw["args"])
        for w, res in raw.get("overhead", {}).items():
            print(overhead_table(raw["jdk"], w, old.configs, res["rounds"], old)[0])
        return
    if args.load:
        global LOAD
        LOAD = parse_load(args.load).__enter__()
        atexit.register(LOAD.__exit__)
        print("every measured JVM under %s" % LOAD.describe(), file=sys.stderr)
    if args.quick:
        args.rounds = 1
        if args.pins == 101:
            args.pins = 11
    args.jdks = [j for j in args.jdks.split(",") if j]
    args.workloads = [w for w in args.workloads.split(",") if w]
    args.configs = [c for c in args.configs.split(",") if c]
    parts = set(args.only.split(","))
    if parts - set(PARTS):
        raise SystemExit("bench: unknown part %s (--only: %s)" % (", ".join(sorted(parts - set(PARTS))),
                                                                 ",".join(PARTS)))
    for w in args.workloads:
        if w not in WORKLOADS:
            raise SystemExit("bench: unknown workload %s (%s)" % (w, ", ".join(WORKLOADS)))
    for c in args.configs:
        if c.startswith("old-vtpin-") and c[4:] in CONFIGS + EXTRA_CONFIGS:
            if not os.path.exists(os.environ.get("VTPIN_OLD_AGENT", "")):
                raise SystemExit("bench: %s runs $VTPIN_OLD_AGENT (an earlier libvtpin.so): not set or missing" % c)
        elif c not in CONFIGS + EXTRA_CONFIGS:
            raise SystemExit("bench: unknown configuration %s (%s)" % (c, ", ".join(CONFIGS + EXTRA_CONFIGS)))
    for need in ("none", "floor"):
        if "overhead" in parts and need not in args.configs:
            args.configs.insert(0 if need == "none" else 1, need)
    for f in (AGENT, EMPTY_AGENT, BENCHTOOL, os.path.join(CLASSES, "BenchService.class")):
        if not os.path.exists(f):
            raise SystemExit("bench: %s is missing: run bench/run.sh (it builds)" % f)

    os.makedirs(args.out, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y-%m-%d")
    suffix = "-quick" if args.quick else ""
    workdir = tempfile.mkdtemp(prefix="vtpin-bench-")
    info = machine_info()
    have_collector = Collector.available()
    started = time.monotonic()
    log("bench: work directory %s; collector %s" % (workdir, "available" if have_collector else "not available"))
    try:
        for jdk in args.jdks if parts & {"overhead", "latency"} else []:  # else no per-JDK files
            out = []
            ver = java_version(jdk)
            header = ["# vtpin benchmark — JDK %s%s" % (jdk, " (quick)" if args.quick else ""), "",
                      "- date: %s" % datetime.datetime.now().strftime("%Y-%m-%d %H:%M %Z").strip(),
                      "- machine: %d CPUs (%s), Linux %s, load average at start %s" % (
                          info["cpus"], info["cpu_model"], info["kernel"], info["loadavg_at_start"]),
                      "- vtpin: %s" % info["vtpin_commit"],
                      "- java -version: %s" % " / ".join(l.strip() for l in ver.splitlines()),
                      "- JVM flags in every overhead run: `%s`" % " ".join(JVM_COMMON),
                      "- command: `bench/run.sh %s`" % " ".join(sys.argv[1:]), ""]
            print("\n".join(header), flush=True)
            out.append("\n".join(header))
            collector = None
            if have_collector and ("overhead" in parts or "latency" in parts):
                collector = Collector(workdir, "collector-%s" % jdk).start()
            raw = {"jdk": jdk, "java_version": ver, "machine": info, "args": vars(args)}
            try:
                if "overhead" in parts:
                    raw["overhead"] = run_overhead(jdk, args, workdir, collector, out)
                if "latency" in parts:
                    raw["latency"] = run_latency(jdk, args, workdir, collector, out)
            finally:
                if collector:
                    collector.stop()
            if not have_collector:
                out.append("\nThe collector (`build/vtpin collector`) is not available: its configuration and "
                           "latency rows are n/a.\n")
            path = os.path.join(args.out, "%s-jdk%s%s.md" % (stamp, jdk, suffix))
            with open(path, "w") as f:
                f.write("\n".join(out))
            with open(path[:-3] + ".json", "w") as f:
                json.dump(raw, f, indent=1, default=str)
            log("bench: wrote %s (+ .json)" % path)
        if "ingest" in parts:
            out = []
            if not have_collector:
                msg = "Ingest: skipped: `build/vtpin collector` is not available.\n"
                print(msg)
                out.append(msg)
                raw = None
            else:
                raw = run_ingest(args, workdir, out)
            path = os.path.join(args.out, "%s-ingest%s.md" % (stamp, suffix))
            with open(path, "w") as f:
                f.write("# vtpin collector ingest — %s, %d CPUs (%s)\n\n" % (stamp, info["cpus"], info["cpu_model"]))
                f.write("\n".join(out))
            with open(path[:-3] + ".json", "w") as f:
                json.dump(raw, f, indent=1, default=str)
            log("bench: wrote %s" % path)
        if "zerotouch-idle" in parts:
            run_zerotouch_idle(args, stamp, suffix)
        if "junit-suite" in parts:
            run_junit_suite(args, stamp, suffix)
    finally:
        if args.keep:
            log("bench: logs kept in %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    log("bench: done in %.0f s" % (time.monotonic() - started))


if __name__ == "__main__":
    main()
