/* Elementwise kernels. The op table (compiler/ops.def) holds each op's
 * expression; these macros turn an expression into a kernel, once per
 * element type. Index space: the output elements.
 *
 * Parameters: runtime/c/params/elementwise.h (broadcasting: O2C_EW_RANK,
 * dims and strides; unary kernels' A, B, C: the op's real attributes).
 * The expressions call the math functions by their double names (exp);
 * the compiler writes a float kernel's instance with the float ones (expf,
 * expr_for_type in compiler/ops.c). */

#define O2C_EW_DIMS_P(p) ((p)->k + O2C_EW_DIMS)
#define O2C_EW_STR(p, j) ((p)->k + O2C_EW_STR_AT(j))

/* y = EXPR(x); EXPR may name the element type T */
#define O2C_UNARY(NAME, TY, EXPR)                                           \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        typedef TY T;                                                       \
        const T *X = (const T *)p->x[0];                                    \
        T *Y = (T *)p->y[0];                                                \
        const T A = O2C_PF(TY, p, O2C_EW_FA), B = O2C_PF(TY, p, O2C_EW_FB); \
        const T C = O2C_PF(TY, p, O2C_EW_FC);                               \
        (void)A; (void)B; (void)C;                                          \
        O2C_FOR(i) { const T x = X[i]; Y[i] = (T)(EXPR); }                  \
    }

/* bool y = EXPR(x) (IsNaN, IsInf); A, B, C: the op's real and integer
 * attributes in schema order, as T. */
#define O2C_PREDICATE(NAME, TY, EXPR)                                       \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        typedef TY T;                                                       \
        const T *X = (const T *)p->x[0];                                    \
        uint8_t *Y = (uint8_t *)p->y[0];                                    \
        const T A = O2C_PF(TY, p, O2C_EW_FA), B = O2C_PF(TY, p, O2C_EW_FB); \
        const T C = O2C_PF(TY, p, O2C_EW_FC);                               \
        (void)A; (void)B; (void)C;                                          \
        O2C_FOR(i) { const T x = X[i]; Y[i] = (uint8_t)((EXPR) ? 1 : 0); }  \
    }

/* y = EXPR(a, b) with numpy broadcasting; TO is the output type. */
#define O2C_BINARY(NAME, TY, TO, EXPR)                                      \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        typedef TY T;                                                       \
        const T *XA = (const T *)p->x[0], *XB = (const T *)p->x[1];         \
        TO *Y = (TO *)p->y[0];                                              \
        const o2c_int r = p->k[O2C_EW_RANK];                                \
        if (r == 0) {                                                       \
            O2C_FOR(i) { const T a = XA[i], b = XB[i]; Y[i] = (TO)(EXPR); } \
        } else {                                                            \
            /* a run along the last axis at a time: offsets computed once a \
             * run, then stepped by the operands' last strides (0 or 1 for \
             * a broadcast channel scale: a loop the compiler vectorizes) */ \
            const o2c_int D = O2C_EW_DIMS_P(p)[r - 1];                      \
            const o2c_int sa = O2C_EW_STR(p, 0)[r - 1], sb = O2C_EW_STR(p, 1)[r - 1]; \
            for (o2c_int i = i0; i < i1;) {                                 \
                const T *pa = XA + o2c_offset(i, r, O2C_EW_DIMS_P(p), O2C_EW_STR(p, 0)); \
                const T *pb = XB + o2c_offset(i, r, O2C_EW_DIMS_P(p), O2C_EW_STR(p, 1)); \
                o2c_int n = D - i % D;                                      \
                if (n > i1 - i) n = i1 - i;                                 \
                for (o2c_int j = 0; j < n; j++) {                           \
                    const T a = pa[j * sa], b = pb[j * sb];                 \
                    Y[i + j] = (TO)(EXPR);                                  \
                }                                                           \
                i += n;                                                     \
            }                                                               \
        }                                                                   \
    }

/* Cast: y = (TO)x; to bool is x != 0. */
#define O2C_CAST(NAME, TI, TO)                                              \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const TI *X = (const TI *)p->x[0];                                  \
        TO *Y = (TO *)p->y[0];                                              \
        O2C_FOR(i) Y[i] = (TO)X[i];                                         \
    }
#define O2C_CAST_TO_BOOL(NAME, TI)                                          \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const TI *X = (const TI *)p->x[0];                                  \
        uint8_t *Y = (uint8_t *)p->y[0];                                    \
        O2C_FOR(i) Y[i] = (uint8_t)(X[i] != 0);                             \
    }

/* Casts from and to the 16-bit float types, which are stored as bit
 * patterns (uint16_t) and converted through float with o2c_h2f/o2c_f2h
 * (float16) or o2c_bf2f/o2c_f2bf (bfloat16), given as CONV. */
#define O2C_CAST_FROM16(NAME, TO, CONV)                                     \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const uint16_t *X = (const uint16_t *)p->x[0];                      \
        TO *Y = (TO *)p->y[0];                                              \
        O2C_FOR(i) Y[i] = (TO)CONV(X[i]);                                   \
    }
#define O2C_CAST_FROM16_TO_BOOL(NAME, CONV)                                 \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const uint16_t *X = (const uint16_t *)p->x[0];                      \
        uint8_t *Y = (uint8_t *)p->y[0];                                    \
        O2C_FOR(i) Y[i] = (uint8_t)(CONV(X[i]) != 0);                       \
    }
#define O2C_CAST_TO16(NAME, TI, CONV)                                       \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const TI *X = (const TI *)p->x[0];                                  \
        uint16_t *Y = (uint16_t *)p->y[0];                                  \
        O2C_FOR(i) Y[i] = CONV((float)X[i]);                                \
    }
#define O2C_CAST_16(NAME, FROM, TO)                                         \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const uint16_t *X = (const uint16_t *)p->x[0];                      \
        uint16_t *Y = (uint16_t *)p->y[0];                                  \
        O2C_FOR(i) Y[i] = TO(FROM(X[i]));                                   \
    }

/*@ o2c_h2f */
/* IEEE 754 binary16 and bfloat16 <-> float32, rounding to nearest even. */
O2C_HD static inline float o2c_h2f(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    uint32_t u;
    float f;
    if (e == 0x1f) {
        u = sign | 0x7f800000u | (m << 13);                     /* inf, NaN */
    } else if (e) {
        u = sign | ((e + 112) << 23) | (m << 13);               /* normal */
    } else if (m) {                                             /* subnormal: m * 2^-24 */
        f = (float)m * 5.9604644775390625e-8f;
        return sign ? -f : f;
    } else {
        u = sign;
    }
    memcpy(&f, &u, 4);
    return f;
}
/*@ o2c_ldh needs o2c_h2f */
/* One IEEE half at p as a float: the kernels that read --fp16 weights
 * where they are (o2c_conv_f32h, o2c_matmul_f32h): the FPU's conversion
 * where Arm's compilers have IEEE __fp16 (Cortex-M4F's vcvtb), else
 * o2c_h2f. */
O2C_HD static inline float o2c_ldh(const uint16_t *p)
{
#if defined(__ARM_FP16_FORMAT_IEEE) && !defined(__CUDACC__)
    __fp16 h;
    memcpy(&h, p, sizeof h);
    return (float)h;
#else
    return o2c_h2f(*p);
#endif
}
/*@ o2c_f2h */
O2C_HD static inline uint16_t o2c_f2h(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    const uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u));
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);   /* rounds past 65504: inf */
    if (a < 0x38800000u) {                                      /* below 2^-14: subnormal or 0 */
        const uint32_t m = (a & 0x7fffffu) | 0x800000u, sh = 126 - (a >> 23);
        if (a < 0x33000000u) return sign;                       /* below half of 2^-24 */
        uint32_t r = m >> sh;
        const uint32_t rem = m & ((1u << sh) - 1u), halfway = 1u << (sh - 1);
        if (rem > halfway || (rem == halfway && (r & 1u))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = ((a >> 13) - (112u << 10));
    const uint32_t rem = a & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
    return (uint16_t)(sign | r);
}
/*@ o2c_bf2f */
O2C_HD static inline float o2c_bf2f(uint16_t h)
{
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
/*@ o2c_f2bf */
O2C_HD static inline uint16_t o2c_f2bf(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);   /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/*@ o2c_where needs o2c_offset params O2C_EW_NK */
/* Where(cond, a, b): cond is bool (one byte), a and b of element size O2C_EW_ESIZE. */
O2C_KERNEL(o2c_where)
{
    const uint8_t *XC = (const uint8_t *)p->x[0];
    const uint8_t *XA = (const uint8_t *)p->x[1], *XB = (const uint8_t *)p->x[2];
    uint8_t *Y = (uint8_t *)p->y[0];
    const o2c_int r = p->k[O2C_EW_RANK], es = p->k[O2C_EW_ESIZE];
    O2C_FOR(i) {
        o2c_int ic = i, ia = i, ib = i;
        if (r) {
            ic = o2c_offset(i, r, O2C_EW_DIMS_P(p), O2C_EW_STR(p, 0));
            ia = o2c_offset(i, r, O2C_EW_DIMS_P(p), O2C_EW_STR(p, 1));
            ib = o2c_offset(i, r, O2C_EW_DIMS_P(p), O2C_EW_STR(p, 2));
        }
        memcpy(Y + i * es, XC[ic] ? XA + ia * es : XB + ib * es, (size_t)es);
    }
}

/*@ o2c_h2f_f32 needs o2c_h2f */
/* --fp16: a float constant stored as IEEE half, widened to float32 for the
 * kernel that reads it (lower.c lower_half_constants). Every half is a
 * float, so all paths give the same bits: x86's F16C (vcvtph2ps, 8 a
 * time), the __fp16 type where Arm's compilers have IEEE half (the FPU's
 * vcvt), else o2c_h2f. */
#if defined(__F16C__) && defined(__AVX__) && !defined(__CUDACC__)
#include <immintrin.h>
#endif
O2C_KERNEL(o2c_h2f_f32)
{
    const uint16_t *X = (const uint16_t *)p->x[0];
    float *Y = (float *)p->y[0];
#if defined(__F16C__) && defined(__AVX__) && !defined(__CUDACC__)
    const o2c_int vec = (i1 - i0) / 8 * 8;   /* (a count first: gcc's loop analysis accepts the tail after it) */
    for (o2c_int v = 0; v < vec; v += 8)
        _mm256_storeu_ps(Y + i0 + v, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(X + i0 + v))));
    for (o2c_int i = i0 + vec; i < i1; i++) Y[i] = o2c_h2f(X[i]);
#elif defined(__ARM_FP16_FORMAT_IEEE) && !defined(__CUDACC__)
    O2C_FOR(i) {
        __fp16 h;
        memcpy(&h, X + i, sizeof h);
        Y[i] = (float)h;
    }
#else
    O2C_FOR(i) Y[i] = o2c_h2f(X[i]);
#endif
}

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_ELEMENTWISE(K, F) K(o2c_where, F) K(o2c_h2f_f32, F)
