/* C back end: one standalone C99 file (kernels, weights, schedule) and its
 * header, from templates/model.c.in and templates/header.h.in. No malloc,
 * no I/O; intermediates live in one arena. */
#include <string.h>

#include "ir.h"

static const char *c_ptr(const Tensor *t, int out)
{
    (void)out;
    return storage_ptr(t, "c%d", "(arena + %lld)");
}

static void source_key(FILE *f, const char *key, void *ctx)
{
    EmitCtx *c = ctx;
    if (emit_common_key(f, key, c)) return;
    if (!strcmp(key, "CONSTANTS")) {
        if (c->nconsts) fputs("\n/* ---- weights and other constants ---- */\n", f);
        for (int i = 0; i < c->nconsts; i++) emit_const_array(f, c->consts[i], "static const");
    } else if (!strcmp(key, "SCHEDULE")) {
        for (int i = 0; i < c->L->n; i++) {
            KCall *k = &c->L->calls[i];
            if (k->count <= 0) continue;
            emit_call_comment(f, k, "    ");
            fputs("    {\n        const o2c_p p = ", f);
            emit_call_params(f, k, c_ptr);
            fprintf(f, ";\n        %s(0, %lld, &p);\n    }\n", k->kernel->name, (long long)k->count);
        }
    } else {
        fail_plain("internal: unknown template key @%s@", key);
    }
}

void emit_c(Graph *g, Lowering *L, const Options *o, int64_t arena, FILE *src, FILE *hdr)
{
    EmitCtx c = {g, L, o, arena, 0, NULL, 0};
    emit_header(hdr, &c);
    c.nconsts = emit_collect_constants(L, &c.consts);
    emit_template(src, "model.c.in", source_key, &c);
}
