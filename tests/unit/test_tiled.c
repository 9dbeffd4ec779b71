/* Unit tests of the register-tiled kernel variants (o2c_matmul_tile_f32,
 * o2c_conv_tile_f32) against their reference kernels, the oracle: the same
 * parameter block, every edge of the tiling (partial tiles in every
 * dimension, batches with broadcasting, groups, depthwise, strides,
 * dilations, padding, the pointwise layout the lowering uses) and the fused
 * epilogue; the depthwise rows of o2c_dwconv_f32 and the flattened padded
 * images of o2c_dwflat_f32; the implicit GEMM of
 * o2c_conv_panel_f32 (every conv case, its weights packed here as the
 * lowering packs them); the transposed pointwise product of
 * o2c_conv_pwt_f32 and the transposed product over the taps of
 * o2c_conv_gt_f32 (every conv case of one group in 1-D or 2-D); the ArgMax
 * and ArgMin rows of o2c_argext_f32; the LayerNormalization rows of
 * o2c_layernorm_rows_f32; the softmax rows of o2c_softmax_rows_f32; the pool
 * rows of o2c_maxpool_rows_f32; o2c_gavgpool_rows_f32; chains of convs with tensors channels
 * innermost (layout.c, o2c_dwc_f32); and the C target's LSTM (one tiled projection, one call for the
 * whole recurrence) against the reference lowering of the same node. */
#include <math.h>

#include "o2c_pass_test.h"
#include "../../runtime/c/params/conv.h"
#include "../../runtime/c/params/elementwise.h"
#include "../../runtime/c/elementwise.h"   /* o2c_ldh, which conv.h's half kernels call */
#include "../../runtime/c/conv.h"
#include "../../runtime/c/params/matmul.h"
#include "../../runtime/c/params/reduce.h"
#include "../../runtime/c/params/norm.h"
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

static void expect_close_tol(const float *got, const float *want, int64_t n, const char *what, float tol)
{
    for (int64_t i = 0; i < n; i++)
        if (!(fabsf(got[i] - want[i]) <= tol * (1.0f + fabsf(want[i]))))
            fail_msg("%s: element %lld is %.9g, the reference says %.9g", what, (long long)i, got[i], want[i]);
}

/* One kernel against its reference: where the build has FMA (-mfma,
 * -march=native; tests/test_isa.py) the variants fuse multiply-adds that
 * the reference rounds twice. */
static void expect_close(const float *got, const float *want, int64_t n, const char *what)
{
    expect_close_tol(got, want, n, what, 1e-5f);
}

/* The fused epilogues the tests set (CV.epi, MM.epi): 0 none, 1 PRelu with
 * a slope per channel, then one activation of each kind of store: alike for
 * every channel with no residual (a tile's epilogue in one vector loop,
 * o2c_epi_f32_row over the tile), with the residual before or after (a
 * channel's row at a time), a scalar PRelu slope, Relu with the residual
 * after (the old MM case) */
enum { EPI_NONE, EPI_PRELU, EPI_SILU, EPI_GELU_RES_BEFORE, EPI_HARDSWISH_RES_AFTER, EPI_PRELU_SCALAR, EPI_RELU_RES_AFTER,
       EPI_MISH, EPI_MODES };
static const char *const EPI_NAMES[EPI_MODES] = {"none", "PRelu", "SiLU", "Gelu + residual before", "HardSwish + residual after",
                                                 "PRelu (one slope)", "Relu + residual after", "Mish"};

static void set_epi(o2c_p *p, int mode, int64_t channels, float *slope, float *res)
{
    static const int act[EPI_MODES] = {0, O2C_ACT_PRELU, O2C_ACT_SILU, O2C_ACT_GELU_ERF, O2C_ACT_HARDSWISH,
                                       O2C_ACT_PRELU, O2C_ACT_RELU, O2C_ACT_MISH};
    static const int resm[EPI_MODES] = {0, 0, 0, O2C_RES_BEFORE, O2C_RES_AFTER, 0, O2C_RES_AFTER, 0};
    p->k[O2C_EPI_ACT] = act[mode];
    p->k[O2C_EPI_RES] = resm[mode];
    if (act[mode] == O2C_ACT_PRELU) {
        p->k[O2C_EPI_NSLOPE] = mode == EPI_PRELU_SCALAR ? 1 : channels;
        p->x[O2C_EPI_XSLOPE] = slope;
    }
    if (resm[mode]) p->x[O2C_EPI_XRES] = res;
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
    float *slope = randf(t.N);
    set_epi(&p, t.epi == 1 ? EPI_RELU_RES_AFTER : t.epi, t.N, slope, R);   /* 1: the Relu case */
    p.y[0] = ref;
    K("o2c_matmul_f32")(0, ny, &p);
    p.y[0] = got;
    int64_t tiles = t.batch * ((t.M + O2C_MM_MR - 1) / O2C_MM_MR) * ((t.N + O2C_MM_NR - 1) / O2C_MM_NR);
    /* B as given, then (constant weights shared by the batch) packed as the lowering packs them */
    int can_pack = (t.batch == 1 || t.bcast_b) && t.N >= O2C_MM_NR;
    for (int packed = 0; packed <= can_pack; packed++) {
        if (packed) {
            float *bp = xalloc(sizeof(float) * (size_t)((t.N + O2C_MM_NR - 1) / O2C_MM_NR * t.K * O2C_MM_NR));
            matmul_pack_panels(B, t.K, t.N, t.N, bp);
            p.x[1] = bp;
            p.k[O2C_MATMUL_BPACKED] = 1;
        }
        for (int ncb = 0; ncb < 4; ncb++) {   /* column tiles in cache blocks of all, 1, 2, 3 (a partial last block) */
            for (int64_t i = 0; i < ny; i++) got[i] = NAN;
            p.k[O2C_MATMUL_NCB] = ncb;
            K("o2c_matmul_tile_f32")(0, tiles, &p);
            char what[128];
            snprintf(what, sizeof what, "matmul batch %lld M %lld N %lld K %lld, column blocks of %d%s, epilogue %s",
                     (long long)t.batch, (long long)t.M, (long long)t.N, (long long)t.K, ncb, packed ? ", B packed" : "",
                     EPI_NAMES[t.epi == 1 ? EPI_RELU_RES_AFTER : t.epi]);
            expect_close(got, ref, ny, what);
        }
    }
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
    check_matmul((MM){1, 40, 100, 120, 0, 1, 1});   /* panels, the last moved left */
    check_matmul((MM){3, 20, 230, 17, 0, 0, 1});    /* 8 column tiles in blocks, batched */
}

/* Every epilogue mode on full and partial tiles of the product (a row's
 * epilogue at a time; PRelu's slope per column element by element) */
static void test_matmul_epilogues(void **state)
{
    (void)state;
    for (int e = EPI_PRELU; e < EPI_MODES; e++) {
        check_matmul((MM){1, 19, 70, 13, 0, 1, e});
        check_matmul((MM){2, 8, 32, 5, 1, 0, e});
    }
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
    const int64_t geom[O2C_CONV_NK - O2C_CONV_IN] = {t.ID, t.IH, t.IW, OD, OH, OW, KD, t.KH, t.KW,
                                                     1, t.S, t.S, 1, t.D, t.D, PD, t.P, t.P};
    p.k[O2C_CONV_C] = t.C; p.k[O2C_CONV_M] = t.M; p.k[O2C_CONV_GROUP] = t.G;
    memcpy(p.k + O2C_CONV_IN, geom, sizeof geom);   /* IN, OUT, K, S, D, PB: 3 each */
    int64_t *in = p.k + O2C_CONV_IN, *out = p.k + O2C_CONV_OUT;
    if (t.pointwise_layout) {   /* what the lowering gives a pointwise conv: one row */
        in[2] = t.ID * t.IH * t.IW; in[0] = in[1] = 1;
        out[2] = OD * OH * OW; out[0] = out[1] = 1;
    }
    set_epi(&p, t.epi, t.M, slope, randf(ny));
    p.y[0] = ref;
    K("o2c_conv_f32")(0, ny, &p);
    p.y[0] = got;
    int64_t MG = t.M / t.G;
    static const struct { const char *kernel; int64_t nr; } variants[] = {
        {"o2c_conv_tile_f32", O2C_CV_NR}, {"o2c_conv_tile8_f32", O2C_CV_NR_NARROW}};
    for (int v = 0; v < 2; v++) {
        for (int64_t i = 0; i < ny; i++) got[i] = NAN;
        int64_t nr = variants[v].nr;
        int64_t tiles = t.N * t.G * ((MG + O2C_CV_MR - 1) / O2C_CV_MR) * out[0] * out[1] * ((out[2] + nr - 1) / nr);
        K(variants[v].kernel)(0, tiles, &p);
        char what[200];
        snprintf(what, sizeof what, "%s (epilogue %s) N%lld C%lld M%lld G%lld in %lldx%lldx%lld k %lldx%lldx%lld s%lld d%lld p%lld",
                 variants[v].kernel, EPI_NAMES[t.epi], (long long)t.N, (long long)t.C, (long long)t.M, (long long)t.G, (long long)t.ID,
                 (long long)t.IH, (long long)t.IW, (long long)KD, (long long)t.KH, (long long)t.KW, (long long)t.S,
                 (long long)t.D, (long long)t.P);
        expect_close(got, ref, ny, what);
    }
    if (t.pointwise_layout && t.G == 1) {   /* the transposed product: weights packed C x MP as conv.h says */
        int64_t MP = (t.M + O2C_PW_NR - 1) / O2C_PW_NR * O2C_PW_NR, S = p.k[O2C_CONV_OUT + 2];
        float *wt = xalloc(sizeof(float) * (size_t)(t.C * MP + 1));
        for (int64_t c = 0; c < t.C; c++)
            for (int64_t m = 0; m < MP; m++) wt[c * MP + m] = m < t.M ? W[m * t.C + c] : 0.0f;
        for (int64_t i = 0; i < ny; i++) got[i] = NAN;
        p.x[1] = wt;
        K("o2c_conv_pwt_f32")(0, t.N * ((S + O2C_PW_MR - 1) / O2C_PW_MR) * (MP / O2C_PW_NR), &p);
        p.x[1] = W;
        char what[160];
        snprintf(what, sizeof what, "o2c_conv_pwt_f32 (epilogue %s) N%lld C%lld M%lld pixels %lld", EPI_NAMES[t.epi], (long long)t.N,
                 (long long)t.C, (long long)t.M, (long long)S);
        expect_close(got, ref, ny, what);
    }
    if (!t.pointwise_layout && t.G == 1 && KD == 1 && t.ID == 1) {
        /* the transposed product over the taps: weights packed (tap, C) x MP as conv.h says */
        int64_t MP = (t.M + O2C_PW_NR - 1) / O2C_PW_NR * O2C_PW_NR, taps = t.KH * t.KW, S = OH * OW;
        float *wt = xalloc(sizeof(float) * (size_t)(taps * t.C * MP + 1));
        for (int64_t tap = 0; tap < taps; tap++)
            for (int64_t c = 0; c < t.C; c++)
                for (int64_t m = 0; m < MP; m++)
                    wt[(tap * t.C + c) * MP + m] = m < t.M ? W[(m * t.C + c) * taps + tap] : 0.0f;
        for (int64_t i = 0; i < ny; i++) got[i] = NAN;
        p.x[1] = wt;
        K("o2c_conv_gt_f32")(0, t.N * ((S + O2C_PW_MR - 1) / O2C_PW_MR) * (MP / O2C_PW_NR), &p);
        p.x[1] = W;
        char what[160];
        snprintf(what, sizeof what, "o2c_conv_gt_f32 (epilogue %s) N%lld C%lld M%lld k %lldx%lld pixels %lld", EPI_NAMES[t.epi],
                 (long long)t.N, (long long)t.C, (long long)t.M, (long long)t.KH, (long long)t.KW, (long long)S);
        expect_close(got, ref, ny, what);
        /* pixels x a vector of channels over a padded image: weights (C, tap) x MP16 as conv.h says */
        int64_t MV = (t.M + O2C_PV_NR - 1) / O2C_PV_NR * O2C_PV_NR;
        int64_t Hp = (OH - 1) * t.S + (t.KH - 1) * t.D + 1, Wp = (OW - 1) * t.S + (t.KW - 1) * t.D + 1;
        float *wv = xalloc(sizeof(float) * (size_t)(taps * t.C * MV + 1));
        float *pad = xalloc(sizeof(float) * (size_t)(t.C * Hp * Wp + 1));
        for (int64_t c = 0; c < t.C; c++)
            for (int64_t tap = 0; tap < taps; tap++)
                for (int64_t m = 0; m < MV; m++)
                    wv[(c * taps + tap) * MV + m] = m < t.M ? W[(m * t.C + c) * taps + tap] : 0.0f;
        for (int64_t i = 0; i < ny; i++) got[i] = NAN;
        p.x[1] = wv;
        void *scratch = p.y[1];
        p.y[1] = pad;
        K("o2c_conv_pv_f32")(0, t.N * (MV / O2C_PV_NR), &p);
        p.x[1] = W;
        p.y[1] = scratch;
        snprintf(what, sizeof what, "o2c_conv_pv_f32 (epilogue %s) N%lld C%lld M%lld k %lldx%lld s%lld d%lld pixels %lld",
                 EPI_NAMES[t.epi], (long long)t.N, (long long)t.C, (long long)t.M, (long long)t.KH, (long long)t.KW, (long long)t.S,
                 (long long)t.D, (long long)S);
        expect_close(got, ref, ny, what);
    }
    /* the implicit GEMM, every register tile of O2C_PANEL_TILES: weights
     * packed as conv.h says (MR channels to a k), a K x NR panel */
    static const int tiles[][2] = {
#define TILE(MR, NR) {MR, NR},
        O2C_PANEL_TILES(TILE)
#undef TILE
    };
    for (size_t ti = 0; ti < sizeof tiles / sizeof tiles[0] && !t.pointwise_layout; ti++) {
        const int64_t MR = tiles[ti][0], NR = tiles[ti][1];
        char kname[64];
        if (ti) snprintf(kname, sizeof kname, "o2c_conv_panel_f32_%dx%d", tiles[ti][0], tiles[ti][1]);
        else snprintf(kname, sizeof kname, "o2c_conv_panel_f32");
        int64_t KG = CG * KD * t.KH * t.KW, TM = (MG + MR - 1) / MR;
        float *wp = xalloc(sizeof(float) * (size_t)(t.G * TM * KG * MR + 1));
        float *panel = xalloc(sizeof(float) * (size_t)(KG * NR + 1));
        for (int64_t g = 0; g < t.G; g++)
            for (int64_t tm = 0; tm < TM; tm++)
                for (int64_t kk = 0; kk < KG; kk++)
                    for (int64_t i = 0; i < MR; i++) {
                        int64_t m = tm * MR + i;
                        wp[((g * TM + tm) * KG + kk) * MR + i] = m < MG ? W[(g * MG + m) * KG + kk] : 0.0f;
                    }
        for (int64_t i = 0; i < ny; i++) got[i] = NAN;
        p.x[1] = wp;
        p.y[1] = panel;
        K(kname)(0, t.N * t.G * OD * ((OH * OW + NR - 1) / NR), &p);
        p.x[1] = W;
        p.y[1] = NULL;
        char what[240];
        snprintf(what, sizeof what, "%s (epilogue %s) N%lld C%lld M%lld G%lld in %lldx%lldx%lld k %lldx%lldx%lld s%lld d%lld p%lld",
                 kname, EPI_NAMES[t.epi], (long long)t.N, (long long)t.C, (long long)t.M, (long long)t.G, (long long)t.ID, (long long)t.IH,
                 (long long)t.IW, (long long)KD, (long long)t.KH, (long long)t.KW, (long long)t.S, (long long)t.D,
                 (long long)t.P);
        expect_close(got, ref, ny, what);
    }
    if (t.G == 1 && KD == 1 && t.ID == 1 && t.KH == 3 && t.KW == 3 && t.S == 1 && t.D == 1) {   /* Winograd */
        int64_t TM = (t.M + O2C_CV_MR - 1) / O2C_CV_MR;
        float *wu = xalloc(sizeof(float) * (size_t)(16 * TM * t.C * O2C_CV_MR));
        float *scratch = xalloc(sizeof(float) * (size_t)(16 * t.C * O2C_WG_TB + 16 * O2C_CV_MR * O2C_WG_TB));
        conv_wino_weights(W, t.M, t.C, wu);
        for (int64_t i = 0; i < ny; i++) got[i] = NAN;
        p.x[1] = wu;
        p.y[1] = scratch;
        K("o2c_conv_wino_f32")(0, t.N * ((OH + 1) / 2) * (((OW + 1) / 2 + O2C_WG_TB - 1) / O2C_WG_TB), &p);
        p.x[1] = W;
        p.y[1] = NULL;
        char what[200];
        snprintf(what, sizeof what, "o2c_conv_wino_f32 N%lld C%lld M%lld in %lldx%lld p%lld", (long long)t.N, (long long)t.C,
                 (long long)t.M, (long long)t.IH, (long long)t.IW, (long long)t.P);
        expect_close_tol(got, ref, ny, what, 1e-4f);   /* sums through the transforms */
    }
    if (CG == 1 && !t.pointwise_layout && KD == 1 && t.ID == 1) {   /* o2c_dwflat_f32 */
        int64_t wpd = (OW - 1) * t.S + (t.KW - 1) * t.D + 1, hpd = t.S * OH + (t.KH - 1) * t.D;
        float *buf = xalloc(sizeof(float) * (size_t)(hpd * wpd + (t.KW - 1) * t.D + 1));
        for (int64_t i = 0; i < ny; i++) got[i] = NAN;
        p.y[1] = buf;
        K("o2c_dwflat_f32")(0, t.N * t.M, &p);
        p.y[1] = NULL;
        char what[200];
        snprintf(what, sizeof what, "o2c_dwflat_f32 N%lld C%lld M%lld in %lldx%lld k %lldx%lld d%lld p%lld", (long long)t.N,
                 (long long)t.C, (long long)t.M, (long long)t.IH, (long long)t.IW, (long long)t.KH, (long long)t.KW,
                 (long long)t.D, (long long)t.P);
        expect_close(got, ref, ny, what);
    }
    if (CG == 1 && !t.pointwise_layout) {   /* depthwise: o2c_dwconv_f32, one output row an index */
        for (int64_t i = 0; i < ny; i++) got[i] = NAN;
        K("o2c_dwconv_f32")(0, t.N * t.M * OD * OH, &p);
        char what[200];
        snprintf(what, sizeof what, "o2c_dwconv_f32 N%lld C%lld M%lld in %lldx%lldx%lld k %lldx%lldx%lld s%lld d%lld p%lld",
                 (long long)t.N, (long long)t.C, (long long)t.M, (long long)t.ID, (long long)t.IH, (long long)t.IW,
                 (long long)KD, (long long)t.KH, (long long)t.KW, (long long)t.S, (long long)t.D, (long long)t.P);
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
    check_conv((CV){2, 5, 11, 1, 1, 9, 70, 1, 3, 3, 1, 1, 1, 0, 1});  /* 3x3: Winograd over two strips, odd sizes */
    check_conv((CV){1, 3, 8, 1, 1, 6, 6, 1, 3, 3, 1, 1, 0, 0, 0});    /* 3x3 without pads */
    check_conv((CV){1, 5, 5, 5, 1, 6, 70, 1, 5, 5, 1, 1, 2, 0, 1});   /* depthwise, full-width rows */
    check_conv((CV){2, 4, 8, 2, 1, 5, 75, 1, 3, 3, 1, 1, 1, 0, 0});   /* 4 channels a group, last tile moved left */
    check_conv((CV){1, 8, 16, 1, 1, 3, 80, 1, 1, 1, 1, 1, 0, 1, 1});  /* pointwise rows of 240 */
    /* pointwise with few pixels (the transposed product): partial pixel and channel tiles */
    check_conv((CV){1, 256, 40, 1, 1, 3, 3, 1, 1, 1, 1, 1, 0, 1, 1});  /* 9 pixels, 40 channels */
    check_conv((CV){2, 7, 33, 1, 1, 1, 5, 1, 1, 1, 1, 1, 0, 1, 0});    /* 5 pixels (< 8), batch 2 */
    /* depthwise rows of every width class of o2c_dwconv_f32 (32-blocks, 8-blocks, shorter) */
    check_conv((CV){1, 3, 3, 3, 1, 5, 75, 1, 3, 3, 1, 1, 1, 0, 1});   /* 75 wide: 32-blocks, last moved left */
    check_conv((CV){2, 4, 4, 4, 1, 9, 70, 1, 3, 3, 2, 1, 1, 0, 0});   /* stride 2, 35 wide */
    check_conv((CV){1, 2, 6, 2, 1, 6, 40, 1, 5, 5, 1, 2, 4, 0, 1});   /* multiplier 3, 5x5, dilation 2 */
    check_conv((CV){1, 3, 3, 3, 1, 7, 13, 1, 3, 3, 1, 1, 1, 0, 0});   /* 13 wide: 8-blocks */
    check_conv((CV){1, 3, 3, 3, 1, 4, 5, 1, 3, 3, 1, 1, 2, 0, 1});    /* 7 wide (pads 2): the row */
    check_conv((CV){1, 2, 2, 2, 1, 3, 34, 1, 3, 7, 1, 1, 3, 0, 0});   /* 3x7 with pads wider than the taps */
    check_conv((CV){2, 5, 5, 5, 1, 12, 12, 1, 3, 3, 1, 1, 1, 0, 1});  /* 12x12, batch 2: whole 32-blocks and a moved one */
    check_conv((CV){1, 3, 3, 3, 1, 3, 3, 1, 3, 3, 1, 1, 1, 0, 0});    /* 3x3: fewer outputs than a block */
    check_conv((CV){1, 4, 4, 4, 1, 9, 10, 1, 3, 3, 1, 1, 0, 0, 1});   /* no pads: the image larger than it needs */
    check_conv((CV){1, 6, 20, 1, 1, 26, 26, 1, 3, 3, 2, 1, 1, 0, 1}); /* 13x13 out: panels over several rows, moved back */
    check_conv((CV){1, 4, 9, 1, 2, 5, 3, 2, 3, 3, 1, 1, 1, 0, 0});    /* 3-D, rows of 3: a panel spans 11 rows */
    /* few output pixels (o2c_conv_gt_f32's pixel counts 1 to 8 and a tile moved left) */
    check_conv((CV){1, 5, 40, 1, 1, 1, 9, 1, 1, 3, 2, 1, 1, 0, 1});   /* 1-D, 5 outputs, stride 2 */
    check_conv((CV){2, 7, 33, 1, 1, 2, 2, 1, 3, 3, 1, 1, 1, 0, 0});   /* 2x2 outputs, batch 2 */
    check_conv((CV){1, 9, 70, 1, 1, 1, 3, 1, 1, 3, 2, 1, 0, 0, 1});   /* one output */
    check_conv((CV){1, 3, 6, 1, 1, 3, 7, 1, 3, 3, 1, 1, 1, 0, 1});    /* 3x7: 21 pixels, the last tile moved left */
    check_conv((CV){1, 4, 5, 1, 1, 5, 5, 1, 3, 3, 2, 2, 2, 0, 0});    /* 3x3 outputs, dilation 2 */
    /* o2c_conv_pv_f32's shapes: MNIST's 5x5 convs (1 -> 8 channels at 28x28, 8 -> 16 at 14x14), 17 -> 33
     * channels (three vectors, the last partial), strides and a pixel count below a tile */
    check_conv((CV){1, 1, 8, 1, 1, 28, 28, 1, 5, 5, 1, 1, 2, 0, 1});
    check_conv((CV){1, 8, 16, 1, 1, 14, 14, 1, 5, 5, 1, 1, 2, 0, 1});
    check_conv((CV){2, 3, 33, 1, 1, 11, 9, 1, 3, 3, 2, 1, 1, 0, 0});
    check_conv((CV){1, 2, 17, 1, 1, 9, 9, 1, 3, 3, 1, 2, 1, 0, 1});
}

/* Every epilogue mode through every conv variant: a 3x3 (panels, gt, pv,
 * tiles, Winograd), pointwise rows in the pointwise layout (pwt, tiles)
 * and a depthwise conv, with partial tiles in pixels and channels */
static void test_conv_epilogues(void **state)
{
    (void)state;
    for (int e = EPI_PRELU; e < EPI_MODES; e++) {
        /*            N  C   M  G  ID IH  IW KD KH KW S  D  P  pw epi */
        check_conv((CV){1, 5, 19, 1, 1, 9, 13, 1, 3, 3, 1, 1, 1, 0, e});
        check_conv((CV){1, 4, 33, 1, 1, 8, 9, 1, 3, 3, 2, 1, 1, 0, e});
        check_conv((CV){2, 9, 40, 1, 1, 3, 7, 1, 1, 1, 1, 1, 0, 1, e});
        check_conv((CV){1, 6, 6, 6, 1, 7, 40, 1, 3, 3, 1, 1, 1, 0, e});
    }
}

/* ---- LSTM: the whole node, lowered for the C target and for the reference ---- */

typedef struct {
    int64_t T, B, I, H;
    const char *direction;
    int layout, bias, peep, clip, input_forget, seqlens, init, outs;  /* outs: 1 Y, 2 Y + Y_h, 3 all */
    const char *acts;   /* NULL: the defaults (the tiled path); else a list (the reference path) */
} LS;

static void check_lstm(LS t)
{
    int64_t D = !strcmp(t.direction, "bidirectional") ? 2 : 1;
    Onnx__ModelProto *m = pb_model(8, 14);
    char xs[64], ys[64], ss[64];
    if (t.layout) snprintf(xs, sizeof xs, "%lldx%lldx%lld", (long long)t.B, (long long)t.T, (long long)t.I);
    else snprintf(xs, sizeof xs, "%lldx%lldx%lld", (long long)t.T, (long long)t.B, (long long)t.I);
    pb_input(m, "X", DT_FLOAT, xs);
    int64_t wd[3] = {D, 4 * t.H, t.I}, rd[3] = {D, 4 * t.H, t.H}, bd[2] = {D, 8 * t.H}, pd[2] = {D, 3 * t.H};
    pt_init_pattern(m, "W", 3, wd, 1);
    pt_init_pattern(m, "R", 3, rd, 2);
    if (t.bias) pt_init_pattern(m, "Bs", 2, bd, 3);
    if (t.peep) pt_init_pattern(m, "Pp", 2, pd, 4);
    if (t.seqlens) {
        int32_t *l = xalloc(sizeof(int32_t) * (size_t)t.B);
        for (int64_t b = 0; b < t.B; b++) l[b] = (int32_t)((t.T - b) > 0 ? t.T - b : 0);
        int64_t ld[1] = {t.B};
        pb_init_raw(m, "L", DT_INT32, 1, ld, l, sizeof(int32_t) * (size_t)t.B);
    }
    if (t.layout) snprintf(ss, sizeof ss, "%lldx%lldx%lld", (long long)t.B, (long long)D, (long long)t.H);
    else snprintf(ss, sizeof ss, "%lldx%lldx%lld", (long long)D, (long long)t.B, (long long)t.H);
    if (t.init) { pb_input(m, "H0", DT_FLOAT, ss); pb_input(m, "C0", DT_FLOAT, ss); }
    char ins[128];
    snprintf(ins, sizeof ins, "X,W,R,%s,%s,%s,%s,%s", t.bias ? "Bs" : "", t.seqlens ? "L" : "", t.init ? "H0" : "",
             t.init ? "C0" : "", t.peep ? "Pp" : "");
    Onnx__NodeProto *n = pb_node(m, "LSTM", "lstm", ins, t.outs == 1 ? "Y" : t.outs == 2 ? "Y,Yh" : "Y,Yh,Yc");
    pb_attr_s(n, "direction", t.direction);
    pb_attr_i(n, "hidden_size", t.H);
    if (t.layout) pb_attr_i(n, "layout", 1);
    if (t.clip) pb_attr_f(n, "clip", 0.75f);
    if (t.input_forget) pb_attr_i(n, "input_forget", 1);
    if (t.acts) {
        char **names = NULL;
        size_t nn = 0;
        pb_names(t.acts, &names, &nn);
        Onnx__AttributeProto *a = pb_attr(n, "activations", AT_STRINGS);
        a->strings = xalloc(sizeof(ProtobufCBinaryData) * (nn + 1));
        for (size_t i = 0; i < nn; i++) a->strings[i] = (ProtobufCBinaryData){strlen(names[i]), (uint8_t *)names[i]};
        a->n_strings = nn;
    }
    if (t.layout) snprintf(ys, sizeof ys, "%lldx%lldx%lldx%lld", (long long)t.B, (long long)t.T, (long long)D, (long long)t.H);
    else snprintf(ys, sizeof ys, "%lldx%lldx%lldx%lld", (long long)t.T, (long long)D, (long long)t.B, (long long)t.H);
    pb_output(m, "Y", DT_FLOAT, ys);
    if (t.outs >= 2) pb_output(m, "Yh", DT_FLOAT, ss);
    if (t.outs >= 3) pb_output(m, "Yc", DT_FLOAT, ss);

    Graph *ref = pt_graph(m), *got = pt_graph(m);
    pt_fill_inputs(ref, 5);
    pt_fill_inputs(got, 5);
    EXPECT_OK(graph_evaluate(ref));
    EXPECT_OK(layout_assign(got, 1));   /* channels innermost where the C target runs it so */
    EXPECT_OK(graph_evaluate_lowered(got, 1));
    for (int k = 0; k < ref->noutputs; k++) {
        char what[160];
        snprintf(what, sizeof what, "LSTM T %lld B %lld I %lld H %lld %s layout %d, output %d", (long long)t.T,
                 (long long)t.B, (long long)t.I, (long long)t.H, t.direction, t.layout, k);
        expect_close(got->outputs[k]->data, ref->outputs[k]->data, tensor_numel(ref->outputs[k]), what);
    }
}

static void test_lstm_tiled(void **state)
{
    (void)state;
    /*          T  B  I   H   direction        lay bias peep clip if sl init outs acts */
    check_lstm((LS){5, 1, 3, 8, "forward", 0, 1, 0, 0, 0, 0, 0, 3, NULL});
    check_lstm((LS){7, 3, 5, 37, "bidirectional", 0, 1, 0, 0, 0, 0, 1, 3, NULL});  /* partial blocks */
    check_lstm((LS){4, 2, 6, 70, "reverse", 1, 0, 1, 0, 0, 0, 1, 2, NULL});         /* layout 1, peepholes */
    check_lstm((LS){6, 3, 4, 33, "bidirectional", 0, 1, 1, 1, 1, 1, 0, 3, NULL});   /* clip, input_forget, lens */
    check_lstm((LS){3, 2, 130, 64, "forward", 1, 1, 0, 0, 0, 1, 1, 1, NULL});       /* lens with layout 1 */
    check_lstm((LS){4, 2, 3, 9, "forward", 0, 1, 0, 0, 0, 0, 0, 3, "Tanh,Sigmoid,Tanh"}); /* other activations: reference */
}

/* ---- Softmax / LogSoftmax over contiguous rows (o2c_softmax_rows_f32) ---- */

/* inner > 1: the axis strided (o2c_softmax_cols_f32), rows x A x inner */
static void check_softmax_in(const char *op, int64_t rows, int64_t A, int64_t inner, int with_nan)
{
    Onnx__ModelProto *m = pb_model(8, 13);
    char shape[64];
    if (inner > 1) snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)rows, (long long)A, (long long)inner);
    else snprintf(shape, sizeof shape, "%lldx%lld", (long long)rows, (long long)A);
    const int64_t total = rows * A * inner;
    pb_input(m, "x", DT_FLOAT, shape);
    Onnx__NodeProto *n = pb_node(m, op, "sm", "x", "y");
    pb_attr_i(n, "axis", 1);
    pb_output(m, "y", DT_FLOAT, shape);
    Graph *ref = pt_graph(m), *got = pt_graph(m);
    pt_fill_inputs(ref, 3);
    pt_fill_inputs(got, 3);
    float *xr = ref->inputs[0]->data, *xg = got->inputs[0]->data;
    for (int64_t i = 0; i < total; i++) xr[i] = xg[i] = xr[i] * 20.0f;   /* exponents from -40 to 40 */
    if (with_nan) xr[A + 3] = xg[A + 3] = NAN;                              /* row 1 */
    EXPECT_OK(graph_evaluate(ref));
    EXPECT_OK(layout_assign(got, 1));   /* channels innermost where the C target runs it so */
    EXPECT_OK(graph_evaluate_lowered(got, 1));
    const float *w = ref->outputs[0]->data, *g = got->outputs[0]->data;
    for (int64_t i = 0; i < total; i++) {
        if (isnan(w[i]) || isnan(g[i])) {
            if (!(isnan(w[i]) && isnan(g[i])))
                fail_msg("%s %s: element %lld is %g, the reference says %g", op, shape,
                         (long long)i, g[i], w[i]);
            continue;
        }
        if (!(fabsf(g[i] - w[i]) <= 1e-6f + 1e-5f * fabsf(w[i])))
            fail_msg("%s %s: element %lld is %.9g, the reference says %.9g", op, shape,
                     (long long)i, g[i], w[i]);
    }
}

static void check_softmax(const char *op, int64_t rows, int64_t A, int with_nan)
{
    check_softmax_in(op, rows, A, 1, with_nan);
}


static void test_softmax_rows(void **state)
{
    (void)state;
    check_softmax("Softmax", 3, 37, 0);       /* rows not a multiple of the 8 partial sums */
    check_softmax("Softmax", 4, 6625, 1);     /* long rows, one with a NaN */
    check_softmax("LogSoftmax", 5, 100, 1);
    check_softmax("Softmax", 2, 1, 0);
    check_softmax_in("Softmax", 1, 16, 2100, 1);   /* YOLOv8's DFL: 16 bins over 2100 anchors, a NaN */
    check_softmax_in("LogSoftmax", 3, 5, 70, 0);  /* a block of 64 columns and one of 6 */
    check_softmax_in("Softmax", 2, 1, 9, 0);      /* an axis of one */
}

/* ---- MaxPool by rows (o2c_maxpool_rows_f32): the same values, NaN included ---- */

static void check_maxpool(int64_t N, int64_t C, int64_t H, int64_t W, int64_t kh, int64_t kw, int64_t s, int64_t d,
                          int64_t ph, int64_t pw, int ceil_mode)
{
    Onnx__ModelProto *m = pb_model(8, 13);
    char shape[64];
    snprintf(shape, sizeof shape, "%lldx%lldx%lldx%lld", (long long)N, (long long)C, (long long)H, (long long)W);
    pb_input(m, "x", DT_FLOAT, shape);
    Onnx__NodeProto *n = pb_node(m, "MaxPool", "mp", "x", "y");
    const int64_t ks[2] = {kh, kw}, st[2] = {s, s}, dl[2] = {d, d}, pads[4] = {ph, pw, ph, pw};
    pb_attr_ints(n, "kernel_shape", 2, ks);
    pb_attr_ints(n, "strides", 2, st);
    pb_attr_ints(n, "dilations", 2, dl);
    pb_attr_ints(n, "pads", 4, pads);
    if (ceil_mode) pb_attr_i(n, "ceil_mode", 1);
    pb_output(m, "y", DT_FLOAT, NULL);
    Graph *ref = pt_graph(m), *got = pt_graph(m);
    pt_fill_inputs(ref, 9);
    pt_fill_inputs(got, 9);
    float *xr = ref->inputs[0]->data, *xg = got->inputs[0]->data;
    xr[5] = xg[5] = NAN;
    xr[W * 2 + 1] = xg[W * 2 + 1] = NAN;
    for (int64_t i = 0; i < N * C * H * W; i += 29) xr[i] = xg[i] = NAN;   /* first taps and later ones */
    xr[N * C * H * W - 1] = xg[N * C * H * W - 1] = -INFINITY;
    EXPECT_OK(graph_evaluate(ref));
    EXPECT_OK(layout_assign(got, 1));   /* channels innermost where the C target runs it so */
    EXPECT_OK(graph_evaluate_lowered(got, 1));
    const float *w = ref->outputs[0]->data, *g = got->outputs[0]->data;
    for (int64_t i = 0; i < tensor_numel(ref->outputs[0]); i++)
        if (!(g[i] == w[i] || (isnan(g[i]) && isnan(w[i]))))
            fail_msg("MaxPool %s k %lldx%lld s%lld d%lld p%lldx%lld ceil %d: element %lld is %g, the reference says %g",
                     shape, (long long)kh, (long long)kw, (long long)s, (long long)d, (long long)ph, (long long)pw,
                     ceil_mode, (long long)i, g[i], w[i]);
}

static void test_maxpool_rows(void **state)
{
    (void)state;
    check_maxpool(1, 3, 28, 28, 2, 2, 2, 1, 0, 0, 0);
    check_maxpool(2, 4, 13, 17, 3, 3, 1, 1, 1, 1, 0);
    check_maxpool(1, 2, 10, 11, 3, 3, 2, 1, 1, 1, 1);
    check_maxpool(1, 1, 9, 12, 3, 2, 1, 2, 2, 1, 0);
    check_maxpool(1, 2, 5, 4, 3, 3, 2, 1, 1, 1, 1);   /* every column at an edge */
    check_maxpool(1, 3, 13, 13, 13, 13, 1, 1, 6, 6, 0);   /* YOLOX's SPP: every window at an edge */
    check_maxpool(2, 2, 20, 20, 5, 5, 1, 1, 2, 2, 0);     /* YOLOv8's SPPF */
    check_maxpool(1, 2, 7, 9, 3, 5, 3, 2, 2, 4, 1);       /* dilation 2, stride 3, ceil */
    check_maxpool(1, 1, 3, 3, 2, 2, 2, 1, 1, 1, 1);       /* a window over the padding only (ceil) */
}

/* ---- channels-innermost chains (layout.c, o2c_dwc_f32, o2c_conv_pwt_f32) -- */

/* X -> pw1 -> A -> dw1 -> B -> pw2 -> P -> dw2 -> q1 -> (x 0.5 + 0.25) -> Q
 * -> pw3 (+ B) -> R -> dw3 -> S -> pw4 -> Y, each conv followed by a Relu
 * (fused at -O2), the affine one elementwise node. Between the pointwise
 * convs every tensor is a depthwise conv's or the elementwise node's, so A..S are
 * channels innermost, B also as pw3's residual; X and Y stay NCHW. The C
 * target's lowering is compared with the reference kernels on the same
 * optimized graph, and the layouts are checked. dw1 has the stride and
 * pads given; the others are 3x3, stride 1, pad 1. */
static void check_layout_chain(int64_t N, int64_t C0, int64_t C, int64_t H, int64_t W, int64_t k, int64_t s, int64_t pad)
{
    Onnx__ModelProto *m = pb_model(8, 13);
    char xs[64], ys[64];
    snprintf(xs, sizeof xs, "%lldx%lldx%lldx%lld", (long long)N, (long long)C0, (long long)H, (long long)W);
    pb_input(m, "X", DT_FLOAT, xs);
    int64_t w1[4] = {C, C0, 1, 1}, wpw[4] = {C, C, 1, 1}, wd1[4] = {C, 1, k, k}, wd[4] = {C, 1, 3, 3}, b[1] = {C};
    int64_t w4[4] = {5, C, 1, 1};
    pt_init_pattern(m, "W1", 4, w1, 1);
    pt_init_pattern(m, "W2", 4, wpw, 2);
    pt_init_pattern(m, "W3", 4, wpw, 3);
    pt_init_pattern(m, "W4", 4, w4, 4);
    pt_init_pattern(m, "D1", 4, wd1, 5);
    pt_init_pattern(m, "D2", 4, wd, 6);
    pt_init_pattern(m, "D3", 4, wd, 7);
    pt_init_pattern(m, "B1", 1, b, 8);
    pt_init_pattern(m, "B2", 1, b, 9);
    int64_t st[2] = {s, s}, pads[4] = {pad, pad, pad, pad}, one[2] = {1, 1}, p1[4] = {1, 1, 1, 1};
    struct { const char *in, *out; int dw; } convs[] = {
        {"X,W1,B1", "a0", 0}, {"A,D1,B2", "b0", 1}, {"B,W2", "p0", 0}, {"P,D2", "q0", 2},
        {"Q,W3,B1", "r0", 0}, {"R,D3", "s0", 2}, {"S,W4", "Y", 0}};
    const char *relu_out[] = {"A", "B", "P", "q1", "r1", "R", "S", NULL};
    int64_t one1[1] = {1};
    pt_init_fill(m, "half", 1, one1, 0.5f);
    pt_init_fill(m, "quarter", 1, one1, 0.25f);
    for (int i = 0; i < 7; i++) {
        char name[16];
        snprintf(name, sizeof name, "conv%d", i);
        Onnx__NodeProto *n = pb_node(m, "Conv", name, convs[i].in, convs[i].out);
        if (convs[i].dw) {
            pb_attr_i(n, "group", C);
            pb_attr_ints(n, "strides", 2, convs[i].dw == 1 ? st : one);
            pb_attr_ints(n, "pads", 4, convs[i].dw == 1 ? pads : p1);
        }
        if (i == 6) break;
        char rn[16], rin[16];
        snprintf(rn, sizeof rn, "relu%d", i);
        snprintf(rin, sizeof rin, "%s", convs[i].out);
        if (i == 4) {   /* pw3: Relu, then the residual B, then R */
            pb_node(m, "Relu", rn, rin, "r1");
            pb_node(m, "Add", "res", "r1,B", "R");
            continue;
        }
        pb_node(m, "Relu", rn, rin, relu_out[i == 5 ? 6 : i]);
        if (i == 3) {   /* an affine on single values (fused into one elementwise node): layout-free */
            pb_node(m, "Mul", "scale", "q1,half", "q2");
            pb_node(m, "Add", "shift", "q2,quarter", "Q");
        }
    }
    int64_t OH = (H + 2 * pad - k) / s + 1, OW = (W + 2 * pad - k) / s + 1;
    snprintf(ys, sizeof ys, "%lldx5x%lldx%lld", (long long)N, (long long)OH, (long long)OW);
    pb_output(m, "Y", DT_FLOAT, ys);

    Graph *g = pt_optimize_checked(m, 2, NULL);
    int fused_res = 0;
    for (int i = 0; i < g->nnodes; i++) fused_res += !strcmp(g->nodes[i]->op_type, "FusedConv") && g->nodes[i]->nin > 3 && g->nodes[i]->in[3];
    assert_int_equal(pt_count(g, "FusedConv") + pt_count(g, "Conv"), 7);
    assert_int_equal(fused_res, 1);
    EXPECT_OK(graph_evaluate(g));
    int64_t ny = tensor_numel(g->outputs[0]);
    float *want = xalloc(sizeof(float) * (size_t)ny);
    memcpy(want, g->outputs[0]->data, sizeof(float) * (size_t)ny);
    EXPECT_OK(layout_assign(g, 1));
    EXPECT_OK(graph_evaluate_lowered(g, 1));
    int nhwc = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        nhwc += n->out[0]->layout == LAYOUT_NHWC;
        if (conv_layout_role(n) == LAYOUT_ROLE_DW) {   /* both sides channels innermost */
            assert_int_equal(n->in[0]->layout, LAYOUT_NHWC);
            assert_int_equal(n->out[0]->layout, LAYOUT_NHWC);
        }
    }
    assert_int_equal(nhwc, 7);   /* A, B, P, q1, Q, R, S */
    assert_int_equal(g->outputs[0]->layout, LAYOUT_NCHW);
    char what[160];
    snprintf(what, sizeof what, "channels-innermost chain N%lld C0 %lld C %lld %lldx%lld k%lld s%lld p%lld", (long long)N,
             (long long)C0, (long long)C, (long long)H, (long long)W, (long long)k, (long long)s, (long long)pad);
    /* seven convs deep, sums of up to 72 x 25 terms: fused multiply-adds
     * (an FMA build) move the last digits further than one kernel does */
    expect_close_tol(g->outputs[0]->data, want, ny, what, 1e-4f);
    EXPECT_OK(layout_assign(g, 0));   /* and back: the reference lowering's layouts (all NCHW) */
    EXPECT_OK(graph_evaluate(g));
    assert_int_equal(g->outputs[0]->layout, LAYOUT_NCHW);
    for (int i = 0; i < g->nnodes; i++) assert_int_equal(g->nodes[i]->out[0]->layout, LAYOUT_NCHW);
}

static void test_layout_chains(void **state)
{
    (void)state;
    check_layout_chain(1, 8, 32, 6, 6, 3, 1, 1);     /* blocks of 32 */
    check_layout_chain(2, 3, 40, 9, 7, 3, 2, 1);     /* 40 channels: the last block moved left; stride 2, batch 2 */
    check_layout_chain(1, 16, 72, 5, 11, 5, 1, 2);   /* blocks of 64 and one moved left; 5x5 */
    check_layout_chain(1, 4, 128, 3, 3, 3, 2, 0);    /* no pads, one output pixel */
    check_layout_chain(1, 3, 16, 12, 40, 3, 2, 1);   /* 16 channels (o2c_v16: 4 pixels at once inside) */
    check_layout_chain(2, 3, 24, 7, 9, 3, 1, 1);     /* 24: blocks of 16, the last moved left */
    check_layout_chain(1, 5, 48, 4, 13, 3, 1, 1);    /* 48 (o2c_v16: 2 pixels of 2 blocks) */
}

/* ---- attention by blocks (o2c_attention_blk_f32) against the reference ----
 * Q x K^T (K given untransposed: a strided operand), scaled, a mask, the
 * softmax, x V, after the fuse_attention pass; sizes off the tiles: query
 * rows past a 64-row block, keys and widths off the 8 x 32 tiles */

static void check_attention(int64_t H, int64_t Sq, int64_t Skv, int64_t D, int64_t Dv, int mask)
{
    Onnx__ModelProto *m = pb_model(8, 13);
    pb_input(m, "q", DT_FLOAT, xfmt("1x%lldx%lldx%lld", (long long)H, (long long)Sq, (long long)D));
    pb_input(m, "k", DT_FLOAT, xfmt("1x%lldx%lldx%lld", (long long)H, (long long)Skv, (long long)D));
    pb_input(m, "v", DT_FLOAT, xfmt("1x%lldx%lldx%lld", (long long)H, (long long)Skv, (long long)Dv));
    float c = 1.0f / sqrtf((float)D);
    int64_t one = 1;
    pb_init_raw(m, "c", DT_FLOAT, 0, &one, &c, sizeof c);
    Onnx__NodeProto *t = pb_node(m, "Transpose", "kt", "k", "kT");
    const int64_t perm[4] = {0, 1, 3, 2};
    pb_attr_ints(t, "perm", 4, perm);
    pb_node(m, "MatMul", "qk", "q,kT", "sc");
    pb_node(m, "Mul", "scale", "sc,c", "scs");
    const char *sm_in = "scs";
    if (mask) {
        int64_t md[4] = {1, 1, Sq, Skv};
        float *mk = xalloc(sizeof(float) * (size_t)(Sq * Skv));
        for (int64_t i = 0; i < Sq; i++)
            for (int64_t j = 0; j < Skv; j++) mk[i * Skv + j] = j > i + 3 ? -30.0f : 0.01f * (float)(j % 7);
        pb_init_raw(m, "mask", DT_FLOAT, 4, md, mk, sizeof(float) * (size_t)(Sq * Skv));
        pb_node(m, "Add", "mask_add", "scs,mask", "scm");
        sm_in = "scm";
    }
    Onnx__NodeProto *sm = pb_node(m, "Softmax", "softmax", sm_in, "att");
    pb_attr_i(sm, "axis", -1);
    pb_node(m, "MatMul", "av", "att,v", "y");
    pb_output(m, "y", DT_FLOAT, NULL);
    Graph *ref = pt_graph(m), *got = pt_graph(m);
    pt_fill_inputs(ref, 5);
    pt_fill_inputs(got, 5);
    EXPECT_OK(graph_evaluate(ref));
    EXPECT_OK(run_pass(got, "fuse_attention"));
    if (!pt_find(got, "FusedAttention")) fail_msg("attention H%lld Sq%lld Skv%lld: not fused", (long long)H, (long long)Sq, (long long)Skv);
    EXPECT_OK(layout_assign(got, 1));
    EXPECT_OK(graph_evaluate_lowered(got, 1));
    const float *w = ref->outputs[0]->data, *g = got->outputs[0]->data;
    for (int64_t i = 0; i < tensor_numel(ref->outputs[0]); i++)
        if (!(fabsf(g[i] - w[i]) <= 1e-5f + 1e-4f * fabsf(w[i])))
            fail_msg("attention H%lld Sq%lld Skv%lld D%lld Dv%lld mask %d: element %lld is %.9g, the reference says %.9g",
                     (long long)H, (long long)Sq, (long long)Skv, (long long)D, (long long)Dv, mask, (long long)i, g[i], w[i]);
}

static void test_attention_blk(void **state)
{
    (void)state;
    check_attention(2, 130, 45, 20, 40, 1);   /* a block of 64 rows, another, one of 2; keys and widths off the tiles */
    check_attention(1, 64, 64, 64, 64, 0);    /* whole blocks and tiles */
    check_attention(3, 5, 100, 8, 33, 1);     /* fewer rows than a tile */
    check_attention(1, 1, 1, 1, 1, 0);
}

/* ---- GlobalAveragePool by rows (o2c_gavgpool_rows_f32) ---- */

static void check_gavgpool(int64_t N, int64_t C, int64_t H, int64_t W)
{
    Onnx__ModelProto *m = pb_model(8, 13);
    char xs[64], ys[64];
    snprintf(xs, sizeof xs, "%lldx%lldx%lldx%lld", (long long)N, (long long)C, (long long)H, (long long)W);
    snprintf(ys, sizeof ys, "%lldx%lldx1x1", (long long)N, (long long)C);
    pb_input(m, "x", DT_FLOAT, xs);
    pb_node(m, "GlobalAveragePool", "gap", "x", "y");
    pb_output(m, "y", DT_FLOAT, ys);
    Graph *ref = pt_graph(m), *got = pt_graph(m);
    pt_fill_inputs(ref, 4);
    pt_fill_inputs(got, 4);
    EXPECT_OK(graph_evaluate(ref));
    EXPECT_OK(layout_assign(got, 1));   /* channels innermost where the C target runs it so */
    EXPECT_OK(graph_evaluate_lowered(got, 1));
    char what[96];
    snprintf(what, sizeof what, "GlobalAveragePool %s", xs);
    expect_close(got->outputs[0]->data, ref->outputs[0]->data, N * C, what);
}

static void test_gavgpool_rows(void **state)
{
    (void)state;
    check_gavgpool(1, 48, 18, 18);   /* 324 values a row: 20 blocks of 16 and 4 more */
    check_gavgpool(2, 3, 1, 5);      /* shorter than a block */
    check_gavgpool(1, 7, 4, 4);      /* exactly one block */
}

/* ---- LayerNormalization rows (o2c_layernorm_rows_f32: the sums in 16
 * partial sums) against o2c_layernorm_f32, the same parameters ---- */

static void check_layernorm(int64_t rows, int64_t N, int with_bias)
{
    float *x = randf(rows * N), *sc = randf(N), *b = randf(N);
    float *ref = xalloc(sizeof(float) * (size_t)(rows * N + 1)), *got = xalloc(sizeof(float) * (size_t)(rows * N + 1));
    float *mref = xalloc(sizeof(float) * (size_t)(rows + 1)), *mgot = xalloc(sizeof(float) * (size_t)(rows + 1));
    for (int64_t i = 0; i < rows * N; i++) x[i] = x[i] * 3.0f + 5.0f;   /* a mean far from 0 */
    for (int mode = 0; mode < 2; mode++) {
        o2c_p p;
        memset(&p, 0, sizeof p);
        p.x[0] = x; p.x[1] = sc; p.x[2] = with_bias ? b : NULL;
        p.k[O2C_LAYERNORM_N] = N; p.k[O2C_LAYERNORM_MODE] = mode;
        p.f[O2C_NORM_F_EPS] = 1e-5; p.ff[O2C_NORM_F_EPS] = 1e-5f;
        p.y[0] = mode ? mref : ref; p.y[1] = mode ? NULL : mref;
        K("o2c_layernorm_f32")(0, rows, &p);
        if (mode == 0) { p.y[0] = got; p.y[1] = mgot; }
        else p.y[0] = mgot;
        K("o2c_layernorm_rows_f32")(0, rows, &p);
        char what[96];
        snprintf(what, sizeof what, "o2c_layernorm_rows_f32 rows %lld N %lld mode %d", (long long)rows, (long long)N, mode);
        if (mode == 0) expect_close(got, ref, rows * N, what);
        expect_close(mgot, mref, rows, what);
    }
}

static void test_layernorm_rows(void **state)
{
    (void)state;
    check_layernorm(3, 5, 1);     /* shorter than the partial sums */
    check_layernorm(4, 16, 0);
    check_layernorm(2, 37, 1);    /* two blocks and a tail */
    check_layernorm(5, 384, 1);   /* a transformer's rows */
}

/* ---- ArgMax / ArgMin rows (o2c_argext_f32's vector path where the C is
 * built with AVX: tests/test_isa.py builds this file so) against the rule
 * the kernel's loop states: a NaN wins (the first, or the last with
 * select_last_index), else the first (last) index of the extreme value ---- */

static int64_t argext_oracle(const float *x, int64_t A, int64_t inner, int mx, int last)
{
    int64_t bi = -1;
    for (int64_t j = 0; j < A; j++)
        if (x[j * inner] != x[j * inner] && (bi < 0 || last)) bi = j;
    if (bi >= 0) return bi;
    bi = 0;
    for (int64_t j = 1; j < A; j++) {
        const float v = x[j * inner], b = x[bi * inner];
        if (mx ? (last ? v >= b : v > b) : (last ? v <= b : v < b)) bi = j;
    }
    return bi;
}

static void check_argext(int64_t rows, int64_t A, int64_t inner, int kind)
{
    int64_t n = rows * A * inner;
    float *x = randf(n);
    for (int64_t i = 0; i < n; i++) {
        if (kind == 1) x[i] = (float)(int)(x[i] * 3.0f);                 /* few values: ties everywhere */
        if (kind == 2) x[i] = (i * 7 % 3) ? 0.0f : -0.0f;                /* +0 and -0 only */
        if (kind == 3 && i % (A * inner) == (A * inner) * 2 / 3) x[i] = NAN;   /* a NaN a row */
    }
    int64_t *y = xalloc(sizeof(int64_t) * (size_t)(rows * inner + 1));
    for (int mx = 0; mx < 2; mx++)
        for (int last = 0; last < 2; last++) {
            o2c_p p;
            memset(&p, 0, sizeof p);
            p.x[0] = x;
            p.y[0] = y;
            p.k[O2C_ARGEXT_A] = A; p.k[O2C_ARGEXT_INNER] = inner;
            p.k[O2C_ARGEXT_LAST] = last; p.k[O2C_ARGEXT_MAX] = mx;
            K("o2c_argext_f32")(0, rows * inner, &p);
            for (int64_t i = 0; i < rows * inner; i++) {
                int64_t want = argext_oracle(x + (i / inner) * A * inner + i % inner, A, inner, mx, last);
                if (y[i] != want)
                    fail_msg("o2c_argext_f32 %s%s A %lld inner %lld kind %d row %lld: %lld, the rule says %lld",
                             mx ? "ArgMax" : "ArgMin", last ? " (last)" : "", (long long)A, (long long)inner, kind,
                             (long long)i, (long long)y[i], (long long)want);
            }
        }
}

static void test_argext_rows(void **state)
{
    (void)state;
    static const int64_t lens[] = {1, 5, 15, 16, 23, 64, 100, 8210};
    for (int k = 0; k < 4; k++)
        for (int a = 0; a < 8; a++) {
            check_argext(3, lens[a], 1, k);
            check_argext(2, lens[a], 3, k);   /* a strided axis: the loop */
        }
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, o2c_teardown)
    const struct CMUnitTest tests[] = {
        T(test_matmul_tiles),
        T(test_matmul_tiles_batched),
        T(test_matmul_epilogues),
        T(test_conv_tiles),
        T(test_conv_epilogues),
        T(test_lstm_tiled),
        T(test_softmax_rows),
        T(test_maxpool_rows),
        T(test_layout_chains),
        T(test_gavgpool_rows),
        T(test_attention_blk),
        T(test_argext_rows),
        T(test_layernorm_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
