#!/bin/sh
# The vtpin command's exit statuses and usage errors (cli/exit_codes.h,
# cli/usage.h), on the real binary, no JVM: each usage error is exactly
# "vtpin CMD: message" and "Try 'vtpin CMD --help'." on stderr with status 2;
# each --help goes to stdout with status 0; `run` without a JVM exits 4
# (nothing judged) when its command exited 0, else passes the command's own
# status, 127 when it cannot be executed and 128+N when signal N ended it.
# usage: cli_usage.sh /path/to/vtpin
vtpin=${1:?usage: cli_usage.sh VTPIN}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0 passed=0

fail() {
    echo "FAIL: $*"
    failed=$((failed + 1))
}

# expect STATUS EXPECTED_STDERR ARGS...: exact status and exact stderr
expect() {
    want_rc=$1 want_err=$2
    shift 2
    "$vtpin" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    printf '%s\n' "$want_err" >"$tmp/want"
    if [ "$rc" -ne "$want_rc" ]; then
        fail "vtpin $*: exit $rc, expected $want_rc; stderr: $(cat "$tmp/err")"
    elif ! cmp -s "$tmp/err" "$tmp/want"; then
        fail "vtpin $*: stderr differs:"
        diff "$tmp/want" "$tmp/err"
    else
        passed=$((passed + 1))
    fi
}

# usage CMD MESSAGE ARGS...: a usage error of CMD
usage() {
    cmd=$1 msg=$2
    shift 2
    expect 2 "vtpin $cmd: $msg
Try 'vtpin $cmd --help'." "$cmd" "$@"
}

usage status "unknown option '--bogus'" --bogus
usage status "option '--socket' needs a value" --socket
usage status "--pid: 'abc' is not a process id" --pid abc
usage status "--timeout: '0' is not a duration between 1ms and 1h (e.g. 500ms, 5s)" --timeout 0
usage status "unexpected argument 'extra'" extra
usage top "--interval: '1ms' is not a duration of at least 100ms (e.g. 2s)" --interval 1ms
usage top "--pid: '-3' is not a process id" --pid -3
usage top "unknown option '-x'" -x
usage top "unexpected argument 'extra'" --once extra
usage report "which recording? (vtpin report FILE)"
usage report "unknown format 'xml' (text, json, html, collapsed, perfetto or pprof)" -f xml a.vtp
usage report "one recording at a time ('b.vtp' is one too many)" a.vtp b.vtp
usage report "--top wants a count, not 'many'" --top many a.vtp
usage attach "which JVM? give its PID"
usage attach "'abc' is not a process id" abc
usage attach "unexpected argument 'c' (OPTIONS is one string: a,b=c,...)" 1 a c
usage attach "--timeout: '0s' is not a duration above 0 (e.g. 500ms, 10s)" --timeout 0s 1
usage collector "--window: '0' is not a duration between 1s and 24h (e.g. 60s, 5m)" --window 0
usage collector "--metrics-listen-any needs --metrics=HOST:PORT" --metrics-listen-any
usage collector "--allow-see-all needs --allow-uid or --allow-gid" --allow-see-all
usage collector "unexpected argument 'extra'" extra
usage collector "--jvms: 'some' is not all, agents or under:PID" --jvms=some
usage collector "--record-max: '10k' is not 0 or a size of at least 64k" --record-max=10k
usage collector "--record-keep: '0' is not a count between 1 and 1000" --record-keep 0
usage collector "--jvms: 'under:x' is not all, agents or under:PID" --jvms=under:x
usage collector "--attach-on-pin, --attach-only, --attach-deny and --attach-per-minute need zero-touch, which --jvms=agents turns off" --jvms=agents --attach-on-pin
usage collector "--attach-only, --attach-deny and --attach-per-minute need --attach-on-pin" --jvms=all --attach-deny='*x*'
usage collector "--attach-on-pin: '5x' is not a duration of at most 1h" --jvms=all --attach-on-pin=5x
usage collector "--attach-per-minute: '17' is not a number from 1 to 16" --jvms=all --attach-on-pin --attach-per-minute=17
usage run "--fail-on-pins wants a count, got 'x'" --fail-on-pins x -- true
usage run "--fail-on-pinned-time wants a duration such as 500ms, got 'soon'" --fail-on-pinned-time soon -- true
usage run "--format is text or json" --format xml -- true
usage run "--background-timeout wants a duration such as 60s or 0, got 'long'" --background-timeout long -- true
usage run "--attach-on-pin: '5x' is not a duration of at most 1h" --attach-on-pin=5x -- true
usage run "--attach-on-pin needs the run's own collector: not with --socket or --no-collector" --attach-on-pin --no-collector -- true
usage run "--agent-options: record=/tmp/x-%p.vtp would replace the run's own (the agent keeps one record, the last given), and the run would not see what its JVMs do; the run records each JVM into --dir DIR" --agent-options threshold=0,record=/tmp/x-%p.vtp -- true
usage run "--agent-options: collector would replace the run's own (the agent keeps one collector, the last given), and the run would not see what its JVMs do; --socket PATH streams the run to a collector of yours" --agent-options collector -- true
usage run "--agent-options: white space in 'quiet -Dx=1': JAVA_TOOL_OPTIONS is split there, and the rest would reach the JVM as options of its own" --agent-options "quiet -Dx=1" -- true

# the usage on stderr for these, with status 2
for args in "" "nosuch" "run"; do
    # shellcheck disable=SC2086
    "$vtpin" $args >/dev/null 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne 2 ] || ! grep -q "^usage: vtpin" "$tmp/err"; then
        fail "vtpin $args: exit $rc (expected 2) with the usage on stderr"
    else
        passed=$((passed + 1))
    fi
done

# --help: the usage on stdout, status 0, for vtpin and every command
for cmd in "" report collector status top attach run; do
    # shellcheck disable=SC2086
    "$vtpin" $cmd --help >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne 0 ] || ! grep -q "^usage: vtpin $cmd" "$tmp/out" || [ -s "$tmp/err" ]; then
        fail "vtpin $cmd --help: exit $rc, stdout $(head -c 80 "$tmp/out"), stderr $(head -c 80 "$tmp/err")"
    else
        passed=$((passed + 1))
    fi
done

# failures, not usage errors: status 1
expect 1 "vtpin report: $tmp/none.vtp: No such file or directory" report "$tmp/none.vtp"
# the magic is checked first: a device or an endless pipe of something else is not read to its end
# (issue 37: `vtpin report /dev/zero` grew to 2.1 GB in 7 s); timeout ends a reader that never stops
expect 1 "vtpin report: /dev/zero: not a vtpin recording (bad magic)" report /dev/zero
yes | timeout 10 "$vtpin" report - >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 1 ] || [ "$(cat "$tmp/err")" != "vtpin report: <stdin>: not a vtpin recording (bad magic)" ]; then
    fail "yes | vtpin report -: exit $rc, expected 1 at once; stderr: $(cat "$tmp/err")"
else
    passed=$((passed + 1))
fi
"$vtpin" status --socket "$tmp/no.sock" >/dev/null 2>&1
rc=$?
[ "$rc" -eq 1 ] && passed=$((passed + 1)) || fail "vtpin status with no collector: exit $rc, expected 1"

# run without a JVM (no gate can fail): nothing judged, 4, when the command
# exited 0; else the command's own status, 127 when it cannot be executed,
# 128+N when signal N ended it
run_status() {
    want=$1 what=$2
    shift 2
    "$vtpin" run --no-collector --dir "$tmp/run" -- "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "vtpin run ($what): exit $rc, expected $want; stderr: $(cat "$tmp/err")"
    elif ! grep -q "^vtpin run: nothing judged: no JVM ran with vtpin" "$tmp/out"; then
        fail "vtpin run ($what): no verdict line: $(cat "$tmp/out")"
    else
        passed=$((passed + 1))
    fi
}
run_status 4 "true" true
run_status 7 "exit 7" sh -c 'exit 7'
run_status 127 "no such command" "$tmp/no-such-command"
run_status 143 "killed by SIGTERM" sh -c 'kill -TERM $$'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
