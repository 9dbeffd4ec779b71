/* Unit tests of the narrow element types (float8, float4e2m1, int4/uint4,
 * int2/uint2; runtime/c/types.h, compiler/ops/types.c): the conversions,
 * the Cast kernels through the registry, packed initializers on loading,
 * and the refusal of ops that would compute on them. Expected values by
 * hand from the formats' definitions (ONNX docs/Operators.md, Cast). */
#include <math.h>

#include "o2c_test.h"
#include "../../runtime/c/params/elementwise.h"
#include "../../runtime/c/elementwise.h"
#include "../../runtime/c/params/types.h"
#include "../../runtime/c/types.h"

static const int64_t D3[] = {3};

static float narrow(int dt, unsigned b) { return narrow_to_float(dt, (uint8_t)b); }

static void test_decode(void **state)
{
    (void)state;
    assert_true(narrow(DT_FLOAT8E4M3FN, 0x7e) == 448.0f);
    assert_true(isnan(narrow(DT_FLOAT8E4M3FN, 0x7f)) && isnan(narrow(DT_FLOAT8E4M3FN, 0xff)));
    assert_true(narrow(DT_FLOAT8E4M3FN, 0x01) == 0x1p-9f);      /* smallest subnormal */
    assert_true(narrow(DT_FLOAT8E4M3FN, 0xb8) == -1.0f);
    assert_true(narrow(DT_FLOAT8E4M3FNUZ, 0x7f) == 240.0f);
    assert_true(isnan(narrow(DT_FLOAT8E4M3FNUZ, 0x80)));
    assert_true(narrow(DT_FLOAT8E4M3FNUZ, 0x01) == 0x1p-10f);
    assert_true(narrow(DT_FLOAT8E5M2, 0x7b) == 57344.0f);
    assert_true(isinf(narrow(DT_FLOAT8E5M2, 0x7c)) && narrow(DT_FLOAT8E5M2, 0xfc) < 0);
    assert_true(isnan(narrow(DT_FLOAT8E5M2, 0x7d)));
    assert_true(narrow(DT_FLOAT8E5M2, 0x01) == 0x1p-16f);
    assert_true(narrow(DT_FLOAT8E5M2FNUZ, 0x7f) == 57344.0f);
    assert_true(narrow(DT_FLOAT8E5M2FNUZ, 0x01) == 0x1p-17f);
    assert_true(narrow(DT_FLOAT8E8M0, 127) == 1.0f && narrow(DT_FLOAT8E8M0, 0xfe) == 0x1p127f);
    assert_true(narrow(DT_FLOAT8E8M0, 0) == 0x1p-127f && isnan(narrow(DT_FLOAT8E8M0, 0xff)));
    const float e2m1[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
    for (unsigned b = 0; b < 16; b++) assert_true(narrow(DT_FLOAT4E2M1, b) == (b & 8 ? -e2m1[b & 7] : e2m1[b]));
    assert_true(narrow(DT_INT4, 0x8) == -8 && narrow(DT_INT4, 0xf) == -1 && narrow(DT_INT4, 0xff) == -1);
    assert_true(narrow(DT_UINT4, 0xf) == 15 && narrow(DT_INT2, 2) == -2 && narrow(DT_UINT2, 3) == 3);
}

/* every finite code decodes and encodes back to itself */
static void test_round_trip(void **state)
{
    (void)state;
    const int types[] = {DT_FLOAT8E4M3FN, DT_FLOAT8E4M3FNUZ, DT_FLOAT8E5M2, DT_FLOAT8E5M2FNUZ, DT_FLOAT8E8M0,
                         DT_FLOAT4E2M1, DT_INT4, DT_UINT4, DT_INT2, DT_UINT2};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        int dt = types[t];
        unsigned n = dt == DT_FLOAT4E2M1 || dt == DT_INT4 || dt == DT_UINT4 ? 16 : dt == DT_INT2 || dt == DT_UINT2 ? 4 : 256;
        for (unsigned b = 0; b < n; b++) {
            float f = narrow(dt, b);
            if (isnan(f) || isinf(f)) continue;   /* an infinity saturates */
            for (int sat = 0; sat < 2; sat++)
                if (o2c_f32_to_n(f, dt, sat, O2C_E8M0_DOWN) != b)   /* 2^-127 is a float subnormal: "up" takes it to 2^-126 */ fail_msg("%s code 0x%02x (%g) does not round-trip", dtype_name(dt), b, (double)f);
        }
    }
}

static void test_encode(void **state)
{
    (void)state;
    /* ties to even, saturation, no-saturation overflow */
    assert_int_equal(o2c_f32_to_n(464.0f, DT_FLOAT8E4M3FN, 0, 0), 0x7e);      /* tie of 448 and 480: to even */
    assert_int_equal(o2c_f32_to_n(465.0f, DT_FLOAT8E4M3FN, 1, 0), 0x7e);      /* rounds to 480: past the max */
    assert_int_equal(o2c_f32_to_n(465.0f, DT_FLOAT8E4M3FN, 0, 0), 0x7f);      /* NaN */
    assert_int_equal(o2c_f32_to_n(-INFINITY, DT_FLOAT8E4M3FN, 1, 0), 0xfe);
    assert_int_equal(o2c_f32_to_n(INFINITY, DT_FLOAT8E5M2, 0, 0), 0x7c);
    assert_int_equal(o2c_f32_to_n(1e6f, DT_FLOAT8E5M2, 0, 0), 0x7c);
    assert_int_equal(o2c_f32_to_n(1e6f, DT_FLOAT8E5M2FNUZ, 0, 0), 0x80);
    assert_int_equal(o2c_f32_to_n(-0.0f, DT_FLOAT8E4M3FNUZ, 1, 0), 0x00);     /* no -0 */
    assert_int_equal(o2c_f32_to_n(-0.0f, DT_FLOAT8E4M3FN, 1, 0), 0x80);
    assert_int_equal(o2c_f32_to_n(1.0625f, DT_FLOAT8E4M3FN, 1, 0), 0x38);     /* tie: to even (1.0) */
    assert_int_equal(o2c_f32_to_n(1.1875f, DT_FLOAT8E4M3FN, 1, 0), 0x3a);     /* tie: to even (1.25) */
    assert_int_equal(o2c_f32_to_n(0x1p-10f, DT_FLOAT8E4M3FN, 1, 0), 0x00);    /* half the smallest: to 0 */
    assert_int_equal(o2c_f32_to_n(0x1.01p-10f, DT_FLOAT8E4M3FN, 1, 0), 0x01);
    assert_int_equal(o2c_f32_to_n(100.0f, DT_FLOAT4E2M1, 0, 0), 0x7);          /* float4 always saturates */
    assert_int_equal(o2c_f32_to_n(2.5f, DT_FLOAT4E2M1, 1, 0), 0x4);           /* tie: to even (2) */
    /* float8e8m0: the rounding modes */
    assert_int_equal(o2c_f32_to_n(1.1f, DT_FLOAT8E8M0, 1, O2C_E8M0_UP), 128);
    assert_int_equal(o2c_f32_to_n(1.1f, DT_FLOAT8E8M0, 1, O2C_E8M0_DOWN), 127);
    assert_int_equal(o2c_f32_to_n(1.4f, DT_FLOAT8E8M0, 1, O2C_E8M0_NEAREST), 127);
    assert_int_equal(o2c_f32_to_n(1.5f, DT_FLOAT8E8M0, 1, O2C_E8M0_NEAREST), 128);
    assert_int_equal(o2c_f32_to_n(0x1.8p127f, DT_FLOAT8E8M0, 1, O2C_E8M0_UP), 0xfe);   /* saturates */
    assert_int_equal(o2c_f32_to_n(0x1.8p127f, DT_FLOAT8E8M0, 0, O2C_E8M0_UP), 0xff);
    /* integers: truncated, wrapped to the low bits */
    assert_int_equal(o2c_f32_to_n(-1.0f, DT_INT4, 1, 0), 0xf);
    assert_int_equal(o2c_f32_to_n(-9.0f, DT_INT4, 1, 0), 0x7);
    assert_int_equal(o2c_f32_to_n(2.9f, DT_UINT2, 1, 0), 2);
    assert_int_equal(o2c_f32_to_n(-2.9f, DT_INT2, 1, 0), 2);
}

static void test_cast_kernels(void **state)
{
    (void)state;
    const Kernel *k = kernel_find("o2c_cast_i32_n");
    assert_non_null(k);
    assert_string_equal(k->file, "types.h");
    const int32_t x[4] = {300, -1, 7, -8};
    uint8_t y[4], z[4];
    o2c_p p;
    memset(&p, 0, sizeof p);
    p.x[0] = x; p.y[0] = y;
    p.k[O2C_CASTN_TO] = O2C_NT_I4;
    k->fn(0, 4, &p);
    const uint8_t want[4] = {0xc, 0xf, 0x7, 0x8};
    assert_memory_equal(y, want, sizeof want);
    /* int4 -> float8e4m3fn */
    memset(&p, 0, sizeof p);
    p.x[0] = y; p.y[0] = z;
    p.k[O2C_CASTN_FROM] = O2C_NT_I4; p.k[O2C_CASTN_TO] = O2C_NT_E4M3FN; p.k[O2C_CASTN_SAT] = 1;
    kernel_find("o2c_cast_n_n")->fn(0, 4, &p);
    const uint8_t want8[4] = {0xc8, 0xb8, 0x4e, 0xd0};   /* -4, -1, 7, -8 */
    assert_memory_equal(z, want8, sizeof want8);
    int64_t w[4];
    memset(&p, 0, sizeof p);
    p.x[0] = z; p.y[0] = w;
    p.k[O2C_CASTN_FROM] = O2C_NT_E4M3FN;
    kernel_find("o2c_cast_n_i64")->fn(0, 4, &p);
    assert_true(w[0] == -4 && w[1] == -1 && w[2] == 7 && w[3] == -8);
}

/* 4-bit initializers two to a byte (first element low), 2-bit four to a
 * byte; in memory one element a byte */
static void test_packed_initializers(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(10, 25);
    pb_input(m, "x", DT_INT4, "3");
    pb_output(m, "y", DT_INT8, "3");
    pb_node(m, "Cast", "c", "x", "y");
    const uint8_t i4[2] = {0xf8, 0x07};           /* -8, -1, 7 */
    pb_init_raw(m, "a", DT_INT4, 1, D3, i4, sizeof i4);
    const uint8_t u2[2] = {0xe4, 0x03};           /* 0 1 2 3 3 */
    pb_init_raw(m, "b", DT_UINT2, 1, (const int64_t[]){5}, u2, sizeof u2);
    Onnx__TensorProto *t = pb_init(m, pb_tensor("c", DT_FLOAT4E2M1, 1, D3));
    int32_t f4[2] = {0x2f, 0x07};                 /* -6, 1, 6 */
    t->n_int32_data = 2; t->int32_data = f4;
    t = pb_init(m, pb_tensor("d", DT_FLOAT8E5M2, 1, D3));
    int32_t f8[3] = {0x3c, 0x7c, 0xc0};           /* 1, inf, -2 */
    t->n_int32_data = 3; t->int32_data = f8;
    Graph *g = pb_load(m);
    const uint8_t wa[3] = {0x8, 0xf, 0x7}, wb[5] = {0, 1, 2, 3, 3}, wc[3] = {0xf, 0x2, 0x7}, wd[3] = {0x3c, 0x7c, 0xc0};
    assert_memory_equal(graph_find(g, "a")->data, wa, 3);
    assert_memory_equal(graph_find(g, "b")->data, wb, 5);
    assert_memory_equal(graph_find(g, "c")->data, wc, 3);
    assert_memory_equal(graph_find(g, "d")->data, wd, 3);
    assert_int_equal(tensor_bytes(graph_find(g, "b")), 5);
    /* a wrong packed size is refused */
    m = pb_model(10, 25);
    pb_input(m, "x", DT_INT4, "3");
    pb_output(m, "y", DT_INT8, "3");
    pb_node(m, "Cast", "c", "x", "y");
    pb_init_raw(m, "a", DT_INT4, 1, D3, i4, 1);
    pb_load_fails(m);
}

/* --emit-onnx packs int4/uint2 constants again: the emitted model loads
 * back to the same elements */
static void test_emit_onnx_packs(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(10, 25);
    pb_output(m, "y", DT_INT4, "3");
    pb_output(m, "z", DT_UINT2, "5");
    pb_node(m, "Identity", "i", "a", "y");
    pb_node(m, "Identity", "j", "b", "z");
    const uint8_t i4[2] = {0xf8, 0x07};           /* -8, -1, 7 */
    pb_init_raw(m, "a", DT_INT4, 1, D3, i4, sizeof i4);
    const uint8_t u2[2] = {0xe4, 0x03};           /* 0 1 2 3 3 */
    pb_init_raw(m, "b", DT_UINT2, 1, (const int64_t[]){5}, u2, sizeof u2);
    Graph *g = pb_load(m);
    Options o;
    memset(&o, 0, sizeof o);
    EXPECT_OK(infer_graph(g, &o));
    uint8_t *volatile buf = NULL;
    size_t len = 0;
    EXPECT_OK(buf = emit_onnx_buffer(g, &len));
    Graph *volatile back = NULL;
    EXPECT_OK(back = load_model_buffer(buf, len, "emitted.onnx"));
    int seen = 0;
    for (int i = 0; i < back->ntensors; i++) {
        Tensor *t = back->tensors[i];
        if (!t->data) continue;
        if (t->dtype == DT_INT4) { assert_memory_equal(t->data, ((const uint8_t[]){0x8, 0xf, 0x7}), 3); seen |= 1; }
        if (t->dtype == DT_UINT2) { assert_memory_equal(t->data, ((const uint8_t[]){0, 1, 2, 3, 3}), 5); seen |= 2; }
    }
    assert_int_equal(seen, 3);
}

/* arithmetic on a narrow type is refused, with the op named */
static void test_refused(void **state)
{
    (void)state;
    Onnx__ModelProto *m = pb_model(10, 22);
    pb_input(m, "x", DT_FLOAT8E4M3FN, "2");
    pb_output(m, "y", DT_FLOAT8E4M3FN, "2");
    pb_node(m, "Add", "add", "x,x", "y");
    Graph *g = pb_load(m);
    Options o;
    memset(&o, 0, sizeof o);
    EXPECT_FAIL(infer_graph(g, &o));
    assert_msg_has("float8e4m3fn");
    assert_msg_has("Add");
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_decode),
        T(test_round_trip),
        T(test_encode),
        T(test_cast_kernels),
        T(test_packed_initializers),
        T(test_emit_onnx_packs),
        T(test_refused),
    };
    return cmocka_run_group_tests_name("types", tests, NULL, NULL);
}
