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
/* query rows of a block of o2c_attention_blk_f32 (each block packs its
 * batch's keys and values once: more rows, fewer packings) and the floats
 * of its scratch: the packed keys and values, the scaled query rows, the
 * scores and the rows' inverse sums, with Skv and Dv rounded up to the
 * register tiles' columns; the tiles: O2C_ATT_MR rows x O2C_ATT_NR columns */
#define O2C_ATT_RB 64
#define O2C_ATT_MR 8
#define O2C_ATT_NR 32
#define O2C_ATT_UP(n) (((n) + O2C_ATT_NR - 1) / O2C_ATT_NR * O2C_ATT_NR)
#define O2C_ATT_BLK_WORDS(Skv, D, Dv) \
    (O2C_ATT_UP(Skv) * (D) + O2C_ATT_UP(Skv) * O2C_ATT_UP(Dv) + O2C_ATT_RB * (D) + O2C_ATT_RB * O2C_ATT_UP(Skv) + \
     O2C_ATT_RB)

/* o2c_sdpa_T: the standard ONNX Attention (opset 23+), one query row an index */
enum { O2C_SDPA_XQ, O2C_SDPA_XK, O2C_SDPA_XV, O2C_SDPA_XMASK, O2C_SDPA_XPK, O2C_SDPA_XPV, O2C_SDPA_XNONPAD };
enum { O2C_SDPA_FSCALE, O2C_SDPA_FCAP, O2C_SDPA_NF };
enum {
    O2C_SDPA_B,            /* batch */
    O2C_SDPA_HQ,           /* query heads */
    O2C_SDPA_HKV,          /* key/value heads (divides HQ) */
    O2C_SDPA_SQ,           /* query rows */
    O2C_SDPA_SKV,          /* new key/value rows (K, V) */
    O2C_SDPA_PAST,         /* past key/value rows (past_key, past_value: B x HKV x PAST x D/DV) */
    O2C_SDPA_D,            /* query/key head size */
    O2C_SDPA_DV,           /* value head size */
    O2C_SDPA_QS,           /* Q element strides: batch, head, row (3 slots; columns contiguous) */
    O2C_SDPA_KS = O2C_SDPA_QS + 3,   /* K strides: batch, head, row */
    O2C_SDPA_VS = O2C_SDPA_KS + 3,   /* V strides */
    O2C_SDPA_YS = O2C_SDPA_VS + 3,   /* Y strides */
    O2C_SDPA_MS = O2C_SDPA_YS + 3,   /* mask strides: batch, head, row (0: broadcast; keys contiguous) */
    O2C_SDPA_MCOLS = O2C_SDPA_MS + 3, /* the mask's keys (the rest are masked) */
    O2C_SDPA_MBOOL,        /* 1: the mask is bool (true: attend) */
    O2C_SDPA_CAUSAL,       /* is_causal */
    O2C_SDPA_LEFT,         /* left_window_size (-1: unbounded) */
    O2C_SDPA_RIGHT,        /* right_window_size (-1: unbounded) */
    O2C_SDPA_HALF,         /* the data type: 0 float/double, 1 float16, 2 bfloat16 (rounded to it at each step) */
    O2C_SDPA_SMHALF,       /* the same for softmax_precision */
    O2C_SDPA_STOP,         /* -1: the attention; 0, 1, 2: only the scores of qk_matmul_output_mode STOP into y[1] */
    O2C_SDPA_FLEX,         /* 1: FlexAttention's rules (see attention.h) */
    O2C_SDPA_NK
};
O2C_PARAMS_FIT(sdpa, O2C_SDPA_NK, O2C_SDPA_NF)

/* o2c_sdpa_cat_T: present_key/present_value = Concat(past, new) on the rows */
enum { O2C_SDPA_CAT_XPAST, O2C_SDPA_CAT_XNEW };
enum {
    O2C_SDPA_CAT_H,        /* heads */
    O2C_SDPA_CAT_PAST,     /* past rows */
    O2C_SDPA_CAT_S,        /* new rows */
    O2C_SDPA_CAT_D,        /* head size */
    O2C_SDPA_CAT_NS,       /* new tensor's strides: batch, head, row (3 slots) */
    O2C_SDPA_CAT_NK = O2C_SDPA_CAT_NS + 3
};
O2C_PARAMS_FIT(sdpa_cat, O2C_SDPA_CAT_NK, 0)

/* o2c_rotary_T: RotaryEmbedding, one (batch, row, head) an index */
enum { O2C_ROT_XX, O2C_ROT_XCOS, O2C_ROT_XSIN, O2C_ROT_XPOS };
enum {
    O2C_ROT_S,             /* rows (sequence) */
    O2C_ROT_H,             /* heads */
    O2C_ROT_HD,            /* head size */
    O2C_ROT_RD,            /* rotated width (even, <= HD) */
    O2C_ROT_INTER,         /* interleaved */
    O2C_ROT_XS,            /* X (and Y) strides: batch, row, head (3 slots; columns contiguous) */
    O2C_ROT_CS = O2C_ROT_XS + 3,     /* cache row strides without position_ids: batch, row (2 slots) */
    O2C_ROT_NPOS = O2C_ROT_CS + 2,   /* with position_ids: the cache's rows */
    O2C_ROT_HALF,          /* 0 float/double, 1 float16, 2 bfloat16 data (rounded at each step) */
    O2C_ROT_NK
};
O2C_PARAMS_FIT(rotary, O2C_ROT_NK, 0)

/* o2c_linatt_f32: LinearAttention (opset 27), one (batch, kv head, value column) an index */
enum { O2C_LINATT_XQ, O2C_LINATT_XK, O2C_LINATT_XV, O2C_LINATT_XPAST, O2C_LINATT_XDECAY, O2C_LINATT_XBETA };
enum { O2C_LINATT_FSCALE, O2C_LINATT_NF };
enum {
    O2C_LINATT_T,          /* time steps */
    O2C_LINATT_HQ,         /* query heads */
    O2C_LINATT_HKV,        /* key/value heads (divides HQ) */
    O2C_LINATT_DK,         /* key head size */
    O2C_LINATT_DV,         /* value head size */
    O2C_LINATT_GATE,       /* decay: 0 none, 1 one per kv head, 2 one per key dim */
    O2C_LINATT_BETA,       /* beta (delta rule): 0 none, 1 one per kv head, 2 one for all heads */
    O2C_LINATT_NK
};
O2C_PARAMS_FIT(linatt, O2C_LINATT_NK, O2C_LINATT_NF)

/* o2c_ccstate_f32: CausalConvWithState (opset 27), one output element an
 * index; o2c_ccstate_present_f32: present_state, one element an index */
enum { O2C_CCS_XX, O2C_CCS_XW, O2C_CCS_XB, O2C_CCS_XPAST };
enum {
    O2C_CCS_C,             /* channels */
    O2C_CCS_L,             /* input length */
    O2C_CCS_K,             /* kernel size (the state holds K - 1 positions) */
    O2C_CCS_SILU,          /* 1: output y * sigmoid(y) */
    O2C_CCS_HALF,          /* 0 float, 1 float16, 2 bfloat16 data (the conv rounded to it before SiLU) */
    O2C_CCS_NK
};
O2C_PARAMS_FIT(ccstate, O2C_CCS_NK, 0)
