/* Unit tests of the execution order (compiler/schedule.c): the memory-aware
 * order is taken when its estimated peak is lower, never when it is not,
 * and it is a valid topological order. */
#include "o2c_pass_test.h"

static int pos(Graph *g, const char *name)
{
    for (int i = 0; i < g->nnodes; i++)
        if (!strcmp(g->nodes[i]->name, name)) return i;
    return -1;
}

/* Two branches, each a large tensor reduced to a small one, written by the
 * model as "both large ones first": the memory-aware order finishes one
 * branch before starting the other (one large tensor live at a time). */
static void test_branches_one_at_a_time(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x4x32x32");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Relu", "big_a", "x", "a1");
    pb_node(m, "Sigmoid", "big_b", "x", "b1");
    pb_node(m, "GlobalAveragePool", "small_a", "a1", "a2");
    pb_node(m, "GlobalMaxPool", "small_b", "b1", "b2");
    pb_node(m, "Add", "join", "a2,b2", "y");
    Graph *g = pt_graph(m);
    EXPECT_OK(schedule_graph(g));
    const int64_t big = 4 * 32 * 32 * 4, small = 4 * 4;
    assert_int_equal(g->peak_model, 2 * big + small);
    assert_int_equal(g->peak_scheduled, big + 2 * small);
    assert_true(pos(g, "small_a") < pos(g, "big_b"));   /* branch a done before b starts */
    assert_true(pos(g, "big_a") < pos(g, "small_a"));
    assert_true(pos(g, "big_b") < pos(g, "small_b"));
    assert_int_equal(pos(g, "join"), 4);
}

/* A chain has one order: nothing changes. */
static void test_chain_unchanged(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x8");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Relu", "n0", "x", "t0");
    pb_node(m, "Sigmoid", "n1", "t0", "t1");
    pb_node(m, "Tanh", "n2", "t1", "y");
    Graph *g = pt_graph(m);
    EXPECT_OK(schedule_graph(g));
    assert_int_equal(g->peak_model, g->peak_scheduled);
    assert_int_equal(pos(g, "n0"), 0);
    assert_int_equal(pos(g, "n1"), 1);
    assert_int_equal(pos(g, "n2"), 2);
}

/* Four branches of a large tensor reduced to a small one, written "all
 * large ones first", joined pairwise: the order taken keeps one large
 * tensor live at a time, is a valid topological order, and is the same
 * on a second run (the search's generator is fixed). */
static Graph *four_branches(void)
{
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x4x16x16");
    pb_output(m, "y", DT_FLOAT, NULL);
    static const char *const big[] = {"Relu", "Sigmoid", "Tanh", "Exp"};
    for (int b = 0; b < 4; b++) pb_node(m, big[b], xfmt("big%d", b), "x", xfmt("l%d", b));
    for (int b = 0; b < 4; b++) pb_node(m, "GlobalAveragePool", xfmt("small%d", b), xfmt("l%d", b), xfmt("s%d", b));
    pb_node(m, "Add", "j01", "s0,s1", "j01");
    pb_node(m, "Add", "j23", "s2,s3", "j23");
    pb_node(m, "Mul", "join", "j01,j23", "y");
    return pt_graph(m);
}

static void test_search_valid_and_deterministic(void **state)
{
    (void)state;
    Graph *g = four_branches();
    EXPECT_OK(schedule_graph(g));
    const int64_t big = 4 * 16 * 16 * 4, small = 4 * 4;
    assert_int_equal(g->peak_model, 4 * big + small);
    assert_true(g->peak_scheduled <= big + 4 * small);
    for (int i = 0; i < g->nnodes; i++)
        for (int j = 0; j < g->nodes[i]->nin; j++) {
            Tensor *t = g->nodes[i]->in[j];
            if (t && t->producer) assert_true(pos(g, t->producer->name) < i);
        }
    char first[256] = "";
    for (int i = 0; i < g->nnodes; i++) strncat(first, g->nodes[i]->name, 16);
    Graph *h = four_branches();
    EXPECT_OK(schedule_graph(h));
    char second[256] = "";
    for (int i = 0; i < h->nnodes; i++) strncat(second, h->nodes[i]->name, 16);
    assert_string_equal(first, second);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_branches_one_at_a_time, o2c_teardown),
        cmocka_unit_test_teardown(test_chain_unchanged, o2c_teardown),
        cmocka_unit_test_teardown(test_search_valid_and_deterministic, o2c_teardown),
    };
    return cmocka_run_group_tests_name("schedule", tests, NULL, NULL);
}
