/* Parameter slots of the quantization kernels (runtime/c/quant.h): the
 * lowering (compiler/ops/quant.c) writes c->k[NAME], the kernel reads
 * p->k[NAME]. */

/* How an element of the data (flat index i) finds its scale and zero point
 * (QuantizeLinear, DequantizeLinear): the data seen as outer x D x INNER
 * around the quantization axis, blocks of B along it, and
 *   s = (i / (INNER * D)) * SO + ((i / INNER) % D / B) * SA + (i % INNER) * SI.
 * Per tensor: every stride 0; per axis: SA 1; blocked: SO = ceil(D / B) *
 * INNER, SA = INNER, SI = 1. */
enum {
    O2C_QP_INNER,      /* product of the dims after the axis */
    O2C_QP_D,          /* length of the axis */
    O2C_QP_B,          /* block size (1: per axis) */
    O2C_QP_SO,
    O2C_QP_SA,
    O2C_QP_SI,
    O2C_QP_NK
};

/* o2c_quantize_R_Q: y = saturate(round(x / scale) + zero point), x[0] the
 * data, x[1] the scales, x[2] the zero points or NULL (both R, the type the
 * division is made in); the O2C_QP_* slots, then: */
enum {
    O2C_QUANT_PREC = O2C_QP_NK,   /* O2C_QPREC_*: precision the float operands and quotient are rounded to */
    O2C_QUANT_NK
};
O2C_PARAMS_FIT(quantize, O2C_QUANT_NK, 0)

/* o2c_dequantize_Q_f32: y = (x - zero point) * scale; the O2C_QP_* slots */
enum { O2C_DEQUANT_NK = O2C_QP_NK };

/* o2c_quantize_f32_n, o2c_dequantize_n_f32: the same for a narrow type
 * (float8, float4, int4, int2: one byte an element), after the slots above */
enum {
    O2C_QUANTN_NT = O2C_QUANT_NK,   /* the narrow type (O2C_NT_*, runtime/c/params/types.h) */
    O2C_QUANTN_SAT,                 /* float8/float4: saturate (1) or not, as Cast */
    O2C_QUANTN_NK
};
O2C_PARAMS_FIT(quantize_n, O2C_QUANTN_NK, 0)
enum { O2C_DEQUANTN_NT = O2C_QP_NK, O2C_DEQUANTN_NK };

/* Rounding of a float value to a narrower float's precision (o2c_q_prec). */
enum { O2C_QPREC_NONE, O2C_QPREC_F16, O2C_QPREC_BF16 };

/* o2c_dynq_params_f32 (DynamicQuantizeLinear): the scale and zero point of
 * the whole tensor x[0]; index space 1 */
enum { O2C_DYNQ_N, O2C_DYNQ_NK };

/* o2c_qmatmul_A_B_Y (MatMulInteger with Y int32, QLinearMatMul with Y
 * 8-bit): Y[b, m, n] = sum_k (A[b, m, k] - az) (B[b, k, n] - bz), requantized
 * for QLinearMatMul by as * bs / ys (exactly, o2c_q_requant) and yz.
 * x[0] A, x[1] B, x[2] az, x[3] bz (NULL: 0), x[4] as, x[5] bs, x[6] ys,
 * x[7] yz. Each quantization parameter is per tensor or a vector along m
 * (row) or n (column): its strides along m and n. */
enum {
    O2C_QMM_M,
    O2C_QMM_N,
    O2C_QMM_K,
    O2C_QMM_R,                                   /* batch rank */
    O2C_QMM_BDIMS,                               /* batch dims */
    O2C_QMM_ASTR = O2C_QMM_BDIMS + O2C_MAX_RANK,  /* A batch strides (0: broadcast) */
    O2C_QMM_BSTR = O2C_QMM_ASTR + O2C_MAX_RANK,   /* B batch strides */
    O2C_QMM_AZ_M = O2C_QMM_BSTR + O2C_MAX_RANK,   /* az stride along m (0 or 1) */
    O2C_QMM_BZ_N,                                /* bz stride along n */
    O2C_QMM_AS_M,                                /* as stride along m */
    O2C_QMM_BS_N,                                /* bs stride along n */
    O2C_QMM_YS_M,                                /* ys strides along m and n */
    O2C_QMM_YS_N,
    O2C_QMM_YZ_M,                                /* yz strides along m and n */
    O2C_QMM_YZ_N,
    O2C_QMM_PREC,                                /* O2C_QPREC_*: the scales' type (the multiplier is computed in it) */
    O2C_QMM_NK
};
O2C_PARAMS_FIT(qmatmul, O2C_QMM_NK, 0)

/* o2c_qconv_X_W_Y (ConvInteger with Y int32, QLinearConv with Y 8-bit):
 * the direct convolution of (X - xz) and (W - wz[m]) plus B[m], requantized
 * for QLinearConv by the multiplier MUL[m] and yz. x[0] X, x[1] W, x[2] xz,
 * x[3] wz (NULL: 0), x[4] B (int32, or NULL), x[5] MUL (float), x[6] yz.
 * Geometry as the float convolutions' (3 slots each: depth, height, width). */
enum {
    O2C_QCONV_C,
    O2C_QCONV_M,
    O2C_QCONV_GROUP,
    O2C_QCONV_IN,
    O2C_QCONV_OUT = O2C_QCONV_IN + 3,
    O2C_QCONV_K = O2C_QCONV_OUT + 3,
    O2C_QCONV_S = O2C_QCONV_K + 3,
    O2C_QCONV_D = O2C_QCONV_S + 3,
    O2C_QCONV_PB = O2C_QCONV_D + 3,
    O2C_QCONV_WZ_M = O2C_QCONV_PB + 3,   /* wz stride along the output channels (0 or 1) */
    O2C_QCONV_MUL_M,                     /* MUL stride along the output channels */
    O2C_QCONV_QMIN,                      /* the output clamp (QLinearConv: the type's range; */
    O2C_QCONV_QMAX,                      /* FusedQLinearConv: its activation's range within it) */
    O2C_QCONV_NK
};
O2C_PARAMS_FIT(qconv, O2C_QCONV_NK, 0)

/* o2c_qscale_f32: y[j] = (alpha * a[j * SA] * b[j * SB]) / c[j * SC] in
 * float, c NULL: no division (QLinearConv's and QGemm's multipliers);
 * index space: the values */
enum { O2C_QSCALE_SA, O2C_QSCALE_SB, O2C_QSCALE_SC, O2C_QSCALE_NK };
enum { O2C_QSCALE_F_ALPHA, O2C_QSCALE_NF };
O2C_PARAMS_FIT(qscale, O2C_QSCALE_NK, O2C_QSCALE_NF)

/* o2c_qgemm_A_B_Y (com.microsoft QGemm): acc = C[m, n] + sum_k (A[m, k] -
 * az) (B[k, n] - bz[n]) in 32 bits; Y = acc * SC[n] (float output) or
 * saturate(round(acc * SC[n]) + yz) in float, as onnxruntime. x[0] A, x[1]
 * az, x[2] B, x[3] bz, x[4] C (int32 or NULL), x[5] SC (float), x[6] yz */
enum {
    O2C_QGEMM_M,
    O2C_QGEMM_N,
    O2C_QGEMM_K,
    O2C_QGEMM_SAM,    /* A strides along m and k (transA) */
    O2C_QGEMM_SAK,
    O2C_QGEMM_SBK,    /* B strides along k and n (transB) */
    O2C_QGEMM_SBN,
    O2C_QGEMM_SCM,    /* C strides along m and n (0: broadcast) */
    O2C_QGEMM_SCN,
    O2C_QGEMM_BZ_N,   /* bz stride along n (0 or 1) */
    O2C_QGEMM_SC_N,   /* SC stride along n */
    O2C_QGEMM_QMIN,   /* an 8-bit Y's clamp (the type's range, or narrower) */
    O2C_QGEMM_QMAX,
    O2C_QGEMM_NK
};

/* o2c_qladd_T, o2c_qlmul_T (com.microsoft QLinearAdd, QLinearMul): x[0] A,
 * x[1] as, x[2] az, x[3] B, x[4] bs, x[5] bz, x[6] cs, x[7] cz (zero points
 * may be NULL); broadcasting as the element-wise kernels: the output's rank
 * (0: no broadcast), dims, then each operand's strides */
enum {
    O2C_QBIN_RANK,
    O2C_QBIN_DIMS,
    O2C_QBIN_SA = O2C_QBIN_DIMS + O2C_MAX_RANK,
    O2C_QBIN_SB = O2C_QBIN_SA + O2C_MAX_RANK,
    O2C_QBIN_NK = O2C_QBIN_SB + O2C_MAX_RANK
};
O2C_PARAMS_FIT(qbinary, O2C_QBIN_NK, 0)

/* o2c_qlut_T: the 256-entry table of a quantized unary function
 * (QLinearSigmoid, QLinearLeakyRelu): y[j] = quantize(f(dequantize(j)));
 * x[0] xs, x[1] xz, x[2] ys, x[3] yz (zero points may be NULL); index
 * space 256. o2c_qlut_apply: Y[i] = table[X[i]] (bytes). */
enum { O2C_QLUT_FN, O2C_QLUT_NK };
enum { O2C_QLUT_F_ALPHA, O2C_QLUT_NF };
enum { O2C_QLUT_IDENTITY, O2C_QLUT_LEAKYRELU, O2C_QLUT_SIGMOID };
O2C_PARAMS_FIT(qlut, O2C_QLUT_NK, O2C_QLUT_NF)

/* o2c_qgavgpool_T (com.microsoft QLinearGlobalAveragePool): the mean of
 * each (n, c) image requantized; x[0] X, x[1] xs, x[2] xz, x[3] ys, x[4] yz;
 * index space N x C */
enum {
    O2C_QGAP_C,
    O2C_QGAP_S,      /* image size */
    O2C_QGAP_CL,     /* 1: channels last (N x spatial x C) */
    O2C_QGAP_NK
};

/* o2c_qconcat_T (com.microsoft QLinearConcat): one input's part of the
 * output: Y[(i / PIN) * POUT + OFF + i % PIN] = requantize(X[i]); x[0] X,
 * x[1] its scale, x[2] its zero point, x[3] ys, x[4] yz; index space: the
 * input's elements */
enum { O2C_QCAT_PIN, O2C_QCAT_POUT, O2C_QCAT_OFF, O2C_QCAT_NK };

/* o2c_qavgpool_T (com.microsoft QLinearAveragePool): the window's values
 * dequantized (xs * (x - xz), float), summed in row-major window order,
 * divided by the count, requantized round(v / ys + yz); x[0] X, x[1] xs,
 * x[2] xz, x[3] ys, x[4] yz; index space: the output elements (in the
 * output's layout) */
enum {
    O2C_QAP_C,
    O2C_QAP_IN,                       /* input spatial dims (depth, height, width) */
    O2C_QAP_OUT = O2C_QAP_IN + 3,     /* output spatial dims */
    O2C_QAP_K = O2C_QAP_OUT + 3,      /* kernel */
    O2C_QAP_S = O2C_QAP_K + 3,        /* strides */
    O2C_QAP_PB = O2C_QAP_S + 3,       /* pads at the beginning */
    O2C_QAP_INCL = O2C_QAP_PB + 3,    /* count_include_pad: divide by the kernel size */
    O2C_QAP_CL,                       /* 1: channels last (N x spatial x C) */
    O2C_QAP_NK
};

/* o2c_qlin_X_Y: the integer convolution (group 1) or matrix product of
 * FusedQLinearConv/QLinearConv and FusedQLinearMatMul/QLinearMatMul with
 * int8 weights of zero point 0, as a packed GEMM: Y[m, p] = requantize(B[m]
 * + sum_k W[m, k] (X[k, p] - xz)), k over the (channel, kh, kw) taps, p
 * over the output pixels (a product's rows). x[0] X, x[1] xz (NULL: 0),
 * x[2] W packed (O2C_QLIN_MR channels to a pair of k:
 * Wp[((m / MR) * KP + k / 2) * 2 MR + 2 (m % MR) + k % 2] = W[m, k], zero
 * past M and K), x[3] B (int32, or NULL), x[4] MUL (float, MP values; NULL:
 * Y is int32, the sums themselves: ConvInteger, MatMulInteger), x[5] yz
 * (NULL: 0), x[6] OFF (int32, M values, or NULL): weights stored less an
 * offset per channel (W[m, k] - wz[m] - OFF[m], to fit int8: uint8 weights
 * or zero points not 0), the sums get OFF[m] times the pixel's sum of
 * X - xz back; y[0] Y, y[1] the panel scratch (KP x PBW pairs of int16).
 * Index space: N x ceil(OH OW / PPB) pixel blocks. Where BR > 0 (a
 * convolution, channels first), y[1] holds after the panel a band of C x
 * BR rows of (OW - 1) SW + (KW - 1) DW + 1 int16: the input rows a pixel
 * block reads, less xz, with the padding as zeros; the panel's rows are
 * then copies of every SW-th value of the band's. */
enum {
    O2C_QLIN_C,        /* input channels (a product: K) */
    O2C_QLIN_M,        /* output channels (a product: N) */
    O2C_QLIN_IH,
    O2C_QLIN_IW,
    O2C_QLIN_OH,
    O2C_QLIN_OW,
    O2C_QLIN_KH,
    O2C_QLIN_KW,
    O2C_QLIN_SH,
    O2C_QLIN_SW,
    O2C_QLIN_DH,
    O2C_QLIN_DW,
    O2C_QLIN_PH,       /* padding before (height, width) */
    O2C_QLIN_PW,
    O2C_QLIN_CL,       /* 1: X and Y channels last (N x H x W x C; a product's rows x columns) */
    O2C_QLIN_QMIN,     /* the output clamp */
    O2C_QLIN_QMAX,
    O2C_QLIN_PBW,      /* pixels of a panel: O2C_QLIN_PB, or fewer (a multiple of NR) for a small image */
    O2C_QLIN_PPB,      /* pixels of a block (at most PBW: the panel's columns past it are zero) */
    O2C_QLIN_BR,       /* > 0: the panel is copied from a band of BR zero-padded input rows (below) */
    O2C_QLIN_NK
};
O2C_PARAMS_FIT(qlin, O2C_QLIN_NK, 0)
/* output channels of a packed weight tile, output pixels of a register
 * tile, the most pixels of a panel (a multiple of NR) */
#define O2C_QLIN_MR 16
#define O2C_QLIN_NR 5
#define O2C_QLIN_PB 40
/* the values o2c_qdw_taps may compute past a plane's end */
#define O2C_QDW_SLACK 16

/* o2c_qsoftmax_X_Y (FusedQSoftmax): along an axis of D values (INNER
 * apart), y = saturate(round(e[m - x] / (sum e[m - x]) / ys) + yz), m the
 * row's largest byte value, e[d] = exp(-x_scale d) a table made at compile
 * time (x's zero point cancels). x[0] X, x[1] the 256 e (float), x[2] ys,
 * x[3] yz (NULL: 0); index space: the rows (outer x INNER) */
enum { O2C_QSM_D, O2C_QSM_INNER, O2C_QSM_NK };
/* the longest row o2c_qsoftmax_row_* takes (its stack copy of a row's exponentials) */
#define O2C_QSM_ROW 1024
O2C_PARAMS_FIT(qsoftmax, O2C_QSM_NK, 0)

/* o2c_wqmm_W_f32 (FusedWQMatMul: weight-only quantization): Y = A Wd + B
 * with Wd = (W - z) s per column, float A (ROWS x K) and Y (ROWS x N); W
 * (int8 or uint8) kept integer, packed at compile time in blocks of
 * O2C_WQMM_NR columns: Wp[(nb K + k) NR + j] = W[k, nb NR + j] (0 past N).
 * x[0] A, x[1] Wp, x[2] z (int32, NR ceil(N / NR) values, 0 past N), x[3]
 * s (float, as z), x[4] B (float, N values) or NULL; y[0] Y. Each of
 * ceil(ROWS / RB) x ceil(N / NR) blocks: RB rows against a column block,
 * each k's NR weights converted to float once for the RB rows. */
enum { O2C_WQMM_ROWS, O2C_WQMM_K, O2C_WQMM_N, O2C_WQMM_NK };
O2C_PARAMS_FIT(wqmm, O2C_WQMM_NK, 0)
#define O2C_WQMM_NR 16
#define O2C_WQMM_RB 4

/* o2c_wqmmb_wB_f32 (FusedWQMatMul with 4-bit weights, or scales per block
 * of K): Y = A Wd + B with Wd[k, j] = (W[k, j] - z[kb, j]) s[kb, j], kb = k
 * / BS (BS = K: one scale a column). W is stored unsigned (a signed
 * weight plus 8 or 128, its zero point likewise: W - z is the same) and
 * packed in column blocks of O2C_WQMM_NR: per block and k, NR bytes
 * (wB = 8: byte j column j) or NR / 2 (wB = 4: byte j holds column j in its
 * low and column j + NR / 2 in its high four bits). x[0] A, x[1] the packed
 * W, x[2] z (uint8, ceil(N / NR) x KB x NR: block nb, k block kb, column
 * j; 0 past N), x[3] s (float, as z), x[4] B (float, N) or NULL; y[0] Y.
 * Each k's NR weights become float once for the RB rows, exactly as
 * DequantizeLinear makes them. */
enum { O2C_WQMMB_ROWS, O2C_WQMMB_K, O2C_WQMMB_N, O2C_WQMMB_BS, O2C_WQMMB_NK };
O2C_PARAMS_FIT(wqmmb, O2C_WQMMB_NK, 0)

/* o2c_wqmmp_wB_f32: the same product for many rows (the C target's tiled
 * variant, ROWS >= O2C_WQMMP_MIN_ROWS): the O2C_WQMMB_* slots and inputs,
 * y[1] a scratch of K x NR floats. Index space: the column blocks; each
 * dequantizes its K x NR weights into the scratch once, then multiplies
 * every row by them, O2C_WQMMP_RB rows at a time. */
#define O2C_WQMMP_RB 6
#define O2C_WQMMP_MIN_ROWS 8
