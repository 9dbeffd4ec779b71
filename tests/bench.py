#!/usr/bin/env python3
"""make bench: generated C against onnxruntime, one thread each, side by side
in one run. For each model: the generated C, compiled by onnx2c at -O2 (every
pass) and at -O0 (no pass) and built with -O3 -march=native, times N runs
in-process (after warm-up) and reports the median; onnxruntime
(all graph optimizations, 1 intra-op and 1 inter-op thread) does the same on
the same input; rounds alternate between the two and the medians of the
rounds are compared. Prints a table with the ratios -O0/-O2 (what the
optimizer gains) and onnxruntime/-O2 (above 1: onnx2c is faster), the kernel
calls and the arena bytes of the generated code at both levels. Timings drift on shared machines; the ratios of one run are
what to compare."""
import argparse, glob, os, re, statistics, subprocess, sys, tempfile, time

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


def build(d, args, work, gin, ins, nouts_bytes, level):
    """Compiles the model at -O<level> and builds the timing program; returns
    (exe, arena bytes, kernel calls) or (None, why)."""
    wd = os.path.join(work, "O%d" % level)
    os.makedirs(wd)
    src = os.path.join(wd, "m.c")
    cmd = [args.compiler, os.path.join(d, "model.onnx"), "-o", src, "--name", "m", "-O%d" % level]
    for vi, a in zip(gin, ins):
        cmd += ["--shape", "%s:%s" % (vi.name, "x".join(str(s) for s in a.shape))]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1][:100]
    arena = 0
    for line in open(os.path.join(wd, "m.h")):
        if "_ARENA_SIZE" in line and line.startswith("#define"):
            arena = int(line.split()[2])
    kernels = len(re.findall(r"^\s+o2c_\w+\(0, \d+, &p\);$", open(src).read(), re.M))
    open(os.path.join(wd, "main.c"), "w").write(HARNESS % dict(
        ni=len(ins), no=len(nouts_bytes), in_sz="".join("%d," % a.nbytes for a in ins),
        out_sz="".join("%d," % n for n in nouts_bytes)))
    exe = os.path.join(wd, "bench")
    r = subprocess.run(["gcc", "-O3", "-march=native", "-std=c99", "-w", "-o", exe, os.path.join(wd, "main.c"), src, "-lm"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, "gcc failed"
    return (exe, arena, kernels), ""


def bench_one(d, args, work):
    model = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    gin = [i for i in model.graph.input if i.name not in inits]
    ins = [load_pb(os.path.join(d, "test_data_set_0", "input_%d.pb" % k)) for k in range(len(gin))]
    sess = ort.InferenceSession(os.path.join(d, "model.onnx"), sess_options=_opts(), providers=["CPUExecutionProvider"])
    feeds = {i.name: a for i, a in zip(sess.get_inputs(), ins)}
    outs = sess.run(None, feeds)
    out_bytes = [np.asarray(o).nbytes for o in outs]
    builds = {}
    for level in (2, 0):
        b, why = build(d, args, work, gin, ins, out_bytes, level)
        if b is None:
            return None, why
        builds[level] = b
    files = []
    for k, a in enumerate(ins):
        fn = os.path.join(work, "in%d" % k)
        open(fn, "wb").write(np.ascontiguousarray(a).tobytes())
        files.append(fn)
    # calibrate the number of runs to about 0.3 s a round (on the -O2 build)
    exe2 = builds[2][0]
    t1 = float(subprocess.run([exe2, "3"] + files, capture_output=True, text=True).stdout or "1")
    n = max(5, min(2000, int(0.3e3 / max(t1, 1e-3))))
    t0 = float(subprocess.run([builds[0][0], "3"] + files, capture_output=True, text=True).stdout or "1")
    n0 = max(5, min(2000, int(0.3e3 / max(t0, 1e-3))))
    med = {2: [], 0: [], "ort": []}
    for _ in range(args.rounds):
        med[2].append(float(subprocess.run([exe2, str(n)] + files, capture_output=True, text=True).stdout))
        med[0].append(float(subprocess.run([builds[0][0], str(n0)] + files, capture_output=True, text=True).stdout))
        for _ in range(3):
            sess.run(None, feeds)
        ts = []
        for _ in range(n):
            a = time.perf_counter()
            sess.run(None, feeds)
            ts.append((time.perf_counter() - a) * 1e3)
        med["ort"].append(statistics.median(ts))
    return dict(o2=statistics.median(med[2]), o0=statistics.median(med[0]), ort=statistics.median(med["ort"]),
                arena2=builds[2][1], arena0=builds[0][1], k2=builds[2][2], k0=builds[0][2]), ""


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
    print("%-26s %11s %11s %11s %8s %9s %13s %17s" % ("model", "-O2 ms", "-O0 ms", "ORT ms", "O0/O2", "ORT/O2",
                                                    "kernels O0>O2", "arena O0>O2 bytes"))
    for d in dirs:
        name = os.path.basename(os.path.normpath(d))
        with tempfile.TemporaryDirectory(prefix="o2c_bench_") as work:
            res, why = bench_one(d, args, work)
        if res is None:
            print("%-28s %s" % (name, "not measured: " + why))
            continue
        r = res
        print("%-26s %11.4f %11.4f %11.4f %8.2f %9.2f %13s %17s" % (
            name, r["o2"], r["o0"], r["ort"], r["o0"] / r["o2"], r["ort"] / r["o2"], "%d>%d" % (r["k0"], r["k2"]),
            "%d>%d" % (r["arena0"], r["arena2"])), flush=True)


if __name__ == "__main__":
    main()
