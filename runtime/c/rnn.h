/* Recurrent kernels: RNN, GRU, LSTM. See o2c_rt.h for the calling convention.
 *
 * The compiler lowers one recurrent node (T time steps, D directions,
 * batch B, hidden size H, G gates: RNN 1, GRU 3, LSTM 4) into:
 *   1. o2c_rnn_proj_*   the input projection of every time step at once:
 *                       P[t, d, b, j] = X[t, b, :] . W[d, j, :] + biases
 *   2. o2c_rnn_init_*   the first state: S[0] = initial_h (or 0), C = initial_c (or 0)
 *   3. one call per step s (0 <= s < T), which reads S[s] and writes S[s+1]:
 *        o2c_rnn_step_*, o2c_gru_step_* (after o2c_gru_reset_* when
 *        linear_before_reset is 0), o2c_lstm_step_* (cell state C in place:
 *        each index reads and writes its own element only)
 *   4. o2c_rnn_y_*, o2c_rnn_last_*: the outputs Y, Y_h, Y_c.
 * S is the state history, (T + 1) x D x B x H; C is D x B x H.
 * Direction d runs forward (time t = s at step s) or in reverse
 * (t = T - 1 - s): direction 1 always runs in reverse, direction 0 when
 * the step's rev0 parameter is set. With sequence lengths L (int32, one
 * per batch entry), a step whose time t >= L[b] keeps the state of b
 * unchanged and its Y entries are 0.
 *
 * Step kernels (index space D x B x H, element (d, b, h)) share:
 *   O2C_RNN_* (runtime/c/params/rnn.h): D, B, H, T, the step s, rev0, clip
 *   present with O2C_RNN_F_CLIP the threshold, LSTM input_forget / GRU
 *   linear_before_reset, and at O2C_RNN_ACT_AT(d, a) activation a of
 *   direction d: its code (see o2c_rnn_act_*) and the bit patterns of its
 *   alpha and beta (double, or float in the low 32 bits for float kernels).
 * Gate pre-activations are clipped to [-clip, clip] before their
 * activation (not the cell state). */

#define O2C_RNN_STEP_PARAMS(T)                                                      \
    const o2c_int D = p->k[O2C_RNN_D], B = p->k[O2C_RNN_B], H = p->k[O2C_RNN_H];    \
    const o2c_int TT = p->k[O2C_RNN_T];                                             \
    const o2c_int s = p->k[O2C_RNN_S], rev0 = p->k[O2C_RNN_REV0], has_clip = p->k[O2C_RNN_HAS_CLIP]; \
    const T clip = O2C_PF(T, p, O2C_RNN_F_CLIP);                                    \
    (void)D

/* element (d, b, h) of the index space, its time step t and whether the
 * step is inside b's sequence */
#define O2C_RNN_STEP_INDEX(i)                                                       \
    const o2c_int h = (i) % H, b = ((i) / H) % B, d = (i) / (H * B);               \
    const o2c_int t = (d == 1 || rev0) ? TT - 1 - s : s;                           \
    const int valid = !Lens || t < (o2c_int)Lens[b];                               \
    const o2c_int *act = p->k + O2C_RNN_ACT_AT(d, 0)

#define O2C_RNN_CLIP(v) (has_clip ? ((v) > clip ? clip : ((v) < -clip ? -clip : (v))) : (v))

/* the activations; a[0] code, a[1] / a[2] alpha / beta as bits (see above):
 * 0 Sigmoid, 1 Tanh, 2 Relu, 3 HardSigmoid, 4 LeakyRelu, 5 ThresholdedRelu,
 * 6 ScaledTanh, 7 Affine, 8 Elu, 9 Softsign, 10 Softplus */
#define O2C_RNN_ACT(NAME, T)                                                        \
    O2C_HD static inline O2C_INLINE T NAME(T x, const o2c_int *a)                   \
    {                                                                               \
        T A, Bt;                                                                    \
        if (sizeof(T) == 4) {                                                       \
            const uint32_t ua = (uint32_t)a[1], ub = (uint32_t)a[2];                \
            memcpy(&A, &ua, sizeof A);                                              \
            memcpy(&Bt, &ub, sizeof Bt);                                            \
        } else {                                                                    \
            memcpy(&A, &a[1], sizeof A);                                            \
            memcpy(&Bt, &a[2], sizeof Bt);                                          \
        }                                                                           \
        switch (a[0]) {                                                             \
        case 0: return 1 / (1 + O2C_VM(T, exp)(-x));                                       \
        case 1: return O2C_VM(T, tanh)(x);                                                  \
        case 2: return x > 0 ? x : (T)0;                                            \
        case 3: {                                                                   \
            const T v = A * x + Bt;                                                 \
            return v <= 0 ? (T)0 : (v >= 1 ? (T)1 : v);                             \
        }                                                                           \
        case 4: return x >= 0 ? x : A * x;                                          \
        case 5: return x >= A ? x : (T)0;                                           \
        case 6: return A * O2C_VM(T, tanh)(Bt * x);                                            \
        case 7: return A * x + Bt;                                                  \
        case 8: return x >= 0 ? x : A * (O2C_VM(T, exp)(x) - 1);                               \
        case 9: return x / (1 + O2C_M(T, fabs)(x));                                           \
        default: return x > 30 ? x : O2C_VM(T, log1p)(O2C_VM(T, exp)(x));                                 \
        }                                                                           \
    }

/* o2c_rnn_proj_*: index space T x D x B x GH, element (t, d, b, j):
 *   P[t, d, b, j] = sum_i X[t, b, i] * W[d, j, i] + Wb[d, j] (+ Rb[d, j] if j < RBEND)
 *   x[0] X (T x B x I, or B x T x I when LAYOUT is 1), x[1] W (D x GH x I),
 *   x[2] B (D x 2GH: Wb then Rb) or NULL; y[0] P
 *   O2C_RNN_PROJ_* */
#define O2C_RNN_PROJ(NAME, T)                                                       \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const T *X = (const T *)p->x[0], *W = (const T *)p->x[1];                  \
        const T *Bias = (const T *)p->x[2];                                         \
        T *P = (T *)p->y[0];                                                        \
        const o2c_int TT = p->k[O2C_RNN_PROJ_T], D = p->k[O2C_RNN_PROJ_D];          \
        const o2c_int B = p->k[O2C_RNN_PROJ_B], GH = p->k[O2C_RNN_PROJ_GH];         \
        const o2c_int NI = p->k[O2C_RNN_PROJ_I], layout = p->k[O2C_RNN_PROJ_LAYOUT]; \
        const o2c_int rb_end = p->k[O2C_RNN_PROJ_RBEND];                            \
        O2C_FOR(i) {                                                                \
            const o2c_int j = i % GH, b = (i / GH) % B, d = (i / (GH * B)) % D;     \
            const o2c_int t = i / (GH * B * D);                                     \
            const T *x = X + (layout ? b * TT + t : t * B + b) * NI;                \
            const T *w = W + (d * GH + j) * NI;                                     \
            T acc = 0;                                                              \
            for (o2c_int k = 0; k < NI; k++) acc += x[k] * w[k];                     \
            if (Bias) {                                                             \
                acc += Bias[d * 2 * GH + j];                                        \
                if (j < rb_end) acc += Bias[d * 2 * GH + GH + j];                   \
            }                                                                       \
            P[i] = acc;                                                             \
        }                                                                           \
    }

/* o2c_rnn_init_*: index space D x B x H, element (d, b, h):
 *   S[0, d, b, h] = initial_h[d, b, h] or 0; C[d, b, h] = initial_c[d, b, h] or 0
 *   x[0] initial_h or NULL, x[1] initial_c or NULL (B x D x H when LAYOUT is 1)
 *   y[0] S, y[1] C or NULL
 *   O2C_RNN_INIT_* */
#define O2C_RNN_INIT(NAME, T)                                                       \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const T *H0 = (const T *)p->x[0], *C0 = (const T *)p->x[1];                \
        T *S = (T *)p->y[0], *C = (T *)p->y[1];                                     \
        const o2c_int D = p->k[O2C_RNN_INIT_D], B = p->k[O2C_RNN_INIT_B];           \
        const o2c_int H = p->k[O2C_RNN_INIT_H], layout = p->k[O2C_RNN_INIT_LAYOUT]; \
        O2C_FOR(i) {                                                                \
            const o2c_int h = i % H, b = (i / H) % B, d = i / (H * B);              \
            const o2c_int src = layout ? (b * D + d) * H + h : i;                   \
            S[i] = H0 ? H0[src] : (T)0;                                             \
            if (C) C[i] = C0 ? C0[src] : (T)0;                                      \
        }                                                                           \
    }

/* o2c_rnn_step_* (RNN): H' = f(P[t, d, b, h] + S[s, d, b, :] . R[d, h, :])
 *   x[0] P, x[1] R (D x H x H), x[3] L or NULL; y[0] S */
#define O2C_RNN_STEP(NAME, T, ACT)                                                  \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const T *P = (const T *)p->x[0], *R = (const T *)p->x[1];                  \
        const int32_t *Lens = (const int32_t *)p->x[3];                             \
        T *S = (T *)p->y[0];                                                        \
        O2C_RNN_STEP_PARAMS(T);                                                      \
        O2C_FOR(i) {                                                                \
            O2C_RNN_STEP_INDEX(i);                                                  \
            const T *hp = S + ((s * D + d) * B + b) * H;                            \
            T *hn = S + (((s + 1) * D + d) * B + b) * H;                            \
            if (!valid) { hn[h] = hp[h]; continue; }                                \
            const T *r = R + (d * H + h) * H;                                       \
            T acc = P[((t * D + d) * B + b) * H + h];                               \
            for (o2c_int k = 0; k < H; k++) acc += hp[k] * r[k];                    \
            hn[h] = ACT((T)O2C_RNN_CLIP(acc), act);                                 \
        }                                                                           \
    }

/* o2c_gru_reset_* (GRU, linear_before_reset 0): the reset gate times the
 * previous state, RH[d, b, h] = f(P[t, d, b, H + h] + S[s, d, b, :] . R[d, H + h, :]) * S[s, d, b, h]
 *   x[0] P, x[1] R (D x 3H x H), x[2] S, x[3] L or NULL; y[0] RH (D x B x H) */
#define O2C_GRU_RESET(NAME, T, ACT)                                                 \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const T *P = (const T *)p->x[0], *R = (const T *)p->x[1];                  \
        const T *S = (const T *)p->x[2];                                            \
        const int32_t *Lens = (const int32_t *)p->x[3];                             \
        T *RH = (T *)p->y[0];                                                       \
        O2C_RNN_STEP_PARAMS(T);                                                      \
        O2C_FOR(i) {                                                                \
            O2C_RNN_STEP_INDEX(i);                                                  \
            const T *hp = S + ((s * D + d) * B + b) * H;                            \
            if (!valid) { RH[i] = 0; continue; }                                    \
            const T *r = R + (d * 3 * H + H + h) * H;                               \
            T acc = P[((t * D + d) * B + b) * 3 * H + H + h];                       \
            for (o2c_int k = 0; k < H; k++) acc += hp[k] * r[k];                    \
            RH[i] = ACT((T)O2C_RNN_CLIP(acc), act) * hp[h];                         \
        }                                                                           \
    }

/* o2c_gru_step_* (GRU, gates z r h):
 *   z = f(Pz + H . Rz), and with linear_before_reset (O2C_RNN_FLAG = 1)
 *   r = f(Pr + H . Rr), h~ = g(Ph + r * (H . Rh + Rbh)), otherwise
 *   h~ = g(Ph + RH . Rh); H' = (1 - z) * h~ + z * H
 *   x[0] P, x[1] R (D x 3H x H), x[2] RH (FLAG 0) or B (FLAG 1, may be
 *   NULL), x[3] L or NULL; y[0] S */
#define O2C_GRU_STEP(NAME, T, ACT)                                                  \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const T *P = (const T *)p->x[0], *R = (const T *)p->x[1];                  \
        const T *X2 = (const T *)p->x[2];                                           \
        const int32_t *Lens = (const int32_t *)p->x[3];                             \
        T *S = (T *)p->y[0];                                                        \
        O2C_RNN_STEP_PARAMS(T);                                                      \
        const o2c_int lbr = p->k[O2C_RNN_FLAG];                                     \
        O2C_FOR(i) {                                                                \
            O2C_RNN_STEP_INDEX(i);                                                  \
            const T *hp = S + ((s * D + d) * B + b) * H;                            \
            T *hn = S + (((s + 1) * D + d) * B + b) * H;                            \
            if (!valid) { hn[h] = hp[h]; continue; }                                \
            const T *pg = P + ((t * D + d) * B + b) * 3 * H;                        \
            const T *rz = R + (d * 3 * H + h) * H;                                  \
            const T *rr = R + (d * 3 * H + H + h) * H;                              \
            const T *rh = R + (d * 3 * H + 2 * H + h) * H;                          \
            T az = pg[h], ah = 0;                                                   \
            for (o2c_int k = 0; k < H; k++) az += hp[k] * rz[k];                    \
            const T z = ACT((T)O2C_RNN_CLIP(az), act);                              \
            if (lbr) {                                                              \
                T ar = pg[H + h];                                                   \
                for (o2c_int k = 0; k < H; k++) {                                   \
                    ar += hp[k] * rr[k];                                            \
                    ah += hp[k] * rh[k];                                            \
                }                                                                   \
                if (X2) ah += X2[d * 6 * H + 5 * H + h];                            \
                ah *= ACT((T)O2C_RNN_CLIP(ar), act);                                \
            } else {                                                                \
                const T *rhp = X2 + (d * B + b) * H;                                \
                for (o2c_int k = 0; k < H; k++) ah += rhp[k] * rh[k];               \
            }                                                                       \
            ah += pg[2 * H + h];                                                    \
            const T hh = ACT((T)O2C_RNN_CLIP(ah), act + O2C_RNN_ACT_SLOTS);                         \
            hn[h] = (1 - z) * hh + z * hp[h];                                       \
        }                                                                           \
    }

/* o2c_lstm_step_* (LSTM, gates i o f c; activations f g h):
 *   i = f(Pi + H . Ri + Pi' * C), f = f(Pf + H . Rf + Pf' * C) (1 - i when
 *   input_forget, O2C_RNN_FLAG = 1), c = g(Pc + H . Rc), C' = f * C + i * c,
 *   o = f(Po + H . Ro + Po' * C'), H' = o * h(C')
 *   x[0] P, x[1] R (D x 4H x H), x[2] peepholes (D x 3H: i o f) or NULL,
 *   x[3] L or NULL; y[0] S, y[1] C (read and written in place) */
#define O2C_LSTM_STEP(NAME, T, ACT)                                                 \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const T *P = (const T *)p->x[0], *R = (const T *)p->x[1];                  \
        const T *Pp = (const T *)p->x[2];                                           \
        const int32_t *Lens = (const int32_t *)p->x[3];                             \
        T *S = (T *)p->y[0], *C = (T *)p->y[1];                                     \
        O2C_RNN_STEP_PARAMS(T);                                                      \
        const o2c_int input_forget = p->k[O2C_RNN_FLAG];                            \
        O2C_FOR(i) {                                                                \
            O2C_RNN_STEP_INDEX(i);                                                  \
            const T *hp = S + ((s * D + d) * B + b) * H;                            \
            T *hn = S + (((s + 1) * D + d) * B + b) * H;                            \
            if (!valid) { hn[h] = hp[h]; continue; }                                \
            const T *pg = P + ((t * D + d) * B + b) * 4 * H;                        \
            T g[4];                                                                 \
            for (int q = 0; q < 4; q++) {                                           \
                const T *r = R + (d * 4 * H + q * H + h) * H;                       \
                T acc = pg[q * H + h];                                              \
                for (o2c_int k = 0; k < H; k++) acc += hp[k] * r[k];                \
                g[q] = acc;                                                         \
            }                                                                       \
            const T cp = C[i];                                                      \
            const T *pp = Pp ? Pp + d * 3 * H : 0;                                  \
            if (pp) { g[0] += pp[h] * cp; g[2] += pp[2 * H + h] * cp; }             \
            const T ig = ACT((T)O2C_RNN_CLIP(g[0]), act);                           \
            const T fg = input_forget ? 1 - ig : ACT((T)O2C_RNN_CLIP(g[2]), act);   \
            const T cg = ACT((T)O2C_RNN_CLIP(g[3]), act + O2C_RNN_ACT_SLOTS);                       \
            const T cn = fg * cp + ig * cg;                                         \
            if (pp) g[1] += pp[H + h] * cn;                                         \
            const T og = ACT((T)O2C_RNN_CLIP(g[1]), act);                           \
            C[i] = cn;                                                              \
            hn[h] = og * ACT(cn, act + 6);                                          \
        }                                                                           \
    }

/* o2c_rnn_y_*: index space: the elements of Y, T x D x B x H (layout 0) or
 *   B x T x D x H (layout 1); Y[t, d, b, h] = S[s + 1, d, b, h] with s the
 *   step that computed time t, or 0 when t >= L[b]
 *   x[0] S, x[3] L or NULL; y[0] Y
 *   O2C_RNN_Y_* */
#define O2C_RNN_Y(NAME, T)                                                          \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const T *S = (const T *)p->x[0];                                            \
        const int32_t *Lens = (const int32_t *)p->x[3];                             \
        T *Y = (T *)p->y[0];                                                        \
        const o2c_int D = p->k[O2C_RNN_Y_D], B = p->k[O2C_RNN_Y_B];                 \
        const o2c_int H = p->k[O2C_RNN_Y_H], TT = p->k[O2C_RNN_Y_T];                \
        const o2c_int layout = p->k[O2C_RNN_Y_LAYOUT], rev0 = p->k[O2C_RNN_Y_REV0]; \
        O2C_FOR(i) {                                                                \
            const o2c_int h = i % H;                                                \
            o2c_int r = i / H, b, d, t;                                             \
            if (layout) { d = r % D; r /= D; t = r % TT; b = r / TT; }              \
            else { b = r % B; r /= B; d = r % D; t = r / D; }                       \
            const o2c_int s = (d == 1 || rev0) ? TT - 1 - t : t;                    \
            if (Lens && t >= (o2c_int)Lens[b]) Y[i] = 0;                            \
            else Y[i] = S[(((s + 1) * D + d) * B + b) * H + h];                     \
        }                                                                           \
    }

/* o2c_rnn_last_*: Y_h or Y_c, index space D x B x H (layout 0) or B x D x H
 *   (layout 1); out[d, b, h] = X[OFF + (d * B + b) * H + h], or 0 when L[b] is 0
 *   x[0] X (S or C), x[3] L or NULL; y[0] out
 *   O2C_RNN_LAST_* */
#define O2C_RNN_LAST(NAME, T)                                                       \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const T *X = (const T *)p->x[0];                                            \
        const int32_t *Lens = (const int32_t *)p->x[3];                             \
        T *Out = (T *)p->y[0];                                                      \
        const o2c_int D = p->k[O2C_RNN_LAST_D], B = p->k[O2C_RNN_LAST_B];           \
        const o2c_int H = p->k[O2C_RNN_LAST_H], layout = p->k[O2C_RNN_LAST_LAYOUT]; \
        const o2c_int off = p->k[O2C_RNN_LAST_OFF];                                 \
        O2C_FOR(i) {                                                                \
            const o2c_int h = i % H, r = i / H;                                     \
            const o2c_int b = layout ? r / D : r % B, d = layout ? r % D : r / B;   \
            if (Lens && Lens[b] <= 0) Out[i] = 0;                                   \
            else Out[i] = X[off + (d * B + b) * H + h];                             \
        }                                                                           \
    }

/* o2c_lstm_seq_f32: the whole recurrence of an LSTM with the default
 * activations (Sigmoid, Tanh, Tanh), the C target's variant of the
 * o2c_lstm_step_* calls. Index space D x B: element (d, b) runs every time
 * step of direction d for batch entry b (the chains are independent).
 * Each step computes the gates of O2C_LSTM_HB hidden units at a time, the
 * 4 x HB accumulators in registers: for each k of the previous state, one
 * broadcast and four contiguous rows of the transposed recurrent weights,
 * which the C compiler vectorizes; then the gates, with the branch-free
 * o2c_vsigmoid_f32 / o2c_vtanh_f32, and the new state.
 *   x[0] P, the input projection with biases: row (layout ? b T + t : t B + b),
 *        column d 4H + q H + h (gates q: i o f c)
 *   x[1] Rt, R transposed in blocks of PB hidden units (O2C_LSTM_SEQ_PB):
 *        the block of units g0 .. g0 + w - 1 (w = min(PB, H - g0)) at
 *        Rt + d 4H H + g0 4H, its row k the 4 x w weights of the gates,
 *        Rt[d 4H H + g0 4H + k 4w + q w + e] = R[d, q H + g0 + e, k]: a
 *        block's rows are one contiguous stream (PB = H: R transposed,
 *        D x H x 4H)
 *   x[2] peepholes (D x 3H: i o f) or NULL, x[3] L or NULL
 *   y[0] S, the state history ((T + 1) x D x B x H, S[0] set by o2c_rnn_init)
 *   y[1] C, the cell state (D x B x H, read and written in place)
 *   O2C_LSTM_SEQ_*, O2C_RNN_F_CLIP */
/* hidden units per block: 4 x HB accumulators in registers. 64 with
 * AVX-512 (32 vector registers), else 32: on a 2 x 128 recurrence of 64
 * steps (AMD EPYC, gcc -O3) HB 16 / 32 / 64 took 0.60 / 0.42 / 0.35 ms
 * with AVX-512 and 0.95 / 0.79 / 0.73 ms with AVX2 (more independent
 * multiply-add chains per step of k) */
#ifndef O2C_LSTM_HB
#if defined(__AVX512F__)
#define O2C_LSTM_HB 64
#else
#define O2C_LSTM_HB 32
#endif
#endif
/* HB hidden units from h0 = g0 + e0 of the packed block at Rg, w units
 * wide (HB a constant for a full block: registers) */
#define O2C_LSTM_BLOCK(HB)                                                          \
    {                                                                               \
        float ai[O2C_LSTM_HB], ao[O2C_LSTM_HB], af[O2C_LSTM_HB], ac[O2C_LSTM_HB];   \
        float cn[O2C_LSTM_HB];                                                      \
        for (int e = 0; e < (HB); e++) {                                            \
            ai[e] = pg[h0 + e];                                                     \
            ao[e] = pg[H + h0 + e];                                                 \
            af[e] = pg[2 * H + h0 + e];                                             \
            ac[e] = pg[3 * H + h0 + e];                                             \
        }                                                                           \
        for (o2c_int k = 0; k < H; k++) {                                           \
            const float hv = hp[k];                                                 \
            const float *r = Rg + k * 4 * w + e0;                                   \
            for (int e = 0; e < (HB); e++) {                                        \
                ai[e] = O2C_FMA_f32(ai[e], hv, r[e]);                               \
                ao[e] = O2C_FMA_f32(ao[e], hv, r[w + e]);                           \
                af[e] = O2C_FMA_f32(af[e], hv, r[2 * w + e]);                       \
                ac[e] = O2C_FMA_f32(ac[e], hv, r[3 * w + e]);                       \
            }                                                                       \
        }                                                                           \
        if (pp)                                                                     \
            for (int e = 0; e < (HB); e++) {                                        \
                ai[e] += pp[h0 + e] * Cd[h0 + e];                                   \
                af[e] += pp[2 * H + h0 + e] * Cd[h0 + e];                           \
            }                                                                       \
        if (has_clip)                                                               \
            for (int e = 0; e < (HB); e++) {                                        \
                ai[e] = O2C_LSTM_CLIP(ai[e]);                                       \
                af[e] = O2C_LSTM_CLIP(af[e]);                                       \
                ac[e] = O2C_LSTM_CLIP(ac[e]);                                       \
            }                                                                       \
        for (int e = 0; e < (HB); e++) {                                            \
            const float ig = o2c_vsigmoid_f32(ai[e]);                               \
            const float fs = o2c_vsigmoid_f32(af[e]);                               \
            const float fg = input_forget ? 1.0f - ig : fs;                         \
            cn[e] = fg * Cd[h0 + e] + ig * o2c_vtanh_f32(ac[e]);                    \
        }                                                                           \
        if (pp)                                                                     \
            for (int e = 0; e < (HB); e++) ao[e] += pp[H + h0 + e] * cn[e];         \
        if (has_clip)                                                               \
            for (int e = 0; e < (HB); e++) ao[e] = O2C_LSTM_CLIP(ao[e]);            \
        for (int e = 0; e < (HB); e++) {                                            \
            Cd[h0 + e] = cn[e];                                                     \
            hn[h0 + e] = o2c_vsigmoid_f32(ao[e]) * o2c_vtanh_f32(cn[e]);            \
        }                                                                           \
    }
#define O2C_LSTM_CLIP(v) ((v) > clip ? clip : ((v) < -clip ? -clip : (v)))
#define O2C_LSTM_SEQ(NAME)                                                          \
    O2C_KERNEL(NAME)                                                                \
    {                                                                               \
        const float *P = (const float *)p->x[0], *Rt = (const float *)p->x[1];     \
        const float *Pp = (const float *)p->x[2];                                   \
        const int32_t *Lens = (const int32_t *)p->x[3];                             \
        float *S = (float *)p->y[0], *C = (float *)p->y[1];                         \
        const o2c_int D = p->k[O2C_LSTM_SEQ_D], B = p->k[O2C_LSTM_SEQ_B];           \
        const o2c_int H = p->k[O2C_LSTM_SEQ_H], TT = p->k[O2C_LSTM_SEQ_T];          \
        const o2c_int rev0 = p->k[O2C_LSTM_SEQ_REV0];                               \
        const o2c_int has_clip = p->k[O2C_LSTM_SEQ_HAS_CLIP];                       \
        const o2c_int input_forget = p->k[O2C_LSTM_SEQ_INPUT_FORGET];               \
        const o2c_int layout = p->k[O2C_LSTM_SEQ_LAYOUT];                           \
        const o2c_int PB = p->k[O2C_LSTM_SEQ_PB] > 0 ? p->k[O2C_LSTM_SEQ_PB] : H;   \
        const float clip = p->ff[O2C_RNN_F_CLIP];                                   \
        O2C_FOR(i) {                                                                \
            const o2c_int b = i % B, d = i / B;                                     \
            const float *Rd = Rt + d * H * 4 * H;                                   \
            const float *pp = Pp ? Pp + d * 3 * H : 0;                              \
            float *Cd = C + (d * B + b) * H;                                        \
            for (o2c_int s = 0; s < TT; s++) {                                      \
                const o2c_int t = (d == 1 || rev0) ? TT - 1 - s : s;                \
                const float *hp = S + ((s * D + d) * B + b) * H;                    \
                float *hn = S + (((s + 1) * D + d) * B + b) * H;                    \
                if (Lens && t >= (o2c_int)Lens[b]) {                                \
                    for (o2c_int h = 0; h < H; h++) hn[h] = hp[h];                  \
                    continue;                                                       \
                }                                                                   \
                const float *pg = P + ((layout ? b * TT + t : t * B + b) * D + d) * 4 * H; \
                for (o2c_int g0 = 0; g0 < H; g0 += PB) {                            \
                    const o2c_int w = H - g0 < PB ? H - g0 : PB;                    \
                    const float *Rg = Rd + g0 * 4 * H;                              \
                    o2c_int e0 = 0, h0 = g0;                                        \
                    for (; e0 + O2C_LSTM_HB <= w; e0 += O2C_LSTM_HB, h0 += O2C_LSTM_HB) \
                        O2C_LSTM_BLOCK(O2C_LSTM_HB)                                 \
                    if (e0 < w) {                                                   \
                        const o2c_int hb = w - e0;                                  \
                        O2C_LSTM_BLOCK(hb)                                          \
                    }                                                               \
                }                                                                   \
            }                                                                       \
        }                                                                           \
    }

/*@ o2c_rnn_act_f32 needs o2c_vexp_f32 o2c_vtanh_f32 o2c_vlog1p_f32 */
O2C_RNN_ACT(o2c_rnn_act_f32, float)
/*@ o2c_rnn_act_f64 */
O2C_RNN_ACT(o2c_rnn_act_f64, double)
/*@ o2c_rnn_proj_f32 params O2C_RNN_PROJ */
O2C_RNN_PROJ(o2c_rnn_proj_f32, float)
/*@ o2c_rnn_proj_f64 params O2C_RNN_PROJ */
O2C_RNN_PROJ(o2c_rnn_proj_f64, double)
/*@ o2c_rnn_init_f32 params O2C_RNN_INIT */
O2C_RNN_INIT(o2c_rnn_init_f32, float)
/*@ o2c_rnn_init_f64 params O2C_RNN_INIT */
O2C_RNN_INIT(o2c_rnn_init_f64, double)
/*@ o2c_rnn_step_f32 needs o2c_rnn_act_f32 params O2C_RNN */
O2C_RNN_STEP(o2c_rnn_step_f32, float, o2c_rnn_act_f32)
/*@ o2c_rnn_step_f64 needs o2c_rnn_act_f64 params O2C_RNN */
O2C_RNN_STEP(o2c_rnn_step_f64, double, o2c_rnn_act_f64)
/*@ o2c_gru_reset_f32 needs o2c_rnn_act_f32 params O2C_RNN */
O2C_GRU_RESET(o2c_gru_reset_f32, float, o2c_rnn_act_f32)
/*@ o2c_gru_reset_f64 needs o2c_rnn_act_f64 params O2C_RNN */
O2C_GRU_RESET(o2c_gru_reset_f64, double, o2c_rnn_act_f64)
/*@ o2c_gru_step_f32 needs o2c_rnn_act_f32 params O2C_RNN */
O2C_GRU_STEP(o2c_gru_step_f32, float, o2c_rnn_act_f32)
/*@ o2c_gru_step_f64 needs o2c_rnn_act_f64 params O2C_RNN */
O2C_GRU_STEP(o2c_gru_step_f64, double, o2c_rnn_act_f64)
/*@ o2c_lstm_step_f32 needs o2c_rnn_act_f32 params O2C_RNN */
O2C_LSTM_STEP(o2c_lstm_step_f32, float, o2c_rnn_act_f32)
/*@ o2c_lstm_step_f64 needs o2c_rnn_act_f64 params O2C_RNN */
O2C_LSTM_STEP(o2c_lstm_step_f64, double, o2c_rnn_act_f64)
/*@ o2c_lstm_seq_f32 needs o2c_vsigmoid_f32 o2c_vtanh_f32 params O2C_LSTM_SEQ O2C_RNN_NF */
O2C_LSTM_SEQ(o2c_lstm_seq_f32)
/*@ o2c_rnn_y_f32 params O2C_RNN_Y */
O2C_RNN_Y(o2c_rnn_y_f32, float)
/*@ o2c_rnn_y_f64 params O2C_RNN_Y */
O2C_RNN_Y(o2c_rnn_y_f64, double)
/*@ o2c_rnn_last_f32 params O2C_RNN_LAST */
O2C_RNN_LAST(o2c_rnn_last_f32, float)
/*@ o2c_rnn_last_f64 params O2C_RNN_LAST */
O2C_RNN_LAST(o2c_rnn_last_f64, double)

/* ---- com.microsoft DynamicQuantizeLSTM (onnxruntime's quantize_dynamic) ----
 * An LSTM whose two products run in integers, as onnxruntime computes them:
 * the product's float input is quantized to uint8 on the fly (the range of
 * the values widened to hold 0, scale = (max - min) / 255, zero point
 * round-half-even(saturate(0 - min / scale)), q = saturate(round(x / scale)
 * + zp)): X once for all time steps, the previous state h of each direction
 * (all its batch entries together) at every step. Each product sums
 * (q - zp) (w - wzp) in 32-bit integers (wrapping) and dequantizes with the
 * float multiplier a_scale * w_scale[column]. The lowering (compiler/ops/
 * rnn.c) stores W and R as int16 (w - wzp), one row per output column
 * (d, gate, h), and runs:
 *   o2c_dqlstm_quant_f32 on X (index space 1), o2c_dqlstm_proj_f32, then
 *   o2c_rnn_init_f32 and per step o2c_dqlstm_quant_f32 on S[s] (index
 *   space D) and o2c_dqlstm_step_f32; the outputs as the LSTM's. */

/* o2c_dqlstm_quant_f32: index space G (groups), group g: the N values at
 *   x[0] + OFF + g GSTRIDE, quantized as above into y[0] (int16 q - zp,
 *   G x N); y[1][g NC + j] = scale * x[1][g NC + j] (the multipliers of
 *   the product's NC columns). O2C_DQL_QUANT_* */
/*@ o2c_dql_qparams */
/* the uint8 quantization of the n values at x (above): its scale *sc, its
 * zero point *z, and the bounds [*qlo, *qhi] of round(x / scale) */
O2C_HD static inline void o2c_dql_qparams(const float *x, o2c_int n, float *sc, float *z, float *qlo, float *qhi)
{
    float lo = 0.0f, hi = 0.0f;
    for (o2c_int e = 0; e < n; e++) {
        if (x[e] < lo) lo = x[e];
        if (x[e] > hi) hi = x[e];
    }
    *sc = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    const float zr = 0.0f - lo / *sc;
    *z = nearbyintf(zr < 0.0f ? 0.0f : (zr > 255.0f ? 255.0f : zr));
    *qlo = -*z;
    *qhi = 255.0f - *z;
}

/*@ o2c_dqlstm_quant_f32 needs o2c_dql_qparams params O2C_DQL_QUANT */
O2C_KERNEL(o2c_dqlstm_quant_f32)
{
    const float *X = (const float *)p->x[0], *WS = (const float *)p->x[1];
    int16_t *Q = (int16_t *)p->y[0];
    float *M = (float *)p->y[1];
    const o2c_int n = p->k[O2C_DQL_QUANT_N], off = p->k[O2C_DQL_QUANT_OFF];
    const o2c_int gstride = p->k[O2C_DQL_QUANT_GSTRIDE], nc = p->k[O2C_DQL_QUANT_NC];
    O2C_FOR(g) {
        const float *x = X + off + g * gstride;
        float sc, z, qlo, qhi;
        o2c_dql_qparams(x, n, &sc, &z, &qlo, &qhi);
        for (o2c_int e = 0; e < n; e++) {
            float v = nearbyintf(x[e] / sc);
            v = v < qlo ? qlo : (v > qhi ? qhi : v);
            Q[g * n + e] = (int16_t)v;
        }
        for (o2c_int j = 0; j < nc; j++) M[g * nc + j] = sc * WS[g * nc + j];
    }
}

/* o2c_dqlstm_proj_f32: index space M x N, element (m, n):
 *   P[m, n] = (float)sum_k Q[m, k] W[n, k] * mult[n]
 *   x[0] Q (int16, M x K), x[1] W (int16, N x K), x[2] mult (N); y[0] P
 *   O2C_DQL_PROJ_* */
/*@ o2c_dqlstm_proj_f32 params O2C_DQL_PROJ */
O2C_KERNEL(o2c_dqlstm_proj_f32)
{
    const int16_t *Q = (const int16_t *)p->x[0], *W = (const int16_t *)p->x[1];
    const float *Mu = (const float *)p->x[2];
    float *P = (float *)p->y[0];
    const o2c_int N = p->k[O2C_DQL_PROJ_N], K = p->k[O2C_DQL_PROJ_K];
    O2C_FOR(i) {
        const o2c_int n = i % N, m = i / N;
        const int16_t *q = Q + m * K, *w = W + n * K;
        uint32_t acc = 0;
        for (o2c_int k = 0; k < K; k++) acc += (uint32_t)((int32_t)q[k] * (int32_t)w[k]);
        const float v = (float)(int32_t)acc;
        P[i] = v * Mu[n];
    }
}

/* o2c_dqlstm_step_f32: step s, index space D x B x H, element (d, b, h),
 *   gates q (i o f c) of column d 4H + q H + h:
 *   g_q = P[t B + b, column] + (float)sum_k Hq[d, b, k] R[column, k] * hmult[column],
 *   then as onnxruntime: the peepholes (i, f: previous C; o: the new C),
 *   the biases Wb + Rb, clip, activations; C' = f C + i c, H' = o h(C')
 *   x[0] P (T B x D 4H), x[1] R (int16, D 4H x H), x[2] Hq (int16, D x B x H),
 *   x[3] L (unused, NULL), x[4] hmult (D 4H), x[5] B (D x 8H) or NULL,
 *   x[6] peepholes (D x 3H: i o f) or NULL; y[0] S, y[1] C
 *   O2C_RNN_*, O2C_RNN_F_CLIP */
/*@ o2c_dqlstm_step_f32 needs o2c_rnn_act_f32 params O2C_RNN */
O2C_KERNEL(o2c_dqlstm_step_f32)
{
    const float *P = (const float *)p->x[0];
    const int16_t *R = (const int16_t *)p->x[1], *Hq = (const int16_t *)p->x[2];
    const int32_t *Lens = (const int32_t *)p->x[3];
    const float *Hm = (const float *)p->x[4], *Bias = (const float *)p->x[5], *Pp = (const float *)p->x[6];
    float *S = (float *)p->y[0], *C = (float *)p->y[1];
    O2C_RNN_STEP_PARAMS(float);
    const o2c_int input_forget = p->k[O2C_RNN_FLAG];
    O2C_FOR(i) {
        O2C_RNN_STEP_INDEX(i);
        const float *hp = S + ((s * D + d) * B + b) * H;
        float *hn = S + (((s + 1) * D + d) * B + b) * H;
        if (!valid) { hn[h] = hp[h]; continue; }
        const float *pg = P + (t * B + b) * D * 4 * H + d * 4 * H;
        const int16_t *hq = Hq + (d * B + b) * H;
        float g[4], bias[4];
        for (int q = 0; q < 4; q++) {
            const o2c_int col = d * 4 * H + q * H + h;
            const int16_t *r = R + col * H;
            uint32_t acc = 0;
            for (o2c_int k = 0; k < H; k++) acc += (uint32_t)((int32_t)hq[k] * (int32_t)r[k]);
            const float v = (float)(int32_t)acc;
            const float pr = v * Hm[col];
            g[q] = pg[q * H + h] + pr;
            bias[q] = Bias ? Bias[d * 8 * H + q * H + h] + Bias[d * 8 * H + 4 * H + q * H + h] : 0.0f;
        }
        const float cp = C[i];
        const float *pp = Pp ? Pp + d * 3 * H : 0;
        float t0;
        if (pp) { t0 = pp[h] * cp; g[0] += t0; t0 = pp[2 * H + h] * cp; g[2] += t0; }
        if (Bias) { g[0] += bias[0]; g[2] += bias[2]; g[3] += bias[3]; }
        const float ig = o2c_rnn_act_f32(O2C_RNN_CLIP(g[0]), act);
        const float fg = input_forget ? 1.0f - ig : o2c_rnn_act_f32(O2C_RNN_CLIP(g[2]), act);
        const float cg = o2c_rnn_act_f32(O2C_RNN_CLIP(g[3]), act + O2C_RNN_ACT_SLOTS);
        const float t1 = fg * cp, t2 = ig * cg;
        const float cn = t1 + t2;
        if (pp) { t0 = pp[H + h] * cn; g[1] += t0; }
        if (Bias) g[1] += bias[1];
        const float og = o2c_rnn_act_f32(O2C_RNN_CLIP(g[1]), act);
        C[i] = cn;
        hn[h] = o2c_rnn_act_f32(cn, act + 2 * O2C_RNN_ACT_SLOTS) * og;
    }
}

/* ---- DynamicQuantizeLSTM on byte products (the tiled C target) ----
 * Where every weight less its zero point fits in int8 (int8 weights of
 * zero point 0, as quantize_dynamic writes them), the lowering packs W and
 * R as int8 and runs the products on the uint8 quantizations themselves:
 * sum (q - z) w = sum q w - z sum w, with sum w per column a constant. The
 * integer sums are the int16 kernels' above (exact in 32 bits), so the
 * outputs are theirs but for the activations (o2c_vsigmoid_f32,
 * o2c_vtanh_f32: the default ones only). Where the CPU has a 4-byte dot
 * product (x86 AVX-512 VNNI, AVX-VNNI: vpdpbusd, u8 x s8) one instruction
 * does 16 (or 8) columns x 4 k; elsewhere portable loops compute the same.
 *
 * The packed layout, "64 columns x quads": a block of 64 product columns
 * is KQ = ceil(K / 4) rows of 64 x 4 bytes, row kq holding k = 4 kq ..
 * 4 kq + 3 of each column (zeros past K and in padding columns); the u8
 * operand rows hold KQ x 4 bytes (zeros past K). */

/*@ o2c_dq64_dot */
/* acc[c] = sum_k u[k] W[c, k] over one block (64 columns); acc4[r]: the
 * same for four operand rows (u0..u3) */
#if defined(__AVX512VNNI__) && defined(__AVX512F__) && !defined(__CUDACC__)
#include <immintrin.h>
static inline void o2c_dq64_dot(const int8_t *W, const uint8_t *u, o2c_int KQ, int32_t acc[64])
{
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    o2c_int kq = 0;
    int32_t v, v2;
    for (; kq + 2 <= KQ; kq += 2) {   /* two rows a step: eight independent chains */
        const int8_t *w = W + kq * 256;
        memcpy(&v, u + 4 * kq, sizeof v);
        memcpy(&v2, u + 4 * kq + 4, sizeof v2);
        const __m512i x = _mm512_set1_epi32(v), y = _mm512_set1_epi32(v2);
        a0 = _mm512_dpbusd_epi32(a0, x, _mm512_loadu_si512((const void *)w));
        a1 = _mm512_dpbusd_epi32(a1, x, _mm512_loadu_si512((const void *)(w + 64)));
        a2 = _mm512_dpbusd_epi32(a2, x, _mm512_loadu_si512((const void *)(w + 128)));
        a3 = _mm512_dpbusd_epi32(a3, x, _mm512_loadu_si512((const void *)(w + 192)));
        b0 = _mm512_dpbusd_epi32(b0, y, _mm512_loadu_si512((const void *)(w + 256)));
        b1 = _mm512_dpbusd_epi32(b1, y, _mm512_loadu_si512((const void *)(w + 320)));
        b2 = _mm512_dpbusd_epi32(b2, y, _mm512_loadu_si512((const void *)(w + 384)));
        b3 = _mm512_dpbusd_epi32(b3, y, _mm512_loadu_si512((const void *)(w + 448)));
    }
    if (kq < KQ) {
        const int8_t *w = W + kq * 256;
        memcpy(&v, u + 4 * kq, sizeof v);
        const __m512i x = _mm512_set1_epi32(v);
        a0 = _mm512_dpbusd_epi32(a0, x, _mm512_loadu_si512((const void *)w));
        a1 = _mm512_dpbusd_epi32(a1, x, _mm512_loadu_si512((const void *)(w + 64)));
        a2 = _mm512_dpbusd_epi32(a2, x, _mm512_loadu_si512((const void *)(w + 128)));
        a3 = _mm512_dpbusd_epi32(a3, x, _mm512_loadu_si512((const void *)(w + 192)));
    }
    _mm512_storeu_si512((void *)acc, _mm512_add_epi32(a0, b0));
    _mm512_storeu_si512((void *)(acc + 16), _mm512_add_epi32(a1, b1));
    _mm512_storeu_si512((void *)(acc + 32), _mm512_add_epi32(a2, b2));
    _mm512_storeu_si512((void *)(acc + 48), _mm512_add_epi32(a3, b3));
}
#define O2C_DQ64_ROW(r)                                                     \
    memcpy(&v, u##r + 4 * kq, sizeof v);                                    \
    x = _mm512_set1_epi32(v);                                               \
    r##0 = _mm512_dpbusd_epi32(r##0, x, w0);                                \
    r##1 = _mm512_dpbusd_epi32(r##1, x, w1);                                \
    r##2 = _mm512_dpbusd_epi32(r##2, x, w2);                                \
    r##3 = _mm512_dpbusd_epi32(r##3, x, w3);
static inline void o2c_dq64_dot4(const int8_t *W, const uint8_t *u0, const uint8_t *u1, const uint8_t *u2,
                                 const uint8_t *u3, o2c_int KQ, int32_t acc[4][64])
{
    __m512i x, e0 = _mm512_setzero_si512(), e1 = e0, e2 = e0, e3 = e0, f0 = e0, f1 = e0, f2 = e0, f3 = e0;
    __m512i g0 = e0, g1 = e0, g2 = e0, g3 = e0, h0 = e0, h1 = e0, h2 = e0, h3 = e0;
    const uint8_t *ue = u0, *uf = u1, *ug = u2, *uh = u3;
    int32_t v;
    for (o2c_int kq = 0; kq < KQ; kq++) {
        const int8_t *w = W + kq * 256;
        const __m512i w0 = _mm512_loadu_si512((const void *)w), w1 = _mm512_loadu_si512((const void *)(w + 64));
        const __m512i w2 = _mm512_loadu_si512((const void *)(w + 128)), w3 = _mm512_loadu_si512((const void *)(w + 192));
        O2C_DQ64_ROW(e) O2C_DQ64_ROW(f) O2C_DQ64_ROW(g) O2C_DQ64_ROW(h)
    }
#define O2C_DQ64_STORE(r, i)                                                \
    _mm512_storeu_si512((void *)acc[i], r##0);                              \
    _mm512_storeu_si512((void *)(acc[i] + 16), r##1);                       \
    _mm512_storeu_si512((void *)(acc[i] + 32), r##2);                       \
    _mm512_storeu_si512((void *)(acc[i] + 48), r##3);
    O2C_DQ64_STORE(e, 0) O2C_DQ64_STORE(f, 1) O2C_DQ64_STORE(g, 2) O2C_DQ64_STORE(h, 3)
#undef O2C_DQ64_STORE
}
#undef O2C_DQ64_ROW
#elif defined(__AVXVNNI__) && !defined(__CUDACC__)
#include <immintrin.h>
/* AVX-VNNI (ymm): 8 columns an accumulator, half a block at a time */
static inline void o2c_dq64_half(const int8_t *W, const uint8_t *u, o2c_int KQ, int32_t *acc)
{
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    int32_t v;
    for (o2c_int kq = 0; kq < KQ; kq++) {
        const int8_t *w = W + kq * 256;
        memcpy(&v, u + 4 * kq, sizeof v);
        const __m256i x = _mm256_set1_epi32(v);
        a0 = _mm256_dpbusd_avx_epi32(a0, x, _mm256_loadu_si256((const __m256i *)w));
        a1 = _mm256_dpbusd_avx_epi32(a1, x, _mm256_loadu_si256((const __m256i *)(w + 32)));
        a2 = _mm256_dpbusd_avx_epi32(a2, x, _mm256_loadu_si256((const __m256i *)(w + 64)));
        a3 = _mm256_dpbusd_avx_epi32(a3, x, _mm256_loadu_si256((const __m256i *)(w + 96)));
    }
    _mm256_storeu_si256((__m256i *)acc, a0);
    _mm256_storeu_si256((__m256i *)(acc + 8), a1);
    _mm256_storeu_si256((__m256i *)(acc + 16), a2);
    _mm256_storeu_si256((__m256i *)(acc + 24), a3);
}
static inline void o2c_dq64_dot(const int8_t *W, const uint8_t *u, o2c_int KQ, int32_t acc[64])
{
    o2c_dq64_half(W, u, KQ, acc);
    o2c_dq64_half(W + 128, u, KQ, acc + 32);
}
#else
O2C_HD static inline void o2c_dq64_dot(const int8_t *W, const uint8_t *u, o2c_int KQ, int32_t acc[64])
{
    for (int c = 0; c < 64; c++) acc[c] = 0;
    for (o2c_int kq = 0; kq < KQ; kq++) {
        const int8_t *w = W + kq * 256;
        const int32_t x0 = u[4 * kq], x1 = u[4 * kq + 1], x2 = u[4 * kq + 2], x3 = u[4 * kq + 3];
        for (int c = 0; c < 64; c++)
            acc[c] += x0 * w[4 * c] + x1 * w[4 * c + 1] + x2 * w[4 * c + 2] + x3 * w[4 * c + 3];
    }
}
#endif
#if !(defined(__AVX512VNNI__) && defined(__AVX512F__)) || defined(__CUDACC__)
/* four rows one after another (ymm or portable: no registers for more) */
O2C_HD static inline void o2c_dq64_dot4(const int8_t *W, const uint8_t *u0, const uint8_t *u1, const uint8_t *u2,
                                        const uint8_t *u3, o2c_int KQ, int32_t acc[4][64])
{
    o2c_dq64_dot(W, u0, KQ, acc[0]);
    o2c_dq64_dot(W, u1, KQ, acc[1]);
    o2c_dq64_dot(W, u2, KQ, acc[2]);
    o2c_dq64_dot(W, u3, KQ, acc[3]);
}
#endif

/* o2c_dqlstm_qu8_f32: index space G (groups), group g: ROWS rows of N
 *   values, row r at x[0] + OFF + g GSTRIDE + r N, quantized together as
 *   o2c_dqlstm_quant_f32 does but kept as uint8 q: y[0] row (g ROWS + r) of
 *   LD bytes (zeros past N); y[1][2 g], y[1][2 g + 1] = scale, zero point.
 *   O2C_DQL_QU8_* */
/*@ o2c_dqlstm_qu8_f32 needs o2c_dql_qparams params O2C_DQL_QU8 split */
O2C_KERNEL(o2c_dqlstm_qu8_f32)
{
    const float *X = (const float *)p->x[0];
    uint8_t *U = (uint8_t *)p->y[0];
    float *QP = (float *)p->y[1];
    const o2c_int rows = p->k[O2C_DQL_QU8_ROWS], n = p->k[O2C_DQL_QU8_N], off = p->k[O2C_DQL_QU8_OFF];
    const o2c_int gstride = p->k[O2C_DQL_QU8_GSTRIDE], ld = p->k[O2C_DQL_QU8_LD];
    O2C_FOR(g) {
        const float *x = X + off + g * gstride;
        float sc, z, qlo, qhi;
        o2c_dql_qparams(x, rows * n, &sc, &z, &qlo, &qhi);
        for (o2c_int r = 0; r < rows; r++) {
            uint8_t *u = U + (g * rows + r) * ld;
            for (o2c_int e = 0; e < n; e++) {
                float v = nearbyintf(x[r * n + e] / sc);
                v = v < qlo ? qlo : (v > qhi ? qhi : v);
                u[e] = (uint8_t)(int32_t)(v + z);
            }
            for (o2c_int e = n; e < ld; e++) u[e] = 0;
        }
        QP[2 * g] = sc;
        QP[2 * g + 1] = z;
    }
}

/* o2c_dqlstm_proj_q8_f32: the input product P [M, N] of the quantized
 *   rows U (x[0], M x 4 KQ bytes, quantization x[4] = {scale, zero point})
 *   and the packed weights x[1] (N / 64 blocks, see above):
 *   P[m, n] = (float)(sum_k U[m, k] W[n, k] - z WSUM[n]) * (scale * WS[n])
 *   x[2] WSUM (int32, N rounded up to 64), x[3] WS (float, N).
 *   Index space ceil(N / 64) x ceil(M / 4): a block of columns, four rows.
 *   O2C_DQL_PQ_* */
/*@ o2c_dqlstm_proj_q8_f32 needs o2c_dq64_dot params O2C_DQL_PQ split */
O2C_KERNEL(o2c_dqlstm_proj_q8_f32)
{
    const uint8_t *U = (const uint8_t *)p->x[0];
    const int8_t *W = (const int8_t *)p->x[1];
    const int32_t *WSUM = (const int32_t *)p->x[2];
    const float *WS = (const float *)p->x[3], *QP = (const float *)p->x[4];
    float *P = (float *)p->y[0];
    const o2c_int M = p->k[O2C_DQL_PQ_M], N = p->k[O2C_DQL_PQ_N], KQ = p->k[O2C_DQL_PQ_KQ];
    const o2c_int MG = (M + 3) / 4;
    const float sc = QP[0];
    const int32_t z = (int32_t)QP[1];
    int32_t acc[4][64];
    O2C_FOR(i) {
        const o2c_int nb = i / MG, m0 = i % MG * 4;
        const uint8_t *u[4];
        for (int r = 0; r < 4; r++) u[r] = U + (m0 + r < M ? m0 + r : m0) * 4 * KQ;
        o2c_dq64_dot4(W + nb * KQ * 256, u[0], u[1], u[2], u[3], KQ, acc);
        const o2c_int n0 = nb * 64, nc = N - n0 < 64 ? N - n0 : 64;
        for (int r = 0; r < 4 && m0 + r < M; r++) {
            float *pr = P + (m0 + r) * N + n0;
            for (o2c_int c = 0; c < nc; c++) {
                const float v = (float)(int32_t)((uint32_t)acc[r][c] - (uint32_t)z * (uint32_t)WSUM[n0 + c]);
                const float mu = sc * WS[n0 + c];
                pr[c] = v * mu;
            }
        }
    }
}

/* o2c_dqlstm_step_q8_f32: step s of the DynamicQuantizeLSTM on byte
 *   products, index space D x B x ceil(H / 16), element (d, b, hb): hidden
 *   units 16 hb .. 16 hb + 15 of (d, b), their four gates a block of 64
 *   columns (gate q, unit e: column 16 q + e) of the packed R (x[1]: block
 *   d ceil(H / 16) + hb). As o2c_dqlstm_step_f32 with
 *   x[2] the uint8 h rows (D B x 4 ceil(H / 4) bytes), x[3] RSUM (int32,
 *   the blocks' column sums), x[4] RS (float, the blocks' column scales),
 *   x[7] the quantizations {scale, zero point} a direction; default
 *   activations. O2C_RNN_*, O2C_RNN_F_CLIP */
/*@ o2c_dqlstm_step_q8_f32 needs o2c_dq64_dot o2c_vsigmoid_f32 o2c_vtanh_f32 params O2C_RNN split */
O2C_KERNEL(o2c_dqlstm_step_q8_f32)
{
    const float *P = (const float *)p->x[0];
    const int8_t *R = (const int8_t *)p->x[1];
    const uint8_t *Hu = (const uint8_t *)p->x[2];
    const int32_t *RSUM = (const int32_t *)p->x[3];
    const float *RS = (const float *)p->x[4], *Bias = (const float *)p->x[5], *Pp = (const float *)p->x[6];
    const float *QP = (const float *)p->x[7];
    float *S = (float *)p->y[0], *C = (float *)p->y[1];
    O2C_RNN_STEP_PARAMS(float);
    const o2c_int input_forget = p->k[O2C_RNN_FLAG];
    const o2c_int HB = (H + 15) / 16, KQ = (H + 3) / 4;
    int32_t acc[64];
    O2C_FOR(i) {
        const o2c_int hb = i % HB, b = i / HB % B, d = i / HB / B;
        const o2c_int t = (d == 1 || rev0) ? TT - 1 - s : s;
        const o2c_int blk = d * HB + hb, h0 = hb * 16, ne = H - h0 < 16 ? H - h0 : 16;
        o2c_dq64_dot(R + blk * KQ * 256, Hu + (d * B + b) * 4 * KQ, KQ, acc);
        const float sc = QP[2 * d];
        const int32_t z = (int32_t)QP[2 * d + 1];
        const int32_t *rsum = RSUM + blk * 64;
        const float *rs = RS + blk * 64;
        const float *pg = P + (t * B + b) * D * 4 * H + d * 4 * H + h0;
        const float *pp = Pp ? Pp + d * 3 * H + h0 : 0;
        const float *bs = Bias ? Bias + d * 8 * H + h0 : 0;
        float *cd = C + (d * B + b) * H + h0;
        float *hn = S + (((s + 1) * D + d) * B + b) * H + h0;
        for (o2c_int e = 0; e < ne; e++) {
            float g[4];
            for (int q = 0; q < 4; q++) {
                const o2c_int col = q * 16 + e;
                const float v = (float)(int32_t)((uint32_t)acc[col] - (uint32_t)z * (uint32_t)rsum[col]);
                const float mu = sc * rs[col];
                g[q] = pg[q * H + e] + v * mu;
            }
            const float cp = cd[e];
            if (pp) { g[0] += pp[e] * cp; g[2] += pp[2 * H + e] * cp; }
            if (bs) {
                g[0] += bs[e] + bs[4 * H + e];
                g[2] += bs[2 * H + e] + bs[6 * H + e];
                g[3] += bs[3 * H + e] + bs[7 * H + e];
            }
            const float ig = o2c_vsigmoid_f32(O2C_RNN_CLIP(g[0]));
            const float fg = input_forget ? 1.0f - ig : o2c_vsigmoid_f32(O2C_RNN_CLIP(g[2]));
            const float cg = o2c_vtanh_f32(O2C_RNN_CLIP(g[3]));
            const float cn = fg * cp + ig * cg;
            if (pp) g[1] += pp[H + e] * cn;
            if (bs) g[1] += bs[H + e] + bs[5 * H + e];
            const float og = o2c_vsigmoid_f32(O2C_RNN_CLIP(g[1]));
            cd[e] = cn;
            hn[e] = o2c_vtanh_f32(cn) * og;
        }
    }
}

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_RNN(K, F)                                                          \
    K(o2c_rnn_proj_f32, F) K(o2c_rnn_proj_f64, F) K(o2c_rnn_init_f32, F) K(o2c_rnn_init_f64, F) \
    K(o2c_rnn_step_f32, F) K(o2c_rnn_step_f64, F) K(o2c_gru_reset_f32, F)                    \
    K(o2c_gru_reset_f64, F) K(o2c_gru_step_f32, F) K(o2c_gru_step_f64, F)                    \
    K(o2c_lstm_step_f32, F) K(o2c_lstm_step_f64, F) K(o2c_lstm_seq_f32, F) K(o2c_rnn_y_f32, F) K(o2c_rnn_y_f64, F)     \
    K(o2c_rnn_last_f32, F) K(o2c_rnn_last_f64, F)                                        \
    K(o2c_dqlstm_quant_f32, F) K(o2c_dqlstm_proj_f32, F) K(o2c_dqlstm_step_f32, F)        \
    K(o2c_dqlstm_qu8_f32, F) K(o2c_dqlstm_proj_q8_f32, F) K(o2c_dqlstm_step_q8_f32, F)
