/* Unit tests of --report (compiler/report.c): the FLOP rules, FLOPs of a
 * fused op counted through its decomposition, and the rows of the report
 * against the kernel calls of the schedule. */
#include <stdio.h>

#include "o2c_pass_test.h"

static const int64_t DW[] = {4, 3, 3, 3};
static float W[4 * 3 * 3 * 3];
static const int64_t DB[] = {4};
static const float B[4] = {0.1f, -0.2f, 0.3f, 0.0f};
static const int64_t DM[] = {64, 5};
static float M[64 * 5];
static const int64_t DS[] = {2};
static const int64_t SHAPE[] = {1, 64};

/* x[1,3,8,8] -> Conv(4, 3x3, pad 1, bias) -> Relu -> MaxPool 2x2/2 -> Reshape [1,64] -> MatMul [64,5] */
static Onnx__ModelProto *conv_model(void)
{
    for (size_t i = 0; i < sizeof W / sizeof W[0]; i++) W[i] = (float)((int)(i % 7) - 3) * 0.1f;
    for (size_t i = 0; i < sizeof M / sizeof M[0]; i++) M[i] = (float)((int)(i % 5) - 2) * 0.05f;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x3x8x8");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_init_raw(m, "w", DT_FLOAT, 4, DW, W, sizeof W);
    pb_init_raw(m, "b", DT_FLOAT, 1, DB, B, sizeof B);
    pb_init_raw(m, "m", DT_FLOAT, 2, DM, M, sizeof M);
    pb_init_raw(m, "s", DT_INT64, 1, DS, SHAPE, sizeof SHAPE);
    Onnx__NodeProto *c = pb_node(m, "Conv", "conv", "x,w,b", "c");
    static const int64_t pads[] = {1, 1, 1, 1};
    pb_attr_ints(c, "pads", 4, pads);
    pb_node(m, "Relu", "relu", "c", "r");
    Onnx__NodeProto *mp = pb_node(m, "MaxPool", "pool", "r", "p");
    static const int64_t ks[] = {2, 2}, st[] = {2, 2};
    pb_attr_ints(mp, "kernel_shape", 2, ks);
    pb_attr_ints(mp, "strides", 2, st);
    pb_node(m, "Reshape", "flat", "p,s", "f");
    pb_node(m, "MatMul", "fc", "f,m", "y");
    return m;
}

static Node *find_named(Graph *g, const char *name)
{
    for (int i = 0; i < g->nnodes; i++)
        if (!strcmp(g->nodes[i]->name, name)) return g->nodes[i];
    fail_msg("no node '%s'", name);
    return NULL;
}

static void test_flop_rules(void **state)
{
    (void)state;
    Graph *g = pt_graph(conv_model());
    /* Conv: 1*4*8*8 outputs, each 3*3*3 MACs, + bias */
    assert_int_equal(node_flops(find_named(g, "conv")), 2 * 256 * 27 + 256);
    assert_int_equal(node_flops(find_named(g, "relu")), 256);
    /* MaxPool 2x2 stride 2: 1*4*4*4 outputs, 4 compares each */
    assert_int_equal(node_flops(find_named(g, "pool")), 64 * 4);
    assert_int_equal(node_flops(find_named(g, "flat")), 0);
    /* MatMul [1,64] x [64,5]: 5 outputs of 64 MACs */
    assert_int_equal(node_flops(find_named(g, "fc")), 2 * 5 * 64);
}

/* A test-only fused op (domain onnx2c): Conv then Relu, decomposed. */
static void decompose_conv_relu(const Node *n, Decomp *d)
{
    const char *c = dc_op(d, "Conv", 3, dc_in(d, 0), dc_in(d, 1), dc_in(d, 2));
    static const char *const names[] = {"pads", "strides", "dilations", "group", "kernel_shape", NULL};
    dc_copy_attrs(d, n, names);
    const char *r = dc_op(d, "Relu", 1, c);
    dc_output(d, 0, r);
}

static OpDef fused_conv_relu;

static void test_fused_flops_from_decomposition(void **state)
{
    (void)state;
    Graph *g = pt_graph(conv_model());
    Node *conv = find_named(g, "conv");
    int64_t parts = node_flops(conv) + node_flops(find_named(g, "relu"));
    fused_conv_relu = *conv->op;
    fused_conv_relu.name = "TestConvRelu";
    fused_conv_relu.domain = "onnx2c";
    fused_conv_relu.decompose = decompose_conv_relu;
    conv->op = &fused_conv_relu;
    conv->op_type = "TestConvRelu";
    conv->domain = "onnx2c";
    assert_int_equal(node_flops(conv), parts);
    /* a decomposition that cannot be inferred: unknown (-1), no failure */
    fused_conv_relu.decompose = NULL;
    static OpDef broken;
    broken = fused_conv_relu;
    broken.decompose = decompose_conv_relu;
    conv->in[1] = conv->in[2];          /* weights of the wrong rank */
    conv->op = &broken;
    assert_int_equal(node_flops(conv), -1);
}

static int count_rows(const char *text, int *total)
{
    int rows = 0;
    *total = -1;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        int idx;
        char kernel[64];
        if (sscanf(p, " %d %63s", &idx, kernel) == 2 && !strncmp(kernel, "o2c_", 4)) {
            assert_int_equal(idx, rows);
            rows++;
        }
        if (!strncmp(p, "total: ", 7)) *total = atoi(p + 7);
    }
    return rows;
}

static char *report_text(Graph *g, Lowering *L, int64_t arena, int level)
{
    static Options o;
    o.opt_level = level;
    o.input = "unit.onnx";
    FILE *f = tmpfile();
    assert_non_null(f);
    EXPECT_OK(write_report(f, g, L, arena, &o));
    long n = ftell(f);
    rewind(f);
    char *s = xalloc((size_t)n + 1);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return s;
}

static void test_rows_are_the_kernel_calls(void **state)
{
    (void)state;
    for (int volatile level = 0; level <= 2; level += 2) {
        Graph *g = pt_graph(conv_model());
        static Options o;
        o.opt_level = level;
        EXPECT_OK(run_passes(g, &o));
        Lowering L = {0};
        EXPECT_OK(lower_graph(g, &L));
        int64_t volatile arena = 0;
        EXPECT_OK(arena = plan_graph(g, &L));
        int emitted = 0;
        for (int i = 0; i < L.n; i++) emitted += L.calls[i].count > 0;
        char *text = report_text(g, &L, arena, level);
        int total;
        assert_int_equal(count_rows(text, &total), emitted);
        assert_int_equal(total, emitted);
        assert_non_null(strstr(text, "o2c_conv_f32"));
        assert_non_null(strstr(text, xfmt("arena %lld bytes", (long long)arena)));
        /* total FLOPs: the sum of the nodes' */
        int64_t flops = 0;
        for (int i = 0; i < g->nnodes; i++) flops += node_flops(g->nodes[i]);
        assert_non_null(strstr(text, xfmt("kernels, %lld FLOPs", (long long)flops)));
        /* weights: w, b and m are read; the Reshape's shape is not a float */
        assert_non_null(strstr(text, xfmt("%zu weight bytes", sizeof W + sizeof B + sizeof M)));
        o2c_forget_name_index();
    }
}

/* A fused node's row names the original nodes it covers. */
static void test_rows_show_origins(void **state)
{
    (void)state;
    Graph *g = pt_graph(conv_model());
    Node *conv = find_named(g, "conv"), *relu = find_named(g, "relu");
    node_add_origins(conv, relu);
    node_note_fused(conv, "Relu");
    Lowering L = {0};
    EXPECT_OK(lower_graph(g, &L));
    int64_t volatile arena = 0;
    EXPECT_OK(arena = plan_graph(g, &L));
    char *text = report_text(g, &L, arena, 2);
    assert_non_null(strstr(text, "Conv+Relu"));
    assert_non_null(strstr(text, "conv <- conv, relu"));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, pt_setup, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_flop_rules),
        T(test_fused_flops_from_decomposition),
        T(test_rows_are_the_kernel_calls),
        T(test_rows_show_origins),
    };
    return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
