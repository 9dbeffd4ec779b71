/* Pass layout: which arena tensors are stored channels innermost
 * (N x H x W x C, LAYOUT_NHWC) instead of the ONNX order (NCHW), for the
 * C target's tiled kernels (Graph.tiled; every other target keeps NCHW).
 * The last pass, at every -O level: the lowering reads Tensor.layout.
 *
 * Why: a depthwise convolution in NCHW vectorizes along an image row,
 * which in MobileNet-like models is 3 to 24 pixels wide, so most vector
 * lanes idle (vww's 6 x 6 x 128 depthwise layers ran at 14 GFLOP/s).
 * Channels innermost, the vector runs along the channels (o2c_dwc_f32),
 * and the pointwise convolutions on both sides read and write that layout
 * as plainly as NCHW (o2c_conv_pwt_f32, a GEMM with the channels as
 * columns). So the layout changes only inside chains of such nodes, where
 * no transposition is needed: no node outside sees the bytes.
 *
 * What a node can do (its kind):
 *   DW  a depthwise conv that o2c_dwc_f32 computes (Conv's OpDef.layout):
 *       both its tensors channels innermost, or neither;
 *   PW  a pointwise conv: reads and writes either layout;
 *   EW  an elementwise node (OpDef.layout ew_layout: activations, a learnable
 *       affine between convs): its full-shape inputs and its output share
 *       one layout, whichever;
 *   and every other node reads and writes NCHW only.
 * The rules:
 *   - a DW node proposes its input and output, and an EW node with one of
 *     its full-shape tensors proposed proposes the others (to a fixed
 *     point);
 *   - a proposed tensor keeps the layout only if it is an arena tensor
 *     (computed at run time, not a graph input or output), its producer
 *     has a kind, and every reader has a kind and reads it as its data
 *     (a conv's input 0, an EW node's full-shape input), or as the
 *     residual of a conv whose output has the same layout (the epilogue
 *     adds the residual element by element);
 *   - DW and EW nodes keep it only with all their tensors in it.
 * Dropping a tensor can break another's conditions, so the rules run to a
 * fixed point. Deterministic: the graph's order, no hashing. */
#include "../ir.h"

enum { KIND_NONE, KIND_PW, KIND_DW, KIND_EW };

/* what the node can do, by its op's OpDef.layout */
static int kind(Node *n)
{
    switch (n->op->layout ? n->op->layout(n) : LAYOUT_ROLE_NONE) {
    case LAYOUT_ROLE_PW: return KIND_PW;
    case LAYOUT_ROLE_DW: return KIND_DW;
    case LAYOUT_ROLE_ANY: return KIND_EW;
    default: return KIND_NONE;
    }
}

static int is_arena_float(const Tensor *t)
{
    /* computed by a node at run time (graph_evaluate gives every tensor data) */
    return t && t->producer && !t->producer->folded && !t->is_input && !t->is_output && t->dtype == DT_FLOAT &&
           (t->rank == 3 || t->rank == 4);
}

/* an EW node's tensors that take part in its layout: the output and the
 * inputs of its shape (single values read the same in any layout) */
static int ew_tensors(Node *n, Tensor **ts)
{
    int k = 0;
    ts[k++] = n->out[0];
    for (int j = 0; j < n->nin; j++)
        if (n->in[j] && tensor_numel(n->in[j]) != 1) ts[k++] = n->in[j];
    return k;
}

/* whether t may stay channels innermost, its readers as they are now */
static int keeps(Graph *g, Tensor *t)
{
    if (!is_arena_float(t) || kind(t->producer) == KIND_NONE) return 0;
    Node **rd;
    int nr = graph_readers(g, t, &rd);
    for (int i = 0; i < nr; i++) {
        Node *r = rd[i];
        int k = kind(r);
        if (k == KIND_NONE) return 0;
        if (k == KIND_EW) continue;   /* every input of t's shape is data */
        for (int j = 0; j < r->nin; j++) {
            if (r->in[j] != t || j == 0) continue;
            if (j != 3 || r->out[0]->layout != LAYOUT_NHWC) return 0;   /* weights, bias; a residual of another layout */
        }
    }
    return 1;
}

/* all of ts in one layout, or all back to NCHW; 1 if that changed one */
static int all_or_none(Tensor **ts, int k)
{
    int nhwc = 0;
    for (int i = 0; i < k; i++) nhwc += ts[i]->layout == LAYOUT_NHWC;
    if (nhwc == 0 || nhwc == k) return 0;
    for (int i = 0; i < k; i++) ts[i]->layout = LAYOUT_NCHW;
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
    Tensor *ts[O2C_MAX_X + 1];
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        if (kind(n) != KIND_DW) continue;
        if (is_arena_float(n->in[0])) n->in[0]->layout = LAYOUT_NHWC;
        if (is_arena_float(n->out[0])) n->out[0]->layout = LAYOUT_NHWC;
    }
    for (int changed = 1; changed;) {   /* proposals spread through EW nodes */
        changed = 0;
        for (int i = 0; i < g->nnodes; i++) {
            Node *n = g->nodes[i];
            if (kind(n) != KIND_EW || n->nin > O2C_MAX_X) continue;
            int k = ew_tensors(n, ts), any = 0;
            for (int j = 0; j < k; j++) any |= ts[j]->layout == LAYOUT_NHWC;
            for (int j = 0; j < k && any; j++)
                if (ts[j]->layout != LAYOUT_NHWC && is_arena_float(ts[j])) {
                    ts[j]->layout = LAYOUT_NHWC;
                    changed = 1;
                }
        }
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < g->nnodes; i++) {
            Node *n = g->nodes[i];
            int kd = kind(n);
            if (kd == KIND_NONE) continue;
            if (kd == KIND_EW && n->nin > O2C_MAX_X) continue;   /* never proposed */
            int k = kd == KIND_EW ? ew_tensors(n, ts) : 2;
            if (kd != KIND_EW) { ts[0] = n->in[0]; ts[1] = n->out[0]; }
            for (int j = 0; j < k; j++)
                if (ts[j]->layout == LAYOUT_NHWC && !keeps(g, ts[j])) { ts[j]->layout = LAYOUT_NCHW; changed = 1; }
            if (kd == KIND_DW || kd == KIND_EW) changed |= all_or_none(ts, k);
            Tensor *r = kd != KIND_EW && n->nin > 3 ? n->in[3] : NULL;
            if (r && r->layout != n->out[0]->layout) {
                r->layout = n->out[0]->layout = LAYOUT_NCHW;
                changed = 1;
            }
        }
    }
}

int pass_layout(Graph *g)
{
    if (g->parent) return 0;   /* a body's tensors stay NCHW */
    layout_assign(g, g->tiled);
    int nhwc = 0;
    for (int i = 0; i < g->ntensors; i++) nhwc += g->tensors[i]->layout == LAYOUT_NHWC;
    if (nhwc) note("layout: %d tensors channels innermost", nhwc);
    return 0;   /* an annotation of tensors: the graph's nodes are as they were */
}
