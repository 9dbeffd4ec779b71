/* reduce kernels. See o2c_rt.h for the calling convention.
 *
 * o2c_reduce_T: ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp.
 * Index space: the output elements. The input is seen as "kept" dims (the
 * output's dims, in order) and "reduced" dims; adjacent dims of the same
 * kind are merged and size-1 dims dropped by the compiler.
 * Parameters: O2C_REDUCE_* (runtime/c/params/reduce.h).
 * Float sums and products accumulate in the element type; integer ones in
 * uint64 (wrapping), compared and divided as int64/uint64; the logs, exps
 * and roots are taken in M (float for float, else double).
 *
 * o2c_argext_T: ArgMax / ArgMin, int64 output. Index space: output elements.
 * Parameters: O2C_ARGEXT_*.
 *   NaN wins (numpy semantics): the first NaN, or the last with select_last_index. */

/* is-NaN for float element types (F = 1), constant 0 for integers */
#define O2C_RNAN_1(v) ((v) != (v))
#define O2C_RNAN_0(v) 0
#define O2C_RLOW_1(p) (-INFINITY)
#define O2C_RLOW_0(p) ((p)->k[O2C_REDUCE_LOW])
#define O2C_RHIGH_1(p) (INFINITY)
#define O2C_RHIGH_0(p) ((p)->k[O2C_REDUCE_HIGH])

/* element j of the reduced set of the current output (inside O2C_REDUCE) */
#define O2C_RX(j) x[rr == 1 ? (j) * rs : o2c_offset((j), rr, p->k + O2C_REDUCE_RED_DIMS, p->k + O2C_REDUCE_RED_STR)]

/* T element type, A compare/divide type, U wrapping accumulator, F 1 for
 * floats, MT the type of the math (float or double) */
#define O2C_REDUCE(NAME, TY, AT, UT, F, MT)                                             \
    O2C_KERNEL(NAME)                                                                  \
    {                                                                                 \
        typedef TY T;                                                                 \
        typedef AT A;                                                                 \
        typedef UT U;                                                                 \
        const T *X = (const T *)p->x[0];                                              \
        T *Y = (T *)p->y[0];                                                          \
        const o2c_int op = p->k[O2C_REDUCE_OP], R = p->k[O2C_REDUCE_R];               \
        const o2c_int rk = p->k[O2C_REDUCE_NKEPT], rr = p->k[O2C_REDUCE_NRED];        \
        const o2c_int rs = p->k[O2C_REDUCE_RED_STR];                                  \
        O2C_FOR(i) {                                                                  \
            const T *x = X + (rk ? o2c_offset(i, rk, p->k + O2C_REDUCE_KEPT_DIMS, p->k + O2C_REDUCE_KEPT_STR) : 0); \
            o2c_int j;                                                                \
            switch (op) {                                                             \
            case O2C_RED_MAX:                                                         \
            case O2C_RED_MIN:                                                         \
            case O2C_RED_LOGSUMEXP: {                                                 \
                const int mx = op != O2C_RED_MIN;                                     \
                A m = mx ? (A)O2C_RLOW_##F(p) : (A)O2C_RHIGH_##F(p);                  \
                int isn = 0;                                                          \
                for (j = 0; j < R; j++) {                                             \
                    const A v = (A)O2C_RX(j);                                     \
                    if (O2C_RNAN_##F(v)) { m = v; isn = 1; break; }                   \
                    if (mx ? v > m : v < m) m = v;                                    \
                }                                                                     \
                if (op != O2C_RED_LOGSUMEXP) { Y[i] = (T)m; break; }                  \
                const MT md = (MT)m;                                                  \
                if (isn || R == 0 || md - md != 0) { Y[i] = (T)md; break; }           \
                MT s = 0;                                                             \
                for (j = 0; j < R; j++)                                               \
                    s += O2C_M(MT, exp)((MT)O2C_RX(j) - md);                          \
                Y[i] = (T)(md + O2C_M(MT, log)(s));                                            \
                break;                                                                \
            }                                                                         \
            default: {                                                                \
                U s = op == O2C_RED_PROD ? (U)1 : (U)0;                               \
                switch (op) {                                                         \
                case O2C_RED_PROD:                                                    \
                    for (j = 0; j < R; j++) s *= (U)(A)O2C_RX(j);                     \
                    break;                                                            \
                case O2C_RED_L1:                                                      \
                    for (j = 0; j < R; j++) {                                         \
                        const A v = (A)O2C_RX(j);                                     \
                        s += (U)(v > 0 ? v : -v);                                     \
                    }                                                                 \
                    break;                                                            \
                case O2C_RED_L2:                                                      \
                case O2C_RED_SUMSQ:                                                   \
                    for (j = 0; j < R; j++) {                                         \
                        const A v = (A)O2C_RX(j);                                     \
                        s += (U)v * (U)v;                                             \
                    }                                                                 \
                    break;                                                            \
                default:                                                              \
                    for (j = 0; j < R; j++) s += (U)(A)O2C_RX(j);                     \
                    break;                                                            \
                }                                                                     \
                const A a = (A)s;                                                     \
                switch (op) {                                                         \
                case O2C_RED_MEAN:                                                    \
                    if (R) Y[i] = (T)(a / (A)R);                                      \
                    else Y[i] = (T)(A)O2C_PF(MT, p, O2C_REDUCE_F_EMPTY_MEAN);         \
                    break;                                                            \
                case O2C_RED_L2: Y[i] = (T)O2C_M(MT, sqrt)((MT)a); break;                 \
                case O2C_RED_LOGSUM: Y[i] = (T)O2C_M(MT, log)((MT)a); break;                 \
                default: Y[i] = (T)a; break;                                          \
                }                                                                     \
                break;                                                                \
            }                                                                         \
            }                                                                         \
        }                                                                             \
    }

#define O2C_ARGEXT(NAME, TY, F) O2C_ARGEXT_FAST(NAME, TY, F, -1)
/* FAST(x, A, mx, last): the row's index by a faster route, or -1 to take
 * the loop below (o2c_argext_row_f32) */
#define O2C_ARGEXT_FAST(NAME, TY, F, FAST)                                            \
    O2C_KERNEL(NAME)                                                                  \
    {                                                                                 \
        typedef TY T;                                                                 \
        const T *X = (const T *)p->x[0];                                              \
        int64_t *Y = (int64_t *)p->y[0];                                              \
        const o2c_int A = p->k[O2C_ARGEXT_A], inner = p->k[O2C_ARGEXT_INNER];         \
        const o2c_int last = p->k[O2C_ARGEXT_LAST], mx = p->k[O2C_ARGEXT_MAX];        \
        O2C_FOR(i) {                                                                  \
            const T *x = X + (i / inner) * A * inner + i % inner;                     \
            if (inner == 1) {                                                         \
                const o2c_int fast = (FAST);                                          \
                if (fast >= 0) { Y[i] = fast; continue; }                             \
            }                                                                         \
            T best = x[0];                                                            \
            o2c_int bi = 0;                                                           \
            int isn = O2C_RNAN_##F(best);                                             \
            for (o2c_int j = 1; j < A; j++) {                                         \
                const T v = x[j * inner];                                             \
                if (O2C_RNAN_##F(v)) {                                                \
                    if (!isn || last) { bi = j; best = v; }                           \
                    isn = 1;                                                          \
                    continue;                                                         \
                }                                                                     \
                if (isn) continue;                                                    \
                if (mx ? (last ? v >= best : v > best) : (last ? v <= best : v < best)) { \
                    best = v;                                                         \
                    bi = j;                                                           \
                }                                                                     \
            }                                                                         \
            Y[i] = bi;                                                                \
        }                                                                             \
    }

/*@ o2c_reduce_f32 needs o2c_offset params O2C_REDUCE split */
O2C_REDUCE(o2c_reduce_f32, float, float, float, 1, float)
/*@ o2c_reduce_f64 needs o2c_offset params O2C_REDUCE split */
O2C_REDUCE(o2c_reduce_f64, double, double, double, 1, double)
/*@ o2c_reduce_i8 needs o2c_offset params O2C_REDUCE split */
O2C_REDUCE(o2c_reduce_i8, int8_t, int64_t, uint64_t, 0, double)
/*@ o2c_reduce_i16 needs o2c_offset params O2C_REDUCE split */
O2C_REDUCE(o2c_reduce_i16, int16_t, int64_t, uint64_t, 0, double)
/*@ o2c_reduce_i32 needs o2c_offset params O2C_REDUCE split */
O2C_REDUCE(o2c_reduce_i32, int32_t, int64_t, uint64_t, 0, double)
/*@ o2c_reduce_i64 needs o2c_offset params O2C_REDUCE split */
O2C_REDUCE(o2c_reduce_i64, int64_t, int64_t, uint64_t, 0, double)
/*@ o2c_reduce_u8 needs o2c_offset params O2C_REDUCE split */
O2C_REDUCE(o2c_reduce_u8, uint8_t, int64_t, uint64_t, 0, double)
/*@ o2c_reduce_u16 needs o2c_offset params O2C_REDUCE split */
O2C_REDUCE(o2c_reduce_u16, uint16_t, int64_t, uint64_t, 0, double)
/*@ o2c_reduce_u32 needs o2c_offset params O2C_REDUCE split */
O2C_REDUCE(o2c_reduce_u32, uint32_t, int64_t, uint64_t, 0, double)
/*@ o2c_reduce_u64 needs o2c_offset params O2C_REDUCE split */
O2C_REDUCE(o2c_reduce_u64, uint64_t, uint64_t, uint64_t, 0, double)
/*@ o2c_reduce_b needs o2c_offset params O2C_REDUCE split */
O2C_REDUCE(o2c_reduce_b, uint8_t, int64_t, uint64_t, 0, double)

/*@ o2c_argext_row_f32 */
/* ArgMax/ArgMin of a contiguous float row with AVX: the extreme over 8
 * lanes (maxps(v, e) is v > e ? v : e: the scalar loop's rule), then the
 * first (or, for select_last_index, the last) index holding a value equal
 * to it: the loop's answer, +0 and -0 being equal there too. A row with a
 * NaN (the loop's answer is a NaN's index) returns -1: the loop decides. */
#if defined(__AVX__) && defined(__GNUC__) && !defined(__CUDACC__)   /* __builtin_ctz, __builtin_clz */
#include <immintrin.h>
static inline o2c_int o2c_argext_row_f32(const float *x, o2c_int A, o2c_int mx, o2c_int last)
{
    if (A < 16) return -1;
    __m256 e = _mm256_loadu_ps(x), nan = _mm256_cmp_ps(e, e, _CMP_UNORD_Q);
    o2c_int j = 8;
    for (; j + 8 <= A; j += 8) {
        const __m256 v = _mm256_loadu_ps(x + j);
        e = mx ? _mm256_max_ps(v, e) : _mm256_min_ps(v, e);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
    if (_mm256_movemask_ps(nan)) return -1;
    float lane[8], best;
    _mm256_storeu_ps(lane, e);
    best = lane[0];
    for (int l = 1; l < 8; l++) best = mx ? (lane[l] > best ? lane[l] : best) : (lane[l] < best ? lane[l] : best);
    for (; j < A; j++) {
        if (x[j] != x[j]) return -1;
        best = mx ? (x[j] > best ? x[j] : best) : (x[j] < best ? x[j] : best);
    }
    const __m256 b = _mm256_set1_ps(best);
    if (!last) {
        for (j = 0; j + 8 <= A; j += 8) {
            const int m = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + j), b, _CMP_EQ_OQ));
            if (m) return j + __builtin_ctz((unsigned)m);
        }
        for (; j < A; j++)
            if (x[j] == best) return j;
    } else {
        for (j = A; j % 8; j--)
            if (x[j - 1] == best) return j - 1;
        for (; j >= 8; j -= 8) {
            const int m = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + j - 8), b, _CMP_EQ_OQ));
            if (m) return j - 8 + 31 - __builtin_clz((unsigned)m);
        }
    }
    return -1;
}
#else
O2C_HD static inline o2c_int o2c_argext_row_f32(const float *x, o2c_int A, o2c_int mx, o2c_int last)
{
    (void)x; (void)A; (void)mx; (void)last;
    return -1;
}
#endif

/*@ o2c_argext_f32 needs o2c_argext_row_f32 params O2C_ARGEXT split */
O2C_ARGEXT_FAST(o2c_argext_f32, float, 1, o2c_argext_row_f32(x, A, mx, last))
/*@ o2c_argext_f64 params O2C_ARGEXT split */
O2C_ARGEXT(o2c_argext_f64, double, 1)
/*@ o2c_argext_i8 params O2C_ARGEXT split */
O2C_ARGEXT(o2c_argext_i8, int8_t, 0)
/*@ o2c_argext_i16 params O2C_ARGEXT split */
O2C_ARGEXT(o2c_argext_i16, int16_t, 0)
/*@ o2c_argext_i32 params O2C_ARGEXT split */
O2C_ARGEXT(o2c_argext_i32, int32_t, 0)
/*@ o2c_argext_i64 params O2C_ARGEXT split */
O2C_ARGEXT(o2c_argext_i64, int64_t, 0)
/*@ o2c_argext_u8 params O2C_ARGEXT split */
O2C_ARGEXT(o2c_argext_u8, uint8_t, 0)
/*@ o2c_argext_u16 params O2C_ARGEXT split */
O2C_ARGEXT(o2c_argext_u16, uint16_t, 0)
/*@ o2c_argext_u32 params O2C_ARGEXT split */
O2C_ARGEXT(o2c_argext_u32, uint32_t, 0)
/*@ o2c_argext_u64 params O2C_ARGEXT split */
O2C_ARGEXT(o2c_argext_u64, uint64_t, 0)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_REDUCE(K, F) \
    K(o2c_reduce_f32, F) K(o2c_reduce_f64, F) K(o2c_reduce_i8, F) K(o2c_reduce_i16, F) K(o2c_reduce_i32, F) \
    K(o2c_reduce_i64, F) K(o2c_reduce_u8, F) K(o2c_reduce_u16, F) K(o2c_reduce_u32, F) K(o2c_reduce_u64, F) \
    K(o2c_reduce_b, F)                                                               \
    K(o2c_argext_f32, F) K(o2c_argext_f64, F) K(o2c_argext_i8, F) K(o2c_argext_i16, F) K(o2c_argext_i32, F) \
    K(o2c_argext_i64, F) K(o2c_argext_u8, F) K(o2c_argext_u16, F) K(o2c_argext_u32, F) K(o2c_argext_u64, F)
