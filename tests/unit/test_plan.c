/* Unit tests of memory planning (compiler/plan.c): arena offsets by
 * liveness over a hand-built schedule of kernel calls. */
#include "o2c_test.h"

static Tensor *tensor(const char *name, int64_t n)
{
    Tensor *t = xalloc(sizeof *t);
    t->name = S(name);
    t->dtype = DT_FLOAT;
    t->input_index = t->output_index = -1;
    tensor_set_shape(t, 1, &n);
    return t;
}

/* one Relu call y = f(x) (and a second input when x2 is given) */
static KCall *call(Lowering *L, Tensor *x, Tensor *x2, Tensor *y)
{
    KCall *volatile c = NULL;
    EXPECT_OK(c = lower_call(L, x2 ? "o2c_Add_f32" : "o2c_Relu_f32", tensor_numel(y)));
    c->x[0] = x;
    c->x[1] = x2;
    c->y[0] = y;
    return c;
}

static int overlap(const Tensor *a, const Tensor *b)
{
    int64_t ae = a->offset + (int64_t)tensor_bytes(a), be = b->offset + (int64_t)tensor_bytes(b);
    return a->offset < be && b->offset < ae;
}

static int64_t plan(Lowering *L)
{
    static Graph g;
    int64_t volatile size = -1;
    EXPECT_OK(size = plan_graph(&g, L));
    return size;
}

/* in -> a -> b -> c -> out: a and b are alive together (call 1), c can take
 * a's place (a is dead after call 1). */
static void test_chain_reuses_dead_space(void **state)
{
    (void)state;
    Tensor *in = tensor("in", 10), *a = tensor("a", 10), *b = tensor("b", 10), *c = tensor("c", 10),
           *out = tensor("out", 10);
    in->is_input = 1; in->input_index = 0;
    out->is_output = 1; out->output_index = 0;
    Lowering L = {0};
    call(&L, in, NULL, a);   /* 0 */
    call(&L, a, NULL, b);    /* 1 */
    call(&L, b, NULL, c);    /* 2 */
    call(&L, c, NULL, out);  /* 3 */
    int64_t size = plan(&L);
    assert_int_equal(in->storage, ST_INPUT);
    assert_int_equal(out->storage, ST_OUTPUT);
    assert_int_equal(a->storage, ST_ARENA);
    assert_int_equal(b->storage, ST_ARENA);
    assert_int_equal(c->storage, ST_ARENA);
    assert_int_equal(a->first, 0); assert_int_equal(a->last, 1);
    assert_int_equal(b->first, 1); assert_int_equal(b->last, 2);
    assert_int_equal(c->first, 2); assert_int_equal(c->last, 3);
    assert_false(overlap(a, b));
    assert_false(overlap(b, c));
    assert_int_equal(c->offset, a->offset);      /* a's space reused */
    /* two 40-byte blocks; a tensor under 64 bytes has its element's
     * alignment, and the arena is not rounded up: 40 + 40 */
    assert_int_equal(size, 80);
    for (Tensor *t = a; t; t = t == a ? b : t == b ? c : NULL) {
        assert_true(t->offset >= 0);
        assert_int_equal(t->offset % 4, 0);
        assert_true(t->offset + (int64_t)tensor_bytes(t) <= size);
    }
}

/* A tensor read late stays alive: x is used by calls 0..3, so nothing
 * made in between may overlap it; constants and views get no arena space. */
static void test_long_lived_and_views(void **state)
{
    (void)state;
    /* 64-byte tensors: the arena's alignment adds no padding */
    Tensor *in = tensor("in", 16), *x = tensor("x", 16), *t1 = tensor("t1", 16), *t2 = tensor("t2", 16),
           *t3 = tensor("t3", 16), *big = tensor("big", 100), *out = tensor("out", 16);
    Tensor *w = tensor("w", 16);
    tensor_alloc_data(w);                              /* a constant */
    in->is_input = 1; in->input_index = 0;
    out->is_output = 1; out->output_index = 0;
    /* v: a view of t3 (produced by a Reshape node) */
    Node *rs = xalloc(sizeof *rs);
    rs->name = S("rs");
    rs->op_type = S("Reshape");
    rs->op = op_find("", "Reshape");
    assert_non_null(rs->op);
    assert_true(rs->op->lower == lower_view);
    rs->in = xalloc(sizeof(Tensor *) * 2);
    rs->in[0] = t3;
    rs->nin = 1;
    Tensor *v = tensor("v", 16);
    v->producer = rs;

    Lowering L = {0};
    call(&L, in, w, x);      /* 0: x = in + w */
    call(&L, x, NULL, t1);   /* 1 */
    call(&L, t1, NULL, t2);  /* 2: t1 dies */
    call(&L, t2, NULL, big); /* 3: t2 dies */
    call(&L, big, x, t3);    /* 4: x and big die (shape mismatch is irrelevant here) */
    call(&L, v, NULL, out);  /* 5: reads t3 through the view */
    int64_t size = plan(&L);

    assert_int_equal(w->storage, ST_CONST);
    assert_int_equal(v->storage, ST_ALIAS);
    assert_ptr_equal(v->alias_of, t3);
    assert_int_equal(t3->last, 5);                     /* the view extends t3's life */
    assert_int_equal(x->first, 0); assert_int_equal(x->last, 4);
    Tensor *arena[] = {x, t1, t2, t3, big};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(arena[i]->storage, ST_ARENA);
        assert_true(arena[i]->offset + (int64_t)tensor_bytes(arena[i]) <= size);
        for (int j = 0; j < i; j++) {
            Tensor *p = arena[i], *q = arena[j];
            int live_together = !(p->last < q->first || q->last < p->first);
            if (live_together && overlap(p, q))
                fail_msg("'%s' [%d,%d] @%lld and '%s' [%d,%d] @%lld overlap while both are alive", p->name, p->first,
                         p->last, (long long)p->offset, q->name, q->first, q->last, (long long)q->offset);
        }
    }
    /* t1 is dead when t3 is made: some space is shared, the arena is
     * smaller than the sum of all arena tensors */
    int64_t sum = 0;
    for (int i = 0; i < 5; i++) sum += (int64_t)tensor_bytes(arena[i]);
    assert_true(size < sum);
    /* at call 4, x, big and t3 are alive: at least their sizes */
    assert_true(size >= 64 + 400 + 64);
}

/* Tensors that are both alive are placed apart even when listed in an
 * order that tempts reuse (largest first). */
static void test_simultaneous_tensors_apart(void **state)
{
    (void)state;
    Tensor *in = tensor("in", 4), *p = tensor("p", 4), *q = tensor("q", 64), *r = tensor("r", 4), *out = tensor("out", 4);
    in->is_input = 1; in->input_index = 0;
    out->is_output = 1; out->output_index = 0;
    Lowering L = {0};
    call(&L, in, NULL, p);   /* 0 */
    call(&L, in, NULL, q);   /* 1 */
    call(&L, p, q, r);       /* 2: p, q, r alive together */
    call(&L, r, NULL, out);  /* 3 */
    int64_t size = plan(&L);
    assert_false(overlap(p, q));
    assert_false(overlap(p, r));
    assert_false(overlap(q, r));
    assert_int_equal(size, 256 + 16 + 16);   /* q 64-byte aligned, p and r 4-byte aligned */
    assert_int_equal(q->offset % 64, 0);
}

/* in -> a -> (elementwise, in place) b -> c -> out: b takes a's bytes, c
 * cannot (a's buffer lives on as b), the bound and the profile count the
 * shared buffer once */
static void test_in_place_chain(void **state)
{
    (void)state;
    Tensor *in = tensor("in", 64), *a = tensor("a", 64), *b = tensor("b", 64), *c = tensor("c", 64),
           *out = tensor("out", 64);
    in->is_input = 1; in->input_index = 0;
    out->is_output = 1; out->output_index = 0;
    Lowering L = {0};
    call(&L, in, NULL, a);                /* 0 */
    call(&L, a, NULL, b)->inplace = 1u;   /* 1: b over a */
    call(&L, b, NULL, c);                 /* 2: not declared in place */
    call(&L, c, NULL, out);               /* 3 */
    int64_t size = plan(&L);
    assert_ptr_equal(b->share, a);
    assert_int_equal(b->offset, a->offset);
    assert_false(overlap(b, c));
    assert_int_equal(size, 512);          /* two buffers of 256 bytes, not three */
    assert_int_equal(L.live_bound, 512);
    assert_int_equal(L.live[1], 256);     /* a and b: one buffer */
    assert_int_equal(L.naive_arena, 512); /* the shared buffer is one */
}

/* no in place when the input is read later, or by another input of the call
 * at other indices (a smaller broadcast operand), or has another size */
static void test_in_place_only_where_legal(void **state)
{
    (void)state;
    Tensor *in = tensor("in", 16), *a = tensor("a", 16), *b = tensor("b", 16), *d = tensor("d", 16),
           *s = tensor("s", 4), *e = tensor("e", 16), *f = tensor("f", 8), *out = tensor("out", 16);
    in->is_input = 1; in->input_index = 0;
    out->is_output = 1; out->output_index = 0;
    Lowering L = {0};
    call(&L, in, NULL, a);                /* 0 */
    call(&L, a, NULL, b)->inplace = 1u;   /* 1: a is read again at 2 */
    call(&L, a, b, d)->inplace = 3u;      /* 2: d may take a's or b's bytes (both die here) */
    call(&L, in, NULL, s);                /* 3 */
    call(&L, d, s, e)->inplace = 3u;      /* 4: e over d (s is smaller: never its bytes) */
    call(&L, e, NULL, f)->inplace = 1u;   /* 5: f is smaller than e: not over it */
    call(&L, f, e, out);                  /* 6 */
    plan(&L);
    assert_null(b->share);
    assert_non_null(d->share);
    assert_ptr_equal(e->share, d->share);
    assert_null(f->share);
    assert_false(overlap(e, f));
    assert_false(overlap(a, b));
}

static void test_empty_schedule(void **state)
{
    (void)state;
    Lowering L = {0};
    assert_int_equal(plan(&L), 0);
}

/* the second check of every plan (plan_check): a plan edited to write a
 * tensor over one still to be read, or in place where the kernel does not
 * allow it, is refused as an internal error */
static void test_check_catches_bad_plans(void **state)
{
    (void)state;
    Tensor *in = tensor("in", 16), *a = tensor("a", 16), *b = tensor("b", 16), *c = tensor("c", 16),
           *out = tensor("out", 16);
    in->is_input = 1; in->input_index = 0;
    out->is_output = 1; out->output_index = 0;
    Lowering L = {0};
    call(&L, in, NULL, a);   /* 0 */
    call(&L, a, NULL, b);    /* 1 */
    call(&L, a, b, c);       /* 2: a and b read here */
    call(&L, c, NULL, out);  /* 3 */
    plan(&L);
    EXPECT_OK(plan_check(&L));
    int64_t saved = b->offset;
    b->offset = a->offset;                    /* b written at 1 over a, read at 2 */
    EXPECT_FAIL(plan_check(&L));
    assert_msg_has("write 'b' over bytes of 'a'");
    b->offset = saved;
    c->offset = b->offset;                    /* c over b where b dies, but Add does not declare in place */
    EXPECT_FAIL(plan_check(&L));
    assert_msg_has("write 'c' over bytes of 'b'");
    L.calls[2].inplace = 2u;                  /* now it does: legal */
    EXPECT_OK(plan_check(&L));
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_chain_reuses_dead_space),
        T(test_long_lived_and_views),
        T(test_simultaneous_tensors_apart),
        T(test_in_place_chain),
        T(test_in_place_only_where_legal),
        T(test_check_catches_bad_plans),
        T(test_empty_schedule),
    };
    return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
