/* Pass fuse_softmax: Exp(x) -> ReduceSum(axis, keepdims=1) -> Div (or Mul
 * by the Reciprocal of the sum) becomes Softmax(x, axis); with the stable
 * form ReduceMax(x, axis, keepdims=1) -> Sub(x, max) -> Exp the ReduceMax
 * and Sub go too. One reduced axis only; before opset 13 Softmax coerces
 * its input to 2-D, so there only the last axis is fused. The fused kernel
 * subtracts the row maximum, so it is finite where the plain form
 * overflows. */
#include "pattern.h"

int pass_fuse_softmax(Graph *g)
{
    int changes = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *rs = g->nodes[i];
        int64_t ax[MAX_RANK];
        int nax;
        if (!pat_is(rs, "ReduceSum") || !pat_reduce_keep(rs, ax, &nax) || nax != 1) continue;
        Tensor *e = rs->in[0];
        Node *ex = pat_prod(e, "Exp");
        if (!ex || !pat_float(e)) continue;
        int rank = e->rank, axis = (int)ax[0];
        if (g->opset < 13 && axis != rank - 1) continue;
        /* the division: Div(e, s) or Mul(e, Reciprocal(s)) */
        Tensor *s = rs->out[0];
        Node *sr = pat_single_reader(g, s), *rc = NULL, *dv = NULL;
        if (!sr) continue;
        if (pat_is(sr, "Div") && sr->in[1] == s && sr->in[0] == e) dv = sr;
        else if (pat_is(sr, "Reciprocal")) {
            rc = sr;
            Node *mr = pat_single_reader(g, rc->out[0]);
            if (mr && pat_is(mr, "Mul") && pat_other(mr, rc->out[0]) == e) dv = mr;
        }
        if (!dv || !pat_same_shape(dv->out[0], e)) continue;
        PatMatch m = {{0}, 0};
        pat_add(&m, ex);
        pat_add(&m, rs);
        if (rc) pat_add(&m, rc);
        pat_add(&m, dv);
        Node **rd;
        if (!pat_internal(g, e, &m) || graph_readers(g, e, &rd) != 2) continue;
        /* the stable form */
        Tensor *x = ex->in[0];
        Node *sub = pat_prod(x, "Sub"), *mx = sub ? pat_prod(sub->in[1], "ReduceMax") : NULL;
        int64_t ax2[MAX_RANK];
        int nax2;
        if (mx && mx->in[0] == sub->in[0] && sub->in[0] != sub->in[1] && pat_reduce_keep(mx, ax2, &nax2) &&
            pat_same_axes(ax, nax, ax2, nax2) && tensor_single_use(g, x) && tensor_single_use(g, mx->out[0])) {
            pat_add(&m, sub);
            pat_add(&m, mx);
            x = sub->in[0];
        }
        Tensor *y = dv->out[0];
        Node *n = pat_replace(g, &m, dv, "Softmax", "", &x, 1, y);
        node_set_attr_i(n, "axis", axis);
        node_reinfer(n);
        note("fuse_softmax: %s -> Softmax(axis %d) '%s'", n->fused, axis, y->name);
        changes++;
        i = -1;
    }
    return changes;
}
