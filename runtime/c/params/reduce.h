/* Parameter slots of the reduce kernels (runtime/c/reduce.h): the lowering
 * (compiler/ops/reduce.c) writes c->k[NAME], the kernel reads p->k[NAME]. */

/* o2c_reduce_T: the input seen as kept dims (the output's, in order) and
 * reduced dims, each list with up to O2C_MAX_RANK dims and their input
 * strides (elements). */
enum {
    O2C_REDUCE_OP,                                          /* O2C_RED_* */
    O2C_REDUCE_R,                                           /* reduced elements per output (0: empty set) */
    O2C_REDUCE_NKEPT,                                       /* number of kept dims */
    O2C_REDUCE_KEPT_DIMS,
    O2C_REDUCE_KEPT_STR = O2C_REDUCE_KEPT_DIMS + O2C_MAX_RANK,
    O2C_REDUCE_NRED = O2C_REDUCE_KEPT_STR + O2C_MAX_RANK,  /* number of reduced dims */
    O2C_REDUCE_RED_DIMS,
    O2C_REDUCE_RED_STR = O2C_REDUCE_RED_DIMS + O2C_MAX_RANK,
    O2C_REDUCE_LOW = O2C_REDUCE_RED_STR + O2C_MAX_RANK,     /* integer types: lowest value (ReduceMax start) */
    O2C_REDUCE_HIGH,                                        /* integer types: highest value (ReduceMin start) */
    O2C_REDUCE_NK
};
enum { O2C_REDUCE_F_EMPTY_MEAN, O2C_REDUCE_NF };            /* float types: ReduceMean of an empty set (NaN) */
O2C_PARAMS_FIT(reduce, O2C_REDUCE_NK, O2C_REDUCE_NF)

/* the operation, O2C_REDUCE_OP */
#define O2C_RED_SUM 0
#define O2C_RED_MEAN 1
#define O2C_RED_MAX 2
#define O2C_RED_MIN 3
#define O2C_RED_PROD 4
#define O2C_RED_L1 5
#define O2C_RED_L2 6
#define O2C_RED_SUMSQ 7
#define O2C_RED_LOGSUM 8
#define O2C_RED_LOGSUMEXP 9

/* o2c_argext_T (ArgMax, ArgMin) */
enum {
    O2C_ARGEXT_A,        /* length of the axis */
    O2C_ARGEXT_INNER,    /* product of the dims after it */
    O2C_ARGEXT_LAST,     /* select_last_index */
    O2C_ARGEXT_MAX,      /* 1: ArgMax, 0: ArgMin */
    O2C_ARGEXT_NK
};
O2C_PARAMS_FIT(argext, O2C_ARGEXT_NK, 0)
