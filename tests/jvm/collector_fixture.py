"""One real `vtpin collector` for every test file (issue 35).

CollectorProcess starts `vtpin collector` with its socket, its --dir and any extra arguments
(--metrics, --kernel, alert options, --allow-uid, ...), optionally under a command prefix, with an
environment, a working directory or a preexec_fn (to run it as another user); waits, against a
deadline, until it is ready; asks it through the real `vtpin status` / `vtpin top --socket` (JSON
or text, as the collector's user by default); polls until a condition holds; scrapes its metrics
when it listens for them; reads its log; stops or kills it. As a context manager it always stops it.

Imports nothing of harness.py (test_collector_daemon.py runs without it); harness.py takes its
Failure from here, so one Failure serves every test file.
"""
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

BUILD = os.environ.get("VTPIN_BUILD", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build"))
VTPIN = os.path.join(BUILD, "vtpin")


class Failure(Exception):
    pass


def http_get(url, method="GET", timeout=10):
    """(status, headers, body) of a request; HTTP errors are answers too."""
    req = urllib.request.Request(url, method=method, data=b"x" if method == "POST" else None)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def socket_fds(pid):
    """The sockets a process holds open: the collector's listeners and the connections it accepted."""
    n = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            n += os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith("socket:")
        except OSError:  # closed meanwhile
            pass
    return n


class CollectorProcess:
    """A real `vtpin collector`.

    d            its directory: the socket, the sessions directory and the log default to files in it
    args         extra arguments, after --socket, --dir and --metrics
    socket       the socket path (default d/collector.sock); "default": no --socket, the collector's own
    sessions     its --dir (default d/sessions)
    log_path     where its stdout and stderr go (default d/collector.log); log_mode "a" or "w"
    metrics      --metrics LISTEN; start() then waits for the port it says and scrape() reads it
    prefix       a command before vtpin (e.g. a wrapper); env, cwd, preexec_fn for the collector and,
                 unless given to ask()/run(), for the `vtpin status|top` asking it
    ready        what start() waits for: "answers" (a connect to the socket succeeds; a killed
                 collector leaves its socket file behind), "socket_file" (the file exists) or
                 "listening" (its log says "listening on"); always against start_timeout seconds
    """

    def __init__(self, d, *args, socket=None, sessions=None, log_path=None, log_mode="a", metrics=None, prefix=(),
                 env=None, cwd=None, preexec_fn=None, ready="answers", start_timeout=10, stop_timeout=20,
                 poll_interval=0.05, jvms="agents"):
        self.dir = d
        self.default_socket = socket == "default"
        self.socket = None if self.default_socket else (socket or os.path.join(d, "collector.sock"))
        self.sessions = sessions or os.path.join(d, "sessions")
        self.log_path = log_path or os.path.join(d, "collector.log")
        self.log_mode = log_mode
        self.metrics = metrics
        self.env, self.cwd, self.preexec_fn = env, cwd, preexec_fn
        self.ready, self.start_timeout, self.stop_timeout = ready, start_timeout, stop_timeout
        self.poll_interval = poll_interval
        # --jvms=agents: the test's own JVMs only, the host's others (a neighbour test's) are not its
        # subject; jvms=None: the collector's own default (zero-touch wherever the kernel view is on)
        jvms = [] if jvms is None or any(a.startswith("--jvms") for a in args) else ["--jvms=" + jvms]
        self.cmd = list(prefix) + [VTPIN, "collector"] + (["--socket", self.socket] if self.socket else []) + \
            ["--dir", self.sessions] + (["--metrics", metrics] if metrics else []) + jvms + list(args)
        self.proc = None
        self.logf = None
        self.host = self.port = self.url = None

    # ---- start, stop ----

    def start(self, expect_ready=True):
        """Starts it; unless expect_ready is false (it is meant to exit), waits until it is ready."""
        self._close_log()
        self.host = self.port = self.url = None
        self.logf = open(self.log_path, self.log_mode)
        self.proc = subprocess.Popen(self.cmd, stdout=self.logf, stderr=subprocess.STDOUT, env=self.env,
                                     cwd=self.cwd, preexec_fn=self.preexec_fn)
        if expect_ready:
            deadline = time.monotonic() + self.start_timeout
            while not self.is_ready():
                if self.proc.poll() is not None:
                    raise Failure("the collector exited %s at start:\n%s" % (self.proc.returncode, self.log()))
                if time.monotonic() >= deadline:
                    raise Failure("the collector was not ready (%s%s) within %ss:\n%s" % (
                        self.ready, ", its metrics port" if self.metrics else "", self.start_timeout, self.log()))
                time.sleep(0.02)
        return self

    def is_ready(self):
        if self.metrics and self.port is None:
            m = re.search(r"metrics on http://(\S+?):(\d+)/metrics", self.log())
            if not m:
                return False
            self.host, self.port = m.group(1), int(m.group(2))
            self.url = "http://127.0.0.1:%d/metrics" % self.port
        if self.ready == "answers":
            return self.answers()
        if self.ready == "socket_file":
            return os.path.exists(self.socket)
        if self.ready == "listening":
            return "listening on" in self.log()
        raise ValueError("ready: " + self.ready)

    def answers(self):
        """True when a connect to its socket succeeds."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(self.socket)
            return True
        except OSError:
            return False
        finally:
            s.close()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=None):
        """Sends sig and waits for the exit (stop_timeout seconds unless given); past it kills it and
        fails. Returns its exit status (None when never started)."""
        timeout = self.stop_timeout if timeout is None else timeout
        if self.alive():
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self._close_log()
                raise Failure("the collector did not stop within %ss after %s" % (timeout, sig))
        self._close_log()
        return self.proc.returncode if self.proc else None

    def kill(self, sig=signal.SIGKILL, timeout=10):
        return self.stop(sig, timeout)

    def _close_log(self):
        if self.logf:
            self.logf.close()
            self.logf = None

    def __enter__(self):
        return self if self.proc else self.start()

    def __exit__(self, *exc):
        try:
            self.stop()
        finally:
            if self.alive():
                self.proc.kill()
                self.proc.wait()
        return False

    # ---- what it says ----

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def run(self, what, *args, env=None, preexec_fn=None, cwd=None):
        """`vtpin what --socket S args` (no --socket for the default one), as the collector's user and
        environment unless given: the CompletedProcess, text."""
        extra = ["--socket", self.socket] if self.socket else []
        return subprocess.run([VTPIN, what] + extra + list(args), capture_output=True, text=True, timeout=30,
                              env=env or self.env, cwd=cwd or self.cwd,
                              preexec_fn=preexec_fn or self.preexec_fn)

    def text(self, what, *args, **kw):
        p = self.run(what, *args, **kw)
        if p.returncode != 0:
            raise Failure("vtpin %s failed (%d): %s" % (what, p.returncode, p.stderr))
        return p.stdout

    def ask(self, what, *args, **kw):
        """`vtpin what --json args`, parsed; fails when vtpin does."""
        return json.loads(self.text(what, "--json", *args, **kw))

    def status(self):
        return self.ask("status")

    def top(self):
        return self.ask("top", "--once")

    def jvm(self, pid):
        """Its status entry of JVM pid, or None."""
        for j in self.status()["jvms"]:
            if j["pid"] == pid:
                return j
        return None

    def wait_for(self, what, cond, timeout=30):
        """what() until cond holds of its answer (returned); fails after timeout seconds."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = what()
            if cond(last):
                return last
            time.sleep(self.poll_interval)
        raise Failure("timed out; last answer: %s" % json.dumps(last)[:2000])

    def scrape(self):
        """GET its /metrics (it must listen): the exposition, checked for status and content type."""
        status, headers, body = http_get(self.url)
        if status != 200:
            raise Failure("GET /metrics: %d %s" % (status, body[:300]))
        if not headers.get("Content-Type", "").startswith("text/plain; version=0.0.4"):
            raise Failure("exposition content type: %s" % headers.get("Content-Type"))
        return body
