/* Parameter slots of the matrix-product kernels (runtime/c/matmul.h): the
 * lowerings (compiler/ops/matmul.c, fused_linear.c) write c->k[NAME], the
 * kernels read p->k[NAME]. The epilogue's slots (O2C_EPI_*, o2c_rt.h) come
 * after these. */

/* o2c_matmul_T, o2c_matmul_tile_f32: Y[b, m, n] = alpha * sum_k A[b, m, k]
 * * B[b, k, n] + beta * C[m, n] (C optional); Gemm's transposes are strides */
enum {
    O2C_MATMUL_M,
    O2C_MATMUL_N,
    O2C_MATMUL_K,
    O2C_MATMUL_SAM,                                      /* A stride between rows (m) */
    O2C_MATMUL_SAK,                                      /* A stride along k */
    O2C_MATMUL_SBK,                                      /* B stride along k */
    O2C_MATMUL_SBN,                                      /* B stride between columns (n) */
    O2C_MATMUL_R,                                        /* batch rank (0..6) */
    O2C_MATMUL_BDIMS,                                    /* batch dims */
    O2C_MATMUL_ASTR = O2C_MATMUL_BDIMS + O2C_MAX_RANK,   /* A batch strides (0: broadcast) */
    O2C_MATMUL_BSTR = O2C_MATMUL_ASTR + O2C_MAX_RANK,    /* B batch strides */
    O2C_MATMUL_HASC = O2C_MATMUL_BSTR + O2C_MAX_RANK,    /* C present */
    O2C_MATMUL_SCM,                                      /* C stride m */
    O2C_MATMUL_SCN,                                      /* C stride n */
    O2C_MATMUL_NCB,                                      /* tile variant: column tiles a cache block (0: all) (reference: unused) */
    O2C_MATMUL_BPACKED,                                  /* tile variant: 1 B packed in column panels (reference: unused) */
    O2C_MATMUL_NK
};
/* alpha, beta (also o2c_poolgemm_T's) */
enum { O2C_MATMUL_F_ALPHA, O2C_MATMUL_F_BETA, O2C_MATMUL_NF };
/* below the epilogue's slots */
O2C_PARAMS_FIT(matmul, O2C_MATMUL_NK + (O2C_NK - O2C_EPI_ACT), O2C_MATMUL_NF + (O2C_NF - O2C_EPI_FA))

/* o2c_poolgemm_T (GlobalPoolGemm): Y[n, m] = epi(alpha * sum_c
 * mean_s(X[n, c, s]) * W[m * SWM + c * SWC] + beta * Cb[m * SB]) */
enum {
    O2C_POOLGEMM_M,
    O2C_POOLGEMM_C,
    O2C_POOLGEMM_S,        /* spatial size */
    O2C_POOLGEMM_SWM,      /* W stride m */
    O2C_POOLGEMM_SWC,      /* W stride c */
    O2C_POOLGEMM_HASB,     /* bias present */
    O2C_POOLGEMM_SB,       /* its stride */
    O2C_POOLGEMM_NK
};
O2C_PARAMS_FIT(poolgemm, O2C_POOLGEMM_NK + (O2C_NK - O2C_EPI_ACT), O2C_MATMUL_NF + (O2C_NF - O2C_EPI_FA))
