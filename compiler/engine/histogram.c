/* Streaming histograms of a tensor's values and the calibrators that pick
 * a clipping range from them (the calibration stage, calibrate.c).
 *
 * A histogram has HIST_BINS bins on each side of zero: positive values in
 * pos[i] = [i*w, (i+1)*w), negative ones by magnitude in neg[i]. The width
 * w is set by the first non-zero values seen (the largest magnitude lands
 * in the last bin) and doubles whenever a larger one comes: pairs of bins
 * merge into one, exactly. So a histogram's memory is fixed, whatever the
 * number of calibration sets, and the bins are those of one histogram
 * built over all the data at the final width (TensorRT's and onnxruntime's
 * histogram calibrators instead keep every batch's values, or need a
 * first pass for the range).
 *
 * The calibrators (hist_range): the real range [lo, hi] that `levels`
 * quantization steps (255 for 8 bits) cover:
 *   minmax         the smallest and largest value seen
 *   percentile P   the P-th percentile of |x|, T: [max(min, -T), min(max, T)]
 *   entropy        T minimizing the KL divergence between the histogram of
 *                  |x| clipped at T and its quantization (TensorRT's
 *                  calibrator: 128 levels for data of both signs, 255 for
 *                  data of one sign)
 *   mse            T minimizing the expected squared error of quantizing the
 *                  histogram over [max(min, -T), min(max, T)]: clipping
 *                  error of the bins beyond, step^2/12 for those within
 * Every threshold T is a bin edge i*w. */
#include <math.h>
#include <string.h>

#include "../ir.h"

void hist_init(Hist *h)
{
    memset(h, 0, sizeof *h);
    h->min = INFINITY;
    h->max = -INFINITY;
}

/* pairs of bins merged: the width doubles */
static void hist_double(Hist *h)
{
    for (int i = 0; i < HIST_BINS / 2; i++) {
        h->pos[i] = h->pos[2 * i] + h->pos[2 * i + 1];
        h->neg[i] = h->neg[2 * i] + h->neg[2 * i + 1];
    }
    for (int i = HIST_BINS / 2; i < HIST_BINS; i++) h->pos[i] = h->neg[i] = 0;
    h->width *= 2;
}

int hist_add(Hist *h, const float *x, int64_t n)
{
    float amax = 0, lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) return 0;
        float a = fabsf(x[i]);
        amax = a > amax ? a : amax;
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    if (n <= 0) return 1;
    h->min = lo < h->min ? lo : h->min;
    h->max = hi > h->max ? hi : h->max;
    h->count += n;
    if (amax > 0 && h->width == 0) h->width = (double)amax * (1 + 1e-6) / HIST_BINS;   /* zeros so far sit in pos[0] */
    while (h->width > 0 && (double)amax >= h->width * HIST_BINS) hist_double(h);
    if (h->width == 0) {
        h->pos[0] += (double)n;
        return 1;
    }
    const double inv = 1.0 / h->width;
    for (int64_t i = 0; i < n; i++) {
        double v = x[i];
        int64_t b = (int64_t)(fabs(v) * inv);
        if (b >= HIST_BINS) b = HIST_BINS - 1;   /* rounding at the top edge */
        if (v < 0) h->neg[b] += 1;
        else h->pos[b] += 1;
    }
    return 1;
}

/* the histogram of |x|: bins of width h->width from 0 */
static void abs_hist(const Hist *h, double *a)
{
    for (int i = 0; i < HIST_BINS; i++) a[i] = h->pos[i] + h->neg[i];
}

/* [lo, hi] of threshold t, inside [min, max] */
static void clip_range(const Hist *h, double t, double *lo, double *hi)
{
    *lo = h->min < -t ? -t : h->min;
    *hi = h->max > t ? t : h->max;
}

static double percentile_threshold(const Hist *h, double p)
{
    double a[HIST_BINS], total = 0, run = 0;
    abs_hist(h, a);
    for (int i = 0; i < HIST_BINS; i++) total += a[i];
    for (int i = 0; i < HIST_BINS; i++) {
        run += a[i];
        if (run >= total * p / 100.0) return (i + 1) * h->width;
    }
    return HIST_BINS * h->width;
}

/* a histogram's zero bins given eps, taken from the others in equal parts
 * (MXNet's and TensorRT's smoothing of the counts), so KL stays finite;
 * 0 where every bin is zero or the others cannot give it */
static int smooth(const double *c, double *s, int n)
{
    const double eps = 1e-4;
    int nz = 0;
    for (int i = 0; i < n; i++) nz += c[i] == 0;
    if (nz == n) return 0;
    const double take = eps * nz / (n - nz);
    for (int i = 0; i < n; i++) {
        s[i] = c[i] == 0 ? eps : c[i] - take;
        if (s[i] <= 0) return 0;
    }
    return 1;
}

/* KL(p || q) of two histograms of n bins, smoothed and normalized */
static double kl_divergence(const double *p, const double *q, int n)
{
    static double ps[HIST_BINS], qs[HIST_BINS];
    if (!smooth(p, ps, n) || !smooth(q, qs, n)) return INFINITY;
    double sp = 0, sq = 0, kl = 0;
    for (int i = 0; i < n; i++) {
        sp += ps[i];
        sq += qs[i];
    }
    for (int i = 0; i < n; i++) {
        const double a = ps[i] / sp, b = qs[i] / sq;
        kl += a * log(a / b);
    }
    return kl;
}

static double entropy_threshold(const Hist *h, int nq)
{
    static double a[HIST_BINS], p[HIST_BINS], q[HIST_BINS];
    abs_hist(h, a);
    int last = HIST_BINS;   /* past the last non-empty bin */
    while (last > 1 && a[last - 1] == 0) last--;
    if (last <= nq) return last * h->width;   /* fewer bins than levels: nothing to clip */
    double best = INFINITY;
    int best_i = last;
    for (int i = nq; i <= last; i++) {
        double outliers = 0;
        for (int k = i; k < HIST_BINS; k++) outliers += a[k];
        memcpy(p, a, sizeof(double) * (size_t)i);
        p[i - 1] += outliers;
        /* q: a[0, i) merged into nq groups, each group's count spread over its non-empty bins */
        const int per = i / nq;
        for (int j = 0; j < nq; j++) {
            int s = j * per, e = j == nq - 1 ? i : s + per;
            double sum = 0;
            int nz = 0;
            for (int k = s; k < e; k++) {
                sum += a[k];
                nz += a[k] != 0;
            }
            for (int k = s; k < e; k++) q[k] = a[k] != 0 ? sum / nz : 0;
        }
        double kl = kl_divergence(p, q, i);
        if (kl < best) {
            best = kl;
            best_i = i;
        }
    }
    return best_i * h->width;
}

/* The histogram's non-empty bins in the order mse_of sums them (bin by
 * bin, the positive side first): centre (signed) and count */
typedef struct { double c, n; } MseBin;

static int mse_bins(const Hist *h, MseBin *b)
{
    int k = 0;
    for (int i = 0; i < HIST_BINS; i++) {
        const double c = (i + 0.5) * h->width;
        if (h->pos[i]) b[k++] = (MseBin){c, (double)h->pos[i]};
        if (h->neg[i]) b[k++] = (MseBin){-c, (double)h->neg[i]};
    }
    return k;
}

/* The expected squared error of quantizing the histogram over [lo, hi]
 * with `levels` steps; sums over the non-empty bins at their centres */
static double mse_of(const MseBin *b, int nb, double lo, double hi, int levels)
{
    const double step = (hi - lo) / levels, inside = step * step / 12;
    double e = 0;
    for (int k = 0; k < nb; k++) {
        const double c = b[k].c;
        e += b[k].n * (c > hi ? (c - hi) * (c - hi) : c < lo ? (lo - c) * (lo - c) : inside);
    }
    return e;
}

static double mse_threshold(const Hist *h, int levels)
{
    static MseBin bins[2 * HIST_BINS];
    const int nb = mse_bins(h, bins);
    int last = HIST_BINS;
    while (last > 1 && h->pos[last - 1] == 0 && h->neg[last - 1] == 0) last--;
    double best = INFINITY, best_t = last * h->width;
    for (int i = 1; i <= last; i++) {
        double lo, hi, t = i * h->width;
        clip_range(h, t, &lo, &hi);
        if (lo > 0) lo = 0;
        if (hi < 0) hi = 0;
        if (hi - lo <= 0) continue;
        double e = mse_of(bins, nb, lo, hi, levels);
        if (e < best) {
            best = e;
            best_t = t;
        }
    }
    return best_t;
}

void hist_range(const Hist *h, int method, double param, int levels, double *lo, double *hi)
{
    if (h->count == 0) {
        *lo = *hi = 0;
        return;
    }
    if (method == CALIB_MINMAX || h->width == 0) {
        *lo = h->min;
        *hi = h->max;
        return;
    }
    double t = method == CALIB_PERCENTILE ? percentile_threshold(h, param)
             : method == CALIB_ENTROPY    ? entropy_threshold(h, h->min >= 0 || h->max <= 0 ? levels : levels / 2 + 1)
                                          : mse_threshold(h, levels);
    clip_range(h, t, lo, hi);
}

const char *calib_method_name(int method)
{
    static const char *const NAMES[] = {"minmax", "percentile", "entropy", "mse", "auto"};
    return method >= 0 && method <= CALIB_AUTO ? NAMES[method] : "?";
}
