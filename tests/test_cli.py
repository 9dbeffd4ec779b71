#!/usr/bin/env python3
"""Tests of the CLI and of the generated-code contract beyond numerics:
byte-identical output, --name prefixes (two models in one program), the
typed entry, the caller-owned arena (exactly ARENA_SIZE bytes, under ASan), --bind,
--help/--version/--list-ops, -v, --target. Prints 'N passed, N failed'."""
import argparse, os, re, subprocess, sys, tempfile, traceback

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CFLAGS = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-g", "-O1",
          "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]


def mlp(path, seed):
    rs = np.random.RandomState(seed)
    w1 = nh.from_array(rs.randn(8, 16).astype(np.float32), "w1")
    b1 = nh.from_array(rs.randn(16).astype(np.float32), "b1")
    w2 = nh.from_array(rs.randn(16, 4).astype(np.float32), "w2")
    nodes = [h.make_node("MatMul", ["x", "w1"], ["h0"]), h.make_node("Add", ["h0", "b1"], ["h1"]),
             h.make_node("Relu", ["h1"], ["h2"]), h.make_node("MatMul", ["h2", "w2"], ["h3"]),
             h.make_node("Tanh", ["h3"], ["y"])]
    g = h.make_graph(nodes, "mlp", [h.make_tensor_value_info("x", TP.FLOAT, [2, 8])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [2, 4])], [w1, b1, w2])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return m


def reference(m, x):
    w1, b1, w2 = (nh.to_array(t) for t in m.graph.initializer)
    return np.tanh(np.maximum(x @ w1 + b1, 0) @ w2).astype(np.float32)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


class Ctx:
    def __init__(self, compiler, tmp):
        self.compiler, self.tmp = compiler, tmp

    def onnx2c(self, *args):
        return run([self.compiler] + list(args))


def t_deterministic(c):
    m = os.path.join(c.tmp, "a.onnx")
    mlp(m, 1)
    os.makedirs(os.path.join(c.tmp, "d1"))
    os.makedirs(os.path.join(c.tmp, "d2"))
    for d in ("d1", "d2"):
        r = c.onnx2c(m, "-o", os.path.join(c.tmp, d, "net.c"))
        assert r.returncode == 0, r.stderr
    for ext in (".c", ".h"):
        a = open(os.path.join(c.tmp, "d1", "net" + ext), "rb").read()
        b = open(os.path.join(c.tmp, "d2", "net" + ext), "rb").read()
        assert a == b, "output differs between two runs: net" + ext


def t_two_models_one_program(c):
    ma, mb = os.path.join(c.tmp, "a.onnx"), os.path.join(c.tmp, "b.onnx")
    A, B = mlp(ma, 1), mlp(mb, 2)
    for mdl, name in ((ma, "alpha"), (mb, "beta")):
        r = c.onnx2c(mdl, "-o", os.path.join(c.tmp, name + "_net.c"), "--name", name)
        assert r.returncode == 0, r.stderr
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)
    main = os.path.join(c.tmp, "two.c")
    xs = "}, {".join(", ".join("%.9ef" % v for v in row) for row in x)
    open(main, "w").write(r'''
#include <stdio.h>
#include "alpha_net.h"
#include "beta_net.h"
int main(void)
{
    static const float x[2][8] = {{%s}};   /* a const input: the typed entry's inputs are const */
    float ya[2][4], yb[2][4];
    int i;
    if (alpha_predict(x, ya) || beta_predict(x, yb)) return 1;
    for (i = 0; i < 8; i++) printf("%%.9g %%.9g\n", (double)ya[i / 4][i %% 4], (double)yb[i / 4][i %% 4]);
    return 0;
}
''' % xs)
    exe = os.path.join(c.tmp, "two")
    r = run(["gcc"] + CFLAGS + ["-I", c.tmp, "-o", exe, main, os.path.join(c.tmp, "alpha_net.c"),
                                os.path.join(c.tmp, "beta_net.c"), "-lm"])
    assert r.returncode == 0, r.stderr
    r = run([exe])
    assert r.returncode == 0, r.stderr
    got = np.array([[float(v) for v in l.split()] for l in r.stdout.split("\n") if l.strip()], dtype=np.float32)
    want_a, want_b = reference(A, x).ravel(), reference(B, x).ravel()
    assert np.allclose(got[:, 0], want_a, rtol=1e-4, atol=1e-5), (got[:, 0], want_a)
    assert np.allclose(got[:, 1], want_b, rtol=1e-4, atol=1e-5), (got[:, 1], want_b)


def t_constant_words(c):
    """Constants of 1 KiB or more are written as 64-bit words of their bytes (float32, float16, int8 with a
    partial last word, int64) and read back exactly; --element-constants writes them element by element
    with the same results; the words' file refuses a big-endian target and a compiler that does not name
    its byte order (unless O2C_LITTLE_ENDIAN)"""
    rs = np.random.RandomState(5)
    W = rs.randn(8, 33).astype(np.float32)              # 1056 bytes
    H = rs.randn(700).astype(np.float16)                # 1400 bytes
    Q = rs.randint(-128, 128, 1035).astype(np.int8)     # 1035 bytes: the last word holds 3
    L = rs.randint(-2**62, 2**62, 200).astype(np.int64)  # 1600 bytes
    nodes = [h.make_node("MatMul", ["x", "W"], ["y1"]), h.make_node("Gather", ["H", "i"], ["y2"]),
             h.make_node("Gather", ["Q", "j"], ["y3"]), h.make_node("Gather", ["L", "i"], ["y4"])]
    g = h.make_graph(nodes, "words", [h.make_tensor_value_info("x", TP.FLOAT, [2, 8]),
                                       h.make_tensor_value_info("i", TP.INT64, [5]),
                                       h.make_tensor_value_info("j", TP.INT64, [5])],
                     [h.make_tensor_value_info("y1", TP.FLOAT, [2, 33]), h.make_tensor_value_info("y2", TP.FLOAT16, [5]),
                      h.make_tensor_value_info("y3", TP.INT8, [5]), h.make_tensor_value_info("y4", TP.INT64, [5])],
                     [nh.from_array(W, "W"), nh.from_array(H, "H"), nh.from_array(Q, "Q"), nh.from_array(L, "L")])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    m = os.path.join(c.tmp, "words.onnx")
    onnx.save(model, m)
    x = rs.randn(2, 8).astype(np.float32)
    i = np.array([0, 1, 199, 3, 198], np.int64)
    j = np.array([1034, 1033, 1032, 0, 7], np.int64)   # the partial last word of Q
    main = os.path.join(c.tmp, "wmain.c")
    open(main, "w").write(r"""
#include <stdio.h>
#include <stdint.h>
#include "wnet.h"
int main(void)
{
    float x[16], y1[66];
    int64_t i[5], j[5], y4[5];
    uint16_t y2[5];
    int8_t y3[5];
    const void *in[3] = {x, i, j};
    void *out[4] = {y1, y2, y3, y4};
    if (fread(x, sizeof x, 1, stdin) != 1 || fread(i, sizeof i, 1, stdin) != 1 || fread(j, sizeof j, 1, stdin) != 1)
        return 2;
    if (wnet_run(in, out)) return 3;
    fwrite(y1, sizeof y1, 1, stdout), fwrite(y2, sizeof y2, 1, stdout);
    fwrite(y3, sizeof y3, 1, stdout), fwrite(y4, sizeof y4, 1, stdout);
    return 0;
}
""")
    for flags in ([], ["--element-constants"]):
        src = os.path.join(c.tmp, "wnet.c")
        r = c.onnx2c(m, "-o", src, *flags)
        assert r.returncode == 0, r.stderr
        text = open(src).read()
        assert text.count("as 64-bit words of its bytes */") == (0 if flags else 4), (flags, text.count("64-bit words"))
        assert ("__ORDER_LITTLE_ENDIAN__" in text) == (not flags)
        exe = os.path.join(c.tmp, "wrun")
        r = run(["gcc"] + CFLAGS + ["-I", c.tmp, "-o", exe, main, src, "-lm"])
        assert r.returncode == 0, r.stderr
        r = subprocess.run([exe], input=x.tobytes() + i.tobytes() + j.tobytes(), capture_output=True)
        assert r.returncode == 0, (flags, r.returncode, r.stderr[-300:])
        out = r.stdout
        assert len(out) == 264 + 10 + 5 + 40, len(out)
        assert np.allclose(np.frombuffer(out[:264], np.float32).reshape(2, 33), x @ W, rtol=1e-5, atol=1e-5), flags
        assert (np.frombuffer(out[264:274], np.uint16) == H[i].view(np.uint16)).all(), flags
        assert (np.frombuffer(out[274:279], np.int8) == Q[j]).all(), flags
        assert (np.frombuffer(out[279:319], np.int64) == L[i]).all(), flags
        if not flags:   # the byte-order guard
            for extra, ok in ((["-U__BYTE_ORDER__"], False), (["-U__BYTE_ORDER__", "-DO2C_LITTLE_ENDIAN"], True),
                              (["-U__BYTE_ORDER__", "-D__BYTE_ORDER__=__ORDER_BIG_ENDIAN__"], False)):
                r = run(["gcc", "-std=c99", "-w", "-fsyntax-only", "-I", c.tmp, *extra, src])
                assert (r.returncode == 0) == ok, (extra, r.stderr[-300:])
                assert ok or "--element-constants" in r.stderr, r.stderr[-300:]


def t_caller_arena(c):
    m = os.path.join(c.tmp, "a.onnx")
    A = mlp(m, 3)
    r = c.onnx2c(m, "-o", os.path.join(c.tmp, "arena_net.c"))
    assert r.returncode == 0, r.stderr
    hdr = open(os.path.join(c.tmp, "arena_net.h")).read()
    assert "#define arena_net_ARENA_SIZE" in hdr
    assert "64-byte aligned" in hdr, hdr
    size = int(hdr.split("#define arena_net_ARENA_SIZE")[1].split()[0])
    assert size % 64 == 0, size
    src = open(os.path.join(c.tmp, "arena_net.c")).read()
    # every constant array and the static arena are 64-byte aligned
    assert src.count("static const union { uint32_t bits[") == src.count("O2C_ALIGN64 = {{") > 0, src
    assert "} o2c_arena O2C_ALIGN64;" in src
    main = os.path.join(c.tmp, "arena.c")
    open(main, "w").write(r'''
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arena_net.h"
int main(void)
{
    float x[16], y[8], y2[8];
    const void *in[1];
    void *out[1];
    void *arena = NULL;   /* exactly the size, 64-byte aligned as the header asks: ASan sees overruns */
    int i;
    if (posix_memalign(&arena, 64, arena_net_ARENA_SIZE)) return 3;
    for (i = 0; i < 16; i++) x[i] = (float)i / 8.0f - 1.0f;
    in[0] = x;
    out[0] = y;
    memset(y, 0xFF, sizeof y);
    if (arena_net_run_with_arena(in, out, arena)) return 1;
    out[0] = y2;
    if (arena_net_run(in, out)) return 1;
    if (memcmp(y, y2, sizeof y)) return 2;
    for (i = 0; i < 8; i++) printf("%.9g\n", (double)y[i]);
    free(arena);
    return 0;
}
''')
    exe = os.path.join(c.tmp, "arena")
    r = run(["gcc"] + CFLAGS + ["-I", c.tmp, "-o", exe, main, os.path.join(c.tmp, "arena_net.c"), "-lm"])
    assert r.returncode == 0, r.stderr
    r = run([exe])
    assert r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr[-500:])
    got = np.array([float(v) for v in r.stdout.split()], dtype=np.float32)
    x = (np.arange(16, dtype=np.float32) / 8 - 1).reshape(2, 8)
    assert np.allclose(got, reference(A, x).ravel(), rtol=1e-4, atol=1e-5)


def t_caller_arena_only(c):
    """--caller-arena: no NAME_run, no mutable static state (nm: no data or bss symbol), the typed entry
    takes the arena; two arenas in turn give the same result; --weights-section puts the constants in
    that section; the CUDA target refuses these flags"""
    m = os.path.join(c.tmp, "a.onnx")
    A = mlp(m, 5)
    src = os.path.join(c.tmp, "nostate.c")
    r = c.onnx2c(m, "-o", src, "--caller-arena", "--weights-section", ".model_w")
    assert r.returncode == 0, r.stderr
    text = open(src).read()
    assert "nostate_run(" not in text and "o2c_arena.b" not in text
    hdr = open(os.path.join(c.tmp, "nostate.h")).read()
    assert "int nostate_run(" not in hdr and "void *o2c_arena)" in hdr, hdr
    obj = os.path.join(c.tmp, "nostate.o")
    r = run(["gcc"] + CFLAGS + ["-c", src, "-o", obj])
    assert r.returncode == 0, r.stderr
    syms = run(["nm", obj]).stdout
    mutable = [l for l in syms.splitlines() if len(l.split()) == 3 and l.split()[1] in "bBdDcC"]
    assert not mutable, mutable
    assert ".model_w" in run(["objdump", "-h", obj]).stdout
    main = os.path.join(c.tmp, "nostate_main.c")
    open(main, "w").write(r'''
#include <stdio.h>
#include <string.h>
#include "nostate.h"
static unsigned char a1[nostate_ARENA_SIZE + 1] __attribute__((aligned(64)));
static unsigned char a2[nostate_ARENA_SIZE + 1] __attribute__((aligned(64)));
int main(void)
{
    float x[2][8], y[2][4], y2[2][4];
    int i;
    for (i = 0; i < 16; i++) x[i / 8][i % 8] = (float)i / 8.0f - 1.0f;
    /* an ordinary array: ISO C before C23 (gcc -pedantic) wants the cast to const */
    if (nostate_predict((const float (*)[8])x, y, a1)) return 1;
    memset(a2, 0xAB, sizeof a2);
    if (nostate_predict((const float (*)[8])x, y2, a2)) return 1;
    if (memcmp(y, y2, sizeof y)) return 2;
    for (i = 0; i < 8; i++) printf("%.9g\n", (double)y[i / 4][i % 4]);
    return 0;
}
''')
    exe = os.path.join(c.tmp, "nostate")
    r = run(["gcc"] + CFLAGS + ["-I", c.tmp, "-o", exe, main, src, "-lm"])
    assert r.returncode == 0, r.stderr
    r = run([exe])
    assert r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr[-500:])
    got = np.array([float(v) for v in r.stdout.split()], dtype=np.float32)
    x = (np.arange(16, dtype=np.float32) / 8 - 1).reshape(2, 8)
    assert np.allclose(got, reference(A, x).ravel(), rtol=1e-4, atol=1e-5)
    r = c.onnx2c(m, "-o", os.path.join(c.tmp, "nostate.cu"), "--caller-arena")
    assert r.returncode == 1 and "CUDA" in r.stderr and not os.path.exists(os.path.join(c.tmp, "nostate.cu")), r.stderr


def t_info_flags(c):
    r = c.onnx2c("--help")
    assert r.returncode == 0 and "usage" in r.stdout
    r = c.onnx2c("--version")
    assert r.returncode == 0 and r.stdout.startswith("onnx2c ")
    r = c.onnx2c("--list-ops")
    ops = set(r.stdout.split())
    for op in ("Conv", "Gemm", "MatMul", "Relu", "Softmax", "Resize", "Gather", "Asinh", "Where", "Cast"):
        assert op in ops, "%s missing from --list-ops" % op
    m = os.path.join(c.tmp, "a.onnx")
    mlp(m, 1)
    r = c.onnx2c(m, "-o", os.path.join(c.tmp, "v.c"), "-v")
    assert r.returncode == 0 and "arena" in r.stderr and "MatMul" in r.stderr, r.stderr


def t_readme_ops(c):
    """the README's op list is --list-ops (the op table), no more, no less"""
    r = c.onnx2c("--list-ops")
    table = r.stdout.split()
    readme = open(os.path.join(ROOT, "README.md")).read()
    sec = readme.split("## Supported ops", 1)[1].split("\n## ", 1)[0]
    listed = [w.strip("`") for w in sec.split() if w.startswith("`") and w.endswith("`") and len(w) > 2]
    assert sorted(set(listed) & set(table)) == sorted(table), "missing from README: %s" % sorted(set(table) - set(listed))
    count = "%d ops" % len(table)
    assert count in sec, "the README should say '%s'" % count


def t_name_default_and_ident(c):
    m = os.path.join(c.tmp, "a.onnx")
    mlp(m, 1)
    r = c.onnx2c(m, "-o", os.path.join(c.tmp, "my-net.v2.c"))
    assert r.returncode == 0, r.stderr
    hdr = open(os.path.join(c.tmp, "my-net.v2.h")).read()
    assert "int my_net_v2_run(" in hdr, hdr[:400]
    r = c.onnx2c(m, "-o", os.path.join(c.tmp, "q.c"), "--name", "9bad name")
    assert r.returncode == 1 and "--name" in r.stderr
    assert not os.path.exists(os.path.join(c.tmp, "q.c"))


def t_hostile_names(c):
    """Model-given text (node, tensor and graph names, producer) with comment
    ends, quotes, backslashes, line breaks and trigraphs: the generated code
    still compiles warning-free and the header's NAME macros hold the exact
    names."""
    names = {"x": 'in*/"put\\??=', "y": "out\nput*/"}
    nodes = [h.make_node("Relu", [names["x"]], ["mid*/ /*"], name="evil*/name\nline"),
             h.make_node("Neg", ["mid*/ /*"], [names["y"]], name='q"uote')]
    g = h.make_graph(nodes, "graph*/name", [h.make_tensor_value_info(names["x"], TP.FLOAT, [3])],
                     [h.make_tensor_value_info(names["y"], TP.FLOAT, [3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="p*/")
    m.ir_version = 8
    path = os.path.join(c.tmp, "evil.onnx")
    onnx.save(m, path)
    r = c.onnx2c(path, "-o", os.path.join(c.tmp, "evil.c"))
    assert r.returncode == 0, r.stderr
    main_c = os.path.join(c.tmp, "evil_main.c")
    open(main_c, "w").write("""#include <stdio.h>
#include "evil.h"
int main(void)
{
    const float x[3] = {-1.0f, 2.0f, -3.0f};
    float y[3];
    const void *in[1] = {x};
    void *out[1] = {y};
    if (evil_run(in, out)) return 2;
    fputs(evil_INPUT0_NAME, stdout); fputc(0, stdout);
    fputs(evil_OUTPUT0_NAME, stdout); fputc(0, stdout);
    printf("%g %g %g", y[0], y[1], y[2]);
    return 0;
}
""")
    exe = os.path.join(c.tmp, "evil")
    r = run(["gcc"] + CFLAGS + ["-I", c.tmp, "-o", exe, main_c, os.path.join(c.tmp, "evil.c"), "-lm"])
    assert r.returncode == 0, r.stderr[:2000]
    r = subprocess.run([exe], capture_output=True)
    assert r.returncode == 0, r.stderr
    parts = r.stdout.split(b"\0")
    assert parts[0].decode() == names["x"] and parts[1].decode() == names["y"], parts
    assert parts[2].decode().split() == ["-0", "-2", "-0"], parts[2]


def t_io_names_like_the_entrys_own(c):
    """Inputs and outputs named like the typed entry's own identifiers (in,
    out, o2c_in, m_run, a keyword): the typed entry still compiles and
    computes."""
    ins, outs = ["in", "o2c_in", "m_run"], ["out", "int"]
    nodes = [h.make_node("Add", ["in", "o2c_in"], ["out"]), h.make_node("Mul", ["out", "m_run"], ["int"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, TP.FLOAT, [2]) for n in ins],
                     [h.make_tensor_value_info(n, TP.FLOAT, [2]) for n in outs])
    mo = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    mo.ir_version = 8
    path = os.path.join(c.tmp, "m.onnx")
    onnx.save(mo, path)
    r = c.onnx2c(path, "-o", os.path.join(c.tmp, "m.c"))
    assert r.returncode == 0, r.stderr
    main_c = os.path.join(c.tmp, "m_main.c")
    open(main_c, "w").write("""#include <stdio.h>
#include "m.h"
int main(void)
{
    const float a[2] = {1, 2}, b[2] = {3, 4}, k[2] = {10, 100};
    float s[2], p[2];
    if (m_predict(a, b, k, s, p)) return 2;
    printf("%g %g %g %g", s[0], s[1], p[0], p[1]);
    return 0;
}
""")
    exe = os.path.join(c.tmp, "m_io")
    r = run(["gcc"] + CFLAGS + ["-I", c.tmp, "-o", exe, main_c, os.path.join(c.tmp, "m.c"), "-lm"])
    assert r.returncode == 0, r.stderr[:2000]
    r = run([exe])
    assert r.returncode == 0 and r.stdout.split() == ["4", "6", "40", "600"], (r.stdout, r.stderr)


def t_optimization_flags(c):
    """-O0/-O1/-O2, --disable-pass, --list-passes; -v names what each pass changed."""
    r = c.onnx2c("--list-passes")
    assert r.returncode == 0 and "fold" in r.stdout and "dce" in r.stdout, r.stdout
    m = os.path.join(c.tmp, "a.onnx")
    mlp(m, 1)
    for flags in (["-O0"], ["-O1"], ["-O2"], ["--disable-pass", "dce"]):
        r = c.onnx2c(m, "-o", os.path.join(c.tmp, "o.c"), "-v", *flags)
        assert r.returncode == 0, (flags, r.stderr)
        assert "passes at -O" in r.stderr, r.stderr
    r = c.onnx2c(m, "-o", os.path.join(c.tmp, "bad.c"), "--disable-pass", "no_such_pass")
    assert r.returncode == 1 and "no_such_pass" in r.stderr and "--list-passes" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(c.tmp, "bad.c"))
    r = c.onnx2c(m, "-o", os.path.join(c.tmp, 'q"uote.c'))
    assert r.returncode == 1 and "quotes" in r.stderr, r.stderr


def t_views_of_constants(c):
    """At -O0 nothing is folded beyond small shape values: a Reshape of a
    large constant is a view of it, and the view's bytes must be emitted."""
    w = nh.from_array(np.arange(2048, dtype=np.float32).reshape(64, 32) / 1000, "w")
    shp = nh.from_array(np.array([32, 64], dtype=np.int64), "shp")
    nodes = [h.make_node("Reshape", ["w", "shp"], ["wr"]), h.make_node("MatMul", ["x", "wr"], ["y"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [1, 32])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [1, 64])], [w, shp])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    path = os.path.join(c.tmp, "view.onnx")
    onnx.save(m, path)
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(1, 32)
    want = x @ (np.arange(2048, dtype=np.float32).reshape(32, 64) / 1000)
    for level in ("-O0", "-O2"):
        r = c.onnx2c(path, "-o", os.path.join(c.tmp, "view.c"), level)
        assert r.returncode == 0, r.stderr
        main_c = os.path.join(c.tmp, "view_main.c")
        open(main_c, "w").write("""#include <stdio.h>
#include "view.h"
int main(void)
{
    float x[32], y[64];
    int i;
    const void *in[1];
    void *out[1];
    in[0] = x; out[0] = y;
    for (i = 0; i < 32; i++) x[i] = -1.0f + 2.0f * (float)i / 31.0f;
    if (view_run(in, out)) return 2;
    for (i = 0; i < 64; i++) printf("%.9g\\n", y[i]);
    return 0;
}
""")
        exe = os.path.join(c.tmp, "view")
        r = run(["gcc"] + CFLAGS + ["-I", c.tmp, "-o", exe, main_c, os.path.join(c.tmp, "view.c"), "-lm"])
        assert r.returncode == 0, (level, r.stderr[:2000])
        r = run([exe])
        got = np.array([float(v) for v in r.stdout.split()], dtype=np.float32)
        assert np.allclose(got, want.ravel(), rtol=1e-5, atol=1e-5), (level, got[:4], want.ravel()[:4])


def t_fold_budget(c):
    """Constant folding is bounded by the model's own size: what folding
    adds in all stays below the model's bytes plus 1 MiB (engine:
    fold_allowed). A 20 KB model of 512 Tiles of one-value constants, each
    fold adding 4 KB (within the fold pass's 4096-byte rule), would fold
    into 2 MB of constants; beyond the budget the Tiles run at run time,
    and the results are the same."""
    K, n = 512, 1024
    inits = [nh.from_array(np.array([0.001 * (k + 1)], np.float32), "v%d" % k) for k in range(K)]
    inits.append(nh.from_array(np.array([n], np.int64), "rep"))
    nodes, acc = [], "x"
    for k in range(K):
        nodes.append(h.make_node("Tile", ["v%d" % k, "rep"], ["t%d" % k]))
        nodes.append(h.make_node("Add", [acc, "t%d" % k], ["a%d" % k]))
        acc = "a%d" % k
    nodes.append(h.make_node("Identity", [acc], ["y"]))
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [n])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [n])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    path = os.path.join(c.tmp, "budget.onnx")
    onnx.save(m, path)
    model_bytes = os.path.getsize(path)
    out = os.path.join(c.tmp, "budget.c")
    r = c.onnx2c(path, "-o", out, "-O1", "--report=" + os.path.join(c.tmp, "budget.txt"))
    assert r.returncode == 0, r.stderr
    rep = open(os.path.join(c.tmp, "budget.txt")).read()
    cbytes = int(re.search(r"^total: .* constants (\d+) bytes", rep, re.M).group(1))
    tiles = rep.count("o2c_tile")
    assert cbytes <= model_bytes + (1 << 20) + 8192, (cbytes, model_bytes)   # the budget, and one Tile more
    assert 0 < tiles < K, tiles   # folded while the budget lasted, the rest at run time
    main_c = os.path.join(c.tmp, "budget_main.c")
    open(main_c, "w").write("""#include <stdio.h>
#include "budget.h"
int main(void)
{
    static float x[1024], y[1024];
    int i;
    const void *in[1];
    void *out[1];
    in[0] = x; out[0] = y;
    for (i = 0; i < 1024; i++) x[i] = (float)i / 1024.0f;
    if (budget_run(in, out)) return 2;
    for (i = 0; i < 1024; i++) printf("%.9g\\n", y[i]);
    return 0;
}
""")
    exe = os.path.join(c.tmp, "budget")
    r = run(["gcc"] + CFLAGS + ["-I", c.tmp, "-o", exe, main_c, out, "-lm"])
    assert r.returncode == 0, r.stderr[:2000]
    r = run([exe])
    got = np.array([float(v) for v in r.stdout.split()], dtype=np.float32)
    want = np.arange(n, dtype=np.float32) / n
    for k in range(K):
        want = want + np.float32(0.001 * (k + 1))
    assert np.allclose(got, want, rtol=1e-5, atol=1e-5), (got[:4], want[:4])


def t_firmware_example(c):
    """examples/firmware/main.c builds warning-free (gcc and clang, C99
    pedantic) against a compiled example and runs clean under ASan/UBSan."""
    r = c.onnx2c(os.path.join(ROOT, "examples", "small_convnet", "model.onnx"), "-o",
                 os.path.join(c.tmp, "small_convnet.c"))
    assert r.returncode == 0, r.stderr
    srcs = [os.path.join(ROOT, "examples", "firmware", "main.c"), os.path.join(c.tmp, "small_convnet.c")]
    r = run(["clang", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-I", c.tmp, "-c", srcs[0], "-o",
             os.path.join(c.tmp, "fw_clang.o")])
    assert r.returncode == 0, r.stderr
    exe = os.path.join(c.tmp, "fw")
    r = run(["gcc"] + CFLAGS + ["-I", c.tmp, "-o", exe] + srcs + ["-lm"])
    assert r.returncode == 0, r.stderr
    r = run([exe])
    assert r.returncode == 0, "firmware example exit %d: %s" % (r.returncode, r.stderr[-400:])


class Skip(Exception):
    pass


def t_cuda_links_from_c(c):
    """The .cu built by nvcc links into a plain C program (C linkage), and
    without a usable GPU the run fails cleanly with the CUDA error message."""
    import shutil
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if not nvcc:
        raise Skip("nvcc is not installed")
    cuda = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    r = c.onnx2c(os.path.join(ROOT, "examples", "small_convnet", "model.onnx"), "-o", os.path.join(c.tmp, "net.cu"))
    assert r.returncode == 0, r.stderr
    r = run([nvcc, "-c", os.path.join(c.tmp, "net.cu"), "-o", os.path.join(c.tmp, "net.o")])
    assert r.returncode == 0, r.stderr[-500:]
    main = os.path.join(c.tmp, "main.c")
    open(main, "w").write(r'''
#include <stdio.h>
#include "net.h"
int main(void)
{
    static float x[1][3][16][16], y[1][5][1][1];
    int rc = net_predict(x, y);
    if (rc) printf("error: %s\n", net_cuda_error());
    net_cuda_release();
    return rc;
}
''')
    exe = os.path.join(c.tmp, "prog")
    r = run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(cuda, "include"), "-I", c.tmp,
             "-o", exe, main, os.path.join(c.tmp, "net.o"), "-L", os.path.join(cuda, "lib64"), "-lcudart",
             "-lstdc++", "-lm", "-Wl,-rpath," + os.path.join(cuda, "lib64")])
    assert r.returncode == 0, r.stderr[-800:]
    r = run([exe], timeout=120)
    # with a GPU: 0; without one: 1 and the CUDA runtime's message (never a crash)
    assert r.returncode in (0, 1), "exit %d: %s" % (r.returncode, r.stderr[-300:])
    if r.returncode == 1:
        assert r.stdout.startswith("error: ") and len(r.stdout.strip()) > 8, r.stdout


TESTS = [t_cuda_links_from_c, t_firmware_example, t_deterministic, t_two_models_one_program, t_constant_words, t_caller_arena, t_caller_arena_only, t_info_flags,
         t_name_default_and_ident, t_hostile_names, t_io_names_like_the_entrys_own, t_optimization_flags, t_views_of_constants, t_fold_budget,
         t_readme_ops]


def t_targets(c):
    """--target: each C target builds and computes the same outputs; the ISA
    targets stop the C compile with #error where the ISA is missing;
    cortex-m keeps the reference kernels; cuda needs .cu, the C targets .c."""
    m = os.path.join(c.tmp, "a.onnx")
    model = mlp(m, 5)
    x = np.random.RandomState(1).randn(2, 8).astype(np.float32)
    want = reference(model, x)
    host = {"c": [], "avx2": ["-mavx2", "-mfma"], "avx512": ["-mavx512f", "-mfma"], "cortex-m": []}
    cpu = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    for t, flags in host.items():
        src = os.path.join(c.tmp, "t_%s.c" % t.replace("-", "_"))
        r = c.onnx2c(m, "-o", src, "--target", t, "--name", "m")
        assert r.returncode == 0, (t, r.stderr)
        text = open(src).read()
        calls = [l.split("(")[0].strip() for l in text.splitlines() if l.startswith("        o2c_")]
        if t == "cortex-m":
            assert calls and not any("tile" in k or "panel" in k for k in calls), calls
        else:
            assert any("tile" in k for k in calls), (t, calls)
        if flags:
            assert "#error" in text, t
            r = run(["gcc", "-std=c99", "-c", "-o", os.path.join(c.tmp, "x.o"), src, "-mno-avx"])
            assert r.returncode != 0 and "--target " + t in r.stderr, (t, r.stderr[-300:])
        isa = {"avx2": "avx2", "avx512": "avx512f"}.get(t)
        if isa and (" %s " % isa) not in cpu:
            continue   # cannot run it here; the #error check above still ran
        main = os.path.join(c.tmp, "main_%s.c" % t.replace("-", "_"))
        hdr = os.path.basename(src)[:-2] + ".h"
        open(main, "w").write('#include <stdio.h>\n#include "%s"\nint main(void){float x[16],y[8];'
                              'if(fread(x,4,16,stdin)!=16)return 2;if(m_run((const void*[]){x},(void*[]){y}))return 3;'
                              'fwrite(y,4,8,stdout);return 0;}\n' % hdr)
        exe = os.path.join(c.tmp, "p_%s" % t.replace("-", "_"))
        r = run(["gcc"] + CFLAGS + flags + ["-I" + c.tmp, "-o", exe, main, src, "-lm"])
        assert r.returncode == 0, (t, r.stderr[-500:])
        p = subprocess.run([exe], input=x.tobytes(), capture_output=True)
        assert p.returncode == 0, (t, p.stderr[-300:])
        got = np.frombuffer(p.stdout, np.float32).reshape(2, 4)
        assert np.allclose(got, want, rtol=1e-4, atol=1e-5), (t, got, want)
    for args, msg in ((["-o", os.path.join(c.tmp, "x.cu"), "--target", "avx2"], "is a C target"),
                      (["-o", os.path.join(c.tmp, "x.c"), "--target", "cuda"], "use -o OUT.cu"),
                      (["-o", os.path.join(c.tmp, "x.c"), "--target", "sse9"], "not one of")):
        r = c.onnx2c(m, *args)
        assert r.returncode == 1 and msg in r.stderr, (args, r.stderr)
        assert not os.path.exists(args[1]), args
    r = c.onnx2c(m, "-o", os.path.join(c.tmp, "ok.cu"), "--target", "cuda")
    assert r.returncode == 0, r.stderr


TESTS.append(t_targets)


def t_provenance(c):
    """the banner and the header carry onnx2c's version, the flags (paths as their file names) and the
    model's SHA-256 (as hashlib computes it); the files do not depend on the folders"""
    import hashlib
    m = os.path.join(c.tmp, "a.onnx")
    mlp(m, 7)
    for sub in ("one", "two/deeper"):
        os.makedirs(os.path.join(c.tmp, sub))
        r = c.onnx2c(m, "-o", os.path.join(c.tmp, sub, "prov.c"), "--report=" + os.path.join(c.tmp, sub, "r.txt"))
        assert r.returncode == 0, r.stderr
    sha = hashlib.sha256(open(m, "rb").read()).hexdigest()
    for f in ("prov.c", "prov.h"):
        a, b = (open(os.path.join(c.tmp, sub, f)).read() for sub in ("one", "two/deeper"))
        assert a == b, f
        assert ("onnx2c %s from a.onnx (SHA-256 %s)" % (run([c.compiler, "--version"]).stdout.split()[1], sha)) in a, a[:300]
        assert " * with the flags: -o prov.c --report=r.txt. Do not edit." in a, a[:300]
    hdr = open(os.path.join(c.tmp, "one", "prov.h")).read()
    assert '#define prov_MODEL_SHA256 "%s"' % sha in hdr
    assert '#define prov_ONNX2C_FLAGS "-o prov.c --report=r.txt"' in hdr
    assert re.search(r'#define prov_ONNX2C_VERSION "\d+\.\d+\.\d+"', hdr)


def t_no_overwrite(c):
    """-o, --emit-onnx, --report or --dot naming the input model (by any path) is refused: exit 1,
    the model unchanged, nothing written"""
    m = os.path.join(c.tmp, "model.onnx")
    mlp(m, 8)
    before = open(m, "rb").read()
    os.makedirs(os.path.join(c.tmp, "sub"))
    alias = os.path.join(c.tmp, "sub", "..", "model.onnx")
    for flags in (["--emit-onnx", alias], ["--report=" + m], ["--dot", alias]):
        r = c.onnx2c(m, "-o", os.path.join(c.tmp, "out.c"), *flags)
        assert r.returncode == 1 and "is the input model" in r.stderr, (flags, r.stderr)
        assert open(m, "rb").read() == before
        assert not os.path.exists(os.path.join(c.tmp, "out.c"))


def t_run_arguments(c):
    """NAME_ERR_ARGUMENT: a NULL inputs/outputs array, a NULL output, a NULL or misaligned arena, an
    output overlapping an input or another output; a correct run still returns 0; const inputs"""
    m = os.path.join(c.tmp, "a.onnx")
    mlp(m, 9)
    r = c.onnx2c(m, "-o", os.path.join(c.tmp, "args_net.c"))
    assert r.returncode == 0, r.stderr
    main = os.path.join(c.tmp, "args.c")
    open(main, "w").write(r"""
#include <stdio.h>
#include "args_net.h"
static unsigned char arena[args_net_ARENA_SIZE + 64] __attribute__((aligned(64)));
static float x[2][8], y[2][4];
static float both[64];
int main(void)
{
    static const float cx[2][8] = {{1, 2, 3, 4, 5, 6, 7, 8}};   /* a const input, no cast */
    const void *in[1] = {x};
    void *out[1] = {y};
    const void *in_alias[1] = {both};
    void *out_alias[1] = {both + 12};   /* the output's 32 bytes inside the input's 64 */
    void *out_null[1] = {0};
    int e = args_net_ERR_ARGUMENT;
    if (args_net_run_with_arena(in, out, arena) != 0) return 1;
    if (args_net_run(in, out) != 0) return 2;
    if (args_net_predict(cx, y) != 0) return 3;
    if (args_net_run_with_arena(in, out, 0) != e) return 4;
    if (args_net_run_with_arena(in, out, arena + 4) != e) return 5;
    if (args_net_run(0, out) != e || args_net_run(in, 0) != e) return 6;
    if (args_net_run(in, out_null) != e) return 7;
    if (args_net_run(in_alias, out_alias) != e) return 8;
    out_alias[0] = both + 16;   /* just past the input: fine */
    if (args_net_run(in_alias, out_alias) != 0) return 9;
    printf("ok %d\n", e);
    return 0;
}
""")
    exe = os.path.join(c.tmp, "args")
    r = run(["gcc"] + CFLAGS + ["-I", c.tmp, "-o", exe, main, os.path.join(c.tmp, "args_net.c"), "-lm"])
    assert r.returncode == 0, r.stderr
    r = run([exe])
    assert r.returncode == 0 and r.stdout.strip() == "ok 5", (r.returncode, r.stdout, r.stderr[-400:])




def t_run_arguments_many(c):
    """The argument check of a model with many outputs is one loop over a table of the arguments' bytes
    (written out pair by pair it was quadratic: a Split into 1001 outputs made 100 MB of C): the run
    computes, and a NULL output, an output overlapping the input or another output return
    NAME_ERR_ARGUMENT, outputs side by side do not"""
    n = 40
    m = os.path.join(c.tmp, "many.onnx")
    outs = ["y%d" % i for i in range(n)]
    g = h.make_graph([h.make_node("Split", ["x"], outs, axis=0), ], "many",
                     [h.make_tensor_value_info("x", TP.FLOAT, [n, 2])],
                     [h.make_tensor_value_info(o, TP.FLOAT, [1, 2]) for o in outs])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, m)
    src = os.path.join(c.tmp, "many_net.c")
    r = c.onnx2c(m, "-o", src)
    assert r.returncode == 0, r.stderr
    text = open(src).read()
    assert "o2c_arg_bytes[%d]" % (n + 1) in text and text.count("many_net_ERR_ARGUMENT;") < 8, text[:2000]
    main = os.path.join(c.tmp, "many.c")
    open(main, "w").write(r"""
#include <stdio.h>
#include "many_net.h"
#define N %d
static float x[N][2], y[N][2], both[4 * N];
int main(void)
{
    const void *in[1] = {x};
    void *out[N];
    int i, e = many_net_ERR_ARGUMENT;
    for (i = 0; i < N; i++) x[i][0] = (float)i, x[i][1] = -(float)i, out[i] = y[i];
    if (many_net_run(in, out) != 0) return 1;
    for (i = 0; i < N; i++) if (y[i][0] != (float)i || y[i][1] != -(float)i) return 2;
    out[N - 1] = 0;
    if (many_net_run(in, out) != e) return 3;
    out[N - 1] = y[3] + 1;   /* overlaps output 3 */
    if (many_net_run(in, out) != e) return 4;
    out[N - 1] = x[7];   /* overlaps the input */
    if (many_net_run(in, out) != e) return 5;
    in[0] = both;   /* outputs side by side past the input's bytes: fine */
    for (i = 0; i < N; i++) out[i] = both + 2 * N + 2 * i;
    if (many_net_run(in, out) != 0) return 6;
    out[0] = both + 2 * N - 1;   /* its first float the input's last */
    if (many_net_run(in, out) != e) return 7;
    printf("ok\n");
    return 0;
}
""" % n)
    exe = os.path.join(c.tmp, "many")
    r = run(["gcc"] + CFLAGS + ["-I", c.tmp, "-o", exe, main, src, "-lm"])
    assert r.returncode == 0, r.stderr
    r = run([exe])
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stdout, r.stderr[-400:])
    big = os.path.join(c.tmp, "split1001.onnx")   # the fuzz finding's size: linear now
    outs = ["y%d" % i for i in range(1001)]
    g = h.make_graph([h.make_node("Neg", ["x"], [o]) for o in outs], "big", [h.make_tensor_value_info("x", TP.FLOAT, [1])],
                     [h.make_tensor_value_info(o, TP.FLOAT, [1]) for o in outs])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, big)
    r = c.onnx2c(big, "-o", os.path.join(c.tmp, "big.c"))
    assert r.returncode == 0, r.stderr
    size = os.path.getsize(os.path.join(c.tmp, "big.c"))
    assert size < 2000000, size


TESTS += [t_provenance, t_no_overwrite, t_run_arguments, t_run_arguments_many]


def t_max_arena(c):
    """--max-arena: over the budget the reference kernels are taken where their plan is smaller, and the
    model still computes its expected outputs (the --emit-test-main harness); a budget no plan meets
    fails (exit 1, nothing written) naming the peak's call and the tensors live there; the flag's syntax"""
    for ex, budget, want in (("small_convnet", "5000", 4096), ("self_attention", "1k", 768),
                             ("quantized_convnet", "4100", 4096)):
        test = os.path.join(ROOT, "examples", ex)
        d = os.path.join(c.tmp, ex)
        os.makedirs(d)
        r = c.onnx2c(os.path.join(test, "model.onnx"), "-o", os.path.join(d, "m.c"), "--max-arena", budget,
                     "--emit-test-main", os.path.join(d, "t.c"))
        assert r.returncode == 0, (ex, r.stderr)
        size = int(re.search(r"#define m_ARENA_SIZE (\d+)", open(os.path.join(d, "m.h")).read()).group(1))
        assert size == want, (ex, size)
        r = run(["gcc"] + CFLAGS + ["-o", os.path.join(d, "t"), os.path.join(d, "t.c"), os.path.join(d, "m.c"), "-lm"])
        assert r.returncode == 0, r.stderr
        r = run([os.path.join(d, "t")], cwd=os.path.join(test, "test_data_set_0"))
        assert r.returncode == 0 and "PASS" in r.stdout, (ex, r.stdout, r.stderr[-300:])
    for ex in ("small_convnet", "two_heads"):   # the reference kernels smaller, and not
        out = os.path.join(c.tmp, "no_" + ex + ".c")
        r = c.onnx2c(os.path.join(ROOT, "examples", ex, "model.onnx"), "-o", out, "--max-arena", "10")
        assert r.returncode == 1 and "--max-arena 10: the arena needs" in r.stderr and "bytes are live: '" in r.stderr, \
            (ex, r.stderr)
        assert not os.path.exists(out)
    for bad in ("0", "-5", "12x", "k", "99999999999999999M"):
        r = c.onnx2c(os.path.join(ROOT, "examples", "two_heads", "model.onnx"), "-o", os.path.join(c.tmp, "b.c"),
                     "--max-arena", bad)
        assert r.returncode == 1 and "--max-arena" in r.stderr, (bad, r.stderr)


TESTS.append(t_max_arena)


def t_firmware_flags(c):
    """--index-bits: 32 on the host computes the same as 64 (and writes O2C_INDEX_BITS 32), refused where a
    size passes 31 bits; --target cortex-m takes 32 by default; --tune --target cortex-m and
    --emit-test-main for CUDA refused with their reasons; bad values refused"""
    m = os.path.join(c.tmp, "a.onnx")
    A = mlp(m, 11)
    outs = []
    for flags in ([], ["--index-bits", "32"], ["--index-bits", "64"], ["--target", "cortex-m"]):
        src = os.path.join(c.tmp, "ib.c")
        r = c.onnx2c(m, "-o", src, *flags)
        assert r.returncode == 0, (flags, r.stderr)
        text = open(src).read()
        assert ("#define O2C_INDEX_BITS 32" in text) == (flags in (["--index-bits", "32"], ["--target", "cortex-m"])), flags
        main = os.path.join(c.tmp, "ib_main.c")
        open(main, "w").write('#include <stdio.h>\n#include "ib.h"\nint main(void)\n{\n    static const float x[2][8] = '
                              '{{1, 2, 3, 4, 5, 6, 7, 8}, {-1, 0.5f, 2, 0, 1, 1, 3, -2}};\n    float y[2][4];\n    int i;\n'
                              '    if (ib_predict(x, y)) return 1;\n    for (i = 0; i < 8; i++) printf("%.9g\\n", (double)y[i / 4][i % 4]);\n'
                              '    return 0;\n}\n')
        exe = os.path.join(c.tmp, "ib")
        r = run(["gcc"] + CFLAGS + ["-I", c.tmp, "-o", exe, main, src, "-lm"])
        assert r.returncode == 0, r.stderr
        r = run([exe])
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1] == outs[2], outs
    from onnx import TensorProto as T
    n = 600000000
    g = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [h.make_tensor_value_info("x", T.FLOAT, [1, n])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, n])])
    big = os.path.join(c.tmp, "big.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), big)
    r = c.onnx2c(big, "-o", os.path.join(c.tmp, "big.c"), "--index-bits", "32")
    assert r.returncode == 1 and "past 32-bit index arithmetic" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(c.tmp, "big.c"))
    r = c.onnx2c(big, "-o", os.path.join(c.tmp, "big.c"))   # the host: 64-bit, compiles
    assert r.returncode == 0 and "#define O2C_INDEX_BITS 32" not in open(os.path.join(c.tmp, "big.c")).read()
    for flags, text in ((["--target", "cortex-m", "--tune", "--tune-file", os.path.join(c.tmp, "t.txt")], "nothing to time"),
                        (["--index-bits", "16"], "expected 32 or 64"),
                        (["--emit-test-main", os.path.join(c.tmp, "tm.c")], "needs -o OUT.c")):
        out = os.path.join(c.tmp, "r.cu" if "--emit-test-main" in flags else "r.c")
        r = c.onnx2c(m, "-o", out, *flags)
        assert r.returncode == 1 and text in r.stderr, (flags, r.stderr)


TESTS.append(t_firmware_flags)


def t_bind(c):
    """--bind: a refusal names the shape-deciding inputs as `--bind NAME=` (and
    only those), leaves no file; bound, the code computes and returns
    NAME_ERR_BOUND_INPUT for another value; bad --bind files are refused."""
    m = os.path.join(c.tmp, "rs.onnx")
    g = h.make_graph([h.make_node("Relu", ["x"], ["r"]), h.make_node("Reshape", ["r", "shape"], ["y"])], "rs",
                     [h.make_tensor_value_info("x", TP.FLOAT, [2, 3, 4]), h.make_tensor_value_info("shape", TP.INT64, [2])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)])
    mm = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    mm.ir_version = 8
    onnx.save(mm, m)
    out = os.path.join(c.tmp, "rs.c")
    r = c.onnx2c(m, "-o", out)
    assert r.returncode == 1 and "--bind shape=" in r.stderr and "--bind x=" not in r.stderr, r.stderr
    assert not os.path.exists(out) and not os.path.exists(os.path.join(c.tmp, "rs.h"))
    pb = os.path.join(c.tmp, "shape.pb")
    open(pb, "wb").write(nh.from_array(np.array([4, 6], dtype=np.int64), "shape").SerializeToString())
    bad = os.path.join(c.tmp, "bad.pb")
    open(bad, "wb").write(nh.from_array(np.array([4, 6], dtype=np.int32), "shape").SerializeToString())
    junk = os.path.join(c.tmp, "junk.pb")
    open(junk, "wb").write(b"\xff\xff\xff\xff not a tensor")
    for args, want in (([pb.replace("shape.pb", "nope.pb")], "cannot open"), ([bad], "int32"), ([junk], "TensorProto")):
        r = c.onnx2c(m, "-o", out, "--bind", "shape=" + args[0])
        assert r.returncode == 1 and want in r.stderr and not os.path.exists(out), (want, r.stderr)
    r = c.onnx2c(m, "-o", out, "--bind", "nosuch=" + pb)
    assert r.returncode == 1 and "no input named 'nosuch'" in r.stderr, r.stderr
    r = c.onnx2c(m, "-o", out, "--bind", "shape=" + pb)
    assert r.returncode == 0, r.stderr
    hdr = open(os.path.join(c.tmp, "rs.h")).read()
    assert "#define rs_ERR_BOUND_INPUT 2" in hdr and "#define rs_OUTPUT0_DIMS {4, 6}" in hdr, hdr
    main = os.path.join(c.tmp, "main.c")
    open(main, "w").write(r"""
#include <stdio.h>
#include "rs.h"
int main(void)
{
    float x[24], y[24];
    long long shape[2] = {4, 6};
    const void *in[2];
    void *out[1];
    int i, rc;
    for (i = 0; i < 24; i++) x[i] = (float)(i - 12);
    in[0] = x; in[1] = shape; out[0] = y;
    if (rs_run(in, out) != 0) return 1;
    for (i = 0; i < 24; i++) if (y[i] != (i < 12 ? 0.0f : (float)(i - 12))) return 2;
    shape[0] = 6; shape[1] = 4;
    rc = rs_run(in, out);
    printf("%d\n", rc);
    return rc == rs_ERR_BOUND_INPUT ? 0 : 3;
}
""")
    exe = os.path.join(c.tmp, "bind")
    r = run(["gcc"] + CFLAGS + ["-I", c.tmp, "-o", exe, main, out, "-lm"])
    assert r.returncode == 0, r.stderr
    r = run([exe])
    assert r.returncode == 0, "exit %d: %s" % (r.returncode, r.stdout + r.stderr[-500:])

TESTS.append(t_bind)


def t_special_outputs(c):
    """An output that exists and is not a regular file (a FIFO here; /dev/null
    alike) is written in place, never replaced by the renamed temporary."""
    import stat
    m = os.path.join(c.tmp, "a.onnx")
    mlp(m, 1)
    fifo = os.path.join(c.tmp, "report.fifo")
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)   # a reader, so the writer's open does not block
    try:
        r = c.onnx2c(m, "--report=" + fifo)
        assert r.returncode == 0, r.stderr
        assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO was replaced by a regular file"
        text = os.read(fd, 1 << 16).decode()
        assert "MatMul" in text, "the report did not go through the FIFO: %r" % text[:200]
    finally:
        os.close(fd)
    assert not [f for f in os.listdir(c.tmp) if ".tmp" in f], os.listdir(c.tmp)

TESTS.append(t_special_outputs)


def t_shared_weights(c):
    """A weight shared by ten Gemm nodes (an unrolled recurrence's way) is
    one constant in the file, packed once, and stays so with --fp16: the
    constant bytes are the weight's and the bias' alone; the outputs match
    a numpy computation at -O0 and -O2."""
    rs = np.random.RandomState(21)
    wv = (rs.randn(64, 64) / 8).astype(np.float32)
    bv = (rs.randn(64) / 10).astype(np.float32)
    nodes, prev = [], "x"
    for k in range(10):
        nodes += [h.make_node("Gemm", [prev, "w", "b"], ["g%d" % k], transB=1, name="gemm%d" % k),
                  h.make_node("Tanh", ["g%d" % k], ["t%d" % k])]
        prev = "t%d" % k
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [4, 64])],
                     [h.make_tensor_value_info(prev, TP.FLOAT, [4, 64])], [nh.from_array(wv, "w"), nh.from_array(bv, "b")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    path = os.path.join(c.tmp, "shared.onnx")
    onnx.save(m, path)
    x = np.linspace(-1, 1, 256, dtype=np.float32).reshape(4, 64)
    want = x.astype(np.float64)
    for _ in range(10):
        want = np.tanh(want @ wv.T.astype(np.float64) + bv)
    for flags, nbytes in ((["-O2"], 4 * (64 * 64 + 64)), (["-O0"], 4 * (64 * 64 + 64)), (["--fp16"], 4 * 64 * 64 // 2 + 4 * 64)):
        rep = os.path.join(c.tmp, "r.txt")
        r = c.onnx2c(path, "-o", os.path.join(c.tmp, "shared.c"), "--report=" + rep, *flags)
        assert r.returncode == 0, r.stderr
        got_bytes = int(re.search(r"constants (\d+) bytes", open(rep).read()).group(1))
        assert got_bytes <= nbytes, (flags, got_bytes, nbytes)
        main_c = os.path.join(c.tmp, "shared_main.c")
        open(main_c, "w").write("""#include <stdio.h>
#include "shared.h"
int main(void)
{
    float x[256], y[256];
    int i;
    const void *in[1];
    void *out[1];
    in[0] = x; out[0] = y;
    for (i = 0; i < 256; i++) x[i] = -1.0f + 2.0f * (float)i / 255.0f;
    if (shared_run(in, out)) return 2;
    for (i = 0; i < 256; i++) printf("%.9g\\n", y[i]);
    return 0;
}
""")
        exe = os.path.join(c.tmp, "shared")
        r = run(["gcc"] + CFLAGS + ["-I", c.tmp, "-o", exe, main_c, os.path.join(c.tmp, "shared.c"), "-lm"])
        assert r.returncode == 0, (flags, r.stderr[:2000])
        r = run([exe])
        got = np.array([float(v) for v in r.stdout.split()], dtype=np.float64)
        tol = 2e-3 if "--fp16" in flags else 1e-5
        assert np.allclose(got, want.ravel(), rtol=tol, atol=tol), (flags, got[:4], want.ravel()[:4])


TESTS.append(t_shared_weights)


def t_convtranspose_kernel_is_stride(c):
    """ConvTranspose whose kernel equals its stride (a segmentation head's
    upsampling; 2x2 at stride 2, and 3x2 at strides 3x2) with a bias and a
    fused Relu takes o2c_convt_ks_f32 on the C target: its outputs match a
    numpy computation (every output one tap of each channel), and the call
    is that kernel's."""
    rs = np.random.RandomState(22)
    for (kh, kw), C, M, IH, IW in (((2, 2), 5, 7, 6, 9), ((3, 2), 3, 4, 5, 11)):
        wv = (rs.randn(C, M, kh, kw) / 3).astype(np.float32)
        bv = (rs.randn(M) / 5).astype(np.float32)
        g = h.make_graph([h.make_node("ConvTranspose", ["x", "w", "b"], ["t"], kernel_shape=[kh, kw], strides=[kh, kw]),
                          h.make_node("Relu", ["t"], ["y"])], "g",
                         [h.make_tensor_value_info("x", TP.FLOAT, [2, C, IH, IW])],
                         [h.make_tensor_value_info("y", TP.FLOAT, [2, M, IH * kh, IW * kw])],
                         [nh.from_array(wv, "w"), nh.from_array(bv, "b")])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
        m.ir_version = 8
        path = os.path.join(c.tmp, "ct.onnx")
        onnx.save(m, path)
        n = 2 * C * IH * IW
        x = np.linspace(-2, 2, n, dtype=np.float32).reshape(2, C, IH, IW)
        want = np.zeros((2, M, IH * kh, IW * kw))
        for a in range(kh):
            for b in range(kw):
                want[:, :, a::kh, b::kw] = np.einsum("nchw,cm->nmhw", x.astype(np.float64), wv[:, :, a, b].astype(np.float64))
        want = np.maximum(want + bv[None, :, None, None], 0)
        r = c.onnx2c(path, "-o", os.path.join(c.tmp, "ct.c"))
        assert r.returncode == 0, r.stderr
        assert "o2c_convt_ks_f32(0," in open(os.path.join(c.tmp, "ct.c")).read()
        main_c = os.path.join(c.tmp, "ct_main.c")
        open(main_c, "w").write("""#include <stdio.h>
#include "ct.h"
int main(void)
{
    static float x[%d], y[%d];
    int i;
    const void *in[1];
    void *out[1];
    in[0] = x; out[0] = y;
    for (i = 0; i < %d; i++) x[i] = -2.0f + 4.0f * (float)i / (float)(%d - 1);
    if (ct_run(in, out)) return 2;
    for (i = 0; i < %d; i++) printf("%%.9g\\n", y[i]);
    return 0;
}
""" % (n, want.size, n, n, want.size))
        exe = os.path.join(c.tmp, "ct")
        r = run(["gcc"] + CFLAGS + ["-I", c.tmp, "-o", exe, main_c, os.path.join(c.tmp, "ct.c"), "-lm"])
        assert r.returncode == 0, r.stderr[:2000]
        r = run([exe])
        got = np.array([float(v) for v in r.stdout.split()], dtype=np.float64)
        assert np.allclose(got, want.ravel(), rtol=1e-5, atol=1e-5), (kh, kw, np.abs(got - want.ravel()).max())


TESTS.append(t_convtranspose_kernel_is_stride)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    args = ap.parse_args()
    npass = nfail = nskip = 0
    for t in TESTS:
        with tempfile.TemporaryDirectory(prefix="o2c_cli_") as tmp:
            try:
                t(Ctx(os.path.abspath(args.compiler), tmp))
                npass += 1
                print("ok   %s" % t.__name__)
            except Skip as e:
                nskip += 1
                print("skip %s: %s" % (t.__name__, e))
            except Exception:
                nfail += 1
                print("FAIL %s\n%s" % (t.__name__, traceback.format_exc()))
    print("%d passed, %d failed, %d skipped" % (npass, nfail, nskip))
    sys.exit(1 if nfail else 0)


if __name__ == "__main__":
    main()
