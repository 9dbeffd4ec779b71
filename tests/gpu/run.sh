#!/usr/bin/env bash
# The GPU tests: the model tests (tests/run_models.py --cuda-gpu: every
# examples/ model and ../shared/models, -O2 and -O0, the .cu built with nvcc
# for this machine's GPU, run there and compared with onnxruntime; the
# median time of 50 more device runs noted at -O2) and one ONNX node test
# for each set of ops (tests/conformance/run_node_tests.py --cuda-gpu).
#
#   bash tests/gpu/run.sh          # make test-gpu: this checkout's build/onnx2c
#   bash tests/gpu/run.sh PACK     # a GPU machine without the build tools: the
#                                  # compiler, models and node tests of a pack
#                                  # made by tests/gpu/pack.py (make gpu-pack)
#
# Logs go to $OUT where that is set (a lent GPU machine), else build/gpu-logs.
# PYTHON (default: the project's .venv, else python3) and JOBS (default: the
# number of cores) may be set. Exit status 1 if anything failed.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
PACK=${1:-}
if [ -z "${PYTHON:-}" ]; then
    if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
JOBS=${JOBS:-$(nproc)}
LOG=${OUT:-build/gpu-logs}
mkdir -p "$LOG"

if [ -n "$PACK" ]; then
    COMPILER=$PACK/bin/onnx2c
    export LD_LIBRARY_PATH=$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    MODELS=(examples)
    [ -d "$PACK/models" ] && MODELS+=("$PACK/models")
    CORPUS=(--corpus "$PACK/node-tests")
else
    COMPILER=build/onnx2c
    MODELS=()               # run_models.py's default: examples/ and ../shared/models
    CORPUS=()               # run_node_tests.py's default: build/node-tests
fi
if ! "$COMPILER" --version >/dev/null 2>&1; then
    echo "test-gpu: the compiler $COMPILER does not run here"
    exit 1
fi

echo "== $(date -u +%Y-%m-%dT%H:%MZ) on $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
echo "== $(nvcc --version | tail -1); $("$COMPILER" --version 2>&1 | head -1)"

# the C leg keeps its sanitizers where this machine's gcc has them
CC=()
probe=$(mktemp)
if ! { echo 'int main(void) { return 0; }' | gcc -fsanitize=address,undefined -x c - -o "$probe" 2>/dev/null && "$probe"; }; then
    CC=(--cc gcc)
    echo "note: gcc has no ASan/UBSan here: the C leg is built without them"
fi
rm -f "$probe"

set -o pipefail
"$PYTHON" tests/run_models.py --cuda-gpu --repeat 50 --compiler "$COMPILER" -j "$JOBS" "${CC[@]}" "${MODELS[@]}" 2>&1 |
    tee "$LOG/models.log"
rc_models=$?
"$PYTHON" tests/conformance/run_node_tests.py --cuda-gpu --one-per-op --quiet --compiler "$COMPILER" --jobs "$JOBS" \
    "${CORPUS[@]}" 2>&1 | tee "$LOG/node-tests.log"
rc_nodes=$?

echo "== models:     $(tail -1 "$LOG/models.log")"
echo "== node tests: $(tail -1 "$LOG/node-tests.log")"
grep -h "^FAIL" "$LOG/models.log" | cut -c1-300
[ $rc_models -eq 0 ] && [ $rc_nodes -eq 0 ]
