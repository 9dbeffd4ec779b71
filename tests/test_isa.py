#!/usr/bin/env python3
"""The generated C's vector paths, each on its own (runtime/c/o2c_rt.h's
o2c_v16 and the kernels that use it).

    python tests/test_isa.py [--compiler build/onnx2c]

The C is one file whose vector code is chosen at C-compile time by the
predefined macros. The model tests build it with gcc's defaults (x86-64:
SSE2, the portable path). Here the examples whose kernels take a vector
path are built again for each instruction set this machine can run
(-mavx2 -mfma; -mavx512f -mavx512dq -mfma) and checked against onnxruntime
by tests/run_models.py (under the sanitizers when --compiler is the
sanitizer build); a probe (runtime/c/o2c_rt.h built with the same flags) first
checks that the path is the one meant and computes a multiply-add (O2C_V16_NATIVE and the instruction set's macro). An
instruction set the CPU lacks is a skipped case, said as such. For AArch64
NEON, where aarch64-linux-gnu-gcc is installed, the examples' C is compiled
with -Werror (it cannot run here without an emulator: with qemu-aarch64
and the cross libc, the probe runs too). Compile-time checks: the loops of
the vectorizable float math and the linear kernels' row epilogue of every
activation must be reported vectorized by gcc -fopt-info-vec for SSE2,
AVX2 and AVX-512 (no CPU with the set needed). The last line is
'N passed, N failed, N skipped'."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable
RUNTIME = os.path.join(ROOT, "runtime", "c")
# examples with depthwise chains (o2c_dwc_f32) and the other tiled kernels
MODELS = ["mobilenet_block", "small_convnet", "srcnn_cubic", "gemm_chain", "self_attention"]
ISAS = [  # name, gcc flags, /proc/cpuinfo flags it needs, the macro the probe checks
    ("avx2", "-mavx2 -mfma", ["avx2", "fma"], "__AVX2__"),
    ("avx512", "-mavx512f -mavx512dq -mfma", ["avx512f", "avx512dq", "fma"], "__AVX512F__"),
]
PROBE = r'''
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include "o2c_rt.h"
int main(void)
{
#if !O2C_V16_NATIVE || !defined(%s)
    puts("portable");
    return 1;
#else
    float a[16], b[16], c[16], r[16];
    for (int i = 0; i < 16; i++) { a[i] = (float)i; b[i] = 0.5f; c[i] = 1.0f; }
    o2c_v16_store(r, o2c_v16_fma(o2c_v16_load(c), o2c_v16_load(a), o2c_v16_load(b)));
    for (int i = 0; i < 16; i++)
        if (r[i] != 1.0f + 0.5f * (float)i) { printf("lane %%d: %%g\n", i, r[i]); return 1; }
    puts("native");
    return 0;
#endif
}
'''


# the vectorizable float math (runtime/c/o2c_rt.h, o2c_vexp_f32 ...): a loop
# calling each must become vector code for every instruction set (a
# compile-time check, so it needs no CPU with the set): a float choice gcc
# cannot if-convert keeps such a loop scalar (AVX2 builds did, until the
# choices became o2c_vsel_f32). o2c_vlog1p_f32 vectorizes with AVX-512 only.
VMATH_FUNCS = ["o2c_vexp_f32", "o2c_vsigmoid_f32", "o2c_vtanh_f32", "o2c_vlog_f32", "o2c_verf_f32"]
VMATH_ISAS = [("sse2", ""), ("avx2", "-mavx2 -mfma"), ("avx512", "-mavx512f -mavx512dq -mfma")]
VMATH_SRC = r'''
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include "o2c_rt.h"
%s
'''


def vmath_vectorized(work):
    """(passed, failed): each function's loop vectorized, per instruction set"""
    loops = "\n".join("void loop_%s(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = %s(x[i]); }"
                      % (f, f) for f in VMATH_FUNCS)
    src = os.path.join(work, "vmath_loops.c")
    with open(src, "w") as f:
        f.write(VMATH_SRC % loops)
    first = VMATH_SRC[:VMATH_SRC.index("%s")].count("\n") + 1   # the line of the first loop
    passed = failed = 0
    for name, flags in VMATH_ISAS:
        rc, out = run(["gcc", "-std=c99", "-O3", "-I" + RUNTIME] + flags.split() +
                      ["-fopt-info-vec-optimized", "-c", src, "-o", os.path.join(work, "vmath_loops.o")])
        done = {int(l.split(":")[1]) for l in out.splitlines() if "loop vectorized" in l and "vmath_loops.c:" in l}
        scalar = [f for i, f in enumerate(VMATH_FUNCS) if first + i not in done]
        if rc != 0 or scalar:
            print("FAIL %s: loops left scalar by gcc %s: %s%s" % (name, flags or "(defaults)", ", ".join(scalar),
                                                                   "" if rc == 0 else "\n" + out[-2000:]))
            failed += 1
        else:
            print("ok   %s: %s vectorize (gcc %s)" % (name, ", ".join(VMATH_FUNCS), flags or "defaults"))
            passed += 1
    return passed, failed


# the linear kernels' row epilogue (o2c_epi_f32_row, runtime/c/o2c_rt.h):
# with one activation and no residual (the parameters constant, as in a
# generated model) its loop must be vector code too; one file each, since
# gcc reports the loop at the macro's line. Mish needs o2c_vlog1p_f32:
# AVX-512 only, as above.
EPI_ACTS = ["RELU", "CLIP", "LEAKYRELU", "PRELU", "SIGMOID", "TANH", "HARDSIGMOID", "HARDSWISH", "SILU", "GELU_ERF",
            "GELU_TANH", "MISH"]
EPI_SRC = r'''
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include "o2c_rt.h"
void epi_row(float *y, int n, const float *slope)
{
    o2c_p p;
    memset(&p, 0, sizeof p);
    p.k[O2C_EPI_ACT] = O2C_ACT_%s;
    p.k[O2C_EPI_NSLOPE] = 1;
    p.x[O2C_EPI_XSLOPE] = slope;
    p.ff[O2C_EPI_FA] = 0.25f;
    p.ff[O2C_EPI_FB] = 0.5f;
    o2c_epi_f32_row(y, n, 0, 0, &p);
}
'''


def epi_row_vectorized(work):
    """(passed, failed): the row epilogue of each activation vectorized, per instruction set"""
    passed = failed = 0
    for name, flags in VMATH_ISAS:
        scalar = []
        for act in EPI_ACTS:
            if act == "MISH" and name != "avx512":
                continue
            src = os.path.join(work, "epi_%s.c" % act.lower())
            with open(src, "w") as f:
                f.write(EPI_SRC % act)
            rc, out = run(["gcc", "-std=c99", "-O3", "-I" + RUNTIME] + flags.split() +
                          ["-fopt-info-vec-optimized", "-c", src, "-o", src[:-2] + ".o"])
            if rc != 0 or "loop vectorized" not in out:
                scalar.append(act if rc == 0 else act + " (gcc failed: " + out[-500:] + ")")
        if scalar:
            print("FAIL %s: row epilogues left scalar by gcc %s: %s" % (name, flags or "(defaults)", ", ".join(scalar)))
            failed += 1
        else:
            print("ok   %s: the row epilogue of every activation vectorizes (gcc %s)" % (name, flags or "defaults"))
            passed += 1
    return passed, failed


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    return p.returncode, p.stdout


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    args = ap.parse_args()
    passed = failed = skipped = 0
    work = tempfile.mkdtemp(prefix="o2c-isa-")
    try:
        have = cpu_flags()
        for check in (vmath_vectorized, epi_row_vectorized):
            p, f = check(work)
            passed += p
            failed += f
        for name, flags, need, macro in ISAS:
            missing = [f for f in need if f not in have]
            if missing:
                print("skip %s: this CPU lacks %s" % (name, ", ".join(missing)))
                skipped += 1
                continue
            probe = os.path.join(work, "probe_%s.c" % name)
            with open(probe, "w") as f:
                f.write(PROBE % macro)
            exe = probe[:-2]
            rc, out = run(["gcc", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O2", "-I" + RUNTIME] +
                          flags.split() + ["-o", exe, probe, "-lm"])
            if rc == 0:
                rc, out = run([exe])
            if rc != 0 or out.strip() != "native":
                print("FAIL %s probe: %s" % (name, out.strip()[:400]))
                failed += 1
                continue
            print("ok   %s: o2c_v16 takes the %s path" % (name, name))
            passed += 1
            # every tiled kernel against its reference, built for this instruction set
            build = os.path.join("build", "isa-" + name)
            rc, out = run(["make", "-s", "-j2", "BUILD=" + build, "CFLAGS=-O1 " + flags,
                           os.path.join(build, "tests", "unit_tiled")], cwd=ROOT)
            if rc == 0:
                rc, out = run([os.path.join(ROOT, build, "tests", "unit_tiled")])
            if rc != 0:
                print("FAIL %s: tests/unit/test_tiled.c built with %s:\n%s" % (name, flags, out[-3000:]))
                failed += 1
            else:
                print("ok   %s: tests/unit/test_tiled.c (every kernel variant against its reference)" % name)
                passed += 1
            rc, out = run([PY, os.path.join(ROOT, "tests", "run_models.py"), "--compiler", args.compiler,
                           "--levels", "2", "--cc-flags", flags] + [os.path.join(ROOT, "examples", m) for m in MODELS])
            tail = out.strip().splitlines()[-1] if out.strip() else ""
            if rc != 0:
                print("FAIL %s: the examples against onnxruntime:\n%s" % (name, out[-3000:]))
                failed += 1
            else:
                print("ok   %s: %s (%s)" % (name, ", ".join(MODELS), tail))
                passed += 1
        cross = shutil.which("aarch64-linux-gnu-gcc")
        qemu = shutil.which("qemu-aarch64") or shutil.which("qemu-aarch64-static")
        if not cross or not qemu or not os.path.isdir("/usr/aarch64-linux-gnu/lib"):
            print("skip neon: needs aarch64-linux-gnu-gcc, the AArch64 libc and qemu-aarch64 (Debian's "
                  "gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-user; `make deps` installs them)")
            skipped += 1
        else:
            probe = os.path.join(work, "probe_neon.c")
            with open(probe, "w") as f:
                f.write(PROBE % "__ARM_NEON")
            rc, out = run([cross, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O2", "-static", "-I" + RUNTIME,
                           "-o", probe[:-2], probe, "-lm"])
            if rc == 0:
                rc, out = run([qemu, probe[:-2]])
            if rc != 0 or out.strip() != "native":
                print("FAIL neon probe (AArch64, under qemu): " + out.strip()[:400])
                failed += 1
            else:
                print("ok   neon: o2c_v16 takes the NEON path (AArch64, under qemu)")
                passed += 1
                rc, out = run([PY, os.path.join(ROOT, "tests", "run_models.py"), "--compiler", args.compiler,
                               "--levels", "2", "--c-only", "--cc", cross + " -static", "--run-prefix", qemu] +
                              [os.path.join(ROOT, "examples", m) for m in MODELS])
                tail = out.strip().splitlines()[-1] if out.strip() else ""
                if rc != 0:
                    print("FAIL neon: the examples against onnxruntime:\n%s" % out[-3000:])
                    failed += 1
                else:
                    print("ok   neon: %s built for AArch64, run under qemu (%s)" % (", ".join(MODELS), tail))
                    passed += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
