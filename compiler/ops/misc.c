/* More elementwise and misc ops: Mod, BitShift (kernels from KBINARY lines
 * of ops.def), IsNaN/IsInf (PREDICATE lines), CastLike, and Trilu, CumSum,
 * EyeLike, OneHot, Hardmax, Det (kernels in runtime/c/misc.h). */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/elementwise.h"
#include "../../runtime/c/params/misc.h"

void infer_binary_NUM(Node *n);
void infer_binary_INT(Node *n);

static int is_unsigned(int dt) { return dt == DT_UINT8 || dt == DT_UINT16 || dt == DT_UINT32 || dt == DT_UINT64; }

static int64_t prod(const int64_t *d, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++) p *= d[i];
    return p;
}

/* A broadcasting binary kernel call o2c_OP_SFX (the O2C_EW_* parameters). */
static void bin_call(Lowering *L, const char *op, Tensor *a, Tensor *b, Tensor *y)
{
    KCall *c = lower_call(L, xfmt("o2c_%s_%s", op, dtype_suffix(a->dtype)), tensor_numel(y));
    c->x[0] = a;
    c->x[1] = b;
    c->y[0] = y;
    if (tensor_numel(a) == tensor_numel(y) && tensor_numel(b) == tensor_numel(y)) return;
    c->k[O2C_EW_RANK] = y->rank;
    for (int d = 0; d < y->rank; d++) c->k[O2C_EW_DIMS + d] = y->dims[d];
    bcast_strides(a, y->rank, c->k + O2C_EW_STR_AT(0));
    bcast_strides(b, y->rank, c->k + O2C_EW_STR_AT(1));
}

/* A constant scalar (or one-element) integer input. */
static int64_t const_scalar(Node *n, Tensor *t, const char *what)
{
    need_const(n, t, what);
    if (tensor_numel(t) != 1)
        fail("%s ('%s') must hold one value, it has shape %s", what, t->name, tensor_shape_str(t));
    if (dtype_is_float(t->dtype)) return (int64_t)elem_f64(t->dtype, t->data, 0);
    return elem_i64(t->dtype, t->data, 0);
}

/* ---- Mod, BitShift ------------------------------------------------------ */

void infer_mod(Node *n)
{
    infer_binary_NUM(n);
}

/* fmod=0: the result takes the divisor's sign (Python %); fmod=1: C fmod
 * (the dividend's sign). Integer division by zero gives 0. */
void lower_mod(Node *n, Lowering *L)
{
    int dt = n->in[0]->dtype;
    const char *k = dtype_is_float(dt) ? (attr_i(n, "fmod") ? "Fmod" : "FloorMod")
                    : is_unsigned(dt) ? "ModU" : attr_i(n, "fmod") ? "FmodS" : "ModS";
    bin_call(L, k, n->in[0], n->in[1], n->out[0]);
}

void infer_bitshift(Node *n)
{
    need_dtype(n, n->in[0], DTS_INT);
    const char *d = attr_s(n, "direction");
    if (!d || (strcmp(d, "LEFT") && strcmp(d, "RIGHT")))
        fail("attribute direction must be LEFT or RIGHT, it is '%s'", d ? d : "(absent)");
    infer_binary_INT(n);
}

/* Shifts by the type's width or more give 0 (-1 for a right shift of a
 * negative signed value); signed types since opset 28. */
void lower_bitshift(Node *n, Lowering *L)
{
    int u = is_unsigned(n->in[0]->dtype);
    const char *k = strcmp(attr_s(n, "direction"), "LEFT") ? (u ? "Shr" : "ShrS") : (u ? "Shl" : "ShlS");
    bin_call(L, k, n->in[0], n->in[1], n->out[0]);
}

/* ---- PREDICATE lines: IsNaN, IsInf -------------------------------------- */

void infer_predicate_FLOAT(Node *n)
{
    need_dtype(n, n->in[0], DTS_FLOAT);
    set_out(n, 0, DT_BOOL, n->in[0]->rank, n->in[0]->dims);
}

/* The op's real and integer attributes go to O2C_EW_FA, FB, FC in schema
 * order. */
void lower_predicate(Node *n, Lowering *L)
{
    Tensor *x = n->in[0];
    KCall *c = lower_call(L, xfmt("o2c_%s_%s", n->op_type, dtype_suffix(x->dtype)), tensor_numel(x));
    c->x[0] = x;
    c->y[0] = n->out[0];
    char names[O2C_EW_NF][64], types[O2C_EW_NF];
    int k = schema_numbers(n->op->attrs, 1, names, types, O2C_EW_NF, n->op_type);
    for (int j = 0; j < k; j++)
        c->f[O2C_EW_FA + j] = types[j] == 'f' ? attr_f(n, names[j]) : (double)attr_i(n, names[j]);
}

/* ---- CastLike (lowered by lower_cast) ------------------------------------ */

void infer_castlike(Node *n)
{
    Tensor *x = n->in[0], *like = n->in[1];
    set_out(n, 0, like->dtype, x->rank, x->dims);
}

/* ---- Trilu ---------------------------------------------------------------- */

/* k (optional int64 input) is read at run time: the shape does not depend on it. */
void infer_trilu(Node *n)
{
    Tensor *x = n->in[0], *tk = in_t(n, 1);
    if (x->rank < 2) fail("input '%s' must have rank 2 or more, it is %s", x->name, tensor_shape_str(x));
    if (tk) {
        if (tk->dtype != DT_INT64) fail("k ('%s') must be int64, it is %s", tk->name, dtype_name(tk->dtype));
        if (tensor_numel(tk) != 1) fail("k ('%s') must hold one value, it has shape %s", tk->name, tensor_shape_str(tk));
    }
    out_like(n, 0, x);
}

void lower_trilu(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    KCall *c = lower_call(L, "o2c_trilu", tensor_numel(y));
    c->x[0] = x;
    c->x[1] = in_t(n, 1);
    c->y[0] = y;
    c->k[O2C_TRILU_H] = x->dims[x->rank - 2];
    c->k[O2C_TRILU_W] = x->dims[x->rank - 1];
    c->k[O2C_TRILU_UPPER] = attr_i(n, "upper") != 0;
    c->k[O2C_TRILU_ESIZE] = (int64_t)dtype_size(x->dtype);
}

/* ---- CumSum --------------------------------------------------------------- */

/* CumSum and CumProd (extra.c): the axis (int32 or int64 input) is read
 * at run time; a constant one is checked here. */
void infer_cumulative(Node *n)
{
    static const int DTS_CUMULATIVE[] = {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_UINT32, DT_UINT64, 0};
    Tensor *x = n->in[0], *ta = n->in[1];
    need_dtype(n, x, DTS_CUMULATIVE);
    if (x->rank < 1) fail("input '%s' must have rank 1 or more", x->name);
    need_dtype(n, ta, DTS_INDEX);
    if (tensor_numel(ta) != 1) fail("axis ('%s') must hold one value, it has shape %s", ta->name, tensor_shape_str(ta));
    if (ta->data) norm_axis(n, elem_i64(ta->dtype, ta->data, 0), x->rank);
    out_like(n, 0, x);
}

void lower_cumsum(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    KCall *c = lower_call(L, xfmt("o2c_cumsum_%s", dtype_suffix(x->dtype)), tensor_numel(y));
    c->x[0] = x;
    c->x[1] = n->in[1];
    c->y[0] = y;
    c->k[O2C_CUMSUM_RANK] = x->rank;
    for (int d = 0; d < x->rank; d++) c->k[O2C_CUMSUM_DIMS + d] = x->dims[d];
    c->k[O2C_CUMSUM_AXSIZE] = (int64_t)dtype_size(n->in[1]->dtype);
    c->k[O2C_CUMSUM_EXCLUSIVE] = attr_i(n, "exclusive") != 0;
    c->k[O2C_CUMSUM_REVERSE] = attr_i(n, "reverse") != 0;
}

/* ---- EyeLike ---------------------------------------------------------------- */

void infer_eyelike(Node *n)
{
    Tensor *x = n->in[0];
    if (x->rank != 2) fail("input '%s' must be 2-D, it is %s", x->name, tensor_shape_str(x));
    int dt = attr_has(n, "dtype") ? (int)attr_i(n, "dtype") : x->dtype;
    if (!dtype_supported(dt)) fail("dtype %s is not supported by onnx2c yet", dtype_name(dt));
    set_out(n, 0, dt, 2, x->dims);
}

void lower_eyelike(Node *n, Lowering *L)
{
    Tensor *y = n->out[0];
    KCall *c = lower_call(L, xfmt("o2c_eyelike_%s", dtype_suffix(y->dtype)), tensor_numel(y));
    c->y[0] = y;
    int64_t k = attr_i(n, "k"), w = y->dims[1];
    if (k > w) k = w;                     /* off the matrix: all zeros either way */
    if (k < -y->dims[0]) k = -y->dims[0];
    c->k[O2C_EYELIKE_W] = w;
    c->k[O2C_EYELIKE_K] = k;
}

/* ---- OneHot ------------------------------------------------------------------ */

static int64_t onehot_depth(Node *n)
{
    Tensor *td = n->in[1];
    need_dtype(n, td, DTS_NUM);
    int64_t depth = const_scalar(n, td, "OneHot's depth");
    if (depth < 1) fail("depth ('%s') must be at least 1, it is %lld", td->name, (long long)depth);
    return depth;
}

void infer_onehot(Node *n)
{
    Tensor *ind = n->in[0], *val = n->in[2];
    need_dtype(n, ind, DTS_NUM);
    int64_t depth = onehot_depth(n);
    if (val->rank != 1 || val->dims[0] != 2)
        fail("values ('%s') must be a 1-D tensor of 2 elements [off, on], it is %s", val->name, tensor_shape_str(val));
    if (ind->rank + 1 > MAX_RANK) fail("indices ('%s') have rank %d; at most %d is supported", ind->name, ind->rank, MAX_RANK - 1);
    int ax = (int)norm_axis(n, attr_i(n, "axis"), ind->rank + 1);
    int64_t dims[MAX_RANK];
    for (int d = 0, s = 0; d <= ind->rank; d++) dims[d] = d == ax ? depth : ind->dims[s++];
    set_out(n, 0, val->dtype, ind->rank + 1, dims);
}

void lower_onehot(Node *n, Lowering *L)
{
    Tensor *ind = n->in[0], *y = n->out[0];
    int ax = (int)norm_axis(n, attr_i(n, "axis"), ind->rank + 1);
    if (ind->dtype != DT_INT64) {          /* indices as int64 (non-integers truncated) */
        Tensor *t = lower_temp(L, DT_INT64, ind->rank, ind->dims);
        KCall *c = lower_call(L, xfmt("o2c_cast_%s_i64", dtype_suffix(ind->dtype)), tensor_numel(ind));
        c->x[0] = ind;
        c->y[0] = t;
        ind = t;
    }
    KCall *c = lower_call(L, "o2c_onehot", tensor_numel(y));
    c->x[0] = ind;
    c->x[1] = n->in[2];
    c->y[0] = y;
    c->k[O2C_ONEHOT_DEPTH] = onehot_depth(n);
    c->k[O2C_ONEHOT_INNER] = prod(ind->dims, ax, ind->rank);
    c->k[O2C_ONEHOT_ESIZE] = (int64_t)dtype_size(y->dtype);
    c->k[O2C_ONEHOT_NOWRAP] = n->opset < 11;   /* OneHot-9: indices outside [0, depth) are off */
}

/* ---- Hardmax ------------------------------------------------------------------ */

/* opset < 13: the input is seen as 2-D [prod(dims[:axis]), prod(dims[axis:])]
 * (axis default 1); since 13: along one axis (default -1). */
static int hardmax_axis(Node *n)
{
    Tensor *x = n->in[0];
    int64_t a = attr_has(n, "axis") ? attr_i(n, "axis") : n->opset < 13 ? 1 : -1;
    return (int)norm_axis(n, a, x->rank);
}

void infer_hardmax(Node *n)
{
    Tensor *x = n->in[0];
    need_dtype(n, x, DTS_FLOAT);
    if (x->rank < 1) fail("input '%s' must have rank 1 or more", x->name);
    hardmax_axis(n);
    out_like(n, 0, x);
}

void lower_hardmax(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int ax = hardmax_axis(n);
    KCall *c = lower_call(L, xfmt("o2c_hardmax_%s", dtype_suffix(x->dtype)), tensor_numel(y));
    c->x[0] = x;
    c->y[0] = y;
    if (n->opset < 13) {
        c->k[O2C_HARDMAX_N] = prod(x->dims, ax, x->rank);
        c->k[O2C_HARDMAX_INNER] = 1;
    } else {
        c->k[O2C_HARDMAX_N] = x->dims[ax];
        c->k[O2C_HARDMAX_INNER] = prod(x->dims, ax + 1, x->rank);
    }
}

/* ---- Det ------------------------------------------------------------------------ */

void infer_det(Node *n)
{
    Tensor *x = n->in[0];
    need_dtype(n, x, DTS_FLOAT);
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
        fail("input '%s' must be square matrices [..., M, M], it is %s", x->name, tensor_shape_str(x));
    set_out(n, 0, x->dtype, x->rank - 2, x->dims);
}

void lower_det(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int64_t m = x->dims[x->rank - 1];
    int64_t sz = tensor_numel(x);
    Tensor *scratch = lower_temp(L, x->dtype, 1, &sz);   /* in the element type */
    KCall *c = lower_call(L, xfmt("o2c_det_%s", dtype_suffix(x->dtype)), tensor_numel(y));
    c->x[0] = x;
    c->y[0] = y;
    c->y[1] = scratch;
    c->k[O2C_DET_M] = m;
}
