#!/usr/bin/env python3
"""The firmware example on an emulated Cortex-M4: examples/firmware/main.c
with the generated small_convnet.c, built with Debian's gcc-arm-none-eabi
for a Cortex-M4F (hard float), linked for QEMU's mps2-an386 board
(tests/firmware/startup.S and link.ld; newlib with semihosting for the
printed scores and the exit status) and run under qemu-system-arm; the same
sources built for the host give the reference. Every score of the eight
inferences must agree within 1e-5 relative (the Cortex-M4 fuses multiply-adds
where the host build does not), and both runs must exit 0.

The model code itself is built as firmware builds it: -Os -ffreestanding,
and it must not reference the heap or stdio (tests/test_cortexm.py checks
that for every model; here the trace hook prints through semihosting).

    python tests/test_firmware_qemu.py [--compiler build/onnx2c]

Skipped (one skip, with a note) when arm-none-eabi-gcc or qemu-system-arm is
not installed (tools/install-deps.sh installs both). The last line is
'N passed, N failed, N skipped'."""
import argparse, os, shutil, subprocess, sys, tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CPU = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
TRACE_C = r'''#include <stdio.h>
void firmware_trace(const float *s, int n)
{
    for (int i = 0; i < n; i++) printf("%.9g%c", (double)s[i], i + 1 < n ? ' ' : '\n');
}
'''


def run(cmd, cwd=None, timeout=300):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def scores(text):
    return np.array([[float(v) for v in line.split()] for line in text.strip().splitlines()], dtype=np.float64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    args = ap.parse_args()
    missing = [t for t in ("arm-none-eabi-gcc", "qemu-system-arm") if not shutil.which(t)]
    if missing:
        print("skipped: %s not installed (tools/install-deps.sh installs them)" % ", ".join(missing))
        print("0 passed, 0 failed, 1 skipped")
        return 0
    work = tempfile.mkdtemp(prefix="o2c_fw_")
    failed = []
    try:
        rc, out, err = run([args.compiler, os.path.join(ROOT, "examples", "small_convnet", "model.onnx"),
                            "-o", os.path.join(work, "small_convnet.c")])
        if rc != 0:
            failed.append("onnx2c: " + err.strip()[-300:])
            raise StopIteration
        open(os.path.join(work, "trace.c"), "w").write(TRACE_C)
        main_c = os.path.join(ROOT, "examples", "firmware", "main.c")
        # the model as firmware builds it: freestanding, no warning
        rc, out, err = run(["arm-none-eabi-gcc"] + CPU + ["-Os", "-ffreestanding", "-std=c99", "-pedantic", "-Wall",
                           "-Wextra", "-Werror", "-c", "small_convnet.c", "-o", "model.o"], cwd=work)
        if rc != 0:
            failed.append("arm-none-eabi-gcc (model): " + err.strip()[:300])
            raise StopIteration
        rc, out, err = run(["arm-none-eabi-gcc"] + CPU + ["-Os", "-std=c99", "-Wall", "-Wextra", "-Werror",
                           "-DFIRMWARE_TRACE", "-I.", "--specs=rdimon.specs", "-T", os.path.join(HERE, "firmware", "link.ld"),
                           os.path.join(HERE, "firmware", "startup.S"), main_c, "model.o", "trace.c", "-lm",
                           "-o", "fw.elf"], cwd=work)
        if rc != 0:
            failed.append("arm-none-eabi-gcc (link): " + err.strip()[:300])
            raise StopIteration
        rc, out, err = run(["arm-none-eabi-size", "-A", "fw.elf"], cwd=work)
        rc, qout, qerr = run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-semihosting-config",
                              "enable=on,target=native", "-kernel", "fw.elf"], cwd=work, timeout=120)
        if rc != 0:
            failed.append("qemu: exit %d %s %s" % (rc, qout.strip()[-200:], qerr.strip()[-200:]))
            raise StopIteration
        rc, out, err = run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-DFIRMWARE_TRACE", "-I.", main_c,
                            "small_convnet.c", "trace.c", "-lm", "-o", "fw_host"], cwd=work)
        if rc != 0:
            failed.append("gcc (host): " + err.strip()[:300])
            raise StopIteration
        rc, hout, herr = run([os.path.join(work, "fw_host")], cwd=work)
        if rc != 0:
            failed.append("host run: exit %d" % rc)
            raise StopIteration
        got, want = scores(qout), scores(hout)
        if got.shape != (8, 5) or want.shape != (8, 5):
            failed.append("scores: %s on the Cortex-M4, %s on the host (8 inferences x 5 classes expected)"
                          % (got.shape, want.shape))
        elif not np.allclose(got, want, rtol=1e-5, atol=1e-6):
            failed.append("scores differ: max abs %.3g" % np.max(np.abs(got - want)))
        else:
            print("ok   firmware example on QEMU mps2-an386 (Cortex-M4F): 8 inferences, max abs difference to the "
                  "host %.3g" % np.max(np.abs(got - want)))
    except StopIteration:
        pass
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failed:
        print("FAIL firmware example: " + f)
    print("%d passed, %d failed, 0 skipped" % (0 if failed else 1, len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
