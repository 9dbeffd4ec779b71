#!/usr/bin/env python3
"""Tests of onnx2c --profile (the profiling build of the generated C).

    python tests/test_profile.py [--compiler build/onnx2c] [-j 2] [TEST_DIR...]

For every example (TEST_DIRs instead when given; default: examples/ only, the
shared models are slow under the sanitizers), at -O2:
  - the ordinary build (no --profile) is the profiling build minus its marked
    profile blocks, byte for byte, and holds no profiling text: the flag
    changes nothing else;
  - the profiling build compiles with gcc -std=c99 -pedantic -Wall -Wextra
    -Werror under ASan+UBSan (and with clang -c); a driver runs it RUNS times,
    and the outputs still match the stored expected outputs (the tolerances
    of tests/run_models.py);
  - NAME_profile_print's table has one row per kernel call of the schedule
    (the rows of --report: same numbers, same kernels), sorted by time, each
    with calls == RUNS and times >= 0; NAME_profile_rows() says the same;
    NAME_profile_reset() clears it;
and once:
  - a user timer (-DO2C_PROFILE_NOW() a counter that ticks once a read,
    O2C_PROFILE_T uint32_t starting just below the wrap): every call's time
    is exactly 1 tick, the run's 2 * kernels + 1 ticks, across the wrap;
  - Cortex-M (arm-none-eabi-gcc, if installed): without a user timer the
    build stops at the #error that asks for one; with the DWT cycle counter
    as timer it compiles warning-free, with and without O2C_PROFILE_NO_STDIO;
  - refusals: --profile with -o OUT.cu (the CUDA target is not supported:
    exit 1, a clear message, no file), --profile without -o.
The last line is 'N passed, N failed, N skipped'."""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_models as rm  # noqa: E402

import onnx  # noqa: E402

ROOT = rm.ROOT
RUNS = 3
# '#, kernel, calls, total ms, ms/run, %, GFLOP/s, op (node)': the names last, in full
ROW = re.compile(r"^\s*(\d+)\s+(o2c_\w+)\s+(\d+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(\S+)  (.*)$")
REPORT_ROW = re.compile(r"^\s*(\d+)\s+(o2c_\w+)\s", re.M)
GCC = ["gcc", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-g", "-O1"] + rm.SAN
CLANG = ["clang", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-c"]
ARM = ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-Os",
       "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-c"]
DWT = ["-DO2C_PROFILE_NOW()=(*(volatile uint32_t *)0xE0001004u)", "-DO2C_PROFILE_T=uint32_t",
       "-DO2C_PROFILE_UNITS_PER_SEC=168000000.0"]

DRIVER = r'''
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "m.h"
static const long in_sz[] = {%(in_sz)s 0}, out_sz[] = {%(out_sz)s 0};
int main(int argc, char **argv)   /* prog IN... OUT... */
{
    const void *ins[%(ni)d + 1] = {0};
    void *outs[%(no)d + 1] = {0};
    const m_profile_row *r = m_profile_rows();
    int i;
    if (argc != 1 + %(ni)d + %(no)d) return 2;
    for (i = 0; i < %(ni)d; i++) {
        void *p = malloc((size_t)in_sz[i] + 1);
        FILE *f = fopen(argv[1 + i], "rb");
        if (!p || !f || fread(p, 1, (size_t)in_sz[i], f) != (size_t)in_sz[i]) return 3;
        fclose(f);
        ins[i] = p;
    }
    for (i = 0; i < %(no)d; i++) outs[i] = malloc((size_t)out_sz[i] + 1);
    for (i = 0; i < %(runs)d; i++)
        if (m_run(ins, outs)) return 4;
    for (i = 0; i < %(no)d; i++) {
        FILE *f = fopen(argv[1 + %(ni)d + i], "wb");
        if (!f || fwrite(outs[i], 1, (size_t)out_sz[i], f) != (size_t)out_sz[i]) return 3;
        fclose(f);
    }
    m_profile_print(stdout);
    printf("RUNS %%lu %%lu %%.1f\n", (unsigned long)m_profile_runs(), (unsigned long)m_profile_run_time(),
           m_profile_units_per_sec());
    for (i = 0; i < m_PROFILE_ROWS; i++)
        printf("ROW %%d %%s %%lu %%lu %%lld [%%s] [%%s] [%%s]\n", i, r[i].kernel, (unsigned long)r[i].calls,
               (unsigned long)r[i].time, (long long)r[i].flops, r[i].op, r[i].node, r[i].covers);
    printf("END %%d\n", r[m_PROFILE_ROWS].kernel == 0);
    m_profile_reset();
    if (m_run(ins, outs)) return 4;
    printf("AFTER %%lu", (unsigned long)m_profile_runs());
    for (i = 0; i < m_PROFILE_ROWS; i++) printf(" %%lu", (unsigned long)r[i].calls);
    printf("\n");
    for (i = 0; i < %(ni)d; i++) free((void *)ins[i]);
    for (i = 0; i < %(no)d; i++) free(outs[i]);
    return 0;
}
'''

TICK_H = "#include <stdint.h>\nextern uint32_t o2c_test_ticks;\n"
TICK_C = "#include <stdint.h>\nuint32_t o2c_test_ticks = 0xFFFFFFF0u;\n"
TICK = ["-DO2C_PROFILE_NOW()=(o2c_test_ticks++)", "-DO2C_PROFILE_T=uint32_t", "-DO2C_PROFILE_UNITS_PER_SEC=1000.0"]


def run(cmd, timeout=600, cwd=None):
    r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout, cwd=cwd)
    return r.returncode, r.stdout + r.stderr


def strip_profile(c, h):
    """The profiling build's .c and .h without their profile blocks."""
    pre = re.compile(r"/\* A profiling build \(onnx2c --profile\).*?\n#endif\n", re.S)
    c, n1 = pre.subn("", c, count=1)
    c, n2 = re.subn(r"\n/\* ---- profiling \(onnx2c --profile\) ----\n.*?\n\};\n", "", c, count=1, flags=re.S)
    c, n3 = re.subn(r"^\s+O2C_PROFILE_(START|STOP|RUN)\(.*\);\n", "", c, flags=re.M)
    c, n4 = re.subn(r"\n/\* ---- profiling \(onnx2c --profile\) ---- \*/\n.*\Z", "", c, count=1, flags=re.S)
    h, n5 = re.subn(r"/\* ---- profiling \(onnx2c --profile\) ----\n.*?\n#endif\n\n", "", h, count=1, flags=re.S)
    h, n6 = re.subn(r"#ifndef O2C_PROFILE_NO_STDIO\n#include <stdio.h>\n#endif\n", "", h, count=1)
    if (n1, n2, n4, n5, n6) != (1, 1, 1, 1, 1) or n3 < 2:
        raise AssertionError("profile blocks not found where expected (%d %d %d %d %d %d)" % (n1, n2, n3, n4, n5, n6))
    return c, h


def model_io(test):
    ds = sorted(glob.glob(os.path.join(test, "test_data_set_*")))[0]
    model = onnx.load(os.path.join(test, "model.onnx"), load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    gin = [i for i in model.graph.input if i.name not in inits]
    ins = [rm.load_pb(os.path.join(ds, "input_%d.pb" % k)) for k in range(len(gin))]
    outs = [rm.load_pb(os.path.join(ds, "output_%d.pb" % k)) for k in range(len(model.graph.output))]
    return gin, ins, outs


def write_driver(work, ins, outs):
    with open(os.path.join(work, "main.c"), "w") as f:
        f.write(DRIVER % dict(ni=len(ins), no=len(outs), runs=RUNS,
                              in_sz="".join("%d," % len(rm.raw_bytes(a)) for a in ins),
                              out_sz="".join("%d," % (a.size * (1 if a.dtype == bool else a.dtype.itemsize)) for a in outs)))
    files = []
    for k, a in enumerate(ins):
        p = os.path.join(work, "in%d.bin" % k)
        with open(p, "wb") as f:
            f.write(rm.raw_bytes(a))
        files.append(p)
    return files + [os.path.join(work, "out%d.bin" % k) for k in range(len(outs))]


def parse_table(out):
    lines = out.splitlines()
    if not lines or not lines[0].startswith("onnx2c profile: m, %d runs" % RUNS):
        raise AssertionError("table: no title line (%s)" % (lines[0][:100] if lines else "no output"))
    rows = [ROW.match(l) for l in lines[2:] if l.startswith(" ") and ROW.match(l)]
    if not any(l.startswith("total: %d kernels" % len(rows)) for l in lines):
        raise AssertionError("table: no 'total: %d kernels' line" % len(rows))
    return rows


def check_model(args, test):
    if os.path.exists(os.path.join(test, "expect_error.txt")):
        return "skip", "refused by design"
    gin, ins, outs = model_io(test)
    flags = rm.shape_flags(gin, ins)
    work = tempfile.mkdtemp(prefix="o2c_prof_")
    try:
        m = os.path.join(test, "model.onnx")
        plain, prof = os.path.join(work, "plain"), work
        os.makedirs(plain)
        rc, out = run([args.compiler, m, "-O2", "-o", os.path.join(plain, "m.c")] + flags)
        if rc != 0:
            if rm.is_in(test, rm.EXAMPLES):
                raise AssertionError("onnx2c failed: " + out.strip()[:300])
            return "skip", "refused: " + out.strip()[:120]
        c = os.path.join(prof, "m.c")
        rep = os.path.join(prof, "report.txt")
        rc, out = run([args.compiler, m, "-O2", "-o", c, "--profile", "--report=" + rep] + flags)
        if rc != 0:
            raise AssertionError("onnx2c --profile failed: " + out.strip()[:300])
        # the ordinary build: the profiling one minus its blocks, nothing else
        pc, ph = open(c).read(), open(os.path.join(prof, "m.h")).read()
        oc, oh = open(os.path.join(plain, "m.c")).read(), open(os.path.join(plain, "m.h")).read()
        if re.search(r"O2C_PROFILE|m_profile_|onnx2c --profile", oc + oh):
            raise AssertionError("the ordinary build holds profiling text")
        sc, sh_ = strip_profile(pc, ph)
        # the flags the files record (the banner, NAME_ONNX2C_FLAGS) differ by --profile: set aside
        sc, sh_, oc, oh = (rm.without_flags(t) for t in (sc, sh_, oc, oh))
        if sc != oc or sh_ != oh:
            raise AssertionError("the profiling build differs from the ordinary one outside its profile blocks")
        calls = rm.count_kernels(c)
        if calls != rm.count_kernels(os.path.join(plain, "m.c")):
            raise AssertionError("kernel calls differ between the builds")
        report = REPORT_ROW.findall(open(rep).read())
        # build (ASan+UBSan) and run
        files = write_driver(work, ins, outs)
        exe = os.path.join(work, "prog")
        rc, out = run(GCC + ["-o", exe, os.path.join(work, "main.c"), c, "-lm"])
        if rc != 0:
            raise AssertionError("gcc: " + rm.first_error(out))
        if shutil.which("clang"):
            rc, out = run(CLANG + ["-o", os.path.join(work, "m.o"), c])
            if rc != 0:
                raise AssertionError("clang: " + rm.first_error(out))
        rc, out = run([exe] + files, timeout=900)
        if rc != 0:
            raise AssertionError("the profiling build exited %d: %s" % (rc, rm.first_error(out)))
        for k, want in enumerate(outs):
            ok, err, why = rm.compare(open(files[len(ins) + k], "rb").read(), want, args.rtol, args.atol)
            if not ok:
                raise AssertionError("output %d: %s" % (k, why))
        # the table
        rows = parse_table(out)
        if len(rows) != calls or len(report) != calls:
            raise AssertionError("table %d rows, report %d, schedule %d kernel calls" % (len(rows), len(report), calls))
        idx = sorted(int(r.group(1)) for r in rows)
        if idx != list(range(calls)):
            raise AssertionError("table row numbers are not 0..%d" % (calls - 1))
        names = {int(r.group(1)): r.group(2) for r in rows}
        for num, kernel in report:
            if names[int(num)] != kernel:
                raise AssertionError("row %s: table says %s, report %s" % (num, names[int(num)], kernel))
        totals = [float(r.group(4)) for r in rows]
        # control flow (If, Loop, Scan): a row runs as often as its branch or loop does, the same each run
        ctl = re.search(r"^\s+(for \(;;\) \{|if \(\*\(const unsigned char \*\))", pc, re.M) is not None
        per_run = {int(r.group(1)): int(r.group(3)) // RUNS for r in rows}
        if any(int(r.group(3)) != RUNS * (per_run[int(r.group(1))] if ctl else 1) for r in rows) or any(t < 0 for t in totals):
            raise AssertionError("a row with calls != %d (times its runs a run) or a negative time" % RUNS)
        if totals != sorted(totals, reverse=True):
            raise AssertionError("table not sorted by time")
        # NAME_profile_rows()
        api = [l.split() for l in out.splitlines() if l.startswith("ROW ")]
        runs = [l.split() for l in out.splitlines() if l.startswith("RUNS ")][0]
        if int(runs[1]) != RUNS or float(runs[3]) != 1e9:
            raise AssertionError("profile_runs %s, units a second %s" % (runs[1], runs[3]))
        if len(api) != calls or any(int(a[3]) != RUNS * (per_run[int(a[1])] if ctl else 1) for a in api) or \
                sum(int(a[4]) for a in api) > int(runs[2]):
            raise AssertionError("profile_rows: counts or times do not add up")
        if "END 1" not in out.splitlines():
            raise AssertionError("profile_rows: no closing row with a NULL kernel")
        after = [l.split() for l in out.splitlines() if l.startswith("AFTER ")][0]
        if after[1:] != ["1"] + [str(per_run[i] if ctl else 1) for i in range(calls)]:
            raise AssertionError("after profile_reset and one run: %s" % " ".join(after))
        return "pass", "%d rows, calls == %d runs" % (calls, RUNS)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check_once(args):
    """The user timer, Cortex-M, the refusals: [(name, status, note)]."""
    res = []
    test = os.path.join(rm.EXAMPLES, "small_convnet")
    m = os.path.join(test, "model.onnx")
    work = tempfile.mkdtemp(prefix="o2c_prof_")
    try:
        c = os.path.join(work, "m.c")
        rc, out = run([args.compiler, m, "-o", c, "--profile"])
        calls = rm.count_kernels(c) if rc == 0 else 0
        # a user timer that ticks once a read, 32 bits, across the wrap
        try:
            gin, ins, outs = model_io(test)
            files = write_driver(work, ins, outs)
            open(os.path.join(work, "tick.h"), "w").write(TICK_H)
            open(os.path.join(work, "tick.c"), "w").write(TICK_C)
            exe = os.path.join(work, "tick")
            rc, out = run(GCC + TICK + ["-include", os.path.join(work, "tick.h"), "-o", exe,
                                        os.path.join(work, "main.c"), c, os.path.join(work, "tick.c"), "-lm"])
            if rc != 0:
                raise AssertionError("gcc: " + rm.first_error(out))
            rc, out = run([exe] + files)
            if rc != 0:
                raise AssertionError("exited %d: %s" % (rc, rm.first_error(out)))
            api = [l.split() for l in out.splitlines() if l.startswith("ROW ")]
            runs = [l.split() for l in out.splitlines() if l.startswith("RUNS ")][0]
            if len(api) != calls or any(int(a[4]) != RUNS for a in api):
                raise AssertionError("call times are not 1 tick each: %s" % [a[4] for a in api])
            if int(runs[2]) != RUNS * (2 * calls + 1) or float(runs[3]) != 1000.0:
                raise AssertionError("run time %s ticks, want %d" % (runs[2], RUNS * (2 * calls + 1)))
            res.append(("user timer", "pass", "%d ticks a call across the 32-bit wrap" % 1))
        except AssertionError as e:
            res.append(("user timer", "fail", str(e)))
        # Cortex-M
        if not shutil.which(ARM[0]):
            res.append(("cortex-m", "skip", "arm-none-eabi-gcc not installed"))
        else:
            o = os.path.join(work, "arm.o")
            rc, out = run(ARM + ["-o", o, c])
            if rc == 0 or "no default timer here" not in out:
                res.append(("cortex-m no timer", "fail", "expected the #error asking for a timer: " + out.strip()[:200]))
            else:
                res.append(("cortex-m no timer", "pass", "#error asks for O2C_PROFILE_NOW"))
            for extra, label in (([], "cortex-m DWT timer"), (["-DO2C_PROFILE_NO_STDIO"], "cortex-m DWT, no stdio")):
                rc, out = run(ARM + DWT + extra + ["-o", o, c])
                res.append((label, "pass" if rc == 0 else "fail", "compiles warning-free" if rc == 0 else rm.first_error(out)))
        # refusals
        cu = os.path.join(work, "r.cu")
        rc, out = run([args.compiler, m, "-o", cu, "--profile"])
        left = [f for f in os.listdir(work) if f.startswith("r.")]
        ok = rc == 1 and "CUDA target is not supported" in out and not left and "Sanitizer" not in out
        res.append(("refuse .cu", "pass" if ok else "fail", out.strip()[:100] if ok else "rc %d, files %s: %s" % (rc, left, out[:200])))
        rc, out = run([args.compiler, m, "--profile", "--report"])
        ok = rc == 1 and "--profile needs -o" in out
        res.append(("refuse no -o", "pass" if ok else "fail", out.strip()[:100]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("tests", nargs="*")
    args = ap.parse_args()
    tests = rm.find_tests(args.tests or [rm.EXAMPLES])

    rm.run_checks(tests, lambda t: check_model(args, t), args.j, lambda: check_once(args))


if __name__ == "__main__":
    main()
