/* Unit tests of the vectorizable float math of runtime/c/o2c_rt.h
 * (o2c_vexp_f32, o2c_vlog_f32, o2c_vlog1p_f32, o2c_vtanh_f32, o2c_verf_f32,
 * o2c_vsigmoid_f32) against libm in double precision, the oracle:
 *
 *  - a sweep over float bit patterns, every STRIDE-th one (1021 here;
 *    O2C_VMATH_STRIDE=1 in the environment takes all 2^32: `make
 *    vmath-exhaustive`, docs/HACKING.md): the largest error in units in
 *    the last place of a normal result within each function's bound, a
 *    subnormal result within one subnormal step, an infinite or NaN result
 *    exactly where the exact one is;
 *  - the special values of C99's Annex F, exactly;
 *  - the activations built on them (the linear kernels' epilogue,
 *    o2c_epi_f32: sigmoid, tanh, SiLU, GELU in both forms, Mish) on a dense
 *    sweep of [-30, 30], within a few float steps of the double formula. */
#include <math.h>
#include <stdio.h>

#include "o2c_test.h"
/* runtime/c/o2c_rt.h: through ir.h */

typedef float (*vfn)(float);
typedef double (*dfn)(double);

static double sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }

/* name, function, oracle, bound in ulp (the exhaustive maxima of
 * docs/HACKING.md "Vectorized math", with and without fused multiply-add,
 * rounded up) */
static const struct {
    const char *name;
    vfn f;
    dfn d;
    double bound;
} FNS[] = {
    {"exp", o2c_vexp_f32, exp, 1.3},         {"log", o2c_vlog_f32, log, 2.0},
    {"log1p", o2c_vlog1p_f32, log1p, 2.5},   {"tanh", o2c_vtanh_f32, tanh, 2.5},
    {"erf", o2c_verf_f32, erf, 1.5},         {"sigmoid", o2c_vsigmoid_f32, sigmoid_d, 2.9},
};
#define NFNS (int)(sizeof FNS / sizeof FNS[0])

#define FLT_MIN_NORMAL 1.17549435082228750797e-38
#define FLT_SUB_STEP 1.40129846432481707092e-45   /* 2^-149 */

/* one unit in the last place of a float of magnitude |r| (normal) */
static double ulp_at(double r)
{
    int e;
    (void)frexp(fabs(r), &e);   /* 2^(e-1) <= |r| < 2^e */
    return ldexp(1.0, e - 24);
}

static uint32_t stride(void)
{
    const char *s = getenv("O2C_VMATH_STRIDE");
    long v = s ? strtol(s, NULL, 10) : 1021;
    return v >= 1 ? (uint32_t)v : 1021u;
}

static void test_sweep(void **state)
{
    (void)state;
    const uint32_t st = stride();
    for (int k = 0; k < NFNS; k++) {
        double worst = 0;
        float worst_x = 0;
        long checked = 0, wrong = 0;
        float wrong_x = 0;
        for (uint64_t b = 0; b < (1ull << 32); b += st) {
            const uint32_t u = (uint32_t)b;
            float x;
            memcpy(&x, &u, sizeof x);
            const float g = FNS[k].f(x);
            const double r = FNS[k].d((double)x);
            checked++;
            int ok;
            if (isnan(r)) ok = isnan(g);
            else if (fabs(r) > 3.40282346638528859812e38) ok = (double)g == (double)(float)r;   /* overflow: +-inf */
            else if (fabs(r) < FLT_MIN_NORMAL) ok = fabs((double)g - r) <= FLT_SUB_STEP;
            else {
                const double e = fabs((double)g - r) / ulp_at(r);
                if (e > worst) {
                    worst = e;
                    worst_x = x;
                }
                ok = e <= FNS[k].bound;
            }
            if (!ok && !wrong++) wrong_x = x;
        }
        printf("  %-8s %ld inputs (every %u-th float): largest error %.3f ulp at %a\n", FNS[k].name, checked, st,
               worst, (double)worst_x);
        if (wrong)
            fail_msg("%s: %ld inputs beyond the bound (%.1f ulp), first %a: %a, libm %a", FNS[k].name, wrong,
                     FNS[k].bound, (double)wrong_x, (double)FNS[k].f(wrong_x), FNS[k].d((double)wrong_x));
    }
}

static int same(float a, float b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }

static void test_specials(void **state)
{
    (void)state;
    const float inf = HUGE_VALF, nan_ = NAN;
    const struct {
        const char *what;
        float got, want;
    } cases[] = {
        {"exp(0)", o2c_vexp_f32(0.0f), 1.0f},
        {"exp(-0)", o2c_vexp_f32(-0.0f), 1.0f},
        {"exp(inf)", o2c_vexp_f32(inf), inf},
        {"exp(-inf)", o2c_vexp_f32(-inf), 0.0f},
        {"exp(NaN)", o2c_vexp_f32(nan_), nan_},
        {"exp(89)", o2c_vexp_f32(89.0f), inf},
        {"exp(1e30)", o2c_vexp_f32(1e30f), inf},
        {"exp(-104)", o2c_vexp_f32(-104.0f), 0.0f},
        {"exp(-1e30)", o2c_vexp_f32(-1e30f), 0.0f},
        {"log(1)", o2c_vlog_f32(1.0f), 0.0f},
        {"log(0)", o2c_vlog_f32(0.0f), -inf},
        {"log(-0)", o2c_vlog_f32(-0.0f), -inf},
        {"log(inf)", o2c_vlog_f32(inf), inf},
        {"log(-1)", o2c_vlog_f32(-1.0f), nan_},
        {"log(-inf)", o2c_vlog_f32(-inf), nan_},
        {"log(NaN)", o2c_vlog_f32(nan_), nan_},
        {"log(2^-149)", o2c_vlog_f32(1.40129846e-45f), (float)log(1.40129846e-45)},
        {"log1p(0)", o2c_vlog1p_f32(0.0f), 0.0f},
        {"log1p(-0)", o2c_vlog1p_f32(-0.0f), -0.0f},
        {"log1p(-1)", o2c_vlog1p_f32(-1.0f), -inf},
        {"log1p(-2)", o2c_vlog1p_f32(-2.0f), nan_},
        {"log1p(inf)", o2c_vlog1p_f32(inf), inf},
        {"log1p(NaN)", o2c_vlog1p_f32(nan_), nan_},
        {"log1p(1e-30)", o2c_vlog1p_f32(1e-30f), 1e-30f},
        {"tanh(0)", o2c_vtanh_f32(0.0f), 0.0f},
        {"tanh(-0)", o2c_vtanh_f32(-0.0f), -0.0f},
        {"tanh(inf)", o2c_vtanh_f32(inf), 1.0f},
        {"tanh(-inf)", o2c_vtanh_f32(-inf), -1.0f},
        {"tanh(NaN)", o2c_vtanh_f32(nan_), nan_},
        {"erf(0)", o2c_verf_f32(0.0f), 0.0f},
        {"erf(-0)", o2c_verf_f32(-0.0f), -0.0f},
        {"erf(inf)", o2c_verf_f32(inf), 1.0f},
        {"erf(-inf)", o2c_verf_f32(-inf), -1.0f},
        {"erf(NaN)", o2c_verf_f32(nan_), nan_},
        {"sigmoid(0)", o2c_vsigmoid_f32(0.0f), 0.5f},
        {"sigmoid(inf)", o2c_vsigmoid_f32(inf), 1.0f},
        {"sigmoid(-inf)", o2c_vsigmoid_f32(-inf), 0.0f},
        {"sigmoid(NaN)", o2c_vsigmoid_f32(nan_), nan_},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!same(cases[i].got, cases[i].want))
            fail_msg("%s = %a, want %a", cases[i].what, (double)cases[i].got, (double)cases[i].want);
}

/* the epilogue's activations (o2c_epi_f32) against the double formulas */
static double act_d(int act, double x)
{
    switch (act) {
    case O2C_ACT_SIGMOID: return 1 / (1 + exp(-x));
    case O2C_ACT_TANH: return tanh(x);
    case O2C_ACT_SILU: return x / (1 + exp(-x));
    case O2C_ACT_GELU_ERF: return x * (erf(x * 0.70710678118654752440) + 1) / 2;
    case O2C_ACT_GELU_TANH: return x * (tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)) + 1) / 2;
    default: return x * tanh(log1p(exp(x)));   /* Mish */
    }
}

static void test_activations(void **state)
{
    (void)state;
    static const struct {
        int act;
        const char *name;
    } ACTS[] = {{O2C_ACT_SIGMOID, "sigmoid"}, {O2C_ACT_TANH, "tanh"},         {O2C_ACT_SILU, "silu"},
                {O2C_ACT_GELU_ERF, "gelu"},   {O2C_ACT_GELU_TANH, "gelu_tanh"}, {O2C_ACT_MISH, "mish"}};
    o2c_p p;
    memset(&p, 0, sizeof p);
    for (size_t a = 0; a < sizeof ACTS / sizeof ACTS[0]; a++) {
        p.k[O2C_EPI_ACT] = ACTS[a].act;
        double worst = 0;
        float worst_x = 0;
        for (int i = -600000; i <= 600000; i++) {
            const float x = (float)i * 5e-5f;
            const double r = act_d(ACTS[a].act, (double)x);
            const double g = (double)o2c_epi_f32(x, 0, 0, &p);
            /* relative to the result for sigmoid and tanh; for x f(x)
             * (SiLU, GELU, Mish) relative to the larger of the result and
             * x: for a negative x, f(x) = 1 + erf(x / sqrt 2) and the like
             * are small differences of floats near 1, in libm's float
             * functions as here */
            const int times_x = ACTS[a].act != O2C_ACT_SIGMOID && ACTS[a].act != O2C_ACT_TANH;
            const double scale = times_x ? fmax(fabs(r), fabs((double)x)) : fabs(r);
            const double e = scale > 0 ? fabs(g - r) / (scale * 0x1p-24) : fabs(g - r);
            if (e > worst) {
                worst = e;
                worst_x = x;
            }
        }
        printf("  %-10s [-30, 30] step 5e-5: largest error %.2f float steps at %a\n", ACTS[a].name, worst,
               (double)worst_x);
        if (worst > 5) fail_msg("%s: %.2f float steps from the double formula at %a", ACTS[a].name, worst, (double)worst_x);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep),
        cmocka_unit_test(test_specials),
        cmocka_unit_test(test_activations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
