/* Extra ops: Pow of integers, SwiGLU, CumProd, BitCast, ReverseSequence,
 * GroupNormalization, Compress, TfIdfVectorizer (kernels in
 * runtime/c/extra.h), and the ops whose output size depends on the values
 * of their inputs: NonZero, Unique, NonMaxSuppression (and Compress's
 * condition). onnx2c's shapes are static, so those inputs must be known at
 * compile time (constants, or graph inputs bound with --bind): the op is
 * then computed here, in the compiler, and its outputs are constants. */
#include <stdlib.h>
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/elementwise.h"
#include "../../runtime/c/params/extra.h"

static int64_t prod(const int64_t *d, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++) p *= d[i];
    return p;
}

/* ---- Pow with an integer base (int32, int64) ------------------------------ */

/* A broadcasting binary kernel call with the elementwise kernels' slots. */
static KCall *ew_call(Lowering *L, const char *kernel, Tensor *a, Tensor *b, Tensor *y, Tensor *shape_a,
                      Tensor *shape_b)
{
    KCall *c = lower_call(L, kernel, tensor_numel(y));
    c->x[0] = a;
    c->x[1] = b;
    c->y[0] = y;
    if (tensor_numel(a) == tensor_numel(y) && tensor_numel(b) == tensor_numel(y)) return c;
    c->k[O2C_EW_RANK] = y->rank;
    for (int d = 0; d < y->rank; d++) c->k[O2C_EW_DIMS + d] = y->dims[d];
    bcast_strides(shape_a, y->rank, c->k + O2C_EW_STR_AT(0));
    bcast_strides(shape_b, y->rank, c->k + O2C_EW_STR_AT(1));
    return c;
}

/* Called by lower_binary (elementwise.c). An integer exponent: exact powers
 * (o2c_ipow_T, the exponent cast to the base type); a real one: computed in
 * double, as numpy and onnxruntime do, and truncated to the base type. */
void lower_pow_int(Node *n, Lowering *L)
{
    Tensor *a = n->in[0], *b = n->in[1], *y = n->out[0];
    if (dtype_is_float(b->dtype)) {
        Tensor *da = lower_cast_temp(L, a, DT_DOUBLE), *db = lower_cast_temp(L, b, DT_DOUBLE);
        Tensor *dy = lower_temp(L, DT_DOUBLE, y->rank, y->dims);
        ew_call(L, "o2c_Pow_f64", da, db, dy, a, b);
        KCall *c = lower_call(L, xfmt("o2c_cast_f64_%s", dtype_suffix(y->dtype)), tensor_numel(y));
        c->x[0] = dy;
        c->y[0] = y;
        return;
    }
    Tensor *cb = lower_cast_temp(L, b, a->dtype);
    KCall *c = lower_call(L, xfmt("o2c_ipow_%s", dtype_suffix(a->dtype)), tensor_numel(y));
    c->x[0] = a;
    c->x[1] = cb;
    c->y[0] = y;
    if (tensor_numel(a) == tensor_numel(y) && tensor_numel(b) == tensor_numel(y)) return;
    c->k[O2C_IPOW_RANK] = y->rank;
    for (int d = 0; d < y->rank; d++) c->k[O2C_IPOW_DIMS + d] = y->dims[d];
    bcast_strides(a, y->rank, c->k + O2C_IPOW_SA);
    bcast_strides(b, y->rank, c->k + O2C_IPOW_SB);
}

/* ---- SwiGLU ------------------------------------------------------------------ */

void infer_swiglu(Node *n)
{
    Tensor *a = n->in[0], *b = n->in[1];
    need_dtype(n, a, DTS_FLOAT);
    if (b->dtype != a->dtype)
        fail("inputs '%s' (%s) and '%s' (%s) must have the same data type", a->name, dtype_name(a->dtype), b->name,
             dtype_name(b->dtype));
    int same = a->rank == b->rank;
    for (int d = 0; same && d < a->rank; d++) same = a->dims[d] == b->dims[d];
    if (!same)
        fail("inputs '%s' (%s) and '%s' (%s) must have the same shape (SwiGLU does not broadcast)", a->name,
             tensor_shape_str(a), b->name, tensor_shape_str(b));
    out_like(n, 0, a);
}

void lower_swiglu(Node *n, Lowering *L)
{
    Tensor *y = n->out[0];
    KCall *c = lower_call(L, xfmt("o2c_swiglu_%s", dtype_suffix(y->dtype)), tensor_numel(y));
    c->x[0] = n->in[0];
    c->x[1] = n->in[1];
    c->y[0] = y;
    c->f[O2C_SWIGLU_F_ALPHA] = attr_f(n, "alpha");
}

/* ---- CumProd ------------------------------------------------------------------ */

/* inferred as CumSum (infer_cumulative, misc.c) */

void lower_cumprod(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    KCall *c = lower_call(L, xfmt("o2c_cumprod_%s", dtype_suffix(x->dtype)), tensor_numel(y));
    c->x[0] = x;
    c->x[1] = n->in[1];
    c->y[0] = y;
    c->k[O2C_CUMPROD_RANK] = x->rank;
    for (int d = 0; d < x->rank; d++) c->k[O2C_CUMPROD_DIMS + d] = x->dims[d];
    c->k[O2C_CUMPROD_AXSIZE] = (int64_t)dtype_size(n->in[1]->dtype);
    c->k[O2C_CUMPROD_EXCLUSIVE] = attr_i(n, "exclusive") != 0;
    c->k[O2C_CUMPROD_REVERSE] = attr_i(n, "reverse") != 0;
}

/* ---- BitCast (a view: the same bytes as another type of the same width) ---- */

void infer_bitcast(Node *n)
{
    Tensor *x = n->in[0];
    if (!attr_has(n, "to")) fail("attribute 'to' is required");
    int to = (int)attr_i(n, "to");
    if (!dtype_supported(to)) fail("'to' is %s, which onnx2c does not support yet", dtype_name(to));
    if (dtype_size(to) != dtype_size(x->dtype))
        fail("'to' (%s) must have the bit width of the input's type %s", dtype_name(to), dtype_name(x->dtype));
    set_out(n, 0, to, x->rank, x->dims);
}

/* ---- ReverseSequence ---------------------------------------------------------- */

static void revseq_axes(Node *n, int *bax, int *tax)
{
    Tensor *x = n->in[0];
    if (x->rank < 2) fail("input '%s' must have rank 2 or more, it is %s", x->name, tensor_shape_str(x));
    *bax = (int)attr_i(n, "batch_axis");
    *tax = (int)attr_i(n, "time_axis");
    if ((*bax != 0 && *bax != 1) || (*tax != 0 && *tax != 1) || *bax == *tax)
        fail("batch_axis (%d) and time_axis (%d) must be 0 and 1 in some order", *bax, *tax);
}

void infer_revseq(Node *n)
{
    Tensor *x = n->in[0], *sl = n->in[1];
    int bax, tax;
    revseq_axes(n, &bax, &tax);
    static const int DTS_I64[] = {DT_INT64, 0};
    need_dtype(n, sl, DTS_I64);
    if (sl->rank != 1 || sl->dims[0] != x->dims[bax])
        fail("sequence_lens ('%s') must be 1-D with %lld values (the batch size), it is %s", sl->name,
             (long long)x->dims[bax], tensor_shape_str(sl));
    out_like(n, 0, x);
}

void lower_revseq(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int bax, tax;
    revseq_axes(n, &bax, &tax);
    KCall *c = lower_call(L, "o2c_revseq", tensor_numel(y));
    c->x[0] = x;
    c->x[1] = n->in[1];
    c->y[0] = y;
    c->k[O2C_REVSEQ_D0] = x->dims[0];
    c->k[O2C_REVSEQ_D1] = x->dims[1];
    c->k[O2C_REVSEQ_INNER] = prod(x->dims, 2, x->rank);
    c->k[O2C_REVSEQ_BATCH_AXIS] = bax;
    c->k[O2C_REVSEQ_ESIZE] = (int64_t)dtype_size(x->dtype);
}

/* ---- GroupNormalization --------------------------------------------------------- */

/* Opset 18: scale and bias hold one value per group; 21: one per channel. */
static int64_t groupnorm_groups(Node *n, int *pergroup)
{
    Tensor *x = n->in[0];
    if (x->rank < 2) fail("input '%s' must have rank 2 or more (N, C, ...), it is %s", x->name, tensor_shape_str(x));
    if (!attr_has(n, "num_groups")) fail("attribute 'num_groups' is required");
    int64_t g = attr_i(n, "num_groups"), c = x->dims[1];
    if (g <= 0 || c % g) fail("num_groups %lld must be positive and divide the %lld channels", (long long)g, (long long)c);
    *pergroup = n->opset < 21;
    for (int j = 1; j <= 2; j++) {
        Tensor *t = n->in[j];
        int64_t want = *pergroup ? g : c;
        if (t->dtype != x->dtype) fail("input '%s' must have X's data type %s", t->name, dtype_name(x->dtype));
        if (t->rank != 1 || t->dims[0] != want)
            fail("input '%s' must be 1-D with %lld values (one per %s at opset %d), it is %s", t->name, (long long)want,
                 *pergroup ? "group" : "channel", n->opset, tensor_shape_str(t));
    }
    return g;
}

void infer_groupnorm(Node *n)
{
    int pg;
    need_dtype(n, n->in[0], DTS_FLOAT);
    groupnorm_groups(n, &pg);
    out_like(n, 0, n->in[0]);
}

void lower_groupnorm(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int pg;
    int64_t g = groupnorm_groups(n, &pg);
    KCall *c = lower_call(L, xfmt("o2c_groupnorm_%s", dtype_suffix(x->dtype)), x->dims[0] * g);
    c->x[0] = x;
    c->x[1] = n->in[1];
    c->x[2] = n->in[2];
    c->y[0] = y;
    c->k[O2C_GROUPNORM_G] = g;
    c->k[O2C_GROUPNORM_CPG] = x->dims[1] / g;
    c->k[O2C_GROUPNORM_S] = prod(x->dims, 2, x->rank);
    c->k[O2C_GROUPNORM_PERGROUP] = pg;
    c->f[O2C_GROUPNORM_F_EPS] = attr_f(n, "epsilon");
}

/* ---- Compress ------------------------------------------------------------------- */

/* The input seen as (outer, axn, inner); the kept indices along axn (NULL:
 * only counted). The condition decides the output's size: it must be known
 * at compile time. */
static int64_t compress_plan(Node *n, int64_t *outer, int64_t *axn, int64_t *inner, int64_t *idx)
{
    Tensor *x = n->in[0], *cond = n->in[1];
    if (cond->rank != 1) fail("condition ('%s') must be 1-D, it is %s", cond->name, tensor_shape_str(cond));
    int known = need_const_or_dyn(n, cond, "Compress's condition");
    if (attr_has(n, "axis")) {
        int ax = (int)norm_axis(n, attr_i(n, "axis"), x->rank);
        *outer = prod(x->dims, 0, ax);
        *axn = x->dims[ax];
        *inner = prod(x->dims, ax + 1, x->rank);
    } else {
        *outer = *inner = 1;
        *axn = tensor_numel(x);
    }
    if (!known) {   /* a run-time count: at most the condition's length */
        if (tensor_numel(cond) > *axn)
            fail("condition ('%s') has %lld entries, more than the %lld of the axis; onnx2c needs at most as many "
                 "when the condition is known only at run time", cond->name, (long long)tensor_numel(cond),
                 (long long)*axn);
        return tensor_numel(cond);
    }
    int64_t k = 0;
    for (int64_t i = 0; i < tensor_numel(cond); i++) {
        if (!elem_i64(cond->dtype, cond->data, i)) continue;
        if (i >= *axn)
            fail("condition ('%s') selects index %lld, beyond the %lld entries of the axis", cond->name, (long long)i,
                 (long long)*axn);
        if (idx) idx[k] = i;
        k++;
    }
    return k;
}

void infer_compress(Node *n)
{
    Tensor *x = n->in[0];
    int64_t outer, axn, inner;
    need_dtype(n, n->in[1], DTS_BOOL);
    int64_t k = compress_plan(n, &outer, &axn, &inner, NULL);
    if (!attr_has(n, "axis")) {
        set_out(n, 0, x->dtype, 1, &k);
        return;
    }
    int64_t d[MAX_RANK];
    int ax = (int)norm_axis(n, attr_i(n, "axis"), x->rank);
    memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
    d[ax] = k;
    set_out(n, 0, x->dtype, x->rank, d);
}

void lower_compress(Node *n, Lowering *L)
{
    Tensor *y = n->out[0];
    int64_t outer, axn, inner, k = compress_plan(n, &outer, &axn, &inner, NULL);
    if (!n->in[1]->data) {
        KCall *c = lower_call(L, "o2c_compress_dyn", 1);
        c->x[0] = n->in[0];
        c->x[1] = n->in[1];
        c->y[0] = y;
        c->y[1] = lower_dyn_output(L, y, attr_has(n, "axis") ? (int)norm_axis(n, attr_i(n, "axis"), n->in[0]->rank) : 0,
                                   NULL);
        c->k[O2C_COMPRESS_AXN] = axn;
        c->k[O2C_COMPRESS_K] = k;
        c->k[O2C_COMPRESS_INNER] = inner;
        c->k[O2C_COMPRESS_OUTER] = outer;
        c->k[O2C_COMPRESS_ESIZE] = (int64_t)dtype_size(y->dtype);
        return;
    }
    Tensor *ti = lower_const(L, "kept", DT_INT64, 1, &k);
    compress_plan(n, &outer, &axn, &inner, (int64_t *)ti->data);
    KCall *c = lower_call(L, "o2c_compress", tensor_numel(y));
    c->x[0] = n->in[0];
    c->x[1] = ti;
    c->y[0] = y;
    c->k[O2C_COMPRESS_AXN] = axn;
    c->k[O2C_COMPRESS_K] = k;
    c->k[O2C_COMPRESS_INNER] = inner;
    c->k[O2C_COMPRESS_ESIZE] = (int64_t)dtype_size(y->dtype);
}

/* ---- TfIdfVectorizer ---------------------------------------------------------------- */

/* The n-gram table the kernel matches: per pool n-gram with n in [min, max]
 * (a later duplicate replaces an earlier one, whose column becomes -1:
 * skipped): n, its
 * output column, its n items. Returns the table's length (tab NULL: only
 * counted) and sets the number of output columns. */
static int64_t tfidf_table(Node *n, int64_t *tab, int64_t *ncols)
{
    const int64_t *counts, *indexes, *pool;
    int nc = attr_ints(n, "ngram_counts", &counts);
    int ni = attr_ints(n, "ngram_indexes", &indexes);
    int np = attr_ints(n, "pool_int64s", &pool);
    if (attr_has(n, "pool_strings")) fail("pool_strings: string n-grams are not supported (onnx2c has no strings)");
    if (!attr_has(n, "pool_int64s")) fail("attribute pool_int64s is required");
    int64_t minn = attr_i(n, "min_gram_length"), maxn = attr_i(n, "max_gram_length");
    if (minn < 1 || maxn < minn) fail("min_gram_length %lld and max_gram_length %lld: need 1 <= min <= max", (long long)minn, (long long)maxn);
    if (attr_i(n, "max_skip_count") < 0) fail("max_skip_count must be 0 or more");
    *ncols = 0;
    for (int i = 0; i < ni; i++) {
        if (indexes[i] < 0) fail("ngram_indexes holds a negative index %lld", (long long)indexes[i]);
        if (indexes[i] + 1 > *ncols) *ncols = indexes[i] + 1;
    }
    int64_t len = 0, id = 0;
    for (int i = 0; i < nc; i++) {
        int64_t size = i + 1, start = counts[i], end = i + 1 < nc ? counts[i + 1] : np;
        if (start < 0 || end > np || end < start) fail("ngram_counts is inconsistent with the pool's %d items", np);
        for (int64_t s = start; s + size <= end; s += size, id++) {
            if (size < minn || size > maxn) continue;
            if (id >= ni) fail("ngram_indexes has %d entries; the pool has more n-grams", ni);
            if (tab) {
                /* an earlier identical n-gram: the later one takes its place */
                for (int64_t e = 0; e < len; e += 2 + tab[e])
                    if (tab[e] == size && !memcmp(tab + e + 2, pool + s, sizeof(int64_t) * (size_t)size)) tab[e + 1] = -1;
                tab[len] = size;
                tab[len + 1] = indexes[id];
                memcpy(tab + len + 2, pool + s, sizeof(int64_t) * (size_t)size);
            }
            len += 2 + size;
        }
    }
    return len;
}

void infer_tfidf(Node *n)
{
    Tensor *x = n->in[0];
    need_dtype(n, x, DTS_INDEX);
    if (x->rank != 1 && x->rank != 2) fail("input '%s' must be [C] or [N, C], it is %s", x->name, tensor_shape_str(x));
    const char *m = attr_s(n, "mode");
    if (!m || (strcmp(m, "TF") && strcmp(m, "IDF") && strcmp(m, "TFIDF")))
        fail("mode must be TF, IDF or TFIDF, it is '%s'", m ? m : "(absent)");
    int64_t nc;
    tfidf_table(n, NULL, &nc);
    const double *w;
    int nw = attr_floats(n, "weights", &w);
    if (nw && nw < nc) fail("weights has %d values; the output has %lld columns", nw, (long long)nc);
    int64_t d[2] = {x->dims[0], nc};
    if (x->rank == 1) set_out(n, 0, DT_FLOAT, 1, &nc);
    else set_out(n, 0, DT_FLOAT, 2, d);
}

void lower_tfidf(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int64_t nc, len = tfidf_table(n, NULL, &nc);
    int64_t tl = len ? len : 1;
    Tensor *tab = lower_const(L, "ngrams", DT_INT64, 1, &tl);
    tfidf_table(n, (int64_t *)tab->data, &nc);
    const double *w;
    int nw = attr_floats(n, "weights", &w);
    Tensor *tw = NULL;
    if (nw) {
        int64_t wn = nw;
        tw = lower_const(L, "weights", DT_FLOAT, 1, &wn);
        for (int i = 0; i < nw; i++) ((float *)tw->data)[i] = (float)w[i];
    }
    const char *m = attr_s(n, "mode");
    int64_t rows = x->rank == 2 ? x->dims[0] : 1;
    KCall *c = lower_call(L, "o2c_tfidf", rows);
    c->x[0] = x;
    c->x[1] = tab;
    c->x[2] = tw;
    c->y[0] = y;
    c->k[O2C_TFIDF_C] = x->dims[x->rank - 1];
    c->k[O2C_TFIDF_XSIZE] = (int64_t)dtype_size(x->dtype);
    c->k[O2C_TFIDF_NCOLS] = nc;
    c->k[O2C_TFIDF_MINN] = attr_i(n, "min_gram_length");
    c->k[O2C_TFIDF_MAXN] = attr_i(n, "max_gram_length");
    c->k[O2C_TFIDF_MAXSKIP] = attr_i(n, "max_skip_count");
    c->k[O2C_TFIDF_MODE] = !strcmp(m, "TF") ? O2C_TFIDF_MODE_TF : !strcmp(m, "IDF") ? O2C_TFIDF_MODE_IDF : O2C_TFIDF_MODE_TFIDF;
    c->k[O2C_TFIDF_TLEN] = len;
}

/* ---- ops computed at compile time: NonZero, Unique, NonMaxSuppression ---------- */

/* Their output sizes depend on the input values, so the inputs must be known
 * at compile time (need_const: a constant, or a graph input bound with
 * --bind); the outputs are then computed here and copied from constants. */

/* A constant computed by the lowering, copied into output o. */
static void out_const(Lowering *L, Node *n, int o, const char *what, const void *data)
{
    Tensor *y = o < n->nout ? n->out[o] : NULL;
    if (!y || tensor_numel(y) == 0) return;
    Tensor *t = lower_const(L, what, y->dtype, y->rank, y->dims);
    memcpy(t->data, data, tensor_bytes(y));
    lower_copy(L, t, y);
}

/* NonZero: the indices of the nonzero elements, [rank, count] int64 (a
 * scalar input: [0, count], as numpy). An input known only at run time
 * gives a run-time count (bound: every element) when the output is a graph
 * output nobody else reads. */
static int64_t nonzero_count(Node *n)
{
    Tensor *x = n->in[0];
    if (!need_const_or_dyn(n, x, "NonZero's input")) return tensor_numel(x);
    int64_t k = 0;
    for (int64_t i = 0; i < tensor_numel(x); i++)
        if (elem_f64(x->dtype, x->data, i) != 0 || (dtype_is_int(x->dtype) && elem_i64(x->dtype, x->data, i) != 0)) k++;
    return k;
}

void infer_nonzero(Node *n)
{
    Tensor *x = n->in[0];
    if (!x->data && dtype_is_narrow(x->dtype))
        fail("a run-time NonZero of %s is not supported (bind the input with --bind, or Cast it first)",
             dtype_name(x->dtype));
    int64_t d[2] = {x->rank, nonzero_count(n)};
    set_out(n, 0, DT_INT64, 2, d);
}

void lower_nonzero(Node *n, Lowering *L)
{
    Tensor *x = n->in[0];
    if (!x->data) {
        KCall *c = lower_call(L, "o2c_nonzero_dyn", 1);
        c->x[0] = x;
        c->y[0] = n->out[0];
        c->y[1] = lower_dyn_output(L, n->out[0], 1, NULL);
        c->k[O2C_NONZERO_N] = tensor_numel(x);
        c->k[O2C_NONZERO_ESIZE] = (int64_t)dtype_size(x->dtype);
        c->k[O2C_NONZERO_FLOAT] = dtype_is_float(x->dtype) || dtype_is_half(x->dtype);
        c->k[O2C_NONZERO_RANK] = x->rank;
        for (int d = 0; d < x->rank; d++) c->k[O2C_NONZERO_DIMS + d] = x->dims[d];
        return;
    }
    int64_t k = nonzero_count(n), r = x->rank, j = 0;
    int64_t *v = xalloc(sizeof(int64_t) * (size_t)(r * k + 1));
    for (int64_t i = 0; i < tensor_numel(x); i++) {
        if (!(elem_f64(x->dtype, x->data, i) != 0 || (dtype_is_int(x->dtype) && elem_i64(x->dtype, x->data, i) != 0)))
            continue;
        for (int64_t d = r - 1, rest = i; d >= 0; d--) {
            v[d * k + j] = rest % x->dims[d];
            rest /= x->dims[d];
        }
        j++;
    }
    out_const(L, n, 0, "nonzero", v);
}

/* Unique: slices along the axis (all elements, flattened, without one)
 * compared in row-major order; sorted ascending or in order of first
 * occurrence. */
typedef struct UniqueView {
    const Tensor *x;
    int64_t m, outer, inner;   /* x seen as (outer, m, inner): m slices */
} UniqueView;
static const UniqueView *uq_view;   /* qsort's context (the compiler is single-threaded) */

static int uq_cmp_elem(int dt, const void *p, int64_t i, int64_t j)
{
    if (dtype_is_float(dt) || dtype_is_half(dt)) {
        double a = elem_f64(dt, p, i), b = elem_f64(dt, p, j);
        return a < b ? -1 : a > b ? 1 : 0;
    }
    if (dt == DT_UINT64) {
        uint64_t a = ((const uint64_t *)p)[i], b = ((const uint64_t *)p)[j];
        return a < b ? -1 : a > b ? 1 : 0;
    }
    int64_t a = elem_i64(dt, p, i), b = elem_i64(dt, p, j);
    return a < b ? -1 : a > b ? 1 : 0;
}

static int uq_cmp_slices(int64_t s, int64_t t)
{
    const UniqueView *v = uq_view;
    for (int64_t o = 0; o < v->outer; o++)
        for (int64_t in = 0; in < v->inner; in++) {
            int c = uq_cmp_elem(v->x->dtype, v->x->data, (o * v->m + s) * v->inner + in, (o * v->m + t) * v->inner + in);
            if (c) return c;
        }
    return 0;
}

static int uq_qsort_cmp(const void *a, const void *b)
{
    int64_t s = *(const int64_t *)a, t = *(const int64_t *)b;
    int c = uq_cmp_slices(s, t);
    return c ? c : (s < t ? -1 : s > t);   /* ties by position: the first occurrence first */
}

/* The unique slices: first[u] (the slice index of its first occurrence),
 * count[u], inverse[s] (u of slice s); returns the number of them. */
static int64_t unique_compute(Node *n, UniqueView *v, int64_t **first, int64_t **count, int64_t **inverse)
{
    Tensor *x = n->in[0];
    v->x = x;
    if (attr_has(n, "axis")) {
        if (x->rank < 1) fail("an axis needs an input of rank 1 or more");
        int ax = (int)norm_axis(n, attr_i(n, "axis"), x->rank);
        v->outer = prod(x->dims, 0, ax);
        v->m = x->dims[ax];
        v->inner = prod(x->dims, ax + 1, x->rank);
    } else {
        v->outer = v->inner = 1;
        v->m = tensor_numel(x);
    }
    int64_t m = v->m;
    if (!need_const_or_dyn(n, x, "Unique's input")) return m;   /* a run-time count: at most m */
    int64_t *order = xalloc(sizeof(int64_t) * (size_t)(m + 1));
    for (int64_t s = 0; s < m; s++) order[s] = s;
    uq_view = v;
    if (v->outer * v->inner > 0) qsort(order, (size_t)m, sizeof *order, uq_qsort_cmp);
    /* groups of equal slices in sorted order */
    int64_t *gfirst = xalloc(sizeof(int64_t) * (size_t)(m + 1)), *gcount = xalloc(sizeof(int64_t) * (size_t)(m + 1));
    int64_t *ginv = xalloc(sizeof(int64_t) * (size_t)(m + 1));
    int64_t u = 0;
    for (int64_t i = 0; i < m; i++) {
        if (i == 0 || (v->outer * v->inner > 0 && uq_cmp_slices(order[i - 1], order[i]))) {
            gfirst[u] = order[i];
            gcount[u] = 0;
            u++;
        }
        gcount[u - 1]++;
        ginv[order[i]] = u - 1;
    }
    uq_view = NULL;
    int64_t *rank = xalloc(sizeof(int64_t) * (size_t)(u + 1));   /* group -> output position */
    for (int64_t g = 0; g < u; g++) rank[g] = g;
    if (!attr_i(n, "sorted")) {
        /* by first occurrence: the groups' first slices ascending */
        int64_t *pos = xalloc(sizeof(int64_t) * (size_t)(m + 1));
        for (int64_t s = 0; s < m; s++) pos[s] = -1;
        for (int64_t g = 0; g < u; g++) pos[gfirst[g]] = g;
        for (int64_t s = 0, k = 0; s < m; s++)
            if (pos[s] >= 0) rank[pos[s]] = k++;
    }
    *first = xalloc(sizeof(int64_t) * (size_t)(u + 1));
    *count = xalloc(sizeof(int64_t) * (size_t)(u + 1));
    *inverse = xalloc(sizeof(int64_t) * (size_t)(m + 1));
    for (int64_t g = 0; g < u; g++) {
        (*first)[rank[g]] = gfirst[g];
        (*count)[rank[g]] = gcount[g];
    }
    for (int64_t s = 0; s < m; s++) (*inverse)[s] = rank[ginv[s]];
    return u;
}

void infer_unique(Node *n)
{
    Tensor *x = n->in[0];
    static const int DTS_UNIQUE[] = {DT_FLOAT, DT_DOUBLE, DT_INT8, DT_INT16, DT_INT32, DT_INT64,
                                     DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64, DT_BOOL, 0};
    need_dtype(n, x, DTS_UNIQUE);
    UniqueView v;
    int64_t *first, *count, *inverse;
    int64_t u = unique_compute(n, &v, &first, &count, &inverse);
    if (attr_has(n, "axis")) {
        int64_t d[MAX_RANK];
        memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
        d[norm_axis(n, attr_i(n, "axis"), x->rank)] = u;
        set_out(n, 0, x->dtype, x->rank, d);
    } else {
        set_out(n, 0, x->dtype, 1, &u);
    }
    set_out(n, 1, DT_INT64, 1, &u);
    set_out(n, 2, DT_INT64, 1, &v.m);
    set_out(n, 3, DT_INT64, 1, &u);
}

static int used_out(const Node *n, int o)
{
    return o < n->nout && n->out[o] && (n->out[o]->is_output || n->out[o]->nuses > 0);
}

/* Unique of an input known only at run time: o2c_unique_T makes the table
 * (first, inverse, counts and scratch) and the count; the outputs are
 * copied from it (ir.h dyn_count: all but inverse_indices take the count). */
static void lower_unique_dyn(Node *n, Lowering *L, const UniqueView *v)
{
    Tensor *x = n->in[0];
    int64_t M = v->m, tn = 6 * M;
    int ax = attr_has(n, "axis") ? (int)norm_axis(n, attr_i(n, "axis"), x->rank) : 0;
    Tensor *tb = lower_temp(L, DT_INT64, 1, &tn);
    KCall *c = lower_call(L, xfmt("o2c_unique_%s", dtype_suffix(x->dtype == DT_BOOL ? DT_UINT8 : x->dtype)), 1);
    c->x[0] = x;
    c->y[0] = tb;
    Tensor *cnt = c->y[1] = lower_dyn_output(L, n->out[0], ax, NULL);
    c->k[O2C_UNIQUE_M] = M;
    c->k[O2C_UNIQUE_OUTER] = v->outer;
    c->k[O2C_UNIQUE_INNER] = v->inner;
    c->k[O2C_UNIQUE_SORTED] = attr_i(n, "sorted") != 0;
    if (used_out(n, 0)) {
        KCall *t = lower_call(L, "o2c_unique_take", 1);
        t->x[0] = x;
        t->x[1] = tb;
        t->x[2] = cnt;
        t->y[0] = n->out[0];
        t->k[O2C_UNIQUE_M] = M;
        t->k[O2C_UNIQUE_OUTER] = v->outer;
        t->k[O2C_UNIQUE_INNER] = v->inner;
        t->k[O2C_UNIQUE_ESIZE] = (int64_t)dtype_size(x->dtype);
    }
    static const int PART[4] = {0, 0, 1, 2};   /* outputs 1..3: first, inverse, counts in the table */
    for (int o = 1; o < 4; o++) {
        if (!used_out(n, o)) continue;
        if (o != 2) lower_dyn_output(L, n->out[o], 0, cnt);
        KCall *t = lower_call(L, "o2c_dyn_copy", 1);
        t->x[0] = tb;
        t->x[1] = o != 2 ? cnt : NULL;
        t->y[0] = n->out[o];
        t->k[O2C_DYNCOPY_UNIT] = (int64_t)sizeof(int64_t);
        t->k[O2C_DYNCOPY_SRC_OFF] = PART[o] * M * (int64_t)sizeof(int64_t);
        t->k[O2C_DYNCOPY_N] = M;
    }
}

void lower_unique(Node *n, Lowering *L)
{
    Tensor *x = n->in[0];
    UniqueView v;
    int64_t *first, *count, *inverse;
    int64_t u = unique_compute(n, &v, &first, &count, &inverse);
    if (!x->data) {
        lower_unique_dyn(n, L, &v);
        return;
    }
    size_t es = dtype_size(x->dtype);
    uint8_t *y = xalloc(es * (size_t)(v.outer * u * v.inner + 1));
    for (int64_t o = 0; o < v.outer; o++)
        for (int64_t k = 0; k < u; k++)
            memcpy(y + (size_t)((o * u + k) * v.inner) * es, (const uint8_t *)x->data + (size_t)((o * v.m + first[k]) * v.inner) * es,
                   es * (size_t)v.inner);
    out_const(L, n, 0, "unique", y);
    out_const(L, n, 1, "indices", first);
    out_const(L, n, 2, "inverse", inverse);
    out_const(L, n, 3, "counts", count);
}

/* NonMaxSuppression: per batch and class, the boxes above the score
 * threshold by descending score (ties: the lower index first), each kept
 * unless its IoU with a kept one exceeds the threshold, at most
 * max_output_boxes_per_class; rows (batch, class, box). */
static int nms_suppress(const double *b1, const double *b2, int center, double thr)
{
    double x1lo, x1hi, y1lo, y1hi, x2lo, x2hi, y2lo, y2hi;
    if (center) {
        x1lo = b1[0] - b1[2] / 2; x1hi = b1[0] + b1[2] / 2; y1lo = b1[1] - b1[3] / 2; y1hi = b1[1] + b1[3] / 2;
        x2lo = b2[0] - b2[2] / 2; x2hi = b2[0] + b2[2] / 2; y2lo = b2[1] - b2[3] / 2; y2hi = b2[1] + b2[3] / 2;
    } else {   /* [y1, x1, y2, x2], either corner first */
        x1lo = b1[1] < b1[3] ? b1[1] : b1[3]; x1hi = b1[1] < b1[3] ? b1[3] : b1[1];
        y1lo = b1[0] < b1[2] ? b1[0] : b1[2]; y1hi = b1[0] < b1[2] ? b1[2] : b1[0];
        x2lo = b2[1] < b2[3] ? b2[1] : b2[3]; x2hi = b2[1] < b2[3] ? b2[3] : b2[1];
        y2lo = b2[0] < b2[2] ? b2[0] : b2[2]; y2hi = b2[0] < b2[2] ? b2[2] : b2[0];
    }
    double ixlo = x1lo > x2lo ? x1lo : x2lo, ixhi = x1hi < x2hi ? x1hi : x2hi;
    double iylo = y1lo > y2lo ? y1lo : y2lo, iyhi = y1hi < y2hi ? y1hi : y2hi;
    if (ixhi <= ixlo || iyhi <= iylo) return 0;
    double inter = (ixhi - ixlo) * (iyhi - iylo);
    double a1 = (x1hi - x1lo) * (y1hi - y1lo), a2 = (x2hi - x2lo) * (y2hi - y2lo), uni = a1 + a2 - inter;
    if (inter <= 0 || a1 <= 0 || a2 <= 0 || uni <= 0) return 0;
    return inter / uni > thr;
}

static const double *nms_scores;   /* qsort's context */
static int nms_cmp(const void *a, const void *b)
{
    int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    if (nms_scores[i] != nms_scores[j]) return nms_scores[i] > nms_scores[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Some input is known only at run time and the output may take a run-time
 * size (else need_const's refusal). */
static int nms_dynamic(Node *n)
{
    static const char *const WHAT[5] = {"NonMaxSuppression's boxes", "NonMaxSuppression's scores",
                                        "max_output_boxes_per_class", "iou_threshold", "score_threshold"};
    for (int j = 0; j < 5 && j < n->nin; j++) {
        Tensor *t = in_t(n, j);
        if (!t || t->data || tensor_numel(t) == 0) continue;
        need_const_or_dyn(n, t, WHAT[j]);
        if (j >= 3 && t->dtype != n->in[0]->dtype)
            fail("%s ('%s') is %s and the boxes %s; a threshold known only at run time must have the boxes' type",
                 WHAT[j], t->name, dtype_name(t->dtype), dtype_name(n->in[0]->dtype));
        if (j == 2 && t->dtype != DT_INT64) fail("max_output_boxes_per_class ('%s') must be int64", t->name);
        return 1;
    }
    return 0;
}

static double nms_scalar(Node *n, int j, const char *what, double dflt, int *present)
{
    Tensor *t = in_t(n, j);
    *present = 0;
    if (!t || tensor_numel(t) == 0) return dflt;
    need_const(n, t, what);
    *present = 1;
    return elem_f64(t->dtype, t->data, 0);
}

/* The selected rows (sel NULL: only counted). */
static int64_t nms_compute(Node *n, int64_t *sel)
{
    Tensor *tb = n->in[0], *ts = n->in[1];
    if (tb->rank != 3 || tb->dims[2] != 4) fail("boxes ('%s') must be [batches, boxes, 4], it is %s", tb->name, tensor_shape_str(tb));
    if (ts->rank != 3 || ts->dims[0] != tb->dims[0] || ts->dims[2] != tb->dims[1])
        fail("scores ('%s') must be [batches, classes, boxes] = [%lld, C, %lld], it is %s", ts->name,
             (long long)tb->dims[0], (long long)tb->dims[1], tensor_shape_str(ts));
    int64_t B0 = tb->dims[0], N0 = tb->dims[1], C0 = ts->dims[1];
    if (nms_dynamic(n)) {   /* a run-time count: at most min(N, max per class) per batch and class */
        Tensor *tm = in_t(n, 2);
        int64_t per = N0;
        if (!tm || tensor_numel(tm) == 0) per = 0;
        else if (tm->data && elem_i64(tm->dtype, tm->data, 0) < per) per = elem_i64(tm->dtype, tm->data, 0);
        return B0 * C0 * (per > 0 ? per : 0);
    }
    int has_max, has_iou, has_score;
    double maxd = nms_scalar(n, 2, "max_output_boxes_per_class", 0, &has_max);
    double iou = nms_scalar(n, 3, "iou_threshold", 0, &has_iou);
    double sthr = nms_scalar(n, 4, "score_threshold", 0, &has_score);
    int64_t maxk = maxd > 0 ? (int64_t)maxd : 0;
    int center = (int)attr_i(n, "center_point_box");
    int64_t B = tb->dims[0], N = tb->dims[1], C = ts->dims[1], total = 0;
    double *boxes = tensor_const_f64(tb), *scores = tensor_const_f64(ts);
    int64_t *cand = xalloc(sizeof(int64_t) * (size_t)(N + 1)), *kept = xalloc(sizeof(int64_t) * (size_t)(N + 1));
    for (int64_t b = 0; b < B; b++)
        for (int64_t c = 0; c < C; c++) {
            const double *sc = scores + (b * C + c) * N, *bx = boxes + b * N * 4;
            int64_t nc = 0, nk = 0;
            for (int64_t i = 0; i < N; i++)
                if (!has_score || sc[i] > sthr) cand[nc++] = i;
            nms_scores = sc;
            qsort(cand, (size_t)nc, sizeof *cand, nms_cmp);
            nms_scores = NULL;
            for (int64_t i = 0; i < nc && nk < maxk; i++) {
                int keep = 1;
                for (int64_t k = 0; k < nk && keep; k++)
                    if (nms_suppress(bx + cand[i] * 4, bx + kept[k] * 4, center, iou)) keep = 0;
                if (!keep) continue;
                kept[nk++] = cand[i];
                if (sel) {
                    sel[total * 3] = b;
                    sel[total * 3 + 1] = c;
                    sel[total * 3 + 2] = cand[i];
                }
                total++;
            }
        }
    return total;
}

void infer_nms(Node *n)
{
    need_dtype(n, n->in[0], DTS_FLOAT);
    need_dtype(n, n->in[1], DTS_FLOAT);
    int64_t d[2] = {nms_compute(n, NULL), 3};
    set_out(n, 0, DT_INT64, 2, d);
}

void lower_nms(Node *n, Lowering *L)
{
    if (nms_dynamic(n)) {
        Tensor *tb = n->in[0], *ts = n->in[1], *y = n->out[0];
        int64_t rows = nms_compute(n, NULL), tn = rows * 3 + 2 * tb->dims[1];
        KCall *c = lower_call(L, xfmt("o2c_nms_%s", dtype_suffix(tb->dtype)), 1);
        c->x[0] = tb;
        c->x[1] = ts;
        for (int j = 2; j < 5; j++) {
            Tensor *t = in_t(n, j);
            if (t && tensor_numel(t) > 0 && !t->data) c->x[j] = t;
        }
        Tensor *tm = in_t(n, 2), *ti = in_t(n, 3), *tsc = in_t(n, 4);
        if (tsc && tensor_numel(tsc) > 0 && tsc->data) {   /* a constant score threshold: as an input */
            Tensor *k = lower_const(L, "score_threshold", tb->dtype, 0, NULL);
            elem_set(tb->dtype, k->data, 0, elem_f64(tsc->dtype, tsc->data, 0));
            c->x[4] = k;
        }
        c->y[0] = lower_temp(L, DT_INT64, 1, &tn);
        Tensor *cnt = c->y[1] = lower_dyn_output(L, y, 0, NULL);
        c->k[O2C_NMS_B] = tb->dims[0];
        c->k[O2C_NMS_N] = tb->dims[1];
        c->k[O2C_NMS_C] = ts->dims[1];
        c->k[O2C_NMS_CENTER] = attr_i(n, "center_point_box");
        c->k[O2C_NMS_ROWS] = rows;
        c->k[O2C_NMS_MAXK] = tm && tensor_numel(tm) > 0 && tm->data ? elem_i64(tm->dtype, tm->data, 0) : 0;
        c->f[O2C_NMS_F_IOU] = ti && tensor_numel(ti) > 0 && ti->data ? elem_f64(ti->dtype, ti->data, 0) : 0;
        if (!y || tensor_numel(y) == 0) return;
        KCall *t = lower_call(L, "o2c_dyn_copy", 1);
        t->x[0] = c->y[0];
        t->x[1] = cnt;
        t->y[0] = y;
        t->k[O2C_DYNCOPY_UNIT] = 3 * (int64_t)sizeof(int64_t);
        return;
    }
    int64_t k = nms_compute(n, NULL);
    int64_t *sel = xalloc(sizeof(int64_t) * (size_t)(k * 3 + 1));
    nms_compute(n, sel);
    out_const(L, n, 0, "selected", sel);
}
