#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The tree's shape, as docs/architecture.md promises it (issue 13):
- no call cycle between the files of one layer (src/net, src/srd): file A "uses" file B
  when A's object file refers to a symbol B's defines; a cycle means two files that
  cannot be read, changed or tested one without the other;
- no function in src/ longer than 60 lines of body.
Usage: shape.py SOURCE_DIR BUILD_DIR. Exits 1 and names every offence."""
import glob
import os
import re
import subprocess
import sys

MAX_BODY = 60
LAYERS = ("net", "srd")


def symbols(obj):
    """(defined, undefined) global symbols of one object file."""
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBR":
            defined.add(parts[2])
    return defined, undefined


def objects(src, build, layer):
    """Object file of each current source of a layer (stale objects are ignored)."""
    found = {}
    for c in sorted(glob.glob(os.path.join(src, "src", layer, "*.c"))):
        name = os.path.basename(c)
        hits = glob.glob(os.path.join(build, "CMakeFiles", "*", "src", layer, name + ".o"))
        if not hits:
            sys.exit(f"shape: no object for src/{layer}/{name} in {build}")
        found[name] = max(hits, key=os.path.getmtime)
    return found


def cycles(graph):
    """Strongly connected components with more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
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

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def layer_cycles(src, build, layer):
    objs = objects(src, build, layer)
    syms = {name: symbols(o) for name, o in objs.items()}
    graph = {}
    for a, (_, und) in syms.items():
        graph[a] = {b for b, (dfn, _) in syms.items() if b != a and und & dfn}
    bad = []
    for comp in cycles(graph):
        edges = [f"{a}->{b}" for a in comp for b in sorted(graph[a]) if b in comp]
        bad.append(f"src/{layer}: call cycle among {', '.join(comp)} ({' '.join(edges)})")
    return bad


def long_functions(src):
    """Bodies between a '{' and a '}' in column 0 (the house style puts a function's
    braces there), longer than MAX_BODY lines."""
    bad = []
    for path in sorted(glob.glob(os.path.join(src, "src", "**", "*.c"), recursive=True)):
        lines = open(path, encoding="utf-8").read().split("\n")
        i = 0
        while i < len(lines):
            if lines[i] == "{":
                end = i + 1
                while end < len(lines) and lines[end] != "}":
                    end += 1
                body = end - i - 1
                head = " ".join(lines[max(0, i - 3) : i])
                names = re.findall(r"(\w+)\s*\(", head)
                if body > MAX_BODY:
                    rel = os.path.relpath(path, src)
                    name = names[0] if names else "?"
                    bad.append(f"{rel}:{i + 1}: {name} has {body} lines (at most {MAX_BODY})")
                i = end
            i += 1
    return bad


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, build = sys.argv[1], sys.argv[2]
    bad = []
    for layer in LAYERS:
        bad += layer_cycles(src, build, layer)
    bad += long_functions(src)
    for b in bad:
        print("FAIL:", b)
    print(f"shape: {len(bad)} offence(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
