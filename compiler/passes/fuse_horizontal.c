/* Pass fuse_horizontal: sibling layers on the same input become one.
 *
 * Siblings are Convs (group 1, explicit pads, same strides and dilations,
 * same output size, constant weights and bias; a smaller kernel is placed
 * inside the largest one when its pads line up, within a weight-growth
 * limit), or Gemm/MatMul with constant weights on an input whose axes
 * except the last have size 1 (a MatMul's single-reader Add of a constant
 * bias is absorbed as the bias). They become one Conv, or one Gemm (2-D
 * input; alpha and beta folded into the weights) or MatMul(+Add), with
 * concatenated weights and biases. Every original output becomes a
 * SliceView of the fused output (no copy: the slices are contiguous since
 * the leading axes have size 1; a batch > 1 is left alone). A Concat of the
 * siblings' outputs along the channel axis is the fused output itself (or
 * a view of it). When every sibling is followed by the same single-reader
 * activation (same op, attributes and extra inputs), or by the same SiLU
 * written out (x * Sigmoid(x): a Sigmoid and a Mul both reading the output),
 * one activation runs on the fused output, above the slices, where a later
 * epilogue pass can fuse it.
 *
 * Order: runs after fold/fuse_affine (BN already in the Conv weights,
 * standard Conv/Gemm/MatMul) and before fuse_epilogue. */
#include <string.h>

#include "../ir.h"
#include "pattern.h"

#define MAX_SIB 32
#define CONV_GROWTH 4      /* fused conv weights at most this times the originals */

static int is_op(const Node *n, const char *op) { return !n->domain[0] && !strcmp(n->op_type, op); }

typedef struct {
    Node *node;          /* the Conv / Gemm / MatMul */
    Node *add;           /* a MatMul's bias Add, or NULL */
    Node *act;           /* the hoisted activation, or NULL */
    Node *mul;           /* act a Sigmoid: the Mul of SiLU, x * Sigmoid(x), or NULL */
    Tensor *out;         /* what readers see: the output of node, add or act */
    int64_t n;           /* output channels / columns */
    int64_t kdims[3];    /* conv: kernel dims (spatial), pb[] begin pads */
    int64_t pb[3], pe[3];
} Sib;

/* ---- attributes and shapes ---------------------------------------------- */

static int float_type(int dt) { return dt == DT_FLOAT || dt == DT_DOUBLE; }

static void axis_ints(const Node *n, const char *name, int len, int64_t def, int64_t *v)
{
    const int64_t *a;
    int k = attr_ints(n, name, &a);
    for (int i = 0; i < len; i++) v[i] = k == len ? a[i] : def;
}

static int attr_equal(const Attr *a, const Attr *b)
{
    if (a->type != b->type || strcmp(a->name, b->name)) return 0;
    switch (a->type) {
    case AT_INT: return a->i == b->i;
    case AT_FLOAT: return a->f == b->f;
    case AT_STRING: return !strcmp(a->s ? a->s : "", b->s ? b->s : "");
    case AT_INTS:
        if (a->n != b->n) return 0;
        for (int i = 0; i < a->n; i++) if (a->ints[i] != b->ints[i]) return 0;
        return 1;
    case AT_FLOATS:
        if (a->n != b->n) return 0;
        for (int i = 0; i < a->n; i++) if (a->floats[i] != b->floats[i]) return 0;
        return 1;
    default: return 0;
    }
}

static int same_attrs(const Node *a, const Node *b)
{
    if (a->nattrs != b->nattrs) return 0;
    for (int i = 0; i < a->nattrs; i++) {
        const Attr *o = attr_find(b, a->attrs[i].name);
        if (!o || !attr_equal(&a->attrs[i], o)) return 0;
    }
    return 1;
}

/* ---- activations that can be hoisted above the slices -------------------- */

static const char *const ACTS[] = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Elu",
                                   "Selu", "Celu", "Softplus", "Softsign", "Mish", "Gelu", "Clip", NULL};

static Node *single_act(Graph *g, Tensor *t)
{
    Node **rd;
    if (!tensor_single_use(g, t) || graph_readers(g, t, &rd) != 1) return NULL;
    Node *a = rd[0];
    if (a->domain[0] || a->in[0] != t || a->nout != 1) return NULL;
    for (int i = 0; ACTS[i]; i++)
        if (!strcmp(a->op_type, ACTS[i])) return a;
    return NULL;
}

/* SiLU written out on t (pat_silu): the Sigmoid; *mul the Mul */
static Node *silu_act(Graph *g, Tensor *t, Node **mul)
{
    Node *s;
    return pat_silu(g, t, &s, mul) ? s : NULL;
}

static int same_act(const Node *a, const Node *b)
{
    if (strcmp(a->op_type, b->op_type) || a->nin != b->nin || !same_attrs(a, b)) return 0;
    for (int j = 1; j < a->nin; j++) {
        Tensor *x = a->in[j], *y = b->in[j];
        if (x == y) continue;
        double u, v;
        if (!x || !y || !tensor_const_splat(x, &u) || !tensor_const_splat(y, &v) || u != v ||
            x->dtype != y->dtype || tensor_numel(x) != 1 || tensor_numel(y) != 1)
            return 0;
    }
    return 1;
}

/* ---- Conv siblings ------------------------------------------------------- */

static int conv_member(Graph *g, Node *n, Tensor *x, Sib *s)
{
    (void)g;
    if (!is_op(n, "Conv") || n->in[0] != x || n->nin < 2 || !n->in[1]->data) return 0;
    Tensor *w = n->in[1], *b = n->nin > 2 ? n->in[2] : NULL, *y = n->out[0];
    if (b && !b->data) return 0;
    if (!float_type(x->dtype) || w->dtype != x->dtype || (b && b->dtype != x->dtype) || n->promoted) return 0;
    if (attr_i(n, "group") != 1 || strcmp(attr_s(n, "auto_pad"), "NOTSET")) return 0;
    int nsp = x->rank - 2;
    if (nsp < 1 || nsp > 3 || w->rank != x->rank || x->dims[0] != 1 || w->dims[1] != x->dims[1]) return 0;
    memset(s, 0, sizeof *s);
    s->node = n;
    s->out = y;
    s->n = w->dims[0];
    int64_t pads[6];
    axis_ints(n, "pads", 2 * nsp, 0, pads);
    for (int i = 0; i < nsp; i++) {
        s->kdims[i] = w->dims[2 + i];
        s->pb[i] = pads[i];
        s->pe[i] = pads[nsp + i];
    }
    return 1;
}

static int conv_compatible(const Sib *a, const Sib *b)
{
    const Node *x = a->node, *y = b->node;
    int nsp = x->in[0]->rank - 2;
    int64_t s1[3], s2[3], d1[3], d2[3];
    axis_ints(x, "strides", nsp, 1, s1);
    axis_ints(y, "strides", nsp, 1, s2);
    axis_ints(x, "dilations", nsp, 1, d1);
    axis_ints(y, "dilations", nsp, 1, d2);
    for (int i = 0; i < nsp; i++)
        if (s1[i] != s2[i] || d1[i] != d2[i] || x->out[0]->dims[2 + i] != y->out[0]->dims[2 + i]) return 0;
    return x->out[0]->dtype == y->out[0]->dtype;
}

/* member s placed inside kernel `big`: its offset per axis, or 0 if it does not line up */
static int conv_embed(const Node *ref, const Sib *big, const Sib *s, int64_t *off)
{
    int nsp = ref->in[0]->rank - 2;
    int64_t d[3];
    axis_ints(ref, "dilations", nsp, 1, d);
    for (int i = 0; i < nsp; i++) {
        int64_t diff = big->pb[i] - s->pb[i];
        if (diff < 0 || diff % d[i]) return 0;
        off[i] = diff / d[i];
        if (off[i] + s->kdims[i] > big->kdims[i]) return 0;
    }
    return 1;
}

/* ---- Gemm / MatMul siblings ---------------------------------------------- */

static int leading_ones(const Tensor *t)
{
    for (int d = 0; d + 1 < t->rank; d++)
        if (t->dims[d] != 1) return 0;
    return 1;
}

/* a constant bias of n values (a splat or an [.., n] vector) */
static int bias_ok(const Tensor *c, int64_t n, int dtype)
{
    if (!c || !c->data || c->dtype != dtype) return 0;
    if (tensor_numel(c) == 1) return 1;
    return tensor_numel(c) == n && c->rank >= 1 && c->dims[c->rank - 1] == n;
}

static int linear_member(Graph *g, Node *n, Tensor *x, Sib *s)
{
    if (n->nin < 2 || n->in[0] != x || n->promoted || !float_type(x->dtype) || !leading_ones(x)) return 0;
    Tensor *w = n->in[1];
    if (!w->data || w->dtype != x->dtype || w->rank != 2) return 0;
    memset(s, 0, sizeof *s);
    s->node = n;
    s->out = n->out[0];
    if (is_op(n, "Gemm")) {
        if (x->rank != 2 || attr_i(n, "transA")) return 0;
        s->n = attr_i(n, "transB") ? w->dims[0] : w->dims[1];
        if (n->nin > 2 && n->in[2] && !bias_ok(n->in[2], s->n, x->dtype)) return 0;
        return 1;
    }
    if (!is_op(n, "MatMul") || x->rank < 2) return 0;
    s->n = w->dims[1];
    /* a single-reader Add of a constant bias becomes the bias */
    Node **rd;
    if (tensor_single_use(g, n->out[0]) && graph_readers(g, n->out[0], &rd) == 1 && is_op(rd[0], "Add")) {
        Node *a = rd[0];
        Tensor *c = a->in[0] == n->out[0] ? a->in[1] : a->in[0];
        if (bias_ok(c, s->n, x->dtype) && c->rank <= n->out[0]->rank && a->out[0]->rank == n->out[0]->rank &&
            a->out[0]->dims[a->out[0]->rank - 1] == s->n && leading_ones(a->out[0])) {
            s->add = a;
            s->out = a->out[0];
        }
    }
    return 1;
}

/* weight (n, k) of member s, alpha folded in */
static double linear_w(const Sib *s, int64_t n, int64_t k)
{
    Tensor *w = s->node->in[1];
    int gemm = is_op(s->node, "Gemm");
    int64_t K = w->dims[gemm && attr_i(s->node, "transB") ? 1 : 0];
    double v = gemm && attr_i(s->node, "transB") ? elem_f64(w->dtype, w->data, n * K + k)
                                                 : elem_f64(w->dtype, w->data, k * s->n + n);
    return gemm ? v * attr_f(s->node, "alpha") : v;
}

static Tensor *linear_bias_t(const Sib *s)
{
    if (s->add) return s->add->in[0] == s->node->out[0] ? s->add->in[1] : s->add->in[0];
    if (is_op(s->node, "Gemm") && s->node->nin > 2) return s->node->in[2];
    return NULL;
}

static double linear_b(const Sib *s, int64_t n)
{
    Tensor *c = linear_bias_t(s);
    if (!c) return 0;
    double v = elem_f64(c->dtype, c->data, tensor_numel(c) == 1 ? 0 : n);
    return is_op(s->node, "Gemm") ? v * attr_f(s->node, "beta") : v;
}

/* ---- the rewrite ---------------------------------------------------------- */

/* A Concat (along the slice axis) of some siblings' outputs, each once:
 * its members come first, in its order. Returns the Concat or NULL. */
static Node *find_concat(Graph *g, Sib *sib, int ns, int axis)
{
    for (int i = 0; i < ns; i++) {
        Node **rd;
        int nr = graph_readers(g, sib[i].out, &rd);
        for (int r = 0; r < nr; r++) {
            Node *c = rd[r];
            if (!is_op(c, "Concat") || c->nin < 2 || c->nin > ns) continue;
            int64_t a = attr_i(c, "axis");
            if (a < 0) a += c->out[0]->rank;
            if (a != axis) continue;
            int order[MAX_SIB], ok = 1;
            for (int j = 0; j < c->nin && ok; j++) {
                order[j] = -1;
                for (int k = 0; k < ns; k++)
                    if (sib[k].out == c->in[j]) order[j] = k;
                for (int u = 0; u < j; u++) if (order[u] == order[j]) ok = 0;
                if (order[j] < 0) ok = 0;
            }
            if (!ok) continue;
            /* reorder: the Concat's inputs first */
            Sib tmp[MAX_SIB];
            int nt = 0;
            char used[MAX_SIB] = {0};
            for (int j = 0; j < c->nin; j++) { tmp[nt++] = sib[order[j]]; used[order[j]] = 1; }
            for (int k = 0; k < ns; k++) if (!used[k]) tmp[nt++] = sib[k];
            memcpy(sib, tmp, sizeof(Sib) * (size_t)ns);
            return c;
        }
    }
    return NULL;
}

static Node *first_in_graph(Graph *g, Sib *sib, int ns)
{
    int best = -1;
    for (int i = 0; i < ns; i++) {
        int at = graph_node_index(g, sib[i].node);
        if (best < 0 || at < best) best = at;
    }
    return g->nodes[best];
}

static void remove_sibs(Graph *g, Sib *sib, int ns, Node *fused)
{
    for (int i = 0; i < ns; i++) {
        node_add_origins(fused, sib[i].node);
        graph_remove_node(g, sib[i].node);
        if (sib[i].add) {
            node_add_origins(fused, sib[i].add);
            graph_remove_node(g, sib[i].add);
        }
    }
}

/* fused output y (and hoisted activation): every sibling's output a SliceView */
static void finish(Graph *g, Sib *sib, int ns, Node *fused, Tensor *y, int axis, Node *concat, const char *what)
{
    const int sig_first = sib[0].mul && sib[0].mul->in[0] == sib[0].act->out[0];
    if (sib[0].act)
        for (int i = 0; i < ns; i++) {
            if (sib[i].mul) graph_remove_node(g, sib[i].mul);
            graph_remove_node(g, sib[i].act);
        }
    int at = graph_node_index(g, fused);
    Node *anchor = at + 1 < g->nnodes ? g->nodes[at + 1] : NULL;
    if (sib[0].act) {                               /* one activation on the fused output */
        Tensor *z = graph_new_tensor(g, xfmt("%s_%s", y->name, sib[0].act->op_type));
        Tensor *in[8];
        int nin = sib[0].act->nin;
        in[0] = y;
        for (int j = 1; j < nin; j++) in[j] = sib[0].act->in[j];
        Node *a = graph_insert_node(g, anchor, sib[0].act->op_type, "", in, nin, &z, 1);
        a->attrs = sib[0].act->attrs;
        a->nattrs = sib[0].act->nattrs;
        a->opset = sib[0].act->opset;
        for (int i = 0; i < ns; i++) node_add_origins(a, sib[i].act);
        node_reinfer(a);
        if (sib[0].mul) {                           /* SiLU: y * Sigmoid(y), the operands in the Mul's order */
            Tensor *u = graph_new_tensor(g, xfmt("%s_silu", y->name));
            Tensor *min[2] = {sig_first ? z : y, sig_first ? y : z};
            Node *mu = graph_insert_node(g, anchor, "Mul", "", min, 2, &u, 1);
            mu->opset = sib[0].mul->opset;
            for (int i = 0; i < ns; i++) node_add_origins(mu, sib[i].mul);
            node_reinfer(mu);
            z = u;
        }
        y = z;
    }
    int64_t pos = 0, cat_end = 0;
    for (int i = 0; i < ns; i++) {
        if (concat && i < concat->nin) cat_end = pos + sib[i].n;
        Node *v = graph_insert_node(g, anchor, "SliceView", "onnx2c", &y, 1, &sib[i].out, 1);
        node_set_attr_i(v, "axis", axis);
        node_set_attr_i(v, "start", pos);
        node_set_attr_i(v, "end", pos + sib[i].n);
        node_add_origins(v, sib[i].node);
        if (sib[i].add) node_add_origins(v, sib[i].add);
        node_reinfer(v);
        pos += sib[i].n;
    }
    if (concat) {
        Tensor *cy = concat->out[0];
        if (cat_end == pos) {
            graph_remove_node(g, concat);
            /* the fused node (or the hoisted activation) writes the Concat's output */
            Node *p = y->producer;
            graph_replace_uses(g, y, cy);
            node_set_output(p, 0, cy);
            node_add_origins(p, concat);
        } else {
            Node *v = graph_insert_node(g, concat, "SliceView", "onnx2c", &y, 1, &cy, 1);
            graph_remove_node(g, concat);
            node_set_attr_i(v, "axis", axis);
            node_set_attr_i(v, "start", 0);
            node_set_attr_i(v, "end", cat_end);
            node_add_origins(v, concat);
            node_reinfer(v);
        }
    }
    note("fuse_horizontal: %d sibling %s on '%s' -> '%s'%s%s", ns, what, fused->in[0]->name, fused->name,
         sib[0].act ? xfmt(" (+%s hoisted)", sib[0].mul ? "SiLU" : sib[0].act->op_type) : "", concat ? " (Concat removed)" : "");
}

/* siblings whose outputs all go to the same single-reader activation, or
 * all to a SiLU written out */
static void find_acts(Graph *g, Sib *sib, int ns)
{
    Node *a0 = single_act(g, sib[0].out);
    for (int i = 0; i < ns && a0; i++) {
        Node *a = single_act(g, sib[i].out);
        if (!a || !same_act(a0, a)) a0 = NULL;
    }
    if (a0) {
        for (int i = 0; i < ns; i++) {
            sib[i].act = single_act(g, sib[i].out);
            sib[i].out = sib[i].act->out[0];
        }
        return;
    }
    Node *m;
    for (int i = 0; i < ns; i++)
        if (!silu_act(g, sib[i].out, &m)) return;
    for (int i = 0; i < ns; i++) {
        sib[i].act = silu_act(g, sib[i].out, &sib[i].mul);
        sib[i].out = sib[i].mul->out[0];
    }
}

static int fuse_convs(Graph *g, Tensor *x, Sib *all, int nall)
{
    /* the largest kernel; members that fit inside it */
    int nsp = x->rank - 2, bi = 0;
    for (int i = 1; i < nall; i++) {
        int64_t a = 1, b = 1;
        for (int d = 0; d < nsp; d++) { a *= all[i].kdims[d]; b *= all[bi].kdims[d]; }
        if (a > b) bi = i;
    }
    Sib big = all[bi], sib[MAX_SIB];
    int64_t kvol = 1, orig = 0, fused_w = 0, C = x->dims[1], off[3];
    for (int d = 0; d < nsp; d++) kvol *= big.kdims[d];
    int ns = 0;
    for (int i = 0; i < nall; i++) {
        if (!conv_embed(big.node, &big, &all[i], off)) continue;
        sib[ns++] = all[i];
        orig += tensor_numel(all[i].node->in[1]);
        fused_w += all[i].n * C * kvol;
    }
    if (ns < 2 || fused_w > CONV_GROWTH * orig) {
        /* too much padding: the largest set of members shaped alike */
        Sib same[MAX_SIB], best[MAX_SIB];
        int nbest = 0;
        for (int r = 0; r < nall; r++) {
            int nsame = 0;
            for (int i = 0; i < nall; i++) {
                int eq = 1;
                for (int d = 0; d < nsp; d++)
                    if (all[i].kdims[d] != all[r].kdims[d] || all[i].pb[d] != all[r].pb[d]) eq = 0;
                if (eq) same[nsame++] = all[i];
            }
            if (nsame > nbest) {
                nbest = nsame;
                memcpy(best, same, sizeof(Sib) * (size_t)nsame);
            }
        }
        return nbest >= 2 && nbest < nall ? fuse_convs(g, x, best, nbest) : 0;
    }
    find_acts(g, sib, ns);
    Node *concat = find_concat(g, sib, ns, 1);
    int64_t M = 0;
    int any_bias = 0;
    for (int i = 0; i < ns; i++) {
        M += sib[i].n;
        if (sib[i].node->nin > 2 && sib[i].node->in[2]) any_bias = 1;
    }
    int dt = x->dtype;
    int64_t wd[MAX_RANK];
    wd[0] = M;
    wd[1] = C;
    for (int d = 0; d < nsp; d++) wd[2 + d] = big.kdims[d];
    Tensor *w = graph_new_const(g, xfmt("%s_hfused", big.node->in[1]->name), dt, x->rank, wd);
    Tensor *b = any_bias ? graph_new_const(g, xfmt("%s_hfused_bias", big.node->name), dt, 1, &M) : NULL;
    int64_t m0 = 0;
    for (int i = 0; i < ns; i++) {
        Tensor *sw = sib[i].node->in[1], *sb = sib[i].node->nin > 2 ? sib[i].node->in[2] : NULL;
        conv_embed(big.node, &big, &sib[i], off);
        int64_t k[3] = {1, 1, 1}, K[3] = {1, 1, 1}, o[3] = {0, 0, 0};
        for (int d = 0; d < nsp; d++) { k[3 - nsp + d] = sib[i].kdims[d]; K[3 - nsp + d] = big.kdims[d]; o[3 - nsp + d] = off[d]; }
        for (int64_t m = 0; m < sib[i].n; m++) {
            for (int64_t c = 0; c < C; c++)
                for (int64_t a = 0; a < k[0]; a++)
                    for (int64_t bb = 0; bb < k[1]; bb++)
                        for (int64_t e = 0; e < k[2]; e++) {
                            int64_t src = (((m * C + c) * k[0] + a) * k[1] + bb) * k[2] + e;
                            int64_t dst = ((((m0 + m) * C + c) * K[0] + a + o[0]) * K[1] + bb + o[1]) * K[2] + e + o[2];
                            elem_set(dt, w->data, dst, elem_f64(dt, sw->data, src));
                        }
            if (b && sb) elem_set(dt, b->data, m0 + m, elem_f64(dt, sb->data, m));
        }
        m0 += sib[i].n;
    }
    Tensor *y = graph_new_tensor(g, xfmt("%s_hfused", big.node->out[0]->name));
    Tensor *in[3] = {x, w, b};
    Node *f = graph_insert_node(g, first_in_graph(g, sib, ns), "Conv", "", in, b ? 3 : 2, &y, 1);
    f->opset = big.node->opset;
    f->attrs = xalloc(sizeof(Attr) * (size_t)(big.node->nattrs + 1));
    memcpy(f->attrs, big.node->attrs, sizeof(Attr) * (size_t)big.node->nattrs);
    f->nattrs = big.node->nattrs;
    node_remove_attr(f, "kernel_shape");     /* from the weights */
    node_reinfer(f);
    remove_sibs(g, sib, ns, f);
    finish(g, sib, ns, f, y, 1, concat, "Convs");
    return 1;
}

static int fuse_linear(Graph *g, Tensor *x, Sib *sib, int ns)
{
    find_acts(g, sib, ns);
    int axis = x->rank - 1;
    Node *concat = find_concat(g, sib, ns, axis);
    int64_t N = 0, K = x->dims[x->rank - 1];
    int any_bias = 0, dt = x->dtype;
    for (int i = 0; i < ns; i++) {
        N += sib[i].n;
        if (linear_bias_t(&sib[i])) any_bias = 1;
    }
    int gemm = x->rank == 2;
    int64_t wd[2] = {gemm ? N : K, gemm ? K : N};
    Tensor *w = graph_new_const(g, xfmt("%s_hfused", sib[0].node->in[1]->name), dt, 2, wd);
    Tensor *b = any_bias ? graph_new_const(g, xfmt("%s_hfused_bias", sib[0].node->name), dt, 1, &N) : NULL;
    int64_t n0 = 0;
    for (int i = 0; i < ns; i++) {
        for (int64_t n = 0; n < sib[i].n; n++) {
            for (int64_t k = 0; k < K; k++)
                elem_set(dt, w->data, gemm ? (n0 + n) * K + k : k * N + n0 + n, linear_w(&sib[i], n, k));
            if (b) elem_set(dt, b->data, n0 + n, linear_b(&sib[i], n));
        }
        n0 += sib[i].n;
    }
    Node *first = first_in_graph(g, sib, ns);
    Tensor *y = graph_new_tensor(g, xfmt("%s_hfused", sib[0].node->out[0]->name));
    Node *f;
    if (gemm) {
        Tensor *in[3] = {x, w, b};
        f = graph_insert_node(g, first, "Gemm", "", in, b ? 3 : 2, &y, 1);
        f->opset = sib[0].node->opset;
        node_set_attr_i(f, "transB", 1);
        node_reinfer(f);
    } else {
        Tensor *in[2] = {x, w}, *mm = b ? graph_new_tensor(g, xfmt("%s_mm", y->name)) : y;
        Node *m = graph_insert_node(g, first, "MatMul", "", in, 2, &mm, 1);
        m->opset = sib[0].node->opset;
        node_reinfer(m);
        f = m;
        if (b) {
            Tensor *ain[2] = {mm, b};
            Node *a = graph_insert_node(g, first, "Add", "", ain, 2, &y, 1);
            a->opset = m->opset;
            node_reinfer(a);
            remove_sibs(g, sib, ns, m);
            node_add_origins(a, m);
            finish(g, sib, ns, a, y, axis, concat, "MatMuls");
            return 1;
        }
    }
    remove_sibs(g, sib, ns, f);
    finish(g, sib, ns, f, y, axis, concat, gemm ? "Gemm/MatMuls" : "MatMuls");
    return 1;
}

static int try_input(Graph *g, Tensor *x)
{
    Node **rd;
    int nr = graph_readers(g, x, &rd);
    if (nr < 2) return 0;
    Node *readers[MAX_SIB * 2];
    if (nr > MAX_SIB * 2) nr = MAX_SIB * 2;
    memcpy(readers, rd, sizeof(Node *) * (size_t)nr);
    /* convs: grouped with the first conv they are compatible with */
    Sib cs[MAX_SIB], s;
    int nc = 0;
    for (int r = 0; r < nr && nc < MAX_SIB; r++)
        if (conv_member(g, readers[r], x, &s) && (!nc || conv_compatible(&cs[0], &s))) cs[nc++] = s;
    if (nc >= 2 && fuse_convs(g, x, cs, nc)) return 1;
    Sib ls[MAX_SIB];
    int nl = 0;
    for (int r = 0; r < nr && nl < MAX_SIB; r++)
        if (linear_member(g, readers[r], x, &s)) {
            if (nl && ls[0].out->dtype != s.out->dtype) continue;
            if (nl && ls[0].out->rank != s.out->rank) continue;
            ls[nl++] = s;
        }
    if (nl >= 2 && fuse_linear(g, x, ls, nl)) return 1;
    return 0;
}

int pass_fuse_horizontal(Graph *g)
{
    int changes = 0;
    for (int t = 0; t < g->ntensors; t++) {
        Tensor *x = g->tensors[t];
        if (x->data || x->rank < 1) continue;
        if (try_input(g, x)) changes++;
    }
    return changes;
}
