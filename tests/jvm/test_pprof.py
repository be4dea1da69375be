#!/usr/bin/env python3
"""Pinned time as pprof, read by Debian's `go tool pprof` (package golang-go), with real
JVMs and the real agent: JDK 21 Repro (MONITOR pins at Repro.settle), JDK 25 JniSleep
(NATIVE pins in JniSleep.sleepInNative, which calls back into Java to sleep).

  file JDK   two JVMs recorded, the recordings concatenated, `vtpin report --format pprof`:
             `-top -sample_index=pinned` ranks the culprit with the JSON report's pinned
             time (exactly), `-sample_index=pins` its pins; `-raw` shows the labels
             reason, origin, carrier, pid and app of both JVMs; `-traces` shows the native
             code as a frame of its own ("[native: JNI libvtpinfixture.so]") right above
             the JNI method, below the Java code it called back (on 25 a third JVM, FfmQsort:
             "[native: FFM downcall qsort, libc.so.6]" above the downcall stub, below the
             upcall that sleeps); --session 1 has the first JVM alone; standard output
             holds the same bytes, a terminal gets a usage error instead
  live JDK   a collector with --metrics, a JVM streaming to it (and on 25 an FFM qsort JVM
             after it, its native frame above the downcall stub): `go tool pprof -top
             http://.../debug/pprof/pinned?seconds=60` ranks the culprit with the pinned
             time of the collector's own recording of that JVM; the answer is gzip,
             application/octet-stream; a bad seconds= (abc, -1, 0, huge, 5x, over the
             window) gets 400 with the reason; /metrics still passes promtool
  hogs JDK   CarrierHog spin 2 600 (two carrier hogs, nothing pinned): the profile's sample
             types are pinned, pins, hogged; `-top -sample_index=hogged` ranks CarrierHog.spin
             with the JSON report's hogged time (exactly), `-raw` labels them reason HOG
"""
import os
import pty
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request

from harness import VTPIN, Failure, Run, check, main, report_json, scheduler, skip, tempdir, for_jdk
from test_metrics import MetricsCollector, need, promtool_check

# fixture, args, parallelism, the culprit ("Class.method" as pprof names it), its reason
FIXTURES = {
    21: ("Repro", (), 4, "Repro.settle", "MONITOR"),
    25: ("JniSleep", (4, 150), 2, "JniSleep.sleepInNative", "NATIVE"),
}
NATIVE_FRAME = "[native: JNI libvtpinfixture.so]"
FFM_FRAME = "[native: FFM downcall qsort, libc.so.6]"


def go_pprof(args, home):
    """`go tool pprof ARGS` with a HOME and a temp dir of its own; its stdout."""
    go = shutil.which("go")
    if not go:
        skip("go not installed (Debian package golang-go; scripts/setup.sh installs it)")
    env = dict(os.environ, HOME=home, PPROF_TMPDIR=home, GOCACHE=os.path.join(home, "gocache"), GOFLAGS="")
    env.pop("LD_PRELOAD", None)  # the ASan runtime the harness preloads is for vtpin's programs, not Go's
    p = subprocess.run([go, "tool", "pprof"] + args, capture_output=True, text=True, timeout=120, env=env)
    check(p.returncode == 0, "go tool pprof %s exits 0, not %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def top_cum(top, function):
    """The cumulative value of function in `go tool pprof -top` output (printed with -unit=ns: exact)."""
    for line in top.splitlines():
        cols = line.split()
        if len(cols) >= 6 and " ".join(cols[5:]) == function:
            m = re.fullmatch(r"(\d+)(ns)?", cols[3])
            check(m, "a value in ns: %r" % line)
            return int(m.group(1))
    raise Failure("%s not in the -top output:\n%s" % (function, top))


def frames_named(pin):
    return ["%s.%s" % (f["class"], f["method"]) for f in pin.get("stack") or []]


def json_pinned(paths, function):
    """Pinned ns and pin count of the pins whose stack holds function, from the JSON reports of paths."""
    ns = count = 0
    for path in paths:
        for p in report_json(path)["pins"]:
            if function in frames_named(p):
                ns += p["duration_ns"] or 0
                count += 1
    return ns, count


def check_same(got, want, what):
    """pprof's pinned time is the pins' durations summed, as the JSON report has them: exact, no tolerance."""
    check(want > 0 and got == want, "%s: pprof says %d ns, the JSON report %d ns" % (what, got, want))


def case_file(jdk):
    jdk = int(jdk)
    fixture, args, par, culprit, reason = for_jdk(FIXTURES, jdk)
    d = tempdir(prefix="vtpin-pprof-test-")
    runs = [Run(jdk, fixture, args=args, props=scheduler(par), workdir=os.path.join(d, "a")),
            Run(jdk, "JniSleep", args=(2, 100), props=scheduler(2), workdir=os.path.join(d, "b"))]
    if jdk >= 22:  # and an FFM downcall that calls back (qsort's comparator sleeps)
        runs.append(Run(jdk, "FfmQsort", args=(2, 3, 50), props=scheduler(2), workdir=os.path.join(d, "c")))
    for r in runs:
        os.makedirs(r.dir, exist_ok=True)
        r.run()
    both = os.path.join(d, "both.vtp")
    with open(both, "wb") as out:
        for r in runs:
            with open(r.record, "rb") as f:
                out.write(f.read())
    profile = os.path.join(d, "pins.pb.gz")
    p = subprocess.run([VTPIN, "report", "--format", "pprof", "-o", profile, both], capture_output=True, text=True,
                       timeout=60)
    check(p.returncode == 0, "vtpin report --format pprof exits 0, not %d: %s" % (p.returncode, p.stderr))
    with open(profile, "rb") as f:
        check(f.read(2) == b"\x1f\x8b", "the profile is gzipped")
    home = os.path.join(d, "home")
    os.makedirs(home)

    top = go_pprof(["-top", "-sample_index=pinned", "-unit=ns", profile], home)
    want_ns, want_pins = json_pinned([runs[0].record], culprit)
    if fixture == "JniSleep":  # the second JVM's pins are in the same functions
        more_ns, more_pins = json_pinned([runs[1].record], culprit)
        want_ns, want_pins = want_ns + more_ns, want_pins + more_pins
    print("go tool pprof -top -sample_index=pinned:\n" + "\n".join(top.splitlines()[:12]))
    check_same(top_cum(top, culprit), want_ns, "%s's pinned time" % culprit)
    check("Type: pinned" in top, "the default sample type is pinned:\n" + top)
    pins = go_pprof(["-top", "-sample_index=pins", profile], home)
    check(top_cum(pins, culprit) == want_pins, "%s: %d pins, as the JSON report counts" % (culprit, want_pins))
    # the native code of the second JVM's JniSleep, a frame of its own
    native_ns, _ = json_pinned([runs[1].record], "JniSleep.sleepInNative")
    check(top_cum(top, NATIVE_FRAME) >= native_ns * 0.98, "the native frame holds JniSleep's time:\n" + top)

    raw = go_pprof(["-raw", profile], home)
    pids = {str(runs[0].proc.pid), str(runs[1].proc.pid)}
    for pid in pids:
        check("pid:[%s]" % pid in raw, "-raw shows pid %s:\n%s" % (pid, raw[:3000]))
    check("app:[%s]" % fixture in raw and "app:[JniSleep]" in raw, "-raw shows the apps:\n" + raw[:3000])
    check("reason:[%s]" % reason in raw and "reason:[NATIVE]" in raw, "-raw shows the reasons:\n" + raw[:3000])
    check("origin:[app]" in raw, "-raw shows the origin:\n" + raw[:3000])
    check(re.search(r"carrier:\[ForkJoinPool-\d+-worker-\d+\]", raw), "-raw shows the carriers:\n" + raw[:3000])

    # --session N: that JVM alone
    first = os.path.join(d, "first.pb.gz")
    p = subprocess.run([VTPIN, "report", "--format", "pprof", "--session", "1", "-o", first, both],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "vtpin report --format pprof --session 1 exits 0, not %d: %s" % (p.returncode, p.stderr))
    raw1 = go_pprof(["-raw", first], home)
    check("pid:[%d]" % runs[0].proc.pid in raw1 and "pid:[%d]" % runs[1].proc.pid not in raw1,
          "--session 1 is the first JVM alone:\n" + raw1[:2000])

    # to standard output: the same bytes when it is a file or a pipe; refused on a terminal
    p = subprocess.run([VTPIN, "report", "--format", "pprof", both], capture_output=True, timeout=60)
    with open(profile, "rb") as f:
        check(p.returncode == 0 and p.stdout == f.read(), "standard output holds the same profile as -o")
    leader, follower = pty.openpty()
    try:
        p = subprocess.run([VTPIN, "report", "--format", "pprof", both], stdout=follower, stderr=subprocess.PIPE,
                           text=True, timeout=60)
    finally:
        os.close(follower)
        os.close(leader)
    check(p.returncode == 2 and "-o FILE" in p.stderr, "a terminal gets a usage error (2), not binary: %d %s" % (
        p.returncode, p.stderr))

    # where the native frame sits: between the JNI method and the Java code it called back
    traces = go_pprof(["-traces", profile], home)
    found = ffm_found = False
    for block in traces.split("-----------+"):
        names = []
        for line in block.splitlines()[1:]:
            text = line.strip()
            if not text or (re.match(r"^\w+:\s", text) and not names):
                continue  # a label line ("reason:  NATIVE"), before the frames
            names.append(re.sub(r"^\S+\s+", "", text) if not names else text)  # the first has the value
        if NATIVE_FRAME in names:
            i = names.index(NATIVE_FRAME)
            check(0 < i < len(names) - 1 and names[i - 1] == "JniSleep.sleepCallback" and
                  names[i + 1] == "JniSleep.sleepInNative",
                  "the native frame is above the JNI method, below its callback: %s" % names)
            found = True
        if FFM_FRAME in names:
            i = names.index(FFM_FRAME)
            check(0 < i < len(names) - 1 and names[i + 1].startswith("jdk.internal.foreign.abi.DowncallStub") and
                  "FfmQsort.sortInC" in names[i + 1:] and "FfmQsort.compare" in names[:i],
                  "the FFM frame is above the downcall stub, below the upcall: %s" % names)
            ffm_found = True
    check(found, "a trace with the native frame:\n" + traces[:3000])
    check(ffm_found or jdk < 22, "a trace with the FFM frame:\n" + traces[:6000])


def case_hogs(jdk):
    jdk = int(jdk)
    d = tempdir(prefix="vtpin-pprof-hogs-")
    r = Run(jdk, "CarrierHog", args=("spin", 2, 600), props=scheduler(2), workdir=os.path.join(d, "jvm"))
    os.makedirs(r.dir)
    r.run()
    hogs = r.report()["hogs"]
    want_ns = sum(h["duration_ns"] or 0 for h in hogs if "CarrierHog.spin" in frames_named(h))
    check(len(hogs) == 2 and want_ns > 0, "two hogs in CarrierHog.spin: %s" % hogs)
    profile = os.path.join(d, "hogs.pb.gz")
    p = subprocess.run([VTPIN, "report", "--format", "pprof", "-o", profile, r.record], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, "vtpin report --format pprof exits 0, not %d: %s" % (p.returncode, p.stderr))
    home = os.path.join(d, "home")
    os.makedirs(home)
    raw = go_pprof(["-raw", profile], home)
    types = re.search(r"(?m)^Samples:\n(.*)$", raw)
    check(types and types.group(1).split() == ["pinned/nanoseconds[dflt]", "pins/count", "hogged/nanoseconds"],
          "the sample types are pinned, pins, hogged:\n" + raw[:2000])
    check("reason:[HOG]" in raw and re.search(r"carrier:\[ForkJoinPool-\d+-worker-\d+\]", raw),
          "-raw labels the hogs reason HOG, with their carrier:\n" + raw[:3000])
    top = go_pprof(["-top", "-sample_index=hogged", "-unit=ns", profile], home)
    print("go tool pprof -top -sample_index=hogged:\n" + "\n".join(top.splitlines()[:12]))
    check("Type: hogged" in top, "the hogged sample type:\n" + top)
    check_same(top_cum(top, "CarrierHog.spin"), want_ns, "CarrierHog.spin's hogged time")
    shutil.rmtree(d, ignore_errors=True)


def fetch(url, timeout=10):
    """(status, headers, body bytes)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def case_live(jdk):
    jdk = int(jdk)
    fixture, args, par, culprit, _ = for_jdk(FIXTURES, jdk)
    need("promtool")
    d = tempdir(prefix="vtpin-pprof-live-")
    home = os.path.join(d, "home")
    os.makedirs(home)
    coll = MetricsCollector(d)
    r = None
    try:
        coll.start()
        base = "http://127.0.0.1:%d/debug/pprof/pinned" % coll.port
        os.makedirs(os.path.join(d, "jvm"))
        r = Run(jdk, fixture, args=args, props=scheduler(par), agent_opts="collector=" + coll.socket,
                workdir=os.path.join(d, "jvm")).start()
        r.wait(120)
        if jdk >= 22:  # a second JVM, an FFM downcall: its native frame from the PinStart's downcall
            os.makedirs(os.path.join(d, "ffm"))
            Run(jdk, "FfmQsort", args=(2, 3, 50), props=scheduler(2), agent_opts="collector=" + coll.socket,
                workdir=os.path.join(d, "ffm")).run()
        # once the collector has seen the JVM go, its recording is whole: the pinned time to expect
        deadline = time.monotonic() + 30
        gone = r'vtpin_jvm_connected\{jvm="%d"[^}]*\} 0' % r.proc.pid
        while not re.search(gone, coll.scrape()):
            check(time.monotonic() < deadline, "the collector did not see JVM %d go" % r.proc.pid)
            time.sleep(0.2)
        recs = []
        deadline = time.monotonic() + 30
        while not recs and time.monotonic() < deadline:
            time.sleep(0.2)
            for root, _, files in os.walk(os.path.join(d, "sessions")):
                recs += [os.path.join(root, f) for f in files if f.endswith(".vtp") and f.startswith(str(r.proc.pid))]
        check(recs, "the collector recorded the JVM")
        want_ns, _ = json_pinned(recs, culprit)
        # every pin has ended once the JVM is gone: wait until the profile has them all
        deadline = time.monotonic() + 30
        while True:
            top = go_pprof(["-top", "-unit=ns", base + "?seconds=60"], home)
            try:
                got = top_cum(top, culprit)
            except Failure:
                got = 0
            if got == want_ns or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        print("go tool pprof -top %s?seconds=60:\n%s" % (base, "\n".join(top.splitlines()[:12])))
        check_same(got, want_ns, "%s's pinned time at the collector" % culprit)
        raw = go_pprof(["-raw", base], home)  # no seconds=: the whole window
        check("pid:[%d]" % r.proc.pid in raw and "app:[%s]" % fixture in raw, "labels name the JVM:\n" + raw[:3000])
        if jdk >= 22:
            check("app:[FfmQsort]" in raw, "both JVMs in one profile:\n" + raw[:3000])
            traces = go_pprof(["-traces", base], home)
            check(re.search(re.escape(FFM_FRAME) + r"\n\s+jdk\.internal\.foreign\.abi\.DowncallStub", traces),
                  "the FFM frame above the downcall stub:\n" + traces[:6000])

        status, headers, body = fetch(base + "?seconds=60")
        check(status == 200 and body[:2] == b"\x1f\x8b", "200 and gzip: %d %r" % (status, body[:20]))
        check(headers.get("Content-Type") == "application/octet-stream", "content type %s" % headers.get(
            "Content-Type"))
        # 5%00x: a NUL byte decoded, which a C string would read as "5"
        for bad in ("abc", "-1", "0", "99999999999999999999", "5x", "", "3600", "5%00x", "%00"):
            status, _, body = fetch(base + "?seconds=" + bad)
            text = body.decode(errors="replace")
            check(status == 400 and "seconds" in text, "seconds=%s: 400 with a reason, not %d %r" % (bad, status, text))
        promtool_check(coll.scrape(), "with /debug/pprof/pinned served too")
    finally:
        if r:
            r.kill()
        coll.stop()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main({"file": case_file, "live": case_live, "hogs": case_hogs}))
