/* Matrix products. Index space: the output elements.
 *
 * o2c_matmul_f32 / _f64: Y[b, m, n] = alpha * sum_k A[b, m, k] * B[b, k, n]
 *                                     + beta * C[b, m, n]  (C optional)
 *   k[0] M, k[1] N, k[2] K
 *   k[3] A stride between rows (m), k[4] A stride along k
 *   k[5] B stride along k,          k[6] B stride between columns (n)
 *   k[7] batch rank r (0..6), k[8..8+r) batch dims,
 *   k[16..16+r) A batch strides, k[24..24+r) B batch strides (0: broadcast)
 *   k[32] C present: 0 no, 1 yes; k[33] C stride m, k[34] C stride n
 *   f[0] alpha, f[1] beta
 * Gemm uses it with transposes expressed as strides.
 * Epilogue (fused ops, o2c_rt.h): the O2C_EPI_* slots, channel n (the column). */
#define O2C_MATMUL(NAME, T, EPI)                                                       \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const T *A = (const T *)p->x[0], *B = (const T *)p->x[1];                  \
        const T *Cm = (const T *)p->x[2];                                           \
        T *Y = (T *)p->y[0];                                                        \
        const int64_t M = p->k[0], N = p->k[1], K = p->k[2];                        \
        const int64_t sam = p->k[3], sak = p->k[4], sbk = p->k[5], sbn = p->k[6];   \
        const int64_t r = p->k[7];                                                  \
        const T alpha = O2C_PF(T, p, 0), beta = O2C_PF(T, p, 1);                            \
        const int epi = p->k[O2C_EPI_ACT] || p->k[O2C_EPI_RES];                     \
        O2C_FOR(i) {                                                                \
            const int64_t n = i % N, m = (i / N) % M, b = i / (M * N);              \
            const T *a = A + m * sam, *bb = B + n * sbn;                            \
            if (r) {                                                                \
                a += o2c_offset(b, r, p->k + 8, p->k + 16);                         \
                bb += o2c_offset(b, r, p->k + 8, p->k + 24);                        \
            }                                                                       \
            T acc = 0;                                                              \
            for (int64_t kk = 0; kk < K; kk++) acc += a[kk * sak] * bb[kk * sbk];   \
            acc *= alpha;                                                           \
            if (p->k[32]) acc += beta * Cm[m * p->k[33] + n * p->k[34]];            \
            Y[i] = epi ? EPI(acc, i, n, p) : acc;                                   \
        }                                                                           \
    }
/* o2c_poolgemm_f32 / _f64 (GlobalPoolGemm): a global average pool and a
 * matrix product in one. Index space: N x M outputs.
 *   Y[n, m] = epi(alpha * sum_c mean_s(X[n, c, s]) * W[m * k[3] + c * k[4]]
 *                 + beta * Cb[m * k[6]])            (Cb when k[5] is 1)
 *   k[0] M, k[1] C, k[2] S (spatial size), k[3] W stride m, k[4] W stride c,
 *   k[5] bias present, k[6] its stride; f[0] alpha, f[1] beta;
 *   epilogue: the O2C_EPI_* slots (o2c_rt.h), channel m. */
#define O2C_POOLGEMM(NAME, T, EPI)                                                  \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const T *X = (const T *)p->x[0], *W = (const T *)p->x[1];                  \
        const T *Cb = (const T *)p->x[2];                                           \
        T *Y = (T *)p->y[0];                                                        \
        const int64_t M = p->k[0], C = p->k[1], S = p->k[2];                        \
        const int64_t swm = p->k[3], swc = p->k[4];                                 \
        const T alpha = O2C_PF(T, p, 0), beta = O2C_PF(T, p, 1);                            \
        const int epi = p->k[O2C_EPI_ACT] || p->k[O2C_EPI_RES];                     \
        O2C_FOR(i) {                                                                \
            const int64_t m = i % M, n = i / M;                                     \
            T acc = 0;                                                              \
            for (int64_t c = 0; c < C; c++) {                                       \
                const T *xp = X + (n * C + c) * S;                                  \
                T sum = 0;                                                          \
                for (int64_t s = 0; s < S; s++) sum += xp[s];                       \
                acc += sum / (T)S * W[m * swm + c * swc];                           \
            }                                                                       \
            acc *= alpha;                                                           \
            if (p->k[5]) acc += beta * Cb[m * p->k[6]];                             \
            Y[i] = epi ? EPI(acc, i, m, p) : acc;                                   \
        }                                                                           \
    }

/* o2c_matmul_tile_f32: the product of o2c_matmul_* (same parameters),
 * computed in register tiles of O2C_MM_MR x O2C_MM_NR outputs (multiply-adds
 * fused where the target has FMA): each step of
 * k loads one row of B's tile and broadcasts MR values of A, so the inner
 * loop is a fixed-length, contiguous multiply-add the C compiler vectorizes.
 * Index space: the tiles, batch x ceil(M/MR) x ceil(N/NR). Needs B
 * contiguous along n (k[6] == 1). Every output sums over k in the order the
 * reference does. The lowering picks it for the C target. */
#define O2C_MM_MR 8
#define O2C_MM_NR 32
/* One tile: ROWS x COLS outputs from (m0, n0). With constant ROWS and COLS
 * (a full tile) the accumulators stay in registers. */
#define O2C_MM_TILE_RUN(T, EPI, ROWS, COLS)                                         \
    {                                                                               \
        T acc[O2C_MM_MR][O2C_MM_NR];                                                \
        for (int i = 0; i < (ROWS); i++)                                            \
            for (int j = 0; j < O2C_MM_NR; j++) acc[i][j] = 0;                      \
        for (int64_t kk = 0; kk < K; kk++) {                                        \
            const T *brow = bb + kk * sbk, *acol = a + kk * sak;                    \
            for (int i = 0; i < (ROWS); i++) {                                      \
                const T av = acol[i * sam];                                         \
                for (int j = 0; j < (COLS); j++) acc[i][j] = O2C_FMA_f32(acc[i][j], av, brow[j]);\
            }                                                                       \
        }                                                                           \
        for (int i = 0; i < (ROWS); i++)                                            \
            for (int j = 0; j < (COLS); j++) {                                      \
                const int64_t y = y0 + i * N + j;                                   \
                T v = acc[i][j] * alpha;                                            \
                if (p->k[32]) v += beta * Cm[(m0 + i) * p->k[33] + (n0 + j) * p->k[34]];\
                Y[y] = epi ? EPI(v, y, n0 + j, p) : v;                              \
            }                                                                       \
    }
#define O2C_MATMUL_TILE(NAME, T, EPI)                                               \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const T *A = (const T *)p->x[0], *B = (const T *)p->x[1];                  \
        const T *Cm = (const T *)p->x[2];                                           \
        T *Y = (T *)p->y[0];                                                        \
        const int64_t M = p->k[0], N = p->k[1], K = p->k[2];                        \
        const int64_t sam = p->k[3], sak = p->k[4], sbk = p->k[5];                  \
        const int64_t r = p->k[7];                                                  \
        const T alpha = O2C_PF(T, p, 0), beta = O2C_PF(T, p, 1);                  \
        const int epi = p->k[O2C_EPI_ACT] || p->k[O2C_EPI_RES];                     \
        const int64_t TM = (M + O2C_MM_MR - 1) / O2C_MM_MR;                         \
        const int64_t TN = (N + O2C_MM_NR - 1) / O2C_MM_NR;                         \
        O2C_FOR(t) {                                                                \
            const int64_t tn = t % TN, tm = (t / TN) % TM, b = t / (TM * TN);       \
            /* the last column tile moves left to stay full (its first columns \
             * are computed twice, to the same values) */                         \
            const int64_t n0 = tn * O2C_MM_NR + O2C_MM_NR > N && N >= O2C_MM_NR ? N - O2C_MM_NR : tn * O2C_MM_NR; \
            const int64_t m0 = tm * O2C_MM_MR;                                      \
            const int64_t mr = M - m0 < O2C_MM_MR ? M - m0 : O2C_MM_MR;             \
            const int64_t nr = N - n0 < O2C_MM_NR ? N - n0 : O2C_MM_NR;             \
            const T *a = A + m0 * sam, *bb = B + n0;                                \
            if (r) {                                                                \
                a += o2c_offset(b, r, p->k + 8, p->k + 16);                         \
                bb += o2c_offset(b, r, p->k + 8, p->k + 24);                        \
            }                                                                       \
            const int64_t y0 = (b * M + m0) * N + n0;                               \
            if (mr == O2C_MM_MR && nr == O2C_MM_NR) O2C_MM_TILE_RUN(T, EPI, O2C_MM_MR, O2C_MM_NR) \
            else O2C_MM_TILE_RUN(T, EPI, mr, nr)                                    \
        }                                                                           \
    }

/*@ o2c_matmul_f32 needs o2c_offset o2c_epi_f32 */
O2C_MATMUL(o2c_matmul_f32, float, o2c_epi_f32)
/*@ o2c_matmul_f64 needs o2c_offset o2c_epi_f64 */
O2C_MATMUL(o2c_matmul_f64, double, o2c_epi_f64)
/*@ o2c_matmul_tile_f32 needs o2c_offset o2c_epi_f32 */
O2C_MATMUL_TILE(o2c_matmul_tile_f32, float, o2c_epi_f32)

/*@ o2c_poolgemm_f32 needs o2c_epi_f32 */
O2C_POOLGEMM(o2c_poolgemm_f32, float, o2c_epi_f32)
/*@ o2c_poolgemm_f64 needs o2c_epi_f64 */
O2C_POOLGEMM(o2c_poolgemm_f64, double, o2c_epi_f64)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_MATMUL(K) K(o2c_matmul_f32) K(o2c_matmul_f64) K(o2c_matmul_tile_f32) K(o2c_poolgemm_f32) K(o2c_poolgemm_f64)
