/* Parameter slots of the extra kernels (runtime/c/extra.h): the lowering
 * (compiler/ops/extra.c) writes c->k[NAME], the kernel reads p->k[NAME]. */

/* o2c_ipow_T: integer Pow with numpy broadcasting: the output's rank (0
 * when both inputs have its shape), dims, each input's strides */
enum {
    O2C_IPOW_RANK,
    O2C_IPOW_DIMS,
    O2C_IPOW_SA = O2C_IPOW_DIMS + O2C_MAX_RANK,   /* base strides (0: broadcast) */
    O2C_IPOW_SB = O2C_IPOW_SA + O2C_MAX_RANK,     /* exponent strides */
    O2C_IPOW_NK = O2C_IPOW_SB + O2C_MAX_RANK
};
O2C_PARAMS_FIT(ipow, O2C_IPOW_NK, 0)

/* o2c_swiglu_T: y = a * sigmoid(alpha * a) * b */
enum { O2C_SWIGLU_F_ALPHA, O2C_SWIGLU_NF };
O2C_PARAMS_FIT(swiglu, 0, O2C_SWIGLU_NF)

/* o2c_cumprod_T: the axis is read at run time from x[1] */
enum {
    O2C_CUMPROD_RANK,
    O2C_CUMPROD_DIMS,
    O2C_CUMPROD_AXSIZE = O2C_CUMPROD_DIMS + O2C_MAX_RANK,   /* element size of x[1] (4 or 8) */
    O2C_CUMPROD_EXCLUSIVE,
    O2C_CUMPROD_REVERSE,
    O2C_CUMPROD_NK
};
O2C_PARAMS_FIT(cumprod, O2C_CUMPROD_NK, 0)

/* o2c_revseq: the input seen as (D0, D1, INNER); the batch axis is 0 or 1
 * (the time axis the other one) */
enum {
    O2C_REVSEQ_D0,
    O2C_REVSEQ_D1,
    O2C_REVSEQ_INNER,
    O2C_REVSEQ_BATCH_AXIS,
    O2C_REVSEQ_ESIZE,      /* element size in bytes */
    O2C_REVSEQ_NK
};

/* o2c_groupnorm_T: per (instance, group) */
enum {
    O2C_GROUPNORM_G,        /* groups */
    O2C_GROUPNORM_CPG,      /* channels per group */
    O2C_GROUPNORM_S,        /* spatial size (product of the dims after C) */
    O2C_GROUPNORM_PERGROUP, /* 1: scale and bias hold one value per group (opset 18) */
    O2C_GROUPNORM_NK
};
enum { O2C_GROUPNORM_F_EPS, O2C_GROUPNORM_NF };
O2C_PARAMS_FIT(groupnorm, O2C_GROUPNORM_NK, O2C_GROUPNORM_NF)

/* o2c_compress: the input seen as (OUTER, AXN, INNER), K kept indices */
/* (o2c_compress_dyn: K is the condition's length, OUTER the outer size) */
enum { O2C_COMPRESS_AXN, O2C_COMPRESS_K, O2C_COMPRESS_INNER, O2C_COMPRESS_ESIZE, O2C_COMPRESS_OUTER, O2C_COMPRESS_NK };

/* o2c_nonzero_dyn: N elements of ESIZE bytes (FLOAT: an IEEE float, whose
 * sign bit does not count), the input's rank and dims */
enum {
    O2C_NONZERO_N,
    O2C_NONZERO_ESIZE,
    O2C_NONZERO_FLOAT,
    O2C_NONZERO_RANK,
    O2C_NONZERO_DIMS,
    O2C_NONZERO_NK = O2C_NONZERO_DIMS + O2C_MAX_RANK
};
O2C_PARAMS_FIT(nonzero, O2C_NONZERO_NK, 0)

/* o2c_dyn_copy: bytes per unit, the source's byte offset, the units when x[1] is NULL */
enum { O2C_DYNCOPY_UNIT, O2C_DYNCOPY_SRC_OFF, O2C_DYNCOPY_N, O2C_DYNCOPY_NK };

/* o2c_unique_T, o2c_unique_take: X as (OUTER, M, INNER); SORTED; element size */
enum { O2C_UNIQUE_M, O2C_UNIQUE_OUTER, O2C_UNIQUE_INNER, O2C_UNIQUE_SORTED, O2C_UNIQUE_ESIZE, O2C_UNIQUE_NK };

/* o2c_nms_T: batches, boxes, classes, center_point_box, the table's rows (the
 * bound), max per class when x[2] is NULL; the iou threshold when x[3] is NULL */
enum { O2C_NMS_B, O2C_NMS_N, O2C_NMS_C, O2C_NMS_CENTER, O2C_NMS_ROWS, O2C_NMS_MAXK, O2C_NMS_NK };
enum { O2C_NMS_F_IOU, O2C_NMS_NF };

/* o2c_dyn_size: the largest valid value */
enum { O2C_DYNSIZE_MAX, O2C_DYNSIZE_NK };

/* o2c_tfidf: x[1] the n-gram table: per entry n, output column, n values */
enum {
    O2C_TFIDF_C,           /* items per row */
    O2C_TFIDF_XSIZE,       /* element size of X (4 or 8) */
    O2C_TFIDF_NCOLS,       /* output columns */
    O2C_TFIDF_MINN,
    O2C_TFIDF_MAXN,
    O2C_TFIDF_MAXSKIP,
    O2C_TFIDF_MODE,        /* O2C_TFIDF_MODE_* */
    O2C_TFIDF_TLEN,        /* int64 values in the table */
    O2C_TFIDF_NK
};
enum { O2C_TFIDF_MODE_TF = 1, O2C_TFIDF_MODE_IDF = 2, O2C_TFIDF_MODE_TFIDF = 3 };
