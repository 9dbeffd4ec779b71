#!/usr/bin/env python3
"""Runs an open-ended fuzzing campaign of build/fuzz/fuzz_compile for a given
time and counts it (`make fuzz-campaign FUZZ_SECONDS=N` runs it; see
docs/FUZZING.md). The harness runs in one process at a time; when it stops
on a finding (crash, hang, leak, sanitizer report, out of memory) the input
is kept in the artifacts folder (build/fuzz/failures/) and the harness
starts again on the grown corpus, until the time is up. Prints (and appends
to --summary) per mode the executions, the final coverage (libFuzzer's cov
and ft), the corpus size and the findings, then a list of the findings with
the first line of each report and the command that replays it.

    python tests/fuzz/campaign.py --mode structure|bytes|both --seconds N
        [--corpus build/fuzz/campaign/corpus] [--artifacts build/fuzz/failures]
        [--seed N] [--summary FILE] [EXTRA_CORPUS_DIR ...]

--mode bytes sets O2C_FUZZ_BYTES=1 (libFuzzer's byte-level mutations only);
structure uses the structure-aware mutator (tests/fuzz/mutator.c); both
gives three quarters of the time to structure-aware, then the rest to
byte-level. Without --seed a seed is drawn and printed (each restart of the
harness takes the next one). SIGTERM stops the harness (SIGINT: libFuzzer
prints its statistics) and still writes the summary. Exit status: 0 when
nothing was found, 1 when something was."""
import argparse, json, os, random, re, shutil, signal, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# the lines of a libFuzzer/sanitizer report that say what was found
REPORT = re.compile(r"(ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|"
                    r"==\d+== ?ERROR|SUMMARY: |ALARM: working on the last Unit|out-of-memory)")


def campaign(a, mode, seconds, seed, log, stop):
    """One mode for `seconds`: returns its summary (a dict)."""
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "detect_leaks=1"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1"
    if mode == "bytes":
        env["O2C_FUZZ_BYTES"] = "1"
    else:
        env.pop("O2C_FUZZ_BYTES", None)
    end = time.time() + seconds
    total, runs, findings, slow = 0, 0, [], []
    last = {}
    first_seed = seed
    while time.time() < end - 5 and not stop:
        left = int(end - time.time())
        cmd = [a.harness, "-max_total_time=%d" % left, "-timeout=%d" % a.timeout, "-rss_limit_mb=2048",
               "-max_len=65536", "-print_final_stats=1", "-seed=%d" % seed,
               "-dict=" + os.path.join(ROOT, "tests", "fuzz", "onnx.dict"),
               "-artifact_prefix=" + a.artifacts.rstrip("/") + "/", a.corpus] + a.extra
        log.write("==== %s %s%s\n" % (time.strftime("%H:%M:%S"), "O2C_FUZZ_BYTES=1 " if mode == "bytes" else "",
                                       " ".join(cmd)))
        log.flush()
        try:
            p = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 errors="replace")
        except OSError as e:
            print("campaign: the harness did not start (%s); stopping" % e, flush=True)
            stop.append(1)
            break
        execs = 0
        art = None
        what = None
        signal.signal(signal.SIGTERM, lambda *_: (stop.append(1), p.send_signal(signal.SIGINT)))
        for line in p.stdout:
            log.write(line)
            m = re.match(r"#(\d+)\s+(\w+)\s+cov: (\d+) ft: (\d+) corp: (\d+)/(\S+)", line)
            if m:
                execs = int(m.group(1))
                last = {"cov": int(m.group(3)), "ft": int(m.group(4)), "corpus": int(m.group(5)),
                        "corpus_size": m.group(6)}
            m = re.match(r"stat::number_of_executed_units: (\d+)", line)
            if m:
                execs = int(m.group(1))
            m = re.search(r"Test unit written to (\S+)", line)
            if m and "/slow-unit-" in m.group(1):   # over -report_slow_units (10 s): noted, not a finding
                slow.append(m.group(1))
            elif m:
                art = m.group(1)
            if what is None and REPORT.search(line):
                what = line.strip()
        p.wait()
        runs += 1
        total += execs
        seed += 1
        if p.returncode != 0 and not stop:
            findings.append({"artifact": art, "exit": p.returncode, "after": total, "what": what})
            # an input of the corpus itself (slow under a loaded machine, or found
            # with an older harness) would stop every restart while loading
            sha = art and os.path.basename(art).split("-", 1)[-1]
            if sha and os.path.isfile(os.path.join(a.corpus, sha)):
                os.remove(os.path.join(a.corpus, sha))
                log.write("==== removed %s from the corpus (kept as %s)\n" % (sha, art))
            print("finding (%s): %s (exit %d) after %d executions: %s" % (mode, art, p.returncode, total, what),
                  flush=True)
    out = {"mode": mode, "seconds": seconds, "seed": first_seed, "executions": total, "processes": runs,
           "findings": findings, "slow": slow}
    out.update(last)
    return out, seed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["structure", "bytes", "both"], required=True)
    ap.add_argument("--seconds", type=int, required=True)
    ap.add_argument("--harness", default=os.path.join(ROOT, "build", "fuzz", "fuzz_compile"))
    ap.add_argument("--corpus", default=os.path.join(ROOT, "build", "fuzz", "campaign", "corpus"))
    ap.add_argument("--artifacts", default=os.path.join(ROOT, "build", "fuzz", "failures"))
    ap.add_argument("--seed", type=int, default=None, help="libFuzzer's seed of the first process (default: drawn)")
    ap.add_argument("--timeout", type=int, default=30,
                    help="seconds per input (default 30: the memory planner's bounded search takes seconds on a "
                         "model of a thousand tensors, several times that instrumented)")
    ap.add_argument("--summary", default=None)
    ap.add_argument("--log", default=None,
                    help="libFuzzer's output goes here (default: build/fuzz/campaign/campaign-MODE.log)")
    ap.add_argument("extra", nargs="*", help="more corpus folders to read (seeds)")
    a = ap.parse_args()
    if not os.path.exists(a.harness):
        sys.exit("campaign.py: %s is missing (make fuzz builds it)" % a.harness)
    os.makedirs(a.corpus, exist_ok=True)
    os.makedirs(a.artifacts, exist_ok=True)
    # the campaign runs a copy: rebuilding build/fuzz/fuzz_compile meanwhile
    # (a fix for what it found) neither stops it nor mixes two harnesses
    run_dir = os.path.join(ROOT, "build", "fuzz", "campaign")
    os.makedirs(run_dir, exist_ok=True)
    harness = os.path.join(run_dir, "fuzz_compile.%d" % os.getpid())
    shutil.copy2(a.harness, harness)
    a.harness = harness
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1, 1 << 30)
    print("campaign: %s, %d s, seed %d, corpus %s, findings into %s" % (
        a.mode, a.seconds, seed, os.path.relpath(a.corpus, ROOT), os.path.relpath(a.artifacts, ROOT)), flush=True)
    logname = a.log or os.path.join(ROOT, "build", "fuzz", "campaign", "campaign-%s.log" % a.mode)
    os.makedirs(os.path.dirname(logname), exist_ok=True)
    log = open(logname, "a")
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))   # finish the summary, then stop
    if a.mode == "both":
        s_time = max(a.seconds * 3 // 4, 1)
        plan = [("structure", s_time), ("bytes", max(a.seconds - s_time, 1))]
    else:
        plan = [(a.mode, a.seconds)]
    results = []
    for mode, seconds in plan:
        if stop:
            break
        out, seed = campaign(a, mode, seconds, seed, log, stop)
        results.append(out)
        text = json.dumps(out)
        print(text, flush=True)
        if a.summary:
            with open(a.summary, "a") as f:
                f.write(text + "\n")
    os.remove(harness)
    findings = [f for r in results for f in r["findings"]]
    print("campaign: %d executions (%s), %d finding(s)" % (
        sum(r["executions"] for r in results),
        ", ".join("%d %s" % (r["executions"], r["mode"]) for r in results), len(findings)))
    seen = {}
    for f in findings:   # one entry per input (a restarted harness may find the same one again)
        seen.setdefault(f["artifact"], []).append(f)
    for art, fs in seen.items():
        art = art and os.path.relpath(art, ROOT)
        print("  %s%s\n      %s\n      replay: build/fuzz/fuzz_compile %s" % (
            art, " (%d times)" % len(fs) if len(fs) > 1 else "", fs[0]["what"] or "exit %d" % fs[0]["exit"], art))
    slow = [u for r in results for u in r["slow"]]
    if slow:
        print("slow inputs (over 10 s, under the time limit; not findings): %s" % ", ".join(
            os.path.relpath(u, ROOT) for u in slow))
    if findings:
        print("Fix each, then add the input to tests/fuzz/regressions/ (and, where onnx2c refuses it, "
              "a case to tests/bad/run_bad.py): docs/FUZZING.md")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
