#!/usr/bin/env python3
"""Op versions (compiler/ops.def's last column, docs/HACKING.md "Op
versions"): the op table against onnx's schema history, old opsets that
onnx2c implements against onnxruntime, and the versions it refuses.

1. tools/opset_versions.py: every since_version of every op in the table
   (onnx's schema history, deprecated ones too) is listed, implemented or
   marked "!" (refused), and nothing else is.
2. Models at old opsets whose op versions onnx2c implements (attributes that
   became inputs, Softmax's 2-D coercion before 13, Upsample-7/9,
   Resize-10, Dropout-6 with is_test=1, BatchNormalization-6 in
   training mode, OneHot-9's negative indices, ...) are written as a corpus
   and checked by tests/conformance/run_node_tests.py (C and emulated CUDA):
   reference outputs from onnxruntime, or onnx's reference implementation
   where onnxruntime does not run the opset (below 7), or the spec's values
   computed here with numpy where both implement the newer rule (OneHot-9
   with negative indices).
3. Refusals: a node whose op version onnx2c does not implement (Add-6's
   legacy broadcast, Cast-1's string 'to', Upsample-1, Selu-1's defaults,
   ai.onnx.ml LabelEncoder-1, ...), in the main graph or a subgraph, exits 1
   with a message naming the op, its version, the opset and domain, and the
   versions onnx2c implements; the node-level refusals of old versions
   (Dropout-6 in training mode, Dropout-7's mask read, ConvTranspose-1's odd
   padding split) too.

    python tests/test_opsets.py [--compiler build/onnx2c] [-j 2] [--keep DIR]

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


def const(name, a):
    return nh.from_array(np.asarray(a), name)


def model(name, nodes, ins, outs, inits=(), opset=7, domains=()):
    g = h.make_graph(nodes, name, ins, outs, list(inits))
    imports = [h.make_opsetid("", opset)] + [h.make_opsetid(d, v) for d, v in domains]
    m = h.make_model(g, producer_name="onnx2c tests", opset_imports=imports)
    m.ir_version = 3 if opset < 8 else 5 if opset < 11 else 7
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


class Corpus:
    def __init__(self, root):
        self.root, self.names = root, []

    def add(self, name, m, inputs, outputs=None):
        names = [i.name for i in m.graph.input if i.name not in {t.name for t in m.graph.initializer}]
        if outputs is None:
            outputs, who = reference(m, dict(zip(names, inputs)))
        else:
            who = "the spec (numpy)"
        d = os.path.join(self.root, "test_" + name)
        ds = os.path.join(d, "test_data_set_0")
        os.makedirs(ds)
        onnx.save(m, os.path.join(d, "model.onnx"))
        for kind, vals, infos in (("input", inputs, m.graph.input), ("output", outputs, m.graph.output)):
            for k, (v, info) in enumerate(zip(vals, infos)):
                with open(os.path.join(ds, "%s_%d.pb" % (kind, k)), "wb") as f:
                    f.write(nh.from_array(np.asarray(v), info.name).SerializeToString())
        self.names.append("test_" + name)
        print("# test_%s: reference from %s" % (name, who))


def bn_train(x, s, b, mean, var, eps=1e-5):
    """BatchNormalization-6's Y in training mode (is_test=0): normalized with
    the batch's mean and (population) variance per channel; onnxruntime does
    not run opset 6 and onnx's reference returns it wrapped in a tuple"""
    m = x.astype(np.float64).mean(axis=(0, 2, 3)).reshape(1, -1, 1, 1)
    v = x.astype(np.float64).var(axis=(0, 2, 3)).reshape(1, -1, 1, 1)
    y = s.reshape(1, -1, 1, 1) * (x - m) / np.sqrt(v + eps) + b.reshape(1, -1, 1, 1)
    return y.astype(np.float32)


def cases(c, r):
    def rf(*s):
        return r.standard_normal(s).astype(np.float32)

    x234 = rf(2, 3, 4)
    # Add-7: numpy broadcasting (Add-6's broadcast attribute is refused)
    c.add("add7_broadcast", model("add7", [h.make_node("Add", ["a", "b"], ["y"])],
                                  [tvi("a", F, [2, 3, 4]), tvi("b", F, [4])], [tvi("y", F, [2, 3, 4])]), [x234, rf(4)])
    # Softmax-1, LogSoftmax-11, Hardmax-11: the input coerced to 2-D at axis
    c.add("softmax1_2d", model("sm1", [h.make_node("Softmax", ["x"], ["y"], axis=1)],
                               [tvi("x", F, [2, 3, 4])], [tvi("y", F, [2, 3, 4])]), [x234])
    c.add("logsoftmax11_default_axis", model("lsm11", [h.make_node("LogSoftmax", ["x"], ["y"])],
                                             [tvi("x", F, [2, 3, 4])], [tvi("y", F, [2, 3, 4])], opset=11), [x234])
    c.add("hardmax11_2d", model("hm11", [h.make_node("Hardmax", ["x"], ["y"], axis=1)],
                                [tvi("x", F, [2, 3, 4])], [tvi("y", F, [2, 3, 4])], opset=11), [x234])
    # Dropout-7 (inference) with a mask nobody reads (one that is read is refused)
    c.add("dropout7_unread_mask", model("do7", [h.make_node("Dropout", ["x"], ["y", "m"], ratio=0.3),
                                                h.make_node("Relu", ["y"], ["z"])],
                                        [tvi("x", F, [2, 3])], [tvi("z", F, [2, 3])]), [rf(2, 3)])
    # Dropout-6 with is_test=1: y = x (neither onnxruntime nor onnx's reference runs it)
    xd = rf(2, 3)
    c.add("dropout6_is_test", model("do6", [h.make_node("Dropout", ["x"], ["y"], is_test=1)],
                                    [tvi("x", F, [2, 3])], [tvi("y", F, [2, 3])], opset=6), [xd], [xd])
    # BatchNormalization-7 with spatial=0 (per activation) and spatial=1
    C = 3
    bn_in = [rf(2, C, 2, 2), rf(C, 2, 2), rf(C, 2, 2), rf(C, 2, 2), np.abs(rf(C, 2, 2)) + 0.5]
    c.add("batchnorm7_spatial0", model("bn7s0", [h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                                                             spatial=0)],
                                       [tvi("x", F, [2, C, 2, 2])] + [tvi(n, F, [C, 2, 2]) for n in "sbmv"],
                                       [tvi("y", F, [2, C, 2, 2])]), bn_in)
    # BatchNormalization-6 with is_test=0: training mode, Y from the batch's statistics
    bn6_in = [rf(4, C, 2, 2), rf(C), rf(C), rf(C), np.abs(rf(C)) + 0.5]
    c.add("batchnorm6_training", model("bn6", [h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                                                           is_test=0)],
                                       [tvi("x", F, [4, C, 2, 2])] + [tvi(n, F, [C]) for n in "sbmv"],
                                       [tvi("y", F, [4, C, 2, 2])], opset=6), bn6_in, [bn_train(*bn6_in)])
    # Upsample-7 (scales attribute), Upsample-9 (scales input), Resize-10
    x4 = rf(1, 2, 3, 3)
    c.add("upsample7_nearest", model("up7", [h.make_node("Upsample", ["x"], ["y"], scales=[1.0, 1.0, 2.0, 2.0])],
                                     [tvi("x", F, [1, 2, 3, 3])], [tvi("y", F, [1, 2, 6, 6])]), [x4])
    c.add("upsample9_linear", model("up9", [h.make_node("Upsample", ["x", "s"], ["y"], mode="linear")],
                                    [tvi("x", F, [1, 2, 3, 3])], [tvi("y", F, [1, 2, 6, 6])],
                                    [const("s", np.array([1, 1, 2, 2], np.float32))], opset=9), [x4])
    c.add("resize10_linear", model("rs10", [h.make_node("Resize", ["x", "s"], ["y"], mode="linear")],
                                   [tvi("x", F, [1, 2, 3, 3])], [tvi("y", F, [1, 2, 6, 6])],
                                   [const("s", np.array([1, 1, 2, 2], np.float32))], opset=10), [x4])
    # attributes that became inputs: Slice-1, Pad-2, Split-2, Squeeze/Unsqueeze-11,
    # ReduceSum-11, ReduceMean-13, TopK-1, Clip-6
    c.add("slice1_attrs", model("sl1", [h.make_node("Slice", ["x"], ["y"], starts=[1, 0], ends=[3, -1], axes=[1, 2])],
                                [tvi("x", F, [2, 3, 4])], [tvi("y", F, [2, 2, 3])], opset=9), [x234])
    c.add("pad2_reflect", model("pad2", [h.make_node("Pad", ["x"], ["y"], mode="reflect", pads=[0, 1, 1, 0, 1, 2])],
                                [tvi("x", F, [2, 3, 4])], [tvi("y", F, [2, 5, 7])], opset=10), [x234])
    c.add("pad2_value", model("pad2v", [h.make_node("Pad", ["x"], ["y"], pads=[0, 1, 0, 0, 0, 1], value=1.5)],
                              [tvi("x", F, [2, 3, 4])], [tvi("y", F, [2, 4, 5])]), [x234])
    c.add("split2_attr", model("sp2", [h.make_node("Split", ["x"], ["y0", "y1"], axis=2, split=[1, 3])],
                               [tvi("x", F, [2, 3, 4])], [tvi("y0", F, [2, 3, 1]), tvi("y1", F, [2, 3, 3])]), [x234])
    c.add("squeeze11_unsqueeze11", model("sq11", [h.make_node("Unsqueeze", ["x"], ["u"], axes=[0, -1]),
                                                  h.make_node("Squeeze", ["u"], ["y"], axes=[-1])],
                                         [tvi("x", F, [2, 3, 4])], [tvi("y", F, [1, 2, 3, 4])], opset=11), [x234])
    c.add("reducesum11_attr", model("rs11", [h.make_node("ReduceSum", ["x"], ["y"], axes=[-1, 0], keepdims=0)],
                                    [tvi("x", F, [2, 3, 4])], [tvi("y", F, [3])], opset=11), [x234])
    c.add("reducemean13_attr", model("rm13", [h.make_node("ReduceMean", ["x"], ["y"], axes=[1])],
                                     [tvi("x", F, [2, 3, 4])], [tvi("y", F, [2, 1, 4])], opset=13), [x234])
    c.add("topk1_attr", model("tk1", [h.make_node("TopK", ["x"], ["v", "i"], k=2)],
                              [tvi("x", F, [2, 3, 4])], [tvi("v", F, [2, 3, 2]), tvi("i", I64, [2, 3, 2])]), [x234])
    c.add("clip6_attrs", model("cl6", [h.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.25)],
                               [tvi("x", F, [2, 3, 4])], [tvi("y", F, [2, 3, 4])]), [x234])
    # ConvTranspose-1 with SAME_UPPER and an even total padding (the same in both rules)
    c.add("convtranspose1_same_even", model("ct1", [h.make_node("ConvTranspose", ["x", "w"], ["y"], auto_pad="SAME_UPPER",
                                                                kernel_shape=[4, 4], strides=[2, 2])],
                                            [tvi("x", F, [1, 2, 3, 3])], [tvi("y", F, [1, 1, 6, 6])],
                                            [const("w", rf(2, 1, 4, 4))], opset=10), [x4])
    # OneHot-9: indices outside [0, depth) are all off, negative ones too
    # (OneHot-11 counts those from the end); onnxruntime and onnx's reference
    # do the latter at opset 9 as well, so the spec's values come from numpy
    ind = np.array([[0, 2, -1], [3, -3, 1]], np.int64)
    depth, vals = np.array(3, np.int64), np.array([-1.0, 2.0], np.float32)

    def onehot(wrap):
        y = np.full(ind.shape + (3,), vals[0], np.float32)
        for idx in np.ndindex(ind.shape):
            k = ind[idx] + 3 if wrap and ind[idx] < 0 else ind[idx]
            if 0 <= k < 3:
                y[idx + (k,)] = vals[1]
        return y
    for opset, wrap in ((9, False), (11, True)):
        m = model("oh%d" % opset, [h.make_node("OneHot", ["i", "d", "v"], ["y"])],
                  [tvi("i", I64, [2, 3])], [tvi("y", F, [2, 3, 3])], [const("d", depth), const("v", vals)], opset=opset)
        c.add("onehot%d_negative" % opset, m, [ind], [onehot(wrap)])
    # If-1 at opset 7 with an Add-7 in its branches
    then_g = h.make_graph([h.make_node("Add", ["x", "x"], ["t"])], "then", [], [tvi("t", F, [2, 3])])
    else_g = h.make_graph([h.make_node("Mul", ["x", "x"], ["e"])], "else", [], [tvi("e", F, [2, 3])])
    c.add("if1_body_add7", model("if7", [h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                                 [tvi("c", TP.BOOL, []), tvi("x", F, [2, 3])], [tvi("y", F, [2, 3])]),
          [np.array(True), rf(2, 3)])


def refusal_cases():
    """(name, model, texts the message must hold)"""
    out = []
    ab = [tvi("a", F, [2, 3]), tvi("b", F, [3])]
    out.append(("add6_legacy_broadcast", model("add6", [h.make_node("Add", ["a", "b"], ["y"], broadcast=1)], ab,
                                               [tvi("y", F, [2, 3])], opset=6),
                ["Add-6", "opset 6 of domain 'ai.onnx'", "implements Add versions 7, 13, 14", "node 'add6_node'"]))
    out[-1][1].graph.node[0].name = "add6_node"
    # two in one message: Mul-1 and Greater-1 at opset 5
    out.append(("two_nodes_opset5", model("two5", [h.make_node("Mul", ["a", "b"], ["m"], broadcast=1),
                                                  h.make_node("Greater", ["m", "b"], ["y"], broadcast=1)], ab,
                                          [tvi("y", TP.BOOL, [2, 3])], opset=5),
                ["2 nodes use", "Mul-1", "Greater-1", "opset 5"]))
    out.append(("cast1_string_to", model("cast1", [h.make_node("Cast", ["a"], ["y"], to="DOUBLE")], ab[:1],
                                         [tvi("y", TP.DOUBLE, [2, 3])], opset=5),
                ["Cast-1", "implements Cast versions 6, 9"]))
    out.append(("upsample1", model("up1", [h.make_node("Upsample", ["x"], ["y"], height_scale=2.0, width_scale=2.0)],
                                   [tvi("x", F, [1, 1, 2, 2])], [tvi("y", F, [1, 1, 4, 4])], opset=6),
                ["Upsample-1", "implements Upsample versions 7, 9, 10"]))
    out.append(("selu1_defaults", model("selu1", [h.make_node("Selu", ["a"], ["y"], consumed_inputs=[0])], ab[:1],
                                        [tvi("y", F, [2, 3])], opset=5), ["Selu-1", "versions 6, 22"]))
    le = h.make_node("LabelEncoder", ["s"], ["y"], domain="ai.onnx.ml", classes_strings=["a", "b"])
    out.append(("labelencoder1", model("le1", [le], [tvi("s", TP.STRING, [3])], [tvi("y", I64, [3])], opset=11,
                                       domains=[("ai.onnx.ml", 1)]),
                ["ai.onnx.ml::LabelEncoder-1", "opset 1 of domain 'ai.onnx.ml'", "versions 2, 4"]))
    # in a subgraph: the model's opset rules its nodes too
    then_g = h.make_graph([h.make_node("Add", ["x", "x"], ["t"], broadcast=1)], "then", [], [tvi("t", F, [2, 3])])
    else_g = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [], [tvi("e", F, [2, 3])])
    out.append(("add6_in_if_branch", model("if6", [h.make_node("If", ["c"], ["y"], then_branch=then_g,
                                                               else_branch=else_g)],
                                           [tvi("c", TP.BOOL, []), tvi("x", F, [2, 3])], [tvi("y", F, [2, 3])], opset=6),
                ["Add-6", "implements Add versions 7, 13, 14"]))
    # node-level: what these old versions compute differently
    out.append(("dropout6_training", model("do6t", [h.make_node("Dropout", ["a"], ["y"])], ab[:1],
                                           [tvi("y", F, [2, 3])], opset=6), ["Dropout-6", "is_test=0"]))
    out.append(("dropout7_mask_read", model("do7m", [h.make_node("Dropout", ["a"], ["y", "m"])], ab[:1],
                                            [tvi("y", F, [2, 3]), tvi("m", F, [2, 3])], opset=9),
                ["Dropout-7's mask output 'm'", "from Dropout-10 on"]))
    out.append(("convtranspose1_odd_padding",
                model("ct1o", [h.make_node("ConvTranspose", ["x", "w"], ["y"], auto_pad="SAME_UPPER", kernel_shape=[3, 3],
                                           strides=[2, 2])],
                      [tvi("x", F, [1, 2, 3, 3])], [tvi("y", F, [1, 1, 6, 6])],
                      [const("w", np.ones((2, 1, 3, 3), np.float32))], opset=10),
                ["ConvTranspose-1", "SAME_UPPER", "opset-11 rule"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--keep", default=None, help="write the corpus here and keep it")
    a = ap.parse_args()
    npass = nfail = 0
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "opset_versions.py")], capture_output=True, text=True)
    if r.returncode:
        print("FAIL  the op table's versions against onnx's schema history:\n" + r.stdout)
        nfail += 1
    else:
        print("PASS  the op table's versions against onnx's schema history (%s)" % r.stdout.strip().splitlines()[-1])
        npass += 1
    root = a.keep or tempfile.mkdtemp(prefix="o2c_opsets_")
    try:
        if a.keep:
            shutil.rmtree(root, ignore_errors=True)
            os.makedirs(root)
        c = Corpus(root)
        cases(c, np.random.RandomState(7))
        p, f = run_corpus(root, c.names, a.compiler, a.jobs, ["--cuda-emu"])
        npass += p
        nfail += f
        for name, m, texts in refusal_cases():
            path = os.path.join(root, name + ".onnx")
            onnx.save(m, path)
            r = subprocess.run([a.compiler, path, "-o", os.path.join(root, name + ".c")], capture_output=True, text=True)
            missing = [t for t in texts if t not in r.stderr]
            if r.returncode != 1 or missing:
                print("FAIL  refusal %-28s exit %d, missing %s: %s" % (name, r.returncode, missing, r.stderr.strip()[-400:]))
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
