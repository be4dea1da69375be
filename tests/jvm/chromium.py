"""One headless Chromium (Debian `chromium`) driven over the DevTools protocol through a pipe.

Started with --remote-debugging-pipe, Chromium reads commands from its fd 3 and writes
replies and events to its fd 4, each message a JSON text ended by a NUL byte: no port,
no websocket, Python's standard library only. A test starts it once and loads every page
it checks in the one page target it opens (Chromium's start is most of what a load cost
when each load was a whole `chromium --dump-dom`).

    with Chromium(work) as c:
        html = c.dom("file:///tmp/report.html#hover=3")
        c.screenshot("file:///tmp/report.html", "/tmp/report.png", 1400, 1000)

Every wait has a deadline and names what did not come; a Chromium that dies says so
with the tail of its stderr; leaving the `with` ends the browser, passed or failed.
"""
import base64
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time

from harness import Failure, skip


def executable():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    skip("chromium not installed (Debian package chromium, in scripts/setup.sh)")


class Chromium:
    # the flags `chromium --headless --dump-dom` ran with, and no network: this machine has
    # none, and Chromium's own connections would fail noisily
    FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--remote-debugging-pipe"]

    def __init__(self, work, timeout=120):
        """work: where the profile and the stderr log go, and HOME; timeout: seconds each
        command or load may take."""
        self.work = work
        self.timeout = timeout
        self.proc = None
        self.next_id = 0
        self.buf = b""
        self.events = []  # events read while waiting for something else, oldest first
        self.session = None

    # ---- the process ----

    def __enter__(self):
        profile = tempfile.mkdtemp(prefix="chromium-", dir=self.work)
        self.stderr_path = os.path.join(self.work, "chromium.stderr")
        # not the ASan runtime a sanitized build preloads for java (harness.py): Chromium hangs under it
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        env["HOME"] = self.work
        to_child, self.cmd_w = os.pipe()    # Chromium reads commands on its fd 3
        self.msg_r, from_child = os.pipe()  # and writes replies and events on its fd 4

        def onto_3_and_4():
            # (in the child) each end first onto a free fd above 4 (closed at exec), so that
            # neither dup2 overwrites the other end; dup2 leaves 3 and 4 open across exec
            a = fcntl.fcntl(to_child, fcntl.F_DUPFD_CLOEXEC, 5)
            b = fcntl.fcntl(from_child, fcntl.F_DUPFD_CLOEXEC, 5)
            os.dup2(a, 3)
            os.dup2(b, 4)

        try:
            err = open(self.stderr_path, "wb")
            self.proc = subprocess.Popen([executable()] + self.FLAGS + ["--user-data-dir=" + profile],
                                         stdin=subprocess.DEVNULL, stdout=err, stderr=err, env=env,
                                         preexec_fn=onto_3_and_4, start_new_session=True,
                                         # not pass_fds: Popen closes every fd it was not given
                                         # after preexec_fn ran, 3 and 4 with them
                                         close_fds=False)
        except BaseException:
            os.close(self.cmd_w)
            os.close(self.msg_r)
            raise
        finally:
            err.close()
            os.close(to_child)
            os.close(from_child)
        try:
            target = self.send("Target.createTarget", {"url": "about:blank"}, session=None)["targetId"]
            self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                     session=None)["sessionId"]
            self.send("Page.enable")
            self.send("Page.setLifecycleEventsEnabled", {"enabled": True})
            self.url = "about:blank"
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Ends the browser: Browser.close, then SIGKILL to its process group (its renderers and
        helpers with it; Chromium was started in a session of its own)."""
        if self.proc is None:
            return
        try:
            if self.proc.poll() is None:
                try:
                    self._write({"id": self._id(), "method": "Browser.close"})
                    self.proc.wait(timeout=10)
                except (OSError, subprocess.TimeoutExpired):
                    pass
        finally:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=30)
            for fd in (self.cmd_w, self.msg_r):
                os.close(fd)
            self.proc = None

    def stderr_tail(self, n=3000):
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read().decode(errors="replace")[-n:]
        except OSError as e:
            return "(no stderr: %s)" % e

    def _died(self, waiting_for):
        code = self.proc.wait(timeout=10) if self.proc else None
        return Failure("chromium ended (exit %s) while waiting for %s; its stderr ends:\n%s"
                       % (code, waiting_for, self.stderr_tail()))

    # ---- the protocol ----

    def _id(self):
        self.next_id += 1
        return self.next_id

    def _write(self, msg):
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self.cmd_w, data):]

    def _read(self, waiting_for, deadline):
        """The next message from Chromium, waiting until deadline (time.monotonic())."""
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.msg_r], [], [], left)[0]:
                raise Failure("chromium: %s did not come within %d s; its stderr ends:\n%s"
                              % (waiting_for, self.timeout, self.stderr_tail()))
            chunk = os.read(self.msg_r, 1 << 20)
            if not chunk:
                raise self._died(waiting_for)
            self.buf += chunk
        text, self.buf = self.buf.split(b"\0", 1)
        return json.loads(text)

    def send(self, method, params=None, session=True):
        """Sends a command (to the page's session unless session=None) and returns its result."""
        ident = self._id()
        msg = {"id": ident, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        try:
            self._write(msg)
        except BrokenPipeError:
            raise self._died("the reply to " + method)
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read("the reply to " + method, deadline)
            if m.get("id") == ident:
                if "error" in m:
                    raise Failure("chromium: %s %s failed: %s" % (method, json.dumps(params), m["error"]))
                return m.get("result", {})
            if "method" in m:
                self._queue(m)

    def wait_event(self, what, match):
        """The first event (queued or to come) for which match(event) holds; what names it."""
        for i, e in enumerate(self.events):
            if match(e):
                return self.events.pop(i)
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read(what, deadline)
            if "method" not in m:
                continue  # a late reply to a command we gave up on: none today
            if match(m):
                return m
            self._queue(m)

    def _queue(self, event):
        self.events.append(event)
        del self.events[:-1000]  # events nobody waits for (frame lifecycle, console...) do not pile up

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (JSON-able values only)."""
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            raise Failure("chromium: %s threw: %s" % (expression[:200], json.dumps(r["exceptionDetails"])[:2000]))
        return r["result"].get("value")

    # ---- pages ----

    def load(self, url):
        """Loads url and returns once the load event fired. A URL that differs from the current one by
        its #fragment only would be a same-document navigation (no load, the page's script would not
        run again): about:blank comes in between, so each load runs the page from the start, as a new
        `chromium --dump-dom URL` did."""
        if url != "about:blank" and url.split("#")[0] == self.url.split("#")[0]:
            self.load("about:blank")
        self.events = [e for e in self.events if e.get("method") != "Page.lifecycleEvent"]
        r = self.send("Page.navigate", {"url": url})
        if r.get("errorText"):
            raise Failure("chromium: cannot load %s: %s" % (url, r["errorText"]))
        loader = r.get("loaderId")
        if not loader:
            raise Failure("chromium: loading %s was a same-document navigation (from %s)" % (url, self.url))
        self.url = url
        self.wait_event("the load event of " + url,
                        lambda e: e.get("method") == "Page.lifecycleEvent" and e.get("sessionId") == self.session
                        and e["params"]["name"] == "load" and e["params"]["loaderId"] == loader)

    def dom(self, url):
        """What `chromium --headless --dump-dom URL` printed: the document's HTML once it loaded."""
        self.load(url)
        return self.evaluate("(document.doctype ? new XMLSerializer().serializeToString(document.doctype) + '\\n' : '')"
                             " + document.documentElement.outerHTML + '\\n'")

    def screenshot(self, url, path, width, height):
        """What `chromium --headless --hide-scrollbars --window-size=W,H --screenshot=PATH URL` wrote:
        a W x H PNG of the page, laid out for that size from the start."""
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self.send("Emulation.setScrollbarsHidden", {"hidden": True})
        try:
            self.load(url)
            png = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"})["data"])
        finally:
            self.send("Emulation.setScrollbarsHidden", {"hidden": False})
            self.send("Emulation.clearDeviceMetricsOverride")
        with open(path, "wb") as f:
            f.write(png)
        return path
