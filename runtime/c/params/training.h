/* Parameter slots of the training-step kernels (runtime/c/training.h): the
 * lowering (compiler/ops/training.c) writes c->f[NAME], the kernel reads
 * O2C_PF(T, p, NAME). Every kernel reads the learning rate R (x[0], the
 * optimized tensors' type) and the update count T (x[1], int64) at run time. */

/* o2c_adagrad_T: x = R, T, X, G, H; y = X_new, H_new */
enum {
    O2C_ADAGRAD_F_NORM,      /* norm_coefficient */
    O2C_ADAGRAD_F_DECAY,     /* decay_factor */
    O2C_ADAGRAD_F_EPS,       /* epsilon */
    O2C_ADAGRAD_NF
};
O2C_PARAMS_FIT(adagrad, 0, O2C_ADAGRAD_NF)

/* o2c_momentum_T: x = R, T, X, G, V; y = X_new, V_new */
enum { O2C_MOMENTUM_NESTEROV, O2C_MOMENTUM_NK };   /* 1: mode "nesterov", 0: "standard" */
enum {
    O2C_MOMENTUM_F_NORM,     /* norm_coefficient */
    O2C_MOMENTUM_F_ALPHA,    /* decay of the previous momentum */
    O2C_MOMENTUM_F_BETA,     /* scale of the current gradient (1 at T = 0) */
    O2C_MOMENTUM_NF
};
O2C_PARAMS_FIT(momentum, O2C_MOMENTUM_NK, O2C_MOMENTUM_NF)

/* Adam in two calls (three outputs a tensor):
 * o2c_adam_moments_T: x = X, G, V, H; y = V_new, H_new
 * o2c_adam_update_T:  x = R, T, X, V_new, H_new; y = X_new */
enum {
    O2C_ADAM_F_ALPHA,        /* decay of the averaged gradient */
    O2C_ADAM_F_BETA,         /* decay of the averaged squared gradient */
    O2C_ADAM_F_NORM,         /* moments: norm_coefficient; update: epsilon */
    O2C_ADAM_F_POST,         /* update: norm_coefficient_post */
    O2C_ADAM_NF
};
#define O2C_ADAM_F_EPS O2C_ADAM_F_NORM
O2C_PARAMS_FIT(adam, 0, O2C_ADAM_NF)
