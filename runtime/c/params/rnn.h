/* Parameter slots of the recurrent kernels (runtime/c/rnn.h): the lowering
 * (compiler/ops/rnn.c) writes c->k[NAME], the kernels read p->k[NAME]. */

/* the step kernels (o2c_rnn_step_T, o2c_gru_reset_T, o2c_gru_step_T,
 * o2c_lstm_step_T) */
enum {
    O2C_RNN_D,
    O2C_RNN_B,
    O2C_RNN_H,
    O2C_RNN_T,
    O2C_RNN_S,             /* the step s */
    O2C_RNN_REV0,          /* direction 0 runs in reverse */
    O2C_RNN_HAS_CLIP,      /* clip present (threshold O2C_RNN_F_CLIP) */
    O2C_RNN_FLAG,          /* LSTM input_forget / GRU linear_before_reset */
    O2C_RNN_ACTS,          /* activation a of direction d: O2C_RNN_ACT_AT(d, a) */
    O2C_RNN_NK = O2C_RNN_ACTS + 2 * 3 * 3
};
/* an activation's 3 slots: its code and the bit patterns of its alpha and
 * beta (double, or float in the low 32 bits for float kernels); 3 per direction */
#define O2C_RNN_ACT_SLOTS 3
#define O2C_RNN_ACT_AT(d, a) (O2C_RNN_ACTS + 3 * O2C_RNN_ACT_SLOTS * (d) + O2C_RNN_ACT_SLOTS * (a))
/* the clip threshold (the step kernels, o2c_lstm_seq_f32) */
enum { O2C_RNN_F_CLIP, O2C_RNN_NF };
O2C_PARAMS_FIT(rnn, O2C_RNN_NK, O2C_RNN_NF)

/* o2c_rnn_proj_T */
enum {
    O2C_RNN_PROJ_T,
    O2C_RNN_PROJ_D,
    O2C_RNN_PROJ_B,
    O2C_RNN_PROJ_GH,
    O2C_RNN_PROJ_I,
    O2C_RNN_PROJ_LAYOUT,
    O2C_RNN_PROJ_RBEND,    /* Rb added to columns j < RBEND */
    O2C_RNN_PROJ_NK
};
/* o2c_rnn_init_T */
enum { O2C_RNN_INIT_D, O2C_RNN_INIT_B, O2C_RNN_INIT_H, O2C_RNN_INIT_LAYOUT, O2C_RNN_INIT_NK };
/* o2c_rnn_y_T */
enum { O2C_RNN_Y_D, O2C_RNN_Y_B, O2C_RNN_Y_H, O2C_RNN_Y_T, O2C_RNN_Y_LAYOUT, O2C_RNN_Y_REV0, O2C_RNN_Y_NK };
/* o2c_rnn_last_T: OFF, the element offset in X */
enum { O2C_RNN_LAST_D, O2C_RNN_LAST_B, O2C_RNN_LAST_H, O2C_RNN_LAST_LAYOUT, O2C_RNN_LAST_OFF, O2C_RNN_LAST_NK };

/* o2c_lstm_seq_f32 */
enum {
    O2C_LSTM_SEQ_D,
    O2C_LSTM_SEQ_B,
    O2C_LSTM_SEQ_H,
    O2C_LSTM_SEQ_T,
    O2C_LSTM_SEQ_REV0,
    O2C_LSTM_SEQ_HAS_CLIP, /* clip present (threshold O2C_RNN_F_CLIP) */
    O2C_LSTM_SEQ_INPUT_FORGET,
    O2C_LSTM_SEQ_LAYOUT,
    O2C_LSTM_SEQ_PB,       /* hidden units per packed block of Rt (H: one block, R transposed) */
    O2C_LSTM_SEQ_NK
};

/* com.microsoft DynamicQuantizeLSTM (o2c_dqlstm_step_f32 uses O2C_RNN_*) */
/* o2c_dqlstm_quant_f32 */
enum {
    O2C_DQL_QUANT_N,       /* values a group */
    O2C_DQL_QUANT_OFF,     /* element offset of group 0 in x[0] */
    O2C_DQL_QUANT_GSTRIDE, /* elements from one group to the next */
    O2C_DQL_QUANT_NC,      /* multipliers (product columns) a group */
    O2C_DQL_QUANT_NK
};
/* o2c_dqlstm_proj_f32: the product's columns N and depth K */
enum { O2C_DQL_PROJ_N, O2C_DQL_PROJ_K, O2C_DQL_PROJ_NK };
/* o2c_dqlstm_qu8_f32 */
enum {
    O2C_DQL_QU8_ROWS,      /* rows a group */
    O2C_DQL_QU8_N,         /* values a row */
    O2C_DQL_QU8_OFF,       /* element offset of group 0 in x[0] */
    O2C_DQL_QU8_GSTRIDE,   /* elements from one group to the next */
    O2C_DQL_QU8_LD,        /* bytes a row of y[0] (N rounded up to 4) */
    O2C_DQL_QU8_NK
};
/* o2c_dqlstm_proj_q8_f32: rows M, columns N, depth KQ quads */
enum { O2C_DQL_PQ_M, O2C_DQL_PQ_N, O2C_DQL_PQ_KQ, O2C_DQL_PQ_NK };
