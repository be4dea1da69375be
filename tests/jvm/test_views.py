"""vtpin report --format html|collapsed|perfetto on recordings of real JVMs
(and one large synthetic recording), checked against the JSON report.

The HTML page is loaded in real headless Chromium (Debian `chromium`): the
rendered DOM must hold the culprits and one lane per carrier, and a
screenshot is taken (VTPIN_SCREENSHOT=PATH keeps it, e.g. docs/img/report.png).
A case starts one Chromium and loads each page in it over the DevTools protocol
(chromium.py): the DOM and the screenshot are those `chromium --headless
--dump-dom` and `--screenshot --window-size=1400,1000` gave, byte for byte.

cases: html JDK FIXTURE | collapsed JDK | perfetto JDK [sampled|exact] | big | cli
"""
import contextlib
import html.parser
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(__file__))
from chromium import Chromium  # noqa: E402
from harness import (BUILD, VTPIN, Failure, Run, check, culprit, frames_of, main,  # noqa: E402
                     run_peak_rss, scheduler, tempdir)
from test_pprof import go_pprof  # noqa: E402

SYNTH = os.path.join(BUILD, "tests", "unit", "synth_recording")


def vtpin(*args, timeout=120):
    p = subprocess.run([VTPIN, "report"] + list(args), capture_output=True, timeout=timeout)
    if p.returncode != 0:
        raise Failure("vtpin report %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr.decode()))
    return p.stdout


_case = {}  # the running case: its work directory, its ExitStack, its Chromium once started


def browser():
    """The case's one Chromium (chromium.py), started by the first page it loads; in_workdir ends it."""
    if "chromium" not in _case:
        _case["chromium"] = _case["stack"].enter_context(Chromium(_case["work"]))
    return _case["chromium"]


def dump_dom(page, fragment=""):
    """The page's DOM once loaded (#fragment optional), as `chromium --headless --dump-dom` printed it:
    each call loads the page anew, so that its script runs with the fragment."""
    return browser().dom("file://" + page + fragment)


class Dom(html.parser.HTMLParser):
    """The rendered DOM: elements with their classes, attributes and text."""

    def __init__(self, text):
        super().__init__()
        self.elements = []
        self.stack = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        e = {"tag": tag, "attrs": a, "classes": set((a.get("class") or "").split()), "text": ""}
        self.elements.append(e)
        if tag not in ("rect", "br", "input", "meta", "link", "img"):
            self.stack.append(e)

    def handle_endtag(self, tag):
        while self.stack:
            e = self.stack.pop()
            if e["tag"] == tag:
                break

    def handle_data(self, data):
        for e in self.stack:
            e["text"] += data

    def by_class(self, cls, tag=None):
        return [e for e in self.elements if cls in e["classes"] and (tag is None or e["tag"] == tag)]

    def by_id(self, ident):
        return next((e for e in self.elements if e["attrs"].get("id") == ident), None)


def hover_tips(page):
    """The text of the tooltip of each pin drawn (rect.pin, in order), hovered as report.html#hover=N
    hovers the Nth (the same mousemove on it), all in one load of the page; the first must be
    what #hover=0 shows, so that this stays what the page's own address does."""
    c = browser()
    c.load("file://" + page)
    tips = [Dom(t).by_id("tip")["text"] for t in c.evaluate("""(function () {
        var tips = [], rects = document.querySelectorAll('rect.pin');
        for (var i = 0; i < rects.length; i++) {
          var box = rects[i].getBoundingClientRect();
          rects[i].dispatchEvent(new MouseEvent('mousemove',
                                                { bubbles: true, clientX: box.left + 1, clientY: box.top + 1 }));
          tips.push(document.getElementById('tip').outerHTML);
        }
        return tips;
      })()""")]
    if tips:
        first = Dom(dump_dom(page, fragment="#hover=0")).by_id("tip")["text"]
        check(tips[0] == first, "hovering pin 0 shows what #hover=0 does:\n%r\n%r" % (tips[0], first))
    return tips


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    check(head[:8] == b"\x89PNG\r\n\x1a\n", "%s is a PNG" % path)
    return struct.unpack(">II", head[16:24])


def screenshot(page, work, name, keep=False):
    """keep: VTPIN_SCREENSHOT=PATH, when set, is where the screenshot goes."""
    out = (keep and os.environ.get("VTPIN_SCREENSHOT")) or os.path.join(work, name)
    out = os.path.abspath(out)
    browser().screenshot("file://" + page, out, 1400, 1000)
    check(png_size(out) == (1400, 1000), "screenshot is 1400x1000: %s" % (png_size(out),))
    check(os.path.getsize(out) > 30000, "screenshot has content: %d bytes" % os.path.getsize(out))
    print("screenshot: %s (%d bytes)" % (out, os.path.getsize(out)))
    return out


def json_streaming(path, key, each):
    """Parses the JSON object in path as json.load does, but the array under key element by element:
    each(element) is called and the element dropped. Returns the other members. (100,000 pins with
    their stacks are 500 MB of JSON: all of it in memory at once is 2.6 GB of Python objects and
    most of the time the big case took.)"""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    dec = json.JSONDecoder()
    ws = re.compile(r"[ \t\n\r]*").match

    def expect(i, c):
        i = ws(text, i).end()
        check(text[i:i + 1] == c, "%s: JSON: %r expected at character %d, got %r" % (path, c, i, text[i:i + 20]))
        return ws(text, i + 1).end()

    members, i = {}, expect(0, "{")
    while text[i:i + 1] != "}":
        if members:
            i = expect(i, ",")
        check(text[i:i + 1] == '"', "%s: JSON: a member name expected at character %d" % (path, i))
        name, i = json.decoder.scanstring(text, i + 1)
        i = expect(i, ":")
        if name == key:
            members[name], i = None, expect(i, "[")
            while text[i:i + 1] != "]":
                if members[name] is not None:
                    i = expect(i, ",")
                element, i = dec.raw_decode(text, i)
                each(element)
                members[name], i = True, ws(text, i).end()
            i += 1
        else:
            members[name], i = dec.raw_decode(text, i)
        i = ws(text, i).end()
    check(not text[i + 1:].strip(), "%s: JSON: nothing after the object" % path)
    return members


def frame_text(f):
    """How the page shows a culprit: [module/]Class.method(File.java:N), as a Java stack trace
    does (a JDK frame, e.g. a JDK pin's culprit in java.base, carries its module)."""
    where = "Native Method" if f["native"] else ("%s:%d" % (f["source"], f["line"]) if f["line"] is not None
                                                   else f["source"] or "Unknown Source")
    return "%s%s.%s(%s)" % (f["module"] + "/" if f.get("module") else "", f["class"], f["method"], where)


def blocked_words(pin):
    """How the hover introduces where a pin blocked: the kernel for native code, the JVM for VM_BLOCK."""
    return "blocked in the JVM at " if pin["reason"] == "VM_BLOCK" else "blocked in the kernel in "


def check_page(page, rep, work):
    """The page rendered by Chromium against the JSON report of the same recording."""
    dom = Dom(dump_dom(page))
    body = next(e for e in dom.elements if e["tag"] == "body")
    check(body["attrs"].get("data-rendered") == "yes", "the page's script ran to the end")
    # summary
    check(dom.by_id("card-pins")["text"].startswith(str(len(rep["pins"]))),
          "summary card counts the pins: %r" % dom.by_id("card-pins")["text"])
    # ranked sites, culprits
    cells = [e["text"] for e in dom.by_class("culprit", "td")]
    check(len(cells) == min(len(rep["sites"]), 100), "one row per site: %d vs %d" % (len(cells), len(rep["sites"])))
    for i, site in enumerate(rep["sites"][:10]):
        if site["culprit"]:
            check(cells[i].startswith(frame_text(site["culprit"])), "site %d: culprit %r in the page, got %r" %
                  (i + 1, frame_text(site["culprit"]), cells[i]))
    # a summary card per reason present, named as the report names it
    cards = [e["text"] for e in dom.elements if e["tag"] == "div" and "card" in e["classes"]]
    for reason in {p["reason"] for p in rep["pins"]}:
        n = sum(1 for p in rep["pins"] if p["reason"] == reason)
        check(any(t.endswith("%s (%d)" % (reason, n)) for t in cards), "a card for %s (%d): %s" % (reason, n, cards))
    # one lane per carrier, named, with its pins
    lanes = dom.by_class("lane", "div")
    carriers = {}
    for p in rep["pins"]:
        carriers.setdefault(p["carrier"]["tid"], p["carrier"]["name"])
    lane_tids = {int(e["attrs"]["data-tid"]) for e in lanes if "data-tid" in e["attrs"]}
    check(set(carriers) <= lane_tids, "a lane for every carrier that pinned: %s vs %s" % (sorted(carriers),
                                                                                           sorted(lane_tids)))
    names = [e["text"] for e in dom.by_class("carrier-name", "span")]
    for tid, name in carriers.items():
        check(name in names, "carrier %s named on its lane (%s)" % (name, names))
    pins = dom.by_class("pin", "rect")
    by_reason = {}
    for e in pins:
        r = next(c[len("reason-"):] for c in e["classes"] if c.startswith("reason-"))
        by_reason[r] = by_reason.get(r, 0) + 1
    want = {}
    for p in rep["pins"]:
        want[p["reason"]] = want.get(p["reason"], 0) + 1
    check(by_reason == want, "a rect per pin, coloured by reason: page %s, report %s" % (by_reason, want))
    # flame graph: the culprit frames are drawn (a box is labelled only when wide enough,
    # so each drawn box is named through its data-i, an index into the page's flame data)
    data = json.loads(dom.by_id("vtpin-data")["text"])
    frames = [data["labels"][data["flame"][3 * int(e["attrs"]["data-i"])]]
              for e in dom.by_class("frame", "div") if "data-i" in e["attrs"]]
    # (the page draws no box narrower than 0.6 px: a site with a sliver of the pinned time, e.g. a
    # class initialization that ASan made a 3rd site of a few ms on 25, has none; 1 % of an
    # 800 px window is 8 px)
    pinned = sum(s["total_ns"] for s in rep["sites"]) or 1
    for site in rep["sites"][:3]:
        if site["culprit"] and site["total_ns"] * 100 >= pinned:
            label = "%s.%s" % (site["culprit"]["class"], site["culprit"]["method"])
            check(label in frames, "flame graph has %s: %s" % (label, frames[:40]))
    check(dom.by_class("counter", "tr"), "counters shown")
    # hovering the first pin drawn (the earliest on the first lane) says who, where and how long
    first_lane = next(int(e["attrs"]["data-tid"]) for e in lanes if int(e["attrs"].get("data-tid", -1)) in carriers)
    p = min((p for p in rep["pins"] if p["carrier"]["tid"] == first_lane), key=lambda p: (p["start_ns"], p["id"]))
    tip = Dom(dump_dom(page, fragment="#hover=0")).by_id("tip")["text"]
    c = culprit(p)
    for want in ([p["reason"], "virtual thread: ", "#%d" % p["vthread"]["id"], "pin #%d" % p["id"]] +
                 (["culprit: " + frame_text(c)] if c else []) + ([blocked_words(p) + p["blocked_in"]]
                                                                  if p["blocked_in"] else [])):
        check(want in tip, "hover tooltip of pin %d has %r:\n%s" % (p["id"], want, tip))
    # flame graph: search the top site's culprit, then zoom into it
    top = rep["sites"][0]
    if top["culprit"]:
        label = "%s.%s" % (top["culprit"]["class"], top["culprit"]["method"])
        share = 100.0 * sum(s["total_ns"] for s in rep["sites"]
                            if s["culprit"] and "%s.%s" % (s["culprit"]["class"], s["culprit"]["method"]) == label
                            ) / sum(s["total_ns"] for s in rep["sites"])
        found = Dom(dump_dom(page, fragment="#search=" + urllib.parse.quote(label)))
        check(any(e["text"] == label for e in found.by_class("match", "div")), "search highlights %s" % label)
        matched = found.by_id("flame-matched")["text"]
        m = re.search(r"= ([\d.]+)% of pinned time", matched)
        # frames named so, counted once per stack, hold at least the sites blamed on them
        check(m and float(m.group(1)) >= share - 0.1, "search says %r, the culprit's sites are %.1f%%" % (matched, share))
        zoomed = Dom(dump_dom(page, fragment="#zoom=" + urllib.parse.quote(label)))
        drawn = zoomed.by_class("frame", "div")
        check(drawn and any("ancestor" in e["classes"] for e in drawn), "zoom keeps the callers as ancestors")
        check(all(e["text"] in ("", label) or "ancestor" in e["classes"] or e["text"] in frames for e in drawn),
              "zoomed view holds the frame, its callers and its callees")
        width = [e for e in drawn if e["text"] == label and "ancestor" not in e["classes"]]
        check(width and re.search(r"left: 0px", width[0]["attrs"].get("style", "")),
              "the zoomed frame starts at the left edge: %s" % (width[:1],))
    return dom


@contextlib.contextmanager
def timed(what):
    """Prints how long the block took (where a slow test spends its time)."""
    start = time.monotonic()
    yield
    print("%s: %.1f s" % (what, time.monotonic() - start))


def in_workdir(case):
    """Runs case(work, *args) with a temp directory removed afterwards, and the Chromium it started ended."""
    def run(*args):
        work = tempdir(prefix="vtpin-test-views-")
        try:
            with contextlib.ExitStack() as stack:
                _case.clear()
                _case.update(work=work, stack=stack)
                case(work, *args)
        finally:
            _case.clear()
            shutil.rmtree(work, ignore_errors=True)
    return run


@in_workdir
def case_html(work, jdk, fixture):
    jdk = int(jdk)
    if fixture == "Showcase":
        r = Run(jdk, "Showcase", args=(3,), props=scheduler(4), workdir=work).run(timeout=180)
    elif fixture == "NativeBlock":
        r = Run(jdk, "NativeBlock", args=("nanosleep", 2, 1200), props=scheduler(2), workdir=work).run()
    elif fixture == "ClassInitWait":
        r = Run(jdk, "ClassInitWait", args=(2, 400), props=scheduler(4), workdir=work).run()
    else:
        r = Run(jdk, "Repro", props=scheduler(4, 4), workdir=work).run()
    rep = r.report()
    check(rep["pins"], "the fixture pinned")
    page = os.path.join(r.dir, "report.html")
    vtpin("--format", "html", "-o", page, r.record)
    with open(page, encoding="utf-8") as f:
        text = f.read()
    check(not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), "nothing fetched from the network")
    dom = check_page(page, rep, r.dir)
    if fixture == "NativeBlock":
        check(any("blockInNanosleep" in e["text"] for e in dom.by_class("culprit", "td")),
              "the native method is the culprit")
        check(dom.by_class("occ", "rect"), "occupancy (sampled by default) drawn as busy/idle")
    if fixture == "ClassInitWait":
        check(any(p["reason"] == "VM_BLOCK" for p in rep["pins"]), "the class-initialization wait is a VM_BLOCK")
        words = "the JDK says: Waited for initialization of ClassInitWait$Slow by another thread"
        check(any(words in e["text"] for e in dom.elements if e["tag"] == "pre"), "the site's stack shows %r" % words)
        check(any(e["attrs"].get("title") == words for e in dom.by_class("badge")), "its reason badge's title too")
    if fixture == "Showcase":
        reasons = {p["reason"] for p in rep["pins"]}
        check({"NATIVE", "NATIVE_BLOCK"} <= reasons, "Showcase pins natively: %s" % reasons)
        if jdk < 24:
            check({"MONITOR", "OBJECT_WAIT"} <= reasons, "and on monitors on JDK %d: %s" % (jdk, reasons))
        check(dom.by_class("occ", "rect"), "occupancy drawn")
    screenshot(page, r.dir, "report.png", keep=True)


def hostile_names(stdout):
    """The names HostileNames gave its virtual threads ("name: HEX", UTF-8), in order, but
    "odd-frame", the thread of its odd frame."""
    return [bytes.fromhex(line[len("name: "):]).decode("utf-8") for line in stdout.splitlines()
            if line.startswith("name: ")]


def hostile_pins(rep):
    """HostileNames' own pins: NATIVE in JniSleep.sleepInNative (the JDK may add pins of its own,
    e.g. linking the reflective call, on the same threads)."""
    return [p for p in rep["pins"] if p["reason"] == "NATIVE" and (culprit(p) or {}).get("method") == "sleepInNative"
            and any(f["class"] == "HostileNames" for f in frames_of(p))]


@in_workdir
def case_html_hostile(work, jdk):
    """Virtual threads named to break the page (<!--<script>, </script><script>..., ]]>, U+2028,
    U+2029, quotes, a backslash, &amp;, control characters, a NUL) pin: the page still renders
    every pin and site, each name shows literally in its pin's tooltip, and no injected script runs."""
    jdk = int(jdk)
    r = Run(jdk, "HostileNames", props=scheduler(2), workdir=work).run()
    names = hostile_names(r.stdout())
    check(len(names) >= 10 and "<!--<script>" in names, "the fixture named its threads: %r" % names)
    rep = r.report()
    ours = hostile_pins(rep)
    page = os.path.join(r.dir, "report.html")
    vtpin("--format", "html", "-o", page, r.record)
    dom = check_page(page, rep, r.dir)
    scripts = [e for e in dom.elements if e["tag"] == "script"]
    check(len(scripts) == 2, "no script element but the page's own two: %d" % len(scripts))
    title = next(e for e in dom.elements if e["tag"] == "title")["text"]
    check("injected" not in title and title.startswith("vtpin: JVM"), "no injected script ran: title %r" % title)
    with open(page, "rb") as f:
        raw = f.read()
    start = b'<script id="vtpin-data" type="application/json">'
    data = raw[raw.index(start) + len(start):]
    data = data[:data.index(b"</script>")]
    for bad in (b"<", b">", b"&", "\u2028".encode(), "\u2029".encode()):
        check(bad not in data, "the embedded data holds no %r" % bad)
    # the sites table: the fixture's site, and every pin at a site
    cells = [e["text"] for e in dom.by_class("culprit", "td")]
    check(any("JniSleep.sleepInNative" in c for c in cells), "the fixture's site is in the table: %s" % cells)
    at_sites = sum(s["count"] for s in rep["sites"])
    check(at_sites == len(rep["pins"]), "the sites hold every pin: %d of %d" % (at_sites, len(rep["pins"])))
    check(sorted(p["vthread"]["name"] for p in ours) == sorted(names + ["odd-frame"]),
          "one pin per name, each name whole in the JSON report: %r" % [p["vthread"]["name"] for p in ours])
    # each name, as it is, in the tooltip of its pin
    rects = dom.by_class("pin", "rect")
    tips = hover_tips(page)
    check(len(tips) == len(rects), "a tooltip per pin drawn: %d of %d" % (len(tips), len(rects)))
    seen = {}
    for i, tip in enumerate(tips):
        m = re.search(r'^virtual thread: "(.*)" #(\d+)$', tip, re.M | re.S)
        check(m, "tooltip %d names the virtual thread:\n%r" % (i, tip))
        seen[int(m.group(2))] = tip
    for p in ours:
        tip = seen.get(p["vthread"]["id"], "")
        check('virtual thread: "%s" #%d' % (p["vthread"]["name"], p["vthread"]["id"]) in tip,
              "name %r shown literally in its tooltip:\n%r" % (p["vthread"]["name"], tip))


@in_workdir
def case_collapsed(work, jdk):
    jdk = int(jdk)
    r = Run(jdk, "Showcase", args=(2,), props=scheduler(4), workdir=work).run(timeout=180)
    rep = r.report()
    check(rep["pins"], "the fixture pinned")
    text = vtpin("--format", "collapsed", r.record).decode()
    lines = text.splitlines()
    check(lines, "folded stacks written")
    total_us = 0
    seen = set()
    for line in lines:
        m = re.fullmatch(r"([^ ;][^;]*(?:;[^;]+)*) (\d+)", line)
        check(m, "folded line format: %r" % line)
        stack = m.group(1)
        check(stack not in seen, "one line per stack: %r twice" % stack)
        seen.add(stack)
        total_us += int(m.group(2))
        for frame in stack.split(";"):
            check(frame.startswith("[") or ("." in frame and "(" not in frame and not frame.startswith("java.base/")),
                  "frame is class.method, no module or source: %r" % frame)
    pinned_ns = sum(s["total_ns"] for s in rep["sites"])
    check(abs(total_us - pinned_ns / 1000) <= 0.5,
          "weights add up to the pinned total: %d us vs %d ns" % (total_us, pinned_ns))
    # every pin's stack, root first, is one of the lines
    for p in rep["pins"]:
        frames = ["%s.%s" % (f["class"], f["method"]) for f in reversed(frames_of(p))]
        if p["stack_truncated"]:
            frames.insert(0, "[truncated]")
        want = ";".join(frames) if frames else "[no stack: %s]" % p["reason"]
        check(want in seen, "pin %d's stack is folded root first: %r" % (p["id"], want))
    c = culprit(rep["pins"][0])
    check(any(("%s.%s" % (c["class"], c["method"])) in s for s in seen), "culprit frame in the stacks")


@in_workdir
def case_perfetto(work, jdk, occupancy="sampled"):
    jdk = int(jdk)
    r = Run(jdk, "Showcase", args=(2,), props=scheduler(4), agent_opts="occupancy=" + occupancy,
            workdir=work).run(timeout=180)
    rep = r.report()
    check(rep["pins"], "the fixture pinned")
    trace = json.loads(vtpin("--format", "perfetto", r.record))
    events = trace["traceEvents"]
    pid = rep["jvm"]["pid"]
    origin = int(trace["otherData"]["time_origin_unix_ns"])
    check(all(e["pid"] == pid for e in events), "every event in the JVM's process %d" % pid)
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    slices = {e["args"]["pin_id"]: e for e in events if e["ph"] == "X"}
    check(len(slices) == len(rep["pins"]), "one complete event per pin: %d vs %d" % (len(slices), len(rep["pins"])))
    for p in rep["pins"]:
        e = slices[p["id"]]
        tid = p["carrier"]["tid"]
        check(e["tid"] == tid and names.get(tid) == p["carrier"]["name"],
              "pin %d on its carrier's named track: %s / %s" % (p["id"], e["tid"], names.get(tid)))
        c = culprit(p)
        want = p["reason"] + (" %s.%s" % (c["class"], c["method"]) if c else "")
        check(e["name"] == want, "named with reason and culprit: %r vs %r" % (e["name"], want))
        check(abs(e["ts"] * 1000 + origin - p["start_ns"]) <= 1000, "start: %s vs %s" % (e["ts"], p["start_ns"]))
        if p["duration_ns"] is not None:
            check(abs(e["dur"] * 1000 - p["duration_ns"]) <= 1, "duration: %s vs %s" % (e["dur"], p["duration_ns"]))
        check(e["args"]["vthread_id"] == p["vthread"]["id"], "virtual thread in args")
        held = sum(f["monitors"] for f in frames_of(p))
        check(e["args"]["monitors"] == held, "monitors held: %s vs %s" % (e["args"]["monitors"], held))
        if p["blocked_in"]:
            check(e["args"]["blocked_in"] == p["blocked_in"], "blocked_in in args")
    counters = [e for e in events if e["ph"] == "C"]
    check(counters and all(e["args"]["busy"] in (0, 1) for e in counters),
          "occupancy (%s) as busy counters: %d" % (occupancy, len(counters)))
    check({e["args"]["busy"] for e in counters} == {0, 1}, "carriers seen busy and idle")
    check({e["tid"] for e in counters} <= set(names), "counters belong to named carriers")


@in_workdir
def case_big(work):
    """100,000 pins on 8 carriers: the page stays small and opens in Chromium."""
    if not os.path.exists(SYNTH):
        raise Failure("%s missing: build first" % SYNTH)
    rec = os.path.join(work, "big.vtp")
    with timed("synthetic recording"):
        subprocess.run([SYNTH, rec, "100000", "8"], check=True, timeout=120)
    with timed("json report"):
        vtpin("--format", "json", "-o", os.path.join(work, "big.json"), rec)
    with timed("json parse"):
        listed = []
        rep = json_streaming(os.path.join(work, "big.json"), "pins", lambda p: listed.append(None))
    check(len(listed) == 100000, "100000 pins recorded: %d" % len(listed))
    page = os.path.join(work, "big.html")
    with timed("html report"):
        vtpin("--format", "html", "-o", page, rec)
    size = os.path.getsize(page)
    check(size < 3 * 1024 * 1024, "100k pins make a page under 3 MB: %d bytes" % size)
    with timed("chromium start"):
        browser()
    with timed("chromium dom"):
        text = dump_dom(page)
    with timed("dom parse (%d bytes)" % len(text)):
        dom = Dom(text)
    check(next(e for e in dom.elements if e["tag"] == "body")["attrs"].get("data-rendered") == "yes",
          "the page's script ran to the end")
    lanes = dom.by_class("lane", "div")
    check(len(lanes) == 8, "8 carrier lanes: %d" % len(lanes))
    pins = dom.by_class("pin", "rect")
    check(1000 < len(pins) < 40000, "short pins merged per lane slot: %d rects" % len(pins))
    check("merged" in dom.by_id("timeline-note")["text"], "the page says pins were merged")
    cells = [e["text"] for e in dom.by_class("culprit", "td")]
    check(cells and cells[0].startswith(frame_text(rep["sites"][0]["culprit"])), "top culprit shown")
    check(len(dom.by_class("frame", "div")) > 100, "flame graph drawn")
    # the other formats on the same recording
    with timed("collapsed"):
        total_us = sum(int(line.rsplit(" ", 1)[1])
                       for line in vtpin("--format", "collapsed", rec).decode().splitlines())
    pinned_ns = sum(s["total_ns"] for s in rep["sites"])
    check(abs(total_us - pinned_ns / 1000) <= 0.5, "folded weights add up: %d us vs %d ns" % (total_us, pinned_ns))
    trace = os.path.join(work, "big.trace.json")
    with timed("perfetto report"):
        vtpin("--format", "perfetto", "-o", trace, rec)
    with timed("perfetto parse"):
        complete = []
        json_streaming(trace, "traceEvents", lambda e: complete.append(None) if e["ph"] == "X" else None)
    check(len(complete) == 100000, "a complete event per pin")
    with timed("screenshot"):
        screenshot(page, work, "big.png")


@in_workdir
def case_cli(work):
    """-o for every format, the format list in errors, a file that cannot be written."""
    rec = os.path.join(work, "small.vtp")
    subprocess.run([SYNTH, rec, "50", "2"], check=True, timeout=60)
    for fmt in ("text", "json", "html", "collapsed", "perfetto"):
        out = os.path.join(work, "out." + fmt)
        check(vtpin("--format", fmt, "-o", out, rec) == b"", "%s: -o writes nothing to stdout" % fmt)
        with open(out, "rb") as f:
            check(f.read() == vtpin("--format", fmt, rec), "%s: -o FILE holds what stdout gets" % fmt)
    p = subprocess.run([VTPIN, "report", "--format", "svg", rec], capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "html, collapsed, perfetto or pprof" in p.stderr, "unknown format: %s" % p.stderr)
    p = subprocess.run([VTPIN, "report", "-f", "html", "-o", os.path.join(work, "no", "such", "dir.html"), rec],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 1 and "cannot write" in p.stderr and "No such file" in p.stderr,
          "unwritable output: %d %s" % (p.returncode, p.stderr))


def report_rss(args, stdin_from=None):
    """Runs vtpin report args (through `cat stdin_from |` when given, a pipe); returns (its stdout,
    its peak RSS in KiB)."""
    cmd = [VTPIN, "report"] + list(args)
    if stdin_from:
        cmd = ["/bin/sh", "-c", 'cat "$0" | exec "$@"', stdin_from] + cmd
    p, rss = run_peak_rss(cmd)
    if p.returncode != 0:
        raise Failure("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.decode()))
    return p.stdout, rss


@in_workdir
def case_memory(work):
    """Memory follows what is shown, not the file (issue 37): 30 sessions of 20,000 pins each,
    from a file and from a pipe, shown one at a time in about the memory of one session alone,
    and shown the same. (Before: 19x one session's memory; every session was kept, and a pipe
    was read whole.) pprof's every session too, with 30 times one session's pins and time
    (before: 145 MiB, all 30 kept, against 25)."""
    one = os.path.join(work, "one.vtp")
    subprocess.run([SYNTH, one, "20000", "8"], check=True, timeout=120)
    many = os.path.join(work, "many.vtp")
    with open(one, "rb") as f:
        data = f.read()
    with open(many, "wb") as f:
        for _ in range(30):
            f.write(data)
    alone, rss_one = report_rss(["--format", "collapsed", one])
    check(len(alone.splitlines()) > 100, "one session: its stacks folded: %d lines" % len(alone.splitlines()))
    bound = 2 * rss_one + 16 * 1024
    for what, args, stdin_from in (("--session 3 of the file", ["--session", "3", many], None),
                                   ("the last session of the file", [many], None),
                                   ("--session 3 of a pipe", ["--session", "3", "-"], many),
                                   ("the last session of a pipe", ["-"], many)):
        out, rss = report_rss(["--format", "collapsed"] + args, stdin_from)
        print("%s: %d KiB (one session alone: %d KiB; %d MiB read)" % (what, rss, rss_one, len(data) * 30 >> 20))
        check(out == alone, "%s: shown as the session alone is" % what)
        check(rss <= bound, "%s: peak RSS %d KiB, over twice one session's (%d KiB) and 16 MiB" % (
            what, rss, rss_one))
    # pprof shows every session unless --session: built one session at a time (before: all 30 kept)
    pprof_one = os.path.join(work, "one.pb.gz")
    report_rss(["--format", "pprof", "-o", pprof_one, one])
    for what, args, stdin_from in (("pprof of every session of the file", [many], None),
                                   ("pprof of every session of a pipe", ["-"], many)):
        pprof_many = os.path.join(work, "many.pb.gz")
        _, rss = report_rss(["--format", "pprof", "-o", pprof_many] + args, stdin_from)
        print("%s: %d KiB (one session alone: %d KiB)" % (what, rss, rss_one))
        check(rss <= bound, "%s: peak RSS %d KiB, over twice one session's (%d KiB) and 16 MiB" % (
            what, rss, rss_one))
        for index in ("pins", "pinned"):
            alone_total, many_total = (pprof_total(f, index, work) for f in (pprof_one, pprof_many))
            check(many_total == 30 * alone_total, "%s: %s total %d, not 30 times one session's %d" % (
                what, index, many_total, alone_total))


@in_workdir
def case_memory_quiet(work):
    """A long session that seldom pins is mostly occupancy samples, which only the timelines (html,
    perfetto) draw (issue 37, item 8): 20,000 pins over 42 minutes of 8 carriers sampled every 10
    ms (2 million points, 14 MiB). The text and JSON reports keep none, so they cost what the same
    pins do in a dense session, 12 MiB more at most (19 MiB, against 14; before: 63 MiB), and say
    the whole span; the HTML page still draws the occupancy."""
    dense, quiet = os.path.join(work, "dense.vtp"), os.path.join(work, "quiet.vtp")
    subprocess.run([SYNTH, dense, "20000", "8"], check=True, timeout=120)
    subprocess.run([SYNTH, quiet, "20000", "8", "quiet"], check=True, timeout=120)
    _, rss_dense = report_rss([dense])
    for fmt in ("text", "json"):
        out, rss = report_rss(["--format", fmt, quiet])
        print("%s of the quiet session (%d KiB): peak RSS %d KiB; the dense one's text: %d KiB" % (
            fmt, os.path.getsize(quiet) >> 10, rss, rss_dense))
        # 12 MiB: the file's pages are given back 4 MiB at a time (the dense file is 1 MiB)
        check(rss <= rss_dense + 12 * 1024, "%s: peak RSS %d KiB, over the dense session's %d KiB and 12 MiB" % (
            fmt, rss, rss_dense))
    rec = json.loads(out)["recording"]
    check(rec["duration_ns"] > 40 * 60 * 10**9, "the span counts the samples: %s ns" % rec["duration_ns"])
    page = vtpin("--format", "html", quiet).decode()
    busy = [[int(v) for v in a.split(",")] for a in re.findall(r'"busy":\s*\[([-0-9, ]+)\]', page)]
    print("html: %d lanes with busy percentages" % len(busy))
    check(len(busy) == 8 and all(min(b) >= 0 for b in busy), "every lane's occupancy drawn: %s" % [b[:5] for b in busy])


@in_workdir
def case_memory_kernel(work):
    """A collector's recording with the kernel view writes every off-CPU interval's kernel stack in
    full; the report keeps each distinct stack once (issue 37, item 8): 20,000 pins each with its
    sleep, in one of 4 stacks of 11 frames, cost at most 8 MiB more than the same pins without the
    kernel view (4.5 MiB; before: 13.7, every frame copied for every interval), and every pin is
    still joined to its sleep."""
    plain, kernel = os.path.join(work, "plain.vtp"), os.path.join(work, "kernel.vtp")
    subprocess.run([SYNTH, plain, "20000", "8"], check=True, timeout=120)
    subprocess.run([SYNTH, kernel, "20000", "8", "kernel"], check=True, timeout=120)
    _, rss_plain = report_rss([plain])
    out, rss = report_rss([kernel])
    print("the kernel view's recording (%d KiB): peak RSS %d KiB; without it: %d KiB" % (
        os.path.getsize(kernel) >> 10, rss, rss_plain))
    check(b"kernel: sleeping in " in out and b"more kernel frames" in out, "the kernel view in the report: %s" % (
        out[:600]))
    check(rss <= rss_plain + 8 * 1024, "peak RSS %d KiB, over the same pins' without the kernel view (%d KiB) and "
          "8 MiB" % (rss, rss_plain))
    pins = json.loads(vtpin("--format", "json", kernel))["pins"]
    joined = sum(1 for p in pins if p["kernel"] and p["kernel"]["intervals"] == 1)
    check(len(pins) == 20000 and joined == 20000, "every pin joined to its sleep: %d of %d" % (joined, len(pins)))
    stacks = {tuple(p["kernel"]["stack"]) for p in pins}
    check(len(stacks) == 4 and all(len(st) == 11 for st in stacks), "the 4 stacks, whole: %s" % list(stacks)[:1])


@in_workdir
def case_memory_kernel_long(work):
    """One long session of a collector's recording with the kernel view (issue 37, item 8): 1,000,000
    pins, each with its sleep's interval (356 MB). The report sums its ended pins up as it reads them
    here too: the intervals are read first, so that each pin is timed and joined as it is summed
    (cli/report/kernel_fold.h), and the HTML page's lanes time each again as they read the pins again
    (pin_stream.h). The issue's target, a 1 GB recording in under 500 MB, scaled: each format in under
    half the file's size (0.40 to 0.45 times it; before, kept whole, 1.07 to 1.2 times), every pin
    counted, and the kernel view still in the report. (unit.pin_groups checks that every format is the
    same bytes as the session kept whole; JSON and Perfetto, which take 36 and 13 s here, in 150 MiB,
    are left out.)"""
    rec = os.path.join(work, "kernel.vtp")
    subprocess.run([SYNTH, rec, "1000000", "8", "kernel"], check=True, timeout=120)
    size_kib = os.path.getsize(rec) >> 10
    profile = os.path.join(work, "kernel.pb.gz")
    for fmt in ("text", "collapsed", "pprof", "html"):
        out, rss = report_rss(["--format", fmt] + (["-o", profile] if fmt == "pprof" else []) +
                              (["-o", os.path.join(work, "kernel.html")] if fmt == "html" else []) + [rec])
        print("%s: one session of %d KiB with the kernel view, 1,000,000 pins: peak RSS %d KiB" % (fmt, size_kib, rss))
        check(rss < size_kib // 2, "%s: peak RSS %d KiB, not under half the file's %d KiB" % (fmt, rss, size_kib))
        if fmt == "text":
            check(b"1000000 pins at " in out, "every pin counted: %s" % out[:600])
            check(b"kernel: sleeping in " in out and b"more kernel frames" in out, "the kernel view in the report: %s" % (
                out[:600]))
    check(pprof_total(profile, "pins", work) == 1000000, "pprof counts every pin")


def pprof_total(profile, index, home):
    """The total of sample index in a pprof file, as `go tool pprof -top` sums it (exact: -unit=ns)."""
    top = go_pprof(["-top", "-sample_index=" + index, "-unit=ns", profile], home)
    m = re.search(r"of (\d+)(ns)? total", top)
    check(m, "a total in the -top output:\n" + top[:2000])
    return int(m.group(1))


@in_workdir
def case_memory_dense(work):
    """One big session (issue 37, item 8), whose first pin lasts to its end and second never ends:
    the summaries (text, collapsed, pprof) sum its ended pins up as they read them
    (cli/report/pin_groups.h), so 1,000,000 pins cost what 125,000 do, 8 MiB more at most, and all
    of them are counted (before: 170 bytes a pin, 4.3x the file; 230 MiB here, and a 1.2 GB session
    took 4.1 GB); so does the HTML page, whose lanes read the pins again (pin_stream.h), within
    16 MiB (it keeps the occupancy samples it draws: 45 and 55 MiB; before, 244 MiB for 1,000,000).
    JSON and Perfetto write every pin, reading the file again: 250,000 pins in what 125,000 take, 8
    MiB more at most (41-43 MiB each; before, 65 and 37, 63 and 38)."""
    small, big, json_big = (os.path.join(work, n) for n in ("small.vtp", "big.vtp", "json_big.vtp"))
    subprocess.run([SYNTH, small, "125000", "8", "long"], check=True, timeout=120)
    subprocess.run([SYNTH, big, "1000000", "8", "long"], check=True, timeout=120)
    subprocess.run([SYNTH, json_big, "250000", "8", "long"], check=True, timeout=120)
    size_kib = os.path.getsize(big) >> 10
    profile = os.path.join(work, "big.pb.gz")
    for fmt, extra in (("text", []), ("collapsed", []), ("pprof", ["-o", os.path.join(work, "small.pb.gz")]),
                       ("html", ["-o", os.path.join(work, "small.html")])):
        _, rss_small = report_rss(["--format", fmt] + extra + [small])
        out, rss = report_rss(["--format", fmt] + (["-o", profile] if fmt == "pprof" else []) +
                              (["-o", os.path.join(work, "big.html")] if fmt == "html" else []) + [big])
        # the page draws occupancy, kept whole: 8 times the session's samples (2.9 MiB more, and their index)
        more = 16 if fmt == "html" else 8
        print("%s: one session of %d KiB, 1,000,000 pins: peak RSS %d KiB; 125,000 pins: %d KiB" % (
            fmt, size_kib, rss, rss_small))
        check(rss <= rss_small + more * 1024, "%s: peak RSS %d KiB, over 125,000 pins' %d KiB and %d MiB" % (
            fmt, rss, rss_small, more))
        if fmt == "text":
            check(b"1000000 pins at " in out, "every pin counted: %s" % out[:600])
    check(pprof_total(profile, "pins", work) == 1000000, "pprof counts every pin")
    for fmt in ("json", "perfetto"):
        _, rss_small = report_rss(["--format", fmt, "-o", os.devnull, small])
        _, rss = report_rss(["--format", fmt, "-o", os.devnull, json_big])
        print("%s: 250,000 pins: peak RSS %d KiB; 125,000 pins: %d KiB" % (fmt, rss, rss_small))
        check(rss <= rss_small + 8 * 1024, "%s: peak RSS %d KiB, over 125,000 pins' %d KiB and 8 MiB" % (
            fmt, rss, rss_small))

@in_workdir
def case_memory_attach(work):
    """One big session after attach (issue 37, item 8), whose sampled parks the report bounds against
    the monitor waits and the other carriers' parks (attach_bounds.h): it is summed up as read too,
    each park bounded once the pins that can move it are all read (a window 2 s behind the latest
    time read), so 1,000,000 pins cost what 125,000 do, 10 MiB more at most (37 and 30 MiB; before,
    kept whole: 227 MiB, 170 bytes a pin), all of them counted; JSON, which writes every pin, reading
    the file again with the bounds the first read settled: 250,000 pins in what 125,000 take, 10 MiB
    more at most. (unit.pin_groups checks that every format is the same bytes as kept whole.)"""
    small, big, json_big = (os.path.join(work, n) for n in ("small.vtp", "big.vtp", "json_big.vtp"))
    subprocess.run([SYNTH, small, "125000", "8", "attach"], check=True, timeout=120)
    subprocess.run([SYNTH, big, "1000000", "8", "attach"], check=True, timeout=120)
    subprocess.run([SYNTH, json_big, "250000", "8", "attach"], check=True, timeout=120)
    size_kib = os.path.getsize(big) >> 10
    for fmt in ("text", "collapsed"):
        _, rss_small = report_rss(["--format", fmt, small])
        out, rss = report_rss(["--format", fmt, big])
        print("%s: one session after attach of %d KiB, 1,000,000 pins: peak RSS %d KiB; 125,000 pins: %d KiB" % (
            fmt, size_kib, rss, rss_small))
        check(rss <= rss_small + 10 * 1024, "%s: peak RSS %d KiB, over 125,000 pins' %d KiB and 10 MiB" % (
            fmt, rss, rss_small))
        if fmt == "text":
            check(b"1000000 pins at " in out, "every pin counted: %s" % out[:600])
    _, rss_small = report_rss(["--format", "json", "-o", os.devnull, small])
    _, rss = report_rss(["--format", "json", "-o", os.devnull, json_big])
    print("json: 250,000 pins after attach: peak RSS %d KiB; 125,000 pins: %d KiB" % (rss, rss_small))
    check(rss <= rss_small + 10 * 1024, "json: peak RSS %d KiB, over 125,000 pins' %d KiB and 10 MiB" % (
        rss, rss_small))


if __name__ == "__main__":
    raise SystemExit(main({
        "html": case_html,
        "html_hostile": case_html_hostile,
        "collapsed": case_collapsed,
        "perfetto": case_perfetto,
        "big": case_big,
        "cli": case_cli,
        "memory": case_memory,
        "memory_dense": case_memory_dense,
        "memory_attach": case_memory_attach,
        "memory_quiet": case_memory_quiet,
        "memory_kernel": case_memory_kernel,
        "memory_kernel_long": case_memory_kernel_long,
    }))
