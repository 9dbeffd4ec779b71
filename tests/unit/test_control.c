/* Unit tests of control flow in the schedule (compiler/ops/control.c,
 * lower.c's lower_ctl, plan.c's loop liveness): markers linked to their
 * partners, and what lives across a loop kept out of the body's space. */
#include "o2c_test.h"

static Tensor *tensor(const char *name, int64_t n, int dtype)
{
    Tensor *t = xalloc(sizeof *t);
    t->name = S(name);
    t->dtype = dtype;
    t->input_index = t->output_index = -1;
    tensor_set_shape(t, 1, &n);
    return t;
}

static KCall *relu(Lowering *L, Tensor *x, Tensor *y)
{
    KCall *volatile c = NULL;
    EXPECT_OK(c = lower_call(L, "o2c_Relu_f32", tensor_numel(y)));
    c->x[0] = x;
    c->y[0] = y;
    return c;
}

static KCall *ctl(Lowering *L, int kind, Tensor *x)
{
    KCall *volatile c = NULL;
    EXPECT_OK(c = lower_ctl(L, kind, x));
    return c;
}

static int overlap(const Tensor *a, const Tensor *b)
{
    int64_t ae = a->offset + (int64_t)tensor_bytes(a), be = b->offset + (int64_t)tensor_bytes(b);
    return a->offset < be && b->offset < ae;
}

/* if { loop { break; if {} else {} } } else {}: each marker's jump */
static void test_markers_linked(void **state)
{
    (void)state;
    Tensor *f = tensor("f", 1, DT_BOOL), *a = tensor("a", 4, DT_FLOAT), *b = tensor("b", 4, DT_FLOAT);
    Lowering L = {0};
    ctl(&L, CTL_IF, f);          /* 0 */
    ctl(&L, CTL_LOOP, NULL);     /* 1 */
    ctl(&L, CTL_BREAK, f);       /* 2 */
    ctl(&L, CTL_IF, f);          /* 3 */
    relu(&L, a, b);              /* 4 */
    ctl(&L, CTL_ELSE, NULL);     /* 5 */
    relu(&L, b, a);              /* 6 */
    ctl(&L, CTL_END, NULL);      /* 7: the inner if */
    ctl(&L, CTL_END, NULL);      /* 8: the loop */
    ctl(&L, CTL_ELSE, NULL);     /* 9 */
    ctl(&L, CTL_END, NULL);      /* 10: the outer if */
    assert_int_equal(L.n, 11);
    assert_int_equal(L.calls[0].jump, 9);    /* if -> its else */
    assert_int_equal(L.calls[9].jump, 10);   /* else -> its end */
    assert_int_equal(L.calls[10].jump, 0);   /* end -> its opener */
    assert_int_equal(L.calls[1].jump, 8);    /* loop -> its end */
    assert_int_equal(L.calls[8].jump, 1);
    assert_int_equal(L.calls[2].jump, 8);    /* break -> the loop's end */
    assert_int_equal(L.calls[3].jump, 5);
    assert_int_equal(L.calls[5].jump, 7);
    assert_int_equal(L.calls[7].jump, 3);
    for (int i = 0; i < L.n; i++) {
        if (L.calls[i].ctl) assert_int_equal(L.calls[i].count, 0);   /* emitters skip them as kernels */
        else assert_true(L.calls[i].count > 0);
    }
    o2c_teardown(NULL);
    /* an END with nothing open, an ELSE of a loop */
    Lowering M = {0};
    EXPECT_FAIL(lower_ctl(&M, CTL_END, NULL));
    Lowering N = {0};
    ctl(&N, CTL_LOOP, NULL);
    EXPECT_FAIL(lower_ctl(&N, CTL_ELSE, NULL));
}

/* x (before) is read in the loop; s is a state written before and in the
 * loop; t is a body temporary; y a scan output written in the loop and read
 * after it. x, s and y must live through the whole loop, so t (used inside
 * only) may not share their bytes, though by call positions alone it would. */
static void test_loop_liveness(void **state)
{
    (void)state;
    Tensor *in = tensor("in", 16, DT_FLOAT), *x = tensor("x", 16, DT_FLOAT), *s = tensor("s", 16, DT_FLOAT),
           *t = tensor("t", 16, DT_FLOAT), *y = tensor("y", 16, DT_FLOAT), *z = tensor("z", 16, DT_FLOAT),
           *go = tensor("go", 1, DT_BOOL), *out = tensor("out", 16, DT_FLOAT);
    in->is_input = 1; in->input_index = 0;
    out->is_output = 1; out->output_index = 0;
    Lowering L = {0};
    relu(&L, in, x);            /* 0 */
    relu(&L, in, s);            /* 1 */
    ctl(&L, CTL_LOOP, NULL);    /* 2 */
    KCall *volatile c = NULL;
    EXPECT_OK(c = lower_call(&L, "o2c_loop_test", 1));
    c->x[0] = s;
    c->y[0] = go;               /* 3 */
    ctl(&L, CTL_BREAK, go);     /* 4 */
    relu(&L, x, t);             /* 5: x's last read by position */
    relu(&L, t, y);             /* 6: y's first write */
    relu(&L, t, s);             /* 7 */
    ctl(&L, CTL_END, NULL);     /* 8 */
    relu(&L, y, z);             /* 9 */
    relu(&L, z, out);           /* 10 */
    static Graph g;
    EXPECT_OK(plan_graph(&g, &L));
    assert_int_equal(x->first, 0); assert_int_equal(x->last, 8);   /* read again next iteration */
    assert_int_equal(s->first, 1); assert_int_equal(s->last, 8);
    assert_int_equal(y->first, 2); assert_int_equal(y->last, 9);   /* kept from one iteration to the next */
    assert_int_equal(t->first, 5); assert_int_equal(t->last, 7);   /* one iteration's: not extended */
    assert_int_equal(go->first, 3); assert_int_equal(go->last, 4);
    Tensor *all[] = {x, s, t, y, z, go};
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < i; j++) {
            Tensor *p = all[i], *q = all[j];
            if (p->last < q->first || q->last < p->first) continue;
            assert_false(overlap(p, q));
        }
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_markers_linked),
        T(test_loop_liveness),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
