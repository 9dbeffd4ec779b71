/* Parameter slots of the resize kernels (runtime/c/resize.h): the lowering
 * (compiler/ops/resize.c) writes c->k[NAME], the kernel reads p->k[NAME].
 * Per-axis lists hold O2C_MAX_RANK slots: the output dims, T_d (taps per
 * output coordinate of axis d) and B_d (where axis d's table starts). */

/* o2c_resize_nearest */
enum {
    O2C_RESIZE_NEAREST_ESIZE,
    O2C_RESIZE_NEAREST_RANK,
    O2C_RESIZE_NEAREST_YDIMS,
    O2C_RESIZE_NEAREST_B = O2C_RESIZE_NEAREST_YDIMS + O2C_MAX_RANK,
    O2C_RESIZE_NEAREST_NK = O2C_RESIZE_NEAREST_B + O2C_MAX_RANK
};
O2C_PARAMS_FIT(resize_nearest, O2C_RESIZE_NEAREST_NK, 0)

/* o2c_resize_interp_T */
enum {
    O2C_RESIZE_RANK,
    O2C_RESIZE_YDIMS,
    O2C_RESIZE_T = O2C_RESIZE_YDIMS + O2C_MAX_RANK,
    O2C_RESIZE_B = O2C_RESIZE_T + O2C_MAX_RANK,
    O2C_RESIZE_NK = O2C_RESIZE_B + O2C_MAX_RANK
};
enum { O2C_RESIZE_F_EXTRAP, O2C_RESIZE_NF };   /* extrapolation value */
/* o2c_resize_rows_f32: the most taps along the second-to-last axis (kept
 * in locals a row) */
#define O2C_RESIZE_MAXROW 16
O2C_PARAMS_FIT(resize, O2C_RESIZE_NK, O2C_RESIZE_NF)
