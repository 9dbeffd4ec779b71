#!/usr/bin/env python3
"""The house drawn from the code: which file of compiler/ calls which, read
from the built objects (nm: the symbols each object defines and the ones it
needs), checked against the layers of docs/HACKING.md.

    python tools/layers.py [--build build]          # check; exit 1 on a violation
    python tools/layers.py --edges                  # every file -> file edge, with the symbols
    python tools/layers.py --picture                # the layers and the edges between them

The layers, bottom up (a file may call files of its own layer and of the
layers below; never up):

  core     compiler/core/       IR, graph editing, diagnostics, text, files
  engine   compiler/engine/     kernels compiled in, building and running kernel calls, inference
  ops      compiler/ops/*.c     the op families: shape rules, lowerings, hooks
  table    compiler/ops.c       the op table (ops.def)
  stages   compiler/*.c, passes/  load, infer, calibrate, passes, tune, schedule, lower, plan, emit
  driver   compiler/main.c, pipeline.c   the command line; the stages in order

Rules checked:
  1. calls go down the layers (or stay in the layer);
  2. a stage calls no other stage: stages reach each other's results only
     through the graph and the lowering the driver hands on (STAGES below
     groups the files of each stage);
  3. the file graph has no cycle, except among the core's own files.
Prints one line per violation and a summary; exit status 1 if any."""
import argparse, collections, glob, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYERS = ["core", "engine", "ops", "table", "stages", "driver"]

# the files of each stage (compiler/ paths without .c)
STAGES = {
    "load": ["load", "inline"],
    "infer": ["infer"],
    "calibrate": ["calibrate"],
    "passes": ["passes", "passes/*"],
    "tune": ["tune"],
    "schedule": ["schedule"],
    "lower": ["lower"],
    "plan": ["plan"],
    "emit": ["emit_c", "emit_cuda", "emit_common", "weights_bin", "emit_test_main"],
    "report": ["report", "emit_onnx", "emit_dot"],
}


def layer_of(f):
    if f.startswith("core/"):
        return "core"
    if f.startswith("engine/"):
        return "engine"
    if f.startswith("ops/"):
        return "ops"
    if f == "ops":
        return "table"
    if f in ("main", "pipeline"):
        return "driver"
    return "stages"


def stage_of(f):
    for s, files in STAGES.items():
        for p in files:
            if p == f or (p.endswith("/*") and f.startswith(p[:-1])):
                return s
    return None


def read_objects(build):
    srcs = sorted(glob.glob(os.path.join(ROOT, "compiler", "**", "*.c"), recursive=True))
    defs, needs = {}, {}
    for src in srcs:
        rel = os.path.relpath(src, os.path.join(ROOT, "compiler"))[:-2]
        obj = os.path.join(ROOT, build, "compiler", rel + ".o")
        if not os.path.exists(obj):
            sys.exit("layers: %s is not built (make first)" % os.path.relpath(obj, ROOT))
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        d, u = set(), set()
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBRGSCV":
                d.add(p[2])
            elif len(p) == 2 and p[0] == "U":
                u.add(p[1])
        defs[rel], needs[rel] = d, u
    owner = {}
    for f, d in defs.items():
        for s in d:
            owner[s] = f
    edges = collections.defaultdict(lambda: collections.defaultdict(set))
    for f, u in needs.items():
        for s in u:
            if s in owner and owner[s] != f:
                edges[f][owner[s]].add(s)
    return list(defs), edges


def cycles(files, edges):
    """strongly connected components of more than one file (Tarjan)"""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
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

    for v in files:
        if v not in index:
            visit(v)
    return out


def check(files, edges):
    bad = []
    for f in sorted(files):
        for t, syms in sorted(edges[f].items()):
            lf, lt = LAYERS.index(layer_of(f)), LAYERS.index(layer_of(t))
            what = ", ".join(sorted(syms)[:4]) + (" ..." if len(syms) > 4 else "")
            if lt > lf:
                bad.append("up a layer: %s (%s) -> %s (%s): %s" % (f, layer_of(f), t, layer_of(t), what))
            elif layer_of(f) == layer_of(t) == "stages":
                sf, st = stage_of(f), stage_of(t)
                if sf is None or st is None:
                    bad.append("a stage file no stage lists (tools/layers.py STAGES): %s" % (f if sf is None else t))
                elif sf != st:
                    bad.append("one stage calls another: %s (%s) -> %s (%s): %s" % (f, sf, t, st, what))
    for comp in cycles(files, edges):
        if not all(layer_of(f) == "core" for f in comp):
            bad.append("a cycle of %d files: %s" % (len(comp), " ".join(comp)))
    return bad


def picture(files, edges):
    """the layers with their files, and for each pair of layers the calls between them"""
    by = collections.defaultdict(list)
    for f in sorted(files):
        by[layer_of(f)].append(f)
    lines = []
    for l in reversed(LAYERS):
        names = by[l]
        if l == "stages":
            groups = collections.defaultdict(list)
            for f in names:
                groups[stage_of(f) or "?"].append(f)
            text = "; ".join("%s: %s" % (s, " ".join(groups[s])) for s in STAGES if s in groups)
        else:
            text = " ".join(names)
        lines.append("%-7s %s" % (l, text))
    lines.append("")
    pairs = collections.Counter()
    for f in files:
        for t in edges[f]:
            pairs[(layer_of(f), layer_of(t))] += 1
    for (a, b), n in sorted(pairs.items(), key=lambda x: (-LAYERS.index(x[0][0]), -LAYERS.index(x[0][1]))):
        lines.append("%-7s -> %-7s %4d file edges" % (a, b, n))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build", help="the build folder (default: build)")
    ap.add_argument("--edges", action="store_true", help="print every file -> file edge with its symbols")
    ap.add_argument("--picture", action="store_true", help="print the layers and the calls between them")
    args = ap.parse_args()
    files, edges = read_objects(args.build)
    if args.edges:
        for f in sorted(files):
            for t, syms in sorted(edges[f].items()):
                print("%s -> %s: %s" % (f, t, " ".join(sorted(syms))))
        return
    if args.picture:
        print(picture(files, edges))
        return
    bad = check(files, edges)
    for b in bad:
        print(b)
    nedges = sum(len(v) for v in edges.values())
    print("%d passed, %d failed, 0 skipped (%d files, %d file edges)" % (0 if bad else 1, len(bad), len(files), nedges))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
