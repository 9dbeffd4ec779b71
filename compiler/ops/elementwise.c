/* Elementwise ops: the generic shape rules and lowerings behind the
 * UNARY/BINARY/COMPARE lines of the op table, and the elementwise ops
 * with a rule of their own (Clip, Gelu, Sum/Mean/Max/Min, Cast, Where). */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/elementwise.h"

/* kernel name for an op and element type: o2c_Relu_f32 */
static const char *ew_kernel(const char *op, int dtype) { return xfmt("o2c_%s_%s", op, dtype_suffix(dtype)); }

/* ---- unary ---------------------------------------------------------- */

#define UNARY_RULE(TS)                                   \
    void infer_unary_##TS(Node *n)                       \
    {                                                    \
        need_dtype(n, n->in[0], DTS_##TS);               \
        out_like(n, 0, n->in[0]);                        \
    }
extern const int DTS_SIGNED[];
const int DTS_SIGNED[] = {DT_FLOAT, DT_DOUBLE, DT_INT8, DT_INT16, DT_INT32, DT_INT64, 0};
UNARY_RULE(FLOAT)
UNARY_RULE(SIGNED)
UNARY_RULE(NUM)
UNARY_RULE(INT)
UNARY_RULE(BOOL)
UNARY_RULE(ALL)

void infer_same(Node *n) { out_like(n, 0, n->in[0]); }

/* A unary kernel over the whole tensor; real attributes go to
 * O2C_EW_FA, FB, FC in schema order. */
KCall *ew_unary_call(Lowering *L, const char *kname, Tensor *x, Tensor *y)
{
    KCall *c = lower_call(L, ew_kernel(kname, x->dtype), tensor_numel(y));
    c->x[0] = x;
    c->y[0] = y;
    c->inplace = 1u;   /* Y[i] = f(X[i]) */
    return c;
}

/* the op's real attributes, in schema order: a unary expression's A, B, C */
static void unary_reals(Node *n, double *abc)
{
    char names[O2C_EW_NF][64], types[O2C_EW_NF];
    int k = schema_numbers(n->op->attrs, 0, names, types, O2C_EW_NF, n->op_type);
    for (int j = 0; j < k; j++) abc[j] = attr_f(n, names[j]);
}

void lower_unary(Node *n, Lowering *L)
{
    KCall *c = ew_unary_call(L, n->op_type, n->in[0], n->out[0]);
    unary_reals(n, c->f + O2C_EW_FA);
}

/* ---- a node as one step of a fused elementwise loop (OpDef.ew_step):
 * what its lowering computes as one call of an ops.def expression */

typedef char ew_step_reals_fit[EW_STEP_REALS == O2C_EW_NF ? 1 : -1];

int ew_step_unary(Node *n, EwStep *s)
{
    memset(s, 0, sizeof *s);
    s->expr = n->op_type;
    s->x[0] = n->in[0];
    s->nx = 1;
    unary_reals(n, s->abc);
    return 1;
}

void lower_gelu(Node *n, Lowering *L)
{
    const char *ap = attr_s(n, "approximate");
    if (strcmp(ap, "none") && strcmp(ap, "tanh")) fail("approximate='%s' is not one of none, tanh", ap);
    need_dtype(n, n->in[0], DTS_FLOAT);
    ew_unary_call(L, !strcmp(ap, "tanh") ? "GeluTanh" : "GeluErf", n->in[0], n->out[0]);
}


/* Clip's bounds from attributes (opset < 11) or optional inputs; 0 when
 * an input bound is known only at run time. */
static int clip_bounds(Node *n, double *plo, double *phi)
{
    Tensor *x = n->in[0];
    need_dtype(n, x, DTS_NUM);
    double lo, hi;
    if (dtype_is_float(x->dtype)) { lo = -INFINITY; hi = INFINITY; }
    else { lo = -9.2e18; hi = 9.2e18; }
    if (attr_has(n, "min")) lo = attr_f(n, "min");
    if (attr_has(n, "max")) hi = attr_f(n, "max");
    Tensor *tmin = in_t(n, 1), *tmax = in_t(n, 2);
    if ((tmin && tensor_numel(tmin) != 1) || (tmax && tensor_numel(tmax) != 1))
        fail("min ('%s') and max ('%s') must be scalars (one element each)", tmin ? tmin->name : "",
             tmax ? tmax->name : "");
    if ((tmin && !tmin->data) || (tmax && !tmax->data)) return 0;
    if (tmin) lo = elem_f64(tmin->dtype, tmin->data, 0);
    if (tmax) hi = elem_f64(tmax->dtype, tmax->data, 0);
    if (!dtype_is_float(x->dtype)) {
        /* integer bounds must fit the type */
        int sgn = x->dtype == DT_INT8 || x->dtype == DT_INT16 || x->dtype == DT_INT32 || x->dtype == DT_INT64;
        int bits = 8 * (int)dtype_size(x->dtype);
        double tlo = !sgn ? 0 : bits == 64 ? -9.2e18 : -(double)(1ULL << (bits - 1));
        double thi = bits == 64 ? 9.2e18 : (double)(1ULL << (bits - sgn)) - 1;
        if (lo < tlo) lo = tlo;
        if (hi > thi) hi = thi;
    }
    *plo = lo;
    *phi = hi;
    return 1;
}

void lower_clip(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *tmin = in_t(n, 1), *tmax = in_t(n, 2);
    double lo, hi;
    if (!clip_bounds(n, &lo, &hi)) {
        /* bounds known only at run time: y = min(hi, max(lo, x)), the bound
         * first so that a NaN x stays NaN (BMax(a, b) is a >= b ? a : b) */
        Tensor *src = x;
        if (tmin) { ew_binary_call(L, "BMax", tmin, src, n->out[0]); src = n->out[0]; }
        if (tmax) { ew_binary_call(L, "BMin", tmax, src, n->out[0]); src = n->out[0]; }
        return;
    }
    KCall *c = ew_unary_call(L, "Clip", x, n->out[0]);
    c->f[O2C_EW_FA] = lo;
    c->f[O2C_EW_FB] = hi;
}

int ew_step_clip(Node *n, EwStep *s)
{
    memset(s, 0, sizeof *s);
    if (!clip_bounds(n, &s->abc[0], &s->abc[1])) return 0;   /* bounds computed at run time */
    s->expr = "Clip";
    s->x[0] = n->in[0];
    s->nx = 1;
    return 1;
}

/* ---- binary --------------------------------------------------------- */

static void binary_rule(Node *n, const int *allowed, int out_dtype)
{
    Tensor *a = n->in[0], *b = n->in[1];
    static const int DTS_POW[] = {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, 0};   /* the spec's base types */
    need_dtype(n, a, strcmp(n->op_type, "Pow") ? allowed : DTS_POW);
    if (b->dtype != a->dtype && !(!strcmp(n->op_type, "Pow") && dtype_supported(b->dtype)))
        fail("inputs '%s' (%s) and '%s' (%s) must have the same data type", a->name, dtype_name(a->dtype), b->name,
             dtype_name(b->dtype));
    int64_t dims[MAX_RANK];
    int r = broadcast_shapes(n, a, b, dims);
    set_out(n, 0, out_dtype ? out_dtype : a->dtype, r, dims);
}

/* a compare of strings (Equal: its OpDef has OPT_STRINGS) is ops/strings.c's */
static int strings_compared(const Node *n)
{
    return (n->in[0] && n->in[0]->dtype == DT_STRING) || (n->in[1] && n->in[1]->dtype == DT_STRING);
}

#define BINARY_RULE(TS)                                                         \
    void infer_binary_##TS(Node *n) { binary_rule(n, DTS_##TS, 0); }           \
    void infer_compare_##TS(Node *n)                                           \
    {                                                                          \
        if (strings_compared(n)) infer_string_equal(n);                        \
        else binary_rule(n, DTS_##TS, DT_BOOL);                                \
    }
BINARY_RULE(FLOAT)
BINARY_RULE(SIGNED)
BINARY_RULE(NUM)
BINARY_RULE(INT)
BINARY_RULE(BOOL)
BINARY_RULE(ALL)

/* Broadcast parameters (runtime/c/params/elementwise.h): the rank (0 if
 * all inputs have the output's shape), dims, then each input's strides. */
static void bcast_params(KCall *c, Tensor *y, Tensor **xs, int nx)
{
    int same = 1;
    for (int j = 0; j < nx; j++)
        if (tensor_numel(xs[j]) != tensor_numel(y)) same = 0;
    memset(c->k, 0, sizeof c->k);
    if (same) return;
    c->k[O2C_EW_RANK] = y->rank;
    for (int d = 0; d < y->rank; d++) c->k[O2C_EW_DIMS + d] = y->dims[d];
    for (int j = 0; j < nx; j++) bcast_strides(xs[j], y->rank, c->k + O2C_EW_STR_AT(j));
}

void ew_binary_call(Lowering *L, const char *op, Tensor *a, Tensor *b, Tensor *y)
{
    KCall *c = lower_call(L, ew_kernel(op, a->dtype), tensor_numel(y));
    c->x[0] = a;
    c->x[1] = b;
    c->y[0] = y;
    c->inplace = 3u;   /* Y[i] from A and B at i's offsets: an operand of Y's size is read at i */
    Tensor *xs[2] = {a, b};
    bcast_params(c, y, xs, 2);
}

void lower_pow_int(Node *n, Lowering *L);   /* ops/extra.c */

void lower_binary(Node *n, Lowering *L)
{
    Tensor *b = n->in[1];
    if (strings_compared(n)) {
        lower_string_equal(n, L);
        return;
    }
    if (!strcmp(n->op_type, "Pow") && dtype_is_int(n->in[0]->dtype)) {   /* integer base */
        lower_pow_int(n, L);
        return;
    }
    b = lower_cast_temp(L, b, n->in[0]->dtype);   /* Pow with another exponent type */
    ew_binary_call(L, n->op_type, n->in[0], b, n->out[0]);
}

int ew_step_binary(Node *n, EwStep *s)
{
    memset(s, 0, sizeof *s);
    Tensor *a = n->in[0], *b = n->in[1];
    if (strings_compared(n) || b->dtype != a->dtype) return 0;   /* strings; Pow with another exponent type */
    if (!strcmp(n->op_type, "Pow") && dtype_is_int(a->dtype)) return 0;   /* an integer base: lower_pow_int */
    s->expr = n->op_type;
    s->x[0] = a;
    s->x[1] = b;
    s->nx = 2;
    return 1;
}

/* ---- variadic: Sum, Mean, Max, Min ------------------------------------ */

void infer_variadic(Node *n)
{
    Tensor *a = n->in[0];
    need_dtype(n, a, strcmp(n->op_type, "Mean") ? DTS_NUM : DTS_FLOAT);
    Tensor acc = *a;
    for (int j = 1; j < n->nin; j++) {
        Tensor *b = need_in(n, j);
        if (b->dtype != a->dtype) fail("all inputs must have the same data type");
        int64_t dims[MAX_RANK];
        int r = broadcast_shapes(n, &acc, b, dims);
        tensor_set_shape(&acc, r, dims);
    }
    set_out(n, 0, a->dtype, acc.rank, acc.dims);
}

void lower_variadic(Node *n, Lowering *L)
{
    Tensor *y = n->out[0];
    const char *op = !strcmp(n->op_type, "Max") ? "BMax" : !strcmp(n->op_type, "Min") ? "BMin" : "Add";
    if (n->nin == 1) {
        lower_copy(L, n->in[0], y);
    } else {
        /* y = in0 op in1, then y = y op in_j: each step reads y[i] before writing it */
        ew_binary_call(L, op, n->in[0], n->in[1], y);
        for (int j = 2; j < n->nin; j++) ew_binary_call(L, op, y, n->in[j], y);
    }
    if (!strcmp(n->op_type, "Mean")) {
        KCall *c = ew_unary_call(L, "Scale", y, y);
        c->f[O2C_EW_FA] = 1.0 / n->nin;
    }
}

/* Sum, Max, Min of two inputs: one binary step (Mean scales after it) */
int ew_step_variadic(Node *n, EwStep *s)
{
    memset(s, 0, sizeof *s);
    if (n->nin != 2 || !strcmp(n->op_type, "Mean")) return 0;
    s->expr = !strcmp(n->op_type, "Max") ? "BMax" : !strcmp(n->op_type, "Min") ? "BMin" : "Add";
    s->x[0] = n->in[0];
    s->x[1] = n->in[1];
    s->nx = 2;
    return 1;
}

/* ---- Cast, Where ------------------------------------------------------- */

void infer_cast(Node *n)
{
    int to = (int)attr_i(n, "to");
    if (!dtype_supported(to)) fail("casting to %s is not supported yet", dtype_name(to));
    set_out(n, 0, to, n->in[0]->rank, n->in[0]->dims);
}

int ew_step_cast(Node *n, EwStep *s)
{
    memset(s, 0, sizeof *s);
    Tensor *x = n->in[0], *y = n->out[0];
    if (x->dtype == y->dtype || dtype_is_narrow(x->dtype) || dtype_is_narrow(y->dtype)) return 0;   /* a copy; ops/types.c */
    s->expr = "Cast";
    s->x[0] = x;
    s->nx = 1;
    return 1;
}

void lower_cast(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    if (x->dtype == y->dtype) { lower_copy(L, x, y); return; }
    if (dtype_is_narrow(x->dtype) || dtype_is_narrow(y->dtype)) { lower_cast_narrow(n, L); return; }   /* ops/types.c */
    KCall *c = lower_call(L, xfmt("o2c_cast_%s_%s", dtype_suffix(x->dtype), dtype_suffix(y->dtype)), tensor_numel(y));
    c->x[0] = x;
    c->y[0] = y;
}

void infer_where(Node *n)
{
    Tensor *c = n->in[0], *a = n->in[1], *b = n->in[2];
    need_dtype(n, c, DTS_BOOL);
    if (a->dtype != b->dtype) fail("X and Y must have the same data type");
    int64_t d1[MAX_RANK], d2[MAX_RANK];
    int r1 = broadcast_shapes(n, c, a, d1);
    Tensor t = *a;
    tensor_set_shape(&t, r1, d1);
    int r2 = broadcast_shapes(n, &t, b, d2);
    set_out(n, 0, a->dtype, r2, d2);
}

void lower_where(Node *n, Lowering *L)
{
    Tensor *y = n->out[0];
    KCall *c = lower_call(L, "o2c_where", tensor_numel(y));
    for (int j = 0; j < 3; j++) c->x[j] = n->in[j];
    c->y[0] = y;
    bcast_params(c, y, n->in, 3);
    c->k[O2C_EW_ESIZE] = (int64_t)dtype_size(y->dtype);
}

/* ---- layout freedom (layout.c) ------------------------------------------ */


/* Whether a node computes each output element from the elements of the
 * same flat index of its inputs: an elementwise op (or a fused chain of
 * them) with one output, every input either of the output's shape or a
 * single value. Then it gives the same result on any layout, as long as
 * its full-shape inputs and its output share it. */
int ew_layout(Node *n) { return node_elementwise(n) ? LAYOUT_ROLE_ANY : LAYOUT_ROLE_NONE; }

int node_elementwise(const Node *n)
{
    if (n->promoted || n->folded || n->nout != 1 || !n->out[0]) return 0;
    if (n->op->layout != ew_layout) return 0;   /* the elementwise ops (ops.def) */
    const Tensor *y = n->out[0];
    for (int j = 0; j < n->nin; j++) {
        const Tensor *t = n->in[j];
        if (!t || tensor_numel(t) == 1) continue;
        if (t->rank != y->rank || t->dtype != y->dtype) return 0;
        for (int d = 0; d < t->rank; d++)
            if (t->dims[d] != y->dims[d]) return 0;
    }
    return 1;
}
