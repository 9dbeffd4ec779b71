#!/usr/bin/env python3
"""Checks that two snapshots of generated files (tools/snapshot.py) differ
only in how the kernel calls' parameters are written, and that every call
passes the same parameters: the change from positional o2c_p initializers
to named ones (docs/HACKING.md, "Named parameters at the call sites").

    python tools/params_equal.py OLD_SNAPSHOT NEW_SNAPSHOT

For every file of OLD: the same file must exist in NEW; a .c/.cu file may
differ only in its parameter declarations (`const o2c_p p = ...;`, or on
CUDA `o2c_p p = {};` and the assignments after it), which must give each
call the same pointers (the same expressions, comments aside), the same
k[] slots and the same f[]/ff[] values. The names in the new declarations
([O2C_CONV_IN] = ..., p.k[O2C_FEW_STR_AT(4, 1) + 2] = ...) are evaluated by
the C compiler (one program including runtime/c/o2c_rt.h and every
runtime/c/params file), not by this script. Any other file must be
byte-identical. Prints the first differences and a summary; exits 1 if
there is one."""
import math, os, re, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OLD_DECL = re.compile(r"^( *)const o2c_p p = (\{\{.*\}\});\n", re.M)
NEW_C = re.compile(r"^( *)const o2c_p p = (\{.*?\});\n", re.M | re.S)
NEW_CU = re.compile(r"^( *)o2c_p p = \{\};\n((?:\1p\.(?:x|y|k|f|ff)\[.*\n)*)", re.M)
COMMENT = re.compile(r"/\*.*?\*/", re.S)


def split_top(s):
    """s split at its top-level commas (parentheses and braces nest)"""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def unbrace(s):
    s = s.strip()
    assert s[0] == "{" and s[-1] == "}", s
    return s[1:-1]


def real(t):
    t = t.strip()
    if t.endswith("f") and not t.endswith("INFINITY"):
        t = t[:-1]
    t = t.replace("NAN", "nan").replace("INFINITY", "inf")
    return float(t)


def parse_old(body):
    """{{x...}, {y...}, {k...}, {f...}, {ff...}} -> dict"""
    parts = split_top(unbrace(body))
    assert len(parts) == 5, body
    x, y, k, f, ff = (split_top(unbrace(p)) for p in parts)
    return {"x": {j: " ".join(e.split()) for j, e in enumerate(x) if e != "0"},
            "y": {j: " ".join(e.split()) for j, e in enumerate(y) if e != "0"},
            "k": {j: ("int", e) for j, e in enumerate(k) if e not in ("0",)},
            "f": {j: real(e) for j, e in enumerate(f) if real(e) != 0 or math.isnan(real(e))},
            "ff": {j: real(e) for j, e in enumerate(ff) if real(e) != 0 or math.isnan(real(e))}}


def parse_new_c(body, exprs):
    """{.x = {...}, .k = {[NAME] = v, v, ...}, ...} -> dict (slot expressions unevaluated)"""
    out = {"x": {}, "y": {}, "k": {}, "f": {}, "ff": {}}
    for field in split_top(unbrace(COMMENT.sub("", body))):
        m = re.match(r"\.(x|y|k|f|ff)\s*=\s*(\{.*\})$", field, re.S)
        assert m, field
        name, items = m.group(1), split_top(unbrace(m.group(2)))
        if name in "xy":
            for j, e in enumerate(items):
                if e != "0":
                    out[name][j] = " ".join(e.split())
            continue
        base, off = None, 0
        for it in items:
            d = re.match(r"\[(.*?)\]\s*=\s*(.*)$", it, re.S)
            if d:
                base, off, v = d.group(1).strip(), 0, d.group(2).strip()
                exprs.add(base)
            else:
                off, v = off + 1, it.strip()
            slot = (base, off)
            if name == "k":
                out["k"][slot] = ("int", v)
                if not re.match(r"^-?\d+$", v):
                    exprs.add(v)
            else:
                out[name][slot] = real(v)
    return out


def parse_new_cu(stmts, exprs):
    out = {"x": {}, "y": {}, "k": {}, "f": {}, "ff": {}}
    for st in re.findall(r"p\.(x|y|k|f|ff)\[([^\]]*)\] = ([^;]*);", COMMENT.sub("", stmts)):
        name, idx, v = st
        v = " ".join(v.split())
        if name in "xy":
            out[name][int(idx)] = v
            continue
        m = re.match(r"^(.*?)(?: \+ (\d+))?$", idx.strip())
        base, off = m.group(1), int(m.group(2) or 0)
        exprs.add(base)
        if name == "k":
            out["k"][(base, off)] = ("int", v)
            if not re.match(r"^-?\d+$", v):
                exprs.add(v)
        else:
            out[name][(base, off)] = real(v)
    return out


def evaluate(exprs):
    """the values of the slot names and value names, by the C compiler"""
    exprs = sorted(exprs)
    params = sorted(f for f in os.listdir(os.path.join(ROOT, "runtime", "c", "params")) if f.endswith(".h"))
    src = '#include <stdio.h>\n#include "o2c_rt.h"\n' + "".join('#include "params/%s"\n' % f for f in params)
    src += "int main(void)\n{\n" + "".join('    printf("%%lld\\n", (long long)(%s));\n' % e for e in exprs) + "    return 0;\n}\n"
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "v.c"), "w") as f:
            f.write(src)
        subprocess.run(["cc", "-std=c99", "-I", os.path.join(ROOT, "runtime", "c"), "-o", os.path.join(d, "v"),
                        os.path.join(d, "v.c"), "-lm"], check=True)
        vals = subprocess.run([os.path.join(d, "v")], capture_output=True, text=True, check=True).stdout.split()
    return dict(zip(exprs, (int(v) for v in vals)))


def resolve(p, vals):
    out = {"x": p["x"], "y": p["y"], "k": {}, "f": {}, "ff": {}}
    for name in ("k", "f", "ff"):
        for slot, v in p[name].items():
            j = slot if isinstance(slot, int) else vals[slot[0]] + slot[1]
            if j in out[name]:
                raise ValueError("slot %s[%d] written twice" % (name, j))
            if name == "k":
                v = int(v[1]) if re.match(r"^-?\d+$", v[1]) else (
                    -2 ** 63 if v[1] == "(-9223372036854775807LL - 1)" else vals[v[1]])
                if v:
                    out[name][j] = v
            elif v != 0 or math.isnan(v):
                out[name][j] = v
    return out


def same(a, b):
    if a.keys() != b.keys():
        return False
    for k in a:
        if k in ("f", "ff"):
            if a[k].keys() != b[k].keys() or any(not (a[k][j] == b[k][j] or (math.isnan(a[k][j]) and math.isnan(b[k][j])))
                                                 for j in a[k]):
                return False
        elif a[k] != b[k]:
            return False
    return True


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    old_root, new_root = sys.argv[1:]
    problems, pairs, exprs, identical, calls = [], [], set(), 0, 0
    for root, dirs, files in os.walk(old_root):
        dirs.sort()
        for fn in sorted(files):
            a = os.path.join(root, fn)
            rel = os.path.relpath(a, old_root)
            b = os.path.join(new_root, rel)
            if not os.path.exists(b):
                problems.append("only in %s: %s" % (old_root, rel))
                continue
            ta, tb = open(a, "rb").read(), open(b, "rb").read()
            if ta == tb:
                identical += 1
                continue
            if not fn.endswith((".c", ".cu")):
                problems.append("differs: %s" % rel)
                continue
            ta, tb = ta.decode(), tb.decode()
            olds = [m.group(2) for m in OLD_DECL.finditer(ta)]
            if fn.endswith(".cu"):
                news = [parse_new_cu(m.group(2), exprs) for m in NEW_CU.finditer(tb)]
                rest_b = NEW_CU.sub(r"\1@PARAMS@\n", tb)
            else:
                news = [parse_new_c(m.group(2), exprs) for m in NEW_C.finditer(tb)]
                rest_b = NEW_C.sub(r"\1@PARAMS@\n", tb)
            rest_a = OLD_DECL.sub(r"\1@PARAMS@\n", ta)
            if rest_a != rest_b:
                la, lb = rest_a.split("\n"), rest_b.split("\n")
                line = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
                problems.append("%s: differs outside the parameters, line %d:\n  - %s\n  + %s" % (
                    rel, line + 1, la[line] if line < len(la) else "", lb[line] if line < len(lb) else ""))
                continue
            if len(olds) != len(news):
                problems.append("%s: %d calls before, %d after" % (rel, len(olds), len(news)))
                continue
            pairs.append((rel, olds, news))
    for root, dirs, files in os.walk(new_root):
        for fn in files:
            rel = os.path.relpath(os.path.join(root, fn), new_root)
            if not os.path.exists(os.path.join(old_root, rel)):
                problems.append("only in %s: %s" % (new_root, rel))
    vals = evaluate(exprs) if exprs else {}
    for rel, olds, news in pairs:
        for i, (o, n) in enumerate(zip(olds, news)):
            calls += 1
            try:
                po, pn = resolve(parse_old(o), vals), resolve(n, vals)
            except (ValueError, KeyError, AssertionError) as e:
                problems.append("%s: call %d: %s" % (rel, i + 1, e))
                continue
            if not same(po, pn):
                problems.append("%s: call %d: other parameters\n  before %s\n  after  %s" % (rel, i + 1, po, pn))
    for p in problems[:30]:
        print(p)
    print("%d files identical, %d files differing only in their %d calls' parameter declarations (the same "
          "values), %d problems" % (identical, len(pairs), calls, len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
