/* Unit tests of the quantize pass (compiler/passes/quantize.c): a QDQ
 * Conv group becomes one FusedQLinearConv with its activation as the
 * output clamp, SiLU (x * sigmoid(x)) one 256-entry table, parameters no
 * integer kernel takes leave the group alone, and a float MatMul of
 * dequantized constant weights (+ bias) becomes FusedWQMatMul with the
 * weights 8-bit. The integer graph is
 * checked against the QDQ graph's float evaluation (the runtime kernels):
 * within one quantization step of the output, since the two round the
 * same real values in different places. */
#include "o2c_pass_test.h"

static const char *const ONLY_QUANTIZE[] = {"quantize", NULL};

static void scalar_f(Onnx__ModelProto *m, const char *name, float v) { pb_init_raw(m, name, DT_FLOAT, 0, NULL, &v, sizeof v); }
static void scalar_i8(Onnx__ModelProto *m, const char *name, int8_t v) { pb_init_raw(m, name, DT_INT8, 0, NULL, &v, 1); }

/* x [1,2,5,5] -> Q -> DQ -> Conv 3x3 pad 1 (int8 weights per channel,
 * int32 bias) -> Relu -> Q -> DQ -> y; w_scale0: channel 0's weight scale */
static Onnx__ModelProto *conv_model(float w_scale0)
{
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x2x5x5");
    pb_output(m, "y", DT_FLOAT, NULL);
    scalar_f(m, "xs", 0.05f);
    scalar_i8(m, "xz", 3);
    scalar_f(m, "ys", 0.1f);
    scalar_i8(m, "yz", -10);
    int8_t w[3 * 2 * 9];
    for (int i = 0; i < 54; i++) w[i] = (int8_t)((i * 37) % 255 - 127);
    int64_t wd[4] = {3, 2, 3, 3}, cd[1] = {3};
    pb_init_raw(m, "w", DT_INT8, 4, wd, w, sizeof w);
    float ws[3] = {w_scale0, 0.004f, 0.002f}, bs[3];
    for (int i = 0; i < 3; i++) bs[i] = 0.05f * ws[i];
    pb_init_raw(m, "ws", DT_FLOAT, 1, cd, ws, sizeof ws);
    int32_t b[3] = {100, -250, 40};
    pb_init_raw(m, "b", DT_INT32, 1, cd, b, sizeof b);
    pb_init_raw(m, "bs", DT_FLOAT, 1, cd, bs, sizeof bs);
    pb_node(m, "QuantizeLinear", "qx", "x,xs,xz", "xq");
    pb_node(m, "DequantizeLinear", "dqx", "xq,xs,xz", "xf");
    pb_attr_i(pb_node(m, "DequantizeLinear", "dqw", "w,ws", "wf"), "axis", 0);
    pb_attr_i(pb_node(m, "DequantizeLinear", "dqb", "b,bs", "bf"), "axis", 0);
    Onnx__NodeProto *c = pb_node(m, "Conv", "conv", "xf,wf,bf", "c");
    const int64_t pads[4] = {1, 1, 1, 1};
    pb_attr_ints(c, "pads", 4, pads);
    pb_node(m, "Relu", "relu", "c", "r");
    pb_node(m, "QuantizeLinear", "qy", "r,ys,yz", "yq");
    pb_node(m, "DequantizeLinear", "dqy", "yq,ys,yz", "y");
    return m;
}

/* The pass on m's graph: the graph, checked against the original's float
 * evaluation within `step` */
static Graph *quantized_checked(Onnx__ModelProto *m, double step)
{
    Graph *ref = pt_graph(m);
    pt_fill_inputs(ref, 3);
    EXPECT_OK(graph_evaluate(ref));
    Graph *volatile g = pt_graph(m);
    EXPECT_OK(run_pass(g, "quantize"));
    pt_fill_inputs(g, 3);
    EXPECT_OK(graph_evaluate(g));
    Tensor *a = g->outputs[0], *b = ref->outputs[0];
    assert_int_equal(tensor_numel(a), tensor_numel(b));
    for (int64_t i = 0; i < tensor_numel(a); i++) {
        double x = elem_f64(a->dtype, a->data, i), y = elem_f64(b->dtype, b->data, i);
        if (!(fabs(x - y) <= step * 1.0001)) fail_msg("y[%lld]: integer %.9g, float %.9g", (long long)i, x, y);
    }
    return g;
}

static void test_conv_group(void **state)
{
    (void)state;
    Graph *g = quantized_checked(conv_model(0.003f), 0.1);
    assert_int_equal(pt_count(g, "Conv"), 0);
    assert_int_equal(pt_count(g, "Relu"), 0);
    Node *f = pt_find(g, "FusedQLinearConv");
    assert_int_equal(f->in[3]->dtype, DT_INT8);       /* the weights stay int8 */
    assert_int_equal(attr_i(f, "y_min"), -10);        /* the Relu: Q(0) = the zero point */
    assert_int_equal(attr_i(f, "y_max"), 127);
    assert_int_equal(f->in[8]->dtype, DT_INT32);      /* the model's int32 bias at x_scale * w_scale */
    assert_int_equal(((int32_t *)f->in[8]->data)[1], -250);
}

static void test_conv_group_left_alone(void **state)
{
    (void)state;
    /* a zero weight scale: the float path computes what the model says */
    Graph *g = pt_optimize_checked(conv_model(0.0f), 0, ONLY_QUANTIZE);
    assert_int_equal(pt_count(g, "FusedQLinearConv"), 0);
    assert_int_equal(pt_count(g, "Conv"), 1);
}

/* x [2,8] -> Q -> DQ -> Sigmoid -> Q -> DQ; Mul(DQ x, that) -> Q -> DQ -> y */
static Onnx__ModelProto *silu_model(void)
{
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x8");
    pb_output(m, "y", DT_FLOAT, NULL);
    scalar_f(m, "xs", 0.03f);
    scalar_i8(m, "xz", 0);
    scalar_f(m, "ss", 1.0f / 256);
    scalar_i8(m, "sz", -128);
    scalar_f(m, "ys", 0.02f);
    scalar_i8(m, "yz", -100);
    pb_node(m, "QuantizeLinear", "qx", "x,xs,xz", "xq");
    pb_node(m, "DequantizeLinear", "dqx", "xq,xs,xz", "xf");
    pb_node(m, "Sigmoid", "sig", "xf", "s");
    pb_node(m, "QuantizeLinear", "qs", "s,ss,sz", "sq");
    pb_node(m, "DequantizeLinear", "dqs", "sq,ss,sz", "sf");
    pb_node(m, "Mul", "mul", "xf,sf", "p");
    pb_node(m, "QuantizeLinear", "qy", "p,ys,yz", "yq");
    pb_node(m, "DequantizeLinear", "dqy", "yq,ys,yz", "y");
    return m;
}

static void test_silu_table(void **state)
{
    (void)state;
    /* the same integer function of x's byte: exact */
    Graph *g = quantized_checked(silu_model(), 0);
    /* the result: a lookup of x's bytes; the table is made by nodes on the
     * 256 byte values (the model's Sigmoid and Mul on them), which the fold
     * pass evaluates */
    Node *l = g->outputs[0]->producer->in[0]->producer;
    assert_string_equal(l->op_type, "FusedQLookup");
    assert_string_equal(l->in[0]->name, "xq");
    assert_string_equal(l->in[1]->producer->op_type, "QLinearMul");
    /* (on a graph not evaluated: evaluation gives every tensor a value) */
    Graph *volatile h = pt_graph(silu_model());
    EXPECT_OK(run_pass(h, "quantize"));
    EXPECT_OK(run_pass(h, "fold"));
    EXPECT_OK(run_pass(h, "dce"));
    assert_int_equal(pt_count(h, "Sigmoid"), 0);
    assert_int_equal(pt_count(h, "FusedQLookup"), 1);
    assert_non_null(pt_find(h, "FusedQLookup")->in[1]->data);
}

/* x [2,6] -> MatMul(DQ(uint8 W [6,4], per column, zero point 128)) -> Add b -> y */
static Onnx__ModelProto *weight_only_model(void)
{
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x6");
    pb_output(m, "y", DT_FLOAT, NULL);
    uint8_t w[24], z[4] = {128, 128, 128, 128};
    for (int i = 0; i < 24; i++) w[i] = (uint8_t)((i * 53) % 256);
    int64_t wd[2] = {6, 4}, cd[1] = {4};
    float ws[4] = {0.01f, 0.02f, 0.005f, 0.03f}, b[4] = {0.5f, -0.25f, 0.0f, 1.0f};
    pb_init_raw(m, "w", DT_UINT8, 2, wd, w, sizeof w);
    pb_init_raw(m, "ws", DT_FLOAT, 1, cd, ws, sizeof ws);
    pb_init_raw(m, "wz", DT_UINT8, 1, cd, z, sizeof z);
    pb_init_raw(m, "b", DT_FLOAT, 1, cd, b, sizeof b);
    pb_attr_i(pb_node(m, "DequantizeLinear", "dqw", "w,ws,wz", "wf"), "axis", 1);
    pb_node(m, "MatMul", "mm", "x,wf", "t");
    pb_node(m, "Add", "add", "t,b", "y");
    return m;
}

static void test_weight_only(void **state)
{
    (void)state;
    /* float sums in another order than DequantizeLinear then MatMul: a few ulps */
    Graph *g = quantized_checked(weight_only_model(), 1e-5);
    assert_int_equal(pt_count(g, "MatMul"), 0);
    assert_int_equal(pt_count(g, "Add"), 0);
    Node *f = pt_find(g, "FusedWQMatMul");
    assert_int_equal(f->in[1]->dtype, DT_UINT8);      /* the weights stay 8-bit */
    assert_int_equal(f->nin, 5);                      /* x, W, scales, zero points, the bias */
    assert_string_equal(f->in[4]->name, "b");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, pt_setup, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_conv_group),
        T(test_conv_group_left_alone),
        T(test_silu_table),
        T(test_weight_only),
    };
    return cmocka_run_group_tests_name("quantize", tests, NULL, NULL);
}
