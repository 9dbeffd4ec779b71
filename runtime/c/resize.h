/* resize kernels. See o2c_rt.h for the calling convention. */

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_RESIZE(K)
