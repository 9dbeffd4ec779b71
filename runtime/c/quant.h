/* Quantization kernels: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, MatMulInteger, QLinearMatMul, ConvInteger,
 * QLinearConv, and the com.microsoft ops onnxruntime's quantization tools
 * write (QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu,
 * QLinearGlobalAveragePool, QLinearConcat). Their shape rules and lowerings
 * are in compiler/ops/quant.c, the parameter slots in
 * runtime/c/params/quant.h.
 *
 * Integer products accumulate in 32 bits (the spec: "accumulation may
 * overflow if and only if in 32 bits"; the sums are kept in uint32_t, so an
 * overflow wraps instead of being undefined). QLinearMatMul and QLinearConv
 * requantize as the spec's reference does, round(acc * multiplier + zero
 * point) to nearest, ties to even, with the real-valued product of the
 * int32 accumulator and the float multiplier: o2c_q_requant computes it
 * exactly in 64-bit integers (no double, so a single-precision FPU runs it
 * too). The com.microsoft ops follow onnxruntime's float formulas.
 *
 * Element types: every quantized type has its saturation range (O2C_Q_LO_*,
 * O2C_Q_HI_*); a kernel is instantiated per type from a macro. A type that
 * is no plain integer (float8, int4: packed) needs its own load/store
 * conversion functions and instantiations beside these. */

/* the range of each integer quantized type */
#define O2C_Q_LO_u8 0
#define O2C_Q_HI_u8 255
#define O2C_Q_LO_i8 (-128)
#define O2C_Q_HI_i8 127
#define O2C_Q_LO_u16 0
#define O2C_Q_HI_u16 65535
#define O2C_Q_LO_i16 (-32768)
#define O2C_Q_HI_i16 32767

/* the value of byte j (0..255) as an 8-bit type: the lookup tables' index */
#define O2C_Q_BYTE_u8(j) ((int32_t)(j))
#define O2C_Q_BYTE_i8(j) ((int32_t)(j) < 128 ? (int32_t)(j) : (int32_t)(j) - 256)

/* the float kernels round their operands to the precision of the model's
 * 16-bit scale type (O2C_QUANT_PREC); the double ones never need it */
#define O2C_Q_ROUND_float(v, prec) o2c_q_prec(v, prec)
#define O2C_Q_ROUND_double(v, prec) (v)

/* The weight-only kernels' (o2c_wqmm*) rows: R rows of A times one k's
 * O2C_WQMM_NR float weights. On AVX2 the accumulators lo[r] and hi[r]
 * (columns 0-7 and 8-15; R a constant: they stay in registers), the
 * weights wl and wh; portable: acc[r][j] += A[r][k] wf[j]. */
#define O2C_WQ_AVX2_INIT(R)                                                 \
    __m256 lo[R], hi[R];                                                    \
    for (int r = 0; r < (R); r++) lo[r] = hi[r] = _mm256_setzero_ps()
#define O2C_WQ_AVX2_FMA(R, k, wl, wh)                                       \
    for (int r = 0; r < (R); r++) {                                         \
        const __m256 av = _mm256_broadcast_ss(ar[r] + (k));                 \
        lo[r] = _mm256_fmadd_ps(av, wl, lo[r]);                             \
        hi[r] = _mm256_fmadd_ps(av, wh, hi[r]);                             \
    }
#define O2C_WQ_AVX2_STORE(R)                                                \
    for (int r = 0; r < (R); r++) {                                         \
        _mm256_storeu_ps(acc[r], lo[r]);                                    \
        _mm256_storeu_ps(acc[r] + 8, hi[r]);                                \
    }
#define O2C_WQ_FMA_ROWS(nr, k, wf)                                          \
    for (o2c_int r = 0; r < (nr); r++) {                                    \
        const float a = ar[r][k];                                           \
        for (int j = 0; j < O2C_WQMM_NR; j++) acc[r][j] = O2C_FMA_f32(acc[r][j], a, (wf)[j]); \
    }

/* The operands of the o2c_wqmm* kernels (ZT: the zero points' type) */
#define O2C_WQ_OPERANDS(ZT)                                                 \
    const float *A = (const float *)p->x[0];                                \
    const unsigned char *Wp = (const unsigned char *)p->x[1];               \
    const ZT *Z = (const ZT *)p->x[2];                                      \
    const float *S = (const float *)p->x[3], *B = (const float *)p->x[4];   \
    float *Y = (float *)p->y[0]

/* The tiles of o2c_wqmm and o2c_wqmmb: O2C_WQMM_RB rows of A (ar, nr of
 * them from r0) against a block of O2C_WQMM_NR columns (block nb from
 * column n0, nn of them); BLOCK fills acc, then Y = acc * SCALE + B. */
#define O2C_WQ_TILES(BLOCK, SCALE)                                          \
    O2C_FOR(t) {                                                            \
        const o2c_int nb = t % NBLK, r0 = t / NBLK * O2C_WQMM_RB, n0 = nb * O2C_WQMM_NR; \
        const o2c_int nr = R - r0 < O2C_WQMM_RB ? R - r0 : O2C_WQMM_RB;     \
        const o2c_int nn = N - n0 < O2C_WQMM_NR ? N - n0 : O2C_WQMM_NR;     \
        const float *ar[O2C_WQMM_RB];                                       \
        float acc[O2C_WQMM_RB][O2C_WQMM_NR];                                \
        for (o2c_int r = 0; r < nr; r++) ar[r] = A + (r0 + r) * K;          \
        BLOCK;                                                              \
        for (o2c_int r = 0; r < nr; r++)                                    \
            for (o2c_int j = 0; j < nn; j++)                                \
                Y[(r0 + r) * N + n0 + j] = acc[r][j] * (SCALE) + (B ? B[n0 + j] : 0.0f); \
    }

/* saturating conversion of an integral real value (NaN: the low end) */
#define O2C_Q_SAT(R, v, LO, HI) (!((v) >= (R)(LO)) ? (LO) : (v) > (R)(HI) ? (HI) : (v))

/* QuantizeLinear: y = saturate(round(x / scale) + zero point), the
 * division in R (float or double: the lowering casts x and the scales to
 * the type the spec's division is made in), rounded to nearest even.
 *   x[0] X (R), x[1] scales (R), x[2] zero points (Q) or NULL; O2C_QUANT_* */
#define O2C_QUANTIZE_DEF(NAME, R, Q, SFX)                                   \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const R *X = (const R *)p->x[0], *S = (const R *)p->x[1];           \
        const Q *Z = (const Q *)p->x[2];                                    \
        Q *Y = (Q *)p->y[0];                                                \
        const o2c_int prec = p->k[O2C_QUANT_PREC];                          \
        (void)prec;                                                         \
        if (!p->k[O2C_QP_SO] && !p->k[O2C_QP_SA] && !p->k[O2C_QP_SI] && prec == O2C_QPREC_NONE) { \
            /* one scale and the type's own precision (most often): the    \
             * scale and zero point read once, no index arithmetic, a loop \
             * the compiler vectorizes */                                   \
            const R sc = S[0], z = Z ? (R)Z[0] : (R)0;                      \
            O2C_FOR(i) {                                                    \
                const R q = O2C_M(R, nearbyint)(X[i] / sc) + z;             \
                Y[i] = (Q)O2C_Q_SAT(R, q, O2C_Q_LO_##SFX, O2C_Q_HI_##SFX);  \
            }                                                               \
            return;                                                         \
        }                                                                   \
        O2C_FOR(i) {                                                        \
            const o2c_int s = p->k[O2C_QP_SO] || p->k[O2C_QP_SA] || p->k[O2C_QP_SI] ? o2c_q_pidx(i, p) : 0; \
            const R x = O2C_Q_ROUND_##R(X[i], prec);                        \
            const R sc = O2C_Q_ROUND_##R(S[s], prec);                       \
            R q = O2C_Q_ROUND_##R(x / sc, prec);                            \
            q = O2C_M(R, nearbyint)(q) + (Z ? (R)Z[s] : (R)0);              \
            Y[i] = (Q)O2C_Q_SAT(R, q, O2C_Q_LO_##SFX, O2C_Q_HI_##SFX);      \
        }                                                                   \
    }

/* DequantizeLinear: y = (x - zero point) * scale in float; D: the integer
 * type of the difference.
 *   x[0] X (Q), x[1] scales (float), x[2] zero points (Q) or NULL; O2C_QP_* */
#define O2C_DEQUANTIZE_DEF(NAME, Q, D)                                      \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const Q *X = (const Q *)p->x[0], *Z = (const Q *)p->x[2];           \
        const float *S = (const float *)p->x[1];                            \
        float *Y = (float *)p->y[0];                                        \
        if (!p->k[O2C_QP_SO] && !p->k[O2C_QP_SA] && !p->k[O2C_QP_SI]) {    \
            const D z = Z ? (D)Z[0] : (D)0;   /* one scale: read once */    \
            const float sc = S[0];                                          \
            O2C_FOR(i) Y[i] = (float)((D)X[i] - z) * sc;                    \
            return;                                                         \
        }                                                                   \
        O2C_FOR(i) {                                                        \
            const o2c_int s = o2c_q_pidx(i, p);                             \
            Y[i] = (float)((D)X[i] - (Z ? (D)Z[s] : (D)0)) * S[s];          \
        }                                                                   \
    }

/* MatMulInteger (REQ 0: Y int32) and QLinearMatMul (REQ 1: Y requantized
 * by as * bs / ys, computed in the scales' precision, and yz).
 *   O2C_QMM_* (runtime/c/params/quant.h) */
#define O2C_QMATMUL_DEF(NAME, TA, TB, TY, REQ, LO, HI)                      \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const TA *A = (const TA *)p->x[0], *AZ = (const TA *)p->x[2];       \
        const TB *B = (const TB *)p->x[1], *BZ = (const TB *)p->x[3];       \
        const float *AS = (const float *)p->x[4], *BS = (const float *)p->x[5]; \
        const float *YS = (const float *)p->x[6];                           \
        const TY *YZ = (const TY *)p->x[7];                                 \
        TY *Y = (TY *)p->y[0];                                              \
        const o2c_int M = p->k[O2C_QMM_M], N = p->k[O2C_QMM_N], K = p->k[O2C_QMM_K]; \
        const o2c_int R = p->k[O2C_QMM_R], prec = p->k[O2C_QMM_PREC];       \
        O2C_FOR(i) {                                                        \
            const o2c_int n = i % N, m = i / N % M;                         \
            o2c_int b = i / N / M, ao = 0, bo = 0;                          \
            for (o2c_int d = R - 1; d >= 0; d--) {                          \
                const o2c_int bd = p->k[O2C_QMM_BDIMS + d], j = b % bd;     \
                b /= bd;                                                    \
                ao += j * p->k[O2C_QMM_ASTR + d];                           \
                bo += j * p->k[O2C_QMM_BSTR + d];                           \
            }                                                               \
            {                                                               \
                const TA *ar = A + ao + m * K;                              \
                const TB *bc = B + bo + n;                                  \
                const int32_t az = AZ ? (int32_t)AZ[m * p->k[O2C_QMM_AZ_M]] : 0; \
                const int32_t bz = BZ ? (int32_t)BZ[n * p->k[O2C_QMM_BZ_N]] : 0; \
                uint32_t acc = 0;                                           \
                for (o2c_int k = 0; k < K; k++)                             \
                    acc += (uint32_t)(((int32_t)ar[k] - az) * ((int32_t)bc[k * N] - bz)); \
                if (REQ) {                                                  \
                    const float ab = o2c_q_prec(AS[m * p->k[O2C_QMM_AS_M]] * BS[n * p->k[O2C_QMM_BS_N]], prec); \
                    const float mul = o2c_q_prec(ab / YS[m * p->k[O2C_QMM_YS_M] + n * p->k[O2C_QMM_YS_N]], prec); \
                    const o2c_int yz = YZ ? (o2c_int)YZ[m * p->k[O2C_QMM_YZ_M] + n * p->k[O2C_QMM_YZ_N]] : 0; \
                    Y[i] = (TY)o2c_q_requant((int32_t)acc, mul, yz, LO, HI); \
                } else {                                                    \
                    Y[i] = (TY)(int32_t)acc;                                \
                }                                                           \
            }                                                               \
        }                                                                   \
    }

/* ConvInteger (REQ 0: Y int32) and QLinearConv (REQ 1: Y requantized by
 * MUL[m] and yz, clamped to [QMIN, QMAX]): the direct convolution of the integer differences; taps
 * in the padding contribute 0 (X padded with its zero point).
 *   O2C_QCONV_* (runtime/c/params/quant.h) */
#define O2C_QCONV_DEF(NAME, TX, TW, TY, REQ, LO, HI)                        \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const TX *X = (const TX *)p->x[0], *XZ = (const TX *)p->x[2];       \
        const TW *Wt = (const TW *)p->x[1], *WZ = (const TW *)p->x[3];      \
        const int32_t *Bs = (const int32_t *)p->x[4];                       \
        const float *MUL = (const float *)p->x[5];                          \
        const TY *YZ = (const TY *)p->x[6];                                 \
        TY *Y = (TY *)p->y[0];                                              \
        const o2c_int C = p->k[O2C_QCONV_C], M = p->k[O2C_QCONV_M], G = p->k[O2C_QCONV_GROUP]; \
        O2C_WIN3_GEOMETRY(O2C_QCONV_IN, O2C_QCONV_OUT, O2C_QCONV_K, O2C_QCONV_S, O2C_QCONV_D, O2C_QCONV_PB); \
        const o2c_int CG = C / G, MG = M / G;                               \
        const int32_t xz = XZ ? (int32_t)XZ[0] : 0;                         \
        O2C_FOR(i) {                                                        \
            O2C_WIN3_OUT(i);                                                \
            const o2c_int m = r % M, n = r / M, g = m / MG;                 \
            const int32_t wz = WZ ? (int32_t)WZ[m * p->k[O2C_QCONV_WZ_M]] : 0; \
            uint32_t acc = Bs ? (uint32_t)Bs[m] : 0u;                       \
            for (o2c_int c = 0; c < CG; c++) {                              \
                const TX *xp = X + (n * C + g * CG + c) * ID * IH * IW;     \
                const TW *wp = Wt + (m * CG + c) * KD * KH * KW;            \
                O2C_WIN_TAPS(kd, KD, id, ID, od * SD - PD, DD,              \
                O2C_WIN_TAPS(kh, KH, ih, IH, oh * SH - PH, DH,              \
                O2C_WIN_TAPS(kw, KW, iw, IW, ow * SW - PW, DW,              \
                    acc += (uint32_t)(((int32_t)xp[(id * IH + ih) * IW + iw] - xz) * \
                                      ((int32_t)wp[(kd * KH + kh) * KW + kw] - wz));))) \
            }                                                               \
            if (REQ)                                                        \
                Y[i] = (TY)o2c_q_requant((int32_t)acc, MUL[m * p->k[O2C_QCONV_MUL_M]], \
                                         YZ ? (o2c_int)YZ[0] : 0, p->k[O2C_QCONV_QMIN], p->k[O2C_QCONV_QMAX]); \
            else                                                            \
                Y[i] = (TY)(int32_t)acc;                                    \
        }                                                                   \
    }

/* com.microsoft QGemm (REQ 0: float Y = acc * SC[n]; REQ 1: Y 8-bit,
 * saturate(round(acc * SC[n]) + yz) with the product in float, as
 * onnxruntime). O2C_QGEMM_* */
#define O2C_QGEMM_DEF(NAME, TA, TB, TY, REQ)                                 \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const TA *A = (const TA *)p->x[0], *AZ = (const TA *)p->x[1];       \
        const TB *B = (const TB *)p->x[2], *BZ = (const TB *)p->x[3];       \
        const int32_t *Cb = (const int32_t *)p->x[4];                       \
        const float *SC = (const float *)p->x[5];                           \
        const TY *YZ = (const TY *)p->x[6];                                 \
        TY *Y = (TY *)p->y[0];                                              \
        const o2c_int N = p->k[O2C_QGEMM_N], K = p->k[O2C_QGEMM_K];         \
        const o2c_int sam = p->k[O2C_QGEMM_SAM], sak = p->k[O2C_QGEMM_SAK]; \
        const o2c_int sbk = p->k[O2C_QGEMM_SBK], sbn = p->k[O2C_QGEMM_SBN]; \
        const int32_t az = AZ ? (int32_t)AZ[0] : 0;                         \
        const float yz = YZ ? (float)YZ[0] : 0.0f;                          \
        (void)yz;                                                           \
        O2C_FOR(i) {                                                        \
            const o2c_int n = i % N, m = i / N;                             \
            const int32_t bz = BZ ? (int32_t)BZ[n * p->k[O2C_QGEMM_BZ_N]] : 0; \
            uint32_t acc = Cb ? (uint32_t)Cb[m * p->k[O2C_QGEMM_SCM] + n * p->k[O2C_QGEMM_SCN]] : 0u; \
            float v;                                                        \
            for (o2c_int k = 0; k < K; k++)                                 \
                acc += (uint32_t)(((int32_t)A[m * sam + k * sak] - az) * ((int32_t)B[k * sbk + n * sbn] - bz)); \
            v = (float)(int32_t)acc * SC[n * p->k[O2C_QGEMM_SC_N]];         \
            if (REQ) {                                                      \
                v = nearbyintf(v) + yz;                                     \
                Y[i] = (TY)O2C_Q_SAT(float, v, p->k[O2C_QGEMM_QMIN], p->k[O2C_QGEMM_QMAX]); \
            } else {                                                        \
                Y[i] = (TY)v;                                               \
            }                                                               \
        }                                                                   \
    }

/* com.microsoft QLinearAdd: c = round(as/cs * (a - az) + bs/cs * (b - bz)
 * + cz), saturated; QLinearMul: c = round((a - az) * (b - bz) * (as * bs /
 * cs) + cz): onnxruntime's float formulas. Broadcasting: O2C_QBIN_*. */
#define O2C_QBIN_DEF(NAME, T, MUL, LO, HI)                                  \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const T *A = (const T *)p->x[0], *AZ = (const T *)p->x[2];          \
        const T *B = (const T *)p->x[3], *BZ = (const T *)p->x[5];          \
        const T *CZ = (const T *)p->x[7];                                   \
        const float as = *(const float *)p->x[1], bs = *(const float *)p->x[4]; \
        const float cs = *(const float *)p->x[6];                           \
        const float ra = as / cs, rb = bs / cs, rab = as * bs / cs;         \
        const int32_t az = AZ ? (int32_t)AZ[0] : 0, bz = BZ ? (int32_t)BZ[0] : 0; \
        const float cz = CZ ? (float)CZ[0] : 0.0f;                          \
        const o2c_int rank = p->k[O2C_QBIN_RANK];                           \
        T *Y = (T *)p->y[0];                                                \
        (void)ra; (void)rb; (void)rab;                                      \
        if (!rank) { /* same shapes: a loop the C compiler vectorizes */    \
            const T *O2C_RESTRICT a = A, *O2C_RESTRICT b = B;               \
            T *O2C_RESTRICT y = Y;                                          \
            for (o2c_int i = i0; i < i1; i++) {                             \
                const int32_t da = (int32_t)a[i] - az, db = (int32_t)b[i] - bz; \
                float v = MUL ? (float)(da * db) * rab + cz                 \
                              : ra * (float)da + rb * (float)db + cz;       \
                v = nearbyintf(v);                                          \
                y[i] = (T)O2C_Q_SAT(float, v, LO, HI);                      \
            }                                                               \
            return;                                                         \
        }                                                                   \
        { /* broadcasting: the operands' offsets once a row of the last axis */ \
            const o2c_int W = p->k[O2C_QBIN_DIMS + rank - 1];               \
            const o2c_int sa = p->k[O2C_QBIN_SA + rank - 1], sb = p->k[O2C_QBIN_SB + rank - 1]; \
            for (o2c_int i = i0; i < i1;) {                                 \
                const o2c_int j0 = i % W, jn = i1 - i < W - j0 ? j0 + (i1 - i) : W; \
                const o2c_int ia = o2c_offset(i - j0, rank, p->k + O2C_QBIN_DIMS, p->k + O2C_QBIN_SA); \
                const o2c_int ib = o2c_offset(i - j0, rank, p->k + O2C_QBIN_DIMS, p->k + O2C_QBIN_SB); \
                for (o2c_int j = j0; j < jn; j++) {                         \
                    const int32_t da = (int32_t)A[ia + j * sa] - az, db = (int32_t)B[ib + j * sb] - bz; \
                    float v = MUL ? (float)(da * db) * rab + cz             \
                                  : ra * (float)da + rb * (float)db + cz;   \
                    v = nearbyintf(v);                                      \
                    Y[i + j - j0] = (T)O2C_Q_SAT(float, v, LO, HI);         \
                }                                                           \
                i += jn - j0;                                               \
            }                                                               \
        }                                                                   \
    }

/* The table of a quantized unary function (QLinearSigmoid,
 * QLinearLeakyRelu): entry j (the byte of a value) = saturate(round(f(xs *
 * (x - xz)) / ys) + yz) as a byte. O2C_QLUT_* */
#define O2C_QLUT_DEF(NAME, T, SFX)                                          \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const float xs = *(const float *)p->x[0], ys = *(const float *)p->x[2]; \
        const T *XZ = (const T *)p->x[1], *YZ = (const T *)p->x[3];         \
        const int32_t xz = XZ ? (int32_t)XZ[0] : 0;                         \
        const float yz = YZ ? (float)YZ[0] : 0.0f;                          \
        const float alpha = p->ff[O2C_QLUT_F_ALPHA];                        \
        uint8_t *TBL = (uint8_t *)p->y[0];                                  \
        O2C_FOR(j) {                                                        \
            float v = xs * (float)(O2C_Q_BYTE_##SFX(j) - xz);               \
            if (p->k[O2C_QLUT_FN] == O2C_QLUT_LEAKYRELU) v = v >= 0 ? v : alpha * v; \
            else if (p->k[O2C_QLUT_FN] == O2C_QLUT_SIGMOID) v = 1.0f / (1.0f + expf(-v)); \
            v = nearbyintf(v / ys) + yz;                                    \
            TBL[j] = (uint8_t)(T)O2C_Q_SAT(float, v, O2C_Q_LO_##SFX, O2C_Q_HI_##SFX); \
        }                                                                   \
    }

/* com.microsoft QLinearGlobalAveragePool: y = saturate(round((sum - xz *
 * S) * (xs / (ys * S))) + yz) per image, in float as onnxruntime.
 * O2C_QGAP_* */
#define O2C_QGAP_DEF(NAME, T, SFX)                                          \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const T *X = (const T *)p->x[0];                                    \
        const float xs = *(const float *)p->x[1], ys = *(const float *)p->x[3]; \
        const int32_t xz = (int32_t) * (const T *)p->x[2];                  \
        const float yz = (float)*(const T *)p->x[4];                        \
        const o2c_int C = p->k[O2C_QGAP_C], S = p->k[O2C_QGAP_S];           \
        const float sc = xs / (ys * (float)S);                              \
        T *Y = (T *)p->y[0];                                                \
        O2C_FOR(i) {                                                        \
            const o2c_int c = i % C, n = i / C;                             \
            int32_t acc = -xz * (int32_t)S;                                 \
            float v;                                                        \
            for (o2c_int s = 0; s < S; s++)                                 \
                acc += (int32_t)(p->k[O2C_QGAP_CL] ? X[(n * S + s) * C + c] : X[(n * C + c) * S + s]); \
            v = nearbyintf((float)acc * sc) + yz;                           \
            Y[i] = (T)O2C_Q_SAT(float, v, O2C_Q_LO_##SFX, O2C_Q_HI_##SFX);  \
        }                                                                   \
    }

/* com.microsoft QLinearAveragePool: onnxruntime's order of float sums.
 * O2C_QAP_* */
#define O2C_QAP_DEF(NAME, T, SFX)                                           \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const T *X = (const T *)p->x[0];                                    \
        const float xs = *(const float *)p->x[1], ys = *(const float *)p->x[3]; \
        const int32_t xz = p->x[2] ? (int32_t) * (const T *)p->x[2] : 0;    \
        const float yz = p->x[4] ? (float)*(const T *)p->x[4] : 0.0f;       \
        const o2c_int C = p->k[O2C_QAP_C], cl = p->k[O2C_QAP_CL];           \
        const o2c_int ID = p->k[O2C_QAP_IN], IH = p->k[O2C_QAP_IN + 1], IW = p->k[O2C_QAP_IN + 2]; \
        const o2c_int OD = p->k[O2C_QAP_OUT], OH = p->k[O2C_QAP_OUT + 1], OW = p->k[O2C_QAP_OUT + 2]; \
        T *Y = (T *)p->y[0];                                                \
        O2C_FOR(i) {                                                        \
            o2c_int r = i, c = 0, o[3], st[3], en[3], cnt = 1;              \
            float v = 0.0f;                                                 \
            if (cl) { c = r % C; r /= C; }                                  \
            o[2] = r % OW; r /= OW;                                         \
            o[1] = r % OH; r /= OH;                                         \
            o[0] = r % OD; r /= OD;                                         \
            if (!cl) { c = r % C; r /= C; }                                 \
            for (int d = 0; d < 3; d++) {                                   \
                const o2c_int in = p->k[O2C_QAP_IN + d];                    \
                st[d] = o[d] * p->k[O2C_QAP_S + d] - p->k[O2C_QAP_PB + d];  \
                en[d] = st[d] + p->k[O2C_QAP_K + d] < in ? st[d] + p->k[O2C_QAP_K + d] : in; \
                if (st[d] < 0) st[d] = 0;                                   \
                cnt *= p->k[O2C_QAP_INCL] ? p->k[O2C_QAP_K + d] : en[d] - st[d]; \
            }                                                               \
            for (o2c_int id = st[0]; id < en[0]; id++)                      \
                for (o2c_int ih = st[1]; ih < en[1]; ih++)                  \
                    for (o2c_int iw = st[2]; iw < en[2]; iw++) {            \
                        const o2c_int sp = (id * IH + ih) * IW + iw;        \
                        const o2c_int at = cl ? (r * ID * IH * IW + sp) * C + c : (r * C + c) * ID * IH * IW + sp; \
                        v += xs * (float)((int32_t)X[at] - xz);             \
                    }                                                       \
            v /= (float)cnt;                                                \
            v = nearbyintf(v / ys + yz);                                    \
            Y[i] = (T)O2C_Q_SAT(float, v, O2C_Q_LO_##SFX, O2C_Q_HI_##SFX);  \
        }                                                                   \
    }

/* com.microsoft QLinearConcat, one input: its elements copied (same scale
 * and zero point as the output) or requantized, saturate(round(xs * (x -
 * xz) / ys) + yz), into their places in the output. O2C_QCAT_* */
#define O2C_QCAT_DEF(NAME, T, SFX)                                          \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const T *X = (const T *)p->x[0];                                    \
        const float xs = *(const float *)p->x[1], ys = *(const float *)p->x[3]; \
        const T xz = *(const T *)p->x[2], yz = *(const T *)p->x[4];         \
        const int copy = xs == ys && xz == yz;                              \
        const o2c_int pin = p->k[O2C_QCAT_PIN], pout = p->k[O2C_QCAT_POUT], off = p->k[O2C_QCAT_OFF]; \
        T *Y = (T *)p->y[0];                                                \
        O2C_FOR(i) {                                                        \
            T v = X[i];                                                     \
            if (!copy) {                                                    \
                float f = xs * (float)((int32_t)X[i] - (int32_t)xz);        \
                f = nearbyintf(f / ys) + (float)yz;                         \
                v = (T)O2C_Q_SAT(float, f, O2C_Q_LO_##SFX, O2C_Q_HI_##SFX); \
            }                                                               \
            Y[i / pin * pout + off + i % pin] = v;                          \
        }                                                                   \
    }

/*@ o2c_q_prec */
/* v rounded to nearest (ties to even) at the precision of float16
 * (O2C_QPREC_F16: 11 significant bits, subnormal below 2^-14, infinite
 * beyond 65504) or bfloat16 (O2C_QPREC_BF16: 8 bits), returned as float:
 * the value a computation in that type would hold. O2C_QPREC_NONE: v. */
O2C_HD static inline float o2c_q_prec(float v, o2c_int prec)
{
    int e = 0, bits, emin, qe;
    float q;
    if (prec == O2C_QPREC_NONE || v == 0 || !(v - v == 0)) return v;   /* zero, infinite or NaN */
    bits = prec == O2C_QPREC_F16 ? 11 : 8;
    emin = prec == O2C_QPREC_F16 ? -14 : -126;
    (void)frexpf(v, &e);                           /* 2^(e-1) <= |v| < 2^e */
    qe = e - bits;                                  /* the quantum at that exponent */
    if (qe < emin - bits + 1) qe = emin - bits + 1; /* subnormal */
    q = ldexpf(nearbyintf(ldexpf(v, -qe)), qe);
    if (prec == O2C_QPREC_F16 && fabsf(q) > 65504.0f) q = v > 0 ? INFINITY : -INFINITY;
    return q;
}

/*@ o2c_q_requant */
/* round(acc * m + zp), to nearest with ties to even, saturated to [lo, hi],
 * computed exactly: m = f * 2^(e - 24) with the integer f (frexpf), so
 * acc * f is an exact int64 and the value is that over a power of two.
 * m NaN (or acc 0 with m infinite): lo. */
O2C_HD static inline int64_t o2c_q_requant(int32_t acc, float m, int64_t zp, int64_t lo, int64_t hi)
{
    int e = 0, s;
    int64_t v, r;
    float fr;
    if (m != m) return lo;
    if (!(m - m == 0)) return acc == 0 ? lo : (acc > 0) == (m > 0) ? hi : lo;
    fr = frexpf(m, &e);
    v = (int64_t)acc * (int64_t)(int32_t)ldexpf(fr, 24);   /* |v| < 2^55 */
    s = 24 - e;                                                          /* value = v / 2^s + zp */
    if (v == 0 || s >= 62) {
        r = zp;                                                          /* |v / 2^s| < 2^-7 */
    } else if (s <= 0) {
        if (-s >= 31 || v >= ((int64_t)1 << (62 + s)) || v <= -((int64_t)1 << (62 + s)))
            return v > 0 ? hi : lo;
        r = v * ((int64_t)1 << -s) + zp;
    } else {
        const uint64_t one = (uint64_t)1 << s;
        uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        uint64_t q = a >> s, f = a & (one - 1);
        if (v < 0 && f) {                 /* -(q + f/one) = -(q + 1) + (one - f)/one */
            q++;
            f = one - f;
        }
        r = (v < 0 ? -(int64_t)q : (int64_t)q) + zp;
        if (f > one / 2 || (f == one / 2 && r % 2 != 0)) r++;
    }
    return r < lo ? lo : r > hi ? hi : r;
}

/*@ o2c_q_pidx */
/* the index of element i's scale and zero point (O2C_QP_* slots) */
O2C_HD static inline o2c_int o2c_q_pidx(o2c_int i, const o2c_p *p)
{
    const o2c_int inner = p->k[O2C_QP_INNER], d = p->k[O2C_QP_D];
    return i / (inner * d) * p->k[O2C_QP_SO] + (i / inner) % d / p->k[O2C_QP_B] * p->k[O2C_QP_SA] +
           i % inner * p->k[O2C_QP_SI];
}

/*@ o2c_quantize_f32_u8 needs o2c_q_pidx o2c_q_prec params O2C_QP O2C_QUANT split */
O2C_QUANTIZE_DEF(o2c_quantize_f32_u8, float, uint8_t, u8)
/*@ o2c_quantize_f32_i8 needs o2c_q_pidx o2c_q_prec params O2C_QP O2C_QUANT split */
O2C_QUANTIZE_DEF(o2c_quantize_f32_i8, float, int8_t, i8)
/*@ o2c_quantize_f32_u16 needs o2c_q_pidx o2c_q_prec params O2C_QP O2C_QUANT split */
O2C_QUANTIZE_DEF(o2c_quantize_f32_u16, float, uint16_t, u16)
/*@ o2c_quantize_f32_i16 needs o2c_q_pidx o2c_q_prec params O2C_QP O2C_QUANT split */
O2C_QUANTIZE_DEF(o2c_quantize_f32_i16, float, int16_t, i16)
/*@ o2c_quantize_f64_u8 needs o2c_q_pidx params O2C_QP O2C_QUANT split */
O2C_QUANTIZE_DEF(o2c_quantize_f64_u8, double, uint8_t, u8)
/*@ o2c_quantize_f64_i8 needs o2c_q_pidx params O2C_QP O2C_QUANT split */
O2C_QUANTIZE_DEF(o2c_quantize_f64_i8, double, int8_t, i8)
/*@ o2c_quantize_f64_u16 needs o2c_q_pidx params O2C_QP O2C_QUANT split */
O2C_QUANTIZE_DEF(o2c_quantize_f64_u16, double, uint16_t, u16)
/*@ o2c_quantize_f64_i16 needs o2c_q_pidx params O2C_QP O2C_QUANT split */
O2C_QUANTIZE_DEF(o2c_quantize_f64_i16, double, int16_t, i16)

/* QuantizeLinear to a narrow type: int4/uint4/int2/uint2 round to nearest
 * even, add the zero point and saturate to their range; float8/float4
 * convert x / scale (+ zero point) as Cast does (saturate or not).
 *   x[0] X, x[1] scales (float), x[2] zero points (narrow) or NULL; O2C_QUANTN_* */
/*@ o2c_quantize_f32_n needs o2c_q_pidx o2c_q_prec o2c_nt_is_int o2c_nint o2c_nint_bits o2c_n_to_f32 o2c_f32_to_n params O2C_QP O2C_QUANT O2C_QUANTN split */
O2C_KERNEL(o2c_quantize_f32_n)
{
    const float *X = (const float *)p->x[0], *S = (const float *)p->x[1];
    const uint8_t *Z = (const uint8_t *)p->x[2];
    uint8_t *Y = (uint8_t *)p->y[0];
    const o2c_int prec = p->k[O2C_QUANT_PREC];
    const int nt = (int)p->k[O2C_QUANTN_NT], sat = (int)p->k[O2C_QUANTN_SAT];
    const int is_int = o2c_nt_is_int(nt);
    const float lo = nt == O2C_NT_I4 ? -8.0f : nt == O2C_NT_I2 ? -2.0f : 0.0f;
    const float hi = nt == O2C_NT_I4 ? 7.0f : nt == O2C_NT_U4 ? 15.0f : nt == O2C_NT_I2 ? 1.0f : 3.0f;
    O2C_FOR(i) {
        const o2c_int s = o2c_q_pidx(i, p);
        const float q = o2c_q_prec(o2c_q_prec(X[i], prec) / o2c_q_prec(S[s], prec), prec);
        if (is_int) {
            float v = nearbyintf(q) + (Z ? (float)o2c_nint(Z[s], nt) : 0.0f);
            v = !(v >= lo) ? lo : v > hi ? hi : v;
            Y[i] = (uint8_t)o2c_nint_bits((uint64_t)(int64_t)v, nt);
        } else {
            Y[i] = o2c_f32_to_n(q + (Z ? o2c_n_to_f32(Z[s], nt) : 0.0f), nt, sat, 0);
        }
    }
}

/* DequantizeLinear of a narrow type: (x - zero point) * scale, both as
 * their exact float values.   O2C_DEQUANTN_* */
/*@ o2c_dequantize_n_f32 needs o2c_q_pidx o2c_n_to_f32 params O2C_DEQUANTN O2C_QP split */
O2C_KERNEL(o2c_dequantize_n_f32)
{
    const uint8_t *X = (const uint8_t *)p->x[0], *Z = (const uint8_t *)p->x[2];
    const float *S = (const float *)p->x[1];
    float *Y = (float *)p->y[0];
    const int nt = (int)p->k[O2C_DEQUANTN_NT];
    O2C_FOR(i) {
        const o2c_int s = o2c_q_pidx(i, p);
        Y[i] = (o2c_n_to_f32(X[i], nt) - (Z ? o2c_n_to_f32(Z[s], nt) : 0.0f)) * S[s];
    }
}

/*@ o2c_dequantize_u8_f32 needs o2c_q_pidx params O2C_QP split */
O2C_DEQUANTIZE_DEF(o2c_dequantize_u8_f32, uint8_t, int32_t)
/*@ o2c_dequantize_i8_f32 needs o2c_q_pidx params O2C_QP split */
O2C_DEQUANTIZE_DEF(o2c_dequantize_i8_f32, int8_t, int32_t)
/*@ o2c_dequantize_u16_f32 needs o2c_q_pidx params O2C_QP split */
O2C_DEQUANTIZE_DEF(o2c_dequantize_u16_f32, uint16_t, int32_t)
/*@ o2c_dequantize_i16_f32 needs o2c_q_pidx params O2C_QP split */
O2C_DEQUANTIZE_DEF(o2c_dequantize_i16_f32, int16_t, int32_t)
/*@ o2c_dequantize_i32_f32 needs o2c_q_pidx params O2C_QP split */
O2C_DEQUANTIZE_DEF(o2c_dequantize_i32_f32, int32_t, int64_t)

/*@ o2c_dynq_params_f32 params O2C_DYNQ */
/* DynamicQuantizeLinear's scale and zero point (uint8): the range of x[0]
 * widened to hold 0, over 255; zero point = round(saturate(0 - min /
 * scale)). y[0] the scale, y[1] the zero point; index space 1. O2C_DYNQ_* */
#if defined(__AVX__) && !defined(__CUDACC__)
#include <immintrin.h>
#endif
O2C_KERNEL(o2c_dynq_params_f32)
{
    const float *X = (const float *)p->x[0];
    float *SC = (float *)p->y[0];
    uint8_t *ZP = (uint8_t *)p->y[1];
    const o2c_int n = p->k[O2C_DYNQ_N];
    O2C_FOR(i) {
        float lo = 0, hi = 0, sc, z;
        o2c_int j = 0;
#if defined(__AVX__) && !defined(__CUDACC__)
        /* 16 running minima and maxima in two vectors (minps(v, lo) is
         * v < lo ? v : lo, NaN left out as by the scalar loop), then
         * folded: the same extremes in any order */
        __m256 l0 = _mm256_setzero_ps(), l1 = l0, h0 = l0, h1 = l0;
        float lol[16], hil[16];
        for (; j + 16 <= n; j += 16) {
            const __m256 a = _mm256_loadu_ps(X + j), b = _mm256_loadu_ps(X + j + 8);
            l0 = _mm256_min_ps(a, l0);
            l1 = _mm256_min_ps(b, l1);
            h0 = _mm256_max_ps(a, h0);
            h1 = _mm256_max_ps(b, h1);
        }
        _mm256_storeu_ps(lol, l0);
        _mm256_storeu_ps(lol + 8, l1);
        _mm256_storeu_ps(hil, h0);
        _mm256_storeu_ps(hil + 8, h1);
        for (int l = 0; l < 16; l++) {
            if (lol[l] < lo) lo = lol[l];
            if (hil[l] > hi) hi = hil[l];
        }
#endif
        for (; j < n; j++) {
            if (X[j] < lo) lo = X[j];
            if (X[j] > hi) hi = X[j];
        }
        sc = (hi == lo ? 1.0f : hi - lo) / 255.0f;
        z = 0.0f - lo / sc;
        z = z < 0.0f ? 0.0f : z > 255.0f ? 255.0f : z;
        SC[i] = sc;
        ZP[i] = (uint8_t)nearbyintf(z);
    }
}

/*@ o2c_qscale_f32 params O2C_QSCALE */
/* y[j] = (alpha * a[j * SA] * b[j * SB]) / c[j * SC] (QLinearConv's and
 * QGemm's multipliers; c NULL: no division). O2C_QSCALE_* */
O2C_KERNEL(o2c_qscale_f32)
{
    const float *A = (const float *)p->x[0], *B = (const float *)p->x[1], *C = (const float *)p->x[2];
    const float alpha = p->ff[O2C_QSCALE_F_ALPHA];
    float *Y = (float *)p->y[0];
    O2C_FOR(j) {
        const float v = alpha * A[j * p->k[O2C_QSCALE_SA]] * B[j * p->k[O2C_QSCALE_SB]];
        Y[j] = C ? v / C[j * p->k[O2C_QSCALE_SC]] : v;
    }
}

/*@ o2c_qmatmul_u8_u8_i32 needs o2c_q_requant o2c_q_prec params O2C_QMM split */
O2C_QMATMUL_DEF(o2c_qmatmul_u8_u8_i32, uint8_t, uint8_t, int32_t, 0, 0, 0)
/*@ o2c_qmatmul_u8_i8_i32 needs o2c_q_requant o2c_q_prec params O2C_QMM split */
O2C_QMATMUL_DEF(o2c_qmatmul_u8_i8_i32, uint8_t, int8_t, int32_t, 0, 0, 0)
/*@ o2c_qmatmul_i8_u8_i32 needs o2c_q_requant o2c_q_prec params O2C_QMM split */
O2C_QMATMUL_DEF(o2c_qmatmul_i8_u8_i32, int8_t, uint8_t, int32_t, 0, 0, 0)
/*@ o2c_qmatmul_i8_i8_i32 needs o2c_q_requant o2c_q_prec params O2C_QMM split */
O2C_QMATMUL_DEF(o2c_qmatmul_i8_i8_i32, int8_t, int8_t, int32_t, 0, 0, 0)
/*@ o2c_qmatmul_u8_u8_u8 needs o2c_q_requant o2c_q_prec params O2C_QMM split */
O2C_QMATMUL_DEF(o2c_qmatmul_u8_u8_u8, uint8_t, uint8_t, uint8_t, 1, O2C_Q_LO_u8, O2C_Q_HI_u8)
/*@ o2c_qmatmul_u8_i8_u8 needs o2c_q_requant o2c_q_prec params O2C_QMM split */
O2C_QMATMUL_DEF(o2c_qmatmul_u8_i8_u8, uint8_t, int8_t, uint8_t, 1, O2C_Q_LO_u8, O2C_Q_HI_u8)
/*@ o2c_qmatmul_i8_u8_u8 needs o2c_q_requant o2c_q_prec params O2C_QMM split */
O2C_QMATMUL_DEF(o2c_qmatmul_i8_u8_u8, int8_t, uint8_t, uint8_t, 1, O2C_Q_LO_u8, O2C_Q_HI_u8)
/*@ o2c_qmatmul_i8_i8_u8 needs o2c_q_requant o2c_q_prec params O2C_QMM split */
O2C_QMATMUL_DEF(o2c_qmatmul_i8_i8_u8, int8_t, int8_t, uint8_t, 1, O2C_Q_LO_u8, O2C_Q_HI_u8)
/*@ o2c_qmatmul_u8_u8_i8 needs o2c_q_requant o2c_q_prec params O2C_QMM split */
O2C_QMATMUL_DEF(o2c_qmatmul_u8_u8_i8, uint8_t, uint8_t, int8_t, 1, O2C_Q_LO_i8, O2C_Q_HI_i8)
/*@ o2c_qmatmul_u8_i8_i8 needs o2c_q_requant o2c_q_prec params O2C_QMM split */
O2C_QMATMUL_DEF(o2c_qmatmul_u8_i8_i8, uint8_t, int8_t, int8_t, 1, O2C_Q_LO_i8, O2C_Q_HI_i8)
/*@ o2c_qmatmul_i8_u8_i8 needs o2c_q_requant o2c_q_prec params O2C_QMM split */
O2C_QMATMUL_DEF(o2c_qmatmul_i8_u8_i8, int8_t, uint8_t, int8_t, 1, O2C_Q_LO_i8, O2C_Q_HI_i8)
/*@ o2c_qmatmul_i8_i8_i8 needs o2c_q_requant o2c_q_prec params O2C_QMM split */
O2C_QMATMUL_DEF(o2c_qmatmul_i8_i8_i8, int8_t, int8_t, int8_t, 1, O2C_Q_LO_i8, O2C_Q_HI_i8)

/*@ o2c_qconv_u8_u8_i32 needs o2c_win3 o2c_q_requant params O2C_QCONV split */
O2C_QCONV_DEF(o2c_qconv_u8_u8_i32, uint8_t, uint8_t, int32_t, 0, 0, 0)
/*@ o2c_qconv_u8_i8_i32 needs o2c_win3 o2c_q_requant params O2C_QCONV split */
O2C_QCONV_DEF(o2c_qconv_u8_i8_i32, uint8_t, int8_t, int32_t, 0, 0, 0)
/*@ o2c_qconv_i8_u8_i32 needs o2c_win3 o2c_q_requant params O2C_QCONV split */
O2C_QCONV_DEF(o2c_qconv_i8_u8_i32, int8_t, uint8_t, int32_t, 0, 0, 0)
/*@ o2c_qconv_i8_i8_i32 needs o2c_win3 o2c_q_requant params O2C_QCONV split */
O2C_QCONV_DEF(o2c_qconv_i8_i8_i32, int8_t, int8_t, int32_t, 0, 0, 0)
/*@ o2c_qconv_u8_u8_u8 needs o2c_win3 o2c_q_requant params O2C_QCONV split */
O2C_QCONV_DEF(o2c_qconv_u8_u8_u8, uint8_t, uint8_t, uint8_t, 1, O2C_Q_LO_u8, O2C_Q_HI_u8)
/*@ o2c_qconv_u8_i8_u8 needs o2c_win3 o2c_q_requant params O2C_QCONV split */
O2C_QCONV_DEF(o2c_qconv_u8_i8_u8, uint8_t, int8_t, uint8_t, 1, O2C_Q_LO_u8, O2C_Q_HI_u8)
/*@ o2c_qconv_i8_u8_u8 needs o2c_win3 o2c_q_requant params O2C_QCONV split */
O2C_QCONV_DEF(o2c_qconv_i8_u8_u8, int8_t, uint8_t, uint8_t, 1, O2C_Q_LO_u8, O2C_Q_HI_u8)
/*@ o2c_qconv_i8_i8_u8 needs o2c_win3 o2c_q_requant params O2C_QCONV split */
O2C_QCONV_DEF(o2c_qconv_i8_i8_u8, int8_t, int8_t, uint8_t, 1, O2C_Q_LO_u8, O2C_Q_HI_u8)
/*@ o2c_qconv_u8_u8_i8 needs o2c_win3 o2c_q_requant params O2C_QCONV split */
O2C_QCONV_DEF(o2c_qconv_u8_u8_i8, uint8_t, uint8_t, int8_t, 1, O2C_Q_LO_i8, O2C_Q_HI_i8)
/*@ o2c_qconv_u8_i8_i8 needs o2c_win3 o2c_q_requant params O2C_QCONV split */
O2C_QCONV_DEF(o2c_qconv_u8_i8_i8, uint8_t, int8_t, int8_t, 1, O2C_Q_LO_i8, O2C_Q_HI_i8)
/*@ o2c_qconv_i8_u8_i8 needs o2c_win3 o2c_q_requant params O2C_QCONV split */
O2C_QCONV_DEF(o2c_qconv_i8_u8_i8, int8_t, uint8_t, int8_t, 1, O2C_Q_LO_i8, O2C_Q_HI_i8)
/*@ o2c_qconv_i8_i8_i8 needs o2c_win3 o2c_q_requant params O2C_QCONV split */
O2C_QCONV_DEF(o2c_qconv_i8_i8_i8, int8_t, int8_t, int8_t, 1, O2C_Q_LO_i8, O2C_Q_HI_i8)

/*@ o2c_qgemm_u8_u8_f32 params O2C_QGEMM split */
O2C_QGEMM_DEF(o2c_qgemm_u8_u8_f32, uint8_t, uint8_t, float, 0)
/*@ o2c_qgemm_u8_u8_u8 params O2C_QGEMM split */
O2C_QGEMM_DEF(o2c_qgemm_u8_u8_u8, uint8_t, uint8_t, uint8_t, 1)
/*@ o2c_qgemm_u8_u8_i8 params O2C_QGEMM split */
O2C_QGEMM_DEF(o2c_qgemm_u8_u8_i8, uint8_t, uint8_t, int8_t, 1)
/*@ o2c_qgemm_u8_i8_f32 params O2C_QGEMM split */
O2C_QGEMM_DEF(o2c_qgemm_u8_i8_f32, uint8_t, int8_t, float, 0)
/*@ o2c_qgemm_u8_i8_u8 params O2C_QGEMM split */
O2C_QGEMM_DEF(o2c_qgemm_u8_i8_u8, uint8_t, int8_t, uint8_t, 1)
/*@ o2c_qgemm_u8_i8_i8 params O2C_QGEMM split */
O2C_QGEMM_DEF(o2c_qgemm_u8_i8_i8, uint8_t, int8_t, int8_t, 1)
/*@ o2c_qgemm_i8_u8_f32 params O2C_QGEMM split */
O2C_QGEMM_DEF(o2c_qgemm_i8_u8_f32, int8_t, uint8_t, float, 0)
/*@ o2c_qgemm_i8_u8_u8 params O2C_QGEMM split */
O2C_QGEMM_DEF(o2c_qgemm_i8_u8_u8, int8_t, uint8_t, uint8_t, 1)
/*@ o2c_qgemm_i8_u8_i8 params O2C_QGEMM split */
O2C_QGEMM_DEF(o2c_qgemm_i8_u8_i8, int8_t, uint8_t, int8_t, 1)
/*@ o2c_qgemm_i8_i8_f32 params O2C_QGEMM split */
O2C_QGEMM_DEF(o2c_qgemm_i8_i8_f32, int8_t, int8_t, float, 0)
/*@ o2c_qgemm_i8_i8_u8 params O2C_QGEMM split */
O2C_QGEMM_DEF(o2c_qgemm_i8_i8_u8, int8_t, int8_t, uint8_t, 1)
/*@ o2c_qgemm_i8_i8_i8 params O2C_QGEMM split */
O2C_QGEMM_DEF(o2c_qgemm_i8_i8_i8, int8_t, int8_t, int8_t, 1)

/*@ o2c_qladd_u8 needs o2c_offset params O2C_QBIN split */
O2C_QBIN_DEF(o2c_qladd_u8, uint8_t, 0, O2C_Q_LO_u8, O2C_Q_HI_u8)
/*@ o2c_qladd_i8 needs o2c_offset params O2C_QBIN split */
O2C_QBIN_DEF(o2c_qladd_i8, int8_t, 0, O2C_Q_LO_i8, O2C_Q_HI_i8)
/*@ o2c_qlmul_u8 needs o2c_offset params O2C_QBIN split */
O2C_QBIN_DEF(o2c_qlmul_u8, uint8_t, 1, O2C_Q_LO_u8, O2C_Q_HI_u8)
/*@ o2c_qlmul_i8 needs o2c_offset params O2C_QBIN split */
O2C_QBIN_DEF(o2c_qlmul_i8, int8_t, 1, O2C_Q_LO_i8, O2C_Q_HI_i8)

/*@ o2c_qlut_u8 params O2C_QLUT split */
O2C_QLUT_DEF(o2c_qlut_u8, uint8_t, u8)
/*@ o2c_qlut_i8 params O2C_QLUT split */
O2C_QLUT_DEF(o2c_qlut_i8, int8_t, i8)

/*@ o2c_qlut_apply */
/* Y[i] = TBL[X[i]]: x[0] the bytes, x[1] the 256-entry table */
O2C_KERNEL(o2c_qlut_apply)
{
    const uint8_t *X = (const uint8_t *)p->x[0], *TBL = (const uint8_t *)p->x[1];
    uint8_t *Y = (uint8_t *)p->y[0];
    O2C_FOR(i) Y[i] = TBL[X[i]];
}

/*@ o2c_qgavgpool_u8 params O2C_QGAP split */
O2C_QGAP_DEF(o2c_qgavgpool_u8, uint8_t, u8)
/*@ o2c_qgavgpool_i8 params O2C_QGAP split */
O2C_QGAP_DEF(o2c_qgavgpool_i8, int8_t, i8)

/*@ o2c_qavgpool_u8 params O2C_QAP split */
O2C_QAP_DEF(o2c_qavgpool_u8, uint8_t, u8)
/*@ o2c_qavgpool_i8 params O2C_QAP split */
O2C_QAP_DEF(o2c_qavgpool_i8, int8_t, i8)

/*@ o2c_qconcat_u8 params O2C_QCAT */
O2C_QCAT_DEF(o2c_qconcat_u8, uint8_t, u8)
/*@ o2c_qconcat_i8 params O2C_QCAT */
O2C_QCAT_DEF(o2c_qconcat_i8, int8_t, i8)

/*@ o2c_qlin_core */
/* The packed integer GEMM of o2c_qlin_* and the requantization of
 * o2c_qlin_* and o2c_qdw_*.
 *
 * o2c_qlin_tile: acc[j][i] (NR pixels x MR channels) += the products of KP
 * pairs of k: W the channel tile's packed weights (2 MR int8 a pair), P
 * the panel at the tile's first pixel (PB pixels x 2 int16 a pair). The
 * int16 operands are the differences X - xz (-255..255) and the weights
 * sign-extended, so a pair's sum w0 x0 + w1 x1 is exact in 32 bits: on
 * AVX2 one vpmaddwd does 8 channels x 2 k of one pixel (16
 * multiply-accumulates), with no saturation (vpmaddubsw's u8 x s8 pairs
 * would saturate at 16 bits, onnxruntime's reduce_range problem). The
 * portable loop computes the same sums.
 *
 * o2c_qlin_requant_row: out[i] = saturate(round(acc[i] * mul[i]) + yz) to
 * [lo, hi] as onnxruntime requantizes (MLAS): the product in float, clamped
 * to [lo - yz, hi - yz], rounded to nearest even, plus yz. (The spec's
 * reference kernels, o2c_q_requant, round the exact real product; the two
 * differ only where the float product rounds across a half, by one.) */
#if defined(__AVX2__) && !defined(__CUDACC__)
#include <immintrin.h>
static inline void o2c_qlin_requant_row(const int32_t *acc, const float *mul, o2c_int mstride, int32_t yz,
                                        int32_t lo, int32_t hi, int32_t *out, o2c_int n)
{
    const __m256 flo = _mm256_set1_ps((float)(lo - yz)), fhi = _mm256_set1_ps((float)(hi - yz));
    const __m256i z = _mm256_set1_epi32(yz);
    o2c_int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 m = mstride ? _mm256_loadu_ps(mul + i) : _mm256_set1_ps(mul[0]);
        __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(acc + i))), m);
        v = _mm256_min_ps(_mm256_max_ps(v, flo), fhi);
        _mm256_storeu_si256((__m256i *)(out + i), _mm256_add_epi32(_mm256_cvtps_epi32(v), z));
    }
    for (; i < n; i++) {
        float v = (float)acc[i] * mul[i * mstride];
        v = !(v >= (float)(lo - yz)) ? (float)(lo - yz) : v > (float)(hi - yz) ? (float)(hi - yz) : v;
        out[i] = (int32_t)nearbyintf(v) + yz;
    }
}
#else
O2C_HD static inline void o2c_qlin_requant_row(const int32_t *acc, const float *mul, o2c_int mstride, int32_t yz,
                                               int32_t lo, int32_t hi, int32_t *out, o2c_int n)
{
    const float flo = (float)(lo - yz), fhi = (float)(hi - yz);
    for (o2c_int i = 0; i < n; i++) {
        float v = (float)acc[i] * mul[i * mstride];
        v = !(v >= flo) ? flo : v > fhi ? fhi : v;
        out[i] = (int32_t)nearbyintf(v) + yz;
    }
}
#endif

/* The operands and O2C_QLIN_* slots the packed kernels read (some leave a
 * few unused: the (void)s) */
#define O2C_QLIN_OPERANDS(TX, TY)                                           \
    const TX *X = (const TX *)p->x[0], *XZ = (const TX *)p->x[1];           \
    const int8_t *W = (const int8_t *)p->x[2];                              \
    const int32_t *Bs = (const int32_t *)p->x[3];                           \
    const float *MUL = (const float *)p->x[4];                              \
    const TY *YZ = (const TY *)p->x[5];                                     \
    TY *Y = (TY *)p->y[0];                                                  \
    const o2c_int C = p->k[O2C_QLIN_C], M = p->k[O2C_QLIN_M];               \
    const o2c_int IH = p->k[O2C_QLIN_IH], IW = p->k[O2C_QLIN_IW];           \
    const o2c_int OH = p->k[O2C_QLIN_OH], OW = p->k[O2C_QLIN_OW];           \
    const o2c_int KH = p->k[O2C_QLIN_KH], KW = p->k[O2C_QLIN_KW];           \
    const o2c_int SH = p->k[O2C_QLIN_SH], SW = p->k[O2C_QLIN_SW];           \
    const o2c_int DH = p->k[O2C_QLIN_DH], DW = p->k[O2C_QLIN_DW];           \
    const o2c_int PH = p->k[O2C_QLIN_PH], PW = p->k[O2C_QLIN_PW];           \
    const int32_t lo = (int32_t)p->k[O2C_QLIN_QMIN], hi = (int32_t)p->k[O2C_QLIN_QMAX]; \
    const int32_t xz = XZ ? (int32_t)XZ[0] : 0, yz = YZ ? (int32_t)YZ[0] : 0; \
    const int32_t *OFF = (const int32_t *)p->x[6];                          \
    (void)M; (void)SH; (void)SW; (void)OFF

/* o2c_qdw_X_Y: the depthwise integer convolution (group = C = M) of
 * FusedQLinearConv/QLinearConv, int8 weights of zero point 0 as the model
 * holds them (C x KH x KW), the O2C_QLIN_* slots and operands (x[2] W).
 * Index space N x C x OH: one output row each, its int32 sums in y[1] (OW
 * values), tap by tap over the columns whose tap is inside the row. */
#define O2C_QDW_DEF(NAME, TX, TY)                                           \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        O2C_QLIN_OPERANDS(TX, TY);                                          \
        int32_t *O2C_RESTRICT acc = (int32_t *)p->y[1];                     \
        O2C_FOR(t) {                                                        \
            const o2c_int oh = t % OH, c = t / OH % C, n = t / OH / C;      \
            const int32_t b = Bs ? Bs[c] : 0;                               \
            TY *O2C_RESTRICT yr = Y + ((n * C + c) * OH + oh) * OW;         \
            for (o2c_int ow = 0; ow < OW; ow++) acc[ow] = b;                \
            for (o2c_int kh = 0; kh < KH; kh++) {                           \
                const o2c_int ih = oh * SH - PH + kh * DH;                  \
                const TX *O2C_RESTRICT xr = X + ((n * C + c) * IH + ih) * IW; \
                if (ih < 0 || ih >= IH) continue;                           \
                for (o2c_int kw = 0; kw < KW; kw++) {                       \
                    const o2c_int off = kw * DW - PW;                       \
                    const o2c_int owlo = off < 0 ? (-off + SW - 1) / SW : 0; \
                    o2c_int owhi = IW - off > 0 ? (IW - off + SW - 1) / SW : 0; \
                    const int32_t w = W[(c * KH + kh) * KW + kw];           \
                    if (owhi > OW) owhi = OW;                               \
                    if (SW == 1)                                            \
                        for (o2c_int ow = owlo; ow < owhi; ow++) acc[ow] += w * ((int32_t)xr[ow + off] - xz); \
                    else                                                    \
                        for (o2c_int ow = owlo; ow < owhi; ow++) acc[ow] += w * ((int32_t)xr[ow * SW + off] - xz); \
                }                                                           \
            }                                                               \
            o2c_qlin_requant_row(acc, MUL + c, 0, yz, lo, hi, acc, OW);     \
            for (o2c_int ow = 0; ow < OW; ow++) yr[ow] = (TY)acc[ow];       \
        }                                                                   \
    }

/*@ o2c_qlin_tile needs o2c_qlin_core */
/* the register tile of o2c_qlin_* (see o2c_qlin_core) */
/* Quads of k: where the CPU multiplies four bytes by four and adds the
 * products to an int32 exactly in one instruction (x86 AVX-512 VNNI and
 * AVX-VNNI: vpdpbusd, u8 x s8, 64 and 32 multiply-accumulates an
 * instruction; AArch64's dot-product extension: sdot, s8 x s8, 16), set by
 * the C compiler's macros; -DO2C_QLIN_QUADS=1 elsewhere runs the same
 * arithmetic in portable loops, for the tests. The panel of pairs is made
 * as for the pair tiles (below), then rewritten in place as quads of bytes
 * (o2c_qlin_quads): k 4q..4q+3 of a pixel, each (X - xz) + xu, where
 * xu = xz + XS - O2C_QLIN_Q_SIGNED (XS: 0 for uint8 X, 128 for int8), the
 * padding and the k past K xu: all in 0..255 (-128..127 for sdot), so
 * nothing saturates. The weights stay packed in pairs: the rows of pairs
 * 2q and 2q + 1 interleaved by 16-bit units are 4 channels' quads
 * (vpunpcklwd/vpunpckhwd: channels 0-3, 8-11 and 4-7, 12-15 a 128-bit
 * lane, put back in order at the store; vzip1q/vzip2q: in order). With
 * s = sum_k w of each channel (the same instruction on a vector of ones),
 * a tile's sums are dot(u, w) - xu s = sum w (X - xz): the pair kernels'. */
#if !defined(O2C_QLIN_QUADS) && ((defined(__AVX512VNNI__) && defined(__AVX512F__)) || defined(__AVXVNNI__) || \
    (defined(__ARM_FEATURE_DOTPROD) && defined(__aarch64__))) && !defined(__CUDACC__)
#define O2C_QLIN_QUADS 1
#endif
/* the quads' bytes less this: 0 for u8 x s8 products (vpdpbusd), 128 for
 * s8 x s8 (AArch64 sdot: X - xz + xu - 128 in -128..127) */
#if defined(__ARM_FEATURE_DOTPROD) && defined(__aarch64__) && !defined(__CUDACC__)
#define O2C_QLIN_Q_SIGNED 128
#else
#define O2C_QLIN_Q_SIGNED 0
#endif
#if defined(O2C_QLIN_QUADS) && O2C_QLIN_QUADS && defined(__ARM_NEON) && defined(__aarch64__) && !defined(__CUDACC__)
#include <arm_neon.h>
#endif
#if defined(O2C_QLIN_QUADS) && O2C_QLIN_QUADS
/* the panel P of KP x PB pairs of int16 as (KP + 1) / 2 x PB quads of
 * bytes, in place: quad row q is written over bytes the pair rows before
 * 2q held, pixel by pixel after its own pairs are read */
static inline void o2c_qlin_quads(int16_t *P, o2c_int KP, o2c_int PB, int32_t xu)
{
    uint8_t *U = (uint8_t *)P;
    for (o2c_int q = 0; q < (KP + 1) / 2; q++) {
        const int16_t *a = P + 2 * q * PB * 2;
        const int16_t *b = 2 * q + 1 < KP ? a + PB * 2 : NULL;
        uint8_t *u = U + q * PB * 4;
        o2c_int j0 = 0;
#if defined(__AVX2__) && !defined(__CUDACC__)
        /* 8 pixels a step: both rows' pairs plus xu packed to bytes (a
         * 128-bit lane: 4 pixels' a pairs, then their b pairs), reordered
         * to the quads; the loads come before the store that may overlap them */
        const __m256i z = _mm256_set1_epi16((short)xu);
        const __m256i order = _mm256_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15,
                                               0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
        j0 = PB / 8 * 8;
        for (o2c_int j = 0; j < j0; j += 8) {
            const __m256i va = _mm256_add_epi16(_mm256_loadu_si256((const __m256i *)(a + 2 * j)), z);
            const __m256i vb = b ? _mm256_add_epi16(_mm256_loadu_si256((const __m256i *)(b + 2 * j)), z) : z;
            _mm256_storeu_si256((__m256i *)(u + 4 * j), _mm256_shuffle_epi8(_mm256_packus_epi16(va, vb), order));
        }
#elif defined(__ARM_NEON) && defined(__aarch64__) && !defined(__CUDACC__)
        /* 4 pixels a step: each row's pairs plus xu narrowed to bytes, the
         * two rows' pairs zipped by 16-bit units (xu may be negative here:
         * the bytes are the low 8 bits) */
        const int16x8_t z = vdupq_n_s16((int16_t)xu);
        j0 = PB / 4 * 4;
        for (o2c_int j = 0; j < j0; j += 4) {
            const int8x8_t na = vmovn_s16(vaddq_s16(vld1q_s16(a + 2 * j), z));
            const int8x8_t nb = b ? vmovn_s16(vaddq_s16(vld1q_s16(b + 2 * j), z)) : vmovn_s16(z);
            const uint16x4x2_t r = vzip_u16(vreinterpret_u16_s8(na), vreinterpret_u16_s8(nb));
            vst1q_u8(u + 4 * j, vreinterpretq_u8_u16(vcombine_u16(r.val[0], r.val[1])));
        }
#endif
        for (o2c_int j = j0; j < PB; j++) {
            const int32_t a0 = a[2 * j], a1 = a[2 * j + 1];
            const int32_t b0 = b ? b[2 * j] : 0, b1 = b ? b[2 * j + 1] : 0;
            u[4 * j] = (uint8_t)(a0 + xu);
            u[4 * j + 1] = (uint8_t)(a1 + xu);
            u[4 * j + 2] = (uint8_t)(b0 + xu);
            u[4 * j + 3] = (uint8_t)(b1 + xu);
        }
    }
}

#if ((defined(__AVX512VNNI__) && defined(__AVX512F__)) || defined(__AVXVNNI__)) && !defined(__CUDACC__)
#include <immintrin.h>
/* the pair rows 2q and 2q + 1 of a channel tile's weights W (the second
 * zeros past KP), inside the loops over q below */
#define O2C_QLIN_Q_ROWS(w0, w1)                                             \
    const __m256i w0 = _mm256_loadu_si256((const __m256i *)(W + 2 * q * 2 * O2C_QLIN_MR)); \
    const __m256i w1 = 2 * q + 1 < KP ? _mm256_loadu_si256((const __m256i *)(W + (2 * q + 1) * 2 * O2C_QLIN_MR)) \
                                      : _mm256_setzero_si256();
#endif
#if defined(__AVX512VNNI__) && defined(__AVX512F__) && !defined(__CUDACC__)
/* the 16 channels' quads of pair rows w0 and w1 (see above) */
#define O2C_QLIN_Q_WEIGHTS(w0, w1)                                          \
    _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_unpacklo_epi16(w0, w1)), _mm256_unpackhi_epi16(w0, w1), 1)
#define O2C_QLIN_Q_PIXEL(j)                                                 \
    memcpy(&v, u + 4 * (j), sizeof v);                                      \
    a##j = _mm512_dpbusd_epi32(a##j, _mm512_set1_epi32(v), w);
static inline void o2c_qlin_tile_q(const int8_t *W, const uint8_t *U, o2c_int KP, o2c_int PB, int32_t xu,
                                   int32_t acc[O2C_QLIN_NR][O2C_QLIN_MR])
{
    const __m512i ones = _mm512_set1_epi8(1);
    const __m512i order = _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15);
    __m512i s = _mm512_setzero_si512(), a0 = s, a1 = s, a2 = s, a3 = s, a4 = s;
    int32_t v;
    /* the full quads with unconditional loads, then a last half quad: a
     * conditional load inside the loop made GCC keep an accumulator on the
     * stack (a store and a load in its chain every step: 2-3x slower) */
#define O2C_QLIN_Q_STEP(wexpr)                                                  {                                                                               const __m512i w = (wexpr);                                                  const uint8_t *u = U + q * PB * 4;                                          s = _mm512_dpbusd_epi32(s, ones, w);                                        O2C_QLIN_Q_PIXEL(0)                                                         O2C_QLIN_Q_PIXEL(1)                                                         O2C_QLIN_Q_PIXEL(2)                                                         O2C_QLIN_Q_PIXEL(3)                                                         O2C_QLIN_Q_PIXEL(4)                                                     }
    o2c_int q = 0;
#if defined(__GNUC__) && defined(__x86_64__) && defined(__AVX512BW__)
    /* the full quads in assembly (EVEX forms of the 256-bit shuffles on
     * zmm16 and up: AVX-512 BW): GCC 12 copies each vpdpbusd accumulator
     * to another register and back and keeps one on the stack (the loop of
     * intrinsics below ran at a third of this one's speed); here the six
     * accumulators stay in registers, zmm16-zmm21 hold the weights and the
     * broadcast pixels */
    if (KP / 2 > 0) {
        o2c_int n = KP / 2;
        const int8_t *wp = W;
        const uint8_t *up = U;
        const o2c_int ustride = PB * 4;
        __asm__ volatile(
            "1:\n\t"
            "vmovdqu64 (%[w]), %%ymm16\n\t"
            "vmovdqu64 32(%[w]), %%ymm17\n\t"
            "vpunpcklwd %%ymm17, %%ymm16, %%ymm18\n\t"
            "vpunpckhwd %%ymm17, %%ymm16, %%ymm19\n\t"
            "vinserti64x4 $1, %%ymm19, %%zmm18, %%zmm18\n\t"
            "vpbroadcastd (%[u]), %%zmm20\n\t"
            "vpbroadcastd 4(%[u]), %%zmm21\n\t"
            "vpdpbusd %%zmm18, %[ones], %[s]\n\t"
            "vpdpbusd %%zmm18, %%zmm20, %[a0]\n\t"
            "vpdpbusd %%zmm18, %%zmm21, %[a1]\n\t"
            "vpbroadcastd 8(%[u]), %%zmm20\n\t"
            "vpbroadcastd 12(%[u]), %%zmm21\n\t"
            "vpdpbusd %%zmm18, %%zmm20, %[a2]\n\t"
            "vpdpbusd %%zmm18, %%zmm21, %[a3]\n\t"
            "vpbroadcastd 16(%[u]), %%zmm20\n\t"
            "vpdpbusd %%zmm18, %%zmm20, %[a4]\n\t"
            "add $64, %[w]\n\t"
            "add %[us], %[u]\n\t"
            "dec %[n]\n\t"
            "jnz 1b\n\t"
            : [a0] "+v"(a0), [a1] "+v"(a1), [a2] "+v"(a2), [a3] "+v"(a3), [a4] "+v"(a4), [s] "+v"(s),
              [w] "+r"(wp), [u] "+r"(up), [n] "+r"(n)
            : [ones] "v"(ones), [us] "r"(ustride)
            : "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "cc", "memory");
        q = KP / 2;
    }
#endif
    for (; q < KP / 2; q++) {
        const __m256i w0 = _mm256_loadu_si256((const __m256i *)(W + 2 * q * 2 * O2C_QLIN_MR));
        const __m256i w1 = _mm256_loadu_si256((const __m256i *)(W + (2 * q + 1) * 2 * O2C_QLIN_MR));
        O2C_QLIN_Q_STEP(O2C_QLIN_Q_WEIGHTS(w0, w1))
    }
    if (KP % 2) {
        const __m256i w0 = _mm256_loadu_si256((const __m256i *)(W + 2 * q * 2 * O2C_QLIN_MR));
        const __m256i w1 = _mm256_setzero_si256();
        O2C_QLIN_Q_STEP(O2C_QLIN_Q_WEIGHTS(w0, w1))
    }
#undef O2C_QLIN_Q_STEP
    s = _mm512_mullo_epi32(s, _mm512_set1_epi32(xu));
#define O2C_QLIN_Q_STORE(j)                                                 \
    _mm512_storeu_si512((void *)acc[j], _mm512_add_epi32(_mm512_loadu_si512((const void *)acc[j]), \
                        _mm512_permutexvar_epi32(order, _mm512_sub_epi32(a##j, s))));
    O2C_QLIN_Q_STORE(0)
    O2C_QLIN_Q_STORE(1)
    O2C_QLIN_Q_STORE(2)
    O2C_QLIN_Q_STORE(3)
    O2C_QLIN_Q_STORE(4)
#undef O2C_QLIN_Q_STORE
}
#undef O2C_QLIN_Q_PIXEL
#undef O2C_QLIN_Q_WEIGHTS
#if O2C_QLIN_MR != 16 || O2C_QLIN_NR != 5
#error "o2c_qlin_tile_q's AVX-512 loop is written for a 16 x 5 tile"
#endif
#elif defined(__AVXVNNI__) && !defined(__CUDACC__)
/* AVX-VNNI (the VEX vpdpbusd on ymm: x86 without AVX-512): the quads of
 * channels 0-3, 8-11 (vpunpcklwd) and 4-7, 12-15 (vpunpckhwd) in two
 * registers, two accumulators a pixel (10), the halves put back in order
 * (vperm2i128) at the store */
#define O2C_QLIN_QY_PIXEL(j)                                                \
    memcpy(&v, u + 4 * (j), sizeof v);                                      \
    x = _mm256_set1_epi32(v);                                               \
    a##j##0 = _mm256_dpbusd_avx_epi32(a##j##0, x, wl);                      \
    a##j##1 = _mm256_dpbusd_avx_epi32(a##j##1, x, wh);
static inline void o2c_qlin_tile_q(const int8_t *W, const uint8_t *U, o2c_int KP, o2c_int PB, int32_t xu,
                                   int32_t acc[O2C_QLIN_NR][O2C_QLIN_MR])
{
    const __m256i ones = _mm256_set1_epi8(1);
    __m256i sl = _mm256_setzero_si256(), sh = sl, x;
    __m256i a00 = sl, a01 = sl, a10 = sl, a11 = sl, a20 = sl, a21 = sl, a30 = sl, a31 = sl, a40 = sl, a41 = sl;
    int32_t v;
    o2c_int q0 = 0;
#if defined(__GNUC__) && defined(__x86_64__)
    /* the full quads in assembly (as the AVX-512 loop above): all 16 ymm
     * registers, ten accumulators (ymm0-9), the two weight sums (ymm10-11),
     * the ones, the two weight vectors and the broadcast pixel ({vex}: the
     * AVX-VNNI form); the sums left in buf for the loop below */
    if (KP / 2 > 0) {
        o2c_int n = KP / 2;
        const int8_t *wp = W;
        const uint8_t *up = U;
        const o2c_int ustride = PB * 4;
        int32_t buf[12][8];
#define O2C_QLIN_QY_ASM(off, a, b)                                          \
        "vpbroadcastd " #off "(%[u]), %%ymm15\n\t"                         \
        "%{vex%} vpdpbusd %%ymm13, %%ymm15, %%ymm" #a "\n\t"               \
        "%{vex%} vpdpbusd %%ymm14, %%ymm15, %%ymm" #b "\n\t"
#define O2C_QLIN_QY_ZERO(r) "vpxor %%xmm" #r ", %%xmm" #r ", %%xmm" #r "\n\t"
#define O2C_QLIN_QY_OUT(r) "vmovdqu %%ymm" #r ", " #r "*32(%[buf])\n\t"
        __asm__ volatile(
            O2C_QLIN_QY_ZERO(0) O2C_QLIN_QY_ZERO(1) O2C_QLIN_QY_ZERO(2) O2C_QLIN_QY_ZERO(3)
            O2C_QLIN_QY_ZERO(4) O2C_QLIN_QY_ZERO(5) O2C_QLIN_QY_ZERO(6) O2C_QLIN_QY_ZERO(7)
            O2C_QLIN_QY_ZERO(8) O2C_QLIN_QY_ZERO(9) O2C_QLIN_QY_ZERO(10) O2C_QLIN_QY_ZERO(11)
            "vmovdqu %[ones], %%ymm12\n\t"
            "1:\n\t"
            "vmovdqu (%[w]), %%ymm13\n\t"
            "vpunpckhwd 32(%[w]), %%ymm13, %%ymm14\n\t"
            "vpunpcklwd 32(%[w]), %%ymm13, %%ymm13\n\t"
            "%{vex%} vpdpbusd %%ymm13, %%ymm12, %%ymm10\n\t"
            "%{vex%} vpdpbusd %%ymm14, %%ymm12, %%ymm11\n\t"
            O2C_QLIN_QY_ASM(0, 0, 1)
            O2C_QLIN_QY_ASM(4, 2, 3)
            O2C_QLIN_QY_ASM(8, 4, 5)
            O2C_QLIN_QY_ASM(12, 6, 7)
            O2C_QLIN_QY_ASM(16, 8, 9)
            "add $64, %[w]\n\t"
            "add %[us], %[u]\n\t"
            "dec %[n]\n\t"
            "jnz 1b\n\t"
            O2C_QLIN_QY_OUT(0) O2C_QLIN_QY_OUT(1) O2C_QLIN_QY_OUT(2) O2C_QLIN_QY_OUT(3)
            O2C_QLIN_QY_OUT(4) O2C_QLIN_QY_OUT(5) O2C_QLIN_QY_OUT(6) O2C_QLIN_QY_OUT(7)
            O2C_QLIN_QY_OUT(8) O2C_QLIN_QY_OUT(9) O2C_QLIN_QY_OUT(10) O2C_QLIN_QY_OUT(11)
            : [w] "+r"(wp), [u] "+r"(up), [n] "+r"(n)
            : [ones] "m"(ones), [us] "r"(ustride), [buf] "r"(buf)
            : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
              "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc", "memory");
#undef O2C_QLIN_QY_OUT
#undef O2C_QLIN_QY_ZERO
#undef O2C_QLIN_QY_ASM
#define O2C_QLIN_QY_IN(r) _mm256_loadu_si256((const __m256i *)buf[r])
        a00 = O2C_QLIN_QY_IN(0); a01 = O2C_QLIN_QY_IN(1); a10 = O2C_QLIN_QY_IN(2); a11 = O2C_QLIN_QY_IN(3);
        a20 = O2C_QLIN_QY_IN(4); a21 = O2C_QLIN_QY_IN(5); a30 = O2C_QLIN_QY_IN(6); a31 = O2C_QLIN_QY_IN(7);
        a40 = O2C_QLIN_QY_IN(8); a41 = O2C_QLIN_QY_IN(9); sl = O2C_QLIN_QY_IN(10); sh = O2C_QLIN_QY_IN(11);
#undef O2C_QLIN_QY_IN
        q0 = KP / 2;
    }
#endif
    for (o2c_int q = q0; q < (KP + 1) / 2; q++) {
        O2C_QLIN_Q_ROWS(w0, w1)
        const __m256i wl = _mm256_unpacklo_epi16(w0, w1), wh = _mm256_unpackhi_epi16(w0, w1);
        const uint8_t *u = U + q * PB * 4;
        sl = _mm256_dpbusd_avx_epi32(sl, ones, wl);
        sh = _mm256_dpbusd_avx_epi32(sh, ones, wh);
        O2C_QLIN_QY_PIXEL(0)
        O2C_QLIN_QY_PIXEL(1)
        O2C_QLIN_QY_PIXEL(2)
        O2C_QLIN_QY_PIXEL(3)
        O2C_QLIN_QY_PIXEL(4)
    }
    sl = _mm256_mullo_epi32(sl, _mm256_set1_epi32(xu));
    sh = _mm256_mullo_epi32(sh, _mm256_set1_epi32(xu));
#define O2C_QLIN_QY_STORE(j)                                                \
    {                                                                       \
        const __m256i lo = _mm256_sub_epi32(a##j##0, sl), hi = _mm256_sub_epi32(a##j##1, sh); \
        _mm256_storeu_si256((__m256i *)acc[j], _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)acc[j]), \
                            _mm256_permute2x128_si256(lo, hi, 0x20)));      \
        _mm256_storeu_si256((__m256i *)(acc[j] + 8), _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(acc[j] + 8)), \
                            _mm256_permute2x128_si256(lo, hi, 0x31)));      \
    }
    O2C_QLIN_QY_STORE(0)
    O2C_QLIN_QY_STORE(1)
    O2C_QLIN_QY_STORE(2)
    O2C_QLIN_QY_STORE(3)
    O2C_QLIN_QY_STORE(4)
#undef O2C_QLIN_QY_STORE
}
#undef O2C_QLIN_QY_PIXEL
#if O2C_QLIN_MR != 16 || O2C_QLIN_NR != 5
#error "o2c_qlin_tile_q's AVX-VNNI loop is written for a 16 x 5 tile"
#endif
#elif defined(__ARM_FEATURE_DOTPROD) && defined(__aarch64__) && !defined(__CUDACC__)
/* AArch64 with the dot-product extension: sdot (vdotq_laneq_s32) adds 4
 * channels' s8 quads times one pixel's quad (a lane of the pixels' vector)
 * into 4 int32: 16 multiply-accumulates an instruction, 20 accumulators for
 * 16 channels x 5 pixels. The quads of channels 0-3, 4-7, 8-11, 12-15 are
 * the pair rows zipped by 16-bit units (vzip1q/vzip2q), in order. The
 * bytes are X - xz + xu, xu = xz + XS - 128 (O2C_QLIN_Q_SIGNED). */
#if O2C_QLIN_MR != 16 || O2C_QLIN_NR != 5
#error "o2c_qlin_tile_q's sdot loop is written for a 16 x 5 tile"
#endif
#define O2C_QLIN_QN_ZIP(f, x, y) vreinterpretq_s8_s16(f(vreinterpretq_s16_s8(x), vreinterpretq_s16_s8(y)))
#define O2C_QLIN_QN_PIXEL(j, X, L)                                          \
    a##j##0 = vdotq_laneq_s32(a##j##0, q0, X, L);                           \
    a##j##1 = vdotq_laneq_s32(a##j##1, q1, X, L);                           \
    a##j##2 = vdotq_laneq_s32(a##j##2, q2, X, L);                           \
    a##j##3 = vdotq_laneq_s32(a##j##3, q3, X, L);
static inline void o2c_qlin_tile_q(const int8_t *W, const uint8_t *U, o2c_int KP, o2c_int PB, int32_t xu,
                                   int32_t acc[O2C_QLIN_NR][O2C_QLIN_MR])
{
    const int8x16_t ones = vdupq_n_s8(1), none = vdupq_n_s8(0);
    int32x4_t s0 = vdupq_n_s32(0), s1 = s0, s2 = s0, s3 = s0;
    int32x4_t a00 = s0, a01 = s0, a02 = s0, a03 = s0, a10 = s0, a11 = s0, a12 = s0, a13 = s0;
    int32x4_t a20 = s0, a21 = s0, a22 = s0, a23 = s0, a30 = s0, a31 = s0, a32 = s0, a33 = s0;
    int32x4_t a40 = s0, a41 = s0, a42 = s0, a43 = s0;
    for (o2c_int q = 0; q < (KP + 1) / 2; q++) {
        const int8_t *wr = W + 2 * q * 2 * O2C_QLIN_MR;
        const int has1 = 2 * q + 1 < KP;
        const int8x16_t w0l = vld1q_s8(wr), w0h = vld1q_s8(wr + 16);
        const int8x16_t w1l = has1 ? vld1q_s8(wr + 32) : none, w1h = has1 ? vld1q_s8(wr + 48) : none;
        const int8x16_t q0 = O2C_QLIN_QN_ZIP(vzip1q_s16, w0l, w1l), q1 = O2C_QLIN_QN_ZIP(vzip2q_s16, w0l, w1l);
        const int8x16_t q2 = O2C_QLIN_QN_ZIP(vzip1q_s16, w0h, w1h), q3 = O2C_QLIN_QN_ZIP(vzip2q_s16, w0h, w1h);
        const uint8_t *u = U + q * PB * 4;
        const int8x16_t x = vreinterpretq_s8_u8(vld1q_u8(u));
        int32_t v4;
        memcpy(&v4, u + 16, sizeof v4);
        const int8x16_t x4 = vreinterpretq_s8_s32(vdupq_n_s32(v4));
        s0 = vdotq_s32(s0, q0, ones);
        s1 = vdotq_s32(s1, q1, ones);
        s2 = vdotq_s32(s2, q2, ones);
        s3 = vdotq_s32(s3, q3, ones);
        O2C_QLIN_QN_PIXEL(0, x, 0)
        O2C_QLIN_QN_PIXEL(1, x, 1)
        O2C_QLIN_QN_PIXEL(2, x, 2)
        O2C_QLIN_QN_PIXEL(3, x, 3)
        O2C_QLIN_QN_PIXEL(4, x4, 0)
    }
    s0 = vmulq_n_s32(s0, xu);
    s1 = vmulq_n_s32(s1, xu);
    s2 = vmulq_n_s32(s2, xu);
    s3 = vmulq_n_s32(s3, xu);
#define O2C_QLIN_QN_STORE(j)                                                \
    vst1q_s32(acc[j], vaddq_s32(vld1q_s32(acc[j]), vsubq_s32(a##j##0, s0)));             \
    vst1q_s32(acc[j] + 4, vaddq_s32(vld1q_s32(acc[j] + 4), vsubq_s32(a##j##1, s1)));     \
    vst1q_s32(acc[j] + 8, vaddq_s32(vld1q_s32(acc[j] + 8), vsubq_s32(a##j##2, s2)));     \
    vst1q_s32(acc[j] + 12, vaddq_s32(vld1q_s32(acc[j] + 12), vsubq_s32(a##j##3, s3)));
    O2C_QLIN_QN_STORE(0)
    O2C_QLIN_QN_STORE(1)
    O2C_QLIN_QN_STORE(2)
    O2C_QLIN_QN_STORE(3)
    O2C_QLIN_QN_STORE(4)
#undef O2C_QLIN_QN_STORE
}
#undef O2C_QLIN_QN_PIXEL
#undef O2C_QLIN_QN_ZIP
#else
static inline void o2c_qlin_tile_q(const int8_t *W, const uint8_t *U, o2c_int KP, o2c_int PB, int32_t xu,
                                   int32_t acc[O2C_QLIN_NR][O2C_QLIN_MR])
{
    for (o2c_int q = 0; q < (KP + 1) / 2; q++) {
        const int8_t *w0 = W + 2 * q * 2 * O2C_QLIN_MR, *w1 = 2 * q + 1 < KP ? w0 + 2 * O2C_QLIN_MR : NULL;
        const uint8_t *u = U + q * PB * 4;
        for (int j = 0; j < O2C_QLIN_NR; j++)
            for (int i = 0; i < O2C_QLIN_MR; i++) {
                const int32_t c0 = w0[2 * i], c1 = w0[2 * i + 1], c2 = w1 ? w1[2 * i] : 0, c3 = w1 ? w1[2 * i + 1] : 0;
                acc[j][i] += u[4 * j] * c0 + u[4 * j + 1] * c1 + u[4 * j + 2] * c2 + u[4 * j + 3] * c3 -
                             xu * (c0 + c1 + c2 + c3);
            }
    }
}
#endif
/* inside O2C_QLIN_DEF: the panel as quads; a tile's sums */
#define O2C_QLIN_PANEL_READY(XS) o2c_qlin_quads(P, KP, PB, xz + (XS) - O2C_QLIN_Q_SIGNED);
#define O2C_QLIN_TILE(XS, Wt, j0, acc)                                      \
    o2c_qlin_tile_q(Wt, (const uint8_t *)P + (j0) * 4, KP, PB, xz + (XS) - O2C_QLIN_Q_SIGNED, acc)
#elif defined(__AVX2__) && !defined(__CUDACC__)
static inline void o2c_qlin_tile(const int8_t *W, const int16_t *P, o2c_int KP, o2c_int PB,
                                 int32_t acc[O2C_QLIN_NR][O2C_QLIN_MR])
{
    __m256i a00 = _mm256_loadu_si256((const __m256i *)acc[0]), a01 = _mm256_loadu_si256((const __m256i *)(acc[0] + 8));
    __m256i a10 = _mm256_loadu_si256((const __m256i *)acc[1]), a11 = _mm256_loadu_si256((const __m256i *)(acc[1] + 8));
    __m256i a20 = _mm256_loadu_si256((const __m256i *)acc[2]), a21 = _mm256_loadu_si256((const __m256i *)(acc[2] + 8));
    __m256i a30 = _mm256_loadu_si256((const __m256i *)acc[3]), a31 = _mm256_loadu_si256((const __m256i *)(acc[3] + 8));
    __m256i a40 = _mm256_loadu_si256((const __m256i *)acc[4]), a41 = _mm256_loadu_si256((const __m256i *)(acc[4] + 8));
#if defined(__GNUC__) && defined(__x86_64__)
    /* the loop in assembly: GCC's register allocation of the intrinsics
     * below keeps half the accumulators on the stack and moves the others
     * around (about 60% of this loop's speed); here the ten accumulators
     * stay in registers, ymm11-ymm15 hold the two weight vectors, the
     * broadcast and two products */
    if (KP > 0) {
        o2c_int n = KP;
        const o2c_int stride = PB * 2 * (o2c_int)sizeof(int16_t);
#define O2C_QLIN_ASM_PIXEL(j, off)                                          \
        "vpbroadcastd " off "(%[p]), %%ymm13\n\t"                           \
        "vpmaddwd %%ymm13, %%ymm11, %%ymm14\n\t"                            \
        "vpmaddwd %%ymm13, %%ymm12, %%ymm15\n\t"                            \
        "vpaddd %%ymm14, %[a" #j "0], %[a" #j "0]\n\t"                       \
        "vpaddd %%ymm15, %[a" #j "1], %[a" #j "1]\n\t"
        __asm__ volatile("1:\n\t"
                         "vpmovsxbw (%[w]), %%ymm11\n\t"
                         "vpmovsxbw 16(%[w]), %%ymm12\n\t"
                         O2C_QLIN_ASM_PIXEL(0, "0")
                         O2C_QLIN_ASM_PIXEL(1, "4")
                         O2C_QLIN_ASM_PIXEL(2, "8")
                         O2C_QLIN_ASM_PIXEL(3, "12")
                         O2C_QLIN_ASM_PIXEL(4, "16")
                         "add $32, %[w]\n\t"
                         "add %[st], %[p]\n\t"
                         "dec %[n]\n\t"
                         "jnz 1b\n\t"
                         : [a00] "+x"(a00), [a01] "+x"(a01), [a10] "+x"(a10), [a11] "+x"(a11), [a20] "+x"(a20),
                           [a21] "+x"(a21), [a30] "+x"(a30), [a31] "+x"(a31), [a40] "+x"(a40), [a41] "+x"(a41),
                           [w] "+r"(W), [p] "+r"(P), [n] "+r"(n)
                         : [st] "r"(stride)
                         : "cc", "memory", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
#undef O2C_QLIN_ASM_PIXEL
    }
#else
    for (o2c_int kp = 0; kp < KP; kp++) {
        const __m256i w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(W + kp * 2 * O2C_QLIN_MR)));
        const __m256i w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(W + kp * 2 * O2C_QLIN_MR + 16)));
        const int16_t *pr = P + kp * PB * 2;
        int32_t v;
        __m256i b;
#define O2C_QLIN_PIXEL(j)                                                   \
        memcpy(&v, pr + 2 * (j), sizeof v);                                 \
        b = _mm256_set1_epi32(v);                                           \
        a##j##0 = _mm256_add_epi32(a##j##0, _mm256_madd_epi16(w0, b));      \
        a##j##1 = _mm256_add_epi32(a##j##1, _mm256_madd_epi16(w1, b));
        O2C_QLIN_PIXEL(0)
        O2C_QLIN_PIXEL(1)
        O2C_QLIN_PIXEL(2)
        O2C_QLIN_PIXEL(3)
        O2C_QLIN_PIXEL(4)
#undef O2C_QLIN_PIXEL
    }
#endif
    _mm256_storeu_si256((__m256i *)acc[0], a00); _mm256_storeu_si256((__m256i *)(acc[0] + 8), a01);
    _mm256_storeu_si256((__m256i *)acc[1], a10); _mm256_storeu_si256((__m256i *)(acc[1] + 8), a11);
    _mm256_storeu_si256((__m256i *)acc[2], a20); _mm256_storeu_si256((__m256i *)(acc[2] + 8), a21);
    _mm256_storeu_si256((__m256i *)acc[3], a30); _mm256_storeu_si256((__m256i *)(acc[3] + 8), a31);
    _mm256_storeu_si256((__m256i *)acc[4], a40); _mm256_storeu_si256((__m256i *)(acc[4] + 8), a41);
}

#elif defined(__ARM_NEON) && defined(__aarch64__) && !defined(__CUDACC__)
#include <arm_neon.h>
/* AArch64 NEON (no dot-product extension needed): a k pair's 32 weights
 * split by vld2q_s8 into the 16 channels' k0 and k1 bytes, widened to int16;
 * each pixel's pair (x0, x1) multiplies them by lane, vmlal (smlal) adding
 * the int16 x int16 products to int32 accumulators exactly: 20 accumulator
 * registers, 160 multiply-accumulates in 40 vmlal a k pair. */
#if O2C_QLIN_MR != 16 || O2C_QLIN_NR != 5
#error "o2c_qlin_tile's NEON loop is written for a 16 x 5 tile"
#endif
static inline void o2c_qlin_tile(const int8_t *W, const int16_t *P, o2c_int KP, o2c_int PB,
                                 int32_t acc[O2C_QLIN_NR][O2C_QLIN_MR])
{
#define O2C_QLIN_NEON_LOAD(j)                                               \
    int32x4_t a##j##0 = vld1q_s32(acc[j]), a##j##1 = vld1q_s32(acc[j] + 4), \
              a##j##2 = vld1q_s32(acc[j] + 8), a##j##3 = vld1q_s32(acc[j] + 12)
    O2C_QLIN_NEON_LOAD(0);
    O2C_QLIN_NEON_LOAD(1);
    O2C_QLIN_NEON_LOAD(2);
    O2C_QLIN_NEON_LOAD(3);
    O2C_QLIN_NEON_LOAD(4);
#undef O2C_QLIN_NEON_LOAD
    for (o2c_int kp = 0; kp < KP; kp++) {
        const int8x16x2_t w = vld2q_s8(W + kp * 2 * O2C_QLIN_MR);   /* val[0]: k0 of channels 0-15, val[1]: k1 */
        const int16x8_t e0 = vmovl_s8(vget_low_s8(w.val[0])), e1 = vmovl_high_s8(w.val[0]);
        const int16x8_t o0 = vmovl_s8(vget_low_s8(w.val[1])), o1 = vmovl_high_s8(w.val[1]);
        const int16_t *pr = P + kp * PB * 2;
        const int16x8_t x = vld1q_s16(pr);   /* the pairs of pixels 0-3 */
        int32_t last;
        int16x4_t x4;
        memcpy(&last, pr + 8, sizeof last);   /* pixel 4's pair */
        x4 = vreinterpret_s16_s32(vdup_n_s32(last));
#define O2C_QLIN_NEON_PIXEL(j, MLAL, MLALH, X, L)                           \
        a##j##0 = MLAL(a##j##0, vget_low_s16(e0), X, L);                    \
        a##j##1 = MLALH(a##j##1, e0, X, L);                                 \
        a##j##2 = MLAL(a##j##2, vget_low_s16(e1), X, L);                    \
        a##j##3 = MLALH(a##j##3, e1, X, L);                                 \
        a##j##0 = MLAL(a##j##0, vget_low_s16(o0), X, L + 1);                \
        a##j##1 = MLALH(a##j##1, o0, X, L + 1);                             \
        a##j##2 = MLAL(a##j##2, vget_low_s16(o1), X, L + 1);                \
        a##j##3 = MLALH(a##j##3, o1, X, L + 1);
        O2C_QLIN_NEON_PIXEL(0, vmlal_laneq_s16, vmlal_high_laneq_s16, x, 0)
        O2C_QLIN_NEON_PIXEL(1, vmlal_laneq_s16, vmlal_high_laneq_s16, x, 2)
        O2C_QLIN_NEON_PIXEL(2, vmlal_laneq_s16, vmlal_high_laneq_s16, x, 4)
        O2C_QLIN_NEON_PIXEL(3, vmlal_laneq_s16, vmlal_high_laneq_s16, x, 6)
        O2C_QLIN_NEON_PIXEL(4, vmlal_lane_s16, vmlal_high_lane_s16, x4, 0)
#undef O2C_QLIN_NEON_PIXEL
    }
#define O2C_QLIN_NEON_STORE(j)                                              \
    vst1q_s32(acc[j], a##j##0);                                             \
    vst1q_s32(acc[j] + 4, a##j##1);                                         \
    vst1q_s32(acc[j] + 8, a##j##2);                                         \
    vst1q_s32(acc[j] + 12, a##j##3);
    O2C_QLIN_NEON_STORE(0)
    O2C_QLIN_NEON_STORE(1)
    O2C_QLIN_NEON_STORE(2)
    O2C_QLIN_NEON_STORE(3)
    O2C_QLIN_NEON_STORE(4)
#undef O2C_QLIN_NEON_STORE
}

#else
O2C_HD static inline void o2c_qlin_tile(const int8_t *W, const int16_t *P, o2c_int KP, o2c_int PB,
                                        int32_t acc[O2C_QLIN_NR][O2C_QLIN_MR])
{
    for (o2c_int kp = 0; kp < KP; kp++) {
        const int8_t *w = W + kp * 2 * O2C_QLIN_MR;
        const int16_t *pr = P + kp * PB * 2;
        for (int j = 0; j < O2C_QLIN_NR; j++) {
            const int32_t x0 = pr[2 * j], x1 = pr[2 * j + 1];
            for (int i = 0; i < O2C_QLIN_MR; i++) acc[j][i] += w[2 * i] * x0 + w[2 * i + 1] * x1;
        }
    }
}

#endif
#if !(defined(O2C_QLIN_QUADS) && O2C_QLIN_QUADS)
/* inside O2C_QLIN_DEF: the panel of pairs is ready as made; a tile's sums */
#define O2C_QLIN_PANEL_READY(XS)
#define O2C_QLIN_TILE(XS, Wt, j0, acc) o2c_qlin_tile(Wt, P + (j0) * 2, KP, PB, acc)
#endif

/* Row k (channel c, tap kh, kw) of the panel: R[j] = X at pixel p0 + j's
 * tap less xz, 0 where the tap is in the padding or j >= np; pixel p0 is
 * (oh0, ow00). No divisions but by SW: the block's rows are walked from
 * (oh0, ow00), the k's (c, kh, kw) counted by the caller. Inside
 * O2C_QLIN_DEF. */
#define O2C_QLIN_GATHER(TX, R, k, c, kh, kw)                                \
    if ((k) >= K) {                                                         \
        for (o2c_int j = 0; j < PB; j++) R[j] = 0;                          \
    } else {                                                                \
        const o2c_int off = (kw) * DW - PW, cs = cl ? C : 1;                \
        /* the output columns whose tap is inside the row: [owlo, owhi) */  \
        const o2c_int owlo = off < 0 ? (SW == 1 ? -off : (-off + SW - 1) / SW) : 0; \
        const o2c_int owhi = IW - off > 0 ? (SW == 1 ? IW - off : (IW - off + SW - 1) / SW) : 0; \
        o2c_int j = 0, oh = oh0, ow0 = ow00;                                \
        while (j < np) {                                                    \
            const o2c_int len = OW - ow0 < np - j ? OW - ow0 : np - j;      \
            const o2c_int ih = oh * SH - PH + (kh) * DH;                    \
            o2c_int qlo = owlo - ow0, qhi = owhi - ow0;                     \
            if (qlo < 0) qlo = 0;                                           \
            if (qhi > len) qhi = len;                                       \
            if (ih < 0 || ih >= IH || qhi <= qlo) {                         \
                for (o2c_int q = 0; q < len; q++) R[j + q] = 0;             \
            } else {                                                        \
                const TX *xr = X + (cl ? ((n * IH + ih) * IW) * C + (c) : ((n * C + (c)) * IH + ih) * IW); \
                for (o2c_int q = 0; q < qlo; q++) R[j + q] = 0;             \
                if (cs == 1 && SW == 1) {                                   \
                    const TX *O2C_RESTRICT xs = xr + ow0 + off;             \
                    int16_t *O2C_RESTRICT rs = R + j;                       \
                    for (o2c_int q = qlo; q < qhi; q++) rs[q] = (int16_t)((int32_t)xs[q] - xz); \
                } else {                                                    \
                    for (o2c_int q = qlo; q < qhi; q++)                     \
                        R[j + q] = (int16_t)((int32_t)xr[((ow0 + q) * SW + off) * cs] - xz); \
                }                                                           \
                for (o2c_int q = qhi; q < len; q++) R[j + q] = 0;           \
            }                                                               \
            j += len;                                                       \
            oh++;                                                           \
            ow0 = 0;                                                        \
        }                                                                   \
        for (; j < PB; j++) R[j] = 0;                                       \
    }

/* the next k's channel and tap */
#define O2C_QLIN_NEXT_K(c, kh, kw)                                          \
    if (++(kw) == KW) {                                                     \
        (kw) = 0;                                                           \
        if (++(kh) == KH) {                                                 \
            (kh) = 0;                                                       \
            (c)++;                                                          \
        }                                                                   \
    }

/* The panel from a band (O2C_QLIN_BR > 0: channels first): the block's
 * input rows less xz into the band, zero columns and rows for the padding;
 * each pair of k's rows of the panel is then the interleaving of two band
 * rows, a run of every SW-th value a pixel row.
 * Inside O2C_QLIN_DEF. */
#define O2C_QLIN_BAND(TX)                                                   \
    int16_t *O2C_RESTRICT band = P + KP * PB * 2;                           \
    const o2c_int oh0 = p0 / OW, ow00 = p0 % OW, BW = (OW - 1) * SW + (KW - 1) * DW + 1, ih0 = oh0 * SH - PH; \
    const o2c_int blo = PW < BW ? PW : BW, bhi = PW + IW < BW ? PW + IW : BW; \
    for (o2c_int c = 0; c < C; c++)                                         \
        for (o2c_int br = 0; br < BR; br++) {                               \
            int16_t *O2C_RESTRICT row = band + (c * BR + br) * BW;          \
            const o2c_int ih = ih0 + br;                                    \
            if (ih < 0 || ih >= IH) {                                       \
                for (o2c_int b = 0; b < BW; b++) row[b] = 0;                \
                continue;                                                   \
            }                                                               \
            const TX *O2C_RESTRICT xr = X + ((n * C + c) * IH + ih) * IW;   \
            for (o2c_int b = 0; b < blo; b++) row[b] = 0;                   \
            for (o2c_int b = blo; b < bhi; b++) row[b] = (int16_t)((int32_t)xr[b - PW] - xz); \
            for (o2c_int b = bhi; b < BW; b++) row[b] = 0;                  \
        }                                                                   \
    o2c_int ca = 0, kha = 0, kwa = 0;                                       \
    for (o2c_int kp = 0; kp < KP; kp++) {                                   \
        int16_t *O2C_RESTRICT dst = P + kp * PB * 2;                        \
        o2c_int cb = ca, khb = kha, kwb = kwa;                              \
        O2C_QLIN_NEXT_K(cb, khb, kwb)                                       \
        const int hasb = 2 * kp + 1 < K;                                    \
        const int16_t *ra = band + (ca * BR + kha * DH) * BW + kwa * DW;    \
        const int16_t *rb = hasb ? band + (cb * BR + khb * DH) * BW + kwb * DW : ra; \
        o2c_int j = 0, r = 0, ow0 = ow00;                                   \
        while (j < np) {                                                    \
            const o2c_int len = OW - ow0 < np - j ? OW - ow0 : np - j;      \
            const int16_t *O2C_RESTRICT sa = ra + r * SH * BW + ow0 * SW;   \
            const int16_t *O2C_RESTRICT sb = hasb ? rb + r * SH * BW + ow0 * SW : sa; \
            int16_t *O2C_RESTRICT d = dst + 2 * j;                          \
            if (SW == 1) {                                                  \
                for (o2c_int q = 0; q < len; q++) {                         \
                    d[2 * q] = sa[q];                                       \
                    d[2 * q + 1] = sb[q];                                   \
                }                                                           \
            } else {                                                        \
                for (o2c_int q = 0; q < len; q++) {                         \
                    d[2 * q] = sa[q * SW];                                  \
                    d[2 * q + 1] = sb[q * SW];                              \
                }                                                           \
            }                                                               \
            if (!hasb)                                                      \
                for (o2c_int q = 0; q < len; q++) d[2 * q + 1] = 0;         \
            j += len;                                                       \
            r++;                                                            \
            ow0 = 0;                                                        \
        }                                                                   \
        for (; j < PB; j++) dst[2 * j] = dst[2 * j + 1] = 0;                \
        ca = cb;                                                            \
        kha = khb;                                                          \
        kwa = kwb;                                                          \
        O2C_QLIN_NEXT_K(ca, kha, kwa)                                       \
    }

/* o2c_qlin_X_Y: see runtime/c/params/quant.h (O2C_QLIN_*). Each pixel
 * block: the panel (every k's row of the block's pixels, pairs of k
 * interleaved), then every channel tile's product with it, NR pixels at a
 * time, requantized and stored. */
#define O2C_QLIN_DEF(NAME, TX, TY, XS)                                      \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        O2C_QLIN_OPERANDS(TX, TY);                                          \
        int16_t *P = (int16_t *)p->y[1];                                    \
        int32_t csum[O2C_QLIN_PB];                                          \
        const o2c_int cl = p->k[O2C_QLIN_CL];                               \
        const o2c_int K = C * KH * KW, KP = (K + 1) / 2, S = OH * OW;       \
        const o2c_int PB = p->k[O2C_QLIN_PBW], PPB = p->k[O2C_QLIN_PPB], NB = (S + PPB - 1) / PPB; \
        const o2c_int BR = p->k[O2C_QLIN_BR];                               \
        const o2c_int MT = (M + O2C_QLIN_MR - 1) / O2C_QLIN_MR;             \
        const int pointwise = !cl && KH == 1 && KW == 1 && SH == 1 && SW == 1 && PH == 0 && PW == 0 && \
                              OH == IH && OW == IW;                         \
        O2C_FOR(t) {                                                        \
            const o2c_int n = t / NB, p0 = t % NB * PPB;                    \
            const o2c_int np = S - p0 < PPB ? S - p0 : PPB;                 \
            if (pointwise) { /* the rows are the channels' planes: one pass */ \
                for (o2c_int kp = 0; kp < KP; kp++) {                       \
                    int16_t *O2C_RESTRICT dst = P + kp * PB * 2;            \
                    const TX *O2C_RESTRICT xa = X + (n * C + 2 * kp) * S + p0; \
                    const o2c_int m = 2 * kp + 1 < K ? np : 0;              \
                    const TX *O2C_RESTRICT xb = m ? xa + S : xa;            \
                    for (o2c_int j = 0; j < m; j++) {                       \
                        dst[2 * j] = (int16_t)((int32_t)xa[j] - xz);        \
                        dst[2 * j + 1] = (int16_t)((int32_t)xb[j] - xz);    \
                    }                                                       \
                    for (o2c_int j = m; j < np; j++) {                      \
                        dst[2 * j] = (int16_t)((int32_t)xa[j] - xz);        \
                        dst[2 * j + 1] = 0;                                 \
                    }                                                       \
                    for (o2c_int j = np; j < PB; j++) dst[2 * j] = dst[2 * j + 1] = 0; \
                }                                                           \
            } else if (BR) {                                                \
                O2C_QLIN_BAND(TX)                                           \
            } else {                                                        \
                const o2c_int oh0 = p0 / OW, ow00 = p0 % OW;                \
                o2c_int c = 0, kh = 0, kw = 0;                              \
                for (o2c_int kp = 0; kp < KP; kp++) {                       \
                    int16_t ra[O2C_QLIN_PB], rb[O2C_QLIN_PB];               \
                    int16_t *O2C_RESTRICT dst = P + kp * PB * 2;            \
                    O2C_QLIN_GATHER(TX, ra, 2 * kp, c, kh, kw)              \
                    O2C_QLIN_NEXT_K(c, kh, kw)                              \
                    O2C_QLIN_GATHER(TX, rb, 2 * kp + 1, c, kh, kw)          \
                    O2C_QLIN_NEXT_K(c, kh, kw)                              \
                    for (o2c_int j = 0; j < PB; j++) {                      \
                        dst[2 * j] = ra[j];                                 \
                        dst[2 * j + 1] = rb[j];                             \
                    }                                                       \
                }                                                           \
            }                                                               \
            if (OFF) { /* the panel's column sums (the weights' offsets     \
                        * times them), a row of pairs at a time: a loop    \
                        * along the pixels the C compiler vectorizes */    \
                for (o2c_int j = 0; j < np; j++) csum[j] = 0;               \
                for (o2c_int kp = 0; kp < KP; kp++) {                       \
                    const int16_t *O2C_RESTRICT pr = P + kp * PB * 2;       \
                    for (o2c_int j = 0; j < np; j++) csum[j] += (int32_t)pr[2 * j] + (int32_t)pr[2 * j + 1]; \
                }                                                           \
            }                                                               \
            O2C_QLIN_PANEL_READY(XS)                                        \
            for (o2c_int mt = 0; mt < MT; mt++) {                           \
                const o2c_int m0 = mt * O2C_QLIN_MR;                        \
                const o2c_int mn = M - m0 < O2C_QLIN_MR ? M - m0 : O2C_QLIN_MR; \
                for (o2c_int j0 = 0; j0 < np; j0 += O2C_QLIN_NR) {          \
                    int32_t acc[O2C_QLIN_NR][O2C_QLIN_MR], q[O2C_QLIN_MR];  \
                    for (int j = 0; j < O2C_QLIN_NR; j++)                   \
                        for (int i = 0; i < O2C_QLIN_MR; i++) acc[j][i] = Bs && i < mn ? Bs[m0 + i] : 0; \
                    O2C_QLIN_TILE(XS, W + mt * KP * 2 * O2C_QLIN_MR, j0, acc); \
                    for (o2c_int j = 0; j < O2C_QLIN_NR && j0 + j < np; j++) { \
                        const o2c_int px = p0 + j0 + j;                     \
                        if (OFF)                                            \
                            for (o2c_int i = 0; i < mn; i++) acc[j][i] += OFF[m0 + i] * csum[j0 + j]; \
                        if (MUL)                                            \
                            o2c_qlin_requant_row(acc[j], MUL + m0, 1, yz, lo, hi, q, mn); \
                        else /* int32 out: the sums */                      \
                            for (o2c_int i = 0; i < mn; i++) q[i] = acc[j][i]; \
                        if (cl)                                             \
                            for (o2c_int i = 0; i < mn; i++) Y[(n * S + px) * M + m0 + i] = (TY)q[i]; \
                        else                                                \
                            for (o2c_int i = 0; i < mn; i++) Y[(n * M + m0 + i) * S + px] = (TY)q[i]; \
                    }                                                       \
                }                                                           \
            }                                                               \
        }                                                                   \
    }

/*@ o2c_qdw_taps */
/* o2c_qdwp's taps over its phase planes (below): acc[i] = b + sum over the
 * taps of w * P[the tap's plane and offset + i], i < NA, 16 at a time (acc
 * and the planes hold 16 values of slack). Tap (kh, kw) reads phase plane
 * ((kh DH) % SH, (kw DW) % SW) of PS values at offset (kh DH / SH) RW +
 * kw DW / SW. On AVX2 vpmaddwd adds int16 pairs exactly in 32 bits: where
 * DW is 1, taps kw and kw + SW of a row lie side by side in one plane and
 * go in one, (x[j], x[j + 1]) times (w0, w1), the even positions' pairs
 * loaded at the first tap's offset, the odd positions' one further; a tap
 * left alone multiplies by (w, 0) and (0, w). */
#if defined(__AVX2__) && !defined(__CUDACC__)
#define O2C_QDW_MAXT 64   /* taps listed ahead (more: the plain loop) */
static inline void o2c_qdw_taps(int32_t *acc, const int16_t *P, o2c_int PS, const int8_t *W, o2c_int KH, o2c_int KW,
                                o2c_int SH, o2c_int SW, o2c_int DH, o2c_int DW, o2c_int RW, o2c_int NA, int32_t b)
{
    /* the taps as a list made once: offset, the int16 weight pair (w0, w1)
     * or (w, 0), and whether it is a pair */
    o2c_int off[O2C_QDW_MAXT];
    uint32_t wp[O2C_QDW_MAXT];
    int two[O2C_QDW_MAXT], nt = 0;
    if (KH * KW > O2C_QDW_MAXT) {
        for (o2c_int i = 0; i < NA; i++) acc[i] = b;
        for (o2c_int kh = 0; kh < KH; kh++)
            for (o2c_int kw = 0; kw < KW; kw++) {
                const int32_t w = W[kh * KW + kw];
                const int16_t *src = P + ((kh * DH % SH) * SW + kw * DW % SW) * PS + (kh * DH / SH) * RW + kw * DW / SW;
                for (o2c_int i = 0; i < NA; i++) acc[i] += w * src[i];
            }
        return;
    }
    for (o2c_int kh = 0; kh < KH; kh++) {
        const o2c_int row = (kh * DH % SH) * SW * PS + (kh * DH / SH) * RW;
        const int8_t *wr = W + kh * KW;
        /* DW 1: the taps ph, ph + SW, ... lie side by side in plane ph: pairs */
        const o2c_int step = DW == 1 ? SW : 1;
        for (o2c_int ph = 0; ph < step; ph++) {
            o2c_int kw = ph;
            for (; DW == 1 && kw + step < KW; kw += 2 * step, nt++) {
                off[nt] = row + ph * PS + kw / SW;
                wp[nt] = (uint32_t)(uint16_t)(int16_t)wr[kw] | (uint32_t)(uint16_t)(int16_t)wr[kw + step] << 16;
                two[nt] = 1;
            }
            for (; kw < KW; kw += step, nt++) {
                off[nt] = row + (kw * DW % SW) * PS + kw * DW / SW;
                wp[nt] = (uint16_t)(int16_t)wr[kw];
                two[nt] = 0;
            }
        }
    }
    for (o2c_int i0 = 0; i0 < NA; i0 += 16) {
        __m256i e = _mm256_set1_epi32(b), o = e, lo, hi;
        for (int t = 0; t < nt; t++) {
            const int16_t *pr = P + off[t] + i0;
            const __m256i x = _mm256_loadu_si256((const __m256i *)pr);
            if (two[t]) {
                const __m256i wv = _mm256_set1_epi32((int32_t)wp[t]);
                e = _mm256_add_epi32(e, _mm256_madd_epi16(x, wv));
                o = _mm256_add_epi32(o, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(pr + 1)), wv));
            } else {
                e = _mm256_add_epi32(e, _mm256_madd_epi16(x, _mm256_set1_epi32((int32_t)wp[t])));
                o = _mm256_add_epi32(o, _mm256_madd_epi16(x, _mm256_set1_epi32((int32_t)(wp[t] << 16))));
            }
        }
        lo = _mm256_unpacklo_epi32(e, o);   /* positions 0-3 | 8-11 */
        hi = _mm256_unpackhi_epi32(e, o);   /* 4-7 | 12-15 */
        _mm256_storeu_si256((__m256i *)(acc + i0), _mm256_permute2x128_si256(lo, hi, 0x20));
        _mm256_storeu_si256((__m256i *)(acc + i0 + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
    }
}
#else
O2C_HD static inline void o2c_qdw_taps(int32_t *acc, const int16_t *P, o2c_int PS, const int8_t *W, o2c_int KH,
                                       o2c_int KW, o2c_int SH, o2c_int SW, o2c_int DH, o2c_int DW, o2c_int RW,
                                       o2c_int NA, int32_t b)
{
    for (o2c_int i = 0; i < NA; i++) acc[i] = b;
    for (o2c_int kh = 0; kh < KH; kh++)
        for (o2c_int kw = 0; kw < KW; kw++) {
            const int32_t w = W[kh * KW + kw];
            const int16_t *src = P + ((kh * DH % SH) * SW + kw * DW % SW) * PS + (kh * DH / SH) * RW + kw * DW / SW;
            for (o2c_int i = 0; i < NA; i++) acc[i] += w * src[i];
        }
}
#endif

/* o2c_qdwp_X_Y: the depthwise convolution of o2c_qdw_X_Y at strides of 1
 * or 2, a channel plane at a time. The padded plane less xz goes into
 * SH x SW phase planes of int16 (phase (a, b) holds the padded rows a, a +
 * SH, ... and columns b, b + SW, ...: PR = OH + (KH - 1) DH / SH rows of
 * RW = OW + (KW - 1) DW / SW, PS = PR RW + O2C_QDW_SLACK values each), in
 * which every tap of the strided convolution is one of stride 1: output
 * (oh, ow) reads row oh + kh DH / SH, column ow + kw DW / SW of phase
 * ((kh DH) % SH, (kw DW) % SW). Each tap is then one multiply-add over the
 * whole plane, acc[i] += w P[i + the tap's offset] (the columns past OW of
 * each row computed and dropped): loops as long as the plane, which the C
 * compiler vectorizes, where the rows of a small map (25 x 5 in a keyword
 * spotter) are too short; the sums requantized at once. Index space N x C;
 * y[1]: the int32 sums (OH x RW + O2C_QDW_SLACK), then the phase planes. */
#define O2C_QDWP_DEF(NAME, TX, TY)                                          \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        O2C_QLIN_OPERANDS(TX, TY);                                          \
        const o2c_int RW = OW + (KW - 1) * DW / SW, PR = OH + (KH - 1) * DH / SH; \
        const o2c_int PS = PR * RW + O2C_QDW_SLACK, NA = (OH - 1) * RW + OW; \
        int32_t *O2C_RESTRICT acc = (int32_t *)p->y[1];                     \
        int16_t *O2C_RESTRICT P = (int16_t *)(acc + OH * RW + O2C_QDW_SLACK); \
        O2C_FOR(t) {                                                        \
            const o2c_int c = t % C, n = t / C;                             \
            const TX *xp = X + (n * C + c) * IH * IW;                       \
            const int32_t b = Bs ? Bs[c] : 0;                               \
            for (o2c_int a = 0; a < SH; a++)                                \
                for (o2c_int bp = 0; bp < SW; bp++) {                       \
                    int16_t *O2C_RESTRICT pl = P + (a * SW + bp) * PS;      \
                    for (o2c_int r = 0; r < PR; r++) {                      \
                        const o2c_int ih = r * SH + a - PH;                 \
                        int16_t *O2C_RESTRICT pr = pl + r * RW;             \
                        if (ih < 0 || ih >= IH) {                           \
                            for (o2c_int q = 0; q < RW; q++) pr[q] = 0;     \
                            continue;                                       \
                        }                                                   \
                        /* the columns q of the row inside it: iw = q SW + bp - PW in [0, IW) */ \
                        const TX *O2C_RESTRICT xr = xp + ih * IW;           \
                        const o2c_int sh0 = bp - PW;                        \
                        o2c_int q0 = PW - bp > 0 ? (PW - bp + SW - 1) / SW : 0; \
                        o2c_int q1 = IW + PW - bp > 0 ? (IW + PW - bp + SW - 1) / SW : 0; \
                        if (q1 > RW) q1 = RW;                               \
                        if (q0 > q1) q0 = q1;                               \
                        for (o2c_int q = 0; q < q0; q++) pr[q] = 0;         \
                        if (SW == 1)                                        \
                            for (o2c_int q = q0; q < q1; q++) pr[q] = (int16_t)((int32_t)xr[q + sh0] - xz); \
                        else                                                \
                            for (o2c_int q = q0; q < q1; q++) pr[q] = (int16_t)((int32_t)xr[q * SW + sh0] - xz); \
                        for (o2c_int q = q1; q < RW; q++) pr[q] = 0;        \
                    }                                                       \
                    for (o2c_int i = PR * RW; i < PS; i++) pl[i] = 0;       \
                }                                                           \
            o2c_qdw_taps(acc, P, PS, W + c * KH * KW, KH, KW, SH, SW, DH, DW, RW, NA, b); \
            /* the plane's sums requantized at once (short rows stay vectors) */ \
            o2c_qlin_requant_row(acc, MUL + c, 0, yz, lo, hi, acc, NA);     \
            for (o2c_int oh = 0; oh < OH; oh++) {                           \
                TY *O2C_RESTRICT yr = Y + ((n * C + c) * OH + oh) * OW;     \
                const int32_t *O2C_RESTRICT ar = acc + oh * RW;             \
                for (o2c_int ow = 0; ow < OW; ow++) yr[ow] = (TY)ar[ow];    \
            }                                                               \
        }                                                                   \
    }

/*@ o2c_qlin_u8_u8 needs o2c_qlin_tile params O2C_QLIN split */
O2C_QLIN_DEF(o2c_qlin_u8_u8, uint8_t, uint8_t, 0)
/*@ o2c_qlin_u8_i8 needs o2c_qlin_tile params O2C_QLIN split */
O2C_QLIN_DEF(o2c_qlin_u8_i8, uint8_t, int8_t, 0)
/*@ o2c_qlin_i8_u8 needs o2c_qlin_tile params O2C_QLIN split */
O2C_QLIN_DEF(o2c_qlin_i8_u8, int8_t, uint8_t, 128)
/*@ o2c_qlin_i8_i8 needs o2c_qlin_tile params O2C_QLIN split */
O2C_QLIN_DEF(o2c_qlin_i8_i8, int8_t, int8_t, 128)
/*@ o2c_qlin_u8_i32 needs o2c_qlin_tile params O2C_QLIN split */
O2C_QLIN_DEF(o2c_qlin_u8_i32, uint8_t, int32_t, 0)
/*@ o2c_qlin_i8_i32 needs o2c_qlin_tile params O2C_QLIN split */
O2C_QLIN_DEF(o2c_qlin_i8_i32, int8_t, int32_t, 128)
/*@ o2c_qdw_u8_u8 needs o2c_qlin_core params O2C_QLIN split */
O2C_QDW_DEF(o2c_qdw_u8_u8, uint8_t, uint8_t)
/*@ o2c_qdw_u8_i8 needs o2c_qlin_core params O2C_QLIN split */
O2C_QDW_DEF(o2c_qdw_u8_i8, uint8_t, int8_t)
/*@ o2c_qdw_i8_u8 needs o2c_qlin_core params O2C_QLIN split */
O2C_QDW_DEF(o2c_qdw_i8_u8, int8_t, uint8_t)
/*@ o2c_qdw_i8_i8 needs o2c_qlin_core params O2C_QLIN split */
O2C_QDW_DEF(o2c_qdw_i8_i8, int8_t, int8_t)
/*@ o2c_qdwp_u8_u8 needs o2c_qlin_core o2c_qdw_taps params O2C_QLIN split */
O2C_QDWP_DEF(o2c_qdwp_u8_u8, uint8_t, uint8_t)
/*@ o2c_qdwp_u8_i8 needs o2c_qlin_core o2c_qdw_taps params O2C_QLIN split */
O2C_QDWP_DEF(o2c_qdwp_u8_i8, uint8_t, int8_t)
/*@ o2c_qdwp_i8_u8 needs o2c_qlin_core o2c_qdw_taps params O2C_QLIN split */
O2C_QDWP_DEF(o2c_qdwp_i8_u8, int8_t, uint8_t)
/*@ o2c_qdwp_i8_i8 needs o2c_qlin_core o2c_qdw_taps params O2C_QLIN split */
O2C_QDWP_DEF(o2c_qdwp_i8_i8, int8_t, int8_t)

/*@ o2c_qmcu_core */
/* The integer kernels of --target cortex-m (o2c_qmcu_*, o2c_qmcudw_*): the
 * O2C_QLIN_* slots and operands of o2c_qlin/o2c_qdw, but sized for a
 * microcontroller: 32-bit indices, the weights as int8 in flash (no
 * widened copy), a scratch of two im2col columns, and the requantization
 * in fixed point (CMSIS-NN's arithmetic with single rounding, no float
 * in the loop): x[4] holds per output channel the pair (mult, s), the
 * multiplier m = mult 2^-(s+1) (2^30 <= mult < 2^31, 30 <= s <= 61), and
 * y = saturate(floor((floor(acc mult / 2^s) + 1) / 2) + yz), i.e.
 * acc m rounded half up, once. The compiler makes mult and s from the
 * float multiplier x_scale * w_scale / y_scale that onnxruntime computes
 * (m = f 2^-e, 0.5 <= f < 1: mult = f 2^31 exactly, a float holds 24
 * bits; s = 30 + e); onnxruntime's MLAS rounds float(acc) * m to float,
 * then to nearest even: the two round differently only next to a half, by
 * one step. (TFLite's reference arithmetic rounds twice, SRDHM then
 * RoundingDivideByPOT, which moves more values next to a half by a step.)
 * The products: o2c_qmcu_simd. */

/* floor(v / 2^s) for any sign (GCC and Clang make it one arithmetic shift) */
#define O2C_QMCU_ASR(v, s) ((v) >= 0 ? (v) >> (s) : ~(~(v) >> (s)))

/* saturate(floor((floor(acc rq[0] / 2^rq[1]) + 1) / 2) + yz) to [lo, hi] */
static inline O2C_INLINE int32_t o2c_qmcu_requant(int32_t acc, const int32_t *rq, int32_t yz, int32_t lo, int32_t hi)
{
    const int64_t v = (int64_t)acc * rq[0], h = O2C_QMCU_ASR(v, rq[1]) + 1, q = O2C_QMCU_ASR(h, 1);
    return q < lo - yz ? lo : q > hi - yz ? hi : (int32_t)q + yz;
}

/* an 8-bit value of X or a zero point: byte b ^ flip - off is the signed
 * difference (flip 0x80 for int8 data, whose byte then reads as value + 128) */
#define O2C_QMCU_FLIP(sgn) ((sgn) ? 0x80u : 0u)
#define O2C_QMCU_ZP(Z, sgn) ((Z) ? (int32_t)(((const unsigned char *)(Z))[0] ^ O2C_QMCU_FLIP(sgn)) - ((sgn) ? 128 : 0) : 0)

/* The geometry of the O2C_QLIN_* slots in 32 bits */
#define O2C_QMCU_GEOMETRY                                                   \
    const int32_t C = (int32_t)p->k[O2C_QLIN_C], M = (int32_t)p->k[O2C_QLIN_M]; \
    const int32_t IH = (int32_t)p->k[O2C_QLIN_IH], IW = (int32_t)p->k[O2C_QLIN_IW]; \
    const int32_t OH = (int32_t)p->k[O2C_QLIN_OH], OW = (int32_t)p->k[O2C_QLIN_OW]; \
    const int32_t KH = (int32_t)p->k[O2C_QLIN_KH], KW = (int32_t)p->k[O2C_QLIN_KW]; \
    const int32_t SH = (int32_t)p->k[O2C_QLIN_SH], SW = (int32_t)p->k[O2C_QLIN_SW]; \
    const int32_t DH = (int32_t)p->k[O2C_QLIN_DH], DW = (int32_t)p->k[O2C_QLIN_DW]; \
    const int32_t PH = (int32_t)p->k[O2C_QLIN_PH], PW = (int32_t)p->k[O2C_QLIN_PW]; \
    const int32_t lo = (int32_t)p->k[O2C_QLIN_QMIN], hi = (int32_t)p->k[O2C_QLIN_QMAX]

/*@ o2c_qmcu_simd */
/* The products of o2c_qmcu_gemm run on the DSP extension's SIMD32
 * instructions where the C compiler says it has them (__ARM_FEATURE_DSP:
 * Cortex-M4/M7/M33/M55), as CMSIS-NN does: SXTB16 widens two int8 weights of a word to 16-bit
 * halves, SMLAD adds two 16 x 16 products to the accumulator in one
 * cycle. Elsewhere (Cortex-M0/M3, a host build; or O2C_NO_DSP defined) the
 * same functions in C compute the same bits. */
#if defined(__ARM_FEATURE_DSP) && !defined(O2C_NO_DSP)
#include <arm_acle.h>
#define o2c_qmcu_sxtb16(x) ((uint32_t)__sxtb16((int32_t)(x)))
#define o2c_qmcu_smlad(a, b, acc) ((uint32_t)__smlad((int32_t)(a), (int32_t)(b), (int32_t)(acc)))
#else
/* a 16-bit half, sign-extended */
static inline O2C_INLINE int32_t o2c_qmcu_s16(uint32_t h) { return (int32_t)(h & 0xffffu) - (int32_t)((h & 0x8000u) << 1); }
/* bytes 0 and 2 of x, each sign-extended to a 16-bit half */
static inline O2C_INLINE uint32_t o2c_qmcu_sxtb16(uint32_t x)
{
    const uint32_t lo = ((x & 0xffu) ^ 0x80u) - 0x80u, hi = (((x >> 16) & 0xffu) ^ 0x80u) - 0x80u;
    return (lo & 0xffffu) | (hi << 16);
}
/* acc + the products of the halves of a and b */
static inline O2C_INLINE uint32_t o2c_qmcu_smlad(uint32_t a, uint32_t b, uint32_t acc)
{
    return acc + (uint32_t)(o2c_qmcu_s16(a) * o2c_qmcu_s16(b)) + (uint32_t)(o2c_qmcu_s16(a >> 16) * o2c_qmcu_s16(b >> 16));
}
#endif

/* four bytes, two int16, as one little-endian word: GCC and Clang make one
 * LDR of each (memcpy would be a call in a -ffreestanding build) */
static inline O2C_INLINE uint32_t o2c_qmcu_ld8x4(const unsigned char *s)
{
    return (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24;
}
static inline O2C_INLINE uint32_t o2c_qmcu_ld16x2(const int16_t *s) { return (uint32_t)(uint16_t)s[0] | (uint32_t)(uint16_t)s[1] << 16; }

/*@ o2c_qmcu_gemm needs o2c_qmcu_core o2c_qmcu_simd */
/* o2c_qmcu_cols: the products of o2c_qmcu_gemm for one or two columns c0,
 * c1 (ns of them; KP4 int16 each) with every output channel, a pair of
 * channels at a time, 2 x 2 accumulators, four k a step: a word of four
 * weights (packed [w0 w2 w1 w3], so that SXTB16 of it and of it rotated by
 * 8 give the pairs (w0, w1) and (w2, w3)) against two words of int16 pairs
 * per column; requantized and stored at Y[m ym + j yj]. Apart from the
 * columns' gathering so that the compiler keeps the loop's values in
 * registers. */
static O2C_NOINLINE void o2c_qmcu_cols(const unsigned char *W, int32_t KP4, int32_t M, const int32_t *Bs, const int32_t *RQ,
                          const int16_t *c0, const int16_t *c1, int32_t ns, unsigned char *Y, int32_t ym, int32_t yj,
                          int32_t yz, int32_t lo, int32_t hi)
{
    for (int32_t m = 0; m < M; m += 2) {
        const unsigned char *w0 = W + m * KP4, *w1 = m + 1 < M ? w0 + KP4 : w0;
        uint32_t a00 = Bs ? (uint32_t)Bs[m] : 0u, a10 = Bs && m + 1 < M ? (uint32_t)Bs[m + 1] : 0u;
        uint32_t a01 = a00, a11 = a10;
        if (ns == 1)   /* one column (a product's single row, an odd last pixel) */
            for (int32_t k = 0; k < KP4; k += 4) {
                const uint32_t x0l = o2c_qmcu_ld16x2(c0 + k), x0h = o2c_qmcu_ld16x2(c0 + k + 2);
                const uint32_t wa = o2c_qmcu_ld8x4(w0 + k), wb = o2c_qmcu_ld8x4(w1 + k);
                a00 = o2c_qmcu_smlad(o2c_qmcu_sxtb16(wa), x0l, a00);
                a00 = o2c_qmcu_smlad(o2c_qmcu_sxtb16((wa >> 8) | (wa << 24)), x0h, a00);
                a10 = o2c_qmcu_smlad(o2c_qmcu_sxtb16(wb), x0l, a10);
                a10 = o2c_qmcu_smlad(o2c_qmcu_sxtb16((wb >> 8) | (wb << 24)), x0h, a10);
            }
        else   /* two: in this order GCC keeps it all in registers */
            for (int32_t k = 0; k < KP4; k += 4) {
                const uint32_t x0l = o2c_qmcu_ld16x2(c0 + k), x0h = o2c_qmcu_ld16x2(c0 + k + 2);
                const uint32_t x1l = o2c_qmcu_ld16x2(c1 + k), x1h = o2c_qmcu_ld16x2(c1 + k + 2);
                uint32_t w = o2c_qmcu_ld8x4(w0 + k), wl = o2c_qmcu_sxtb16(w), wh = o2c_qmcu_sxtb16((w >> 8) | (w << 24));
                a00 = o2c_qmcu_smlad(wl, x0l, a00);
                a00 = o2c_qmcu_smlad(wh, x0h, a00);
                a01 = o2c_qmcu_smlad(wl, x1l, a01);
                a01 = o2c_qmcu_smlad(wh, x1h, a01);
                w = o2c_qmcu_ld8x4(w1 + k);
                wl = o2c_qmcu_sxtb16(w);
                wh = o2c_qmcu_sxtb16((w >> 8) | (w << 24));
                a10 = o2c_qmcu_smlad(wl, x0l, a10);
                a10 = o2c_qmcu_smlad(wh, x0h, a10);
                a11 = o2c_qmcu_smlad(wl, x1l, a11);
                a11 = o2c_qmcu_smlad(wh, x1h, a11);
            }
        {
            unsigned char *y = Y + m * ym;
            y[0] = (unsigned char)o2c_qmcu_requant((int32_t)a00, RQ + 2 * m, yz, lo, hi);
            if (ns > 1) y[yj] = (unsigned char)o2c_qmcu_requant((int32_t)a01, RQ + 2 * m, yz, lo, hi);
            if (m + 1 < M) {
                y[ym] = (unsigned char)o2c_qmcu_requant((int32_t)a10, RQ + 2 * m + 2, yz, lo, hi);
                if (ns > 1) y[ym + yj] = (unsigned char)o2c_qmcu_requant((int32_t)a11, RQ + 2 * m + 2, yz, lo, hi);
            }
        }
    }
}

/* o2c_qmcu_X_Y's body (xs: X is int8): the convolution (group 1) or
 * product as o2c_qlin's, a pair of output pixels (a product's rows) at a
 * time: their two im2col columns of X - xz as int16 (K rounded up to KP4,
 * a multiple of 4, with zeros) in y[1], then o2c_qmcu_cols. x[2] W: M x
 * KP4 int8 packed for it. Index space N x ceil(OH OW / 2). */
static void o2c_qmcu_gemm(o2c_int i0, o2c_int i1, const o2c_p *p, int xs)
{
    O2C_QMCU_GEOMETRY;
    const unsigned char *X = (const unsigned char *)p->x[0];
    unsigned char *Y = (unsigned char *)p->y[0];
    int16_t *col = (int16_t *)p->y[1];
    const int32_t cl = (int32_t)p->k[O2C_QLIN_CL], K = C * KH * KW, KP4 = (K + 3) / 4 * 4, S = OH * OW;
    const int32_t NB = (S + 1) / 2;
    const int pointwise = KH == 1 && KW == 1 && SH == 1 && SW == 1 && PH == 0 && PW == 0 && OH == IH && OW == IW;
    const uint32_t flip = O2C_QMCU_FLIP(xs);
    const int32_t off = O2C_QMCU_ZP(p->x[1], xs) + (xs ? 128 : 0);
    const int32_t yz = O2C_QMCU_ZP(p->x[5], lo < 0);
    for (int32_t t = (int32_t)i0; t < (int32_t)i1; t++) {
        const int32_t n = t / NB, s0 = t % NB * 2, ns = s0 + 1 < S ? 2 : 1;
        for (int32_t j = 0; j < ns; j++) {   /* the columns */
            int16_t *cj = col + j * KP4;
            int32_t k = 0;
            if (pointwise) {   /* a 1 x 1 convolution, a product's row: one tap per channel */
                const unsigned char *xp = X + (cl ? (n * S + s0 + j) * C : n * C * S + s0 + j);
                const int32_t step = cl ? 1 : S;
                for (; k < C; k++, xp += step) cj[k] = (int16_t)((int32_t)(*xp ^ flip) - off);
            } else {   /* channels first (channels last comes only with a product's 1 x 1 geometry) */
                const int32_t oh = (s0 + j) / OW, ow = (s0 + j) % OW, ih0 = oh * SH - PH, iw0 = ow * SW - PW;
                for (int32_t c = 0; c < C; c++)
                    for (int32_t kh = 0; kh < KH; kh++) {
                        const int32_t ih = ih0 + kh * DH;
                        if (ih < 0 || ih >= IH) {
                            for (int32_t kw = 0; kw < KW; kw++) cj[k++] = 0;
                        } else {
                            const unsigned char *xr = X + ((n * C + c) * IH + ih) * IW;
                            for (int32_t kw = 0, iw = iw0; kw < KW; kw++, k++, iw += DW)
                                cj[k] = (int16_t)(iw >= 0 && iw < IW ? (int32_t)(xr[iw] ^ flip) - off : 0);
                        }
                    }
            }
            for (; k < KP4; k++) cj[k] = 0;
        }
        o2c_qmcu_cols((const unsigned char *)p->x[2], KP4, M, (const int32_t *)p->x[3], (const int32_t *)p->x[4], col,
                      col + KP4, ns, Y + (cl ? (n * S + s0) * M : n * M * S + s0), cl ? 1 : S, cl ? M : 1, yz, lo, hi);
    }
}

/*@ o2c_qmcu_dw needs o2c_qmcu_core */
/* o2c_qmcudw_X_Y's body: the depthwise convolution (group = C = M) as
 * o2c_qdw's, W as the model holds it (C x KH x KW int8), one output row a
 * step: its int32 sums in y[1] (OW values), tap by tap over the columns
 * whose tap is inside the row (no test per product). Index space
 * N x C x OH. */
static void o2c_qmcu_dw(o2c_int i0, o2c_int i1, const o2c_p *p, int xs)
{
    O2C_QMCU_GEOMETRY;
    const unsigned char *X = (const unsigned char *)p->x[0];
    const int8_t *W = (const int8_t *)p->x[2];
    const int32_t *Bs = (const int32_t *)p->x[3], *RQ = (const int32_t *)p->x[4];
    unsigned char *Y = (unsigned char *)p->y[0];
    int32_t *acc = (int32_t *)p->y[1];
    const uint32_t flip = O2C_QMCU_FLIP(xs);
    const int32_t off = O2C_QMCU_ZP(p->x[1], xs) + (xs ? 128 : 0);
    const int32_t yz = O2C_QMCU_ZP(p->x[5], lo < 0);
    (void)M;
    for (int32_t t = (int32_t)i0; t < (int32_t)i1; t++) {
        const int32_t oh = t % OH, c = t / OH % C, n = t / OH / C;
        const unsigned char *xc = X + (n * C + c) * IH * IW;
        const int8_t *wc = W + c * KH * KW;
        unsigned char *yr = Y + ((n * C + c) * OH + oh) * OW;
        const int32_t b = Bs ? Bs[c] : 0;
        for (int32_t ow = 0; ow < OW; ow++) acc[ow] = b;
        for (int32_t kh = 0; kh < KH; kh++) {
            const int32_t ih = oh * SH - PH + kh * DH;
            const unsigned char *xr;
            if (ih < 0 || ih >= IH) continue;
            xr = xc + ih * IW;
            for (int32_t kw = 0; kw < KW; kw++) {
                const int32_t w = wc[kh * KW + kw], o = kw * DW - PW;
                /* the output columns whose tap is inside the row: [a, e) */
                const int32_t a = o < 0 ? (-o + SW - 1) / SW : 0;
                int32_t e = IW - o > 0 ? (IW - o + SW - 1) / SW : 0;
                if (e > OW) e = OW;
                if (SW == 1)
                    for (int32_t ow = a; ow < e; ow++) acc[ow] += w * ((int32_t)(xr[ow + o] ^ flip) - off);
                else
                    for (int32_t ow = a; ow < e; ow++) acc[ow] += w * ((int32_t)(xr[ow * SW + o] ^ flip) - off);
            }
        }
        for (int32_t ow = 0; ow < OW; ow++) yr[ow] = (unsigned char)o2c_qmcu_requant(acc[ow], RQ + 2 * c, yz, lo, hi);
    }
}

/*@ o2c_qmcu_u8_u8 needs o2c_qmcu_gemm params O2C_QLIN */
O2C_KERNEL(o2c_qmcu_u8_u8) { o2c_qmcu_gemm(i0, i1, p, 0); }
/*@ o2c_qmcu_u8_i8 needs o2c_qmcu_gemm params O2C_QLIN */
O2C_KERNEL(o2c_qmcu_u8_i8) { o2c_qmcu_gemm(i0, i1, p, 0); }
/*@ o2c_qmcu_i8_u8 needs o2c_qmcu_gemm params O2C_QLIN */
O2C_KERNEL(o2c_qmcu_i8_u8) { o2c_qmcu_gemm(i0, i1, p, 1); }
/*@ o2c_qmcu_i8_i8 needs o2c_qmcu_gemm params O2C_QLIN */
O2C_KERNEL(o2c_qmcu_i8_i8) { o2c_qmcu_gemm(i0, i1, p, 1); }
/*@ o2c_qmcudw_u8_u8 needs o2c_qmcu_dw params O2C_QLIN */
O2C_KERNEL(o2c_qmcudw_u8_u8) { o2c_qmcu_dw(i0, i1, p, 0); }
/*@ o2c_qmcudw_u8_i8 needs o2c_qmcu_dw params O2C_QLIN */
O2C_KERNEL(o2c_qmcudw_u8_i8) { o2c_qmcu_dw(i0, i1, p, 0); }
/*@ o2c_qmcudw_i8_u8 needs o2c_qmcu_dw params O2C_QLIN */
O2C_KERNEL(o2c_qmcudw_i8_u8) { o2c_qmcu_dw(i0, i1, p, 1); }
/*@ o2c_qmcudw_i8_i8 needs o2c_qmcu_dw params O2C_QLIN */
O2C_KERNEL(o2c_qmcudw_i8_i8) { o2c_qmcu_dw(i0, i1, p, 1); }

/*@ o2c_wqmm_core */
/* o2c_wqmm_W_f32: see runtime/c/params/quant.h (O2C_WQMM_*). The weights
 * stay 8-bit in memory (a quarter of the float bytes to read: a product of
 * one row is as fast as its weights stream); (W - z) is exact in int32 and
 * exact as a float, the sums are float, the scale applied once at the end:
 * Y = s sum_k A (W - z) + B, which rounds apart from DequantizeLinear then
 * MatMul (s (W - z) rounded per weight) by a few float ulps of the sum.
 *
 * o2c_wqmm_block: acc[r][j] (nr rows, NR columns) += sum_k A[r, k] (W[k, j]
 * - z[j]), w the column block's packed weights (NR a k), sgn: W is int8.
 * On AVX2 each k's 16 weights become two float vectors once for the rows;
 * four rows at a time in 8 accumulators. */
#if defined(__AVX2__) && defined(__FMA__) && !defined(__CUDACC__)
#include <immintrin.h>
/* R rows (a constant: the accumulators stay in registers) */
#define O2C_WQMM_AVX2_ROWS(R)                                               \
    {                                                                       \
        O2C_WQ_AVX2_INIT(R);                                                \
        for (o2c_int k = 0; k < K; k++) {                                   \
            const __m128i b = _mm_loadu_si128((const __m128i *)(w + k * O2C_WQMM_NR)); \
            __m256i il = sgn ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b); \
            __m256i ih = sgn ? _mm256_cvtepi8_epi32(_mm_srli_si128(b, 8)) : _mm256_cvtepu8_epi32(_mm_srli_si128(b, 8)); \
            const __m256 wl = _mm256_cvtepi32_ps(_mm256_sub_epi32(il, zl)); \
            const __m256 wh = _mm256_cvtepi32_ps(_mm256_sub_epi32(ih, zh)); \
            O2C_WQ_AVX2_FMA(R, k, wl, wh)                                   \
        }                                                                   \
        O2C_WQ_AVX2_STORE(R)                                                \
    }
static inline void o2c_wqmm_block(const unsigned char *w, const int32_t *z, const float *const *ar, o2c_int nr,
                                  o2c_int K, int sgn, float (*acc)[O2C_WQMM_NR])
{
    const __m256i zl = _mm256_loadu_si256((const __m256i *)z), zh = _mm256_loadu_si256((const __m256i *)(z + 8));
    if (nr == 4) O2C_WQMM_AVX2_ROWS(4)
    else
        for (o2c_int r0 = 0; r0 < nr; r0++, ar++, acc++) O2C_WQMM_AVX2_ROWS(1)
}
#else
O2C_HD static inline void o2c_wqmm_block(const unsigned char *w, const int32_t *z, const float *const *ar, o2c_int nr,
                                         o2c_int K, int sgn, float (*acc)[O2C_WQMM_NR])
{
    for (o2c_int r = 0; r < nr; r++)
        for (int j = 0; j < O2C_WQMM_NR; j++) acc[r][j] = 0.0f;
    for (o2c_int k = 0; k < K; k++, w += O2C_WQMM_NR) {
        float wf[O2C_WQMM_NR];
        for (int j = 0; j < O2C_WQMM_NR; j++)
            wf[j] = (float)((sgn ? O2C_Q_BYTE_i8(w[j]) : (int32_t)w[j]) - z[j]);
        O2C_WQ_FMA_ROWS(nr, k, wf)
    }
}
#endif

#define O2C_WQMM_DEF(NAME, SGN)                                             \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        O2C_WQ_OPERANDS(int32_t);                                           \
        const o2c_int R = p->k[O2C_WQMM_ROWS], K = p->k[O2C_WQMM_K], N = p->k[O2C_WQMM_N]; \
        const o2c_int NBLK = (N + O2C_WQMM_NR - 1) / O2C_WQMM_NR;           \
        O2C_WQ_TILES(o2c_wqmm_block(Wp + nb * K * O2C_WQMM_NR, Z + n0, ar, nr, K, SGN, acc), S[n0 + j]) \
    }

/*@ o2c_wqmm_i8_f32 needs o2c_wqmm_core params O2C_WQMM */
O2C_WQMM_DEF(o2c_wqmm_i8_f32, 1)
/*@ o2c_wqmm_u8_f32 needs o2c_wqmm_core params O2C_WQMM */
O2C_WQMM_DEF(o2c_wqmm_u8_f32, 0)

/*@ o2c_wqmmb_core */
/* o2c_wqmmb_wB_f32: see runtime/c/params/quant.h (O2C_WQMMB_*): weights of
 * 4 or 8 bits with a scale and a zero point per block of K and column
 * (onnx's blocked DequantizeLinear, com.microsoft MatMulNBits). Each k's
 * weights become float as DequantizeLinear makes them, (W - z) s: W - z
 * is exact, one rounding of the product; the sums are float.
 *
 * o2c_wqmmb_block: acc[r][j] (nr rows, NR columns) = sum_k A[r, k] Wd[k,
 * j] for one column block: w its packed weights (NR BITS / 8 bytes a k),
 * z and s its KB x NR zero points and scales, BS rows of K a block. */
#if defined(__AVX2__) && defined(__FMA__) && !defined(__CUDACC__)
#include <immintrin.h>
/* R rows (a constant: the accumulators stay in registers) */
#define O2C_WQMMB_AVX2_ROWS(R)                                              \
    {                                                                       \
        O2C_WQ_AVX2_INIT(R);                                                \
        for (o2c_int k0 = 0, kb = 0; k0 < K; k0 += BS, kb++) {              \
            const unsigned char *zb = z + kb * O2C_WQMM_NR;                 \
            const float *sb = s + kb * O2C_WQMM_NR;                         \
            const __m256 zl = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)zb))); \
            const __m256 zh = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(zb + 8)))); \
            const __m256 sl = _mm256_loadu_ps(sb), sh = _mm256_loadu_ps(sb + 8); \
            const o2c_int k1 = K - k0 < BS ? K : k0 + BS;                   \
            for (o2c_int k = k0; k < k1; k++) {                             \
                __m128i bl, bh;                                             \
                if (bits == 4) {                                            \
                    const __m128i v = _mm_loadl_epi64((const __m128i *)(w + k * (O2C_WQMM_NR / 2))); \
                    bl = _mm_and_si128(v, nib);                             \
                    bh = _mm_and_si128(_mm_srli_epi16(v, 4), nib);          \
                } else {                                                    \
                    bl = _mm_loadu_si128((const __m128i *)(w + k * O2C_WQMM_NR)); \
                    bh = _mm_srli_si128(bl, 8);                             \
                }                                                           \
                const __m256 wl = _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bl)), zl), sl); \
                const __m256 wh = _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bh)), zh), sh); \
                O2C_WQ_AVX2_FMA(R, k, wl, wh)                               \
            }                                                               \
        }                                                                   \
        O2C_WQ_AVX2_STORE(R)                                                \
    }
static inline void o2c_wqmmb_block(const unsigned char *w, const unsigned char *z, const float *s, const float *const *ar,
                                   o2c_int nr, o2c_int K, o2c_int BS, int bits, float (*acc)[O2C_WQMM_NR])
{
    const __m128i nib = _mm_set1_epi8(15);
    if (nr == 4) O2C_WQMMB_AVX2_ROWS(4)
    else
        for (o2c_int r0 = 0; r0 < nr; r0++, ar++, acc++) O2C_WQMMB_AVX2_ROWS(1)
}
#else
O2C_HD static inline void o2c_wqmmb_block(const unsigned char *w, const unsigned char *z, const float *s,
                                          const float *const *ar, o2c_int nr, o2c_int K, o2c_int BS, int bits,
                                          float (*acc)[O2C_WQMM_NR])
{
    const o2c_int H = O2C_WQMM_NR / 2;
    for (o2c_int r = 0; r < nr; r++)
        for (int j = 0; j < O2C_WQMM_NR; j++) acc[r][j] = 0.0f;
    for (o2c_int k = 0; k < K; k++) {
        const unsigned char *zb = z + k / BS * O2C_WQMM_NR;
        const float *sb = s + k / BS * O2C_WQMM_NR;
        float wf[O2C_WQMM_NR];
        for (o2c_int j = 0; j < O2C_WQMM_NR; j++) {
            const int u = bits == 4 ? (j < H ? w[k * H + j] & 15 : w[k * H + j - H] >> 4) : w[k * O2C_WQMM_NR + j];
            wf[j] = ((float)u - zb[j]) * sb[j];
        }
        O2C_WQ_FMA_ROWS(nr, k, wf)
    }
}
#endif

#define O2C_WQMMB_DEF(NAME, BITS)                                           \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        O2C_WQ_OPERANDS(unsigned char);                                     \
        const o2c_int R = p->k[O2C_WQMMB_ROWS], K = p->k[O2C_WQMMB_K], N = p->k[O2C_WQMMB_N]; \
        const o2c_int BS = p->k[O2C_WQMMB_BS], KB = (K + BS - 1) / BS;      \
        const o2c_int NBLK = (N + O2C_WQMM_NR - 1) / O2C_WQMM_NR;           \
        O2C_WQ_TILES(o2c_wqmmb_block(Wp + nb * K * (O2C_WQMM_NR * (BITS) / 8), Z + nb * KB * O2C_WQMM_NR, \
                                     S + nb * KB * O2C_WQMM_NR, ar, nr, K, BS, BITS, acc), 1.0f) \
    }

/*@ o2c_wqmmb_w4_f32 needs o2c_wqmmb_core params O2C_WQMMB */
O2C_WQMMB_DEF(o2c_wqmmb_w4_f32, 4)
/*@ o2c_wqmmb_w8_f32 needs o2c_wqmmb_core params O2C_WQMMB */
O2C_WQMMB_DEF(o2c_wqmmb_w8_f32, 8)

/*@ o2c_wqmmp_core */
/* o2c_wqmmp_wB_f32: see runtime/c/params/quant.h (O2C_WQMMP_*). The panel
 * holds each weight as o2c_wqmmb makes it, (W - z) s, and the sums run in
 * the same order: the same bits as o2c_wqmmb, the conversion paid once per
 * column block instead of once per O2C_WQMM_RB rows. */
static inline void o2c_wqmmp_panel(const unsigned char *w, const unsigned char *z, const float *s, o2c_int K,
                                   o2c_int BS, int bits, float *P)
{
    const o2c_int H = O2C_WQMM_NR / 2;
    for (o2c_int k = 0; k < K; k++) {
        const unsigned char *zb = z + k / BS * O2C_WQMM_NR;
        const float *sb = s + k / BS * O2C_WQMM_NR;
        const unsigned char *wk = w + k * (O2C_WQMM_NR * bits / 8);
        float *pk = P + k * O2C_WQMM_NR;
        if (bits == 4)
            for (o2c_int j = 0; j < H; j++) {
                pk[j] = ((float)(wk[j] & 15) - (float)zb[j]) * sb[j];
                pk[j + H] = ((float)(wk[j] >> 4) - (float)zb[j + H]) * sb[j + H];
            }
        else
            for (o2c_int j = 0; j < O2C_WQMM_NR; j++) pk[j] = ((float)wk[j] - (float)zb[j]) * sb[j];
    }
}

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
/* R rows of A times the panel into acc (a constant R: registers) */
#define O2C_WQMMP_AVX2_ROWS(R)                                              \
    {                                                                       \
        O2C_WQ_AVX2_INIT(R);                                                \
        for (o2c_int k = 0; k < K; k++) {                                   \
            const __m256 wl = _mm256_loadu_ps(P + k * O2C_WQMM_NR), wh = _mm256_loadu_ps(P + k * O2C_WQMM_NR + 8); \
            O2C_WQ_AVX2_FMA(R, k, wl, wh)                                   \
        }                                                                   \
        O2C_WQ_AVX2_STORE(R)                                                \
    }
static inline void o2c_wqmmp_rows(const float *P, const float *const *ar, o2c_int nr, o2c_int K,
                                  float (*acc)[O2C_WQMM_NR])
{
    if (nr == O2C_WQMMP_RB) O2C_WQMMP_AVX2_ROWS(O2C_WQMMP_RB)
    else
        for (o2c_int r0 = 0; r0 < nr; r0++, ar++, acc++) O2C_WQMMP_AVX2_ROWS(1)
}
#else
static inline void o2c_wqmmp_rows(const float *P, const float *const *ar, o2c_int nr, o2c_int K,
                                  float (*acc)[O2C_WQMM_NR])
{
    for (o2c_int r = 0; r < nr; r++)
        for (int j = 0; j < O2C_WQMM_NR; j++) acc[r][j] = 0.0f;
    for (o2c_int k = 0; k < K; k++) O2C_WQ_FMA_ROWS(nr, k, P + k * O2C_WQMM_NR)
}
#endif

#define O2C_WQMMP_DEF(NAME, BITS)                                           \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        O2C_WQ_OPERANDS(unsigned char);                                     \
        float *P = (float *)p->y[1];                                        \
        const o2c_int R = p->k[O2C_WQMMB_ROWS], K = p->k[O2C_WQMMB_K], N = p->k[O2C_WQMMB_N]; \
        const o2c_int BS = p->k[O2C_WQMMB_BS], KB = (K + BS - 1) / BS;      \
        O2C_FOR(nb) {                                                       \
            const o2c_int n0 = nb * O2C_WQMM_NR, nn = N - n0 < O2C_WQMM_NR ? N - n0 : O2C_WQMM_NR; \
            o2c_wqmmp_panel(Wp + nb * K * (O2C_WQMM_NR * (BITS) / 8), Z + nb * KB * O2C_WQMM_NR, \
                            S + nb * KB * O2C_WQMM_NR, K, BS, BITS, P);     \
            for (o2c_int r0 = 0; r0 < R; r0 += O2C_WQMMP_RB) {              \
                const o2c_int nr = R - r0 < O2C_WQMMP_RB ? R - r0 : O2C_WQMMP_RB; \
                const float *ar[O2C_WQMMP_RB];                              \
                float acc[O2C_WQMMP_RB][O2C_WQMM_NR];                       \
                for (o2c_int r = 0; r < nr; r++) ar[r] = A + (r0 + r) * K;  \
                o2c_wqmmp_rows(P, ar, nr, K, acc);                          \
                for (o2c_int r = 0; r < nr; r++)                            \
                    for (o2c_int j = 0; j < nn; j++)                        \
                        Y[(r0 + r) * N + n0 + j] = acc[r][j] + (B ? B[n0 + j] : 0.0f); \
            }                                                               \
        }                                                                   \
    }

/*@ o2c_wqmmp_w4_f32 needs o2c_wqmmp_core params O2C_WQMMB */
O2C_WQMMP_DEF(o2c_wqmmp_w4_f32, 4)
/*@ o2c_wqmmp_w8_f32 needs o2c_wqmmp_core params O2C_WQMMB */
O2C_WQMMP_DEF(o2c_wqmmp_w8_f32, 8)

/*@ o2c_qsoftmax_core */
/* o2c_qsoftmax_X_Y: runtime/c/params/quant.h (O2C_QSM_*); onnxruntime's
 * QLinearSoftmax computes the same way (a table of exponentials of the
 * byte differences). */
/* the operands of o2c_qsoftmax_* and o2c_qsoftmax_row_* */
#define O2C_QSM_OPERANDS(TX, TY)                                            \
    const TX *X = (const TX *)p->x[0];                                      \
    const float *E = (const float *)p->x[1];                                \
    const float ys = *(const float *)p->x[2];                               \
    const TY *YZ = (const TY *)p->x[3];                                     \
    TY *Y = (TY *)p->y[0];                                                  \
    const o2c_int D = p->k[O2C_QSM_D];                                      \
    const float yz = YZ ? (float)YZ[0] : 0.0f
#define O2C_QSOFTMAX_DEF(NAME, TX, TY, LO, HI)                              \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        O2C_QSM_OPERANDS(TX, TY);                                           \
        const o2c_int IN = p->k[O2C_QSM_INNER];                             \
        O2C_FOR(r) {                                                        \
            const TX *x = X + r / IN * D * IN + r % IN;                     \
            TY *y = Y + r / IN * D * IN + r % IN;                           \
            int32_t m = x[0];                                               \
            float sum = 0.0f, inv;                                          \
            for (o2c_int d = 1; d < D; d++)                                 \
                if (x[d * IN] > m) m = x[d * IN];                           \
            for (o2c_int d = 0; d < D; d++) sum += E[m - x[d * IN]];        \
            inv = 1.0f / (sum * ys);                                        \
            for (o2c_int d = 0; d < D; d++) {                               \
                const float v = nearbyintf(E[m - x[d * IN]] * inv) + yz;    \
                y[d * IN] = (TY)O2C_Q_SAT(float, v, LO, HI);                \
            }                                                               \
        }                                                                   \
    }

/*@ o2c_qsoftmax_u8_u8 needs o2c_qsoftmax_core params O2C_QSM */
O2C_QSOFTMAX_DEF(o2c_qsoftmax_u8_u8, uint8_t, uint8_t, O2C_Q_LO_u8, O2C_Q_HI_u8)
/*@ o2c_qsoftmax_u8_i8 needs o2c_qsoftmax_core params O2C_QSM */
O2C_QSOFTMAX_DEF(o2c_qsoftmax_u8_i8, uint8_t, int8_t, O2C_Q_LO_i8, O2C_Q_HI_i8)
/*@ o2c_qsoftmax_i8_u8 needs o2c_qsoftmax_core params O2C_QSM */
O2C_QSOFTMAX_DEF(o2c_qsoftmax_i8_u8, int8_t, uint8_t, O2C_Q_LO_u8, O2C_Q_HI_u8)
/*@ o2c_qsoftmax_i8_i8 needs o2c_qsoftmax_core params O2C_QSM */
O2C_QSOFTMAX_DEF(o2c_qsoftmax_i8_i8, int8_t, int8_t, O2C_Q_LO_i8, O2C_Q_HI_i8)

/*@ o2c_qsoftmax_row_core needs o2c_qsoftmax_core */
/* o2c_qsoftmax_row_X_Y: o2c_qsoftmax_X_Y along the last axis (O2C_QSM_INNER
 * 1) for rows of up to O2C_QSM_ROW values (the tiled C target): a row's
 * exponentials kept in t, in loops the C compiler vectorizes (one gather
 * loop, the sum in 16 partial sums: another order of the same additions,
 * the output from t) */
#define O2C_QSOFTMAX_ROW_DEF(NAME, TX, TY, LO, HI)                          \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        O2C_QSM_OPERANDS(TX, TY);                                           \
        O2C_FOR(r) {                                                        \
            const TX *O2C_RESTRICT x = X + r * D;                           \
            TY *O2C_RESTRICT y = Y + r * D;                                 \
            int32_t m = x[0];                                               \
            float part[16], t[O2C_QSM_ROW], sum = 0.0f, inv;                \
            o2c_int e = 0;                                                  \
            for (o2c_int j = 1; j < D; j++) m = x[j] > m ? x[j] : m;        \
            for (o2c_int j = 0; j < D; j++) t[j] = E[m - x[j]];             \
            for (int l = 0; l < 16; l++) part[l] = 0.0f;                    \
            for (; e + 16 <= D; e += 16)                                    \
                for (int l = 0; l < 16; l++) part[l] += t[e + l];           \
            for (; e < D; e++) sum += t[e];                                 \
            for (int l = 0; l < 16; l++) sum += part[l];                    \
            inv = 1.0f / (sum * ys);                                        \
            for (o2c_int j = 0; j < D; j++) { /* O2C_Q_SAT in float */      \
                const float v = nearbyintf(t[j] * inv) + yz;                \
                const float c = !(v >= (float)(LO)) ? (float)(LO) : (v > (float)(HI) ? (float)(HI) : v); \
                y[j] = (TY)(int32_t)c;                                      \
            }                                                               \
        }                                                                   \
    }

/*@ o2c_qsoftmax_row_u8_u8 needs o2c_qsoftmax_row_core params O2C_QSM split */
O2C_QSOFTMAX_ROW_DEF(o2c_qsoftmax_row_u8_u8, uint8_t, uint8_t, O2C_Q_LO_u8, O2C_Q_HI_u8)
/*@ o2c_qsoftmax_row_u8_i8 needs o2c_qsoftmax_row_core params O2C_QSM split */
O2C_QSOFTMAX_ROW_DEF(o2c_qsoftmax_row_u8_i8, uint8_t, int8_t, O2C_Q_LO_i8, O2C_Q_HI_i8)
/*@ o2c_qsoftmax_row_i8_u8 needs o2c_qsoftmax_row_core params O2C_QSM split */
O2C_QSOFTMAX_ROW_DEF(o2c_qsoftmax_row_i8_u8, int8_t, uint8_t, O2C_Q_LO_u8, O2C_Q_HI_u8)
/*@ o2c_qsoftmax_row_i8_i8 needs o2c_qsoftmax_row_core params O2C_QSM split */
O2C_QSOFTMAX_ROW_DEF(o2c_qsoftmax_row_i8_i8, int8_t, int8_t, O2C_Q_LO_i8, O2C_Q_HI_i8)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_QUANT(K, F)                                                \
    K(o2c_quantize_f32_u8, F) K(o2c_quantize_f32_i8, F) K(o2c_quantize_f32_u16, F) K(o2c_quantize_f32_i16, F) \
    K(o2c_quantize_f64_u8, F) K(o2c_quantize_f64_i8, F) K(o2c_quantize_f64_u16, F) K(o2c_quantize_f64_i16, F) \
    K(o2c_dequantize_u8_f32, F) K(o2c_dequantize_i8_f32, F) K(o2c_dequantize_u16_f32, F)  \
    K(o2c_dequantize_i16_f32, F) K(o2c_dequantize_i32_f32, F) K(o2c_quantize_f32_n, F) K(o2c_dequantize_n_f32, F) K(o2c_dynq_params_f32, F) K(o2c_qscale_f32, F) \
    K(o2c_qmatmul_u8_u8_i32, F) K(o2c_qmatmul_u8_i8_i32, F) K(o2c_qmatmul_i8_u8_i32, F) K(o2c_qmatmul_i8_i8_i32, F) \
    K(o2c_qmatmul_u8_u8_u8, F) K(o2c_qmatmul_u8_i8_u8, F) K(o2c_qmatmul_i8_u8_u8, F) K(o2c_qmatmul_i8_i8_u8, F) \
    K(o2c_qmatmul_u8_u8_i8, F) K(o2c_qmatmul_u8_i8_i8, F) K(o2c_qmatmul_i8_u8_i8, F) K(o2c_qmatmul_i8_i8_i8, F) \
    K(o2c_qconv_u8_u8_i32, F) K(o2c_qconv_u8_i8_i32, F) K(o2c_qconv_i8_u8_i32, F) K(o2c_qconv_i8_i8_i32, F) \
    K(o2c_qconv_u8_u8_u8, F) K(o2c_qconv_u8_i8_u8, F) K(o2c_qconv_i8_u8_u8, F) K(o2c_qconv_i8_i8_u8, F) \
    K(o2c_qconv_u8_u8_i8, F) K(o2c_qconv_u8_i8_i8, F) K(o2c_qconv_i8_u8_i8, F) K(o2c_qconv_i8_i8_i8, F) \
    K(o2c_qgemm_u8_u8_f32, F) K(o2c_qgemm_u8_u8_u8, F) K(o2c_qgemm_u8_u8_i8, F) K(o2c_qgemm_u8_i8_f32, F) \
    K(o2c_qgemm_u8_i8_u8, F) K(o2c_qgemm_u8_i8_i8, F) K(o2c_qgemm_i8_u8_f32, F) K(o2c_qgemm_i8_u8_u8, F) \
    K(o2c_qgemm_i8_u8_i8, F) K(o2c_qgemm_i8_i8_f32, F) K(o2c_qgemm_i8_i8_u8, F) K(o2c_qgemm_i8_i8_i8, F) \
    K(o2c_qladd_u8, F) K(o2c_qladd_i8, F) K(o2c_qlmul_u8, F) K(o2c_qlmul_i8, F)    \
    K(o2c_qlut_u8, F) K(o2c_qlut_i8, F) K(o2c_qlut_apply, F)                     \
    K(o2c_qgavgpool_u8, F) K(o2c_qgavgpool_i8, F) K(o2c_qavgpool_u8, F) K(o2c_qavgpool_i8, F) \
    K(o2c_qconcat_u8, F) K(o2c_qconcat_i8, F)                                  \
    K(o2c_qlin_u8_u8, F) K(o2c_qlin_u8_i8, F) K(o2c_qlin_i8_u8, F) K(o2c_qlin_i8_i8, F) \
    K(o2c_qlin_u8_i32, F) K(o2c_qlin_i8_i32, F)                               \
    K(o2c_qdw_u8_u8, F) K(o2c_qdw_u8_i8, F) K(o2c_qdw_i8_u8, F) K(o2c_qdw_i8_i8, F)   \
    K(o2c_qdwp_u8_u8, F) K(o2c_qdwp_u8_i8, F) K(o2c_qdwp_i8_u8, F) K(o2c_qdwp_i8_i8, F) \
    K(o2c_wqmm_i8_f32, F) K(o2c_wqmm_u8_f32, F) K(o2c_wqmmb_w4_f32, F) K(o2c_wqmmb_w8_f32, F) \
    K(o2c_wqmmp_w4_f32, F) K(o2c_wqmmp_w8_f32, F) \
    K(o2c_qmcu_u8_u8, F) K(o2c_qmcu_u8_i8, F) K(o2c_qmcu_i8_u8, F) K(o2c_qmcu_i8_i8, F) \
    K(o2c_qmcudw_u8_u8, F) K(o2c_qmcudw_u8_i8, F) K(o2c_qmcudw_i8_u8, F) K(o2c_qmcudw_i8_i8, F) \
    K(o2c_qsoftmax_u8_u8, F) K(o2c_qsoftmax_u8_i8, F) K(o2c_qsoftmax_i8_u8, F) K(o2c_qsoftmax_i8_i8, F) \
    K(o2c_qsoftmax_row_u8_u8, F) K(o2c_qsoftmax_row_u8_i8, F) K(o2c_qsoftmax_row_i8_u8, F) K(o2c_qsoftmax_row_i8_i8, F)
