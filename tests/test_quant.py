#!/usr/bin/env python3
"""Quantized ops against their references, exactly: small models with
pseudo-random data (fixed seeds) for every quantized op onnx2c supports, in
the type combinations and granularities it supports:

  - the com.microsoft ops (QLinearAdd, QLinearMul with broadcasting,
    QLinearSigmoid, QLinearLeakyRelu on every input byte,
    QLinearGlobalAveragePool channels first and last, QLinearAveragePool,
    QLinearConcat with copied and requantized inputs, QGemm) against
    onnxruntime;
  - DynamicQuantizeLSTM (forward, reverse, bidirectional; int8 and uint8
    weights, per-direction and per-column scales; biases, peepholes,
    initial states, input_forget, clip, other activations, an all-zero
    input; the byte-product kernels where the weights less their zero point
    fit in int8, the int16 ones where not) against onnxruntime. Its integer parts (the uint8 quantization
    of X and of each step's h, the integer products) are exact; its float
    parts differ from onnxruntime's only by the rounding of the activations
    (onnxruntime's MLAS approximations of the logistic and tanh functions
    against libm): the runner's default tolerance (1e-3 relative, 1e-5
    absolute) holds, and each case first checks that onnxruntime agrees
    within it with this file's float32 emulation of the op (libm
    activations), so that no case sits on a quantization boundary where
    two valid roundings of the activations would pick another byte;
  - the standard ops (QuantizeLinear, DequantizeLinear per tensor, per axis,
    blocked, 16-bit and int32 types, float16/bfloat16 scales, output_dtype,
    precision; DynamicQuantizeLinear; MatMulInteger, QLinearMatMul, ConvInteger,
    QLinearConv in every uint8/int8 combination, per-row/column/channel
    parameters, 1-D to 3-D convolutions) against onnxruntime where it runs
    them, else against onnx's reference implementation (the spec's).

The models are written as a corpus of test_* folders and checked by
tests/conformance/run_node_tests.py (gcc and clang warning-free, every output
compared; integer outputs must be equal); every case must pass. The
DynamicQuantizeLinear and DynamicQuantizeLSTM cases run again built with
-mavx2, with AVX-512 VNNI and with AVX-VNNI where the CPU has them (their
kernels' vector paths).

    python tests/test_quant.py [--compiler build/onnx2c] [-j 2] [--keep DIR]

The last line is 'N passed, N failed, N skipped'."""
import argparse, os, shutil, sys, tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

from corpus_run import cpu_has, run_corpus
from onnx.reference import ReferenceEvaluator

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NP = {TP.UINT8: np.uint8, TP.INT8: np.int8, TP.UINT16: np.uint16, TP.INT16: np.int16, TP.INT32: np.int32}
SFX = {TP.UINT8: "u8", TP.INT8: "i8", TP.UINT16: "u16", TP.INT16: "i16"}


def vi(name, dt, shape):
    return h.make_tensor_value_info(name, dt, shape)


def init(name, a):
    return nh.from_array(np.asarray(a), name)


def f32(x):
    return np.array(x, dtype=np.float32)


def qrand(r, dt, shape):
    i = np.iinfo(NP[dt])
    return r.randint(i.min, i.max + 1, size=shape).astype(NP[dt])


def qweight(r, dt, shape):
    """A weight operand of an integer product: int8 weights 7-bit ([-64, 63],
    as quantize_static/quantize_dynamic's reduce_range), so that the reference
    is exact on every CPU: onnxruntime's uint8 x int8 kernels on x86 without
    VNNI add pairs of products in 16 bits, which full-range weights saturate.
    uint8 weights (uint8 x uint8 products) are full range."""
    if dt == TP.INT8:
        return r.randint(-64, 64, size=shape).astype(np.int8)
    return qrand(r, dt, shape)


def ort_run(m, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.log_severity_level = 4
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


class Corpus:
    def __init__(self, root):
        self.root = root
        self.names = []

    def add(self, name, nodes, inputs, outputs, inits, feeds, opset=13, ms=False, ref="ort"):
        """ref: 'ort' (onnxruntime, falling back to the reference where it
        cannot run the model) or 'onnx' (onnx's reference implementation)"""
        g = h.make_graph(nodes, "g", inputs, outputs, inits)
        ops = [h.make_opsetid("", opset)] + ([h.make_opsetid("com.microsoft", 1)] if ms else [])
        m = h.make_model(g, opset_imports=ops)
        m.ir_version = 10 if opset > 19 else 8
        outs = None
        if ref == "ort":
            try:
                outs = ort_run(m, feeds)
            except Exception:
                if ms:
                    raise
        if outs is None:
            outs = ReferenceEvaluator(m).run(None, feeds)
        name = "test_" + name
        d = os.path.join(self.root, name)
        ds = os.path.join(d, "test_data_set_0")
        os.makedirs(ds)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(m.SerializeToString())
        for k, v in enumerate(inputs):
            with open(os.path.join(ds, "input_%d.pb" % k), "wb") as f:
                f.write(nh.from_array(feeds[v.name], v.name).SerializeToString())
        for k, (v, a) in enumerate(zip(outputs, outs)):
            with open(os.path.join(ds, "output_%d.pb" % k), "wb") as f:
                f.write(nh.from_array(np.asarray(a), v.name).SerializeToString())
        self.names.append(name)


def contrib_cases(c, r, it):
    for dt in (TP.UINT8, TP.INT8):
        tn = SFX[dt]
        zp3 = lambda: [qrand(r, dt, ()) for _ in range(3)]
        for op in ("QLinearAdd", "QLinearMul"):
            s1, s2 = [([2, 3, 4], [3, 1]), ([5, 7], [5, 7]), ([1], [4, 6])][it]
            (sa, sb, sc), (za, zb, zc) = [f32(r.uniform(0.005, 0.1)) for _ in range(3)], zp3()
            n = h.make_node(op, ["A", "sa", "za", "B", "sb", "zb", "sc", "zc"], ["C"], domain="com.microsoft")
            c.add("%s_%s_%d" % (op, tn, it), [n], [vi("A", dt, s1), vi("B", dt, s2)], [vi("C", dt, None)],
                  [init("sa", sa), init("za", za), init("sb", sb), init("zb", zb), init("sc", sc), init("zc", zc)],
                  {"A": qrand(r, dt, s1), "B": qrand(r, dt, s2)}, ms=True)
        for op in ("QLinearSigmoid", "QLinearLeakyRelu"):
            kw = {"alpha": float(r.uniform(0.05, 0.3))} if op == "QLinearLeakyRelu" else {}
            n = h.make_node(op, ["X", "xs", "xz", "ys", "yz"], ["Y"], domain="com.microsoft", **kw)
            c.add("%s_%s_%d" % (op, tn, it), [n], [vi("X", dt, [4, 64])], [vi("Y", dt, None)],
                  [init("xs", f32(r.uniform(0.01, 0.1))), init("xz", qrand(r, dt, ())),
                   init("ys", f32(r.uniform(0.002, 0.05))), init("yz", qrand(r, dt, ()))],
                  {"X": np.arange(256).astype(np.uint8).view(NP[dt]).reshape(4, 64)}, ms=True)
        cl = it % 2
        shp = [2, 7, 3, 5] if cl else [2, 5, 7, 3]
        n = h.make_node("QLinearGlobalAveragePool", ["X", "xs", "xz", "ys", "yz"], ["Y"], domain="com.microsoft",
                        channels_last=cl)
        c.add("QLinearGlobalAveragePool_%s_%d" % (tn, it), [n], [vi("X", dt, shp)], [vi("Y", dt, None)],
              [init("xs", f32(r.uniform(0.01, 0.1))), init("xz", qrand(r, dt, ())),
               init("ys", f32(r.uniform(0.005, 0.05))), init("yz", qrand(r, dt, ()))],
              {"X": qrand(r, dt, shp)}, ms=True)
        ys, yz = f32(r.uniform(0.01, 0.1)), qrand(r, dt, ())
        names, inits, feeds, gin = ["ys", "yz"], [init("ys", ys), init("yz", yz)], {}, []
        for j, ch in enumerate([2, 3, 1]):
            s = ys if j == 1 else f32(r.uniform(0.01, 0.1))
            z = yz if j == 1 else qrand(r, dt, ())
            names += ["X%d" % j, "s%d" % j, "z%d" % j]
            inits += [init("s%d" % j, s), init("z%d" % j, z)]
            gin.append(vi("X%d" % j, dt, [2, ch, 5]))
            feeds["X%d" % j] = qrand(r, dt, [2, ch, 5])
        n = h.make_node("QLinearConcat", names, ["Y"], domain="com.microsoft", axis=1)
        c.add("QLinearConcat_%s_%d" % (tn, it), [n], gin, [vi("Y", dt, None)], inits, feeds, ms=True)
    # QLinearAveragePool: 1-D to 3-D, pads, strides, ceil_mode, count_include_pad, channels last
    for dt in (TP.UINT8, TP.INT8):
        for shp, ks, kw in (([2, 3, 9, 8], [3, 2], dict(pads=[1, 0, 1, 1], strides=[2, 2])),
                            ([1, 4, 10], [3], dict(pads=[1, 2], strides=[2], ceil_mode=1)),
                            ([1, 2, 4, 5, 6], [2, 3, 2], dict(pads=[0, 1, 1, 1, 1, 0], count_include_pad=1)),
                            ([2, 7, 6, 5], [2, 2], dict(auto_pad="SAME_UPPER", channels_last=1))):
            kw = dict(kw, count_include_pad=kw.get("count_include_pad", it % 2))
            n = h.make_node("QLinearAveragePool", ["X", "xs", "xz", "ys", "yz"], ["Y"], domain="com.microsoft",
                            kernel_shape=ks, **kw)
            c.add("QLinearAveragePool_%s_%dd%s_%d" % (SFX[dt], len(ks), "cl" if kw.get("channels_last") else "", it), [n], [vi("X", dt, shp)], [vi("Y", dt, None)],
                  [init("xs", f32(r.uniform(0.01, 0.1))), init("xz", qrand(r, dt, ())),
                   init("ys", f32(r.uniform(0.005, 0.05))), init("yz", qrand(r, dt, ()))],
                  {"X": qrand(r, dt, shp)}, ms=True)
    # QGemm: uint8 A with int8 B (per-column) to uint8 or float, int8 A with int8 B to int8
    for adt, bdt, quant in ((TP.UINT8, TP.INT8, True), (TP.UINT8, TP.UINT8, False), (TP.INT8, TP.INT8, True)):
        M, K, N = 3, 11, 6
        ta, tb = it == 1, it != 1
        ins = ["A", "as", "az", "B", "bs", "bz", "C"] + (["ys", "yz"] if quant else [])
        n = h.make_node("QGemm", ins, ["Y"], domain="com.microsoft", transA=int(ta), transB=int(tb),
                        alpha=float(r.uniform(0.5, 1.5)))
        per_col = it != 2
        inits = [init("as", f32(0.03)), init("az", qrand(r, adt, ())), init("B", qweight(r, bdt, [N, K] if tb else [K, N])),
                 init("bs", f32(r.uniform(0.005, 0.02, size=N)) if per_col else f32(0.01)),
                 init("bz", np.zeros(N, NP[bdt]) if per_col else qrand(r, bdt, ())),
                 init("C", r.randint(-2000, 2000, size=[[N], [1, N], [M, 1]][it]).astype(np.int32))]
        ydt = adt
        if quant:
            inits += [init("ys", f32(0.2)), init("yz", qrand(r, ydt, ()))]
        c.add("QGemm_%s%s_%s_%d" % (SFX[adt], SFX[bdt], "q" if quant else "f", it), [n],
              [vi("A", adt, [K, M] if ta else [M, K])], [vi("Y", ydt if quant else TP.FLOAT, None)], inits,
              {"A": qrand(r, adt, [K, M] if ta else [M, K])}, ms=True)


def standard_cases(c, r, it):
    for xdt in (TP.UINT8, TP.INT8):
        for wdt in (TP.UINT8, TP.INT8):
            ydt = (TP.UINT8, TP.INT8)[it % 2]
            tn = SFX[xdt] + SFX[wdt]
            M, C, G = 6, 4, 2
            ws = f32(r.uniform(0.005, 0.03, size=M)) if it != 1 else f32(r.uniform(0.005, 0.03))
            wz = np.full(M, qrand(r, wdt, ()), NP[wdt]) if it == 0 else qrand(r, wdt, ())
            n = h.make_node("QLinearConv", ["X", "xs", "xz", "W", "ws", "wz", "ys", "yz", "B"], ["Y"],
                            pads=[1, 0, 1, 2], strides=[1, 2], group=G)
            c.add("QLinearConv_%s_%d" % (tn, it), [n], [vi("X", xdt, [2, C, 7, 9])], [vi("Y", ydt, None)],
                  [init("xs", f32(r.uniform(0.01, 0.05))), init("xz", qrand(r, xdt, ())),
                   init("W", qweight(r, wdt, [M, C // G, 3, 3])), init("ws", ws), init("wz", wz),
                   init("ys", f32(r.uniform(0.05, 0.3))), init("yz", qrand(r, ydt, ())),
                   init("B", r.randint(-2000, 2000, size=M).astype(np.int32))],
                  {"X": qrand(r, xdt, [2, C, 7, 9])}, opset=10)
            n = h.make_node("ConvInteger", ["X", "W", "xz", "wz"], ["Y"], pads=[0, 1, 2, 1], dilations=[2, 1])
            c.add("ConvInteger_%s_%d" % (tn, it), [n], [vi("X", xdt, [1, 3, 8, 6])], [vi("Y", TP.INT32, None)],
                  [init("W", qweight(r, wdt, [4, 3, 2, 3])), init("xz", qrand(r, xdt, ())),
                   init("wz", qrand(r, wdt, (4,)) if it == 2 else qrand(r, wdt, ()))],
                  {"X": qrand(r, xdt, [1, 3, 8, 6])}, opset=10, ref="onnx" if it == 2 else "ort")
            As, Bs = [2, 5, 12], ([12, 7] if it != 2 else [3, 1, 12, 7])
            if it == 2:
                As = [1, 2, 5, 12]
            n = h.make_node("QLinearMatMul", ["A", "as", "az", "B", "bs", "bz", "ys", "yz"], ["Y"])
            c.add("QLinearMatMul_%s_%d" % (tn, it), [n], [vi("A", xdt, As)], [vi("Y", ydt, None)],
                  [init("as", f32(r.uniform(0.01, 0.05, size=1))), init("az", qrand(r, xdt, (1,))),
                   init("B", qweight(r, wdt, Bs)),
                   init("bs", f32(r.uniform(0.005, 0.03, size=7 if it == 0 else 1))),
                   init("bz", qrand(r, wdt, (7,) if it == 0 else (1,))), init("ys", f32(r.uniform(0.05, 0.3, size=1))),
                   init("yz", qrand(r, ydt, (1,)))],
                  {"A": qrand(r, xdt, As)}, opset=21 if it == 0 else 10)
            n = h.make_node("MatMulInteger", ["A", "B", "az", "bz"], ["Y"])
            c.add("MatMulInteger_%s_%d" % (tn, it), [n], [vi("A", xdt, As), vi("B", wdt, Bs)], [vi("Y", TP.INT32, None)],
                  [init("az", qrand(r, xdt, ())), init("bz", qrand(r, wdt, (7,)) if it == 0 else qrand(r, wdt, ()))],
                  {"A": qrand(r, xdt, As), "B": qweight(r, wdt, Bs)}, opset=10)
            # constant B and group 1: the packed kernel (o2c_qlin_*), the
            # weights less their zero points stored less a per-channel
            # offset where that leaves int8 (uint8 weights, zero points)
            n = h.make_node("MatMulInteger", ["A", "B", "az", "bz"], ["Y"])
            c.add("MatMulInteger_constB_%s_%d" % (tn, it), [n], [vi("A", xdt, [3, 7, 40])], [vi("Y", TP.INT32, None)],
                  [init("B", qweight(r, wdt, [40, 21])), init("az", qrand(r, xdt, ())),
                   init("bz", qrand(r, wdt, (21,)) if it == 0 else qrand(r, wdt, ()))],
                  {"A": qrand(r, xdt, [3, 7, 40])}, opset=10)
            n = h.make_node("QLinearConv", ["X", "xs", "xz", "W", "ws", "wz", "ys", "yz", "B"], ["Y"], pads=[1, 1, 1, 1])
            c.add("QLinearConv_g1_%s_%d" % (tn, it), [n], [vi("X", xdt, [1, 5, 9, 8])], [vi("Y", ydt, None)],
                  [init("xs", f32(r.uniform(0.01, 0.05))), init("xz", qrand(r, xdt, ())),
                   init("W", qweight(r, wdt, [M + 12, 5, 3, 3])),
                   init("ws", f32(r.uniform(0.005, 0.03, size=M + 12))),
                   init("wz", qrand(r, wdt, (M + 12,)) if it == 0 else qrand(r, wdt, ())),
                   init("ys", f32(r.uniform(0.05, 0.3))), init("yz", qrand(r, ydt, ())),
                   init("B", r.randint(-2000, 2000, size=M + 12).astype(np.int32))],
                  {"X": qrand(r, xdt, [1, 5, 9, 8])}, opset=10)
    for qdt in (TP.UINT8, TP.INT8, TP.UINT16, TP.INT16):
        tn = SFX[qdt]
        x = (r.standard_normal([2, 6, 5]) * 3).astype(np.float32)
        n = h.make_node("QuantizeLinear", ["X", "s", "z"], ["Y"], axis=1)
        c.add("QuantizeLinear_axis_%s_%d" % (tn, it), [n], [vi("X", TP.FLOAT, [2, 6, 5])], [vi("Y", qdt, None)],
              [init("s", f32(r.uniform(0.01, 0.05, size=6))), init("z", qrand(r, qdt, (6,)))], {"X": x}, opset=21)
        scb, zpb = f32(r.uniform(0.01, 0.05, size=(2, 6, 2))), qrand(r, qdt, (2, 6, 2))
        n = h.make_node("QuantizeLinear", ["X", "s", "z"], ["Y"], axis=2, block_size=3)
        c.add("QuantizeLinear_blocked_%s_%d" % (tn, it), [n], [vi("X", TP.FLOAT, [2, 6, 5])], [vi("Y", qdt, None)],
              [init("s", scb), init("z", zpb)], {"X": x}, opset=21)
        n = h.make_node("DequantizeLinear", ["X", "s", "z"], ["Y"], axis=2, block_size=3)
        c.add("DequantizeLinear_blocked_%s_%d" % (tn, it), [n], [vi("X", qdt, [2, 6, 5])], [vi("Y", TP.FLOAT, None)],
              [init("s", scb), init("z", zpb)], {"X": qrand(r, qdt, [2, 6, 5])}, opset=21)
    x = (r.standard_normal([3, 17]) * 2 + r.uniform(-2, 2)).astype(np.float32)
    n = h.make_node("DynamicQuantizeLinear", ["X"], ["Y", "S", "Z"])
    c.add("DynamicQuantizeLinear_%d" % it, [n], [vi("X", TP.FLOAT, [3, 17])],
          [vi("Y", TP.UINT8, None), vi("S", TP.FLOAT, None), vi("Z", TP.UINT8, None)], [], {"X": x}, opset=11)


def edge_cases(c, r):
    import ml_dtypes
    x16 = (r.standard_normal([4, 33]) * 4).astype(np.float16)
    for q in (TP.UINT8, TP.INT8, TP.INT16):
        c.add("ql_f16_" + SFX[q], [h.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])],
              [vi("x", TP.FLOAT16, [4, 33]), vi("s", TP.FLOAT16, [1]), vi("z", q, [1])], [vi("y", q, [4, 33])], [],
              {"x": x16, "s": np.array([0.0137], np.float16), "z": np.array([3], NP[q])}, opset=21, ref="onnx")
    c.add("ql_bf16", [h.make_node("QuantizeLinear", ["x", "s"], ["y"], output_dtype=TP.INT8)],
          [vi("x", TP.BFLOAT16, [4, 33]), vi("s", TP.BFLOAT16, [1])], [vi("y", TP.INT8, [4, 33])], [],
          {"x": (r.standard_normal([4, 33]) * 4).astype(ml_dtypes.bfloat16), "s": np.array([0.0137], ml_dtypes.bfloat16)},
          opset=21, ref="onnx")
    ties = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1e9, -1e9, 300, -300, 127.5, 128.5], np.float32)
    for q in (TP.UINT8, TP.INT8, TP.UINT16, TP.INT16):
        c.add("ql_ties_" + SFX[q], [h.make_node("QuantizeLinear", ["x", "s"], ["y"], output_dtype=q)],
              [vi("x", TP.FLOAT, [12]), vi("s", TP.FLOAT, [])], [vi("y", q, [12])], [],
              {"x": ties, "s": np.array(1.0, np.float32)}, opset=21, ref="onnx")
    xi = r.randint(-100000, 100000, size=[3, 7]).astype(np.int32)
    xu = r.randint(0, 255, size=[3, 7]).astype(np.uint8)
    c.add("dql_i32", [h.make_node("DequantizeLinear", ["x", "s"], ["y"])], [vi("x", TP.INT32, [3, 7]), vi("s", TP.FLOAT, [])],
          [vi("y", TP.FLOAT, [3, 7])], [], {"x": xi, "s": np.array(0.0013, np.float32)}, opset=21, ref="onnx")
    c.add("dql_f16", [h.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=0)],
          [vi("x", TP.UINT8, [3, 7]), vi("s", TP.FLOAT16, [3]), vi("z", TP.UINT8, [3])], [vi("y", TP.FLOAT16, [3, 7])], [],
          {"x": xu, "s": np.array([0.01, 0.02, 0.5], np.float16), "z": np.array([1, 128, 250], np.uint8)}, opset=21, ref="onnx")
    for od in (TP.BFLOAT16, TP.FLOAT16):
        c.add("dql_out_%d" % od, [h.make_node("DequantizeLinear", ["x", "s"], ["y"], output_dtype=od)],
              [vi("x", TP.UINT8, [3, 7]), vi("s", TP.FLOAT, [])], [vi("y", od, [3, 7])], [],
              {"x": xu, "s": np.array(0.0123, np.float32)}, opset=23, ref="onnx")
    c.add("ql_i32x", [h.make_node("QuantizeLinear", ["x", "s"], ["y"], output_dtype=TP.INT16)],
          [vi("x", TP.INT32, [3, 7]), vi("s", TP.FLOAT, [])], [vi("y", TP.INT16, [3, 7])], [],
          {"x": xi, "s": np.array(7.0, np.float32)}, opset=21, ref="onnx")
    c.add("ql_prec_f16", [h.make_node("QuantizeLinear", ["x", "s"], ["y"], output_dtype=TP.INT8, precision=TP.FLOAT16)],
          [vi("x", TP.FLOAT, [4, 33]), vi("s", TP.FLOAT, [])], [vi("y", TP.INT8, [4, 33])], [],
          {"x": x16.astype(np.float32) * 1.001, "s": np.array(0.0137, np.float32)}, opset=25, ref="onnx")
    bf = lambda v: np.array([v], ml_dtypes.bfloat16)
    c.add("qlmm_bf16", [h.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])],
          [vi("a", TP.INT8, [3, 9]), vi("as", TP.BFLOAT16, [1]), vi("az", TP.INT8, [1]), vi("b", TP.INT8, [9, 4]),
           vi("bs", TP.BFLOAT16, [1]), vi("bz", TP.INT8, [1]), vi("ys", TP.BFLOAT16, [1]), vi("yz", TP.INT8, [1])],
          [vi("y", TP.INT8, [3, 4])], [],
          {"a": qrand(r, TP.INT8, [3, 9]), "as": bf(0.0123), "az": np.array([1], np.int8), "b": qrand(r, TP.INT8, [9, 4]),
           "bs": bf(0.0071), "bz": np.array([-3], np.int8), "ys": bf(0.11), "yz": np.array([5], np.int8)}, opset=21, ref="onnx")
    u8, i8 = (lambda *s: qrand(r, TP.UINT8, s)), (lambda *s: qrand(r, TP.INT8, s))
    n = h.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"], auto_pad="SAME_UPPER",
                    dilations=[2], strides=[2])
    c.add("qlc_1d", [n], [vi("x", TP.UINT8, [2, 3, 11])], [vi("y", TP.INT8, None)],
          [init("xs", f32(0.02)), init("xz", np.uint8(130)), init("w", i8(4, 3, 3)), init("ws", f32(0.015)),
           init("wz", i8(4)), init("ys", f32(0.4)), init("yz", np.int8(-3))], {"x": u8(2, 3, 11)}, opset=10, ref="onnx")
    n = h.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"], pads=[1, 0, 1, 0, 1, 1],
                    group=2)
    c.add("qlc_3d", [n], [vi("x", TP.INT8, [1, 4, 3, 5, 4])], [vi("y", TP.UINT8, None)],
          [init("xs", f32(0.03)), init("xz", np.int8(2)), init("w", i8(6, 2, 2, 3, 2)), init("ws", f32(0.01)),
           init("wz", np.int8(0)), init("ys", f32(0.3)), init("yz", np.uint8(120)),
           init("b", r.randint(-3000, 3000, size=6).astype(np.int32))], {"x": i8(1, 4, 3, 5, 4)}, opset=10, ref="onnx")
    n = h.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    c.add("qlmm_rows", [n], [vi("a", TP.UINT8, [2, 1, 4, 9])], [vi("y", TP.UINT8, None)],
          [init("as", f32(r.uniform(0.01, 0.05, size=(4, 1)))), init("az", u8(4, 1)), init("b", u8(3, 9, 5)),
           init("bs", f32(r.uniform(0.01, 0.05, size=5))), init("bz", u8(5)), init("ys", f32(0.2)), init("yz", np.uint8(100))],
          {"a": u8(2, 1, 4, 9)}, opset=10, ref="onnx")
    n = h.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    c.add("mmi_1d", [n], [vi("a", TP.INT8, [9]), vi("b", TP.INT8, [9])], [vi("y", TP.INT32, None)],
          [init("az", np.int8(3)), init("bz", np.int8(-2))], {"a": i8(9), "b": i8(9)}, opset=10, ref="onnx")
    n = h.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=-2, block_size=3)
    c.add("ql_blk_rem", [n], [vi("x", TP.FLOAT, [3, 7, 2])], [vi("y", TP.INT16, None)],
          [init("s", f32(r.uniform(0.0001, 0.0005, size=(3, 3, 2)))),
           init("z", r.randint(-50, 50, size=(3, 3, 2)).astype(np.int16))],
          {"x": (r.standard_normal([3, 7, 2]) * 2).astype(np.float32)}, opset=21, ref="onnx")
    # com.microsoft QLinearSoftmax: along the last axis (the tiled target's row kernel: 16-wide
    # partial sums and a tail), along a middle axis, and a row longer than the row kernel takes;
    # y_scale 1/256 (onnxruntime's rounding matches ours exactly for it); x_scale at most 0.02:
    # onnxruntime wraps a probability that rounds to 256 steps (ours saturates), which five
    # other values within 255 steps keep from happening
    for k, (dt, shp, ax) in enumerate([(TP.UINT8, [3, 70], -1), (TP.INT8, [2, 6, 5], 1), (TP.UINT8, [2, 1100], -1)]):
        n = h.make_node("QLinearSoftmax", ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft", axis=ax,
                        opset=13)
        c.add("qlsoftmax_%d_%s" % (k, SFX[dt]), [n], [vi("x", dt, shp)], [vi("y", dt, None)],
              [init("xs", f32(r.uniform(0.01, 0.02))), init("xz", qrand(r, dt, ())), init("ys", f32(1.0 / 256)),
               init("yz", np.array(0 if dt == TP.UINT8 else -128, NP[dt]))], {"x": qrand(r, dt, shp)}, ms=True)


def dq_quant(a):
    """onnxruntime's dynamic uint8 quantization of a float32 array: (scale, q - zp)"""
    z0 = np.float32(0)
    lo, hi = min(np.float32(a.min()), z0), max(np.float32(a.max()), z0)
    sc = np.float32(1) if hi == lo else np.float32((hi - lo) / np.float32(255))
    zp = np.rint(np.clip(np.float32(z0 - np.float32(lo / sc)), 0, 255))
    return sc, np.clip(np.rint((a / sc).astype(np.float32)), -zp, 255 - zp).astype(np.int64)


def dq_act(name, x, alpha, beta):
    x = x.astype(np.float32)
    f = {"Sigmoid": lambda: 1 / (1 + np.exp(-x)), "Tanh": lambda: np.tanh(x), "Relu": lambda: np.maximum(x, 0),
         "HardSigmoid": lambda: np.clip(alpha * x + beta, 0, 1), "Softsign": lambda: x / (1 + np.abs(x))}[name]
    return np.asarray(f(), np.float32)


def dqlstm_emulate(X, W, R, B, h0, c0, P, ws, wz, rs, rz, H, direction, input_forget, clip, acts):
    """DynamicQuantizeLSTM as onnxruntime computes it, in float32 with libm
    activations (acts[d]: 3 (name, alpha, beta) for f, g, h of direction d)"""
    T, Bt, NI = X.shape
    D = 2 if direction == "bidirectional" else 1
    Y, Yh, Yc = np.zeros((T, D, Bt, H), np.float32), np.zeros((D, Bt, H), np.float32), np.zeros((D, Bt, H), np.float32)
    xs, xq = dq_quant(X.reshape(T * Bt, NI))
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    for d in range(D):
        f, g = [lambda v, a=a: dq_act(a[0], cl(v), a[1], a[2]) for a in acts[d][:2]]
        hh = lambda v, a=acts[d][2]: dq_act(a[0], v, a[1], a[2])   # (the cell state is not clipped)
        rev = d == 1 or direction == "reverse"
        wsc = np.broadcast_to(ws[d].reshape(-1), (4 * H,)).astype(np.float32)
        rsc = np.broadcast_to(rs[d].reshape(-1), (4 * H,)).astype(np.float32)
        Wi = W[d].astype(np.int64) - int(np.asarray(wz[d]).reshape(-1)[0])
        Ri = R[d].astype(np.int64) - int(np.asarray(rz[d]).reshape(-1)[0])
        Px = ((xq @ Wi).astype(np.float32) * (np.float32(xs) * wsc)).reshape(T, Bt, 4 * H)
        bias = (B[d, :4 * H] + B[d, 4 * H:]) if B is not None else np.zeros(4 * H, np.float32)
        hp = h0[d].copy() if h0 is not None else np.zeros((Bt, H), np.float32)
        cp = c0[d].copy() if c0 is not None else np.zeros((Bt, H), np.float32)
        for s in range(T):
            t = T - 1 - s if rev else s
            hs, hq = dq_quant(hp)
            gt = Px[t] + (hq @ Ri).astype(np.float32) * (np.float32(hs) * rsc)
            gi, go, gf, gc = [gt[:, k * H:(k + 1) * H] for k in range(4)]
            if P is not None:
                gi, gf = gi + cp * P[d, :H], gf + cp * P[d, 2 * H:]
            i = f(gi + bias[:H])
            fg = 1 - i if input_forget else f(gf + bias[2 * H:3 * H])
            cn = fg * cp + i * g(gc + bias[3 * H:])
            if P is not None:
                go = go + cn * P[d, H:2 * H]
            hp, cp = f(go + bias[H:2 * H]) * hh(cn), cn
            Y[t, d] = hp
        Yh[d], Yc[d] = hp, cp
    return Y, Yh, Yc


def dqlstm_cases(c, r):
    cases = [  # T, batch, input_size, H, direction, weight type, per column, peepholes, bias, initial states, extra
        (5, 1, 7, 8, "forward", TP.INT8, False, False, True, False, {}),
        (5, 2, 7, 8, "reverse", TP.UINT8, True, False, True, True, {}),
        (6, 3, 10, 16, "bidirectional", TP.INT8, True, True, True, True, {}),
        (4, 1, 12, 32, "bidirectional", TP.UINT8, False, True, False, False, {}),
        (7, 2, 9, 12, "forward", TP.UINT8, True, True, True, True, {"input_forget": 1, "clip": 0.8}),
        (5, 2, 6, 8, "bidirectional", TP.INT8, False, False, True, True,
         {"activations": ["HardSigmoid", "Softsign", "Tanh"] * 2, "activation_alpha": [0.3, 0.25],
          "activation_beta": [0.45, 0.55]}),
        (4, 2, 5, 8, "bidirectional", TP.UINT8, True, False, True, False, {"zero_x": True}),
        # the byte-product kernels (weights less their zero point in int8): units in two
        # blocks of 16, the last one partial; uint8 weights of zero point 128
        (6, 2, 9, 20, "bidirectional", TP.INT8, True, True, True, True, {"input_forget": 1, "clip": 0.8}),
        (5, 1, 13, 24, "forward", TP.UINT8, True, False, True, True, {"zp128": True}),
    ]
    for k, (T, Bt, NI, H, direction, wdt, per_col, peep, bias, init_st, extra) in enumerate(cases):
        D = 2 if direction == "bidirectional" else 1
        W, R = qweight(r, wdt, (D, NI, 4 * H)), qweight(r, wdt, (D, H, 4 * H))
        sh = (D, 4 * H) if per_col else (D,)
        ws, rs = f32(r.uniform(0.002, 0.02, sh)), f32(r.uniform(0.002, 0.02, sh))
        if wdt == TP.INT8:   # quantize_dynamic's int8 weights are symmetric
            wz, rz = np.zeros(sh, np.int8), np.zeros(sh, np.int8)
        elif extra.get("zp128"):   # every w - 128 fits in int8
            wz, rz = np.full(sh, 128, np.uint8), np.full(sh, 128, np.uint8)
        else:   # one zero point a direction; per column, one for all (onnxruntime's rules)
            wz, rz = [np.broadcast_to(r.randint(100, 156, (1, 1) if per_col else (D,)), sh).astype(np.uint8)
                      for _ in range(2)]
        X = np.zeros((T, Bt, NI), np.float32) if extra.get("zero_x") else f32(r.standard_normal((T, Bt, NI)))
        Bv = f32(r.standard_normal((D, 8 * H)) * 0.3) if bias else None
        Pv = f32(r.standard_normal((D, 3 * H)) * 0.3) if peep else None
        h0 = f32(r.standard_normal((D, Bt, H)) * 0.5) if init_st else None
        c0 = f32(r.standard_normal((D, Bt, H)) * 0.5) if init_st else None
        inits = [init("W", W), init("R", R), init("ws", ws), init("wz", wz), init("rs", rs), init("rz", rz)]
        inits += ([init("B", Bv)] if bias else []) + ([init("P", Pv)] if peep else [])
        names = ["X", "W", "R", "B" if bias else "", "", "h0" if init_st else "", "c0" if init_st else "",
                 "P" if peep else "", "ws", "wz", "rs", "rz"]
        attrs = {a: v for a, v in extra.items() if a not in ("zero_x", "zp128")}
        n = h.make_node("DynamicQuantizeLSTM", names, ["Y", "Yh", "Yc"], domain="com.microsoft", hidden_size=H,
                        direction=direction, **attrs)
        ins, feeds = [vi("X", TP.FLOAT, [T, Bt, NI])], {"X": X}
        if init_st:
            ins += [vi("h0", TP.FLOAT, [D, Bt, H]), vi("c0", TP.FLOAT, [D, Bt, H])]
            feeds.update(h0=h0, c0=c0)
        # the emulation agrees with onnxruntime within the default tolerance (see the docstring)
        al, be = list(attrs.get("activation_alpha", [])), list(attrs.get("activation_beta", []))
        acts = [(a, al.pop(0) if a == "HardSigmoid" else 0, be.pop(0) if a == "HardSigmoid" else 0)
                for a in attrs.get("activations", ["Sigmoid", "Tanh", "Tanh"] * D)]
        acts = [acts[3 * d:3 * d + 3] for d in range(D)]
        emu = dqlstm_emulate(X, W, R, Bv, h0, c0, Pv, ws, wz, rs, rz, H, direction, attrs.get("input_forget", 0),
                             attrs.get("clip", 0), acts)
        for a, b in zip(ort_run_ms(n, ins, inits, feeds), emu):
            if not np.all(np.abs(a - b) <= 1e-5 + 1e-3 * np.abs(a)):
                raise RuntimeError("dqlstm case %d: onnxruntime and the emulation differ by %g" % (
                    k, float(np.abs(a - b).max())))
        c.add("dqlstm_%d_%s" % (k, direction), [n], ins, [vi(o, TP.FLOAT, None) for o in ("Y", "Yh", "Yc")], inits,
              feeds, ms=True)


def ort_run_ms(n, ins, inits, feeds):
    g = h.make_graph([n], "g", ins, [vi(o, TP.FLOAT, None) for o in n.output], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13), h.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return ort_run(m, feeds)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--keep", default=None, help="write the corpus here and keep it")
    a = ap.parse_args()
    root = a.keep or tempfile.mkdtemp(prefix="o2c_quant_")
    try:
        if a.keep:
            shutil.rmtree(root, ignore_errors=True)
            os.makedirs(root)
        c = Corpus(root)
        for it in range(3):
            r = np.random.RandomState(1000 + it)
            contrib_cases(c, r, it)
            standard_cases(c, r, it)
        edge_cases(c, np.random.RandomState(7))
        dqlstm_cases(c, np.random.RandomState(11))
        npass, nfail = run_corpus(root, c.names, a.compiler, a.jobs)
        # the vector paths of the C where the CPU runs them: DynamicQuantizeLinear's
        # range (AVX), the DynamicQuantizeLSTM byte products (vpdpbusd)
        skipped = 0
        picks = ("dqlstm", "DynamicQuantizeLinear")
        some = [n for n in c.names if any(k in n for k in picks)]
        for label, need, cflags in (("AVX2", ("avx2", "fma"), "-mavx2 -mfma"),
                                    ("AVX-512 VNNI", ("avx512f", "avx512_vnni"), "-mavx2 -mfma -mavx512f -mavx512vnni"),
                                    ("AVX-VNNI", ("avx2", "fma", "avx_vnni"), "-mavx2 -mfma -mavxvnni")):
            if cpu_has(*need):
                p2, f2 = run_corpus(root, some, a.compiler, a.jobs, flags=["--cc-flags=" + cflags] + list(picks),
                                    expected=os.path.join(root, "expected_isa.txt"))
                npass, nfail = npass + p2, nfail + f2
            else:
                print("skipped: the %s build of the DynamicQuantizeLinear and DynamicQuantizeLSTM cases "
                      "(this CPU has no %s)" % (label, ", ".join(need)))
                skipped += len(some)
        print("%d passed, %d failed, %d skipped" % (npass, nfail, skipped))
        return 1 if nfail else 0
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
