/* Parameter slots of the indexing kernels (runtime/c/index.h): the lowering
 * (compiler/ops/index.c) writes c->k[NAME], the kernel reads p->k[NAME].
 * Shape lists hold O2C_MAX_RANK slots; sizes and strides in elements. */

/* o2c_gather_elements, o2c_scatter_elements[_T] */
enum {
    O2C_ELEMENTS_ESIZE,                                   /* element size in bytes */
    O2C_ELEMENTS_IESIZE,                                  /* index element size (4, 8) */
    O2C_ELEMENTS_RANK,
    O2C_ELEMENTS_AXIS,
    O2C_ELEMENTS_DIMS,                                    /* dims of I (and of a gather's Y) */
    O2C_ELEMENTS_STR = O2C_ELEMENTS_DIMS + O2C_MAX_RANK,  /* strides of X (gather), Y (scatter) */
    O2C_ELEMENTS_AXLEN = O2C_ELEMENTS_STR + O2C_MAX_RANK, /* size of that tensor's axis */
    O2C_ELEMENTS_MODE,                                    /* scatter reduction (typed kernels) */
    O2C_ELEMENTS_NK
};
O2C_PARAMS_FIT(elements, O2C_ELEMENTS_NK, 0)

/* o2c_gather_nd, o2c_scatter_nd[_T] */
enum {
    O2C_ND_ESIZE,
    O2C_ND_IESIZE,
    O2C_ND_M,                          /* coordinates per tuple (1..8) */
    O2C_ND_S,                          /* slice size */
    O2C_ND_NT,                         /* number of tuples (gather: per batch) */
    O2C_ND_MODE,                       /* scatter reduction (typed kernels) */
    O2C_ND_BATCH = O2C_ND_MODE,        /* gather: X elements per batch */
    O2C_ND_DIMS,                       /* the dims a tuple indexes */
    O2C_ND_STR = O2C_ND_DIMS + O2C_MAX_RANK,
    O2C_ND_NK = O2C_ND_STR + O2C_MAX_RANK
};
O2C_PARAMS_FIT(nd, O2C_ND_NK, 0)

/* o2c_tensor_scatter */
enum {
    O2C_TSCATTER_ESIZE,
    O2C_TSCATTER_MODE,     /* 0 linear, 1 circular */
    O2C_TSCATTER_LEN,      /* update length along the axis */
    O2C_TSCATTER_INNER,    /* product of the dims after the axis */
    O2C_TSCATTER_MAX,      /* cache length along the axis */
    O2C_TSCATTER_PER,      /* update elements per batch */
    O2C_TSCATTER_NK
};
O2C_PARAMS_FIT(tscatter, O2C_TSCATTER_NK, 0)

/* o2c_topk_T */
enum {
    O2C_TOPK_A,            /* axis size */
    O2C_TOPK_INNER,        /* stride of the axis */
    O2C_TOPK_K,            /* output size along the axis, <= A */
    O2C_TOPK_LARGEST,      /* 1 largest, 0 smallest */
    O2C_TOPK_NK
};
O2C_PARAMS_FIT(topk, O2C_TOPK_NK, 0)

/* o2c_normgroup_T */
enum {
    O2C_NORMGROUP_MODE,    /* 0 MVN, 1 L1, 2 L2, 3 RMS */
    O2C_NORMGROUP_RO,      /* kept rank */
    O2C_NORMGROUP_RI,      /* normalized rank */
    O2C_NORMGROUP_N,       /* normalized elements per group */
    O2C_NORMGROUP_ODIMS,   /* kept dims, their strides */
    O2C_NORMGROUP_OSTR = O2C_NORMGROUP_ODIMS + O2C_MAX_RANK,
    O2C_NORMGROUP_IDIMS = O2C_NORMGROUP_OSTR + O2C_MAX_RANK,   /* normalized dims, their strides */
    O2C_NORMGROUP_ISTR = O2C_NORMGROUP_IDIMS + O2C_MAX_RANK,
    O2C_NORMGROUP_SSTR = O2C_NORMGROUP_ISTR + O2C_MAX_RANK,    /* scale strides over the normalized dims */
    O2C_NORMGROUP_NK = O2C_NORMGROUP_SSTR + O2C_MAX_RANK
};
enum { O2C_NORMGROUP_F_EPS, O2C_NORMGROUP_NF };
O2C_PARAMS_FIT(normgroup, O2C_NORMGROUP_NK, O2C_NORMGROUP_NF)

/* o2c_lrn_T */
enum { O2C_LRN_C, O2C_LRN_INNER, O2C_LRN_SIZE, O2C_LRN_NK };
enum { O2C_LRN_F_ALPHA, O2C_LRN_F_BETA, O2C_LRN_F_BIAS, O2C_LRN_NF };
O2C_PARAMS_FIT(lrn, O2C_LRN_NK, O2C_LRN_NF)

/* o2c_einsum_T: NL = NO + NS labels; DIMS holds the output labels' dims
 * then the summed ones; operand t's NL strides start at
 * O2C_EINSUM_STR_AT(NL, t). */
enum { O2C_EINSUM_NIN, O2C_EINSUM_NO, O2C_EINSUM_NS, O2C_EINSUM_DIMS };
#define O2C_EINSUM_STR_AT(nl, t) (O2C_EINSUM_DIMS + (nl) * (1 + (t)))
#define O2C_EINSUM_NK(nl, nin) O2C_EINSUM_STR_AT(nl, nin)
O2C_PARAMS_FIT(einsum, O2C_EINSUM_NK(1, 1), 0)   /* the lowering checks the equation's */
