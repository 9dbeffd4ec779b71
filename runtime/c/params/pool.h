/* Parameter slots of the pool kernels (runtime/c/pool.h): the lowering
 * (compiler/ops/pool.c) writes c->k[NAME], the kernel reads p->k[NAME].
 * Each geometry name is the base of 3 slots, (depth, height, width). */
enum {
    O2C_POOL_IN,                      /* input spatial dims */
    O2C_POOL_OUT = O2C_POOL_IN + 3,   /* output spatial dims */
    O2C_POOL_K = O2C_POOL_OUT + 3,    /* kernel dims */
    O2C_POOL_S = O2C_POOL_K + 3,      /* strides */
    O2C_POOL_D = O2C_POOL_S + 3,      /* dilations */
    O2C_POOL_PB = O2C_POOL_D + 3,     /* pads at the beginning */
    O2C_POOL_PE = O2C_POOL_PB + 3,    /* pads at the end */
    O2C_POOL_MODE = O2C_POOL_PE + 3,  /* maxpool: storage order of Indices; avgpool: mode */
    O2C_POOL_NK
};
/* maxpool: the value of a window with no tap inside the input; LpPool: p */
enum { O2C_POOL_F_PARAM, O2C_POOL_NF };
O2C_PARAMS_FIT(pool, O2C_POOL_NK, O2C_POOL_NF)
