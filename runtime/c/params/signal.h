/* Parameter slots of the signal kernels (runtime/c/signal.h): the lowering
 * (compiler/ops/signal.c) writes c->k[NAME], the kernel reads p->k[NAME].
 * Per-axis lists hold O2C_MAX_RANK slots. */

/* o2c_dft_T */
enum {
    O2C_DFT_RANK,     /* rank of the input (the last axis: 1 real or 2 real/imaginary) */
    O2C_DFT_AXIS,     /* the transformed axis, or -1: read from x[2] (int64) at run time */
    O2C_DFT_N,        /* dft_length; 0: the length of the axis */
    O2C_DFT_K,        /* output length along the axis; 0: the length of the axis */
    O2C_DFT_INV,      /* inverse (1/n, e^{+i}) */
    O2C_DFT_IRFFT,    /* inverse of a one-sided spectrum: a real output of n values */
    O2C_DFT_DIMS,     /* the input dims */
    O2C_DFT_TW = O2C_DFT_DIMS + O2C_MAX_RANK,   /* where axis d's twiddles start in x[1] */
    O2C_DFT_NK = O2C_DFT_TW + O2C_MAX_RANK
};
O2C_PARAMS_FIT(dft, O2C_DFT_NK, 0)

/* o2c_stft_T */
enum {
    O2C_STFT_L,       /* signal length */
    O2C_STFT_CIN,     /* 1 (real) or 2 (complex) values per sample */
    O2C_STFT_STEP,    /* frame step */
    O2C_STFT_NLEN,    /* frame (and DFT) length */
    O2C_STFT_F,       /* frames */
    O2C_STFT_K,       /* frequency bins kept */
    O2C_STFT_NK
};
O2C_PARAMS_FIT(stft, O2C_STFT_NK, 0)
