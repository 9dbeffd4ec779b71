/* --report: one row per emitted kernel call (what `trtexec --dumpLayerInfo`
 * shows): the kernel, the node and the original ONNX nodes it covers, the
 * output's type and shape, FLOPs (node_flops, engine/flops.c), the bytes of
 * constants it reads and where its output lives in the arena; then totals.
 * The rows are exactly the calls the emitters write (calls on empty tensors
 * are skipped by both). */
#include <string.h>

#include "ir.h"

/* ---- the report --------------------------------------------------------- */

static const Tensor *root_of(const Tensor *t) { return t->storage == ST_ALIAS && t->alias_of ? t->alias_of : t; }

static const char *where(const Tensor *t, int64_t *off)
{
    const Tensor *r = root_of(t);
    *off = -1;
    switch (r->storage) {
    case ST_ARENA: *off = r->offset + (t->storage == ST_ALIAS ? t->alias_offset : 0); return "arena";
    case ST_INPUT: return "input";
    case ST_OUTPUT: return "output";
    case ST_CONST: return "const";
    default: return "-";
    }
}

/* Bytes of the distinct constants call c reads. */
static int64_t call_const_bytes(const KCall *c)
{
    int64_t b = 0;
    for (int j = 0; j < O2C_MAX_X; j++) {
        if (!c->x[j]) continue;
        const Tensor *r = root_of(c->x[j]);
        if (r->storage != ST_CONST) continue;
        int dup = 0;
        for (int k = 0; k < j; k++)
            if (c->x[k] && root_of(c->x[k]) == r) dup = 1;
        if (!dup) b += (int64_t)tensor_bytes(r);
    }
    return b;
}

/* The node's name, and the original ONNX nodes it covers when that is not
 * just itself ("conv1 <- conv1, bn1, relu1"); names made printable. */
static void put_covers(FILE *f, const Node *n)
{
    if (!n) { fputs("-", f); return; }
    fputs(c_comment(n->name), f);
    if (n->norigins == 1 && !strcmp(n->origins[0], n->name)) return;
    fputs(" <-", f);
    for (int i = 0; i < n->norigins; i++) fprintf(f, "%s %s", i ? "," : "", c_comment(n->origins[i]));
    if (!n->norigins) fputs(" (made by a pass)", f);
}

static void put_count(FILE *f, int64_t v, int width)
{
    if (v < 0) fprintf(f, "%*s", width, "?");
    else fprintf(f, "%*lld", width, (long long)v);
}

/* What a call computes on: "float" where its data (input 0 or output 0)
 * is a floating-point type (quantizing and dequantizing calls too;
 * "float/w8" or "float/w4" where its weights stay 8- or 4-bit: weight-only
 * quantization), else
 * the output's integer type ("int8", "uint8", "int32", ...) */
static const char *call_precision(const KCall *c)
{
    const Tensor *x = c->x[0], *y = c->y[0];
    if ((x && (dtype_is_float(x->dtype) || dtype_is_half(x->dtype))) || (y && (dtype_is_float(y->dtype) || dtype_is_half(y->dtype))))
        return !strncmp(c->kernel->name, "o2c_wqmmb_w4_", 13) ? "float/w4"
               : !strncmp(c->kernel->name, "o2c_wqmm", 8) ? "float/w8" : "float";
    return y ? dtype_name(y->dtype) : x ? dtype_name(x->dtype) : "-";
}

void write_report(FILE *f, Graph *g, Lowering *L, int64_t arena, const Options *o)
{
    fprintf(f, "onnx2c report: %s (graph '%s', opset %d), %s target, -O%d\n", c_comment(o->input ? source_name(o->input) : "-"), c_comment(g->name),
            g->opset, o->cuda ? "CUDA" : o->target == TARGET_C ? "C" : xfmt("C (--target %s)", target_name(o->target)),
            o->opt_level);
    fprintf(f, "%5s  %-28s %-26s %-24s %-9s %12s %10s %10s %10s %10s  %-18s %s\n", "#", "kernel", "op (node)", "output",
            "precision", "FLOPs", "weights", "arena@", "bytes", "live", "variant (tuned)", "covers");
    int rows = 0, nfloat = 0;
    int64_t flops = 0;
    int flops_unknown = 0;
    const Node *last = NULL;
    for (int i = 0; i < L->n; i++) {
        const KCall *c = &L->calls[i];
        if (c->count <= 0) continue;
        const Node *n = c->node;
        const Tensor *y = c->y[0];
        int64_t nf = 0;
        int first_of_node = n && n != last;
        if (first_of_node) {
            nf = node_flops(n);
            if (nf < 0) flops_unknown = 1;
            else flops += nf;
        }
        last = n;
        const char *op = n ? c_comment(n->fused ? n->fused : n->op_type) : "(graph output copy)";
        char outs[96];
        snprintf(outs, sizeof outs, "%s[%s]", y ? dtype_name(y->dtype) : "-", y ? tensor_shape_str(y) : "");
        int64_t off = -1;
        const char *w = y ? where(y, &off) : "-";
        const char *prec = call_precision(c);
        nfloat += !strncmp(prec, "float", 5);
        fprintf(f, "%5d  %-28s %-26s %-24s %-9s ", rows, c->kernel->name, op, outs, prec);
        if (first_of_node) put_count(f, nf, 12);
        else fprintf(f, "%12s", n ? "\"" : "0");
        fprintf(f, " %10lld ", (long long)call_const_bytes(c));
        if (off >= 0) fprintf(f, "%10lld", (long long)off);
        else fprintf(f, "%10s", w);
        fprintf(f, " %10lld %10lld  ", (long long)(y ? tensor_bytes(y) : 0), (long long)(L->live ? L->live[i] : 0));
        /* a tunable call: its variant, and its time per call in the tuning file */
        char var[64] = "-";
        if (c->variant && c->tuned_ns > 0) snprintf(var, sizeof var, "%s (%.1f us)", c->variant, c->tuned_ns / 1e3);
        else if (c->variant) snprintf(var, sizeof var, "%s", c->variant);
        fprintf(f, "%-18s ", var);
        put_covers(f, n);
        fputc('\n', f);
        rows++;
    }
    /* distinct constants read by emitted calls */
    int64_t cbytes = 0, wbytes = 0;
    int nconst = 0;
    for (int i = 0; i < L->n; i++)
        for (int j = 0; j < O2C_MAX_X; j++)
            if (L->calls[i].x[j]) ((Tensor *)root_of(L->calls[i].x[j]))->mark = 0;
    for (int i = 0; i < L->n; i++) {
        if (L->calls[i].count <= 0) continue;
        for (int j = 0; j < O2C_MAX_X; j++) {
            if (!L->calls[i].x[j]) continue;
            Tensor *r = (Tensor *)root_of(L->calls[i].x[j]);
            if (r->storage != ST_CONST || r->mark) continue;
            r->mark = 1;
            nconst++;
            cbytes += (int64_t)tensor_bytes(r);
            if (dtype_is_float(r->dtype) || dtype_is_half(r->dtype)) wbytes += (int64_t)tensor_bytes(r);
        }
    }
    fprintf(f, "total: %d kernels, %s%lld FLOPs, %lld weight bytes (float constants), arena %lld bytes, "
            "%d constants %lld bytes, %d nodes\n", rows, flops_unknown ? ">=" : "", (long long)flops,
            (long long)wbytes, (long long)arena, nconst, (long long)cbytes, g->nnodes);
    fprintf(f, "precision: float kernels: %d of %d (the others compute on integers or move bytes)\n", nfloat, rows);
    /* the memory plan against its bounds ("live": the arena bytes live at a call) */
    int peak_row = -1;
    for (int i = 0, r = 0; i < L->n; i++)
        if (L->calls[i].count > 0) {
            if (i <= L->live_bound_at) peak_row = r;
            r++;
        }
    fprintf(f, "memory: arena %lld bytes; liveness lower bound of this schedule %lld bytes", (long long)arena,
            (long long)L->live_bound);
    if (L->live_bound > 0) fprintf(f, " (at #%d; arena/bound %.3f)", peak_row, (double)arena / (double)L->live_bound);
    fprintf(f, "; one buffer per tensor %lld bytes; constants %lld bytes\n", (long long)L->naive_arena, (long long)cbytes);
    if (g->peak_model > 0)
        fprintf(f, "schedule: estimated peak %lld bytes in the model's order, %lld in the order taken%s\n",
                (long long)g->peak_model, (long long)g->peak_scheduled,
                g->peak_scheduled < g->peak_model ? " (memory-aware)" : "");
    if (L->half_consts || L->half_kept || L->half_chosen)   /* --fp16 */
        fprintf(f, "fp16: %d constants stored as half, %d kept float32 (a value beyond half's range), %d kept float32 "
                "by calibration (--keep-float, --min-sqnr)\n", L->half_consts, L->half_kept, L->half_chosen);
    if (g->calib_report) fputs(g->calib_report, f);   /* calibrate.c: each layer's precision, scales and SQNR */
}
