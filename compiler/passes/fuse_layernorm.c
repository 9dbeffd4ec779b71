/* Pass fuse_layernorm: a LayerNorm written out in elementwise ops,
 *     mu = ReduceMean(x, axes)      d = Sub(x, mu)
 *     v  = ReduceMean(Pow(d, 2) or Mul(d, d), axes)
 *     s  = Sqrt(Add(v, eps))        n = Div(d, s) or Mul(d, Reciprocal(s))
 *     y  = Add(Mul(n, gamma), beta) (gamma and beta optional)
 * with keepdims=1 and axes the last axes of x (a contiguous suffix, as
 * attribute or input), becomes LayerNormalization(x, gamma, beta,
 * axis, epsilon). gamma and beta must broadcast to the normalized dims
 * alone (constants with leading 1s are reshaped); without gamma the scale
 * is a constant of ones. */
#include "pattern.h"

/* t broadcasts to x's dims [axis, rank) and nothing else: sets *lead to
 * the number of leading dims of t beyond the normalized rank (all 1). */
static int suffix_bcast(const Tensor *t, const Tensor *x, int axis, int *lead)
{
    int nr = x->rank - axis;
    if (!t || t->dtype != x->dtype || t->rank > x->rank) return 0;
    *lead = t->rank > nr ? t->rank - nr : 0;
    for (int d = 0; d < t->rank; d++) {
        int xd = x->rank - t->rank + d;
        if (d < *lead) {
            if (t->dims[d] != 1) return 0;
        } else if (t->dims[d] != 1 && t->dims[d] != x->dims[xd]) {
            return 0;
        }
    }
    return 1;
}

/* t as LayerNormalization reads it: itself, or a constant copy without
 * the leading 1s; NULL if it does not fit. */
static Tensor *affine_input(Graph *g, Tensor *t, const Tensor *x, int axis)
{
    int lead;
    if (!suffix_bcast(t, x, axis, &lead)) return NULL;
    if (!lead) return t;
    if (!t->data) return NULL;
    Tensor *c = graph_new_const(g, t->name, t->dtype, t->rank - lead, t->dims + lead);
    memcpy(c->data, t->data, tensor_bytes(t));
    return c;
}

int pass_fuse_layernorm(Graph *g)
{
    int changes = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *sub = g->nodes[i];
        if (!pat_is(sub, "Sub")) continue;
        Tensor *x = sub->in[0], *d = sub->out[0];
        Node *rm1 = pat_prod(sub->in[1], "ReduceMean");
        if (!rm1 || rm1->in[0] != x || !pat_float(x) || x == sub->in[1]) continue;
        int64_t ax[MAX_RANK], ax2[MAX_RANK];
        int nax, nax2;
        if (!pat_reduce_keep(rm1, ax, &nax)) continue;
        int axis = x->rank - nax;
        int suffix = 1;
        for (int k = 0; k < nax; k++) suffix &= ax[k] == axis + k;
        if (!suffix || !pat_same_shape(d, x)) continue;
        /* d is read by the square and the division */
        Node **rd;
        int nrd = graph_readers(g, d, &rd);
        if (nrd != 2 || graph_is_output(g, d)) continue;
        Node *sq = NULL, *dv = NULL;
        for (int k = 0; k < 2; k++) {
            Node *r = rd[k];
            double two;
            if (pat_is(r, "Pow") && r->in[0] == d && pat_scalar(r->in[1], &two) && two == 2) sq = r;
            else if (pat_is(r, "Mul") && r->in[0] == d && r->in[1] == d) sq = r;
            else if ((pat_is(r, "Div") && r->in[0] == d) || pat_is(r, "Mul")) dv = r;
        }
        if (!sq || !dv) continue;
        Node *rm2 = pat_single_reader(g, sq->out[0]);
        if (!rm2 || !pat_is(rm2, "ReduceMean") || !pat_reduce_keep(rm2, ax2, &nax2) ||
            !pat_same_axes(ax, nax, ax2, nax2))
            continue;
        Node *add = pat_single_reader(g, rm2->out[0]);
        double eps;
        if (!add || !pat_is(add, "Add") || !pat_scalar(pat_other(add, rm2->out[0]), &eps) || !(eps >= 0)) continue;
        Node *sqrt = pat_single_reader(g, add->out[0]);
        double half;
        if (!sqrt) continue;
        if (!pat_is(sqrt, "Sqrt") &&
            !(pat_is(sqrt, "Pow") && sqrt->in[0] == add->out[0] && pat_scalar(sqrt->in[1], &half) && half == 0.5))
            continue;
        Node *rc = NULL;
        Tensor *sd = sqrt->out[0];
        if (pat_is(dv, "Div")) {
            if (dv->in[1] != sd) continue;
        } else {
            rc = pat_single_reader(g, sd);
            if (!rc || !pat_is(rc, "Reciprocal") || pat_other(dv, d) != rc->out[0] ||
                !tensor_single_use(g, rc->out[0]))
                continue;
        }
        if (!tensor_single_use(g, sd) || !tensor_single_use(g, rm1->out[0])) continue;
        PatMatch m = {{0}, 0};
        Node *chain[] = {rm1, sub, sq, rm2, add, sqrt, rc, dv};
        for (size_t k = 0; k < sizeof chain / sizeof chain[0]; k++)
            if (chain[k]) pat_add(&m, chain[k]);
        /* the affine part */
        Node *last = dv;
        Tensor *gamma = NULL, *beta = NULL, *y = dv->out[0];
        Node *mul = pat_single_reader(g, y);
        if (mul && pat_is(mul, "Mul") && pat_same_shape(mul->out[0], x) &&
            (gamma = affine_input(g, pat_other(mul, y), x, axis)) != NULL) {
            pat_add(&m, mul);
            last = mul;
            y = mul->out[0];
        }
        Node *ad = pat_single_reader(g, y);
        if (ad && pat_is(ad, "Add") && pat_same_shape(ad->out[0], x) &&
            (beta = affine_input(g, pat_other(ad, y), x, axis)) != NULL) {
            pat_add(&m, ad);
            last = ad;
            y = ad->out[0];
        }
        if (!gamma) {
            gamma = graph_new_const(g, "ln_ones", x->dtype, nax, x->dims + axis);
            for (int64_t k = 0; k < tensor_numel(gamma); k++) elem_set(x->dtype, gamma->data, k, 1.0);
        }
        Tensor *in[3] = {x, gamma, beta};
        Node *n = pat_replace(g, &m, last, "LayerNormalization", "", in, beta ? 3 : 2, y);
        node_set_attr_i(n, "axis", axis);
        node_set_attr_f(n, "epsilon", eps);
        node_reinfer(n);
        note("fuse_layernorm: %s -> LayerNormalization(axis %d, epsilon %g) '%s'", n->fused, axis, eps, y->name);
        changes++;
        i = -1;
    }
    return changes;
}
