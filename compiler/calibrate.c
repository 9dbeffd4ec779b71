#define _POSIX_C_SOURCE 200809L
/* The precision stage (--int8): a float model calibrated into a QDQ model,
 * between inference and the passes.
 *
 *   (before it, the driver runs the passes that keep standard ops:
 *   passes.c run_standard_passes; BatchNormalization and constant scales
 *   are in the weights then, Min/Max is Clip, ...)
 *   layers         the nodes the integer pass (passes/quantize.c) turns into
 *                  integer nodes, with the activation after a linear op
 *                  (Relu, Clip) and a MatMul's bias Add taken into it:
 *                    compute  Conv, Gemm, MatMul (constant weights), Add and
 *                             Mul of two activations, AveragePool,
 *                             GlobalAveragePool, Concat: own output range
 *                    unary    Sigmoid, Tanh, HardSwish, ...: a 256-entry table,
 *                             when its input is quantized: own output range
 *                    move     MaxPool, Reshape, Transpose, Slice, Split, ...:
 *                             when its input is quantized, on the 8-bit data,
 *                             the output with the input's parameters
 *   sites          every activation a layer reads or writes gets
 *                  QuantizeLinear -> DequantizeLinear (its readers read the
 *                  DQ), every weight a DQ of int8 per output channel
 *                  (symmetric); a site is on when a quantized layer needs it
 *   statistics     the float model run in the compiler (engine/eval.c, the
 *                  runtime's kernels) over every calibration set, each site's
 *                  values into a streaming fixed-size histogram
 *                  (engine/histogram.c): memory independent of the sets
 *   ranges         the calibrator's clipping range per site, the scale and
 *                  zero point of the activation scheme
 *   accuracy       on the calibration sets (at most ACCURACY_SETS), the
 *                  float run against the quantized one (Q and DQ computed):
 *                  each site's SQNR and the model outputs' (the worst
 *                  output); below --min-sqnr, the layer losing the most dB
 *                  goes back to float, again until the target is met
 *   finish         the sites that are off and the float layers' weight DQs
 *                  leave the graph; the cache and the report are written
 *
 * --fp16 (alone or with --int8): every other node that reads a constant
 * the lowering stores as half (lower.c lower_half_constants) is a layer
 * too (L_HALF), its activations observed without Q and DQ; in the
 * quantized run the constants of fp16 layers hold their values rounded to
 * half (half_swap). Fallback steps go int8 -> fp16 -> float32; the nodes
 * of layers left float32 go to the lowering in Graph.fp32_nodes.
 *
 * With --calib-cache FILE and no DIR the ranges and the float layers come
 * from the cache (written by an earlier run): the same model, flags and
 * cache give the same file. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "passes/pattern.h"

#define ACCURACY_SETS 16     /* calibration sets the accuracy measurement uses */
#define MAX_LAYER_IN 20      /* Concat's parts (QLinearConcat's limit in passes/quantize.c) */
#define MAX_LAYER_OUT 8      /* Split's outputs (the same) */
#define SQNR_CAP 200.0       /* dB: a site with no error */
#define FALLBACK_BATCH 2.0   /* a fallback step takes the layers within this factor of the worst's added noise */
#define CACHE_MAGIC "onnx2c-calibration 1"

#define MAX_HALF_CONSTS 4    /* the constants of a layer's nodes that --fp16 stores as half */

enum { L_COMPUTE, L_UNARY, L_MOVE, L_HALF };
/* a layer's precision: its int8 nodes; float32 compute with half constants
 * (--fp16); float32 */
enum { P_INT8, P_HALF, P_FLOAT };

typedef struct Layer Layer;

#define KEEP_NOT_FINITE 2   /* Layer.keep_float: a weight is NaN or infinite */

/* A tensor quantized at run time: src -> Q -> DQ -> t, t's readers unchanged */
typedef struct Site {
    const char *name;        /* the model's tensor name */
    Tensor *t, *src;         /* what readers read; the float value (the producer's output, or the graph input) */
    Node *q, *dq;
    Tensor *scale, *zp;
    Hist *h;
    Hist *h_half;            /* --calibration auto: the first half of the sets only */
    double lo, hi;           /* calibrated real range */
    int have_range;
    Layer *from;             /* the move layer writing it: its input's parameters when that layer is quantized */
    int on;
    int observe;             /* no Q and DQ: only its accuracy measured (an fp16 layer's input or output) */
    float *ref;              /* the float values of the current set (accuracy) */
    double sig, err;         /* accuracy of what readers read (after Q and DQ when on) */
    double sig_f, err_f;     /* and of the producer's value, before Q (a float layer's output) */
} Site;

struct Layer {
    Node *n, *tail;          /* the first and the last node of the group; tail's outputs are the layer's */
    Node *mid;               /* a MatMul's bias Add, between them */
    int kind;
    Site *in[MAX_LAYER_IN], *out[MAX_LAYER_OUT];
    int nin, nout;
    /* weights (Conv, Gemm, MatMul): W float, per-channel int8 copy along axis, the DQ the node reads */
    Tensor *w, *wq, *ws, *wdeq, *bias;
    Node *wdq;
    int axis, wslot;
    int quant, keep_float;   /* keep_float: 1 --keep-float, KEEP_NOT_FINITE its weights */
    int fell_back;           /* fallback steps taken: int8 -> (fp16 ->) float */
    int hc[MAX_HALF_CONSTS], nhc;   /* --fp16: its constants that are stored half (Cal.half) */
    double drop;             /* relative noise power its output gained over its inputs' (accuracy) */
    double lost_db;          /* the same in dB of SQNR */
};

typedef struct Cal {
    Graph *g;
    const Options *o;
    Layer *layers;
    int nlayers;
    Site **sites;
    int nsites, cap_sites;
    int qdt, qmin, qmax;     /* the activations' integer type */
    Tensor **vars;           /* tensors computed per set (data reset between sets) */
    int nvars;
    Site **tag_site;         /* per node position: the site whose Q or DQ it is */
    Layer **tag_layer;       /* per node position: the layer whose weights' DQ it is */
    int mode;                /* EV_STATS, EV_FLOAT, EV_QUANT */
    double out_sig[64], out_err[64];
    float *out_ref[64];
    double model_sqnr;
    int method;              /* the calibrator whose ranges are used (--calibration auto: the one chosen) */
    double auto_db[CALIB_AUTO]; /* --calibration auto: each candidate's output SQNR (0: not a candidate) */
    int nsets, acc_sets;
    int acc_first;           /* the accuracy sets are [acc_first, acc_first + acc_sets) */
    int held_out;            /* --calibration auto: sets below it make h_half, the others measure */
    char **set_dirs;
    /* --fp16: the constants stored half; during a quantized run, those of
     * the layers at P_HALF hold their values rounded to half */
    struct HalfConst { Tensor *t; void *orig; float *rounded; int round; } *half;
    int nhalf;
} Cal;

enum { EV_STATS, EV_FLOAT, EV_QUANT };

/* ---- finding the layers --------------------------------------------------------- */

static int is_act(const Tensor *t) { return t && !t->data && t->dtype == DT_FLOAT && t->rank >= 0; }
static int is_const_float(const Tensor *t) { return t && t->data && t->dtype == DT_FLOAT && !t->is_input; }

/* the one reader of t (t no graph output), or NULL */
static Node *single_reader(Graph *g, Tensor *t) { return pat_single_reader(g, t); }

/* a Relu or a Clip with constant bounds (the quantize pass's output clamp) */
static int is_clamp(Graph *g, const Node *r)
{
    double lo, hi;
    return r && r->out[0]->dtype == DT_FLOAT && pat_clamp_bounds(g, r, &lo, &hi);
}

/* a move layer: the ops the integer pass runs on 8-bit data, and Split */
static int moves_values(const Node *n)
{
    if (pat_is(n, "MaxPool") && attr_i(n, "storage_order")) return 0;
    if (pat_is(n, "Split")) return n->nout <= MAX_LAYER_OUT;
    return pat_moves_values(n);
}

/* the constant bias of N values a MatMul's output y gets from its one
 * reader, an Add: the Add, or NULL */
static Node *bias_add_of(Graph *g, Tensor *y, int64_t N)
{
    Node *a = single_reader(g, y);
    if (!a || !pat_is(a, "Add")) return NULL;
    Tensor *o = pat_other(a, y);
    if (!is_const_float(o) || !pat_bias_shape(a, y, o, N)) return NULL;
    return a;
}

static int layer_add(Cal *c, Node *n, int kind)
{
    Layer *L = &c->layers[c->nlayers++];
    memset(L, 0, sizeof *L);
    L->n = L->tail = n;
    L->kind = kind;
    return c->nlayers - 1;
}

/* The weights of a Conv (slot 1, channel axis 0), Gemm (axis 0 if B is
 * transposed, else 1) or MatMul (axis 1) */
static void layer_weights(Layer *L, int slot, int axis, Tensor *bias)
{
    L->w = L->n->in[slot];
    L->wslot = slot;
    L->axis = axis;
    L->bias = bias;
}

/* A compute layer's activation after it (an absorbed Relu or Clip) */
static void absorb_clamp(Cal *c, Layer *L, Node **absorbed, int *na)
{
    Node *r = single_reader(c->g, L->tail->out[0]);
    if (!is_clamp(c->g, r)) return;
    if (pat_is(L->n, "Add") || pat_is(L->n, "Mul")) {   /* quantize.c: Relu only, at zero point qmin */
        if (!pat_is(r, "Relu") || c->o->act_scheme == ACT_SYM) return;
    }
    absorbed[(*na)++] = r;
    L->tail = r;
}

/* --fp16: a constant the lowering stores as half (lower.c
 * lower_half_constants: float, HALF_MIN_ELEMENTS or more, within half's
 * range) */
static int half_eligible(const Tensor *t) { return half_candidate_const(t) && half_fits(t); }

/* node n's half constants into layer L */
static void half_consts_of(Cal *c, Layer *L, Node *n)
{
    for (int j = 0; n && j < n->nin; j++) {
        Tensor *t = n->in[j];
        if (!half_eligible(t)) continue;
        int h = 0;
        while (h < c->nhalf && c->half[h].t != t) h++;
        if (h == c->nhalf) {
            struct HalfConst *hc = &c->half[c->nhalf++];
            const int64_t m = tensor_numel(t);
            hc->t = t;
            hc->orig = t->data;
            hc->rounded = xalloc(sizeof(float) * (size_t)m);
            for (int64_t i = 0; i < m; i++)
                hc->rounded[i] = half_to_float(DT_FLOAT16, float_to_half(DT_FLOAT16, ((const float *)t->data)[i]));
        }
        int seen = 0;
        for (int k = 0; k < L->nhc; k++) seen |= L->hc[k] == h;
        if (!seen && L->nhc < MAX_HALF_CONSTS) L->hc[L->nhc++] = h;
    }
}

/* --fp16: the int8 layers' half constants (their precision when they
 * fall back), and a layer of every other node that reads one */
static void find_half_layers(Cal *c)
{
    Graph *g = c->g;
    c->half = xalloc(sizeof(struct HalfConst) * (size_t)(g->ntensors + 1));
    const int n8 = c->nlayers;
    for (int i = 0; i < n8; i++) {
        half_consts_of(c, &c->layers[i], c->layers[i].n);
        half_consts_of(c, &c->layers[i], c->layers[i].mid);
    }
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        int in_layer = 0;
        for (int k = 0; k < n8; k++) {
            const Layer *L = &c->layers[k];
            in_layer |= L->n == n || L->mid == n || L->tail == n;
        }
        int any = 0;
        for (int j = 0; j < n->nin; j++) any |= half_eligible(n->in[j]);
        if (in_layer || !any || n->nout < 1 || !n->out[0] || node_has_subgraph(n)) continue;
        Layer *L = &c->layers[layer_add(c, n, L_HALF)];
        half_consts_of(c, L, n);
    }
}

static void find_layers(Cal *c)
{
    Graph *g = c->g;
    c->layers = xalloc(sizeof(Layer) * (size_t)(g->nnodes + 1));
    Node **absorbed = xalloc(sizeof(Node *) * (size_t)(2 * g->nnodes + 1));
    int na = 0;
    for (int i = 0; i < g->nnodes && c->o->int8; i++) {
        Node *n = g->nodes[i];
        int skip = 0;
        for (int k = 0; k < na; k++) skip |= absorbed[k] == n;
        if (skip || n->nout < 1 || !n->out[0] || n->out[0]->dtype != DT_FLOAT) continue;
        int tb;
        if (pat_is(n, "Conv") && n->nin >= 2 && is_act(n->in[0]) && is_const_float(n->in[1]) && n->in[1]->rank >= 3 &&
            (n->nin < 3 || !n->in[2] || is_const_float(n->in[2]))) {
            Layer *L = &c->layers[layer_add(c, n, L_COMPUTE)];
            layer_weights(L, 1, 0, n->nin > 2 ? n->in[2] : NULL);
            absorb_clamp(c, L, absorbed, &na);
        } else if (pat_is(n, "Gemm") && is_act(n->in[0]) && is_const_float(n->in[1]) && n->in[1]->rank == 2 &&
                   pat_plain_gemm(n, &tb) && (n->nin < 3 || !n->in[2] || is_const_float(n->in[2]))) {
            int64_t N = n->in[1]->dims[tb ? 0 : 1];
            Tensor *b = n->nin > 2 ? n->in[2] : NULL;
            if (b && tensor_numel(b) != N && tensor_numel(b) != 1) continue;
            Layer *L = &c->layers[layer_add(c, n, L_COMPUTE)];
            layer_weights(L, 1, tb ? 0 : 1, b);
            absorb_clamp(c, L, absorbed, &na);
        } else if (pat_is(n, "MatMul") && is_act(n->in[0]) && is_const_float(n->in[1]) && n->in[1]->rank == 2) {
            Layer *L = &c->layers[layer_add(c, n, L_COMPUTE)];
            Node *a = bias_add_of(g, n->out[0], n->in[1]->dims[1]);
            layer_weights(L, 1, 1, a ? pat_other(a, n->out[0]) : NULL);
            if (a) {
                absorbed[na++] = a;
                L->tail = L->mid = a;
            }
            absorb_clamp(c, L, absorbed, &na);
        } else if ((pat_is(n, "Add") || pat_is(n, "Mul")) && is_act(n->in[0]) && is_act(n->in[1])) {
            absorb_clamp(c, &c->layers[layer_add(c, n, L_COMPUTE)], absorbed, &na);
        } else if ((pat_is(n, "GlobalAveragePool") || (pat_is(n, "AveragePool") && !attr_has(n, "dilations"))) &&
                   is_act(n->in[0])) {
            layer_add(c, n, L_COMPUTE);
        } else if (pat_is(n, "Concat") && n->nin <= MAX_LAYER_IN) {
            int ok = 1;
            for (int j = 0; j < n->nin; j++) ok &= is_act(n->in[j]);
            if (ok) layer_add(c, n, L_COMPUTE);
        } else if (pat_tabulable(n) && is_act(n->in[0])) {
            layer_add(c, n, L_UNARY);
        } else if (moves_values(n) && is_act(n->in[0])) {
            layer_add(c, n, L_MOVE);
        }
    }
    if (c->o->fp16) find_half_layers(c);
}

/* ---- sites ----------------------------------------------------------------------- */

static Site *site_find(Cal *c, const Tensor *t)
{
    for (int i = 0; i < c->nsites; i++)
        if (c->sites[i]->t == t) return c->sites[i];
    return NULL;
}

static Site *site_get(Cal *c, Tensor *t)
{
    Site *s = site_find(c, t);
    if (s) return s;
    if (c->nsites == c->cap_sites) {
        c->cap_sites = c->cap_sites ? 2 * c->cap_sites : 64;
        Site **n = xalloc(sizeof(Site *) * (size_t)c->cap_sites);
        if (c->nsites) memcpy(n, c->sites, sizeof(Site *) * (size_t)c->nsites);
        c->sites = n;
    }
    s = xalloc(sizeof *s);
    s->t = t;
    s->name = t->name;
    c->sites[c->nsites++] = s;
    return s;
}

/* a site of t, or else a new one without Q and DQ (its values only compared) */
static Site *site_observe(Cal *c, Tensor *t)
{
    Site *s = site_find(c, t);
    if (s) return s;
    s = site_get(c, t);
    s->src = t;
    s->observe = 1;
    return s;
}

/* Q and DQ inserted for site s: the producer writes src, the readers keep
 * reading t (a graph input: its readers read a new t) */
static void site_insert(Cal *c, Site *s)
{
    Graph *g = c->g;
    Tensor *t = s->t;
    const int qopset = g->opset < 13 ? 13 : g->opset;
    s->scale = graph_new_const(g, "calib_scale", DT_FLOAT, 0, NULL);
    s->zp = graph_new_const(g, "calib_zero_point", c->qdt, 0, NULL);
    ((float *)s->scale->data)[0] = 1;
    if (t->is_input) {
        Tensor *t2 = graph_new_tensor(g, "calib_dq");
        t2->dtype = t->dtype;
        tensor_set_shape(t2, t->rank, t->dims);
        graph_replace_uses(g, t, t2);
        s->src = t;
        s->t = t2;
    } else {
        Node *p = t->producer;
        int j = 0;
        while (p->out[j] != t) j++;
        Tensor *src = graph_new_tensor(g, "calib_float");
        src->dtype = t->dtype;
        tensor_set_shape(src, t->rank, t->dims);
        node_set_output(p, j, src);
        s->src = src;
    }
    Tensor *tq = graph_new_tensor(g, xfmt("%s_quantized", s->name));
    tq->qof = s->name;   /* what --debug-tensors calls it (scale and zero point: apply_params) */
    Tensor *qin[3] = {s->src, s->scale, s->zp};
    s->q = graph_insert_node(g, NULL, "QuantizeLinear", "", qin, 3, &tq, 1);
    s->q->opset = qopset;
    node_reinfer(s->q);
    Tensor *dqin[3] = {tq, s->scale, s->zp};
    s->dq = graph_insert_node(g, NULL, "DequantizeLinear", "", dqin, 3, &s->t, 1);
    s->dq->opset = qopset;
    node_reinfer(s->dq);
}

/* the weights' int8 copy, scales and DQ (values set by quantize_weights) */
static void weights_insert(Cal *c, Layer *L)
{
    Graph *g = c->g;
    const int64_t M = L->w->dims[L->axis];
    L->wq = graph_new_const(g, "calib_weights", DT_INT8, L->w->rank, L->w->dims);
    L->ws = graph_new_const(g, "calib_weight_scales", DT_FLOAT, 1, &M);
    L->wdeq = graph_new_tensor(g, "calib_weights_dq");
    /* zero points of zeros, one per channel: onnxruntime's fusions of a QDQ
     * model (QGemm) want them the scales' shape */
    Tensor *in[3] = {L->wq, L->ws, graph_new_const(g, "calib_weight_zero_points", DT_INT8, 1, &M)};
    L->wdq = graph_insert_node(g, NULL, "DequantizeLinear", "", in, 3, &L->wdeq, 1);
    L->wdq->opset = g->opset < 13 ? 13 : g->opset;
    node_set_attr_i(L->wdq, "axis", L->axis);
    node_reinfer(L->wdq);
    node_set_input(g, L->n, L->wslot, L->wdeq);
}

static void make_sites(Cal *c)
{
    for (int i = 0; i < c->nlayers; i++) {
        Layer *L = &c->layers[i];
        Node *n = L->n;
        if (L->kind == L_HALF) continue;
        int nin = L->kind == L_COMPUTE && (pat_is(n, "Add") || pat_is(n, "Mul") || pat_is(n, "Concat")) ? n->nin : 1;
        for (int j = 0; j < nin; j++) L->in[L->nin++] = site_get(c, n->in[j]);
        for (int j = 0; j < L->tail->nout; j++)
            if (L->tail->out[j]) {
                Site *s = site_get(c, L->tail->out[j]);
                L->out[L->nout++] = s;
                if (L->kind == L_MOVE) s->from = L;
            }
    }
    for (int i = 0; i < c->nsites; i++) site_insert(c, c->sites[i]);
    for (int i = 0; i < c->nlayers; i++)
        if (c->layers[i].w) weights_insert(c, &c->layers[i]);
    /* --fp16 layers: their activations measured where they are (no Q and DQ) */
    for (int i = 0; i < c->nlayers; i++) {
        Layer *L = &c->layers[i];
        if (L->kind != L_HALF) continue;
        for (int j = 0; j < L->n->nin && L->nin < MAX_LAYER_IN; j++)
            if (is_act(L->n->in[j])) L->in[L->nin++] = site_observe(c, L->n->in[j]);
        for (int j = 0; j < L->n->nout && L->nout < MAX_LAYER_OUT; j++)
            if (is_act(L->n->out[j])) L->out[L->nout++] = site_observe(c, L->n->out[j]);
    }
    topo_sort(c->g);
    graph_recount_uses(c->g);
}

/* ---- the configuration: which layers and sites are int8 ------------------------------ */

static void configure(Cal *c)
{
    for (int i = 0; i < c->nsites; i++) c->sites[i]->on = 0;
    for (int i = 0; i < c->nlayers; i++) {
        Layer *L = &c->layers[i];
        L->quant = L->kind == L_COMPUTE && !L->keep_float && !L->fell_back;
        for (int j = 0; L->quant && j < L->nin; j++) L->in[j]->on = 1;
        for (int j = 0; L->quant && j < L->nout; j++) L->out[j]->on = 1;
    }
    for (int i = 0; i < c->nlayers; i++) {   /* graph order: a move or table follows its input */
        Layer *L = &c->layers[i];
        if (L->kind == L_COMPUTE || L->kind == L_HALF || L->keep_float || L->fell_back || !L->in[0]->on) continue;
        L->quant = 1;
        for (int j = 0; j < L->nout; j++) L->out[j]->on = 1;
    }
}

/* the layer's precision in the configuration */
static int layer_prec(const Cal *c, const Layer *L)
{
    if (L->keep_float) return P_FLOAT;
    if (L->kind == L_HALF) return L->fell_back ? P_FLOAT : P_HALF;
    if (L->quant) return P_INT8;
    return c->o->fp16 && L->nhc && L->fell_back < 2 ? P_HALF : P_FLOAT;
}

/* --fp16: the half constants hold their rounded values (on) or their own
 * (off); a constant is rounded where a layer reading it is at P_HALF and
 * none is at P_FLOAT (the lowering keeps it float32 for every reader) */
static void half_swap(Cal *c, int on)
{
    for (int h = 0; h < c->nhalf; h++) c->half[h].round = 0;
    for (int i = 0; on && i < c->nlayers; i++) {
        const Layer *L = &c->layers[i];
        const int p = layer_prec(c, L);
        for (int k = 0; k < L->nhc; k++)
            if (p == P_HALF && c->half[L->hc[k]].round == 0) c->half[L->hc[k]].round = 1;
            else if (p == P_FLOAT) c->half[L->hc[k]].round = -1;
    }
    for (int h = 0; h < c->nhalf; h++) c->half[h].t->data = c->half[h].round > 0 ? c->half[h].rounded : c->half[h].orig;
}

/* the range a site's parameters come from: a quantized move layer's input's */
static const Site *range_site(const Site *s)
{
    while (s->from && s->from->quant) s = s->from->in[0];
    return s;
}

static void site_params(const Cal *c, const Site *s, float *scale, int32_t *zp)
{
    const Site *r = range_site(s);
    double lo = r->lo < 0 ? r->lo : 0, hi = r->hi > 0 ? r->hi : 0;
    if (c->o->act_scheme == ACT_SYM) {
        double a = -lo > hi ? -lo : hi;
        *scale = a > 0 ? (float)(a / 127) : 1.0f;
        *zp = 0;
        return;
    }
    *scale = hi - lo > 0 ? (float)((hi - lo) / (c->qmax - c->qmin)) : 1.0f;
    if (!(*scale > 0) || !isfinite(*scale)) *scale = 1.0f;   /* (a range below the smallest normal float) */
    double z = nearbyint(c->qmin - lo / *scale);
    *zp = (int32_t)(z < c->qmin ? c->qmin : z > c->qmax ? c->qmax : z);
}

static float site_scale(const Cal *c, const Site *s)
{
    float sc;
    int32_t zp;
    site_params(c, s, &sc, &zp);
    return sc;
}

/* symmetric int8 per output channel; a channel's scale raised where its
 * bias would not fit int32 at x_scale * w_scale */
static void quantize_weights(Cal *c, Layer *L)
{
    const Tensor *w = L->w;
    const int64_t M = w->dims[L->axis];
    int64_t inner = 1, outer = 1;
    for (int d = L->axis + 1; d < w->rank; d++) inner *= w->dims[d];
    for (int d = 0; d < L->axis; d++) outer *= w->dims[d];
    const float *W = w->data;
    float *S = L->ws->data;
    int8_t *Q = L->wq->data;
    const float xs = site_scale(c, L->in[0]);
    for (int64_t m = 0; m < M; m++) {
        double amax = 0;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t k = 0; k < inner; k++) {
                double v = fabs(W[(o * M + m) * inner + k]);
                amax = v > amax ? v : amax;
            }
        double s = amax / 127;
        if (L->bias) {
            double b = fabs(elem_f64(L->bias->dtype, L->bias->data, tensor_numel(L->bias) == 1 ? 0 : m));
            double need = b / ((double)xs * (double)(1 << 30));
            s = need > s ? need : s;
        }
        S[m] = s > 0 && isfinite(s) && (float)s > 0 ? (float)s : 1.0f;
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t k = 0; k < inner; k++) {
                int64_t i = (o * M + m) * inner + k;
                double q = nearbyint(W[i] / S[m]);
                Q[i] = (int8_t)(q < -127 ? -127 : q > 127 ? 127 : q);
            }
}

/* the configuration's parameters into the sites' constants and the weights */
static void apply_params(Cal *c)
{
    for (int i = 0; i < c->nsites; i++) {
        Site *s = c->sites[i];
        float sc;
        int32_t zp;
        if (s->observe) continue;
        site_params(c, s, &sc, &zp);
        ((float *)s->scale->data)[0] = sc;
        elem_set(c->qdt, s->zp->data, 0, zp);
        s->q->out[0]->qscale = sc;
        s->q->out[0]->qzero = zp;
    }
    for (int i = 0; i < c->nlayers; i++)
        if (c->layers[i].w && c->layers[i].quant) quantize_weights(c, &c->layers[i]);
}

/* ---- evaluation ------------------------------------------------------------------- */

/* The tensors a run computes, to be reset after each set (their memory
 * is the set's): those of the graph without data, and every tensor of the
 * bodies of its control-flow nodes (If branches, Loop and Scan bodies, and
 * their unrolled copies) that is computed, inputs included: the op sets
 * them each run; but not an unrolled iteration's inputs that hold data,
 * which are constants (its iteration number and condition). Counted first
 * (store 0), then stored. kind: 0 the graph, 1 a body, 2 an unrolled
 * iteration. */
static void collect_vars(Cal *c, Graph *g, int kind, int store)
{
    for (int t = 0; t < g->ntensors; t++) {
        Tensor *x = g->tensors[t];
        if (kind == 0 ? !x->data && !x->is_input : !x->data || x->producer || (x->is_input && kind == 1)) {
            if (store) c->vars[c->nvars] = x;
            c->nvars++;
        }
    }
    for (int i = 0; i < g->nnodes; i++)
        for (int a = 0; a < g->nodes[i]->nattrs; a++) {
            Graph *b = g->nodes[i]->attrs[a].g;
            if (!b) continue;
            collect_vars(c, b, 1, store);
            for (int k = 0; k < b->nunrolled; k++) collect_vars(c, b->unrolled[k], 2, store);
        }
}

static void tag_nodes(Cal *c)
{
    Graph *g = c->g;
    c->tag_site = xalloc(sizeof(Site *) * (size_t)(g->nnodes + 1));
    c->tag_layer = xalloc(sizeof(Layer *) * (size_t)(g->nnodes + 1));
    for (int i = 0; i < c->nsites; i++) {
        if (c->sites[i]->observe) continue;
        c->tag_site[graph_node_index(g, c->sites[i]->q)] = c->sites[i];
        c->tag_site[graph_node_index(g, c->sites[i]->dq)] = c->sites[i];
    }
    for (int i = 0; i < c->nlayers; i++)
        if (c->layers[i].wdq) c->tag_layer[graph_node_index(g, c->layers[i].wdq)] = &c->layers[i];
    c->nvars = 0;
    collect_vars(c, g, 0, 0);
    c->vars = xalloc(sizeof(Tensor *) * (size_t)(c->nvars + 1));
    c->nvars = 0;
    collect_vars(c, g, 0, 1);
}

static double sqnr_db(double sig, double err)
{
    if (err <= 0) return SQNR_CAP;
    if (sig <= 0) return -SQNR_CAP;
    double d = 10 * log10(sig / err);
    return d > SQNR_CAP ? SQNR_CAP : d;
}

static void compare(const float *ref, const float *x, int64_t n, double *sig, double *err)
{
    double s = 0, e = 0;
    for (int64_t i = 0; i < n; i++) {
        s += (double)ref[i] * ref[i];
        e += ((double)x[i] - ref[i]) * ((double)x[i] - ref[i]);
    }
    *sig += s;
    *err += e;
}

/* a site's float value seen: into its histogram (EV_STATS) or its reference (EV_FLOAT) */
static void site_seen(Cal *c, Site *s, int set)
{
    const int64_t n = tensor_numel(s->src);
    if (c->mode == EV_QUANT) {   /* (what readers read is compared at the DQ, but for an observed site) */
        if (s->observe) compare(s->ref, s->src->data, n, &s->sig, &s->err);
        else compare(s->ref, s->src->data, n, &s->sig_f, &s->err_f);
        return;
    }
    if (c->mode == EV_STATS && s->h_half && set < c->held_out) (void)hist_add(s->h_half, s->src->data, n);
    if (c->mode == EV_STATS && s->h && !hist_add(s->h, s->src->data, n)) {
        if (s->src->is_input) fail_plain("%s: input '%s' holds a NaN or an infinity; calibration inputs must be finite",
                                         c->set_dirs[set], s->src->name);
        fail_plain("the float model computes a NaN or an infinity in '%s' on calibration set %s: it cannot be "
                   "calibrated on that input", s->name, c->set_dirs[set]);
    }
    if (c->mode == EV_FLOAT) memcpy(s->ref, s->src->data, sizeof(float) * (size_t)n);
}

static void eval_set(Cal *c, int set)
{
    Graph *g = c->g;
    for (int i = 0; i < c->nsites; i++)
        if (c->sites[i]->src->is_input && c->mode != EV_QUANT) site_seen(c, c->sites[i], set);
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        Site *s = c->tag_site[i];
        Layer *L = c->tag_layer[i];
        diag_node = n;
        int q = c->mode == EV_QUANT;
        if (s && n == s->q && !(q && s->on)) continue;
        if (s && n == s->dq && !(q && s->on)) {
            s->t->data = s->src->data;
        } else if (L && !(q && L->quant)) {
            L->wdeq->data = L->w->data;
        } else {
            eval_node(n, 1);
        }
        if (s && n == s->dq && q) compare(s->ref, s->t->data, tensor_numel(s->t), &s->sig, &s->err);
        for (int j = 0; j < n->nout; j++) {
            Tensor *t = n->out[j];
            if (!t) continue;
            for (int k = 0; k < c->nsites; k++)   /* the sites whose float value this is */
                if (c->sites[k]->src == t) site_seen(c, c->sites[k], set);
        }
    }
    diag_node = NULL;
    for (int k = 0; k < g->noutputs && k < 64; k++) {
        Tensor *t = g->outputs[k];
        if (t->dtype != DT_FLOAT || !t->data) continue;
        const int64_t n = tensor_numel(t);
        if (c->mode == EV_FLOAT) memcpy(c->out_ref[k], t->data, sizeof(float) * (size_t)n);
        if (c->mode == EV_QUANT) compare(c->out_ref[k], t->data, n, &c->out_sig[k], &c->out_err[k]);
    }
}

/* ---- calibration sets ---------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void list_sets(Cal *c, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) fail_plain("--calibrate %s: cannot open the directory", dir);
    int cap = 16;
    c->set_dirs = xalloc(sizeof(char *) * (size_t)cap);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char *p = xfmt("%s/%s/input_0.pb", dir, e->d_name);
        FILE *f = fopen(p, "rb");
        if (!f) {
            if (c->g->ninputs == 0) continue;
            char *sub = xfmt("%s/%s", dir, e->d_name);
            DIR *sd = opendir(sub);
            if (sd) {
                closedir(sd);
                closedir(d);
                fail_plain("--calibrate %s: the set '%s' has no input_0.pb (a set is a directory of input_K.pb, K "
                           "in graph-input order)", dir, sub);
            }
            continue;   /* a file beside the sets */
        }
        fclose(f);
        if (c->nsets == cap) {
            char **n = xalloc(sizeof(char *) * (size_t)(cap *= 2));
            memcpy(n, c->set_dirs, sizeof(char *) * (size_t)c->nsets);
            c->set_dirs = n;
        }
        c->set_dirs[c->nsets++] = xfmt("%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (!c->nsets)
        fail_plain("--calibrate %s: no calibration sets (expected DIR/NAME/input_K.pb, ONNX's test-data layout)", dir);
    qsort(c->set_dirs, (size_t)c->nsets, sizeof(char *), cmp_str);
}

/* set k's inputs into the graph inputs (pool memory of the set) */
static void load_set(Cal *c, int k)
{
    Graph *g = c->g;
    const char *saved = diag_file;
    for (int i = 0; i < g->ninputs; i++) {
        Tensor *in = g->inputs[i];
        char *p = xfmt("%s/input_%d.pb", c->set_dirs[k], i);
        Tensor v;
        memset(&v, 0, sizeof v);
        diag_file = p;
        c->o->read_tensor(p, &v, "calibration input");
        diag_file = saved;
        if (v.dtype != in->dtype)
            fail_plain("%s: holds %s data; input %d '%s' of the model is %s", p, dtype_name(v.dtype), i, in->name,
                       dtype_name(in->dtype));
        int same = v.rank == in->rank;
        for (int d = 0; same && d < v.rank; d++) same = v.dims[d] == in->dims[d];
        if (!same) {
            char *want = xstrdup(tensor_shape_str(in));
            fail_plain("%s: has shape %s; input %d '%s' of the model has shape %s (fix it with --shape %s:...)", p,
                       tensor_shape_str(&v), i, in->name, want, in->name);
        }
        in->data = v.data;
    }
    char *extra = xfmt("%s/input_%d.pb", c->set_dirs[k], g->ninputs);
    FILE *f = fopen(extra, "rb");
    if (f) {
        fclose(f);
        fail_plain("%s: the model has %d input%s, the set has more", extra, g->ninputs, g->ninputs == 1 ? "" : "s");
    }
}

/* Runs every set (or the first n) in the current mode, memory bounded:
 * what a set allocates is freed after it */
static void run_sets(Cal *c, int first, int n, int mode_pair)
{
    Graph *g = c->g;
    const int ids = tensor_id_now();
    for (int k = first; k < first + n; k++) {
        void *mark = pool_mark();
        load_set(c, k);
        if (mode_pair) {   /* the float run, then the quantized one, on one set */
            c->mode = EV_FLOAT;
            eval_set(c, k);
            for (int v = 0; v < c->nvars; v++) c->vars[v]->data = NULL;
            c->mode = EV_QUANT;
            half_swap(c, 1);
        }
        eval_set(c, k);
        half_swap(c, 0);
        for (int v = 0; v < c->nvars; v++) c->vars[v]->data = NULL;
        for (int i = 0; i < g->ninputs; i++) g->inputs[i]->data = NULL;
        pool_release_to(mark);
        graph_index_reset();   /* (an index rebuilt during the run was in the memory freed) */
        g->uses_stale = 1;
        tensor_id_rewind(ids);
    }
}

/* ---- accuracy and fallback ------------------------------------------------------------ */

/* a site's SQNR: of what its readers read, or of its producer's value
 * (before Q: a float or fp16 layer's own output) */
static double site_out_db(const Site *s, int at_src)
{
    return s->observe || !at_src ? sqnr_db(s->sig, s->err) : sqnr_db(s->sig_f, s->err_f);
}

static void measure(Cal *c)
{
    for (int i = 0; i < c->nsites; i++) c->sites[i]->sig = c->sites[i]->err = c->sites[i]->sig_f = c->sites[i]->err_f = 0;
    for (int k = 0; k < 64; k++) c->out_sig[k] = c->out_err[k] = 0;
    configure(c);
    apply_params(c);
    run_sets(c, c->acc_first, c->acc_sets, 1);
    c->model_sqnr = SQNR_CAP;
    for (int k = 0; k < c->g->noutputs && k < 64; k++) {
        if (c->g->outputs[k]->dtype != DT_FLOAT) continue;
        double d = sqnr_db(c->out_sig[k], c->out_err[k]);
        c->model_sqnr = d < c->model_sqnr ? d : c->model_sqnr;
    }
    for (int i = 0; i < c->nlayers; i++) {
        Layer *L = &c->layers[i];
        double in = SQNR_CAP, out = SQNR_CAP;
        for (int j = 0; j < L->nin; j++) {
            double d = sqnr_db(L->in[j]->sig, L->in[j]->err);
            in = d < in ? d : in;
        }
        for (int j = 0; j < L->nout; j++) {
            double d = site_out_db(L->out[j], layer_prec(c, L) != P_INT8);
            out = d < out ? d : out;
        }
        /* the noise it adds, relative to the signal: noise powers add
         * along the model, so a layer taking 25 dB to 20 does more harm
         * than the first layer taking an exact input to 40 */
        L->drop = pow(10, -out / 10) - pow(10, -in / 10);
        L->lost_db = in - out;
    }
}

/* Each quantized site's range from its histogram by calibrator `method`. */
static void set_ranges(Cal *c, int method, int from_half)
{
    const int levels = c->o->act_scheme == ACT_SYM ? 254 : 255;
    for (int i = 0; i < c->nsites; i++) {
        Site *s = c->sites[i];
        if (!s->observe) hist_range(from_half ? s->h_half : s->h, method, c->o->calib_param, levels, &s->lo, &s->hi);
    }
}

/* --calibration auto: a clipping calibrator (mse, percentile) is kept over
 * minmax only when it measures at least this much better on the held-out
 * sets (the differences below it change sign from one set of inputs to
 * another: docs/PRECISION.md, the accuracy table) */
#define AUTO_MARGIN_DB 0.25

/* The ranges, from the histograms (then freed). --calibration auto: each
 * candidate calibrator's ranges from the first half of the sets are
 * measured on the other half, as the model runs them (every layer int8, the
 * output SQNR, as fallback measures): held out, since on the sets that made
 * the ranges a calibrator that clips their tails always looks better than
 * it is on inputs it has not seen. The best is kept, minmax unless another
 * is AUTO_MARGIN_DB better, and its ranges made from all the sets. No one
 * calibrator is best on every model. Entropy is no candidate: on the
 * project's models it is the worst by 5-20 dB. One set: minmax. */
static void choose_ranges(Cal *c, int nq)
{
    static const int CANDIDATES[] = {CALIB_MINMAX, CALIB_MSE, CALIB_PERCENTILE};
    c->method = c->o->calib_method;
    if (c->method == CALIB_AUTO && !nq) c->method = CALIB_MSE;   /* --fp16 alone: no ranges */
    if (c->method == CALIB_AUTO && c->nsets < 2) c->method = CALIB_MINMAX;
    if (c->method == CALIB_AUTO) {
        const int acc = c->acc_sets;
        c->acc_first = c->held_out;
        c->acc_sets = c->nsets - c->held_out < ACCURACY_SETS ? c->nsets - c->held_out : ACCURACY_SETS;
        double best = -HUGE_VAL;
        for (size_t k = 0; k < sizeof CANDIDATES / sizeof CANDIDATES[0]; k++) {
            set_ranges(c, CANDIDATES[k], 1);
            measure(c);
            c->auto_db[CANDIDATES[k]] = c->model_sqnr;
            note("calibrate: calibrator %s: output SQNR %.2f dB on held-out sets", calib_method_name(CANDIDATES[k]),
                 c->model_sqnr);
            if (c->model_sqnr >= best + (k ? AUTO_MARGIN_DB : 0)) {
                best = c->model_sqnr;
                c->method = CANDIDATES[k];
            }
        }
        c->acc_first = 0;
        c->acc_sets = acc;
    }
    if (nq) set_ranges(c, c->method, 0);
    for (int i = 0; i < c->nsites; i++) c->sites[i]->h = c->sites[i]->h_half = NULL;
}

static const char *prec_name(int p) { return p == P_INT8 ? "int8" : p == P_HALF ? "fp16" : "float"; }

/* a layer fallback can take a step up from precision p: int8 (not a
 * move: it follows its input) or fp16 */
static int fallback_candidate(const Cal *c, const Layer *L, int p)
{
    return layer_prec(c, L) == p && (p == P_HALF || L->kind != L_MOVE);
}

/* returns the output SQNR with every layer at its lowest precision (but
 * --keep-float's): int8, else fp16 (--fp16) */
static double fallback(Cal *c)
{
    measure(c);
    const double all = c->model_sqnr;
    note("calibrate: all layers %s: output SQNR %.1f dB", c->o->int8 ? "int8" : "fp16", c->model_sqnr);
    while (c->model_sqnr < c->o->min_sqnr) {
        /* one step up for the layer that added the most relative noise
         * (int8 to fp16 with --fp16, else to float; fp16 to float, once
         * no layer is int8: a float layer's output, measured before the Q
         * of an int8 reader, carries its input's noise as the layer
         * amplifies it, so int8 and fp16 layers are not compared), and
         * for those that added at least half as much: a measurement is a
         * run of the accuracy sets, and layers of about the same harm are
         * taken together */
        Layer *worst = NULL;
        int level = P_INT8;   /* every int8 layer goes to fp16 before an fp16 one goes to float */
        for (int i = 0; i < c->nlayers && !worst; i++) worst = fallback_candidate(c, &c->layers[i], P_INT8) ? &c->layers[i] : NULL;
        if (!worst) level = P_HALF;
        worst = NULL;
        for (int i = 0; i < c->nlayers; i++) {
            Layer *L = &c->layers[i];
            if (fallback_candidate(c, L, level) && (!worst || L->drop > worst->drop)) worst = L;
        }
        if (!worst) break;
        const double cut = worst->drop > 0 ? worst->drop / FALLBACK_BATCH : worst->drop;
        int moved = 0;
        for (int i = 0; i < c->nlayers; i++) {
            Layer *L = &c->layers[i];
            if (!fallback_candidate(c, L, level) || L->drop < cut) continue;
            const int from = layer_prec(c, L);
            L->fell_back++;
            L->quant = 0;
            note("calibrate: %s '%s' %s to %s (its output lost %.1f dB of SQNR, relative noise +%.2g)", L->n->op_type,
                 L->n->name, prec_name(from), prec_name(layer_prec(c, L)), L->lost_db, L->drop);
            moved++;
        }
        measure(c);
        note("calibrate: %d layer%s up: output SQNR %.1f dB", moved, moved == 1 ? "" : "s", c->model_sqnr);
    }
    return all;
}

/* ---- the cache ------------------------------------------------------------------------ */

static const char *precision_name(const Options *o) { return o->int8 && o->fp16 ? "int8+fp16" : o->int8 ? "int8" : "fp16"; }

static void write_cache(Cal *c, const char *path, uint64_t hash)
{
    char *tmp = xfmt("%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) fail_plain("--calib-cache %s: cannot write the file", path);
    fprintf(f, "%s\n# the calibrated real range [lo, hi] of each quantized tensor (hexadecimal floats), and the\n"
               "# layers kept in float; onnx2c reads it back with --int8 --calib-cache FILE and no --calibrate\n",
            CACHE_MAGIC);
    fprintf(f, "model %016llx\nprecision %s\ncalibration %s\nsets %d\n", (unsigned long long)hash, precision_name(c->o),
            calib_method_name(c->method), c->nsets);
    for (int i = 0; i < c->nsites; i++) {
        const Site *s = c->sites[i];
        if (!s->observe) fprintf(f, "range %a %a %s\n", s->lo, s->hi, s->name);
    }
    for (int i = 0; i < c->nlayers; i++)
        if (c->layers[i].fell_back)
            fprintf(f, "%s %s\n", layer_prec(c, &c->layers[i]) == P_HALF ? "fp16" : "float", c->layers[i].n->name);
    int bad = ferror(f);
    if (fclose(f) || bad || rename(tmp, path)) {
        remove(tmp);
        fail_plain("--calib-cache %s: cannot write the file", path);
    }
}

static Layer *layer_named(Cal *c, const char *name)
{
    for (int i = 0; i < c->nlayers; i++) {
        const Node *n = c->layers[i].n;
        if (!strcmp(n->name, name)) return &c->layers[i];
        for (int k = 0; k < n->norigins; k++)
            if (!strcmp(n->origins[k], name)) return &c->layers[i];
    }
    return NULL;
}

static void read_cache(Cal *c, const char *path, uint64_t hash)
{
    size_t len;
    char *text = (char *)file_read(path, &len, "calibration cache");
    char *buf = xalloc(len + 1);
    memcpy(buf, text, len);
    int lineno = 0, got_model = 0;
    for (char *line = buf, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        lineno++;
        if (lineno == 1) {
            if (strcmp(line, CACHE_MAGIC))
                fail_plain("--calib-cache %s: not an onnx2c calibration cache (the first line is not '%s')", path,
                           CACHE_MAGIC);
            continue;
        }
        if (!*line || *line == '#') continue;
        if (!strncmp(line, "model ", 6)) {
            unsigned long long h = strtoull(line + 6, NULL, 16);
            if (h != hash)
                fail_plain("--calib-cache %s: the cache was made for another model (model hash %s, this model's "
                           "%016llx): calibrate this one with --calibrate DIR", path, line + 6, (unsigned long long)hash);
            got_model = 1;
        } else if (!strncmp(line, "range ", 6)) {
            char *p = line + 6, *e1, *e2;
            double lo = strtod(p, &e1), hi = strtod(e1, &e2);
            if (e1 == p || e2 == e1 || *e2 != ' ' || !(lo <= hi) || !isfinite(lo) || !isfinite(hi))
                fail_plain("--calib-cache %s:%d: expected 'range LO HI TENSOR'", path, lineno);
            Site *s = NULL;
            for (int i = 0; i < c->nsites && !s; i++)
                if (!c->sites[i]->observe && !strcmp(c->sites[i]->name, e2 + 1)) s = c->sites[i];
            if (!s)
                fail_plain("--calib-cache %s:%d: this model has no quantized tensor '%s' (the cache was made for "
                           "another model or other flags): calibrate again with --calibrate DIR", path, lineno, e2 + 1);
            s->lo = lo;
            s->hi = hi;
            s->have_range = 1;
        } else if (!strncmp(line, "precision ", 10)) {
            if (strcmp(line + 10, precision_name(c->o)))
                fail_plain("--calib-cache %s:%d: the cache is for %s, these flags ask for %s: calibrate again with "
                           "--calibrate DIR", path, lineno, line + 10, precision_name(c->o));
        } else if (!strncmp(line, "float ", 6) || !strncmp(line, "fp16 ", 5)) {
            const int half = line[0] == 'f' && line[1] == 'p';
            const char *nm = line + (half ? 5 : 6);
            Layer *L = layer_named(c, nm);
            if (!L) fail_plain("--calib-cache %s:%d: this model has no layer '%s'", path, lineno, nm);
            if (half && (L->kind == L_HALF || !L->nhc))
                fail_plain("--calib-cache %s:%d: layer '%s' has no fp16 precision with these flags", path, lineno, nm);
            L->fell_back = half || L->kind == L_HALF || !c->o->fp16 || !L->nhc ? 1 : 2;
        } else if (strncmp(line, "calibration ", 12) && strncmp(line, "sets ", 5)) {
            fail_plain("--calib-cache %s:%d: unexpected line '%.60s'", path, lineno, line);
        }
    }
    if (!got_model) fail_plain("--calib-cache %s: no 'model' line", path);
    for (int i = 0; i < c->nsites; i++)
        if (!c->sites[i]->have_range && !c->sites[i]->observe)
            fail_plain("--calib-cache %s: no range for tensor '%s' (the cache was made for another model or other "
                       "flags): calibrate again with --calibrate DIR", path, c->sites[i]->name);
}

/* ---- finishing ---------------------------------------------------------------------- */

static void remove_off(Cal *c)
{
    Graph *g = c->g;
    for (int i = 0; i < c->nsites; i++) {
        Site *s = c->sites[i];
        if (s->on || s->observe) continue;
        graph_remove_node(g, s->dq);
        graph_remove_node(g, s->q);
        if (s->src->is_input) {
            graph_replace_uses(g, s->t, s->src);
        } else {
            Node *p = s->src->producer;
            int j = 0;
            while (p->out[j] != s->src) j++;
            node_set_output(p, j, s->t);
        }
    }
    for (int i = 0; i < c->nlayers; i++) {
        Layer *L = &c->layers[i];
        if (!L->wdq || L->quant) continue;
        node_set_input(g, L->n, L->wslot, L->w);
        graph_remove_node(g, L->wdq);
    }
    topo_sort(g);
    graph_recount_uses(g);
}

/* --fp16: the nodes of the float layers (names and origins) go to the
 * lowering, which keeps the constants they read float32 */
static void keep_fp32_nodes(Cal *c)
{
    Graph *g = c->g;
    int cap = 0, n = 0;
    for (int i = 0; i < c->nlayers; i++) cap += 2 + c->layers[i].n->norigins + (c->layers[i].mid ? 1 + c->layers[i].mid->norigins : 0);
    const char **names = xalloc(sizeof(char *) * (size_t)(cap + 1));
    for (int i = 0; i < c->nlayers; i++) {
        const Layer *L = &c->layers[i];
        if (!L->nhc || layer_prec(c, L) != P_FLOAT) continue;
        const Node *nodes[2] = {L->n, L->mid};
        for (int k = 0; k < 2; k++) {
            if (!nodes[k]) continue;
            names[n++] = nodes[k]->name;
            for (int j = 0; j < nodes[k]->norigins; j++) names[n++] = nodes[k]->origins[j];
        }
    }
    g->fp32_nodes = names;
    g->nfp32_nodes = n;
}

/* why a layer is not at its lowest precision */
static const char *layer_why(const Cal *c, const Layer *L)
{
    if (L->quant || (L->kind == L_HALF && !L->keep_float && !L->fell_back)) return "";
    if (L->keep_float == KEEP_NOT_FINITE) return "a weight is NaN or infinite";
    if (L->keep_float) return "--keep-float";
    if (L->fell_back) return c->o->calibrate ? "fallback to reach --min-sqnr" : "fallback (from the cache)";
    return "its input is float";
}

static char *report_text(Cal *c, double sqnr_all, int measured)
{
    size_t cap = 4096, n = 0;
    for (int i = 0; i < c->nlayers; i++) cap += 160 + strlen(c->layers[i].n->name);
    char *r = xalloc(cap);
    const char *act = c->o->act_scheme == ACT_U8 ? "u8" : c->o->act_scheme == ACT_S8 ? "s8" : "sym";
#define PUT(...) n += (size_t)snprintf(r + n, n < cap ? cap - n : 0, __VA_ARGS__)
    if (c->o->int8)
        PUT("\nint8 calibration: %s, activations %s, weights int8 symmetric per output channel%s\n",
            c->o->calibrate ? xfmt("%d sets, calibrator %s", c->nsets, calib_method_name(c->method))
                            : xfmt("ranges from the cache %s", c->o->calib_cache),
            act, c->o->fp16 ? "; float layers with half constants (--fp16)" : "");
    else
        PUT("\nfp16 calibration: %s; fp16: constants stored as half, computed in float32\n",
            c->o->calibrate ? xfmt("%d sets", c->nsets) : xfmt("float layers from the cache %s", c->o->calib_cache));
    if (c->o->int8 && c->o->calibrate && c->o->calib_method == CALIB_AUTO && c->nsets >= 2)
        PUT("  calibrator auto: ranges from sets 1-%d, output SQNR on sets %d-%d with every layer int8: minmax %.2f dB, "
            "mse %.2f dB, percentile %.2f dB: %s kept (another than minmax only %.2f dB better)\n", c->held_out,
            c->held_out + 1, c->nsets < c->held_out + ACCURACY_SETS ? c->nsets : c->held_out + ACCURACY_SETS,
            c->auto_db[CALIB_MINMAX], c->auto_db[CALIB_MSE], c->auto_db[CALIB_PERCENTILE],
            calib_method_name(c->method), AUTO_MARGIN_DB);
    if (measured)
        PUT("  output SQNR on %d calibration sets: %.1f dB (all layers %s: %.1f dB; --min-sqnr %.1f)\n", c->acc_sets,
            c->model_sqnr, c->o->int8 ? "int8" : "fp16", sqnr_all, c->o->min_sqnr);
    PUT("  %-9s %-24s %12s %12s %9s  %-28s %s\n", "precision", "op", "in scale", "out scale", "SQNR dB",
        c->o->int8 ? "why not int8" : "why float", "layer (ONNX node)");
    int np[3] = {0, 0, 0};
    for (int i = 0; i < c->nlayers; i++) {
        const Layer *L = &c->layers[i];
        if (L->kind == L_MOVE) continue;
        double out = SQNR_CAP;
        for (int j = 0; j < L->nout; j++) {
            double d = site_out_db(L->out[j], layer_prec(c, L) != P_INT8);
            out = d < out ? d : out;
        }
        char sq[32] = "-", is[32] = "-", os[32] = "-";
        if (measured) snprintf(sq, sizeof sq, "%.1f", out);
        if (L->quant) {
            snprintf(is, sizeof is, "%.4g", site_scale(c, L->in[0]));
            snprintf(os, sizeof os, "%.4g", site_scale(c, L->out[0]));
        }
        const int p = layer_prec(c, L);
        PUT("  %-9s %-24s %12s %12s %9s  %-28s %s\n", prec_name(p),
            L->tail != L->n ? xfmt("%s+%s", L->n->op_type, L->tail->op_type) : L->n->op_type, is, os, sq,
            layer_why(c, L), L->n->name);
        np[p]++;
    }
    if (c->o->int8 && c->o->fp16) PUT("  %d layers int8, %d fp16, %d float\n", np[P_INT8], np[P_HALF], np[P_FLOAT]);
    else if (c->o->int8) PUT("  %d layers int8, %d float\n", np[P_INT8], np[P_FLOAT]);
    else PUT("  %d layers fp16, %d float\n", np[P_HALF], np[P_FLOAT]);
#undef PUT
    return r;
}

/* ---- the stage -------------------------------------------------------------------------- */

/* The bodies of g's If, Loop and Scan nodes (and theirs) bound as the
 * lowering takes them (captures as views of the node's inputs: the
 * evaluation reads a capture of a graph input through its node), or open
 * again as the passes take them (bind 0). Calibration runs between the
 * passes, where the bodies are open. */
static void bodies_bound(Graph *g, int bind)
{
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        if (!node_has_subgraph(n)) continue;
        if (bind) control_bind_bodies(n);
        for (int a = 0; a < n->nattrs; a++) {
            Graph *b = n->attrs[a].g;
            if (!b) continue;
            for (int k = 0; k < b->nunrolled; k++) bodies_bound(b->unrolled[k], bind);
            if (!b->nunrolled && b->inferred) bodies_bound(b, bind);
        }
        if (!bind) control_open_bodies(n);
    }
}

void calibrate_graph(Graph *g, const Options *o)
{
    for (int i = 0; i < g->nnodes; i++)
        if (pat_is(g->nodes[i], "QuantizeLinear") || pat_is(g->nodes[i], "DequantizeLinear") ||
            pat_is(g->nodes[i], "QLinearConv") || pat_is(g->nodes[i], "QLinearMatMul"))
            fail_plain("--int8: the model is already quantized (node '%s' is a %s); compile it without --int8, its "
                       "QDQ nodes become integer code as they are", g->nodes[i]->name, g->nodes[i]->op_type);
    for (int i = 0; i < g->nnodes; i++)
        if (g->nodes[i]->dyn_size)
            fail_plain("--calibrate: %s '%s' has an output whose size depends on values known only at run time; "
                       "calibration runs the model in the compiler, which needs every size known (compile the "
                       "model without its value-dependent tail, or calibrate without it)",
                       g->nodes[i]->op_type, g->nodes[i]->name);
    Cal c;
    memset(&c, 0, sizeof c);
    c.g = g;
    c.o = o;
    c.qdt = o->act_scheme == ACT_U8 ? DT_UINT8 : DT_INT8;
    c.qmin = c.qdt == DT_UINT8 ? 0 : -128;
    c.qmax = c.qdt == DT_UINT8 ? 255 : 127;
    const uint64_t hash = g->model_hash;
    graph_recount_uses(g);
    find_layers(&c);
    make_sites(&c);
    for (int i = 0; i < c.nlayers; i++) {   /* no int8 scale fits a NaN or an infinite weight */
        Layer *L = &c.layers[i];
        const int64_t n = L->w && L->w->dtype == DT_FLOAT ? tensor_numel(L->w) : 0;
        for (int64_t k = 0; k < n && !L->keep_float; k++)
            if (!isfinite(((const float *)L->w->data)[k])) L->keep_float = KEEP_NOT_FINITE;
    }
    if (o->keep_float) {
        char *list = xstrdup(o->keep_float);
        for (char *save = NULL, *nm = strtok_r(list, ",", &save); nm; nm = strtok_r(NULL, ",", &save)) {
            Layer *L = layer_named(&c, nm);
            if (!L)
                fail_plain(o->int8 ? "--keep-float %s: the model has no node '%s' that int8 would compute (Conv, Gemm, "
                                     "MatMul, Add, Mul, pools, Concat, tables; see --report)"
                                   : "--keep-float %s: the model has no node '%s' that reads constants stored as half "
                                     "(see --report)", o->keep_float, nm);
            L->keep_float = 1;
        }
    }
    tag_nodes(&c);
    double sqnr_all = 0;
    int measured = 0;
    if (o->calibrate) {
        bodies_bound(g, 1);
        list_sets(&c, o->calibrate);
        int nq = 0;
        for (int i = 0; i < c.nsites; i++)
            if (!c.sites[i]->observe) {
                c.sites[i]->h = xalloc(sizeof(Hist));
                hist_init(c.sites[i]->h);
                if (o->calib_method == CALIB_AUTO && c.nsets >= 2) {
                    c.sites[i]->h_half = xalloc(sizeof(Hist));
                    hist_init(c.sites[i]->h_half);
                }
                nq++;
            }
        c.mode = EV_STATS;
        c.held_out = c.nsets / 2;
        if (nq) run_sets(&c, 0, c.nsets, 0);   /* (--fp16 alone: no ranges to find) */
        else for (int k = 0; k < c.nsets; k++) {   /* the sets are checked all the same */
            void *m = pool_mark();
            load_set(&c, k);
            for (int i = 0; i < g->ninputs; i++) g->inputs[i]->data = NULL;
            pool_release_to(m);
        }
        c.acc_sets = c.nsets < ACCURACY_SETS ? c.nsets : ACCURACY_SETS;
        for (int i = 0; i < c.nsites; i++) c.sites[i]->ref = xalloc(sizeof(float) * (size_t)tensor_numel(c.sites[i]->t));
        for (int k = 0; k < g->noutputs && k < 64; k++)
            if (g->outputs[k]->dtype == DT_FLOAT) c.out_ref[k] = xalloc(sizeof(float) * (size_t)tensor_numel(g->outputs[k]));
        choose_ranges(&c, nq);
        note("calibrate: %d layers, %d tensors, %d sets", c.nlayers, c.nsites, c.nsets);
        sqnr_all = fallback(&c);
        measured = 1;
        if (o->calib_cache) write_cache(&c, o->calib_cache, hash);
        bodies_bound(g, 0);
    } else {
        read_cache(&c, o->calib_cache, hash);
    }
    configure(&c);
    apply_params(&c);
    g->calib_report = report_text(&c, sqnr_all, measured);
    remove_off(&c);
    if (o->fp16) keep_fp32_nodes(&c);
}
