#!/usr/bin/env python3
"""--threads N (compiler/threads.c): the large kernel calls run their index
space in N parts on OpenMP threads.

    python tests/test_threads.py [--compiler build/onnx2c]

For every example model and a small generated transformer (attention,
LayerNorm, GEMMs):
  1. onnx2c -o m.c, and onnx2c -o m.c --threads 3 --thread-grain 0 (every
     call that can split does, whatever its size);
  2. the threaded file builds with gcc -std=c99 -pedantic -Wall -Wextra
     -Werror with -fopenmp, with the pool and with neither (the parts then
     run one after another), and with clang -fopenmp and the pool where
     clang is installed (compiled only);
  3. the threaded program, built with -fopenmp and with the portable
     thread pool (-DO2C_THREAD_POOL -pthread; and the sanitizers when
     --compiler is the sanitizer build; the pool also under ThreadSanitizer
     where it runs here), runs on the model's inputs with OMP_NUM_THREADS
     unset: its outputs are bit-identical to the one-thread program's, and
     within tolerance of the example's expected outputs (onnxruntime's for
     the transformer);
  4. --threads 1 writes the same file as no --threads.
The split calls are counted over all cases: fewer than MIN_SPLIT_KERNELS
distinct kernels split is a failure (the `split` markers went missing).
Refusals: --threads with -o OUT.cu and with --target cortex-m, 0 threads,
--thread-grain without --threads. The last line is 'N passed, N failed, N
skipped'."""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import run_models as rm  # noqa: E402
import make_big_model  # noqa: E402

CFLAGS = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O2"]
SAN = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"]
TSAN = ["-fsanitize=thread", "-g"]
POOL = ["-DO2C_THREAD_POOL", "-pthread"]   # the portable pool instead of OpenMP
THREADS = ["--threads", "3", "--thread-grain", "0"]
MIN_SPLIT_KERNELS = 15
SPLIT_CALL = re.compile(r"^\s+(o2c_\w+)\(\(int64_t\)\d+ \* o2c_part / \d+, ", re.M)


def sh(cmd, cwd=None, timeout=600, env=None):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, env=env)
    return p.returncode, p.stdout.decode(errors="replace")


class Case:
    def __init__(self, name, model_path, feeds, rtol=1e-4, atol=1e-5, want=None):
        self.name, self.model_path, self.feeds, self.rtol, self.atol = name, model_path, feeds, rtol, atol
        self.want = want   # the expected outputs (None: onnxruntime's)


def example_cases():
    out = []
    for d in sorted(glob.glob(os.path.join(ROOT, "examples", "*", ""))):
        name = os.path.basename(os.path.normpath(d))
        if not os.path.exists(os.path.join(d, "model.onnx")) or not os.path.isdir(os.path.join(d, "test_data_set_0")):
            continue
        if os.path.exists(os.path.join(d, "expect_error.txt")) or os.path.exists(os.path.join(d, "flags")):
            continue
        m = onnx.load(os.path.join(d, "model.onnx"))
        init = {i.name for i in m.graph.initializer}
        names = [i.name for i in m.graph.input if i.name not in init]
        files = [os.path.join(d, "test_data_set_0", "input_%d.pb" % k) for k in range(len(names))]
        if not all(os.path.exists(f) for f in files):
            continue
        want = [rm.load_pb(os.path.join(d, "test_data_set_0", "output_%d.pb" % k)) for k in range(len(m.graph.output))]
        out.append(Case(name, os.path.join(d, "model.onnx"), {n: rm.load_pb(f) for n, f in zip(names, files)}, want=want))
    return out


def transformer_case(work):
    path = os.path.join(work, "minilm_f32.onnx")
    m = make_big_model.build(layers=1, hidden=64, heads=4, ffn=128, vocab=500, seq=40, use_float=True, seed=3)
    onnx.save_model(m, path)
    ids = np.random.default_rng(4).integers(0, 500, size=(1, 40)).astype(np.int64)
    return Case("minilm_f32", path, {"input_ids": ids}, rtol=1e-3, atol=1e-4)


def tsan_works():
    """gcc -fsanitize=thread builds and runs a program here (a kernel with
    a high-entropy address layout refuses TSan's memory map)"""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "t.c")
        with open(src, "w") as f:
            f.write("int main(void) { return 0; }\n")
        rc, _ = sh(["gcc"] + TSAN + ["-o", os.path.join(d, "t"), src])
        return rc == 0 and sh([os.path.join(d, "t")])[0] == 0


class Runner:
    def __init__(self, compiler, sanitize):
        self.compiler, self.sanitize = compiler, sanitize
        self.passed = self.failed = self.skipped = 0
        self.clang = shutil.which("clang")
        self.split = {}
        self.tsan = tsan_works()

    def ok(self, what):
        self.passed += 1
        print("ok    %s" % what)

    def bad(self, what, why):
        self.failed += 1
        print("FAIL  %s: %s" % (what, why[-1500:]))

    def onnx2c(self, c, d, extra):
        os.makedirs(d, exist_ok=True)
        args = []
        for n, v in c.feeds.items():
            if v.ndim:
                args += ["--shape", "%s:%s" % (n, "x".join(str(s) for s in v.shape))]
        return sh([self.compiler, os.path.abspath(c.model_path), "-o", "m.c", "--name", "m"] + args + extra, cwd=d)

    def build_run(self, d, c, flags, tag):
        exe = os.path.join(d, "prog_" + tag)
        rc, out = sh(["gcc"] + CFLAGS + flags + ["-I" + d, "-o", exe, rm.HARNESS, "m.c", "-lm"], cwd=d)
        if rc:
            raise RuntimeError("%s: gcc failed: %s" % (tag, out))
        env = dict(os.environ)
        env.pop("OMP_NUM_THREADS", None)
        if tag == "tsan":   # tests/tsan.supp: the two depthwise kernels that store a block edge twice, to the same values
            env["TSAN_OPTIONS"] = "suppressions=%s halt_on_error=1" % os.path.join(ROOT, "tests", "tsan.supp")
        rc, out, got = rm.run_harness(exe, d, list(c.feeds.values()), c.out_bytes, "_" + tag, env=env)
        if rc:
            raise RuntimeError("%s: the program failed (%d): %s" % (tag, rc, out))
        return got

    def check(self, c, work):
        want = c.want
        if want is None:
            want = ort.InferenceSession(c.model_path, providers=["CPUExecutionProvider"]).run(None, c.feeds)
        c.out_bytes = [w.size * (1 if w.dtype == np.bool_ else w.dtype.itemsize) for w in want]
        one, par, t1 = (os.path.join(work, c.name, s) for s in ("one", "threads", "t1"))
        for d, extra in ((one, []), (par, THREADS), (t1, ["--threads", "1"])):
            rc, out = self.onnx2c(c, d, extra)
            if rc:
                return self.bad(c.name, "onnx2c %s: %s" % (" ".join(extra), out))
        for f in ("m.c", "m.h"):
            if rm.without_flags(open(os.path.join(one, f), "rb").read()) != \
                    rm.without_flags(open(os.path.join(t1, f), "rb").read()):
                return self.bad(c.name, "--threads 1 changed %s" % f)
        src = open(os.path.join(par, "m.c")).read()
        names = SPLIT_CALL.findall(src)
        for n in names:
            self.split[n] = self.split.get(n, 0) + 1
        for fl in ([], ["-fopenmp"], POOL):
            rc, out = sh(["gcc"] + CFLAGS + fl + ["-c", "m.c", "-o", "warn.o"], cwd=par)
            if rc:
                return self.bad(c.name, "gcc %s -Werror: %s" % (" ".join(fl), out))
        if self.clang:
            for fl in (["-fopenmp"], POOL):
                rc, out = sh([self.clang] + CFLAGS + fl + ["-c", "m.c", "-o", "warn.o"], cwd=par)
                if rc:
                    return self.bad(c.name, "clang %s -Werror: %s" % (" ".join(fl), out))
        san = SAN if self.sanitize else []
        got1 = self.build_run(one, c, san, "one")
        gotn = self.build_run(par, c, san + ["-fopenmp"], "omp")
        # the portable pool (templates/thread_pool.c.in), under the sanitizers
        # and, where the C compiler has it, ThreadSanitizer
        runs = [("OpenMP", gotn), ("the pool", self.build_run(par, c, san + POOL, "pool"))]
        if self.tsan:
            runs.append(("the pool under TSan", self.build_run(par, c, TSAN + POOL, "tsan")))
        for what, got in runs:
            for k, (a, b) in enumerate(zip(got1, got)):
                if a != b:
                    return self.bad(c.name, "output %d differs between one thread and --threads 3 on %s" % (k, what))
        for k, (w, b) in enumerate(zip(want, gotn)):
            if w.dtype.kind != "f":
                continue
            g = np.frombuffer(b, dtype=w.dtype).reshape(w.shape)
            if not np.allclose(g, w, rtol=c.rtol, atol=c.atol, equal_nan=True):
                return self.bad(c.name, "output %d: max error %g against onnxruntime" % (k, float(np.nanmax(np.abs(g - w)))))
        self.ok("%s: %d calls split, outputs bit-identical to one thread" % (c.name, len(names)))

    def refusals(self, work):
        model = os.path.join(ROOT, "examples", "linear", "model.onnx")
        for out, extra, what in (("m.cu", ["--threads", "2"], "CUDA"),
                                 ("m.c", ["--threads", "2", "--target", "cortex-m"], "cortex-m"),
                                 ("m.c", ["--threads", "0"], "no threads"),
                                 ("m.c", ["--thread-grain", "10"], "a grain without threads")):
            d = tempfile.mkdtemp(dir=work)
            rc, msg = sh([self.compiler, model, "-o", out] + extra, cwd=d)
            if rc != 1 or "--thread" not in msg or os.listdir(d):
                self.bad("refusal: " + what, "rc %d, files %s: %s" % (rc, os.listdir(d), msg))
            else:
                self.ok("refusal: %s (%s)" % (what, msg.strip().splitlines()[-1][:90]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    args = ap.parse_args()
    compiler = os.path.abspath(args.compiler)
    r = Runner(compiler, "asan" in compiler)
    with tempfile.TemporaryDirectory(prefix="o2c_threads_") as work:
        for c in example_cases() + [transformer_case(work)]:
            try:
                r.check(c, work)
            except Exception as e:  # a harness problem: a failure of the case
                r.bad(c.name, "harness error: %r" % (e,))
        r.refusals(work)
    kinds = sorted(r.split)
    if len(kinds) < MIN_SPLIT_KERNELS:
        r.bad("split kernels", "only %d kernels split (%s): fewer than %d" % (len(kinds), " ".join(kinds), MIN_SPLIT_KERNELS))
    else:
        r.ok("%d kernels split: %s" % (len(kinds), " ".join(k for k in kinds if not k.startswith("o2c_ew_"))))
    print("%d passed, %d failed, %d skipped" % (r.passed, r.failed, r.skipped))
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
