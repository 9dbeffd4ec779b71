/* norm kernels. See o2c_rt.h for the calling convention.
 * Statistics (means, variances, softmax sums) accumulate in the element
 * type (float32 stays float32).
 *
 * o2c_softmax_T: Softmax / LogSoftmax. Index space: the rows (outer x inner
 * positions); each loops over its axis.
 *   k[0] A (length of the axis), k[1] inner (stride of the axis), k[2] 1: LogSoftmax
 *
 * o2c_layernorm_T: LayerNormalization. Index space: the rows (product of the
 * dims before axis); each normalizes its N contiguous elements.
 *   x[0] X, x[1] Scale, x[2] B (optional)
 *   k[0] N, k[1] mode: 0 writes Y to y[0] and, if y[1], Mean to y[1];
 *                      1 writes InvStdDev to y[0] (no Y)
 *   (o2c_layernorm_T_U: Mean and InvStdDev of type U, when it is not T)
 *   k[3] nr: 0 when Scale and B have N elements (direct index); else the
 *        rank of the normalized shape, k[4..11] its dims,
 *        k[12..19] Scale strides, k[20..27] B strides (0: broadcast)
 *   f[0] epsilon
 *
 * o2c_batchnorm_prep_T: inference BatchNormalization, per channel.
 *   Index space: channels. x[0] scale, x[1] var; y[0] (T) scale / sqrt(var + eps).
 *   f[0] epsilon
 * o2c_batchnorm_T: Index space: X elements. x[0] X, x[1] prep (T),
 *   x[2] B, x[3] mean; y = (x - mean[c]) * prep[c] + B[c], c = (i / k[1]) % k[0].
 *   k[0] C, k[1] inner (product of the dims after the channel)
 * o2c_batchnorm_train_T: training-mode BatchNormalization. Index space:
 *   channels. x[0] X, x[1] scale, x[2] B; y[0] Y, y[1] (T, 2 x C) the
 *   batch mean (row 0) and biased variance (row 1).
 *   k[0] N, k[1] C, k[2] inner; f[0] epsilon
 * o2c_batchnorm_running_T: Index space: channels. x[0] input mean,
 *   x[1] input var, x[2] the stats from _train (T, 2 x C);
 *   y[0] running mean, y[1] running var (each optional).
 *   k[0] C; f[0] momentum
 *
 * o2c_instnorm_T: InstanceNormalization. Index space: N x C rows.
 *   x[0] X, x[1] scale, x[2] B; k[0] C, k[1] S (spatial size); f[0] epsilon */

#define O2C_SOFTMAX(NAME, TY)                                                         \
    O2C_KERNEL(NAME)                                                                  \
    {                                                                                 \
        typedef TY T;                                                                 \
        const T *X = (const T *)p->x[0];                                              \
        T *Y = (T *)p->y[0];                                                          \
        const int64_t A = p->k[0], inner = p->k[1], lg = p->k[2];                     \
        O2C_FOR(i) {                                                                  \
            const int64_t base = (i / inner) * A * inner + i % inner;                 \
            const T *x = X + base;                                                    \
            T *y = Y + base;                                                          \
            T m = x[0];                                                               \
            int64_t j;                                                                \
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

/* UT: the type of the Mean and InvStdDev outputs */
#define O2C_LAYERNORM(NAME, TY, UT)                                                   \
    O2C_KERNEL(NAME)                                                                  \
    {                                                                                 \
        typedef TY T;                                                                 \
        const T *X = (const T *)p->x[0], *S = (const T *)p->x[1], *B = (const T *)p->x[2]; \
        const int64_t N = p->k[0], mode = p->k[1], nr = p->k[3];                      \
        const T eps = O2C_PF(TY, p, 0);                                               \
        O2C_FOR(i) {                                                                  \
            const T *x = X + i * N;                                                   \
            int64_t j;                                                                \
            T mean = 0, var = 0;                                                      \
            for (j = 0; j < N; j++) mean += x[j];                                     \
            mean /= (T)N;                                                             \
            for (j = 0; j < N; j++) {                                                 \
                const T d = x[j] - mean;                                              \
                var += d * d;                                                         \
            }                                                                         \
            var /= (T)N;                                                              \
            const T inv = 1 / O2C_M(TY, sqrt)(var + eps);                             \
            if (mode == 1) {                                                          \
                ((UT *)p->y[0])[i] = (UT)inv;                                         \
                continue;                                                             \
            }                                                                         \
            if (p->y[1]) ((UT *)p->y[1])[i] = (UT)mean;                               \
            T *y = (T *)p->y[0] + i * N;                                              \
            for (j = 0; j < N; j++) {                                                 \
                int64_t js = j, jb = j;                                               \
                if (nr) {                                                             \
                    js = o2c_offset(j, nr, p->k + 4, p->k + 12);                      \
                    jb = o2c_offset(j, nr, p->k + 4, p->k + 20);                      \
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
        O2C_FOR(c) P[c] = S[c] / O2C_M(TY, sqrt)(V[c] + O2C_PF(TY, p, 0));            \
    }

#define O2C_BATCHNORM(NAME, TY)                                                       \
    O2C_KERNEL(NAME)                                                                  \
    {                                                                                 \
        typedef TY T;                                                                 \
        const T *X = (const T *)p->x[0], *B = (const T *)p->x[2], *M = (const T *)p->x[3]; \
        const T *P = (const T *)p->x[1];                                              \
        T *Y = (T *)p->y[0];                                                          \
        const int64_t C = p->k[0], inner = p->k[1];                                   \
        O2C_FOR(i) {                                                                  \
            const int64_t c = (i / inner) % C;                                        \
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
        const int64_t N = p->k[0], C = p->k[1], inner = p->k[2];                      \
        O2C_FOR(c) {                                                                  \
            int64_t b, j;                                                             \
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
            const T a = (T)S[c] / O2C_M(TY, sqrt)(var + O2C_PF(TY, p, 0));                      \
            for (b = 0; b < N; b++)                                                   \
                for (j = 0; j < inner; j++) {                                         \
                    const int64_t o = (b * C + c) * inner + j;                        \
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
        const int64_t C = p->k[0];                                                    \
        const T mo = O2C_PF(TY, p, 0);                                                       \
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
        const int64_t C = p->k[0], N = p->k[1];                                       \
        O2C_FOR(i) {                                                                  \
            const T *x = X + i * N;                                                   \
            T *y = Y + i * N;                                                         \
            const int64_t c = i % C;                                                  \
            int64_t j;                                                                \
            T mean = 0, var = 0;                                                      \
            for (j = 0; j < N; j++) mean += x[j];                                     \
            mean /= (T)N;                                                             \
            for (j = 0; j < N; j++) {                                                 \
                const T d = x[j] - mean;                                              \
                var += d * d;                                                         \
            }                                                                         \
            var /= (T)N;                                                              \
            const T a = S[c] / O2C_M(TY, sqrt)(var + O2C_PF(TY, p, 0)), b = B[c];     \
            for (j = 0; j < N; j++) y[j] = (x[j] - mean) * a + b;                     \
        }                                                                             \
    }

/*@ o2c_softmax_f32 */
O2C_SOFTMAX(o2c_softmax_f32, float)
/*@ o2c_softmax_f64 */
O2C_SOFTMAX(o2c_softmax_f64, double)
/*@ o2c_layernorm_f32 needs o2c_offset */
O2C_LAYERNORM(o2c_layernorm_f32, float, float)
/*@ o2c_layernorm_f64 needs o2c_offset */
O2C_LAYERNORM(o2c_layernorm_f64, double, double)
/*@ o2c_layernorm_f32_f64 needs o2c_offset */
O2C_LAYERNORM(o2c_layernorm_f32_f64, float, double)
/*@ o2c_layernorm_f64_f32 needs o2c_offset */
O2C_LAYERNORM(o2c_layernorm_f64_f32, double, float)
/*@ o2c_batchnorm_prep_f32 */
O2C_BATCHNORM_PREP(o2c_batchnorm_prep_f32, float)
/*@ o2c_batchnorm_prep_f64 */
O2C_BATCHNORM_PREP(o2c_batchnorm_prep_f64, double)
/*@ o2c_batchnorm_f32 */
O2C_BATCHNORM(o2c_batchnorm_f32, float)
/*@ o2c_batchnorm_f64 */
O2C_BATCHNORM(o2c_batchnorm_f64, double)
/*@ o2c_batchnorm_train_f32 */
O2C_BATCHNORM_TRAIN(o2c_batchnorm_train_f32, float)
/*@ o2c_batchnorm_train_f64 */
O2C_BATCHNORM_TRAIN(o2c_batchnorm_train_f64, double)
/*@ o2c_batchnorm_running_f32 */
O2C_BATCHNORM_RUNNING(o2c_batchnorm_running_f32, float)
/*@ o2c_batchnorm_running_f64 */
O2C_BATCHNORM_RUNNING(o2c_batchnorm_running_f64, double)
/*@ o2c_instnorm_f32 */
O2C_INSTNORM(o2c_instnorm_f32, float)
/*@ o2c_instnorm_f64 */
O2C_INSTNORM(o2c_instnorm_f64, double)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_NORM(K) \
    K(o2c_softmax_f32) K(o2c_softmax_f64) K(o2c_layernorm_f32) K(o2c_layernorm_f64) \
    K(o2c_layernorm_f32_f64) K(o2c_layernorm_f64_f32) \
    K(o2c_instnorm_f32) K(o2c_instnorm_f64) K(o2c_batchnorm_prep_f32) K(o2c_batchnorm_prep_f64) \
    K(o2c_batchnorm_f32) K(o2c_batchnorm_f64) K(o2c_batchnorm_train_f32) K(o2c_batchnorm_train_f64) \
    K(o2c_batchnorm_running_f32) K(o2c_batchnorm_running_f64)
