/* Unit tests of the pattern-fusion passes: fuse_layernorm, fuse_gelu,
 * fuse_clip, fuse_softmax, fuse_attention (compiler/passes/). Every graph
 * is checked numerically against the unoptimized graph
 * (pt_optimize_checked) and structurally (which ops remain); negative
 * cases check that the pass leaves the graph alone. */
#include "o2c_pass_test.h"

static void scalar(Onnx__ModelProto *m, const char *name, float v)
{
    pb_init_raw(m, name, DT_FLOAT, 0, NULL, &v, sizeof v);
}

/* a float initializer of the given dims, values from a simple formula */
static void weights(Onnx__ModelProto *m, const char *name, int rank, const int64_t *dims, float base)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= dims[d];
    float *v = xalloc(sizeof(float) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) v[i] = base + 0.125f * (float)((i * 7) % 11) - 0.5f;
    pb_init_raw(m, name, DT_FLOAT, rank, dims, v, sizeof(float) * (size_t)n);
}

static void ints(Onnx__ModelProto *m, const char *name, int n, const int64_t *v)
{
    const int64_t d[1] = {n};
    pb_init_raw(m, name, DT_INT64, 1, d, v, sizeof(int64_t) * (size_t)n);
}

static const char *const ONLY_LN[] = {"fuse_layernorm", NULL};
static const char *const ONLY_GELU[] = {"fuse_gelu", NULL};
static const char *const ONLY_CLIP[] = {"fuse_clip", NULL};
static const char *const ONLY_SOFTMAX[] = {"fuse_softmax", NULL};
static const char *const ONLY_ATT[] = {"fuse_attention", NULL};

/* ---- LayerNorm ---------------------------------------------------------- */

enum { LN_POW = 1, LN_MULSQ = 2, LN_RECIP = 4, LN_NOGAMMA = 8, LN_NOBETA = 16, LN_AXES_INPUT = 32,
       LN_TWO_AXES = 64, LN_GAMMA3D = 128, LN_POWSQRT = 256 };

/* x [2,3,8] -> y, the paddle2onnx spelling with variants */
static Onnx__ModelProto *ln_model(int flags, int opset, const int64_t *axes, int naxes)
{
    Onnx__ModelProto *m = pb_model(8, opset);
    pb_input(m, "x", DT_FLOAT, "2x3x8");
    pb_output(m, "y", DT_FLOAT, NULL);
    scalar(m, "two", 2);
    scalar(m, "half", 0.5f);
    scalar(m, "eps", 1e-5f);
    int64_t gd[3] = {1, 1, 8}, g2[2] = {3, 8};
    if (flags & LN_TWO_AXES) {
        weights(m, "gamma", 2, g2, 1);
        weights(m, "beta", 2, g2, 0);
    } else if (flags & LN_GAMMA3D) {
        weights(m, "gamma", 3, gd, 1);
        weights(m, "beta", 1, gd + 2, 0);
    } else {
        weights(m, "gamma", 1, gd + 2, 1);
        weights(m, "beta", 1, gd + 2, 0);
    }
    Onnx__NodeProto *r1, *r2;
    if (flags & LN_AXES_INPUT) {
        ints(m, "axes", naxes, axes);
        r1 = pb_node(m, "ReduceMean", "rm1", "x,axes", "mu");
    } else {
        r1 = pb_node(m, "ReduceMean", "rm1", "x", "mu");
        pb_attr_ints(r1, "axes", naxes, axes);
    }
    pb_node(m, "Sub", "sub", "x,mu", "d");
    if (flags & LN_MULSQ) pb_node(m, "Mul", "sq", "d,d", "d2");
    else pb_node(m, "Pow", "sq", "d,two", "d2");
    if (flags & LN_AXES_INPUT) {
        r2 = pb_node(m, "ReduceMean", "rm2", "d2,axes", "var");
    } else {
        r2 = pb_node(m, "ReduceMean", "rm2", "d2", "var");
        pb_attr_ints(r2, "axes", naxes, axes);
    }
    (void)r2;
    pb_node(m, "Add", "addeps", "eps,var", "ve");
    if (flags & LN_POWSQRT) pb_node(m, "Pow", "sqrt", "ve,half", "sd");
    else pb_node(m, "Sqrt", "sqrt", "ve", "sd");
    const char *nrm = (flags & (LN_NOGAMMA | LN_NOBETA)) == (LN_NOGAMMA | LN_NOBETA) ? "y" : "nrm";
    if (flags & LN_RECIP) {
        pb_node(m, "Reciprocal", "rcp", "sd", "isd");
        pb_node(m, "Mul", "div", "isd,d", nrm);
    } else {
        pb_node(m, "Div", "div", "d,sd", nrm);
    }
    if (!(flags & LN_NOGAMMA)) pb_node(m, "Mul", "mul", "gamma,nrm", flags & LN_NOBETA ? "y" : "sc");
    if (!(flags & LN_NOBETA)) pb_node(m, "Add", "add", flags & LN_NOGAMMA ? "nrm,beta" : "sc,beta", "y");
    return m;
}

static void test_layernorm_basic(void **state)
{
    (void)state;
    const int64_t ax[1] = {-1};
    Graph *g = pt_optimize_checked(ln_model(LN_POW, 13, ax, 1), 0, ONLY_LN);
    assert_int_equal(pt_count(g, NULL), 1);
    Node *n = pt_find(g, "LayerNormalization");
    assert_int_equal(n->nin, 3);
    assert_int_equal(attr_i(n, "axis"), 2);
    assert_true(fabs(attr_f(n, "epsilon") - 1e-5) < 1e-9);
    assert_string_equal(n->out[0]->name, "y");
    assert_int_equal(n->norigins, 9);
    /* the whole optimizer gives the same */
    g = pt_optimize_checked(ln_model(LN_POW, 13, ax, 1), 2, NULL);
    assert_int_equal(pt_count(g, "LayerNormalization"), 1);
    assert_int_equal(pt_count(g, NULL), 1);
}

static void test_layernorm_variants(void **state)
{
    (void)state;
    const int64_t ax[1] = {2}, ax2[2] = {-2, -1};
    static const struct { int flags, opset; } V[] = {
        {LN_MULSQ | LN_RECIP, 13},            /* Mul(d, d), Reciprocal + Mul */
        {LN_AXES_INPUT | LN_POW, 18},         /* axes as an input */
        {LN_NOGAMMA | LN_NOBETA, 13},         /* no affine part: a scale of ones */
        {LN_NOBETA, 13},                      /* gamma only */
        {LN_NOGAMMA, 13},                     /* beta only */
        {LN_GAMMA3D, 13},                     /* gamma [1,1,8]: reshaped */
        {LN_POWSQRT, 9},                      /* Pow(., 0.5) as the square root */
    };
    for (size_t i = 0; i < sizeof V / sizeof V[0]; i++) {
        Graph *g = pt_optimize_checked(ln_model(V[i].flags, V[i].opset, ax, 1), 0, ONLY_LN);
        if (pt_count(g, NULL) != 1) fail_msg("variant %zu: %d nodes left", i, pt_count(g, NULL));
        Node *n = pt_find(g, "LayerNormalization");
        assert_int_equal(n->nin, V[i].flags & LN_NOBETA ? 2 : 3);
        assert_int_equal(n->in[1]->rank, 1);
    }
    /* two normalized axes (a contiguous suffix): axis 1 */
    Graph *g = pt_optimize_checked(ln_model(LN_TWO_AXES, 13, ax2, 2), 0, ONLY_LN);
    assert_int_equal(pt_count(g, NULL), 1);
    assert_int_equal(attr_i(pt_find(g, "LayerNormalization"), "axis"), 1);
}

static void test_layernorm_negative(void **state)
{
    (void)state;
    const int64_t mid[1] = {1}, two[2] = {0, 2};
    /* not a suffix of the axes */
    Graph *g = pt_optimize_checked(ln_model(LN_POW, 13, mid, 1), 0, ONLY_LN);
    assert_int_equal(pt_count(g, "LayerNormalization"), 0);
    g = pt_optimize_checked(ln_model(LN_POW, 13, two, 2), 0, ONLY_LN);
    assert_int_equal(pt_count(g, "LayerNormalization"), 0);
    /* the two means over different axes */
    const int64_t last[1] = {-1};
    Onnx__ModelProto *m = ln_model(LN_POW, 13, last, 1);
    m->graph->node[3]->attribute[0]->ints[0] = 1;
    g = pt_optimize_checked(m, 0, ONLY_LN);
    assert_int_equal(pt_count(g, "LayerNormalization"), 0);
    /* a wrong exponent */
    m = ln_model(LN_POW, 13, last, 1);
    scalar(m, "three", 3);
    m->graph->node[2]->input[1] = S("three");
    g = pt_optimize_checked(m, 0, ONLY_LN);
    assert_int_equal(pt_count(g, "LayerNormalization"), 0);
    /* an intermediate is a graph output: the variance */
    m = ln_model(LN_POW, 13, last, 1);
    pb_output(m, "var", DT_FLOAT, NULL);
    g = pt_optimize_checked(m, 0, ONLY_LN);
    assert_int_equal(pt_count(g, "LayerNormalization"), 0);
    assert_int_equal(pt_count(g, "ReduceMean"), 2);
    /* an extra reader of the centered values */
    m = ln_model(LN_POW, 13, last, 1);
    pb_output(m, "z", DT_FLOAT, NULL);
    pb_node(m, "Relu", "extra", "d", "z");
    g = pt_optimize_checked(m, 0, ONLY_LN);
    assert_int_equal(pt_count(g, "LayerNormalization"), 0);
    /* an extra reader of the normalized values: the affine part is not
     * absorbed, but the normalization is */
    m = ln_model(LN_POW, 13, last, 1);
    pb_output(m, "z", DT_FLOAT, NULL);
    pb_node(m, "Relu", "extra", "nrm", "z");
    g = pt_optimize_checked(m, 0, ONLY_LN);
    assert_int_equal(pt_count(g, "LayerNormalization"), 1);
    assert_int_equal(pt_count(g, "Mul") + pt_count(g, "Add"), 2);
    /* epsilon from a run-time input */
    m = ln_model(LN_POW, 13, last, 1);
    pb_input(m, "eps_in", DT_FLOAT, "");
    m->graph->node[4]->input[0] = S("eps_in");
    g = pt_optimize_checked(m, 0, ONLY_LN);
    assert_int_equal(pt_count(g, "LayerNormalization"), 0);
}

/* ---- GELU --------------------------------------------------------------- */

enum { GE_DIV, GE_MUL, GE_HALF_FIRST, GE_DIV2, GE_TANH_POW, GE_TANH_MUL, GE_TANH_MUL2 };

/* x [2,5] -> y = GELU(x) as exporters write it */
static Onnx__ModelProto *gelu_model(int form, float c)
{
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x5");
    pb_output(m, "y", DT_FLOAT, NULL);
    scalar(m, "one", 1);
    scalar(m, "half", 0.5f);
    scalar(m, "twof", 2);
    scalar(m, "three", 3);
    scalar(m, "c", c);
    scalar(m, "cubic", 0.044715f);
    switch (form) {
    case GE_DIV:          /* PyTorch: x/sqrt2 -> erf -> +1 -> *x -> *0.5 */
        pb_node(m, "Div", "div", "x,c", "a");
        pb_node(m, "Erf", "erf", "a", "e");
        pb_node(m, "Add", "add1", "e,one", "p");
        pb_node(m, "Mul", "mx", "x,p", "xp");
        pb_node(m, "Mul", "mh", "xp,half", "y");
        break;
    case GE_MUL:          /* x*0.7071, 0.5 first: (x*0.5) * (1+erf) */
        pb_node(m, "Mul", "div", "c,x", "a");
        pb_node(m, "Erf", "erf", "a", "e");
        pb_node(m, "Add", "add1", "one,e", "p");
        pb_node(m, "Mul", "xh", "x,half", "h");
        pb_node(m, "Mul", "mx", "h,p", "y");
        break;
    case GE_HALF_FIRST:   /* Sum(1, erf) * 0.5, then * x */
        pb_node(m, "Div", "div", "x,c", "a");
        pb_node(m, "Erf", "erf", "a", "e");
        pb_node(m, "Sum", "add1", "one,e", "p");
        pb_node(m, "Mul", "mh", "half,p", "ph");
        pb_node(m, "Mul", "mx", "ph,x", "y");
        break;
    case GE_DIV2:         /* x / 2 * (1+erf) */
        pb_node(m, "Div", "div", "x,c", "a");
        pb_node(m, "Erf", "erf", "a", "e");
        pb_node(m, "Add", "add1", "e,one", "p");
        pb_node(m, "Div", "xh", "x,twof", "h");
        pb_node(m, "Mul", "mx", "p,h", "y");
        break;
    default:              /* tanh forms, c = sqrt(2/pi) */
        if (form == GE_TANH_POW) {
            pb_node(m, "Pow", "cube", "x,three", "x3");
        } else if (form == GE_TANH_MUL) {
            pb_node(m, "Mul", "sq", "x,x", "x2");
            pb_node(m, "Mul", "cube", "x,x2", "x3");
        } else {
            pb_node(m, "Mul", "sq", "x,x", "x2");
            pb_node(m, "Mul", "cube", "x2,x", "x3");
        }
        pb_node(m, "Mul", "k", "x3,cubic", "kx3");
        pb_node(m, "Add", "inner", "x,kx3", "s");
        pb_node(m, "Mul", "sc", "s,c", "a");
        pb_node(m, "Tanh", "tanh", "a", "e");
        pb_node(m, "Add", "add1", "e,one", "p");
        pb_node(m, "Mul", "xh", "half,x", "h");
        pb_node(m, "Mul", "mx", "h,p", "y");
        break;
    }
    return m;
}

static void test_gelu_erf_forms(void **state)
{
    (void)state;
    static const struct { int form; float c; } F[] = {
        {GE_DIV, 1.4142135f}, {GE_DIV, 1.4142f}, {GE_MUL, 0.70710678f}, {GE_HALF_FIRST, 1.41421356f},
        {GE_DIV2, 1.41421356f},
    };
    for (size_t i = 0; i < sizeof F / sizeof F[0]; i++) {
        Graph *g = pt_optimize_checked(gelu_model(F[i].form, F[i].c), 0, ONLY_GELU);
        if (pt_count(g, NULL) != 1) fail_msg("form %zu: %d nodes left", i, pt_count(g, NULL));
        Node *n = pt_find(g, "Gelu");
        assert_string_equal(attr_s(n, "approximate"), "none");
        assert_string_equal(n->in[0]->name, "x");
        assert_string_equal(n->out[0]->name, "y");
    }
}

static void test_gelu_tanh_forms(void **state)
{
    (void)state;
    for (int form = GE_TANH_POW; form <= GE_TANH_MUL2; form++) {
        Graph *g = pt_optimize_checked(gelu_model(form, 0.7978845608f), 0, ONLY_GELU);
        if (pt_count(g, NULL) != 1) fail_msg("form %d: %d nodes left", form, pt_count(g, NULL));
        assert_string_equal(attr_s(pt_find(g, "Gelu"), "approximate"), "tanh");
    }
    /* the whole optimizer */
    Graph *g = pt_optimize_checked(gelu_model(GE_TANH_POW, 0.7978845608f), 2, NULL);
    assert_int_equal(pt_count(g, "Gelu"), 1);
    assert_int_equal(pt_count(g, NULL), 1);
}

static void test_gelu_negative(void **state)
{
    (void)state;
    /* a wrong constant */
    Graph *g = pt_optimize_checked(gelu_model(GE_DIV, 1.5f), 0, ONLY_GELU);
    assert_int_equal(pt_count(g, "Gelu"), 0);
    g = pt_optimize_checked(gelu_model(GE_TANH_POW, 0.75f), 0, ONLY_GELU);
    assert_int_equal(pt_count(g, "Gelu"), 0);
    /* 0.6 instead of 0.5 */
    Onnx__ModelProto *m = gelu_model(GE_DIV, 1.4142135f);
    scalar(m, "notahalf", 0.6f);
    m->graph->node[4]->input[1] = S("notahalf");
    g = pt_optimize_checked(m, 0, ONLY_GELU);
    assert_int_equal(pt_count(g, "Gelu"), 0);
    /* an extra reader of erf's output */
    m = gelu_model(GE_DIV, 1.4142135f);
    pb_output(m, "z", DT_FLOAT, NULL);
    pb_node(m, "Neg", "extra", "e", "z");
    g = pt_optimize_checked(m, 0, ONLY_GELU);
    assert_int_equal(pt_count(g, "Gelu"), 0);
    /* x * (1+erf) as a graph output in the middle */
    m = gelu_model(GE_DIV, 1.4142135f);
    pb_output(m, "xp", DT_FLOAT, NULL);
    g = pt_optimize_checked(m, 0, ONLY_GELU);
    assert_int_equal(pt_count(g, "Gelu"), 0);
    /* erf of a different tensor than the one multiplied */
    m = gelu_model(GE_DIV, 1.4142135f);
    pb_input(m, "x2", DT_FLOAT, "2x5");
    m->graph->node[3]->input[0] = S("x2");
    g = pt_optimize_checked(m, 0, ONLY_GELU);
    assert_int_equal(pt_count(g, "Gelu"), 0);
}

/* ---- Clip --------------------------------------------------------------- */

static Onnx__ModelProto *clip_model(int opset, const char *first, const char *second, float a, float b)
{
    Onnx__ModelProto *m = pb_model(8, opset);
    pb_input(m, "x", DT_FLOAT, "3x4");
    pb_output(m, "y", DT_FLOAT, NULL);
    scalar(m, "a", a);
    scalar(m, "b", b);
    if (!strcmp(first, "Relu")) pb_node(m, "Relu", "first", "x", "t");
    else pb_node(m, first, "first", "x,a", "t");
    pb_node(m, second, "second", "b,t", "y");
    return m;
}

static void test_clip(void **state)
{
    (void)state;
    /* Min then Max, opset 13: bounds as inputs */
    Graph *g = pt_optimize_checked(clip_model(13, "Min", "Max", 1.5f, -0.5f), 0, ONLY_CLIP);
    assert_int_equal(pt_count(g, NULL), 1);
    Node *n = pt_find(g, "Clip");
    assert_int_equal(n->nin, 3);
    assert_true(((float *)n->in[1]->data)[0] == -0.5f && ((float *)n->in[2]->data)[0] == 1.5f);
    /* Max then Min, opset 9: attributes */
    g = pt_optimize_checked(clip_model(9, "Max", "Min", -1, 1), 0, ONLY_CLIP);
    assert_int_equal(pt_count(g, NULL), 1);
    n = pt_find(g, "Clip");
    assert_int_equal(n->nin, 1);
    assert_true(attr_f(n, "min") == -1 && attr_f(n, "max") == 1);
    /* Relu then Min: ReLU6 */
    g = pt_optimize_checked(clip_model(13, "Relu", "Min", 0, 6), 0, ONLY_CLIP);
    assert_int_equal(pt_count(g, NULL), 1);
    assert_int_equal(pt_count(g, "Clip"), 1);
    g = pt_optimize_checked(clip_model(13, "Min", "Max", 1.5f, -0.5f), 2, NULL);
    assert_int_equal(pt_count(g, NULL), 1);
}

static void test_clip_negative(void **state)
{
    (void)state;
    /* lo > hi */
    Graph *g = pt_optimize_checked(clip_model(13, "Min", "Max", -1, 1), 0, ONLY_CLIP);
    assert_int_equal(pt_count(g, "Clip"), 0);
    /* Min then Min */
    g = pt_optimize_checked(clip_model(13, "Min", "Min", 1, 2), 0, ONLY_CLIP);
    assert_int_equal(pt_count(g, "Clip"), 0);
    /* a bound from a run-time input */
    Onnx__ModelProto *m = clip_model(13, "Min", "Max", 1, 0);
    pb_input(m, "lo", DT_FLOAT, "");
    m->graph->node[1]->input[0] = S("lo");
    g = pt_optimize_checked(m, 0, ONLY_CLIP);
    assert_int_equal(pt_count(g, "Clip"), 0);
    /* a bound of two values (per column) */
    m = clip_model(13, "Min", "Max", 1, 0);
    const int64_t d2[1] = {4};
    weights(m, "b4", 1, d2, 0);
    m->graph->node[1]->input[0] = S("b4");
    g = pt_optimize_checked(m, 0, ONLY_CLIP);
    assert_int_equal(pt_count(g, "Clip"), 0);
    /* the intermediate is also read elsewhere */
    m = clip_model(13, "Min", "Max", 1, 0);
    pb_output(m, "t", DT_FLOAT, NULL);
    g = pt_optimize_checked(m, 0, ONLY_CLIP);
    assert_int_equal(pt_count(g, "Clip"), 0);
    /* Relu then Min with a negative bound */
    g = pt_optimize_checked(clip_model(13, "Relu", "Min", 0, -1), 0, ONLY_CLIP);
    assert_int_equal(pt_count(g, "Clip"), 0);
}

/* ---- Softmax ------------------------------------------------------------ */

enum { SM_STABLE = 1, SM_RECIP = 2, SM_AXES_INPUT = 4 };

/* x [2,3,5] -> y = softmax over `axis` (ReduceMax over max_axis) */
static Onnx__ModelProto *softmax_model(int flags, int opset, int64_t axis, int64_t max_axis)
{
    Onnx__ModelProto *m = pb_model(8, opset);
    pb_input(m, "x", DT_FLOAT, "2x3x5");
    pb_output(m, "y", DT_FLOAT, NULL);
    const char *u = "x";
    if (flags & SM_STABLE) {
        Onnx__NodeProto *mx = pb_node(m, "ReduceMax", "max", "x", "mx");
        pb_attr_ints(mx, "axes", 1, &max_axis);
        pb_node(m, "Sub", "sub", "x,mx", "u");
        u = "u";
    }
    pb_node(m, "Exp", "exp", u, "e");
    if (flags & SM_AXES_INPUT) {
        ints(m, "axes", 1, &axis);
        pb_node(m, "ReduceSum", "sum", "e,axes", "s");
    } else {
        Onnx__NodeProto *rs = pb_node(m, "ReduceSum", "sum", "e", "s");
        pb_attr_ints(rs, "axes", 1, &axis);
    }
    if (flags & SM_RECIP) {
        pb_node(m, "Reciprocal", "rcp", "s", "rs");
        pb_node(m, "Mul", "div", "rs,e", "y");
    } else {
        pb_node(m, "Div", "div", "e,s", "y");
    }
    return m;
}

static void test_softmax(void **state)
{
    (void)state;
    /* plain, last axis, opset 11 (axes attribute) */
    Graph *g = pt_optimize_checked(softmax_model(0, 11, -1, -1), 0, ONLY_SOFTMAX);
    assert_int_equal(pt_count(g, NULL), 1);
    assert_int_equal(attr_i(pt_find(g, "Softmax"), "axis"), 2);
    /* stable form, axis 1, opset 13 (axes input) */
    g = pt_optimize_checked(softmax_model(SM_STABLE | SM_AXES_INPUT, 13, 1, 1), 0, ONLY_SOFTMAX);
    assert_int_equal(pt_count(g, NULL), 1);
    assert_int_equal(attr_i(pt_find(g, "Softmax"), "axis"), 1);
    /* Reciprocal + Mul */
    g = pt_optimize_checked(softmax_model(SM_STABLE | SM_RECIP | SM_AXES_INPUT, 13, 2, -1), 0, ONLY_SOFTMAX);
    assert_int_equal(pt_count(g, NULL), 1);
    g = pt_optimize_checked(softmax_model(SM_STABLE | SM_AXES_INPUT, 13, 2, 2), 2, NULL);
    assert_int_equal(pt_count(g, NULL), 1);
}

static void test_softmax_negative(void **state)
{
    (void)state;
    /* the maximum over another axis: only Exp/ReduceSum/Div are fused
     * (still a softmax of x - max), the ReduceMax and Sub stay */
    Graph *g = pt_optimize_checked(softmax_model(SM_STABLE | SM_AXES_INPUT, 13, 2, 1), 0, ONLY_SOFTMAX);
    assert_int_equal(pt_count(g, "Softmax"), 1);
    assert_int_equal(pt_count(g, "ReduceMax"), 1);
    assert_int_equal(pt_count(g, "Sub"), 1);
    /* a middle axis before opset 13 (Softmax would coerce to 2-D) */
    g = pt_optimize_checked(softmax_model(0, 11, 1, 1), 0, ONLY_SOFTMAX);
    assert_int_equal(pt_count(g, "Softmax"), 0);
    /* the exponentials are also a graph output */
    Onnx__ModelProto *m = softmax_model(0, 11, -1, -1);
    pb_output(m, "e", DT_FLOAT, NULL);
    g = pt_optimize_checked(m, 0, ONLY_SOFTMAX);
    assert_int_equal(pt_count(g, "Softmax"), 0);
    /* the sum read by another node */
    m = softmax_model(0, 11, -1, -1);
    pb_output(m, "z", DT_FLOAT, NULL);
    pb_node(m, "Neg", "extra", "s", "z");
    g = pt_optimize_checked(m, 0, ONLY_SOFTMAX);
    assert_int_equal(pt_count(g, "Softmax"), 0);
    /* two axes */
    m = softmax_model(0, 11, -1, -1);
    int64_t *two = xalloc(2 * sizeof(int64_t));
    two[0] = 1;
    two[1] = 2;
    m->graph->node[1]->attribute[0]->ints = two;
    m->graph->node[1]->attribute[0]->n_ints = 2;
    g = pt_optimize_checked(m, 0, ONLY_SOFTMAX);
    assert_int_equal(pt_count(g, "Softmax"), 0);
}

/* ---- attention ---------------------------------------------------------- */

enum { AT_MASK = 1, AT_KT_INPUT = 2, AT_SCALE_Q = 4, AT_DIV = 8, AT_OUT_T = 16, AT_BCAST_V = 32, AT_DOUBLE = 64 };

/* q [1,2,S,3], k [1,2,S,3] (or k^T [1,2,3,S]), v [1,2,S,5] (or [2,S,5]) */
static Onnx__ModelProto *att_model(int flags, int opset, int seq)
{
    Onnx__ModelProto *m = pb_model(8, opset);
    int dt = flags & AT_DOUBLE ? DT_DOUBLE : DT_FLOAT;
    char sh[64];
    snprintf(sh, sizeof sh, "1x2x%dx3", seq);
    pb_input(m, "q", dt, sh);
    snprintf(sh, sizeof sh, flags & AT_KT_INPUT ? "1x2x3x%d" : "1x2x%dx3", seq);
    pb_input(m, "k", dt, sh);
    snprintf(sh, sizeof sh, flags & AT_BCAST_V ? "2x%dx5" : "1x2x%dx5", seq);
    pb_input(m, "v", dt, sh);
    pb_output(m, "y", dt, NULL);
    if (dt == DT_DOUBLE) {
        double c = 0.5773502691896258;
        pb_init_raw(m, "c", DT_DOUBLE, 0, NULL, &c, sizeof c);
    } else {
        scalar(m, "c", flags & AT_DIV ? 1.7320508f : 0.57735027f);
    }
    const char *q = "q", *kt = "k";
    if (flags & AT_SCALE_Q) {
        pb_node(m, "Mul", "qs", "q,c", "qsc");
        q = "qsc";
    }
    if (!(flags & AT_KT_INPUT)) {
        Onnx__NodeProto *t = pb_node(m, "Transpose", "kt", "k", "kT");
        const int64_t perm[4] = {0, 1, 3, 2};
        pb_attr_ints(t, "perm", 4, perm);
        kt = "kT";
    }
    pb_node(m, "MatMul", "qk", xfmt("%s,%s", q, kt), "sc");
    const char *s = "sc";
    if (!(flags & AT_SCALE_Q)) {
        pb_node(m, flags & AT_DIV ? "Div" : "Mul", "scale", "sc,c", "scs");
        s = "scs";
    }
    if (flags & AT_MASK) {
        /* a causal-style additive mask [1,1,seq,seq]: -30 above the diagonal */
        int64_t md[4] = {1, 1, seq, seq};
        if (dt == DT_DOUBLE) {
            double *mk = xalloc(sizeof(double) * (size_t)(seq * seq));
            for (int i = 0; i < seq; i++)
                for (int j = 0; j < seq; j++) mk[i * seq + j] = j > i ? -30 : 0.01 * j;
            pb_init_raw(m, "mask", DT_DOUBLE, 4, md, mk, sizeof(double) * (size_t)(seq * seq));
        } else {
            float *mk = xalloc(sizeof(float) * (size_t)(seq * seq));
            for (int i = 0; i < seq; i++)
                for (int j = 0; j < seq; j++) mk[i * seq + j] = j > i ? -30.0f : 0.01f * (float)j;
            pb_init_raw(m, "mask", DT_FLOAT, 4, md, mk, sizeof(float) * (size_t)(seq * seq));
        }
        pb_node(m, "Add", "mask_add", xfmt("mask,%s", s), "scm");
        s = "scm";
    }
    Onnx__NodeProto *sm = pb_node(m, "Softmax", "softmax", s, "att");
    pb_attr_i(sm, "axis", opset < 13 ? 3 : -1);
    pb_node(m, "MatMul", "av", "att,v", flags & AT_OUT_T ? "ctx" : "y");
    if (flags & AT_OUT_T) {
        Onnx__NodeProto *t = pb_node(m, "Transpose", "out_t", "ctx", "y");
        const int64_t perm[4] = {0, 2, 1, 3};
        pb_attr_ints(t, "perm", 4, perm);
    }
    return m;
}

static void test_attention(void **state)
{
    (void)state;
    static const struct { int flags, opset, S; } V[] = {
        {AT_MASK | AT_OUT_T, 13, 4},                  /* the usual core, Transposes folded */
        {AT_KT_INPUT | AT_SCALE_Q, 11, 4},            /* K given transposed, scale on Q, Softmax axis 3 */
        {AT_DIV | AT_BCAST_V, 13, 6},                 /* Div by sqrt(d), V broadcast over the batch */
        {AT_MASK, 13, 70},                            /* more keys than a tile: the online rescaling */
        {AT_MASK | AT_DOUBLE | AT_OUT_T, 13, 40},     /* double */
    };
    for (size_t i = 0; i < sizeof V / sizeof V[0]; i++) {
        Graph *g = pt_optimize_checked(att_model(V[i].flags, V[i].opset, V[i].S), 0, ONLY_ATT);
        if (pt_count(g, NULL) != 1) fail_msg("variant %zu: %d nodes left", i, pt_count(g, NULL));
        Node *n = pt_find(g, "FusedAttention");
        assert_string_equal(n->domain, "onnx2c");
        assert_int_equal(n->nin, V[i].flags & AT_MASK ? 4 : 3);
        assert_string_equal(n->in[0]->name, "q");
        assert_string_equal(n->in[1]->name, "k");
        assert_string_equal(n->out[0]->name, "y");
        assert_true(fabs(attr_f(n, "scale") - 0.57735027) < 1e-6);
        const int64_t *p;
        /* K through its Transpose: perm [0,1,2,3] (absent); K^T given: [0,1,3,2] */
        int kl = attr_ints(n, "k_perm", &p);
        if (V[i].flags & AT_KT_INPUT) assert_true(kl == 4 && p[2] == 3 && p[3] == 2);
        else assert_int_equal(kl, 0);
        assert_int_equal(attr_ints(n, "y_perm", &p), V[i].flags & AT_OUT_T ? 4 : 0);
    }
    /* the whole optimizer, and the decomposition for --emit-onnx */
    Graph *g = pt_optimize_checked(att_model(AT_MASK | AT_OUT_T, 13, 4), 2, NULL);
    assert_int_equal(pt_count(g, NULL), 1);
    Decomp d;
    EXPECT_OK(decompose_node(pt_find(g, "FusedAttention"), &d));
    int nmm = 0, nsm = 0, ntr = 0, nadd = 0;
    for (int i = 0; i < d.n; i++) {
        nmm += !strcmp(d.nodes[i].op_type, "MatMul");
        nsm += !strcmp(d.nodes[i].op_type, "Softmax");
        ntr += !strcmp(d.nodes[i].op_type, "Transpose");
        nadd += !strcmp(d.nodes[i].op_type, "Add");
    }
    assert_int_equal(nmm, 2);
    assert_int_equal(nsm, 1);
    assert_int_equal(ntr, 2);      /* K^T and the output */
    assert_int_equal(nadd, 1);
    assert_string_equal(d.nodes[d.n - 1].out[0], "y0");
}

static void test_attention_negative(void **state)
{
    (void)state;
    /* softmax over the other axis */
    Onnx__ModelProto *m = att_model(AT_MASK, 13, 4);
    for (size_t i = 0; i < m->graph->n_node; i++)
        if (!strcmp(m->graph->node[i]->op_type, "Softmax")) m->graph->node[i]->attribute[0]->i = 2;
    Graph *g = pt_optimize_checked(m, 0, ONLY_ATT);
    assert_int_equal(pt_count(g, "FusedAttention"), 0);
    /* the scores are a graph output */
    m = att_model(AT_MASK, 13, 4);
    pb_output(m, "scs", DT_FLOAT, NULL);
    g = pt_optimize_checked(m, 0, ONLY_ATT);
    assert_int_equal(pt_count(g, "FusedAttention"), 0);
    /* the probabilities have another reader */
    m = att_model(0, 13, 4);
    pb_output(m, "z", DT_FLOAT, NULL);
    pb_node(m, "Neg", "extra", "att", "z");
    g = pt_optimize_checked(m, 0, ONLY_ATT);
    assert_int_equal(pt_count(g, "FusedAttention"), 0);
    /* a scale from a run-time input */
    m = att_model(0, 13, 4);
    pb_input(m, "c_in", DT_FLOAT, "");
    for (size_t i = 0; i < m->graph->n_node; i++)
        if (!strcmp(m->graph->node[i]->name, "scale")) m->graph->node[i]->input[1] = S("c_in");
    g = pt_optimize_checked(m, 0, ONLY_ATT);
    assert_int_equal(pt_count(g, "FusedAttention"), 0);
    /* the K Transpose has another reader: the node reads K^T itself */
    m = att_model(0, 13, 4);
    pb_output(m, "kT", DT_FLOAT, NULL);
    g = pt_optimize_checked(m, 0, ONLY_ATT);
    assert_int_equal(pt_count(g, "FusedAttention"), 1);
    assert_int_equal(pt_count(g, "Transpose"), 1);
    assert_string_equal(pt_find(g, "FusedAttention")->in[1]->name, "kT");
}

/* ---- HardSwish, HardSigmoid ---------------------------------------------- */

enum { HS_PADDLE, HS_TIMES_HSIG, HS_MUL_SIXTH, HS_SIGMOID_ONLY, HS_RELU6 };

/* x [2,6] -> y: x * Clip(x + 3, 0, 6) / 6 and friends */
static Onnx__ModelProto *hswish_model(int form, int opset, float three)
{
    Onnx__ModelProto *m = pb_model(8, opset);
    pb_input(m, "x", DT_FLOAT, "2x6");
    pb_output(m, "y", DT_FLOAT, NULL);
    scalar(m, "three", three);
    scalar(m, "zero", 0);
    scalar(m, "six", 6);
    scalar(m, "sixth", 1.0f / 6);
    pb_node(m, "Add", "add3", "three,x", "a");
    if (form == HS_RELU6) {                  /* Relu + Min: fuse_clip first */
        pb_node(m, "Relu", "relu", "a", "r");
        pb_node(m, "Min", "min6", "r,six", "c");
    } else if (opset < 11) {
        Onnx__NodeProto *c = pb_node(m, "Clip", "clip", "a", "c");
        pb_attr_f(c, "min", 0);
        pb_attr_f(c, "max", 6);
    } else {
        pb_node(m, "Clip", "clip", "a,zero,six", "c");
    }
    switch (form) {
    case HS_PADDLE:
    case HS_RELU6:
        pb_node(m, "Mul", "mx", "x,c", "t");
        pb_node(m, "Div", "d6", "t,six", "y");
        break;
    case HS_TIMES_HSIG:
        pb_node(m, "Div", "d6", "c,six", "h");
        pb_node(m, "Mul", "mx", "h,x", "y");
        break;
    case HS_MUL_SIXTH:
        pb_node(m, "Mul", "mx", "c,x", "t");
        pb_node(m, "Mul", "d6", "sixth,t", "y");
        break;
    default:
        pb_node(m, "Div", "d6", "c,six", "y");
        break;
    }
    return m;
}

static void test_hardswish(void **state)
{
    (void)state;
    static const char *const ONLY_HS[] = {"fuse_hardswish", NULL};
    static const struct { int form, opset; const char *op; } F[] = {
        {HS_PADDLE, 9, "HardSwish"}, {HS_PADDLE, 13, "HardSwish"}, {HS_TIMES_HSIG, 13, "HardSwish"},
        {HS_MUL_SIXTH, 11, "HardSwish"}, {HS_SIGMOID_ONLY, 13, "HardSigmoid"},
    };
    for (size_t i = 0; i < sizeof F / sizeof F[0]; i++) {
        Graph *g = pt_optimize_checked(hswish_model(F[i].form, F[i].opset, 3), 0, ONLY_HS);
        if (pt_count(g, NULL) != 1) fail_msg("form %zu: %d nodes left", i, pt_count(g, NULL));
        Node *n = pt_find(g, F[i].op);
        assert_string_equal(n->in[0]->name, "x");
        assert_string_equal(n->out[0]->name, "y");
    }
    /* Relu + Min as the clip: fuse_clip, then fuse_hardswish */
    Graph *g = pt_optimize_checked(hswish_model(HS_RELU6, 13, 3), 2, NULL);
    assert_int_equal(pt_count(g, NULL), 1);
    assert_int_equal(pt_count(g, "HardSwish"), 1);
    /* negative: 2.5 instead of 3; the clipped value read elsewhere; x * c of another x */
    g = pt_optimize_checked(hswish_model(HS_PADDLE, 13, 2.5f), 0, ONLY_HS);
    assert_int_equal(pt_count(g, "HardSwish") + pt_count(g, "HardSigmoid"), 0);
    Onnx__ModelProto *m = hswish_model(HS_PADDLE, 13, 3);
    pb_output(m, "c", DT_FLOAT, NULL);
    g = pt_optimize_checked(m, 0, ONLY_HS);
    assert_int_equal(pt_count(g, "HardSwish") + pt_count(g, "HardSigmoid"), 0);
    m = hswish_model(HS_PADDLE, 13, 3);
    pb_input(m, "x2", DT_FLOAT, "2x6");
    m->graph->node[2]->input[0] = S("x2");
    g = pt_optimize_checked(m, 0, ONLY_HS);
    assert_int_equal(pt_count(g, "HardSwish") + pt_count(g, "HardSigmoid"), 0);
}

/* the passes run only at -O2 */
static void test_levels(void **state)
{
    (void)state;
    const int64_t ax[1] = {-1};
    Graph *g = pt_optimize_checked(ln_model(LN_POW, 13, ax, 1), 1, NULL);
    assert_int_equal(pt_count(g, "LayerNormalization"), 0);
    for (int i = 0; i < pass_count(); i++)
        if (!strncmp(pass_name(i), "fuse_", 5)) assert_int_equal(pass_level(i), 2);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, pt_setup, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_layernorm_basic),   T(test_layernorm_variants), T(test_layernorm_negative),
        T(test_gelu_erf_forms),    T(test_gelu_tanh_forms),    T(test_gelu_negative),
        T(test_clip),              T(test_clip_negative),      T(test_softmax),
        T(test_softmax_negative),  T(test_attention),          T(test_attention_negative),
        T(test_hardswish),         T(test_levels),
    };
    return cmocka_run_group_tests_name("patterns", tests, NULL, NULL);
}
