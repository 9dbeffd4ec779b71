#!/usr/bin/env python3
"""--weights-bin FILE.bin (compiler/weights_bin.c): the constants as a binary
file that the .c links by an assembler .incbin, beside the C arrays.

    python tests/test_weights_bin.py [--compiler build/onnx2c]

For a few examples/ models and three mid-size transformers written by
tools/make_big_model.py (int8 weights with DequantizeLinear, float32, and
float32 stored as external data):
  1. onnx2c -o m.c (C arrays) and onnx2c -o m.c --weights-bin m.bin;
  2. the .c of the second holds no weight text (no initialized constant
     arrays), the .bin all constants' bytes;
  3. both build with gcc -std=c99 -pedantic -Wall -Wextra -Werror -O2 and the
     harness (tests/harness/main.c), the binary-weights one also with clang;
     both run: outputs bit-identical to each other and within tolerance of
     onnxruntime;
  4. a second onnx2c run in another folder writes byte-identical .c, .h, .bin;
  5. the .c builds from another folder with -DNAME_WEIGHTS_BIN='"/abs/m.bin"',
     and with -I<the .c's folder> (the .c names the .bin by its path from
     its own folder: here the .bin in a sibling folder, ../bins/m.bin);
  6. with arm-none-eabi-gcc installed: the Cortex-M4 build assembles the
     .incbin stub, with and without --weights-section;
and the refusals: --weights-bin with -o OUT.cu, and without -o.
The last line is 'N passed, N failed, N skipped'.
"""
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

EXAMPLES = ["linear", "quantized_mlp", "small_convnet", "self_attention", "quantized_convnet", "layernorm_decomposed"]
CFLAGS = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O2"]
ARM = ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-Os",
       "-ffreestanding", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-c"]


def sh(cmd, cwd=None, timeout=300):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace")


class Case:
    def __init__(self, name, model_path, feeds, rtol=1e-4, atol=1e-5):
        self.name, self.model_path, self.feeds, self.rtol, self.atol = name, model_path, feeds, rtol, atol


def example_cases():
    out = []
    for ex in EXAMPLES:
        d = os.path.join(ROOT, "examples", ex)
        if not os.path.exists(os.path.join(d, "model.onnx")):
            continue
        m = onnx.load(os.path.join(d, "model.onnx"))
        init = {i.name for i in m.graph.initializer}
        names = [i.name for i in m.graph.input if i.name not in init]
        feeds = {}
        for k, n in enumerate(names):
            feeds[n] = rm.load_pb(os.path.join(d, "test_data_set_0", "input_%d.pb" % k))
        out.append(Case(ex, os.path.join(d, "model.onnx"), feeds))
    return out


def generated_cases(work):
    out = []
    for fl, ext in ((False, False), (True, False), (True, True)):
        name = "minilm_small_%s%s" % ("f32" if fl else "int8", "_external" if ext else "")
        path = os.path.join(work, name + ".onnx")
        m = make_big_model.build(layers=2, hidden=128, heads=4, ffn=512, vocab=3000, seq=8, use_float=fl, seed=1)
        if ext:   # the weights in NAME.onnx.data: onnx2c maps the file (compiler/load.c)
            onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                            location=name + ".onnx.data", size_threshold=1024)
        else:
            onnx.save_model(m, path)
        ids = np.random.default_rng(2).integers(0, 3000, size=(1, 8)).astype(np.int64)
        out.append(Case(name, path, {"input_ids": ids}, rtol=1e-3, atol=1e-4))
    return out


class Runner:
    def __init__(self, compiler):
        self.compiler = compiler
        self.passed = self.failed = self.skipped = 0
        self.have_clang = shutil.which("clang") is not None
        self.have_arm = shutil.which("arm-none-eabi-gcc") is not None

    def ok(self, what):
        self.passed += 1
        print("ok    %s" % what)

    def bad(self, what, why):
        self.failed += 1
        print("FAIL  %s: %s" % (what, why[-1500:]))

    def onnx2c(self, model, cwd, extra):
        return sh([self.compiler, os.path.abspath(model), "-o", "m.c", "--name", "m"] + extra, cwd=cwd)

    def build_run(self, d, c, tag):
        """Builds the harness in d, runs it on c's inputs: the outputs' bytes, or raises."""
        exe = os.path.join(d, "prog")
        rc, out = sh(["gcc"] + CFLAGS + ["-I" + d, "-o", exe, rm.HARNESS, "m.c", "-lm"], cwd=d)
        if rc:
            raise RuntimeError("%s: gcc failed: %s" % (tag, out))
        rc, out, got = rm.run_harness(exe, d, list(c.feeds.values()), c.out_bytes)
        if rc:
            raise RuntimeError("%s: the program failed (%d): %s" % (tag, rc, out))
        return got

    def check(self, c, work):
        # onnxruntime without its graph optimizations (run_models.ort_run),
        # the model's own semantics: from 1.25 its extended level rewrites the
        # weight-only int8 MatMuls (DequantizeLinear -> MatMul) of
        # minilm_small_int8 into a lossy kernel, 0.02 off its unoptimized run
        # and ours; its basic level and the unoptimized run agree to 1e-6
        want = rm.ort_run(c.model_path, list(c.feeds.values()))
        c.out_bytes = [w.size * (1 if w.dtype == np.bool_ else w.dtype.itemsize) for w in want]
        da, db, dc = (os.path.join(work, c.name, s) for s in ("arrays", "bin", "bin2"))
        for d in (da, db, dc):
            os.makedirs(d)
        rc, out = self.onnx2c(c.model_path, da, [])
        if rc:
            return self.bad(c.name, "onnx2c (C arrays): " + out)
        rc, out = self.onnx2c(c.model_path, db, ["--weights-bin", "m.bin"])
        if rc:
            return self.bad(c.name, "onnx2c --weights-bin: " + out)
        src = open(os.path.join(db, "m.c")).read()
        arrays = re.findall(r"^static const (?!char \*const)[^\n]*=", src, re.M)
        if arrays:
            return self.bad(c.name, "the --weights-bin .c still has initialized constant arrays: %s" % arrays[:3])
        nconst = len(re.findall(r"^static const ", open(os.path.join(da, "m.c")).read(), re.M))
        nextern = len(re.findall(r"^extern const \S+ m_w\d+\[", src, re.M))
        if nconst and not nextern:
            return self.bad(c.name, "no constant in the .bin although the C arrays have %d" % nconst)
        # byte-identical across two runs in two folders
        rc, out = self.onnx2c(c.model_path, dc, ["--weights-bin", "m.bin"])
        if rc:
            return self.bad(c.name, "onnx2c --weights-bin (second run): " + out)
        for f in ("m.c", "m.h", "m.bin"):
            if open(os.path.join(db, f), "rb").read() != open(os.path.join(dc, f), "rb").read():
                return self.bad(c.name, "%s differs between two runs" % f)
        try:
            ga = self.build_run(da, c, "C arrays")
            gb = self.build_run(db, c, "--weights-bin")
        except RuntimeError as e:
            return self.bad(c.name, str(e))
        if ga != gb:
            return self.bad(c.name, "outputs differ between the C arrays and --weights-bin")
        for k, w in enumerate(want):
            good, err, why = rm.compare(gb[k], w, c.rtol, c.atol)
            if not good:
                return self.bad(c.name, "output %d vs onnxruntime: %s" % (k, why))
        if self.have_clang:
            rc, out = sh(["clang"] + CFLAGS + ["-c", "m.c", "-o", "m_clang.o"], cwd=db)
            if rc:
                return self.bad(c.name, "clang: " + out)
        # from another folder, the file named by the macro
        rc, out = sh(["gcc"] + CFLAGS + ["-c", os.path.join(db, "m.c"), "-o", "m_elsewhere.o",
                                         "-Dm_WEIGHTS_BIN=\"%s\"" % os.path.join(db, "m.bin")], cwd=dc)
        if rc:
            return self.bad(c.name, "gcc from another folder with -Dm_WEIGHTS_BIN: " + out)
        # the .bin in a sibling folder of the .c, built from a third folder with -I<the .c's folder>
        src, bins, elsewhere = (os.path.join(dc, s) for s in ("src", "bins", "build"))
        for d in (src, bins, elsewhere):
            os.makedirs(d, exist_ok=True)
        rc, out = sh([self.compiler, os.path.abspath(c.model_path), "-o", os.path.join(src, "m.c"), "--name", "m",
                      "--weights-bin", os.path.join(bins, "m.bin")], cwd=dc)
        if rc or '#define m_WEIGHTS_BIN "../bins/m.bin"' not in open(os.path.join(src, "m.c")).read():
            return self.bad(c.name, "the .bin's path from the .c's folder: " + out)
        rc, out = sh(["gcc"] + CFLAGS + ["-I" + src, "-c", os.path.join(src, "m.c"), "-o", "m_inc.o"], cwd=elsewhere)
        if rc:
            return self.bad(c.name, "gcc from another folder with -I<the .c's folder>: " + out)
        self.ok("%s (%d constants, %d bytes of .bin, .c %d bytes instead of %d)" % (
            c.name, nextern, os.path.getsize(os.path.join(db, "m.bin")), len(src),
            os.path.getsize(os.path.join(da, "m.c"))))

    def firmware(self, c, work):
        if not self.have_arm:
            self.skipped += 1
            print("skip  cortex-m: arm-none-eabi-gcc not installed (tools/install-deps.sh)")
            return
        for extra in ([], ["--weights-section", ".model_weights"]):
            d = tempfile.mkdtemp(dir=work)
            rc, out = self.onnx2c(c.model_path, d, ["--target", "cortex-m", "--weights-bin", "m.bin"] + extra)
            if rc:
                return self.bad("cortex-m " + c.name, "onnx2c: " + out)
            rc, out = sh(ARM + ["m.c", "-o", "m.o"], cwd=d)
            if rc:
                return self.bad("cortex-m " + c.name, "arm-none-eabi-gcc: " + out)
            rc, out = sh(["arm-none-eabi-objdump", "-h", "m.o"], cwd=d)
            sec = extra[1] if extra else ".rodata.m_weights"
            size = os.path.getsize(os.path.join(d, "m.bin"))
            m = re.search(r"\s%s\s+([0-9a-f]+)" % re.escape(sec), out)
            if rc or not m or int(m.group(1), 16) != size:
                return self.bad("cortex-m " + c.name, "section %s of %d bytes not in the object: %s" % (sec, size, out))
        self.ok("cortex-m %s: the .incbin stub assembles (.rodata and --weights-section)" % c.name)

    def refusals(self, c, work):
        for extra, want in ((["-o", "m.cu", "--weights-bin", "m.bin"], "CUDA target"),
                            (["--weights-bin", "m.bin", "--report=r.txt"], "needs -o"),
                            (["-o", "m.c", "--weights-bin", "a\"b.bin"], "quotes")):
            rc, out = sh([self.compiler, os.path.abspath(c.model_path)] + extra, cwd=work)
            if rc != 1 or want not in out:
                return self.bad("refusal %s" % " ".join(extra), "exit %d: %s" % (rc, out))
        self.ok("refusals: CUDA, no -o, a quote in the file name")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    a = ap.parse_args()
    r = Runner(os.path.abspath(a.compiler))
    work = tempfile.mkdtemp(prefix="o2c-wbin-")
    try:
        cases = example_cases() + generated_cases(work)
        for c in cases:
            try:
                r.check(c, work)
            except Exception as e:  # a harness problem: a failure of the case
                r.bad(c.name, "harness error: %r" % (e,))
        r.firmware(cases[-2], work)
        r.refusals(cases[0], work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed, %d skipped" % (r.passed, r.failed, r.skipped))
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
