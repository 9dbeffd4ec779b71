/* Pass fuse_attention: the attention core
 *     S = MatMul(Q, K^T) -> scale (Mul or Div by a constant) -> Add(mask)
 *       -> Softmax(last axis) -> MatMul(., V)
 * becomes one onnx2c.FusedAttention node (compiler/ops/attention.c). The scale
 * may also be applied to Q or to K^T before the MatMul (the factors
 * multiply), the mask Add is optional and comes after the scale. The
 * Transposes that make Q, K^T and V, and one Transpose of the result, are
 * folded into the node's perms when nothing else reads them, so K may be
 * given already transposed or through a Transpose node. Every absorbed
 * intermediate must be read by the pattern alone. */
#include "pattern.h"

#define MAX_PEEL 8

/* A tensor seen through Transposes: logical = transpose(t, perm). */
typedef struct Src {
    Tensor *t;
    int64_t perm[MAX_RANK];
} Src;

/* Scale factor of a single-use Mul/Div node n of t by a one-value
 * constant that does not change t's shape; 0 if n is not one. */
static int scale_node(Graph *g, Node *n, Tensor **in, double *f)
{
    double c;
    if (!tensor_single_use(g, n->out[0]) || n->nin != 2) return 0;
    if (pat_is(n, "Mul")) {
        for (int j = 0; j < 2; j++)
            if (!n->in[j]->data && pat_scalar(n->in[1 - j], &c) && pat_same_shape(n->out[0], n->in[j])) {
                *in = n->in[j];
                *f = c;
                return 1;
            }
    } else if (pat_is(n, "Div") && !n->in[0]->data && pat_scalar(n->in[1], &c) && c != 0 &&
               pat_same_shape(n->out[0], n->in[0])) {
        *in = n->in[0];
        *f = 1 / c;
        return 1;
    }
    return 0;
}

/* Walks back from t through single-use Transposes and (with scale != NULL)
 * scalings, adding the nodes to m. */
static void peel(Graph *g, Tensor *t, Src *s, double *scale, PatMatch *m)
{
    s->t = t;
    for (int a = 0; a < t->rank; a++) s->perm[a] = a;
    for (int k = 0; k < MAX_PEEL && m->n < PAT_MAX_NODES - 4; k++) {
        Node *n = s->t->producer;
        if (!n || !tensor_single_use(g, s->t)) return;
        Tensor *in;
        double f;
        if (pat_is(n, "Transpose")) {
            const int64_t *p;
            int len = attr_ints(n, "perm", &p);
            int64_t np[MAX_RANK];
            for (int a = 0; a < s->t->rank; a++)
                np[a] = len ? p[s->perm[a]] : s->t->rank - 1 - s->perm[a];   /* default: reverse */
            memcpy(s->perm, np, sizeof np);
            s->t = n->in[0];
        } else if (scale && scale_node(g, n, &in, &f)) {
            *scale *= f;
            s->t = in;
        } else {
            return;
        }
        pat_add(m, n);
    }
}

static int softmax_last(const Node *sm)
{
    Tensor *x = sm->in[0];
    int64_t a = attr_has(sm, "axis") ? attr_i(sm, "axis") : (sm->opset < 13 ? 1 : -1);
    if (a < 0) a += x->rank;
    return a == x->rank - 1;
}

int pass_fuse_attention(Graph *g)
{
    int changes = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *sm = g->nodes[i];
        if (!pat_is(sm, "Softmax") || !pat_float(sm->in[0]) || sm->in[0]->rank < 2 || !softmax_last(sm)) continue;
        int dt = sm->in[0]->dtype;
        Tensor *att = sm->out[0];
        Node *mm2 = pat_single_reader(g, att);
        if (!mm2 || !pat_is(mm2, "MatMul") || mm2->in[0] != att || mm2->in[1] == att || mm2->in[1]->rank < 2)
            continue;
        PatMatch m = {{0}, 0};
        pat_add(&m, sm);
        pat_add(&m, mm2);
        double scale = 1;
        /* back from the softmax: [Add(mask)] <- [scale] <- MatMul */
        Tensor *s = sm->in[0], *mask = NULL;
        if (!tensor_single_use(g, s)) continue;
        Node *add = pat_prod(s, "Add");
        if (add) {
            int found = 0;
            for (int j = 0; j < 2 && !found; j++) {
                Tensor *c = add->in[j], *mk = add->in[1 - j], *in;
                Node *p = c->producer;
                double f;
                if (!tensor_single_use(g, c) || !p || !pat_same_shape(c, s) || mk->dtype != dt || c == mk) continue;
                if (pat_is(p, "MatMul") || (scale_node(g, p, &in, &f) && pat_prod(in, "MatMul"))) {
                    mask = mk;
                    pat_add(&m, add);
                    s = c;
                    found = 1;
                }
            }
            if (!found) continue;
        }
        Node *p = s->producer, *mm1;
        Tensor *in;
        double f;
        if (p && !pat_is(p, "MatMul") && scale_node(g, p, &in, &f)) {
            pat_add(&m, p);
            scale *= f;
            s = in;
        }
        mm1 = pat_prod(s, "MatMul");
        if (!mm1 || !tensor_single_use(g, s) || mm1->in[0]->rank < 2 || mm1->in[1]->rank < 2) continue;
        pat_add(&m, mm1);
        Src q, kt, v;
        peel(g, mm1->in[0], &q, &scale, &m);
        peel(g, mm1->in[1], &kt, &scale, &m);
        peel(g, mm2->in[1], &v, NULL, &m);
        if (q.t->dtype != dt || kt.t->dtype != dt || v.t->dtype != dt) continue;
        if (!isfinite(scale)) continue;
        /* K's perm: K^T's with the last two axes swapped */
        int64_t kp[MAX_RANK];
        int rk = kt.t->rank;
        memcpy(kp, kt.perm, sizeof kp);
        kp[rk - 2] = kt.perm[rk - 1];
        kp[rk - 1] = kt.perm[rk - 2];
        if (kt.t->dims[kp[rk - 2]] == 0) continue;     /* no keys */
        /* one Transpose of the result */
        Tensor *y = mm2->out[0];
        Node *last = mm2, *ty = pat_single_reader(g, y);
        int64_t yp[MAX_RANK];
        for (int a = 0; a < y->rank; a++) yp[a] = a;
        if (ty && pat_is(ty, "Transpose")) {
            const int64_t *pp;
            int len = attr_ints(ty, "perm", &pp);
            for (int a = 0; a < y->rank; a++) yp[a] = len ? pp[a] : y->rank - 1 - a;
            pat_add(&m, ty);
            last = ty;
            y = ty->out[0];
        }
        Tensor *ins[4] = {q.t, kt.t, v.t, mask};
        Node *n = pat_replace(g, &m, last, "FusedAttention", "onnx2c", ins, mask ? 4 : 3, y);
        node_set_attr_f(n, "scale", scale);
        Src *srcs[3] = {&q, NULL, &v};
        static const char *const names[3] = {"q_perm", "k_perm", "v_perm"};
        for (int j = 0; j < 3; j++) {
            const int64_t *pp = j == 1 ? kp : srcs[j]->perm;
            int r = ins[j]->rank, id = 1;
            for (int a = 0; a < r; a++) id &= pp[a] == a;
            if (!id) node_set_attr_ints(n, names[j], pp, r);
        }
        int id = 1;
        for (int a = 0; a < y->rank; a++) id &= yp[a] == a;
        if (!id) node_set_attr_ints(n, "y_perm", yp, y->rank);
        node_reinfer(n);
        note("fuse_attention: %s -> FusedAttention(scale %g%s) '%s'", n->fused, scale, mask ? ", mask" : "", y->name);
        changes++;
        i = -1;
    }
    return changes;
}
