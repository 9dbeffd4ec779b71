#!/usr/bin/env python3
"""Weight-only quantization (part of make bench-quant): float products whose
weights are the DequantizeLinear of a constant 8-bit matrix (per column,
int8), timed side by side in one run, one thread each:

  ours w8     onnx2c's build (the quantize pass's FusedWQMatMul: the
              weights 8-bit in the file, converted in the kernel)
  ours DQ     onnx2c with --disable-pass quantize: the DequantizeLinear runs
              every inference (the fold pass does not grow constants), then
              the float product
  ORT         onnxruntime on the same file (ORT_ENABLE_ALL)

The models (made here, fixed seed): `gemv_2048` (1 x 2048 times 2048 x
2048: one token of a transformer's projection) and `gemm_64x1024` (64 x
1024 times 1024 x 1024). Medians of alternating rounds, in-process timing
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

MODELS = {"gemv_2048": (1, 2048, 2048), "gemm_64x1024": (64, 1024, 1024)}   # rows, K, N
SEED = 7


def model(rows, K, N):
    r = np.random.RandomState(SEED)
    w = r.randint(-127, 128, (K, N)).astype(np.int8)
    s = (r.rand(N) * 0.01 + 0.001).astype(np.float32)
    g = h.make_graph([h.make_node("DequantizeLinear", ["w", "s"], ["wd"], axis=1), h.make_node("MatMul", ["x", "wd"], ["y"])],
                     "g", [h.make_tensor_value_info("x", TP.FLOAT, [rows, K])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [rows, N])], [nh.from_array(w, "w"), nh.from_array(s, "s")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    return m, r.standard_normal((rows, K)).astype(np.float32)


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
        print("%-14s %10s %10s %10s %9s %9s %20s %20s" % ("model", "ours w8", "ours DQ", "ORT", "w8/DQ", "w8/ORT",
                                                          "const w8/DQ bytes", "arena w8/DQ bytes"))
        for name, (rows, K, N) in MODELS.items():
            m, x = model(rows, K, N)
            path = os.path.join(work, name + ".onnx")
            onnx.save(m, path)
            xf = os.path.join(work, name + ".in")
            x.tofile(xf)
            w8, c8 = build(a.compiler, path, os.path.join(work, name, "w8"), [], rows, K, N)
            dq, cdq = build(a.compiler, path, os.path.join(work, name, "dq"), ["--disable-pass", "quantize"], rows, K, N)
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
            cells = [name, "%.4f" % r["w8"], "%.4f" % r["dq"], "%.4f" % r["ort"], "%.2f" % (r["w8"] / r["dq"]),
                     "%.2f" % (r["w8"] / r["ort"]), "%d/%d" % (c8[0], cdq[0]), "%d/%d" % (c8[1], cdq[1])]
            rows_out.append(cells)
            print("%-14s %10s %10s %10s %9s %9s %20s %20s" % tuple(cells), flush=True)
        seconds = time.time() - t0
        if a.write_docs:
            md = ["<!-- bench-wq:begin -->",
                  "<!-- written by `tests/bench_weight_only.py --write-docs`; edits here are replaced at the next run -->",
                  "Weight-only quantization, latest run: %s, %s, %s, one thread. Command: `.venv/bin/python "
                  "tests/bench_weight_only.py --write-docs` (%.0f s; the script's docstring says what each column "
                  "is). ms: medians." % (datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                                         bench.git_commit(), bench.cpu_name(), seconds),
                  "",
                  "| model | ours w8 ms | ours DQ ms | ORT ms | w8/DQ | w8/ORT | constants w8/DQ bytes | arena w8/DQ bytes |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
            md += ["| " + " | ".join(c) + " |" for c in rows_out]
            md.append("<!-- bench-wq:end -->")
            bq.write_docs(a.docs_file, "\n".join(md) + "\n", "bench-wq")
            print("wrote %s (the bench-wq:begin/end section)" % os.path.relpath(a.docs_file, ROOT))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
