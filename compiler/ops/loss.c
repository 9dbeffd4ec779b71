/* Loss ops: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss (kernels in
 * runtime/c/loss.h; the log-softmax of SoftmaxCrossEntropyLoss is norm.h's
 * o2c_softmax_T).
 *
 * Both take an input of shape N x C x d1 .. dk (k >= 0), int32/int64
 * labels of shape N x d1 .. dk, optional class weights of shape C, the
 * attributes reduction (none, sum, mean) and ignore_index (optional). The
 * loss has the labels' shape (reduction none) or is a scalar.
 * SoftmaxCrossEntropyLoss's optional second output is the log-softmax of
 * the input over the class axis. */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/loss.h"
#include "../../runtime/c/params/norm.h"

/* a tensor that is used: consumed by a node or a graph output */
static int used(const Tensor *t) { return t && (t->nuses > 0 || t->is_output); }

static int loss_reduction(Node *n)
{
    const char *r = attr_s(n, "reduction");
    if (!strcmp(r, "none")) return O2C_LOSS_NONE;
    if (!strcmp(r, "sum")) return O2C_LOSS_SUM;
    if (!strcmp(r, "mean")) return O2C_LOSS_MEAN;
    fail("reduction '%s' is not one of none, sum, mean", r);
}

static int64_t loss_inner(const Tensor *x)
{
    int64_t d = 1;
    for (int a = 2; a < x->rank; a++) d *= x->dims[a];
    return d;
}

/* the checks and the loss output shared by both ops */
static void infer_loss_common(Node *n)
{
    Tensor *x = n->in[0], *t = need_in(n, 1), *w = in_t(n, 2);
    need_dtype(n, x, DTS_FLOAT);
    need_dtype(n, t, DTS_INDEX);
    if (x->rank < 2) fail("the input '%s' has rank %d; it must be N x C x d1 .. dk (rank 2 or more)", x->name, x->rank);
    if (t->rank != x->rank - 1) fail("the labels '%s' (%s) must have rank %d: the input's shape without the class axis",
                                     t->name, tensor_shape_str(t), x->rank - 1);
    for (int a = 0; a < t->rank; a++) {
        int64_t want = x->dims[a ? a + 1 : 0];
        if (t->dims[a] != want)
            fail("the labels' shape %s is not the input's shape %s without the class axis", tensor_shape_str(t),
                 tensor_shape_str(x));
    }
    if (w) {
        if (w->dtype != x->dtype) fail("the weights '%s' must have the input's type (%s)", w->name, dtype_name(x->dtype));
        if (w->rank != 1 || w->dims[0] != x->dims[1])
            fail("the weights '%s' (%s) must be one value per class (%lld)", w->name, tensor_shape_str(w),
                 (long long)x->dims[1]);
    }
    if (loss_reduction(n) == O2C_LOSS_NONE) set_out(n, 0, x->dtype, t->rank, t->dims);
    else set_out(n, 0, x->dtype, 0, NULL);
}

void infer_nllloss(Node *n) { infer_loss_common(n); }

void infer_sce_loss(Node *n)
{
    infer_loss_common(n);
    if (n->nout > 1 && n->out[1]) out_like(n, 1, n->in[0]);
}

/* the o2c_nll_T call: loss of the log-probabilities lp */
static void lower_nll_call(Node *n, Lowering *L, Tensor *lp)
{
    Tensor *t = n->in[1], *w = in_t(n, 2), *y = n->out[0];
    int red = loss_reduction(n);
    int64_t N = lp->dims[0], C = lp->dims[1], D = loss_inner(lp);
    KCall *c = lower_call(L, xfmt("o2c_nll_%s", dtype_suffix(lp->dtype)), red == O2C_LOSS_NONE ? N * D : 1);
    c->x[0] = lp;
    c->x[1] = t;
    c->x[2] = w;
    c->y[0] = y;
    c->k[O2C_NLL_N] = N;
    c->k[O2C_NLL_C] = C;
    c->k[O2C_NLL_D] = D;
    c->k[O2C_NLL_LSIZE] = (int64_t)dtype_size(t->dtype);
    c->k[O2C_NLL_REDUCTION] = red;
    c->k[O2C_NLL_HAS_II] = attr_has(n, "ignore_index");
    c->k[O2C_NLL_II] = attr_has(n, "ignore_index") ? attr_i(n, "ignore_index") : 0;
}

void lower_nllloss(Node *n, Lowering *L) { lower_nll_call(n, L, n->in[0]); }

void lower_sce_loss(Node *n, Lowering *L)
{
    Tensor *x = n->in[0];
    Tensor *lp = n->nout > 1 && used(n->out[1]) ? n->out[1] : lower_temp(L, x->dtype, x->rank, x->dims);
    int64_t N = x->dims[0], C = x->dims[1], D = loss_inner(x);
    if (C > 0 && N * D > 0) {
        /* log-softmax over the class axis: rows N x D, each C values D apart */
        KCall *c = lower_call(L, xfmt("o2c_softmax_%s", dtype_suffix(x->dtype)), N * D);
        c->x[0] = x;
        c->y[0] = lp;
        c->k[O2C_SOFTMAX_A] = C;
        c->k[O2C_SOFTMAX_INNER] = D;
        c->k[O2C_SOFTMAX_LOG] = 1;
        if (L->tiled && x->dtype == DT_FLOAT && D == 1) c->kernel = kernel_find("o2c_softmax_rows_f32");
    }
    lower_nll_call(n, L, lp);
}
