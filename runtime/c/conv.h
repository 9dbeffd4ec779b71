/* conv kernels. See o2c_rt.h for the calling convention.
 *
 * Direct (reference) convolutions. Index space: the output elements,
 * Y[n, m, od, oh, ow] in row-major order. 1-D and 2-D convolutions are
 * given as 3-D ones with leading spatial dims of size 1 (kernel 1,
 * stride 1, dilation 1, pad 0).
 *
 * Parameters (all kernels): O2C_CONV_* (runtime/c/params/conv.h): C, M,
 * group, then (depth, height, width) triples: O2C_CONV_IN (ID, IH, IW), OUT,
 * K (kernel), S (strides), D (dilations), PB (pads at the beginning).
 * Inputs: x[0] X (N x C x ...), x[1] W, x[2] B (length M) or NULL.
 * Epilogue (fused ops, o2c_rt.h): the O2C_EPI_* slots, channel m.
 *
 * o2c_conv_*:  W is M x C/group x KD x KH x KW;
 *   Y[n,m,o] = B[m] + sum_{c,k} X[n, g*C/group + c, o*s - pad + k*dil] * W[m, c, k]
 *   (taps outside the input read 0), g = m / (M/group).
 * o2c_convt_* (ConvTranspose): W is C x M/group x KD x KH x KW; the output
 *   element gathers every input position i and tap k with
 *   i*s - pad + k*dil == o. */

#define O2C_CONV_PARAMS                                                             \
    const o2c_int C = p->k[O2C_CONV_C], M = p->k[O2C_CONV_M], G = p->k[O2C_CONV_GROUP]; \
    O2C_WIN3_GEOMETRY(O2C_CONV_IN, O2C_CONV_OUT, O2C_CONV_K, O2C_CONV_S, O2C_CONV_D, O2C_CONV_PB); \
    const o2c_int CG = C / G, MG = M / G

/* every conv kernel's operands: X, the weights Wt (of type WT: half for
 * o2c_conv_f32h), the bias Bs (or NULL), Y, the geometry and whether an
 * epilogue applies */
#define O2C_CONV_OPERANDS(T) O2C_CONV_OPERANDS_WT(T, T)
#define O2C_CONV_OPERANDS_WT(T, WT)                                                 \
    const T *X = (const T *)p->x[0];                                                \
    const WT *Wt = (const WT *)p->x[1];                                             \
    const T *Bs = (const T *)p->x[2];                                               \
    T *Y = (T *)p->y[0];                                                            \
    O2C_CONV_PARAMS;                                                                \
    const int epi = p->k[O2C_EPI_ACT] || p->k[O2C_EPI_RES]

/* The reference convolution with weights of type WT read by LDW(pointer):
 * o2c_conv_f32h reads --fp16 weights in half where they are (no float copy
 * in the arena: --target cortex-m, lower.c lower_half_constants) */
#define O2C_CONV(NAME, T, EPI) O2C_CONV_WT(NAME, T, T, O2C_LD, EPI)
#define O2C_CONV_WT(NAME, T, WT, LDW, EPI)                                             \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        O2C_CONV_OPERANDS_WT(T, WT);                                                \
        O2C_FOR(i) {                                                                \
            O2C_WIN3_OUT(i);                                                        \
            const o2c_int m = r % M, n = r / M, g = m / MG;                         \
            T acc = Bs ? Bs[m] : (T)0;                                              \
            for (o2c_int c = 0; c < CG; c++) {                                      \
                const T *xp = X + (n * C + g * CG + c) * ID * IH * IW;              \
                const WT *wp = Wt + (m * CG + c) * KD * KH * KW;                    \
                O2C_WIN_TAPS(kd, KD, id, ID, od * SD - PD, DD,                      \
                O2C_WIN_TAPS(kh, KH, ih, IH, oh * SH - PH, DH,                      \
                    const T *xr = xp + (id * IH + ih) * IW;                         \
                    const WT *wr = wp + (kd * KH + kh) * KW;                        \
                    O2C_WIN_TAPS(kw, KW, iw, IW, ow * SW - PW, DW,                  \
                        acc += xr[iw] * LDW(wr + kw);)))                            \
            }                                                                       \
            Y[i] = epi ? EPI(acc, i, m, p) : acc;                                   \
        }                                                                           \
    }

/* o2c_conv_rows_f32 (and _f32h, half weights): the reference convolution
 * by output rows, what a core without a vector unit runs (--target
 * cortex-m). Index space: N x M x OD x OH rows. The row's place is divided
 * out once per row, not per output; along the row the first tap's input
 * column advances by the stride and each output's taps inside the image
 * are found by comparisons, no division; four outputs whose taps all lie
 * in the row are computed at once, each weight loaded once for them. Each
 * output sums the bias and the taps in the reference's order:
 * bit-identical to o2c_conv_f32. */
#define O2C_CONV_ROWS_WT(NAME, T, WT, LDW, EPI)                                        \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        O2C_CONV_OPERANDS_WT(T, WT);                                                \
        const o2c_int PLANE = ID * IH * IW, TAPS = KD * KH * KW;                    \
        O2C_FOR(t) {                                                                \
            o2c_int r = t;                                                          \
            const o2c_int oh = r % OH; r /= OH;                                     \
            const o2c_int od = r % OD; r /= OD;                                     \
            const o2c_int m = r % M, n = r / M, g = m / MG;                         \
            const o2c_int d0 = od * SD - PD, h0 = oh * SH - PH;                     \
            o2c_int kd0 = 0, kd1 = KD, kh0 = 0, kh1 = KH;                           \
            while (kd0 < KD && d0 + kd0 * DD < 0) kd0++;                            \
            while (kd1 > kd0 && d0 + (kd1 - 1) * DD >= ID) kd1--;                   \
            while (kh0 < KH && h0 + kh0 * DH < 0) kh0++;                            \
            while (kh1 > kh0 && h0 + (kh1 - 1) * DH >= IH) kh1--;                   \
            const T *xn = X + (n * C + g * CG) * PLANE;                             \
            const WT *wm = Wt + m * CG * TAPS;                                      \
            const T b = Bs ? Bs[m] : (T)0;                                          \
            T *yr = Y + t * OW;                                                     \
            o2c_int w0 = -PW, ow = 0;                                               \
            while (ow < OW) {                                                       \
                if (ow + 4 <= OW && w0 >= 0 && w0 + 3 * SW + (KW - 1) * DW < IW) {  \
                    /* four outputs whose taps all lie in the row: each weight \
                     * loaded once for the four (a register tile) */             \
                    T a0 = b, a1 = b, a2 = b, a3 = b;                               \
                    for (o2c_int c = 0; c < CG; c++)                                \
                        for (o2c_int kd = kd0; kd < kd1; kd++)                      \
                            for (o2c_int kh = kh0; kh < kh1; kh++) {                \
                                const T *xr = xn + c * PLANE + ((d0 + kd * DD) * IH + h0 + kh * DH) * IW + w0; \
                                const WT *wr = wm + c * TAPS + (kd * KH + kh) * KW; \
                                for (o2c_int kw = 0; kw < KW; kw++) {               \
                                    const T wv = LDW(wr + kw), *xk = xr + kw * DW;  \
                                    a0 += xk[0] * wv;                               \
                                    a1 += xk[SW] * wv;                              \
                                    a2 += xk[2 * SW] * wv;                          \
                                    a3 += xk[3 * SW] * wv;                          \
                                }                                                   \
                            }                                                       \
                    yr[ow] = epi ? EPI(a0, t * OW + ow, m, p) : a0;                 \
                    yr[ow + 1] = epi ? EPI(a1, t * OW + ow + 1, m, p) : a1;         \
                    yr[ow + 2] = epi ? EPI(a2, t * OW + ow + 2, m, p) : a2;         \
                    yr[ow + 3] = epi ? EPI(a3, t * OW + ow + 3, m, p) : a3;         \
                    ow += 4, w0 += 4 * SW;                                          \
                    continue;                                                       \
                }                                                                   \
                o2c_int kw0 = 0, kw1 = KW;                                          \
                while (kw0 < KW && w0 + kw0 * DW < 0) kw0++;                        \
                while (kw1 > kw0 && w0 + (kw1 - 1) * DW >= IW) kw1--;               \
                T acc = b;                                                          \
                for (o2c_int c = 0; c < CG; c++) {                                  \
                    const T *xc = xn + c * PLANE;                                   \
                    const WT *wc = wm + c * TAPS;                                   \
                    for (o2c_int kd = kd0; kd < kd1; kd++)                          \
                        for (o2c_int kh = kh0; kh < kh1; kh++) {                    \
                            const T *xr = xc + ((d0 + kd * DD) * IH + h0 + kh * DH) * IW; \
                            const WT *wr = wc + (kd * KH + kh) * KW;                \
                            for (o2c_int kw = kw0; kw < kw1; kw++)                  \
                                acc += xr[w0 + kw * DW] * LDW(wr + kw);             \
                        }                                                           \
                }                                                                   \
                yr[ow] = epi ? EPI(acc, t * OW + ow, m, p) : acc;                   \
                ow++, w0 += SW;                                                     \
            }                                                                       \
        }                                                                           \
    }

#define O2C_CONVT(NAME, T, EPI)                                                        \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        O2C_CONV_OPERANDS(T);                                                       \
        O2C_FOR(i) {                                                                \
            O2C_WIN3_OUT(i);                                                        \
            const o2c_int m = r % M, n = r / M, g = m / MG, mm = m % MG;            \
            T acc = Bs ? Bs[m] : (T)0;                                              \
            for (o2c_int c = 0; c < CG; c++) {                                      \
                const o2c_int ci = g * CG + c;                                      \
                const T *xp = X + (n * C + ci) * ID * IH * IW;                      \
                const T *wp = Wt + (ci * MG + mm) * KD * KH * KW;                   \
                for (o2c_int kd = 0; kd < KD; kd++) {                               \
                    const o2c_int td = od + PD - kd * DD;                           \
                    if (td < 0 || td % SD) continue;                                \
                    const o2c_int id = td / SD;                                     \
                    if (id >= ID) continue;                                         \
                    for (o2c_int kh = 0; kh < KH; kh++) {                           \
                        const o2c_int th = oh + PH - kh * DH;                       \
                        if (th < 0 || th % SH) continue;                            \
                        const o2c_int ih = th / SH;                                 \
                        if (ih >= IH) continue;                                     \
                        const T *xr = xp + (id * IH + ih) * IW;                     \
                        const T *wr = wp + (kd * KH + kh) * KW;                     \
                        for (o2c_int kw = 0; kw < KW; kw++) {                       \
                            const o2c_int tw = ow + PW - kw * DW;                   \
                            if (tw < 0 || tw % SW) continue;                        \
                            const o2c_int iw = tw / SW;                             \
                            if (iw >= IW) continue;                                 \
                            acc += xr[iw] * wr[kw];                                 \
                        }                                                           \
                    }                                                               \
                }                                                                   \
            }                                                                       \
            Y[i] = epi ? EPI(acc, i, m, p) : acc;                                   \
        }                                                                           \
    }

/* o2c_conv_tile_f32: the convolution of o2c_conv_* (same parameters),
 * computed in register tiles of O2C_CV_MR output channels (of one group) x
 * O2C_CV_NR consecutive output columns: each tap loads NR inputs of a row
 * (contiguous when the stride is 1 and the run lies inside the row) and
 * broadcasts MR weights, a fixed-length multiply-add the C compiler
 * vectorizes. Index space: the tiles, N x group x ceil(M/group/MR) x OD x OH
 * x ceil(OW/NR). Each output sums bias and taps in the reference's order
 * (padding taps add 0; multiply-adds fused where the target has FMA). The lowering picks it for the C target. */
#define O2C_CV_MR 8
#define O2C_CV_NR 32
#define O2C_CV_NR_NARROW 8   /* o2c_conv_tile8_f32: for rows of at most 12 outputs */
/* xs: the NR inputs of tap kw for columns ow0.. of row xr: the row itself
 * where they lie in it contiguously, else gathered (stride, padding) */
#define O2C_CV_ROW(T, xs, NR)                                                       \
    const o2c_int iw0 = ow0 * SW - PW + kw * DW;                                    \
    T xv[NR];                                                                       \
    const T *xs = xv;                                                               \
    if (SW == 1 && iw0 >= 0 && iw0 + NR <= IW) xs = xr + iw0;                       \
    else                                                                            \
        for (int j = 0; j < NR; j++) {                                              \
            const o2c_int iw = iw0 + j * SW;                                        \
            xv[j] = iw >= 0 && iw < IW ? xr[iw] : (T)0;                             \
        }
/* One tile: ROWS output channels from m0 (1, O2C_CV_MR or mr) by NR
 * columns from ow0, COLS of them stored. With constant ROWS and COLS the
 * accumulators stay in registers. */
#define O2C_CV_TILE_RUN(T, EPI, NR, ROWS, COLS)                                     \
    {                                                                               \
        T acc[O2C_CV_MR][NR];                                                       \
        for (int i = 0; i < (ROWS); i++)                                            \
            for (int j = 0; j < NR; j++) acc[i][j] = Bs ? Bs[m0 + i] : (T)0;        \
        for (o2c_int c = 0; c < CG; c++)                                            \
            O2C_WIN_TAPS(kd, KD, id, ID, od * SD - PD, DD,                          \
            O2C_WIN_TAPS(kh, KH, ih, IH, oh * SH - PH, DH,                          \
                const T *xr = xn + ((c * ID + id) * IH + ih) * IW;                  \
                const T *wr = wm + c * KK + (kd * KH + kh) * KW;                    \
                for (o2c_int kw = 0; kw < KW; kw++) {                               \
                    O2C_CV_ROW(T, xs, NR);                                          \
                    for (int i = 0; i < (ROWS); i++) {                              \
                        const T w = wr[i * WM + kw];                                \
                        for (int j = 0; j < NR; j++) acc[i][j] = O2C_FMA_f32(acc[i][j], w, xs[j]);\
                    }                                                               \
                }))                                                                 \
        for (int i = 0; i < (ROWS); i++) {                                          \
            for (int j = (int)sk; j < (COLS); j++) yt[i * ys + j] = acc[i][j];      \
            if (epi) EPI##_row(yt + i * ys + sk, (COLS) - sk, y0 + i * ys + sk, m0 + i, p); \
        }                                                                           \
    }
/* A full tile on AVX2 (O2C_TILE_AVX2, see o2c_tile_product): 4 x 16
 * sub-tiles in registers, each over every channel and tap (the row of a
 * tap gathered once a sub-tile); the same sums in the same order */
#if O2C_TILE_AVX2
#define O2C_CV_TILE_FULL(T, EPI, NR)                                                \
    if (O2C_TILE_SPLIT(O2C_CV_MR, NR)) {                                            \
        T acc[O2C_CV_MR][NR];                                                       \
        for (int i = 0; i < O2C_CV_MR; i++)                                         \
            for (int j = 0; j < NR; j++) acc[i][j] = Bs ? Bs[m0 + i] : (T)0;        \
        for (int si = 0; si < O2C_CV_MR; si += 4)                                   \
            for (int sj = 0; sj < NR; sj += 16) {                                   \
                O2C_T416_LOAD(&acc[si][sj], NR);                                    \
                for (o2c_int c = 0; c < CG; c++)                                    \
                    O2C_WIN_TAPS(kd, KD, id, ID, od * SD - PD, DD,                  \
                    O2C_WIN_TAPS(kh, KH, ih, IH, oh * SH - PH, DH,                  \
                        const T *xr = xn + ((c * ID + id) * IH + ih) * IW;          \
                        const T *wr = wm + (si * WM) + c * KK + (kd * KH + kh) * KW; \
                        for (o2c_int kw = 0; kw < KW; kw++) {                       \
                            O2C_CV_ROW(T, xs, NR);                                  \
                            O2C_T416_FMA(wr + kw, WM, xs + sj)                      \
                        }))                                                         \
                O2C_T416_STORE(&acc[si][sj], NR);                                   \
            }                                                                       \
        for (int i = 0; i < O2C_CV_MR; i++) {                                       \
            for (int j = (int)sk; j < NR; j++) yt[i * ys + j] = acc[i][j];          \
            if (epi) EPI##_row(yt + i * ys + sk, NR - sk, y0 + i * ys + sk, m0 + i, p); \
        }                                                                           \
    } else O2C_CV_TILE_RUN(T, EPI, NR, O2C_CV_MR, NR)
#else
#define O2C_CV_TILE_FULL(T, EPI, NR) O2C_CV_TILE_RUN(T, EPI, NR, O2C_CV_MR, NR)
#endif
#define O2C_CONV_TILE(NAME, T, EPI, NR)                                             \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        O2C_CONV_OPERANDS(T);                                                       \
        const o2c_int KK = KD * KH * KW, WM = CG * KK;                              \
        const o2c_int TM = (MG + O2C_CV_MR - 1) / O2C_CV_MR;                        \
        const o2c_int TW = (OW + NR - 1) / NR;                                      \
        O2C_FOR(t) {                                                                \
            o2c_int r = t;                                                          \
            const o2c_int tw = r % TW; r /= TW;                                     \
            const o2c_int oh = r % OH; r /= OH;                                     \
            const o2c_int od = r % OD; r /= OD;                                     \
            const o2c_int tm = r % TM; r /= TM;                                     \
            const o2c_int g = r % G, n = r / G;                                     \
            /* the last column tile of a row moves left to stay full (its           \
             * first sk columns are computed twice, stored by their own tile) */    \
            const o2c_int ow0 = tw * NR + NR > OW && OW >= NR ? OW - NR : tw * NR;  \
            const o2c_int sk = tw * NR - ow0;                                       \
            const o2c_int m0 = g * MG + tm * O2C_CV_MR;                             \
            const o2c_int mr = MG - tm * O2C_CV_MR < O2C_CV_MR ? MG - tm * O2C_CV_MR : O2C_CV_MR;\
            const o2c_int nr = OW - ow0 < NR ? OW - ow0 : NR;                       \
            const T *xn = X + (n * C + g * CG) * ID * IH * IW;                      \
            const T *wm = Wt + m0 * WM;                                             \
            T *yt = Y + (((n * M + m0) * OD + od) * OH + oh) * OW + ow0;            \
            const o2c_int ys = OD * OH * OW, y0 = yt - Y;                           \
            if (nr == NR && MG == 1) O2C_CV_TILE_RUN(T, EPI, NR, 1, NR)  /* depthwise */\
            else if (nr == NR && mr == O2C_CV_MR) O2C_CV_TILE_FULL(T, EPI, NR)      \
            else O2C_CV_TILE_RUN(T, EPI, NR, mr, nr)  /* fewer channels or columns */\
        }                                                                           \
    }

/* o2c_conv_panel_f32: the convolution of o2c_conv_* (same parameters) as
 * an implicit GEMM. Index space: N x group x OD x ceil(OH OW / NR), one
 * panel each: NR (32) consecutive output pixels of a plane (row-major over
 * OH x OW, so a panel of a small map spans several output rows and no
 * column of it is wasted: a 13 x 13 map is 6 panels, not 13 of 13 used
 * columns out of 32), their inputs for every tap of the group's channels,
 * K = C/group x KD x KH x KW rows of NR floats gathered (zero where a tap
 * leaves the image) into the scratch y[1] (K x NR floats; the C target
 * runs the indices one after another). The gather goes by the panel's
 * runs of pixels within one output row (at most NR/OW + 2 of them). Every
 * MR (8) output channels of the group then run the register-tiled product
 * of their weights with the panel: for each k one contiguous panel row and
 * MR broadcast weights, with the accumulators in registers, and the panel
 * is reused by every channel tile. The weights x[1] are packed by the
 * lowering: group g's channel tile t holds, for each k, its MR weights
 * contiguously (zero past the group's channels):
 *   Wp[((g * ceil(MG / MR) + t) * K + k) * MR + i] = W[g MG + t MR + i, k].
 * The last panel of a plane moves back to stay full (pixels computed
 * twice, to the same values). MR x NR is 8 x 32 for o2c_conv_panel_f32;
 * o2c_conv_panel_f32_MRxNR are the same kernel with other tiles, the
 * candidates --tune times (O2C_PANEL_TILES, runtime/c/params/conv.h). */
#define O2C_CP_NR 32
/* The micro-kernel of the panel and Winograd kernels: acc (MR x 32, in
 * registers) += W x R over K steps, W packed MR values a step, R 32 values
 * a step (a panel row, a Winograd element's row of tiles). */
#define O2C_CV_PRODUCT(T, acc, K, W, R) O2C_PN_PRODUCT(T, acc, K, W, R, O2C_CV_MR, O2C_CP_NR)
/* the same for a tile of MR channels x NR columns (the panel kernels' MR x NR) */
#define O2C_PN_PRODUCT(T, acc, K, W, R, MR, NR) O2C_TILE_PRODUCT(acc, MR, NR, K, W, MR, 1, R, NR)
/* One tile: always MR channel rows (the packed weights are zero past the
 * group's channels, so the accumulators stay in registers even for a
 * partial tile), the first SROWS of them and COLS columns stored */
#define O2C_PN_TILE(T, EPI, MR, NR, SROWS, COLS)                                    \
    {                                                                               \
        T acc[MR][NR];                                                              \
        for (int i = 0; i < (MR); i++)                                              \
            for (int j = 0; j < (NR); j++) acc[i][j] = Bs && i < (SROWS) ? Bs[m0 + i] : (T)0; \
        O2C_TILE_PRODUCT_ROWS(acc, MR, NR, SROWS, KG, wm, MR, 1, P, NR)             \
        for (int i = 0; i < (SROWS); i++) {                                         \
            T *yr = Y + y0 + i * ys;                                                \
            for (int j = (int)sk; j < (COLS); j++) yr[j] = acc[i][j];               \
            if (epi) EPI##_row(yr + sk, (COLS) - sk, y0 + i * ys + sk, m0 + i, p);  \
        }                                                                           \
    }
/* One run of a panel row: LEN pixels' inputs from row xr at column iw0 (a
 * constant LEN, a whole panel in one output row, lets the C compiler
 * unroll the copy into vector moves: super_resolution's rows of 224) */
#define O2C_CP_GATHER(T, LEN)                                                       \
    {                                                                               \
        if (!row_in) {                                                              \
            for (o2c_int j = 0; j < (LEN); j++) pr[j] = (T)0;                       \
        } else if (SW == 1 && iw0 >= 0 && iw0 + (LEN) <= IW) {                      \
            for (o2c_int j = 0; j < (LEN); j++) pr[j] = xr[iw0 + j];                \
        } else if (iw0 >= 0 && iw0 + ((LEN) - 1) * SW < IW) {                       \
            for (o2c_int j = 0; j < (LEN); j++) pr[j] = xr[iw0 + j * SW];           \
        } else {                                                                    \
            for (o2c_int j = 0; j < (LEN); j++) {                                   \
                const o2c_int iw = iw0 + j * SW;                                    \
                pr[j] = iw >= 0 && iw < IW ? xr[iw] : (T)0;                         \
            }                                                                       \
        }                                                                           \
    }
#define O2C_CONV_PANEL(NAME, T, EPI) O2C_CONV_PANEL_MN(NAME, T, EPI, O2C_CV_MR, O2C_CP_NR)
#define O2C_CONV_PANEL_MN(NAME, T, EPI, MR, NR)                                     \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        O2C_CONV_OPERANDS(T);                                                       \
        T *P = (T *)p->y[1];   /* scratch */                                        \
        const o2c_int KG = CG * KD * KH * KW, S2 = OH * OW;                         \
        const o2c_int TW = (S2 + NR - 1) / NR;                                      \
        O2C_FOR(t) {                                                                \
            o2c_int r = t;                                                          \
            const o2c_int tw = r % TW; r /= TW;                                     \
            const o2c_int od = r % OD; r /= OD;                                     \
            const o2c_int g = r % G, n = r / G;                                     \
            const o2c_int p0 = tw * NR + NR > S2 && S2 >= NR ? S2 - NR : tw * NR;   \
            const o2c_int sk = tw * NR - p0;   /* pixels the previous panel stores */ \
            const o2c_int nr = S2 - p0 < NR ? S2 - p0 : NR;                         \
            /* the runs: run s covers panel columns [sj[s], sj[s + 1]), pixels      \
             * of output row sh[s] from column sw[s] */                             \
            o2c_int sj[NR + 1], sh[NR], sw[NR];                                     \
            int ns = 0;                                                             \
            for (o2c_int j = 0; j < nr; ns++) {                                     \
                sj[ns] = j;                                                         \
                sh[ns] = (p0 + j) / OW;                                             \
                sw[ns] = (p0 + j) % OW;                                             \
                j += OW - sw[ns] < nr - j ? OW - sw[ns] : nr - j;                   \
            }                                                                       \
            sj[ns] = nr;                                                            \
            /* the panel: row (c, kd, kh, kw) holds the inputs of the pixels,       \
             * filled run by run (one run: a panel in one output row) */            \
            for (int s = 0; s < ns; s++) {                                          \
                const o2c_int len = sj[s + 1] - sj[s];                              \
                T *pr = P + sj[s];                                                  \
                for (o2c_int c = 0; c < CG; c++)                                    \
                    for (o2c_int kd = 0; kd < KD; kd++) {                           \
                        const o2c_int id = od * SD - PD + kd * DD;                  \
                        for (o2c_int kh = 0; kh < KH; kh++) {                       \
                            const o2c_int ih = sh[s] * SH - PH + kh * DH;           \
                            const int row_in = id >= 0 && id < ID && ih >= 0 && ih < IH; \
                            const T *xr = X + (((n * C + g * CG + c) * ID + (row_in ? id : 0)) * IH + (row_in ? ih : 0)) * IW; \
                            for (o2c_int kw = 0; kw < KW; kw++, pr += NR) {         \
                                const o2c_int iw0 = sw[s] * SW - PW + kw * DW;      \
                                if (len == (NR)) O2C_CP_GATHER(T, NR)               \
                                else O2C_CP_GATHER(T, len)                          \
                            }                                                       \
                        }                                                           \
                    }                                                               \
            }                                                                       \
            if (nr < NR)   /* a plane of fewer pixels than a panel */               \
                for (o2c_int k = 0; k < KG; k++)                                    \
                    for (o2c_int j = nr; j < NR; j++) P[k * NR + j] = (T)0;         \
            /* the channel tiles */                                                 \
            for (o2c_int mt = 0; mt < MG; mt += MR) {                               \
                const o2c_int m0 = g * MG + mt, mr = MG - mt < MR ? MG - mt : MR;   \
                const T *wm = Wt + (g * ((MG + MR - 1) / MR) + mt / MR) * KG * MR;  \
                const o2c_int ys = OD * S2;                                         \
                const o2c_int y0 = ((n * M + m0) * OD + od) * S2 + p0;              \
                if (mr == MR && nr == NR) O2C_PN_TILE(T, EPI, MR, NR, MR, NR)       \
                else O2C_PN_TILE(T, EPI, MR, NR, mr, nr)                            \
            }                                                                       \
        }                                                                           \
    }

/* o2c_conv_wino_f32: a 2-D 3x3 convolution (stride 1, dilation 1, one
 * group, any pads) of o2c_conv_* (same parameters) by Winograd's minimal
 * filtering F(2x2, 3x3) (Lavin and Gray, 2016): each 2x2 output tile is
 *   Y = A^T [ sum_c (G g_mc G^T) . (B^T d_c B) ] A
 * with d_c the 4x4 input patch of channel c, so 16 multiplies a tile and
 * channel pair instead of 36. Index space: N x ceil(OH / 2) x ceil(TX /
 * O2C_WG_TB), TX = ceil(OW / 2): a strip of TB tiles (2 rows x 2 TB
 * columns of outputs) for every output channel. For the strip:
 *   1. the input transform V[e][c][t] = (B^T d_ct B)[e] into the scratch
 *      y[1] (16 x C x TB floats), a loop over the tiles t the C compiler
 *      vectorizes (the patch's inputs zero outside the image);
 *   2. for each 8 output channels and each of the 16 elements e, the
 *      product of the transformed weights U[e] (8 x C) with V[e] (C x TB)
 *      in a register tile (8 x 32 like the other tiles), into the scratch
 *      y[1] after V (16 x 8 x TB floats);
 *   3. the output transform A^T m A, the bias and the epilogue, stored
 *      where the tile is inside the output.
 * The weights x[1] are transformed and packed by the lowering:
 *   Wu[((e * ceil(M / 8) + tm) * C + c) * 8 + i] = (G g G^T)[e] of channel
 *   tm * 8 + i (zero past M), G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].
 * Sums run in another order than the reference's, through the transforms:
 * results differ in the last digits. */
#define O2C_WG_TB O2C_CP_NR   /* tiles a strip: the micro-kernel's columns */
#define O2C_CONV_WINO(NAME, T, EPI)                                                 \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        O2C_CONV_OPERANDS(T);                                                       \
        T *V = (T *)p->y[1], *Mx = V + 16 * C * O2C_WG_TB;   /* scratch */          \
        const o2c_int TY = (OH + 1) / 2, TX = (OW + 1) / 2, TXB = (TX + O2C_WG_TB - 1) / O2C_WG_TB; \
        const o2c_int TM = (M + O2C_CV_MR - 1) / O2C_CV_MR;                          \
        (void)CG; (void)MG; (void)G; (void)ID; (void)OD; (void)KD; (void)KH; (void)KW; \
        (void)SD; (void)SH; (void)SW; (void)DD; (void)DH; (void)DW; (void)PD;        \
        O2C_FOR(s) {                                                                \
            const o2c_int txb = s % TXB, ty = (s / TXB) % TY, n = s / (TXB * TY);   \
            const o2c_int tx0 = txb * O2C_WG_TB, ow0 = 2 * tx0, iw0 = ow0 - PW;     \
            /* 1. input transform */                                                \
            for (o2c_int c = 0; c < C; c++) {                                       \
                const T *xc = X + (n * C + c) * IH * IW;                            \
                T rt[4][4][O2C_WG_TB];   /* each row's column transform */          \
                for (int r = 0; r < 4; r++) {                                       \
                    const o2c_int ih = 2 * ty - PH + r;                             \
                    T rb[2 * O2C_WG_TB + 2];                                        \
                    const T *rp = rb;   /* the row's inputs iw0.. (zero outside) */ \
                    if (ih >= 0 && ih < IH && iw0 >= 0 && iw0 + 2 * O2C_WG_TB + 2 <= IW) \
                        rp = xc + ih * IW + iw0;                                    \
                    else                                                            \
                        for (int j = 0; j < 2 * O2C_WG_TB + 2; j++) {               \
                            const o2c_int iw = iw0 + j;                             \
                            rb[j] = ih >= 0 && ih < IH && iw >= 0 && iw < IW ? xc[ih * IW + iw] : (T)0; \
                        }                                                           \
                    for (int t = 0; t < O2C_WG_TB; t++) {                           \
                        const T d0 = rp[2 * t], d1 = rp[2 * t + 1], d2 = rp[2 * t + 2], d3 = rp[2 * t + 3]; \
                        rt[r][0][t] = d0 - d2;                                      \
                        rt[r][1][t] = d1 + d2;                                      \
                        rt[r][2][t] = d2 - d1;                                      \
                        rt[r][3][t] = d1 - d3;                                      \
                    }                                                               \
                }                                                                   \
                for (int j = 0; j < 4; j++) {                                       \
                    T *v0 = V + ((0 * 4 + j) * C + c) * O2C_WG_TB, *v1 = V + ((1 * 4 + j) * C + c) * O2C_WG_TB; \
                    T *v2 = V + ((2 * 4 + j) * C + c) * O2C_WG_TB, *v3 = V + ((3 * 4 + j) * C + c) * O2C_WG_TB; \
                    for (int t = 0; t < O2C_WG_TB; t++) {                           \
                        v0[t] = rt[0][j][t] - rt[2][j][t];                          \
                        v1[t] = rt[1][j][t] + rt[2][j][t];                          \
                        v2[t] = rt[2][j][t] - rt[1][j][t];                          \
                        v3[t] = rt[1][j][t] - rt[3][j][t];                          \
                    }                                                               \
                }                                                                   \
            }                                                                       \
            for (o2c_int tm = 0; tm < TM; tm++) {                                   \
                const o2c_int m0 = tm * O2C_CV_MR;                                  \
                /* 2. the 16 products, 8 channels x TB tiles each */                \
                for (int e = 0; e < 16; e++) {                                     \
                    const T *ue = Wt + ((o2c_int)e * TM + tm) * C * O2C_CV_MR, *ve = V + (o2c_int)e * C * O2C_WG_TB; \
                    T acc[O2C_CV_MR][O2C_CP_NR];                                    \
                    for (int i = 0; i < O2C_CV_MR; i++)                             \
                        for (int t = 0; t < O2C_WG_TB; t++) acc[i][t] = (T)0;       \
                    O2C_CV_PRODUCT(T, acc, C, ue, ve);                              \
                    for (int i = 0; i < O2C_CV_MR; i++)                             \
                        for (int t = 0; t < O2C_WG_TB; t++) Mx[(e * O2C_CV_MR + i) * O2C_WG_TB + t] = acc[i][t]; \
                }                                                                   \
                /* 3. output transform, bias, epilogue */                           \
                for (int i = 0; i < O2C_CV_MR && m0 + i < M; i++) {                 \
                    const o2c_int m = m0 + i;                                       \
                    const T bias = Bs ? Bs[m] : (T)0;                               \
                    T o[2][2 * O2C_WG_TB];   /* the strip's two output rows */    \
                    const T *mq = Mx + i * O2C_WG_TB;                               \
                    for (int t = 0; t < O2C_WG_TB; t++) {                           \
                        T w0[4], w1[4];   /* A^T q: two rows */                     \
                        for (int j = 0; j < 4; j++) {                               \
                            const T q0 = mq[(0 * 4 + j) * O2C_CV_MR * O2C_WG_TB + t]; \
                            const T q1 = mq[(1 * 4 + j) * O2C_CV_MR * O2C_WG_TB + t]; \
                            const T q2 = mq[(2 * 4 + j) * O2C_CV_MR * O2C_WG_TB + t]; \
                            const T q3 = mq[(3 * 4 + j) * O2C_CV_MR * O2C_WG_TB + t]; \
                            w0[j] = q0 + q1 + q2;                                   \
                            w1[j] = q1 - q2 - q3;                                   \
                        }                                                           \
                        o[0][2 * t] = w0[0] + w0[1] + w0[2] + bias;                 \
                        o[0][2 * t + 1] = w0[1] - w0[2] - w0[3] + bias;             \
                        o[1][2 * t] = w1[0] + w1[1] + w1[2] + bias;                 \
                        o[1][2 * t + 1] = w1[1] - w1[2] - w1[3] + bias;             \
                    }                                                               \
                    const o2c_int nw = OW - ow0 < 2 * O2C_WG_TB ? OW - ow0 : 2 * O2C_WG_TB; \
                    for (int rr = 0; rr < 2 && 2 * ty + rr < OH; rr++) {            \
                        const o2c_int y0 = ((n * M + m) * OH + 2 * ty + rr) * OW + ow0; \
                        if (nw == 2 * O2C_WG_TB)                                    \
                            for (int j = 0; j < 2 * O2C_WG_TB; j++)                 \
                                Y[y0 + j] = epi ? EPI(o[rr][j], y0 + j, m, p) : o[rr][j]; \
                        else                                                        \
                            for (int j = 0; j < nw; j++)                            \
                                Y[y0 + j] = epi ? EPI(o[rr][j], y0 + j, m, p) : o[rr][j]; \
                    }                                                               \
                }                                                                   \
            }                                                                       \
        }                                                                           \
    }

/* o2c_conv_pwt_f32: a pointwise convolution (kernel 1, stride 1, no pads,
 * one group) of o2c_conv_* (same parameters, the spatial dims flattened
 * into one row of S columns) as the product Y^T = X^T W^T, for images of
 * few pixels (MobileNet's last layers): register tiles of O2C_PW_MR (8)
 * pixels x O2C_PW_NR (32) output channels, so the vector runs along the
 * channels, which there are many of, and each k (input channel) loads one
 * row of the transposed weights and broadcasts 8 pixels, contiguous in X.
 * Index space: N x ceil(S / 8) x ceil(M / 32). The weights x[1] are packed
 * by the lowering, M rounded up to MP = ceil(M / 32) x 32 with zeros:
 *   Wt[c * MP + m] = W[m, c];
 * the tiles compute all 32 channels and store those below M; the last
 * pixel tile moves left to stay full (pixels computed twice, stored by
 * their own tile). O2C_CONV_LAYOUT says whether X and Y are NCHW or channels
 * innermost (N x S x C, compiler/layout.c): a pixel's channels are then
 * contiguous, and the tile stores rows of channels. */
/* The epilogue of a pixel x channel tile acc[ROWS][NR] (rows pixels,
 * columns channels) in registers, when it is alike for every channel (no
 * residual, no PRelu slope per channel): one vector loop over the tile
 * before its store, tile_epi set; else tile_epi 0 and the store applies it,
 * a channel's pixels at a time (EPI##_row) or element by element */
#define O2C_TILE_EPI(EPI, acc, ROWS, NR)                                            \
    const int tile_epi = epi && !p->k[O2C_EPI_RES] &&                               \
                         (p->k[O2C_EPI_ACT] != O2C_ACT_PRELU || p->k[O2C_EPI_NSLOPE] == 1); \
    if (tile_epi) EPI##_row(acc[0], (ROWS) * (NR), 0, 0, p)
/* Its store to NCHW outputs, pixels s0 + sk .. s0 + ROWS - 1 of the
 * channels from m0 below M: a channel's pixels contiguous, the epilogue
 * over them where O2C_TILE_EPI did not apply it */
#define O2C_TILE_STORE_NCHW(EPI, acc, ROWS, NR)                                     \
    for (int j = 0; j < (NR) && m0 + j < M; j++) {                                  \
        const o2c_int y = (n * M + m0 + j) * S + s0;                                \
        for (int i = (int)sk; i < (ROWS); i++) Y[y + i] = acc[i][j];                \
        if (epi && !tile_epi) EPI##_row(Y + y + sk, (ROWS) - sk, y + sk, m0 + j, p); \
    }
#define O2C_PW_MR 8
#define O2C_PW_NR 32
#define O2C_PW_TILE(T, EPI, ROWS, FULL)                                             \
    {                                                                               \
        T acc[O2C_PW_MR][O2C_PW_NR];                                                \
        for (int i = 0; i < (FULL ? O2C_PW_MR : (ROWS)); i++)                       \
            for (int j = 0; j < O2C_PW_NR; j++) acc[i][j] = bias[j];                \
        if (FULL) { O2C_TILE_PRODUCT(acc, O2C_PW_MR, O2C_PW_NR, C, xn + s0 * XP, XC, XP, Wt + m0, MP) } \
        else                                                                        \
            for (o2c_int c = 0; c < C; c++) {                                       \
                const T *xs = xn + c * XC + s0 * XP, *wr = Wt + c * MP + m0;        \
                for (int i = 0; i < (ROWS); i++) {                                  \
                    const T xv = xs[i * XP];                                        \
                    for (int j = 0; j < O2C_PW_NR; j++) acc[i][j] = O2C_FMA_f32(acc[i][j], xv, wr[j]); \
                }                                                                   \
            }                                                                       \
        O2C_TILE_EPI(EPI, acc, ROWS, O2C_PW_NR);                                    \
        if (YC == 1 && m0 + O2C_PW_NR <= M) /* channels innermost: rows of channels */ \
            for (int i = (int)sk; i < (ROWS); i++)                                  \
                for (int j = 0; j < O2C_PW_NR; j++) {                               \
                    const o2c_int y = n * M * S + (s0 + i) * YP + m0 + j;           \
                    Y[y] = epi && !tile_epi ? EPI(acc[i][j], y, m0 + j, p) : acc[i][j]; \
                }                                                                   \
        else if (YC == 1)                                                           \
            for (int i = (int)sk; i < (ROWS); i++)                                  \
                for (int j = 0; j < O2C_PW_NR && m0 + j < M; j++) {                 \
                    const o2c_int y = n * M * S + (s0 + i) * YP + m0 + j;           \
                    Y[y] = epi && !tile_epi ? EPI(acc[i][j], y, m0 + j, p) : acc[i][j]; \
                }                                                                   \
        else O2C_TILE_STORE_NCHW(EPI, acc, ROWS, O2C_PW_NR);   /* YC == S */        \
    }
#define O2C_CONV_PWT(NAME, T, EPI)                                                  \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        O2C_CONV_OPERANDS(T);                                                       \
        const o2c_int S = OD * OH * OW, TN = (M + O2C_PW_NR - 1) / O2C_PW_NR, MP = TN * O2C_PW_NR; \
        const o2c_int TS = (S + O2C_PW_MR - 1) / O2C_PW_MR;                          \
        const int lay = (int)p->k[O2C_CONV_LAYOUT];                                 \
        const o2c_int XC = lay & O2C_LAYOUT_IN_NHWC ? 1 : S, XP = lay & O2C_LAYOUT_IN_NHWC ? C : 1; \
        const o2c_int YC = lay & O2C_LAYOUT_OUT_NHWC ? 1 : S, YP = lay & O2C_LAYOUT_OUT_NHWC ? M : 1; \
        (void)CG; (void)MG; (void)KD; (void)KH; (void)KW; (void)SD; (void)SH; (void)SW; \
        (void)DD; (void)DH; (void)DW; (void)PD; (void)PH; (void)PW; (void)ID; (void)IH; (void)IW; (void)G; \
        O2C_FOR(t) {                                                                \
            const o2c_int ts = t % TS, tn = (t / TS) % TN, n = t / (TN * TS);       \
            const o2c_int m0 = tn * O2C_PW_NR;                                      \
            const o2c_int s0 = ts * O2C_PW_MR + O2C_PW_MR > S && S >= O2C_PW_MR ? S - O2C_PW_MR : ts * O2C_PW_MR; \
            const o2c_int sk = ts * O2C_PW_MR - s0;   /* pixels the previous tile stores */ \
            const T *xn = X + n * C * S;                                            \
            T bias[O2C_PW_NR];                                                      \
            for (int j = 0; j < O2C_PW_NR; j++) bias[j] = Bs && m0 + j < M ? Bs[m0 + j] : (T)0; \
            if (S - s0 >= O2C_PW_MR) O2C_PW_TILE(T, EPI, O2C_PW_MR, 1)              \
            else O2C_PW_TILE(T, EPI, S - s0, 0)                                     \
        }                                                                           \
    }

/* o2c_conv_gt_f32: a 1-D or 2-D convolution of one group (KD = OD = 1,
 * NCHW) with few output pixels (S = OH OW; silero VAD's encoder on 1 to 4
 * frames, its STFT of 5), as o2c_conv_pwt_f32 does a pointwise one: the
 * product Y^T = cols^T W^T in register tiles of up to O2C_PW_MR pixels x
 * O2C_PW_NR output channels, the vector along the channels. For each tap
 * (kh, kw) the tile's pixels' offsets into an input plane (-1 in the
 * padding), then for each input channel one row of the transposed weights
 * times the pixels' inputs. Index space N x ceil(S / 8) x MP / 32; the
 * weights packed by the lowering, M rounded up to MP = ceil(M / 32) x 32:
 *   Wt[((kh KW + kw) C + c) MP + m] = W[m, c, kh, kw].
 * The last pixel tile moves left to stay full, as o2c_conv_pwt_f32's. */
/* one tap of the tile over the input channels, LOAD pixel i's input */
#define O2C_GT_TAP(T, ROWS, LOAD)                                                   \
    for (o2c_int c = 0; c < C; c++) {                                               \
        const T *xc = xn + c * IH * IW, *wr = wt + c * MP;                          \
        for (int i = 0; i < (ROWS); i++) {                                          \
            const T xv = LOAD;                                                      \
            for (int j = 0; j < O2C_PW_NR; j++) acc[i][j] = O2C_FMA_f32(acc[i][j], xv, wr[j]); \
        }                                                                           \
    }
#define O2C_GT_TILE(T, EPI, ROWS)                                                   \
    {                                                                               \
        T acc[O2C_PW_MR][O2C_PW_NR];                                                \
        for (int i = 0; i < (ROWS); i++)                                            \
            for (int j = 0; j < O2C_PW_NR; j++) acc[i][j] = bias[j];                \
        for (o2c_int kh = 0; kh < KH; kh++)                                         \
            for (o2c_int kw = 0; kw < KW; kw++) {                                   \
                o2c_int off[O2C_PW_MR];                                             \
                int inside = 1;                                                     \
                for (int i = 0; i < (ROWS); i++) {                                  \
                    const o2c_int oh = (s0 + i) / OW, ow = (s0 + i) % OW;           \
                    const o2c_int ih = oh * SH - PH + kh * DH, iw = ow * SW - PW + kw * DW; \
                    off[i] = ih >= 0 && ih < IH && iw >= 0 && iw < IW ? ih * IW + iw : -1; \
                    inside &= off[i] >= 0;                                          \
                }                                                                   \
                const T *wt = Wt + (kh * KW + kw) * C * MP + m0;                    \
                if (inside) O2C_GT_TAP(T, ROWS, xc[off[i]])  /* no test a load */     \
                else O2C_GT_TAP(T, ROWS, off[i] >= 0 ? xc[off[i]] : (T)0)           \
            }                                                                       \
        O2C_TILE_EPI(EPI, acc, ROWS, O2C_PW_NR);                                    \
        O2C_TILE_STORE_NCHW(EPI, acc, ROWS, O2C_PW_NR);                             \
    }
#define O2C_CONV_GT(NAME, T, EPI)                                                   \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        O2C_CONV_OPERANDS(T);                                                       \
        const o2c_int S = OH * OW, TN = (M + O2C_PW_NR - 1) / O2C_PW_NR, MP = TN * O2C_PW_NR; \
        const o2c_int TS = (S + O2C_PW_MR - 1) / O2C_PW_MR;                          \
        (void)CG; (void)MG; (void)KD; (void)SD; (void)DD; (void)PD; (void)ID; (void)OD; (void)G; \
        O2C_FOR(t) {                                                                \
            const o2c_int ts = t % TS, tn = (t / TS) % TN, n = t / (TN * TS);       \
            const o2c_int m0 = tn * O2C_PW_NR;                                      \
            const o2c_int s0 = ts * O2C_PW_MR + O2C_PW_MR > S && S >= O2C_PW_MR ? S - O2C_PW_MR : ts * O2C_PW_MR; \
            const o2c_int sk = ts * O2C_PW_MR - s0;   /* pixels the previous tile stores */ \
            const T *xn = X + n * C * IH * IW;                                      \
            T bias[O2C_PW_NR];                                                      \
            for (int j = 0; j < O2C_PW_NR; j++) bias[j] = Bs && m0 + j < M ? Bs[m0 + j] : (T)0; \
            /* the tile's pixels a constant: its accumulators in registers */       \
            switch (S - s0 >= O2C_PW_MR ? O2C_PW_MR : S - s0) {                     \
            case 1: O2C_GT_TILE(T, EPI, 1) break;                                   \
            case 2: O2C_GT_TILE(T, EPI, 2) break;                                   \
            case 3: O2C_GT_TILE(T, EPI, 3) break;                                   \
            case 4: O2C_GT_TILE(T, EPI, 4) break;                                   \
            case 5: O2C_GT_TILE(T, EPI, 5) break;                                   \
            case 6: O2C_GT_TILE(T, EPI, 6) break;                                   \
            case 7: O2C_GT_TILE(T, EPI, 7) break;                                   \
            default: O2C_GT_TILE(T, EPI, O2C_PW_MR) break;                          \
            }                                                                       \
        }                                                                           \
    }

/* o2c_conv_pv_f32: a 2-D convolution of one group (KD = OD = 1, NCHW) of
 * few channels and many taps (MNIST's 5x5 convs on 1 and 8 channels), as
 * pixels x a vector of output channels: for each tap (c, kh, kw) one row of
 * O2C_PV_NR (16) packed weights, and each of a tile's O2C_PV_PR pixels'
 * input broadcast against it, the accumulators (PR x 16) in registers. No
 * gather: each index first copies its image into the scratch y[1] as a
 * zero-padded image P of C x Hp x Wp floats (Hp = (OH - 1) SH + (KH - 1) DH
 * + 1, Wp likewise), so a pixel's input for a tap is P at the pixel's
 * offset plus the tap's, without bounds. Index space N x MP / 16 (MP = M
 * rounded up to 16); the pixels of the image (OH OW of them, row-major) in
 * tiles of PR, the last moved back to stay full (its first pixels stored
 * by the tile before). The weights packed by the lowering:
 *   Wv[((c KH + kh) KW + kw) MP + m] = W[m, c, kh, kw]  (0 for m >= M).
 * PR keeps PR x 16 floats in the target's vector registers with room for
 * the weights: 12 with AVX-512 (32 zmm), 6 with AVX or NEON, else 3. */
#define O2C_PV_NR 16
#if defined(__AVX512F__)
#define O2C_PV_PR 12
#elif defined(__AVX__) || defined(__ARM_NEON)
#define O2C_PV_PR 6
#else
#define O2C_PV_PR 3
#endif
#define O2C_PV_TILE(T, EPI, ROWS)                                                   \
    {                                                                               \
        o2c_v16 acc[O2C_PV_PR];                                                     \
        o2c_int off[O2C_PV_PR];                                                     \
        const o2c_v16 b0 = Bs ? o2c_v16_load(bias) : o2c_v16_zero();                 \
        for (int i = 0; i < (ROWS); i++) {                                          \
            const o2c_int oh = (s0 + i) / OW, ow = (s0 + i) - oh * OW;              \
            off[i] = oh * SH * Wp + ow * SW;                                        \
            acc[i] = b0;                                                            \
        }                                                                           \
        for (o2c_int c = 0; c < C; c++)                                             \
            for (o2c_int kh = 0; kh < KH; kh++) {                                   \
                const T *pr = P + (c * Hp + kh * DH) * Wp;                          \
                const T *wr = Wt + (c * KH + kh) * KW * MP + m0;                    \
                for (o2c_int kw = 0; kw < KW; kw++) {                               \
                    const T *pk = pr + kw * DW;                                     \
                    const o2c_v16 wv = o2c_v16_load(wr + kw * MP);                  \
                    for (int i = 0; i < (ROWS); i++) acc[i] = o2c_v16_fma(acc[i], o2c_v16_set1(pk[off[i]]), wv); \
                }                                                                   \
            }                                                                       \
        T out[O2C_PV_PR][O2C_PV_NR];                                                \
        for (int i = 0; i < (ROWS); i++) o2c_v16_store(out[i], acc[i]);            \
        O2C_TILE_EPI(EPI, out, ROWS, O2C_PV_NR);                                    \
        O2C_TILE_STORE_NCHW(EPI, out, ROWS, O2C_PV_NR);                             \
    }
#define O2C_CONV_PV(NAME, T, EPI)                                                   \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        O2C_CONV_OPERANDS(T);                                                       \
        T *P = (T *)p->y[1];   /* scratch: the padded image */                     \
        const o2c_int S = OH * OW, TN = (M + O2C_PV_NR - 1) / O2C_PV_NR, MP = TN * O2C_PV_NR; \
        const o2c_int Hp = (OH - 1) * SH + (KH - 1) * DH + 1, Wp = (OW - 1) * SW + (KW - 1) * DW + 1; \
        o2c_int padded = -1;   /* the image P holds */                             \
        (void)CG; (void)MG; (void)KD; (void)SD; (void)DD; (void)PD; (void)ID; (void)OD; (void)G; \
        O2C_FOR(t) {                                                                \
            const o2c_int tn = t % TN, n = t / TN, m0 = tn * O2C_PV_NR;              \
            if (padded != n) {                                                      \
                const T *xn = X + n * C * IH * IW;                                  \
                for (o2c_int c = 0; c < C; c++)                                     \
                    for (o2c_int r = 0; r < Hp; r++) {                              \
                        const o2c_int ih = r - PH;                                  \
                        T *pr = P + (c * Hp + r) * Wp;                              \
                        for (o2c_int q = 0; q < Wp; q++) {                          \
                            const o2c_int iw = q - PW;                              \
                            pr[q] = ih >= 0 && ih < IH && iw >= 0 && iw < IW ? xn[(c * IH + ih) * IW + iw] : (T)0; \
                        }                                                           \
                    }                                                               \
                padded = n;                                                         \
            }                                                                       \
            T bias[O2C_PV_NR];                                                      \
            for (int j = 0; j < O2C_PV_NR; j++) bias[j] = Bs && m0 + j < M ? Bs[m0 + j] : (T)0; \
            if (S < O2C_PV_PR) {   /* fewer pixels than a tile */                   \
                const o2c_int s0 = 0, sk = 0;                                       \
                O2C_PV_TILE(T, EPI, S)                                              \
            } else                                                                  \
                for (o2c_int ts = 0; ts * O2C_PV_PR < S; ts++) {                    \
                    const o2c_int s0 = ts * O2C_PV_PR + O2C_PV_PR > S ? S - O2C_PV_PR : ts * O2C_PV_PR; \
                    const o2c_int sk = ts * O2C_PV_PR - s0;   /* pixels the tile before stores */ \
                    O2C_PV_TILE(T, EPI, O2C_PV_PR)                                  \
                }                                                                   \
        }                                                                           \
    }

/* o2c_dwflat_f32: a 2-D depthwise convolution (C == group, any channel
 * multiplier, dilation, and stride s the same along both axes) of
 * o2c_conv_* (same parameters) for small images, where rows are too short
 * to vectorize: each index (one output channel of one image) copies its
 * input channel into a zero-padded image B of Wp = (OW - 1) s + (KW - 1) DW
 * + 1 columns in the scratch y[1], so that with the output computed Wp
 * columns a row, every tap is one constant offset into the flattened B:
 *   O[q] = bias + sum_{kh, kw} w[kh, kw] B[s q + kh DH Wp + kw DW],  q < OH Wp,
 * a one-dimensional loop the C compiler vectorizes (blocks of 32 outputs
 * in registers; inputs s apart), then the OW valid columns of each row go
 * to Y. Scratch: (s OH + (KH - 1) DH) Wp + (KW - 1) DW floats. */
#define O2C_DF_BLOCK 32
#define O2C_DF_RUN(T, EPI, BW)                                                         \
    {                                                                               \
        T acc[O2C_DF_BLOCK];                                                        \
        for (int j = 0; j < O2C_DF_BLOCK; j++) acc[j] = bias;                       \
        for (o2c_int kh = 0; kh < KH; kh++)                                         \
            for (o2c_int kw = 0; kw < KW; kw++) {                                   \
                const T w = wp[kh * KW + kw];                                       \
                const T *b = Bp + SW * q0 + kh * DH * Wp + kw * DW;                 \
                for (int j = 0; j < (BW); j++) acc[j] = O2C_FMA_f32(acc[j], w, b[j * SW]); \
            }                                                                       \
        o2c_int oh = q0 / Wp, ow = q0 - oh * Wp;                                    \
        for (int j = 0; j < (BW); j++) {                                            \
            if (ow < OW) {                                                          \
                const o2c_int y = i * OH * OW + oh * OW + ow;                       \
                Y[y] = epi ? EPI(acc[j], y, m, p) : acc[j];                         \
            }                                                                       \
            if (++ow == Wp) { ow = 0; oh++; }                                       \
        }                                                                           \
    }
#define O2C_DWFLAT(NAME, T, EPI)                                                    \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        O2C_CONV_OPERANDS(T);                                                       \
        T *Bp = (T *)p->y[1];   /* scratch */                                      \
        const o2c_int Wp = (OW - 1) * SW + (KW - 1) * DW + 1, Hp = SH * OH + (KH - 1) * DH; \
        const o2c_int NB = Hp * Wp + (KW - 1) * DW, Q = OH * Wp;                    \
        (void)CG; (void)ID; (void)OD; (void)KD; (void)SD; (void)DD; (void)PD;      \
        O2C_FOR(i) {                                                                \
            const o2c_int m = i % M, n = i / M, g = m / MG;                         \
            const T *xc = X + (n * C + g) * IH * IW;                                \
            const T *wp = Wt + m * KH * KW;                                         \
            const T bias = Bs ? Bs[m] : (T)0;                                       \
            for (o2c_int t = 0; t < NB; t++) Bp[t] = (T)0;                          \
            for (o2c_int r = 0; r < IH; r++) {                                      \
                const o2c_int br = r + PH;                                          \
                if (br >= Hp) break;                                                \
                const o2c_int c0 = PW, n0 = IW < Wp - PW ? IW : Wp - PW;            \
                for (o2c_int c = 0; c < n0; c++) Bp[br * Wp + c0 + c] = xc[r * IW + c]; \
            }                                                                       \
            o2c_int q0 = 0;                                                         \
            for (; q0 + O2C_DF_BLOCK <= Q; q0 += O2C_DF_BLOCK) O2C_DF_RUN(T, EPI, O2C_DF_BLOCK) \
            if (q0 < Q) {                                                           \
                if (Q >= O2C_DF_BLOCK) { q0 = Q - O2C_DF_BLOCK; O2C_DF_RUN(T, EPI, O2C_DF_BLOCK) } \
                else O2C_DF_RUN(T, EPI, Q - q0)                                          \
            }                                                                       \
        }                                                                           \
    }

/* o2c_dwc_f32: a 1-D or 2-D depthwise convolution (C == group == M, any
 * stride, dilation and pads) of o2c_conv_* (same parameters) with X and Y
 * channels innermost (N x H x W x C, compiler/layout.c), for C of at least
 * O2C_DWC_MIN_C: the vector runs along the channels, so any image size, even
 * 3 x 3, vectorizes fully. Index space: the output rows, N x OH. For each
 * output pixel, blocks of CB channels (64 where there are as many, else
 * 32; the last block moved left to stay full: channels computed twice, to
 * the same values) accumulate the taps
 * inside the input, each one multiply-add of a channel block of the input
 * pixel by the tap's weights. The weights x[1] are packed by the lowering
 * tap-major, Wc[(kh * KW + kw) * C + c] = W[c, 0, kh, kw]. Where the
 * target has 16-float vectors (o2c_v16: AVX-512, AVX2, NEON), blocks of 64,
 * 32 or 16 channels in 4, 2 or 1 vector accumulators, and below 64
 * channels 2 or 4 pixels at once where their taps are inside; else blocks of 64 or
 * 32 (16 below 32 channels) for the compiler to vectorize (built for
 * SSE2 only, vww's depthwise layers take 0.049 ms so, 0.073 on the portable
 * o2c_v16 array): gcc 12 keeps 16 accumulators in memory (6 x 6 x
 * 128 with AVX-512: 15 GFLOP/s; blocks of 32: 63; of 64: 92; o2c_v16:
 * 84; 16 channels at 48x48 stride 2: 93). */
#define O2C_DWC_MIN_C 16   /* the fewest channels it takes (one block of 16) */
#define O2C_DWC_CB 32      /* channels a block (portable path, 32 channels or more) */
#define O2C_DWC_CB_WIDE 64 /* for 64 channels or more */
#define O2C_DWC_BLOCK(T, EPI, CB)                                                   \
    for (o2c_int c0 = 0; c0 < C; c0 += (CB)) {                                      \
        const o2c_int cb = c0 + (CB) > C ? C - (CB) : c0;                           \
        T acc[CB];                                                                  \
        for (int j = 0; j < (CB); j++) acc[j] = Bs ? Bs[cb + j] : (T)0;             \
        for (o2c_int kh = kh0; kh < kh1; kh++) {                                    \
            const o2c_int ih = oh * SH - PH + kh * DH;                              \
            for (o2c_int kw = kw0; kw < kw1; kw++) {                                \
                const o2c_int iw = ow * SW - PW + kw * DW;                          \
                const T *xs = xn + (ih * IW + iw) * C + cb, *ws = Wt + (kh * KW + kw) * C + cb; \
                for (int j = 0; j < (CB); j++) acc[j] = O2C_FMA_f32(acc[j], ws[j], xs[j]); \
            }                                                                       \
        }                                                                           \
        for (int j = 0; j < (CB); j++) {                                            \
            const o2c_int y = yo + cb + j;                                          \
            Y[y] = epi ? EPI(acc[j], y, cb + j, p) : acc[j];                        \
        }                                                                           \
    }
/* the same with blocks of NV x 16 channels in vector registers (o2c_v16):
 * NV independent accumulators, so the taps' multiply-adds do not wait on
 * each other (one 16-channel accumulator made a 5x5 depthwise conv wait on
 * the FMA latency: 22 GFLOP/s; four: 70) */
#define O2C_DWC_V16(T, EPI, NV)                                                     \
    for (o2c_int c0 = 0; c0 < C; c0 += 16 * (NV)) {                                \
        const o2c_int cb = c0 + 16 * (NV) > C ? C - 16 * (NV) : c0;                 \
        o2c_v16 acc[NV];                                                            \
        for (int v = 0; v < (NV); v++) acc[v] = Bs ? o2c_v16_load(Bs + cb + 16 * v) : o2c_v16_zero(); \
        for (o2c_int kh = kh0; kh < kh1; kh++) {                                    \
            const o2c_int ih = oh * SH - PH + kh * DH;                              \
            for (o2c_int kw = kw0; kw < kw1; kw++) {                                \
                const o2c_int iw = ow * SW - PW + kw * DW;                          \
                const T *ws = Wt + (kh * KW + kw) * C + cb, *xs = xn + (ih * IW + iw) * C + cb; \
                for (int v = 0; v < (NV); v++)                                      \
                    acc[v] = o2c_v16_fma(acc[v], o2c_v16_load(ws + 16 * v), o2c_v16_load(xs + 16 * v)); \
            }                                                                       \
        }                                                                           \
        if (epi) {                                                                  \
            T v[16 * (NV)];                                                         \
            for (int u = 0; u < (NV); u++) o2c_v16_store(v + 16 * u, acc[u]);       \
            for (int j = 0; j < 16 * (NV); j++) {                                   \
                const o2c_int y = yo + cb + j;                                      \
                Y[y] = EPI(v[j], y, cb + j, p);                                     \
            }                                                                       \
        } else                                                                      \
            for (int u = 0; u < (NV); u++) o2c_v16_store(Y + yo + cb + 16 * u, acc[u]); \
    }
/* PX output pixels side by side (all their taps inside the input), NV
 * vectors of channels each: PX x NV independent accumulators for narrow
 * channel counts (mobilenet_block's 16 channels at 36 x 36, one pixel, one
 * accumulator: 32 GFLOP/s; four pixels: 110) */
#define O2C_DWC_V16_PIX(T, EPI, NV, PX)                                             \
    for (o2c_int c0 = 0; c0 < C; c0 += 16 * (NV)) {                                \
        const o2c_int cb = c0 + 16 * (NV) > C ? C - 16 * (NV) : c0;                 \
        o2c_v16 acc[(PX) * (NV)];                                                   \
        for (int u = 0; u < (PX); u++)                                              \
            for (int v = 0; v < (NV); v++)                                          \
                acc[u * (NV) + v] = Bs ? o2c_v16_load(Bs + cb + 16 * v) : o2c_v16_zero(); \
        for (o2c_int kh = kh0; kh < kh1; kh++) {                                    \
            const o2c_int ih = oh * SH - PH + kh * DH;                              \
            for (o2c_int kw = 0; kw < KW; kw++) {                                   \
                const o2c_int iw = ow * SW - PW + kw * DW;                          \
                const T *ws = Wt + (kh * KW + kw) * C + cb, *xs = xn + (ih * IW + iw) * C + cb; \
                for (int v = 0; v < (NV); v++) {                                    \
                    const o2c_v16 w = o2c_v16_load(ws + 16 * v);                    \
                    for (int u = 0; u < (PX); u++)                                  \
                        acc[u * (NV) + v] = o2c_v16_fma(acc[u * (NV) + v], w, o2c_v16_load(xs + u * SW * C + 16 * v)); \
                }                                                                   \
            }                                                                       \
        }                                                                           \
        for (int u = 0; u < (PX); u++) {                                            \
            const o2c_int yu = yo + u * C;                                          \
            if (epi) {                                                              \
                T v[16 * (NV)];                                                     \
                for (int w = 0; w < (NV); w++) o2c_v16_store(v + 16 * w, acc[u * (NV) + w]); \
                for (int j = 0; j < 16 * (NV); j++) {                               \
                    const o2c_int y = yu + cb + j;                                  \
                    Y[y] = EPI(v[j], y, cb + j, p);                                 \
                }                                                                   \
            } else                                                                  \
                for (int w = 0; w < (NV); w++) o2c_v16_store(Y + yu + cb + 16 * w, acc[u * (NV) + w]); \
        }                                                                           \
    }
#define O2C_DWC(NAME, T, EPI)                                                       \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        O2C_CONV_OPERANDS(T);                                                       \
        (void)CG; (void)MG; (void)G; (void)ID; (void)OD; (void)KD; (void)SD; (void)DD; (void)PD; \
        O2C_FOR(r) {                                                                \
            const o2c_int oh = r % OH, n = r / OH;                                  \
            const T *xn = X + n * IH * IW * C;                                      \
            o2c_int kh0 = 0, kh1 = KH;   /* the taps' rows inside the input */      \
            while (kh0 < KH && oh * SH - PH + kh0 * DH < 0) kh0++;                  \
            while (kh1 > kh0 && oh * SH - PH + (kh1 - 1) * DH >= IH) kh1--;         \
            for (o2c_int ow = 0; ow < OW; ow++) {                                   \
                const o2c_int yo = (r * OW + ow) * C;                               \
                /* 4 / NV pixels at once, where all their taps are inside */       \
                const o2c_int px = O2C_V16_NATIVE && C < 64 ? (C >= 32 ? 2 : 4) : 1;   \
                if (px > 1 && ow * SW - PW >= 0 && ow + px <= OW &&                 \
                    (ow + px - 1) * SW - PW + (KW - 1) * DW < IW) {                 \
                    if (C >= 32) O2C_DWC_V16_PIX(T, EPI, 2, 2)                      \
                    else O2C_DWC_V16_PIX(T, EPI, 1, 4)                              \
                    ow += px - 1;                                                   \
                    continue;                                                       \
                }                                                                   \
                o2c_int kw0 = 0, kw1 = KW;                                          \
                while (kw0 < KW && ow * SW - PW + kw0 * DW < 0) kw0++;              \
                while (kw1 > kw0 && ow * SW - PW + (kw1 - 1) * DW >= IW) kw1--;     \
                if (O2C_V16_NATIVE && C >= 64) O2C_DWC_V16(T, EPI, 4)               \
                else if (O2C_V16_NATIVE && C >= 32) O2C_DWC_V16(T, EPI, 2)          \
                else if (O2C_V16_NATIVE) O2C_DWC_V16(T, EPI, 1)                     \
                else if (C >= O2C_DWC_CB_WIDE) O2C_DWC_BLOCK(T, EPI, O2C_DWC_CB_WIDE) \
                else if (C >= O2C_DWC_CB) O2C_DWC_BLOCK(T, EPI, O2C_DWC_CB)         \
                else O2C_DWC_BLOCK(T, EPI, 16)                                      \
            }                                                                       \
        }                                                                           \
    }

/* o2c_dwconv_f32: the convolution of o2c_conv_* (same parameters) when
 * every output channel reads one input channel (depthwise: C == group, any
 * channel multiplier M / group). Index space: the output rows, N x M x OD x
 * OH. A row is computed in blocks of CW columns with the CW accumulators
 * in registers: for each tap, CW multiply-adds on inputs CW apart by the
 * stride (contiguous for stride 1), which the C compiler vectorizes. Where
 * a block's taps leave the image, their input rows are first copied into
 * zero-padded buffers, so every block runs the same code. The last block
 * of a row moves left to stay full (columns computed twice, to the same
 * values); CW is 32, 8 for rows of 8 to 31 columns, and the row itself
 * below 8 (the lowering uses the kernel for rows of 32 or more). */
#define O2C_DW_SPAN 80    /* a block's input row span, (CW - 1) * stride + (KW - 1) * dilation + 1, at most */
#define O2C_DW_ROWS 8     /* taps' rows (KD x KH) at most */
#define O2C_DW_BLOCK(T, EPI, CW, CWMAX)                                             \
    for (o2c_int ow0 = 0; ow0 < OW; ow0 += (CW)) {                                  \
        if (ow0 + (CW) > OW) ow0 = OW - (CW);                                       \
        const o2c_int iw0 = ow0 * SW - PW, span = ((CW) - 1) * SW + (KW - 1) * DW + 1; \
        const int inside = iw0 >= 0 && iw0 + span <= IW;                            \
        /* the input rows of the taps (padded copies at the edges) */               \
        const T *rows[O2C_DW_ROWS], *wrow[O2C_DW_ROWS];                             \
        int nrows = 0;                                                              \
        O2C_WIN_TAPS(kd, KD, id, ID, od * SD - PD, DD,                              \
        O2C_WIN_TAPS(kh, KH, ih, IH, oh * SH - PH, DH,                              \
            const T *xr = xp + (id * IH + ih) * IW;                                 \
            if (inside) rows[nrows] = xr + iw0;                                     \
            else {                                                                  \
                T *b = xb + nrows * O2C_DW_SPAN;                                    \
                const o2c_int lo = iw0 < 0 ? (-iw0 < span ? -iw0 : span) : 0;       \
                const o2c_int hi = IW - iw0 < span ? IW - iw0 : span;               \
                o2c_int t = 0;                                                      \
                for (; t < lo; t++) b[t] = (T)0;                                    \
                for (; t < hi; t++) b[t] = xr[iw0 + t];                             \
                for (; t < span; t++) b[t] = (T)0;                                  \
                rows[nrows] = b;                                                    \
            }                                                                       \
            wrow[nrows++] = wp + (kd * KH + kh) * KW;))                             \
        T acc[CWMAX];                                                               \
        for (int j = 0; j < (CW); j++) acc[j] = bias;                               \
        for (int rr = 0; rr < nrows; rr++)                                          \
            for (o2c_int kw = 0; kw < KW; kw++) {                                   \
                const T w = wrow[rr][kw];                                           \
                const T *xk = rows[rr] + kw * DW;                                   \
                for (int j = 0; j < (CW); j++) acc[j] = O2C_FMA_f32(acc[j], w, xk[j * SW]); \
            }                                                                       \
        for (int j = 0; j < (CW); j++) {                                            \
            const o2c_int y = i * OW + ow0 + j;                                     \
            Y[y] = epi ? EPI(acc[j], y, m, p) : acc[j];                             \
        }                                                                           \
        if (ow0 + (CW) >= OW) break;                                                \
    }
#define O2C_DWCONV(NAME, T, EPI)                                                    \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        O2C_CONV_OPERANDS(T);                                                       \
        T xb[O2C_DW_ROWS * O2C_DW_SPAN];                                            \
        (void)CG;                                                                   \
        O2C_FOR(i) {                                                                \
            o2c_int r = i;                                                          \
            const o2c_int oh = r % OH; r /= OH;                                     \
            const o2c_int od = r % OD; r /= OD;                                     \
            const o2c_int m = r % M, n = r / M, g = m / MG;                         \
            const T *xp = X + (n * C + g) * ID * IH * IW;                           \
            const T *wp = Wt + m * KD * KH * KW;                                    \
            const T bias = Bs ? Bs[m] : (T)0;                                       \
            if (OW >= 32) { O2C_DW_BLOCK(T, EPI, 32, 32) }                          \
            else if (OW >= 8) { O2C_DW_BLOCK(T, EPI, 8, 8) }                        \
            else { O2C_DW_BLOCK(T, EPI, OW, 8) }                                    \
        }                                                                           \
    }

/*@ o2c_conv_f32 needs o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_CONV(o2c_conv_f32, float, o2c_epi_f32)
/*@ o2c_conv_f32h needs o2c_win3 o2c_epi_f32 o2c_ldh params O2C_CONV O2C_EPI split */
O2C_CONV_WT(o2c_conv_f32h, float, uint16_t, o2c_ldh, o2c_epi_f32)
/*@ o2c_conv_rows_f32 needs o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_CONV_ROWS_WT(o2c_conv_rows_f32, float, float, O2C_LD, o2c_epi_f32)
/*@ o2c_conv_rows_f32h needs o2c_win3 o2c_epi_f32 o2c_ldh params O2C_CONV O2C_EPI split */
O2C_CONV_ROWS_WT(o2c_conv_rows_f32h, float, uint16_t, o2c_ldh, o2c_epi_f32)
/*@ o2c_conv_f64 needs o2c_win3 o2c_epi_f64 params O2C_CONV O2C_EPI split */
O2C_CONV(o2c_conv_f64, double, o2c_epi_f64)
/*@ o2c_conv_tile_f32 needs o2c_tile_product o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_CONV_TILE(o2c_conv_tile_f32, float, o2c_epi_f32, O2C_CV_NR)
/*@ o2c_dwconv_f32 needs o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_DWCONV(o2c_dwconv_f32, float, o2c_epi_f32)
/*@ o2c_conv_panel_f32 needs o2c_tile_product o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_CONV_PANEL(o2c_conv_panel_f32, float, o2c_epi_f32)
/*@ o2c_conv_panel_f32_4x32 needs o2c_tile_product o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_CONV_PANEL_MN(o2c_conv_panel_f32_4x32, float, o2c_epi_f32, 4, 32)
/*@ o2c_conv_panel_f32_8x16 needs o2c_tile_product o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_CONV_PANEL_MN(o2c_conv_panel_f32_8x16, float, o2c_epi_f32, 8, 16)
/*@ o2c_conv_panel_f32_4x64 needs o2c_tile_product o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_CONV_PANEL_MN(o2c_conv_panel_f32_4x64, float, o2c_epi_f32, 4, 64)
/*@ o2c_conv_panel_f32_12x32 needs o2c_tile_product o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_CONV_PANEL_MN(o2c_conv_panel_f32_12x32, float, o2c_epi_f32, 12, 32)
/*@ o2c_conv_panel_f32_16x16 needs o2c_tile_product o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_CONV_PANEL_MN(o2c_conv_panel_f32_16x16, float, o2c_epi_f32, 16, 16)
/*@ o2c_conv_panel_f32_4x16 needs o2c_tile_product o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_CONV_PANEL_MN(o2c_conv_panel_f32_4x16, float, o2c_epi_f32, 4, 16)
/*@ o2c_conv_panel_f32_6x16 needs o2c_tile_product o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_CONV_PANEL_MN(o2c_conv_panel_f32_6x16, float, o2c_epi_f32, 6, 16)
/*@ o2c_conv_wino_f32 needs o2c_tile_product o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_CONV_WINO(o2c_conv_wino_f32, float, o2c_epi_f32)
/*@ o2c_conv_pwt_f32 needs o2c_tile_product o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_CONV_PWT(o2c_conv_pwt_f32, float, o2c_epi_f32)
/*@ o2c_conv_gt_f32 needs o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_CONV_GT(o2c_conv_gt_f32, float, o2c_epi_f32)
/*@ o2c_dwc_f32 needs o2c_win3 o2c_epi_f32 o2c_v16 params O2C_CONV O2C_EPI split */
O2C_DWC(o2c_dwc_f32, float, o2c_epi_f32)
/*@ o2c_dwflat_f32 needs o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_DWFLAT(o2c_dwflat_f32, float, o2c_epi_f32)
/*@ o2c_conv_pv_f32 needs o2c_win3 o2c_epi_f32 o2c_v16 o2c_v16_set1 params O2C_CONV O2C_EPI split */
O2C_CONV_PV(o2c_conv_pv_f32, float, o2c_epi_f32)
/*@ o2c_conv_tile8_f32 needs o2c_tile_product o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_CONV_TILE(o2c_conv_tile8_f32, float, o2c_epi_f32, O2C_CV_NR_NARROW)
/*@ o2c_convt_ks_f32 needs o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
/* ConvTranspose whose kernel equals its stride (2-D, one group, no padding,
 * no dilation: the upsampling of a segmentation head, 2x2 at stride 2):
 * every output takes exactly one tap of each input channel, so an output
 * row oh = ih SH + kh is, per kw, a sum over c of W[c, m, kh, kw] times
 * input row ih. Index space N x M x IH x KH: the KW sums of an output row
 * as IW-long multiply-adds along the input row (contiguous, vectorized)
 * into y[1] (KW x IW floats), then interleaved into the row with the bias
 * and the epilogue. The same sums as o2c_convt_f32 (the reference) in the
 * same order of c. */
O2C_KERNEL(o2c_convt_ks_f32)
{
    O2C_CONV_OPERANDS(float);
    float *O2C_RESTRICT acc = (float *)p->y[1];
    (void)G; (void)CG; (void)MG; (void)ID; (void)OD; (void)KD; (void)SD; (void)DD; (void)DH; (void)DW;
    (void)PD; (void)PH; (void)PW;
    O2C_FOR(t) {
        const o2c_int kh = t % KH, ih = t / KH % IH, m = t / KH / IH % M, n = t / KH / IH / M;
        const o2c_int oh = ih * SH + kh;
        for (o2c_int kw = 0; kw < KW; kw++)
            for (o2c_int iw = 0; iw < IW; iw++) acc[kw * IW + iw] = 0;
        for (o2c_int c = 0; c < C; c++) {
            const float *O2C_RESTRICT xr = X + ((n * C + c) * IH + ih) * IW;
            const float *wr = Wt + ((c * M + m) * KH + kh) * KW;
            for (o2c_int kw = 0; kw < KW; kw++) {
                const float w = wr[kw];
                float *O2C_RESTRICT ar = acc + kw * IW;
                for (o2c_int iw = 0; iw < IW; iw++) ar[iw] += xr[iw] * w;
            }
        }
        {
            const float b = Bs ? Bs[m] : 0.0f;
            const o2c_int y0 = ((n * M + m) * OH + oh) * OW;
            for (o2c_int iw = 0; iw < IW; iw++)
                for (o2c_int kw = 0; kw < KW; kw++) {
                    const o2c_int i = y0 + iw * SW + kw;
                    const float v = b + acc[kw * IW + iw];
                    Y[i] = epi ? o2c_epi_f32(v, i, m, p) : v;
                }
        }
    }
}

/*@ o2c_convt_f32 needs o2c_win3 o2c_epi_f32 params O2C_CONV O2C_EPI split */
O2C_CONVT(o2c_convt_f32, float, o2c_epi_f32)
/*@ o2c_convt_f64 needs o2c_win3 o2c_epi_f64 params O2C_CONV O2C_EPI split */
O2C_CONVT(o2c_convt_f64, double, o2c_epi_f64)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_CONV(K, F) K(o2c_conv_f32, F) K(o2c_conv_f32h, F) K(o2c_conv_rows_f32, F) K(o2c_conv_rows_f32h, F) K(o2c_conv_f64, F) K(o2c_conv_tile_f32, F) K(o2c_conv_tile8_f32, F) K(o2c_dwconv_f32, F) K(o2c_conv_panel_f32, F) K(o2c_conv_panel_f32_4x32, F) K(o2c_conv_panel_f32_8x16, F) K(o2c_conv_panel_f32_4x64, F) K(o2c_conv_panel_f32_12x32, F) K(o2c_conv_panel_f32_16x16, F) K(o2c_conv_panel_f32_4x16, F) K(o2c_conv_panel_f32_6x16, F) K(o2c_conv_pwt_f32, F) K(o2c_conv_gt_f32, F) K(o2c_conv_wino_f32, F) K(o2c_dwflat_f32, F) K(o2c_conv_pv_f32, F) K(o2c_dwc_f32, F) K(o2c_convt_f32, F) K(o2c_convt_ks_f32, F) K(o2c_convt_f64, F)
