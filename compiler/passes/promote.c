/* Pass promote: float16 and bfloat16 computed in float32, as explicit
 * nodes. The first pass, at every -O level (the kernels compute float32:
 * without it a 16-bit node could not be lowered).
 *
 * Inference typed a node that computes on 16-bit floats (and IsNaN/IsInf
 * of a float8) by running its shape rule on float32 stand-ins (Node.promoted;
 * engine/inference.c). Here it becomes a float32 node between casts:
 *   - each 16-bit input: a constant becomes a float32 constant of the same
 *     values (exact), a computed one is read through Cast(to float32);
 *   - each output the node makes in the 16-bit type: the node writes a
 *     float32 tensor and Cast(to the 16-bit type) writes the output.
 * The node keeps Node.promoted (and promoted_in): its lowering may round
 * intermediate values as the 16-bit type, as the reference does. Views and
 * Cast/CastLike/EyeLike convert or move the 16-bit types themselves and are
 * never promoted. The casts are ordinary nodes: the
 * fold pass evaluates those of constants, fuse_elementwise fuses them into
 * the elementwise loops beside them. */
#include <string.h>

#include "../ir.h"

static Tensor *float_constant(Graph *g, Tensor *t)
{
    Tensor *c = graph_new_const(g, xfmt("%s (as float32)", t->name), DT_FLOAT, t->rank, t->dims);
    float *d = c->data;
    for (int64_t i = 0; i < tensor_numel(t); i++)
        d[i] = dtype_is_narrow(t->dtype) ? narrow_to_float(t->dtype, ((const uint8_t *)t->data)[i])
                                         : half_to_float(t->dtype, ((const uint16_t *)t->data)[i]);
    return c;
}

static Node *cast_node(Graph *g, Node *before, Tensor *x, Tensor *y, int to, const Node *origin)
{
    Node *c = graph_insert_node(g, before, "Cast", "", &x, 1, &y, 1);
    node_set_attr_i(c, "to", to);
    node_add_origins(c, origin);
    return c;
}

static int promote(Graph *g, Node *n)
{
    int half = n->promoted;
    for (int j = 0; j < n->nin; j++) {
        Tensor *x = n->in[j];
        if (!x || !node_promoted_in(n, j) || x->dtype == DT_FLOAT) continue;
        Tensor *f;
        if (x->data) {
            f = float_constant(g, x);
        } else {
            f = graph_new_tensor(g, xfmt("%s (as float32)", x->name));
            node_reinfer(cast_node(g, n, x, f, DT_FLOAT, n));
        }
        for (int k = j; k < n->nin; k++)   /* every slot reading x */
            if (n->in[k] == x) node_set_input(g, n, k, f);
    }
    Node *next = graph_node_index(g, n) + 1 < g->nnodes ? g->nodes[graph_node_index(g, n) + 1] : NULL;
    Tensor *outs[64];
    int nout = n->nout < 64 ? n->nout : 64;
    if (n->nout > 64) fail("too many outputs");
    for (int j = 0; j < nout; j++) {
        outs[j] = NULL;
        Tensor *y = n->out[j];
        if (!y || y->dtype != half) continue;
        Tensor *f = graph_new_tensor(g, xfmt("%s (float32)", y->name));
        outs[j] = y;
        node_set_output(n, j, f);
    }
    node_reinfer(n);   /* on float32 inputs, still Node.promoted: its lowering may round as the 16-bit type */
    for (int j = 0; j < nout; j++)
        if (outs[j]) node_reinfer(cast_node(g, next, n->out[j], outs[j], half, n));
    note("promote: %s '%s' computes in float32 (%s in and out)", n->op_type, n->name, dtype_name(half));
    return 1;
}

/* a 16-bit computation still reading or writing the 16-bit types */
static int unpromoted(const Node *n)
{
    if (!n->promoted) return 0;
    for (int j = 0; j < n->nin; j++)
        if (node_promoted_in(n, j) && n->in[j]->dtype != DT_FLOAT) return 1;
    for (int j = 0; j < n->nout; j++)
        if (n->out[j] && n->out[j]->dtype == n->promoted) return 1;
    return 0;
}

int pass_promote(Graph *g)
{
    int changes = 0;
    for (int i = 0; i < g->nnodes; i++)
        if (unpromoted(g->nodes[i])) changes += promote(g, g->nodes[i]);
    return changes;
}
