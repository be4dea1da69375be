#!/usr/bin/env python3
"""clang-tidy over the project's translation units, each one skipped when the very same input was
already found clean: the cost of scripts/lint.sh falls from ~2 minutes to seconds when little changed.

A unit's key is the SHA-256 of what clang-tidy's answer depends on: the clang-tidy version, the
.clang-tidy file, the compile command and the preprocessed unit (cc -E: every header it includes, so a
changed header re-checks every unit that includes it). Paths under the source root are written
relative to it, so a clone elsewhere shares the cache. Only clean answers are kept (an empty file
named by the key); a unit with findings is checked again every time.

usage: tidy_cached.py ROOT BUILD_DIR LOG PATTERN
  PATTERN  a regular expression on the unit's path (the project's own directories)
Environment: VTPIN_TIDY_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/vtpin/clang-tidy); VTPIN_TIDY_CACHE=off
checks every unit. Writes clang-tidy's output to LOG; exits 0 (the caller reads LOG for findings)."""
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys


def tidy_version():
    return subprocess.run(["clang-tidy", "--version"], capture_output=True, text=True, check=True).stdout


def unit_key(root, entry, common):
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    # preprocess only: drop the output file, add -E -P (no line markers: they hold absolute paths)
    pre, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a == "-c":
            continue
        pre.append(a)
    pre[0] = "clang"  # the preprocessor clang-tidy parses with (gcc's would drop #ifdef __clang__ parts)
    p = subprocess.run(pre + ["-E", "-P", "-o", "-"], cwd=entry["directory"], capture_output=True)
    if p.returncode != 0:
        return None  # clang-tidy will say what is wrong
    h = hashlib.sha256(common)
    h.update(" ".join(args).replace(root, "<root>").encode())
    h.update(b"\0")
    h.update(p.stdout.replace(root.encode(), b"<root>"))
    return h.hexdigest()


def check_unit(build, cache, root, entry, common):
    key = unit_key(root, entry, common) if cache else None
    if key and os.path.exists(os.path.join(cache, key)):
        return entry["file"], "", True
    p = subprocess.run(["clang-tidy", "-p", build, "-quiet", entry["file"]], capture_output=True, text=True)
    out = p.stdout + p.stderr
    clean = not re.search(r": (warning|error):", out)
    if key and clean:
        with open(os.path.join(cache, key), "w"):
            pass
    return entry["file"], out, False


def main():
    root, build, log, pattern = sys.argv[1:5]
    root = os.path.realpath(root)
    cache = os.environ.get("VTPIN_TIDY_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "vtpin", "clang-tidy")
    if cache == "off":
        cache = None
    else:
        os.makedirs(cache, exist_ok=True)
    with open(os.path.join(build, "compile_commands.json")) as f:
        units = [e for e in json.load(f) if re.search(pattern, e["file"])]
    with open(os.path.join(root, ".clang-tidy"), "rb") as f:
        common = tidy_version().encode() + b"\0" + f.read() + b"\0"
    reused = 0
    with open(log, "w") as out, concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for name, text, cached in pool.map(lambda e: check_unit(build, cache, root, e, common), units):
            reused += cached
            if text:
                out.write("== %s\n%s" % (name, text))
    print("clang-tidy: %d units, %d checked, %d found clean before with the same input" %
          (len(units), len(units) - reused, reused), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
