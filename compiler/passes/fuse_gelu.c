/* Pass fuse_gelu: GELU written out in elementwise ops becomes Gelu.
 *   erf form:  x * 0.5 * (1 + Erf(x / sqrt(2)))     (Div by 1.4142 or Mul by 0.7071)
 *   tanh form: x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
 *              (x^3 as Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x));
 *              becomes Gelu with approximate="tanh".
 * The outer product may be written in any order exporters use: Mul(x, p)
 * then Mul(., 0.5), Mul(Mul(x, 0.5), p), Mul(Mul(p, x), 0.5), 0.5 as
 * Div(., 2), ... (p = 1 + Erf/Tanh, an Add or a two-input Sum as ONNX's
 * function body writes it). Constants match within GELU_RTOL. */
#include "pattern.h"

#define GELU_RTOL 1e-3
#define SQRT2 1.41421356237309504880
#define SQRT_2_OVER_PI 0.79788456080286535588
#define GELU_CUBIC 0.044715

/* t = c * x for a one-value constant c ~= target (Mul by c, or Div by
 * 1/c); the node goes into m. */
static int scaled(Graph *g, Tensor *t, Tensor *x, double target, PatMatch *m)
{
    Node *n = t->producer;
    double c;
    if (!n || !tensor_single_use(g, t) || n->nin != 2) return 0;
    if (pat_is(n, "Mul") && pat_scalar(pat_other(n, x), &c) && pat_near(c, target, GELU_RTOL)) {
        pat_add(m, n);
        return 1;
    }
    if (pat_is(n, "Div") && n->in[0] == x && pat_scalar(n->in[1], &c) && c != 0 &&
        pat_near(1 / c, target, GELU_RTOL)) {
        pat_add(m, n);
        return 1;
    }
    return 0;
}

/* t = x^3: Pow(x, 3), Mul(x, Mul(x, x)), Mul(Mul(x, x), x). */
static int cube(Graph *g, Tensor *t, Tensor *x, PatMatch *m)
{
    Node *n = t->producer;
    double e;
    if (!n || !tensor_single_use(g, t)) return 0;
    if (pat_is(n, "Pow") && n->in[0] == x && pat_scalar(n->in[1], &e) && e == 3) {
        pat_add(m, n);
        return 1;
    }
    if (!pat_is(n, "Mul")) return 0;
    Tensor *o = pat_other(n, x);
    Node *sq = o ? pat_prod(o, "Mul") : NULL;
    if (!sq || sq->in[0] != x || sq->in[1] != x || !tensor_single_use(g, o)) return 0;
    pat_add(m, n);
    pat_add(m, sq);
    return 1;
}

/* The argument of the Erf/Tanh node f is the GELU argument of some x:
 * returns x, or NULL. */
static Tensor *gelu_arg(Graph *g, Node *f, int tanh_form, PatMatch *m)
{
    Tensor *a = f->in[0];
    Node *n = a->producer;
    if (!n || n->nin != 2 || !tensor_single_use(g, a)) return NULL;
    if (!tanh_form) {
        /* a = x / sqrt2 or x * (1/sqrt2) */
        for (int j = 0; j < 2; j++) {
            Tensor *x = n->in[j];
            if (x->data) continue;
            if (scaled(g, a, x, 1 / SQRT2, m)) return x;
        }
        return NULL;
    }
    /* a = sqrt(2/pi) * s, s = x + 0.044715 * x^3 */
    for (int j = 0; j < 2; j++) {
        Tensor *s = n->in[j];
        Node *add = pat_prod(s, "Add");
        if (!add || !scaled(g, a, s, SQRT_2_OVER_PI, m)) continue;
        if (!tensor_single_use(g, s)) return NULL;
        for (int k = 0; k < 2; k++) {
            Tensor *x = add->in[k], *c = add->in[1 - k];
            if (x->data || !c->producer) continue;
            PatMatch save = *m;
            Node *cm = c->producer;
            double cv;
            /* c = 0.044715 * x^3 */
            if (pat_is(cm, "Mul") && tensor_single_use(g, c)) {
                for (int u = 0; u < 2; u++)
                    if (pat_scalar(cm->in[u], &cv) && pat_near(cv, GELU_CUBIC, GELU_RTOL) &&
                        cube(g, cm->in[1 - u], x, m)) {
                        pat_add(m, cm);
                        pat_add(m, add);
                        return x;
                    }
            }
            *m = save;
        }
        return NULL;
    }
    return NULL;
}

/* A leaf of the outer product: x itself (bit 1), the constant 0.5 (bit 2)
 * or a single-use Mul(x, 0.5) / Div(x, 2) (bits 1|2, node into m). */
static int leaf(Graph *g, Tensor *t, Tensor *x, PatMatch *m)
{
    double c;
    if (t == x) return 1;
    if (pat_scalar(t, &c)) return c == 0.5 ? 2 : -1;
    Node *n = t->producer;
    if (!n || !tensor_single_use(g, t)) return -1;
    if (pat_is(n, "Mul") && pat_other(n, x) && pat_scalar(pat_other(n, x), &c) && c == 0.5) {
        pat_add(m, n);
        return 3;
    }
    if (pat_is(n, "Div") && n->in[0] == x && pat_scalar(n->in[1], &c) && c == 2) {
        pat_add(m, n);
        return 3;
    }
    return -1;
}

int pass_fuse_gelu(Graph *g)
{
    int changes = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *f = g->nodes[i];
        int tanh_form = pat_is(f, "Tanh");
        if (!tanh_form && !pat_is(f, "Erf")) continue;
        if (!pat_float(f->in[0])) continue;
        PatMatch m = {{0}, 0};
        Tensor *x = gelu_arg(g, f, tanh_form, &m);
        if (!x) continue;
        pat_add(&m, f);
        /* p = 1 + f */
        Node *one = pat_single_reader(g, f->out[0]);
        double c;
        if (!one || !(pat_is(one, "Add") || (pat_is(one, "Sum") && one->nin == 2)) ||
            !pat_scalar(pat_other(one, f->out[0]), &c) || c != 1)
            continue;
        pat_add(&m, one);
        /* the outer product: up to two Muls from p, collecting x and 0.5 */
        Tensor *cur = one->out[0];
        int have = 0;
        Node *last = NULL;
        for (int step = 0; step < 2 && have != 3; step++) {
            Node *mul = pat_single_reader(g, cur);
            if (!mul || !pat_is(mul, "Mul")) break;
            Tensor *o = pat_other(mul, cur);
            int bits = o && o != cur ? leaf(g, o, x, &m) : -1;
            if (bits < 0 || (bits & have)) break;
            have |= bits;
            pat_add(&m, mul);
            last = mul;
            cur = mul->out[0];
        }
        if (have != 3 || !pat_same_shape(cur, x) || cur->dtype != x->dtype) continue;
        Node *n = pat_replace(g, &m, last, "Gelu", "", &x, 1, cur);
        if (tanh_form) node_set_attr_s(n, "approximate", "tanh");
        node_reinfer(n);
        note("fuse_gelu: %s -> Gelu%s '%s'", n->fused, tanh_form ? "(tanh)" : "", cur->name);
        changes++;
        i = -1;
    }
    return changes;
}
