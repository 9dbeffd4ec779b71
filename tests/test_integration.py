#!/usr/bin/env python3
"""The build-system integrations (integration/onnx2c.cmake, integration/
onnx2c.mk) used as a firmware project uses them: examples/firmware built
for a Cortex-M4F with arm-none-eabi-gcc by

  - CMake (examples/firmware/CMakeLists.txt, integration/arm-none-eabi.cmake
    as the toolchain file), onnx2c run at build time by onnx2c_add_model;
  - make (examples/firmware/Makefile including integration/onnx2c.mk);

each linked for QEMU's mps2-an386 (tests/firmware/link.ld, startup.S) and
run under qemu-system-arm: exit 0 (eight inferences ran). A second build
does nothing; a newer onnx2c (its file touched) runs onnx2c again. Each
also links without a board (newlib's nosys stubs).

    python tests/test_integration.py [--compiler build/onnx2c]

Skipped (one skip each, with a note) where cmake, arm-none-eabi-gcc or
qemu-system-arm is missing."""
import argparse, os, shutil, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FW = os.path.join(ROOT, "examples", "firmware")
LD, STARTUP = os.path.join(HERE, "firmware", "link.ld"), os.path.join(HERE, "firmware", "startup.S")


def run(cmd, cwd=None, timeout=600):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


def qemu(elf):
    return run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-semihosting-config", "enable=on,target=native",
                "-kernel", elf], timeout=120)


def with_cmake(compiler, tmp):
    b = os.path.join(tmp, "cmake")
    rc, out = run(["cmake", "-S", FW, "-B", b, "-DCMAKE_TOOLCHAIN_FILE=" + os.path.join(ROOT, "integration",
                   "arm-none-eabi.cmake"), "-DONNX2C_EXECUTABLE=" + compiler, "-DFIRMWARE_LDSCRIPT=" + LD,
                   "-DFIRMWARE_STARTUP=" + STARTUP])
    if rc:
        return False, "cmake (configure): " + out.strip()[-400:]
    rc, out = run(["cmake", "--build", b])
    if rc or "onnx2c" not in out:
        return False, "cmake --build (exit %d, onnx2c run: %s): %s" % (rc, "onnx2c" in out, out.strip()[-400:])
    rc, out = qemu(os.path.join(b, "firmware.elf"))
    if rc:
        return False, "qemu: exit %d %s" % (rc, out.strip()[-200:])
    rc, out = run(["cmake", "--build", b])
    if rc or "onnx2c small_convnet" in out or "onnx2c " in out.replace("onnx2c_firmware", ""):
        return False, "a second build ran onnx2c again: " + out.strip()[-300:]
    time.sleep(1.1)
    os.utime(compiler)
    rc, out = run(["cmake", "--build", b])
    if rc or "small_convnet.c" not in out:
        return False, "a newer onnx2c did not run again: " + out.strip()[-300:]
    nb = os.path.join(tmp, "cmake-nosys")
    rc, out = run(["cmake", "-S", FW, "-B", nb, "-DCMAKE_TOOLCHAIN_FILE=" + os.path.join(ROOT, "integration",
                   "arm-none-eabi.cmake"), "-DONNX2C_EXECUTABLE=" + compiler])
    rc2, out2 = run(["cmake", "--build", nb]) if not rc else (rc, out)
    if rc or rc2:
        return False, "cmake without a board: " + (out + out2).strip()[-300:]
    return True, "CMake: built with onnx2c_add_model, ran on QEMU mps2-an386 (exit 0), rebuilt only when onnx2c changed"


def with_make(compiler, tmp):
    d = os.path.join(tmp, "make")
    os.makedirs(d)
    args = ["make", "-f", os.path.join(FW, "Makefile"), "ONNX2C=" + compiler, "LDSCRIPT=" + LD, "STARTUP=" + STARTUP]
    rc, out = run(args, cwd=d)
    if rc or "--target cortex-m" not in out:
        return False, "make (exit %d): %s" % (rc, out.strip()[-400:])
    rc, out = qemu(os.path.join(d, "firmware.elf"))
    if rc:
        return False, "qemu: exit %d %s" % (rc, out.strip()[-200:])
    rc, out = run(args, cwd=d)
    if rc or "Nothing to be done" not in out:
        return False, "a second make did work: " + out.strip()[-300:]
    time.sleep(1.1)
    os.utime(compiler)
    rc, out = run(args, cwd=d)
    if rc or "--target cortex-m" not in out:
        return False, "a newer onnx2c did not run again: " + out.strip()[-300:]
    d2 = os.path.join(tmp, "make-nosys")
    os.makedirs(d2)
    rc, out = run(["make", "-f", os.path.join(FW, "Makefile"), "ONNX2C=" + compiler], cwd=d2)
    if rc:
        return False, "make without a board: " + out.strip()[-300:]
    return True, "make: built with onnx2c.mk, ran on QEMU mps2-an386 (exit 0), rebuilt only when onnx2c changed"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="o2c_integration_")
    npass = nfail = nskip = 0
    try:
        # a copy of the compiler: the tests touch it to check the rebuild rule
        compiler = os.path.join(tmp, "bin", "onnx2c")
        os.makedirs(os.path.dirname(compiler))
        shutil.copy2(os.path.abspath(a.compiler), compiler)
        for name, fn, tools in (("cmake", with_cmake, ("cmake",)), ("make", with_make, ("make",))):
            missing = [t for t in tools + ("arm-none-eabi-gcc", "qemu-system-arm") if not shutil.which(t)]
            if missing:
                nskip += 1
                print("skip %s: %s not installed (tools/install-deps.sh installs them)" % (name, ", ".join(missing)))
                continue
            ok, msg = fn(compiler, tmp)
            print("%-4s %s: %s" % ("ok" if ok else "FAIL", name, msg), flush=True)
            npass, nfail = npass + ok, nfail + (not ok)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed, %d skipped" % (npass, nfail, nskip))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
