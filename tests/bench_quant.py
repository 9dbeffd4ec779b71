#!/usr/bin/env python3
"""make bench-quant: quantized (QDQ int8) models, side by side in one run,
one thread each: onnx2c's build of the quantized model (ours int8),
onnxruntime on the same quantized model (ORT int8: ORT_ENABLE_ALL, which
fuses the QDQ groups into its integer kernels; 1 intra-op and 1 inter-op
thread, sequential), onnx2c's build of the float original (ours fp32) and
onnxruntime on the float original (ORT fp32). The generated C is compiled by
`onnx2c Q.onnx -o m.c --name m` (default -O2) and built with gcc -O3
-march=native, timed in-process by tests/bench.py's harness (the median of N
runs after warm-up; N calibrated to about 0.3 s a round, at least 3); the
rounds alternate between the four and the medians of the rounds are
compared. Never a timed assertion: the targets below are printed, counted,
not enforced.

Per model, one row:
  ours int8, ORT int8, ours fp32, ORT fp32   median latency, ms
  i8/f32      ours int8 / ours fp32 (target <= 0.6)
  i8/ORT      ours int8 / ORT int8 (target < 1: faster than onnxruntime)
  arena       m_ARENA_SIZE of the generated header, int8 -> fp32 build, and
              their ratio (target <= 0.3)
  const       m_CONST_BYTES (weights and tables in the generated file),
              int8 -> fp32, and their ratio (target <= 0.3)
  kernels     the int8 build's kernel calls (rows of onnx2c --report):
              float (q-dq) / all. float: the rows whose precision column
              says float (input 0 or output 0 a float type, quantizing and
              dequantizing calls included; from a report without that
              column: a float output or a bare QuantizeLinear); q-dq: how
              many of those are a bare QuantizeLinear or DequantizeLinear
              (the conversions at the float edges of the graph)
  err         the quantization error of ours int8 / of ORT int8: max
              |int8 output - ORT fp32 output| over the outputs, as a
              percentage of max |ORT fp32 output| (a sanity check: the two
              int8 strategies round differently; onnxruntime's fused
              integer kernels may be the further one)
  int GOPS    the largest (by operations) integer Conv/MatMul/Gemm layer of
              the int8 build, timed in a profiling build (onnx2c --profile,
              the same flags): operations (2 per multiply-accumulate,
              counted from the ONNX node's weight and output shapes) over
              its time, and its share of the vpmaddwd peak below

The models:
  1. float models made with test_qdq's Net (deterministic He-scaled weights,
     fixed seeds), at MLPerf Tiny sizes: kws_dscnn (DS-CNN, 1x1x49x10, Conv
     10x4 stride 2 to 64 channels, 4 depthwise-separable blocks, average
     pool, FC 12, Softmax), autoencoder (anomaly detection, Gemm
     640-128-128-128-128-8-128-128-128-128-640), resnet8 (image
     classification, 1x3x32x32: Conv 16, 3 residual stages of 16/32/64
     channels, average pool, FC 10, Softmax), and test_qdq's resnet_block,
     depthwise and conv_relu on larger inputs; each quantized by
     onnxruntime.quantization.quantize_static (QDQ, int8 weights per channel,
     full range: reduce_range=False, as users quantize; MinMax calibration
     on test_qdq's 8 calibration inputs) with int8 (_i8) and uint8 (_u8)
     activations;
  2. build/real-models/nudenet_yolov8n_qdq (tests/models/fetch.py) against
     build/real-models/nudenet_yolov8n, when fetched (the quantized model's
     input for all four);
  3. the float CNNs of ../shared/models when that folder exists (mnist_cntk,
     super_resolution_pytorch, ultraface_rfb320, vww_mobilenetv1_025),
     quantized here into a temporary folder (quant_pre_process, then
     quantize_static QDQ, per channel, int8 activations, MinMax calibration
     on 8 inputs: the test input plus N(0, (0.05 std)^2) noise, fixed seed);
     a model that does not quantize is skipped with the reason.
     (nnsplit_bilstm and ppocrv4_rec_svtr are left out unless --only names
     them: they quantize, but the LSTM stays float, so the int8 build is
     the float one plus conversions, and the transformer keeps its
     attention largely in float, with the slowest builds of the set.)

Also: the int8 peak of one core measured in the same run (a C loop of
_mm256_madd_epi16, vpmaddwd: 16 int16 multiply-accumulates, 32 operations,
an instruction, each added by a vpaddd into one of 8 independent
accumulator chains, each chain its own multiplicand so that the compiler
shares no product: the madd + add pair of an int16 GEMM's inner loop); with AVX-512
VNNI also vpdpbusd on zmm, 64 u8 x s8 multiply-accumulates an instruction,
in 16 chains; with AVX-VNNI vpdpbusd on ymm), each the higher of a
measurement at the start and one at the end, and the fp32 FMA peak of
tests/bench.py for reference. Closing lines: the geometric means of
i8/f32 and i8/ORT, and how many models meet each target.

    .venv/bin/python tests/bench_quant.py [--rounds 5] [--only NAME,...]
        [--compiler build/onnx2c] [--write-docs [--docs-file F]] [--keep DIR]

--only takes model names (kws_dscnn: both its rows; kws_dscnn_i8: one).
--write-docs replaces the section of docs/BENCHMARKS.md between
<!-- bench-quant:begin --> and <!-- bench-quant:end --> (appended at the end
of the file the first time). The builds are compiled first (two at a time,
nothing timed meanwhile), then the models are timed one after the other."""
import argparse, concurrent.futures, datetime, json, logging, math, os, re, shutil, statistics, subprocess, sys, \
    tempfile, time, traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench   # (sets the BLAS threads to 1 before numpy loads)
import test_qdq

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper as nh

ROOT = bench.ROOT
REAL = os.path.join(ROOT, "build", "real-models")
# O2C_SHARED_MODELS: another folder of those models (a pack's, tests/gpu/pack.py)
SHARED = os.path.abspath(os.environ.get("O2C_SHARED_MODELS") or os.path.join(ROOT, "..", "shared", "models"))
SHARED_CNNS = ["mnist_cntk", "super_resolution_pytorch", "ultraface_rfb320", "vww_mobilenetv1_025"]
SHARED_OTHERS = ["nnsplit_bilstm", "ppocrv4_rec_svtr"]   # only when --only names them
CALIB_NOISE = 0.05   # the shared models' calibration inputs: x + N(0, (0.05 std(x))^2)
CALIB_SEED = 20261128
TARGET_SPEED, TARGET_ORT, TARGET_MEM = 0.6, 1.0, 0.3
FLOAT_TYPES = ("float32", "float16", "bfloat16", "float64", "double", "float")
QDQ_OPS = ("QuantizeLinear", "DequantizeLinear")
MAC_OPS = ("Conv", "ConvTranspose", "MatMul", "Gemm", "QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger")

# tests/bench.py's timing harness, plus: with one more argument, the outputs
# of the last run written to that file (the error column). bench.build
# formats bench.HARNESS when it builds; without the anchor, no error column.
_DUMP = ("    if (argc > 2 + %(ni)d) {\n"
         "        FILE *o = fopen(argv[2 + %(ni)d], \"wb\");\n"
         "        if (!o) return 4;\n"
         "        for (i = 0; i < %(no)d; i++) fwrite(outs[i], 1, (size_t)out_sz[i], o);\n"
         "        fclose(o);\n"
         "    }\n")
_ANCHOR = "    qsort(t, (size_t)n, sizeof(double), cmp);\n"
DUMPS = _ANCHOR in bench.HARNESS
if DUMPS:
    bench.HARNESS = bench.HARNESS.replace(_ANCHOR, _DUMP + _ANCHOR)


# ---------------------------------------------------------------- the models

def kws_dscnn(n):
    """MLPerf Tiny keyword spotting: DS-CNN (the 'S' model), 1x1x49x10 MFCCs."""
    x = n.op("Relu", [n.conv("x", 1, 64, (10, 4), strides=[2, 2], pads=[4, 1, 5, 1])])   # 'same': 25x5
    for _ in range(4):
        x = n.op("Relu", [n.conv(x, 64, 64, (3, 3), group=64, pads=[1, 1, 1, 1])])
        x = n.op("Relu", [n.conv(x, 64, 64, (1, 1))])
    x = n.op("AveragePool", [x], kernel_shape=[25, 5])
    n.op("Softmax", [n.gemm(n.op("Flatten", [x]), 64, 12)], axis=1)
    return [1, 1, 49, 10], 13


def autoencoder(n):
    """MLPerf Tiny anomaly detection: the dense autoencoder on 640 values
    (its BatchNorms folded into the Gemms)."""
    x, dims = "x", [640, 128, 128, 128, 128, 8, 128, 128, 128, 128, 640]
    for k in range(len(dims) - 1):
        x = n.gemm(x, dims[k], dims[k + 1])
        if k < len(dims) - 2:
            x = n.op("Relu", [x])
    return [1, 640], 13


def resnet8(n):
    """MLPerf Tiny image classification: ResNet-8 on CIFAR-10's 1x3x32x32
    (its BatchNorms folded into the Convs)."""
    x = n.op("Relu", [n.conv("x", 3, 16, (3, 3), pads=[1, 1, 1, 1])])
    cin = 16
    for cout, stride in ((16, 1), (32, 2), (64, 2)):
        y = n.op("Relu", [n.conv(x, cin, cout, (3, 3), pads=[1, 1, 1, 1], strides=[stride, stride])])
        y = n.conv(y, cout, cout, (3, 3), pads=[1, 1, 1, 1])
        sc = x if stride == 1 and cin == cout else n.conv(x, cin, cout, (1, 1), strides=[stride, stride])
        x = n.op("Relu", [n.op("Add", [y, sc])])
        cin = cout
    x = n.op("AveragePool", [x], kernel_shape=[8, 8])
    n.op("Softmax", [n.gemm(n.op("Flatten", [x]), 64, 10)], axis=1)
    return [1, 3, 32, 32], 13


# test_qdq's models on larger inputs (their layers as they are): name -> shape
BUMPED = {"resnet_block": [1, 8, 32, 32], "depthwise": [1, 16, 56, 56], "conv_relu": [1, 3, 96, 96]}
OWN = [(kws_dscnn, 1), (autoencoder, 2), (resnet8, 3)]   # (function, seed)


def synthetic():
    """[(name, float ModelProto, test input, calibration inputs, note)], in
    the table's order; deterministic (fixed seeds, as test_qdq's)."""
    out = []

    def calib(shape):
        r = np.random.RandomState(test_qdq.CALIB_SEED)
        return [test_qdq.sample(r, shape) for _ in range(test_qdq.CALIB_N)]

    for make, seed in OWN:
        r = np.random.RandomState(9000 + seed)
        net = test_qdq.Net(r)
        shape, opset = make(net)
        m = net.model(shape, opset)
        out.append((make.__name__, m, test_qdq.sample(r, shape), calib(shape), "x".join(map(str, shape))))
    for k, make in enumerate(test_qdq.MODELS):
        if make.__name__ not in BUMPED:
            continue
        r = np.random.RandomState(100 + k)   # test_qdq.build_models' seed for it
        net = test_qdq.Net(r)
        _, opset = make(net)
        shape = BUMPED[make.__name__]
        m = net.model(shape, opset)
        out.append((make.__name__, m, test_qdq.sample(r, shape), calib(shape),
                    "test_qdq's, on %s" % "x".join(map(str, shape))))
    return out


class _Quiet:
    """onnxruntime's quantizer logs advice at every call: at ERROR here."""

    def __enter__(self):
        self.log = logging.getLogger()
        self.level = self.log.level
        self.log.setLevel(logging.ERROR)

    def __exit__(self, *a):
        self.log.setLevel(self.level)


def quantize(src, feeds, acts, pre=False):
    """src (a ModelProto or a path) quantized by quantize_static: QDQ, int8
    weights per channel, full range; acts 'i8' or 'u8'; calibrated on feeds
    (a list of {input: array}); the model's opset raised to 13 where lower
    (per-channel quantization needs it), weights listed as graph inputs
    taken out of them (onnxruntime's advice: its optimizer folds nothing
    into an input); pre: quant_pre_process first (its
    optimizations fold BatchNorms into Convs; symbolic shape inference off).
    Returns the quantized ModelProto (raises what the quantizer raises)."""
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, \
        quantize_static
    it = iter(feeds)

    class Reader(CalibrationDataReader):
        def get_next(self):
            return next(it, None)

    cwd, d = os.getcwd(), tempfile.mkdtemp(prefix="o2c_bq_q_")
    try:
        os.chdir(d)   # (what the quantizer leaves in the working folder stays in d)
        with _Quiet():
            m = src if isinstance(src, onnx.ModelProto) else onnx.load(src)
            # a copy, saved: quantize_static moves a ModelProto's weights out
            # to external data. Per-channel DequantizeLinear (axis) needs
            # opset 13, which quantize_static does not upgrade to: done here
            m = onnx.ModelProto.FromString(m.SerializeToString())
            if opset_of(m) < 13:
                m = onnx.version_converter.convert_version(m, 13)
                m.ir_version = max(m.ir_version, 7)
            # weights listed as graph inputs (old exporters) are inputs to
            # onnxruntime's optimizer, which then folds no BatchNorm: what
            # its warning advises (remove_initializer_from_input.py)
            if m.ir_version >= 4:
                inits = {i.name for i in m.graph.initializer}
                keep = [i for i in m.graph.input if i.name not in inits]
                if len(keep) < len(m.graph.input):
                    del m.graph.input[:]
                    m.graph.input.extend(keep)
            onnx.save(m, "f.onnx")
            src = "f.onnx"
            if pre:
                from onnxruntime.quantization.shape_inference import quant_pre_process
                quant_pre_process(src, "pre.onnx", skip_symbolic_shape=True)
                src = "pre.onnx"
            quantize_static(src, "q.onnx", Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                            reduce_range=False, activation_type=QuantType.QInt8 if acts == "i8" else QuantType.QUInt8,
                            weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax)
        return onnx.load("q.onnx")
    finally:
        os.chdir(cwd)
        shutil.rmtree(d, ignore_errors=True)


def opset_of(m):
    return max([o.version for o in m.opset_import if o.domain in ("", "ai.onnx")] or [1])


def write_folder(d, m, ins, gin_names):
    """d/model.onnx and d/test_data_set_0/input_K.pb (what bench.build reads)."""
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(m, os.path.join(d, "model.onnx"))
    for k, (name, a) in enumerate(zip(gin_names, ins)):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "wb") as f:
            f.write(nh.from_array(a, name).SerializeToString())


def graph_inputs(m):
    inits = {i.name for i in m.graph.initializer}
    return [i for i in m.graph.input if i.name not in inits]


def short_why(e):
    return ("%s: %s" % (type(e).__name__, (str(e).strip().splitlines() or [""])[-1]))[:140]


class Entry:
    """One row: a quantized model folder qd and its float original's folder fd
    (each with model.onnx), the input arrays (the quantized model's inputs,
    used for all four), why it cannot be measured (or None)."""

    def __init__(self, name, group, note, qd=None, fd=None, ins=None, why=None):
        self.name, self.group, self.note, self.qd, self.fd, self.ins, self.why = name, group, note, qd, fd, ins, why
        self.builds = {}   # 'q', 'qp', 'f' -> (exe, arena, kernels, flops, build folder) or None
        self.build_why = {}


def wanted(only, *names):
    return not only or any(n in only for n in names)


def prepare(work, only):
    """The entries, their folders written under work (quantizing what needs it)."""
    entries = []
    for name, fm, x, cal, note in synthetic():
        if not wanted(only, name, name + "_i8", name + "_u8"):
            continue
        fd = os.path.join(work, name, "fp32")
        write_folder(fd, fm, [x], [fm.graph.input[0].name])
        for acts in ("i8", "u8"):
            rname = "%s_%s" % (name, acts)
            if not wanted(only, name, rname):
                continue
            try:
                qm = quantize(fm, [{fm.graph.input[0].name: c} for c in cal], acts)
            except Exception as e:
                entries.append(Entry(rname, "synthetic", note, why="quantize_static: " + short_why(e)))
                continue
            qd = os.path.join(work, rname, "int8")
            write_folder(qd, qm, [x], [fm.graph.input[0].name])
            entries.append(Entry(rname, "synthetic", note, qd, fd, [x]))
    qd, fd = os.path.join(REAL, "nudenet_yolov8n_qdq"), os.path.join(REAL, "nudenet_yolov8n")
    if wanted(only, "nudenet_yolov8n_qdq", "nudenet_yolov8n", "nudenet"):
        if all(os.path.exists(os.path.join(d, "model.onnx")) for d in (qd, fd)):
            m = onnx.load(os.path.join(qd, "model.onnx"), load_external_data=False)
            ins = [bench.load_pb(os.path.join(qd, "test_data_set_0", "input_%d.pb" % k))
                   for k in range(len(graph_inputs(m)))]
            entries.append(Entry("nudenet_yolov8n_qdq", "real", "build/real-models, QDQ by fetch.py", qd, fd, ins))
        elif only:
            entries.append(Entry("nudenet_yolov8n_qdq", "real", "", why="not fetched (tests/models/fetch.py)"))
    if os.path.isdir(SHARED):
        for name in SHARED_CNNS + SHARED_OTHERS:
            fd = os.path.join(SHARED, name)
            if not os.path.exists(os.path.join(fd, "model.onnx")):
                continue
            if not (wanted(only, name, name + "_qdq") if name in SHARED_CNNS else only and wanted(only, name,
                                                                                                   name + "_qdq")):
                continue
            rname = name + "_qdq"
            try:
                fm = onnx.load(os.path.join(fd, "model.onnx"))
                gin = graph_inputs(fm)
                ins = [bench.load_pb(os.path.join(fd, "test_data_set_0", "input_%d.pb" % k)) for k in range(len(gin))]
                r = np.random.RandomState(CALIB_SEED)
                feeds = []
                for _ in range(8):
                    f = {}
                    for vi, a in zip(gin, ins):
                        if a.dtype.kind == "f":
                            noise = r.standard_normal(a.shape) * CALIB_NOISE * (float(a.std()) or 1.0)
                            a = np.clip(a + noise, a.min(), a.max()).astype(a.dtype)
                        f[vi.name] = a
                    feeds.append(f)
                try:
                    qm = quantize(os.path.join(fd, "model.onnx"), feeds, "i8", pre=True)
                except Exception:   # (quant_pre_process's optimizations may leave what the quantizer cannot take)
                    qm = quantize(os.path.join(fd, "model.onnx"), feeds, "i8", pre=False)
                ort_session_bytes(qm)   # a model onnxruntime refuses is no row
            except Exception as e:
                entries.append(Entry(rname, "shared", "../shared/models", why="quantize_static: " + short_why(e)))
                continue
            qd = os.path.join(work, rname, "int8")
            write_folder(qd, qm, ins, [vi.name for vi in graph_inputs(qm)])
            entries.append(Entry(rname, "shared", "../shared/models, QDQ made here", qd, fd, ins))
    return entries


# ------------------------------------------------------------------ building

class BuildArgs:
    def __init__(self, compiler):
        self.compiler = compiler


def out_bytes_of(d, ins):
    """The outputs' byte counts, from onnxruntime's run of d/model.onnx
    (without optimizations: fast to make) on ins."""
    o = bench._opts()
    o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(os.path.join(d, "model.onnx"), sess_options=o, providers=["CPUExecutionProvider"])
    return [np.asarray(a).nbytes for a in s.run(None, {i.name: a for i, a in zip(s.get_inputs(), ins)})]


def build_one(args, d, ins, work, profile):
    """bench.build of d/model.onnx at -O2 in a folder of work, retried once
    in a new folder (the compiler may be being replaced under us). Returns
    ((exe, arena, kernels, flops, folder), '') or (None, why)."""
    m = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
    gin = graph_inputs(m)
    try:
        nout = out_bytes_of(d, ins)
    except Exception as e:
        return None, "onnxruntime: " + short_why(e)
    why = ""
    for attempt in range(2):
        w = os.path.join(work, "try%d" % attempt)
        os.makedirs(w)
        try:
            b, why = bench.build(d, BuildArgs(args.compiler), w, gin, ins, nout, 2, profile=profile)
        except Exception as e:   # (a report or header the compiler did not write)
            b, why = None, short_why(e)
        if b is not None:
            return b + (os.path.join(w, "O2p" if profile else "O2"),), ""
        if why == "gcc failed":   # bench.build keeps no message: gcc's first error
            why = gcc_error(os.path.join(w, "O2p" if profile else "O2")) or why
        settle(args.compiler)
    return None, why or "failed"


def gcc_error(wd):
    """the first error gcc gives on the generated C of wd ('' if none)"""
    r = subprocess.run(["gcc", "-fsyntax-only", "-std=c99", "-w", "-I" + wd, os.path.join(wd, "main.c"),
                        os.path.join(wd, "m.c")], capture_output=True, text=True)
    errs = [l for l in r.stderr.splitlines() if "error" in l]
    return ("gcc: " + errs[0].replace(wd + os.sep, ""))[:140] if errs else ""


def settle(path, quiet_s=10, most_s=120):
    """waits until the compiler binary has not changed for quiet_s seconds
    (another build may be replacing it), at most most_s"""
    t0 = time.time()
    while time.time() - t0 < most_s:
        try:
            age = time.time() - os.stat(path).st_mtime
        except OSError:
            age = 0
        if age >= quiet_s:
            return
        time.sleep(max(1.0, quiet_s - age))


def compile_all(entries, args, work):
    """Every build, two at a time (before any timing): the int8 build, its
    profiling build and the float original's (once per float model and
    input shape: the _i8 and _u8 rows share it)."""
    jobs, users = {}, {}
    for e in entries:
        if e.why:
            continue
        for kind, d, profile in (("q", e.qd, False), ("qp", e.qd, True), ("f", e.fd, False)):
            key = (kind, d, tuple(a.shape for a in e.ins)) if kind == "f" else (kind, e.name)
            if key not in jobs:
                jobs[key] = (d, e.ins, os.path.join(work, "build", e.name, kind), profile)
            users.setdefault(key, []).append(e)

    def run(key):
        d, ins, w, profile = jobs[key]
        return key, build_one(args, d, ins, w, profile)

    # the biggest C files first: the two workers end together
    order = sorted(jobs, key=lambda k: -os.path.getsize(os.path.join(jobs[k][0], "model.onnx")))
    with concurrent.futures.ThreadPoolExecutor(max(1, min(2, os.cpu_count() or 1))) as ex:
        for key, (b, why) in ex.map(run, order):
            for e in users[key]:
                e.builds[key[0]] = b
                if b is None:
                    e.build_why[key[0]] = why


# ---------------------------------------------------------- reading builds

def report_rows(path):
    """onnx2c --report's kernel rows in schedule order (the profiling build's
    rows): [dict(kernel, op, dtype, shape, precision (None where the report
    has no such column), node, origins)]. The columns are found from the
    header line (the report may gain columns): the single-word ones before
    'variant', then the variant ('-', 'NAME' or 'NAME (X us)'), then what the
    row covers ('NODE' or 'NODE <- ORIGIN, ORIGIN')."""
    rows, cols = [], None
    for line in open(path, encoding="utf-8", errors="replace"):
        if cols is None:
            if line.lstrip().startswith("#") and "kernel" in line and "variant" in line:
                cols = line[:line.index("variant")].replace("op (node)", "op").split()
            continue
        p = line.split(None, len(cols))
        if len(p) <= len(cols) or not p[0].isdigit():
            continue
        c = dict(zip(cols, p))
        out = re.match(r"([^\[]*)\[([^\]]*)\]", c.get("output", ""))
        v = re.match(r"(\S+(?: \([\d.]+ us\))?)\s+(.*)$", p[len(cols)].rstrip())
        covers = v.group(2) if v else p[len(cols)].strip()
        node, _, origins = covers.partition(" <-")
        rows.append(dict(kernel=c.get("kernel", "?"), op=c.get("op", "?"), dtype=out.group(1) if out else "-",
                         shape=out.group(2) if out else "", precision=c.get("precision"), node=node.strip(),
                         origins=[o.strip() for o in origins.split(",") if o.strip()] or [node.strip()]))
    return rows


def header_macro(folder, suffix):
    for line in open(os.path.join(folder, "m.h")):
        p = line.split()
        if len(p) >= 3 and p[0] == "#define" and p[1] == "m_" + suffix:
            return int(p[2])
    return None


def is_float_row(r):
    """--report's precision 'float' (input 0 or output 0 a float type:
    quantizing and dequantizing calls too); from a report without that
    column: a float output, or a bare QuantizeLinear (float input)"""
    if r["precision"] is not None:
        return r["precision"] == "float"
    return r["dtype"] in FLOAT_TYPES or r["op"] == "QuantizeLinear"


def kernel_kinds(rows):
    """(float calls, the bare QuantizeLinear/DequantizeLinear among them,
    all calls) of report rows (see the docstring)."""
    fl = [r for r in rows if is_float_row(r)]
    return len(fl), sum(1 for r in fl if r["op"] in QDQ_OPS), len(rows)


def is_int_row(r):
    return not is_float_row(r)


class Shapes:
    """Tensor shapes and producers of a model (ONNX shape inference with the
    inputs' shapes fixed), for counting multiply-accumulates."""

    def __init__(self, path, ins):
        m = onnx.load(path)
        for vi, a in zip(graph_inputs(m), ins):
            dims = vi.type.tensor_type.shape.dim
            del dims[:]
            for s in a.shape:
                dims.add().dim_value = int(s)
        try:
            m = onnx.shape_inference.infer_shapes(m)
        except Exception:
            pass
        self.shape = {}
        for vi in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
            t = vi.type.tensor_type
            if t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim):
                self.shape[vi.name] = [d.dim_value for d in t.shape.dim]
        for i in m.graph.initializer:
            self.shape[i.name] = list(i.dims)
        # the compiler names an unnamed node OP_INDEX (its index in the graph)
        self.nodes = {(n.name or "%s_%d" % (n.op_type, k)): n for k, n in enumerate(m.graph.node)}
        self.prod = {o: n for n in m.graph.node for o in n.output}
        for n in m.graph.node:
            if n.op_type == "Constant" and n.attribute and n.attribute[0].type == onnx.AttributeProto.TENSOR:
                self.shape[n.output[0]] = list(n.attribute[0].t.dims)

    def weight(self, name):
        """the shape of a weight, through the DequantizeLinear that makes it"""
        n = self.prod.get(name)
        if name not in self.shape and n is not None and n.op_type == "DequantizeLinear":
            name = n.input[0]
        return self.shape.get(name)

    def macs(self, names, out_shape):
        """multiply-accumulates of the first Conv/MatMul/Gemm among the ONNX
        nodes names (out_shape: the row's output, where inference has none)"""
        cands = [self.nodes.get(nm) for nm in names]
        # (and the producers of the covered nodes' inputs: a QuantizeLinear's
        # Conv where the Conv's name did not come through)
        cands += [self.prod.get(i) for c in cands if c is not None for i in c.input]
        for n in cands:
            if n is None or n.op_type not in MAC_OPS:
                continue
            wi = 3 if n.op_type.startswith("QLinear") else 1
            w = self.weight(n.input[wi]) if len(n.input) > wi else None
            y = self.shape.get(n.output[0]) or out_shape
            if not w or not y:
                return None
            ny = int(np.prod(y))
            if n.op_type in ("Conv", "QLinearConv", "ConvInteger"):
                return ny * int(np.prod(w[1:]))
            if n.op_type == "ConvTranspose":
                x = self.shape.get(n.input[0])
                return int(np.prod(x)) * int(np.prod(w[1:])) if x else None
            if n.op_type == "Gemm":
                tb = any(a.name == "transB" and a.i for a in n.attribute)
                return ny * (w[1] if tb else w[0])
            return ny * (w[-2] if len(w) >= 2 else w[0])   # MatMul: B is K x N
        return None


def profile_layers(e, n):
    """Runs the profiling build (n runs): [(kernel, op, node, origins, ops
    or None, seconds a run, integer?)] merged by node, or None."""
    b = e.builds.get("qp")
    if not b:
        return None
    r = subprocess.run([b[0], str(n)] + e.files, capture_output=True, text=True)
    prof, ups = [], 1e9
    for line in r.stdout.splitlines():
        if line.startswith("UPS "):
            ups = float(line.split()[1])
        elif line.startswith("ROW\t"):
            p = line.split("\t")
            prof.append((p[1], p[2], p[3], int(p[5]), int(p[6])))
    rows = report_rows(os.path.join(b[4], "report.txt"))
    if not prof or len(prof) != len(rows):
        return None
    shapes = Shapes(os.path.join(e.qd, "model.onnx"), e.ins)
    out = []
    for (kernel, op, node, calls, t), rr in zip(prof, rows):
        sec = t / ups / max(n, 1)   # (a row's calls: runs x its calls in one run)
        if out and out[-1][2] == node and node != "-":
            k, o, nd, org, ops, s0, integer = out[-1]
            out[-1] = (k, o, nd, org, ops, s0 + sec, integer)
            continue
        try:
            shape = [int(s) for s in rr["shape"].split("x")] if rr["shape"] else [1]
        except ValueError:
            shape = None
        macs = shapes.macs(rr["origins"], shape)
        out.append((kernel, op, node, rr["origins"], 2 * macs if macs else None, sec, is_int_row(rr)))
    return out


def largest_int(layers):
    """The integer Conv/MatMul/Gemm layer with the most operations:
    (kernel, op, node, GOPS) or None."""
    best = None
    for k, op, node, org, ops, sec, integer in layers or ():
        if integer and ops and any(p in MAC_OPS for p in op.split("+")) and (best is None or ops > best[4]):
            best = (k, op, node, org, ops, sec)
    if best is None or best[5] <= 0:
        return None
    return best[0], best[1], best[2], best[4] / best[5] / 1e9


def top_kernels(layers, k=4):
    """The k kernels with the most time, summed over their calls:
    [(kernel, calls, share of the kernels' total)]."""
    tot, by = sum(l[5] for l in layers or ()) or 1.0, {}
    for l in layers or ():
        t, c = by.get(l[0], (0.0, 0))
        by[l[0]] = (t + l[5], c + 1)
    return [(kn, c, t / tot) for kn, (t, c) in sorted(by.items(), key=lambda kv: -kv[1][0])[:k]]


# ------------------------------------------------------------------ timing

def run_exe(exe, n, files, dump=None):
    r = subprocess.run([exe, str(n)] + files + ([dump] if dump else []), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s exited with %d" % (os.path.basename(os.path.dirname(exe)), r.returncode))
    return float(r.stdout.split()[0])


def ort_session_bytes(m):
    return ort.InferenceSession(m.SerializeToString(), sess_options=bench._opts(), providers=["CPUExecutionProvider"])


def ort_session(d):
    return ort.InferenceSession(os.path.join(d, "model.onnx"), sess_options=bench._opts(),
                                providers=["CPUExecutionProvider"])


def ort_time(sess, feeds, n):
    for _ in range(3):
        sess.run(None, feeds)
    ts = []
    for _ in range(n):
        a = time.perf_counter()
        sess.run(None, feeds)
        ts.append((time.perf_counter() - a) * 1e3)
    return statistics.median(ts)


def rel_err(got, want):
    """max |got - want| over the outputs, as a % of max |want| (None where
    the outputs do not correspond)"""
    worst = 0.0
    if len(got) != len(want):
        return None
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype.kind not in "fiu" or w.dtype.kind not in "fiu":
            return None
        if w.size:
            w = w.astype(np.float64)
            worst = max(worst, float(np.abs(g.astype(np.float64) - w).max()) / (float(np.abs(w).max()) or 1.0))
    return 100.0 * worst


def runs_for(ms):
    """runs a round: about 0.3 s, at least 3 (the big models), at most 2000"""
    return max(3, min(2000, int(0.3e3 / max(ms, 1e-3))))


def measure(e, args, work):
    """Times the four side by side; fills e.res (or sets e.why)."""
    e.files = []
    for k, a in enumerate(e.ins):
        fn = os.path.join(work, "%s_in%d" % (e.name, k))
        open(fn, "wb").write(np.ascontiguousarray(a).tobytes())
        e.files.append(fn)
    qs, fs = ort_session(e.qd), ort_session(e.fd)
    qfeeds = {i.name: a for i, a in zip(qs.get_inputs(), e.ins)}
    ffeeds = {i.name: a for i, a in zip(fs.get_inputs(), e.ins)}
    qref, fref = qs.run(None, qfeeds), fs.run(None, ffeeds)
    exe_q, exe_f = e.builds["q"][0], e.builds["f"][0]
    # the int8 build's outputs (one run, dumped) and onnxruntime's int8 ones
    # against onnxruntime's float ones
    err = None
    if DUMPS:
        dump = os.path.join(work, e.name + "_out")
        t_q = run_exe(exe_q, 1, e.files, dump)
        raw, off, ours = open(dump, "rb").read(), 0, []
        for ref in qref:
            ref = np.asarray(ref)
            ours.append(np.frombuffer(raw[off:off + ref.nbytes], dtype=ref.dtype).reshape(ref.shape))
            off += ref.nbytes
        err = (rel_err(ours, fref), rel_err(qref, fref))
    else:
        t_q = run_exe(exe_q, 3, e.files)
    n = dict(q=runs_for(t_q), f=runs_for(run_exe(exe_f, 3, e.files)),
             oq=runs_for(ort_time(qs, qfeeds, 3)), of=runs_for(ort_time(fs, ffeeds, 3)))
    med = dict(q=[], oq=[], f=[], of=[])
    for _ in range(args.rounds):
        med["q"].append(run_exe(exe_q, n["q"], e.files))
        med["oq"].append(ort_time(qs, qfeeds, n["oq"]))
        med["f"].append(run_exe(exe_f, n["f"], e.files))
        med["of"].append(ort_time(fs, ffeeds, n["of"]))
    res = {k: statistics.median(v) for k, v in med.items()}
    qb, fb = e.builds["q"], e.builds["f"]
    res.update(arena_q=qb[1], arena_f=fb[1], const_q=header_macro(qb[4], "CONST_BYTES"),
               const_f=header_macro(fb[4], "CONST_BYTES"), kinds=kernel_kinds(report_rows(os.path.join(qb[4],
                                                                                                     "report.txt"))),
               err=err, layer=None, top=[])
    try:
        layers = profile_layers(e, n["q"])
        res["layer"], res["top"] = largest_int(layers), top_kernels(layers)
        res["layers"] = layers
        if args.layers:
            res["ort_layers"] = ort_layers(e.qd, qfeeds, n["oq"])
    except Exception as ex:
        print("  %s: no profile: %s" % (e.name, short_why(ex)), file=sys.stderr)
    e.res = res


# ------------------------------------------------------------ per layer

ORT_MAC_OPS = ("Conv", "FusedConv", "QLinearConv", "NhwcQLinearConv", "ConvInteger", "QLinearMatMul", "MatMulInteger",
               "QGemm", "MatMul", "FusedMatMul", "Gemm", "MatMulIntegerToFloat", "DynamicQuantizeMatMul", "NhwcFusedConv")


def ort_layers(d, feeds, n):
    """onnxruntime's own profile of the quantized model (the same session
    options, n runs after 3): [(op type, node name, seconds a run)] in the
    order the nodes first ran"""
    o = bench._opts()
    o.enable_profiling = True
    o.profile_file_prefix = os.path.join(tempfile.gettempdir(), "o2c_ort_prof")
    sess = ort.InferenceSession(os.path.join(d, "model.onnx"), sess_options=o, providers=["CPUExecutionProvider"])
    for _ in range(3 + n):
        sess.run(None, feeds)
    path = sess.end_profiling()
    try:
        events = json.load(open(path))
    finally:
        os.unlink(path)
    by, order = {}, []
    for ev in events:
        if ev.get("cat") != "Node" or not ev.get("name", "").endswith("_kernel_time"):
            continue
        name = ev["name"][:-len("_kernel_time")]
        if name not in by:
            by[name] = [ev.get("args", {}).get("op_name", "?"), 0.0, 0]
            order.append(name)
        by[name][1] += ev["dur"] * 1e-6
        by[name][2] += 1
    runs = 3 + n
    return [(by[k][0], k, by[k][1] / runs) for k in order]


def layer_table(e):
    """Lines: the int8 build's Conv/MatMul/Gemm layers, each with the
    onnxruntime node made of the same model node (its name less the
    "_token_N" onnxruntime adds, among our layer's origins; else the next
    unmatched one in order), with the time of everything else"""
    ours = [l for l in e.res.get("layers") or () if any(p in MAC_OPS for p in l[1].split("+"))]
    theirs = [l for l in e.res.get("ort_layers") or () if l[0] in ORT_MAC_OPS]
    if not ours or not theirs:
        return ["%s: no per-layer profile" % e.name]
    rest_ours = sum(l[5] for l in e.res["layers"]) - sum(l[5] for l in ours)
    rest_theirs = sum(l[2] for l in e.res["ort_layers"]) - sum(l[2] for l in theirs)
    free = list(range(len(theirs)))
    pairs = []
    for a in ours:
        k = next((k for k in free if re.sub(r"_token_\d+$", "", theirs[k][1]) in a[3]), None)
        if k is None and free and not any(re.sub(r"_token_\d+$", "", theirs[j][1]) in l[3] for j in free for l in ours):
            k = free[0]
        if k is not None:
            free.remove(k)
        pairs.append((a, theirs[k] if k is not None else None))
    pairs += [(None, theirs[k]) for k in free]
    out = ["%s per layer (the products in the order ours run; us a run): ours %d, onnxruntime %d" % (
        e.name, len(ours), len(theirs)),
        "| # | ours: kernel, node | MACs | ours us | GOPS | onnxruntime: op, node | ORT us | ours/ORT |",
        "|---:|---|---:|---:|---:|---|---:|---:|"]
    for i, (a, b) in enumerate(pairs):
        out.append("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
            i + 1, "%s %s" % (a[0], a[2]) if a else "-", "%d" % (a[4] // 2) if a and a[4] else "-",
            "%.1f" % (a[5] * 1e6) if a else "-", "%.1f" % (a[4] / a[5] / 1e9) if a and a[4] and a[5] > 0 else "-",
            "%s %s" % (b[0], b[1][:40]) if b else "-", "%.1f" % (b[2] * 1e6) if b else "-",
            "%.2f" % (a[5] / b[2]) if a and b and b[2] > 0 else "-"))
    out.append("| | everything else | | %.1f | | | %.1f | %s |" % (
        rest_ours * 1e6, rest_theirs * 1e6, "%.2f" % (rest_ours / rest_theirs) if rest_theirs > 0 else "-"))
    return out


# ------------------------------------------------------------------- peaks

INT8_PEAK_C = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <immintrin.h>
/* %(kind)s: best seconds of n iterations, each IPC instructions */
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char **argv)
{
    long n = atol(argv[1]), i;
    double best = 1e30, t;
    int r, k;
    %(vec)s acc[%(chains)d], a[%(chains)d], b = %(set1)s(argc * 7), s;
    for (k = 0; k < %(chains)d; k++) { acc[k] = %(set1)s(k); a[k] = %(set1)s(argc + 3 * k); }
    for (r = 0; r < 15; r++) {
        t = now();
        for (i = 0; i < n; i++) {
            __asm__ volatile("" : "+x"(b));   /* b opaque: nothing hoisted out of the loop */
            for (k = 0; k < %(chains)d; k++)   /* a[k]: one multiplicand a chain, nothing shared */
                acc[k] = %(step)s;
        }
        t = now() - t;
        if (t < best) best = t;
    }
    s = acc[0];
    for (k = 1; k < %(chains)d; k++) s = %(add)s(s, acc[k]);
    printf("%%.3f %%d\n", (double)%(ops)d * %(chains)d * (double)n / best / 1e9, (int)%(extract)s);
    return 0;
}
"""

PEAKS = [
    # (label, flag in /proc/cpuinfo or None, extra gcc flags, template values)
    ("vpmaddwd ymm (16 int16 MACs + vpaddd, 8 chains)", "avx2", [], dict(
        kind="vpmaddwd", vec="__m256i", chains=8, set1="_mm256_set1_epi32", add="_mm256_add_epi32", ops=32,
        step="_mm256_add_epi32(acc[k], _mm256_madd_epi16(a[k], b))",
        extract="_mm256_extract_epi32(s, 0)")),
    ("vpdpbusd zmm (AVX-512 VNNI: 64 u8 x s8 MACs, 16 chains)", "avx512_vnni", ["-mavx512f", "-mavx512vnni"], dict(
        kind="vpdpbusd zmm", vec="__m512i", chains=16, set1="_mm512_set1_epi32", add="_mm512_add_epi32", ops=128,
        step="_mm512_dpbusd_epi32(acc[k], a[k], b)",
        extract="_mm_cvtsi128_si32(_mm512_castsi512_si128(s))")),
    ("vpdpbusd ymm (AVX-VNNI: 32 u8 x s8 MACs, 12 chains)", "avx_vnni", ["-mavxvnni"], dict(
        kind="vpdpbusd ymm", vec="__m256i", chains=12, set1="_mm256_set1_epi32", add="_mm256_add_epi32", ops=64,
        step="_mm256_dpbusd_avx_epi32(acc[k], a[k], b)",
        extract="_mm256_extract_epi32(s, 0)")),
]


def cpu_flags():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def int8_peaks():
    """[(label, GOPS or None, why)] for the peaks this CPU has (its flags)."""
    flags, out = cpu_flags(), []
    with tempfile.TemporaryDirectory(prefix="o2c_i8peak_") as d:
        for k, (label, flag, extra, vals) in enumerate(PEAKS):
            if flag not in flags:
                continue
            src, exe = os.path.join(d, "p%d.c" % k), os.path.join(d, "p%d" % k)
            open(src, "w").write(INT8_PEAK_C % vals)
            r = subprocess.run(["gcc", "-O3", "-march=native"] + extra + ["-std=gnu99", "-o", exe, src],
                               capture_output=True, text=True)
            if r.returncode != 0:
                out.append((label, None, "does not build: " + (r.stderr.strip().splitlines() or [""])[-1][:80]))
                continue
            p = subprocess.run([exe, "20000000"], capture_output=True, text=True).stdout.split()
            out.append((label, float(p[0]) if p else None, "" if p else "did not run"))
    return out


# ------------------------------------------------------------------ output

COLS = ["model", "ours int8 ms", "ORT int8 ms", "ours fp32 ms", "ORT fp32 ms", "i8/f32 (<=0.6)", "i8/ORT-i8 (<1)",
        "arena i8/f32 bytes (<=0.3)", "const i8/f32 bytes (<=0.3)", "float (q-dq) / all kernels", "err % ours/ORT",
        "largest int layer GOPS (% madd peak)"]


def ratio(a, b):
    return a / b if a and b else None


def cells(e, peak):
    r = e.res
    ar, cr = ratio(r["arena_q"], r["arena_f"]), ratio(r["const_q"], r["const_f"])
    lay = r["layer"]
    return [e.name, "%.4f" % r["q"], "%.4f" % r["oq"], "%.4f" % r["f"], "%.4f" % r["of"], "%.2f" % (r["q"] / r["f"]),
            "%.2f" % (r["q"] / r["oq"]),
            "%d/%d %s" % (r["arena_q"], r["arena_f"], "%.2f" % ar if ar is not None else "-"),
            "%s/%s %s" % (r["const_q"], r["const_f"], "%.2f" % cr if cr is not None else "-"),
            "%d(%d)/%d" % r["kinds"], "/".join("%.2f" % x if x is not None else "-" for x in r["err"]) if r["err"] else "-",
            ("%.1f (%.0f%%)" % (lay[3], 100.0 * lay[3] / peak) if peak else "%.1f" % lay[3]) if lay else "-"]


def failed_why(e):
    if e.why:
        return e.why
    for kind, label in (("q", "int8 build"), ("f", "fp32 build")):
        if kind in e.build_why:
            return "%s failed: %s" % (label, e.build_why[kind])
    return "failed"


def summary(done):
    """[lines]: geometric means and targets met"""
    if not done:
        return ["no model measured"]
    sp = [e.res["q"] / e.res["f"] for e in done]
    vo = [e.res["q"] / e.res["oq"] for e in done]
    ar = [ratio(e.res["arena_q"], e.res["arena_f"]) for e in done]
    cr = [ratio(e.res["const_q"], e.res["const_f"]) for e in done]
    n = len(done)
    return ["geometric mean over %d models: ours-int8/ours-fp32 %.2f, ours-int8/ORT-int8 %.2f" % (
                n, bench.geomean(sp), bench.geomean(vo)),
            "targets met: int8/fp32 <= %.1f: %d of %d; int8/ORT-int8 < %g: %d of %d; arena int8/fp32 <= %.1f: "
            "%d of %d; constants int8/fp32 <= %.1f: %d of %d" % (
                TARGET_SPEED, sum(x <= TARGET_SPEED for x in sp), n, TARGET_ORT, sum(x < TARGET_ORT for x in vo), n,
                TARGET_MEM, sum(x is not None and x <= TARGET_MEM for x in ar), n, TARGET_MEM,
                sum(x is not None and x <= TARGET_MEM for x in cr), n)]


def details(done):
    """[lines]: per model, the largest integer layer and the top layers by time"""
    out = []
    for e in done:
        lay, top = e.res["layer"], e.res["top"]
        s = "%s (%s): " % (e.name, e.note)
        if lay:
            s += "largest int layer %s %s (%s) %.1f GOPS; " % (lay[0], lay[1], lay[2][:40], lay[3])
        s += "time by kernel: " + ", ".join("%s x%d %.0f%%" % (k, c, 100 * sh) for k, c, sh in top) if top else \
            "no profile"
        out.append(s)
    return out


def md_cell(c):
    return c.replace("|", "\\|")


def docs_section(entries, done, peaks, fma, command, seconds):
    main_peak = peaks[0][1] if peaks and peaks[0][1] else None
    md = ["<!-- bench-quant:begin -->",
          "<!-- written by `tests/bench_quant.py --write-docs`; edits here are replaced at the next run -->",
          "### Latest run: %s, %s, %s, %d core(s), one thread" % (
              datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), bench.git_commit(),
              bench.cpu_name(), os.cpu_count() or 0),
          "",
          "Command: `.venv/bin/python tests/bench_quant.py %s` (`make bench-quant`; %.0f s). Each quantized model "
          "(onnxruntime's quantize_static, QDQ, int8 weights per channel, full range) against onnxruntime on the same "
          "file (ORT_ENABLE_ALL: its QDQ fusions into integer kernels; one intra-op and one inter-op thread) and against "
          "both on the float original; ours: `onnx2c Q.onnx -o m.c --name m` (-O2), `gcc -O3 -march=native`; medians "
          "of alternating rounds. Ratios of one run are what to compare; the targets in the headers are goals, not "
          "assertions. Arena and constants: `m_ARENA_SIZE` and `m_CONST_BYTES` of the generated headers (int8 "
          "build / fp32 build, then the ratio). Kernels: the int8 build's calls in `--report` whose precision is float "
          "(input or output a float type), in parentheses the bare QuantizeLinear/DequantizeLinear among them, of all "
          "calls. err: the int8 outputs' max \\|int8 - ORT fp32\\| as a %% of max "
          "\\|ORT fp32\\| (ours / ORT). The last column: the largest integer Conv/MatMul/Gemm layer (2 operations a "
          "multiply-accumulate) in a `--profile` build, as a share of the vpmaddwd peak. The models are described in "
          "the script's docstring (the `_i8`/`_u8` rows: int8/uint8 activations)." % (command, seconds),
          "",
          "Peaks measured in the same run (one core, the higher of the start's and the end's): " +
          "; ".join("%s **%s GOPS**" % (label, "%.1f" % g if g else "-" + (" (%s)" % why if why else ""))
                    for label, g, why in peaks) +
          ("; fp32 FMA (tests/bench.py's) **%.1f GFLOP/s**." % fma if fma else "."),
          "",
          "| " + " | ".join(COLS) + " |",
          "|---|" + "---:|" * (len(COLS) - 1)]
    for e in entries:
        if getattr(e, "res", None):
            md.append("| " + " | ".join(md_cell(c) for c in cells(e, main_peak)) + " |")
        else:
            md.append("| %s | not measured: %s |" % (e.name, md_cell(failed_why(e))) + " |" * (len(COLS) - 2))
    md += [""] + ["- " + l for l in details(done)]
    for l in summary(done):
        md += ["", l[0].upper() + l[1:] + "."]
    md.append("<!-- bench-quant:end -->")
    return "\n".join(md) + "\n"


def write_docs(path, section, marker="bench-quant"):
    """section in place of path's text from <!-- MARKER:begin --> to
    <!-- MARKER:end --> (tests/bench_mcu.py's and bench_weight_only.py's
    sections too)"""
    text = open(path, encoding="utf-8").read()
    begin, end = "<!-- %s:begin -->" % marker, "<!-- %s:end -->" % marker
    b, e = text.find(begin), text.find(end)
    if b >= 0 and e > b:
        text = text[:b] + section + text[e + len(end):].lstrip("\n")
    else:   # first time: at the end
        text = text.rstrip("\n") + "\n\n" + section
    open(path, "w", encoding="utf-8").write(text)


def main():
    ort.set_default_logger_severity(3)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="", help="model names, comma-separated (kws_dscnn or kws_dscnn_i8, ...)")
    ap.add_argument("--write-docs", action="store_true",
                    help="replace the bench-quant section of docs/BENCHMARKS.md")
    ap.add_argument("--docs-file", default=os.path.join(ROOT, "docs", "BENCHMARKS.md"),
                    help="the file --write-docs writes (default docs/BENCHMARKS.md)")
    ap.add_argument("--keep", default=None, help="build in this folder and keep it")
    ap.add_argument("--layers", action="store_true",
                    help="also print each model's products layer by layer against onnxruntime's own profile")
    args = ap.parse_args()
    args.compiler = os.path.abspath(args.compiler)
    only = set(x.strip() for x in args.only.split(",") if x.strip())
    t0 = time.time()
    work = args.keep or tempfile.mkdtemp(prefix="o2c_bench_quant_")
    if args.keep:
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
    try:
        peaks = int8_peaks()
        fma = bench.fma_peak()
        print("int8 peaks (one core): " + "; ".join("%s %s GOPS" % (l, "%.1f" % g if g else "- (%s)" % why)
                                                   for l, g, why in peaks) +
              "; fp32 FMA peak %s GFLOP/s" % ("%.1f" % fma if fma else "-"), flush=True)
        entries = prepare(work, only)
        print("%d models; compiling (%d builds) ..." % (len(entries), 3 * sum(1 for e in entries if not e.why)),
              flush=True)
        compile_all(entries, args, work)
        print("compiled in %.0f s" % (time.time() - t0), flush=True)
        fmt = "%-30s %10s %10s %10s %10s %7s %7s %24s %26s %13s %13s %18s"
        print(fmt % ("model", "ours i8", "ORT i8", "ours f32", "ORT f32", "i8/f32", "i8/ORT", "arena i8/f32",
                     "const i8/f32", "flt(qdq)/all", "err% ours/ORT", "int GOPS (%peak)"))
        main_peak = peaks[0][1] if peaks and peaks[0][1] else None
        done = []
        for e in entries:
            if not e.why and all(e.builds.get(k) for k in ("q", "f")):
                try:
                    measure(e, args, work)
                except Exception as ex:
                    e.why = "run failed: " + short_why(ex)
                    if os.environ.get("O2C_BENCH_TRACE"):
                        traceback.print_exc()
            if getattr(e, "res", None):
                done.append(e)
                print(fmt % tuple(cells(e, main_peak)), flush=True)
            else:
                print("%-30s not measured: %s" % (e.name, failed_why(e)), flush=True)
        end = int8_peaks()   # again: another job may have held the core at the start
        peaks = [(l, max(g or 0, g2 or 0) or None, why) for (l, g, why), (_, g2, _) in zip(peaks, end)]
        fma = max(fma or 0, bench.fma_peak() or 0) or None
        print("int8 peaks at the end: " + "; ".join("%s %s" % (l.split(" (")[0], "%.1f" % g if g else "-")
                                                   for l, g, _ in end) +
              " GOPS; the higher of the two count (the % column above used the start's)")
        for l in details(done):
            print("  " + l)
        if args.layers:
            for e in done:
                print("\n".join(layer_table(e)) + "\n")
        for l in summary(done):
            print(l)
        seconds = time.time() - t0
        print("took %.0f s" % seconds)
        if args.write_docs:
            flags, skip = [], False
            for a in sys.argv[1:]:   # the command as given, less the folders of this machine
                if skip or a.startswith("--keep") or a.startswith("--docs-file"):
                    skip = not skip and "=" not in a
                    continue
                flags.append(a)
            write_docs(args.docs_file, docs_section(entries, done, peaks, fma, " ".join(flags), seconds))
            print("wrote %s (the bench-quant:begin/end section)" % os.path.relpath(args.docs_file, ROOT))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
