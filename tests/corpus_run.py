"""Runs tests/conformance/run_node_tests.py on a corpus that a test script
wrote (test_* folders with model.onnx and test_data_set_0), every case
expected to pass: the step test_quant.py, test_strings.py,
test_sequences.py, test_flexattention.py and test_image_decoder.py share."""
import os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_corpus(corpus, names, compiler, jobs=2, flags=(), expected=None):
    """Writes the expected list (all of names), runs the runner with --quiet
    and flags, prints what it reports but its closing line; returns
    (passed, failed), a failed runner counting as one failure at least."""
    expected = expected or os.path.join(corpus, "expected.txt")
    with open(expected, "w") as f:
        f.write("\n".join(names) + "\n")
    p = subprocess.run([sys.executable, os.path.join(HERE, "conformance", "run_node_tests.py"), "--corpus", corpus,
                        "--expected", expected, "--compiler", compiler, "--jobs", str(jobs), "--quiet"] + list(flags),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = p.stdout.splitlines()
    for l in lines:
        if not l.startswith("conformance:"):
            print(l)
    summary = [l for l in lines if l.startswith("# corpus")]
    m = re.search(r"pass (\d+)", summary[-1]) if summary else None
    npass = int(m.group(1)) if m else 0
    nfail = len(names) - npass
    if p.returncode and not nfail:
        nfail = 1
    return npass, nfail


def cpu_has(*names):
    """Whether /proc/cpuinfo lists every one of these CPU flags."""
    try:
        flags = open("/proc/cpuinfo").read().split()
    except OSError:
        return False
    return all(n in flags for n in names)
