#!/usr/bin/env bash
# make demo: compile an example model to C, build it with a small program,
# run it on the example's input and compare with onnxruntime's output.
set -euo pipefail
cd "$(dirname "$0")/../.."
EX=${DEMO_MODEL:-small_convnet}
mkdir -p generated
echo "== build/onnx2c examples/$EX/model.onnx -o generated/$EX.c"
build/onnx2c "examples/$EX/model.onnx" -o "generated/$EX.c"
echo "== wrote generated/$EX.c ($(wc -l < "generated/$EX.c") lines) and generated/$EX.h"
grep -E "^#define .*(_(INPUT|OUTPUT)0_(NAME|DIMS)|_ARENA_SIZE)" "generated/$EX.h" | sed 's/^/   /'
echo "== cc -std=c99 -pedantic -Wall -Wextra -O2 examples/demo/demo.c generated/$EX.c -lm"
cc -std=c99 -pedantic -Wall -Wextra -O2 -Igenerated -DMODEL_HEADER="\"$EX.h\"" -DMODEL="$EX" \
   -o "generated/demo_$EX" examples/demo/demo.c "generated/$EX.c" -lm
echo "== generated/demo_$EX examples/$EX/test_data_set_0"
"generated/demo_$EX" "examples/$EX/test_data_set_0"
