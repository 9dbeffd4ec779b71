#!/usr/bin/env python3
"""Tests of onnx2c's visibility outputs: --report, --emit-onnx and --dot.

    python tests/test_visibility.py [--compiler build/onnx2c] [-j 2] [TEST_DIR...]

For every example (and every ../shared/models/* model if that folder exists),
at -O2, one compiler run writes the C, the report, the ONNX model and the dot
file; then:
  - the report has one row per kernel call of the generated C schedule and its
    total line says the same count (and the CUDA target's report agrees with
    the kernel launches of the .cu, which may differ from the C's calls; -O0
    is checked the same way);
  - onnxruntime runs the emitted ONNX model (fused nodes are local functions)
    on the test's inputs; its outputs match the stored expected outputs with
    the tolerances of tests/run_models.py;
  - the dot file is valid: `dot -Tsvg` if Graphviz is installed, else a
    structural check (digraph, balanced braces and quotes, every edge's
    endpoints declared);
and the refused cases: an unwritable path for each of the three options
(exit 1, a clear message, no file written, not even -o's), no output at all.
The last line is 'N passed, N failed, N skipped'."""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_models as rm  # noqa: E402  (load_pb, compare, shape_flags, ort_run, find_tests)

import onnx  # noqa: E402

ROOT = rm.ROOT
REPORT_ROW = re.compile(r"^\s*\d+\s+o2c_\w+\s", re.M)
REPORT_TOTAL = re.compile(r"^total: (\d+) kernels", re.M)
CUDA_LAUNCH = re.compile(r"^\s+O2C_LAUNCH\(o2c_\w+, \d+, p, stream\);$", re.M)


def run(cmd, timeout=300):
    r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout)
    return r.returncode, r.stdout + r.stderr


def report_rows(text):
    rows = len(REPORT_ROW.findall(text))
    m = REPORT_TOTAL.search(text)
    if not m or int(m.group(1)) != rows:
        raise AssertionError("report: %d rows, total line says %s" % (rows, m.group(1) if m else "nothing"))
    return rows


def dot_structure_ok(text):
    """A structural check of a dot file (when Graphviz is not installed)."""
    if not text.startswith("digraph ") or not text.rstrip().endswith("}"):
        return "not a digraph { ... }"
    declared, depth = set(), 0
    for line in text.splitlines()[1:]:
        s = line.strip()
        if not s:
            continue
        # strip quoted strings (escapes \" and \\ inside)
        bare = re.sub(r'"(?:[^"\\]|\\.)*"', 'S', s)
        if '"' in bare:
            return "unbalanced quotes: " + s[:80]
        depth += bare.count("{") - bare.count("}")
        if s == "}":
            continue
        if not bare.endswith(";"):
            return "statement without ';': " + s[:80]
        m = re.match(r"^(\w+) -> (\w+)", bare)
        if m:
            for end in m.groups():
                if end not in declared:
                    return "edge to undeclared node %s" % end
        else:
            m = re.match(r"^(\w+) \[", bare)
            if m:
                declared.add(m.group(1))
    return None if depth == -1 else "unbalanced braces"


def check_dot(path):
    text = open(path, encoding="utf-8").read()
    if shutil.which("dot"):
        rc, out = run(["dot", "-Tsvg", "-o", os.devnull, path])
        if rc != 0:
            raise AssertionError("dot: " + out.strip()[:200])
    why = dot_structure_ok(text)
    if why:
        raise AssertionError("dot file: " + why)


def check_model(args, test):
    """(status, note) for one model."""
    if os.path.exists(os.path.join(test, "expect_error.txt")):
        return "skip", "refused by design"
    ds = sorted(glob.glob(os.path.join(test, "test_data_set_*")))[0]
    model = onnx.load(os.path.join(test, "model.onnx"), load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    gin = [i for i in model.graph.input if i.name not in inits]
    ins = [rm.load_pb(os.path.join(ds, "input_%d.pb" % k)) for k in range(len(gin))]
    flags = rm.shape_flags(gin, ins)
    work = tempfile.mkdtemp(prefix="o2c_vis_")
    try:
        m = os.path.join(test, "model.onnx")
        c, onx, dot, rep = (os.path.join(work, f) for f in ("m.c", "m.onnx", "m.dot", "report.txt"))
        rc, out = run([args.compiler, m, "-O2", "-o", c, "--name", "m", "--report=" + rep, "--emit-onnx", onx,
                       "--dot", dot] + flags)
        if rc != 0:
            if rm.is_in(test, rm.EXAMPLES):
                raise AssertionError("onnx2c failed: " + out.strip()[:300])
            return "skip", "refused: " + out.strip()[:120]
        # report rows == kernel calls of the C schedule
        rows = report_rows(open(rep, encoding="utf-8").read())
        calls = rm.count_kernels(c)
        if rows != calls:
            raise AssertionError("report has %d rows, the C schedule %d kernel calls" % (rows, calls))
        # the CUDA target (report on stdout), and -O0
        cu = os.path.join(work, "m.cu")
        rc, out = run([args.compiler, m, "-O2", "-o", cu, "--name", "m", "--report"] + flags)
        if rc != 0:
            raise AssertionError("onnx2c -o m.cu --report: " + out.strip()[:200])
        launches = len(CUDA_LAUNCH.findall(open(cu, encoding="utf-8").read()))
        # (the C target may lower a node to other kernels than CUDA does: the
        # tiled variants, the LSTM's one recurrence call; each report must
        # match its own schedule)
        if report_rows(out) != launches:
            raise AssertionError("CUDA: report %d rows, %d launches" % (report_rows(out), launches))
        c0 = os.path.join(work, "m0.c")
        rc, out = run([args.compiler, m, "-O0", "-o", c0, "--name", "m", "--report"] + flags)
        if rc != 0 or report_rows(out) != rm.count_kernels(c0):
            raise AssertionError("-O0: report rows differ from the schedule's calls (%s)" % out.strip()[-200:])
        # the emitted ONNX model runs in onnxruntime and matches the expected outputs
        emitted = onnx.load(onx)
        onnx.checker.check_model(emitted)
        got = rm.ort_run(onx, ins)
        for k in range(len(model.graph.output)):
            p = os.path.join(ds, "output_%d.pb" % k)
            want = rm.load_pb(p) if os.path.exists(p) else None
            if want is None:
                continue
            ok, err, why = rm.compare(rm.raw_bytes(got[k]), want, args.rtol, args.atol)
            if not ok:
                raise AssertionError("emitted ONNX, output %d: %s" % (k, why))
        check_dot(dot)
        nf = len(emitted.functions)
        return "pass", "%d kernels, %d nodes%s" % (calls, len(emitted.graph.node),
                                                  ", %d local functions" % nf if nf else "")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check_refusals(args):
    """Unwritable paths and no output: exit 1, a message, no file."""
    results = []
    m = os.path.join(ROOT, "examples", "small_convnet", "model.onnx")
    work = tempfile.mkdtemp(prefix="o2c_vis_")
    bad = os.path.join(work, "no_such_dir", "x")
    c = os.path.join(work, "m.c")
    cases = [
        ("--report=unwritable", ["--report=" + bad + ".txt", "-o", c], "cannot write"),
        ("--emit-onnx unwritable", ["--emit-onnx", bad + ".onnx", "-o", c], "cannot write"),
        ("--dot unwritable", ["--dot", bad + ".dot", "-o", c], "cannot write"),
        ("--dot without file", ["--dot"], "needs a file name"),
        ("no output", [], "--report"),
        ("same file twice", ["--dot", c + ".x", "--emit-onnx", c + ".x"], "two outputs"),
    ]
    try:
        for name, flags, msg in cases:
            rc, out = run([args.compiler, m] + flags)
            left = os.listdir(work)
            if rc != 1 or msg not in out or left:
                results.append((name, "fail", "rc %s, files %s: %s" % (rc, left, out.strip()[:200])))
            else:
                results.append((name, "pass", out.strip().splitlines()[0][:100]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("tests", nargs="*")
    args = ap.parse_args()
    paths = args.tests or [rm.EXAMPLES] + ([rm.SHARED_MODELS] if os.path.isdir(rm.SHARED_MODELS) else [])
    tests = rm.find_tests(paths)

    rm.run_checks(tests, lambda t: check_model(args, t), args.j, lambda: check_refusals(args))


if __name__ == "__main__":
    main()
