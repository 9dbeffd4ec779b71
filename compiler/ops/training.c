/* One step of the training optimizers of domain ai.onnx.preview.training:
 * Adagrad, Momentum, Adam. Inputs: the learning rate R and the update count T
 * (scalars, read at run time), then the optimized tensors X1..Xn, their
 * gradients G1..Gn and their state (H, V, or V and H), each group in that
 * order; outputs: the new X1..Xn, then the new state tensors. Each tensor is
 * updated independently (runtime/c/training.h). */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/training.h"

/* groups of inputs after R and T (X, G and the state), and outputs per tensor */
static int train_groups(const Node *n) { return !strcmp(n->op_type, "Adam") ? 4 : 3; }
static int train_outs(const Node *n) { return !strcmp(n->op_type, "Adam") ? 3 : 2; }

void infer_training(Node *n)
{
    int groups = train_groups(n), outs = train_outs(n);
    if ((n->nin - 2) % groups || n->nin < 2 + groups)
        fail("%s takes R, T and %d tensors per optimized tensor; it has %d inputs", n->op_type, groups, n->nin);
    int k = (n->nin - 2) / groups;
    if (n->nout != outs * k)
        fail("%s optimizing %d tensor%s has %d outputs; it needs %d (the new X, then the new state)", n->op_type, k,
             k > 1 ? "s" : "", n->nout, outs * k);
    if (!strcmp(n->op_type, "Momentum"))
        for (const char *const *a = (const char *const[]){"alpha", "beta", "mode", "norm_coefficient", NULL}; *a; a++)
            if (!attr_has(n, *a)) fail("Momentum needs the attribute %s", *a);
    Tensor *r = need_in(n, 0), *t = need_in(n, 1);
    need_dtype(n, r, DTS_FLOAT);
    static const int DTS_I64[] = {DT_INT64, 0};
    need_dtype(n, t, DTS_I64);
    if (tensor_numel(r) != 1 || tensor_numel(t) != 1)
        fail("R ('%s') and T ('%s') must be scalars", r->name, t->name);
    for (int j = 0; j < k; j++) {
        Tensor *x = need_in(n, 2 + j);
        if (x->dtype != r->dtype)
            fail("X ('%s') is %s and R is %s; onnx2c needs one type", x->name, dtype_name(x->dtype), dtype_name(r->dtype));
        for (int g = 1; g < groups; g++) {
            Tensor *o = need_in(n, 2 + g * k + j);
            if (o->dtype != x->dtype || o->rank != x->rank || memcmp(o->dims, x->dims, sizeof(int64_t) * (size_t)x->rank))
                fail("'%s' (%s %s) must have the type and shape of X ('%s', %s %s)", o->name, dtype_name(o->dtype),
                     tensor_shape_str(o), x->name, dtype_name(x->dtype), tensor_shape_str(x));
        }
        for (int o = 0; o < outs; o++) out_like(n, o * k + j, x);
    }
}

void lower_training(Node *n, Lowering *L)
{
    int groups = train_groups(n), k = (n->nin - 2) / groups;
    Tensor *r = n->in[0], *t = n->in[1];
    const char *sfx = dtype_suffix(r->dtype);
    for (int j = 0; j < k; j++) {
        Tensor *x = n->in[2 + j], *g = n->in[2 + k + j], *s1 = n->in[2 + 2 * k + j];
        int64_t ne = tensor_numel(x);
        KCall *c;
        if (!strcmp(n->op_type, "Adam")) {
            Tensor *s2 = n->in[2 + 3 * k + j], *vn = n->out[k + j], *hn = n->out[2 * k + j];
            c = lower_call(L, xfmt("o2c_adam_moments_%s", sfx), ne);
            c->x[0] = x; c->x[1] = g; c->x[2] = s1; c->x[3] = s2;
            c->y[0] = vn; c->y[1] = hn;
            c->f[O2C_ADAM_F_ALPHA] = attr_f(n, "alpha");
            c->f[O2C_ADAM_F_BETA] = attr_f(n, "beta");
            c->f[O2C_ADAM_F_NORM] = attr_f(n, "norm_coefficient");
            c = lower_call(L, xfmt("o2c_adam_update_%s", sfx), ne);
            c->x[0] = r; c->x[1] = t; c->x[2] = x; c->x[3] = vn; c->x[4] = hn;
            c->y[0] = n->out[j];
            c->f[O2C_ADAM_F_ALPHA] = attr_f(n, "alpha");
            c->f[O2C_ADAM_F_BETA] = attr_f(n, "beta");
            c->f[O2C_ADAM_F_EPS] = attr_f(n, "epsilon");
            c->f[O2C_ADAM_F_POST] = attr_f(n, "norm_coefficient_post");
            continue;
        }
        int ada = !strcmp(n->op_type, "Adagrad");
        c = lower_call(L, xfmt(ada ? "o2c_adagrad_%s" : "o2c_momentum_%s", sfx), ne);
        c->x[0] = r; c->x[1] = t; c->x[2] = x; c->x[3] = g; c->x[4] = s1;
        c->y[0] = n->out[j];
        c->y[1] = n->out[k + j];
        if (ada) {
            c->f[O2C_ADAGRAD_F_NORM] = attr_f(n, "norm_coefficient");
            c->f[O2C_ADAGRAD_F_DECAY] = attr_f(n, "decay_factor");
            c->f[O2C_ADAGRAD_F_EPS] = attr_f(n, "epsilon");
        } else {
            const char *mode = attr_s(n, "mode");
            if (strcmp(mode, "standard") && strcmp(mode, "nesterov"))
                fail("mode '%s' is not one of standard, nesterov", mode);
            c->k[O2C_MOMENTUM_NESTEROV] = !strcmp(mode, "nesterov");
            c->f[O2C_MOMENTUM_F_NORM] = attr_f(n, "norm_coefficient");
            c->f[O2C_MOMENTUM_F_ALPHA] = attr_f(n, "alpha");
            c->f[O2C_MOMENTUM_F_BETA] = attr_f(n, "beta");
        }
    }
}
