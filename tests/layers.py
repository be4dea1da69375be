#!/usr/bin/env python3
"""The layers run one way (docs/architecture.md, "Layout"): every quoted #include of a C
file resolves to a header of its own directory or of a layer below it.

  common/            itself only (no wire, no collector, no CLI, no agent)
  proto/             itself (and protoc-c's vtpin.pb-c.h), common/
  agent/ROOM/        itself, the agent's rooms before it (support, jvm, carriers, callbacks,
                     names, outputs, pinpath, occupancy, writer), proto/, common/
  agent/             agent.c and java_api.c, the library's entry points: every room,
                     proto/, common/
  collector/kernel/  itself (and its generated BPF headers), proto/, common/
  collector/         itself, collector/kernel/, proto/, common/: never cli/
  cli/               the CLI's frame (commands.h, exit_codes.h, usage.h; vtpin.c's
                     main and the collector's command): collector/, proto/, common/.
                     It names the rooms' commands (commands.h) but includes none of them
  cli/attach/        itself, cli/, common/
  cli/report/        itself, cli/, proto/, common/ (the report needs no collector)
  cli/live/          itself, cli/, collector/ (paths, the query), proto/, common/
  cli/run/           itself, cli/report/, cli/live/, cli/attach/, cli/, collector/, proto/, common/

Headers of common/ are included as "common/x.h"; the others unqualified
through their library's include directory. No include cycle either: inside a
layer, no two modules (x.c with x.h) include each other, directly or around a
loop. Prints each include or cycle that breaks a rule and exits 1; 0 when all
hold."""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
# Headers a build generates (not in the source tree), by the directory that may include them.
GENERATED = {"vtpin.pb-c.h": "proto", "pprof.pb-c.h": "proto", "offcpu.skel.h": "collector/kernel", "vmlinux.h": "collector/kernel",
             "syscall_names.inc": "collector/kernel"}
# The agent's rooms, from the ground up (docs/architecture.md, "The agent's rooms"): each
# may include the headers of the rooms before it, never of one after it.
AGENT_ORDER = ["support", "jvm", "carriers", "callbacks", "names", "outputs", "pinpath", "occupancy", "writer"]
AGENT_ROOMS = {"agent/" + r: ["agent/" + b for b in reversed(AGENT_ORDER[:i])] + ["proto", "common"]
               for i, r in enumerate(AGENT_ORDER)}
AGENT_ROOMS["agent"] = ["agent/" + b for b in reversed(AGENT_ORDER)] + ["proto", "common"]
BELOW = {
    "common": [],
    "proto": ["common"],
    **AGENT_ROOMS,
    "collector/kernel": ["proto", "common"],
    "collector": ["collector/kernel", "proto", "common"],
    "cli": ["collector", "proto", "common"],
    "cli/attach": ["cli", "common"],
    "cli/report": ["cli", "proto", "common"],
    "cli/live": ["cli", "collector", "proto", "common"],
    "cli/run": ["cli/report", "cli/live", "cli/attach", "cli", "collector", "proto", "common"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def headers(d):
    path = os.path.join(ROOT, d)
    return {f for f in os.listdir(path) if f.endswith((".h", ".inc"))}


def upward():
    """Layers that reach themselves through BELOW: the order must run one way."""
    loops = []
    for start in BELOW:
        seen, todo = set(), list(BELOW[start])
        while todo:
            b = todo.pop()
            if b == start:
                loops.append(start)
                break
            if b not in seen:
                seen.add(b)
                todo.extend(BELOW[b])
    return loops


def cycles(edges):
    """Modules (x.c with x.h) that include each other, directly or around a loop: each
    strongly connected set of two or more (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    own = {d: headers(d) for d in BELOW}
    # Includes between the layers run down (BELOW), so a cycle can only be inside one:
    # module d/x -> d/y when x.c or x.h includes y.h of its own directory.
    edges = {}
    bad = ["%s: BELOW reaches back to it (the layers must run one way)" % d for d in upward()]
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
                    mod, to = os.path.join(d, f.rsplit(".", 1)[0]), os.path.join(d, inc.rsplit(".", 1)[0])
                    if mod != to:
                        edges.setdefault(mod, set()).add(to)
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
    bad += ["include cycle: " + " <-> ".join(c) for c in cycles(edges)]
    for b in bad:
        print("layers: " + b)
    print("layers: %d includes checked, %d break a rule" % (checked, len(bad)))
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
