/* Pass fuse_clip: Min(x, hi) then Max(., lo), or Max then Min, with
 * constant one-value bounds lo <= hi, becomes Clip(x, lo, hi); so does
 * Relu(x) then Min(., hi) with hi >= 0 (a ReLU6 written as Relu/Min).
 * The bounds are Clip's inputs from opset 11 on, its attributes before.
 * Clip propagates NaN (as ONNX's reference does); the kernels of Min and
 * Max return the bound for a NaN input. */
#include "pattern.h"

/* n is Min or Max of a non-constant tensor and a one-value constant:
 * sets *x and *v. */
static int bound_of(Node *n, Tensor **x, double *v)
{
    if (n->nin != 2 || !n->in[0] || !n->in[1]) return 0;
    for (int j = 0; j < 2; j++)
        if (!n->in[j]->data && pat_scalar(n->in[1 - j], v)) {
            *x = n->in[j];
            return !isnan(*v);
        }
    return 0;
}

int pass_fuse_clip(Graph *g)
{
    int changes = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *a = g->nodes[i];
        int amin = pat_is(a, "Min"), amax = pat_is(a, "Max"), arelu = pat_is(a, "Relu");
        if (!amin && !amax && !arelu) continue;
        Tensor *x, *mid = a->out[0];
        double va = 0, vb;
        if (arelu) x = a->in[0];
        else if (!bound_of(a, &x, &va)) continue;
        if (!dtype_supported(x->dtype) || x->dtype == DT_BOOL) continue;
        Node *b = pat_single_reader(g, mid);
        if (!b || !(amin ? pat_is(b, "Max") : pat_is(b, "Min"))) continue;
        Tensor *bx;
        if (!bound_of(b, &bx, &vb) || bx != mid) continue;
        double lo = amin ? vb : va, hi = amin ? va : vb;
        if (!(lo <= hi)) continue;
        Tensor *y = b->out[0];
        if (!pat_same_shape(y, x) || y->dtype != x->dtype) continue;
        PatMatch m = {{0}, 0};
        pat_add(&m, a);
        pat_add(&m, b);
        Node *c;
        if (g->opset >= 11) {
            Tensor *in[3] = {x, pat_const_scalar(g, "clip_min", x->dtype, lo),
                             pat_const_scalar(g, "clip_max", x->dtype, hi)};
            c = pat_replace(g, &m, b, "Clip", "", in, 3, y);
        } else {
            c = pat_replace(g, &m, b, "Clip", "", &x, 1, y);
            node_set_attr_f(c, "min", lo);
            node_set_attr_f(c, "max", hi);
        }
        node_reinfer(c);
        note("fuse_clip: %s -> Clip [%g, %g] '%s'", c->fused, lo, hi, y->name);
        changes++;
        i = -1;    /* the node list changed: rescan */
    }
    return changes;
}
