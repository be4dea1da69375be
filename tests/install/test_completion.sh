#!/usr/bin/env bash
# The bash completion of vtpin (packaging/bash-completion/vtpin): sourced into a
# plain bash, _vtpin is called as bash calls it and its COMPREPLY checked.
# usage: test_completion.sh COMPLETION_FILE
set -u
file=${1:?usage: test_completion.sh COMPLETION_FILE}
# shellcheck disable=SC1090
source "$file" || { echo "FAIL: cannot source $file"; exit 1; }
fails=0

# complete LINE: COMP_WORDS from LINE split on blanks (a trailing blank: an empty word)
complete_line()
{
    local line=$1
    read -r -a COMP_WORDS <<<"$line"
    if [[ $line == *" " ]]; then
        COMP_WORDS+=("")
    fi
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE=$line
    COMP_POINT=${#line}
    COMPREPLY=()
    _vtpin vtpin "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
}

# expect LINE WORD...: COMPREPLY (sorted) is exactly the words
expect()
{
    local line=$1
    shift
    complete_line "$line"
    local got want
    got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ')
    want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
    if [[ $got != "$want" ]]; then
        echo "FAIL: '$line' completed to [$got], want [$want]"
        fails=$((fails + 1))
    else
        echo "ok: '$line' -> [$got]"
    fi
}

# expect_has LINE WORD...: COMPREPLY holds each of the words
expect_has()
{
    local line=$1 w
    shift
    complete_line "$line"
    for w in "$@"; do
        if ! printf '%s\n' "${COMPREPLY[@]}" | grep -qxF -- "$w"; then
            echo "FAIL: '$line' did not offer '$w' (got: ${COMPREPLY[*]})"
            fails=$((fails + 1))
            return
        fi
    done
    echo "ok: '$line' offers $*"
}

complete -p vtpin >/dev/null 2>&1 || { echo "FAIL: no 'complete ... vtpin' registered"; fails=$((fails + 1)); }
expect "vtpin " report collector status top attach run
expect "vtpin r" report run
expect "vtpin co" collector
expect "vtpin --" --help --version
expect "vtpin report --f" --format --full-stacks
expect "vtpin report --format " text json html collapsed perfetto
expect "vtpin report -f h" html
expect "vtpin report --format = p" perfetto
expect "vtpin collector --kernel " auto on off
expect "vtpin collector --met" --metrics --metrics-listen-any
expect_has "vtpin collector --" --socket --dir --alert-k --alert-after --window --max-frame --max-clients \
    --memory-budget --kernel --kernel-min --allow-uid --allow-gid --allow-see-all --verbose --help
expect "vtpin status --" --socket --json --pid --timeout --help
expect "vtpin top --" --socket --once --json --interval --pid --timeout --help
expect "vtpin attach --" --agent --timeout --verbose --help
expect "vtpin attach 1 st" stop
expect_has "vtpin attach 1 " stop record= collector
expect "vtpin run --fail" --fail-on-pins --fail-on-pinned-time --fail-on-native-block --fail-on-hogs --fail-on-deadlock
expect "vtpin run --format " text json
expect "vtpin run --no" --no-collector --no-fail-on-deadlock --no-end-on-deadlock
expect "vtpin run --end" --end-on-deadlock
expect_has "vtpin run -- ba" bash
expect "vtpin status --timeout " # a value: nothing to offer

# files: report's argument, --output
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
touch "$tmp/app.vtp" "$tmp/other.txt"
expect "vtpin report $tmp/app" "$tmp/app.vtp"
expect "vtpin report -o $tmp/oth" "$tmp/other.txt"
mkdir "$tmp/recs"
expect "vtpin collector --dir $tmp/r" "$tmp/recs"

# attach's first argument: the pids of running JVMs, and only those
if [[ -n ${VTPIN_TEST_JAVA:-} && -x $VTPIN_TEST_JAVA ]]; then
    # a JVM that stays up until killed (a one-file source program)
    printf '%s\n' 'class W { public static void main(String[] a) throws Exception {' \
        '  System.out.println("up"); System.out.flush(); Thread.sleep(300000); } }' >"$tmp/W.java"
    "$VTPIN_TEST_JAVA" -XX:TieredStopAtLevel=1 "$tmp/W.java" >"$tmp/jvm.out" 2>&1 &
    jvm=$!
    for _ in $(seq 1 600); do
        grep -q up "$tmp/jvm.out" 2>/dev/null && break
        sleep 0.1
    done
    expect_has "vtpin attach " "$jvm"
    complete_line "vtpin attach "
    if printf '%s\n' "${COMPREPLY[@]}" | grep -qxF "$$"; then
        echo "FAIL: attach offered this bash ($$), which is not a JVM"
        fails=$((fails + 1))
    fi
    kill "$jvm" 2>/dev/null
    wait "$jvm" 2>/dev/null
fi

if ((fails)); then
    echo "$fails completion check(s) failed"
    exit 1
fi
echo "all completion checks passed"
