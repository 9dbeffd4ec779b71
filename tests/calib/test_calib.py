#!/usr/bin/env python3
"""--int8 calibration (compiler/calibrate.c) end to end.

  calibrators   the streaming histogram and the four calibrators
                (compiler/engine/histogram.c, run by build/.../tests/calib_hist)
                against numpy computing the same rules on the same values
                (tests/calib/rules.py), over distributions of one sign, both
                signs, heavy tails, outliers, constants and zeros, the values
                added whole and in chunks
  models        float models made here (a CNN with a residual, depthwise
                convs, pools and a Gemm; a transformer-style 3-D MatMul MLP;
                tables, Concat, MaxPool, SiLU) and two examples, calibrated
                on 8 sets, for each activation scheme (u8, s8, sym):
                  - the int8 build (gcc -std=c99 -pedantic -Wall -Wextra
                    -Werror, ASan+UBSan) against onnxruntime running the
                    calibrated QDQ model that --emit-onnx wrote as written
                    (no graph optimization: float ops between Q and DQ),
                    within one quantization step of the output's
                    DequantizeLinear plus the distance between that run and
                    onnxruntime's own integer kernels (ORT_ENABLE_ALL): steps
                    add up downstream in any two valid strategies (the rule
                    of tests/test_qdq.py)
                  - the int8 build against the float model: output SQNR at
                    least MIN_SQNR_DB on inputs it was not calibrated on
                  - --report: integer kernels, the calibration table
  cache         --calib-cache written by --calibrate, read back without
                it: byte-identical .c; two --calibrate runs: identical
  fallback      --keep-float NODE keeps that layer float; --min-sqnr above
                what all-int8 reaches sends layers back to float, the
                reported SQNR meets the target
  debug         --debug-tensors builds compared tensor by tensor with
                onnxruntime by tools/compare_tensors.py: three examples at
                -O2 and -O0 agree; an int8 build's tensors are dequantized and
                the first one below the threshold is named; refusals
  fp16          --fp16 on three examples and two of the models above: every
                float constant of 256 or more elements in half, outputs at
                least 60 dB from float; --fp16 --calibrate: the layers'
                SQNR with half constants measured, the same .c as --fp16
                alone when nothing is asked, --min-sqnr keeps constants
                float32 until the target is met (the build at least 60 dB
                on another input), the cache replays it (byte-identical)
                and is refused for --int8, an unreachable target keeps
                every constant float32, --keep-float; with --int8, layers
                fall back to fp16 before float32; --target cortex-m: the
                reference conv and product read half weights in place (no
                widening call, the float32 build's arena), at least 60 dB,
                arm-none-eabi-gcc warning-free with and without IEEE __fp16
  bad input     empty DIR, a set of the wrong shape, type or count, NaN in
                the data, a cache of another model, flags without --int8
                (or --fp16), an already quantized model: exit 1, a message,
                no output

The last line is 'N passed, N failed'; exit status 1 if anything failed."""
import argparse, os, re, shutil, subprocess, sys, tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rules  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import run_models as rm  # noqa: E402   (without_flags: builds made with other flags compared)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HARNESS = os.path.join(ROOT, "tests", "harness", "main.c")
SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
MIN_SQNR_DB = 20.0   # int8 against float on unseen inputs, for these small well-scaled models
SETS = 8

passed, failed = [0], []


def check(ok, what, detail=""):
    if ok:
        passed[0] += 1
    else:
        failed.append(what)
        print("FAIL %s %s" % (what, detail), flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


# ---- calibrators against numpy ---------------------------------------------------

def calibrators(tool, work):
    rng = np.random.default_rng(7)
    cases = {
        "relu_gauss": np.maximum(rng.normal(0, 1, 50000), 0),
        "gauss": rng.normal(0.3, 2, 50000),
        "laplace": rng.laplace(0, 1, 40000),
        "outliers": np.concatenate([rng.normal(0, 1, 30000), [40.0, -55.0, 80.0]]),
        "uniform_pos": rng.uniform(2, 5, 20000),
        "negative": -np.abs(rng.normal(0, 3, 20000)),
        "sparse": np.concatenate([np.zeros(5000), rng.normal(0, 1, 50)]),
        "constant": np.full(1000, 1.5),
        "zeros": np.zeros(1000),
        "growing": np.concatenate([rng.normal(0, 0.01, 5000), rng.normal(0, 1, 5000), rng.normal(0, 100, 5000)]),
    }
    for name, x in cases.items():
        x = x.astype(np.float32)
        f = os.path.join(work, name + ".f32")
        x.tofile(f)
        for chunk in (len(x), 997):
            for levels in (255, 254):
                r = run([tool, f, str(chunk), str(levels)])
                if r.returncode != 0:
                    check(False, "calib_hist %s" % name, r.stderr)
                    continue
                got = {}
                for line in r.stdout.split("\n"):
                    p = line.split()
                    if len(p) == 3:
                        got[p[0]] = (float.fromhex(p[1]), float.fromhex(p[2]))
                    elif len(p) == 2 and p[0] == "width":
                        got["width"] = float.fromhex(p[1])
                h = rules.Hist(x, chunk)
                check(got.get("width") == h.width, "%s chunk %d: width" % (name, chunk),
                      "%r vs numpy %r" % (got.get("width"), h.width))
                want = {"minmax": h.range("minmax", 0, levels),
                        "percentile99.99": h.range("percentile", 99.99, levels),
                        "percentile99.9": h.range("percentile", 99.9, levels),
                        "entropy": h.range("entropy", 0, levels),
                        "mse": h.range("mse", 0, levels)}
                for rule, w in want.items():
                    g = got.get(rule)
                    ok = g is not None and g == w
                    if not ok and g is not None:   # a tie: both thresholds score the same to rounding
                        ok = h.tie(rule.rstrip("0123456789."), levels, g, w)
                    check(ok, "%s chunk %d levels %d: %s" % (name, chunk, levels, rule), "ours %r numpy %r" % (g, w))


# ---- models ----------------------------------------------------------------------

def he(rng, shape, fan_in):
    return (rng.normal(0, 1, shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def cnn(rng):
    """Conv+Relu, depthwise Conv+Clip, pointwise Conv, residual Add+Relu,
    MaxPool, Conv with BatchNormalization, GlobalAveragePool, Flatten, Gemm"""
    inits = [numpy_helper.from_array(he(rng, (8, 3, 3, 3), 27), "w1"),
             numpy_helper.from_array(rng.normal(0, 0.1, 8).astype(np.float32), "b1"),
             numpy_helper.from_array(he(rng, (8, 1, 3, 3), 9), "wd"),
             numpy_helper.from_array(he(rng, (8, 8, 1, 1), 8), "wp"),
             numpy_helper.from_array(he(rng, (16, 8, 3, 3), 72), "w3"),
             numpy_helper.from_array(rng.uniform(0.5, 1.5, 16).astype(np.float32), "bn_s"),
             numpy_helper.from_array(rng.normal(0, 0.1, 16).astype(np.float32), "bn_b"),
             numpy_helper.from_array(rng.normal(0, 0.1, 16).astype(np.float32), "bn_m"),
             numpy_helper.from_array(rng.uniform(0.5, 1.5, 16).astype(np.float32), "bn_v"),
             numpy_helper.from_array(he(rng, (10, 16), 16), "wg"),
             numpy_helper.from_array(rng.normal(0, 0.1, 10).astype(np.float32), "bg"),
             numpy_helper.from_array(np.array(0, np.float32), "lo6"),
             numpy_helper.from_array(np.array(6, np.float32), "hi6")]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "wd"], ["cd"], name="dw", group=8, pads=[1, 1, 1, 1]),
             helper.make_node("Clip", ["cd", "lo6", "hi6"], ["rd"], name="relu6"),
             helper.make_node("Conv", ["rd", "wp"], ["cp"], name="pw"),
             helper.make_node("Add", ["cp", "r1"], ["s"], name="residual"),
             helper.make_node("Relu", ["s"], ["rs"], name="relu2"),
             helper.make_node("MaxPool", ["rs"], ["mp"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["mp", "w3"], ["c3"], name="conv3", pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c3", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"], name="bn3"),
             helper.make_node("Relu", ["bn"], ["r3"], name="relu3"),
             helper.make_node("GlobalAveragePool", ["r3"], ["gap"], name="gap"),
             helper.make_node("Flatten", ["gap"], ["fl"], name="flatten"),
             helper.make_node("Gemm", ["fl", "wg", "bg"], ["y"], name="fc", transB=1)]
    g = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def mlp(rng):
    """3-D MatMul + bias Add + Relu, MatMul + bias Add, residual Add, MatMul"""
    inits = [numpy_helper.from_array(he(rng, (32, 64), 32), "w1"),
             numpy_helper.from_array(rng.normal(0, 0.1, 64).astype(np.float32), "b1"),
             numpy_helper.from_array(he(rng, (64, 32), 64), "w2"),
             numpy_helper.from_array(rng.normal(0, 0.1, 32).astype(np.float32), "b2"),
             numpy_helper.from_array(he(rng, (32, 16), 32), "w3")]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["m1"], name="fc1"),
             helper.make_node("Add", ["m1", "b1"], ["a1"], name="fc1_bias"),
             helper.make_node("Relu", ["a1"], ["r1"], name="fc1_relu"),
             helper.make_node("MatMul", ["r1", "w2"], ["m2"], name="fc2"),
             helper.make_node("Add", ["m2", "b2"], ["a2"], name="fc2_bias"),
             helper.make_node("Add", ["a2", "x"], ["res"], name="residual"),
             helper.make_node("MatMul", ["res", "w3"], ["y"], name="fc3")]
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 12, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 12, 16])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def tables(rng):
    """Conv, SiLU (x * Sigmoid(x)), HardSwish, Tanh branch, Concat, MaxPool,
    AveragePool, Reshape, Transpose"""
    inits = [numpy_helper.from_array(he(rng, (8, 4, 3, 3), 36), "w1"),
             numpy_helper.from_array(he(rng, (8, 8, 1, 1), 8), "w2"),
             numpy_helper.from_array(he(rng, (6, 16, 1, 1), 16), "w3"),
             numpy_helper.from_array(np.array([1, 6, 16], np.int64), "shape")]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["c1"], ["sg"], name="sigmoid"),
             helper.make_node("Mul", ["c1", "sg"], ["silu"], name="silu"),
             helper.make_node("Conv", ["silu", "w2"], ["c2"], name="conv2"),
             helper.make_node("HardSwish", ["c2"], ["hs"], name="hardswish"),
             helper.make_node("Tanh", ["c1"], ["th"], name="tanh"),
             helper.make_node("Concat", ["hs", "th"], ["cat"], name="concat", axis=1),
             helper.make_node("MaxPool", ["cat"], ["mp"], name="maxpool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("AveragePool", ["mp"], ["ap"], name="avgpool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["ap", "w3"], ["c3"], name="conv3"),
             helper.make_node("Reshape", ["c3", "shape"], ["rs"], name="reshape"),
             helper.make_node("Transpose", ["rs"], ["y"], name="transpose", perm=[0, 2, 1])]
    g = helper.make_graph(nodes, "tables", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 6])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)


def example(name):
    d = os.path.join(ROOT, "examples", name)
    m = onnx.load(os.path.join(d, "model.onnx"))
    t = TensorProto()
    t.ParseFromString(open(os.path.join(d, "test_data_set_0", "input_0.pb"), "rb").read())
    return m, numpy_helper.to_array(t)


def inputs_like(rng, x0, n):
    """n inputs with x0's per-channel statistics (x0 None: N(0, 1) clipped)"""
    sd = float(x0.std()) if x0.std() > 0 else 1.0
    return [(np.clip(rng.normal(0, 1, x0.shape), -3, 3) * sd + x0.mean()).astype(np.float32) for _ in range(n)]


def write_sets(d, name, xs):
    for k, x in enumerate(xs):
        p = os.path.join(d, "set_%02d" % k)
        os.makedirs(p, exist_ok=True)
        open(os.path.join(p, "input_0.pb"), "wb").write(numpy_helper.from_array(x, name).SerializeToString())


def ort_session(path, literal=False):
    """literal: no graph optimization, so a QDQ model runs as written (float
    ops between QuantizeLinear and DequantizeLinear); else onnxruntime's
    integer kernels (ORT_ENABLE_ALL)"""
    import onnxruntime as ort
    so = ort.SessionOptions()
    if literal:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def build(compiler, work, model_path, flags, out="m.c"):
    src = os.path.join(work, out)
    r = run([compiler, model_path, "-o", src, "--name", "m"] + flags)
    return r, src


def run_c(work, src, x, out_sizes):
    exe = os.path.join(work, "prog")
    r = run(["gcc", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1", "-g"] + SAN +
            ["-I" + work, "-o", exe, HARNESS, src, "-lm"])
    if r.returncode != 0:
        return None, r.stderr[-2000:]
    fi = os.path.join(work, "in.bin")
    x.tofile(fi)
    outs = [os.path.join(work, "out%d.bin" % k) for k in range(len(out_sizes))]
    args = [exe, "%s:%d" % (fi, x.nbytes), "--"] + ["%s:%d" % (o, 4 * s) for o, s in zip(outs, out_sizes)]
    r = run(args, timeout=600)
    if r.returncode != 0:
        return None, "rc %d %s" % (r.returncode, r.stderr[-2000:])
    return [np.fromfile(o, np.float32) for o in outs], ""


def out_scales(qdq):
    """per graph output: the scale of the DequantizeLinear that makes it, or None"""
    init = {i.name: numpy_helper.to_array(i) for i in qdq.graph.initializer}
    prod = {o: n for n in qdq.graph.node for o in n.output}
    res = []
    for o in qdq.graph.output:
        n = prod.get(o.name)
        res.append(float(init[n.input[1]]) if n is not None and n.op_type == "DequantizeLinear" and n.input[1] in init
                   else None)
    return res


def sqnr(ref, got):
    ref = ref.astype(np.float64).ravel()
    err = np.sum((ref - got.astype(np.float64).ravel()) ** 2)
    return 200.0 if err == 0 else 10 * np.log10(max(np.sum(ref ** 2), 1e-30) / err)


def model_checks(compiler, work, tag, model, x0, rng):
    d = os.path.join(work, tag)
    os.makedirs(d)
    mp = os.path.join(d, "model.onnx")
    onnx.save(model, mp)
    iname = model.graph.input[0].name
    cal = os.path.join(d, "calib")
    write_sets(cal, iname, inputs_like(rng, x0, SETS))
    xs = inputs_like(rng, x0, 2)   # evaluation inputs, not calibrated on
    fsess = ort_session(mp)
    for scheme in ("u8", "s8", "sym"):
        w = os.path.join(d, scheme)
        os.makedirs(w)
        q = os.path.join(w, "q.onnx")
        rep = os.path.join(w, "report.txt")
        r, src = build(compiler, w, mp, ["--int8", "--calibrate", cal, "--int8-activations", scheme, "--emit-onnx", q,
                                         "--report=" + rep])
        what = "%s %s" % (tag, scheme)
        check(r.returncode == 0, what + ": compiles", r.stderr[-1500:])
        if r.returncode != 0:
            continue
        report = open(rep).read()
        m = re.search(r"float kernels: (\d+) of (\d+)", report)
        check(m is not None and int(m.group(1)) < int(m.group(2)), what + ": integer kernels in --report",
              m.group(0) if m else "")
        check("int8 calibration: %d sets" % SETS in report and " int8 " in report, what + ": calibration table in --report")
        qm = onnx.load(q)
        scales = out_scales(qm)
        qsess, qlit = ort_session(q), ort_session(q, literal=True)
        for x in xs:
            ref = fsess.run(None, {iname: x})
            ortq = qlit.run(None, {iname: x})
            spread = [float(np.max(np.abs(u - v))) for u, v in zip(qsess.run(None, {iname: x}), ortq)]
            got, err = run_c(w, src, x, [int(np.prod(o.shape)) for o in ref])
            check(got is not None, what + ": the int8 C runs", err)
            if got is None:
                break
            for k, (g, o, f) in enumerate(zip(got, ortq, ref)):
                s = scales[k]
                tol = ((s if s is not None else 0.02 * float(np.abs(o).max())) + spread[k]) * 1.001 + 1e-6
                diff = float(np.max(np.abs(g - o.ravel())))
                check(diff <= tol, what + ": output %d within one step of onnxruntime on the QDQ model" % k,
                      "max diff %.4g, step %s, onnxruntime's two strategies %.4g apart" % (diff, s, spread[k]))
                db = sqnr(f, g)
                check(db >= MIN_SQNR_DB, what + ": output %d SQNR against float" % k, "%.1f dB" % db)
    return mp, cal


def cache_checks(compiler, work, mp, cal):
    w = os.path.join(work, "cache")
    os.makedirs(w)
    cache = os.path.join(w, "calib.txt")
    r1, s1 = build(compiler, w, mp, ["--int8", "--calibrate", cal, "--calib-cache", cache], "a.c")
    check(r1.returncode == 0 and os.path.exists(cache), "cache: written", r1.stderr[-500:])
    r2, s2 = build(compiler, w, mp, ["--int8", "--calib-cache", cache], "a2.c")
    check(r2.returncode == 0, "cache: read back", r2.stderr[-500:])
    r3, s3 = build(compiler, w, mp, ["--int8", "--calibrate", cal], "a3.c")
    if r1.returncode == 0 and r2.returncode == 0 and r3.returncode == 0:
        body = lambda p: rm.without_flags(open(p).read().replace('#include "%s.h"' % os.path.basename(p)[:-2], ""))
        check(body(s1) == body(s2), "cache: the same .c from the cache")
        check(body(s1) == body(s3), "cache: the same .c from two --calibrate runs")
    lines = open(cache).read().split("\n") if os.path.exists(cache) else []
    check(lines and lines[0] == "onnx2c-calibration 1" and any(l.startswith("range ") for l in lines),
          "cache: the format's first line and range lines")
    # --calibration auto (the default): minmax, mse and percentile measured
    # on the sets the ranges did not come from, one kept; its ranges are
    # exactly those that calibrator gives alone (the same .c)
    rep = os.path.join(w, "auto.txt")
    r, sa = build(compiler, w, mp, ["--int8", "--calibrate", cal, "--report=" + rep], "auto.c")
    text = open(rep).read() if r.returncode == 0 else r.stderr
    m = re.search(r"calibrator auto: ranges from sets 1-(\d+), output SQNR on sets (\d+)-(\d+) with every layer "
                  r"int8: minmax ([-\d.]+) dB, mse ([-\d.]+) dB, percentile ([-\d.]+) dB: (minmax|mse|percentile) kept",
                  text)
    check(r.returncode == 0 and m is not None and "calibrator %s," % (m.group(7) if m else "?") in text,
          "calibration auto: three calibrators measured on held-out sets, one kept", text[-1500:])
    if m:
        dbs = {"minmax": float(m.group(4)), "mse": float(m.group(5)), "percentile": float(m.group(6))}
        kept = m.group(7)
        best = max(("mse", "percentile"), key=lambda k: dbs[k])
        want = best if dbs[best] >= dbs["minmax"] + 0.25 else "minmax"
        close = abs(dbs[best] - dbs["minmax"] - 0.25) < 0.006   # the printed figures are rounded
        check(int(m.group(2)) == int(m.group(1)) + 1 and (kept == want or close),
              "calibration auto: the best kept, minmax unless another is 0.25 dB better", str(dbs) + " " + kept)
        r, sk = build(compiler, w, mp, ["--int8", "--calibrate", cal, "--calibration", kept], "kept.c")
        body = lambda p: rm.without_flags(open(p).read().replace('#include "%s.h"' % os.path.basename(p)[:-2], ""))
        check(r.returncode == 0 and body(sa) == body(sk), "calibration auto: the kept calibrator's .c")
    one = os.path.join(w, "one_set")
    os.makedirs(one)
    first = sorted(os.listdir(cal))[0]
    shutil.copytree(os.path.join(cal, first), os.path.join(one, first))
    r, _ = build(compiler, w, mp, ["--int8", "--calibrate", one, "--report=" + rep], "one.c")
    text = open(rep).read() if r.returncode == 0 else r.stderr
    check(r.returncode == 0 and "calibrator minmax," in text and "calibrator auto:" not in text,
          "calibration auto: one set is calibrated by minmax", text[-800:])
    check("fp16 calibration" not in text, "report: an int8 build has no fp16 heading", text[-800:])


def fallback_checks(compiler, work, mp, cal):
    w = os.path.join(work, "fallback")
    os.makedirs(w)
    rep = os.path.join(w, "r.txt")
    r, _ = build(compiler, w, mp, ["--int8", "--calibrate", cal, "--keep-float", "conv3,fc", "--report=" + rep])
    check(r.returncode == 0, "keep-float: compiles", r.stderr[-500:])
    text = open(rep).read() if r.returncode == 0 else ""
    rows = [l for l in text.split("\n") if re.match(r"\s+(int8|float)\s.*\s(conv3|fc)$", l)]
    check(len(rows) == 2 and all(" float " in l and "--keep-float" in l for l in rows), "keep-float: both layers float",
          "\n".join(rows))
    r, _ = build(compiler, w, mp, ["--int8", "--calibrate", cal, "--min-sqnr", "45", "--report=" + rep])
    check(r.returncode == 0, "min-sqnr: compiles", r.stderr[-500:])
    text = open(rep).read() if r.returncode == 0 else ""
    m = re.search(r"output SQNR on \d+ calibration sets: ([-\d.]+) dB \(all layers int8: ([-\d.]+) dB", text)
    check(m is not None and float(m.group(1)) >= 45 and float(m.group(2)) < 45 and "fallback" in text,
          "min-sqnr: layers fell back until the target was met", m.group(0) if m else text[-800:])
    r, _ = build(compiler, w, mp, ["--int8", "--calibrate", cal, "--keep-float", "nosuchnode"])
    check(r.returncode == 1 and "nosuchnode" in r.stderr, "keep-float: an unknown node is refused", r.stderr)


def debug_tensors(compiler, work, mp, cal):
    """--debug-tensors and tools/compare_tensors.py: float builds agree with
    onnxruntime tensor by tensor; an int8 build's 8-bit tensors come with
    their scales and are compared as the float tensors they stand for"""
    tool = os.path.join(ROOT, "tools", "compare_tensors.py")
    for ex in ("small_convnet", "mobilenet_block", "self_attention"):
        for level in ("-O2", "-O0"):
            r = run([sys.executable, tool, os.path.join(ROOT, "examples", ex, "model.onnx"), "--quiet", "--compiler", compiler,
                     "--", level])
            m = re.search(r"(\d+) compared with onnxruntime", r.stdout)
            check(r.returncode == 0 and m and int(m.group(1)) > 0 and "every compared tensor within" in r.stdout,
                  "debug-tensors: %s %s agrees with onnxruntime" % (ex, level), r.stdout[-600:] + r.stderr[-600:])
    args = [sys.executable, tool, mp, "--compiler", compiler]
    r = run(args + ["--", "--int8", "--calibrate", cal])
    m = re.search(r"(\d+) compared with onnxruntime", r.stdout)
    check(r.returncode == 1 and "first off:" in r.stdout and "int8: scale" in r.stdout and m and int(m.group(1)) >= 8,
          "debug-tensors: an int8 build's tensors dequantized, the first one below 60 dB named", r.stdout[-1500:])
    r = run(args + ["--threshold", "12", "--quiet", "--", "--int8", "--calibrate", cal])
    check(r.returncode == 0, "debug-tensors: the int8 build within 12 dB", r.stdout[-800:])
    w = os.path.join(work, "debug")
    os.makedirs(w)
    for tag, flags in (("cuda", ["-o", os.path.join(w, "m.cu")]), ("caller_arena", ["--caller-arena"]),
                       ("profile", ["--profile"])):
        out = [] if tag == "cuda" else ["-o", os.path.join(w, tag + ".c")]
        r = run([compiler, mp, "--debug-tensors"] + out + flags)
        check(r.returncode == 1 and "--debug-tensors" in r.stderr and not os.listdir(w),
              "debug-tensors: refused with %s" % tag, r.stderr)


def report_totals(path):
    text = open(path).read()
    m = re.search(r"arena (\d+) bytes, (\d+) constants (\d+) bytes", text)
    h = re.search(r"fp16: (\d+) constants stored as half, (\d+) kept", text)
    return int(m.group(3)), (int(h.group(1)), int(h.group(2))) if h else (0, 0)


def fp16_checks(compiler, work, rng, cnn_path, cnn_cal):
    """--fp16: constants halved, outputs at least 60 dB from float; with
    --int8, the layers left float get half weights"""
    w = os.path.join(work, "fp16")
    os.makedirs(w)
    cases = [(ex, os.path.join(ROOT, "examples", ex, "model.onnx"), load_input(os.path.join(ROOT, "examples", ex)))
             for ex in ("small_convnet", "mobilenet_block", "srcnn_cubic")]
    for tag, shape in (("mlp", (1, 12, 32)), ("tables", (1, 4, 16, 16))):   # the models model_checks made
        cases.append((tag, os.path.join(work, tag, "model.onnx"), rng.normal(0, 1, shape).astype(np.float32)))
    for ex, mp, x in cases:
        m = onnx.load(mp)
        iname = [i.name for i in m.graph.input if i.name not in {t.name for t in m.graph.initializer}][0]
        ref = ort_session(mp).run(None, {iname: x})
        w32, w16 = os.path.join(w, ex + "_32"), os.path.join(w, ex + "_16")
        os.makedirs(w32)
        os.makedirs(w16)
        rep32, rep16 = os.path.join(w32, "r.txt"), os.path.join(w16, "r.txt")
        r32, _ = build(compiler, w32, mp, ["--report=" + rep32])
        r, src = build(compiler, w16, mp, ["--fp16", "--report=" + rep16])
        check(r.returncode == 0 and r32.returncode == 0, "fp16 %s: compiles" % ex, r.stderr[-800:])
        if r.returncode != 0:
            continue
        c32, _ = report_totals(rep32)
        c16, (nh, kept) = report_totals(rep16)
        # every float constant of 256 elements or more is half (smaller ones, biases, stay float32)
        check(nh > 0 and kept == 0 and c16 < c32, "fp16 %s: constants in half" % ex,
              "%d -> %d bytes, %d half, %d kept" % (c32, c16, nh, kept))
        got, err = run_c(w16, src, x, [int(np.prod(o.shape)) for o in ref])
        check(got is not None, "fp16 %s: runs" % ex, err)
        for k, (g, o) in enumerate(zip(got or [], ref)):
            db = sqnr(o, g)
            check(db >= 60, "fp16 %s: output %d at least 60 dB from float" % (ex, k), "%.1f dB" % db)
        # --target cortex-m: the reference conv and product read the half
        # weights where they are: no widening call, no float copy in the arena
        wm32, wm16 = os.path.join(w, ex + "_m32"), os.path.join(w, ex + "_m16")
        os.makedirs(wm32)
        os.makedirs(wm16)
        rm32, rm16 = os.path.join(wm32, "r.txt"), os.path.join(wm16, "r.txt")
        r32, _ = build(compiler, wm32, mp, ["--target", "cortex-m", "--report=" + rm32])
        r, src = build(compiler, wm16, mp, ["--target", "cortex-m", "--fp16", "--report=" + rm16])
        check(r.returncode == 0 and r32.returncode == 0, "fp16 cortex-m %s: compiles" % ex, r.stderr[-800:])
        if r.returncode != 0 or r32.returncode != 0:
            continue
        text = open(src).read()
        a32 = re.search(r"arena (\d+) bytes", open(rm32).read())
        a16 = re.search(r"arena (\d+) bytes", open(rm16).read())
        fused = len(re.findall(r"o2c_(?:conv|matmul)_(?:rows_)?f32h\(0", text))
        check(fused >= 1 and "o2c_h2f_f32(0" not in text and a16 and a32 and a16.group(1) == a32.group(1) and
              report_totals(rm16)[0] < report_totals(rm32)[0], "fp16 cortex-m %s: half weights read in place" % ex,
              "%d fused calls, arena %s vs %s" % (fused, a16 and a16.group(1), a32 and a32.group(1)))
        if shutil.which("arm-none-eabi-gcc"):   # Cortex-M4F, with and without IEEE __fp16
            for fmt in ([], ["-mfp16-format=ieee"]):
                r = run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-Os",
                         "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-c", src, "-o",
                         os.path.join(wm16, "m.o")] + fmt)
                check(r.returncode == 0, "fp16 cortex-m %s: arm-none-eabi-gcc %s warning-free" % (ex, " ".join(fmt)),
                      r.stderr[-800:])
        got, err = run_c(wm16, src, x, [int(np.prod(o.shape)) for o in ref])
        check(got is not None and all(sqnr(o, g) >= 60 for g, o in zip(got, ref)),
              "fp16 cortex-m %s: outputs at least 60 dB from float" % ex,
              err if got is None else ["%.1f" % sqnr(o, g) for g, o in zip(got, ref)])
    fp16_calibration(compiler, w, cnn_path, cnn_cal, rng)


def fp16_calibration(compiler, w, mp, cal, rng):
    """--fp16 with --calibrate: each layer measured with its constants in
    half; --min-sqnr and --keep-float keep constants float32; with --int8,
    fallback goes to fp16 first"""
    def rep_of(tag, flags):
        d = os.path.join(w, tag)
        os.makedirs(d)
        rep = os.path.join(d, "r.txt")
        r, src = build(compiler, d, mp, flags + ["--report=" + rep])
        return r, src, open(rep).read() if r.returncode == 0 else r.stderr[-800:]

    def sqnr_of(text):
        m = re.search(r"output SQNR on \d+ calibration sets: ([-\d.]+) dB \(all layers (?:fp16|int8): ([-\d.]+) dB", text)
        return (float(m.group(1)), float(m.group(2))) if m else (None, None)

    def kept(text):
        m = re.search(r"fp16: (\d+) constants stored as half, \d+ kept float32 \(a value beyond half's range\), "
                      r"(\d+) kept float32 by calibration", text)
        return (int(m.group(1)), int(m.group(2))) if m else (None, None)

    body = lambda p: rm.without_flags(open(p).read())
    _, plain, _ = rep_of("plain", ["--fp16"])
    r, s1, text = rep_of("measured", ["--fp16", "--calibrate", cal])
    got, all16 = sqnr_of(text)
    check(r.returncode == 0 and got is not None and got == all16 and re.search(r"\n\s+fp16\s+Conv", text) and
          "fp16 calibration" in text, "fp16 calibration: the layers' SQNR with half constants measured", text[-1500:])
    check(r.returncode == 0 and body(s1) == body(plain), "fp16 calibration: no target, the same .c as --fp16 alone")
    if got is None:
        return
    target = all16 + 6
    cache = os.path.join(w, "fp16.cache")
    r, s2, text = rep_of("target", ["--fp16", "--calibrate", cal, "--min-sqnr", "%.1f" % target, "--calib-cache", cache])
    got, _ = sqnr_of(text)
    nh, nk = kept(text)
    check(r.returncode == 0 and got is not None and got >= target and nk and nk >= 1 and
          "fallback to reach --min-sqnr" in text, "fp16 calibration: --min-sqnr keeps the most sensitive constants float32",
          text[-1500:])
    r, s3, _ = rep_of("from_cache", ["--fp16", "--calib-cache", cache])
    check(r.returncode == 0 and body(s2) == body(s3), "fp16 calibration: the cache gives the same .c")
    lines = open(cache).read().split("\n") if os.path.exists(cache) else []
    check("precision fp16" in lines and any(l.startswith("float ") for l in lines) and
          not any(l.startswith("range ") for l in lines), "fp16 calibration: the cache names the float32 layers")
    r, _, text = rep_of("int8_with_fp16_cache", ["--int8", "--calib-cache", cache])
    check(r.returncode == 1 and "the cache is for fp16" in text, "fp16 calibration: an fp16 cache refused for --int8", text)
    # the build computes what was measured: on an input it was not calibrated on
    m = onnx.load(mp)
    iname = m.graph.input[0].name
    x = rng.normal(0.5, 0.5, [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]).astype(np.float32)
    ref = ort_session(mp).run(None, {iname: x})
    out, err = run_c(os.path.join(w, "target"), s2, x, [int(np.prod(o.shape)) for o in ref])
    check(out is not None and all(sqnr(o, g) >= 60 for o, g in zip(ref, out)),
          "fp16 calibration: the build at least 60 dB from float on another input",
          err if out is None else ["%.1f" % sqnr(o, g) for o, g in zip(ref, out)])
    r, _, text = rep_of("unreachable", ["--fp16", "--calibrate", cal, "--min-sqnr", "200"])
    nh, nk = kept(text)
    check(r.returncode == 0 and nh == 0 and nk and re.search(r"\b0 layers fp16", text),
          "fp16 calibration: an unreachable target keeps every constant float32", text[-800:])
    r, _, text = rep_of("keep", ["--fp16", "--calibrate", cal, "--keep-float", "conv3"])
    rows = [l for l in text.split("\n") if re.match(r"\s+(fp16|float)\s.*\sconv3$", l)]
    check(r.returncode == 0 and len(rows) == 1 and " float " in rows[0] and "--keep-float" in rows[0] and kept(text)[1] >= 1,
          "fp16 calibration: --keep-float keeps a layer's constants float32", text[-800:])
    # with --int8: a layer falls back to fp16 before float32
    r, _, text = rep_of("mixed", ["--int8", "--fp16", "--calibrate", cal, "--min-sqnr", "45"])
    got, all8 = sqnr_of(text)
    m = re.search(r"(\d+) layers int8, (\d+) fp16, (\d+) float", text)
    check(r.returncode == 0 and got is not None and got >= 45 > all8 and m and int(m.group(2)) >= 1 and
          kept(text)[0] >= 1, "fp16 with int8: fallback layers go to fp16 first", text[-1500:])
    r, _, text = rep_of("mixed_keep", ["--int8", "--fp16", "--calibrate", cal, "--keep-float", "conv3,fc"])
    check(r.returncode == 0 and kept(text)[1] >= 1, "fp16 with int8: --keep-float keeps the constants float32", text[-800:])
    # a panel packed from a constant of fewer than 256 values (a 16-group
    # conv's 16x1x3x3 weights padded to the tile: 1152 values) stays float32
    # as its constant does, so that what calibration measures is what runs
    inits = [numpy_helper.from_array(he(rng, (16, 1, 3, 3), 9), "w1"),
             numpy_helper.from_array(rng.normal(0, 0.1, 16).astype(np.float32), "b1"),
             numpy_helper.from_array(he(rng, (16, 16, 1, 1), 16), "w2")]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="dw", group=16, pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu"),
             helper.make_node("Conv", ["r1", "w2"], ["y"], name="pw")]
    g = helper.make_graph(nodes, "dw16", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 24, 80])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 24, 80])], inits)
    mp = os.path.join(w, "dw16.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), mp)
    cal = os.path.join(w, "dw16_cal")
    write_sets(cal, "x", [rng.normal(0, 1, (1, 16, 24, 80)).astype(np.float32) for _ in range(2)])
    r, _, text = rep_of("dw16", ["--fp16"])
    check(r.returncode == 0 and kept(text)[0] == 1, "fp16: a panel packed from a small constant stays float32",
          text[-800:])
    r, _, text = rep_of("dw16_all", ["--fp16", "--calibrate", cal, "--min-sqnr", "200"])
    check(r.returncode == 0 and kept(text) == (0, 1), "fp16 calibration: every half constant is a measured layer's",
          text[-800:])


def load_input(d):
    p = os.path.join(d, "test_data_set_0", "input_0.pb")
    if not os.path.exists(p):
        return None
    t = TensorProto()
    t.ParseFromString(open(p, "rb").read())
    x = numpy_helper.to_array(t)
    return x if x.dtype == np.float32 else None


def bad_inputs(compiler, work, mp, cal, rng):
    w = os.path.join(work, "bad")
    os.makedirs(w)
    iname = onnx.load(mp).graph.input[0].name

    def expect(tag, flags, words, model=mp):
        src = os.path.join(w, tag + ".c")
        r = run([compiler, model, "-o", src] + flags)
        ok = r.returncode == 1 and all(s in r.stderr for s in words) and not os.path.exists(src) and \
            not os.path.exists(src[:-2] + ".h")
        check(ok, "bad input: " + tag, "rc %d: %s" % (r.returncode, r.stderr.strip()))

    empty = os.path.join(w, "empty")
    os.makedirs(empty)
    expect("empty_dir", ["--int8", "--calibrate", empty], ["no calibration sets"])
    expect("missing_dir", ["--int8", "--calibrate", os.path.join(w, "nope")], ["cannot open"])
    shape = os.path.join(w, "shape")
    write_sets(shape, iname, [np.zeros((1, 3, 8, 8), np.float32)])
    expect("wrong_shape", ["--int8", "--calibrate", shape], ["input_0.pb", "shape 1x3x8x8"])
    dtype = os.path.join(w, "dtype")
    write_sets(dtype, iname, [np.zeros((1, 3, 16, 16), np.float64)])
    expect("wrong_type", ["--int8", "--calibrate", dtype], ["input_0.pb", "float64"])
    count = os.path.join(w, "count")
    write_sets(count, iname, [np.zeros((1, 3, 16, 16), np.float32)])
    shutil.copy(os.path.join(count, "set_00", "input_0.pb"), os.path.join(count, "set_00", "input_1.pb"))
    expect("extra_input", ["--int8", "--calibrate", count], ["input_1.pb", "more"])
    nan = os.path.join(w, "nan")
    x = rng.normal(0, 1, (1, 3, 16, 16)).astype(np.float32)
    x[0, 1, 2, 3] = np.nan
    write_sets(nan, iname, [x])
    expect("nan", ["--int8", "--calibrate", nan], ["NaN"])
    other = os.path.join(w, "other.txt")
    with open(other, "w") as f:
        f.write("onnx2c-calibration 1\nmodel 0123456789abcdef\ncalibration minmax\nsets 1\nrange 0x0p+0 0x1p+0 x\n")
    expect("cache_other_model", ["--int8", "--calib-cache", other], ["another model"])
    garbage = os.path.join(w, "garbage.txt")
    with open(garbage, "w") as f:
        f.write("hello\n")
    expect("cache_garbage", ["--int8", "--calib-cache", garbage], ["not an onnx2c calibration cache"])
    expect("cache_missing", ["--int8", "--calib-cache", os.path.join(w, "none.txt")], ["no such file"])
    expect("int8_alone", ["--int8"], ["--calibrate DIR"])
    expect("calibrate_alone", ["--calibrate", cal], ["go with --int8"])
    expect("fp16_calibrator", ["--fp16", "--calibrate", cal, "--calibration", "mse"], ["go with --int8"])
    expect("fp16_keep_float_alone", ["--fp16", "--keep-float", "fc"], ["--calibrate DIR"])
    expect("bad_calibrator", ["--int8", "--calibrate", cal, "--calibration", "kl"], ["expected auto, minmax"])
    expect("bad_percentile", ["--int8", "--calibrate", cal, "--calibration", "percentile=20"], ["percentile"])
    expect("bad_scheme", ["--int8", "--calibrate", cal, "--int8-activations", "u4"], ["expected u8"])
    expect("bad_sqnr", ["--int8", "--calibrate", cal, "--min-sqnr", "x"], ["--min-sqnr"])
    # an already quantized model: its own QDQ nodes say how
    m = onnx.load(mp)
    nodes = [helper.make_node("QuantizeLinear", [iname, "qs", "qz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "qs", "qz"], ["xdq"])] + list(m.graph.node)
    for n in nodes[2:]:
        for j, i in enumerate(n.input):
            if i == iname:
                n.input[j] = "xdq"
    inits = list(m.graph.initializer) + [numpy_helper.from_array(np.array(0.05, np.float32), "qs"),
                                         numpy_helper.from_array(np.array(128, np.uint8), "qz")]
    g = helper.make_graph(nodes, "q", list(m.graph.input), list(m.graph.output), inits)
    qp = os.path.join(w, "quantized.onnx")
    onnx.save(helper.make_model(g, opset_imports=m.opset_import), qp)
    expect("already_quantized", ["--int8", "--calibrate", cal], ["already quantized"], qp)
    # an output sized by values known at run time (NonZero): the compiler's
    # run of the model needs every size (fuzzing finding #36)
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                           helper.make_node("NonZero", ["r"], ["nz"], name="nonzero")], "nz",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("nz", TensorProto.INT64, [4, None])])
    nzp = os.path.join(w, "nonzero.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), nzp)
    for tag, flags in (("runtime_size_int8", ["--int8"]), ("runtime_size_fp16", ["--fp16"])):
        expect(tag, flags + ["--calibrate", cal], ["NonZero 'nonzero'", "known only at run time"], nzp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    a = ap.parse_args()
    compiler = os.path.abspath(a.compiler)
    bdir = os.path.dirname(compiler)
    mk = ["make", "-s", "BUILD=" + os.path.relpath(bdir, ROOT)]
    if "asan" in bdir:
        mk += ["SAN=-fsanitize=address,undefined -fno-omit-frame-pointer", "CFLAGS=-O1 -g"]
    tool = os.path.join(bdir, "tests", "calib_hist")
    r = run(mk + [os.path.relpath(tool, ROOT)], cwd=ROOT)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        print("0 passed, 1 failed")
        return 1
    work = tempfile.mkdtemp(prefix="o2c_calib_")
    try:
        calibrators(tool, work)
        rng = np.random.default_rng(2024)
        mp, cal = model_checks(compiler, work, "cnn", cnn(rng), np.zeros((1, 3, 16, 16), np.float32) + 0.5, rng)
        model_checks(compiler, work, "mlp", mlp(rng), np.zeros((1, 12, 32), np.float32), rng)
        model_checks(compiler, work, "tables", tables(rng), np.zeros((1, 4, 16, 16), np.float32), rng)
        for ex in ("small_convnet", "mobilenet_block"):
            m, x0 = example(ex)
            model_checks(compiler, work, ex, m, x0, rng)
        cache_checks(compiler, work, mp, cal)
        fallback_checks(compiler, work, mp, cal)
        debug_tensors(compiler, work, mp, cal)
        fp16_checks(compiler, work, rng, mp, cal)
        bad_inputs(compiler, work, mp, cal, rng)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed[0], len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
