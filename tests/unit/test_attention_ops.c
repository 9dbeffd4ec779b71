/* Unit tests of the attention family's reference kernels (runtime/c/attention.h)
 * and of Softmax on 16-bit data (o2c_softmax16_f32), called through the
 * compiler's registry, against values computed here step by step. */
#include <math.h>

#include "o2c_test.h"
#include "../../runtime/c/params/attention.h"
#include "../../runtime/c/params/norm.h"

static o2c_kernel_fn K(const char *name)
{
    const Kernel *k = kernel_find(name);
    if (!k) fail_msg("no kernel named %s", name);
    assert_non_null(k->fn);
    return k->fn;
}

static float r16(int dt, float x) { return half_to_float(dt, float_to_half(dt, x)); }

/* Softmax of bfloat16 data: every step rounded to bfloat16, the sum after
 * each add; of float16 data: the sum in float32, rounded once. */
static void test_softmax16(void **state)
{
    (void)state;
    static const int DT[2] = {DT_FLOAT16, DT_BFLOAT16};
    const float x0[5] = {0.3f, -1.25f, 2.5f, 0.71875f, -0.0625f};
    for (int t = 0; t < 2; t++) {
        int dt = DT[t];
        float x[5], y[5], want[5], e[5], m = -INFINITY, s = 0;
        for (int j = 0; j < 5; j++) {
            x[j] = r16(dt, x0[j]);
            if (x[j] > m) m = x[j];
        }
        for (int j = 0; j < 5; j++) {
            e[j] = r16(dt, expf(r16(dt, x[j] - m)));
            s = dt == DT_BFLOAT16 ? r16(dt, s + e[j]) : s + e[j];
        }
        s = r16(dt, s);
        for (int j = 0; j < 5; j++) want[j] = r16(dt, e[j] / s);
        o2c_p p;
        memset(&p, 0, sizeof p);
        p.x[0] = x;
        p.y[0] = y;
        p.k[O2C_SOFTMAX_A] = 5;
        p.k[O2C_SOFTMAX_INNER] = 1;
        p.k[O2C_SOFTMAX_HALF] = dt == DT_BFLOAT16 ? 2 : 1;
        K("o2c_softmax16_f32")(0, 1, &p);
        assert_memory_equal(y, want, sizeof want);
    }
}

/* Standard Attention, 4-D, one batch, 2 query heads sharing 1 kv head,
 * 2 query rows, 3 keys; a bool mask that masks all of row 1 of head 1 */
static void test_sdpa(void **state)
{
    (void)state;
    enum { HQ = 2, SQ = 2, SK = 3, D = 2, DV = 2 };
    const float Q[HQ * SQ * D] = {1, 0, 0.5f, -1, 0, 1, 2, 2};
    const float Kt[SK * D] = {1, 2, -1, 0, 0.5f, 0.5f};
    const float V[SK * DV] = {1, 10, 2, 20, 3, 30};
    const uint8_t M[HQ * SQ * SK] = {1, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0};
    float Y[HQ * SQ * DV], S[HQ * SQ * SK];
    o2c_p p;
    memset(&p, 0, sizeof p);
    p.x[O2C_SDPA_XQ] = Q;
    p.x[O2C_SDPA_XK] = Kt;
    p.x[O2C_SDPA_XV] = V;
    p.x[O2C_SDPA_XMASK] = M;
    p.y[0] = Y;
    p.y[1] = S;
    p.k[O2C_SDPA_B] = 1;
    p.k[O2C_SDPA_HQ] = HQ;
    p.k[O2C_SDPA_HKV] = 1;
    p.k[O2C_SDPA_SQ] = SQ;
    p.k[O2C_SDPA_SKV] = SK;
    p.k[O2C_SDPA_D] = D;
    p.k[O2C_SDPA_DV] = DV;
    const int64_t qs[3] = {HQ * SQ * D, SQ * D, D}, ks[3] = {SK * D, SK * D, D}, vs[3] = {SK * DV, SK * DV, DV};
    const int64_t ys[3] = {HQ * SQ * DV, SQ * DV, DV}, ms[3] = {HQ * SQ * SK, SQ * SK, SK};
    for (int a = 0; a < 3; a++) {
        p.k[O2C_SDPA_QS + a] = qs[a];
        p.k[O2C_SDPA_KS + a] = ks[a];
        p.k[O2C_SDPA_VS + a] = vs[a];
        p.k[O2C_SDPA_YS + a] = ys[a];
        p.k[O2C_SDPA_MS + a] = ms[a];
    }
    p.k[O2C_SDPA_MCOLS] = SK;
    p.k[O2C_SDPA_MBOOL] = 1;
    p.k[O2C_SDPA_LEFT] = p.k[O2C_SDPA_RIGHT] = -1;
    p.k[O2C_SDPA_STOP] = -1;
    p.f[O2C_SDPA_FSCALE] = 1;
    p.ff[O2C_SDPA_FSCALE] = 1;
    K("o2c_sdpa_f32")(0, HQ * SQ, &p);
    for (int h = 0; h < HQ; h++)
        for (int i = 0; i < SQ; i++) {
            const float *q = Q + (h * SQ + i) * D;
            const uint8_t *m = M + (h * SQ + i) * SK;
            double sc[SK], mx = -INFINITY, sum = 0, any = 0;
            for (int j = 0; j < SK; j++) {
                sc[j] = m[j] ? (double)q[0] * Kt[j * D] + (double)q[1] * Kt[j * D + 1] : -INFINITY;
                if (sc[j] > mx) mx = sc[j];
                any += m[j];
            }
            for (int j = 0; j < SK; j++) sum += m[j] ? exp(sc[j] - mx) : 0;
            for (int c = 0; c < DV; c++) {
                double y = 0;
                for (int j = 0; j < SK; j++) y += any ? (m[j] ? exp(sc[j] - mx) / sum : 0) * V[j * DV + c] : 0;
                assert_true(fabs(Y[(h * SQ + i) * DV + c] - y) < 1e-5 * (1 + fabs(y)));
            }
        }
    /* the fully masked row is zero, not NaN */
    assert_true(Y[3 * DV] == 0 && Y[3 * DV + 1] == 0);
}

/* RotaryEmbedding, one head of 4, interleaved and not, cache rows by position */
static void test_rotary(void **state)
{
    (void)state;
    const float X[4] = {1, 2, 3, 4};
    const float C[4] = {1, 1, 0.5f, 0.25f}, Sn[4] = {0, 0, 0.75f, -1};   /* 2 positions x 2 */
    const int64_t pos[1] = {1};
    for (int inter = 0; inter < 2; inter++) {
        float Y[4];
        o2c_p p;
        memset(&p, 0, sizeof p);
        p.x[O2C_ROT_XX] = X;
        p.x[O2C_ROT_XCOS] = C;
        p.x[O2C_ROT_XSIN] = Sn;
        p.x[O2C_ROT_XPOS] = pos;
        p.y[0] = Y;
        p.k[O2C_ROT_S] = 1;
        p.k[O2C_ROT_H] = 1;
        p.k[O2C_ROT_HD] = 4;
        p.k[O2C_ROT_RD] = 4;
        p.k[O2C_ROT_INTER] = inter;
        p.k[O2C_ROT_XS] = 4;
        p.k[O2C_ROT_XS + 1] = 4;
        p.k[O2C_ROT_XS + 2] = 4;
        p.k[O2C_ROT_NPOS] = 2;
        K("o2c_rotary_f32")(0, 1, &p);
        /* pairs (0, 2), (1, 3); interleaved (0, 1), (2, 3); cos (0.5, 0.25), sin (0.75, -1) */
        const int a0 = 0, b0 = inter ? 1 : 2, a1 = inter ? 2 : 1, b1 = 3;
        assert_true(Y[a0] == 0.5f * X[a0] - 0.75f * X[b0] && Y[b0] == 0.75f * X[a0] + 0.5f * X[b0]);
        assert_true(Y[a1] == 0.25f * X[a1] + 1.0f * X[b1] && Y[b1] == -1.0f * X[a1] + 0.25f * X[b1]);
    }
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_softmax16),
        T(test_sdpa),
        T(test_rotary),
    };
    return cmocka_run_group_tests_name("attention_ops", tests, NULL, NULL);
}
