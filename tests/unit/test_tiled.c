/* Unit tests of the register-tiled kernel variants (o2c_matmul_tile_f32,
 * o2c_conv_tile_f32) against their reference kernels, the oracle: the same
 * parameter block, every edge of the tiling (partial tiles in every
 * dimension, batches with broadcasting, groups, depthwise, strides,
 * dilations, padding, the pointwise layout the lowering uses) and the fused
 * epilogue. */
#include <math.h>

#include "o2c_test.h"
#include "../../runtime/c/conv.h"
#include "../../runtime/c/params/matmul.h"
#include "../../runtime/c/matmul.h"

static o2c_kernel_fn K(const char *name)
{
    const Kernel *k = kernel_find(name);
    if (!k) fail_msg("no kernel named %s", name);
    assert_non_null(k->fn);
    return k->fn;
}

static uint32_t rng = 12345u;

static float *randf(int64_t n)
{
    float *v = xalloc(sizeof(float) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) {
        rng = rng * 1664525u + 1013904223u;
        v[i] = (float)((double)(rng >> 8) / (double)(1u << 24) * 2.0 - 1.0);
    }
    return v;
}

static void expect_close(const float *got, const float *want, int64_t n, const char *what)
{
    for (int64_t i = 0; i < n; i++)
        if (!(fabsf(got[i] - want[i]) <= 1e-5f * (1.0f + fabsf(want[i]))))
            fail_msg("%s: element %lld is %.9g, the reference says %.9g", what, (long long)i, got[i], want[i]);
}

/* ---- matmul ---- */

typedef struct { int64_t batch, M, N, K; int bcast_b, bias, epi; } MM;

static void check_matmul(MM t)
{
    float *A = randf(t.batch * t.M * t.K), *B = randf((t.bcast_b ? 1 : t.batch) * t.K * t.N);
    float *Cb = randf(t.N), *R = randf(t.batch * t.M * t.N);
    int64_t ny = t.batch * t.M * t.N;
    float *ref = xalloc(sizeof(float) * (size_t)(ny + 1)), *got = xalloc(sizeof(float) * (size_t)(ny + 1));
    for (int64_t i = 0; i < ny; i++) ref[i] = got[i] = NAN;   /* every output must be written */
    o2c_p p;
    memset(&p, 0, sizeof p);
    p.x[0] = A; p.x[1] = B;
    p.k[O2C_MATMUL_M] = t.M; p.k[O2C_MATMUL_N] = t.N; p.k[O2C_MATMUL_K] = t.K;
    p.k[O2C_MATMUL_SAM] = t.K; p.k[O2C_MATMUL_SAK] = 1; p.k[O2C_MATMUL_SBK] = t.N; p.k[O2C_MATMUL_SBN] = 1;
    if (t.batch > 1) {
        p.k[O2C_MATMUL_R] = 1; p.k[O2C_MATMUL_BDIMS] = t.batch;
        p.k[O2C_MATMUL_ASTR] = t.M * t.K; p.k[O2C_MATMUL_BSTR] = t.bcast_b ? 0 : t.K * t.N;
    }
    p.f[O2C_MATMUL_F_ALPHA] = 1.5; p.ff[O2C_MATMUL_F_ALPHA] = 1.5f;   /* float kernels read the float copies */
    if (t.bias) { p.x[2] = Cb; p.k[O2C_MATMUL_HASC] = 1; p.k[O2C_MATMUL_SCM] = 0; p.k[O2C_MATMUL_SCN] = 1;
                  p.f[O2C_MATMUL_F_BETA] = 0.5; p.ff[O2C_MATMUL_F_BETA] = 0.5f; }
    if (t.epi) {
        p.k[O2C_EPI_ACT] = O2C_ACT_RELU;
        p.k[O2C_EPI_RES] = O2C_RES_AFTER;
        p.x[O2C_EPI_XRES] = R;
    }
    p.y[0] = ref;
    K("o2c_matmul_f32")(0, ny, &p);
    p.y[0] = got;
    int64_t tiles = t.batch * ((t.M + O2C_MM_MR - 1) / O2C_MM_MR) * ((t.N + O2C_MM_NR - 1) / O2C_MM_NR);
    K("o2c_matmul_tile_f32")(0, tiles, &p);
    char what[128];
    snprintf(what, sizeof what, "matmul batch %lld M %lld N %lld K %lld", (long long)t.batch, (long long)t.M,
             (long long)t.N, (long long)t.K);
    expect_close(got, ref, ny, what);
}

static void test_matmul_tiles(void **state)
{
    (void)state;
    static const int64_t sizes[] = {1, 3, 4, 5, 16, 17, 33};
    for (int a = 0; a < 7; a++)
        for (int b = 0; b < 7; b++)
            check_matmul((MM){1, sizes[a], sizes[b], sizes[(a + b) % 7], 0, (a + b) % 2, a % 3 == 0});
}

static void test_matmul_tiles_batched(void **state)
{
    (void)state;
    check_matmul((MM){3, 5, 20, 7, 0, 0, 0});
    check_matmul((MM){4, 8, 32, 9, 1, 1, 1});    /* B broadcast over the batch */
    check_matmul((MM){2, 1, 1, 1, 0, 1, 0});
}

/* ---- conv ---- */

typedef struct {
    int64_t N, C, M, G, ID, IH, IW, KD, KH, KW, S, D, P;
    int pointwise_layout, epi;
} CV;

static int64_t out_dim(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p)
{
    return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

static void check_conv(CV t)
{
    int64_t CG = t.C / t.G;
    int64_t KD = t.KD, PD = t.KD > 1 ? t.P : 0;
    int64_t OD = out_dim(t.ID, KD, 1, 1, PD), OH = out_dim(t.IH, t.KH, t.S, t.D, t.P),
            OW = out_dim(t.IW, t.KW, t.S, t.D, t.P);
    float *X = randf(t.N * t.C * t.ID * t.IH * t.IW), *W = randf(t.M * CG * KD * t.KH * t.KW);
    float *B = randf(t.M), *slope = randf(t.M);
    int64_t ny = t.N * t.M * OD * OH * OW;
    float *ref = xalloc(sizeof(float) * (size_t)(ny + 1)), *got = xalloc(sizeof(float) * (size_t)(ny + 1));
    for (int64_t i = 0; i < ny; i++) ref[i] = got[i] = NAN;
    o2c_p p;
    memset(&p, 0, sizeof p);
    p.x[0] = X; p.x[1] = W; p.x[2] = B;
    int64_t k[21] = {t.C, t.M, t.G, t.ID, t.IH, t.IW, OD, OH, OW, KD, t.KH, t.KW,
                     1, t.S, t.S, 1, t.D, t.D, PD, t.P, t.P};
    if (t.pointwise_layout) {   /* what the lowering gives a pointwise conv: one row */
        k[5] = t.ID * t.IH * t.IW; k[3] = k[4] = 1;
        k[8] = OD * OH * OW; k[6] = k[7] = 1;
    }
    memcpy(p.k, k, sizeof k);
    if (t.epi) {
        p.k[O2C_EPI_ACT] = O2C_ACT_PRELU;
        p.k[O2C_EPI_NSLOPE] = t.M;
        p.x[O2C_EPI_XSLOPE] = slope;
    }
    p.y[0] = ref;
    K("o2c_conv_f32")(0, ny, &p);
    p.y[0] = got;
    int64_t MG = t.M / t.G;
    static const struct { const char *kernel; int64_t nr; } variants[] = {
        {"o2c_conv_tile_f32", O2C_CV_NR}, {"o2c_conv_tile8_f32", O2C_CV_NR_NARROW}};
    for (int v = 0; v < 2; v++) {
        for (int64_t i = 0; i < ny; i++) got[i] = NAN;
        int64_t nr = variants[v].nr;
        int64_t tiles = t.N * t.G * ((MG + O2C_CV_MR - 1) / O2C_CV_MR) * p.k[6] * p.k[7] * ((p.k[8] + nr - 1) / nr);
        K(variants[v].kernel)(0, tiles, &p);
        char what[200];
        snprintf(what, sizeof what, "%s N%lld C%lld M%lld G%lld in %lldx%lldx%lld k %lldx%lldx%lld s%lld d%lld p%lld",
                 variants[v].kernel, (long long)t.N, (long long)t.C, (long long)t.M, (long long)t.G, (long long)t.ID,
                 (long long)t.IH, (long long)t.IW, (long long)KD, (long long)t.KH, (long long)t.KW, (long long)t.S,
                 (long long)t.D, (long long)t.P);
        expect_close(got, ref, ny, what);
    }
}

static void test_conv_tiles(void **state)
{
    (void)state;
    /*            N  C   M  G  ID IH  IW KD KH KW S  D  P  pw epi */
    check_conv((CV){1, 3, 8, 1, 1, 9, 16, 1, 3, 3, 1, 1, 1, 0, 0});   /* full tiles */
    check_conv((CV){1, 3, 5, 1, 1, 7, 21, 1, 3, 3, 1, 1, 1, 0, 1});   /* partial in M and W */
    check_conv((CV){2, 4, 12, 1, 1, 6, 37, 1, 5, 1, 1, 1, 2, 0, 0});  /* 5x1, batch 2 */
    check_conv((CV){1, 6, 6, 6, 1, 10, 19, 1, 3, 3, 1, 1, 1, 0, 1});  /* depthwise */
    check_conv((CV){1, 8, 4, 2, 1, 11, 23, 1, 3, 3, 2, 1, 1, 0, 0});  /* groups, stride 2 */
    check_conv((CV){1, 3, 9, 1, 1, 12, 40, 1, 3, 3, 1, 2, 2, 0, 1});  /* dilation 2 */
    check_conv((CV){1, 2, 3, 1, 1, 4, 3, 1, 3, 3, 1, 1, 3, 0, 0});    /* more padding than input */
    check_conv((CV){1, 16, 24, 1, 1, 7, 7, 1, 1, 1, 1, 1, 0, 0, 0});  /* 1x1, NCHW layout */
    check_conv((CV){2, 16, 24, 1, 1, 7, 7, 1, 1, 1, 1, 1, 0, 1, 1});  /* 1x1, the pointwise layout */
    check_conv((CV){1, 2, 3, 1, 4, 5, 18, 3, 3, 3, 1, 1, 1, 0, 0});   /* 3-D */
    check_conv((CV){1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0});    /* one element */
    check_conv((CV){1, 5, 5, 5, 1, 6, 70, 1, 5, 5, 1, 1, 2, 0, 1});   /* depthwise, full-width rows */
    check_conv((CV){2, 4, 8, 2, 1, 5, 75, 1, 3, 3, 1, 1, 1, 0, 0});   /* 4 channels a group, last tile moved left */
    check_conv((CV){1, 8, 16, 1, 1, 3, 80, 1, 1, 1, 1, 1, 0, 1, 1});  /* pointwise rows of 240 */
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_matmul_tiles),
        T(test_matmul_tiles_batched),
        T(test_conv_tiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
