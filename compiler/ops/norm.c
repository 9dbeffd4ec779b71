/* Normalization and softmax: BatchNormalization, InstanceNormalization,
 * LayerNormalization, Softmax, LogSoftmax (kernels in runtime/c/norm.h).
 * The reductions (ReduceXxx, ArgMax, ArgMin) are in ops/reduce.c. */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/norm.h"

static int64_t prod_dims(const Tensor *t, int from, int to)
{
    int64_t p = 1;
    for (int d = from; d < to; d++) p *= t->dims[d];
    return p;
}

/* a tensor that is used: consumed by a node or a graph output */
static int used(const Tensor *t) { return t && (t->nuses > 0 || t->is_output); }

/* ---- Softmax, LogSoftmax ------------------------------------------------ */

/* Before opset 13 the input is coerced to 2-D at axis (default 1) and the
 * op works on each row; from 13 on it works along one axis (default -1). */
static void softmax_axis(Node *n, int64_t *outer, int64_t *A, int64_t *inner)
{
    Tensor *x = n->in[0];
    int old = n->opset < 13;
    int64_t a = attr_has(n, "axis") ? attr_i(n, "axis") : (old ? 1 : -1);
    if (old) {
        /* axis may equal the rank for the 2-D coercion (columns of size 1) */
        if (a < -x->rank || a > x->rank) fail("axis %lld is out of range for rank %d", (long long)a, x->rank);
        if (a < 0) a += x->rank;
        *outer = prod_dims(x, 0, (int)a);
        *A = prod_dims(x, (int)a, x->rank);
        *inner = 1;
    } else {
        int ax = (int)norm_axis(n, a, x->rank);
        *outer = prod_dims(x, 0, ax);
        *A = x->dims[ax];
        *inner = prod_dims(x, ax + 1, x->rank);
    }
}

void infer_softmax(Node *n)
{
    Tensor *x = n->in[0];
    need_dtype(n, x, DTS_FLOAT);
    int64_t o, a, i;
    softmax_axis(n, &o, &a, &i);
    out_like(n, 0, x);
}

void lower_softmax(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int64_t outer, A, inner;
    softmax_axis(n, &outer, &A, &inner);
    if (A == 0) return;
    KCall *c = lower_call(L, xfmt("o2c_softmax_%s", dtype_suffix(x->dtype)), outer * inner);
    c->x[0] = x;
    c->y[0] = y;
    c->k[O2C_SOFTMAX_A] = A;
    c->k[O2C_SOFTMAX_INNER] = inner ? inner : 1;
    c->k[O2C_SOFTMAX_LOG] = !strcmp(n->op_type, "LogSoftmax");
    /* the C target: rows with vectorized exponentials (ppocrv4's 40 rows of
     * 6625 in a one-node model: 1.16 -> 0.24 ms) */
    if (L->tiled && x->dtype == DT_FLOAT && inner == 1) c->kernel = kernel_find("o2c_softmax_rows_f32");
    /* a strided axis: blocks of columns (YOLOv8n's DFL softmax, 16 bins of
     * 2100 anchors: 0.46 -> 0.07 ms); not for 16-bit data (below) */
    if (L->tiled && x->dtype == DT_FLOAT && inner > 1 && !n->promoted) {
        c->kernel = kernel_find("o2c_softmax_cols_f32");
        c->count = outer * ((inner + O2C_SMC_CB - 1) / O2C_SMC_CB);
    }
    /* float16/bfloat16 data (computed on float32 stand-ins): rounded to the
     * 16-bit type after each step of Softmax's function body, as onnx's
     * reference does (one rounding at the end differs by an ulp) */
    if (n->promoted && !c->k[O2C_SOFTMAX_LOG]) {
        c->kernel = kernel_find("o2c_softmax16_f32");
        c->k[O2C_SOFTMAX_HALF] = n->promoted == DT_BFLOAT16 ? 2 : 1;
    }
}

/* ---- BatchNormalization --------------------------------------------------- */

/* channels as the parameters see them: C (or C x D1 x ... with spatial=0
 * before opset 9) and the number of elements per channel block */
static void bn_layout(Node *n, int64_t *C, int64_t *inner)
{
    Tensor *x = n->in[0];
    if (n->opset < 9 && attr_i(n, "spatial") == 0) {
        *C = prod_dims(x, 1, x->rank);
        *inner = 1;
    } else {
        *C = x->dims[1];
        *inner = prod_dims(x, 2, x->rank);
    }
}

static int bn_training(Node *n)
{
    if (n->opset >= 14) return attr_i(n, "training_mode") != 0;
    /* before opset 7 is_test=0 (the default) is training mode: Y from the
     * batch's statistics (onnx's reference BatchNormalization_6) */
    if (n->opset < 7) return attr_i(n, "is_test") == 0;
    return 0;
}

void infer_batchnorm(Node *n)
{
    Tensor *x = n->in[0];
    need_dtype(n, x, DTS_FLOAT);
    if (x->rank < 2) fail("X must have rank 2 or more (N x C x ...), it is %s", tensor_shape_str(x));
    int64_t C, inner;
    bn_layout(n, &C, &inner);
    static const char *const what[] = {"", "scale", "B", "mean", "var"};
    for (int j = 1; j < 5; j++) {
        Tensor *t = need_in(n, j);
        if (t->dtype != x->dtype)
            fail("%s ('%s') is %s and X is %s; onnx2c needs them to have the same data type", what[j], t->name,
                 dtype_name(t->dtype), dtype_name(x->dtype));
        if (tensor_numel(t) != C)
            fail("%s ('%s') has shape %s; it should hold %lld values (one per channel)", what[j], t->name,
                 tensor_shape_str(t), (long long)C);
    }
    int train = bn_training(n);
    if (n->opset < 14) {
        for (int j = 1; j < n->nout; j++)
            if (used(n->out[j]))
                fail("output %d ('%s') is a training-mode statistic; onnx2c supports the training outputs of "
                     "BatchNormalization only from opset 14 (training_mode=1)", j, n->out[j]->name);
    } else if (!train) {
        for (int j = 1; j < n->nout; j++)
            if (n->out[j])
                fail("output %d ('%s') is only allowed with training_mode=1", j, n->out[j]->name);
    } else if (n->nout > 3) {
        fail("has %d outputs; with training_mode=1 BatchNormalization has at most 3", n->nout);
    }
    if (train && inner != prod_dims(x, 2, x->rank)) fail("training_mode=1 with spatial=0 is not supported");
    out_like(n, 0, x);
    for (int j = 1; j < n->nout; j++) out_like(n, j, n->in[3]);
}

void lower_batchnorm(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int64_t C, inner;
    bn_layout(n, &C, &inner);
    const char *sfx = dtype_suffix(x->dtype);
    if (bn_training(n)) {
        int64_t d2 = 2 * C;
        Tensor *st = lower_temp(L, x->dtype, 1, &d2);
        KCall *c = lower_call(L, xfmt("o2c_batchnorm_train_%s", sfx), C);
        c->x[0] = x; c->x[1] = n->in[1]; c->x[2] = n->in[2];
        c->y[0] = y; c->y[1] = st;
        c->k[O2C_BNTRAIN_N] = x->dims[0]; c->k[O2C_BNTRAIN_C] = C; c->k[O2C_BNTRAIN_INNER] = inner;
        c->f[O2C_NORM_F_EPS] = attr_f(n, "epsilon");
        Tensor *rm = n->nout > 1 && used(n->out[1]) ? n->out[1] : NULL;
        Tensor *rv = n->nout > 2 && used(n->out[2]) ? n->out[2] : NULL;
        if (rm || rv) {
            KCall *r = lower_call(L, xfmt("o2c_batchnorm_running_%s", sfx), C);
            r->x[0] = n->in[3]; r->x[1] = n->in[4]; r->x[2] = st;
            r->y[0] = rm; r->y[1] = rv;
            r->k[O2C_BNRUN_C] = C;
            r->f[O2C_NORM_F_MOMENTUM] = attr_f(n, "momentum");
        }
        return;
    }
    Tensor *pr = lower_temp(L, x->dtype, 1, &C);
    KCall *c = lower_call(L, xfmt("o2c_batchnorm_prep_%s", sfx), C);
    c->x[0] = n->in[1]; c->x[1] = n->in[4];
    c->y[0] = pr;
    c->f[O2C_NORM_F_EPS] = attr_f(n, "epsilon");
    c = lower_call(L, xfmt("o2c_batchnorm_%s", sfx), tensor_numel(x));
    c->x[0] = x; c->x[1] = pr; c->x[2] = n->in[2]; c->x[3] = n->in[3];
    c->y[0] = y;
    c->k[O2C_BATCHNORM_C] = C;
    c->k[O2C_BATCHNORM_INNER] = inner ? inner : 1;
}

/* ---- InstanceNormalization ---------------------------------------------- */

void infer_instancenorm(Node *n)
{
    Tensor *x = n->in[0];
    need_dtype(n, x, DTS_FLOAT);
    if (x->rank < 2) fail("input must have rank 2 or more (N x C x ...), it is %s", tensor_shape_str(x));
    int64_t C = x->dims[1];
    for (int j = 1; j < 3; j++) {
        Tensor *t = need_in(n, j);
        if (t->dtype != x->dtype) fail("'%s' must have the input's data type %s", t->name, dtype_name(x->dtype));
        if (tensor_numel(t) != C)
            fail("'%s' has shape %s; it should hold %lld values (one per channel)", t->name, tensor_shape_str(t),
                 (long long)C);
    }
    out_like(n, 0, x);
}

void lower_instancenorm(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int64_t S = prod_dims(x, 2, x->rank);
    KCall *c = lower_call(L, xfmt("o2c_instnorm_%s", dtype_suffix(x->dtype)), x->dims[0] * x->dims[1]);
    c->x[0] = x; c->x[1] = n->in[1]; c->x[2] = n->in[2];
    c->y[0] = y;
    c->k[O2C_INSTNORM_C] = x->dims[1] ? x->dims[1] : 1;
    c->k[O2C_INSTNORM_S] = S;
    c->f[O2C_NORM_F_EPS] = attr_f(n, "epsilon");
}

/* ---- LayerNormalization ----------------------------------------------------- */

/* Checks that t broadcasts (numpy, one way) to x's dims [axis, rank). */
static void ln_check_bcast(const Tensor *t, const Tensor *x, int axis, const char *what)
{
    int nr = x->rank - axis;
    int ok = t->rank <= nr;
    for (int d = 0; ok && d < t->rank; d++) {
        int64_t td = t->dims[d], xd = x->dims[axis + nr - t->rank + d];
        if (td != xd && td != 1) ok = 0;
    }
    if (!ok)
        fail("%s ('%s', %s) does not broadcast to the normalized shape (the dims of X from axis %d on, X is %s)",
             what, t->name, tensor_shape_str(t), axis, tensor_shape_str(x));
}

static int ln_stash(Node *n)
{
    int64_t st = attr_i(n, "stash_type");
    if (st == DT_FLOAT) return DT_FLOAT;
    if (st == DT_DOUBLE) return DT_DOUBLE;
    fail("stash_type %lld is not supported (onnx2c supports 1 (float) and 11 (double))", (long long)st);
}

void infer_layernorm(Node *n)
{
    Tensor *x = n->in[0], *s = n->in[1], *b = in_t(n, 2);
    need_dtype(n, x, DTS_FLOAT);
    int axis = (int)norm_axis(n, attr_i(n, "axis"), x->rank);
    if (s->dtype != x->dtype) fail("Scale must have X's data type %s", dtype_name(x->dtype));
    ln_check_bcast(s, x, axis, "Scale");
    if (b) {
        if (b->dtype != x->dtype) fail("B must have X's data type %s", dtype_name(x->dtype));
        ln_check_bcast(b, x, axis, "B");
    }
    int st = ln_stash(n);
    out_like(n, 0, x);
    int64_t dims[MAX_RANK];
    for (int d = 0; d < x->rank; d++) dims[d] = d < axis ? x->dims[d] : 1;
    /* Mean and InvStdDev have the stash type (ONNX shape inference); a
     * graph output declared as float or double keeps its declared type */
    for (int o = 1; o < 3 && o < n->nout; o++) {
        Tensor *t = n->out[o];
        int dt = t && t->is_output && (t->dtype == DT_FLOAT || t->dtype == DT_DOUBLE) ? t->dtype : st;
        set_out(n, o, dt, x->rank, dims);
    }
}

void lower_layernorm(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *s = n->in[1], *b = in_t(n, 2);
    int axis = (int)norm_axis(n, attr_i(n, "axis"), x->rank);
    int64_t rows = prod_dims(x, 0, axis), N = prod_dims(x, axis, x->rank);
    if (N == 0) fail("the normalized shape (X %s from axis %d) is empty", tensor_shape_str(x), axis);
    /* optional outputs that nobody reads are not computed */
    Tensor *mean = n->nout > 1 && used(n->out[1]) ? n->out[1] : NULL;
    Tensor *istd = n->nout > 2 && used(n->out[2]) ? n->out[2] : NULL;
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 1 && !istd) break;
        Tensor *stat = mode ? istd : mean;   /* statistics of another type: o2c_layernorm_T_U */
        int other = stat && stat->dtype != x->dtype;
        /* the tiled C target: float rows summed in 16 partial sums (vectorized) */
        KCall *c = lower_call(L, other ? xfmt("o2c_layernorm_%s_%s", dtype_suffix(x->dtype), dtype_suffix(stat->dtype))
                                 : L->tiled && x->dtype == DT_FLOAT ? "o2c_layernorm_rows_f32"
                                                                    : xfmt("o2c_layernorm_%s", dtype_suffix(x->dtype)),
                              rows);
        c->x[0] = x; c->x[1] = s; c->x[2] = b;
        if (mode == 0) {
            c->y[0] = n->out[0];
            c->y[1] = mean;
        } else {
            c->y[0] = istd;
        }
        c->k[O2C_LAYERNORM_N] = N;
        c->k[O2C_LAYERNORM_MODE] = mode;
        int direct = tensor_numel(s) == N && (!b || tensor_numel(b) == N);
        if (!direct) {
            int nr = x->rank - axis;
            c->k[O2C_LAYERNORM_NR] = nr;
            for (int d = 0; d < nr; d++) c->k[O2C_LAYERNORM_DIMS + d] = x->dims[axis + d];
            bcast_strides(s, nr, c->k + O2C_LAYERNORM_SSTR);
            if (b) bcast_strides(b, nr, c->k + O2C_LAYERNORM_BSTR);
        }
        c->f[O2C_NORM_F_EPS] = attr_f(n, "epsilon");
    }
}
