#!/usr/bin/env python3
"""What zero-touch costs when nothing happens: N idle JVMs (half JDK 21, half JDK 25, no agent)
watched by a `vtpin collector --jvms=all --kernel=on`, and the same JVMs beside a
`--jvms=agents --kernel=on` collector (which does not watch them) for comparison.

Each JVM starts 4 virtual threads that wake once a second (a heartbeat, as an idle service has:
it also keeps the scheduler's carriers alive, which otherwise exit after 30 s idle and change the
thread lists during the window), and its main thread sleeps. Once every JVM is watched, the
collector's CPU (utime + stime from /proc/PID/stat, clock ticks) is read over the window;
printed: JVMs watched, threads tracked, the collector's CPU in % of one core, its RSS, and the
idle JVMs' own CPU over the same window (the kernel view's BPF program runs on their context
switches and is charged to them). Target (the zero-touch issue): < 1 % of a CPU with 50 idle JVMs.

usage: python3 bench/zerotouch_idle.py [--jvms 50] [--seconds 30]
Needs root (the kernel view) and the build in build/ (build/vtpin). The JDKs come from
JAVA21_HOME / JAVA25_HOME, else from ~/.cache/vtpin/jdks.env. Every JVM and collector it starts
is killed on any exit.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("VTPIN_BUILD_DIR", os.path.join(ROOT, "build"))
VTPIN = os.path.join(BUILD, "vtpin")
CLK_TCK = os.sysconf("SC_CLK_TCK")
TARGET_PCT = 1.0

IDLE_JAVA = """
public class ZtIdle {
    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 4; i++) {
            Thread.ofVirtual().name("heartbeat-" + i).start(() -> {
                try {
                    while (true) Thread.sleep(1000);
                } catch (InterruptedException e) {
                    // exit
                }
            });
        }
        System.out.println("ZtIdle: ready");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
"""
JVM_FLAGS = ["-Xmx32m", "-XX:TieredStopAtLevel=1"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def jdk_homes(jdks=("21", "25")):
    """{"21": home, "25": home} (or those of jdks): the environment's, else those of
    ~/.cache/vtpin/jdks.env (as run.sh). bench/junit_suite.py uses it too."""
    env = {}
    path = os.path.expanduser("~/.cache/vtpin/jdks.env")
    if os.path.exists(path):
        for line in open(path):
            k, _, v = line.strip().removeprefix("export ").partition("=")
            env[k] = v.strip("'\"")
    homes = {jdk: os.environ.get("JAVA%s_HOME" % jdk) or env.get("JAVA%s_HOME" % jdk) for jdk in jdks}
    missing = [j for j, h in homes.items() if not h or not os.path.exists(os.path.join(h, "bin", "java"))]
    if missing:
        raise SystemExit("bench: no JDK %s (JAVA<N>_HOME, or ~/.cache/vtpin/jdks.env)" % ", ".join(missing))
    return homes


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(next(l for l in f if l.startswith("VmRSS:")).split()[1])


def status(socket):
    r = subprocess.run([VTPIN, "status", "--socket", socket, "--json"], capture_output=True, text=True)
    try:
        return json.loads(r.stdout) if r.returncode == 0 else None
    except ValueError:
        return None


class Procs:
    """Everything started here: each in its own session, so killing its process group ends it all."""

    def __init__(self):
        self.procs = []

    def start(self, cmd, out_path):
        with open(out_path, "wb") as out:
            p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True)
        self.procs.append(p)
        return p

    def stop(self, p, sig=signal.SIGKILL):
        if p.poll() is None:
            try:
                os.killpg(p.pid, sig)
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
            except ProcessLookupError:
                p.wait()
        if p in self.procs:
            self.procs.remove(p)

    def stop_all(self):
        for p in list(self.procs):
            self.stop(p)


def compile_idle(tmp, homes):
    """ZtIdle.class, compiled once for 21 (it runs on 25 too): the source launcher would compile it
    again in each of the N JVMs."""
    src = os.path.join(tmp, "ZtIdle.java")
    with open(src, "w") as f:
        f.write(IDLE_JAVA)
    r = subprocess.run([os.path.join(homes["21"], "bin", "javac"), "--release", "21", "-d", tmp, src],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("zerotouch_idle: javac failed: %s" % r.stderr.strip())


def start_jvms(procs, tmp, homes, n):
    """n idle JVMs, alternately JDK 21 and 25; returns {pid: jdk} once each printed its ready line."""
    jvms = {}
    for i in range(n):
        jdk = ("21", "25")[i % 2]
        out = os.path.join(tmp, "jvm-%d.out" % i)
        p = procs.start([os.path.join(homes[jdk], "bin", "java")] + JVM_FLAGS + ["-cp", tmp, "ZtIdle"], out)
        jvms[p.pid] = (jdk, out, p)
    deadline = time.monotonic() + 60 + 2 * n  # 2 cores: N JVM start-ups take a while
    waiting = dict(jvms)
    while waiting and time.monotonic() < deadline:
        for pid, (jdk, out, p) in list(waiting.items()):
            if p.poll() is not None:
                raise SystemExit("zerotouch_idle: JVM %d (JDK %s) exited: %s" % (pid, jdk, open(out).read()[-500:]))
            if "ZtIdle: ready" in open(out, errors="replace").read():
                del waiting[pid]
        time.sleep(0.1)
    if waiting:
        raise SystemExit("zerotouch_idle: %d JVMs not ready in time" % len(waiting))
    return {pid: v[0] for pid, v in jvms.items()}


def start_collector(procs, tmp, name, jvms_mode):
    d = os.path.join(tmp, name)
    os.makedirs(d)
    sock = os.path.join(d, "c.sock")
    p = procs.start([VTPIN, "collector", "--jvms=" + jvms_mode, "--kernel=on", "--socket", sock, "--dir",
                     os.path.join(d, "rec")], os.path.join(d, "log"))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if p.poll() is not None:
            raise SystemExit("zerotouch_idle: vtpin collector --jvms=%s exited: %s" % (
                jvms_mode, open(os.path.join(d, "log")).read().strip()[-500:]))
        if os.path.exists(sock) and status(sock):
            return p, sock
        time.sleep(0.05)
    raise SystemExit("zerotouch_idle: vtpin collector --jvms=%s did not answer within 10 s" % jvms_mode)


def watched(sock, pids):
    """(ours watching or session, threads they track, other JVMs watched) from the collector's status."""
    st = status(sock) or {}
    jvms = (st.get("collector", {}).get("zero_touch") or {}).get("jvms", [])
    live = [j for j in jvms if j["state"] in ("watching", "session")]
    ours = [j for j in live if j["pid"] in pids]
    return len(ours), sum(j["threads_tracked"] for j in ours), len(live) - len(ours)


def window(col, jvm_pids, seconds):
    """The collector's and the JVMs' CPU over seconds; the collector's RSS at the end."""
    c0, j0 = cpu_s(col.pid), sum(cpu_s(p) for p in jvm_pids)
    t0 = time.monotonic()
    time.sleep(seconds)
    c1, j1 = cpu_s(col.pid), sum(cpu_s(p) for p in jvm_pids)
    wall = time.monotonic() - t0
    return {"wall_s": wall, "collector_cpu_s": c1 - c0, "collector_pct": 100 * (c1 - c0) / wall,
            "jvms_cpu_s": j1 - j0, "jvms_pct": 100 * (j1 - j0) / wall, "collector_rss_kb": rss_kb(col.pid)}


def one_mode(procs, tmp, mode, jvms, seconds):
    col, sock = start_collector(procs, tmp, "collector-" + mode, mode)
    try:
        res = {"mode": mode}
        if mode == "all":
            t0 = time.monotonic()
            n = 0
            while time.monotonic() < t0 + 30 + len(jvms):  # it lists /proc once a second
                n, _, _ = watched(sock, jvms)
                if n == len(jvms):
                    break
                time.sleep(0.2)
            res["watch_wait_s"] = time.monotonic() - t0
            if n < len(jvms):
                log("zerotouch_idle: only %d of %d JVMs watched; measuring anyway" % (n, len(jvms)))
        time.sleep(2)  # past the start-up's own work (BPF load, first look at every JVM)
        log("zerotouch_idle: --jvms=%s: measuring %d s" % (mode, seconds))
        res.update(window(col, jvms, seconds))
        res["watched"], res["threads_tracked"], res["others_watched"] = watched(sock, jvms)
        return res
    finally:
        procs.stop(col, signal.SIGTERM)


def fmt(res, n):
    return "| `--jvms=%s` | %s | %s | %.2f %% (%.0f ms in %.1f s) | %.1f MB | %.2f %% |" % (
        res["mode"], "%d/%d%s" % (res["watched"], n, " (+%d other)" % res["others_watched"]
                                  if res["others_watched"] else "") if res["mode"] == "all" else "–",
        res["threads_tracked"] if res["mode"] == "all" else "–", res["collector_pct"],
        res["collector_cpu_s"] * 1000, res["wall_s"], res["collector_rss_kb"] / 1024, res["jvms_pct"])


def measure(n=50, seconds=30):
    """Starts n idle JVMs, measures both collectors, kills everything; returns (markdown, raw)."""
    if os.geteuid() != 0:
        raise SystemExit("zerotouch_idle: the kernel view needs root")
    homes = jdk_homes()
    tmp = tempfile.mkdtemp(prefix="vtpin-zt-idle-")
    procs = Procs()
    try:
        compile_idle(tmp, homes)
        log("zerotouch_idle: starting %d idle JVMs" % n)
        jvms = start_jvms(procs, tmp, homes, n)
        runs = [one_mode(procs, tmp, mode, jvms, seconds) for mode in ("all", "agents")]
    finally:
        procs.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    all_ = runs[0]
    verdict = "met" if all_["collector_pct"] < TARGET_PCT else "not met"
    lines = ["#### Zero-touch with idle JVMs (`bench/zerotouch_idle.py --jvms %d --seconds %d`)" % (n, seconds), "",
             "%d idle JVMs, no agent (%d on JDK 21, %d on JDK 25; `%s`, 4 virtual threads that wake once a second), "
             "all watched before the window (%.1f s after the collector started). CPU from /proc/PID/stat over "
             "the window (10 ms ticks); the JVMs' CPU is theirs together, the kernel view's BPF program "
             "included." % (n, (n + 1) // 2, n // 2, " ".join(JVM_FLAGS), all_.get("watch_wait_s", 0)), "",
             "| collector | JVMs watched | threads tracked | collector CPU, % of one core | collector RSS | "
             "the idle JVMs' CPU, % of one core |", "|---|---|---|---|---|---|"]
    lines += [fmt(r, n) for r in runs]
    lines += ["", "Target (< %.0f %% of a CPU with 50 idle JVMs): **%s** (%.2f %%)%s." % (
        TARGET_PCT, verdict, all_["collector_pct"], "" if n == 50 else "; measured with %d JVMs, not 50" % n)]
    return "\n".join(lines) + "\n", {"jvms": n, "seconds": seconds, "runs": runs}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jvms", type=int, default=50, help="idle JVMs, half on JDK 21, half on 25 (default 50)")
    ap.add_argument("--seconds", type=float, default=30, help="each measuring window (default 30)")
    a = ap.parse_args()
    # SIGTERM/SIGHUP as Ctrl-C: through the finally that kills every JVM and collector
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, _frame: sys.exit(128 + signum))
    table, _ = measure(a.jvms, a.seconds)
    print(table)


if __name__ == "__main__":
    main()
