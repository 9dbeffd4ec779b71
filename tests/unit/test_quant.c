/* Unit tests of the quantization kernels' arithmetic (runtime/c/quant.h):
 * the exact requantization o2c_q_requant against double arithmetic where
 * that is exact, its ties, and o2c_q_prec against the runtime's float16 /
 * bfloat16 conversions. */
#include <math.h>
#include <stdlib.h>

#include "o2c_test.h"
#include "../../runtime/c/params/elementwise.h"   /* the 16-bit conversions types.h uses */
#include "../../runtime/c/elementwise.h"
#include "../../runtime/c/params/types.h"   /* the narrow types' conversions (o2c_quantize_f32_n) */
#include "../../runtime/c/types.h"
#include "../../runtime/c/params/quant.h"
#include "../../runtime/c/quant.h"

/* a pseudo-random sequence of its own (the same on every platform) */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

/* round(acc * m + zp) saturated, in double: exact while |acc| < 2^29 (its
 * product with a 24-bit significand fits 53 bits) */
static int64_t requant_double(int32_t acc, float m, int64_t zp, int64_t lo, int64_t hi)
{
    double v = nearbyint((double)acc * (double)m + (double)zp);
    return v < (double)lo ? lo : v > (double)hi ? hi : (int64_t)v;
}

static void test_requant_random(void **state)
{
    (void)state;
    for (int i = 0; i < 200000; i++) {
        int32_t acc = (int32_t)(rnd() % (1u << 29)) - (1 << 28);
        if (i % 3 == 0) acc >>= rnd() % 28;                 /* small accumulators too */
        float m = ldexpf(1.0f + (float)(rnd() % (1u << 23)) / (float)(1u << 23), (int)(rnd() % 48) - 40);
        if (i % 7 == 0) m = -m;
        int64_t zp = (int64_t)(rnd() % 384) - 128;
        int64_t lo = i % 2 ? -128 : 0, hi = i % 2 ? 127 : 255;
        if (i % 5 == 0) { lo = -32768; hi = 65535; }
        int64_t got = o2c_q_requant(acc, m, zp, lo, hi), want = requant_double(acc, m, zp, lo, hi);
        if (got != want) fail_msg("acc %ld m %a zp %ld: got %ld, want %ld", (long)acc, (double)m, (long)zp, (long)got, (long)want);
    }
}

/* exact halves round to the even neighbour of the sum with the zero point */
static void test_requant_ties(void **state)
{
    (void)state;
    assert_int_equal(o2c_q_requant(5, 0.5f, 0, -128, 127), 2);     /* 2.5 -> 2 */
    assert_int_equal(o2c_q_requant(5, 0.5f, 1, -128, 127), 4);     /* 3.5 -> 4, not round(2.5) + 1 */
    assert_int_equal(o2c_q_requant(-5, 0.5f, 0, -128, 127), -2);   /* -2.5 -> -2 */
    assert_int_equal(o2c_q_requant(-5, 0.5f, 1, -128, 127), -2);   /* -1.5 -> -2 */
    assert_int_equal(o2c_q_requant(3, 0.25f, 0, -128, 127), 1);    /* 0.75 -> 1 */
    assert_int_equal(o2c_q_requant(1000, 1.0f, 0, -128, 127), 127);
    assert_int_equal(o2c_q_requant(-1000, 1.0f, 10, 0, 255), 0);
    assert_int_equal(o2c_q_requant(7, 3.0f, 2, 0, 255), 23);       /* an integer multiplier */
    assert_int_equal(o2c_q_requant(INT32_MIN, 1e30f, 0, -128, 127), -128);
    assert_int_equal(o2c_q_requant(INT32_MAX, 1e-30f, 3, -128, 127), 3);
    assert_int_equal(o2c_q_requant(1, NAN, 3, 0, 255), 0);
    assert_int_equal(o2c_q_requant(2, INFINITY, 3, 0, 255), 255);
    assert_int_equal(o2c_q_requant(0, 0.0f, 9, 0, 255), 9);
}

static void test_prec(void **state)
{
    (void)state;
    for (int i = 0; i < 200000; i++) {
        float v = ldexpf((float)(rnd() % (1u << 24)) / (float)(1u << 24), (int)(rnd() % 70) - 40);
        if (i % 2) v = -v;
        float h = half_to_float(DT_FLOAT16, float_to_half(DT_FLOAT16, v));
        float b = half_to_float(DT_BFLOAT16, float_to_half(DT_BFLOAT16, v));
        if (o2c_q_prec(v, O2C_QPREC_F16) != h) fail_msg("f16 %a: %a, want %a", (double)v, (double)o2c_q_prec(v, O2C_QPREC_F16), (double)h);
        if (o2c_q_prec(v, O2C_QPREC_BF16) != b) fail_msg("bf16 %a: %a, want %a", (double)v, (double)o2c_q_prec(v, O2C_QPREC_BF16), (double)b);
        assert_true(o2c_q_prec(v, O2C_QPREC_NONE) == v);
    }
    assert_true(isinf(o2c_q_prec(65520.0f, O2C_QPREC_F16)));
    assert_true(o2c_q_prec(65519.0f, O2C_QPREC_F16) == 65504.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requant_random),
        cmocka_unit_test(test_requant_ties),
        cmocka_unit_test(test_prec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
