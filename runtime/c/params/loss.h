/* Parameter slots of the loss kernels (runtime/c/loss.h): the lowering
 * (compiler/ops/loss.c) writes c->k[NAME], the kernel reads p->k[NAME].
 * (SoftmaxCrossEntropyLoss's log-softmax is norm.h's o2c_softmax_T with
 * the O2C_SOFTMAX_* slots.) */

/* o2c_nll_T: the input seen as N x C x D, the target as N x D */
enum {
    O2C_NLL_N,            /* batch */
    O2C_NLL_C,            /* classes */
    O2C_NLL_D,            /* product of the dims after the class axis (1 if none) */
    O2C_NLL_LSIZE,        /* element size of the target (4: int32, 8: int64) */
    O2C_NLL_REDUCTION,    /* O2C_LOSS_NONE, O2C_LOSS_SUM or O2C_LOSS_MEAN */
    O2C_NLL_HAS_II,       /* 1: ignore_index is set */
    O2C_NLL_II,           /* its value */
    O2C_NLL_NK
};
O2C_PARAMS_FIT(nll, O2C_NLL_NK, 0)

/* values of O2C_NLL_REDUCTION */
#define O2C_LOSS_NONE 0
#define O2C_LOSS_SUM 1
#define O2C_LOSS_MEAN 2
