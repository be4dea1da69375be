#!/usr/bin/env python3
"""JNA interface calls that pin, on JDK 21 and 25 (JNA is JNI underneath: com.sun.jna.Native.invoke*).

The culprit is the frame that called the JNA interface method, below JNA's JNI method, its Function
and Library$Handler frames and the interface's proxy, marked `<== native (JNA usleep, libc.so.6)`;
in the JSON its `downcall` is {"api": "jna", "symbol": ..., "library": ...}.

Each case is one CTest entry: `test_jna.py CASE JDK`. Needs jna.jar (VTPIN_JNA_JAR, else
/usr/share/java/jna.jar; Debian's libjna-java and libjna-jni) and the JNA fixtures built against it;
without them the case skips, saying why.
- native_block: JnaSleep, usleep through JNA blocks in C (never parks): the watchdog's NATIVE_BLOCK
  pins name JnaSleep.sleepInC and JNA usleep in libc.so.6.
- qsort: JnaQsort, libc qsort through JNA whose Callback comparator sleeps: NATIVE pins whose culprit
  is JnaQsort.sortInC (JNA qsort, libc.so.6), the comparator the blocking operation, JNA's callback
  entry marked as an upcall.
- collector: `vtpin top` names the JNA call of the carriers blocked in it.
- attach: JnaQsort with the agent attached: the same culprit, inferred from the stack, and the same
  function and library (dlsym needs no capability)."""
import os
import signal
import subprocess

from harness import (CLASSES_JNA, VTPIN, Run, attach_when_ready, check, classpath, culprit, describe, jdk_home, main,
                     pins_in, report_json, scheduler, skip, tempdir)


# JNA resolves "c" functions in the global scope, where a preloaded ASan runtime (VTPIN_PRELOAD, the
# sanitized build) comes first: its qsort interceptor is the function called, and named, then.
QSORT_LIB = os.path.basename(os.environ["VTPIN_PRELOAD"]) if os.environ.get("VTPIN_PRELOAD") else "libc.so.6"
LIBRARY = {"usleep": "libc.so.6", "qsort": QSORT_LIB}


def jna_jar():
    jar = os.environ.get("VTPIN_JNA_JAR") or "/usr/share/java/jna.jar"
    if not os.path.isfile(jar):
        skip("jna.jar not found (%s): install libjna-java and libjna-jni (scripts/setup.sh)" % jar)
    if not os.path.isdir(CLASSES_JNA):
        skip("the JNA fixtures are not built (%s): jna.jar was missing when cmake ran" % CLASSES_JNA)
    return jar


def run(jdk, fixture, args, agent_opts=""):
    return Run(int(jdk), fixture, args=args, props=scheduler(2), agent_opts=agent_opts,
               extra_cp=(CLASSES_JNA, jna_jar()))


def frame_at(pin, key):
    i = pin.get(key)
    return pin["stack"][i] if i is not None and 0 <= i < len(pin["stack"]) else None


def check_jna_culprit(p, cls, method, symbol):
    """The culprit is cls.method, an ordinary Java frame right below the interface's proxy frame, and
    carries the JNA call; JNA's JNI method above it is not marked."""
    c = culprit(p)
    check(c and (c["class"], c["method"]) == (cls, method) and c["kind"] == "java" and not c["native"],
          "the culprit is the frame that called the JNA interface, %s.%s: %s" % (cls, method, c))
    dc = c["downcall"]
    check(dc and dc["api"] == "jna" and dc["symbol"] == symbol and
          os.path.basename(dc["library"] or "") == LIBRARY[symbol],
          "the culprit names JNA %s in %s: %s" % (symbol, LIBRARY[symbol], dc))
    i = p["culprit"]
    proxy = p["stack"][i - 1]
    check(proxy["method"] == symbol and "$Proxy" in proxy["class"], "the interface's proxy is above it: %s" % proxy)
    natives = [k for k, f in enumerate(p["stack"][:i]) if f["class"] == "com.sun.jna.Native" and f["native"]]
    check(natives and p["stack"][natives[0]]["method"].startswith("invoke") and
          p["stack"][natives[0]]["kind"] == "native", "JNA's JNI method above it: %s" % p["stack"][:i])
    check(all(f["downcall"] is None for k, f in enumerate(p["stack"]) if k != i), "only the culprit carries it")
    check(all(f["kind"] == "method_handle" for f in p["stack"][natives[0] + 1:i - 1]),
          "Function and Library$Handler are plumbing: %s" % [(f["class"], f["kind"]) for f in p["stack"][:i]])


def report_text(r):
    p = subprocess.run([VTPIN, "report", r.record], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "vtpin report exits 0: %s" % p.stderr)
    return p.stdout


def case_native_block(jdk):
    """usleep through JNA never parks: no JVMTI or JFR event; the watchdog names the JNA call."""
    threads = 2
    r = run(jdk, "JnaSleep", (threads, 300)).run()
    rep = r.report()
    # by culprit: the JDK may block briefly in native code of its own under the fixture's frames
    mine = [p for p in pins_in(rep, "JnaSleep") if (culprit(p) or {}).get("method") == "sleepInC"]
    pins = [p for p in mine if p["reason"] == "NATIVE_BLOCK"]
    check(len(pins) == threads and len(mine) == threads,
          "%d NATIVE_BLOCK pins, got %s" % (threads, [describe(p) for p in mine]))
    for p in pins:
        check_jna_culprit(p, "JnaSleep", "sleepInC", "usleep")
        check(p["stack"][0]["class"] == "com.sun.jna.Native" and p["stack"][0]["method"] == "invokeInt",
              "JNA's JNI method is the top frame: %s" % p["stack"][0])
        check(p["blocking_frame"] is None, "nothing above the call blocks: %s" % p["blocking_frame"])
        check(p["blocked_in"] and "nanosleep" in p["blocked_in"], "the kernel says nanosleep: %s" % p["blocked_in"])
        check(p["duration_ns"] is not None and p["duration_ns"] >= 200e6, "blocked ~300 ms: %s" % p["duration_ns"])
    marker = "JnaSleep.sleepInC(JnaSleep.java:28) <== native (JNA usleep, libc.so.6)"
    check(marker in r.trace_text(), "the trace marks the JNA call:\n" + r.trace_text()[:3000])
    text = report_text(r)
    check("#1  " + marker + "\n    NATIVE_BLOCK: %d pins" % threads in text and
          "      com.sun.jna.Native.invokeInt(Native Method)\n" in text,
          "the text report names the site and JNA usleep:\n" + text[:3000])
    site = rep["sites"][0]
    check(site["reason"] == "NATIVE_BLOCK" and site["count"] == threads and
          site["culprit"]["downcall"] == culprit(pins[0])["downcall"], "the site carries the JNA call: %s" % site)


def check_qsort_pin(p):
    check_jna_culprit(p, "JnaQsort", "sortInC", "qsort")
    b = frame_at(p, "blocking_frame")
    if p["blocking_frame"] == 0 and b and b["method"] != "compare":
        # JDK 24+: a contended entry under the comparator cannot unmount: the entering frame blocks
        check(any((f["class"], f["method"]) == ("JnaQsort", "compare") for f in p["stack"][1:]),
              "a contended entry under the comparator: %s" % p["stack"][:8])
    else:
        check(b and (b["class"], b["method"]) == ("JnaQsort", "compare"),
              "the blocking operation is the comparator: %s" % b)
    up = [k for k, f in enumerate(p["stack"]) if f["kind"] == "upcall_stub"]
    check(up and p["stack"][up[0]]["class"] == "com.sun.jna.CallbackReference$DefaultCallbackProxy" and
          p["blocking_frame"] < up[0] < p["culprit"], "JNA's callback entry is an upcall: %s" % up)


def case_qsort(jdk):
    """qsort through JNA, the Callback comparator sleeps 50 ms per comparison."""
    threads, elements = 4, 3
    r = run(jdk, "JnaQsort", (threads, elements, 50)).run()
    rep = r.report()
    mine = pins_in(rep, "JnaQsort")
    native = [p for p in mine if p["reason"] == "NATIVE"]
    # qsort compares at least n-1 times per array, each comparison sleeps 50 ms under JNA's JNI frame
    check(len(native) >= threads * (elements - 1),
          "at least %d NATIVE pins, got %d: %s" % (threads * (elements - 1), len(native), [p["reason"] for p in mine]))
    # a contended monitor entry in the JDK's or JNA's own code can pin besides (21: MONITOR_ENTER;
    # 24+: CRITICAL_SECTION); never at a JNA culprit of another reason
    others = [p for p in mine if p["reason"] != "NATIVE"]
    check(all(p["reason"] in ("MONITOR_ENTER", "CRITICAL_SECTION") for p in others),
          "only NATIVE pins besides monitor entries: %s" % [describe(p) for p in others])
    for p in native:
        check_qsort_pin(p)
    trace = r.trace_text()
    for text in ("JnaQsort.sortInC(JnaQsort.java:44) <== native (JNA qsort, %s)" % QSORT_LIB,
                 "JnaQsort.compare(JnaQsort.java:33) <== blocking operation",
                 "com.sun.jna.CallbackReference$DefaultCallbackProxy.callback(CallbackReference.java:616) <== upcall"):
        check(text in trace, "the trace shows %r:\n%s" % (text, trace[:3000]))
    text = report_text(r)
    check("#1  JnaQsort.sortInC(JnaQsort.java:44) <== native (JNA qsort, %s)\n    NATIVE: " % QSORT_LIB in text and
          "blocking operation: JnaQsort.compare(JnaQsort.java:33)" in text,
          "the text report names the site, JNA qsort and the blocking operation:\n" + text[:3000])
    site = rep["sites"][0]
    check(site["reason"] == "NATIVE" and site["culprit"]["downcall"] == culprit(native[0])["downcall"] and
          site["stack"][site["blocking_frame"]]["method"] == "compare", "the site carries them too: %s" % site)


def case_collector(jdk):
    """`vtpin top` through the collector, while two carriers are blocked in usleep through JNA."""
    from test_collector import Collector
    jna_jar()  # skips before a collector starts
    coll = Collector().start()
    r = run(jdk, "JnaSleep", (2, 3000), agent_opts="collector=%s" % coll.socket).start()
    try:
        for c in coll.native_blocks(r.proc.pid, 2):
            check(c["reason"] == "NATIVE_BLOCK" and c["culprit"].startswith("JnaSleep.sleepInC(") and
                  c["culprit"].endswith("<== native (JNA usleep, libc.so.6)"), "culprit: %s" % c)
        r.wait(60)
    finally:
        r.kill()
        coll.kill(signal.SIGTERM)


def case_attach(jdk):
    """Attached to a running JVM: the pins are found by sampling, the culprit inferred from the
    stack, and the JNA function and its library named as at startup."""
    jdk = int(jdk)
    home = jdk_home(jdk)
    jar = jna_jar()
    d = tempdir(prefix="vtpin-jna-attach-")
    record, trace = os.path.join(d, "a.vtp"), os.path.join(d, "t.txt")
    cmd = [os.path.join(home, "bin", "java"), "--enable-native-access=ALL-UNNAMED",
           "-cp", ":".join([classpath(jdk), CLASSES_JNA, jar])] + scheduler(2) + ["JnaQsort", "2", "3", "100", "--ready"]
    attach_when_ready(cmd, "JnaQsort", d, "record=%s,tracefile=%s" % (record, trace))
    rep = report_json(record)
    check(rep["jvm"]["mode"] == "attach", "attach mode: %s" % rep["jvm"])
    pins = [p for p in pins_in(rep, "JnaQsort") if p["reason"] == "NATIVE"]
    # 2 threads x at least 2 comparisons of 100 ms; back-to-back comparisons may look like one pin
    # to the 10 ms sampler
    check(len(pins) >= 2 and len({p["vthread"]["id"] for p in pins}) == 2,
          "NATIVE pins of both threads found by sampling, got %d: %s" % (
              len(pins), [p["reason"] for p in pins_in(rep, "JnaQsort")]))
    for p in pins:
        check_qsort_pin(p)
    with open(trace) as f:
        check("JnaQsort.sortInC(JnaQsort.java:44) <== native (JNA qsort, %s)" % QSORT_LIB in f.read(),
              "the trace marks the JNA call")


if __name__ == "__main__":
    raise SystemExit(main({"native_block": case_native_block, "qsort": case_qsort, "collector": case_collector,
                           "attach": case_attach}))
