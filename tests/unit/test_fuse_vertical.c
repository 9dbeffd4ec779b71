/* Unit tests of vertical fusion: passes fuse_affine (BatchNormalization and
 * constant Mul/Add/Sub/Div folded into Conv/ConvTranspose/Gemm/MatMul) and
 * fuse_epilogue (activations and residual Add as the epilogue of the Fused*
 * ops of ops/fused_linear.c). Every case is checked numerically against the
 * unoptimized graph (pt_optimize_checked) and structurally. */
#include "o2c_pass_test.h"

static const char *const AFFINE[] = {"fuse_affine", NULL};
static const char *const BOTH[] = {"fuse_affine", "fuse_epilogue", NULL};
/* the passes of this file alone (the negative cases: other fusions would change the counts) */
static const char *const MINE[] = {"fuse_affine", "fuse_epilogue", "fuse_pool_gemm", NULL};

/* A float initializer with values in [lo, hi) from a fixed sequence. */
static void init_f(Onnx__ModelProto *m, const char *name, int rank, const int64_t *dims, unsigned seed, double lo,
                   double hi)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    float *v = xalloc(sizeof(float) * (size_t)(n + 1));
    uint32_t s = seed * 2246822519u + 7u;
    for (int64_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        v[i] = (float)(lo + (hi - lo) * ((double)(s >> 8) / (double)(1u << 24)));
    }
    pb_init_raw(m, name, DT_FLOAT, rank, dims, v, sizeof(float) * (size_t)n);
}

/* x (1x3x6x6) -> Conv(W 4x3x3x3, B 4, pads 1) -> y; the caller adds the rest
 * and writes the graph output "out". */
static Onnx__ModelProto *conv_model(int opset)
{
    static const int64_t DW[] = {4, 3, 3, 3}, DB[] = {4};
    Onnx__ModelProto *m = pb_model(8, opset);
    pb_input(m, "x", DT_FLOAT, "1x3x6x6");
    pb_output(m, "out", DT_FLOAT, NULL);
    init_f(m, "W", 4, DW, 1, -1, 1);
    init_f(m, "B", 1, DB, 2, -1, 1);
    Onnx__NodeProto *c = pb_node(m, "Conv", "conv", "x,W,B", "y");
    pb_attr_ints(c, "pads", 4, (const int64_t[]){1, 1, 1, 1});
    return m;
}

static void bn_params(Onnx__ModelProto *m, int64_t C)
{
    const int64_t D[] = {C};
    init_f(m, "bn_s", 1, D, 11, 0.5, 1.5);
    init_f(m, "bn_b", 1, D, 12, -1, 1);
    init_f(m, "bn_m", 1, D, 13, -0.5, 0.5);
    init_f(m, "bn_v", 1, D, 14, 0.5, 1.5);
}

static void test_bn_into_conv(void **state)
{
    (void)state;
    Onnx__ModelProto *m = conv_model(13);
    bn_params(m, 4);
    pb_node(m, "BatchNormalization", "bn", "y,bn_s,bn_b,bn_m,bn_v", "z");
    pb_node(m, "Relu", "relu", "z", "out");
    Graph *g = pt_optimize_checked(m, 2, AFFINE);
    assert_int_equal(pt_count(g, "BatchNormalization"), 0);
    assert_int_equal(pt_count(g, "Conv"), 1);              /* still a standard Conv */
    assert_string_equal(pt_find(g, "Conv")->fused, "Conv+BatchNormalization");
    g = pt_optimize_checked(m, 2, NULL);
    assert_int_equal(g->nnodes, 1);
    Node *f = pt_find(g, "FusedConv");
    assert_string_equal(attr_s(f, "activation"), "Relu");
    assert_int_equal(f->norigins, 3);
}

static void test_bn_into_conv_transpose_grouped(void **state)
{
    (void)state;
    static const int64_t DW[] = {4, 3, 3, 3};
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x4x4x4");
    pb_output(m, "out", DT_FLOAT, NULL);
    init_f(m, "W", 4, DW, 3, -1, 1);                        /* group 2: 6 output channels */
    Onnx__NodeProto *c = pb_node(m, "ConvTranspose", "convt", "x,W", "y");
    pb_attr_i(c, "group", 2);
    pb_attr_ints(c, "strides", 2, (const int64_t[]){2, 2});
    bn_params(m, 6);
    pb_node(m, "BatchNormalization", "bn", "y,bn_s,bn_b,bn_m,bn_v", "out");
    Graph *g = pt_optimize_checked(m, 2, AFFINE);
    assert_int_equal(g->nnodes, 1);
    assert_non_null(in_t(pt_find(g, "ConvTranspose"), 2));   /* gained a bias */
}

static void test_bn_into_gemm_and_full_c(void **state)
{
    (void)state;
    static const int64_t DB[] = {4, 5}, DC[] = {3, 4};
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "a", DT_FLOAT, "3x5");
    pb_output(m, "out", DT_FLOAT, NULL);
    init_f(m, "Wg", 2, DB, 4, -1, 1);
    init_f(m, "Cg", 2, DC, 5, -1, 1);
    Onnx__NodeProto *n = pb_node(m, "Gemm", "gemm", "a,Wg,Cg", "y");
    pb_attr_i(n, "transB", 1);
    pb_attr_f(n, "alpha", 0.5f);
    pb_attr_f(n, "beta", 2.0f);
    bn_params(m, 4);
    pb_node(m, "BatchNormalization", "bn", "y,bn_s,bn_b,bn_m,bn_v", "z");
    pb_node(m, "Sigmoid", "sig", "z", "out");
    Graph *g = pt_optimize_checked(m, 2, AFFINE);
    assert_int_equal(pt_count(g, "Gemm"), 1);
    assert_int_equal(pt_count(g, "BatchNormalization"), 0);
    g = pt_optimize_checked(m, 2, BOTH);
    assert_int_equal(g->nnodes, 1);
    assert_string_equal(attr_s(pt_find(g, "FusedGemm"), "activation"), "Sigmoid");
}

/* Mul by per-channel constant, Add scalar, Sub per-channel, Div: all into the Conv. */
static void test_const_mul_add_sub_div(void **state)
{
    (void)state;
    static const int64_t D411[] = {4, 1, 1}, D1411[] = {1, 4, 1, 1}, D1[] = {1};
    Onnx__ModelProto *m = conv_model(13);
    init_f(m, "k", 3, D411, 21, 0.5, 2);
    init_f(m, "a", 1, D1, 22, -1, 1);
    init_f(m, "b", 4, D1411, 23, -1, 1);
    init_f(m, "d", 1, D1, 24, 1, 2);
    pb_node(m, "Mul", "mul", "k,y", "y1");                    /* constant first */
    pb_node(m, "Add", "add", "y1,a", "y2");
    pb_node(m, "Sub", "sub", "y2,b", "y3");
    pb_node(m, "Div", "div", "y3,d", "out");
    Graph *g = pt_optimize_checked(m, 2, AFFINE);
    assert_int_equal(g->nnodes, 1);
    assert_int_equal(pt_find(g, "Conv")->norigins, 5);
}

/* 2-D MatMul + bias Add -> Gemm; N-D MatMul: scale folded, bias into FusedMatMul. */
static void test_matmul_bias(void **state)
{
    (void)state;
    static const int64_t DW[] = {5, 4}, DB[] = {4}, DK[] = {1, 4};
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "a", DT_FLOAT, "3x5");
    pb_output(m, "out", DT_FLOAT, NULL);
    init_f(m, "Wm", 2, DW, 6, -1, 1);
    init_f(m, "bias", 1, DB, 7, -1, 1);
    pb_node(m, "MatMul", "mm", "a,Wm", "y");
    pb_node(m, "Add", "add", "bias,y", "out");
    Graph *g = pt_optimize_checked(m, 2, AFFINE);
    assert_int_equal(g->nnodes, 1);
    assert_int_equal(pt_count(g, "Gemm"), 1);

    m = pb_model(8, 13);
    pb_input(m, "a", DT_FLOAT, "2x3x5");
    pb_output(m, "out", DT_FLOAT, NULL);
    init_f(m, "Wm", 2, DW, 6, -1, 1);
    init_f(m, "bias", 1, DB, 7, -1, 1);
    init_f(m, "k", 2, DK, 8, 0.5, 2);
    pb_node(m, "MatMul", "mm", "a,Wm", "y");
    pb_node(m, "Mul", "mul", "y,k", "y1");
    pb_node(m, "Add", "add", "y1,bias", "y2");
    pb_node(m, "Tanh", "tanh", "y2", "out");
    g = pt_optimize_checked(m, 2, AFFINE);
    assert_int_equal(pt_count(g, "Mul"), 0);                 /* the scale went into W */
    assert_int_equal(pt_count(g, "Add"), 1);                 /* N-D: no Gemm */
    g = pt_optimize_checked(m, 2, BOTH);
    assert_int_equal(g->nnodes, 1);
    Node *f = pt_find(g, "FusedMatMul");
    assert_non_null(in_t(f, 2));
    assert_string_equal(attr_s(f, "activation"), "Tanh");
}

/* Every activation after a Conv (and a Gemm): one fused node, same values. */
static void test_every_activation(void **state)
{
    (void)state;
    static const char *const ACTS[] = {"Relu", "Clip", "LeakyRelu", "PRelu", "PReluScalar", "Sigmoid", "Tanh",
                                       "HardSigmoid", "HardSwish", "SiLU", "Gelu", "GeluTanh", "Mish", NULL};
    static const char *const WANT[] = {"Relu", "Clip", "LeakyRelu", "PRelu", "PRelu", "Sigmoid", "Tanh",
                                       "HardSigmoid", "HardSwish", "SiLU", "GeluErf", "GeluTanh", "Mish"};
    for (int a = 0; ACTS[a]; a++) {
        for (int gemm = 0; gemm < 2; gemm++) {
            const char *act = ACTS[a];
            Onnx__ModelProto *m;
            if (gemm) {
                static const int64_t DW[] = {5, 4}, DB[] = {4};
                m = pb_model(8, 20);
                pb_input(m, "a", DT_FLOAT, "3x5");
                pb_output(m, "out", DT_FLOAT, NULL);
                init_f(m, "W", 2, DW, 31, -1, 1);
                init_f(m, "B", 1, DB, 32, -1, 1);
                pb_node(m, "Gemm", "gemm", "a,W,B", "y");
            } else {
                m = conv_model(20);
            }
            Onnx__NodeProto *n;
            if (!strcmp(act, "Clip")) {
                static const int64_t D0[] = {0};
                pb_init_raw(m, "lo", DT_FLOAT, 0, D0, (float[]){-0.5f}, 4);
                pb_init_raw(m, "hi", DT_FLOAT, 0, D0, (float[]){1.5f}, 4);
                pb_node(m, "Clip", "act", "y,lo,hi", "out");
            } else if (!strcmp(act, "LeakyRelu")) {
                n = pb_node(m, "LeakyRelu", "act", "y", "out");
                pb_attr_f(n, "alpha", 0.2f);
            } else if (!strcmp(act, "PRelu")) {
                static const int64_t DS[] = {4, 1, 1}, DG[] = {4};
                init_f(m, "slope", gemm ? 1 : 3, gemm ? DG : DS, 33, -0.5, 0.5);
                pb_node(m, "PRelu", "act", "y,slope", "out");
            } else if (!strcmp(act, "PReluScalar")) {
                static const int64_t D1[] = {1};
                init_f(m, "slope", 1, D1, 34, 0.1, 0.3);
                pb_node(m, "PRelu", "act", "y,slope", "out");
            } else if (!strcmp(act, "HardSigmoid")) {
                n = pb_node(m, "HardSigmoid", "act", "y", "out");
                pb_attr_f(n, "alpha", 0.3f);
                pb_attr_f(n, "beta", 0.4f);
            } else if (!strcmp(act, "SiLU")) {
                pb_node(m, "Sigmoid", "sig", "y", "s");
                pb_node(m, "Mul", "act", "s,y", "out");
            } else if (!strcmp(act, "Gelu")) {
                pb_node(m, "Gelu", "act", "y", "out");
            } else if (!strcmp(act, "GeluTanh")) {
                n = pb_node(m, "Gelu", "act", "y", "out");
                pb_attr_s(n, "approximate", "tanh");
            } else {
                pb_node(m, act, "act", "y", "out");
            }
            Graph *g = pt_optimize_checked(m, 2, NULL);
            if (g->nnodes != 1) fail_msg("%s after %s: %d nodes", act, gemm ? "Gemm" : "Conv", g->nnodes);
            Node *f = pt_find(g, gemm ? "FusedGemm" : "FusedConv");
            assert_string_equal(attr_s(f, "activation"), WANT[a]);
            assert_string_equal(attr_s(f, "residual"), "none");
        }
    }
}

static void test_residual_before_and_after(void **state)
{
    (void)state;
    for (int after = 0; after < 2; after++) {
        Onnx__ModelProto *m = conv_model(13);
        pb_input(m, "r", DT_FLOAT, "1x4x6x6");
        if (after) {
            pb_node(m, "Relu", "relu", "y", "z");
            pb_node(m, "Add", "add", "r,z", "out");
        } else {
            pb_node(m, "Add", "add", "y,r", "z");
            pb_node(m, "Relu", "relu", "z", "out");
        }
        Graph *g = pt_optimize_checked(m, 2, NULL);
        assert_int_equal(g->nnodes, 1);
        Node *f = pt_find(g, "FusedConv");
        assert_string_equal(attr_s(f, "residual"), after ? "after" : "before");
        assert_string_equal(attr_s(f, "activation"), "Relu");
        assert_ptr_equal(f->in[3], graph_find(g, "r"));
        assert_string_equal(f->fused, after ? "Conv+Relu+Add" : "Conv+Add+Relu");
    }
}

/* The longest chain: N-D MatMul, bias Add, x * Sigmoid(x), residual Add. */
static void test_longest_chain(void **state)
{
    (void)state;
    static const int64_t DW[] = {5, 4}, DB[] = {4};
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "a", DT_FLOAT, "2x3x5");
    pb_input(m, "r", DT_FLOAT, "2x3x4");
    pb_output(m, "out", DT_FLOAT, NULL);
    init_f(m, "Wm", 2, DW, 71, -1, 1);
    init_f(m, "bias", 1, DB, 72, -1, 1);
    pb_node(m, "MatMul", "mm", "a,Wm", "y");
    pb_node(m, "Add", "add", "y,bias", "y1");
    pb_node(m, "Sigmoid", "sig", "y1", "s");
    pb_node(m, "Mul", "mul", "y1,s", "y2");
    pb_node(m, "Add", "res", "r,y2", "out");
    Graph *g = pt_optimize_checked(m, 2, NULL);
    assert_int_equal(g->nnodes, 1);
    Node *f = pt_find(g, "FusedMatMul");
    assert_string_equal(attr_s(f, "activation"), "SiLU");
    assert_string_equal(attr_s(f, "residual"), "after");
    assert_int_equal(f->norigins, 5);
}

/* Multi-reader intermediate, non-constant BN params, a Mul along the wrong
 * axis, a Mul by a non-constant, shared weights: left alone. */
static void test_negative_cases(void **state)
{
    (void)state;
    /* y read by BN and by a second output */
    Onnx__ModelProto *m = conv_model(13);
    bn_params(m, 4);
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "BatchNormalization", "bn", "y,bn_s,bn_b,bn_m,bn_v", "z");
    pb_node(m, "Relu", "relu", "z", "out");
    Graph *g = pt_optimize_checked(m, 2, MINE);
    assert_int_equal(pt_count(g, "Conv"), 1);
    assert_int_equal(pt_count(g, "BatchNormalization"), 1);

    /* y read by two nodes */
    m = conv_model(13);
    pb_node(m, "Relu", "relu", "y", "z");
    pb_node(m, "Sigmoid", "sig", "y", "s");
    pb_node(m, "Add", "add", "z,s", "out");
    g = pt_optimize_checked(m, 2, MINE);
    assert_int_equal(pt_count(g, "Conv"), 1);
    assert_int_equal(pt_count(g, "Relu"), 1);

    /* BN scale is a graph input */
    m = conv_model(13);
    bn_params(m, 4);
    pb_input(m, "sc", DT_FLOAT, "4");
    pb_node(m, "BatchNormalization", "bn", "y,sc,bn_b,bn_m,bn_v", "out");
    g = pt_optimize_checked(m, 2, MINE);
    assert_int_equal(pt_count(g, "BatchNormalization"), 1);
    assert_int_equal(pt_count(g, "Conv"), 1);

    /* Mul by a constant along W (not per channel), and by a non-constant */
    static const int64_t D6[] = {6};
    m = conv_model(13);
    init_f(m, "k", 1, D6, 41, 0.5, 2);
    pb_input(m, "q", DT_FLOAT, "4x1x1");
    pb_node(m, "Mul", "mul", "y,k", "y1");
    pb_node(m, "Mul", "mul2", "y1,q", "out");
    g = pt_optimize_checked(m, 2, MINE);
    assert_int_equal(pt_count(g, "Mul"), 2);
    assert_int_equal(pt_count(g, "Conv"), 1);

    /* W shared by two Convs: its scale would duplicate W */
    static const int64_t D411[] = {4, 1, 1};
    m = conv_model(13);
    init_f(m, "k", 3, D411, 42, 0.5, 2);
    pb_output(m, "out2", DT_FLOAT, NULL);
    pb_node(m, "Mul", "mul", "y,k", "out");
    Onnx__NodeProto *c2 = pb_node(m, "Conv", "conv2", "x,W", "out2");
    pb_attr_ints(c2, "pads", 4, (const int64_t[]){1, 1, 1, 1});
    g = pt_optimize_checked(m, 2, AFFINE);
    assert_int_equal(pt_count(g, "Mul"), 1);

    /* MatMul by a 1-D B (output M, no columns) + bias: left alone */
    static const int64_t D5[] = {5}, D3[] = {3};
    m = pb_model(8, 13);
    pb_input(m, "a", DT_FLOAT, "3x5");
    init_f(m, "v", 1, D5, 43, -1, 1);
    init_f(m, "bias", 1, D3, 44, -1, 1);
    pb_output(m, "out", DT_FLOAT, NULL);
    pb_node(m, "MatMul", "mv", "a,v", "y");
    pb_node(m, "Add", "add", "y,bias", "out");
    g = pt_optimize_checked(m, 2, MINE);
    assert_int_equal(pt_count(g, "MatMul"), 1);
    assert_int_equal(pt_count(g, "Add"), 1);

    /* Clip without a max, and a residual of another shape: no fusion */
    static const int64_t D0[] = {0};
    m = conv_model(13);
    pb_init_raw(m, "lo", DT_FLOAT, 0, D0, (float[]){0.0f}, 4);
    pb_input(m, "r", DT_FLOAT, "1x1x6x6");
    pb_node(m, "Clip", "clip", "y,lo", "z");
    pb_node(m, "Add", "add", "z,r", "out");
    g = pt_optimize_checked(m, 2, MINE);
    assert_int_equal(pt_count(g, "Clip"), 1);
    assert_int_equal(pt_count(g, "Add"), 1);
    assert_int_equal(pt_count(g, "Conv"), 1);
}

/* Global average pool -> views -> Gemm / 1x1 Conv: one GlobalPoolGemm
 * (variant 3: an AveragePool with pads is no global average: left alone). */
static void pool_gemm_case(int variant)
{
    static const int64_t DW[] = {5, 6}, DB[] = {5}, DC[] = {5, 6, 1, 1};
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x6x3x4");
    pb_output(m, "out", DT_FLOAT, NULL);
    init_f(m, "B", 1, DB, 62, -1, 1);
    if (variant == 0) {                       /* GAP -> Flatten -> Gemm(transB) -> Relu */
        init_f(m, "W", 2, DW, 61, -1, 1);
        pb_node(m, "GlobalAveragePool", "gap", "x", "p");
        pb_node(m, "Flatten", "flat", "p", "f");
        Onnx__NodeProto *n = pb_node(m, "Gemm", "gemm", "f,W,B", "y");
        pb_attr_i(n, "transB", 1);
        pb_attr_f(n, "alpha", 0.5f);
        pb_node(m, "Relu", "relu", "y", "out");
    } else if (variant == 1) {                /* GAP -> 1x1 Conv */
        init_f(m, "W", 4, DC, 63, -1, 1);
        pb_node(m, "GlobalAveragePool", "gap", "x", "p");
        pb_node(m, "Conv", "conv", "p,W,B", "out");
    } else if (variant == 4) {                /* GAP -> Flatten -> MatMul -> Softmax */
        static const int64_t DW2[] = {6, 5};
        init_f(m, "W", 2, DW2, 66, -1, 1);
        pb_node(m, "GlobalAveragePool", "gap", "x", "p");
        pb_node(m, "Flatten", "flat", "p", "f");
        pb_node(m, "MatMul", "mm", "f,W", "y");
        pb_node(m, "Softmax", "sm", "y", "out");
    } else {                                  /* whole-window AveragePool -> Transpose -> Reshape -> Gemm */
        static const int64_t DW2[] = {6, 5}, DS[] = {2};
        init_f(m, "W", 2, DW2, 64, -1, 1);
        pb_init_raw(m, "shape", DT_INT64, 1, DS, (int64_t[]){2, 6}, 16);
        Onnx__NodeProto *n = pb_node(m, "AveragePool", "pool", "x", "p");
        pb_attr_ints(n, "kernel_shape", 2, (const int64_t[]){3, 4});
        if (variant == 3) {
            pb_attr_ints(n, "pads", 4, (const int64_t[]){1, 0, 1, 0});
            pb_attr_ints(n, "strides", 2, (const int64_t[]){3, 1});
        }
        n = pb_node(m, "Transpose", "tr", "p", "t");
        pb_attr_ints(n, "perm", 4, (const int64_t[]){0, 2, 3, 1});
        pb_node(m, "Reshape", "rs", "t,shape", "f");
        pb_node(m, "Gemm", "gemm", "f,W,B", "out");
    }
    Graph *g = pt_optimize_checked(m, 2, NULL);
    if (variant == 3) {
        assert_int_equal(pt_count(g, "GlobalPoolGemm"), 0);
        assert_int_equal(pt_count(g, "AveragePool"), 1);
        return;
    }
    if (variant == 4) {
        assert_int_equal(g->nnodes, 2);
        assert_int_equal(pt_count(g, "GlobalPoolGemm"), 1);
        return;
    }
    if (g->nnodes != 1) fail_msg("variant %d: %d nodes", variant, g->nnodes);
    Node *f = pt_find(g, "GlobalPoolGemm");
    assert_string_equal(attr_s(f, "activation"), variant == 0 ? "Relu" : "none");
    assert_int_equal(f->out[0]->rank, variant == 1 ? 4 : 2);
}

static void test_pool_gemm(void **state)
{
    (void)state;
    for (int variant = 0; variant < 5; variant++) pool_gemm_case(variant);
    /* N = 2 and a Transpose that swaps N and C: not a view, left alone */
    static const int64_t DW2[] = {2, 5}, DS[] = {2};
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x6x3x4");
    pb_output(m, "out", DT_FLOAT, NULL);
    init_f(m, "W", 2, DW2, 65, -1, 1);
    pb_init_raw(m, "shape", DT_INT64, 1, DS, (int64_t[]){6, 2}, 16);
    pb_node(m, "GlobalAveragePool", "gap", "x", "p");
    Onnx__NodeProto *n = pb_node(m, "Transpose", "tr", "p", "t");
    pb_attr_ints(n, "perm", 4, (const int64_t[]){1, 0, 2, 3});
    pb_node(m, "Reshape", "rs", "t,shape", "f");
    pb_node(m, "Gemm", "gemm", "f,W", "out");
    Graph *g = pt_optimize_checked(m, 2, NULL);
    assert_int_equal(pt_count(g, "GlobalPoolGemm"), 0);
    assert_int_equal(pt_count(g, "GlobalAveragePool"), 1);
}

/* A fused op states itself in standard ops (--emit-onnx). */
static void test_decomposition(void **state)
{
    (void)state;
    static const int64_t DS[] = {4, 1, 1};
    Onnx__ModelProto *m = conv_model(13);
    init_f(m, "slope", 3, DS, 51, -0.5, 0.5);
    pb_input(m, "r", DT_FLOAT, "1x4x6x6");
    pb_node(m, "Add", "add", "y,r", "z");
    pb_node(m, "PRelu", "act", "z,slope", "out");
    Graph *g = pt_optimize_checked(m, 2, NULL);
    Node *f = pt_find(g, "FusedConv");
    Decomp d;
    EXPECT_OK(decompose_node(f, &d));
    assert_true(d.n >= 3);
    assert_string_equal(d.nodes[0].op_type, "Conv");
    assert_string_equal(d.nodes[1].op_type, "Add");
    assert_string_equal(d.nodes[d.n - 1].op_type, "PRelu");
    assert_string_equal(d.nodes[d.n - 1].out[0], "y0");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, pt_setup, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_bn_into_conv),
        T(test_bn_into_conv_transpose_grouped),
        T(test_bn_into_gemm_and_full_c),
        T(test_const_mul_add_sub_div),
        T(test_matmul_bias),
        T(test_every_activation),
        T(test_residual_before_and_after),
        T(test_longest_chain),
        T(test_negative_cases),
        T(test_pool_gemm),
        T(test_decomposition),
    };
    return cmocka_run_group_tests_name("fuse_vertical", tests, NULL, NULL);
}
