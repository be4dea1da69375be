#!/usr/bin/env python3
"""Nothing lost silently: a full disk under record= or tracefile=, events the
collector missed, a full method table. The agent says what it could not do,
counts it, the JVM runs on, and `vtpin report` shows it."""
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time

from harness import AGENT, CLASSES, FIXTURE_LIB, VTPIN, Run, check, culprit, jdk_home, main, report_json, report_json_of_rotated, scheduler, skip, tempdir
from collector_fixture import socket_fds
from test_collector import Collector, streaming
from test_views import hostile_names, hostile_pins


def report_text(path):
    p = subprocess.run([VTPIN, "report", path], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "vtpin report failed (%d): %s" % (p.returncode, p.stderr))
    return p.stdout, p.stderr


def java(home, agent_opts, *args, timeout=120):
    cmd = [os.path.join(home, "bin", "java"), "-agentpath:%s=%s" % (AGENT, agent_opts),
           "--enable-native-access=ALL-UNNAMED", "-Djava.library.path=" + FIXTURE_LIB, "-cp", CLASSES] + \
        scheduler(4) + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def case_disk_full(jdk):
    """record= on a file system that fills up: one error line naming the file and ENOSPC (on
    stderr and in log=), the JVM exits 0, the report says the writes failed, not that it was killed."""
    home = jdk_home(int(jdk))
    # 12 KiB free (8 of them the agent's reserve): the recording of 200 pins needs far more
    with SmallDisk(12 * 1024) as disk:
        record = os.path.join(disk.path, "pins.vtp")
        log = os.path.join(disk.tmp, "agent.log")
        p = java(home, "record=%s,log=%s" % (record, log), "JniSleep", "200", "40")
        check(p.returncode == 0, "the JVM runs on and exits 0 with a full disk (%d): %s" % (p.returncode, p.stderr))
        check("fixture JniSleep done" in p.stdout, "the program ran to its end: " + p.stdout[:500])
        lines = [l for l in p.stderr.splitlines() if "cannot write the recording" in l]
        check(len(lines) == 1, "said once on stderr: %s" % p.stderr)
        check(record in lines[0] and "No space left on device" in lines[0], "names the file and why: " + lines[0])
        with open(log) as f:
            logged = [l for l in f.read().splitlines() if "cannot write the recording" in l]
        check(len(logged) == 1 and "No space left on device" in logged[0], "said once in log= too: %s" % logged)

        rep = report_json(record)
        rec, st = rep["recording"], rep["stats"]
        print("recording %s; stats %s; %d pins in the file" % (rec, st, len(rep["pins"])))
        check(rec["write_failed"] is True and rec["complete"] is False, "JSON says the writes failed: %s" % rec)
        check(st["write_failures"] >= 1 and st["events_unwritten"] > 0, "counted: %s" % st)
        # >= : on 25 the JDK may add a pin of its own (a CI run saw 201 under ASan)
        check(st["pins_reported"] >= 200, "the agent still saw every pin: %s" % st)
        check(len(rep["pins"]) < 200, "the file holds only part of them: %d" % len(rep["pins"]))
        codes = [n["code"] for n in rep["notices"]]
        check("output.record.write_failed" in codes, "the notice is in the file: %s" % codes)
        out, err = report_text(record)
        header = [l for l in out.splitlines() if l.strip().startswith("recording")][0]
        check("ends early" in header and "could not write" in header and "killed" not in header,
              "the text report says the writes failed: " + header)
        check("writes failed" in out and "events unwritten" in out, "counters shown:\n" + out[-800:])
        check("No space left on device" in err, "report warns with the agent's reason: " + err)


class SmallDisk:
    """A 64 KiB tmpfs (root only) filled to leave `free` bytes; umounted and removed at exit."""

    def __init__(self, free):
        if os.geteuid() != 0:
            skip("mounting a small tmpfs needs root")
        self.tmp = tempdir(prefix="vtpin-small-")
        self.path = os.path.join(self.tmp, "small")
        os.mkdir(self.path)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", self.path], capture_output=True,
                           text=True)
        if p.returncode != 0:
            shutil.rmtree(self.tmp)
            skip("cannot mount a tmpfs here: " + p.stderr.strip())
        try:
            with open(os.path.join(self.path, "filler"), "wb") as f:
                f.write(b"\0" * (64 * 1024 - free))
        except OSError:
            pass  # full: what the 0-free case wants
        st = os.statvfs(self.path)
        print("tmpfs: %d bytes free" % (st.f_bavail * st.f_frsize))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        subprocess.run(["umount", self.path])
        shutil.rmtree(self.tmp)


def case_disk_nearly_full(jdk):
    """record= on a disk with 4 KiB free: no room for the agent's 8 KiB reserve, so a later failed
    write may find no room to say so in the file. The agent says at the start, in the recording
    right after the Hello, that the disk is nearly full; the report then says the writes probably
    failed on a full disk, not that the JVM was killed."""
    home = jdk_home(int(jdk))
    with SmallDisk(4 * 1024) as disk:
        record = os.path.join(disk.path, "pins.vtp")
        p = java(home, "record=%s" % record, "JniSleep", "200", "40")
        check(p.returncode == 0, "the JVM runs on and exits 0 (%d): %s" % (p.returncode, p.stderr))
        check("fixture JniSleep done" in p.stdout, "the program ran to its end: " + p.stdout[:500])
        warned = [l for l in p.stderr.splitlines() if "nearly full" in l]
        check(len(warned) == 1 and record in warned[0], "one warning at the start names the file: %s" % p.stderr)
        rep = report_json(record)
        rec = rep["recording"]
        print("recording %s; stats %s; %d pins in the file" % (rec, rep["stats"], len(rep["pins"])))
        codes = [n["code"] for n in rep["notices"]]
        check("output.record.disk_nearly_full" in codes, "the warning is in the file: %s" % codes)
        check(rec["disk_nearly_full"] is True, "JSON: disk_nearly_full: %s" % rec)
        check(rec["write_failed"] is True and rec["complete"] is False, "JSON says the writes failed: %s" % rec)
        check(len(rep["pins"]) < 200, "the file holds only part of the pins: %d" % len(rep["pins"]))
        out, err = report_text(record)
        header = [l for l in out.splitlines() if l.strip().startswith("recording")][0]
        check("ends early" in header and "killed" not in header and "no end marker (the JVM" not in header,
              "the text report blames the disk, not a killed JVM: " + header)
        check("full disk" in header or "could not write" in header, "says the writes failed: " + header)
        check("killed" not in err, "the warning does not blame a kill: " + err)


def case_disk_no_room(jdk):
    """record=, tracefile= and log= on a disk with no room at all: the agent is a guest, so the
    JVM starts and runs the program; one line says each output cannot be written and why."""
    home = jdk_home(int(jdk))
    with SmallDisk(0) as disk:
        record, trace, log = (os.path.join(disk.path, n) for n in ("pins.vtp", "trace.txt", "agent.log"))
        p = java(home, "record=%s,tracefile=%s,log=%s" % (record, trace, log), "JniSleep", "20", "40")
        print(p.stderr)
        check(p.returncode == 0, "the JVM starts and exits 0 with no room for the recording (%d): %s" % (
            p.returncode, p.stderr))
        check("fixture JniSleep done" in p.stdout, "the program ran to its end: " + p.stdout[:500])
        lines = [l for l in p.stderr.splitlines() if "cannot write the recording" in l]
        check(len(lines) == 1 and record in lines[0] and "No space left on device" in lines[0] and
              "JVM runs on" in lines[0], "one line names the recording and why: %s" % p.stderr)
        check(not os.path.exists(record), "no empty file left to be taken for a recording")
        check(len([l for l in p.stderr.splitlines() if "cannot write the log" in l]) == 1,
              "the log that cannot be written is said once on stderr: %s" % p.stderr)
        check("detecting pins" in p.stderr, "the agent's messages come to stderr instead: %s" % p.stderr)
        check(not any("detecting pins" in l and "record" in l for l in p.stderr.splitlines()),
              "the agent does not claim a recording it does not write: %s" % p.stderr)
    # a bad path is still a startup error, as a bad option is
    p = java(home, "record=/nonexistent-dir/pins.vtp", "-version")
    check(p.returncode != 0 and "cannot open record file" in p.stderr, "a missing directory stops the JVM: %d %s" % (
        p.returncode, p.stderr))


def case_log_full(jdk):
    """log=/dev/full: said once on stderr, the messages go to stderr, the JVM runs on."""
    home = jdk_home(int(jdk))
    tmp = tempdir(prefix="vtpin-logfull-")
    try:
        record = os.path.join(tmp, "pins.vtp")
        p = java(home, "log=/dev/full,record=%s" % record, "JniSleep", "20", "40")
        check(p.returncode == 0, "the JVM runs on (%d): %s" % (p.returncode, p.stderr))
        lines = [l for l in p.stderr.splitlines() if "cannot write the log" in l]
        check(len(lines) == 1 and "/dev/full" in lines[0] and "No space left on device" in lines[0],
              "said once on stderr, naming the file and why: %s" % p.stderr)
        check("detecting pins" in p.stderr, "the messages go to stderr instead: %s" % p.stderr)
        check(report_json(record)["recording"]["complete"], "the recording is whole")
    finally:
        shutil.rmtree(tmp)


def case_trace_full(jdk):
    """tracefile=/dev/full: said once, counted, in the recording; the JVM runs on."""
    home = jdk_home(int(jdk))
    tmp = tempdir(prefix="vtpin-tracefull-")
    try:
        record = os.path.join(tmp, "pins.vtp")
        p = java(home, "tracefile=/dev/full,record=%s" % record, "JniSleep", "20", "40")
        check(p.returncode == 0, "the JVM runs on (%d): %s" % (p.returncode, p.stderr))
        lines = [l for l in p.stderr.splitlines() if "cannot write the trace" in l]
        check(len(lines) == 1 and "/dev/full" in lines[0] and "No space left on device" in lines[0],
              "said once, naming the file and why: %s" % p.stderr)
        rep = report_json(record)
        check(rep["stats"]["write_failures"] >= 1, "trace write failures counted: %s" % rep["stats"])
        check(any(n["code"] == "output.trace.write_failed" for n in rep["notices"]), "notice recorded")
        check(rep["recording"]["complete"] and not rep["recording"]["write_failed"], "the recording itself is whole")
        ours = [pin for pin in rep["pins"] if (culprit(pin) or {}).get("method") == "sleepInNative"]
        check(len(ours) == 20 and len(rep["pins"]) == rep["stats"]["pins_reported"],
              "all pins recorded, the fixture's 20 among them: %d of %s" % (len(ours), rep["stats"]))
    finally:
        shutil.rmtree(tmp)


def case_collector_drops(jdk):
    """Events lost while the collector was down are in the recording and its report."""
    jdk = int(jdk)
    coll = Collector()
    # rounds of 2 pins of 100 ms until the test closes the JVM's input: it outlives a late start, a kill
    # and a reconnect however slow the machine (a fixed 6 s program once ended first under load)
    r = streaming(jdk, coll, "JniSleep", args=(2, 100, "until-eof"), props=scheduler(2), stdin_pipe=True)
    r.start()
    try:
        # the collector starts late: everything before it is dropped for it
        coll.wait_for(lambda: r.proc.poll() is None and os.path.exists(r.record) and os.path.getsize(r.record) > 2000,
                      lambda ok: ok, timeout=60)
        coll.start()
        coll.wait_for(lambda: coll.jvm(r.proc.pid), lambda j: j and j["pins_total"] >= 1)
        coll.kill()
        coll.start()  # a reconnect
        coll.wait_for(lambda: coll.jvm(r.proc.pid), lambda j: j and j["connections"] >= 1, timeout=30)
        r.proc.stdin.close()
        r.wait(120)
        st = report_json(r.record)["stats"]
        print("stats of the recording: %s" % st)
        check(st["final"], "the Goodbye's counters")
        check(st["collector_dropped"] > 0, "collector_dropped in the report: %s" % st)
        check(st["reconnects"] >= 1, "reconnects in the report: %s" % st)
        out, _ = report_text(r.record)
        line = [l for l in out.splitlines() if "collector dropped" in l]
        check(line and "collector dropped %d" % st["collector_dropped"] in line[0] and
              "reconnects %d" % st["reconnects"] in line[0], "text report shows them:\n" + out[-800:])
    finally:
        r.kill()
        coll.kill(signal.SIGTERM)
        shutil.rmtree(coll.dir, ignore_errors=True)
        shutil.rmtree(r.dir, ignore_errors=True)


def case_collector_full(jdk):
    """A collector at --max-clients closes the agent's connections at once: the agent says it is
    full (not a bare "Broken pipe"), and its reconnect messages are rate-limited."""
    jdk = int(jdk)
    coll = Collector()
    log = open(os.path.join(coll.dir, "collector.log"), "a")
    coll.proc = subprocess.Popen([VTPIN, "collector", "--socket", coll.socket, "--dir",
                                  os.path.join(coll.dir, "sessions"), "--max-clients=1", "--jvms=agents"],
                                 stdout=log, stderr=log)
    holder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    r = None
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                holder.connect(coll.socket)  # the one client the collector serves
                break
            except OSError:
                check(time.monotonic() < deadline and coll.proc.poll() is None, "collector did not start")
                time.sleep(0.05)
        while socket_fds(coll.proc.pid) < 2:  # its listener and the holder: the JVM's agent is the second client
            check(time.monotonic() < deadline and coll.proc.poll() is None, "the collector did not take the holder")
            time.sleep(0.05)
        # 80 pins of 400 ms on 4 carriers: about 8 s of refused reconnects
        r = streaming(jdk, coll, "JniSleep", args=(80, 400), props=scheduler(4)).run(180)
        lines = [l for l in r.stderr().splitlines() if "collector" in l]
        print("\n".join(lines))
        with open(os.path.join(coll.dir, "collector.log")) as f:
            clog = f.read()
        check("refusing new connections" in clog, "the collector refused the agent: " + clog[-500:])
        check(any("went away" in l and "it is full (at its --max-clients limit)" in l for l in lines),
              "the agent says the collector is full (it closed the connection unread): %s" % lines)
        check(not any("Broken pipe" in l for l in lines), "no bare Broken pipe: %s" % lines)
        held = [l for l in lines if "held back" in l]
        said = [l for l in lines if "detecting pins" not in l and l not in held]
        check(len(said) <= 3, "collector messages rate-limited (a burst, then one per 30 s): %d lines" % len(said))
        check(held, "at exit the agent says how many messages it held back: %s" % lines)
        st = report_json(r.record)["stats"]
        check(st["collector_dropped"] > 0, "what the collector missed is counted: %s" % st)
    finally:
        holder.close()
        if r:
            r.kill()
        coll.kill(signal.SIGTERM)
        log.close()
        shutil.rmtree(coll.dir, ignore_errors=True)
        if r:
            shutil.rmtree(r.dir, ignore_errors=True)


def case_collector_closes(jdk):
    """A peer that reads the agent's Hello and then closes is not a full collector (that one
    closes without reading): the agent does not say it is full, only that it may be."""
    jdk = int(jdk)
    d = tempdir(prefix="vtpin-closes-")
    path = os.path.join(d, "c.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(8)
    srv.settimeout(0.2)
    done = threading.Event()
    served = [0]

    def serve():
        while not done.is_set():
            try:
                conn, _ = srv.accept()
            except socket.timeout:
                continue
            conn.settimeout(5)
            try:
                head = conn.recv(4, socket.MSG_WAITALL)  # the Hello's frame, read whole
                if len(head) == 4:
                    conn.recv(int.from_bytes(head, "little"), socket.MSG_WAITALL)
                conn.setblocking(False)
                while True:  # and whatever came with it: nothing of the agent's is left unread
                    if not conn.recv(65536):
                        break
            except (BlockingIOError, socket.timeout, OSError):
                pass
            conn.close()
            served[0] += 1
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    r = None
    try:
        # 30 pins of 200 ms on 2 carriers: about 3 s of reconnects to a peer that closes
        r = Run(jdk, "JniSleep", args=(30, 200), props=scheduler(2), agent_opts="collector=" + path).run(120)
        lines = [l for l in r.stderr().splitlines() if "went away" in l]
        print("\n".join(lines))
        check(served[0] >= 1 and lines, "the agent connected and was closed on: %d %s" % (served[0], r.stderr()))
        check(not any("is full" in l or "probably full" in l for l in lines),
              "a peer that read the Hello is not called full: %s" % lines)
        check(any("may be full: --max-clients" in l for l in lines), "it may be, and says so: %s" % lines)
    finally:
        done.set()
        t.join(5)
        srv.close()
        if r:
            r.kill()
            shutil.rmtree(r.dir, ignore_errors=True)
        shutil.rmtree(d, ignore_errors=True)


def case_collector_path_too_long(jdk):
    """A collector socket path over sun_path (107 bytes) would be cut to another socket: the
    JVM does not start, with one line saying so (collector=PATH, and the default path)."""
    home = jdk_home(int(jdk))
    long_dir = "/tmp/" + "d" * 120
    p = java(home, "collector=%s/collector.sock" % long_dir, "-version")
    lines = [l for l in p.stderr.splitlines() if l.startswith("vtpin: error:")]
    check(p.returncode != 0 and lines and "over the 107" in lines[0] and "Unix socket" in lines[0],
          "collector=LONG refused with one line: %d %s" % (p.returncode, p.stderr))
    env = dict(os.environ, XDG_RUNTIME_DIR=long_dir)
    cmd = [os.path.join(home, "bin", "java"), "-agentpath:%s=collector" % AGENT, "-version"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    lines = [l for l in p.stderr.splitlines() if l.startswith("vtpin: error:")]
    check(p.returncode != 0 and lines and "default collector socket path" in lines[0],
          "a too long default path refused: %d %s" % (p.returncode, p.stderr))


def case_record_rotation(jdk):
    """record_max= (issue 37: a recording grew 0.7 GB a day with no cap): 3000 pins at threshold 0
    with record_max=64k rotate the recording several times. Each file is a whole recording that
    `vtpin report` reads alone (its Hello, definitions, no damage), none is much past the cap, the
    files together hold every pin, and record_keep= bounds how many stay."""
    jdk = int(jdk)
    pins = 3000
    for keep in (100, 2):
        r = Run(jdk, "StressPins", args=("native", pins, 1), props=scheduler(4, 4),
                agent_opts="threshold=0,record_max=64k,record_keep=%d" % keep)
        try:
            r.run(timeout=120)
            check("StressPins: pinned=%d" % pins in r.stdout(), "the fixture pinned:\n" + r.stdout())
            rotated = sorted((f for f in os.listdir(r.dir) if f.startswith("pins.vtp.")),
                             key=lambda f: int(f.rsplit(".", 1)[1]))
            files = [r.record] + [os.path.join(r.dir, f) for f in rotated]
            sizes = [os.path.getsize(f) for f in files]
            print("record_keep=%d: %d files, %s bytes" % (keep, len(files), sizes))
            check(rotated == ["pins.vtp.%d" % i for i in range(1, len(rotated) + 1)],
                  "PATH.1 .. PATH.N, none missing: %s" % rotated)
            if keep == 2:
                check(len(rotated) == 2, "record_keep=2: two rotated files kept: %s" % rotated)
                continue
            check(len(rotated) >= 2, "3000 pins past 64 KiB rotate more than once: %s" % sizes)
            # one writer round's buffer (256 KiB) at most past the cap, and the file's start again
            check(all(sz <= (64 + 256 + 32) * 1024 for sz in sizes), "no file far past the cap: %s" % sizes)
            ids, pin_ids = set(), set()
            for i, f in enumerate(files):
                rep = report_json(f)
                check(rep["jvm"]["pid"] == r.proc.pid and not rep["recording"]["damaged"],
                      "%s: a whole recording of this JVM: %s" % (f, rep["recording"]))
                codes = [n["code"] for n in rep["notices"]]
                check((i < len(files) - 1) == ("output.record.rotated" in codes),
                      "%s: says it continues the one before, unless it is the first: %s" % (f, codes))
                # the newest ends with the JVM; each older one where it was rotated, said so
                check(rep["recording"]["rotated"] == (i > 0) and rep["recording"]["complete"] == (i == 0),
                      "%s: %s" % (f, rep["recording"]))
                ids |= {p["vthread"]["name"] for p in rep["pins"]
                        if (p["vthread"]["name"] or "").startswith("stresspin-") and p["stack"] and
                        any(fr["method"] == "parkPinned" for fr in p["stack"])}
                pin_ids |= {p["id"] for p in rep["pins"]}
            check(len(ids) == pins, "the files together hold every pin, with its stack: %d of %d" % (len(ids), pins))
            # concatenated in order, oldest first: one session, each pin once
            rep = report_json_of_rotated(files, os.path.join(r.dir, "whole.vtp"))
            rec = rep["recording"]
            check(rec["sessions"] == 1 and rec["parts"] == len(files) and rec["complete"] and
                  rec["duplicate_pin_events"] == 0, "the files in order are one session: %s" % rec)
            whole_ids = sorted(p["id"] for p in rep["pins"])
            check(whole_ids == sorted(pin_ids) and not any(p["ongoing"] for p in rep["pins"]),
                  "each pin of the files once, ended: %d pins, %d distinct, %d in the files" % (
                      len(whole_ids), len(set(whole_ids)), len(pin_ids)))
        finally:
            shutil.rmtree(r.dir, ignore_errors=True)


def case_methods_overflow(jdk):
    """methods=16 cannot name DeepPin's stacks (over 20 methods): the frames past it are
    counted and the report stays readable (frames shown as <unknown>)."""
    r = Run(int(jdk), "DeepPin", props=scheduler(4), agent_opts="methods=16")
    try:
        r.run()
        rep = r.report()
        st = rep["stats"]
        print("stats: %s" % st)
        check(len(rep["pins"]) >= 4, "every pin reported: %d" % len(rep["pins"]))
        check(st["methods_dropped"] > 0, "frames without a method counted: %s" % st)
        unnamed = [f for p in rep["pins"] for f in p["stack"] if f["method"] == "<unknown>"]
        check(unnamed, "the unnamed frames are there, as placeholders")
        out, _ = report_text(r.record)
        check("methods dropped %d" % st["methods_dropped"] in out and "methods=" in out,
              "the text report shows the counter and the option:\n" + out[-1000:])
    finally:
        shutil.rmtree(r.dir, ignore_errors=True)


def printable(text):
    """A name as the text formats print it (common/utf8.c, utf8_printable): control characters
    (C0 with NUL, DEL, C1) as \\xNN, U+2028, U+2029 and bidirectional overrides as \\uNNNN, the
    rest as is."""
    out = []
    for c in text:
        o = ord(c)
        if o < 0x20 or 0x7F <= o < 0xA0:
            out.append("\\x%02x" % o)
        elif o in (0x2028, 0x2029) or 0x202A <= o <= 0x202E or 0x2066 <= o <= 0x2069:
            out.append("\\u%04x" % o)
        else:
            out.append(c)
    return "".join(out)


def no_control_bytes(data, what):
    """No raw control character but the line break in data (bytes, UTF-8)."""
    bad = sorted({c for c in data.decode("utf-8", errors="replace")
                  if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) < 0xA0})
    check(not bad, "%s holds raw control characters %r" % (what, bad))


def case_control_names(jdk):
    """Virtual threads named with ESC, BEL, DEL, a C1 CSI, a line break and a NUL pin, one of
    them below a method named with an ESC and a NUL: the agent's trace and the text and
    collapsed reports hold no raw control character (escaped as \\x1b, \\x00, ...), and each
    name survives whole, the NUL too: escaped in the trace and the text formats, exact in the
    JSON and Perfetto reports."""
    r = Run(int(jdk), "HostileNames", props=scheduler(2))
    try:
        r.run()
        hexes = {l.split(": ", 1)[0]: l.split(": ", 1)[1] for l in r.stdout().splitlines() if l.startswith("odd frame: ")}
        names = hostile_names(r.stdout())
        check(any("\0" in n for n in names) and any("\x1b" in n for n in names), "the fixture's names: %r" % names)
        odd = bytes.fromhex(hexes["odd frame"]).decode()
        check(odd == "odd_\x1b_frame_\x00_", "the fixture's odd method: %r" % odd)
        names.append("odd-frame")
        rep = r.report()
        ours = hostile_pins(rep)
        got = sorted(p["vthread"]["name"] for p in ours)
        check(got == sorted(names), "JSON: each name whole, one pin each:\n%r\n%r" % (got, sorted(names)))
        odd_pin = next(p for p in ours if p["vthread"]["name"] == "odd-frame")
        check(any(f["class"] == "HostileNames$Odd" and f["method"] == odd for f in odd_pin["stack"]),
              "JSON: the odd method's name whole: %r" % [f["method"] for f in odd_pin["stack"]])
        odd_text = "HostileNames$Odd.odd_\\x1b_frame_\\x00_"
        # the agent's trace: one header line per pin, the name escaped
        with open(r.trace, "rb") as f:
            trace = f.read()
        no_control_bytes(trace, "the trace")
        text = trace.decode()
        for p in ours:
            want = "VirtualThread[#%d,%s]/pinned@" % (p["vthread"]["id"], printable(p["vthread"]["name"]))
            check(text.count(want) == 1, "the trace names pin %d's thread once as %r:\n%s" % (p["id"], want, text[:3000]))
        check('"quote\'\\back\\x00nul]' in text, "the NUL shows as \\x00 in the trace")
        check(odd_text + "(HostileNames.java:" in text, "the trace shows the odd frame escaped:\n" + text[:3000])
        # the text and collapsed reports (the odd pin is the longest: its stack is the site's example)
        for fmt in ("text", "collapsed"):
            p = subprocess.run([VTPIN, "report", "--format", fmt, r.record], capture_output=True, timeout=60)
            check(p.returncode == 0 and p.stdout, "%s report (%d): %s" % (fmt, p.returncode, p.stderr))
            no_control_bytes(p.stdout, "the %s report" % fmt)
            check((odd_text + ("(" if fmt == "text" else ";")).encode() in p.stdout,
                  "the %s report shows the odd frame escaped:\n%s" % (fmt, p.stdout.decode()[:3000]))
        # Perfetto: JSON, the names exact
        p = subprocess.run([VTPIN, "report", "--format", "perfetto", r.record], capture_output=True, timeout=60)
        check(p.returncode == 0, "perfetto report: %s" % p.stderr)
        named = sorted(e["args"]["vthread_name"] for e in json.loads(p.stdout)["traceEvents"]
                       if e["ph"] == "X" and e["args"]["pin_id"] in {q["id"] for q in ours})
        check(named == sorted(names), "Perfetto: each name whole:\n%r" % named)
    finally:
        shutil.rmtree(r.dir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main({
        "disk_full": case_disk_full,
        "disk_nearly_full": case_disk_nearly_full,
        "disk_no_room": case_disk_no_room,
        "log_full": case_log_full,
        "trace_full": case_trace_full,
        "collector_drops": case_collector_drops,
        "methods_overflow": case_methods_overflow,
        "record_rotation": case_record_rotation,
        "collector_full": case_collector_full,
        "collector_closes": case_collector_closes,
        "collector_path_too_long": case_collector_path_too_long,
        "control_names": case_control_names,
    }))
