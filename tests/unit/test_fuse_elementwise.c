/* Unit tests of the fuse_elementwise pass (compiler/passes/fuse_elementwise.c)
 * and the FusedElementwise op (compiler/ops/fused_elementwise.c): which
 * groups are fused, that the fused graph computes what the original does
 * (pt_optimize_checked), that the compiler's interpreter and the generated
 * C kernel agree bit for bit, kernel sharing, folding and the decomposition. */
#define _POSIX_C_SOURCE 200809L
#include "o2c_pass_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *const ONLY[] = {"fuse_elementwise", NULL};
static const int64_t D1[] = {1};

static Node *fused(Graph *g) { return pt_find(g, "FusedElementwise"); }

/* x * sigmoid(x) + bias[3x1] -> Relu: four nodes, one loop with a broadcast input */
static Onnx__ModelProto *swish_bias_model(void)
{
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x3x4");
    pb_input(m, "bias", DT_FLOAT, "3x1");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Sigmoid", "sig", "x", "s");
    pb_node(m, "Mul", "mul", "x,s", "sw");
    pb_node(m, "Add", "add", "sw,bias", "a");
    pb_node(m, "Relu", "relu", "a", "y");
    return m;
}

static void test_chain_with_broadcast(void **state)
{
    (void)state;
    Graph *g = pt_optimize_checked(swish_bias_model(), 2, ONLY);
    assert_int_equal(pt_count(g, NULL), 1);
    Node *f = fused(g);
    assert_string_equal(attr_s(f, "ops"), "Sigmoid Mul Add Relu");
    assert_int_equal(f->nin, 2);
    assert_int_equal(f->norigins, 4);
    assert_string_equal(f->origins[0], "sig");
    assert_string_equal(f->out[0]->name, "y");            /* the graph output keeps its tensor */
    assert_string_equal(tensor_shape_str(f->out[0]), "2x3x4");
    assert_null(graph_find(g, "sw")->producer);           /* intermediates are gone */
    /* the whole optimizer too */
    g = pt_optimize_checked(swish_bias_model(), 2, NULL);
    assert_int_equal(pt_count(g, "FusedElementwise"), 1);
}

/* comparisons, Cast, constants (scalar and vector), Clip with constant bounds */
static void test_cast_compare_constants(void **state)
{
    (void)state;
    const int64_t D4[] = {4};
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "3x4");
    pb_output(m, "y", DT_INT32, NULL);
    pb_init_raw(m, "c", DT_FLOAT, 1, D4, (float[]){-1, 0, 0.5f, 1}, 16);
    pb_init_raw(m, "lo", DT_FLOAT, 0, NULL, (float[]){-1.25f}, 4);
    pb_init_raw(m, "hi", DT_FLOAT, 0, NULL, (float[]){1.5f}, 4);
    pb_init_raw(m, "k", DT_INT32, 1, D1, (int32_t[]){3}, 4);
    pb_node(m, "Greater", "gt", "x,c", "b");
    Onnx__NodeProto *n = pb_node(m, "Cast", "castf", "b", "bf");
    pb_attr_i(n, "to", DT_FLOAT);
    pb_node(m, "Mul", "mul", "x,bf", "xm");
    pb_node(m, "Clip", "clip", "xm,lo,hi", "xc");
    pb_node(m, "Mul", "mul2", "xc,xc", "x4");              /* one value read twice */
    n = pb_node(m, "Cast", "casti", "x4", "xi");
    pb_attr_i(n, "to", DT_INT32);
    pb_node(m, "Mul", "muli", "xi,k", "y");
    Graph *g = pt_optimize_checked(m, 2, ONLY);
    assert_int_equal(pt_count(g, NULL), 1);
    Node *f = fused(g);
    assert_string_equal(attr_s(f, "ops"), "Greater Cast Mul Clip Mul Cast Mul");
    assert_int_equal(f->nin, 3);                          /* x, c, k: Clip's bounds are parameters */
    assert_int_equal(f->out[0]->dtype, DT_INT32);
}

/* A graph output inside the group becomes a second output; one with
 * another reader outside stays a separate node's output. */
static void test_graph_output_in_the_middle(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "5x2");
    pb_output(m, "r", DT_FLOAT, NULL);
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Exp", "exp", "x", "e");
    pb_node(m, "Relu", "relu", "e", "r");
    pb_node(m, "Neg", "neg", "r", "y");
    Graph *g = pt_optimize_checked(m, 2, ONLY);
    assert_int_equal(pt_count(g, NULL), 1);
    Node *f = fused(g);
    assert_int_equal(f->nout, 2);
    assert_string_equal(f->out[0]->name, "y");
    assert_string_equal(f->out[1]->name, "r");
    assert_ptr_equal(graph_find(g, "r")->producer, f);

    /* two graph outputs in the middle: only one becomes an output of the loop */
    m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "5x2");
    pb_output(m, "e", DT_FLOAT, NULL);
    pb_output(m, "r", DT_FLOAT, NULL);
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Exp", "exp", "x", "e");
    pb_node(m, "Relu", "relu", "e", "r");
    pb_node(m, "Neg", "neg", "r", "y");
    g = pt_optimize_checked(m, 2, ONLY);
    assert_int_equal(pt_count(g, "FusedElementwise"), 1);
    assert_int_equal(pt_count(g, "Exp"), 1);
    assert_ptr_equal(graph_find(g, "e")->producer, pt_find(g, "Exp"));
}

/* An intermediate read outside the group stays; one read only inside is absorbed. */
static void test_multi_reader_intermediates(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "4x3");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "s", DT_FLOAT, NULL);
    pb_node(m, "Exp", "exp", "x", "e");
    pb_node(m, "Neg", "neg", "e", "n");
    pb_node(m, "Abs", "abs", "n", "y");
    pb_node(m, "ReduceSum", "sum", "e", "s");            /* e has a reader outside */
    Graph *g = pt_optimize_checked(m, 2, ONLY);
    assert_int_equal(pt_count(g, "FusedElementwise"), 1);
    assert_int_equal(pt_count(g, "Exp"), 1);
    assert_int_equal(fused(g)->nin, 1);
    assert_ptr_equal(fused(g)->in[0], graph_find(g, "e"));

    /* e read twice, both inside: one loop of four steps, x read once */
    m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "4x3");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_node(m, "Exp", "exp", "x", "e");
    pb_node(m, "Neg", "neg", "e", "n");
    pb_node(m, "Abs", "abs", "e", "a");
    pb_node(m, "Mul", "mul", "n,a", "y");
    g = pt_optimize_checked(m, 2, ONLY);
    assert_int_equal(pt_count(g, NULL), 1);
    assert_int_equal(fused(g)->nin, 1);

    /* a chain of one is left alone; so is an intermediate of another shape */
    m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "4x3");
    pb_input(m, "b", DT_FLOAT, "3");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "z", DT_FLOAT, NULL);
    pb_node(m, "Relu", "relu", "x", "y");
    pb_node(m, "Sigmoid", "sig", "b", "sb");              /* shape 3, read by a 4x3 Add */
    pb_node(m, "Add", "add", "x,sb", "z");
    g = pt_optimize_checked(m, 2, ONLY);
    assert_int_equal(pt_count(g, "FusedElementwise"), 0);
    assert_int_equal(pt_count(g, NULL), 3);
}

/* Views stay views: a Reshape between two elementwise nodes splits the chain. */
static void test_views_are_left_alone(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x6");
    pb_output(m, "y", DT_FLOAT, NULL);
    int64_t shp[2] = {3, 4};
    const int64_t D2[] = {2};
    pb_init_raw(m, "shape", DT_INT64, 1, D2, shp, sizeof shp);
    pb_node(m, "Exp", "exp", "x", "e");
    pb_node(m, "Neg", "neg", "e", "n");
    pb_node(m, "Reshape", "rs", "n,shape", "v");
    pb_node(m, "Abs", "abs", "v", "a");
    pb_node(m, "Sqrt", "sqrt", "a", "y");
    Graph *g = pt_optimize_checked(m, 2, NULL);
    assert_int_equal(pt_count(g, "FusedElementwise"), 2);
    assert_int_equal(pt_count(g, "Reshape"), 1);
}

/* A fused loop of constants is folded by the interpreter. */
static void test_fold_runs_the_interpreter(void **state)
{
    (void)state;
    const int64_t D3[] = {3};
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x3");                   /* u (shape 3) is not absorbed by the Add */
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_init_raw(m, "w", DT_FLOAT, 1, D3, (float[]){-1, 0.5f, 2}, 12);
    pb_node(m, "Tanh", "tanh", "w", "t");
    pb_node(m, "Softsign", "ss", "t", "u");
    pb_node(m, "Add", "add", "x,u", "y");
    static const char *const FUSE_FOLD[] = {"fuse_elementwise", "fold", NULL};
    Graph *g = pt_optimize_checked(m, 2, FUSE_FOLD);
    assert_int_equal(pt_count(g, "FusedElementwise"), 0);
    assert_int_equal(pt_count(g, NULL), 1);
    Tensor *u = graph_find(g, "u");
    assert_non_null(u->data);
    float want = (float)tanh(2.0f);
    want = want / (1 + fabsf(want));
    assert_true(((float *)u->data)[2] == want);
}

/* ---- the generated C against the interpreter, bit for bit ---------------- */

static void put_words(FILE *f, const char *name, const void *data, size_t bytes)
{
    size_t nw = (bytes + 7) / 8;
    uint64_t *w = calloc(nw ? nw : 1, 8);
    memcpy(w, data, bytes);
    fprintf(f, "static const uint64_t %s[] = {", name);
    for (size_t i = 0; i < nw; i++) fprintf(f, "%s0x%016llxULL", i ? ", " : "", (unsigned long long)w[i]);
    fputs("};\n", f);
    free(w);
}

/* Compiles the fused kernel of graph g (lowered) with the host C compiler,
 * runs it on the inputs' values and compares with what graph_evaluate
 * (the interpreter) computed. */
static void check_generated_c(Graph *g)
{
    Lowering L = {0};
    EXPECT_OK(lower_graph(g, &L));
    KCall *c = NULL;
    for (int i = 0; i < L.n; i++)
        if (!L.calls[i].kernel->fn) c = &L.calls[i];
    assert_non_null(c);
    char dir[] = "/tmp/o2c_ew_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char src[64], bin[64], out[64], cmd[1024];
    snprintf(src, sizeof src, "%s/k.c", dir);
    snprintf(bin, sizeof bin, "%s/k", dir);
    snprintf(out, sizeof out, "%s/out.bin", dir);
    FILE *f = fopen(src, "w");
    assert_non_null(f);
    char *cwd = getcwd(NULL, 0);
    fprintf(f, "#include <stdio.h>\n#include \"%s/runtime/c/o2c_rt.h\"\n#include \"%s/runtime/c/params/elementwise.h\"\n"
            "#include \"%s/runtime/c/elementwise.h\"\n%s\n", cwd, cwd, cwd, c->kernel->instance);
    free(cwd);
    int nx = 0, ny = 0;
    for (int j = 0; j < O2C_MAX_X && c->x[j]; j++, nx++) put_words(f, xfmt("in%d", j), c->x[j]->data, tensor_bytes(c->x[j]));
    for (int j = 0; j < O2C_MAX_Y && c->y[j]; j++, ny++)
        fprintf(f, "static uint64_t out%d[%zu];\n", j, tensor_bytes(c->y[j]) / 8 + 1);
    fputs("int main(int argc, char **argv)\n{\n    o2c_p p;\n    FILE *f;\n    (void)argc;\n    memset(&p, 0, sizeof p);\n", f);
    for (int j = 0; j < nx; j++) fprintf(f, "    p.x[%d] = in%d;\n", j, j);
    for (int j = 0; j < ny; j++) fprintf(f, "    p.y[%d] = out%d;\n", j, j);
    for (int j = 0; j < O2C_NK; j++)
        if (c->k[j]) fprintf(f, "    p.k[%d] = %lld;\n", j, (long long)c->k[j]);
    fprintf(f, "    %s(0, %lld, &p);\n    f = fopen(argv[1], \"wb\");\n", c->kernel->name, (long long)c->count);
    for (int j = 0; j < ny; j++) fprintf(f, "    fwrite(out%d, 1, %zu, f);\n", j, tensor_bytes(c->y[j]));
    fputs("    fclose(f);\n    return 0;\n}\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cc -std=c99 -pedantic -Wall -Wextra -Werror -O2 -o %s %s -lm && %s %s", bin, src, bin, out);
    assert_int_equal(system(cmd), 0);
    f = fopen(out, "rb");
    assert_non_null(f);
    for (int j = 0; j < ny; j++) {
        size_t b = tensor_bytes(c->y[j]);
        unsigned char *got = malloc(b);
        assert_int_equal(fread(got, 1, b, f), b);
        for (int64_t i = 0; i < tensor_numel(c->y[j]); i++) {
            size_t es = dtype_size(c->y[j]->dtype);
            if (memcmp(got + (size_t)i * es, (unsigned char *)c->y[j]->data + (size_t)i * es, es))
                fail_msg("generated C and interpreter differ on output %d [%lld]: %.9g, %.9g", j, (long long)i,
                         elem_f64(c->y[j]->dtype, got, i), elem_f64(c->y[j]->dtype, c->y[j]->data, i));
        }
        free(got);
    }
    fclose(f);
    unlink(out);
    unlink(bin);
    unlink(src);
    rmdir(dir);
}

static void test_generated_c_matches_interpreter(void **state)
{
    (void)state;
    /* float math with attributes, broadcast and scalar operands, a compare, casts, two outputs */
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "2x3x5");
    pb_input(m, "b", DT_FLOAT, "3x1");
    pb_input(m, "s", DT_FLOAT, "1");
    pb_output(m, "h", DT_FLOAT, NULL);
    pb_output(m, "y", DT_INT64, NULL);
    Onnx__NodeProto *n = pb_node(m, "HardSigmoid", "hs", "x", "a");
    pb_attr_f(n, "alpha", 0.3f);
    pb_node(m, "Mul", "mul", "a,b", "ab");
    pb_node(m, "Exp", "exp", "ab", "ex");
    pb_node(m, "Div", "div", "ex,s", "h");
    pb_node(m, "LessOrEqual", "le", "h,b", "c");
    n = pb_node(m, "Cast", "c1", "c", "ci");
    pb_attr_i(n, "to", DT_INT64);
    n = pb_node(m, "Cast", "c2", "h", "hi");
    pb_attr_i(n, "to", DT_INT64);
    pb_node(m, "Sub", "sub", "hi,ci", "y");
    Graph *g = pt_optimize_checked(m, 2, ONLY);
    assert_int_equal(pt_count(g, NULL), 1);
    assert_int_equal(fused(g)->nout, 2);
    pt_fill_inputs(g, 11);
    EXPECT_OK(graph_evaluate(g));
    check_generated_c(g);
}

/* Two identical chains share one generated function; the name is stable. */
static void test_identical_chains_share_a_kernel(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "4");
    pb_input(m, "z", DT_FLOAT, "4");
    pb_output(m, "y", DT_FLOAT, NULL);
    pb_output(m, "w", DT_FLOAT, NULL);
    pb_node(m, "Exp", "e1", "x", "a");
    pb_node(m, "Neg", "n1", "a", "y");
    pb_node(m, "Exp", "e2", "z", "b");
    pb_node(m, "Neg", "n2", "b", "w");
    Graph *g = pt_optimize_checked(m, 2, ONLY);
    assert_int_equal(pt_count(g, "FusedElementwise"), 2);
    Lowering L = {0};
    EXPECT_OK(lower_graph(g, &L));    /* (after graph_evaluate the outputs hold data: copies follow) */
    assert_true(L.n >= 2);
    assert_null(L.calls[0].kernel->fn);
    assert_ptr_equal(L.calls[0].kernel, L.calls[1].kernel);
    const char *name = xstrdup(L.calls[0].kernel->name);
    assert_true(!strncmp(name, "o2c_ew_", 7));
    Graph *g2 = pt_optimize_checked(m, 2, ONLY);
    Lowering L2 = {0};
    EXPECT_OK(lower_graph(g2, &L2));
    assert_string_equal(L2.calls[0].kernel->name, name);
    assert_string_equal(L2.calls[0].kernel->instance, L.calls[0].kernel->instance);
}

/* The decomposition states the loop in standard ops (--emit-onnx). */
static void test_decomposition(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "x", DT_FLOAT, "6");
    pb_output(m, "y", DT_INT32, NULL);
    pb_init_raw(m, "lo", DT_FLOAT, 0, NULL, (float[]){0}, 4);
    pb_init_raw(m, "hi", DT_FLOAT, 0, NULL, (float[]){6}, 4);
    Onnx__NodeProto *n = pb_node(m, "LeakyRelu", "lr", "x", "a");
    pb_attr_f(n, "alpha", 0.25f);
    pb_node(m, "Clip", "clip", "a,lo,hi", "c");
    n = pb_node(m, "Cast", "cast", "c", "y");
    pb_attr_i(n, "to", DT_INT32);
    Graph *g = pt_optimize_checked(m, 2, ONLY);
    Decomp d;
    EXPECT_OK(decompose_node(fused(g), &d));
    /* LeakyRelu, Constant, Constant, Clip, Cast */
    assert_int_equal(d.n, 5);
    assert_string_equal(d.nodes[0].op_type, "LeakyRelu");
    assert_string_equal(d.nodes[0].attrs[0].name, "alpha");
    assert_true(d.nodes[0].attrs[0].f == 0.25);
    assert_string_equal(d.nodes[3].op_type, "Clip");
    assert_int_equal(d.nodes[3].nin, 3);
    assert_string_equal(d.nodes[4].op_type, "Cast");
    assert_int_equal(d.nodes[4].attrs[0].i, DT_INT32);
    assert_string_equal(d.nodes[4].out[0], "y0");
    assert_string_equal(d.nodes[0].in[0], "x0");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, pt_setup, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_chain_with_broadcast),
        T(test_cast_compare_constants),
        T(test_graph_output_in_the_middle),
        T(test_multi_reader_intermediates),
        T(test_views_are_left_alone),
        T(test_fold_runs_the_interpreter),
        T(test_generated_c_matches_interpreter),
        T(test_identical_chains_share_a_kernel),
        T(test_decomposition),
    };
    return cmocka_run_group_tests_name("fuse_elementwise", tests, NULL, NULL);
}
