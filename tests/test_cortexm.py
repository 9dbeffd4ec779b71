#!/usr/bin/env python3
"""Builds every example's (and every ../shared/models model's, if that folder
exists) generated C for a Cortex-M4 with a single-precision FPU, the way a
firmware user would with Debian's gcc-arm-none-eabi and newlib:

    arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard
        -mfpu=fpv4-sp-d16 -Os -ffreestanding -std=c99 -pedantic -Wall -Wextra -Werror -c

and checks, per model:
  (a) it compiles without a warning;
  (b) the object calls no software double-precision routine (no undefined
      __aeabi_d*, __aeabi_f2d, __aeabi_i2d, ... in arm-none-eabi-nm) and no
      double libm function (exp, sqrt, tanh, ...): float32 stays float32.
      Models with float64 tensors are exempt (said in the output);
  (c) it links against newlib (-specs=nosys.specs, a tiny main calling the
      model), so a libm function newlib lacks is caught;
  (d) the object (built with -ffreestanding) references no heap, stdio, file
      or process function (malloc, free, printf, fopen, exit, ...): libm
      and the string functions at most;
and, for `onnx2c --target cortex-m` (every model at -O2, the examples at
-O0 too; the examples are also built from the default target's portable
C, checks (a)-(d)):
  (e) index arithmetic is 32-bit: no call of the run-time ABI's 64-bit
      division (__aeabi_ldivmod, __aeabi_uldivmod), which a Cortex-M runs
      in software;
  (f) flash as stated: the object's .rodata is NAME_CONST_BYTES of the
      header, within 2% (or RODATA_SLACK bytes for small models) -- above
      it by no more than that, below it by what the C compiler folded
      (scalar constants it reads as immediates);
  (g) the stack as stated: the deepest call chain from the entry points
      (gcc's -fstack-usage and -fcallgraph-info: tests/firmware/stack.py)
      is at most the header's NAME_STACK_BYTES.

    python tests/test_cortexm.py [--compiler build/onnx2c] [-j 2] [TEST_DIR...]

Skipped (one skip, with a note) when arm-none-eabi-gcc is not installed
(tools/install-deps.sh installs it). The last line is
'N passed, N failed, N skipped'; the exit status is 1 if anything failed."""
import argparse, os, re, shutil, subprocess, sys, tempfile
from concurrent.futures import ThreadPoolExecutor

import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_models as rm  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "firmware"))
import stack  # noqa: E402

ROOT = rm.ROOT
CC = "arm-none-eabi-gcc"
NM = "arm-none-eabi-nm"
CFLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-Os", "-ffreestanding",
          "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror"]
# what firmware has no room for: the heap, stdio and files, the process
FORBIDDEN = re.compile(r"^(malloc|calloc|realloc|free|aligned_alloc|posix_memalign|memalign|_sbrk|sbrk|\w*printf|puts"
                       r"|putchar|fputs|fputc|fopen|fclose|fread|fwrite|fflush|fseek|ftell|remove|exit|_exit|abort"
                       r"|atexit|time|clock|getenv|system|signal|raise)$")
# the run-time ABI's double-precision helpers: arithmetic, comparison and
# every conversion to or from double (AEABI section 4.1.2); none is acceptable
DOUBLE_HELPER = re.compile(r"^__aeabi_(d\w+|[a-z0-9]+2d)$|^__(add|sub|mul|div|neg|cmp|eq|ne|lt|le|gt|ge|unord)df\d$"
                           r"|^__(extendsfdf|truncdfsf|float\w*df|fix\w*df\w*)\d?$")
# double libm functions whose float version the kernels must call instead
DOUBLE_LIBM = set("""exp expm1 exp2 log log1p log2 log10 pow sqrt cbrt fabs floor ceil round nearbyint
rint trunc fmod remainder sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh erf erfc
tgamma lgamma fmax fmin hypot ldexp frexp modf copysign""".split())
# the stack's measure (tests/firmware/stack.py)
STACK_FLAGS = ["-fstack-usage", "-fcallgraph-info=su"]
# 64-bit division helpers (AEABI section 4.3.1)
DIV64 = re.compile(r"^__aeabi_u?ldivmod$")
RODATA_SHARE = 0.02
RODATA_SLACK = 64
MAIN_C = """#include "m.h"
static unsigned char in_buf[4], out_buf[4];
int main(void)
{
    const void *in[1] = {in_buf};
    void *out[1] = {out_buf};
    return m_run(in, out);
}
"""


def has_double(model_path):
    m = onnx.load(model_path, load_external_data=False)
    g = m.graph
    d = onnx.TensorProto.DOUBLE
    vis = list(g.input) + list(g.output) + list(g.value_info)
    return any(vi.type.tensor_type.elem_type == d for vi in vis) or \
        any(t.data_type == d for t in g.initializer) or \
        any(a.t.data_type == d for n in g.node for a in n.attribute if a.HasField("t"))


def section_bytes(obj, cwd, prefix):
    rc, out = rm.sh(["arm-none-eabi-size", "-A", obj], 60, cwd=cwd)
    n = 0
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1].isdigit() and (parts[0] == prefix or parts[0].startswith(prefix + ".")):
            n += int(parts[1])
    return n


def header_macro(path, name):
    m = re.search(r"#define m_%s (\d+)" % name, open(path).read())
    return int(m.group(1)) if m else None


def check(compiler, test, tmp, opt, mcu=True):
    """(name, status, message): status 'ok' or 'FAIL'. opt: -O2 or -O0 (onnx2c);
    mcu: --target cortex-m (else the default target)"""
    name = (os.path.relpath(test, os.path.dirname(ROOT)) if not rm.is_in(test, ROOT) else os.path.relpath(test, ROOT)) + \
        " " + opt + (" cortex-m" if mcu else "")
    d = tempfile.mkdtemp(dir=tmp)
    ins = []
    for p in sorted(f for f in os.listdir(os.path.join(test, "test_data_set_0")) if f.startswith("input_")) \
            if os.path.isdir(os.path.join(test, "test_data_set_0")) else []:
        ins.append(rm.load_pb(os.path.join(test, "test_data_set_0", p)))
    model = os.path.join(test, "model.onnx")
    gin = [vi for vi in onnx.load(model, load_external_data=False).graph.input]
    inits = {t.name for t in onnx.load(model, load_external_data=False).graph.initializer}
    gin = [vi for vi in gin if vi.name not in inits]
    flags = rm.shape_flags(gin, ins) if len(ins) == len(gin) else []
    rc, out = rm.sh([compiler, opt, model, "-o", os.path.join(d, "m.c"), "--name", "m"] + flags +
                    (["--target", "cortex-m"] if mcu else []), 600)
    if rc != 0:
        return name, "FAIL", "onnx2c: " + rm.first_error(out)
    rc, out = rm.sh([CC] + CFLAGS + (STACK_FLAGS if mcu else []) + ["-c", "m.c", "-o", "m.o"], 600, cwd=d)
    if rc != 0 or out.strip():
        return name, "FAIL", "(a) compile: " + rm.first_error(out)
    rc, out = rm.sh([NM, "-u", "m.o"], 60, cwd=d)
    undef = [l.split()[-1] for l in out.splitlines() if l.strip()]
    bad = sorted(s for s in undef if FORBIDDEN.match(s))
    if bad:
        return name, "FAIL", "(d) heap, stdio or process functions in firmware code: " + " ".join(bad)
    dbl = sorted(s for s in undef if DOUBLE_HELPER.match(s) or s in DOUBLE_LIBM)
    note = ""
    if mcu:
        div = sorted(s for s in undef if DIV64.match(s))
        if div:
            return name, "FAIL", "(e) 64-bit software division: " + " ".join(div)
        rodata, stated = section_bytes("m.o", d, ".rodata"), header_macro(os.path.join(d, "m.h"), "CONST_BYTES")
        slack = max(RODATA_SLACK, int(stated * RODATA_SHARE))
        if stated is None or not stated - slack <= rodata <= stated + slack:
            return name, "FAIL", "(f) .rodata %d bytes, the header states %s" % (rodata, stated)
        note += "; no 64-bit division; .rodata %d of %d stated" % (rodata, stated)
        try:
            st = stack.measure(os.path.join(d, "m.ci"), os.path.join(d, "m.c"), "m")
        except RuntimeError as e:
            return name, "FAIL", "(g) stack: %s" % e
        said = header_macro(os.path.join(d, "m.h"), "STACK_BYTES")
        if said is None or st.total > said:
            return name, "FAIL", "(g) the run takes %d bytes of stack (%s), the header states %s" % (
                st.total, " > ".join(st.chain), said)
        note += "; stack %d of %d stated" % (st.total, said)
    if dbl:
        if has_double(model):
            note += " (float64 model, exempt from the no-double check: %s)" % " ".join(dbl)
        else:
            return name, "FAIL", "(b) double precision in a float32 model: " + " ".join(dbl)
    with open(os.path.join(d, "main.c"), "w") as f:
        f.write(MAIN_C)
    rc, out = rm.sh([CC] + CFLAGS + ["-specs=nosys.specs", "main.c", "m.o", "-lm", "-o", "m.elf"], 600, cwd=d)
    if rc != 0:
        return name, "FAIL", "(c) link with newlib: " + rm.first_error(out)
    return name, "ok", ("compiles, links" if dbl else "compiles, links, float32 only") + note


def too_large(compiler, tmp):
    """a model whose input is 2.4 GB: the host build compiles it, the
    Cortex-M4 build stops at the generated #error naming the size"""
    from onnx import helper as h, TensorProto as T
    n = 600000000
    g = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [h.make_tensor_value_info("x", T.FLOAT, [1, n])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, n])])
    model = os.path.join(tmp, "too_large.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), model)
    c = os.path.join(tmp, "too_large.c")
    r = subprocess.run([compiler, model, "-o", c], capture_output=True, text=True)
    if r.returncode != 0:
        return "FAIL", "onnx2c: " + r.stderr.strip()
    host = subprocess.run(["gcc", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", c],
                          capture_output=True, text=True)
    if host.returncode != 0:
        return "FAIL", "the host build fails: " + host.stderr.strip()[:300]
    arm = subprocess.run([CC] + CFLAGS + ["-fsyntax-only", c], capture_output=True, text=True)
    if arm.returncode == 0 or "needs a block of 2400000000 bytes" not in arm.stderr:
        return "FAIL", "the Cortex-M4 build is not stopped by the size check: " + arm.stderr.strip()[:300]
    return "ok", "2.4 GB input: host compiles, Cortex-M4 stopped by #error"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("tests", nargs="*")
    a = ap.parse_args()
    if not shutil.which(CC) or not shutil.which(NM):
        print("skipped: %s not installed (tools/install-deps.sh installs gcc-arm-none-eabi)" % CC)
        print("0 passed, 0 failed, 1 skipped")
        return
    paths = a.tests or [rm.EXAMPLES] + ([rm.SHARED_MODELS] if os.path.isdir(rm.SHARED_MODELS) else [])
    # a folder with expect_error.txt holds a model the compiler must refuse
    tests = [t for t in rm.find_tests(paths) if not os.path.exists(os.path.join(t, "expect_error.txt"))]
    tmp = tempfile.mkdtemp(prefix="o2c_cortexm_")
    npass = nfail = 0
    try:
        with ThreadPoolExecutor(max_workers=a.j) as ex:
            # -O2 (every pass) and -O0 (no pass: the unfused kernels) for the
            # examples; the real models at -O2
            jobs = [(t, "-O2", True) for t in tests] + [(t, "-O0", True) for t in tests if rm.is_in(t, rm.EXAMPLES)] + \
                [(t, "-O2", False) for t in tests if rm.is_in(t, rm.EXAMPLES)]
            for name, st, msg in ex.map(lambda j: check(a.compiler, j[0], tmp, j[1], j[2]), jobs):
                print("%-4s %s: %s" % (st, name, msg), flush=True)
                if st == "ok":
                    npass += 1
                else:
                    nfail += 1
        if not a.tests:
            st, msg = too_large(a.compiler, tmp)
            print("%-4s too_large: %s" % (st, msg), flush=True)
            npass, nfail = npass + (st == "ok"), nfail + (st != "ok")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed, 0 skipped" % (npass, nfail))
    sys.exit(1 if nfail else 0)


if __name__ == "__main__":
    main()
