/* Unit tests of float_text_fast (compiler/float_text.c): the shortest
 * round-trip text of a float constant by integer arithmetic must be the text
 * of the snprintf("%.6g".."%.9g") / strtof loop it replaces (emit_common.c's
 * put_float), byte for byte, so generated files stay the same. */
#include <math.h>
#include <stdio.h>

#include "o2c_test.h"

static void slow_text(float v, char *buf)
{
    for (int prec = 6; prec <= 9; prec++) {
        snprintf(buf, 48, "%.*g", prec, (double)v);
        if (strtof(buf, NULL) == v) break;
    }
}

static void check(float v, long *handled)
{
    char a[48], b[48];
    if (!float_text_fast(v, a)) return;
    ++*handled;
    slow_text(v, b);
    if (strcmp(a, b)) fail_msg("%.9g: float_text_fast wrote %s, the snprintf loop %s", (double)v, a, b);
}

/* a stride over every bit pattern, and every float next to 10^k and 2^k */
static void test_same_text(void **state)
{
    (void)state;
    long handled = 0;
    for (uint64_t u = 0; u < 0x100000000ull; u += 4099) {
        uint32_t bits = (uint32_t)u;
        float v;
        memcpy(&v, &bits, sizeof v);
        check(v, &handled);
    }
    for (int k = -10; k <= 10; k++) {
        float c[2] = {(float)pow(10.0, k), ldexpf(1.0f, 3 * k)};
        for (int j = 0; j < 2; j++) {
            uint32_t cb;
            memcpy(&cb, &c[j], sizeof cb);
            for (int d = -300; d <= 300; d++) {
                uint32_t bits = cb + (uint32_t)d;
                float v;
                memcpy(&v, &bits, sizeof v);
                check(v, &handled);
                check(-v, &handled);
            }
        }
    }
    float some[] = {1.0f, 0.1f, 0.5f, 1e-5f, 123456.0f, 1234567.0f, 9.9999999e5f, 1e-4f, 9.99999e-5f, 3.4028e9f};
    for (size_t i = 0; i < sizeof some / sizeof some[0]; i++) check(some[i], &handled);
    assert_true(handled > 200000);   /* about 320000 */
}

/* what it leaves to the slow way */
static void test_declines(void **state)
{
    (void)state;
    char buf[48];
    assert_int_equal(float_text_fast(0.0f, buf), 0);
    assert_int_equal(float_text_fast(-0.0f, buf), 0);
    assert_int_equal(float_text_fast(INFINITY, buf), 0);
    assert_int_equal(float_text_fast(NAN, buf), 0);
    assert_int_equal(float_text_fast(1e-30f, buf), 0);
    assert_int_equal(float_text_fast(3e38f, buf), 0);
    assert_int_equal(float_text_fast(1e-40f, buf), 0);   /* subnormal */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_text),
        cmocka_unit_test(test_declines),
    };
    return cmocka_run_group_tests_name("float_text", tests, NULL, NULL);
}
