#!/usr/bin/env python3
"""Snapshots of what the compiler writes, to show that a change to the
compiler's structure leaves the generated code as it was.

    python tools/snapshot.py --out DIR [--compiler C] MODEL_DIRS...   # write a snapshot
    python tools/snapshot.py --compare A B                            # list the differences

Each MODEL_DIR holds model folders (model.onnx and test_data_set_0/, the
ONNX backend test layout: examples/, ../shared/models, build/real-models,
a node-test corpus). Every model is compiled in each configuration of
CONFIGS with the flags tests/run_models.py would give it (--shape/--dim
from its inputs, --bind where the compiler asks for it); the files written
(.c/.h/.cu, the report) and the compiler's exit status and messages are
kept as DIR/FOLDER/MODEL/CONFIG/. --compare prints every file that differs
or exists on one side only, and exits 1 if there is one.

This is a developer's tool (not a test): the snapshot of the tree before a
change is made with that tree's compiler."""
import argparse, filecmp, os, re, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

CONFIGS = {
    "c": ["-o", "m.c"],
    "c_O0": ["-O0", "-o", "m.c"],
    "c_O1": ["-O1", "-o", "m.c"],
    "cu": ["-o", "m.cu"],
    "avx2": ["--target", "avx2", "-o", "m.c"],
    "cm": ["--target", "cortex-m", "-o", "m.c"],
    "report": ["--report=report.txt"],
}
QUICK = ("c", "cu", "cm")


def model_flags(mdir):
    import onnx
    from onnx import numpy_helper
    from run_models import shape_flags
    m = onnx.load(os.path.join(mdir, "model.onnx"), load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    gin = [i for i in m.graph.input if i.name not in inits]
    ds = os.path.join(mdir, "test_data_set_0")
    ins = []
    for k, vi in enumerate(gin):
        p = os.path.join(ds, "input_%d.pb" % k)
        if not os.path.exists(p) or not vi.type.HasField("tensor_type"):
            return [], gin, ds
        t = onnx.TensorProto()
        with open(p, "rb") as f:
            t.ParseFromString(f.read())
        ins.append(numpy_helper.to_array(t))
    return shape_flags(gin, ins), gin, ds


def compile_one(compiler, mdir, out, cfg, flags, gin, ds):
    os.makedirs(out, exist_ok=True)
    cmd = [compiler, os.path.join(mdir, "model.onnx"), "--name", "m"] + CONFIGS[cfg] + flags
    for attempt in range(2):
        p = subprocess.run(cmd, cwd=out, capture_output=True, text=True, timeout=600)
        bound = re.findall(r"--bind ([^=\s]+)=", p.stderr)
        if p.returncode == 0 or not bound or attempt:
            break
        names = [vi.name for vi in gin]
        for b in dict.fromkeys(bound):
            if b in names:
                cmd += ["--bind", "%s=%s" % (b, os.path.join(ds, "input_%d.pb" % names.index(b)))]
    msg = p.stderr.replace(ROOT, "ROOT")
    with open(os.path.join(out, "status.txt"), "w") as f:
        f.write("rc %d\n%s" % (p.returncode, msg))


def snapshot(args):
    jobs = []
    for d in args.dirs:
        folder = os.path.basename(os.path.normpath(d))
        for name in sorted(os.listdir(d)):
            mdir = os.path.abspath(os.path.join(d, name))
            if not os.path.exists(os.path.join(mdir, "model.onnx")):
                continue
            jobs.append((folder, name, mdir))

    def run(job):
        folder, name, mdir = job
        try:
            flags, gin, ds = model_flags(mdir)
        except Exception as e:   # a model onnx cannot read: the compiler's message is the snapshot
            flags, gin, ds = [], [], ""
        for cfg in (QUICK if args.quick else CONFIGS):
            compile_one(args.compiler, mdir, os.path.join(args.out, folder, name, cfg), cfg, flags, gin, ds)

    with ThreadPoolExecutor(args.jobs) as ex:
        for i, _ in enumerate(ex.map(run, jobs)):
            if (i + 1) % 200 == 0:
                print("%d/%d" % (i + 1, len(jobs)), file=sys.stderr)
    print("%d models into %s" % (len(jobs), args.out))


def compare(a, b):
    diffs = []
    for root, dirs, files in os.walk(a):
        rel = os.path.relpath(root, a)
        other = os.path.join(b, rel)
        for f in files:
            pb = os.path.join(other, f)
            if not os.path.exists(pb):
                diffs.append("only in %s: %s" % (a, os.path.join(rel, f)))
            elif not filecmp.cmp(os.path.join(root, f), pb, shallow=False):
                diffs.append("differs: %s" % os.path.join(rel, f))
    for root, dirs, files in os.walk(b):
        rel = os.path.relpath(root, b)
        for f in files:
            if not os.path.exists(os.path.join(a, rel, f)):
                diffs.append("only in %s: %s" % (b, os.path.join(rel, f)))
    for d in sorted(diffs):
        print(d)
    print("%d differences" % len(diffs))
    return 1 if diffs else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--out")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"))
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--quick", action="store_true", help="only the configurations " + ", ".join(QUICK))
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if not args.out or not args.dirs:
        ap.error("--out DIR and model folders, or --compare A B")
    args.compiler = os.path.abspath(args.compiler)
    snapshot(args)


if __name__ == "__main__":
    main()
