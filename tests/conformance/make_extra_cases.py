#!/usr/bin/env python3
"""Extra node tests for the ops of compiler/ops/extra.c and the fixes beside
them (Pow of integers, Mod fmod=0 on reals, signed BitShift, SpaceToDepth
CRD, LpNormalization of zero slices): edge cases the onnx corpus does not
cover (broadcasting, other axes and types, constant conditions, empty
results). Expected values come from onnxruntime where it has the op at that
opset, else from the onnx reference implementation.

Usage: make_extra_cases.py OUT_DIR, then
    run_node_tests.py --corpus OUT_DIR --expected /dev/null [--cuda-emu]"""
import os, shutil, sys
import numpy as np, onnx
from onnx import helper as h, numpy_helper as nh
from onnx.reference import ReferenceEvaluator
OUT = sys.argv[1] if len(sys.argv) > 1 else "build/extra-cases"
shutil.rmtree(OUT, ignore_errors=True)
rng = np.random.default_rng(1)

def case(name, op, inputs, attrs=None, nout=1, opset=None, use_ort=False, consts=None):
    """inputs: list of (name, array); consts: list of (name, array) initializers"""
    attrs = attrs or {}
    consts = consts or []
    in_names = [n for n, _ in inputs] + [n for n, _ in consts]
    outs = ["y%d" % i for i in range(nout)]
    node = h.make_node(op, in_names, outs, **attrs)
    gi = [h.make_tensor_value_info(n, nh.from_array(a).data_type, a.shape) for n, a in inputs]
    inits = [nh.from_array(a, n) for n, a in consts]
    go = [onnx.ValueInfoProto(name=o) for o in outs]
    g = h.make_graph([node], name, gi, go, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset or 23)])
    m.ir_version = 10
    feeds = {n: a for n, a in inputs}
    if use_ort:
        import onnxruntime as ort
        s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        res = s.run(None, feeds)
    else:
        res = ReferenceEvaluator(m).run(None, feeds)
    # the outputs' types and shapes, from the results
    del m.graph.output[:]
    for o, r in zip(outs, res):
        r = np.asarray(r)
        m.graph.output.append(h.make_tensor_value_info(o, nh.from_array(r).data_type, r.shape))
    d = os.path.join(OUT, "test_" + name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(m, os.path.join(d, "model.onnx"))
    for k, (n, a) in enumerate(inputs):
        open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "wb").write(nh.from_array(a).SerializeToString())
    for k, r in enumerate(res):
        open(os.path.join(d, "test_data_set_0", "output_%d.pb" % k), "wb").write(nh.from_array(np.asarray(r)).SerializeToString())

f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
# Pow
case("pow_i32_bcast", "Pow", [("a", rng.integers(-4, 5, (3, 4)).astype(np.int32)), ("b", rng.integers(0, 6, (4,)).astype(np.int32))], use_ort=True)
case("pow_i64_neg", "Pow", [("a", np.array([1, -1, 2, -1, 3, 0], np.int64)), ("b", np.array([-3, -3, -1, -2, 2, 3], np.int64))], use_ort=True)
case("pow_i32_f32_bcast", "Pow", [("a", rng.integers(-4, 5, (2, 3)).astype(np.int32)), ("b", np.array([0.5, 2, 3], np.float32))], use_ort=True)
case("pow_i64_i32", "Pow", [("a", rng.integers(-4, 5, (2, 3)).astype(np.int64)), ("b", np.array([1, 2, 3], np.int32))], use_ort=True)
# Mod
case("mod_f32_bcast", "Mod", [("a", f32(3, 4) * 5), ("b", np.array([1.5, -2, 3, -0.7], np.float32))], {"fmod": 0}, opset=28)
case("mod_f64", "Mod", [("a", rng.standard_normal((7,)) * 5), ("b", np.array([1.5, -2, 3, -0.7, 2, 2, -3]))], {"fmod": 0}, opset=28)
# BitShift signed (opset 28: reference)
case("bitshift_i16_bcast_left", "BitShift", [("a", rng.integers(-300, 300, (3, 4)).astype(np.int16)), ("b", np.array([0, 3, 15, 17], np.int16))], {"direction": "LEFT"}, opset=28)
case("bitshift_i64_right", "BitShift", [("a", rng.integers(-2**40, 2**40, (3, 4)).astype(np.int64)), ("b", np.array([[0], [63], [-1]], np.int64))], {"direction": "RIGHT"}, opset=28)
# CumProd
case("cumprod_3d_axis1_rev_excl", "CumProd", [("x", f32(2, 3, 4)), ("axis", np.array(1, np.int64))], {"reverse": 1, "exclusive": 1}, opset=26)
case("cumprod_i64_axis_neg", "CumProd", [("x", rng.integers(-3, 4, (3, 4)).astype(np.int64)), ("axis", np.array(-1, np.int32))], {}, opset=26)
# ReverseSequence
case("revseq_batch0_3d", "ReverseSequence", [("x", f32(3, 5, 2)), ("l", np.array([1, 5, 3], np.int64))], {"batch_axis": 0, "time_axis": 1}, use_ort=True)
case("revseq_time0_3d_i32", "ReverseSequence", [("x", rng.integers(0, 100, (4, 3, 2)).astype(np.int32)), ("l", np.array([4, 2, 1], np.int64))], {}, use_ort=True)
# GroupNorm
case("groupnorm21_5d", "GroupNormalization", [("x", f32(2, 6, 3, 2, 2)), ("s", f32(6)), ("b", f32(6))], {"num_groups": 3, "epsilon": 1e-3}, opset=21, use_ort=True)
case("groupnorm21_3d_f64", "GroupNormalization", [("x", rng.standard_normal((2, 4, 5))), ("s", rng.standard_normal(4)), ("b", rng.standard_normal(4))], {"num_groups": 2}, opset=21, use_ort=True)
case("groupnorm18", "GroupNormalization", [("x", f32(2, 6, 4)), ("s", f32(3)), ("b", f32(3))], {"num_groups": 3}, opset=18)
# Compress with constant condition
case("compress_const_axis1", "Compress", [("x", f32(2, 5, 3))], {"axis": 1}, consts=[("c", np.array([1, 0, 1, 1], bool))], use_ort=True)
case("compress_const_noaxis", "Compress", [("x", f32(2, 5))], {}, consts=[("c", np.array([0, 1, 0, 0, 1, 1, 0], bool))], use_ort=True)
case("compress_const_all0", "Compress", [("x", f32(2, 5))], {"axis": 0}, consts=[("c", np.array([0, 0], bool))], use_ort=True)
# Unique
case("unique_axis1_sorted", "Unique", [("x", np.array([[1, 2, 1, 3, 2], [4, 5, 4, 6, 5]], np.int64))], {"axis": 1, "sorted": 1}, nout=4)
case("unique_axis0_unsorted", "Unique", [("x", np.array([[3, 4], [1, 5], [3, 4], [0, 6], [1, 5]], np.int64))], {"axis": 0, "sorted": 0}, nout=4)
case("unique_f32_sorted", "Unique", [("x", np.array([3.5, -1, 3.5, 0, -1, 7], np.float32))], {}, nout=4)
case("unique_y_only", "Unique", [("x", np.array([[3, 1], [1, 3]], np.int32))], {}, nout=1)
# NonZero
case("nonzero_3d_f32", "NonZero", [("x", (rng.random((2, 3, 4)) > 0.6).astype(np.float32))], {}, use_ort=True)
case("nonzero_none", "NonZero", [("x", np.zeros((2, 3), np.int32))], {}, use_ort=True)
# NMS
boxes = rng.random((2, 8, 4)).astype(np.float32)
scores = rng.random((2, 3, 8)).astype(np.float32)
case("nms_rand", "NonMaxSuppression", [("b", boxes), ("s", scores), ("m", np.array([3], np.int64)), ("i", np.array([0.3], np.float32)), ("t", np.array([0.2], np.float32))], {}, use_ort=True)
case("nms_center_nothr", "NonMaxSuppression", [("b", boxes), ("s", scores), ("m", np.array([10], np.int64)), ("i", np.array([0.1], np.float32))], {"center_point_box": 1}, use_ort=True)
# TfIdf
X = rng.integers(0, 6, (3, 9)).astype(np.int64)
case("tfidf_idf_w", "TfIdfVectorizer", [("x", X)], {"mode": "IDF", "min_gram_length": 1, "max_gram_length": 3, "max_skip_count": 2, "ngram_counts": [0, 3, 7], "ngram_indexes": [0, 1, 2, 3, 4, 5, 6], "pool_int64s": [1, 2, 3, 1, 2, 4, 5, 0, 1, 2, 3, 4, 5], "weights": [0.5, 1, 2, 3, 4, 5, 6]}, use_ort=True)
case("tfidf_tfidf_nw_i32", "TfIdfVectorizer", [("x", X.astype(np.int32)[0])], {"mode": "TFIDF", "min_gram_length": 2, "max_gram_length": 2, "max_skip_count": 1, "ngram_counts": [0, 3], "ngram_indexes": [2, 1, 0, 3, 4], "pool_int64s": [1, 2, 3, 1, 2, 4, 5]}, use_ort=True)
case("tfidf_tfidf_w", "TfIdfVectorizer", [("x", X)], {"mode": "TFIDF", "min_gram_length": 1, "max_gram_length": 2, "max_skip_count": 3, "ngram_counts": [0, 3], "ngram_indexes": [2, 1, 0, 3, 4], "pool_int64s": [1, 2, 3, 1, 2, 4, 5], "weights": [1.5, 2, 3, 4, 5]}, use_ort=True)
# SwiGLU / Swish
case("swish_alpha", "Swish", [("x", f32(3, 4))], {"alpha": 0.7}, opset=24)
case("swiglu_f64", "SwiGLU", [("a", rng.standard_normal((3, 4))), ("b", rng.standard_normal((3, 4)))], {"alpha": 1.5}, opset=28)
# SpaceToDepth CRD/DCR bigger
case("s2d_crd", "SpaceToDepth", [("x", f32(2, 3, 4, 6))], {"blocksize": 2, "mode": "CRD"}, opset=25)
case("s2d_dcr", "SpaceToDepth", [("x", f32(2, 3, 6, 6))], {"blocksize": 3}, opset=25)
# LpNorm zero slices
x = f32(3, 4); x[1] = 0
case("l1norm_zero", "LpNormalization", [("x", x)], {"axis": 1, "p": 1}, opset=21, use_ort=True)
case("l2norm_zero", "LpNormalization", [("x", x)], {"axis": 1, "p": 2}, opset=21, use_ort=True)
print("wrote", len(os.listdir(OUT)), "cases to", OUT)
