#!/usr/bin/env python3
"""Weight-only quantization (part of make bench-quant): float products whose
weights are 8- or 4-bit constants, timed side by side in one run, one
thread each:

  ours wq     onnx2c's build (FusedWQMatMul: the weights 8- or 4-bit in the
              file, converted in the kernel)
  ours DQ     onnx2c with --disable-pass quantize on the DequantizeLinear
              form: the DequantizeLinear runs every inference (the fold
              pass does not grow constants), then the float product
  ORT         onnxruntime on the same file as ours wq (ORT_ENABLE_ALL)

The models (made here, fixed seed): `gemv_2048` (1 x 2048 times 2048 x
2048: one token of a transformer's projection) and `gemm_64x1024` (64 x
1024 times 1024 x 1024), int8 weights per column (DequantizeLinear ->
MatMul); `gemv_4096_int4` and `gemm_64x2048_int4`, 4-bit weights in blocks
of 32 along K with zero points as com.microsoft MatMulNBits (what
onnxruntime's MatMul4BitsQuantizer and onnxruntime-genai's int4 models
write; ORT runs its own MLAS 4-bit kernels, accuracy_level 0: float
products), their DQ build on the same weights as an int4 blocked
DequantizeLinear -> MatMul. Medians of alternating rounds, in-process timing
(tests/bench.py's harness), gcc -O3 -march=native; constants are the
generated headers' m_CONST_BYTES and m_ARENA_SIZE (the DQ build holds the
dequantized float weights in its arena). Never a timed assertion.

    .venv/bin/python tests/bench_weight_only.py [--rounds 5] [--write-docs]

--write-docs replaces the section of docs/BENCHMARKS.md between
<!-- bench-wq:begin --> and <!-- bench-wq:end -->."""
import argparse, datetime, os, shutil, statistics, subprocess, sys, tempfile, time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench  # noqa: E402
import bench_quant as bq  # noqa: E402

MODELS = {"gemv_2048": (1, 2048, 2048, 8), "gemm_64x1024": (64, 1024, 1024, 8),   # rows, K, N, bits
          "gemv_4096_int4": (1, 4096, 4096, 4), "gemm_64x2048_int4": (64, 2048, 2048, 4)}
BLOCK = 32   # the 4-bit models' block along K
SEED = 7


def graph_model(nodes, inits, rows, K, N, opset, ms=False):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [rows, K])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [rows, N])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)] + ([h.make_opsetid("com.microsoft", 1)] if ms else []))
    m.ir_version = 8 if opset < 21 else 10
    return m


def model(rows, K, N, bits):
    """(the weight-only model, its DequantizeLinear form, an input)"""
    r = np.random.RandomState(SEED)
    if bits == 8:
        w = r.randint(-127, 128, (K, N)).astype(np.int8)
        s = (r.rand(N) * 0.01 + 0.001).astype(np.float32)
        m = graph_model([h.make_node("DequantizeLinear", ["w", "s"], ["wd"], axis=1), h.make_node("MatMul", ["x", "wd"], ["y"])],
                        [nh.from_array(w, "w"), nh.from_array(s, "s")], rows, K, N, 13)
        return m, m, r.standard_normal((rows, K)).astype(np.float32)
    KB = K // BLOCK
    q = r.randint(0, 16, (N, K)).astype(np.uint8)
    s = (r.rand(N, KB) * 0.01 + 0.001).astype(np.float32)
    z = r.randint(0, 16, (N, KB)).astype(np.uint8)
    b = (q[:, 0::2] | (q[:, 1::2] << 4)).reshape(N, KB, BLOCK // 2)
    zp = (z[:, 0::2] | (z[:, 1::2] << 4)).reshape(-1)
    mq = graph_model([h.make_node("MatMulNBits", ["x", "b", "s", "z"], ["y"], domain="com.microsoft", K=K, N=N, bits=4,
                                  block_size=BLOCK)],
                     [nh.from_array(b, "b"), nh.from_array(s.reshape(-1), "s"), nh.from_array(zp, "z")], rows, K, N, 21, True)
    mdq = graph_model([h.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0, block_size=BLOCK),
                       h.make_node("MatMul", ["x", "wd"], ["y"])],
                      [h.make_tensor("w", TP.UINT4, [K, N], q.T.flatten().tolist()), nh.from_array(s.T.copy(), "ws"),
                       h.make_tensor("wz", TP.UINT4, [KB, N], z.T.flatten().tolist())], rows, K, N, 21)
    return mq, mdq, r.standard_normal((rows, K)).astype(np.float32)


def build(compiler, path, wd, flags, rows, K, N):
    os.makedirs(wd)
    src = os.path.join(wd, "m.c")
    subprocess.run([compiler, path, "-o", src, "--name", "m"] + flags, check=True, capture_output=True)
    hdr = open(os.path.join(wd, "m.h")).read().splitlines()
    const = next(int(l.split()[2]) for l in hdr if l.startswith("#define m_CONST_BYTES"))
    arena = next(int(l.split()[2]) for l in hdr if l.startswith("#define m_ARENA_SIZE"))
    open(os.path.join(wd, "main.c"), "w").write(bench.HARNESS % dict(ni=1, no=1, in_sz="%d," % (rows * K * 4),
                                                                     out_sz="%d," % (rows * N * 4)))
    exe = os.path.join(wd, "bench")
    subprocess.run(["gcc", "-O3", "-march=native", "-std=c99", "-w", "-o", exe, os.path.join(wd, "main.c"), src, "-lm"],
                   check=True, capture_output=True)
    return exe, (const, arena)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--docs-file", default=os.path.join(ROOT, "docs", "BENCHMARKS.md"))
    a = ap.parse_args()
    ort.set_default_logger_severity(3)
    work = tempfile.mkdtemp(prefix="o2c_bench_wq_")
    rows_out = []
    t0 = time.time()
    try:
        print("%-18s %6s %10s %10s %10s %9s %9s %20s %20s" % ("model", "bits", "ours wq", "ours DQ", "ORT", "wq/DQ",
                                                               "wq/ORT", "const wq/DQ bytes", "arena wq/DQ bytes"))
        for name, (rows, K, N, bits) in MODELS.items():
            m, mdq, x = model(rows, K, N, bits)
            path, path_dq = os.path.join(work, name + ".onnx"), os.path.join(work, name + "_dq.onnx")
            onnx.save(m, path)
            onnx.save(mdq, path_dq)
            xf = os.path.join(work, name + ".in")
            x.tofile(xf)
            w8, c8 = build(a.compiler, path, os.path.join(work, name, "wq"), [], rows, K, N)
            dq, cdq = build(a.compiler, path_dq, os.path.join(work, name, "dq"), ["--disable-pass", "quantize"], rows, K, N)
            sess = ort.InferenceSession(path, sess_options=bench._opts(), providers=["CPUExecutionProvider"])
            n = 50
            med = {"w8": [], "dq": [], "ort": []}
            for _ in range(a.rounds):
                for key, exe in (("w8", w8), ("dq", dq)):
                    med[key].append(float(subprocess.run([exe, str(n), xf], capture_output=True, text=True).stdout))
                for _ in range(3):
                    sess.run(None, {"x": x})
                ts = []
                for _ in range(n):
                    t = time.perf_counter()
                    sess.run(None, {"x": x})
                    ts.append((time.perf_counter() - t) * 1e3)
                med["ort"].append(statistics.median(ts))
            r = {k: statistics.median(v) for k, v in med.items()}
            cells = [name, "int8 per column" if bits == 8 else "int4 blocks of %d" % BLOCK, "%.4f" % r["w8"], "%.4f" % r["dq"], "%.4f" % r["ort"], "%.2f" % (r["w8"] / r["dq"]),
                     "%.2f" % (r["w8"] / r["ort"]), "%d/%d" % (c8[0], cdq[0]), "%d/%d" % (c8[1], cdq[1])]
            rows_out.append(cells)
            print("%-18s %6s %10s %10s %10s %9s %9s %20s %20s" % tuple(cells), flush=True)
        seconds = time.time() - t0
        if a.write_docs:
            md = ["<!-- bench-wq:begin -->",
                  "<!-- written by `tests/bench_weight_only.py --write-docs`; edits here are replaced at the next run -->",
                  "Weight-only quantization, latest run: %s, %s, %s, one thread. Command: `.venv/bin/python "
                  "tests/bench_weight_only.py --write-docs` (%.0f s; the script's docstring says what each column "
                  "is). ms: medians." % (datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                                         bench.git_commit(), bench.cpu_name(), seconds),
                  "",
                  "| model | weights | ours wq ms | ours DQ ms | ORT ms | wq/DQ | wq/ORT | constants wq/DQ bytes | arena wq/DQ bytes |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
            md += ["| " + " | ".join(c) + " |" for c in rows_out]
            md.append("<!-- bench-wq:end -->")
            bq.write_docs(a.docs_file, "\n".join(md) + "\n", "bench-wq")
            print("wrote %s (the bench-wq:begin/end section)" % os.path.relpath(a.docs_file, ROOT))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
