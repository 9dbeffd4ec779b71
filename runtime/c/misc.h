/* Misc kernels: Trilu, CumSum, EyeLike, OneHot, Hardmax, Det (their shape
 * rules and lowerings are in compiler/ops/misc.c). The elementwise ops of
 * that family (Mod, BitShift, Bitwise*, IsNaN, IsInf, Shrink) are
 * expressions in compiler/ops.def. Index space: the output elements. */

/* CumSum over one axis, read at run time from x[1] (int32 or int64,
 * negative counts from the end; out of range: y = x). Each index sums its
 * own prefix (or suffix), so no index reads what another one writes.
 *   O2C_CUMSUM_* (runtime/c/params/misc.h) */
#define O2C_CUMSUM_DEF(NAME, TY)                                            \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        typedef TY T;                                                       \
        const T *X = (const T *)p->x[0];                                    \
        T *Y = (T *)p->y[0];                                                \
        const o2c_int rank = p->k[O2C_CUMSUM_RANK];                         \
        o2c_int ax = p->k[O2C_CUMSUM_AXSIZE] == 4 ? (o2c_int) * (const int32_t *)p->x[1] \
                                  : *(const int64_t *)p->x[1];              \
        if (ax < 0) ax += rank;                                             \
        o2c_int n = 1, inner = 1, incl = p->k[O2C_CUMSUM_EXCLUSIVE] ? 0 : 1; \
        if (ax >= 0 && ax < rank) {                                         \
            n = p->k[O2C_CUMSUM_DIMS + ax];                                 \
            for (o2c_int d = ax + 1; d < rank; d++) inner *= p->k[O2C_CUMSUM_DIMS + d]; \
        } else {                                                            \
            incl = 1;                                                       \
        }                                                                   \
        O2C_FOR(i) {                                                        \
            const o2c_int j = (i / inner) % n, base = i - j * inner;        \
            T s = 0;                                                        \
            if (!p->k[O2C_CUMSUM_REVERSE]) {                                \
                for (o2c_int t = 0; t < j + incl; t++) s += X[base + t * inner]; \
            } else {                                                        \
                for (o2c_int t = n - 1; t > j - incl; t--) s += X[base + t * inner]; \
            }                                                               \
            Y[i] = s;                                                       \
        }                                                                   \
    }

/* EyeLike: y[r][c] = (c - r == k) for a 2-D output.
 *   O2C_EYELIKE_* */
#define O2C_EYELIKE_DEF(NAME, TY)                                           \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        typedef TY T;                                                       \
        T *Y = (T *)p->y[0];                                                \
        const o2c_int w = p->k[O2C_EYELIKE_W], d = p->k[O2C_EYELIKE_K];     \
        O2C_FOR(i) Y[i] = (T)(i % w - i / w == d ? 1 : 0);                  \
    }

/* Hardmax: 1 where the element is the first maximum of its slice along
 * the axis, else 0. Each index scans its own slice.
 *   O2C_HARDMAX_N, _INNER (opset < 13 coerces to 2-D: N = product of the
 *   dims from the axis, INNER 1) */
#define O2C_HARDMAX_DEF(NAME, TY)                                           \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        typedef TY T;                                                       \
        const T *X = (const T *)p->x[0];                                    \
        T *Y = (T *)p->y[0];                                                \
        const o2c_int n = p->k[O2C_HARDMAX_N], inner = p->k[O2C_HARDMAX_INNER]; \
        O2C_FOR(i) {                                                        \
            const o2c_int j = (i / inner) % n, base = i - j * inner;        \
            o2c_int best = 0;                                               \
            T bv = X[base];                                                 \
            for (o2c_int t = 1; t < n; t++)                                 \
                if (X[base + t * inner] > bv) { bv = X[base + t * inner]; best = t; } \
            Y[i] = (T)(best == j ? 1 : 0);                                  \
        }                                                                   \
    }

/* Det of square matrices by Gaussian elimination with partial pivoting,
 * in the element type. Index space: the matrices.
 *   x[0] the matrices (count, m, m); y[0] the determinants; y[1] scratch
 *   of count*m*m elements (index i uses only its own m*m block)
 *   O2C_DET_M */
#define O2C_DET_DEF(NAME, TY)                                               \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        typedef TY T;                                                       \
        const T *X = (const T *)p->x[0];                                    \
        T *Y = (T *)p->y[0];                                                \
        T *S = (T *)p->y[1];                                                \
        const o2c_int m = p->k[O2C_DET_M];                                  \
        O2C_FOR(i) {                                                        \
            T *A = S + i * m * m;                                      \
            T det = 1;                                                 \
            for (o2c_int e = 0; e < m * m; e++) A[e] = X[i * m * m + e]; \
            for (o2c_int c = 0; c < m; c++) {                               \
                o2c_int piv = c;                                            \
                for (o2c_int r = c + 1; r < m; r++)                         \
                    if (O2C_M(TY, fabs)(A[r * m + c]) > O2C_M(TY, fabs)(A[piv * m + c])) piv = r; \
                if (A[piv * m + c] == 0) { det = 0; break; }                \
                if (piv != c) {                                             \
                    for (o2c_int e = 0; e < m; e++) {                       \
                        T t = A[c * m + e];                            \
                        A[c * m + e] = A[piv * m + e];                      \
                        A[piv * m + e] = t;                                 \
                    }                                                       \
                    det = -det;                                             \
                }                                                           \
                det *= A[c * m + c];                                        \
                for (o2c_int r = c + 1; r < m; r++) {                       \
                    const T f = A[r * m + c] / A[c * m + c];           \
                    for (o2c_int e = c + 1; e < m; e++) A[r * m + e] -= f * A[c * m + e]; \
                }                                                           \
            }                                                               \
            Y[i] = det;                                                      \
        }                                                                   \
    }

/*@ o2c_trilu params O2C_TRILU */
/* Trilu: keeps the elements with c - r >= k (upper) or c - r <= k (lower)
 * of the last two axes, zeroes the others; any element type.
 *   x[1] the diagonal k (one int64, read at run time), or NULL: k = 0
 *   O2C_TRILU_* */
O2C_KERNEL(o2c_trilu)
{
    const uint8_t *X = (const uint8_t *)p->x[0];
    uint8_t *Y = (uint8_t *)p->y[0];
    const o2c_int h = p->k[O2C_TRILU_H], w = p->k[O2C_TRILU_W];
    const o2c_int up = p->k[O2C_TRILU_UPPER], es = p->k[O2C_TRILU_ESIZE];
    const int64_t d = p->x[1] ? *(const int64_t *)p->x[1] : 0;
    O2C_FOR(i) {
        const o2c_int c = i % w, r = (i / w) % h;
        const int keep = up ? c - r >= d : c - r <= d;
        if (keep) memcpy(Y + i * es, X + i * es, (size_t)es);
        else memset(Y + i * es, 0, (size_t)es);
    }
}

/*@ o2c_onehot params O2C_ONEHOT */
/* OneHot: y[o][d][in] = values[1] if indices[o][in] (negative: + depth,
 * or off everywhere with O2C_ONEHOT_NOWRAP) equals d, else values[0]; any
 * value type.
 *   x[0] indices as int64 (outer * inner), x[1] values [off, on]
 *   O2C_ONEHOT_* */
O2C_KERNEL(o2c_onehot)
{
    const int64_t *IX = (const int64_t *)p->x[0];
    const uint8_t *V = (const uint8_t *)p->x[1];
    uint8_t *Y = (uint8_t *)p->y[0];
    const o2c_int depth = p->k[O2C_ONEHOT_DEPTH], inner = p->k[O2C_ONEHOT_INNER];
    const o2c_int es = p->k[O2C_ONEHOT_ESIZE];
    O2C_FOR(i) {
        const o2c_int in = i % inner, t = i / inner;
        const o2c_int d = t % depth, o = t / depth;
        o2c_int idx = IX[o * inner + in];
        if (idx < 0) idx = p->k[O2C_ONEHOT_NOWRAP] ? -1 : idx + depth;
        memcpy(Y + i * es, V + (idx == d ? es : 0), (size_t)es);
    }
}

/*@ o2c_cumsum_f32 params O2C_CUMSUM */
O2C_CUMSUM_DEF(o2c_cumsum_f32, float)
/*@ o2c_cumsum_f64 params O2C_CUMSUM */
O2C_CUMSUM_DEF(o2c_cumsum_f64, double)
/*@ o2c_cumsum_i32 params O2C_CUMSUM */
O2C_CUMSUM_DEF(o2c_cumsum_i32, int32_t)
/*@ o2c_cumsum_i64 params O2C_CUMSUM */
O2C_CUMSUM_DEF(o2c_cumsum_i64, int64_t)
/*@ o2c_cumsum_u32 params O2C_CUMSUM */
O2C_CUMSUM_DEF(o2c_cumsum_u32, uint32_t)
/*@ o2c_cumsum_u64 params O2C_CUMSUM */
O2C_CUMSUM_DEF(o2c_cumsum_u64, uint64_t)

/*@ o2c_eyelike_f32 params O2C_EYELIKE */
O2C_EYELIKE_DEF(o2c_eyelike_f32, float)
/*@ o2c_eyelike_f64 params O2C_EYELIKE */
O2C_EYELIKE_DEF(o2c_eyelike_f64, double)
/*@ o2c_eyelike_i8 params O2C_EYELIKE */
O2C_EYELIKE_DEF(o2c_eyelike_i8, int8_t)
/*@ o2c_eyelike_i16 params O2C_EYELIKE */
O2C_EYELIKE_DEF(o2c_eyelike_i16, int16_t)
/*@ o2c_eyelike_i32 params O2C_EYELIKE */
O2C_EYELIKE_DEF(o2c_eyelike_i32, int32_t)
/*@ o2c_eyelike_i64 params O2C_EYELIKE */
O2C_EYELIKE_DEF(o2c_eyelike_i64, int64_t)
/*@ o2c_eyelike_u8 params O2C_EYELIKE */
O2C_EYELIKE_DEF(o2c_eyelike_u8, uint8_t)
/*@ o2c_eyelike_u16 params O2C_EYELIKE */
O2C_EYELIKE_DEF(o2c_eyelike_u16, uint16_t)
/*@ o2c_eyelike_u32 params O2C_EYELIKE */
O2C_EYELIKE_DEF(o2c_eyelike_u32, uint32_t)
/*@ o2c_eyelike_u64 params O2C_EYELIKE */
O2C_EYELIKE_DEF(o2c_eyelike_u64, uint64_t)
/*@ o2c_eyelike_b params O2C_EYELIKE */
O2C_EYELIKE_DEF(o2c_eyelike_b, uint8_t)

/*@ o2c_hardmax_f32 params O2C_HARDMAX */
O2C_HARDMAX_DEF(o2c_hardmax_f32, float)
/*@ o2c_hardmax_f64 params O2C_HARDMAX */
O2C_HARDMAX_DEF(o2c_hardmax_f64, double)

/*@ o2c_det_f32 params O2C_DET */
O2C_DET_DEF(o2c_det_f32, float)
/*@ o2c_det_f64 params O2C_DET */
O2C_DET_DEF(o2c_det_f64, double)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_MISC(K, F) K(o2c_trilu, F) K(o2c_onehot, F)                      \
    K(o2c_cumsum_f32, F) K(o2c_cumsum_f64, F) K(o2c_cumsum_i32, F) K(o2c_cumsum_i64, F) \
    K(o2c_cumsum_u32, F) K(o2c_cumsum_u64, F)                                     \
    K(o2c_eyelike_f32, F) K(o2c_eyelike_f64, F) K(o2c_eyelike_i8, F) K(o2c_eyelike_i16, F) \
    K(o2c_eyelike_i32, F) K(o2c_eyelike_i64, F) K(o2c_eyelike_u8, F) K(o2c_eyelike_u16, F) \
    K(o2c_eyelike_u32, F) K(o2c_eyelike_u64, F) K(o2c_eyelike_b, F)                  \
    K(o2c_hardmax_f32, F) K(o2c_hardmax_f64, F) K(o2c_det_f32, F) K(o2c_det_f64, F)
