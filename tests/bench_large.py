#!/usr/bin/env python3
"""Large models: onnx2c's and gcc's time and peak memory, C arrays against
--weights-bin (docs/LARGE_MODELS.md has the figures). Not run by make test.

    python tests/bench_large.py [--compiler build/onnx2c] [--work DIR] [--huge] [--keep]

Writes MiniLM-shaped transformers with tools/make_big_model.py (6 layers,
hidden 384, 12 heads, FFN 1536, a 30522-token embedding: int8 weights with
DequantizeLinear, 23 MB; and float32 weights, 90 MB), and for each:
onnx2c -o m.c, then gcc -O2 -c m.c; the same with --weights-bin m.bin.
Time (wall) and peak RSS from /usr/bin/time -v. --huge also writes a float32
model over 2 GB with external data (18 layers, hidden 1536, FFN 6144: 2.2 GB;
needs about 9 GB of disk and 7 GB of memory to write), compiles it with
--weights-bin (onnx2c maps the external data file), assembles it (gcc -O2
-mcmodel=medium -mlarge-data-threshold=0 -c, the blob in section .lrodata via
--weights-section: x86-64 programs with more than 2 GB of data), links the
test harness, runs it and compares with onnxruntime. The work folder is
removed at the end unless --keep.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable
GEN = os.path.join(ROOT, "tools", "make_big_model.py")
HARNESS = os.path.join(ROOT, "tests", "harness", "main.c")
CFLAGS = ["-O2", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror"]


def timed(cmd, cwd):
    """(wall seconds, peak RSS in MB, CPU seconds: user + system) of cmd, by /usr/bin/time -v; raises on failure."""
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), p.stderr[-2000:]))
    el = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", p.stderr)
    secs = (int(el.group(1) or 0) * 3600 + int(el.group(2)) * 60 + float(el.group(3)))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) / 1024.0
    cpu = sum(float(re.search(r"%s time \(seconds\): ([\d.]+)" % k, p.stderr).group(1)) for k in ("User", "System"))
    return secs, rss, cpu


def row(label, model_mb, o2c, files, gcc):
    print("%-38s %7.1f MB | onnx2c %6.2f s (CPU %6.2f s) %6.0f MB RSS | output %7.1f MB | "
          "gcc -O2 -c %6.2f s (CPU %6.2f s) %6.0f MB RSS" % (label, model_mb, o2c[0], o2c[2], o2c[1], files, gcc[0], gcc[2],
                                                         gcc[1]), flush=True)


def bench(compiler, work, name, gen_args):
    d = os.path.join(work, name)
    os.makedirs(d)
    subprocess.run([PY, GEN, os.path.join(d, "model.onnx")] + gen_args, check=True, stdout=subprocess.DEVNULL)
    mb = os.path.getsize(os.path.join(d, "model.onnx")) / 1e6
    for label, extra in (("C arrays", []), ("--weights-bin", ["--weights-bin", "m.bin"])):
        o2c = timed([compiler, "model.onnx", "-o", "m.c"] + extra, d)
        files = sum(os.path.getsize(os.path.join(d, f)) for f in ("m.c", "m.bin") if os.path.exists(os.path.join(d, f)))
        gcc = timed(["gcc"] + CFLAGS + ["-c", "m.c", "-o", "m.o"], d)
        row("%s, %s" % (name, label), mb, o2c, files / 1e6, gcc)
        for f in ("m.c", "m.o", "m.bin"):
            if os.path.exists(os.path.join(d, f)):
                os.remove(os.path.join(d, f))


def huge(compiler, work):
    import onnxruntime as ort
    d = os.path.join(work, "huge")
    os.makedirs(d)
    gen = timed([PY, GEN, "model.onnx", "--float", "--external", "--layers", "18", "--hidden", "1536", "--heads", "16",
                 "--ffn", "6144"], d)
    mb = sum(os.path.getsize(os.path.join(d, f)) for f in ("model.onnx", "model.onnx.data")) / 1e6
    print("huge: wrote %.1f MB (model.onnx + model.onnx.data) in %.1f s" % (mb, gen[0]), flush=True)
    o2c = timed([compiler, "model.onnx", "-o", "m.c", "--weights-bin", "m.bin", "--weights-section", ".lrodata.m_weights"], d)
    files = sum(os.path.getsize(os.path.join(d, f)) for f in ("m.c", "m.bin")) / 1e6
    gcc = timed(["gcc"] + CFLAGS + ["-mcmodel=medium", "-mlarge-data-threshold=0", "-c", "m.c", "-o", "m.o"], d)
    row("huge (external data), --weights-bin", mb, o2c, files, gcc)
    os.remove(os.path.join(d, "m.bin"))
    link = timed(["gcc", "-O2", "-DO2C_NAME=m", "-DO2C_HEADER=\"m.h\"", "-I" + d, HARNESS, "m.o", "-lm", "-o", "prog"], d)
    os.remove(os.path.join(d, "m.o"))
    ids = np.random.default_rng(2).integers(0, 30522, size=(1, 16)).astype(np.int64)
    ids.tofile(os.path.join(d, "ids.bin"))
    run = timed(["./prog", "ids.bin:%d" % ids.nbytes, "--", "out.bin:%d" % (16 * 1536 * 4)], d)
    got = np.fromfile(os.path.join(d, "out.bin"), dtype=np.float32).reshape(1, 16, 1536)
    want = ort.InferenceSession(os.path.join(d, "model.onnx"), providers=["CPUExecutionProvider"]).run(
        None, {"input_ids": ids})[0]
    err = float(np.max(np.abs(got - want)))
    print("huge: link %.1f s; run (twice) %.1f s %.0f MB RSS; max |C - onnxruntime| = %.3g (outputs up to %.3g)" % (
        link[0], run[0], run[1], err, float(np.max(np.abs(want)))), flush=True)
    if not err <= 1e-3:
        raise RuntimeError("the huge model's output differs from onnxruntime")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--work", help="folder for the models and outputs (default: a temporary folder)")
    ap.add_argument("--huge", action="store_true", help="also the model over 2 GB with external data")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    a = ap.parse_args()
    compiler = os.path.abspath(a.compiler)
    work = tempfile.mkdtemp(prefix="o2c-large-", dir=a.work)
    try:
        bench(compiler, work, "minilm int8", [])
        bench(compiler, work, "minilm float32", ["--float"])
        if a.huge:
            huge(compiler, work)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
