/* pool kernels. See o2c_rt.h for the calling convention.
 *
 * Index space: the output elements Y[plane, od, oh, ow] with plane = n*C + c.
 * 1-D and 2-D pools are given as 3-D ones with leading spatial dims of
 * size 1; global pools as a 1-D pool over the flattened spatial dims.
 * Window tap k of output o along an axis reads input o*s - pad + k*dil;
 * taps outside the input are skipped (MaxPool: padding never wins).
 *
 * Parameters (all kernels): O2C_POOL_* (runtime/c/params/pool.h), the
 * geometry as (depth, height, width) triples: O2C_POOL_IN (ID, IH, IW), ...
 *
 * o2c_maxpool_*: Y = max over the window's taps inside the input.
 *   O2C_POOL_MODE: storage order of the optional Indices output y[1] (int64):
 *         0 row-major, 1 column-major spatial index; both plus
 *         plane * ID*IH*IW. y[1] NULL: no indices.
 *   O2C_POOL_F_PARAM: the value of a window with no tap inside the input.
 * o2c_avgpool_* (AveragePool, LpPool):
 *   O2C_POOL_MODE: 0 average over the taps inside the input,
 *               1 average with the padding counted (count_include_pad:
 *                 taps inside [-pad_begin, in + pad_end)),
 *               2 Lp norm (sum |x|^p)^(1/p) over the taps inside the input
 *   O2C_POOL_F_PARAM: p (mode 2) */

#define O2C_POOL_PARAMS                                                             \
    O2C_WIN3_GEOMETRY(O2C_POOL_IN, O2C_POOL_OUT, O2C_POOL_K, O2C_POOL_S, O2C_POOL_D, O2C_POOL_PB)

#define O2C_POOL_INDEX                                                              \
    O2C_WIN3_OUT(i);                                                                \
    const o2c_int plane = r;                                                        \
    const o2c_int d0 = od * SD - PD, h0 = oh * SH - PH, w0 = ow * SW - PW

#define O2C_MAXPOOL(NAME, T)                                                        \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const T *X = (const T *)p->x[0];                                            \
        T *Y = (T *)p->y[0];                                                        \
        int64_t *Ind = (int64_t *)p->y[1];                                          \
        O2C_POOL_PARAMS;                                                            \
        const o2c_int order = p->k[O2C_POOL_MODE];                                  \
        O2C_FOR(i) {                                                                \
            O2C_POOL_INDEX;                                                         \
            const T *xp = X + plane * ID * IH * IW;                                 \
            T best = O2C_PF(T, p, O2C_POOL_F_PARAM);                                \
            o2c_int bd = 0, bh = 0, bw = 0;                                         \
            int found = 0;                                                          \
            O2C_WIN_TAPS(kd, KD, id, ID, d0, DD,                                    \
            O2C_WIN_TAPS(kh, KH, ih, IH, h0, DH,                                    \
            O2C_WIN_TAPS(kw, KW, iw, IW, w0, DW,                                    \
                const T v = xp[(id * IH + ih) * IW + iw];                           \
                if (!found || v > best) {                                           \
                    best = v; bd = id; bh = ih; bw = iw; found = 1;                 \
                })))                                                                \
            Y[i] = best;                                                            \
            if (Ind)                                                                \
                Ind[i] = plane * ID * IH * IW +                                     \
                         (order ? (bw * IH + bh) * ID + bd : (bd * IH + bh) * IW + bw); \
        }                                                                           \
    }

/* o2c_maxpool_rows_f32: o2c_maxpool_f32 (same parameters) for 2-D pools
 * without the Indices output, the C target's variant. Index space: the
 * output rows, planes x OH. Separable: the window's rows inside the image
 * are first reduced column by column into the scratch y[1] (the padded
 * row: (OW - 1) SW + (KW - 1) DW + 1 floats, O2C_POOL_F_PARAM (-inf for
 * floats: below every value) where a column lies in the padding), then each output takes the maximum of its KW taps of that
 * row: KH + KW comparisons an output instead of KH x KW (YOLOX's 13 x 13
 * SPP pool: 169 -> 26), each loop one the C compiler vectorizes. The
 * maximum skips NaN (v > m); the reference's result is NaN exactly when
 * its first tap inside the image is (a later NaN never compares greater),
 * so that tap is checked last: the same result as the reference, NaN
 * included. A window with no tap inside the image gives O2C_POOL_F_PARAM,
 * as the reference. */
#define O2C_MAXPOOL_ROWS(NAME)                                                      \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const float *X = (const float *)p->x[0];                                    \
        float *Y = (float *)p->y[0];                                                \
        float *V = (float *)p->y[1];   /* scratch: the padded row */               \
        const float none = p->ff[O2C_POOL_F_PARAM];                                 \
        O2C_POOL_PARAMS;                                                            \
        const o2c_int VW = (OW - 1) * SW + (KW - 1) * DW + 1;                       \
        (void)ID; (void)OD; (void)KD; (void)SD; (void)DD; (void)PD;                 \
        O2C_FOR(i) {                                                                \
            const o2c_int oh = i % OH, plane = i / OH, h0 = oh * SH - PH;           \
            const float *xp = X + plane * IH * IW;                                  \
            float *y = Y + i * OW;                                                  \
            o2c_int ih1 = -1;   /* the first row inside the image */               \
            for (o2c_int j = 0; j < VW; j++) V[j] = none;                           \
            O2C_WIN_TAPS(kh, KH, ih, IH, h0, DH,                                    \
                if (ih1 < 0) ih1 = ih;                                              \
                const float *xr = xp + ih * IW;   /* V[j] is column j - PW */      \
                const o2c_int j1 = IW + PW < VW ? IW + PW : VW;                     \
                for (o2c_int j = PW; j < j1; j++) {                                 \
                    const float v = xr[j - PW];                                     \
                    V[j] = v > V[j] ? v : V[j];                                     \
                })                                                                  \
            for (o2c_int ow = 0; ow < OW; ow++) y[ow] = none;                       \
            for (o2c_int kw = 0; kw < KW; kw++) {                                   \
                const float *vk = V + kw * DW;                                      \
                for (o2c_int ow = 0; ow < OW; ow++) {                               \
                    const float v = vk[ow * SW];                                    \
                    y[ow] = v > y[ow] ? v : y[ow];                                  \
                }                                                                   \
            }                                                                       \
            if (ih1 < 0) continue;                                                  \
            /* the first tap inside the image, NaN: the reference's result */      \
            for (o2c_int ow = 0; ow < OW; ow++) {                                   \
                o2c_int iw = ow * SW - PW;                                          \
                if (iw < 0) iw += (-iw + DW - 1) / DW * DW;                         \
                if (iw < IW && iw <= ow * SW - PW + (KW - 1) * DW) {                \
                    const float v = xp[ih1 * IW + iw];                              \
                    if (v != v) y[ow] = v;                                          \
                }                                                                   \
            }                                                                       \
        }                                                                           \
    }

#define O2C_AVGPOOL(NAME, T)                                                        \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const T *X = (const T *)p->x[0];                                            \
        T *Y = (T *)p->y[0];                                                        \
        O2C_POOL_PARAMS;                                                            \
        const o2c_int ED = p->k[O2C_POOL_PE], EH = p->k[O2C_POOL_PE + 1];           \
        const o2c_int EW = p->k[O2C_POOL_PE + 2];                                   \
        const o2c_int mode = p->k[O2C_POOL_MODE];                                   \
        const T pw = O2C_PF(T, p, O2C_POOL_F_PARAM);                                \
        O2C_FOR(i) {                                                                \
            O2C_POOL_INDEX;                                                         \
            const T *xp = X + plane * ID * IH * IW;                                 \
            T acc = 0;                                                              \
            o2c_int cnt = 0;                                                        \
            O2C_WIN_TAPS(kd, KD, id, ID, d0, DD,                                    \
            O2C_WIN_TAPS(kh, KH, ih, IH, h0, DH,                                    \
            O2C_WIN_TAPS(kw, KW, iw, IW, w0, DW,                                    \
                const T v = xp[(id * IH + ih) * IW + iw];                           \
                acc += mode == 2 ? O2C_M(T, pow)(O2C_M(T, fabs)(v), pw) : v;        \
                cnt++;)))                                                           \
            if (mode == 2) {                                                        \
                Y[i] = O2C_M(T, pow)(acc, 1 / pw);                                         \
                continue;                                                           \
            }                                                                       \
            if (mode == 1) { /* taps inside the padded extent, per axis */         \
                o2c_int cd = 0, ch = 0, cw = 0;                                     \
                for (o2c_int kd = 0; kd < KD; kd++)                                 \
                    cd += d0 + kd * DD < ID + ED;                                   \
                for (o2c_int kh = 0; kh < KH; kh++)                                 \
                    ch += h0 + kh * DH < IH + EH;                                   \
                for (o2c_int kw = 0; kw < KW; kw++)                                 \
                    cw += w0 + kw * DW < IW + EW;                                   \
                cnt = cd * ch * cw;                                                 \
            }                                                                       \
            Y[i] = acc / (T)cnt;                                                    \
        }                                                                           \
    }

/* o2c_gavgpool_rows_f32: o2c_avgpool_f32 (same parameters) for a global
 * average pool of floats, the C target's variant: each index (one channel
 * of one image) sums its contiguous ID x IH x IW values in 16 partial sums
 * (a loop the C compiler vectorizes; not the reference's order) and
 * divides by their count. mobilenet_block's 48 x 18 x 18 pool: 6.6 ->
 * 0.9 us. */
#define O2C_GAVGPOOL_ROWS(NAME)                                                     \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const float *X = (const float *)p->x[0];                                    \
        float *Y = (float *)p->y[0];                                                \
        const o2c_int S = p->k[O2C_POOL_IN] * p->k[O2C_POOL_IN + 1] * p->k[O2C_POOL_IN + 2]; \
        O2C_FOR(i) {                                                                \
            const float *x = X + i * S;                                             \
            float s16[16] = {0}, s = 0;                                             \
            o2c_int j = 0;                                                          \
            for (; j + 16 <= S; j += 16)                                            \
                for (int u = 0; u < 16; u++) s16[u] += x[j + u];                    \
            for (; j < S; j++) s += x[j];                                           \
            for (int u = 0; u < 16; u++) s += s16[u];                               \
            Y[i] = s / (float)S;                                                    \
        }                                                                           \
    }

/*@ o2c_maxpool_f32 needs o2c_win3 params O2C_POOL split */
O2C_MAXPOOL(o2c_maxpool_f32, float)
/*@ o2c_maxpool_rows_f32 needs o2c_win3 params O2C_POOL split */
O2C_MAXPOOL_ROWS(o2c_maxpool_rows_f32)
/*@ o2c_maxpool_f64 needs o2c_win3 params O2C_POOL split */
O2C_MAXPOOL(o2c_maxpool_f64, double)
/*@ o2c_maxpool_i8 needs o2c_win3 params O2C_POOL split */
O2C_MAXPOOL(o2c_maxpool_i8, int8_t)
/*@ o2c_maxpool_u8 needs o2c_win3 params O2C_POOL split */
O2C_MAXPOOL(o2c_maxpool_u8, uint8_t)
/*@ o2c_avgpool_f32 needs o2c_win3 params O2C_POOL split */
O2C_AVGPOOL(o2c_avgpool_f32, float)
/*@ o2c_avgpool_f64 needs o2c_win3 params O2C_POOL split */
O2C_AVGPOOL(o2c_avgpool_f64, double)
/*@ o2c_gavgpool_rows_f32 params O2C_POOL_NK split */
O2C_GAVGPOOL_ROWS(o2c_gavgpool_rows_f32)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_POOL(K, F) K(o2c_maxpool_f32, F) K(o2c_maxpool_rows_f32, F) K(o2c_maxpool_f64, F) K(o2c_maxpool_i8, F) K(o2c_maxpool_u8, F) \
    K(o2c_avgpool_f32, F) K(o2c_avgpool_f64, F) K(o2c_gavgpool_rows_f32, F)
