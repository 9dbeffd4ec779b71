#!/usr/bin/env python3
"""The fuzzing suite of `make test` (tests/fuzz/, docs/FUZZING.md), and it is
deterministic: it builds the libFuzzer harness build/fuzz/fuzz_compile
(`make fuzz`: clang, ASan, UBSan) and runs it once on every input of fixed
corpora, in name order, with no mutation:

  * tests/fuzz/regressions/: every input a campaign ever crashed, hung or
    leaked on;
  * tests/fuzz/corpus/, when the repository holds one: a saved campaign
    corpus;
  * the seed corpus build/fuzz/seeds (tests/fuzz/make_seeds.py): the
    examples' models and the node-test models of build/node-tests, written
    from the pinned onnx package by tests/conformance/make_corpus.py.

A corpus passes when every one of its inputs ran to its end: no crash, no
sanitizer report, no leak, none over the per-input time (60 s, ample: the
slowest input takes 3-4 s) or memory (2 GiB) limit. A failing input
is copied to build/fuzz/failures/ and the rest of the corpus still runs.
The open-ended campaign is not part of this suite: `make fuzz-campaign
FUZZ_SECONDS=N` (tests/fuzz/campaign.py) runs one.

    python tests/test_fuzz.py [--no-build]

Skipped (with the reason) only when clang's libFuzzer is missing
(`make deps` installs it)."""
import argparse, os, re, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARNESS = os.path.join(ROOT, "build", "fuzz", "fuzz_compile")
FAILURES = os.path.join(ROOT, "build", "fuzz", "failures")
TIMEOUT = 60
LIMITS = ["-timeout=%d" % TIMEOUT, "-rss_limit_mb=2048", "-max_len=65536"]
MAX_FAILURES = 10          # per corpus: the replay stops reporting after this many


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
    e.pop("O2C_FUZZ_BYTES", None)
    return e


def inputs(folder):
    """The corpus's files, relative to ROOT, in name order."""
    names = sorted(n for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n)))
    return [os.path.relpath(os.path.join(folder, n), ROOT) for n in names]


def replay(files):
    """Runs the harness once on each file (libFuzzer's mode for files named
    on the command line: no mutation, no corpus). A failing run stops the
    harness; the replay goes on after the failing file. Returns
    (ms per executed file, [(file, report lines)])."""
    done, failures = {}, []
    todo = list(files)
    while todo and len(failures) < MAX_FAILURES:
        p = subprocess.run([HARNESS] + LIMITS + todo, cwd=ROOT, env=env(), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace")
        lines = p.stdout.splitlines()
        running = None
        for l in lines:
            m = re.match(r"Running: (.*)$", l)
            if m:
                running = m.group(1)
            m = re.match(r"Executed (.*) in (\d+) ms$", l)
            if m:
                done[m.group(1)] = int(m.group(2))
        if p.returncode == 0:
            break
        if running is None or running in done or running not in todo:
            # the harness stopped without naming an input it was running
            failures.append(("(harness, exit %d)" % p.returncode, lines[-20:]))
            break
        report = [l for l in lines if re.search(r"ERROR|SUMMARY|runtime error|ALARM|out-of-memory", l)]
        failures.append((running, (report or lines[-20:])[:20] + ["exit %d" % p.returncode]))
        todo = todo[todo.index(running) + 1:]
    return done, failures


def keep(path):
    os.makedirs(FAILURES, exist_ok=True)
    dst = os.path.join(FAILURES, os.path.basename(path))
    shutil.copy(os.path.join(ROOT, path), dst)
    return os.path.relpath(dst, ROOT)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
    # the seed corpus: the examples and the node tests of the pinned onnx
    # (make_corpus.py does nothing when build/node-tests is up to date)
    node_tests = os.path.join(ROOT, "build", "node-tests")
    seeds = os.path.join(ROOT, "build", "fuzz", "seeds")
    for cmd in ([sys.executable, os.path.join(ROOT, "tests", "conformance", "make_corpus.py"), node_tests],
                [sys.executable, os.path.join(ROOT, "tests", "fuzz", "make_seeds.py"), "--out", seeds,
                 "--node-tests", node_tests]):
        p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.stdout.strip():
            print("      " + p.stdout.strip().splitlines()[-1])
        if p.returncode:
            print("FAIL  %s (exit %d): the seed corpus cannot be written\n%s" % (
                os.path.basename(cmd[1]), p.returncode, p.stdout[-2000:]))
            print("%d passed, %d failed" % (passed, failed + 1))
            return 1
    corpora = [("regressions", os.path.join(ROOT, "tests", "fuzz", "regressions"))]
    saved = os.path.join(ROOT, "tests", "fuzz", "corpus")
    if os.path.isdir(saved):
        corpora.append(("saved campaign corpus", saved))
    corpora.append(("seeds", seeds))
    for name, folder in corpora:
        files = inputs(folder)
        if not files:
            print("FAIL  %s: %s holds no input" % (name, os.path.relpath(folder, ROOT)))
            failed += 1
            continue
        done, failures = replay(files)
        if failures:
            failed += 1
            print("FAIL  %s: %d of %d inputs failed%s" % (name, len(failures), len(files),
                                                           " (stopped counting)" if len(failures) >= MAX_FAILURES else ""))
            for f, report in failures:
                print("      %s" % f)
                for l in report:
                    print("          " + l)
                if os.path.isfile(os.path.join(ROOT, f)):
                    print("          input kept: %s (replay: build/fuzz/fuzz_compile %s)" % (keep(f), f))
            continue
        missing = [f for f in files if f not in done]
        if missing:   # every input must have run: a replay that skips one proves nothing about it
            failed += 1
            print("FAIL  %s: %d of %d inputs were not run (first: %s)" % (name, len(missing), len(files), missing[0]))
            continue
        passed += 1
        slow = sorted(done.items(), key=lambda kv: -kv[1])[:3]
        print("ok    %s: %d inputs, each run once (%.1f s; slowest %s)" % (
            name, len(files), sum(done.values()) / 1000.0,
            ", ".join("%s %d ms" % (os.path.basename(f), ms) for f, ms in slow)))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
