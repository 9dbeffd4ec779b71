/* Pass quantize: QDQ graphs as integer code. A quantized model (onnxruntime's
 * quantize_static, ModelOpt, quantization-aware training) states its integer
 * computation as float ops between DequantizeLinear (DQ) and QuantizeLinear
 * (Q) nodes; this pass turns each such group into the integer node that
 * computes it, so the data between them stays 8-bit in the arena and the
 * weights stay int8 in the file:
 *
 *   DQ(x) -> Conv(DQ(W), bias) [-> Relu | Clip] -> Q      FusedQLinearConv
 *   DQ(a) -> MatMul(DQ(B)) [-> Add bias] [-> act] -> Q   FusedQLinearMatMul
 *   DQ(a) -> Gemm(DQ(B), bias) [-> act] -> Q              FusedQLinearMatMul
 *   DQ(a), DQ(b) -> Add | Mul [-> Relu] -> Q              com.microsoft QLinearAdd, QLinearMul
 *   DQ(x) -> GlobalAveragePool | AveragePool -> Q         com.microsoft QLinearGlobalAveragePool, QLinearAveragePool
 *   DQ(x_i) -> Concat -> Q                                Concat (same scales) or com.microsoft QLinearConcat
 *   DQ(x) -> MaxPool, Reshape, Transpose, Slice, ... -> Q Q's scale = DQ's: the op on the 8-bit data
 *   DQ(x) -> Split -> Q (each output, same parameters)    Split of the 8-bit data
 *   DQ(x) -> Softmax -> Q                                 FusedQSoftmax (a table of exponentials, as
 *                                                          onnxruntime's QLinearSoftmax)
 *   DQ(x) -> Sigmoid, Tanh, HardSwish, ... -> Q           a 256-entry table (FusedQLookup); x op table(x)
 *                                                          (SiLU: x * sigmoid(x)) one table too
 *   float a -> MatMul(DQ(B)) [-> Add bias] (no Q after)   FusedWQMatMul: weight-only quantization, the
 *   float a -> Gemm(DQ(B), bias)                          weights stay 8- or 4-bit (per column or in
 *                                                          blocks along K), float activations; B also
 *                                                          written as Mul(Sub(Cast(q), z), s)
 *
 * The weights W and B are constants: their DQ stays unread and leaves with
 * dce. The bias becomes int32 at x_scale * w_scale (the model's int32 bias
 * when its scale is that, else rounded). An activation before Q is the
 * output clamp [Q(lo), Q(hi)]: Q is monotone, so Q(max(v, 0)) = max(Q(v),
 * Q(0)) exactly. What the pass does not match stays as the model wrote it
 * (float between its DQ and Q), and -v says why for the linear ops.
 *
 * Numerics: the integer nodes compute what onnxruntime's QLinear kernels do
 * (int32 sums, requantization in float: ops/quant.c), so outputs agree with
 * onnxruntime's within one quantization step where the float formulation of
 * the model (DQ -> float op -> Q) can differ by more.
 *
 * It runs first (before fold, which would turn the small dequantized
 * weights into float constants); DequantizeLinear is therefore not folded
 * during inference (OPT_FOLD_IN_PASSES), and the fold pass folds the DQs of
 * constants that nothing here took. */
#include "pattern.h"

#define MS_OPSET 1   /* the com.microsoft ops' version */
#define QCONCAT_MAX_PARTS 20   /* QLinearConcat: 2 + 3 per part inputs, at most 62 (ops.def) */
#define MAX_SPLIT_OUTPUTS 8

/* ---- matching DequantizeLinear and QuantizeLinear --------------------------- */

/* A DequantizeLinear making a float tensor: its integer input q, constant
 * float scale s (positive, finite) and constant zero point z (or NULL),
 * per tensor (axis -1) or along one axis; no blocks */
typedef struct Deq {
    Node *n;
    Tensor *q, *s, *z;
    int axis;
} Deq;

static int positive_scales(const Tensor *s)
{
    for (int64_t i = 0; i < tensor_numel(s); i++) {
        double v = elem_f64(s->dtype, s->data, i);
        if (!(v > 0) || !isfinite(v)) return 0;
    }
    return 1;
}

static int deq_of(const Tensor *t, Deq *d)
{
    Node *n = pat_prod(t, "DequantizeLinear");
    if (!n || t->dtype != DT_FLOAT || attr_i(n, "block_size")) return 0;
    Tensor *q = n->in[0], *s = n->in[1], *z = in_t(n, 2);
    if (!s->data || s->dtype != DT_FLOAT || (z && !z->data) || !positive_scales(s)) return 0;
    if (q->dtype != DT_UINT8 && q->dtype != DT_INT8 && q->dtype != DT_INT32) return 0;
    int64_t ax = attr_i(n, "axis");
    if (ax < 0) ax += q->rank;
    d->n = n;
    d->q = q;
    d->s = s;
    d->z = z;
    d->axis = tensor_numel(s) == 1 ? -1 : (int)ax;
    return 1;
}

/* an 8-bit activation: computed at run time, one scale */
static int deq_act(const Tensor *t, Deq *d)
{
    return deq_of(t, d) && !d->q->data && d->axis < 0 && d->q->dtype != DT_INT32 && (!d->z || tensor_numel(d->z) == 1);
}

/* an operand of a quantized Add or Mul: an activation, or a constant of
 * 8-bit values with one scale (a bias or a scale the model adds) */
static int deq_operand(const Tensor *t, Deq *d)
{
    return deq_of(t, d) && d->axis < 0 && d->q->dtype != DT_INT32 && (!d->z || tensor_numel(d->z) == 1);
}

static float scale_of(const Tensor *s, int64_t i) { return (float)elem_f64(s->dtype, s->data, tensor_numel(s) == 1 ? 0 : i); }
static int32_t zp_of(const Tensor *z) { return z ? (int32_t)elem_i64(z->dtype, z->data, 0) : 0; }

/* A QuantizeLinear to uint8 or int8 with one constant positive scale and a
 * constant zero point (or none), saturating, no blocks */
typedef struct Qnt {
    Node *n;
    Tensor *s, *z, *y;
    float scale;
    int32_t zp;
} Qnt;

static int quant_of(Node *n, Qnt *q)
{
    if (!n || !pat_is(n, "QuantizeLinear") || n->in[0]->dtype != DT_FLOAT) return 0;
    Tensor *s = n->in[1], *z = in_t(n, 2), *y = n->out[0];
    if (!s->data || s->dtype != DT_FLOAT || tensor_numel(s) != 1 || !positive_scales(s)) return 0;
    if ((z && (!z->data || tensor_numel(z) != 1)) || (y->dtype != DT_UINT8 && y->dtype != DT_INT8)) return 0;
    if (!attr_i(n, "saturate") || attr_i(n, "block_size") || attr_i(n, "precision")) return 0;
    q->n = n;
    q->s = s;
    q->z = z;
    q->y = y;
    q->scale = scale_of(s, 0);
    q->zp = zp_of(z);
    return 1;
}

/* the range of an 8- or 4-bit integer type */
static int32_t qmin_of(int dt) { return dt == DT_UINT8 || dt == DT_UINT4 ? 0 : dt == DT_INT4 ? -8 : -128; }
static int32_t qmax_of(int dt) { return dt == DT_UINT8 ? 255 : dt == DT_UINT4 ? 15 : dt == DT_INT4 ? 7 : 127; }

/* a type weight-only weights may have (FusedWQMatMul) */
static int wq_type(int dt) { return dt == DT_UINT8 || dt == DT_INT8 || dt == DT_UINT4 || dt == DT_INT4; }

/* v quantized as q does (the division and rounding in float) */
static int32_t quantize_value(const Qnt *q, double v)
{
    double r = (double)nearbyintf((float)v / q->scale) + q->zp;
    int dt = q->y->dtype;
    return r < qmin_of(dt) ? qmin_of(dt) : r > qmax_of(dt) ? qmax_of(dt) : (int32_t)r;
}

/* DQ's parameters are Q's: the 8-bit values mean the same reals */
static int same_params(const Deq *d, const Qnt *q)
{
    return d->q->dtype == q->y->dtype && scale_of(d->s, 0) == q->scale && zp_of(d->z) == q->zp;
}

/* The zero point z, or a new zero of type dt */
static Tensor *zero_point(Graph *g, Tensor *z, int dt) { return z ? z : pat_const_scalar(g, "zero_point", dt, 0); }

/* t's only reader when t is internal to what is being matched */
static Node *next_of(Graph *g, Tensor *t) { return pat_single_reader(g, t); }

/* After a linear node's output y: an optional Relu or Clip with constant
 * bounds (added to m), then the QuantizeLinear; the clamp [lo, hi] in reals */
static int act_then_quant(Graph *g, Tensor *y, PatMatch *m, Qnt *q, double *lo, double *hi)
{
    Node *r = next_of(g, y);
    if (!pat_clamp_bounds(g, r, lo, hi)) {
        if (r && pat_is(r, "Clip")) return 0;   /* (a Clip of bounds not constant, or empty) */
        r = NULL;
    }
    if (r) {
        pat_add(m, r);
        y = r->out[0];
    }
    if (!quant_of(next_of(g, y), q)) return 0;
    pat_add(m, q->n);
    return 1;
}

/* the clamp attributes of a fused integer node from the real bounds */
static void set_clamp(Node *f, const Qnt *q, double lo, double hi)
{
    int dt = q->y->dtype;
    node_set_attr_i(f, "y_min", isinf(lo) ? qmin_of(dt) : quantize_value(q, lo));
    node_set_attr_i(f, "y_max", isinf(hi) ? qmax_of(dt) : quantize_value(q, hi));
}

/* ---- the int32 bias ---------------------------------------------------------- */

/* The bias b (NULL, a DQ of int32 or a float constant; one value or one per
 * channel) as int32 values at x_scale * w_scale[m]: the model's own where
 * its scale is that one, else rounded. *ok 0 if it cannot be. */
static Tensor *int_bias(Graph *g, Tensor *b, float xs, const Tensor *ws, int64_t M, int *ok)
{
    *ok = 1;
    if (!b) return NULL;
    Deq d;
    int deq = deq_of(b, &d) && d.q->data && d.q->dtype == DT_INT32;
    Tensor *v = deq ? d.q : b;
    int64_t nb = tensor_numel(v);
    if (!v->data || (nb != 1 && nb != M) || (!deq && v->dtype != DT_FLOAT)) return *ok = 0, NULL;
    if (deq && (d.z && tensor_numel(d.z) != 1 && tensor_numel(d.z) != M)) return *ok = 0, NULL;
    Tensor *r = graph_new_const(g, "bias_int32", DT_INT32, 1, &M);
    int32_t *out = r->data;
    for (int64_t m = 0; m < M; m++) {
        int64_t i = nb == 1 ? 0 : m;
        double real = deq ? ((double)elem_i64(DT_INT32, v->data, i) -
                             (d.z ? (double)elem_i64(d.z->dtype, d.z->data, tensor_numel(d.z) == 1 ? 0 : m) : 0)) *
                                (double)scale_of(d.s, i)
                          : elem_f64(v->dtype, v->data, i);
        const float sm = xs * scale_of(ws, m);
        double q = nearbyint(real / (double)sm);
        if (!(fabs(q) < 2147483647.0)) return *ok = 0, NULL;
        out[m] = (int32_t)q;
    }
    return r;
}

/* ---- Conv --------------------------------------------------------------------- */

static const char *const CONV_ATTRS[] = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides", NULL};

/* attribute a of another node on dst (the value kinds these ops have) */
static void copy_attr(Node *dst, const Attr *a)
{
    if (a->type == AT_INT) node_set_attr_i(dst, a->name, a->i);
    else if (a->type == AT_INTS) node_set_attr_ints(dst, a->name, a->ints, a->n);
    else if (a->type == AT_STRING) node_set_attr_s(dst, a->name, a->s);
    else if (a->type == AT_FLOAT) node_set_attr_f(dst, a->name, a->f);
    else if (a->type == AT_FLOATS) node_set_attr_floats(dst, a->name, a->floats, a->n);
}

/* src's attributes of those names (NULL-terminated; NULL: all) on dst */
static void copy_attrs(Node *dst, const Node *src, const char *const *names)
{
    for (int i = 0; i < src->nattrs; i++) {
        int want = !names;
        for (int k = 0; names && names[k]; k++) want |= !strcmp(names[k], src->attrs[i].name);
        if (want) copy_attr(dst, &src->attrs[i]);
    }
}

/* weights: a DQ of a constant 8-bit tensor, per tensor or along `axis` */
static int deq_weight(const Tensor *t, Deq *d, int axis)
{
    if (!deq_of(t, d) || !d->q->data || (d->q->dtype != DT_INT8 && d->q->dtype != DT_UINT8)) return 0;
    if (d->axis >= 0 && (d->axis != axis || tensor_numel(d->s) != d->q->dims[axis])) return 0;
    return !d->z || tensor_numel(d->z) == 1 || tensor_numel(d->z) == tensor_numel(d->s);
}

static int match_conv(Graph *g, Node *c)
{
    if (!pat_is(c, "Conv") || c->nin < 2 || c->out[0]->dtype != DT_FLOAT) return 0;
    Deq dx, dw;
    if (!deq_act(c->in[0], &dx) || !deq_weight(c->in[1], &dw, 0)) return 0;
    int64_t M = dw.q->dims[0];
    PatMatch m = {{0}, 0};
    Qnt q;
    double lo, hi;
    pat_add(&m, c);
    if (!act_then_quant(g, c->out[0], &m, &q, &lo, &hi)) return 0;
    int ok;
    Tensor *bias = int_bias(g, c->nin > 2 ? c->in[2] : NULL, scale_of(dx.s, 0), dw.s, M, &ok);
    if (!ok) {
        note("quantize: Conv '%s' stays float (its bias does not fit int32 at x_scale * w_scale)", c->name);
        return 0;
    }
    Tensor *in[9] = {dx.q, dx.s, zero_point(g, dx.z, dx.q->dtype), dw.q, dw.s, zero_point(g, dw.z, dw.q->dtype),
                     q.s, zero_point(g, q.z, q.y->dtype), bias};
    Node *f = pat_replace(g, &m, q.n, "FusedQLinearConv", "onnx2c", in, bias ? 9 : 8, q.y);
    copy_attrs(f, c, CONV_ATTRS);
    set_clamp(f, &q, lo, hi);
    node_reinfer(f);
    note("quantize: %s -> FusedQLinearConv '%s'", f->fused, q.y->name);
    return 1;
}

/* ---- MatMul, Gemm ------------------------------------------------------------- */

/* A MatMul, or a Gemm that is one (A not transposed, alpha and beta 1),
 * with a float output: 1, *gemm and *tb (B transposed) set */
static int plain_product(const Node *n, int *gemm, int *tb)
{
    *gemm = pat_is(n, "Gemm");
    *tb = 0;
    if ((!*gemm && !pat_is(n, "MatMul")) || n->out[0]->dtype != DT_FLOAT) return 0;
    return !*gemm || pat_plain_gemm(n, tb);
}

/* A MatMul's output *y read only by an Add of a constant bias of N values
 * (a float constant, or where dq_ok the DQ of a constant): the bias, the
 * Add matched and *y its output; else NULL */
static Tensor *bias_add(Graph *g, Tensor **y, PatMatch *m, int64_t N, int dq_ok)
{
    Node *add = next_of(g, *y);
    if (!add || !pat_is(add, "Add")) return NULL;
    Tensor *o = pat_other(add, *y);
    Deq dd;
    if (!o || !(o->data ? o->dtype == DT_FLOAT || dq_ok : dq_ok && deq_of(o, &dd) && dd.q->data) ||
        !pat_bias_shape(add, *y, o, N))
        return NULL;
    pat_add(m, add);
    *y = add->out[0];
    return o;
}

/* A transposed copy of the constant matrix t (any type of one value a
 * byte or more; 4-bit values are held a byte each) */
static Tensor *transposed(Graph *g, const char *hint, const Tensor *t)
{
    const int64_t R = t->dims[0], C = t->dims[1], d[2] = {C, R};
    const size_t es = dtype_size(t->dtype);
    Tensor *o = graph_new_const(g, hint, t->dtype, 2, d);
    const unsigned char *src = t->data;
    unsigned char *dst = o->data;
    for (int64_t r = 0; r < R; r++)
        for (int64_t c = 0; c < C; c++) memcpy(dst + (size_t)(c * R + r) * es, src + (size_t)(r * C + c) * es, es);
    return o;
}

/* The constant B of DQ(B) as K x N (a transposed copy where tb) */
static Tensor *weights_kn(Graph *g, const Deq *db, int tb)
{
    return tb ? transposed(g, "B_weights", db->q) : db->q;
}

static int match_matmul(Graph *g, Node *n)
{
    int gemm, tb;
    if (!plain_product(n, &gemm, &tb)) return 0;
    Deq da, db;
    if (!deq_act(n->in[0], &da) || !deq_weight(n->in[1], &db, tb ? 0 : 1) || db.q->rank != 2 || db.q->dtype != DT_INT8)
        return 0;
    int64_t N = db.q->dims[tb ? 0 : 1];
    PatMatch m = {{0}, 0};
    pat_add(&m, n);
    Tensor *y = n->out[0], *b = gemm && n->nin > 2 ? n->in[2] : NULL;
    if (!gemm) b = bias_add(g, &y, &m, N, 1);   /* MatMul + a constant bias of N values */
    Qnt q;
    double lo, hi;
    if (!act_then_quant(g, y, &m, &q, &lo, &hi)) return 0;
    int ok;
    Tensor *bias = int_bias(g, b, scale_of(da.s, 0), db.s, N, &ok);
    if (!ok) {
        note("quantize: %s '%s' stays float (its bias does not fit int32 at a_scale * b_scale)", n->op_type, n->name);
        return 0;
    }
    Tensor *w = weights_kn(g, &db, tb);
    Tensor *in[9] = {da.q, da.s, zero_point(g, da.z, da.q->dtype), w, db.s, zero_point(g, db.z, DT_INT8),
                     q.s, zero_point(g, q.z, q.y->dtype), bias};
    Node *f = pat_replace(g, &m, q.n, "FusedQLinearMatMul", "onnx2c", in, bias ? 9 : 8, q.y);
    set_clamp(f, &q, lo, hi);
    node_reinfer(f);
    note("quantize: %s -> FusedQLinearMatMul '%s'", f->fused, q.y->name);
    return 1;
}

/* Weight-only weights: the DQ of a constant 8- or 4-bit matrix per tensor,
 * per column (N, the axis other than k_axis) or in blocks along k_axis (K):
 * *bs the block size (0: no blocks) */
static int deq_wq(const Tensor *t, Deq *d, int k_axis, int64_t *bs)
{
    Node *n = pat_prod(t, "DequantizeLinear");
    if (!n || t->dtype != DT_FLOAT) return 0;
    Tensor *q = n->in[0], *s = n->in[1], *z = in_t(n, 2);
    if (!wq_type(q->dtype) || !q->data || q->rank != 2 || !s->data || s->dtype != DT_FLOAT || !positive_scales(s) || (z && !z->data))
        return 0;
    if (z && tensor_numel(z) != 1 && tensor_numel(z) != tensor_numel(s)) return 0;
    const int n_axis = 1 - k_axis;
    int64_t ax = attr_i(n, "axis");
    if (ax < 0) ax += 2;
    *bs = attr_i(n, "block_size");
    d->n = n;
    d->q = q;
    d->s = s;
    d->z = z;
    d->axis = (int)ax;
    if (*bs > 0)
        return ax == k_axis && s->rank == 2 && s->dims[k_axis] == (q->dims[k_axis] + *bs - 1) / *bs &&
               s->dims[n_axis] == q->dims[n_axis];
    if (tensor_numel(s) == 1) {
        d->axis = -1;
        return 1;
    }
    return *bs == 0 && ax == n_axis && tensor_numel(s) == q->dims[n_axis];
}

/* Weight-only weights written out as float ops: Mul(Cast(q), s) or
 * Mul(Sub(Cast(q), z), s) (either order of Mul's operands), q a constant 8-
 * or 4-bit matrix cast to float, s positive and z whole numbers in q's
 * range, constants of one value or one a column (N values along the axis
 * other than K: shape [N] or [1, N], or [N, 1] where tb). Into *d as a
 * DequantizeLinear's (new constants: s and z as vectors, z of q's type). */
static int castmul_wq(Graph *g, const Tensor *t, Deq *d, int tb)
{
    Node *mul = pat_prod(t, "Mul");
    if (!mul || t->dtype != DT_FLOAT || t->rank != 2) return 0;
    const int64_t N = t->dims[tb ? 0 : 1];
    for (int i = 0; i < 2; i++) {
        Node *cast, *sub;
        Tensor *q, *z, *s;
        if (!pat_cast_scaled(mul, i, &cast, &sub, &q, &z, &s)) continue;
        int ok = wq_type(q->dtype) && q->data && q->rank == 2;
        if (!ok) continue;
        const Tensor *pz[2] = {s, z};
        for (int j = 0; j < 2 && ok; j++) {   /* one value, or N along the output axis */
            const Tensor *p = pz[j];
            if (!p) continue;
            int64_t n = tensor_numel(p);
            ok = p->data && p->rank <= 2 && (p->dtype == DT_FLOAT || dtype_is_int(p->dtype)) &&
                 (n == 1 || (n == N && (p->rank == 1 ? !tb : p->dims[tb ? 0 : 1] == N)));
        }
        if (!ok || s->dtype != DT_FLOAT || !positive_scales(s)) continue;
        for (int64_t j = 0; z && ok && j < tensor_numel(z); j++) {
            double v = elem_f64(z->dtype, z->data, j);
            ok = v == floor(v) && v >= qmin_of(q->dtype) && v <= qmax_of(q->dtype);
        }
        if (!ok) continue;
        int64_t ns = tensor_numel(s), nz = z ? tensor_numel(z) : 0, nv = ns > nz ? ns : nz;
        Tensor *sv = graph_new_const(g, "wq_scale", DT_FLOAT, 1, &nv);   /* (as many as z has) */
        for (int64_t j = 0; j < nv; j++) ((float *)sv->data)[j] = (float)elem_f64(s->dtype, s->data, ns == 1 ? 0 : j);
        Tensor *zv = z ? graph_new_const(g, "wq_zero_point", q->dtype, 1, &nz) : NULL;
        for (int64_t j = 0; j < nz; j++) {   /* (a 4-bit value in a byte's low bits) */
            int32_t v = (int32_t)elem_f64(z->dtype, z->data, j);
            ((uint8_t *)zv->data)[j] = (uint8_t)(dtype_is_narrow(q->dtype) ? v & 15 : v);
        }
        d->n = mul;
        d->q = q;
        d->s = sv;
        d->z = zv;
        d->axis = nv > 1 ? 1 - tb : -1;
        return 1;
    }
    return 0;
}

/* Weight-only quantization: a MatMul or Gemm of float activations with the
 * DequantizeLinear of a constant 8- or 4-bit matrix (per tensor, per
 * column or in blocks along K) that match_matmul did not take (the
 * activations are float, or no Q follows). Its weights stay 8- or 4-bit
 * in the file and in the kernel (FusedWQMatMul) where the fold pass would
 * make them float constants. */
static int match_weight_only(Graph *g, Node *n)
{
    int gemm, tb;
    if (!plain_product(n, &gemm, &tb) || n->in[0]->dtype != DT_FLOAT) return 0;
    Deq db;
    int64_t bs;
    if (n->in[0]->rank < 1) return 0;
    if (!deq_wq(n->in[1], &db, tb ? 1 : 0, &bs)) {
        if (!castmul_wq(g, n->in[1], &db, tb)) return 0;
        bs = 0;
    }
    int64_t N = db.q->dims[tb ? 0 : 1];
    if (gemm && n->in[0]->rank != 2) return 0;
    PatMatch m = {{0}, 0};
    pat_add(&m, n);
    Tensor *y = n->out[0], *b = gemm && n->nin > 2 ? n->in[2] : NULL;
    if (b && (!b->data || b->dtype != DT_FLOAT || tensor_numel(b) != N || b->dims[b->rank - 1] != N)) return 0;
    if (!gemm) b = bias_add(g, &y, &m, N, 0);   /* MatMul + a constant float bias of N values */
    Tensor *w = weights_kn(g, &db, tb), *s = db.s, *z = db.z;
    if (tb && bs) {   /* the blocks' scales and zero points as ceil(K / bs) x N */
        s = transposed(g, "B_scales", s);
        if (z && tensor_numel(z) > 1) z = transposed(g, "B_zero_points", z);
    }
    if (b && b->rank != 1) {   /* the bias as a vector */
        Tensor *v = graph_new_const(g, "bias", DT_FLOAT, 1, &N);
        memcpy(v->data, b->data, (size_t)N * sizeof(float));
        b = v;
    }
    Tensor *in[5] = {n->in[0], w, s, z, b};
    Node *f = pat_replace(g, &m, y->producer, "FusedWQMatMul", "onnx2c", in, b ? 5 : z ? 4 : 3, y);
    if (bs) node_set_attr_i(f, "block_size", bs);
    node_reinfer(f);
    note("quantize: %s -> FusedWQMatMul '%s' (weight-only: %s weights%s)", f->fused, y->name, dtype_name(w->dtype),
         bs ? ", blocks along K" : "");
    return 1;
}

/* The 256 byte values as type dt (uint8 or int8): byte j means the value j,
 * or j - 256 above 127 for int8 (a table's index order) */
static Tensor *byte_values(Graph *g, int dt)
{
    int64_t nb = 256;
    Tensor *b = graph_new_const(g, "byte_values", dt, 1, &nb);
    for (int j = 0; j < 256; j++) elem_set(dt, b->data, j, dt == DT_INT8 && j > 127 ? j - 256 : j);
    return b;
}

/* t is a FusedQLookup of x: its table, else NULL */
static Tensor *lookup_of(const Tensor *t, const Tensor *x)
{
    Node *p = t->producer;
    return p && !strcmp(p->op_type, "FusedQLookup") && p->in[0] == x ? p->in[1] : NULL;
}

/* ---- Add, Mul ------------------------------------------------------------------- */

/* com.microsoft QLinearAdd/QLinearMul. A Relu before Q is kept only where it
 * is Q's own clamp (Q's zero point is its type's least value, as calibration
 * after a Relu makes it). */
static int match_binary(Graph *g, Node *n)
{
    int add = pat_is(n, "Add");
    if ((!add && !pat_is(n, "Mul")) || n->out[0]->dtype != DT_FLOAT) return 0;
    Deq da, db;
    if (!deq_operand(n->in[0], &da) || !deq_operand(n->in[1], &db) || da.q->dtype != db.q->dtype) return 0;
    if (da.q->data && db.q->data) return 0;   /* (folded) */
    PatMatch m = {{0}, 0};
    pat_add(&m, n);
    Tensor *y = n->out[0];
    Node *r = next_of(g, y);
    Qnt q;
    if (r && pat_is(r, "Relu")) {
        pat_add(&m, r);
        y = r->out[0];
        if (!quant_of(next_of(g, y), &q) || q.zp != qmin_of(q.y->dtype)) return 0;
    } else if (!quant_of(r, &q)) {
        return 0;
    }
    if (q.y->dtype != da.q->dtype) return 0;
    pat_add(&m, q.n);
    Tensor *in[8] = {da.q, da.s, zero_point(g, da.z, da.q->dtype), db.q, db.s, zero_point(g, db.z, db.q->dtype), q.s,
                     zero_point(g, q.z, q.y->dtype)};
    /* x op f(x) with f a table (x * sigmoid(x): SiLU): a function of x's
     * byte, one table made by running this node on the 256 bytes */
    Tensor *x = NULL, *tb = lookup_of(db.q, da.q), *ta = tb ? NULL : lookup_of(da.q, db.q);
    if (tb || ta) {
        x = tb ? da.q : db.q;
        Tensor *bytes = byte_values(g, x->dtype), *fx = graph_new_tensor(g, "table_f"), *tbl = graph_new_tensor(g, "table");
        Tensor *lin[2] = {bytes, tb ? tb : ta};
        Node *l = graph_insert_node(g, n, "FusedQLookup", "onnx2c", lin, 2, &fx, 1);
        node_reinfer(l);
        in[0] = tb ? bytes : fx;
        in[3] = tb ? fx : bytes;
        Node *b = graph_insert_node(g, n, add ? "QLinearAdd" : "QLinearMul", "com.microsoft", in, 8, &tbl, 1);
        b->opset = MS_OPSET;
        node_reinfer(b);
        Tensor *xin[2] = {x, tbl};
        Node *f = pat_replace(g, &m, q.n, "FusedQLookup", "onnx2c", xin, 2, q.y);
        node_reinfer(f);
        note("quantize: %s of a value and a table of it -> a 256-entry table '%s'", f->fused, q.y->name);
        return 1;
    }
    Node *f = pat_replace(g, &m, q.n, add ? "QLinearAdd" : "QLinearMul", "com.microsoft", in, 8, q.y);
    f->opset = MS_OPSET;
    node_reinfer(f);
    note("quantize: %s -> %s '%s'", f->fused, f->op_type, q.y->name);
    return 1;
}

/* ---- pools, Concat, data movement ---------------------------------------------- */

static const char *const AVGPOOL_ATTRS[] = {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape",
                                            "pads", "strides", NULL};

static int match_avgpool(Graph *g, Node *n)
{
    int global = pat_is(n, "GlobalAveragePool");
    if (!global && !pat_is(n, "AveragePool")) return 0;
    Deq dx;
    Qnt q;
    if (!deq_act(n->in[0], &dx) || !quant_of(next_of(g, n->out[0]), &q) || q.y->dtype != dx.q->dtype) return 0;
    if (!global && attr_has(n, "dilations")) return 0;
    PatMatch m = {{0}, 0};
    pat_add(&m, n);
    pat_add(&m, q.n);
    Tensor *in[5] = {dx.q, dx.s, zero_point(g, dx.z, dx.q->dtype), q.s, zero_point(g, q.z, q.y->dtype)};
    Node *f = pat_replace(g, &m, q.n, global ? "QLinearGlobalAveragePool" : "QLinearAveragePool", "com.microsoft", in, 5, q.y);
    if (!global) copy_attrs(f, n, AVGPOOL_ATTRS);
    f->opset = MS_OPSET;
    node_reinfer(f);
    note("quantize: %s -> %s '%s'", f->fused, f->op_type, q.y->name);
    return 1;
}

static int match_concat(Graph *g, Node *n)
{
    if (!pat_is(n, "Concat") || n->nin < 1 || n->nin > QCONCAT_MAX_PARTS) return 0;
    Deq d[QCONCAT_MAX_PARTS];
    Qnt q;
    if (!quant_of(next_of(g, n->out[0]), &q)) return 0;
    int same = 1;
    for (int j = 0; j < n->nin; j++) {
        if (!deq_act(n->in[j], &d[j]) || d[j].q->dtype != q.y->dtype) return 0;
        same &= same_params(&d[j], &q);
    }
    PatMatch m = {{0}, 0};
    pat_add(&m, n);
    pat_add(&m, q.n);
    Node *f;
    if (same) {
        Tensor *in[QCONCAT_MAX_PARTS];
        for (int j = 0; j < n->nin; j++) in[j] = d[j].q;
        f = pat_replace(g, &m, q.n, "Concat", "", in, n->nin, q.y);
    } else {
        Tensor *in[2 + 3 * QCONCAT_MAX_PARTS];
        in[0] = q.s;
        in[1] = zero_point(g, q.z, q.y->dtype);
        for (int j = 0; j < n->nin; j++) {
            in[2 + 3 * j] = d[j].q;
            in[3 + 3 * j] = d[j].s;
            in[4 + 3 * j] = zero_point(g, d[j].z, d[j].q->dtype);
        }
        f = pat_replace(g, &m, q.n, "QLinearConcat", "com.microsoft", in, 2 + 3 * n->nin, q.y);
        f->opset = MS_OPSET;
    }
    node_set_attr_i(f, "axis", attr_i(n, "axis"));
    node_reinfer(f);
    note("quantize: %s -> %s '%s'", f->fused, f->op_type, q.y->name);
    return 1;
}

#define MAX_MOVE_INPUTS 5   /* Slice's */

static int match_move(Graph *g, Node *n)
{
    if (!pat_moves_values(n)) return 0;
    Deq dx;
    Qnt q;
    if (!deq_act(n->in[0], &dx) || !quant_of(next_of(g, n->out[0]), &q) || !same_params(&dx, &q)) return 0;
    if (pat_is(n, "MaxPool") && attr_i(n, "storage_order")) return 0;
    PatMatch m = {{0}, 0};
    pat_add(&m, n);
    pat_add(&m, q.n);
    Tensor *in[MAX_MOVE_INPUTS];
    if (n->nin > MAX_MOVE_INPUTS) return 0;
    for (int j = 0; j < n->nin; j++) in[j] = j ? n->in[j] : dx.q;
    Node *f = pat_replace(g, &m, q.n, n->op_type, "", in, n->nin, q.y);
    copy_attrs(f, n, NULL);
    f->opset = n->opset;
    node_reinfer(f);
    note("quantize: %s on 8-bit data '%s'", f->fused, q.y->name);
    return 1;
}

/* ---- Softmax ----------------------------------------------------------------- */

/* Softmax of 8-bit data with a table of exponentials, as onnxruntime's
 * QLinearSoftmax (opset 13's rule: along one axis; before 13 only where
 * the two rules agree, the last axis) */
static int match_softmax(Graph *g, Node *n)
{
    if (!pat_is(n, "Softmax") || n->out[0]->dtype != DT_FLOAT) return 0;
    Deq dx;
    Qnt q;
    if (!deq_act(n->in[0], &dx) || !quant_of(next_of(g, n->out[0]), &q)) return 0;
    int rank = dx.q->rank;
    int64_t ax = attr_has(n, "axis") ? attr_i(n, "axis") : n->opset < 13 ? 1 : -1;
    if (ax < 0) ax += rank;
    if (ax < 0 || ax >= rank || (n->opset < 13 && ax != rank - 1)) return 0;
    PatMatch m = {{0}, 0};
    pat_add(&m, n);
    pat_add(&m, q.n);
    Tensor *in[4] = {dx.q, dx.s, q.s, zero_point(g, q.z, q.y->dtype)};
    Node *f = pat_replace(g, &m, q.n, "FusedQSoftmax", "onnx2c", in, 4, q.y);
    node_set_attr_i(f, "axis", ax);
    node_reinfer(f);
    note("quantize: %s -> FusedQSoftmax '%s'", f->fused, q.y->name);
    return 1;
}

/* Split with every output quantized with the input's parameters: the
 * split of the 8-bit data */
static int match_split(Graph *g, Node *n)
{
    if (!pat_is(n, "Split") || n->nout > MAX_SPLIT_OUTPUTS) return 0;
    Deq dx;
    if (!deq_act(n->in[0], &dx)) return 0;
    Qnt q[MAX_SPLIT_OUTPUTS];
    PatMatch m = {{0}, 0};
    pat_add(&m, n);
    for (int j = 0; j < n->nout; j++)
        if (!n->out[j] || !quant_of(next_of(g, n->out[j]), &q[j]) || !same_params(&dx, &q[j])) return 0;
    Tensor *in[2] = {dx.q, n->nin > 1 ? n->in[1] : NULL}, *out[MAX_SPLIT_OUTPUTS];
    for (int j = 0; j < n->nout; j++) out[j] = q[j].y;
    Node *f = graph_insert_node(g, n, "Split", "", in, n->nin > 1 ? 2 : 1, out, n->nout);
    copy_attrs(f, n, NULL);
    f->opset = n->opset;
    node_add_origins(f, n);
    f->fused = xstrdup("Split+QuantizeLinear");
    for (int j = 0; j < n->nout; j++) {
        node_add_origins(f, q[j].n);
        graph_remove_node(g, q[j].n);
        node_set_output(f, j, out[j]);
    }
    graph_remove_node(g, n);
    node_reinfer(f);
    note("quantize: Split+QuantizeLinear on 8-bit data '%s'", out[0]->name);
    return 1;
}

/* ---- unary functions: a table of 256 bytes --------------------------------------- */

/* Elementwise functions of one float (pat_tabulable): DQ -> f -> Q is a
 * function of the input byte, tabulated at compile time by running DQ, f
 * and Q on the 256 byte values (nodes the fold pass evaluates) */
static int match_unary(Graph *g, Node *n)
{
    if (!pat_tabulable(n) || n->out[0]->dtype != DT_FLOAT) return 0;
    Deq dx;
    Qnt q;
    if (!deq_act(n->in[0], &dx) || !quant_of(next_of(g, n->out[0]), &q) || q.y->dtype != dx.q->dtype) return 0;
    Tensor *bytes = byte_values(g, dx.q->dtype), *fx = graph_new_tensor(g, "table_in"), *fy = graph_new_tensor(g, "table_f"), *tbl = graph_new_tensor(g, "table");
    Tensor *din[3] = {bytes, dx.s, dx.z};
    Node *d = graph_insert_node(g, n, "DequantizeLinear", "", din, dx.z ? 3 : 2, &fx, 1);
    node_reinfer(d);
    Node *f = graph_insert_node(g, n, n->op_type, "", &fx, 1, &fy, 1);
    copy_attrs(f, n, NULL);
    f->opset = n->opset;
    node_reinfer(f);
    Tensor *qin[3] = {fy, q.s, q.z};
    Node *qq = graph_insert_node(g, n, "QuantizeLinear", "", qin, q.z ? 3 : 2, &tbl, 1);
    qq->opset = q.n->opset;
    node_reinfer(qq);
    PatMatch m = {{0}, 0};
    pat_add(&m, n);
    pat_add(&m, q.n);
    Tensor *in[2] = {dx.q, tbl};
    Node *l = pat_replace(g, &m, q.n, "FusedQLookup", "onnx2c", in, 2, q.y);
    node_reinfer(l);
    note("quantize: %s -> a 256-entry table '%s'", l->fused, q.y->name);
    return 1;
}

int pass_quantize(Graph *g)
{
    int changes = 0;
    for (int i = 0; i < g->nnodes; i++) {   /* the float tensor each 8-bit one stands for (--debug-tensors) */
        Qnt q;
        if (quant_of(g->nodes[i], &q) && !q.y->qof) {   /* (calibrate.c names its own) */
            q.y->qscale = q.scale;
            q.y->qzero = q.zp;
            q.y->qof = g->nodes[i]->in[0]->name;
        }
    }
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        diag_node = n;
        if (match_conv(g, n) || match_matmul(g, n) || match_binary(g, n) || match_avgpool(g, n) || match_concat(g, n) ||
            match_move(g, n) || match_split(g, n) || match_softmax(g, n) || match_unary(g, n) ||
            match_weight_only(g, n)) {
            changes++;
            i = -1;   /* the node list changed: rescan */
        }
    }
    diag_node = NULL;
    return changes;
}
