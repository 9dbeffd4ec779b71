#!/usr/bin/env python3
"""Writes fuzz_compile's seed corpus: every examples/*/model.onnx, plus the
node-test models (build/node-tests/test_*/model.onnx, as
tests/conformance/make_corpus.py writes them) up to --max-size bytes, each
file named by its content's hash (duplicates fall together). Needs no
Python package beyond the standard library.

Usage: make_seeds.py [--out build/fuzz/seeds] [--node-tests build/node-tests]
                     [--max-size 65536] [--every N]
(--every N keeps one node-test model in N, in name order)"""
import argparse, glob, hashlib, os, shutil, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "fuzz", "seeds"))
    ap.add_argument("--node-tests", default=os.path.join(ROOT, "build", "node-tests"))
    ap.add_argument("--max-size", type=int, default=65536)
    ap.add_argument("--every", type=int, default=1)
    a = ap.parse_args()
    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(a.out)
    examples = sorted(glob.glob(os.path.join(ROOT, "examples", "*", "*.onnx")))
    nodes = sorted(glob.glob(os.path.join(a.node_tests, "test_*", "model.onnx")))[::max(a.every, 1)]
    n = {"examples": 0, "node-tests": 0}
    for kind, paths in (("examples", examples), ("node-tests", nodes)):
        for p in paths:
            data = open(p, "rb").read()
            if len(data) > a.max_size:
                continue
            name = os.path.join(a.out, hashlib.sha1(data).hexdigest())
            if not os.path.exists(name):
                with open(name, "wb") as f:
                    f.write(data)
                n[kind] += 1
    print("make_seeds: %d from examples, %d from %s (%s) into %s" % (
        n["examples"], n["node-tests"], a.node_tests, "present" if nodes else "absent", a.out))
    if not n["examples"]:
        sys.exit("make_seeds: no example models found")


if __name__ == "__main__":
    main()
