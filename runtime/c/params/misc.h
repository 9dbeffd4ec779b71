/* Parameter slots of the misc kernels (runtime/c/misc.h): the lowering
 * (compiler/ops/misc.c) writes c->k[NAME], the kernel reads p->k[NAME].
 * (Its element-wise ops use the O2C_EW_* slots.) */

/* o2c_cumsum_T: the axis is read at run time from x[1] */
enum {
    O2C_CUMSUM_RANK,
    O2C_CUMSUM_DIMS,
    O2C_CUMSUM_AXSIZE = O2C_CUMSUM_DIMS + O2C_MAX_RANK,   /* element size of x[1] (4 or 8) */
    O2C_CUMSUM_EXCLUSIVE,
    O2C_CUMSUM_REVERSE,
    O2C_CUMSUM_NK
};
O2C_PARAMS_FIT(cumsum, O2C_CUMSUM_NK, 0)

/* o2c_eyelike_T */
enum { O2C_EYELIKE_W, O2C_EYELIKE_K, O2C_EYELIKE_NK };   /* columns, the diagonal */

/* o2c_hardmax_T: length of the axis, product of the dims after it */
enum { O2C_HARDMAX_N, O2C_HARDMAX_INNER, O2C_HARDMAX_NK };

/* o2c_det_T */
enum { O2C_DET_M, O2C_DET_NK };

/* o2c_trilu: rows and columns of the last two axes */
enum { O2C_TRILU_H, O2C_TRILU_W, O2C_TRILU_UPPER = 3, O2C_TRILU_ESIZE, O2C_TRILU_NK };

/* o2c_onehot */
enum {
    O2C_ONEHOT_DEPTH,
    O2C_ONEHOT_INNER,      /* product of the index dims from the axis */
    O2C_ONEHOT_ESIZE,      /* element size of the values */
    O2C_ONEHOT_NOWRAP,     /* 1: a negative index is off everywhere (OneHot-9), 0: + depth (11) */
    O2C_ONEHOT_NK
};
