/* Unit tests of the loader (compiler/load.c): ModelProto bytes -> IR. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "o2c_test.h"

static const int64_t D22[] = {2, 2}, D3[] = {3}, D4[] = {4};

/* x(float 2x2) -> Add(x, w) -> y, with w an initializer */
static Onnx__ModelProto *add_model(void)
{
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x2");
    pb_output(m, "y", DT_FLOAT, "2x2");
    pb_node(m, "Add", "add", "x,w", "y");
    return m;
}

static void test_raw_data_initializers(void **state)
{
    (void)state;
    Onnx__ModelProto *m = add_model();
    const float w[4] = {1.5f, -2.0f, 3.25f, 0.0f};
    pb_init_raw(m, "w", DT_FLOAT, 2, D22, w, sizeof w);
    const int64_t l[3] = {-1, 0, 1LL << 40};
    pb_init_raw(m, "l", DT_INT64, 1, D3, l, sizeof l);
    const uint8_t b[4] = {1, 0, 1, 1};
    pb_init_raw(m, "b", DT_BOOL, 1, D4, b, sizeof b);
    pb_init_raw(m, "s", DT_DOUBLE, 0, NULL, &(double){2.5}, sizeof(double)); /* scalar */
    Graph *g = pb_load(m);
    Tensor *t = graph_find(g, "w");
    assert_non_null(t);
    assert_int_equal(t->dtype, DT_FLOAT);
    assert_int_equal(t->rank, 2);
    assert_int_equal(t->dims[0], 2);
    assert_int_equal(t->dims[1], 2);
    assert_non_null(t->data);
    assert_memory_equal(t->data, w, sizeof w);
    assert_false(t->is_input);
    t = graph_find(g, "l");
    assert_int_equal(t->dtype, DT_INT64);
    assert_memory_equal(t->data, l, sizeof l);
    t = graph_find(g, "b");
    assert_int_equal(t->dtype, DT_BOOL);
    assert_memory_equal(t->data, b, sizeof b);
    t = graph_find(g, "s");
    assert_int_equal(t->rank, 0);
    assert_true(((double *)t->data)[0] == 2.5);
}

static void test_typed_field_initializers(void **state)
{
    (void)state;
    Onnx__ModelProto *m = add_model();
    Onnx__TensorProto *t;

    t = pb_init(m, pb_tensor("w", DT_FLOAT, 2, D22));
    float fv[4] = {1, 2, 3, -4.5f};
    t->n_float_data = 4; t->float_data = fv;

    t = pb_init(m, pb_tensor("i64", DT_INT64, 1, D3));
    int64_t iv[3] = {-7, 0, 123456789012LL};
    t->n_int64_data = 3; t->int64_data = iv;

    t = pb_init(m, pb_tensor("i8", DT_INT8, 1, D4));
    int32_t i8v[4] = {-128, -5, 0, 127};
    t->n_int32_data = 4; t->int32_data = i8v;

    t = pb_init(m, pb_tensor("bl", DT_BOOL, 1, D4));
    int32_t bv[4] = {0, 1, 2, 0};          /* non-zero is true */
    t->n_int32_data = 4; t->int32_data = bv;

    t = pb_init(m, pb_tensor("f64", DT_DOUBLE, 1, D3));
    double dv[3] = {0.1, -1e300, 3};
    t->n_double_data = 3; t->double_data = dv;

    t = pb_init(m, pb_tensor("i32", DT_INT32, 1, D3));
    int32_t i32v[3] = {-2147483647 - 1, 7, 2147483647};
    t->n_int32_data = 3; t->int32_data = i32v;

    t = pb_init(m, pb_tensor("u64", DT_UINT64, 1, D3));
    uint64_t u64v[3] = {0, 1, UINT64_MAX};
    t->n_uint64_data = 3; t->uint64_data = u64v;

    Graph *g = pb_load(m);
    Tensor *x = graph_find(g, "w");
    assert_int_equal(x->dtype, DT_FLOAT);
    assert_memory_equal(x->data, fv, sizeof fv);
    x = graph_find(g, "i64");
    assert_memory_equal(x->data, iv, sizeof iv);
    x = graph_find(g, "i8");
    assert_int_equal(x->dtype, DT_INT8);
    const int8_t i8e[4] = {-128, -5, 0, 127};
    assert_memory_equal(x->data, i8e, sizeof i8e);
    assert_int_equal(tensor_bytes(x), 4);
    x = graph_find(g, "bl");
    const uint8_t be[4] = {0, 1, 1, 0};
    assert_memory_equal(x->data, be, sizeof be);
    x = graph_find(g, "f64");
    assert_memory_equal(x->data, dv, sizeof dv);
    x = graph_find(g, "i32");
    assert_memory_equal(x->data, i32v, sizeof i32v);
    x = graph_find(g, "u64");
    assert_memory_equal(x->data, u64v, sizeof u64v);
}

static void test_typed_field_count_mismatch(void **state)
{
    (void)state;
    Onnx__ModelProto *m = add_model();
    Onnx__TensorProto *t = pb_init(m, pb_tensor("w", DT_FLOAT, 2, D22));
    float fv[3] = {1, 2, 3};
    t->n_float_data = 3; t->float_data = fv;
    pb_load_fails(m);
    assert_msg_has("'w'");
    assert_msg_has("3 values");
}

static void test_raw_data_wrong_length(void **state)
{
    (void)state;
    Onnx__ModelProto *m = add_model();
    const float w[3] = {1, 2, 3};
    pb_init_raw(m, "w", DT_FLOAT, 2, D22, w, sizeof w);
    pb_load_fails(m);
    assert_msg_has("'w'");
    assert_msg_has("12 bytes");
    assert_msg_has("16");
}

static void test_unsupported_initializer_type(void **state)
{
    (void)state;
    Onnx__ModelProto *m = add_model();
    const float h[8] = {1, 0, 2, 0, 3, 0, 4, 0};
    pb_init_raw(m, "w", 14 /* complex64 */, 2, D22, h, sizeof h);
    pb_load_fails(m);
    assert_msg_has("'w'");
    assert_msg_has("complex64");
}

static void test_initializer_listed_as_input(void **state)
{
    (void)state;
    Onnx__ModelProto *m = add_model();
    const float w[4] = {1, 2, 3, 4};
    pb_init_raw(m, "w", DT_FLOAT, 2, D22, w, sizeof w);
    pb_input(m, "w", DT_FLOAT, "2x2");   /* old exporters list weights as inputs */
    Graph *g = pb_load(m);
    assert_int_equal(g->ninputs, 1);
    assert_string_equal(g->inputs[0]->name, "x");
    assert_int_equal(g->inputs[0]->input_index, 0);
    Tensor *t = graph_find(g, "w");
    assert_false(t->is_input);
    assert_memory_equal(t->data, w, sizeof w);
    assert_int_equal(g->noutputs, 1);
    assert_true(g->outputs[0]->is_output);
}

static void test_io_value_info(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "Nx3x?");
    pb_input(m, "s", DT_INT64, "");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Relu", "r", "x", "y");
    Graph *g = pb_load(m);
    assert_int_equal(g->ninputs, 2);
    Tensor *x = g->inputs[0];
    assert_int_equal(x->rank, 3);
    assert_int_equal(x->dims[0], -1);
    assert_string_equal(x->sym[0], "N");
    assert_int_equal(x->dims[1], 3);
    assert_null(x->sym[1]);
    assert_int_equal(x->dims[2], -1);
    assert_null(x->sym[2]);
    assert_int_equal(g->inputs[1]->rank, 0);
    assert_int_equal(g->inputs[1]->dtype, DT_INT64);
    assert_int_equal(g->inputs[1]->input_index, 1);
    assert_int_equal(g->outputs[0]->rank, -1);
    assert_int_equal(g->outputs[0]->dtype, DT_FLOAT);
    assert_int_equal(g->outputs[0]->output_index, 0);
}

static void test_constant_node(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "3");
    pb_output(m, "y", DT_FLOAT, "3");
    Onnx__NodeProto *c = pb_node(m, "Constant", "c", "", "k");
    Onnx__TensorProto *t = pb_tensor(NULL, DT_FLOAT, 1, D3);
    float kv[3] = {10, 20, 30};
    t->n_float_data = 3; t->float_data = kv;
    pb_attr_t(c, "value", t);
    pb_node(m, "Add", "add", "x,k", "y");
    Graph *g = pb_load(m);
    assert_int_equal(g->nnodes, 2);
    Node *n = g->nodes[0];
    assert_string_equal(n->op_type, "Constant");
    assert_int_equal(n->nin, 0);
    assert_int_equal(n->nout, 1);
    assert_int_equal(n->nattrs, 1);
    assert_int_equal(n->attrs[0].type, AT_TENSOR);
    assert_non_null(n->attrs[0].t);
    assert_int_equal(n->attrs[0].t->dtype, DT_FLOAT);
    assert_int_equal(n->attrs[0].t->rank, 1);
    assert_memory_equal(n->attrs[0].t->data, kv, sizeof kv);
    Tensor *k = graph_find(g, "k");
    assert_ptr_equal(k->producer, n);
    assert_null(k->data);                 /* until inference */
    static Options o;
    EXPECT_OK(infer_graph(g, &o));
    assert_non_null(k->data);
    assert_memory_equal(k->data, kv, sizeof kv);
    assert_true(n->folded);
}

static void test_every_attribute_kind(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1");
    pb_output(m, "y", DT_FLOAT, "1");
    Onnx__NodeProto *n = pb_node(m, "Custom", "n", "x", "y");
    pb_attr_f(n, "f", 0.25f);
    pb_attr_i(n, "i", -42);
    pb_attr_s(n, "s", "hello");
    Onnx__TensorProto *t = pb_tensor("tv", DT_INT32, 1, D3);
    int32_t iv[3] = {4, 5, 6};
    t->n_int32_data = 3; t->int32_data = iv;
    pb_attr_t(n, "t", t);
    const float fl[2] = {1.5f, -0.5f};
    pb_attr_floats(n, "floats", 2, fl);
    const int64_t il[3] = {1, -2, 3000000000LL};
    pb_attr_ints(n, "ints", 3, il);
    Onnx__AttributeProto *a = pb_attr(n, "strings", AT_STRINGS);
    ProtobufCBinaryData sv[2] = {{2, (uint8_t *)"ab"}, {0, (uint8_t *)""}};
    a->n_strings = 2; a->strings = sv;
    a = pb_attr(n, "g", AT_GRAPH);        /* graphs: loaded as nested Graphs (If, Loop, Scan) */
    a->g = xalloc(sizeof *a->g);
    onnx__graph_proto__init(a->g);
    a = pb_attr(n, "empty_ints", AT_INTS);
    /* IR-version-1 style: no type field, inferred from the value set */
    a = pb_attr(n, "old_f", 0);
    a->has_f = 1; a->f = 2.0f;
    a = pb_attr(n, "old_i", 0);
    a->has_i = 1; a->i = 7;
    a = pb_attr(n, "old_ints", 0);
    a->n_ints = 2; a->ints = (int64_t[]){8, 9};
    a = pb_attr(n, "old_s", 0);
    a->has_s = 1; a->s.len = 1; a->s.data = (uint8_t *)"z";

    Graph *g = pb_load(m);
    Node *nd = g->nodes[0];
    assert_int_equal(nd->nattrs, 13);
    const Attr *x;
    x = attr_find(nd, "f");
    assert_int_equal(x->type, AT_FLOAT);
    assert_true(x->f == 0.25);
    x = attr_find(nd, "i");
    assert_int_equal(x->type, AT_INT);
    assert_int_equal(x->i, -42);
    x = attr_find(nd, "s");
    assert_int_equal(x->type, AT_STRING);
    assert_string_equal(x->s, "hello");
    x = attr_find(nd, "t");
    assert_int_equal(x->type, AT_TENSOR);
    assert_string_equal(x->t->name, "tv");
    assert_int_equal(x->t->dtype, DT_INT32);
    assert_memory_equal(x->t->data, iv, sizeof iv);
    x = attr_find(nd, "floats");
    assert_int_equal(x->type, AT_FLOATS);
    assert_int_equal(x->n, 2);
    assert_true(x->floats[0] == 1.5 && x->floats[1] == -0.5);
    x = attr_find(nd, "ints");
    assert_int_equal(x->type, AT_INTS);
    assert_int_equal(x->n, 3);
    assert_int_equal(x->ints[1], -2);
    assert_int_equal(x->ints[2], 3000000000LL);
    x = attr_find(nd, "strings");
    assert_int_equal(x->type, AT_STRINGS);
    assert_int_equal(x->n, 2);
    assert_string_equal(x->strings[0], "ab");
    assert_string_equal(x->strings[1], "");
    x = attr_find(nd, "g");
    assert_int_equal(x->type, AT_GRAPH);
    assert_non_null(x->g);
    assert_ptr_equal(x->g->parent, g);
    x = attr_find(nd, "empty_ints");
    assert_int_equal(x->type, AT_INTS);
    assert_int_equal(x->n, 0);
    x = attr_find(nd, "old_f");
    assert_int_equal(x->type, AT_FLOAT);
    assert_true(x->f == 2.0);
    x = attr_find(nd, "old_i");
    assert_int_equal(x->type, AT_INT);
    assert_int_equal(x->i, 7);
    x = attr_find(nd, "old_ints");
    assert_int_equal(x->type, AT_INTS);
    assert_int_equal(x->n, 2);
    assert_int_equal(x->ints[1], 9);
    x = attr_find(nd, "old_s");
    assert_int_equal(x->type, AT_STRING);
    assert_string_equal(x->s, "z");
    assert_null(attr_find(nd, "nope"));
    assert_true(attr_has(nd, "ints"));
    assert_false(attr_has(nd, "nope"));
}

static void test_attribute_tensor_missing(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1");
    pb_output(m, "y", DT_FLOAT, "1");
    Onnx__NodeProto *n = pb_node(m, "Custom", "n", "x", "y");
    pb_attr(n, "t", AT_TENSOR);           /* typed TENSOR, no tensor */
    pb_load_fails(m);
    assert_msg_has("'t'");
}

static void test_opset_import(void **state)
{
    (void)state;
    Onnx__ModelProto *m = add_model();
    m->n_opset_import = 0;
    pb_opset(m, "com.microsoft", 1);
    pb_opset(m, "", 17);
    pb_opset(m, "ai.onnx.ml", 3);
    Graph *g = pb_load(m);
    assert_int_equal(g->opset, 17);
    assert_int_equal(g->ir_version, 8);
    assert_string_equal(g->producer, "unit-test");
    o2c_forget_name_index();
    pool_release();

    m = add_model();
    m->n_opset_import = 0;
    pb_opset(m, "ai.onnx", 11);           /* the default domain by its long name */
    g = pb_load(m);
    assert_int_equal(g->opset, 11);
    o2c_forget_name_index();
    pool_release();

    m = add_model();
    m->n_opset_import = 0;                /* none: opset 1 */
    g = pb_load(m);
    assert_int_equal(g->opset, 1);
}

static void test_node_fields(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "4");
    pb_output(m, "y", DT_FLOAT, "4");
    Onnx__NodeProto *n = pb_node(m, "Clip", NULL, "x,,", "y");   /* unnamed, omitted inputs */
    n->domain = S("ai.onnx");
    n = pb_node(m, "Dropout", "d", "y", "z,");
    Graph *g = pb_load(m);
    Node *a = g->nodes[0], *b = g->nodes[1];
    assert_string_equal(a->name, "Clip_0");
    assert_string_equal(a->domain, "");
    assert_int_equal(a->nin, 1);           /* trailing omitted inputs dropped */
    assert_int_equal(b->nout, 1);
    assert_string_equal(b->name, "d");
    assert_ptr_equal(graph_find(g, "y")->producer, a);
    assert_ptr_equal(graph_find(g, "z")->producer, b);
    assert_ptr_equal(a->out[0], graph_find(g, "y"));
    assert_ptr_equal(b->in[0], graph_find(g, "y"));

    /* an omitted input in the middle stays as NULL */
    o2c_forget_name_index();
    pool_release();
    m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "4");
    pb_output(m, "y", DT_FLOAT, "4");
    pb_node(m, "Clip", "c", "x,,hi", "y");
    pb_init_raw(m, "hi", DT_FLOAT, 0, NULL, &(float){1}, 4);
    g = pb_load(m);
    assert_int_equal(g->nodes[0]->nin, 3);
    assert_null(g->nodes[0]->in[1]);
    assert_non_null(g->nodes[0]->in[2]);
}

static void test_ir_version_too_old(void **state)
{
    (void)state;
    Onnx__ModelProto *m = add_model();
    m->ir_version = 2;
    pb_load_fails(m);
    assert_msg_has("IR version 2");
    assert_msg_has("3");
    m->has_ir_version = 0;
    pb_load_fails(m);
    assert_msg_has("ir_version");
}

static void test_no_graph(void **state)
{
    (void)state;
    Onnx__ModelProto *m = add_model();
    m->graph = NULL;
    pb_load_fails(m);
    assert_msg_has("no graph");
}

static void test_truncated_and_garbage(void **state)
{
    (void)state;
    Onnx__ModelProto *m = add_model();
    const float w[4] = {1, 2, 3, 4};
    pb_init_raw(m, "w", DT_FLOAT, 2, D22, w, sizeof w);
    size_t len;
    uint8_t *b = pb_pack(m, &len);
    /* the last 4 bytes are the opset_import: cutting more leaves part of the graph */
    for (size_t cut = 5; cut < len; cut += 3) {
        int failed;
        O2C_TRY(failed, load_model_buffer(b, len - cut, "unit.onnx"));
        if (!failed) fail_msg("model cut by %zu of %zu bytes loaded", cut, len);
        o2c_forget_name_index();
    }
    EXPECT_FAIL(load_model_buffer(b, len - 1, "unit.onnx"));
    assert_msg_has("truncated or corrupt");
    EXPECT_FAIL(load_model_buffer(b, 0, "unit.onnx"));
    assert_msg_has("empty");
    static const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    EXPECT_FAIL(load_model_buffer(junk, sizeof junk, "unit.onnx"));
    assert_msg_has("not a valid ONNX model");
}

static void test_load_model_file(void **state)
{
    (void)state;
    EXPECT_FAIL(load_model("/nonexistent-o2c-dir/model.onnx"));
    assert_msg_has("cannot open");
    assert_msg_has("/nonexistent-o2c-dir/model.onnx");

    /* a model written to a file loads the same as from memory */
    char path[] = "/tmp/o2c_unit_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len;
    uint8_t *b = pb_pack(add_model(), &len);
    ssize_t w = write(fd, b, len);
    close(fd);
    Graph *volatile g = NULL;
    int failed = w != (ssize_t)len;
    if (!failed) O2C_TRY(failed, g = load_model(path));
    unlink(path);
    if (failed) fail_msg("could not load the model from a file: %s", diag_msg);
    assert_int_equal(g->nnodes, 1);
    assert_string_equal(g->model_dir, "/tmp");
}

static void test_graph_structure_errors(void **state)
{
    (void)state;
    /* no outputs */
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "1");
    pb_node(m, "Relu", "r", "x", "y");
    pb_load_fails(m);
    assert_msg_has("no outputs");

    /* an input listed twice */
    m = add_model();
    pb_input(m, "x", DT_FLOAT, "2x2");
    pb_load_fails(m);
    assert_msg_has("'x'");
    assert_msg_has("twice");

    /* a tensor produced twice */
    m = add_model();
    pb_node(m, "Relu", "again", "x", "y");
    pb_load_fails(m);
    assert_msg_has("'y'");
    assert_msg_has("again");
    assert_msg_has("produced twice");

    /* a node writing a graph input */
    m = add_model();
    pb_node(m, "Relu", "over", "y", "x");
    pb_load_fails(m);
    assert_msg_has("'x'");

    /* an input of unsupported type */
    m = pb_model(8, 13);
    pb_input(m, "x", DT_COMPLEX64, "2");   /* (strings are supported: ops/strings.c) */
    pb_output(m, "y", DT_COMPLEX64, "2");
    pb_node(m, "Identity", "i", "x", "y");
    pb_load_fails(m);
    assert_msg_has("'x'");
    assert_msg_has("complex64");
}

static void test_external_data(void **state)
{
    (void)state;
    char dir[] = "/tmp/o2c_unit_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *bin = xfmt("%s/w.bin", dir);
    FILE *f = fopen(bin, "wb");
    assert_non_null(f);
    const float w[6] = {9, 9, 1, 2, 3, 4};     /* offset 8: 1 2 3 4 */
    fwrite(w, sizeof w, 1, f);
    fclose(f);
    Onnx__ModelProto *m = add_model();
    Onnx__TensorProto *t = pb_init(m, pb_tensor("w", DT_FLOAT, 2, D22));
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    const char *kv[3][2] = {{"location", "w.bin"}, {"offset", "8"}, {"length", "16"}};
    for (int i = 0; i < 3; i++) {
        Onnx__StringStringEntryProto *e = xalloc(sizeof *e);
        onnx__string_string_entry_proto__init(e);
        e->key = S(kv[i][0]);
        e->value = S(kv[i][1]);
        PB_PUSH(t->external_data, t->n_external_data, e);
    }
    size_t len;
    uint8_t *b = pb_pack(m, &len);
    Graph *volatile g = NULL;
    int failed;
    O2C_TRY(failed, g = load_model_buffer(b, len, xfmt("%s/m.onnx", dir)));
    if (!failed) {
        assert_memory_equal(graph_find(g, "w")->data, w + 2, 16);
        /* a location outside the folder is refused */
        o2c_forget_name_index();
        t->external_data[0]->value = S("../w.bin");
        b = pb_pack(m, &len);
        O2C_TRY(failed, load_model_buffer(b, len, xfmt("%s/m.onnx", dir)));
        failed = !failed || !strstr(diag_msg, "outside");
        if (failed) strcpy(diag_msg, "../w.bin was accepted");
    }
    unlink(bin);
    rmdir(dir);
    if (failed) fail_msg("%s", diag_msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_raw_data_initializers, o2c_teardown),
        cmocka_unit_test_teardown(test_typed_field_initializers, o2c_teardown),
        cmocka_unit_test_teardown(test_typed_field_count_mismatch, o2c_teardown),
        cmocka_unit_test_teardown(test_raw_data_wrong_length, o2c_teardown),
        cmocka_unit_test_teardown(test_unsupported_initializer_type, o2c_teardown),
        cmocka_unit_test_teardown(test_initializer_listed_as_input, o2c_teardown),
        cmocka_unit_test_teardown(test_io_value_info, o2c_teardown),
        cmocka_unit_test_teardown(test_constant_node, o2c_teardown),
        cmocka_unit_test_teardown(test_every_attribute_kind, o2c_teardown),
        cmocka_unit_test_teardown(test_attribute_tensor_missing, o2c_teardown),
        cmocka_unit_test_teardown(test_opset_import, o2c_teardown),
        cmocka_unit_test_teardown(test_node_fields, o2c_teardown),
        cmocka_unit_test_teardown(test_ir_version_too_old, o2c_teardown),
        cmocka_unit_test_teardown(test_no_graph, o2c_teardown),
        cmocka_unit_test_teardown(test_truncated_and_garbage, o2c_teardown),
        cmocka_unit_test_teardown(test_load_model_file, o2c_teardown),
        cmocka_unit_test_teardown(test_graph_structure_errors, o2c_teardown),
        cmocka_unit_test_teardown(test_external_data, o2c_teardown),
    };
    return cmocka_run_group_tests_name("load", tests, NULL, NULL);
}
