/* Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp
 * and ArgMax/ArgMin (kernels in runtime/c/reduce.h).
 *
 * Axes: an attribute before opset 18 (13 for ReduceSum), an optional
 * constant input since; both forms are accepted at any opset. An empty
 * axes list reduces everything, or nothing with noop_with_empty_axes=1. */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/reduce.h"

static int reduce_opcode(const char *op)
{
    static const struct { const char *name; int code; } T[] = {
        {"ReduceSum", O2C_RED_SUM}, {"ReduceMean", O2C_RED_MEAN}, {"ReduceMax", O2C_RED_MAX},
        {"ReduceMin", O2C_RED_MIN}, {"ReduceProd", O2C_RED_PROD}, {"ReduceL1", O2C_RED_L1},
        {"ReduceL2", O2C_RED_L2}, {"ReduceSumSquare", O2C_RED_SUMSQ}, {"ReduceLogSum", O2C_RED_LOGSUM},
        {"ReduceLogSumExp", O2C_RED_LOGSUMEXP}};
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
        if (!strcmp(T[i].name, op)) return T[i].code;
    fail("internal: %s is not a reduction", op);
}

/* Marks the reduced axes of input 0 in red[]; returns 0 when the op is a
 * no-op (empty axes with noop_with_empty_axes=1), 1 otherwise. */
static int reduce_axes(Node *n, char *red)
{
    Tensor *x = n->in[0], *ta = in_t(n, 1);
    int64_t axes[MAX_RANK * 2];
    int na = 0;
    if (ta) {
        int64_t ne = tensor_numel(ta);
        if (ta->rank != 1 && ne != 0) fail("axes ('%s') must be a 1-D tensor, it is %s", ta->name, tensor_shape_str(ta));
        if (ne > 0) {
            need_const(n, ta, "axes");
            if (ne > MAX_RANK * 2) fail("axes ('%s') has %lld values; the input has rank %d", ta->name, (long long)ne, x->rank);
            na = const_ints(n, ta, axes, MAX_RANK * 2);
        }
    } else {
        const int64_t *v;
        int k = attr_ints(n, "axes", &v);
        if (k > MAX_RANK * 2) fail("attribute axes has %d values; the input has rank %d", k, x->rank);
        for (int i = 0; i < k; i++) axes[i] = v[i];
        na = k;
    }
    memset(red, 0, MAX_RANK);
    if (na == 0) {
        if (attr_i(n, "noop_with_empty_axes")) return 0;
        for (int d = 0; d < x->rank; d++) red[d] = 1;
        return 1;
    }
    for (int i = 0; i < na; i++) {
        if (axes[i] < -x->rank || axes[i] >= x->rank)
            fail("axis %lld is out of range for an input of rank %d (%s)", (long long)axes[i], x->rank, tensor_shape_str(x));
        red[axes[i] < 0 ? axes[i] + x->rank : axes[i]] = 1;
    }
    return 1;
}

void infer_reduce(Node *n)
{
    Tensor *x = n->in[0];
    static const int DTS_MINMAX[] = {DT_FLOAT, DT_DOUBLE, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8,
                                     DT_UINT16, DT_UINT32, DT_UINT64, DT_BOOL, 0};
    int op = reduce_opcode(n->op_type);
    need_dtype(n, x, op == O2C_RED_MAX || op == O2C_RED_MIN ? DTS_MINMAX : DTS_NUM);
    char red[MAX_RANK];
    if (!reduce_axes(n, red)) { out_like(n, 0, x); return; }
    int64_t dims[MAX_RANK];
    int r = 0, keep = (int)attr_i(n, "keepdims");
    for (int d = 0; d < x->rank; d++) {
        if (!red[d]) dims[r++] = x->dims[d];
        else if (keep) dims[r++] = 1;
    }
    set_out(n, 0, x->dtype, r, dims);
}

/* Kept and reduced dims of x, size-1 dims dropped and neighbours of the
 * same kind merged (runtime/c/params/reduce.h). */
static void reduce_params(KCall *c, const Tensor *x, const char *red)
{
    int64_t st[MAX_RANK], s = 1;
    for (int d = x->rank - 1; d >= 0; d--) { st[d] = s; s *= x->dims[d]; }
    int64_t *kd = c->k + O2C_REDUCE_KEPT_DIMS, *ks = c->k + O2C_REDUCE_KEPT_STR;
    int64_t *rd = c->k + O2C_REDUCE_RED_DIMS, *rs = c->k + O2C_REDUCE_RED_STR;
    int nk = 0, nr = 0, prev = -1;   /* prev: kind of the last dim kept in a list */
    int64_t R = 1;
    for (int d = 0; d < x->rank; d++) {
        int64_t dim = x->dims[d];
        if (red[d]) R *= dim;
        if (dim == 1) continue;
        if (red[d]) {
            if (prev == 1) { rd[nr - 1] *= dim; rs[nr - 1] = st[d]; }
            else { rd[nr] = dim; rs[nr] = st[d]; nr++; }
        } else {
            if (prev == 0) { kd[nk - 1] *= dim; ks[nk - 1] = st[d]; }
            else { kd[nk] = dim; ks[nk] = st[d]; nk++; }
        }
        prev = red[d];
    }
    c->k[O2C_REDUCE_R] = R;
    c->k[O2C_REDUCE_NKEPT] = nk;
    c->k[O2C_REDUCE_NRED] = nr;
}

void lower_reduce(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    char red[MAX_RANK];
    if (!reduce_axes(n, red)) { lower_copy(L, x, y); return; }
    int op = reduce_opcode(n->op_type);
    KCall *c = lower_call(L, xfmt("o2c_reduce_%s", dtype_suffix(x->dtype)), tensor_numel(y));
    c->x[0] = x;
    c->y[0] = y;
    c->k[O2C_REDUCE_OP] = op;
    reduce_params(c, x, red);
    int64_t lo = 0, hi = 0;
    switch (x->dtype) {
    case DT_BOOL: lo = 0; hi = 1; break;
    case DT_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
    case DT_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
    case DT_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
    case DT_INT64: lo = INT64_MIN; hi = INT64_MAX; break;
    case DT_UINT8: lo = 0; hi = UINT8_MAX; break;
    case DT_UINT16: lo = 0; hi = UINT16_MAX; break;
    case DT_UINT32: lo = 0; hi = UINT32_MAX; break;
    case DT_UINT64: lo = 0; hi = -1; break;   /* read back as uint64: the maximum */
    default: break;
    }
    c->k[O2C_REDUCE_LOW] = lo;
    c->k[O2C_REDUCE_HIGH] = hi;
    c->f[O2C_REDUCE_F_EMPTY_MEAN] = dtype_is_float(x->dtype) ? NAN : 0.0;
}

/* ---- ArgMax, ArgMin ---------------------------------------------------- */

void infer_argext(Node *n)
{
    Tensor *x = n->in[0];
    need_dtype(n, x, DTS_NUM);
    if (x->rank < 1) fail("%s needs an input of rank 1 or more", n->op_type);
    int axis = (int)norm_axis(n, attr_i(n, "axis"), x->rank);
    if (x->dims[axis] == 0) fail("%s over an empty axis (input %s) has no answer", n->op_type, tensor_shape_str(x));
    int64_t dims[MAX_RANK];
    int r = 0, keep = (int)attr_i(n, "keepdims");
    for (int d = 0; d < x->rank; d++) {
        if (d != axis) dims[r++] = x->dims[d];
        else if (keep) dims[r++] = 1;
    }
    set_out(n, 0, DT_INT64, r, dims);
}

void lower_argext(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int axis = (int)norm_axis(n, attr_i(n, "axis"), x->rank);
    int64_t inner = 1;
    for (int d = axis + 1; d < x->rank; d++) inner *= x->dims[d];
    KCall *c = lower_call(L, xfmt("o2c_argext_%s", dtype_suffix(x->dtype)), tensor_numel(y));
    c->x[0] = x;
    c->y[0] = y;
    c->k[O2C_ARGEXT_A] = x->dims[axis];
    c->k[O2C_ARGEXT_INNER] = inner ? inner : 1;
    c->k[O2C_ARGEXT_LAST] = attr_i(n, "select_last_index") != 0;
    c->k[O2C_ARGEXT_MAX] = !strcmp(n->op_type, "ArgMax");
}
