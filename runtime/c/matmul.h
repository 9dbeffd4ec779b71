/* Matrix products. Index space: the output elements.
 *
 * o2c_matmul_f32 / _f64: Y[b, m, n] = alpha * sum_k A[b, m, k] * B[b, k, n]
 *                                     + beta * C[b, m, n]  (C optional)
 *   O2C_MATMUL_* (runtime/c/params/matmul.h)
 * Gemm uses it with transposes expressed as strides.
 * Epilogue (fused ops, o2c_rt.h): the O2C_EPI_* slots, channel n (the column). */

/* the operands of o2c_matmul_* and o2c_matmul_tile_f32: A, B, C (Cm),
 * Y, the dims and A's strides */
#define O2C_MATMUL_OPERANDS(T) O2C_MATMUL_OPERANDS_WT(T, T)
#define O2C_MATMUL_OPERANDS_WT(T, WT)                                               \
    const T *A = (const T *)p->x[0];                                                \
    const WT *B = (const WT *)p->x[1];                                              \
    const T *Cm = (const T *)p->x[2];                                               \
    T *Y = (T *)p->y[0];                                                            \
    const o2c_int M = p->k[O2C_MATMUL_M], N = p->k[O2C_MATMUL_N], K = p->k[O2C_MATMUL_K]; \
    const o2c_int sam = p->k[O2C_MATMUL_SAM], sak = p->k[O2C_MATMUL_SAK]

/* O2C_MATMUL_WT: B of type WT read by LDW(pointer) (o2c_matmul_f32h:
 * --fp16 weights in half, read where they are) */
#define O2C_MATMUL(NAME, T, EPI) O2C_MATMUL_WT(NAME, T, T, O2C_LD, EPI)
#define O2C_MATMUL_WT(NAME, T, WT, LDW, EPI)                                           \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        O2C_MATMUL_OPERANDS_WT(T, WT);                                              \
        const o2c_int sbk = p->k[O2C_MATMUL_SBK], sbn = p->k[O2C_MATMUL_SBN];       \
        const o2c_int r = p->k[O2C_MATMUL_R];                                       \
        const T alpha = O2C_PF(T, p, O2C_MATMUL_F_ALPHA), beta = O2C_PF(T, p, O2C_MATMUL_F_BETA); \
        const int epi = p->k[O2C_EPI_ACT] || p->k[O2C_EPI_RES];                     \
        O2C_FOR(i) {                                                                \
            const o2c_int n = i % N, m = (i / N) % M, b = i / (M * N);              \
            const T *a = A + m * sam;                                               \
            const WT *bb = B + n * sbn;                                             \
            if (r) {                                                                \
                a += o2c_offset(b, r, p->k + O2C_MATMUL_BDIMS, p->k + O2C_MATMUL_ASTR); \
                bb += o2c_offset(b, r, p->k + O2C_MATMUL_BDIMS, p->k + O2C_MATMUL_BSTR); \
            }                                                                       \
            T acc = 0;                                                              \
            for (o2c_int kk = 0; kk < K; kk++) acc += a[kk * sak] * LDW(bb + kk * sbk); \
            acc *= alpha;                                                           \
            if (p->k[O2C_MATMUL_HASC]) acc += beta * Cm[m * p->k[O2C_MATMUL_SCM] + n * p->k[O2C_MATMUL_SCN]]; \
            Y[i] = epi ? EPI(acc, i, n, p) : acc;                                   \
        }                                                                           \
    }
/* o2c_matmul_rows_f32 (and _f32h, half B): the reference product by output
 * rows, what a core without a vector unit runs (--target cortex-m). Index
 * space: the batch x M rows. The row's batch offsets are found once per
 * row; four outputs of the row at a time share each A element (a register
 * tile). Each output sums in the reference's order: bit-identical. */
#define O2C_MATMUL_ROWS_WT(NAME, T, WT, LDW, EPI)                                      \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        O2C_MATMUL_OPERANDS_WT(T, WT);                                              \
        const o2c_int sbk = p->k[O2C_MATMUL_SBK], sbn = p->k[O2C_MATMUL_SBN];       \
        const o2c_int r = p->k[O2C_MATMUL_R], scm = p->k[O2C_MATMUL_SCM], scn = p->k[O2C_MATMUL_SCN]; \
        const T alpha = O2C_PF(T, p, O2C_MATMUL_F_ALPHA), beta = O2C_PF(T, p, O2C_MATMUL_F_BETA); \
        const int epi = p->k[O2C_EPI_ACT] || p->k[O2C_EPI_RES], hasc = p->k[O2C_MATMUL_HASC] != 0; \
        O2C_FOR(t) {                                                                \
            const o2c_int m = t % M, b = t / M;                                     \
            const T *a = A + m * sam;                                               \
            const WT *bb = B;                                                       \
            if (r) {                                                                \
                a += o2c_offset(b, r, p->k + O2C_MATMUL_BDIMS, p->k + O2C_MATMUL_ASTR); \
                bb += o2c_offset(b, r, p->k + O2C_MATMUL_BDIMS, p->k + O2C_MATMUL_BSTR); \
            }                                                                       \
            T *y = Y + t * N;                                                       \
            o2c_int n = 0;                                                          \
            for (; n + 4 <= N; n += 4) {                                            \
                const WT *b0 = bb + n * sbn;                                        \
                T a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                   \
                for (o2c_int kk = 0; kk < K; kk++) {                                \
                    const T av = a[kk * sak];                                       \
                    const WT *bk = b0 + kk * sbk;                                   \
                    a0 += av * LDW(bk);                                             \
                    a1 += av * LDW(bk + sbn);                                       \
                    a2 += av * LDW(bk + 2 * sbn);                                   \
                    a3 += av * LDW(bk + 3 * sbn);                                   \
                }                                                                   \
                T v[4];                                                             \
                v[0] = a0 * alpha, v[1] = a1 * alpha, v[2] = a2 * alpha, v[3] = a3 * alpha; \
                for (int j = 0; j < 4; j++) {                                       \
                    if (hasc) v[j] += beta * Cm[m * scm + (n + j) * scn];           \
                    y[n + j] = epi ? EPI(v[j], t * N + n + j, n + j, p) : v[j];     \
                }                                                                   \
            }                                                                       \
            for (; n < N; n++) {                                                    \
                const WT *bn = bb + n * sbn;                                        \
                T acc = 0;                                                          \
                for (o2c_int kk = 0; kk < K; kk++) acc += a[kk * sak] * LDW(bn + kk * sbk); \
                acc *= alpha;                                                       \
                if (hasc) acc += beta * Cm[m * scm + n * scn];                      \
                y[n] = epi ? EPI(acc, t * N + n, n, p) : acc;                       \
            }                                                                       \
        }                                                                           \
    }

/* o2c_poolgemm_f32 / _f64 (GlobalPoolGemm): a global average pool and a
 * matrix product in one. Index space: N x M outputs.
 *   O2C_POOLGEMM_*, O2C_MATMUL_F_ALPHA, _BETA; epilogue: the O2C_EPI_* slots (o2c_rt.h), channel m. */
#define O2C_POOLGEMM(NAME, T, EPI)                                                  \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const T *X = (const T *)p->x[0], *W = (const T *)p->x[1];                  \
        const T *Cb = (const T *)p->x[2];                                           \
        T *Y = (T *)p->y[0];                                                        \
        const o2c_int M = p->k[O2C_POOLGEMM_M], C = p->k[O2C_POOLGEMM_C], S = p->k[O2C_POOLGEMM_S]; \
        const o2c_int swm = p->k[O2C_POOLGEMM_SWM], swc = p->k[O2C_POOLGEMM_SWC];   \
        const T alpha = O2C_PF(T, p, O2C_MATMUL_F_ALPHA), beta = O2C_PF(T, p, O2C_MATMUL_F_BETA); \
        const int epi = p->k[O2C_EPI_ACT] || p->k[O2C_EPI_RES];                     \
        O2C_FOR(i) {                                                                \
            const o2c_int m = i % M, n = i / M;                                     \
            T acc = 0;                                                              \
            for (o2c_int c = 0; c < C; c++) {                                       \
                const T *xp = X + (n * C + c) * S;                                  \
                T sum = 0;                                                          \
                for (o2c_int s = 0; s < S; s++) sum += xp[s];                       \
                acc += sum / (T)S * W[m * swm + c * swc];                           \
            }                                                                       \
            acc *= alpha;                                                           \
            if (p->k[O2C_POOLGEMM_HASB]) acc += beta * Cb[m * p->k[O2C_POOLGEMM_SB]]; \
            Y[i] = epi ? EPI(acc, i, m, p) : acc;                                   \
        }                                                                           \
    }

/* o2c_matmul_tile_f32: the product of o2c_matmul_* (same parameters),
 * computed in register tiles of O2C_MM_MR x O2C_MM_NR outputs (multiply-adds
 * fused where the target has FMA): each step of
 * k loads one row of B's tile and broadcasts MR values of A, so the inner
 * loop is a fixed-length, contiguous multiply-add the C compiler vectorizes.
 * Index space: the tiles, batch x ceil(M/MR) x ceil(N/NR). Needs B
 * contiguous along n (O2C_MATMUL_SBN == 1). Every output sums over k in the order the
 * reference does. The lowering picks it for the C target. Constant weights
 * shared by every batch come packed (O2C_MATMUL_BPACKED): the K x NR block
 * of each column tile contiguous, Bp[(tn * K + k) * NR + j] = B[k, n0 + j]
 * with n0 the tile's first column as below, so a tile streams its block
 * instead of reading K rows N apart (ppocrv4's 120 x 6625 weights: one
 * 4 KB page a k). The last row and column tiles move up and left to stay
 * full where M and N allow (rows and columns computed twice, stored once:
 * by the tile they belong to). */
#define O2C_MM_MR 8
#define O2C_MM_NR 32
/* One tile: ROWS x COLS outputs from (m0, n0). With constant ROWS and COLS
 * (a full tile) the accumulators stay in registers. */
#define O2C_MM_TILE_RUN(T, EPI, ROWS, COLS, FULL)                                   \
    {                                                                               \
        T acc[O2C_MM_MR][O2C_MM_NR];                                                \
        for (int i = 0; i < (FULL ? O2C_MM_MR : (ROWS)); i++)                       \
            for (int j = 0; j < O2C_MM_NR; j++) acc[i][j] = 0;                      \
        if (FULL) { O2C_TILE_PRODUCT(acc, O2C_MM_MR, O2C_MM_NR, K, a, sak, sam, bb, sbk) } \
        else                                                                        \
            for (o2c_int kk = 0; kk < K; kk++) {                                    \
                const T *brow = bb + kk * sbk, *acol = a + kk * sak;                \
                for (int i = 0; i < (ROWS); i++) {                                  \
                    const T av = acol[i * sam];                                     \
                    for (int j = 0; j < (COLS); j++) acc[i][j] = O2C_FMA_f32(acc[i][j], av, brow[j]);\
                }                                                                   \
            }                                                                       \
        for (int i = (int)sm; i < (ROWS); i++) {                                    \
            for (int j = (int)sn; j < (COLS); j++) {                                \
                const o2c_int y = y0 + i * N + j;                                   \
                T v = acc[i][j] * alpha;                                            \
                if (p->k[O2C_MATMUL_HASC]) v += beta * Cm[(m0 + i) * p->k[O2C_MATMUL_SCM] + (n0 + j) * p->k[O2C_MATMUL_SCN]]; \
                Y[y] = epi && rowwise ? v : epi ? EPI(v, y, n0 + j, p) : v;         \
            }                                                                       \
            if (epi && rowwise) EPI##_row(Y + y0 + i * N + sn, (COLS) - sn, y0 + i * N + sn, 0, p); \
        }                                                                           \
    }
#define O2C_MATMUL_TILE(NAME, T, EPI)                                               \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        O2C_MATMUL_OPERANDS(T);                                                     \
        const int packed = p->k[O2C_MATMUL_BPACKED] != 0;                           \
        const o2c_int sbk = packed ? O2C_MM_NR : p->k[O2C_MATMUL_SBK];              \
        const o2c_int r = p->k[O2C_MATMUL_R];                                       \
        const T alpha = O2C_PF(T, p, O2C_MATMUL_F_ALPHA), beta = O2C_PF(T, p, O2C_MATMUL_F_BETA); \
        const int epi = p->k[O2C_EPI_ACT] || p->k[O2C_EPI_RES];                     \
        /* the epilogue a row at a time (EPI##_row, vectorized) but for a   \
         * PRelu slope per column (its channel), element by element */      \
        const int rowwise = p->k[O2C_EPI_ACT] != O2C_ACT_PRELU || p->k[O2C_EPI_NSLOPE] == 1; \
        const o2c_int TM = (M + O2C_MM_MR - 1) / O2C_MM_MR;                         \
        const o2c_int TN = (N + O2C_MM_NR - 1) / O2C_MM_NR;                         \
        O2C_FOR(t) {                                                                \
            /* tile order: the column tiles in cache blocks of NCB (a K x    \
             * NCB*NR block of B stays in cache while every row tile sweeps \
             * it); within a block, row tiles outer. NCB 0 is one block of  \
             * all (row tiles outer: a row tile of A stays in cache while it \
             * sweeps B); NCB 1 reads a B too large for the cache once. */   \
            const o2c_int ncb = p->k[O2C_MATMUL_NCB] > 0 && p->k[O2C_MATMUL_NCB] < TN ? p->k[O2C_MATMUL_NCB] : TN; \
            const o2c_int b = t / (TM * TN), u = t % (TM * TN), blk = u / (TM * ncb), w = u % (TM * ncb); \
            const o2c_int nb = TN - blk * ncb < ncb ? TN - blk * ncb : ncb;       \
            const o2c_int tm = w / nb, tn = blk * ncb + w % nb;                   \
            /* the last column tile moves left to stay full (its first columns \
             * are computed twice, stored once) */                                \
            const o2c_int n0 = tn * O2C_MM_NR + O2C_MM_NR > N && N >= O2C_MM_NR ? N - O2C_MM_NR : tn * O2C_MM_NR; \
            /* so does the last row tile move up (a partial tile's rows are  \
             * a runtime count: its accumulators leave the registers, 10x   \
             * slower than the full tiles: 25 x 1024 x 8210 took 23 ms, 24 \
             * rows 2.3) */                                                  \
            const o2c_int m0 = tm * O2C_MM_MR + O2C_MM_MR > M && M >= O2C_MM_MR ? M - O2C_MM_MR : tm * O2C_MM_MR; \
            /* the rows and columns a moved tile shares with its neighbour are \
             * the neighbour's to store (no two tiles write one element) */   \
            const o2c_int sm = tm * O2C_MM_MR - m0, sn = tn * O2C_MM_NR - n0;     \
            const o2c_int mr = M - m0 < O2C_MM_MR ? M - m0 : O2C_MM_MR;             \
            const o2c_int nr = N - n0 < O2C_MM_NR ? N - n0 : O2C_MM_NR;             \
            const T *a = A + m0 * sam, *bb = packed ? B + tn * K * O2C_MM_NR : B + n0; \
            if (r) {                                                                \
                a += o2c_offset(b, r, p->k + O2C_MATMUL_BDIMS, p->k + O2C_MATMUL_ASTR); \
                bb += o2c_offset(b, r, p->k + O2C_MATMUL_BDIMS, p->k + O2C_MATMUL_BSTR); \
            }                                                                       \
            const o2c_int y0 = (b * M + m0) * N + n0;                               \
            if (mr == O2C_MM_MR && nr == O2C_MM_NR) O2C_MM_TILE_RUN(T, EPI, O2C_MM_MR, O2C_MM_NR, 1) \
            else O2C_MM_TILE_RUN(T, EPI, mr, nr, 0)                                 \
        }                                                                           \
    }

/*@ o2c_matmul_f32 needs o2c_offset o2c_epi_f32 params O2C_MATMUL O2C_EPI split */
O2C_MATMUL(o2c_matmul_f32, float, o2c_epi_f32)
/*@ o2c_matmul_f32h needs o2c_offset o2c_epi_f32 o2c_ldh params O2C_MATMUL O2C_EPI split */
O2C_MATMUL_WT(o2c_matmul_f32h, float, uint16_t, o2c_ldh, o2c_epi_f32)
/*@ o2c_matmul_rows_f32 needs o2c_offset o2c_epi_f32 params O2C_MATMUL O2C_EPI split */
O2C_MATMUL_ROWS_WT(o2c_matmul_rows_f32, float, float, O2C_LD, o2c_epi_f32)
/*@ o2c_matmul_rows_f32h needs o2c_offset o2c_epi_f32 o2c_ldh params O2C_MATMUL O2C_EPI split */
O2C_MATMUL_ROWS_WT(o2c_matmul_rows_f32h, float, uint16_t, o2c_ldh, o2c_epi_f32)
/*@ o2c_matmul_f64 needs o2c_offset o2c_epi_f64 params O2C_MATMUL O2C_EPI split */
O2C_MATMUL(o2c_matmul_f64, double, o2c_epi_f64)
/*@ o2c_matmul_tile_f32 needs o2c_tile_product o2c_offset o2c_epi_f32 params O2C_MATMUL O2C_EPI split */
O2C_MATMUL_TILE(o2c_matmul_tile_f32, float, o2c_epi_f32)

/*@ o2c_poolgemm_f32 needs o2c_epi_f32 params O2C_MATMUL_NF O2C_POOLGEMM O2C_EPI split */
O2C_POOLGEMM(o2c_poolgemm_f32, float, o2c_epi_f32)
/*@ o2c_poolgemm_f64 needs o2c_epi_f64 params O2C_MATMUL_NF O2C_POOLGEMM O2C_EPI split */
O2C_POOLGEMM(o2c_poolgemm_f64, double, o2c_epi_f64)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_MATMUL(K, F) K(o2c_matmul_f32, F) K(o2c_matmul_f32h, F) K(o2c_matmul_rows_f32, F) K(o2c_matmul_rows_f32h, F) K(o2c_matmul_f64, F) K(o2c_matmul_tile_f32, F) K(o2c_poolgemm_f32, F) K(o2c_poolgemm_f64, F)
