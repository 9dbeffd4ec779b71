/* Loss kernels (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss). See
 * o2c_rt.h for the calling convention.
 *
 * o2c_nll_T: negative log likelihood loss. The input X is seen as
 * N x C x D (D: the product of the dims after the class axis), the target
 * (int32 or int64, element size O2C_NLL_LSIZE) as N x D, the optional
 * class weights W as C values. Sample e = n * D + d with class
 * c = target[e]:
 *     loss[e] = -X[n, c, d] * w[e],   w[e] = W ? W[c] : 1
 * and loss[e] = w[e] = 0 when ignore_index is set and c equals it. A
 * class outside [0, C) (and not ignored) reads nothing: its loss and
 * weight are NaN, so a reduction over it is NaN too.
 *   reduction none: index space the N x D samples, y[0][e] = loss[e];
 *   sum: index space 1, y[0][0] = sum of loss[e];
 *   mean: index space 1, y[0][0] = sum of loss[e] / sum of w[e] (the
 *     weights of the samples not ignored; without W their count; NaN when
 *     every sample is ignored, 0 / 0).
 *   x[0] X, x[1] target, x[2] W (optional); O2C_NLL_* (runtime/c/params/loss.h).
 * Sums accumulate in the element type (float32 stays float32), in sample
 * order.
 *
 * SoftmaxCrossEntropyLoss is lowered to norm.h's o2c_softmax_T (log, over
 * the class axis) into its log_prob output (or a scratch tensor), then
 * o2c_nll_T on that. */

/* The loss and weight of sample e (inside O2C_NLL) into lo and wo. */
#define O2C_NLL_SAMPLE(T, e, lo, wo)                                                  \
    do {                                                                              \
        const o2c_int n_ = (e) / D, d_ = (e) - n_ * D;                                \
        const o2c_int c_ = o2c_ix_get(L, (e), ls);                                \
        if (hii && c_ == ii) {                                                        \
            (lo) = 0;                                                                 \
            (wo) = 0;                                                                 \
        } else if (c_ < 0 || c_ >= C) {                                               \
            (lo) = (T)NAN;                                                            \
            (wo) = (T)NAN;                                                            \
        } else {                                                                      \
            (wo) = W ? W[c_] : (T)1;                                                  \
            (lo) = -X[(n_ * C + c_) * D + d_] * (wo);                                 \
        }                                                                             \
    } while (0)

#define O2C_NLL(NAME, TY)                                                             \
    O2C_KERNEL(NAME)                                                                  \
    {                                                                                 \
        typedef TY T;                                                                 \
        const T *X = (const T *)p->x[0];                                              \
        const unsigned char *L = (const unsigned char *)p->x[1];                      \
        const T *W = (const T *)p->x[2];                                              \
        T *Y = (T *)p->y[0];                                                          \
        const o2c_int N = p->k[O2C_NLL_N], C = p->k[O2C_NLL_C], D = p->k[O2C_NLL_D];  \
        const o2c_int ls = p->k[O2C_NLL_LSIZE], red = p->k[O2C_NLL_REDUCTION];        \
        const o2c_int hii = p->k[O2C_NLL_HAS_II], ii = p->k[O2C_NLL_II];              \
        O2C_FOR(i) {                                                                  \
            T l, w;                                                                   \
            if (red == O2C_LOSS_NONE) {                                               \
                O2C_NLL_SAMPLE(T, i, l, w);                                           \
                Y[i] = l;                                                             \
                continue;                                                             \
            }                                                                         \
            T s = 0, sw = 0;                                                          \
            for (o2c_int e = 0; e < N * D; e++) {                                     \
                O2C_NLL_SAMPLE(T, e, l, w);                                           \
                s += l;                                                               \
                sw += w;                                                              \
            }                                                                         \
            Y[i] = red == O2C_LOSS_MEAN ? s / sw : s;                                 \
        }                                                                             \
    }

/*@ o2c_nll_f32 needs o2c_ix_get params O2C_NLL */
O2C_NLL(o2c_nll_f32, float)
/*@ o2c_nll_f64 needs o2c_ix_get params O2C_NLL */
O2C_NLL(o2c_nll_f64, double)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_LOSS(K, F) K(o2c_nll_f32, F) K(o2c_nll_f64, F)
