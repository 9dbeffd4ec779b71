#!/usr/bin/env python3
"""The compiler and the code it generates under Valgrind (memcheck).

    python tests/test_valgrind.py [--compiler build/onnx2c] [-j 2] [--no-real]

Every memcheck run uses
    valgrind --error-exitcode=N --leak-check=full --errors-for-leak-kinds=definite,indirect
so an invalid read or write, a use of an uninitialised value (a branch, an
address or a system call depending on it: e.g. an output written to a file
that holds bytes the model never computed) or a definite/indirect leak fails.

1. selftest: a small program with an uninitialised read and one with a
   leak must both fail under these flags (Valgrind is really checking).
2. the model tests (tests/run_models.py) on every examples/*/ folder, at -O2
   and at -O0, with
   - the compiler (a plain build, default build/onnx2c: -O2 -g, no
     sanitizers) run under Valgrind for each compile (-o m.c and -o m.cu);
   - the generated C built with gcc -O1 -g (no sanitizers) and
     -DO2C_HARNESS_UNDEFINED_ARENA (tests/harness/main.c leaves the caller
     arena of NAME_run_with_arena undefined instead of poisoning it, so an
     arena byte read before it is written is reported), run under Valgrind,
     its outputs compared with onnxruntime and the stored outputs as
     run_models does;
   - the generated CUDA built for the CPU emulation with g++ -O1 -g (no
     sanitizers) and run the same way.
3. the real models of tests/models/fetch.py that are in build/real-models/
   (nothing is downloaded here) and small enough for Valgrind's ~30x
   slowdown: onnxruntime latency under 10 ms (their meta.json) and
   model.onnx under 4 MB -- today magika_v1, silero_vad_if and silero_vad_seq
   of the seven; C only, -O2 (--no-real: skip them).
4. the compiler under Valgrind on every example with the other outputs and
   paths: -O1 --report=FILE --emit-onnx FILE --dot FILE; --profile;
   --target cortex-m --caller-arena -O0; -o m.cu --target cuda --report.

The last line is 'N passed, N failed, N skipped'; exit status 1 on a failure.
"""
import argparse
import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import run_models  # noqa: E402

VG_EXIT = 97          # memcheck found an error (never 1: a clear refusal of the compiler)
VG = ["valgrind", "-q", "--error-exitcode=%d" % VG_EXIT, "--leak-check=full",
      "--errors-for-leak-kinds=definite,indirect"]
REAL = os.path.join(ROOT, "build", "real-models")
REAL_MAX_MS = 10.0
REAL_MAX_BYTES = 4 << 20

results = []   # (name, status, note)


def record(name, status, note=""):
    results.append((name, status, note))
    print("%-4s %-44s %s" % (status.upper(), name, note), flush=True)


def vg_summary(text):
    """The first memcheck complaint of a Valgrind log, on one line."""
    lines = [l.split("== ", 1)[-1].strip() for l in text.splitlines() if l.startswith("==")]
    lines = [l for l in lines if l]
    if not lines:
        return text.strip().splitlines()[-1][:300] if text.strip() else "(no output)"
    return " | ".join(lines[:4])[:400]


def selftest(tmp):
    """memcheck with VG's flags must fail a program with an uninitialised read
    and one with a definite leak."""
    progs = {
        "uninitialised read": "#include <stdio.h>\n#include <stdlib.h>\nint main(void){int *p=malloc(8*sizeof *p);"
                              "int r=p[3]>0;printf(\"%d\\n\",r);free(p);return 0;}\n",
        "leak": "#include <stdlib.h>\n#include <stdio.h>\nint main(void){char *p=malloc(100);p[0]=1;"
                "printf(\"%d\\n\",p[0]);p=0;return 0;}\n",
    }
    # the harness built as the model tests build it: an arena byte read
    # before written reaches the output file (a write(2) of undefined bytes)
    fake_h = ("#include <stdint.h>\n#define m_NUM_INPUTS 1\n#define m_NUM_OUTPUTS 1\n#define m_ARENA_SIZE 64\n"
              "int m_run_with_arena(const void *const *in, void *const *out, void *arena);\n"
              "int m_run(const void *const *in, void *const *out);\n")
    fake_c = ('#include "m.h"\nstatic unsigned char a[64];\n'
              "int m_run_with_arena(const void *const *in, void *const *out, void *arena)\n"
              "{ unsigned char *t = (unsigned char *)arena; t[0] = ((const unsigned char *)in[0])[0];\n"
              "  ((unsigned char *)out[0])[0] = (unsigned char)(t[0] + t[1]); return 0; }\n"
              "int m_run(const void *const *in, void *const *out) { return m_run_with_arena(in, out, a); }\n")
    with open(os.path.join(tmp, "m.h"), "w") as f:
        f.write(fake_h)
    with open(os.path.join(tmp, "m.c"), "w") as f:
        f.write(fake_c)
    with open(os.path.join(tmp, "in.bin"), "wb") as f:
        f.write(b"\x07")
    exe = os.path.join(tmp, "harness")
    r = subprocess.run(["gcc", "-std=c99", "-O1", "-g", "-DO2C_HARNESS_UNDEFINED_ARENA", "-I" + tmp, "-o", exe,
                        run_models.HARNESS, os.path.join(tmp, "m.c")], capture_output=True, text=True)
    if r.returncode:
        record("selftest/arena read before written", "fail", "gcc: " + r.stderr.strip()[:200])
    else:
        r = subprocess.run(VG + [exe, os.path.join(tmp, "in.bin") + ":1", "--", os.path.join(tmp, "out.bin") + ":1"],
                           capture_output=True, text=True)
        ok = r.returncode == VG_EXIT and "uninitialised" in r.stderr
        record("selftest/arena read before written", "pass" if ok else "fail",
               "reported: " + vg_summary(r.stderr) if ok else "memcheck did not report it (rc %d)" % r.returncode)
    for what, src in progs.items():
        c = os.path.join(tmp, "self.c")
        exe = os.path.join(tmp, "self")
        with open(c, "w") as f:
            f.write(src)
        r = subprocess.run(["gcc", "-O0", "-g", "-o", exe, c], capture_output=True, text=True)
        if r.returncode:
            record("selftest/" + what, "fail", "gcc: " + r.stderr.strip()[:200])
            continue
        r = subprocess.run(VG + [exe], capture_output=True, text=True)
        ok = r.returncode == VG_EXIT
        record("selftest/" + what, "pass" if ok else "fail",
               "reported: " + vg_summary(r.stderr) if ok else "memcheck did not report it (rc %d)" % r.returncode)


def wrapper(compiler, tmp):
    """A script that runs the compiler under Valgrind (run_models' --compiler),
    its log in a file: a memcheck error exits 200 (run_models: 'compiler
    crashed') with the log's first lines on one stderr line."""
    path = os.path.join(tmp, "onnx2c-valgrind")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                "log=$(mktemp %s/vglog.XXXXXX)\n"
                "%s --log-file=\"$log\" %s \"$@\"\n"
                "rc=$?\n"
                "if [ $rc -eq %d ]; then\n"
                "  echo \"onnx2c under Valgrind: memcheck error: $(sed -n 's/^==[0-9]*== //p' \"$log\" | "
                "grep -v '^ *$' | head -4 | tr '\\n' ' ')\" >&2\n"
                "  cat \"$log\" >&2; rm -f \"$log\"; exit 200\n"
                "fi\n"
                "rm -f \"$log\"\nexit $rc\n" % (shlex.quote(tmp), " ".join(VG), shlex.quote(compiler), VG_EXIT))
    os.chmod(path, 0o755)
    return path


def run_model_tests(label, vgcc, paths, extra, jobs):
    """tests/run_models.py with the compiler under Valgrind and the programs run under it."""
    cmd = [sys.executable, os.path.join(ROOT, "tests", "run_models.py"), "--compiler", vgcc, "-j", str(jobs),
           "--cc", "gcc", "--cc-flags=-DO2C_HARNESS_UNDEFINED_ARENA", "--run-prefix=" + " ".join(VG),
           "--run-timeout", "900", "--timeout", "900"] + extra + paths
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    seen = 0
    for line in p.stdout.splitlines():
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[0] in ("PASS", "FAIL", "SKIP"):
            if parts[1] == "cuda/" + run_models.SELFTEST:
                continue        # built with ASan, not run under Valgrind: not this suite's
            seen += 1
            record("%s/%s" % (label, parts[1]), parts[0].lower(), parts[2] if len(parts) > 2 else "")
    if p.returncode and not any(r[1] == "fail" and r[0].startswith(label + "/") for r in results):
        record(label, "fail", "run_models.py exited %d: %s" % (p.returncode, p.stdout.strip()[-300:]))
    elif not seen:
        record(label, "fail", "no model ran: " + p.stdout.strip()[-300:])


def small_real_models():
    out = []
    for d in sorted(glob.glob(os.path.join(REAL, "*", "model.onnx"))):
        d = os.path.dirname(d)
        try:
            meta = json.load(open(os.path.join(d, "meta.json"), encoding="utf-8"))
            lat = meta.get("ort_latency_ms_1thread")
            lat = float(lat.get("median") if isinstance(lat, dict) else lat)
        except (OSError, ValueError, TypeError, AttributeError):
            continue
        if lat < REAL_MAX_MS and os.path.getsize(os.path.join(d, "model.onnx")) < REAL_MAX_BYTES and \
                glob.glob(os.path.join(d, "test_data_set_0", "input_*.pb")):
            out.append(d)
    return out


FLAG_SETS = [
    ("report+emit-onnx+dot -O1", "m.c", ["-O1", "--report={d}/r.txt", "--emit-onnx", "{d}/g.onnx", "--dot", "{d}/g.dot"]),
    ("profile", "m.c", ["--profile"]),
    ("cortex-m caller-arena -O0", "m.c", ["--target", "cortex-m", "--caller-arena", "-O0"]),
    ("cuda report", "m.cu", ["--report={d}/r.txt"]),
]


def compiler_flag_runs(compiler, tests, jobs):
    def one(test, label, out, flags):
        m = onnx.load(os.path.join(test, "model.onnx"), load_external_data=False)
        inits = {i.name for i in m.graph.initializer}
        gin = [i for i in m.graph.input if i.name not in inits]
        ins = [run_models.load_pb(os.path.join(test, "test_data_set_0", "input_%d.pb" % k)) for k in range(len(gin))]
        d = tempfile.mkdtemp(prefix="o2c_vg_")
        try:
            cmd = VG + [compiler, os.path.join(test, "model.onnx"), "-o", os.path.join(d, out), "--name", "m"] + \
                [f.format(d=d) for f in flags] + run_models.shape_flags(gin, ins)
            r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=900)
            name = "compiler/%s %s" % (os.path.basename(test), label)
            if r.returncode == VG_EXIT:
                return name, "fail", "memcheck: " + vg_summary(r.stderr)
            if r.returncode == 1 and os.path.exists(os.path.join(test, "expect_error.txt")):
                return name, "pass", "refused as expected"
            if r.returncode != 0:
                return name, "fail", "rc %d: %s" % (r.returncode, run_models.first_error(r.stdout + r.stderr))
            if r.stderr.strip() and "==" in r.stderr:
                return name, "fail", "valgrind output: " + vg_summary(r.stderr)
            return name, "pass", ""
        finally:
            shutil.rmtree(d, ignore_errors=True)

    jobs_list = [(t,) + fs for t in tests for fs in FLAG_SETS]
    with ThreadPoolExecutor(max(1, jobs)) as ex:
        for name, status, note in ex.map(lambda a: one(*a), jobs_list):
            record(name, status, note)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"),
                    help="a build without sanitizers (Valgrind cannot run ASan binaries)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--no-real", action="store_true", help="skip the real models of build/real-models/")
    args = ap.parse_args()
    compiler = os.path.abspath(args.compiler)
    t0 = time.time()
    if not shutil.which("valgrind"):
        print("valgrind is not installed (tools/install-deps.sh installs it)")
        print("0 passed, 1 failed, 0 skipped")
        sys.exit(1)
    if not os.access(compiler, os.X_OK):
        print("no compiler at %s (build it first: make)" % compiler)
        print("0 passed, 1 failed, 0 skipped")
        sys.exit(1)
    if "__asan_init" in subprocess.run(["nm", "-D", compiler], capture_output=True, text=True).stdout:
        print("%s is a sanitizer build: Valgrind needs a plain one (make)" % compiler)
        print("0 passed, 1 failed, 0 skipped")
        sys.exit(1)
    tmp = tempfile.mkdtemp(prefix="o2c_valgrind_")
    try:
        selftest(tmp)
        vgcc = wrapper(compiler, tmp)
        tests = run_models.find_tests([os.path.join(ROOT, "examples")])
        run_model_tests("c+cuda", vgcc, tests, ["--cxx", "g++"], args.jobs)
        real = [] if args.no_real else small_real_models()
        if real:
            run_model_tests("c", vgcc, real, ["--c-only", "--levels", "2"], args.jobs)
        elif not args.no_real:
            print("note: no real models in build/real-models/ (tests/models/fetch.py fetches them): skipped",
                  flush=True)
        compiler_flag_runs(compiler, tests, args.jobs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    n = {s: sum(1 for r in results if r[1] == s) for s in ("pass", "fail", "skip")}
    print("(%.0fs: %d example models%s under Valgrind)" % (
        time.time() - t0, len(tests), " and %d real models" % len(real) if real else ""))
    print("%d passed, %d failed, %d skipped" % (n["pass"], n["fail"], n["skip"]))
    sys.exit(1 if n["fail"] else 0)


if __name__ == "__main__":
    main()
