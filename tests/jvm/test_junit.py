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
  test_junit.py logic JDK       the API's pure logic (java-fixtures/srcjunit/dev/vtpin/ApiLogicTests):
                                the agent's records parsed, globs, rules, sites, baseline files
  test_junit.py baseline JDK    `vtpin run --write-baseline` over a test that pins natively, then the
                                tests again with that file (-Dvtpin.baseline): the known site no
                                longer counts, a new one fails, named as new
  test_junit.py maven JDK       examples/maven built and tested offline by Maven with Debian's packages
                                (a copy of it): of its three tests, the one that pins fails naming
                                its culprit, the clean one and the allowed one pass

Environment (tests/CMakeLists.txt): VTPIN_BUILD, JAVA<N>_HOME, VTPIN_SOURCE."""
import glob
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import AGENT, BUILD, CLASSES, FIXTURE_LIB, VTPIN, check, jdk_home, main, skip, tempdir  # noqa: E402

JAR = os.path.join(BUILD, "java", "vtpin-junit.jar")
CLASSES_JUNIT = os.path.join(BUILD, "java-fixtures", "classes-junit")
LAUNCHER = "/usr/share/java/junit-platform-console-standalone.jar"
SOURCE = os.environ.get("VTPIN_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
MAVEN_REPO = "/usr/share/maven-repo"  # Debian's: the plugins and junit5, at the versions the pom pins
MAVEN_PLUGINS = ("maven-surefire-plugin/2.22.3", "maven-compiler-plugin/3.10.1", "maven-resources-plugin/3.3.0")


def verdicts_of(files):
    """{test name: (verdict, message)} from JUnit XML reports (the launcher's, Surefire's)."""
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
        print("  %-32s %s %s" % (name, verdict, message.split("\n")[0][:160]))
    return verdicts


def launch(feature, props=(), agent=True, select=None, classes=("PinningTests",), wrap=(), packages=()):
    """Runs PinningTests (or the methods in select) under the console launcher; returns
    ({test name: (verdict, message)}, the launcher's output)."""
    for path, what in ((JAR, "vtpin-junit.jar"), (CLASSES_JUNIT, "the JUnit fixtures"), (LAUNCHER, "junit5")):
        if not os.path.exists(path):
            skip("%s not built or installed (%s): install junit5 (scripts/setup.sh) and re-run cmake" % (what, path))
    home = jdk_home(feature)
    reports = tempdir()
    cmd = list(wrap) + [os.path.join(home, "bin", "java")] + (["-agentpath:%s" % AGENT] if agent else []) + [
        "--enable-native-access=ALL-UNNAMED", "-Djava.library.path=" + FIXTURE_LIB] + list(props) + [
        "-jar", LAUNCHER, "--disable-banner", "--details=none", "--reports-dir", reports,
        "-cp", ":".join([CLASSES_JUNIT, JAR, CLASSES])]
    cmd += ["--select-method=PinningTests#" + m for m in select] if select else []
    cmd += [] if (select or packages) and classes == ("PinningTests",) else ["--select-class=" + c for c in classes]
    cmd += ["--select-package=" + p for p in packages]
    print("$ " + " ".join(cmd))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    output = p.stdout + p.stderr
    files = glob.glob(os.path.join(reports, "TEST-*.xml"))
    check(files, "the launcher wrote its report (exit %d)\n%s" % (p.returncode, output))
    verdicts = verdicts_of(files)
    if not wrap:
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


def case_logic(jdk):
    verdicts, _ = launch(int(jdk), agent=False, packages=["dev.vtpin"])
    check(len(verdicts) == 5, "the five tests of ApiLogicTests ran: %s" % sorted(verdicts))
    for name in verdicts:
        passed(verdicts, name)


def case_baseline(jdk):
    feature = int(jdk)
    base = os.path.join(tempdir(), "pins-baseline.json")
    verdicts, output = launch(feature, agent=False, select=["failNative"],
                              wrap=[VTPIN, "run", "--write-baseline", base, "--"])
    failed_with(verdicts, "failNative", "1 pin(s) that count")  # under vtpin run's agent, as with -agentpath
    check(os.path.exists(base) and "wrote the baseline %s: 1 pin site(s)" % base in output,
          "vtpin run wrote the baseline of the one site:\n" + output[-1500:])
    with open(base) as f:
        print(f.read())
    verdicts, _ = launch(feature, select=["failNative", "failTwoAtMostOne", "failInsideOnly"],
                         props=["-Dvtpin.baseline=" + base])
    passed(verdicts, "failNative")  # its site is the baseline's
    passed(verdicts, "failTwoAtMostOne")
    failed_with(verdicts, "failInsideOnly", "1 pin(s) that count",
                "(a new site: com.acme.SlowInit.<clinit> NATIVE)")


def case_maven(jdk):
    mvn = shutil.which("mvn")
    if not mvn:
        skip("mvn not installed (Debian: maven; scripts/setup.sh installs it)")
    for plugin in MAVEN_PLUGINS:
        if not os.path.isdir(os.path.join(MAVEN_REPO, "org/apache/maven/plugins", plugin)):
            skip("%s not in %s (Debian: libsurefire-java, libmaven-*-plugin-java; scripts/setup.sh)" % (plugin,
                                                                                                        MAVEN_REPO))
    if not os.path.exists(JAR):
        skip("vtpin-junit.jar not built (%s): install junit5 (scripts/setup.sh) and re-run cmake" % JAR)
    project = os.path.join(tempdir(), "maven")
    shutil.copytree(os.path.join(SOURCE, "examples", "maven"), project)
    env = dict(os.environ, JAVA_HOME=jdk_home(int(jdk)))
    env.pop("LD_PRELOAD", None)
    cmd = [mvn, "-o", "-B", "-q", "-Dmaven.repo.local=" + MAVEN_REPO, "-Dvtpin.agent=" + AGENT, "-Dvtpin.jar=" + JAR,
           "test"]
    print("$ (cd %s && %s)" % (project, " ".join(cmd)))
    p = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=300)
    output = p.stdout + p.stderr
    check(p.returncode != 0 and "There are test failures" in output,
          "mvn test failed on the pinning test (exit %d)\n%s" % (p.returncode, output[-3000:]))
    verdicts = verdicts_of(glob.glob(os.path.join(project, "target", "surefire-reports", "TEST-*.xml")))
    check(len(verdicts) == 3, "Surefire ran the example's three tests: %s\n%s" % (sorted(verdicts), output[-3000:]))
    failed_with(verdicts, "totalPinsWhileTheCatalogLoads", "at most 0 allowed (@NoPinning)",
                "at com.example.Catalog.load(Catalog.java:", "com.example.Catalog.<clinit>")
    passed(verdicts, "shipIsClean")
    passed(verdicts, "inEuroPinsInAllowedCode")


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
                  "parallel": case_parallel, "maven": case_maven,
                  "baseline": case_baseline, "logic": case_logic}))
