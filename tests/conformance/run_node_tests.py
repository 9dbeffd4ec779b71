#!/usr/bin/env python3
"""ONNX backend node tests (the conformance corpus shipped inside the pinned
onnx package, or any folder of test_* dirs): compile each model with onnx2c,
build the C with gcc (and check it with clang), both with -std=c99 -pedantic
-Wall -Wextra -Werror, run it on test_data_set_0 and compare with the stored
outputs. Prints one line per test that is not passing, a summary by outcome,
and the closing 'N passed, N failed, N skipped' line.

A test counts as failed when the compiler crashes, the code does not build,
the run crashes or the numbers are wrong; a clear refusal (exit 1 with a
message: unsupported op or type) counts as skipped. With --expected FILE,
every test listed there must pass (regression gate); new passes are listed
so the file can be updated with --update. Any failed test fails the run:
an unsupported case must be refused, never answered wrongly."""
import argparse, glob, os, shutil, subprocess, sys, tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

HARNESS = r'''
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int m_run(const void *const inputs[], void *const outputs[]);
static const long in_sz[] = {%(in_sz)s 0};
static const long out_sz[] = {%(out_sz)s 0};
int main(int argc, char **argv)
{
    const void *ins[%(ni)d + 1] = {0};
    void *outs[%(no)d + 1] = {0};
    (void)argc;
    for (int i = 0; i < %(ni)d; i++) {
        void *p = malloc(in_sz[i] + 1);
        FILE *f = fopen(argv[1 + i], "rb");
        if (!f || fread(p, 1, in_sz[i], f) != (size_t)in_sz[i]) return 3;
        fclose(f);
        ins[i] = p;
    }
    for (int o = 0; o < %(no)d; o++) {
        outs[o] = malloc(out_sz[o] + 1);
        memset(outs[o], 0xFF, out_sz[o] + 1);
    }
    if (m_run(ins, outs) != 0) return 4;
    for (int o = 0; o < %(no)d; o++) {
        FILE *f = fopen(argv[1 + %(ni)d + o], "wb");
        fwrite(outs[o], 1, out_sz[o], f);
        fclose(f);
    }
    return 0;
}
'''


def default_corpus():
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def raw(a):
    return (a.astype(np.uint8) if a.dtype == np.bool_ else np.ascontiguousarray(a)).tobytes()


def close(got, ref, rtol, atol):
    dt = np.uint8 if ref.dtype == np.bool_ else ref.dtype
    g = np.frombuffer(got, dtype=dt).reshape(ref.shape)
    if ref.dtype.kind not in "fiub":   # ml_dtypes' bfloat16 & co: compare as float32 values
        g, ref = g.astype(np.float32), ref.astype(np.float32)
    if ref.dtype.kind == "f":
        g64, r64 = g.astype(np.float64), ref.astype(np.float64)
        if not np.array_equal(np.isnan(g64), np.isnan(r64)):
            return "NaN mismatch"
        m = ~np.isnan(r64) & (g64 != r64)   # equal values (infinities too) are fine
        if not m.any():
            return ""
        err = np.abs(g64[m] - r64[m])
        bad = err > atol + rtol * np.abs(r64[m])
        return "max abs err %.3g (%d of %d off)" % (err.max(), bad.sum(), bad.size) if bad.any() else ""
    if ref.dtype == np.bool_:
        g = g.astype(np.bool_)
    return "" if np.array_equal(g, ref) else "%d of %d elements differ" % ((g != ref).sum(), ref.size)


def run_one(test, args):
    name = os.path.basename(test)
    work = tempfile.mkdtemp(prefix="o2c_nt_")
    try:
        try:
            model = onnx.load(os.path.join(test, "model.onnx"), load_external_data=False)
        except Exception as e:
            return name, "skipped", "onnx cannot load: %s" % str(e)[:80]
        inits = {i.name for i in model.graph.initializer}
        gin = [i for i in model.graph.input if i.name not in inits]
        ds = os.path.join(test, "test_data_set_0")
        try:
            ins = [load_pb(os.path.join(ds, "input_%d.pb" % k)) for k in range(len(gin))]
            refs = [load_pb(os.path.join(ds, "output_%d.pb" % k)) for k in range(len(model.graph.output))]
        except Exception as e:  # sequences, optionals: not tensors
            return name, "skipped", "test data is not plain tensors (%s)" % type(e).__name__
        src = os.path.join(work, "m.c")
        cmd = [args.compiler, os.path.join(test, "model.onnx"), "-o", src, "--name", "m"]
        for vi, a in zip(gin, ins):
            dims = vi.type.tensor_type.shape.dim
            if any(not d.HasField("dim_value") for d in dims) or len(dims) != a.ndim:
                cmd += ["--shape", "%s:%s" % (vi.name, "x".join(str(s) for s in a.shape))]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            return name, "failed", "compiler hang"
        if "Sanitizer" in r.stderr or "runtime error:" in r.stderr:
            return name, "failed", "compiler sanitizer report: " + r.stderr.strip()[:300]
        if r.returncode == 1 and r.stderr.strip():
            return name, "skipped", "refused: " + r.stderr.strip().splitlines()[-1][:200]
        if r.returncode != 0:
            return name, "failed", "compiler exit %d: %s" % (r.returncode, r.stderr.strip()[-200:])
        with open(os.path.join(work, "main.c"), "w") as f:
            f.write(HARNESS % dict(ni=len(ins), no=len(refs), in_sz="".join("%d," % len(raw(a)) for a in ins),
                                   out_sz="".join("%d," % len(raw(a)) for a in refs)))
        exe = os.path.join(work, "prog")
        r = subprocess.run(["gcc", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1", "-o", exe,
                            os.path.join(work, "main.c"), src, "-lm"], capture_output=True, text=True)
        if r.returncode != 0:
            return name, "failed", "gcc: " + (r.stderr.strip().splitlines() or [""])[0][:200]
        r = subprocess.run(["clang", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", src],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return name, "failed", "clang: " + (r.stderr.strip().splitlines() or [""])[0][:200]
        files = []
        for k, a in enumerate(ins):
            fn = os.path.join(work, "in%d" % k)
            open(fn, "wb").write(raw(a))
            files.append(fn)
        outs = [os.path.join(work, "out%d" % k) for k in range(len(refs))]
        try:
            r = subprocess.run([exe] + files + outs, capture_output=True, timeout=60)
        except subprocess.TimeoutExpired:
            return name, "failed", "run hang"
        if r.returncode != 0:
            return name, "failed", "run exit %d" % r.returncode
        for k, ref in enumerate(refs):
            why = close(open(outs[k], "rb").read(), ref, args.rtol, args.atol)
            if why:
                return name, "failed", "output %d: %s" % (k, why)
        return name, "passed", ""
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--corpus", default=None, help="folder of test_* dirs (default: the onnx package's)")
    ap.add_argument("--expected", default=os.path.join(HERE, "expected_pass.txt"))
    ap.add_argument("--update", action="store_true", help="rewrite the expected list with today's passes")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--quiet", action="store_true", help="list only regressions")
    ap.add_argument("filters", nargs="*", help="only tests whose name contains one of these")
    args = ap.parse_args()
    corpus = args.corpus or default_corpus()
    tests = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(corpus, "test_*", "model.onnx")))
    if args.filters:
        tests = [t for t in tests if any(f in os.path.basename(t) for f in args.filters)]
    with ThreadPoolExecutor(args.jobs) as ex:
        results = list(ex.map(lambda t: run_one(t, args), tests))
    expected = set()
    if os.path.exists(args.expected) and not args.update:
        expected = {l.strip() for l in open(args.expected) if l.strip() and not l.startswith("#")}
    passed = {n for n, s, _ in results if s == "passed"}
    regressions = [r for r in results if r[0] in expected and r[1] != "passed"]
    for n, s, why in results:
        if s == "passed":
            continue
        if args.quiet and n not in expected:
            continue
        print("%-55s %-8s %s" % (n, s, why))
    counts = {}
    for _, s, _ in results:
        counts[s] = counts.get(s, 0) + 1
    total = len(results)
    print("# corpus %s: %d tests; passed %d (%.1f%%), failed %d, skipped (refused or not plain tensors) %d"
          % (corpus, total, counts.get("passed", 0), 100.0 * counts.get("passed", 0) / max(total, 1),
             counts.get("failed", 0), counts.get("skipped", 0)))
    if args.update:
        with open(args.expected, "w") as f:
            f.write("# node tests that must keep passing (tests/conformance/run_node_tests.py --update)\n")
            for n in sorted(passed):
                f.write(n + "\n")
        print("# wrote %d names to %s" % (len(passed), args.expected))
    new = sorted(passed - expected) if expected else []
    if new:
        print("# %d tests pass that are not in %s yet (run with --update to add them)" % (len(new), args.expected))
    if regressions:
        print("# REGRESSIONS: %d tests in the expected list do not pass: %s" % (len(regressions), " ".join(r[0] for r in regressions[:20])))
    # the gate: no wrong answer, crash or build failure anywhere, and every
    # listed test still passing (a listed test now refused is a regression)
    nfail = counts.get("failed", 0) + sum(1 for r in regressions if r[1] != "failed")
    print("conformance: %d passed, %d failed, %d skipped" % (counts.get("passed", 0), nfail, counts.get("skipped", 0)))
    sys.exit(1 if nfail else 0)


if __name__ == "__main__":
    main()
