/* Pass noop: removes nodes that compute nothing, and turns contiguous
 * slices into views.
 *
 * Removed (the output is the input, same type and shape): Identity,
 * onnx2c::KeepShape (its shape rule checked what it had to),
 * Dropout (inference; its mask unread), Cast/CastLike to the input's own
 * type, Reshape/Flatten/Squeeze/Unsqueeze/Expand/Tile to the same shape,
 * Transpose with the identity permutation, Pad by zero everywhere, Slice
 * of everything, Concat of one input, Split into one part, and x*1, 1*x,
 * x+0, 0+x, x-0, x/1 when the constant does not broadcast the result to
 * a new shape or type. Readers of the output read the input instead; when
 * the output is a graph output, the input's producer takes over the output
 * tensor (so the output keeps its name), or the node stays if it cannot.
 *
 * Views: a Slice with step 1 along one axis, all axes before it of size 1,
 * is a contiguous run of its input's bytes: it becomes a SliceView (no
 * copy). A Split along such an axis becomes one SliceView per part. */
#include <string.h>

#include "../ir.h"

static int same_shape(const Tensor *a, const Tensor *b)
{
    if (a->rank != b->rank || a->dtype != b->dtype) return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return 0;
    return 1;
}

static int is_op(const Node *n, const char *op) { return !strcmp(n->op_type, op) && !n->domain[0]; }

/* An integer list from constant input `input` or attribute `attr`;
 * -1 when it is neither constant nor given. */
static int ints_of(Graph *g, Node *n, int input, const char *attr, int64_t *v, int max)
{
    (void)g;
    if (input < n->nin && n->in[input]) {
        Tensor *t = n->in[input];
        if (!t->data || !dtype_is_int(t->dtype) || tensor_numel(t) > max) return -1;
        for (int64_t i = 0; i < tensor_numel(t); i++) v[i] = elem_i64(t->dtype, t->data, i);
        return (int)tensor_numel(t);
    }
    if (!attr || !attr_has(n, attr)) return -1;
    const int64_t *a;
    int k = attr_ints(n, attr, &a);
    if (k > max) return -1;
    if (k) memcpy(v, a, sizeof(int64_t) * (size_t)k);
    return k;
}

/* x*1, x+0, ...: the index of the operand passed through, or -1 */
static int binary_passthrough(Node *n)
{
    double v;
    int mul = is_op(n, "Mul"), add = is_op(n, "Add"), sub = is_op(n, "Sub"), div = is_op(n, "Div");
    if (!(mul || add || sub || div) || n->nin != 2) return -1;
    double unit = mul || div ? 1.0 : 0.0;
    for (int j = 1; j >= 0; j--) {             /* the constant on the right first */
        if (j == 0 && (sub || div)) break;     /* 0 - x, 1 / x are not x */
        Tensor *c = n->in[j], *x = n->in[1 - j];
        if (!c->data || c->dtype != x->dtype || !tensor_const_splat(c, &v) || v != unit) continue;
        if (same_shape(x, n->out[0])) return 1 - j;
    }
    return -1;
}

static int pads_zero(Graph *g, Node *n)
{
    int64_t p[2 * MAX_RANK];
    int k = n->opset >= 11 ? ints_of(g, n, 1, NULL, p, 2 * MAX_RANK)
                           : ints_of(g, n, 99, n->opset < 2 && attr_has(n, "paddings") ? "paddings" : "pads", p,
                                     2 * MAX_RANK);
    if (k < 0) return 0;
    for (int i = 0; i < k; i++)
        if (p[i]) return 0;
    return 1;
}

static int identity_perm(Node *n)
{
    const int64_t *p;
    if (!attr_has(n, "perm")) return n->in[0]->rank <= 1;
    int k = attr_ints(n, "perm", &p);
    for (int i = 0; i < k; i++)
        if (p[i] != i) return 0;
    return 1;
}

/* The input a no-op node passes through, or -1 */
static int noop_input(Graph *g, Node *n)
{
    if (n->nin < 1 || !n->in[0] || n->nout < 1 || !n->out[0]) return -1;
    Tensor *x = n->in[0], *y = n->out[0];
    if (is_op(n, "Dropout")) {
        if (n->nout > 1 && n->out[1] && tensor_nuses(g, n->out[1]) > 0) return -1;
        return same_shape(x, y) ? 0 : -1;
    }
    if (n->nout != 1) return -1;
    static const char *const plain[] = {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Expand",
                                        "Tile", "Cast", "CastLike", "Split", NULL};
    for (int i = 0; plain[i]; i++)
        if (is_op(n, plain[i])) return same_shape(x, y) ? 0 : -1;
    if (!strcmp(n->op_type, "KeepShape") && !strcmp(n->domain, "onnx2c")) return same_shape(x, y) ? 0 : -1;   /* checked */
    if (is_op(n, "Concat")) return n->nin == 1 && same_shape(x, y) ? 0 : -1;
    if (is_op(n, "Transpose")) return identity_perm(n) && same_shape(x, y) ? 0 : -1;
    if (is_op(n, "Pad")) return pads_zero(g, n) && same_shape(x, y) ? 0 : -1;
    return binary_passthrough(n);
}

/* ---- contiguous slices -> SliceView ------------------------------------ */

static int contiguous_axis(const Tensor *x, int64_t axis)
{
    for (int d = 0; d < axis; d++)
        if (x->dims[d] != 1) return 0;
    return 1;
}

static Node *slice_view(Graph *g, Node *before, Tensor *x, Tensor *y, int64_t axis, int64_t b, int64_t e,
                        const Node *origin)
{
    Node *v = graph_insert_node(g, before, "SliceView", "onnx2c", &x, 1, &y, 1);
    node_set_attr_i(v, "axis", axis);
    node_set_attr_i(v, "start", b);
    node_set_attr_i(v, "end", e);
    node_add_origins(v, origin);
    node_reinfer(v);
    return v;
}

/* Slice with one sliced axis (step 1) after size-1 axes: a SliceView;
 * Slice of everything (positive steps): removed */
static int slice_to_view(Graph *g, Node *n)
{
    Tensor *x = n->in[0], *y = n->out[0];
    if (x->rank < 1 || y->dtype != x->dtype || y->rank != x->rank) return 0;
    int64_t st[MAX_RANK], en[MAX_RANK], ax[MAX_RANK], sp[MAX_RANK];
    int ns, ne, na, nsp;
    if (n->opset < 10 && n->nin == 1) {
        ns = ints_of(g, n, 99, "starts", st, MAX_RANK);
        ne = ints_of(g, n, 99, "ends", en, MAX_RANK);
        na = attr_has(n, "axes") ? ints_of(g, n, 99, "axes", ax, MAX_RANK) : -2;
        nsp = -2;
    } else {
        if (n->nin < 3) return 0;
        ns = ints_of(g, n, 1, NULL, st, MAX_RANK);
        ne = ints_of(g, n, 2, NULL, en, MAX_RANK);
        na = n->nin > 3 && n->in[3] ? ints_of(g, n, 3, NULL, ax, MAX_RANK) : -2;
        nsp = n->nin > 4 && n->in[4] ? ints_of(g, n, 4, NULL, sp, MAX_RANK) : -2;
    }
    if (ns < 0 || ne != ns || na == -1 || nsp == -1 || (na >= 0 && na != ns) || (nsp >= 0 && nsp != ns)) return 0;
    int64_t axis = -1, b = 0;
    for (int i = 0; i < ns; i++) {
        int64_t a = na >= 0 ? ax[i] : i;
        if (a < 0) a += x->rank;
        if (a < 0 || a >= x->rank) return 0;
        int64_t dim = x->dims[a], s = nsp >= 0 ? sp[i] : 1, bb = st[i], ee = en[i];
        if (bb < 0) bb += dim;
        if (ee < 0) ee += dim;
        bb = bb < 0 ? 0 : (bb > dim ? dim : bb);
        ee = ee < 0 ? 0 : (ee > dim ? dim : ee);
        if (ee < bb) ee = bb;
        if (bb == 0 && ee == dim && s > 0 && (s == 1 || dim <= 1)) continue;   /* the whole axis */
        if (s != 1 || axis >= 0) return 0;
        axis = a;
        b = bb;
    }
    if (axis < 0) return same_shape(x, y) ? graph_bypass_node(g, n, 0) : 0;    /* nothing sliced */
    if (y->dims[axis] == x->dims[axis] || !contiguous_axis(x, axis)) return 0;
    for (int d = 0; d < x->rank; d++)
        if (d != axis && y->dims[d] != x->dims[d]) return 0;
    note("noop: Slice '%s' -> SliceView [%lld, %lld) of axis %lld", n->name, (long long)b,
         (long long)(b + y->dims[axis]), (long long)axis);
    int at = graph_node_index(g, n);
    Node *anchor = at + 1 < g->nnodes ? g->nodes[at + 1] : NULL;
    Node origin = *n;
    graph_remove_node(g, n);
    slice_view(g, anchor, x, y, axis, b, b + y->dims[axis], &origin);
    return 1;
}

/* Split along an axis after size-1 axes: one SliceView per part */
static int split_to_views(Graph *g, Node *n)
{
    Tensor *x = n->in[0];
    if (x->rank < 1 || n->nout < 2) return 0;
    int64_t axis = attr_i(n, "axis");
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank || !contiguous_axis(x, axis)) return 0;
    for (int o = 0; o < n->nout; o++)
        if (!n->out[o] || n->out[o]->rank != x->rank) return 0;
    note("noop: Split '%s' -> %d SliceViews of axis %lld", n->name, n->nout, (long long)axis);
    Tensor *outs[64];
    int nout = n->nout;
    for (int o = 0; o < nout; o++) outs[o] = n->out[o];
    int at = graph_node_index(g, n);
    Node *anchor = at + 1 < g->nnodes ? g->nodes[at + 1] : NULL;
    Node origin = *n;
    graph_remove_node(g, n);
    int64_t pos = 0;
    for (int o = 0; o < nout; o++) {
        slice_view(g, anchor, x, outs[o], axis, pos, pos + outs[o]->dims[axis], &origin);
        pos += outs[o]->dims[axis];
    }
    return 1;
}

int pass_noop(Graph *g)
{
    int changes = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        if (n->domain[0]) continue;
        diag_node = n;
        int j = noop_input(g, n);
        if (j >= 0 && graph_bypass_node(g, n, j)) {
            changes++;
            i--;
            continue;
        }
        if (is_op(n, "Slice") && slice_to_view(g, n)) {
            changes++;
            i--;
        } else if (is_op(n, "Split") && split_to_views(g, n)) {
            changes++;
            i--;
        }
    }
    return changes;
}
