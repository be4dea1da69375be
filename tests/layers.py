#!/usr/bin/env python3
"""The layers run one way (docs/architecture.md, "Layout"): every quoted #include of a C
file resolves to a header of its own directory or of a layer below it.

  common/            itself only (no wire, no collector, no CLI, no agent)
  proto/             itself (and protoc-c's vtpin.pb-c.h), common/
  agent/             itself, proto/, common/
  collector/ (and collector/kernel/)  themselves, proto/, common/: never cli/
  cli/               everything below it

Headers of common/ are included as "common/x.h"; the others unqualified
through their library's include directory. Prints each include that breaks
a rule and exits 1; 0 when all hold."""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
# Headers a build generates (not in the source tree), by the directory that may include them.
GENERATED = {"vtpin.pb-c.h": "proto", "pprof.pb-c.h": "proto", "offcpu.skel.h": "collector/kernel", "vmlinux.h": "collector/kernel",
             "syscall_names.inc": "collector/kernel"}
BELOW = {
    "common": [],
    "proto": ["common"],
    "agent": ["proto", "common"],
    "collector/kernel": ["collector", "proto", "common"],
    "collector": ["collector/kernel", "proto", "common"],
    "cli": ["collector", "collector/kernel", "proto", "common"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def headers(d):
    path = os.path.join(ROOT, d)
    return {f for f in os.listdir(path) if f.endswith((".h", ".inc"))}


def main():
    own = {d: headers(d) for d in BELOW}
    bad = []
    checked = 0
    for d, below in BELOW.items():
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            if not f.endswith((".c", ".h")):
                continue
            with open(os.path.join(ROOT, d, f), encoding="utf-8") as src:
                text = src.read()
            for inc in INCLUDE.findall(text):
                checked += 1
                where = "%s/%s: \"%s\"" % (d, f, inc)
                if "/" in inc:
                    top = inc.rsplit("/", 1)[0]
                    if top != "common" or not os.path.exists(os.path.join(ROOT, inc)):
                        bad.append(where + ": only common/ headers are included with their directory")
                    elif d != "common" and "common" not in below:
                        bad.append(where + ": common/ is not below " + d)
                    continue
                if inc in own[d]:
                    continue
                if "common" in below and inc in own["common"]:
                    bad.append(where + ": a common/ header is included as \"common/%s\"" % inc)
                    continue
                if GENERATED.get(inc) in [d] + below:
                    continue
                home = [b for b in below if inc in own[b]]
                if not home:
                    other = [o for o in own if inc in own[o]]
                    bad.append(where + (": from %s, which is not below %s" % (other[0], d) if other
                                        else ": not found in %s or below" % d))
    for b in bad:
        print("layers: " + b)
    print("layers: %d includes checked, %d break a rule" % (checked, len(bad)))
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
