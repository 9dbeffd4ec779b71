/* Resampling: Resize (opsets 10 to 19) and Upsample (7, 9).
 *
 * The output shape comes from constant scales or sizes. All coordinate
 * arithmetic happens here, in double, following the ONNX reference
 * implementation (onnx/reference/ops/op_resize.py): for every axis and
 * output coordinate we compute the source coordinate, the interpolation
 * coefficients and their source indices (edge-clamped, or excluded with
 * exclude_outside), and store them as constant tap tables. The kernels in
 * runtime/c/resize.h only look up taps and sum (see the table layout
 * there). Opset-10 Resize and Upsample use the asymmetric transform and,
 * for nearest, the "simple" rounding (floor when upsampling, ceil when
 * downsampling). */
#include <math.h>
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/resize.h"

enum { M_NEAREST, M_LINEAR, M_CUBIC };
enum { C_HALF_PIXEL, C_HALF_PIXEL_SYM, C_PYTORCH, C_ALIGN, C_ASYM, C_TF_CROP, C_TF_HALF_NN };
enum { N_PREFER_FLOOR, N_PREFER_CEIL, N_FLOOR, N_CEIL, N_SIMPLE };

typedef struct {
    int rank;
    int64_t in[MAX_RANK], out[MAX_RANK];
    double scale[MAX_RANK];      /* output / input, as the reference uses it */
    double outw[MAX_RANK];       /* scale * input (not rounded) */
    double roi0[MAX_RANK], roi1[MAX_RANK];
    char active[MAX_RANK];       /* axis named by axes (others are copied) */
    int mode, coord, nearest, exclude, antialias;
    double a, extrap;
} RPlan;

static int pick(Node *n, const char *attr, const char *v, const char *const *names)
{
    (void)n;
    char list[256] = "";
    for (int i = 0; names[i]; i++) {
        if (!strcmp(v, names[i])) return i;
        if (strlen(list) + strlen(names[i]) + 3 < sizeof list) {
            if (i) strcat(list, ", ");
            strcat(list, names[i]);
        }
    }
    fail("%s '%s' is not supported (onnx2c knows %s)", attr, v, list);
}

/* constant float list (scales, roi) */
static int const_reals(Node *n, Tensor *t, double *v, int max, const char *what)
{
    need_const(n, t, what);
    if (!dtype_is_float(t->dtype)) fail("%s ('%s') should be float, it is %s", what, t->name, dtype_name(t->dtype));
    int64_t ne = tensor_numel(t);
    if (ne > max) fail("%s has %lld values; at most %d are supported", what, (long long)ne, max);
    for (int64_t i = 0; i < ne; i++) v[i] = elem_f64(t->dtype, t->data, i);
    return (int)ne;
}

/* An output length computed in double: converted only when it is one a
 * tensor can have (tests/fuzz/ found scales of 1e23). */
static int64_t out_len(double v, int64_t axis)
{
    if (!(v < (double)TENSOR_MAX_BYTES)) fail("the output length of axis %lld would be %g, too large", (long long)axis, v);
    return (int64_t)v;
}

static void resize_plan(Node *n, RPlan *P)
{
    static const char *const MODES[] = {"nearest", "linear", "cubic", NULL};
    static const char *const COORDS[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                         "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn", NULL};
    static const char *const NEAREST[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL};
    Tensor *x = n->in[0];
    int r = x->rank, upsample = !strcmp(n->op_type, "Upsample"), old = upsample || n->opset < 11;
    memset(P, 0, sizeof *P);
    P->rank = r;
    if (r == 0) fail("cannot resize a scalar");
    const char *m = attr_s(n, "mode");
    if (!strcmp(m, "bilinear") && old) m = "linear";
    P->mode = pick(n, "mode", m, MODES);
    if (old && P->mode == M_CUBIC) fail("mode 'cubic' needs Resize opset 11 or later");
    double scales[2 * MAX_RANK], roi[2 * MAX_RANK];
    int64_t sizes[2 * MAX_RANK], axes[MAX_RANK];
    int ns = -1, nz = -1, na = r;
    for (int i = 0; i < r; i++) {
        axes[i] = i;
        P->in[i] = x->dims[i];
        P->roi0[i] = 0;
        P->roi1[i] = 1;
    }
    if (old) {
        P->coord = C_ASYM;
        P->nearest = N_SIMPLE;
        if (upsample && n->opset < 9) {
            const double *s;
            ns = attr_floats(n, "scales", &s);
            if (!attr_has(n, "scales")) fail("the scales attribute is missing (Upsample-1 width_scale/height_scale is not supported)");
            if (ns > MAX_RANK) fail("too many scales");
            memcpy(scales, s, sizeof(double) * (size_t)ns);
        } else {
            ns = const_reals(n, need_in(n, 1), scales, 2 * MAX_RANK, "scales");
        }
    } else {
        P->coord = pick(n, "coordinate_transformation_mode", attr_s(n, "coordinate_transformation_mode"), COORDS);
        P->nearest = pick(n, "nearest_mode", attr_s(n, "nearest_mode"), NEAREST);
        P->a = attr_f(n, "cubic_coeff_a");
        P->exclude = (int)attr_i(n, "exclude_outside");
        P->extrap = attr_f(n, "extrapolation_value");
        P->antialias = (int)attr_i(n, "antialias");
        if (P->antialias && P->mode == M_NEAREST) fail("antialias is not defined for mode 'nearest'");
        if (attr_has(n, "axes")) {
            const int64_t *a;
            na = attr_ints(n, "axes", &a);
            if (na > r) fail("axes has %d entries for an input of rank %d", na, r);
            char seen[MAX_RANK] = {0};
            for (int i = 0; i < na; i++) {
                axes[i] = norm_axis(n, a[i], r);
                if (seen[axes[i]]) fail("axis %lld appears twice in axes", (long long)a[i]);
                seen[axes[i]] = 1;
            }
        }
        Tensor *ts = in_t(n, 2), *tz = in_t(n, 3), *troi = in_t(n, 1);
        if (ts && ts->rank >= 0 && tensor_numel(ts) == 0) ts = NULL;   /* opset 11: "" or empty */
        if (tz && tensor_numel(tz) == 0) tz = NULL;
        if (ts && tz) fail("both scales and sizes are given; exactly one is allowed");
        if (!ts && !tz) fail("neither scales nor sizes is given");
        if (ts) ns = const_reals(n, ts, scales, 2 * MAX_RANK, "scales");
        else {
            need_const(n, tz, "sizes");
            nz = const_ints(n, tz, sizes, 2 * MAX_RANK);
        }
        if (P->coord == C_TF_CROP) {
            if (!troi || tensor_numel(troi) == 0) fail("coordinate_transformation_mode tf_crop_and_resize needs roi");
            int nr = const_reals(n, troi, roi, 2 * MAX_RANK, "roi");
            if (nr != 2 * na) fail("roi has %d values; %d axes need %d", nr, na, 2 * na);
            for (int i = 0; i < na; i++) {
                P->roi0[axes[i]] = roi[i];
                P->roi1[axes[i]] = roi[na + i];
            }
        }
    }
    for (int i = 0; i < na; i++) P->active[axes[i]] = 1;
    for (int d = 0; d < r; d++) {
        P->out[d] = x->dims[d];
        P->scale[d] = 1;
        P->outw[d] = (double)x->dims[d];
    }
    if (ns >= 0) {
        if (ns != na) fail("scales has %d values; the input needs %d", ns, na);
        for (int i = 0; i < na; i++) {
            int64_t d = axes[i];
            double s = scales[i];
            if (!(s > 0)) fail("scale %g of axis %lld is not positive", s, (long long)d);
            if (old && upsample && s < 1) fail("Upsample scales must be >= 1, axis %lld has %g", (long long)d, s);
            P->scale[d] = s;
            P->out[d] = out_len(floor(s * (double)x->dims[d]), d);
            P->outw[d] = (double)(float)(s * (double)x->dims[d]);
        }
    } else {
        if (nz != na) fail("sizes has %d values; the input needs %d", nz, na);
        const char *pol = attr_s(n, "keep_aspect_ratio_policy");
        for (int i = 0; i < na; i++) {
            if (sizes[i] < 0) fail("size %lld is negative", (long long)sizes[i]);
            if (x->dims[axes[i]] == 0) fail("cannot resize the empty axis %lld", (long long)axes[i]);
        }
        if (!strcmp(pol, "stretch")) {
            for (int i = 0; i < na; i++) {
                int64_t d = axes[i];
                P->out[d] = sizes[i];
                P->scale[d] = (double)sizes[i] / (double)x->dims[d];
                P->outw[d] = P->scale[d] * (double)x->dims[d];
            }
        } else {
            int larger = !strcmp(pol, "not_smaller");
            if (!larger && strcmp(pol, "not_larger"))
                fail("keep_aspect_ratio_policy '%s' is not one of stretch, not_larger, not_smaller", pol);
            double s = 0;
            for (int i = 0; i < na; i++) {
                double v = (double)sizes[i] / (double)x->dims[axes[i]];
                if (i == 0 || (larger ? v > s : v < s)) s = v;
            }
            for (int i = 0; i < na; i++) {
                int64_t d = axes[i];
                P->scale[d] = s;
                P->out[d] = out_len(s * (double)x->dims[d] + 0.5, d);
                P->outw[d] = s * (double)x->dims[d];
            }
        }
    }
    for (int d = 0; d < r; d++)
        if (P->active[d] && P->out[d] > 0 && x->dims[d] == 0) fail("cannot resize the empty axis %d", d);
}

void infer_resize(Node *n)
{
    RPlan P;
    resize_plan(n, &P);
    Tensor *x = n->in[0];
    if (P.mode != M_NEAREST && !dtype_is_float(x->dtype))
        fail("mode '%s' is supported for float and double inputs only, this one is %s", attr_s(n, "mode"),
             dtype_name(x->dtype));
    set_out(n, 0, x->dtype, x->rank, P.out);
}

/* ---- taps of one axis -------------------------------------------------- */

static double cubic_w(double x, double A)
{
    x = fabs(x);
    double x2 = x * x, x3 = x * x2;
    if (x <= 1) return (A + 2) * x3 - (A + 3) * x2 + 1;
    if (x < 2) return A * x3 - 5 * A * x2 + 8 * A * x - 4 * A;
    return 0;
}

/* The coefficients for a source coordinate with fractional part ratio in
 * (0, 1]; returns their number (as the reference's get_coeffs). */
static int coeffs(const RPlan *P, double ratio, int integer, double scale, double *c, int max)
{
    switch (P->mode) {
    case M_NEAREST:
        if (integer) { c[0] = 0; c[1] = 1; }
        else if (P->nearest == N_PREFER_FLOOR) { c[0] = ratio <= 0.5; c[1] = ratio > 0.5; }
        else if (P->nearest == N_PREFER_CEIL) { c[0] = ratio < 0.5; c[1] = ratio >= 0.5; }
        else if (P->nearest == N_FLOOR) { c[0] = 1; c[1] = 0; }
        else { c[0] = 0; c[1] = 1; }
        return 2;
    case M_LINEAR:
        if (!P->antialias) {
            c[0] = 1 - ratio;
            c[1] = ratio;
            return 2;
        } else {
            double s = scale < 1 ? scale : 1, sum = 0;
            int64_t start = (int64_t)floor(-1 / s) + 1, fp = 2 - 2 * start;
            if (fp > max) fail("the antialias filter needs %lld taps; at most %d are supported", (long long)fp, max);
            for (int64_t i = 0; i < fp; i++) {
                double a = fabs(((double)(start + i) - ratio) * s), v = 1 - a;
                c[i] = v < 0 ? 0 : (v > 1 ? 1 : v);
                sum += c[i];
            }
            for (int64_t i = 0; i < fp; i++) c[i] /= sum;
            return (int)fp;
        }
    default:
        if (!P->antialias) {
            double A = P->a, q = 1 - ratio;
            c[0] = ((A * (ratio + 1) - 5 * A) * (ratio + 1) + 8 * A) * (ratio + 1) - 4 * A;
            c[1] = ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1;
            c[2] = ((A + 2) * q - (A + 3)) * q * q + 1;
            c[3] = ((A * (q + 1) - 5 * A) * (q + 1) + 8 * A) * (q + 1) - 4 * A;
            return 4;
        } else {
            double s = scale < 1 ? scale : 1, sum = 0;
            int64_t i0 = (int64_t)floor(-2 / s) + 1, i1 = 2 - i0, k = i1 - i0;
            if (k > max) fail("the antialias filter needs %lld taps; at most %d are supported", (long long)k, max);
            for (int64_t i = 0; i < k; i++) {
                c[i] = cubic_w(s * ((double)(i0 + i) - ratio), P->a);
                sum += c[i];
            }
            for (int64_t i = 0; i < k; i++) c[i] /= sum;
            return (int)k;
        }
    }
}

#define MAX_TAPS 256
#define RESIZE_MAX_TAPS (1 << 18)

/* The taps of output coordinate o on axis d: source indices (clamped into
 * the input) and weights; returns their number, or -1 when the coordinate
 * is outside the input (tf_crop_and_resize: extrapolation value). */
static int taps_1d(const RPlan *P, int d, int64_t o, int64_t *idx, double *w)
{
    double In = (double)P->in[d], ow = P->outw[d], s = P->scale[d], x = (double)o, xo;
    int64_t len = P->in[d];
    if (!P->active[d]) {
        idx[0] = o;
        w[0] = 1;
        return 1;
    }
    switch (P->coord) {
    case C_ALIGN: xo = ow == 1 ? 0 : x * (In - 1) / (ow - 1); break;
    case C_ASYM: xo = x / s; break;
    case C_TF_CROP:
        if (ow == 1) xo = (P->roi1[d] - P->roi0[d]) * (In - 1) / 2;
        else xo = x * (P->roi1[d] - P->roi0[d]) * (In - 1) / (ow - 1);
        xo += P->roi0[d] * (In - 1);
        if (xo < 0 || xo > In - 1) return -1;
        break;
    case C_PYTORCH: xo = ow == 1 ? -0.5 : (x + 0.5) / s - 0.5; break;
    case C_HALF_PIXEL_SYM: {
        double adj = (double)P->out[d] / ow, center = In / 2, off = center * (1 - adj);
        xo = off + (x + 0.5) / s - 0.5;
        break;
    }
    case C_TF_HALF_NN: xo = (x + 0.5) / s; break;
    default: xo = (x + 0.5) / s - 0.5; break;
    }
    if (P->mode == M_NEAREST && P->nearest == N_SIMPLE) {
        int64_t i = s < 1 ? (int64_t)ceil(xo) : (int64_t)floor(xo);
        idx[0] = i < 0 ? 0 : (i > len - 1 ? len - 1 : i);
        w[0] = 1;
        return 1;
    }
    double fl = floor(xo), c[MAX_TAPS];
    int integer = xo == fl;
    double ratio = integer ? 1 : xo - fl;
    int nc = coeffs(P, ratio, integer, s, c, MAX_TAPS);
    /* the nc nearest indices to xo in the edge-padded input (ties: the
     * smaller index), as the reference's _get_neighbor */
    int64_t pad = (nc + 1) / 2, limit = len + 2 * pad;
    double xp = xo + (double)pad;
    int64_t ctr = (int64_t)floor(xp);
    if (ctr < 0) ctr = 0;
    if (ctr > limit - 1) ctr = limit - 1;
    int64_t lo = ctr - nc - 1, hi = ctr + nc + 2;
    if (lo < 0) lo = 0;
    if (hi > limit) hi = limit;
    int64_t cand[2 * MAX_TAPS + 4], nb[MAX_TAPS];
    int ncand = 0;
    for (int64_t i = lo; i < hi; i++) cand[ncand++] = i;
    for (int k = 0; k < nc; k++) {   /* selection by (distance, index) */
        int best = -1;
        for (int j = 0; j < ncand; j++) {
            if (cand[j] < 0) continue;
            if (best < 0) { best = j; continue; }
            double dj = fabs(xp - (double)cand[j]), db = fabs(xp - (double)cand[best]);
            if (dj < db || (dj == db && cand[j] < cand[best])) best = j;
        }
        nb[k] = cand[best] - pad;
        cand[best] = -1;
    }
    /* ascending order */
    for (int i = 1; i < nc; i++)
        for (int j = i; j > 0 && nb[j - 1] > nb[j]; j--) {
            int64_t t = nb[j];
            nb[j] = nb[j - 1];
            nb[j - 1] = t;
        }
    if (P->exclude) {
        double sum = 0;
        for (int i = 0; i < nc; i++) {
            if (nb[i] < 0 || nb[i] >= len) c[i] = 0;
            sum += c[i];
        }
        for (int i = 0; i < nc; i++) c[i] /= sum;
    }
    /* clamp (edge padding), merge equal indices, drop zero weights */
    int nt = 0;
    for (int i = 0; i < nc; i++) {
        int64_t j = nb[i] < 0 ? 0 : (nb[i] > len - 1 ? len - 1 : nb[i]);
        if (c[i] == 0) continue;
        int k;
        for (k = 0; k < nt; k++)
            if (idx[k] == j) break;
        if (k < nt) w[k] += c[i];
        else {
            idx[nt] = j;
            w[nt++] = c[i];
        }
    }
    if (nt == 0) {   /* every weight is 0 (cannot happen but for exclude_outside far outside) */
        idx[0] = 0;
        w[0] = 0;
        nt = 1;
    }
    if (P->mode == M_NEAREST && nt != 1) fail("internal: nearest resize with %d taps", nt);
    return nt;
}

void lower_resize(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    RPlan P;
    resize_plan(n, &P);
    int r = P.rank;
    if (tensor_numel(y) == 0) return;
    int64_t stride[MAX_RANK], T[MAX_RANK], B[MAX_RANK], total = 0;
    for (int64_t d = r - 1, s = 1; d >= 0; d--) {
        stride[d] = s;
        s *= x->dims[d];
    }
    /* pass 1: taps per axis; pass 2: fill the tables */
    int64_t idx[MAX_TAPS];
    double w[MAX_TAPS];
    int64_t taps = 0;   /* the tables are constants of the C file: bounded, and so is the work here */
    for (int d = 0; d < r; d++) {
        T[d] = 1;
        for (int64_t o = 0; o < P.out[d]; o++) {
            int k = taps_1d(&P, d, o, idx, w);
            if (k > T[d]) T[d] = k;
            if ((taps += k > 0 ? k : 1) > RESIZE_MAX_TAPS)
                fail("the output %s needs more than %d interpolation taps; onnx2c computes them at compile time "
                     "into tables, of at most that many", tensor_shape_str(y), RESIZE_MAX_TAPS);
        }
        B[d] = total;
        total += P.out[d] * T[d];
    }
    Tensor *toff = lower_temp(L, DT_INT64, 1, &total);
    /* the weights in the element type: float32 stays float32 */
    const int wdbl = x->dtype == DT_DOUBLE;
    Tensor *tw = lower_temp(L, wdbl ? DT_DOUBLE : DT_FLOAT, 1, &total);
    int64_t *OFF = xalloc(sizeof(int64_t) * (size_t)total);
    double *W = xalloc(sizeof(double) * (size_t)total);
    float *WF = wdbl ? NULL : xalloc(sizeof(float) * (size_t)total);
    toff->data = OFF;
    tw->data = wdbl ? (void *)W : (void *)WF;
    for (int d = 0; d < r; d++)
        for (int64_t o = 0; o < P.out[d]; o++) {
            int k = taps_1d(&P, d, o, idx, w);
            int64_t e = B[d] + o * T[d];
            if (k < 0) {
                OFF[e] = -1;
                continue;
            }
            for (int t = 0; t < k; t++) {
                OFF[e + t] = idx[t] * stride[d];
                W[e + t] = w[t];
                if (WF) WF[e + t] = (float)w[t];
            }
        }
    if (P.mode == M_NEAREST) {
        Tensor *v = lower_temp(L, x->dtype, 0, NULL);
        v->data = xalloc(16);
        elem_set(x->dtype, v->data, 0, P.extrap);
        KCall *c = lower_call(L, "o2c_resize_nearest", tensor_numel(y));
        c->x[0] = x;
        c->x[1] = toff;
        c->x[2] = v;
        c->y[0] = y;
        c->k[O2C_RESIZE_NEAREST_ESIZE] = (int64_t)dtype_size(x->dtype);
        c->k[O2C_RESIZE_NEAREST_RANK] = r;
        for (int d = 0; d < r; d++) {
            c->k[O2C_RESIZE_NEAREST_YDIMS + d] = y->dims[d];
            c->k[O2C_RESIZE_NEAREST_B + d] = B[d];
        }
        return;
    }
    /* float32 whose outer axes (before the last two) take one tap of weight
     * 1, and at most O2C_RESIZE_MAXROW along the row axis: row by row
     * (o2c_resize_rows_f32, the same sums) */
    int rows = !wdbl && r >= 2 && T[r - 2] <= O2C_RESIZE_MAXROW;
    for (int d = 0; rows && d < r - 2; d++) {
        if (T[d] != 1) rows = 0;
        for (int64_t o = 0; rows && o < P.out[d]; o++)
            if (OFF[B[d] + o] >= 0 && WF[B[d] + o] != 1.0f) rows = 0;
    }
    KCall *c = rows ? lower_call(L, "o2c_resize_rows_f32", tensor_numel(y) / y->dims[r - 1])
                    : lower_call(L, wdbl ? "o2c_resize_interp_f64" : "o2c_resize_interp_f32", tensor_numel(y));
    c->x[0] = x;
    c->x[1] = toff;
    c->x[2] = tw;
    c->y[0] = y;
    c->k[O2C_RESIZE_RANK] = r;
    for (int d = 0; d < r; d++) {
        c->k[O2C_RESIZE_YDIMS + d] = y->dims[d];
        c->k[O2C_RESIZE_T + d] = T[d];
        c->k[O2C_RESIZE_B + d] = B[d];
    }
    c->f[O2C_RESIZE_F_EXTRAP] = P.extrap;
}
