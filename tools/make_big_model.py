#!/usr/bin/env python3
"""Writes a transformer encoder shaped like all-MiniLM-L6-v2 (6 layers, hidden
384, 12 heads, FFN 1536, a 30522-token embedding Gather) with random weights,
for measuring onnx2c on large models (docs/LARGE_MODELS.md). Not run in CI.

  make_big_model.py OUT.onnx [--layers 6] [--hidden 384] [--heads 12] [--ffn 1536]
                    [--vocab 30522] [--seq 16] [--float] [--external]

Weights are int8 with a per-tensor DequantizeLinear in the graph (as a
dynamically-quantized export has them), or float32 with --float. --external
stores every initializer in OUT.onnx.data (onnx's save_as_external_data),
as a model over 2 GB must be stored.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(layers=6, hidden=384, heads=12, ffn=1536, vocab=30522, seq=16, use_float=False, seed=0, max_pos=512):
    rng = np.random.default_rng(seed)
    inits, nodes = [], []
    counter = [0]

    def name(p):
        counter[0] += 1
        return "%s_%d" % (p, counter[0])

    def weight(shape, scale=0.05):
        """A float weight: an int8 initializer and its DequantizeLinear, or a float32 initializer."""
        n = name("w")
        if use_float:
            w = (rng.standard_normal(shape, dtype=np.float32) * scale).astype(np.float32)
            inits.append(numpy_helper.from_array(w, n))
            return n
        q = rng.integers(-127, 128, size=shape, dtype=np.int8)
        inits.append(numpy_helper.from_array(q, n + "_q"))
        inits.append(numpy_helper.from_array(np.array(scale / 64.0, dtype=np.float32), n + "_s"))
        inits.append(numpy_helper.from_array(np.array(0, dtype=np.int8), n + "_z"))
        nodes.append(helper.make_node("DequantizeLinear", [n + "_q", n + "_s", n + "_z"], [n]))
        return n

    def vec(size, base=0.0, scale=0.02):
        n = name("b")
        v = (base + rng.standard_normal(size) * scale).astype(np.float32)
        inits.append(numpy_helper.from_array(v, n))
        return n

    def const(arr):
        n = name("k")
        inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    def op(t, ins, **attrs):
        out = name(t.lower())
        nodes.append(helper.make_node(t, ins, [out], **attrs))
        return out

    def linear(x, din, dout):
        return op("Add", [op("MatMul", [x, weight((din, dout))]), vec(dout)])

    def layernorm(x):
        return op("LayerNormalization", [x, vec(hidden, 1.0), vec(hidden)], axis=-1, epsilon=1e-12)

    dh = hidden // heads
    # embeddings: token Gather + position embedding (positions 0..seq-1 as a constant slice)
    tok = op("Gather", [weight((vocab, hidden)), "input_ids"], axis=0)
    pos_table = weight((max_pos, hidden))
    pos = op("Slice", [pos_table, const(np.array([0], np.int64)), const(np.array([seq], np.int64)),
                       const(np.array([0], np.int64))])
    x = layernorm(op("Add", [tok, pos]))
    shape_heads = const(np.array([1, seq, heads, dh], np.int64))
    shape_back = const(np.array([1, seq, hidden], np.int64))
    inv_sqrt = const(np.array(1.0 / np.sqrt(dh), np.float32))
    for _ in range(layers):
        def split_heads(t, perm):
            return op("Transpose", [op("Reshape", [t, shape_heads])], perm=perm)
        q = split_heads(linear(x, hidden, hidden), [0, 2, 1, 3])
        k = split_heads(linear(x, hidden, hidden), [0, 2, 3, 1])
        v = split_heads(linear(x, hidden, hidden), [0, 2, 1, 3])
        att = op("Softmax", [op("Mul", [op("MatMul", [q, k]), inv_sqrt])], axis=-1)
        ctx = op("Reshape", [op("Transpose", [op("MatMul", [att, v])], perm=[0, 2, 1, 3]), shape_back])
        x = layernorm(op("Add", [x, linear(ctx, hidden, hidden)]))
        h = linear(x, hidden, ffn)
        # GELU (erf form, as BERT exports have it)
        g = op("Mul", [op("Mul", [h, op("Add", [op("Erf", [op("Div", [h, const(np.array(np.sqrt(2.0), np.float32))])]),
                                              const(np.array(1.0, np.float32))])]), const(np.array(0.5, np.float32))])
        x = layernorm(op("Add", [x, linear(g, ffn, hidden)]))
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    graph = helper.make_graph(nodes, "minilm_like",
                              [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, seq])],
                              [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [1, seq, hidden])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnx2c-bench")
    model.ir_version = 8
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--hidden", type=int, default=384)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--ffn", type=int, default=1536)
    ap.add_argument("--vocab", type=int, default=30522)
    ap.add_argument("--seq", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--float", action="store_true", help="float32 weights (no DequantizeLinear)")
    ap.add_argument("--external", action="store_true", help="weights in OUT.onnx.data (external data)")
    a = ap.parse_args()
    m = build(a.layers, a.hidden, a.heads, a.ffn, a.vocab, a.seq, a.float, a.seed)
    if a.external:
        data = os.path.basename(a.out) + ".data"
        if os.path.exists(os.path.join(os.path.dirname(a.out) or ".", data)):
            os.remove(os.path.join(os.path.dirname(a.out) or ".", data))
        onnx.save_model(m, a.out, save_as_external_data=True, all_tensors_to_one_file=True, location=data,
                        size_threshold=1024)
    else:
        onnx.save_model(m, a.out)
    total = sum(os.path.getsize(p) for p in [a.out, a.out + ".data"] if os.path.exists(p))
    print("%s: %.1f MB" % (a.out, total / 1e6))


if __name__ == "__main__":
    sys.exit(main())
