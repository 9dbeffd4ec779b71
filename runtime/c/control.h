/* Control flow (If, Loop, Scan; compiler/ops/control.c): the loop counter,
 * the loop test, and the slices a scan reads and writes. The control flow
 * itself is written by the emitters around the bodies' kernel calls. */

/* o2c_scan_get's and o2c_scan_put's operands: the bytes X (x[0]) and Y,
 * the scan axis' length, the elements inside it, the element size, and the
 * slice t that x[1] (the loop counter) selects */
#define O2C_SCAN_SLICE                                                                             \
    const unsigned char *X = (const unsigned char *)p->x[0];                                       \
    unsigned char *Y = (unsigned char *)p->y[0];                                                   \
    const o2c_int len = p->k[O2C_SCAN_LEN], inner = p->k[O2C_SCAN_INNER], es = p->k[O2C_SCAN_ESIZE]; \
    const int64_t it = *(const int64_t *)p->x[1];                                                  \
    const o2c_int t = p->k[O2C_SCAN_REVERSE] ? len - 1 - it : it

/*@ o2c_ctl_set params O2C_CTL_SET */
/* o2c_ctl_set: y[0] = O2C_CTL_SET_VALUE as int64 or bool. Index space: 1. */
O2C_KERNEL(o2c_ctl_set)
{
    O2C_FOR(i) {
        (void)i;
        if (p->k[O2C_CTL_SET_ESIZE] == 8) *(int64_t *)p->y[0] = p->k[O2C_CTL_SET_VALUE];
        else *(uint8_t *)p->y[0] = (uint8_t)(p->k[O2C_CTL_SET_VALUE] != 0);
    }
}

/*@ o2c_ctl_inc */
/* o2c_ctl_inc: the loop counter y[0] (int64) += 1. Index space: 1. */
O2C_KERNEL(o2c_ctl_inc)
{
    O2C_FOR(i) {
        (void)i;
        *(int64_t *)p->y[0] += 1;
    }
}

/*@ o2c_loop_test params O2C_LOOP */
/* o2c_loop_test: whether a loop runs iteration x[0]: below the static and
 * the run-time trip counts, the condition true. y[1] (if given): it would
 * run past the static length of its scan outputs. Index space: 1. */
O2C_KERNEL(o2c_loop_test)
{
    O2C_FOR(i) {
        int64_t it = *(const int64_t *)p->x[0];
        int go = 1;
        (void)i;
        if (p->k[O2C_LOOP_TRIP] >= 0 && it >= p->k[O2C_LOOP_TRIP]) go = 0;
        if (p->k[O2C_LOOP_HAS_TRIP] && it >= *(const int64_t *)p->x[1]) go = 0;
        if (p->k[O2C_LOOP_HAS_COND] && !*(const uint8_t *)p->x[2]) go = 0;
        *(uint8_t *)p->y[0] = (uint8_t)go;
        if (p->y[1]) *(uint8_t *)p->y[1] = (uint8_t)(go && p->k[O2C_LOOP_CAP] >= 0 && it >= p->k[O2C_LOOP_CAP]);
    }
}

/*@ o2c_loop_done params O2C_LOOP */
/* o2c_loop_done: y[0] = the loop ran another number of iterations (x[0])
 * than O2C_LOOP_CAP. Index space: 1. */
O2C_KERNEL(o2c_loop_done)
{
    O2C_FOR(i) {
        (void)i;
        *(uint8_t *)p->y[0] = (uint8_t)(*(const int64_t *)p->x[0] != p->k[O2C_LOOP_CAP]);
    }
}

/*@ o2c_scan_get params O2C_SCAN */
/* o2c_scan_get: y = slice t of x along the scan axis, t = *x[1] (the loop
 * counter) or LEN - 1 - t. Index space: OUTER * INNER elements. */
O2C_KERNEL(o2c_scan_get)
{
    O2C_SCAN_SLICE;
    O2C_FOR(i) {
        o2c_int o = i / inner, r = i - o * inner, b;
        const unsigned char *s = X + ((o * len + t) * inner + r) * es;
        for (b = 0; b < es; b++) Y[i * es + b] = s[b];
    }
}

/*@ o2c_scan_put params O2C_SCAN */
/* o2c_scan_put: slice t of y along the scan axis = x[0] (t as for
 * o2c_scan_get). Index space: OUTER * INNER elements. */
O2C_KERNEL(o2c_scan_put)
{
    O2C_SCAN_SLICE;
    O2C_FOR(i) {
        o2c_int o = i / inner, r = i - o * inner, b;
        unsigned char *d = Y + ((o * len + t) * inner + r) * es;
        for (b = 0; b < es; b++) d[b] = X[i * es + b];
    }
}

/*@ o2c_opt_has */
/* o2c_opt_has: y[0] = x[0] is there (an optional graph input the caller
 * passed, not NULL). Index space: 1. */
O2C_KERNEL(o2c_opt_has)
{
    O2C_FOR(i) {
        (void)i;
        *(uint8_t *)p->y[0] = (uint8_t)(p->x[0] != 0);
    }
}

/* ---- registry (not emitted) ---- */
#define O2C_KERNELS_CONTROL(K, F) K(o2c_ctl_set, F) K(o2c_ctl_inc, F) K(o2c_loop_test, F) K(o2c_loop_done, F) \
    K(o2c_scan_get, F) K(o2c_scan_put, F) K(o2c_opt_has, F)
