/* --report: one row per emitted kernel call (what `trtexec --dumpLayerInfo`
 * shows): the kernel, the node and the original ONNX nodes it covers, the
 * output's type and shape, FLOPs, the bytes of constants it reads and where
 * its output lives in the arena; then totals. The rows are exactly the calls
 * the emitters write (calls on empty tensors are skipped by both).
 *
 * FLOPs come from a table of rules keyed by op name (a multiply-add counts
 * 2). A fused op (one with a decomposition) counts what its decomposition
 * into standard ops counts: the decomposition is inferred on the node's own
 * input shapes and each part is counted with the same table. */
#include <string.h>

#include "ir.h"

/* ---- FLOP rules --------------------------------------------------------- */

typedef enum {
    R_OUT,       /* factor * output elements (elementwise and the default) */
    R_IN,        /* factor * elements of input 0 (reductions) */
    R_ZERO,      /* data movement, views, shape values */
    R_CONV, R_CONVT, R_MATMUL, R_GEMM, R_POOL, R_RNN, R_GRU, R_LSTM, R_INPUTS,
    R_SDPA       /* attention: Q K^T and P V, factor * (Q + Y elements) * keys */
} Rule;

static const struct { const char *op; Rule rule; int factor; } FLOP_RULES[] = {
    {"Conv", R_CONV, 2}, {"ConvTranspose", R_CONVT, 2},
    {"MatMul", R_MATMUL, 2}, {"Gemm", R_GEMM, 2}, {"Einsum", R_IN, 2},
    {"MaxPool", R_POOL, 1}, {"AveragePool", R_POOL, 1}, {"LpPool", R_POOL, 2},
    {"GlobalAveragePool", R_IN, 1}, {"GlobalMaxPool", R_IN, 1}, {"GlobalLpPool", R_IN, 2},
    {"ReduceSum", R_IN, 1}, {"ReduceMean", R_IN, 1}, {"ReduceMax", R_IN, 1}, {"ReduceMin", R_IN, 1},
    {"ReduceProd", R_IN, 1}, {"ReduceL1", R_IN, 2}, {"ReduceL2", R_IN, 2}, {"ReduceSumSquare", R_IN, 2},
    {"ReduceLogSum", R_IN, 1}, {"ReduceLogSumExp", R_IN, 2}, {"ArgMax", R_IN, 1}, {"ArgMin", R_IN, 1},
    {"CumSum", R_IN, 1}, {"TopK", R_IN, 1}, {"Hardmax", R_IN, 1},
    {"Softmax", R_OUT, 5}, {"LogSoftmax", R_OUT, 5},
    {"BatchNormalization", R_OUT, 2}, {"InstanceNormalization", R_OUT, 5},
    {"LayerNormalization", R_OUT, 5}, {"RMSNormalization", R_OUT, 4},
    {"MeanVarianceNormalization", R_OUT, 5}, {"LpNormalization", R_OUT, 3}, {"LRN", R_OUT, 6},
    {"Gelu", R_OUT, 8}, {"Mish", R_OUT, 4}, {"HardSwish", R_OUT, 3}, {"HardSigmoid", R_OUT, 2},
    {"Sigmoid", R_OUT, 3}, {"Softplus", R_OUT, 2}, {"Selu", R_OUT, 2}, {"Clip", R_OUT, 2},
    {"Resize", R_OUT, 4}, {"Upsample", R_OUT, 4},
    {"Sum", R_INPUTS, 1}, {"Mean", R_INPUTS, 1}, {"Max", R_INPUTS, 1}, {"Min", R_INPUTS, 1},
    {"RNN", R_RNN, 2}, {"GRU", R_GRU, 2}, {"LSTM", R_LSTM, 2},
    {"Identity", R_ZERO, 0}, {"Dropout", R_ZERO, 0}, {"Reshape", R_ZERO, 0}, {"Flatten", R_ZERO, 0},
    {"Squeeze", R_ZERO, 0}, {"Unsqueeze", R_ZERO, 0}, {"Shape", R_ZERO, 0}, {"Size", R_ZERO, 0},
    {"Constant", R_ZERO, 0}, {"ConstantOfShape", R_ZERO, 0}, {"Range", R_ZERO, 0},
    {"Transpose", R_ZERO, 0}, {"Concat", R_ZERO, 0}, {"Split", R_ZERO, 0}, {"Slice", R_ZERO, 0},
    {"Gather", R_ZERO, 0}, {"GatherElements", R_ZERO, 0}, {"GatherND", R_ZERO, 0}, {"Pad", R_ZERO, 0},
    {"Expand", R_ZERO, 0}, {"Tile", R_ZERO, 0}, {"DepthToSpace", R_ZERO, 0}, {"SpaceToDepth", R_ZERO, 0},
    {"Cast", R_ZERO, 0}, {"CastLike", R_ZERO, 0}, {"EyeLike", R_ZERO, 0}, {"OneHot", R_ZERO, 0},
    {"Trilu", R_ZERO, 0}, {"ScatterElements", R_ZERO, 0}, {"Scatter", R_ZERO, 0},
    {"ScatterND", R_ZERO, 0}, {"TensorScatter", R_ZERO, 0},
    {"SoftmaxCrossEntropyLoss", R_IN, 5},   /* its log-softmax; NegativeLogLikelihoodLoss: the default */
    /* image family (ops/image.c) */
    {"CenterCropPad", R_ZERO, 0}, {"MaxUnpool", R_ZERO, 0}, {"Col2Im", R_IN, 1}, {"GridSample", R_OUT, 8},
    {"Attention", R_SDPA, 2}, {"FlexAttention", R_SDPA, 2}, {"RotaryEmbedding", R_OUT, 3},
    {"MatMulInteger", R_MATMUL, 2}, {"QLinearMatMul", R_MATMUL, 2}, {"ConvInteger", R_CONV, 2},
};

static int64_t numel_or0(const Tensor *t) { return t && t->rank >= 0 ? tensor_numel(t) : 0; }

static int64_t decomposed_flops(const Node *n);

int64_t node_flops(const Node *n)
{
    if (n->op && n->op->decompose) return decomposed_flops(n);
    Rule rule = R_OUT;
    int64_t f = 1;
    for (size_t i = 0; i < sizeof FLOP_RULES / sizeof FLOP_RULES[0]; i++)
        if (!strcmp(FLOP_RULES[i].op, n->op_type)) { rule = FLOP_RULES[i].rule; f = FLOP_RULES[i].factor; break; }
    const Tensor *x = n->nin ? n->in[0] : NULL, *y = n->nout ? n->out[0] : NULL;
    int64_t out = numel_or0(y), in = numel_or0(x);
    const Tensor *w = n->nin > 1 ? n->in[1] : NULL;
    switch (rule) {
    case R_ZERO: return 0;
    case R_OUT: return f * out;
    case R_IN: return f * in;
    case R_INPUTS: return f * out * (n->nin > 1 ? n->nin - 1 : 1);
    case R_CONV: {      /* each output element: Cin/group * kernel MACs (+ bias) */
        if (!w || w->rank < 2) return out;
        int64_t per = tensor_numel(w) / (w->dims[0] ? w->dims[0] : 1);
        return f * out * per + (n->nin > 2 && n->in[2] ? out : 0);
    }
    case R_CONVT: {     /* each input element scatters into Cout/group * kernel outputs */
        if (!w || w->rank < 2) return out;
        int64_t per = tensor_numel(w) / (w->dims[0] ? w->dims[0] : 1);
        return f * in * per + (n->nin > 2 && n->in[2] ? out : 0);
    }
    case R_MATMUL: {    /* out elements * K, K the last axis of A */
        int64_t k = x && x->rank >= 1 ? x->dims[x->rank - 1] : 1;
        return f * out * k;
    }
    case R_GEMM: {
        int64_t k = x && x->rank == 2 ? x->dims[attr_i(n, "transA") ? 0 : 1] : 1;
        return f * out * k + (n->nin > 2 && n->in[2] ? 2 * out : 0);
    }
    case R_POOL: {
        const int64_t *ks;
        int nk = attr_ints(n, "kernel_shape", &ks);
        int64_t kk = 1;
        for (int i = 0; i < nk; i++) kk *= ks[i];
        return f * out * kk;
    }
    case R_RNN: case R_GRU: case R_LSTM: {
        /* X [seq, batch, input], W [dirs, gates*hidden, input], R [dirs, gates*hidden, hidden] */
        const Tensor *r = n->nin > 2 ? n->in[2] : NULL;
        if (!x || x->rank != 3 || !w || w->rank != 3 || !r || r->rank != 3) return out;
        int64_t steps = x->dims[0] * x->dims[1] * w->dims[0];
        int64_t gates = w->dims[1];
        int64_t mac = gates * (w->dims[2] + r->dims[2]);
        int64_t act = gates * (rule == R_RNN ? 2 : 4) + r->dims[2] * (rule == R_RNN ? 0 : 3);
        return steps * (f * mac + act);
    }
    case R_SDPA: {      /* K 3-D (B, S, H*D) or 4-D (B, H, S, D), plus the past rows */
        if (!w || (w->rank != 3 && w->rank != 4)) return out;
        int64_t keys = w->dims[w->rank - 2];
        if (n->nin > 4 && n->in[4] && n->in[4]->rank == 4) keys += n->in[4]->dims[2];
        return f * (in + out) * keys;
    }
    }
    return out;
}

/* Tensors of a decomposition body, by name (bodies are small). */
typedef struct { const char *name; Tensor *t; } DVal;

static Tensor *dval(DVal *v, int *nv, int cap, const char *name)
{
    for (int i = 0; i < *nv; i++)
        if (!strcmp(v[i].name, name)) return v[i].t;
    if (*nv == cap) fail_plain("internal: decomposition too large");
    Tensor *t = xalloc(sizeof *t);
    t->name = xstrdup(name);
    t->rank = -1;
    t->input_index = t->output_index = -1;
    v[*nv].name = t->name;
    v[*nv].t = t;
    (*nv)++;
    return t;
}

/* Infers the decomposition body on the node's shapes and counts its parts.
 * -1 if that fails (an op the table does not know, ...). */
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
        Decomp d;
        decompose_node(n, &d);
        int cap = 4 * d.n + n->nin + 8, nv = 0;
        DVal *v = xalloc(sizeof(DVal) * (size_t)cap);
        for (int j = 0; j < n->nin; j++)
            if (n->in[j]) {
                Tensor *t = dval(v, &nv, cap, xfmt("x%d", j));
                Tensor *src = n->in[j];
                t->dtype = src->dtype;
                tensor_set_shape(t, src->rank, src->dims);
                t->data = src->data;
            }
        for (int i = 0; i < d.n; i++) {
            const DNode *dn = &d.nodes[i];
            Node *m = xalloc(sizeof *m);
            m->name = xfmt("%s/%s_%d", n->name, dn->op_type, i);
            m->op_type = (char *)dn->op_type;
            m->domain = "";
            m->op = op_find("", dn->op_type);
            if (!m->op) fail_plain("no op %s", dn->op_type);
            m->opset = n->opset > d.opset ? n->opset : d.opset;
            m->nin = dn->nin;
            m->in = xalloc(sizeof(Tensor *) * (size_t)(dn->nin + 1));
            for (int j = 0; j < dn->nin; j++)
                m->in[j] = *dn->in[j] ? dval(v, &nv, cap, dn->in[j]) : NULL;
            while (m->nin > 0 && !m->in[m->nin - 1]) m->nin--;
            m->nout = dn->nout;
            m->out = xalloc(sizeof(Tensor *) * (size_t)(dn->nout + 1));
            for (int j = 0; j < dn->nout; j++) {
                m->out[j] = dval(v, &nv, cap, dn->out[j]);
                m->out[j]->producer = m;
                m->out[j]->nuses = 1;
            }
            m->attrs = dn->attrs;
            m->nattrs = dn->nattrs;
            m->origins = NULL;
            diag_node = m;
            infer_node(m);
            if (!m->folded && node_foldable(m)) {
                int64_t e = 0;
                for (int j = 0; j < m->nout; j++) e += numel_or0(m->out[j]);
                if (e <= 4096) { fold_node(m); m->folded = 1; }
            }
            if (!m->folded) total += node_flops(m);
        }
    }
    depth--;
    diag_jmp = outer;
    diag_node = saved;
    return total;
}

/* ---- the report --------------------------------------------------------- */

static const Tensor *root_of(const Tensor *t) { return t->storage == ST_ALIAS && t->alias_of ? t->alias_of : t; }

static const char *where(const Tensor *t, int64_t *off)
{
    const Tensor *r = root_of(t);
    *off = -1;
    switch (r->storage) {
    case ST_ARENA: *off = r->offset + (t->storage == ST_ALIAS ? t->alias_offset : 0); return "arena";
    case ST_INPUT: return "input";
    case ST_OUTPUT: return "output";
    case ST_CONST: return "const";
    default: return "-";
    }
}

/* Bytes of the distinct constants call c reads. */
static int64_t call_const_bytes(const KCall *c)
{
    int64_t b = 0;
    for (int j = 0; j < O2C_MAX_X; j++) {
        if (!c->x[j]) continue;
        const Tensor *r = root_of(c->x[j]);
        if (r->storage != ST_CONST) continue;
        int dup = 0;
        for (int k = 0; k < j; k++)
            if (c->x[k] && root_of(c->x[k]) == r) dup = 1;
        if (!dup) b += (int64_t)tensor_bytes(r);
    }
    return b;
}

/* The node's name, and the original ONNX nodes it covers when that is not
 * just itself ("conv1 <- conv1, bn1, relu1"); names made printable. */
static void put_covers(FILE *f, const Node *n)
{
    if (!n) { fputs("-", f); return; }
    fputs(c_comment(n->name), f);
    if (n->norigins == 1 && !strcmp(n->origins[0], n->name)) return;
    fputs(" <-", f);
    for (int i = 0; i < n->norigins; i++) fprintf(f, "%s %s", i ? "," : "", c_comment(n->origins[i]));
    if (!n->norigins) fputs(" (made by a pass)", f);
}

static void put_count(FILE *f, int64_t v, int width)
{
    if (v < 0) fprintf(f, "%*s", width, "?");
    else fprintf(f, "%*lld", width, (long long)v);
}

void write_report(FILE *f, Graph *g, Lowering *L, int64_t arena, const Options *o)
{
    fprintf(f, "onnx2c report: %s (graph '%s', opset %d), %s target, -O%d\n", c_comment(o->input ? source_name(o->input) : "-"), c_comment(g->name),
            g->opset, o->cuda ? "CUDA" : o->target == TARGET_C ? "C" : xfmt("C (--target %s)", target_name(o->target)),
            o->opt_level);
    fprintf(f, "%5s  %-28s %-26s %-24s %12s %10s %10s %10s %10s  %-18s %s\n", "#", "kernel", "op (node)", "output", "FLOPs",
            "weights", "arena@", "bytes", "live", "variant (tuned)", "covers");
    int rows = 0;
    int64_t flops = 0;
    int flops_unknown = 0;
    const Node *last = NULL;
    for (int i = 0; i < L->n; i++) {
        const KCall *c = &L->calls[i];
        if (c->count <= 0) continue;
        const Node *n = c->node;
        const Tensor *y = c->y[0];
        int64_t nf = 0;
        int first_of_node = n && n != last;
        if (first_of_node) {
            nf = node_flops(n);
            if (nf < 0) flops_unknown = 1;
            else flops += nf;
        }
        last = n;
        const char *op = n ? c_comment(n->fused ? n->fused : n->op_type) : "(graph output copy)";
        char outs[96];
        snprintf(outs, sizeof outs, "%s[%s]", y ? dtype_name(y->dtype) : "-", y ? tensor_shape_str(y) : "");
        int64_t off = -1;
        const char *w = y ? where(y, &off) : "-";
        fprintf(f, "%5d  %-28s %-26s %-24s ", rows, c->kernel->name, op, outs);
        if (first_of_node) put_count(f, nf, 12);
        else fprintf(f, "%12s", n ? "\"" : "0");
        fprintf(f, " %10lld ", (long long)call_const_bytes(c));
        if (off >= 0) fprintf(f, "%10lld", (long long)off);
        else fprintf(f, "%10s", w);
        fprintf(f, " %10lld %10lld  ", (long long)(y ? tensor_bytes(y) : 0), (long long)(L->live ? L->live[i] : 0));
        /* a tunable call: its variant, and its time per call in the tuning file */
        char var[64] = "-";
        if (c->variant && c->tuned_ns > 0) snprintf(var, sizeof var, "%s (%.1f us)", c->variant, c->tuned_ns / 1e3);
        else if (c->variant) snprintf(var, sizeof var, "%s", c->variant);
        fprintf(f, "%-18s ", var);
        put_covers(f, n);
        fputc('\n', f);
        rows++;
    }
    /* distinct constants read by emitted calls */
    int64_t cbytes = 0, wbytes = 0;
    int nconst = 0;
    for (int i = 0; i < L->n; i++)
        for (int j = 0; j < O2C_MAX_X; j++)
            if (L->calls[i].x[j]) ((Tensor *)root_of(L->calls[i].x[j]))->mark = 0;
    for (int i = 0; i < L->n; i++) {
        if (L->calls[i].count <= 0) continue;
        for (int j = 0; j < O2C_MAX_X; j++) {
            if (!L->calls[i].x[j]) continue;
            Tensor *r = (Tensor *)root_of(L->calls[i].x[j]);
            if (r->storage != ST_CONST || r->mark) continue;
            r->mark = 1;
            nconst++;
            cbytes += (int64_t)tensor_bytes(r);
            if (dtype_is_float(r->dtype) || dtype_is_half(r->dtype)) wbytes += (int64_t)tensor_bytes(r);
        }
    }
    fprintf(f, "total: %d kernels, %s%lld FLOPs, %lld weight bytes (float constants), arena %lld bytes, "
            "%d constants %lld bytes, %d nodes\n", rows, flops_unknown ? ">=" : "", (long long)flops,
            (long long)wbytes, (long long)arena, nconst, (long long)cbytes, g->nnodes);
    /* the memory plan against its bounds ("live": the arena bytes live at a call) */
    int peak_row = -1;
    for (int i = 0, r = 0; i < L->n; i++)
        if (L->calls[i].count > 0) {
            if (i <= L->live_bound_at) peak_row = r;
            r++;
        }
    fprintf(f, "memory: arena %lld bytes; liveness lower bound of this schedule %lld bytes", (long long)arena,
            (long long)L->live_bound);
    if (L->live_bound > 0) fprintf(f, " (at #%d; arena/bound %.3f)", peak_row, (double)arena / (double)L->live_bound);
    fprintf(f, "; one buffer per tensor %lld bytes; constants %lld bytes\n", (long long)L->naive_arena, (long long)cbytes);
    if (g->peak_model > 0)
        fprintf(f, "schedule: estimated peak %lld bytes in the model's order, %lld in the order taken%s\n",
                (long long)g->peak_model, (long long)g->peak_scheduled,
                g->peak_scheduled < g->peak_model ? " (memory-aware)" : "");
}
