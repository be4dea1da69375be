#!/usr/bin/env python3
"""vtpin-junit.jar on real JVMs: @NoPinning's verdicts and messages, and the Java API, as a Java team
runs them (JUnit's console launcher over java-fixtures/srcjunit/PinningTests, the agent loaded).

  test_junit.py extension JDK   every test of PinningTests: those named pass* pass, fail* fail with
                                the pins that broke the rule in the message; monitorPin fails on 21
                                (a monitor held across a park) and passes on 24+
  test_junit.py no_agent JDK    without the agent, a @NoPinning test fails naming the -agentpath to
                                add; with -Dvtpin.junit.requireAgent=false it is skipped
  test_junit.py parallel JDK    with JUnit's parallel execution on, a test that pins beside the
                                @NoPinning tests: they run alone (NoPinning's global lock), so it
                                never lands in their windows
  test_junit.py self_attach JDK with -Djdk.attach.allowAttachSelf=true the extension attaches the
                                agent itself and judges as with -agentpath

Environment (tests/CMakeLists.txt): VTPIN_BUILD, JAVA<N>_HOME."""
import glob
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import AGENT, BUILD, CLASSES, FIXTURE_LIB, check, jdk_home, main, skip, tempdir  # noqa: E402

JAR = os.path.join(BUILD, "java", "vtpin-junit.jar")
CLASSES_JUNIT = os.path.join(BUILD, "java-fixtures", "classes-junit")
LAUNCHER = "/usr/share/java/junit-platform-console-standalone.jar"


def launch(feature, props=(), agent=True, select=None, classes=("PinningTests",)):
    """Runs PinningTests (or the methods in select) under the console launcher; returns
    ({test name: (verdict, message)}, the launcher's output)."""
    for path, what in ((JAR, "vtpin-junit.jar"), (CLASSES_JUNIT, "the JUnit fixtures"), (LAUNCHER, "junit5")):
        if not os.path.exists(path):
            skip("%s not built or installed (%s): install junit5 (scripts/setup.sh) and re-run cmake" % (what, path))
    home = jdk_home(feature)
    reports = tempdir()
    cmd = [os.path.join(home, "bin", "java")] + (["-agentpath:%s" % AGENT] if agent else []) + [
        "--enable-native-access=ALL-UNNAMED", "-Djava.library.path=" + FIXTURE_LIB] + list(props) + [
        "-jar", LAUNCHER, "--disable-banner", "--details=none", "--reports-dir", reports,
        "-cp", ":".join([CLASSES_JUNIT, JAR, CLASSES])]
    cmd += ["--select-method=PinningTests#" + m for m in select] if select else []
    cmd += [] if select and classes == ("PinningTests",) else ["--select-class=" + c for c in classes]
    print("$ " + " ".join(cmd))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    output = p.stdout + p.stderr
    files = glob.glob(os.path.join(reports, "TEST-*.xml"))
    check(files, "the launcher wrote its report (exit %d)\n%s" % (p.returncode, output))
    verdicts = {}
    for f in files:
        for case in ET.parse(f).getroot().iter("testcase"):
            name = case.get("name").split("(")[0]
            failure = case.find("failure") if case.find("failure") is not None else case.find("error")
            skipped = case.find("skipped")
            if failure is not None:
                verdicts[name] = ("failed", (failure.get("message") or "") + "\n" + (failure.text or ""))
            elif skipped is not None:
                verdicts[name] = ("skipped", (skipped.get("message") or "") + (skipped.text or ""))
            else:
                verdicts[name] = ("passed", "")
    for name, (verdict, message) in sorted(verdicts.items()):
        print("  %-26s %s %s" % (name, verdict, message.split("\n")[0][:160]))
    check(p.returncode == (1 if any(v == "failed" for v, _ in verdicts.values()) else 0),
          "the launcher's exit code says whether a test failed (%d)" % p.returncode)
    return verdicts, output


def failed_with(verdicts, name, *texts):
    verdict, message = verdicts.get(name, ("missing", ""))
    check(verdict == "failed", "%s failed (%s)" % (name, verdict))
    for t in texts:
        check(t in message, "%s's message names %r:\n%s" % (name, t, message))


def passed(verdicts, name):
    verdict, message = verdicts.get(name, ("missing", ""))
    check(verdict == "passed", "%s passed (%s):\n%s" % (name, verdict, message))


def case_extension(jdk):
    feature = int(jdk)
    verdicts, _ = launch(feature)
    check(len(verdicts) == 10, "the ten tests of PinningTests ran: %s" % sorted(verdicts))
    for name in verdicts:
        if name.startswith("pass"):
            passed(verdicts, name)
    failed_with(verdicts, "failNative", "1 pin(s) that count, at most 0", "NATIVE",
                "at JniSleep.sleepInNative(Native Method)", "libvtpinfixture.so", "PinningTests.nativeSleep(")
    failed_with(verdicts, "failInsideOnly", "1 pin(s) that count", "NATIVE", "at com.acme.SlowInit.<clinit>(")
    failed_with(verdicts, "failTwoAtMostOne", "2 pin(s) that count, at most 1", "on vt-0", "on vt-1")
    if feature < 24:
        failed_with(verdicts, "monitorPin", "MONITOR", "at com.acme.Repo.saveLocked(", "on vt-0")
    else:
        passed(verdicts, "monitorPin")


def case_no_agent(jdk):
    feature = int(jdk)
    verdicts, _ = launch(feature, agent=False, select=["passClean"])
    failed_with(verdicts, "passClean", "vtpin's agent is not loaded", "-agentpath:/usr/lib/vtpin/libvtpin.so",
                "-Djdk.attach.allowAttachSelf=true")
    verdicts, _ = launch(feature, agent=False, select=["passClean"], props=["-Dvtpin.junit.requireAgent=false"])
    check(verdicts.get("passClean", ("missing",))[0] == "skipped", "without the agent and required, skipped")


def case_parallel(jdk):
    parallel = ["-Djunit.jupiter.execution.parallel.enabled=true"] + [
        "-Djunit.jupiter.execution.parallel.mode.%s=concurrent" % m for m in ("default", "classes.default")]
    verdicts, _ = launch(int(jdk), props=parallel, select=["passClean", "passTwoAtMostTwo"], classes=("NoisyNeighbour",))
    for name in ("passClean", "passTwoAtMostTwo", "pinsWhileOthersRun"):
        passed(verdicts, name)


def case_self_attach(jdk):
    feature = int(jdk)
    verdicts, output = launch(feature, agent=False, select=["passClean", "failNative", "passApi"],
                              props=["-Djdk.attach.allowAttachSelf=true", "-Dvtpin.agent=" + AGENT])
    passed(verdicts, "passClean")
    passed(verdicts, "passApi")
    failed_with(verdicts, "failNative", "1 pin(s) that count", "at JniSleep.sleepInNative(Native Method)")
    check("vtpin: detecting pins" in output, "the agent attached and said so:\n" + output[-2000:])


if __name__ == "__main__":
    sys.exit(main({"extension": case_extension, "no_agent": case_no_agent, "self_attach": case_self_attach,
                  "parallel": case_parallel}))
