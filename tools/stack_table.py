#!/usr/bin/env python3
"""make stack-table: measures the stack each kernel's call takes on a
Cortex-M4F and writes compiler/engine/stack_cortexm.def, from which
`onnx2c --target cortex-m` states NAME_STACK_BYTES in the header.

Every example and ONNX node test (build/node-tests, made by
tests/conformance/make_corpus.py) is compiled with `onnx2c --target
cortex-m` (the examples at -O2 and -O0, the node tests at -O2) and built the way tests/test_cortexm.py builds
firmware, with gcc's -fstack-usage -fcallgraph-info=su
(tests/firmware/stack.py reads them). Per kernel, the table holds the most
any call of it took: its step function's frame and what that calls, down
to the last function of the file. STACK_BASE is the most the entry points
and run_impl took above the steps. The compiler adds STACK_MARGIN to what
it states. The test (tests/test_cortexm.py (g)) measures every example and
model again and fails where a run needs more than the header says.

    .venv/bin/python tools/stack_table.py [--compiler build/onnx2c] [-j 2] [--corpus DIR]"""
import argparse, os, re, shutil, subprocess, sys, tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "firmware"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import stack  # noqa: E402
import test_cortexm as tc  # noqa: E402

OUT = os.path.join(ROOT, "compiler", "engine", "stack_cortexm.def")


def one(compiler, model, opt, tmp):
    d = tempfile.mkdtemp(dir=tmp)
    try:
        r = subprocess.run([compiler, opt, model, "-o", os.path.join(d, "m.c"), "--name", "m", "--target", "cortex-m"],
                           capture_output=True, text=True, timeout=600)
        if r.returncode:
            return None
        r = subprocess.run(["arm-none-eabi-gcc"] + tc.CFLAGS + tc.STACK_FLAGS + ["-c", "m.c", "-o", "m.o"], cwd=d,
                           capture_output=True, text=True, timeout=600)
        if r.returncode:
            return None
        return stack.measure(os.path.join(d, "m.ci"), os.path.join(d, "m.c"), "m")
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print("%s %s: %s" % (model, opt, e), file=sys.stderr)
        return None
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--corpus", default=os.path.join(ROOT, "build", "node-tests"))
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    examples = sorted(os.path.join(r, "model.onnx") for r, _, fs in os.walk(os.path.join(ROOT, "examples"))
                      if "model.onnx" in fs)
    jobs = [(m, o) for m in examples for o in ("-O2", "-O0")]
    if os.path.isdir(a.corpus):   # the node tests at -O2
        jobs += [(os.path.join(a.corpus, t, "model.onnx"), "-O2") for t in sorted(os.listdir(a.corpus))
                 if os.path.exists(os.path.join(a.corpus, t, "model.onnx"))]
    tmp = tempfile.mkdtemp(prefix="o2c_stack_")
    table, base, n = {}, 0, 0
    try:
        with ThreadPoolExecutor(max_workers=a.j) as ex:
            for m in ex.map(lambda j: one(os.path.abspath(a.compiler), j[0], j[1], tmp), jobs):
                if m is None:
                    continue
                n += 1
                base = max(base, m.base)
                for kernel, b in m.steps.values():
                    kernel = re.sub(r"^o2c_ew_[0-9a-f]+$", "o2c_ew_", kernel)   # made per model: one row
                    if kernel != "?":
                        table[kernel] = max(table.get(kernel, 0), b)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    gcc = subprocess.run(["arm-none-eabi-gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    with open(OUT, "w") as f:
        f.write("/* Written by tools/stack_table.py (make stack-table): the stack bytes a call of each kernel\n"
                " * took at most on a Cortex-M4F, over %d builds of the examples (-O2, -O0) and the ONNX node tests (-O2)\n"
                " * (%s; %s). Read by emit_common.c's NAME_STACK_BYTES. */\n" % (n, gcc, " ".join(f for f in tc.CFLAGS if not f.startswith("-W") and f != "-pedantic")))
        f.write("STACK_BASE(%d)\n" % base)
        for k in sorted(table):
            f.write("STACK(%s, %d)\n" % (k, table[k]))
    print("wrote %s: %d kernels, base %d bytes, %d builds" % (os.path.relpath(OUT, ROOT), len(table), base, n))


if __name__ == "__main__":
    main()
