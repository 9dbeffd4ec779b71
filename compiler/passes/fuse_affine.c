/* Pass fuse_affine: a per-channel affine map y' = s[c] * y + t[c] right
 * after a linear op is folded into its constant weights and bias.
 *
 * Linear ops: Conv, ConvTranspose (channel: axis 1), Gemm, and MatMul with
 * a constant 2-D B (channel: the column, the last axis). The affine map is
 * the one reader of the linear op's output:
 *   BatchNormalization in inference form (constant scale, B, mean, var;
 *     channel axis 1, so a product's output must be 2-D),
 *   Mul or Div by a constant, Add of a constant, or y - constant, the
 *     constant being one value or one per channel (broadcast without
 *     changing y's shape).
 * The result stays a standard op, so horizontal fusion and fuse_epilogue
 * still see Conv / Gemm / MatMul: W is replaced by W * s (a new constant of
 * W's size; only when this node alone reads W), the bias by B * s + t.
 * A 2-D MatMul that gains a bias becomes Gemm(A, B * s, t); an N-D MatMul
 * takes only scales (fuse_epilogue absorbs a bias Add into FusedMatMul). */
#include <math.h>
#include <string.h>

#include "../ir.h"

enum { K_CONV = 1, K_CONVT, K_GEMM, K_MATMUL };

static int kind_of(const Node *n)
{
    if (n->domain[0] || n->nout != 1 || n->promoted || !n->out[0]) return 0;
    int dt = n->out[0]->dtype;
    if (dt != DT_FLOAT && dt != DT_DOUBLE) return 0;
    if (!strcmp(n->op_type, "Conv")) return K_CONV;
    if (!strcmp(n->op_type, "ConvTranspose")) return K_CONVT;
    if (!strcmp(n->op_type, "Gemm")) return K_GEMM;
    if (!strcmp(n->op_type, "MatMul")) return K_MATMUL;
    return 0;
}

static int is_const(const Tensor *t) { return t && t->data && !t->is_input; }

/* c: one value, or one per channel on `axis` of y; sets v[ch] for every channel. */
static int channel_values(const Tensor *c, const Tensor *y, int axis, int64_t nch, double *v)
{
    if (!is_const(c) || c->dtype != y->dtype || c->rank > y->rank) return 0;
    int64_t ne = tensor_numel(c);
    if (ne != 1) {
        int off = y->rank - c->rank;
        for (int i = 0; i < c->rank; i++)
            if (c->dims[i] != 1 && (off + i != axis || c->dims[i] != y->dims[off + i])) return 0;
        if (ne != nch) return 0;
    }
    for (int64_t ch = 0; ch < nch; ch++) v[ch] = elem_f64(c->dtype, c->data, ne == 1 ? 0 : ch);
    return 1;
}

/* The affine map of reader r of y: s, t per channel. */
static int affine_of(Graph *g, Node *r, Tensor *y, int axis, int64_t nch, double *s, double *t)
{
    if (r->domain[0] || r->nout < 1 || !r->out[0]) return 0;
    const char *op = r->op_type;
    for (int64_t c = 0; c < nch; c++) { s[c] = 1; t[c] = 0; }
    if (!strcmp(op, "BatchNormalization")) {
        if (r->in[0] != y || axis != 1 || attr_i(r, "spatial") != 1) return 0;
        if (r->opset >= 14 && attr_i(r, "training_mode")) return 0;
        if (r->opset < 7 && attr_i(r, "is_test") == 0 && r->nout > 1) return 0;
        for (int j = 1; j < r->nout; j++)
            if (r->out[j] && tensor_nuses(g, r->out[j])) return 0;
        double *sc = xalloc(sizeof(double) * (size_t)nch), *b = xalloc(sizeof(double) * (size_t)nch);
        double *mean = xalloc(sizeof(double) * (size_t)nch), *var = xalloc(sizeof(double) * (size_t)nch);
        for (int j = 1; j <= 4; j++)
            if (!is_const(r->in[j]) || tensor_numel(r->in[j]) != nch || r->in[j]->dtype != y->dtype) return 0;
        for (int64_t c = 0; c < nch; c++) {
            sc[c] = elem_f64(y->dtype, r->in[1]->data, c);
            b[c] = elem_f64(y->dtype, r->in[2]->data, c);
            mean[c] = elem_f64(y->dtype, r->in[3]->data, c);
            var[c] = elem_f64(y->dtype, r->in[4]->data, c);
        }
        double eps = attr_f(r, "epsilon");
        for (int64_t c = 0; c < nch; c++) {
            s[c] = sc[c] / sqrt(var[c] + eps);
            t[c] = b[c] - mean[c] * s[c];
        }
        return 1;
    }
    int mul = !strcmp(op, "Mul"), add = !strcmp(op, "Add"), sub = !strcmp(op, "Sub"), div = !strcmp(op, "Div");
    if (!(mul || add || sub || div) || r->nin != 2) return 0;
    if (r->in[0] == r->in[1]) return 0;
    Tensor *c = r->in[0] == y ? r->in[1] : r->in[0];
    if ((sub || div) && r->in[0] != y) return 0;          /* only y - c, y / c */
    if (r->out[0]->rank != y->rank || tensor_numel(r->out[0]) != tensor_numel(y)) return 0;
    double *v = xalloc(sizeof(double) * (size_t)nch);
    if (!channel_values(c, y, axis, nch, v)) return 0;
    for (int64_t ch = 0; ch < nch; ch++) {
        if (mul) s[ch] = v[ch];
        else if (div) { if (v[ch] == 0) return 0; s[ch] = 1 / v[ch]; }
        else if (add) t[ch] = v[ch];
        else t[ch] = -v[ch];
    }
    return 1;
}

/* W * s per output channel, as a new constant of W's shape. */
static Tensor *scaled_weights(Graph *g, Node *n, int kind, const double *s, int64_t nch)
{
    Tensor *w = n->in[1];
    Tensor *nw = graph_new_const(g, w->name, w->dtype, w->rank, w->dims);
    int64_t ne = tensor_numel(w);
    int64_t group = kind == K_CONVT ? attr_i(n, "group") : 1;
    int tb = kind == K_GEMM ? (int)attr_i(n, "transB") : 0;
    for (int64_t e = 0; e < ne; e++) {
        int64_t ch;
        if (kind == K_CONV) ch = e / (ne / nch);
        else if (kind == K_CONVT) {
            int64_t C = w->dims[0], MG = w->dims[1], ksz = ne / (C * MG);
            int64_t ci = e / (MG * ksz), mm = (e / ksz) % MG;
            ch = (ci / (C / group)) * MG + mm;
        } else if (tb) ch = e / w->dims[1];            /* B is N x K */
        else ch = e % w->dims[1];                      /* B is K x N */
        elem_set(w->dtype, nw->data, e, elem_f64(w->dtype, w->data, e) * s[ch]);
    }
    return nw;
}

static int all_equal(const double *v, int64_t n, double x)
{
    for (int64_t i = 0; i < n; i++)
        if (v[i] != x) return 0;
    return 1;
}

/* Folds reader r (the affine map s, t) into linear node n. */
static int fold_into(Graph *g, Node *n, int kind, Node *r, const double *s, const double *t, int64_t nch)
{
    Tensor *y = n->out[0];
    int dt = y->dtype;
    int scale = !all_equal(s, nch, 1), shift = !all_equal(t, nch, 0);
    Node **rd;
    if (scale && (graph_readers(g, n->in[1], &rd) != 1 || graph_is_output(g, n->in[1]))) return 0;
    if (kind == K_GEMM) {
        /* C: absent, one value, one per column, or M x N */
        Tensor *c = in_t(n, 2);
        int64_t N = y->dims[1];
        if (c && !(tensor_numel(c) == 1 || (tensor_numel(c) == N && c->dims[c->rank - 1] == N) ||
                   (c->rank == 2 && c->dims[0] == y->dims[0] && c->dims[1] == N)))
            return 0;
        if (c && !is_const(c)) return 0;
    }
    if (kind == K_MATMUL && shift && (y->rank != 2 || n->in[0]->rank != 2)) return 0;
    if ((kind == K_CONV || kind == K_CONVT) && in_t(n, 2) && !is_const(n->in[2])) return 0;

    Tensor *w = scale ? scaled_weights(g, n, kind, s, nch) : n->in[1];
    if (kind == K_CONV || kind == K_CONVT) {
        Tensor *b = in_t(n, 2);
        if (b || shift) {
            Tensor *nb = graph_new_const(g, b ? b->name : xfmt("%s_bias", n->name), dt, 1, &nch);
            for (int64_t c = 0; c < nch; c++)
                elem_set(dt, nb->data, c, (b ? elem_f64(dt, b->data, c) : 0) * s[c] + t[c]);
            node_set_input(g, n, 2, nb);
        }
        node_set_input(g, n, 1, w);
    } else if (kind == K_GEMM) {
        Tensor *c = in_t(n, 2);
        double beta = attr_f(n, "beta");
        if (beta == 0) c = NULL;                       /* the lowering ignores C then */
        if (c || shift) {
            int full = c && c->rank == 2 && c->dims[0] > 1 && tensor_numel(c) > 1 && c->dims[0] == y->dims[0] &&
                       tensor_numel(c) == y->dims[0] * nch;
            int64_t dims[2] = {full ? y->dims[0] : 1, nch};
            Tensor *nc = full ? graph_new_const(g, c->name, dt, 2, dims) : graph_new_const(g, c ? c->name : xfmt("%s_bias", n->name), dt, 1, &nch);
            int64_t ne = tensor_numel(nc);
            for (int64_t e = 0; e < ne; e++) {
                int64_t ch = e % nch;
                double cv = !c ? 0 : tensor_numel(c) == 1 ? elem_f64(dt, c->data, 0) : elem_f64(dt, c->data, full ? e : ch);
                elem_set(dt, nc->data, e, beta * cv * s[ch] + t[ch]);
            }
            node_set_input(g, n, 2, nc);
            node_set_attr_f(n, "beta", 1.0);
        }
        node_set_input(g, n, 1, w);
    } else if (shift) {                                /* 2-D MatMul + bias -> Gemm */
        Tensor *nc = graph_new_const(g, xfmt("%s_bias", n->name), dt, 1, &nch);
        for (int64_t c = 0; c < nch; c++) elem_set(dt, nc->data, c, t[c]);
        Tensor *in[3] = {n->in[0], w, nc};
        Node *gm = graph_insert_node(g, r, "Gemm", "", in, 3, &r->out[0], 1);
        gm->name = n->name;
        gm->opset = n->opset;
        gm->fused = n->fused ? n->fused : n->op_type;
        node_add_origins(gm, n);
        node_add_origins(gm, r);
        node_note_fused(gm, r->op_type);
        node_reinfer(gm);
        graph_remove_node(g, r);
        graph_remove_node(g, n);
        return 1;
    } else {
        node_set_input(g, n, 1, w);
    }
    node_set_output(n, 0, r->out[0]);
    node_add_origins(n, r);
    node_note_fused(n, r->op_type);
    graph_remove_node(g, r);
    node_reinfer(n);
    return 1;
}

int pass_fuse_affine(Graph *g)
{
    int changes = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        int kind = kind_of(n);
        if (!kind || !is_const(n->in[1])) continue;
        if (kind == K_MATMUL && n->in[1]->rank != 2) continue;
        Tensor *y = n->out[0];
        Node **rd;
        if (!tensor_single_use(g, y) || graph_readers(g, y, &rd) != 1) continue;
        Node *r = rd[0];
        int axis = kind == K_CONV || kind == K_CONVT ? 1 : y->rank - 1;
        if (y->rank < 2 && kind != K_MATMUL) continue;
        if (y->rank < 1) continue;
        int64_t nch = y->dims[axis];
        double *s = xalloc(sizeof(double) * (size_t)(nch + 1)), *t = xalloc(sizeof(double) * (size_t)(nch + 1));
        if (!affine_of(g, r, y, axis, nch, s, t)) continue;
        diag_node = n;
        const char *what = r->op_type, *name = r->name;
        if (!fold_into(g, n, kind, r, s, t, nch)) continue;
        note("fuse_affine: %s '%s' folded into %s '%s'", what, name, n->op_type, n->name);
        changes++;
        i--;                                     /* look at the same position again */
    }
    return changes;
}
