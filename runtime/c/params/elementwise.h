/* Parameter slots of the element-wise kernels (runtime/c/elementwise.h and
 * the op table's instances): the lowering writes c->k[NAME], the kernel
 * reads p->k[NAME]. */

/* Broadcasting (binary kernels, o2c_where): the output's rank, 0 when every
 * input has the output's shape; its dims; each input's strides (0 on
 * broadcast axes), O2C_MAX_RANK slots per input from O2C_EW_STR_AT(j). */
enum {
    O2C_EW_RANK,
    O2C_EW_DIMS,
    O2C_EW_STRIDES = O2C_EW_DIMS + O2C_MAX_RANK,
    O2C_EW_ESIZE = O2C_EW_STRIDES + 3 * O2C_MAX_RANK,   /* o2c_where: element size in bytes */
    O2C_EW_NK
};
#define O2C_EW_STR_AT(j) (O2C_EW_STRIDES + O2C_MAX_RANK * (j))

/* Unary kernels and predicates: the op's real attributes in schema order,
 * named A, B, C in the op table's expressions (Clip: min, max). */
enum { O2C_EW_FA, O2C_EW_FB, O2C_EW_FC, O2C_EW_NF };
O2C_PARAMS_FIT(elementwise, O2C_EW_NK, O2C_EW_NF)

/* Fused element-wise kernels (their text is written by
 * compiler/ops/fused_elementwise.c): the output's rank R and its R dims,
 * then R strides for each broadcast input b (the b-th with a shape of its
 * own), from O2C_FEW_STR_AT(R, b). */
enum { O2C_FEW_RANK, O2C_FEW_DIMS };
#define O2C_FEW_STR_AT(r, b) (O2C_FEW_DIMS + (r) + (r) * (b))
#define O2C_FEW_NK(r, nb) O2C_FEW_STR_AT(r, nb)
