/* --emit-test-main FILE.c: a verification harness for the generated C
 * (templates/test_main.c.in): it reads the model's inputs and expected
 * outputs from ONNX TensorProto (.pb) or raw files, runs the model once
 * and prints each output's largest error against a tolerance; exit 0 when
 * every output is within it. Portable C99 with stdio: the host, and a
 * board or QEMU through semihosting (tests/test_firmware_qemu.py).
 *
 * The harness is generic over the header's array macros (NAME_INPUT_SIZES,
 * ...: emit_common.c io_arrays); what is written here is the buffers (one
 * static array an input and output, and one for each expected output) and
 * the call. Models the files cannot describe are refused: string tensors,
 * sequences and optionals (a .pb holds one tensor), and outputs whose size
 * the data decides. */
#include <string.h>

#include "ir.h"

#define TEST_RTOL "1e-3"
#define TEST_ATOL "1e-5"

/* a static buffer of n bytes aligned for any element type (a union: C99
 * has no alignment specifier) */
static void buffer(FILE *f, const char *name, size_t n)
{
    fprintf(f, "static union { double d; int64_t i; unsigned char b[%llu]; } %s;\n",
            (unsigned long long)(n ? n : 1), name);
}

static void test_main_key(FILE *f, const char *key, void *ctx)
{
    EmitCtx *c = ctx;
    const Graph *g = c->g;
    const char *N = c->o->name;
    if (!strcmp(key, "FILE")) {
        const char *p = strrchr(c->o->test_main, '/');
        fputs(c_comment(p ? p + 1 : c->o->test_main), f);
    } else if (!strcmp(key, "RTOL")) {
        fputs(TEST_RTOL, f);
    } else if (!strcmp(key, "ATOL")) {
        fputs(TEST_ATOL, f);
    } else if (!strcmp(key, "BUFFERS")) {
        for (int i = 0; i < g->ninputs; i++) buffer(f, xfmt("in%d", i), tensor_bytes(g->inputs[i]));
        for (int i = 0; i < g->noutputs; i++) {
            buffer(f, xfmt("out%d", i), tensor_bytes(g->outputs[i]));
            buffer(f, xfmt("want%d", i), tensor_bytes(g->outputs[i]));
        }
        fputs("static unsigned char *const in_buf[NX] = {", f);
        for (int i = 0; i < g->ninputs; i++) fprintf(f, "%sin%d.b", i ? ", " : "", i);
        fputs(g->ninputs ? "};\nstatic unsigned char *const out_buf[NY] = {" : "0};\nstatic unsigned char *const out_buf[NY] = {", f);
        for (int i = 0; i < g->noutputs; i++) fprintf(f, "%sout%d.b", i ? ", " : "", i);
        fputs(g->noutputs ? "};\nstatic unsigned char *const want_buf[NY] = {" : "0};\nstatic unsigned char *const want_buf[NY] = {", f);
        for (int i = 0; i < g->noutputs; i++) fprintf(f, "%swant%d.b", i ? ", " : "", i);
        fputs(g->noutputs ? "};\n" : "0};\n", f);
        if (c->o->caller_arena)   /* --caller-arena: the harness owns the arena */
            fprintf(f, "#if defined(__GNUC__)\nstatic unsigned char arena[%s_ARENA_SIZE + 1] __attribute__((aligned(%s_ARENA_ALIGN)));\n"
                       "#else\n#error \"align arena to %s_ARENA_ALIGN bytes for this compiler\"\n#endif\n", N, N, N);
    } else if (!strcmp(key, "RUN")) {
        if (c->o->caller_arena) fprintf(f, "%s_run_with_arena(in, out, arena)", N);
        else fprintf(f, "%s_run(in, out)", N);
    } else if (!emit_common_key(f, key, c)) {
        fail_plain("internal: unknown template key @%s@ in test_main.c.in", key);
    }
}

void emit_test_main(FILE *f, EmitCtx *c)
{
    const Graph *g = c->g;
    if (g->nseqio)
        fail_plain("--emit-test-main: the model has sequence or optional inputs or outputs, which a .pb file of one "
                   "tensor does not describe (test it with NAME_run directly)");
    for (int i = 0; i < g->ninputs + g->noutputs; i++) {
        const Tensor *t = i < g->ninputs ? g->inputs[i] : g->outputs[i - g->ninputs];
        if (t->dtype == DT_STRING)
            fail_plain("--emit-test-main: '%s' is a string tensor; the harness reads numbers (test it with NAME_run "
                       "directly)", t->name);
        if (t->dyn_count)
            fail_plain("--emit-test-main: output '%s' takes a size the data decides; the harness compares whole "
                       "tensors of a fixed size (test it with NAME_run and NAME_output_dims)", t->name);
    }
    emit_template(f, "test_main.c.in", test_main_key, c);
}
