#!/usr/bin/env python3
"""The collector's Prometheus metrics (`vtpin collector --metrics`), with real JVMs
and the real agent: JDK 21 Repro (MONITOR pins) and JDK 25 JniSleep (NATIVE pins).

  promtool JDK     /metrics while the JVM runs and after it ended: accepted by
                   `promtool check metrics`, with the pins' count, time, reason,
                   site and app as the fixture makes them
  prometheus JDK   a real Prometheus server scrapes the collector every second;
                   its HTTP API returns the pins of the JVM's pid, and the two
                   PromQL queries of docs/live.md answer
  alert JDK        every carrier held (21 WaitPin, 25 NativeBlock): carrier gauges,
                   held count and the starvation alert, cleared when the JVM dies
  listen           (no JVM) loopback only unless --metrics-listen-any; bad
                   addresses are usage errors; a busy port fails to start
  slow_clients     (no JVM) 40 clients trickling a header line every 4 s and 100
                   idle ones, all reconnecting when cut, hold on for 16 s: every
                   scrape (urllib, 3 s timeout) still answers 200 with the metrics,
                   and no slow client is held longer than the request bound
  slow_cutoff      (no JVM) a lone client trickling a header line every second,
                   and an idle one, are cut off at the request bound (5 s after
                   accept); a slow request finished within it is answered; a
                   keep-alive connection gets the bound anew for each request
"""
import http.client
import json
import multiprocessing
import os
import random
import re
import selectors
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from collector_fixture import CollectorProcess, http_get  # noqa: F401 (http_get: for importers)
from harness import VTPIN, Failure, Run, check, main, scheduler, skip, tempdir, for_jdk

# fixture, args, parallelism, pins it makes, reason, site substring, least ms per pin
FIXTURES = {
    21: ("Repro", (), 2, 100, "MONITOR", "Repro.settle", 200),
    25: ("JniSleep", (60, 200), 2, 60, "NATIVE", "JniSleep", 200),
}


def need(tool):
    path = shutil.which(tool)
    if not path:
        skip("%s not installed (Debian package prometheus; scripts/setup.sh installs it)" % tool)
    return path


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class MetricsCollector(CollectorProcess):
    """A collector with --metrics on a free loopback port (port 0: it says which in its log)."""

    def __init__(self, d, listen="127.0.0.1:0", extra=(), sessions=None):
        super().__init__(d, *extra, sessions=sessions, metrics=listen, log_mode="w",  # one collector per directory
                         ready="socket_file", start_timeout=15, stop_timeout=15)

    def log_text(self):
        return self.log()


def samples(body):
    """{(name, frozenset(labels.items())): value} from an exposition (values are numbers here)."""
    out = {}
    for line in body.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
        check(m, "not a sample line: %r" % line)
        labels = {}
        for k, v in re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""):
            labels[k] = v.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
        out[(m.group(1), frozenset(labels.items()))] = float(m.group(3))
    return out


def select(s, name, **labels):
    """[(labels dict, value)] of the samples of name whose labels include the given ones."""
    want = {k: str(v) for k, v in labels.items()}
    return [(dict(k[1]), v) for k, v in s.items() if k[0] == name and want.items() <= dict(k[1]).items()]


def promtool_check(body, where):
    p = subprocess.run([need("promtool"), "check", "metrics"], input=body, capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        raise Failure("promtool check metrics rejects the exposition %s (rc %d):\n%s%s\n--- exposition:\n%s" %
                      (where, p.returncode, p.stdout, p.stderr, body))


def start_fixture(jdk, coll, workdir):
    fixture, args, par, _, _, _, _ = for_jdk(FIXTURES, jdk)
    os.makedirs(workdir, exist_ok=True)
    return Run(jdk, fixture, args=args, props=scheduler(par), agent_opts="collector=" + coll.socket,
               workdir=workdir).start()


def wait_for(what, cond, timeout, describe):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = what()
        if cond(last):
            return last
        time.sleep(0.2)
    raise Failure("timed out waiting for %s; last: %s" % (describe, str(last)[:3000]))


def check_pins(s, pid, jdk, final):
    fixture, _, _, npins, reason, site, least_ms = for_jdk(FIXTURES, jdk)
    counts = select(s, "jvm_threads_virtual_pinned_seconds_count", jvm=pid)
    check(counts, "no pinned count for jvm %d" % pid)
    by_reason = {}
    for labels, v in counts:
        check(labels["app"] == fixture, "app label is the main class: %s" % labels)
        check(labels.get("origin") in ("app", "jdk"), "an origin label, the reports' rule: %s" % labels)
        by_reason[labels["reason"]] = by_reason.get(labels["reason"], 0) + v  # one series per origin
    app_own = sum(v for l, v in counts if l["reason"] == reason and l["origin"] == "app")
    check(app_own > 0, "the fixture's pins are the application's (origin app): %s" % counts)
    check(by_reason.get(reason, 0) > 0, "the pins of %s are %s: %s" % (fixture, reason, by_reason))
    count = sum(v for _, v in counts)
    total = sum(v for _, v in select(s, "jvm_threads_virtual_pinned_seconds_sum", jvm=pid))
    sites = select(s, "vtpin_pin_site_seconds_total", jvm=pid)
    check(any(site in l["site"] for l, _ in sites), "the fixture's pin site is named: %s" % sites)
    # the fixture's own site holds its pins' time (the JDK's few short pins have sites of their own)
    mine = sum(v for l, v in sites if site in l["site"])
    least = (npins if final else 1) * least_ms / 1000.0 * 0.9
    check(mine >= least, "%s's site holds at least %.1f s: %.3f s (%d pins in all)" % (fixture, least, mine, count))
    check(abs(sum(v for _, v in sites) - total) < 1e-6, "site totals add up to the pinned total: %s vs %s" %
          (sites, total))
    states = {l["state"]: v for l, v in select(s, "vtpin_carriers", jvm=pid)}
    check(set(states) == {"idle", "busy", "pinned", "native_blocked"}, "carrier states: %s" % states)
    check(sum(states.values()) >= 1, "carriers counted: %s" % states)
    kinds = {l["kind"]: v for l, v in select(s, "vtpin_events_dropped_total", jvm=pid)}
    check("events" in kinds and "collector" in kinds, "drop kinds: %s" % kinds)
    check(select(s, "vtpin_starvation_alert", jvm=pid), "alert gauge for the JVM")
    if final:
        # The JDK can add a few short pins of its own (e.g. JDK 21's method-handle linkage contended by
        # virtual threads starting at once, as MONITOR or MONITOR_ENTER; a CRITICAL_SECTION on 25 under
        # the fixture's own native frame, seen under ASan): they are counted, never in place of the
        # fixture's. Those of the fixture's own reason must have sites of their own.
        extra = count - npins
        others = [l["site"] for l, _ in sites if site not in l["site"]]
        check(by_reason[reason] >= npins and 0 <= extra <= 10 and (by_reason[reason] == npins or others),
              "%s makes %d %s pins: the metrics count %s (sites %s)" % (fixture, npins, reason, by_reason, sites))
        check(kinds["events"] == 0, "nothing dropped: %s" % kinds)
    return count


def case_promtool(jdk):
    jdk = int(jdk)
    need("promtool")
    d = tempdir(prefix="vtpin-metrics-test-")
    coll = MetricsCollector(d)
    r = None
    try:
        coll.start()
        promtool_check(coll.scrape(), "of a collector with no JVM")
        r = start_fixture(jdk, coll, os.path.join(d, "jvm"))
        pid = r.proc.pid
        # scraped while the JVM runs: pins already counted
        # its site and its reason: a JDK pin at the fixture's site (a CRITICAL_SECTION on 25, seen under ASan) may come first
        body = wait_for(coll.scrape, lambda b: any(for_jdk(FIXTURES, jdk)[5] in l["site"] and v > 0 for l, v in select(
            samples(b), "vtpin_pin_site_seconds_total", jvm=pid)) and any(
            l["reason"] == for_jdk(FIXTURES, jdk)[4] and v > 0 for l, v in select(
                samples(b), "jvm_threads_virtual_pinned_seconds_count", jvm=pid)),
            90, "the first pins of jvm %d at its site" % pid)
        running = r.proc.poll() is None
        promtool_check(body, "while the JVM runs")
        s = samples(body)
        first = check_pins(s, pid, jdk, final=False)
        if running:
            check(select(s, "vtpin_jvm_connected", jvm=pid)[0][1] == 1, "connected while it runs")
        st = subprocess.run([VTPIN, "status", "--socket", coll.socket, "--json"], capture_output=True, text=True,
                            timeout=30)
        apps = [j.get("app") for j in json.loads(st.stdout)["jvms"] if j["pid"] == pid]
        check(apps == [for_jdk(FIXTURES, jdk)[0]], "vtpin status names the app: %s" % apps)
        r.wait(120)
        # after it ended: lingering, every pin counted once, counters never went down
        body = wait_for(coll.scrape, lambda b: select(samples(b), "vtpin_jvm_connected", jvm=pid) and
                        select(samples(b), "vtpin_jvm_connected", jvm=pid)[0][1] == 0, 30, "the disconnect")
        promtool_check(body, "after the JVM ended")
        s = samples(body)
        check(check_pins(s, pid, jdk, final=True) >= first, "the pinned count only grows")
        # not the metrics: 404; not GET: 405
        status, _, _ = http_get("http://127.0.0.1:%d/" % coll.port)
        check(status == 404, "GET / answers 404, not %d" % status)
        status, headers, _ = http_get(coll.url, method="POST")
        check(status == 405 and "GET" in headers.get("Allow", ""), "POST /metrics answers 405, not %d" % status)
    finally:
        if r:
            r.kill()
        coll.stop()
        shutil.rmtree(d, ignore_errors=True)


def case_alert(jdk):
    """Every carrier held (21: WaitPin hangs in Object.wait; 25: NativeBlock sleeps in C): the
    carrier gauges, the held count and the starvation alert as Prometheus sees them."""
    jdk = int(jdk)
    need("promtool")
    if jdk < 24:
        fixture, args, props, state = "WaitPin", (), scheduler(2, 2), "pinned"
    else:
        fixture, args, props, state = "NativeBlock", ("nanosleep", 2, 8000), scheduler(2), "native_blocked"
    d = tempdir(prefix="vtpin-metrics-alert-")
    coll = MetricsCollector(d, extra=("--alert-after", "500ms"))
    r = None
    try:
        coll.start()
        os.makedirs(os.path.join(d, "jvm"))
        r = Run(jdk, fixture, args=args, props=props, agent_opts="collector=" + coll.socket,
                workdir=os.path.join(d, "jvm")).start()
        pid = r.proc.pid

        def raised(body):
            s = samples(body)
            alert = select(s, "vtpin_starvation_alert", jvm=pid)
            return alert and alert[0][1] == 1
        body = wait_for(coll.scrape, raised, 60, "the starvation alert of jvm %d" % pid)
        promtool_check(body, "during a starvation alert")
        s = samples(body)
        states = {l["state"]: v for l, v in select(s, "vtpin_carriers", jvm=pid)}
        check(states[state] == 2, "both carriers %s: %s" % (state, states))
        held = select(s, "vtpin_carriers_held", jvm=pid)
        check(held and held[0][1] == 2, "two carriers held past --alert-after: %s" % held)
        check(select(s, "vtpin_carrier_held_ratio", jvm=pid)[0][1] > 0, "held ratio above 0")
        check(select(s, "vtpin_jvm_info", jvm=pid, app=fixture), "app is %s" % fixture)
        r.kill()  # SIGKILL: the alert is cleared when the JVM goes
        body = wait_for(coll.scrape, lambda b: select(samples(b), "vtpin_jvm_connected", jvm=pid)[0][1] == 0, 30,
                        "the disconnect")
        check(select(samples(body), "vtpin_starvation_alert", jvm=pid)[0][1] == 0, "alert cleared on disconnect")
        promtool_check(body, "after the JVM was killed")
    finally:
        if r:
            r.kill()
        coll.stop()
        shutil.rmtree(d, ignore_errors=True)


def prom_query(port, query):
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": query}))
    status, _, body = http_get(url)
    check(status == 200, "Prometheus query %s: %d %s" % (query, status, body[:500]))
    reply = json.loads(body)
    check(reply["status"] == "success", "query %s: %s" % (query, reply))
    return reply["data"]["result"]


def case_prometheus(jdk):
    jdk = int(jdk)
    prometheus = need("prometheus")
    fixture, _, _, _, reason, _, _ = for_jdk(FIXTURES, jdk)
    d = tempdir(prefix="vtpin-prometheus-test-")
    coll = MetricsCollector(d)
    r = prom = None
    try:
        coll.start()
        cfg = os.path.join(d, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: vtpin\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % coll.port)
        port = free_port()
        prom_log = open(os.path.join(d, "prometheus.log"), "w")
        prom = subprocess.Popen([prometheus, "--config.file=" + cfg, "--storage.tsdb.path=" + os.path.join(d, "tsdb"),
                                 "--web.listen-address=127.0.0.1:%d" % port], stdout=prom_log, stderr=prom_log,
                                cwd=d)
        def ready():
            try:
                return http_get("http://127.0.0.1:%d/-/ready" % port, timeout=2)[0]
            except OSError:  # not listening yet
                return None
        wait_for(ready, lambda st: st == 200 or prom.poll() is not None, 60, "Prometheus to be ready")
        check(prom.poll() is None, "prometheus exited: see " + os.path.join(d, "prometheus.log"))
        r = start_fixture(jdk, coll, os.path.join(d, "jvm"))
        pid = r.proc.pid
        r.wait(120)
        # the pins of this JVM, as Prometheus stored them
        res = wait_for(lambda: prom_query(port, 'jvm_threads_virtual_pinned_seconds_count{jvm="%d"}' % pid),
                       lambda res: res and sum(float(x["value"][1]) for x in res) > 0, 60,
                       "Prometheus to return the pins of jvm %d" % pid)
        for x in res:
            check(x["metric"]["app"] == fixture and x["metric"]["job"] == "vtpin", "labels as stored: %s" % x["metric"])
        check(any(x["metric"]["reason"] == reason for x in res), "the fixture's reason %s stored: %s" % (reason, res))
        # docs/live.md's queries
        q1 = 'sum by (app, reason) (rate(jvm_threads_virtual_pinned_seconds_sum[5m]))'
        res = wait_for(lambda: prom_query(port, q1),
                       lambda res: any(x["metric"].get("app") == fixture and float(x["value"][1]) > 0 for x in res),
                       60, "pinned seconds per second by app and reason")
        check(any(x["metric"].get("reason") == reason and float(x["value"][1]) > 0 for x in res
                  if x["metric"].get("app") == fixture), "reason of the rate: %s" % res)
        q2 = 'max by (jvm, app) (vtpin_carrier_held_ratio)'
        res = wait_for(lambda: prom_query(port, q2),
                       lambda res: any(x["metric"].get("jvm") == str(pid) for x in res), 30,
                       "the held ratio of jvm %d" % pid)
        v = [float(x["value"][1]) for x in res if x["metric"].get("jvm") == str(pid)][0]
        check(0 < v <= 1, "held ratio of a pinning JVM in (0, 1]: %s" % v)
        up = prom_query(port, 'up{job="vtpin"}')
        check(up and float(up[0]["value"][1]) == 1, "the scrape target is up: %s" % up)
    finally:
        if r:
            r.kill()
        if prom and prom.poll() is None:
            prom.terminate()
            try:
                prom.wait(timeout=30)
            except subprocess.TimeoutExpired:
                prom.kill()
                prom.wait()
        coll.stop()
        shutil.rmtree(d, ignore_errors=True)


def run_collector(d, *args, timeout=10):
    return subprocess.run([VTPIN, "collector", "--socket", os.path.join(d, "c.sock"), "--dir",
                           os.path.join(d, "s")] + list(args), capture_output=True, text=True, timeout=timeout)


def case_listen():
    d = tempdir(prefix="vtpin-metrics-listen-")
    coll = None
    busy = None
    try:
        # not loopback without the flag: a usage error naming the flag, nothing started
        for addr in ("0.0.0.0:%d" % free_port(), "[::]:%d" % free_port(), "192.0.2.1:9400"):
            p = run_collector(d, "--metrics", addr)
            check(p.returncode == 2, "--metrics %s without --metrics-listen-any: exit %d, %s" %
                  (addr, p.returncode, p.stderr))
            check("not a loopback address" in p.stderr and "--metrics-listen-any" in p.stderr,
                  "the refusal says why and what to do: %s" % p.stderr)
            check(not os.path.exists(os.path.join(d, "c.sock")), "nothing started")
        for bad in ("127.0.0.1", "127.0.0.1:65536", "host.example:80", "127.0.0.1:x"):
            p = run_collector(d, "--metrics", bad)
            check(p.returncode == 2 and "--metrics" in p.stderr, "--metrics %s: exit %d, %s" %
                  (bad, p.returncode, p.stderr))
        p = run_collector(d, "--metrics-listen-any")
        check(p.returncode == 2 and "needs --metrics" in p.stderr, "the flag alone: %d %s" % (p.returncode, p.stderr))
        # a port in use: the collector does not start, and says so
        busy = socket.socket()
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        p = run_collector(d, "--metrics", "127.0.0.1:%d" % busy.getsockname()[1])
        check(p.returncode == 1 and "cannot listen on 127.0.0.1:%d" % busy.getsockname()[1] in p.stderr,
              "busy port: exit %d, %s" % (p.returncode, p.stderr))
        # IPv6 loopback, where the host has it
        if socket.has_ipv6:
            try:
                probe = socket.socket(socket.AF_INET6)
                probe.bind(("::1", 0))
                probe.close()
                v6 = MetricsCollector(d, listen="[::1]:0")
                try:
                    v6.start()
                    check(v6.host == "[::1]", "listens on [::1]: %s" % v6.host)
                    status, _, body = http_get("http://[::1]:%d/metrics" % v6.port)
                    check(status == 200 and "vtpin_collector_jvms 0" in body, "metrics over IPv6: %d" % status)
                finally:
                    v6.stop()
            except OSError:
                print("no IPv6 loopback here: [::1] not tried")
        # with the flag, any address: reachable over loopback too
        coll = MetricsCollector(d, listen="0.0.0.0:0", extra=("--metrics-listen-any",)).start()
        check(coll.host == "0.0.0.0", "listens where asked: %s" % coll.host)
        body = coll.scrape()
        check("vtpin_collector_jvms 0" in body, "an empty collector's metrics: %s" % body[:500])
        if shutil.which("promtool"):
            promtool_check(body, "of a collector with no JVM")
    finally:
        if busy:
            busy.close()
        if coll:
            coll.stop()
        shutil.rmtree(d, ignore_errors=True)

# The metrics server's bound on each request (collector/metrics_http.c): 5 s from accept, or from the end of the
# previous answer on a keep-alive connection, to the end of the answer. A broken bound holds a client for good.
REQUEST_BOUND_S = 5
CUT_SLACK_S = 3  # the collector's 100 ms tick, a loaded machine, ASan


class Attackers(multiprocessing.Process):
    """Slow and idle clients of the metrics port that hold on: each one the server cuts reconnects after
    0.5 to 1.5 pause s. A slow one sends `GET /metrics HTTP/1.1` and then one header line every trickle s;
    an idle one sends nothing. Runs until stop(); records how long each connection lived before the server
    closed it (cut, answered, open_ages: read after stop()).

    A process of its own: as a thread of the test's it held the GIL while the scraper's connect returned,
    and the scraper sent its request ms after its connection was accepted (a 3.7 ms connect, then a cut).
    Reconnects spread over a pause: clients cut together that reconnect together come as one burst, under
    which the server, whose room for one address goes to the newest, cuts every connection of it about
    1 ms after its accept, a scrape whose request was late among them (metrics_http.c says that limit)."""

    def __init__(self, port, slow, idle, trickle=4.0, pause=0.5):
        super().__init__(daemon=True)
        self.addr = ("127.0.0.1", port)
        self.kinds = ["slow"] * slow + ["idle"] * idle
        self.trickle, self.pause = trickle, pause
        self.halt = multiprocessing.Event()
        self._connected = multiprocessing.Value("i", 0)  # connections whose connect completed, ever
        self._results, self._sender = multiprocessing.Pipe(duplex=False)
        self.cut = {"slow": [], "idle": []}  # lifetimes (s) of the connections the server closed
        self.answered = 0  # connections that received bytes (a slow request is never complete: none should)
        self.open_ages = []  # at stop: the ages of the slow connections still open
        self.error = None

    @property
    def connected(self):
        return self._connected.value

    def run(self):
        self.lock = threading.Lock()
        self.random = random.Random(len(self.kinds))  # the same spread every run
        try:
            self._run()
        except Exception as e:  # reported by stop(): a broken attacker must not pass for a good server
            self.error = "%s: %s" % (type(e).__name__, e)
        self._sender.send((self.cut, self.answered, self.open_ages, self.error))

    def _open(self, sel, kind, now):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(self.addr)
        sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE,
                     {"kind": kind, "t0": None, "next": None, "n": 0, "got": 0, "opened": now})

    def _close(self, sel, s, st, now, pending):
        sel.unregister(s)
        s.close()
        if st["t0"] is not None:
            with self.lock:
                self.cut[st["kind"]].append(now - st["t0"])
        pending.append((now + self.pause * self.random.uniform(0.5, 1.5), st["kind"]))

    def _run(self):
        sel = selectors.DefaultSelector()
        now = time.monotonic()
        pending = [(now, k) for k in self.kinds]
        while not self.halt.is_set():
            now = time.monotonic()
            due = [p for p in pending if p[0] <= now]
            pending = [p for p in pending if p[0] > now]
            for _, kind in due:
                self._open(sel, kind, now)
            for key, events in sel.select(timeout=0.05):
                s, st = key.fileobj, key.data
                now = time.monotonic()
                if st["t0"] is None and events & selectors.EVENT_WRITE:
                    if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                        self._close(sel, s, st, now, pending)
                        continue
                    st["t0"] = now
                    with self._connected.get_lock():
                        self._connected.value += 1
                    sel.modify(s, selectors.EVENT_READ, st)
                    if st["kind"] == "slow":
                        try:
                            s.send(b"GET /metrics HTTP/1.1\r\n")
                        except OSError:
                            self._close(sel, s, st, now, pending)
                            continue
                        st["next"] = now + self.trickle
                    continue
                if events & selectors.EVENT_READ:
                    try:
                        data = s.recv(65536)
                    except OSError:  # reset: closed too
                        data = b""
                    if data:
                        if not st["got"]:
                            with self.lock:
                                self.answered += 1
                        st["got"] += len(data)
                    else:
                        self._close(sel, s, st, now, pending)
            now = time.monotonic()
            for key in list(sel.get_map().values()):
                s, st = key.fileobj, key.data
                if st["kind"] == "slow" and st["next"] is not None and now >= st["next"]:
                    st["n"] += 1
                    st["next"] = now + self.trickle
                    try:
                        s.send(b"X-Hold-%d: on\r\n" % st["n"])
                    except OSError:
                        self._close(sel, s, st, now, pending)
        now = time.monotonic()
        for key in list(sel.get_map().values()):
            s, st = key.fileobj, key.data
            if st["kind"] == "slow" and st["t0"] is not None:
                self.open_ages.append(now - st["t0"])
            sel.unregister(s)
            s.close()
        sel.close()

    def _collect(self, timeout):
        if self._results.poll(timeout):
            self.cut, self.answered, self.open_ages, self.error = self._results.recv()

    def failure(self):
        """Why the clients stopped before stop(), or None while they run."""
        if self.is_alive():
            return None
        self._collect(1)
        return self.error or "exited with %s" % self.exitcode

    def stop(self):
        self.halt.set()
        self._collect(10)
        self.join(timeout=10)
        check(not self.is_alive(), "the slow clients did not stop")
        check(self.error is None, "the slow clients failed: %s" % self.error)


def check_exposition(status, headers, body, where):
    check(status == 200, "%s: %d %s" % (where, status, body[:300]))
    check(headers.get("Content-Type", "").startswith("text/plain; version=0.0.4"),
          "%s: exposition content type %s" % (where, headers.get("Content-Type")))
    check(select(samples(body), "vtpin_collector_jvms") == [({}, 0.0)],
          "%s: not the metrics of an empty collector: %s" % (where, body[:500]))


def case_slow_clients():
    d = tempdir(prefix="vtpin-metrics-slow-")
    coll = MetricsCollector(d)
    attackers = None
    try:
        coll.start()
        check_exposition(*http_get(coll.url, timeout=3), "before the slow clients")
        attackers = Attackers(coll.port, slow=40, idle=100)
        attackers.start()
        deadline = time.monotonic() + 5  # a full listen backlog drops connects: then some are still trying
        while attackers.connected < 140 and time.monotonic() < deadline:
            check(attackers.is_alive(), "the slow clients failed: %s" % attackers.failure())
            time.sleep(0.05)
        print("%d of the 140 slow and idle clients connected" % attackers.connected)
        # they hold on (reconnecting when cut) while a scraper with a 3 s timeout asks 8 times over 16 s:
        # past the request bound, so the server has cut the first of them and every scrape had to get its turn
        results, bodies = [], []
        start = time.monotonic()
        for i in range(8):
            t = time.monotonic()
            try:
                status, headers, body = http_get(coll.url, timeout=3)
                results.append((t - start, time.monotonic() - t, status, headers, body))
                bodies.append(body)
            except OSError as e:  # urllib.error.URLError and socket.timeout are OSErrors
                results.append((t - start, time.monotonic() - t, None, None, "%s: %s" % (type(e).__name__, e)))
            time.sleep(max(0.0, start + 2 * (i + 1) - time.monotonic()))
        check(attackers.is_alive(), "the slow clients failed: %s" % attackers.failure())
        attackers.stop()
        lines = ["  at %4.1f s: %s after %.2f s" % (at, status if status else body, took)
                 for at, took, status, _, body in results]
        failed = [r for r in results if r[2] != 200]
        check(not failed, "%d of %d scrapes failed while 40 slow and 100 idle clients held on:\n%s" %
              (len(failed), len(results), "\n".join(lines)))
        for at, _, status, headers, body in results:
            check_exposition(status, headers, body, "the scrape at %.1f s" % at)
        if shutil.which("promtool"):
            promtool_check(bodies[-1], "scraped among slow clients")
        print("scrapes among slow clients:\n" + "\n".join(lines))
        cut_slow, cut_idle = attackers.cut["slow"], attackers.cut["idle"]
        print("slow clients cut: %d (longest held %.1f s), idle clients cut: %d (longest %.1f s), still open: %d" %
              (len(cut_slow), max(cut_slow, default=0), len(cut_idle), max(cut_idle, default=0),
               len(attackers.open_ages)))
        held = max(cut_slow + attackers.open_ages, default=0)
        check(held <= REQUEST_BOUND_S + CUT_SLACK_S,
              "a slow client held its connection %.1f s, past the %d s request bound" % (held, REQUEST_BOUND_S))
        check(attackers.answered == 0, "%d unfinished requests got bytes back" % attackers.answered)
        check(coll.proc.poll() is None, "the collector died: %s" % coll.log_text()[-2000:])
        check_exposition(*http_get(coll.url, timeout=3), "after the slow clients left")
    finally:
        if attackers and attackers.is_alive():
            attackers.terminate()
            attackers.join(timeout=10)
        coll.stop()
        shutil.rmtree(d, ignore_errors=True)


def held_for(s, trickle, limit):
    """Seconds until the server closes s, sending a header line every trickle s (None: nothing), at most limit s.
    (seconds, bytes received); seconds is None if still open at limit."""
    t0 = time.monotonic()
    got = b""
    n = 0
    next_send = t0 + trickle if trickle else None
    while time.monotonic() - t0 < limit:
        s.settimeout(0.1)
        try:
            data = s.recv(65536)
            if not data:
                return time.monotonic() - t0, got
            got += data
        except socket.timeout:
            pass
        except OSError:  # reset
            return time.monotonic() - t0, got
        if next_send and time.monotonic() >= next_send:
            n += 1
            next_send += trickle
            try:
                s.send(b"X-Hold-%d: on\r\n" % n)
            except OSError:
                return time.monotonic() - t0, got
    return None, got


def case_slow_cutoff():
    d = tempdir(prefix="vtpin-metrics-cutoff-")
    coll = MetricsCollector(d)
    socks = []
    try:
        coll.start()
        limit = REQUEST_BOUND_S + CUT_SLACK_S + 4  # past the old 10 s idle timeout: it cuts an idle client too
        # a slow request: a header line every second, so no idle timeout ever fires; only the total bound can cut it
        slow = socket.create_connection(("127.0.0.1", coll.port), timeout=5)
        socks.append(slow)
        slow.sendall(b"GET /metrics HTTP/1.1\r\n")
        took, got = held_for(slow, 1.0, limit)
        check(took is not None, "a client trickling a header line every second still held on after %d s" % limit)
        check(took <= REQUEST_BOUND_S + CUT_SLACK_S,
              "the trickling client was cut after %.1f s, past the %d s bound" % (took, REQUEST_BOUND_S))
        check(took >= REQUEST_BOUND_S - 1, "the trickling client was cut after %.1f s, before the %d s bound" %
              (took, REQUEST_BOUND_S))
        check(got == b"", "an unfinished request got an answer: %r" % got[:200])
        print("a trickling client is cut after %.1f s" % took)
        # an idle connection: cut at the same bound
        idle = socket.create_connection(("127.0.0.1", coll.port), timeout=5)
        socks.append(idle)
        took, got = held_for(idle, None, limit)
        check(took is not None and took <= REQUEST_BOUND_S + CUT_SLACK_S,
              "an idle client held on %s s, past the %d s bound" % ("%.1f" % took if took else "> %d" % limit,
                                                                    REQUEST_BOUND_S))
        print("an idle client is cut after %.1f s" % took)
        # a slow request that ends within the bound is answered
        late = socket.create_connection(("127.0.0.1", coll.port), timeout=5)
        socks.append(late)
        late.sendall(b"GET /metrics HTTP/1.1\r\n")
        time.sleep(2)
        late.sendall(b"Host: 127.0.0.1\r\nConnection: close\r\n\r\n")
        got = b""
        try:
            while True:
                data = late.recv(65536)
                if not data:
                    break
                got += data
        except OSError as e:
            raise Failure("a request sent in 2 s: %s: %s after %r" % (type(e).__name__, e, got[:300]))
        head, _, body = got.partition(b"\r\n\r\n")
        check(head.startswith(b"HTTP/1.1 200"), "a request sent in 2 s: %r" % got[:300])
        check(b"vtpin_collector_jvms 0" in body, "a request sent in 2 s: not the metrics: %r" % body[:300])
        # keep-alive: each request has the bound anew, counted from the end of the previous answer
        conn = http.client.HTTPConnection("127.0.0.1", coll.port, timeout=5)
        first_sock = None
        t0 = time.monotonic()
        for i in range(3):
            time.sleep(max(0.0, t0 + 3 * i - time.monotonic()))
            try:
                conn.request("GET", "/metrics")
                r = conn.getresponse()
                body = r.read().decode()
            except (http.client.HTTPException, OSError) as e:
                raise Failure("keep-alive request %d at %.1f s: %s: %s (cut before its own bound?)" %
                              (i, time.monotonic() - t0, type(e).__name__, e))
            check_exposition(r.status, r.headers, body, "keep-alive request %d at %.1f s" % (i, time.monotonic() - t0))
            if first_sock is None:
                first_sock = conn.sock
            check(conn.sock is first_sock, "request %d at %.1f s needed a new connection: the bound is per "
                  "connection, not per request" % (i, time.monotonic() - t0))
        conn.close()
        check(coll.proc.poll() is None, "the collector died: %s" % coll.log_text()[-2000:])
    finally:
        for s in socks:
            s.close()
        coll.stop()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main({
        "promtool": case_promtool,
        "prometheus": case_prometheus,
        "listen": case_listen,
        "alert": case_alert,
        "slow_clients": case_slow_clients,
        "slow_cutoff": case_slow_cutoff,
    }))
