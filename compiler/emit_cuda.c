/* CUDA back end (templates/model.cu.in): the same kernels as device code,
 * one thread per index, weights uploaded to device memory once, a host
 * entry (copies in and out) and a device-pointer entry on a stream. Every
 * CUDA call is checked. Built with O2C_CUDA_EMULATE and
 * runtime/cuda/o2c_cuda_emulate.h, the same file runs on the CPU, which is
 * how the tests check its numerics without a GPU. */
#include <string.h>

#include "ir.h"

static const char *cu_ptr(const Tensor *t, int out, void *ctx)
{
    (void)ctx;
    (void)out;
    return storage_ptr(t, "d_const[%d]", "(d_arena + %lld)");
}

/* A call of the schedule (emit_schedule) launched on the stream */
static void launch_call(FILE *f, const KCall *k, const char *ind, void *ctx)
{
    (void)ctx;
    fprintf(f, "%s    O2C_LAUNCH(%s, %lld, p, stream);\n%s    O2C_CHECK(cudaGetLastError());\n", ind, k->kernel->name,
            (long long)k->count, ind);
}

static void source_key(FILE *f, const char *key, void *ctx)
{
    EmitCtx *c = ctx;
    Graph *g = c->g;
    Lowering *L = c->L;
    if (emit_common_key(f, key, c)) return;
    if (!strcmp(key, "GLOBALS")) {          /* one __global__ wrapper per kernel used */
        for (int i = 0; i < L->n; i++) {
            int seen = L->calls[i].count <= 0;   /* calls on empty tensors are not emitted */
            for (int d = 0; d < i && !seen; d++)
                if (L->calls[d].kernel == L->calls[i].kernel && L->calls[d].count > 0) seen = 1;
            if (!seen) fprintf(f, "O2C_GLOBAL(%s)\n", L->calls[i].kernel->name);
        }
        int ctl = 0;
        for (int i = 0; i < L->n; i++) ctl |= L->calls[i].ctl != CTL_NONE;
        if (ctl)   /* control flow: a flag read back from the device */
            fputs("static cudaError_t o2c_read_flag(const void *d, cudaStream_t s, unsigned char *f)\n{\n"
                  "    cudaError_t e = cudaMemcpyAsync(f, d, 1, cudaMemcpyDeviceToHost, s);\n"
                  "    return e == cudaSuccess ? cudaStreamSynchronize(s) : e;\n}\n", f);
    } else if (!strcmp(key, "CONSTANTS")) {
        if (c->nconsts) fputs("\n/* ---- weights and other constants (uploaded by the init) ---- */\n", f);
        emit_const_words_guard(f, c->consts, c->nconsts);
        for (int i = 0; i < c->nconsts; i++) emit_const_array(f, c->consts[i], "static const", 0, 0);
    } else if (!strcmp(key, "NCONST1")) {
        fprintf(f, "%d", c->nconsts + 1);
    } else if (!strcmp(key, "IN_BYTES")) {
        for (int i = 0; i < g->ninputs; i++) fprintf(f, "%zu, ", tensor_bytes(g->inputs[i]));
    } else if (!strcmp(key, "OUT_RUN_BYTES")) {   /* an output sized at run time: its run's bytes */
        int dyn = 0;
        for (int i = 0; i < g->noutputs; i++) dyn |= g->outputs[i]->dyn_count != NULL;
        fputs(dyn ? "o2c_out_run_bytes(i)" : "out_bytes[i]", f);
    } else if (!strcmp(key, "OUT_BYTES")) {
        for (int i = 0; i < g->noutputs; i++) fprintf(f, "%zu, ", tensor_bytes(g->outputs[i]));
    } else if (!strcmp(key, "UPLOADS")) {
        for (int i = 0; i < c->nconsts; i++) {
            size_t b = tensor_bytes(c->consts[i]);
            int id = c->consts[i]->const_id;
            fprintf(f, "    {\n        void *d = 0;\n        O2C_CHECK(cudaMalloc(&d, %zu));\n        d_const[%d] = d;\n"
                       "        O2C_CHECK(cudaMemcpy(d, (const void *)&c%d, %zu, cudaMemcpyHostToDevice));\n    }\n",
                    b ? b : 1, id, id, b);
        }
    } else if (!strcmp(key, "SCHEDULE")) {
        /* control flow (ops/control.c) runs on the host: a condition is read
         * back from the device (after the stream's work) into o2c_flag */
        int ctl = 0;
        for (int i = 0; i < L->n; i++) ctl |= L->calls[i].ctl != CTL_NONE;
        if (ctl) fputs("    unsigned char o2c_flag = 0;\n", f);
        emit_schedule(f, L, cu_ptr, NULL, xfmt("return %s_ERR_CHECK;", c->o->name),   /* C++: no array designators */
                      "O2C_CHECK(o2c_read_flag(%s, stream, &o2c_flag));", 1, launch_call, NULL, NULL);
    } else {
        fail_plain("internal: unknown template key @%s@", key);
    }
}

void emit_cuda(Graph *g, Lowering *L, const Options *o, int64_t arena, FILE *src, FILE *hdr)
{
    EmitCtx c = {g, L, o, arena, 1, NULL, 0, NULL, NULL, NULL, 64, ""};
    emit_model(&c, "model.cu.in", source_key, src, hdr);
}
