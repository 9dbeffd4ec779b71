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
        const o2c_int r = p->k[O2C_IPOW_RANK];                              \
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
        const o2c_int rank = p->k[O2C_CUMPROD_RANK];                        \
        o2c_int ax = p->k[O2C_CUMPROD_AXSIZE] == 4 ? (o2c_int) * (const int32_t *)p->x[1] \
                                   : *(const int64_t *)p->x[1];             \
        if (ax < 0) ax += rank;                                             \
        o2c_int n = 1, inner = 1, incl = p->k[O2C_CUMPROD_EXCLUSIVE] ? 0 : 1; \
        if (ax >= 0 && ax < rank) {                                         \
            n = p->k[O2C_CUMPROD_DIMS + ax];                                \
            for (o2c_int d = ax + 1; d < rank; d++) inner *= p->k[O2C_CUMPROD_DIMS + d]; \
        } else {                                                            \
            incl = 1;                                                       \
        }                                                                   \
        O2C_FOR(i) {                                                        \
            const o2c_int j = (i / inner) % n, base = i - j * inner;        \
            T s = 1;                                                        \
            if (!p->k[O2C_CUMPROD_REVERSE]) {                               \
                for (o2c_int t = 0; t < j + incl; t++) s *= X[base + t * inner]; \
            } else {                                                        \
                for (o2c_int t = n - 1; t > j - incl; t--) s *= X[base + t * inner]; \
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
        const o2c_int G = p->k[O2C_GROUPNORM_G], cpg = p->k[O2C_GROUPNORM_CPG]; \
        const o2c_int S = p->k[O2C_GROUPNORM_S], pg = p->k[O2C_GROUPNORM_PERGROUP]; \
        const o2c_int m = cpg * S;                                          \
        const T eps = O2C_PF(TY, p, O2C_GROUPNORM_F_EPS);                   \
        O2C_FOR(i) {                                                        \
            const T *x = X + i * m;                                         \
            T *y = Y + i * m;                                               \
            const o2c_int g = i % G;                                        \
            T mean = 0, var = 0;                                            \
            for (o2c_int j = 0; j < m; j++) mean += x[j];                   \
            mean /= (T)m;                                                   \
            for (o2c_int j = 0; j < m; j++) var += (x[j] - mean) * (x[j] - mean); \
            const T inv = 1 / O2C_M(TY, sqrt)(var / (T)m + eps);            \
            for (o2c_int c = 0; c < cpg; c++) {                             \
                const o2c_int ch = pg ? g : g * cpg + c;                    \
                const T a = inv * SC[ch], b = BI[ch];                       \
                for (o2c_int s = 0; s < S; s++)                             \
                    y[c * S + s] = (x[c * S + s] - mean) * a + b;           \
            }                                                               \
        }                                                                   \
    }

/* Unique at run time (o2c_unique_T): X seen as (OUTER, M, INNER), M slices
 * compared element by element in row-major order (NaN equal to NaN and
 * above every number, as numpy sorts). y[0] the table: first[M] (slice of
 * each unique's first occurrence), inverse[M], counts[M], then 3 M of
 * scratch; in order of first occurrence, or ascending when SORTED; y[1] the
 * count of uniques. Index space: 1. O(M^2) slice comparisons.
 *   O2C_UNIQUE_* */
#define O2C_UNIQUE_DEF(NAME, TY, ISNAN)                                             \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const TY *X = (const TY *)p->x[0];                                          \
        int64_t *TB = (int64_t *)p->y[0], *CNT = (int64_t *)p->y[1];                \
        const o2c_int M = p->k[O2C_UNIQUE_M], outer = p->k[O2C_UNIQUE_OUTER];       \
        const o2c_int inner = p->k[O2C_UNIQUE_INNER], sorted = p->k[O2C_UNIQUE_SORTED]; \
        int64_t *first = TB, *inv = TB + M, *cnt = TB + 2 * M, *perm = TB + 3 * M;   \
        int64_t *rank = TB + 4 * M, *tmp = TB + 5 * M;                              \
        O2C_FOR(i0_) {                                                              \
            o2c_int u = 0;                                                          \
            (void)i0_;                                                              \
            for (o2c_int s = 0; s < M; s++) {                                       \
                o2c_int g = 0;                                                      \
                for (; g < u; g++) {                                                \
                    int c = 0;                                                      \
                    for (o2c_int o = 0; o < outer && !c; o++)                       \
                        for (o2c_int e = 0; e < inner && !c; e++) {                 \
                            const TY a = X[(o * M + s) * inner + e], b = X[(o * M + first[g]) * inner + e]; \
                            c = ISNAN(a) ? !ISNAN(b) : ISNAN(b) ? 1 : a != b;       \
                        }                                                           \
                    if (!c) break;                                                  \
                }                                                                   \
                if (g == u) {                                                       \
                    first[u] = s;                                                   \
                    cnt[u] = 0;                                                     \
                    u++;                                                            \
                }                                                                   \
                cnt[g]++;                                                           \
                inv[s] = g;                                                         \
            }                                                                       \
            if (sorted) {   /* insertion sort of the groups by their slices */      \
                for (o2c_int g = 0; g < u; g++) {                                   \
                    o2c_int k = g;                                                  \
                    for (; k > 0; k--) {                                            \
                        int c = 0;                                                  \
                        const o2c_int sa = first[g], sb = first[perm[k - 1]];       \
                        for (o2c_int o = 0; o < outer && !c; o++)                   \
                            for (o2c_int e = 0; e < inner && !c; e++) {             \
                                const TY a = X[(o * M + sa) * inner + e], b = X[(o * M + sb) * inner + e]; \
                                c = ISNAN(a) ? (ISNAN(b) ? 0 : 1) : ISNAN(b) ? -1 : a < b ? -1 : a > b ? 1 : 0; \
                            }                                                       \
                        if (c >= 0) break;                                          \
                        perm[k] = perm[k - 1];                                      \
                    }                                                               \
                    perm[k] = g;                                                    \
                }                                                                   \
                for (o2c_int k = 0; k < u; k++) rank[perm[k]] = k;                  \
                for (o2c_int k = 0; k < u; k++) tmp[k] = first[perm[k]];            \
                for (o2c_int k = 0; k < u; k++) first[k] = tmp[k];                  \
                for (o2c_int k = 0; k < u; k++) tmp[k] = cnt[perm[k]];              \
                for (o2c_int k = 0; k < u; k++) cnt[k] = tmp[k];                    \
                for (o2c_int s = 0; s < M; s++) inv[s] = rank[inv[s]];              \
            }                                                                       \
            *CNT = u;                                                               \
        }                                                                           \
    }
#define O2C_UQ_ISNAN_F(a) ((a) != (a))
#define O2C_UQ_ISNAN_I(a) 0

/* NonMaxSuppression at run time (o2c_nms_T): per batch and class, the boxes
 * above the score threshold by descending score (ties: the lower index
 * first), each kept unless its IoU with a kept one exceeds the threshold,
 * at most max_output_boxes_per_class; the rows (batch, class, box) into the
 * table y[0] (ROWS x 3, then 2 N of scratch), their count into y[1].
 *   x[0] boxes [B, N, 4], x[1] scores [B, C, N], x[2] max per class (int64
 *   scalar; NULL: O2C_NMS_MAXK), x[3] iou threshold, x[4] score threshold
 *   (T scalars; NULL: the F slot (ff for float: FS), no score threshold). Index space: 1.
 *   O2C_NMS_* */
#define O2C_NMS_DEF(NAME, TY, FS)                                                     \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const TY *BX = (const TY *)p->x[0], *SC = (const TY *)p->x[1];              \
        int64_t *TB = (int64_t *)p->y[0], *CNT = (int64_t *)p->y[1];                \
        const o2c_int B = p->k[O2C_NMS_B], N = p->k[O2C_NMS_N], C = p->k[O2C_NMS_C]; \
        const o2c_int center = p->k[O2C_NMS_CENTER], rows = p->k[O2C_NMS_ROWS];     \
        const int64_t maxk = p->x[2] ? *(const int64_t *)p->x[2] : p->k[O2C_NMS_MAXK]; \
        const TY iou = p->x[3] ? *(const TY *)p->x[3] : (TY)p->FS[O2C_NMS_F_IOU];    \
        const int has_sthr = p->x[4] != 0;                                          \
        const TY sthr = has_sthr ? *(const TY *)p->x[4] : (TY)0;                    \
        int64_t *cand = TB + rows * 3, *kept = cand + N;                            \
        O2C_FOR(i0_) {                                                              \
            o2c_int total = 0;                                                      \
            (void)i0_;                                                              \
            for (o2c_int b = 0; b < B; b++)                                         \
                for (o2c_int c = 0; c < C; c++) {                                   \
                    const TY *sc = SC + (b * C + c) * N, *bx = BX + b * N * 4;      \
                    o2c_int nc = 0, nk = 0;                                         \
                    for (o2c_int j = 0; j < N; j++) {   /* insertion by score */    \
                        o2c_int k;                                                  \
                        if (has_sthr && !(sc[j] > sthr)) continue;                  \
                        for (k = nc; k > 0 && sc[cand[k - 1]] < sc[j]; k--) cand[k] = cand[k - 1]; \
                        cand[k] = j;                                                \
                        nc++;                                                       \
                    }                                                               \
                    for (o2c_int j = 0; j < nc && nk < maxk && total < rows; j++) { \
                        const TY *b1 = bx + cand[j] * 4;                            \
                        int keep = 1;                                               \
                        for (o2c_int k = 0; k < nk && keep; k++) {                  \
                            const TY *b2 = bx + kept[k] * 4;                        \
                            TY x1lo, x1hi, y1lo, y1hi, x2lo, x2hi, y2lo, y2hi;      \
                            if (center) {                                           \
                                x1lo = b1[0] - b1[2] / 2; x1hi = b1[0] + b1[2] / 2;  \
                                y1lo = b1[1] - b1[3] / 2; y1hi = b1[1] + b1[3] / 2;  \
                                x2lo = b2[0] - b2[2] / 2; x2hi = b2[0] + b2[2] / 2;  \
                                y2lo = b2[1] - b2[3] / 2; y2hi = b2[1] + b2[3] / 2;  \
                            } else {   /* [y1, x1, y2, x2], either corner first */  \
                                x1lo = b1[1] < b1[3] ? b1[1] : b1[3]; x1hi = b1[1] < b1[3] ? b1[3] : b1[1]; \
                                y1lo = b1[0] < b1[2] ? b1[0] : b1[2]; y1hi = b1[0] < b1[2] ? b1[2] : b1[0]; \
                                x2lo = b2[1] < b2[3] ? b2[1] : b2[3]; x2hi = b2[1] < b2[3] ? b2[3] : b2[1]; \
                                y2lo = b2[0] < b2[2] ? b2[0] : b2[2]; y2hi = b2[0] < b2[2] ? b2[2] : b2[0]; \
                            }                                                       \
                            {                                                       \
                                const TY ixlo = x1lo > x2lo ? x1lo : x2lo, ixhi = x1hi < x2hi ? x1hi : x2hi; \
                                const TY iylo = y1lo > y2lo ? y1lo : y2lo, iyhi = y1hi < y2hi ? y1hi : y2hi; \
                                if (ixhi > ixlo && iyhi > iylo) {                   \
                                    const TY inter = (ixhi - ixlo) * (iyhi - iylo); \
                                    const TY a1 = (x1hi - x1lo) * (y1hi - y1lo), a2 = (x2hi - x2lo) * (y2hi - y2lo); \
                                    const TY uni = a1 + a2 - inter;                 \
                                    if (inter > 0 && a1 > 0 && a2 > 0 && uni > 0 && inter / uni > iou) keep = 0; \
                                }                                                   \
                            }                                                       \
                        }                                                           \
                        if (!keep) continue;                                        \
                        kept[nk++] = cand[j];                                       \
                        TB[total * 3] = b;                                          \
                        TB[total * 3 + 1] = c;                                      \
                        TB[total * 3 + 2] = cand[j];                                \
                        total++;                                                    \
                    }                                                               \
                }                                                                   \
            *CNT = total;                                                           \
        }                                                                           \
    }

/*@ o2c_revseq params O2C_REVSEQ */
/* ReverseSequence: in each batch entry b the first lens[b] steps of the
 * time axis are reversed, the others copied; any element type.
 *   x[0] X seen as (D0, D1, INNER), x[1] the lengths (int64, one per batch
 *   entry; clamped to [0, time steps])   O2C_REVSEQ_* */
O2C_KERNEL(o2c_revseq)
{
    const uint8_t *X = (const uint8_t *)p->x[0];
    const int64_t *LEN = (const int64_t *)p->x[1];
    uint8_t *Y = (uint8_t *)p->y[0];
    const o2c_int d1 = p->k[O2C_REVSEQ_D1], inner = p->k[O2C_REVSEQ_INNER];
    const o2c_int bax = p->k[O2C_REVSEQ_BATCH_AXIS], es = p->k[O2C_REVSEQ_ESIZE];
    const o2c_int nt = bax ? p->k[O2C_REVSEQ_D0] : d1;
    O2C_FOR(i) {
        const o2c_int in = i % inner, i1 = (i / inner) % d1, i0 = i / (inner * d1);
        const o2c_int b = bax ? i1 : i0, t = bax ? i0 : i1;
        o2c_int len = LEN[b];
        if (len > nt) len = nt;
        const o2c_int st = t < len ? len - 1 - t : t;
        const o2c_int src = ((bax ? st * d1 + b : b * d1 + st) * inner + in) * es;
        memcpy(Y + i * es, X + src, (size_t)es);
    }
}

/*@ o2c_compress params O2C_COMPRESS */
/* Compress with a constant condition: the kept indices along the axis.
 *   x[0] X seen as (OUTER, AXN, INNER), x[1] the K kept indices (int64)
 *   O2C_COMPRESS_* */
O2C_KERNEL(o2c_compress)
{
    const uint8_t *X = (const uint8_t *)p->x[0];
    const int64_t *IDX = (const int64_t *)p->x[1];
    uint8_t *Y = (uint8_t *)p->y[0];
    const o2c_int axn = p->k[O2C_COMPRESS_AXN], k = p->k[O2C_COMPRESS_K];
    const o2c_int inner = p->k[O2C_COMPRESS_INNER], es = p->k[O2C_COMPRESS_ESIZE];
    O2C_FOR(i) {
        const o2c_int in = i % inner, j = (i / inner) % k, o = i / (inner * k);
        memcpy(Y + i * es, X + ((o * axn + IDX[j]) * inner + in) * es, (size_t)es);
    }
}

/*@ o2c_nonzero_at */
/* ---- sizes known only at run time (ir.h dyn_count) ----
 * The op's output is a graph output whose buffer holds the upper bound; the
 * kernel writes the run's elements densely from its start and the run's
 * size along the dynamic axis into y[1] (an int64 scalar). Index space: 1
 * (one pass in element order). */

/* element e of ESIZE bytes is nonzero: any bit set (a float: apart from the
 * sign, so -0.0 counts as zero and NaN as nonzero) */
O2C_HD static inline int o2c_nonzero_at(const uint8_t *X, o2c_int e, o2c_int es, o2c_int fl)
{
    switch (es) {
    case 2: { uint16_t v; memcpy(&v, X + e * 2, 2); return fl ? (uint16_t)(v << 1) != 0 : v != 0; }
    case 4: { uint32_t v; memcpy(&v, X + e * 4, 4); return fl ? (uint32_t)(v << 1) != 0 : v != 0; }
    case 8: { uint64_t v; memcpy(&v, X + e * 8, 8); return fl ? (uint64_t)(v << 1) != 0 : v != 0; }
    default: return X[e] != 0;
    }
}

/*@ o2c_nonzero_dyn needs o2c_nonzero_at params O2C_NONZERO */
/* NonZero: the indices of the nonzero elements, [RANK, n] int64 (written
 * densely: row d holds n entries), n into y[1].
 *   x[0] X (N elements)   O2C_NONZERO_* */
O2C_KERNEL(o2c_nonzero_dyn)
{
    const uint8_t *X = (const uint8_t *)p->x[0];
    int64_t *Y = (int64_t *)p->y[0], *CNT = (int64_t *)p->y[1];
    const o2c_int n = p->k[O2C_NONZERO_N], es = p->k[O2C_NONZERO_ESIZE], fl = p->k[O2C_NONZERO_FLOAT];
    const o2c_int r = p->k[O2C_NONZERO_RANK];
    O2C_FOR(i) {
        o2c_int cnt = 0, j = 0;
        (void)i;
        for (o2c_int e = 0; e < n; e++) cnt += o2c_nonzero_at(X, e, es, fl);
        for (o2c_int e = 0; e < n; e++) {
            if (!o2c_nonzero_at(X, e, es, fl)) continue;
            for (o2c_int d = r - 1, rest = e; d >= 0; d--) {
                const o2c_int dim = p->k[O2C_NONZERO_DIMS + d];
                Y[d * cnt + j] = rest % dim;
                rest /= dim;
            }
            j++;
        }
        *CNT = cnt;
    }
}

/*@ o2c_compress_dyn params O2C_COMPRESS */
/* Compress with a condition known at run time: X seen as (OUTER, AXN,
 * INNER); the slices j < CLEN whose condition byte is nonzero, in order,
 * densely as (OUTER, n, INNER); n into y[1].
 *   x[0] X, x[1] the condition (bool, CLEN <= AXN entries)   O2C_COMPRESS_* */
O2C_KERNEL(o2c_compress_dyn)
{
    const uint8_t *X = (const uint8_t *)p->x[0], *C = (const uint8_t *)p->x[1];
    uint8_t *Y = (uint8_t *)p->y[0];
    int64_t *CNT = (int64_t *)p->y[1];
    const o2c_int axn = p->k[O2C_COMPRESS_AXN], clen = p->k[O2C_COMPRESS_K];
    const o2c_int inner = p->k[O2C_COMPRESS_INNER], es = p->k[O2C_COMPRESS_ESIZE], outer = p->k[O2C_COMPRESS_OUTER];
    O2C_FOR(i) {
        o2c_int cnt = 0;
        (void)i;
        for (o2c_int j = 0; j < clen; j++) cnt += C[j] != 0;
        for (o2c_int o = 0; o < outer; o++)
            for (o2c_int j = 0, jj = 0; j < clen; j++)
                if (C[j]) {
                    memcpy(Y + (o * cnt + jj) * inner * es, X + (o * axn + j) * inner * es, (size_t)(inner * es));
                    jj++;
                }
        *CNT = cnt;
    }
}

/*@ o2c_dyn_size params O2C_DYNSIZE */
/* A size read at run time (TopK's K): y[1] = x[0]'s int64 value; y[0] (bool)
 * = it lies outside [0, MAX] (the run then stops with NAME_ERR_CHECK).
 *   O2C_DYNSIZE_* */
O2C_KERNEL(o2c_dyn_size)
{
    const int64_t v = *(const int64_t *)p->x[0];
    O2C_FOR(i) {
        (void)i;
        *(uint8_t *)p->y[0] = v < 0 || v > p->k[O2C_DYNSIZE_MAX];
        *(int64_t *)p->y[1] = v;
    }
}

/*@ o2c_dyn_copy params O2C_DYNCOPY */
/* The first n units of UNIT bytes of x[0] (from byte SRC_OFF) into y[0]; n
 * is x[1]'s int64 value (NULL: O2C_DYNCOPY_N). Index space: 1.
 *   O2C_DYNCOPY_* */
O2C_KERNEL(o2c_dyn_copy)
{
    const int64_t n = p->x[1] ? *(const int64_t *)p->x[1] : p->k[O2C_DYNCOPY_N];
    O2C_FOR(i) {
        (void)i;
        memcpy(p->y[0], (const uint8_t *)p->x[0] + p->k[O2C_DYNCOPY_SRC_OFF], (size_t)(n * p->k[O2C_DYNCOPY_UNIT]));
    }
}

/*@ o2c_unique_take params O2C_UNIQUE */
/* Unique's slices: X seen as (OUTER, M, INNER) of ESIZE bytes; the n slices
 * first[0..n) (x[1], the o2c_unique_T table) densely as (OUTER, n, INNER);
 * n is x[2]'s value. Index space: 1.   O2C_UNIQUE_* */
O2C_KERNEL(o2c_unique_take)
{
    const uint8_t *X = (const uint8_t *)p->x[0];
    const int64_t *first = (const int64_t *)p->x[1], n = *(const int64_t *)p->x[2];
    uint8_t *Y = (uint8_t *)p->y[0];
    const o2c_int M = p->k[O2C_UNIQUE_M], outer = p->k[O2C_UNIQUE_OUTER], inner = p->k[O2C_UNIQUE_INNER];
    const o2c_int es = p->k[O2C_UNIQUE_ESIZE];
    O2C_FOR(i) {
        (void)i;
        for (o2c_int o = 0; o < outer; o++)
            for (o2c_int k = 0; k < n; k++)
                memcpy(Y + (o * n + k) * inner * es, X + (o * M + first[k]) * inner * es, (size_t)(inner * es));
    }
}

/*@ o2c_unique_f32 params O2C_UNIQUE */
O2C_UNIQUE_DEF(o2c_unique_f32, float, O2C_UQ_ISNAN_F)
/*@ o2c_unique_f64 params O2C_UNIQUE */
O2C_UNIQUE_DEF(o2c_unique_f64, double, O2C_UQ_ISNAN_F)
/*@ o2c_unique_i8 params O2C_UNIQUE */
O2C_UNIQUE_DEF(o2c_unique_i8, int8_t, O2C_UQ_ISNAN_I)
/*@ o2c_unique_i16 params O2C_UNIQUE */
O2C_UNIQUE_DEF(o2c_unique_i16, int16_t, O2C_UQ_ISNAN_I)
/*@ o2c_unique_i32 params O2C_UNIQUE */
O2C_UNIQUE_DEF(o2c_unique_i32, int32_t, O2C_UQ_ISNAN_I)
/*@ o2c_unique_i64 params O2C_UNIQUE */
O2C_UNIQUE_DEF(o2c_unique_i64, int64_t, O2C_UQ_ISNAN_I)
/*@ o2c_unique_u8 params O2C_UNIQUE */
O2C_UNIQUE_DEF(o2c_unique_u8, uint8_t, O2C_UQ_ISNAN_I)
/*@ o2c_unique_u16 params O2C_UNIQUE */
O2C_UNIQUE_DEF(o2c_unique_u16, uint16_t, O2C_UQ_ISNAN_I)
/*@ o2c_unique_u32 params O2C_UNIQUE */
O2C_UNIQUE_DEF(o2c_unique_u32, uint32_t, O2C_UQ_ISNAN_I)
/*@ o2c_unique_u64 params O2C_UNIQUE */
O2C_UNIQUE_DEF(o2c_unique_u64, uint64_t, O2C_UQ_ISNAN_I)
/*@ o2c_nms_f32 params O2C_NMS */
O2C_NMS_DEF(o2c_nms_f32, float, ff)
/*@ o2c_nms_f64 params O2C_NMS */
O2C_NMS_DEF(o2c_nms_f64, double, f)

/*@ o2c_tfidf params O2C_TFIDF */
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
    const o2c_int C = p->k[O2C_TFIDF_C], xs = p->k[O2C_TFIDF_XSIZE], nc = p->k[O2C_TFIDF_NCOLS];
    const o2c_int minn = p->k[O2C_TFIDF_MINN], maxn = p->k[O2C_TFIDF_MAXN];
    const o2c_int maxskip = p->k[O2C_TFIDF_MAXSKIP], mode = p->k[O2C_TFIDF_MODE], tl = p->k[O2C_TFIDF_TLEN];
    O2C_FOR(r) {
        float *y = Y + r * nc;
        for (o2c_int c = 0; c < nc; c++) y[c] = 0;
        for (o2c_int e = 0; e < tl; e += 2 + TB[e]) {
            const o2c_int n = TB[e];
            if (n < minn || n > maxn || TB[e + 1] < 0) continue;
            for (o2c_int sd = 1; sd <= (n == 1 ? 1 : maxskip + 1); sd++)
                for (o2c_int s = 0; s + (n - 1) * sd < C; s++) {
                    o2c_int q = 0;
                    for (; q < n; q++) {
                        const o2c_int at = r * C + s + q * sd;
                        const int64_t v = xs == 4 ? (int64_t)((const int32_t *)p->x[0])[at]
                                                  : ((const int64_t *)p->x[0])[at];
                        if (v != TB[e + 2 + q]) break;
                    }
                    if (q == n) y[TB[e + 1]] += 1;
                }
        }
        for (o2c_int c = 0; c < nc; c++) {
            if (mode == O2C_TFIDF_MODE_IDF) y[c] = y[c] > 0 ? (W ? W[c] : 1) : 0;
            else if (mode == O2C_TFIDF_MODE_TFIDF && W) y[c] *= W[c];
        }
    }
}

/*@ o2c_ipow_i32 needs o2c_offset params O2C_IPOW */
O2C_IPOW_DEF(o2c_ipow_i32, int32_t, uint32_t)
/*@ o2c_ipow_i64 needs o2c_offset params O2C_IPOW */
O2C_IPOW_DEF(o2c_ipow_i64, int64_t, uint64_t)

/*@ o2c_swiglu_f32 params O2C_SWIGLU */
O2C_SWIGLU_DEF(o2c_swiglu_f32, float)
/*@ o2c_swiglu_f64 params O2C_SWIGLU */
O2C_SWIGLU_DEF(o2c_swiglu_f64, double)

/*@ o2c_cumprod_f32 params O2C_CUMPROD */
O2C_CUMPROD_DEF(o2c_cumprod_f32, float)
/*@ o2c_cumprod_f64 params O2C_CUMPROD */
O2C_CUMPROD_DEF(o2c_cumprod_f64, double)
/*@ o2c_cumprod_i32 params O2C_CUMPROD */
O2C_CUMPROD_DEF(o2c_cumprod_i32, int32_t)
/*@ o2c_cumprod_i64 params O2C_CUMPROD */
O2C_CUMPROD_DEF(o2c_cumprod_i64, int64_t)
/*@ o2c_cumprod_u32 params O2C_CUMPROD */
O2C_CUMPROD_DEF(o2c_cumprod_u32, uint32_t)
/*@ o2c_cumprod_u64 params O2C_CUMPROD */
O2C_CUMPROD_DEF(o2c_cumprod_u64, uint64_t)

/*@ o2c_groupnorm_f32 params O2C_GROUPNORM */
O2C_GROUPNORM_DEF(o2c_groupnorm_f32, float)
/*@ o2c_groupnorm_f64 params O2C_GROUPNORM */
O2C_GROUPNORM_DEF(o2c_groupnorm_f64, double)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_EXTRA(K, F) K(o2c_revseq, F) K(o2c_compress, F) K(o2c_tfidf, F) K(o2c_nonzero_dyn, F) K(o2c_compress_dyn, F) K(o2c_dyn_size, F) \
    K(o2c_dyn_copy, F) K(o2c_unique_take, F) K(o2c_unique_f32, F) K(o2c_unique_f64, F) K(o2c_unique_i8, F) K(o2c_unique_i16, F) \
    K(o2c_unique_i32, F) K(o2c_unique_i64, F) K(o2c_unique_u8, F) K(o2c_unique_u16, F) K(o2c_unique_u32, F) K(o2c_unique_u64, F) \
    K(o2c_nms_f32, F) K(o2c_nms_f64, F) \
    K(o2c_ipow_i32, F) K(o2c_ipow_i64, F) K(o2c_swiglu_f32, F) K(o2c_swiglu_f64, F)             \
    K(o2c_cumprod_f32, F) K(o2c_cumprod_f64, F) K(o2c_cumprod_i32, F) K(o2c_cumprod_i64, F)     \
    K(o2c_cumprod_u32, F) K(o2c_cumprod_u64, F) K(o2c_groupnorm_f32, F) K(o2c_groupnorm_f64, F)
