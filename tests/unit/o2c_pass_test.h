/* Helpers for the unit tests of optimization passes (compiler/passes/):
 * build a small model with the pb_* builders, turn it into an inferred
 * graph, run one pass or the whole optimizer, count nodes, and check that
 * the optimized graph computes what the original does. The oracle is the
 * compiler itself: graph_evaluate() runs every node with the runtime
 * kernels, on the same pseudo-random inputs, before and after. */
#ifndef O2C_PASS_TEST_H
#define O2C_PASS_TEST_H

#include <math.h>

#include "o2c_test.h"

/* A loaded and inferred graph (no flags). */
static inline Graph *pt_graph(Onnx__ModelProto *m)
{
    static Options none;
    Graph *g = pb_load(m);
    EXPECT_OK(infer_graph(g, &none));
    return g;
}

/* Nodes of op type `op` (any domain); NULL counts every node. */
static inline int pt_count(Graph *g, const char *op)
{
    int k = 0;
    for (int i = 0; i < g->nnodes; i++)
        if (!op || !strcmp(g->nodes[i]->op_type, op)) k++;
    return k;
}

static inline Node *pt_find(Graph *g, const char *op)
{
    for (int i = 0; i < g->nnodes; i++)
        if (!strcmp(g->nodes[i]->op_type, op)) return g->nodes[i];
    fail_msg("no %s node in the graph", op);
    return NULL;
}

/* cmocka setup of the pass tests: nothing to prepare (o2c_teardown frees) */
static inline int pt_setup(void **state)
{
    (void)state;
    return 0;
}

/* A float initializer with a fixed pattern of values in [-1.25, 1.25]
 * (seed shifts it). */
static inline void pt_init_pattern(Onnx__ModelProto *m, const char *name, int rank, const int64_t *dims,
                                   unsigned seed)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    float *d = xalloc(sizeof(float) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) d[i] = (float)((i * 7 + seed * 13) % 11) / 4.0f - 1.25f;
    pb_init_raw(m, name, DT_FLOAT, rank, dims, d, sizeof(float) * (size_t)n);
}

/* A float initializer with every element v. */
static inline void pt_init_fill(Onnx__ModelProto *m, const char *name, int rank, const int64_t *dims, float v)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    float *d = xalloc(sizeof(float) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) d[i] = v;
    pb_init_raw(m, name, DT_FLOAT, rank, dims, d, sizeof(float) * (size_t)n);
}

/* Fills every graph input with values from a fixed pseudo-random sequence
 * (floats in [-2, 2), integers in [-3, 3], bools 0/1). */
static inline void pt_fill_inputs(Graph *g, unsigned seed)
{
    uint32_t s = seed * 2654435761u + 12345u;
    for (int i = 0; i < g->ninputs; i++) {
        Tensor *t = g->inputs[i];
        tensor_alloc_data(t);
        for (int64_t k = 0; k < tensor_numel(t); k++) {
            s = s * 1664525u + 1013904223u;
            double u = (double)(s >> 8) / (double)(1u << 24);      /* [0, 1) */
            double v = dtype_is_float(t->dtype) || dtype_is_half(t->dtype) ? 4 * u - 2
                     : t->dtype == DT_BOOL ? (double)(u < 0.5) : floor(7 * u) - 3;
            elem_set(t->dtype, t->data, k, v);
        }
    }
}

/* Runs the optimizer at `level` (or only the passes named in `only`, a
 * NULL-terminated list, when it is not NULL) on a graph of model m, and
 * checks that its outputs equal those of the unoptimized graph within
 * |got - want| <= 1e-5 + 1e-4 |want|. Returns the optimized graph. */
static inline Graph *pt_optimize_checked(Onnx__ModelProto *m, int level, const char *const *only)
{
    Graph *ref = pt_graph(m);
    pt_fill_inputs(ref, 7);
    EXPECT_OK(graph_evaluate(ref));
    Graph *volatile g = pt_graph(m);
    if (only) {
        for (const char *const *volatile p = only; *p; p++) EXPECT_OK(run_pass(g, *p));
    } else {
        static Options o;
        o.opt_level = level;
        EXPECT_OK(run_passes(g, &o));
    }
    /* evaluate a copy of the inputs' values: the same seed gives the same data */
    pt_fill_inputs(g, 7);
    EXPECT_OK(graph_evaluate(g));
    for (int k = 0; k < g->noutputs; k++) {
        Tensor *a = g->outputs[k], *b = ref->outputs[k];
        assert_non_null(a->data);
        assert_int_equal(a->dtype, b->dtype);
        assert_int_equal(tensor_numel(a), tensor_numel(b));
        for (int64_t i = 0; i < tensor_numel(a); i++) {
            double x = elem_f64(a->dtype, a->data, i), y = elem_f64(b->dtype, b->data, i);
            if (isnan(x) && isnan(y)) continue;
            if (!(fabs(x - y) <= 1e-5 + 1e-4 * fabs(y)))
                fail_msg("output '%s'[%lld]: optimized %.9g, original %.9g", a->name, (long long)i, x, y);
        }
    }
    return g;
}

#endif
