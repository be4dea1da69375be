#!/usr/bin/env bash
# The one command that runs every test: sets up, builds, and runs CTest
# (labels: unit, jvm). Extra arguments go to ctest, e.g. `-L unit` or `-R repro`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VTPIN_BUILD_DIR:-$root/build}
eval "$("$root/scripts/build.sh")"
# Serial on purpose: the JVM tests start real JVMs on a small machine.
ctest --test-dir "$build" --output-on-failure "$@"
