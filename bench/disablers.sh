#!/usr/bin/env bash
# How often each configuration holds up every carrier's virtual-thread mounts:
# counts HotSpot's all-threads transition disabler
# (JvmtiVTMSTransitionDisabler::VTMS_transition_disable_for_all), the
# GetVirtualThread extension, and the one-thread disabler (VTMS_transition_disable_for_one:
# a JVMTI call on one virtual thread; it holds up that thread's transitions and sends
# every other mount through a counter check) with uprobes on libjvm.so, one run per
# configuration of a bench workload. Counts, not timings: steady on a noisy
# machine. Needs root (tracefs uprobes), perf and a libjvm.so with a symbol
# table (Temurin's and Debian's have one).
# usage: bench/disablers.sh JDK_HOME [mountchurn|service]
#   VTPIN_OLD_AGENT=path adds "old default" (that agent, occupancy=sampled)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
home=${1:?usage: bench/disablers.sh JDK_HOME [mountchurn|service]}
workload=${2:-mountchurn}
libjvm=$home/lib/server/libjvm.so
tracefs=/sys/kernel/tracing
group=vtpin_disablers_$$
command -v perf >/dev/null || { echo "perf not installed (linux-perf)" >&2; exit 77; }
((EUID == 0)) || { echo "uprobes need root" >&2; exit 77; }
[[ -w $tracefs/uprobe_events ]] || { echo "no tracefs at $tracefs" >&2; exit 77; }

# a symbol's file offset: its address in the executable segment, moved by that segment's offset
offset_of() {
  local addr
  addr=$(nm "$libjvm" 2>/dev/null | awk -v s="$1" '$3 == s {print $1; exit}')
  [[ -n $addr ]] || { echo "$libjvm has no symbol $1 (stripped?)" >&2; exit 77; }
  local off va
  read -r off va < <(readelf -lW "$libjvm" | awk '$1 == "LOAD" && $7 ~ /E/ {print $2, $3; exit}')
  printf '0x%x\n' $((16#$addr - va + off))
}
cleanup() { echo "-:$group/all" >>"$tracefs/uprobe_events" 2>/dev/null || true
            echo "-:$group/gvt" >>"$tracefs/uprobe_events" 2>/dev/null || true
            echo "-:$group/one" >>"$tracefs/uprobe_events" 2>/dev/null || true
            rm -f /tmp/vtpin-disablers-$$.*; }
trap cleanup EXIT
echo "p:$group/all $libjvm:$(offset_of _ZN27JvmtiVTMSTransitionDisabler31VTMS_transition_disable_for_allEv)" \
  >>"$tracefs/uprobe_events"
echo "p:$group/gvt $libjvm:$(offset_of _ZL16GetVirtualThreadPK9_jvmtiEnvz)" >>"$tracefs/uprobe_events"
echo "p:$group/one $libjvm:$(offset_of _ZN27JvmtiVTMSTransitionDisabler31VTMS_transition_disable_for_oneEv)" \
  >>"$tracefs/uprobe_events"

case $workload in
  mountchurn) args=(BenchMountChurn shape=steady concurrent=16 threads=200000 yields=10 warmup=50000 warmupPasses=1) ;;
  service) args=(BenchService requests=20000 concurrency=16 warmup=25000 work=4096 sleepMs=1) ;;
  *) echo "workload: mountchurn or service" >&2; exit 2 ;;
esac
tmp=/tmp/vtpin-disablers-$$
agent=$build/agent/libvtpin.so
configs=("no agent|" "JFR default|-XX:StartFlightRecording=settings=default,filename=$tmp.jfr"
         "vtpin pins only|-agentpath:$agent=occupancy=off,record=$tmp.vtp,quiet"
         "vtpin default|-agentpath:$agent=occupancy=sampled,record=$tmp.vtp,quiet")
[[ -n ${VTPIN_OLD_AGENT:-} ]] &&
  configs+=("old default|-agentpath:$VTPIN_OLD_AGENT=occupancy=sampled,record=$tmp.vtp,quiet")

echo "$(basename "$home"), ${args[0]}: calls per run"
echo "| configuration | all-threads disablers | GetVirtualThread | one-thread disablers |"
echo "|---|---|---|---|"
for c in "${configs[@]}"; do
  name=${c%%|*} flag=${c#*|}
  # shellcheck disable=SC2086 # flag is one option or none
  perf stat -x, -e "$group:all,$group:gvt,$group:one" -o "$tmp.stat" -- "$home/bin/java" -Xms1g -Xmx1g \
    --enable-native-access=ALL-UNNAMED $flag -cp "$build/java-fixtures/classes" \
    -Djava.library.path="$build/java-fixtures/lib" "${args[@]}" >"$tmp.out" 2>&1 ||
    { cat "$tmp.out" >&2; exit 1; }
  awk -F, -v n="$name" '$3 ~ /:all$/ {a = $1} $3 ~ /:gvt$/ {g = $1} $3 ~ /:one$/ {o = $1}
                        END {printf "| %s | %s | %s | %s |\n", n, a, g, o}' "$tmp.stat"
done
