/* Unit tests of the named parameters at the call sites (emit_common.c:
 * emit_call_params): each nonzero slot is written under the name the
 * kernel's `params` annotation gives it, lists after their first slot's
 * name, and a nonzero slot without a name is an internal error.
 * (tools/params_equal.py checks on whole models that the values are the
 * positional initializer's; the test suites compile every form.) */
#include "o2c_test.h"
#include "../../runtime/c/params/conv.h"
#include "../../runtime/c/params/elementwise.h"
#include "../../runtime/c/params/index.h"
#include "../../runtime/c/params/misc.h"
#include "../../runtime/c/params/norm.h"
#include "../../runtime/c/params/rnn.h"

static char nin[] = "in", nw[] = "conv.weight", nout[] = "out";
static Tensor tin = {.name = nin}, tw = {.name = nw}, tout = {.name = nout};

/* each tensor by a fixed expression */
static const char *ptr(const Tensor *t, int out, void *ctx)
{
    (void)ctx;
    (void)out;
    return t == &tin ? "X0" : t == &tw ? "W0" : "Y0";
}

static KCall call(const char *kernel)
{
    KCall c;
    memset(&c, 0, sizeof c);
    c.kernel = kernel_find(kernel);
    if (!c.kernel) fail_msg("no kernel %s", kernel);
    c.count = 1;
    c.x[0] = &tin;
    c.y[0] = &tout;
    return c;
}

/* the call's declaration of p as emitted (C, or cxx: the CUDA form) */
static const char *raw_text(const KCall *c, int cxx)
{
    static char buf[8192];
    FILE *f = tmpfile();
    assert_non_null(f);
    emit_call_params(f, c, ptr, NULL, "    ", cxx);
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* the same with its lines joined: a new line and its indent as one space */
static const char *params_text(const KCall *c, int cxx)
{
    static char flat[8192];
    const char *s = raw_text(c, cxx);
    size_t o = 0;
    while (*s == ' ') s++;
    for (; *s; s++) {
        if (*s == '\n') {
            while (s[1] == ' ') s++;
            flat[o++] = ' ';
        } else {
            flat[o++] = *s;
        }
    }
    flat[o] = 0;
    return flat;
}

#define assert_has(text, word)                                                    \
    do {                                                                          \
        if (!strstr((text), (word))) fail_msg("no \"%s\" in:\n%s", (word), (text)); \
    } while (0)

static void test_conv_named(void **state)
{
    (void)state;
    KCall c = call("o2c_conv_f32");
    c.x[1] = &tw;
    c.k[O2C_CONV_C] = 3;
    c.k[O2C_CONV_IN + 1] = 16;
    c.k[O2C_CONV_IN + 2] = 15;
    c.k[O2C_CONV_PB + 2] = 1;
    c.k[O2C_EPI_ACT] = O2C_ACT_LEAKYRELU;
    c.f[O2C_EPI_FA] = 0.25;
    const char *t = raw_text(&c, 0);
    assert_has(t, "    const o2c_p p = {.x = {X0 /* 'in' */, W0 /* 'conv.weight' */},\n"
                  "                     .y = {Y0 /* 'out' */},\n"
                  "                     .k = {[O2C_CONV_C] = 3, ");
    t = params_text(&c, 0);
    assert_has(t, "[O2C_CONV_C] = 3, [O2C_CONV_IN] = 0, 16, 15, [O2C_CONV_PB] = 0, 0, 1, [O2C_EPI_ACT] = O2C_ACT_LEAKYRELU}");
    assert_has(t, ".f = {[O2C_EPI_FA] = 0.25}");
    assert_has(t, ".ff = {[O2C_EPI_FA] = 0.25f}}; ");
    if (strstr(t, "O2C_CONV_M")) fail_msg("a zero slot written:\n%s", t);
    t = raw_text(&c, 1);   /* C++: zeroed, then assigned */
    assert_has(t, "    o2c_p p = {};\n    p.x[0] = X0;   /* 'in' */\n    p.x[1] = W0;   /* 'conv.weight' */\n");
    t = params_text(&c, 1);
    assert_has(t, "p.k[O2C_CONV_IN + 1] = 16; p.k[O2C_CONV_IN + 2] = 15;");
    assert_has(t, "p.k[O2C_CONV_PB + 2] = 1;");
    assert_has(t, "p.f[O2C_EPI_FA] = 0.25;");
    assert_has(t, "p.ff[O2C_EPI_FA] = 0.25f;");
    if (strstr(t, "p.k[O2C_CONV_PB] =")) fail_msg("a zero slot assigned:\n%s", t);
}

/* a nonzero slot outside every name of the kernel's groups */
static void test_unnamed_slot_fails(void **state)
{
    (void)state;
    KCall c = call("o2c_trilu");
    c.k[O2C_TRILU_W] = 4;
    EXPECT_OK(params_text(&c, 0));
    c.k[O2C_TRILU_W + 1] = 1;   /* the gap before O2C_TRILU_UPPER = 3: no name */
    EXPECT_FAIL(params_text(&c, 0));
    assert_msg_has("internal");
    assert_msg_has("k[2]");
    c = call("o2c_conv_f32");
    c.f[O2C_NORM_F_EPS] = 1.0;   /* f[0]: conv has no real parameter but the epilogue's */
    EXPECT_FAIL(params_text(&c, 1));
    assert_msg_has("f[0]");
    c = call("o2c_conv_f32");
    c.k[O2C_CONV_LAYOUT + 1] = 1;   /* between the conv's slots and the epilogue's */
    EXPECT_FAIL(params_text(&c, 0));
}

/* lists placed by the call, and lists of lists */
static void test_computed_lists(void **state)
{
    (void)state;
    static const Kernel few = {"o2c_ew_0123456789abcdef", NULL, "elementwise.h", "(a fused kernel's text)", ""};
    KCall c = call("o2c_conv_f32");
    c.kernel = &few;
    c.k[O2C_FEW_RANK] = 2;
    c.k[O2C_FEW_DIMS] = 3;
    c.k[O2C_FEW_DIMS + 1] = 4;
    c.k[O2C_FEW_STR_AT(2, 1) + 1] = 1;
    assert_has(params_text(&c, 0), "{[O2C_FEW_RANK] = 2, [O2C_FEW_DIMS] = 3, 4, [O2C_FEW_STR_AT(2, 1)] = 0, 1}");
    c = call("o2c_Add_f32");   /* an op table instance: O2C_EW */
    c.k[O2C_EW_RANK] = 1;
    c.k[O2C_EW_DIMS] = 5;
    c.k[O2C_EW_STR_AT(1)] = 1;
    assert_has(params_text(&c, 0), "{[O2C_EW_RANK] = 1, [O2C_EW_DIMS] = 5, [O2C_EW_STR_AT(1)] = 1}");
    c = call("o2c_einsum_f32");
    c.k[O2C_EINSUM_NIN] = 2;
    c.k[O2C_EINSUM_NO] = 1;
    c.k[O2C_EINSUM_NS] = 1;
    c.k[O2C_EINSUM_DIMS + 1] = 7;
    c.k[O2C_EINSUM_STR_AT(2, 2)] = 9;
    assert_has(params_text(&c, 0), "[O2C_EINSUM_DIMS] = 0, 7, [O2C_EINSUM_STR_AT(2, 2)] = 9}");
    c = call("o2c_lstm_step_f32");
    c.k[O2C_RNN_ACT_AT(1, 2) + 1] = 5;
    c.f[O2C_RNN_F_CLIP] = 3.0;
    const char *t = params_text(&c, 1);
    assert_has(t, "p.k[O2C_RNN_ACT_AT(1, 2) + 1] = 5;");
    assert_has(t, "p.f[O2C_RNN_F_CLIP] = 3.;");
}

/* an alias the kernel reads is the name its call sites show */
static void test_aliases(void **state)
{
    (void)state;
    KCall c = call("o2c_gather_nd");
    c.k[O2C_ND_BATCH] = 6;
    assert_has(params_text(&c, 0), "[O2C_ND_BATCH] = 6");
    c = call("o2c_scatter_nd");
    c.k[O2C_ND_MODE] = 1;
    assert_has(params_text(&c, 0), "[O2C_ND_MODE] = 1");
    c = call("o2c_batchnorm_running_f32");
    c.f[O2C_NORM_F_MOMENTUM] = 0.5;
    assert_has(params_text(&c, 0), ".f = {[O2C_NORM_F_MOMENTUM] = 0.5}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_conv_named, o2c_teardown),
        cmocka_unit_test_teardown(test_unnamed_slot_fails, o2c_teardown),
        cmocka_unit_test_teardown(test_computed_lists, o2c_teardown),
        cmocka_unit_test_teardown(test_aliases, o2c_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
