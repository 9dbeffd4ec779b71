#!/usr/bin/env python3
"""String tensors (compiler/ops/strings.c) end to end, without the ONNX
corpus: small models made with onnx.helper for every string op onnx2c
supports (Equal on strings, StringConcat, StringNormalizer, StringSplit,
RegexFullMatch, ai.onnx.ml LabelEncoder in its key and value types, string
moves and constants), checked against onnxruntime (or, where it cannot run
a case, Python's own string functions: the spec's semantics).

Every case is written as a test_* folder and run twice:
  1. by tests/conformance/run_node_tests.py --cuda-emu (gcc and clang
     warning-free, exact comparison; the .cu is refused for string models,
     which the runner reports and skips);
  2. here, with the generated C and the runner's string harness built with
     -fsanitize=address,undefined: no sanitizer report, the same outputs.
Then the contract checks: a run whose strings do not fit --string-space
returns NAME_ERR_STRING_SPACE (and writes nothing past the space), a
non-string-aware op on strings and the .cu output are refused with a message.

    python tests/test_strings.py [--compiler build/onnx2c] [--keep DIR]

The last line is 'N passed, N failed, N skipped'."""
import argparse, os, re, shutil, subprocess, sys, tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

from corpus_run import run_corpus

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "conformance"))
import run_node_tests as rnt  # noqa: E402  (the string harness and comparisons)

SAN = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all", "-g"]


def S(*xs, shape=None):
    a = np.array(list(xs), dtype=object)
    return a.reshape(shape) if shape is not None else a


def vi(name, dt, shape):
    return h.make_tensor_value_info(name, dt, shape)


def ort_run(m, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 4
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


class Corpus:
    def __init__(self, root):
        self.root = root
        self.names = []

    def add(self, name, nodes, inputs, outputs, feeds, inits=(), ml=False, opset=20, expect=None):
        """expect: the outputs where onnxruntime is not the reference (a
        function of the feeds, in Python's string semantics)"""
        g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
        ops = [h.make_opsetid("", opset)] + ([h.make_opsetid("ai.onnx.ml", 4)] if ml else [])
        m = h.make_model(g, opset_imports=ops)
        m.ir_version = 9
        outs = expect(feeds) if expect else ort_run(m, feeds)
        name = "test_" + name
        d = os.path.join(self.root, name)
        ds = os.path.join(d, "test_data_set_0")
        os.makedirs(ds)
        onnx.save(m, os.path.join(d, "model.onnx"))
        for k, v in enumerate(inputs):
            with open(os.path.join(ds, "input_%d.pb" % k), "wb") as f:
                f.write(nh.from_array(np.asarray(feeds[v.name]), v.name).SerializeToString())
        for k, (v, a) in enumerate(zip(outputs, outs)):
            a = np.asarray(a)
            with open(os.path.join(ds, "output_%d.pb" % k), "wb") as f:
                f.write(nh.from_array(a, v.name).SerializeToString())
        self.names.append(name)


WORDS = ["", "a", "Abc", "héllo", "ÉCOLE", "Straße", "ΣΟΦΊΑ", "мир", "日本語", "x y  z", " lead", "trail ", "a.b.c"]


def cases(c):
    r = np.random.RandomState(5)
    pick = lambda shape: np.array([WORDS[i] for i in r.randint(0, len(WORDS), size=int(np.prod(shape)))],
                                  dtype=object).reshape(shape)
    # Equal: broadcasting, UTF-8, empty strings
    a, b = pick([2, 3]), pick([3])
    b[0] = a[1, 0]
    c.add("equal_bcast", [h.make_node("Equal", ["A", "B"], ["Y"])],
          [vi("A", TP.STRING, [2, 3]), vi("B", TP.STRING, [3])], [vi("Y", TP.BOOL, [2, 3])], {"A": a, "B": b})
    # StringConcat: broadcasting both ways, chained (two builds in one run), scalars
    c.add("concat_bcast", [h.make_node("StringConcat", ["A", "B"], ["T"]), h.make_node("StringConcat", ["T", "A"], ["Y"])],
          [vi("A", TP.STRING, [2, 1]), vi("B", TP.STRING, [4])], [vi("Y", TP.STRING, [2, 4])],
          {"A": pick([2, 1]), "B": pick([4])})
    c.add("concat_const", [h.make_node("StringConcat", ["A", "K"], ["Y"])],
          [vi("A", TP.STRING, [])], [vi("Y", TP.STRING, [])], {"A": S("日本", shape=())},
          inits=[nh.from_array(S("語!", shape=()), "K")])
    # moves: Reshape, Identity; an input straight to an output; a constant output
    shp = nh.from_array(np.array([3, 2], dtype=np.int64), "shp")
    c.add("moves", [h.make_node("Reshape", ["A", "shp"], ["R"]), h.make_node("Identity", ["R"], ["Y"]),
                    h.make_node("Identity", ["K"], ["Z"])],
          [vi("A", TP.STRING, [2, 3])], [vi("Y", TP.STRING, [3, 2]), vi("A", TP.STRING, [2, 3]), vi("Z", TP.STRING, [2])],
          {"A": pick([2, 3])}, inits=[shp, nh.from_array(S("k0", "ü"), "K")])
    # StringNormalizer without stopwords: a run-time case change (Latin-1, Greek, Cyrillic: Python's mapping)
    x = S("Héllo", "ÉCOLE", "мир", "ΣΟΦΊΑ σοφία", "ÿ", "plain", "")
    for act, fn in (("LOWER", str.lower), ("UPPER", str.upper), ("NONE", lambda s: s)):
        c.add("normalizer_%s" % act.lower(), [h.make_node("StringNormalizer", ["X"], ["Y"], case_change_action=act)],
              [vi("X", TP.STRING, [7])], [vi("Y", TP.STRING, [7])], {"X": x},
              expect=lambda f, fn=fn: [np.array([fn(s) for s in f["X"]], dtype=object)])
    # with stopwords: the output length depends on the values (--bind, computed at compile time)
    c.add("normalizer_stop", [h.make_node("StringNormalizer", ["X"], ["Y"], case_change_action="UPPER",
                                          stopwords=["the", "À"], is_case_sensitive=0)],
          [vi("X", TP.STRING, [1, 5])], [vi("Y", TP.STRING, [1, 3])], {"X": S("The", "cat", "à", "sät", "x", shape=(1, 5))},
          expect=lambda f: [S("CAT", "SÄT", "X", shape=(1, 3))])
    # StringSplit: delimiter, whitespace, maxsplit (input bound at compile time)
    for nm, kw in (("dot", dict(delimiter=".")), ("ws", {}), ("max1", dict(maxsplit=1))):
        def ref(f, kw=kw):
            parts = [s.split(kw.get("delimiter") or None, kw.get("maxsplit", -1)) for s in f["X"].flat]
            most = max([len(p) for p in parts] + [0])
            y = np.array([p + [""] * (most - len(p)) for p in parts], dtype=object).reshape(f["X"].shape + (most,))
            return [y, np.array([len(p) for p in parts], dtype=np.int64).reshape(f["X"].shape)]
        c.add("split_%s" % nm, [h.make_node("StringSplit", ["X"], ["Y", "N"], **kw)],
              [vi("X", TP.STRING, [4])], [vi("Y", TP.STRING, None), vi("N", TP.INT64, [4])],
              {"X": S("a.b c", " x  y.z ", "", "..")}, expect=ref)
    # RegexFullMatch: classes, groups, alternation, counted repetition, anchors, word boundaries, UTF-8
    texts = S("www.google.com", "abc123", "a_b-c", "2024-01-31", "日本語", "foo@bar.org", "aaaa", "", "x y", "ab\nc")
    for i, pat in enumerate([r"www\.[\w.-]+\.\bcom\b", r"[a-z]+\d{2,3}", r"\w+(-\w+)*", r"\d{4}-\d\d-\d\d",
                             r"...", r"[^@\s]+@(bar|baz)\.(org|com)", r"a{2}a*?", r"(a|)*", r"x\s\S", r"(?:ab|a)[^x]{0,3}",
                             r"^\D+$", r"[\x41-\x{5A}a-c]*\W?.{1,2}"]):
        c.add("regex_%d" % i, [h.make_node("RegexFullMatch", ["X"], ["Y"], pattern=pat)],
              [vi("X", TP.STRING, [10])], [vi("Y", TP.BOOL, [10])], {"X": texts})   # onnxruntime: RE2
    # LabelEncoder: string -> int64 (default), int64 -> string, float -> string with a NaN key and a
    # repeated key (the last wins), string -> float, keys/values tensors (int32 -> int16), then numeric ops
    ml = dict(domain="ai.onnx.ml")
    c.add("le_str_int", [h.make_node("LabelEncoder", ["X"], ["Y"], keys_strings=["b", "a", "héllo", ""],
                                     values_int64s=[2, 1, 7, 9], default_int64=-5, **ml)],
          [vi("X", TP.STRING, [2, 3])], [vi("Y", TP.INT64, [2, 3])], {"X": S("a", "héllo", "zz", "", "b", "a", shape=(2, 3))}, ml=True)
    c.add("le_int_str", [h.make_node("LabelEncoder", ["X"], ["Y"], keys_int64s=[10, -3, 7], values_strings=["ten", "m3", "sëven"],
                                     default_string="?", **ml)],
          [vi("X", TP.INT64, [5])], [vi("Y", TP.STRING, [5])], {"X": np.array([7, 10, 0, -3, 7], dtype=np.int64)}, ml=True)
    c.add("le_float_str", [h.make_node("LabelEncoder", ["X"], ["Y"], keys_floats=[1.5, float("nan"), -2.0, 1.5],
                                       values_strings=["x", "nan", "neg", "last"], default_string="none", **ml)],
          [vi("X", TP.FLOAT, [5])], [vi("Y", TP.STRING, [5])], {"X": np.array([1.5, np.nan, -2, 3, 0], dtype=np.float32)},
          ml=True, expect=lambda f: [S("last", "nan", "neg", "none", "none")])
    c.add("le_str_float_add", [h.make_node("LabelEncoder", ["X"], ["F"], keys_strings=["lo", "hi"], values_floats=[0.25, 4.0],
                                           default_float=-1.0, **ml), h.make_node("Add", ["F", "F"], ["Y"])],
          [vi("X", TP.STRING, [4])], [vi("Y", TP.FLOAT, [4])], {"X": S("hi", "lo", "mid", "hi")}, ml=True)
    c.add("le_tensors", [h.make_node("LabelEncoder", ["X"], ["Y"], keys_tensor=nh.from_array(np.array([3, 1, 2], dtype=np.int32)),
                                     values_tensor=nh.from_array(np.array([30, 10, 20], dtype=np.int16)),
                                     default_tensor=nh.from_array(np.array([-1], dtype=np.int16)), **ml)],
          [vi("X", TP.INT32, [4])], [vi("Y", TP.INT16, [4])], {"X": np.array([1, 2, 3, 4], dtype=np.int32)}, ml=True,
          expect=lambda f: [np.array([10, 20, 30, -1], dtype=np.int16)])


def compile_bound(compiler, model_dir, out_c, extra=()):
    """compiles like the runner: retries once binding the inputs the refusal names"""
    m = onnx.load(os.path.join(model_dir, "model.onnx"))
    names = [i.name for i in m.graph.input]
    cmd = [compiler, os.path.join(model_dir, "model.onnx"), "-o", out_c, "--name", "m"] + list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True)
    bound = sorted(set(re.findall(r"--bind ([^\s=]+)=", r.stderr))) if r.returncode == 1 else []
    if bound:
        for b in bound:
            cmd += ["--bind", "%s=%s" % (b, os.path.join(model_dir, "test_data_set_0", "input_%d.pb" % names.index(b)))]
        r = subprocess.run(cmd, capture_output=True, text=True)
    return r


def load_set(d, nin, nout):
    ds = os.path.join(d, "test_data_set_0")
    return ([rnt.load_pb(os.path.join(ds, "input_%d.pb" % k)) for k in range(nin)],
            [rnt.load_pb(os.path.join(ds, "output_%d.pb" % k)) for k in range(nout)])


def write_harness(path, ins, refs):
    with open(path, "w") as f:
        f.write(rnt.STR_HARNESS % dict(ni=len(ins), no=len(refs), in_sz="".join("%d," % rnt.size_key(a) for a in ins),
                                       out_sz="".join("%d," % rnt.size_key(a) for a in refs),
                                       in_str="".join("%d," % rnt.is_str(a) for a in ins),
                                       out_str="".join("%d," % rnt.is_str(a) for a in refs)))


def build_run(work, src, ins, refs, tag):
    """the model's C and the string harness under ASan/UBSan; returns (rc, stderr, outputs)"""
    exe = os.path.join(work, "prog_" + tag)
    write_harness(os.path.join(work, "main_%s.c" % tag), ins, refs)
    r = subprocess.run(["gcc", "-std=c99", "-O1"] + SAN + ["-o", exe, os.path.join(work, "main_%s.c" % tag), src, "-lm"],
                       capture_output=True, text=True)
    if r.returncode:
        return None, "build: " + r.stderr[:300], None
    files = []
    for k, a in enumerate(ins):
        fn = os.path.join(work, "in_%s_%d" % (tag, k))
        open(fn, "wb").write(rnt.str_raw(a) if rnt.is_str(a) else rnt.raw(a))
        files.append(fn)
    outs = [os.path.join(work, "out_%s_%d" % (tag, k)) for k in range(len(refs))]
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1", UBSAN_OPTIONS="print_stacktrace=1")
    p = subprocess.run([exe] + files + outs, capture_output=True, env=env, timeout=60)
    got = [open(o, "rb").read() if os.path.exists(o) else b"" for o in outs] if p.returncode == 0 else None
    return p.returncode, p.stderr.decode(errors="replace"), got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--keep", help="write the corpus here and keep it")
    a = ap.parse_args()
    root = a.keep or tempfile.mkdtemp(prefix="o2c_strings_")
    passed = failed = 0
    try:
        if os.path.exists(root):
            shutil.rmtree(root)
        os.makedirs(root)
        c = Corpus(root)
        cases(c)
        # 1. the conformance runner (gcc + clang -Werror, the .cu refused and skipped)
        npass, nfail = run_corpus(root, c.names, a.compiler, 2, ["--cuda-emu"])
        passed += npass
        failed += nfail
        print("runner: %d of %d cases pass (C, clang, .cu refused as designed)" % (npass, len(c.names)))
        # 2. every case's C under ASan/UBSan, outputs compared again
        work = os.path.join(root, "san")
        os.makedirs(work)
        for name in c.names:
            d = os.path.join(root, name)
            m = onnx.load(os.path.join(d, "model.onnx"))
            ins, refs = load_set(d, len(m.graph.input), len(m.graph.output))
            src = os.path.join(work, name + ".c")
            r = compile_bound(a.compiler, d, src)
            if r.returncode:
                print("%s: sanitizer leg: compiler exit %d: %s" % (name, r.returncode, r.stderr.strip()[-200:]))
                failed += 1
                continue
            rc, err, got = build_run(work, src, ins, refs, name)
            why = err.strip()[-300:] if rc else ""
            for k, ref in enumerate(refs if not rc else []):
                why = why or (rnt.str_close(got[k], ref) if rnt.is_str(ref) else rnt.close(got[k], ref, 1e-6, 1e-6))
            if why or "runtime error" in err or "Sanitizer" in err:
                print("%s: sanitizer leg: %s" % (name, why or err[-300:]))
                failed += 1
            else:
                passed += 1
        # 3. the contract: too little string space -> NAME_ERR_STRING_SPACE (4), no overflow
        d = os.path.join(root, "test_concat_const")   # 11 bytes to build
        m = onnx.load(os.path.join(d, "model.onnx"))
        ins, refs = load_set(d, len(m.graph.input), len(m.graph.output))
        src = os.path.join(work, "small.c")
        r = compile_bound(a.compiler, d, src, ["--string-space", "9"])
        hdr = open(src[:-2] + ".h").read() if r.returncode == 0 else ""
        rc, err, _ = build_run(work, src, ins, refs, "small") if r.returncode == 0 else (None, r.stderr, None)
        if r.returncode == 0 and rc == 4 and "m_run returned 4" in err and "#define m_ERR_STRING_SPACE 4" in hdr \
                and "Sanitizer" not in err and "runtime error" not in err:
            passed += 1
        else:
            print("string space overflow: expected m_run to return m_ERR_STRING_SPACE (4): rc %s %s" % (rc, err[-300:]))
            failed += 1
        # 4. refusals: an op that is not string-aware, and the .cu output
        g = h.make_graph([h.make_node("Concat", ["A", "A"], ["Y"], axis=0)], "g", [vi("A", TP.STRING, [2])],
                         [vi("Y", TP.STRING, [4])])
        bad = os.path.join(work, "concat.onnx")
        onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), bad)
        checks = [([a.compiler, bad, "-o", os.path.join(work, "bad.c")], "is a string tensor; onnx2c computes Concat on numbers only"),
                  ([a.compiler, os.path.join(root, "test_equal_bcast", "model.onnx"), "-o", os.path.join(work, "e.cu")],
                   "string tensors, which only the C target supports")]
        for cmd, want in checks:
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode == 1 and want in r.stderr:
                passed += 1
            else:
                print("refusal expected (%s): exit %d %s" % (want, r.returncode, r.stderr.strip()[-200:]))
                failed += 1
        print("%d passed, %d failed, 0 skipped" % (passed, failed))
        return 1 if failed else 0
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
