#!/usr/bin/env bash
# What the repository declares about its C code, enforced: every C file is in
# .clang-format's layout, and clang-tidy finds nothing with .clang-tidy's checks.
#   scripts/lint.sh [BUILD_DIR]    BUILD_DIR holds compile_commands.json (default build/)
#   VTPIN_LINT_FIX=1               rewrite files into the layout instead of failing
#   VTPIN_TIDY_CACHE=off           run clang-tidy on every unit (default: a unit whose preprocessed
#                                  input was found clean before is not checked again)
# Generated code (protobuf-c, the BPF skeleton, the embedded page) is in the
# build directory and is not checked. Exit 1 when anything is found.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
cd "$root"
dirs=(agent cli collector common proto tests bench)
existing=()
for d in "${dirs[@]}"; do [[ -d $d ]] && existing+=("$d"); done
mapfile -t files < <(git ls-files -- "${existing[@]}" | grep -E '\.(c|h)$' | grep -v '\.bpf\.c$' || true)
failed=0

if [[ ${VTPIN_LINT_FIX:-0} == 1 ]]; then
  clang-format -i "${files[@]}"
else
  unformatted=()
  for f in "${files[@]}"; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
  done
  if ((${#unformatted[@]} > 0)); then
    printf 'lint: not in .clang-format layout (fix: VTPIN_LINT_FIX=1 scripts/lint.sh):\n' >&2
    printf '  %s\n' "${unformatted[@]}" >&2
    failed=1
  fi
fi

if [[ ! -f $build/compile_commands.json ]]; then
  echo "lint: $build/compile_commands.json missing: build first (scripts/build.sh)" >&2
  exit 1
fi
# Only the project's own translation units (not the build directory's generated ones);
# bench/ is held to the compiler's warnings, not to the analyzer (its tools exit on error).
tidy_dirs=()
for d in "${existing[@]}"; do [[ $d != bench ]] && tidy_dirs+=("$d"); done
pattern="^$root/($(IFS='|'; echo "${tidy_dirs[*]}"))/"
# each unit skipped when the very same input was found clean before (scripts/tidy_cached.py)
python3 "$root/scripts/tidy_cached.py" "$root" "$build" "$build/clang-tidy.log" "$pattern"
# clang-tidy 14 has no -warnings-as-errors that covers every check: any finding in the log fails
findings=$(sed 's/\x1b\[[0-9;]*m//g' "$build/clang-tidy.log" | grep -E "^$root/($(IFS='|'; echo "${tidy_dirs[*]}"))/.*: (warning|error):" | sort -u || true)
if [[ -n $findings ]]; then
  printf '%s\n' "$findings" >&2
  echo "lint: clang-tidy found the above (full log: $build/clang-tidy.log)" >&2
  failed=1
fi
if ((failed)); then
  exit 1
fi
echo "lint: clang-format and clang-tidy clean (${#files[@]} files)" >&2
