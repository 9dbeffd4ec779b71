/* Unit tests of inference (compiler/infer.c and the shape rules it runs):
 * ordering, graph checks, broadcasting, Reshape, --shape/--dim binding. */
#include "o2c_test.h"

static Options opts;    /* zeroed before each test */

static int setup(void **state)
{
    (void)state;
    memset(&opts, 0, sizeof opts);
    return 0;
}

static void opt_shape(const char *name, int rank, const int64_t *dims)
{
    opts.shapes[opts.nshapes].name = S(name);
    opts.shapes[opts.nshapes].rank = rank;
    for (int i = 0; i < rank; i++) opts.shapes[opts.nshapes].dims[i] = dims[i];
    opts.nshapes++;
}

static void opt_dim(const char *name, int64_t v)
{
    opts.dimv[opts.ndims].name = S(name);
    opts.dimv[opts.ndims].value = v;
    opts.ndims++;
}

static Graph *load_infer(Onnx__ModelProto *m)
{
    Graph *g = pb_load(m);
    EXPECT_OK(infer_graph(g, &opts));
    return g;
}

static void load_infer_fails(Onnx__ModelProto *m)
{
    Graph *g = pb_load(m);
    EXPECT_FAIL(infer_graph(g, &opts));
}

static void assert_shape(Graph *g, const char *name, int dtype, const char *shape)
{
    Tensor *t = graph_find(g, name);
    if (!t) fail_msg("no tensor '%s'", name);
    assert_int_equal(t->dtype, dtype);
    assert_string_equal(tensor_shape_str(t), shape);
}

static Node *node_named(Graph *g, const char *name)
{
    for (int i = 0; i < g->nnodes; i++)
        if (!strcmp(g->nodes[i]->name, name)) return g->nodes[i];
    fail_msg("no node '%s'", name);
    return NULL;
}

/* x -> a:Relu -> t1 -> b:Neg -> t2 -> c:Add(t2, t1) -> t3 -> d:Abs -> y,
 * listed in the model as d, c, a, b. */
static void test_topological_order(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x3");
    pb_output(m, "y", DT_FLOAT, "2x3");
    pb_node(m, "Abs", "d", "t3", "y");
    pb_node(m, "Add", "c", "t2,t1", "t3");
    pb_node(m, "Relu", "a", "x", "t1");
    pb_node(m, "Neg", "b", "t1", "t2");
    Graph *g = load_infer(m);
    assert_int_equal(g->nnodes, 4);
    const char *want[4] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(g->nodes[i]->name, want[i]);
        assert_int_equal(g->nodes[i]->step, i);
    }
    /* every input is produced before its reader */
    for (int i = 0; i < g->nnodes; i++)
        for (int j = 0; j < g->nodes[i]->nin; j++) {
            Tensor *t = g->nodes[i]->in[j];
            if (t && t->producer) assert_true(t->producer->step < i);
        }
    assert_shape(g, "y", DT_FLOAT, "2x3");
    assert_non_null(node_named(g, "c")->op);
}

/* Independent nodes keep model order (ready nodes taken in model order). */
static void test_order_is_stable(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "4");
    pb_output(m, "y", DT_FLOAT, "4");
    pb_node(m, "Add", "sum", "p,q", "y");
    pb_node(m, "Relu", "p1", "x", "p");
    pb_node(m, "Neg", "q1", "x", "q");
    Graph *g = load_infer(m);
    assert_string_equal(g->nodes[0]->name, "p1");
    assert_string_equal(g->nodes[1]->name, "q1");
    assert_string_equal(g->nodes[2]->name, "sum");
}

static void test_cycle_detected(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "4");
    pb_output(m, "y", DT_FLOAT, "4");
    pb_node(m, "Add", "ping", "x,b", "a");
    pb_node(m, "Relu", "pong", "a", "b");
    pb_node(m, "Abs", "out", "a", "y");
    load_infer_fails(m);
    assert_msg_has("cycle");
    assert_msg_has("'ping'");
}

static void test_dangling_tensor_detected(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "4");
    pb_output(m, "y", DT_FLOAT, "4");
    pb_node(m, "Add", "adder", "x,ghost", "y");
    load_infer_fails(m);
    assert_msg_has("'ghost'");
    assert_msg_has("'adder'");
    assert_msg_has("dangling");

    /* a graph output nobody produces */
    o2c_teardown(NULL);
    m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "4");
    pb_output(m, "y", DT_FLOAT, "4");
    pb_output(m, "orphan", DT_FLOAT, "4");
    pb_node(m, "Relu", "r", "x", "y");
    load_infer_fails(m);
    assert_msg_has("'orphan'");
    assert_msg_has("produced by no node");
}

static void test_broadcast_shapes(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "a", DT_FLOAT, "2x1x3");
    pb_input(m, "b", DT_FLOAT, "4x1");
    pb_input(m, "s", DT_FLOAT, "");
    pb_input(m, "r", DT_FLOAT, "3");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "z", DT_BOOL, NULL);
    pb_output(m, "w", DT_FLOAT, NULL);
    pb_node(m, "Add", "add", "a,b", "y");        /* 2x1x3 + 4x1 -> 2x4x3 */
    pb_node(m, "Less", "less", "s,a", "z");      /* scalar vs 2x1x3 -> bool 2x1x3 */
    pb_node(m, "Mul", "mul", "r,b", "w");        /* 3 * 4x1 -> 4x3 */
    Graph *g = load_infer(m);
    assert_shape(g, "y", DT_FLOAT, "2x4x3");
    assert_shape(g, "z", DT_BOOL, "2x1x3");
    assert_shape(g, "w", DT_FLOAT, "4x3");

    /* broadcast_shapes directly, both argument orders */
    Tensor a = {.name = "a", .dtype = DT_FLOAT, .rank = 4, .dims = {5, 1, 1, 7}};
    Tensor b = {.name = "b", .dtype = DT_FLOAT, .rank = 2, .dims = {6, 1}};
    int64_t d[MAX_RANK];
    int r = -1;
    EXPECT_OK(r = broadcast_shapes(NULL, &a, &b, d));
    assert_int_equal(r, 4);
    assert_int_equal(d[0], 5); assert_int_equal(d[1], 1); assert_int_equal(d[2], 6); assert_int_equal(d[3], 7);
    EXPECT_OK(r = broadcast_shapes(NULL, &b, &a, d));
    assert_int_equal(r, 4);
    assert_int_equal(d[2], 6); assert_int_equal(d[3], 7);
    Tensor z = {.name = "z", .dtype = DT_FLOAT, .rank = 2, .dims = {0, 7}};   /* 0 broadcasts with 1 */
    Tensor o = {.name = "o", .dtype = DT_FLOAT, .rank = 2, .dims = {1, 7}};
    EXPECT_OK(r = broadcast_shapes(NULL, &z, &o, d));
    assert_int_equal(d[0], 0);
    assert_int_equal(d[1], 7);
    Tensor c = {.name = "c", .dtype = DT_FLOAT, .rank = 1, .dims = {6}};
    EXPECT_FAIL(broadcast_shapes(NULL, &a, &c, d));
    assert_msg_has("'a'");
    assert_msg_has("5x1x1x7");
    assert_msg_has("'c'");

    /* strides as the kernels see them */
    int64_t st[4];
    bcast_strides(&b, 4, st);
    assert_int_equal(st[0], 0); assert_int_equal(st[1], 0);
    assert_int_equal(st[2], 1); assert_int_equal(st[3], 0);
    bcast_strides(&a, 4, st);
    assert_int_equal(st[0], 7); assert_int_equal(st[1], 0);
    assert_int_equal(st[2], 0); assert_int_equal(st[3], 1);
}

static void test_broadcast_mismatch(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "a", DT_FLOAT, "2x3");
    pb_input(m, "b", DT_FLOAT, "4x5");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Add", "bad_add", "a,b", "y");
    load_infer_fails(m);
    assert_msg_has("'bad_add'");
    assert_msg_has("(Add)");
    assert_msg_has("2x3");
    assert_msg_has("4x5");
}

static void test_matmul_shapes(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "a", DT_FLOAT, "5x2x3");
    pb_input(m, "b", DT_FLOAT, "3x4");
    pb_input(m, "v", DT_FLOAT, "3");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "yv", DT_FLOAT, NULL);
    pb_node(m, "MatMul", "mm", "a,b", "y");
    pb_node(m, "MatMul", "mv", "a,v", "yv");
    Graph *g = load_infer(m);
    assert_shape(g, "y", DT_FLOAT, "5x2x4");
    assert_shape(g, "yv", DT_FLOAT, "5x2");

    o2c_teardown(NULL);
    m = pb_model(8, 13);
    pb_input(m, "a", DT_FLOAT, "2x3");
    pb_input(m, "b", DT_FLOAT, "4x5");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "MatMul", "mm", "a,b", "y");
    load_infer_fails(m);
    assert_msg_has("'mm'");
    assert_msg_has("2x3");
    assert_msg_has("4x5");
}

static const int64_t D1[] = {1}, D2[] = {2}, D3[] = {3};

static Graph *reshape(const char *xshape, int n, const int64_t *shape)
{
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, xshape);
    pb_output(m, "y", DT_FLOAT, NULL);
    int64_t len = n;
    pb_init_raw(m, "shape", DT_INT64, 1, &len, shape, sizeof(int64_t) * (size_t)n);
    pb_node(m, "Reshape", "rs", "x,shape", "y");
    return pb_load(m);
}

static void test_reshape(void **state)
{
    (void)state;
    Graph *g;
    g = reshape("2x3x4", 2, (int64_t[]){0, -1});
    EXPECT_OK(infer_graph(g, &opts));
    assert_shape(g, "y", DT_FLOAT, "2x12");
    o2c_teardown(NULL);

    g = reshape("2x3x4", 2, (int64_t[]){-1, 4});
    EXPECT_OK(infer_graph(g, &opts));
    assert_shape(g, "y", DT_FLOAT, "6x4");
    o2c_teardown(NULL);

    g = reshape("2x3x4", 4, (int64_t[]){0, 0, -1, 1});
    EXPECT_OK(infer_graph(g, &opts));
    assert_shape(g, "y", DT_FLOAT, "2x3x4x1");
    o2c_teardown(NULL);

    g = reshape("2x3x4", 1, (int64_t[]){24});
    EXPECT_OK(infer_graph(g, &opts));
    assert_shape(g, "y", DT_FLOAT, "24");
    o2c_teardown(NULL);

    g = reshape("2x3x4", 2, (int64_t[]){5, -1});      /* 24 is not a multiple of 5 */
    EXPECT_FAIL(infer_graph(g, &opts));
    assert_msg_has("'rs'");
    assert_msg_has("2x3x4");
    o2c_teardown(NULL);

    g = reshape("2x3x4", 2, (int64_t[]){5, 5});
    EXPECT_FAIL(infer_graph(g, &opts));
    assert_msg_has("2x3x4");
    o2c_teardown(NULL);

    g = reshape("2x3x4", 2, (int64_t[]){-1, -1});
    EXPECT_FAIL(infer_graph(g, &opts));
    assert_msg_has("-1");
    o2c_teardown(NULL);

    g = reshape("2x3x4", 2, (int64_t[]){4, -2});
    EXPECT_FAIL(infer_graph(g, &opts));
    o2c_teardown(NULL);

    /* the shape must be constant */
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x3");
    pb_input(m, "shape", DT_INT64, "2");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Reshape", "rs", "x,shape", "y");
    load_infer_fails(m);
    assert_msg_has("'shape'");
    /* a graph input: named for --bind (the contract tools read), the data input not */
    assert_msg_has("--bind shape=");
    assert_null(strstr(diag_msg, "--bind x="));
}

/* Shape -> Gather-free chain: Shape(x) feeds Reshape; folded at compile time. */
static void test_shape_feeds_reshape(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x3");
    pb_input(m, "z", DT_FLOAT, "6");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Shape", "sh", "x", "s");
    pb_node(m, "Reshape", "rs", "z,s", "y");
    Graph *g = load_infer(m);
    assert_shape(g, "s", DT_INT64, "2");
    assert_non_null(graph_find(g, "s")->data);
    assert_shape(g, "y", DT_FLOAT, "2x3");
    (void)D1; (void)D2; (void)D3;
}

/* x: N x 3 -> Relu -> y */
static Onnx__ModelProto *symbolic_model(void)
{
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "batchx3");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Relu", "r", "x", "y");
    return m;
}

static void test_dim_binding(void **state)
{
    (void)state;
    opt_dim("batch", 4);
    Graph *g = load_infer(symbolic_model());
    assert_shape(g, "x", DT_FLOAT, "4x3");
    assert_shape(g, "y", DT_FLOAT, "4x3");
}

static void test_shape_binding(void **state)
{
    (void)state;
    opt_shape("x", 2, (int64_t[]){7, 3});
    Graph *g = load_infer(symbolic_model());
    assert_shape(g, "y", DT_FLOAT, "7x3");
    o2c_teardown(NULL);

    /* an input without any shape in the model */
    memset(&opts, 0, sizeof opts);
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, NULL);
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Relu", "r", "x", "y");
    load_infer_fails(m);
    assert_msg_has("'x'");
    assert_msg_has("--shape x:");
    o2c_teardown(NULL);
    memset(&opts, 0, sizeof opts);
    opt_shape("x", 3, (int64_t[]){1, 2, 5});
    m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, NULL);
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Relu", "r", "x", "y");
    g = load_infer(m);
    assert_shape(g, "y", DT_FLOAT, "1x2x5");
}

static void test_shape_binding_errors(void **state)
{
    (void)state;
    opt_shape("nosuch", 2, (int64_t[]){7, 3});
    load_infer_fails(symbolic_model());
    assert_msg_has("--shape nosuch");
    assert_msg_has("no input named 'nosuch'");
    o2c_teardown(NULL);

    memset(&opts, 0, sizeof opts);
    opt_shape("x", 3, (int64_t[]){7, 3, 1});
    load_infer_fails(symbolic_model());
    assert_msg_has("rank 2");
    o2c_teardown(NULL);

    memset(&opts, 0, sizeof opts);
    opt_shape("x", 2, (int64_t[]){7, 4});     /* dimension 1 is fixed to 3 */
    load_infer_fails(symbolic_model());
    assert_msg_has("fixed to 3");
    o2c_teardown(NULL);

    memset(&opts, 0, sizeof opts);
    opt_dim("nosym", 4);
    load_infer_fails(symbolic_model());
    assert_msg_has("--dim nosym");
    o2c_teardown(NULL);

    /* --shape naming an initializer (not an input) */
    memset(&opts, 0, sizeof opts);
    opt_shape("w", 1, (int64_t[]){3});
    Onnx__ModelProto *m = symbolic_model();
    pb_init_raw(m, "w", DT_FLOAT, 1, D3, (float[]){1, 2, 3}, 12);
    load_infer_fails(m);
    assert_msg_has("'w'");
}

static void test_unbound_symbolic_dim(void **state)
{
    (void)state;
    load_infer_fails(symbolic_model());
    assert_msg_has("'x'");
    assert_msg_has("'batch'");
    assert_msg_has("--dim batch=<size>");
    assert_msg_has("--shape x:");
}

static void test_unsupported_ops_in_one_message(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "4");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "FancyOp", "first", "x", "t");
    Onnx__NodeProto *n = pb_node(m, "MyOp", "second", "t", "y");
    n->domain = S("com.example");
    load_infer_fails(m);
    assert_msg_has("FancyOp");
    assert_msg_has("'first'");
    assert_msg_has("MyOp");
    assert_msg_has("'second'");
    assert_msg_has("com.example");
    assert_msg_has("2 nodes");
}

static void test_wrong_arity_and_types(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "4");
    pb_input(m, "i", DT_INT64, "4");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Add", "mixed", "x,i", "y");
    load_infer_fails(m);
    assert_msg_has("'mixed'");
    assert_msg_has("int64");
    o2c_teardown(NULL);

    m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "4");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Relu", "two", "x,x", "y");
    load_infer_fails(m);
    assert_msg_has("'two'");
    assert_msg_has("2 inputs");
}

static void test_folding_and_cast(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "3");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_init_raw(m, "c", DT_INT32, 1, D3, (int32_t[]){-2, 0, 5}, 12);
    Onnx__NodeProto *n = pb_node(m, "Cast", "cast", "c", "cf");
    pb_attr_i(n, "to", DT_FLOAT);
    pb_node(m, "Relu", "relu", "cf", "cr");
    pb_node(m, "Add", "add", "x,cr", "y");
    Graph *g = load_infer(m);
    Tensor *cr = graph_find(g, "cr");
    assert_non_null(cr->data);
    const float want[3] = {0, 0, 5};
    assert_memory_equal(cr->data, want, sizeof want);
    /* evaluated nodes leave the graph; their outputs are constants */
    assert_int_equal(g->nnodes, 1);
    assert_string_equal(g->nodes[0]->name, "add");
    assert_null(cr->producer);
    assert_null(graph_find(g, "y")->data);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_topological_order),
        T(test_order_is_stable),
        T(test_cycle_detected),
        T(test_dangling_tensor_detected),
        T(test_broadcast_shapes),
        T(test_broadcast_mismatch),
        T(test_matmul_shapes),
        T(test_reshape),
        T(test_shape_feeds_reshape),
        T(test_dim_binding),
        T(test_shape_binding),
        T(test_shape_binding_errors),
        T(test_unbound_symbolic_dim),
        T(test_unsupported_ops_in_one_message),
        T(test_wrong_arity_and_types),
        T(test_folding_and_cast),
    };
    return cmocka_run_group_tests_name("infer", tests, NULL, NULL);
}
