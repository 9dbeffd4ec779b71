/* Lowering: every node of the (optimized) graph becomes kernel calls,
 * through its op's lower function. Views become nothing (or a copy when
 * their output is a graph output); graph outputs not written in place get
 * a final copy. Dead nodes were removed by the dce pass (not at -O0). */
#include <math.h>
#include <string.h>

#include "ir.h"

void lower_graph(Graph *g, Lowering *L)
{
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

/* ---- constants shared: one copy of each value the calls read ------------ */

/* FNV-1a of a constant's type, shape and bytes */
static uint64_t const_hash(const Tensor *t)
{
    uint64_t h = fnv1a64(FNV1A64_INIT, &t->dtype, sizeof t->dtype);
    h = fnv1a64(h, t->dims, sizeof t->dims[0] * (size_t)t->rank);
    return fnv1a64(h, t->data, tensor_bytes(t));
}

static int const_same(const Tensor *a, const Tensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return 0;
    return !memcmp(a->data, b->data, tensor_bytes(a));
}

/* Calls that read constants of the same type, shape and bytes read one of
 * them: a weight shared by many nodes (an unrolled LSTM's 40 Gemms of one
 * matrix) is packed by each node's lowering, and the copies are equal
 * (every transformation at lowering is a function of the source and the
 * layout); so are the scales and zero points that many quantized nodes
 * repeat. The first in call order stays. */
void lower_share_constants(Lowering *L)
{
    size_t cap = 64;
    while (cap < (size_t)L->n * O2C_MAX_X * 2) cap *= 2;
    /* by value: the first constant of each value; by address: what each
     * constant read becomes (so a constant many calls read is hashed once) */
    Tensor **table = xalloc(sizeof(Tensor *) * cap);
    uint64_t *hashes = xalloc(sizeof(uint64_t) * cap);
    Tensor **read = xalloc(sizeof(Tensor *) * cap), **keep = xalloc(sizeof(Tensor *) * cap);
    int shared = 0;
    int64_t saved = 0;
    for (int c = 0; c < L->n; c++)
        for (int j = 0; j < O2C_MAX_X; j++) {
            Tensor *t = L->calls[c].x[j];
            if (!t || !t->data || t->is_input || t->dtype == DT_STRING || t->seq || t->rank < 0) continue;
            size_t a = (size_t)(((uintptr_t)t >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1);
            while (read[a] && read[a] != t) a = (a + 1) & (cap - 1);
            if (!read[a]) {
                const uint64_t h = const_hash(t);
                size_t i = (size_t)h & (cap - 1);
                while (table[i] && (hashes[i] != h || !const_same(table[i], t))) i = (i + 1) & (cap - 1);
                if (!table[i]) {
                    table[i] = t;
                    hashes[i] = h;
                } else {
                    saved += (int64_t)tensor_bytes(t);
                    shared++;
                }
                read[a] = t;
                keep[a] = table[i];
            }
            L->calls[c].x[j] = keep[a];
        }
    if (shared) note("constants: %d copies of another constant dropped (%lld bytes)", shared, (long long)saved);
}

/* ---- --fp16: float constants stored as IEEE half ------------------------- */

/* A float constant of the schedule the kernels read (weights, packed
 * panels): its values in half where they all fit, else NULL */
static Tensor *half_copy(Lowering *L, const Tensor *t)
{
    const float *v = t->data;
    const int64_t n = tensor_numel(t);
    if (!half_fits(t)) return NULL;
    const Node *saved = L->node;
    L->node = NULL;
    Tensor *h = lower_const(L, "half", DT_FLOAT16, t->rank, t->dims);
    L->node = saved;
    h->name = xfmt("%s_half", t->name);
    uint16_t *d = h->data;
    for (int64_t i = 0; i < n; i++) d[i] = float_to_half(DT_FLOAT16, v[i]);
    return h;
}

/* the call's node is one calibration keeps float32 (Graph.fp32_nodes: its
 * name or one of its origins) */
static int kept_fp32(const Graph *g, const Node *n)
{
    for (int i = 0; n && i < g->nfp32_nodes; i++) {
        if (!strcmp(n->name, g->fp32_nodes[i])) return 1;
        for (int k = 0; k < n->norigins; k++)
            if (!strcmp(n->origins[k], g->fp32_nodes[i])) return 1;
    }
    return 0;
}

/* the call reads constant j, which the lowering may store as half: a float
 * constant of HALF_MIN_ELEMENTS or more, read by a node that reads such a
 * constant itself (a panel packed from a smaller weight, e.g. a depthwise
 * conv's 3x3 weights padded to the tile, stays float32 as that weight
 * does: calibration measures the model's constants, not the panels) */
static int half_candidate(const KCall *k, int j)
{
    if (k->ctl || k->count <= 0 || !half_candidate_const(k->x[j])) return 0;
    if (!k->node) return 1;
    for (int i = 0; i < k->node->nin; i++)
        if (half_candidate_const(k->node->in[i])) return 1;
    return 0;
}

void lower_half_constants(Graph *g, Lowering *L)
{
    const Tensor **src = xalloc(sizeof(Tensor *) * (size_t)(L->n * O2C_MAX_X + 1));
    Tensor **half = xalloc(sizeof(Tensor *) * (size_t)(L->n * O2C_MAX_X + 1));
    int nsrc = 0, nconv = 0;
    /* the constants a kept node reads stay float32 for every reader */
    for (int c = 0; c < L->n; c++)
        for (int j = 0; j < O2C_MAX_X; j++)
            if (half_candidate(&L->calls[c], j) && kept_fp32(g, L->calls[c].node)) {
                const Tensor *t = L->calls[c].x[j];
                int s = 0;
                while (s < nsrc && src[s] != t) s++;
                if (s < nsrc) continue;
                src[nsrc] = t;
                half[nsrc++] = NULL;
                note("fp16: '%s' (%lld values, read by %s '%s') kept float32 (calibration)", t->name,
                     (long long)tensor_numel(t), L->calls[c].node->op_type, L->calls[c].node->name);
                L->half_chosen++;
            }
    for (int c = 0; c < L->n; c++) {
        const KCall *k = &L->calls[c];
        for (int j = 0; j < O2C_MAX_X; j++) {
            if (!half_candidate(k, j)) continue;
            const Tensor *t = k->x[j];
            int s = 0;
            while (s < nsrc && src[s] != t) s++;
            if (s == nsrc) {
                src[nsrc] = t;
                half[nsrc++] = half_copy(L, t);
                note("fp16: '%s' (%lld values, read by %s '%s') %s", t->name, (long long)tensor_numel(t),
                     k->node ? k->node->op_type : "-", k->node ? k->node->name : "-",
                     half[s] ? "stored as half" : "kept float32 (beyond half's range)");
                if (half[s]) L->half_consts++;
                else L->half_kept++;
            }
            nconv += half[s] != NULL;
        }
    }
    /* --target cortex-m: the reference convolution and product read their
     * half weights where they are (o2c_conv_f32h, o2c_matmul_f32h): no
     * float copy in the arena, which is RAM there */
    for (int c = 0; c < L->n && L->target == TARGET_CORTEX_M; c++) {
        KCall *k = &L->calls[c];
        const char *fused = !k->kernel || k->ctl ? NULL
                            : !strcmp(k->kernel->name, "o2c_conv_f32") ? "o2c_conv_f32h"
                            : !strcmp(k->kernel->name, "o2c_conv_rows_f32") ? "o2c_conv_rows_f32h"
                            : !strcmp(k->kernel->name, "o2c_matmul_f32") ? "o2c_matmul_f32h"
                            : !strcmp(k->kernel->name, "o2c_matmul_rows_f32") ? "o2c_matmul_rows_f32h" : NULL;
        int s = 0;
        while (fused && s < nsrc && src[s] != k->x[1]) s++;
        if (!fused || s == nsrc || !half[s]) continue;
        k->kernel = kernel_find(fused);
        k->x[1] = half[s];
        nconv--;
    }
    if (!nconv) return;
    /* each reading call gets a widening call before it, into a scratch tensor */
    KCall *old = L->calls;
    const int n_old = L->n;
    int *at = xalloc(sizeof(int) * (size_t)(n_old + 1));
    L->calls = xalloc(sizeof(KCall) * (size_t)(n_old + nconv + 1));
    L->n = 0;
    L->cap = n_old + nconv + 1;
    for (int c = 0; c < n_old; c++) {
        KCall k = old[c];
        for (int j = 0; j < O2C_MAX_X && !k.ctl && k.count > 0; j++) {
            int s = 0;
            while (s < nsrc && src[s] != k.x[j]) s++;
            if (s == nsrc || !half[s]) continue;
            L->node = k.node;
            Tensor *w = lower_temp(L, DT_FLOAT, k.x[j]->rank, k.x[j]->dims);
            w->name = xfmt("%s_float", k.x[j]->name);
            KCall *cv = lower_call(L, "o2c_h2f_f32", tensor_numel(w));
            cv->x[0] = half[s];
            cv->y[0] = w;
            k.x[j] = w;
        }
        at[c] = L->n;
        L->calls[L->n++] = k;
    }
    for (int c = 0; c < L->n; c++)   /* control-flow markers jump by index */
        if (L->calls[c].ctl) L->calls[c].jump = at[L->calls[c].jump];
    L->node = NULL;
}
