/* Graph editing: the small API the optimization passes use (readers of a
 * tensor, replacing uses, removing and inserting nodes, attributes,
 * re-inference, provenance). Readers lists are recounted lazily: every
 * edit marks the graph stale. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

void graph_touch(Graph *g) { g->uses_stale = 1; }

void graph_recount_uses(Graph *g)
{
    for (int t = 0; t < g->ntensors; t++) {
        g->tensors[t]->nuses = 0;
        g->tensors[t]->nreaders = 0;
    }
    /* first count, then fill */
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        for (int j = 0; j < n->nin; j++) {
            Tensor *t = n->in[j];
            if (!t) continue;
            t->nuses++;
            int first = 1;
            for (int k = 0; k < j; k++) if (n->in[k] == t) first = 0;
            if (first) t->nreaders++;
        }
    }
    for (int t = 0; t < g->ntensors; t++) {
        Tensor *x = g->tensors[t];
        x->readers = x->nreaders ? xalloc(sizeof(Node *) * (size_t)x->nreaders) : NULL;
        x->mark = 0;
    }
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        for (int j = 0; j < n->nin; j++) {
            Tensor *t = n->in[j];
            if (!t) continue;
            int first = 1;
            for (int k = 0; k < j; k++) if (n->in[k] == t) first = 0;
            if (first) t->readers[t->mark++] = n;
        }
    }
    for (int i = 0; i < g->noutputs; i++) g->outputs[i]->nuses++;
    g->uses_stale = 0;
}

int graph_readers(Graph *g, Tensor *t, Node ***readers)
{
    if (g->uses_stale) graph_recount_uses(g);
    *readers = t->readers;
    return t->nreaders;
}

int tensor_nuses(Graph *g, Tensor *t)
{
    if (g->uses_stale) graph_recount_uses(g);
    return t->nuses;
}

int tensor_single_use(Graph *g, Tensor *t)
{
    if (g->uses_stale) graph_recount_uses(g);
    return t->nuses == 1 && !graph_is_output(g, t);
}

int node_promoted_in(const Node *n, int j)
{
    return n->promoted && j >= 0 && j < 64 && (n->promoted_in >> j & 1);
}

int graph_is_output(const Graph *g, const Tensor *t)
{
    if (t->is_output) return 1;   /* the model's */
    for (int i = 0; i < g->noutputs; i++)
        if (g->outputs[i] == t) return 1;   /* a body's */
    return 0;
}

/* A fresh name: hint, else hint_K. K is the smallest free one while K <= 8
 * are tried; past that the search gallops (K = 16, 32, ... until one is
 * free, then halves the last gap down to a taken K - 1), so that a rewrite
 * making thousands of tensors from one hint (a SplitToSequence into 4096
 * pieces) is not quadratic: fuzzing found 3000 constants taking 4.5 M
 * probes and 300 MB of names. */
static int name_taken(Graph *g, const char *hint, int k)
{
    return graph_find(g, k ? xfmt("%s_%d", hint, k) : hint) != NULL;
}

Tensor *graph_new_tensor(Graph *g, const char *hint)
{
    int k = 0;
    while (k <= 8 && name_taken(g, hint, k)) k++;
    if (k > 8) {
        int lo = 8, hi = 16;   /* lo taken, hi to be found free */
        while (name_taken(g, hint, hi)) {
            if (hi > INT32_MAX / 2) fail_plain("internal: no free name for '%s'", hint);
            lo = hi;
            hi *= 2;
        }
        while (hi - lo > 1) {   /* lo taken, hi free */
            int mid = lo + (hi - lo) / 2;
            if (name_taken(g, hint, mid)) lo = mid;
            else hi = mid;
        }
        k = hi;
    }
    const char *name = k ? xfmt("%s_%d", hint, k) : hint;
    Tensor *t = graph_tensor(g, name);
    g->uses_stale = 1;
    return t;
}

Tensor *graph_new_const(Graph *g, const char *hint, int dtype, int rank, const int64_t *dims)
{
    Tensor *t = graph_new_tensor(g, hint);
    t->dtype = dtype;
    tensor_set_shape(t, rank, dims);
    tensor_alloc_data(t);
    return t;
}

void node_set_input(Graph *g, Node *n, int j, Tensor *t)
{
    if (j > n->nin) fail_plain("internal: node_set_input past the end");
    if (j == n->nin) {
        Tensor **in = xalloc(sizeof(Tensor *) * (size_t)(n->nin + 2));
        if (n->nin) memcpy(in, n->in, sizeof(Tensor *) * (size_t)n->nin);
        n->in = in;
        n->nin++;
    }
    n->in[j] = t;
    g->uses_stale = 1;
}

void node_set_output(Node *n, int j, Tensor *t)
{
    if (j >= n->nout) fail_plain("internal: node_set_output past the end");
    n->out[j] = t;
    if (t) t->producer = n;
}

int graph_replace_uses(Graph *g, Tensor *old_t, Tensor *new_t)
{
    int k = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        for (int j = 0; j < n->nin; j++)
            if (n->in[j] == old_t) { n->in[j] = new_t; k++; }
    }
    g->uses_stale = 1;
    return k;
}

int graph_node_index(const Graph *g, const Node *n)
{
    for (int i = 0; i < g->nnodes; i++)
        if (g->nodes[i] == n) return i;
    return -1;
}

void graph_remove_node(Graph *g, Node *n)
{
    int at = graph_node_index(g, n);
    if (at < 0) fail_plain("internal: removing a node that is not in the graph");
    memmove(g->nodes + at, g->nodes + at + 1, sizeof(Node *) * (size_t)(g->nnodes - at - 1));
    g->nnodes--;
    for (int j = 0; j < n->nout; j++)
        if (n->out[j] && n->out[j]->producer == n) n->out[j]->producer = NULL;
    g->uses_stale = 1;
}

Node *graph_insert_node(Graph *g, Node *before, const char *op_type, const char *domain,
                        Tensor *const *in, int nin, Tensor *const *out, int nout)
{
    const OpDef *op = graph_op(g, domain, op_type);
    if (!op) fail_plain("internal: a pass inserts unknown op %s", op_type);
    Node *n = graph_add_node(g);            /* appended; moved below */
    int at = before ? graph_node_index(g, before) : g->nnodes - 1;
    if (at < 0) fail_plain("internal: inserting before a node that is not in the graph");
    memmove(g->nodes + at + 1, g->nodes + at, sizeof(Node *) * (size_t)(g->nnodes - 1 - at));
    g->nodes[at] = n;
    n->op_type = xstrdup(op_type);
    n->domain = xstrdup(domain);
    n->op = op;
    n->opset = g->opset;
    n->name = xfmt("%s_%d", op_type, tensor_new_id());
    n->nin = nin;
    n->in = xalloc(sizeof(Tensor *) * (size_t)(nin + 1));
    for (int j = 0; j < nin; j++) n->in[j] = in[j];
    n->nout = nout;
    n->out = xalloc(sizeof(Tensor *) * (size_t)(nout + 1));
    for (int j = 0; j < nout; j++) node_set_output(n, j, out[j]);
    n->attrs = xalloc(sizeof(Attr));
    g->uses_stale = 1;
    return n;
}

void node_add_origins(Node *dst, const Node *src)
{
    const char **o = xalloc(sizeof(char *) * (size_t)(dst->norigins + src->norigins + 1));
    int k = 0;
    for (int i = 0; i < dst->norigins; i++) o[k++] = dst->origins[i];
    for (int i = 0; i < src->norigins; i++) {
        int seen = 0;
        for (int j = 0; j < k; j++) if (!strcmp(o[j], src->origins[i])) seen = 1;
        if (!seen) o[k++] = src->origins[i];
    }
    dst->origins = o;
    dst->norigins = k;
}

void node_note_fused(Node *dst, const char *what)
{
    dst->fused = xfmt("%s+%s", dst->fused ? dst->fused : dst->op_type, what);
}


/* ---- attributes ------------------------------------------------------ */

static Attr *attr_slot(Node *n, const char *name, int type)
{
    for (int i = 0; i < n->nattrs; i++)
        if (!strcmp(n->attrs[i].name, name)) {
            memset(&n->attrs[i], 0, sizeof(Attr));
            n->attrs[i].name = xstrdup(name);
            n->attrs[i].type = type;
            return &n->attrs[i];
        }
    Attr *a = xalloc(sizeof(Attr) * (size_t)(n->nattrs + 2));
    if (n->nattrs) memcpy(a, n->attrs, sizeof(Attr) * (size_t)n->nattrs);
    n->attrs = a;
    Attr *s = &n->attrs[n->nattrs++];
    s->name = xstrdup(name);
    s->type = type;
    return s;
}

void node_set_attr_i(Node *n, const char *name, int64_t v) { attr_slot(n, name, AT_INT)->i = v; }
void node_set_attr_f(Node *n, const char *name, double v) { attr_slot(n, name, AT_FLOAT)->f = v; }
void node_set_attr_s(Node *n, const char *name, const char *v) { attr_slot(n, name, AT_STRING)->s = xstrdup(v); }

void node_set_attr_ints(Node *n, const char *name, const int64_t *v, int len)
{
    Attr *a = attr_slot(n, name, AT_INTS);
    a->ints = xalloc(sizeof(int64_t) * (size_t)(len + 1));
    if (len) memcpy(a->ints, v, sizeof(int64_t) * (size_t)len);
    a->n = len;
}

void node_set_attr_floats(Node *n, const char *name, const double *v, int len)
{
    Attr *a = attr_slot(n, name, AT_FLOATS);
    a->floats = xalloc(sizeof(double) * (size_t)(len + 1));
    if (len) memcpy(a->floats, v, sizeof(double) * (size_t)len);
    a->n = len;
}

void node_remove_attr(Node *n, const char *name)
{
    for (int i = 0; i < n->nattrs; i++)
        if (!strcmp(n->attrs[i].name, name)) {
            memmove(n->attrs + i, n->attrs + i + 1, sizeof(Attr) * (size_t)(n->nattrs - i - 1));
            n->nattrs--;
            return;
        }
}

/* ---- constant values ------------------------------------------------- */

double *tensor_const_f64(const Tensor *t)
{
    if (!t || !t->data || !dtype_supported(t->dtype)) return NULL;
    int64_t ne = tensor_numel(t);
    double *v = xalloc(sizeof(double) * (size_t)(ne + 1));
    for (int64_t i = 0; i < ne; i++) v[i] = elem_f64(t->dtype, t->data, i);
    return v;
}

int tensor_const_splat(const Tensor *t, double *v)
{
    if (!t || !t->data || !dtype_supported(t->dtype) || tensor_numel(t) < 1) return 0;
    double first = elem_f64(t->dtype, t->data, 0);
    for (int64_t i = 1; i < tensor_numel(t); i++)
        if (elem_f64(t->dtype, t->data, i) != first) return 0;
    *v = first;
    return 1;
}

/* ---- removing a node that passes its input through ------------------ */

/* Node n's output 0 equals its input j: its readers read that input
 * instead, and n leaves the graph. When the output is a graph output the
 * input's producer writes it instead (the output keeps its name); when that
 * cannot be (the input is a graph input, output or constant) n stays: 0. */
int graph_bypass_node(Graph *g, Node *n, int j)
{
    Tensor *x = n->in[j], *y = n->out[0];
    if (graph_is_output(g, y)) {
        /* the producer of x writes y instead (y keeps its name) */
        Node *p = x->producer;
        if (!p || graph_is_output(g, x) || x->is_input || x->data || graph_node_index(g, p) < 0) return 0;
        int k = -1;
        for (int o = 0; o < p->nout; o++)
            if (p->out[o] == x) k = o;
        if (k < 0) return 0;
        graph_replace_uses(g, x, y);
        node_set_output(p, k, y);
        note("remove %s '%s' (its input's producer '%s' writes graph output '%s')", n->op_type, n->name,
             p->name, y->name);
    } else {
        graph_replace_uses(g, y, x);
        note("remove %s '%s'", n->op_type, n->name);
    }
    graph_remove_node(g, n);
    return 1;
}

/* ---- order and subgraphs ------------------------------------------------ */

/* A node of g, by the positions topo_sort numbered its nodes with (a
 * producer outside g: a capture's view of the enclosing graph's tensor). */
static int in_graph(const Graph *g, const Node *p)
{
    return p && p->step >= 0 && p->step < g->nnodes && g->nodes[p->step] == p;
}

/* Kahn's algorithm, ready nodes taken in their current order (so sorting
 * a sorted graph changes nothing). Tensors are numbered in t->mark. */
void topo_sort(Graph *g)
{
    int n = g->nnodes;
    for (int t = 0; t < g->ntensors; t++) g->tensors[t]->mark = t;
    int *indeg = xalloc(sizeof(int) * (size_t)(n + 1));
    int *order = xalloc(sizeof(int) * (size_t)(n + 1));
    int *idx_of = xalloc(sizeof(int) * (size_t)(n + 1));
    /* consumers: for each tensor, the list of nodes reading it */
    int *ncons = xalloc(sizeof(int) * (size_t)(g->ntensors + 1));
    for (int i = 0; i < n; i++) g->nodes[i]->step = i;
    for (int i = 0; i < n; i++) {
        Node *nd = g->nodes[i];
        for (int j = 0; j < nd->nin; j++) {
            Tensor *t = nd->in[j];
            if (!t) continue;
            if (!t->producer && !t->data && !t->is_input)
                fail_plain("node '%s' (%s) reads tensor '%s', which no node produces and which is neither "
                           "an initializer nor a graph input (dangling tensor)", nd->name, nd->op_type, t->name);
            if (in_graph(g, t->producer)) { indeg[i]++; ncons[t->mark]++; }
        }
    }
    for (int i = 0; i < g->noutputs; i++) {
        Tensor *t = g->outputs[i];
        if (!t->producer && !t->data && !t->is_input)
            fail_plain("graph output '%s' is produced by no node (dangling tensor)", t->name);
    }
    int **cons = xalloc(sizeof(int *) * (size_t)(g->ntensors + 1));
    int *fill = xalloc(sizeof(int) * (size_t)(g->ntensors + 1));
    for (int t = 0; t < g->ntensors; t++) cons[t] = xalloc(sizeof(int) * (size_t)(ncons[t] + 1));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < g->nodes[i]->nin; j++) {
            Tensor *t = g->nodes[i]->in[j];
            if (t && in_graph(g, t->producer)) cons[t->mark][fill[t->mark]++] = i;
        }
    /* a queue ordered by model position: a simple binary heap */
    int *heap = xalloc(sizeof(int) * (size_t)(n + 1));
    int hn = 0, done = 0;
#define HPUSH(v) do { int c_ = hn++; heap[c_] = (v); \
        while (c_ && heap[(c_ - 1) / 2] > heap[c_]) { int t_ = heap[c_]; heap[c_] = heap[(c_ - 1) / 2]; heap[(c_ - 1) / 2] = t_; c_ = (c_ - 1) / 2; } } while (0)
    for (int i = 0; i < n; i++) if (!indeg[i]) HPUSH(i);
    while (hn) {
        int v = heap[0];
        heap[0] = heap[--hn];
        for (int c = 0;;) {
            int l = 2 * c + 1, r = l + 1, m = c;
            if (l < hn && heap[l] < heap[m]) m = l;
            if (r < hn && heap[r] < heap[m]) m = r;
            if (m == c) break;
            int t = heap[c]; heap[c] = heap[m]; heap[m] = t; c = m;
        }
        order[done++] = v;
        Node *nd = g->nodes[v];
        for (int j = 0; j < nd->nout; j++) {
            Tensor *t = nd->out[j];
            if (!t) continue;
            for (int c = 0; c < ncons[t->mark]; c++) {
                int u = cons[t->mark][c];
                if (--indeg[u] == 0) HPUSH(u);
            }
        }
    }
#undef HPUSH
    if (done < n) {
        for (int i = 0; i < n; i++)
            if (indeg[i]) {
                Node *nd = g->nodes[i];
                fail_plain("the graph has a cycle: node '%s' (%s) depends on its own output; ONNX graphs must be acyclic",
                           nd->name, nd->op_type);
            }
    }
    Node **sorted = xalloc(sizeof(Node *) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) { sorted[i] = g->nodes[order[i]]; sorted[i]->step = i; idx_of[order[i]] = i; }
    if (n) memcpy(g->nodes, sorted, sizeof(Node *) * (size_t)n);   /* an empty graph has no node list */
}

int node_has_subgraph(const Node *n)
{
    for (int a = 0; a < n->nattrs; a++)
        if (n->attrs[a].g) return 1;
    return 0;
}

/* The node's ONNX inputs (the captures come after them). */
int node_formal_inputs(const Node *n)
{
    int f = n->nin;
    for (int a = 0; a < n->nattrs; a++) {
        const Graph *b = n->attrs[a].g;
        for (int k = 0; b && k < b->ncaptures; k++)
            if (b->capture_in[k] < f) f = b->capture_in[k];
    }
    return f;
}

static Tensor *map_tensor(Graph *g, const Tensor *t) { return t ? graph_tensor(g, t->name) : NULL; }

/* A copy of subgraph src (its nested subgraphs copied too), as loaded:
 * constants it folded stay (they hold in every iteration). */
Graph *graph_clone(const Graph *src, Graph *parent)
{
    Graph *g = xalloc(sizeof *g);
    g->name = src->name;
    g->parent = parent;
    g->opset = src->opset;
    g->ir_version = src->ir_version;
    g->model_dir = src->model_dir;
    g->producer = src->producer;
    for (int t = 0; t < src->ntensors; t++) {
        const Tensor *a = src->tensors[t];
        Tensor *b = graph_tensor(g, a->name);
        b->dtype = a->dtype;
        b->rank = a->rank;
        memcpy(b->dims, a->dims, sizeof b->dims);
        memcpy(b->sym, a->sym, sizeof b->sym);
        if (a->data && (!a->producer || a->producer->folded)) b->data = a->data;
    }
    g->inputs = xalloc(sizeof(Tensor *) * (size_t)(src->ninputs + 1));
    for (int i = 0; i < src->ninputs; i++) g->inputs[g->ninputs++] = map_tensor(g, src->inputs[i]);
    for (int i = 0; i < src->ninputs; i++) g->inputs[i]->data = NULL;
    g->outputs = xalloc(sizeof(Tensor *) * (size_t)(src->noutputs + 1));
    for (int i = 0; i < src->noutputs; i++) g->outputs[g->noutputs++] = map_tensor(g, src->outputs[i]);
    g->captures = xalloc(sizeof(Tensor *) * (size_t)(src->ncaptures + 1));
    g->capture_in = xalloc(sizeof(int) * (size_t)(src->ncaptures + 1));
    for (int k = 0; k < src->ncaptures; k++) {
        g->captures[k] = map_tensor(g, src->captures[k]);
        g->captures[k]->data = NULL;
        g->capture_in[k] = src->capture_in[k];
    }
    g->ncaptures = src->ncaptures;
    for (int i = 0; i < src->nnodes; i++) {
        const Node *a = src->nodes[i];
        if (a->folded) continue;
        Node *m = graph_add_node(g);
        *m = *a;
        m->promoted = 0;
        m->promoted_in = 0;
        m->in = xalloc(sizeof(Tensor *) * (size_t)(a->nin + 1));
        for (int j = 0; j < a->nin; j++) m->in[j] = map_tensor(g, a->in[j]);
        m->out = xalloc(sizeof(Tensor *) * (size_t)(a->nout + 1));
        for (int j = 0; j < a->nout; j++) {
            m->out[j] = map_tensor(g, a->out[j]);
            if (m->out[j]) {
                m->out[j]->producer = m;
                m->out[j]->data = NULL;
            }
        }
        m->attrs = xalloc(sizeof(Attr) * (size_t)(a->nattrs + 1));
        for (int k = 0; k < a->nattrs; k++) {
            m->attrs[k] = a->attrs[k];
            if (a->attrs[k].g) m->attrs[k].g = graph_clone(a->attrs[k].g, g);
        }
    }
    return g;
}
