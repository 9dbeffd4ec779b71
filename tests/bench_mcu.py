#!/usr/bin/env python3
"""make bench-mcu: the quantized models of make bench-quant (the same
entries: tests/bench_quant.py's prepare) as firmware for a Cortex-M,
`onnx2c --target cortex-m`, built with gcc-arm-none-eabi -Os and run on
QEMU's emulated boards (tests/firmware/mcu.py), beside the float original
built the same way. Per model, one row:

  MACs          the int8 build's multiply-accumulates (onnx2c --report's
                FLOPs of the integer Conv/MatMul/Gemm calls, halved)
  flash i8/f32  .text + .rodata of the model's object (code, weights and
                tables), int8 build / fp32 build (Cortex-M4F, -Os)
  RAM i8/f32    .bss + .data of the object (the arena and the model's
                state; the harness's input and output buffers apart)
  insns         instructions an inference executes (QEMU -icount, read
                through the board's timer: tests/firmware/mcu.py), on the
                Cortex-M4F: fp32 build; int8 build on the DSP path (SMLAD,
                SXTB16: __ARM_FEATURE_DSP); int8 build with -DO2C_NO_DSP
                (the same kernels in portable C, as a core without the DSP
                extension runs them); and on a Cortex-M3 (no DSP, no FPU:
                the portable C and software float), the int8 build
  /MAC          the DSP build's instructions per multiply-accumulate, the
                whole inference, and the largest integer layer's alone (a
                --profile build whose timer is the instruction count)

QEMU counts instructions, not cycles: on a Cortex-M4 SMLAD and SXTB16 take
one cycle, a load one or two, a taken branch two or three; the counts
compare code paths, a board measures time. Every build's outputs must be
the others' byte for byte (the DSP and portable paths compute the same
integers; the fp32 build is not compared). Models over MAX_MACS
multiply-accumulates or whose arena passes the board's RAM are left out
(said in the output).

    .venv/bin/python tests/bench_mcu.py [--only NAME,...] [--write-docs]

--write-docs replaces the section of docs/BENCHMARKS.md between
<!-- bench-mcu:begin --> and <!-- bench-mcu:end -->. Skipped (a note,
exit 0) where gcc-arm-none-eabi or qemu-system-arm is missing."""
import argparse, datetime, math, os, re, shutil, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "firmware"))
import bench  # noqa: E402
import bench_quant as bq  # noqa: E402
import mcu  # noqa: E402
import run_models as rm  # noqa: E402

MAX_MACS = 40_000_000      # QEMU runs about 100-300 M instructions a second
RAM_BYTES = 4 * 1024 * 1024 - 64 * 1024   # mps2's SSRAM2 less the stack
INT_KERNEL = re.compile(r"^o2c_(qmcu|qmcudw|qconv|qmatmul|qgemm)_")


def onnx2c(compiler, model, out, *flags):
    r = subprocess.run([compiler, model, "-o", out, "--name", "m", "--target", "cortex-m"] + list(flags),
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("onnx2c: " + (r.stderr.strip().splitlines() or ["?"])[-1][:200])
    return r.stdout


def int_macs(report):
    """the multiply-accumulates of the integer layers in a --report"""
    macs = 0
    for line in report.splitlines():
        parts = line.split()
        if len(parts) > 6 and parts[0].isdigit() and INT_KERNEL.match(parts[1]):
            flops = next((p for p in parts[3:] if p.isdigit()), None)
            if flops:
                macs += int(flops) // 2
    return macs


def build_run(work, cpu, extra=(), profile=False):
    ok, why, sizes = mcu.build(work, cpu, extra=list(extra) + (mcu.PROFILE_FLAGS if profile else []),
                               elf=cpu + ("p" if profile else "") + "".join(x.strip("-") for x in extra) + ".elf")
    if not ok:
        raise RuntimeError(why)
    run = mcu.run_qemu(work, cpu, elf=cpu + ("p" if profile else "") + "".join(x.strip("-") for x in extra) + ".elf")
    if not run.ok:
        raise RuntimeError(run.why)
    return sizes, run


def shapes(model, arrays):
    """--shape flags binding each graph input to its test array's shape"""
    m = bq.onnx.load(model, load_external_data=False)
    flags = []
    for vi, a in zip(bq.graph_inputs(m), arrays):
        flags += ["--shape", "%s:%s" % (vi.name, "x".join(str(n) for n in a.shape) or "1")]
    return flags


def measure(e, compiler, work):
    res = {}
    ins = [rm.raw_bytes(a) for a in e.ins]
    for kind, d in (("q", e.qd), ("f", e.fd)):
        w = os.path.join(work, e.name, kind)
        os.makedirs(w)
        bind = shapes(os.path.join(d, "model.onnx"), e.ins)
        report = onnx2c(compiler, os.path.join(d, "model.onnx"), os.path.join(w, "m.c"), "--report", *bind)
        if kind == "q":
            res["macs"] = int_macs(report)
            if res["macs"] > MAX_MACS:
                raise RuntimeError("%d MACs, more than this benchmark emulates (%d)" % (res["macs"], MAX_MACS))
        arena = int(re.search(r"arena (\d+) bytes", report).group(1))
        if arena > RAM_BYTES:
            raise RuntimeError("arena %d bytes, more than the board's RAM" % arena)
        outs = bq.out_bytes_of(d, e.ins)
        mcu.write_harness(os.path.join(w, "main.c"), ins, outs)
        if kind == "f":
            sizes, run = build_run(w, "m4")
            res["f"] = (sizes, run.insns)
            continue
        sizes, dsp = build_run(w, "m4")
        _, nodsp = build_run(w, "m4", ["-DO2C_NO_DSP"])
        _, m3 = build_run(w, "m3")
        for what, r in (("M4 without DSP", nodsp), ("M3", m3)):
            if r.outs != dsp.outs:
                raise RuntimeError("the %s build's outputs differ from the DSP build's" % what)
        onnx2c(compiler, os.path.join(d, "model.onnx"), os.path.join(w, "m.c"), "--profile", *bind)
        _, prof = build_run(w, "m4", profile=True)
        layers = [(k, node, fl // 2, n) for k, node, fl, n in prof.rows if INT_KERNEL.match(k) and fl > 0]
        big = max(layers, key=lambda l: l[2]) if layers else None
        res["q"] = (sizes, dsp.insns, nodsp.insns, m3.insns, big)
    return res


def fmt_k(n):
    return "%.1fM" % (n / 1e6) if n >= 1e6 else "%.1fk" % (n / 1e3)


def cells(e):
    r = e.res
    qs, dsp, nodsp, m3, big = r["q"]
    fs, finsns = r["f"]
    qflash, fflash = qs["text"] + qs["rodata"], fs["text"] + fs["rodata"]
    qram, fram = qs["bss"] + qs["data"], fs["bss"] + fs["data"]
    return [e.name, fmt_k(r["macs"]),
            "%d/%d %.2f" % (qflash, fflash, qflash / fflash), "%d/%d %.2f" % (qram, fram, qram / fram),
            fmt_k(finsns), fmt_k(dsp), fmt_k(nodsp), fmt_k(m3), "%.2f" % (finsns and dsp / finsns),
            "%.2f" % (dsp / max(r["macs"], 1)),
            "%s %.2f" % (big[0], big[3] / max(big[2], 1)) if big else "-"]


COLS = ["model", "MACs", "flash i8/f32 bytes", "RAM i8/f32 bytes", "insns fp32 M4", "insns i8 M4 DSP",
        "insns i8 M4 C", "insns i8 M3", "i8 DSP / fp32", "insns/MAC i8 DSP", "largest int layer insns/MAC"]


def docs_section(rows, skipped, command, seconds):
    md = ["<!-- bench-mcu:begin -->",
          "<!-- written by `tests/bench_mcu.py --write-docs`; edits here are replaced at the next run -->",
          "### Latest run: %s, %s" % (datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                                      bench.git_commit()),
          "",
          "Command: `.venv/bin/python tests/bench_mcu.py %s` (`make bench-mcu`; %.0f s). `onnx2c --target "
          "cortex-m`, `arm-none-eabi-gcc -Os -ffreestanding` (Cortex-M4F: `-mcpu=cortex-m4 -mfloat-abi=hard "
          "-mfpu=fpv4-sp-d16`; Cortex-M3: `-mcpu=cortex-m3 -mfloat-abi=soft`), run under `qemu-system-arm -icount "
          "shift=0` on mps2-an386 / mps2-an385; instructions, not cycles (tests/bench_mcu.py's docstring). Flash: "
          ".text + .rodata of the model's object; RAM: .bss + .data. Every int8 build printed the same output "
          "bytes." % (command, seconds),
          "",
          "| " + " | ".join(COLS) + " |",
          "|---|" + "---:|" * (len(COLS) - 1)]
    for c in rows:
        md.append("| " + " | ".join(c) + " |")
    if skipped:
        md += [""] + ["- %s: not measured: %s" % s for s in skipped]
    if rows:
        gm = math.exp(sum(math.log(float(c[8])) for c in rows) / len(rows))
        md += ["", "Geometric mean of the int8 DSP build's instructions over the fp32 build's: %.2f." % gm]
    md.append("<!-- bench-mcu:end -->")
    return "\n".join(md) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("--only", default="", help="model names, comma-separated (as make bench-quant's)")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--docs-file", default=os.path.join(ROOT, "docs", "BENCHMARKS.md"))
    args = ap.parse_args()
    ok, why = mcu.available()
    if not ok:
        print("skipped: " + why)
        return 0
    args.compiler = os.path.abspath(args.compiler)
    t0 = time.time()
    work = tempfile.mkdtemp(prefix="o2c_bench_mcu_")
    rows, skipped = [], []
    try:
        bq.ort.set_default_logger_severity(3)
        only = set(x.strip() for x in args.only.split(",") if x.strip())
        entries = bq.prepare(work, only)
        print(" | ".join(COLS), flush=True)
        for e in entries:
            if e.why:
                skipped.append((e.name, e.why))
                print("%s: not measured: %s" % (e.name, e.why), flush=True)
                continue
            try:
                e.res = measure(e, args.compiler, work)
            except (RuntimeError, subprocess.TimeoutExpired) as ex:
                skipped.append((e.name, str(ex)[:200]))
                print("%s: not measured: %s" % (e.name, str(ex)[:200]), flush=True)
                continue
            rows.append(cells(e))
            print(" | ".join(rows[-1]), flush=True)
        seconds = time.time() - t0
        if args.write_docs:
            flags = [a for a in sys.argv[1:] if not a.startswith("--docs-file")]
            bq.write_docs(args.docs_file, docs_section(rows, skipped, " ".join(flags), seconds), "bench-mcu")
            print("wrote %s (the bench-mcu:begin/end section)" % os.path.relpath(args.docs_file, ROOT))
        print("took %.0f s" % seconds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
