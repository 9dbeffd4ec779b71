#!/usr/bin/env python3
"""Kernel parameters are named (issue 6): every kernel's k[]/f[] slots are
declared once, in an enum of runtime/c/params/FAMILY.h, and both the
lowering (c->k[O2C_CONV_GROUP] = g) and the kernel (p->k[O2C_CONV_GROUP])
use the names. This check fails if a lowering, the compiler or a kernel
indexes a parameter array with a number (k[3], f[0], k[9 + d], k + 20,
O2C_PF(T, p, 1), or the same through a pointer to the whole array) or
appends parameters by position (kc_int, kc_float, gone since). Files:
compiler/, runtime/c/ and tests/unit/.
A loop over slots with a plain variable (k[j]) is allowed: its base must be
a name. (g->k[i] is a ConvGeom's kernel dims, not a slot.)

It also checks the kernels' `params` annotations, from which the emitter
names the slots at each call site (compiler/emit_common.c): the marker of
every kernel of a registry (/*@ NAME [needs ...] params GROUP ... */) must
name exactly the slot groups its text reads, through its macros and the
chunks it needs: GROUP for the enum ending with GROUP_NK (k[]) or GROUP_NF
(f[]), O2C_EPI for the epilogue, O2C_FEW / O2C_EINSUM for the lists placed
by the call, and an alias the kernel reads instead of the name it stands
for (O2C_ND_BATCH, O2C_NORM_F_MOMENTUM). The op table's instances
(elementwise.h's macros) may read only O2C_EW, the fused element-wise text
only O2C_FEW. `--fix` writes each marker's params from its text.
Prints one line per offence and 'N passed, N failed'."""
import glob, os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECKS = [
    (re.compile(r"(->|\.|\bp\))(k|f|ff)\s*\[\s*\d"), "a parameter slot indexed with a number"),
    (re.compile(r"(->|\.|\bp\))(k|f|ff)\s*\+\s*\d"), "a parameter slot addressed with a number"),
    (re.compile(r"O2C_PF\(\s*\w+\s*,\s*[^,()]+,\s*\d"), "a real parameter read by number"),
    (re.compile(r"\bkc_(int|ints|float)\s*\("), "parameters appended by position"),
]


def files():
    fs = sorted(glob.glob(os.path.join(ROOT, "compiler", "*.c")) + glob.glob(os.path.join(ROOT, "compiler", "ops", "*.c"))
                + glob.glob(os.path.join(ROOT, "compiler", "passes", "*.c")) + glob.glob(os.path.join(ROOT, "runtime", "c", "*.h"))
                + glob.glob(os.path.join(ROOT, "tests", "unit", "*.c")))
    return fs


def strip_comments(text):
    """Comments blanked (line numbers kept): they may describe a layout."""
    return re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)


IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
RUNTIME = os.path.join(ROOT, "runtime", "c")
BUILTIN = {   # the emitter's own groups (compiler/emit_common.c: slot_names)
    "O2C_EPI": ["O2C_EPI_ACT", "O2C_EPI_RES", "O2C_EPI_NSLOPE", "O2C_EPI_FA", "O2C_EPI_FB", "O2C_EPI_XRES", "O2C_EPI_XSLOPE"],
    "O2C_FEW": ["O2C_FEW_RANK", "O2C_FEW_DIMS", "O2C_FEW_STR_AT", "O2C_FEW_NK"],
    "O2C_EINSUM": ["O2C_EINSUM_NIN", "O2C_EINSUM_NO", "O2C_EINSUM_NS", "O2C_EINSUM_DIMS", "O2C_EINSUM_STR_AT", "O2C_EINSUM_NK"],
}


def slot_groups():
    """name -> (group, array: "NK" k[] or "NF" f[], name it aliases or None) for
    every slot name of runtime/c/params; and the groups with both arrays"""
    names, arrays = {}, {}
    for f in sorted(glob.glob(os.path.join(RUNTIME, "params", "*.h"))):
        text = strip_comments(open(f).read())
        defines = re.findall(r"^#define\s+(\w+)[ \t]+(\w+)[ \t]*$", text, re.M)
        for body in re.findall(r"\benum\s*\{(.*?)\}", text, re.S):
            entries = [e.strip() for e in re.split(r",(?![^()]*\))", body) if e.strip()]
            ents = [(re.match(r"\w+", e).group(0), re.match(r"\w+\s*=\s*\(?\s*(\w+)\s*\)?\s*$", e)) for e in entries]
            term = [n for n, _ in ents if n.endswith("_NK") or n.endswith("_NF")]
            if not term:
                continue
            group, arr = term[0][:-3], term[0][-2:]
            arrays.setdefault(group, set()).add(arr)
            for n, m in ents:
                if n not in term:
                    alias = m.group(1) if m and m.group(1) in [x for x, _ in ents] else None
                    names[n] = (group, arr, alias)
        for n, body in defines:   # a macro naming another slot: an alias
            if body in names:
                names[n] = names[body][:2] + (body,)
    for g, ns in BUILTIN.items():
        for n in ns:
            names[n] = (g, "NF" if n in ("O2C_EPI_FA", "O2C_EPI_FB") else "NK", None)
    # a list place computed by a macro of the group's params file reads the group
    names["O2C_EW_STR_AT"] = ("O2C_EW", "NK", None)
    names["O2C_RNN_ACT_AT"] = ("O2C_RNN", "NK", None)
    return names, {g for g, a in arrays.items() if len(a) == 2}


def runtime_files():
    rt = os.path.join(RUNTIME, "o2c_rt.h")
    return [rt] + sorted(f for f in glob.glob(os.path.join(RUNTIME, "*.h")) if f != rt)


def macros_and_chunks():
    """every macro's body (runtime/c and its params), every chunk: name -> (file, line, marker, text)"""
    macros, chunks, registry = {}, {}, set()
    for f in runtime_files() + sorted(glob.glob(os.path.join(RUNTIME, "params", "*.h"))):
        raw = open(f).read()
        text = strip_comments(raw).replace("\\\n", "  ")
        for m in re.finditer(r"^#define\s+(\w+)(.*)$", text, re.M):
            macros[m.group(1)] = m.group(2)
        if "/params/" in f:
            continue
        reg = raw.find("/* ---- registry")   # the emitter's end of the chunks
        defn = re.search(r"^#define O2C_KERNELS_\w+\(K\)", raw, re.M)   # the registry
        for m in re.finditer(r"\bK\((\w+)\)", raw[defn.start():] if defn else ""):
            registry.add(m.group(1))
        body = raw[:min(reg if reg >= 0 else len(raw), defn.start() if defn else len(raw))]
        starts = [m.start() for m in re.finditer(r"^/\*@ ", body, re.M)] + [len(body)]
        for a, b in zip(starts, starts[1:]):
            marker = body[a:body.index("\n", a)]
            name = marker.split()[1]
            chunks[name] = (f, body.count("\n", 0, a) + 1, marker, strip_comments(body[a:b]))
    return macros, chunks, registry


def marker_parts(marker):
    words = marker[3:].replace("*/", " ").split()
    deps, params, into = [], [], None
    for w in words[1:]:
        if w in ("needs", "params"):
            into = deps if w == "needs" else params
        elif into is not None:
            into.append(w)
    return words[0], deps, params


def reads(text, macros, chunks, names, deps=()):
    """every identifier the text reads, through the macros it uses (not a slot
    name's: an alias is read as itself) and the chunks in deps"""
    seen = set(names)
    out, todo = set(), [text] + [chunks[d][3] for d in deps if d in chunks]
    while todo:
        for ident in IDENT.findall(todo.pop()):
            if ident in out:
                continue
            out.add(ident)
            if ident in macros and ident not in seen:
                seen.add(ident)
                todo.append(macros[ident])
            if ident in chunks and ident not in seen:   # a helper chunk (its needs are in the marker, too)
                seen.add(ident)
                todo.append(chunks[ident][3])
    return out


def wanted_params(idents, names):
    """GROUP, or GROUP_NK / GROUP_NF when a group has both arrays and the
    text reads one; then the aliases read instead of the names they stand for"""
    names, both = names
    used = {}
    for ident in sorted(idents):
        if ident in names:
            used.setdefault(names[ident][0], set()).add(ident)
    order = sorted(used, key=lambda g: (g == "O2C_EPI", g))
    out = []
    for g in order:
        arrs = {names[i][1] for i in used[g]}
        out.append(g + "_" + arrs.pop() if g in both and len(arrs) == 1 and g not in BUILTIN else g)
    for g in order:
        for ident in sorted(used[g]):
            alias = names[ident][2]
            if alias and alias not in used[g]:
                out.append(ident)
    return out


def check_annotations(fix):
    names = slot_groups()
    macros, chunks, registry = macros_and_chunks()
    bad, edits = [], {}
    for k in sorted(registry):
        if k not in chunks:
            bad.append("runtime/c: %s is in a registry but has no /*@ %s */ chunk" % (k, k))
            continue
        f, line, marker, text = chunks[k]
        name, deps, params = marker_parts(marker)
        want = wanted_params(reads(text, macros, chunks, names[0], deps=deps), names)
        if params != want:
            rel = os.path.relpath(f, ROOT)
            bad.append("%s:%d: %s: params '%s', its text reads '%s'" % (rel, line, k, " ".join(params), " ".join(want)))
            new = "/*@ %s%s%s */" % (name, " needs " + " ".join(deps) if deps else "", " params " + " ".join(want) if want else "")
            edits.setdefault(f, []).append((marker, new))
    # the op table's instances (compiler/ops.c) and the fused element-wise text
    ops = open(os.path.join(ROOT, "compiler", "ops.c")).read()
    for mac in sorted(set(re.findall(r'"(O2C_[A-Z0-9_]+)\(o2c_', ops))):
        got = set(wanted_params(reads(mac, macros, chunks, names[0]), names))
        if not got <= {"O2C_EW", "O2C_EW_NK", "O2C_EW_NF"}:
            bad.append("runtime/c/elementwise.h: %s reads %s; the emitter names the op table's kernels' slots by O2C_EW" % (mac, " ".join(sorted(got))))
    few = strip_comments(open(os.path.join(ROOT, "compiler", "ops", "fused_elementwise.c")).read())
    written = " ".join(re.findall(r'"(?:[^"\\]|\\.)*"', few))   # the kernel text it writes: its strings
    got = set(wanted_params(set(re.findall(r"O2C_[A-Z0-9_]+", written)), names))
    if not got <= {"O2C_FEW"}:
        bad.append("compiler/ops/fused_elementwise.c writes %s; the emitter names its kernels' slots by O2C_FEW" % " ".join(sorted(got)))
    if fix:
        for f, subs in edits.items():
            t = open(f).read()
            for old, new in subs:
                t = t.replace(old + "\n", new + "\n", 1)
            open(f, "w").write(t)
        print("%d markers rewritten" % sum(len(v) for v in edits.values()))
    return bad


def main():
    fix = "--fix" in sys.argv[1:]
    passed = failed = 0
    for f in files():
        rel = os.path.relpath(f, ROOT)
        lines = strip_comments(open(f).read()).split("\n")
        bad = 0
        # a pointer to the whole array (int64_t *k = c->k) is checked like the array
        aliases = set(re.findall(r"\*\s*(\w+)\s*=\s*\(?\w+\)?->(?:k|f|ff)\s*[;,]", "\n".join(lines)))
        checks = CHECKS + [(re.compile(r"(?<![\w.>])%s\s*(\[\s*\d|\+\s*\d)" % re.escape(a)), "a parameter slot indexed with a number (through %s)" % a)
                           for a in aliases]
        for no, line in enumerate(lines, 1):
            for rx, what in checks:
                if rx.search(re.sub(r"\bg(->|\.)k\[", "g.kernel[", line)):
                    print("%s:%d: %s: %s" % (rel, no, what, line.strip()))
                    bad += 1
        if bad:
            failed += 1
        else:
            passed += 1
    bad = check_annotations(fix)
    for b in bad:
        print(b)
    if bad and not fix:
        failed += 1
    else:
        passed += 1
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
