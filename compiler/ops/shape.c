/* Shape ops and views: Reshape, Flatten, Squeeze, Unsqueeze, Identity,
 * Dropout, Shape, Size, Constant, ConstantOfShape, Range. Views share the
 * bytes of their input (lower_view); Shape and Size are known at compile
 * time, so their outputs are constants. */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/movement.h"

/* the shape/axes operand: an input (newer opsets) or an attribute */
static int ints_from(Node *n, int input, const char *attr, int64_t *v, int *present)
{
    Tensor *t = in_t(n, input);
    *present = 1;
    if (t) return const_ints(n, t, v, MAX_RANK * 2);
    const int64_t *a;
    int k = attr_ints(n, attr, &a);
    if (!attr_has(n, attr)) *present = 0;
    if (k > MAX_RANK * 2) fail("attribute '%s' is too long", attr);
    memcpy(v, a, sizeof(int64_t) * (size_t)k);
    return k;
}

void infer_reshape(Node *n)
{
    Tensor *x = n->in[0];
    int64_t s[MAX_RANK * 2];
    int present, k = ints_from(n, 1, "shape", s, &present);
    if (!present) fail("the target shape is missing");
    if (k > MAX_RANK) fail("target rank %d exceeds %d", k, MAX_RANK);
    int allowzero = (int)attr_i(n, "allowzero");
    int64_t known = 1, infer_at = -1;
    for (int i = 0; i < k; i++) {
        if (s[i] == 0 && !allowzero) {
            if (i >= x->rank) fail("target shape entry %d is 0 (copy), but the input has rank %d", i, x->rank);
            s[i] = x->dims[i];
        }
        if (s[i] == -1) {
            if (infer_at >= 0) fail("the target shape has more than one -1");
            infer_at = i;
        } else if (s[i] < 0) {
            fail("target shape entry %d is %lld", i, (long long)s[i]);
        } else {
            if (s[i] && known > INT64_MAX / s[i])
                fail("the target shape's element count overflows (entry %d is %lld)", i, (long long)s[i]);
            known *= s[i];
        }
    }
    int64_t total = tensor_numel(x);
    if (infer_at >= 0) {
        if (known == 0 || total % known) fail("cannot reshape %s (%lld elements) with a -1 entry", tensor_shape_str(x), (long long)total);
        s[infer_at] = total / known;
    } else if (known != total) {
        fail("inconsistent shapes: cannot reshape %s (%lld elements) into %d dims with %lld elements", tensor_shape_str(x),
             (long long)total, k, (long long)known);
    }
    set_out(n, 0, x->dtype, k, s);
}

void infer_flatten(Node *n)
{
    Tensor *x = n->in[0];
    int64_t axis = attr_i(n, "axis");
    if (axis < -x->rank || axis > x->rank) fail("axis %lld is out of range for rank %d", (long long)axis, x->rank);
    if (axis < 0) axis += x->rank;
    int64_t d[2] = {1, 1};
    for (int i = 0; i < x->rank; i++) d[i < axis ? 0 : 1] *= x->dims[i];
    set_out(n, 0, x->dtype, 2, d);
}

void infer_squeeze(Node *n)
{
    Tensor *x = n->in[0];
    int64_t axes[MAX_RANK * 2];
    int present, k = ints_from(n, 1, "axes", axes, &present);
    char drop[MAX_RANK] = {0};
    if (!present || k == 0) {
        for (int i = 0; i < x->rank; i++) drop[i] = x->dims[i] == 1;
    } else {
        for (int i = 0; i < k; i++) {
            int64_t a = norm_axis(n, axes[i], x->rank);
            if (x->dims[a] != 1) fail("cannot squeeze axis %lld of %s: its size is not 1", (long long)axes[i], tensor_shape_str(x));
            drop[a] = 1;
        }
    }
    int64_t d[MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++) if (!drop[i]) d[r++] = x->dims[i];
    set_out(n, 0, x->dtype, r, d);
}

void infer_unsqueeze(Node *n)
{
    Tensor *x = n->in[0];
    int64_t axes[MAX_RANK * 2];
    int present, k = ints_from(n, 1, "axes", axes, &present);
    if (!present) fail("axes are missing");
    int r = x->rank + k;
    if (r > MAX_RANK) fail("the result would have rank %d; at most %d is supported", r, MAX_RANK);
    char ins[MAX_RANK] = {0};
    for (int i = 0; i < k; i++) {
        int64_t a = norm_axis(n, axes[i], r);
        if (ins[a]) fail("axis %lld is repeated", (long long)axes[i]);
        ins[a] = 1;
    }
    int64_t d[MAX_RANK];
    for (int i = 0, j = 0; i < r; i++) d[i] = ins[i] ? 1 : x->dims[j++];
    set_out(n, 0, x->dtype, r, d);
}

/* the mask and the scale of a training-mode Dropout, and Range, are computed
 * here and become constants of the C file: at most 2^20 elements each (an
 * int64 Range of 8 MB, some 10 MB of C). Fuzzing: a Range of 2^24 float64
 * values made a 235 MB .c from a 100-byte model (the bound was 2^24); a
 * Dropout mask had no bound but the tensor's. */
#define DROPOUT_MASK_MAX (INT64_C(1) << 20)

void infer_dropout(Node *n)
{
    /* before opset 7 is_test=0 (the default) is training mode: a random mask */
    if (n->opset < 7 && !(attr_has(n, "is_test") && attr_i(n, "is_test")))
        fail("Dropout-%d with is_test=0 (the default before opset 7) drops random elements (training mode); "
             "onnx2c compiles it with is_test=1 (inference: y = x) or from opset 7 on", n->opset < 6 ? 1 : 6);
    out_like(n, 0, n->in[0]);
    /* the mask: bool from opset 10; before, in the data type, with values the
     * spec does not give in inference (onnxruntime writes 0, onnx's reference
     * true): refused when something reads it */
    if (n->nout > 1 && n->out[1] && n->opset < 10 && (n->out[1]->nuses > 0 || n->out[1]->is_output))
        fail("Dropout-%d's mask output '%s' is read: before opset 10 the spec does not say what it holds in "
             "inference (onnxruntime writes 0, onnx's reference 1); onnx2c computes the mask from Dropout-10 on",
             n->opset < 7 ? 6 : 7, n->out[1]->name);
    if (n->nout > 1 && n->out[1])
        set_out(n, 1, n->opset < 10 ? n->in[0]->dtype : DT_BOOL, n->in[0]->rank, n->in[0]->dims);
    Tensor *tm = in_t(n, 2), *tr = in_t(n, 1);
    /* training_mode decides what the op computes (a random mask or none): a
     * graph input gets bound like a shape input */
    if (tm) need_const(n, tm, "training_mode");
    if (tm && elem_i64(tm->dtype, tm->data, 0)) {
        /* training: a random mask, unless nothing is dropped (ratio 0) */
        double ratio = 0.5;
        if (tr) {
            need_const_value(n, tr, "ratio (in training mode)");
            ratio = elem_f64(tr->dtype, tr->data, 0);
        }
        if (ratio != 0 && !attr_has(n, "seed"))
            fail("training_mode is true with ratio %g and no seed: the mask is random; give the node a seed (onnx2c "
                 "then draws the mask at compile time from MT19937 seeded with it, as numpy's RandomState does)", ratio);
        if (ratio < 0 || ratio >= 1) fail("ratio %g is outside [0, 1)", ratio);
        if (ratio != 0 && n->in[0]->dtype != DT_FLOAT && n->in[0]->dtype != DT_DOUBLE)
            fail("training-mode Dropout with a mask is supported on float32 and float64, not %s",
                 dtype_name(n->in[0]->dtype));
        /* the mask and the scale become constants of the C file (lower_dropout) */
        if (ratio != 0 && tensor_numel(n->in[0]) > DROPOUT_MASK_MAX)
            fail("training-mode Dropout over %lld elements: onnx2c draws the mask at compile time, of at most %lld "
                 "elements", (long long)tensor_numel(n->in[0]), (long long)DROPOUT_MASK_MAX);
    }
}

/* Training-mode Dropout with a seed: the mask of numpy's
 * RandomState(seed).uniform(0, 1, shape) >= ratio (MT19937, 53-bit
 * doubles), drawn at compile time: the same mask every run. Returns the
 * ratio, or 0 when nothing is dropped (inference, or ratio 0). */
static double dropout_ratio(Node *n)
{
    Tensor *tm = in_t(n, 2), *tr = in_t(n, 1);
    if (!tm || !elem_i64(tm->dtype, tm->data, 0)) return 0;
    return tr ? elem_f64(tr->dtype, tr->data, 0) : 0.5;
}

/* MT19937 (Matsumoto & Nishimura 1998) with its init_genrand seeding */
typedef struct { uint32_t mt[624]; int i; } Mt19937;

static void mt_seed(Mt19937 *m, uint32_t s)
{
    m->mt[0] = s;
    for (int i = 1; i < 624; i++) m->mt[i] = 1812433253u * (m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) + (uint32_t)i;
    m->i = 624;
}

static uint32_t mt_next(Mt19937 *m)
{
    if (m->i >= 624) {
        for (int k = 0; k < 624; k++) {
            uint32_t y = (m->mt[k] & 0x80000000u) | (m->mt[(k + 1) % 624] & 0x7fffffffu);
            m->mt[k] = m->mt[(k + 397) % 624] ^ (y >> 1) ^ (y & 1u ? 0x9908b0dfu : 0u);
        }
        m->i = 0;
    }
    uint32_t y = m->mt[m->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

/* a double in [0, 1) from 53 random bits (genrand_res53) */
static double mt_double(Mt19937 *m)
{
    uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

void lower_dropout(Node *n, Lowering *L)
{
    double ratio = dropout_ratio(n);
    if (ratio != 0) {   /* training with a seed: y = x * (mask ? 1 / (1 - ratio) : 0) */
        Tensor *x = n->in[0];
        int64_t ne = tensor_numel(x);
        Mt19937 *m = xalloc(sizeof *m);
        mt_seed(m, (uint32_t)attr_i(n, "seed"));
        Tensor *k = lower_const(L, "dropout_scale", x->dtype, x->rank, x->dims);
        Tensor *mk = lower_const(L, "dropout_mask", DT_BOOL, x->rank, x->dims);
        /* the scale as numpy computes it: 1 / (1 - ratio) in the ratio's type (float32) */
        Tensor *tr = in_t(n, 1);
        double scale = tr && tr->dtype == DT_FLOAT ? (double)(1.0f / (1.0f - (float)ratio)) : 1.0 / (1.0 - ratio);
        for (int64_t i = 0; i < ne; i++) {
            int keep = mt_double(m) >= ratio;
            ((uint8_t *)mk->data)[i] = (uint8_t)keep;
            elem_set(x->dtype, k->data, i, keep ? scale : 0.0);
        }
        if (n->out[0]) ew_binary_call(L, "Mul", x, k, n->out[0]);
        if (n->nout > 1 && n->out[1]) lower_copy(L, mk, n->out[1]);
        return;
    }
    /* inference: identity; the mask is all true */
    if (n->out[0]) lower_copy(L, n->in[0], n->out[0]);
    if (n->nout > 1 && n->out[1]) {
        int dt = n->out[1]->dtype;   /* bool, or the data type before opset 10 */
        Tensor *v = lower_temp(L, dt, 0, NULL);
        v->data = xalloc(16);
        elem_set(dt, v->data, 0, 1.0);
        KCall *c = lower_call(L, "o2c_fill", tensor_numel(n->out[1]));
        c->x[0] = v;
        c->y[0] = n->out[1];
        c->k[O2C_FILL_ESIZE] = (int64_t)dtype_size(dt);
    }
}

void infer_shape(Node *n)
{
    Tensor *x = n->in[0];
    int64_t start = attr_i(n, "start"), end = attr_has(n, "end") ? attr_i(n, "end") : x->rank;
    if (start < 0) start += x->rank;
    if (end < 0) end += x->rank;
    if (start < 0) start = 0;
    if (end > x->rank) end = x->rank;
    int64_t len = end > start ? end - start : 0;
    set_out(n, 0, DT_INT64, 1, &len);
    int64_t *d = tensor_alloc_data(n->out[0]);
    for (int64_t i = 0; i < len; i++) d[i] = x->dims[start + i];
}

void infer_size(Node *n)
{
    set_out(n, 0, DT_INT64, 0, NULL);
    int64_t *d = tensor_alloc_data(n->out[0]);
    d[0] = tensor_numel(n->in[0]);
}

void infer_constant(Node *n)
{
    Tensor *y = n->out[0];
    if (n->nattrs != 1) fail("a Constant needs exactly one value attribute, it has %d", n->nattrs);
    const Attr *a = &n->attrs[0];
    if (!strcmp(a->name, "value") && a->type == AT_TENSOR) {
        y->dtype = a->t->dtype;
        tensor_set_shape(y, a->t->rank, a->t->dims);
        y->data = a->t->data;
    } else if (!strcmp(a->name, "value_float")) {
        set_out(n, 0, DT_FLOAT, 0, NULL);
        *(float *)tensor_alloc_data(y) = (float)attr_f(n, "value_float");
    } else if (!strcmp(a->name, "value_int")) {
        set_out(n, 0, DT_INT64, 0, NULL);
        *(int64_t *)tensor_alloc_data(y) = attr_i(n, "value_int");
    } else if (!strcmp(a->name, "value_floats") || !strcmp(a->name, "value_ints")) {
        int64_t len = a->n;
        int fl = !strcmp(a->name, "value_floats");
        if (len && (fl ? !a->floats : !a->ints))   /* a list of another type under this name */
            fail("Constant attribute '%s' does not hold %s", a->name, fl ? "floats" : "ints");
        set_out(n, 0, fl ? DT_FLOAT : DT_INT64, 1, &len);
        void *d = tensor_alloc_data(y);
        for (int64_t i = 0; i < len; i++) {
            if (fl) ((float *)d)[i] = (float)a->floats[i];
            else ((int64_t *)d)[i] = a->ints[i];
        }
    } else {
        fail("Constant attribute '%s' is not supported (strings and sparse tensors are not)", a->name);
    }
}

void infer_constant_of_shape(Node *n)
{
    int64_t s[MAX_RANK * 2];
    int k = const_ints(n, n->in[0], s, MAX_RANK * 2);
    if (k > MAX_RANK) fail("rank %d exceeds %d", k, MAX_RANK);
    const Attr *v = attr_find(n, "value");
    int dt = v && v->type == AT_TENSOR ? v->t->dtype : DT_FLOAT;
    if (v && v->type == AT_TENSOR && tensor_numel(v->t) != 1) fail("value must hold one element");
    set_out(n, 0, dt, k, s);
}

void lower_constant_of_shape(Node *n, Lowering *L)
{
    static const float zero = 0;
    const Attr *v = attr_find(n, "value");
    Tensor *val;
    if (v && v->type == AT_TENSOR) val = v->t;
    else {
        val = lower_temp(L, DT_FLOAT, 0, NULL);
        val->data = (void *)&zero;
    }
    KCall *c = lower_call(L, "o2c_fill", tensor_numel(n->out[0]));
    c->x[0] = val;
    c->y[0] = n->out[0];
    c->k[O2C_FILL_ESIZE] = (int64_t)dtype_size(n->out[0]->dtype);
}

#define RANGE_MAX_ELEMS (INT64_C(1) << 20)   /* see DROPOUT_MASK_MAX */

void infer_range(Node *n)
{
    Tensor *s = n->in[0], *l = n->in[1], *d = n->in[2];
    need_dtype(n, s, DTS_NUM);
    /* Range-27: float16/bfloat16 computed in stash_type (1: float32, what the promotion does) */
    if (n->promoted && attr_i(n, "stash_type") != 1)
        fail("stash_type %lld: onnx2c computes Range on float16/bfloat16 in float32 (stash_type 1) only",
             (long long)attr_i(n, "stash_type"));
    need_const(n, s, "start");
    need_const(n, l, "limit");
    need_const(n, d, "delta");
    if (tensor_numel(s) != 1 || tensor_numel(l) != 1 || tensor_numel(d) != 1)
        fail("start, limit and delta must be scalars (one element each)");
    double a = elem_f64(s->dtype, s->data, 0), b = elem_f64(l->dtype, l->data, 0), st = elem_f64(d->dtype, d->data, 0);
    if (st == 0) fail("delta is 0");
    double cnt = ceil((b - a) / st);
    if (cnt != cnt || cnt > (double)RANGE_MAX_ELEMS)   /* Range becomes a constant array in the C file */
        fail("the range from %g to %g by %g has %g elements; onnx2c makes Range a constant, of at most %lld "
             "elements", a, b, st, cnt, (long long)RANGE_MAX_ELEMS);
    int64_t len = cnt > 0 ? (int64_t)cnt : 0;
    set_out(n, 0, s->dtype, 1, &len);
}

/* Range is evaluated at compile time (all inputs are constant). */
void lower_range(Node *n, Lowering *L)
{
    Tensor *s = n->in[0], *d = n->in[2], *y = n->out[0];
    double a = elem_f64(s->dtype, s->data, 0), st = elem_f64(d->dtype, d->data, 0);
    if (!s->data || !d->data) fail("internal: Range with non-constant inputs");
    /* folding fills y itself; a node left to code generation (a 16-bit Range,
     * computed on float32 stand-ins) copies its values from a constant */
    Tensor *v = y->data ? y : lower_const(L, "range", y->dtype, y->rank, y->dims);
    for (int64_t i = 0; i < tensor_numel(y); i++) elem_set(v->dtype, v->data, i, a + (double)i * st);
    if (v != y) lower_copy(L, v, y);
}
