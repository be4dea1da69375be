#!/usr/bin/env python3
"""The installed vtpin (cmake/install.cmake): the layout the man page and README name,
a self-contained agent, and `vtpin attach` finding the installed agent by itself.

  test_install.py agent_libs       build/agent/libvtpin.so needs only libc-level libraries
                                   and exports only the Agent_* entry points
                                   and the Java API's native methods
  test_install.py docs             man/vtpin.1 and the bash completion cover every command
                                   and long option of build/vtpin's --help texts
  test_install.py prefix JDK       `cmake --install --prefix P` into a temp dir; P/bin/vtpin
                                   attach (no --agent) records ReproLoop's pins
  test_install.py deb JDK          the .deb built by cpack, installed with dpkg -i (root),
                                   /usr/bin/vtpin attach (no --agent) records the pins, then
                                   dpkg -r and --purge: the machine is left as it was found

Environment (tests/CMakeLists.txt): VTPIN_BUILD, JAVA21_HOME/JAVA25_HOME, VTPIN_CMAKE,
VTPIN_CPACK, VTPIN_SOURCE."""
import fnmatch
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import AGENT, BUILD, check, forget_stale_attach_socket, main, skip, tempdir  # noqa: E402
from test_attach import Target  # noqa: E402

SOURCE = os.environ.get("VTPIN_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
CMAKE = os.environ.get("VTPIN_CMAKE", "cmake")
CPACK = os.environ.get("VTPIN_CPACK", "cpack")
# what a JVM already maps: the agent may need these and nothing else
LIBC_LEVEL = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "ld-linux-x86-64.so.2", "librt.so.1"}
AGENT_EXPORTS = {"Agent_OnLoad", "Agent_OnAttach", "Agent_OnUnload"} | {
    # the Java API's native methods (agent/java_api.c), which the JVM binds from the agent's library
    "Java_dev_vtpin_Vtpin_" + m for m in ("version0", "threshold0", "mark0", "evictions0", "flush0", "pinsSince0")}


def run(cmd, **kw):
    print("$ " + " ".join(cmd))
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    for line in (p.stdout + p.stderr).splitlines()[-40:]:
        print("  | " + line)
    return p


def check_agent_self_contained(path):
    p = run(["readelf", "-d", path])
    check(p.returncode == 0, "readelf -d %s" % path)
    needed = {line.split("[")[1].split("]")[0] for line in p.stdout.splitlines() if "(NEEDED)" in line}
    check(needed and needed <= LIBC_LEVEL, "%s needs only libc-level libraries, needs %s" % (path, sorted(needed)))
    p = run(["nm", "-D", "--defined-only", path])
    check(p.returncode == 0, "nm -D %s" % path)
    exported = {line.split()[-1] for line in p.stdout.splitlines() if line.strip()}
    check(exported == AGENT_EXPORTS, "%s exports exactly %s, exports %s" % (path, sorted(AGENT_EXPORTS),
                                                                          sorted(exported)))
    p = run(["nm", path])
    check("protobuf_c_message_pack" in p.stdout, "protobuf-c is linked into the agent (static)")


def case_agent_libs():
    check_agent_self_contained(AGENT)


LAYOUT = ("bin/vtpin", "lib/vtpin/libvtpin.so", "share/man/man1/vtpin.1.gz",
          "share/bash-completion/completions/vtpin", "share/doc/vtpin/README.md",
          "share/doc/vtpin/collector.md", "share/doc/vtpin/report-json.md",
          "lib/systemd/system/vtpin-collector.service")
if os.path.exists("/usr/share/java/junit-jupiter-api.jar"):  # junit5 installed: java/ builds the jar
    LAYOUT += ("lib/vtpin/vtpin-junit.jar",)


def dpkg_excluded(path):
    """Whether dpkg's path-exclude/path-include rules (slim images drop /usr/share/man,
    /usr/share/doc) keep path off the disk: the last matching rule wins."""
    rules = []
    d = "/etc/dpkg/dpkg.cfg.d"
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        try:
            with open(os.path.join(d, name), errors="replace") as f:
                for line in f:
                    # "path-exclude=/usr/share/man/*" or "path-exclude /usr/share/man/*"
                    parts = line.strip().replace("=", " ", 1).split(None, 1)
                    if len(parts) == 2 and parts[0] in ("path-exclude", "path-include"):
                        rules.append((parts[0] == "path-exclude", parts[1].strip()))
        except OSError:
            pass
    excluded = False
    for exclude, pattern in rules:
        if fnmatch.fnmatchcase(path, pattern):
            excluded = exclude
    return excluded


def help_of(vtpin, *args):
    p = subprocess.run([vtpin] + list(args) + ["--help"], capture_output=True, text=True)
    return p.stdout + p.stderr


def check_docs_cover_cli(vtpin, man, completion):
    """Every command of `vtpin --help` has its section in the man page and its case in the
    bash completion, and each long option its `vtpin CMD --help` lists is in both."""
    man = man.replace("\\-", "-")
    commands = re.findall(r"^  ([a-z]+)  ", help_of(vtpin).split("commands:")[1], re.M)
    check(len(commands) >= 6, "vtpin --help lists its commands: %s" % commands)
    sections = dict(re.findall(r"^\.SS vtpin ([a-z]+)(.*?)(?=^\.S[SH] )", man, re.M | re.S))
    with open(completion) as f:
        comp = f.read()
    cases = dict(re.findall(r"^        ([a-z]+)\)\n(.*?)(?=^        (?:[a-z]+|\*)\))", comp, re.M | re.S))
    top = re.search(r'local commands="([^"]*)"', comp)
    check(top and set(top.group(1).split()) == set(commands),
          "the completion offers exactly the commands of vtpin --help: %s" % commands)
    for cmd in commands:
        check(cmd in sections, "the man page has a section for vtpin %s" % cmd)
        check(cmd in cases, "the bash completion has a case for vtpin %s" % cmd)
        opts = set()
        for line in help_of(vtpin, cmd).splitlines():
            if re.match(r"^\s+-", line):
                opts.update(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", line))
        check(opts, "vtpin %s --help lists options" % cmd)
        offered = set(" ".join(re.findall(r'opts="([^"]*)"', cases[cmd])).split())
        for opt in sorted(opts):
            check(opt == "--help" or re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(opt), sections[cmd]),
                  "the man page's vtpin %s section documents %s" % (cmd, opt))
            check(opt in offered, "the completion of vtpin %s offers %s (offers %s)" % (cmd, opt, sorted(offered)))
        print("vtpin %s: %d options, all in the man page and the completion" % (cmd, len(opts)))


def case_docs():
    """The man page and completion of the source tree against the built vtpin."""
    with open(os.path.join(SOURCE, "man/vtpin.1")) as f:
        man = f.read()
    check_docs_cover_cli(os.path.join(BUILD, "vtpin"), man, os.path.join(SOURCE, "packaging/bash-completion/vtpin"))


def check_layout(prefix, deb=None):
    """The files vtpin(1) FILES and README "Install" name, under prefix (for a .deb on a
    system whose dpkg excludes some paths: those in the package instead)."""
    listed = ""
    if deb:
        listed = run(["dpkg-deb", "-c", deb]).stdout
    for rel in LAYOUT:
        path = os.path.join(prefix, rel)
        if deb and dpkg_excluded(path):
            check(" ./%s\n" % path.lstrip("/") in listed + "\n", "in the package (dpkg excludes it here): %s" % path)
            print("dpkg's path-exclude keeps %s off this system; it is in the package" % path)
            continue
        check(os.path.isfile(path), "installed: %s" % path)
    check(os.access(os.path.join(prefix, "bin/vtpin"), os.X_OK), "bin/vtpin is executable")
    check_agent_self_contained(os.path.join(prefix, "lib/vtpin/libvtpin.so"))
    man_gz = os.path.join(prefix, "share/man/man1/vtpin.1.gz")
    if not os.path.exists(man_gz):  # dpkg excluded it: check the one built
        man_gz = os.path.join(BUILD, "man/vtpin.1.gz")
    with gzip.open(man_gz, "rt") as f:
        man = f.read()
    # every subcommand has its section, and the FILES the package puts in place are named
    for cmd in ("report", "collector", "status", "top", "attach", "run"):
        check(".SS vtpin %s" % cmd in man, "the man page describes vtpin %s" % cmd)
    for path in ("/usr/bin/vtpin", "/usr/lib/vtpin/libvtpin.so", "vtpin\\-collector.service"):
        check(path in man, "the man page names %s" % path)
    if shutil.which("groff"):
        p = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z"], input=man, capture_output=True, text=True)
        check(p.returncode == 0 and not p.stderr.strip(), "groff -man -ww: no warnings: %s" % p.stderr)
    else:
        print("groff is missing (Debian: groff-base): the man page is not rendered")
    with open(os.path.join(prefix, "lib/systemd/system/vtpin-collector.service")) as f:
        unit = f.read()
    check("ExecStart=%s/bin/vtpin collector --socket /run/vtpin/collector.sock" % prefix in unit,
          "the unit runs this prefix's vtpin collector on /run/vtpin/collector.sock:\n" + unit)
    completion = os.path.join(prefix, "share/bash-completion/completions/vtpin")
    if not os.path.exists(completion):  # dpkg excluded it (checked in the package above)
        completion = os.path.join(SOURCE, "packaging/bash-completion/vtpin")
    check_docs_cover_cli(os.path.join(prefix, "bin/vtpin"), man, completion)
    p = run(["bash", os.path.join(SOURCE, "tests/install/test_completion.sh"), completion])
    check(p.returncode == 0, "the installed bash completion passes tests/install/test_completion.sh")
    p = run([os.path.join(prefix, "bin/vtpin"), "--version"])
    check(p.returncode == 0 and p.stdout.startswith("vtpin "), "installed vtpin --version")


class UnitCollector:
    """The collector as vtpin-collector.service runs it: its ExecStart, with the unit's
    /run/vtpin and /var/lib/vtpin moved into a temp dir (systemd creates those two)."""

    def __init__(self, prefix):
        with open(os.path.join(prefix, "lib/systemd/system/vtpin-collector.service")) as f:
            unit = f.read()
        execs = [line[len("ExecStart="):] for line in unit.splitlines() if line.startswith("ExecStart=")]
        check(len(execs) == 1, "one ExecStart in the unit: %s" % execs)
        check(" $VTPIN_COLLECTOR_OPTS" in execs[0], "the unit takes VTPIN_COLLECTOR_OPTS: %s" % execs[0])
        self.dir = tempdir("vtpin-unit-")
        run_dir, self.state = os.path.join(self.dir, "run"), os.path.join(self.dir, "state")
        os.mkdir(run_dir, 0o711)  # RuntimeDirectoryMode=0711
        os.mkdir(self.state, 0o700)  # StateDirectoryMode=0700
        cmd = execs[0].replace(" $VTPIN_COLLECTOR_OPTS", "")  # unset: no arguments
        self.cmd = [w.replace("/run/vtpin", run_dir).replace("/var/lib/vtpin", self.state) for w in cmd.split()]
        self.socket = os.path.join(run_dir, "collector.sock")
        self.vtpin = self.cmd[0]
        self.log = open(os.path.join(self.dir, "collector.log"), "w+")
        print("$ " + " ".join(self.cmd))
        self.proc = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not os.path.exists(self.socket):
            check(self.proc.poll() is None, "the unit's collector exited at start:\n" + self.text())
            check(time.monotonic() < deadline, "no socket after 30 s:\n" + self.text())
            time.sleep(0.05)

    def text(self):
        self.log.flush()
        with open(self.log.name, errors="replace") as f:
            return f.read()

    def jvms(self):
        p = subprocess.run([self.vtpin, "status", "--json", "--socket", self.socket], capture_output=True, text=True)
        check(p.returncode == 0, "vtpin status --socket %s: %s" % (self.socket, p.stderr))
        return json.loads(p.stdout)["jvms"]

    def jvm_pids(self):
        return [j["pid"] for j in self.jvms()]

    def stop(self):
        """SIGTERM, as systemctl stop sends: exit 0, a recording closed in the state dir."""
        self.proc.terminate()
        rc = self.proc.wait(timeout=30)
        print("collector log:\n" + "\n".join("  | " + line for line in self.text().splitlines()))
        check(rc == 0, "the unit's collector exits 0 on SIGTERM, got %d" % rc)
        recs = [f for f in os.listdir(self.state) if f.endswith(".vtp")]
        check(recs, "the collector wrote the JVM's session recording into its --dir")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def attach_and_report(vtpin, jdk, collector):
    """ReproLoop started without the agent; `vtpin attach PID record=...` with no --agent
    must find the installed agent, which also streams to the unit's collector; the
    installed vtpin reports ReproLoop's pins."""
    agent = os.path.realpath(os.path.join(os.path.dirname(vtpin), "..", "lib", "vtpin", "libvtpin.so"))
    t = Target(jdk).start()
    record = os.path.join(t.dir, "installed.vtp")
    try:
        forget_stale_attach_socket(t.pid)
        p = run([vtpin, "attach", str(t.pid), "record=%s,collector=%s" % (record, collector.socket)], timeout=120)
        check(p.returncode == 0, "%s attach exits 0 (agent found without --agent), got %d" % (vtpin, p.returncode))
        check(t.wait_stderr("detecting pins", timeout=60), "the agent runs in the JVM:\n" + t.stderr())
        with open("/proc/%d/maps" % t.pid) as f:
            maps = f.read()
        check(agent in maps, "the JVM mapped the installed agent %s" % agent)
        deadline = time.monotonic() + 30
        while t.pid not in collector.jvm_pids():
            check(time.monotonic() < deadline, "the unit's collector lists the JVM:\n" + collector.text())
            time.sleep(0.2)
        deadline = time.monotonic() + 60
        # ReproLoop pins every 100 ms on JDK 21: wait for its pins to reach the collector (on 24+, where
        # nothing pins, for the recording to grow), then stop
        pinned = lambda: int(jdk) >= 24 or any(j["pid"] == t.pid and j["pins_total"] >= 3 for j in collector.jvms())
        while (os.path.getsize(record) < 4096 or not pinned()) and time.monotonic() < deadline:
            time.sleep(0.2)
        p = run([vtpin, "attach", str(t.pid), "stop"], timeout=120)
        check(p.returncode == 0, "%s attach PID stop exits 0" % vtpin)
        t.stop()
    finally:
        t.kill()
    p = run([vtpin, "report", "--format", "json", record])
    check(p.returncode == 0, "%s report exits 0" % vtpin)
    rep = json.loads(p.stdout)
    check(rep["jvm"].get("mode") == "attach", "the recording is of an attach: %s" % rep["jvm"])
    pins = [pin for pin in rep["pins"] if any(f["class"] == "ReproLoop" for f in pin["stack"])]
    if int(jdk) >= 24:
        check(not pins, "no monitor pins on 24+ (JEP 491): %s" % pins[:1])
        return
    check(pins, "the installed agent found ReproLoop's pins")
    for pin in pins:
        c = pin["stack"][pin["culprit"]]
        check(pin["reason"] == "MONITOR" and c["class"] == "ReproLoop" and c["method"] == "settle",
              "pin at ReproLoop.settle, MONITOR: %s %s" % (pin["reason"], c))
    print("%d ReproLoop pins found through the installed vtpin" % len(pins))


def case_prefix(jdk):
    prefix = os.path.join(tempdir("vtpin-install-"), "prefix")
    p = run([CMAKE, "--install", BUILD, "--prefix", prefix])
    check(p.returncode == 0, "cmake --install --prefix exits 0")
    check_layout(prefix)
    collector = UnitCollector(prefix)
    try:
        attach_and_report(os.path.join(prefix, "bin/vtpin"), jdk, collector)
        collector.stop()
    finally:
        collector.kill()


def dpkg_installed(name):
    p = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True)
    return p.returncode == 0 and p.stdout.strip() != "" and "not-installed" not in p.stdout


def case_deb(jdk):
    if os.geteuid() != 0:
        skip("installing the .deb needs root (dpkg -i)")
    for tool in ("dpkg", "dpkg-deb", "dpkg-query"):
        if not shutil.which(tool):
            skip("%s is missing: not a Debian system" % tool)
    if dpkg_installed("vtpin"):
        skip("a vtpin package is already installed here: not replacing it")
    for path in ("/usr/bin/vtpin", "/usr/lib/vtpin", "/usr/lib/systemd/system/vtpin-collector.service"):
        if os.path.lexists(path):
            skip("%s exists outside any package: not overwriting it" % path)
    from harness import jdk_home
    jdk_home(int(jdk))  # skip before building anything when the JDK is missing
    out = tempdir("vtpin-deb-")
    p = run([CPACK, "-G", "DEB", "--config", os.path.join(BUILD, "CPackConfig.cmake"), "-B", out], cwd=BUILD)
    check(p.returncode == 0, "cpack -G DEB exits 0")
    debs = [f for f in os.listdir(out) if f.endswith(".deb")]
    check(len(debs) == 1, "one .deb built: %s" % debs)
    deb = os.path.join(out, debs[0])
    p = run(["dpkg-deb", "-f", deb, "Package", "Depends"])
    check(p.returncode == 0 and "Package: vtpin" in p.stdout, "the package is vtpin")
    for dep in ("libc6", "libprotobuf-c1", "libbpf1", "libmicrohttpd12"):
        check(dep in p.stdout, "Depends names %s (dpkg-shlibdeps): %s" % (dep, p.stdout))
    try:
        p = run(["dpkg", "-i", deb])
        check(p.returncode == 0, "dpkg -i exits 0")
        check(dpkg_installed("vtpin"), "dpkg knows vtpin as installed")
        check_layout("/usr", deb)
        p = run(["dpkg", "-L", "vtpin"])
        check("/usr/lib/vtpin/libvtpin.so" in p.stdout.split(), "dpkg -L vtpin lists the agent")
        if shutil.which("man") and not dpkg_excluded("/usr/share/man/man1/vtpin.1.gz"):
            p = run(["man", "-w", "vtpin"])
            check(p.returncode == 0 and "/usr/share/man/man1/vtpin.1" in p.stdout, "man -w vtpin finds vtpin(1)")
        collector = UnitCollector("/usr")
        try:
            attach_and_report("/usr/bin/vtpin", jdk, collector)
            collector.stop()
        finally:
            collector.kill()
    finally:
        removed = run(["dpkg", "-r", "vtpin"])
        p = run(["dpkg", "--purge", "vtpin"])  # no 'rc' state left behind either
        left = [path for path in ("/usr/bin/vtpin", "/usr/lib/vtpin", "/usr/share/doc/vtpin",
                                  "/usr/share/man/man1/vtpin.1.gz", "/usr/share/bash-completion/completions/vtpin",
                                  "/usr/lib/systemd/system/vtpin-collector.service") if os.path.lexists(path)]
    check(removed.returncode == 0, "dpkg -r vtpin exits 0")
    check(p.returncode == 0, "dpkg --purge vtpin exits 0")
    check(not dpkg_installed("vtpin"), "vtpin is no longer installed")
    check(not left, "dpkg --purge removed every file: left %s" % left)


if __name__ == "__main__":
    raise SystemExit(main({
        "agent_libs": case_agent_libs,
        "docs": case_docs,
        "prefix": case_prefix,
        "deb": case_deb,
    }))
