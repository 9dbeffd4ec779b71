/* Lowering: every node of the (optimized) graph becomes kernel calls,
 * through its op's lower function. Views become nothing (or a copy when
 * their output is a graph output); graph outputs not written in place get
 * a final copy. Dead nodes were removed by the dce pass (not at -O0). */
#include <string.h>

#include "ir.h"

#define LOWER_MAX_CALLS (1 << 16)

KCall *lower_call(Lowering *L, const char *kernel, int64_t count)
{
    const Kernel *k = kernel_find(kernel);
    if (!k) fail("internal: no kernel named '%s'", kernel);
    return lower_call_kernel(L, k, count);
}

KCall *lower_call_kernel(Lowering *L, const Kernel *k, int64_t count)
{
    for (int i = 0; i < L->n && !k->fn; i++)   /* a generated kernel: one Kernel per name */
        if (L->calls[i].kernel != k && !strcmp(L->calls[i].kernel->name, k->name)) {
            if (!L->calls[i].kernel->instance || !k->instance || strcmp(L->calls[i].kernel->instance, k->instance))
                fail("internal: two different kernels named '%s'", k->name);
            k = L->calls[i].kernel;
            break;
        }
    if (L->n == L->cap) {
        if (L->n >= LOWER_MAX_CALLS)   /* a bound on time and memory (tests/fuzz/ found RNNs of 2^31 steps) */
            fail("the model needs more than %d kernel calls (a recurrence or unrolled loop this long is not "
                 "supported)", LOWER_MAX_CALLS);
        int cap = L->cap ? 2 * L->cap : 64;
        KCall *c = xalloc(sizeof(KCall) * (size_t)cap);
        if (L->n) memcpy(c, L->calls, sizeof(KCall) * (size_t)L->n);
        L->calls = c;
        L->cap = cap;
    }
    KCall *c = &L->calls[L->n++];
    memset(c, 0, sizeof *c);
    c->kernel = k;
    c->count = count;
    c->node = L->node;
    return c;
}

/* Control-flow markers (ir.h): no kernel, count 0, so the loops over calls
 * that emit kernels skip them. */
static const Kernel CTL_KERNEL = {"o2c_ctl", NULL, NULL, NULL, NULL};

KCall *lower_ctl(Lowering *L, int ctl, Tensor *x)
{
    KCall *c = lower_call_kernel(L, &CTL_KERNEL, 0);
    int at = L->n - 1;
    c->ctl = ctl;
    c->x[0] = x;
    if (ctl != CTL_ELSE && ctl != CTL_END) return c;
    /* the innermost open IF or LOOP; its ELSE and the loop's BREAKs */
    int depth = 0, mid = -1;
    for (int i = at - 1; i >= 0; i--) {
        KCall *m = &L->calls[i];
        if (m->ctl == CTL_END) depth++;
        else if ((m->ctl == CTL_IF || m->ctl == CTL_LOOP) && depth) depth--;
        else if (m->ctl == CTL_ELSE && !depth) mid = i;
        else if (m->ctl == CTL_BREAK && !depth) m->jump = at;
        else if (m->ctl == CTL_IF || m->ctl == CTL_LOOP) {
            if (ctl == CTL_ELSE && m->ctl != CTL_IF) fail("internal: an else outside an if");
            c = &L->calls[at];
            if (ctl == CTL_ELSE) {
                m->jump = at;
            } else {
                c->jump = i;
                if (mid >= 0) L->calls[mid].jump = at;
                else m->jump = at;
            }
            return c;
        }
    }
    fail("internal: an unmatched control-flow marker");
}

static const char *const TARGET_NAMES[] = {"c", "avx2", "avx512", "neon", "cortex-m", "cuda"};

const char *target_name(int target)
{
    return target >= 0 && target <= TARGET_CUDA ? TARGET_NAMES[target] : "?";
}

/* The register-tiled variants keep 8 x 32 accumulators in registers: right
 * for 16 or 32 vector registers; a Cortex-M's 32 single-precision
 * registers would spill them, and their scratch panels cost RAM there, so
 * that target keeps the compact reference kernels, as CUDA does. */
int target_tiled(int target)
{
    return target != TARGET_CUDA && target != TARGET_CORTEX_M;
}

int lower_choose(Lowering *L, KCall *c, const char *key, const char *const *names, int n, int heuristic)
{
    int pick = heuristic;
    double ns = 0;
    if (L->force) {
        pick = L->force - 1 < n ? L->force - 1 : -1;
    } else if (L->tune) {
        const char *v = tune_lookup(L->tune, key, &ns);
        if (v) {
            pick = -1;
            for (int i = 0; i < n; i++)
                if (!strcmp(names[i], v)) pick = i;
            if (pick < 0) fail_plain("the tuning file chooses '%s' for %s, which is not one of its candidates", v, key);
        }
    }
    L->choices++;
    if (n > L->max_candidates) L->max_candidates = n;
    if (pick < 0) pick = heuristic;   /* the tuner's candidate beyond this choice's: the heuristic */
    c->tune_key = xstrdup(key);
    c->variant = names[pick];
    c->tuned_ns = L->force ? 0 : ns;
    return pick;
}

Tensor *lower_temp(Lowering *L, int dtype, int rank, const int64_t *dims)
{
    Tensor *t = xalloc(sizeof *t);
    t->name = xfmt("%s_tmp%d", L->node ? L->node->name : "tmp", L->n);
    t->dtype = dtype;
    t->input_index = t->output_index = -1;
    t->temp = 1;
    t->id = tensor_new_id();
    tensor_set_shape(t, rank, dims);
    return t;
}

Tensor *lower_const(Lowering *L, const char *what, int dtype, int rank, const int64_t *dims)
{
    Tensor *t = lower_temp(L, dtype, rank, dims);
    t->name = xfmt("%s_%s", L->node ? L->node->name : "const", what);
    t->temp = 0;
    tensor_alloc_data(t);
    return t;
}

void lower_copy(Lowering *L, Tensor *x, Tensor *y)
{
    if (y->dtype == DT_STRING) { lower_copy_strings(L, x, y); return; }   /* pointers, not bytes: ops/strings.c */
    KCall *c = lower_call(L, "o2c_copy", (int64_t)tensor_bytes(y));
    c->x[0] = x;
    c->y[0] = y;
}

void lower_view(Node *n, Lowering *L)
{
    if (n->out[0] && n->out[0]->is_output) lower_copy(L, n->in[0], n->out[0]);
}

/* A node that computes on 16-bit floats (infer.c) runs its lowering on
 * float32 tensors: constant inputs use their float32 stand-ins, the others
 * are cast into scratch tensors, and the float32 results are cast back. */
static void lower_promoted(Node *n, Lowering *L)
{
    Tensor *in[64], *out[64];
    if (n->nin > 64 || n->nout > 64) fail("too many inputs or outputs");
    for (int j = 0; j < n->nin; j++) {
        in[j] = n->in[j];
        if (!in[j] || !(dtype_is_half(in[j]->dtype) || (dtype_is_narrow(in[j]->dtype) && node_promotes_narrow(n))))
            continue;
        if (in[j]->data) {
            n->in[j] = n->shadow_in[j];
        } else if (dtype_is_narrow(in[j]->dtype)) {   /* a float8 (IsNaN, IsInf): ops/types.c */
            n->in[j] = lower_temp(L, DT_FLOAT, in[j]->rank, in[j]->dims);
            lower_narrow_to_f32(L, in[j], n->in[j]);
        } else {
            n->in[j] = lower_temp(L, DT_FLOAT, in[j]->rank, in[j]->dims);
            KCall *c = lower_call(L, xfmt("o2c_cast_%s_f32", dtype_suffix(in[j]->dtype)), tensor_numel(in[j]));
            c->x[0] = in[j];
            c->y[0] = n->in[j];
        }
    }
    for (int j = 0; j < n->nout; j++) {
        out[j] = n->out[j];
        if (!out[j] || !dtype_is_half(out[j]->dtype)) continue;
        n->out[j] = lower_temp(L, DT_FLOAT, out[j]->rank, out[j]->dims);
        n->out[j]->nuses = out[j]->nuses;     /* ops skip optional outputs nobody reads */
    }
    n->op->lower(n, L);
    for (int j = 0; j < n->nin; j++) n->in[j] = in[j];
    for (int j = 0; j < n->nout; j++) {
        Tensor *f = n->out[j];
        n->out[j] = out[j];
        if (!out[j] || f == out[j]) continue;
        KCall *c = lower_call(L, xfmt("o2c_cast_f32_%s", dtype_suffix(out[j]->dtype)), tensor_numel(out[j]));
        c->x[0] = f;
        c->y[0] = out[j];
    }
}

void lower_node(Node *n, Lowering *L)
{
    const Node *saved = L->node;
    L->node = n;
    diag_node = n;
    if (n->promoted) lower_promoted(n, L);
    else if (!strings_lower(n, L)) n->op->lower(n, L);   /* ops/strings.c: a numeric op's string form */
    L->node = saved;
}

void lower_graph(Graph *g, Lowering *L)
{
    layout_assign(g, L->tiled);
    for (int i = 0; i < g->nnodes; i++) lower_node(g->nodes[i], L);
    diag_node = NULL;
    /* graph outputs that are not written in place by their producer */
    for (int k = 0; k < g->noutputs; k++) {
        Tensor *t = g->outputs[k];
        int in_place = t->producer && t->output_index == k && !t->data && !t->is_input;
        if (in_place) continue;
        Tensor *o = xalloc(sizeof *o);
        *o = *t;
        o->name = xfmt("%s (output %d)", t->name, k);
        o->data = NULL;
        o->is_input = 0;
        o->is_output = 1;
        o->output_index = k;
        o->producer = NULL;
        o->temp = 0;
        o->id = tensor_new_id();
        o->storage = ST_OUTPUT;
        lower_copy(L, t, o);
    }
}
