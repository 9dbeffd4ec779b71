/* Extra kernels: integer Pow, SwiGLU, CumProd, ReverseSequence,
 * GroupNormalization, Compress, TfIdfVectorizer (their shape rules and
 * lowerings are in compiler/ops/extra.c; Swish is an op-table expression).
 * Index space: the output elements unless a kernel says otherwise. */

/* Integer Pow: a^b by squaring in the unsigned type (wrapping on overflow,
 * as the fixed-width product does); a negative exponent gives the
 * truncated 1 / a^|b|: 1 for a = 1, +-1 for a = -1, else 0.
 *   x[0] bases, x[1] exponents (the base type)   O2C_IPOW_* */
#define O2C_IPOW_DEF(NAME, TY, UT)                                          \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const TY *A = (const TY *)p->x[0], *B = (const TY *)p->x[1];        \
        TY *Y = (TY *)p->y[0];                                              \
        const int64_t r = p->k[O2C_IPOW_RANK];                              \
        O2C_FOR(i) {                                                        \
            const TY a = r ? A[o2c_offset(i, r, p->k + O2C_IPOW_DIMS, p->k + O2C_IPOW_SA)] : A[i]; \
            TY e = r ? B[o2c_offset(i, r, p->k + O2C_IPOW_DIMS, p->k + O2C_IPOW_SB)] : B[i]; \
            if (e < 0) {                                                    \
                Y[i] = (TY)(a == 1 ? 1 : a == -1 ? (e % 2 ? -1 : 1) : 0);   \
            } else {                                                        \
                UT base = (UT)a, acc = 1;                                   \
                for (; e > 0; e /= 2) {                                     \
                    if (e % 2) acc *= base;                                 \
                    base *= base;                                           \
                }                                                           \
                Y[i] = (TY)acc;                                             \
            }                                                               \
        }                                                                   \
    }

/* SwiGLU: y = a * sigmoid(alpha * a) * b (same shapes).
 *   O2C_SWIGLU_F_ALPHA */
#define O2C_SWIGLU_DEF(NAME, TY)                                            \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        typedef TY T;                                                       \
        const T *A = (const T *)p->x[0], *B = (const T *)p->x[1];           \
        T *Y = (T *)p->y[0];                                                \
        const T alpha = O2C_PF(TY, p, O2C_SWIGLU_F_ALPHA);                  \
        O2C_FOR(i) Y[i] = A[i] / (1 + O2C_M(TY, exp)(-alpha * A[i])) * B[i]; \
    }

/* CumProd over one axis, read at run time from x[1] (int32 or int64,
 * negative counts from the end; out of range: y = x). Each index
 * multiplies its own prefix (or suffix).   O2C_CUMPROD_* */
#define O2C_CUMPROD_DEF(NAME, TY)                                           \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        typedef TY T;                                                       \
        const T *X = (const T *)p->x[0];                                    \
        T *Y = (T *)p->y[0];                                                \
        const int64_t rank = p->k[O2C_CUMPROD_RANK];                        \
        int64_t ax = p->k[O2C_CUMPROD_AXSIZE] == 4 ? (int64_t) * (const int32_t *)p->x[1] \
                                   : *(const int64_t *)p->x[1];             \
        if (ax < 0) ax += rank;                                             \
        int64_t n = 1, inner = 1, incl = p->k[O2C_CUMPROD_EXCLUSIVE] ? 0 : 1; \
        if (ax >= 0 && ax < rank) {                                         \
            n = p->k[O2C_CUMPROD_DIMS + ax];                                \
            for (int64_t d = ax + 1; d < rank; d++) inner *= p->k[O2C_CUMPROD_DIMS + d]; \
        } else {                                                            \
            incl = 1;                                                       \
        }                                                                   \
        O2C_FOR(i) {                                                        \
            const int64_t j = (i / inner) % n, base = i - j * inner;        \
            T s = 1;                                                        \
            if (!p->k[O2C_CUMPROD_REVERSE]) {                               \
                for (int64_t t = 0; t < j + incl; t++) s *= X[base + t * inner]; \
            } else {                                                        \
                for (int64_t t = n - 1; t > j - incl; t--) s *= X[base + t * inner]; \
            }                                                               \
            Y[i] = s;                                                       \
        }                                                                   \
    }

/* GroupNormalization. Index space: instance x group; each normalizes its
 * channels (CPG channels of S elements, contiguous): mean and biased
 * variance in the element type (two passes), then
 * y = (x - mean) / sqrt(var + eps) * scale[c] + bias[c].
 *   x[0] X (N, C, S...), x[1] scale, x[2] bias (C values, or G with
 *   O2C_GROUPNORM_PERGROUP)   O2C_GROUPNORM_* */
#define O2C_GROUPNORM_DEF(NAME, TY)                                         \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        typedef TY T;                                                       \
        const T *X = (const T *)p->x[0], *SC = (const T *)p->x[1], *BI = (const T *)p->x[2]; \
        T *Y = (T *)p->y[0];                                                \
        const int64_t G = p->k[O2C_GROUPNORM_G], cpg = p->k[O2C_GROUPNORM_CPG]; \
        const int64_t S = p->k[O2C_GROUPNORM_S], pg = p->k[O2C_GROUPNORM_PERGROUP]; \
        const int64_t m = cpg * S;                                          \
        const T eps = O2C_PF(TY, p, O2C_GROUPNORM_F_EPS);                   \
        O2C_FOR(i) {                                                        \
            const T *x = X + i * m;                                         \
            T *y = Y + i * m;                                               \
            const int64_t g = i % G;                                        \
            T mean = 0, var = 0;                                            \
            for (int64_t j = 0; j < m; j++) mean += x[j];                   \
            mean /= (T)m;                                                   \
            for (int64_t j = 0; j < m; j++) var += (x[j] - mean) * (x[j] - mean); \
            const T inv = 1 / O2C_M(TY, sqrt)(var / (T)m + eps);            \
            for (int64_t c = 0; c < cpg; c++) {                             \
                const int64_t ch = pg ? g : g * cpg + c;                    \
                const T a = inv * SC[ch], b = BI[ch];                       \
                for (int64_t s = 0; s < S; s++)                             \
                    y[c * S + s] = (x[c * S + s] - mean) * a + b;           \
            }                                                               \
        }                                                                   \
    }

/*@ o2c_revseq */
/* ReverseSequence: in each batch entry b the first lens[b] steps of the
 * time axis are reversed, the others copied; any element type.
 *   x[0] X seen as (D0, D1, INNER), x[1] the lengths (int64, one per batch
 *   entry; clamped to [0, time steps])   O2C_REVSEQ_* */
O2C_KERNEL(o2c_revseq)
{
    const uint8_t *X = (const uint8_t *)p->x[0];
    const int64_t *LEN = (const int64_t *)p->x[1];
    uint8_t *Y = (uint8_t *)p->y[0];
    const int64_t d1 = p->k[O2C_REVSEQ_D1], inner = p->k[O2C_REVSEQ_INNER];
    const int64_t bax = p->k[O2C_REVSEQ_BATCH_AXIS], es = p->k[O2C_REVSEQ_ESIZE];
    const int64_t nt = bax ? p->k[O2C_REVSEQ_D0] : d1;
    O2C_FOR(i) {
        const int64_t in = i % inner, i1 = (i / inner) % d1, i0 = i / (inner * d1);
        const int64_t b = bax ? i1 : i0, t = bax ? i0 : i1;
        int64_t len = LEN[b];
        if (len > nt) len = nt;
        const int64_t st = t < len ? len - 1 - t : t;
        const int64_t src = ((bax ? st * d1 + b : b * d1 + st) * inner + in) * es;
        memcpy(Y + i * es, X + src, (size_t)es);
    }
}

/*@ o2c_compress */
/* Compress with a constant condition: the kept indices along the axis.
 *   x[0] X seen as (OUTER, AXN, INNER), x[1] the K kept indices (int64)
 *   O2C_COMPRESS_* */
O2C_KERNEL(o2c_compress)
{
    const uint8_t *X = (const uint8_t *)p->x[0];
    const int64_t *IDX = (const int64_t *)p->x[1];
    uint8_t *Y = (uint8_t *)p->y[0];
    const int64_t axn = p->k[O2C_COMPRESS_AXN], k = p->k[O2C_COMPRESS_K];
    const int64_t inner = p->k[O2C_COMPRESS_INNER], es = p->k[O2C_COMPRESS_ESIZE];
    O2C_FOR(i) {
        const int64_t in = i % inner, j = (i / inner) % k, o = i / (inner * k);
        memcpy(Y + i * es, X + ((o * axn + IDX[j]) * inner + in) * es, (size_t)es);
    }
}

/*@ o2c_tfidf */
/* TfIdfVectorizer over int32 or int64 items. Index space: the rows; each
 * writes its NCOLS outputs: the count of each pool n-gram (n from MINN to
 * MAXN) whose items stand skip + 1 apart (skip 0..MAXSKIP; unigrams
 * counted once), then weighted by the mode.
 *   x[0] X (rows x C), x[1] the table: per n-gram n, its output column (-1:
 *   none), its n items; x[2] the weights (NCOLS floats) or NULL; y[0] rows x NCOLS floats
 *   O2C_TFIDF_* */
O2C_KERNEL(o2c_tfidf)
{
    const int64_t *TB = (const int64_t *)p->x[1];
    const float *W = (const float *)p->x[2];
    float *Y = (float *)p->y[0];
    const int64_t C = p->k[O2C_TFIDF_C], xs = p->k[O2C_TFIDF_XSIZE], nc = p->k[O2C_TFIDF_NCOLS];
    const int64_t minn = p->k[O2C_TFIDF_MINN], maxn = p->k[O2C_TFIDF_MAXN];
    const int64_t maxskip = p->k[O2C_TFIDF_MAXSKIP], mode = p->k[O2C_TFIDF_MODE], tl = p->k[O2C_TFIDF_TLEN];
    O2C_FOR(r) {
        float *y = Y + r * nc;
        for (int64_t c = 0; c < nc; c++) y[c] = 0;
        for (int64_t e = 0; e < tl; e += 2 + TB[e]) {
            const int64_t n = TB[e];
            if (n < minn || n > maxn || TB[e + 1] < 0) continue;
            for (int64_t sd = 1; sd <= (n == 1 ? 1 : maxskip + 1); sd++)
                for (int64_t s = 0; s + (n - 1) * sd < C; s++) {
                    int64_t q = 0;
                    for (; q < n; q++) {
                        const int64_t at = r * C + s + q * sd;
                        const int64_t v = xs == 4 ? (int64_t)((const int32_t *)p->x[0])[at]
                                                  : ((const int64_t *)p->x[0])[at];
                        if (v != TB[e + 2 + q]) break;
                    }
                    if (q == n) y[TB[e + 1]] += 1;
                }
        }
        for (int64_t c = 0; c < nc; c++) {
            if (mode == O2C_TFIDF_MODE_IDF) y[c] = y[c] > 0 ? (W ? W[c] : 1) : 0;
            else if (mode == O2C_TFIDF_MODE_TFIDF && W) y[c] *= W[c];
        }
    }
}

/*@ o2c_ipow_i32 needs o2c_offset */
O2C_IPOW_DEF(o2c_ipow_i32, int32_t, uint32_t)
/*@ o2c_ipow_i64 needs o2c_offset */
O2C_IPOW_DEF(o2c_ipow_i64, int64_t, uint64_t)

/*@ o2c_swiglu_f32 */
O2C_SWIGLU_DEF(o2c_swiglu_f32, float)
/*@ o2c_swiglu_f64 */
O2C_SWIGLU_DEF(o2c_swiglu_f64, double)

/*@ o2c_cumprod_f32 */
O2C_CUMPROD_DEF(o2c_cumprod_f32, float)
/*@ o2c_cumprod_f64 */
O2C_CUMPROD_DEF(o2c_cumprod_f64, double)
/*@ o2c_cumprod_i32 */
O2C_CUMPROD_DEF(o2c_cumprod_i32, int32_t)
/*@ o2c_cumprod_i64 */
O2C_CUMPROD_DEF(o2c_cumprod_i64, int64_t)
/*@ o2c_cumprod_u32 */
O2C_CUMPROD_DEF(o2c_cumprod_u32, uint32_t)
/*@ o2c_cumprod_u64 */
O2C_CUMPROD_DEF(o2c_cumprod_u64, uint64_t)

/*@ o2c_groupnorm_f32 */
O2C_GROUPNORM_DEF(o2c_groupnorm_f32, float)
/*@ o2c_groupnorm_f64 */
O2C_GROUPNORM_DEF(o2c_groupnorm_f64, double)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_EXTRA(K) K(o2c_revseq) K(o2c_compress) K(o2c_tfidf)            \
    K(o2c_ipow_i32) K(o2c_ipow_i64) K(o2c_swiglu_f32) K(o2c_swiglu_f64)             \
    K(o2c_cumprod_f32) K(o2c_cumprod_f64) K(o2c_cumprod_i32) K(o2c_cumprod_i64)     \
    K(o2c_cumprod_u32) K(o2c_cumprod_u64) K(o2c_groupnorm_f32) K(o2c_groupnorm_f64)
