/* FLOPs of a node (--report, the profile build's table), a multiply-add
 * counting 2: by the rule its op line gives (OpDef.flops). A fused op (one
 * with a decomposition) counts what its decomposition into standard ops
 * counts: the decomposition is made a small graph of its own, inferred on
 * the node's own input shapes by the engine's inference loop (its constant
 * parts folded there, as in any graph, and not counted), and each of its
 * nodes counted by its own rule. */
#include <setjmp.h>
#include <string.h>

#include "ir.h"

/* ---- FLOP rules --------------------------------------------------------- */

static int64_t numel_or0(const Tensor *t) { return t && t->rank >= 0 ? tensor_numel(t) : 0; }

static int64_t decomposed_flops(const Node *n);

int64_t node_flops(const Node *n)
{
    if (n->op && n->op->decompose) return decomposed_flops(n);
    int rule = n->op ? n->op->flops.rule : FLOPS_DEFAULT;
    int64_t f = n->op ? n->op->flops.factor : 0;
    if (rule == FLOPS_DEFAULT) rule = FLOPS_OUT, f = 1;
    const Tensor *x = n->nin ? n->in[0] : NULL, *y = n->nout ? n->out[0] : NULL;
    int64_t out = numel_or0(y), in = numel_or0(x);
    const Tensor *w = n->nin > 1 ? n->in[1] : NULL;
    switch (rule) {
    case FLOPS_ZERO: return 0;
    case FLOPS_OUT: return f * out;
    case FLOPS_IN: return f * in;
    case FLOPS_INPUTS: return f * out * (n->nin > 1 ? n->nin - 1 : 1);
    case FLOPS_QCONV:       /* QLinearConv: the weights are input 3, the bias input 8 */
        w = n->nin > 3 ? n->in[3] : NULL;
        if (!w || w->rank < 2) return out;
        return f * out * (tensor_numel(w) / (w->dims[0] ? w->dims[0] : 1)) + (n->nin > 8 && n->in[8] ? out : 0);
    case FLOPS_CONV: {      /* each output element: Cin/group * kernel MACs (+ bias) */
        if (!w || w->rank < 2) return out;
        int64_t per = tensor_numel(w) / (w->dims[0] ? w->dims[0] : 1);
        return f * out * per + (n->nin > 2 && n->in[2] ? out : 0);
    }
    case FLOPS_CONVT: {     /* each input element scatters into Cout/group * kernel outputs */
        if (!w || w->rank < 2) return out;
        int64_t per = tensor_numel(w) / (w->dims[0] ? w->dims[0] : 1);
        return f * in * per + (n->nin > 2 && n->in[2] ? out : 0);
    }
    case FLOPS_MATMUL: {    /* out elements * K, K the last axis of A */
        int64_t k = x && x->rank >= 1 ? x->dims[x->rank - 1] : 1;
        return f * out * k;
    }
    case FLOPS_GEMM: {
        int64_t k = x && x->rank == 2 ? x->dims[attr_i(n, "transA") ? 0 : 1] : 1;
        return f * out * k + (n->nin > 2 && n->in[2] ? 2 * out : 0);
    }
    case FLOPS_QGEMM: {     /* com.microsoft QGemm: A input 0 (transA), the bias input 6 */
        int64_t k = x && x->rank == 2 ? x->dims[attr_i(n, "transA") ? 0 : 1] : 1;
        return f * out * k + (n->nin > 6 && n->in[6] ? out : 0);
    }
    case FLOPS_POOL: {
        const int64_t *ks;
        int nk = attr_ints(n, "kernel_shape", &ks);
        int64_t kk = 1;
        for (int i = 0; i < nk; i++) kk *= ks[i];
        return f * out * kk;
    }
    case FLOPS_RNN: case FLOPS_GRU: case FLOPS_LSTM: case FLOPS_DQLSTM: {
        /* X [seq, batch, input], W [dirs, gates*hidden, input], R [dirs, gates*hidden, hidden]
         * (DynamicQuantizeLSTM: W and R transposed, [dirs, input or hidden, gates*hidden]) */
        const Tensor *r = n->nin > 2 ? n->in[2] : NULL;
        if (!x || x->rank != 3 || !w || w->rank != 3 || !r || r->rank != 3) return out;
        int tr = rule == FLOPS_DQLSTM;
        int64_t steps = x->dims[0] * x->dims[1] * w->dims[0];
        int64_t gates = w->dims[tr ? 2 : 1], hidden = r->dims[tr ? 1 : 2];
        int64_t mac = gates * (w->dims[tr ? 1 : 2] + hidden);
        int64_t act = gates * (rule == FLOPS_RNN ? 2 : 4) + hidden * (rule == FLOPS_RNN ? 0 : 3);
        return steps * (f * mac + act);
    }
    case FLOPS_SDPA: {      /* K 3-D (B, S, H*D) or 4-D (B, H, S, D), plus the past rows */
        if (!w || (w->rank != 3 && w->rank != 4)) return out;
        int64_t keys = w->dims[w->rank - 2];
        if (n->nin > 4 && n->in[4] && n->in[4]->rank == 4) keys += n->in[4]->dims[2];
        return f * (in + out) * keys;
    }
    }
    return out;
}

/* The decomposition of n as a graph: inputs "x0"... (n's inputs' types,
 * shapes and constant values), outputs "y0"..., nodes in the order the
 * decomposition made them. */
static Graph *decomposition_graph(const Node *n)
{
    Decomp d;
    decompose_node(n, &d);
    Graph *g = xalloc(sizeof *g);
    g->name = xfmt("%s (decomposed)", n->name);
    g->ops = n->op->table;
    g->opset = n->opset > d.opset ? n->opset : d.opset;
    g->inputs = xalloc(sizeof(Tensor *) * (size_t)(n->nin + 1));
    for (int j = 0; j < n->nin; j++)
        if (n->in[j]) {
            Tensor *t = graph_tensor(g, xfmt("x%d", j)), *src = n->in[j];
            t->dtype = src->dtype;
            tensor_set_shape(t, src->rank, src->dims);
            t->data = src->data;
            t->is_input = !src->data;
            if (t->is_input) g->inputs[g->ninputs++] = t;
        }
    for (int i = 0; i < d.n; i++) {
        const DNode *dn = &d.nodes[i];
        Node *m = graph_add_node(g);
        m->name = xfmt("%s/%s_%d", n->name, dn->op_type, i);
        m->op_type = (char *)dn->op_type;
        m->domain = "";
        m->nin = dn->nin;
        m->in = xalloc(sizeof(Tensor *) * (size_t)(dn->nin + 1));
        for (int j = 0; j < dn->nin; j++) m->in[j] = *dn->in[j] ? graph_tensor(g, dn->in[j]) : NULL;
        while (m->nin > 0 && !m->in[m->nin - 1]) m->nin--;
        m->nout = dn->nout;
        m->out = xalloc(sizeof(Tensor *) * (size_t)(dn->nout + 1));
        for (int j = 0; j < dn->nout; j++) node_set_output(m, j, graph_tensor(g, dn->out[j]));
        m->attrs = dn->attrs;
        m->nattrs = dn->nattrs;
        m->origins = NULL;
    }
    g->outputs = xalloc(sizeof(Tensor *) * (size_t)(n->nout + 1));
    for (int j = 0; j < n->nout; j++)
        if (n->out[j]) g->outputs[g->noutputs++] = graph_tensor(g, xfmt("y%d", j));
    return g;
}

/* -1 if the decomposition cannot be inferred (an op the table does not
 * know, ...). */
static int64_t decomposed_flops(const Node *n)
{
    static int depth;
    if (depth > 4) return -1;
    jmp_buf here, *outer = diag_jmp;
    const Node *saved = diag_node;
    volatile int64_t total = 0;
    depth++;
    diag_jmp = &here;
    if (setjmp(here)) {
        total = -1;
    } else {
        Graph *g = decomposition_graph(n);
        infer_resolve_ops(g, 0);
        infer_order(g);
        infer_run(g);   /* the engine's inference loop: constant parts folded */
        for (int i = 0; i < g->nnodes; i++)
            if (!g->nodes[i]->folded) total += node_flops(g->nodes[i]);
    }
    depth--;
    diag_jmp = outer;
    diag_node = saved;
    return total;
}
