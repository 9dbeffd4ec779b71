/* Pass fuse_pool_gemm: a global average pool followed by a matrix product
 * becomes one GlobalPoolGemm kernel (ops/fused_linear.c), the classifier
 * head of most CNNs:
 *   GlobalAveragePool (or an AveragePool whose window is the whole input)
 *   -> views (Flatten, Reshape, Squeeze, Unsqueeze, Identity, a Transpose
 *      that only moves axes of size 1)
 *   -> Gemm (transA 0, bias absent, one value or one per column), a MatMul
 *      by a 2-D B, or a 1x1 Conv (group 1, no pads) on the pooled N x C x 1 x 1 tensor,
 *      or their Fused forms with an epilogue (fuse_epilogue runs first).
 * Every intermediate must have that single reader. The fused kernel pools
 * once per output element, so it is used only while that extra work stays
 * small (MAX_GROWTH times the separate kernels' work, or SMALL_WORK). */
#include <string.h>

#include "../ir.h"

#define MAX_GROWTH 4
#define SMALL_WORK 65536

static Node *only_reader(Graph *g, Tensor *t)
{
    Node **rd;
    if (!tensor_single_use(g, t) || graph_readers(g, t, &rd) != 1) return NULL;
    return rd[0];
}

static int is_op(const Node *n, const char *op, const char *domain)
{
    return !strcmp(n->op_type, op) && !strcmp(n->domain, domain);
}

/* A global average: GlobalAveragePool, or AveragePool over the whole input. */
static int global_average(const Node *n)
{
    if (n->nout != 1 || n->in[0]->rank < 3) return 0;
    int dt = n->in[0]->dtype;
    if ((dt != DT_FLOAT && dt != DT_DOUBLE) || n->promoted) return 0;
    if (is_op(n, "GlobalAveragePool", "")) return 1;
    if (!is_op(n, "AveragePool", "")) return 0;
    const Tensor *x = n->in[0], *y = n->out[0];
    int nsp = x->rank - 2;
    const int64_t *v;
    if (attr_ints(n, "kernel_shape", &v) != nsp) return 0;
    for (int i = 0; i < nsp; i++)
        if (v[i] != x->dims[2 + i] || y->dims[2 + i] != 1) return 0;
    int np = attr_ints(n, "pads", &v);
    for (int i = 0; i < np; i++)
        if (v[i]) return 0;
    int nd = attr_ints(n, "dilations", &v);
    for (int i = 0; i < nd; i++)
        if (v[i] != 1) return 0;
    const char *ap = attr_s(n, "auto_pad");
    return !strcmp(ap, "NOTSET") || !strcmp(ap, "VALID") || !ap[0];
}

/* A node that passes the bytes on unchanged (row-major order kept). */
static int view_like(const Node *n)
{
    if (n->domain[0] || n->nout != 1) return 0;
    if (is_op(n, "Flatten", "") || is_op(n, "Reshape", "") || is_op(n, "Squeeze", "") ||
        is_op(n, "Unsqueeze", "") || is_op(n, "Identity", ""))
        return 1;
    if (!is_op(n, "Transpose", "")) return 0;
    const Tensor *x = n->in[0];
    const int64_t *perm;
    int np = attr_ints(n, "perm", &perm);
    if (np != x->rank) return 0;
    int64_t last = -1;
    for (int i = 0; i < np; i++) {
        if (x->dims[perm[i]] == 1) continue;
        if (perm[i] < last) return 0;
        last = perm[i];
    }
    return 1;
}

static const char *const EPI_ATTRS[] = {"activation", "activation_alpha", "activation_beta", "residual", NULL};

int pass_fuse_pool_gemm(Graph *g)
{
    int changes = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *p = g->nodes[i];
        if (!global_average(p)) continue;
        Tensor *x = p->in[0];
        if (tensor_numel(x) < 1) continue;               /* empty: nothing to gain */
        int64_t N = x->dims[0], C = x->dims[1], S = tensor_numel(x) / (N * C);
        Node *chain[16];
        int nchain = 0;
        Tensor *cur = p->out[0];
        Node *r;
        while ((r = only_reader(g, cur)) && view_like(r) && r->in[0] == cur && nchain < 15) {
            chain[nchain++] = r;
            cur = r->out[0];
        }
        if (!r) continue;
        int conv = is_op(r, "Conv", "") || is_op(r, "FusedConv", "onnx2c");
        int gemm = is_op(r, "Gemm", "") || is_op(r, "FusedGemm", "onnx2c");
        int matmul = is_op(r, "MatMul", "") || is_op(r, "FusedMatMul", "onnx2c");
        if ((!conv && !gemm && !matmul) || r->in[0] != cur || r->in[1] == cur) continue;
        if (r->nin > 2 && r->in[2] == cur) continue;
        Tensor *w = r->in[1], *b = r->nin > 2 ? r->in[2] : NULL, *y = r->out[0];
        int64_t M;
        if (gemm || matmul) {
            if ((gemm && attr_i(r, "transA")) || cur->rank != 2 || cur->dims[0] != N || cur->dims[1] != C) continue;
            if (matmul && w->rank != 2) continue;
            M = y->dims[1];
            if (b && tensor_numel(b) != 1 && (tensor_numel(b) != M || b->dims[b->rank - 1] != M)) continue;
        } else {
            if (cur->rank != x->rank || cur->dims[0] != N || cur->dims[1] != C || attr_i(r, "group") != 1) continue;
            if (w->rank != x->rank || tensor_numel(w) != w->dims[0] * C) continue;   /* 1x1 kernel */
            const int64_t *v;
            int np = attr_ints(r, "pads", &v), bad = 0;
            for (int k = 0; k < np; k++) bad |= v[k] != 0;
            const char *ap = attr_s(r, "auto_pad");
            if (bad || (strcmp(ap, "NOTSET") && strcmp(ap, "VALID") && ap[0])) continue;
            M = w->dims[0];
            if (tensor_numel(y) != N * M) continue;
        }
        int64_t fused = N * M * C * S, apart = N * C * S + N * M * C;
        if (fused > SMALL_WORK && fused > MAX_GROWTH * apart) {
            note("fuse_pool_gemm: keep %s '%s' apart (the fused kernel would pool %lld times)", p->op_type, p->name,
                 (long long)M);
            continue;
        }
        Tensor *in[5] = {x, w, b, r->nin > 3 ? r->in[3] : NULL, r->nin > 4 ? r->in[4] : NULL};
        int nin = 5;
        while (nin > 2 && !in[nin - 1]) nin--;         /* no trailing omitted inputs */
        Node *f = graph_insert_node(g, r, "GlobalPoolGemm", "onnx2c", in, nin, &y, 1);
        if (matmul) {
            node_set_attr_i(f, "transB", 0);
        } else if (gemm) {
            node_set_attr_f(f, "alpha", attr_f(r, "alpha"));
            node_set_attr_f(f, "beta", attr_f(r, "beta"));
            node_set_attr_i(f, "transB", attr_i(r, "transB"));
        } else {
            node_set_attr_i(f, "transB", 1);
            node_set_attr_i(f, "keepdims", 1);
        }
        if (r->domain[0])
            for (int k = 0; EPI_ATTRS[k]; k++) {
                const Attr *a = attr_find(r, EPI_ATTRS[k]);
                if (!a) continue;
                if (a->type == AT_STRING) node_set_attr_s(f, a->name, a->s);
                else node_set_attr_f(f, a->name, a->f);
            }
        f->name = r->name;
        f->opset = r->opset;
        f->fused = p->op_type;
        node_add_origins(f, p);
        for (int k = 0; k < nchain; k++) {
            node_add_origins(f, chain[k]);
            node_note_fused(f, chain[k]->op_type);
        }
        node_add_origins(f, r);
        node_note_fused(f, r->fused ? r->fused : r->op_type);
        node_reinfer(f);
        note("fuse_pool_gemm: %s '%s' + %s '%s' -> GlobalPoolGemm", p->op_type, p->name, r->op_type, r->name);
        graph_remove_node(g, r);
        for (int k = nchain - 1; k >= 0; k--) graph_remove_node(g, chain[k]);
        graph_remove_node(g, p);
        changes++;
        i--;
    }
    return changes;
}
