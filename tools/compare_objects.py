#!/usr/bin/env python3
"""Compares what two onnx2c compilers' generated C becomes: each model is
compiled by both (the flags tools/snapshot.py gives it), built with the
flags of `make bench` (gcc -O3 -march=native), and the disassembled code
(objdump -d) and the sizes (text/data/bss) are compared. Identical code
means identical speed and size, whatever the C text says (named
parameters, comments, the runtime's helpers).

    python tools/compare_objects.py --old OLD_ONNX2C [--new build/onnx2c] [--work DIR] MODEL_DIRS...

MODEL_DIRS hold model folders (model.onnx, test_data_set_0/): examples/,
../shared/models. Prints a line a model; exits 1 if any differs."""
import argparse, glob, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from snapshot import model_flags  # noqa: E402

CFLAGS = ["-O3", "-march=native", "-std=c99", "-w"]


def build(compiler, model_dir, flags, out):
    """(disassembly, [text, data, bss]) or (None, the compiler's message)."""
    os.makedirs(out, exist_ok=True)
    r = subprocess.run([compiler, os.path.join(model_dir, "model.onnx")] + flags + ["-o", os.path.join(out, "m.c")],
                       capture_output=True, text=True)
    if r.returncode:
        return None, (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
    obj = os.path.join(out, "m.o")
    subprocess.run(["gcc"] + CFLAGS + ["-c", os.path.join(out, "m.c"), "-o", obj], check=True)
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", obj], capture_output=True, text=True).stdout
    size = subprocess.run(["size", obj], capture_output=True, text=True).stdout.splitlines()[1].split()[:3]
    return "\n".join(dis.splitlines()[2:]), size   # without the line naming the file


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--work", default=None, help="where the files go (default: a temporary folder)")
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="o2c_objcmp_")
    differ = 0
    for d in args.dirs:
        for md in sorted(glob.glob(os.path.join(d, "*", ""))):
            if not os.path.exists(os.path.join(md, "model.onnx")):
                continue
            name = os.path.basename(md.rstrip("/"))
            flags = list(model_flags(md)[0])
            old = build(args.old, md, flags, os.path.join(work, name, "old"))
            new = build(args.new, md, flags, os.path.join(work, name, "new"))
            if old[0] is None and new[0] is None:
                print("%-28s refused by both: %s" % (name, new[1][:100]))
                continue
            same = old[0] == new[0]
            differ += not same
            print("%-28s %-16s text/data/bss old %s new %s" % (name, "identical code" if same else "CODE DIFFERS",
                  "/".join(old[1]) if old[0] is not None else "refused", "/".join(new[1]) if new[0] is not None else "refused"),
                  flush=True)
    print("%d model(s) differ (files in %s)" % (differ, work))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
