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

/* The standard ONNX Attention (opset 23+; compiler/ops/attention.c) as
 * onnx's reference computes it, with K and V the present rows (past_key
 * rows first, then K's):
 *     s = (Q * sqrt(scale)) (K * sqrt(scale))^T     [softcap: c tanh(s / c)]
 *     x = s + bias   (attn_mask: bool -> 0 / -inf, float added; keys past
 *                     the mask's last dim, causal, window and padding: -inf)
 *     p = softmax(x) in softmax_precision; a row whose bias is -inf
 *         everywhere is all zero
 *     Y = p V
 * o2c_sdpa_T: index space: the query rows (batch x heads x rows); y[0] Y,
 * y[1] the row's scores (B x HQ x SQ x keys: scratch, or qk_matmul_output,
 * which then holds the probabilities, mode 3). With O2C_SDPA_STOP 0, 1 or
 * 2 it writes only the scores of that qk_matmul_output_mode into y[1].
 * With O2C_SDPA_FLEX (FlexAttention): no masks, no zero-row rules, and the
 * probabilities times V in the softmax precision (not rounded to the data
 * type before the product).
 * float16/bfloat16 data computes on float32 stand-ins rounded to the
 * 16-bit type after each step (O2C_SDPA_HALF, O2C_SDPA_SMHALF), sums of
 * products in float32; softmax sums accumulate in float32 for float16 and
 * round after each add for bfloat16 (numpy and ml_dtypes, as the reference).
 * o2c_sdpa_cat_T: present_key / present_value, index space: its elements.
 * o2c_rotary_T: RotaryEmbedding, index space: batch x rows x heads; each
 * rotates the first RD values of its head (pairs (j, j + RD/2), or (2j,
 * 2j + 1) interleaved) by the cache row of its position and copies the rest. */

/* x rounded to float16 (h 1) or bfloat16 (h 2), or x itself (h 0) */
#ifndef O2C_ROUND16
#define O2C_ROUND16(h, x) ((h) == 1 ? o2c_h2f(o2c_f2h(x)) : (h) == 2 ? o2c_bf2f(o2c_f2bf(x)) : (x))
#endif
#define O2C_NOROUND(h, x) ((void)(h), (x))

#define O2C_SDPA(NAME, TY, RND)                                                          \
    O2C_KERNEL(NAME)                                                                     \
    {                                                                                    \
        typedef TY T;                                                                    \
        const T *Q = (const T *)p->x[O2C_SDPA_XQ], *K = (const T *)p->x[O2C_SDPA_XK];    \
        const T *V = (const T *)p->x[O2C_SDPA_XV];                                       \
        const T *PK = (const T *)p->x[O2C_SDPA_XPK], *PV = (const T *)p->x[O2C_SDPA_XPV]; \
        const T *MF = (const T *)p->x[O2C_SDPA_XMASK];                                   \
        const uint8_t *MB = (const uint8_t *)p->x[O2C_SDPA_XMASK];                       \
        const int64_t *NP = (const int64_t *)p->x[O2C_SDPA_XNONPAD];                     \
        T *Y = (T *)p->y[0], *S = (T *)p->y[1];                                          \
        const o2c_int *k = p->k;                                                         \
        const o2c_int Hq = k[O2C_SDPA_HQ], Hkv = k[O2C_SDPA_HKV], Sq = k[O2C_SDPA_SQ];   \
        const o2c_int P = k[O2C_SDPA_PAST], Tk = P + k[O2C_SDPA_SKV];                    \
        const o2c_int D = k[O2C_SDPA_D], Dv = k[O2C_SDPA_DV];                            \
        const o2c_int *qs = k + O2C_SDPA_QS, *ks = k + O2C_SDPA_KS, *vs = k + O2C_SDPA_VS; \
        const o2c_int *ys = k + O2C_SDPA_YS, *ms = k + O2C_SDPA_MS;                      \
        const o2c_int mcols = k[O2C_SDPA_MCOLS], mbool = k[O2C_SDPA_MBOOL];              \
        const o2c_int causal = k[O2C_SDPA_CAUSAL], left = k[O2C_SDPA_LEFT];              \
        const o2c_int right = k[O2C_SDPA_RIGHT], stop = k[O2C_SDPA_STOP];                \
        const o2c_int h16 = k[O2C_SDPA_HALF], hs = k[O2C_SDPA_SMHALF], flex = k[O2C_SDPA_FLEX]; \
        const T sc = O2C_PF(TY, p, O2C_SDPA_FSCALE), cap = O2C_PF(TY, p, O2C_SDPA_FCAP); \
        O2C_FOR(i) {                                                                     \
            const o2c_int qi = i % Sq, h = (i / Sq) % Hq, b = i / (Sq * Hq);             \
            const o2c_int hk = h / (Hq / Hkv);                                           \
            const T *q = Q + b * qs[0] + h * qs[1] + qi * qs[2];                         \
            T *s = S + i * Tk;                                                           \
            /* keys before the query block: the past rows, or (external cache) */        \
            const o2c_int pos = qi + (NP ? NP[b] - Sq : P);                              \
            o2c_int j, c, live = 0, nan = 0;                                             \
            T mx = -INFINITY;                                                            \
            for (j = 0; j < Tk; j++) {                                                   \
                const T *kr = j < P ? PK + ((b * Hkv + hk) * P + j) * D                  \
                                    : K + b * ks[0] + hk * ks[1] + (j - P) * ks[2];      \
                T x = 0, bias = 0;                                                       \
                for (c = 0; c < D; c++) x += RND(h16, q[c] * sc) * RND(h16, kr[c] * sc); \
                x = RND(h16, x);                                                         \
                if (stop == 0) { s[j] = x; continue; }                                   \
                if (cap > 0) x = RND(h16, RND(h16, O2C_M(TY, tanh)(RND(h16, x / cap))) * cap); \
                if (stop == 1) { s[j] = x; continue; }                                   \
                if (MB) {                                                                \
                    const o2c_int mo = b * ms[0] + h * ms[1] + qi * ms[2] + j;           \
                    if (j >= mcols) bias = -INFINITY;                                    \
                    else if (mbool) bias = MB[mo] ? (T)0 : (T)-INFINITY;                 \
                    else bias = MF[mo];                                                  \
                }                                                                        \
                if (causal && j > pos) bias += -INFINITY;                                \
                if (left >= 0 && pos - j > left) bias += -INFINITY;                      \
                if (right >= 0 && j - pos > right) bias += -INFINITY;                    \
                if (NP && j >= NP[b]) bias += -INFINITY;                                 \
                if (!(bias == -INFINITY)) live = 1;                                      \
                x = RND(h16, x + bias);                                                  \
                if (stop == 2) { s[j] = x; continue; }                                   \
                x = RND(hs, x);                                                          \
                s[j] = x;                                                                \
                if (x != x) nan = 1;                                                     \
                else if (x > mx) mx = x;                                                 \
            }                                                                            \
            if (stop >= 0) continue;                                                     \
            {                                                                            \
                /* softmax; a row of -inf subtracts 0, a NaN makes every value NaN */    \
                const T m = nan ? (T)NAN : mx == -INFINITY && !flex ? (T)0 : mx;         \
                T sum = 0;                                                               \
                for (j = 0; j < Tk; j++) {                                               \
                    const T e = RND(hs, O2C_M(TY, exp)(RND(hs, s[j] - m)));              \
                    s[j] = e;                                                            \
                    sum = hs == 2 ? RND(hs, sum + e) : sum + e;                          \
                }                                                                        \
                sum = RND(hs, sum);                                                      \
                if (sum == 0 && !flex) sum = 1;                                          \
                for (j = 0; j < Tk; j++) {                                               \
                    const T pj = RND(hs, s[j] / sum);                                    \
                    s[j] = !live ? (T)0 : flex ? pj : RND(h16, pj);                      \
                }                                                                        \
            }                                                                            \
            for (c = 0; c < Dv; c++) {                                                   \
                T acc = 0;                                                               \
                for (j = 0; j < Tk; j++) {                                               \
                    const T *vr = j < P ? PV + ((b * Hkv + hk) * P + j) * Dv             \
                                        : V + b * vs[0] + hk * vs[1] + (j - P) * vs[2];  \
                    acc += s[j] * (flex ? RND(hs, vr[c]) : vr[c]);                       \
                }                                                                        \
                Y[b * ys[0] + h * ys[1] + qi * ys[2] + c] = RND(h16, flex ? RND(hs, acc) : acc); \
            }                                                                            \
        }                                                                                \
    }

#define O2C_SDPA_CAT(NAME, TY)                                                           \
    O2C_KERNEL(NAME)                                                                     \
    {                                                                                    \
        const TY *X0 = (const TY *)p->x[O2C_SDPA_CAT_XPAST];                             \
        const TY *X1 = (const TY *)p->x[O2C_SDPA_CAT_XNEW];                              \
        TY *Y = (TY *)p->y[0];                                                           \
        const o2c_int H = p->k[O2C_SDPA_CAT_H], P = p->k[O2C_SDPA_CAT_PAST];             \
        const o2c_int S = p->k[O2C_SDPA_CAT_S], D = p->k[O2C_SDPA_CAT_D];                \
        const o2c_int *ns = p->k + O2C_SDPA_CAT_NS;                                      \
        O2C_FOR(i) {                                                                     \
            const o2c_int c = i % D, t = (i / D) % (P + S), bh = i / (D * (P + S));      \
            const o2c_int h = bh % H, b = bh / H;                                        \
            Y[i] = t < P ? X0[(bh * P + t) * D + c] : X1[b * ns[0] + h * ns[1] + (t - P) * ns[2] + c]; \
        }                                                                                \
    }

#define O2C_ROTARY(NAME, TY, RND)                                                           \
    O2C_KERNEL(NAME)                                                                     \
    {                                                                                    \
        typedef TY T;                                                                    \
        const T *X = (const T *)p->x[O2C_ROT_XX];                                        \
        const T *C = (const T *)p->x[O2C_ROT_XCOS], *SN = (const T *)p->x[O2C_ROT_XSIN]; \
        const int64_t *POS = (const int64_t *)p->x[O2C_ROT_XPOS];                        \
        T *Y = (T *)p->y[0];                                                             \
        const o2c_int S = p->k[O2C_ROT_S], H = p->k[O2C_ROT_H], HD = p->k[O2C_ROT_HD];   \
        const o2c_int RD = p->k[O2C_ROT_RD], half = RD / 2, inter = p->k[O2C_ROT_INTER]; \
        const o2c_int *xs = p->k + O2C_ROT_XS, *cs = p->k + O2C_ROT_CS;                  \
        const o2c_int h16 = p->k[O2C_ROT_HALF];                                          \
        O2C_FOR(i) {                                                                     \
            const o2c_int h = i % H, r = (i / H) % S, b = i / (H * S);                   \
            const o2c_int o = b * xs[0] + r * xs[1] + h * xs[2];                         \
            const T *x = X + o;                                                          \
            T *y = Y + o;                                                                \
            o2c_int cr = b * cs[0] + r * cs[1], j;                                       \
            int bad = 0;                                                                 \
            if (POS) {                                                                   \
                const o2c_int ps = POS[b * S + r];                                       \
                bad = ps < 0 || ps >= p->k[O2C_ROT_NPOS];                                \
                cr = bad ? 0 : ps * half;                                                \
            }                                                                            \
            for (j = 0; j < half; j++) {                                                 \
                const o2c_int j1 = inter ? 2 * j : j, j2 = inter ? 2 * j + 1 : j + half; \
                const T cv = bad ? (T)NAN : C[cr + j], sv = bad ? (T)NAN : SN[cr + j];   \
                const T x1 = x[j1], x2 = x[j2];                                          \
                y[j1] = RND(h16, RND(h16, cv * x1) - RND(h16, sv * x2));                 \
                y[j2] = RND(h16, RND(h16, sv * x1) + RND(h16, cv * x2));                 \
            }                                                                            \
            for (j = RD; j < HD; j++) y[j] = x[j];                                       \
        }                                                                                \
    }

#define O2C_ATTENTION(NAME, TY)                                                          \
    O2C_KERNEL(NAME)                                                                     \
    {                                                                                    \
        typedef TY T;                                                                    \
        const T *Q = (const T *)p->x[O2C_ATT_XQ];                                        \
        const T *K = (const T *)p->x[O2C_ATT_XK];                                        \
        const T *V = (const T *)p->x[O2C_ATT_XV];                                        \
        const T *M = (const T *)p->x[O2C_ATT_XMASK];                                     \
        T *Y = (T *)p->y[0];                                                             \
        const o2c_int *k = p->k;                                                         \
        const o2c_int nb = k[O2C_ATT_NB], Sq = k[O2C_ATT_SQ], Skv = k[O2C_ATT_SKV];      \
        const o2c_int D = k[O2C_ATT_D], Dv = k[O2C_ATT_DV];                              \
        const o2c_int *qs = k + O2C_ATT_QS, *ks = k + O2C_ATT_KS, *vs = k + O2C_ATT_VS;  \
        const o2c_int *ms = k + O2C_ATT_MS, *ys = k + O2C_ATT_YS;                        \
        const T scale = O2C_PF(TY, p, O2C_ATT_FSCALE);                                  \
        O2C_FOR(i) {                                                                     \
            const o2c_int r = i % Sq;                                                    \
            o2c_int b = i / Sq, qo = r * qs[O2C_ATT_ROW], ko = 0, vo = 0;                \
            o2c_int mo = r * ms[O2C_ATT_ROW], yo = r * ys[O2C_ATT_ROW], d, c, j0, t;     \
            for (d = nb - 1; d >= 0; d--) {                                              \
                const o2c_int bd = k[O2C_ATT_BDIMS + d], bi = b % bd;                    \
                b /= bd;                                                                 \
                qo += bi * qs[d]; ko += bi * ks[d]; vo += bi * vs[d];                    \
                mo += bi * ms[d]; yo += bi * ys[d];                                      \
            }                                                                            \
            const T *q = Q + qo;                                                         \
            T *y = Y + yo;                                                               \
            const o2c_int qc = qs[O2C_ATT_COL], kc = ks[O2C_ATT_COL];                    \
            const o2c_int vc = vs[O2C_ATT_COL], yc = ys[O2C_ATT_COL];                    \
            for (c = 0; c < Dv; c++) y[c * yc] = 0;                                      \
            T mx = -INFINITY, sc[O2C_ATT_TILE];                                          \
            T l = 0;                                                                     \
            for (j0 = 0; j0 < Skv; j0 += O2C_ATT_TILE) {                                 \
                const o2c_int nt = Skv - j0 < O2C_ATT_TILE ? Skv - j0 : O2C_ATT_TILE;    \
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

/*@ o2c_attention_blk_f32 needs o2c_vexp_f32 params O2C_ATT split */
/* FusedAttention on the C target: the query rows O2C_ATT_RB at a time (the
 * index space: batches x ceil(Sq / RB) blocks), both products register
 * tiled like the GEMM kernels (O2C_ATT_MR rows x O2C_ATT_NR columns of
 * accumulators, each loaded value used MR or NR times). A block packs into
 * y[1] its batch's keys as column panels (Kp: for each NR keys, D rows of
 * NR values, zero past Skv), the values (Vp: SkvP x DvP, zero past Skv and
 * Dv; SkvP and DvP rounded up to NR) and its query rows scaled and
 * transposed (Qt: D x RB, zero past the last row); then the scores
 * transposed, St = (Qt' Kp)' (SkvP x RB: a key's scores of the block's rows
 * contiguous), the mask added and the softmax by rows, run across the rows
 * (every loop vectorizes; o2c_vexp_f32; the padded keys set to 0), and Y =
 * St' Vp divided by each row's sum, through Y's strides. The operands of
 * both products are contiguous along the tile's rows and columns (strided
 * ones made GCC's loop interchange put the sum innermost, the accumulators
 * in memory: 18 GFLOP/s). y[1]: O2C_ATT_BLK_WORDS floats. Each score sums
 * over D in order and each output over the keys in order: the values of
 * o2c_attention_f32 (the reference) up to rounding (fused multiply-adds,
 * the exponential). Transposes of Q, K, V and Y are folded into strides. */
O2C_KERNEL(o2c_attention_blk_f32)
{
    const float *Q = (const float *)p->x[O2C_ATT_XQ], *K = (const float *)p->x[O2C_ATT_XK];
    const float *V = (const float *)p->x[O2C_ATT_XV], *M = (const float *)p->x[O2C_ATT_XMASK];
    float *Y = (float *)p->y[0];
    const o2c_int *k = p->k;
    const o2c_int nb = k[O2C_ATT_NB], Sq = k[O2C_ATT_SQ], Skv = k[O2C_ATT_SKV];
    const o2c_int D = k[O2C_ATT_D], Dv = k[O2C_ATT_DV], NBLK = (Sq + O2C_ATT_RB - 1) / O2C_ATT_RB;
    const o2c_int SkvP = O2C_ATT_UP(Skv), DvP = O2C_ATT_UP(Dv);
    const o2c_int *qs = k + O2C_ATT_QS, *ks = k + O2C_ATT_KS, *vs = k + O2C_ATT_VS;
    const o2c_int *ms = k + O2C_ATT_MS, *ys = k + O2C_ATT_YS;
    const float scale = p->ff[O2C_ATT_FSCALE];
    float *O2C_RESTRICT Kp = (float *)p->y[1];
    float *O2C_RESTRICT Vp = Kp + SkvP * D;
    float *O2C_RESTRICT Qt = Vp + SkvP * DvP;
    float *O2C_RESTRICT St = Qt + O2C_ATT_RB * D;
    float *O2C_RESTRICT mx = St + O2C_ATT_RB * SkvP;   /* the rows' maxima, then inverse sums */
    float sum[O2C_ATT_RB];
    O2C_FOR(t) {
        o2c_int b = t / NBLK, qo = 0, ko = 0, vo = 0, mo = 0, yo = 0;
        const o2c_int r0 = t % NBLK * O2C_ATT_RB, nrows = Sq - r0 < O2C_ATT_RB ? Sq - r0 : O2C_ATT_RB;
        for (o2c_int d = nb - 1; d >= 0; d--) {
            const o2c_int bd = k[O2C_ATT_BDIMS + d], bi = b % bd;
            b /= bd;
            qo += bi * qs[d]; ko += bi * ks[d]; vo += bi * vs[d];
            mo += bi * ms[d]; yo += bi * ys[d];
        }
        /* the packed keys, values and query rows */
        for (o2c_int jt = 0; jt < SkvP; jt += O2C_ATT_NR)
            for (o2c_int c = 0; c < D; c++) {
                float *kp = Kp + jt * D + c * O2C_ATT_NR;
                for (o2c_int j = 0; j < O2C_ATT_NR; j++)
                    kp[j] = jt + j < Skv ? K[ko + (jt + j) * ks[O2C_ATT_ROW] + c * ks[O2C_ATT_COL]] : 0.0f;
            }
        for (o2c_int j = 0; j < SkvP; j++)
            for (o2c_int c = 0; c < DvP; c++)
                Vp[j * DvP + c] = j < Skv && c < Dv ? V[vo + j * vs[O2C_ATT_ROW] + c * vs[O2C_ATT_COL]] : 0.0f;
        for (o2c_int c = 0; c < D; c++)
            for (o2c_int i = 0; i < O2C_ATT_RB; i++)
                Qt[c * O2C_ATT_RB + i] = i < nrows ? scale * Q[qo + (r0 + i) * qs[O2C_ATT_ROW] + c * qs[O2C_ATT_COL]] : 0.0f;
        /* St = (Qt' Kp)', MR x NR tiles (every row of the block: those past
         * its end score 0, and no value the softmax reads is left unset) */
        for (o2c_int jt = 0; jt < SkvP; jt += O2C_ATT_NR)
            for (o2c_int i0 = 0; i0 < O2C_ATT_RB; i0 += O2C_ATT_MR) {
                float acc[O2C_ATT_MR][O2C_ATT_NR];   /* registers: loops of constant length */
                const float *kp = Kp + jt * D, *qc = Qt + i0;
                for (int ii = 0; ii < O2C_ATT_MR; ii++)
                    for (int jj = 0; jj < O2C_ATT_NR; jj++) acc[ii][jj] = 0.0f;
                for (o2c_int cc = 0; cc < D; cc++) {
                    const float *kr = kp + cc * O2C_ATT_NR, *qr = qc + cc * O2C_ATT_RB;
                    for (int ii = 0; ii < O2C_ATT_MR; ii++) {
                        const float a = qr[ii];
                        for (int jj = 0; jj < O2C_ATT_NR; jj++) acc[ii][jj] = O2C_FMA_f32(acc[ii][jj], a, kr[jj]);
                    }
                }
                for (int jj = 0; jj < O2C_ATT_NR; jj++)
                    for (int ii = 0; ii < O2C_ATT_MR; ii++) St[(jt + jj) * O2C_ATT_RB + i0 + ii] = acc[ii][jj];
            }
        /* the mask and the softmax, across the block's rows */
        if (M) {
            const o2c_int mrs = ms[O2C_ATT_ROW], mc = ms[O2C_ATT_COL];
            for (o2c_int j = 0; j < Skv; j++)
                for (o2c_int i = 0; i < nrows; i++) St[j * O2C_ATT_RB + i] += M[mo + (r0 + i) * mrs + j * mc];
        }
        for (int i = 0; i < O2C_ATT_RB; i++) {
            mx[i] = -INFINITY;
            sum[i] = 0;
        }
        for (o2c_int j = 0; j < Skv; j++)
            for (int i = 0; i < O2C_ATT_RB; i++) {
                const float v = St[j * O2C_ATT_RB + i];
                mx[i] = v > mx[i] ? v : mx[i];
            }
        for (o2c_int j = 0; j < Skv; j++)
            for (int i = 0; i < O2C_ATT_RB; i++) {
                const float e = o2c_vexp_f32(St[j * O2C_ATT_RB + i] - mx[i]);
                St[j * O2C_ATT_RB + i] = e;
                sum[i] += e;
            }
        for (o2c_int j = Skv; j < SkvP; j++)
            for (int i = 0; i < O2C_ATT_RB; i++) St[j * O2C_ATT_RB + i] = 0.0f;
        for (int i = 0; i < O2C_ATT_RB; i++) mx[i] = 1 / sum[i];
        /* Y = St' Vp / sums, MR x NR tiles */
        for (o2c_int jt = 0; jt < DvP; jt += O2C_ATT_NR)
            for (o2c_int i0 = 0; i0 < nrows; i0 += O2C_ATT_MR) {
                float acc[O2C_ATT_MR][O2C_ATT_NR];
                const float *sc = St + i0;
                for (int ii = 0; ii < O2C_ATT_MR; ii++)
                    for (int cc = 0; cc < O2C_ATT_NR; cc++) acc[ii][cc] = 0.0f;
                for (o2c_int jj = 0; jj < Skv; jj++) {
                    const float *vr = Vp + jj * DvP + jt, *sr = sc + jj * O2C_ATT_RB;
                    for (int ii = 0; ii < O2C_ATT_MR; ii++) {
                        const float e = sr[ii];
                        for (int cc = 0; cc < O2C_ATT_NR; cc++) acc[ii][cc] = O2C_FMA_f32(acc[ii][cc], e, vr[cc]);
                    }
                }
                for (int ii = 0; ii < O2C_ATT_MR; ii++) {
                    float *y = Y + yo + (r0 + i0 + ii) * ys[O2C_ATT_ROW];
                    const o2c_int yc = ys[O2C_ATT_COL];
                    for (int cc = 0; cc < O2C_ATT_NR; cc++)
                        if (i0 + ii < nrows && jt + cc < Dv) y[(jt + cc) * yc] = acc[ii][cc] * mx[i0 + ii];
                }
            }
    }
}

/*@ o2c_attention_f32 params O2C_ATT */
O2C_ATTENTION(o2c_attention_f32, float)
/*@ o2c_attention_f64 params O2C_ATT */
O2C_ATTENTION(o2c_attention_f64, double)

/*@ o2c_sdpa_f32 needs o2c_h2f o2c_f2h o2c_bf2f o2c_f2bf params O2C_SDPA */
O2C_SDPA(o2c_sdpa_f32, float, O2C_ROUND16)
/*@ o2c_sdpa_f64 params O2C_SDPA */
O2C_SDPA(o2c_sdpa_f64, double, O2C_NOROUND)
/*@ o2c_sdpa_cat_f32 params O2C_SDPA_CAT */
O2C_SDPA_CAT(o2c_sdpa_cat_f32, float)
/*@ o2c_sdpa_cat_f64 params O2C_SDPA_CAT */
O2C_SDPA_CAT(o2c_sdpa_cat_f64, double)
/*@ o2c_rotary_f32 needs o2c_h2f o2c_f2h o2c_bf2f o2c_f2bf params O2C_ROT */
O2C_ROTARY(o2c_rotary_f32, float, O2C_ROUND16)
/*@ o2c_rotary_f64 params O2C_ROT */
O2C_ROTARY(o2c_rotary_f64, double, O2C_NOROUND)

/*@ o2c_linatt_f32 params O2C_LINATT */
/* LinearAttention: the state column m of kv head h, (DK values, kept in
 * present_state y[1] at stride DV), through the T steps: decay, delta
 * correction, write k v^T, then every query head of the group reads it
 * (y[0], B x T x HQ*DV). Q, K, V, decay and beta are 3-D (B x T x heads*size). */
O2C_KERNEL(o2c_linatt_f32)
{
    const float *Q = (const float *)p->x[O2C_LINATT_XQ], *K = (const float *)p->x[O2C_LINATT_XK];
    const float *V = (const float *)p->x[O2C_LINATT_XV], *PS = (const float *)p->x[O2C_LINATT_XPAST];
    const float *G = (const float *)p->x[O2C_LINATT_XDECAY], *BT = (const float *)p->x[O2C_LINATT_XBETA];
    float *Y = (float *)p->y[0], *ST = (float *)p->y[1];
    const o2c_int T = p->k[O2C_LINATT_T], Hq = p->k[O2C_LINATT_HQ], Hkv = p->k[O2C_LINATT_HKV];
    const o2c_int Dk = p->k[O2C_LINATT_DK], Dv = p->k[O2C_LINATT_DV], gate = p->k[O2C_LINATT_GATE];
    const o2c_int beta = p->k[O2C_LINATT_BETA], grp = Hq / Hkv;
    const float scale = p->ff[O2C_LINATT_FSCALE];
    O2C_FOR(i) {
        const o2c_int m = i % Dv, h = (i / Dv) % Hkv, b = i / (Dv * Hkv);
        float *s = ST + (b * Hkv + h) * Dk * Dv + m;
        o2c_int t, d, g;
        for (d = 0; d < Dk; d++) s[d * Dv] = PS ? PS[(b * Hkv + h) * Dk * Dv + d * Dv + m] : 0.0f;
        for (t = 0; t < T; t++) {
            const float *k = K + (b * T + t) * Hkv * Dk + h * Dk;
            float v = V[(b * T + t) * Hkv * Dv + h * Dv + m];
            if (gate == 1) {
                const float e = expf(G[(b * T + t) * Hkv + h]);
                for (d = 0; d < Dk; d++) s[d * Dv] *= e;
            } else if (gate == 2) {
                for (d = 0; d < Dk; d++) s[d * Dv] *= expf(G[(b * T + t) * Hkv * Dk + h * Dk + d]);
            }
            if (beta) {
                float r = 0;
                for (d = 0; d < Dk; d++) r += s[d * Dv] * k[d];
                v = BT[beta == 1 ? (b * T + t) * Hkv + h : b * T + t] * (v - r);
            }
            for (d = 0; d < Dk; d++) s[d * Dv] += k[d] * v;
            for (g = 0; g < grp; g++) {
                const o2c_int hq = h * grp + g;
                const float *q = Q + (b * T + t) * Hq * Dk + hq * Dk;
                float o = 0;
                for (d = 0; d < Dk; d++) o += q[d] * s[d * Dv];
                Y[(b * T + t) * Hq * Dv + hq * Dv + m] = scale * o;
            }
        }
    }
}
/*@ o2c_ccstate_f32 needs o2c_h2f o2c_f2h o2c_bf2f o2c_f2bf params O2C_CCS */
/* CausalConvWithState: y[b, c, t] = bias[c] + sum_j w[c, j] * padded[b, c, t + j]
 * over the input padded on the left by past_state (or zeros) */
O2C_KERNEL(o2c_ccstate_f32)
{
    const float *X = (const float *)p->x[O2C_CCS_XX], *W = (const float *)p->x[O2C_CCS_XW];
    const float *Bi = (const float *)p->x[O2C_CCS_XB], *PS = (const float *)p->x[O2C_CCS_XPAST];
    float *Y = (float *)p->y[0];
    const o2c_int C = p->k[O2C_CCS_C], L = p->k[O2C_CCS_L], K = p->k[O2C_CCS_K];
    const o2c_int silu = p->k[O2C_CCS_SILU], h16 = p->k[O2C_CCS_HALF];
    O2C_FOR(i) {
        const o2c_int t = i % L, bc = i / L, c = bc % C;
        float acc = Bi ? Bi[c] : 0.0f;
        o2c_int j;
        for (j = 0; j < K; j++) {
            const o2c_int pos = t + j;   /* in the padded row: K - 1 state positions, then X */
            const float xv = pos >= K - 1 ? X[bc * L + pos - (K - 1)] : PS ? PS[bc * (K - 1) + pos] : 0.0f;
            acc += W[c * K + j] * xv;
        }
        if (silu) {
            acc = O2C_ROUND16(h16, acc);
            acc = acc * (1.0f / (1.0f + expf(-acc)));
        }
        Y[i] = acc;
    }
}
/*@ o2c_ccstate_present_f32 params O2C_CCS */
O2C_KERNEL(o2c_ccstate_present_f32)
{
    const float *X = (const float *)p->x[O2C_CCS_XX], *PS = (const float *)p->x[O2C_CCS_XPAST];
    float *Y = (float *)p->y[0];
    const o2c_int L = p->k[O2C_CCS_L], K = p->k[O2C_CCS_K];
    O2C_FOR(i) {
        const o2c_int s = i % (K - 1), bc = i / (K - 1), pos = L + s;
        Y[i] = pos >= K - 1 ? X[bc * L + pos - (K - 1)] : PS ? PS[bc * (K - 1) + pos] : 0.0f;
    }
}

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_ATTENTION(K, F) K(o2c_attention_f32, F) K(o2c_attention_blk_f32, F) K(o2c_attention_f64, F) K(o2c_sdpa_f32, F) K(o2c_sdpa_f64, F) \
    K(o2c_sdpa_cat_f32, F) K(o2c_sdpa_cat_f64, F) K(o2c_rotary_f32, F) K(o2c_rotary_f64, F) \
    K(o2c_linatt_f32, F) K(o2c_ccstate_f32, F) K(o2c_ccstate_present_f32, F)
