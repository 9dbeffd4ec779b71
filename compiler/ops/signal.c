/* Signal ops: DFT (opsets 17 and 20), STFT (kernels in runtime/c/signal.h),
 * HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix (computed
 * here: they depend on constants only). Inputs that decide the output
 * shape (dft_length, frame_step, frame_length, the window size, the mel
 * matrix's scalars) must be constants; DFT's axis may be a run-time input
 * when the output shape does not depend on it. */
#include <math.h>
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/signal.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* The tables computed here (DFT and STFT twiddle factors, windows, mel
 * matrices) become constants of the C file: at most 2^20 values each (a
 * float64 table of 8 MB, some 25 MB of C). A direct DFT of 2^20 points
 * already costs 2^40 multiply-adds per transform; fuzzing found a DFT of
 * 2^24 points making a 454 MB .c from a 178-byte model (the bound was
 * 2^24), and a window of 2^30 values asking for 4 GB (it had none). */
#define SIGNAL_TABLE_MAX (INT64_C(1) << 20)

/* One integer value of a constant input (a scalar or a 1-element tensor). */
static int64_t const_scalar(Node *n, Tensor *t, const char *what)
{
    need_const(n, t, what);
    if (!dtype_is_int(t->dtype)) fail("%s ('%s') must be an integer, it is %s", what, t->name, dtype_name(t->dtype));
    if (tensor_numel(t) != 1) fail("%s ('%s') must hold one value, it has shape %s", what, t->name, tensor_shape_str(t));
    return elem_i64(t->dtype, t->data, 0);
}

static double const_real(Node *n, Tensor *t, const char *what)
{
    need_const(n, t, what);
    if (tensor_numel(t) != 1) fail("%s ('%s') must hold one value, it has shape %s", what, t->name, tensor_shape_str(t));
    return elem_f64(t->dtype, t->data, 0);
}

/* A constant table of cos(2 pi j / len), sin(2 pi j / len), j < len, in
 * the element type dt, written at data[2 * off ...]. */
static void twiddles(int dt, void *data, int64_t off, int64_t len)
{
    for (int64_t j = 0; j < len; j++) {
        /* exact at the quarter points */
        int64_t q = (4 * j) % len == 0 ? (4 * j) / len : -1;
        double c, s;
        if (q >= 0) {
            static const double C4[4] = {1, 0, -1, 0}, S4[4] = {0, 1, 0, -1};
            c = C4[q % 4];
            s = S4[q % 4];
        } else {
            double a = 2 * M_PI * (double)j / (double)len;
            c = cos(a);
            s = sin(a);
        }
        elem_set(dt, data, 2 * (off + j), c);
        elem_set(dt, data, 2 * (off + j) + 1, s);
    }
}

/* ---- DFT -------------------------------------------------------------------- */

typedef struct {
    int rank;
    int axis;        /* -1: read at run time */
    int64_t n;       /* dft_length (0: the axis length, run-time axis) */
    int64_t K;       /* output length along the axis (0: the axis length) */
    int inverse, onesided, irfft;
} DftPlan;

static void dft_plan(Node *n, DftPlan *P)
{
    Tensor *x = n->in[0], *tl = in_t(n, 1), *ta = n->opset >= 20 ? in_t(n, 2) : NULL;
    int r = x->rank;
    memset(P, 0, sizeof *P);
    P->rank = r;
    if (r < 2 || (x->dims[r - 1] != 1 && x->dims[r - 1] != 2))
        fail("input '%s' is %s; DFT needs [..., L, ..., 1 or 2] (real, or real and imaginary, innermost)", x->name,
             tensor_shape_str(x));
    if (n->opset < 20 && n->nin > 2) fail("DFT-%d has at most 2 inputs", n->opset);
    P->inverse = attr_i(n, "inverse") != 0;
    P->onesided = attr_i(n, "onesided") != 0;
    P->irfft = P->inverse && P->onesided;
    if (tl && tl->rank >= 0 && tl->data && tensor_numel(tl) == 0) tl = NULL;
    int64_t axis;
    if (n->opset < 20) axis = attr_i(n, "axis");
    else if (!ta) axis = -2;
    else if (!ta->data && !tl && !P->onesided) {
        /* the output shape does not depend on the axis: read it at run time */
        if (ta->dtype != DT_INT64 || tensor_numel(ta) != 1)
            fail("axis ('%s') must be one int64 value, it is %s %s", ta->name, dtype_name(ta->dtype), tensor_shape_str(ta));
        P->axis = -1;
        return;
    } else
        axis = const_scalar(n, ta, "DFT's axis");
    if (axis < -r || axis >= r) fail("axis %lld is out of range for the input's rank %d", (long long)axis, r);
    if (axis < 0) axis += r;
    if (axis == r - 1) fail("axis %lld is the last axis, which holds the real and imaginary parts", (long long)axis);
    P->axis = (int)axis;
    int64_t L = x->dims[axis];
    if (tl) {
        P->n = const_scalar(n, tl, "DFT's dft_length");
        if (P->n < 1) fail("dft_length must be positive, it is %lld", (long long)P->n);
    } else {
        P->n = P->irfft ? 2 * (L - 1) : L;
        if (P->n < 1) fail("the axis of input '%s' (%s) is too short for this DFT", x->name, tensor_shape_str(x));
    }
    P->K = P->onesided && !P->inverse ? P->n / 2 + 1 : P->n;
}

void infer_dft(Node *n)
{
    Tensor *x = n->in[0];
    need_dtype(n, x, DTS_FLOAT);
    DftPlan P;
    dft_plan(n, &P);
    int64_t dims[MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    if (P.axis >= 0) dims[P.axis] = P.K;
    dims[x->rank - 1] = P.irfft ? 1 : 2;
    set_out(n, 0, x->dtype, x->rank, dims);
}

void lower_dft(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    DftPlan P;
    dft_plan(n, &P);
    int r = x->rank;
    if (tensor_numel(y) == 0) return;
    int64_t off[MAX_RANK] = {0}, total = 0;
    for (int d = 0; d < r - 1; d++) {
        if (P.axis >= 0 && d != P.axis) continue;
        off[d] = total;
        total += P.axis >= 0 ? P.n : x->dims[d];
    }
    if (total > SIGNAL_TABLE_MAX)   /* a constant of the C file, computed here */
        fail("the transform needs %lld twiddle factors; onnx2c computes them at compile time, at most %lld",
             (long long)total, (long long)SIGNAL_TABLE_MAX);
    int64_t tdims = 2 * (total > 0 ? total : 1);
    Tensor *tw = lower_const(L, "twiddles", x->dtype, 1, &tdims);
    for (int d = 0; d < r - 1; d++) {
        if (P.axis >= 0 && d != P.axis) continue;
        twiddles(x->dtype, tw->data, off[d], P.axis >= 0 ? P.n : x->dims[d]);
    }
    KCall *c = lower_call(L, xfmt("o2c_dft_%s", dtype_suffix(x->dtype)), tensor_numel(y) / y->dims[r - 1]);
    c->x[0] = x;
    c->x[1] = tw;
    if (P.axis < 0) c->x[2] = n->in[2];
    c->y[0] = y;
    c->k[O2C_DFT_RANK] = r;
    c->k[O2C_DFT_AXIS] = P.axis;
    c->k[O2C_DFT_N] = P.n;
    c->k[O2C_DFT_K] = P.K;
    c->k[O2C_DFT_INV] = P.inverse;
    c->k[O2C_DFT_IRFFT] = P.irfft;
    for (int d = 0; d < r; d++) {
        c->k[O2C_DFT_DIMS + d] = x->dims[d];
        c->k[O2C_DFT_TW + d] = 2 * off[d];
    }
}

/* ---- STFT ----------------------------------------------------------------------- */

typedef struct {
    int64_t B, L, cin, step, nlen, F, K;
} StftPlan;

static void stft_plan(Node *n, StftPlan *P)
{
    Tensor *x = n->in[0], *ts = n->in[1], *tw = in_t(n, 2), *tl = in_t(n, 3);
    if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
        fail("signal ('%s') is %s; STFT needs batch x length x 1 (real) or 2 (complex)", x->name, tensor_shape_str(x));
    P->B = x->dims[0];
    P->L = x->dims[1];
    P->cin = x->dims[2];
    P->step = const_scalar(n, ts, "STFT's frame_step");
    if (P->step < 1) fail("frame_step must be positive, it is %lld", (long long)P->step);
    if (tw && tw->rank != 1) fail("window ('%s') is %s; it must be 1-D", tw->name, tensor_shape_str(tw));
    if (tl) {
        P->nlen = const_scalar(n, tl, "STFT's frame_length");
        if (tw && tw->dims[0] != P->nlen)
            fail("window ('%s') has %lld values but frame_length is %lld", tw->name, (long long)tw->dims[0], (long long)P->nlen);
    } else {
        P->nlen = tw ? tw->dims[0] : P->L;
    }
    if (P->nlen < 1 || P->nlen > P->L)
        fail("the frame length %lld must be between 1 and the signal length %lld", (long long)P->nlen, (long long)P->L);
    if (P->nlen > SIGNAL_TABLE_MAX)   /* its twiddle factors: a constant computed here */
        fail("the frame length is %lld; onnx2c computes its twiddle factors at compile time, at most %lld",
             (long long)P->nlen, (long long)SIGNAL_TABLE_MAX);
    P->F = 1 + (P->L - P->nlen) / P->step;
    P->K = attr_i(n, "onesided") ? P->nlen / 2 + 1 : P->nlen;
}

void infer_stft(Node *n)
{
    Tensor *x = n->in[0], *tw = in_t(n, 2);
    need_dtype(n, x, DTS_FLOAT);
    if (tw && tw->dtype != x->dtype)
        fail("window ('%s') is %s; it must have the signal's type %s", tw->name, dtype_name(tw->dtype), dtype_name(x->dtype));
    StftPlan P;
    stft_plan(n, &P);
    int64_t dims[4] = {P.B, P.F, P.K, 2};
    set_out(n, 0, x->dtype, 4, dims);
}

void lower_stft(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    StftPlan P;
    stft_plan(n, &P);
    if (tensor_numel(y) == 0) return;
    int64_t tdims = 2 * P.nlen;
    Tensor *tw = lower_const(L, "twiddles", x->dtype, 1, &tdims);
    twiddles(x->dtype, tw->data, 0, P.nlen);
    KCall *c = lower_call(L, xfmt("o2c_stft_%s", dtype_suffix(x->dtype)), tensor_numel(y) / 2);
    c->x[0] = x;
    c->x[1] = in_t(n, 2);
    c->x[2] = tw;
    c->y[0] = y;
    c->k[O2C_STFT_L] = P.L;
    c->k[O2C_STFT_CIN] = P.cin;
    c->k[O2C_STFT_STEP] = P.step;
    c->k[O2C_STFT_NLEN] = P.nlen;
    c->k[O2C_STFT_F] = P.F;
    c->k[O2C_STFT_K] = P.K;
}

/* ---- windows --------------------------------------------------------------------- */

static int out_datatype(Node *n)
{
    int dt = (int)attr_i(n, "output_datatype");
    if (!dtype_supported(dt) || dt == DT_BOOL)
        fail("output_datatype %s is not supported here (onnx2c writes the numeric types)", dtype_name(dt));
    return dt;
}

static int64_t window_size(Node *n)
{
    Tensor *t = n->in[0];
    need_dtype(n, t, DTS_INDEX);
    int64_t s = const_scalar(n, t, "the window size");
    if (s < 0) fail("the window size is negative (%lld)", (long long)s);
    if (s > SIGNAL_TABLE_MAX)
        fail("the window size is %lld; onnx2c computes windows at compile time, of at most %lld values", (long long)s,
             (long long)SIGNAL_TABLE_MAX);
    return s;
}

void infer_window(Node *n)
{
    int64_t s = window_size(n);
    set_out(n, 0, out_datatype(n), 1, &s);
}

/* The window's values, computed in double and converted to the output
 * type, as a constant copied into the output. */
void lower_window(Node *n, Lowering *L)
{
    Tensor *y = n->out[0];
    int64_t s = window_size(n);
    if (s == 0) return;
    Tensor *w = lower_const(L, "window", y->dtype, 1, &s);
    double N = attr_i(n, "periodic") ? (double)s : (double)(s - 1);
    int kind = !strcmp(n->op_type, "HannWindow") ? 0 : !strcmp(n->op_type, "HammingWindow") ? 1 : 2;
    for (int64_t i = 0; i < s; i++) {
        double a = 2 * M_PI * (double)i / N, v;
        if (kind == 0) v = 0.5 - 0.5 * cos(a);
        else if (kind == 1) v = 25.0 / 46.0 - (1 - 25.0 / 46.0) * cos(a);
        else v = 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a);
        if (N == 0) v = 1;   /* one sample, symmetric: [1] (as torch; the formula divides by zero) */
        elem_set(y->dtype, w->data, i, v);
    }
    lower_copy(L, w, y);
}

/* ---- MelWeightMatrix --------------------------------------------------------------- */

typedef struct {
    int64_t bins, dft, rate;
    double lo, hi;
    int lo_float;   /* the edges are float32: the mel scale computed in float, as the reference */
} MelPlan;

static void mel_plan(Node *n, MelPlan *P)
{
    for (int j = 0; j < 3; j++) need_dtype(n, n->in[j], DTS_INDEX);
    for (int j = 3; j < 5; j++) need_dtype(n, n->in[j], DTS_FLOAT);
    P->bins = const_scalar(n, n->in[0], "MelWeightMatrix's num_mel_bins");
    P->dft = const_scalar(n, n->in[1], "MelWeightMatrix's dft_length");
    P->rate = const_scalar(n, n->in[2], "MelWeightMatrix's sample_rate");
    P->lo = const_real(n, n->in[3], "MelWeightMatrix's lower_edge_hertz");
    P->hi = const_real(n, n->in[4], "MelWeightMatrix's upper_edge_hertz");
    P->lo_float = n->in[3]->dtype == DT_FLOAT;
    if (P->bins < 1 || P->dft < 1 || P->rate < 1)
        fail("num_mel_bins (%lld), dft_length (%lld) and sample_rate (%lld) must be positive", (long long)P->bins,
             (long long)P->dft, (long long)P->rate);
    if (!(P->lo >= 0) || !(P->hi >= P->lo))
        fail("the edges must satisfy 0 <= lower_edge_hertz (%g) <= upper_edge_hertz (%g)", P->lo, P->hi);
    if (P->bins > SIGNAL_TABLE_MAX || P->dft / 2 + 1 > SIGNAL_TABLE_MAX / P->bins)
        fail("num_mel_bins (%lld) x (dft_length (%lld) / 2 + 1) values: onnx2c computes the matrix at compile time, "
             "of at most %lld values", (long long)P->bins, (long long)P->dft, (long long)SIGNAL_TABLE_MAX);
}

void infer_mel_weight_matrix(Node *n)
{
    MelPlan P;
    mel_plan(n, &P);
    int64_t dims[2] = {P.dft / 2 + 1, P.bins};
    set_out(n, 0, out_datatype(n), 2, dims);
}

void lower_mel_weight_matrix(Node *n, Lowering *L)
{
    Tensor *y = n->out[0];
    MelPlan P;
    mel_plan(n, &P);
    int64_t S = P.dft / 2 + 1, M = P.bins;
    double lm, hm, step;
    if (P.lo_float) {
        float l = (float)(2595 * (double)log1pf((float)P.lo / 700.f) / log(10.0));
        float h = (float)(2595 * (double)log1pf((float)P.hi / 700.f) / log(10.0));
        lm = l;
        hm = h;
        step = (double)((h - l) / (float)(M + 2));
    } else {
        lm = 2595 * log1p(P.lo / 700) / log(10.0);
        hm = 2595 * log1p(P.hi / 700) / log(10.0);
        step = (hm - lm) / (double)(M + 2);
    }
    int64_t *fb = xalloc(sizeof(int64_t) * (size_t)(M + 2));
    for (int64_t i = 0; i < M + 2; i++) {
        double f = (double)i * step + lm;
        f = 700 * expm1(f / 2595 * log(10.0));
        fb[i] = (int64_t)floor((double)(P.dft + 1) * f / (double)P.rate);
        if (fb[i] < 0 || fb[i] >= S)
            fail("mel bin edge %lld falls on spectrogram bin %lld, outside the %lld bins; check the edges and sample_rate",
                 (long long)i, (long long)fb[i], (long long)S);
    }
    double *W = xalloc(sizeof(double) * (size_t)(S * M));
    for (int64_t i = 0; i < M; i++) {
        int64_t lo = fb[i], c = fb[i + 1], hi = fb[i + 2];
        if (c == lo) W[c * M + i] = 1;
        else
            for (int64_t j = lo; j <= c; j++) W[j * M + i] = (double)(j - lo) / (double)(c - lo);
        if (hi > c)
            for (int64_t j = c; j < hi; j++) W[j * M + i] = (double)(hi - j) / (double)(hi - c);
    }
    if (tensor_numel(y) == 0) return;
    Tensor *w = lower_const(L, "mel", y->dtype, 2, y->dims);
    for (int64_t e = 0; e < S * M; e++) elem_set(y->dtype, w->data, e, W[e]);
    lower_copy(L, w, y);
}
