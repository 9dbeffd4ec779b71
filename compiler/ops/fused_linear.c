/* Fused linear ops (domain onnx2c, made by passes/fuse_epilogue.c):
 * FusedConv, FusedConvTranspose, FusedGemm and FusedMatMul are the standard
 * op plus an epilogue applied to each output element while it is computed:
 * a residual Add and an activation (runtime/c/o2c_rt.h, o2c_epi_*).
 *
 * Inputs: 0..2 those of the standard op (FusedMatMul: A, B and an optional
 * bias C broadcast along the columns), 3 the residual R (the output's
 * shape, optional), 4 the PRelu slope (one value, or one per channel: axis 1
 * of a convolution, the last axis of a matrix product).
 * Attributes: the standard op's, plus
 *   activation        none Relu Clip LeakyRelu PRelu Sigmoid Tanh HardSigmoid
 *                     HardSwish SiLU GeluErf GeluTanh Mish
 *   activation_alpha  Clip min, LeakyRelu / HardSigmoid alpha
 *   activation_beta   Clip max, HardSigmoid beta
 *   residual          none, before (y = act(op + R)) or after (y = act(op) + R) */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/matmul.h"

void infer_conv(Node *n);
void infer_conv_transpose(Node *n);
void infer_gemm(Node *n);
void infer_matmul(Node *n);

static const struct { const char *name; int kind; } ACTS[] = {
    {"none", O2C_ACT_NONE}, {"Relu", O2C_ACT_RELU}, {"Clip", O2C_ACT_CLIP},
    {"LeakyRelu", O2C_ACT_LEAKYRELU}, {"PRelu", O2C_ACT_PRELU}, {"Sigmoid", O2C_ACT_SIGMOID},
    {"Tanh", O2C_ACT_TANH}, {"HardSigmoid", O2C_ACT_HARDSIGMOID}, {"HardSwish", O2C_ACT_HARDSWISH},
    {"SiLU", O2C_ACT_SILU}, {"GeluErf", O2C_ACT_GELU_ERF}, {"GeluTanh", O2C_ACT_GELU_TANH},
    {"Mish", O2C_ACT_MISH},
};

static int act_kind(const Node *n)
{
    const char *a = attr_s(n, "activation");
    for (size_t i = 0; i < sizeof ACTS / sizeof ACTS[0]; i++)
        if (!strcmp(ACTS[i].name, a)) return ACTS[i].kind;
    fail("unknown fused activation '%s'", a);
}

static int res_mode(const Node *n)
{
    const char *r = attr_s(n, "residual");
    if (!strcmp(r, "none")) return O2C_RES_NONE;
    if (!strcmp(r, "before")) return O2C_RES_BEFORE;
    if (!strcmp(r, "after")) return O2C_RES_AFTER;
    fail("residual '%s' is not one of none, before, after", r);
}

static int is_conv(const Node *n) { return !strcmp(n->op_type, "FusedConv"); }
static int is_convt(const Node *n) { return !strcmp(n->op_type, "FusedConvTranspose"); }
static int is_gemm(const Node *n) { return !strcmp(n->op_type, "FusedGemm"); }
static int is_poolgemm(const Node *n) { return !strcmp(n->op_type, "GlobalPoolGemm"); }
/* The channel is axis 1 of an output of rank 3 or more. */
static int chan_axis1(const Node *n) { return is_conv(n) || is_convt(n) || (is_poolgemm(n) && attr_i(n, "keepdims")); }

/* Channels of the output: axis 1 of a convolution, the last of a product. */
static int64_t channels(const Node *n)
{
    const Tensor *y = n->out[0];
    return is_conv(n) || is_convt(n) ? y->dims[1] : y->dims[y->rank - 1];
}

/* The epilogue inputs and attributes of a fused node with nch channels. */
static void epi_check(Node *n, int64_t nch)
{
    Tensor *y = n->out[0], *r = in_t(n, 3), *s = in_t(n, 4);
    int res = res_mode(n), act = act_kind(n);
    if ((res != O2C_RES_NONE) != (r != NULL)) fail("residual '%s' needs input 3 exactly when it is not none", attr_s(n, "residual"));
    if (r && (r->dtype != y->dtype || r->rank != y->rank || tensor_numel(r) != tensor_numel(y)))
        fail("the residual ('%s', %s) must have the output's type and shape (%s)", r->name, tensor_shape_str(r),
             tensor_shape_str(y));
    for (int i = 0; r && i < r->rank; i++)
        if (r->dims[i] != y->dims[i]) fail("the residual ('%s') must have the output's shape", r->name);
    if ((act == O2C_ACT_PRELU) != (s != NULL)) fail("the PRelu slope is input 4, and only PRelu has one");
    if (s && (s->dtype != y->dtype || (tensor_numel(s) != 1 && tensor_numel(s) != nch)))
        fail("the PRelu slope ('%s', %s) must be one value or one per channel", s->name, tensor_shape_str(s));
}

void infer_fused_linear(Node *n)
{
    if (is_conv(n)) infer_conv(n);
    else if (is_convt(n)) infer_conv_transpose(n);
    else if (is_gemm(n)) infer_gemm(n);
    else {
        infer_matmul(n);
        Tensor *c = in_t(n, 2), *y = n->out[0];
        if (c && (c->dtype != y->dtype || tensor_numel(c) != y->dims[y->rank - 1] ||
                  c->rank < 1 || c->rank > y->rank || c->dims[c->rank - 1] != y->dims[y->rank - 1]))
            fail("the bias ('%s', %s) must be one value per column of %s", c->name, tensor_shape_str(c),
                 tensor_shape_str(y));
    }
    epi_check(n, channels(n));
}

static void epi_attach(Node *n, KCall *c)
{
    c->x[O2C_EPI_XRES] = in_t(n, 3);
    c->x[O2C_EPI_XSLOPE] = in_t(n, 4);
    c->k[O2C_EPI_ACT] = act_kind(n);
    c->k[O2C_EPI_RES] = res_mode(n);
    c->k[O2C_EPI_NSLOPE] = in_t(n, 4) ? tensor_numel(n->in[4]) : 0;
    c->f[O2C_EPI_FA] = attr_f(n, "activation_alpha");
    c->f[O2C_EPI_FB] = attr_f(n, "activation_beta");
}

void lower_fused_linear(Node *n, Lowering *L)
{
    KCall *c;
    if (is_conv(n) || is_convt(n)) c = lower_conv_call(n, L, is_convt(n));
    else if (is_gemm(n)) c = lower_gemm_call(n, L);
    else {
        c = lower_matmul_call(n, L);
        if (in_t(n, 2)) {                /* bias: one value per column */
            c->x[2] = n->in[2];
            c->k[O2C_MATMUL_HASC] = 1; c->k[O2C_MATMUL_SCM] = 0; c->k[O2C_MATMUL_SCN] = 1;
            c->f[O2C_MATMUL_F_BETA] = 1.0;
        }
    }
    epi_attach(n, c);
}

/* ---- the same in standard ops (--emit-onnx) ---------------------------- */

static const char *act_decompose(const Node *n, Decomp *d, const char *x)
{
    int dt = n->out[0]->dtype;
    switch (act_kind(n)) {
    case O2C_ACT_RELU: return dc_op(d, "Relu", 1, x);
    case O2C_ACT_CLIP: {
        const char *lo = dc_const_f(d, dt, attr_f(n, "activation_alpha"));
        const char *hi = dc_const_f(d, dt, attr_f(n, "activation_beta"));
        if (d->opset < 11) d->opset = 11;
        return dc_op(d, "Clip", 3, x, lo, hi);
    }
    case O2C_ACT_LEAKYRELU: {
        const char *y = dc_op(d, "LeakyRelu", 1, x);
        dc_attr_f(d, "alpha", attr_f(n, "activation_alpha"));
        return y;
    }
    case O2C_ACT_PRELU: {
        /* the slope broadcast per channel: axis 1 of a convolution */
        const char *s = dc_in(d, 4);
        if (chan_axis1(n) && tensor_numel(n->in[4]) > 1) {
            int64_t shape[MAX_RANK];
            int r = n->out[0]->rank;
            shape[0] = -1;
            for (int i = 1; i < r - 1; i++) shape[i] = 1;
            s = dc_op(d, "Reshape", 2, s, dc_const_ints(d, shape, r - 1));
        }
        return dc_op(d, "PRelu", 2, x, s);
    }
    case O2C_ACT_SIGMOID: return dc_op(d, "Sigmoid", 1, x);
    case O2C_ACT_TANH: return dc_op(d, "Tanh", 1, x);
    case O2C_ACT_HARDSIGMOID: {
        const char *y = dc_op(d, "HardSigmoid", 1, x);
        dc_attr_f(d, "alpha", attr_f(n, "activation_alpha"));
        dc_attr_f(d, "beta", attr_f(n, "activation_beta"));
        return y;
    }
    case O2C_ACT_HARDSWISH:
        if (d->opset < 14) d->opset = 14;
        return dc_op(d, "HardSwish", 1, x);
    case O2C_ACT_SILU: return dc_op(d, "Mul", 2, x, dc_op(d, "Sigmoid", 1, x));
    case O2C_ACT_GELU_ERF: {          /* x * (erf(x / sqrt 2) + 1) / 2 */
        const char *e = dc_op(d, "Erf", 1, dc_op(d, "Mul", 2, x, dc_const_f(d, dt, 0.70710678118654752440)));
        const char *h = dc_op(d, "Add", 2, e, dc_const_f(d, dt, 1.0));
        return dc_op(d, "Mul", 2, dc_op(d, "Mul", 2, x, h), dc_const_f(d, dt, 0.5));
    }
    case O2C_ACT_GELU_TANH: {         /* x * (tanh(sqrt(2/pi) (x + 0.044715 x^3)) + 1) / 2 */
        const char *x3 = dc_op(d, "Mul", 2, dc_op(d, "Mul", 2, x, x), x);
        const char *in = dc_op(d, "Add", 2, x, dc_op(d, "Mul", 2, x3, dc_const_f(d, dt, 0.044715)));
        const char *t = dc_op(d, "Tanh", 1, dc_op(d, "Mul", 2, in, dc_const_f(d, dt, 0.79788456080286535588)));
        const char *h = dc_op(d, "Add", 2, t, dc_const_f(d, dt, 1.0));
        return dc_op(d, "Mul", 2, dc_op(d, "Mul", 2, x, h), dc_const_f(d, dt, 0.5));
    }
    case O2C_ACT_MISH: return dc_op(d, "Mul", 2, x, dc_op(d, "Tanh", 1, dc_op(d, "Softplus", 1, x)));
    default: return x;
    }
}

void decompose_fused_linear(const Node *n, Decomp *d)
{
    static const char *const CONV_ATTRS[] = {"auto_pad", "dilations", "group", "kernel_shape", "pads",
                                             "strides", "output_padding", "output_shape", NULL};
    static const char *const GEMM_ATTRS[] = {"alpha", "beta", "transA", "transB", NULL};
    int has_b = in_t((Node *)n, 2) != NULL;
    const char *y;
    if (is_conv(n) || is_convt(n)) {
        y = has_b ? dc_op(d, is_conv(n) ? "Conv" : "ConvTranspose", 3, dc_in(d, 0), dc_in(d, 1), dc_in(d, 2))
                  : dc_op(d, is_conv(n) ? "Conv" : "ConvTranspose", 2, dc_in(d, 0), dc_in(d, 1));
        dc_copy_attrs(d, n, CONV_ATTRS);
    } else if (is_gemm(n)) {
        y = has_b ? dc_op(d, "Gemm", 3, dc_in(d, 0), dc_in(d, 1), dc_in(d, 2))
                  : dc_op(d, "Gemm", 2, dc_in(d, 0), dc_in(d, 1));
        dc_copy_attrs(d, n, GEMM_ATTRS);
    } else {
        y = dc_op(d, "MatMul", 2, dc_in(d, 0), dc_in(d, 1));
        if (has_b) y = dc_op(d, "Add", 2, y, dc_in(d, 2));
    }
    int res = res_mode(n);
    if (res == O2C_RES_BEFORE) y = dc_op(d, "Add", 2, y, dc_in(d, 3));
    y = act_decompose(n, d, y);
    if (res == O2C_RES_AFTER) y = dc_op(d, "Add", 2, y, dc_in(d, 3));
    dc_output(d, 0, y);
}

/* ---- GlobalPoolGemm ------------------------------------------------------
 * A global average pool and a matrix product in one kernel (made by
 * passes/fuse_pool_gemm.c from GlobalAveragePool -> views -> Gemm or 1x1
 * Conv). Inputs: X (N x C x spatial), W (transB 0: C x M; transB 1: M x C,
 * or a 1x1 Conv weight M x C x 1 x 1), optional bias C (one value or one
 * per output column), then the epilogue inputs 3 and 4 as above.
 * Attributes: alpha, beta, transB as Gemm; keepdims 1: output N x M x 1...
 * (the 1x1 Conv's shape), 0: N x M; the epilogue attributes. */

static void poolgemm_dims(const Node *n, int64_t *C, int64_t *S, int64_t *M)
{
    const Tensor *x = n->in[0], *w = n->in[1];
    *C = x->dims[1];
    *S = tensor_numel(x) / (x->dims[0] * x->dims[1]);
    int tb = (int)attr_i(n, "transB");
    *M = w->rank == 2 && !tb ? w->dims[1] : w->dims[0];
}

void infer_global_pool_gemm(Node *n)
{
    Tensor *x = n->in[0], *w = n->in[1], *b = in_t(n, 2);
    need_dtype(n, x, DTS_FLOAT);
    if (x->rank < 3) fail("X must be N x C x spatial, it is %s", tensor_shape_str(x));
    if (w->dtype != x->dtype || (b && b->dtype != x->dtype)) fail("W and the bias must have X's data type");
    int64_t C, S, M;
    poolgemm_dims(n, &C, &S, &M);
    if (w->rank != 2 && !attr_i(n, "transB")) fail("a weight of rank %d needs transB", w->rank);
    if (w->rank < 2 || tensor_numel(w) != C * M || (w->rank == 2 && w->dims[attr_i(n, "transB") ? 1 : 0] != C))
        fail("W ('%s', %s) does not match %lld input channels", w->name, tensor_shape_str(w), (long long)C);
    if (b && tensor_numel(b) != 1 && (tensor_numel(b) != M || b->dims[b->rank - 1] != M))
        fail("the bias ('%s', %s) must be one value or one per output column", b->name, tensor_shape_str(b));
    int64_t dims[MAX_RANK];
    int r = attr_i(n, "keepdims") ? x->rank : 2;
    dims[0] = x->dims[0];
    dims[1] = M;
    for (int i = 2; i < r; i++) dims[i] = 1;
    set_out(n, 0, x->dtype, r, dims);
    epi_check(n, M);
}

void lower_global_pool_gemm(Node *n, Lowering *L)
{
    int64_t C, S, M;
    poolgemm_dims(n, &C, &S, &M);
    int tb = (int)attr_i(n, "transB");
    Tensor *b = in_t(n, 2);
    KCall *c = lower_call(L, xfmt("o2c_poolgemm_%s", dtype_suffix(n->in[0]->dtype)), tensor_numel(n->out[0]));
    c->x[0] = n->in[0];
    c->x[1] = n->in[1];
    c->x[2] = b;
    c->y[0] = n->out[0];
    c->k[O2C_POOLGEMM_M] = M; c->k[O2C_POOLGEMM_C] = C; c->k[O2C_POOLGEMM_S] = S;
    c->k[O2C_POOLGEMM_SWM] = tb ? C : 1; c->k[O2C_POOLGEMM_SWC] = tb ? 1 : M;
    c->k[O2C_POOLGEMM_HASB] = b != NULL;
    c->k[O2C_POOLGEMM_SB] = b && tensor_numel(b) > 1;
    c->f[O2C_MATMUL_F_ALPHA] = attr_f(n, "alpha");
    c->f[O2C_MATMUL_F_BETA] = attr_f(n, "beta");
    epi_attach(n, c);
}

void decompose_global_pool_gemm(const Node *n, Decomp *d)
{
    static const char *const GEMM_ATTRS[] = {"alpha", "beta", "transB", NULL};
    const Tensor *w = n->in[1], *y = n->out[0];
    const char *a = dc_op(d, "Flatten", 1, dc_op(d, "GlobalAveragePool", 1, dc_in(d, 0)));
    const char *wt = dc_in(d, 1);
    if (w->rank != 2) wt = dc_op(d, "Reshape", 2, wt, dc_const_ints(d, (const int64_t[]){w->dims[0], -1}, 2));
    const char *t = in_t((Node *)n, 2) ? dc_op(d, "Gemm", 3, a, wt, dc_in(d, 2)) : dc_op(d, "Gemm", 2, a, wt);
    dc_copy_attrs(d, n, GEMM_ATTRS);
    if (y->rank != 2) t = dc_op(d, "Reshape", 2, t, dc_const_ints(d, y->dims, y->rank));
    int res = res_mode(n);
    if (res == O2C_RES_BEFORE) t = dc_op(d, "Add", 2, t, dc_in(d, 3));
    t = act_decompose(n, d, t);
    if (res == O2C_RES_AFTER) t = dc_op(d, "Add", 2, t, dc_in(d, 3));
    dc_output(d, 0, t);
}
