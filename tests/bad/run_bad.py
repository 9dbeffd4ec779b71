"""Bad-input tests of the onnx2c command line.

    python tests/bad/run_bad.py [--compiler build/onnx2c] [-k SUBSTRING] [-v]

Every case builds a broken model (or command line) in a temporary folder,
runs the compiler on it and checks that it fails the way a user needs:

  * exit status exactly 1 (not 0, not a crash/signal, not a sanitizer exit),
  * finished within the time limit (no hang),
  * exactly one message line on stderr, "onnx2c: ...", that contains the
    expected words (file, node, op, remedy, as the case calls for),
  * nothing left behind: no OUT.c/OUT.h and no temporary files.

Prints one line per case and finally "N passed, N failed"; exits 1 if any
case failed. Needs onnx and numpy (tests/requirements.txt).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT_S = 60
OPSET = 13


# ---- model builders ----------------------------------------------------

def vi(name, dtype=TensorProto.FLOAT, shape=(2, 3)):
    return helper.make_tensor_value_info(name, dtype, shape)


def model(nodes, inputs, outputs, inits=(), ir_version=8, name="g"):
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs), initializer=list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = ir_version
    return m


def save(m, d, fname="model.onnx"):
    path = os.path.join(d, fname)
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path


def relu_model():
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x")], [vi("y")])


def add_w_model(w_tensor):
    """y = x + w with w an initializer (2x3 float)."""
    return model([helper.make_node("Add", ["x", "w"], ["y"], name="add_w")], [vi("x")], [vi("y")], [w_tensor])


def external_w(location, length=None):
    t = TensorProto()
    t.name = "w"
    t.data_type = TensorProto.FLOAT
    t.dims.extend([2, 3])
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", location
    if length is not None:
        e = t.external_data.add()
        e.key, e.value = "length", str(length)
    return t


# ---- the cases ---------------------------------------------------------
# Each case: (name, function(dir) -> (args, words[, outputs])). args are
# the compiler's arguments; words must all appear in the message; outputs
# are paths that must not exist afterwards (default: dir/out.c, dir/out.h).

CASES = []


def case(name):
    def reg(fn):
        CASES.append((name, fn))
        return fn
    return reg


def out(d):
    return os.path.join(d, "out.c")


@case("nonexistent model file")
def _(d):
    p = os.path.join(d, "no_such_model.onnx")
    return [p, "-o", out(d)], ["no_such_model.onnx", "cannot open"]


@case("model path is a directory")
def _(d):
    p = os.path.join(d, "a_folder.onnx")
    os.mkdir(p)
    return [p, "-o", out(d)], ["a_folder.onnx", "directory"]


@case("empty file")
def _(d):
    p = os.path.join(d, "empty.onnx")
    open(p, "wb").close()
    return [p, "-o", out(d)], ["empty.onnx", "empty"]


@case("random bytes")
def _(d):
    rng = np.random.default_rng(1234)
    data = bytes(rng.integers(0, 256, 4096, dtype=np.uint8))
    # make sure it does not start like a valid message by chance: a bad tag
    data = b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff" + data
    p = os.path.join(d, "noise.onnx")
    with open(p, "wb") as f:
        f.write(data)
    return [p, "-o", out(d)], ["noise.onnx", "ONNX"]


@case("truncated model")
def _(d):
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w")
    data = add_w_model(w).SerializeToString()
    p = os.path.join(d, "cut.onnx")
    with open(p, "wb") as f:
        f.write(data[: len(data) * 2 // 3])
    return [p, "-o", out(d)], ["cut.onnx", "truncated"]


@case("a TensorProto, not a model")
def _(d):
    t = numpy_helper.from_array(np.arange(64, dtype=np.float32), "weights")
    p = os.path.join(d, "tensor.onnx")
    with open(p, "wb") as f:
        f.write(t.SerializeToString())
    return [p, "-o", out(d)], ["tensor.onnx", "ONNX model"]


@case("model without graph")
def _(d):
    m = onnx.ModelProto()
    m.ir_version = 8
    m.opset_import.add().version = OPSET
    return [save(m, d, "nograph.onnx"), "-o", out(d)], ["nograph.onnx", "no graph"]


@case("IR version 2")
def _(d):
    m = relu_model()
    m.ir_version = 2
    return [save(m, d, "old.onnx"), "-o", out(d)], ["old.onnx", "IR version 2", "3"]


@case("two unsupported ops, one in a custom domain")
def _(d):
    nodes = [helper.make_node("FooBarOp", ["x"], ["t"], name="first_bad"),
             helper.make_node("MyCustomOp", ["t"], ["y"], name="second_bad", domain="com.example")]
    m = model(nodes, [vi("x")], [vi("y")])
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    return [save(m, d), "-o", out(d)], ["model.onnx", "FooBarOp", "first_bad", "MyCustomOp", "second_bad",
                                        "com.example", "unsupported"]


@case("float8 input")
def _(d):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
              [vi("x", TensorProto.FLOAT8E4M3FN)], [vi("y", TensorProto.FLOAT8E4M3FN)])
    return [save(m, d), "-o", out(d)], ["model.onnx", "'x'", "float8e4m3fn"]


@case("complex input")
def _(d):
    m = model([helper.make_node("Identity", ["s"], ["y"], name="ident")],
              [vi("s", TensorProto.COMPLEX64, (4,))], [vi("y", TensorProto.COMPLEX64, (4,))])
    return [save(m, d), "-o", out(d)], ["model.onnx", "'s'", "complex64"]


@case("string input to an op that computes on numbers")
def _(d):
    m = model([helper.make_node("Concat", ["s", "s"], ["y"], name="cat", axis=0)],
              [vi("s", TensorProto.STRING, (4,))], [vi("y", TensorProto.STRING, (8,))])
    return [save(m, d), "-o", out(d)], ["model.onnx", "'cat'", "Concat", "'s'", "string"]


@case("unsupported regex syntax")
def _(d):
    m = model([helper.make_node("RegexFullMatch", ["s"], ["y"], name="re", pattern="(?i)abc")],
              [vi("s", TensorProto.STRING, (4,))], [vi("y", TensorProto.BOOL, (4,))])
    m.opset_import[0].version = 20
    return [save(m, d), "-o", out(d)], ["model.onnx", "'re'", "(?i)abc", "not supported"]


@case("training-mode Dropout without a seed")
def _(d):
    r = numpy_helper.from_array(np.array(0.5, np.float32), "r")
    t = numpy_helper.from_array(np.array(True), "t")
    m = model([helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop")], [vi("x")], [vi("y")], inits=[r, t])
    return [save(m, d), "-o", out(d)], ["model.onnx", "'drop'", "no seed", "mask is random"]


@case("a default-domain opset newer than onnx2c knows")
def _(d):
    m = relu_model()
    m.opset_import[0].version = 999
    return [save(m, d), "-o", out(d)], ["model.onnx", "opset 999", "'ai.onnx'", "--allow-newer-opsets"]


@case("an ai.onnx.ml opset newer than onnx2c knows")
def _(d):
    m = relu_model()
    m.opset_import.append(helper.make_opsetid("ai.onnx.ml", 6))
    return [save(m, d), "-o", out(d)], ["model.onnx", "opset 6", "'ai.onnx.ml'", "up to opset 5"]


@case("an op version onnx2c does not implement (Add-6's legacy broadcast)")
def _(d):
    m = model([helper.make_node("Add", ["x", "b"], ["y"], name="add6", broadcast=1, axis=0)],
              [vi("x"), vi("b", shape=(2,))], [vi("y")])
    m.opset_import[0].version = 6
    m.ir_version = 3
    return [save(m, d), "-o", out(d)], ["model.onnx", "Add-6", "'add6'", "opset 6 of domain 'ai.onnx'",
                                        "implements Add versions 7, 13, 14"]


@case("an input whose element count overflows")
def _(d):
    m = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", shape=(2 ** 40, 2 ** 40))], [vi("y", shape=None)])
    return [save(m, d), "-o", out(d)], ["model.onnx", "'x'", "1099511627776x1099511627776", "too large"]


@case("an intermediate whose element count overflows")
def _(d):
    a = numpy_helper.from_array(np.array([2 ** 31, 2 ** 31, 2 ** 31], np.int64), "shape")
    m = model([helper.make_node("Expand", ["x", "shape"], ["y"], name="ex")], [vi("x", shape=(1,))],
              [vi("y", shape=None)], inits=[a])
    return [save(m, d), "-o", out(d)], ["model.onnx", "'ex'", "too large"]


@case("a tensor larger than a 32-bit target can address, for --target cortex-m")
def _(d):
    m = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", shape=(1, 600000000))], [vi("y", shape=None)])
    return [save(m, d), "--target", "cortex-m", "-o", out(d)], ["model.onnx", "2400000000 bytes", "32-bit Cortex-M"]


@case("unbound symbolic dimension")
def _(d):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
              [vi("x", shape=("batch_size", 3))], [vi("y", shape=("batch_size", 3))])
    return [save(m, d), "-o", out(d)], ["model.onnx", "'x'", "batch_size", "--dim batch_size="]


@case("--shape names an unknown input")
def _(d):
    return [save(relu_model(), d), "-o", out(d), "--shape", "nosuch:2x3"], ["--shape", "nosuch"]


@case("--shape without dimensions")
def _(d):
    return [save(relu_model(), d), "-o", out(d), "--shape", "x"], ["--shape x", "INPUT:D0xD1"]


@case("--shape with a non-number")
def _(d):
    return [save(relu_model(), d), "-o", out(d), "--shape", "x:2xabc"], ["--shape x:2xabc", "abc"]


@case("--shape with a negative dimension")
def _(d):
    return [save(relu_model(), d), "-o", out(d), "--shape", "x:2x-3"], ["--shape x:2x-3", "-3"]


@case("--shape with an empty dimension")
def _(d):
    return [save(relu_model(), d), "-o", out(d), "--shape", "x:2xx3"], ["--shape x:2xx3"]


@case("--dim without a value")
def _(d):
    return [save(relu_model(), d), "-o", out(d), "--dim", "batch"], ["--dim batch", "SYMBOL=N"]


@case("--dim with a non-number")
def _(d):
    return [save(relu_model(), d), "-o", out(d), "--dim", "batch=abc"], ["--dim batch=abc", "abc"]


@case("--dim without a name")
def _(d):
    return [save(relu_model(), d), "-o", out(d), "--dim", "=3"], ["--dim =3", "SYMBOL=N"]


@case("--dim naming no symbol of the model")
def _(d):
    return [save(relu_model(), d), "-o", out(d), "--dim", "nosym=3"], ["--dim nosym", "nosym"]


@case("Add of 2x3 and 4x5")
def _(d):
    m = model([helper.make_node("Add", ["a", "b"], ["y"], name="add_ab")],
              [vi("a", shape=(2, 3)), vi("b", shape=(4, 5))], [vi("y", shape=None)])
    return [save(m, d), "-o", out(d)], ["model.onnx", "add_ab", "Add", "2x3", "4x5"]


@case("MatMul with mismatched K")
def _(d):
    m = model([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm_k")],
              [vi("a", shape=(2, 3)), vi("b", shape=(4, 5))], [vi("y", shape=None)])
    return [save(m, d), "-o", out(d)], ["model.onnx", "mm_k", "MatMul", "2x3", "4x5"]


@case("Reshape to an impossible shape")
def _(d):
    shape = numpy_helper.from_array(np.array([5, -1], dtype=np.int64), "target")
    m = model([helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape_bad")],
              [vi("x", shape=(2, 3))], [vi("y", shape=None)], [shape])
    return [save(m, d), "-o", out(d)], ["model.onnx", "reshape_bad", "Reshape", "2x3"]


@case("cycle")
def _(d):
    nodes = [helper.make_node("Add", ["x", "b"], ["a"], name="ping"),
             helper.make_node("Relu", ["a"], ["b"], name="pong"),
             helper.make_node("Abs", ["a"], ["y"], name="out_node")]
    m = model(nodes, [vi("x")], [vi("y")])
    return [save(m, d), "-o", out(d)], ["model.onnx", "cycle", "ping"]


@case("dangling tensor")
def _(d):
    m = model([helper.make_node("Add", ["x", "ghost"], ["y"], name="adder")], [vi("x")], [vi("y")])
    return [save(m, d), "-o", out(d)], ["model.onnx", "ghost", "adder", "dangling"]


@case("graph output produced by no node")
def _(d):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x")], [vi("y"), vi("orphan")])
    return [save(m, d), "-o", out(d)], ["model.onnx", "orphan"]


@case("node output produced twice")
def _(d):
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="maker_one"),
             helper.make_node("Neg", ["x"], ["y"], name="maker_two")]
    m = model(nodes, [vi("x")], [vi("y")])
    return [save(m, d), "-o", out(d)], ["model.onnx", "'y'", "maker_two", "twice"]


@case("external data ../x.bin")
def _(d):
    sub = os.path.join(d, "m")
    os.mkdir(sub)
    with open(os.path.join(d, "x.bin"), "wb") as f:
        f.write(np.zeros(6, np.float32).tobytes())
    return [save(add_w_model(external_w("../x.bin")), sub), "-o", out(d)], ["model.onnx", "'w'", "../x.bin", "outside"]


@case("external data absolute path")
def _(d):
    p = os.path.join(d, "abs.bin")
    with open(p, "wb") as f:
        f.write(np.zeros(6, np.float32).tobytes())
    return [save(add_w_model(external_w(p)), d), "-o", out(d)], ["model.onnx", "'w'", "abs.bin", "outside"]


@case("external data file missing")
def _(d):
    return [save(add_w_model(external_w("missing.bin")), d), "-o", out(d)], ["model.onnx", "missing.bin"]


@case("external data shorter than the tensor")
def _(d):
    with open(os.path.join(d, "short.bin"), "wb") as f:
        f.write(np.zeros(5, np.float32).tobytes())
    return [save(add_w_model(external_w("short.bin")), d), "-o", out(d)], ["model.onnx", "'w'", "short.bin", "24"]


@case("external data length past the end of the file")
def _(d):
    with open(os.path.join(d, "short.bin"), "wb") as f:
        f.write(np.zeros(5, np.float32).tobytes())
    # the message must say how much the file really holds (20 bytes)
    return ([save(add_w_model(external_w("short.bin", length=24)), d), "-o", out(d)],
            ["model.onnx", "'w'", "short.bin", "20"])


@case("raw_data of the wrong length")
def _(d):
    w = numpy_helper.from_array(np.zeros((2, 3), np.float32), "w")
    w.raw_data = w.raw_data[:-4]
    return [save(add_w_model(w), d), "-o", out(d)], ["model.onnx", "'w'", "20", "24"]


@case("initializer with a huge shape and no data")
def _(d):
    # a few bytes of model declaring a 2^30 x 2^30 float tensor: refused for
    # its missing data, not by trying to allocate 4 EiB
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 30, 1 << 30])   # (make_tensor checks sizes)
    w.raw_data = b""
    m = model([helper.make_node("Add", ["x", "w"], ["y"], name="add_w")], [vi("x")], [vi("y", shape=None)], [w])
    return [save(m, d), "-o", out(d)], ["model.onnx", "'w'"]


@case("typed data of the wrong length")
def _(d):
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2, 3], float_data=[1.0, 2.0, 3.0])
    return [save(add_w_model(w), d), "-o", out(d)], ["model.onnx", "'w'"]


@case("unwritable output path (missing folder)")
def _(d):
    o = os.path.join(d, "no_such_folder", "out.c")
    return [save(relu_model(), d), "-o", o], ["no_such_folder/out.c", "cannot write"], [o, o[:-2] + ".h"]


@case("unwritable output path (a file as folder)")
def _(d):
    f = os.path.join(d, "plainfile")
    open(f, "w").close()
    o = os.path.join(f, "out.c")
    return [save(relu_model(), d), "-o", o], ["plainfile/out.c", "cannot write"]


@case("output path is a folder")
def _(d):
    o = os.path.join(d, "out.c")
    os.mkdir(o)
    return [save(relu_model(), d), "-o", o], ["out.c"], [os.path.join(d, "out.h")]


@case("wrong output extension")
def _(d):
    o = os.path.join(d, "out.txt")
    return [save(relu_model(), d), "-o", o], ["out.txt", ".c"], [o, os.path.join(d, "out.h")]


# quantized ops: granularities and types onnx2c does not support are refused
def qmodel(nodes, inputs, outputs, inits=(), opset=21, ms=False):
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), initializer=list(inits))
    ops = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("com.microsoft", 1)] if ms else [])
    m = helper.make_model(graph, opset_imports=ops)
    m.ir_version = 10
    return m


@case("QLinearMatMul with a 1-D per-row a_scale")
def _(d):
    f, u8 = TensorProto.FLOAT, TensorProto.UINT8
    n = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"], name="qmm")
    m = qmodel([n], [vi("a", u8, (3, 4))], [vi("y", u8, (3, 2))],
               [numpy_helper.from_array(np.full(3, 0.1, np.float32), "as"), numpy_helper.from_array(np.uint8(1), "az"),
                numpy_helper.from_array(np.ones((4, 2), np.uint8), "b"), numpy_helper.from_array(np.float32(0.1), "bs"),
                numpy_helper.from_array(np.uint8(0), "bz"), numpy_helper.from_array(np.float32(0.2), "ys"),
                numpy_helper.from_array(np.uint8(3), "yz")])
    return [save(m, d), "-o", out(d)], ["model.onnx", "qmm", "a_scale", "one per row"]


@case("QuantizeLinear per-axis scale of the wrong length")
def _(d):
    n = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q", axis=1)
    m = qmodel([n], [vi("x", shape=(2, 3))], [vi("y", TensorProto.INT8, (2, 3))],
               [numpy_helper.from_array(np.full(4, 0.1, np.float32), "s"), numpy_helper.from_array(np.zeros(4, np.int8), "z")])
    return [save(m, d), "-o", out(d)], ["model.onnx", "'q'", "per-axis", "3 values"]


@case("QuantizeLinear output_dtype against the zero point")
def _(d):
    n = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q", output_dtype=TensorProto.INT8)
    m = qmodel([n], [vi("x", shape=(2, 3))], [vi("y", TensorProto.UINT8, (2, 3))],
               [numpy_helper.from_array(np.float32(0.1), "s"), numpy_helper.from_array(np.uint8(3), "z")])
    return [save(m, d), "-o", out(d)], ["model.onnx", "'q'", "output_dtype", "agree"]


@case("DequantizeLinear float output of a float16 scale")
def _(d):
    n = helper.make_node("DequantizeLinear", ["x", "s"], ["y"], name="dq", output_dtype=TensorProto.FLOAT)
    m = qmodel([n], [vi("x", TensorProto.UINT8, (2, 3))], [vi("y", shape=(2, 3))],
               [numpy_helper.from_array(np.float16(0.1), "s")], opset=23)
    return [save(m, d), "-o", out(d)], ["model.onnx", "'dq'", "output_dtype", "float16"]


@case("QDQ Conv: a per-channel weight scale of the wrong length")
def _(d):
    i8 = TensorProto.INT8
    nodes = [helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["x"], name="dqx"),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], name="dqw", axis=0),
             helper.make_node("Conv", ["x", "wf"], ["c"], name="conv"),
             helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["y"], name="q")]
    m = qmodel(nodes, [vi("xq", i8, (1, 2, 4, 4))], [vi("y", i8, (1, 3, 4, 4))],
               [numpy_helper.from_array(np.float32(0.1), "xs"), numpy_helper.from_array(np.int8(0), "xz"),
                numpy_helper.from_array(np.ones((3, 2, 1, 1), np.int8), "w"),
                numpy_helper.from_array(np.full(4, 0.1, np.float32), "ws"), numpy_helper.from_array(np.zeros(4, np.int8), "wz"),
                numpy_helper.from_array(np.float32(0.2), "ys"), numpy_helper.from_array(np.int8(0), "yz")])
    return [save(m, d), "-o", out(d)], ["model.onnx", "'dqw'", "per-axis", "3 values"]


@case("QLinearSoftmax of opset 12 along an axis other than the last")
def _(d):
    u8 = TensorProto.UINT8
    n = helper.make_node("QLinearSoftmax", ["x", "xs", "xz", "ys", "yz"], ["y"], name="sm", domain="com.microsoft",
                         axis=1, opset=12)
    m = qmodel([n], [vi("x", u8, (2, 3, 4))], [vi("y", u8, (2, 3, 4))],
               [numpy_helper.from_array(np.float32(0.1), "xs"), numpy_helper.from_array(np.uint8(1), "xz"),
                numpy_helper.from_array(np.float32(1 / 256), "ys"), numpy_helper.from_array(np.uint8(0), "yz")], ms=True)
    return [save(m, d), "-o", out(d)], ["model.onnx", "'sm'", "last axis"]


@case("QLinearConcat without (tensor, scale, zero point) triples")
def _(d):
    u8 = TensorProto.UINT8
    n = helper.make_node("QLinearConcat", ["ys", "yz", "a", "as", "az", "b"], ["y"], name="cat", domain="com.microsoft",
                         axis=0)
    m = qmodel([n], [vi("a", u8, (2, 3)), vi("b", u8, (2, 3))], [vi("y", u8, (4, 3))],
               [numpy_helper.from_array(np.float32(0.1), "ys"), numpy_helper.from_array(np.uint8(1), "yz"),
                numpy_helper.from_array(np.float32(0.1), "as"), numpy_helper.from_array(np.uint8(1), "az")], ms=True)
    return [save(m, d), "-o", out(d)], ["model.onnx", "'cat'", "triples"]
def nbits_model(K=64, N=8, bits=4, bs=32, zp=None, g_idx=None, a_type=TensorProto.FLOAT, b_const=True):
    """a com.microsoft MatMulNBits (A 2 x K) with the given attributes and inputs"""
    KB = (K + bs - 1) // bs if bs > 0 else 1
    blob = max(bs, 1) * bits // 8
    inits = [numpy_helper.from_array(np.full(N * KB, 0.1, np.float32), "s")]
    ins = [vi("a", a_type, (2, K))]
    if b_const:
        inits.append(numpy_helper.from_array(np.zeros((N, KB, blob), np.uint8), "b"))
    else:
        ins.append(vi("b", TensorProto.UINT8, (N, KB, blob)))
    names = ["a", "b", "s"]
    if zp is not None or g_idx is not None:
        names.append("z" if zp is not None else "")
        if zp is not None:
            inits.append(numpy_helper.from_array(zp, "z"))
    if g_idx is not None:
        names.append("g")
        inits.append(numpy_helper.from_array(np.array(g_idx, np.int32), "g"))
    n = helper.make_node("MatMulNBits", names, ["y"], name="mmnb", domain="com.microsoft", K=K, N=N, bits=bits,
                         block_size=bs)
    return qmodel([n], ins, [vi("y", a_type, (2, N))], inits, opset=21, ms=True)


@case("MatMulNBits with 3-bit weights")
def _(d):
    return [save(nbits_model(bits=3), d), "-o", out(d)], ["model.onnx", "'mmnb'", "bits = 3", "4 and 8"]


@case("MatMulNBits with a block size that is not a power of 2")
def _(d):
    return [save(nbits_model(bs=24), d), "-o", out(d)], ["model.onnx", "'mmnb'", "block_size", "power of 2"]


@case("MatMulNBits with weights known only at run time")
def _(d):
    return [save(nbits_model(b_const=False), d), "-o", out(d)], ["model.onnx", "'mmnb'", "B", "constant uint8"]


@case("MatMulNBits with float zero points")
def _(d):
    return [save(nbits_model(zp=np.full(16, 8.0, np.float32)), d), "-o", out(d)], \
        ["model.onnx", "'mmnb'", "zero points", "float32", "packed uint8"]


@case("MatMulNBits with packed zero points of the wrong length")
def _(d):
    return [save(nbits_model(zp=np.zeros(3, np.uint8)), d), "-o", out(d)], ["model.onnx", "'mmnb'", "zero points", "8 x 1 bytes"]


@case("MatMulNBits with a g_idx that reorders the blocks")
def _(d):
    return [save(nbits_model(g_idx=[1 - k // 32 for k in range(64)]), d), "-o", out(d)], \
        ["model.onnx", "'mmnb'", "g_idx", "act-order"]


@case("MatMulNBits of float16 activations")
def _(d):
    return [save(nbits_model(a_type=TensorProto.FLOAT16), d), "-o", out(d)], ["model.onnx", "'mmnb'", "float16", "float32"]


def dqlstm_model(w_as_input=False, seq_lens=None, w_zp=0):
    """a DynamicQuantizeLSTM (T 3, batch 1, input 4, hidden 2, int8 weights)"""
    i8, H = TensorProto.INT8, 2
    inits = [numpy_helper.from_array(np.ones((1, H, 4 * H), np.int8), "R"),
             numpy_helper.from_array(np.full(1, 0.01, np.float32), "ws"),
             numpy_helper.from_array(np.full(1, w_zp, np.int8), "wz"),
             numpy_helper.from_array(np.full(1, 0.01, np.float32), "rs"),
             numpy_helper.from_array(np.zeros(1, np.int8), "rz")]
    ins = [vi("x", shape=(3, 1, 4))]
    if w_as_input:
        ins.append(vi("W", i8, (1, 4, 4 * H)))
    else:
        inits.append(numpy_helper.from_array(np.ones((1, 4, 4 * H), np.int8), "W"))
    if seq_lens is not None:
        inits.append(numpy_helper.from_array(np.array(seq_lens, np.int32), "sl"))
    n = helper.make_node("DynamicQuantizeLSTM", ["x", "W", "R", "", "sl" if seq_lens is not None else "", "", "", "",
                                                 "ws", "wz", "rs", "rz"], ["y"], name="dql", domain="com.microsoft",
                         hidden_size=H)
    return qmodel([n], ins, [vi("y", shape=(3, 1, 1, H))], inits, opset=13, ms=True)


@case("DynamicQuantizeLSTM with weights known only at run time")
def _(d):
    return [save(dqlstm_model(w_as_input=True), d), "-o", out(d)], ["model.onnx", "'dql'", "W", "constant"]


@case("DynamicQuantizeLSTM with a sequence shorter than X")
def _(d):
    return [save(dqlstm_model(seq_lens=[2]), d), "-o", out(d)], ["model.onnx", "'dql'", "sequence_lens", "not supported"]


@case("DynamicQuantizeLSTM int8 weights with a nonzero zero point")
def _(d):
    return [save(dqlstm_model(w_zp=3), d), "-o", out(d)], ["model.onnx", "'dql'", "W_zero_point", "zero point 0"]


# ---- control flow (If, Loop, Scan) -------------------------------------

def loop_model(body_nodes, body_out_shape=(2,), trip=None, scan_shape=None):
    """Loop carrying x (2 floats); the body maps v to the output 'vo'."""
    F, B, I = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64
    outs = [helper.make_tensor_value_info("co", B, []), helper.make_tensor_value_info("vo", F, list(body_out_shape))]
    if scan_shape is not None:
        outs.append(helper.make_tensor_value_info("vo", F, list(body_out_shape)))
    body = helper.make_graph([helper.make_node("Identity", ["c"], ["co"])] + body_nodes, "body",
                             [helper.make_tensor_value_info("i", I, []), helper.make_tensor_value_info("c", B, []),
                              helper.make_tensor_value_info("v", F, [2])], outs)
    node_out = ["y"] + (["ys"] if scan_shape is not None else [])
    inputs = [vi("x", shape=(2,))] + ([vi("n", TensorProto.INT64, ())] if trip is None else [])
    outputs = [vi("y", shape=(2,))] + ([vi("ys", shape=scan_shape)] if scan_shape is not None else [])
    inits = [numpy_helper.from_array(np.array(trip, np.int64), "n")] if trip is not None else []
    return model([helper.make_node("Loop", ["n", "", "x"], node_out, body=body, name="loop")], inputs, outputs, inits)


@case("Loop whose carried value changes shape")
def _(d):
    m = loop_model([helper.make_node("Concat", ["v", "v"], ["vo"], axis=0)], body_out_shape=(4,), trip=3)
    return [save(m, d), "-o", out(d)], ["'loop'", "Loop", "loop-carried value", "static shape"]


@case("Loop scan output of run-time length")
def _(d):
    m = loop_model([helper.make_node("Neg", ["v"], ["vo"])], scan_shape=("T", 2))
    return [save(m, d), "-o", out(d)], ["'loop'", "Loop", "run-time", "static length"]


@case("If branches of different shapes")
def _(d):
    F = TensorProto.FLOAT
    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [], [vi("t", F, (2, 3))])
    else_g = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["e"], axis=0)], "else", [], [vi("e", F, (4, 3))])
    m = model([helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g, name="branch")],
              [vi("c", TensorProto.BOOL, ()), vi("x")], [helper.make_tensor_value_info("y", F, None)])
    return [save(m, d), "-o", out(d)], ["'branch'", "If", "then branch", "static shapes", "--bind c="]


@case("unsupported op inside a Loop body")
def _(d):
    m = loop_model([helper.make_node("Bernoulli", ["v"], ["sq"], name="seq"),
                    helper.make_node("Neg", ["v"], ["vo"])], trip=2)
    return [save(m, d), "-o", out(d)], ["'loop'", "Bernoulli", "'seq'", "unsupported"]


@case("Loop body reading a name no scope defines")
def _(d):
    m = loop_model([helper.make_node("Add", ["v", "nowhere"], ["vo"])], trip=2)
    return [save(m, d), "-o", out(d)], ["'nowhere'", "dangling"]


def flex_model(**mods):
    """a FlexAttention (ai.onnx.preview 1) over 1x2x3x4 Q, K, V with the given modifiers"""
    io = [vi(n, shape=(1, 2, 3, 4)) for n in ("q", "k", "v", "y")]
    node = helper.make_node("FlexAttention", ["q", "k", "v"], ["y"], name="flex", domain="ai.onnx.preview", **mods)
    graph = helper.make_graph([node], "g", io[:3], io[3:])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26), helper.make_opsetid("ai.onnx.preview", 1)])
    m.ir_version = 13
    return m


def mod(nodes, outs=("o",)):
    F = TensorProto.FLOAT
    return helper.make_graph(nodes, "mod", [helper.make_tensor_value_info("s", F, None)],
                             [helper.make_tensor_value_info(o, F, None) for o in outs])


@case("FlexAttention score_mod with an unsupported op")
def _(d):
    m = flex_model(score_mod=mod([helper.make_node("Frobnicate", ["s"], ["o"], domain="x.y")]))
    return [save(m, d), "-o", out(d)], ["'flex'", "score_mod", "Frobnicate", "unsupported"]


@case("FlexAttention prob_mod with two outputs")
def _(d):
    m = flex_model(prob_mod=mod([helper.make_node("Neg", ["s"], ["o"]), helper.make_node("Abs", ["s"], ["p"])],
                                outs=("o", "p")))
    return [save(m, d), "-o", out(d)], ["'flex'", "prob_mod", "2 outputs"]


@case("FlexAttention score_mod with a nested subgraph")
def _(d):
    F = TensorProto.FLOAT
    br = helper.make_graph([helper.make_node("Neg", ["s"], ["b"])], "br", [], [helper.make_tensor_value_info("b", F, None)])
    c = numpy_helper.from_array(np.array(True), "c")
    sm = mod([helper.make_node("If", ["c"], ["o"], then_branch=br, else_branch=br)])
    sm.initializer.append(c)
    return [save(flex_model(score_mod=sm), d), "-o", out(d)], ["'flex'", "score_mod", "If", "nested subgraphs"]


@case("FlexAttention score_mod whose result changes the shape")
def _(d):
    m = flex_model(score_mod=mod([helper.make_node("ReduceSum", ["s"], ["o"], keepdims=0)]))
    return [save(m, d), "-o", out(d)], ["score_mod", "shape"]


# ---- running -----------------------------------------------------------


def tree_model(truenodeids, trueleafs, roots=(0,)):
    """a TreeEnsemble (ai.onnx.ml 5) over 2 nodes and 2 leaves; the caller's ids may be broken"""
    node = helper.make_node(
        "TreeEnsemble", ["x"], ["y"], name="trees", domain="ai.onnx.ml", n_targets=1, tree_roots=list(roots),
        nodes_featureids=[0, 1], nodes_truenodeids=list(truenodeids), nodes_trueleafs=list(trueleafs),
        nodes_falsenodeids=[0, 1], nodes_falseleafs=[1, 1], leaf_targetids=[0, 0],
        nodes_modes=helper.make_tensor("m", TensorProto.UINT8, [2], [0, 0]),
        nodes_splits=helper.make_tensor("s", TensorProto.FLOAT, [2], [0.5, 1.5]),
        leaf_weights=helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0]))
    graph = helper.make_graph([node], "g", [vi("x", shape=(4, 2))], [vi("y", shape=(4, 1))])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("ai.onnx.ml", 5)])
    m.ir_version = 8
    return m


@case("tree ensemble with a cycle")
def _(d):
    # node 0's true branch is node 1, whose true branch is node 0 again
    return [save(tree_model([1, 0], [0, 0]), d), "-o", out(d)], ["cycle"]


@case("tree ensemble with a node id out of range")
def _(d):
    return [save(tree_model([7, 1], [0, 1]), d), "-o", out(d)], ["node id 7", "out of range"]



@case("local function that calls itself")
def _(d):
    f = helper.make_function("pkg", "Loop1", ["a"], ["b"], [helper.make_node("Loop1", ["a"], ["b"], domain="pkg")],
                             [helper.make_opsetid("", OPSET), helper.make_opsetid("pkg", 1)])
    m = model([helper.make_node("Loop1", ["x"], ["y"], name="call", domain="pkg")], [vi("x")], [vi("y")])
    m.opset_import.append(helper.make_opsetid("pkg", 1))
    m.functions.append(f)
    return [save(m, d), "-o", out(d)], ["Loop1", "recursion"]


# ---- inputs found by fuzzing (tests/fuzz/, docs/FUZZING.md) ---------------
# Each file of tests/fuzz/regressions/ that onnx2c refuses, with the words
# its message must hold (tests/test_fuzz.py replays all of them too).
FUZZ_DIR = os.path.join(ROOT, "tests", "fuzz", "regressions")
FUZZ_CASES = [
    ("roialign_sampling_ratio_2p40.onnx", ["RoiAlign", "sampling_ratio 1099511627776", "at most 1024"]),
    ("lstm_hidden_size_overflow.onnx", ["LSTM", "hidden_size is 4611686018427387904", "must be hidden_size"]),
    ("rnn_required_input_empty.onnx", ["GRU", "input 0 is required"]),
    ("loop_body_view_cycle.onnx", ["cycle", "Loop"]),
    ("div_int_by_zero.onnx", ["Div", "integer Div by zero"]),
    ("declared_shape_too_large.onnx", ["y_prod", "declared with shape", "too large"]),
    ("range_start_not_scalar.onnx", ["Range", "must be scalars"]),
    ("range_too_long.onnx", ["Range", "at most 1048576 elements"]),
    ("reshape_count_overflow.onnx", ["Reshape", "element count overflows"]),
    ("sub_int64_wraps_when_folded.onnx", ["Shape", "has 0 inputs"]),
    ("lstm_too_many_steps.onnx", ["LSTM", "more than 65536 kernel calls"]),
    ("slice_starts_omitted.onnx", ["Slice", "input 1 is required"]),
    ("dft_huge_twiddles.onnx", ["DFT", "twiddle factors"]),
    ("resize_too_many_taps.onnx", ["Resize", "more than 262144 interpolation taps"]),
    ("zero_dim_beside_huge_dim.onnx", ["0x4611686018427387904x4x4", "too large"]),
    ("cast_inf_to_int64_folded.onnx", ["Add_43"]),
    ("clip_min_not_scalar.onnx", ["Clip", "must be scalars"]),
    ("resize_scale_1e23.onnx", ["Resize", "output length of axis 2", "too large"]),
    ("split_to_sequence_huge_axis.onnx", ["SplitToSequence", "at most 4096"]),
    ("dqlstm_x_omitted.onnx", ["DynamicQuantizeLSTM", "input 2 is required"]),
    ("constant_value_ints_of_floats.onnx", ["Constant", "value_ints", "does not hold ints"]),
    ("scan_num_scan_inputs_int_min.onnx", ["Scan", "num_scan_inputs is 2147483648"]),
    ("depth_to_space_huge_blocksize.onnx", ["blocksize", "at most 4096"]),
    ("convtranspose_output_shape_int64_min.onnx", ["ConvTranspose", "output_shape holds -9223372036854775808"]),
    ("dft_2p24_points_454mb_of_c.onnx", ["DFT", "needs 16777216 twiddle factors", "at most 1048576"]),
]
# (valid_*.onnx in tests/fuzz/regressions/ compile: only tests/test_fuzz.py replays them)


def const(name, value, dtype):
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


@case("HannWindow of 2^30 values (a compile-time table of 4 GB)")
def _(d):
    m = model([helper.make_node("HannWindow", ["n"], ["y"], name="win")], [], [vi("y", shape=None)],
              [const("n", 1 << 30, np.int64)])
    m.opset_import[0].version = 17
    return [save(m, d), "-o", out(d)], ["win", "HannWindow", "window size is 1073741824", "at most 1048576"]


@case("MelWeightMatrix of 2^20 bins x 2^15 frequencies (a compile-time table of 256 GB)")
def _(d):
    m = model([helper.make_node("MelWeightMatrix", ["nb", "dl", "sr", "lo", "hi"], ["y"], name="mel")], [],
              [vi("y", shape=None)],
              [const("nb", 1 << 20, np.int64), const("dl", 1 << 16, np.int64), const("sr", 16000, np.int64),
               const("lo", 0.0, np.float32), const("hi", 8000.0, np.float32)])
    m.opset_import[0].version = 17
    return [save(m, d), "-o", out(d)], ["mel", "MelWeightMatrix", "num_mel_bins (1048576)", "at most 1048576"]


@case("STFT with a frame of 2^30 samples (its twiddle table: 8 GB)")
def _(d):
    m = model([helper.make_node("STFT", ["x", "step"], ["y"], name="stft")],
              [vi("x", shape=(1, 1 << 30, 1))], [vi("y", shape=None)], [const("step", 1, np.int64)])
    m.opset_import[0].version = 17
    return [save(m, d), "-o", out(d)], ["stft", "STFT", "frame length is 1073741824", "at most 1048576"]


@case("training-mode Dropout over 2^31 elements (a compile-time mask of 10 GB)")
def _(d):
    m = model([helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop", seed=1)],
              [vi("x", shape=(1 << 31,))], [vi("y", shape=(1 << 31,))],
              [const("r", 0.5, np.float32), const("t", True, np.bool_)])
    return [save(m, d), "-o", out(d)], ["drop", "Dropout over 2147483648 elements", "at most 1048576"]


@case("fuzz: Optional with three inputs and outputs (sequence rewrite skipped the arity check)")
def _(d):
    m = model([helper.make_node("Optional", ["a", "b", "c"], ["y", "y2", "y3"], name="opt")],
              [vi("a"), vi("b"), vi("c")], [vi("y"), vi("y2"), vi("y3")])
    m.opset_import[0].version = 18
    return [save(m, d), "-o", out(d)], ["opt", "Optional", "has 3 inputs"]


@case("fuzz: required input left out (Div with an empty name for A)")
def _(d):
    m = model([helper.make_node("Div", ["", "x"], ["y"], name="div")], [vi("x")], [vi("y")])
    return [save(m, d), "-o", out(d)], ["div", "input 0 is required", "empty name"]


@case("fuzz: required input left out inside a Loop body (Unsqueeze)")
def _(d):
    body = helper.make_graph(
        [helper.make_node("Unsqueeze", ["", "ax"], ["u"], name="unsq"), helper.make_node("Identity", ["c"], ["co"])],
        "body", [vi("i", TensorProto.INT64, ()), vi("c", TensorProto.BOOL, ())],
        [vi("co", TensorProto.BOOL, ()), vi("u", TensorProto.FLOAT, (1, 2, 3))],
        initializer=[numpy_helper.from_array(np.array([0], dtype=np.int64), "ax")])
    trip = numpy_helper.from_array(np.array(2, dtype=np.int64), "trip")
    cond = numpy_helper.from_array(np.array(True), "cond")
    m = model([helper.make_node("Loop", ["trip", "cond"], ["ys"], body=body, name="loop")], [vi("x")],
              [vi("ys", TensorProto.FLOAT, (2, 1, 2, 3))], [trip, cond])
    return [save(m, d), "-o", out(d)], ["unsq", "input 0 is required"]


def fuzz_case(fname, words):
    def fn(d):
        p = os.path.join(d, "model.onnx")
        shutil.copy(os.path.join(FUZZ_DIR, fname), p)
        return [p, "-o", out(d)], words
    case("fuzz: " + fname)(fn)


for _f, _w in FUZZ_CASES:
    fuzz_case(_f, _w)


def sanitizer_env():
    env = dict(os.environ)
    # sanitizers must not be mistaken for the compiler's own exit status 1
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":exitcode=86:detect_leaks=1").lstrip(":")
    env["LSAN_OPTIONS"] = (env.get("LSAN_OPTIONS", "") + ":exitcode=87").lstrip(":")
    env["UBSAN_OPTIONS"] = (env.get("UBSAN_OPTIONS", "") + ":halt_on_error=1:exitcode=88:print_stacktrace=1").lstrip(":")
    return env


def snapshot(d):
    found = set()
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            found.add(os.path.relpath(os.path.join(root, n), d))
    return found


def run_case(compiler, name, fn, base, env):
    d = tempfile.mkdtemp(prefix="case_", dir=base)
    r = fn(d)
    args, words = r[0], r[1]
    must_not_exist = r[2] if len(r) > 2 else [os.path.join(d, "out.c"), os.path.join(d, "out.h")]
    before = snapshot(d)
    problems = []
    try:
        p = subprocess.run([compiler] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT_S, env=env, cwd=d)
    except subprocess.TimeoutExpired:
        return [f"no answer within {TIMEOUT_S} s (hang?)"], ""
    err = p.stderr.decode("utf-8", "replace")
    lines = [l for l in err.splitlines() if l.strip()]
    if p.returncode < 0:
        problems.append(f"killed by signal {-p.returncode}")
    elif p.returncode != 1:
        problems.append(f"exit status {p.returncode}, expected 1")
    if not lines:
        problems.append("no message on stderr")
    else:
        if len(lines) != 1:
            problems.append(f"{len(lines)} lines on stderr, expected one message")
        if not lines[0].startswith("onnx2c: "):
            problems.append("the message does not start with 'onnx2c: '")
        missing = [w for w in words if w not in err]
        if missing:
            problems.append("the message lacks " + ", ".join(repr(w) for w in missing))
        if "internal" in err:
            problems.append("the message reports an internal error")
    if p.stdout.strip():
        problems.append("unexpected output on stdout")
    for path in must_not_exist:
        if os.path.lexists(path) and not os.path.isdir(path):
            problems.append(f"left {os.path.relpath(path, d)} behind")
    new = sorted(snapshot(d) - before)
    if new:
        problems.append("left new files behind: " + ", ".join(new))
    shown = lines[0] if len(lines) == 1 else err.strip().replace("\n", " | ")
    return problems, shown


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"), help="onnx2c binary (default: build/onnx2c)")
    ap.add_argument("-k", dest="only", default=None, help="run only cases whose name contains this")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each message")
    a = ap.parse_args()
    compiler = os.path.abspath(a.compiler)
    if not os.access(compiler, os.X_OK):
        print(f"run_bad.py: no compiler at {a.compiler} (build it with make)", file=sys.stderr)
        return 1
    env = sanitizer_env()
    base = tempfile.mkdtemp(prefix="o2c_bad_")
    passed = failed = 0
    try:
        for name, fn in CASES:
            if a.only and a.only not in name:
                continue
            try:
                problems, msg = run_case(compiler, name, fn, base, env)
            except Exception as e:  # a broken case is a failure, not a crash of the runner
                problems, msg = [f"test error: {type(e).__name__}: {e}"], ""
            if problems:
                failed += 1
                print(f"FAIL  {name}: {'; '.join(problems)}")
                if msg:
                    print(f"      stderr: {msg[:600]}")
            else:
                passed += 1
                print(f"ok    {name}" + (f"\n      {msg}" if a.verbose else ""))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
