#!/usr/bin/env python3
"""The op table's opset versions (the last column of compiler/ops.def)
checked against onnx's schema history.

Each UNARY/BINARY/COMPARE/PREDICATE/OP line of compiler/ops.def ends with a
string of the op's schema versions in its domain (the since_version of each
of its definitions in onnx), oldest first; a version onnx2c does not
implement is marked with a leading "!":

    BINARY(Add, NUM, a + b, "!1 !6 7 13 14")

For a node, the version in effect is the largest listed one <= the opset the
model imports for the op's domain; infer.c refuses the node when that
version is marked "!" (compiler/ops.c: op_version).

    tools/opset_versions.py            check: every since_version of onnx
                                       (deprecated ones too) is listed, no
                                       other; exit 1 and the differences
    tools/opset_versions.py --fix      rewrite the column from onnx's history,
                                       keeping the "!" marks of versions
                                       still listed (a new op line may end
                                       without the column: --fix adds it)
    tools/opset_versions.py --refused  print the versions marked "!"

Domains onnx does not describe (com.microsoft) list "1": nothing to check.
"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPS_DEF = os.path.join(ROOT, "compiler", "ops.def")
KINDS = ("UNARY", "BINARY", "COMPARE", "PREDICATE", "OP")
LINE = re.compile(r'^(%s)\((\w+),\s*("[^"]*"|\w+)' % "|".join(KINDS))
ONNX_DOMAINS = ("", "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview")


def history():
    import onnx.defs
    h = defaultdict(set)
    for s in onnx.defs.get_all_schemas_with_history():
        h[(s.domain, s.name)].add(s.since_version)
    return h


def parse_versions(text):
    """'!1 6 13' -> [(1, False), (6, True), (13, True)] (version, implemented)"""
    out = []
    for w in text.split():
        out.append((int(w.lstrip("!")), not w.startswith("!")))
    return out


def table_lines():
    """(line index, kind, name, domain, versions text or None) per op line"""
    rows = []
    for i, line in enumerate(open(OPS_DEF).read().split("\n")):
        m = LINE.match(line)
        if not m:
            continue
        kind, name, dom = m.groups()
        dom = dom.strip('"') if kind == "OP" else ""
        rows.append((i, kind, name, dom, versions_field(line, kind)))
    return rows


# the versions column's position among a line's fields (1-based): an OP
# line's 10th field; UNARY 5th, BINARY/COMPARE 4th, PREDICATE 5th. Fields
# of the op's own (".traits = ...", OpDef in compiler/ir.h) may follow it.
POSITION = {"UNARY": 5, "BINARY": 4, "COMPARE": 4, "PREDICATE": 5, "OP": 10}


def top_level_fields(line):
    """[(start, end)] of each top-level field of the line's argument list"""
    open_at = line.index("(") + 1
    body_end = line.rindex(")")
    depth, q, start, out = 0, False, open_at, []
    for k in range(open_at, body_end):
        ch = line[k]
        if ch == '"':
            q = not q
        elif q:
            continue
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append((start, k))
            start = k + 1
    out.append((start, body_end))
    return out


def versions_field(line, kind):
    """the text of the versions column, or None when the line has none"""
    fields = top_level_fields(line)
    if len(fields) < POSITION[kind]:
        return None
    a, b = fields[POSITION[kind] - 1]
    m = re.fullmatch(r'\s*"([!0-9 ]*)"\s*', line[a:b])
    return m.group(1) if m else None


def expected(h, dom, name):
    if dom in ONNX_DOMAINS:
        return sorted(h.get((dom, name), ()))
    return [1]


def check(h):
    problems = []
    for i, kind, name, dom, col in table_lines():
        where = "ops.def:%d %s%s" % (i + 1, dom + "::" if dom else "", name)
        want = expected(h, dom, name)
        if col is None:
            problems.append("%s: no versions column (tools/opset_versions.py --fix adds it)" % where)
            continue
        try:
            got = parse_versions(col)
        except ValueError:
            problems.append("%s: versions '%s' are not numbers" % (where, col))
            continue
        vs = [v for v, _ in got]
        if vs != sorted(set(vs)):
            problems.append("%s: versions '%s' are not increasing" % (where, col))
        if not want:
            problems.append("%s: onnx has no schema of this op in domain '%s'" % (where, dom or "ai.onnx"))
            continue
        miss = [v for v in want if v not in vs]
        extra = [v for v in vs if v not in want]
        if miss:
            problems.append("%s: onnx's since_versions %s are not listed (implemented or '!'-refused)" % (where, miss))
        if extra:
            problems.append("%s: versions %s are not since_versions of the op in onnx" % (where, extra))
        if not any(ok for _, ok in got):
            problems.append("%s: no version is implemented" % where)
    return problems


def fix(h):
    lines = open(OPS_DEF).read().split("\n")
    for i, kind, name, dom, col in table_lines():
        want = expected(h, dom, name)
        if not want:
            continue
        refused = {v for v, ok in parse_versions(col or "") if not ok}
        text = " ".join(("!" if v in refused else "") + str(v) for v in want)
        line = lines[i]
        fields = top_level_fields(line)
        if col is not None:
            a, b = fields[POSITION[kind] - 1]
            line = line[:a] + ' "%s"' % text + line[b:]
        else:
            a, b = fields[-1]
            line = line[:b] + ', "%s"' % text + line[b:]
        lines[i] = line
    open(OPS_DEF, "w").write("\n".join(lines))


def main():
    h = history()
    if "--fix" in sys.argv:
        fix(h)
    if "--refused" in sys.argv:
        for i, kind, name, dom, col in table_lines():
            bad = [v for v, ok in parse_versions(col or "") if not ok]
            if bad:
                print("%s%s: %s (implements %s)" % (dom + "::" if dom else "", name, " ".join(map(str, bad)),
                                                   " ".join(str(v) for v, ok in parse_versions(col) if ok)))
        return 0
    problems = check(h)
    for p in problems:
        print(p)
    n = len(table_lines())
    print("%d op lines, %d problem%s" % (n, len(problems), "" if len(problems) == 1 else "s"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
