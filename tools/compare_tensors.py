#!/usr/bin/env python3
"""Node-by-node comparison of a model's generated C with onnxruntime.

    python tools/compare_tensors.py MODEL.onnx [--input IN_K.pb ...] [--compiler build/onnx2c]
                                    [--threshold DB] [-- ONNX2C FLAGS ...]

Builds MODEL with `onnx2c --debug-tensors` (and the flags after `--`: e.g.
`-O0`, `--int8 --calibrate DIR`), runs it once on the inputs (given, else the
model folder's test_data_set_0/input_K.pb, else N(0, 1) with seed 0), and
records every tensor the schedule computes (NAME_set_debug_callback). Runs
onnxruntime on the same inputs with every intermediate tensor of the model
exposed as an output (no graph optimization: the model as written) and
compares each of our tensors with onnxruntime's of the same name, in
execution order: the largest absolute difference and the SQNR (float
types), or the count of differing elements (integer types); an int8
build's 8-bit tensors are dequantized by the scale and zero point the
callback gives and compared with the float tensors they stand for. Tensors onnx2c
made itself (fused intermediates renamed, quantized copies) have no
onnxruntime counterpart and are listed as such.

The verdict names the first tensor whose SQNR is below --threshold (default
60 dB: float32 code agrees with onnxruntime to 100 dB or more; an int8 build
is expected below, give it e.g. 20) or whose integers differ, and the node
that computed it: where to look. Exit status 0 when every compared tensor is
within the threshold, 1 when one is not, 2 on a usage or build error.
Needs onnx, onnxruntime, numpy and a C compiler ($CC, else cc)."""
import argparse, os, shutil, subprocess, sys, tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 16: 2}
NUMPY = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64, 9: np.uint8,
         10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64, 16: np.uint16}

HARNESS = r'''
#include <stdio.h>
#include <stdlib.h>
#include "m.h"
static FILE *manifest, *dump;
static const int SIZES[17] = {0, 4, 1, 1, 2, 2, 4, 8, 0, 1, 2, 8, 4, 8, 0, 0, 2};
static void seen(const char *tensor, const char *nodes, int type, int rank, const int64_t *dims, const void *data,
                 double scale, long zero_point, void *user)
{
    long long n = 1;
    (void)user;
    for (int d = 0; d < rank; d++) n *= dims[d];
    int es = type >= 0 && type <= 16 ? SIZES[type] : 0;
    fprintf(manifest, "%s\t%s\t%d\t%ld\t%.17g\t%ld\t", tensor, nodes, type, ftell(dump), scale, zero_point);
    for (int d = 0; d < rank; d++) fprintf(manifest, "%s%lld", d ? "x" : "", (long long)dims[d]);
    fputc('\n', manifest);
    if (es) fwrite(data, (size_t)es, (size_t)n, dump);
}
/* argv: manifest dump in_0.bin ... (then the outputs' sizes are the header's) */
int main(int argc, char **argv)
{
    static const long in_bytes[] = {@IN_BYTES@ 0}, out_bytes[] = {@OUT_BYTES@ 0};
    const void *ins[@NIN@ + 1];
    void *outs[@NOUT@ + 1];
    if (argc != 3 + @NIN@) return 2;
    for (int i = 0; i < @NIN@; i++) {
        void *b = malloc((size_t)in_bytes[i] + 1);
        FILE *f = fopen(argv[3 + i], "rb");
        if (!f || fread(b, 1, (size_t)in_bytes[i], f) != (size_t)in_bytes[i]) return 3;
        fclose(f);
        ins[i] = b;
    }
    for (int o = 0; o < @NOUT@; o++) outs[o] = malloc((size_t)out_bytes[o] + 1);
    manifest = fopen(argv[1], "w");
    dump = fopen(argv[2], "wb");
    if (!manifest || !dump) return 3;
    m_set_debug_callback(seen, NULL);
    int rc = m_run(ins, outs);
    fclose(manifest);
    fclose(dump);
    return rc ? 4 : 0;
}
'''


def load_pb(p):
    t = onnx.TensorProto()
    t.ParseFromString(open(p, "rb").read())
    return numpy_helper.to_array(t)


def sqnr(ref, got):
    ref = ref.astype(np.float64).ravel()
    e = np.sum((ref - got.astype(np.float64).ravel()) ** 2)
    return 999.0 if e == 0 else 10 * np.log10(max(np.sum(ref ** 2), 1e-300) / e)


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        k = argv.index("--")
        argv, extra = argv[:k], argv[k + 1:]
    ap = argparse.ArgumentParser(description="compare the generated C's tensors with onnxruntime's, node by node")
    ap.add_argument("model")
    ap.add_argument("--input", action="append", default=[], help="an input as a TensorProto file (graph-input order)")
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--threshold", type=float, default=60.0, help="SQNR in dB below which a tensor is off")
    ap.add_argument("--quiet", action="store_true", help="only the verdict")
    a = ap.parse_args(argv)
    import onnxruntime as ort

    model = onnx.load(a.model)
    inits = {i.name for i in model.graph.initializer}
    gin = [i for i in model.graph.input if i.name not in inits]
    if a.input:
        xs = [load_pb(p) for p in a.input]
    else:
        d = os.path.join(os.path.dirname(os.path.abspath(a.model)), "test_data_set_0")
        if all(os.path.exists(os.path.join(d, "input_%d.pb" % k)) for k in range(len(gin))) and gin:
            xs = [load_pb(os.path.join(d, "input_%d.pb" % k)) for k in range(len(gin))]
        else:
            rng = np.random.default_rng(0)
            xs = []
            for i in gin:
                shape = [dd.dim_value if dd.HasField("dim_value") else 1 for dd in i.type.tensor_type.shape.dim]
                dt = helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type)
                xs.append(rng.normal(0, 1, shape).astype(dt))
    if len(xs) != len(gin):
        print("compare_tensors: the model has %d inputs, %d given" % (len(gin), len(xs)))
        return 2
    work = tempfile.mkdtemp(prefix="o2c_cmp_")
    try:
        # onnxruntime with every intermediate exposed
        inferred = onnx.shape_inference.infer_shapes(model)
        typed = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
        names = [o for n in model.graph.node for o in n.output if o and o in typed]
        known = {o.name for o in model.graph.output}
        for nm in names:
            if nm not in known:
                model.graph.output.append(typed[nm])
                known.add(nm)
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.log_severity_level = 3
        mp = os.path.join(work, "all.onnx")
        onnx.save(model, mp)
        sess = ort.InferenceSession(mp, so, providers=["CPUExecutionProvider"])
        feeds = {i.name: x for i, x in zip(gin, xs)}
        outs = sess.run(None, feeds)
        ref = {o.name: v for o, v in zip(sess.get_outputs(), outs)}
        ref.update({i.name: x for i, x in zip(gin, xs)})   # (an int8 build's quantized input)
        nout = len(onnx.load(a.model, load_external_data=False).graph.output)
        # our debug build
        shape_flags = []
        for i, x in zip(gin, xs):
            if any(not dd.HasField("dim_value") for dd in i.type.tensor_type.shape.dim):
                shape_flags += ["--shape", "%s:%s" % (i.name, "x".join(map(str, x.shape)) or "scalar")]
        src = os.path.join(work, "m.c")
        r = subprocess.run([a.compiler, a.model, "-o", src, "--name", "m", "--debug-tensors"] + shape_flags + extra,
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stderr.strip())
            return 2
        outs0 = [np.asarray(outs[k]) for k in range(nout)]
        text = HARNESS.replace("@NIN@", str(len(xs))).replace("@NOUT@", str(nout))
        text = text.replace("@IN_BYTES@", "".join("%d," % x.nbytes for x in xs))
        open(os.path.join(work, "main.c"), "w").write(text.replace("@OUT_BYTES@", "".join("%d," % o.nbytes for o in outs0)))
        exe = os.path.join(work, "prog")
        cc = os.environ.get("CC", "cc")
        r = subprocess.run([cc, "-O1", "-I" + work, "-o", exe, os.path.join(work, "main.c"), src, "-lm"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stderr[-2000:])
            return 2
        files = []
        for k, x in enumerate(xs):
            f = os.path.join(work, "in%d.bin" % k)
            np.ascontiguousarray(x).tofile(f)
            files.append(f)
        man, dump = os.path.join(work, "manifest.txt"), os.path.join(work, "dump.bin")
        r = subprocess.run([exe, man, dump] + files, capture_output=True, text=True)
        if r.returncode != 0:
            print("compare_tensors: the debug build failed (status %d)" % r.returncode)
            return 2
        blob = open(dump, "rb").read()
        rows, first, own = [], None, 0
        for line in open(man).read().splitlines():
            name, nodes, typ, off, scale, zp, dims = line.split("\t")
            typ, off, scale, zp = int(typ), int(off), float(scale), int(zp)
            shape = [int(v) for v in dims.split("x")] if dims else []
            n = int(np.prod(shape)) if shape else 1
            dt = NUMPY.get(typ)
            if dt is None or name not in ref:
                own += 1
                rows.append((name, nodes, "-", "not in the model" if name not in ref else "type %d" % typ))
                continue
            got = np.frombuffer(blob, dt, n, off).reshape(shape)
            want = np.asarray(ref[name])
            if scale:   # 8-bit data standing for the model's float tensor
                got = ((got.astype(np.float64) - zp) * scale).astype(np.float32)
                dt = np.float32
                nodes += " (int8: scale %.4g, zero point %d)" % (scale, zp)
            if want.shape != got.shape:
                rows.append((name, nodes, "-", "shape %s, onnxruntime %s" % (got.shape, want.shape)))
                first = first or (name, nodes, "shape")
                continue
            if np.issubdtype(dt, np.floating):
                db = sqnr(want, got)
                diff = float(np.max(np.abs(want.astype(np.float64) - got))) if n else 0.0
                rows.append((name, nodes, "%.1f" % db, "max |diff| %.3g" % diff))
                if db < a.threshold and first is None:
                    first = (name, nodes, "SQNR %.1f dB" % db)
            else:
                bad = int(np.sum(want != got))
                rows.append((name, nodes, "-", "%d of %d elements differ" % (bad, n)))
                if bad and first is None:
                    first = (name, nodes, "%d elements differ" % bad)
        if not a.quiet:
            print("%-4s %-32s %-9s %-26s %s" % ("#", "tensor", "SQNR dB", "difference", "computed by"))
            for k, (name, nodes, db, what) in enumerate(rows):
                print("%-4d %-32s %-9s %-26s %s" % (k, name[:32], db, what, nodes))
        compared = len(rows) - own
        print("compare_tensors: %d tensors, %d compared with onnxruntime, %d made by onnx2c" % (len(rows), compared, own))
        if first:
            print("first off: '%s' (%s), computed by %s" % (first[0], first[2], first[1]))
            return 1
        print("every compared tensor within %.1f dB" % a.threshold)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
