#!/usr/bin/env python3
"""The accuracy table of --int8 calibration (docs/PRECISION.md): `make bench-calib`.

    python tests/bench_calib.py [--ncal 16] [--neval 64] [--cost-sets 100] [--write-docs] [MODEL_DIR...]

For every float model with one float32 image input (NCHW or NHWC) among the
project's examples and ../shared/models (or $O2C_SHARED_MODELS; or the
MODEL_DIRs given), side by side in one run, one thread ($O2C_COMPILER: the
onnx2c binary, default build/onnx2c, to compare a change):

  inputs   natural images: crops of scikit-image's sample photographs,
           resized to the model's input, mapped to the per-channel mean and
           standard deviation of the model's own test input (so the
           activations have the model's ranges); calibration and evaluation
           crops are different ones
  ours     onnx2c --int8 --calibrate DIR with each calibrator (minmax,
           percentile, entropy, mse, and auto, the default, which picks one
           of the first, second and fourth per model): output SQNR against onnxruntime float32
           (the worst output) and top-1 agreement of output 0 (argmax over
           its last axis) on the evaluation inputs
  ORT      onnxruntime's quantize_static on the same calibration inputs
           (QDQ, per-channel int8 weights, uint8 activations) with its
           MinMax and its Entropy calibrators: the same two figures
  fp16     onnx2c --fp16, and onnx2c --fp16 --calibrate DIR --min-sqnr 60
           (the constants of the most sensitive layers kept float32; with
           its constant bytes against float32's): the same two figures;
           onnxruntime running the model converted to float16 by its own
           converter (onnxruntime.transformers.float16, inputs and outputs
           kept float32, graph optimizations off: they fail on some
           converted models)
  size     weights (constant bytes) and arena of our float32, int8 and fp16
           builds, from --report
  latency  median of our float32, int8 and fp16 builds (gcc -O3 -march=native),
           alternating, after warm-up
  cost     calibrating on --cost-sets sets: wall time and peak memory of
           onnx2c (/usr/bin/time), and the same with a quarter of the sets
           (the memory must not grow with the sets)

Closing line: 'calib: N models, ours (default) >= ORT best on K, top-1 >= ORT
best on K, geomean int8/fp32 latency X (conv nets), weights int8/fp32 Y'."""
import argparse, glob, math, os, re, shutil, statistics, subprocess, sys, tempfile, time

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMP = os.environ.get("O2C_COMPILER", os.path.join(ROOT, "build", "onnx2c"))
SHARED = os.environ.get("O2C_SHARED_MODELS", os.path.normpath(os.path.join(ROOT, "..", "shared", "models")))
CALIBRATORS = ["minmax", "percentile", "entropy", "mse", "auto"]
DEFAULT = "auto"   # compiler/main.c DEFAULT_CALIBRATION
FP16_TARGET = 60  # dB: issue 20's fp16 target

TIMER = r'''
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int m_run(const void *const inputs[], void *const outputs[]);
static const long out_sz[] = {%(sizes)s 0};
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec * 1e-6; }
/* argv: MODE IN.bin INBYTES [OUT.bin]: MODE run (writes the outputs) or time N (prints ms per run, N runs) */
int main(int argc, char **argv)
{
    long isz = atol(argv[3]);
    void *in = malloc(isz), *outs[%(no)d + 1];
    for (int o = 0; o < %(no)d; o++) outs[o] = malloc(out_sz[o]);
    FILE *f = fopen(argv[2], "rb");
    if (!f || fread(in, 1, isz, f) != (size_t)isz) return 3;
    fclose(f);
    const void *ins[1] = {in};
    if (argv[1][0] == 'r') {
        if (m_run(ins, outs)) return 4;
        f = fopen(argv[4], "wb");
        for (int o = 0; o < %(no)d; o++) fwrite(outs[o], 1, out_sz[o], f);
        fclose(f);
        return 0;
    }
    int n = atoi(argv[4]);
    double t0 = now();
    for (int k = 0; k < n; k++) m_run(ins, outs);
    printf("%%.6f\n", (now() - t0) / n);
    return 0;
}
'''


def load_pb(p):
    t = onnx.TensorProto()
    t.ParseFromString(open(p, "rb").read())
    return numpy_helper.to_array(t)


def photographs():
    """scikit-image's sample photographs as float RGB in [0, 1]"""
    import skimage.data
    names = ["astronaut", "coffee", "chelsea", "rocket", "hubble_deep_field", "immunohistochemistry", "camera",
             "moon", "page", "grass", "gravel", "brick", "colorwheel", "motorcycle_left", "retina", "cell"]
    pics = []
    for n in names:
        try:
            im = np.asarray(getattr(skimage.data, n)(), np.float32)
        except Exception:
            continue
        if im.ndim == 2:
            im = np.repeat(im[..., None], 3, -1)
        im = im[..., :3]
        pics.append(im / 255.0 if im.max() > 1.5 else im)
    return pics


def natural_inputs(ref, nhwc, n, rng, pics):
    """n inputs shaped like ref, crops of photographs at ref's channel statistics"""
    H, W, C = (ref.shape[1], ref.shape[2], ref.shape[3]) if nhwc else (ref.shape[2], ref.shape[3], ref.shape[1])
    axes = (0, 1, 2) if nhwc else (0, 2, 3)
    mean, std = ref.mean(axis=axes), ref.std(axis=axes) + 1e-6
    out = []
    for _ in range(n):
        out.append(np.concatenate([one_crop(H, W, C, nhwc, mean, std, rng, pics) for _ in range(ref.shape[0])]))
    return out


def one_crop(H, W, C, nhwc, mean, std, rng, pics):
    """one crop of a photograph, H x W x C, at the given channel statistics (1 x ...)"""
    from skimage.transform import resize
    im = pics[int(rng.integers(len(pics)))]
    h, w = im.shape[:2]
    s = rng.uniform(0.35, 1.0)
    ch, cw = max(4, int(h * s)), max(4, int(w * s))
    y, x = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
    c = resize(im[y:y + ch, x:x + cw], (H, W), anti_aliasing=True).astype(np.float32)
    if rng.random() < 0.5:
        c = c[:, ::-1]
    c = c.mean(-1, keepdims=True) if C == 1 else np.tile(c, (1, 1, (C + 2) // 3))[..., :C]
    c = (c - c.mean(axis=(0, 1))) / (c.std(axis=(0, 1)) + 1e-6) * std + mean
    c = c[None].astype(np.float32)
    return np.ascontiguousarray(c if nhwc else c.transpose(0, 3, 1, 2))


def write_sets(d, name, xs):
    for k, x in enumerate(xs):
        p = os.path.join(d, "set_%03d" % k)
        os.makedirs(p, exist_ok=True)
        open(os.path.join(p, "input_0.pb"), "wb").write(numpy_helper.from_array(x, name).SerializeToString())


def ort_session(path):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def sqnr(ref, got):
    ref = ref.astype(np.float64).ravel()
    e = np.sum((ref - got.astype(np.float64).ravel()) ** 2)
    return 99.0 if e == 0 else 10 * math.log10(max(np.sum(ref ** 2), 1e-30) / e)


def score(refs, outs):
    s = min(sqnr(np.stack([r[k] for r in refs]), np.stack([o[k] for o in outs])) for k in range(len(refs[0])))
    ag = [float(np.mean(np.argmax(r[0].reshape(-1, r[0].shape[-1]), -1) == np.argmax(o[0].reshape(-1, o[0].shape[-1]), -1)))
          for r, o in zip(refs, outs)]
    return s, float(np.mean(ag))


class Build:
    """one onnx2c build of the model: compiled, run on inputs, timed"""
    def __init__(self, work, tag, model, flags, shape_flag, out_shapes):
        self.dir = os.path.join(work, tag)
        os.makedirs(self.dir)
        src = os.path.join(self.dir, "m.c")
        rep = os.path.join(self.dir, "report.txt")
        t0 = time.time()
        r = subprocess.run([COMP, model, "-o", src, "--name", "m", "--report=" + rep] + shape_flag + flags,
                           capture_output=True, text=True, timeout=3600)
        self.compile_s = time.time() - t0
        self.error = None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["?"])[-1][:160]
        if self.error:
            return
        text = open(rep).read()
        m = re.search(r"arena (\d+) bytes, (\d+) constants (\d+) bytes", text)
        self.arena, self.consts = int(m.group(1)), int(m.group(3))
        m = re.search(r"output SQNR on \d+ calibration sets: ([-\d.]+) dB", text)
        self.calib_sqnr = float(m.group(1)) if m else None
        self.shapes = out_shapes
        open(os.path.join(self.dir, "main.c"), "w").write(TIMER % dict(
            no=len(out_shapes), sizes="".join("%d," % (4 * int(np.prod(s))) for s in out_shapes)))
        self.exe = os.path.join(self.dir, "prog")
        r = subprocess.run(["gcc", "-O3", "-march=native", "-o", self.exe, os.path.join(self.dir, "main.c"), src, "-lm"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            self.error = "cc: " + r.stderr[:160]

    def run(self, xs):
        outs = []
        for x in xs:
            fi, fo = os.path.join(self.dir, "in.bin"), os.path.join(self.dir, "out.bin")
            x.tofile(fi)
            subprocess.run([self.exe, "r", fi, str(x.nbytes), fo], check=True)
            b = np.fromfile(fo, np.float32)
            o, p = [], 0
            for s in self.shapes:
                n = int(np.prod(s))
                o.append(b[p:p + n].reshape(s))
                p += n
            outs.append(o)
        return outs

    def time_ms(self, x, n):
        fi = os.path.join(self.dir, "in.bin")
        x.tofile(fi)
        r = subprocess.run([self.exe, "t", fi, str(x.nbytes), str(n)], capture_output=True, text=True, check=True)
        return float(r.stdout)


def cost(model, shape_flag, cal_dir, work):
    """wall seconds and peak KB of one --int8 --calibrate run"""
    out = os.path.join(work, "cost.c")
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M", COMP, model, "-o", out, "--name", "m", "--int8", "--calibrate",
                        cal_dir] + shape_flag, capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        return None, None
    e, m = r.stderr.strip().splitlines()[-1].split()
    return float(e), int(m)


def ort_quantized(model, work, iname, cal, method):
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(cal)

        def get_next(self):
            x = next(self.it, None)
            return None if x is None else {iname: x}
    src = model
    m = onnx.load(model)
    if max([o.version for o in m.opset_import if o.domain in ("", "ai.onnx")] or [13]) < 13:
        from onnx import version_converter   # per-channel DequantizeLinear (axis) needs opset 13
        src = os.path.join(work, "opset13.onnx")
        onnx.save(version_converter.convert_version(m, 13), src)
    try:
        from onnxruntime.quantization.shape_inference import quant_pre_process
        pre = os.path.join(work, "pre.onnx")
        quant_pre_process(src, pre)
        src = pre
    except Exception:
        pass
    out = os.path.join(work, "ort_%s.onnx" % method)
    quantize_static(src, out, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    calibrate_method=getattr(CalibrationMethod, method))
    return out


def ort_fp16(model, work):
    """onnxruntime running the model converted to float16 by its converter"""
    import onnxruntime as ort
    from onnxruntime.transformers.float16 import convert_float_to_float16
    p = os.path.join(work, "fp16.onnx")
    onnx.save(convert_float_to_float16(onnx.load(model), keep_io_types=True), p)
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(p, so, providers=["CPUExecutionProvider"])


def candidates(args):
    dirs = args.models or (sorted(glob.glob(os.path.join(ROOT, "examples", "*", ""))) +
                           sorted(glob.glob(os.path.join(SHARED, "*", ""))))
    for d in dirs:
        mp = os.path.join(d, "model.onnx")
        ip = os.path.join(d, "test_data_set_0", "input_0.pb")
        if not (os.path.exists(mp) and os.path.exists(ip)):
            continue
        m = onnx.load(mp, load_external_data=False)
        if any(n.op_type in ("QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul") for n in m.graph.node):
            continue   # already quantized
        inits = {i.name for i in m.graph.initializer}
        gin = [i for i in m.graph.input if i.name not in inits]
        x0 = load_pb(ip)
        if len(gin) != 1 or x0.dtype != np.float32 or x0.ndim != 4 or min(x0.shape[1:]) < 1:
            continue
        yield d, mp, gin[0].name, x0


def run_one(args, name, mp, iname, x0, work, pics, rows, costs, sizes, lat, wts, counts):
    nhwc = x0.shape[3] in (1, 3) and x0.shape[1] not in (1, 3)
    rng = np.random.default_rng(20261128)
    cal = natural_inputs(x0, nhwc, args.ncal, rng, pics)
    ev = natural_inputs(x0, nhwc, args.neval, rng, pics)
    cdir = os.path.join(work, "cal")
    write_sets(cdir, iname, cal)
    fs = ort_session(mp)
    refs = [fs.run(None, {iname: x}) for x in ev]
    if any(r.dtype != np.float32 for r in refs[0]):
        return
    shapes = [r.shape for r in refs[0]]
    shape_flag = ["--shape", "%s:%s" % (iname, "x".join(map(str, x0.shape)))]
    res = {}
    for meth in ("MinMax", "Entropy"):
        try:
            qp = ort_quantized(mp, work, iname, cal, meth)
            qs = ort_session(qp)
            res["ort-" + meth.lower()] = score(refs, [qs.run(None, {iname: x}) for x in ev])
        except Exception as e:
            res["ort-" + meth.lower()] = None
            print("%s: onnxruntime %s: %s" % (name, meth, str(e)[:120]), flush=True)
    fp = Build(work, "fp32", mp, [], shape_flag, shapes)
    builds = {}
    for c in CALIBRATORS:
        b = Build(work, "int8_" + c, mp, ["--int8", "--calibrate", cdir, "--calibration", c], shape_flag, shapes)
        builds[c] = b
        res[c] = None if b.error else score(refs, b.run(ev))
        if b.error:
            print("%s: ours %s: %s" % (name, c, b.error), flush=True)
    b8 = builds[DEFAULT]
    f16 = Build(work, "fp16", mp, ["--fp16"], shape_flag, shapes)
    res["fp16"] = None if f16.error else score(refs, f16.run(ev))
    f60 = Build(work, "fp16_60", mp, ["--fp16", "--calibrate", cdir, "--min-sqnr", str(FP16_TARGET)], shape_flag, shapes)
    res["fp16-60"] = None if f60.error or fp.error else score(refs, f60.run(ev)) + (f60.consts / fp.consts,)
    try:
        res["ort-fp16"] = score(refs, [s.run(None, {iname: x}) for s in [ort_fp16(mp, work)] for x in ev])
    except Exception as e:
        res["ort-fp16"] = None
        print("%s: onnxruntime float16: %s" % (name, str(e)[:120]), flush=True)
    ort_best = max((v for k, v in res.items() if k in ("ort-minmax", "ort-entropy") and v), default=None, key=lambda v: v[0])
    ort_top1 = max((v[1] for k, v in res.items() if k in ("ort-minmax", "ort-entropy") and v), default=None)
    t32 = t8 = None
    if not fp.error and not b8.error:
        n = args.iters or max(3, min(200, int(1.0 / max(fp.time_ms(ev[0], 1) / 1e3, 1e-4))))
        a32, a8, a16 = [], [], []
        for _ in range(3):
            a32.append(fp.time_ms(ev[0], n))
            a8.append(b8.time_ms(ev[0], n))
            a16.append(f16.time_ms(ev[0], n) if not f16.error else float("nan"))
        t32, t8, t16 = statistics.median(a32), statistics.median(a8), statistics.median(a16)
        lat.append(t8 / t32)
        wts.append(b8.consts / fp.consts)
        sizes.append((name, fp.consts, b8.consts, f16.consts if not f16.error else 0, fp.arena, b8.arena, t32, t8, t16))
    ours = res.get(DEFAULT)
    if ours and ort_best:
        counts[0] += ours[0] >= ort_best[0] - 0.05
        counts[1] += ours[1] >= ort_top1 - 1e-9
    rows.append((name, res))
    # calibration cost: all the sets, and a quarter of them
    many = os.path.join(work, "many")
    write_sets(many, iname, natural_inputs(x0, nhwc, args.cost_sets, rng, pics))
    t_all, m_all = cost(mp, shape_flag, many, work)
    for k in range(args.cost_sets // 4, args.cost_sets):
        shutil.rmtree(os.path.join(many, "set_%03d" % k))
    t_q, m_q = cost(mp, shape_flag, many, work)
    costs.append((name, args.cost_sets, t_all, m_all, t_q, m_q))
    fmt = lambda v: "%6.1f %5.2f" % v if v else "     -     -"
    print("%-26s " % name + "  ".join(fmt(res.get(k)) for k in
          ["ort-minmax", "ort-entropy"] + CALIBRATORS + ["fp16"]), flush=True)
    f60 = res.get("fp16-60")
    print("%-26s fp16 ORT %s, ours %s, ours --min-sqnr %d %s" % (name, fmt(res.get("ort-fp16")), fmt(res.get("fp16")),
          FP16_TARGET, "%6.1f %5.2f %.2fx" % f60 if f60 else "-"), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ncal", type=int, default=16)
    ap.add_argument("--neval", type=int, default=64,
                    help="evaluation inputs (64: a model with a few outputs, a 2-class softmax, needs that many "
                         "for its SQNR to be stable)")
    ap.add_argument("--cost-sets", type=int, default=100)
    ap.add_argument("--iters", type=int, default=0, help="timed runs (default: about 1 s of each build)")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("models", nargs="*")
    args = ap.parse_args()
    pics = photographs()
    rows, costs, sizes = [], [], []
    counts = [0, 0]
    lat, wts = [], []
    for d, mp, iname, x0 in candidates(args):
        name = os.path.basename(os.path.normpath(d))
        work = tempfile.mkdtemp(prefix="o2c_bc_")
        try:
            run_one(args, name, mp, iname, x0, work, pics, rows, costs, sizes, lat, wts, counts)
        except Exception as e:
            print("%-26s error: %s" % (name, str(e).splitlines()[0][:160] if str(e) else repr(e)), flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    n_sqnr, n_top1 = counts
    g = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
    lines = ["| model | ORT MinMax | ORT Entropy | ours minmax | ours percentile | ours entropy | ours mse | ours auto (default) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    cell = lambda v: "%.1f dB / %.2f" % v[:2] if v else "-"
    for name, res in rows:
        lines.append("| %s | %s |" % (name, " | ".join(cell(res.get(k)) for k in
                                                     ["ort-minmax", "ort-entropy"] + CALIBRATORS)))
    lines += ["", "| model | ORT float16 | ours --fp16 | ours --fp16 --calibrate --min-sqnr %d | its constants |" % FP16_TARGET,
              "|---|---:|---:|---:|---:|"]
    for name, res in rows:
        f60 = res.get("fp16-60")
        lines.append("| %s | %s | %s | %s | %s |" % (name, cell(res.get("ort-fp16")), cell(res.get("fp16")), cell(f60),
                                                  "%.2fx" % f60[2] if f60 else "-"))
    lines += ["", "| model | weights fp32 | weights int8 | weights fp16 | arena fp32 | arena int8 | fp32 ms | int8 ms | "
              "fp16 ms | int8/fp32 |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, c32, c8, c16, a32, a8, t32, t8, t16 in sizes:
        ar = "%d (%.2fx)" % (a8, a8 / a32) if a32 else "%d" % a8
        lines.append("| %s | %d | %d (%.2fx) | %d (%.2fx) | %d | %s | %.3f | %.3f | %.3f | %.2f |" %
                     (name, c32, c8, c8 / c32, c16, c16 / c32, a32, ar, t32, t8, t16, t8 / t32))
    lines += ["", "| model | sets | time | peak memory | sets | time | peak memory |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, n, t, m, tq, mq in costs:
        if t is None or tq is None:
            lines.append("| %s | %d | failed | | | | |" % (name, n))
            continue
        lines.append("| %s | %d | %.1f s | %.1f MB | %d | %.1f s | %.1f MB |" % (name, n, t, m / 1024, n // 4, tq, mq / 1024))
    close = ("calib: %d models, ours (%s) >= ORT best SQNR on %d, top-1 >= ORT best on %d, geomean int8/fp32 latency "
             "%.2f, weights int8/fp32 %.2f" % (len(rows), DEFAULT, n_sqnr, n_top1, g(lat), g(wts)))
    text = "\n".join(lines) + "\n\n" + close + "\n"
    print(text)
    if args.write_docs:
        p = os.path.join(ROOT, "docs", "PRECISION.md")
        doc = open(p).read()
        a, b = doc.index("<!-- bench-calib -->"), doc.index("<!-- /bench-calib -->")
        stamp = "Made by `make bench-calib` (`%s`) on %s.\n\n" % (" ".join(["tests/bench_calib.py"] + sys.argv[1:]),
                                                                time.strftime("%Y-%m-%d"))
        open(p, "w").write(doc[:a] + "<!-- bench-calib -->\n" + stamp + text + doc[b:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
