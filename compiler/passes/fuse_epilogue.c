/* Pass fuse_epilogue: a Conv, ConvTranspose, Gemm or MatMul followed by a
 * chain of single-reader activations and/or a residual Add becomes one
 * FusedConv / FusedConvTranspose / FusedGemm / FusedMatMul (ops/fused_linear.c)
 * whose kernel applies them to each output element as it is computed.
 *
 * The chain, in graph order, is at most: an Add of a tensor of the output's
 * shape (residual before the activation), one activation, an Add (residual
 * after it; only when there was none before). A MatMul may first take an
 * Add of a constant bias with one value per column. Activations: Relu, Clip
 * with constant bounds, LeakyRelu, PRelu with a constant slope (one value or
 * one per channel), Sigmoid, Tanh, HardSigmoid, HardSwish, x * Sigmoid(x)
 * (SiLU), Gelu, Mish. Runs after fuse_affine, which folds constant scales
 * and biases into the weights first. */
#include <string.h>

#include "../ir.h"
#include "pattern.h"

#define MAX_CHAIN 6

typedef struct Epi {
    Node *chain[MAX_CHAIN + 1];      /* the absorbed nodes, in order */
    int nchain;
    const char *act;                 /* activation name of the fused op, or NULL */
    double alpha, beta;
    Tensor *slope, *res, *bias;
    const char *res_mode;            /* "before" / "after" */
    Tensor *out;                     /* the chain's last output */
} Epi;

static int same_shape(const Tensor *a, const Tensor *b)
{
    if (a->rank != b->rank || a->dtype != b->dtype) return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

/* The node that alone reads t (once), or NULL. */
static Node *only_reader(Graph *g, Tensor *t)
{
    Node **rd;
    if (!tensor_single_use(g, t) || graph_readers(g, t, &rd) != 1) return NULL;
    return rd[0];
}

/* c is a constant with one value, or one per channel on axis `axis` of y
 * (right-aligned broadcasting into y without changing its shape). */
static int per_channel(const Tensor *c, const Tensor *y, int axis)
{
    if (!c->data || c->dtype != y->dtype || c->rank > y->rank) return 0;
    if (tensor_numel(c) == 1) return 1;
    int off = y->rank - c->rank;
    for (int i = 0; i < c->rank; i++) {
        int ax = off + i;
        if (c->dims[i] == 1) continue;
        if (ax != axis || c->dims[i] != y->dims[ax]) return 0;
    }
    return 1;
}

/* A scalar constant input j of n, or the default when it is absent. */
static int scalar_in(Node *n, int j, int *present, double *v)
{
    Tensor *t = in_t(n, j);
    *present = t != NULL;
    if (!t) return 1;
    return t->data && tensor_numel(t) == 1 && tensor_const_splat(t, v);
}

/* Is r (reading x) an activation the epilogue does? Sets e->act and its
 * parameters, and may absorb a second node (x * Sigmoid(x)). */
static int activation(Node *r, Tensor *x, int chan_axis, Epi *e)
{
    const char *op = r->op_type;
    if (r->domain[0] || r->nout != 1 || r->nin < 1 || r->in[0] != x) return 0;
    if (!strcmp(op, "Relu") || !strcmp(op, "Sigmoid") || !strcmp(op, "Tanh") || !strcmp(op, "HardSwish") ||
        !strcmp(op, "Mish")) {
        e->act = op;
    } else if (!strcmp(op, "LeakyRelu")) {
        e->act = op;
        e->alpha = attr_f(r, "alpha");
    } else if (!strcmp(op, "HardSigmoid")) {
        e->act = op;
        e->alpha = attr_f(r, "alpha");
        e->beta = attr_f(r, "beta");
    } else if (!strcmp(op, "Gelu")) {
        const char *a = attr_s(r, "approximate");
        if (!strcmp(a, "none")) e->act = "GeluErf";
        else if (!strcmp(a, "tanh")) e->act = "GeluTanh";
        else return 0;
    } else if (!strcmp(op, "Clip")) {
        int has_lo, has_hi;
        double lo, hi;
        if (r->opset < 11) {
            has_lo = attr_has(r, "min");
            has_hi = attr_has(r, "max");
            lo = attr_f(r, "min");
            hi = attr_f(r, "max");
        } else if (!scalar_in(r, 1, &has_lo, &lo) || !scalar_in(r, 2, &has_hi, &hi)) {
            return 0;
        }
        if (!has_lo || !has_hi || !(lo > -1e30 && hi < 1e30)) return 0;  /* finite bounds only */
        e->act = "Clip";
        e->alpha = lo;
        e->beta = hi;
    } else if (!strcmp(op, "PRelu")) {
        Tensor *s = r->in[1];
        if (!s || s == x || !per_channel(s, x, chan_axis)) return 0;
        e->act = "PRelu";
        e->slope = s;
    } else {
        return 0;
    }
    if (!same_shape(r->out[0], x)) { e->act = NULL; e->slope = NULL; return 0; }
    e->chain[e->nchain++] = r;
    e->out = r->out[0];
    return 1;
}

/* x read by exactly Sigmoid(x) and Mul(x, that): SiLU (pat_silu). */
static int silu(Graph *g, Tensor *x, Epi *e)
{
    Node *s, *m;
    if (!pat_silu(g, x, &s, &m)) return 0;
    e->act = "SiLU";
    e->chain[e->nchain++] = s;
    e->chain[e->nchain++] = m;
    e->out = m->out[0];
    return 1;
}

/* r = Add(x, other) with other of x's shape (not x itself): the residual. */
static Tensor *residual(Node *r, Tensor *x)
{
    if (strcmp(r->op_type, "Add") || r->domain[0] || r->nin != 2) return NULL;
    Tensor *o = r->in[0] == x ? r->in[1] : r->in[1] == x ? r->in[0] : NULL;
    if (!o || o == x || !same_shape(o, x) || !same_shape(r->out[0], x)) return NULL;
    return o;
}

static int linear_kind(const Node *n)
{
    if (n->domain[0] || n->nout != 1 || n->promoted) return 0;
    if (n->out[0]->dtype != DT_FLOAT && n->out[0]->dtype != DT_DOUBLE) return 0;
    if (!strcmp(n->op_type, "Conv") || !strcmp(n->op_type, "ConvTranspose")) return 1;
    if (!strcmp(n->op_type, "Gemm")) return 2;
    /* the kernel's channel is B's column: a 1-D B has none */
    if (!strcmp(n->op_type, "MatMul") && n->in[1]->rank >= 2) return 2;
    return 0;
}

static void scan(Graph *g, Node *n, Epi *e)
{
    memset(e, 0, sizeof *e);
    int conv = linear_kind(n) == 1;
    Tensor *y = n->out[0];
    int chan_axis = conv ? 1 : y->rank - 1;
    e->out = y;
    Tensor *x = y;
    /* MatMul + per-column constant bias */
    if (!strcmp(n->op_type, "MatMul") && y->rank >= 1) {
        Node *r = only_reader(g, x);
        if (r && !strcmp(r->op_type, "Add") && !r->domain[0] && r->nin == 2) {
            Tensor *o = r->in[0] == x ? r->in[1] : r->in[0];
            if (o != x && o->data && o->dtype == y->dtype && o->rank >= 1 && o->rank <= y->rank &&
                o->dims[o->rank - 1] == y->dims[y->rank - 1] && tensor_numel(o) == y->dims[y->rank - 1] &&
                same_shape(r->out[0], y)) {
                e->bias = o;
                e->chain[e->nchain++] = r;
                x = e->out = r->out[0];
            }
        }
    }
    for (int step = 0; step < 3 && e->nchain + 2 <= MAX_CHAIN; step++) {   /* residual, activation, residual */
        if (!e->act && silu(g, x, e)) {
            x = e->out;
            continue;
        }
        Node *r = only_reader(g, x);
        if (!r) break;
        Tensor *o;
        if (!e->res && (o = residual(r, x))) {
            e->res = o;
            e->res_mode = e->act ? "after" : "before";
            e->chain[e->nchain++] = r;
            x = e->out = r->out[0];
            if (e->act) break;
            continue;
        }
        if (!e->act && activation(r, x, chan_axis, e)) {
            x = e->out;
            continue;
        }
        break;
    }
}

int pass_fuse_epilogue(Graph *g)
{
    int changes = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        if (!linear_kind(n)) continue;
        Epi e;
        scan(g, n, &e);
        if (!e.nchain) continue;
        if (!e.act && !e.res && !e.bias) continue;
        Node *last = e.chain[e.nchain - 1];
        Tensor *in[5] = {n->in[0], n->in[1], n->nin > 2 ? n->in[2] : NULL, e.res, e.slope};
        if (e.bias) in[2] = e.bias;
        const char *fop = xfmt("Fused%s", n->op_type);
        int nin = 5;
        while (nin > 2 && !in[nin - 1]) nin--;         /* no trailing omitted inputs */
        Node *f = graph_insert_node(g, last, fop, "onnx2c", in, nin, &e.out, 1);
        f->attrs = xalloc(sizeof(Attr) * (size_t)(n->nattrs + 1));   /* the standard op's attributes */
        if (n->nattrs) memcpy(f->attrs, n->attrs, sizeof(Attr) * (size_t)n->nattrs);
        f->nattrs = n->nattrs;
        node_remove_attr(f, "broadcast");
        if (e.act) node_set_attr_s(f, "activation", e.act);
        if (e.act && e.alpha != 0) node_set_attr_f(f, "activation_alpha", e.alpha);
        if (e.act && e.beta != 0) node_set_attr_f(f, "activation_beta", e.beta);
        if (e.res) node_set_attr_s(f, "residual", e.res_mode);
        f->name = n->name;
        f->opset = n->opset;
        f->fused = n->fused ? n->fused : n->op_type;
        node_add_origins(f, n);
        for (int k = 0; k < e.nchain; k++) {
            node_add_origins(f, e.chain[k]);
            node_note_fused(f, e.chain[k]->op_type);
        }
        diag_node = f;
        node_reinfer(f);
        note("fuse_epilogue: %s '%s' -> %s (%s)", n->op_type, n->name, fop, f->fused);
        for (int k = e.nchain - 1; k >= 0; k--) graph_remove_node(g, e.chain[k]);
        graph_remove_node(g, n);
        changes++;
        i--;                                     /* the next node moved to position i */
    }
    return changes;
}
