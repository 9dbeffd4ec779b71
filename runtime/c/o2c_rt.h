/* onnx2c runtime core: the kernel calling convention shared by the compiler
 * (constant folding), the generated C and the generated CUDA.
 *
 * Every kernel has the signature
 *     void kernel(int64_t i0, int64_t i1, const o2c_p *p)
 * and computes the elements i0 <= i < i1 of its parallel index space
 * (usually the output elements). C runs it once over [0, n); CUDA runs
 * one thread per index. Pointers and shape parameters travel in o2c_p. */
#ifndef O2C_RT_H
#define O2C_RT_H

#include <stdint.h>
#include <string.h>
#include <math.h>

#if defined(__CUDACC__) || defined(O2C_CUDA_EMULATE)
#define O2C_HD __host__ __device__
#else
#define O2C_HD
#endif /* O2C_RT_H */

/* a pointer no other pointer of the kernel reaches the data through (C99's
 * restrict; C++, which CUDA is, spells it __restrict__): lets the C
 * compiler vectorize a loop over an int8 row, which could otherwise alias
 * anything */
#if defined(__cplusplus) || defined(__CUDACC__)
#define O2C_RESTRICT __restrict__
#else
#define O2C_RESTRICT restrict
#endif

/* The arena and the constant arrays are aligned to 64 bytes, the widest
 * vector (AVX-512, a cache line). C99 has no alignment specifier: GNU C
 * compilers (gcc, clang, arm-none-eabi-gcc, nvcc's host side) get the
 * attribute; elsewhere define O2C_ALIGN64 to your compiler's spelling
 * before the generated file, or the arrays get their natural alignment. */
#ifndef O2C_ALIGN64
#if defined(__GNUC__) || defined(__clang__)
#define O2C_ALIGN64 __attribute__((aligned(64)))
#else
#define O2C_ALIGN64
#endif
#endif

#define O2C_MAX_RANK 8
#define O2C_MAX_X 8
#define O2C_MAX_Y 2
#define O2C_NK 64
#define O2C_NF 4
/* Each kernel's parameter slots are named in runtime/c/params/FAMILY.h (an
 * enum per kernel or kernel group, ending with its counts NAME_NK and
 * NAME_NF); O2C_PARAMS_FIT(name, nk, nf) refuses to compile if they
 * overflow k[] or f[]. */
#define O2C_PARAMS_FIT(name, nk, nf) typedef char o2c_params_fit_##name[(nk) <= O2C_NK && (nf) <= O2C_NF ? 1 : -1];

typedef struct o2c_p {
    const void *x[O2C_MAX_X];   /* inputs */
    void *y[O2C_MAX_Y];         /* outputs */
    int64_t k[O2C_NK];          /* integer parameters (shapes, strides) */
    double f[O2C_NF];           /* real parameters (alpha, epsilon, ...) */
    float ff[O2C_NF];           /* the same, rounded to float (float kernels read these) */
} o2c_p;

/* float32 stays float32. A kernel made for element type T (float or
 * double; the instantiation's type token) calls O2C_M(T, exp)(x): expf for
 * float, exp for double; reads real parameter j as O2C_PF(T, p, j): ff[j]
 * for float, f[j] for double (integer types: f[j] converted); and writes
 * literals as (T)0.5. No float computation is promoted to double: on a
 * single-precision FPU (Cortex-M4F) that would be software emulation, and
 * no <tgmath.h>, whose complex long double functions newlib lacks. */
#define O2C_M(T, fn) O2C_M_##T(fn)
#define O2C_M_float(fn) fn##f
#define O2C_M_double(fn) fn
#define O2C_PF(T, p, j) O2C_PF_##T(p, j)
/* a value read through a pointer: the load of kernels whose weights may be
 * of another type (O2C_CONV_WT, O2C_MATMUL_WT: o2c_ldh for half) */
#define O2C_LD(q) (*(q))
#define O2C_PF_float(p, j) ((p)->ff[j])
#define O2C_PF_double(p, j) ((p)->f[j])
#define O2C_PF_int8_t(p, j) ((int8_t)(p)->f[j])
#define O2C_PF_int16_t(p, j) ((int16_t)(p)->f[j])
#define O2C_PF_int32_t(p, j) ((int32_t)(p)->f[j])
#define O2C_PF_int64_t(p, j) ((int64_t)(p)->f[j])
#define O2C_PF_uint8_t(p, j) ((uint8_t)(p)->f[j])
#define O2C_PF_uint16_t(p, j) ((uint16_t)(p)->f[j])
#define O2C_PF_uint32_t(p, j) ((uint32_t)(p)->f[j])
#define O2C_PF_uint64_t(p, j) ((uint64_t)(p)->f[j])

typedef void (*o2c_kernel_fn)(int64_t i0, int64_t i1, const o2c_p *p);

/* Kernels are inlined at every call of the schedule, so that the C compiler
 * sees each call's constant parameters (shapes, strides, epilogue) and
 * specializes the loops for them; left to itself, gcc keeps a kernel called
 * from several places out of line and builds its o2c_p in memory at each
 * call (docs/BENCHMARKS.md: "Call-site specialization"). A GNU attribute,
 * hence the guard; nvcc inlines device functions by itself. */
#if defined(__GNUC__) && !defined(__CUDACC__)
#define O2C_INLINE __attribute__((always_inline))
#else
#define O2C_INLINE
#endif
/* a helper kept out of its caller, so that each function's loop has the
 * registers to itself (the Cortex-M integer kernels) */
#if defined(__GNUC__) && !defined(__CUDACC__)
#define O2C_NOINLINE __attribute__((noinline))
#else
#define O2C_NOINLINE
#endif
#define O2C_KERNEL(name) O2C_HD static inline O2C_INLINE void name(int64_t i0, int64_t i1, const o2c_p *p)
#define O2C_FOR(i) for (int64_t i = i0; i < i1; i++)

/* a + b * c in one rounding where the target has a fused multiply-add
 * instruction (the predefined macros say so: x86 FMA, Arm VFPv4/NEON),
 * else as written: the tiled kernels' inner loops, which the C compiler
 * vectorizes either way. (ISO C modes such as -std=c99 do not contract
 * a * b + c on their own.) */
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA) || defined(__CUDA_ARCH__)
#define O2C_FMA_f32(a, b, c) fmaf(b, c, a)
#else
#define O2C_FMA_f32(a, b, c) ((a) + (b) * (c))
#endif

/* Epilogue of the linear kernels (conv, convt, matmul): fused ops apply an
 * activation and a residual Add to each output element before it is
 * stored (o2c_epi_*). All slots zero: no epilogue. */
#define O2C_EPI_ACT 48       /* k: activation, O2C_ACT_* */
#define O2C_EPI_RES 49       /* k: residual Add, O2C_RES_* */
#define O2C_EPI_NSLOPE 50    /* k: PRelu slope length (1: one value for all) */
#define O2C_EPI_XRES 3       /* x: residual, the output's shape */
#define O2C_EPI_XSLOPE 4     /* x: PRelu slope, one per channel */
#define O2C_EPI_FA 2         /* f: activation parameter (alpha, Clip min) */
#define O2C_EPI_FB 3         /* f: activation parameter (beta, Clip max) */
#define O2C_RES_NONE 0
#define O2C_RES_BEFORE 1     /* y = act(acc + r) */
#define O2C_RES_AFTER 2      /* y = act(acc) + r */
#define O2C_ACT_NONE 0
#define O2C_ACT_RELU 1
#define O2C_ACT_CLIP 2       /* min FA, max FB */
#define O2C_ACT_LEAKYRELU 3  /* alpha FA */
#define O2C_ACT_PRELU 4      /* slope x[O2C_EPI_XSLOPE] */
#define O2C_ACT_SIGMOID 5
#define O2C_ACT_TANH 6
#define O2C_ACT_HARDSIGMOID 7 /* alpha FA, beta FB */
#define O2C_ACT_HARDSWISH 8
#define O2C_ACT_SILU 9       /* x * Sigmoid(x) */
#define O2C_ACT_GELU_ERF 10
#define O2C_ACT_GELU_TANH 11
#define O2C_ACT_MISH 12

#endif /* O2C_RT_H */

/* Runtime files are cut into chunks at lines that start with the marker
 * slash-star-at NAME [needs DEP...]: the compiler copies only the chunks a
 * model needs. The text before the first marker holds no functions. */

/* The epilogue of a linear kernel's output element v (flat index i,
 * channel ch): residual and activation as the O2C_EPI_* slots say. The
 * activations are those of the element-wise kernels, in the element type. */
#define O2C_EPI(NAME, T)                                                            \
    O2C_HD static inline O2C_INLINE T NAME(T v, int64_t i, int64_t ch, const o2c_p *p) \
    {                                                                               \
        const int64_t res = p->k[O2C_EPI_RES];                                      \
        const T A = O2C_PF(T, p, O2C_EPI_FA), B = O2C_PF(T, p, O2C_EPI_FB);         \
        if (res == O2C_RES_BEFORE) v += ((const T *)p->x[O2C_EPI_XRES])[i];         \
        switch (p->k[O2C_EPI_ACT]) {                                                \
        case O2C_ACT_RELU: v = v > 0 ? v : 0; break;                                \
        case O2C_ACT_CLIP: v = v < A ? A : (v > B ? B : v); break;                  \
        case O2C_ACT_LEAKYRELU: v = v >= 0 ? v : A * v; break;                      \
        case O2C_ACT_PRELU: {                                                       \
            const T *s = (const T *)p->x[O2C_EPI_XSLOPE];                           \
            const T sl = s[p->k[O2C_EPI_NSLOPE] == 1 ? 0 : ch];                     \
            v = v >= 0 ? v : v * sl;                                                \
            break;                                                                  \
        }                                                                           \
        case O2C_ACT_SIGMOID: v = 1 / (1 + O2C_M(T, exp)(-v)); break;                         \
        case O2C_ACT_TANH: v = O2C_M(T, tanh)(v); break;                                      \
        case O2C_ACT_HARDSIGMOID:                                                   \
            v = A * v + B <= 0 ? 0 : (A * v + B >= 1 ? 1 : A * v + B);              \
            break;                                                                  \
        case O2C_ACT_HARDSWISH:                                                     \
            v = v / 6 + (T)0.5 <= 0 ? 0 : (v / 6 + (T)0.5 >= 1 ? v : v * (v / 6 + (T)0.5)); \
            break;                                                                  \
        case O2C_ACT_SILU: v = v * (1 / (1 + O2C_M(T, exp)(-v))); break;                      \
        case O2C_ACT_GELU_ERF: v = v * (O2C_M(T, erf)(v * (T)0.70710678118654752440) + 1) / 2; break; \
        case O2C_ACT_GELU_TANH:                                                     \
            v = v * (O2C_M(T, tanh)((T)0.79788456080286535588 * (v + (T)0.044715 * v * v * v)) + 1) / 2; \
            break;                                                                  \
        case O2C_ACT_MISH: v = v * O2C_M(T, tanh)(v > 30 ? v : O2C_M(T, log1p)(O2C_M(T, exp)(v))); break;         \
        default: break;                                                             \
        }                                                                           \
        if (res == O2C_RES_AFTER) v += ((const T *)p->x[O2C_EPI_XRES])[i];          \
        return v;                                                                   \
    }

/*@ o2c_offset */
/* Row-major flat index i of a tensor with dims[0..rank) -> offset with the
 * given strides (0 stride: broadcast axis). */
O2C_HD static inline O2C_INLINE int64_t o2c_offset(int64_t i, int64_t rank, const int64_t *dims,
                                       const int64_t *strides)
{
    int64_t off = 0;
    for (int64_t d = rank - 1; d >= 0; d--) {
        int64_t q = i / dims[d];
        off += (i - q * dims[d]) * strides[d];
        i = q;
    }
    return off;
}

/*@ o2c_ix_get */
/* Element j of an int32 (ies 4) or int64 (ies 8) index tensor (Gather's,
 * GatherElements', ScatterND's indices, a loss's class labels). */
O2C_HD static inline O2C_INLINE int64_t o2c_ix_get(const unsigned char *ip, int64_t j, int64_t ies)
{
    if (ies == 8) {
        int64_t v;
        memcpy(&v, ip + j * 8, 8);
        return v;
    } else {
        int32_t v;
        memcpy(&v, ip + j * 4, 4);
        return (int64_t)v;
    }
}

/*@ o2c_win3 */
/* The loops of the 3-D window kernels (conv.h, pool.h, quant.h's
 * QLinearConv; 1-D and 2-D windows come as 3-D ones with leading dims of
 * size 1), over the geometry O2C_WIN3_GEOMETRY declares:
 * O2C_WIN3_GEOMETRY(IN, OUT, K, S, D, PB): the (depth, height, width)
 *   triples of the slots from IN (ID, IH, IW: the input), OUT (OD, OH,
 *   OW), K (KD, KH, KW: the window), S (SD, SH, SW: strides), D (DD, DH,
 *   DW: dilations) and PB (PD, PH, PW: pads at the beginning).
 * O2C_WIN3_OUT(i): output element i's place (od, oh, ow) and r, what is
 *   left of i (the plane: image and channel).
 * O2C_WIN_TAPS(k, n, x, len, x0, dil, ...): for each tap k < n of one
 *   window axis whose input position x = x0 + k * dil lies in [0, len),
 *   the statements ... (other taps read nothing: outside, zero padding). */
#define O2C_WIN3_GEOMETRY(IN, OUT, K, S, D, PB)                                     \
    const int64_t ID = p->k[(IN)], IH = p->k[(IN) + 1], IW = p->k[(IN) + 2];        \
    const int64_t OD = p->k[(OUT)], OH = p->k[(OUT) + 1], OW = p->k[(OUT) + 2];     \
    const int64_t KD = p->k[(K)], KH = p->k[(K) + 1], KW = p->k[(K) + 2];           \
    const int64_t SD = p->k[(S)], SH = p->k[(S) + 1], SW = p->k[(S) + 2];           \
    const int64_t DD = p->k[(D)], DH = p->k[(D) + 1], DW = p->k[(D) + 2];           \
    const int64_t PD = p->k[(PB)], PH = p->k[(PB) + 1], PW = p->k[(PB) + 2]
#define O2C_WIN3_OUT(i)                                                             \
    int64_t r = (i);                                                                \
    const int64_t ow = r % OW; r /= OW;                                             \
    const int64_t oh = r % OH; r /= OH;                                             \
    const int64_t od = r % OD; r /= OD
#define O2C_WIN_TAPS(k, n, x, len, x0, dil, ...)                                    \
    for (int64_t k = 0; k < (n); k++) {                                             \
        const int64_t x = (x0) + k * (dil);                                         \
        if (x < 0 || x >= (len)) continue;                                          \
        __VA_ARGS__                                                                 \
    }

/*@ o2c_epi_f32 */
O2C_EPI(o2c_epi_f32, float)
/*@ o2c_epi_f64 */
O2C_EPI(o2c_epi_f64, double)

/*@ o2c_v16 */
/* 16 floats in vector registers, for kernels whose natural block is
 * narrower than what the C compiler's vectorizer keeps in registers (gcc 12
 * keeps a 16-float accumulator array of a depthwise conv in memory: 15
 * GFLOP/s; these: 93). Chosen at C-compile time by the predefined macros:
 * one AVX-512 register, two AVX2 registers (with FMA), four NEON registers
 * (AArch64), else the portable array (O2C_V16_NATIVE 0), which kernels
 * avoid for their hot loops. o2c_v16_fma(acc, a, b) is acc + a * b, in one
 * rounding exactly where O2C_FMA_f32 is. */
#if defined(__AVX512F__) && defined(__FMA__) && !defined(__CUDACC__)
#include <immintrin.h>
#define O2C_V16_NATIVE 1
typedef __m512 o2c_v16;
static inline o2c_v16 o2c_v16_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void o2c_v16_store(float *p, o2c_v16 v) { _mm512_storeu_ps(p, v); }
static inline o2c_v16 o2c_v16_zero(void) { return _mm512_setzero_ps(); }
static inline o2c_v16 o2c_v16_fma(o2c_v16 acc, o2c_v16 a, o2c_v16 b) { return _mm512_fmadd_ps(a, b, acc); }
#elif defined(__AVX2__) && defined(__FMA__) && !defined(__CUDACC__)
#include <immintrin.h>
#define O2C_V16_NATIVE 1
typedef struct { __m256 lo, hi; } o2c_v16;
static inline o2c_v16 o2c_v16_load(const float *p) { o2c_v16 v; v.lo = _mm256_loadu_ps(p); v.hi = _mm256_loadu_ps(p + 8); return v; }
static inline void o2c_v16_store(float *p, o2c_v16 v) { _mm256_storeu_ps(p, v.lo); _mm256_storeu_ps(p + 8, v.hi); }
static inline o2c_v16 o2c_v16_zero(void) { o2c_v16 v; v.lo = v.hi = _mm256_setzero_ps(); return v; }
static inline o2c_v16 o2c_v16_fma(o2c_v16 acc, o2c_v16 a, o2c_v16 b)
{
    acc.lo = _mm256_fmadd_ps(a.lo, b.lo, acc.lo);
    acc.hi = _mm256_fmadd_ps(a.hi, b.hi, acc.hi);
    return acc;
}
#elif defined(__ARM_NEON) && defined(__aarch64__) && !defined(__CUDACC__)
#include <arm_neon.h>
#define O2C_V16_NATIVE 1
typedef struct { float32x4_t q[4]; } o2c_v16;
static inline o2c_v16 o2c_v16_load(const float *p)
{
    o2c_v16 v;
    for (int i = 0; i < 4; i++) v.q[i] = vld1q_f32(p + 4 * i);
    return v;
}
static inline void o2c_v16_store(float *p, o2c_v16 v)
{
    for (int i = 0; i < 4; i++) vst1q_f32(p + 4 * i, v.q[i]);
}
static inline o2c_v16 o2c_v16_zero(void)
{
    o2c_v16 v;
    for (int i = 0; i < 4; i++) v.q[i] = vdupq_n_f32(0.0f);
    return v;
}
static inline o2c_v16 o2c_v16_fma(o2c_v16 acc, o2c_v16 a, o2c_v16 b)
{
    for (int i = 0; i < 4; i++) acc.q[i] = vfmaq_f32(acc.q[i], a.q[i], b.q[i]);
    return acc;
}
#else
#define O2C_V16_NATIVE 0
typedef struct { float v[16]; } o2c_v16;
O2C_HD static inline o2c_v16 o2c_v16_load(const float *p)
{
    o2c_v16 v;
    for (int i = 0; i < 16; i++) v.v[i] = p[i];
    return v;
}
O2C_HD static inline void o2c_v16_store(float *p, o2c_v16 v)
{
    for (int i = 0; i < 16; i++) p[i] = v.v[i];
}
O2C_HD static inline o2c_v16 o2c_v16_zero(void)
{
    o2c_v16 v;
    for (int i = 0; i < 16; i++) v.v[i] = 0.0f;
    return v;
}
O2C_HD static inline o2c_v16 o2c_v16_fma(o2c_v16 acc, o2c_v16 a, o2c_v16 b)
{
    for (int i = 0; i < 16; i++) acc.v[i] = O2C_FMA_f32(acc.v[i], a.v[i], b.v[i]);
    return acc;
}
#endif

/*@ o2c_vexp_f32 */
/* exp, sigmoid and tanh for float loops the C compiler vectorizes: no
 * branches, no libm call, no table (the tiled recurrent kernels use them;
 * libm's expf and tanhf are calls that keep a loop scalar). Accuracy: a few
 * float ulps over the range the results are representable in; tanh's
 * absolute error is below 1e-7 everywhere.
 *
 * exp(x) = 2^n * exp(r), n = round(x / ln 2), r = x - n ln 2 with ln 2 in two
 * parts (the first has 9 significant bits, so n times it is exact), and
 * exp(r) for |r| <= ln(2)/2 by its Taylor polynomial to r^7 (truncation
 * below 1e-8 relative). 2^n stays a normal float: beyond the range exp
 * saturates at about 2^-126 and 2^127 (infinities too); NaN gives NaN. */
O2C_HD static inline O2C_INLINE float o2c_vexp_f32(float x)
{
    const float log2e = 1.44269504088896341f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    const uint32_t r_max = 0x3ec00000u;   /* the bits of 0.375, above ln(2)/2 and the rounding's slack */
    /* n = round(x / ln 2): for x / ln 2 > -128.5 the conversion's truncation
     * is floor; clamped in the integers to [-126, 127] (a value beyond int's
     * range converts to an unspecified int, C99 F.4, clamped as well) */
    int32_t t = (int32_t)(x * log2e + 128.5f);
    t = t < 2 ? 2 : t;
    t = t > 255 ? 255 : t;
    const int32_t n = t - 128;
    const float nf = (float)n;
    float r = (x - nf * ln2_hi) - nf * ln2_lo;
    /* |r| clamped to 0.375 on its bits (an integer min: no branch, which
     * would keep gcc from vectorizing): x beyond [-87.3, 88.7], infinities
     * included, gives about 2^-126 or 2^127 instead of 0 or infinity */
    uint32_t rb;
    memcpy(&rb, &r, sizeof rb);
    uint32_t mag = rb & 0x7fffffffu;
    mag = mag > r_max ? r_max : mag;
    rb = (rb & 0x80000000u) | mag;
    memcpy(&r, &rb, sizeof r);
    float e = 1.0f / 5040.0f;
    e = e * r + 1.0f / 720.0f;
    e = e * r + 1.0f / 120.0f;
    e = e * r + 1.0f / 24.0f;
    e = e * r + 1.0f / 6.0f;
    e = e * r + 0.5f;
    e = e * r + 1.0f;
    e = e * r + 1.0f;
    const int32_t bits = (n + 127) * (1 << 23);
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    const float y = e * scale;
    return x == x ? y : x + y * 0.0f;   /* NaN stays NaN (both arms read y: branch-free) */
}

/*@ o2c_vsigmoid_f32 needs o2c_vexp_f32 */
O2C_HD static inline O2C_INLINE float o2c_vsigmoid_f32(float x)
{
    return 1.0f / (1.0f + o2c_vexp_f32(-x));
}

/*@ o2c_vtanh_f32 needs o2c_vexp_f32 */
/* tanh(x) = sign(x) (1 - 2 / (exp(2|x|) + 1)); near 0, where that form
 * loses relative accuracy, the odd Taylor polynomial to x^9 (|x| < 0.3125:
 * truncation below 1e-7 relative). */
O2C_HD static inline O2C_INLINE float o2c_vtanh_f32(float x)
{
    const float a = fabsf(x);
    const float e = o2c_vexp_f32(2.0f * a);
    const float big = 1.0f - 2.0f / (e + 1.0f);
    const float x2 = x * x;
    float s = 62.0f / 2835.0f;
    s = s * x2 - 17.0f / 315.0f;
    s = s * x2 + 2.0f / 15.0f;
    s = s * x2 - 1.0f / 3.0f;
    /* (the "- 0.0f * e", zero since e is finite, keeps gcc from moving the
     * exp into a branch, which the vectorizer refuses) */
    const float small = x + x * x2 * s - 0.0f * e;
    return a < 0.3125f ? small : copysignf(big, x);
}
