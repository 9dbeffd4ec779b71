#!/usr/bin/env python3
"""Call-site specialization variants of the generated C, timed side by side
(docs/BENCHMARKS.md, "Call-site specialization").

For each model the compiler's C (-O2, default flags) is rewritten into these
variants, each built with gcc -O3 -march=native and timed by the harness of
tests/bench.py (medians, rounds alternating between the variants and
onnxruntime with one thread):
  a_outofline    O2C_INLINE defined empty: the code before call-site specialization
  b_kernels      only the kernels always_inline, not the helpers they call
  c_split32      the default, the schedule split into noinline functions of 32 calls
  d_sconst       the default, each call's k/f parameters a static const o2c_p
                 copied, then its pointers stored (the arena is the caller's,
                 so the pointers cannot be static)
  e_sconst_ool   d_sconst with the kernels out of line
  default        the generated C as it is
For each variant also the gcc -O2 compile time of the file alone and the
object's size (all of it: weights included) and its .text size.

Usage: tools/bench_callsite.py [--compiler build/onnx2c] [--rounds 5] MODEL_DIR..."""
import argparse, os, re, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import bench  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402

INL = "#define O2C_INLINE __attribute__((always_inline))\n"
KDEF = "#define O2C_KERNEL(name) O2C_HD static inline O2C_INLINE void name("


def outofline(s):
    assert INL in s
    return s.replace(INL, "#define O2C_INLINE\n")


def kernels_only(s):
    assert KDEF in s
    return s.replace("static inline O2C_INLINE ", "static inline ").replace(
        KDEF.replace("O2C_INLINE ", ""), KDEF)


def split(s, per):
    m = re.search(r"static int run_impl\(const void \*const inputs\[\], void \*const outputs\[\], unsigned char \*arena\)\n"
                  r"\{\n    \(void\)inputs;\n    \(void\)outputs;\n    \(void\)arena;\n(.*?)    return 0;\n\}\n", s, re.S)
    body = m.group(1)
    calls = re.findall(r"(?:    /\*.*?\*/\n)?    \{\n.*?\n    \}\n", body, re.S)
    assert "".join(calls) == body
    parts = [calls[i:i + per] for i in range(0, len(calls), per)]
    head = "static void run_part%d(const void *const inputs[], void *const outputs[], unsigned char *arena)\n"
    out = ["#if defined(__GNUC__)\n__attribute__((noinline))\n#endif\n" + head % k +
           "{\n    (void)inputs;\n    (void)outputs;\n    (void)arena;\n" + "".join(p) + "}\n\n" for k, p in enumerate(parts)]
    impl = ("static int run_impl(const void *const inputs[], void *const outputs[], unsigned char *arena)\n{\n" +
            "".join("    run_part%d(inputs, outputs, arena);\n" % k for k in range(len(parts))) + "    return 0;\n}\n")
    return s[:m.start()] + "".join(out) + impl + s[m.end():]


def sconst(s):
    from params_equal import COMMENT, split_top, unbrace   # tools/: the call sites' named initializers

    def rep(m):
        ind, body = m.groups()
        consts, ptrs = [], []
        for field in split_top(unbrace(COMMENT.sub("", body))):
            name, val = (t.strip() for t in field.split("=", 1))
            if name in (".x", ".y"):
                ptrs += [ind + "p.%s[%d] = %s;\n" % (name[1], j, e) for j, e in enumerate(split_top(unbrace(val))) if e != "0"]
            else:
                consts.append(field)
        return "".join([ind + "static const o2c_p pc = {%s};\n" % (", ".join(consts) or ".k = {0}"), ind + "o2c_p p = pc;\n"] + ptrs)
    return re.sub(r"^( {8})const o2c_p p = (\{.*?\});\n", rep, s, flags=re.M | re.S)


VARIANTS = {
    "a_outofline": outofline,
    "b_kernels": kernels_only,
    "c_split32": lambda s: split(s, 32),
    "d_sconst": sconst,
    "e_sconst_ool": lambda s: sconst(outofline(s)),
    "default": lambda s: s,
}


def run_model(d, args):
    name = os.path.basename(os.path.normpath(d))
    model = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    gin = [i for i in model.graph.input if i.name not in inits]
    ins = [bench.load_pb(os.path.join(d, "test_data_set_0", "input_%d.pb" % k)) for k in range(len(gin))]
    sess = ort.InferenceSession(os.path.join(d, "model.onnx"), sess_options=bench._opts(), providers=["CPUExecutionProvider"])
    feeds = {i.name: a for i, a in zip(sess.get_inputs(), ins)}
    outs = sess.run(None, feeds)
    with tempfile.TemporaryDirectory(prefix="o2c_callsite_") as work:
        src = os.path.join(work, "m.c")
        cmd = [args.compiler, os.path.join(d, "model.onnx"), "-o", src, "--name", "m", "-O2"]
        for vi, a in zip(gin, ins):
            cmd += ["--shape", "%s:%s" % (vi.name, "x".join(str(s) for s in a.shape))]
        subprocess.run(cmd, check=True)
        base = open(src).read()
        open(os.path.join(work, "main.c"), "w").write(bench.HARNESS % dict(
            ni=len(ins), no=len(outs), in_sz="".join("%d," % a.nbytes for a in ins),
            out_sz="".join("%d," % np.asarray(o).nbytes for o in outs)))
        files = []
        for k, a in enumerate(ins):
            fn = os.path.join(work, "in%d" % k)
            open(fn, "wb").write(np.ascontiguousarray(a).tobytes())
            files.append(fn)
        r = {}
        for v, fn in VARIANTS.items():
            vs = os.path.join(work, v + ".c")
            open(vs, "w").write(fn(base))
            t = time.time()
            subprocess.run(["gcc", "-O2", "-std=c99", "-w", "-c", vs, "-o", vs[:-2] + ".o"], check=True)
            ct = time.time() - t
            sec = subprocess.run(["size", "-A", vs[:-2] + ".o"], capture_output=True, text=True).stdout.splitlines()
            text = sum(int(l.split()[1]) for l in sec if l.startswith(".text"))
            exe = os.path.join(work, v)
            subprocess.run(["gcc", "-O3", "-march=native", "-std=c99", "-w", "-o", exe, os.path.join(work, "main.c"), vs, "-lm"],
                           check=True)
            r[v] = dict(exe=exe, compile_s=ct, obj=os.path.getsize(vs[:-2] + ".o"), text=text, ms=[])
        t1 = float(subprocess.run([r["a_outofline"]["exe"], "3"] + files, capture_output=True, text=True).stdout)
        n = max(5, min(2000, int(0.3e3 / max(t1, 1e-3))))
        ort_ms = []
        for _ in range(args.rounds):
            for v in VARIANTS:
                r[v]["ms"].append(float(subprocess.run([r[v]["exe"], str(n)] + files, capture_output=True, text=True).stdout))
            for _ in range(3):
                sess.run(None, feeds)
            ts = []
            for _ in range(n):
                a = time.perf_counter()
                sess.run(None, feeds)
                ts.append((time.perf_counter() - a) * 1e3)
            ort_ms.append(statistics.median(ts))
    o = statistics.median(ort_ms)
    for v in VARIANTS:
        m = statistics.median(r[v]["ms"])
        print("| %s | %s | %.4g | %.4g | %.2f | %.2f | %.1f | %.1f |" % (
            name, v, m, o, m / o, r[v]["compile_s"], r[v]["obj"] / 1024, r[v]["text"] / 1024), flush=True)


def main():
    ort.set_default_logger_severity(3)
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    print("| model | variant | ms | onnxruntime ms | ours/ORT | gcc -O2 s | .o KB | .text KB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for d in args.dirs:
        run_model(d, args)


if __name__ == "__main__":
    main()
