/* Unit tests of the graph-editing API (compiler/graph.c), the pass manager
 * (compiler/passes.c) and the cleanup passes fold and dce. */
#include "o2c_pass_test.h"

static const int64_t D1[] = {1};

/* x -> Relu -> r -> Neg -> y ; r -> Abs -> dead */
static Onnx__ModelProto *chain_model(void)
{
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "3");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Relu", "relu", "x", "r");
    pb_node(m, "Neg", "neg", "r", "y");
    pb_node(m, "Abs", "abs", "r", "dead");
    return m;
}

static void test_readers_and_replace(void **state)
{
    (void)state;
    Graph *g = pt_graph(chain_model());
    Tensor *r = graph_find(g, "r"), *x = graph_find(g, "x");
    Node **rd;
    assert_int_equal(graph_readers(g, r, &rd), 2);
    assert_string_equal(rd[0]->name, "neg");
    assert_string_equal(rd[1]->name, "abs");
    assert_int_equal(tensor_nuses(g, graph_find(g, "y")), 1);   /* the graph output */
    assert_int_equal(tensor_nuses(g, graph_find(g, "dead")), 0);
    /* Neg and Abs read x directly: r has no readers, x has three */
    assert_int_equal(graph_replace_uses(g, r, x), 2);
    assert_int_equal(graph_readers(g, r, &rd), 0);
    assert_int_equal(graph_readers(g, x, &rd), 3);
    assert_false(tensor_single_use(g, x));
}

static void test_insert_remove_and_reinfer(void **state)
{
    (void)state;
    Graph *g = pt_graph(chain_model());
    Tensor *r = graph_find(g, "r");
    Node *neg = g->nodes[1];
    assert_string_equal(neg->name, "neg");
    /* insert Sigmoid between Relu and Neg */
    Tensor *s = graph_new_tensor(g, "r");
    assert_string_not_equal(s->name, "r");          /* unique name */
    assert_true(s->id != r->id);
    Node *sig = graph_insert_node(g, neg, "Sigmoid", "", &r, 1, &s, 1);
    node_reinfer(sig);
    assert_int_equal(s->dtype, DT_FLOAT);
    assert_string_equal(tensor_shape_str(s), "3");
    assert_ptr_equal(s->producer, sig);
    node_set_input(g, neg, 0, s);
    assert_int_equal(graph_node_index(g, sig), 1);
    assert_int_equal(tensor_nuses(g, s), 1);
    /* attributes: set, replace, remove */
    node_set_attr_f(sig, "alpha", 0.5);
    node_set_attr_f(sig, "alpha", 0.25);
    assert_int_equal(sig->nattrs, 1);
    assert_true(attr_find(sig, "alpha")->f == 0.25);
    node_remove_attr(sig, "alpha");
    assert_int_equal(sig->nattrs, 0);
    /* provenance */
    node_add_origins(sig, neg);
    node_add_origins(sig, neg);
    assert_int_equal(sig->norigins, 1);
    assert_string_equal(sig->origins[0], "neg");
    graph_remove_node(g, sig);
    assert_null(s->producer);
    assert_int_equal(graph_node_index(g, sig), -1);
}

/* graph_new_tensor: hint, hint_1 .. hint_8 in order, then unique names from
 * a galloping search (not one probe per existing name: 5000 tensors from one
 * hint stay fast) */
static void test_new_tensor_names(void **state)
{
    (void)state;
    Graph *g = pt_graph(chain_model());
    assert_string_equal(graph_new_tensor(g, "t")->name, "t");
    for (int k = 1; k <= 8; k++) {
        char want[16];
        snprintf(want, sizeof want, "t_%d", k);
        assert_string_equal(graph_new_tensor(g, "t")->name, want);
    }
    assert_string_equal(graph_new_tensor(g, "t")->name, "t_9");   /* 8 taken, 16 free: the gap halved */
    int before = g->ntensors;
    for (int k = 0; k < 5000; k++) graph_new_tensor(g, "t");
    /* graph_tensor returns the tensor a name already has: a new tensor each time means a new name */
    assert_int_equal(g->ntensors, before + 5000);
    assert_string_equal(graph_new_tensor(g, "r")->name, "r_1");   /* another hint starts again */
}

static void test_dce_removes_dead_chains(void **state)
{
    (void)state;
    Onnx__ModelProto *m = chain_model();
    pb_node(m, "Exp", "exp", "dead", "dead2");       /* a dead chain of two */
    Graph *g = pt_graph(m);
    assert_int_equal(g->nnodes, 4);
    assert_int_equal(run_pass(g, "dce"), 2);
    assert_int_equal(g->nnodes, 2);
    assert_int_equal(pt_count(g, "Abs") + pt_count(g, "Exp"), 0);
    assert_int_equal(run_pass(g, "dce"), 0);
}

/* A big constant chain is left to the fold pass; an inflating Expand is not folded. */
/* dce counts uses once and takes them away as nodes go: a dead node
 * reading a tensor twice takes both uses (its producer goes too when
 * nothing else reads it); a tensor a live node reads keeps its producer
 * however many dead readers it had */
static void test_dce_counts_uses(void **state)
{
    (void)state;
    Onnx__ModelProto *m = chain_model();
    pb_node(m, "Add", "twice", "dead,dead", "dead3");   /* Abs's output, twice: Abs goes with it */
    pb_node(m, "Mul", "rr", "r,r", "dead4");            /* r twice: Relu stays, Neg reads r */
    for (int k = 0; k < 500; k++) {
        char name[16], out[16];
        snprintf(name, sizeof name, "sin%d", k);
        snprintf(out, sizeof out, "s%d", k);
        pb_node(m, "Sin", name, "r", out);
    }
    Graph *g = pt_graph(m);
    assert_int_equal(g->nnodes, 505);
    assert_int_equal(run_pass(g, "dce"), 503);
    assert_int_equal(g->nnodes, 2);
    assert_int_equal(pt_count(g, "Relu") + pt_count(g, "Neg"), 2);
    assert_int_equal(tensor_nuses(g, graph_find(g, "r")), 1);   /* recounted after the pass */
    assert_int_equal(run_pass(g, "dce"), 0);
}

static void test_fold_and_size_rule(void **state)
{
    (void)state;
    enum { N = 2048 };
    static float w[N];
    for (int i = 0; i < N; i++) w[i] = (float)(i % 7) - 3;
    const int64_t DN[] = {N};
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2048");
    pb_input(m, "s", DT_FLOAT, "1");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "z", DT_FLOAT, NULL);
    pb_init_raw(m, "w", DT_FLOAT, 1, DN, w, sizeof w);
    pb_init_raw(m, "one", DT_FLOAT, 1, D1, (float[]){1}, 4);
    pb_node(m, "Relu", "relu_w", "w", "wr");          /* 2048 elements: not folded by inference */
    pb_node(m, "Add", "add", "x,wr", "y");
    int64_t big[1] = {N};
    pb_init_raw(m, "shape2", DT_INT64, 1, D1, big, 8);
    pb_node(m, "Expand", "expand", "one,shape2", "ones");  /* 4 bytes -> 8 KB: stays */
    pb_node(m, "Mul", "mul", "s,ones", "z");
    Graph *g = pt_graph(m);
    assert_int_equal(pt_count(g, "Relu"), 1);
    assert_int_equal(run_pass(g, "fold"), 1);         /* Relu of the weights only */
    assert_int_equal(pt_count(g, "Relu"), 0);
    assert_int_equal(pt_count(g, "Expand"), 1);
    Tensor *wr = graph_find(g, "wr");
    assert_non_null(wr->data);
    assert_null(wr->producer);
    assert_true(((float *)wr->data)[3] == 0 && ((float *)wr->data)[4] == 1);
}

static void test_levels_and_equivalence(void **state)
{
    (void)state;
    Graph *g0 = pt_optimize_checked(chain_model(), 0, NULL);
    assert_int_equal(g0->nnodes, 3);                  /* -O0: nothing */
    Graph *g1 = pt_optimize_checked(chain_model(), 1, NULL);
    assert_int_equal(g1->nnodes, 2);                  /* -O1: the dead Abs is gone */
}

static void test_unknown_pass_is_refused(void **state)
{
    (void)state;
    Graph *g = pt_graph(chain_model());
    static Options o;
    o.opt_level = 2;
    o.disabled[0] = "no-such-pass";
    o.ndisabled = 1;
    EXPECT_FAIL(run_passes(g, &o));
    assert_msg_has("no-such-pass");
    assert_true(pass_exists("fold") && pass_exists("dce"));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, pt_setup, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_readers_and_replace),
        T(test_insert_remove_and_reinfer),
        T(test_new_tensor_names),
        T(test_dce_removes_dead_chains),
        T(test_dce_counts_uses),
        T(test_fold_and_size_rule),
        T(test_levels_and_equivalence),
        T(test_unknown_pass_is_refused),
    };
    return cmocka_run_group_tests_name("passes", tests, NULL, NULL);
}
