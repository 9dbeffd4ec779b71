/* Image kernels: GridSample, AffineGrid, Col2Im, CenterCropPad, RoiAlign,
 * MaxUnpool, DeformConv. See o2c_rt.h for the calling convention;
 * parameter slots in runtime/c/params/image.h. */

/* The reflection of x into [lo, hi] (mirrored at the borders as often as
 * it takes), as GridSample's reflection padding. */
#define O2C_GS_REFLECT_DEF(NAME, T)                                        \
    O2C_HD static inline T NAME(T x, T lo, T hi)                           \
    {                                                                      \
        const T rng = hi - lo;                                             \
        if (!(rng > 0)) return lo;                                         \
        if (x < lo) {                                                      \
            const T dx = lo - x;                                           \
            const T q = O2C_M(T, floor)(dx / rng);                         \
            const T r = dx - q * rng;                                      \
            return O2C_M(T, fmod)(q, (T)2) == 0 ? lo + r : hi - r;         \
        }                                                                  \
        if (x > hi) {                                                      \
            const T dx = x - hi;                                           \
            const T q = O2C_M(T, floor)(dx / rng);                         \
            const T r = dx - q * rng;                                      \
            return O2C_M(T, fmod)(q, (T)2) == 0 ? hi - r : lo + r;         \
        }                                                                  \
        return x;                                                          \
    }

/* The taps of one spatial axis of GridSample: v is the normalized grid
 * coordinate, d the axis length. Writes the source indices (-1: outside,
 * reads as zero) and weights; returns their number (1, 2 or 4). */
#define O2C_GS_TAPS_DEF(NAME, T, REFLECT)                                  \
    O2C_HD static inline int NAME(T v, o2c_int d, o2c_int mode, o2c_int pad, o2c_int align, o2c_int *idx, T *w) \
    {                                                                      \
        const T lo = align ? (T)0 : (T)-0.5, hi = align ? (T)(d - 1) : (T)d - (T)0.5; \
        int nt, k;                                                         \
        v = align ? (v + 1) / 2 * (T)(d - 1) : ((v + 1) * (T)d - 1) / 2;   \
        if (mode == O2C_GS_NEAREST) v = O2C_M(T, nearbyint)(v);            \
        if (v < lo || v > hi) {                                            \
            if (pad == O2C_GS_PAD_BORDER) v = v < 0 ? (T)0 : (T)(d - 1);   \
            else if (pad == O2C_GS_PAD_REFLECTION) v = REFLECT(v, lo, hi); \
        }                                                                  \
        /* NaN or far outside: every tap outside (no int overflow) */      \
        if (!(v >= (T)-8)) v = (T)-8;                                      \
        if (v > (T)(d + 8)) v = (T)(d + 8);                                \
        if (mode == O2C_GS_NEAREST) {                                      \
            idx[0] = (o2c_int)v;                                           \
            w[0] = 1;                                                      \
            nt = 1;                                                        \
        } else {                                                           \
            const T f = O2C_M(T, floor)(v), t = v - f;                     \
            const o2c_int x0 = (o2c_int)f;                                 \
            if (mode == O2C_GS_LINEAR) {                                   \
                idx[0] = x0;                                               \
                idx[1] = x0 + 1;                                           \
                w[0] = 1 - t;                                              \
                w[1] = t;                                                  \
                nt = 2;                                                    \
            } else {                                                       \
                const T A = (T)-0.75, t1 = t + 1, u = 1 - t, u1 = 2 - t;   \
                w[0] = ((A * t1 - 5 * A) * t1 + 8 * A) * t1 - 4 * A;       \
                w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;                \
                w[2] = ((A + 2) * u - (A + 3)) * u * u + 1;                \
                w[3] = ((A * u1 - 5 * A) * u1 + 8 * A) * u1 - 4 * A;       \
                for (k = 0; k < 4; k++) idx[k] = x0 - 1 + k;               \
                nt = 4;                                                    \
            }                                                              \
        }                                                                  \
        for (k = 0; k < nt; k++) {                                         \
            o2c_int j = idx[k];                                            \
            if (j >= 0 && j < d) continue;                                 \
            if (pad == O2C_GS_PAD_ZEROS) idx[k] = -1;                      \
            else if (pad == O2C_GS_PAD_BORDER) idx[k] = j < 0 ? 0 : d - 1; \
            else {                                                         \
                j = (o2c_int)REFLECT((T)j, lo, hi);                        \
                idx[k] = j < 0 ? 0 : (j > d - 1 ? d - 1 : j);              \
            }                                                              \
        }                                                                  \
        return nt;                                                         \
    }

/* GridSample's X: its r spatial dims xd, their row-major strides st and
 * the elements of a plane (one image's channel); a: an axis, for the caller */
#define O2C_GS_STRIDES                                                     \
    const o2c_int *xd = p->k + O2C_GS_XDIMS;                               \
    o2c_int st[O2C_MAX_RANK], plane = 1, a;                                \
    for (a = r - 1; a >= 0; a--) {                                         \
        st[a] = plane;                                                     \
        plane *= xd[a];                                                    \
    }

/* GridSample, linear and cubic: X (N, C, D1..Dr) sampled at the grid
 * (N, H1..Hr, r; coordinates innermost axis first, in [-1, 1]). Index
 * space: output elements (N, C, H1..Hr); the taps of every axis, summed
 * over their product.
 *   x[0] X, x[1] grid (X's type); y[0] Y
 *   O2C_GS_* */
#define O2C_GRIDSAMPLE_DEF(NAME, T, TAPS)                                  \
    O2C_KERNEL(NAME)                                                       \
    {                                                                      \
        const T *X = (const T *)p->x[0];                                   \
        const T *GR = (const T *)p->x[1];                                  \
        T *Y = (T *)p->y[0];                                               \
        const o2c_int r = p->k[O2C_GS_NSP], C = p->k[O2C_GS_C], G = p->k[O2C_GS_G]; \
        const o2c_int mode = p->k[O2C_GS_MODE], pad = p->k[O2C_GS_PAD], align = p->k[O2C_GS_ALIGN]; \
        O2C_GS_STRIDES;                                                    \
        O2C_FOR(i) {                                                       \
            const o2c_int g = i % G, nc = i / G, n = nc / C;               \
            const T *gp = GR + (n * G + g) * r;                            \
            const T *xp = X + nc * plane;                                  \
            o2c_int idx[O2C_MAX_RANK][4], tot = 1, t;                      \
            T w[O2C_MAX_RANK][4], acc = 0;                                 \
            int nt[O2C_MAX_RANK];                                          \
            for (a = 0; a < r; a++) {                                      \
                nt[a] = TAPS(gp[r - 1 - a], xd[a], mode, pad, align, idx[a], w[a]); \
                tot *= nt[a];                                              \
            }                                                              \
            for (t = 0; t < tot; t++) {                                    \
                o2c_int u = t, off = 0;                                    \
                T wt = 1;                                                  \
                int out = 0;                                               \
                for (a = r - 1; a >= 0; a--) {                             \
                    const o2c_int k = u % nt[a];                           \
                    u /= nt[a];                                            \
                    if (idx[a][k] < 0) { out = 1; break; }                 \
                    off += idx[a][k] * st[a];                              \
                    wt *= w[a][k];                                         \
                }                                                          \
                if (!out) acc += wt * xp[off];                             \
            }                                                              \
            Y[i] = acc;                                                    \
        }                                                                  \
    }

/* GridSample, nearest, any element type (bytes); G the grid's type.
 *   x[0] X, x[1] grid; y[0] Y
 *   O2C_GS_* */
#define O2C_GRIDSAMPLE_NEAREST_DEF(NAME, T, TAPS)                          \
    O2C_KERNEL(NAME)                                                       \
    {                                                                      \
        const unsigned char *X = (const unsigned char *)p->x[0];           \
        const T *GR = (const T *)p->x[1];                                  \
        unsigned char *Y = (unsigned char *)p->y[0];                       \
        const o2c_int r = p->k[O2C_GS_NSP], C = p->k[O2C_GS_C], G = p->k[O2C_GS_G]; \
        const o2c_int pad = p->k[O2C_GS_PAD], align = p->k[O2C_GS_ALIGN], es = p->k[O2C_GS_ESIZE]; \
        O2C_GS_STRIDES;                                                    \
        O2C_FOR(i) {                                                       \
            const o2c_int g = i % G, nc = i / G, n = nc / C;               \
            const T *gp = GR + (n * G + g) * r;                            \
            o2c_int off = nc * plane, idx[4];                              \
            T w[4];                                                        \
            int out = 0;                                                   \
            for (a = 0; a < r; a++) {                                      \
                TAPS(gp[r - 1 - a], xd[a], O2C_GS_NEAREST, pad, align, idx, w); \
                if (idx[0] < 0) out = 1;                                   \
                else off += idx[0] * st[a];                                \
            }                                                              \
            if (out) memset(Y + i * es, 0, (size_t)es);                    \
            else memcpy(Y + i * es, X + off * es, (size_t)es);             \
        }                                                                  \
    }

/* AffineGrid: grid[n, (d,) h, w] = theta[n] (x, y, (z,) 1), the base
 * coordinates x (along W), y (along H), z (along D) in [-1, 1]. Index
 * space: N x the spatial points; each writes nsp values.
 *   x[0] theta (N, nsp, nsp + 1); y[0] grid
 *   O2C_AG_* */
#define O2C_AFFINE_GRID_DEF(NAME, T)                                       \
    O2C_KERNEL(NAME)                                                       \
    {                                                                      \
        const T *TH = (const T *)p->x[0];                                  \
        T *Y = (T *)p->y[0];                                               \
        const o2c_int r = p->k[O2C_AG_NSP], al = p->k[O2C_AG_ALIGN];       \
        const o2c_int *sz = p->k + O2C_AG_DIMS + 3 - r;                    \
        o2c_int S = 1, a;                                                  \
        for (a = 0; a < r; a++) S *= sz[a];                                \
        O2C_FOR(i) {                                                       \
            const o2c_int n = i / S;                                       \
            o2c_int q = i - n * S;                                         \
            T base[4];                                                     \
            const T *th = TH + n * r * (r + 1);                            \
            for (a = r - 1; a >= 0; a--) {                                 \
                const o2c_int s = sz[a], c = q % s;                        \
                T v;                                                       \
                q /= s;                                                    \
                if (al) v = s > 1 ? (T)-1 + (T)(2 * c) / (T)(s - 1) : (T)0; \
                else v = (T)-1 + (T)(2 * c + 1) / (T)s;                    \
                base[r - 1 - a] = v;                                       \
            }                                                              \
            base[r] = 1;                                                   \
            for (a = 0; a < r; a++) {                                      \
                T acc = 0;                                                 \
                o2c_int j;                                                 \
                for (j = 0; j <= r; j++) acc += th[a * (r + 1) + j] * base[j]; \
                Y[i * r + a] = acc;                                        \
            }                                                              \
        }                                                                  \
    }

/* Col2Im: Y (N, C, image) = the sum of the column entries X (N, C*K, L)
 * that land on each image element (K block positions, L sliding
 * positions; both last axis fastest). Index space: Y's elements, each
 * gathering its block positions in order.
 *   O2C_C2I_* */
#define O2C_COL2IM_DEF(NAME, T)                                            \
    O2C_KERNEL(NAME)                                                       \
    {                                                                      \
        const T *X = (const T *)p->x[0];                                   \
        T *Y = (T *)p->y[0];                                               \
        const o2c_int r = p->k[O2C_C2I_NSP];                               \
        const o2c_int *img = p->k + O2C_C2I_IMG, *blk = p->k + O2C_C2I_BLK, *col = p->k + O2C_C2I_COL; \
        const o2c_int *s = p->k + O2C_C2I_S, *dl = p->k + O2C_C2I_D, *pb = p->k + O2C_C2I_PB; \
        o2c_int P = 1, K = 1, L = 1, a;                                    \
        for (a = 0; a < r; a++) {                                          \
            P *= img[a];                                                   \
            K *= blk[a];                                                   \
            L *= col[a];                                                   \
        }                                                                  \
        O2C_FOR(i) {                                                       \
            const o2c_int nc = i / P, pix = i - nc * P;                    \
            o2c_int pc[O2C_MAX_RANK], q = pix, k;                          \
            T acc = 0;                                                     \
            for (a = r - 1; a >= 0; a--) {                                 \
                pc[a] = q % img[a];                                        \
                q /= img[a];                                               \
            }                                                              \
            for (k = 0; k < K; k++) {                                      \
                o2c_int u = k, l = 0, ls = 1, ok = 1;                      \
                for (a = r - 1; a >= 0 && ok; a--) {                       \
                    const o2c_int ko = u % blk[a], e = pc[a] + pb[a] - ko * dl[a]; \
                    u /= blk[a];                                           \
                    if (e < 0 || e % s[a] != 0 || e / s[a] >= col[a]) ok = 0; \
                    l += e / s[a] * ls;                                    \
                    ls *= col[a];                                          \
                }                                                          \
                if (ok) acc += X[(nc * K + k) * L + l];                    \
            }                                                              \
            Y[i] = acc;                                                    \
        }                                                                  \
    }

/* RoiAlign: for each region (x1, y1, x2, y2 scaled by spatial_scale), each
 * channel and output cell, the average (or maximum) of bilinear samples
 * on a regular grid in the cell (as the ONNX reference: max mode takes the
 * largest of the four weighted corner values of each sample). Index
 * space: output elements (R, C, PH, PW). A batch index outside X gives 0.
 *   x[0] X (N, C, H, W), x[1] rois (R, 4), x[2] batch indices (int64)
 *   O2C_ROI_*, O2C_ROI_F_SCALE */
#define O2C_ROIALIGN_DEF(NAME, T)                                          \
    O2C_KERNEL(NAME)                                                       \
    {                                                                      \
        const T *X = (const T *)p->x[0];                                   \
        const T *RO = (const T *)p->x[1];                                  \
        const int64_t *BI = (const int64_t *)p->x[2];                      \
        T *Y = (T *)p->y[0];                                               \
        const o2c_int C = p->k[O2C_ROI_C], H = p->k[O2C_ROI_H], W = p->k[O2C_ROI_W]; \
        const o2c_int PH = p->k[O2C_ROI_PH], PW = p->k[O2C_ROI_PW], NB = p->k[O2C_ROI_N]; \
        const o2c_int ratio = p->k[O2C_ROI_RATIO], mx = p->k[O2C_ROI_MAX], half = p->k[O2C_ROI_HALF]; \
        const T scale = O2C_PF(T, p, O2C_ROI_F_SCALE), off = half ? (T)0.5 : (T)0; \
        O2C_FOR(i) {                                                       \
            const o2c_int pw = i % PW, ph = (i / PW) % PH, c = (i / (PW * PH)) % C, r = i / (PW * PH * C); \
            const o2c_int b = BI[r];                                       \
            const T *ro = RO + r * 4;                                      \
            const T sw = ro[0] * scale - off, sh = ro[1] * scale - off;    \
            T rw = ro[2] * scale - off - sw, rh = ro[3] * scale - off - sh; \
            T bh, bw, acc = 0, gq;                                         \
            o2c_int gh, gw, iy, ix, first = 1;                             \
            const T *xp;                                                   \
            if (b < 0 || b >= NB) { Y[i] = 0; continue; }                  \
            xp = X + (b * C + c) * H * W;                                  \
            if (!half) {                                                   \
                if (!(rw > 1)) rw = 1;                                     \
                if (!(rh > 1)) rh = 1;                                     \
            }                                                              \
            bh = rh / (T)PH;                                               \
            bw = rw / (T)PW;                                               \
            gq = O2C_M(T, ceil)(rh / (T)PH);                               \
            gh = ratio > 0 ? ratio : (gq > 0 ? (gq < (T)65536 ? (o2c_int)gq : 65536) : 0); \
            gq = O2C_M(T, ceil)(rw / (T)PW);                               \
            gw = ratio > 0 ? ratio : (gq > 0 ? (gq < (T)65536 ? (o2c_int)gq : 65536) : 0); \
            for (iy = 0; iy < gh; iy++) {                                  \
                const T yy = sh + (T)ph * bh + ((T)iy + (T)0.5) * bh / (T)gh; \
                for (ix = 0; ix < gw; ix++) {                              \
                    T x = sw + (T)pw * bw + ((T)ix + (T)0.5) * bw / (T)gw, y = yy; \
                    T v = 0;                                               \
                    if (y >= -1 && y <= (T)H && x >= -1 && x <= (T)W) {    \
                        o2c_int y0, x0, y1, x1;                            \
                        T ly, lx, hy, hx, v1, v2, v3, v4;                  \
                        if (y < 0) y = 0;                                  \
                        if (x < 0) x = 0;                                  \
                        y0 = (o2c_int)y;                                   \
                        x0 = (o2c_int)x;                                   \
                        if (y0 >= H - 1) { y0 = y1 = H - 1; y = (T)y0; } else y1 = y0 + 1; \
                        if (x0 >= W - 1) { x0 = x1 = W - 1; x = (T)x0; } else x1 = x0 + 1; \
                        ly = y - (T)y0;                                    \
                        lx = x - (T)x0;                                    \
                        hy = 1 - ly;                                       \
                        hx = 1 - lx;                                       \
                        v1 = hy * hx * xp[y0 * W + x0];                    \
                        v2 = hy * lx * xp[y0 * W + x1];                    \
                        v3 = ly * hx * xp[y1 * W + x0];                    \
                        v4 = ly * lx * xp[y1 * W + x1];                    \
                        if (mx) {                                          \
                            v = v1;                                        \
                            if (v2 > v) v = v2;                            \
                            if (v3 > v) v = v3;                            \
                            if (v4 > v) v = v4;                            \
                        } else {                                           \
                            v = v1 + v2 + v3 + v4;                         \
                        }                                                  \
                    }                                                      \
                    if (!mx) acc += v;                                     \
                    else if (first || v > acc) acc = v;                    \
                    first = 0;                                             \
                }                                                          \
            }                                                              \
            if (!mx) acc /= (T)(gh * gw > 1 ? gh * gw : 1);                \
            Y[i] = acc;                                                    \
        }                                                                  \
    }

/* DeformConv (2-D): Y[n, m, i, j] = B[m] + the sum over the input
 * channels of m's group and the kernel taps of W * mask * X sampled
 * bilinearly (zero outside) at the tap's position plus its offset.
 * Index space: output elements.
 *   x[0] X (N, C, H, W), x[1] W (M, C/group, KH, KW), x[2] offsets
 *   (N, OG*KH*KW*2, OH, OW), x[3] B (M) or NULL, x[4] mask
 *   (N, OG*KH*KW, OH, OW) or NULL
 *   O2C_DC_* */
#define O2C_DEFORM_CONV_DEF(NAME, T)                                       \
    O2C_KERNEL(NAME)                                                       \
    {                                                                      \
        const T *X = (const T *)p->x[0];                                   \
        const T *WT = (const T *)p->x[1];                                  \
        const T *OF = (const T *)p->x[2];                                  \
        const T *BS = (const T *)p->x[3];                                  \
        const T *MK = (const T *)p->x[4];                                  \
        T *Y = (T *)p->y[0];                                               \
        const o2c_int C = p->k[O2C_DC_C], H = p->k[O2C_DC_H], W = p->k[O2C_DC_W]; \
        const o2c_int M = p->k[O2C_DC_M], OH = p->k[O2C_DC_OH], OW = p->k[O2C_DC_OW]; \
        const o2c_int KH = p->k[O2C_DC_KH], KW = p->k[O2C_DC_KW];          \
        const o2c_int SH = p->k[O2C_DC_SH], SW = p->k[O2C_DC_SW], DH = p->k[O2C_DC_DH], DW = p->k[O2C_DC_DW]; \
        const o2c_int PH = p->k[O2C_DC_PH], PW = p->k[O2C_DC_PW];          \
        const o2c_int G = p->k[O2C_DC_GROUP], OG = p->k[O2C_DC_OGROUP];    \
        const o2c_int icg = C / G, ocg = M / G, icog = C / OG, K = KH * KW, S = OH * OW; \
        O2C_FOR(i) {                                                       \
            const o2c_int j = i % OW, oi = (i / OW) % OH, m = (i / S) % M, n = i / (S * M); \
            const o2c_int g = m / ocg, pos = oi * OW + j;                  \
            T acc = BS ? BS[m] : (T)0;                                     \
            o2c_int ic;                                                    \
            for (ic = g * icg; ic < (g + 1) * icg; ic++) {                 \
                const o2c_int og = ic / icog;                              \
                const T *xp = X + (n * C + ic) * H * W;                    \
                const T *wp = WT + (m * icg + (ic - g * icg)) * K;         \
                o2c_int k;                                                 \
                for (k = 0; k < K; k++) {                                  \
                    const o2c_int kh = k / KW, kw = k - kh * KW;           \
                    const T *op = OF + ((n * OG + og) * K * 2 + k * 2) * S + pos; \
                    const T y = (T)(oi * SH - PH + kh * DH) + op[0];       \
                    const T x = (T)(j * SW - PW + kw * DW) + op[S];        \
                    const T mk = MK ? MK[((n * OG + og) * K + k) * S + pos] : (T)1; \
                    T v = 0;                                               \
                    if (y > -1 && y < (T)H && x > -1 && x < (T)W) {        \
                        const T fy = O2C_M(T, floor)(y), fx = O2C_M(T, floor)(x); \
                        const T ty = y - fy, tx = x - fx;                  \
                        const o2c_int y0 = (o2c_int)fy, x0 = (o2c_int)fx;  \
                        if (y0 >= 0 && x0 >= 0) v += (1 - ty) * (1 - tx) * xp[y0 * W + x0]; \
                        if (y0 >= 0 && x0 + 1 < W) v += (1 - ty) * tx * xp[y0 * W + x0 + 1]; \
                        if (y0 + 1 < H && x0 >= 0) v += ty * (1 - tx) * xp[(y0 + 1) * W + x0]; \
                        if (y0 + 1 < H && x0 + 1 < W) v += ty * tx * xp[(y0 + 1) * W + x0 + 1]; \
                    }                                                      \
                    acc += v * wp[k] * mk;                                 \
                }                                                          \
            }                                                              \
            Y[i] = acc;                                                    \
        }                                                                  \
    }

/*@ o2c_gs_reflect_f32 */
O2C_GS_REFLECT_DEF(o2c_gs_reflect_f32, float)
/*@ o2c_gs_reflect_f64 */
O2C_GS_REFLECT_DEF(o2c_gs_reflect_f64, double)
/*@ o2c_gs_taps_f32 needs o2c_gs_reflect_f32 */
O2C_GS_TAPS_DEF(o2c_gs_taps_f32, float, o2c_gs_reflect_f32)
/*@ o2c_gs_taps_f64 needs o2c_gs_reflect_f64 */
O2C_GS_TAPS_DEF(o2c_gs_taps_f64, double, o2c_gs_reflect_f64)
/*@ o2c_gridsample_f32 needs o2c_gs_taps_f32 params O2C_GS */
O2C_GRIDSAMPLE_DEF(o2c_gridsample_f32, float, o2c_gs_taps_f32)
/*@ o2c_gridsample_f64 needs o2c_gs_taps_f64 params O2C_GS */
O2C_GRIDSAMPLE_DEF(o2c_gridsample_f64, double, o2c_gs_taps_f64)
/*@ o2c_gridsample_nearest_f32 needs o2c_gs_taps_f32 params O2C_GS */
O2C_GRIDSAMPLE_NEAREST_DEF(o2c_gridsample_nearest_f32, float, o2c_gs_taps_f32)
/*@ o2c_gridsample_nearest_f64 needs o2c_gs_taps_f64 params O2C_GS */
O2C_GRIDSAMPLE_NEAREST_DEF(o2c_gridsample_nearest_f64, double, o2c_gs_taps_f64)

/*@ o2c_affine_grid_f32 params O2C_AG */
O2C_AFFINE_GRID_DEF(o2c_affine_grid_f32, float)
/*@ o2c_affine_grid_f64 params O2C_AG */
O2C_AFFINE_GRID_DEF(o2c_affine_grid_f64, double)

/*@ o2c_col2im_f32 params O2C_C2I */
O2C_COL2IM_DEF(o2c_col2im_f32, float)
/*@ o2c_col2im_f64 params O2C_C2I */
O2C_COL2IM_DEF(o2c_col2im_f64, double)
/*@ o2c_col2im_i8 params O2C_C2I */
O2C_COL2IM_DEF(o2c_col2im_i8, int8_t)
/*@ o2c_col2im_i16 params O2C_C2I */
O2C_COL2IM_DEF(o2c_col2im_i16, int16_t)
/*@ o2c_col2im_i32 params O2C_C2I */
O2C_COL2IM_DEF(o2c_col2im_i32, int32_t)
/*@ o2c_col2im_i64 params O2C_C2I */
O2C_COL2IM_DEF(o2c_col2im_i64, int64_t)
/*@ o2c_col2im_u8 params O2C_C2I */
O2C_COL2IM_DEF(o2c_col2im_u8, uint8_t)
/*@ o2c_col2im_u16 params O2C_C2I */
O2C_COL2IM_DEF(o2c_col2im_u16, uint16_t)
/*@ o2c_col2im_u32 params O2C_C2I */
O2C_COL2IM_DEF(o2c_col2im_u32, uint32_t)
/*@ o2c_col2im_u64 params O2C_C2I */
O2C_COL2IM_DEF(o2c_col2im_u64, uint64_t)

/*@ o2c_crop_pad params O2C_CROP */
/* CenterCropPad (and any shifted window of the input): output element y
 * reads input element y - SHIFT, zero bytes where that is outside the
 * input; any element type. Index space: output elements.
 *   O2C_CROP_* */
O2C_KERNEL(o2c_crop_pad)
{
    const unsigned char *X = (const unsigned char *)p->x[0];
    unsigned char *Y = (unsigned char *)p->y[0];
    const o2c_int r = p->k[O2C_CROP_RANK], es = p->k[O2C_CROP_ESIZE];
    const o2c_int *yd = p->k + O2C_CROP_YDIMS, *xd = p->k + O2C_CROP_XDIMS, *sh = p->k + O2C_CROP_SHIFT;
    O2C_FOR(i) {
        o2c_int q = i, off = 0, xs = 1, d;
        int out = 0;
        for (d = r - 1; d >= 0; d--) {
            const o2c_int c = q % yd[d] - sh[d];
            q /= yd[d];
            if (c < 0 || c >= xd[d]) out = 1;
            off += c * xs;
            xs *= xd[d];
        }
        if (out) memset(Y + i * es, 0, (size_t)es);
        else memcpy(Y + i * es, X + off * es, (size_t)es);
    }
}

/*@ o2c_roialign_f32 params O2C_ROI */
O2C_ROIALIGN_DEF(o2c_roialign_f32, float)
/*@ o2c_roialign_f64 params O2C_ROI */
O2C_ROIALIGN_DEF(o2c_roialign_f64, double)

/*@ o2c_maxunpool params O2C_UNPOOL */
/* MaxUnpool, any element type: Y = zeros, then Y[I[e]] = X[e] for every
 * element e in order (the last one wins), the flat index I[e] read in the
 * unpadded output shape (IDIMS) and placed at the same coordinates of Y.
 * Indices outside are skipped. Index space: one (sequential: updates may
 * collide).
 *   x[0] X, x[1] I (int64); y[0] Y
 *   O2C_UNPOOL_* */
O2C_KERNEL(o2c_maxunpool)
{
    const unsigned char *X = (const unsigned char *)p->x[0];
    const int64_t *IX = (const int64_t *)p->x[1];
    unsigned char *Y = (unsigned char *)p->y[0];
    const o2c_int es = p->k[O2C_UNPOOL_ESIZE], nx = p->k[O2C_UNPOOL_NX], r = p->k[O2C_UNPOOL_RANK];
    const o2c_int *id = p->k + O2C_UNPOOL_IDIMS, *yd = p->k + O2C_UNPOOL_YDIMS;
    o2c_int ni = 1, ny = 1, d;
    for (d = 0; d < r; d++) {
        ni *= id[d];
        ny *= yd[d];
    }
    O2C_FOR(i) {
        o2c_int e;
        (void)i;
        memset(Y, 0, (size_t)(ny * es));
        for (e = 0; e < nx; e++) {
            o2c_int q = IX[e], off = 0, ys = 1;
            if (q < 0 || q >= ni) continue;
            for (d = r - 1; d >= 0; d--) {
                off += (q % id[d]) * ys;
                q /= id[d];
                ys *= yd[d];
            }
            memcpy(Y + off * es, X + e * es, (size_t)es);
        }
    }
}

/*@ o2c_deform_conv_f32 params O2C_DC */
O2C_DEFORM_CONV_DEF(o2c_deform_conv_f32, float)
/*@ o2c_deform_conv_f64 params O2C_DC */
O2C_DEFORM_CONV_DEF(o2c_deform_conv_f64, double)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_IMAGE(K, F) K(o2c_gridsample_f32, F) K(o2c_gridsample_f64, F)         \
    K(o2c_gridsample_nearest_f32, F) K(o2c_gridsample_nearest_f64, F)                  \
    K(o2c_affine_grid_f32, F) K(o2c_affine_grid_f64, F)                                \
    K(o2c_col2im_f32, F) K(o2c_col2im_f64, F) K(o2c_col2im_i8, F) K(o2c_col2im_i16, F)       \
    K(o2c_col2im_i32, F) K(o2c_col2im_i64, F) K(o2c_col2im_u8, F) K(o2c_col2im_u16, F)       \
    K(o2c_col2im_u32, F) K(o2c_col2im_u64, F) K(o2c_crop_pad, F)                          \
    K(o2c_roialign_f32, F) K(o2c_roialign_f64, F) K(o2c_maxunpool, F)                     \
    K(o2c_deform_conv_f32, F) K(o2c_deform_conv_f64, F)
