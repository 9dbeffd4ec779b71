#!/usr/bin/env python3
"""End-to-end model tests: compile ONNX models with onnx2c, build and run the
generated C and CUDA, compare with onnxruntime.

    python tests/run_models.py [--compiler build/onnx2c] [--cuda-gpu] [-j 2] [TEST_DIR...]

A TEST_DIR is a folder with model.onnx and test_data_set_0/ (input_K.pb,
output_K.pb: the ONNX backend-test layout), or a folder of such folders.
Default: every examples/*/ and, if present, every ../shared/models/*/.

For each model:
  1. onnx2c model.onnx -o m.c --name m (+ --dim SYM=N / --shape IN:AxB for
     symbolic input dims, taken from the test data);
  2. the C: gcc -std=c99 -pedantic -Wall -Wextra -Werror with ASan+UBSan and
     tests/harness/main.c; run (twice inside the harness, outputs poisoned
     with 0xFF) and compare with onnxruntime run live and with the stored
     output_K.pb: |got - want| <= atol + rtol*|want| (ints, bools exact, NaN
     equals NaN; a folder's meta.json may set a larger "tolerance", per
     output: tests/models/fetch.py measures it on onnxruntime); also clang -std=c99 -pedantic -Wall -Wextra -Werror -c;
  3. the CUDA: onnx2c -o m.cu; g++ -x c++ -std=c++17 -DO2C_CUDA_EMULATE with
     runtime/cuda/o2c_cuda_emulate.h (ASan+UBSan) and the same harness;
     run and compare; nvcc -c m.cu (a compile check; skipped with a note if
     nvcc is missing). --cuda-gpu: build with nvcc and run on the GPU instead
     of the emulation (--repeat N: and note the median time of N more runs).
Steps 1-3 run at -O2 (the default: every pass) and again at -O0 (no pass):
both must match onnxruntime. For examples/, the number of kernel calls in
the -O2 C schedule must equal the count in tests/kernel_counts.txt (the
fusion targets; a change that fuses more or less updates that file).
A model the compiler refuses is skipped ('refused: MESSAGE'), except in
examples/ (the project's own models must compile: failed) and in folders with
expect_error.txt (the refusal must contain each of its lines: passed; compiling
is a failure). The last line is 'N passed, N failed, N skipped'; the exit
status is 1 if anything failed.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARNESS = os.path.join(ROOT, "tests", "harness", "main.c")
CUDA_RT = os.path.join(ROOT, "runtime", "cuda")
EXAMPLES = os.path.join(ROOT, "examples")
SHARED_MODELS = os.path.normpath(os.path.join(ROOT, "..", "shared", "models"))

SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
# -fno-var-tracking: the schedule of a big model is one long function, and
# gcc's variable tracking on it costs as much as the rest of the compile.
# -fno-tree-pta: UBSan gives each check of that function a static record
# whose address escapes, and gcc's points-to analysis grows with their
# product: nudenet_yolov8n_qdq's C (785 calls) took 396 s of one core at -O1
# with both sanitizers, 26 s with ASan alone, 45 s with both and
# -fno-tree-pta (gcc 12; the checks are the same, only alias facts are lost)
C_WARN = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror"]
SAN_OPT = ["-g", "-fno-var-tracking", "-fno-tree-pta", "-O1"]
GCC_C = ["gcc"] + C_WARN + SAN + SAN_OPT
CC_WARN = C_WARN + ["-g", "-O1"]   # with --cc (no sanitizers)
CLANG_C = ["clang"] + C_WARN + ["-c"]
GXX_EMU = ["g++", "-x", "c++", "-std=c++17", "-pedantic", "-Wall", "-Wextra", "-Werror",
           "-DO2C_CUDA_EMULATE", "-DO2C_HARNESS_CUDA", "-I" + CUDA_RT] + SAN + SAN_OPT
CXX_EMU = [f for f in GXX_EMU[1:] if f not in SAN + ["-fno-tree-pta"]]   # with --cxx (no sanitizers; any C++ compiler)
NVCC_C = ["nvcc", "-c", "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra,-Werror"]
# -arch=native: machine code for the GPU of the machine it runs on (no PTX
# compiled by the driver at start); NVCC_ARCH=sm_90 (say) builds for another
NVCC_GPU = ["nvcc", "-arch=" + os.environ.get("NVCC_ARCH", "native"), "-O2", "-Werror", "all-warnings", "-DO2C_HARNESS_CUDA"]
RUN_ENV = dict(os.environ,
               ASAN_OPTIONS="abort_on_error=0:detect_leaks=1:allocator_may_return_null=0",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")

print_lock = threading.Lock()


class CaseFailed(Exception):
    pass


# the lines where the generated files record onnx2c's flags (the banner,
# NAME_ONNX2C_FLAGS): builds with other flags compare without them
_FLAGS_LINE = r"^ \* with the flags: .*$|^#define \w+_ONNX2C_FLAGS .*$"


def without_flags(text):
    """text (str or bytes) with its flags lines replaced by a mark"""
    if isinstance(text, bytes):
        return re.sub(_FLAGS_LINE.encode(), b"(flags)", text, flags=re.M)
    return re.sub(_FLAGS_LINE, "(flags)", text, flags=re.M)


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def raw_bytes(a):
    a = np.ascontiguousarray(a)
    if a.dtype == np.bool_:
        return a.astype(np.uint8).tobytes()
    return a.tobytes()


def run_harness(exe, d, feeds, out_bytes, tag="", env=None, timeout=600):
    """Runs a harness program (HARNESS) built in d on the inputs feeds (a
    list of arrays): writes them raw into d, returns (exit status, its
    output, [each output's bytes, or None when the run failed])."""
    args = []
    for k, v in enumerate(feeds):
        p = os.path.join(d, "in%d.bin" % k)
        b = raw_bytes(v)
        open(p, "wb").write(b)
        args.append("%s:%d" % (p, len(b)))
    args.append("--")
    outs = []
    for k, nbytes in enumerate(out_bytes):
        p = os.path.join(d, "out%d%s.bin" % (k, tag))
        outs.append(p)
        args.append("%s:%d" % (p, nbytes))
    r = subprocess.run([exe] + args, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, env=env)
    out = r.stdout.decode(errors="replace")
    return r.returncode, out, [open(p, "rb").read() for p in outs] if r.returncode == 0 else None


def compare(got_bytes, want, rtol, atol):
    """(ok, max abs error or None, why)."""
    dt = np.dtype(np.uint8) if want.dtype == np.bool_ else want.dtype
    if len(got_bytes) != want.size * dt.itemsize:
        return False, None, "%d bytes, expected %d" % (len(got_bytes), want.size * dt.itemsize)
    got = np.frombuffer(got_bytes, dtype=dt).reshape(want.shape)
    if want.dtype == np.bool_:
        if not np.all((got == 0) | (got == 1)):
            return False, None, "bool output holds bytes other than 0/1"
        got = got.astype(np.bool_)
    if want.dtype.kind not in "fiub":   # ml_dtypes' bfloat16 & co: compare as float values
        got, want = got.astype(np.float32), want.astype(np.float32)
    if want.dtype.kind == "f":
        g, w = got.astype(np.float64), want.astype(np.float64)
        same = (g == w) | (np.isnan(g) & np.isnan(w))
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(g - w)
            ok = same | (diff <= atol + rtol * np.abs(w))
        finite = np.isfinite(diff)
        err = float(np.max(diff[finite])) if finite.any() else 0.0
        if not ok.all():
            bad = ~ok
            idx = np.unravel_index(int(np.argmax(bad)), want.shape) if want.ndim else ()
            if np.isnan(g[bad]).any() and not np.isnan(w[bad]).any():
                err = float("nan")
            return False, err, "%d of %d elements off (first at %s: got %r, want %r)" % (
                int(bad.sum()), want.size, [int(j) for j in idx], g[idx].item(), w[idx].item())
        return True, err, ""
    if not np.array_equal(got, want):
        bad = got != want
        idx = np.unravel_index(int(np.argmax(bad)), want.shape) if want.ndim else ()
        return False, None, "%d of %d elements differ (first at %s: got %r, want %r)" % (
            int(bad.sum()), want.size, [int(j) for j in idx], got[idx].item(), want[idx].item())
    return True, 0.0, ""


def find_tests(paths):
    out = []
    for p in paths:
        if os.path.isfile(os.path.join(p, "model.onnx")):
            out.append(os.path.normpath(p))
        else:
            out += sorted(os.path.dirname(m) for m in glob.glob(os.path.join(p, "*", "model.onnx")))
    return out


VERBOSE = False


def sh(cmd, timeout, cwd=None, env=None):
    """Runs cmd; (returncode, stdout+stderr). Timeout: rc None."""
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout, cwd=cwd, env=env)
    except subprocess.TimeoutExpired:
        return None, "timed out after %ds" % timeout
    finally:
        if VERBOSE:
            with print_lock:
                print("  %.1fs: %s" % (time.time() - t0, " ".join(cmd)[:150]), file=sys.stderr, flush=True)
    return r.returncode, (r.stdout or "") + (r.stderr or "")


def first_error(text, limit=300):
    """The most telling line of a tool's output."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for pat in ("o2c_cuda_emulate:", "ERROR: AddressSanitizer", "runtime error:", "returned", "error:",
                "differs", "modified", "expected exactly", "ERROR: LeakSanitizer", "Error"):
        for l in lines:
            if pat in l:
                return l[:limit]
    return (lines[-1] if lines else "(no output)")[:limit]


def is_in(path, folder):
    return os.path.commonpath([os.path.abspath(path), folder]) == folder


def ort_run(model_path, inputs):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, dict(zip(names, inputs)))


def shape_flags(gin, ins):
    """--dim SYM=N for named symbolic dims (when the data agrees on one value),
    --shape IN:AxB for inputs with unnamed unknown dims or anything else."""
    flags, dims, conflict, shape_inputs = [], {}, set(), []
    for vi, a in zip(gin, ins):
        tdims = vi.type.tensor_type.shape.dim
        known_rank = vi.type.tensor_type.HasField("shape")
        if known_rank and len(tdims) != a.ndim:
            shape_inputs.append((vi, a))
            continue
        for d, n in zip(tdims, a.shape):
            if d.HasField("dim_value"):
                continue
            if d.HasField("dim_param") and d.dim_param:
                if dims.setdefault(d.dim_param, n) != n:
                    conflict.add(d.dim_param)
            else:
                shape_inputs.append((vi, a))
                break
        if not known_rank:
            shape_inputs.append((vi, a))
    for vi, a in zip(gin, ins):
        tdims = vi.type.tensor_type.shape.dim
        if any(d.HasField("dim_param") and d.dim_param in conflict for d in tdims) and \
                all(vi is not s[0] for s in shape_inputs):
            shape_inputs.append((vi, a))
    for sym, n in sorted(dims.items()):
        if sym not in conflict:
            flags += ["--dim", "%s=%d" % (sym, n)]
    for vi, a in shape_inputs:
        flags += ["--shape", "%s:%s" % (vi.name, "x".join(str(s) for s in a.shape))]
    return flags


ONCE_ABOVE_S = 2.0      # CPU seconds of a first run above which the harness skips the second
ELIDE_ABOVE = 1 << 20   # bytes of source above which the compile-only checks skip the weights
# a big constant: "static const T cN[n] ATTRS = {...};", or for float and
# double "static const union { uintN_t bits[n]; T v[n]; } cN ATTRS = {{...}};"
CONST_INIT = re.compile(r"(static const (?:union \{[^}]*\} c\d+|[\w ]+ c\d+\[\d+\])(?: O2C_\w+)* = \{\{?)([^}]{4096,})(\}?\};)")


def elided_copy(src, dst):
    """For the compile-only checks (clang -c, nvcc -c) of a large file: a copy
    whose big constant initializers are cut to {0}. Parsing megabytes of
    float literals is most of their time and says nothing about the code;
    the full file is still built by gcc (C) and g++ (CUDA emulation).
    Returns the path to compile and whether anything was cut."""
    if os.path.getsize(src) < ELIDE_ABOVE:
        return src, False
    text = open(src, encoding="utf-8").read()
    cut, n = CONST_INIT.subn(lambda m: m.group(1) + "0" + m.group(3), text)
    if not n:
        return src, False
    with open(dst, "w", encoding="utf-8") as f:
        f.write(cut)
    return dst, True


def parse_header(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    h = {}
    for m in re.finditer(r"#define m_(\w+) (.*)", text):
        h[m.group(1)] = m.group(2).split("/*")[0].strip()
    return h


def check_header(h, kind, k, arr):
    """The header's description of input/output k must match the data."""
    want_type = "bool" if arr.dtype == np.bool_ else arr.dtype.name
    t = h.get("%s%d_TYPE" % (kind, k), "").strip('"')
    dims = h.get("%s%d_DIMS" % (kind, k), "")
    got_dims = [int(x) for x in re.findall(r"-?\d+", dims)] if arr.ndim else []
    size = h.get("%s%d_SIZE" % (kind, k), "")
    problems = []
    if t != want_type:
        problems.append("type %s, data is %s" % (t or "?", want_type))
    if got_dims != list(arr.shape):
        problems.append("dims %s, data is %s" % (dims or "?", list(arr.shape)))
    if size != str(arr.size):
        problems.append("size %s, data has %d" % (size or "?", arr.size))
    if problems:
        raise CaseFailed("header %s %d: %s" % (kind.lower(), k, "; ".join(problems)))


def read_meta(test):
    """The folder's meta.json ({} where there is none)."""
    try:
        import json
        with open(os.path.join(test, "meta.json"), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


class Case:
    meta = {}

    def __init__(self, test, args):
        self.test = test
        self.args = args
        self.name = "cuda/" + test if test == SELFTEST else \
            os.path.relpath(test, os.path.dirname(os.path.dirname(os.path.abspath(test))))
        self.status = None      # pass / fail / skip
        self.notes = []
        self.errors = {}        # path -> max abs error
        self.t0 = time.time()

    def step(self, cmd, what, timeout=None, cwd=None, env=None):
        rc, out = sh(cmd, timeout or self.args.timeout, cwd=cwd, env=env)
        if rc != 0:
            raise CaseFailed("%s: %s" % (what, first_error(out)))
        return out

    def compile_model(self, work, out_name, flags, level=2):
        cmd = [self.args.compiler, os.path.join(self.test, "model.onnx"), "-o", os.path.join(work, out_name),
               "--name", "m", "-O%d" % level] + flags
        if out_name.endswith(".c"):
            cmd += self.args.c_flags.split()
        rc, out = sh(cmd, self.args.timeout)
        return cmd, rc, out

    def tolerance(self, k):
        """(rtol, atol) of output k: the command line's, or the larger one that
        the folder's meta.json sets ("tolerance": {"rtol": R, "atol": A or
        [A per output], "why": ...}; tests/models/fetch.py measures it on
        onnxruntime itself)."""
        rtol, atol = self.args.rtol, self.args.atol
        tol = self.meta.get("tolerance") if isinstance(self.meta, dict) else None
        if isinstance(tol, dict):
            a = tol.get("atol", atol)
            a = a[k] if isinstance(a, list) and k < len(a) else a
            rtol = max(rtol, float(tol.get("rtol", rtol)))
            atol = max(atol, float(a)) if not isinstance(a, list) else atol
        return rtol, atol

    def compare_outputs(self, path, files, refs):
        for k, (f, (live, stored)) in enumerate(zip(files, refs)):
            data = open(f, "rb").read()
            for label, want in (("onnxruntime", live), ("stored output_%d.pb" % k, stored)):
                if want is None:
                    continue
                rtol, atol = self.tolerance(k)
                ok, err, why = compare(data, want, rtol, atol)
                if label == "onnxruntime" or live is None:   # the error reported: against the live run
                    e = float("inf") if err is None else err
                    prev = self.errors.get(path, 0.0)
                    self.errors[path] = e if (np.isnan(e) or e > prev) else prev
                if not ok:
                    raise CaseFailed("%s output %d vs %s: %s" % (path, k, label, why))

    def run(self):
        args = self.args
        model_path = os.path.join(self.test, "model.onnx")
        expect_path = os.path.join(self.test, "expect_error.txt")
        expect = None
        if os.path.exists(expect_path):
            expect = [l.strip() for l in open(expect_path, encoding="utf-8") if l.strip()]
        sets = sorted(glob.glob(os.path.join(self.test, "test_data_set_*")))
        if not sets:
            raise CaseFailed("no test_data_set_0")
        ds = sets[0]
        model = onnx.load(model_path, load_external_data=False)
        self.meta = read_meta(self.test)
        loose = [k for k in range(len(model.graph.output)) if self.tolerance(k) != (args.rtol, args.atol)]
        if loose:
            self.notes.append("tolerance of meta.json: " + ", ".join(
                "out%d atol %.3g rtol %.3g" % ((k,) + self.tolerance(k)[::-1]) for k in loose))
        inits = {i.name for i in model.graph.initializer}
        gin = [i for i in model.graph.input if i.name not in inits]
        ins = [load_pb(os.path.join(ds, "input_%d.pb" % k)) for k in range(len(gin))]
        flags = shape_flags(gin, ins)
        work = tempfile.mkdtemp(prefix="o2c_models_")
        try:
            self._run(work, model_path, model, gin, ins, ds, flags, expect)
        finally:
            if args.keep:
                self.notes.append("kept " + work)
            else:
                shutil.rmtree(work, ignore_errors=True)

    def _run(self, work, model_path, model, gin, ins, ds, flags, expect):
        args = self.args
        cdir, cudir = os.path.join(work, "c"), os.path.join(work, "cu")
        os.makedirs(cdir)
        os.makedirs(cudir)
        for level in args.levels:
            os.makedirs(os.path.join(work, "c-O%d" % level), exist_ok=True)
            os.makedirs(os.path.join(work, "cu-O%d" % level), exist_ok=True)

        # ---- 1. compile to C (a refusal that names graph inputs as `--bind NAME=`:
        # once more with exactly those bound to this data set's values)
        cmd, rc, out = self.compile_model(cdir, "m.c", flags, args.levels[0])
        names = [vi.name for vi in gin]
        bound = sorted(set(re.findall(r"--bind ([^\s=]+)=", out))) if rc == 1 else []
        if bound and all(b in names for b in bound) and expect is None:
            flags += [a for b in bound for a in ("--bind", "%s=%s" % (b, os.path.join(ds, "input_%d.pb" % names.index(b))))]
            self.notes.append("bound: " + ",".join(bound))
            cmd, rc, out = self.compile_model(cdir, "m.c", flags, args.levels[0])
        sanitizer = any(s in out for s in ("Sanitizer", "runtime error:"))
        if rc is None:
            raise CaseFailed("compiler %s: %s" % (out, " ".join(cmd)))
        if rc < 0 or rc >= 128 or sanitizer:
            raise CaseFailed("compiler crashed (rc %s): %s; command: %s" % (rc, first_error(out), " ".join(cmd)))
        if rc != 0:
            msg = next((l.strip() for l in out.splitlines() if l.strip()), "(no message)")[:300]
            if expect is not None:
                missing = [s for s in expect if s not in out]
                if missing:
                    raise CaseFailed("refused, but the message lacks %s: %s" % (missing, msg))
                self.status = "pass"
                self.notes.append("refused as expected")
                return
            if is_in(self.test, EXAMPLES):
                raise CaseFailed("refused: %s" % msg)
            self.status = "skip"
            self.notes.append("refused: %s" % msg)
            return
        if expect is not None:
            raise CaseFailed("compiled, but expect_error.txt says it must be refused (%s)" % ", ".join(expect))

        # ---- references
        nouts = len(model.graph.output)
        stored = []
        for k in range(nouts):
            p = os.path.join(ds, "output_%d.pb" % k)
            stored.append(load_pb(p) if os.path.exists(p) else None)
        try:
            live = [np.asarray(a) for a in ort_run(model_path, ins)]
        except Exception as e:  # onnxruntime cannot run it: the stored data only
            live = [None] * nouts
            self.notes.append("onnxruntime failed (%s): stored outputs only" % str(e).splitlines()[0][:100])
        if all(s is None for s in stored) and all(l is None for l in live):
            raise CaseFailed("no reference outputs")
        refs = list(zip(live, stored))
        shapes = [(l if l is not None else s) for l, s in refs]

        h = parse_header(os.path.join(cdir, "m.h"))
        if h.get("NUM_INPUTS") != str(len(ins)) or h.get("NUM_OUTPUTS") != str(nouts):
            raise CaseFailed("header: %s inputs, %s outputs; the model has %d and %d" % (
                h.get("NUM_INPUTS"), h.get("NUM_OUTPUTS"), len(ins), nouts))
        for k, a in enumerate(ins):
            check_header(h, "INPUT", k, a)
        for k, a in enumerate(shapes):
            check_header(h, "OUTPUT", k, a)

        in_files = []
        for k, a in enumerate(ins):
            f = os.path.join(work, "in%d.bin" % k)
            with open(f, "wb") as fh:
                fh.write(raw_bytes(a))
            in_files.append("%s:%d" % (f, len(raw_bytes(a))))
        out_bytes = [len(raw_bytes(a)) for a in shapes]

        # a model whose first run takes long under the sanitizers is run once, not twice
        once = ["--once-above", str(ONCE_ABOVE_S)]

        def run_prog(exe, tag, extra=()):
            outs = [os.path.join(work, "%s_out%d.bin" % (tag, k)) for k in range(nouts)]
            rc, out = sh(args.run_prefix.split() + [exe] + once + list(extra) + in_files + ["--"] + ["%s:%d" % (o, n) for o, n in zip(outs, out_bytes)],
                         args.run_timeout, env=RUN_ENV)
            if rc != 0:
                raise CaseFailed("%s: run %s: %s" % (tag, "timed out" if rc is None else "failed (rc %d)" % rc,
                                                     first_error(out)))
            if "second run skipped" in out:
                self.notes.append("(%s: one run, slow)" % tag)
            m = re.search(r"device run: median ([0-9.]+) ms", out)
            if m:
                self.notes.append("%s: %s ms a run (median of %d)" % (tag, m.group(1), args.repeat))
            return outs

        # kernel-count targets of the examples (tests/kernel_counts.txt), at -O2
        want_kernels = KERNEL_COUNTS.get(os.path.basename(self.test)) if is_in(self.test, EXAMPLES) else None
        if want_kernels is not None and 2 in args.levels:
            src = cdir if args.levels[0] == 2 else None
            if src is None:
                src = os.path.join(work, "c-O2")
                self.step(self.compile_model(src, "m.c", flags, 2)[0], "onnx2c -O2")
            got = count_kernels(os.path.join(src, "m.c"))
            if got != want_kernels:
                raise CaseFailed("-O2 schedule has %d kernel calls; tests/kernel_counts.txt expects %d" %
                                 (got, want_kernels))
            self.notes.append("%d kernels" % got)

        # ---- 2. the C, 3. the CUDA, at each level: a failure in one does not stop the others
        failures = []
        cut = []
        for level in args.levels:
            self._targets(work, flags, level, level == args.levels[0], refs, run_prog, failures, cut)
        if any(cut):
            self.notes.append("(clang/nvcc -c checked without the weights)")
        if failures:
            raise CaseFailed("; ".join(failures))
        self.status = "pass"

    def _targets(self, work, flags, level, first, refs, run_prog, failures, cut):
        args = self.args
        tag = "" if level == 2 else "-O%d" % level
        cdir = os.path.join(work, "c") if first else os.path.join(work, "c-O%d" % level)
        cudir = os.path.join(work, "cu-O%d" % level)
        if not first:
            cmd, rc, out = self.compile_model(cdir, "m.c", flags, level)
            if rc != 0:
                failures.append("c%s: onnx2c failed (rc %s): %s" % (tag, rc, first_error(out)))
                return

        def the_c():
            cc = (args.cc.split() + CC_WARN) if args.cc else GCC_C
            self.step(cc + self.args.cc_flags.split() + ["-I" + cdir, "-o", os.path.join(cdir, "prog_c"), HARNESS,
                               os.path.join(cdir, "m.c"), "-lm"], "c%s: gcc" % tag)
            self.compare_outputs("c" + tag, run_prog(os.path.join(cdir, "prog_c"), "c" + tag), refs)
            if not first or not args.clang:
                return          # clang's compile check once, on the first level (where clang is installed)
            src, c = elided_copy(os.path.join(cdir, "m.c"), os.path.join(cdir, "m_code.c"))
            cut.append(c)
            self.step(CLANG_C + ["-o", os.path.join(cdir, "m.o"), src], "c: clang -c")

        def the_cuda():
            cmd, rc, out = self.compile_model(cudir, "m.cu", flags, level)
            if rc != 0:
                raise CaseFailed("cuda: onnx2c -o m.cu failed (rc %s) where -o m.c worked: %s" % (rc, first_error(out)))
            if any(s in out for s in ("Sanitizer", "runtime error:")):
                raise CaseFailed("cuda: compiler sanitizer report: %s" % first_error(out))
            if args.cuda_gpu:
                exe = os.path.join(work, "prog_gpu")
                self.step(NVCC_GPU + ["-I" + cudir, "-x", "cu", HARNESS, "-x", "cu", os.path.join(cudir, "m.cu"),
                                      "-o", exe], "cuda%s: nvcc" % tag)
                timed = ["--repeat", str(args.repeat)] if args.repeat and first else []
                self.compare_outputs("cuda-gpu" + tag, run_prog(exe, "gpu" + tag, timed), refs)
                return
            exe = os.path.join(cudir, "prog_emu")
            cxx = (args.cxx.split() + CXX_EMU) if args.cxx else GXX_EMU
            self.step(cxx + ["-I" + cudir, "-o", exe, HARNESS, os.path.join(cudir, "m.cu"), "-lm"],
                      "cuda-emu%s: g++" % tag)
            self.compare_outputs("cuda-emu" + tag, run_prog(exe, "emu" + tag), refs)
            if args.nvcc and first:
                src, c = elided_copy(os.path.join(cudir, "m.cu"), os.path.join(cudir, "m_code.cu"))
                cut.append(c)
                self.step(NVCC_C + ["-I" + cudir, "-o", os.path.join(cudir, "m.o"), src], "cuda: nvcc -c")

        for part in (the_c,) if args.c_only else (the_c, the_cuda):
            try:
                part()
            except CaseFailed as e:
                failures.append(str(e))

    def line(self):
        errs = ", ".join("%s %s" % (k, "%.3g" % v) for k, v in self.errors.items())
        parts = [self.status.upper() if self.status != "skip" else "SKIP", self.name]
        if errs:
            parts.append("max err " + errs)
        parts += self.notes
        parts.append("(%.1fs)" % (time.time() - self.t0))
        return "%-5s %-40s %s" % (parts[0], parts[1], "  ".join(parts[2:]))


def expected_cost(test):
    """A guess at a case's time (model size: weights to compile; onnxruntime
    latency from meta.json where there is one: compute), to start the long
    ones first."""
    cost = os.path.getsize(os.path.join(test, "model.onnx")) / 1e5
    try:
        import json
        with open(os.path.join(test, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
        lat = meta.get("ort_latency_ms_1thread", 0)
        cost += 3 * float(lat if not isinstance(lat, dict) else lat.get("median", 0))
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    return cost


def read_kernel_counts():
    path = os.path.join(ROOT, "tests", "kernel_counts.txt")
    counts = {}
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            line = line.split("#")[0].split()
            if len(line) == 2:
                counts[line[0]] = int(line[1])
    return counts


KERNEL_COUNTS = read_kernel_counts()
KERNEL_CALL = re.compile(r"^\s+(o2c_\w+)\(0, \d+, &p\);$", re.M)


def count_kernels(c_file):
    """Kernel calls in a generated C schedule (calls on empty tensors are not emitted)."""
    return len(KERNEL_CALL.findall(open(c_file, encoding="utf-8", errors="replace").read()))


SELFTEST = "emulate-selftest"


def run_selftest(c):
    """Builds and runs tests/harness/emulate_selftest.cpp (the CUDA emulation itself)."""
    exe = os.path.join(tempfile.mkdtemp(prefix="o2c_selftest_"), "selftest")
    try:
        c.step(["g++", "-std=c++17", "-pedantic", "-Wall", "-Wextra", "-Werror", "-I" + CUDA_RT] + SAN +
               ["-g", "-o", exe, os.path.join(ROOT, "tests", "harness", "emulate_selftest.cpp")], "g++")
        c.step([exe], "run", env=RUN_ENV)
        c.status = "pass"
    finally:
        shutil.rmtree(os.path.dirname(exe), ignore_errors=True)


def run_case(test, args):
    c = Case(test, args)
    try:
        if test == SELFTEST:
            run_selftest(c)
        else:
            c.run()
    except CaseFailed as e:
        c.status = "fail"
        c.notes.insert(0, str(e))
    except Exception as e:  # a harness problem: reported as a failure of the case
        c.status = "fail"
        c.notes.insert(0, "harness error: %r" % (e,))
    with print_lock:
        print(c.line(), flush=True)
    return c



def run_checks(tests, check_model, jobs, extra=()):
    """The driver of the per-model suites (test_visibility, test_profile):
    check_model(t) -> (status, note) for each test folder, on `jobs`
    threads (an exception is that model's failure), then the extra
    (name, status, note) results; prints a line each and the closing
    'N passed, N failed, N skipped' line, and exits 1 on a failure."""
    def one(t):
        try:
            return (t,) + check_model(t)
        except Exception as e:  # a failed check, or a tool that broke
            return t, "fail", ("%s: %s" % (type(e).__name__, e)).splitlines()[0][:300]

    counts = {"pass": 0, "fail": 0, "skip": 0}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        results = list(ex.map(one, tests))
    results += list(extra() if callable(extra) else extra)
    for name, status, note in results:
        counts[status] += 1
        label = os.path.relpath(name, os.path.dirname(ROOT)) if os.path.isabs(name) else name
        print("%-4s %-40s %s" % (status.upper(), label, note), flush=True)
    print("%d passed, %d failed, %d skipped" % (counts["pass"], counts["fail"], counts["skip"]))
    sys.exit(1 if counts["fail"] else 0)

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tests", nargs="*")
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--cuda-gpu", action="store_true", help="build the .cu with nvcc and run it on the GPU")
    ap.add_argument("--repeat", type=int, default=0, help="with --cuda-gpu: time this many more device runs "
                    "at the first level and note the median (tests/harness/main.c --repeat)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--timeout", type=int, default=600, help="seconds per compile step")
    ap.add_argument("--run-timeout", type=int, default=300, help="seconds per program run")
    ap.add_argument("--keep", action="store_true", help="keep the work folders")
    ap.add_argument("--levels", default="2,0", help="optimization levels to build and check (default: 2,0)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every command")
    ap.add_argument("--c-flags", default="", help="more onnx2c flags for the C target only (e.g. --tune-file F)")
    ap.add_argument("--cc-flags", default="", help="more gcc flags for the generated C (e.g. -mavx2 -mfma)")
    ap.add_argument("--cc", default="", help="another C compiler for the generated C, without the sanitizers "
                    "(e.g. 'aarch64-linux-gnu-gcc -static')")
    ap.add_argument("--cxx", default="", help="another C++ compiler for the CUDA emulation, without the "
                    "sanitizers (e.g. g++; tests/test_valgrind.py)")
    ap.add_argument("--run-prefix", default="", help="runs the C programs through this command (e.g. qemu-aarch64)")
    ap.add_argument("--c-only", action="store_true", help="the C target only (no CUDA emulation)")
    args = ap.parse_args()
    global VERBOSE
    VERBOSE = args.verbose

    args.compiler = os.path.abspath(args.compiler)
    args.levels = [int(x) for x in args.levels.split(",")]
    paths = args.tests or [EXAMPLES] + ([SHARED_MODELS] if os.path.isdir(SHARED_MODELS) else [])
    tests = find_tests(paths)
    if not os.access(args.compiler, os.X_OK):
        print("no compiler at %s (build it first, or pass --compiler)" % args.compiler)
        print("0 passed, %d failed, 0 skipped" % max(1, len(tests)))
        sys.exit(1)
    args.nvcc = shutil.which("nvcc") is not None
    args.clang = shutil.which("clang") is not None
    if not args.clang:
        print("note: clang is not installed: the clang -c compile check of the C is skipped", flush=True)
    if args.cuda_gpu and not args.nvcc:
        print("--cuda-gpu: nvcc is not installed")
        print("0 passed, %d failed, 0 skipped" % max(1, len(tests)))
        sys.exit(1)
    if not args.nvcc:
        print("note: nvcc is not installed: the nvcc -c compile check of the .cu is skipped", flush=True)
    if not tests:
        print("no test folders (model.onnx + test_data_set_0) in %s" % " ".join(paths))

    order = sorted(tests, key=lambda t: -expected_cost(t))
    if not args.cuda_gpu:
        order.append(SELFTEST)
    t0 = time.time()
    with ThreadPoolExecutor(max(1, args.jobs)) as ex:
        results = [f.result() for f in as_completed([ex.submit(run_case, t, args) for t in order])]
    n = {s: sum(1 for r in results if r.status == s) for s in ("pass", "fail", "skip")}
    print("(%.0fs)" % (time.time() - t0))
    print("%d passed, %d failed, %d skipped" % (n["pass"], n["fail"], n["skip"]))
    sys.exit(1 if n["fail"] else 0)


if __name__ == "__main__":
    main()
