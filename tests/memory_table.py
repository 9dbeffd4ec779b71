#!/usr/bin/env python3
"""The memory table of docs/MEMORY.md: per example and real model, what the
generated code needs, from onnx2c's own --report (the `memory:` line) and,
where Debian's arm-none-eabi-gcc is installed, the Cortex-M4 object sizes.

Columns: constants (weights and tables, bytes), the arena of the current
planner, the liveness lower bound of its schedule (the most tensor bytes live
at one call: no plan of this order is smaller; the arena also aligns every
tensor to 64 bytes), their ratio, the arena of one buffer per tensor, the
arena recorded in tests/memory_baseline.tsv (the planner before the memory
work of issue 8), and .text/.rodata/.data/.bss of the model compiled with
`arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -Os`.

    python tests/memory_table.py [--compiler build/onnx2c] [--write-docs] [--write-baseline] [DIR...]

Default folders: examples/*, build/real-models/* (tests/models/fetch.py),
../shared/models/* when present. A measurement, not a test: it asserts nothing."""
import argparse, glob, os, re, subprocess, sys, tempfile

import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_models as rm  # noqa: E402

ROOT = rm.ROOT
BASELINE = os.path.join(ROOT, "tests", "memory_baseline.tsv")
DOC = os.path.join(ROOT, "docs", "MEMORY.md")
MEM = re.compile(r"^memory: arena (\d+) bytes; liveness lower bound of this schedule (\d+) bytes.*?"
                 r"one buffer per tensor (\d+) bytes; constants (\d+) bytes", re.M)
ARM = ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-Os",
       "-std=c99", "-ffunction-sections", "-fdata-sections", "-c"]


def folders(args):
    if args.dirs:
        return args.dirs
    out = sorted(os.path.dirname(m) for m in glob.glob(os.path.join(ROOT, "examples", "*", "model.onnx")))
    out += sorted(os.path.dirname(m) for m in glob.glob(os.path.join(ROOT, "build", "real-models", "*", "model.onnx")))
    out += sorted(os.path.dirname(m) for m in glob.glob(os.path.join(rm.SHARED_MODELS, "*", "model.onnx")))
    return out


def flags_of(test):
    model = onnx.load(os.path.join(test, "model.onnx"), load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    gin = [i for i in model.graph.input if i.name not in inits]
    sets = sorted(glob.glob(os.path.join(test, "test_data_set_*")))
    if not sets:
        return []
    ins = [rm.load_pb(os.path.join(sets[0], "input_%d.pb" % k)) for k in range(len(gin))]
    return rm.shape_flags(gin, ins)


def arm_sizes(c_file, work):
    """{section: bytes} of the Cortex-M4 object, or None without the toolchain"""
    obj = os.path.join(work, "m.o")
    r = subprocess.run(ARM + [c_file, "-o", obj], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    r = subprocess.run(["arm-none-eabi-size", "-A", obj], capture_output=True, text=True)
    sizes = {".text": 0, ".rodata": 0, ".data": 0, ".bss": 0}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1].isdigit():
            for sec in sizes:
                if parts[0] == sec or parts[0].startswith(sec + "."):
                    sizes[sec] += int(parts[1])
    return sizes


def measure(args, test):
    name = os.path.basename(test)
    if os.path.exists(os.path.join(test, "expect_error.txt")):
        return None
    with tempfile.TemporaryDirectory(prefix="o2c_mem_") as work:
        c = os.path.join(work, "m.c")
        rep = os.path.join(work, "report.txt")
        cmd = [args.compiler, os.path.join(test, "model.onnx"), "-o", c, "--name", "m", "--report=" + rep] + flags_of(test)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            bound = sorted(set(re.findall(r"--bind ([^\s=]+)=", r.stderr)))
            if not bound:
                return dict(name=name, error=r.stderr.strip().splitlines()[-1][:120] if r.stderr.strip() else "failed")
            sets = sorted(glob.glob(os.path.join(test, "test_data_set_*")))
            model = onnx.load(os.path.join(test, "model.onnx"), load_external_data=False)
            inits = {i.name for i in model.graph.initializer}
            names = [i.name for i in model.graph.input if i.name not in inits]
            for b in bound:
                cmd += ["--bind", "%s=%s" % (b, os.path.join(sets[0], "input_%d.pb" % names.index(b)))]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                return dict(name=name, error="refused")
        m = MEM.search(open(rep).read())
        row = dict(name=name, arena=int(m.group(1)), bound=int(m.group(2)), naive=int(m.group(3)),
                   consts=int(m.group(4)))
        row["arm"] = arm_sizes(c, work) if args.arm else None
        return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--write-docs", action="store_true", help="rewrite the table in docs/MEMORY.md")
    ap.add_argument("--write-baseline", action="store_true", help="record today's arenas in tests/memory_baseline.tsv")
    ap.add_argument("--no-arm", dest="arm", action="store_false", help="skip the Cortex-M4 object sizes")
    ap.add_argument("dirs", nargs="*")
    args = ap.parse_args()
    if args.arm and subprocess.run(["which", "arm-none-eabi-gcc"], capture_output=True).returncode != 0:
        args.arm = False
    base = {}
    if os.path.exists(BASELINE):
        for line in open(BASELINE):
            if line.strip() and not line.startswith("#"):
                k, v = line.split()
                base[k] = int(v)
    rows = [r for r in (measure(args, t) for t in folders(args)) if r]
    if args.write_baseline:
        base = {r["name"]: r["arena"] for r in rows if "error" not in r}
    head = ("| model | constants | arena | liveness bound | arena / bound | one buffer per tensor | arena before (baseline) "
            "| M4 .text | M4 .rodata | M4 .data | M4 .bss |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    lines = []
    for r in rows:
        if "error" in r:
            lines.append("| %s | %s |  |  |  |  |  |  |  |  |  |" % (r["name"], r["error"].replace("|", "/")))
            continue
        ratio = "%.3f" % (r["arena"] / r["bound"]) if r["bound"] else "-"
        arm = r["arm"] or {}
        lines.append("| %s | %d | %d | %d | %s | %d | %s | %s | %s | %s | %s |" % (
            r["name"], r["consts"], r["arena"], r["bound"], ratio, r["naive"],
            base.get(r["name"], "-"), *(arm.get(s, "-") for s in (".text", ".rodata", ".data", ".bss"))))
    table = head + "\n".join(lines) + "\n"
    sys.stdout.write(table)
    if args.write_baseline:
        with open(BASELINE, "w") as f:
            f.write("# model  arena bytes: the planner before issue 8 (tests/memory_table.py --write-baseline)\n")
            for r in rows:
                if "error" not in r:
                    f.write("%s %d\n" % (r["name"], r["arena"]))
    if args.write_docs:
        text = open(DOC).read() if os.path.exists(DOC) else ""
        start, end = "<!-- memory-table -->\n", "<!-- /memory-table -->\n"
        if start in text and end in text:
            text = text[:text.index(start) + len(start)] + table + text[text.index(end):]
        else:
            text += "\n" + start + table + end
        open(DOC, "w").write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
