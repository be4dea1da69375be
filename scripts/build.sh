#!/usr/bin/env bash
# Provides the dependencies (scripts/setup.sh) and builds vtpin into build/.
# Prints nothing on stdout but the `export JAVAnn_HOME=...` lines, so callers
# can `eval "$(scripts/build.sh)"`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VTPIN_BUILD_DIR:-$root/build}
jdks=$("$root/scripts/setup.sh")
eval "$jdks"
{
  cmake -S "$root" -B "$build" -DJAVA21_HOME="$JAVA21_HOME" -DJAVA25_HOME="$JAVA25_HOME" \
    -DJAVA26_HOME="${JAVA26_HOME:-}" -DJAVA27_HOME="${JAVA27_HOME:-}"
  cmake --build "$build" -j"$(nproc)"
} >&2
printf '%s\n' "$jdks"
