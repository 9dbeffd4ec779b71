/* libFuzzer harness over onnx2c's whole compile path, in memory:
 * load (from the input's bytes), infer, passes, schedule, lower, plan and
 * emission into /dev/null. A refusal (fail(), a longjmp through diag_jmp)
 * is a normal return; pool_release() frees everything the compiler
 * allocated, so LeakSanitizer sees every leak.
 *
 * Built by `make fuzz` (build/fuzz/fuzz_compile) with
 * -fsanitize=fuzzer,address,undefined. The structure-aware mutator is in
 * mutator.c; docs/FUZZING.md says how to run a campaign. */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* a path whose folder does not exist: external data never opens a file */
#define FUZZ_PATH "/nonexistent-onnx2c-fuzz/model.onnx"

static FILE *sink(void)
{
    static FILE *f;
    static char buf[1 << 16];
    if (!f) {
        f = fopen("/dev/null", "wb");
        if (!f) abort();
        setvbuf(f, buf, _IOFBF, sizeof buf);
    }
    return f;
}

/* The options an input compiles with come from a hash of its bytes, so
 * that one input always takes the same path: mostly the C target at -O2,
 * sometimes -O0/-O1, CUDA, another C target, the report, --emit-onnx,
 * --dot. */
static uint32_t hash_bytes(const uint8_t *d, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ d[i]) * 16777619u;
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static Options o;
    static Lowering L;
    memset(&o, 0, sizeof o);
    memset(&L, 0, sizeof L);
    uint32_t h = hash_bytes(data, size);
    o.input = FUZZ_PATH;
    o.output = "fuzz_model.c";
    o.header = "fuzz_model.h";
    o.name = "fuzz_model";
    o.opt_level = (h & 7) == 0 ? 0 : (h & 7) == 1 ? 1 : 2;
    int extra = (h >> 3) & 15;                 /* 0: report, 1: --emit-onnx, 2: --dot */
    if (((h >> 7) & 7) == 0) o.cuda = 1;
    o.target = o.cuda ? TARGET_CUDA : (int)((h >> 10) % 5);   /* TARGET_C .. TARGET_CORTEX_M */
    if (!o.cuda && ((h >> 13) & 15) == 0) o.caller_arena = 1;
    diag_file = FUZZ_PATH;
    diag_node = NULL;
    verbose = 0;

    jmp_buf jb;
    diag_jmp = &jb;
    if (setjmp(jb)) {        /* a refusal: the normal end of most inputs */
        diag_jmp = NULL;
        pool_release();
        return 0;
    }
    FILE *f = sink();
    Graph *g = load_model_buffer(data, size, FUZZ_PATH);
    int64_t arena = pipeline_run(g, &L, &o);   /* what onnx2c runs (compiler/pipeline.c) */
    if (o.cuda) emit_cuda(g, &L, &o, arena, f, f);
    else emit_c(g, &L, &o, arena, f, f);
    if (extra == 0) write_report(f, g, &L, arena, &o);
    if (extra == 1) emit_onnx(g, f);
    if (extra == 2) emit_dot(g, f);
    fflush(f);
    diag_jmp = NULL;
    pool_release();
    return 0;
}
