/* Shared helpers of the onnx2c unit tests (cmocka).
 *
 *  - O2C_TRY / EXPECT_OK / EXPECT_FAIL: run a statement that may fail()
 *    under a fresh setjmp (diag_jmp), so that errors become test results.
 *  - pb_*: build ONNX protobuf messages (protobuf-c, memory from the
 *    compiler's pool) and pack them into bytes for load_model_buffer().
 *  - o2c_teardown: releases the pool after each test (ASan/LSan clean). */
#ifndef O2C_TEST_H
#define O2C_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <stdlib.h>

/* ir.h before cmocka.h: cmocka defines a fail() macro (used by fail_msg);
 * call the compiler's fail as (fail)("...") in tests. */
#include "ir.h"
#include "onnx.pb-c.h"

#include <cmocka.h>

/* ---- failures --------------------------------------------------------- */

/* failed_ = 1 when stmt called fail()/fail_plain() (message in diag_msg). */
#define O2C_TRY(failed_, stmt)                                             \
    do {                                                                   \
        jmp_buf o2c_jb_;                                                   \
        jmp_buf *volatile o2c_old_ = diag_jmp;                             \
        diag_jmp = &o2c_jb_;                                               \
        diag_msg[0] = 0;                                                   \
        if (setjmp(o2c_jb_) == 0) {                                        \
            stmt;                                                          \
            diag_jmp = o2c_old_;                                           \
            (failed_) = 0;                                                 \
        } else {                                                           \
            diag_jmp = o2c_old_;                                           \
            (failed_) = 1;                                                 \
        }                                                                  \
    } while (0)

#define EXPECT_OK(stmt)                                                          \
    do {                                                                         \
        int o2c_f_;                                                              \
        O2C_TRY(o2c_f_, stmt);                                                   \
        if (o2c_f_) fail_msg("unexpected error from `%s`: %s", #stmt, diag_msg); \
    } while (0)

#define EXPECT_FAIL(stmt)                                                    \
    do {                                                                     \
        int o2c_f_;                                                          \
        O2C_TRY(o2c_f_, stmt);                                               \
        if (!o2c_f_) fail_msg("`%s` should have failed but did not", #stmt); \
    } while (0)

/* The last failure message contains `word`. */
#define assert_msg_has(word)                                                            \
    do {                                                                                \
        if (!strstr(diag_msg, (word)))                                                  \
            fail_msg("message does not mention \"%s\": %s", (word), diag_msg);          \
    } while (0)

/* ir.c caches a name index keyed by the Graph's address; after
 * pool_release() a new Graph can get the same address and the stale index
 * would be used. Pointing the cache at a static graph (alternating two, so
 * the cache is always rebuilt) before releasing the pool avoids that. */
static inline void o2c_forget_name_index(void)
{
    static Graph dummy[2];
    static int k;
    (void)graph_find(&dummy[k++ & 1], "");
}

static inline int o2c_teardown(void **state)
{
    (void)state;
    o2c_forget_name_index();
    pool_release();
    diag_node = NULL;
    diag_file = "";
    diag_jmp = NULL;
    return 0;
}

/* ---- protobuf builders ------------------------------------------------ */

static inline char *S(const char *s) { return xstrdup(s); }

static inline void *pb_grow(void *arr, size_t n, size_t elem)
{
    void *a = xalloc((n + 1) * elem);
    if (n) memcpy(a, arr, n * elem);
    return a;
}
#define PB_PUSH(arr, n, v)                                 \
    do {                                                   \
        (arr) = pb_grow((arr), (n), sizeof *(arr));        \
        (arr)[(n)++] = (v);                                \
    } while (0)

static inline void pb_opset(Onnx__ModelProto *m, const char *domain, int64_t version)
{
    Onnx__OperatorSetIdProto *os = xalloc(sizeof *os);
    onnx__operator_set_id_proto__init(os);
    if (domain) os->domain = S(domain);
    os->has_version = 1;
    os->version = version;
    PB_PUSH(m->opset_import, m->n_opset_import, os);
}

/* A model with an empty graph; opset 0: no opset_import. */
static inline Onnx__ModelProto *pb_model(int64_t ir_version, int64_t opset)
{
    Onnx__ModelProto *m = xalloc(sizeof *m);
    onnx__model_proto__init(m);
    m->has_ir_version = 1;
    m->ir_version = ir_version;
    m->producer_name = S("unit-test");
    if (opset) pb_opset(m, "", opset);
    m->graph = xalloc(sizeof *m->graph);
    onnx__graph_proto__init(m->graph);
    m->graph->name = S("g");
    return m;
}

/* Type from "2x3" (dims), "Nx3" (a non-number is a symbolic dim), "?x3"
 * (unknown dim), "" (scalar) or NULL (no shape). */
static inline Onnx__TypeProto *pb_type(int dtype, const char *shape)
{
    Onnx__TypeProto *tp = xalloc(sizeof *tp);
    onnx__type_proto__init(tp);
    Onnx__TypeProto__Tensor *tt = xalloc(sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = dtype;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    if (!shape) return tp;
    tt->shape = xalloc(sizeof *tt->shape);
    onnx__tensor_shape_proto__init(tt->shape);
    char *s = S(shape);
    for (char *tok = *s ? s : NULL; tok;) {
        char *x = strchr(tok, 'x');
        if (x) *x = 0;
        Onnx__TensorShapeProto__Dimension *d = xalloc(sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        if (!strcmp(tok, "?")) {
            /* not set */
        } else if (*tok >= '0' && *tok <= '9') {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = strtoll(tok, NULL, 10);
        } else {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = S(tok);
        }
        PB_PUSH(tt->shape->dim, tt->shape->n_dim, d);
        tok = x ? x + 1 : NULL;
    }
    return tp;
}

static inline Onnx__ValueInfoProto *pb_vi(const char *name, int dtype, const char *shape)
{
    Onnx__ValueInfoProto *vi = xalloc(sizeof *vi);
    onnx__value_info_proto__init(vi);
    vi->name = S(name);
    vi->type = pb_type(dtype, shape);
    return vi;
}

static inline Onnx__ValueInfoProto *pb_input(Onnx__ModelProto *m, const char *name, int dtype, const char *shape)
{
    Onnx__ValueInfoProto *vi = pb_vi(name, dtype, shape);
    PB_PUSH(m->graph->input, m->graph->n_input, vi);
    return vi;
}

static inline Onnx__ValueInfoProto *pb_output(Onnx__ModelProto *m, const char *name, int dtype, const char *shape)
{
    Onnx__ValueInfoProto *vi = pb_vi(name, dtype, shape);
    PB_PUSH(m->graph->output, m->graph->n_output, vi);
    return vi;
}

/* A TensorProto with type and dims; the caller sets the data fields. */
static inline Onnx__TensorProto *pb_tensor(const char *name, int dtype, int rank, const int64_t *dims)
{
    Onnx__TensorProto *t = xalloc(sizeof *t);
    onnx__tensor_proto__init(t);
    if (name) t->name = S(name);
    t->has_data_type = 1;
    t->data_type = dtype;
    t->n_dims = (size_t)rank;
    t->dims = xalloc(sizeof(int64_t) * (size_t)(rank + 1));
    for (int i = 0; i < rank; i++) t->dims[i] = dims[i];
    return t;
}

static inline void pb_raw(Onnx__TensorProto *t, const void *data, size_t len)
{
    t->has_raw_data = 1;
    t->raw_data.len = len;
    t->raw_data.data = xalloc(len + 1);
    if (len) memcpy(t->raw_data.data, data, len);
}

static inline Onnx__TensorProto *pb_init(Onnx__ModelProto *m, Onnx__TensorProto *t)
{
    PB_PUSH(m->graph->initializer, m->graph->n_initializer, t);
    return t;
}

/* An initializer with raw data. */
static inline Onnx__TensorProto *pb_init_raw(Onnx__ModelProto *m, const char *name, int dtype, int rank,
                                             const int64_t *dims, const void *data, size_t len)
{
    Onnx__TensorProto *t = pb_tensor(name, dtype, rank, dims);
    pb_raw(t, data, len);
    return pb_init(m, t);
}

static inline void pb_names(const char *list, char ***arr, size_t *n)
{
    if (!list || !*list) return;
    char *s = S(list);
    for (char *tok = s; tok;) {
        char *c = strchr(tok, ',');
        if (c) *c = 0;
        PB_PUSH(*arr, *n, tok);
        tok = c ? c + 1 : NULL;
    }
}

/* A node; inputs and outputs are comma-separated names ("a,,c": the
 * second input omitted). */
static inline Onnx__NodeProto *pb_node(Onnx__ModelProto *m, const char *op, const char *name, const char *ins,
                                       const char *outs)
{
    Onnx__NodeProto *n = xalloc(sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = S(op);
    if (name) n->name = S(name);
    pb_names(ins, &n->input, &n->n_input);
    pb_names(outs, &n->output, &n->n_output);
    PB_PUSH(m->graph->node, m->graph->n_node, n);
    return n;
}

static inline Onnx__AttributeProto *pb_attr(Onnx__NodeProto *n, const char *name, int type)
{
    Onnx__AttributeProto *a = xalloc(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = S(name);
    if (type) { a->has_type = 1; a->type = (Onnx__AttributeProto__AttributeType)type; }
    PB_PUSH(n->attribute, n->n_attribute, a);
    return a;
}

static inline void pb_attr_i(Onnx__NodeProto *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = pb_attr(n, name, AT_INT);
    a->has_i = 1;
    a->i = v;
}

static inline void pb_attr_f(Onnx__NodeProto *n, const char *name, float v)
{
    Onnx__AttributeProto *a = pb_attr(n, name, AT_FLOAT);
    a->has_f = 1;
    a->f = v;
}

static inline void pb_attr_s(Onnx__NodeProto *n, const char *name, const char *v)
{
    Onnx__AttributeProto *a = pb_attr(n, name, AT_STRING);
    a->has_s = 1;
    a->s.len = strlen(v);
    a->s.data = (uint8_t *)S(v);
}

static inline void pb_attr_ints(Onnx__NodeProto *n, const char *name, int cnt, const int64_t *v)
{
    Onnx__AttributeProto *a = pb_attr(n, name, AT_INTS);
    a->n_ints = (size_t)cnt;
    a->ints = xalloc(sizeof(int64_t) * (size_t)(cnt + 1));
    memcpy(a->ints, v, sizeof(int64_t) * (size_t)cnt);
}

static inline void pb_attr_floats(Onnx__NodeProto *n, const char *name, int cnt, const float *v)
{
    Onnx__AttributeProto *a = pb_attr(n, name, AT_FLOATS);
    a->n_floats = (size_t)cnt;
    a->floats = xalloc(sizeof(float) * (size_t)(cnt + 1));
    memcpy(a->floats, v, sizeof(float) * (size_t)cnt);
}

static inline void pb_attr_t(Onnx__NodeProto *n, const char *name, Onnx__TensorProto *t)
{
    Onnx__AttributeProto *a = pb_attr(n, name, AT_TENSOR);
    a->t = t;
}

static inline uint8_t *pb_pack(const Onnx__ModelProto *m, size_t *len)
{
    size_t n = onnx__model_proto__get_packed_size(m);
    uint8_t *b = xalloc(n + 1);
    size_t w = onnx__model_proto__pack(m, b);
    assert_int_equal(w, n);
    *len = n;
    return b;
}

/* Packs and loads; a failure to load fails the test. */
static inline Graph *pb_load(const Onnx__ModelProto *m)
{
    size_t len;
    uint8_t *b = pb_pack(m, &len);
    Graph *volatile g = NULL;
    EXPECT_OK(g = load_model_buffer(b, len, "unit.onnx"));
    return g;
}

/* Packs and loads, expecting failure; returns with diag_msg set. */
static inline void pb_load_fails(const Onnx__ModelProto *m)
{
    size_t len;
    uint8_t *b = pb_pack(m, &len);
    EXPECT_FAIL(load_model_buffer(b, len, "unit.onnx"));
}

#endif
