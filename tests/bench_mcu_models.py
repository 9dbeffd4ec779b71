#!/usr/bin/env python3
"""make bench-mcu-models: every example (and every model of ../shared/models
and build/real-models that fits) as firmware for a Cortex-M4F, `onnx2c
--target cortex-m`, built with gcc-arm-none-eabi -Os and run under QEMU
(tests/firmware/mcu.py: mps2-an386, `-icount shift=0`), on the test's
input. Per model, one row:

  MACs        the model's FLOPs (onnx2c --report) halved: a multiply-add is
              two FLOPs, so for conv/matmul models this is their
              multiply-accumulates
  insns       instructions the inference executes (QEMU's instruction
              count, read through the board's timer)
  insns/MAC   the two above divided: the cost of the kernels' loops per
              useful multiply-accumulate (what register blocking and
              32-bit index arithmetic lower)
  ldivmod     call sites of the run-time ABI's 64-bit division helpers
              (__aeabi_ldivmod, __aeabi_uldivmod) in the model's object
              (relocations against them in arm-none-eabi-objdump -r)
  flash       .text + .rodata of the model's object
  RAM         .bss + .data of the model's object (the arena)
  max err     the board's outputs against the test's expected outputs
              (largest absolute difference over all outputs)

QEMU counts instructions, not cycles (a 64-bit division helper call is tens
of instructions; a Cortex-M4 load one or two cycles, a taken branch two or
three). Models over --max-macs, or whose arena passes the board's RAM, are
left out (said in the output).

    .venv/bin/python tests/bench_mcu_models.py [--compiler C] [--only a,b]
        [--write-docs [--label TEXT]] [--json FILE]

--write-docs replaces the section of docs/BENCHMARKS.md between
<!-- bench-mcu-models:begin --> and <!-- bench-mcu-models:end -->; --json
writes the rows for a before/after comparison (--compare FILE prints the
ratio of this run's instructions to that file's). Skipped (a note, exit 0)
where gcc-arm-none-eabi or qemu-system-arm is missing."""
import argparse, datetime, glob, json, math, os, re, shutil, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "firmware"))
import numpy as np  # noqa: E402
import bench  # noqa: E402
import bench_quant as bq  # noqa: E402
import mcu  # noqa: E402
import run_models as rm  # noqa: E402

MAX_MACS = 100_000_000     # QEMU runs about 100-300 M instructions a second
RAM_BYTES = 4 * 1024 * 1024 - 64 * 1024   # mps2's SSRAM2 less the stack
DIV64 = re.compile(r"\b__aeabi_u?ldivmod\b")


def test_dirs(only):
    dirs = sorted(glob.glob(os.path.join(ROOT, "examples", "*", "test_data_set_0")))
    for extra in (os.path.join(os.path.dirname(ROOT), "shared", "models"), os.path.join(ROOT, "build", "real-models")):
        dirs += sorted(glob.glob(os.path.join(extra, "*", "test_data_set_0")))
    out = []
    for d in dirs:
        t = os.path.dirname(d)
        if os.path.exists(os.path.join(t, "model.onnx")) and (not only or os.path.basename(t) in only):
            out.append(t)
    return out


def measure(compiler, test, work, max_macs):
    name = os.path.basename(test)
    w = os.path.join(work, name)
    os.makedirs(w)
    ds = os.path.join(test, "test_data_set_0")
    ins = [rm.load_pb(os.path.join(ds, f)) for f in sorted(os.listdir(ds)) if f.startswith("input_")]
    exp = [rm.load_pb(os.path.join(ds, f)) for f in sorted(os.listdir(ds)) if f.startswith("output_")]
    flags = []
    m = bq.onnx.load(os.path.join(test, "model.onnx"), load_external_data=False)
    for vi, a in zip(bq.graph_inputs(m), ins):
        if a.ndim:
            flags += ["--shape", "%s:%s" % (vi.name, "x".join(str(n) for n in a.shape))]
    r = subprocess.run([compiler, os.path.join(test, "model.onnx"), "-o", os.path.join(w, "m.c"), "--name", "m",
                        "--target", "cortex-m", "--report"] + flags, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("onnx2c: " + (r.stderr.strip().splitlines() or ["?"])[-1][:200])
    flops = int(re.search(r"kernels, (\d+) FLOPs", r.stdout).group(1))
    arena = int(re.search(r"arena (\d+) bytes", r.stdout).group(1))
    if flops // 2 > max_macs:
        raise RuntimeError("%d MACs, more than this benchmark emulates (--max-macs %d)" % (flops // 2, max_macs))
    if arena > RAM_BYTES:
        raise RuntimeError("arena %d bytes, more than the board's RAM" % arena)
    mcu.write_harness(os.path.join(w, "main.c"), [rm.raw_bytes(a) for a in ins], [rm.raw_bytes(a).__len__() for a in exp])
    ok, why, sizes = mcu.build(w, "m4")
    if not ok:
        raise RuntimeError(why)
    rel = subprocess.run(["arm-none-eabi-objdump", "-r", "fw.elf.model.o"], cwd=w, capture_output=True, text=True).stdout
    div64 = len(DIV64.findall(rel))
    run = mcu.run_qemu(w, "m4", timeout=1200)
    if not run.ok:
        raise RuntimeError(run.why)
    err = 0.0
    for k, e in enumerate(exp):
        got = np.frombuffer(bytes.fromhex(run.outs.get("out%d" % k, "")), dtype=e.dtype if e.dtype != np.bool_ else np.uint8)
        if got.size != e.size:
            raise RuntimeError("output %d: %d elements, expected %d" % (k, got.size, e.size))
        if e.dtype.kind in "fc":
            d = np.abs(got.astype(np.float64) - e.reshape(-1).astype(np.float64))
            d = np.where(np.isnan(d) & np.isnan(e.reshape(-1)), 0, d)
            err = max(err, float(np.nanmax(d)) if d.size else 0.0)
        elif e.dtype.kind in "iub":
            err = max(err, float(np.max(np.abs(got.astype(np.int64) - e.reshape(-1).astype(np.int64)))) if e.size else 0)
    return dict(name=name, macs=flops // 2, insns=run.insns, div64=div64, flash=sizes["text"] + sizes["rodata"],
                ram=sizes["bss"] + sizes["data"], err=err)


def fmt_n(n):
    return "%.2fM" % (n / 1e6) if n >= 1e6 else "%.1fk" % (n / 1e3)


COLS = ["model", "MACs", "insns", "insns/MAC", "64-bit div calls", "flash bytes", "RAM bytes", "max err"]


def cells(r, before):
    c = [r["name"], fmt_n(r["macs"]), fmt_n(r["insns"]), "%.1f" % (r["insns"] / max(r["macs"], 1)),
         str(r["div64"]), str(r["flash"]), str(r["ram"]), "%.2g" % r["err"]]
    if before is not None:
        b = before.get(r["name"])
        c += [fmt_n(b["insns"]) if b else "-", str(b["div64"]) if b else "-",
              "%.2f" % (r["insns"] / b["insns"]) if b else "-"]
    return c


def docs_section(rows, skipped, command, seconds, before, label):
    cols = COLS + (["insns before", "64-bit div calls before", "insns after/before"] if before is not None else [])
    md = ["<!-- bench-mcu-models:begin -->",
          "<!-- written by `tests/bench_mcu_models.py --write-docs`; edits here are replaced at the next run -->",
          "### Latest run: %s, %s" % (datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                                      bench.git_commit()),
          "",
          "Command: `.venv/bin/python tests/bench_mcu_models.py %s` (`make bench-mcu-models`; %.0f s). `onnx2c "
          "--target cortex-m`, `arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -Os "
          "-ffreestanding`, run under `qemu-system-arm -M mps2-an386 -icount shift=0` on the test's input; "
          "instructions, not cycles (the script's docstring). %s" % (command, seconds, label),
          "",
          "| " + " | ".join(cols) + " |",
          "|---|" + "---:|" * (len(cols) - 1)]
    for r in rows:
        md.append("| " + " | ".join(cells(r, before)) + " |")
    if skipped:
        md += [""] + ["- %s: not measured: %s" % s for s in skipped]
    if before is not None:
        both = [r for r in rows if r["name"] in before]
        if both:
            gm = math.exp(sum(math.log(r["insns"] / before[r["name"]]["insns"]) for r in both) / len(both))
            md += ["", "Geometric mean of instructions after/before over the %d models: %.2f." % (len(both), gm)]
    md.append("<!-- bench-mcu-models:end -->")
    return "\n".join(md) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--only", default="", help="model folder names, comma-separated")
    ap.add_argument("--max-macs", type=int, default=MAX_MACS)
    ap.add_argument("--json", help="write the rows to this file")
    ap.add_argument("--compare", help="a --json file of an earlier run: instructions after/before")
    ap.add_argument("--label", default="", help="a sentence for the docs section (what 'before' was)")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--docs-file", default=os.path.join(ROOT, "docs", "BENCHMARKS.md"))
    args = ap.parse_args()
    ok, why = mcu.available()
    if not ok:
        print("skipped: " + why)
        return 0
    args.compiler = os.path.abspath(args.compiler)
    before = {r["name"]: r for r in json.load(open(args.compare))} if args.compare else None
    t0 = time.time()
    work = tempfile.mkdtemp(prefix="o2c_bench_mcu_models_")
    rows, skipped = [], []
    try:
        only = set(x.strip() for x in args.only.split(",") if x.strip())
        print(" | ".join(COLS), flush=True)
        for t in test_dirs(only):
            try:
                r = measure(args.compiler, t, work, args.max_macs)
            except (RuntimeError, subprocess.TimeoutExpired) as ex:
                why = str(ex)
                if "will not fit in region `CODE'" in why:
                    why = "flash: the model's code and constants pass the board's 4 MB"
                why = " ".join(why.replace("onnx2c: onnx2c: ", "onnx2c: ").split())[:200]
                skipped.append((os.path.basename(t), why))
                print("%s: not measured: %s" % (os.path.basename(t), why), flush=True)
                continue
            rows.append(r)
            print(" | ".join(cells(r, before)), flush=True)
        seconds = time.time() - t0
        if args.json:
            json.dump(rows, open(args.json, "w"), indent=1)
        if args.write_docs:
            flags, skip = [], False
            for a in sys.argv[1:]:   # the command as run, less where the docs go and the label
                if skip or a.startswith("--docs-file") or a.startswith("--label"):
                    skip = a in ("--docs-file", "--label")
                    continue
                flags.append(a)
            bq.write_docs(args.docs_file, docs_section(rows, skipped, " ".join(flags), seconds, before, args.label),
                          "bench-mcu-models")
            print("wrote %s (the bench-mcu-models:begin/end section)" % os.path.relpath(args.docs_file, ROOT))
        print("took %.0f s" % seconds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
