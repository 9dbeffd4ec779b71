#!/usr/bin/env python3
"""Quantized models, as onnxruntime's quantizer writes them, against
onnxruntime's own integer kernels: small float32 models made with onnx.helper
(deterministic He-scaled weights, so that the activations stay O(1)), each
quantized with onnxruntime.quantization.quantize_static (per-channel int8
weights; MinMax calibration on 8 fixed-seed inputs drawn as the test input
is, N(0, 1) clipped to [-3, 3]) in both formats and both activation types:

  format  QDQ (QuantizeLinear/DequantizeLinear pairs around float ops) and
          QOperator (QLinearConv, QLinearMatMul, com.microsoft QGemm,
          QLinearAdd, QLinearSigmoid, QLinearConcat & co.);
  acts    QUInt8 and QInt8 activations.

The models:

  conv_relu           Conv 3x3 + bias + Relu, Conv 1x1 + Clip(0, 6) (Relu6)
  conv_stride_nobias  Conv 3x3 stride 2 without bias, Conv 5x5 pad 2
  depthwise           depthwise Conv 3x3 + Relu, pointwise Conv 1x1 + Relu
  resnet_block        Conv + Relu, Conv, residual Add, Relu, MaxPool,
                      GlobalAveragePool, Flatten, Gemm
  kws_dscnn           MLPerf Tiny keyword spotting's DS-CNN, smaller:
                      Conv 10x4 stride 2, two depthwise-separable blocks,
                      AveragePool over the map, Gemm to 12
  autoencoder         MLPerf Tiny anomaly detection's dense autoencoder
                      (Gemm 640-128-128-8-128-640)
  matmul_mlp          3-D MatMul + Add + Relu, MatMul (the transformer kind)
  unary_lut           Sigmoid (a table lookup in integer code), HardSwish
                      and Tanh (quantize_static leaves them in float between
                      a DequantizeLinear and a QuantizeLinear), MaxPool and
                      Concat of two branches, Reshape
  concat_pool         two Convs, Concat, AveragePool, Conv, Transpose, Reshape
  silu_split_softmax  Conv, SiLU (x * Sigmoid(x)), Split, Conv, Concat, Reshape,
                      Softmax (YOLOv8's and a transformer's pieces)

Each quantized model is a test_qdq_<model>_<qdq|qop>_<u8|i8> folder whose
expected output is onnxruntime's (ORT_ENABLE_ALL: its QDQ fusions into
integer kernels; one thread), checked by tests/conformance/run_node_tests.py
(gcc and clang warning-free; the portable C, the CUDA output emulated, the
C built with -mavx2 -mfma where the CPU has AVX2, with -DO2C_QLIN_QUADS=1
(the quad kernels' portable loops, and their AVX2 panel rewrite), with
-mavx512vnni where the CPU has AVX-512 VNNI (with -mavx512bw: the tile's
assembly loop, and without: its loop of intrinsics) and with -mavxvnni where
it has AVX-VNNI: the packed integer kernels' paths) within one quantization step: integer code
rounds each requantization once, where onnxruntime's kernels may round
another way (float or fixed-point multipliers), so a value near a rounding
boundary may land one step over. Where onnxruntime itself differs by more
between its two valid strategies (ORT_ENABLE_ALL against ORT_DISABLE_ALL,
the QDQ model's float formulation), as when it leaves a Conv whose
DequantizeLinear feeds two nodes in float and the steps add up downstream,
that difference in steps is the case's tolerance instead (the rule of
tests/models/fetch.py: onnx2c is a third valid strategy). tolerance.txt
says so: `qstep N` for an integer output, `atol N S` (S: the scale of the
DequantizeLinear that makes a float output) with `rtol 0` for a float one. The runner keeps its own rtol
(1e-3) where the case's is smaller: it absorbs the float32 rounding of
(q - zero point) * S, and cannot admit a second step, since |q - zero point|
<= 255. Every case must pass; a combination quantize_static cannot quantize
is skipped with its reason.

The int8 weights are 7-bit (reduce_range): onnxruntime's uint8 x int8
kernels on x86 without VNNI add pairs of products in 16 bits, which
full-range weights saturate; the reference is then exact integer arithmetic
on every CPU (as in test_quant.py).

Eighteen QLinearConv geometries of the packed kernels (strides,
dilations, asymmetric pads, depthwise at strides 1, 2, (2, 1) and 3, a 1 x W
image, rows wider than a pixel block; uint8 and int8) are checked against onnx's reference implementation (onnxruntime's
uint8 x int8 kernels saturate with full-range weights on this CPU).
Two variants of conv_relu's QDQ int8 model carry parameters the integer
pass must leave to the float path (a zero among the weight scales; int4
weights, onnx 21), checked against onnx's reference implementation (the
spec) within a step. (Parameters no path accepts, a per-channel scale of
the wrong length, are bad-input cases in tests/bad/run_bad.py.)

The Cortex-M legs: every case again compiled with --target cortex-m (the
integer kernels o2c_qmcu/o2c_qmcudw: fixed-point requantization, SMLAD
where the core has the DSP extension) and run on this host (their portable
C) against the same references; then the integer-only cases (MCU_CASES:
no float function runs at inference) built with gcc-arm-none-eabi and run
under QEMU on a Cortex-M4 (mps2-an386: the DSP path) and a Cortex-M3
(mps2-an385: no DSP, no FPU), whose outputs must be the host's byte for
byte (tests/firmware/mcu.py; skipped where the tools are missing).

build_models() and quantize() are for other scripts (benchmarks) too; the
files are byte-identical from run to run.

    python tests/test_qdq.py [--compiler build/onnx2c] [-j 2] [--keep DIR]

The last line is 'N passed, N failed, N skipped'."""
import argparse, logging, os, shutil, sys, tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

from corpus_run import cpu_has, run_corpus

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "firmware"))
import mcu  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CALIB_SEED = 4242   # the calibration inputs (the test inputs: each model's own seed)
CALIB_N = 8
GEOMETRY_SEED = 77   # the QLinearConv geometry cases
FORMATS = {"qdq": "QDQ", "qop": "QOperator"}   # name in the folder: onnxruntime's QuantFormat
ACTS = {"u8": "QUInt8", "i8": "QInt8"}         # name in the folder: onnxruntime's QuantType


def f32(x):
    return np.asarray(x, dtype=np.float32)


def sample(r, shape):
    """an input: N(0, 1) clipped to [-3, 3] (the test's and the calibration's)"""
    return f32(np.clip(r.standard_normal(shape), -3, 3))


class Net:
    """A float32 model written node by node: input x, output y (the last
    node's), weights from one RandomState in the order asked."""

    def __init__(self, r):
        self.r, self.nodes, self.inits = r, [], []

    def const(self, a):
        name = "c%d" % len(self.inits)
        self.inits.append(nh.from_array(np.asarray(a), name))
        return name

    def op(self, op, ins, **attrs):
        out = "t%d" % len(self.nodes)
        self.nodes.append(h.make_node(op, ins, [out], name="%s_%d" % (op, len(self.nodes)), **attrs))
        return out

    def weight(self, shape, fan_in):
        """He-scaled: a Relu layer keeps its activations' variance"""
        return self.const(f32(self.r.standard_normal(shape) * np.sqrt(2.0 / fan_in)))

    def bias(self, n):
        return self.const(f32(self.r.standard_normal(n) * 0.1))

    def conv(self, x, cin, cout, k, bias=True, group=1, **attrs):
        w = self.weight((cout, cin // group, k[0], k[1]), cin // group * k[0] * k[1])
        return self.op("Conv", [x, w] + ([self.bias(cout)] if bias else []), kernel_shape=list(k), group=group,
                       **attrs)

    def gemm(self, x, nin, nout):
        return self.op("Gemm", [x, self.weight((nout, nin), nin), self.bias(nout)], transB=1)

    def model(self, shape, opset):
        self.nodes[-1].output[0] = "y"
        g = h.make_graph(self.nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, shape)],
                         [h.make_tensor_value_info("y", TP.FLOAT, None)], self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
        m.ir_version = 8
        # y's shape as shape inference finds it (the checker's full check wants one)
        m.graph.output[0].CopyFrom(onnx.shape_inference.infer_shapes(m, strict_mode=True).graph.output[0])
        return m


def conv_relu(n):
    x = n.op("Relu", [n.conv("x", 3, 16, (3, 3), pads=[1, 1, 1, 1])])
    n.op("Clip", [n.conv(x, 16, 8, (1, 1)), n.const(f32(0)), n.const(f32(6))])
    return [1, 3, 16, 16], 13


def conv_stride_nobias(n):
    x = n.conv("x", 8, 12, (3, 3), bias=False, strides=[2, 2])
    n.conv(x, 12, 6, (5, 5), pads=[2, 2, 2, 2])
    return [1, 8, 15, 15], 13


def depthwise(n):
    x = n.op("Relu", [n.conv("x", 16, 16, (3, 3), group=16, pads=[1, 1, 1, 1])])
    n.op("Relu", [n.conv(x, 16, 24, (1, 1))])
    return [1, 16, 12, 12], 13


def resnet_block(n):
    x = n.op("Relu", [n.conv("x", 8, 8, (3, 3), pads=[1, 1, 1, 1])])
    x = n.op("Relu", [n.op("Add", [n.conv(x, 8, 8, (3, 3), pads=[1, 1, 1, 1]), "x"])])
    x = n.op("GlobalAveragePool", [n.op("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])])
    n.gemm(n.op("Flatten", [x]), 8, 10)
    return [1, 8, 8, 8], 13


def kws_dscnn(n):
    # the 10x4 stride-2 input layer padded as Keras' 'same' pads it: 49x10 -> 25x5
    x = n.op("Relu", [n.conv("x", 1, 64, (10, 4), strides=[2, 2], pads=[4, 1, 5, 1])])
    for _ in range(2):
        x = n.op("Relu", [n.conv(x, 64, 64, (3, 3), group=64, pads=[1, 1, 1, 1])])
        x = n.op("Relu", [n.conv(x, 64, 64, (1, 1))])
    x = n.op("AveragePool", [x], kernel_shape=[25, 5])
    n.gemm(n.op("Flatten", [x]), 64, 12)
    return [1, 1, 49, 10], 13


def autoencoder(n):
    x = "x"
    for nin, nout in ((640, 128), (128, 128), (128, 8), (8, 128)):
        x = n.op("Relu", [n.gemm(x, nin, nout)])
    n.gemm(x, 128, 640)
    return [1, 640], 13


def matmul_mlp(n):
    x = n.op("MatMul", ["x", n.weight((32, 48), 32)])
    x = n.op("Relu", [n.op("Add", [x, n.bias(48)])])
    n.op("MatMul", [x, n.weight((48, 16), 48)])
    return [1, 4, 32], 13


def unary_lut(n):
    x = n.op("Sigmoid", [n.conv("x", 4, 8, (1, 1))])
    x = n.op("Tanh", [n.op("HardSwish", [n.conv(x, 8, 8, (1, 1))])])
    x = n.op("Concat", [x, n.op("MaxPool", [x], kernel_shape=[3, 3], pads=[1, 1, 1, 1])], axis=1)
    n.op("Reshape", [x, n.const(np.array([1, -1], np.int64))])
    return [1, 4, 8, 8], 14


def concat_pool(n):
    x = n.op("Concat", [n.conv("x", 4, 8, (3, 3), pads=[1, 1, 1, 1]), n.conv("x", 4, 8, (1, 1))], axis=1)
    x = n.conv(n.op("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2]), 16, 8, (1, 1))
    x = n.op("Transpose", [x], perm=[0, 2, 3, 1])
    n.op("Reshape", [x, n.const(np.array([1, 16, 8], np.int64))])
    return [1, 4, 8, 8], 13


def silu_split_softmax(n):
    x = n.conv("x", 8, 16, (3, 3), pads=[1, 1, 1, 1])
    x = n.op("Mul", [x, n.op("Sigmoid", [x])])   # SiLU (YOLOv8's activation): x op table(x) is one table
    a = "t%d" % len(n.nodes)
    n.nodes.append(h.make_node("Split", [x, n.const(np.array([8, 8], np.int64))], [a, a + "b"], axis=1,
                               name="Split_%d" % len(n.nodes)))
    x = n.op("Concat", [n.conv(a, 8, 8, (1, 1)), a + "b"], axis=1)
    n.op("Softmax", [n.op("Reshape", [x, n.const(np.array([1, 16, 64], np.int64))])], axis=-1)
    return [1, 8, 8, 8], 13


MODELS = [conv_relu, conv_stride_nobias, depthwise, resnet_block, kws_dscnn, autoencoder, matmul_mlp, unary_lut,
          concat_pool, silu_split_softmax]


def build_models():
    """{name: (float32 onnx.ModelProto, its test input)}, in a fixed order,
    each from its own seed (the k-th model's: 100 + k)"""
    out = {}
    for k, make in enumerate(MODELS):
        r = np.random.RandomState(100 + k)
        n = Net(r)
        shape, opset = make(n)   # (a model's function writes its nodes, returns its input's shape and opset)
        m = n.model(shape, opset)
        onnx.checker.check_model(m, full_check=True)
        out[make.__name__] = (m, sample(r, shape))
    return out


def quantize(model, x, fmt, acts):
    """model quantized by quantize_static: fmt 'qdq' or 'qop' (FORMATS), acts
    'u8' or 'i8' (ACTS), int8 weights per channel, 7-bit (see the docstring);
    calibrated on CALIB_N inputs of x's shape and distribution"""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    r = np.random.RandomState(CALIB_SEED)
    feeds = iter([{model.graph.input[0].name: sample(r, x.shape)} for _ in range(CALIB_N)])

    class Reader(CalibrationDataReader):
        def get_next(self):
            return next(feeds, None)

    log = logging.getLogger()
    level = log.level
    log.setLevel(logging.ERROR)   # its advice on every call (pre-process the model; QDQ for int8 on x64)
    try:
        with tempfile.TemporaryDirectory(prefix="o2c_qdq_q_") as d:
            path = os.path.join(d, "q.onnx")
            # a copy: quantize_static saves a ModelProto it is given with its
            # weights as external data, which moves them out of the proto
            quantize_static(onnx.ModelProto.FromString(model.SerializeToString()), path, Reader(),
                            quant_format=getattr(QuantFormat, FORMATS[fmt]), per_channel=True, reduce_range=True,
                            activation_type=getattr(QuantType, ACTS[acts]), weight_type=QuantType.QInt8)
            return onnx.load(path)
    finally:
        log.setLevel(level)


def ort_run(m, x, level="ORT_ENABLE_ALL"):
    """onnxruntime with its graph optimizations (the QDQ groups fused into
    integer kernels; ORT_DISABLE_ALL: none), one thread"""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    so.intra_op_num_threads = 1
    so.log_severity_level = 4
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s.run(None, {m.graph.input[0].name: x})


def tolerance(m, outs, plain):
    """tolerance.txt's lines for a quantized model's outputs (see the
    docstring); plain: onnxruntime's outputs without its optimizations"""
    prod = {o: n for n in m.graph.node for o in n.output}
    inits = {i.name: nh.to_array(i) for i in m.graph.initializer}
    lines = []
    for v, a, b in zip(m.graph.output, outs, plain):
        n = prod.get(v.name)
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64)).max() if a.size else 0.0
        if a.dtype.kind in "iu":
            lines.append("qstep %d" % max(1, int(diff)))
        elif n is not None and n.op_type == "DequantizeLinear" and n.input[1] in inits:
            scale = float(inits[n.input[1]].max())
            steps = max(1, int(np.ceil(diff / scale - 1e-3)))
            lines += ["atol %r" % (steps * scale), "rtol 0"]
        else:
            # a float output that no DequantizeLinear makes (an op the
            # quantizer left in float, a trailing Softmax say): no scale
            # bounds its error in steps; the runner's float tolerance, with
            # a looser atol (its input was quantized)
            lines += ["atol 1e-3", "rtol 1e-3"]
    return "".join(l + "\n" for l in sorted(set(lines)))


def write_case(root, name, m, x, outs, plain):
    d = os.path.join(root, name)
    ds = os.path.join(d, "test_data_set_0")
    os.makedirs(ds)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    with open(os.path.join(ds, "input_0.pb"), "wb") as f:
        f.write(nh.from_array(x, m.graph.input[0].name).SerializeToString())
    for k, (v, a) in enumerate(zip(m.graph.output, outs)):
        with open(os.path.join(ds, "output_%d.pb" % k), "wb") as f:
            f.write(nh.from_array(np.asarray(a), v.name).SerializeToString())
    with open(os.path.join(d, "tolerance.txt"), "w") as f:
        f.write(tolerance(m, outs, plain))


def corpus(root):
    """writes every case; (the test names, the number skipped)"""
    names, skipped = [], 0
    for model, (fm, x) in build_models().items():
        ort_run(fm, x)   # the float model runs
        for fmt in FORMATS:
            for acts in ACTS:
                name = "test_qdq_%s_%s_%s" % (model, fmt, acts)
                try:
                    qm = quantize(fm, x, fmt, acts)
                except ImportError:   # a missing test dependency is a failure, not a model quantize_static refuses
                    raise
                except Exception as e:   # (its last line says what it could not quantize)
                    why = (str(e).strip().splitlines() or [""])[-1][:200]
                    print("skipped %s: quantize_static: %s: %s" % (name, type(e).__name__, why))
                    skipped += 1
                    continue
                onnx.checker.check_model(qm, full_check=True)
                write_case(root, name, qm, x, ort_run(qm, x), ort_run(qm, x, "ORT_DISABLE_ALL"))
                names.append(name)
                if model == "conv_relu" and fmt == "qdq" and acts == "i8":
                    for what, om in odd_params(qm).items():
                        onnx.checker.check_model(om, full_check=True)
                        spec = spec_run(om, x)
                        write_case(root, name + "_" + what, om, x, spec, spec)
                        names.append(name + "_" + what)
    for name, (m, x) in geometry_cases().items():
        onnx.checker.check_model(m, full_check=True)
        spec = spec_run(m, x)
        write_case(root, name, m, x, spec, spec)
        names.append(name)
    for name, (m, x) in gather_dq_cases().items():
        onnx.checker.check_model(m, full_check=True)
        # onnxruntime without its optimizations: from its basic level on, its
        # constant folding of DequantizeLinear -> Slice with steps gives wrong
        # values (test_qdq_gatherdq_slice_i8: 18 of 32 elements, onnxruntime
        # 1.23.2), where its unoptimized run and numpy agree
        outs = ort_run(m, x, "ORT_DISABLE_ALL")
        write_case(root, name, m, x, outs, outs)
        with open(os.path.join(root, name, "tolerance.txt"), "w") as f:   # the same float values: exact
            f.write("atol 0\nrtol 0\n")
        names.append(name)
    for name, (m, x) in weight_only_cases().items():
        onnx.checker.check_model(m, full_check=True)
        # onnxruntime's basic level: at its extended level the MatMulNBits
        # fusion of DequantizeLinear(axis 0, blocks) -> MatMul miscomputes
        # int4 (test_qdq_weightonly_matmul_i4_blocked; onnxruntime 1.23.2,
        # onnxsim/onnxsim#749), where its basic level and onnx's reference
        # agree with the spec
        outs = ort_run(m, x, "ORT_ENABLE_BASIC")
        write_case(root, name, m, x, outs, outs)
        with open(os.path.join(root, name, "tolerance.txt"), "w") as f:   # float sums in another order
            f.write("atol 1e-05\nrtol 0.0001\n")
        names.append(name)
    return names, skipped


WEIGHT_ONLY_SEED = 91


def weight_only_cases():
    """{name: (model, input)}: weight-only quantization, float activations
    times the DequantizeLinear of a constant 8-bit matrix (the quantize
    pass's FusedWQMatMul): a 3-D MatMul + bias with int8 weights per column,
    a Gemm (transB) with uint8 weights and one zero point, a one-row MLP
    whose int8 weights have zero points per column; then 4-bit and blocked
    weights: MatMulNBits (4 bits with zero points and bias, 4 bits plain,
    8 bits), int4 in blocks along K, uint4 per column in a Gemm, int8 in
    blocks in a Gemm; weights written as Cast(q) - z times s (MatMul, int8,
    zero points per column) and Cast(q) times s (Gemm, uint8, scales per
    row of its transposed B)"""
    r = np.random.RandomState(WEIGHT_ONLY_SEED)
    out = {}

    def dq(name, w, s, z=None, axis=None):
        inits = [nh.from_array(w, name), nh.from_array(f32(s), name + "_s")]
        ins = [name, name + "_s"]
        if z is not None:
            inits.append(nh.from_array(z, name + "_z"))
            ins.append(name + "_z")
        return inits, h.make_node("DequantizeLinear", ins, [name + "_d"], **({"axis": axis} if axis is not None else {}))

    def model(nodes, inits, shape, opset=13):
        g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, shape)],
                         [h.make_tensor_value_info("y", TP.FLOAT, None)], inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", opset), h.make_opsetid("com.microsoft", 1)])
        m.ir_version = 8 if opset < 21 else 10
        x = f32(r.standard_normal(shape))
        if nodes[-1].domain:   # (onnx does not infer com.microsoft ops: the output's shape as onnxruntime makes it)
            m.graph.output[0].CopyFrom(h.make_tensor_value_info("y", TP.FLOAT, list(np.shape(ort_run(m, x)[0]))))
        else:
            m.graph.output[0].CopyFrom(onnx.shape_inference.infer_shapes(m, strict_mode=True).graph.output[0])
        return m, x

    K, N = 64, 40
    i1, d1 = dq("w", r.randint(-127, 128, (K, N)).astype(np.int8), r.rand(N) * 0.01 + 0.001, axis=1)
    out["test_qdq_weightonly_matmul_i8"] = model(
        [d1, h.make_node("MatMul", ["x", "w_d"], ["t"]), h.make_node("Add", ["t", "b"], ["y"])],
        i1 + [nh.from_array(f32(r.standard_normal(N) * 0.1), "b")], [3, 5, K])
    i2, d2 = dq("w", r.randint(0, 256, (N, K)).astype(np.uint8), 0.004, np.array(131, np.uint8))
    out["test_qdq_weightonly_gemm_u8"] = model(
        [d2, h.make_node("Gemm", ["x", "w_d", "b"], ["y"], transB=1)],
        i2 + [nh.from_array(f32(r.standard_normal(N) * 0.1), "b")], [7, K])
    K1, N1, N2 = 200, 33, 17
    i3, d3 = dq("w1", r.randint(-128, 128, (K1, N1)).astype(np.int8), r.rand(N1) * 0.005 + 0.001,
                r.randint(-20, 20, N1).astype(np.int8), axis=1)
    i4, d4 = dq("w2", r.randint(-128, 128, (N1, N2)).astype(np.int8), r.rand(N2) * 0.02 + 0.001, axis=1)
    out["test_qdq_weightonly_mlp_i8"] = model(
        [d3, h.make_node("MatMul", ["x", "w1_d"], ["h"]), h.make_node("Relu", ["h"], ["hr"]), d4,
         h.make_node("MatMul", ["hr", "w2_d"], ["y"])], i3 + i4, [1, K1])

    # 4-bit and blocked weights (o2c_wqmmb): com.microsoft MatMulNBits as
    # onnxruntime's MatMul4BitsQuantizer writes it (N x blocks x bytes, the
    # first value in the low four bits), and onnx 21's blocked and int4
    # DequantizeLinear
    def nbits(K, N, bits, bs, zp, bias, shape):
        KB = (K + bs - 1) // bs
        q = r.randint(0, 1 << bits, (N, KB * bs)).astype(np.uint8)
        b = (q[:, 0::2] | (q[:, 1::2] << 4)) if bits == 4 else q
        ins = ["x", "B", "S"]
        inits = [nh.from_array(b.reshape(N, KB, bs * bits // 8), "B"),
                 nh.from_array(f32(r.rand(N * KB) * 0.05 + 0.005), "S")]
        if zp:
            zq = r.randint(0, 1 << bits, (N, KB + (KB % 2 if bits == 4 else 0))).astype(np.uint8)
            inits.append(nh.from_array((zq[:, 0::2] | (zq[:, 1::2] << 4)).reshape(-1) if bits == 4 else zq.reshape(-1), "Z"))
            ins.append("Z")
        if bias:
            ins += [""] * (5 - len(ins)) + ["bias"]
            inits.append(nh.from_array(f32(r.standard_normal(N) * 0.1), "bias"))
        return model([h.make_node("MatMulNBits", ins, ["y"], domain="com.microsoft", K=K, N=N, bits=bits,
                                  block_size=bs)], inits, shape, 21)
    out["test_qdq_weightonly_nbits4_zp_bias"] = nbits(100, 37, 4, 32, True, True, [3, 5, 100])
    out["test_qdq_weightonly_nbits4"] = nbits(64, 48, 4, 16, False, False, [1, 64])
    out["test_qdq_weightonly_nbits8_zp"] = nbits(100, 21, 8, 32, True, False, [9, 100])
    K, N, bs = 100, 37, 32
    KB = (K + bs - 1) // bs
    i5 = [h.make_tensor("w", TP.INT4, [K, N], r.randint(-8, 8, K * N).tolist()),
          nh.from_array(f32(r.rand(KB, N) * 0.05 + 0.005), "w_s"),
          h.make_tensor("w_z", TP.INT4, [KB, N], r.randint(-8, 8, KB * N).tolist())]
    out["test_qdq_weightonly_matmul_i4_blocked"] = model(
        [h.make_node("DequantizeLinear", ["w", "w_s", "w_z"], ["w_d"], axis=0, block_size=bs),
         h.make_node("MatMul", ["x", "w_d"], ["y"])], i5, [2, 3, K], 21)
    i6 = [h.make_tensor("w", TP.UINT4, [N, K], r.randint(0, 16, K * N).tolist()),
          nh.from_array(f32(r.rand(N) * 0.05 + 0.005), "w_s"),
          h.make_tensor("w_z", TP.UINT4, [N], r.randint(0, 16, N).tolist()),
          nh.from_array(f32(r.standard_normal(N) * 0.1), "b")]
    out["test_qdq_weightonly_gemm_u4"] = model(
        [h.make_node("DequantizeLinear", ["w", "w_s", "w_z"], ["w_d"], axis=0),
         h.make_node("Gemm", ["x", "w_d", "b"], ["y"], transB=1)], i6, [5, K], 21)
    i7 = [nh.from_array(r.randint(-128, 128, (N, K)).astype(np.int8), "w"),
          nh.from_array(f32(r.rand(N, KB) * 0.005 + 0.001), "w_s"),
          nh.from_array(f32(r.standard_normal(N) * 0.1), "b")]
    # weight-only written out as float ops (Cast, Sub, Mul), as exporters write it
    i8 = [nh.from_array(r.randint(-128, 128, (K, N)).astype(np.int8), "w"),
          nh.from_array(f32(r.rand(N) * 0.005 + 0.001), "w_s"), nh.from_array(f32(r.randint(-9, 9, N)), "w_z")]
    out["test_qdq_weightonly_castmul_i8"] = model(
        [h.make_node("Cast", ["w"], ["wf"], to=TP.FLOAT), h.make_node("Sub", ["wf", "w_z"], ["wc"]),
         h.make_node("Mul", ["w_s", "wc"], ["w_d"]), h.make_node("MatMul", ["x", "w_d"], ["y"])], i8, [4, K])
    i9 = [nh.from_array(r.randint(0, 256, (N, K)).astype(np.uint8), "w"),
          nh.from_array(f32(r.rand(N, 1) * 0.005 + 0.001), "w_s"), nh.from_array(f32(r.standard_normal(N) * 0.1), "b")]
    out["test_qdq_weightonly_castmul_gemm_u8"] = model(
        [h.make_node("Cast", ["w"], ["wf"], to=TP.FLOAT), h.make_node("Mul", ["wf", "w_s"], ["w_d"]),
         h.make_node("Gemm", ["x", "w_d", "b"], ["y"], transB=1)], i9, [3, K])
    out["test_qdq_weightonly_gemm_i8_blocked"] = model(
        [h.make_node("DequantizeLinear", ["w", "w_s"], ["w_d"], axis=1, block_size=bs),
         h.make_node("Gemm", ["x", "w_d", "b"], ["y"], transB=1)], i7, [6, K], 21)
    return out


GATHER_DQ_SEED = 92


def gather_dq_cases():
    """{name: (model, input)}: a Gather or Slice of a dequantized int8/uint8
    table (pass gather_dequant: the rows are picked from the 8-bit constant
    and only they are dequantized). The input x holds whole numbers as
    floats, cast to the indices: an int8 table per column with zero points
    (DequantizeLinear axis 1), uint8 written as Cast - z times s per column,
    int8 per row dequantized along the gathered axis (left as it is), a
    Slice of a per-tensor table added to x"""
    r = np.random.RandomState(GATHER_DQ_SEED)
    V, H, out = 1000, 64, {}

    def model(nodes, inits, shape, hi):
        g = h.make_graph([h.make_node("Cast", ["x"], ["ids"], to=TP.INT64)] + nodes, "g",
                         [h.make_tensor_value_info("x", TP.FLOAT, shape)], [h.make_tensor_value_info("y", TP.FLOAT, None)],
                         inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
        m.ir_version = 8
        m.graph.output[0].CopyFrom(onnx.shape_inference.infer_shapes(m, strict_mode=True).graph.output[0])
        return m, f32(r.randint(0, hi, shape))

    t8 = [nh.from_array(r.randint(-128, 128, (V, H)).astype(np.int8), "t"), nh.from_array(f32(r.rand(H) * 0.01 + 0.001), "t_s"),
          nh.from_array(r.randint(-5, 5, H).astype(np.int8), "t_z")]
    out["test_qdq_gatherdq_i8_per_column"] = model(
        [h.make_node("DequantizeLinear", ["t", "t_s", "t_z"], ["td"], axis=1), h.make_node("Gather", ["td", "ids"], ["y"])],
        t8, [4, 6], V)
    tu = [nh.from_array(r.randint(0, 256, (V, 48)).astype(np.uint8), "t"), nh.from_array(f32(r.rand(48) * 0.01 + 0.001), "t_s"),
          nh.from_array(f32(128), "t_z")]
    out["test_qdq_gatherdq_castmul_u8"] = model(
        [h.make_node("Cast", ["t"], ["tf"], to=TP.FLOAT), h.make_node("Sub", ["tf", "t_z"], ["tc"]),
         h.make_node("Mul", ["t_s", "tc"], ["td"]), h.make_node("Gather", ["td", "ids"], ["y"])], tu, [2, 9], V)
    tr = [nh.from_array(r.randint(-128, 128, (V, H)).astype(np.int8), "t"), nh.from_array(f32(r.rand(V) * 0.01 + 0.001), "t_s")]
    out["test_qdq_gatherdq_i8_per_row"] = model(
        [h.make_node("DequantizeLinear", ["t", "t_s"], ["td"], axis=0), h.make_node("Gather", ["td", "ids"], ["y"])],
        tr, [5], V)
    ts = [nh.from_array(r.randint(-128, 128, (V, H)).astype(np.int8), "t"), nh.from_array(f32(0.02), "t_s"),
          nh.from_array(np.array([100, 8], np.int64), "st"), nh.from_array(np.array([900, 40], np.int64), "en"),
          nh.from_array(np.array([0, 1], np.int64), "ax"), nh.from_array(np.array([200, 4], np.int64), "sp")]
    out["test_qdq_gatherdq_slice_i8"] = model(
        [h.make_node("DequantizeLinear", ["t", "t_s"], ["td"]), h.make_node("Slice", ["td", "st", "en", "ax", "sp"], ["sl"]),
         h.make_node("Cast", ["ids"], ["xf"], to=TP.FLOAT), h.make_node("Add", ["sl", "xf"], ["y"])], ts, [4, 8], 50)
    return out


def gather_dq_checks(root, names, compiler):
    """(passed, failed): the gather_dq cases whose scales allow it never
    dequantize the whole table (the arena holds no float copy of it: fewer
    bytes than its values as float) and keep it 8-bit in the file (the
    report's float constant bytes: the scales only); the per-row case, where
    the rows' scales differ, still computes right (run_corpus) and is not
    checked here"""
    import re, subprocess
    npass, nfail = 0, 0
    for name in [n for n in names if n.startswith("test_qdq_gatherdq_") and not n.endswith("_per_row")]:
        d = os.path.join(root, name)
        r = subprocess.run([compiler, os.path.join(d, "model.onnx"), "-o", os.path.join(d, "g.c"), "--report"],
                           capture_output=True, text=True)
        m = onnx.load(os.path.join(d, "model.onnx"))
        table = max(nh.to_array(i).size for i in m.graph.initializer)
        fl = re.search(r"(\d+) weight bytes \(float constants\)", r.stdout)
        arena = re.search(r"#define g_ARENA_SIZE (\d+)", open(os.path.join(d, "g.h")).read()) if r.returncode == 0 else None
        ok = r.returncode == 0 and fl and int(fl.group(1)) < table and arena and int(arena.group(1)) < 4 * table
        if ok:
            npass += 1
        else:
            nfail += 1
            print("FAIL %s: gather_dequant: float constant bytes %s, arena %s (the table: %d values)"
                  % (name, fl.group(1) if fl else "?", arena.group(1) if arena else "?", table))
    return npass, nfail


def weight_only_checks(root, names, compiler):
    """(passed, failed): each weight-only case's products compile to
    o2c_wqmm/o2c_wqmmb calls (no DequantizeLinear, no float product), its
    weights 8- or 4-bit in the file (the report's float constant bytes:
    the scales and the bias, fewer than the weights)"""
    import re, subprocess
    npass, nfail = 0, 0
    for name in [n for n in names if n.startswith("test_qdq_weightonly_")]:
        r = subprocess.run([compiler, os.path.join(root, name, "model.onnx"), "-o", os.path.join(root, name, "m.c"),
                            "--report"], capture_output=True, text=True)
        m = onnx.load(os.path.join(root, name, "model.onnx"))
        wbytes = sum(nh.to_array(i).size for i in m.graph.initializer if nh.to_array(i).ndim >= 2)
        fl = re.search(r"(\d+) weight bytes \(float constants\)", r.stdout)
        kernels = re.findall(r"^\s+\d+\s+(o2c_\w+)", r.stdout, re.M)
        ok = r.returncode == 0 and fl and int(fl.group(1)) < wbytes and kernels and \
            any(k.startswith("o2c_wqmm") for k in kernels) and \
            not any(w in k for k in kernels for w in ("dequantize", "matmul", "gemm"))
        if ok:
            npass += 1
        else:
            nfail += 1
            print("FAIL %s: weight-only: kernels %s, float constant bytes %s (the weights: %d values)"
                  % (name, kernels, fl.group(1) if fl else "?", wbytes))
    return npass, nfail


def odd_params(qm):
    """QDQ models whose quantization parameters the integer pass must not
    take (the float path computes them as the model says): {suffix: model}"""
    inits = {i.name: i for i in qm.graph.initializer}
    wdq = next(n for n in qm.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in inits
               and nh.to_array(inits[n.input[0]]).dtype == np.int8 and nh.to_array(inits[n.input[0]]).ndim == 4)
    out = {}
    # a zero among the per-channel weight scales (the channel's weights dequantize to 0)
    m = onnx.ModelProto()
    m.CopyFrom(qm)
    t = next(i for i in m.graph.initializer if i.name == wdq.input[1])
    s = nh.to_array(t).copy()
    s[0] = 0
    t.CopyFrom(nh.from_array(s, t.name))
    out["zero_weight_scale"] = m
    # int4 weights (onnx 21's DequantizeLinear of int4): no int8 kernel applies
    m = onnx.ModelProto()
    m.CopyFrom(qm)
    t = next(i for i in m.graph.initializer if i.name == wdq.input[0])
    t.CopyFrom(h.make_tensor(t.name, TP.INT4, list(t.dims), np.clip(nh.to_array(t) // 16, -8, 7).flatten().tolist()))
    z = next((i for i in m.graph.initializer if len(wdq.input) > 2 and i.name == wdq.input[2]), None)
    if z is not None:
        z.CopyFrom(h.make_tensor(z.name, TP.INT4, list(z.dims), nh.to_array(z).flatten().tolist()))
    out["int4_weights"] = m
    for m in out.values():   # the reference implements DequantizeLinear from opset 19, int4 from 21
        m.opset_import[0].version = 21
        m.ir_version = 10
    return out


# QLinearConv geometries of the packed kernels (o2c_qlin, o2c_qdw, o2c_qdwp):
# strides, dilations, asymmetric pads, depthwise, a 1 x W image, odd K and M
GEOMETRIES = [dict(C=5, M=7, H=11, W=13, k=(3, 3), s=(2, 1), d=(2, 2), p=(1, 2, 0, 1), g=1),
              dict(C=4, M=4, H=9, W=6, k=(3, 2), s=(1, 1), d=(1, 2), p=(2, 0, 1, 1), g=4),
              dict(C=6, M=6, H=7, W=7, k=(5, 5), s=(2, 2), d=(1, 1), p=(2, 2, 2, 2), g=6),
              dict(C=3, M=17, H=1, W=30, k=(1, 5), s=(1, 3), d=(1, 1), p=(0, 2, 0, 1), g=1),
              # rows wider than a pixel block: the panel's band of two rows (o2c_qlin, O2C_QLIN_BR)
              dict(C=3, M=20, H=5, W=57, k=(3, 3), s=(1, 1), d=(1, 1), p=(1, 1, 1, 0), g=1),
              # strided rows from the band: whole output rows a block, and rows wider than a block
              dict(C=6, M=9, H=13, W=50, k=(3, 3), s=(2, 2), d=(1, 2), p=(1, 2, 0, 1), g=1),
              dict(C=2, M=5, H=6, W=123, k=(2, 3), s=(1, 2), d=(1, 1), p=(0, 1, 1, 0), g=1),
              # depthwise at strides (2, 1) with a row dilation (o2c_qdwp's phase planes), and at stride 3 (o2c_qdw)
              dict(C=5, M=5, H=12, W=9, k=(3, 3), s=(2, 1), d=(2, 1), p=(1, 2, 2, 1), g=5),
              dict(C=4, M=4, H=10, W=11, k=(3, 3), s=(3, 3), d=(1, 1), p=(1, 1, 1, 1), g=4)]


def geometry_cases():
    """{name: (QLinearConv model, input)}: int8 weights of zero point 0, the
    input and output of one 8-bit type, checked against the spec"""
    r = np.random.RandomState(GEOMETRY_SEED)
    out = {}
    for i, c in enumerate(GEOMETRIES):
        for dt, npt, lo, hi in ((TP.UINT8, np.uint8, 0, 256), (TP.INT8, np.int8, -128, 128)):
            x = r.randint(lo, hi, (1, c["C"], c["H"], c["W"])).astype(npt)
            w = r.randint(-127, 128, (c["M"], c["C"] // c["g"]) + c["k"]).astype(np.int8)
            inits = [nh.from_array(np.array(0.03, np.float32), "xs"), nh.from_array(np.array(7, npt), "xz"),
                     nh.from_array(w, "w"), nh.from_array(f32(r.rand(c["M"]) * 0.01 + 0.002), "ws"),
                     nh.from_array(np.zeros(c["M"], np.int8), "wz"), nh.from_array(np.array(0.2, np.float32), "ys"),
                     nh.from_array(np.array(5, npt), "yz"),
                     nh.from_array(r.randint(-500, 500, c["M"]).astype(np.int32), "b")]
            n = h.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"], pads=list(c["p"]),
                            strides=list(c["s"]), dilations=list(c["d"]), group=c["g"])
            g = h.make_graph([n], "g", [h.make_tensor_value_info("x", dt, list(x.shape))],
                             [h.make_tensor_value_info("y", dt, None)], inits)
            m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
            m.ir_version = 8
            m.graph.output[0].CopyFrom(onnx.shape_inference.infer_shapes(m, strict_mode=True).graph.output[0])
            out["test_qdq_qlinearconv_geometry%d_%s" % (i, "u8" if dt == TP.UINT8 else "i8")] = (m, x)
    return out


def spec_run(m, x):
    """the spec's outputs (onnx's reference implementation)"""
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(m).run(None, {m.graph.input[0].name: x})


# the cases run under QEMU: integer kernels only between the input's
# QuantizeLinear and the output's DequantizeLinear (no libm call whose last
# bit may differ between newlib and the host's libm)
MCU_CASES = ["test_qdq_%s_%s_%s" % (m, f, a) for m in ("conv_relu", "conv_stride_nobias", "depthwise", "resnet_block",
                                                      "kws_dscnn", "matmul_mlp") for f in ("qdq",) for a in ACTS] + \
    ["test_qdq_autoencoder_qdq_i8"] + ["test_qdq_qlinearconv_geometry%d_%s" % (i, a) for i in (0, 1, 2, 3, 5, 6) for a in ACTS]


def byte_leg(root, names, compiler, where, flags, prefix, runs):
    """(passed, failed): each MCU_CASES case compiled with flags, its
    harness (tests/firmware/mcu.py) built and run on this host, then
    runs(work) -> [(what, mcu.Run)] on the emulated machines, each of which
    must print the host's bytes; prefix names the temporary folders"""
    import subprocess
    sys.path.insert(0, HERE)
    import run_models as rm
    npass, nfail = 0, 0
    for case in [c for c in MCU_CASES if c in names]:
        d = os.path.join(root, case)
        work = tempfile.mkdtemp(prefix=prefix)
        try:
            r = subprocess.run([compiler, os.path.join(d, "model.onnx"), "-o", os.path.join(work, "m.c"), "--name", "m"] +
                               flags, capture_output=True, text=True)
            if r.returncode:
                raise RuntimeError("onnx2c: " + r.stderr.strip()[-300:])
            ds = os.path.join(d, "test_data_set_0")
            ins = [rm.raw_bytes(rm.load_pb(os.path.join(ds, f))) for f in sorted(os.listdir(ds)) if f.startswith("input_")]
            outs = [len(rm.raw_bytes(rm.load_pb(os.path.join(ds, f)))) for f in sorted(os.listdir(ds))
                    if f.startswith("output_")]
            mcu.write_harness(os.path.join(work, "main.c"), ins, outs)
            ok, why = mcu.build_host(work)
            if not ok:
                raise RuntimeError(why)
            host = mcu.run_host(work)
            if not host.ok or not host.outs:
                raise RuntimeError(host.why or "the host build printed no output")
            res = []
            for what, run in runs(work):
                if not run.ok:
                    raise RuntimeError(run.why)
                if run.outs != host.outs:
                    bad = [k for k in host.outs if run.outs.get(k) != host.outs[k]]
                    raise RuntimeError("%s: outputs %s differ from the host's" % (what, ", ".join(bad)))
                res.append("%s %d instructions" % (what, run.insns) if run.insns else what)
            print("ok   %s on %s: the host's bytes (%s)" % (case, where, ", ".join(res)))
            npass += 1
        except RuntimeError as e:
            print("FAIL %s on %s: %s" % (case, where, e))
            nfail += 1
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return npass, nfail


def mcu_leg(root, names, compiler):
    """(passed, failed, skipped): each MCU_CASES case (--target cortex-m)
    on the emulated Cortex-M4 and Cortex-M3 against the host, byte for byte"""
    ok, why = mcu.available()
    if not ok:
        print("skipped: the QEMU Cortex-M runs (%s)" % why)
        return 0, 0, len([c for c in MCU_CASES if c in names])

    def runs(work):
        for cpu in ("m4", "m3"):
            ok, why, _ = mcu.build(work, cpu, elf=cpu + ".elf")
            if not ok:
                raise RuntimeError(cpu + ": " + why)
            yield cpu, mcu.run_qemu(work, cpu, elf=cpu + ".elf")
    return byte_leg(root, names, compiler, "QEMU", ["--target", "cortex-m"], "o2c_qmcu_", runs) + (0,)


def neon_leg(root, names, compiler):
    """(passed, failed, skipped): each MCU_CASES case's C (the default
    target) built for AArch64 (its NEON paths: o2c_qlin_tile's vmlal, and
    with -march=armv8.2-a+dotprod o2c_qlin_tile_q's sdot) and run under
    qemu-aarch64, against the host build, byte for byte"""
    import subprocess
    cross, qemu = shutil.which("aarch64-linux-gnu-gcc"), shutil.which("qemu-aarch64")
    if not cross or not qemu or not os.path.isdir("/usr/aarch64-linux-gnu/lib"):
        print("skipped: the AArch64 NEON runs (needs aarch64-linux-gnu-gcc, its libc and qemu-aarch64)")
        return 0, 0, len([c for c in MCU_CASES if c in names])

    def runs(work):
        # plain NEON (o2c_qlin_tile's smlal), then the dot-product extension
        # (o2c_qlin_tile_q's sdot; QEMU's -cpu max has it)
        for exe, march, cpu in (("a64", "armv8-a", []), ("a64dot", "armv8.2-a+dotprod", ["-cpu", "max"])):
            b = subprocess.run([cross, "-std=c99", "-O2", "-march=" + march, "-static", "-Wall", "-Wextra", "-Werror",
                                "-I.", "main.c", "m.c", "-lm", "-o", exe], cwd=work, capture_output=True, text=True)
            if b.returncode:
                raise RuntimeError("aarch64-linux-gnu-gcc -march=%s: %s" % (march, b.stderr.strip()[:300]))
            yield "aarch64 " + march, mcu.run_host(work, exe, prefix=[qemu] + cpu)
    return byte_leg(root, names, compiler, "AArch64 (qemu)", [], "o2c_qneon_", runs) + (0,)


def avx2():
    return cpu_has("avx2", "fma")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--keep", default=None, help="write the corpus here and keep it")
    a = ap.parse_args()
    root = a.keep or tempfile.mkdtemp(prefix="o2c_qdq_")
    try:
        if a.keep:
            shutil.rmtree(root, ignore_errors=True)
            os.makedirs(root)
        names, skipped = corpus(root)
        # the portable C (and the .cu, emulated), then the C's AVX2 paths where the CPU runs them
        npass, nfail = run_corpus(root, names, a.compiler, a.jobs, flags=["--cuda-emu"])
        if avx2():
            p2, f2 = run_corpus(root, names, a.compiler, a.jobs, flags=["--cc-flags=-mavx2 -mfma"])
            npass, nfail = npass + p2, nfail + f2
        else:
            print("skipped: the AVX2 build of every case (this CPU has no AVX2)")
            skipped += len(names)
        # the quad kernels (o2c_qlin_quads, o2c_qlin_tile_q): their portable
        # loops everywhere, the AVX2 panel rewrite where the CPU has AVX2,
        # vpdpbusd where the CPU runs it: AVX-512 VNNI (zmm), AVX-VNNI (ymm)
        for label, need, cflags in (("the portable quad kernels", (), "-DO2C_QLIN_QUADS=1"),
                                    ("the quad kernels' AVX2 panel rewrite", ("avx2", "fma"),
                                     "-DO2C_QLIN_QUADS=1 -mavx2 -mfma"),
                                    ("AVX-512 VNNI", ("avx512f", "avx512bw", "avx512_vnni"),
                                     "-mavx2 -mfma -mavx512f -mavx512bw -mavx512vnni"),
                                    ("AVX-512 VNNI without BW (the tile's loop of intrinsics, not its assembly)",
                                     ("avx512f", "avx512_vnni"), "-mavx2 -mfma -mavx512f -mavx512vnni"),
                                    ("AVX-VNNI", ("avx2", "fma", "avx_vnni"), "-mavx2 -mfma -mavxvnni")):
            if cpu_has(*need):
                p2, f2 = run_corpus(root, names, a.compiler, a.jobs, flags=["--cc-flags=" + cflags])
                npass, nfail = npass + p2, nfail + f2
            else:
                print("skipped: the %s build of every case (this CPU has no %s)" % (label, ", ".join(need)))
                skipped += len(names)
        # --target cortex-m: its integer kernels' portable C here, then on QEMU
        p3, f3 = run_corpus(root, names, a.compiler, a.jobs, flags=["--onnx2c-flags=--target cortex-m"])
        p4, f4, s4 = mcu_leg(root, names, a.compiler)
        p5, f5 = weight_only_checks(root, names, a.compiler)
        p7, f7 = gather_dq_checks(root, names, a.compiler)
        p5, f5 = p5 + p7, f5 + f7
        p6, f6, s6 = neon_leg(root, names, a.compiler)
        npass, nfail, skipped = npass + p3 + p4 + p5 + p6, nfail + f3 + f4 + f5 + f6, skipped + s4 + s6
        print("%d passed, %d failed, %d skipped" % (npass, nfail, skipped))
        return 1 if nfail else 0
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
