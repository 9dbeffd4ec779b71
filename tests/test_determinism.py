#!/usr/bin/env python3
"""Byte-identical output: the same model and flags give the same files.

    python tests/test_determinism.py [-j 2] [--reuse]

1. The compiler is built twice from scratch, in two build folders with
   different absolute paths and different parallelism: build/det-a with
   `make -j1` and build/det-b with `make -j2` (the Makefile's BUILD=;
   --reuse: keep builds that are already there).
2. Every examples/*/ model is compiled with each configuration below, twice
   with each build (four runs), each run into its own output folder (a path
   that leaks into a file shows as a difference): every file written (.c,
   .cu, .h, --report, --emit-onnx, --dot) and what the compiler prints must
   be byte-identical across the four runs. The second run of each build has
   MALLOC_PERTURB_ set (glibc fills fresh heap blocks with a pattern: a
   file that depends on uninitialised heap bytes differs), and ASLR moves
   every pointer between runs (an order that depends on addresses differs).
3. One example compiled from two working directories (a relative model
   path and output path from one, absolute paths from another, in folders
   of different depths): the files must be identical, nothing excepted.

Configurations: -O2 (default) to C; -O2 to CUDA; -O0 to C; -O0 to CUDA;
-O1 --report=FILE --emit-onnx FILE --dot FILE; --report (to stdout);
--profile; --target cortex-m --caller-arena; --target avx2; --target
avx512; --target neon.

The last line is 'N passed, N failed, N skipped'; exit status 1 on a failure.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import run_models  # noqa: E402

BUILDS = [("build/det-a", "-j1"), ("build/det-b", "-j2")]
CONFIGS = [
    ("c", "m.c", []),
    ("cuda", "m.cu", []),
    ("c -O0", "m.c", ["-O0"]),
    ("cuda -O0", "m.cu", ["-O0"]),
    ("c -O1 report emit-onnx dot", "m.c", ["-O1", "--report={d}/report.txt", "--emit-onnx", "{d}/opt.onnx",
                                         "--dot", "{d}/graph.dot"]),
    ("cuda report (stdout)", "m.cu", ["--report"]),
    ("c profile", "m.c", ["--profile"]),
    ("c cortex-m caller-arena", "m.c", ["--target", "cortex-m", "--caller-arena"]),
    ("c avx2", "m.c", ["--target", "avx2"]),
    ("c avx512", "m.c", ["--target", "avx512"]),
    ("c neon", "m.c", ["--target", "neon"]),
]

results = []


def record(name, status, note=""):
    results.append((name, status, note))
    print("%-4s %-50s %s" % (status.upper(), name, note), flush=True)


def build(folder, jobs, reuse):
    path = os.path.join(ROOT, folder)
    if not reuse:
        shutil.rmtree(path, ignore_errors=True)
    t0 = time.time()
    p = subprocess.run(["make", "-s", jobs, "BUILD=" + folder, "all"], cwd=ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, errors="replace")
    exe = os.path.join(path, "onnx2c")
    if p.returncode or not os.access(exe, os.X_OK):
        record("build %s (make %s)" % (folder, jobs), "fail", p.stdout.strip()[-300:])
        return None
    record("build %s (make %s)" % (folder, jobs), "pass", "%.0f s" % (time.time() - t0))
    return exe


def model_flags(test):
    m = onnx.load(os.path.join(test, "model.onnx"), load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    gin = [i for i in m.graph.input if i.name not in inits]
    ins = [run_models.load_pb(os.path.join(test, "test_data_set_0", "input_%d.pb" % k)) for k in range(len(gin))]
    return run_models.shape_flags(gin, ins)


def compile_once(exe, model, out_dir, out, flags, cwd=None, perturb=False):
    """Runs the compiler; {file name: bytes} of what it wrote, plus its
    exit status and output under the names '(rc)' and '(stdout+stderr)'."""
    os.makedirs(out_dir, exist_ok=True)
    cmd = [exe, model, "-o", os.path.join(out_dir, out) if cwd is None else out,
           "--name", "m"] + [f.format(d=out_dir) for f in flags]
    env = dict(os.environ, MALLOC_PERTURB_="165") if perturb else None
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, timeout=600)
    files = {"(rc)": str(p.returncode).encode(), "(stdout+stderr)": p.stdout + p.stderr}
    for name in sorted(os.listdir(out_dir)):
        with open(os.path.join(out_dir, name), "rb") as f:
            files[name] = f.read()
    return files


def first_diff(a, b):
    """Where two byte strings first differ, as a line of each."""
    la, lb = a.decode("utf-8", "replace").splitlines(), b.decode("utf-8", "replace").splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return "line %d: %r vs %r" % (i + 1, x[:120], y[:120])
    return "%d vs %d lines" % (len(la), len(lb))


def compare(runs):
    """None if every run wrote the same files with the same bytes, else why not."""
    (label0, ref), rest = runs[0], runs[1:]
    for label, got in rest:
        if sorted(got) != sorted(ref):
            return "%s wrote %s, %s wrote %s" % (label0, sorted(ref), label, sorted(got))
        for name in sorted(ref):
            if got[name] != ref[name]:
                return "%s differs between %s and %s: %s" % (name, label0, label, first_diff(ref[name], got[name]))
    return None


def check_example(exes, test, tmp):
    flags0 = model_flags(test)
    model = os.path.join(test, "model.onnx")
    expect_error = os.path.exists(os.path.join(test, "expect_error.txt"))
    out = []
    for label, target, flags in CONFIGS:
        runs = []
        for b, exe in enumerate(exes):
            for r in range(2):
                d = os.path.join(tmp, os.path.basename(test), label.replace(" ", "_"), "b%d" % b, "run%d" % r)
                runs.append(("%s run %d" % (BUILDS[b][0], r + 1), compile_once(exe, model, d, target, flags + flags0, perturb=r == 1)))
        why = compare(runs)
        name = "%s: %s" % (os.path.basename(test), label)
        rc = runs[0][1]["(rc)"]
        if why:
            out.append((name, "fail", why))
        elif rc != b"0" and not (expect_error and rc == b"1"):
            out.append((name, "fail", "the compiler failed (rc %s): %s" % (
                rc.decode(), runs[0][1]["(stdout+stderr)"].decode("utf-8", "replace").strip()[:200])))
        else:
            n = sum(len(v) for k, v in runs[0][1].items() if not k.startswith("("))
            out.append((name, "pass", "refused alike" if rc != b"0" else "4 runs, %d files, %d bytes" % (
                len(runs[0][1]) - 2, n)))
    return out


def check_paths(exe, test, tmp):
    """The same model compiled from two working directories with relative
    and absolute paths, into folders of different depths."""
    flags0 = model_flags(test)
    name = "paths: %s" % os.path.basename(test)
    ref = None
    for label, target, flags in CONFIGS[:2] + CONFIGS[4:5]:
        # A: cwd = tmp/a, model copied next to it, relative paths
        a = os.path.join(tmp, "paths", label.replace(" ", "_"), "a")
        os.makedirs(os.path.join(a, "out"))
        shutil.copy(os.path.join(test, "model.onnx"), os.path.join(a, "model.onnx"))
        fa = compile_once(exe, "model.onnx", os.path.join(a, "out"), os.path.join("out", target),
                          [f.replace("{d}", "out") for f in flags] + flags0, cwd=a)
        # B: cwd = somewhere else, absolute paths, deeper output folder
        b = os.path.join(tmp, "paths", label.replace(" ", "_"), "b", "deeper", "still")
        os.makedirs(b)
        fb = compile_once(exe, os.path.abspath(os.path.join(test, "model.onnx")), b, target, flags + flags0, cwd=None)
        why = compare([("cwd %s, relative paths" % a, fa), ("absolute paths into %s" % b, fb)])
        if why:
            return name, "fail", "%s: %s" % (label, why)
        if fa["(rc)"] != b"0":
            return name, "fail", "%s: the compiler failed: %s" % (label, fa["(stdout+stderr)"][:200])
        ref = fa
    del ref
    return name, "pass", "C, CUDA, -O1 with --report/--emit-onnx/--dot: identical"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--reuse", action="store_true", help="keep build/det-a and build/det-b if built")
    args = ap.parse_args()
    t0 = time.time()
    exes = [build(folder, jobs, args.reuse) for folder, jobs in BUILDS]
    if None in exes:
        print("%d passed, %d failed, 0 skipped" % (sum(r[1] == "pass" for r in results),
                                                     sum(r[1] == "fail" for r in results)))
        sys.exit(1)
    tests = run_models.find_tests([os.path.join(ROOT, "examples")])
    tmp = tempfile.mkdtemp(prefix="o2c_det_")
    try:
        with ThreadPoolExecutor(max(1, args.jobs)) as ex:
            for rows in ex.map(lambda t: check_example(exes, t, tmp), tests):
                for row in rows:
                    record(*row)
        ok = [t for t in tests if not os.path.exists(os.path.join(t, "expect_error.txt"))]
        # the largest example: the most weights and kernels to print
        big = max(ok, key=lambda t: os.path.getsize(os.path.join(t, "model.onnx")))
        record(*check_paths(exes[0], big, tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    n = {s: sum(1 for r in results if r[1] == s) for s in ("pass", "fail", "skip")}
    print("(%.0fs: %d examples x %d configurations x 2 builds x 2 runs)" % (
        time.time() - t0, len(tests), len(CONFIGS)))
    print("%d passed, %d failed, %d skipped" % (n["pass"], n["fail"], n["skip"]))
    sys.exit(1 if n["fail"] else 0)


if __name__ == "__main__":
    main()
