/* Recurrent ops: RNN, GRU, LSTM (kernels in runtime/c/rnn.h).
 *
 * Inputs X, W, R [, B, sequence_lens, initial_h [, initial_c, P]] (LSTM
 * has initial_c and the peepholes P); outputs Y, Y_h [, Y_c], each optional.
 * The lowering projects the inputs of every time step at once, then runs
 * one kernel call per time step over directions x batch x hidden units
 * (GRU with linear_before_reset = 0: two), keeping the state history in a
 * scratch tensor so that no call reads what it writes; see rnn.h. */
#include <ctype.h>
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/elementwise.h"
#include "../../runtime/c/elementwise.h"   /* o2c_ldh: the half loads of O2C_CONV_WT, O2C_MATMUL_WT */
#include "../../runtime/c/params/matmul.h"
#include "../../runtime/c/params/rnn.h"
#include "../../runtime/c/matmul.h"

typedef struct RnnInfo {
    int kind;                 /* 0 RNN, 1 GRU, 2 LSTM */
    int G;                    /* gates: 1, 3, 4 */
    int nact;                 /* activations per direction: 1, 2, 3 */
    int64_t T, B, NI, H, D;  /* NI: input_size (I is a macro of <complex.h>) */
    int layout, rev0;
    int64_t act[2][3][3];     /* code, alpha bits, beta bits */
} RnnInfo;

static const char *ACT_NAMES[] = {"Sigmoid", "Tanh", "Relu", "HardSigmoid", "LeakyRelu", "ThresholdedRelu",
                                  "ScaledTanh", "Affine", "Elu", "Softsign", "Softplus", NULL};
/* which activations take alpha / beta, and their defaults (as onnxruntime;
 * -1: no agreed default, the model must give the value) */
static const int ACT_ALPHA[] = {0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0};
static const int ACT_BETA[] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0};
static const double ACT_DEF_ALPHA[] = {0, 0, 0, 0.2, 0.01, -1, -1, -1, 1.0, 0, 0};
static const double ACT_DEF_BETA[] = {0, 0, 0, 0.5, 0, 0, -1, -1, 0, 0, 0};

/* a real as the bits the kernel of the element type reads: double, or
 * float in the low 32 bits (float32 stays float32) */
static int64_t rbits(double v, int dt)
{
    if (dt == DT_DOUBLE) {
        int64_t b;
        memcpy(&b, &v, sizeof b);
        return b;
    }
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (int64_t)u;
}

static int same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return *a == *b;
}

static int act_code(const char *name)
{
    for (int i = 0; ACT_NAMES[i]; i++)
        if (same_name(ACT_NAMES[i], name)) return i;
    fail("activation '%s' is not supported; onnx2c supports Sigmoid, Tanh, Relu, HardSigmoid, LeakyRelu, "
         "ThresholdedRelu, ScaledTanh, Affine, Elu, Softsign and Softplus", name);
}

/* clip (must be positive); activations, activation_alpha,
 * activation_beta -> info->act */
static void rnn_activations(Node *n, RnnInfo *r)
{
    if (attr_has(n, "clip") && !(attr_f(n, "clip") > 0))
        fail("clip must be positive, got %g", attr_f(n, "clip"));
    static const char *DEFAULTS[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    const Attr *a = attr_find(n, "activations");
    int per = r->nact, D = (int)r->D, total = per * D;
    const char *names[6];
    int given = a ? a->n : 0;
    if (a && a->type != AT_STRINGS) fail("attribute 'activations' should be a list of strings");
    if (given && given != total && given != per)
        fail("attribute 'activations' has %d names; %s with direction %s needs %d (%d per direction)", given,
             n->op_type, attr_s(n, "direction"), total, per);
    for (int i = 0; i < total; i++)
        names[i] = given ? a->strings[given == total ? i : i % per] : DEFAULTS[r->kind][i % per];
    const double *al, *be;
    int nal = attr_floats(n, "activation_alpha", &al), nbe = attr_floats(n, "activation_beta", &be);
    int ia = 0, ib = 0;
    for (int i = 0; i < total; i++) {
        /* with one set of names for two directions, the values repeat too */
        if (given == per && i == per) ia = ib = 0;
        int c = act_code(names[i]);
        double alpha = 0, beta = 0;
        if (ACT_ALPHA[c]) {
            if (ia < nal) alpha = al[ia++];
            else if (ACT_DEF_ALPHA[c] < 0)
                fail("activation %s needs its alpha in activation_alpha (onnxruntime and the ONNX spec "
                     "disagree on the default)", ACT_NAMES[c]);
            else alpha = ACT_DEF_ALPHA[c];
        }
        if (ACT_BETA[c]) {
            if (ib < nbe) beta = be[ib++];
            else if (ACT_DEF_BETA[c] < 0)
                fail("activation %s needs its beta in activation_beta (there is no agreed default)", ACT_NAMES[c]);
            else beta = ACT_DEF_BETA[c];
        }
        r->act[i / per][i % per][0] = c;
        r->act[i / per][i % per][1] = rbits(alpha, n->in[0]->dtype);
        r->act[i / per][i % per][2] = rbits(beta, n->in[0]->dtype);
    }
}

static void need_shape(Node *n, Tensor *t, const char *what, int rank, const int64_t *dims)
{
    (void)n;
    int ok = t->rank == rank;
    for (int i = 0; ok && i < rank; i++) ok = t->dims[i] == dims[i];
    if (ok) return;
    char want[128] = "";
    for (int i = 0; i < rank; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", i ? "x" : "", (long long)dims[i]);
    fail("%s ('%s') is %s; it must be %s", what, t->name, tensor_shape_str(t), rank ? want : "a scalar");
}

/* The direction attribute: r->D and r->rev0. */
static void rnn_direction(Node *n, RnnInfo *r)
{
    const char *dir = attr_s(n, "direction");
    if (!strcmp(dir, "forward")) r->D = 1;
    else if (!strcmp(dir, "reverse")) r->D = 1, r->rev0 = 1;
    else if (!strcmp(dir, "bidirectional")) r->D = 2;
    else fail("direction '%s' is not one of forward, reverse, bidirectional", dir);
}

/* The optional inputs B, sequence_lens, initial_h, initial_c, P: their
 * shapes, and data type dt (else "... must <dt_rule>"); a constant
 * sequence_lens within the sequence. */
static void rnn_optional_inputs(Node *n, const RnnInfo *r, int dt, const char *dt_rule)
{
    int64_t D = r->D, H = r->H;
    Tensor *b = in_t(n, 3), *sl = in_t(n, 4), *h0 = in_t(n, 5), *c0 = in_t(n, 6), *pp = in_t(n, 7);
    if (b) {
        int64_t d2[2] = {D, 2 * r->G * H};
        if (b->dtype != dt) fail("B ('%s') must %s", b->name, dt_rule);
        need_shape(n, b, "B", 2, d2);
    }
    if (sl) {
        int64_t d1[1] = {r->B};
        if (sl->dtype != DT_INT32)
            fail("sequence_lens ('%s') has data type %s; it must be int32", sl->name, dtype_name(sl->dtype));
        need_shape(n, sl, "sequence_lens", 1, d1);
        if (sl->data)
            for (int64_t i = 0; i < r->B; i++) {
                int32_t v = ((const int32_t *)sl->data)[i];
                if (v < 0 || v > r->T)
                    fail("sequence_lens[%lld] is %d; it must be between 0 and the sequence length %lld",
                         (long long)i, (int)v, (long long)r->T);
            }
    }
    int64_t ds[3] = {D, r->B, H};
    if (r->layout) ds[0] = r->B, ds[1] = D;
    if (h0) {
        if (h0->dtype != dt) fail("initial_h ('%s') must %s", h0->name, dt_rule);
        need_shape(n, h0, "initial_h", 3, ds);
    }
    if (c0) {
        if (c0->dtype != dt) fail("initial_c ('%s') must %s", c0->name, dt_rule);
        need_shape(n, c0, "initial_c", 3, ds);
    }
    if (pp) {
        int64_t d2[2] = {D, 3 * H};
        if (pp->dtype != dt) fail("P ('%s') must %s", pp->name, dt_rule);
        need_shape(n, pp, "P", 2, d2);
    }
}

/* The shapes of X, W, R and the optional inputs (B, sequence_lens,
 * initial_h, initial_c, P), into r: T, B, NI and hidden_size H (r->G, D
 * and layout set). W and R are ONNX's [D, G*H, input_size] and
 * [D, G*H, H], or with dq (DynamicQuantizeLSTM: the products' K x N order)
 * [D, input_size, G*H] and [D, H, G*H]; the optional inputs have X's
 * type, or with dq are float. */
static void rnn_shapes(Node *n, RnnInfo *r, int dq)
{
    Tensor *x = n->in[0], *w = n->in[1], *rr = n->in[2];
    if (x->rank != 3)
        fail("X ('%s') is %s; it must be 3-D (%s)", x->name, tensor_shape_str(x),
             r->layout ? "batch x seq_length x input_size" : "seq_length x batch x input_size");
    r->T = r->layout ? x->dims[1] : x->dims[0];
    r->B = r->layout ? x->dims[0] : x->dims[1];
    r->NI = x->dims[2];
    if (rr->rank != 3)
        fail("R ('%s') is %s; it must be num_directions x %s", rr->name, tensor_shape_str(rr),
             dq ? xfmt("hidden_size x %d*hidden_size", r->G) : xfmt("%d*hidden_size x hidden_size", r->G));
    int hd = dq ? 1 : 2;   /* R's dimension that is hidden_size */
    r->H = attr_has(n, "hidden_size") ? attr_i(n, "hidden_size") : rr->dims[hd];
    if (r->H < 1) fail("hidden_size must be positive, got %lld", (long long)r->H);
    if (r->H != rr->dims[hd])   /* before products of it are formed: R's shape bounds it */
        fail("hidden_size is %lld, but R ('%s') is %s, whose dimension %d must be hidden_size", (long long)r->H,
             rr->name, tensor_shape_str(rr), hd);
    if (r->T < 1 || r->B < 1) fail("X ('%s') is %s; an empty sequence or batch is not supported", x->name,
                                   tensor_shape_str(x));
    int64_t GH = r->G * r->H, D = r->D, H = r->H;
    int64_t dw[3] = {D, dq ? r->NI : GH, dq ? GH : r->NI}, dr[3] = {D, dq ? H : GH, dq ? GH : H};
    need_shape(n, w, "W", 3, dw);
    need_shape(n, rr, "R", 3, dr);
    rnn_optional_inputs(n, r, dq ? DT_FLOAT : x->dtype, dq ? "be float" : "have X's data type");
}

/* Checks the node and fills the geometry. */
static void rnn_info(Node *n, RnnInfo *r)
{
    memset(r, 0, sizeof *r);
    r->kind = !strcmp(n->op_type, "RNN") ? 0 : !strcmp(n->op_type, "GRU") ? 1 : 2;
    r->G = r->kind == 0 ? 1 : r->kind == 1 ? 3 : 4;
    r->nact = r->kind + 1;
    Tensor *x = need_in(n, 0), *w = need_in(n, 1), *rr = need_in(n, 2);   /* "" leaves an input out */
    need_dtype(n, x, DTS_FLOAT);
    if (w->dtype != x->dtype || rr->dtype != x->dtype)
        fail("W ('%s') and R ('%s') must have X's data type %s", w->name, rr->name, dtype_name(x->dtype));
    rnn_direction(n, r);
    r->layout = (int)attr_i(n, "layout");
    if (r->layout != 0 && r->layout != 1) fail("layout must be 0 or 1, got %d", r->layout);
    rnn_shapes(n, r, 0);
    rnn_activations(n, r);
}

void infer_rnn(Node *n)
{
    RnnInfo r;
    rnn_info(n, &r);
    int dt = n->in[0]->dtype;
    int64_t y[4], st[3];
    if (r.layout) {
        y[0] = r.B; y[1] = r.T; y[2] = r.D; y[3] = r.H;
        st[0] = r.B; st[1] = r.D; st[2] = r.H;
    } else {
        y[0] = r.T; y[1] = r.D; y[2] = r.B; y[3] = r.H;
        st[0] = r.D; st[1] = r.B; st[2] = r.H;
    }
    set_out(n, 0, dt, 4, y);
    set_out(n, 1, dt, 3, st);
    set_out(n, 2, dt, 3, st);
}

/* sequence_lens, or NULL when it is absent or a constant that changes nothing */
static Tensor *seq_lens(Node *n, const RnnInfo *r)
{
    Tensor *sl = in_t(n, 4);
    if (!sl || !sl->data) return sl;
    for (int64_t i = 0; i < r->B; i++)
        if (((const int32_t *)sl->data)[i] != r->T) return sl;
    return NULL;
}

static void step_params(KCall *c, const RnnInfo *r, Node *n, int64_t s, int64_t flag)
{
    c->k[O2C_RNN_D] = r->D;
    c->k[O2C_RNN_B] = r->B;
    c->k[O2C_RNN_H] = r->H;
    c->k[O2C_RNN_T] = r->T;
    c->k[O2C_RNN_S] = s;
    c->k[O2C_RNN_REV0] = r->rev0;
    c->k[O2C_RNN_HAS_CLIP] = attr_has(n, "clip");
    c->k[O2C_RNN_FLAG] = flag;
    for (int d = 0; d < 2; d++)
        for (int a = 0; a < 3; a++)
            for (int q = 0; q < O2C_RNN_ACT_SLOTS; q++)
                c->k[O2C_RNN_ACT_AT(d, a) + q] = d < r->D && a < r->nact ? r->act[d][a][q] : 0;
    c->f[O2C_RNN_F_CLIP] = attr_has(n, "clip") ? attr_f(n, "clip") : 0.0;
}

/* the outputs Y, Y_h, Y_c from the state history S and the cell state C */
static void lower_rnn_outputs(Node *n, Lowering *L, const RnnInfo *r, Tensor *S, Tensor *C, Tensor *sl)
{
    const char *sfx = dtype_suffix(n->in[0]->dtype);
    int64_t D = r->D, B = r->B, H = r->H, T = r->T;
    KCall *c;
    Tensor *y = n->nout > 0 ? n->out[0] : NULL;
    if (y) {
        c = lower_call(L, xfmt("o2c_rnn_y_%s", sfx), tensor_numel(y));
        c->x[0] = S; c->x[3] = sl; c->y[0] = y;
        c->k[O2C_RNN_Y_D] = D; c->k[O2C_RNN_Y_B] = B; c->k[O2C_RNN_Y_H] = H; c->k[O2C_RNN_Y_T] = T;
        c->k[O2C_RNN_Y_LAYOUT] = r->layout; c->k[O2C_RNN_Y_REV0] = r->rev0;
    }
    for (int o = 1; o <= 2; o++) {
        Tensor *t = n->nout > o ? n->out[o] : NULL;
        if (!t) continue;
        c = lower_call(L, xfmt("o2c_rnn_last_%s", sfx), D * B * H);
        c->x[0] = o == 1 ? S : C; c->x[3] = sl; c->y[0] = t;
        c->k[O2C_RNN_LAST_D] = D; c->k[O2C_RNN_LAST_B] = B; c->k[O2C_RNN_LAST_H] = H;
        c->k[O2C_RNN_LAST_LAYOUT] = r->layout; c->k[O2C_RNN_LAST_OFF] = o == 1 ? T * D * B * H : 0;
    }
}

/* The C target's float LSTM with the default activations and constant
 * weights: the input projection as one matrix product on the Gemm path
 * (lower_linear_call: packed panels of the tiled kernel, both biases summed
 * at lowering), then the whole recurrence in one o2c_lstm_seq_f32 call over
 * directions x batch, with R stored transposed so that each step's products
 * read contiguous rows. Returns 0 (nothing lowered) when it does not apply. */
/* The float LSTM's state: the h of every step, S [T + 1, D, B, H], and
 * the cell C [D, B, H]; step 0 from initial_h and initial_c (NULL: 0). */
static Tensor *lower_lstm_state(Lowering *L, const RnnInfo *r, Tensor *h0, Tensor *c0, Tensor **C)
{
    int64_t sd[4] = {r->T + 1, r->D, r->B, r->H};
    Tensor *S = lower_temp(L, DT_FLOAT, 4, sd);
    *C = lower_temp(L, DT_FLOAT, 3, sd + 1);
    KCall *c = lower_call(L, "o2c_rnn_init_f32", r->D * r->B * r->H);
    c->x[0] = h0; c->x[1] = c0; c->y[0] = S; c->y[1] = *C;
    c->k[O2C_RNN_INIT_D] = r->D; c->k[O2C_RNN_INIT_B] = r->B; c->k[O2C_RNN_INIT_H] = r->H;
    c->k[O2C_RNN_INIT_LAYOUT] = r->layout;
    return S;
}

/* the recurrent weights in blocks of this many hidden units, each block
 * one contiguous stream (O2C_LSTM_SEQ_PB): a multiple of the kernel's
 * O2C_LSTM_HB (64 with AVX-512, 32 without). ddddocr_crnn's 2 x 512 units
 * (4 MB of R a direction, read once a step): the recurrence took 4.4 ms
 * with R transposed (PB = H: a block's rows 8 KB apart), 3.4-4.0 ms packed
 * (profile build on a Zen 4, noisy) */
#define LSTM_PACK_UNITS 64

static int lower_lstm_tiled(Node *n, Lowering *L, const RnnInfo *r)
{
    Tensor *x = n->in[0], *w = n->in[1], *rw = n->in[2], *b = in_t(n, 3), *sl = seq_lens(n, r);
    Tensor *h0 = in_t(n, 5), *c0 = in_t(n, 6), *pp = in_t(n, 7);
    if (!L->tiled || r->kind != 2 || x->dtype != DT_FLOAT || !w->data || !rw->data || (b && !b->data)) return 0;
    static const int DEFAULT_ACTS[3] = {0, 1, 1};   /* Sigmoid, Tanh, Tanh */
    for (int d = 0; d < r->D; d++)
        for (int a = 0; a < 3; a++)
            if (r->act[d][a][0] != DEFAULT_ACTS[a]) return 0;
    int64_t D = r->D, B = r->B, H = r->H, T = r->T, NI = r->NI, G4 = 4 * H, N = D * G4;

    /* 1. P = X W^T + (Wb + Rb): rows (t, b) (layout 1: (b, t)), columns (d,
     * gate); W [D, 4H, I] is the product's N x K weights as it stands */
    int64_t pd[2] = {T * B, N}, nd[1] = {N}, rd[3] = {D, H, G4};
    Tensor *bias = NULL;
    if (b) {
        bias = lower_const(L, "bias_D4H", DT_FLOAT, 1, nd);
        const float *bs = b->data;
        float *bdst = bias->data;
        for (int64_t d = 0; d < D; d++)
            for (int64_t j = 0; j < G4; j++) bdst[d * G4 + j] = bs[d * 2 * G4 + j] + bs[d * 2 * G4 + G4 + j];
    }
    Tensor *P = lower_temp(L, DT_FLOAT, 2, pd);
    lower_linear_call(L, x, w, bias, P, T * B, N, NI);

    /* 2. the first state */
    Tensor *C, *S = lower_lstm_state(L, r, h0, c0, &C);

    /* 3. the recurrence */
    Tensor *rt = lower_const(L, "R_DxHx4H", DT_FLOAT, 3, rd);
    const float *rs = rw->data;
    float *rdst = rt->data;
    for (int64_t d = 0; d < D; d++)
        for (int64_t g0 = 0; g0 < H; g0 += LSTM_PACK_UNITS) {
            int64_t w = H - g0 < LSTM_PACK_UNITS ? H - g0 : LSTM_PACK_UNITS;
            float *blk = rdst + d * H * G4 + g0 * G4;
            for (int64_t k = 0; k < H; k++)
                for (int64_t q = 0; q < 4; q++)
                    for (int64_t e = 0; e < w; e++) blk[(k * 4 + q) * w + e] = rs[(d * G4 + q * H + g0 + e) * H + k];
        }
    KCall *c = lower_call(L, "o2c_lstm_seq_f32", D * B);
    c->x[0] = P; c->x[1] = rt; c->x[2] = pp; c->x[3] = sl; c->y[0] = S; c->y[1] = C;
    c->k[O2C_LSTM_SEQ_D] = D; c->k[O2C_LSTM_SEQ_B] = B; c->k[O2C_LSTM_SEQ_H] = H; c->k[O2C_LSTM_SEQ_T] = T;
    c->k[O2C_LSTM_SEQ_REV0] = r->rev0;
    c->k[O2C_LSTM_SEQ_HAS_CLIP] = attr_has(n, "clip");
    c->k[O2C_LSTM_SEQ_INPUT_FORGET] = attr_i(n, "input_forget") != 0;
    c->k[O2C_LSTM_SEQ_LAYOUT] = r->layout;
    c->k[O2C_LSTM_SEQ_PB] = LSTM_PACK_UNITS;
    c->f[O2C_RNN_F_CLIP] = attr_has(n, "clip") ? attr_f(n, "clip") : 0.0;

    /* 4. outputs, as the reference path */
    lower_rnn_outputs(n, L, r, S, C, sl);
    return 1;
}

void lower_rnn(Node *n, Lowering *L)
{
    RnnInfo r;
    rnn_info(n, &r);
    if (lower_lstm_tiled(n, L, &r)) return;
    Tensor *x = n->in[0], *w = n->in[1], *rw = n->in[2], *b = in_t(n, 3), *sl = seq_lens(n, &r);
    Tensor *h0 = in_t(n, 5), *c0 = r.kind == 2 ? in_t(n, 6) : NULL, *pp = r.kind == 2 ? in_t(n, 7) : NULL;
    const char *sfx = dtype_suffix(x->dtype);
    int dt = x->dtype;
    int64_t D = r.D, B = r.B, H = r.H, T = r.T, GH = r.G * r.H;
    int lbr = r.kind == 1 ? (int)attr_i(n, "linear_before_reset") != 0 : 0;
    int64_t flag = r.kind == 1 ? lbr : r.kind == 2 ? attr_i(n, "input_forget") != 0 : 0;

    /* 1. input projection of all time steps */
    int64_t pd[4] = {T, D, B, GH};
    Tensor *P = lower_temp(L, dt, 4, pd);
    KCall *c = lower_call(L, xfmt("o2c_rnn_proj_%s", sfx), T * D * B * GH);
    c->x[0] = x; c->x[1] = w; c->x[2] = b; c->y[0] = P;
    c->k[O2C_RNN_PROJ_T] = T; c->k[O2C_RNN_PROJ_D] = D; c->k[O2C_RNN_PROJ_B] = B; c->k[O2C_RNN_PROJ_GH] = GH;
    c->k[O2C_RNN_PROJ_I] = r.NI; c->k[O2C_RNN_PROJ_LAYOUT] = r.layout;
    c->k[O2C_RNN_PROJ_RBEND] = lbr ? 2 * H : GH;

    /* 2. the first state */
    int64_t sd[4] = {T + 1, D, B, H};
    Tensor *S = lower_temp(L, dt, 4, sd);
    Tensor *C = r.kind == 2 ? lower_temp(L, dt, 3, sd + 1) : NULL;
    c = lower_call(L, xfmt("o2c_rnn_init_%s", sfx), D * B * H);
    c->x[0] = h0; c->x[1] = c0; c->y[0] = S; c->y[1] = C;
    c->k[O2C_RNN_INIT_D] = D; c->k[O2C_RNN_INIT_B] = B; c->k[O2C_RNN_INIT_H] = H;
    c->k[O2C_RNN_INIT_LAYOUT] = r.layout;

    /* 3. the steps */
    Tensor *RH = r.kind == 1 && !lbr ? lower_temp(L, dt, 3, sd + 1) : NULL;
    static const char *STEP[] = {"o2c_rnn_step", "o2c_gru_step", "o2c_lstm_step"};
    for (int64_t s = 0; s < T; s++) {
        if (RH) {
            c = lower_call(L, xfmt("o2c_gru_reset_%s", sfx), D * B * H);
            c->x[0] = P; c->x[1] = rw; c->x[2] = S; c->x[3] = sl; c->y[0] = RH;
            step_params(c, &r, n, s, flag);
        }
        c = lower_call(L, xfmt("%s_%s", STEP[r.kind], sfx), D * B * H);
        c->x[0] = P; c->x[1] = rw; c->x[3] = sl; c->y[0] = S;
        if (r.kind == 1) c->x[2] = lbr ? b : RH;
        if (r.kind == 2) { c->x[2] = pp; c->y[1] = C; }
        step_params(c, &r, n, s, flag);
    }

    /* 4. outputs */
    lower_rnn_outputs(n, L, &r, S, C, sl);
}

/* ---- com.microsoft DynamicQuantizeLSTM (onnxruntime's quantize_dynamic) ----
 * Inputs X, W, R, B, sequence_lens, initial_h, initial_c, P, W_scale,
 * W_zero_point, R_scale, R_zero_point: an LSTM (gates i o f c, the LSTM's
 * attributes but no layout) whose weights are int8 or uint8 and stored
 * transposed, W [D, input_size, 4H] and R [D, H, 4H], with a scale and zero
 * point per direction ([D]) or per column ([D, 4H]; one zero point for all
 * columns, as onnxruntime requires). onnxruntime computes both products in
 * integers on uint8 quantizations of X and of each step's h (runtime/c/
 * rnn.h, o2c_dqlstm_*); the lowering does the same. Weights, scales and
 * zero points must be constants; sequence_lens only with every length the
 * full sequence (a shorter one changes what onnxruntime quantizes). */

static int dq_is_q8(int dt) { return dt == DT_INT8 || dt == DT_UINT8; }

/* the scale or zero point t of a weight: [D] or [D, 4H]; returns the
 * values a direction (1 or 4H) */
static int64_t dq_param(Node *n, Tensor *t, const char *what, const RnnInfo *r)
{
    (void)n;
    if (t->rank == 1 && t->dims[0] == r->D) return 1;
    if (t->rank == 2 && t->dims[0] == r->D && t->dims[1] == 4 * r->H) return 4 * r->H;
    fail("%s ('%s') is %s; it must be %lld (per direction) or %lldx%lld (per column)", what, t->name,
         tensor_shape_str(t), (long long)r->D, (long long)r->D, (long long)(4 * r->H));
}

static void dq_info(Node *n, RnnInfo *r)
{
    memset(r, 0, sizeof *r);
    r->kind = 2;
    r->G = 4;
    r->nact = 3;
    if (n->nin != 12) fail("DynamicQuantizeLSTM has %d inputs; it takes 12 (optional ones may be empty)", n->nin);
    Tensor *x = need_in(n, 0), *w = need_in(n, 1), *rr = need_in(n, 2);   /* "" leaves an input out */
    for (int j = 8; j < 12; j++)
        if (!n->in[j]) fail("input %d (the weights' scales and zero points) is required", j);
    if (n->promoted || x->dtype != DT_FLOAT)
        fail("X ('%s') is not float32; DynamicQuantizeLSTM takes float32 (as onnxruntime's)", x->name);
    if (!dq_is_q8(w->dtype) || !dq_is_q8(rr->dtype))
        fail("W ('%s', %s) and R ('%s', %s) must be int8 or uint8", w->name, dtype_name(w->dtype), rr->name,
             dtype_name(rr->dtype));
    rnn_direction(n, r);
    rnn_shapes(n, r, 1);
    static const char *WHAT[4] = {"W_scale", "W_zero_point", "R_scale", "R_zero_point"};
    for (int j = 0; j < 4; j++) {
        Tensor *t = n->in[8 + j];
        int want = j % 2 ? n->in[1 + j / 2]->dtype : DT_FLOAT;
        if (t->dtype != want)
            fail("%s ('%s') is %s; it must be %s", WHAT[j], t->name, dtype_name(t->dtype), dtype_name(want));
        dq_param(n, t, WHAT[j], r);
    }
    rnn_activations(n, r);
}

void infer_dqlstm(Node *n)
{
    RnnInfo r;
    dq_info(n, &r);
    int64_t y[4] = {r.T, r.D, r.B, r.H}, st[3] = {r.D, r.B, r.H};
    set_out(n, 0, DT_FLOAT, 4, y);
    set_out(n, 1, DT_FLOAT, 3, st);
    set_out(n, 2, DT_FLOAT, 3, st);
}

/* a weight's value at element src (int8 or uint8) */
static int32_t dq_w(const Tensor *w, int64_t src)
{
    return w->dtype == DT_INT8 ? ((const int8_t *)w->data)[src] : ((const uint8_t *)w->data)[src];
}

/* the constant W (wi 1) or R (wi 2), its scale and zero point checked;
 * zp: the zero point of each direction; returns the scales a direction */
static int64_t dq_check(Node *n, int wi, const RnnInfo *r, int32_t zp[2])
{
    static const char *WHAT[2] = {"W", "R"};
    Tensor *w = n->in[wi], *s = n->in[8 + 2 * (wi - 1)], *z = n->in[9 + 2 * (wi - 1)];
    const char *what = WHAT[wi - 1];
    need_const_value(n, w, what);
    need_const_value(n, s, wi == 1 ? "W_scale" : "R_scale");
    need_const_value(n, z, wi == 1 ? "W_zero_point" : "R_zero_point");
    int64_t nz = dq_param(n, z, "zero point", r);
    for (int64_t d = 0; d < r->D; d++) {
        for (int64_t j = 0; j < nz; j++) {
            int32_t v = dq_w(z, d * nz + j);
            if (j == 0) zp[d] = v;
            else if (v != zp[d])
                fail("%s_zero_point ('%s') differs between columns of direction %lld; onnxruntime's "
                     "DynamicQuantizeLSTM takes one zero point a direction", what, z->name, (long long)d);
        }
        if (w->dtype == DT_INT8 && zp[d] != 0)
            fail("%s_zero_point ('%s') is %d for int8 weights; onnx2c supports int8 weights with zero point 0 "
                 "(as onnxruntime's quantize_dynamic writes them)", what, z->name, (int)zp[d]);
    }
    return dq_param(n, s, "scale", r);
}

/* W [D, K, 4H] (w - zp) as int16 rows of K per column (d, j): [D 4H, K];
 * the scales, one per column: [D 4H] */
static void dq_weights(Node *n, Lowering *L, int wi, const RnnInfo *r, Tensor **wq, Tensor **sc)
{
    Tensor *w = n->in[wi], *s = n->in[8 + 2 * (wi - 1)];
    int32_t zp[2];
    int64_t ns = dq_check(n, wi, r, zp);
    int64_t D = r->D, G4 = 4 * r->H, K = w->dims[1];
    int64_t wd[2] = {D * G4, K}, sd[1] = {D * G4};
    *wq = lower_const(L, wi == 1 ? "W_q16" : "R_q16", DT_INT16, 2, wd);
    *sc = lower_const(L, wi == 1 ? "W_colscale" : "R_colscale", DT_FLOAT, 1, sd);
    int16_t *dst = (*wq)->data;
    float *sdst = (*sc)->data;
    for (int64_t d = 0; d < D; d++)
        for (int64_t j = 0; j < G4; j++) {
            for (int64_t k = 0; k < K; k++) dst[(d * G4 + j) * K + k] = (int16_t)(dq_w(w, (d * K + k) * G4 + j) - zp[d]);
            sdst[d * G4 + j] = ((const float *)s->data)[d * ns + (ns > 1 ? j : 0)];
        }
}

/* Byte products (runtime/c/rnn.h, "DynamicQuantizeLSTM on byte products"):
 * a weight (W or R) with its scales and zero points, to be packed into
 * 64-column blocks of quads (dq_pack) */
typedef struct DqPack {
    const Tensor *w, *s;
    int32_t zp[2];
    int64_t ns, K, G4;
} DqPack;

/* W or R as blocks: the int8 weights (nblk x KQ x 64 x 4), the column sums
 * and scales (nblk x 64). ord 0: the block's columns are product columns
 * 64 blk + c over all directions (W); ord 1: block d HB + hb holds gate q,
 * unit e of direction d at 16 q + e, the unit 16 hb + e (R). */
static void dq_pack(Lowering *L, const DqPack *q, const RnnInfo *r, int ord, int64_t nblk, const char *what,
                    Tensor **wp, Tensor **sum, Tensor **sc)
{
    int64_t KQ = (q->K + 3) / 4, H = r->H, HB = (H + 15) / 16, N = r->D * q->G4;
    int64_t wd[1] = {nblk * KQ * 256}, cd[1] = {nblk * 64};
    *wp = lower_const(L, xfmt("%s_q8x64", what), DT_INT8, 1, wd);
    *sum = lower_const(L, xfmt("%s_colsum", what), DT_INT32, 1, cd);
    *sc = lower_const(L, xfmt("%s_colscale64", what), DT_FLOAT, 1, cd);
    int8_t *dst = (*wp)->data;
    int32_t *sdst = (*sum)->data;
    float *cdst = (*sc)->data;
    for (int64_t blk = 0; blk < nblk; blk++)
        for (int64_t c = 0; c < 64; c++) {
            int64_t d, j;
            if (ord == 0) {
                int64_t col = blk * 64 + c;
                if (col >= N) continue;
                d = col / q->G4;
                j = col % q->G4;
            } else {
                int64_t h = blk % HB * 16 + c % 16;
                if (h >= H) continue;
                d = blk / HB;
                j = c / 16 * H + h;
            }
            int32_t total = 0;
            for (int64_t k = 0; k < q->K; k++) {
                int32_t v = dq_w(q->w, (d * q->K + k) * q->G4 + j) - q->zp[d];
                dst[((blk * KQ + k / 4) * 64 + c) * 4 + k % 4] = (int8_t)v;
                total += v;
            }
            sdst[blk * 64 + c] = total;
            cdst[blk * 64 + c] = ((const float *)q->s->data)[d * q->ns + (q->ns > 1 ? j : 0)];
        }
}

/* weight wi (1 W, 2 R) for dq_pack; 0 when a weight less its zero point
 * does not fit in int8 */
static int dq_pack_info(Node *n, int wi, const RnnInfo *r, DqPack *q)
{
    q->w = n->in[wi];
    q->s = n->in[8 + 2 * (wi - 1)];
    q->ns = dq_check(n, wi, r, q->zp);
    q->K = q->w->dims[1];
    q->G4 = 4 * r->H;
    for (int64_t d = 0; d < r->D; d++)
        for (int64_t e = 0; e < q->K * q->G4; e++) {
            int32_t v = dq_w(q->w, d * q->K * q->G4 + e) - q->zp[d];
            if (v < -128 || v > 127) return 0;
        }
    return 1;
}

/* the tiled C target's DynamicQuantizeLSTM on byte products, where both
 * weights fit (dq_pack_info) and the activations are the default ones;
 * returns 0 to leave the node to the int16 kernels */
static int lower_dqlstm_tiled(Node *n, Lowering *L, const RnnInfo *r)
{
    static const int DEFAULT_ACTS[3] = {0, 1, 1};   /* Sigmoid, Tanh, Tanh */
    DqPack wq, rq;
    if (!L->tiled) return 0;
    for (int d = 0; d < r->D; d++)
        for (int a = 0; a < 3; a++)
            if (r->act[d][a][0] != DEFAULT_ACTS[a]) return 0;
    if (!dq_pack_info(n, 1, r, &wq) || !dq_pack_info(n, 2, r, &rq)) return 0;
    Tensor *x = n->in[0], *b = in_t(n, 3), *h0 = in_t(n, 5), *c0 = in_t(n, 6), *pp = in_t(n, 7);
    int64_t D = r->D, B = r->B, H = r->H, T = r->T, NI = r->NI, N = D * 4 * H, M = T * B;
    int64_t KQX = (NI + 3) / 4, KQH = (H + 3) / 4, NB = (N + 63) / 64, HB = (H + 15) / 16;
    Tensor *wp, *wsum, *wsc, *rp, *rsum, *rsc;
    dq_pack(L, &wq, r, 0, NB, "W", &wp, &wsum, &wsc);
    dq_pack(L, &rq, r, 1, D * HB, "R", &rp, &rsum, &rsc);

    /* 1. X quantized once for every step and direction, then P [T B, D 4H] */
    int64_t xd[2] = {M, 4 * KQX}, qd[1] = {2}, pd[2] = {M, N};
    Tensor *xu = lower_temp(L, DT_UINT8, 2, xd), *xqp = lower_temp(L, DT_FLOAT, 1, qd);
    KCall *c = lower_call(L, "o2c_dqlstm_qu8_f32", 1);
    c->x[0] = x; c->y[0] = xu; c->y[1] = xqp;
    c->k[O2C_DQL_QU8_ROWS] = M; c->k[O2C_DQL_QU8_N] = NI; c->k[O2C_DQL_QU8_LD] = 4 * KQX;
    Tensor *P = lower_temp(L, DT_FLOAT, 2, pd);
    c = lower_call(L, "o2c_dqlstm_proj_q8_f32", NB * ((M + 3) / 4));
    c->x[0] = xu; c->x[1] = wp; c->x[2] = wsum; c->x[3] = wsc; c->x[4] = xqp; c->y[0] = P;
    c->k[O2C_DQL_PQ_M] = M; c->k[O2C_DQL_PQ_N] = N; c->k[O2C_DQL_PQ_KQ] = KQX;

    /* 2. the first state */
    Tensor *C, *S = lower_lstm_state(L, r, h0, c0, &C);

    /* 3. the steps: each direction's h quantized, then the gates */
    int64_t hd[2] = {D * B, 4 * KQH}, hqd[1] = {2 * D};
    Tensor *hu = lower_temp(L, DT_UINT8, 2, hd), *hqp = lower_temp(L, DT_FLOAT, 1, hqd);
    for (int64_t s = 0; s < T; s++) {
        c = lower_call(L, "o2c_dqlstm_qu8_f32", D);
        c->x[0] = S; c->y[0] = hu; c->y[1] = hqp;
        c->k[O2C_DQL_QU8_ROWS] = B; c->k[O2C_DQL_QU8_N] = H; c->k[O2C_DQL_QU8_OFF] = s * D * B * H;
        c->k[O2C_DQL_QU8_GSTRIDE] = B * H; c->k[O2C_DQL_QU8_LD] = 4 * KQH;
        c = lower_call(L, "o2c_dqlstm_step_q8_f32", D * B * HB);
        c->x[0] = P; c->x[1] = rp; c->x[2] = hu; c->x[3] = rsum; c->x[4] = rsc; c->x[5] = b; c->x[6] = pp;
        c->x[7] = hqp;
        c->y[0] = S; c->y[1] = C;
        step_params(c, r, n, s, attr_i(n, "input_forget") != 0);
    }

    /* 4. outputs, as the LSTM's */
    lower_rnn_outputs(n, L, r, S, C, NULL);
    return 1;
}

void lower_dqlstm(Node *n, Lowering *L)
{
    RnnInfo r;
    dq_info(n, &r);
    Tensor *x = n->in[0], *b = in_t(n, 3), *sl = in_t(n, 4), *h0 = in_t(n, 5), *c0 = in_t(n, 6);
    Tensor *pp = in_t(n, 7);
    if (sl) {
        need_const_value(n, sl, "sequence_lens");
        for (int64_t i = 0; i < r.B; i++)
            if (((const int32_t *)sl->data)[i] != r.T)
                fail("sequence_lens[%lld] is %d, shorter than the sequence (%lld): not supported for "
                     "DynamicQuantizeLSTM (onnxruntime quantizes the padded steps too)", (long long)i,
                     (int)((const int32_t *)sl->data)[i], (long long)r.T);
    }
    if (lower_dqlstm_tiled(n, L, &r)) return;
    Tensor *wq, *ws, *rq, *rs;
    dq_weights(n, L, 1, &r, &wq, &ws);
    dq_weights(n, L, 2, &r, &rq, &rs);
    int64_t D = r.D, B = r.B, H = r.H, T = r.T, NI = r.NI, G4 = 4 * H, N = D * G4, M = T * B;

    /* 1. X quantized once for every step and direction, then the input
     * product P [T B, D 4H] */
    int64_t xd[2] = {M, NI}, md[1] = {N}, pd[2] = {M, N};
    Tensor *xq = lower_temp(L, DT_INT16, 2, xd), *xm = lower_temp(L, DT_FLOAT, 1, md);
    KCall *c = lower_call(L, "o2c_dqlstm_quant_f32", 1);
    c->x[0] = x; c->x[1] = ws; c->y[0] = xq; c->y[1] = xm;
    c->k[O2C_DQL_QUANT_N] = M * NI; c->k[O2C_DQL_QUANT_OFF] = 0; c->k[O2C_DQL_QUANT_GSTRIDE] = 0;
    c->k[O2C_DQL_QUANT_NC] = N;
    Tensor *P = lower_temp(L, DT_FLOAT, 2, pd);
    c = lower_call(L, "o2c_dqlstm_proj_f32", M * N);
    c->x[0] = xq; c->x[1] = wq; c->x[2] = xm; c->y[0] = P;
    c->k[O2C_DQL_PROJ_N] = N; c->k[O2C_DQL_PROJ_K] = NI;

    /* 2. the first state */
    Tensor *C, *S = lower_lstm_state(L, &r, h0, c0, &C);

    /* 3. the steps: each direction's h quantized, then the gates */
    int64_t hd[2] = {D, B * H};
    Tensor *hq = lower_temp(L, DT_INT16, 2, hd), *hm = lower_temp(L, DT_FLOAT, 1, md);
    for (int64_t s = 0; s < T; s++) {
        c = lower_call(L, "o2c_dqlstm_quant_f32", D);
        c->x[0] = S; c->x[1] = rs; c->y[0] = hq; c->y[1] = hm;
        c->k[O2C_DQL_QUANT_N] = B * H; c->k[O2C_DQL_QUANT_OFF] = s * D * B * H;
        c->k[O2C_DQL_QUANT_GSTRIDE] = B * H; c->k[O2C_DQL_QUANT_NC] = G4;
        c = lower_call(L, "o2c_dqlstm_step_f32", D * B * H);
        c->x[0] = P; c->x[1] = rq; c->x[2] = hq; c->x[4] = hm; c->x[5] = b; c->x[6] = pp;
        c->y[0] = S; c->y[1] = C;
        step_params(c, &r, n, s, attr_i(n, "input_forget") != 0);
    }

    /* 4. outputs, as the LSTM's */
    lower_rnn_outputs(n, L, &r, S, C, NULL);
}
