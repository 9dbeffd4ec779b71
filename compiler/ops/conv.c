/* Convolutions: Conv and ConvTranspose (direct kernels in runtime/c/conv.h).
 * Also the window geometry (output shape and pads from kernel_shape,
 * strides, dilations, pads, auto_pad, ceil_mode) shared with ops/pool.c. */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/elementwise.h"
#include "../../runtime/c/elementwise.h"   /* o2c_ldh: the half loads of O2C_CONV_WT, O2C_MATMUL_WT */
#include "../../runtime/c/params/conv.h"
#include "../../runtime/c/conv.h"

static int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

/* Reads a per-axis integer attribute into the last nsp of v[3] (v preset to
 * the default); the list must have want entries (nsp, or 2*nsp for pads). */
static void axis_attr(Node *n, const char *name, int nsp, int want, int64_t *v)
{
    const int64_t *a;
    int na = attr_ints(n, name, &a);
    if (!na) return;
    if (na != want)
        fail("attribute '%s' has %d values; this %d-D op needs %d", name, na, nsp, want);
    for (int i = 0; i < want; i++) v[3 - nsp + (i % nsp) + (i >= nsp ? 3 : 0)] = a[i];
}

/* Input spatial dims, kernel, strides, dilations and explicit pads. */
#define CONV_ATTR_MAX (INT64_C(1) << 31)

void conv_geom_init(Node *n, const Tensor *x, const int64_t *kernel, int nk, ConvGeom *g)
{
    memset(g, 0, sizeof *g);
    if (x->rank < 3)
        fail("input '%s' is %s; %s needs N x C x D1 [x D2 [x D3]]", x->name, tensor_shape_str(x), n->op_type);
    int nsp = x->rank - 2;
    if (nsp > 3) fail("%d spatial dimensions; onnx2c supports 1-D, 2-D and 3-D %s", nsp, n->op_type);
    if (nk != nsp) fail("kernel has %d spatial dimensions but the input '%s' (%s) has %d", nk, x->name, tensor_shape_str(x), nsp);
    g->nsp = nsp;
    int64_t pads[6] = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 3; i++) { g->in[i] = 1; g->k[i] = 1; g->s[i] = 1; g->d[i] = 1; }
    for (int i = 0; i < nsp; i++) {
        g->in[3 - nsp + i] = x->dims[2 + i];
        g->k[3 - nsp + i] = kernel[i];
    }
    axis_attr(n, "strides", nsp, nsp, g->s);
    axis_attr(n, "dilations", nsp, nsp, g->d);
    axis_attr(n, "pads", nsp, 2 * nsp, pads);
    for (int i = 0; i < 3; i++) {
        g->pb[i] = pads[i];
        g->pe[i] = pads[3 + i];
        if (g->k[i] < 1) fail("kernel dimensions must be positive");
        if (g->s[i] < 1) fail("strides must be positive, got %lld", (long long)g->s[i]);
        if (g->d[i] < 1) fail("dilations must be positive, got %lld", (long long)g->d[i]);
        if (g->in[i] < 1) fail("input '%s' has an empty spatial dimension (%s)", x->name, tensor_shape_str(x));
        /* bounded, so that the products of the geometry cannot overflow */
        if (g->k[i] > CONV_ATTR_MAX || g->s[i] > CONV_ATTR_MAX || g->d[i] > CONV_ATTR_MAX || g->pb[i] > CONV_ATTR_MAX ||
            g->pe[i] > CONV_ATTR_MAX || g->pb[i] < -CONV_ATTR_MAX || g->pe[i] < -CONV_ATTR_MAX)
            fail("kernel %lld, stride %lld, dilation %lld, pads %lld and %lld: each must be at most %lld",
                 (long long)g->k[i], (long long)g->s[i], (long long)g->d[i], (long long)g->pb[i], (long long)g->pe[i],
                 (long long)CONV_ATTR_MAX);
    }
}

/* Output dims (and pads for auto_pad) of a forward window op (Conv, pools). */
void conv_geom_forward(Node *n, ConvGeom *g, int ceil_mode)
{
    const char *ap = attr_s(n, "auto_pad");
    int same_upper = !strcmp(ap, "SAME_UPPER"), same_lower = !strcmp(ap, "SAME_LOWER");
    int valid = !strcmp(ap, "VALID");
    if (!same_upper && !same_lower && !valid && strcmp(ap, "NOTSET") && ap[0])
        fail("auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", ap);
    for (int i = 0; i < 3; i++) {
        int64_t dk = (g->k[i] - 1) * g->d[i] + 1;   /* extent of the dilated window */
        if (same_upper || same_lower) {
            g->out[i] = (g->in[i] + g->s[i] - 1) / g->s[i];
            int64_t total = (g->out[i] - 1) * g->s[i] + dk - g->in[i];
            if (total < 0) total = 0;
            g->pb[i] = same_upper ? total / 2 : total - total / 2;
            g->pe[i] = total - g->pb[i];
        } else {
            if (valid) g->pb[i] = g->pe[i] = 0;
            int64_t span = g->in[i] + g->pb[i] + g->pe[i] - dk;
            if (span < 0)
                fail("the window (kernel %lld, dilation %lld) is larger than the padded input (%lld + pads %lld, %lld)",
                     (long long)g->k[i], (long long)g->d[i], (long long)g->in[i], (long long)g->pb[i],
                     (long long)g->pe[i]);
            if (ceil_mode) {
                g->out[i] = (span + g->s[i] - 1) / g->s[i] + 1;
                /* windows that would start in the end padding are dropped */
                if ((g->out[i] - 1) * g->s[i] >= g->in[i] + g->pb[i]) g->out[i]--;
            } else {
                g->out[i] = span / g->s[i] + 1;
            }
        }
        if (g->out[i] < 1) fail("the output would be empty along a spatial axis");
    }
}


/* Common checks of Conv/ConvTranspose: X, W (same type, same rank),
 * group, kernel_shape against W. Returns group. */
static int64_t conv_check(Node *n, int64_t *kernel)
{
    Tensor *x = n->in[0], *w = n->in[1];
    need_dtype(n, x, DTS_FLOAT);
    if (w->dtype != x->dtype) fail("W ('%s') must have X's data type %s", w->name, dtype_name(x->dtype));
    if (x->rank < 3) fail("input '%s' is %s; %s needs N x C x D1 [x D2 [x D3]]", x->name, tensor_shape_str(x), n->op_type);
    if (w->rank != x->rank)
        fail("W ('%s') is %s; it must have the rank of X (%s)", w->name, tensor_shape_str(w), tensor_shape_str(x));
    int64_t group = attr_i(n, "group");
    if (group < 1) fail("group must be positive, got %lld", (long long)group);
    int nsp = x->rank - 2;
    for (int i = 0; i < nsp; i++) kernel[i] = w->dims[2 + i];
    const int64_t *ks;
    int nks = attr_ints(n, "kernel_shape", &ks);
    if (nks) {
        if (nks != nsp) fail("kernel_shape has %d values; the input has %d spatial dimensions", nks, nsp);
        for (int i = 0; i < nsp; i++)
            if (ks[i] != kernel[i])
                fail("kernel_shape does not match the shape of W ('%s', %s)", w->name, tensor_shape_str(w));
    }
    return group;
}

static void check_bias(Node *n, int64_t M)
{
    Tensor *b = in_t(n, 2);
    if (!b) return;
    if (b->dtype != n->in[0]->dtype) fail("B ('%s') must have X's data type", b->name);
    if (b->rank != 1 || b->dims[0] != M)
        fail("B ('%s') is %s; it must be a vector of %lld values (one per output channel)", b->name,
             tensor_shape_str(b), (long long)M);
}

static void set_conv_out(Node *n, int64_t M, const ConvGeom *g)
{
    Tensor *x = n->in[0];
    int64_t dims[MAX_RANK];
    dims[0] = x->dims[0];
    dims[1] = M;
    for (int i = 0; i < g->nsp; i++) dims[2 + i] = g->out[3 - g->nsp + i];
    set_out(n, 0, x->dtype, x->rank, dims);
}

/* ---- Conv -------------------------------------------------------------- */

static void conv_geom(Node *n, ConvGeom *g, int64_t *group, int64_t *M)
{
    Tensor *x = n->in[0], *w = n->in[1];
    int64_t kernel[MAX_RANK];
    *group = conv_check(n, kernel);
    int64_t C = x->dims[1];
    *M = w->dims[0];
    if (w->dims[1] * *group != C)
        fail("W ('%s') is %s: its second dimension times group (%lld) must equal the input channels %lld",
             w->name, tensor_shape_str(w), (long long)*group, (long long)C);
    if (*M % *group) fail("the output channels (%lld) are not a multiple of group (%lld)", (long long)*M, (long long)*group);
    conv_geom_init(n, x, kernel, x->rank - 2, g);
    conv_geom_forward(n, g, 0);
}

static void convt_geom(Node *n, ConvGeom *g, int64_t *group, int64_t *M);   /* ConvTranspose (below) */

/* The geometry of a Conv, or with transpose a ConvTranspose */
static void conv_any_geom(Node *n, int transpose, ConvGeom *g, int64_t *group, int64_t *M)
{
    if (transpose) convt_geom(n, g, group, M);
    else conv_geom(n, g, group, M);
}

static void infer_conv_any(Node *n, int transpose)
{
    ConvGeom g;
    int64_t group, M;
    conv_any_geom(n, transpose, &g, &group, &M);
    check_bias(n, M);
    set_conv_out(n, M, &g);
}

void infer_conv(Node *n) { infer_conv_any(n, 0); }

/* parameters: runtime/c/params/conv.h */
/* The C target computes float convolutions in register tiles
 * (o2c_conv_tile_f32: same parameters, the tiles as index space). A
 * pointwise conv (kernel 1, stride 1, no pads) is given as one row of
 * ID*IH*IW columns, so its tiles run along the whole image. */
/* Rows of at most this many outputs use o2c_conv_tile8_f32: measured with
 * `make bench` (vww 0.52 -> 0.41 ms; at 16, mnist's 14-wide rows got slower
 * than the 32-wide kernel's partial tiles). A tuning file will decide this. */
#define CONV_NARROW_ROW 12
#define DW_MIN_ROW 32
/* the implicit GEMM (o2c_conv_panel_f32): panels of at most PANEL_MAX_K
 * rows (576 KB: a 3x3 conv from 512 channels; YOLOv8n's 3x3 head convs
 * from 256 channels on 10x10 pixels took 5.9 ms in 8-wide tiles at 2048,
 * 1.0 ms as a panel), for convs with rows of PANEL_MIN_ROW outputs or more.
 * Measured with --tune (per call): super_resolution's convs with 64 (from
 * one channel, 5x5), 9, 32 and 64 output channels took 0.96 / 2.96 / 10.4 /
 * 18.7 ms as panels and 1.97 / 4.70 / 35.8 / 75.8 ms in 32-wide tiles;
 * depthwise convs too (ultraface 16 channels at 120x160: 147 us, dw rows
 * 187, tiles 216; vww 8 channels at 48x48: 12.0, 21.3, 19.8; at 24 wide:
 * 20.4, 55.8, 22.2). Narrower rows: with PANEL_MIN_MG output channels a
 * group or more (mnist's 8 -> 16 channels at 14x14, 5x5: 12.4 us, tiles
 * 33.9), not depthwise ones (vww 64 channels at 12x12: 22.6, 8-wide tiles
 * 16.3). Depthwise convs with strides take the 8-wide tiles at any width
 * (ultraface 32 channels 120x160 -> 60x80: 281 us, rows 343, panel 602). */
#define PANEL_MAX_K 4608
/* depthwise convs of more taps than this take the depthwise rows instead
 * (ppocrv4's 5x5 on 240 channels at 12x80: rows 387 us, panel 817) */
#define PANEL_MAX_DW_TAPS 9
#define PANEL_MIN_ROW 24
#define PANEL_MIN_MG 8
/* pointwise convs of fewer pixels than this: the transposed product
 * (o2c_conv_pwt_f32; --tune on vww's 256 -> 256 channels on 3x3 pixels:
 * 9.4 us, the 8-wide tiles 42.9, 32-wide 47.6; at 6x6 pixels about even) */
#define PWT_MAX_PIXELS 32
/* depthwise convs with stride 1 and rows of DWFLAT_MIN_ROW up to below
 * DWFLAT_MAX_ROW outputs: the flattened padded image (o2c_dwflat_f32).
 * --tune on vww's 3x3 depthwise convs: 24x24 on 32 channels 12.6 us
 * (panel 20.1), 12x12 on 64: 8.4 (8-wide tiles 16.3), 48x48 on 8: 12.5
 * (panel 12.2); at 6x6 and 3x3 the 8-wide tiles stay ahead (5.6, 2.6
 * against 5.8, 4.7). A "depthwise" conv of one input channel and
 * PANEL_MIN_MG or more outputs is a panel's (MNIST's 1 -> 8 channels 5x5 at
 * 28x28: the panel 8.4 us, dwflat 15.5). */
#define DWFLAT_MIN_ROW 8
/* Winograd F(2x2, 3x3) (o2c_conv_wino_f32): its input transform keeps 16 x
 * C x 32 floats of scratch (128 KB at 64 channels). --tune on
 * super_resolution's 3x3 convs at 224x224: 64 -> 64 channels 13.8 ms (the
 * panel 17.5), 64 -> 32 8.9 (9.4), 32 -> 9 2.7 (2.1: few output channels
 * leave the products small beside the transforms). The heuristic takes it
 * from WINO_MIN_C input and WINO_MIN_M output channels and rows of
 * WINO_MIN_ROW outputs (two strips of 32 tiles). */
#define WINO_MAX_C 256
#define WINO_MIN_C 64
#define WINO_MIN_M 32
#define WINO_MIN_ROW 64
/* and two more ranges, from --tune on a Zen 5 (AVX-512; us, Winograd
 * against the 8 x 32 panel): rows of WINO_MID_ROW with WINO_MID_MIN_C
 * input channels (nudenet's 64 -> 64 at 40x40: 536 against 618, YOLOX's
 * 48 -> 48 at 52x52: 484 against 630, 96 -> 192: 2879 against 4249; at
 * 26x26 the panel wins, 580 against 724), and wide rows of WINO_WIDE_ROW
 * with few channels (YOLOX's 24 -> 24 at 104x104: 592 against 749, 12 ->
 * 24 at 208x208: 1595 against 1744; nudenet's 16 -> 16 at 80x80 even,
 * 247 against 238) */
#define WINO_MID_ROW 40
#define WINO_MID_MIN_C 48
#define WINO_WIDE_ROW 96
#define WINO_WIDE_MIN_C 12
#define WINO_WIDE_MIN_M 24
#define DWFLAT_MAX_ROW 48

/* The C target's choice for a float convolution (a tunable choice, see
 * lower_choose): the 32-wide or 8-wide register tiles, the depthwise rows,
 * the implicit GEMM over a panel, or the direct reference loop. The
 * heuristic: the panel for convs with constant weights (not pointwise) and
 * rows of at least PANEL_MIN_ROW outputs or PANEL_MIN_MG channels; depthwise rows for the other
 * depthwise convs with rows of at least DW_MIN_ROW; else the tiles, 8-wide
 * for rows of at most CONV_NARROW_ROW outputs. */
enum { CONV_TILE32, CONV_TILE8, CONV_DIRECT, CONV_DW, CONV_PANEL, CONV_PWT, CONV_DWFLAT, CONV_WINO, CONV_GT, CONV_PV };
static const char *const CONV_VARIANTS[] = {"tile32", "tile8", "direct", "dw", "panel8x32", "pwt", "dwflat", "wino",
                                            "gt", "pv"};
#define CONV_NVARIANTS 10
/* 1-D and 2-D convs of one group with taps and at most GT_MAX_PIXELS
 * output pixels: the transposed product over the taps (o2c_conv_gt_f32;
 * silero VAD's encoder on 4, 2, 1 and 1 frames took 28, 15, 12 and 24 us
 * as panels of 32 pixels, its STFT of 5 frames 65 us) */
#define GT_MAX_PIXELS 8
/* and convs of GT_WIDE_MIN_TAPS taps or more with GT_WIDE_MIN_M to
 * GT_WIDE_MAX_M output channels on maps of at most GT_WIDE_MAX_PIXELS
 * outputs (GT_WIDE_S1_MAX_PIXELS for stride 1 and more than GT_WIDE_MIN_M
 * channels). --tune on a Zen 5 (AVX-512; us, gt against the 8 x 32 panel),
 * nudenet's 3x3 convs: 64 -> 64 at 10x10 39.7 (64.9), 20x20 143 (179),
 * 128 -> 128 at 10x10 158 (197), stride 2 to 10x10 150 (204), 32 -> 32 at
 * 40x40 162 (193), 32 -> 64 stride 2 to 40x40 352 (372); YOLOX's 96 -> 96
 * at 13x13 155 (175), stride 2 to 26x26 573 (609). Where it loses: 96 ->
 * 96 at 26x26 stride 1 763 (592), 192 -> 384 stride 2 to 13x13 1348 (1134). */
#define GT_WIDE_MIN_TAPS 9
#define GT_WIDE_MIN_M 32
#define GT_WIDE_MAX_M 128
#define GT_WIDE_MAX_PIXELS 1600
#define GT_WIDE_S1_MAX_PIXELS 400

/* 2-D convs of one group with PV_MIN_M to PV_MAX_M output channels (most
 * of one vector of 16), at least PV_MIN_TAPS taps and PV_MIN_K products
 * (input channels x taps) an output, and a padded image of at
 * most PV_MAX_PAD floats (256 KB: it stays in L2): pixels x a vector of
 * output channels over the padded image (o2c_conv_pv_f32), no panel to
 * gather. --tune (AVX-512, us): MNIST's 8 -> 16 channels 5x5 at 14x14 15.9
 * (the panel 48.5, gt 41.4); ultraface's 3x3 convs: 12 -> 16 at 30x40 48.3
 * (Winograd 69.0), 16 -> 16 dilated 2, 3, 5: 58.5, 63.2, 65.9 (panels 81 to
 * 83), 8 -> 12: 34.8 (panel12x32 35.9). Few products: even, ultraface's 3
 * -> 16 at 120x160 stride 2 283 (the panel 323), ppocrv4_rec's at 24x160
 * 58.4 (the panel 51.4). With 8 channels half the vector is idle: MNIST's 1 -> 8
 * 5x5 10.9 (panels 8.4 to 13.5), vww's 3 -> 8 at 48x48 stride 2 59.5 (the
 * panel 24.0). */
#define PV_MIN_M 12
#define PV_MAX_M 16
#define PV_MIN_TAPS 9
#define PV_MIN_K 64
#define PV_MAX_PAD 65536

/* The transposed products (o2c_conv_pwt_f32, o2c_conv_gt_f32): the
 * weights [M, C, taps] stored by tap and input channel, M rounded up to a
 * whole tile, Wt[(t C + c) MP + m] = W[m, c, t]; the index space over S
 * output pixels */
static void lower_transposed(Lowering *L, KCall *c, int64_t N, int64_t taps, int64_t S, const char *kernel)
{
    int64_t *k = c->k;
    int64_t C = k[O2C_CONV_C], M = k[O2C_CONV_M], MP = (M + O2C_PW_NR - 1) / O2C_PW_NR * O2C_PW_NR;
    int64_t wd[2] = {taps * C, MP};
    Tensor *wt = lower_const(L, taps == 1 ? "W_CxM" : "W_tapsCxM", DT_FLOAT, 2, wd);
    const float *src = c->x[1]->data;
    float *dst = wt->data;
    for (int64_t t = 0; t < taps; t++)
        for (int64_t ci = 0; ci < C; ci++)
            for (int64_t m = 0; m < MP; m++) dst[(t * C + ci) * MP + m] = m < M ? src[(m * C + ci) * taps + t] : 0.0f;
    c->x[1] = wt;
    c->kernel = kernel_find(kernel);
    c->count = N * ((S + O2C_PW_MR - 1) / O2C_PW_MR) * (MP / O2C_PW_NR);
}

/* o2c_conv_pv_f32: the weights by tap, O2C_PV_NR output channels a row,
 * Wv[(c taps + t) MP + m] = W[m, c, t] (MP: M rounded up to O2C_PV_NR);
 * the scratch its padded image, index space N x MP / O2C_PV_NR */
static void lower_pv(Lowering *L, KCall *c, int64_t N)
{
    int64_t *k = c->k, *out = k + O2C_CONV_OUT, *ks = k + O2C_CONV_K, *st = k + O2C_CONV_S, *dil = k + O2C_CONV_D;
    int64_t C = k[O2C_CONV_C], M = k[O2C_CONV_M], MP = (M + O2C_PV_NR - 1) / O2C_PV_NR * O2C_PV_NR, taps = ks[1] * ks[2];
    int64_t wd[2] = {C * taps, MP};
    Tensor *wv = lower_const(L, "W_CtapsxM", DT_FLOAT, 2, wd);
    const float *src = c->x[1]->data;
    float *dst = wv->data;
    for (int64_t ci = 0; ci < C; ci++)
        for (int64_t t = 0; t < taps; t++)
            for (int64_t m = 0; m < MP; m++) dst[(ci * taps + t) * MP + m] = m < M ? src[(m * C + ci) * taps + t] : 0.0f;
    c->x[1] = wv;
    int64_t hp = (out[1] - 1) * st[1] + (ks[1] - 1) * dil[1] + 1, wp = (out[2] - 1) * st[2] + (ks[2] - 1) * dil[2] + 1;
    int64_t nb[1] = {C * hp * wp};
    c->y[1] = lower_temp(L, DT_FLOAT, 1, nb);
    c->kernel = kernel_find("o2c_conv_pv_f32");
    c->count = N * (MP / O2C_PV_NR);
}

/* o2c_conv_pwt_f32 (pointwise: one tap, every pixel) */
static void lower_pwt(Lowering *L, KCall *c, int64_t N)
{
    const int64_t *out = c->k + O2C_CONV_OUT;
    lower_transposed(L, c, N, 1, out[0] * out[1] * out[2], "o2c_conv_pwt_f32");
}

/* The implicit GEMM's register tiles (MR channels x NR pixels), the
 * default (8 x 32, o2c_conv_panel_f32, the heuristic's) first: --tune times
 * each as the variant "panelMRxNR" where its accumulators, MR x ceil(NR /
 * lanes) vector registers, leave PANEL_FREE_REGS of the target's vector
 * registers for the panel row and the broadcast weight. The portable C
 * target names no register file: every tile is a candidate there (the
 * timing decides; the same candidates on any machine, so a tuning file
 * replays anywhere). */
static const struct { int mr, nr; } PANEL_TILES[] = {
#define PANEL_TILE(MR, NR) {MR, NR},
    O2C_PANEL_TILES(PANEL_TILE)
#undef PANEL_TILE
};
#define NPANEL_TILES (int)(sizeof PANEL_TILES / sizeof PANEL_TILES[0])
#define PANEL_FREE_REGS 4

static int panel_tile_fits(int target, int mr, int nr)
{
    int lanes = 0, regs = 0;   /* float lanes a vector register, vector registers */
    if (target == TARGET_AVX512) lanes = 16, regs = 32;
    else if (target == TARGET_AVX2) lanes = 8, regs = 16;
    else if (target == TARGET_NEON) lanes = 4, regs = 32;
    if (!lanes) return 1;
    return mr * ((nr + lanes - 1) / lanes) <= regs - PANEL_FREE_REGS;
}

/* o2c_conv_panel_f32[_MRxNR]: the scratch panel (K x NR), the weights packed
 * MR channels to a k */
static void lower_panel(Lowering *L, KCall *c, int64_t N, int mr, int nr)
{
    int64_t *k = c->k, *out = k + O2C_CONV_OUT, *ks = k + O2C_CONV_K;
    int64_t kg = k[O2C_CONV_C] / k[O2C_CONV_GROUP] * ks[0] * ks[1] * ks[2];
    int64_t pd[2] = {kg, nr};
    c->y[1] = lower_temp(L, DT_FLOAT, 2, pd);
    int64_t G = k[O2C_CONV_GROUP], MG = k[O2C_CONV_M] / G, TM = (MG + mr - 1) / mr;
    int64_t wd[4] = {G, TM, kg, mr};
    Tensor *wp = lower_const(L, "W_packed", DT_FLOAT, 4, wd);
    const float *src = c->x[1]->data;
    float *dst = wp->data;
    for (int64_t g = 0; g < G; g++)
        for (int64_t t = 0; t < TM; t++)
            for (int64_t kk = 0; kk < kg; kk++)
                for (int64_t i = 0; i < mr; i++) {
                    int64_t m = t * mr + i;
                    dst[((g * TM + t) * kg + kk) * mr + i] = m < MG ? src[(g * MG + m) * kg + kk] : 0.0f;
                }
    c->x[1] = wp;
    int dflt = mr == PANEL_TILES[0].mr && nr == PANEL_TILES[0].nr;
    c->kernel = kernel_find(dflt ? "o2c_conv_panel_f32" : xfmt("o2c_conv_panel_f32_%dx%d", mr, nr));
    if (!c->kernel) fail_plain("internal: no panel kernel for the tile %dx%d (runtime/c/conv.h)", mr, nr);
    c->count = N * k[O2C_CONV_GROUP] * out[0] * ((out[1] * out[2] + nr - 1) / nr);
}

void conv_wino_weights(const float *W, int64_t M, int64_t C, float *dst)
{
    static const double Gm[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    int64_t TM = (M + O2C_CV_MR - 1) / O2C_CV_MR;
    memset(dst, 0, sizeof(float) * (size_t)(16 * TM * C * O2C_CV_MR));
    for (int64_t m = 0; m < M; m++)
        for (int64_t ci = 0; ci < C; ci++) {
            const float *g = W + (m * C + ci) * 9;
            double gg[4][3];   /* G g */
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 3; j++) gg[i][j] = Gm[i][0] * g[j] + Gm[i][1] * g[3 + j] + Gm[i][2] * g[6 + j];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) {   /* (G g) G^T */
                    double u = gg[i][0] * Gm[j][0] + gg[i][1] * Gm[j][1] + gg[i][2] * Gm[j][2];
                    dst[((int64_t)(i * 4 + j) * TM + m / O2C_CV_MR) * C * O2C_CV_MR + ci * O2C_CV_MR + m % O2C_CV_MR] = (float)u;
                }
        }
}

/* o2c_conv_wino_f32: the weights transformed (G g G^T) and packed 8
 * channels to a c, the scratch of the input transform and the products */
static void lower_wino(Lowering *L, KCall *c, int64_t N)
{
    int64_t *k = c->k, *out = k + O2C_CONV_OUT;
    int64_t C = k[O2C_CONV_C], M = k[O2C_CONV_M], TM = (M + O2C_CV_MR - 1) / O2C_CV_MR;
    int64_t wd[4] = {16, TM, C, O2C_CV_MR}, sd[1] = {16 * C * O2C_WG_TB + 16 * O2C_CV_MR * O2C_WG_TB};
    Tensor *wu = lower_const(L, "W_winograd", DT_FLOAT, 4, wd);
    conv_wino_weights(c->x[1]->data, M, C, wu->data);
    c->x[1] = wu;
    c->y[1] = lower_temp(L, DT_FLOAT, 1, sd);
    c->kernel = kernel_find("o2c_conv_wino_f32");
    c->count = N * ((out[1] + 1) / 2) * (((out[2] + 1) / 2 + O2C_WG_TB - 1) / O2C_WG_TB);
}

/* What a conv can do with channels-innermost tensors (layout.c): a
 * pointwise conv (o2c_conv_pwt_f32) reads and writes either layout; a 1-D
 * or 2-D depthwise conv of channel multiplier 1 and at least O2C_DWC_MIN_C
 * channels computes with both its tensors channels innermost
 * (o2c_dwc_f32). Constant float weights (packed at lowering) only. (A
 * general conv writing channels innermost through the implicit GEMM's
 * 8 x 32 tiles was tried: its transposed stores cost what the depthwise
 * conv after it gained, mobilenet_block 32.2 -> 31.8 us, ultraface's
 * first two convs 0.339 -> 0.317 ms.) */
int conv_layout_role(Node *n)
{
    int fused = !strcmp(n->op_type, "FusedConv");
    if ((!fused && strcmp(n->op_type, "Conv")) || n->folded || n->promoted) return LAYOUT_ROLE_NONE;
    Tensor *x = n->in[0], *w = n->in[1];
    if (x->dtype != DT_FLOAT || !w->data || (x->rank != 3 && x->rank != 4)) return LAYOUT_ROLE_NONE;
    ConvGeom g;
    int64_t group, M, C = x->dims[1];
    conv_geom(n, &g, &group, &M);
    int pointwise = group == 1;
    for (int i = 0; i < 3; i++) pointwise &= g.k[i] == 1 && g.s[i] == 1 && g.pb[i] == 0 && g.out[i] == g.in[i];
    if (pointwise) return LAYOUT_ROLE_PW;
    if (group == C && M == C && C >= O2C_DWC_MIN_C) return LAYOUT_ROLE_DW;
    return LAYOUT_ROLE_NONE;
}

/* A conv with a channels-innermost input or output (layout.c): no choice */
static void conv_channels_inner(Lowering *L, KCall *c, int64_t N, int lay)
{
    int64_t *k = c->k;
    k[O2C_CONV_LAYOUT] = lay;
    if (k[O2C_CONV_K] == 1 && k[O2C_CONV_K + 1] == 1 && k[O2C_CONV_K + 2] == 1 && k[O2C_CONV_GROUP] == 1) {
        lower_pwt(L, c, N);
        c->variant = "pwt-nhwc";
        return;
    }
    if (lay != (O2C_LAYOUT_IN_NHWC | O2C_LAYOUT_OUT_NHWC) || k[O2C_CONV_IN] != 1 || k[O2C_CONV_K] != 1)
        fail("internal: a channels-innermost conv the layouts do not allow");
    int64_t C = k[O2C_CONV_C], taps = k[O2C_CONV_K + 1] * k[O2C_CONV_K + 2];
    int64_t wd[2] = {taps, C};
    Tensor *wc = lower_const(L, "W_tapsxC", DT_FLOAT, 2, wd);
    const float *src = c->x[1]->data;
    float *dst = wc->data;
    for (int64_t t = 0; t < taps; t++)
        for (int64_t ci = 0; ci < C; ci++) dst[t * C + ci] = src[ci * taps + t];
    c->x[1] = wc;
    c->kernel = kernel_find("o2c_dwc_f32");
    c->count = N * k[O2C_CONV_OUT + 1];
    c->variant = "dwc";
}

static void conv_tiled(Lowering *L, KCall *c, int64_t N)
{
    int lay = (c->x[0]->layout == LAYOUT_NHWC ? O2C_LAYOUT_IN_NHWC : 0) |
              (c->y[0]->layout == LAYOUT_NHWC ? O2C_LAYOUT_OUT_NHWC : 0);
    if (lay) {
        conv_channels_inner(L, c, N, lay);
        return;
    }
    int64_t *k = c->k, *in = k + O2C_CONV_IN, *out = k + O2C_CONV_OUT, *ks = k + O2C_CONV_K;
    int64_t *st = k + O2C_CONV_S, *dil = k + O2C_CONV_D, *pb = k + O2C_CONV_PB;
    char *key = xfmt("conv_f32 %s N%lld C%lld M%lld G%lld in%lldx%lldx%lld out%lldx%lldx%lld k%lldx%lldx%lld "
                     "s%lldx%lldx%lld d%lldx%lldx%lld p%lldx%lldx%lld", target_name(L->target), (long long)N, (long long)k[O2C_CONV_C],
                     (long long)k[O2C_CONV_M], (long long)k[O2C_CONV_GROUP], (long long)in[0], (long long)in[1],
                     (long long)in[2], (long long)out[0], (long long)out[1], (long long)out[2], (long long)ks[0],
                     (long long)ks[1], (long long)ks[2], (long long)st[0], (long long)st[1], (long long)st[2],
                     (long long)dil[0], (long long)dil[1], (long long)dil[2], (long long)pb[0], (long long)pb[1],
                     (long long)pb[2]);
    int pointwise = 1;
    for (int i = 0; i < 3; i++) pointwise &= ks[i] == 1 && st[i] == 1 && pb[i] == 0 && out[i] == in[i];
    int dw_ok = !pointwise && k[O2C_CONV_C] == k[O2C_CONV_GROUP] &&
                31 * st[2] + (ks[2] - 1) * dil[2] + 1 <= O2C_DW_SPAN && ks[0] * ks[1] <= O2C_DW_ROWS;
    int64_t ow = pointwise ? out[0] * out[1] * out[2] : out[2];
    int heuristic = dw_ok && ow >= DW_MIN_ROW ? CONV_DW : ow <= CONV_NARROW_ROW ? CONV_TILE8 : CONV_TILE32;
    /* the implicit GEMM needs a scratch panel of K x 32 floats */
    int64_t kg = k[O2C_CONV_C] / k[O2C_CONV_GROUP] * ks[0] * ks[1] * ks[2];
    int panel_ok = !pointwise && kg <= PANEL_MAX_K && c->x[1]->data;   /* constant weights, packed */
    int64_t mg = k[O2C_CONV_M] / k[O2C_CONV_GROUP];
    if (mg == 1 && st[2] > 1) heuristic = CONV_TILE8;   /* depthwise with strides */
    else if (mg == 1 && dw_ok && ks[0] * ks[1] * ks[2] > PANEL_MAX_DW_TAPS && out[2] >= DW_MIN_ROW) heuristic = CONV_DW;
    else if (panel_ok && (out[2] >= PANEL_MIN_ROW || mg >= PANEL_MIN_MG)) heuristic = CONV_PANEL;
    /* pointwise, one group, constant weights: the transposed product for few pixels */
    int pwt_ok = pointwise && k[O2C_CONV_GROUP] == 1 && c->x[1]->data;
    if (pwt_ok && ow < PWT_MAX_PIXELS) heuristic = CONV_PWT;
    /* 2-D depthwise, stride 1: the flattened padded image */
    int dwflat_ok = k[O2C_CONV_C] == k[O2C_CONV_GROUP] && !pointwise && ks[0] == 1 && in[0] == 1 && out[0] == 1 &&
                    st[1] == st[2];
    if (dwflat_ok && st[2] == 1 && out[2] >= DWFLAT_MIN_ROW && out[2] < DWFLAT_MAX_ROW && (mg < PANEL_MIN_MG || !panel_ok))
        heuristic = CONV_DWFLAT;
    /* 2-D 3x3, stride 1, one group, constant weights: Winograd F(2x2, 3x3) */
    int wino_ok = ks[0] == 1 && in[0] == 1 && ks[1] == 3 && ks[2] == 3 && st[1] == 1 && st[2] == 1 && dil[1] == 1 &&
                  dil[2] == 1 && k[O2C_CONV_GROUP] == 1 && c->x[1]->data && k[O2C_CONV_C] <= WINO_MAX_C;
    if (wino_ok && ((k[O2C_CONV_C] >= WINO_MIN_C && k[O2C_CONV_M] >= WINO_MIN_M && out[2] >= WINO_MIN_ROW) ||
                    (k[O2C_CONV_C] >= WINO_MID_MIN_C && k[O2C_CONV_M] >= WINO_MIN_M && out[2] >= WINO_MID_ROW) ||
                    (k[O2C_CONV_C] >= WINO_WIDE_MIN_C && k[O2C_CONV_M] >= WINO_WIDE_MIN_M && out[2] >= WINO_WIDE_ROW)))
        heuristic = CONV_WINO;
    /* few output pixels, taps, one group, constant weights: the transposed product */
    int gt_ok = !pointwise && k[O2C_CONV_GROUP] == 1 && c->x[1]->data && ks[0] == 1 && in[0] == 1 && out[0] == 1;
    if (gt_ok && out[1] * out[2] <= GT_MAX_PIXELS) heuristic = CONV_GT;
    int64_t px = out[1] * out[2], m_all = k[O2C_CONV_M];
    int strided = st[1] > 1 || st[2] > 1;
    if (gt_ok && ks[1] * ks[2] >= GT_WIDE_MIN_TAPS && m_all >= GT_WIDE_MIN_M && m_all <= GT_WIDE_MAX_M &&
        px <= GT_WIDE_MAX_PIXELS && (strided || m_all <= GT_WIDE_MIN_M || px <= GT_WIDE_S1_MAX_PIXELS))
        heuristic = CONV_GT;
    /* pixels x a vector of output channels over a padded image (o2c_conv_pv_f32) */
    int pv_ok = gt_ok;
    int64_t pv_pad = k[O2C_CONV_C] * ((out[1] - 1) * st[1] + (ks[1] - 1) * dil[1] + 1) *
                     ((out[2] - 1) * st[2] + (ks[2] - 1) * dil[2] + 1);
    if (pv_ok && k[O2C_CONV_M] >= PV_MIN_M && k[O2C_CONV_M] <= PV_MAX_M && ks[1] * ks[2] >= PV_MIN_TAPS && kg >= PV_MIN_K && pv_pad <= PV_MAX_PAD &&
        out[1] * out[2] > GT_MAX_PIXELS)
        heuristic = CONV_PV;
    const char *names[CONV_NVARIANTS + NPANEL_TILES];
    int which[CONV_NVARIANTS + NPANEL_TILES], tile[CONV_NVARIANTS + NPANEL_TILES], nc = 0;
    for (int i = 0; i < CONV_NVARIANTS; i++)
        if ((i != CONV_DW || dw_ok) && (i != CONV_PANEL || panel_ok) && (i != CONV_PWT || pwt_ok) &&
            (i != CONV_DWFLAT || dwflat_ok) && (i != CONV_WINO || wino_ok) && (i != CONV_GT || gt_ok) &&
            (i != CONV_PV || pv_ok)) {
            names[nc] = CONV_VARIANTS[i];
            tile[nc] = 0;
            which[nc++] = i;
        }
    for (int t = 1; t < NPANEL_TILES && panel_ok; t++)   /* the panel's other register tiles */
        if (panel_tile_fits(L->target, PANEL_TILES[t].mr, PANEL_TILES[t].nr)) {
            names[nc] = xfmt("panel%dx%d", PANEL_TILES[t].mr, PANEL_TILES[t].nr);
            tile[nc] = t;
            which[nc++] = CONV_PANEL;
        }
    int hpick = 0;
    for (int i = 0; i < nc; i++)
        if (which[i] == heuristic && !tile[i]) hpick = i;
    int pick = lower_choose(L, c, key, names, nc, hpick), v = which[pick];
    if (v == CONV_DIRECT) return;
    if (v == CONV_WINO) {
        lower_wino(L, c, N);
        return;
    }
    if (v == CONV_DWFLAT) {
        int64_t wp = (out[2] - 1) * st[2] + (ks[2] - 1) * dil[2] + 1, hp = st[1] * out[1] + (ks[1] - 1) * dil[1];
        int64_t nb[1] = {hp * wp + (ks[2] - 1) * dil[2]};
        c->y[1] = lower_temp(L, DT_FLOAT, 1, nb);
        c->kernel = kernel_find("o2c_dwflat_f32");
        c->count = N * k[O2C_CONV_M];
        return;
    }
    if (v == CONV_PWT) {
        lower_pwt(L, c, N);
        return;
    }
    if (v == CONV_PV) {
        lower_pv(L, c, N);
        return;
    }
    if (v == CONV_GT) {
        lower_transposed(L, c, N, ks[1] * ks[2], out[1] * out[2], "o2c_conv_gt_f32");
        return;
    }
    if (v == CONV_PANEL) {
        lower_panel(L, c, N, PANEL_TILES[tile[pick]].mr, PANEL_TILES[tile[pick]].nr);
        return;
    }
    if (v == CONV_DW) {
        c->kernel = kernel_find("o2c_dwconv_f32");
        c->count = N * k[O2C_CONV_M] * out[0] * out[1];
        return;
    }
    if (pointwise) {   /* one row of ID*IH*IW columns: the tiles run along the whole image */
        in[2] *= in[0] * in[1]; in[0] = in[1] = 1;
        out[2] *= out[0] * out[1]; out[0] = out[1] = 1;
    }
    int64_t MG = k[O2C_CONV_M] / k[O2C_CONV_GROUP];
    int64_t nr = v == CONV_TILE8 ? O2C_CV_NR_NARROW : O2C_CV_NR;
    c->kernel = kernel_find(v == CONV_TILE32 ? "o2c_conv_tile_f32" : "o2c_conv_tile8_f32");
    c->count = N * k[O2C_CONV_GROUP] * ((MG + O2C_CV_MR - 1) / O2C_CV_MR) * out[0] * out[1] * ((out[2] + nr - 1) / nr);
}

/* ConvTranspose on the C target: a 2-D one whose kernel equals its stride
 * (one group, no padding, no dilation, the output exactly IH SH x IW SW)
 * takes o2c_convt_ks_f32 (PP-OCRv4's text detector: its two 2x2 stride-2
 * upsamplings took 37 and 18 ms of 80 in the reference kernel) */
static void convt_tiled(Lowering *L, KCall *c, int64_t N)
{
    const int64_t *k = c->k, *in = k + O2C_CONV_IN, *out = k + O2C_CONV_OUT, *ks = k + O2C_CONV_K;
    const int64_t *st = k + O2C_CONV_S, *dil = k + O2C_CONV_D, *pb = k + O2C_CONV_PB;
    if (k[O2C_CONV_GROUP] != 1 || ks[0] != 1 || in[0] != 1 || out[0] != 1) return;
    for (int i = 1; i < 3; i++)
        if (ks[i] != st[i] || dil[i] != 1 || pb[i] != 0 || out[i] != in[i] * st[i]) return;
    int64_t words = ks[2] * in[2];
    c->kernel = kernel_find("o2c_convt_ks_f32");
    c->y[1] = lower_temp(L, DT_FLOAT, 1, &words);
    c->count = N * k[O2C_CONV_M] * in[1] * ks[1];
}

static KCall *conv_call(Lowering *L, Node *n, const char *kind, int64_t C, int64_t M, int64_t group, const ConvGeom *g)
{
    Tensor *y = n->out[0];
    KCall *c = lower_call(L, xfmt("o2c_%s_%s", kind, dtype_suffix(n->in[0]->dtype)), tensor_numel(y));
    c->x[0] = n->in[0];
    c->x[1] = n->in[1];
    c->x[2] = in_t(n, 2);
    c->y[0] = y;
    c->k[O2C_CONV_C] = C;
    c->k[O2C_CONV_M] = M;
    c->k[O2C_CONV_GROUP] = group;
    for (int i = 0; i < 3; i++) {
        c->k[O2C_CONV_IN + i] = g->in[i];
        c->k[O2C_CONV_OUT + i] = g->out[i];
        c->k[O2C_CONV_K + i] = g->k[i];
        c->k[O2C_CONV_S + i] = g->s[i];
        c->k[O2C_CONV_D + i] = g->d[i];
        c->k[O2C_CONV_PB + i] = g->pb[i];
    }
    if (L->tiled && !strcmp(kind, "convt") && n->in[0]->dtype == DT_FLOAT) convt_tiled(L, c, y->dims[0]);
    if (L->tiled && !strcmp(kind, "conv") && n->in[0]->dtype == DT_FLOAT) conv_tiled(L, c, y->dims[0]);
    else if (L->target == TARGET_CORTEX_M && !strcmp(kind, "conv") && n->in[0]->dtype == DT_FLOAT && g->out[2] > 0 &&
             n->in[0]->layout == LAYOUT_NCHW && y->layout == LAYOUT_NCHW) {
        /* a core without a vector unit: the reference sums by rows, no division per output */
        c->kernel = kernel_find("o2c_conv_rows_f32");
        c->count = tensor_numel(y) / g->out[2];
    } else if (n->in[0]->layout != LAYOUT_NCHW || y->layout != LAYOUT_NCHW)
        fail("internal: a channels-innermost tensor outside the C target's convs");
    return c;
}

void lower_conv(Node *n, Lowering *L)
{
    lower_conv_call(n, L, 0);
}

/* ---- ConvTranspose ----------------------------------------------------- */

/* Output dims and begin pads, as the ONNX spec says:
 *   output_shape given: total_padding = s*(in-1) + output_padding + (k-1)*d + 1 - out;
 *     given pads are ignored; SAME_UPPER puts total/2 first, the others
 *     (NOTSET, SAME_LOWER) total - total/2 first (VALID: nothing first);
 *   SAME_*: out = in * s, pads as above;
 *   else out = s*(in-1) + output_padding + (k-1)*d + 1 - pads_begin - pads_end. */
static void convt_geom(Node *n, ConvGeom *g, int64_t *group, int64_t *M)
{
    Tensor *x = n->in[0], *w = n->in[1];
    int64_t kernel[MAX_RANK];
    *group = conv_check(n, kernel);
    int64_t C = x->dims[1];
    if (w->dims[0] != C)
        fail("W ('%s') is %s: its first dimension must equal the input channels %lld", w->name,
             tensor_shape_str(w), (long long)C);
    if (C % *group) fail("the input channels (%lld) are not a multiple of group (%lld)", (long long)C, (long long)*group);
    *M = w->dims[1] * *group;
    int nsp = x->rank - 2;
    conv_geom_init(n, x, kernel, nsp, g);
    const char *ap = attr_s(n, "auto_pad");
    int same_upper = !strcmp(ap, "SAME_UPPER"), same_lower = !strcmp(ap, "SAME_LOWER");
    int valid = !strcmp(ap, "VALID");
    if (!same_upper && !same_lower && !valid && strcmp(ap, "NOTSET") && ap[0])
        fail("auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", ap);
    int64_t opad[3] = {0, 0, 0};
    const int64_t *a;
    int na = attr_ints(n, "output_padding", &a);
    if (na) {
        if (na != nsp && na != 2 * nsp) fail("output_padding has %d values; the input has %d spatial dimensions", na, nsp);
        for (int i = 0; i < nsp; i++) opad[3 - nsp + i] = a[i];
    }
    int64_t oshape[3] = {0, 0, 0};
    int nos = attr_ints(n, "output_shape", &a);
    if (nos) {
        if (nos != nsp && nos != nsp + 2)
            fail("output_shape has %d values; the input has %d spatial dimensions", nos, nsp);
        for (int i = 0; i < nsp; i++) {
            oshape[3 - nsp + i] = a[nos - nsp + i];
            /* bounded before the padding is computed from it (fuzzing: INT64_MIN overflowed) */
            if (oshape[3 - nsp + i] < 1 || oshape[3 - nsp + i] > TENSOR_MAX_BYTES)
                fail("output_shape holds %lld; each value must be between 1 and %lld",
                     (long long)oshape[3 - nsp + i], (long long)TENSOR_MAX_BYTES);
        }
    }
    /* with output_shape (or SAME_*), pads are generated and given ones ignored */
    for (int i = 0; i < 3; i++) {
        if (i < 3 - nsp) { g->out[i] = 1; continue; }
        if (opad[i] < 0 || (opad[i] >= g->s[i] && opad[i] >= g->d[i]))
            fail("output_padding %lld must be smaller than the stride or the dilation", (long long)opad[i]);
        /* stride x input length bounded, so that the output length cannot overflow */
        if (g->in[i] - 1 > TENSOR_MAX_BYTES / g->s[i])
            fail("stride %lld times the input length %lld is too large", (long long)g->s[i], (long long)g->in[i]);
        int64_t full = g->s[i] * (g->in[i] - 1) + opad[i] + (g->k[i] - 1) * g->d[i] + 1;
        if (valid) g->pb[i] = g->pe[i] = 0;
        if (nos || same_upper || same_lower) {
            g->out[i] = nos ? oshape[i] : g->in[i] * g->s[i];
            int64_t total = full - g->out[i];
            int64_t half = floor_div(total, 2);
            /* ConvTranspose-1 split an odd total the other way round
             * (SAME_UPPER: the larger part first); opset 11 swapped it */
            if (n->opset < 11 && !valid && total % 2)
                fail("ConvTranspose-1 with %s splits an odd total padding (%lld) the other way round than opset 11 "
                     "does; onnx2c implements the opset-11 rule only (convert the model to opset 11)",
                     nos ? "output_shape" : ap, (long long)total);
            g->pb[i] = valid ? 0 : same_upper ? half : total - half;
            g->pe[i] = total - g->pb[i];
        } else {
            g->out[i] = full - g->pb[i] - g->pe[i];
        }
        if (g->out[i] < 1) fail("the output would be empty along a spatial axis");
    }
}

void infer_conv_transpose(Node *n) { infer_conv_any(n, 1); }

void lower_conv_transpose(Node *n, Lowering *L)
{
    lower_conv_call(n, L, 1);
}

KCall *lower_conv_call(Node *n, Lowering *L, int transpose)
{
    ConvGeom g;
    int64_t group, M;
    conv_any_geom(n, transpose, &g, &group, &M);
    return conv_call(L, n, transpose ? "convt" : "conv", n->in[0]->dims[1], M, group, &g);
}
