#!/usr/bin/env bash
# Installs the Debian packages onnx2c and its tests need, if missing.
set -e
need=()
command -v protoc-c >/dev/null || need+=(protobuf-c-compiler)
[ -f /usr/include/protobuf-c/protobuf-c.h ] || need+=(libprotobuf-c-dev)
[ -f /usr/include/cmocka.h ] || need+=(libcmocka-dev)
command -v cc >/dev/null || need+=(gcc)
command -v make >/dev/null || need+=(make)
command -v python3 >/dev/null || need+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
# tests only: the Cortex-M4 build of the generated C (tests/test_cortexm.py)
command -v arm-none-eabi-gcc >/dev/null || need+=(gcc-arm-none-eabi)
[ -f /usr/lib/arm-none-eabi/newlib/libc.a ] || [ -f /usr/lib/arm-none-eabi/lib/libc.a ] || need+=(libnewlib-arm-none-eabi)
# tests only: the generated C's NEON path, compiled for AArch64 and run under
# CMake: the build-system integration's test (tests/test_integration.py)
command -v cmake >/dev/null || need+=(cmake)
# qemu's user-mode emulator (tests/test_isa.py)
command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu)
[ -d /usr/aarch64-linux-gnu/lib ] || need+=(libc6-dev-arm64-cross)
command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
# tests only: the compiler and the generated code under memcheck (tests/test_valgrind.py)
command -v valgrind >/dev/null || need+=(valgrind)
# tests only: the fuzzing harness (tests/fuzz/, tests/test_fuzz.py) needs clang
# and its libFuzzer runtime (Debian: libclang-rt-N-dev for clang N)
command -v clang >/dev/null || need+=(clang)
if ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1; then
  clang_v=$(clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9][0-9]*\).*/\1/p' | head -1)
  need+=("libclang-rt-${clang_v:-14}-dev")
fi
# tests only: the firmware example run on an emulated Cortex-M4
# (tests/test_firmware_qemu.py); without its recommends (a GUI stack)
bare=()
command -v qemu-system-arm >/dev/null || bare+=(qemu-system-arm)
[ ${#need[@]} -eq 0 ] && [ ${#bare[@]} -eq 0 ] && exit 0
echo "installing: ${need[*]} ${bare[*]}"
SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
[ ${#need[@]} -eq 0 ] || $SUDO apt-get install -y -qq "${need[@]}"
[ ${#bare[@]} -eq 0 ] || $SUDO apt-get install -y -qq --no-install-recommends "${bare[@]}"
