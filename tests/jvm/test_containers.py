#!/usr/bin/env python3
"""JVMs in pid namespaces (like containers) and the collector, JDK 21 and 25 (root: unshare).

Every agent in a pid namespace of its own says it is pid 1 in its Hello. The collector names
each JVM by its pid on the host (SO_PEERCRED), and keeps the in-namespace pid beside it.

  namespaces JDK   two JniSleep JVMs, each under `unshare -p -f --mount-proc`: status (JSON and
                   text), top, --pid, /metrics and the recordings' names show two JVMs by their
                   host pids, each with its namespace's pid 1, and all of their pins
  reconnect JDK    one JVM in a namespace; the collector killed and restarted: the JVM comes
                   back under the same host pid (status, metrics, recording names)
"""
import json
import os
import re
import shutil
import signal
import subprocess
import time

from harness import VTPIN, Failure, Run, check, main, report_json, scheduler, skip, tempdir
from test_metrics import MetricsCollector, samples, select, wait_for

NPINS, PIN_MS = 40, 100  # JniSleep: one NATIVE pin per virtual thread, on every JDK


def need_unshare():
    if os.geteuid() != 0:
        skip("needs root (unshare of a pid namespace)")
    unshare = shutil.which("unshare")
    if not unshare or subprocess.run([unshare, "-p", "-f", "--mount-proc", "true"]).returncode:
        skip("unshare -p -f --mount-proc does not work here")
    return unshare


def in_namespace(unshare, run):
    """run's java under `unshare -p -f --mount-proc`: pid 1 of a new pid namespace."""
    run.cmd = [unshare, "-p", "-f", "--mount-proc"] + run.cmd
    return run


def java_under(unshare_pid, timeout=30):
    """The host pid of the java process unshare forked (its child)."""
    children = "/proc/%d/task/%d/children" % (unshare_pid, unshare_pid)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(children) as f:
                for pid in f.read().split():
                    with open("/proc/%s/comm" % pid) as c:
                        if c.read().strip() == "java":
                            return int(pid)
        except OSError:
            pass
        time.sleep(0.05)
    raise Failure("no java process under unshare %d" % unshare_pid)


def namespace_of(pid):
    """(the NSpid line's numbers, the inode of the pid namespace) of a running process."""
    with open("/proc/%d/status" % pid) as f:
        nspid = [int(x) for x in [l for l in f if l.startswith("NSpid:")][0].split()[1:]]
    return nspid, os.stat("/proc/%d/ns/pid" % pid).st_ino


def ask(coll, what, *args, text=False):
    p = subprocess.run([VTPIN, what, "--socket", coll.socket] + ([] if text else ["--json"]) + list(args),
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "vtpin %s %s failed (%d): %s" % (what, " ".join(args), p.returncode, p.stderr))
    return p.stdout if text else json.loads(p.stdout)


def case_namespaces(jdk):
    jdk = int(jdk)
    unshare = need_unshare()
    d = tempdir("vtpin-containers-")
    coll = MetricsCollector(d)
    runs = []
    try:
        coll.start()
        for name in ("a", "b"):
            os.makedirs(os.path.join(d, name))
            r = in_namespace(unshare, Run(jdk, "JniSleep", args=(NPINS, PIN_MS), props=scheduler(2),
                                          agent_opts="collector=" + coll.socket, workdir=os.path.join(d, name)))
            runs.append(r.start())
        hosts = {}
        for r in runs:
            pid = java_under(r.proc.pid)
            nspid, ino = namespace_of(pid)
            check(nspid[0] == pid and nspid[-1] == 1 and len(nspid) >= 2, "java is pid 1 in its namespace: %s" % nspid)
            hosts[pid] = ino
        check(len(set(hosts.values())) == 2 and os.stat("/proc/self/ns/pid").st_ino not in hosts.values(),
              "two pid namespaces of their own: %s" % hosts)
        print("java host pids %s (pid 1 in their namespaces)" % sorted(hosts))
        for r in runs:
            r.wait(120)
        # both ended: every pin of each is in (they linger, disconnected, for a minute)
        st = wait_for(lambda: ask(coll, "status"), lambda s: len(s["jvms"]) == 2 and all(
            j["pins_total"] >= NPINS and not j["connected"] for j in s["jvms"]), 60, "two JVMs with their pins")
        print(json.dumps([{k: j.get(k) for k in ("pid", "ns_pid", "pid_namespace", "pid_source", "pins_total",
                                                  "recording")} for j in st["jvms"]]))
        check(sorted(j["pid"] for j in st["jvms"]) == sorted(hosts),
              "status names the JVMs by their host pids %s: %s" % (sorted(hosts), [j["pid"] for j in st["jvms"]]))
        for j in st["jvms"]:
            check(j.get("ns_pid") == 1, "status keeps the pid in its namespace: %s" % j.get("ns_pid"))
            check(j.get("pid_namespace") == hosts[j["pid"]], "the pid namespace's inode: %s, not %s" % (
                j.get("pid_namespace"), hosts[j["pid"]]))
            check(j.get("pid_source") == "peer", "the host pid is the peer's (SO_PEERCRED): %s" % j.get("pid_source"))
            check(os.path.basename(j["recording"] or "").startswith("%d-" % j["pid"]),
                  "the recording is named by the host pid: %s" % j["recording"])
            check(os.path.exists(j["recording"]), "the recording exists: %s" % j["recording"])
            rep = report_json(j["recording"])
            said = [n["text"] for n in rep["notices"] if n.get("code") == "collector.jvm_host_pid"]
            check(rep["jvm"]["pid"] == 1 and said and "pid %d on the collector's host" % j["pid"] in said[0],
                  "the recording keeps the Hello's pid 1 and says the host's: %s" % rep["notices"])
        text = ask(coll, "status", text=True)
        for pid in hosts:
            check(re.search(r"^JVM %d \(pid 1 in its namespace\)" % pid, text, re.M),
                  "status text names JVM %d and its namespace's pid:\n%s" % (pid, text))
        top = ask(coll, "top", "--once")
        check(sorted(j["pid"] for j in top["jvms"]) == sorted(hosts), "top by host pids: %s" % top["jvms"])
        text = ask(coll, "top", "--once", text=True)
        for pid in hosts:
            check(re.search(r"^JVM %d \(pid 1 in its namespace\)" % pid, text, re.M), "top text names JVM %d:\n%s" % (
                pid, text))
        for pid in hosts:
            one = ask(coll, "status", "--pid", str(pid))
            check([j["pid"] for j in one["jvms"]] == [pid], "status --pid %d matches exactly it: %s" % (
                pid, [j["pid"] for j in one["jvms"]]))
            one = ask(coll, "top", "--once", "--pid", str(pid))
            check([j["pid"] for j in one["jvms"]] == [pid], "top --pid %d matches exactly it" % pid)
        check(ask(coll, "status", "--pid", "1")["jvms"] == [], "--pid 1 (a namespace's pid) matches none")
        s = samples(coll.scrape())
        jvms = select(s, "vtpin_collector_jvms")
        check(jvms and jvms[0][1] == len(st["jvms"]), "vtpin_collector_jvms %s = the JVMs status lists (%d)" % (
            jvms, len(st["jvms"])))
        for pid in hosts:
            native = sum(v for _, v in select(s, "jvm_threads_virtual_pinned_seconds_count", jvm=pid, reason="NATIVE"))
            check(native >= NPINS, "the metrics of jvm=\"%d\" hold its %d pins: %s" % (pid, NPINS, native))
            sites = select(s, "vtpin_pin_site_seconds_total", jvm=pid)
            check(any("JniSleep" in l["site"] for l, _ in sites), "its pin site: %s" % sites)
            check(sum(v for _, v in select(s, "vtpin_carriers", jvm=pid)) >= 1, "its carriers are counted")
            info = select(s, "vtpin_jvm_info", jvm=pid)
            check(info and info[0][0].get("ns_pid") == "1", "vtpin_jvm_info says its namespace's pid: %s" % info)
        check(not select(s, "vtpin_jvm_connected", jvm=1), "no series is named by a namespace's pid 1")
    finally:
        for r in runs:
            r.kill()
        coll.stop()


def case_reconnect(jdk):
    """The JVM's name is its host pid whichever collector it talks to: kill the collector, start a
    new one, and the reconnected JVM is the same host pid (status, metrics, recordings)."""
    jdk = int(jdk)
    unshare = need_unshare()
    d = tempdir("vtpin-containers-")
    coll = MetricsCollector(d)
    stop = os.path.join(d, "stop")
    r = None
    try:
        coll.start()
        os.makedirs(os.path.join(d, "jvm"))
        r = in_namespace(unshare, Run(jdk, "ReproLoop", args=(120, stop, 2, 50), props=scheduler(2),
                                      agent_opts="collector=" + coll.socket, workdir=os.path.join(d, "jvm"))).start()
        pid = java_under(r.proc.pid)
        st = wait_for(lambda: ask(coll, "status"), lambda s: any(j["connected"] for j in s["jvms"]), 60,
                      "the JVM connected")
        check([j["pid"] for j in st["jvms"]] == [pid], "named by its host pid %d: %s" % (
            pid, [j["pid"] for j in st["jvms"]]))
        start_ns = st["jvms"][0]["start_unix_ns"]
        coll.kill()  # SIGKILL
        coll.start()
        st = wait_for(lambda: ask(coll, "status"), lambda s: any(j["connected"] and j["connection"] >= 1
                                                                for j in s["jvms"]), 60, "the JVM reconnected")
        j = st["jvms"][0]
        check(len(st["jvms"]) == 1 and j["pid"] == pid and j.get("ns_pid") == 1 and j["start_unix_ns"] == start_ns,
              "the same JVM, by the same host pid %d: %s" % (pid, st["jvms"]))
        sessions = os.path.join(d, "sessions")
        names = sorted(os.listdir(sessions))
        check("%d-%d-0.vtp" % (pid, start_ns) in names and any(
            n.startswith("%d-%d-" % (pid, start_ns)) and not n.endswith("-0.vtp") for n in names),
            "both connections' recordings are named by the host pid: %s" % names)
        s = wait_for(lambda: samples(coll.scrape()), lambda s: select(s, "vtpin_jvm_connected", jvm=pid), 30,
                     "the JVM's series")
        check(select(s, "vtpin_jvm_connected", jvm=pid)[0][1] == 1, "connected again under jvm=\"%d\"" % pid)
        open(stop, "w").close()
        r.wait(60)
    finally:
        if r:
            r.kill()
        coll.stop()


if __name__ == "__main__":
    raise SystemExit(main({
        "namespaces": case_namespaces,
        "reconnect": case_reconnect,
    }))
