/* Parameter slots of the conv kernels (runtime/c/conv.h): the lowering
 * (compiler/ops/conv.c) writes c->k[NAME], the kernels read p->k[NAME].
 * Each geometry name is the base of 3 slots, (depth, height, width); the
 * end pads are implied by the output dims. The epilogue's slots (O2C_EPI_*,
 * o2c_rt.h) come after these. */
enum {
    O2C_CONV_C,                       /* input channels */
    O2C_CONV_M,                       /* output channels */
    O2C_CONV_GROUP,
    O2C_CONV_IN,                      /* input spatial dims */
    O2C_CONV_OUT = O2C_CONV_IN + 3,   /* output spatial dims */
    O2C_CONV_K = O2C_CONV_OUT + 3,    /* kernel dims */
    O2C_CONV_S = O2C_CONV_K + 3,      /* strides */
    O2C_CONV_D = O2C_CONV_S + 3,      /* dilations */
    O2C_CONV_PB = O2C_CONV_D + 3,     /* pads at the beginning */
    O2C_CONV_LAYOUT = O2C_CONV_PB + 3, /* O2C_LAYOUT_* bits: channels innermost (o2c_conv_pwt_f32, o2c_dwc_f32) */
    O2C_CONV_NK
};
/* The arena layout of a conv's input and output (compiler/layout.c): NCHW
 * unless the bit says channels innermost (N x spatial x C). */
enum { O2C_LAYOUT_IN_NHWC = 1, O2C_LAYOUT_OUT_NHWC = 2 };
/* below the epilogue's slots (no real parameters of their own) */
O2C_PARAMS_FIT(conv, O2C_CONV_NK + (O2C_NK - O2C_EPI_ACT), O2C_NF - O2C_EPI_FA)
/* The register tiles of the implicit-GEMM conv (o2c_conv_panel_f32 and its
 * o2c_conv_panel_f32_MRxNR instances, runtime/c/conv.h): X(MR, NR) per tile,
 * the default first. --tune times those whose accumulators fit the target's
 * vector registers (compiler/ops/conv.c). */
#define O2C_PANEL_TILES(X) X(8, 32) X(4, 32) X(8, 16) X(4, 64) X(12, 32) X(16, 16) X(4, 16) X(6, 16)
