/* onnx2c runtime core: the kernel calling convention shared by the compiler
 * (constant folding), the generated C and the generated CUDA.
 *
 * Every kernel has the signature
 *     void kernel(o2c_int i0, o2c_int i1, const o2c_p *p)
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

/* Index arithmetic: o2c_int, the type of every index, size, stride and
 * shape parameter (k[]) of the kernels. 64-bit unless the file says
 * O2C_INDEX_BITS 32: the compiler writes that where every size the model
 * addresses (the arena, constants, graph inputs and outputs, each call's
 * index space and parameters) fits in 31 bits, which --target cortex-m
 * asks for (a 32-bit core divides 32-bit integers in one instruction and
 * 64-bit ones in a run-time library call, __aeabi_ldivmod) and
 * --index-bits 32 forces. Tensor data of type int64 stays int64_t. */
#if defined(O2C_INDEX_BITS) && O2C_INDEX_BITS == 32
typedef int32_t o2c_int;
#else
typedef int64_t o2c_int;
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
    o2c_int k[O2C_NK];          /* integer parameters (shapes, strides) */
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
/* O2C_VM(T, fn) for exp, log, log1p, tanh, erf: the vectorizable float
 * functions (o2c_vexp_f32, ...: below) for float, libm's for double */
#define O2C_VM(T, fn) O2C_VM_##T(fn)
#define O2C_VM_float(fn) o2c_v##fn##_f32
#define O2C_VM_double(fn) fn
#define O2C_PF(T, p, j) O2C_PF_##T(p, j)
/* c ? a : b, both computed: for float on the bits (o2c_vsel_f32, a chunk
 * its users need), a choice gcc if-converts without masked vectors */
#define O2C_SEL(T, c, a, b) O2C_SEL_##T(c, a, b)
#define O2C_SEL_float(c, a, b) o2c_vsel_f32(c, a, b)
#define O2C_SEL_double(c, a, b) ((c) ? (a) : (b))
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

typedef void (*o2c_kernel_fn)(o2c_int i0, o2c_int i1, const o2c_p *p);

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
/* a function a model's kernels may leave unused: the epilogue's element
 * and row forms (O2C_EPI, O2C_EPI_ROW), of which a kernel calls one or both
 * (clang and nvcc warn of an unused static function, -Werror in the tests) */
#if defined(__GNUC__) || defined(__CUDACC__)
#define O2C_MAYBE_UNUSED __attribute__((unused))
#else
#define O2C_MAYBE_UNUSED
#endif
/* the generated schedule's step functions (o2c_step_I: a kernel call
 * each) stay functions of their own: inlined into one function, hundreds
 * of kernels' loops pass the C compiler's limits for register allocation.
 * GCC: noipa, not only noinline: GCC 12.2 at -O1 removed the call of a
 * strided copy into every 4th float of a buffer that the next two calls
 * fill at the other offsets, as if they overwrote it (its interprocedural
 * summaries of what each step writes; the ONNX node test
 * affine_grid_2d_align_corners_expanded); noipa hides the body from the
 * caller's analysis */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && __GNUC__ >= 8
#define O2C_STEP __attribute__((noipa))
#elif defined(__GNUC__) && !defined(__CUDACC__)
#define O2C_STEP __attribute__((noinline))
#else
#define O2C_STEP
#endif
/* a helper kept out of its caller, so that each function's loop has the
 * registers to itself (the Cortex-M integer kernels) */
#if defined(__GNUC__) && !defined(__CUDACC__)
#define O2C_NOINLINE __attribute__((noinline))
#else
#define O2C_NOINLINE
#endif
#define O2C_KERNEL(name) O2C_HD static inline O2C_INLINE void name(o2c_int i0, o2c_int i1, const o2c_p *p)
#define O2C_FOR(i) for (o2c_int i = i0; i < i1; i++)

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
/* 1 where the C compiler targets AVX2 with FMA but not AVX-512: the
 * register tiles run as sub-tiles of eight ymm accumulators (o2c_tile_product) */
#if defined(__AVX__) && defined(__FMA__) && !defined(__AVX512F__) && !defined(__CUDACC__)
#define O2C_TILE_AVX2 1
#else
#define O2C_TILE_AVX2 0
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

/* Activation X (an O2C_ACT_* constant) of v, the epilogue's one description
 * of each formula (those of the element-wise kernels, in type T): A, B the
 * O2C_EPI_FA, _FB parameters, SL PRelu's slope of the channel. With X a
 * constant the chain folds to its one formula. */
#define O2C_ACT_F(T, X, v, A, B, SL)                                                \
    ((X) == O2C_ACT_RELU ? ((v) > 0 ? (v) : 0)                                      \
     : (X) == O2C_ACT_CLIP ? ((v) < (A) ? (A) : ((v) > (B) ? (B) : (v)))            \
     : (X) == O2C_ACT_LEAKYRELU ? O2C_SEL(T, (v) >= 0, (v), (A) * (v))              \
     : (X) == O2C_ACT_PRELU ? O2C_SEL(T, (v) >= 0, (v), (v) * (SL))                 \
     : (X) == O2C_ACT_SIGMOID ? 1 / (1 + O2C_VM(T, exp)(-(v)))                      \
     : (X) == O2C_ACT_TANH ? O2C_VM(T, tanh)(v)                                     \
     : (X) == O2C_ACT_HARDSIGMOID                                                   \
         ? O2C_SEL(T, (A) * (v) + (B) <= 0, 0, O2C_SEL(T, (A) * (v) + (B) >= 1, 1, (A) * (v) + (B))) \
     : (X) == O2C_ACT_HARDSWISH                                                     \
         ? O2C_SEL(T, (v) / 6 + (T)0.5 <= 0, 0, O2C_SEL(T, (v) / 6 + (T)0.5 >= 1, (v), (v) * ((v) / 6 + (T)0.5))) \
     : (X) == O2C_ACT_SILU ? (v) * (1 / (1 + O2C_VM(T, exp)(-(v))))                 \
     : (X) == O2C_ACT_GELU_ERF ? (v) * (O2C_VM(T, erf)((v) * (T)0.70710678118654752440) + 1) / 2 \
     : (X) == O2C_ACT_GELU_TANH                                                     \
         ? (v) * (O2C_VM(T, tanh)((T)0.79788456080286535588 * ((v) + (T)0.044715 * (v) * (v) * (v))) + 1) / 2 \
     : (X) == O2C_ACT_MISH                                                          \
         ? (v) * O2C_VM(T, tanh)(((v) <= 0 ? 0 : (v)) + O2C_VM(T, log1p)(O2C_VM(T, exp)(-O2C_M(T, fabs)(v)))) \
     : (v))
/* CASE(T, X) for every activation but O2C_ACT_NONE */
#define O2C_ACT_CASES(CASE, T)                                                      \
    CASE(T, O2C_ACT_RELU) CASE(T, O2C_ACT_CLIP) CASE(T, O2C_ACT_LEAKYRELU) CASE(T, O2C_ACT_PRELU) \
    CASE(T, O2C_ACT_SIGMOID) CASE(T, O2C_ACT_TANH) CASE(T, O2C_ACT_HARDSIGMOID)     \
    CASE(T, O2C_ACT_HARDSWISH) CASE(T, O2C_ACT_SILU) CASE(T, O2C_ACT_GELU_ERF)      \
    CASE(T, O2C_ACT_GELU_TANH) CASE(T, O2C_ACT_MISH)
/* PRelu's slope of channel ch (0 for the other activations, which have none) */
#define O2C_EPI_SLOPE(T, p, ch)                                                     \
    (p->k[O2C_EPI_ACT] == O2C_ACT_PRELU                                             \
         ? ((const T *)p->x[O2C_EPI_XSLOPE])[p->k[O2C_EPI_NSLOPE] == 1 ? 0 : (ch)] : (T)0)

/* The epilogue of a linear kernel's output element v (flat index i,
 * channel ch): residual and activation as the O2C_EPI_* slots say. */
#define O2C_EPI_CASE1(T, X)                                                         \
    case X: v = O2C_ACT_F(T, X, v, A, B, sl); break;
#define O2C_EPI(NAME, T)                                                            \
    O2C_HD static inline O2C_INLINE O2C_MAYBE_UNUSED T NAME(T v, o2c_int i, o2c_int ch, const o2c_p *p) \
    {                                                                               \
        const o2c_int res = p->k[O2C_EPI_RES];                                      \
        const T A = O2C_PF(T, p, O2C_EPI_FA), B = O2C_PF(T, p, O2C_EPI_FB);         \
        const T sl = O2C_EPI_SLOPE(T, p, ch);                                       \
        if (res == O2C_RES_BEFORE) v += ((const T *)p->x[O2C_EPI_XRES])[i];         \
        switch (p->k[O2C_EPI_ACT]) {                                                \
            O2C_ACT_CASES(O2C_EPI_CASE1, T)                                         \
        default: break;                                                             \
        }                                                                           \
        if (res == O2C_RES_AFTER) v += ((const T *)p->x[O2C_EPI_XRES])[i];          \
        return v;                                                                   \
    }
/* The same epilogue over a row: the n outputs y[0 .. n) of channel ch,
 * flat indices i .. i + n - 1, in place. One switch a row, the loop of each
 * activation its own (the C compiler vectorizes it: the vector exp, tanh,
 * erf and log1p are branch-free), where the element form's switch in a
 * tile's store loop kept it scalar (a 3x3 conv of 16 -> 32 channels on
 * 80 x 80 pixels with SiLU: 0.27 ms of epilogue a call). NAME_row beside
 * the element form NAME: the kernels call EPI##_row. */
#define O2C_EPI_ROW_CASE(T, X)                                                      \
    case X:                                                                         \
        if (!res)                                                                   \
            for (o2c_int j = 0; j < n; j++) y[j] = O2C_ACT_F(T, X, y[j], A, B, sl); \
        else if (res == O2C_RES_BEFORE)                                             \
            for (o2c_int j = 0; j < n; j++) {                                       \
                const T v = y[j] + r[j];                                            \
                y[j] = O2C_ACT_F(T, X, v, A, B, sl);                                \
            }                                                                       \
        else                                                                        \
            for (o2c_int j = 0; j < n; j++) y[j] = O2C_ACT_F(T, X, y[j], A, B, sl) + r[j]; \
        break;
#define O2C_EPI_ROW(NAME, T)                                                        \
    O2C_HD static inline O2C_MAYBE_UNUSED void NAME(T *y, o2c_int n, o2c_int i, o2c_int ch, const o2c_p *p) \
    {                                                                               \
        const o2c_int res = p->k[O2C_EPI_RES];                                      \
        const T A = O2C_PF(T, p, O2C_EPI_FA), B = O2C_PF(T, p, O2C_EPI_FB);         \
        const T sl = O2C_EPI_SLOPE(T, p, ch);                                       \
        const T *r = res ? (const T *)p->x[O2C_EPI_XRES] + i : (const T *)0;       \
        switch (p->k[O2C_EPI_ACT]) {                                                \
            O2C_ACT_CASES(O2C_EPI_ROW_CASE, T)                                      \
        default:                                                                    \
            if (res)                                                                \
                for (o2c_int j = 0; j < n; j++) y[j] += r[j];                       \
            break;                                                                  \
        }                                                                           \
    }

/*@ o2c_tile_product */
/* The register tiles of the GEMM-like kernels (panel and tiled convs,
 * Winograd, the tiled MatMul) are written for 32 vector registers of 16
 * floats (AVX-512: 8 x 32 accumulators in 16 registers). Built for AVX2,
 * 16 registers of 8 floats, the same tile needs 32 and the C compiler
 * spills every accumulator to the stack, or vectorizes along k with
 * shuffles (an 8 x 32 panel conv at 18 GFLOP/s on Zen 3, a 4 x 16 one at
 * 4). O2C_TILE_PRODUCT(acc, MR, NR, K, W, WSK, WSI, R, RSK) adds
 *   acc[i][j] += sum over k < K of W[k WSK + i WSI] * R[k RSK + j]
 * to a float tile acc[MR][NR], in k's order for every output (the same
 * bits as the loop): on AVX2 (without AVX-512) by sub-tiles of eight ymm
 * accumulators with explicit FMAs, where MR and NR are multiples of 4 and
 * 16: 2 x 32 where NR is a multiple of 32 (each k streams a whole 32-float
 * row of R: ddddocr_crnn's 25 x 1024 x 8210 Gemm 12.3 -> 9.5 ms against
 * 4 x 16, whose halves of a packed row each read every other cache line),
 * else 4 x 16; elsewhere by the loop the C compiler vectorizes. */
#if O2C_TILE_AVX2
#include <immintrin.h>
#define O2C_TILE_SPLIT(MR, NR) ((MR) % 4 == 0 && (NR) % 16 == 0)
/* a 4 x 16 float tile in eight ymm registers o2c_cIJ (row I, half J):
 * loaded from acc (rows AS floats apart), plus w[i WSI] x r[0..15] for
 * each row i, stored back */
#define O2C_T416_LOAD(acc, AS)                                                      \
    __m256 o2c_c00 = _mm256_loadu_ps(acc), o2c_c01 = _mm256_loadu_ps((acc) + 8);    \
    __m256 o2c_c10 = _mm256_loadu_ps((acc) + (AS)), o2c_c11 = _mm256_loadu_ps((acc) + (AS) + 8); \
    __m256 o2c_c20 = _mm256_loadu_ps((acc) + 2 * (AS)), o2c_c21 = _mm256_loadu_ps((acc) + 2 * (AS) + 8); \
    __m256 o2c_c30 = _mm256_loadu_ps((acc) + 3 * (AS)), o2c_c31 = _mm256_loadu_ps((acc) + 3 * (AS) + 8)
#define O2C_T416_FMA(w, WSI, r)                                                     \
    {                                                                               \
        const __m256 o2c_r0 = _mm256_loadu_ps(r), o2c_r1 = _mm256_loadu_ps((r) + 8); \
        __m256 o2c_b = _mm256_broadcast_ss(w);                                      \
        o2c_c00 = _mm256_fmadd_ps(o2c_b, o2c_r0, o2c_c00);                          \
        o2c_c01 = _mm256_fmadd_ps(o2c_b, o2c_r1, o2c_c01);                          \
        o2c_b = _mm256_broadcast_ss((w) + (WSI));                                   \
        o2c_c10 = _mm256_fmadd_ps(o2c_b, o2c_r0, o2c_c10);                          \
        o2c_c11 = _mm256_fmadd_ps(o2c_b, o2c_r1, o2c_c11);                          \
        o2c_b = _mm256_broadcast_ss((w) + 2 * (WSI));                               \
        o2c_c20 = _mm256_fmadd_ps(o2c_b, o2c_r0, o2c_c20);                          \
        o2c_c21 = _mm256_fmadd_ps(o2c_b, o2c_r1, o2c_c21);                          \
        o2c_b = _mm256_broadcast_ss((w) + 3 * (WSI));                               \
        o2c_c30 = _mm256_fmadd_ps(o2c_b, o2c_r0, o2c_c30);                          \
        o2c_c31 = _mm256_fmadd_ps(o2c_b, o2c_r1, o2c_c31);                          \
    }
#define O2C_T416_STORE(acc, AS)                                                     \
    _mm256_storeu_ps(acc, o2c_c00), _mm256_storeu_ps((acc) + 8, o2c_c01);           \
    _mm256_storeu_ps((acc) + (AS), o2c_c10), _mm256_storeu_ps((acc) + (AS) + 8, o2c_c11); \
    _mm256_storeu_ps((acc) + 2 * (AS), o2c_c20), _mm256_storeu_ps((acc) + 2 * (AS) + 8, o2c_c21); \
    _mm256_storeu_ps((acc) + 3 * (AS), o2c_c30), _mm256_storeu_ps((acc) + 3 * (AS) + 8, o2c_c31)
static inline O2C_INLINE void o2c_tile4x16_f32(float *acc, o2c_int as, o2c_int K, const float *w, o2c_int wsk,
                                               o2c_int wsi, const float *r, o2c_int rsk)
{
    O2C_T416_LOAD(acc, as);
    for (o2c_int k = 0; k < K; k++, w += wsk, r += rsk) O2C_T416_FMA(w, wsi, r)
    O2C_T416_STORE(acc, as);
}
static inline O2C_INLINE void o2c_tile2x32_f32(float *acc, o2c_int as, o2c_int K, const float *w, o2c_int wsk,
                                               o2c_int wsi, const float *r, o2c_int rsk)
{
    __m256 c00 = _mm256_loadu_ps(acc), c01 = _mm256_loadu_ps(acc + 8), c02 = _mm256_loadu_ps(acc + 16), c03 = _mm256_loadu_ps(acc + 24);
    __m256 c10 = _mm256_loadu_ps(acc + as), c11 = _mm256_loadu_ps(acc + as + 8), c12 = _mm256_loadu_ps(acc + as + 16), c13 = _mm256_loadu_ps(acc + as + 24);
    for (o2c_int k = 0; k < K; k++, w += wsk, r += rsk) {
        const __m256 r0 = _mm256_loadu_ps(r), r1 = _mm256_loadu_ps(r + 8), r2 = _mm256_loadu_ps(r + 16), r3 = _mm256_loadu_ps(r + 24);
        __m256 b = _mm256_broadcast_ss(w);
        c00 = _mm256_fmadd_ps(b, r0, c00);
        c01 = _mm256_fmadd_ps(b, r1, c01);
        c02 = _mm256_fmadd_ps(b, r2, c02);
        c03 = _mm256_fmadd_ps(b, r3, c03);
        b = _mm256_broadcast_ss(w + wsi);
        c10 = _mm256_fmadd_ps(b, r0, c10);
        c11 = _mm256_fmadd_ps(b, r1, c11);
        c12 = _mm256_fmadd_ps(b, r2, c12);
        c13 = _mm256_fmadd_ps(b, r3, c13);
    }
    _mm256_storeu_ps(acc, c00), _mm256_storeu_ps(acc + 8, c01), _mm256_storeu_ps(acc + 16, c02), _mm256_storeu_ps(acc + 24, c03);
    _mm256_storeu_ps(acc + as, c10), _mm256_storeu_ps(acc + as + 8, c11), _mm256_storeu_ps(acc + as + 16, c12), _mm256_storeu_ps(acc + as + 24, c13);
}
#define O2C_TILE_PRODUCT_SPLIT(acc, MR, NR, USED, K, W, WSK, WSI, R, RSK)           \
    if (O2C_TILE_SPLIT(MR, NR) && (NR) % 32 == 0) {                                 \
        for (int o2c_si = 0; o2c_si < (USED); o2c_si += 2)                          \
            for (int o2c_sj = 0; o2c_sj < (NR); o2c_sj += 32)                       \
                o2c_tile2x32_f32(&acc[o2c_si][o2c_sj], (NR), (K), (W) + o2c_si * (WSI), (WSK), (WSI), \
                                 (R) + o2c_sj, (RSK));                              \
    } else if (O2C_TILE_SPLIT(MR, NR)) {                                            \
        for (int o2c_si = 0; o2c_si < (USED); o2c_si += 4)                          \
            for (int o2c_sj = 0; o2c_sj < (NR); o2c_sj += 16)                       \
                o2c_tile4x16_f32(&acc[o2c_si][o2c_sj], (NR), (K), (W) + o2c_si * (WSI), (WSK), (WSI), \
                                 (R) + o2c_sj, (RSK));                              \
    } else
#else
#define O2C_TILE_PRODUCT_SPLIT(acc, MR, NR, USED, K, W, WSK, WSI, R, RSK)
#endif
#define O2C_TILE_PRODUCT(acc, MR, NR, K, W, WSK, WSI, R, RSK)                       \
    O2C_TILE_PRODUCT_ROWS(acc, MR, NR, MR, K, W, WSK, WSI, R, RSK)
/* the same where only the first USED rows are needed: the sub-tiles below
 * them are skipped (the loop computes them all) */
#define O2C_TILE_PRODUCT_ROWS(acc, MR, NR, USED, K, W, WSK, WSI, R, RSK)            \
    O2C_TILE_PRODUCT_SPLIT(acc, MR, NR, USED, K, W, WSK, WSI, R, RSK)               \
    for (o2c_int kk = 0; kk < (K); kk++) {                                          \
        const float *o2c_rk = (R) + kk * (RSK), *o2c_wk = (W) + kk * (WSK);         \
        for (int i = 0; i < (MR); i++) {                                            \
            const float o2c_w = o2c_wk[i * (WSI)];                                  \
            for (int j = 0; j < (NR); j++) acc[i][j] = O2C_FMA_f32(acc[i][j], o2c_w, o2c_rk[j]); \
        }                                                                           \
    }

/*@ o2c_offset */
/* Row-major flat index i of a tensor with dims[0..rank) -> offset with the
 * given strides (0 stride: broadcast axis). */
O2C_HD static inline O2C_INLINE o2c_int o2c_offset(o2c_int i, o2c_int rank, const o2c_int *dims,
                                       const o2c_int *strides)
{
    o2c_int off = 0;
    for (o2c_int d = rank - 1; d >= 0; d--) {
        o2c_int q = i / dims[d];
        off += (i - q * dims[d]) * strides[d];
        i = q;
    }
    return off;
}

/*@ o2c_ix_get */
/* Element j of an int32 (ies 4) or int64 (ies 8) index tensor (Gather's,
 * GatherElements', ScatterND's indices, a loss's class labels). */
O2C_HD static inline O2C_INLINE o2c_int o2c_ix_get(const unsigned char *ip, o2c_int j, o2c_int ies)
{
    if (ies == 8) {   /* an int64 element (a 32-bit o2c_int takes its value where it fits) */
        int64_t v;
        memcpy(&v, ip + j * 8, 8);
#if defined(O2C_INDEX_BITS) && O2C_INDEX_BITS == 32
        if (v > INT32_MAX || v < -INT32_MAX) v = v < 0 ? -INT32_MAX : INT32_MAX;   /* still out of range */
#endif
        return (o2c_int)v;
    } else {
        int32_t v;
        memcpy(&v, ip + j * 4, 4);
        return (o2c_int)v;
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
    const o2c_int ID = p->k[(IN)], IH = p->k[(IN) + 1], IW = p->k[(IN) + 2];        \
    const o2c_int OD = p->k[(OUT)], OH = p->k[(OUT) + 1], OW = p->k[(OUT) + 2];     \
    const o2c_int KD = p->k[(K)], KH = p->k[(K) + 1], KW = p->k[(K) + 2];           \
    const o2c_int SD = p->k[(S)], SH = p->k[(S) + 1], SW = p->k[(S) + 2];           \
    const o2c_int DD = p->k[(D)], DH = p->k[(D) + 1], DW = p->k[(D) + 2];           \
    const o2c_int PD = p->k[(PB)], PH = p->k[(PB) + 1], PW = p->k[(PB) + 2]
#define O2C_WIN3_OUT(i)                                                             \
    o2c_int r = (i);                                                                \
    const o2c_int ow = r % OW; r /= OW;                                             \
    const o2c_int oh = r % OH; r /= OH;                                             \
    const o2c_int od = r % OD; r /= OD
#define O2C_WIN_TAPS(k, n, x, len, x0, dil, ...)                                    \
    for (o2c_int k = 0; k < (n); k++) {                                             \
        const o2c_int x = (x0) + k * (dil);                                         \
        if (x < 0 || x >= (len)) continue;                                          \
        __VA_ARGS__                                                                 \
    }

/*@ o2c_vsel_f32 */
/* a where c, else b: on the bits, with a mask (a float choice whose arm
 * is an operation only one side needs is one gcc will not if-convert
 * without masked vectors, since that operation may raise a flag, and gcc
 * moves an operation computed before the choice into its arm: AVX2 builds
 * kept these functions scalar, a GELU at 0.6 GFLOP/s) */
O2C_HD static inline O2C_INLINE float o2c_vsel_f32(int c, float a, float b)
{
    uint32_t ab, bb;
    memcpy(&ab, &a, sizeof ab);
    memcpy(&bb, &b, sizeof bb);
    const uint32_t m = 0u - (uint32_t)(c != 0);
    ab = (ab & m) | (bb & ~m);
    memcpy(&a, &ab, sizeof a);
    return a;
}

/*@ o2c_vexp_f32 needs o2c_vsel_f32 */
/* Float math for loops the C compiler vectorizes: exp, log, log1p, tanh,
 * erf, sigmoid. No branch, no libm call, no table: both arms of every
 * choice are computed and one is selected, so a loop calling them becomes
 * vector code at -O2/-O3 (libm's expf, tanhf, erff are calls that keep a
 * loop scalar). The float kernels use them wherever they call these
 * functions: the epilogues of the linear kernels (O2C_EPI), the elementwise
 * kernels and fused chains (expr_for_type), softmax, the recurrent cells.
 * Largest error against the exact result, over every float input
 * (tests/unit/test_vmath.c; `make vmath-exhaustive`; docs/HACKING.md
 * "Vectorized math"), in units in the last place of a normal result,
 * without fused multiply-add: exp 1.22, log 1.97, log1p 2.47, tanh 2.43,
 * erf 1.40, sigmoid 2.82 (a subnormal result within one subnormal step);
 * the special values as C99's Annex F (exp(-inf) = 0, exp of a large x =
 * inf, log(0) = -inf, log(x < 0) = NaN, NaN gives NaN, signed zeros kept).
 *
 * exp(x) = 2^n exp(r), n = round(x / ln 2) clamped to [-151, 128], r = x - n
 * ln 2 with ln 2 in two parts (the first has 9 significant bits, so n
 * times it is exact), |r| clamped to 0.375 (beyond the range: the result
 * over- or underflows anyway, infinities included), exp(r) by its Taylor
 * polynomial to r^7 (truncation below 1e-8 relative), and 2^n as two
 * normal powers of two, so that subnormal results are rounded once. */
/* v with its magnitude at most that of the float whose bits are max_bits,
 * its sign kept; on the bits (an integer min: float comparisons in a row
 * make gcc branch, which the vectorizer refuses); a NaN's magnitude is the
 * largest, so it becomes the bound */
O2C_HD static inline O2C_INLINE float o2c_vclampmag_f32(float v, uint32_t max_bits)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    const uint32_t mag = b & 0x7fffffffu;
    b = (b & 0x80000000u) | (mag > max_bits ? max_bits : mag);
    memcpy(&v, &b, sizeof v);
    return v;
}

O2C_HD static inline O2C_INLINE float o2c_vexp_f32(float x)
{
    const float log2e = 1.44269504088896341f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    const uint32_t z_max = 0x43170000u, r_max = 0x3ec00000u;   /* the bits of 151 and of 0.375 */
    /* n = round(x / ln 2) in [-151, 128]: |x / ln 2| clamped to 151 first
     * (a NaN too), so the conversion is defined; the truncation of a
     * positive value is floor. |r| clamped to 0.375: beyond the range the
     * result over- or underflows anyway */
    const float z = o2c_vclampmag_f32(x * log2e, z_max);
    int32_t n = (int32_t)(z + 151.5f) - 151;
    n = n > 128 ? 128 : n;
    const float nf = (float)n;
    const float r = o2c_vclampmag_f32((x - nf * ln2_hi) - nf * ln2_lo, r_max);
    float e = 1.0f / 5040.0f;
    e = e * r + 1.0f / 720.0f;
    e = e * r + 1.0f / 120.0f;
    e = e * r + 1.0f / 24.0f;
    e = e * r + 1.0f / 6.0f;
    e = e * r + 0.5f;
    e = e * r + 1.0f;
    e = e * r + 1.0f;
    /* 2^n = 2^n1 2^n2, n1 = floor((n + 152) / 2) - 76 in [-76, 64], n2 = n
     * - n1 in [-75, 64]: both normal. At n = -151 the result (below
     * 2^-150.5) rounds to 0: 2^n1 is taken as 0, so that no subnormal
     * intermediate is made (an arithmetic assist that costs three times
     * the whole function on x86: softmax over masked scores) */
    const int32_t n1 = (n + 152) / 2 - 76, n2 = n - n1;
    const int32_t b1 = n > -151 ? (n1 + 127) * (1 << 23) : 0, b2 = (n2 + 127) * (1 << 23);
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    const float y = (e * s1) * s2;
    return o2c_vsel_f32(x == x, y, x + y);   /* NaN stays NaN (branch-free) */
}

/*@ o2c_vsigmoid_f32 needs o2c_vexp_f32 */
/* 1 / (1 + exp(-x)), for x < 0 written e / (1 + e) with e = exp(x), so that
 * the results below 2^-126 are the subnormals they are (1 / (1 + exp(-x))
 * would be 1 / inf) */
O2C_HD static inline O2C_INLINE float o2c_vsigmoid_f32(float x)
{
    const float e = o2c_vexp_f32(-fabsf(x)), s = 1.0f / (1.0f + e);
    return o2c_vsel_f32(x >= 0.0f, s, e * s);
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
    /* (the "- 0.0f * e", zero where this arm is taken, keeps gcc from
     * moving the exp into a branch, which the vectorizer refuses) */
    const float small = x + x * x2 * s - 0.0f * e;
    return copysignf(o2c_vsel_f32(a < 0.3125f, small, big), x);   /* tanh is odd: -0 stays -0 */
}

/*@ o2c_vlog_f32 needs o2c_vsel_f32 */
/* log(x) = e ln 2 + log(m), x = m 2^e with m in [sqrt(1/2), sqrt(2)) (a
 * subnormal x scaled by 2^23 first); log(m) = 2 atanh(s), s = (m - 1) /
 * (m + 1), |s| <= 0.172, by its odd series to s^11 (truncation below 1e-10
 * relative); ln 2 in two parts (e times the first is exact). The special
 * cases are chosen on the bits (integer selects: float comparisons in a
 * row make gcc branch). */
O2C_HD static inline O2C_INLINE float o2c_vlog_f32(float x)
{
    const float ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    const int sub = b < 0x00800000u;   /* +0 or a positive subnormal */
    const float xs = o2c_vsel_f32(sub, x * 8388608.0f, x);
    uint32_t bs;
    memcpy(&bs, &xs, sizeof bs);
    /* m in [1, 2) from the mantissa; above sqrt(2) halved */
    const uint32_t mb = (bs & 0x007fffffu) | 0x3f800000u;
    const int big = mb > 0x3fb504f3u;   /* the bits of sqrt(2) */
    const uint32_t mh = big ? mb - 0x00800000u : mb;
    float m;
    memcpy(&m, &mh, sizeof m);
    const int32_t e = (int32_t)((bs >> 23) & 0xffu) - 127 + big - (sub ? 23 : 0);
    const float s = (m - 1.0f) / (m + 1.0f), z = s * s;
    float p = 2.0f / 11.0f;
    p = p * z + 2.0f / 9.0f;
    p = p * z + 2.0f / 7.0f;
    p = p * z + 2.0f / 5.0f;
    p = p * z + 2.0f / 3.0f;
    const float ef = (float)e;
    const float lm = 2.0f * s + s * z * p;
    const float y = ef * ln2_hi + (lm + ef * ln2_lo);
    /* the special results are made from y's bits (every arm reads y: gcc
     * would otherwise move y's division into a branch, and a branch keeps
     * the loop scalar): inf and +-0 give y of their sign (88.7, -104) as
     * +-inf, NaN and x < 0 give y as a NaN */
    uint32_t yb;
    memcpy(&yb, &y, sizeof yb);
    const uint32_t inf_y = (yb & 0x80000000u) | 0x7f800000u;
    yb = b > 0x7f800000u ? (yb | 0x7fc00000u) : yb;
    yb = b == 0x7f800000u || (b & 0x7fffffffu) == 0 ? inf_y : yb;
    float r;
    memcpy(&r, &yb, sizeof r);
    return r;
}

/*@ o2c_vlog1p_f32 needs o2c_vlog_f32 */
/* log1p(u) = log(m) + (u - (m - 1)) / m, m = 1 + u rounded: the second term
 * is the rounding's part (m - 1 is exact), so small u keep their relative
 * accuracy. An infinite u is computed as 2^100 (inf - inf would be NaN),
 * its result made inf, and u = -1 gives -inf (both from y's bits, as in
 * log). */
O2C_HD static inline O2C_INLINE float o2c_vlog1p_f32(float u)
{
    const uint32_t big = 0x71800000u;   /* the bits of 2^100 */
    uint32_t ub;
    memcpy(&ub, &u, sizeof ub);
    const uint32_t cb = ub == 0x7f800000u ? big : ub;
    float c;
    memcpy(&c, &cb, sizeof c);
    const float m = 1.0f + c;
    const float y = o2c_vlog_f32(m) + (c - (m - 1.0f)) / m;
    uint32_t mb, yb;
    memcpy(&mb, &m, sizeof mb);
    memcpy(&yb, &y, sizeof yb);
    yb = ub == 0x7f800000u ? (yb | 0x7f800000u) & 0xff800000u : yb;       /* y = 69.3: inf */
    yb = (mb & 0x7fffffffu) == 0 ? (yb | 0xff800000u) & 0xff800000u : yb; /* -inf */
    float r;
    memcpy(&r, &yb, sizeof r);
    return copysignf(r, u);   /* log1p has u's sign: -0 stays -0 (log(1) + -0 is +0) */
}

/*@ o2c_verf_f32 needs o2c_vexp_f32 */
/* erf(x): for |x| < 1, x + x P(x^2) (P of degree 6, least squares for
 * erf(x)/x - 1); for |x| >= 1, sign(x) (1 - exp(-min(x^2, 16)) Q(1/|x|)) (Q of
 * degree 8, least squares for erfc(a) exp(a^2) on a in [1, 4]; past 4,
 * erf rounds to +-1 in float, which the same expression gives). The
 * coefficients are fits made for this function (relative error below 1e-8
 * on their interval). */
O2C_HD static inline O2C_INLINE float o2c_verf_f32(float x)
{
    const float a = fabsf(x), z = x * x;
    float p = 7.898066371e-05f;
    p = p * z - 8.024311698e-04f;
    p = p * z + 5.190048821e-03f;
    p = p * z - 2.685480602e-02f;
    p = p * z + 1.128361236e-01f;
    p = p * z - 3.761262884e-01f;
    p = p * z + 1.283791665e-01f;
    const float small = x + x * p;
    const float t = 1.0f / o2c_vsel_f32(a > 1.0f, a, 1.0f);   /* a NaN gives 1, selected away below */
    float q = -1.007641350e-02f;
    q = q * t + 3.165923552e-02f;
    q = q * t + 1.720391421e-02f;
    q = q * t - 2.342589087e-01f;
    q = q * t + 4.915410884e-01f;
    q = q * t - 4.692467668e-01f;
    q = q * t + 4.135375550e-02f;
    q = q * t + 5.591441379e-01f;
    q = q * t + 2.635122419e-04f;
    /* exp(-x^2) with x^2 at most 16: past |x| = 4 erf rounds to +-1 either
     * way (the term is below 1.6e-8), and no subnormal is made (GELU over
     * large pre-activations ran 6 times slower) */
    const float big = 1.0f - o2c_vexp_f32(-o2c_vclampmag_f32(z, 0x41800000u)) * q;   /* the bits of 16 */
    const float r = o2c_vsel_f32(a < 1.0f, small, copysignf(big, x));
    return o2c_vsel_f32(x == x, r, x + r);   /* NaN stays NaN */
}

/*@ o2c_epi_f32 needs o2c_vexp_f32 o2c_vtanh_f32 o2c_verf_f32 o2c_vlog1p_f32 */
O2C_EPI(o2c_epi_f32, float)
O2C_EPI_ROW(o2c_epi_f32_row, float)
/*@ o2c_epi_f64 */
O2C_EPI(o2c_epi_f64, double)
O2C_EPI_ROW(o2c_epi_f64_row, double)

/*@ o2c_v16 */
/* 16 floats in vector registers, for kernels whose natural block is
 * narrower than what the C compiler's vectorizer keeps in registers (gcc 12
 * keeps a 16-float accumulator array of a depthwise conv in memory: 15
 * GFLOP/s; these: 93). Chosen at C-compile time by the predefined macros:
 * one AVX-512 register, two AVX2 registers (with FMA), four NEON registers
 * (AArch64), else the portable array (O2C_V16_NATIVE 0), which kernels
 * avoid for their hot loops.
 * o2c_v16_fma(acc, a, b) is acc + a * b, in one
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

/*@ o2c_v16_set1 needs o2c_v16 */
/* x in every lane of an o2c_v16 (a chunk of its own: a file whose kernels
 * never broadcast does not carry it unused) */
#if defined(__AVX512F__) && defined(__FMA__) && !defined(__CUDACC__)
static inline o2c_v16 o2c_v16_set1(float x) { return _mm512_set1_ps(x); }
#elif defined(__AVX2__) && defined(__FMA__) && !defined(__CUDACC__)
static inline o2c_v16 o2c_v16_set1(float x) { o2c_v16 v; v.lo = v.hi = _mm256_set1_ps(x); return v; }
#elif defined(__ARM_NEON) && defined(__aarch64__) && !defined(__CUDACC__)
static inline o2c_v16 o2c_v16_set1(float x)
{
    o2c_v16 v;
    for (int i = 0; i < 4; i++) v.q[i] = vdupq_n_f32(x);
    return v;
}
#else
O2C_HD static inline o2c_v16 o2c_v16_set1(float x)
{
    o2c_v16 v;
    for (int i = 0; i < 16; i++) v.v[i] = x;
    return v;
}
#endif
