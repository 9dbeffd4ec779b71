#!/usr/bin/env python3
"""Outputs whose size the data decides (NonZero, Compress, Unique,
NonMaxSuppression, TopK with a run-time K), compiled without binding their
inputs: the generated code writes each such output densely into a buffer of
the upper bound (NAME_OUTPUTk_SIZE) and reports the run's shape through
NAME_output_dims (and NAME_output_dims_with_arena). Every case runs several
data sets through one build and is compared with onnxruntime: the shape
exactly, integers exactly, floats exactly (these ops only move values). The
C code runs under ASan and UBSan with output buffers of exactly the bound;
the .cu is built with the CPU emulation of CUDA and checked the same way.
A TopK whose K is out of range must return NAME_ERR_CHECK.

    python tests/test_dynamic_outputs.py [--compiler build/onnx2c] [--keep DIR]

The last line is 'N passed, N failed'."""
import argparse, os, shutil, subprocess, sys, tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SAN = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"]

# the harness: reads each input from a file, runs, then writes per output its
# rank, dims and the bytes of the run's shape; buffers hold exactly the bound
HARNESS = r'''
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "m.h"
static const long in_bytes[] = {%(in_bytes)s 0};
static const long out_bytes[] = {%(out_bytes)s 0};
static const long out_esize[] = {%(out_esize)s 0};
int main(int argc, char **argv)
{
    const void *in[%(ni)d + 1];
    void *out[%(no)d + 1];
    int i, k, use_arena = argc > 1 && !strcmp(argv[1], "arena");
    char **files = argv + 1 + use_arena;
    static unsigned char arena[m_ARENA_SIZE + 1] __attribute__((aligned(64)));
    for (i = 0; i < %(ni)d; i++) {
        FILE *f = fopen(files[i], "rb");
        void *p = malloc(in_bytes[i] + 1);
        if (!f || fread(p, 1, (size_t)in_bytes[i], f) != (size_t)in_bytes[i]) return 90;
        fclose(f);
        in[i] = p;
    }
    for (k = 0; k < %(no)d; k++) out[k] = malloc(out_bytes[k] ? out_bytes[k] : 1);
    {
        int rc = use_arena ? m_run_with_arena(in, out, arena) : m_run(in, out);
        printf("rc %%d\n", rc);
        if (rc) goto done;
    }
    for (k = 0; k < %(no)d; k++) {
        int64_t d[8];
        long n = 1;
        int r = use_arena ? m_output_dims_with_arena(arena, k, d) : m_output_dims(k, d);
        FILE *f = fopen(files[%(ni)d + k], "wb");
        fwrite(&r, sizeof r, 1, f);
        for (i = 0; i < r; i++) {
            fwrite(&d[i], sizeof d[i], 1, f);
            n *= (long)d[i];
        }
        if (n * out_esize[k] > out_bytes[k]) return 91;   /* a shape beyond the bound */
        fwrite(out[k], 1, (size_t)(n * out_esize[k]), f);
        fclose(f);
    }
done:
    for (i = 0; i < %(ni)d; i++) free((void *)in[i]);
    for (k = 0; k < %(no)d; k++) free(out[k]);
    return 0;
}
'''

NP = {TP.FLOAT: np.float32, TP.DOUBLE: np.float64, TP.INT64: np.int64, TP.INT32: np.int32, TP.BOOL: np.bool_,
      TP.UINT8: np.uint8, TP.INT8: np.int8}


def model(name, nodes, ins, outs, opset=17):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, t, s) for n, t, s in ins],
                     [h.make_tensor_value_info(n, t, None) for n, t in outs])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def cases():
    """(name, model, [feeds per data set]) — each data set a list of arrays"""
    r = np.random.RandomState(7)
    out = []
    x = [np.array([[0, 1.5, -0.0], [3, 0, np.nan]], np.float32), np.zeros((2, 3), np.float32),
         np.ones((2, 3), np.float32)]
    out.append(("nonzero_f32", model("nz", [h.make_node("NonZero", ["x"], ["y"])], [("x", TP.FLOAT, [2, 3])],
                                     [("y", TP.INT64)]), [[a] for a in x]))
    out.append(("nonzero_i32_3d", model("nz3", [h.make_node("NonZero", ["x"], ["y"])], [("x", TP.INT32, [2, 3, 4])],
                                        [("y", TP.INT64)]),
                [[r.randint(-1, 2, (2, 3, 4)).astype(np.int32)] for _ in range(3)]))
    out.append(("nonzero_bool", model("nzb", [h.make_node("NonZero", ["x"], ["y"])], [("x", TP.BOOL, [5])],
                                      [("y", TP.INT64)]), [[r.rand(5) > 0.5] for _ in range(3)]))
    for ax in (0, 1, None):
        kw = {} if ax is None else {"axis": ax}
        clen = 3 if ax != 1 else 4
        out.append(("compress_axis%s" % ax, model("cp", [h.make_node("Compress", ["x", "c"], ["y"], **kw)],
                                                   [("x", TP.FLOAT, [3, 4]), ("c", TP.BOOL, [clen])], [("y", TP.FLOAT)]),
                    [[r.rand(3, 4).astype(np.float32), r.rand(clen) > t] for t in (0.5, 0.0, 1.0)]))
    for ax in (None, 0, 1):
        for sorted_ in (1, 0):
            kw = {"sorted": sorted_} if ax is None else {"sorted": sorted_, "axis": ax}
            out.append(("unique_axis%s_sorted%d" % (ax, sorted_),
                        model("uq", [h.make_node("Unique", ["x"], ["y", "i", "inv", "c"], **kw)],
                              [("x", TP.INT64, [4, 3])], [("y", TP.INT64), ("i", TP.INT64), ("inv", TP.INT64),
                                                          ("c", TP.INT64)], opset=11),
                        [[r.randint(0, 3, (4, 3)).astype(np.int64)] for _ in range(2)] +
                        [[np.array([[2, 1, 2], [0, 1, 0], [2, 1, 2], [0, 1, 0]], np.int64)]]))
    out.append(("unique_f32", model("uqf", [h.make_node("Unique", ["x"], ["y", "i", "inv", "c"])],
                                    [("x", TP.FLOAT, [7])], [("y", TP.FLOAT), ("i", TP.INT64), ("inv", TP.INT64),
                                                             ("c", TP.INT64)], opset=11),
                [[np.array([2, -1, 2, 0.5, -1, 7, 0.5], np.float32)], [np.ones(7, np.float32)]]))
    # NonMaxSuppression: boxes and scores at run time; constant and run-time limits
    def boxes(B, N):
        c = r.rand(B, N, 2).astype(np.float32) * 4
        return np.concatenate([c, c + 0.5 + r.rand(B, N, 2).astype(np.float32) * 2], axis=2)
    nms_ins = [("boxes", TP.FLOAT, [2, 6, 4]), ("scores", TP.FLOAT, [2, 3, 6])]
    consts = [h.make_node("Constant", [], ["m"], value=h.make_tensor("m", TP.INT64, [1], [3])),
              h.make_node("Constant", [], ["iou"], value=h.make_tensor("iou", TP.FLOAT, [1], [0.3])),
              h.make_node("Constant", [], ["st"], value=h.make_tensor("st", TP.FLOAT, [1], [0.2]))]
    out.append(("nms_const_limits", model("nms", consts + [h.make_node("NonMaxSuppression",
                                                                          ["boxes", "scores", "m", "iou", "st"], ["sel"])],
                                          nms_ins, [("sel", TP.INT64)], opset=11),
                [[boxes(2, 6), r.rand(2, 3, 6).astype(np.float32)] for _ in range(3)]))
    out.append(("nms_runtime_limits", model("nms2", [h.make_node("NonMaxSuppression", ["boxes", "scores", "m", "iou", "st"],
                                                                 ["sel"], center_point_box=1)],
                                            nms_ins + [("m", TP.INT64, [1]), ("iou", TP.FLOAT, [1]), ("st", TP.FLOAT, [1])],
                                            [("sel", TP.INT64)], opset=11),
                [[boxes(2, 6), r.rand(2, 3, 6).astype(np.float32), np.array([k], np.int64),
                  np.array([t], np.float32), np.array([s], np.float32)] for k, t, s in ((2, 0.5, 0.1), (6, 0.2, 0.0),
                                                                                      (0, 0.5, 0.0))]))
    for ax in (1, 0):
        out.append(("topk_runtime_k_axis%d" % ax,
                    model("tk", [h.make_node("TopK", ["x", "k"], ["v", "i"], axis=ax)],
                          [("x", TP.FLOAT, [4, 5]), ("k", TP.INT64, [1])], [("v", TP.FLOAT), ("i", TP.INT64)], opset=11),
                    [[r.rand(4, 5).astype(np.float32), np.array([k], np.int64)] for k in (2, 0, 4)]))
    return out


def ort(m, feeds):
    import onnxruntime as rt
    so = rt.SessionOptions()
    so.log_severity_level = 4
    s = rt.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s.run(None, {i.name: a for i, a in zip(s.get_inputs(), feeds)})


def read_out(fn, dtype):
    b = open(fn, "rb").read()
    r = int(np.frombuffer(b[:4], np.int32)[0])
    dims = np.frombuffer(b[4:4 + 8 * r], np.int64)
    return np.frombuffer(b[4 + 8 * r:], dtype).reshape(dims)


def build(args, work, name, m, feeds):
    """[(label, argv prefix)] of the programs to run, or raises with a reason"""
    mp = os.path.join(work, "m.onnx")
    onnx.save(m, mp)
    outs_vi = m.graph.output
    progs = []
    cdir, cudir = os.path.join(work, "c"), os.path.join(work, "cu")
    for d, ext in ((cdir, "c"), (cudir, "cu")):
        os.makedirs(d, exist_ok=True)
        r = subprocess.run([args.compiler, mp, "-o", os.path.join(d, "m." + ext), "--name", "m"], capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise RuntimeError("onnx2c (%s): %s" % (ext, r.stderr.strip()[-300:]))
    hdr = open(os.path.join(cdir, "m.h")).read()
    size = lambda k: int(hdr.split("#define m_OUTPUT%d_SIZE " % k)[1].split()[0])
    ins = [np.asarray(a) for a in feeds[0]]
    out_dt = [NP[o.type.tensor_type.elem_type] for o in outs_vi]
    with open(os.path.join(work, "main.c"), "w") as f:
        f.write(HARNESS % dict(ni=len(ins), no=len(outs_vi),
                               in_bytes="".join("%d," % a.nbytes for a in ins),
                               out_bytes="".join("%d," % (size(k) * np.dtype(dt).itemsize) for k, dt in enumerate(out_dt)),
                               out_esize="".join("%d," % np.dtype(dt).itemsize for dt in out_dt)))
    exe = os.path.join(work, "prog")
    # the generated C: warning-free C99, run under the sanitizers
    r = subprocess.run(["gcc", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1", "-g"] + SAN +
                       ["-I" + cdir, "-o", exe, os.path.join(work, "main.c"), os.path.join(cdir, "m.c"), "-lm"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("gcc: " + r.stderr.strip()[:300])
    progs.append(("c", [exe]))
    progs.append(("c arena", [exe, "arena"]))
    # the .cu through the CPU emulation (m.h of the .cu replaces the C one)
    cexe = os.path.join(work, "prog_cu")
    cu_main = open(os.path.join(work, "main.c")).read().replace(
        "int rc = use_arena ? m_run_with_arena(in, out, arena) : m_run(in, out);", "int rc = m_run(in, out);").replace(
        "int r = use_arena ? m_output_dims_with_arena(arena, k, d) : m_output_dims(k, d);", "int r = m_output_dims(k, d);")
    open(os.path.join(work, "main_cu.c"), "w").write(cu_main)
    for step in (["g++", "-x", "c++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-O1", "-DO2C_CUDA_EMULATE",
                  "-I" + os.path.join(ROOT, "runtime", "cuda"), "-I" + cudir, "-c", os.path.join(cudir, "m.cu"),
                  "-o", os.path.join(work, "m_cu.o")],
                 ["g++", "-x", "c++", "-std=c++17", "-O1", "-DO2C_CUDA_EMULATE", "-I" + os.path.join(ROOT, "runtime", "cuda"),
                  "-I" + cudir, "-c", os.path.join(work, "main_cu.c"), "-o", os.path.join(work, "main_cu.o")],
                 ["g++", "-o", cexe, os.path.join(work, "main_cu.o"), os.path.join(work, "m_cu.o"), "-lm"]):
        r = subprocess.run(step, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("cuda (emulated): " + r.stderr.strip()[:300])
    return progs + [("cuda (emulated)", [cexe])], out_dt


def check(args, name, m, sets):
    work = tempfile.mkdtemp(prefix="o2c_dyn_")
    try:
        progs, out_dt = build(args, work, name, m, sets)
        for si, feeds in enumerate(sets):
            files = []
            for k, a in enumerate(feeds):
                fn = os.path.join(work, "in%d" % k)
                a = np.asarray(a)
                open(fn, "wb").write((a.astype(np.uint8) if a.dtype == np.bool_ else a).tobytes())
                files.append(fn)
            outs = [os.path.join(work, "out%d" % k) for k in range(len(out_dt))]
            want = ort(m, feeds)
            for label, argv in progs:
                r = subprocess.run(argv + files + outs, capture_output=True, text=True, timeout=60)
                if r.returncode != 0 or "rc 0" not in r.stdout:
                    return "%s data set %d: exit %d %s %s" % (label, si, r.returncode, r.stdout.strip(), r.stderr.strip()[:300])
                for k, w in enumerate(want):
                    got = read_out(outs[k], out_dt[k])
                    w = np.asarray(w)
                    if got.shape != w.shape:
                        return "%s data set %d output %d: shape %s, onnxruntime %s" % (label, si, k, got.shape, w.shape)
                    if not np.array_equal(got, w, equal_nan=w.dtype.kind == "f"):
                        return "%s data set %d output %d: %s, onnxruntime %s" % (label, si, k, got.ravel()[:12],
                                                                                   w.ravel()[:12])
        return ""
    except RuntimeError as e:
        return str(e)
    finally:
        if args.keep:
            shutil.copytree(work, os.path.join(args.keep, name), dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)


def check_topk_range(args):
    """a run-time K outside [0, axis] stops the run with m_ERR_CHECK"""
    m = model("tk", [h.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)],
              [("x", TP.FLOAT, [2, 3]), ("k", TP.INT64, [1])], [("v", TP.FLOAT), ("i", TP.INT64)], opset=11)
    work = tempfile.mkdtemp(prefix="o2c_dyn_")
    try:
        progs, _ = build(args, work, "topk_range", m, [[np.zeros((2, 3), np.float32), np.array([1], np.int64)]])
        hdr = open(os.path.join(work, "c", "m.h")).read()
        if "#define m_ERR_CHECK 3" not in hdr:
            return "m.h has no m_ERR_CHECK"
        open(os.path.join(work, "in0"), "wb").write(np.zeros((2, 3), np.float32).tobytes())
        for k in (4, -1):
            open(os.path.join(work, "in1"), "wb").write(np.array([k], np.int64).tobytes())
            for label, argv in progs:
                r = subprocess.run(argv + [os.path.join(work, "in0"), os.path.join(work, "in1"),
                                           os.path.join(work, "o0"), os.path.join(work, "o1")],
                                   capture_output=True, text=True, timeout=60)
                if r.returncode != 0 or r.stdout.strip() != "rc 3":
                    return "%s, K=%d: %s (exit %d), want rc 3" % (label, k, r.stdout.strip(), r.returncode)
        return ""
    except RuntimeError as e:
        return str(e)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check_refusal(args):
    """a data-dependent size that feeds another node still needs --bind (named)"""
    m = model("nzt", [h.make_node("NonZero", ["x"], ["y"]), h.make_node("Transpose", ["y"], ["t"])],
              [("x", TP.FLOAT, [2, 3])], [("t", TP.INT64)])
    work = tempfile.mkdtemp(prefix="o2c_dyn_")
    try:
        mp = os.path.join(work, "m.onnx")
        onnx.save(m, mp)
        r = subprocess.run([args.compiler, mp, "-o", os.path.join(work, "m.c")], capture_output=True, text=True)
        if r.returncode != 1 or "--bind x=" not in r.stderr or os.path.exists(os.path.join(work, "m.c")):
            return "exit %d, stderr %s" % (r.returncode, r.stderr.strip()[-200:])
        return ""
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--keep", help="keep each case's files under this folder")
    args = ap.parse_args()
    passed = failed = 0
    results = [(n, check(args, n, m, s)) for n, m, s in cases()]
    results.append(("topk_k_out_of_range", check_topk_range(args)))
    results.append(("refusal_when_read_by_a_node", check_refusal(args)))
    for name, why in results:
        if why:
            failed += 1
            print("FAIL %s: %s" % (name, why))
        else:
            passed += 1
            print("ok   %s" % name)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
