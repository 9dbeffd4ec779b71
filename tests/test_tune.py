#!/usr/bin/env python3
"""Tests of the autotuner: --tune, --tune-file, --tune-runner.

    python tests/test_tune.py [--compiler build/onnx2c]

On examples with convolutions (plain, depthwise, pointwise) and products:
  - --tune writes a tuning file: one KEY<TAB>VARIANT<TAB>NANOSECONDS line per
    distinct tunable call, every variant one of the candidates the comment
    line above it timed, and the winner the fastest of them;
  - replaying the file (--tune-file without --tune) writes byte-identical
    C and header files, and --report shows each tuned call's variant and time;
  - every candidate is correct: for each variant name, a tuning file that
    forces it wherever it is a candidate makes code that tests/run_models.py
    checks against onnxruntime (C under the sanitizers when --compiler is the
    sanitizer build);
  - a user runner (--tune-runner) is used, and its failure is a clear error
    (exit 1, no tuning file, no output);
  - --tune-budget: a budget spent at once times the largest layer only, says
    which keys were not timed, and the file replays;
  - bad tuning files are refused with the line at fault: a malformed line, a
    repeated key, a variant that is not a candidate; --tune without
    --tune-file, --tune-file for the CUDA target.
The last line is 'N passed, N failed, N skipped'."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import run_models as rm  # noqa: E402

PY = sys.executable
MODELS = ["mobilenet_block", "small_convnet", "gemm_chain", "srcnn_cubic"]
LINE = re.compile(r"^([^\t#][^\t]*)\t([^\t]+)\t([0-9.]+)$")
CAND = re.compile(r"^# (.*)$")


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    return p.returncode, p.stdout


def parse_tune(path):
    """[(key, variant, ns, {candidate: ns})] of a tuning file."""
    entries, cands = [], None
    for line in open(path, encoding="utf-8").read().splitlines():
        m = LINE.match(line)
        if m:
            if cands is None:
                raise AssertionError("tuning line without the candidates' comment above it: " + line)
            entries.append((m.group(1), m.group(2), float(m.group(3)), cands))
            cands = None
        elif line.startswith("# --tune-budget") or line.endswith(": not timed (--tune-budget)"):
            pass
        elif line.startswith("# ") and "\t" not in line and not line.startswith("# onnx2c"):
            cands = {}
            for part in CAND.match(line).group(1).split(", "):
                name, ns = part.rsplit(" ", 1)
                cands[name] = float(ns)
        elif not line.startswith("#"):
            raise AssertionError("not a tuning file line: %r" % line)
    return entries


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def test_model(args, name, work):
    model = os.path.join(ROOT, "examples", name, "model.onnx")
    d = os.path.join(work, name)
    os.makedirs(os.path.join(d, "a"))
    os.makedirs(os.path.join(d, "b"))
    tune = os.path.join(d, "m.tune")
    rc, out = run([args.compiler, model, "-o", os.path.join(d, "a", "m.c"), "--tune", "--tune-file", tune])
    check(rc == 0, "--tune failed: " + out[-300:])
    entries = parse_tune(tune)
    check(entries, "no tunable call found")
    keys = [e[0] for e in entries]
    check(keys == sorted(keys) and len(set(keys)) == len(keys), "keys not sorted and distinct")
    for key, variant, ns, cands in entries:
        check(len(cands) >= 2, "%s: fewer than two candidates timed" % key)
        check(variant in cands, "%s: the winner %s was not timed" % (key, variant))
        check(all(v > 0 for v in cands.values()), "%s: a time is not positive" % key)
        check(cands[variant] == min(cands.values()) and abs(ns - cands[variant]) < 0.06,
              "%s: %s is not the fastest of %s" % (key, variant, cands))
    # replay: byte-identical output
    rc, out = run([args.compiler, model, "-o", os.path.join(d, "b", "m.c"), "--tune-file", tune])
    check(rc == 0, "--tune-file failed: " + out[-300:])
    for f in ("m.c", "m.h"):
        check(rm.without_flags(open(os.path.join(d, "a", f), "rb").read()) ==
              rm.without_flags(open(os.path.join(d, "b", f), "rb").read()), "replaying the tuning file changed %s" % f)
    rc, rep = run([args.compiler, model, "--report", "--tune-file", tune])
    check(rc == 0, "--report failed")
    for key, variant, ns, cands in entries:
        check(re.search(r"\b%s \(%.1f us\)" % (re.escape(variant), ns / 1e3), rep),
              "the report does not show %s (%.1f us)" % (variant, ns / 1e3))
    # every candidate, forced, computes what onnxruntime does: the C only
    # (a tuning file is for the C target; the CUDA leg is the models suite's),
    # two variants at a time (each run_models call checks one folder)
    variants = sorted({v for e in entries for v in e[3]})

    def forced_run(v):
        forced = os.path.join(d, "force_%s.tune" % v)
        with open(forced, "w", encoding="utf-8") as f:
            for key, won, _, cands in entries:
                f.write("%s\t%s\t0\n" % (key, v if v in cands else won))
        return run([PY, os.path.join(ROOT, "tests", "run_models.py"), "--compiler", args.compiler, "--levels", "2",
                    "--c-only", "--c-flags", "--tune-file " + forced, os.path.join(ROOT, "examples", name)])

    with ThreadPoolExecutor(2) as ex:
        for v, (rc, out) in zip(variants, ex.map(forced_run, variants)):
            check(rc == 0, "variant %s everywhere: %s" % (v, out.strip().splitlines()[0][:300] if out.strip() else out))
    return "%d keys, variants %s" % (len(entries), " ".join(variants))


def test_runner(args, work):
    """a user runner builds and runs the program; a failing one is refused"""
    model = os.path.join(ROOT, "examples", "small_convnet", "model.onnx")
    runner = os.path.join(work, "runner.sh")
    log = os.path.join(work, "runner.log")
    with open(runner, "w") as f:
        f.write("#!/bin/sh\necho \"$1\" > %s\ncc -O2 -std=c99 -w -o \"$1.bin\" \"$1\" -lm && \"$1.bin\"\n" % log)
    os.chmod(runner, 0o755)
    tune, c = os.path.join(work, "r.tune"), os.path.join(work, "r.c")
    rc, out = run([args.compiler, model, "-o", c, "--tune", "--tune-file", tune, "--tune-runner", runner])
    check(rc == 0, "--tune-runner: " + out[-300:])
    check(os.path.exists(log) and open(log).read().strip().endswith(".c"), "the runner was not given the program")
    check(parse_tune(tune), "no entries with the runner")
    bad = os.path.join(work, "bad.sh")
    with open(bad, "w") as f:
        f.write("#!/bin/sh\necho 'cannot reach the board'\nexit 3\n")
    os.chmod(bad, 0o755)
    t2, c2 = os.path.join(work, "bad.tune"), os.path.join(work, "bad.c")
    rc, out = run([args.compiler, model, "-o", c2, "--tune", "--tune-file", t2, "--tune-runner", bad])
    check(rc == 1 and "tuning run failed" in out and "cannot reach the board" in out,
          "a failing runner: rc %d, %s" % (rc, out[-200:]))
    check(not os.path.exists(t2) and not os.path.exists(c2), "a failing runner left files behind")
    return "runner used; failure refused"


def test_budget(args, work):
    """--tune-budget: the largest layers timed first, the rest left to the heuristic, and said so"""
    model = os.path.join(ROOT, "examples", "mobilenet_block", "model.onnx")
    full, part = os.path.join(work, "full.tune"), os.path.join(work, "part.tune")
    rc, out = run([args.compiler, model, "-o", os.path.join(work, "f.c"), "--tune", "--tune-file", full])
    check(rc == 0, "--tune: " + out[-300:])
    rc, out = run([args.compiler, model, "-o", os.path.join(work, "p.c"), "--tune", "--tune-file", part,
                   "--tune-budget", "0.000001"])
    check(rc == 0, "--tune --tune-budget: " + out[-300:])
    text = open(part).read()
    nfull, timed = len(parse_tune(full)), parse_tune(part)
    skipped = [l for l in text.splitlines() if l.endswith(": not timed (--tune-budget)")]
    check(nfull >= 2, "mobilenet_block has fewer than two tunable keys")
    check(len(timed) == 1 and len(skipped) == nfull - 1,
          "a budget spent at once: %d keys timed, %d skipped of %d" % (len(timed), len(skipped), nfull))
    check("--tune-budget 1e-06 s: 1 of %d kernel shapes timed" % nfull in text, "the budget line is missing")
    rc, out = run([args.compiler, model, "-o", os.path.join(work, "r.c"), "--tune-file", part])
    check(rc == 0, "replaying a partial tuning file: " + out[-300:])
    return "1 of %d keys timed within the budget; the file replays" % nfull


def test_refusals(args, work):
    model = os.path.join(ROOT, "examples", "small_convnet", "model.onnx")
    good = os.path.join(work, "good.tune")
    rc, out = run([args.compiler, model, "-o", os.path.join(work, "g.c"), "--tune", "--tune-file", good])
    check(rc == 0, "--tune: " + out[-200:])
    key = parse_tune(good)[0][0]
    cases = [
        ("malformed", "%s\ttile32\n" % key, "not a tuning line"),
        ("twice", "%s\ttile32\t1\n%s\ttile8\t2\n" % (key, key), "given twice"),
        ("unknown variant", "%s\twinograd\t1\n" % key, "not one of its candidates"),
        ("negative time", "%s\ttile32\t-4\n" % key, "not a tuning line"),
    ]
    for what, text, msg in cases:
        f = os.path.join(work, "bad_%s.tune" % what.replace(" ", "_"))
        open(f, "w").write("# a comment\n" + text)
        out_c = os.path.join(work, "bad_%s.c" % what.replace(" ", "_"))
        rc, out = run([args.compiler, model, "-o", out_c, "--tune-file", f])
        check(rc == 1 and msg in out, "%s: rc %d, %s" % (what, rc, out.strip()[-200:]))
        check(not os.path.exists(out_c), "%s: an output file was written" % what)
    for flags, msg in ((["--tune"], "--tune needs --tune-file"),
                       (["--tune-file", good, "-o", os.path.join(work, "x.cu")], "CUDA target"),
                       (["--tune-runner", "true", "--tune-file", good], "only used with --tune"),
                       (["--tune-budget", "5", "--tune-file", good], "only used with --tune"),
                       (["--tune", "--tune-file", good, "--tune-budget", "0"], "expected seconds"),
                       (["--tune-file", os.path.join(work, "missing.tune")], "cannot read the tuning file")):
        cmd = [args.compiler, model] + flags
        if "-o" not in flags:
            cmd += ["-o", os.path.join(work, "y.c")]
        rc, out = run(cmd)
        check(rc == 1 and msg in out, "%s: rc %d, %s" % (" ".join(flags), rc, out.strip()[-200:]))
    return "%d refusals" % (len(cases) + 6)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    args = ap.parse_args()
    args.compiler = os.path.abspath(args.compiler)
    work = tempfile.mkdtemp(prefix="o2c_tune_")
    n = {"pass": 0, "fail": 0}
    tests = [("model " + m, lambda w, m=m: test_model(args, m, w)) for m in MODELS]
    tests += [("runner", lambda w: test_runner(args, w)), ("budget", lambda w: test_budget(args, w)),
              ("refusals", lambda w: test_refusals(args, w))]
    try:
        for name, fn in tests:
            w = os.path.join(work, re.sub(r"\W", "_", name))
            os.makedirs(w)
            try:
                what = fn(w)
                n["pass"] += 1
                print("PASS  %-24s %s" % (name, what), flush=True)
            except Failed as e:
                n["fail"] += 1
                print("FAIL  %-24s %s" % (name, e), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed, 0 skipped" % (n["pass"], n["fail"]))
    sys.exit(1 if n["fail"] else 0)


if __name__ == "__main__":
    main()
