/* Attention core (the fused op onnx2c.FusedAttention, made by the fuse_attention
 * pass; shape rule and lowering in compiler/ops/attention.c):
 *     Y = softmax(scale * Q K^T + mask, last axis) V
 * with Q [batch.., Sq, D], K [batch.., Skv, D], V [batch.., Skv, Dv],
 * mask broadcast to [batch.., Sq, Skv], Y [batch.., Sq, Dv], every tensor
 * read and written through strides (so transposes of the inputs and of
 * the output cost nothing, and batch dims broadcast with stride 0).
 *
 * o2c_attention_T: index space: the query rows (product of the batch dims
 * times Sq). Each row computes its scores a tile of O2C_ATT_TILE keys at a
 * time into a local array, keeps the running maximum and exp-sum (the
 * online softmax) and accumulates the weighted V rows in its own output
 * row, rescaled when the maximum grows: no score matrix is stored.
 * Parameters: runtime/c/params/attention.h (x[O2C_ATT_X*], k[O2C_ATT_*],
 * f[O2C_ATT_F*]).
 * Each stride block (element strides, 0 on a broadcast dim) holds the
 * strides of the NB batch dims in its first NB slots, then the row stride
 * (slot O2C_ATT_ROW) and the column stride (O2C_ATT_COL). */

#define O2C_ATT_TILE 32

#define O2C_ATTENTION(NAME, TY)                                                          \
    O2C_KERNEL(NAME)                                                                     \
    {                                                                                    \
        typedef TY T;                                                                    \
        const T *Q = (const T *)p->x[O2C_ATT_XQ];                                        \
        const T *K = (const T *)p->x[O2C_ATT_XK];                                        \
        const T *V = (const T *)p->x[O2C_ATT_XV];                                        \
        const T *M = (const T *)p->x[O2C_ATT_XMASK];                                     \
        T *Y = (T *)p->y[0];                                                             \
        const int64_t *k = p->k;                                                         \
        const int64_t nb = k[O2C_ATT_NB], Sq = k[O2C_ATT_SQ], Skv = k[O2C_ATT_SKV];      \
        const int64_t D = k[O2C_ATT_D], Dv = k[O2C_ATT_DV];                              \
        const int64_t *qs = k + O2C_ATT_QS, *ks = k + O2C_ATT_KS, *vs = k + O2C_ATT_VS;  \
        const int64_t *ms = k + O2C_ATT_MS, *ys = k + O2C_ATT_YS;                        \
        const T scale = O2C_PF(TY, p, O2C_ATT_FSCALE);                                  \
        O2C_FOR(i) {                                                                     \
            const int64_t r = i % Sq;                                                    \
            int64_t b = i / Sq, qo = r * qs[O2C_ATT_ROW], ko = 0, vo = 0;                \
            int64_t mo = r * ms[O2C_ATT_ROW], yo = r * ys[O2C_ATT_ROW], d, c, j0, t;     \
            for (d = nb - 1; d >= 0; d--) {                                              \
                const int64_t bd = k[O2C_ATT_BDIMS + d], bi = b % bd;                    \
                b /= bd;                                                                 \
                qo += bi * qs[d]; ko += bi * ks[d]; vo += bi * vs[d];                    \
                mo += bi * ms[d]; yo += bi * ys[d];                                      \
            }                                                                            \
            const T *q = Q + qo;                                                         \
            T *y = Y + yo;                                                               \
            const int64_t qc = qs[O2C_ATT_COL], kc = ks[O2C_ATT_COL];                    \
            const int64_t vc = vs[O2C_ATT_COL], yc = ys[O2C_ATT_COL];                    \
            for (c = 0; c < Dv; c++) y[c * yc] = 0;                                      \
            T mx = -INFINITY, sc[O2C_ATT_TILE];                                          \
            T l = 0;                                                                     \
            for (j0 = 0; j0 < Skv; j0 += O2C_ATT_TILE) {                                 \
                const int64_t nt = Skv - j0 < O2C_ATT_TILE ? Skv - j0 : O2C_ATT_TILE;    \
                T tm = -INFINITY;                                                        \
                for (t = 0; t < nt; t++) {                                               \
                    const T *kr = K + ko + (j0 + t) * ks[O2C_ATT_ROW];                   \
                    T s = 0;                                                             \
                    for (c = 0; c < D; c++) s += q[c * qc] * kr[c * kc];                 \
                    s *= scale;                                                          \
                    if (M) s += M[mo + (j0 + t) * ms[O2C_ATT_COL]];                      \
                    sc[t] = s;                                                           \
                    if (s > tm) tm = s;                                                  \
                }                                                                        \
                if (tm > mx) { /* a new maximum: rescale what was summed so far */       \
                    if (l > 0) {                                                         \
                        const T f = O2C_M(TY, exp)(mx - tm);                                 \
                        l *= f;                                                          \
                        for (c = 0; c < Dv; c++) y[c * yc] *= f;                         \
                    }                                                                    \
                    mx = tm;                                                             \
                }                                                                        \
                for (t = 0; t < nt; t++) {                                               \
                    const T e = O2C_M(TY, exp)(sc[t] - mx);                                 \
                    const T *vr = V + vo + (j0 + t) * vs[O2C_ATT_ROW];                   \
                    l += e;                                                              \
                    for (c = 0; c < Dv; c++) y[c * yc] += e * vr[c * vc];                \
                }                                                                        \
            }                                                                            \
            const T inv = 1 / l;                                                         \
            for (c = 0; c < Dv; c++) y[c * yc] *= inv;                                   \
        }                                                                                \
    }

/*@ o2c_attention_f32 */
O2C_ATTENTION(o2c_attention_f32, float)
/*@ o2c_attention_f64 */
O2C_ATTENTION(o2c_attention_f64, double)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_ATTENTION(K) K(o2c_attention_f32) K(o2c_attention_f64)
