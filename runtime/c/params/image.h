/* Parameter slots of the image kernels (runtime/c/image.h): the lowering
 * (compiler/ops/image.c) writes c->k[NAME], the kernel reads p->k[NAME].
 * Per-axis lists hold O2C_MAX_RANK slots. */

/* GridSample padding modes and interpolation modes (O2C_GS_PAD, O2C_GS_MODE) */
#define O2C_GS_PAD_ZEROS 0
#define O2C_GS_PAD_BORDER 1
#define O2C_GS_PAD_REFLECTION 2
#define O2C_GS_NEAREST 0
#define O2C_GS_LINEAR 1
#define O2C_GS_CUBIC 2

/* o2c_gridsample_T (linear, cubic) and o2c_gridsample_nearest_G (any
 * element type, G the grid's type) */
enum {
    O2C_GS_NSP,      /* spatial rank r */
    O2C_GS_C,        /* channels */
    O2C_GS_G,        /* output points per (n, c): the product of the grid's dims 1..r */
    O2C_GS_MODE,     /* O2C_GS_NEAREST / LINEAR / CUBIC */
    O2C_GS_PAD,      /* O2C_GS_PAD_* */
    O2C_GS_ALIGN,    /* align_corners */
    O2C_GS_ESIZE,    /* element size in bytes (nearest) */
    O2C_GS_XDIMS,    /* X's spatial dims, outermost first */
    O2C_GS_NK = O2C_GS_XDIMS + O2C_MAX_RANK
};
O2C_PARAMS_FIT(gridsample, O2C_GS_NK, 0)

/* o2c_affine_grid_T */
enum {
    O2C_AG_NSP,      /* spatial rank: 2 or 3 */
    O2C_AG_ALIGN,    /* align_corners */
    O2C_AG_DIMS,     /* the spatial sizes (D,) H, W */
    O2C_AG_NK = O2C_AG_DIMS + 3
};
O2C_PARAMS_FIT(affine_grid, O2C_AG_NK, 0)

/* o2c_col2im_T: Y[n][c][image] = sum of the columns' entries that land on it */
enum {
    O2C_C2I_NSP,      /* spatial rank */
    O2C_C2I_C,        /* output channels */
    O2C_C2I_IMG,      /* image dims */
    O2C_C2I_BLK = O2C_C2I_IMG + O2C_MAX_RANK,      /* block (kernel) dims */
    O2C_C2I_COL = O2C_C2I_BLK + O2C_MAX_RANK,      /* sliding positions per axis */
    O2C_C2I_S = O2C_C2I_COL + O2C_MAX_RANK,        /* strides */
    O2C_C2I_D = O2C_C2I_S + O2C_MAX_RANK,          /* dilations */
    O2C_C2I_PB = O2C_C2I_D + O2C_MAX_RANK,         /* leading pads */
    O2C_C2I_NK = O2C_C2I_PB + O2C_MAX_RANK
};
O2C_PARAMS_FIT(col2im, O2C_C2I_NK, 0)

/* o2c_crop_pad: an output element is the input element at (y - SHIFT) or
 * zero bytes outside the input */
enum {
    O2C_CROP_RANK,
    O2C_CROP_ESIZE,
    O2C_CROP_YDIMS,
    O2C_CROP_XDIMS = O2C_CROP_YDIMS + O2C_MAX_RANK,
    O2C_CROP_SHIFT = O2C_CROP_XDIMS + O2C_MAX_RANK,
    O2C_CROP_NK = O2C_CROP_SHIFT + O2C_MAX_RANK
};
O2C_PARAMS_FIT(crop_pad, O2C_CROP_NK, 0)

/* o2c_roialign_T */
enum {
    O2C_ROI_C,        /* channels */
    O2C_ROI_H,        /* input height */
    O2C_ROI_W,        /* input width */
    O2C_ROI_PH,       /* output height */
    O2C_ROI_PW,       /* output width */
    O2C_ROI_N,        /* batch size of X (valid batch indices) */
    O2C_ROI_RATIO,    /* sampling_ratio (0: adaptive) */
    O2C_ROI_MAX,      /* mode max (1) or avg (0) */
    O2C_ROI_HALF,     /* half_pixel coordinates */
    O2C_ROI_NK
};
enum { O2C_ROI_F_SCALE, O2C_ROI_NF };   /* spatial_scale */
O2C_PARAMS_FIT(roialign, O2C_ROI_NK, O2C_ROI_NF)

/* o2c_maxunpool (any element type): one index, sequential */
enum {
    O2C_UNPOOL_ESIZE,
    O2C_UNPOOL_NX,      /* elements of X (and of the indices) */
    O2C_UNPOOL_RANK,
    O2C_UNPOOL_IDIMS,   /* the inferred (unpadded) output shape the indices address */
    O2C_UNPOOL_YDIMS = O2C_UNPOOL_IDIMS + O2C_MAX_RANK,   /* the output shape */
    O2C_UNPOOL_NK = O2C_UNPOOL_YDIMS + O2C_MAX_RANK
};
O2C_PARAMS_FIT(maxunpool, O2C_UNPOOL_NK, 0)

/* o2c_deform_conv_T (2-D) */
enum {
    O2C_DC_C,         /* input channels */
    O2C_DC_H, O2C_DC_W,          /* input height, width */
    O2C_DC_M,         /* output channels */
    O2C_DC_OH, O2C_DC_OW,        /* output height, width */
    O2C_DC_KH, O2C_DC_KW,        /* kernel */
    O2C_DC_SH, O2C_DC_SW,        /* strides */
    O2C_DC_DH, O2C_DC_DW,        /* dilations */
    O2C_DC_PH, O2C_DC_PW,        /* leading pads */
    O2C_DC_GROUP,     /* groups */
    O2C_DC_OGROUP,    /* offset groups */
    O2C_DC_NK
};
O2C_PARAMS_FIT(deform_conv, O2C_DC_NK, 0)
