/* Parameter slots of the attention kernel (runtime/c/attention.h): the
 * lowering (compiler/ops/attention.c) writes c->k[NAME], the kernel reads
 * p->k[NAME]. Each stride block (element strides, 0 on a broadcast dim)
 * holds the strides of the NB batch dims in its first NB slots, then the
 * row stride (slot O2C_ATT_ROW) and the column stride (O2C_ATT_COL). */
#define O2C_ATT_MAXB 6

/* inputs */
enum { O2C_ATT_XQ, O2C_ATT_XK, O2C_ATT_XV, O2C_ATT_XMASK };
/* real parameters */
enum { O2C_ATT_FSCALE, O2C_ATT_NF };
/* integer parameters */
enum {
    O2C_ATT_NB,                                    /* batch dims (<= O2C_ATT_MAXB) */
    O2C_ATT_SQ,                                    /* query rows */
    O2C_ATT_SKV,                                   /* keys (= value rows) */
    O2C_ATT_D,                                     /* query/key width */
    O2C_ATT_DV,                                    /* value/output width */
    O2C_ATT_BDIMS,                                 /* the batch dims */
    O2C_ATT_QS = O2C_ATT_BDIMS + O2C_ATT_MAXB,     /* Q strides: batch.., row, col */
    O2C_ATT_KS = O2C_ATT_QS + O2C_ATT_MAXB + 2,    /* K strides: batch.., key, col */
    O2C_ATT_VS = O2C_ATT_KS + O2C_ATT_MAXB + 2,    /* V strides: batch.., key, col */
    O2C_ATT_MS = O2C_ATT_VS + O2C_ATT_MAXB + 2,    /* mask strides: batch.., row, key */
    O2C_ATT_YS = O2C_ATT_MS + O2C_ATT_MAXB + 2,    /* Y strides: batch.., row, col */
    O2C_ATT_NK = O2C_ATT_YS + O2C_ATT_MAXB + 2
};
/* offsets inside a stride block */
enum { O2C_ATT_ROW = O2C_ATT_MAXB, O2C_ATT_COL = O2C_ATT_MAXB + 1 };
O2C_PARAMS_FIT(attention, O2C_ATT_NK, O2C_ATT_NF)
