#!/usr/bin/env python3
"""Runs a fuzzing campaign of build/fuzz/fuzz_compile for a given time and
counts it: the harness runs in one process at a time; when it stops on a
finding (crash, hang, leak, sanitizer report, out of memory) the input is
kept in the artifacts folder and the harness starts again on the grown
corpus, until the time is up. Prints (and appends to --summary) the total
executions, the final coverage (libFuzzer's cov and ft), the corpus size and
the findings.

    python tests/fuzz/campaign.py --mode structure|bytes --seconds N
        [--corpus build/fuzz/campaign/corpus] [--artifacts build/fuzz/campaign/artifacts]
        [--seed N] [--summary FILE] [EXTRA_CORPUS_DIR ...]

--mode bytes sets O2C_FUZZ_BYTES=1 (libFuzzer's byte-level mutations only);
structure uses the structure-aware mutator (tests/fuzz/mutator.c). SIGTERM
stops the harness (SIGINT: libFuzzer prints its statistics) and still
writes the summary."""
import argparse, json, os, re, signal, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["structure", "bytes"], required=True)
    ap.add_argument("--seconds", type=int, required=True)
    ap.add_argument("--harness", default=os.path.join(ROOT, "build", "fuzz", "fuzz_compile"))
    ap.add_argument("--corpus", default=os.path.join(ROOT, "build", "fuzz", "campaign", "corpus"))
    ap.add_argument("--artifacts", default=os.path.join(ROOT, "build", "fuzz", "campaign", "artifacts"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--summary", default=None)
    ap.add_argument("--log", default=None, help="libFuzzer's output goes here (default: the artifacts folder)")
    ap.add_argument("extra", nargs="*", help="more corpus folders to read (seeds)")
    a = ap.parse_args()
    os.makedirs(a.corpus, exist_ok=True)
    os.makedirs(a.artifacts, exist_ok=True)
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "detect_leaks=1"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1"
    if a.mode == "bytes":
        env["O2C_FUZZ_BYTES"] = "1"
    log = open(a.log or os.path.join(a.artifacts, "campaign-%s.log" % a.mode), "a")
    end = time.time() + a.seconds
    total, runs, findings = 0, 0, []
    last = {}
    seed = a.seed
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))   # finish the summary, then stop
    while time.time() < end - 5 and not stop:
        left = int(end - time.time())
        cmd = [a.harness, "-max_total_time=%d" % left, "-timeout=10", "-rss_limit_mb=2048", "-max_len=65536",
               "-print_final_stats=1", "-seed=%d" % seed, "-dict=" + os.path.join(ROOT, "tests", "fuzz", "onnx.dict"),
               "-artifact_prefix=" + a.artifacts.rstrip("/") + "/", a.corpus] + a.extra
        log.write("==== %s %s\n" % (time.strftime("%H:%M:%S"), " ".join(cmd)))
        log.flush()
        p = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             errors="replace")
        execs = 0
        art = None
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
            if m:
                art = m.group(1)
        p.wait()
        runs += 1
        total += execs
        seed += 1
        if p.returncode != 0 and not stop:
            findings.append({"artifact": art, "exit": p.returncode, "after": total})
            print("finding: %s (exit %d) after %d executions" % (art, p.returncode, total), flush=True)
    out = {"mode": a.mode, "seconds": a.seconds, "executions": total, "processes": runs, "findings": findings}
    out.update(last)
    text = json.dumps(out)
    print(text)
    if a.summary:
        with open(a.summary, "a") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
