#!/usr/bin/env python3
"""Sequences and optionals (compiler/ops/sequence.c) against onnxruntime: small
models whose inputs and outputs are sequences of tensors, optional sequences
and optional tensors, with the sequence ops inside (SequenceConstruct, At,
Insert, Erase, Length, Empty, SplitToSequence, ConcatFromSequence,
SequenceMap, Optional*, If with a run-time condition making sequences, a
Loop carrying a sequence over a trip count given at run time (bound with
--bind), an empty sequence input, an absent optional input (--shape NAME:none
for a sequence, NULL for a tensor) and an absent optional output (no slot).

The cases are written as a corpus of test_* folders (a list as a
SequenceProto, None as an OptionalProto, as make_corpus.py writes them) and
checked by tests/conformance/run_node_tests.py, C and emulated CUDA (gcc and
clang warning-free, every element compared); every case must pass. Reference
outputs come from onnxruntime, or onnx's reference implementation where
onnxruntime does not take the input (an empty sequence, an absent optional).
Then the refusals: a sequence whose length is known only at run time must be
refused with a message that says what to do.

    python tests/test_sequences.py [--compiler build/onnx2c] [-j 2] [--keep DIR]

The last line is 'N passed, N failed, N skipped'."""
import argparse, os, shutil, subprocess, sys, tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

from corpus_run import run_corpus

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
F = TP.FLOAT
I64 = TP.INT64


def tvi(name, dt, shape):
    return h.make_tensor_value_info(name, dt, shape)


def svi(name, dt, shape=None):
    return h.make_tensor_sequence_value_info(name, dt, shape)


def ovi(name, inner):
    return h.make_value_info(name, h.make_optional_type_proto(inner))


def seq_tp(dt, shape=None):
    return h.make_sequence_type_proto(h.make_tensor_type_proto(dt, shape))


def const(name, a):
    return nh.from_array(np.asarray(a), name)


def make_model(name, nodes, ins, outs, inits=(), opset=18):
    g = h.make_graph(nodes, name, ins, outs, list(inits))
    m = h.make_model(g, producer_name="onnx2c tests", opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def reference(m, feeds):
    try:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.log_severity_level = 4
        s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return s.run(None, feeds), "onnxruntime"
    except Exception:
        from onnx.reference import ReferenceEvaluator
        return ReferenceEvaluator(m).run(None, feeds), "onnx reference"


def value_proto(v, name):
    if isinstance(v, list):
        return nh.from_list(v, name)
    if v is None:
        return nh.from_optional(None, name)
    return nh.from_array(np.asarray(v), name)


class Corpus:
    def __init__(self, root):
        self.root, self.names = root, []

    def add(self, name, m, inputs):
        names = [i.name for i in m.graph.input]
        outs, who = reference(m, dict(zip(names, inputs)))
        d = os.path.join(self.root, "test_" + name)
        ds = os.path.join(d, "test_data_set_0")
        os.makedirs(ds)
        onnx.save(m, os.path.join(d, "model.onnx"))
        for kind, vals, infos in (("input", inputs, m.graph.input), ("output", outs, m.graph.output)):
            for k, (v, info) in enumerate(zip(vals, infos)):
                if isinstance(v, np.ndarray) or v is None or isinstance(v, list):
                    pass
                else:
                    v = np.asarray(v)
                with open(os.path.join(ds, "%s_%d.pb" % (kind, k)), "wb") as f:
                    f.write(value_proto(v, info.name).SerializeToString())
        self.names.append("test_" + name)
        print("# test_%s: reference from %s" % (name, who))


def cases(c, r):
    def rf(*s):
        return r.standard_normal(s).astype(np.float32)

    # sequence in, sequence and tensors out: Insert (at a position), Concat, Length, At, Erase
    m = make_model("seq_io", [
        h.make_node("SequenceInsert", ["x", "t", "one"], ["y"]),
        h.make_node("ConcatFromSequence", ["x"], ["z"], axis=0),
        h.make_node("SequenceLength", ["y"], ["n"]),
        h.make_node("SequenceErase", ["y", "minus2"], ["e"]),
        h.make_node("SequenceAt", ["e", "zero"], ["first"]),
    ], [svi("x", F, None), tvi("t", F, [2, 3])],
        [svi("y", F, None), tvi("z", F, None), tvi("n", I64, []), svi("e", F, None), tvi("first", F, None)],
        [const("one", np.int64(1)), const("minus2", np.int64(-2)), const("zero", np.int64(0))])
    c.add("seq_io", m, [[rf(2, 3), rf(1, 3), rf(4, 3)], rf(2, 3)])

    # scalar elements, int64; SequenceConstruct of inputs; Identity of a sequence
    m = make_model("seq_scalars", [
        h.make_node("SequenceConstruct", ["a", "b", "a"], ["s"]),
        h.make_node("Identity", ["x"], ["xi"]),
        h.make_node("ConcatFromSequence", ["s"], ["c"], axis=0, new_axis=1),
        h.make_node("SequenceAt", ["x", "minus1"], ["last"]),
    ], [svi("x", I64, []), tvi("a", I64, []), tvi("b", I64, [])],
        [svi("xi", I64, None), tvi("c", I64, None), tvi("last", I64, None)],
        [const("minus1", np.int64(-1))])
    c.add("seq_scalars", m, [[np.array(3, np.int64), np.array(-4, np.int64)], np.array(7, np.int64),
                             np.array(9, np.int64)])

    # SplitToSequence (a chunk size that leaves a shorter last piece, keepdims 0) and SequenceMap
    body = h.make_graph([h.make_node("ReduceSum", ["e", "ax"], ["s"], keepdims=0),
                         h.make_node("Mul", ["s", "k"], ["o"])], "map",
                        [tvi("e", F, None), tvi("k", F, [])], [tvi("o", F, None)],
                        [const("ax", np.array([0], np.int64))])
    m = make_model("split_map", [
        h.make_node("SplitToSequence", ["x", "two"], ["p"], axis=0),
        h.make_node("SplitToSequence", ["x"], ["q"], axis=1, keepdims=0),
        h.make_node("SequenceMap", ["p", "k"], ["sums"], body=body),
    ], [tvi("x", F, [5, 4]), tvi("k", F, [])], [svi("p", F, None), svi("q", F, None), svi("sums", F, None)],
        [const("two", np.int64(2))])
    c.add("split_map", m, [rf(5, 4), np.array(1.5, np.float32)])

    # an empty sequence input grows in a Loop whose trip count is a graph input (bound: unrolled)
    lb = h.make_graph([
        h.make_node("Identity", ["ci"], ["co"]),
        h.make_node("Cast", ["i"], ["fi"], to=F),
        h.make_node("Mul", ["fi", "v"], ["w"]),
        h.make_node("SequenceInsert", ["sq", "w"], ["so"]),
        h.make_node("Add", ["acc", "w"], ["acc2"]),
    ], "body", [tvi("i", I64, []), tvi("ci", TP.BOOL, []), svi("sq", F, None), tvi("acc", F, [3])],
        [tvi("co", TP.BOOL, []), svi("so", F, None), tvi("acc2", F, [3]), tvi("w", F, [3])])
    m = make_model("loop_seq_bound", [
        h.make_node("Loop", ["trip", "", "s0", "a0"], ["sf", "af", "scan"], body=lb),
        h.make_node("SequenceLength", ["sf"], ["len"]),
    ], [tvi("trip", I64, []), svi("s0", F, [3]), tvi("v", F, [3]), tvi("a0", F, [3])],
        [svi("sf", F, None), tvi("af", F, [3]), tvi("scan", F, None), tvi("len", I64, [])])
    c.add("loop_seq_bound", m, [np.array(3, np.int64), [rf(3)], rf(3), rf(3)])
    c.add("loop_seq_empty", m, [np.array(2, np.int64), [], rf(3), rf(3)])

    # an If with a run-time condition whose branches make sequences from graph inputs
    tb = h.make_graph([h.make_node("SequenceConstruct", ["a", "b"], ["ts"])], "then", [], [svi("ts", F, None)])
    eb = h.make_graph([h.make_node("Neg", ["a"], ["na"]),
                       h.make_node("SequenceConstruct", ["b", "na"], ["es"])], "else", [], [svi("es", F, None)])
    m = make_model("if_seq_runtime", [
        h.make_node("If", ["c"], ["s"], then_branch=tb, else_branch=eb),
        h.make_node("ConcatFromSequence", ["s"], ["y"], axis=0),
    ], [tvi("c", TP.BOOL, []), tvi("a", F, [2]), tvi("b", F, [2])], [svi("s", F, None), tvi("y", F, None)])
    c.add("if_seq_then", m, [np.array(True), rf(2), rf(2)])
    c.add("if_seq_else", m, [np.array(False), rf(2), rf(2)])

    # optional sequence input, present and absent (--shape NAME:none); an optional tensor
    # input absent at run time (NULL); an optional output present and one absent (no slot)
    tb = h.make_graph([h.make_node("OptionalGetElement", ["o"], ["g"]),
                       h.make_node("ConcatFromSequence", ["g"], ["cg"], axis=0)], "then", [], [tvi("cg", F, None)])
    eb = h.make_graph([h.make_node("Identity", ["d"], ["dd"])], "else", [], [tvi("dd", F, None)])
    tb2 = h.make_graph([h.make_node("OptionalGetElement", ["ot"], ["gt"]),
                        h.make_node("Add", ["gt", "gt"], ["g2"])], "then2", [], [tvi("g2", F, [2])])
    eb2 = h.make_graph([h.make_node("Identity", ["d"], ["d2"])], "else2", [], [tvi("d2", F, [2])])
    m = make_model("optionals", [
        h.make_node("OptionalHasElement", ["o"], ["has"]),
        h.make_node("If", ["has"], ["y"], then_branch=tb, else_branch=eb),
        h.make_node("OptionalHasElement", ["ot"], ["hast"]),
        h.make_node("If", ["hast"], ["yt"], then_branch=tb2, else_branch=eb2),
        h.make_node("Optional", ["d"], ["od"]),
        h.make_node("Optional", [], ["none"], type=h.make_tensor_type_proto(F, [2])),
    ], [ovi("o", seq_tp(F, [2])), ovi("ot", h.make_tensor_type_proto(F, [2])), tvi("d", F, [2])],
        [tvi("y", F, None), tvi("yt", F, [2]), ovi("od", h.make_tensor_type_proto(F, [2])),
         ovi("none", h.make_tensor_type_proto(F, [2]))])
    c.add("optionals_present", m, [[rf(2), rf(2)], rf(2), rf(2)])
    c.add("optionals_absent", m, [None, None, rf(2)])


REFUSALS = [
    # (name, model, compiler flags, texts the message must hold)
]


def refusal_cases():
    out = []
    # a loop carrying a sequence over a run-time trip count: the message names it for --bind
    lb = h.make_graph([h.make_node("Identity", ["ci"], ["co"]),
                       h.make_node("SequenceInsert", ["sq", "v"], ["so"])], "body",
                      [tvi("i", I64, []), tvi("ci", TP.BOOL, []), svi("sq", F, None)],
                      [tvi("co", TP.BOOL, []), svi("so", F, None)])
    m = make_model("r_loop", [h.make_node("Loop", ["trip", "", "s0"], ["sf"], body=lb)],
                   [tvi("trip", I64, []), svi("s0", F, [3]), tvi("v", F, [3])], [svi("sf", F, None)])
    out.append(("loop_runtime_trip", m, ["--shape", "s0:empty"], ["--bind trip="]))
    # a sequence input without --shape
    out.append(("sequence_no_shape", m, [], ["--shape s0:"]))
    # If branches making sequences of different lengths, the condition from an input
    tb = h.make_graph([h.make_node("SequenceConstruct", ["a"], ["ts"])], "then", [], [svi("ts", F, None)])
    eb = h.make_graph([h.make_node("SequenceConstruct", ["a", "a"], ["es"])], "else", [], [svi("es", F, None)])
    m = make_model("r_if", [h.make_node("If", ["c"], ["s"], then_branch=tb, else_branch=eb)],
                   [tvi("c", TP.BOOL, []), tvi("a", F, [2])], [svi("s", F, None)])
    out.append(("if_lengths_differ", m, [], ["--bind c=", "sequence of 1 tensors"]))
    # a position known only at run time
    m = make_model("r_at", [h.make_node("SequenceAt", ["x", "p"], ["y"])],
                   [svi("x", F, None), tvi("p", I64, [])], [tvi("y", F, None)])
    out.append(("position_runtime", m, ["--shape", "x:2,2"], ["--bind p="]))
    # a branch that runs at run time reading an enclosing sequence
    tb = h.make_graph([h.make_node("SequenceAt", ["x", "zero"], ["t0"])], "then", [], [tvi("t0", F, [2])],
                      [const("zero", np.int64(0))])
    eb = h.make_graph([h.make_node("SequenceAt", ["x", "one"], ["t1"])], "else", [], [tvi("t1", F, [2])],
                      [const("one", np.int64(1))])
    m = make_model("r_capture", [h.make_node("If", ["c"], ["y"], then_branch=tb, else_branch=eb)],
                   [tvi("c", TP.BOOL, []), svi("x", F, [2])], [tvi("y", F, [2])])
    out.append(("runtime_branch_reads_sequence", m, ["--shape", "x:2,2"], ["--bind c=", "reads the sequence"]))
    # a sequence read by an op that takes tensors
    m = make_model("r_relu", [h.make_node("Relu", ["x"], ["y"])], [svi("x", F, None)], [tvi("y", F, None)])
    out.append(("tensor_op_on_sequence", m, ["--shape", "x:2,2"], ["is a sequence, which Relu does not take"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--keep", default=None, help="write the corpus here and keep it")
    a = ap.parse_args()
    root = a.keep or tempfile.mkdtemp(prefix="o2c_seq_")
    try:
        if a.keep:
            shutil.rmtree(root, ignore_errors=True)
            os.makedirs(root)
        c = Corpus(root)
        cases(c, np.random.RandomState(11))
        npass, nfail = run_corpus(root, c.names, a.compiler, a.jobs, ["--cuda-emu"])
        for name, model, flags, texts in refusal_cases():
            path = os.path.join(root, name + ".onnx")
            onnx.save(model, path)
            r = subprocess.run([a.compiler, path, "-o", os.path.join(root, name + ".c")] + flags,
                               capture_output=True, text=True)
            missing = [t for t in texts if t not in r.stderr]
            if r.returncode != 1 or missing:
                print("FAIL  refusal %-28s exit %d, missing %s: %s" % (name, r.returncode, missing, r.stderr.strip()[-300:]))
                nfail += 1
            else:
                print("PASS  refusal %s" % name)
                npass += 1
        print("%d passed, %d failed, 0 skipped" % (npass, nfail))
        return 1 if nfail else 0
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
