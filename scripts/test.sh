#!/usr/bin/env bash
# The one command that runs every test: sets up, builds, and runs CTest in
# four build directories:
#   scripts/lint.sh  every C file in .clang-format's layout, clang-tidy clean (beside build/'s tests)
#   build/           everything: labels unit, jvm, collector
#   build-sanitize/  VTPIN_SANITIZE=ON (gcc, ASan+UBSan on every target): the
#                    unit and collector tests and every JVM test with the
#                    ASan agent (asan), side by side
#   build-tsan/      VTPIN_TSAN=ON (clang, ThreadSanitizer): the agent's lock-free code and its
#                    unit tests on real threads (tsan)
#   build-fuzz/      VTPIN_FUZZ=ON (clang, libFuzzer): each target replays its
#                    committed corpus, then fuzzes a fixed count of inputs, or for
#                    VTPIN_FUZZ_SECONDS when that is set (fuzz)
# JVM tests run VTPIN_TEST_JOBS at a time (default 2), those with the ASan agent VTPIN_ASAN_JOBS
# (default 2), with VTPIN_LIGHT_JOBS light ones (unit, collector; default 2) beside them; the tests that
# make load of their own or compare timings always run alone, last (label serial in tests/cases.txt).
# Extra arguments go to ctest in build/ only, e.g. `-L unit` or `-R repro`, and
# then the others are skipped. VTPIN_SANITIZE_TESTS=0 / VTPIN_TSAN_TESTS=0 /
# VTPIN_FUZZ_TESTS=0 skip one of them in a full run. Every part runs; the exit
# status is 1 when any failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VTPIN_BUILD_DIR:-$root/build}
eval "$("$root/scripts/build.sh")"
# Two at a time: a clean-clone run takes about 16 minutes, not 27 (issue 35). A test that fails beside
# another has found a fault of vtpin or of its own (docs/testing.md lists those found so far);
# VTPIN_TEST_JOBS=1 VTPIN_ASAN_JOBS=1 VTPIN_LIGHT_JOBS=0 runs one at a time.
jobs=${VTPIN_TEST_JOBS:-2}
if (($# > 0)); then
  exec ctest --test-dir "$build" --output-on-failure -j "$jobs" "$@"
fi

printf '== set up and built (scripts/build.sh): %d s\n' "$SECONDS" >&2
failed=()
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# JVM, kernel-view and install tests each take one of $jobs "cpu" slots (RESOURCE_GROUPS, tests/CMakeLists.txt);
# VTPIN_LIGHT_JOBS light tests (unit, collector: mostly waits on the collector's bounds) may run beside them
resources() { # file, slots
  printf '{"version": {"major": 1, "minor": 0}, "local": [{"cpu": [{"id": "cores", "slots": %d}]}]}\n' "$2" > "$1"
}
resources "$logs/resources.json" "$jobs"
light_jobs=${VTPIN_LIGHT_JOBS:-2}
light=$((jobs + light_jobs))
asan_jobs=${VTPIN_ASAN_JOBS:-2}
resources "$logs/resources-asan.json" "$asan_jobs"
step() { # name, command...: its wall time is said, so a slow part of a run shows
  local name=$1 began=$SECONDS
  shift
  printf '\n== %s\n' "$name" >&2
  "$@" || failed+=("$name")
  printf '== %s: %d s (%d s since the start)\n' "$name" $((SECONDS - began)) "$SECONDS" >&2
}
ctest_logged() { # log file, ctest arguments...
  local log=$1
  shift
  ctest "$@" 2>&1 | tee -a "$log" >&2
}
tests() { # name, ctest arguments...: a step whose failing tests' output ends the run again
  local name=$1 log
  shift
  log="$logs/$(find "$logs" -name '*.log' | wc -l).log"
  printf '%s\n' "$name" > "$log"
  step "$name" ctest_logged "$log" "$@"
}
# The first lines of each failed test's output, under its step's name: a long run's end says why
# tests failed, not only which.
failures() {
  local log
  for log in "$logs"/*.log; do
    awk 'NR == 1 {name = $0; next} /\*\*\*/ && !/\*\*\*Skipped/ {if (name != "") print "  " name ":"; name = ""; n = 8; print; next}
         /^ +Start +[0-9]+:/ {n = 0} n > 0 {print; n--}' "$log"
  done
}
configure_build() { # C compiler, dir, cmake options...
  local cc=$1 dir=$2
  shift 2
  { CC=$cc cmake -S "$root" -B "$dir" -DJAVA21_HOME="$JAVA21_HOME" -DJAVA25_HOME="$JAVA25_HOME" \
    -DJAVA26_HOME="${JAVA26_HOME:-}" -DJAVA27_HOME="${JAVA27_HOME:-}" "$@" &&
    cmake --build "$dir" -j"$(nproc)"; } >&2
}

# Lint and the sanitized build run while build/'s tests do, the TSan and fuzz builds and the fuzzing while
# the ASan stage's do, at idle priority (SCHED_IDLE: a CPU that a test wants is the test's at once): the
# tests leave part of a core idle. Each fuzz target fuzzes a fixed count of inputs
# (tests/fuzz/CMakeLists.txt), as many at idle priority as alone.
san=${VTPIN_SANITIZE_BUILD_DIR:-$root/build-sanitize}
tsan=${VTPIN_TSAN_BUILD_DIR:-$root/build-tsan}
fuzz=${VTPIN_FUZZ_BUILD_DIR:-$root/build-fuzz}
declare -A meanwhile
run_meanwhile() { # name, command...: started now, in the background, at idle priority
  local name=$1
  shift
  (chrt --idle -p 0 "$BASHPID" >/dev/null 2>&1 || renice -n 19 -p "$BASHPID" >/dev/null
   "$@") > "$logs/meanwhile-$name.txt" 2>&1 &
  meanwhile[$name]=$!
}
joined() { # name: waits for what run_meanwhile started; its output if it failed
  local rc=0
  wait "${meanwhile[$1]}" || rc=$?
  ((rc == 0)) || cat "$logs/meanwhile-$1.txt" >&2
  return $rc
}
run_meanwhile lint "$root/scripts/lint.sh" "$build"
[[ ${VTPIN_SANITIZE_TESTS:-1} == 0 ]] || run_meanwhile sanitize configure_build gcc "$san" -DVTPIN_SANITIZE=ON

tests "tests side by side (build/)" --test-dir "$build" --output-on-failure -j "$light" \
  --resource-spec-file "$logs/resources.json" -LE serial
# The builds started meanwhile end before the tests that compare timings or make load of their own
# (label serial): those run with nothing else on the machine, an idle-priority compile included.
step "lint: clang-format and clang-tidy (scripts/lint.sh, ran meanwhile: the wait)" joined lint
[[ ${VTPIN_SANITIZE_TESTS:-1} == 0 ]] || step "sanitized build (build-sanitize/, built meanwhile: the wait)" joined sanitize
tests "tests alone (build/, serial)" --test-dir "$build" --output-on-failure -L serial

fuzzing() { # builds build-fuzz/, then replays and fuzzes each target (its ctest output is a step's log)
  configure_build clang "$fuzz" -DVTPIN_FUZZ=ON -DVTPIN_FUZZ_SECONDS="${VTPIN_FUZZ_SECONDS:-0}" || return
  printf 'fuzz targets: corpus replay and bounded runs\n' > "$logs/fuzz.log"
  ctest --test-dir "$fuzz" --output-on-failure -L fuzz -j2 >> "$logs/fuzz.log" 2>&1
}
[[ ${VTPIN_TSAN_TESTS:-1} == 0 ]] || run_meanwhile tsan configure_build clang "$tsan" -DVTPIN_TSAN=ON
[[ ${VTPIN_FUZZ_TESTS:-1} == 0 ]] || run_meanwhile fuzz fuzzing

if [[ ${VTPIN_SANITIZE_TESTS:-1} != 0 ]]; then
  # the unit and collector tests (mostly waits on the collector's bounds) beside the JVM tests with the
  # ASan agent; the timing comparisons that the ASan agent's slower callbacks moved past their bounds
  # beside another test run alone (serial) or not under ASan (no-asan); nested_pins repeats 6 times
  # (about 6 s a run under ASan; the build/ stage repeats it 30 times)
  VTPIN_NESTED_RUNS=${VTPIN_NESTED_RUNS:-6} \
    tests "unit, collector and JVM tests under ASan/UBSan, side by side" --test-dir "$san" --output-on-failure \
    -j "$((asan_jobs + light_jobs))" --resource-spec-file "$logs/resources-asan.json" -L 'unit|collector|asan' -LE serial
fi

if [[ ${VTPIN_TSAN_TESTS:-1} != 0 ]]; then
  step "ThreadSanitizer build (build-tsan/, built meanwhile: the wait)" joined tsan
  tests "the lock-free code under ThreadSanitizer" --test-dir "$tsan" --output-on-failure -L tsan
fi

if [[ ${VTPIN_FUZZ_TESTS:-1} != 0 ]]; then
  # what the fuzzing said, once it ended: its output is its step's log (the failures at the end name it)
  step "fuzz targets: corpus replay and bounded runs (built and run meanwhile: the wait)" joined fuzz
  [[ ! -f $logs/fuzz.log ]] || tail -n +2 "$logs/fuzz.log" >&2
fi

if [[ ${VTPIN_SANITIZE_TESTS:-1} != 0 ]]; then
  tests "JVM tests under ASan/UBSan, alone (serial)" --test-dir "$san" --output-on-failure -L serial -L asan
fi

# HotSpot's reports of the run's JVMs that crashed (written in the JVM's working directory, a build's tests/
# or else /tmp, which a CI machine does not keep): the crashing thread and its frames
crash_reports() {
  local report
  find "$build" "$san" /tmp -maxdepth 3 -name 'hs_err_pid*.log' -newer "$logs/resources.json" 2>/dev/null |
    while read -r report; do
      printf '\n%s:\n' "$report"
      sed -n '/^# Problematic frame/,/^Java frames/p' "$report" | head -n 80
    done
}

if ((${#failed[@]} > 0)); then
  printf '\nfailed tests, their first lines:\n' >&2
  failures >&2
  crash_reports >&2
  printf '\nFAILED:\n' >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
printf '\nall test runs passed\n' >&2
