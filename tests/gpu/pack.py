#!/usr/bin/env python3
"""Packs what a GPU machine without this project's build tools needs to run
the GPU tests (tests/gpu/run.sh): the compiler, built here, with the
protobuf-c library it loads; the real models of ../shared/models, where that
folder exists; and one ONNX node test for each set of ops (the
conformance corpus, build/node-tests, made by make_corpus.py when missing).

    python tests/gpu/pack.py [--out build/gpu-pack] [--compiler build/onnx2c]

The pack is a plain folder: copy it (or carry it) to the GPU machine with the
working tree, then run `bash tests/gpu/run.sh build/gpu-pack` there. That
machine needs nvcc, a GPU, python3 with numpy, onnx and onnxruntime, and gcc;
not protobuf-c. The compiler binary runs where the C library (glibc) is as
new as this machine's or newer."""
import argparse
import glob
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "conformance"))
import run_node_tests  # noqa: E402  (model_facts, default_corpus)

SHARED_MODELS = os.path.normpath(os.path.join(ROOT, "..", "shared", "models"))


def shared_libs(binary, names):
    """paths of the libraries named (by prefix) that `binary` loads (ldd)"""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>" and any(parts[0].startswith(n) for n in names):
            found.append(parts[2])
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "gpu-pack"))
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--corpus", default=None, help="node tests (default: build/node-tests)")
    args = ap.parse_args()

    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    os.makedirs(os.path.join(args.out, "bin"))
    os.makedirs(os.path.join(args.out, "lib"))
    shutil.copy2(args.compiler, os.path.join(args.out, "bin", "onnx2c"))
    libs = shared_libs(args.compiler, ["libprotobuf-c"])
    if not libs:
        sys.exit("pack: %s does not load libprotobuf-c (ldd)" % args.compiler)
    for lib in libs:
        shutil.copy2(lib, os.path.join(args.out, "lib", os.path.basename(lib)))

    models = []
    if os.path.isdir(SHARED_MODELS):
        for m in sorted(glob.glob(os.path.join(SHARED_MODELS, "*", "model.onnx"))):
            src = os.path.dirname(m)
            shutil.copytree(src, os.path.join(args.out, "models", os.path.basename(src)))
            models.append(os.path.basename(src))

    corpus = args.corpus or run_node_tests.default_corpus()
    if not glob.glob(os.path.join(corpus, "test_*", "model.onnx")):
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "conformance", "make_corpus.py"), corpus], check=True)
    seen = set()
    sample = []
    for t in sorted(os.path.dirname(p) for p in glob.glob(os.path.join(corpus, "test_*", "model.onnx"))):
        ops = tuple(run_node_tests.model_facts(t)[0])
        if ops not in seen:
            seen.add(ops)
            sample.append(t)
            shutil.copytree(t, os.path.join(args.out, "node-tests", os.path.basename(t)))

    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(args.out) for f in fs)
    print("pack: %s, %.1f MB: the compiler + %s; %d models (%s); %d node tests (one for each set of ops)" % (
        os.path.relpath(args.out, ROOT), size / 1e6, ", ".join(os.path.basename(l) for l in libs),
        len(models), ", ".join(models) or "no ../shared/models", len(sample)))


if __name__ == "__main__":
    main()
