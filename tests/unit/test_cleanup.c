/* Unit tests of the cleanup passes noop and transpose, and of SliceView
 * (a view at a byte offset: planning, evaluation). Each graph is checked
 * numerically against the unoptimized graph and structurally. */
#include "o2c_pass_test.h"
#include "../../runtime/c/params/movement.h"

static const char *const NOOP[] = {"noop", "dce", NULL};
static const char *const TRANSPOSE[] = {"transpose", "dce", NULL};

static void wi64(Onnx__ModelProto *m, const char *name, int len, const int64_t *v)
{
    int64_t d[1] = {len};
    pb_init_raw(m, name, DT_INT64, 1, d, v, sizeof(int64_t) * (size_t)len);
}

/* ---- noop -------------------------------------------------------------- */

/* every kind of no-op in one chain; only the Relu stays */
static void test_noop_every_kind(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x3");
    pb_output(m, "y", DT_FLOAT, NULL);
    pt_init_fill(m, "one", 0, NULL, 1.0f);
    pt_init_fill(m, "zero", 1, (int64_t[]){3}, 0.0f);
    wi64(m, "shape", 2, (int64_t[]){2, 3});
    wi64(m, "pads", 4, (int64_t[]){0, 0, 0, 0});
    wi64(m, "reps", 2, (int64_t[]){1, 1});
    wi64(m, "st", 1, (int64_t[]){0});
    wi64(m, "en", 1, (int64_t[]){100});
    wi64(m, "ax", 1, (int64_t[]){1});
    pb_node(m, "Identity", "id", "x", "t1");
    pb_node(m, "Dropout", "drop", "t1", "t2");
    pb_attr_i(pb_node(m, "Cast", "cast", "t2", "t3"), "to", DT_FLOAT);
    pb_node(m, "Reshape", "reshape", "t3,shape", "t4");
    pb_attr_ints(pb_node(m, "Transpose", "tr", "t4", "t5"), "perm", 2, (int64_t[]){0, 1});
    pb_node(m, "Pad", "pad", "t5,pads", "t6");
    pb_node(m, "Mul", "mul1", "t6,one", "t7");
    pb_node(m, "Add", "add0", "zero,t7", "t8");
    pb_node(m, "Sub", "sub0", "t8,zero", "t9");
    pb_node(m, "Div", "div1", "t9,one", "t10");
    pb_node(m, "Expand", "expand", "t10,shape", "t11");
    pb_node(m, "Tile", "tile", "t11,reps", "t12");
    pb_node(m, "Slice", "slice_all", "t12,st,en,ax", "t13");
    pb_node(m, "Concat", "concat1", "t13", "t14");
    pb_attr_i(m->graph->node[m->graph->n_node - 1], "axis", 0);
    pb_node(m, "Relu", "relu", "t14", "y");
    Graph *g = pt_optimize_checked(m, 0, NOOP);
    assert_int_equal(g->nnodes, 1);
    assert_int_equal(pt_count(g, "Relu"), 1);
    assert_string_equal(g->outputs[0]->name, "y");
}

/* look-alikes that change the result's shape or value stay */
static void test_noop_kept(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "3");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "z", DT_FLOAT, NULL);
    pb_output(m, "w", DT_FLOAT, NULL);
    pt_init_fill(m, "ones", 2, (int64_t[]){2, 3}, 1.0f);
    pt_init_fill(m, "zero", 0, NULL, 0.0f);
    pt_init_fill(m, "two", 0, NULL, 2.0f);
    pb_node(m, "Mul", "bcast", "x,ones", "y");          /* broadcasts to 2x3 */
    pb_node(m, "Sub", "neg", "zero,x", "s");            /* 0 - x is not x */
    pb_node(m, "Mul", "twice", "s,two", "z");           /* not a unit */
    pb_node(m, "Div", "recip", "two,x", "w");
    Graph *g = pt_optimize_checked(m, 0, NOOP);
    assert_int_equal(g->nnodes, 4);
}

/* a removed node's output is a graph output: the producer writes it; a
 * graph input passed straight to an output keeps its Identity */
static void test_noop_graph_outputs(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "4");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "z", DT_FLOAT, NULL);
    pb_output(m, "r", DT_FLOAT, NULL);
    pb_node(m, "Relu", "relu", "x", "r");
    pb_node(m, "Identity", "id1", "r", "y");    /* r is an output too: stays */
    pb_node(m, "Neg", "neg", "x", "n");
    pb_node(m, "Identity", "id2", "n", "z");    /* Neg writes z */
    Graph *g = pt_optimize_checked(m, 0, NOOP);
    assert_int_equal(pt_count(g, "Identity"), 1);
    Tensor *z = graph_find(g, "z");
    assert_non_null(z->producer);
    assert_string_equal(z->producer->op_type, "Neg");
    Onnx__ModelProto *m2 = pb_model(8, 13);
    pb_input(m2, "x", DT_FLOAT, "4");
    pb_output(m2, "y", DT_FLOAT, NULL);
    pb_node(m2, "Identity", "id", "x", "y");
    Graph *g2 = pt_optimize_checked(m2, 0, NOOP);
    assert_int_equal(pt_count(g2, "Identity"), 1);
}

/* ---- SliceView ------------------------------------------------------------ */

static void test_slice_becomes_view(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x6x4");
    pb_input(m, "u", DT_FLOAT, "2x6");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "v", DT_FLOAT, NULL);
    pb_output(m, "w", DT_FLOAT, NULL);
    wi64(m, "st", 1, (int64_t[]){2});
    wi64(m, "en", 1, (int64_t[]){5});
    wi64(m, "ax", 1, (int64_t[]){1});
    wi64(m, "st0", 1, (int64_t[]){0});
    wi64(m, "step2", 1, (int64_t[]){2});
    wi64(m, "en6", 1, (int64_t[]){6});
    pb_node(m, "Relu", "relu", "x", "r");
    pb_node(m, "Slice", "view", "r,st,en,ax", "s");               /* 1x3x4 at offset 8 */
    pb_node(m, "Neg", "neg", "s", "y");
    pb_node(m, "Slice", "rows", "u,st,en,ax", "v");               /* outer dim 2: a copy */
    pb_node(m, "Slice", "stepped", "r,st0,en6,ax,step2", "w");    /* step 2: a copy */
    Graph *g = pt_optimize_checked(m, 0, NOOP);
    assert_int_equal(pt_count(g, "SliceView"), 1);
    assert_int_equal(pt_count(g, "Slice"), 2);
    Node *v = pt_find(g, "SliceView");
    assert_int_equal(attr_i(v, "axis"), 1);
    assert_int_equal(attr_i(v, "start"), 2);
    assert_int_equal(attr_i(v, "end"), 5);
    assert_int_equal(slice_view_offset(v), 2 * 4 * 4);
}

/* Split along the leading non-1 axis: views; a view of a view adds the
 * offsets in planning; a view that is a graph output is copied */
static void test_split_views_and_plan(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x10");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "e", DT_FLOAT, NULL);
    pb_output(m, "d", DT_FLOAT, NULL);
    wi64(m, "sizes", 2, (int64_t[]){4, 6});
    wi64(m, "st", 1, (int64_t[]){1});
    wi64(m, "en", 1, (int64_t[]){3});
    wi64(m, "st3", 1, (int64_t[]){3});
    wi64(m, "en6", 1, (int64_t[]){6});
    wi64(m, "ax", 1, (int64_t[]){1});
    pb_node(m, "Relu", "relu", "x", "r");
    pb_attr_i(pb_node(m, "Split", "split", "r,sizes", "a,b"), "axis", 1);
    pb_node(m, "Exp", "exp", "a", "e");
    pb_node(m, "Slice", "inner", "b,st,en,ax", "c");     /* elements 5..6 of r */
    pb_node(m, "Neg", "neg", "c", "y");
    pb_node(m, "Slice", "tail", "b,st3,en6,ax", "d");    /* elements 7..9 of r: a graph output */
    Graph *g = pt_optimize_checked(m, 0, NOOP);
    assert_int_equal(pt_count(g, "Split") + pt_count(g, "Slice"), 0);
    assert_int_equal(pt_count(g, "SliceView"), 4);
    g = pt_graph(m);                                  /* not evaluated: planned like generated code */
    EXPECT_OK(run_pass(g, "noop"));
    Lowering L = {0};
    int64_t volatile arena = -1;
    EXPECT_OK(lower_graph(g, &L));
    EXPECT_OK(arena = plan_graph(g, &L));
    assert_true(arena > 0);
    Tensor *c = graph_find(g, "c"), *b = graph_find(g, "b"), *d = graph_find(g, "d"), *r = graph_find(g, "r");
    assert_int_equal(b->storage, ST_ALIAS);
    assert_int_equal(b->alias_offset, 4 * 4);
    assert_int_equal(c->storage, ST_ALIAS);
    assert_int_equal(c->alias_offset, (4 + 1) * 4);
    assert_ptr_equal(c->alias_of, r);
    assert_int_equal(d->storage, ST_OUTPUT);
    int copies = 0;
    for (int i = 0; i < L.n; i++)
        if (!strcmp(L.calls[i].kernel->name, "o2c_strided") && L.calls[i].y[0] == d) {
            copies++;
            assert_ptr_equal(L.calls[i].x[0], b);
            assert_int_equal(L.calls[i].k[O2C_STRIDED_XBASE], 3);   /* from element 3 of b */
        }
    assert_int_equal(copies, 1);
    /* the emitted pointer adds the byte offset */
    assert_string_equal(storage_ptr(c, "c%d", "(arena + %lld)"),
                        xfmt("((unsigned char *)(arena + %lld) + 20)", (long long)r->offset));
}

/* ---- transpose ------------------------------------------------------------ */

static void test_transpose_cancel_and_compose(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x3x4");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "z", DT_FLOAT, NULL);
    pb_attr_ints(pb_node(m, "Transpose", "t1", "x", "a"), "perm", 3, (int64_t[]){0, 2, 1});
    pb_attr_ints(pb_node(m, "Transpose", "t2", "a", "b"), "perm", 3, (int64_t[]){0, 2, 1});
    pb_node(m, "Relu", "relu", "b", "y");
    pb_attr_ints(pb_node(m, "Transpose", "t3", "x", "c"), "perm", 3, (int64_t[]){1, 0, 2});
    pb_attr_ints(pb_node(m, "Transpose", "t4", "c", "d"), "perm", 3, (int64_t[]){0, 2, 1});
    pb_node(m, "Neg", "neg", "d", "z");
    Graph *g = pt_optimize_checked(m, 0, TRANSPOSE);
    assert_int_equal(pt_count(g, "Transpose"), 1);   /* t1, t2 cancel; t3, t4 compose */
    int64_t p[3];
    const int64_t *a;
    assert_int_equal(attr_ints(pt_find(g, "Transpose"), "perm", &a), 3);
    memcpy(p, a, sizeof p);
    assert_true(p[0] == 1 && p[1] == 2 && p[2] == 0);
}

/* a transpose pair whose end is a graph output */
static void test_transpose_cancel_to_output(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x3");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Exp", "exp", "x", "e");
    pb_node(m, "Transpose", "t1", "e", "a");
    pb_node(m, "Transpose", "t2", "a", "y");
    Graph *g = pt_optimize_checked(m, 0, TRANSPOSE);
    assert_int_equal(pt_count(g, "Transpose"), 0);
    assert_string_equal(graph_find(g, "y")->producer->op_type, "Exp");
}

static void test_transpose_size1_is_reshape(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x3x1x4");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "z", DT_FLOAT, NULL);
    pb_attr_ints(pb_node(m, "Transpose", "t", "x", "y"), "perm", 4, (int64_t[]){2, 1, 0, 3});
    pb_attr_ints(pb_node(m, "Transpose", "real", "x", "z"), "perm", 4, (int64_t[]){0, 3, 2, 1});
    Graph *g = pt_optimize_checked(m, 0, TRANSPOSE);
    assert_int_equal(pt_count(g, "Reshape"), 1);
    assert_int_equal(pt_count(g, "Transpose"), 1);
}

static void test_transpose_into_gemm(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "a", DT_FLOAT, "4x3");
    pb_input(m, "w", DT_FLOAT, "5x4");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "z", DT_FLOAT, NULL);
    pt_init_pattern(m, "B", 2, (int64_t[]){4, 5}, 1);
    pb_node(m, "Transpose", "ta", "a", "at");          /* 3x4 */
    pb_node(m, "Gemm", "gemm", "at,B", "y");           /* 3x5 */
    pb_node(m, "Transpose", "tw", "w", "wt");          /* 4x5 */
    pb_node(m, "MatMul", "mm", "at,wt", "z");          /* 3x5 */
    Graph *g = pt_optimize_checked(m, 0, TRANSPOSE);
    assert_int_equal(pt_count(g, "Transpose"), 0);
    assert_int_equal(pt_count(g, "MatMul"), 0);
    assert_int_equal(pt_count(g, "Gemm"), 2);
    Node *mm = graph_find(g, "z")->producer;
    assert_int_equal(attr_i(mm, "transA"), 1);
    assert_int_equal(attr_i(mm, "transB"), 1);
}

/* NHWC <-> NCHW pairs around elementwise ops, as TensorFlow converters write them */
static void test_transpose_pushed_through_elementwise(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x3x4x5");
    pb_output(m, "y", DT_FLOAT, NULL);
    pt_init_pattern(m, "W", 4, (int64_t[]){3, 3, 1, 1}, 2);
    pt_init_pattern(m, "bias", 1, (int64_t[]){3}, 3);
    pt_init_pattern(m, "scale", 4, (int64_t[]){1, 4, 5, 3}, 4);
    pb_node(m, "Conv", "conv", "x,W", "c");
    pb_attr_ints(pb_node(m, "Transpose", "to_nhwc", "c", "h"), "perm", 4, (int64_t[]){0, 2, 3, 1});
    pb_node(m, "Relu", "relu", "h", "r");
    pb_node(m, "Add", "add", "r,bias", "s");            /* a per-channel bias in NHWC */
    pb_node(m, "Mul", "mul", "s,scale", "u");           /* a full-shape constant */
    pb_attr_ints(pb_node(m, "Transpose", "to_nchw", "u", "v"), "perm", 4, (int64_t[]){0, 3, 1, 2});
    pb_node(m, "Conv", "conv2", "v,W", "y");
    Graph *g = pt_optimize_checked(m, 0, TRANSPOSE);
    assert_int_equal(pt_count(g, "Transpose"), 0);
    assert_int_equal(pt_count(g, "Relu") + pt_count(g, "Add") + pt_count(g, "Mul"), 3);
}

/* both operands transposed alike: one transpose after the op, then cancelled */
static void test_transpose_pushed_two_operands(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x3x4");
    pb_input(m, "w", DT_FLOAT, "2x3x4");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_attr_ints(pb_node(m, "Transpose", "ta", "x", "a"), "perm", 3, (int64_t[]){2, 0, 1});
    pb_attr_ints(pb_node(m, "Transpose", "tb", "w", "b"), "perm", 3, (int64_t[]){2, 0, 1});
    pb_node(m, "Sub", "sub", "a,b", "s");
    pb_node(m, "Abs", "abs", "s", "t");
    pb_attr_ints(pb_node(m, "Transpose", "back", "t", "y"), "perm", 3, (int64_t[]){1, 2, 0});
    Graph *g = pt_optimize_checked(m, 0, TRANSPOSE);
    assert_int_equal(pt_count(g, "Transpose"), 0);
    assert_string_equal(graph_find(g, "y")->producer->op_type, "Abs");
}

/* a transpose whose elementwise reader has other readers is not moved */
static void test_transpose_not_pushed(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x3");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "z", DT_FLOAT, NULL);
    pb_node(m, "Transpose", "t", "x", "a");
    pb_node(m, "Relu", "relu", "a", "r");
    pb_node(m, "Neg", "neg", "r", "y");
    pb_node(m, "Exp", "exp", "r", "z");
    Graph *g = pt_optimize_checked(m, 0, TRANSPOSE);
    assert_int_equal(pt_count(g, "Transpose"), 1);
    assert_string_equal(pt_find(g, "Transpose")->out[0]->name, "a");
}

/* the whole optimizer at -O1 and -O2 on a chain with all of it */
static void test_levels(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x8");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "z", DT_FLOAT, NULL);
    wi64(m, "sizes", 2, (int64_t[]){3, 5});
    pb_node(m, "Identity", "id", "x", "i");
    pb_node(m, "Transpose", "t1", "i", "t");
    pb_node(m, "Transpose", "t2", "t", "u");
    pb_attr_i(pb_node(m, "Split", "split", "u,sizes", "a,b"), "axis", 1);
    pb_node(m, "Sigmoid", "sig", "a", "y");
    pb_node(m, "Tanh", "tanh", "b", "z");
    for (int level = 1; level <= 2; level++) {
        Graph *g = pt_optimize_checked(m, level, NULL);
        assert_int_equal(pt_count(g, "Identity") + pt_count(g, "Transpose") + pt_count(g, "Split"), 0);
        assert_int_equal(pt_count(g, "SliceView"), 2);
    }
}

/* Concat along the leading non-1 axis: its inputs' producers write
 * straight into their slices of the output (no copy call); an input that is
 * a graph input, or read twice by the Concat, is still copied */
static void test_concat_in_place(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x2x3");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "z", DT_FLOAT, NULL);
    pb_node(m, "Relu", "relu", "x", "a");
    pb_node(m, "Exp", "exp", "x", "b");
    pb_attr_i(pb_node(m, "Concat", "cat", "a,b,x,b", "c"), "axis", 1);      /* 1 x 8 x 3 */
    pb_node(m, "Neg", "neg", "c", "y");
    pb_node(m, "Sigmoid", "sig", "a", "s");
    pb_attr_i(pb_node(m, "Concat", "cat2", "s,a", "z"), "axis", -1);       /* a graph output: 1 x 2 x 6, not contiguous */
    Graph *g = pt_graph(m);
    Lowering L = {0};
    EXPECT_OK(lower_graph(g, &L));
    int before = L.n;
    EXPECT_OK(plan_graph(g, &L));
    Tensor *a = graph_find(g, "a"), *b = graph_find(g, "b"), *c = graph_find(g, "c"), *s = graph_find(g, "s");
    assert_int_equal(a->storage, ST_ALIAS);
    assert_ptr_equal(a->alias_of, c);
    assert_int_equal(a->alias_offset, 0);
    assert_int_equal(b->storage, ST_ARENA);   /* read twice by the Concat */
    assert_int_equal(s->storage, ST_ARENA);   /* the second Concat is along the last axis of 1 x 2 x 6 */
    assert_int_equal(L.n, before - 1);         /* a's copy is gone */
    int copies_into_c = 0;
    for (int i = 0; i < L.n; i++)
        if (L.calls[i].y[0] == c) copies_into_c++;
    assert_int_equal(copies_into_c, 3);        /* b, x, b */
    assert_string_equal(storage_ptr(a, "c%d", "(arena + %lld)"), xfmt("(arena + %lld)", (long long)c->offset));
}

/* nested Concats: the inner one's output is itself a slice of the outer
 * one's, which is a graph output (the caller's buffer); offsets add up */
static void test_concat_in_place_nested(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1x4");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Relu", "relu", "x", "a");
    pb_node(m, "Exp", "exp", "x", "b");
    pb_node(m, "Neg", "neg", "x", "d");
    pb_attr_i(pb_node(m, "Concat", "inner", "a,b", "ab"), "axis", 1);
    pb_attr_i(pb_node(m, "Concat", "outer", "d,ab", "y"), "axis", 1);
    Graph *g = pt_graph(m);
    Lowering L = {0};
    EXPECT_OK(lower_graph(g, &L));
    EXPECT_OK(plan_graph(g, &L));
    Tensor *a = graph_find(g, "a"), *b = graph_find(g, "b"), *d = graph_find(g, "d"), *ab = graph_find(g, "ab");
    Tensor *y = graph_find(g, "y");
    assert_int_equal(y->storage, ST_OUTPUT);
    assert_ptr_equal(d->alias_of, y);
    assert_int_equal(d->alias_offset, 0);
    assert_ptr_equal(ab->alias_of, y);
    assert_int_equal(ab->alias_offset, 16);
    assert_ptr_equal(a->alias_of, y);
    assert_int_equal(a->alias_offset, 16);
    assert_ptr_equal(b->alias_of, y);
    assert_int_equal(b->alias_offset, 32);
    assert_int_equal(L.n, 3);                  /* Relu, Exp, Neg: no copies */
    assert_string_equal(storage_ptr(b, "c%d", "(arena + %lld)"), "((unsigned char *)outputs[0] + 32)");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, pt_setup, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_noop_every_kind),
        T(test_noop_kept),
        T(test_noop_graph_outputs),
        T(test_slice_becomes_view),
        T(test_split_views_and_plan),
        T(test_concat_in_place),
        T(test_concat_in_place_nested),
        T(test_transpose_cancel_and_compose),
        T(test_transpose_cancel_to_output),
        T(test_transpose_size1_is_reshape),
        T(test_transpose_into_gemm),
        T(test_transpose_pushed_through_elementwise),
        T(test_transpose_pushed_two_operands),
        T(test_transpose_not_pushed),
        T(test_levels),
    };
    return cmocka_run_group_tests_name("cleanup", tests, NULL, NULL);
}
