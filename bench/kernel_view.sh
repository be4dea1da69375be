#!/usr/bin/env bash
# Cost of the collector's kernel view on a host-wide context-switch storm:
# `perf bench sched pipe` (two processes ping-ponging through pipes, untracked
# by the BPF program: each switch costs it two hash lookups) with and without a
# collector holding the kernel view, alternated ROUNDS times; prints the median
# usecs/op of each and their ratio. Needs root (the kernel view) and perf.
# usage: bench/kernel_view.sh [ROUNDS=9] [LOOPS=300000]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
vtpin=${VTPIN:-$root/build/vtpin}
rounds=${1:-9}
loops=${2:-300000}
command -v perf >/dev/null || { echo "perf not installed (linux-perf)" >&2; exit 77; }
((EUID == 0)) || { echo "the kernel view needs root" >&2; exit 77; }
tmp=$(mktemp -d)
coll=
cleanup() { [[ -n $coll ]] && kill "$coll" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
one() { perf bench sched pipe -l "$loops" 2>/dev/null | awk '/usecs\/op/ {print $1}'; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
for ((i = 0; i < rounds; i++)); do
  one >>"$tmp/off"
  "$vtpin" collector --kernel=on -s "$tmp/s" -d "$tmp/d" 2>"$tmp/log" &
  coll=$!
  for _ in $(seq 50); do [[ -S $tmp/s ]] && break; sleep 0.05; done
  [[ -S $tmp/s ]] || { cat "$tmp/log" >&2; exit 1; }
  one >>"$tmp/on"
  kill "$coll"; wait "$coll" || true; coll=
done
off=$(median <"$tmp/off"); on=$(median <"$tmp/on")
printf 'perf bench sched pipe, %d rounds of %d loops: without %.3f us/op, with the kernel view %.3f us/op, ratio %.3f\n' \
  "$rounds" "$loops" "$off" "$on" "$(awk -v a="$on" -v b="$off" 'BEGIN {print a / b}')"
