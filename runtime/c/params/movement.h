/* Parameter slots of the data movement kernels (runtime/c/movement.h): the
 * lowerings (compiler/ops/movement.c, slice_view.c, shape.c) write
 * c->k[NAME], the kernel reads p->k[NAME]. Shape lists hold O2C_MAX_RANK
 * slots. */

/* o2c_fill */
enum { O2C_FILL_ESIZE, O2C_FILL_NK };
O2C_PARAMS_FIT(fill, O2C_FILL_NK, 0)

/* o2c_strided: a box of rank RANK; element at coordinates c goes from
 * X[XBASE + sum c*XSTR] to Y[YBASE + sum c*YSTR] (offsets in elements) */
enum {
    O2C_STRIDED_ESIZE,                                    /* element size in bytes */
    O2C_STRIDED_RANK,
    O2C_STRIDED_XBASE,
    O2C_STRIDED_YBASE,
    O2C_STRIDED_DIMS,
    O2C_STRIDED_XSTR = O2C_STRIDED_DIMS + O2C_MAX_RANK,   /* may be negative or 0 */
    O2C_STRIDED_YSTR = O2C_STRIDED_XSTR + O2C_MAX_RANK,
    O2C_STRIDED_NK = O2C_STRIDED_YSTR + O2C_MAX_RANK
};
O2C_PARAMS_FIT(strided, O2C_STRIDED_NK, 0)

/* o2c_tile */
enum {
    O2C_TILE_ESIZE,
    O2C_TILE_RANK,
    O2C_TILE_YDIMS,
    O2C_TILE_XDIMS = O2C_TILE_YDIMS + O2C_MAX_RANK,
    O2C_TILE_NK = O2C_TILE_XDIMS + O2C_MAX_RANK
};
O2C_PARAMS_FIT(tile, O2C_TILE_NK, 0)

/* o2c_pad */
enum {
    O2C_PAD_ESIZE,
    O2C_PAD_RANK,
    O2C_PAD_MODE,                                  /* 0 constant, 1 edge, 2 reflect, 3 wrap */
    O2C_PAD_YDIMS,
    O2C_PAD_XDIMS = O2C_PAD_YDIMS + O2C_MAX_RANK,
    O2C_PAD_BEGIN = O2C_PAD_XDIMS + O2C_MAX_RANK,  /* pads at the beginning (< 0 crops) */
    O2C_PAD_NK = O2C_PAD_BEGIN + O2C_MAX_RANK
};
O2C_PARAMS_FIT(pad, O2C_PAD_NK, 0)

/* o2c_gather */
enum {
    O2C_GATHER_ESIZE,
    O2C_GATHER_INNER,    /* product of the dims after axis */
    O2C_GATHER_NIDX,     /* number of indices */
    O2C_GATHER_AXIS,     /* size of the gathered axis */
    O2C_GATHER_IESIZE,   /* index element size (4: int32, 8: int64) */
    O2C_GATHER_NK
};
O2C_PARAMS_FIT(gather, O2C_GATHER_NK, 0)
