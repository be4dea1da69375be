#!/usr/bin/env bash
# Detection latency only: bench/run.sh --only latency [--pins N] [--jdks 21,25] [--poll-us N] [--no-build]
exec "$(dirname "$0")/run.sh" --only latency "$@"
