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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_branches_one_at_a_time, o2c_teardown),
        cmocka_unit_test_teardown(test_chain_unchanged, o2c_teardown),
    };
    return cmocka_run_group_tests_name("schedule", tests, NULL, NULL);
}
