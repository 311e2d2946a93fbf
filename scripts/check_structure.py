#!/usr/bin/env python3
"""Structural checks of the source tree (issue 26), measured from the code and the objects.

  scripts/check_structure.py BUILD_DIR [--report]

Checks (each failure is printed; exit 1 when any fails):
  * no circle between source files: file A -> file B when an object of A uses a symbol
    defined in B (nm of the library's objects), and between folders of src/ likewise;
  * the CLI (src/cli) includes no internal header (only dpdyn/*.h, its own cli/*.h and the
    generated plot list);
  * src/models/ holds at most 3000 lines, no strcmp on a command name, no function over 80 lines.
With --report the measurements are printed as well.
"""
import os, re, subprocess, sys
from collections import defaultdict

def objects(build):
    out = []
    for root, _, files in os.walk(build):
        if "dpdyn_obj.dir" in root or "dpdyn_cli_obj.dir" in root:
            out += [os.path.join(root, f) for f in files if f.endswith(".o")]
    # objects of sources that no longer exist (moved or deleted files) are stale: not measured
    return sorted(o for o in out if os.path.exists(src_of(o)))

def src_of(obj):
    m = re.search(r"\.dir/(src/.*)\.o$", obj)
    return m.group(1) if m else obj

def symbol_graph(build):
    defs, uses = {}, defaultdict(set)
    for o in objects(build):
        s = src_of(o)
        res = subprocess.run(["nm", "-P", o], capture_output=True, text=True, check=True)
        for line in res.stdout.splitlines():
            p = line.split()
            if len(p) < 2:
                continue
            name, kind = p[0], p[1]
            if kind == "U":
                uses[s].add(name)
            elif kind in "TDBRVWCG" and kind != "W" or kind in "tdbr" and False:
                defs.setdefault(name, s)
    edges = defaultdict(set)
    for s, names in uses.items():
        for n in names:
            t = defs.get(n)
            if t is not None and t != s:
                edges[s].add(t)
    return edges

def sccs(edges):
    idx, low, on, st, out, n = {}, {}, set(), [], [], [0]
    nodes = set(edges) | {t for v in edges.values() for t in v}
    sys.setrecursionlimit(10000)
    def visit(v):
        idx[v] = low[v] = n[0]; n[0] += 1; st.append(v); on.add(v)
        for w in edges.get(v, ()):
            if w not in idx:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp = []
            while True:
                w = st.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(nodes):
        if v not in idx:
            visit(v)
    return out

def folder(s):
    p = s.split("/")
    return "/".join(p[:2]) if len(p) > 2 else s

FN_START = re.compile(r"^[A-Za-z_].*\)\s*\{\s*$")
def long_functions(path, limit):
    res, start, name = [], None, None
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        if start is None:
            if FN_START.match(line) and not line.startswith(("typedef", "struct", "enum")) \
                    or (line[:1].isalpha() and "(" in line and not line.rstrip().endswith(";")
                        and i + 1 < len(lines) and False):
                start, name = i, line.strip()
            elif line[:1].isalpha() and "(" in line and not line.rstrip().endswith((";", "{")) \
                    and not line.startswith(("#", "typedef", "struct", "enum", "static const", "const")):
                # a signature over several lines: find its '{' line
                j = i + 1
                while j < len(lines) and not lines[j].rstrip().endswith(("{", ";")):
                    j += 1
                if j < len(lines) and lines[j].rstrip().endswith("{") and lines[j].startswith(" "):
                    start, name = i, line.strip()
        elif line.startswith("}"):
            n = i - start + 1
            if n > limit:
                res.append((n, f"{path}:{start + 1}", name[:70]))
            start = None
    return res

def main():
    if len(sys.argv) < 2:
        print(__doc__); return 2
    build, report = sys.argv[1], "--report" in sys.argv
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(root)
    fails = []
    edges = symbol_graph(build)
    file_cycles = sccs(edges)
    fedges = defaultdict(set)
    for s, ts in edges.items():
        for t in ts:
            if folder(s) != folder(t):
                fedges[folder(s)].add(folder(t))
    folder_cycles = sccs(fedges)
    for c in file_cycles:
        fails.append("circle between files: " + " <-> ".join(c))
    for c in folder_cycles:
        fails.append("circle between folders: " + " <-> ".join(c))
    allowed = re.compile(r'#include "(dpdyn/[a-z_0-9]+\.h|cli/cli\.h|dpd_plots\.h)"')
    for f in sorted(os.listdir("src/cli")):
        for i, line in enumerate(open(os.path.join("src/cli", f), encoding="utf-8"), 1):
            if line.startswith('#include "') and not allowed.match(line):
                fails.append(f"src/cli/{f}:{i}: internal header: {line.strip()}")
    mlines, models_files = 0, []
    for r, _, fs in os.walk("src/models"):
        for f in fs:
            if f.endswith((".c", ".h")):
                models_files.append(os.path.join(r, f))
    commands = set()
    for p in models_files:
        text = open(p, encoding="utf-8").read()
        mlines += text.count("\n")
    cmd_names = ("simulate", "sde", "ode", "compare", "account", "tune", "ou", "diagnose",
                 "accuracy", "theory", "pca", "noisy_sgd", "sweep", "plot")
    for p in models_files:
        for i, line in enumerate(open(p, encoding="utf-8"), 1):
            for m in re.finditer(r'strcmp\s*\(([^;]*)\)', line):
                if re.search(r'"(%s)"' % "|".join(cmd_names), m.group(1)) or "command" in m.group(1):
                    fails.append(f"{p}:{i}: strcmp on a command name: {line.strip()}")
        for n, where, name in long_functions(p, 80) if p.endswith(".c") else []:
            fails.append(f"{where}: function of {n} lines (> 80): {name}")
    if mlines > 3000:
        fails.append(f"src/models/ holds {mlines} lines (> 3000)")
    if report:
        print(f"src/models/: {mlines} lines in {len(models_files)} files")
        print(f"file edges: {sum(len(v) for v in edges.values())}, circles: {len(file_cycles)}; "
              f"folder circles: {len(folder_cycles)}")
    for f in fails:
        print("FAIL", f)
    return 1 if fails else 0

if __name__ == "__main__":
    sys.exit(main())
