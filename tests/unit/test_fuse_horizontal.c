/* Unit tests of the fuse_horizontal pass: sibling Conv / Gemm / MatMul on
 * one input become one node whose output the siblings' outputs are views
 * of. Checked numerically against the unoptimized graph and structurally. */
#include "o2c_pass_test.h"

static const char *const FH[] = {"fuse_horizontal", "dce", NULL};

static Onnx__NodeProto *conv(Onnx__ModelProto *m, const char *name, const char *ins, const char *out, int k, int pad)
{
    Onnx__NodeProto *n = pb_node(m, "Conv", name, ins, out);
    pb_attr_ints(n, "kernel_shape", 2, (int64_t[]){k, k});
    pb_attr_ints(n, "pads", 4, (int64_t[]){pad, pad, pad, pad});
    return n;
}

/* two Gemm heads (one transposed weight, alpha and beta) on a batch-1 input */
static void test_two_gemm_heads(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x8");
    pb_output(m, "y1", DT_FLOAT, NULL);
    pb_output(m, "y2", DT_FLOAT, NULL);
    pt_init_pattern(m, "W1", 2, (int64_t[]){4, 8}, 1);
    pt_init_pattern(m, "b1", 1, (int64_t[]){4}, 2);
    pt_init_pattern(m, "W2", 2, (int64_t[]){8, 3}, 3);
    pt_init_pattern(m, "b2", 2, (int64_t[]){1, 3}, 4);
    pb_node(m, "Relu", "relu", "x", "r");
    pb_attr_i(pb_node(m, "Gemm", "head1", "r,W1,b1", "a"), "transB", 1);
    Onnx__NodeProto *h2 = pb_node(m, "Gemm", "head2", "r,W2,b2", "b");
    pb_attr_f(h2, "alpha", 0.5f);
    pb_attr_f(h2, "beta", 2.0f);
    pb_node(m, "Sigmoid", "sig", "a", "y1");
    pb_node(m, "Neg", "neg", "b", "y2");
    Graph *g = pt_optimize_checked(m, 0, FH);
    assert_int_equal(pt_count(g, "Gemm"), 1);
    assert_int_equal(pt_count(g, "SliceView"), 2);
    Node *gm = pt_find(g, "Gemm");
    assert_int_equal(gm->out[0]->dims[1], 7);
    assert_int_equal(gm->norigins, 2);
}

/* Q/K/V projections: MatMul on a [1, 1, D] input, one with a bias Add;
 * the outputs are graph outputs (copied from the views) */
static void test_qkv_matmul(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x1x6");
    pb_output(m, "q", DT_FLOAT, NULL);
    pb_output(m, "k", DT_FLOAT, NULL);
    pb_output(m, "v", DT_FLOAT, NULL);
    pt_init_pattern(m, "Wq", 2, (int64_t[]){6, 4}, 1);
    pt_init_pattern(m, "Wk", 2, (int64_t[]){6, 4}, 2);
    pt_init_pattern(m, "Wv", 2, (int64_t[]){6, 5}, 3);
    pt_init_pattern(m, "bk", 1, (int64_t[]){4}, 4);
    pb_node(m, "MatMul", "mq", "x,Wq", "q");
    pb_node(m, "MatMul", "mk", "x,Wk", "k0");
    pb_node(m, "Add", "ak", "bk,k0", "k");
    pb_node(m, "MatMul", "mv", "x,Wv", "v");
    Graph *g = pt_optimize_checked(m, 0, FH);
    assert_int_equal(pt_count(g, "MatMul"), 1);
    assert_int_equal(pt_count(g, "Add"), 1);           /* the fused bias */
    assert_int_equal(pt_count(g, "SliceView"), 3);
    assert_int_equal(pt_find(g, "MatMul")->out[0]->dims[2], 13);
    /* 2-D input: one Gemm */
    Onnx__ModelProto *m2 = pb_model(8, 13);
    pb_input(m2, "x", DT_FLOAT, "1x6");
    pb_output(m2, "q", DT_FLOAT, NULL);
    pb_output(m2, "k", DT_FLOAT, NULL);
    pt_init_pattern(m2, "Wq", 2, (int64_t[]){6, 4}, 1);
    pt_init_pattern(m2, "Wk", 2, (int64_t[]){6, 4}, 2);
    pb_node(m2, "MatMul", "mq", "x,Wq", "q");
    pb_node(m2, "MatMul", "mk", "x,Wk", "k");
    Graph *g2 = pt_optimize_checked(m2, 0, FH);
    assert_int_equal(pt_count(g2, "Gemm"), 1);
    assert_int_equal(pt_count(g2, "MatMul"), 0);
}

/* a 3x3 and a 1x1 conv whose pads line up, joined by Concat: one Conv writes the Concat's output */
static void test_sibling_convs_concat(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x2x5x5");
    pb_output(m, "y", DT_FLOAT, NULL);
    pt_init_pattern(m, "Wa", 4, (int64_t[]){3, 2, 3, 3}, 1);
    pt_init_pattern(m, "Ba", 1, (int64_t[]){3}, 2);
    pt_init_pattern(m, "Wb", 4, (int64_t[]){2, 2, 1, 1}, 3);
    conv(m, "ca", "x,Wa,Ba", "a", 3, 1);
    conv(m, "cb", "x,Wb", "b", 1, 0);                          /* no bias */
    pb_attr_i(pb_node(m, "Concat", "cat", "b,a", "y"), "axis", 1);   /* b first */
    Graph *g = pt_optimize_checked(m, 0, FH);
    assert_int_equal(pt_count(g, "Conv"), 1);
    assert_int_equal(pt_count(g, "Concat"), 0);
    assert_int_equal(pt_count(g, "SliceView"), 0);           /* nothing else reads a or b */
    assert_string_equal(pt_find(g, "Conv")->out[0]->name, "y");
}

/* each conv followed by the same activation: one activation above the views */
static void test_activation_hoisted(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x2x4x4");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "z", DT_FLOAT, NULL);
    pt_init_pattern(m, "Wa", 4, (int64_t[]){3, 2, 3, 3}, 1);
    pt_init_pattern(m, "Wb", 4, (int64_t[]){2, 2, 3, 3}, 2);
    pt_init_pattern(m, "Wc", 4, (int64_t[]){1, 2, 3, 3}, 3);
    conv(m, "ca", "x,Wa", "a", 3, 1);
    conv(m, "cb", "x,Wb", "b", 3, 1);
    conv(m, "cc", "x,Wc", "c", 3, 1);
    pb_attr_f(pb_node(m, "LeakyRelu", "ra", "a", "ra"), "alpha", 0.1f);
    pb_attr_f(pb_node(m, "LeakyRelu", "rb", "b", "rb"), "alpha", 0.1f);
    pb_attr_f(pb_node(m, "LeakyRelu", "rc", "c", "rc"), "alpha", 0.1f);
    pb_attr_i(pb_node(m, "Concat", "cat", "ra,rb", "y"), "axis", 1);
    pb_node(m, "Neg", "neg", "rc", "z");
    Graph *g = pt_optimize_checked(m, 0, FH);
    assert_int_equal(pt_count(g, "Conv"), 1);
    assert_int_equal(pt_count(g, "LeakyRelu"), 1);
    assert_int_equal(pt_count(g, "Concat"), 0);
    assert_int_equal(pt_count(g, "SliceView"), 2);           /* the Concat's part and rc */
    /* different activations: nothing hoisted, the convs still fuse */
    Onnx__ModelProto *m2 = pb_model(8, 13);
    pb_input(m2, "x", DT_FLOAT, "1x2x4x4");
    pb_output(m2, "y", DT_FLOAT, NULL);
    pb_output(m2, "z", DT_FLOAT, NULL);
    pt_init_pattern(m2, "Wa", 4, (int64_t[]){3, 2, 3, 3}, 1);
    pt_init_pattern(m2, "Wb", 4, (int64_t[]){2, 2, 3, 3}, 2);
    conv(m2, "ca", "x,Wa", "a", 3, 1);
    conv(m2, "cb", "x,Wb", "b", 3, 1);
    pb_node(m2, "Relu", "ra", "a", "y");
    pb_node(m2, "Sigmoid", "rb", "b", "z");
    Graph *g2 = pt_optimize_checked(m2, 0, FH);
    assert_int_equal(pt_count(g2, "Conv"), 1);
    assert_int_equal(pt_count(g2, "Relu") + pt_count(g2, "Sigmoid"), 2);
}

/* two 1x1 sibling convs, each followed by SiLU written out (x * Sigmoid(x));
 * order 1 puts the Sigmoid first in a's Mul; reread: b's Sigmoid is also
 * read by a Neg (then it is no SiLU) */
static Onnx__ModelProto *silu_siblings(int order, int reread)
{
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x2x4x4");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "z", DT_FLOAT, NULL);
    pt_init_pattern(m, "Wa", 4, (int64_t[]){3, 2, 1, 1}, 1);
    pt_init_pattern(m, "Wb", 4, (int64_t[]){2, 2, 1, 1}, 2);
    conv(m, "ca", "x,Wa", "a", 1, 0);
    conv(m, "cb", "x,Wb", "b", 1, 0);
    pb_node(m, "Sigmoid", "sa", "a", "sa");
    pb_node(m, "Sigmoid", "sb", "b", "sb");
    pb_node(m, "Mul", "ma", order ? "sa,a" : "a,sa", "y");
    pb_node(m, "Mul", "mb", "b,sb", "z");
    if (reread) {
        pb_output(m, "s", DT_FLOAT, NULL);
        pb_node(m, "Neg", "neg", "sb", "s");
    }
    return m;
}

/* SiLU after every sibling (the Mul's operands in either order): one
 * Sigmoid and one Mul on the fused output. A Sigmoid output read twice is
 * not SiLU: nothing hoisted. */
static void test_silu_hoisted(void **state)
{
    (void)state;
    for (int order = 0; order < 2; order++) {
        Graph *g = pt_optimize_checked(silu_siblings(order, 0), 0, FH);
        assert_int_equal(pt_count(g, "Conv"), 1);
        assert_int_equal(pt_count(g, "Sigmoid"), 1);
        assert_int_equal(pt_count(g, "Mul"), 1);
        assert_int_equal(pt_count(g, "SliceView"), 2);
    }
    Graph *g = pt_optimize_checked(silu_siblings(0, 1), 0, FH);
    assert_int_equal(pt_count(g, "Conv"), 1);
    assert_int_equal(pt_count(g, "Sigmoid"), 2);
    assert_int_equal(pt_count(g, "Mul"), 2);
}

/* negative cases: different strides, different inputs, batch 2, a pad
 * that does not line up */
static void test_not_fused(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x2x6x6");
    pb_input(m, "x2", DT_FLOAT, "1x2x6x6");
    pb_input(m, "u", DT_FLOAT, "2x8");
    pb_output(m, "a", DT_FLOAT, NULL);
    pb_output(m, "b", DT_FLOAT, NULL);
    pb_output(m, "c", DT_FLOAT, NULL);
    pb_output(m, "d", DT_FLOAT, NULL);
    pb_output(m, "e", DT_FLOAT, NULL);
    pb_output(m, "f", DT_FLOAT, NULL);
    pb_output(m, "p", DT_FLOAT, NULL);
    pb_output(m, "q", DT_FLOAT, NULL);
    pt_init_pattern(m, "W", 4, (int64_t[]){2, 2, 3, 3}, 1);
    pt_init_pattern(m, "W1", 4, (int64_t[]){2, 2, 1, 1}, 2);
    pt_init_pattern(m, "G", 2, (int64_t[]){8, 3}, 3);
    conv(m, "s1", "x,W", "a", 3, 1);
    pb_attr_ints(conv(m, "s2", "x,W", "b", 3, 1), "strides", 2, (int64_t[]){2, 2});
    conv(m, "o1", "x2,W", "c", 3, 0);                      /* 4x4 out */
    conv(m, "o2", "x2,W1", "d", 1, 0);                     /* 6x6 out: not the same size */
    pb_node(m, "Gemm", "g1", "u,G", "e");                  /* batch 2: slices would not be views */
    pb_node(m, "Gemm", "g2", "u,G", "f");
    pb_node(m, "Relu", "r1", "x", "p");                    /* not a layer */
    pb_node(m, "Relu", "r2", "x2", "q");
    Graph *g = pt_optimize_checked(m, 0, FH);
    assert_int_equal(pt_count(g, "Conv"), 4);
    assert_int_equal(pt_count(g, "Gemm"), 2);
    assert_int_equal(pt_count(g, "SliceView"), 0);
    /* different inputs */
    Onnx__ModelProto *m2 = pb_model(8, 13);
    pb_input(m2, "x", DT_FLOAT, "1x2x6x6");
    pb_input(m2, "x2", DT_FLOAT, "1x2x6x6");
    pb_output(m2, "a", DT_FLOAT, NULL);
    pb_output(m2, "b", DT_FLOAT, NULL);
    pt_init_pattern(m2, "W", 4, (int64_t[]){2, 2, 3, 3}, 1);
    conv(m2, "c1", "x,W", "a", 3, 1);
    conv(m2, "c2", "x2,W", "b", 3, 1);
    Graph *g2 = pt_optimize_checked(m2, 0, FH);
    assert_int_equal(pt_count(g2, "Conv"), 2);
}

/* a 7x7 conv beside two 1x1 convs: padding the 1x1 kernels to 7x7 costs
 * too much, so only the two 1x1 convs fuse */
static void test_growth_limit(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x2x8x8");
    pb_output(m, "a", DT_FLOAT, NULL);
    pb_output(m, "b", DT_FLOAT, NULL);
    pb_output(m, "c", DT_FLOAT, NULL);
    pt_init_pattern(m, "W7", 4, (int64_t[]){2, 2, 7, 7}, 1);
    pt_init_pattern(m, "Wa", 4, (int64_t[]){3, 2, 1, 1}, 2);
    pt_init_pattern(m, "Wb", 4, (int64_t[]){4, 2, 1, 1}, 3);
    conv(m, "c7", "x,W7", "c", 7, 3);
    conv(m, "ca", "x,Wa", "a", 1, 0);
    conv(m, "cb", "x,Wb", "b", 1, 0);
    Graph *g = pt_optimize_checked(m, 0, FH);
    assert_int_equal(pt_count(g, "Conv"), 2);
    assert_int_equal(pt_count(g, "SliceView"), 2);
}

/* the full -O2 pipeline: fused, outputs right, the views planned */
static void test_o2(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x3x4x4");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "b", DT_FLOAT, NULL);
    pt_init_pattern(m, "Wa", 4, (int64_t[]){2, 3, 3, 3}, 1);
    pt_init_pattern(m, "Wb", 4, (int64_t[]){3, 3, 1, 1}, 2);
    pt_init_pattern(m, "Bb", 1, (int64_t[]){3}, 3);
    conv(m, "ca", "x,Wa", "a", 3, 1);
    conv(m, "cb", "x,Wb,Bb", "b", 1, 0);
    pb_attr_i(pb_node(m, "Concat", "cat", "a,b", "y"), "axis", 1);
    Graph *g = pt_optimize_checked(m, 2, NULL);
    assert_int_equal(pt_count(g, "Conv"), 1);
    assert_int_equal(pt_count(g, "Concat"), 0);
    assert_int_equal(pt_count(g, "SliceView"), 1);     /* b, a graph output */
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, pt_setup, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_two_gemm_heads),
        T(test_qkv_matmul),
        T(test_sibling_convs_concat),
        T(test_activation_hoisted),
        T(test_silu_hoisted),
        T(test_not_fused),
        T(test_growth_limit),
        T(test_o2),
    };
    return cmocka_run_group_tests_name("fuse_horizontal", tests, NULL, NULL);
}
