/* Unit tests of the loss kernels (runtime/c/loss.h), called through the
 * compiler's registry, with the values of the ONNX spec's examples for
 * NegativeLogLikelihoodLoss and hand-computed ones for ignore_index, the
 * mean's denominator and labels outside the classes. */
#include <math.h>

#include "o2c_test.h"
#include "../../runtime/c/params/loss.h"

static o2c_kernel_fn K(const char *name)
{
    const Kernel *k = kernel_find(name);
    if (!k) fail_msg("no kernel named %s", name);
    assert_non_null(k->fn);
    return k->fn;
}

/* the spec's example: N 2, C 3, d1 2 */
static const float X[12] = {1, 2, 2, 2, 3, 2, 0, 1, 2, 2, 1, 2};
static const int64_t T64[4] = {2, 1, 0, 2};
static const float W[3] = {0.2f, 0.3f, 0.1f};

static void nll_params(o2c_p *p, const void *x, const void *t, int64_t lsize, const void *w, int64_t red)
{
    memset(p, 0, sizeof *p);
    p->x[0] = x;
    p->x[1] = t;
    p->x[2] = w;
    p->k[O2C_NLL_N] = 2;
    p->k[O2C_NLL_C] = 3;
    p->k[O2C_NLL_D] = 2;
    p->k[O2C_NLL_LSIZE] = lsize;
    p->k[O2C_NLL_REDUCTION] = red;
}

static float nll_scalar(const void *t, int64_t lsize, const void *w, int64_t red, int64_t hii, int64_t ii)
{
    o2c_p p;
    float y = -1234;
    nll_params(&p, X, t, lsize, w, red);
    p.k[O2C_NLL_HAS_II] = hii;
    p.k[O2C_NLL_II] = ii;
    p.y[0] = &y;
    K("o2c_nll_f32")(0, 1, &p);
    return y;
}

static void test_nll_none(void **state)
{
    (void)state;
    o2c_p p;
    float y[4];
    nll_params(&p, X, T64, 8, NULL, O2C_LOSS_NONE);
    p.y[0] = y;
    K("o2c_nll_f32")(0, 4, &p);
    const float want[4] = {-3, -2, -0.0f, -2};
    assert_memory_equal(y, want, sizeof want);

    /* int32 labels, weights, a part of the index space */
    const int32_t t32[4] = {2, 1, 0, 2};
    float z[4] = {7, 7, 7, 7};
    nll_params(&p, X, t32, 4, W, O2C_LOSS_NONE);
    p.y[0] = z;
    K("o2c_nll_f32")(1, 3, &p);
    assert_true(z[0] == 7 && z[3] == 7);
    assert_true(z[1] == -2 * 0.3f && z[2] == -0.0f * 0.2f);
}

static void test_nll_reductions(void **state)
{
    (void)state;
    /* spec example 2 (sum) and 3 (mean: over the weights' sum 0.7) */
    assert_float_equal(nll_scalar(T64, 8, W, O2C_LOSS_SUM, 0, 0), -1.1, 1e-6);
    assert_float_equal(nll_scalar(T64, 8, W, O2C_LOSS_MEAN, 0, 0), -1.1 / 0.7, 1e-6);
    /* unweighted mean: over the 4 samples */
    assert_float_equal(nll_scalar(T64, 8, NULL, O2C_LOSS_MEAN, 0, 0), -7.0 / 4, 1e-6);
    /* ignore_index 2: samples 0 and 3 drop out of the sum and the denominator */
    assert_float_equal(nll_scalar(T64, 8, W, O2C_LOSS_MEAN, 1, 2), -0.6 / 0.5, 1e-6);
    assert_float_equal(nll_scalar(T64, 8, NULL, O2C_LOSS_MEAN, 1, 2), -2.0 / 2, 1e-6);
    assert_float_equal(nll_scalar(T64, 8, W, O2C_LOSS_SUM, 1, 2), -0.6, 1e-6);
    /* ignore_index that no label has: as without it */
    assert_float_equal(nll_scalar(T64, 8, NULL, O2C_LOSS_MEAN, 1, -1), -7.0 / 4, 1e-6);
    /* every sample ignored: the mean is 0 / 0, the sum 0 */
    const int64_t all[4] = {-5, -5, -5, -5};
    assert_true(isnan(nll_scalar(all, 8, W, O2C_LOSS_MEAN, 1, -5)));
    assert_true(nll_scalar(all, 8, W, O2C_LOSS_SUM, 1, -5) == 0);
}

/* a label outside [0, C) that is not ignored reads nothing and gives NaN */
static void test_nll_out_of_range(void **state)
{
    (void)state;
    const int64_t bad[4] = {2, 3, 0, -1};
    o2c_p p;
    float y[4];
    nll_params(&p, X, bad, 8, W, O2C_LOSS_NONE);
    p.y[0] = y;
    K("o2c_nll_f32")(0, 4, &p);
    assert_true(y[0] == -3 * 0.1f && isnan(y[1]) && y[2] == -0.0f && isnan(y[3]));
    assert_true(isnan(nll_scalar(bad, 8, W, O2C_LOSS_SUM, 0, 0)));
    assert_true(isnan(nll_scalar(bad, 8, W, O2C_LOSS_SUM, 1, -1)));   /* 3 is not ignored */
    const int64_t bad_ii[4] = {2, 3, 0, 3};
    assert_float_equal(nll_scalar(bad_ii, 8, W, O2C_LOSS_MEAN, 1, 3), -0.3 / 0.3, 1e-6);
}

static void test_nll_f64(void **state)
{
    (void)state;
    double x[12], w[3], y = 0;
    for (int i = 0; i < 12; i++) x[i] = X[i];
    for (int i = 0; i < 3; i++) w[i] = W[i];
    o2c_p p;
    nll_params(&p, x, T64, 8, w, O2C_LOSS_MEAN);
    p.y[0] = &y;
    K("o2c_nll_f64")(0, 1, &p);
    assert_float_equal(y, -1.1 / 0.7, 1e-12);
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_nll_none),
        T(test_nll_reductions),
        T(test_nll_out_of_range),
        T(test_nll_f64),
    };
    return cmocka_run_group_tests_name("loss", tests, NULL, NULL);
}
