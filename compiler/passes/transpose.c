/* Pass transpose: fewer and cheaper transposes.
 *
 *   Transpose(Transpose(x, p1), p2)   -> Transpose(x, p1 o p2), removed when
 *                                        that is the identity
 *   Transpose moving only size-1 axes -> Reshape (a view, no copy)
 *   Gemm(Transpose(A), B)             -> Gemm(A, B, transA ^= 1) (likewise B)
 *   MatMul(Transpose(A), B), 2-D      -> Gemm with transA / transB
 *   U(Transpose(x, p))                -> Transpose(U(x), p) for elementwise U
 *                                        (unary; binary when the other operand
 *                                        is a scalar, a constant (transposed
 *                                        back) or a Transpose by the same p):
 *                                        transposes move down until they meet
 *                                        their inverse, as in the NHWC <-> NCHW
 *                                        pairs TensorFlow converters write
 *                                        around convolutions.
 * A transpose moves down only when its output has one reader, so no work is
 * duplicated. Transposes of constants are left to fold (it folds them when
 * that does not add bytes). */
#include <string.h>

#include "../ir.h"

void lower_unary(Node *n, Lowering *L);    /* ops.c: the UNARY / BINARY / COMPARE lines */
void lower_binary(Node *n, Lowering *L);

static int is_op(const Node *n, const char *op) { return !n->domain[0] && !strcmp(n->op_type, op); }

static void get_perm(const Node *n, int64_t *p)
{
    int r = n->in[0]->rank;
    const int64_t *a;
    if (attr_has(n, "perm") && attr_ints(n, "perm", &a) == r) {
        for (int i = 0; i < r; i++) p[i] = a[i] < 0 ? a[i] + r : a[i];
    } else {
        for (int i = 0; i < r; i++) p[i] = r - 1 - i;
    }
}

static int is_identity(const int64_t *p, int r)
{
    for (int i = 0; i < r; i++)
        if (p[i] != i) return 0;
    return 1;
}

/* the Transpose producing t (read by nobody else when `alone`), or NULL */
static Node *transposed(Graph *g, Tensor *t, int alone)
{
    if (!t || !t->producer || !is_op(t->producer, "Transpose")) return NULL;
    if (graph_node_index(g, t->producer) < 0) return NULL;
    if (alone && !tensor_single_use(g, t)) return NULL;
    return t->producer;
}

/* Transpose(Transpose(x, p1), p2) -> Transpose(x, p1 o p2) */
static int compose(Graph *g, Node *n)
{
    Node *t = transposed(g, n->in[0], 0);
    if (!t) return 0;
    int r = n->in[0]->rank;
    int64_t p1[MAX_RANK], p2[MAX_RANK], c[MAX_RANK];
    get_perm(t, p1);
    get_perm(n, p2);
    for (int i = 0; i < r; i++) c[i] = p1[p2[i]];
    Tensor *x = t->in[0];
    if (is_identity(c, r)) {
        node_set_input(g, n, 0, x);
        node_set_attr_ints(n, "perm", c, r);
        if (graph_bypass_node(g, n, 0)) {
            note("transpose: '%s' cancels '%s'", n->name, t->name);
            return 1;
        }
        return 1;     /* kept as an identity Transpose (a graph output copy) */
    }
    node_set_input(g, n, 0, x);
    node_set_attr_ints(n, "perm", c, r);
    node_add_origins(n, t);
    note("transpose: '%s' and '%s' composed", t->name, n->name);
    return 1;
}

/* a Transpose that keeps the order of the axes larger than 1 is a Reshape */
static int to_reshape(Graph *g, Node *n)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int64_t p[MAX_RANK], last = -1;
    get_perm(n, p);
    if (is_identity(p, x->rank) || tensor_numel(y) == 0) return 0;   /* the noop pass's; empty */
    for (int i = 0; i < x->rank; i++) {
        if (x->dims[p[i]] == 1) continue;
        if (p[i] < last) return 0;
        last = p[i];
    }
    int64_t len = y->rank;
    Tensor *shape = graph_new_const(g, xfmt("%s_shape", y->name), DT_INT64, 1, &len);
    memcpy(shape->data, y->dims, sizeof(int64_t) * (size_t)y->rank);
    Tensor *in[2] = {x, shape};
    int old = g->opset < 5;
    Node *r = graph_insert_node(g, n, "Reshape", "", in, old ? 1 : 2, &y, 1);
    if (old) node_set_attr_ints(r, "shape", y->dims, y->rank);
    node_add_origins(r, n);
    graph_remove_node(g, n);
    node_set_output(r, 0, y);
    node_reinfer(r);
    note("transpose: '%s' moves only size-1 axes: a Reshape", n->name);
    return 1;
}

static int is_swap2(Graph *g, Tensor *t, Node **tn)
{
    Node *n = transposed(g, t, 0);
    if (!n || n->in[0]->rank != 2) return 0;
    int64_t p[2];
    get_perm(n, p);
    if (p[0] != 1 || p[1] != 0) return 0;
    *tn = n;
    return 1;
}

/* Gemm(Transpose(A), ...) -> Gemm(A, ..., transA ^ 1), same for B */
static int into_gemm(Graph *g, Node *n)
{
    int k = 0;
    for (int j = 0; j < 2; j++) {
        Node *t;
        if (!is_swap2(g, n->in[j], &t)) continue;
        const char *a = j ? "transB" : "transA";
        node_set_attr_i(n, a, !attr_i(n, a));
        node_set_input(g, n, j, t->in[0]);
        node_add_origins(n, t);
        note("transpose: '%s' folded into Gemm '%s' (%s)", t->name, n->name, a);
        k++;
    }
    return k;
}

/* 2-D MatMul with a transposed operand -> Gemm */
static int matmul_gemm(Graph *g, Node *n)
{
    Tensor *a = n->in[0], *b = n->in[1], *y = n->out[0];
    if (a->rank != 2 || b->rank != 2 || (a->dtype != DT_FLOAT && a->dtype != DT_DOUBLE) || n->promoted) return 0;
    Node *ta = NULL, *tb = NULL;
    int sa = is_swap2(g, a, &ta), sb = is_swap2(g, b, &tb);
    if (!sa && !sb) return 0;
    Tensor *in[2] = {ta ? ta->in[0] : a, tb ? tb->in[0] : b};
    Node *m = graph_insert_node(g, n, "Gemm", "", in, 2, &y, 1);
    m->opset = g->opset;
    if (ta) node_set_attr_i(m, "transA", 1);
    if (tb) node_set_attr_i(m, "transB", 1);
    node_add_origins(m, n);
    if (ta) node_add_origins(m, ta);
    if (tb) node_add_origins(m, tb);
    graph_remove_node(g, n);
    node_set_output(m, 0, y);
    node_reinfer(m);
    note("transpose: MatMul '%s' with a transposed operand -> Gemm", n->name);
    return 1;
}

/* ---- moving transposes below elementwise ops ------------------------------ */

static int elementwise(const Node *n)
{
    return !n->domain[0] && n->nout == 1 && !n->promoted &&
           ((n->op->lower == lower_unary && n->nin == 1) || (n->op->lower == lower_binary && n->nin == 2));
}

/* constant c (broadcast against the transposed operand, rank <= r) seen
 * through the inverse of perm p: a new constant laid out like the
 * untransposed operand */
static Tensor *untranspose_const(Graph *g, Tensor *c, const int64_t *p, int r)
{
    if (c->rank > r) return NULL;
    if (tensor_numel(c) == 1 && c->rank == 0) return c;
    int64_t cd[MAX_RANK], d[MAX_RANK], cs[MAX_RANK], m = 1;
    for (int i = 0; i < r; i++) cd[i] = i < r - c->rank ? 1 : c->dims[i - (r - c->rank)];
    for (int i = r - 1; i >= 0; i--) { cs[i] = m; m *= cd[i]; }
    for (int i = 0; i < r; i++) d[p[i]] = cd[i];
    Tensor *u = graph_new_const(g, xfmt("%s_t", c->name), c->dtype, r, d);
    size_t es = dtype_size(c->dtype);
    int64_t n = tensor_numel(u);
    for (int64_t k = 0; k < n; k++) {
        int64_t q = k, src = 0, coord[MAX_RANK];
        for (int i = r - 1; i >= 0; i--) { coord[i] = q % d[i]; q /= d[i]; }
        for (int i = 0; i < r; i++) src += coord[p[i]] * cs[i];
        memcpy((char *)u->data + k * es, (const char *)c->data + src * es, es);
    }
    return u;
}

static int push_down(Graph *g, Node *n)
{
    if (!elementwise(n)) return 0;
    Tensor *y = n->out[0];
    Node *t0 = NULL;
    for (int j = 0; j < n->nin && !t0; j++) t0 = transposed(g, n->in[j], 1);
    if (!t0) return 0;
    int r = t0->in[0]->rank;
    if (y->rank != r) return 0;
    int64_t p[MAX_RANK];
    get_perm(t0, p);
    /* worth it only when the result goes to one reader that is a Transpose
     * or another elementwise op (the transpose keeps moving) */
    Node **rd;
    if (!tensor_single_use(g, y) || graph_readers(g, y, &rd) != 1) return 0;
    if (!is_op(rd[0], "Transpose") && !elementwise(rd[0])) return 0;
    Tensor *in[2];
    for (int j = 0; j < n->nin; j++) {
        Tensor *a = n->in[j];
        Node *t = transposed(g, a, 1);
        if (t) {
            int64_t q[MAX_RANK];
            if (t->in[0]->rank != r) return 0;
            get_perm(t, q);
            if (memcmp(p, q, sizeof(int64_t) * (size_t)r)) return 0;
            if (!(a->rank == r && y->rank == r)) return 0;
            for (int i = 0; i < r; i++) if (a->dims[i] != y->dims[i]) return 0;   /* no broadcasting */
            in[j] = t->in[0];
        } else if (a->data) {
            in[j] = untranspose_const(g, a, p, r);
            if (!in[j]) return 0;
        } else {
            return 0;
        }
    }
    Tensor *u = graph_new_tensor(g, xfmt("%s_untransposed", y->name));
    Node *m = graph_insert_node(g, n, n->op_type, "", in, n->nin, &u, 1);
    m->attrs = n->attrs;
    m->nattrs = n->nattrs;
    m->opset = n->opset;
    node_add_origins(m, n);
    node_reinfer(m);
    Node *t = graph_insert_node(g, n, "Transpose", "", &u, 1, &y, 1);
    node_set_attr_ints(t, "perm", p, r);
    t->opset = t0->opset;
    for (int j = 0; j < n->nin; j++) {
        Node *tj = transposed(g, n->in[j], 1);
        if (tj) node_add_origins(t, tj);
    }
    graph_remove_node(g, n);
    node_set_output(t, 0, y);
    node_reinfer(t);
    note("transpose: '%s' moved below %s '%s'", t0->name, n->op_type, n->name);
    return 1;
}

int pass_transpose(Graph *g)
{
    int changes = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        diag_node = n;
        int k = 0;
        if (is_op(n, "Transpose")) k = compose(g, n) || to_reshape(g, n);
        else if (is_op(n, "Gemm")) k = into_gemm(g, n);
        else if (is_op(n, "MatMul")) k = matmul_gemm(g, n);
        else k = push_down(g, n);
        if (k) {
            changes += k;
            i--;             /* what took n's place is looked at again */
        }
    }
    return changes;
}
