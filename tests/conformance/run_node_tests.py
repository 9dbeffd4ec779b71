#!/usr/bin/env python3
"""ONNX backend node tests: compile each model with onnx2c, build the C with
gcc (and check it with clang), both with -std=c99 -pedantic -Wall -Wextra
-Werror, run it on every test_data_set_N and compare with the stored outputs.

The corpus (default build/node-tests) is written by make_corpus.py from the
pinned onnx package's test generators; --corpus takes any folder of test_*
dirs (../shared/onnx-node-tests, say). Each test gets one outcome:

  pass            every data set matches
  refused         the compiler said no (exit 1, a message): unsupported op, type
                  or shape (sequences and optionals: flattened into slots,
                  load_composite)
  compiler-crash  the compiler crashed, hung, or printed a sanitizer report
  cc-failed       the generated code does not build warning-free (gcc, clang)
  run-crash       the program crashed, hung or returned an error code
  wrong           an output differs from the expected one

With --cuda-emu each model is also compiled to .cu, built with the CPU
emulation of the CUDA runtime (runtime/cuda/o2c_cuda_emulate.h) and checked
the same way (reasons then start with "cuda"); --cuda-gpu builds it with
nvcc for this machine's GPU and runs it there (make test-gpu, tests/gpu/). A model with string inputs or
outputs is run through STR_HARNESS (strings as `const char *` arrays); its .cu
is refused by design (strings are C-only), so its cuda leg is skipped and the
pass says so.

Where the compiler's refusal names inputs as `--bind NAME=` (inputs that decide
a shape), the test is compiled again with exactly those inputs bound to their
values in test_data_set_0 (the other data sets must then hold the same
values, or the generated code reports the mismatch as a run error).

A crash, build failure or wrong answer fails the run; so does a test listed in
--expected that no longer passes. --update rewrites that list; --table FILE
writes the per-op support table (docs/conformance.md)."""
import argparse, glob, os, re, shutil, subprocess, sys, tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FAILING = ("compiler-crash", "cc-failed", "run-crash", "wrong")

# nvcc for the GPU of the machine it runs on (-arch=native: its own machine
# code, no PTX compiled by the driver at start; NVCC_ARCH=sm_90, say, builds
# for another); warnings are errors, as for the C
NVCC_ARCH = ["nvcc", "-arch=" + os.environ.get("NVCC_ARCH", "native")]
# how each .cu is built with the CPU emulation of CUDA (--cuda-emu)
EMU_CXX = ["g++", "-std=c++17", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1", "-DO2C_CUDA_EMULATE",
           "-I" + os.path.join(ROOT, "runtime", "cuda")]
# The headers every generated .cu includes (the emulation of the CUDA runtime,
# then the runtime core's C headers), precompiled once per run with EMU_CXX's
# flags and pre-included into each build (-include): in C++ <math.h> brings
# <cmath>, whose parse is most of a node test's g++ time. Each header has its
# include guard, so the .cu's own includes of them are the same text, read once.
EMU_PRE = "#include \"o2c_cuda_emulate.h\"\n#include <stdint.h>\n#include <string.h>\n#include <math.h>\n" \
          "#include <stdio.h>\n#include <stdlib.h>\n"


def emu_pch(folder):
    """EMU_PRE precompiled into folder: the g++ flags that pre-include it, or
    [] when g++ cannot precompile it (each .cu then parses the headers itself)."""
    pre = os.path.join(folder, "o2c_emu_pre.h")
    with open(pre, "w") as f:
        f.write(EMU_PRE)
    r = subprocess.run(EMU_CXX + ["-x", "c++-header", pre, "-o", pre + ".gch"],
                       capture_output=True, text=True)
    return ["-Winvalid-pch", "-include", pre] if r.returncode == 0 else []
NVCC_GPU = NVCC_ARCH + ["-O2", "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra,-Werror"]

HARNESS = r'''
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int m_run(const void *const inputs[], void *const outputs[]);
static const long in_sz[] = {%(in_sz)s 0};
static const long out_sz[] = {%(out_sz)s 0};
int main(int argc, char **argv)
{
    const void *ins[%(ni)d + 1] = {0};
    void *outs[%(no)d + 1] = {0};
    int rc;
    (void)argc;
    for (int i = 0; i < %(ni)d; i++) {
        void *p;
        if (in_sz[i] < 0) continue;   /* an absent optional input: NULL */
        p = malloc(in_sz[i] + 1);
        FILE *f = fopen(argv[1 + i], "rb");
        if (!f || fread(p, 1, in_sz[i], f) != (size_t)in_sz[i]) return 3;
        fclose(f);
        ins[i] = p;
    }
    for (int o = 0; o < %(no)d; o++) {
        outs[o] = malloc(out_sz[o] + 1);
        memset(outs[o], 0xFF, out_sz[o] + 1);
    }
    rc = m_run(ins, outs);
    if (rc != 0) {
        fprintf(stderr, "m_run returned %%d\n", rc);
        return 4;
    }
    for (int o = 0; o < %(no)d; o++) {
        FILE *f = fopen(argv[1 + %(ni)d + o], "wb");
        fwrite(outs[o], 1, out_sz[o], f);
        fclose(f);
    }
    return 0;
}
'''


# ---- string tensors (compiler/ops/strings.c) --------------------------------
# A model with string inputs or outputs gets this harness instead: a string
# input's file holds its elements as NUL-terminated UTF-8, one after the
# other, turned into the array of `const char *` the generated API takes; a
# string output's `const char *` slots are written back the same way and
# compared exactly. The other inputs and outputs are raw bytes, as above.
STR_HARNESS = r'''
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int m_run(const void *const inputs[], void *const outputs[]);
static const long in_sz[] = {%(in_sz)s 0};
static const long out_sz[] = {%(out_sz)s 0};
static const int in_str[] = {%(in_str)s 0};
static const int out_str[] = {%(out_str)s 0};
int main(int argc, char **argv)
{
    const void *ins[%(ni)d + 1] = {0};
    void *outs[%(no)d + 1] = {0};
    void *raw[%(ni)d + 1] = {0};   /* what to free (a string input: its bytes and its array) */
    int rc;
    (void)argc;
    for (int i = 0; i < %(ni)d; i++) {
        FILE *f = fopen(argv[1 + i], "rb");
        long len, k, e = 0;
        char *p;
        if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0) return 3;
        rewind(f);
        p = (char *)malloc((size_t)len + 1);
        if (len && fread(p, 1, (size_t)len, f) != (size_t)len) return 3;
        fclose(f);
        raw[i] = p;
        if (!in_str[i]) {
            if (len != in_sz[i]) return 3;
            ins[i] = p;
            continue;
        }
        {   /* NUL-separated strings -> const char *[in_sz[i]] */
            const char **a = (const char **)malloc(sizeof(char *) * (size_t)(in_sz[i] + 1));
            for (k = 0; k < len && e < in_sz[i]; k += (long)strlen(p + k) + 1) a[e++] = p + k;
            if (e != in_sz[i]) return 3;
            ins[i] = a;
        }
    }
    for (int o = 0; o < %(no)d; o++) {
        size_t nb = out_str[o] ? sizeof(char *) * (size_t)out_sz[o] : (size_t)out_sz[o];
        outs[o] = malloc(nb + 1);
        memset(outs[o], out_str[o] ? 0 : 0xFF, nb + 1);
    }
    rc = m_run(ins, outs);
    if (rc != 0) {
        fprintf(stderr, "m_run returned %%d\n", rc);
        rc = 4;
    }
    for (int o = 0; o < %(no)d && rc == 0; o++) {
        FILE *f = fopen(argv[1 + %(ni)d + o], "wb");
        if (out_str[o]) {
            for (long k = 0; k < out_sz[o] && rc == 0; k++) {
                const char *s = ((const char **)outs[o])[k];
                if (!s) { fprintf(stderr, "output %%d element %%ld not written\n", o, k); rc = 5; }
                else fwrite(s, 1, strlen(s) + 1, f);
            }
        } else {
            fwrite(outs[o], 1, out_sz[o], f);
        }
        fclose(f);
    }
    /* freed after the outputs are written: a string output may point into an input */
    for (int i = 0; i < %(ni)d; i++) {
        if (in_str[i]) free((void *)ins[i]);
        free(raw[i]);
    }
    for (int o = 0; o < %(no)d; o++) free(outs[o]);
    return rc;
}
'''


def is_str(a):
    return a is not None and a.dtype.kind in "OSU"


def str_raw(a):
    """a string array as NUL-terminated UTF-8 elements, row-major"""
    return b"".join((s if isinstance(s, bytes) else str(s).encode("utf-8")) + b"\0" for s in a.flat)


def str_close(got, ref):
    want = str_raw(ref)
    if got == want:
        return ""
    g = got.split(b"\0")[:-1]
    w = want.split(b"\0")[:-1]
    if len(g) != len(w):
        return "%d strings written, %d expected" % (len(g), len(w))
    return "%d of %d strings differ (first: %r, expected %r)" % (
        sum(x != y for x, y in zip(g, w)), len(w), *next((x, y) for x, y in zip(g, w) if x != y))


def size_key(a):
    return -1 if a is None else a.size if is_str(a) else len(raw(a))


def default_corpus():
    return os.path.join(ROOT, "build", "node-tests")


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    if not t.HasField("data_type") or t.data_type == 0:
        raise TypeError("not a tensor")
    return numpy_helper.to_array(t)


def raw(a):
    return (a.astype(np.uint8) if a.dtype == np.bool_ else np.ascontiguousarray(a)).tobytes()


# the integer types a quantized model's outputs come in: a case's `qstep N`
# lets them differ from the reference by N (one quantization step: integer
# code rounds its requantizations where the reference's kernels may round the
# other way)
QTYPES = (np.int8, np.uint8, np.int16, np.uint16, np.int32)


def tolerances(test, args):
    """(rtol, atol, qstep) of a test: the runner's, loosened by the case's
    tolerance.txt (lines `KEY VALUE`; qstep: see QTYPES, default 0: exact)"""
    rtol, atol, qstep = args.rtol, args.atol, 0
    fn = os.path.join(test, "tolerance.txt")
    if os.path.exists(fn):   # the case's own (looser) tolerance, as onnx's backend runner uses it
        for line in open(fn):
            k, v = line.split()
            if k == "rtol":
                rtol = max(rtol, float(v))
            elif k == "atol":
                atol = max(atol, float(v))
            elif k == "qstep":
                qstep = int(v)
    return rtol, atol, qstep


def close(got, ref, rtol, atol, qstep=0):
    dt = np.uint8 if ref.dtype == np.bool_ else ref.dtype
    if len(got) != ref.nbytes:
        return "%d bytes written, %d expected" % (len(got), ref.nbytes)
    g = np.frombuffer(got, dtype=dt).reshape(ref.shape)
    if ref.dtype.kind not in "fiubU" and ref.dtype.itemsize > 1:   # bfloat16, float8 & co: as float32 values
        g, ref = g.astype(np.float32), ref.astype(np.float32)
    if ref.dtype.kind == "f":
        g64, r64 = g.astype(np.float64), ref.astype(np.float64)
        if not np.array_equal(np.isnan(g64), np.isnan(r64)):
            return "NaN mismatch"
        m = ~np.isnan(r64) & (g64 != r64)   # equal values (infinities too) are fine
        if not m.any():
            return ""
        err = np.abs(g64[m] - r64[m])
        bad = err > atol + rtol * np.abs(r64[m])
        return "max abs err %.3g (%d of %d off)" % (err.max(), bad.sum(), bad.size) if bad.any() else ""
    if qstep and ref.dtype in QTYPES:
        err = np.abs(g.astype(np.int64) - ref.astype(np.int64))
        bad = err > qstep
        return "max difference %d (%d of %d elements off by more than %d)" % (
            err.max(), bad.sum(), bad.size, qstep) if bad.any() else ""
    if ref.dtype == np.bool_:
        g = g.astype(np.bool_)
    if ref.dtype.kind not in "fiub":   # float8, int4 & co: compare their bytes
        g, ref = g.view(np.uint8), ref.view(np.uint8)
    return "" if np.array_equal(g, ref) else "%d of %d elements differ" % ((g != ref).sum(), ref.size)


def compile_model(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "compiler hang"
    if "Sanitizer" in r.stderr or "runtime error:" in r.stderr:
        return None, "compiler sanitizer report: " + r.stderr.strip()[:300]
    return r, ""


# ---- sequences and optionals (test data that is not plain tensors) --------
# onnx2c flattens a sequence input/output into one slot per element, in order
# (lengths and element shapes given with --shape NAME:D0xD1,D0xD1,... /
# NAME:empty); an optional tensor input is one slot, NULL when absent; an
# optional sequence is its sequence, or NAME:none (no slot) when absent. The
# corpus writes a Python list as a SequenceProto and None as an OptionalProto
# whatever the declared type (make_corpus.py), so an optional is read by what
# the file holds.

def _parse(cls, path):
    p = cls()
    with open(path, "rb") as f:
        p.ParseFromString(f.read())
    return p


def load_value(path, tp, name):
    """the value of a TypeProto-typed input/output: an array, a list of arrays, or None"""
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        return load_pb(path)
    if kind == "sequence_type":
        return [np.asarray(a) for a in numpy_helper.to_list(_parse(onnx.SequenceProto, path))]
    if kind != "optional_type":
        raise TypeError("a %s" % kind)
    o = _parse(onnx.OptionalProto, path)
    if o.elem_type == onnx.OptionalProto.UNDEFINED and o.name == name and not o.ListFields()[2:]:
        return None
    inner = tp.optional_type.elem_type.WhichOneof("value")
    if inner == "sequence_type":
        if o.elem_type == onnx.OptionalProto.SEQUENCE and o.HasField("sequence_value"):
            return [np.asarray(a) for a in numpy_helper.to_list(o.sequence_value)]
        return [np.asarray(a) for a in numpy_helper.to_list(_parse(onnx.SequenceProto, path))]
    if o.elem_type == onnx.OptionalProto.TENSOR and o.HasField("tensor_value") and o.name == name:
        return numpy_helper.to_array(o.tensor_value)
    return load_pb(path)


def load_composite(test, model, gin, sets):
    """data sets flattened into slots (None: an absent optional input, passed as
    NULL) and the --shape options the sequences and optionals need"""
    data, shapes = [], []
    for si, ds in enumerate(sets):
        ins, outs = [], []
        for k, vi in enumerate(gin):
            v = load_value(os.path.join(ds, "input_%d.pb" % k), vi.type, vi.name)
            kind = vi.type.WhichOneof("value")
            if isinstance(v, list):
                ins += v
                if si == 0:
                    shapes += ["--shape", "%s:%s" % (vi.name, ",".join("x".join(map(str, a.shape)) or "scalar"
                                                                           for a in v) or "empty")]
            elif v is None and kind == "optional_type" and \
                    (vi.type.optional_type.elem_type.WhichOneof("value") == "sequence_type" or
                     any(not d.HasField("dim_value") for d in vi.type.optional_type.elem_type.tensor_type.shape.dim) or
                     not vi.type.optional_type.elem_type.tensor_type.HasField("shape")):
                if si == 0:   # absent at compile time (an optional tensor of unknown shape too): no slot
                    shapes += ["--shape", "%s:none" % vi.name]
            else:
                ins.append(v)
                tt = vi.type.optional_type.elem_type.tensor_type if kind == "optional_type" else vi.type.tensor_type
                dims = tt.shape.dim
                if si == 0 and v is not None and (any(not d.HasField("dim_value") for d in dims) or len(dims) != v.ndim):
                    shapes += ["--shape", "%s:%s" % (vi.name, "x".join(str(s) for s in v.shape) or "scalar")]
        for k, vi in enumerate(model.graph.output):
            v = load_value(os.path.join(ds, "output_%d.pb" % k), vi.type, vi.name)
            outs += v if isinstance(v, list) else [] if v is None else [v]
        data.append((ins, outs))
    return data, shapes


def nbytes(a):
    return -1 if a is None else len(raw(a))


def run_one(test, args):
    name = os.path.basename(test)
    work = tempfile.mkdtemp(prefix="o2c_nt_")
    try:
        try:
            model = onnx.load(os.path.join(test, "model.onnx"), load_external_data=False)
        except Exception as e:
            return name, "refused", "onnx cannot load: %s" % str(e)[:80]
        inits = {i.name for i in model.graph.initializer}
        gin = [i for i in model.graph.input if i.name not in inits]
        sets = sorted(glob.glob(os.path.join(test, "test_data_set_*")))
        try:
            data = [([load_pb(os.path.join(ds, "input_%d.pb" % k)) for k in range(len(gin))],
                     [load_pb(os.path.join(ds, "output_%d.pb" % k)) for k in range(len(model.graph.output))])
                    for ds in sets]
            composite = None
        except Exception:  # sequences, optionals: flattened into slots
            try:
                data, composite = load_composite(test, model, gin, sets)
            except Exception as e:
                return name, "refused", "test data is not tensors, sequences or optionals (%s)" % type(e).__name__
        if not data:
            return name, "refused", "no test data"
        src = os.path.join(work, "m.c")
        cmd = [args.compiler, os.path.join(test, "model.onnx"), "-o", src, "--name", "m"] + args.onnx2c_flags.split()
        if composite is not None:
            cmd += composite
        else:
            for vi, a in zip(gin, data[0][0]):
                dims = vi.type.tensor_type.shape.dim
                if any(not d.HasField("dim_value") for d in dims) or len(dims) != a.ndim:
                    cmd += ["--shape", "%s:%s" % (vi.name, "x".join(str(s) for s in a.shape))]
        r, why = compile_model(cmd)
        if r is None:
            return name, "compiler-crash", why
        bound = sorted(set(re.findall(r"--bind ([^\s=]+)=", r.stderr))) if r.returncode == 1 else []
        names = [vi.name for vi in gin]
        if bound and all(b in names for b in bound):
            for b in bound:
                cmd += ["--bind", "%s=%s" % (b, os.path.join(sets[0], "input_%d.pb" % names.index(b)))]
            r, why = compile_model(cmd)
            if r is None:
                return name, "compiler-crash", why
        if r.returncode == 1 and r.stderr.strip():
            return name, "refused", r.stderr.strip().splitlines()[-1][:240]
        if r.returncode != 0:
            return name, "compiler-crash", "exit %d: %s" % (r.returncode, r.stderr.strip()[-200:])
        ins0, refs0 = data[0]
        strings = any(is_str(a) for a in ins0 + refs0)   # string tensors: STR_HARNESS
        with open(os.path.join(work, "main.c"), "w") as f:
            if strings:
                f.write(STR_HARNESS % dict(ni=len(ins0), no=len(refs0), in_sz="".join("%d," % size_key(a) for a in ins0),
                                           out_sz="".join("%d," % size_key(a) for a in refs0),
                                           in_str="".join("%d," % is_str(a) for a in ins0),
                                           out_str="".join("%d," % is_str(a) for a in refs0)))
            else:
                f.write(HARNESS % dict(ni=len(ins0), no=len(refs0), in_sz="".join("%d," % nbytes(a) for a in ins0),
                                       out_sz="".join("%d," % len(raw(a)) for a in refs0)))
        exe = os.path.join(work, "prog")
        main_o = os.path.join(work, "main.o")   # the harness, built once for the C and the CUDA legs
        for step in (["gcc", "-std=c99", "-O1", "-c", os.path.join(work, "main.c"), "-o", main_o],
                     ["gcc", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1"] + args.cc_flags.split() +
                     ["-o", exe, main_o, src, "-lm"]):
            r = subprocess.run(step, capture_output=True, text=True)
            if r.returncode != 0:
                return name, "cc-failed", "gcc: " + (r.stderr.strip().splitlines() or [""])[0][:200]
        r = subprocess.run(["clang", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", src],
                           capture_output=True, text=True) if args.clang else None
        if r is not None and r.returncode != 0:
            return name, "cc-failed", "clang: " + (r.stderr.strip().splitlines() or [""])[0][:200]
        rtol, atol, qstep = tolerances(test, args)
        progs = [("", exe)]
        cuda_note = ""
        if args.cuda_emu or args.cuda_gpu:
            # the .cu of the same model, built with the CPU emulation of the CUDA
            # runtime (every block and thread of the grid a GPU would run), or
            # with nvcc for the GPU of this machine (--cuda-gpu)
            cu = os.path.join(work, "m.cu")
            r, why = compile_model([cmd[0], cmd[1], "-o", cu] + cmd[4:])
            if strings and r is not None and r.returncode == 1 and "string tensors" in r.stderr:
                cuda_note = "cuda leg skipped: string tensors are C-only"   # refused as designed; nothing ran
            elif r is None or r.returncode != 0:
                return name, "compiler-crash" if r is None or r.returncode != 1 else "refused", \
                    "cuda: " + (why or r.stderr.strip()[-200:])
        if args.cuda_gpu and not cuda_note:
            gexe = os.path.join(work, "prog_gpu")
            for step in (NVCC_GPU + ["-I" + work, "-c", cu, "-o", cu + ".o"],
                         NVCC_ARCH + ["-o", gexe, main_o, cu + ".o"]):
                r = subprocess.run(step, capture_output=True, text=True)
                if r.returncode != 0:
                    return name, "cc-failed", "cuda (gpu): " + (r.stderr.strip().splitlines() or [""])[0][:200]
            progs.append(("cuda (gpu): ", gexe))
        if args.cuda_emu and not cuda_note:
            cexe = os.path.join(work, "prog_cu")
            for step in (EMU_CXX + args.emu_pch + ["-I" + work, "-x", "c++", "-c", cu, "-o", cu + ".o"],
                         ["g++", "-o", cexe, main_o, cu + ".o", "-lm"]):
                r = subprocess.run(step, capture_output=True, text=True)
                if r.returncode != 0:
                    return name, "cc-failed", "cuda (emulated): " + (r.stderr.strip().splitlines() or [""])[0][:200]
            progs.append(("cuda (emulated): ", cexe))
        for si, (ins, refs) in enumerate(data):
            if [size_key(a) for a in ins] != [size_key(a) for a in ins0] or \
               [size_key(a) for a in refs] != [size_key(a) for a in refs0]:
                continue   # a data set of other shapes: the code is built for set 0's
            files = []
            for k, a in enumerate(ins):
                fn = os.path.join(work, "in%d" % k)
                open(fn, "wb").write(b"" if a is None else str_raw(a) if is_str(a) else raw(a))
                files.append(fn)
            outs = [os.path.join(work, "out%d" % k) for k in range(len(refs))]
            for what, prog in progs:
                try:
                    r = subprocess.run([prog] + files + outs, capture_output=True, timeout=60)
                except subprocess.TimeoutExpired:
                    return name, "run-crash", what + "run hang"
                if r.returncode != 0:
                    return name, "run-crash", "%sdata set %d: exit %d %s" % (what, si, r.returncode,
                                                                           r.stderr.decode(errors="replace").strip()[:120])
                for k, ref in enumerate(refs):
                    got = open(outs[k], "rb").read()
                    why = str_close(got, ref) if is_str(ref) else close(got, ref, rtol, atol, qstep)
                    if why:
                        return name, "wrong", "%sdata set %d output %d: %s" % (what, si, k, why)
        return name, "pass", "; ".join(x for x in (("bound: " + ",".join(bound)) if bound else "", cuda_note) if x)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def model_facts(test):
    """(ops, element types of the graph's tensors) of a test's model"""
    try:
        m = onnx.load(os.path.join(test, "model.onnx"), load_external_data=False)
    except Exception:
        return ["?"], set()
    ops = sorted({(n.domain + "." if n.domain not in ("", "ai.onnx") else "") + n.op_type for n in m.graph.node})
    types = set()
    for vi in list(m.graph.input) + list(m.graph.output):
        et = vi.type.tensor_type.elem_type if vi.type.HasField("tensor_type") else 0
        if et:
            types.add(onnx.helper.tensor_dtype_to_np_dtype(et).name if et != onnx.TensorProto.STRING else "string")
    return ops, types


def short_reason(status, why):
    why = re.sub(r"^onnx2c: [^:]*model\.onnx: ", "", why)
    why = re.sub(r"node '[^']*' ", "", why)
    return (status + ": " + why).replace("|", "/")[:160]


def write_table(path, tests, results):
    import collections
    rows = collections.OrderedDict()
    facts = [model_facts(t) for t in tests]
    every = sorted({o for ops, _ in facts for o in ops}, key=len, reverse=True)
    for (ops, types), r in zip(facts, results):
        n = r[0][5:].lower().replace("_", "")
        # a test belongs to the op its name starts with (test_OPNAME_...), else its model's first op
        key = next((o for o in every if n.startswith(o.split(".")[-1].lower())), ops[0])
        rows.setdefault(key, []).append((r, types))
    total = len(results)
    count = collections.Counter(r[1] for r in results)
    with open(path, "w") as f:
        f.write("# ONNX conformance: the backend node tests, op by op\n\n")
        f.write("Made by `make conformance-table` (`tests/conformance/run_node_tests.py --table docs/conformance.md`) "
                "from the node tests of onnx %s, which `tests/conformance/make_corpus.py` writes out of onnx's own "
                "test generators: **%d of %d pass (%.1f%%)**; %d refused with a message; %d wrong, %d compiler "
                "crashes, %d build failures, %d run crashes.\n\n" % (onnx.__version__, count["pass"], total,
                100.0 * count["pass"] / max(total, 1), count["refused"], count["wrong"], count["compiler-crash"],
                count["cc-failed"], count["run-crash"]))
        f.write("A test is listed under the op its name starts with (`_expanded` tests: the same computation in "
                "other ops). Element types: those of the graph inputs and outputs of the passing tests.\n\n")
        f.write("| op | passed | tests | element types passed | not passing: reason (tests) |\n|---|---|---|---|---|\n")
        for op in sorted(rows, key=str.lower):
            rs = rows[op]
            p = sum(1 for r, _ in rs if r[1] == "pass")
            types = set()
            for r, ty in rs:
                if r[1] == "pass":
                    types |= ty
            why = collections.OrderedDict()
            for r, _ in rs:
                if r[1] != "pass":
                    why.setdefault(short_reason(r[1], r[2]), []).append(r[0][5:])
            bad = "<br>".join("%s (%s)" % (k, ", ".join("`%s`" % x for x in v)) for k, v in why.items())
            f.write("| %s | %d | %d | %s | %s |\n" % (op, p, len(rs), " ".join(sorted(types)), bad))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--corpus", default=None, help="folder of test_* dirs (default: build/node-tests, made by make_corpus.py)")
    ap.add_argument("--expected", default=os.path.join(HERE, "expected_pass.txt"))
    ap.add_argument("--update", action="store_true", help="rewrite the expected list with today's passes")
    ap.add_argument("--table", help="write the per-op support table (markdown) to this file")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--quiet", action="store_true", help="list only failures and regressions")
    ap.add_argument("--cc-flags", default="", help="more gcc flags for the generated C (e.g. -mavx2 -mfma: its AVX2 paths)")
    ap.add_argument("--onnx2c-flags", default="", help="more onnx2c flags for every model (e.g. --target cortex-m)")
    ap.add_argument("--cuda-emu", action="store_true",
                    help="also compile each model to .cu, build it with the CPU emulation of CUDA and check it")
    ap.add_argument("--cuda-gpu", action="store_true",
                    help="also compile each model to .cu, build it with nvcc for this machine's GPU and run it there")
    ap.add_argument("--one-per-op", action="store_true",
                    help="of the tests chosen, only the first of each set of ops (a sample: every op once)")
    ap.add_argument("filters", nargs="*", help="only tests whose name contains one of these")
    args = ap.parse_args()
    args.clang = shutil.which("clang") is not None
    if not args.clang:
        print("# note: clang is not installed: the clang -fsyntax-only check of the C is skipped", flush=True)
    if args.cuda_gpu and shutil.which("nvcc") is None:
        print("--cuda-gpu: nvcc is not installed")
        sys.exit(1)
    corpus = args.corpus
    if corpus is None:
        corpus = default_corpus()
        subprocess.run([sys.executable, os.path.join(HERE, "make_corpus.py"), corpus], check=True)
    tests = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(corpus, "test_*", "model.onnx")))
    if args.filters:
        tests = [t for t in tests if any(f in os.path.basename(t) for f in args.filters)]
    if args.one_per_op:
        seen = set()
        sample = []
        for t in tests:
            ops = tuple(model_facts(t)[0])
            if ops not in seen:
                seen.add(ops)
                sample.append(t)
        print("# --one-per-op: %d of %d tests (one for each set of ops)" % (len(sample), len(tests)), flush=True)
        tests = sample
    pch_dir = tempfile.mkdtemp(prefix="o2c_nt_pch_")
    try:
        args.emu_pch = emu_pch(pch_dir) if args.cuda_emu else []
        with ThreadPoolExecutor(args.jobs) as ex:
            results = list(ex.map(lambda t: run_one(t, args), tests))
    finally:
        shutil.rmtree(pch_dir, ignore_errors=True)
    expected = set()
    if os.path.exists(args.expected) and not args.update:
        expected = {l.strip() for l in open(args.expected) if l.strip() and not l.startswith("#")}
    passed = {n for n, s, _ in results if s == "pass"}
    regressions = [r for r in results if r[0] in expected and r[1] != "pass"]
    for n, s, why in results:
        if s == "pass" or (args.quiet and s == "refused" and n not in expected):
            continue
        print("%-55s %-14s %s" % (n, s, why))
    counts = {}
    for _, s, _ in results:
        counts[s] = counts.get(s, 0) + 1
    total = len(results)
    print("# corpus %s: %d tests; %s" % (corpus, total, ", ".join("%s %d" % (k, counts.get(k, 0)) for k in
                                                                    ("pass", "refused") + FAILING)))
    if args.table:
        write_table(args.table, tests, results)
        print("# wrote %s" % args.table)
    if args.update:
        with open(args.expected, "w") as f:
            f.write("# node tests that must keep passing (tests/conformance/run_node_tests.py --update)\n")
            for n in sorted(passed):
                f.write(n + "\n")
        print("# wrote %d names to %s" % (len(passed), args.expected))
    new = sorted(passed - expected) if expected else []
    if new:
        print("# %d tests pass that are not in %s yet (run with --update to add them)" % (len(new), args.expected))
    if regressions:
        print("# REGRESSIONS: %d tests in the expected list do not pass: %s" % (len(regressions), " ".join(r[0] for r in regressions[:20])))
    nfail = sum(counts.get(k, 0) for k in FAILING) + sum(1 for r in regressions if r[1] not in FAILING)
    print("conformance: %d passed, %d failed, %d skipped (%.1f%% of %d passed)" % (counts.get("pass", 0),
          nfail, counts.get("refused", 0), 100.0 * counts.get("pass", 0) / max(total, 1), total))
    sys.exit(1 if nfail else 0)


if __name__ == "__main__":
    main()
