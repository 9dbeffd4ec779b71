/* Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
 * MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv, and the
 * com.microsoft ops of onnxruntime's quantization tools (QLinearAdd,
 * QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearGlobalAveragePool,
 * QLinearConcat), and onnx2c's FusedQLinearConv and FusedQLinearMatMul
 * (made by passes/quantize.c from DequantizeLinear -> Conv/Gemm/MatMul ->
 * activation -> QuantizeLinear). Kernels in runtime/c/quant.h, parameter
 * slots in runtime/c/params/quant.h.
 *
 * Integer convolutions and products with constant int8 weights of zero
 * point 0 (what quantize_static writes: symmetric int8 weights) run on the
 * packed kernels (o2c_qlin_*: an implicit GEMM, weights packed here;
 * o2c_qdw_*: depthwise) in the C target; the rest, the CUDA target and
 * other weights run on the reference kernels (o2c_qconv_*, o2c_qmatmul_*,
 * o2c_qgemm_*).
 *
 * Scales and zero points are read at run time (they may be graph inputs);
 * their shapes decide the granularity (per tensor, per axis, blocked; per
 * row or column of a product; per output channel of a convolution).
 * float16/bfloat16 scales reach these functions as float32 stand-ins
 * (infer.c, lower.c: computes_on_half); where the spec computes in the
 * scale's type, the kernels round to its precision (O2C_QPREC_*). */
#include <math.h>
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/quant.h"

static const int DTS_Q8[] = {DT_UINT8, DT_INT8, 0};
static const int DTS_QOUT[] = {DT_UINT8, DT_INT8, DT_UINT16, DT_INT16, DT_FLOAT8E4M3FN, DT_FLOAT8E4M3FNUZ, DT_FLOAT8E5M2,
                               DT_FLOAT8E5M2FNUZ, DT_FLOAT4E2M1, DT_UINT4, DT_INT4, DT_UINT2, DT_INT2, 0};
static const int DTS_QIN[] = {DT_UINT8, DT_INT8, DT_UINT16, DT_INT16, DT_INT32, DT_FLOAT8E4M3FN, DT_FLOAT8E4M3FNUZ,
                              DT_FLOAT8E5M2, DT_FLOAT8E5M2FNUZ, DT_FLOAT4E2M1, DT_UINT4, DT_INT4, DT_UINT2, DT_INT2, 0};

/* the type input j had in the model: a float16/bfloat16 input is read in
 * float32 while the node is inferred and lowered */
static int orig_dtype(const Node *n, int j)
{
    if (node_promoted_in(n, j)) return n->promoted;
    return n->in[j] ? n->in[j]->dtype : DT_UNDEFINED;
}

static int prec_of(int dt)
{
    return dt == DT_FLOAT16 ? O2C_QPREC_F16 : dt == DT_BFLOAT16 ? O2C_QPREC_BF16 : O2C_QPREC_NONE;
}

static void need_same_type(Node *n, Tensor *t, int dt, const char *what)
{
    (void)n;
    if (t && t->dtype != dt)
        fail("%s ('%s') is %s; it must have the type %s", what, t->name, dtype_name(t->dtype), dtype_name(dt));
}

/* one value (a scalar or a 1-element tensor) */
static void need_scalar(Node *n, Tensor *t, const char *what)
{
    (void)n;
    if (t && tensor_numel(t) != 1)
        fail("%s ('%s') is %s; onnx2c supports a single value (per-tensor quantization) here", what, t->name,
             tensor_shape_str(t));
}

static void need_float_scale(Node *n, Tensor *t, const char *what)
{
    (void)n;
    if (t->dtype != DT_FLOAT)
        fail("%s ('%s') is %s; it must be float", what, t->name, dtype_name(t->dtype));
}

/* ---- QuantizeLinear, DequantizeLinear ------------------------------------ */

/* The O2C_QP_* slots of a scale (and its zero point) for data x: per
 * tensor (one value), per axis (a vector along `axis`), blocked (block_size
 * > 0: x's shape with ceil(D / block_size) along the axis). */
static void qparams(Node *n, Tensor *x, Tensor *scale, Tensor *zp, int64_t *k)
{
    k[O2C_QP_INNER] = k[O2C_QP_D] = k[O2C_QP_B] = 1;
    k[O2C_QP_SO] = k[O2C_QP_SA] = k[O2C_QP_SI] = 0;
    if (zp) {
        int same = tensor_numel(zp) == tensor_numel(scale);
        if (same && tensor_numel(scale) > 1) {
            same = zp->rank == scale->rank;
            for (int d = 0; same && d < zp->rank; d++) same = zp->dims[d] == scale->dims[d];
        }
        if (!same)
            fail("the zero point ('%s', %s) must have the shape of the scale ('%s', %s)", zp->name,
                 tensor_shape_str(zp), scale->name, tensor_shape_str(scale));
    }
    int64_t bs = attr_i(n, "block_size");
    if (bs < 0) fail("block_size must not be negative, it is %lld", (long long)bs);
    if (tensor_numel(scale) == 1) return;
    if (x->rank == 0) fail("the scale ('%s') has %s values for a scalar input", scale->name, tensor_shape_str(scale));
    int64_t ax = norm_axis(n, attr_i(n, "axis"), x->rank), inner = 1, D = x->dims[ax];
    for (int d = (int)ax + 1; d < x->rank; d++) inner *= x->dims[d];
    k[O2C_QP_INNER] = inner > 0 ? inner : 1;
    k[O2C_QP_D] = D > 0 ? D : 1;
    if (!bs) {
        if (scale->rank != 1 || scale->dims[0] != D)
            fail("the scale ('%s') is %s; per-axis quantization along axis %lld of %s needs a vector of %lld values "
                 "(or block_size for blocked quantization)", scale->name, tensor_shape_str(scale), (long long)ax,
                 tensor_shape_str(x), (long long)D);
        k[O2C_QP_SA] = 1;
        return;
    }
    int64_t nb = (D + bs - 1) / bs;
    int ok = scale->rank == x->rank;
    for (int d = 0; ok && d < x->rank; d++) ok = scale->dims[d] == (d == ax ? nb : x->dims[d]);
    if (!ok)
        fail("the scale ('%s') is %s; blocked quantization of %s along axis %lld with block_size %lld needs the "
             "input's shape with %lld along that axis", scale->name, tensor_shape_str(scale), tensor_shape_str(x),
             (long long)ax, (long long)bs, (long long)nb);
    k[O2C_QP_B] = bs;
    k[O2C_QP_SO] = nb * inner;
    k[O2C_QP_SA] = inner;
    k[O2C_QP_SI] = 1;
}

/* The type the division x / scale is made in: the precision attribute,
 * else the scale's type (the spec); int32 scales divide in double. */
static int quant_precision(Node *n)
{
    int p = attr_has(n, "precision") && attr_i(n, "precision") ? (int)attr_i(n, "precision") : orig_dtype(n, 1);
    if (p == DT_INT32) p = DT_DOUBLE;
    if (p != DT_FLOAT && p != DT_DOUBLE && p != DT_FLOAT16 && p != DT_BFLOAT16)
        fail("the division's precision %s is not supported (float, double, float16, bfloat16 are)", dtype_name(p));
    return p;
}

void infer_quantize_linear(Node *n)
{
    static const int DTS_X[] = {DT_FLOAT, DT_INT32, 0};
    static const int DTS_S[] = {DT_FLOAT, DT_INT32, 0};
    Tensor *x = n->in[0], *s = n->in[1], *z = in_t(n, 2);
    need_dtype(n, x, DTS_X);
    need_dtype(n, s, DTS_S);
    int od = (int)attr_i(n, "output_dtype");
    if (z) {
        if (od && od != z->dtype)
            fail("output_dtype is %s but the zero point ('%s') is %s; they must agree", dtype_name(od), z->name,
                 dtype_name(z->dtype));
        od = z->dtype;
    }
    if (!od) od = DT_UINT8;
    int ok = 0;
    for (const int *t = DTS_QOUT; *t; t++) ok |= *t == od;
    if (!ok)
        fail("quantization to %s is not supported by onnx2c yet (uint8, int8, uint16, int16, float8, float4, int4, "
             "int2 are)", dtype_name(od));
    int64_t k[O2C_QP_NK];
    qparams(n, x, s, z, k);
    if (dtype_is_narrow(od) && (x->dtype != DT_FLOAT || quant_precision(n) == DT_DOUBLE))
        fail("quantization of %s to %s is computed in float32 by onnx2c; this node asks for double", dtype_name(x->dtype),
             dtype_name(od));
    quant_precision(n);
    set_out(n, 0, od, x->rank, x->dims);
}

void lower_quantize_linear(Node *n, Lowering *L)
{
    Tensor *y = n->out[0];
    int p = quant_precision(n);
    int rt = p == DT_DOUBLE ? DT_DOUBLE : DT_FLOAT;
    Tensor *x = lower_cast_temp(L, n->in[0], rt), *s = lower_cast_temp(L, n->in[1], rt);
    int narrow = dtype_is_narrow(y->dtype);   /* one kernel for them all, the type a parameter */
    const char *kernel = narrow ? "o2c_quantize_f32_n"
                                : xfmt("o2c_quantize_%s_%s", dtype_suffix(rt), dtype_suffix(y->dtype));
    KCall *c = lower_call(L, kernel, tensor_numel(y));
    c->x[0] = x;
    c->x[1] = s;
    c->x[2] = in_t(n, 2);
    c->y[0] = y;
    qparams(n, n->in[0], n->in[1], in_t(n, 2), c->k);
    c->k[O2C_QUANT_PREC] = prec_of(p);
    if (narrow) {
        c->k[O2C_QUANTN_NT] = y->dtype;
        c->k[O2C_QUANTN_SAT] = attr_i(n, "saturate") != 0;
    }
}

/* The output type: output_dtype, else the scale's type. */
static int dequant_out_type(Node *n)
{
    int sdt = orig_dtype(n, 1);
    int od = attr_has(n, "output_dtype") && attr_i(n, "output_dtype") ? (int)attr_i(n, "output_dtype") : sdt;
    if (od != DT_FLOAT && od != DT_FLOAT16 && od != DT_BFLOAT16)
        fail("output_dtype %s is not supported (float, float16, bfloat16 are)", dtype_name(od));
    return od;
}

void infer_dequantize_linear(Node *n)
{
    Tensor *x = n->in[0], *s = n->in[1], *z = in_t(n, 2);
    need_dtype(n, x, DTS_QIN);
    if (s->dtype != DT_FLOAT) fail("the scale ('%s') is %s; it must be float, float16 or bfloat16", s->name, dtype_name(s->dtype));
    need_same_type(n, z, x->dtype, "the zero point");
    int64_t k[O2C_QP_NK];
    qparams(n, x, s, z, k);
    int od = dequant_out_type(n);
    if (n->promoted) {
        /* the float32 result stands for the scale's 16-bit type */
        if (od == DT_FLOAT)
            fail("output_dtype float with a %s scale is not supported by onnx2c yet", dtype_name(n->promoted));
        set_out(n, 0, od == n->promoted ? DT_FLOAT : od, x->rank, x->dims);
        return;
    }
    set_out(n, 0, od, x->rank, x->dims);
}

void lower_dequantize_linear(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0], *yf = y;
    if (y->dtype != DT_FLOAT) yf = lower_temp(L, DT_FLOAT, y->rank, y->dims);
    int narrow = dtype_is_narrow(x->dtype);
    KCall *c = lower_call(L, narrow ? "o2c_dequantize_n_f32" : xfmt("o2c_dequantize_%s_f32", dtype_suffix(x->dtype)),
                          tensor_numel(y));
    c->x[0] = x;
    c->x[1] = n->in[1];
    c->x[2] = in_t(n, 2);
    c->y[0] = yf;
    qparams(n, x, n->in[1], in_t(n, 2), c->k);
    if (narrow) {
        c->k[O2C_DEQUANTN_NT] = x->dtype;
    }
    if (yf != y) {
        KCall *k = lower_call(L, xfmt("o2c_cast_f32_%s", dtype_suffix(y->dtype)), tensor_numel(y));
        k->x[0] = yf;
        k->y[0] = y;
    }
}

/* ---- DynamicQuantizeLinear ------------------------------------------------ */

void infer_dynamic_quantize_linear(Node *n)
{
    Tensor *x = n->in[0];
    if (n->promoted || x->dtype != DT_FLOAT)
        fail("input '%s' is %s; DynamicQuantizeLinear takes float", x->name, dtype_name(orig_dtype(n, 0)));
    set_out(n, 0, DT_UINT8, x->rank, x->dims);
    set_out(n, 1, DT_FLOAT, 0, NULL);
    set_out(n, 2, DT_UINT8, 0, NULL);
}

/* the scale and zero point (into the outputs, or scratch when unread),
 * then QuantizeLinear's kernel with them */
void lower_dynamic_quantize_linear(Node *n, Lowering *L)
{
    Tensor *x = n->in[0];
    Tensor *s = n->nout > 1 && n->out[1] ? n->out[1] : lower_temp(L, DT_FLOAT, 0, NULL);
    Tensor *z = n->nout > 2 && n->out[2] ? n->out[2] : lower_temp(L, DT_UINT8, 0, NULL);
    KCall *c = lower_call(L, "o2c_dynq_params_f32", 1);
    c->x[0] = x;
    c->y[0] = s;
    c->y[1] = z;
    c->k[O2C_DYNQ_N] = tensor_numel(x);
    c = lower_call(L, "o2c_quantize_f32_u8", tensor_numel(x));
    c->x[0] = x;
    c->x[1] = s;
    c->x[2] = z;
    c->y[0] = n->out[0];
    c->k[O2C_QP_INNER] = c->k[O2C_QP_D] = c->k[O2C_QP_B] = 1;
    c->k[O2C_QUANT_PREC] = O2C_QPREC_NONE;
}

static int is_qlinear_conv(const Node *n)
{
    return !strcmp(n->op_type, "QLinearConv") || !strcmp(n->op_type, "FusedQLinearConv");
}

/* The output clamp of a requantizing node: its type's range, narrowed by a
 * fused node's activation (attributes y_min, y_max: passes/quantize.c) */
static void qclamp(const Node *n, int dt, int64_t *lo, int64_t *hi)
{
    *lo = dt == DT_UINT8 ? 0 : -128;
    *hi = dt == DT_UINT8 ? 255 : 127;
    if (n->domain && !strcmp(n->domain, "onnx2c")) {
        int64_t a = attr_i(n, "y_min"), b = attr_i(n, "y_max");
        if (a > *lo) *lo = a;
        if (b < *hi) *hi = b;
    }
}

/* The multipliers alpha * a[j] * b[j] (/ c[j], c a scalar or NULL), one per
 * value of b: a call of o2c_qscale_f32, run now when its inputs are constant */
static Tensor *qscale_call(Lowering *L, Tensor *a, Tensor *b, Tensor *c, double alpha, const char *what)
{
    int64_t nb = tensor_numel(b);
    Tensor *out = lower_temp(L, DT_FLOAT, 1, &nb);
    KCall *s = lower_call(L, "o2c_qscale_f32", nb);
    s->x[0] = a;
    s->x[1] = b;
    s->x[2] = c;
    s->y[0] = out;
    s->k[O2C_QSCALE_SB] = nb > 1;
    s->f[O2C_QSCALE_F_ALPHA] = alpha;
    return eval_call_const(L, s, what);
}

/* ---- the packed integer kernels (o2c_qlin_*, o2c_qdw_*) ------------------- */

/* A convolution or product as the packed kernels see it */
typedef struct QLin {
    Tensor *x, *xs, *xz, *w, *ws, *wz, *ys, *yz, *b, *y;
    int64_t M;            /* output channels (a product: B's columns) */
    int wkn;              /* W is K x M (a product's B), not M x K... (a conv's M x C x KH x KW) */
} QLin;

/* one float of a constant scale: index i, or its only value */
static float qscale_at(const Tensor *t, int64_t i) { return (float)elem_f64(t->dtype, t->data, tensor_numel(t) == 1 ? 0 : i); }

/* The requantization of the packed kernels applies: one y zero point,
 * constant float scales, one for x and y, one or one per channel for W */
static int qlin_requant_ok(const QLin *q)
{
    if (q->yz && tensor_numel(q->yz) != 1) return 0;
    const Tensor *sc[3] = {q->xs, q->ws, q->ys};
    for (int i = 0; i < 3; i++)
        if (!sc[i] || !sc[i]->data || sc[i]->dtype != DT_FLOAT) return 0;
    return tensor_numel(q->xs) == 1 && tensor_numel(q->ys) == 1 &&
           (tensor_numel(q->ws) == 1 || tensor_numel(q->ws) == q->M);
}

/* The packed kernels apply: the C target (o2c_qlin, o2c_qdw) or Cortex-M
 * (o2c_qmcu, o2c_qmcudw); 8-bit X and Y; constant int8
 * weights whose zero points are all 0; constant float scales (the
 * multipliers are computed here) */
static int qlin_applies(const Lowering *L, const QLin *q)
{
    if (!L->tiled && L->target != TARGET_CORTEX_M) return 0;
    if (q->x->dtype != DT_UINT8 && q->x->dtype != DT_INT8) return 0;
    if (q->y->dtype != DT_UINT8 && q->y->dtype != DT_INT8) return 0;
    if (q->w->dtype != DT_INT8 || !q->w->data) return 0;
    if (q->wz) {
        if (!q->wz->data) return 0;
        for (int64_t i = 0; i < tensor_numel(q->wz); i++)
            if (elem_i64(q->wz->dtype, q->wz->data, i)) return 0;
    }
    if (q->xz && tensor_numel(q->xz) != 1) return 0;
    return qlin_requant_ok(q);
}

/* The weight K past which the sums of o2c_qlin_*'s offset form could pass
 * int32 (K 255 x 255, twice: the sums and the offsets' correction) */
#define QLIN_OFFSET_MAX_K 16384

/* o2c_qlin_* on the C target (not o2c_qdw: its weights are read as they
 * are): as qlin_applies, but the weights 8-bit of either sign with
 * constant zero points (one, or one per output channel), stored less an
 * offset per channel where W - wz leaves int8 (O2C_QLIN's x[6]); and int32
 * output where there are no scales (ConvInteger, MatMulInteger: the sums) */
static int qlin_applies_offset(const Lowering *L, const QLin *q, int64_t K)
{
    if (!L->tiled || L->target == TARGET_CORTEX_M || K > QLIN_OFFSET_MAX_K) return 0;
    if (q->x->dtype != DT_UINT8 && q->x->dtype != DT_INT8) return 0;
    if ((q->w->dtype != DT_INT8 && q->w->dtype != DT_UINT8) || !q->w->data) return 0;
    if (q->wz && (!q->wz->data || q->wz->dtype != q->w->dtype ||
                  (tensor_numel(q->wz) != 1 && tensor_numel(q->wz) != q->M)))
        return 0;
    if (q->xz && tensor_numel(q->xz) != 1) return 0;
    if (q->y->dtype == DT_INT32) return !q->xs && !q->ws && !q->ys && !q->yz && !q->b;
    if (q->y->dtype != DT_UINT8 && q->y->dtype != DT_INT8) return 0;
    return qlin_requant_ok(q);
}

/* W[m, k] - wz[m] of a packed kernel's weights */
static int32_t qlin_weight(const QLin *q, int64_t m, int64_t k, int64_t K)
{
    const int64_t i = q->wkn ? k * q->M + m : m * K + k;
    int32_t v = (int32_t)elem_i64(q->w->dtype, q->w->data, i);
    if (q->wz) v -= (int32_t)elem_i64(q->wz->dtype, q->wz->data, tensor_numel(q->wz) == 1 ? 0 : m);
    return v;
}

/* The requantization multiplier x_scale * w_scale[m] / y_scale, in float
 * and in onnxruntime's order; all of them for mp channels (0 past M) */
static float qlin_multiplier(const QLin *q, int64_t m)
{
    const float xw = qscale_at(q->xs, 0) * qscale_at(q->ws, m);
    return xw / qscale_at(q->ys, 0);
}

static Tensor *qlin_multipliers(Lowering *L, const QLin *q, int64_t mp)
{
    Tensor *mul = lower_const(L, "multipliers", DT_FLOAT, 1, &mp);
    float *d = mul->data;
    for (int64_t m = 0; m < q->M; m++) d[m] = qlin_multiplier(q, m);
    return mul;
}

/* the largest band of input rows (O2C_QLIN_BR) a convolution's panel is
 * copied from, in values per value of the panel: above it (wide rows, few
 * taps) the panel gathers from the input directly */
#define QLIN_BAND_MAX_RATIO 2

/* A convolution's panel copied from a band of padded input rows
 * (O2C_QLIN_BR; runtime/c/params/quant.h) where the band is small beside
 * the panel (QLIN_BAND_MAX_RATIO). The pixel blocks: whole output rows
 * where a row fits in a panel, the panel's columns mostly pixels (at least
 * QLIN_BAND_MIN_FILL of them), the most rows whose panel and band take no
 * more scratch than the panel alone did, else the fewest words; else
 * (wide rows) PBW pixels over at most two rows. */
#define QLIN_BAND_MIN_FILL 0.8
static void qlin_band(Lowering *L, KCall *c, const ConvGeom *g, int64_t C, int64_t K, int64_t N, int64_t S)
{
    const int64_t PBW = c->k[O2C_QLIN_PBW], OW = g->out[2], OH = g->out[1], KP = (K + 1) / 2;
    const int64_t BW = (OW - 1) * g->s[2] + (g->k[2] - 1) * g->d[2] + 1, taps = g->k[1] * g->k[2];
    /* the candidate taken: pixels of a block, panel columns, band rows, scratch words */
    int64_t best = -1, best_pb = 0, best_br = 0, best_words = 0;
    for (int64_t rows = OW <= PBW ? (PBW / OW < OH ? PBW / OW : OH) : 0; rows >= 0; rows--) {
        if (rows == 0 && OW <= PBW) break;   /* (wide rows only) */
        const int64_t ppb = rows ? rows * OW : PBW, R = rows ? rows : OH < 2 ? OH : 2;
        const int64_t pb = (ppb + O2C_QLIN_NR - 1) / O2C_QLIN_NR * O2C_QLIN_NR;
        const int64_t BR = (R - 1) * g->s[1] + (g->k[1] - 1) * g->d[1] + 1;
        const int64_t words = KP * 2 * pb + C * BR * BW;
        if (BR * BW > QLIN_BAND_MAX_RATIO * taps * ppb || (double)ppb < QLIN_BAND_MIN_FILL * (double)pb) continue;
        const int fits = words <= KP * 2 * PBW;
        if (fits || best < 0 || words < best_words) {
            best = ppb;
            best_pb = pb;
            best_br = BR;
            best_words = words;
        }
        if (fits) break;   /* the most rows that fit */
    }
    if (best < 0) return;
    c->y[1] = lower_temp(L, DT_INT16, 1, &best_words);
    c->k[O2C_QLIN_BR] = best_br;
    c->k[O2C_QLIN_PBW] = best_pb;
    c->k[O2C_QLIN_PPB] = best;
    c->count = N * ((S + best - 1) / best);
}

/* The call of o2c_qlin_* (W packed here) or o2c_qdw_* (W as it is): the
 * operands; the caller sets the geometry */
/* the panel's pixels for an image of S output pixels: O2C_QLIN_PB, or S
 * rounded up to the register tile where that is fewer */
static int64_t qlin_panel(int64_t S)
{
    int64_t r = (S + O2C_QLIN_NR - 1) / O2C_QLIN_NR * O2C_QLIN_NR;
    return r < O2C_QLIN_PB ? r : O2C_QLIN_PB;
}

static KCall *qlin_call(Lowering *L, const QLin *q, int depthwise, int64_t K, int64_t S, int64_t count)
{
    const int64_t pixels = qlin_panel(S);
    const int64_t M = q->M, MT = (M + O2C_QLIN_MR - 1) / O2C_QLIN_MR, KP = (K + 1) / 2;
    KCall *c = lower_call(L, xfmt("o2c_%s_%s_%s", depthwise ? "qdw" : "qlin", dtype_suffix(q->x->dtype),
                                  dtype_suffix(q->y->dtype)), count);
    c->x[0] = q->x;
    c->x[1] = q->xz;
    if (depthwise) {
        c->x[2] = q->w;
        c->x[4] = qlin_multipliers(L, q, M);
    } else {
        int64_t wd[3] = {MT, KP, 2 * O2C_QLIN_MR};
        Tensor *wp = lower_const(L, "W_packed", DT_INT8, 3, wd);
        int8_t *dst = wp->data;
        /* per channel, the offset that brings W - wz into int8 (0 where it is) */
        int32_t *off = xalloc(sizeof(int32_t) * (size_t)M);   /* (the compile's pool) */
        int any = 0;
        for (int64_t m = 0; m < M; m++) {
            int32_t lo = 0, hi = 0;
            for (int64_t k = 0; k < K; k++) {
                int32_t v = qlin_weight(q, m, k, K);
                lo = k == 0 || v < lo ? v : lo;
                hi = k == 0 || v > hi ? v : hi;
            }
            off[m] = lo >= -128 && hi <= 127 ? 0 : lo + 128;
            any |= off[m] != 0;
            for (int64_t k = 0; k < K; k++)
                dst[((m / O2C_QLIN_MR) * KP + k / 2) * 2 * O2C_QLIN_MR + 2 * (m % O2C_QLIN_MR) + k % 2] =
                    (int8_t)(qlin_weight(q, m, k, K) - off[m]);
        }
        if (any) {
            Tensor *ot = lower_const(L, "W_offsets", DT_INT32, 1, &M);
            memcpy(ot->data, off, sizeof(int32_t) * (size_t)M);
            c->x[6] = ot;
        }
        c->x[2] = wp;
        c->x[4] = q->xs ? qlin_multipliers(L, q, MT * O2C_QLIN_MR) : NULL;
        int64_t pd[2] = {KP, 2 * pixels};
        c->y[1] = lower_temp(L, DT_INT16, 2, pd);
        c->k[O2C_QLIN_PBW] = c->k[O2C_QLIN_PPB] = pixels;
    }
    c->x[3] = q->b;
    c->x[5] = q->yz;
    c->y[0] = q->y;
    c->k[O2C_QLIN_M] = M;
    if (q->y->dtype != DT_INT32) qclamp(L->node, q->y->dtype, &c->k[O2C_QLIN_QMIN], &c->k[O2C_QLIN_QMAX]);
    return c;
}

/* ---- the Cortex-M integer kernels (o2c_qmcu_*, o2c_qmcudw_*) --------------- */

/* the largest division by a power of two 2^-e of the fixed-point
 * requantization (past it the multiplier moves no int32 accumulator by
 * half a step) */
#define QMCU_SHIFT_MAX 31

/* The fixed-point multipliers of the Cortex-M kernels (o2c_qmcu_core):
 * per channel the pair (mult, s), m = mult 2^-(s+1), m the float
 * multiplier onnxruntime computes (qlin_multipliers): m = f 2^-e (0.5 <= f
 * < 1) gives mult = f 2^31, exact since a float has 24 bits, and s = 30 +
 * e. A multiplier below 2^-(QMCU_SHIFT_MAX + 1) rounds every accumulator to
 * 0: (0, 30). NULL where one is not positive and finite or is 1 or more:
 * the reference kernel takes the node. */
static Tensor *qmcu_requant(Lowering *L, const QLin *q)
{
    int64_t n2 = 2 * q->M;
    for (int64_t c = 0; c < q->M; c++) {   /* first: does every multiplier fit */
        const float m = qlin_multiplier(q, c);
        if (!(m > 0) || !(m < 1)) return NULL;
    }
    Tensor *t = lower_const(L, "requant", DT_INT32, 1, &n2);
    int32_t *d = t->data;
    for (int64_t c = 0; c < q->M; c++) {
        const float m = qlin_multiplier(q, c);
        int e = 0;
        const float f = frexpf(m, &e);                   /* m = f 2^e, e <= 0 */
        d[2 * c] = -e > QMCU_SHIFT_MAX ? 0 : (int32_t)ldexpf(f, 31);
        d[2 * c + 1] = 30 + (-e > QMCU_SHIFT_MAX ? 0 : -e);
    }
    return t;
}

/* The call of o2c_qmcu_* (W packed here: rows of K rounded up to 4, each
 * four [w0 w2 w1 w3]) or o2c_qmcudw_* (W as it is); the caller sets the
 * geometry. NULL where the fixed-point multipliers do not apply. */
static KCall *qmcu_call(Lowering *L, const QLin *q, int depthwise, int64_t K, int64_t count)
{
    static const int PERM[4] = {0, 2, 1, 3};   /* SXTB16 takes bytes 0 and 2: see o2c_qmcu_gemm */
    Tensor *rq = qmcu_requant(L, q);
    if (!rq) return NULL;
    const int64_t M = q->M, KP4 = (K + 3) / 4 * 4;
    KCall *c = lower_call(L, xfmt("o2c_%s_%s_%s", depthwise ? "qmcudw" : "qmcu", dtype_suffix(q->x->dtype),
                                  dtype_suffix(q->y->dtype)), count);
    c->x[0] = q->x;
    c->x[1] = q->xz;
    if (depthwise) {
        c->x[2] = q->w;
    } else {
        int64_t wd[2] = {M, KP4}, cols = 2 * KP4;
        Tensor *wp = lower_const(L, "W_packed", DT_INT8, 2, wd);
        const int8_t *src = q->w->data;
        int8_t *dst = wp->data;
        for (int64_t m = 0; m < M; m++)
            for (int64_t k = 0; k < K; k++)
                dst[m * KP4 + k / 4 * 4 + PERM[k % 4]] = q->wkn ? src[k * M + m] : src[m * K + k];
        c->x[2] = wp;
        c->y[1] = lower_temp(L, DT_INT16, 1, &cols);
    }
    c->x[3] = q->b;
    c->x[4] = rq;
    c->x[5] = q->yz;
    c->y[0] = q->y;
    c->k[O2C_QLIN_M] = M;
    qclamp(L->node, q->y->dtype, &c->k[O2C_QLIN_QMIN], &c->k[O2C_QLIN_QMAX]);
    return c;
}

/* ---- MatMulInteger, QLinearMatMul ------------------------------------------ */

/* The stride of a quantization parameter along the rows (m) of an M x N
 * product, 0 for one value; -1 if it is not a row vector ([..., M, 1], or
 * a vector of M values where allow_1d). */
static int64_t row_stride(const Tensor *t, int64_t M, int allow_1d)
{
    if (!t || tensor_numel(t) == 1) return 0;
    if (tensor_numel(t) != M) return -1;
    if (t->rank == 1) return allow_1d ? 1 : -1;
    return t->dims[t->rank - 1] == 1 && t->dims[t->rank - 2] == M ? 1 : -1;
}

/* The same along the columns (n): [..., 1, N] or [N]. */
static int64_t col_stride(const Tensor *t, int64_t N)
{
    if (!t || tensor_numel(t) == 1) return 0;
    return tensor_numel(t) == N && t->dims[t->rank - 1] == N ? 1 : -1;
}

static void bad_granularity(Node *n, const Tensor *t, const char *what, const char *how)
{
    (void)n;
    fail("%s ('%s') is %s; onnx2c supports one value or %s", what, t->name, tensor_shape_str(t), how);
}


/* the inputs' roles: A, B, az, bz, as, bs, ys, yz (-1: none) */
static const int MMI_ROLES[8] = {0, 1, 2, 3, -1, -1, -1, -1};
static const int QLMM_ROLES[8] = {0, 3, 2, 5, 1, 4, 6, 7};

static int is_qlinear_matmul(const Node *n)
{
    return !strcmp(n->op_type, "QLinearMatMul") || !strcmp(n->op_type, "FusedQLinearMatMul");
}

/* The strides of the quantization parameters (O2C_QMM_*_M/_N), checked. */
static void qmm_params(Node *n, int64_t *k)
{
    const int *ro = is_qlinear_matmul(n) ? QLMM_ROLES : MMI_ROLES;
    Tensor *a = n->in[ro[0]], *b = n->in[ro[1]], *t;
    int64_t M = a->rank >= 2 ? a->dims[a->rank - 2] : 1, N = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    int mmi = !is_qlinear_matmul(n);
    if ((t = in_t(n, ro[2])) && (k[O2C_QMM_AZ_M] = row_stride(t, M, mmi)) < 0)
        bad_granularity(n, t, "a's zero point", "one per row of A (shape [M, 1])");
    if ((t = in_t(n, ro[3])) && (k[O2C_QMM_BZ_N] = col_stride(t, N)) < 0)
        bad_granularity(n, t, "b's zero point", "one per column of B (shape [1, N] or [N])");
    if (mmi) return;
    if ((k[O2C_QMM_AS_M] = row_stride(n->in[1], M, 0)) < 0)
        bad_granularity(n, n->in[1], "a_scale", "one per row of A (shape [M, 1])");
    if ((k[O2C_QMM_BS_N] = col_stride(n->in[4], N)) < 0)
        bad_granularity(n, n->in[4], "b_scale", "one per column of B (shape [1, N] or [N])");
    for (int j = 6; j <= 7; j++) {
        t = n->in[j];
        int64_t sn = col_stride(t, N), sm = sn < 0 ? row_stride(t, M, 0) : 0;
        if (sn < 0 && sm < 0) bad_granularity(n, t, j == 6 ? "y_scale" : "y_zero_point", "a row or column vector");
        k[j == 6 ? O2C_QMM_YS_M : O2C_QMM_YZ_M] = sn < 0 ? sm : 0;
        k[j == 6 ? O2C_QMM_YS_N : O2C_QMM_YZ_N] = sn < 0 ? 0 : sn;
    }
}

void infer_matmul_integer(Node *n)
{
    Tensor *a = n->in[0], *b = n->in[1];
    need_dtype(n, a, DTS_Q8);
    need_dtype(n, b, DTS_Q8);
    need_same_type(n, in_t(n, 2), a->dtype, "a_zero_point");
    need_same_type(n, in_t(n, 3), b->dtype, "b_zero_point");
    matmul_out_shape(n, a, b, DT_INT32);
    int64_t k[O2C_NK] = {0};
    qmm_params(n, k);
}

void infer_qlinear_matmul(Node *n)
{
    Tensor *a = n->in[0], *b = n->in[3], *yz = n->in[7];
    need_dtype(n, a, DTS_Q8);
    need_dtype(n, b, DTS_Q8);
    need_dtype(n, yz, DTS_Q8);
    need_same_type(n, n->in[2], a->dtype, "a_zero_point");
    need_same_type(n, n->in[5], b->dtype, "b_zero_point");
    static const int SCALES[] = {1, 4, 6};
    for (int i = 0; i < 3; i++) {
        int j = SCALES[i];
        Tensor *s = n->in[j];
        if (s->dtype != DT_FLOAT)
            fail("scale '%s' is %s; it must be float, float16 or bfloat16", s->name, dtype_name(s->dtype));
        if (orig_dtype(n, j) != orig_dtype(n, 1)) fail("the scales must all have one type");
    }
    matmul_out_shape(n, a, b, yz->dtype);
    int64_t k[O2C_NK] = {0};
    qmm_params(n, k);
}

/* A product with a constant 2-D int8 B on the packed kernel (o2c_qlin_*,
 * channels last: A's rows are the pixels); 0 if it does not apply */
/* A product of rows x K by the packed kernels, channels last (q->M
 * columns; W K x M, or M x K where !q->wkn); 0 if they do not apply */
static int lower_qproduct_packed(Lowering *L, QLin *q, int64_t K, int64_t rows)
{
    if (!qlin_applies(L, q) && !qlin_applies_offset(L, q, K)) return 0;
    KCall *c = L->target == TARGET_CORTEX_M ? qmcu_call(L, q, 0, K, (rows + 1) / 2)
                                            : qlin_call(L, q, 0, K, rows, (rows + qlin_panel(rows) - 1) / qlin_panel(rows));
    if (!c) return 0;
    static const int64_t ONE[] = {O2C_QLIN_IH, O2C_QLIN_OH, O2C_QLIN_KH, O2C_QLIN_KW, O2C_QLIN_SH, O2C_QLIN_SW,
                                  O2C_QLIN_DH, O2C_QLIN_DW, O2C_QLIN_CL};
    for (size_t i = 0; i < sizeof ONE / sizeof ONE[0]; i++) c->k[ONE[i]] = 1;
    c->k[O2C_QLIN_C] = K;
    c->k[O2C_QLIN_IW] = rows;
    c->k[O2C_QLIN_OW] = rows;
    return 1;
}

static int lower_qmatmul_packed(Node *n, Lowering *L, Tensor *bias)
{
    QLin q = {n->in[0], n->in[1], in_t(n, 2), n->in[3], n->in[4], in_t(n, 5), n->in[6], in_t(n, 7), bias,
              n->out[0], 0, 1};
    if (q.w->rank != 2 || q.x->rank < 1) return 0;
    q.M = q.w->dims[1];
    return lower_qproduct_packed(L, &q, q.w->dims[0], tensor_numel(q.x) / q.w->dims[0]);
}

/* MatMulInteger with a constant 2-D B on the packed kernel: int32 sums */
static int lower_mmi_packed(Node *n, Lowering *L)
{
    QLin q = {n->in[0], NULL, in_t(n, 2), n->in[1], NULL, in_t(n, 3), NULL, NULL, NULL, n->out[0], 0, 1};
    if (q.w->rank != 2 || q.x->rank < 1 || !q.w->data) return 0;
    q.M = q.w->dims[1];
    return lower_qproduct_packed(L, &q, q.w->dims[0], tensor_numel(q.x) / q.w->dims[0]);
}

void lower_qmatmul(Node *n, Lowering *L)
{
    if (is_qlinear_matmul(n) && lower_qmatmul_packed(n, L, NULL)) return;
    if (!is_qlinear_matmul(n) && lower_mmi_packed(n, L)) return;
    const int *ro = is_qlinear_matmul(n) ? QLMM_ROLES : MMI_ROLES;
    Tensor *a = n->in[ro[0]], *b = n->in[ro[1]], *y = n->out[0];
    int64_t M = a->rank >= 2 ? a->dims[a->rank - 2] : 1, K = a->dims[a->rank - 1];
    int64_t N = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    KCall *c = lower_call(L, xfmt("o2c_qmatmul_%s_%s_%s", dtype_suffix(a->dtype), dtype_suffix(b->dtype),
                                  dtype_suffix(y->dtype)), tensor_numel(y));
    for (int j = 0; j < 8; j++) c->x[j] = ro[j] >= 0 ? in_t(n, ro[j]) : NULL;
    c->y[0] = y;
    c->k[O2C_QMM_M] = M;
    c->k[O2C_QMM_N] = N;
    c->k[O2C_QMM_K] = K;
    c->k[O2C_QMM_R] = matmul_batch(n, a, b, M * K, K * N, c->k + O2C_QMM_BDIMS, c->k + O2C_QMM_ASTR,
                                   c->k + O2C_QMM_BSTR);
    qmm_params(n, c->k);
    c->k[O2C_QMM_PREC] = is_qlinear_matmul(n) ? prec_of(orig_dtype(n, 1)) : O2C_QPREC_NONE;
}

/* ---- onnx2c FusedQLinearMatMul ------------------------------------------------
 * QLinearMatMul's inputs with a constant 2-D int8 B, then an int32 bias of
 * one value per column (input 8, optional); attributes y_min, y_max: the
 * output clamp of a fused activation (passes/quantize.c makes it from
 * DequantizeLinear -> MatMul/Gemm [-> Add bias] [-> Relu/Clip] ->
 * QuantizeLinear). */

void infer_fused_qlinear_matmul(Node *n)
{
    Tensor *b = n->in[3], *bias = in_t(n, 8);
    if (b->rank != 2) fail("B ('%s') is %s; it must be a matrix", b->name, tensor_shape_str(b));
    need_scalar(n, n->in[1], "a_scale");
    need_scalar(n, n->in[2], "a_zero_point");
    need_scalar(n, n->in[6], "y_scale");
    need_scalar(n, n->in[7], "y_zero_point");
    if (bias && (bias->dtype != DT_INT32 || bias->rank != 1 || bias->dims[0] != b->dims[1]))
        fail("the bias ('%s') is %s %s; it must be an int32 vector of %lld values", bias->name,
             dtype_name(bias->dtype), tensor_shape_str(bias), (long long)b->dims[1]);
    infer_qlinear_matmul(n);
}

/* In standard ops: QLinearConv, or MatMulInteger + the bias, scaled and
 * quantized; then Clip where the clamp is narrower than the type */
void decompose_fused_qlinear(const Node *n, Decomp *d)
{
    static const char *const CONV_ATTRS[] = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides", NULL};
    const char *y;
    int dt = n->out[0]->dtype;
    if (is_qlinear_conv(n)) {
        y = dc_op(d, "QLinearConv", 9, dc_in(d, 0), dc_in(d, 1), dc_in(d, 2), dc_in(d, 3), dc_in(d, 4), dc_in(d, 5),
                  dc_in(d, 6), dc_in(d, 7), dc_in(d, 8));
        dc_copy_attrs(d, n, CONV_ATTRS);
    } else {
        const char *acc = dc_op(d, "MatMulInteger", 4, dc_in(d, 0), dc_in(d, 3), dc_in(d, 2), dc_in(d, 5));
        if (in_t((Node *)n, 8)) acc = dc_op(d, "Add", 2, acc, dc_in(d, 8));
        const char *f = dc_op(d, "Cast", 1, acc);
        dc_attr_i(d, "to", DT_FLOAT);
        f = dc_op(d, "Mul", 2, f, dc_op(d, "Mul", 2, dc_in(d, 1), dc_in(d, 4)));
        y = dc_op(d, "QuantizeLinear", 3, f, dc_in(d, 6), dc_in(d, 7));
    }
    int64_t lo, hi;
    qclamp(n, dt, &lo, &hi);
    if (lo > (dt == DT_UINT8 ? 0 : -128) || hi < (dt == DT_UINT8 ? 255 : 127))
        y = dc_op(d, "Clip", 3, y, dc_const_f(d, dt, (double)lo), dc_const_f(d, dt, (double)hi));
    dc_output(d, 0, y);
}

void lower_fused_qlinear_matmul(Node *n, Lowering *L)
{
    if (lower_qmatmul_packed(n, L, in_t(n, 8))) return;
    /* the reference: com.microsoft QGemm's kernel on A as rows x K */
    Tensor *a = n->in[0], *b = n->in[3], *y = n->out[0];
    int64_t K = b->dims[0], N = b->dims[1], M = tensor_numel(a) / K, nsc = tensor_numel(n->in[4]);
    Tensor *sc = qscale_call(L, n->in[1], n->in[4], n->in[6], 1.0, "scales");
    KCall *k = lower_call(L, xfmt("o2c_qgemm_%s_%s_%s", dtype_suffix(a->dtype), dtype_suffix(b->dtype),
                                  dtype_suffix(y->dtype)), tensor_numel(y));
    k->x[0] = a;
    k->x[1] = in_t(n, 2);
    k->x[2] = b;
    k->x[3] = in_t(n, 5);
    k->x[4] = in_t(n, 8);
    k->x[5] = sc;
    k->x[6] = in_t(n, 7);
    k->y[0] = y;
    k->k[O2C_QGEMM_M] = M;
    k->k[O2C_QGEMM_N] = N;
    k->k[O2C_QGEMM_K] = K;
    k->k[O2C_QGEMM_SAM] = K;
    k->k[O2C_QGEMM_SAK] = 1;
    k->k[O2C_QGEMM_SBK] = N;
    k->k[O2C_QGEMM_SBN] = 1;
    k->k[O2C_QGEMM_SCN] = in_t(n, 8) != NULL;
    k->k[O2C_QGEMM_BZ_N] = in_t(n, 5) && tensor_numel(n->in[5]) > 1;
    k->k[O2C_QGEMM_SC_N] = nsc > 1;
    qclamp(n, y->dtype, &k->k[O2C_QGEMM_QMIN], &k->k[O2C_QGEMM_QMAX]);
}

/* ---- onnx2c FusedWQMatMul (weight-only quantization) ----------------------- */

static const int DTS_WQ[] = {DT_UINT8, DT_INT8, DT_UINT4, DT_INT4, 0};

static int wq_narrow(int dt) { return dt == DT_UINT4 || dt == DT_INT4; }

/* the weight or zero point i of a 4- or 8-bit tensor (one element a byte;
 * a 4-bit one in the low bits) */
static int32_t wq_at(const Tensor *t, int64_t i)
{
    const uint8_t b = ((const uint8_t *)t->data)[i];
    switch (t->dtype) {
    case DT_INT8: return (int8_t)b;
    case DT_UINT4: return b & 15;
    case DT_INT4: return (int32_t)(b & 15) - ((b & 8) << 1);
    default: return b;
    }
}

/* the scale or zero point of column j, K block kb, from a tensor of one
 * value, N (per column) or KB x N (blocked) */
static int64_t wq_param_at(const Tensor *t, int64_t kb, int64_t j, int64_t N)
{
    int64_t n = tensor_numel(t);
    return n == 1 ? 0 : n == N ? j : kb * N + j;
}

void infer_fused_wq_matmul(Node *n)
{
    Tensor *a = n->in[0], *w = n->in[1], *s = n->in[2], *z = in_t(n, 3), *b = in_t(n, 4);
    static const int DTS_F32[] = {DT_FLOAT, 0};
    need_dtype(n, a, DTS_F32);
    need_dtype(n, w, DTS_WQ);
    need_dtype(n, s, DTS_F32);
    if (w->rank != 2 || !w->data) fail("W ('%s') is %s; it must be a constant matrix", w->name, tensor_shape_str(w));
    int64_t K = w->dims[0], N = w->dims[1], bs = attr_i(n, "block_size");
    if (a->rank < 1 || a->dims[a->rank - 1] != K)
        fail("A ('%s', %s) must end in W's %lld rows", a->name, tensor_shape_str(a), (long long)K);
    if (bs < 0) fail("block_size must not be negative, it is %lld", (long long)bs);
    if (bs > 0) {
        int64_t KB = (K + bs - 1) / bs;
        if (!s->data || s->rank != 2 || s->dims[0] != KB || s->dims[1] != N)
            fail("the scale ('%s') is %s; blocks of %lld of W's %lld rows need a constant %lld x %lld", s->name,
                 tensor_shape_str(s), (long long)bs, (long long)K, (long long)KB, (long long)N);
    } else if (!s->data || (tensor_numel(s) != 1 && tensor_numel(s) != N)) {
        fail("the scale ('%s') must be a constant of 1 or %lld values", s->name, (long long)N);
    }
    if (z && (z->dtype != w->dtype || !z->data || (tensor_numel(z) != 1 && tensor_numel(z) != tensor_numel(s))))
        fail("the zero point ('%s') must be a constant %s of 1 or %lld values (as the scale)", z->name,
             dtype_name(w->dtype), (long long)tensor_numel(s));
    if (b && (b->dtype != DT_FLOAT || tensor_numel(b) != N))
        fail("the bias ('%s', %s %s) must be float of %lld values", b->name, dtype_name(b->dtype), tensor_shape_str(b),
             (long long)N);
    int64_t d[O2C_MAX_RANK];
    memcpy(d, a->dims, sizeof(int64_t) * (size_t)a->rank);
    d[a->rank - 1] = N;
    set_out(n, 0, DT_FLOAT, a->rank, d);
}

/* the operands of an o2c_wqmm* call: A, the packed weights, zero points
 * and scales, the bias; Y */
static void wq_operands(KCall *c, Node *n, Tensor *wp, Tensor *zp, Tensor *sp)
{
    c->x[0] = n->in[0];
    c->x[1] = wp;
    c->x[2] = zp;
    c->x[3] = sp;
    c->x[4] = in_t(n, 4);
    c->y[0] = n->out[0];
}

/* 8-bit weights, one scale a column or for all: o2c_wqmm (the scale once
 * at the end of the sums) */
static void lower_wq_columns(Node *n, Lowering *L)
{
    Tensor *a = n->in[0], *w = n->in[1], *s = n->in[2], *z = in_t(n, 3);
    const int64_t K = w->dims[0], N = w->dims[1], rows = tensor_numel(a) / (K ? K : 1);
    const int64_t NBLK = (N + O2C_WQMM_NR - 1) / O2C_WQMM_NR, NP = NBLK * O2C_WQMM_NR;
    int64_t wd[3] = {NBLK, K, O2C_WQMM_NR};
    Tensor *wp = lower_const(L, "W_packed", w->dtype, 3, wd);
    Tensor *zp = lower_const(L, "zero_points", DT_INT32, 1, &NP), *sp = lower_const(L, "scales", DT_FLOAT, 1, &NP);
    unsigned char *dst = wp->data;
    const unsigned char *src = w->data;
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < N; j++)
            dst[((j / O2C_WQMM_NR) * K + k) * O2C_WQMM_NR + j % O2C_WQMM_NR] = src[k * N + j];
    for (int64_t j = 0; j < N; j++) {
        ((int32_t *)zp->data)[j] = z ? wq_at(z, wq_param_at(z, 0, j, N)) : 0;
        ((float *)sp->data)[j] = qscale_at(s, j);
    }
    KCall *c = lower_call(L, xfmt("o2c_wqmm_%s_f32", dtype_suffix(w->dtype)),
                          (rows + O2C_WQMM_RB - 1) / O2C_WQMM_RB * NBLK);
    wq_operands(c, n, wp, zp, sp);
    c->k[O2C_WQMM_ROWS] = rows;
    c->k[O2C_WQMM_K] = K;
    c->k[O2C_WQMM_N] = N;
}

/* 4-bit weights or scales per block of K: o2c_wqmmb (each weight
 * dequantized as DequantizeLinear does it; runtime/c/params/quant.h has the
 * packing). Signed weights and zero points are stored plus 2^(bits - 1):
 * their differences stay. */
static void lower_wq_blocks(Node *n, Lowering *L)
{
    Tensor *a = n->in[0], *w = n->in[1], *s = n->in[2], *z = in_t(n, 3);
    const int64_t K = w->dims[0], N = w->dims[1], rows = tensor_numel(a) / (K ? K : 1);
    const int bits = wq_narrow(w->dtype) ? 4 : 8;
    const int32_t off = w->dtype == DT_INT4 ? 8 : w->dtype == DT_INT8 ? 128 : 0;
    const int64_t bs = attr_i(n, "block_size"), BS = bs ? bs : K ? K : 1, KB = (K + BS - 1) / BS;
    const int64_t NBLK = (N + O2C_WQMM_NR - 1) / O2C_WQMM_NR, KBYTES = O2C_WQMM_NR * bits / 8, HALF = O2C_WQMM_NR / 2;
    int64_t wd[3] = {NBLK, K, KBYTES}, pd[3] = {NBLK, KB, O2C_WQMM_NR};
    Tensor *wp = lower_const(L, "W_packed", DT_UINT8, 3, wd);
    Tensor *zp = lower_const(L, "zero_points", DT_UINT8, 3, pd), *sp = lower_const(L, "scales", DT_FLOAT, 3, pd);
    uint8_t *dst = wp->data;
    memset(dst, 0, (size_t)(NBLK * K * KBYTES));
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < N; j++) {
            const int32_t u = wq_at(w, k * N + j) + off;
            const int64_t at = (j / O2C_WQMM_NR * K + k) * KBYTES, c = j % O2C_WQMM_NR;
            if (bits == 8) dst[at + c] = (uint8_t)u;
            else dst[at + c % HALF] |= (uint8_t)(u << (c < HALF ? 0 : 4));
        }
    uint8_t *zf = zp->data;
    float *sf = sp->data;
    memset(zf, 0, (size_t)(NBLK * KB * O2C_WQMM_NR));
    memset(sf, 0, sizeof(float) * (size_t)(NBLK * KB * O2C_WQMM_NR));
    for (int64_t kb = 0; kb < KB; kb++)
        for (int64_t j = 0; j < N; j++) {
            const int64_t at = (j / O2C_WQMM_NR * KB + kb) * O2C_WQMM_NR + j % O2C_WQMM_NR;
            zf[at] = (uint8_t)((z ? wq_at(z, wq_param_at(z, kb, j, N)) : 0) + off);
            sf[at] = qscale_at(s, wq_param_at(s, kb, j, N));
        }
    /* many rows (the C target's tiled kernels): each column block's weights
     * dequantized once into a panel */
    const int panel = L->tiled && rows >= O2C_WQMMP_MIN_ROWS;
    KCall *c = lower_call(L, xfmt("o2c_wqmm%s_w%d_f32", panel ? "p" : "b", bits),
                          panel ? NBLK : (rows + O2C_WQMM_RB - 1) / O2C_WQMM_RB * NBLK);
    if (panel) {
        int64_t pd[2] = {K, O2C_WQMM_NR};
        c->y[1] = lower_temp(L, DT_FLOAT, 2, pd);
    }
    wq_operands(c, n, wp, zp, sp);
    c->k[O2C_WQMMB_ROWS] = rows;
    c->k[O2C_WQMMB_K] = K;
    c->k[O2C_WQMMB_N] = N;
    c->k[O2C_WQMMB_BS] = BS;
}

void lower_fused_wq_matmul(Node *n, Lowering *L)
{
    if (attr_i(n, "block_size") || wq_narrow(n->in[1]->dtype)) lower_wq_blocks(n, L);
    else lower_wq_columns(n, L);
}

/* DequantizeLinear (along the columns where the scale has N values, in
 * blocks along the rows where block_size says so), MatMul, Add */
void decompose_fused_wq_matmul(const Node *n, Decomp *d)
{
    const char *wd = dc_op(d, "DequantizeLinear", in_t((Node *)n, 3) ? 3 : 2, dc_in(d, 1), dc_in(d, 2), dc_in(d, 3));
    int64_t bs = attr_i(n, "block_size");
    if (bs) {
        dc_attr_i(d, "axis", 0);
        dc_attr_i(d, "block_size", bs);
    } else if (tensor_numel(n->in[2]) > 1) {
        dc_attr_i(d, "axis", 1);
    }
    const char *y = dc_op(d, "MatMul", 2, dc_in(d, 0), wd);
    if (in_t((Node *)n, 4)) y = dc_op(d, "Add", 2, y, dc_in(d, 4));
    dc_output(d, 0, y);
}

/* com.microsoft MatMulNBits: A [..., K] times the weights B holds as N x
 * ceil(K / block_size) blocks of block_size values of `bits` bits (the
 * first in the low bits), dequantized (q - zp) scale per block and column;
 * the zero points packed likewise (default 2^(bits - 1)). It becomes
 * FusedWQMatMul with W as K x N unsigned 4- or 8-bit values and the
 * scales and zero points as ceil(K / block_size) x N. */
int expand_matmul_nbits(Graph *g, Node *n)
{
    Tensor *a = n->in[0], *b = n->in[1], *s = n->in[2], *z = in_t(n, 3), *gi = in_t(n, 4), *bias = in_t(n, 5);
    if (!attr_has(n, "K") || !attr_has(n, "N") || !attr_has(n, "block_size"))
        fail("MatMulNBits needs the attributes K, N and block_size");
    const int64_t K = attr_i(n, "K"), N = attr_i(n, "N"), bits = attr_i(n, "bits"), bs = attr_i(n, "block_size");
    if (bits != 4 && bits != 8) fail("MatMulNBits with bits = %lld is not supported (onnx2c reads 4 and 8)", (long long)bits);
    if (K < 1 || N < 1) fail("K (%lld) and N (%lld) must be positive", (long long)K, (long long)N);
    if (bs < 16 || (bs & (bs - 1)) || bs > 1 << 20)
        fail("block_size must be a power of 2 and at least 16; it is %lld", (long long)bs);
    if (a->dtype != DT_FLOAT)
        fail("MatMulNBits of %s A ('%s') is not supported (onnx2c computes it in float32)", dtype_name(a->dtype), a->name);
    if (a->rank < 1 || a->dims[a->rank - 1] != K)
        fail("A ('%s', %s) must end in K = %lld", a->name, tensor_shape_str(a), (long long)K);
    const int64_t KB = (K + bs - 1) / bs, blob = bs * bits / 8, zpb = bits == 4 ? (KB + 1) / 2 : KB;
    if (!b->data || b->dtype != DT_UINT8 || tensor_numel(b) != N * KB * blob)
        fail("B ('%s', %s %s) must be a constant uint8 of N x ceil(K / block_size) x block_size * bits / 8 = "
             "%lld x %lld x %lld bytes", b->name, dtype_name(b->dtype), tensor_shape_str(b), (long long)N,
             (long long)KB, (long long)blob);
    if (!s->data || s->dtype != DT_FLOAT || tensor_numel(s) != N * KB)
        fail("the scales ('%s', %s %s) must be a constant float of N x ceil(K / block_size) = %lld values", s->name,
             dtype_name(s->dtype), tensor_shape_str(s), (long long)(N * KB));
    for (int64_t i = 0; i < N * KB; i++)
        if (!isfinite(((const float *)s->data)[i])) fail("the scales ('%s') hold a value that is not finite", s->name);
    if (z && z->dtype != DT_UINT8)
        fail("zero points ('%s') of type %s are not supported (onnx2c reads packed uint8 zero points)", z->name,
             dtype_name(z->dtype));
    if (z && (!z->data || tensor_numel(z) != N * zpb))
        fail("the zero points ('%s', %s) must be a constant of N x ceil(ceil(K / block_size) * bits / 8) = %lld x %lld "
             "bytes", z->name, tensor_shape_str(z), (long long)N, (long long)zpb);
    if (gi) {   /* g_idx: the block of each k; only the plain order (k / block_size) is read */
        if (!gi->data || !dtype_is_int(gi->dtype) || tensor_numel(gi) != K)
            fail("g_idx ('%s') must be a constant of K = %lld integers", gi->name, (long long)K);
        for (int64_t k = 0; k < K; k++)
            if (elem_i64(gi->dtype, gi->data, k) != k / bs)
                fail("g_idx ('%s') reorders the blocks (act-order); onnx2c reads only g_idx[k] = k / block_size", gi->name);
    }
    if (bias && (bias->dtype != DT_FLOAT || tensor_numel(bias) != N))
        fail("the bias ('%s', %s %s) must be float of N = %lld values", bias->name, dtype_name(bias->dtype),
             tensor_shape_str(bias), (long long)N);
    const int dt = bits == 4 ? DT_UINT4 : DT_UINT8;
    const int64_t wdim[2] = {K, N}, pdim[2] = {KB, N};
    Tensor *w = graph_new_const(g, "MatMulNBits_W", dt, 2, wdim);
    Tensor *sc = graph_new_const(g, "MatMulNBits_scales", DT_FLOAT, 2, pdim);
    Tensor *zp = graph_new_const(g, "MatMulNBits_zero_points", dt, 2, pdim);
    const uint8_t *bb = b->data, *zb = z ? z->data : NULL;
    uint8_t *wb = w->data, *zo = zp->data;
    for (int64_t j = 0; j < N; j++)
        for (int64_t k = 0; k < K; k++) {
            const int64_t kb = k / bs, i = k % bs;
            const uint8_t byte = bb[(j * KB + kb) * blob + i * bits / 8];
            wb[k * N + j] = bits == 8 ? byte : (uint8_t)((byte >> (4 * (i & 1))) & 15);
        }
    for (int64_t j = 0; j < N; j++)
        for (int64_t kb = 0; kb < KB; kb++) {
            ((float *)sc->data)[kb * N + j] = ((const float *)s->data)[j * KB + kb];
            uint8_t zv = (uint8_t)(1u << (bits - 1));
            if (zb) zv = bits == 8 ? zb[j * zpb + kb] : (uint8_t)((zb[j * zpb + kb / 2] >> (4 * (kb & 1))) & 15);
            zo[kb * N + j] = zv;
        }
    Tensor **in = xalloc(sizeof(Tensor *) * 5);
    in[0] = a;
    in[1] = w;
    in[2] = sc;
    in[3] = zp;
    in[4] = bias;
    n->in = in;
    n->nin = bias ? 5 : 4;
    n->op = node_op(n, "onnx2c", "FusedWQMatMul");
    n->op_type = "FusedWQMatMul";
    n->domain = "onnx2c";
    n->attrs = NULL;
    n->nattrs = 0;
    node_set_attr_i(n, "block_size", bs);
    g->uses_stale = 1;
    return 1;
}

/* ---- ConvInteger, QLinearConv --------------------------------------------- */


/* the inputs' roles: X, W, xz, wz, (QLinearConv:) xs, ws, ys, yz, B */
static const int CI_ROLES[9] = {0, 1, 2, 3, -1, -1, -1, -1, -1};
static const int QLC_ROLES[9] = {0, 3, 2, 5, 1, 4, 6, 7, 8};

/* checks, the geometry; returns M (output channels) */
static int64_t qconv_geom(Node *n, ConvGeom *g, int64_t *group)
{
    const int *ro = is_qlinear_conv(n) ? QLC_ROLES : CI_ROLES;
    Tensor *x = n->in[ro[0]], *w = n->in[ro[1]];
    need_dtype(n, x, DTS_Q8);
    need_dtype(n, w, DTS_Q8);
    need_same_type(n, in_t(n, ro[2]), x->dtype, "x_zero_point");
    need_same_type(n, in_t(n, ro[3]), w->dtype, "w_zero_point");
    if (x->rank < 3) fail("input '%s' is %s; %s needs N x C x D1 [x D2 [x D3]]", x->name, tensor_shape_str(x), n->op_type);
    if (w->rank != x->rank)
        fail("W ('%s') is %s; it must have the rank of X (%s)", w->name, tensor_shape_str(w), tensor_shape_str(x));
    *group = attr_i(n, "group");
    if (*group < 1) fail("group must be positive, got %lld", (long long)*group);
    int nsp = x->rank - 2;
    int64_t kernel[MAX_RANK];
    for (int i = 0; i < nsp; i++) kernel[i] = w->dims[2 + i];
    const int64_t *ks;
    int nks = attr_ints(n, "kernel_shape", &ks);
    if (nks && nks != nsp) fail("kernel_shape has %d values; the input has %d spatial dimensions", nks, nsp);
    for (int i = 0; i < nks; i++)
        if (ks[i] != kernel[i]) fail("kernel_shape does not match the shape of W ('%s', %s)", w->name, tensor_shape_str(w));
    int64_t M = w->dims[0];
    if (w->dims[1] * *group != x->dims[1])
        fail("W ('%s') is %s: its second dimension times group (%lld) must equal the input channels %lld", w->name,
             tensor_shape_str(w), (long long)*group, (long long)x->dims[1]);
    if (M % *group) fail("the output channels (%lld) are not a multiple of group (%lld)", (long long)M, (long long)*group);
    conv_geom_init(n, x, kernel, nsp, g);
    conv_geom_forward(n, g, 0);
    need_scalar(n, in_t(n, ro[2]), "x_zero_point");
    Tensor *wz = in_t(n, ro[3]);
    if (wz && tensor_numel(wz) != 1 && (wz->rank != 1 || wz->dims[0] != M))
        bad_granularity(n, wz, "w_zero_point", "one per output channel");
    return M;
}

static void qconv_out(Node *n, Tensor *x, int64_t M, const ConvGeom *g, int dt)
{
    int64_t dims[MAX_RANK];
    dims[0] = x->dims[0];
    dims[1] = M;
    for (int i = 0; i < g->nsp; i++) dims[2 + i] = g->out[3 - g->nsp + i];
    set_out(n, 0, dt, x->rank, dims);
}

void infer_conv_integer(Node *n)
{
    ConvGeom g;
    int64_t group, M = qconv_geom(n, &g, &group);
    qconv_out(n, n->in[0], M, &g, DT_INT32);
}

void infer_qlinear_conv(Node *n)
{
    ConvGeom g;
    int64_t group, M = qconv_geom(n, &g, &group);
    Tensor *yz = n->in[7], *b = in_t(n, 8);
    need_dtype(n, yz, DTS_Q8);
    if (n->promoted) fail("the scales must be float");
    need_float_scale(n, n->in[1], "x_scale");
    need_float_scale(n, n->in[4], "w_scale");
    need_float_scale(n, n->in[6], "y_scale");
    need_scalar(n, n->in[1], "x_scale");
    need_scalar(n, n->in[6], "y_scale");
    need_scalar(n, yz, "y_zero_point");
    Tensor *ws = n->in[4];
    if (tensor_numel(ws) != 1 && (ws->rank != 1 || ws->dims[0] != M))
        bad_granularity(n, ws, "w_scale", "one per output channel");
    if (b && (b->dtype != DT_INT32 || b->rank != 1 || b->dims[0] != M))
        fail("B ('%s') is %s %s; it must be an int32 vector of %lld values", b->name, dtype_name(b->dtype),
             tensor_shape_str(b), (long long)M);
    qconv_out(n, n->in[0], M, &g, yz->dtype);
}

/* the most scratch a depthwise conv takes to run a plane at a time */
#define QDW_PLANE_MAX_BYTES (128 * 1024)

/* QLinearConv on the packed kernels: 1-D and 2-D, group 1 (o2c_qlin_*) or
 * depthwise (o2c_qdwp_*, o2c_qdw_*); 0 if they do not apply */
static int lower_qconv_packed(Node *n, Lowering *L, const ConvGeom *g, int64_t group, int64_t M)
{
    QLin q = is_qlinear_conv(n) ? (QLin){n->in[0], n->in[1], in_t(n, 2), n->in[3], n->in[4], in_t(n, 5), n->in[6],
                                         in_t(n, 7), in_t(n, 8), n->out[0], M, 0}
                                : (QLin){n->in[0], NULL, in_t(n, 2), n->in[1], NULL, in_t(n, 3), NULL, NULL, NULL,
                                         n->out[0], M, 0};   /* ConvInteger: int32 sums */
    const Tensor *x = q.x;
    int64_t C = x->dims[1];
    int depthwise = group > 1 && group == C && M == C;
    int64_t K = C / group * g->k[1] * g->k[2], N = x->dims[0], S = g->out[1] * g->out[2];
    if (g->nsp > 2 || (group != 1 && !depthwise) ||
        !(qlin_applies(L, &q) || (!depthwise && qlin_applies_offset(L, &q, K))))
        return 0;
    /* the depthwise conv a plane at a time (o2c_qdwp) at strides of 1 or 2
     * where its scratch (the sums and the padded int16 phase planes) stays
     * small; else a row at a time (o2c_qdw) */
    const int64_t sh = g->s[1], sw = g->s[2];
    const int64_t pw = g->out[2] + (g->k[2] - 1) * g->d[2] / sw, ph = g->out[1] + (g->k[1] - 1) * g->d[1] / sh;
    const int64_t plane = g->out[1] * pw + O2C_QDW_SLACK + (sh * sw * (ph * pw + O2C_QDW_SLACK) + 1) / 2;
    int by_plane = depthwise && sh >= 1 && sh <= 2 && sw >= 1 && sw <= 2 && plane * 4 <= QDW_PLANE_MAX_BYTES;
    KCall *c;
    if (L->target == TARGET_CORTEX_M) {
        c = qmcu_call(L, &q, depthwise, K, depthwise ? N * C * g->out[1] : N * ((S + 1) / 2));
        if (!c) return 0;
    } else {
        int64_t count = by_plane ? N * C : depthwise ? N * C * g->out[1] : N * ((S + qlin_panel(S) - 1) / qlin_panel(S));
        c = qlin_call(L, &q, depthwise, K, S, count);
    }
    if (L->target == TARGET_CORTEX_M && depthwise) {
        int64_t ow = g->out[2];
        c->y[1] = lower_temp(L, DT_INT32, 1, &ow);
    } else if (L->target != TARGET_CORTEX_M && by_plane) {
        c->kernel = kernel_find(xfmt("o2c_qdwp_%s_%s", dtype_suffix(q.x->dtype), dtype_suffix(q.y->dtype)));
        c->y[1] = lower_temp(L, DT_INT32, 1, &plane);
    } else if (L->target != TARGET_CORTEX_M && depthwise) {
        int64_t ow = g->out[2];
        c->y[1] = lower_temp(L, DT_INT32, 1, &ow);
    }
    c->k[O2C_QLIN_C] = C;
    c->k[O2C_QLIN_IH] = g->in[1];
    c->k[O2C_QLIN_IW] = g->in[2];
    c->k[O2C_QLIN_OH] = g->out[1];
    c->k[O2C_QLIN_OW] = g->out[2];
    c->k[O2C_QLIN_KH] = g->k[1];
    c->k[O2C_QLIN_KW] = g->k[2];
    c->k[O2C_QLIN_SH] = g->s[1];
    c->k[O2C_QLIN_SW] = g->s[2];
    c->k[O2C_QLIN_DH] = g->d[1];
    c->k[O2C_QLIN_DW] = g->d[2];
    c->k[O2C_QLIN_PH] = g->pb[1];
    c->k[O2C_QLIN_PW] = g->pb[2];
    if (L->target != TARGET_CORTEX_M && !depthwise && g->k[1] * g->k[2] > 1)
        qlin_band(L, c, g, C, K, N, S);
    return 1;
}

void lower_qconv(Node *n, Lowering *L)
{
    const int *ro = is_qlinear_conv(n) ? QLC_ROLES : CI_ROLES;
    Tensor *x = n->in[ro[0]], *w = n->in[ro[1]], *y = n->out[0];
    ConvGeom g;
    int64_t group, M = qconv_geom(n, &g, &group);
    if (lower_qconv_packed(n, L, &g, group, M)) return;
    Tensor *mul = NULL;
    int64_t nmul = 0;
    if (is_qlinear_conv(n)) {   /* the multipliers x_scale * w_scale / y_scale, one per channel or one */
        nmul = tensor_numel(n->in[4]);
        mul = qscale_call(L, n->in[1], n->in[4], n->in[6], 1.0, "multipliers");
    }
    KCall *c = lower_call(L, xfmt("o2c_qconv_%s_%s_%s", dtype_suffix(x->dtype), dtype_suffix(w->dtype),
                                  dtype_suffix(y->dtype)), tensor_numel(y));
    c->x[0] = x;
    c->x[1] = w;
    c->x[2] = in_t(n, ro[2]);
    c->x[3] = in_t(n, ro[3]);
    c->x[4] = ro[8] >= 0 ? in_t(n, ro[8]) : NULL;
    c->x[5] = mul;
    c->x[6] = ro[7] >= 0 ? n->in[ro[7]] : NULL;
    c->y[0] = y;
    c->k[O2C_QCONV_C] = x->dims[1];
    c->k[O2C_QCONV_M] = M;
    c->k[O2C_QCONV_GROUP] = group;
    for (int i = 0; i < 3; i++) {
        c->k[O2C_QCONV_IN + i] = g.in[i];
        c->k[O2C_QCONV_OUT + i] = g.out[i];
        c->k[O2C_QCONV_K + i] = g.k[i];
        c->k[O2C_QCONV_S + i] = g.s[i];
        c->k[O2C_QCONV_D + i] = g.d[i];
        c->k[O2C_QCONV_PB + i] = g.pb[i];
    }
    c->k[O2C_QCONV_WZ_M] = c->x[3] && tensor_numel(c->x[3]) > 1;
    c->k[O2C_QCONV_MUL_M] = nmul > 1;
    if (is_qlinear_conv(n)) qclamp(n, y->dtype, &c->k[O2C_QCONV_QMIN], &c->k[O2C_QCONV_QMAX]);
}

/* ---- com.microsoft: QLinearAdd, QLinearMul --------------------------------- */

/* checks shared by the com.microsoft ops: data of type dt (uint8 or int8),
 * float scales and zero points of one value */
static void ms_scale(Node *n, int j, const char *what)
{
    Tensor *t = need_in(n, j);
    if (n->promoted || t->dtype != DT_FLOAT) fail("%s ('%s') must be float", what, t->name);
    need_scalar(n, t, what);
}

static void ms_zero_point(Node *n, int j, int dt, const char *what)
{
    Tensor *t = in_t(n, j);
    need_same_type(n, t, dt, what);
    need_scalar(n, t, what);
}

/* x (input 0, uint8 or int8) and the float scales and zero points of x
 * and y as inputs 1 to 4 (QLinearSigmoid, QLinearLeakyRelu, the pools),
 * named "X_scale" ... with x and y the letters X and Y (zp_required: the
 * zero points may not be left out) */
static void ms_xy_params(Node *n, const char *x, const char *y, int zp_required)
{
    need_dtype(n, n->in[0], DTS_Q8);
    ms_scale(n, 1, xfmt("%s_scale", x));
    ms_scale(n, 3, xfmt("%s_scale", y));
    if (zp_required && (!n->in[2] || !n->in[4])) fail("%s_zero_point and %s_zero_point are required", x, y);
    ms_zero_point(n, 2, n->in[0]->dtype, xfmt("%s_zero_point", x));
    ms_zero_point(n, 4, n->in[0]->dtype, xfmt("%s_zero_point", y));
}

void infer_qlinear_binary(Node *n)
{
    Tensor *a = n->in[0], *b = need_in(n, 3);
    need_dtype(n, a, DTS_Q8);
    need_same_type(n, b, a->dtype, "B");
    ms_scale(n, 1, "A_scale");
    ms_scale(n, 4, "B_scale");
    ms_scale(n, 6, "C_scale");
    ms_zero_point(n, 2, a->dtype, "A_zero_point");
    ms_zero_point(n, 5, a->dtype, "B_zero_point");
    ms_zero_point(n, 7, a->dtype, "C_zero_point");
    int64_t dims[MAX_RANK];
    int r = broadcast_shapes(n, a, b, dims);
    set_out(n, 0, a->dtype, r, dims);
}

void lower_qlinear_binary(Node *n, Lowering *L)
{
    Tensor *a = n->in[0], *b = n->in[3], *y = n->out[0];
    KCall *c = lower_call(L, xfmt("o2c_%s_%s", strcmp(n->op_type, "QLinearMul") ? "qladd" : "qlmul",
                                  dtype_suffix(a->dtype)), tensor_numel(y));
    for (int j = 0; j < 8; j++) c->x[j] = in_t(n, j);
    c->y[0] = y;
    if (tensor_numel(a) == tensor_numel(y) && tensor_numel(b) == tensor_numel(y)) return;
    c->k[O2C_QBIN_RANK] = y->rank;
    for (int d = 0; d < y->rank; d++) c->k[O2C_QBIN_DIMS + d] = y->dims[d];
    bcast_strides(a, y->rank, c->k + O2C_QBIN_SA);
    bcast_strides(b, y->rank, c->k + O2C_QBIN_SB);
}

/* ---- com.microsoft: QGemm ---------------------------------------------------- */

/* inputs: A, a_scale, a_zero_point, B, b_scale, b_zero_point, C (int32
 * bias), y_scale, y_zero_point; Y float without y_scale, else 8-bit */
static void qgemm_dims(Node *n, int64_t *M, int64_t *N, int64_t *K)
{
    Tensor *a = n->in[0], *b = n->in[3];
    if (a->rank != 2 || b->rank != 2)
        fail("A (%s) and B (%s) must be matrices", tensor_shape_str(a), tensor_shape_str(b));
    int ta = attr_i(n, "transA") != 0, tb = attr_i(n, "transB") != 0;
    *M = a->dims[ta ? 1 : 0];
    *K = a->dims[ta ? 0 : 1];
    *N = b->dims[tb ? 0 : 1];
    if (b->dims[tb ? 1 : 0] != *K)
        fail("inconsistent shapes: A is %s%s and B is %s%s", tensor_shape_str(a), ta ? " (transposed)" : "",
             tensor_shape_str(b), tb ? " (transposed)" : "");
}

/* C's strides along m and n (a broadcast to M x N); -1 if it does not broadcast */
static int qgemm_bias_strides(const Tensor *c, int64_t M, int64_t N, int64_t *sm, int64_t *sn)
{
    Tensor t = *c;
    if (t.rank > 2) return -1;
    int64_t d0 = t.rank == 2 ? t.dims[0] : 1, d1 = t.rank >= 1 ? t.dims[t.rank - 1] : 1;
    if ((d0 != 1 && d0 != M) || (d1 != 1 && d1 != N)) return -1;
    *sm = d0 == 1 ? 0 : d1;
    *sn = d1 == 1 ? 0 : 1;
    return 0;
}

void infer_qgemm(Node *n)
{
    Tensor *a = n->in[0], *b = need_in(n, 3), *c = in_t(n, 6), *ys = in_t(n, 7), *yz = in_t(n, 8);
    int64_t M, N, K, sm, sn;
    need_dtype(n, a, DTS_Q8);
    need_dtype(n, b, DTS_Q8);
    ms_scale(n, 1, "a_scale");
    if (!in_t(n, 2) || !in_t(n, 5)) fail("a_zero_point and b_zero_point are required");
    ms_zero_point(n, 2, a->dtype, "a_zero_point");
    qgemm_dims(n, &M, &N, &K);
    Tensor *bs = need_in(n, 4), *bz = n->in[5];
    if (n->promoted || bs->dtype != DT_FLOAT) fail("b_scale ('%s') must be float", bs->name);
    need_same_type(n, bz, b->dtype, "b_zero_point");
    if (tensor_numel(bs) != 1 && (bs->rank != 1 || bs->dims[0] != N))
        bad_granularity(n, bs, "b_scale", "one per column of the output");
    if (tensor_numel(bz) != 1 && (bz->rank != 1 || bz->dims[0] != N))
        bad_granularity(n, bz, "b_zero_point", "one per column of the output");
    if (c && (c->dtype != DT_INT32 || qgemm_bias_strides(c, M, N, &sm, &sn) < 0))
        fail("C ('%s') is %s %s; it must be int32 and broadcast to %lldx%lld", c->name, dtype_name(c->dtype),
             tensor_shape_str(c), (long long)M, (long long)N);
    if (yz && !ys) fail("y_zero_point needs y_scale");
    if (ys && !yz) fail("y_scale without y_zero_point (a float output scaled by it) is not supported by onnx2c yet");
    if (ys) ms_scale(n, 7, "y_scale");
    if (yz) {
        need_dtype(n, yz, DTS_Q8);
        need_scalar(n, yz, "y_zero_point");
    }
    int64_t dims[2] = {M, N};
    set_out(n, 0, yz ? yz->dtype : DT_FLOAT, 2, dims);
}

void lower_qgemm(Node *n, Lowering *L)
{
    Tensor *a = n->in[0], *b = n->in[3], *c = in_t(n, 6), *y = n->out[0];
    int64_t M, N, K, nsc = tensor_numel(n->in[4]);
    qgemm_dims(n, &M, &N, &K);
    /* an 8-bit output of A (not transposed) times constant int8 B, alpha 1,
     * a bias of one value per column: the packed kernels (B as it is,
     * K x N, or transposed: N x K) */
    if (in_t(n, 8) && !attr_i(n, "transA") && attr_f(n, "alpha") == 1.0 &&
        (!c || (tensor_numel(c) == N && c->dims[c->rank - 1] == N))) {
        QLin q = {a, n->in[1], n->in[2], b, n->in[4], n->in[5], n->in[7], n->in[8], c, y, N, !attr_i(n, "transB")};
        if (lower_qproduct_packed(L, &q, K, M)) return;
    }
    /* the output scales alpha * a_scale * b_scale (/ y_scale), one per column or one */
    Tensor *sc = qscale_call(L, n->in[1], n->in[4], in_t(n, 7), attr_f(n, "alpha"), "scales");
    KCall *k = lower_call(L, xfmt("o2c_qgemm_%s_%s_%s", dtype_suffix(a->dtype), dtype_suffix(b->dtype),
                                  dtype_suffix(y->dtype)), tensor_numel(y));
    k->x[0] = a;
    k->x[1] = n->in[2];
    k->x[2] = b;
    k->x[3] = n->in[5];
    k->x[4] = c;
    k->x[5] = sc;
    k->x[6] = in_t(n, 8);
    k->y[0] = y;
    int ta = attr_i(n, "transA") != 0, tb = attr_i(n, "transB") != 0;
    k->k[O2C_QGEMM_M] = M;
    k->k[O2C_QGEMM_N] = N;
    k->k[O2C_QGEMM_K] = K;
    k->k[O2C_QGEMM_SAM] = ta ? 1 : K;
    k->k[O2C_QGEMM_SAK] = ta ? M : 1;
    k->k[O2C_QGEMM_SBK] = tb ? 1 : N;
    k->k[O2C_QGEMM_SBN] = tb ? K : 1;
    if (c) qgemm_bias_strides(c, M, N, &k->k[O2C_QGEMM_SCM], &k->k[O2C_QGEMM_SCN]);
    k->k[O2C_QGEMM_BZ_N] = tensor_numel(n->in[5]) > 1;
    k->k[O2C_QGEMM_SC_N] = nsc > 1;
    if (in_t(n, 8)) qclamp(n, y->dtype, &k->k[O2C_QGEMM_QMIN], &k->k[O2C_QGEMM_QMAX]);
}

/* ---- com.microsoft: QLinearSigmoid, QLinearLeakyRelu ------------------------ */

void infer_qlinear_unary(Node *n)
{
    Tensor *x = n->in[0];
    ms_xy_params(n, "X", "Y", 0);
    out_like(n, 0, x);
}

/* a 256-entry table of the function on every input byte, then a lookup */
void lower_qlinear_unary(Node *n, Lowering *L)
{
    Tensor *x = n->in[0];
    int64_t nt = 256;
    Tensor *tbl = lower_temp(L, DT_UINT8, 1, &nt);
    KCall *c = lower_call(L, xfmt("o2c_qlut_%s", dtype_suffix(x->dtype)), nt);
    c->x[0] = n->in[1];
    c->x[1] = in_t(n, 2);
    c->x[2] = n->in[3];
    c->x[3] = in_t(n, 4);
    c->y[0] = tbl;
    if (!strcmp(n->op_type, "QLinearLeakyRelu")) {
        c->k[O2C_QLUT_FN] = O2C_QLUT_LEAKYRELU;
        c->f[O2C_QLUT_F_ALPHA] = attr_f(n, "alpha");
    } else {
        c->k[O2C_QLUT_FN] = O2C_QLUT_SIGMOID;
    }
    tbl = eval_call_const(L, c, "table");
    c = lower_call(L, "o2c_qlut_apply", tensor_numel(x));
    c->x[0] = x;
    c->x[1] = tbl;
    c->y[0] = n->out[0];
}

/* ---- onnx2c FusedQLookup ---------------------------------------------------- */

void infer_fused_qlookup(Node *n)
{
    Tensor *x = n->in[0], *t = n->in[1];
    need_dtype(n, x, DTS_Q8);
    if (t->dtype != x->dtype || tensor_numel(t) != 256)
        fail("the table ('%s', %s %s) must hold 256 values of the input's type", t->name, dtype_name(t->dtype),
             tensor_shape_str(t));
    out_like(n, 0, x);
}

void lower_fused_qlookup(Node *n, Lowering *L)
{
    KCall *c = lower_call(L, "o2c_qlut_apply", tensor_numel(n->in[0]));
    c->x[0] = n->in[0];
    c->x[1] = n->in[1];
    c->y[0] = n->out[0];
}

/* Gather of the table at the input as int32 (an int8 value below 0 counts
 * from the end: byte j of the table, as the kernel reads it) */
void decompose_fused_qlookup(const Node *n, Decomp *d)
{
    (void)n;
    const char *i = dc_op(d, "Cast", 1, dc_in(d, 0));
    dc_attr_i(d, "to", DT_INT32);
    dc_output(d, 0, dc_op(d, "Gather", 2, dc_in(d, 1), i));
}

/* ---- onnx2c FusedQSoftmax ------------------------------------------------------- */

/* com.microsoft QLinearSoftmax (X, x_scale, x_zero_point, y_scale,
 * y_zero_point; the Softmax rule of its attribute opset) computes the same:
 * the input roles of each, and the axis (before opset 13, only the last
 * axis, where the rules agree) */
static int is_ms_qsoftmax(const Node *n) { return !strcmp(n->op_type, "QLinearSoftmax"); }
static const int QSM_ROLES[4] = {0, 1, 2, 3}, MS_QSM_ROLES[4] = {0, 1, 3, 4};

static void qsoftmax_rows(Node *n, int64_t *outer, int64_t *D, int64_t *inner)
{
    Tensor *x = n->in[0];
    int ax = (int)norm_axis(n, attr_i(n, "axis"), x->rank);
    if (is_ms_qsoftmax(n) && attr_i(n, "opset") < 13 && ax != x->rank - 1)
        fail("a QLinearSoftmax of opset %lld along axis %d of %d: onnx2c supports the last axis only (the rows of "
             "Softmax before opset 13)", (long long)attr_i(n, "opset"), ax, x->rank);
    *outer = 1;
    *inner = 1;
    for (int d = 0; d < ax; d++) *outer *= x->dims[d];
    for (int d = ax + 1; d < x->rank; d++) *inner *= x->dims[d];
    *D = x->dims[ax];
}

void infer_fused_qsoftmax(Node *n)
{
    const int *ro = is_ms_qsoftmax(n) ? MS_QSM_ROLES : QSM_ROLES;
    Tensor *x = n->in[0], *xs = need_in(n, ro[1]), *ys = need_in(n, ro[2]), *yz = in_t(n, ro[3]);
    int64_t o, d, i;
    need_dtype(n, x, DTS_Q8);
    if (x->rank < 1) fail("X must have an axis");
    qsoftmax_rows(n, &o, &d, &i);
    need_float_scale(n, xs, "x_scale");
    need_float_scale(n, ys, "y_scale");
    need_scalar(n, xs, "x_scale");
    need_scalar(n, ys, "y_scale");
    if (!xs->data) fail("x_scale must be a constant (its exponentials are tabulated)");
    if (yz) {
        need_dtype(n, yz, DTS_Q8);
        need_scalar(n, yz, "y_zero_point");
    }
    set_out(n, 0, yz ? yz->dtype : DT_UINT8, x->rank, x->dims);
}

void lower_fused_qsoftmax(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int64_t outer, D, inner, ne = 256;
    qsoftmax_rows(n, &outer, &D, &inner);
    if (D == 0 || outer * inner == 0) return;
    const int *ro = is_ms_qsoftmax(n) ? MS_QSM_ROLES : QSM_ROLES;
    Tensor *e = lower_const(L, "exponentials", DT_FLOAT, 1, &ne);
    const float xs = (float)elem_f64(n->in[ro[1]]->dtype, n->in[ro[1]]->data, 0);
    for (int d = 0; d < 256; d++) ((float *)e->data)[d] = expf(-xs * (float)d);
    /* the tiled C target: rows along the last axis in vectorizable loops */
    const char *row = L->tiled && inner == 1 && D <= O2C_QSM_ROW ? "row_" : "";
    KCall *c = lower_call(L, xfmt("o2c_qsoftmax_%s%s_%s", row, dtype_suffix(x->dtype), dtype_suffix(y->dtype)),
                          outer * inner);
    c->x[0] = x;
    c->x[1] = e;
    c->x[2] = n->in[ro[2]];
    c->x[3] = in_t(n, ro[3]);
    c->y[0] = y;
    c->k[O2C_QSM_D] = D;
    c->k[O2C_QSM_INNER] = inner;
}

void decompose_fused_qsoftmax(const Node *n, Decomp *d)
{
    const char *f = dc_op(d, "DequantizeLinear", 2, dc_in(d, 0), dc_in(d, 1));
    f = dc_op(d, "Softmax", 1, f);
    dc_attr_i(d, "axis", attr_i(n, "axis"));
    d->opset = d->opset > 13 ? d->opset : 13;
    dc_output(d, 0, in_t((Node *)n, 3) ? dc_op(d, "QuantizeLinear", 3, f, dc_in(d, 2), dc_in(d, 3))
                                       : dc_op(d, "QuantizeLinear", 2, f, dc_in(d, 2)));
}

/* ---- com.microsoft: QLinearGlobalAveragePool ------------------------------- */

void infer_qlinear_gavgpool(Node *n)
{
    Tensor *x = n->in[0];
    ms_xy_params(n, "x", "y", 1);
    if (x->rank < 3) fail("input '%s' is %s; it needs rank 3 or more", x->name, tensor_shape_str(x));
    int cl = attr_i(n, "channels_last") != 0;
    int64_t dims[MAX_RANK];
    for (int d = 0; d < x->rank; d++) dims[d] = d == 0 || d == (cl ? x->rank - 1 : 1) ? x->dims[d] : 1;
    set_out(n, 0, x->dtype, x->rank, dims);
}

void lower_qlinear_gavgpool(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int cl = attr_i(n, "channels_last") != 0;
    int64_t C = x->dims[cl ? x->rank - 1 : 1];
    KCall *c = lower_call(L, xfmt("o2c_qgavgpool_%s", dtype_suffix(x->dtype)), tensor_numel(y));
    for (int j = 0; j < 5; j++) c->x[j] = n->in[j];
    c->y[0] = y;
    c->k[O2C_QGAP_C] = C;
    c->k[O2C_QGAP_S] = C && x->dims[0] ? tensor_numel(x) / (C * x->dims[0]) : 0;
    c->k[O2C_QGAP_CL] = cl;
}

/* ---- com.microsoft: QLinearAveragePool ----------------------------------------- */

/* the geometry, on an N x C x spatial view of x (channels_last: N x spatial x C) */
static void qavgpool_geom(Node *n, ConvGeom *g)
{
    Tensor *x = n->in[0], v = *x;
    int cl = attr_i(n, "channels_last") != 0;
    if (x->rank < 3) fail("input '%s' is %s; it needs rank 3 or more", x->name, tensor_shape_str(x));
    if (cl) {
        v.dims[1] = x->dims[x->rank - 1];
        for (int d = 2; d < x->rank; d++) v.dims[d] = x->dims[d - 1];
    }
    const int64_t *ks, *dl;
    int nks = attr_ints(n, "kernel_shape", &ks), ndl = attr_ints(n, "dilations", &dl);
    if (nks != x->rank - 2) fail("kernel_shape must have %d values, it has %d", x->rank - 2, nks);
    for (int i = 0; i < ndl; i++)
        if (dl[i] != 1) fail("dilations other than 1 are not supported (onnxruntime has none)");
    conv_geom_init(n, &v, ks, nks, g);
    conv_geom_forward(n, g, attr_i(n, "ceil_mode") != 0);
}

void infer_qlinear_avgpool(Node *n)
{
    Tensor *x = n->in[0];
    ms_xy_params(n, "x", "y", 0);
    ConvGeom g;
    qavgpool_geom(n, &g);
    int cl = attr_i(n, "channels_last") != 0, nsp = x->rank - 2;
    int64_t dims[MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    for (int i = 0; i < nsp; i++) dims[(cl ? 1 : 2) + i] = g.out[3 - nsp + i];
    set_out(n, 0, x->dtype, x->rank, dims);
}

void lower_qlinear_avgpool(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    ConvGeom g;
    qavgpool_geom(n, &g);
    int cl = attr_i(n, "channels_last") != 0;
    KCall *c = lower_call(L, xfmt("o2c_qavgpool_%s", dtype_suffix(x->dtype)), tensor_numel(y));
    for (int j = 0; j < 5; j++) c->x[j] = in_t(n, j);
    c->y[0] = y;
    c->k[O2C_QAP_C] = x->dims[cl ? x->rank - 1 : 1];
    for (int i = 0; i < 3; i++) {
        c->k[O2C_QAP_IN + i] = g.in[i];
        c->k[O2C_QAP_OUT + i] = g.out[i];
        c->k[O2C_QAP_K + i] = g.k[i];
        c->k[O2C_QAP_S + i] = g.s[i];
        c->k[O2C_QAP_PB + i] = g.pb[i];
    }
    c->k[O2C_QAP_INCL] = attr_i(n, "count_include_pad") != 0;
    c->k[O2C_QAP_CL] = cl;
}

/* ---- com.microsoft: QLinearConcat -------------------------------------------- */

static int64_t qconcat_axis(Node *n)
{
    if (!attr_has(n, "axis")) fail("attribute axis is required");
    return norm_axis(n, attr_i(n, "axis"), n->in[2]->rank);
}

void infer_qlinear_concat(Node *n)
{
    if ((n->nin - 2) % 3) fail("the inputs must be Y_scale, Y_zero_point, then (tensor, scale, zero point) triples");
    Tensor *yz = n->in[1], *x0 = need_in(n, 2);
    need_dtype(n, yz, DTS_Q8);
    ms_scale(n, 0, "Y_scale");
    need_scalar(n, yz, "Y_zero_point");
    int64_t axis = qconcat_axis(n), d[MAX_RANK];
    memcpy(d, x0->dims, sizeof(int64_t) * (size_t)x0->rank);
    d[axis] = 0;
    for (int j = 2; j < n->nin; j += 3) {
        Tensor *t = need_in(n, j);
        need_same_type(n, t, yz->dtype, "a quantized input");
        ms_scale(n, j + 1, "an input's scale");
        if (!in_t(n, j + 2)) fail("every input needs its zero point");
        ms_zero_point(n, j + 2, yz->dtype, "an input's zero point");
        if (t->rank != x0->rank) fail("inconsistent shapes: '%s' is %s and '%s' is %s", x0->name,
                                      tensor_shape_str(x0), t->name, tensor_shape_str(t));
        for (int i = 0; i < x0->rank; i++)
            if (i != axis && t->dims[i] != x0->dims[i])
                fail("inconsistent shapes: '%s' is %s and '%s' is %s; they may differ on axis %lld only", x0->name,
                     tensor_shape_str(x0), t->name, tensor_shape_str(t), (long long)axis);
        d[axis] += t->dims[axis];
    }
    set_out(n, 0, yz->dtype, x0->rank, d);
}

void lower_qlinear_concat(Node *n, Lowering *L)
{
    Tensor *y = n->out[0];
    int64_t axis = qconcat_axis(n), inner = 1, pos = 0;
    for (int d = (int)axis + 1; d < y->rank; d++) inner *= y->dims[d];
    for (int j = 2; j < n->nin; j += 3) {
        Tensor *x = n->in[j];
        KCall *c = lower_call(L, xfmt("o2c_qconcat_%s", dtype_suffix(y->dtype)), tensor_numel(x));
        c->x[0] = x;
        c->x[1] = n->in[j + 1];
        c->x[2] = n->in[j + 2];
        c->x[3] = n->in[0];
        c->x[4] = n->in[1];
        c->y[0] = y;
        c->k[O2C_QCAT_PIN] = x->dims[axis] * inner > 0 ? x->dims[axis] * inner : 1;
        c->k[O2C_QCAT_POUT] = y->dims[axis] * inner;
        c->k[O2C_QCAT_OFF] = pos * inner;
        pos += x->dims[axis];
    }
}
