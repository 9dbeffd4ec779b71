/* Indexing and more normalizations: GatherElements, GatherND,
 * ScatterElements (and the older Scatter), ScatterND, TensorScatter, TopK,
 * RMSNormalization, LpNormalization, MeanVarianceNormalization, LRN, Einsum
 * (kernels in runtime/c/index.h).
 *
 * Index inputs may be runtime tensors. The kernels wrap a negative index
 * once (idx + dim) and never address memory with an index that is still
 * out of range: gathers produce zero bytes for it, scatters skip that
 * update. Constant indices are checked here and refused when out of range.
 * Scatters are a copy of the data into the output followed by a kernel
 * whose indices own disjoint sets of output elements (see index.h). */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/index.h"
#include "../../runtime/c/params/extra.h"

static void contig_strides(int rank, const int64_t *dims, int64_t *s)
{
    int64_t m = 1;
    for (int d = rank - 1; d >= 0; d--) {
        s[d] = m;
        m *= dims[d];
    }
}

static int64_t prod(const int64_t *d, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++) p *= d[i];
    return p;
}

/* The call of a gather or scatter kernel reading a and b into y, with the
 * element sizes of the data x and the indices idx (nd: the slots of
 * GatherND and ScatterND, else those of the *Elements ops). */
static KCall *index_call(Lowering *L, const char *kernel, int64_t count, Tensor *a, Tensor *b, Tensor *y,
                         const Tensor *x, const Tensor *idx, int nd)
{
    KCall *c = lower_call(L, kernel, count);
    c->x[0] = a;
    c->x[1] = b;
    c->y[0] = y;
    c->k[nd ? O2C_ND_ESIZE : O2C_ELEMENTS_ESIZE] = (int64_t)dtype_size(x->dtype);
    c->k[nd ? O2C_ND_IESIZE : O2C_ELEMENTS_IESIZE] = (int64_t)dtype_size(idx->dtype);
    return c;
}

static int same_shape(const Tensor *a, const Tensor *b)
{
    if (a->rank != b->rank) return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

/* Constant indices: every value (seen as tuples of m, value j of a tuple
 * indexing an axis of size lim[j]) must be in [-lim, lim). */
static void check_const_indices(Tensor *idx, int m, const int64_t *lim, const char *what)
{
    if (!idx->data) return;
    int64_t ne = tensor_numel(idx);
    for (int64_t i = 0; i < ne; i++) {
        int64_t v = elem_i64(idx->dtype, idx->data, i), n = lim[i % m];
        if (v < -n || v >= n)
            fail("index %lld (element %lld of '%s') is out of range for %s of size %lld", (long long)v,
                 (long long)i, idx->name, what, (long long)n);
    }
}

/* ---- GatherElements ----------------------------------------------------- */

static int64_t ge_axis(Node *n)
{
    Tensor *x = n->in[0];
    if (x->rank == 0) fail("cannot index a scalar");
    return norm_axis(n, attr_i(n, "axis"), x->rank);
}

/* indices (and updates) must have the data's rank and fit inside it on
 * every axis but the indexed one */
static void check_elements_shape(Node *n, Tensor *x, Tensor *idx, int64_t axis)
{
    if (idx->rank != x->rank)
        fail("indices '%s' (%s) must have the rank of the data (%s)", idx->name, tensor_shape_str(idx),
             tensor_shape_str(x));
    for (int d = 0; d < x->rank; d++)
        if (d != axis && idx->dims[d] > x->dims[d])
            fail("indices '%s' (%s) are larger than the data (%s) on axis %d", idx->name, tensor_shape_str(idx),
                 tensor_shape_str(x), d);
    (void)n;
}

void infer_gather_elements(Node *n)
{
    Tensor *x = n->in[0], *idx = n->in[1];
    need_dtype(n, idx, DTS_INDEX);
    if (!dtype_size(x->dtype)) fail("data type %s is not supported", dtype_name(x->dtype));
    int64_t axis = ge_axis(n);
    check_elements_shape(n, x, idx, axis);
    check_const_indices(idx, 1, &x->dims[axis], "the gathered axis");
    set_out(n, 0, x->dtype, idx->rank, idx->dims);
}

void lower_gather_elements(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *idx = n->in[1], *y = n->out[0];
    int64_t axis = ge_axis(n), xs[MAX_RANK];
    if (tensor_numel(y) == 0) return;
    contig_strides(x->rank, x->dims, xs);
    KCall *c = index_call(L, "o2c_gather_elements", tensor_numel(y), x, idx, y, x, idx, 0);
    c->k[O2C_ELEMENTS_RANK] = x->rank;
    c->k[O2C_ELEMENTS_AXIS] = axis;
    for (int d = 0; d < x->rank; d++) {
        c->k[O2C_ELEMENTS_DIMS + d] = idx->dims[d];
        c->k[O2C_ELEMENTS_STR + d] = xs[d];
    }
    c->k[O2C_ELEMENTS_AXLEN] = x->dims[axis];
}

/* ---- GatherND ----------------------------------------------------------- */

/* returns m (the tuple length); *b the batch dims */
static int gnd_shape(Node *n, Tensor *x, Tensor *idx, int *bp)
{
    int64_t b = attr_i(n, "batch_dims");
    int r = x->rank, q = idx->rank;
    if (r < 1 || q < 1) fail("data and indices must have rank 1 or more (%s, %s)", tensor_shape_str(x),
                             tensor_shape_str(idx));
    if (b < 0 || b >= (q < r ? q : r))
        fail("batch_dims %lld must be less than the ranks of data (%d) and indices (%d)", (long long)b, r, q);
    for (int d = 0; d < b; d++)
        if (idx->dims[d] != x->dims[d])
            fail("the batch dims of indices (%s) and data (%s) differ", tensor_shape_str(idx), tensor_shape_str(x));
    int64_t m = idx->dims[q - 1];
    if (m < 1 || m > r - b)
        fail("the last dim of indices (%lld) must be between 1 and rank(data) - batch_dims = %lld", (long long)m,
             (long long)(r - b));
    *bp = (int)b;
    return (int)m;
}

void infer_gather_nd(Node *n)
{
    Tensor *x = n->in[0], *idx = n->in[1];
    need_dtype(n, idx, DTS_INDEX);
    if (!dtype_size(x->dtype)) fail("data type %s is not supported", dtype_name(x->dtype));
    int b, m = gnd_shape(n, x, idx, &b);
    int64_t d[2 * MAX_RANK];
    int rk = 0;
    for (int i = 0; i < idx->rank - 1; i++) d[rk++] = idx->dims[i];
    for (int i = b + m; i < x->rank; i++) d[rk++] = x->dims[i];
    if (rk > MAX_RANK) fail("the result would have rank %d; at most %d is supported", rk, MAX_RANK);
    check_const_indices(idx, m, x->dims + b, "an axis of the data");
    set_out(n, 0, x->dtype, rk, d);
}

void lower_gather_nd(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *idx = n->in[1], *y = n->out[0];
    int b, m = gnd_shape(n, x, idx, &b);
    if (tensor_numel(y) == 0) return;
    int64_t xs[MAX_RANK];
    contig_strides(x->rank, x->dims, xs);
    KCall *c = index_call(L, "o2c_gather_nd", tensor_numel(y), x, idx, y, x, idx, 1);
    c->k[O2C_ND_M] = m;
    c->k[O2C_ND_S] = prod(x->dims, b + m, x->rank);
    c->k[O2C_ND_NT] = prod(idx->dims, b, idx->rank - 1);
    c->k[O2C_ND_BATCH] = prod(x->dims, b, x->rank);
    for (int j = 0; j < m; j++) {
        c->k[O2C_ND_DIMS + j] = x->dims[b + j];
        c->k[O2C_ND_STR + j] = xs[b + j];
    }
}

/* ---- ScatterElements, Scatter, ScatterND ---------------------------------- */

/* reduction: 0 none, 1 add, 2 mul, 3 max, 4 min */
static int scatter_mode(Node *n)
{
    if (!strcmp(n->op_type, "Scatter")) return 0;
    const char *r = attr_s(n, "reduction");
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(r, names[i])) {
            if (i && n->in[0]->dtype == DT_BOOL) fail("reduction '%s' on bool data is not supported", r);
            return i;
        }
    fail("reduction '%s' is not one of none, add, mul, max, min", r);
}

static void scatter_common(Node *n)
{
    Tensor *x = n->in[0], *idx = n->in[1], *u = n->in[2];
    need_dtype(n, idx, DTS_INDEX);
    need_dtype(n, x, DTS_ALL);
    if (u->dtype != x->dtype)
        fail("updates ('%s') are %s, the data %s; they must match", u->name, dtype_name(u->dtype),
             dtype_name(x->dtype));
    (void)scatter_mode(n);
}

/* lowering of a scatter: y = copy of the data, then the kernel */
static KCall *scatter_call(Node *n, Lowering *L, const char *kind, int64_t count)
{
    Tensor *x = n->in[0], *idx = n->in[1], *u = n->in[2], *y = n->out[0];
    int mode = scatter_mode(n);
    lower_copy(L, x, y);
    if (count == 0) return NULL;
    const char *name = mode ? xfmt("o2c_scatter_%s_%s", kind, dtype_suffix(x->dtype)) : xfmt("o2c_scatter_%s", kind);
    return index_call(L, name, count, idx, u, y, x, idx, strcmp(kind, "elements") != 0);
}

void infer_scatter_elements(Node *n)
{
    Tensor *x = n->in[0], *idx = n->in[1], *u = n->in[2];
    scatter_common(n);
    int64_t axis = ge_axis(n);
    check_elements_shape(n, x, idx, axis);
    if (!same_shape(u, idx))
        fail("updates (%s) must have the shape of indices (%s)", tensor_shape_str(u), tensor_shape_str(idx));
    check_const_indices(idx, 1, &x->dims[axis], "the scattered axis");
    out_like(n, 0, x);
}

void lower_scatter_elements(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *idx = n->in[1];
    int64_t axis = ge_axis(n), ys[MAX_RANK];
    int64_t lines = idx->dims[axis] ? tensor_numel(idx) / idx->dims[axis] : 0;
    KCall *c = scatter_call(n, L, "elements", lines);
    if (!c) return;
    contig_strides(x->rank, x->dims, ys);
    c->k[O2C_ELEMENTS_RANK] = x->rank;
    c->k[O2C_ELEMENTS_AXIS] = axis;
    for (int d = 0; d < x->rank; d++) {
        c->k[O2C_ELEMENTS_DIMS + d] = idx->dims[d];
        c->k[O2C_ELEMENTS_STR + d] = ys[d];
    }
    c->k[O2C_ELEMENTS_AXLEN] = x->dims[axis];
    c->k[O2C_ELEMENTS_MODE] = scatter_mode(n);
}

static int snd_m(Node *n)
{
    Tensor *x = n->in[0], *idx = n->in[1];
    if (x->rank < 1 || idx->rank < 1)
        fail("data and indices must have rank 1 or more (%s, %s)", tensor_shape_str(x), tensor_shape_str(idx));
    int64_t m = idx->dims[idx->rank - 1];
    if (m < 1 || m > x->rank)
        fail("the last dim of indices (%lld) must be between 1 and the rank of the data (%d)", (long long)m, x->rank);
    return (int)m;
}

void infer_scatter_nd(Node *n)
{
    Tensor *x = n->in[0], *idx = n->in[1], *u = n->in[2];
    scatter_common(n);
    int m = snd_m(n);
    Tensor want;
    memset(&want, 0, sizeof want);
    int rk = 0;
    for (int i = 0; i < idx->rank - 1; i++) want.dims[rk++] = idx->dims[i];
    for (int i = m; i < x->rank; i++) {
        if (rk == MAX_RANK) fail("updates would need rank %d; at most %d is supported", rk + 1, MAX_RANK);
        want.dims[rk++] = x->dims[i];
    }
    want.rank = rk;
    if (!same_shape(u, &want))
        fail("updates have shape %s; indices %s and data %s need %s", tensor_shape_str(u), tensor_shape_str(idx),
             tensor_shape_str(x), tensor_shape_str(&want));
    check_const_indices(idx, m, x->dims, "an axis of the data");
    out_like(n, 0, x);
}

void lower_scatter_nd(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *idx = n->in[1];
    int m = snd_m(n);
    int64_t S = prod(x->dims, m, x->rank), NT = prod(idx->dims, 0, idx->rank - 1), ys[MAX_RANK];
    KCall *c = scatter_call(n, L, "nd", NT ? S : 0);
    if (!c) return;
    contig_strides(x->rank, x->dims, ys);
    c->k[O2C_ND_M] = m;
    c->k[O2C_ND_S] = S;
    c->k[O2C_ND_NT] = NT;
    c->k[O2C_ND_MODE] = scatter_mode(n);
    for (int j = 0; j < m; j++) {
        c->k[O2C_ND_DIMS + j] = x->dims[j];
        c->k[O2C_ND_STR + j] = ys[j];
    }
}

/* ---- TensorScatter (opset 24) ---------------------------------------------- */

static int64_t ts_axis(Node *n)
{
    Tensor *x = n->in[0];
    if (x->rank < 2) fail("past_cache must have rank 2 or more, it is %s", tensor_shape_str(x));
    int64_t axis = norm_axis(n, attr_i(n, "axis"), x->rank);
    if (axis == 0) fail("axis must not be the batch axis 0");
    return axis;
}

static int ts_mode(Node *n)
{
    const char *m = attr_s(n, "mode");
    if (!strcmp(m, "linear")) return 0;
    if (!strcmp(m, "circular")) return 1;
    fail("mode '%s' is not one of linear, circular", m);
}

void infer_tensor_scatter(Node *n)
{
    Tensor *x = n->in[0], *u = n->in[1], *w = in_t(n, 2);
    need_dtype(n, x, DTS_ALL);
    if (u->dtype != x->dtype) fail("update must have past_cache's data type %s", dtype_name(x->dtype));
    int64_t axis = ts_axis(n);
    (void)ts_mode(n);
    int ok = u->rank == x->rank;
    for (int d = 0; ok && d < x->rank; d++)
        if (d == axis ? u->dims[d] > x->dims[d] : u->dims[d] != x->dims[d]) ok = 0;
    if (!ok)
        fail("update (%s) must match past_cache (%s) except along axis %lld, where it may be shorter",
             tensor_shape_str(u), tensor_shape_str(x), (long long)axis);
    if (w) {
        if (w->dtype != DT_INT64) fail("write_indices must be int64, it is %s", dtype_name(w->dtype));
        if (w->rank != 1 || w->dims[0] != x->dims[0])
            fail("write_indices (%s) must hold one index per batch (%lld)", tensor_shape_str(w), (long long)x->dims[0]);
    }
    out_like(n, 0, x);
}

void lower_tensor_scatter(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *u = n->in[1], *y = n->out[0];
    int64_t axis = ts_axis(n);
    lower_copy(L, x, y);
    if (tensor_numel(u) == 0) return;
    KCall *c = lower_call(L, "o2c_tensor_scatter", tensor_numel(u));
    c->x[0] = u;
    c->x[1] = in_t(n, 2);
    c->y[0] = y;
    c->k[O2C_TSCATTER_ESIZE] = (int64_t)dtype_size(x->dtype);
    c->k[O2C_TSCATTER_MODE] = ts_mode(n);
    c->k[O2C_TSCATTER_LEN] = u->dims[axis];
    c->k[O2C_TSCATTER_INNER] = prod(u->dims, (int)axis + 1, u->rank);
    c->k[O2C_TSCATTER_MAX] = x->dims[axis];
    c->k[O2C_TSCATTER_PER] = prod(u->dims, 1, u->rank);
}

/* ---- TopK ---------------------------------------------------------------- */

/* K is a constant input (opset 10+) or the attribute k. A K computed at run
 * time is refused: the output shape depends on it. */
static int64_t topk_k(Node *n, int64_t *axis)
{
    Tensor *x = n->in[0];
    if (x->rank == 0) fail("cannot take the top k of a scalar");
    *axis = norm_axis(n, attr_i(n, "axis"), x->rank);
    int64_t k = -1;
    Tensor *kt = in_t(n, 1);
    if (kt) {
        if (tensor_numel(kt) != 1) fail("K ('%s') must hold one value, it has shape %s", kt->name, tensor_shape_str(kt));
        if (!need_const_or_dyn(n, kt, "K")) return x->dims[*axis];   /* a run-time K: at most the axis */
        int64_t v[1];
        const_ints(n, kt, v, 1);
        k = v[0];
    } else {
        if (!attr_has(n, "k")) fail("K is missing (the input, or the attribute k before opset 10)");
        k = attr_i(n, "k");
    }
    if (k < 0 || k > x->dims[*axis])
        fail("K = %lld is out of range for axis %lld of %s", (long long)k, (long long)*axis, tensor_shape_str(x));
    return k;
}

void infer_topk(Node *n)
{
    Tensor *x = n->in[0];
    need_dtype(n, x, DTS_NUM);
    int64_t axis, k = topk_k(n, &axis), d[MAX_RANK];
    memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
    d[axis] = k;
    set_out(n, 0, x->dtype, x->rank, d);
    set_out(n, 1, DT_INT64, x->rank, d);
}

void lower_topk(Node *n, Lowering *L)
{
    Tensor *x = n->in[0];
    int64_t axis, k = topk_k(n, &axis), d[MAX_RANK];
    int64_t outer = prod(x->dims, 0, (int)axis), inner = prod(x->dims, (int)axis + 1, x->rank);
    if (k == 0 || outer * inner == 0) return;
    memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
    d[axis] = k;
    Tensor *v = n->out[0], *ix = n->nout > 1 ? n->out[1] : NULL, *kt = in_t(n, 1), *cnt = NULL;
    if (kt && !kt->data) {   /* K at run time: checked, then the rows written densely */
        if (kt->dtype != DT_INT64) fail("K ('%s') must be int64", kt->name);
        KCall *s = lower_call(L, "o2c_dyn_size", 1);
        s->x[0] = kt;
        s->y[0] = lower_temp(L, DT_BOOL, 0, NULL);
        s->y[1] = cnt = lower_dyn_output(L, v, (int)axis, NULL);
        lower_dyn_output(L, ix, (int)axis, cnt);
        s->k[O2C_DYNSIZE_MAX] = x->dims[axis];
        lower_ctl(L, CTL_FAIL, s->y[0]);
    }
    if (!v) v = lower_temp(L, x->dtype, x->rank, d);
    if (!ix) ix = lower_temp(L, DT_INT64, x->rank, d);
    KCall *c = lower_call(L, xfmt("o2c_topk_%s", dtype_suffix(x->dtype)), outer * inner);
    c->x[0] = x;
    c->x[1] = cnt;
    c->y[0] = v;
    c->y[1] = ix;
    c->k[O2C_TOPK_A] = x->dims[axis];
    c->k[O2C_TOPK_INNER] = inner;
    c->k[O2C_TOPK_K] = k;
    c->k[O2C_TOPK_LARGEST] = n->opset >= 11 ? attr_i(n, "largest") != 0 : 1;
}

/* ---- RMSNormalization, LpNormalization, MeanVarianceNormalization --------- */

/* the normalized axes of the op: mask[d] = 1 */
static void norm_axes(Node *n, char *mask)
{
    Tensor *x = n->in[0];
    memset(mask, 0, MAX_RANK);
    if (!strcmp(n->op_type, "MeanVarianceNormalization")) {
        const int64_t *a;
        static const int64_t def[] = {0, 2, 3};
        int k = attr_ints(n, "axes", &a);
        if (!attr_has(n, "axes")) {
            a = def;
            k = 3;
        }
        for (int i = 0; i < k; i++) {
            int64_t d = norm_axis(n, a[i], x->rank);
            if (mask[d]) fail("axis %lld appears twice in axes", (long long)a[i]);
            mask[d] = 1;
        }
    } else if (!strcmp(n->op_type, "LpNormalization")) {
        if (x->rank == 0) fail("cannot normalize a scalar");
        mask[norm_axis(n, attr_i(n, "axis"), x->rank)] = 1;
    } else {
        if (x->rank == 0) fail("cannot normalize a scalar");
        for (int d = (int)norm_axis(n, attr_i(n, "axis"), x->rank); d < x->rank; d++) mask[d] = 1;
    }
}

void infer_mvn(Node *n)
{
    char mask[MAX_RANK];
    need_dtype(n, n->in[0], DTS_FLOAT);
    norm_axes(n, mask);
    out_like(n, 0, n->in[0]);
}

void infer_lpnorm(Node *n)
{
    char mask[MAX_RANK];
    need_dtype(n, n->in[0], DTS_FLOAT);
    norm_axes(n, mask);
    int64_t p = attr_i(n, "p");
    if (p != 1 && p != 2) fail("p = %lld; LpNormalization supports p = 1 and p = 2", (long long)p);
    out_like(n, 0, n->in[0]);
}

void infer_rmsnorm(Node *n)
{
    Tensor *x = n->in[0], *s = n->in[1];
    char mask[MAX_RANK];
    need_dtype(n, x, DTS_FLOAT);
    norm_axes(n, mask);
    int64_t st = attr_i(n, "stash_type");
    if (st != DT_FLOAT && st != DT_DOUBLE)
        fail("stash_type %lld is not supported (onnx2c supports 1 (float) and 11 (double); it computes the "
             "statistics in double)", (long long)st);
    if (s->dtype != x->dtype) fail("scale must have X's data type %s", dtype_name(x->dtype));
    int axis = (int)norm_axis(n, attr_i(n, "axis"), x->rank), nr = x->rank - axis;
    int ok = s->rank <= nr;
    for (int d = 0; ok && d < s->rank; d++) {
        int64_t sd = s->dims[d], xd = x->dims[axis + nr - s->rank + d];
        if (sd != xd && sd != 1) ok = 0;
    }
    if (!ok)
        fail("scale ('%s', %s) does not broadcast to the normalized shape (the dims of X from axis %d on, X is %s)",
             s->name, tensor_shape_str(s), axis, tensor_shape_str(x));
    out_like(n, 0, x);
}

/* Appends an axis to a (dims, strides...) list, merging it into the last
 * one when both stride sets continue it. */
static int push_axis(int r, int64_t *dims, int64_t *s1, int64_t *s2, int64_t d, int64_t a1, int64_t a2)
{
    if (d == 1) return r;
    if (r > 0 && s1[r - 1] == a1 * d && s2[r - 1] == a2 * d) {
        dims[r - 1] *= d;
        s1[r - 1] = a1;
        s2[r - 1] = a2;
        return r;
    }
    dims[r] = d;
    s1[r] = a1;
    s2[r] = a2;
    return r + 1;
}

void lower_normgroup(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0], *s = NULL;
    char mask[MAX_RANK];
    norm_axes(n, mask);
    if (tensor_numel(x) == 0) return;
    int mode;
    double eps = 0;
    if (!strcmp(n->op_type, "MeanVarianceNormalization")) {
        mode = 0;
        eps = 1e-9;
    } else if (!strcmp(n->op_type, "LpNormalization")) {
        mode = (int)attr_i(n, "p");
    } else {
        mode = 3;
        s = n->in[1];
        eps = attr_f(n, "epsilon");
    }
    int64_t xs[MAX_RANK], ss[MAX_RANK] = {0}, zero[MAX_RANK] = {0};
    contig_strides(x->rank, x->dims, xs);
    int axis0 = 0;
    while (axis0 < x->rank && !mask[axis0]) axis0++;
    if (s) {
        /* scale strides over X's axes (normalized ones are axis0..rank) */
        bcast_strides(s, x->rank - axis0, ss + axis0);
    }
    int64_t od[MAX_RANK], os[MAX_RANK], oz[MAX_RANK], id[MAX_RANK], is[MAX_RANK], isc[MAX_RANK];
    int ro = 0, ri = 0;
    int64_t groups = 1, N = 1;
    for (int d = 0; d < x->rank; d++) {
        if (mask[d]) {
            ri = push_axis(ri, id, is, isc, x->dims[d], xs[d], ss[d]);
            N *= x->dims[d];
        } else {
            ro = push_axis(ro, od, os, oz, x->dims[d], xs[d], zero[d]);
            groups *= x->dims[d];
        }
    }
    KCall *c = lower_call(L, xfmt("o2c_normgroup_%s", dtype_suffix(x->dtype)), groups);
    c->x[0] = x;
    c->x[1] = s;
    c->y[0] = y;
    c->k[O2C_NORMGROUP_MODE] = mode;
    c->k[O2C_NORMGROUP_RO] = ro;
    c->k[O2C_NORMGROUP_RI] = ri;
    c->k[O2C_NORMGROUP_N] = N;
    for (int d = 0; d < ro; d++) {
        c->k[O2C_NORMGROUP_ODIMS + d] = od[d];
        c->k[O2C_NORMGROUP_OSTR + d] = os[d];
    }
    for (int d = 0; d < ri; d++) {
        c->k[O2C_NORMGROUP_IDIMS + d] = id[d];
        c->k[O2C_NORMGROUP_ISTR + d] = is[d];
        c->k[O2C_NORMGROUP_SSTR + d] = isc[d];
    }
    c->f[O2C_NORMGROUP_F_EPS] = eps;
}

/* ---- LRN ------------------------------------------------------------------ */

void infer_lrn(Node *n)
{
    Tensor *x = n->in[0];
    need_dtype(n, x, DTS_FLOAT);
    if (x->rank < 2) fail("X must have rank 2 or more (N x C x ...), it is %s", tensor_shape_str(x));
    if (!attr_has(n, "size")) fail("the required attribute 'size' is missing");
    if (attr_i(n, "size") < 1) fail("size is %lld; it must be positive", (long long)attr_i(n, "size"));
    out_like(n, 0, x);
}

void lower_lrn(Node *n, Lowering *L)
{
    Tensor *x = n->in[0];
    if (tensor_numel(x) == 0) return;
    KCall *c = lower_call(L, xfmt("o2c_lrn_%s", dtype_suffix(x->dtype)), tensor_numel(x));
    c->x[0] = x;
    c->y[0] = n->out[0];
    c->k[O2C_LRN_C] = x->dims[1];
    c->k[O2C_LRN_INNER] = prod(x->dims, 2, x->rank);
    c->k[O2C_LRN_SIZE] = attr_i(n, "size");
    c->f[O2C_LRN_F_ALPHA] = attr_f(n, "alpha");
    c->f[O2C_LRN_F_BETA] = attr_f(n, "beta");
    c->f[O2C_LRN_F_BIAS] = attr_f(n, "bias");
}

/* ---- Einsum ---------------------------------------------------------------- */

/* Labels: letters are their character code, the axes covered by "..." are
 * 256 + j (j-th of the E broadcast axes, right-aligned). */
#define EIN_MAXL 16

typedef struct {
    int nin;
    int nl;                        /* distinct labels */
    int label[EIN_MAXL];
    int64_t dim[EIN_MAXL];
    int no, out[EIN_MAXL];         /* output labels (indices into label[]) */
    int ns, sum[EIN_MAXL];         /* summed labels */
    int64_t stride[4][EIN_MAXL];   /* per operand and label */
} Einsum;

static int ein_label(Einsum *e, int code)
{
    for (int i = 0; i < e->nl; i++)
        if (e->label[i] == code) return i;
    if (e->nl == EIN_MAXL) fail("the equation uses more than %d labels; onnx2c supports at most %d", EIN_MAXL, EIN_MAXL);
    e->label[e->nl] = code;
    e->dim[e->nl] = 1;
    return e->nl++;
}

static int is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static void einsum_parse(Node *n, Einsum *e)
{
    if (!attr_has(n, "equation")) fail("the required attribute 'equation' is missing");
    const char *eq0 = attr_s(n, "equation");
    /* without blanks */
    char eq[512];
    size_t len = 0;
    for (const char *p = eq0; *p; p++) {
        if (*p == ' ' || *p == '\t' || *p == '\n') continue;
        if (len + 1 >= sizeof eq) fail("the equation is too long");
        eq[len++] = *p;
    }
    eq[len] = 0;
    memset(e, 0, sizeof *e);
    e->nin = n->nin;
    if (n->nin > 4) fail("%d operands; onnx2c's Einsum supports at most 4", n->nin);
    char *arrow = strstr(eq, "->");
    char *rhs = NULL;
    if (arrow) {
        *arrow = 0;
        rhs = arrow + 2;
        if (strstr(rhs, "->")) fail("equation '%s' has two '->'", eq0);
    }
    /* the operand terms */
    char *terms[64];
    int nt = 0;
    for (char *p = eq;;) {
        char *comma = strchr(p, ',');
        if (nt == 64) fail("too many terms in equation '%s'", eq0);
        terms[nt++] = p;
        if (!comma) break;
        *comma = 0;
        p = comma + 1;
    }
    if (nt != n->nin) fail("equation '%s' has %d operand terms for %d inputs", eq0, nt, n->nin);
    int E = 0, ell_rank[4] = {0, 0, 0, 0}, count[EIN_MAXL] = {0}, has_ell = 0;
    /* first pass: ellipsis ranks */
    for (int t = 0; t < nt; t++) {
        Tensor *x = need_in(n, t);
        int letters = 0, dots = 0;
        for (const char *p = terms[t]; *p; p++) {
            if (is_letter(*p)) letters++;
            else if (p[0] == '.' && p[1] == '.' && p[2] == '.') { dots++; p += 2; }
            else fail("equation '%s': unexpected character '%c'", eq0, *p);
        }
        if (dots > 1) fail("equation '%s': term %d has more than one '...'", eq0, t);
        if (dots) {
            has_ell = 1;
            ell_rank[t] = x->rank - letters;
            if (ell_rank[t] < 0) fail("equation '%s': term %d has %d labels, input '%s' has rank %d", eq0, t, letters,
                                      x->name, x->rank);
            if (ell_rank[t] > E) E = ell_rank[t];
        } else if (letters != x->rank) {
            fail("equation '%s': term %d has %d labels, input '%s' has rank %d", eq0, t, letters, x->name, x->rank);
        }
    }
    /* the ellipsis labels first, so that they lead the implicit output */
    for (int j = 0; j < E; j++) ein_label(e, 256 + j);
    /* second pass: labels, dims, strides */
    for (int t = 0; t < nt; t++) {
        Tensor *x = n->in[t];
        int64_t xs[MAX_RANK];
        contig_strides(x->rank, x->dims, xs);
        int ax = 0;
        for (const char *p = terms[t]; *p; p++) {
            int ls[MAX_RANK], nls = 0;
            if (*p == '.') {
                for (int j = 0; j < ell_rank[t]; j++) ls[nls++] = ein_label(e, 256 + E - ell_rank[t] + j);
                p += 2;
            } else {
                ls[nls++] = ein_label(e, (unsigned char)*p);
                count[ls[0]]++;
            }
            for (int j = 0; j < nls; j++, ax++) {
                int l = ls[j];
                int64_t d = x->dims[ax];
                if (d != 1) {
                    if (e->dim[l] != 1 && e->dim[l] != d)
                        fail("equation '%s': label '%s' has sizes %lld and %lld", eq0,
                             e->label[l] >= 256 ? "..." : xfmt("%c", e->label[l]), (long long)e->dim[l], (long long)d);
                    e->dim[l] = d;
                    e->stride[t][l] += xs[ax];
                }
            }
        }
    }
    /* a label of size > 1 reached through a size-1 axis of some operand
     * broadcasts there: its stride stays 0 for that axis, which is right */
    char in_out[EIN_MAXL] = {0};
    if (rhs) {
        int dots = 0;
        for (const char *p = rhs; *p; p++) {
            if (p[0] == '.' && p[1] == '.' && p[2] == '.') {
                if (dots++) fail("equation '%s': the output has more than one '...'", eq0);
                for (int j = 0; j < E; j++) {
                    int l = ein_label(e, 256 + j);
                    in_out[l] = 1;
                    e->out[e->no++] = l;
                }
                p += 2;
                continue;
            }
            if (!is_letter(*p)) fail("equation '%s': unexpected character '%c' in the output", eq0, *p);
            int l = -1;
            for (int i = 0; i < e->nl; i++)
                if (e->label[i] == (unsigned char)*p) l = i;
            if (l < 0) fail("equation '%s': output label '%c' appears in no input", eq0, *p);
            if (in_out[l]) fail("equation '%s': output label '%c' appears twice", eq0, *p);
            in_out[l] = 1;
            e->out[e->no++] = l;
        }
        if (!dots && E > 0)
            fail("equation '%s': the inputs have '...' axes but the output does not name them", eq0);
    } else {
        for (int j = 0; j < E; j++) {
            in_out[j] = 1;
            e->out[e->no++] = j;
        }
        /* letters used once, in alphabetical (ASCII) order */
        for (int c = 0; c < 256; c++)
            for (int i = 0; i < e->nl; i++)
                if (e->label[i] == c && count[i] == 1) {
                    in_out[i] = 1;
                    e->out[e->no++] = i;
                }
    }
    (void)has_ell;
    for (int i = 0; i < e->nl; i++)
        if (!in_out[i]) e->sum[e->ns++] = i;
    if (e->no > MAX_RANK) fail("the result would have rank %d; at most %d is supported", e->no, MAX_RANK);
    if (O2C_EINSUM_NK(e->nl, e->nin) > O2C_NK)
        fail("equation '%s' with %d labels and %d operands is too large for onnx2c's Einsum kernel", eq0, e->nl,
             e->nin);
}

void infer_einsum(Node *n)
{
    static const int types[] = {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, 0};
    Tensor *x = need_in(n, 0);
    need_dtype(n, x, types);
    for (int t = 1; t < n->nin; t++)
        if (need_in(n, t)->dtype != x->dtype) fail("all inputs must have the same data type");
    Einsum e;
    einsum_parse(n, &e);
    int64_t d[MAX_RANK];
    for (int i = 0; i < e.no; i++) d[i] = e.dim[e.out[i]];
    set_out(n, 0, x->dtype, e.no, d);
}

void lower_einsum(Node *n, Lowering *L)
{
    Tensor *y = n->out[0];
    Einsum e;
    einsum_parse(n, &e);
    if (tensor_numel(y) == 0) return;
    KCall *c = lower_call(L, xfmt("o2c_einsum_%s", dtype_suffix(y->dtype)), tensor_numel(y));
    for (int t = 0; t < e.nin; t++) c->x[t] = n->in[t];
    c->y[0] = y;
    int nl = e.no + e.ns;
    c->k[O2C_EINSUM_NIN] = e.nin;
    c->k[O2C_EINSUM_NO] = e.no;
    c->k[O2C_EINSUM_NS] = e.ns;
    for (int i = 0; i < e.no; i++) c->k[O2C_EINSUM_DIMS + i] = e.dim[e.out[i]];
    for (int i = 0; i < e.ns; i++) c->k[O2C_EINSUM_DIMS + e.no + i] = e.dim[e.sum[i]];
    for (int t = 0; t < e.nin; t++) {
        int64_t *st = c->k + O2C_EINSUM_STR_AT(nl, t);
        for (int i = 0; i < e.no; i++) st[i] = e.stride[t][e.out[i]];
        for (int i = 0; i < e.ns; i++) st[e.no + i] = e.stride[t][e.sum[i]];
    }
}
