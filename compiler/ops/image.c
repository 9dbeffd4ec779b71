/* Image ops: GridSample, AffineGrid, Col2Im, CenterCropPad, RoiAlign,
 * MaxUnpool, DeformConv (kernels in runtime/c/image.h). Inputs that decide the output shape (AffineGrid's size,
 * Col2Im's image and block shapes, CenterCropPad's shape, MaxUnpool's
 * output_shape) must be constants. */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/image.h"

static int64_t prod(const int64_t *d, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++) p *= d[i];
    return p;
}

/* An ints attribute of exactly want values, or def (each value) when absent. */
static void ints_attr(Node *n, const char *name, int want, int64_t def, int64_t *v)
{
    const int64_t *a;
    int na = attr_ints(n, name, &a);
    if (na && na != want) fail("attribute '%s' has %d values; %d are needed here", name, na, want);
    for (int i = 0; i < want; i++) v[i] = na ? a[i] : def;
}

/* ---- GridSample ----------------------------------------------------------- */

static int gs_mode(Node *n)
{
    const char *m = attr_s(n, "mode");
    if (!strcmp(m, "nearest")) return O2C_GS_NEAREST;
    if (!strcmp(m, "linear") || !strcmp(m, "bilinear")) return O2C_GS_LINEAR;
    if (!strcmp(m, "cubic") || !strcmp(m, "bicubic")) return O2C_GS_CUBIC;
    fail("mode '%s' is not one of nearest, linear (bilinear), cubic (bicubic)", m);
}

static int gs_pad(Node *n)
{
    const char *m = attr_s(n, "padding_mode");
    if (!strcmp(m, "zeros")) return O2C_GS_PAD_ZEROS;
    if (!strcmp(m, "border")) return O2C_GS_PAD_BORDER;
    if (!strcmp(m, "reflection")) return O2C_GS_PAD_REFLECTION;
    fail("padding_mode '%s' is not one of zeros, border, reflection", m);
}

void infer_gridsample(Node *n)
{
    Tensor *x = n->in[0], *g = n->in[1];
    int mode = gs_mode(n);
    gs_pad(n);
    need_dtype(n, x, mode == O2C_GS_NEAREST ? DTS_ALL : DTS_FLOAT);
    need_dtype(n, g, DTS_FLOAT);
    if (x->rank < 3) fail("X ('%s') is %s; GridSample needs N x C x D1 x ... x Dr", x->name, tensor_shape_str(x));
    int r = x->rank - 2;
    if (g->rank != r + 2 || g->dims[0] != x->dims[0] || g->dims[r + 1] != r)
        fail("grid ('%s') is %s; for X %s it must be %lld x H1 x ... x H%d x %d", g->name, tensor_shape_str(g),
             tensor_shape_str(x), (long long)x->dims[0], r, r);
    for (int a = 0; a < r; a++)
        if (x->dims[2 + a] < 1 && tensor_numel(g) > 0)
            fail("X ('%s') has an empty spatial axis (%s)", x->name, tensor_shape_str(x));
    int64_t dims[MAX_RANK];
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (int a = 0; a < r; a++) dims[2 + a] = g->dims[1 + a];
    set_out(n, 0, x->dtype, x->rank, dims);
}

void lower_gridsample(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *g = n->in[1], *y = n->out[0];
    int mode = gs_mode(n), r = x->rank - 2;
    if (tensor_numel(y) == 0) return;
    KCall *c;
    if (mode == O2C_GS_NEAREST) {
        c = lower_call(L, xfmt("o2c_gridsample_nearest_%s", dtype_suffix(g->dtype)), tensor_numel(y));
        c->x[1] = g;
    } else {
        c = lower_call(L, xfmt("o2c_gridsample_%s", dtype_suffix(x->dtype)), tensor_numel(y));
        c->x[1] = lower_cast_temp(L, g, x->dtype);
    }
    c->x[0] = x;
    c->y[0] = y;
    c->k[O2C_GS_NSP] = r;
    c->k[O2C_GS_C] = x->dims[1];
    c->k[O2C_GS_G] = prod(g->dims, 1, r + 1);
    c->k[O2C_GS_MODE] = mode;
    c->k[O2C_GS_PAD] = gs_pad(n);
    c->k[O2C_GS_ALIGN] = attr_i(n, "align_corners") != 0;
    c->k[O2C_GS_ESIZE] = (int64_t)dtype_size(x->dtype);
    for (int a = 0; a < r; a++) c->k[O2C_GS_XDIMS + a] = x->dims[2 + a];
}

/* ---- AffineGrid ------------------------------------------------------------- */

static int affine_size(Node *n, int64_t *size)
{
    Tensor *ts = n->in[1];
    need_const(n, ts, "AffineGrid's size");
    if (ts->rank != 1) fail("size ('%s') must be 1-D, it is %s", ts->name, tensor_shape_str(ts));
    int ns = const_ints(n, ts, size, 5);
    if (ns != 4 && ns != 5) fail("size ('%s') has %d values; it must be N, C, H, W or N, C, D, H, W", ts->name, ns);
    for (int i = 0; i < ns; i++)
        if (size[i] < 0) fail("size ('%s') holds the negative value %lld", ts->name, (long long)size[i]);
    for (int i = 2; i < ns; i++)
        if (size[i] == 1 && attr_i(n, "align_corners"))
            fail("align_corners=1 with a spatial size of 1 (size '%s', axis %d) has no defined grid (the ONNX function "
                 "divides by zero; implementations give -1, 0 or 1)", ts->name, i);
    return ns - 2;
}

void infer_affine_grid(Node *n)
{
    Tensor *th = n->in[0];
    need_dtype(n, th, DTS_FLOAT);
    int64_t size[5];
    int r = affine_size(n, size);
    if (th->rank != 3 || th->dims[1] != r || th->dims[2] != r + 1)
        fail("theta ('%s') is %s; for a %d-D size it must be N x %d x %d", th->name, tensor_shape_str(th), r, r, r + 1);
    if (th->dims[0] != size[0])
        fail("theta ('%s') has %lld matrices but size asks for N = %lld", th->name, (long long)th->dims[0], (long long)size[0]);
    int64_t dims[5];
    dims[0] = size[0];
    for (int a = 0; a < r; a++) dims[1 + a] = size[2 + a];
    dims[r + 1] = r;
    set_out(n, 0, th->dtype, r + 2, dims);
}

void lower_affine_grid(Node *n, Lowering *L)
{
    Tensor *th = n->in[0], *y = n->out[0];
    int64_t size[5];
    int r = affine_size(n, size);
    if (tensor_numel(y) == 0) return;
    KCall *c = lower_call(L, xfmt("o2c_affine_grid_%s", dtype_suffix(th->dtype)), tensor_numel(y) / r);
    c->x[0] = th;
    c->y[0] = y;
    c->k[O2C_AG_NSP] = r;
    c->k[O2C_AG_ALIGN] = attr_i(n, "align_corners") != 0;
    for (int a = 0; a < 3; a++) c->k[O2C_AG_DIMS + a] = 1;
    for (int a = 0; a < r; a++) c->k[O2C_AG_DIMS + 3 - r + a] = size[2 + a];
}

/* ---- Col2Im ---------------------------------------------------------------- */

typedef struct {
    int r;
    int64_t img[MAX_RANK], blk[MAX_RANK], col[MAX_RANK], s[MAX_RANK], d[MAX_RANK], pads[2 * MAX_RANK];
    int64_t C;
} C2I;

static void col2im_geom(Node *n, C2I *G)
{
    Tensor *x = n->in[0], *ti = n->in[1], *tb = n->in[2];
    need_const(n, ti, "Col2Im's image_shape");
    need_const(n, tb, "Col2Im's block_shape");
    int r = const_ints(n, ti, G->img, MAX_RANK - 2);
    int rb = const_ints(n, tb, G->blk, MAX_RANK - 2);
    if (r < 1 || rb != r)
        fail("image_shape has %d values and block_shape %d; they must have the same number, at least 1", r, rb);
    G->r = r;
    ints_attr(n, "strides", r, 1, G->s);
    ints_attr(n, "dilations", r, 1, G->d);
    ints_attr(n, "pads", 2 * r, 0, G->pads);
    if (x->rank != 3) fail("input '%s' is %s; Col2Im needs N x (C * block size) x L", x->name, tensor_shape_str(x));
    int64_t K = 1, Lc = 1;
    for (int a = 0; a < r; a++) {
        if (G->img[a] < 1 || G->blk[a] < 1 || G->s[a] < 1 || G->d[a] < 1 || G->pads[a] < 0 || G->pads[r + a] < 0)
            fail("axis %d: image size %lld, block %lld, stride %lld, dilation %lld, pads %lld/%lld: sizes, strides "
                 "and dilations must be positive, pads not negative",
                 a, (long long)G->img[a], (long long)G->blk[a], (long long)G->s[a], (long long)G->d[a],
                 (long long)G->pads[a], (long long)G->pads[r + a]);
        int64_t span = G->img[a] + G->pads[a] + G->pads[r + a] - (G->d[a] * (G->blk[a] - 1) + 1);
        if (span < 0) fail("axis %d: the dilated block (%lld) is larger than the padded image", a, (long long)(G->d[a] * (G->blk[a] - 1) + 1));
        G->col[a] = span / G->s[a] + 1;
        K *= G->blk[a];
        Lc *= G->col[a];
    }
    if (x->dims[1] % K != 0)
        fail("input '%s' (%s): dimension 1 must be a multiple of the block size %lld", x->name, tensor_shape_str(x), (long long)K);
    if (x->dims[2] != Lc)
        fail("input '%s' (%s): dimension 2 must be the number of sliding blocks, %lld", x->name, tensor_shape_str(x), (long long)Lc);
    G->C = x->dims[1] / K;
}

void infer_col2im(Node *n)
{
    Tensor *x = n->in[0];
    need_dtype(n, x, DTS_NUM);
    C2I G;
    col2im_geom(n, &G);
    int64_t dims[MAX_RANK];
    dims[0] = x->dims[0];
    dims[1] = G.C;
    for (int a = 0; a < G.r; a++) dims[2 + a] = G.img[a];
    set_out(n, 0, x->dtype, G.r + 2, dims);
}

void lower_col2im(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    C2I G;
    col2im_geom(n, &G);
    if (tensor_numel(y) == 0) return;
    KCall *c = lower_call(L, xfmt("o2c_col2im_%s", dtype_suffix(x->dtype)), tensor_numel(y));
    c->x[0] = x;
    c->y[0] = y;
    c->k[O2C_C2I_NSP] = G.r;
    c->k[O2C_C2I_C] = G.C;
    for (int a = 0; a < G.r; a++) {
        c->k[O2C_C2I_IMG + a] = G.img[a];
        c->k[O2C_C2I_BLK + a] = G.blk[a];
        c->k[O2C_C2I_COL + a] = G.col[a];
        c->k[O2C_C2I_S + a] = G.s[a];
        c->k[O2C_C2I_D + a] = G.d[a];
        c->k[O2C_C2I_PB + a] = G.pads[a];
    }
}

/* ---- CenterCropPad ------------------------------------------------------------- */

/* Output dims and, per axis, the shift from input to output coordinates. */
static void crop_geom(Node *n, int64_t *dims, int64_t *shift)
{
    Tensor *x = n->in[0], *ts = n->in[1];
    int r = x->rank;
    need_const(n, ts, "CenterCropPad's shape");
    int64_t sh[MAX_RANK], axes[MAX_RANK];
    int ns = const_ints(n, ts, sh, MAX_RANK), na = r;
    const int64_t *a;
    if (attr_has(n, "axes")) {
        na = attr_ints(n, "axes", &a);
        char seen[MAX_RANK] = {0};
        for (int i = 0; i < na && i < MAX_RANK; i++) {
            axes[i] = norm_axis(n, a[i], r);
            if (seen[axes[i]]) fail("axis %lld appears twice in axes", (long long)a[i]);
            seen[axes[i]] = 1;
        }
    } else {
        for (int i = 0; i < r; i++) axes[i] = i;
    }
    if (ns != na) fail("shape ('%s') has %d values for %d axes", ts->name, ns, na);
    for (int d = 0; d < r; d++) {
        dims[d] = x->dims[d];
        shift[d] = 0;
    }
    for (int i = 0; i < na; i++) {
        int64_t d = axes[i], dim = x->dims[d];
        if (sh[i] < 0) fail("shape ('%s') holds the negative size %lld", ts->name, (long long)sh[i]);
        dims[d] = sh[i];
        shift[d] = sh[i] >= dim ? (sh[i] - dim) / 2 : -((dim - sh[i]) / 2);
    }
}

void infer_center_crop_pad(Node *n)
{
    Tensor *x = n->in[0];
    need_dtype(n, x, DTS_ALL);
    need_dtype(n, n->in[1], DTS_INDEX);
    int64_t dims[MAX_RANK], shift[MAX_RANK];
    crop_geom(n, dims, shift);
    set_out(n, 0, x->dtype, x->rank, dims);
}

void lower_center_crop_pad(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int64_t dims[MAX_RANK], shift[MAX_RANK];
    crop_geom(n, dims, shift);
    if (tensor_numel(y) == 0) return;
    KCall *c = lower_call(L, "o2c_crop_pad", tensor_numel(y));
    c->x[0] = x;
    c->y[0] = y;
    c->k[O2C_CROP_RANK] = x->rank;
    c->k[O2C_CROP_ESIZE] = (int64_t)dtype_size(x->dtype);
    for (int d = 0; d < x->rank; d++) {
        c->k[O2C_CROP_YDIMS + d] = y->dims[d];
        c->k[O2C_CROP_XDIMS + d] = x->dims[d];
        c->k[O2C_CROP_SHIFT + d] = shift[d];
    }
}

/* ---- RoiAlign ----------------------------------------------------------------- */

/* half_pixel (opset 16 on, the default) or output_half_pixel (opset 10's
 * behaviour) */
static int roi_half(Node *n)
{
    if (n->opset < 16) return 0;
    const char *m = attr_s(n, "coordinate_transformation_mode");
    if (!strcmp(m, "half_pixel")) return 1;
    if (!strcmp(m, "output_half_pixel")) return 0;
    fail("coordinate_transformation_mode '%s' is not one of half_pixel, output_half_pixel", m);
}

static int roi_max(Node *n)
{
    const char *m = attr_s(n, "mode");
    if (!strcmp(m, "avg")) return 0;
    if (!strcmp(m, "max")) return 1;
    fail("mode '%s' is not one of avg, max", m);
}

/* the largest sampling_ratio taken: ratio^2 bilinear samples per output
 * bin (the ONNX tests use 2; a fuzzed 2^40 made a run of 2^80 samples) */
#define ROI_MAX_SAMPLING_RATIO 1024

void infer_roialign(Node *n)
{
    Tensor *x = n->in[0], *ro = n->in[1], *bi = n->in[2];
    need_dtype(n, x, DTS_FLOAT);
    need_dtype(n, bi, DTS_INDEX);
    roi_half(n);
    roi_max(n);
    if (x->rank != 4) fail("X ('%s') is %s; RoiAlign needs N x C x H x W", x->name, tensor_shape_str(x));
    if (ro->dtype != x->dtype) fail("rois ('%s') is %s; it must have X's type %s", ro->name, dtype_name(ro->dtype), dtype_name(x->dtype));
    if (ro->rank != 2 || ro->dims[1] != 4) fail("rois ('%s') is %s; it must be num_rois x 4", ro->name, tensor_shape_str(ro));
    if (bi->rank != 1 || bi->dims[0] != ro->dims[0])
        fail("batch_indices ('%s') is %s; it must hold one index per roi (%lld)", bi->name, tensor_shape_str(bi), (long long)ro->dims[0]);
    int64_t oh = attr_i(n, "output_height"), ow = attr_i(n, "output_width");
    if (oh < 1 || ow < 1) fail("output_height and output_width must be positive, they are %lld and %lld", (long long)oh, (long long)ow);
    if (attr_i(n, "sampling_ratio") < 0) fail("sampling_ratio must not be negative");
    if (attr_i(n, "sampling_ratio") > ROI_MAX_SAMPLING_RATIO)
        fail("sampling_ratio %lld: onnx2c takes at most %d (a grid of that many squared samples per output bin)",
             (long long)attr_i(n, "sampling_ratio"), ROI_MAX_SAMPLING_RATIO);
    int64_t dims[4] = {ro->dims[0], x->dims[1], oh, ow};
    set_out(n, 0, x->dtype, 4, dims);
}

void lower_roialign(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0], *bi = n->in[2];
    if (tensor_numel(y) == 0) return;
    if (bi->dtype != DT_INT64) bi = lower_cast_temp(L, bi, DT_INT64);
    KCall *c = lower_call(L, xfmt("o2c_roialign_%s", dtype_suffix(x->dtype)), tensor_numel(y));
    c->x[0] = x;
    c->x[1] = n->in[1];
    c->x[2] = bi;
    c->y[0] = y;
    c->k[O2C_ROI_C] = x->dims[1];
    c->k[O2C_ROI_H] = x->dims[2];
    c->k[O2C_ROI_W] = x->dims[3];
    c->k[O2C_ROI_PH] = y->dims[2];
    c->k[O2C_ROI_PW] = y->dims[3];
    c->k[O2C_ROI_N] = x->dims[0];
    c->k[O2C_ROI_RATIO] = attr_i(n, "sampling_ratio");
    c->k[O2C_ROI_MAX] = roi_max(n);
    c->k[O2C_ROI_HALF] = roi_half(n);
    c->f[O2C_ROI_F_SCALE] = attr_f(n, "spatial_scale");
}

/* ---- MaxUnpool --------------------------------------------------------------- */

/* The unpooled shape the indices address (idims) and the output shape. */
static void unpool_shapes(Node *n, int64_t *idims, int64_t *ydims)
{
    Tensor *x = n->in[0], *ti = in_t(n, 2);
    int r = x->rank, nsp = r - 2;
    if (r < 3) fail("X ('%s') is %s; MaxUnpool needs N x C x D1 x ...", x->name, tensor_shape_str(x));
    const int64_t *ks;
    int nk = attr_ints(n, "kernel_shape", &ks);
    if (nk != nsp) fail("kernel_shape has %d values; X ('%s', %s) has %d spatial axes", nk, x->name, tensor_shape_str(x), nsp);
    int64_t s[MAX_RANK], pads[2 * MAX_RANK];
    ints_attr(n, "strides", nsp, 1, s);
    ints_attr(n, "pads", 2 * nsp, 0, pads);
    idims[0] = x->dims[0];
    idims[1] = x->dims[1];
    for (int a = 0; a < nsp; a++) {
        idims[2 + a] = (x->dims[2 + a] - 1) * s[a] - (pads[a] + pads[nsp + a]) + ks[a];
        if (idims[2 + a] < 0) fail("axis %d: the unpooled size %lld is negative", 2 + a, (long long)idims[2 + a]);
    }
    memcpy(ydims, idims, sizeof(int64_t) * (size_t)r);
    if (ti && (ti->rank < 0 || tensor_numel(ti) > 0)) {
        need_const(n, ti, "MaxUnpool's output_shape");
        int64_t v[MAX_RANK + 1];
        int nv = const_ints(n, ti, v, MAX_RANK + 1);
        if (nv != r) fail("output_shape ('%s') has %d values; X has rank %d", ti->name, nv, r);
        for (int d = 0; d < r; d++) {
            if (v[d] < idims[d])
                fail("output_shape ('%s') is smaller than the unpooled shape on axis %d (%lld < %lld)", ti->name, d,
                     (long long)v[d], (long long)idims[d]);
            if (d < 2 && v[d] != idims[d])
                fail("output_shape ('%s') changes axis %d (%lld, X has %lld)", ti->name, d, (long long)v[d], (long long)idims[d]);
            ydims[d] = v[d];
        }
    }
}

void infer_maxunpool(Node *n)
{
    Tensor *x = n->in[0], *ix = n->in[1];
    need_dtype(n, x, DTS_ALL);
    need_dtype(n, ix, DTS_INDEX);
    if (ix->rank != x->rank || memcmp(ix->dims, x->dims, sizeof(int64_t) * (size_t)x->rank))
        fail("I ('%s', %s) must have the shape of X ('%s', %s)", ix->name, tensor_shape_str(ix), x->name, tensor_shape_str(x));
    int64_t idims[MAX_RANK], ydims[MAX_RANK];
    unpool_shapes(n, idims, ydims);
    set_out(n, 0, x->dtype, x->rank, ydims);
}

void lower_maxunpool(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *ix = n->in[1], *y = n->out[0];
    int64_t idims[MAX_RANK], ydims[MAX_RANK];
    unpool_shapes(n, idims, ydims);
    if (tensor_numel(y) == 0) return;
    if (ix->dtype != DT_INT64) ix = lower_cast_temp(L, ix, DT_INT64);
    KCall *c = lower_call(L, "o2c_maxunpool", 1);
    c->x[0] = x;
    c->x[1] = ix;
    c->y[0] = y;
    c->k[O2C_UNPOOL_ESIZE] = (int64_t)dtype_size(x->dtype);
    c->k[O2C_UNPOOL_NX] = tensor_numel(x);
    c->k[O2C_UNPOOL_RANK] = x->rank;
    for (int d = 0; d < x->rank; d++) {
        c->k[O2C_UNPOOL_IDIMS + d] = idims[d];
        c->k[O2C_UNPOOL_YDIMS + d] = ydims[d];
    }
}

/* ---- DeformConv (2-D) --------------------------------------------------------------- */

typedef struct {
    int64_t N, C, H, W, M, OH, OW, KH, KW, s[2], d[2], pads[4], group, ogroup;
} DCGeom;

static void deform_geom(Node *n, DCGeom *G)
{
    Tensor *x = n->in[0], *w = n->in[1], *off = n->in[2], *b = in_t(n, 3), *mk = in_t(n, 4);
    if (x->rank != 4)
        fail("X ('%s') is %s; onnx2c supports 2-D DeformConv only (N x C x H x W)", x->name, tensor_shape_str(x));
    if (w->rank != 4) fail("W ('%s') is %s; it must be M x C/group x kH x kW", w->name, tensor_shape_str(w));
    G->N = x->dims[0];
    G->C = x->dims[1];
    G->H = x->dims[2];
    G->W = x->dims[3];
    G->M = w->dims[0];
    int64_t ks[2] = {w->dims[2], w->dims[3]};
    const int64_t *ka;
    int nk = attr_ints(n, "kernel_shape", &ka);
    if (nk) {
        if (nk != 2 || ka[0] != ks[0] || ka[1] != ks[1])
            fail("kernel_shape does not match W ('%s', %s)", w->name, tensor_shape_str(w));
    }
    G->KH = ks[0];
    G->KW = ks[1];
    ints_attr(n, "strides", 2, 1, G->s);
    ints_attr(n, "dilations", 2, 1, G->d);
    ints_attr(n, "pads", 4, 0, G->pads);
    G->group = attr_i(n, "group");
    G->ogroup = attr_i(n, "offset_group");
    if (G->group < 1 || G->ogroup < 1) fail("group and offset_group must be positive");
    if (G->C != w->dims[1] * G->group || G->M % G->group != 0)
        fail("X ('%s', %s) and W ('%s', %s) do not fit group %lld", x->name, tensor_shape_str(x), w->name,
             tensor_shape_str(w), (long long)G->group);
    if (G->C % G->ogroup != 0) fail("the %lld input channels are not a multiple of offset_group %lld", (long long)G->C, (long long)G->ogroup);
    for (int a = 0; a < 2; a++) {
        if (G->s[a] < 1 || G->d[a] < 1) fail("strides and dilations must be positive");
        if (G->pads[a] < 0 || G->pads[2 + a] < 0) fail("pads must not be negative");
    }
    G->OH = (G->H + G->pads[0] + G->pads[2] - ((G->KH - 1) * G->d[0] + 1)) / G->s[0] + 1;
    G->OW = (G->W + G->pads[1] + G->pads[3] - ((G->KW - 1) * G->d[1] + 1)) / G->s[1] + 1;
    if (G->OH < 1 || G->OW < 1) fail("the kernel is larger than the padded input");
    int64_t K = G->KH * G->KW;
    if (off->rank != 4 || off->dims[0] != G->N || off->dims[1] != G->ogroup * K * 2 || off->dims[2] != G->OH ||
        off->dims[3] != G->OW)
        fail("offset ('%s') is %s; it must be %lld x %lld x %lld x %lld", off->name, tensor_shape_str(off), (long long)G->N,
             (long long)(G->ogroup * K * 2), (long long)G->OH, (long long)G->OW);
    if (b && (b->rank != 1 || b->dims[0] != G->M))
        fail("B ('%s') is %s; it must hold %lld values", b->name, tensor_shape_str(b), (long long)G->M);
    if (mk && (mk->rank != 4 || mk->dims[0] != G->N || mk->dims[1] != G->ogroup * K || mk->dims[2] != G->OH ||
               mk->dims[3] != G->OW))
        fail("mask ('%s') is %s; it must be %lld x %lld x %lld x %lld", mk->name, tensor_shape_str(mk), (long long)G->N,
             (long long)(G->ogroup * K), (long long)G->OH, (long long)G->OW);
}

void infer_deform_conv(Node *n)
{
    Tensor *x = n->in[0];
    need_dtype(n, x, DTS_FLOAT);
    for (int j = 1; j < n->nin; j++)
        if (n->in[j] && n->in[j]->dtype != x->dtype)
            fail("input '%s' is %s; every input must have X's type %s", n->in[j]->name, dtype_name(n->in[j]->dtype),
                 dtype_name(x->dtype));
    DCGeom G;
    deform_geom(n, &G);
    int64_t dims[4] = {G.N, G.M, G.OH, G.OW};
    set_out(n, 0, x->dtype, 4, dims);
}

void lower_deform_conv(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    DCGeom G;
    deform_geom(n, &G);
    if (tensor_numel(y) == 0) return;
    KCall *c = lower_call(L, xfmt("o2c_deform_conv_%s", dtype_suffix(x->dtype)), tensor_numel(y));
    c->x[0] = x;
    c->x[1] = n->in[1];
    c->x[2] = n->in[2];
    c->x[3] = in_t(n, 3);
    c->x[4] = in_t(n, 4);
    c->y[0] = y;
    c->k[O2C_DC_C] = G.C;
    c->k[O2C_DC_H] = G.H;
    c->k[O2C_DC_W] = G.W;
    c->k[O2C_DC_M] = G.M;
    c->k[O2C_DC_OH] = G.OH;
    c->k[O2C_DC_OW] = G.OW;
    c->k[O2C_DC_KH] = G.KH;
    c->k[O2C_DC_KW] = G.KW;
    c->k[O2C_DC_SH] = G.s[0];
    c->k[O2C_DC_SW] = G.s[1];
    c->k[O2C_DC_DH] = G.d[0];
    c->k[O2C_DC_DW] = G.d[1];
    c->k[O2C_DC_PH] = G.pads[0];
    c->k[O2C_DC_PW] = G.pads[1];
    c->k[O2C_DC_GROUP] = G.group;
    c->k[O2C_DC_OGROUP] = G.ogroup;
}
