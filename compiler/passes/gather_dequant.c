/* Pass gather_dequant: a Gather or Slice of a dequantized constant reads the
 * integer constant, and the dequantization follows it:
 *
 *   Gather(DequantizeLinear(q, s, z), idx)    ->  DequantizeLinear(Gather(q, idx), s, z)
 *   Gather(Mul(Cast(q), s), idx)              ->  Mul(Cast(Gather(q, idx)), s)
 *   Gather(Mul(Sub(Cast(q), z), s), idx)      ->  Mul(Sub(Cast(Gather(q, idx)), z), s)
 *
 * and the same for Slice. A model with weight-only int8 tables (a word
 * embedding of 30522 x 384 int8 values that a Gather reads 128 rows of)
 * otherwise dequantizes the whole table on every run: the fold pass keeps
 * the DequantizeLinear of an int8 constant at run time, as its float result
 * would take four times the bytes. Now only the rows read are converted,
 * the table stays 8-bit in the file, and when nothing else reads the
 * dequantized table its node leaves with dce.
 *
 * The scale and zero point must be the same for every element the Gather
 * or Slice can pick from them: one value, or (DequantizeLinear) along an
 * axis other than the gathered one or one the Slice leaves whole, or
 * (Mul/Sub) constants that span only axes after the gathered one or that
 * have one value along every sliced axis. q is an 8- or 16-bit integer
 * constant; blocked DequantizeLinear is left alone. The result is the same
 * values (dequantization is elementwise, Gather and Slice only pick
 * elements). */
#include "pattern.h"

/* An integer type whose constant Gather and Slice read as it is */
static int int_source(int dt)
{
    return dt == DT_INT8 || dt == DT_UINT8 || dt == DT_INT16 || dt == DT_UINT16;
}

/* The axes n (Gather or Slice) picks along in *picked[rank of its data];
 * the Gather's axis in *gaxis (-1 for Slice). 0: not known now. */
static int picked_axes(const Node *n, char *picked, int *gaxis)
{
    const int r = n->in[0]->rank;
    memset(picked, 0, (size_t)r);
    *gaxis = -1;
    if (pat_is(n, "Gather")) {
        int64_t a = attr_i(n, "axis");
        if (a < 0) a += r;
        if (a < 0 || a >= r) return 0;
        picked[a] = 1;
        *gaxis = (int)a;
        return 1;
    }
    if (n->opset < 10) {   /* the attribute form: "axes" (default: the first len(starts) axes) */
        const Attr *ax = attr_find(n, "axes"), *st = attr_find(n, "starts");
        if (!st) return 0;
        for (int i = 0; i < st->n; i++) {
            int64_t a = ax ? (i < ax->n ? ax->ints[i] : -1 - r) : i;
            if (a < 0) a += r;
            if (a < 0 || a >= r) return 0;
            picked[a] = 1;
        }
        return 1;
    }
    Tensor *st = in_t((Node *)n, 1), *ax = in_t((Node *)n, 3);
    if (!st || !st->data || (ax && !ax->data) || st->rank != 1) return 0;
    for (int64_t i = 0; i < tensor_numel(st); i++) {
        int64_t a = ax ? (i < tensor_numel(ax) ? elem_i64(ax->dtype, ax->data, i) : -1 - r) : i;
        if (a < 0) a += r;
        if (a < 0 || a >= r) return 0;
        picked[a] = 1;
    }
    return 1;
}

/* A Mul/Sub operand p (constant) broadcast against data of rank r is the
 * same for every element along the picked axes: one value; or its dims
 * (aligned to the right) are 1 on every picked axis, and for a Gather it
 * spans no axis before the gathered one (the output's axes there change). */
static int operand_uniform(const Tensor *p, int r, const char *picked, int gaxis)
{
    if (!p || !p->data || p->rank < 0 || p->rank > r) return 0;
    if (tensor_numel(p) == 1) return 1;
    if (gaxis >= 0) return p->rank <= r - 1 - gaxis;
    for (int d = 0; d < p->rank; d++)
        if (picked[r - p->rank + d] && p->dims[d] != 1) return 0;
    return 1;
}

/* The node after n in g's order, or NULL when n is last */
static Node *next_node(Graph *g, Node *n)
{
    int i = graph_node_index(g, n);
    return i + 1 < g->nnodes ? g->nodes[i + 1] : NULL;
}

/* n reads q instead of the dequantized data and makes a new tensor of q's
 * type; returns it (n's old output is for the caller's nodes to make). */
static Tensor *pick_integers(Graph *g, Node *n, Tensor *q)
{
    Tensor *qp = graph_new_tensor(g, "picked_q");
    node_set_input(g, n, 0, q);
    node_set_output(n, 0, qp);
    node_reinfer(n);
    return qp;
}

static Node *add_after(Graph *g, Node **at, Node *origin, const char *op, Tensor *const *in, int nin, Tensor *out)
{
    Node *m = graph_insert_node(g, *at ? next_node(g, *at) : NULL, op, "", in, nin, &out, 1);
    node_add_origins(m, origin);
    *at = m;
    return m;
}

/* Gather/Slice n of DequantizeLinear d's output */
static int move_dequantize(Graph *g, Node *n, Node *d)
{
    Tensor *q = d->in[0], *s = d->in[1], *z = in_t(d, 2), *y = n->out[0];
    const int r = q->rank;
    char picked[MAX_RANK];
    int gaxis;
    if (!q->data || !int_source(q->dtype) || !s->data || (z && !z->data) || attr_i(d, "block_size") ||
        !picked_axes(n, picked, &gaxis))
        return 0;
    int64_t axis = -1;
    if (tensor_numel(s) != 1) {   /* per axis: not one n picks along */
        axis = attr_i(d, "axis");
        if (axis < 0) axis += r;
        if (axis < 0 || axis >= r || picked[axis]) return 0;
        if (gaxis >= 0 && axis > gaxis) axis += n->in[1]->rank - 1;   /* the indices' axes replace the gathered one */
    }
    Tensor *qp = pick_integers(g, n, q);
    Node *at = n;
    Tensor *in[3] = {qp, s, z};
    Node *m = add_after(g, &at, n, "DequantizeLinear", in, z ? 3 : 2, y);
    node_add_origins(m, d);
    if (axis >= 0) node_set_attr_i(m, "axis", axis);
    node_reinfer(m);
    return 1;
}

/* Gather/Slice n of mul's output, mul = Mul(Cast(q), s) or Mul(Sub(Cast(q), z), s) */
static int move_castmul(Graph *g, Node *n, Node *mul)
{
    const int r = n->in[0]->rank;
    char picked[MAX_RANK];
    int gaxis;
    if (!picked_axes(n, picked, &gaxis)) return 0;
    for (int i = 0; i < 2; i++) {
        Node *cast, *sub;
        Tensor *q, *z, *s;
        if (!pat_cast_scaled(mul, i, &cast, &sub, &q, &z, &s)) continue;
        if (!q->data || !int_source(q->dtype) || q->rank != r || !operand_uniform(s, r, picked, gaxis) ||
            (z && !operand_uniform(z, r, picked, gaxis)))
            continue;
        Tensor *y = n->out[0], *qp = pick_integers(g, n, q);
        Node *at = n;
        Tensor *f = graph_new_tensor(g, "picked_float");
        Node *m = add_after(g, &at, n, "Cast", &qp, 1, f);
        node_set_attr_i(m, "to", DT_FLOAT);
        node_add_origins(m, cast);
        node_reinfer(m);
        if (z) {
            Tensor *in[2] = {f, z}, *d = graph_new_tensor(g, "picked_centered");
            m = add_after(g, &at, n, "Sub", in, 2, d);
            node_add_origins(m, sub);
            node_reinfer(m);
            f = d;
        }
        Tensor *in[2];
        in[i] = f;
        in[1 - i] = s;
        m = add_after(g, &at, n, "Mul", in, 2, y);
        node_add_origins(m, mul);
        node_reinfer(m);
        return 1;
    }
    return 0;
}

int pass_gather_dequant(Graph *g)
{
    int changes = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        if ((!pat_is(n, "Gather") && !pat_is(n, "Slice")) || n->nout < 1 || !n->out[0]) continue;
        Tensor *x = n->in[0];
        if (x->dtype != DT_FLOAT || x->data || x->rank < 1 || n->out[0]->rank < 0) continue;
        Node *d = pat_prod(x, "DequantizeLinear"), *mul = pat_prod(x, "Mul");
        int done = d ? move_dequantize(g, n, d) : mul ? move_castmul(g, n, mul) : 0;
        if (!done) continue;
        note("gather_dequant: %s '%s' reads the %s constant, dequantized after it", n->op_type, n->name,
             dtype_name(n->in[0]->dtype));
        changes++;
    }
    return changes;
}
