/* Matrix products: MatMul (numpy semantics, batched, broadcasting) and Gemm. */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/elementwise.h"
#include "../../runtime/c/elementwise.h"   /* o2c_ldh: the half loads of O2C_CONV_WT, O2C_MATMUL_WT */
#include "../../runtime/c/params/matmul.h"
#include "../../runtime/c/matmul.h"

/* The C target computes float products with B contiguous along n in
 * register tiles (o2c_matmul_tile_f32: same parameters, the tiles as index
 * space) or, a tunable choice (lower_choose), with the direct reference
 * loop; the heuristic takes the tiles. The tiles' cache blocking is part of
 * the choice, as a number: column tiles in blocks of NCB (O2C_MATMUL_NCB),
 * all of them ("tile": row tiles outer), one ("tile_cols": B read once), or
 * NCB = 2, 4, 8, ... ("tile_ncNCB"), every power of two below the number of
 * column tiles whose K x NCB*NR block of B fits the cache budget (a block
 * that does not fit is no block). */
/* B larger than this many bytes: column blocks outer (ppocrv4's 40 x 120 x
 * 6625 product with its 3.2 MB of weights); also the budget of a block */
#define MATMUL_B_CACHE_BYTES (1 << 20)
#define MATMUL_MAX_CANDIDATES 24

void matmul_pack_panels(const float *B, int64_t K, int64_t N, int64_t sbk, float *dst)
{
    for (int64_t tn = 0; tn < (N + O2C_MM_NR - 1) / O2C_MM_NR; tn++) {
        int64_t n0 = tn * O2C_MM_NR + O2C_MM_NR > N ? N - O2C_MM_NR : tn * O2C_MM_NR;   /* as the kernel's */
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < O2C_MM_NR; j++) dst[(tn * K + k) * O2C_MM_NR + j] = B[k * sbk + n0 + j];
    }
}

static void matmul_tiled(Lowering *L, KCall *c, Tensor *a, int64_t batch)
{
    if (!L->tiled || a->dtype != DT_FLOAT || c->k[O2C_MATMUL_SBN] != 1) return;
    int64_t M = c->k[O2C_MATMUL_M], N = c->k[O2C_MATMUL_N], K = c->k[O2C_MATMUL_K];
    char *key = xfmt("matmul_f32 %s batch%lld M%lld N%lld K%lld", target_name(L->target), (long long)batch, (long long)M, (long long)N,
                     (long long)K);
    int64_t TN = (N + O2C_MM_NR - 1) / O2C_MM_NR;
    const char *names[MATMUL_MAX_CANDIDATES] = {"tile", "direct", "tile_cols"};
    int64_t ncb[MATMUL_MAX_CANDIDATES] = {0, 0, 1};
    int nc = 3;
    for (int64_t b = 2; b < TN && K * b * O2C_MM_NR * 4 <= MATMUL_B_CACHE_BYTES && nc < MATMUL_MAX_CANDIDATES; b *= 2) {
        names[nc] = xfmt("tile_nc%lld", (long long)b);
        ncb[nc++] = b;
    }
    int heuristic = K * N * 4 > MATMUL_B_CACHE_BYTES && M > O2C_MM_MR ? 2 : 0;
    int v = lower_choose(L, c, key, names, nc, heuristic);
    if (v == 1) return;
    c->k[O2C_MATMUL_NCB] = ncb[v];
    int shared = 1;   /* one B for every batch */
    for (int d = 0; d < c->k[O2C_MATMUL_R]; d++) shared &= c->k[O2C_MATMUL_BSTR + d] == 0;
    if (c->x[1]->data && shared && N >= O2C_MM_NR) {   /* constant weights: column panels */
        int64_t pd[3] = {(N + O2C_MM_NR - 1) / O2C_MM_NR, K, O2C_MM_NR};
        Tensor *bp = lower_const(L, "B_panels", DT_FLOAT, 3, pd);
        matmul_pack_panels(c->x[1]->data, K, N, c->k[O2C_MATMUL_SBK], bp->data);
        file_pages_done(c->x[1]->data, tensor_bytes(c->x[1]));   /* a large model's external data (core/files.c) */
        c->x[1] = bp;
        c->k[O2C_MATMUL_BPACKED] = 1;
    }
    c->kernel = kernel_find("o2c_matmul_tile_f32");
    c->count = batch * ((M + O2C_MM_MR - 1) / O2C_MM_MR) * ((N + O2C_MM_NR - 1) / O2C_MM_NR);
}

/* MatMul's shape rule (numpy: batched, batch dims broadcast), for MatMul
 * and the integer products of ops/quant.c; output 0 gets type dt. */
void matmul_out_shape(Node *n, Tensor *a, Tensor *b, int dt)
{
    if (a->rank < 1 || b->rank < 1) fail("MatMul needs inputs of rank 1 or more");
    int64_t K = a->dims[a->rank - 1];
    int64_t Kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    if (K != Kb)
        fail("inconsistent shapes: A is %s and B is %s; A's last dimension must equal B's %s", tensor_shape_str(a),
             tensor_shape_str(b), b->rank == 1 ? "length" : "second-to-last dimension");
    /* batch dims broadcast */
    Tensor ba = *a, bb = *b;
    ba.rank = a->rank > 2 ? a->rank - 2 : 0;
    bb.rank = b->rank > 2 ? b->rank - 2 : 0;
    int64_t dims[MAX_RANK];
    int r = broadcast_shapes(n, &ba, &bb, dims);
    if (a->rank >= 2) dims[r++] = a->dims[a->rank - 2];
    if (b->rank >= 2) dims[r++] = b->dims[b->rank - 1];
    set_out(n, 0, dt, r, dims);
}

void infer_matmul(Node *n)
{
    Tensor *a = n->in[0], *b = n->in[1];
    need_dtype(n, a, DTS_FLOAT);
    if (b->dtype != a->dtype) fail("A and B must have the same data type");
    matmul_out_shape(n, a, b, a->dtype);
}

void lower_matmul(Node *n, Lowering *L)
{
    lower_matmul_call(n, L);
}

KCall *lower_matmul_call(Node *n, Lowering *L)
{
    return lower_product_call(n, L, 0, 0, 1.0);
}

/* The call of o2c_matmul_T computing y (count elements) = op(A) op(B) for
 * A M x K and B K x N, op a transpose of the last two axes where ta, tb:
 * A and B row-major, a transpose swaps the strides of the two axes. */
static KCall *matmul_call(Lowering *L, Tensor *a, Tensor *b, Tensor *y, int64_t count, int64_t M, int64_t N,
                          int64_t K, int ta, int tb)
{
    KCall *c = lower_call(L, xfmt("o2c_matmul_%s", dtype_suffix(a->dtype)), count);
    c->x[0] = a;
    c->x[1] = b;
    c->y[0] = y;
    c->k[O2C_MATMUL_M] = M; c->k[O2C_MATMUL_N] = N; c->k[O2C_MATMUL_K] = K;
    c->k[O2C_MATMUL_SAM] = ta ? 1 : K; c->k[O2C_MATMUL_SAK] = ta ? M : 1;
    c->k[O2C_MATMUL_SBK] = tb ? 1 : N; c->k[O2C_MATMUL_SBN] = tb ? K : 1;
    return c;
}

/* Constant float weights b given as N x K (transposed): call c reads them
 * stored K x N, for the tiled kernel. */
static void matmul_const_kxn(Lowering *L, KCall *c, const Tensor *b, int64_t K, int64_t N)
{
    int64_t kn[2] = {K, N};
    Tensor *bt = lower_const(L, "KxN", DT_FLOAT, 2, kn);
    const float *src = b->data;
    float *dst = bt->data;
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < N; j++) dst[k * N + j] = src[j * K + k];
    c->x[1] = bt;
    c->k[O2C_MATMUL_SBK] = N; c->k[O2C_MATMUL_SBN] = 1;
}

/* --target cortex-m, a core without a vector unit: the reference product
 * by output rows, four outputs a register tile (o2c_matmul_rows_f32) */
static void matmul_rows(Lowering *L, KCall *c, const Tensor *a)
{
    int64_t N = c->k[O2C_MATMUL_N];
    if (L->target != TARGET_CORTEX_M || a->dtype != DT_FLOAT || N <= 0 || strcmp(c->kernel->name, "o2c_matmul_f32"))
        return;
    c->kernel = kernel_find("o2c_matmul_rows_f32");
    c->count /= N;
}

KCall *lower_product_call(Node *n, Lowering *L, int ta, int tb, double alpha)
{
    Tensor *a = n->in[0], *b = n->in[1], *y = n->out[0];
    if (a->rank < 2) ta = 0;   /* a vector: no axes to swap (FusedMatMul needs rank 2) */
    if (b->rank < 2) tb = 0;
    int64_t M = a->rank >= 2 ? a->dims[a->rank - 2 + ta] : 1;
    int64_t K = a->dims[a->rank - 1 - ta];
    int64_t N = b->rank >= 2 ? b->dims[b->rank - 1 - tb] : 1;
    KCall *c = matmul_call(L, a, b, y, tensor_numel(y), M, N, K, ta, tb);
    /* batch: output batch dims and the broadcast strides of A and B */
    c->k[O2C_MATMUL_R] = matmul_batch(n, a, b, M * K, K * N, c->k + O2C_MATMUL_BDIMS, c->k + O2C_MATMUL_ASTR,
                                      c->k + O2C_MATMUL_BSTR);
    c->f[O2C_MATMUL_F_ALPHA] = alpha;
    if (L->tiled && tb && b->data && b->rank == 2 && a->dtype == DT_FLOAT) matmul_const_kxn(L, c, b, K, N);
    matmul_tiled(L, c, a, M * N != 0 ? tensor_numel(y) / (M * N) : 0);
    matmul_rows(L, c, a);
    return c;
}

void infer_gemm(Node *n)
{
    Tensor *a = n->in[0], *b = n->in[1], *cc = in_t(n, 2);
    need_dtype(n, a, DTS_FLOAT);
    if (b->dtype != a->dtype) fail("A and B must have the same data type");
    if (a->rank != 2 || b->rank != 2) fail("Gemm needs 2-D A and B, got %s and %s", tensor_shape_str(a), tensor_shape_str(b));
    int ta = (int)attr_i(n, "transA"), tb = (int)attr_i(n, "transB");
    int64_t M = ta ? a->dims[1] : a->dims[0], K = ta ? a->dims[0] : a->dims[1];
    int64_t Kb = tb ? b->dims[1] : b->dims[0], N = tb ? b->dims[0] : b->dims[1];
    if (K != Kb)
        fail("inconsistent shapes: A is %s (transA=%d) and B is %s (transB=%d)", tensor_shape_str(a), ta,
             tensor_shape_str(b), tb);
    int64_t dims[2] = {M, N};
    if (cc) {
        Tensor y = *a;
        tensor_set_shape(&y, 2, dims);
        int64_t bd[MAX_RANK];
        if (cc->rank > 2 || broadcast_shapes(n, &y, cc, bd) != 2 || bd[0] != M || bd[1] != N)
            fail("C (%s) does not broadcast to the output shape %lldx%lld", tensor_shape_str(cc), (long long)M, (long long)N);
        if (cc->dtype != a->dtype) fail("C must have A's data type");
    }
    set_out(n, 0, a->dtype, 2, dims);
}

void lower_gemm(Node *n, Lowering *L)
{
    lower_gemm_call(n, L);
}

/* Y (M x N) = A (M x K, row-major) W^T + bias (N, or NULL) for constant
 * float weights W stored N x K (row-major): another op's product on the
 * Gemm path, packed and tuned as a Gemm (rnn.c's LSTM input projection) */
KCall *lower_linear_call(Lowering *L, Tensor *a, Tensor *w, Tensor *bias, Tensor *y, int64_t M, int64_t N, int64_t K)
{
    KCall *c = matmul_call(L, a, w, y, M * N, M, N, K, 0, 1);
    if (bias) {
        c->x[2] = bias;
        c->k[O2C_MATMUL_HASC] = 1; c->k[O2C_MATMUL_SCM] = 0; c->k[O2C_MATMUL_SCN] = 1;
    }
    c->f[O2C_MATMUL_F_ALPHA] = 1.0;
    c->f[O2C_MATMUL_F_BETA] = 1.0;
    if (L->tiled && w->data && a->dtype == DT_FLOAT) matmul_const_kxn(L, c, w, K, N);
    matmul_tiled(L, c, a, 1);
    matmul_rows(L, c, a);
    return c;
}

KCall *lower_gemm_call(Node *n, Lowering *L)
{
    Tensor *a = n->in[0], *b = n->in[1], *cc = in_t(n, 2), *y = n->out[0];
    int ta = (int)attr_i(n, "transA"), tb = (int)attr_i(n, "transB");
    int64_t M = y->dims[0], N = y->dims[1], K = ta ? a->dims[0] : a->dims[1];
    KCall *c = matmul_call(L, a, b, y, M * N, M, N, K, ta, tb);
    double beta = attr_f(n, "beta");
    if (cc && beta != 0.0) {
        int64_t st[2];
        bcast_strides(cc, 2, st);
        c->x[2] = cc;
        c->k[O2C_MATMUL_HASC] = 1; c->k[O2C_MATMUL_SCM] = st[0]; c->k[O2C_MATMUL_SCN] = st[1];
    }
    c->f[O2C_MATMUL_F_ALPHA] = attr_f(n, "alpha");
    c->f[O2C_MATMUL_F_BETA] = beta;
    if (L->tiled && tb && b->data && a->dtype == DT_FLOAT) matmul_const_kxn(L, c, b, K, N);
    matmul_tiled(L, c, a, 1);
    matmul_rows(L, c, a);
    return c;
}
