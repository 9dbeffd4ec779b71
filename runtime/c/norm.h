/* norm kernels. See o2c_rt.h for the calling convention.
 * Statistics (means, variances, softmax sums) accumulate in the element
 * type (float32 stays float32).
 *
 * o2c_softmax_T: Softmax / LogSoftmax. Index space: the rows (outer x inner
 * positions); each loops over its axis.
 *   O2C_SOFTMAX_*
 *
 * o2c_softmax16_f32: Softmax of float16/bfloat16 data on its float32
 * stand-ins (O2C_SOFTMAX_HALF: 1 float16, 2 bfloat16), rounded to the 16-bit
 * type after each step of the op's function body as onnx's reference
 * computes it: d = x - max, e = exp(d), s = sum(e), y = e / s. The sum
 * accumulates in float32 for float16 (numpy) and rounds after every add
 * for bfloat16 (ml_dtypes). Same index space and slots as o2c_softmax_T.
 *
 * o2c_layernorm_T: LayerNormalization. Index space: the rows (product of the
 * dims before axis); each normalizes its N contiguous elements.
 *   x[0] X, x[1] Scale, x[2] B (optional)
 *   O2C_LAYERNORM_*, O2C_NORM_F_EPS
 *   (o2c_layernorm_T_U: Mean and InvStdDev of type U, when it is not T)
 *
 * o2c_batchnorm_prep_T: inference BatchNormalization, per channel.
 *   Index space: channels. x[0] scale, x[1] var; y[0] (T) scale / sqrt(var + eps).
 *   O2C_NORM_F_EPS
 * o2c_batchnorm_T: Index space: X elements. x[0] X, x[1] prep (T),
 *   x[2] B, x[3] mean; y = (x - mean[c]) * prep[c] + B[c], c = (i / INNER) % C.
 *   O2C_BATCHNORM_* (INNER: product of the dims after the channel)
 * o2c_batchnorm_train_T: training-mode BatchNormalization. Index space:
 *   channels. x[0] X, x[1] scale, x[2] B; y[0] Y, y[1] (T, 2 x C) the
 *   batch mean (row 0) and biased variance (row 1).
 *   O2C_BNTRAIN_*, O2C_NORM_F_EPS
 * o2c_batchnorm_running_T: Index space: channels. x[0] input mean,
 *   x[1] input var, x[2] the stats from _train (T, 2 x C);
 *   y[0] running mean, y[1] running var (each optional).
 *   O2C_BNRUN_C; O2C_NORM_F_MOMENTUM
 *
 * o2c_instnorm_T: InstanceNormalization. Index space: N x C rows.
 *   x[0] X, x[1] scale, x[2] B; O2C_INSTNORM_*; O2C_NORM_F_EPS */

/* the mean and the biased variance of the n values x[0..n), summed in the
 * element type T, into mean and var (declared here); j: the caller's index */
#define O2C_ROW_MEAN_VAR(T, x, n, j, mean, var)                                       \
    T mean = 0, var = 0;                                                              \
    for (j = 0; j < (n); j++) mean += (x)[j];                                         \
    mean /= (T)(n);                                                                   \
    for (j = 0; j < (n); j++) {                                                       \
        const T d = (x)[j] - mean;                                                    \
        var += d * d;                                                                 \
    }                                                                                 \
    var /= (T)(n)
/* the same sums in 16 partial sums (another order of the same additions:
 * a loop the C compiler vectorizes; the tiled C target's
 * o2c_layernorm_rows_f32) */
#define O2C_ROW_MEAN_VAR16(T, x, n, j, mean, var)                                     \
    T mean = 0, var = 0, part_[16];                                                   \
    for (int l_ = 0; l_ < 16; l_++) part_[l_] = 0;                                    \
    for (j = 0; j + 16 <= (n); j += 16)                                               \
        for (int l_ = 0; l_ < 16; l_++) part_[l_] += (x)[j + l_];                     \
    for (int l_ = 0; l_ < 16; l_++) mean += part_[l_];                                \
    for (; j < (n); j++) mean += (x)[j];                                              \
    mean /= (T)(n);                                                                   \
    for (int l_ = 0; l_ < 16; l_++) part_[l_] = 0;                                    \
    for (j = 0; j + 16 <= (n); j += 16)                                               \
        for (int l_ = 0; l_ < 16; l_++) {                                             \
            const T d = (x)[j + l_] - mean;                                           \
            part_[l_] += d * d;                                                       \
        }                                                                             \
    for (int l_ = 0; l_ < 16; l_++) var += part_[l_];                                 \
    for (; j < (n); j++) {                                                            \
        const T d = (x)[j] - mean;                                                    \
        var += d * d;                                                                 \
    }                                                                                 \
    var /= (T)(n)

/* x rounded to float16 (h 1) or bfloat16 (h 2), or x itself (h 0) */
#ifndef O2C_ROUND16
#define O2C_ROUND16(h, x) ((h) == 1 ? o2c_h2f(o2c_f2h(x)) : (h) == 2 ? o2c_bf2f(o2c_f2bf(x)) : (x))
#endif

#define O2C_SOFTMAX(NAME, TY)                                                         \
    O2C_KERNEL(NAME)                                                                  \
    {                                                                                 \
        typedef TY T;                                                                 \
        const T *X = (const T *)p->x[0];                                              \
        T *Y = (T *)p->y[0];                                                          \
        const o2c_int A = p->k[O2C_SOFTMAX_A], inner = p->k[O2C_SOFTMAX_INNER];       \
        const o2c_int lg = p->k[O2C_SOFTMAX_LOG];                                     \
        O2C_FOR(i) {                                                                  \
            const o2c_int base = (i / inner) * A * inner + i % inner;                 \
            const T *x = X + base;                                                    \
            T *y = Y + base;                                                          \
            T m = x[0];                                                               \
            o2c_int j;                                                                \
            for (j = 1; j < A; j++)                                                   \
                if (x[j * inner] > m || x[j * inner] != x[j * inner]) m = x[j * inner]; \
            T s = 0;                                                                  \
            if (lg) {                                                                 \
                for (j = 0; j < A; j++) s += O2C_M(TY, exp)(x[j * inner] - m);        \
                const T ls = O2C_M(TY, log)(s);                                       \
                for (j = 0; j < A; j++) y[j * inner] = x[j * inner] - m - ls;         \
            } else {                                                                  \
                for (j = 0; j < A; j++) {                                             \
                    const T e = O2C_M(TY, exp)(x[j * inner] - m);                     \
                    y[j * inner] = e;                                                 \
                    s += e;                                                           \
                }                                                                     \
                const T r = 1 / s;                                                    \
                for (j = 0; j < A; j++) y[j * inner] *= r;                            \
            }                                                                         \
        }                                                                             \
    }

/* o2c_softmax_rows_f32: o2c_softmax_f32 (same parameters) for a softmax
 * over contiguous rows (inner stride 1), the C target's variant: the max,
 * the exponentials (o2c_vexp_f32) and the sum as loops the C compiler
 * vectorizes (max and sum in 8 partial ones, the sum so not in the
 * reference's order; the max of the numbers the same; a NaN is skipped by
 * the max as there, and the exponentials' NaN makes the sum NaN;
 * a NaN in a row makes the sum, so the whole row, NaN, as there). Index
 * space: the rows. */
#define O2C_SOFTMAX_ROWS(NAME)                                                        \
    O2C_KERNEL(NAME)                                                                  \
    {                                                                                 \
        const float *X = (const float *)p->x[0];                                      \
        float *Y = (float *)p->y[0];                                                  \
        const o2c_int A = p->k[O2C_SOFTMAX_A], lg = p->k[O2C_SOFTMAX_LOG];            \
        O2C_FOR(i) {                                                                  \
            const float *x = X + i * A;                                               \
            float *y = Y + i * A;                                                     \
            float m = x[0], m8[8];                                                    \
            o2c_int j;                                                                \
            for (int u = 0; u < 8; u++) m8[u] = x[0];                                 \
            for (j = 0; j + 8 <= A; j += 8)   /* 8 partial maxima: vectorized */      \
                for (int u = 0; u < 8; u++) m8[u] = x[j + u] > m8[u] ? x[j + u] : m8[u]; \
            for (; j < A; j++) m = x[j] > m ? x[j] : m;                               \
            for (int u = 0; u < 8; u++) m = m8[u] > m ? m8[u] : m;                    \
            for (j = 0; j < A; j++) y[j] = o2c_vexp_f32(x[j] - m);                    \
            float s8[8] = {0, 0, 0, 0, 0, 0, 0, 0}, s = 0;                            \
            for (j = 0; j + 8 <= A; j += 8)                                           \
                for (int u = 0; u < 8; u++) s8[u] += y[j + u];                        \
            for (; j < A; j++) s += y[j];                                             \
            for (int u = 0; u < 8; u++) s += s8[u];                                   \
            if (lg) {                                                                 \
                const float ls = logf(s);                                             \
                for (j = 0; j < A; j++) y[j] = x[j] - m - ls;                         \
            } else {                                                                  \
                const float r = 1.0f / s;                                             \
                for (j = 0; j < A; j++) y[j] *= r;                                    \
            }                                                                         \
        }                                                                             \
    }

/* o2c_softmax_cols_f32: o2c_softmax_f32 (same parameters) for a softmax
 * over a strided axis (inner > 1: YOLOv8's DFL softmax over 16 bins of 2100
 * anchors), the C target's variant. Index space: outer x ceil(inner /
 * O2C_SMC_CB), a block of up to CB neighbouring columns each: the maxima,
 * the exponentials (o2c_vexp_f32) and the sums run across the block's
 * contiguous columns, row after row, so every loop vectorizes. Per column
 * the reference's order: the max with its NaN rule (a NaN makes the
 * column's maximum NaN) and the sum over the axis in order. O2C_SMC_CB:
 * runtime/c/params/norm.h. */
#define O2C_SOFTMAX_COLS(NAME)                                                        \
    O2C_KERNEL(NAME)                                                                  \
    {                                                                                 \
        const float *X = (const float *)p->x[0];                                      \
        float *Y = (float *)p->y[0];                                                  \
        const o2c_int A = p->k[O2C_SOFTMAX_A], inner = p->k[O2C_SOFTMAX_INNER];       \
        const o2c_int lg = p->k[O2C_SOFTMAX_LOG];                                     \
        const o2c_int nblk = (inner + O2C_SMC_CB - 1) / O2C_SMC_CB;                   \
        O2C_FOR(i) {                                                                  \
            const o2c_int c0 = i % nblk * O2C_SMC_CB, o = i / nblk;                   \
            const o2c_int nc = inner - c0 < O2C_SMC_CB ? inner - c0 : O2C_SMC_CB;     \
            const float *x = X + o * A * inner + c0;                                  \
            float *y = Y + o * A * inner + c0;                                        \
            float m[O2C_SMC_CB], s[O2C_SMC_CB];                                       \
            o2c_int j, c;                                                             \
            for (c = 0; c < nc; c++) { m[c] = x[c]; s[c] = 0; }                       \
            for (j = 1; j < A; j++)                                                   \
                for (c = 0; c < nc; c++) {                                            \
                    const float v = x[j * inner + c];                                 \
                    m[c] = v > m[c] || v != v ? v : m[c];                             \
                }                                                                     \
            for (j = 0; j < A; j++)                                                   \
                for (c = 0; c < nc; c++) {                                            \
                    const float e = o2c_vexp_f32(x[j * inner + c] - m[c]);            \
                    if (!lg) y[j * inner + c] = e;                                    \
                    s[c] += e;                                                        \
                }                                                                     \
            if (lg) {                                                                 \
                for (c = 0; c < nc; c++) s[c] = logf(s[c]);                           \
                for (j = 0; j < A; j++)                                               \
                    for (c = 0; c < nc; c++) y[j * inner + c] = x[j * inner + c] - m[c] - s[c]; \
            } else {                                                                  \
                for (c = 0; c < nc; c++) s[c] = 1.0f / s[c];                          \
                for (j = 0; j < A; j++)                                               \
                    for (c = 0; c < nc; c++) y[j * inner + c] *= s[c];                \
            }                                                                         \
        }                                                                             \
    }

/* UT: the type of the Mean and InvStdDev outputs */
#define O2C_LAYERNORM(NAME, TY, UT) O2C_LAYERNORM_MV(NAME, TY, UT, O2C_ROW_MEAN_VAR)
/* MV: the row's mean and variance (O2C_ROW_MEAN_VAR, O2C_ROW_MEAN_VAR16) */
#define O2C_LAYERNORM_MV(NAME, TY, UT, MV)                                            \
    O2C_KERNEL(NAME)                                                                  \
    {                                                                                 \
        typedef TY T;                                                                 \
        const T *X = (const T *)p->x[0], *S = (const T *)p->x[1], *B = (const T *)p->x[2]; \
        const o2c_int N = p->k[O2C_LAYERNORM_N], mode = p->k[O2C_LAYERNORM_MODE];     \
        const o2c_int nr = p->k[O2C_LAYERNORM_NR];                                    \
        const T eps = O2C_PF(TY, p, O2C_NORM_F_EPS);                                  \
        O2C_FOR(i) {                                                                  \
            const T *x = X + i * N;                                                   \
            o2c_int j;                                                                \
            MV(T, x, N, j, mean, var);                                                \
            const T inv = 1 / O2C_M(TY, sqrt)(var + eps);                             \
            if (mode == 1) {                                                          \
                ((UT *)p->y[0])[i] = (UT)inv;                                         \
                continue;                                                             \
            }                                                                         \
            if (p->y[1]) ((UT *)p->y[1])[i] = (UT)mean;                               \
            T *y = (T *)p->y[0] + i * N;                                              \
            for (j = 0; j < N; j++) {                                                 \
                o2c_int js = j, jb = j;                                               \
                if (nr) {                                                             \
                    js = o2c_offset(j, nr, p->k + O2C_LAYERNORM_DIMS, p->k + O2C_LAYERNORM_SSTR); \
                    jb = o2c_offset(j, nr, p->k + O2C_LAYERNORM_DIMS, p->k + O2C_LAYERNORM_BSTR); \
                }                                                                     \
                T v = (x[j] - mean) * inv * S[js];                                    \
                if (B) v += B[jb];                                                    \
                y[j] = v;                                                             \
            }                                                                         \
        }                                                                             \
    }

#define O2C_BATCHNORM_PREP(NAME, TY)                                                  \
    O2C_KERNEL(NAME)                                                                  \
    {                                                                                 \
        typedef TY T;                                                                 \
        const T *S = (const T *)p->x[0], *V = (const T *)p->x[1];                     \
        T *P = (T *)p->y[0];                                                          \
        O2C_FOR(c) P[c] = S[c] / O2C_M(TY, sqrt)(V[c] + O2C_PF(TY, p, O2C_NORM_F_EPS)); \
    }

#define O2C_BATCHNORM(NAME, TY)                                                       \
    O2C_KERNEL(NAME)                                                                  \
    {                                                                                 \
        typedef TY T;                                                                 \
        const T *X = (const T *)p->x[0], *B = (const T *)p->x[2], *M = (const T *)p->x[3]; \
        const T *P = (const T *)p->x[1];                                              \
        T *Y = (T *)p->y[0];                                                          \
        const o2c_int C = p->k[O2C_BATCHNORM_C], inner = p->k[O2C_BATCHNORM_INNER];   \
        O2C_FOR(i) {                                                                  \
            const o2c_int c = (i / inner) % C;                                        \
            Y[i] = (X[i] - M[c]) * P[c] + B[c];                                       \
        }                                                                             \
    }

#define O2C_BATCHNORM_TRAIN(NAME, TY)                                                 \
    O2C_KERNEL(NAME)                                                                  \
    {                                                                                 \
        typedef TY T;                                                                 \
        const T *X = (const T *)p->x[0], *S = (const T *)p->x[1], *B = (const T *)p->x[2]; \
        T *Y = (T *)p->y[0];                                                          \
        T *ST = (T *)p->y[1];                                               \
        const o2c_int N = p->k[O2C_BNTRAIN_N], C = p->k[O2C_BNTRAIN_C];               \
        const o2c_int inner = p->k[O2C_BNTRAIN_INNER];                                \
        O2C_FOR(c) {                                                                  \
            o2c_int b, j;                                                             \
            T mean = 0, var = 0;                                                 \
            for (b = 0; b < N; b++)                                                   \
                for (j = 0; j < inner; j++) mean += (T)X[(b * C + c) * inner + j]; \
            mean /= (T)(N * inner);                                              \
            for (b = 0; b < N; b++)                                                   \
                for (j = 0; j < inner; j++) {                                         \
                    const T d = (T)X[(b * C + c) * inner + j] - mean;       \
                    var += d * d;                                                     \
                }                                                                     \
            var /= (T)(N * inner);                                               \
            const T a = (T)S[c] / O2C_M(TY, sqrt)(var + O2C_PF(TY, p, O2C_NORM_F_EPS)); \
            for (b = 0; b < N; b++)                                                   \
                for (j = 0; j < inner; j++) {                                         \
                    const o2c_int o = (b * C + c) * inner + j;                        \
                    Y[o] = (T)(((T)X[o] - mean) * a + (T)B[c]);             \
                }                                                                     \
            ST[c] = mean;                                                             \
            ST[C + c] = var;                                                          \
        }                                                                             \
    }

#define O2C_BATCHNORM_RUNNING(NAME, TY)                                               \
    O2C_KERNEL(NAME)                                                                  \
    {                                                                                 \
        typedef TY T;                                                                 \
        const T *M = (const T *)p->x[0], *V = (const T *)p->x[1];                     \
        const T *ST = (const T *)p->x[2];                                   \
        T *RM = (T *)p->y[0], *RV = (T *)p->y[1];                                     \
        const o2c_int C = p->k[O2C_BNRUN_C];                                          \
        const T mo = O2C_PF(TY, p, O2C_NORM_F_MOMENTUM);                              \
        O2C_FOR(c) {                                                                  \
            if (RM) RM[c] = (T)((T)M[c] * mo + ST[c] * (1 - mo));                \
            if (RV) RV[c] = (T)((T)V[c] * mo + ST[C + c] * (1 - mo));            \
        }                                                                             \
    }

#define O2C_INSTNORM(NAME, TY)                                                        \
    O2C_KERNEL(NAME)                                                                  \
    {                                                                                 \
        typedef TY T;                                                                 \
        const T *X = (const T *)p->x[0], *S = (const T *)p->x[1], *B = (const T *)p->x[2]; \
        T *Y = (T *)p->y[0];                                                          \
        const o2c_int C = p->k[O2C_INSTNORM_C], N = p->k[O2C_INSTNORM_S];             \
        O2C_FOR(i) {                                                                  \
            const T *x = X + i * N;                                                   \
            T *y = Y + i * N;                                                         \
            const o2c_int c = i % C;                                                  \
            o2c_int j;                                                                \
            O2C_ROW_MEAN_VAR(T, x, N, j, mean, var);                                  \
            const T a = S[c] / O2C_M(TY, sqrt)(var + O2C_PF(TY, p, O2C_NORM_F_EPS)), b = B[c]; \
            for (j = 0; j < N; j++) y[j] = (x[j] - mean) * a + b;                     \
        }                                                                             \
    }

/*@ o2c_softmax16_f32 needs o2c_h2f o2c_f2h o2c_bf2f o2c_f2bf params O2C_SOFTMAX split */
O2C_KERNEL(o2c_softmax16_f32)
{
    const float *X = (const float *)p->x[0];
    float *Y = (float *)p->y[0];
    const o2c_int A = p->k[O2C_SOFTMAX_A], inner = p->k[O2C_SOFTMAX_INNER];
    const o2c_int h = p->k[O2C_SOFTMAX_HALF];
    O2C_FOR(i) {
        const o2c_int base = (i / inner) * A * inner + i % inner;
        const float *x = X + base;
        float *y = Y + base;
        float m = x[0], s = 0;
        o2c_int j;
        for (j = 1; j < A; j++)
            if (x[j * inner] > m || x[j * inner] != x[j * inner]) m = x[j * inner];
        for (j = 0; j < A; j++) {
            const float e = O2C_ROUND16(h, expf(O2C_ROUND16(h, x[j * inner] - m)));
            y[j * inner] = e;
            s = h == 2 ? O2C_ROUND16(h, s + e) : s + e;
        }
        s = O2C_ROUND16(h, s);
        for (j = 0; j < A; j++) y[j * inner] = O2C_ROUND16(h, y[j * inner] / s);
    }
}
/*@ o2c_softmax_f32 params O2C_SOFTMAX split */
O2C_SOFTMAX(o2c_softmax_f32, float)
/*@ o2c_softmax_rows_f32 needs o2c_vexp_f32 params O2C_SOFTMAX split */
O2C_SOFTMAX_ROWS(o2c_softmax_rows_f32)
/*@ o2c_softmax_cols_f32 needs o2c_vexp_f32 params O2C_SOFTMAX split */
O2C_SOFTMAX_COLS(o2c_softmax_cols_f32)
/*@ o2c_softmax_f64 params O2C_SOFTMAX split */
O2C_SOFTMAX(o2c_softmax_f64, double)
/*@ o2c_layernorm_f32 needs o2c_offset params O2C_LAYERNORM O2C_NORM split */
O2C_LAYERNORM(o2c_layernorm_f32, float, float)
/*@ o2c_layernorm_rows_f32 needs o2c_offset params O2C_LAYERNORM O2C_NORM split */
O2C_LAYERNORM_MV(o2c_layernorm_rows_f32, float, float, O2C_ROW_MEAN_VAR16)
/*@ o2c_layernorm_f64 needs o2c_offset params O2C_LAYERNORM O2C_NORM split */
O2C_LAYERNORM(o2c_layernorm_f64, double, double)
/*@ o2c_layernorm_f32_f64 needs o2c_offset params O2C_LAYERNORM O2C_NORM split */
O2C_LAYERNORM(o2c_layernorm_f32_f64, float, double)
/*@ o2c_layernorm_f64_f32 needs o2c_offset params O2C_LAYERNORM O2C_NORM split */
O2C_LAYERNORM(o2c_layernorm_f64_f32, double, float)
/*@ o2c_batchnorm_prep_f32 params O2C_NORM */
O2C_BATCHNORM_PREP(o2c_batchnorm_prep_f32, float)
/*@ o2c_batchnorm_prep_f64 params O2C_NORM */
O2C_BATCHNORM_PREP(o2c_batchnorm_prep_f64, double)
/*@ o2c_batchnorm_f32 params O2C_BATCHNORM split */
O2C_BATCHNORM(o2c_batchnorm_f32, float)
/*@ o2c_batchnorm_f64 params O2C_BATCHNORM split */
O2C_BATCHNORM(o2c_batchnorm_f64, double)
/*@ o2c_batchnorm_train_f32 params O2C_BNTRAIN O2C_NORM */
O2C_BATCHNORM_TRAIN(o2c_batchnorm_train_f32, float)
/*@ o2c_batchnorm_train_f64 params O2C_BNTRAIN O2C_NORM */
O2C_BATCHNORM_TRAIN(o2c_batchnorm_train_f64, double)
/*@ o2c_batchnorm_running_f32 params O2C_BNRUN O2C_NORM O2C_NORM_F_MOMENTUM */
O2C_BATCHNORM_RUNNING(o2c_batchnorm_running_f32, float)
/*@ o2c_batchnorm_running_f64 params O2C_BNRUN O2C_NORM O2C_NORM_F_MOMENTUM */
O2C_BATCHNORM_RUNNING(o2c_batchnorm_running_f64, double)
/*@ o2c_instnorm_f32 params O2C_INSTNORM O2C_NORM split */
O2C_INSTNORM(o2c_instnorm_f32, float)
/*@ o2c_instnorm_f64 params O2C_INSTNORM O2C_NORM split */
O2C_INSTNORM(o2c_instnorm_f64, double)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_NORM(K, F) \
    K(o2c_softmax_f32, F) K(o2c_softmax16_f32, F) K(o2c_softmax_rows_f32, F) K(o2c_softmax_cols_f32, F) K(o2c_softmax_f64, F) K(o2c_layernorm_f32, F) K(o2c_layernorm_rows_f32, F) K(o2c_layernorm_f64, F) \
    K(o2c_layernorm_f32_f64, F) K(o2c_layernorm_f64_f32, F) \
    K(o2c_instnorm_f32, F) K(o2c_instnorm_f64, F) K(o2c_batchnorm_prep_f32, F) K(o2c_batchnorm_prep_f64, F) \
    K(o2c_batchnorm_f32, F) K(o2c_batchnorm_f64, F) K(o2c_batchnorm_train_f32, F) K(o2c_batchnorm_train_f64, F) \
    K(o2c_batchnorm_running_f32, F) K(o2c_batchnorm_running_f64, F)
