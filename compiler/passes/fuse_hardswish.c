/* Pass fuse_hardswish: hard-swish and hard-sigmoid written out in
 * elementwise ops (paddle2onnx, TensorFlow and PyTorch exports of
 * MobileNetV3-style blocks):
 *     h = Clip(Add(x, 3), 0, 6) / 6          (Div by 6 or Mul by 1/6)
 *     y = x * h  or  (x * Clip(Add(x, 3), 0, 6)) / 6
 * y becomes HardSwish(x); h alone becomes HardSigmoid(x, alpha 1/6,
 * beta 0.5). The Clip may have its bounds as attributes or inputs (or come
 * from fuse_clip). Constants 3, 0, 6 must be exact, 1/6 within 1e-6. */
#include "pattern.h"

/* the Clip's bounds when both are constant */
static int clip_bounds(const Node *c, double *lo, double *hi)
{
    *lo = -INFINITY;
    *hi = INFINITY;
    if (attr_has(c, "min")) *lo = attr_f(c, "min");
    if (attr_has(c, "max")) *hi = attr_f(c, "max");
    if (c->nin > 1 && c->in[1] && !pat_scalar(c->in[1], lo)) return 0;
    if (c->nin > 2 && c->in[2] && !pat_scalar(c->in[2], hi)) return 0;
    return 1;
}

/* n divides t by 6 (Div(t, 6) or Mul(t, 1/6)) */
static int by_six(const Node *n, const Tensor *t)
{
    double c;
    if (pat_is(n, "Div")) return n->in[0] == t && pat_scalar(n->in[1], &c) && c == 6;
    if (pat_is(n, "Mul")) return pat_scalar(pat_other(n, t), &c) && pat_near(c, 1.0 / 6, 1e-6);
    return 0;
}

int pass_fuse_hardswish(Graph *g)
{
    int changes = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *cl = g->nodes[i];
        double lo, hi, three;
        if (!pat_is(cl, "Clip") || !pat_float(cl->in[0]) || !clip_bounds(cl, &lo, &hi) || lo != 0 || hi != 6)
            continue;
        Node *add = pat_prod(cl->in[0], "Add");
        if (!add || !tensor_single_use(g, cl->in[0])) continue;
        Tensor *x = NULL;
        for (int j = 0; j < 2; j++)
            if (!add->in[j]->data && pat_scalar(add->in[1 - j], &three) && three == 3) x = add->in[j];
        if (!x || !pat_same_shape(cl->out[0], x)) continue;
        PatMatch m = {{0}, 0};
        pat_add(&m, add);
        pat_add(&m, cl);
        Node *r = pat_single_reader(g, cl->out[0]), *last = NULL;
        int swish = 0;
        if (!r) continue;
        if (by_six(r, cl->out[0])) {                      /* h = clip / 6 */
            pat_add(&m, r);
            last = r;
            Node *r2 = pat_single_reader(g, r->out[0]);
            if (r2 && pat_is(r2, "Mul") && pat_other(r2, r->out[0]) == x && r2->in[0] != r2->in[1]) {
                pat_add(&m, r2);
                last = r2;
                swish = 1;
            }
        } else if (pat_is(r, "Mul") && pat_other(r, cl->out[0]) == x) {   /* (x * clip) / 6 */
            Node *r2 = pat_single_reader(g, r->out[0]);
            if (!r2 || !by_six(r2, r->out[0])) continue;
            pat_add(&m, r);
            pat_add(&m, r2);
            last = r2;
            swish = 1;
        } else {
            continue;
        }
        Tensor *y = last->out[0];
        if (!pat_same_shape(y, x) || y->dtype != x->dtype) continue;
        Node *n = pat_replace(g, &m, last, swish ? "HardSwish" : "HardSigmoid", "", &x, 1, y);
        if (!swish) {
            node_set_attr_f(n, "alpha", 1.0 / 6);
            node_set_attr_f(n, "beta", 0.5);
        }
        node_reinfer(n);
        note("fuse_hardswish: %s -> %s '%s'", n->fused, n->op_type, y->name);
        changes++;
        i = -1;
    }
    return changes;
}
