/* Layout assignment, a step of the C target's lowering: which arena
 * tensors are stored channels innermost (N x H x W x C, LAYOUT_NHWC)
 * instead of the ONNX order (NCHW).
 *
 * Why: a depthwise convolution in NCHW vectorizes along an image row,
 * which in MobileNet-like models is 3 to 24 pixels wide, so most vector
 * lanes idle (vww's 6 x 6 x 128 depthwise layers ran at 14 GFLOP/s).
 * Channels innermost, the vector runs along the channels (o2c_dwc_f32),
 * and the pointwise convolutions on both sides read and write that layout
 * as plainly as NCHW (o2c_conv_pwt_f32, a GEMM with the channels as
 * columns). So the layout changes only inside chains of such convolutions,
 * where no transposition is needed: no node outside sees the bytes.
 *
 * The rule (conv_layout_role in conv.c says what a node can do):
 *   - a depthwise conv (CONV_ROLE_DW) proposes its input and output;
 *   - a proposed tensor stays channels innermost only if it is an arena
 *     tensor (not a graph input or output, not a constant), its producer
 *     has a role, and every reader has a role and reads it as its data
 *     input, or as the residual of a conv whose output has the same
 *     layout (the epilogue adds the residual element by element);
 *   - a depthwise conv keeps the layout only with both its tensors in it
 *     (o2c_dwc_f32 reads and writes channels innermost).
 * Dropping a tensor can break another's conditions, so the rules run to a
 * fixed point. Deterministic: the graph's order, no hashing. */
#include "ir.h"

static int is_arena_float(const Tensor *t)
{
    /* computed by a node at run time (graph_evaluate gives every tensor data) */
    return t && t->producer && !t->producer->folded && !t->is_input && !t->is_output && t->dtype == DT_FLOAT &&
           (t->rank == 3 || t->rank == 4);
}

/* whether t may stay channels innermost, its readers as they are now */
static int keeps(Graph *g, Tensor *t)
{
    if (!is_arena_float(t) || conv_layout_role(t->producer) == CONV_ROLE_NONE) return 0;
    Node **rd;
    int nr = graph_readers(g, t, &rd);
    for (int i = 0; i < nr; i++) {
        Node *r = rd[i];
        if (conv_layout_role(r) == CONV_ROLE_NONE) return 0;
        for (int j = 0; j < r->nin; j++) {
            if (r->in[j] != t || j == 0) continue;
            if (j != 3 || r->out[0]->layout != LAYOUT_NHWC) return 0;   /* weights, bias; a residual of another layout */
        }
    }
    return 1;
}

void layout_assign(Graph *g, int tiled)
{
    for (int i = 0; i < g->ntensors; i++) g->tensors[i]->layout = LAYOUT_NCHW;
    for (int i = 0; i < g->nnodes; i++) {   /* lowering's temporaries and renamed outputs are not in g->tensors */
        Node *n = g->nodes[i];
        for (int j = 0; j < n->nin; j++)
            if (n->in[j]) n->in[j]->layout = LAYOUT_NCHW;
        for (int j = 0; j < n->nout; j++)
            if (n->out[j]) n->out[j]->layout = LAYOUT_NCHW;
    }
    if (!tiled) return;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        if (conv_layout_role(n) != CONV_ROLE_DW) continue;
        if (is_arena_float(n->in[0])) n->in[0]->layout = LAYOUT_NHWC;
        if (is_arena_float(n->out[0])) n->out[0]->layout = LAYOUT_NHWC;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < g->nnodes; i++) {
            Node *n = g->nodes[i];
            int role = conv_layout_role(n);
            if (role == CONV_ROLE_NONE) continue;
            Tensor *x = n->in[0], *y = n->out[0], *r = n->nin > 3 ? n->in[3] : NULL;
            if (x->layout == LAYOUT_NHWC && !keeps(g, x)) { x->layout = LAYOUT_NCHW; changed = 1; }
            if (y->layout == LAYOUT_NHWC && !keeps(g, y)) { y->layout = LAYOUT_NCHW; changed = 1; }
            if (role == CONV_ROLE_DW && x->layout != y->layout) {
                x->layout = y->layout = LAYOUT_NCHW;
                changed = 1;
            }
            if (r && r->layout != y->layout) {
                r->layout = y->layout = LAYOUT_NCHW;
                changed = 1;
            }
        }
    }
}
