#!/usr/bin/env bash
# The main job in one command: builds vtpin, runs the seed's Repro on JDK 21
# and 25 and a JNI fixture (native method calling back into Java that sleeps)
# under the agent, and prints what vtpin found in each run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VTPIN_BUILD_DIR:-$root/build}
eval "$("$root/scripts/build.sh")"
out=$(mktemp -d /tmp/vtpin-demo.XXXXXX)
fixtures="$build/java-fixtures"

run() { # jdk title fixture [java args...]
  local jdk=$1 title=$2 fixture=$3
  shift 3
  local home_var="JAVA${jdk}_HOME"
  local rec="$out/$fixture-$jdk.vtp"
  printf '\n=== JDK %s: %s ===\n' "$jdk" "$title"
  "${!home_var}/bin/java" "-agentpath:$build/agent/libvtpin.so=record=$rec,quiet" \
    --enable-native-access=ALL-UNNAMED -Djava.library.path="$fixtures/lib" -cp "$fixtures/classes" \
    "$@" "$fixture" | sed 's/^/  program: /'
  "$build/vtpin" report "$rec"
}

carriers="-Djdk.virtualThreadScheduler.parallelism=4 -Djdk.virtualThreadScheduler.maxPoolSize=4"
# shellcheck disable=SC2086
run 21 "Repro: sleep inside synchronized (pins on 21-23)" Repro $carriers
# shellcheck disable=SC2086
run 25 "Repro: the same code (JEP 491: no monitor pins on 24+)" Repro $carriers
run 21 "JniSleep: native method calling back into Java that sleeps" JniSleep -Djdk.virtualThreadScheduler.parallelism=2
run 25 "JniSleep: native frames pin on every JDK" JniSleep -Djdk.virtualThreadScheduler.parallelism=2
for rec in "$out"/*.vtp; do # a page per run to look at: flame graph and carrier timeline
  "$build/vtpin" report "$rec" --format html -o "${rec%.vtp}.html"
done
printf '\nRecordings kept in %s (read them with: %s report FILE [--format json|html|collapsed|perfetto])\n' \
  "$out" "$build/vtpin"
printf "HTML reports (open in a browser): %s\n" "$out/*.html"
