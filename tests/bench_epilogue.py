#!/usr/bin/env python3
"""The cost of a transcendental epilogue (part of `make bench`): one layer
compiled with its activation fused, against the same layer without one.

    python tests/bench_epilogue.py [--compiler build/onnx2c] [--write-docs]

Layers (float32, random weights, one thread, gcc -O3 -march=native):
  conv     Conv 64 -> 64, 3x3, 40x40 (the size of a YOLO neck's convs)
  matmul   MatMul [128 x 384] x [384 x 1536] + bias (a BERT-small FFN)
and activations none, Relu, Sigmoid, Tanh, SiLU (x * Sigmoid(x)), GELU,
Mish, each written as the ONNX ops a PyTorch export uses; the compiler
fuses each into the layer's epilogue (runtime/c/o2c_rt.h O2C_EPI, whose
exp, tanh, erf, log1p are the vectorizable o2c_v*_f32). Each build is
checked against onnxruntime, then the builds are timed alternately
(median of rounds). Prints ms per run and the ratio to the layer without
an activation (issue 21's target: Conv+SiLU within 1.3x)."""
import argparse, os, shutil, statistics, subprocess, sys, tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import bench_calib as B  # noqa: E402  (its timing harness and onnxruntime session)

ACTS = ["none", "Relu", "Sigmoid", "Tanh", "SiLU", "GELU", "Mish"]


def act_nodes(act, x, y):
    if act == "none":
        return [helper.make_node("Identity", [x], [y])]
    if act == "SiLU":
        return [helper.make_node("Sigmoid", [x], ["s"]), helper.make_node("Mul", [x, "s"], [y])]
    if act == "GELU":   # as torch exports it (before opset 20): x * 0.5 * (1 + erf(x / sqrt 2))
        c = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in
             (("r2", 1.4142135381698608), ("one", 1.0), ("half", 0.5))]
        return [helper.make_node("Div", [x, "r2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
                helper.make_node("Add", ["e", "one"], ["a"]), helper.make_node("Mul", [x, "a"], ["m"]),
                helper.make_node("Mul", ["m", "half"], [y])], c
    return [helper.make_node(act, [x], [y])]


def layer(kind, act, rng):
    if kind == "conv":
        C, H = 64, 40
        inits = [numpy_helper.from_array((rng.normal(0, 1, (C, C, 3, 3)) / np.sqrt(9 * C)).astype(np.float32), "w"),
                 numpy_helper.from_array(rng.normal(0, 0.1, C).astype(np.float32), "b")]
        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1])]
        shape_in = shape_out = [1, C, H, H]
    else:
        M, K, N = 128, 384, 1536
        inits = [numpy_helper.from_array((rng.normal(0, 1, (K, N)) / np.sqrt(K)).astype(np.float32), "w"),
                 numpy_helper.from_array(rng.normal(0, 0.1, N).astype(np.float32), "b")]
        nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"]), helper.make_node("Add", ["mm", "b"], ["c"])]
        shape_in, shape_out = [1, M, K], [1, M, N]
    more = act_nodes(act, "c", "y")
    if isinstance(more, tuple):
        more, consts = more
        inits += consts
    g = helper.make_graph(nodes + more, "%s_%s" % (kind, act),
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape_in)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape_out)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=8), shape_in, shape_out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    B.COMP = args.compiler
    rng = np.random.default_rng(21)
    work = tempfile.mkdtemp(prefix="o2c_epi_")
    rows, bad = [], 0
    try:
        for kind in ("conv", "matmul"):
            builds, xs = {}, None
            for act in ACTS:
                m, sin, sout = layer(kind, act, rng)
                mp = os.path.join(work, "%s_%s.onnx" % (kind, act))
                onnx.save(m, mp)
                x = rng.normal(0, 1, sin).astype(np.float32)
                ref = B.ort_session(mp).run(None, {"x": x})[0]
                b = B.Build(work, "%s_%s" % (kind, act), mp, [], [], [tuple(sout)])
                if b.error:
                    print("%s %s: %s" % (kind, act, b.error))
                    bad += 1
                    continue
                got = b.run([x])[0][0]
                err = float(np.max(np.abs(got - ref) / (1e-5 + 1e-3 * np.abs(ref))))
                if err > 1:
                    print("%s %s: differs from onnxruntime (%.2f of the tolerance)" % (kind, act, err))
                    bad += 1
                builds[act] = (b, x)
            n = max(3, int(0.5 / max(builds["none"][0].time_ms(builds["none"][1], 1) / 1e3, 1e-4)))
            times = {a: [] for a in builds}
            for _ in range(args.rounds):
                for a, (b, x) in builds.items():
                    times[a].append(b.time_ms(x, n))
            med = {a: statistics.median(t) for a, t in times.items()}
            for a in ACTS:
                if a in med:
                    rows.append((kind, a, med[a], med[a] / med["none"]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("| layer | activation | ms | vs none |")
    print("|---|---|---:|---:|")
    for kind, a, t, r in rows:
        print("| %s | %s | %.3f | %.2f |" % (kind, a, t, r))
    silu = [r for k, a, t, r in rows if k == "conv" and a == "SiLU"]
    print("epilogue: conv+SiLU %.2fx of the conv alone%s" % (silu[0] if silu else float("nan"),
                                                             "" if not bad else "; %d builds failed" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
