/* Parameter slots of the norm kernels (runtime/c/norm.h): the lowering
 * (compiler/ops/norm.c) writes c->k[NAME], the kernel reads p->k[NAME]. */

/* o2c_softmax_T */
enum {
    O2C_SOFTMAX_A,        /* length of the axis */
    O2C_SOFTMAX_INNER,    /* stride of the axis */
    O2C_SOFTMAX_LOG,      /* 1: LogSoftmax */
    O2C_SOFTMAX_HALF,     /* o2c_softmax16_f32: 1 float16, 2 bfloat16 data */
    O2C_SOFTMAX_NK
};
O2C_PARAMS_FIT(softmax, O2C_SOFTMAX_NK, 0)
/* o2c_softmax_cols_f32: the columns of a block (its index space is outer x ceil(INNER / CB)) */
#define O2C_SMC_CB 64

/* o2c_layernorm_T[_U] */
enum {
    O2C_LAYERNORM_N,      /* normalized elements per row */
    O2C_LAYERNORM_MODE,   /* 0: Y to y[0] and, if y[1], Mean to y[1]; 1: InvStdDev to y[0] (no Y) */
    O2C_LAYERNORM_NR = 3, /* 0 when Scale and B have N elements; else the rank of the normalized shape */
    O2C_LAYERNORM_DIMS,   /* its dims */
    O2C_LAYERNORM_SSTR = O2C_LAYERNORM_DIMS + O2C_MAX_RANK,   /* Scale strides (0: broadcast) */
    O2C_LAYERNORM_BSTR = O2C_LAYERNORM_SSTR + O2C_MAX_RANK,   /* B strides */
    O2C_LAYERNORM_NK = O2C_LAYERNORM_BSTR + O2C_MAX_RANK
};
/* epsilon: the layer, batch (prep, train) and instance norms; momentum: batchnorm_running */
enum { O2C_NORM_F_EPS, O2C_NORM_NF };
#define O2C_NORM_F_MOMENTUM O2C_NORM_F_EPS
O2C_PARAMS_FIT(layernorm, O2C_LAYERNORM_NK, O2C_NORM_NF)

/* o2c_batchnorm_T: c = (i / INNER) % C */
enum { O2C_BATCHNORM_C, O2C_BATCHNORM_INNER, O2C_BATCHNORM_NK };
/* o2c_batchnorm_train_T */
enum { O2C_BNTRAIN_N, O2C_BNTRAIN_C, O2C_BNTRAIN_INNER, O2C_BNTRAIN_NK };
/* o2c_batchnorm_running_T */
enum { O2C_BNRUN_C, O2C_BNRUN_NK };
/* o2c_instnorm_T */
enum { O2C_INSTNORM_C, O2C_INSTNORM_S, O2C_INSTNORM_NK };   /* channels, spatial size */
