#!/usr/bin/env python3
"""--emit-test-main: the generated verification harness (templates/test_main.c.in).

  - every example: onnx2c -o m.c --emit-test-main t.c, both built with
    -std=c99 -pedantic -Wall -Wextra -Werror and ASan/UBSan, run in the
    example's test_data_set_0 (no arguments: input_K.pb, output_K.pb) ->
    exit 0 and a PASS line; then with the tensors as raw files named on
    the command line -> exit 0;
  - node tests from build/node-tests (when made: tests/conformance/
    make_corpus.py), a few for each element type their inputs and outputs
    have, so the .pb reader meets raw_data and every typed field
    (float_data, int32_data for 8/16-bit and bool, int64_data,
    double_data, uint64_data) -> exit 0;
  - a wrong expected value -> exit 1 and FAIL; a missing file, a file of
    another size or another element type -> exit 2; a model with string
    inputs -> onnx2c refuses --emit-test-main (exit 1);
  - on QEMU's Cortex-M4F board (when arm-none-eabi-gcc and qemu-system-arm
    are installed): the harness and `--target cortex-m` code built for
    mps2-an386 with newlib's semihosting, run in the test data folder, read
    the host's .pb files -> exit 0 and PASS.

    python tests/test_test_main.py [--compiler build/onnx2c] [-j 2]"""
import argparse, collections, os, shutil, subprocess, sys, tempfile
from concurrent.futures import ThreadPoolExecutor

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "firmware"))
import mcu  # noqa: E402
import run_models as rm  # noqa: E402

ROOT = rm.ROOT
CC = ["gcc", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1", "-g",
      "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
PER_TYPE = 3   # node tests a distinct set of element types


def run(cmd, cwd=None, timeout=600):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


def build(compiler, test, work, extra=()):
    """onnx2c + gcc; (ok, message)"""
    ds = os.path.join(test, "test_data_set_0")
    ins = [rm.load_pb(os.path.join(ds, f)) for f in sorted(os.listdir(ds)) if f.startswith("input_")]
    m = onnx.load(os.path.join(test, "model.onnx"), load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    gin = [vi for vi in m.graph.input if vi.name not in inits]
    flags = rm.shape_flags(gin, ins) if len(ins) == len(gin) else []
    rc, out = run([compiler, os.path.join(test, "model.onnx"), "-o", os.path.join(work, "m.c"), "--name", "m",
                   "--emit-test-main", os.path.join(work, "t.c")] + flags + list(extra))
    if rc:
        return False, "onnx2c: " + out.strip()[-300:]
    rc, out = run(CC + ["-o", os.path.join(work, "t"), os.path.join(work, "t.c"), os.path.join(work, "m.c"), "-lm"])
    if rc:
        return False, "gcc: " + out.strip()[:300]
    return True, ""


def check_dir(compiler, test, tmp, raw=False):
    """(name, True/False/None (a node test onnx2c refuses as the conformance run does without its
    --bind flags: skipped), message)"""
    name = os.path.relpath(test, ROOT) if rm.is_in(test, ROOT) else os.path.basename(test)
    work = tempfile.mkdtemp(dir=tmp)
    ok, why = build(compiler, test, work)
    if not ok:
        refused = why.startswith("onnx2c: ") and not rm.is_in(test, rm.EXAMPLES) and "internal" not in why
        return name, None if refused else False, why
    ds = os.path.join(test, "test_data_set_0")
    rc, out = run([os.path.join(work, "t")], cwd=ds)
    if rc != 0 or "PASS" not in out:
        return name, False, "exit %d: %s" % (rc, out.strip()[-300:])
    if raw:   # the same tensors as raw files named on the command line
        files = []
        for kind in ("input", "output"):
            for f in sorted(x for x in os.listdir(ds) if x.startswith(kind + "_")):
                p = os.path.join(work, f[:-3] + ".bin")
                open(p, "wb").write(rm.raw_bytes(rm.load_pb(os.path.join(ds, f))))
                files.append(p)
        rc, out = run([os.path.join(work, "t")] + files)
        if rc != 0 or "PASS" not in out:
            return name, False, "raw files: exit %d: %s" % (rc, out.strip()[-300:])
    shutil.rmtree(work, ignore_errors=True)
    return name, True, "PASS" + (" (.pb and raw)" if raw else "")


def node_sample(corpus):
    """a few node tests for each set of element types of their inputs and outputs"""
    by = collections.defaultdict(list)
    for t in sorted(os.listdir(corpus)):
        d = os.path.join(corpus, t)
        if not os.path.exists(os.path.join(d, "model.onnx")) or not os.path.isdir(os.path.join(d, "test_data_set_0")):
            continue
        g = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False).graph
        types = []
        for vi in list(g.input) + list(g.output):
            tt = vi.type.WhichOneof("value")
            if tt != "tensor_type" or vi.type.tensor_type.elem_type == onnx.TensorProto.STRING:
                types = None
                break
            types.append(vi.type.tensor_type.elem_type)
        if types is not None and len(by[tuple(sorted(set(types)))]) < PER_TYPE:
            by[tuple(sorted(set(types)))].append(d)
    return [d for k in sorted(by) for d in by[k]]


def negative(compiler, tmp):
    """wrong values, missing and ill-fitting files, a refused model"""
    test = os.path.join(ROOT, "examples", "two_heads")
    ds = os.path.join(test, "test_data_set_0")
    work = tempfile.mkdtemp(dir=tmp)
    ok, why = build(compiler, test, work)
    if not ok:
        return False, why
    t = os.path.join(work, "t")
    x = rm.load_pb(os.path.join(ds, "input_0.pb"))
    y0, y1 = (rm.load_pb(os.path.join(ds, "output_%d.pb" % k)) for k in (0, 1))
    wrong = y1.copy()
    wrong.flat[1] += 0.01
    onnx.save_tensor(onnx.numpy_helper.from_array(wrong), os.path.join(work, "wrong.pb"))
    onnx.save_tensor(onnx.numpy_helper.from_array(y0.astype("float64")), os.path.join(work, "f64.pb"))
    open(os.path.join(work, "short.bin"), "wb").write(rm.raw_bytes(x)[:-4])
    cases = [
        ([os.path.join(ds, "input_0.pb"), os.path.join(ds, "output_0.pb"), os.path.join(work, "wrong.pb")], 1, "FAIL"),
        ([os.path.join(ds, "input_0.pb"), os.path.join(ds, "output_0.pb"), os.path.join(work, "none.pb")], 2, "cannot open"),
        ([os.path.join(work, "short.bin"), os.path.join(ds, "output_0.pb"), os.path.join(ds, "output_1.pb")], 2, "bytes"),
        ([os.path.join(ds, "input_0.pb"), os.path.join(work, "f64.pb"), os.path.join(ds, "output_1.pb")], 2, "ONNX type"),
        ([os.path.join(ds, "input_0.pb")], 2, "files given"),
    ]
    for args, want, text in cases:
        rc, out = run([t] + args)
        if rc != want or text not in out:
            return False, "%s: exit %d (expected %d with '%s'): %s" % (" ".join(os.path.basename(a) for a in args), rc,
                                                                      want, text, out.strip()[-200:])
    # a string input: refused at compile time, nothing written
    from onnx import helper as h, TensorProto as T
    g = h.make_graph([h.make_node("Identity", ["s"], ["o"])], "g", [h.make_tensor_value_info("s", T.STRING, [2])],
                     [h.make_tensor_value_info("o", T.STRING, [2])])
    sm = os.path.join(work, "str.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), sm)
    rc, out = run([compiler, sm, "-o", os.path.join(work, "s.c"), "--emit-test-main", os.path.join(work, "st.c")])
    if rc != 1 or "string tensor" not in out or os.path.exists(os.path.join(work, "st.c")) or \
            os.path.exists(os.path.join(work, "s.c")):
        return False, "a string model: exit %d, %s" % (rc, out.strip()[-200:])
    return True, "wrong value -> 1, missing/short/other-type files -> 2, string model refused"


def on_qemu(compiler, tmp):
    """the harness and the cortex-m code on the emulated Cortex-M4F, reading the host's .pb files"""
    ok, why = mcu.available()
    if not ok:
        return None, why
    res = []
    for ex in ("small_convnet", "quantized_convnet", "two_heads"):
        test = os.path.join(ROOT, "examples", ex)
        work = tempfile.mkdtemp(dir=tmp)
        rc, out = run([compiler, os.path.join(test, "model.onnx"), "-o", os.path.join(work, "m.c"), "--name", "m",
                       "--target", "cortex-m", "--emit-test-main", os.path.join(work, "main.c")])
        if rc:
            return False, ex + ": onnx2c: " + out.strip()[-200:]
        ok, why, _ = mcu.build(work, "m4")
        if not ok:
            return False, ex + ": " + why
        _, board = mcu.CPUS["m4"]
        rc, out = run(["qemu-system-arm", "-M", board, "-nographic", "-semihosting-config", "enable=on,target=native",
                       "-kernel", os.path.join(work, "fw.elf")], cwd=os.path.join(test, "test_data_set_0"), timeout=300)
        if rc != 0 or "PASS" not in out:
            return False, "%s on QEMU: exit %d: %s" % (ex, rc, out.strip()[-300:])
        res.append(ex)
    return True, "PASS on mps2-an386 (semihosting): " + ", ".join(res)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--corpus", default=os.path.join(ROOT, "build", "node-tests"))
    ap.add_argument("-j", type=int, default=2)
    a = ap.parse_args()
    compiler = os.path.abspath(a.compiler)
    tmp = tempfile.mkdtemp(prefix="o2c_testmain_")
    npass = nfail = nskip = 0
    try:
        tests = [t for t in rm.find_tests([rm.EXAMPLES]) if not os.path.exists(os.path.join(t, "expect_error.txt"))]
        jobs = [(t, True) for t in tests]
        if os.path.isdir(a.corpus):
            jobs += [(t, False) for t in node_sample(a.corpus)]
        else:
            nskip += 1
            print("skip node tests: %s not made (tests/conformance/make_corpus.py)" % a.corpus)
        nodes_ran = nodes = 0
        with ThreadPoolExecutor(max_workers=a.j) as ex:
            for (t, raw), (name, ok, msg) in zip(jobs, ex.map(lambda j: check_dir(compiler, j[0], tmp, j[1]), jobs)):
                nodes, nodes_ran = nodes + (not raw), nodes_ran + (not raw and ok is not None)
                if ok is None:
                    nskip += 1
                    print("skip %s: %s" % (name, msg[:160]), flush=True)
                    continue
                print("%-4s %s: %s" % ("ok" if ok else "FAIL", name, msg), flush=True)
                npass, nfail = npass + ok, nfail + (not ok)
        if nodes and nodes_ran < 0.8 * nodes:   # the sample is mostly tests onnx2c compiles as they are
            nfail += 1
            print("FAIL node tests: only %d of the %d sampled compiled" % (nodes_ran, nodes))
        for what, fn in (("errors", negative), ("qemu", on_qemu)):
            ok, msg = fn(compiler, tmp)
            if ok is None:
                nskip += 1
                print("skip %s: %s" % (what, msg))
            else:
                print("%-4s %s: %s" % ("ok" if ok else "FAIL", what, msg), flush=True)
                npass, nfail = npass + ok, nfail + (not ok)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed, %d skipped" % (npass, nfail, nskip))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
