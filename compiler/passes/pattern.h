/* Matcher helpers shared by the pattern-fusion passes (fuse_layernorm,
 * fuse_gelu, fuse_clip, fuse_softmax, fuse_attention): they recognise a
 * decomposed subgraph by walking producers and readers, and replace it by
 * one node. Every helper only reads the graph; the edits go through
 * graph.c (pat_replace at the end).
 *
 * Conventions: a matcher collects the nodes it absorbs in a PatMatch; a
 * tensor between two absorbed nodes must be "internal": read by exactly the
 * absorbed nodes and not a graph output (pat_internal). Only standard-domain
 * nodes computing in float or double are matched (16-bit types run on
 * float32 stand-ins and are left alone). */
#ifndef ONNX2C_PATTERN_H
#define ONNX2C_PATTERN_H

#include <math.h>
#include <string.h>

#include "../ir.h"

#define PAT_MAX_NODES 16

typedef struct PatMatch {
    Node *nodes[PAT_MAX_NODES];
    int n;
} PatMatch;

static inline void pat_add(PatMatch *m, Node *n)
{
    if (m->n < PAT_MAX_NODES) m->nodes[m->n++] = n;
}

static inline int pat_has(const PatMatch *m, const Node *n)
{
    for (int i = 0; i < m->n; i++)
        if (m->nodes[i] == n) return 1;
    return 0;
}

/* n is a standard-domain `op` node (not promoted from a 16-bit type). */
static inline int pat_is(const Node *n, const char *op)
{
    return n && !strcmp(n->op_type, op) && (!n->domain || !n->domain[0] || !strcmp(n->domain, "ai.onnx")) &&
           !n->promoted;
}

/* The producer of t if it is an `op` node, else NULL. */
static inline Node *pat_prod(const Tensor *t, const char *op)
{
    return t && t->producer && pat_is(t->producer, op) ? t->producer : NULL;
}

static inline int pat_float(const Tensor *t)
{
    return t && (t->dtype == DT_FLOAT || t->dtype == DT_DOUBLE);
}

/* t is a constant holding one value (any rank); sets *v. */
static inline int pat_scalar(const Tensor *t, double *v)
{
    if (!t || !t->data || t->rank < 0 || tensor_numel(t) != 1) return 0;
    return tensor_const_splat(t, v);
}

/* v is target within a relative tolerance rtol. */
static inline int pat_near(double v, double target, double rtol)
{
    return fabs(v - target) <= rtol * fabs(target);
}

/* A binary node's input that is not t (the first one if both are t), or
 * NULL if n does not read t. */
static inline Tensor *pat_other(const Node *n, const Tensor *t)
{
    if (n->nin != 2) return NULL;
    if (n->in[0] == t) return n->in[1];
    if (n->in[1] == t) return n->in[0];
    return NULL;
}

static inline int pat_same_shape(const Tensor *a, const Tensor *b)
{
    if (a->rank != b->rank) return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return 0;
    return 1;
}

/* t is read only by nodes of m (counting every input slot), and is no
 * graph output: it disappears with the match. */
static inline int pat_internal(Graph *g, Tensor *t, const PatMatch *m)
{
    if (!t || graph_is_output(g, t)) return 0;
    Node **rd;
    int nr = graph_readers(g, t, &rd);
    for (int i = 0; i < nr; i++)
        if (!pat_has(m, rd[i])) return 0;
    return nr > 0;
}

/* Operand i of the Mul mul as a dequantized integer tensor written out in
 * float ops: Cast(q) to float, or Sub(Cast(q), z); sets the Cast and the
 * Sub (or NULL), q, z (or NULL) and s, mul's other operand (the scale). 0
 * if operand i is not that (weight-only weights in passes/quantize.c, the
 * tables of passes/gather_dequant.c). */
static inline int pat_cast_scaled(const Node *mul, int i, Node **cast, Node **sub, Tensor **q, Tensor **z, Tensor **s)
{
    Tensor *c = mul->in[i];
    *s = mul->in[1 - i];
    *z = NULL;
    *sub = pat_prod(c, "Sub");
    if (*sub) {
        *z = (*sub)->in[1];
        c = (*sub)->in[0];
    }
    *cast = pat_prod(c, "Cast");
    if (!*cast || attr_i(*cast, "to") != DT_FLOAT) return 0;
    *q = (*cast)->in[0];
    return 1;
}

/* The only reader of t if t has exactly one input slot reading it and is
 * no graph output, else NULL. */
static inline Node *pat_single_reader(Graph *g, Tensor *t)
{
    if (!tensor_single_use(g, t)) return NULL;
    Node **rd;
    return graph_readers(g, t, &rd) == 1 ? rd[0] : NULL;
}

/* SiLU written out on x: x read by exactly Sigmoid(x) and Mul(x, that) (in
 * either operand order), the Sigmoid's output read by that Mul alone, x no
 * graph output. Returns 1 with *sig and *mul set, else 0. */
static inline int pat_silu(Graph *g, Tensor *x, Node **sig, Node **mul)
{
    Node **rd;
    if (graph_is_output(g, x) || tensor_nuses(g, x) != 2 || graph_readers(g, x, &rd) != 2) return 0;
    Node *s = NULL, *m = NULL;
    for (int i = 0; i < 2; i++) {   /* promoted nodes too (float16 computed in float32) */
        if (!rd[i]->domain[0] && !strcmp(rd[i]->op_type, "Sigmoid")) s = rd[i];
        else if (!rd[i]->domain[0] && !strcmp(rd[i]->op_type, "Mul")) m = rd[i];
    }
    if (!s || !m || s->nin != 1 || s->in[0] != x || m->nin != 2 || pat_single_reader(g, s->out[0]) != m) return 0;
    if (!((m->in[0] == x && m->in[1] == s->out[0]) || (m->in[1] == x && m->in[0] == s->out[0]))) return 0;
    if (!pat_same_shape(m->out[0], x) || m->out[0]->dtype != x->dtype) return 0;
    *sig = s;
    *mul = m;
    return 1;
}

/* The axes a Reduce node reduces, normalized to [0, rank) and sorted, from
 * the attribute (before opset 13/18) or the constant second input; all
 * axes when none are given. Returns the count, or -1 when unknown (axes
 * from a run-time tensor, noop_with_empty_axes, out of range, repeated). */
static inline int pat_reduce_axes(const Node *n, int64_t *axes)
{
    int rank = n->in[0]->rank, k = 0;
    if (n->nin > 1 && n->in[1]) {
        Tensor *a = n->in[1];
        if (!a->data || !dtype_is_int(a->dtype) || tensor_numel(a) > MAX_RANK) return -1;
        k = (int)tensor_numel(a);
        for (int i = 0; i < k; i++) axes[i] = elem_i64(a->dtype, a->data, i);
    } else if (attr_has(n, "axes")) {
        const int64_t *v;
        k = attr_ints(n, "axes", &v);
        if (k > MAX_RANK) return -1;
        for (int i = 0; i < k; i++) axes[i] = v[i];
    }
    if (k == 0) {
        if (attr_i(n, "noop_with_empty_axes")) return -1;
        for (int i = 0; i < rank; i++) axes[i] = i;
        return rank;
    }
    for (int i = 0; i < k; i++) {
        if (axes[i] < -rank || axes[i] >= rank) return -1;
        if (axes[i] < 0) axes[i] += rank;
    }
    for (int i = 1; i < k; i++)        /* insertion sort, then no repeats */
        for (int j = i; j > 0 && axes[j - 1] > axes[j]; j--) {
            int64_t t = axes[j]; axes[j] = axes[j - 1]; axes[j - 1] = t;
        }
    for (int i = 1; i < k; i++)
        if (axes[i] == axes[i - 1]) return -1;
    return k;
}

/* The node is a Reduce over axes with keepdims=1 on a float input. */
static inline int pat_reduce_keep(const Node *n, int64_t *axes, int *naxes)
{
    if (!pat_float(n->in[0]) || attr_i(n, "keepdims") != 1) return 0;
    *naxes = pat_reduce_axes(n, axes);
    return *naxes > 0;
}

static inline int pat_same_axes(const int64_t *a, int na, const int64_t *b, int nb)
{
    if (na != nb) return 0;
    for (int i = 0; i < na; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* A scalar constant of t's type holding v (a new constant). */
static inline Tensor *pat_const_scalar(Graph *g, const char *hint, int dtype, double v)
{
    Tensor *c = graph_new_const(g, hint, dtype, 0, NULL);
    elem_set(dtype, c->data, 0, v);
    return c;
}

/* Inserts `op` (domain dom) reading in[0..nin) before `last` and taking
 * over `out` (the output of the match's last node, so graph outputs keep
 * their names), gives it the match's origins, records what it fused and
 * removes the matched nodes. The caller sets the node's attributes, then
 * calls node_reinfer. */
static inline Node *pat_replace(Graph *g, const PatMatch *m, Node *last, const char *op, const char *dom,
                                Tensor *const *in, int nin, Tensor *out)
{
    /* before the first matched node that comes after all inputs: `last`
     * reads everything the match reads, so inserting before it is valid
     * once the inputs exist; the topological sort after the pass fixes
     * the rest */
    Node *n = graph_insert_node(g, last, op, dom, in, nin, &out, 1);
    char what[256] = "";
    for (int i = 0; i < m->n; i++) {
        node_add_origins(n, m->nodes[i]);
        size_t len = strlen(what);
        if (len + strlen(m->nodes[i]->op_type) + 2 < sizeof what)
            snprintf(what + len, sizeof what - len, "%s%s", len ? "+" : "", m->nodes[i]->op_type);
    }
    n->fused = xstrdup(what);
    for (int i = 0; i < m->n; i++) graph_remove_node(g, m->nodes[i]);
    node_set_output(n, 0, out);
    return n;
}

/* A Gemm that is a plain product A * B(^T) [+ C]: A not transposed, alpha
 * and beta 1; *tb: B transposed */
static inline int pat_plain_gemm(const Node *n, int *tb)
{
    if (!pat_is(n, "Gemm") || attr_i(n, "transA") || attr_f(n, "alpha") != 1.0 ||
        (n->nin > 2 && n->in[2] && attr_f(n, "beta") != 1.0))
        return 0;
    *tb = (int)attr_i(n, "transB");
    return 1;
}

/* ---- what int8 code covers (passes/quantize.c matches, calibrate.c quantizes) ---- */

/* Ops that only move or select values (or take their maximum): on 8-bit
 * data with the output's scale and zero point the input's, they compute
 * the same bytes */
static inline int pat_moves_values(const Node *n)
{
    static const char *const OPS[] = {"MaxPool", "GlobalMaxPool", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose",
                                      "Identity", "Slice", "DepthToSpace", "SpaceToDepth", NULL};
    for (int i = 0; OPS[i]; i++)
        if (pat_is(n, OPS[i])) return n->nout == 1 || !n->out[1];
    return pat_is(n, "Resize") && !strcmp(attr_s(n, "mode"), "nearest");
}

/* The activation int8 code applies as the output clamp of a linear node:
 * a Relu, or a Clip with constant bounds (inputs from opset 11, else
 * attributes); [lo, hi] its bounds in reals (infinite where open) */
static inline int pat_clamp_bounds(const Graph *g, const Node *r, double *lo, double *hi)
{
    *lo = -INFINITY;
    *hi = INFINITY;
    if (!r) return 0;
    if (pat_is(r, "Relu")) {
        *lo = 0;
        return 1;
    }
    if (!pat_is(r, "Clip")) return 0;
    if (g->opset >= 11) {
        const Tensor *a = r->nin > 1 ? r->in[1] : NULL, *b = r->nin > 2 ? r->in[2] : NULL;
        if (a && !pat_scalar(a, lo)) return 0;
        if (b && !pat_scalar(b, hi)) return 0;
    } else {
        if (attr_has(r, "min")) *lo = attr_f(r, "min");
        if (attr_has(r, "max")) *hi = attr_f(r, "max");
    }
    return !isnan(*lo) && !isnan(*hi) && *lo <= *hi;
}

/* An Add of y and a bias o of N values along y's last axis (its output
 * y's shape): what a linear node's bias Add looks like */
static inline int pat_bias_shape(const Node *add, const Tensor *y, const Tensor *o, int64_t N)
{
    return o && o->rank >= 1 && tensor_numel(o) == N && o->dims[o->rank - 1] == N && pat_same_shape(add->out[0], y);
}

/* Elementwise functions of one float that int8 code computes as a table
 * of the 256 input bytes */
static inline int pat_tabulable(const Node *n)
{
    static const char *const OPS[] = {"Sigmoid", "Tanh", "HardSwish", "HardSigmoid", "LeakyRelu", "Elu", "Selu", "Gelu",
                                      "Softplus", "Softsign", "Exp", "Log", "Erf", "Sqrt", "Neg", "Abs", "Relu",
                                      "Mish", "Celu", "ThresholdedRelu", "Sin", "Cos", "Reciprocal", NULL};
    for (int i = 0; OPS[i]; i++)
        if (pat_is(n, OPS[i])) return n->nin == 1;
    return 0;
}

#endif
