#!/usr/bin/env python3
"""FlexAttention (ai.onnx.preview) with score_mod / prob_mod subgraphs
against onnx's reference implementation: onnx2c expands such a node into
standard ops with the modifiers inlined (compiler/ops/attention.c). Cases:
grouped heads, float16/double data, softmax_precision (float16, double), modifiers that read
tensors of the enclosing graph (a graph input, an initializer), identity
and constant-only modifiers, a node inside an If branch.

The models are written as a corpus of test_* folders and checked by
tests/conformance/run_node_tests.py (gcc and clang warning-free, every
output compared); every case must pass.

    python tests/test_flexattention.py [--compiler build/onnx2c] [-j 2] [--keep DIR]

The last line is 'N passed, N failed, N skipped'."""
import argparse, os, shutil, sys, tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

from corpus_run import run_corpus
from onnx.reference import ReferenceEvaluator

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NPT = {TP.FLOAT: np.float32, TP.FLOAT16: np.float16, TP.DOUBLE: np.float64}


def mod_graph(name, nodes, dt, inits=(), inp="s", out="s_out"):
    return h.make_graph(nodes, name, [h.make_tensor_value_info(inp, dt, None)],
                        [h.make_tensor_value_info(out, dt, None)], list(inits))


def bias_mod(dt, v=0.5):
    return mod_graph("bias", [h.make_node("Add", ["s", "b"], ["s_out"])], dt,
                     [nh.from_array(np.array(v, dtype=NPT[dt]), "b")])


def scale_mod(dt, v=0.5):
    return mod_graph("scale", [h.make_node("Mul", ["s", "c"], ["s_out"])], dt,
                     [nh.from_array(np.array(v, dtype=NPT[dt]), "c")])


def softcap_mod(dt, cap=2.0):
    c = nh.from_array(np.array(cap, dtype=NPT[dt]), "cap")
    return mod_graph("softcap", [h.make_node("Div", ["s", "cap"], ["d"]), h.make_node("Tanh", ["d"], ["t"]),
                                 h.make_node("Mul", ["t", "cap"], ["s_out"])], dt, [c])


def causal_mod(dt):
    i = lambda n, v: nh.from_array(np.array(v, dtype=np.int64), n)
    nodes = [h.make_node("Shape", ["s"], ["sh"]),
             h.make_node("Gather", ["sh", "i2"], ["L"], axis=0), h.make_node("Gather", ["sh", "i3"], ["S"], axis=0),
             h.make_node("Range", ["zero", "L", "one"], ["qr"]), h.make_node("Reshape", ["qr", "qs"], ["qi"]),
             h.make_node("Range", ["zero", "S", "one"], ["kr"]), h.make_node("Reshape", ["kr", "ks"], ["ki"]),
             h.make_node("GreaterOrEqual", ["qi", "ki"], ["m"]),
             h.make_node("Where", ["m", "s", "ninf"], ["s_out"])]
    inits = [i("zero", 0), i("one", 1), i("i2", 2), i("i3", 3), i("qs", [-1, 1]), i("ks", [1, -1]),
             nh.from_array(np.array(-np.inf, dtype=NPT[dt]), "ninf")]
    return mod_graph("causal", nodes, dt, inits)


class Corpus:
    def __init__(self, root):
        self.root = root
        self.names = []

    def add(self, name, nodes, inputs, outputs, inits, feeds, ref_nodes=None):
        """ref_nodes: the nodes whose reference outputs are expected (the
        reference does not read enclosing scopes from the modifiers)"""
        def model(nodes):
            g = h.make_graph(nodes, "g", inputs, outputs, inits)
            m = h.make_model(g, opset_imports=[h.make_opsetid("", 26), h.make_opsetid("ai.onnx.preview", 1)])
            m.ir_version = 13
            return m
        m = model(nodes)
        outs = ReferenceEvaluator(model(ref_nodes or nodes)).run(None, feeds)
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


def flex(c, r, name, dt, B, Hq, Hkv, L, S, E, Ev, extra_in=(), extra_feeds=None, inits=(), ref_attrs=None, **attrs):
    shp = {"Q": [B, Hq, L, E], "K": [B, Hkv, S, E], "V": [B, Hkv, S, Ev]}
    feeds = {k: r.randn(*v).astype(NPT[dt]) for k, v in shp.items()}
    feeds.update(extra_feeds or {})
    inputs = [h.make_tensor_value_info(k, dt, v) for k, v in shp.items()] + list(extra_in)
    node = h.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain="ai.onnx.preview", **attrs)
    ref = [h.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain="ai.onnx.preview", **ref_attrs)] if ref_attrs else None
    c.add(name, [node], inputs, [h.make_tensor_value_info("Y", dt, [B, Hq, L, Ev])], list(inits), feeds, ref)


def cases(c, r):
    F, H, D = TP.FLOAT, TP.FLOAT16, TP.DOUBLE
    flex(c, r, "flex_gqa_both_mods", F, 2, 4, 2, 3, 5, 8, 6, score_mod=bias_mod(F), prob_mod=scale_mod(F))
    flex(c, r, "flex_gqa4_causal", F, 1, 8, 2, 6, 6, 4, 4, score_mod=causal_mod(F), scale=0.3)
    flex(c, r, "flex_fp16_softcap", H, 1, 2, 2, 4, 7, 16, 8, score_mod=softcap_mod(F))
    flex(c, r, "flex_fp16_gqa_prob", H, 2, 6, 3, 3, 4, 8, 8, prob_mod=scale_mod(F, 2.0))
    flex(c, r, "flex_double_causal", D, 1, 2, 1, 5, 5, 4, 3, score_mod=causal_mod(D))
    # no bfloat16 case: onnx's reference multiplies bfloat16 matrices into
    # float32 (ml_dtypes' matmul), where the op's function body rounds the
    # scores to bfloat16 as onnx2c does
    flex(c, r, "flex_f32_prec_f16", F, 1, 2, 2, 3, 5, 8, 4, score_mod=bias_mod(H, 0.25), prob_mod=scale_mod(H),
         softmax_precision=TP.FLOAT16)
    flex(c, r, "flex_fp16_prec_f64", H, 1, 4, 2, 3, 5, 8, 4, score_mod=softcap_mod(D), softmax_precision=TP.DOUBLE)
    flex(c, r, "flex_identity_mod", F, 1, 2, 2, 3, 4, 4, 4, score_mod=mod_graph("id", [], F, out="s"),
         prob_mod=mod_graph("id", [h.make_node("Identity", ["s"], ["s_out"])], F))
    # a modifier reading a graph input and an initializer of the enclosing graph
    bias = r.randn(1, 1, 3, 4).astype(np.float32)
    w = np.array([0.5, 1.0, 2.0, -1.0], dtype=np.float32)
    nodes = [h.make_node("Add", ["s", "bias"], ["t"]), h.make_node("Mul", ["t", "w"], ["s_out"])]
    flex(c, r, "flex_outer_scope", F, 2, 2, 1, 3, 4, 4, 4, score_mod=mod_graph("outer", nodes, F),
         extra_in=[h.make_tensor_value_info("bias", F, [1, 1, 3, 4])], extra_feeds={"bias": bias},
         inits=[nh.from_array(w, "w")],
         ref_attrs={"score_mod": mod_graph("outer", nodes, F, [nh.from_array(bias, "bias"), nh.from_array(w, "w")])})
    # a modifier whose result does not depend on the scores (a constant)
    const = mod_graph("const", [h.make_node("Mul", ["s", "z"], ["s_out"])], F,
                      [nh.from_array(np.array(0.0, dtype=np.float32), "z")])
    flex(c, r, "flex_const_scores", F, 1, 1, 1, 2, 3, 4, 2, score_mod=const)
    # inside an If branch whose condition is known only at run time
    shp = [1, 2, 3, 4]
    io = lambda n: h.make_tensor_value_info(n, F, shp)
    node = lambda y, **a: h.make_node("FlexAttention", ["Q", "K", "V"], [y], domain="ai.onnx.preview", **a)
    then_g = h.make_graph([node("yt", score_mod=causal_mod(F), prob_mod=scale_mod(F, 3.0))], "then", [], [io("yt")])
    else_g = h.make_graph([h.make_node("Identity", ["V"], ["ye"])], "else", [], [io("ye")])
    feeds = {k: r.randn(*shp).astype(np.float32) for k in "QKV"}
    for v in (True, False):
        feeds["cond"] = np.array(v)
        c.add("flex_in_if_%d" % v, [h.make_node("If", ["cond"], ["Y"], then_branch=then_g, else_branch=else_g)],
              [io("Q"), io("K"), io("V"), h.make_tensor_value_info("cond", TP.BOOL, [])], [io("Y")], [], dict(feeds))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--keep", default=None, help="write the corpus here and keep it")
    a = ap.parse_args()
    root = a.keep or tempfile.mkdtemp(prefix="o2c_flex_")
    try:
        if a.keep:
            shutil.rmtree(root, ignore_errors=True)
            os.makedirs(root)
        c = Corpus(root)
        cases(c, np.random.RandomState(11))
        npass, nfail = run_corpus(root, c.names, a.compiler, a.jobs, ["--cuda-emu"])
        print("%d passed, %d failed, 0 skipped" % (npass, nfail))
        return 1 if nfail else 0
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
