#!/usr/bin/env python3
"""The fuzzing suite (tests/fuzz/, docs/FUZZING.md): builds the libFuzzer
harness build/fuzz/fuzz_compile (`make fuzz`: clang, ASan, UBSan), replays
the regression corpus tests/fuzz/regressions/ (every input a campaign ever
crashed, hung or leaked on) and the seed corpus (the examples' models and
the node-test models of build/node-tests, when present), then runs a short
bounded campaign: structure-aware mutation, then byte-level, with a time
limit per input and a memory limit. Any crash, hang, leak or sanitizer
report fails the suite; the input is kept under build/fuzz/failures/.

    python tests/test_fuzz.py [--seconds 120] [--no-build]

Skipped (with the reason) only when clang's libFuzzer is missing
(`make deps` installs it)."""
import argparse, glob, os, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARNESS = os.path.join(ROOT, "build", "fuzz", "fuzz_compile")
LIMITS = ["-timeout=30", "-rss_limit_mb=2048", "-max_len=65536"]


def have_libfuzzer():
    """None if clang can link a libFuzzer program, else the reason."""
    if not shutil.which(os.environ.get("FUZZ_CC", "clang")):
        return "clang is not installed (make deps installs it)"
    d = tempfile.mkdtemp(prefix="o2c_lf_")
    try:
        src = os.path.join(d, "t.c")
        with open(src, "w") as f:
            f.write("#include <stdint.h>\n#include <stddef.h>\n"
                    "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n")
        p = subprocess.run([os.environ.get("FUZZ_CC", "clang"), "-fsanitize=fuzzer", src, "-o", os.path.join(d, "t")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode:
            return "clang cannot link -fsanitize=fuzzer (libFuzzer missing; Debian: libclang-rt-N-dev): " + \
                p.stdout.strip().splitlines()[-1][:200]
        return None
    finally:
        shutil.rmtree(d, ignore_errors=True)


def env():
    e = dict(os.environ)
    e["ASAN_OPTIONS"] = "detect_leaks=1"
    e["UBSAN_OPTIONS"] = "print_stacktrace=1"
    return e


def keep(art_dir):
    """Copies what libFuzzer wrote (crash-*, timeout-*, leak-*, oom-*) to build/fuzz/failures/."""
    out = os.path.join(ROOT, "build", "fuzz", "failures")
    os.makedirs(out, exist_ok=True)
    kept = []
    for p in glob.glob(os.path.join(art_dir, "*")):
        shutil.copy(p, out)
        kept.append(os.path.join(out, os.path.basename(p)))
    return kept


def run(name, args, art_dir, extra_env=None):
    e = env()
    e.update(extra_env or {})
    cmd = [HARNESS] + LIMITS + ["-artifact_prefix=" + art_dir + "/"] + args
    p = subprocess.run(cmd, cwd=ROOT, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = p.stdout.splitlines()
    stats = [l for l in lines if l.startswith("stat::") or " DONE " in l or "INITED" in l]
    if p.returncode != 0:
        bad = [l for l in lines if "ERROR" in l or "SUMMARY" in l or "runtime error" in l]
        print("FAIL  %s: exit %d" % (name, p.returncode))
        for l in (bad or lines[-20:])[:20]:
            print("      " + l)
        for k in keep(art_dir):
            print("      input kept: " + os.path.relpath(k, ROOT))
        return False
    print("ok    %s" % name)
    for l in stats:
        print("      " + l.strip())
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=int, default=120, help="the bounded campaign's length (default 120)")
    ap.add_argument("--no-build", action="store_true", help="use build/fuzz/fuzz_compile as it is")
    a = ap.parse_args()
    why = have_libfuzzer()
    if why:
        print("SKIP  fuzz: " + why)
        print("0 passed, 0 failed, 1 skipped")
        return 0
    passed = failed = 0
    if not a.no_build:
        p = subprocess.run(["make", "-s", "-j2", "fuzz"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        if p.returncode:
            print("FAIL  make fuzz\n" + p.stdout[-3000:])
            print("0 passed, 1 failed")
            return 1
        print("ok    make fuzz")
        passed += 1
    seeds = os.path.join(ROOT, "build", "fuzz", "seeds")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "fuzz", "make_seeds.py"), "--out", seeds],
                       cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print("      " + p.stdout.strip())
    if p.returncode:
        print("FAIL  make_seeds.py")
        return 1
    art = tempfile.mkdtemp(prefix="o2c_fuzz_")
    work = tempfile.mkdtemp(prefix="o2c_fuzz_corpus_")
    regress = os.path.join(ROOT, "tests", "fuzz", "regressions")
    dict_ = "-dict=" + os.path.join(ROOT, "tests", "fuzz", "onnx.dict")
    s_time = max(a.seconds * 2 // 3, 1)
    b_time = max(a.seconds - s_time, 1)
    steps = [
        ("replay regressions (%d inputs)" % len(os.listdir(regress)), ["-runs=0", regress], None),
        ("replay seeds (%d inputs)" % len(os.listdir(seeds)), ["-runs=0", seeds], None),
        # fixed seeds: a failing run can be repeated (docs/FUZZING.md's campaigns use others)
        ("campaign, structure-aware, %d s" % s_time,
         ["-seed=1", "-max_total_time=%d" % s_time, "-print_final_stats=1", dict_, work, seeds], None),
        ("campaign, byte-level, %d s" % b_time,
         ["-seed=2", "-max_total_time=%d" % b_time, "-print_final_stats=1", dict_, work, seeds],
         {"O2C_FUZZ_BYTES": "1"}),
    ]
    try:
        for name, args, e in steps:
            if run(name, args, art, e):
                passed += 1
            else:
                failed += 1
    finally:
        shutil.rmtree(art, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
