#!/usr/bin/env python3
"""Regenerates the seed corpus in corpus/<target>/ from real runs: the agent on
fixture JVMs (JDK 21, where monitors pin), the collector's own recording of an
agent connection, and the Query frames `vtpin status` / `vtpin top` send.

  VTPIN_BUILD=build JAVA21_HOME=... tests/fuzz/make_corpus.py
  tests/fuzz/make_corpus.py --replayed   (only the seeds made from tests/corpus and the synthetic one: no JVM)

Seeds stay small (each under MAX bytes, cut at a frame boundary; the whole
corpus well under 1 MB). Not run by CI: the corpus is committed."""
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "jvm"))
from harness import VTPIN, Run, scheduler  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC = b"VTPIN\0\0\1"
MAX = 24 * 1024


def frames(stream):
    """The whole frames of a stream without magic."""
    out, off = [], 0
    while off + 4 <= len(stream):
        n = struct.unpack_from("<I", stream, off)[0]
        if off + 4 + n > len(stream):
            break
        out.append(stream[off:off + 4 + n])
        off += 4 + n
    return out


def cut(fs, limit):
    """As many leading frames as fit in limit bytes."""
    out = b""
    for f in fs:
        if len(out) + len(f) > limit:
            break
        out += f
    return out


def agent_recording(work, name, fixture, args=(), props=(), opts=""):
    r = Run(21, fixture, args=args, props=props, agent_opts=opts, workdir=os.path.join(work, name))
    os.makedirs(r.dir)
    r.run(timeout=120)
    with open(r.record, "rb") as f:
        return f.read()


def ask(sock, query):
    """The collector's whole answer (a QueryReply frame) to one Query frame."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(sock)
    s.sendall(query)
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return data


def collector_recording(work, name, fixture, args, props, opts, query):
    """The collector's recording of one agent connection (what an agent sends on the wire),
    and the collector's answer to query while the JVM ran."""
    d = os.path.join(work, name)
    os.makedirs(d)
    sock = os.path.join(d, "c.sock")
    coll = subprocess.Popen([VTPIN, "collector", "--socket", sock, "--dir", os.path.join(d, "rec"),
                             "--alert-after", "100ms"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(500):
            if os.path.exists(sock):
                break
            time.sleep(0.02)
        r = Run(21, fixture, args=args, props=props, agent_opts="collector=" + sock + opts,
                workdir=os.path.join(d, "jvm"))
        os.makedirs(r.dir)
        r.start()
        time.sleep(1.0)
        reply = ask(sock, query)
        r.wait(timeout=120)
        time.sleep(0.5)
    finally:
        coll.terminate()
        coll.wait(timeout=10)
    recs = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(d, "rec")) for f in fs]
    with open(recs[0], "rb") as f:
        return f.read(), reply


def query_frames(work):
    """The frames `vtpin status` and `vtpin top` send, caught by a fake collector."""
    sock = os.path.join(work, "q.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(sock)
    srv.listen(4)
    got = []

    def serve():
        for _ in range(3):
            c, _ = srv.accept()
            c.settimeout(5)
            data = b""
            while len(frames(data)) == 0:
                chunk = c.recv(4096)
                if not chunk:
                    break
                data += chunk
            got.append(data)
            c.close()

    t = threading.Thread(target=serve)
    t.start()
    for cmd in (["status", "--json"], ["status", "--json", "--pid", "4242"], ["top", "--once", "--json"]):
        subprocess.run([VTPIN] + cmd[:1] + ["--socket", sock] + cmd[1:], capture_output=True, timeout=30)
    t.join(timeout=30)
    srv.close()
    return got


def rotated_recording(work):
    """The agent's files of a rotated recording (record_max=64k), the newest three, oldest first: each a
    list of frames."""
    r = Run(21, "StressPins", args=("native", 1500, 1), props=scheduler(4, 4),
            agent_opts="threshold=0,record_max=64k,record_keep=10", workdir=os.path.join(work, "rotated"))
    os.makedirs(r.dir)
    r.run(timeout=120)
    rotated = sorted((f for f in os.listdir(r.dir) if f.startswith("pins.vtp.")), key=lambda f: -int(f.rsplit(".", 1)[1]))
    parts = []
    for name in rotated[-2:] + ["pins.vtp"]:
        with open(os.path.join(r.dir, name), "rb") as f:
            parts.append(frames(f.read()[len(MAGIC):]))
    return parts


def rotated_seed(parts):
    """Those files cut short, each still ending as it did (rotating out), concatenated: the report
    reads them as one session."""
    out = b""
    for fs in parts:
        out += MAGIC + cut(fs, MAX // 4) + b"".join([f for f in fs if b"rotated_out" in f][-1:])
    return out


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def replayed_seeds():
    """Seeds made from the report's corpus (tests/corpus, recordings captured from real runs), no JVM
    needed: sessions of several kinds in one file, the first ones given back as the reader goes
    on (a session with blockers, one with the kernel view's intervals)."""
    def real(name):
        with open(os.path.join(HERE, "..", "corpus", name + ".vtp"), "rb") as f:
            return frames(f.read()[len(MAGIC):])
    write("recording", "sessions-blockers-kernel", MAGIC + cut(real("blockers"), MAX // 4) + MAGIC +
          cut(real("alternating_kernel"), MAX // 2) + MAGIC + cut(real("blockers"), MAX // 4))
    # a session after attach of 200 pins over 50 s, no occupancy: the report bounds its sampled parks
    # in windows as it reads them (cli/report/attach_bounds.h), which the fuzzer then bends
    synth = os.path.join(os.path.dirname(VTPIN), "tests", "unit", "synth_recording")
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "attach.vtp")
        subprocess.run([synth, path, "200", "4", "attach", "quiet", "bare"], check=True, timeout=60)
        with open(path, "rb") as f:
            write("recording", "attach-windows", MAGIC + cut(frames(f.read()[len(MAGIC):]), MAX))


def main():
    if sys.argv[1:] == ["--replayed"]:  # only the seeds above
        replayed_seeds()
        return
    replayed_seeds()
    work = tempfile.mkdtemp(prefix="vtpin-corpus-")
    try:
        recs = {
            "jnisleep": agent_recording(work, "jnisleep", "JniSleep", (2, 30), scheduler(2)),
            "native_block": agent_recording(work, "native_block", "NativeBlock", ("nanosleep", 1, 300), scheduler(2)),
            "waitpin": agent_recording(work, "waitpin", "WaitPin", (), scheduler(2)),
            "contended": agent_recording(work, "contended", "Contended", (4, 3, 2), (), "threshold=0"),
            "repro": agent_recording(work, "repro", "Repro", (), scheduler(4, 4)),
        }
        rotated = rotated_recording(work)
        queries = query_frames(work)
        # sampled occupancy (CarrierSample), and exact (Transitions) with a starvation Alert
        wire, reply = collector_recording(work, "coll", "NativeBlock", ("read", 2, 300), scheduler(2), "", queries[2])
        alerted, reply2 = collector_recording(work, "alert", "Repro", (), scheduler(2, 2), ",occupancy=exact",
                                              queries[0])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for t in ("recording", "session", "query"):  # regress-* inputs (once crashed) stay
        d = os.path.join(HERE, "corpus", t)
        for f in os.listdir(d) if os.path.isdir(d) else ():
            if not f.startswith("regress-"):
                os.unlink(os.path.join(d, f))
    recs["collector"] = wire
    recs["collector-alert"] = alerted
    for name, data in recs.items():
        fs = frames(data[len(MAGIC):])
        body = cut(fs, MAX)
        write("recording", name, MAGIC + body)
        write("session", name, b"\x3f" + body)  # 64-byte reads
        write("session", name + "-bytewise", b"\x00" + cut(fs, 2048))  # 1-byte reads
    whole = frames(recs["jnisleep"][len(MAGIC):])
    write("recording", "concatenated", MAGIC + cut(whole, 4096) + MAGIC + cut(whole, 4096))
    write("recording", "cut-mid-frame", (MAGIC + cut(whole, 4096))[:-3])
    write("recording", "rotated", rotated_seed(rotated))
    write("recording", "zero-tail", MAGIC + cut(whole, 4096) + b"\0" * 512)
    # a QueryReply where a reader or the collector does not expect one
    write("recording", "query-reply", MAGIC + cut(frames(alerted[len(MAGIC):]), 2048) + cut(frames(reply), MAX))
    write("session", "query-reply", b"\x3f" + cut(frames(alerted[len(MAGIC):]), 2048) + reply2[:MAX])
    wire_fs = frames(wire[len(MAGIC):]) + frames(alerted[len(MAGIC):])[:200]
    for i, q in enumerate(queries):
        write("session", "query-%d" % i, b"\xff" + q)
        # agents described, then asked about: queries between and after
        write("query", "collector-%d" % i, cut(wire_fs, MAX // 2) + q + cut(wire_fs[:40], 4096) + q)
    for name in ("jnisleep", "repro", "native_block"):
        fs = frames(recs[name][len(MAGIC):])
        write("query", name, cut(fs, 8192) + b"".join(queries))
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(os.path.join(HERE, "corpus"))
                for f in fs)
    print("corpus: %d bytes" % total)


if __name__ == "__main__":
    main()
