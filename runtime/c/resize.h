/* Resize kernels (Resize, Upsample). See o2c_rt.h for the calling
 * convention. The compiler does all the coordinate arithmetic: for every
 * axis d and output coordinate o it writes T_d taps, each a source offset
 * (the input index times the input stride, in elements) and a weight. A
 * kernel sums over the product of the taps of all axes (separable
 * interpolation); nearest has one tap per axis and moves bytes.
 *
 * Tables: the entry of axis d, output coordinate o, tap t is at
 * B_d + o*T_d + t. An offset of -1 in tap 0 marks an output coordinate
 * outside the input (tf_crop_and_resize): the output element is then the
 * extrapolation value.
 *
 * o2c_resize_nearest (any element type)
 *   x[0] X   x[1] offsets (int64, one tap per axis)   x[2] the
 *   extrapolation value (one element of X's type)
 *   O2C_RESIZE_NEAREST_* (runtime/c/params/resize.h)
 * o2c_resize_interp_f32 / o2c_resize_interp_f64 (linear, cubic)
 *   x[0] X   x[1] offsets (int64)   x[2] weights (the element type)
 *   O2C_RESIZE_*, O2C_RESIZE_F_EXTRAP
 * Index space: output elements.
 * o2c_resize_rows_f32 (linear, cubic; float32): o2c_resize_interp_f32 (same
 *   operands and parameters) row by row, for resizes whose axes before the
 *   last two have one tap of weight 1 and the second-to-last at most
 *   O2C_RESIZE_MAXROW (the lowering checks): the row's
 *   outer offset and its taps along the second-to-last axis once a row,
 *   then along the row each column's taps from the last axis' table, no
 *   index arithmetic per element. The same sums as the per-element kernel,
 *   in its order (last axis' taps fastest, weight w_last * w_row): the
 *   same results. Index space: output rows (the last axis' length each). */

#define O2C_RESIZE_INTERP(NAME, TY)                                         \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const TY *X = (const TY *)p->x[0];                                  \
        const int64_t *OFF = (const int64_t *)p->x[1];                      \
        const TY *W = (const TY *)p->x[2];                                  \
        TY *Y = (TY *)p->y[0];                                              \
        const o2c_int r = p->k[O2C_RESIZE_RANK];                            \
        const o2c_int *yd = p->k + O2C_RESIZE_YDIMS, *T = p->k + O2C_RESIZE_T; \
        const o2c_int *B = p->k + O2C_RESIZE_B;                             \
        O2C_FOR(i) {                                                        \
            o2c_int e[O2C_MAX_RANK], q = i, tot = 1;                        \
            int outside = 0;                                                \
            for (o2c_int d = r - 1; d >= 0; d--) {                          \
                const o2c_int nq = q / yd[d];                               \
                e[d] = B[d] + (q - nq * yd[d]) * T[d];                      \
                q = nq;                                                     \
                if (OFF[e[d]] < 0) outside = 1;                             \
                tot *= T[d];                                                \
            }                                                               \
            if (outside) {                                                  \
                Y[i] = O2C_PF(TY, p, O2C_RESIZE_F_EXTRAP);                  \
                continue;                                                   \
            }                                                               \
            TY acc = 0;                                                     \
            for (o2c_int t = 0; t < tot; t++) {                             \
                o2c_int u = t, off = 0;                                     \
                TY w = 1;                                                   \
                for (o2c_int d = r - 1; d >= 0; d--) {                      \
                    const o2c_int nu = u / T[d], ke = e[d] + (u - nu * T[d]); \
                    off += OFF[ke];                                         \
                    w *= W[ke];                                             \
                    u = nu;                                                 \
                }                                                           \
                acc += w * X[off];                                          \
            }                                                               \
            Y[i] = acc;                                                     \
        }                                                                   \
    }

/*@ o2c_resize_nearest needs o2c_mv_elem params O2C_RESIZE_NEAREST split */
O2C_KERNEL(o2c_resize_nearest)
{
    const unsigned char *X = (const unsigned char *)p->x[0];
    const int64_t *OFF = (const int64_t *)p->x[1];
    const unsigned char *V = (const unsigned char *)p->x[2];
    unsigned char *Y = (unsigned char *)p->y[0];
    const o2c_int es = p->k[O2C_RESIZE_NEAREST_ESIZE], r = p->k[O2C_RESIZE_NEAREST_RANK];
    const o2c_int *yd = p->k + O2C_RESIZE_NEAREST_YDIMS, *B = p->k + O2C_RESIZE_NEAREST_B;
    const o2c_int W = r > 0 ? yd[r - 1] : 1;
    const int64_t *ow = r > 0 ? OFF + B[r - 1] : NULL;
    /* row by row: the outer axes' offset once a row, then the row's columns */
    for (o2c_int i = i0; i < i1;) {
        o2c_int q = i / W, j0 = i - q * W, jn = W, off = 0;
        int outside = 0;
        for (o2c_int d = r - 2; d >= 0; d--) {
            const o2c_int nq = q / yd[d], o = OFF[B[d] + (q - nq * yd[d])];
            q = nq;
            if (o < 0) outside = 1;
            off += o;
        }
        if (i1 - i < jn - j0) jn = j0 + (i1 - i);
        if (!ow) {
            o2c_mv_elem(Y + i * es, X, es);
        } else if (es == 1 && !outside) {
            const unsigned char *xr = X + off;
            unsigned char *yr = Y + i - j0;
            for (o2c_int j = j0; j < jn; j++) yr[j] = ow[j] < 0 ? V[0] : xr[ow[j]];
        } else {
            for (o2c_int j = j0; j < jn; j++)
                o2c_mv_elem(Y + (i + j - j0) * es, outside || ow[j] < 0 ? V : X + (off + ow[j]) * es, es);
        }
        i += jn - j0;
    }
}

/*@ o2c_resize_interp_f32 params O2C_RESIZE split */
O2C_RESIZE_INTERP(o2c_resize_interp_f32, float)

/*@ o2c_resize_rows_f32 params O2C_RESIZE split */
/* one output row of o2c_resize_rows_f32: NH x NW taps (the row's taps in
 * locals: Y's stores cannot alias them) */
#define O2C_RESIZE_ROW(NH, NW)                                              \
    {                                                                       \
        float hw[O2C_RESIZE_MAXROW];                                        \
        const float *xh[O2C_RESIZE_MAXROW];                                 \
        for (o2c_int th = 0; th < (NH); th++) {                             \
            hw[th] = wh[th];                                                \
            xh[th] = xr + oh[th];                                           \
        }                                                                   \
        for (o2c_int j = 0; j < OW; j++) {                                  \
            const int64_t *oj = ow + j * (NW);                              \
            const float *wj = ww + j * (NW);                                \
            float acc = 0;                                                  \
            if (oj[0] < 0) {                                                \
                yr[j] = extrap;                                             \
                continue;                                                   \
            }                                                               \
            for (o2c_int th = 0; th < (NH); th++)                           \
                for (o2c_int tw = 0; tw < (NW); tw++) acc += wj[tw] * hw[th] * xh[th][oj[tw]]; \
            yr[j] = acc;                                                    \
        }                                                                   \
    }
O2C_KERNEL(o2c_resize_rows_f32)
{
    const float *X = (const float *)p->x[0];
    const int64_t *OFF = (const int64_t *)p->x[1];
    const float *W = (const float *)p->x[2];
    float *Y = (float *)p->y[0];
    const o2c_int r = p->k[O2C_RESIZE_RANK];
    const o2c_int *yd = p->k + O2C_RESIZE_YDIMS, *T = p->k + O2C_RESIZE_T, *B = p->k + O2C_RESIZE_B;
    const o2c_int OW = yd[r - 1], TW = T[r - 1], TH = T[r - 2];
    const int64_t *ow = OFF + B[r - 1];
    const float *ww = W + B[r - 1];
    const float extrap = O2C_PF(float, p, O2C_RESIZE_F_EXTRAP);
    O2C_FOR(row) {
        /* the row's coordinates: the second-to-last axis, then the outer ones */
        o2c_int q = row / yd[r - 2], off = 0;
        const o2c_int eh = B[r - 2] + (row - q * yd[r - 2]) * TH;
        int outside = OFF[eh] < 0;
        for (o2c_int d = r - 3; d >= 0; d--) {
            const o2c_int nq = q / yd[d], e = B[d] + (q - nq * yd[d]) * T[d];
            if (OFF[e] < 0) outside = 1;
            off += OFF[e];
            q = nq;
        }
        float *yr = Y + row * OW;
        if (outside) {
            for (o2c_int j = 0; j < OW; j++) yr[j] = extrap;
            continue;
        }
        const float *xr = X + off;
        const int64_t *oh = OFF + eh;
        const float *wh = W + eh;
        /* linear (2 x 2 taps) and cubic (4 x 4) with constant counts */
        if (TH == 2 && TW == 2) O2C_RESIZE_ROW(2, 2)
        else if (TH == 4 && TW == 4) O2C_RESIZE_ROW(4, 4)
        else O2C_RESIZE_ROW(TH, TW)   /* TH <= O2C_RESIZE_MAXROW: the lowering checks */
    }
}

/*@ o2c_resize_interp_f64 params O2C_RESIZE split */
O2C_RESIZE_INTERP(o2c_resize_interp_f64, double)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_RESIZE(K, F) K(o2c_resize_nearest, F) K(o2c_resize_interp_f32, F) K(o2c_resize_rows_f32, F) K(o2c_resize_interp_f64, F)
