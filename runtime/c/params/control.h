/* Parameter slots of the control-flow kernels (runtime/c/control.h): the
 * lowering (compiler/ops/control.c) writes c->k[NAME], the kernel reads
 * p->k[NAME]. */

/* o2c_ctl_set: y[0] = a constant (the loop counter's 0, a condition's 1) */
enum {
    O2C_CTL_SET_VALUE,   /* the value */
    O2C_CTL_SET_ESIZE,   /* bytes of y's element: 8 (int64) or 1 (bool) */
    O2C_CTL_SET_NK
};
O2C_PARAMS_FIT(ctl_set, O2C_CTL_SET_NK, 0)

/* o2c_loop_test: x[0] counter, x[1] run-time trip count (int64), x[2]
 * condition (bool); y[0] = go on, y[1] = going on past the static length */
enum {
    O2C_LOOP_TRIP,       /* static trip count, -1: none */
    O2C_LOOP_HAS_TRIP,   /* 1: x[1] is the trip count */
    O2C_LOOP_HAS_COND,   /* 1: x[2] is the condition */
    O2C_LOOP_CAP,        /* the scan outputs' static length (y[1]), -1: none */
    O2C_LOOP_NK
};
O2C_PARAMS_FIT(loop_test, O2C_LOOP_NK, 0)

/* o2c_loop_done: y[0] = (x[0] != O2C_LOOP_CAP): the loop ran another
 * number of iterations than its scan outputs' static length (same slots) */

/* o2c_scan_get / o2c_scan_put: slice iter (or LEN - 1 - iter) of a tensor
 * seen as OUTER x LEN x INNER elements */
enum {
    O2C_SCAN_OUTER,      /* product of the dims before the scan axis */
    O2C_SCAN_LEN,        /* the scan axis */
    O2C_SCAN_INNER,      /* product of the dims after it */
    O2C_SCAN_ESIZE,      /* element bytes */
    O2C_SCAN_REVERSE,    /* 1: from the end */
    O2C_SCAN_NK
};
O2C_PARAMS_FIT(scan, O2C_SCAN_NK, 0)
