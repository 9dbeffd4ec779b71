/* Pass fuse_elementwise: vertical fusion of elementwise nodes. From each
 * elementwise node (the root, last in graph order first), grows the
 * largest group of elementwise producers whose results are read inside the
 * group alone and has the root's shape (inputs may broadcast), and replaces it
 * by one FusedElementwise node (ops/fused_elementwise.c) whose loop
 * computes every step per output element: the intermediate tensors leave
 * the arena. Steps: the unary, binary and comparison ops of the op table,
 * Clip with constant bounds, Cast, Sum/Max/Min of two inputs.
 *
 * Not absorbed: a producer whose result a node outside the group reads (it
 * stays and feeds the loop as an input), or a graph output, except one
 * graph output read only inside the group with the root's shape, which
 * becomes the node's second output. Such a group has no path out and back
 * in, so the new node has a place in the order. At most O2C_MAX_X inputs per loop. */
#include <string.h>

#include "../ir.h"

#define MAX_MEMBERS 64

typedef struct Member {
    Node *n;
    EwStep s;   /* the node as a step (its op's OpDef.ew_step) */
} Member;

typedef struct Group {
    Member m[MAX_MEMBERS];
    int n;
    Tensor *extra;            /* a graph output inside the tree (second output) */
} Group;

static int member_of(const Group *G, const Node *n)
{
    for (int i = 0; i < G->n; i++)
        if (G->m[i].n == n) return i;
    return -1;
}

/* t's elements map one to one onto the root's (same dims, maybe fewer
 * leading 1s). */
static int same_layout(const Tensor *t, const Tensor *y)
{
    if (t->rank > y->rank || tensor_numel(t) != tensor_numel(y)) return 0;
    for (int d = 0; d < t->rank; d++)
        if (t->dims[t->rank - 1 - d] != y->dims[y->rank - 1 - d]) return 0;
    return 1;
}

static int identical_shape(const Tensor *t, const Tensor *y)
{
    if (t->rank != y->rank) return 0;
    for (int d = 0; d < t->rank; d++)
        if (t->dims[d] != y->dims[d]) return 0;
    return 1;
}

/* The loop's inputs (in order of first use by the members in graph order);
 * returns their number. */
static int group_inputs(const Group *G, Member **order, Tensor **in, int max)
{
    int nin = 0;
    for (int i = 0; i < G->n; i++) {
        const Member *m = order[i];
        for (int j = 0; j < m->s.nx; j++) {
            Tensor *t = m->s.x[j];
            if (t->producer && member_of(G, t->producer) >= 0) continue;
            int seen = 0;
            for (int k = 0; k < nin; k++) if (in[k] == t) seen = 1;
            if (seen) continue;
            if (nin == max) return max + 1;
            in[nin++] = t;
        }
    }
    return nin;
}

static Member **sorted(Graph *g, Group *G)
{
    Member **o = xalloc(sizeof(Member *) * (size_t)G->n);
    int *pos = xalloc(sizeof(int) * (size_t)G->n);
    for (int i = 0; i < G->n; i++) {
        o[i] = &G->m[i];
        pos[i] = graph_node_index(g, G->m[i].n);
    }
    for (int i = 1; i < G->n; i++)   /* insertion sort by graph position */
        for (int k = i; k > 0 && pos[k - 1] > pos[k]; k--) {
            int tp = pos[k]; pos[k] = pos[k - 1]; pos[k - 1] = tp;
            Member *tm = o[k]; o[k] = o[k - 1]; o[k - 1] = tm;
        }
    return o;
}

/* The group fits one kernel: inputs, and the broadcast strides in k[]. */
static int fits(Graph *g, Group *G, const Tensor *y)
{
    Tensor *in[O2C_MAX_X + 1];
    int nin = group_inputs(G, sorted(g, G), in, O2C_MAX_X);
    if (nin > O2C_MAX_X) return 0;
    int nb = 0;
    for (int j = 0; j < nin; j++)
        if (tensor_numel(in[j]) != 1 && tensor_numel(in[j]) != tensor_numel(y)) nb++;
    return !nb || 1 + y->rank + y->rank * nb <= O2C_NK;
}

/* Adds producers whose result only members read, until none is left. */
static void grow(Graph *g, Group *G, const Tensor *y)
{
    for (int again = 1; again;) {
        again = 0;
        for (int q = 0; q < G->n; q++)
            for (int j = 0; j < G->m[q].s.nx; j++) {
                Tensor *t = G->m[q].s.x[j];
                Node *p = t->producer, **rd;
                if (!p || member_of(G, p) >= 0 || G->n == MAX_MEMBERS) continue;
                if (t->is_input || t->data || !same_layout(t, y)) continue;
                int nr = graph_readers(g, t, &rd), inside = 1;
                for (int k = 0; k < nr; k++)
                    if (member_of(G, rd[k]) < 0) inside = 0;
                if (!inside) continue;
                if (graph_is_output(g, t) && (G->extra || !identical_shape(t, y))) continue;
                Member *m = &G->m[G->n];
                memset(m, 0, sizeof *m);
                m->n = p;
                if (!ew_node_step(p, &m->s)) continue;
                G->n++;
                if (!fits(g, G, y)) { G->n--; continue; }
                if (graph_is_output(g, t)) G->extra = t;
                again = 1;
            }
    }
}

static Node *replace(Graph *g, Group *G)
{
    Node *root = G->m[0].n;
    Member **order = sorted(g, G);
    Tensor *in[O2C_MAX_X + 1];
    int nin = group_inputs(G, order, in, O2C_MAX_X);
    int ns = G->n;
    int64_t *args = xalloc(sizeof(int64_t) * (size_t)(2 * ns)), *types = xalloc(sizeof(int64_t) * (size_t)ns);
    double *params = xalloc(sizeof(double) * (size_t)(3 * ns));
    char *ops = xstrdup("");
    int64_t outs[2];
    Tensor *out[2];
    int nout = 1;
    for (int s = 0; s < ns; s++) {
        Member *m = order[s];
        for (int j = 0; j < 2; j++) {
            int v = -1;
            if (j < m->s.nx) {
                Tensor *t = m->s.x[j];
                int pm = t->producer ? member_of(G, t->producer) : -1;
                if (pm >= 0) {
                    for (int k = 0; k < s; k++) if (order[k] == &G->m[pm]) v = nin + k;
                } else {
                    for (int k = 0; k < nin; k++) if (in[k] == t) v = k;
                }
                if (v < 0) fail_plain("internal: fuse_elementwise lost an operand");
            }
            args[2 * s + j] = v;
        }
        types[s] = m->n->out[0]->dtype;
        memcpy(params + 3 * s, m->s.abc, sizeof m->s.abc);
        ops = xfmt("%s%s%s", ops, s ? " " : "", m->s.expr);
        if (m->n == root) { outs[0] = nin + s; out[0] = root->out[0]; }
        if (G->extra && m->n->out[0] == G->extra) { outs[1] = nin + s; out[1] = G->extra; nout = 2; }
    }
    Node *f = graph_insert_node(g, root, "FusedElementwise", "onnx2c", in, nin, out, nout);
    node_set_attr_s(f, "ops", ops);
    node_set_attr_ints(f, "args", args, 2 * ns);
    node_set_attr_ints(f, "types", types, ns);
    node_set_attr_floats(f, "params", params, 3 * ns);
    node_set_attr_ints(f, "outs", outs, nout);
    for (int s = 0; s < ns; s++) {
        node_add_origins(f, order[s]->n);
        node_note_fused(f, order[s]->n->op_type);
    }
    for (int s = 0; s < ns; s++) graph_remove_node(g, order[s]->n);
    node_reinfer(f);
    note("fuse_elementwise: %d nodes -> '%s' (%s), %d input%s", ns, f->name, ops, nin, nin == 1 ? "" : "s");
    return f;
}

int pass_fuse_elementwise(Graph *g)
{
    int changes = 0;
    Group *G = xalloc(sizeof *G);
    for (int i = g->nnodes - 1; i >= 0; i--) {
        Node *root = g->nodes[i];
        memset(G, 0, sizeof *G);
        Member *m = &G->m[0];
        m->n = root;
        if (!ew_node_step(root, &m->s)) continue;
        G->n = 1;
        Tensor *y = root->out[0];
        if (!fits(g, G, y)) continue;
        grow(g, G, y);
        if (G->n < 2) continue;
        Node *f = replace(g, G);
        i = graph_node_index(g, f);
        changes++;
    }
    return changes;
}
