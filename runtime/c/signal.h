/* Signal kernels: DFT and STFT. See o2c_rt.h for the calling convention;
 * parameter slots in runtime/c/params/signal.h. The windows
 * (Hann/Hamming/Blackman) and MelWeightMatrix depend on constants only:
 * the compiler computes them (compiler/ops/signal.c).
 *
 * The DFTs are direct sums over a twiddle table computed by the compiler
 * (in double, stored in the element type): entry j of a table of length n
 * is cos(2 pi j / n), sin(2 pi j / n), so the term of frequency k and
 * sample t uses entry (k t) mod n. */

/* DFT along one axis of X (..., L, ..., c), c = 1 (real) or 2 (complex).
 * Index space: output points (outer, K, inner); each writes 2 values
 * (real, imaginary), or 1 for IRFFT. Forward: sum over t < min(L, n) of
 * x_t e^{-2 pi i k t / n}; inverse: e^{+...} / n; IRFFT: the real signal of
 * the Hermitian spectrum given by its first n/2 + 1 values (the imaginary
 * parts of the 0th and, for even n, the n/2-th ignored). A run-time axis
 * outside [0, rank - 2] gives NaN.
 *   x[0] X, x[1] twiddles, x[2] the axis (int64) when O2C_DFT_AXIS is -1
 *   O2C_DFT_* */
#define O2C_DFT_DEF(NAME, T)                                               \
    O2C_KERNEL(NAME)                                                       \
    {                                                                      \
        const T *X = (const T *)p->x[0];                                   \
        const T *TW = (const T *)p->x[1];                                  \
        T *Y = (T *)p->y[0];                                               \
        const o2c_int r = p->k[O2C_DFT_RANK], *dims = p->k + O2C_DFT_DIMS; \
        const o2c_int inv = p->k[O2C_DFT_INV], irfft = p->k[O2C_DFT_IRFFT]; \
        const o2c_int cin = dims[r - 1], cout = irfft ? 1 : 2;             \
        o2c_int ax = p->k[O2C_DFT_AXIS], L, n, K, inner = 1, d;            \
        const T *tw;                                                       \
        if (ax < 0) {                                                      \
            ax = *(const int64_t *)p->x[2];                                \
            if (ax < 0) ax += r;                                           \
            if (ax < 0 || ax > r - 2) {                                    \
                O2C_FOR(i) {                                               \
                    Y[i * cout] = (T)NAN;                                  \
                    if (cout == 2) Y[i * cout + 1] = (T)NAN;               \
                }                                                          \
                return;                                                    \
            }                                                              \
        }                                                                  \
        L = dims[ax];                                                      \
        n = p->k[O2C_DFT_N] > 0 ? p->k[O2C_DFT_N] : L;                     \
        K = p->k[O2C_DFT_K] > 0 ? p->k[O2C_DFT_K] : L;                     \
        tw = TW + p->k[O2C_DFT_TW + ax];                                   \
        for (d = ax + 1; d < r - 1; d++) inner *= dims[d];                 \
        O2C_FOR(i) {                                                       \
            const o2c_int in = i % inner, k = (i / inner) % K, o = i / (inner * K); \
            const T *xp = X + (o * L * inner + in) * cin;                  \
            const o2c_int step = inner * cin;                              \
            o2c_int t;                                                     \
            if (irfft) {                                                   \
                const o2c_int m = L < n / 2 + 1 ? L : n / 2 + 1;           \
                T acc = m > 0 ? xp[0] : (T)0;                              \
                for (t = 1; t < m; t++) {                                  \
                    const o2c_int j = (t * k) % n;                         \
                    const T xr = xp[t * step], xi = cin == 2 ? xp[t * step + 1] : (T)0; \
                    if (2 * t < n) acc += 2 * (xr * tw[2 * j] - xi * tw[2 * j + 1]); \
                    else acc += xr * tw[2 * j];                            \
                }                                                          \
                Y[i] = acc / (T)n;                                         \
            } else {                                                       \
                const o2c_int m = L < n ? L : n;                           \
                T re = 0, im = 0;                                          \
                for (t = 0; t < m; t++) {                                  \
                    const o2c_int j = (t * k) % n;                         \
                    const T xr = xp[t * step], xi = cin == 2 ? xp[t * step + 1] : (T)0; \
                    const T c = tw[2 * j], s = inv ? tw[2 * j + 1] : -tw[2 * j + 1]; \
                    re += xr * c - xi * s;                                 \
                    im += xr * s + xi * c;                                 \
                }                                                          \
                if (inv) {                                                 \
                    re /= (T)n;                                            \
                    im /= (T)n;                                            \
                }                                                          \
                Y[2 * i] = re;                                             \
                Y[2 * i + 1] = im;                                         \
            }                                                              \
        }                                                                  \
    }

/* STFT: frame f of batch b is the signal from f * step, n samples long,
 * times the window; its DFT's first K bins. Index space: output points
 * (B, F, K); each writes real and imaginary.
 *   x[0] signal (B, L, c), x[1] window (n) or NULL, x[2] twiddles (n)
 *   O2C_STFT_* */
#define O2C_STFT_DEF(NAME, T)                                              \
    O2C_KERNEL(NAME)                                                       \
    {                                                                      \
        const T *X = (const T *)p->x[0];                                   \
        const T *WN = (const T *)p->x[1];                                  \
        const T *TW = (const T *)p->x[2];                                  \
        T *Y = (T *)p->y[0];                                               \
        const o2c_int L = p->k[O2C_STFT_L], cin = p->k[O2C_STFT_CIN], step = p->k[O2C_STFT_STEP]; \
        const o2c_int n = p->k[O2C_STFT_NLEN], F = p->k[O2C_STFT_F], K = p->k[O2C_STFT_K]; \
        O2C_FOR(i) {                                                       \
            const o2c_int k = i % K, f = (i / K) % F, b = i / (K * F);     \
            const o2c_int s0 = f * step;                                   \
            T re = 0, im = 0;                                              \
            o2c_int t;                                                     \
            for (t = 0; t < n && s0 + t < L; t++) {                        \
                const T *xp = X + (b * L + s0 + t) * cin;                  \
                const T w = WN ? WN[t] : (T)1;                             \
                const T xr = xp[0] * w, xi = cin == 2 ? xp[1] * w : (T)0;  \
                const o2c_int j = (t * k) % n;                             \
                const T c = TW[2 * j], s = -TW[2 * j + 1];                 \
                re += xr * c - xi * s;                                     \
                im += xr * s + xi * c;                                     \
            }                                                              \
            Y[2 * i] = re;                                                 \
            Y[2 * i + 1] = im;                                             \
        }                                                                  \
    }

/*@ o2c_dft_f32 params O2C_DFT */
O2C_DFT_DEF(o2c_dft_f32, float)
/*@ o2c_dft_f64 params O2C_DFT */
O2C_DFT_DEF(o2c_dft_f64, double)
/*@ o2c_stft_f32 params O2C_STFT */
O2C_STFT_DEF(o2c_stft_f32, float)
/*@ o2c_stft_f64 params O2C_STFT */
O2C_STFT_DEF(o2c_stft_f64, double)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_SIGNAL(K, F) K(o2c_dft_f32, F) K(o2c_dft_f64, F) K(o2c_stft_f32, F) K(o2c_stft_f64, F)
