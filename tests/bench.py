#!/usr/bin/env python3
"""make bench: generated C against onnxruntime, one thread each, side by side
in one run. For each model: the generated C built with -O3 -march=native
times N runs in-process (after warm-up) and reports the median; onnxruntime
(all graph optimizations, 1 intra-op and 1 inter-op thread) does the same on
the same input; rounds alternate between the two and the medians of the
rounds are compared. Prints a table with the ratio onnxruntime/onnx2c
(above 1: onnx2c is faster) and the memory figures (arena bytes of the
generated code). Timings drift on shared machines; the ratios of one run are
what to compare."""
import argparse, glob, os, statistics, subprocess, sys, tempfile, time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HARNESS = r'''
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int m_run(const void *const inputs[], void *const outputs[]);
static const long in_sz[] = {%(in_sz)s 0}, out_sz[] = {%(out_sz)s 0};
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv)
{
    const void *ins[%(ni)d + 1] = {0};
    void *outs[%(no)d + 1] = {0};
    int n = atoi(argv[1]), i;
    double *t = malloc(sizeof(double) * (size_t)n);
    (void)argc;
    for (i = 0; i < %(ni)d; i++) {
        void *p = malloc(in_sz[i] + 1);
        FILE *f = fopen(argv[2 + i], "rb");
        if (!f || fread(p, 1, in_sz[i], f) != (size_t)in_sz[i]) return 3;
        fclose(f);
        ins[i] = p;
    }
    for (i = 0; i < %(no)d; i++) outs[i] = malloc(out_sz[i] + 1);
    for (i = 0; i < 3; i++) m_run(ins, outs);
    for (i = 0; i < n; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        m_run(ins, outs);
        clock_gettime(CLOCK_MONOTONIC, &b);
        t[i] = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) * 1e-6;
    }
    qsort(t, (size_t)n, sizeof(double), cmp);
    printf("%%.6f\n", t[n / 2]);
    return 0;
}
'''


def load_pb(path):
    t = onnx.TensorProto()
    t.ParseFromString(open(path, "rb").read())
    return numpy_helper.to_array(t)


def bench_one(d, args, work):
    model = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    gin = [i for i in model.graph.input if i.name not in inits]
    ins = [load_pb(os.path.join(d, "test_data_set_0", "input_%d.pb" % k)) for k in range(len(gin))]
    src = os.path.join(work, "m.c")
    cmd = [args.compiler, os.path.join(d, "model.onnx"), "-o", src, "--name", "m"]
    for vi, a in zip(gin, ins):
        cmd += ["--shape", "%s:%s" % (vi.name, "x".join(str(s) for s in a.shape))]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1][:100]
    arena = 0
    for line in open(os.path.join(work, "m.h")):
        if "_ARENA_SIZE" in line and line.startswith("#define"):
            arena = int(line.split()[2])
    sess = ort.InferenceSession(os.path.join(d, "model.onnx"), sess_options=_opts(), providers=["CPUExecutionProvider"])
    feeds = {i.name: a for i, a in zip(sess.get_inputs(), ins)}
    outs = sess.run(None, feeds)
    open(os.path.join(work, "main.c"), "w").write(HARNESS % dict(
        ni=len(ins), no=len(outs), in_sz="".join("%d," % a.nbytes for a in ins),
        out_sz="".join("%d," % np.asarray(o).nbytes for o in outs)))
    exe = os.path.join(work, "bench")
    r = subprocess.run(["gcc", "-O3", "-march=native", "-std=c99", "-w", "-o", exe, os.path.join(work, "main.c"), src, "-lm"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, "gcc failed"
    files = []
    for k, a in enumerate(ins):
        fn = os.path.join(work, "in%d" % k)
        open(fn, "wb").write(np.ascontiguousarray(a).tobytes())
        files.append(fn)
    # calibrate the number of runs to about 0.3 s a round
    t1 = float(subprocess.run([exe, "3"] + files, capture_output=True, text=True).stdout or "1")
    n = max(5, min(2000, int(0.3e3 / max(t1, 1e-3))))
    c_med, o_med = [], []
    for _ in range(args.rounds):
        c_med.append(float(subprocess.run([exe, str(n)] + files, capture_output=True, text=True).stdout))
        for _ in range(3):
            sess.run(None, feeds)
        ts = []
        for _ in range(n):
            a = time.perf_counter()
            sess.run(None, feeds)
            ts.append((time.perf_counter() - a) * 1e3)
        o_med.append(statistics.median(ts))
    return (statistics.median(c_med), statistics.median(o_med), arena), ""


def _opts():
    o = ort.SessionOptions()
    o.intra_op_num_threads = 1
    o.inter_op_num_threads = 1
    o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return o


def main():
    ort.set_default_logger_severity(3)
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("dirs", nargs="*")
    args = ap.parse_args()
    dirs = args.dirs or (sorted(glob.glob(os.path.join(ROOT, "examples", "*", ""))) +
                         sorted(glob.glob(os.path.join(ROOT, "..", "shared", "models", "*", ""))))
    dirs = [d for d in dirs if os.path.exists(os.path.join(d, "model.onnx")) and os.path.isdir(os.path.join(d, "test_data_set_0"))
            and not os.path.exists(os.path.join(d, "expect_error.txt"))]
    print("%-28s %12s %12s %10s %12s" % ("model", "onnx2c ms", "ORT ms", "ORT/onnx2c", "arena bytes"))
    for d in dirs:
        name = os.path.basename(os.path.normpath(d))
        with tempfile.TemporaryDirectory(prefix="o2c_bench_") as work:
            res, why = bench_one(d, args, work)
        if res is None:
            print("%-28s %s" % (name, "not measured: " + why))
            continue
        c, o, arena = res
        print("%-28s %12.4f %12.4f %10.2f %12d" % (name, c, o, o / c, arena), flush=True)


if __name__ == "__main__":
    main()
