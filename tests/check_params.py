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
a name. (g->k[i] is a ConvGeom's kernel dims, not a slot.) Prints one line per offence and 'N passed, N failed'."""
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


def main():
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
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
