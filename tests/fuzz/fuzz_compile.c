/* libFuzzer harness over onnx2c's whole compile path, in memory:
 * load (from the input's bytes), infer, passes, schedule, lower, plan and
 * emission into /dev/null. A refusal (fail(), a longjmp through diag_jmp)
 * is a normal return; pool_release() frees everything the compiler
 * allocated, so LeakSanitizer sees every leak.
 *
 * Built by `make fuzz` (build/fuzz/fuzz_compile) with
 * -fsanitize=fuzzer,address,undefined. The structure-aware mutator is in
 * mutator.c; docs/FUZZING.md says how to run a campaign. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* ---- calibration (--int8, --fp16 --calibrate: compiler/calibrate.c) ----
 * A directory of CAL_SETS sets made once (each an empty input_0.pb: the
 * stage lists the sets by it), and a tensor reader that makes each set's
 * inputs up from the model's own: its type and shape, values of a fixed
 * sequence (floats in [-2, 2], other types zero). */
#define CAL_SETS 2
#define CAL_MAX_ELEMENTS (1 << 16)   /* a larger input is refused: fuzzing wants many inputs a second */
static Graph *cal_graph;
static char cal_dir[64];

static const char *calibration_dir(void)
{
    if (cal_dir[0]) return cal_dir;
    char tmpl[] = "/tmp/o2c-fuzz-calib-XXXXXX";
    if (!mkdtemp(tmpl)) abort();
    for (int k = 0; k < CAL_SETS; k++) {
        char p[128];
        snprintf(p, sizeof p, "%s/set_%d", tmpl, k);
        if (mkdir(p, 0700)) abort();
        snprintf(p, sizeof p, "%s/set_%d/input_0.pb", tmpl, k);
        FILE *f = fopen(p, "wb");
        if (!f) abort();
        fclose(f);
    }
    memcpy(cal_dir, tmpl, sizeof tmpl);
    return cal_dir;
}

static void calibration_input(const char *path, Tensor *t, const char *what)
{
    const char *u = strrchr(path, '_');
    const int k = u ? atoi(u + 1) : -1;
    (void)what;
    if (!cal_graph || k < 0 || k >= cal_graph->ninputs) fail_plain("%s: the model has no such input", path);
    const Tensor *in = cal_graph->inputs[k];
    if (in->rank < 0 || tensor_numel(in) > CAL_MAX_ELEMENTS || in->dtype == DT_STRING)
        fail_plain("%s: no calibration input of this kind while fuzzing", path);
    t->dtype = in->dtype;
    tensor_set_shape(t, in->rank, in->dims);
    unsigned char *d = tensor_alloc_data(t);
    const int64_t n = tensor_numel(t);
    for (int64_t i = 0; i < n; i++)
        if (t->dtype == DT_FLOAT) ((float *)(void *)d)[i] = (float)((i * 7919 + k * 104729) % 401 - 200) / 100.0f;
}

/* The options an input compiles with come from a hash of its bytes, so
 * that one input always takes the same path: mostly the C target at -O2,
 * sometimes -O0/-O1, CUDA, another C target, the report, --emit-onnx,
 * --dot, --fp16, calibration (--int8, --fp16 --calibrate, each
 * calibrator and activation scheme, with and without --min-sqnr). */
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
    if (((h >> 17) & 7) == 0) o.fp16 = 1;
    if (!o.cuda && ((h >> 20) & 7) == 0) {
        o.int8 = (h >> 23) & 1;
        o.fp16 |= !o.int8;
        o.calibrate = calibration_dir();
        o.read_tensor = calibration_input;
        /* not the entropy calibrator: 20-40 ms a tensor (a KL divergence
         * per threshold, O(bins^2)), minutes for the thousand tensors a
         * mutated SplitToSequence makes; tests/calib checks it against
         * numpy */
        o.calib_method = (int)((h >> 24) % 4);
        if (o.calib_method == CALIB_ENTROPY) o.calib_method = CALIB_MSE;
        o.calib_param = o.calib_method == CALIB_PERCENTILE ? 99.99 : 0;
        o.act_scheme = (int)((h >> 26) % 3);
        o.min_sqnr = ((h >> 28) & 1) ? 30 : 0;
    }
    diag_file = FUZZ_PATH;
    diag_node = NULL;
    verbose = 0;

    jmp_buf jb;
    diag_jmp = &jb;
    if (setjmp(jb)) {        /* a refusal: the normal end of most inputs */
        cal_graph = NULL;
        diag_jmp = NULL;
        pool_release();
        return 0;
    }
    FILE *f = sink();
    Graph *g = load_model_buffer(data, size, FUZZ_PATH);
    cal_graph = g;

    int64_t arena = pipeline_run(g, &L, &o);   /* what onnx2c runs (compiler/pipeline.c) */
    if (o.cuda) emit_cuda(g, &L, &o, arena, f, f);
    else emit_c(g, &L, &o, arena, f, f);
    if (extra == 0) write_report(f, g, &L, arena, &o);
    if (extra == 1) emit_onnx(g, f);
    if (extra == 2) emit_dot(g, f);
    fflush(f);
    cal_graph = NULL;
    diag_jmp = NULL;
    pool_release();
    return 0;
}
