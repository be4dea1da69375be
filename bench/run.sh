#!/usr/bin/env bash
# vtpin benchmarks: overhead tables, detection latency, collector ingest, zero-touch.
#
#   bench/run.sh                 full run (~22 min on 2 cores): 1 warm-up + 6 measured rounds
#   bench/run.sh --quick         smoke run (< 3 min): 1 round, small workloads, 9 latency pins
#   bench/run.sh --rounds 7 --jdks 21 --workloads service --configs none,floor,vtpin-exact
#   bench/run.sh --only latency  (also: bench/latency.sh)
#   bench/run.sh --only ingest
#   bench/run.sh --configs none,floor,jfr,zero-touch --workloads mountchurn-steady,service
#   bench/run.sh --only zerotouch-idle  (also: python3 bench/zerotouch_idle.py [--jvms 50] [--seconds 30])
#   bench/run.sh --only junit-suite     (also: python3 bench/junit_suite.py [--rounds 5]): @NoPinning vs JFR
#
# Options: --quick, --rounds N, --jdks 21,25, --workloads mountchurn,mountchurn-steady,service,cpu,
#   --configs none,floor,jfr,jfr-pinned,zero-touch,vtpin-pins,vtpin-exact,vtpin-sampled,vtpin-collector,
#   --only overhead,latency,ingest,zerotouch-idle,junit-suite (the last two only when named), --pins N, --poll-us N,
#   --out DIR (default bench/results), --keep (keep every run's logs), --no-build (use build/ as it
#   is; only the bench tools are built).
# zero-touch: no agent, a `vtpin collector --jvms=all --kernel=on` watches the JVM (root); target
#   wall <= 1.02 x no agent on mount churn and service. zerotouch-idle: that collector's CPU with 50
#   idle JVMs (JDK 21 and 25) over 30 s, and a --jvms=agents one beside them; target < 1 % of a CPU.
# Tables go to stdout and to DIR/<date>-jdk<N>.md (+ .json with every run), DIR/<date>-ingest.md,
# DIR/<date>-zerotouch-idle.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VTPIN_BUILD_DIR:-$root/build}

build_project=1
args=()
for a in "$@"; do
  case "$a" in
    --no-build) build_project=0 ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) args+=("$a") ;;
  esac
done

if [ "$build_project" = 1 ]; then
  echo "bench: building vtpin (scripts/build.sh)" >&2
  if ! jdks=$("$root/scripts/build.sh"); then
    echo "bench: the build failed (see above); fix it, or rerun with --no-build to measure build/ as it is" >&2
    exit 1
  fi
  eval "$jdks"
else
  if [ -z "${JAVA21_HOME:-}" ] || [ -z "${JAVA25_HOME:-}" ]; then
    # shellcheck disable=SC1091
    source "$HOME/.cache/vtpin/jdks.env"
  fi
fi
export JAVA21_HOME JAVA25_HOME

# The bench's own C programs: CMake targets of bench/CMakeLists.txt, in $build/bench.
if [ "$build_project" = 0 ]; then
  cmake --build "$build" --target vtpin_bench_empty_agent vtpin_benchtool vtpin_bench_ingest >&2
fi

exec python3 "$root/bench/bench.py" "${args[@]}"
