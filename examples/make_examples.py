#!/usr/bin/env python3
"""Builds the example models under examples/NAME/ (model.onnx,
test_data_set_0/input_K.pb, output_K.pb) with onnx.helper.

Weights and inputs come from numpy RandomState (fixed seeds); reference
outputs come from onnxruntime with graph optimizations disabled and one
thread. Running it twice writes byte-identical files.

    python examples/make_examples.py [NAME...]     # default: all of them
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
IR_VERSION = 8          # readable by every onnxruntime this project uses
F = TensorProto.FLOAT


def rng(seed):
    return np.random.RandomState(seed)


def w(r, *shape, scale=0.5):
    return (r.standard_normal(shape) * scale).astype(np.float32)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def i64(name, vals):
    return init(name, np.array(vals, dtype=np.int64))


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def model(name, nodes, inputs, outputs, inits, opset=13, extra_opsets=()):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, producer_name="onnx2c examples", producer_version="1",
                          opset_imports=[helper.make_opsetid("", opset)] +
                          [helper.make_opsetid(d, v) for d, v in extra_opsets])
    m.ir_version = IR_VERSION
    return m


# ---------------------------------------------------------------- the models
# Each returns (model, [input arrays], description, extra files {name: text}).

def linear():
    r = rng(1)
    m = model("linear", [helper.make_node("Gemm", ["x", "W", "b"], ["y"], transB=1)],
              [vi("x", [2, 8])], [vi("y", [2, 4])],
              [init("W", w(r, 4, 8)), init("b", w(r, 4))])
    return m, [w(r, 2, 8, scale=1.0)], "one Gemm (x·Wᵀ + b), 8 → 4 features, batch 2", {}


def two_heads():
    r = rng(2)
    nodes = [
        helper.make_node("Gemm", ["x", "W0", "b0"], ["h"], transB=1),
        helper.make_node("Relu", ["h"], ["t"]),
        helper.make_node("MatMul", ["t", "W1"], ["l"]),
        helper.make_node("Add", ["l", "b1"], ["logits"]),
        helper.make_node("Gemm", ["t", "W2", "b2"], ["s"], alpha=0.5, beta=2.0),
        helper.make_node("Sigmoid", ["s"], ["score"]),
    ]
    m = model("two_heads", nodes, [vi("x", [1, 16])], [vi("logits", [1, 3]), vi("score", [1, 2])],
              [init("W0", w(r, 12, 16)), init("b0", w(r, 12)), init("W1", w(r, 12, 3)), init("b1", w(r, 3)),
               init("W2", w(r, 12, 2)), init("b2", w(r, 2))])
    return m, [w(r, 1, 16, scale=1.0)], "a Gemm+Relu trunk feeding two heads (MatMul+Add logits, Gemm+Sigmoid score): two outputs", {}


def dynamic_batch():
    r = rng(3)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"]),
        helper.make_node("Add", ["h", "b"], ["a"]),
        helper.make_node("Tanh", ["a"], ["y"]),
    ]
    m = model("dynamic_batch", nodes, [vi("x", ["N", 6])], [vi("y", ["N", 5])],
              [init("W", w(r, 6, 5)), init("b", w(r, 5))])
    return (m, [w(r, 3, 6, scale=1.0)],
            "MatMul+Add+Tanh with a symbolic batch dimension 'N' (the test data binds N=3: `--dim N=3`)", {})


def conv_bn_relu():
    r = rng(4)
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "gamma", "beta", "mean", "var"], ["n"], epsilon=1e-5),
        helper.make_node("Relu", ["n"], ["y"]),
    ]
    m = model("conv_bn_relu", nodes, [vi("x", [1, 3, 8, 8])], [vi("y", [1, 4, 8, 8])],
              [init("W", w(r, 4, 3, 3, 3)), init("B", w(r, 4)),
               init("gamma", (1 + w(r, 4, scale=0.2))), init("beta", w(r, 4, scale=0.2)),
               init("mean", w(r, 4, scale=0.2)), init("var", (0.5 + r.rand(4)).astype(np.float32))])
    return m, [w(r, 1, 3, 8, 8, scale=1.0)], "Conv 3x3 (pad 1) → BatchNormalization → Relu", {}


def small_convnet():
    r = rng(5)
    nodes = [
        helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("BatchNormalization", ["c1", "g1", "be1", "m1", "v1"], ["n1"], epsilon=1e-3),
        helper.make_node("Relu", ["n1"], ["r1"]),
        helper.make_node("Conv", ["r1", "W2", "B2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["gap"]),
        helper.make_node("Conv", ["gap", "W3", "B3"], ["y"], kernel_shape=[1, 1]),
    ]
    m = model("small_convnet", nodes, [vi("x", [1, 3, 16, 16])], [vi("y", [1, 5, 1, 1])],
              [init("W1", w(r, 8, 3, 3, 3)), init("B1", w(r, 8)),
               init("g1", 1 + w(r, 8, scale=0.2)), init("be1", w(r, 8, scale=0.2)),
               init("m1", w(r, 8, scale=0.2)), init("v1", (0.5 + r.rand(8)).astype(np.float32)),
               init("W2", w(r, 8, 8, 3, 3, scale=0.3)), init("B2", w(r, 8)),
               init("W3", w(r, 5, 8, 1, 1)), init("B3", w(r, 5))])
    return (m, [w(r, 1, 3, 16, 16, scale=1.0)],
            "Conv (stride 2) → BatchNormalization → Relu → Conv → Relu → GlobalAveragePool → 1x1 Conv classifier", {})


def flatten_shape_ops():
    r = rng(6)
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Shape", ["r"], ["shp"]),
        helper.make_node("Gather", ["shp", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus1"], ["newshape"], axis=0),
        helper.make_node("Reshape", ["r", "newshape"], ["flat"]),
        helper.make_node("Gemm", ["flat", "W", "b"], ["y"], transB=1),
    ]
    m = model("flatten_shape_ops", nodes, [vi("x", [2, 4, 3, 3])], [vi("y", [2, 6])],
              [init("zero", np.array(0, dtype=np.int64)), i64("axes0", [0]), i64("minus1", [-1]),
               init("W", w(r, 6, 36, scale=0.2)), init("b", w(r, 6))])
    return (m, [w(r, 2, 4, 3, 3, scale=1.0)],
            "a flatten written the way PyTorch exporters write it (Shape → Gather → Unsqueeze → Concat → Reshape) before a Gemm", {})


def clamp_min_max():
    r = rng(7)
    nodes = [
        helper.make_node("Min", ["x", "hi"], ["m"]),
        helper.make_node("Max", ["m", "lo"], ["y"]),
    ]
    m = model("clamp_min_max", nodes, [vi("x", [2, 10])], [vi("y", [2, 10])],
              [init("hi", np.array(6.0, dtype=np.float32)), init("lo", np.array(0.0, dtype=np.float32))])
    return m, [(r.uniform(-10, 10, (2, 10))).astype(np.float32)], "Min(x, 6) then Max(·, 0): a ReLU6 clamp written as Min/Max", {}


def layernorm_decomposed():
    r = rng(8)
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["mu"], axes=[-1], keepdims=1),
        helper.make_node("Sub", ["x", "mu"], ["d"]),
        helper.make_node("Pow", ["d", "two"], ["d2"]),
        helper.make_node("ReduceMean", ["d2"], ["var"], axes=[-1], keepdims=1),
        helper.make_node("Add", ["var", "eps"], ["ve"]),
        helper.make_node("Sqrt", ["ve"], ["sd"]),
        helper.make_node("Div", ["d", "sd"], ["nrm"]),
        helper.make_node("Mul", ["nrm", "gamma"], ["sc"]),
        helper.make_node("Add", ["sc", "beta"], ["y"]),
    ]
    m = model("layernorm_decomposed", nodes, [vi("x", [1, 4, 8])], [vi("y", [1, 4, 8])],
              [init("two", np.array(2.0, dtype=np.float32)), init("eps", np.array(1e-5, dtype=np.float32)),
               init("gamma", 1 + w(r, 8, scale=0.2)), init("beta", w(r, 8, scale=0.2))])
    return (m, [w(r, 1, 4, 8, scale=2.0) + 1.0],
            "LayerNorm decomposed as paddle2onnx writes it: ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add", {})


def gemm_chain():
    r = rng(9)
    nodes = [
        helper.make_node("Gemm", ["x", "W", "b"], ["g"], transB=1),
        helper.make_node("Add", ["g", "bias2"], ["a"]),
        helper.make_node("Relu", ["a"], ["rl"]),
        helper.make_node("Mul", ["rl", "scale"], ["s"]),
        helper.make_node("Add", ["s", "x"], ["y"]),
    ]
    m = model("gemm_chain", nodes, [vi("x", [3, 8])], [vi("y", [3, 8])],
              [init("W", w(r, 8, 8)), init("b", w(r, 8)), init("bias2", w(r, 1, 8)),
               init("scale", w(r, 8, scale=1.0))])
    return m, [w(r, 3, 8, scale=1.0)], "Gemm → Add (broadcast bias) → Relu → Mul (per-feature scale) → Add (residual)", {}


def asinh():
    r = rng(10)
    m = model("asinh", [helper.make_node("Asinh", ["x"], ["y"])], [vi("x", [2, 5])], [vi("y", [2, 5])], [])
    return m, [r.uniform(-20, 20, (2, 5)).astype(np.float32)], "a single Asinh on values in [-20, 20]", {}


def elementwise_chain():
    r = rng(14)
    nodes = [
        helper.make_node("Sigmoid", ["x"], ["sg"]),
        helper.make_node("Mul", ["x", "sg"], ["sw"]),
        helper.make_node("Mul", ["y", "half"], ["hy"]),
        helper.make_node("Add", ["sw", "hy"], ["s"]),
        helper.make_node("Add", ["s", "bias"], ["sb"]),
        helper.make_node("Clip", ["sb", "lo", "hi"], ["cl"]),
        helper.make_node("Greater", ["cl", "zero"], ["pos"]),
        helper.make_node("Cast", ["pos"], ["posf"], to=F),
        helper.make_node("Mul", ["cl", "posf"], ["z"]),
        helper.make_node("Cast", ["z"], ["zi"], to=TensorProto.INT32),
    ]
    m = model("elementwise_chain", nodes, [vi("x", [2, 4, 3, 5]), vi("y", [2, 4, 3, 5])],
              [vi("z", [2, 4, 3, 5]), vi("zi", [2, 4, 3, 5], TensorProto.INT32)],
              [init("half", np.array(0.5, dtype=np.float32)), init("bias", w(r, 4, 1, 1, scale=1.0)),
               init("lo", np.array(-1.5, dtype=np.float32)), init("hi", np.array(2.5, dtype=np.float32)),
               init("zero", np.array(0.25, dtype=np.float32))])
    return (m, [w(r, 2, 4, 3, 5, scale=2.0), w(r, 2, 4, 3, 5, scale=2.0)],
            "x·sigmoid(x) + 0.5·y + a per-channel bias, Clip, Greater → Cast → Mul, Cast to int32: one elementwise tree "
            "with broadcast and scalar operands and a graph output in the middle", {})


def srcnn_cubic():
    r = rng(11)
    nodes = [
        helper.make_node("Resize", ["x", "", "scales"], ["up"], mode="cubic"),
        helper.make_node("Conv", ["up", "W1", "B1"], ["c1"], kernel_shape=[9, 9], pads=[4, 4, 4, 4]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "W2", "B2"], ["c2"], kernel_shape=[1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Conv", ["r2", "W3", "B3"], ["y"], kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
    ]
    m = model("srcnn_cubic", nodes, [vi("x", [1, 1, 8, 8])], [vi("y", [1, 1, 16, 16])],
              [init("scales", np.array([1, 1, 2, 2], dtype=np.float32)),
               init("W1", w(r, 8, 1, 9, 9, scale=0.1)), init("B1", w(r, 8, scale=0.1)),
               init("W2", w(r, 4, 8, 1, 1)), init("B2", w(r, 4, scale=0.1)),
               init("W3", w(r, 1, 4, 5, 5, scale=0.1)), init("B3", w(r, 1, scale=0.1))])
    return (m, [r.rand(1, 1, 8, 8).astype(np.float32)],
            "SRCNN-style super-resolution: cubic Resize x2, then Conv 9x9 → Relu → Conv 1x1 → Relu → Conv 5x5", {})


def self_attention():
    r = rng(12)
    S, D, H = 4, 8, 2
    hd = D // H
    nodes = [
        helper.make_node("MatMul", ["x", "Wqkv"], ["qkv"]),
        helper.make_node("Split", ["qkv", "split"], ["q", "k", "v"], axis=-1),
        helper.make_node("Reshape", ["q", "heads"], ["q4"]),
        helper.make_node("Reshape", ["k", "heads"], ["k4"]),
        helper.make_node("Reshape", ["v", "heads"], ["v4"]),
        helper.make_node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k4"], ["khT"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["qh", "khT"], ["sc"]),
        helper.make_node("Mul", ["sc", "inv_sqrt"], ["scs"]),
        helper.make_node("Softmax", ["scs"], ["att"], axis=-1),
        helper.make_node("MatMul", ["att", "vh"], ["ctx"]),
        helper.make_node("Transpose", ["ctx"], ["ctxT"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ctxT", "back"], ["ctx3"]),
        helper.make_node("MatMul", ["ctx3", "Wo"], ["o"]),
        helper.make_node("Add", ["o", "x"], ["y"]),
    ]
    m = model("self_attention", nodes, [vi("x", [1, S, D])], [vi("y", [1, S, D])],
              [init("Wqkv", w(r, D, 3 * D, scale=0.4)), i64("split", [D, D, D]), i64("heads", [1, S, H, hd]),
               init("inv_sqrt", np.array(1 / np.sqrt(hd), dtype=np.float32)), i64("back", [1, S, D]),
               init("Wo", w(r, D, D, scale=0.4))])
    return (m, [w(r, 1, S, D, scale=1.0)],
            "one multi-head self-attention block: MatMul to QKV, Split, Reshape/Transpose to 2 heads, "
            "QKᵀ, scale, Softmax, ·V, output projection, residual Add", {})


def sibling_convs_concat():
    r = rng(13)
    nodes = [
        helper.make_node("Conv", ["x", "Wa", "Ba"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "Wb", "Bb"], ["b"], kernel_shape=[1, 1]),
        helper.make_node("Concat", ["a", "b"], ["y"], axis=1),
    ]
    m = model("sibling_convs_concat", nodes, [vi("x", [1, 3, 6, 6])], [vi("y", [1, 5, 6, 6])],
              [init("Wa", w(r, 2, 3, 3, 3)), init("Ba", w(r, 2)), init("Wb", w(r, 3, 3, 1, 1)), init("Bb", w(r, 3))])
    return (m, [w(r, 1, 3, 6, 6, scale=1.0)],
            "two Convs (3x3 and 1x1) on the same input joined by Concat on the channel axis", {})


def custom_domain_op():
    r = rng(14)
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("FancyActivation", ["r"], ["y"], domain="com.example"),
    ]
    m = model("custom_domain_op", nodes, [vi("x", [2, 3])], [vi("y", [2, 3])], [],
              extra_opsets=[("com.example", 1)])
    return (m, [w(r, 2, 3, scale=1.0)],
            "uses FancyActivation from domain 'com.example': onnx2c must refuse it with a message naming "
            "the op and the domain (expect_error.txt; no reference output)",
            {"expect_error.txt": "FancyActivation\ncom.example\n"})


def mobilenet_block():
    r = rng(15)
    nodes = [
        helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Clip", ["c1", "lo", "hi"], ["r1"]),
        helper.make_node("Conv", ["r1", "Wd1", "Bd1"], ["d1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=16),
        helper.make_node("Relu", ["d1"], ["rd1"]),
        helper.make_node("Conv", ["rd1", "Wp1", "Bp1"], ["p1"], kernel_shape=[1, 1]),
        helper.make_node("Relu", ["p1"], ["rp1"]),
        helper.make_node("Conv", ["rp1", "Wd2", "Bd2"], ["d2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         strides=[2, 2], group=32),
        helper.make_node("Relu", ["d2"], ["rd2"]),
        helper.make_node("Conv", ["rd2", "Wp2", "Bp2"], ["p2"], kernel_shape=[1, 1]),
        helper.make_node("Relu", ["p2"], ["rp2"]),
        helper.make_node("GlobalAveragePool", ["rp2"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"]),
        helper.make_node("Gemm", ["flat", "Wf", "Bf"], ["y"], transB=1),
    ]
    m = model("mobilenet_block", nodes, [vi("x", [1, 3, 72, 72])], [vi("y", [1, 10])],
              [init("W1", w(r, 16, 3, 3, 3, scale=0.3)), init("B1", w(r, 16, scale=0.1)),
               init("lo", np.array(0, np.float32)), init("hi", np.array(6, np.float32)),
               init("Wd1", w(r, 16, 1, 3, 3, scale=0.3)), init("Bd1", w(r, 16, scale=0.1)),
               init("Wp1", w(r, 32, 16, 1, 1, scale=0.3)), init("Bp1", w(r, 32, scale=0.1)),
               init("Wd2", w(r, 32, 1, 3, 3, scale=0.3)), init("Bd2", w(r, 32, scale=0.1)),
               init("Wp2", w(r, 48, 32, 1, 1, scale=0.2)), init("Bp2", w(r, 48, scale=0.1)),
               init("Wf", w(r, 10, 48, scale=0.3)), init("Bf", w(r, 10, scale=0.1))])
    return (m, [w(r, 1, 3, 72, 72, scale=1.0)],
            "MobileNet-style blocks: Conv (stride 2) → Clip(0, 6) → depthwise 3x3 (36-wide rows) → Relu → "
            "pointwise → Relu → depthwise 3x3 stride 2 → Relu → pointwise → Relu → GlobalAveragePool → Gemm", {})


def local_functions():
    """two calls of a model-local function LinearAct(x, W, b; alpha) = LeakyRelu(Scale(x W + b)),
    whose body calls a second function Scale; alpha is an attribute reference (absent in the
    second call: LeakyRelu's default)"""
    r = rng(16)
    scale = helper.make_function("pkg", "Scale", ["a"], ["b"], [
        helper.make_node("Constant", [], ["k"], value_float=0.5),
        helper.make_node("Mul", ["a", "k"], ["b"])], [helper.make_opsetid("", 13)])
    leaky = helper.make_node("LeakyRelu", ["s"], ["y"])
    leaky.attribute.append(helper.make_attribute_ref("alpha", TensorProto.FLOAT))
    lin = helper.make_function("pkg", "LinearAct", ["x", "w", "bias"], ["y"], [
        helper.make_node("MatMul", ["x", "w"], ["t"]),
        helper.make_node("Add", ["t", "bias"], ["u"]),
        helper.make_node("Scale", ["u"], ["s"], domain="pkg"),
        leaky], [helper.make_opsetid("", 13), helper.make_opsetid("pkg", 1)], attributes=["alpha"])
    nodes = [helper.make_node("LinearAct", ["x", "W1", "B1"], ["h"], domain="pkg", name="l1", alpha=0.2),
             helper.make_node("LinearAct", ["h", "W2", "B2"], ["y"], domain="pkg", name="l2")]
    m = model("local_functions", nodes, [vi("x", [2, 8])], [vi("y", [2, 4])],
              [init("W1", w(r, 8, 16)), init("B1", w(r, 16)), init("W2", w(r, 16, 4)), init("B2", w(r, 4))],
              extra_opsets=[("pkg", 1)])
    m.functions.extend([scale, lin])
    return (m, [w(r, 2, 8, scale=1.0)],
            "ONNX local functions (as the PyTorch exporters write them): two calls of LinearAct, whose body "
            "calls Scale, with an attribute reference; inlined at load", {})


def ms_transformer_ops():
    """the com.microsoft ops onnxruntime's transformer optimizer writes"""
    r = rng(17)
    ms = "com.microsoft"
    nodes = [
        helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma", "beta", "bias"], ["h", "", "", "sum"],
                         domain=ms, epsilon=1e-5),
        helper.make_node("FusedMatMul", ["h", "Wt"], ["p"], domain=ms, alpha=0.5, transB=1),
        helper.make_node("BiasGelu", ["p", "b1"], ["g"], domain=ms),
        helper.make_node("FastGelu", ["g", "b2"], ["f"], domain=ms),
        helper.make_node("QuickGelu", ["f"], ["q"], domain=ms, alpha=1.702),
        helper.make_node("FusedMatMul", ["q", "q"], ["y"], domain=ms, alpha=0.25, transA=1),
    ]
    m = model("ms_transformer_ops", nodes, [vi("x", [2, 5, 8]), vi("skip", [2, 5, 8])], [vi("y", [2, 12, 12]), vi("sum", [2, 5, 8])],
              [init("gamma", w(r, 8)), init("beta", w(r, 8)), init("bias", w(r, 8)), init("Wt", w(r, 12, 8)),
               init("b1", w(r, 12)), init("b2", w(r, 12))], extra_opsets=[("com.microsoft", 1)])
    return (m, [w(r, 2, 5, 8, scale=1.0), w(r, 2, 5, 8, scale=1.0)],
            "com.microsoft SkipLayerNormalization (with its sum output), FusedMatMul (transposes, alpha), BiasGelu, "
            "FastGelu, QuickGelu, as onnxruntime's transformer optimizer writes them", {})


def ms_fused_conv():
    r = rng(18)
    ms = "com.microsoft"
    nodes = [
        helper.make_node("FusedConv", ["x", "W1", "B1"], ["a"], domain=ms, activation="Relu", pads=[1, 1, 1, 1]),
        helper.make_node("FusedConv", ["a", "W2", "B2", "x"], ["b"], domain=ms, activation="LeakyRelu",
                         activation_params=[0.1], pads=[1, 1, 1, 1]),
        helper.make_node("FusedConv", ["b", "W3"], ["y"], domain=ms, activation="Clip", activation_params=[-1.0, 1.0],
                         strides=[2, 2]),
    ]
    m = model("ms_fused_conv", nodes, [vi("x", [1, 4, 10, 10])], [vi("y", [1, 6, 4, 4])],
              [init("W1", w(r, 4, 4, 3, 3)), init("B1", w(r, 4)), init("W2", w(r, 4, 4, 3, 3)), init("B2", w(r, 4)),
               init("W3", w(r, 6, 4, 3, 3))], extra_opsets=[("com.microsoft", 1)])
    return (m, [w(r, 1, 4, 10, 10, scale=1.0)],
            "com.microsoft FusedConv: Relu, LeakyRelu with the residual input Z, Clip with a stride", {})
# ---- quantized models (the formats onnxruntime's quantization tools write)
def qinit(name, arr, dtype):
    return init(name, np.asarray(arr, dtype=dtype))


def qconv_weights(r, name, m, c, k, x_scale, prefix):
    """int8 symmetric per-channel weights and an int32 bias quantized with
    x_scale * w_scale, as quantize_static writes them"""
    wf = w(r, m, c, k, k, scale=0.4)
    ws = (np.abs(wf).reshape(m, -1).max(axis=1) / 127).astype(np.float32)
    wq = np.clip(np.rint(wf / ws[:, None, None, None]), -127, 127).astype(np.int8)
    b = np.rint(w(r, m, scale=0.2) / (x_scale * ws)).astype(np.int32)
    return [qinit(name, wq, np.int8), qinit(prefix + "_ws", ws, np.float32),
            qinit(prefix + "_wz", np.zeros(m), np.int8), qinit(prefix + "_b", b, np.int32)]


def quantized_convnet():
    r = rng(16)
    ms = "com.microsoft"
    sc = {"x": 0.02, "c1": 0.05, "l1": 0.04, "c2": 0.06, "s2": 1 / 255, "m2": 0.03, "c3": 0.05, "a3": 0.07, "cat": 0.07,
          "g": 0.03}
    zp = {"x": 128, "c1": 100, "l1": 30, "c2": 120, "s2": 0, "m2": 20, "c3": 128, "a3": 110, "cat": 110, "g": 60}
    inits = []
    for k in sc:
        inits += [qinit(k + "_s", sc[k], np.float32), qinit(k + "_z", zp[k], np.uint8)]
    inits += qconv_weights(r, "W1", 8, 3, 3, sc["x"], "k1") + qconv_weights(r, "W2", 8, 1, 3, sc["l1"], "k2") + \
        qconv_weights(r, "W3", 8, 8, 1, sc["m2"], "k3")

    def q(name):
        return [name, name + "_s", name + "_z"]

    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_s", "x_z"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "x_s", "x_z", "W1", "k1_ws", "k1_wz", "c1_s", "c1_z", "k1_b"], ["c1"],
                         pads=[1, 1, 1, 1]),
        helper.make_node("QLinearLeakyRelu", q("c1") + ["l1_s", "l1_z"], ["l1"], domain=ms, alpha=0.1),
        helper.make_node("QLinearConv", q("l1") + ["W2", "k2_ws", "k2_wz", "c2_s", "c2_z", "k2_b"], ["c2"],
                         pads=[1, 1, 1, 1], strides=[2, 2], group=8),
        helper.make_node("QLinearSigmoid", q("c2") + ["s2_s", "s2_z"], ["s2"], domain=ms),
        helper.make_node("QLinearMul", q("c2") + q("s2") + ["m2_s", "m2_z"], ["m2"], domain=ms),
        helper.make_node("QLinearConv", q("m2") + ["W3", "k3_ws", "k3_wz", "c3_s", "c3_z", "k3_b"], ["c3"]),
        helper.make_node("QLinearAdd", q("c3") + q("c2") + ["a3_s", "a3_z"], ["a3"], domain=ms),
        helper.make_node("QLinearConcat", ["cat_s", "cat_z"] + q("a3") + q("m2"), ["cat"], domain=ms, axis=1),
        helper.make_node("QLinearGlobalAveragePool", q("cat") + ["g_s", "g_z"], ["g"], domain=ms),
        helper.make_node("DequantizeLinear", q("g"), ["y"]),
    ]
    m = model("quantized_convnet", nodes, [vi("x", [1, 3, 16, 16])],
              [vi("y", [1, 16, 1, 1]), vi("g", [1, 16, 1, 1], TensorProto.UINT8)], inits,
              extra_opsets=[(ms, 1)])
    return (m, [w(r, 1, 3, 16, 16, scale=1.0)],
            "a uint8 convnet in onnxruntime's QOperator format: QuantizeLinear → QLinearConv (int8 per-channel "
            "weights, int32 bias) → QLinearLeakyRelu → depthwise QLinearConv (stride 2) → QLinearSigmoid, QLinearMul "
            "(SiLU) → 1x1 QLinearConv → QLinearAdd (residual) → QLinearConcat → QLinearGlobalAveragePool → "
            "DequantizeLinear; the uint8 pool is an output too (exact)", {})


def quantized_mlp():
    r = rng(17)
    # 7-bit int8 weights (quantize_dynamic's reduce_range): uint8 x int8
    # products stay exact in onnxruntime's kernels on every x86 CPU (without
    # VNNI they add pairs in 16 bits, which full-range weights saturate)
    w1 = w(r, 16, 12, scale=0.4)
    w1s = np.float32(np.abs(w1).max() / 63)
    w1q = np.clip(np.rint(w1 / w1s), -63, 63).astype(np.int8)
    w2 = w(r, 12, 6, scale=0.4)
    w2s = (np.abs(w2).max(axis=0) / 63).astype(np.float32)
    w2q = np.clip(np.rint(w2 / w2s), -63, 63).astype(np.int8)
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        helper.make_node("MatMulInteger", ["xq", "W1", "xz", "W1_z"], ["acc"]),
        helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["xs", "W1_s"], ["s1"]),
        helper.make_node("Mul", ["accf", "s1"], ["h0"]),
        helper.make_node("Add", ["h0", "b1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["h"]),
        helper.make_node("QuantizeLinear", ["h", "h_s", "h_z"], ["hq"]),
        helper.make_node("QLinearMatMul", ["hq", "h_s", "h_z", "W2", "W2_s", "W2_z", "y_s", "y_z"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "y_s", "y_z"], ["y"]),
    ]
    m = model("quantized_mlp", nodes, [vi("x", [4, 16])], [vi("y", [4, 6]), vi("yq", [4, 6], TensorProto.UINT8)],
              [qinit("W1", w1q, np.int8), qinit("W1_z", 0, np.int8), qinit("W1_s", w1s, np.float32),
               init("b1", w(r, 12, scale=0.1)), qinit("h_s", 0.02, np.float32), qinit("h_z", 0, np.uint8),
               qinit("W2", w2q, np.int8), qinit("W2_s", w2s, np.float32), qinit("W2_z", np.zeros(6), np.int8),
               qinit("y_s", 0.015, np.float32), qinit("y_z", 128, np.uint8)])
    return (m, [w(r, 4, 16, scale=1.0)],
            "dynamic quantization as quantize_dynamic (reduce_range: 7-bit weights) writes it (DynamicQuantizeLinear → MatMulInteger → Cast → "
            "Mul by the scales → Add → Relu), then QuantizeLinear → QLinearMatMul (per-column int8 weights) → "
            "DequantizeLinear; the uint8 product is an output too (exact)", {})


def quantized_gemm():
    r = rng(18)
    ms = "com.microsoft"
    w1 = w(r, 10, 24, scale=0.4)                       # N x K: transB
    w1s = (np.abs(w1).max(axis=1) / 127).astype(np.float32)
    w1q = np.clip(np.rint(w1 / w1s[:, None]), -127, 127).astype(np.int8)
    b1 = np.rint(w(r, 10, scale=0.2) / (0.03 * w1s)).astype(np.int32)
    w2 = w(r, 10, 5, scale=0.4)
    w2s = np.float32(np.abs(w2).max() / 127)
    w2q = np.clip(np.rint(w2 / w2s), -127, 127).astype(np.int8)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_s", "x_z"], ["xq"]),
        helper.make_node("QGemm", ["xq", "x_s", "x_z", "W1", "W1_s", "W1_z", "b1", "h_s", "h_z"], ["h"], domain=ms,
                         transB=1),
        helper.make_node("QGemm", ["h", "h_s", "h_z", "W2", "W2_s", "W2_z", "b2"], ["y"], domain=ms, alpha=0.5),
    ]
    m = model("quantized_gemm", nodes, [vi("x", [3, 24])], [vi("y", [3, 5]), vi("h", [3, 10], TensorProto.UINT8)],
              [qinit("x_s", 0.03, np.float32), qinit("x_z", 120, np.uint8), qinit("W1", w1q, np.int8),
               qinit("W1_s", w1s, np.float32), qinit("W1_z", np.zeros(10), np.int8), qinit("b1", b1, np.int32),
               qinit("h_s", 0.05, np.float32), qinit("h_z", 100, np.uint8), qinit("W2", w2q, np.int8),
               qinit("W2_s", w2s, np.float32), qinit("W2_z", 0, np.int8), qinit("b2", r.randint(-500, 500, size=(1, 5)), np.int32)],
              extra_opsets=[(ms, 1)])
    return (m, [w(r, 3, 24, scale=1.0)],
            "com.microsoft QGemm as quantize_static writes Gemm: transB with per-row int8 weights and an int32 bias, "
            "requantized to uint8 (an output too, exact), then alpha 0.5 with a float output and a (1, N) bias", {})

def quantized_lstm():
    r = rng(19)
    ms = "com.microsoft"
    T, NI, H = 6, 10, 16
    # float weights in the ONNX LSTM layout, quantized as quantize_dynamic
    # does with reduce_range (symmetric 7-bit int8, transposed to [D, input,
    # 4H]); W per direction, R per column. The 7 bits keep the reference
    # exact on every CPU: onnxruntime's uint8 x int8 kernels on x86 without
    # VNNI add pairs of products in 16 bits, which full-range weights (pairs
    # up to 2 x 255 x 127) saturate, so its outputs would depend on the machine.
    wf, rf = w(r, 2, 4 * H, NI, scale=0.5), w(r, 2, 4 * H, H, scale=0.4)
    ws = (np.abs(wf).max(axis=(1, 2)) / 63).astype(np.float32)
    rs = (np.abs(rf).max(axis=2) / 63).astype(np.float32)
    wq = np.clip(np.rint(wf / ws[:, None, None]), -63, 63).astype(np.int8).transpose(0, 2, 1)
    rq = np.clip(np.rint(rf / rs[:, :, None]), -63, 63).astype(np.int8).transpose(0, 2, 1)
    n = helper.make_node("DynamicQuantizeLSTM", ["x", "W", "R", "B", "", "", "", "", "W_s", "W_z", "R_s", "R_z"],
                         ["y", "y_h", "y_c"], domain=ms, direction="bidirectional", hidden_size=H)
    m = model("quantized_lstm", [n], [vi("x", [T, 1, NI])],
              [vi("y", [T, 2, 1, H]), vi("y_h", [2, 1, H]), vi("y_c", [2, 1, H])],
              [qinit("W", wq, np.int8), qinit("R", rq, np.int8), init("B", w(r, 2, 8 * H, scale=0.2)),
               qinit("W_s", ws, np.float32), qinit("W_z", np.zeros(2), np.int8), qinit("R_s", rs, np.float32),
               qinit("R_z", np.zeros((2, 4 * H)), np.int8)], extra_opsets=[(ms, 1)])
    return (m, [w(r, T, 1, NI, scale=1.0)],
            "com.microsoft DynamicQuantizeLSTM as quantize_dynamic (reduce_range) writes LSTM: bidirectional, 7-bit "
            "int8 weights transposed to [D, input, 4H], W per direction and R per column; X and each step's h quantized to "
            "uint8 at run time, integer products (activations differ from onnxruntime's by rounding only)", {})


# ---- control flow (If, Loop, Scan: compiler/ops/control.c)

def if_nested_outer():
    r = rng(16)
    # then: an inner If on another run-time condition; both read outer-scope tensors (x, W, b)
    inner_then = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["it"])], "inner_then", [],
                                   [vi("it", [2, 3])])
    inner_else = helper.make_graph([helper.make_node("Add", ["x3", "b"], ["ie"])], "inner_else", [],
                                   [vi("ie", [2, 3])])
    then_g = helper.make_graph([
        helper.make_node("ReduceMax", ["x"], ["mx"], keepdims=0),
        helper.make_node("Greater", ["mx", "half"], ["c2"]),
        helper.make_node("If", ["c2"], ["ti"], then_branch=inner_then, else_branch=inner_else),
        helper.make_node("Relu", ["ti"], ["t"]),
    ], "then", [], [vi("t", [2, 3])])
    else_g = helper.make_graph([helper.make_node("Sigmoid", ["x3"], ["e"])], "else", [], [vi("e", [2, 3])])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"]),
        helper.make_node("Slice", ["x", "st", "en", "ax"], ["x3"]),
        helper.make_node("If", ["c"], ["y0"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Mul", ["y0", "two"], ["y"]),
    ]
    m = model("if_nested_outer", nodes, [vi("x", [2, 4])], [vi("y", [2, 3])],
              [init("W", w(r, 4, 3)), init("b", w(r, 3)), init("zero", np.array(0, np.float32)),
               init("half", np.array(0.5, np.float32)), init("two", np.array(2, np.float32)),
               i64("st", [0]), i64("en", [3]), i64("ax", [1])])
    return (m, [w(r, 2, 4, scale=1.0)],
            "If on a run-time condition whose then branch holds another run-time If; the branches read "
            "outer-scope tensors (input, weights, a value computed before the If)", {})


def loop_if_scan():
    r = rng(17)
    # body: h' = iter even ? tanh(h W) : h + b; cond' = iter < 10; scan output h'
    then_g = helper.make_graph([helper.make_node("MatMul", ["h_in", "W"], ["hw"]),
                                helper.make_node("Tanh", ["hw"], ["ht"])], "even", [], [vi("ht", [2, 3])])
    else_g = helper.make_graph([helper.make_node("Add", ["h_in", "b"], ["hb"])], "odd", [], [vi("hb", [2, 3])])
    body = helper.make_graph([
        helper.make_node("Mod", ["i", "two"], ["m"]),
        helper.make_node("Equal", ["m", "zero"], ["even"]),
        helper.make_node("If", ["even"], ["h_out"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Less", ["i", "ten"], ["c_out"]),
        helper.make_node("Identity", ["h_out"], ["scan"]),
    ], "body", [vi("i", [], TensorProto.INT64), vi("c_in", [], TensorProto.BOOL), vi("h_in", [2, 3])],
        [vi("c_out", [], TensorProto.BOOL), vi("h_out", [2, 3]), vi("scan", [2, 3])],
        [i64("two", 2), i64("zero", 0), i64("ten", 10)])
    nodes = [helper.make_node("Loop", ["trip", "cond", "h0"], ["h", "hs"], body=body)]
    m = model("loop_if_scan", nodes, [vi("h0", [2, 3]), vi("cond", [], TensorProto.BOOL)],
              [vi("h", [2, 3]), vi("hs", [5, 2, 3])],
              [init("W", w(r, 3, 3)), init("b", w(r, 3)), i64("trip", 5)])
    return (m, [w(r, 2, 3, scale=1.0), np.array(True)],
            "Loop (trip count 5, a run-time condition) carrying h, with an If inside the body on the "
            "iteration number (Mod, Equal), outer-scope weights, and a scan output of every h", {})


def loop_runtime_trip():
    # Fibonacci-like swap (a, b) -> (b, a + b): each output is another state's bytes; a nested loop
    inner = helper.make_graph([
        helper.make_node("Identity", ["c2"], ["c2o"]),
        helper.make_node("Mul", ["v", "k"], ["vo"]),
    ], "inner", [vi("j", [], TensorProto.INT64), vi("c2", [], TensorProto.BOOL), vi("v", [3])],
        [vi("c2o", [], TensorProto.BOOL), vi("vo", [3])])
    body = helper.make_graph([
        helper.make_node("Identity", ["c"], ["co"]),
        helper.make_node("Add", ["a", "b"], ["ab"]),
        helper.make_node("Loop", ["two", "", "ab"], ["abk"], body=inner),
        helper.make_node("Identity", ["b"], ["bo"]),
    ], "body", [vi("i", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL), vi("a", [3]), vi("b", [3])],
        [vi("co", [], TensorProto.BOOL), vi("bo", [3]), vi("abk", [3])])
    nodes = [helper.make_node("Loop", ["n", "", "a0", "b0"], ["a", "b"], body=body)]
    m = model("loop_runtime_trip", nodes, [vi("n", [], TensorProto.INT64), vi("a0", [3]), vi("b0", [3])],
              [vi("a", [3]), vi("b", [3])],
              [init("k", np.array([0.5, 1.0, -1.0], np.float32)), i64("two", 2)])
    return (m, [np.array(6, np.int64), np.array([1, 2, 3], np.float32), np.array([1, 0.5, -2], np.float32)],
            "Loop with a run-time trip count (input n) carrying two values that swap (a, b) -> (b, "
            "(a + b) k^2), the product by a nested Loop of constant trip count", {})


def scan_axes_reverse():
    r = rng(18)
    body = helper.make_graph([
        helper.make_node("MatMul", ["xt", "W"], ["xw"]),
        helper.make_node("Add", ["s_in", "xw"], ["s1"]),
        helper.make_node("Mul", ["s1", "ut"], ["s_out"]),
        helper.make_node("Tanh", ["s_out"], ["o1"]),
        helper.make_node("Add", ["s_out", "ut"], ["o2"]),
    ], "body", [vi("s_in", [2, 3]), vi("xt", [2, 4]), vi("ut", [2, 3])],
        [vi("s_out", [2, 3]), vi("o1", [2, 3]), vi("o2", [2, 3])])
    nodes = [helper.make_node("Scan", ["s0", "x", "u"], ["s", "y1", "y2"], body=body, num_scan_inputs=2,
                              scan_input_axes=[1, 0], scan_input_directions=[1, 0],
                              scan_output_axes=[0, -1], scan_output_directions=[0, 1])]
    m = model("scan_axes_reverse", nodes, [vi("s0", [2, 3]), vi("x", [2, 5, 4]), vi("u", [5, 2, 3])],
              [vi("s", [2, 3]), vi("y1", [5, 2, 3]), vi("y2", [2, 3, 5])], [init("W", w(r, 4, 3))], opset=16)
    return (m, [w(r, 2, 3, scale=1.0), w(r, 2, 5, 4, scale=1.0), w(r, 5, 2, 3, scale=1.0)],
            "Scan with two scan inputs (one along axis 1 read backwards), a state, outer-scope weights, "
            "and two scan outputs (one along the last axis written backwards)", {})


def loop_unrolled():
    r = rng(19)
    # the body slices row i of x (a shape that needs the iteration number: the loop is unrolled)
    then_g = helper.make_graph([helper.make_node("Mul", ["row", "two_f"], ["m2"])], "even", [], [vi("m2", [1, 3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["row"], ["ng"])], "odd", [], [vi("ng", [1, 3])])
    body = helper.make_graph([
        helper.make_node("Identity", ["c"], ["co"]),
        helper.make_node("Add", ["i", "one"], ["e"]),
        helper.make_node("Unsqueeze", ["i", "zero1"], ["s0"]),
        helper.make_node("Unsqueeze", ["e", "zero1"], ["e0"]),
        helper.make_node("Slice", ["x", "s0", "e0"], ["row"]),
        helper.make_node("Mod", ["i", "two"], ["md"]),
        helper.make_node("Equal", ["md", "zero"], ["ev"]),
        helper.make_node("If", ["ev"], ["v"], then_branch=then_g, else_branch=else_g),
        helper.make_node("MatMul", ["v", "W"], ["vw"]),
        helper.make_node("Add", ["a", "vw"], ["ao"]),
        helper.make_node("Identity", ["ao"], ["so"]),
    ], "body", [vi("i", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL), vi("a", [1, 2])],
        [vi("co", [], TensorProto.BOOL), vi("ao", [1, 2]), vi("so", [1, 2])],
        [i64("one", 1), i64("two", 2), i64("zero", 0), i64("zero1", [0]), init("two_f", np.array(2, np.float32))])
    nodes = [helper.make_node("Loop", ["M", "", "a0"], ["a", "ss"], body=body)]
    m = model("loop_unrolled", nodes, [vi("a0", [1, 2]), vi("x", [4, 3])], [vi("a", [1, 2]), vi("ss", [4, 1, 2])],
              [init("W", w(r, 3, 2)), i64("M", 4)])
    return (m, [w(r, 1, 2, scale=1.0), w(r, 4, 3, scale=1.0)],
            "Loop of 4 iterations whose body slices row i of an input (a shape that needs the iteration number: "
            "the loop is unrolled, one inferred copy of the body per iteration) and branches on i's parity", {})


# ---- sequences (compiler/ops/sequence.c): resolved at compile time into lists of tensors
def sequence_ops():
    r = rng(20)
    S = TensorProto.INT64
    mapbody = helper.make_graph([helper.make_node("Mul", ["e", "y"], ["m"])], "map", [vi("e", [4])], [vi("m", [4])])
    loopbody = helper.make_graph([
        helper.make_node("Identity", ["c"], ["co"]),
        helper.make_node("Gather", ["y2", "i"], ["row"], axis=0),
        helper.make_node("Relu", ["row"], ["rr"]),
        helper.make_node("SequenceInsert", ["sq", "rr", "zero"], ["so"]),
    ], "body", [vi("i", [], S), vi("c", [], TensorProto.BOOL),
                helper.make_tensor_sequence_value_info("sq", F, None)],
        [vi("co", [], TensorProto.BOOL), helper.make_tensor_sequence_value_info("so", F, None)],
        [i64("zero", 0)])
    then_g = helper.make_graph([helper.make_node("SequenceConstruct", ["y", "w1"], ["ts"])], "then", [],
                               [helper.make_tensor_sequence_value_info("ts", F, None)])
    else_g = helper.make_graph([helper.make_node("SequenceConstruct", ["w1", "y"], ["es"])], "else", [],
                               [helper.make_tensor_sequence_value_info("es", F, None)])
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["s"], axis=0, keepdims=0),
        helper.make_node("SequenceMap", ["s"], ["t"], body=mapbody),
        helper.make_node("ReduceSum", ["y2", "ax0"], ["c4"], keepdims=0),
        helper.make_node("SequenceInsert", ["t", "c4", "one"], ["s2"]),
        helper.make_node("SequenceErase", ["s2", "zero"], ["s3"]),
        helper.make_node("SequenceLength", ["s3"], ["n"]),
        helper.make_node("Cast", ["n"], ["nf"], to=F),
        helper.make_node("SequenceAt", ["s3", "minus1"], ["last"]),
        helper.make_node("Add", ["last", "nf"], ["y1"]),
        helper.make_node("ConcatFromSequence", ["s3"], ["y0"], axis=0, new_axis=1),
        helper.make_node("SequenceEmpty", [], ["e0"], dtype=F),
        helper.make_node("Loop", ["three", "", "e0"], ["rows"], body=loopbody),
        helper.make_node("ConcatFromSequence", ["rows"], ["y2c"], axis=0),
        helper.make_node("If", ["flag"], ["pair"], then_branch=then_g, else_branch=else_g),
        helper.make_node("ConcatFromSequence", ["pair"], ["y3"], axis=-1, new_axis=1),
    ]
    m = model("sequence_ops", nodes,
              [vi("x", [3, 4]), vi("y", [4]), vi("y2", [3, 4]), vi("flag", [], TensorProto.BOOL)],
              [vi("y0", [3, 4]), vi("y1", [4]), vi("y2c", [12]), vi("y3", [4, 2])],
              [i64("ax0", [0]), i64("one", 1), i64("zero", 0), i64("minus1", -1), i64("three", 3),
               init("w1", w(r, 4))], opset=17)
    return (m, [w(r, 3, 4, scale=1.0), w(r, 4, scale=1.0), w(r, 3, 4, scale=1.0), np.array(False)],
            "sequences inside the graph: SplitToSequence, SequenceMap, SequenceInsert/Erase/At/Length, "
            "ConcatFromSequence, a Loop carrying a sequence (unrolled) and an If with a run-time condition "
            "whose branches make sequences (resolved at compile time into lists of tensors)", {})


EXAMPLES = [linear, two_heads, dynamic_batch, conv_bn_relu, small_convnet, flatten_shape_ops, clamp_min_max,
            layernorm_decomposed, gemm_chain, asinh, srcnn_cubic, self_attention, sibling_convs_concat,
            custom_domain_op, elementwise_chain, mobilenet_block, local_functions,
            ms_transformer_ops, ms_fused_conv, quantized_convnet, quantized_mlp, quantized_gemm, quantized_lstm,
            if_nested_outer, loop_if_scan, loop_runtime_trip, scan_axes_reverse, loop_unrolled, sequence_ops]


# ---------------------------------------------------------------- writing
def reference(m, inputs):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, dict(zip(names, inputs)))


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


def build(fn):
    name = fn.__name__
    m, inputs, desc, extra = fn()
    expect_error = "expect_error.txt" in extra
    if not expect_error:
        onnx.checker.check_model(m, full_check=True)
    d = os.path.join(HERE, name)
    ds = os.path.join(d, "test_data_set_0")
    os.makedirs(ds, exist_ok=True)
    for old in os.listdir(ds):
        os.remove(os.path.join(ds, old))
    write_bytes(os.path.join(d, "model.onnx"), m.SerializeToString(deterministic=True))
    gin = [i for i in m.graph.input if i.name not in {t.name for t in m.graph.initializer}]
    assert len(gin) == len(inputs)
    for k, (v, a) in enumerate(zip(gin, inputs)):
        write_bytes(os.path.join(ds, "input_%d.pb" % k),
                    numpy_helper.from_array(a, v.name).SerializeToString(deterministic=True))
    if not expect_error:
        outs = reference(m, inputs)
        for k, (v, a) in enumerate(zip(m.graph.output, outs)):
            write_bytes(os.path.join(ds, "output_%d.pb" % k),
                        numpy_helper.from_array(np.asarray(a), v.name).SerializeToString(deterministic=True))
    for fname, text in extra.items():
        write_bytes(os.path.join(d, fname), text.encode())
    size = os.path.getsize(os.path.join(d, "model.onnx"))
    return name, desc, size


README_HEAD = """# Example models

Small models made by `make_examples.py` (onnx.helper, fixed-seed numpy
weights; reference outputs from onnxruntime with graph optimizations off and
one thread). Each folder holds `model.onnx` and `test_data_set_0/`
(`input_K.pb`, `output_K.pb`, the ONNX backend-test layout).
`tests/run_models.py` compiles each to C and CUDA and checks the results.
Regenerate with `python examples/make_examples.py` (the output is
byte-identical run to run).

| model | what it covers |
|---|---|
"""


README_TAIL = """
Also here (not made by the script):

- `demo/`: `make demo` compiles one of these models (default `small_convnet`)
  to C, builds it with `demo.c` and prints its outputs next to onnxruntime's.
- `firmware/main.c`: what integrating a compiled model into a heap-free
  firmware build looks like (static arena, const weights).
"""


def main():
    wanted = sys.argv[1:]
    fns = [f for f in EXAMPLES if not wanted or f.__name__ in wanted]
    if wanted and len(fns) != len(wanted):
        sys.exit("unknown example in %s; known: %s" % (wanted, " ".join(f.__name__ for f in EXAMPLES)))
    rows = {}
    for fn in fns:
        name, desc, size = build(fn)
        rows[name] = desc
        print("%-22s %6d bytes  %s" % (name, size, desc))
    if not wanted:
        with open(os.path.join(HERE, "README.md"), "w", encoding="utf-8") as f:
            f.write(README_HEAD)
            for fn in EXAMPLES:
                f.write("| `%s` | %s |\n" % (fn.__name__, rows[fn.__name__]))
            f.write(README_TAIL)


if __name__ == "__main__":
    main()
