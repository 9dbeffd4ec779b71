/* Sequences and optionals, resolved at compile time.
 *
 * A sequence whose length and element shapes are known at compile time is
 * a list of ordinary tensors: a tensor that holds a sequence (or an absent
 * optional) carries a SeqVal (ir.h) and has no bytes of its own. Before a
 * node is inferred (infer.c, and control.c for the nodes of a body),
 * seq_expand replaces every node that makes, reads or carries such a value
 * by plain nodes at its place, which are inferred next:
 *
 *   SequenceConstruct, SequenceEmpty, SequenceInsert, SequenceErase,
 *   Identity, Optional, OptionalGetElement     a new list (no node)
 *   SequenceAt                                 Identity of the element
 *   SequenceLength, OptionalHasElement         a constant
 *   SplitToSequence                            Slice per element (+ Squeeze)
 *   ConcatFromSequence                         Concat (Unsqueeze for new_axis)
 *   SequenceMap                                its body inlined per element
 *   If (constant condition)                    its branch inlined
 *   Loop carrying a sequence                   unrolled: its body inlined per
 *                                              iteration (constant trip count)
 *
 * Positions must be constants (a graph input they come from is named for
 * --bind). An If with a run-time condition keeps its branches; sequence
 * outputs become one output per element when both branches agree on the
 * lengths, types and shapes (seq_flatten_if). Graph inputs and outputs that
 * are sequences take one caller slot per element (seq_bind_inputs,
 * seq_flatten_outputs; the header lists them: seq_io_notes). */
#include <stdlib.h>
#include <string.h>

#include "../ir.h"

#define SEQ_UNROLL_MAX 256

/* ---- the op table's entries: never inferred or lowered as such ----------- */

void infer_seq_op(Node *n) { fail("internal: %s was not resolved at compile time", n->op_type); }
void lower_seq_op(Node *n, Lowering *L)
{
    (void)L;
    fail("internal: %s was not resolved at compile time", n->op_type);
}

/* ---- helpers ---------------------------------------------------------------- */

static SeqVal *seq_new(int dtype, int n)
{
    SeqVal *v = xalloc(sizeof *v);
    v->is_seq = 1;
    v->dtype = dtype;
    v->n = n;
    v->elem = xalloc(sizeof(Tensor *) * (size_t)(n + 1));
    return v;
}

static int seq_dtype(const SeqVal *v) { return v->n ? v->elem[0]->dtype : v->dtype; }

static const char *const SEQ_OPS[] = {"SequenceConstruct", "SequenceAt", "SequenceInsert", "SequenceErase",
                                      "SequenceLength", "SequenceEmpty", "SplitToSequence", "ConcatFromSequence",
                                      "SequenceMap", "Optional", NULL};

static int is_seq_op(const Node *n)
{
    if (*n->domain) return 0;
    for (int k = 0; SEQ_OPS[k]; k++)
        if (!strcmp(n->op_type, SEQ_OPS[k])) return 1;
    return 0;
}

/* A body (or a body nested in it) makes a sequence or an optional. */
static int graph_makes_seq(const Graph *b)
{
    for (int i = 0; i < b->nnodes; i++) {
        const Node *n = b->nodes[i];
        if (is_seq_op(n)) return 1;
        for (int a = 0; a < n->nattrs; a++)
            if (n->attrs[a].g && graph_makes_seq(n->attrs[a].g)) return 1;
    }
    return 0;
}

static Graph *attr_graph(Node *n, const char *name)
{
    for (int a = 0; a < n->nattrs; a++)
        if (n->attrs[a].g && !strcmp(n->attrs[a].name, name)) return n->attrs[a].g;
    fail("needs the graph attribute '%s'", name);
}

static int touches_seq(Node *n)
{
    for (int j = 0; j < n->nin; j++)
        if (n->in[j] && n->in[j]->seq) return 1;
    for (int a = 0; a < n->nattrs; a++)
        if (n->attrs[a].g && graph_makes_seq(n->attrs[a].g)) return 1;
    return 0;
}

/* A value that must be known at compile time (a position, a trip count). */
static int64_t seq_const(Node *n, Tensor *t, const char *what)
{
    if (t->dtype != DT_INT64 && t->dtype != DT_INT32)
        fail("%s ('%s') must be int32 or int64, not %s", what, t->name, dtype_name(t->dtype));
    if (tensor_numel(t) != 1) fail("%s ('%s') must hold one value, not [%s]", what, t->name, tensor_shape_str(t));
    if (!t->data) {
        const char *b = bind_suggestion(t);
        if (b)
            fail("%s ('%s') must be known at compile time (onnx2c resolves sequences at compile time) and is computed "
                 "from graph inputs: bind them with %s (each FILE a serialized TensorProto of the value; the generated "
                 "code returns NAME_ERR_BOUND_INPUT when a run's input holds another value)", what, t->name, b);
        fail("%s ('%s') must be known at compile time: onnx2c resolves sequences at compile time", what, t->name);
    }
    (void)n;
    return elem_i64(t->dtype, t->data, 0);
}

/* The rewrite of one node: new nodes go before `next`, in order. */
typedef struct Rw {
    Graph *g;
    Node *n, *next;
    int count;
} Rw;

static Node *rw_node(Rw *r, const char *op, Tensor *const *in, int nin, Tensor *const *out, int nout)
{
    Node *m = graph_insert_node(r->g, r->next, op, "", in, nin, out, nout);
    m->name = xfmt("%s/%s_%d", r->n->name, op, r->count++);
    m->origins = r->n->origins;
    m->norigins = r->n->norigins;
    return m;
}

static Tensor *rw_tensor(Rw *r, const char *hint) { return graph_new_tensor(r->g, hint); }

static Tensor *rw_ints(Rw *r, const int64_t *v, int len)
{
    int64_t d = len;
    Tensor *t = graph_new_const(r->g, xfmt("%s/ints", r->n->name), DT_INT64, 1, &d);
    memcpy(t->data, v, sizeof(int64_t) * (size_t)len);
    return t;
}

static void rw_identity(Rw *r, Tensor *x, Tensor *y)
{
    if (y) rw_node(r, "Identity", &x, 1, &y, 1);
}

/* Unsqueeze / Squeeze at one axis, in the form of the graph's opset. */
static Tensor *rw_axis_op(Rw *r, const char *op, Tensor *x, int64_t axis)
{
    Tensor *y = rw_tensor(r, xfmt("%s/%s", x->name, op));
    if (r->g->opset >= 13) {
        Tensor *in[2] = {x, rw_ints(r, &axis, 1)};
        rw_node(r, op, in, 2, &y, 1);
    } else {
        Node *m = rw_node(r, op, &x, 1, &y, 1);
        node_set_attr_ints(m, "axes", &axis, 1);
    }
    return y;
}

/* A value passed on: a sequence or an absent optional as its SeqVal, a
 * tensor through Identity. */
static void rw_pass(Rw *r, Tensor *v, Tensor *y)
{
    if (!y) return;
    if (v->seq) y->seq = v->seq;
    else rw_identity(r, v, y);
}

static SeqVal *need_seq(Node *n, int j)
{
    Tensor *t = need_in(n, j);
    if (!t->seq || !t->seq->is_seq || t->seq->absent)
        fail("input %d ('%s') must be a sequence%s", j, t->name, t->seq && t->seq->absent ? ", not an empty optional" : "");
    return t->seq;
}

static Tensor *need_tensor(Node *n, int j)
{
    Tensor *t = need_in(n, j);
    if (t->seq) fail("input %d ('%s') must be a tensor, not a sequence or an optional", j, t->name);
    if (t->optional) fail("input %d ('%s') is an optional graph input: read it through OptionalGetElement", j, t->name);
    return t;
}

static int64_t position(Node *n, Tensor *p, int64_t len, int insert)
{
    int64_t k = seq_const(n, p, "the position");
    int64_t hi = insert ? len : len - 1;
    if (k < -len || k > hi)
        fail("position %lld is out of range for a sequence of length %lld", (long long)k, (long long)len);
    return k < 0 ? k + len : k;
}

/* ---- inlining a body ------------------------------------------------------ */

typedef struct Map {
    Tensor **from, **to;
    int n, cap;
} Map;

static void map_put(Map *m, Tensor *a, Tensor *b)
{
    if (m->n == m->cap) {
        int cap = m->cap ? 2 * m->cap : 64;
        Tensor **f = xalloc(sizeof(Tensor *) * (size_t)cap), **t = xalloc(sizeof(Tensor *) * (size_t)cap);
        if (m->n) {
            memcpy(f, m->from, sizeof(Tensor *) * (size_t)m->n);
            memcpy(t, m->to, sizeof(Tensor *) * (size_t)m->n);
        }
        m->from = f;
        m->to = t;
        m->cap = cap;
    }
    m->from[m->n] = a;
    m->to[m->n++] = b;
}

static Tensor *map_get(Rw *r, Map *m, Tensor *t, const char *tag)
{
    if (!t) return NULL;
    for (int k = 0; k < m->n; k++)
        if (m->from[k] == t) return m->to[k];
    Tensor *x = rw_tensor(r, xfmt("%s/%s", tag, t->name));
    if (t->data && !t->producer) {   /* a constant of the body */
        x->dtype = t->dtype;
        tensor_set_shape(x, t->rank, t->dims);
        x->data = t->data;
    }
    map_put(m, t, x);
    return x;
}

/* The nodes of body b (owned by `owner`) copied before r->next: its inputs
 * read in[], its captures the owner's inputs; its outputs' values in out[]. */
static void inline_body(Rw *r, Node *owner, Graph *b, Tensor *const *in, Tensor **out, const char *tag)
{
    Map m = {0};
    for (int i = 0; i < b->ninputs; i++) map_put(&m, b->inputs[i], in[i]);
    for (int k = 0; k < b->ncaptures; k++) {
        Tensor *x = owner->in[b->capture_in[k]];
        if (!x) fail("internal: capture '%s' is unbound", b->captures[k]->name);
        map_put(&m, b->captures[k], x);
    }
    /* the body in dependency order (as loaded it need not be) */
    for (int k = 0; k < b->ncaptures; k++) b->captures[k]->is_input = 1;
    for (int i = 0; i < b->ninputs; i++) b->inputs[i]->is_input = 1;
    topo_sort(b);
    for (int k = 0; k < b->ncaptures; k++) b->captures[k]->is_input = 0;
    for (int i = 0; i < b->nnodes; i++) {
        Node *a = b->nodes[i];
        if (!graph_op(r->g, a->domain, a->op_type))
            fail("its subgraph '%s' has node '%s' with the unsupported op %s%s%s", b->name, a->name,
                 *a->domain ? a->domain : "", *a->domain ? "::" : "", a->op_type);
        Tensor **ins = xalloc(sizeof(Tensor *) * (size_t)(a->nin + 1));
        Tensor **outs = xalloc(sizeof(Tensor *) * (size_t)(a->nout + 1));
        for (int j = 0; j < a->nin; j++) ins[j] = map_get(r, &m, a->in[j], tag);
        for (int j = 0; j < a->nout; j++) outs[j] = map_get(r, &m, a->out[j], tag);
        Node *c = graph_insert_node(r->g, r->next, a->op_type, a->domain, ins, a->nin, outs, a->nout);
        c->name = xfmt("%s/%s", tag, a->name);
        c->origins = a->origins;
        c->norigins = a->norigins;
        c->nattrs = a->nattrs;
        c->attrs = xalloc(sizeof(Attr) * (size_t)(a->nattrs + 1));
        for (int k = 0; k < a->nattrs; k++) {
            c->attrs[k] = a->attrs[k];
            if (a->attrs[k].g) c->attrs[k].g = graph_clone(a->attrs[k].g, r->g);
        }
    }
    for (int j = 0; j < b->noutputs; j++) out[j] = map_get(r, &m, b->outputs[j], tag);
}

/* ---- the rewrites ------------------------------------------------------------ */

#define SPLIT_SEQ_MAX 4096

/* The sizes array of a split into cnt tensors: the count is checked first
 * (tests/fuzz/ found an axis of 2^31 asking for 16 GB here). */
static int64_t *split_sizes(int64_t cnt)
{
    if (cnt > SPLIT_SEQ_MAX) fail("would make a sequence of %lld tensors; at most %d are supported", (long long)cnt,
                                  SPLIT_SEQ_MAX);
    return xalloc(sizeof(int64_t) * (size_t)(cnt + 1));
}

static void rw_split(Rw *r)
{
    Node *n = r->n;
    Tensor *x = need_tensor(n, 0), *s = in_t(n, 1);
    int64_t axis = norm_axis(n, attr_i(n, "axis"), x->rank), d = x->dims[axis];
    int keep = (int)attr_i(n, "keepdims");
    int64_t sizes_stack[1], *sizes = sizes_stack;
    int64_t cnt;
    if (!s) {
        cnt = d;
        sizes = split_sizes(d);
        for (int64_t k = 0; k < d; k++) sizes[k] = 1;
    } else {
        if (s->dtype != DT_INT64 && s->dtype != DT_INT32) fail("split must be int32 or int64");
        if (!s->data) {
            const char *b = bind_suggestion(s);
            if (b) fail("split ('%s') decides the sequence's length and shapes and is computed from graph inputs: bind "
                        "them with %s (each FILE a serialized TensorProto of the value)", s->name, b);
            fail("split ('%s') must be known at compile time", s->name);
        }
        if (s->rank == 0) {
            int64_t c = elem_i64(s->dtype, s->data, 0);
            if (c <= 0) fail("split %lld must be positive", (long long)c);
            cnt = d ? (d + c - 1) / c : 0;
            sizes = split_sizes(cnt);
            for (int64_t k = 0; k < cnt; k++) sizes[k] = k + 1 < cnt ? c : d - c * (cnt - 1);
        } else {
            if (s->rank != 1) fail("split must be a scalar or a 1-D tensor");
            cnt = tensor_numel(s);
            sizes = split_sizes(cnt);
            int64_t sum = 0;
            for (int64_t k = 0; k < cnt; k++) {
                sizes[k] = elem_i64(s->dtype, s->data, k);
                if (sizes[k] < 0 || sizes[k] > d) fail("split size %lld is negative or larger than axis %lld (%lld)", (long long)sizes[k], (long long)axis, (long long)d);
                sum += sizes[k];
            }
            if (sum != d) fail("the split sizes add up to %lld; axis %lld has %lld", (long long)sum, (long long)axis,
                               (long long)d);
        }
        keep = 1;   /* keepdims is ignored when split is given */
    }
    SeqVal *v = seq_new(x->dtype, (int)cnt);
    int64_t at = 0;
    for (int64_t k = 0; k < cnt; k++) {
        Tensor *y = rw_tensor(r, xfmt("%s[%lld]", n->out[0] ? n->out[0]->name : n->name, (long long)k));
        int64_t st = at, en = at + sizes[k];
        Tensor *in[4] = {x, rw_ints(r, &st, 1), rw_ints(r, &en, 1), rw_ints(r, &axis, 1)};
        rw_node(r, "Slice", in, 4, &y, 1);
        v->elem[k] = keep ? y : rw_axis_op(r, "Squeeze", y, axis);
        at = en;
    }
    if (n->out[0]) n->out[0]->seq = v;
}

static void rw_concat(Rw *r)
{
    Node *n = r->n;
    SeqVal *v = need_seq(n, 0);
    if (!attr_has(n, "axis")) fail("needs the attribute axis");
    int64_t axis = attr_i(n, "axis");
    int newax = (int)attr_i(n, "new_axis");
    if (!v->n) fail("the sequence is empty: ConcatFromSequence needs at least one tensor");
    Tensor **parts = xalloc(sizeof(Tensor *) * (size_t)(v->n + 1));
    for (int k = 0; k < v->n; k++) parts[k] = newax ? rw_axis_op(r, "Unsqueeze", v->elem[k], axis) : v->elem[k];
    int np = v->n;
    while (np > 64) {   /* Concat takes 64 inputs: in groups */
        int q = 0;
        for (int k = 0; k < np; k += 64) {
            int c = np - k < 64 ? np - k : 64;
            Tensor *y = rw_tensor(r, xfmt("%s/part", n->name));
            Node *m = rw_node(r, "Concat", parts + k, c, &y, 1);
            node_set_attr_i(m, "axis", axis);
            parts[q++] = y;
        }
        np = q;
    }
    if (!n->out[0]) return;
    Node *m = rw_node(r, "Concat", parts, np, &n->out[0], 1);
    node_set_attr_i(m, "axis", axis);
}

static void rw_sequence_map(Rw *r)
{
    Node *n = r->n;
    Graph *b = attr_graph(n, "body");
    int formal = node_formal_inputs(n);
    SeqVal *first = need_seq(n, 0);
    int len = first->n;
    if (b->ninputs != formal) fail("has %d inputs; its body takes %d", formal, b->ninputs);
    if (b->noutputs != n->nout) fail("has %d outputs; its body makes %d", n->nout, b->noutputs);
    for (int j = 1; j < formal; j++) {
        Tensor *t = need_in(n, j);
        if (t->seq && (t->seq->absent || !t->seq->is_seq)) fail("input %d ('%s') is an empty optional", j, t->name);
        if (t->seq && t->seq->n != len)
            fail("input %d ('%s') is a sequence of %d tensors, the first one of %d", j, t->name, t->seq->n, len);
    }
    SeqVal **res = xalloc(sizeof(SeqVal *) * (size_t)(n->nout + 1));
    for (int k = 0; k < n->nout; k++) res[k] = seq_new(DT_UNDEFINED, len);
    Tensor **in = xalloc(sizeof(Tensor *) * (size_t)(formal + 1));
    Tensor **out = xalloc(sizeof(Tensor *) * (size_t)(n->nout + 1));
    for (int e = 0; e < len; e++) {
        for (int j = 0; j < formal; j++) in[j] = n->in[j]->seq ? n->in[j]->seq->elem[e] : n->in[j];
        inline_body(r, n, b, in, out, xfmt("%s/%d", n->name, e));
        for (int k = 0; k < n->nout; k++) {
            if (out[k]->seq) fail("its body's output %d is a sequence; SequenceMap's body makes tensors", k);
            res[k]->elem[e] = out[k];
        }
    }
    for (int k = 0; k < n->nout; k++)
        if (n->out[k]) n->out[k]->seq = res[k];
}

/* The Identity chain a body's condition output comes through. */
static int stays_true(Graph *b)
{
    Tensor *c = b->outputs[0];
    for (int depth = 0; depth < 64; depth++) {
        if (c == b->inputs[1]) return 1;
        if (c->data && !c->producer) return c->dtype == DT_BOOL && ((const uint8_t *)c->data)[0];
        Node *p = c->producer;
        if (!p) return 0;
        if (!strcmp(p->op_type, "Identity") && p->nin == 1) { c = p->in[0]; continue; }
        if (!strcmp(p->op_type, "Constant") && p->nattrs == 1 && p->attrs[0].t && !strcmp(p->attrs[0].name, "value")) {
            const Tensor *v = p->attrs[0].t;
            return v->dtype == DT_BOOL && tensor_numel(v) == 1 && ((const uint8_t *)v->data)[0];
        }
        return 0;
    }
    return 0;
}

/* A Loop that carries a sequence (or whose body makes one, with a constant
 * trip count): one inlined copy of the body per iteration. */
static void rw_loop(Rw *r)
{
    Node *n = r->n;
    Graph *b = attr_graph(n, "body");
    int formal = node_formal_inputs(n), N = formal - 2, K = n->nout - N;
    if (N < 0) fail("needs the inputs M and cond (either may be empty)");
    if (b->ninputs != 2 + N || K < 0 || b->noutputs != 1 + N + K)
        fail("carries %d values and has %d outputs; its body has %d inputs and %d outputs", N, n->nout, b->ninputs,
             b->noutputs);
    Tensor *M = in_t(n, 0), *cond = in_t(n, 1);
    if (!M) fail("has no trip count: a loop that carries a sequence runs a number of iterations known at compile time");
    char binds[1024] = "";
    const char *bm = M->data ? NULL : bind_suggestion(M), *bc = cond && !cond->data ? bind_suggestion(cond) : NULL;
    if (bm) snprintf(binds, sizeof binds, "%s", bm);
    if (bc && !strstr(binds, bc)) snprintf(binds + strlen(binds), sizeof binds - strlen(binds), "%s%s", *binds ? " " : "", bc);
    if ((!M->data || (cond && !cond->data)) && *binds)
        fail("carries a sequence, so it is unrolled at compile time: its trip count and condition must be known "
             "then; they are computed from graph inputs: bind them with %s (each FILE a serialized TensorProto of the "
             "value)", binds);
    if (!M->data) fail("carries a sequence: its trip count ('%s') must be known at compile time", M->name);
    if (cond && !cond->data) fail("carries a sequence: its condition ('%s') must be known at compile time", cond->name);
    int64_t T = seq_const(n, M, "the trip count");
    if (T < 0) T = 0;
    if (cond && !((const uint8_t *)cond->data)[0]) T = 0;
    if (T > 0 && !stays_true(b))
        fail("carries a sequence, so it is unrolled at compile time; its body's condition output ('%s') must stay "
             "true (the loop runs its trip count)", b->outputs[0]->name);
    if (T > SEQ_UNROLL_MAX)
        fail("carries a sequence and runs %lld iterations; onnx2c unrolls such loops up to %d", (long long)T,
             SEQ_UNROLL_MAX);
    if (K && T == 0) fail("has scan outputs and runs no iteration: their shapes are unknown");
    Tensor **cur = xalloc(sizeof(Tensor *) * (size_t)(N + 1));
    for (int j = 0; j < N; j++) cur[j] = need_in(n, 2 + j);
    Tensor ***scan = xalloc(sizeof(Tensor **) * (size_t)(K + 1));
    for (int s = 0; s < K; s++) scan[s] = xalloc(sizeof(Tensor *) * (size_t)(T + 1));
    Tensor **in = xalloc(sizeof(Tensor *) * (size_t)(N + 3));
    Tensor **out = xalloc(sizeof(Tensor *) * (size_t)(N + K + 2));
    Tensor *yes = graph_new_const(r->g, xfmt("%s/true", n->name), DT_BOOL, 0, NULL);
    ((uint8_t *)yes->data)[0] = 1;
    for (int64_t k = 0; k < T; k++) {
        in[0] = graph_new_const(r->g, xfmt("%s/iter%lld", n->name, (long long)k), DT_INT64, 0, NULL);
        ((int64_t *)in[0]->data)[0] = k;
        in[1] = yes;
        for (int j = 0; j < N; j++) in[2 + j] = cur[j];
        inline_body(r, n, b, in, out, xfmt("%s/%lld", n->name, (long long)k));
        for (int j = 0; j < N; j++) cur[j] = out[1 + j];
        for (int s = 0; s < K; s++) {
            if (out[1 + N + s]->seq) fail("scan output %d of its body is a sequence; scan outputs are tensors", s);
            scan[s][k] = rw_axis_op(r, "Unsqueeze", out[1 + N + s], 0);
        }
    }
    for (int j = 0; j < N; j++) rw_pass(r, cur[j], n->out[j]);
    for (int s = 0; s < K; s++) {
        if (!n->out[N + s]) continue;
        if (T > 64) fail("has a scan output over %lld iterations; at most 64 when unrolled", (long long)T);
        Node *m = rw_node(r, "Concat", scan[s], (int)T, &n->out[N + s], 1);
        node_set_attr_i(m, "axis", 0);
    }
}

static void rw_if_const(Rw *r)
{
    Node *n = r->n;
    Tensor *cond = n->in[0];
    Graph *b = attr_graph(n, ((const uint8_t *)cond->data)[0] ? "then_branch" : "else_branch");
    if (b->ninputs) fail("subgraph '%s' has inputs; an If branch takes none", b->name);
    if (b->noutputs != n->nout) fail("has %d outputs, its branch '%s' %d", n->nout, b->name, b->noutputs);
    Tensor **out = xalloc(sizeof(Tensor *) * (size_t)(n->nout + 1));
    inline_body(r, n, b, NULL, out, xfmt("%s/%s", n->name, b->name));
    for (int j = 0; j < n->nout; j++) rw_pass(r, out[j], n->out[j]);
}

/* Which nodes seq_expand replaces. */
static int wants_rewrite(Node *n)
{
    if (is_seq_op(n)) return 1;
    if (*n->domain) return 0;
    if (!strcmp(n->op_type, "If"))
        return n->nin > 0 && n->in[0] && n->in[0]->data && touches_seq(n);   /* else: seq_flatten_if */
    if (!strcmp(n->op_type, "Loop")) {
        int formal = node_formal_inputs(n);
        for (int j = 2; j < formal; j++)
            if (n->in[j] && n->in[j]->seq) return 1;
        if (!touches_seq(n)) return 0;
        /* a body that makes sequences of its own: unrolled when it can be */
        Tensor *M = in_t(n, 0), *cond = in_t(n, 1);
        if (!M || !M->data || (cond && !cond->data)) return 0;
        int64_t T = elem_i64(M->dtype, M->data, 0);
        return T <= SEQ_UNROLL_MAX && stays_true(attr_graph(n, "body"));
    }
    if (!strcmp(n->op_type, "Identity") || !strncmp(n->op_type, "Optional", 8))
        for (int j = 0; j < n->nin; j++)
            if (n->in[j] && n->in[j]->seq) return 1;
    return 0;
}

/* The graph of each If that keeps its branches (seq_flatten_if adds outputs there). */
static struct Owner { Node *n; Graph *g; struct Owner *next; } *owners;

int seq_expand(Graph *g, Node *n)
{
    int i = graph_node_index(g, n);
    if (!wants_rewrite(n)) {
        if (!strcmp(n->op_type, "If") && !*n->domain) {
            struct Owner *o = xalloc(sizeof *o);
            o->n = n;
            o->g = g;
            o->next = owners;
            owners = o;
        }
        return 0;
    }
    diag_node = n;   /* (the inference loop checked the node's arity before this hook) */
    Rw r = {g, n, i + 1 < g->nnodes ? g->nodes[i + 1] : NULL, 0};
    graph_remove_node(g, n);
    const char *op = n->op_type;
    Tensor *y = n->nout > 0 ? n->out[0] : NULL;
    if (!strcmp(op, "SequenceConstruct")) {
        SeqVal *v = seq_new(DT_UNDEFINED, n->nin);
        for (int j = 0; j < n->nin; j++) {
            v->elem[j] = need_tensor(n, j);
            if (v->elem[j]->dtype != v->elem[0]->dtype)
                fail("its inputs have different types (%s and %s)", dtype_name(v->elem[0]->dtype),
                     dtype_name(v->elem[j]->dtype));
        }
        v->dtype = n->nin ? v->elem[0]->dtype : DT_UNDEFINED;
        if (y) y->seq = v;
    } else if (!strcmp(op, "SequenceEmpty")) {
        int dt = (int)attr_i(n, "dtype");
        if (!dtype_supported(dt)) fail("dtype %s is not supported", dtype_name(dt));
        if (y) y->seq = seq_new(dt, 0);
    } else if (!strcmp(op, "SequenceInsert")) {
        SeqVal *s = need_seq(n, 0);
        Tensor *t = need_tensor(n, 1);
        if (s->n && seq_dtype(s) != t->dtype)
            fail("inserts a %s tensor into a sequence of %s", dtype_name(t->dtype), dtype_name(seq_dtype(s)));
        if (!s->n && s->dtype && s->dtype != t->dtype)
            fail("inserts a %s tensor into a sequence of %s", dtype_name(t->dtype), dtype_name(s->dtype));
        int64_t at = in_t(n, 2) ? position(n, n->in[2], s->n, 1) : s->n;
        SeqVal *v = seq_new(t->dtype, s->n + 1);
        for (int k = 0, q = 0; k <= s->n; k++) v->elem[k] = k == at ? t : s->elem[q++];
        if (y) y->seq = v;
    } else if (!strcmp(op, "SequenceErase")) {
        SeqVal *s = need_seq(n, 0);
        if (!s->n) fail("erases from an empty sequence");
        int64_t at = in_t(n, 1) ? position(n, n->in[1], s->n, 0) : s->n - 1;
        SeqVal *v = seq_new(seq_dtype(s), s->n - 1);
        for (int k = 0, q = 0; k < s->n; k++)
            if (k != at) v->elem[q++] = s->elem[k];
        if (y) y->seq = v;
    } else if (!strcmp(op, "SequenceAt")) {
        SeqVal *s = need_seq(n, 0);
        int64_t at = position(n, need_in(n, 1), s->n, 0);
        rw_identity(&r, s->elem[at], y);
    } else if (!strcmp(op, "SequenceLength")) {
        SeqVal *s = need_seq(n, 0);
        if (y) {
            y->dtype = DT_INT64;
            tensor_set_shape(y, 0, NULL);
            ((int64_t *)tensor_alloc_data(y))[0] = s->n;
        }
    } else if (!strcmp(op, "SplitToSequence")) {
        rw_split(&r);
    } else if (!strcmp(op, "ConcatFromSequence")) {
        rw_concat(&r);
    } else if (!strcmp(op, "SequenceMap")) {
        rw_sequence_map(&r);
    } else if (!strcmp(op, "Optional")) {
        Tensor *x = in_t(n, 0);
        if (x && x->seq && x->seq->absent) fail("an optional of an optional is not supported");
        if (x && x->optional) fail("an optional of the optional graph input '%s' is not supported", x->name);
        if (!x) {
            SeqVal *v = seq_new(DT_UNDEFINED, 0);
            v->absent = 1;
            v->is_seq = 0;
            if (y) y->seq = v;
        } else {
            rw_pass(&r, x, y);
        }
    } else if (!strcmp(op, "Identity") || !strcmp(op, "OptionalGetElement")) {
        Tensor *x = need_in(n, 0);
        if (x->seq->absent) fail("reads an empty optional ('%s'; known at compile time): the spec makes that an error", x->name);
        rw_pass(&r, x, y);
    } else if (!strcmp(op, "OptionalHasElement")) {
        Tensor *x = need_in(n, 0);
        if (y) {
            y->dtype = DT_BOOL;
            tensor_set_shape(y, 0, NULL);
            ((uint8_t *)tensor_alloc_data(y))[0] = !x->seq->absent;
        }
    } else if (!strcmp(op, "If")) {
        rw_if_const(&r);
    } else if (!strcmp(op, "Loop")) {
        rw_loop(&r);
    } else {
        fail("internal: no sequence rewrite for %s", op);
    }
    graph_recount_uses(g);
    return 1;
}

/* ---- If with a run-time condition ---------------------------------------- */

void seq_flatten_if(Node *n, Graph **br, int nbr)
{
    int any = 0;
    for (int s = 0; s < nbr; s++)
        for (int j = 0; j < n->nout; j++) any |= br[s]->outputs[j]->seq != NULL;
    if (!any) return;
    Graph *g = NULL;
    for (struct Owner *o = owners; o; o = o->next)
        if (o->n == n) g = o->g;
    if (!g) fail("internal: the graph of an If with sequence outputs is unknown");
    int total = 0;
    for (int j = 0; j < n->nout; j++) {
        SeqVal *a = br[0]->outputs[j]->seq;
        for (int s = 1; s < nbr; s++) {
            SeqVal *e = br[s]->outputs[j]->seq;
            const char *why = NULL;
            if (!a != !e) why = "a sequence or optional in one branch and a tensor in the other";
            else if (a && a->absent != e->absent) why = "an empty optional in one branch and not in the other";
            else if (a && a->n != e->n) why = xfmt("a sequence of %d tensors in one branch and of %d in the other", a->n, e->n);
            if (why) {
                const char *b = bind_suggestion(n->in[0]);
                if (b)
                    fail("output %d is %s, and the condition ('%s') is known only at run time; onnx2c resolves "
                         "sequences at compile time: bind the inputs it comes from with %s (each FILE a serialized "
                         "TensorProto of the value) to compile only the branch it selects", j, why, n->in[0]->name, b);
                fail("output %d is %s, and the condition ('%s') is known only at run time; onnx2c resolves sequences "
                     "at compile time", j, why, n->in[0]->name);
            }
        }
        total += a ? a->n : 1;
    }
    int cap = (total > n->nout ? total : n->nout) + 1;
    Tensor **out = xalloc(sizeof(Tensor *) * (size_t)cap);
    Tensor ***bout = xalloc(sizeof(Tensor **) * (size_t)nbr);
    for (int s = 0; s < nbr; s++) bout[s] = xalloc(sizeof(Tensor *) * (size_t)cap);
    int q = 0;
    for (int j = 0; j < n->nout; j++) {
        Tensor *y = n->out[j];
        SeqVal *a = br[0]->outputs[j]->seq;
        if (!a) {
            for (int s = 0; s < nbr; s++) bout[s][q] = br[s]->outputs[j];
            out[q++] = y;
            continue;
        }
        SeqVal *v = seq_new(a->dtype, a->n);
        v->absent = a->absent;
        v->is_seq = a->is_seq;
        for (int e = 0; e < a->n; e++) {
            Tensor *t = graph_new_tensor(g, xfmt("%s/element%d", y ? y->name : n->name, e));
            t->producer = n;
            v->elem[e] = t;
            for (int s = 0; s < nbr; s++) {   /* a branch output of its own (a view), even of a constant or a capture */
                Tensor *x = br[s]->outputs[j]->seq->elem[e];
                Tensor *te = graph_new_tensor(br[s], xfmt("%s[%d]", br[s]->outputs[j]->name, e));
                Node *m = graph_insert_node(br[s], NULL, "Identity", "", &x, 1, &te, 1);
                m->origins = n->origins;
                m->norigins = n->norigins;
                const Node *saved = diag_node;
                diag_node = m;
                infer_node(m);
                diag_node = saved;
                bout[s][q] = te;
            }
            out[q++] = t;
        }
        if (y) {
            y->seq = v;
            y->producer = NULL;
        }
    }
    n->out = out;
    n->nout = q;
    for (int s = 0; s < nbr; s++) {
        br[s]->outputs = bout[s];
        br[s]->noutputs = q;
    }
    graph_touch(g);
}

void seq_capture(Node *owner, Graph *b, int k)
{
    const char *bm = owner->nin > 0 && owner->in[0] ? bind_suggestion(owner->in[0]) : NULL;
    const char *bc = !strcmp(owner->op_type, "Loop") && owner->nin > 1 && owner->in[1] ? bind_suggestion(owner->in[1]) : NULL;
    const char *binds = bm && bc ? xfmt("%s %s", bm, bc) : bm ? bm : bc;
    if (binds && strcmp(owner->op_type, "Scan"))
        fail("its subgraph '%s' reads the sequence or optional '%s' of an enclosing graph, and runs at run time; "
             "onnx2c resolves sequences at compile time: bind the inputs its %s comes from with %s (each FILE a "
             "serialized TensorProto of the value)", b->name, owner->in[b->capture_in[k]]->name,
             strcmp(owner->op_type, "If") ? "trip count and condition" : "condition", binds);
    fail("its subgraph '%s' reads the sequence or optional '%s' of an enclosing graph, and runs at run time (an If "
         "whose condition or a Loop whose trip count is a run-time value); onnx2c resolves sequences at compile "
         "time: make that condition or trip count known at compile time (--bind)", b->name,
         owner->in[b->capture_in[k]]->name);
}

/* ---- graph inputs and outputs ---------------------------------------------- */

static void add_slots(Graph *g, Tensor *t, int is_out, int index, int first, int count)
{
    struct SeqSlots *s = xalloc(sizeof(struct SeqSlots) * (size_t)(g->nseqio + 1));
    if (g->nseqio) memcpy(s, g->seqio, sizeof(struct SeqSlots) * (size_t)g->nseqio);
    s[g->nseqio].name = t->name;
    s[g->nseqio].is_out = is_out;
    s[g->nseqio].index = index;
    s[g->nseqio].kind = t->vkind ? t->vkind : (t->optional ? VK_OPT_TENSOR : VK_TENSOR);
    s[g->nseqio].first = first;
    s[g->nseqio].count = count;
    g->seqio = s;
    g->nseqio++;
}

/* One element's shape: D0xD1x... or "scalar". */
static int parse_elem(const char *s, size_t len, int64_t *dims, const char *flag)
{
    if (len == 6 && !strncmp(s, "scalar", 6)) return 0;
    int r = 0;
    const char *e = s + len;
    while (s < e) {
        char *end;
        if (r == MAX_RANK) fail_plain("%s: at most %d dimensions an element", flag, MAX_RANK);
        if (*s < '0' || *s > '9') fail_plain("%s: '%.*s' is not a shape (D0xD1x... or scalar)", flag, (int)len, e - len);
        long long v = strtoll(s, &end, 10);
        if (end > e || (end < e && *end != 'x') || v > (1LL << 40))
            fail_plain("%s: '%.*s' is not a shape (D0xD1x... or scalar)", flag, (int)len, e - len);
        dims[r++] = v;
        s = end < e ? end + 1 : end;
        if (end < e && s == e) fail_plain("%s: '%.*s' ends with 'x'", flag, (int)len, e - len);
    }
    if (!r) fail_plain("%s: an empty element shape (use scalar for rank 0)", flag);
    return r;
}

void seq_bind_inputs(Graph *g, const Options *o)
{
    owners = NULL;   /* a new compilation (its pool is fresh) */
    for (int s = 0; s < o->nshapes; s++) {
        Tensor *t = graph_find(g, o->shapes[s].name);
        if (t && t->is_input && o->shapes[s].rank < 0 && !t->vkind && !(t->optional && !strcmp(o->shapes[s].text, "none")))
            fail_plain("--shape %s:%s: that form is for sequence and optional inputs; '%s' is a tensor", t->name,
                       o->shapes[s].text, t->name);
    }
    int any = 0;
    for (int i = 0; i < g->ninputs; i++) any |= g->inputs[i]->vkind || g->inputs[i]->optional;
    if (!any) return;
    Tensor **ins = xalloc(sizeof(Tensor *) * 4097);
    int q = 0;
    for (int i = 0; i < g->ninputs; i++) {
        Tensor *t = g->inputs[i];
        const char *text = NULL;
        for (int s = 0; s < o->nshapes; s++)
            if (!strcmp(o->shapes[s].name, t->name)) text = o->shapes[s].text;
        int first = q;
        if (t->optional && text && !strcmp(text, "none")) {   /* absent at compile time: no slot */
            SeqVal *v = seq_new(t->dtype, 0);
            v->absent = 1;
            v->is_seq = 0;
            t->seq = v;
            t->input_index = -1;
            add_slots(g, t, 0, i, first, 0);
            continue;
        }
        if (t->vkind != VK_SEQ && t->vkind != VK_OPT_SEQ) {
            if (q == 4096) fail_plain("too many inputs");
            t->input_index = q;
            ins[q++] = t;
            if (t->optional) add_slots(g, t, 0, i, first, 1);
            continue;
        }
        const char *flag = xfmt("--shape %s:%s", t->name, text ? text : "");
        if (!text)
            fail_plain("input '%s' is %s: give the shapes of its elements, in order, with --shape %s:D0xD1,D0xD1,... "
                       "('scalar' for a rank-0 element, %s:empty for no element%s)", t->name,
                       t->vkind == VK_SEQ ? "a sequence" : "an optional sequence", t->name, t->name,
                       t->vkind == VK_OPT_SEQ ? xfmt(", %s:none for an absent optional", t->name) : "");
        t->input_index = -1;
        if (!strcmp(text, "none")) {
            if (t->vkind != VK_OPT_SEQ) fail_plain("%s: 'none' is for optional inputs; '%s' is a sequence", flag, t->name);
            SeqVal *v = seq_new(t->dtype, 0);
            v->absent = 1;
            t->seq = v;
            add_slots(g, t, 0, i, first, 0);
            continue;
        }
        int cnt = 0;
        if (strcmp(text, "empty"))
            for (const char *p = text;; p++) {
                cnt++;
                p = strchr(p, ',');
                if (!p) break;
            }
        if (q + cnt > 4096) fail_plain("too many inputs");
        SeqVal *v = seq_new(t->dtype, cnt);
        const char *p = text;
        for (int e = 0; e < cnt; e++) {
            const char *c = strchr(p, ',');
            size_t len = c ? (size_t)(c - p) : strlen(p);
            int64_t dims[MAX_RANK];
            int r = parse_elem(p, len, dims, flag);
            if (t->rank >= 0 && t->rank != r)
                fail_plain("%s: element %d has rank %d; the model declares the elements of rank %d", flag, e, r, t->rank);
            for (int d = 0; t->rank >= 0 && d < r; d++)
                if (t->dims[d] >= 0 && t->dims[d] != dims[d])
                    fail_plain("%s: element %d has dimension %d of %lld; the model fixes it to %lld", flag, e, d,
                               (long long)dims[d], (long long)t->dims[d]);
            Tensor *x = graph_new_tensor(g, xfmt("%s[%d]", t->name, e));
            x->dtype = t->dtype;
            tensor_set_shape(x, r, dims);
            x->is_input = 1;
            x->input_index = q;
            ins[q++] = x;
            v->elem[e] = x;
            p = c ? c + 1 : p + len;
        }
        t->seq = v;
        add_slots(g, t, 0, i, first, cnt);
    }
    g->inputs = ins;
    g->ninputs = q;
}

void seq_flatten_outputs(Graph *g)
{
    int any = 0;
    for (int k = 0; k < g->noutputs; k++) any |= g->outputs[k]->seq || g->outputs[k]->vkind;
    if (!any) return;
    int total = 0;
    for (int k = 0; k < g->noutputs; k++) {
        Tensor *t = g->outputs[k];
        if ((t->vkind == VK_SEQ || t->vkind == VK_OPT_SEQ) && (!t->seq || (!t->seq->is_seq && !t->seq->absent)))
            fail_plain("graph output '%s' is declared a sequence; the graph makes %s", t->name,
                       t->seq ? "an empty optional tensor" : "a tensor");
        if (t->vkind == VK_SEQ && t->seq->absent) fail_plain("graph output '%s' is declared a sequence; the graph makes an empty optional", t->name);
        if (t->vkind == VK_TENSOR && t->seq)
            fail_plain("graph output '%s' is declared a tensor; the graph makes %s", t->name,
                       t->seq->absent ? "an empty optional" : "a sequence");
        total += t->seq ? t->seq->n : 1;
    }
    Tensor **outs = xalloc(sizeof(Tensor *) * (size_t)(total + 1));
    int q = 0;
    for (int k = 0; k < g->noutputs; k++) {
        Tensor *t = g->outputs[k];
        int first = q;
        if (!t->seq) {
            t->output_index = q;
            outs[q++] = t;
            if (t->vkind) add_slots(g, t, 1, k, first, 1);
            continue;
        }
        t->is_output = 0;
        t->output_index = -1;
        for (int e = 0; e < t->seq->n; e++) {   /* element e as output NAME[e] */
            Tensor *x = t->seq->elem[e], *y = graph_new_tensor(g, xfmt("%s[%d]", t->name, e));
            Node *m = graph_insert_node(g, NULL, "Identity", "", &x, 1, &y, 1);
            m->name = xfmt("%s[%d]", t->name, e);
            m->origins = xalloc(sizeof(char *));
            m->origins[0] = m->name;
            m->norigins = 1;
            diag_node = m;
            infer_node(m);
            y->is_output = 1;
            y->output_index = q;
            outs[q++] = y;
        }
        diag_node = NULL;
        add_slots(g, t, 1, k, first, t->seq->n);
    }
    g->outputs = outs;
    g->noutputs = q;
    graph_touch(g);
}

void seq_io_notes(FILE *f, Graph *g, const char *N)
{
    if (!g->nseqio) return;
    fprintf(f, "/* Sequences and optionals: a sequence input or output takes one slot per\n"
               " * element, consecutive, in sequence order (its length and element shapes are\n"
               " * fixed at compile time: --shape NAME:D0xD1,D0xD1,...); an optional tensor input\n"
               " * takes one slot, NULL when absent; an optional known absent at compile time\n"
               " * (--shape NAME:none, or an output the model leaves empty) takes no slot.\n"
               " * Per model input/output: its first slot, its slot count, and whether it\n"
               " * is present (0 only for an absent optional). */\n");
    for (int k = 0; k < g->nseqio; k++) {
        const struct SeqSlots *s = &g->seqio[k];
        const char *kind = s->kind == VK_SEQ ? "sequence" : s->kind == VK_OPT_SEQ ? "optional sequence" : "optional tensor";
        const char *io = s->is_out ? "OUTPUT" : "INPUT";
        int present = s->count > 0 || (s->kind == VK_SEQ);
        if (s->kind == VK_OPT_SEQ || s->kind == VK_OPT_TENSOR) {
            Tensor *t = graph_find(g, s->name);
            present = !(t && t->seq && t->seq->absent);
        }
        fprintf(f, "/* model %s %d \"%s\": %s%s, %s */\n", s->is_out ? "output" : "input", s->index,
                c_comment(s->name), kind, present ? "" : " (absent)",
                s->count ? xfmt("slots %d..%d", s->first, s->first + s->count - 1) : "no slot");
        fprintf(f, "#define %s_MODEL_%s%d_FIRST %d\n", N, io, s->index, s->first);
        fprintf(f, "#define %s_MODEL_%s%d_COUNT %d\n", N, io, s->index, s->count);
        if (s->kind == VK_OPT_TENSOR && !s->is_out && s->count)   /* present or not at run time */
            fprintf(f, "/* (its slot is NULL when the optional is absent) */\n\n");
        else
            fprintf(f, "#define %s_MODEL_%s%d_PRESENT %d\n\n", N, io, s->index, present);
    }
}
