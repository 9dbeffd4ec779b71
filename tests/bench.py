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
what to compare.

Also, per model: GFLOP/s (the FLOPs of onnx2c --report's total line over
the -O2 time), the seconds `gcc -O2 -c` takes on the -O2 C file, and, from a profiling build (onnx2c --profile, the same
flags), the largest GEMM/MatMul layer and the largest Conv layer (by FLOPs):
their GFLOP/s and their share of a packed-sgemm peak measured in the same
run (numpy's float32 matmul 1024x1024x1024 through its BLAS, OpenBLAS, on
one thread: the best of several). --write-docs replaces the marked section
of docs/BENCHMARKS.md (between <!-- bench:begin --> and <!-- bench:end -->)
with the table and writes docs/bench.svg: ours/onnxruntime latency per
model on a log scale (below 1: faster than onnxruntime)."""
import argparse, datetime, glob, math, os, platform, re, statistics, subprocess, sys, tempfile, time

# one BLAS thread for the sgemm peak: set before numpy loads its BLAS
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

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


PROFILE_HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include "m.h"
static const long in_sz[] = {%(in_sz)s 0}, out_sz[] = {%(out_sz)s 0};
int main(int argc, char **argv)
{
    const void *ins[%(ni)d + 1] = {0};
    void *outs[%(no)d + 1] = {0};
    const m_profile_row *r = m_profile_rows();
    int n = atoi(argv[1]), i;
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
    m_profile_reset();
    for (i = 0; i < n; i++) m_run(ins, outs);
    printf("UPS %%.1f\n", m_profile_units_per_sec());
    for (i = 0; i < m_PROFILE_ROWS; i++)
        printf("ROW\t%%s\t%%s\t%%s\t%%lld\t%%lu\t%%lu\n", r[i].kernel, r[i].op, r[i].node, (long long)r[i].flops,
               (unsigned long)r[i].calls, (unsigned long)r[i].time);
    return 0;
}
"""

TOTAL_FLOPS = re.compile(r"^total: \d+ kernels, (>=)?(\d+) FLOPs", re.M)


def build(d, args, work, gin, ins, nouts_bytes, level, profile=False):
    """Compiles the model at -O<level> (--profile: the profiling build) and
    builds the timing program; returns (exe, arena bytes, kernel calls,
    FLOPs from --report or None) or (None, why)."""
    wd = os.path.join(work, "O%d%s" % (level, "p" if profile else ""))
    os.makedirs(wd)
    src = os.path.join(wd, "m.c")
    rep = os.path.join(wd, "report.txt")
    cmd = [args.compiler, os.path.join(d, "model.onnx"), "-o", src, "--name", "m", "-O%d" % level, "--report=" + rep]
    if profile:
        cmd.append("--profile")
    threads = getattr(args, "threads", 1)
    if threads > 1:
        cmd += ["--threads", str(threads)]
    for vi, a in zip(gin, ins):
        if a.ndim:   # (a scalar input's shape is its declared one)
            cmd += ["--shape", "%s:%s" % (vi.name, "x".join(str(s) for s in a.shape))]
    r = subprocess.run(cmd, capture_output=True, text=True)
    # a refusal that names graph inputs as `--bind NAME=` (an If on an input's
    # value, silero_vad_if's sample rate): bound to the timed inputs, as the
    # model tests do (run_models.py)
    bound = sorted(set(re.findall(r"--bind ([^\s=]+)=", r.stderr))) if r.returncode == 1 else []
    names = [vi.name for vi in gin]
    if bound and all(b in names for b in bound):
        cmd += [a for b in bound for a in ("--bind", "%s=%s" % (b, os.path.join(d, "test_data_set_0", "input_%d.pb" % names.index(b))))]
        r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1][:100]
    arena = 0
    for line in open(os.path.join(wd, "m.h")):
        if "_ARENA_SIZE" in line and line.startswith("#define"):
            arena = int(line.split()[2])
    kernels = len(re.findall(r"^\s+o2c_\w+\((0, \d+, &p|\(int64_t\)\d+ \* o2c_part / \d+, .*, &p)\);$", open(src).read(), re.M))
    m = TOTAL_FLOPS.search(open(rep).read())
    flops = int(m.group(2)) if m and not m.group(1) else None
    open(os.path.join(wd, "main.c"), "w").write((PROFILE_HARNESS if profile else HARNESS) % dict(
        ni=len(ins), no=len(nouts_bytes), in_sz="".join("%d," % a.nbytes for a in ins),
        out_sz="".join("%d," % n for n in nouts_bytes)))
    cc_s = None
    if level == 2 and not profile:   # issue 21's target: every model's C builds with gcc -O2 in under 60 s
        t = time.perf_counter()
        r = subprocess.run(["gcc", "-O2", "-std=c99", "-w", "-c", src, "-o", os.path.join(wd, "o2.o")],
                           capture_output=True, text=True)
        cc_s = time.perf_counter() - t if r.returncode == 0 else None
    exe = os.path.join(wd, "bench")
    # O2C_BENCH_CFLAGS: more gcc flags (-mno-avx512vnni, say: another kernel path on the same CPU)
    par = (["-DO2C_THREAD_POOL", "-pthread"] if getattr(args, "thread_pool", False) else ["-fopenmp"]) if threads > 1 else []
    r = subprocess.run(["gcc", "-O3", "-march=native"] + par +
                       os.environ.get("O2C_BENCH_CFLAGS", "").split() +
                       ["-std=c99", "-w", "-I" + wd, "-o", exe, os.path.join(wd, "main.c"), src, "-lm"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, "gcc failed"
    return (exe, arena, kernels, flops, cc_s), ""


def layers(out):
    """The profiling build's rows merged by node (a node's calls are
    consecutive; its FLOPs sit on its first call): [(op, node, flops, seconds a run)]."""
    ups, res = 1e9, []
    for line in out.splitlines():
        if line.startswith("UPS "):
            ups = float(line.split()[1])
        elif line.startswith("ROW\t"):
            _, kernel, op, node, flops, calls, t = line.split("\t")
            sec = int(t) / ups / max(int(calls), 1)
            if res and res[-1][1] == node and node != "-":
                o, n, f, s0 = res[-1]
                res[-1] = (o, n, f + max(int(flops), 0), s0 + sec)
            else:
                res.append((op, node, max(int(flops), 0), sec))
    return res


def largest(rows, kinds):
    """The layer with the most FLOPs with one of kinds among its (fused) ops:
    (op, node, GFLOP/s) or None."""
    best = None
    for op, node, flops, sec in rows:
        if any(part in kinds for part in op.split("+")) and flops > 0 and (best is None or flops > best[2]):
            best = (op, node, flops, sec)
    if best is None or best[3] <= 0:
        return None
    return best[0], best[1], best[2] / best[3] / 1e9


def sgemm_peak(n=1024, reps=20):
    """GFLOP/s of numpy's float32 n^3 matmul on one BLAS thread: the best of reps."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    c = a @ b
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        np.matmul(a, b, out=c)
        best = min(best, time.perf_counter() - t)
    return 2.0 * n ** 3 / best / 1e9


FMA_PEAK_C = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__AVX512F__)
#define W 16
#elif defined(__AVX__)
#define W 8
#else
#define W 4
#endif
typedef float v __attribute__((vector_size(W * 4)));
int main(int argc, char **argv)
{
    long n = atol(argv[1]), i;
    float s = (float)argc * 1e-9f;
    v b, c, a[16];
    struct timespec t0, t1;
    double best = 1e30, sec;
    int r, k;
    for (k = 0; k < W; k++) { b[k] = 1.0f - s; c[k] = s; }
    for (k = 0; k < 16; k++) a[k] = c * (float)k;
    for (r = 0; r < 15; r++) {
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (i = 0; i < n; i++)
            for (k = 0; k < 16; k++) a[k] = a[k] * b + c;   /* 16 independent FMA chains */
        clock_gettime(CLOCK_MONOTONIC, &t1);
        sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        if (sec < best) best = sec;
    }
    for (k = 1; k < 16; k++) a[0] += a[k];
    printf("%.3f %d %g\n", 2.0 * 16 * W * (double)n / best / 1e9, W, (double)a[0][0]);
    return 0;
}
"""


def fma_peak():
    """GFLOP/s of one core's vector FMAs at the widest width -march=native
    allows (16 independent chains in registers): the hardware ceiling. None
    if the program does not build (a compiler without GNU vector types)."""
    with tempfile.TemporaryDirectory(prefix="o2c_fma_") as d:
        src, exe = os.path.join(d, "fma.c"), os.path.join(d, "fma")
        open(src, "w").write(FMA_PEAK_C)
        r = subprocess.run(["gcc", "-O3", "-march=native", "-ffp-contract=fast", "-std=gnu99", "-o", exe, src],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return None
        out = subprocess.run([exe, "10000000"], capture_output=True, text=True).stdout.split()
        return float(out[0]) if out else None


def blas_core():
    """The kernel family numpy's OpenBLAS chose on this CPU (e.g. 'Haswell'), or ''."""
    import ctypes
    for lib in glob.glob(os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs", "*openblas*")):
        try:
            h = ctypes.CDLL(lib)
        except OSError:
            continue
        for fn in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename64_",
                   "openblas_get_corename"):
            f = getattr(h, fn, None)
            if f:
                f.restype = ctypes.c_char_p
                return f().decode()
    return ""


def bench_one(d, args, work):
    model = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    gin = [i for i in model.graph.input if i.name not in inits]
    ins = [load_pb(os.path.join(d, "test_data_set_0", "input_%d.pb" % k)) for k in range(len(gin))]
    sess = ort.InferenceSession(os.path.join(d, "model.onnx"), sess_options=_opts(), providers=["CPUExecutionProvider"])
    feeds = {i.name: a for i, a in zip(sess.get_inputs(), ins)}
    try:
        outs = sess.run(None, feeds)
    except Exception as e:   # onnxruntime itself fails on the model (an optimizer's rewrite): nothing to compare
        return None, "onnxruntime failed: %s" % str(e).strip().splitlines()[-1][:100]
    out_bytes = [np.asarray(o).nbytes for o in outs]
    builds = {}
    for level in (2, 0) + (("p",) if args.layers else ()):
        b, why = build(d, args, work, gin, ins, out_bytes, 2 if level == "p" else level, profile=level == "p")
        if b is None:
            if level == "p":   # the table still stands without the layer columns
                print("  %s: no profiling build: %s" % (os.path.basename(os.path.normpath(d)), why), file=sys.stderr)
                continue
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
    res = dict(o2=statistics.median(med[2]), o0=statistics.median(med[0]), ort=statistics.median(med["ort"]),
               arena2=builds[2][1], arena0=builds[0][1], k2=builds[2][2], k0=builds[0][2], flops=builds[2][3], cc_s=builds[2][4],
               gemm=None, conv=None)
    if "p" in builds:   # the profiling build: per-layer times
        r = subprocess.run([builds["p"][0], str(n)] + files, capture_output=True, text=True)
        rows = layers(r.stdout)
        res["conv"] = largest(rows, ("Conv", "ConvTranspose"))
        res["gemm"] = largest([r for r in rows if res["conv"] is None or r[1] != res["conv"][1]], ("MatMul", "Gemm"))
    return res, ""


THREADS = 1   # --threads: ours with N OpenMP threads, onnxruntime with N intra-op threads


def _opts():
    o = ort.SessionOptions()
    o.intra_op_num_threads = THREADS
    o.inter_op_num_threads = 1
    o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return o


def layer_cell(x, peak):
    """GFLOP/s (% of the sgemm peak / % of the FMA peak)."""
    if not x:
        return "-"
    return "%.1f (%.0f%% / %s)" % (x[2], 100.0 * x[2] / peak[0], "%.0f%%" % (100.0 * x[2] / peak[1]) if peak[1] else "-")


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


COLS = ["model", "-O2 ms", "-O0 ms", "ORT ms", "O0/O2", "ORT/O2", "kernels O0>O2", "arena O0>O2 bytes",
        "GFLOP/s", "gcc -O2 s", "largest GEMM GFLOP/s (% sgemm / % FMA peak)", "largest conv GFLOP/s (% sgemm / % FMA peak)"]


def row_cells(name, r, peak):
    gf = r["flops"] / (r["o2"] * 1e6) if r["flops"] and r["o2"] > 0 else None
    return [name, "%.4f" % r["o2"], "%.4f" % r["o0"], "%.4f" % r["ort"], "%.2f" % (r["o0"] / r["o2"]),
            "%.2f" % (r["ort"] / r["o2"]), "%d>%d" % (r["k0"], r["k2"]), "%d>%d" % (r["arena0"], r["arena2"]),
            "%.2f" % gf if gf is not None else "-", "%.1f" % r["cc_s"] if r.get("cc_s") is not None else "-",
            layer_cell(r["gemm"], peak), layer_cell(r["conv"], peak)]


def git_commit():
    """'commit abc1234' (with ' + changes' when the tree differs from it), or 'no git'."""
    try:
        h = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        d = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "compiler", "runtime",
                            "templates"], cwd=ROOT, capture_output=True, text=True)
    except OSError:
        return "no git"
    if h.returncode != 0:
        return "no git"
    return "commit %s%s" % (h.stdout.strip(), " + changes" if d.stdout.strip() else "")


def cpu_name():
    """The CPU's name and its widest vector ISA: 'AMD EPYC (family 25, AVX2, no AVX-512)'."""
    name, fam, flags = None, None, set()
    try:
        for line in open("/proc/cpuinfo"):
            key, _, val = line.partition(":")
            key = key.strip()
            if key == "model name" and name is None:
                name = val.strip()
            elif key == "cpu family" and fam is None:
                fam = val.strip()
            elif key == "flags" and not flags:
                flags = set(val.split())
    except OSError:
        pass
    if name is None:
        return platform.processor() or platform.machine()
    isa = ("AVX-512" + (", VNNI" if "avx512_vnni" in flags else "")) if "avx512f" in flags else \
        "AVX2, no AVX-512" if "avx2" in flags else ""
    return "%s (%s)" % (name, ", ".join(x for x in ("family " + fam if fam else "", isa) if x))


def docs_section(results, peak, command, real):
    """The markdown of the marked section of docs/BENCHMARKS.md."""
    md = ["<!-- bench:begin -->",
          "<!-- written by `tests/bench.py --write-docs`; edits here are replaced at the next run -->",
          "## Latest run: %s, %s, %s, %d core(s), one thread" % (datetime.datetime.now(datetime.timezone.utc).strftime(
              "%Y-%m-%d %H:%M UTC"), git_commit(), cpu_name(), os.cpu_count() or 0),
          "",
          "Command: `.venv/bin/python tests/bench.py %s`. Peaks measured in the same run: packed sgemm "
          "**%.1f GFLOP/s** (numpy float32 1024x1024x1024 matmul, OpenBLAS with its %s kernel, one thread, best "
          "of 20) and FMA **%s GFLOP/s** (one core's vector FMAs at the widest width `-march=native` allows, "
          "16 independent chains in registers, best of 15: the hardware ceiling), each the higher of a measurement at the "
          "start and one at the end of the run. The layer columns are the largest (by "
          "FLOPs) GEMM/MatMul and Conv layer of each model, timed in a `--profile` build, as a percentage of "
          "each peak. On a shared machine these figures are noisy (another job may run beside the benchmark); "
          "compare the ratios of one run." % (command, peak[0], peak[2] or "default",
                                              "%.1f" % peak[1] if peak[1] else "(not measured)"),
          "",
          "![ours/onnxruntime per model](bench.svg)",
          "",
          "| " + " | ".join(c.replace("O0>O2", "-O0 → -O2") for c in COLS) + " |",
          "|---|" + "---:|" * (len(COLS) - 1)]
    for name, r in results:
        cells = row_cells(name, r, peak)
        cells[6] = cells[6].replace(">", " → ")
        cells[7] = cells[7].replace(">", " → ")
        md.append("| " + " | ".join(cells) + " |")
    lay = [(name, kind, r[kind]) for name, r in results for kind in ("gemm", "conv") if r[kind]]
    if lay:
        md += ["", "The layers of the last two columns (the profiling build's rows merged by node):", "",
               "| model | layer | op | node | GFLOP/s | % sgemm peak | % FMA peak |", "|---|---|---|---|---:|---:|---:|"]
        for name, kind, (op, node, gf) in lay:
            short = node if len(node) <= 40 else node[:37] + "..."
            md.append("| %s | %s | %s | `%s` | %.1f | %.0f%% | %s |" % (
                name, "GEMM" if kind == "gemm" else "conv", op, short.replace("|", "\\|"), gf, 100.0 * gf / peak[0],
                "%.0f%%" % (100.0 * gf / peak[1]) if peak[1] else "-"))
    ratios = [r["o2"] / r["ort"] for name, r in results if name in real]
    if ratios:
        md += ["", "Ours/onnxruntime latency over the %d real models, geometric mean: **%.2f** (below 1: faster; "
               "worst %s %.2f)." % (len(ratios), geomean(ratios), *max(((r["o2"] / r["ort"], n) for n, r in results
                                                                        if n in real))[::-1])]
    cc = [(r["cc_s"], n) for n, r in results if r.get("cc_s") is not None]
    if cc:
        md += ["", "The slowest `gcc -O2 -c` of a model's C: **%.1f s** (%s; issue 21's target: under 60 s)." % max(cc)]
    md.append("<!-- bench:end -->")
    return "\n".join(md) + "\n"


def write_docs(path, section):
    text = open(path, encoding="utf-8").read()
    b, e = text.find("<!-- bench:begin -->"), text.find("<!-- bench:end -->")
    if b >= 0 and e > b:
        text = text[:b] + section + text[e + len("<!-- bench:end -->"):].lstrip("\n")
    else:   # first time: before the first dated section
        i = text.find("\n## ")
        i = len(text) if i < 0 else i + 1
        text = text[:i] + section + "\n" + text[i:]
    open(path, "w", encoding="utf-8").write(text)


def svg_chart(results, real):
    """A horizontal bar chart, log scale: ours/onnxruntime latency per model
    (real models, then examples; geometric mean of the real ones last)."""
    def esc(t):
        return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    items = [(n, r["o2"] / r["ort"], n in real) for n, r in results if r["ort"] > 0 and r["o2"] > 0]
    items = [i for i in items if i[2]] + [i for i in items if not i[2]]
    rr = [v for n, v, is_real in items if is_real]
    if rr:
        items.append(("geomean (real models)", geomean(rr), True))
    lo = math.floor(math.log10(min([v for _, v, _ in items] + [0.5])))
    hi = math.ceil(math.log10(max([v for _, v, _ in items] + [2.0])))
    left, width, bar, gap, top = 210, 520, 16, 6, 46
    height = top + len(items) * (bar + gap) + 40

    def x(v):
        return left + (math.log10(v) - lo) / (hi - lo) * width
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
         'font-family="sans-serif" font-size="12">' % (left + width + 60, height, left + width + 60, height),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="18" font-size="14" font-weight="bold">onnx2c latency / onnxruntime latency '
         '(one thread; below 1: onnx2c faster)</text>' % 10,
         '<text x="%d" y="34" fill="#555">log scale; dark: real models, light: the tiny examples '
         '(onnxruntime\'s per-call overhead dominates them)</text>' % 10]
    for p in range(lo, hi + 1):
        for m in ((1, 2, 5) if p < hi else (1,)):
            v = m * 10.0 ** p
            xx = x(v)
            o.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>' % (
                xx, top - 4, xx, height - 30, "#bbb" if m == 1 else "#eee"))
            if m == 1 or hi - lo <= 3:
                o.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%g</text>' % (xx, height - 14, v))
    for k, (name, v, is_real) in enumerate(items):
        y = top + k * (bar + gap)
        x0, x1 = x(1.0), x(v)
        faster = v <= 1.0
        color = ("#2a7d2a" if faster else "#c0392b") if is_real else ("#9fd49f" if faster else "#f1a9a0")
        o.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (left - 8, y + bar - 4, esc(name)))
        o.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %.3g</title></rect>' % (
            min(x0, x1), y, max(abs(x1 - x0), 1.0), bar, color, esc(name), v))
        o.append('<text x="%.1f" y="%d" fill="#333">%s</text>' % (
            (x0 if faster else x1) + 4, y + bar - 4, "%.2f" % v if v >= 0.01 else "%.3g" % v))
        if name.startswith("geomean"):
            o.append('<line x1="10" y1="%d" x2="%d" y2="%d" stroke="#888" stroke-dasharray="3,3"/>' % (
                y - gap // 2, left + width, y - gap // 2))
    o.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black" stroke-width="1.5"/>' % (
        x(1.0), top - 8, x(1.0), height - 30))
    o.append('</svg>')
    return "\n".join(o) + "\n"


def command_line(args):
    """The flags as given, the model folders shortened: a folder whose every
    model is listed as PARENT/*, paths inside the project relative to it."""
    flags = [a for a in sys.argv[1:] if a.startswith("-") or a.isdigit()]
    if not args.dirs:
        return " ".join(flags)
    shown, by_parent = [], {}
    for d in args.dirs:
        by_parent.setdefault(os.path.dirname(os.path.normpath(os.path.abspath(d))), []).append(d)
    for parent, ds in by_parent.items():
        every = sorted(os.path.dirname(m) for m in glob.glob(os.path.join(parent, "*", "model.onnx")))
        given = sorted(set(os.path.normpath(os.path.abspath(d)) for d in ds))
        names = [os.path.join(parent, "*")] if set(every) <= set(given) else given
        for n in names:
            shown.append(os.path.relpath(n, ROOT) if os.path.commonpath([n, ROOT]) == ROOT else n)
    return " ".join(flags + shown)


def main():
    ort.set_default_logger_severity(3)
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-layers", dest="layers", action="store_false",
                    help="no profiling build (no largest-GEMM/conv columns)")
    ap.add_argument("--write-docs", action="store_true",
                    help="replace the marked section of docs/BENCHMARKS.md and write docs/bench.svg")
    ap.add_argument("--threads", type=int, default=1,
                    help="ours compiled with --threads N and -fopenmp, onnxruntime with N intra-op threads")
    ap.add_argument("--thread-pool", action="store_true",
                    help="with --threads: ours built with the portable thread pool (-DO2C_THREAD_POOL -pthread) instead of OpenMP")
    ap.add_argument("dirs", nargs="*")
    args = ap.parse_args()
    global THREADS
    THREADS = args.threads
    dirs = args.dirs or (sorted(glob.glob(os.path.join(ROOT, "examples", "*", ""))) +
                         sorted(glob.glob(os.path.join(ROOT, "..", "shared", "models", "*", ""))) +
                         sorted(glob.glob(os.path.join(ROOT, "build", "real-models", "*", ""))))
    dirs = [d for d in dirs if os.path.exists(os.path.join(d, "model.onnx")) and os.path.isdir(os.path.join(d, "test_data_set_0"))
            and not os.path.exists(os.path.join(d, "expect_error.txt"))]
    examples = os.path.join(ROOT, "examples")
    peak = (sgemm_peak(), fma_peak(), blas_core())
    print("packed-sgemm peak (numpy float32 1024^3 matmul, OpenBLAS %s kernel, 1 thread): %.1f GFLOP/s; "
          "FMA peak (one core, -march=native vectors): %s GFLOP/s" % (peak[2] or "?", peak[0],
                                                                     "%.1f" % peak[1] if peak[1] else "-"))
    fmt = "%-26s %11s %11s %11s %8s %9s %13s %17s %8s %9s %26s %26s"
    print(fmt % tuple(c.replace(" GFLOP/s (% sgemm / % FMA peak)", " GF/s (%sgemm/%FMA)") for c in COLS))
    results, real = [], set()
    for d in dirs:
        name = os.path.basename(os.path.normpath(d))
        with tempfile.TemporaryDirectory(prefix="o2c_bench_") as work:
            res, why = bench_one(d, args, work)
        if res is None:
            print("%-28s %s" % (name, "not measured: " + why))
            continue
        results.append((name, res))
        if os.path.commonpath([os.path.abspath(d), examples]) != examples:
            real.add(name)
        print(fmt % tuple(row_cells(name, res, peak)), flush=True)
    # again at the end: another job on the machine may have held the core at
    # the start; the higher of the two is the peak (what the docs use)
    end = (sgemm_peak(), fma_peak())
    peak = (max(peak[0], end[0]), max(peak[1] or 0, end[1] or 0) or None, peak[2])
    print("peaks again at the end: sgemm %.1f, FMA %s GFLOP/s; the higher ones (%.1f, %s) are the docs' peaks" % (
        end[0], "%.1f" % end[1] if end[1] else "-", peak[0], "%.1f" % peak[1] if peak[1] else "-"))
    ratios = [r["o2"] / r["ort"] for n, r in results if n in real]
    if ratios:
        print("ours/onnxruntime over %d real models, geometric mean: %.2f" % (len(ratios), geomean(ratios)))
    for n, r in results:
        for kind in ("gemm", "conv"):
            if r[kind]:
                print("  %-26s largest %-4s %-36s %-30s %.1f GFLOP/s" % (n, kind, r[kind][0][:36], r[kind][1][:30], r[kind][2]))
    if args.write_docs and results:
        write_docs(os.path.join(ROOT, "docs", "BENCHMARKS.md"), docs_section(results, peak, command_line(args), real))
        open(os.path.join(ROOT, "docs", "bench.svg"), "w").write(svg_chart(results, real))
        print("wrote docs/BENCHMARKS.md (the bench:begin/end section) and docs/bench.svg")


if __name__ == "__main__":
    main()
