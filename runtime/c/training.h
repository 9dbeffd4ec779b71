/* One step of the training optimizers of domain ai.onnx.preview.training
 * (Adagrad, Momentum, Adam), elementwise over each optimized tensor. The
 * learning rate R and the update count T are read at run time; the rest are
 * attributes (runtime/c/params/training.h). Arithmetic in the tensors' type. */

#define O2C_TRAIN_R(T) (*(const T *)p->x[0])
#define O2C_TRAIN_T (*(const int64_t *)p->x[1])

/* r = R / (1 + T decay); g = norm X + G; H' = H + g g; X' = X - r g / (sqrt(H') + eps) */
#define O2C_ADAGRAD_DEF(NAME, TY)                                            \
    O2C_KERNEL(NAME)                                                         \
    {                                                                        \
        typedef TY T;                                                        \
        const T *X = (const T *)p->x[2], *G = (const T *)p->x[3], *H = (const T *)p->x[4]; \
        T *Xn = (T *)p->y[0], *Hn = (T *)p->y[1];                            \
        const T r = O2C_TRAIN_R(T) / ((T)1 + (T)O2C_TRAIN_T * O2C_PF(TY, p, O2C_ADAGRAD_F_DECAY)); \
        const T norm = O2C_PF(TY, p, O2C_ADAGRAD_F_NORM), eps = O2C_PF(TY, p, O2C_ADAGRAD_F_EPS); \
        O2C_FOR(i) {                                                         \
            const T g = norm * X[i] + G[i], h = H[i] + g * g;                \
            Hn[i] = h;                                                       \
            Xn[i] = X[i] - r * g / (O2C_M(TY, sqrt)(h) + eps);                \
        }                                                                    \
    }

/* g = norm X + G; V' = alpha V + (T > 0 ? beta : 1) g;
 * X' = X - R V' (standard) or X - R (g + alpha V') (nesterov) */
#define O2C_MOMENTUM_DEF(NAME, TY)                                           \
    O2C_KERNEL(NAME)                                                         \
    {                                                                        \
        typedef TY T;                                                        \
        const T *X = (const T *)p->x[2], *G = (const T *)p->x[3], *V = (const T *)p->x[4]; \
        T *Xn = (T *)p->y[0], *Vn = (T *)p->y[1];                            \
        const T R = O2C_TRAIN_R(T), alpha = O2C_PF(TY, p, O2C_MOMENTUM_F_ALPHA); \
        const T beta = O2C_TRAIN_T > 0 ? O2C_PF(TY, p, O2C_MOMENTUM_F_BETA) : (T)1; \
        const T norm = O2C_PF(TY, p, O2C_MOMENTUM_F_NORM);                    \
        const int nesterov = p->k[O2C_MOMENTUM_NESTEROV] != 0;               \
        O2C_FOR(i) {                                                         \
            const T g = norm * X[i] + G[i], v = alpha * V[i] + beta * g;     \
            Vn[i] = v;                                                       \
            Xn[i] = X[i] - R * (nesterov ? g + alpha * v : v);               \
        }                                                                    \
    }

/* g = norm X + G; V' = alpha V + (1 - alpha) g; H' = beta H + (1 - beta) g g */
#define O2C_ADAM_MOMENTS_DEF(NAME, TY)                                       \
    O2C_KERNEL(NAME)                                                         \
    {                                                                        \
        typedef TY T;                                                        \
        const T *X = (const T *)p->x[0], *G = (const T *)p->x[1];            \
        const T *V = (const T *)p->x[2], *H = (const T *)p->x[3];            \
        T *Vn = (T *)p->y[0], *Hn = (T *)p->y[1];                            \
        const T alpha = O2C_PF(TY, p, O2C_ADAM_F_ALPHA), beta = O2C_PF(TY, p, O2C_ADAM_F_BETA); \
        const T norm = O2C_PF(TY, p, O2C_ADAM_F_NORM);                        \
        O2C_FOR(i) {                                                         \
            const T g = norm * X[i] + G[i];                                  \
            Vn[i] = alpha * V[i] + ((T)1 - alpha) * g;                       \
            Hn[i] = beta * H[i] + ((T)1 - beta) * g * g;                     \
        }                                                                    \
    }

/* r = T > 0 ? R sqrt(1 - beta^T) / (1 - alpha^T) : R;
 * X' = (1 - post) (X - r V' / (sqrt(H') + eps)) */
#define O2C_ADAM_UPDATE_DEF(NAME, TY)                                        \
    O2C_KERNEL(NAME)                                                         \
    {                                                                        \
        typedef TY T;                                                        \
        const T *X = (const T *)p->x[2], *V = (const T *)p->x[3], *H = (const T *)p->x[4]; \
        T *Xn = (T *)p->y[0];                                                \
        const T alpha = O2C_PF(TY, p, O2C_ADAM_F_ALPHA), beta = O2C_PF(TY, p, O2C_ADAM_F_BETA); \
        const T eps = O2C_PF(TY, p, O2C_ADAM_F_EPS), post = O2C_PF(TY, p, O2C_ADAM_F_POST); \
        const o2c_int t = O2C_TRAIN_T;                                       \
        T r = O2C_TRAIN_R(T);                                                \
        if (t > 0)                                                           \
            r = r * O2C_M(TY, sqrt)((T)1 - O2C_M(TY, pow)(beta, (T)t)) / ((T)1 - O2C_M(TY, pow)(alpha, (T)t)); \
        O2C_FOR(i) Xn[i] = ((T)1 - post) * (X[i] - r * V[i] / (O2C_M(TY, sqrt)(H[i]) + eps)); \
    }

/*@ o2c_adagrad_f32 params O2C_ADAGRAD */
O2C_ADAGRAD_DEF(o2c_adagrad_f32, float)
/*@ o2c_adagrad_f64 params O2C_ADAGRAD */
O2C_ADAGRAD_DEF(o2c_adagrad_f64, double)
/*@ o2c_momentum_f32 params O2C_MOMENTUM */
O2C_MOMENTUM_DEF(o2c_momentum_f32, float)
/*@ o2c_momentum_f64 params O2C_MOMENTUM */
O2C_MOMENTUM_DEF(o2c_momentum_f64, double)
/*@ o2c_adam_moments_f32 params O2C_ADAM */
O2C_ADAM_MOMENTS_DEF(o2c_adam_moments_f32, float)
/*@ o2c_adam_moments_f64 params O2C_ADAM */
O2C_ADAM_MOMENTS_DEF(o2c_adam_moments_f64, double)
/*@ o2c_adam_update_f32 params O2C_ADAM O2C_ADAM_F_EPS */
O2C_ADAM_UPDATE_DEF(o2c_adam_update_f32, float)
/*@ o2c_adam_update_f64 params O2C_ADAM O2C_ADAM_F_EPS */
O2C_ADAM_UPDATE_DEF(o2c_adam_update_f64, double)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_TRAINING(K, F)                                              \
    K(o2c_adagrad_f32, F) K(o2c_adagrad_f64, F) K(o2c_momentum_f32, F) K(o2c_momentum_f64, F) \
    K(o2c_adam_moments_f32, F) K(o2c_adam_moments_f64, F) K(o2c_adam_update_f32, F) K(o2c_adam_update_f64, F)
