/* onnx2c.FusedAttention: the attention core fused by the fuse_attention pass
 * (kernel in runtime/c/attention.h):
 *     Y = transpose(softmax(scale * Q K^T + mask, last axis) V, y_perm)
 *     Q = transpose(x0, q_perm)   [batch.., Sq, D]
 *     K = transpose(x1, k_perm)   [batch.., Skv, D]
 *     V = transpose(x2, v_perm)   [batch.., Skv, Dv]
 *     mask = x3 (optional)        broadcast to [batch.., Sq, Skv]
 * An absent perm is the identity. Batch dims broadcast as in MatMul. The
 * perms let the node read its inputs, and write its output, through the
 * Transposes the pass folded in. */
#include <math.h>
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/attention.h"

typedef struct AttShape {
    int rank[3];                 /* logical ranks of Q, K, V */
    int64_t perm[4][MAX_RANK];   /* q, k, v, y perms (identity if absent) */
    int64_t ldims[3][MAX_RANK];  /* logical dims of Q, K, V */
    int nb;                      /* output batch rank */
    int64_t bdims[MAX_RANK];     /* output batch dims */
    int64_t Sq, Skv, D, Dv;
} AttShape;

static const char *const PERM_ATTR[4] = {"q_perm", "k_perm", "v_perm", "y_perm"};

static void get_perm(Node *n, int which, int rank, int64_t *perm)
{
    const int64_t *v;
    int len = attr_ints(n, PERM_ATTR[which], &v);
    if (!len) {
        for (int a = 0; a < rank; a++) perm[a] = a;
        return;
    }
    if (len != rank) fail("%s has %d entries for rank %d", PERM_ATTR[which], len, rank);
    int seen[MAX_RANK] = {0};
    for (int a = 0; a < rank; a++) {
        if (v[a] < 0 || v[a] >= rank || seen[v[a]]) fail("%s is not a permutation", PERM_ATTR[which]);
        seen[v[a]] = 1;
        perm[a] = v[a];
    }
}

/* numpy broadcast of the batch parts (all but the last two dims) */
static void bcast_batch(int64_t *out, int *nout, const int64_t *dims, int rank)
{
    int nb = rank - 2, r = *nout > nb ? *nout : nb;
    int64_t res[MAX_RANK];
    for (int d = 0; d < r; d++) {
        int a = d - (r - *nout), b = d - (r - nb);
        int64_t x = a >= 0 ? out[a] : 1, y = b >= 0 ? dims[b] : 1;
        if (x != y && x != 1 && y != 1) fail("batch dims of the attention inputs do not broadcast");
        res[d] = x == 1 ? y : x;
    }
    memcpy(out, res, sizeof(int64_t) * (size_t)r);
    *nout = r;
}

static void att_shape(Node *n, AttShape *s)
{
    memset(s, 0, sizeof *s);
    for (int j = 0; j < 3; j++) {
        Tensor *t = n->in[j];
        if (t->rank < 2) fail("input %d ('%s') must have rank 2 or more", j, t->name);
        s->rank[j] = t->rank;
        get_perm(n, j, t->rank, s->perm[j]);
        for (int a = 0; a < t->rank; a++) s->ldims[j][a] = t->dims[s->perm[j][a]];
    }
    int rq = s->rank[0], rk = s->rank[1], rv = s->rank[2];
    s->Sq = s->ldims[0][rq - 2];
    s->D = s->ldims[0][rq - 1];
    s->Skv = s->ldims[1][rk - 2];
    s->Dv = s->ldims[2][rv - 1];
    if (s->ldims[1][rk - 1] != s->D) fail("Q and K have different widths");
    if (s->ldims[2][rv - 2] != s->Skv) fail("K and V have different numbers of rows");
    s->nb = 0;
    for (int j = 0; j < 3; j++) bcast_batch(s->bdims, &s->nb, s->ldims[j], s->rank[j]);
    if (s->nb > O2C_ATT_MAXB) fail("too many batch dims");
    get_perm(n, 3, s->nb + 2, s->perm[3]);
}

void infer_fused_attention(Node *n)
{
    Tensor *q = n->in[0];
    need_dtype(n, q, DTS_FLOAT);
    for (int j = 1; j < n->nin; j++)
        if (n->in[j] && n->in[j]->dtype != q->dtype) fail("input %d must have Q's data type", j);
    AttShape s;
    att_shape(n, &s);
    Tensor *m = in_t(n, 3);
    if (m) {
        int64_t sd[MAX_RANK];
        int r = s.nb + 2;
        memcpy(sd, s.bdims, sizeof(int64_t) * (size_t)s.nb);
        sd[s.nb] = s.Sq;
        sd[s.nb + 1] = s.Skv;
        if (m->rank > r) fail("the mask has rank %d, more than the scores", m->rank);
        for (int d = 0; d < m->rank; d++) {
            int64_t md = m->dims[d], want = sd[r - m->rank + d];
            if (md != 1 && md != want) fail("the mask (%s) does not broadcast to the scores", tensor_shape_str(m));
        }
    }
    int64_t yl[MAX_RANK], yd[MAX_RANK];
    memcpy(yl, s.bdims, sizeof(int64_t) * (size_t)s.nb);
    yl[s.nb] = s.Sq;
    yl[s.nb + 1] = s.Dv;
    for (int b = 0; b < s.nb + 2; b++) yd[b] = yl[s.perm[3][b]];
    set_out(n, 0, q->dtype, s.nb + 2, yd);
}

static void rowmajor(const Tensor *t, int64_t *st)
{
    int64_t k = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        st[d] = k;
        k *= t->dims[d];
    }
}

/* The stride block of a logical tensor of rank `rank` and dims `ldims`
 * whose axis a has element stride lst[a], against the output batch. */
static void stride_block(int64_t *blk, int nb, int rank, const int64_t *ldims, const int64_t *lst)
{
    for (int d = 0; d < nb; d++) {
        int a = d - (nb - (rank - 2));
        blk[d] = a >= 0 && ldims[a] != 1 ? lst[a] : 0;
    }
    blk[O2C_ATT_ROW] = ldims[rank - 2] != 1 ? lst[rank - 2] : 0;
    blk[O2C_ATT_COL] = ldims[rank - 1] != 1 ? lst[rank - 1] : 0;
}

void lower_fused_attention(Node *n, Lowering *L)
{
    AttShape s;
    att_shape(n, &s);
    Tensor *y = n->out[0];
    int64_t rows = s.Sq;
    for (int d = 0; d < s.nb; d++) rows *= s.bdims[d];
    if (rows == 0 || s.Dv == 0) return;
    if (s.Skv == 0) fail("attention over zero keys is not supported");
    /* the C target: blocks of query rows over packed keys and values (the
     * reference kernel a row at a time elsewhere: CUDA, its oracle) */
    const int blocked = L->tiled && y->dtype == DT_FLOAT;
    KCall *c = lower_call(L, xfmt("o2c_attention%s_%s", blocked ? "_blk" : "", dtype_suffix(y->dtype)),
                          blocked ? rows / s.Sq * ((s.Sq + O2C_ATT_RB - 1) / O2C_ATT_RB) : rows);
    if (blocked) {
        int64_t words = O2C_ATT_BLK_WORDS(s.Skv, s.D, s.Dv);
        c->y[1] = lower_temp(L, DT_FLOAT, 1, &words);
    }
    c->x[O2C_ATT_XQ] = n->in[0];
    c->x[O2C_ATT_XK] = n->in[1];
    c->x[O2C_ATT_XV] = n->in[2];
    c->x[O2C_ATT_XMASK] = in_t(n, 3);
    c->y[0] = y;
    c->k[O2C_ATT_NB] = s.nb;
    c->k[O2C_ATT_SQ] = s.Sq;
    c->k[O2C_ATT_SKV] = s.Skv;
    c->k[O2C_ATT_D] = s.D;
    c->k[O2C_ATT_DV] = s.Dv;
    for (int d = 0; d < s.nb; d++) c->k[O2C_ATT_BDIMS + d] = s.bdims[d];
    static const int BLOCK[3] = {O2C_ATT_QS, O2C_ATT_KS, O2C_ATT_VS};
    for (int j = 0; j < 3; j++) {
        int64_t st[MAX_RANK], lst[MAX_RANK];
        rowmajor(n->in[j], st);
        for (int a = 0; a < s.rank[j]; a++) lst[a] = st[s.perm[j][a]];
        stride_block(c->k + BLOCK[j], s.nb, s.rank[j], s.ldims[j], lst);
    }
    /* Y: logical axis y_perm[b] is output axis b */
    int64_t st[MAX_RANK], lst[MAX_RANK];
    rowmajor(y, st);
    for (int b = 0; b < s.nb + 2; b++) lst[s.perm[3][b]] = st[b];
    /* the output is never broadcast: its strides are all real */
    for (int d = 0; d < s.nb; d++) c->k[O2C_ATT_YS + d] = lst[d];
    c->k[O2C_ATT_YS + O2C_ATT_ROW] = lst[s.nb];
    c->k[O2C_ATT_YS + O2C_ATT_COL] = lst[s.nb + 1];
    Tensor *m = in_t(n, 3);
    if (m) {
        /* the mask right-aligned to the scores [batch.., Sq, Skv] */
        int r = s.nb + 2;
        int64_t mst[MAX_RANK], ml[MAX_RANK], mlst[MAX_RANK];
        rowmajor(m, mst);
        for (int e = 0; e < r; e++) {
            int a = e - (r - m->rank);
            ml[e] = a >= 0 ? m->dims[a] : 1;
            mlst[e] = a >= 0 ? mst[a] : 0;
        }
        stride_block(c->k + O2C_ATT_MS, s.nb, r, ml, mlst);
    }
    c->f[O2C_ATT_FSCALE] = attr_f(n, "scale");
}

/* Transpose of input j by its perm, or the input itself (identity). */
static const char *dc_perm(Decomp *d, const char *x, const int64_t *perm, int rank)
{
    int id = 1;
    for (int a = 0; a < rank; a++) id &= perm[a] == a;
    if (id) return x;
    const char *t = dc_op(d, "Transpose", 1, x);
    dc_attr_ints(d, "perm", perm, rank);
    return t;
}

void decompose_fused_attention(const Node *cn, Decomp *d)
{
    Node *n = (Node *)cn;
    AttShape s;
    att_shape(n, &s);
    d->opset = 13;
    const char *q = dc_perm(d, dc_in(d, 0), s.perm[0], s.rank[0]);
    /* K^T: K's perm with its last two axes swapped */
    int64_t kt[MAX_RANK];
    int rk = s.rank[1];
    memcpy(kt, s.perm[1], sizeof(int64_t) * (size_t)rk);
    kt[rk - 2] = s.perm[1][rk - 1];
    kt[rk - 1] = s.perm[1][rk - 2];
    const char *k = dc_perm(d, dc_in(d, 1), kt, rk);
    const char *v = dc_perm(d, dc_in(d, 2), s.perm[2], s.rank[2]);
    const char *sc = dc_op(d, "MatMul", 2, q, k);
    double scale = attr_f(n, "scale");
    if (scale != 1) sc = dc_op(d, "Mul", 2, sc, dc_const_f(d, n->in[0]->dtype, scale));
    if (in_t(n, 3)) sc = dc_op(d, "Add", 2, sc, dc_in(d, 3));
    const char *a = dc_op(d, "Softmax", 1, sc);
    dc_attr_i(d, "axis", -1);
    const char *y = dc_op(d, "MatMul", 2, a, v);
    y = dc_perm(d, y, s.perm[3], s.nb + 2);
    dc_output(d, 0, y);
}

/* ---- the standard ONNX Attention (opset 23+) ------------------------------
 * Reference kernel o2c_sdpa_T (runtime/c/attention.h): 3-D or 4-D Q/K/V,
 * grouped heads (GQA/MQA), attn_mask (bool or float, right-aligned
 * broadcast, keys past its last dim masked), is_causal (bottom-right, offset
 * by the past rows or nonpad_kv_seqlen - Sq), sliding windows, softcap,
 * past/present key and value, the four qk_matmul_output modes and
 * softmax_precision. float16/bfloat16 data computes on float32 stand-ins
 * rounded to the 16-bit type after each step as onnx's reference does. */

typedef struct Sdpa {
    int r3;                           /* 3-D inputs (B x S x heads*size) */
    int64_t B, Hq, Hkv, Sq, Skv, P, D, Dv, Tk;
} Sdpa;

static void sdpa_shape(Node *n, Sdpa *a)
{
    Tensor *q = n->in[0], *k = n->in[1], *v = n->in[2];
    memset(a, 0, sizeof *a);
    if (q->rank != k->rank || q->rank != v->rank || (q->rank != 3 && q->rank != 4))
        fail("Q, K and V must be all 3-D or all 4-D (they are %s, %s, %s)", tensor_shape_str(q),
             tensor_shape_str(k), tensor_shape_str(v));
    a->r3 = q->rank == 3;
    a->B = q->dims[0];
    if (k->dims[0] != a->B || v->dims[0] != a->B) fail("Q, K and V have different batch sizes");
    if (a->r3) {
        a->Hq = attr_i(n, "q_num_heads");
        a->Hkv = attr_i(n, "kv_num_heads");
        if (a->Hq <= 0 || a->Hkv <= 0) fail("3-D inputs need the attributes q_num_heads and kv_num_heads");
        if (q->dims[2] % a->Hq || k->dims[2] % a->Hkv || v->dims[2] % a->Hkv)
            fail("the hidden sizes (%lld, %lld, %lld) are not multiples of the head counts (%lld, %lld)",
                 (long long)q->dims[2], (long long)k->dims[2], (long long)v->dims[2], (long long)a->Hq,
                 (long long)a->Hkv);
        a->Sq = q->dims[1];
        a->D = q->dims[2] / a->Hq;
        a->Skv = k->dims[1];
        if (k->dims[2] / a->Hkv != a->D) fail("Q and K have different head sizes");
        if (v->dims[1] != a->Skv) fail("K and V have different sequence lengths");
        a->Dv = v->dims[2] / a->Hkv;
    } else {
        a->Hq = q->dims[1];
        a->Sq = q->dims[2];
        a->D = q->dims[3];
        a->Hkv = k->dims[1];
        a->Skv = k->dims[2];
        if (k->dims[3] != a->D) fail("Q and K have different head sizes");
        if (v->dims[1] != a->Hkv || v->dims[2] != a->Skv) fail("K and V have different heads or sequence lengths");
        a->Dv = v->dims[3];
    }
    if (a->Hkv <= 0 || a->Hq % a->Hkv)
        fail("q_num_heads (%lld) must be a multiple of kv_num_heads (%lld)", (long long)a->Hq, (long long)a->Hkv);
    Tensor *pk = in_t(n, 4), *pv = in_t(n, 5), *np = in_t(n, 6);
    if (!pk != !pv) fail("past_key and past_value must be given together");
    if (pk) {
        if (pk->rank != 4 || pv->rank != 4 || pk->dims[0] != a->B || pk->dims[1] != a->Hkv || pk->dims[3] != a->D ||
            pv->dims[0] != a->B || pv->dims[1] != a->Hkv || pv->dims[2] != pk->dims[2] || pv->dims[3] != a->Dv)
            fail("past_key %s / past_value %s do not match (batch, kv_num_heads, past, head size)",
                 tensor_shape_str(pk), tensor_shape_str(pv));
        a->P = pk->dims[2];
    }
    if (np) {
        if (pk) fail("nonpad_kv_seqlen cannot be combined with past_key/past_value");
        if (np->dtype != DT_INT64 || np->rank != 1 || np->dims[0] != a->B)
            fail("nonpad_kv_seqlen must be an int64 vector of the batch size, it is %s %s", dtype_name(np->dtype),
                 tensor_shape_str(np));
    }
    a->Tk = a->P + a->Skv;
}

static int sdpa_used(const Node *n, int j)
{
    return j < n->nout && n->out[j] && (n->out[j]->nuses > 0 || n->out[j]->is_output);
}

void infer_sdpa(Node *n)
{
    Tensor *q = n->in[0];
    need_dtype(n, q, DTS_FLOAT);
    static const int PEERS[] = {1, 2, 4, 5};
    for (int j = 0; j < 4; j++) {
        Tensor *t = in_t(n, PEERS[j]);
        if (t && t->dtype != q->dtype)
            fail("input %d has type %s, Q %s: onnx2c needs one data type for Q, K, V and the past", PEERS[j],
                 dtype_name(t->dtype), dtype_name(q->dtype));
    }
    Sdpa a;
    sdpa_shape(n, &a);
    if (a.Tk == 0) fail("attention over zero keys is not supported");
    int64_t mode = attr_i(n, "qk_matmul_output_mode"), prec = attr_i(n, "softmax_precision");
    if (mode < 0 || mode > 3) fail("qk_matmul_output_mode %lld is not 0, 1, 2 or 3", (long long)mode);
    if (prec && prec != DT_FLOAT && prec != DT_DOUBLE && prec != DT_FLOAT16 && prec != DT_BFLOAT16)
        fail("softmax_precision %lld is not float, double, float16 or bfloat16", (long long)prec);
    Tensor *m = in_t(n, 3);
    if (m) {
        if (m->dtype != DT_BOOL && m->dtype != q->dtype)
            fail("attn_mask of type %s is not supported (bool or Q's type)", dtype_name(m->dtype));
        /* 16-bit Q with a float32 mask: the reference adds in float32 */
        if (m->dtype == DT_FLOAT && n->promoted && node_promoted_in(n, 0) && !node_promoted_in(n, 3))
            fail("a float32 attn_mask with 16-bit Q, K, V is not supported (give the mask Q's type)");
        if (m->rank < 1 || m->rank > 4) fail("attn_mask must have rank 1 to 4, it is %s", tensor_shape_str(m));
        const int64_t want[4] = {a.B, a.Hq, a.Sq, a.Tk};
        for (int d = 0; d < m->rank; d++) {
            int64_t md = m->dims[d], w = want[4 - m->rank + d];
            if (d == m->rank - 1 ? md > w : (md != 1 && md != w))
                fail("attn_mask %s does not broadcast to (batch, heads, q rows, keys) = (%lld, %lld, %lld, %lld)",
                     tensor_shape_str(m), (long long)a.B, (long long)a.Hq, (long long)a.Sq, (long long)a.Tk);
        }
    }
    int64_t yd[4] = {a.B, a.Hq, a.Sq, a.Dv};
    if (a.r3) {
        yd[1] = a.Sq;
        yd[2] = a.Hq * a.Dv;
    }
    set_out(n, 0, q->dtype, a.r3 ? 3 : 4, yd);
    int64_t pk[4] = {a.B, a.Hkv, a.Tk, a.D}, pv[4] = {a.B, a.Hkv, a.Tk, a.Dv}, qk[4] = {a.B, a.Hq, a.Sq, a.Tk};
    set_out(n, 1, q->dtype, 4, pk);
    set_out(n, 2, q->dtype, 4, pv);
    set_out(n, 3, q->dtype, 4, qk);
}

/* element strides (batch, head, row) of a 3-D (B x S x H*size) or 4-D
 * (B x H x S x size) tensor */
static void sdpa_strides(int64_t *st, int r3, int64_t H, int64_t S, int64_t size)
{
    st[0] = H * S * size;
    st[1] = r3 ? size : S * size;
    st[2] = r3 ? H * size : size;
}

static int half_mode(int dt) { return dt == DT_BFLOAT16 ? 2 : dt == DT_FLOAT16 ? 1 : 0; }

/* the 16-bit type of input j of a node computing in float32 for 16-bit
 * data (Node.promoted: the type of its first 16-bit input), or 0 */
static int promoted_mode(const Node *n, int j)
{
    return node_promoted_in(n, j) ? half_mode(n->promoted) : 0;
}

/* one call of o2c_sdpa_T: the attention (stop -1: Y into y, the scores
 * into `scores`) or the scores of qk_matmul_output_mode `stop` into it */
static void sdpa_call(Node *n, Lowering *L, const Sdpa *a, Tensor *y, Tensor *scores, int stop, int h16, int hs,
                      double sq, double cap, int flex)
{
    KCall *c = lower_call(L, xfmt("o2c_sdpa_%s", dtype_suffix(n->in[0]->dtype)), a->B * a->Hq * a->Sq);
    c->x[O2C_SDPA_XQ] = n->in[0];
    c->x[O2C_SDPA_XK] = n->in[1];
    c->x[O2C_SDPA_XV] = n->in[2];
    c->x[O2C_SDPA_XMASK] = in_t(n, 3);
    c->x[O2C_SDPA_XPK] = in_t(n, 4);
    c->x[O2C_SDPA_XPV] = in_t(n, 5);
    c->x[O2C_SDPA_XNONPAD] = in_t(n, 6);
    c->y[0] = y;
    c->y[1] = scores;
    c->k[O2C_SDPA_B] = a->B;
    c->k[O2C_SDPA_HQ] = a->Hq;
    c->k[O2C_SDPA_HKV] = a->Hkv;
    c->k[O2C_SDPA_SQ] = a->Sq;
    c->k[O2C_SDPA_SKV] = a->Skv;
    c->k[O2C_SDPA_PAST] = a->P;
    c->k[O2C_SDPA_D] = a->D;
    c->k[O2C_SDPA_DV] = a->Dv;
    sdpa_strides(c->k + O2C_SDPA_QS, a->r3, a->Hq, a->Sq, a->D);
    sdpa_strides(c->k + O2C_SDPA_KS, a->r3, a->Hkv, a->Skv, a->D);
    sdpa_strides(c->k + O2C_SDPA_VS, a->r3, a->Hkv, a->Skv, a->Dv);
    sdpa_strides(c->k + O2C_SDPA_YS, a->r3, a->Hq, a->Sq, a->Dv);
    Tensor *m = in_t(n, 3);
    if (m) {
        int64_t st[4], k = 1;
        for (int d = m->rank - 1; d >= 0; d--) {
            st[d] = k;
            k *= m->dims[d];
        }
        for (int e = 0; e < 3; e++) {   /* batch, head, row of the scores */
            int d = e - (4 - m->rank);
            c->k[O2C_SDPA_MS + e] = d >= 0 && m->dims[d] != 1 ? st[d] : 0;
        }
        c->k[O2C_SDPA_MCOLS] = m->dims[m->rank - 1];
        c->k[O2C_SDPA_MBOOL] = m->dtype == DT_BOOL;
    }
    c->k[O2C_SDPA_CAUSAL] = !flex && attr_i(n, "is_causal") != 0;
    c->k[O2C_SDPA_LEFT] = flex || attr_i(n, "left_window_size") < 0 ? -1 : attr_i(n, "left_window_size");
    c->k[O2C_SDPA_RIGHT] = flex || attr_i(n, "right_window_size") < 0 ? -1 : attr_i(n, "right_window_size");
    c->k[O2C_SDPA_HALF] = h16;
    c->k[O2C_SDPA_SMHALF] = hs;
    c->k[O2C_SDPA_STOP] = stop;
    c->k[O2C_SDPA_FLEX] = flex;
    c->f[O2C_SDPA_FSCALE] = sq;
    c->f[O2C_SDPA_FCAP] = cap;
}

void lower_sdpa(Node *n, Lowering *L)
{
    Sdpa a;
    sdpa_shape(n, &a);
    Tensor *q = n->in[0], *y = n->out[0];
    const char *sfx = dtype_suffix(q->dtype);
    int h16 = promoted_mode(n, 0);
    if (h16 && !(node_promoted_in(n, 1) && node_promoted_in(n, 2)))
        fail("Q is 16-bit and K or V is float32: onnx2c needs one data type for Q, K and V");
    for (int j = 1; j <= 2; j++) {   /* present_key, present_value */
        if (!sdpa_used(n, j)) continue;
        KCall *c = lower_call(L, xfmt("o2c_sdpa_cat_%s", sfx), tensor_numel(n->out[j]));
        c->x[O2C_SDPA_CAT_XPAST] = in_t(n, 3 + j);
        c->x[O2C_SDPA_CAT_XNEW] = n->in[j];
        c->y[0] = n->out[j];
        c->k[O2C_SDPA_CAT_H] = a.Hkv;
        c->k[O2C_SDPA_CAT_PAST] = a.P;
        c->k[O2C_SDPA_CAT_S] = a.Skv;
        c->k[O2C_SDPA_CAT_D] = j == 1 ? a.D : a.Dv;
        sdpa_strides(c->k + O2C_SDPA_CAT_NS, a.r3, a.Hkv, a.Skv, j == 1 ? a.D : a.Dv);
    }
    int64_t mode = attr_i(n, "qk_matmul_output_mode"), prec = attr_i(n, "softmax_precision");
    int qk_used = sdpa_used(n, 3);
    int64_t sd[4] = {a.B, a.Hq, a.Sq, a.Tk};
    Tensor *scores = qk_used && mode == 3 ? n->out[3] : lower_temp(L, q->dtype, 4, sd);
    double scale = attr_has(n, "scale") ? attr_f(n, "scale") : 1 / sqrt((double)a.D);
    double sq = sqrt(scale);
    /* sqrt(scale) in the data type, as the reference casts it */
    if (h16) sq = half_to_float(n->promoted, float_to_half(n->promoted, (float)sq));
    else if (q->dtype == DT_FLOAT) sq = (float)sq;
    int hs = prec ? half_mode((int)prec) : h16;
    sdpa_call(n, L, &a, y, scores, -1, h16, hs, sq, attr_f(n, "softcap"), 0);
    if (qk_used && mode < 3) sdpa_call(n, L, &a, NULL, n->out[3], (int)mode, h16, hs, sq, attr_f(n, "softcap"), 0);
}

/* ---- FlexAttention (ai.onnx.preview 1) without score_mod / prob_mod ------
 * 4-D Q, K, V (GQA allowed): softmax((Q s)(K s)^T) V with s = sqrt(scale)
 * (computed in float32, cast to the data type), the softmax and the
 * product with V in softmax_precision (default: float32 for 16-bit data). */

static void flex_shape(Node *n, Sdpa *a)
{
    Tensor *q = n->in[0], *k = n->in[1], *v = n->in[2];
    if (q->rank != 4 || k->rank != 4 || v->rank != 4) fail("Q, K and V must be 4-D");
    memset(a, 0, sizeof *a);
    a->B = q->dims[0];
    a->Hq = q->dims[1];
    a->Sq = q->dims[2];
    a->D = q->dims[3];
    a->Hkv = k->dims[1];
    a->Skv = k->dims[2];
    a->Dv = v->dims[3];
    a->Tk = a->Skv;
    if (k->dims[0] != a->B || v->dims[0] != a->B) fail("Q, K and V have different batch sizes");
    if (k->dims[3] != a->D) fail("Q and K have different head sizes");
    if (v->dims[1] != a->Hkv || v->dims[2] != a->Skv) fail("K and V have different heads or sequence lengths");
    if (a->Hkv <= 0 || a->Hq % a->Hkv) fail("Q's heads (%lld) must be a multiple of K's (%lld)", (long long)a->Hq, (long long)a->Hkv);
}

void infer_flex_attention(Node *n)
{
    Tensor *q = n->in[0];
    need_dtype(n, q, DTS_FLOAT);
    for (int j = 1; j < 3; j++)
        if (n->in[j]->dtype != q->dtype) fail("input %d has type %s, Q %s", j, dtype_name(n->in[j]->dtype), dtype_name(q->dtype));
    if (attr_has(n, "score_mod") || attr_has(n, "prob_mod"))
        fail("internal: a FlexAttention with score_mod / prob_mod reached its shape rule unexpanded");
    int64_t prec = attr_i(n, "softmax_precision");
    if (prec && prec != DT_FLOAT && prec != DT_DOUBLE && prec != DT_FLOAT16 && prec != DT_BFLOAT16)
        fail("softmax_precision %lld is not float, double, float16 or bfloat16", (long long)prec);
    Sdpa a;
    flex_shape(n, &a);
    if (a.Tk == 0) fail("attention over zero keys is not supported");
    int64_t yd[4] = {a.B, a.Hq, a.Sq, a.Dv};
    set_out(n, 0, q->dtype, 4, yd);
}

void lower_flex_attention(Node *n, Lowering *L)
{
    Sdpa a;
    flex_shape(n, &a);
    int h16 = promoted_mode(n, 0);
    int64_t prec = attr_i(n, "softmax_precision");
    int64_t sd[4] = {a.B, a.Hq, a.Sq, a.Tk};
    double scale = attr_has(n, "scale") ? attr_f(n, "scale") : 1 / sqrt((double)a.D);
    double sq = sqrtf((float)scale);
    if (h16) sq = half_to_float(n->promoted, float_to_half(n->promoted, (float)sq));
    sdpa_call(n, L, &a, n->out[0], lower_temp(L, n->in[0]->dtype, 4, sd), -1, h16, prec ? half_mode((int)prec) : 0, sq, 0, 1);
}

/* ---- FlexAttention with score_mod / prob_mod: expanded into standard ops --
 * Once Q, K and V are inferred (infer.c, and infer_body for a body), the
 * node is replaced, at its place in the order, by
 *     S  = MatMul(Q * s, Transpose(K * s))       in Q's type, s = sqrt(scale)
 *     S  = Cast(S, C)                            C: softmax_precision, default
 *                                                float32 (double for double data)
 *     S  = Cast(score_mod(S), C)                 the subgraph's nodes inlined
 *     P  = Softmax(S, axis -1)
 *     P  = Cast(prob_mod(P), C)
 *     Y  = Cast(MatMul(P, Cast(V, C)), Q's type)
 * With grouped heads (Hq = r Hkv) Q and P are viewed as [B, Hkv, r, L, *]
 * against K^T and V as [B, Hkv, 1, *, *] (MatMul broadcasts: query head h
 * reads K/V head h / r), and the products reshaped back to [B, Hq, L, *].
 * A modifier's input is the scores (or probabilities), its initializers
 * become constants, the names it reads from enclosing scopes are the outer
 * tensors (the node's capture inputs); its intermediates get names under
 * the node's. A Cast to the own type is removed by the noop pass. */

typedef struct FlexX {
    Graph *g;
    Node *flex;
} FlexX;

static Node *fx_node(FlexX *x, const char *op, Tensor *const *in, int nin, Tensor *out)
{
    Node *m = graph_insert_node(x->g, x->flex, op, "", in, nin, &out, 1);
    m->name = out->name;   /* "NODE/what" */
    node_add_origins(m, x->flex);
    return m;
}

static Tensor *fx_tensor(FlexX *x, const char *what)
{
    return graph_new_tensor(x->g, xfmt("%s/%s", x->flex->name, what));
}

static Tensor *fx_op1(FlexX *x, const char *op, Tensor *a, const char *what)
{
    Tensor *y = fx_tensor(x, what);
    fx_node(x, op, &a, 1, y);
    return y;
}

static Tensor *fx_op2(FlexX *x, const char *op, Tensor *a, Tensor *b, const char *what)
{
    Tensor *in[2] = {a, b}, *y = fx_tensor(x, what);
    fx_node(x, op, in, 2, y);
    return y;
}

static Tensor *fx_cast(FlexX *x, Tensor *a, int to, const char *what)
{
    Tensor *y = fx_op1(x, "Cast", a, what);
    node_set_attr_i(y->producer, "to", to);
    return y;
}

static Tensor *fx_reshape(FlexX *x, Tensor *a, int rank, const int64_t *dims, const char *what)
{
    int64_t len = rank;
    Tensor *shape = graph_new_const(x->g, xfmt("%s/%s_shape", x->flex->name, what), DT_INT64, 1, &len);
    memcpy(shape->data, dims, sizeof(int64_t) * (size_t)rank);
    return fx_op2(x, "Reshape", a, shape, what);
}

/* onnx2c::KeepShape after a modifier: its output is its input (a view),
 * whose shape its shape rule checks against the shape the modifier must
 * keep, once the modifier's nodes are inferred (the noop pass removes it). */
void infer_keep_shape(Node *n)
{
    Tensor *r = n->in[0];
    const int64_t *sd;
    int ns = attr_ints(n, "shape", &sd);
    int same = r->rank == ns;
    for (int d = 0; same && d < r->rank; d++) same = r->dims[d] == sd[d];
    if (!same) {
        Tensor t = {0};
        tensor_set_shape(&t, ns, sd);
        fail("the result of a FlexAttention modifier has shape %s; score_mod and prob_mod must keep the shape "
             "%s (batch, q heads, q rows, keys)", tensor_shape_str(r), tensor_shape_str(&t));
    }
    out_like(n, 0, r);
}

void decompose_keep_shape(const Node *n, Decomp *d)
{
    (void)n;
    dc_output(d, 0, dc_op(d, "Identity", 1, dc_in(d, 0)));
}

/* Inlines modifier `name` of the node on x (nothing if it is absent). */
static Tensor *fx_modifier(FlexX *x, const char *name, Tensor *in, int cdt, const int64_t *sd)
{
    const Attr *a = attr_find(x->flex, name);
    if (!a) return in;
    Graph *sub = a->g;
    if (!sub) fail("the attribute %s is not a graph", name);
    if (sub->ninputs != 1 || sub->noutputs != 1)
        fail("%s has %d inputs and %d outputs; it must have one of each", name, sub->ninputs, sub->noutputs);
    char bad[512];
    size_t len = 0;
    int nbad = 0;
    for (int i = 0; i < sub->nnodes; i++) {
        Node *m = sub->nodes[i];
        if (node_has_subgraph(m))
            fail("%s: node '%s' (%s) has a subgraph; FlexAttention modifiers with nested subgraphs are not supported",
                 name, m->name, m->op_type);
        if (graph_op(x->g, m->domain, m->op_type)) continue;
        if (len < sizeof bad - 160)
            len += (size_t)snprintf(bad + len, sizeof bad - len, "%s%s%s%s", nbad ? ", " : "", m->domain,
                                    *m->domain ? "::" : "", m->op_type);
        nbad++;
    }
    if (nbad) fail("%s uses unsupported ops: %s", name, bad);
    /* sub's tensors -> tensors of g (mark: 0 unmapped, else index + 1 into map) */
    Tensor **map = xalloc(sizeof(Tensor *) * (size_t)(sub->ntensors + 1));
    for (int t = 0; t < sub->ntensors; t++) sub->tensors[t]->mark = t;
    for (int t = 0; t < sub->ntensors; t++) {
        Tensor *s = sub->tensors[t];
        if (s == sub->inputs[0]) {
            map[t] = in;
        } else if (s->data) {   /* an initializer of the modifier: constants are never written, so shared */
            Tensor *c = map[t] = fx_tensor(x, xfmt("%s/%s", name, s->name));
            c->dtype = s->dtype;
            tensor_set_shape(c, s->rank, s->dims);
            c->data = s->data;
        } else if (s->producer) {
            map[t] = fx_tensor(x, xfmt("%s/%s", name, s->name));
        }
    }
    for (int k = 0; k < sub->ncaptures; k++) {
        int j = sub->capture_in[k];
        if (j < 3 || j >= x->flex->nin) fail("internal: %s capture '%s' is unbound", name, sub->captures[k]->name);
        map[sub->captures[k]->mark] = x->flex->in[j];
    }
    for (int i = 0; i < sub->nnodes; i++) {
        Node *m = sub->nodes[i];
        Tensor **ins = xalloc(sizeof(Tensor *) * (size_t)(m->nin + 1));
        Tensor **outs = xalloc(sizeof(Tensor *) * (size_t)(m->nout + 1));
        for (int j = 0; j < m->nin; j++) {
            ins[j] = m->in[j] ? map[m->in[j]->mark] : NULL;
            if (m->in[j] && !ins[j]) fail("%s: node '%s' reads '%s', which nothing defines", name, m->name, m->in[j]->name);
        }
        for (int j = 0; j < m->nout; j++) outs[j] = m->out[j] ? map[m->out[j]->mark] : NULL;
        Node *c = graph_insert_node(x->g, x->flex, m->op_type, m->domain, ins, m->nin, outs, m->nout);
        c->name = xfmt("%s/%s/%s", x->flex->name, name, m->name);
        c->attrs = m->attrs;
        c->nattrs = m->nattrs;
        node_add_origins(c, x->flex);
    }
    Tensor *y = map[sub->outputs[0]->mark];
    if (!y) fail("%s: its output '%s' is defined by nothing", name, sub->outputs[0]->name);
    /* the reference takes the result as the softmax precision's type */
    Tensor *out = fx_cast(x, y, cdt, xfmt("%s_out", name)), *kept = fx_tensor(x, xfmt("%s_kept", name));
    Node *k = graph_insert_node(x->g, x->flex, "KeepShape", "onnx2c", &out, 1, &kept, 1);
    k->name = kept->name;
    node_add_origins(k, x->flex);
    node_set_attr_ints(k, "shape", sd, 4);
    return kept;
}

int expand_flex_attention(Graph *g, Node *n)
{
    if (!attr_has(n, "score_mod") && !attr_has(n, "prob_mod")) return 0;
    if (n->nin < 3 || n->nout != 1 || !n->out[0]) fail("needs Q, K, V and one output");
    Tensor *q = n->in[0], *k = n->in[1], *v = n->in[2];
    for (int j = 0; j < 3; j++)
        if (!n->in[j] || n->in[j]->rank < 0 || !n->in[j]->dtype) fail("input %d has no known type and shape", j);
    static const int FL[] = {DT_FLOAT, DT_DOUBLE, DT_FLOAT16, DT_BFLOAT16, 0};
    need_dtype(n, q, FL);
    for (int j = 1; j < 3; j++)
        if (n->in[j]->dtype != q->dtype) fail("input %d has type %s, Q %s", j, dtype_name(n->in[j]->dtype), dtype_name(q->dtype));
    Sdpa a;
    flex_shape(n, &a);
    if (a.Tk == 0) fail("attention over zero keys is not supported");
    int64_t prec = attr_i(n, "softmax_precision");
    if (prec && prec != DT_FLOAT && prec != DT_DOUBLE && prec != DT_FLOAT16 && prec != DT_BFLOAT16)
        fail("softmax_precision %lld is not float, double, float16 or bfloat16", (long long)prec);
    int T = q->dtype, C = prec ? (int)prec : T == DT_DOUBLE ? DT_DOUBLE : DT_FLOAT;
    FlexX x = {g, n};
    /* sqrt(scale): float32, then the data type (as the reference) */
    double scale = attr_has(n, "scale") ? attr_f(n, "scale") : 1 / sqrt((double)a.D);
    Tensor *s = graph_new_const(g, xfmt("%s/sqrt_scale", n->name), T, 0, NULL);
    elem_set(T, s->data, 0, (double)sqrtf((float)scale));
    Tensor *qs = fx_op2(&x, "Mul", q, s, "q_scaled"), *ks = fx_op2(&x, "Mul", k, s, "k_scaled");
    int64_t r = a.Hq / a.Hkv;
    int gqa = r > 1;
    if (gqa) {
        int64_t qd[5] = {a.B, a.Hkv, r, a.Sq, a.D}, kd[5] = {a.B, a.Hkv, 1, a.Skv, a.D};
        qs = fx_reshape(&x, qs, 5, qd, "q_grouped");
        ks = fx_reshape(&x, ks, 5, kd, "k_grouped");
    }
    Tensor *kt = fx_op1(&x, "Transpose", ks, "k_transposed");
    int64_t perm[5] = {0, 1, 2, 3, 4};
    perm[gqa + 2] = gqa + 3;
    perm[gqa + 3] = gqa + 2;
    node_set_attr_ints(kt->producer, "perm", perm, 4 + gqa);
    Tensor *sc = fx_op2(&x, "MatMul", qs, kt, "scores");
    int64_t sd[4] = {a.B, a.Hq, a.Sq, a.Skv};
    if (gqa) sc = fx_reshape(&x, sc, 4, sd, "scores_heads");
    sc = fx_cast(&x, sc, C, "scores_cast");
    sc = fx_modifier(&x, "score_mod", sc, C, sd);
    Tensor *pr = fx_op1(&x, "Softmax", sc, "probs");
    node_set_attr_i(pr->producer, "axis", -1);
    pr = fx_modifier(&x, "prob_mod", pr, C, sd);
    Tensor *vc = fx_cast(&x, v, C, "v_cast");
    if (gqa) {
        int64_t pd[5] = {a.B, a.Hkv, r, a.Sq, a.Skv}, vd[5] = {a.B, a.Hkv, 1, a.Skv, a.Dv};
        pr = fx_reshape(&x, pr, 5, pd, "probs_grouped");
        vc = fx_reshape(&x, vc, 5, vd, "v_grouped");
    }
    Tensor *y = fx_op2(&x, "MatMul", pr, vc, "y_compute");
    if (gqa) {
        int64_t yd[4] = {a.B, a.Hq, a.Sq, a.Dv};
        y = fx_reshape(&x, y, 4, yd, "y_heads");
    }
    /* the last node takes over the node's output */
    Tensor *last = y;
    Node *cast = graph_insert_node(g, n, "Cast", "", &last, 1, &n->out[0], 1);
    cast->name = xfmt("%s/y", n->name);
    node_set_attr_i(cast, "to", T);
    node_add_origins(cast, n);
    graph_remove_node(g, n);
    graph_recount_uses(g);
    note("FlexAttention '%s' with modifiers expanded into standard ops", n->name);
    return 1;
}

/* ---- RotaryEmbedding (opset 23+) -------------------------------------------
 * X 4-D (batch, heads, rows, head size) or 3-D (batch, rows, heads * head
 * size, num_heads given); cos/sin caches (batch, rows, RD/2), or (max
 * position, RD/2) indexed by position_ids (batch, rows). */

typedef struct Rot { int64_t B, S, H, HD, RD; } Rot;

static void rot_shape(Node *n, Rot *r)
{
    Tensor *x = n->in[0];
    if (x->rank == 4) {
        r->B = x->dims[0];
        r->H = x->dims[1];
        r->S = x->dims[2];
        r->HD = x->dims[3];
    } else if (x->rank == 3) {
        r->B = x->dims[0];
        r->S = x->dims[1];
        r->H = attr_i(n, "num_heads");
        if (r->H <= 0 || x->dims[2] % r->H) fail("a 3-D input needs num_heads dividing its hidden size %lld", (long long)x->dims[2]);
        r->HD = x->dims[2] / r->H;
    } else {
        fail("the input must be 3-D or 4-D, it is %s", tensor_shape_str(x));
    }
    r->RD = attr_i(n, "rotary_embedding_dim");
    if (r->RD == 0) r->RD = r->HD;
    if (r->RD < 0 || r->RD > r->HD || r->RD % 2) fail("rotary_embedding_dim %lld must be even and at most the head size %lld", (long long)r->RD, (long long)r->HD);
}

void infer_rotary(Node *n)
{
    Tensor *x = n->in[0], *cs = n->in[1], *sn = n->in[2], *pos = in_t(n, 3);
    need_dtype(n, x, DTS_FLOAT);
    if (cs->dtype != x->dtype || sn->dtype != x->dtype) fail("cos_cache and sin_cache must have the input's type");
    Rot r;
    rot_shape(n, &r);
    if (cs->rank != sn->rank) fail("cos_cache %s and sin_cache %s differ", tensor_shape_str(cs), tensor_shape_str(sn));
    for (int d = 0; d < cs->rank; d++) if (cs->dims[d] != sn->dims[d]) fail("cos_cache and sin_cache have different shapes");
    if (pos) {
        if (pos->dtype != DT_INT64 || pos->rank != 2 || pos->dims[0] != r.B || pos->dims[1] != r.S)
            fail("position_ids must be int64 (batch, rows) = (%lld, %lld), it is %s", (long long)r.B, (long long)r.S, tensor_shape_str(pos));
        if (cs->rank != 2 || cs->dims[1] != r.RD / 2) fail("with position_ids the caches must be (max position, %lld), they are %s", (long long)(r.RD / 2), tensor_shape_str(cs));
    } else if (cs->rank != 3 || cs->dims[0] != r.B || cs->dims[1] != r.S || cs->dims[2] != r.RD / 2) {
        fail("without position_ids the caches must be (batch, rows, rotary_dim/2) = (%lld, %lld, %lld), they are %s",
             (long long)r.B, (long long)r.S, (long long)(r.RD / 2), tensor_shape_str(cs));
    }
    out_like(n, 0, x);
}

void lower_rotary(Node *n, Lowering *L)
{
    Rot r;
    rot_shape(n, &r);
    Tensor *x = n->in[0], *pos = in_t(n, 3);
    KCall *c = lower_call(L, xfmt("o2c_rotary_%s", dtype_suffix(x->dtype)), r.B * r.S * r.H);
    c->x[O2C_ROT_XX] = x;
    c->x[O2C_ROT_XCOS] = n->in[1];
    c->x[O2C_ROT_XSIN] = n->in[2];
    c->x[O2C_ROT_XPOS] = pos;
    c->y[0] = n->out[0];
    c->k[O2C_ROT_S] = r.S;
    c->k[O2C_ROT_H] = r.H;
    c->k[O2C_ROT_HD] = r.HD;
    c->k[O2C_ROT_RD] = r.RD;
    c->k[O2C_ROT_INTER] = attr_i(n, "interleaved") != 0;
    /* X strides: batch, row, head */
    c->k[O2C_ROT_XS] = r.S * r.H * r.HD;
    c->k[O2C_ROT_XS + 1] = x->rank == 4 ? r.HD : r.H * r.HD;
    c->k[O2C_ROT_XS + 2] = x->rank == 4 ? r.S * r.HD : r.HD;
    c->k[O2C_ROT_CS] = r.S * (r.RD / 2);
    c->k[O2C_ROT_CS + 1] = r.RD / 2;
    c->k[O2C_ROT_NPOS] = pos ? n->in[1]->dims[0] : 0;
    c->k[O2C_ROT_HALF] = promoted_mode(n, 0);
}

/* a node on float32 stand-ins (16-bit data) whose float outputs would all
 * be stored as that 16-bit type: refuse inputs that mix float32 with it */
static void need_one_float_type(Node *n, const int *ins, int nins)
{
    if (!n->promoted) return;
    for (int j = 0; j < nins; j++)
        if (in_t(n, ins[j]) && n->in[ins[j]]->dtype == DT_FLOAT && !node_promoted_in(n, ins[j]))
            fail("input %d is float32 and another input 16-bit: onnx2c needs one floating type here", ins[j]);
}

/* ---- LinearAttention (opset 27) ---------------------------------------------
 * Q, K, V 3-D (B x T x heads*size); past_state (B, HKV, DK, DV); decay
 * (B, T, HKV or HKV*DK) for the gated rules; beta (B, T, HKV or 1) for
 * the delta rules. Computes in float32 as the reference does. */

typedef struct LinAtt { int64_t B, T, Hq, Hkv, Dk, Dv; int gate, beta; } LinAtt;

static void linatt_shape(Node *n, LinAtt *a)
{
    Tensor *q = n->in[0], *k = n->in[1], *v = n->in[2], *ps = in_t(n, 3), *g = in_t(n, 4), *bt = in_t(n, 5);
    const char *rule = attr_s(n, "update_rule");
    int gating = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta");
    int delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta");
    if (!gating && !delta && strcmp(rule, "linear")) fail("update_rule '%s' is not linear, gated, delta or gated_delta", rule);
    if (gating != !!g) fail("update_rule '%s' %s the decay input", rule, gating ? "needs" : "forbids");
    if (delta != !!bt) fail("update_rule '%s' %s the beta input", rule, delta ? "needs" : "forbids");
    a->Hq = attr_i(n, "q_num_heads");
    a->Hkv = attr_i(n, "kv_num_heads");
    if (a->Hq <= 0 || a->Hkv <= 0 || a->Hq % a->Hkv) fail("q_num_heads (%lld) must be a positive multiple of kv_num_heads (%lld)", (long long)a->Hq, (long long)a->Hkv);
    if (q->rank != 3 || k->rank != 3 || v->rank != 3) fail("query, key and value must be 3-D (batch, time, heads * size)");
    a->B = q->dims[0];
    a->T = q->dims[1];
    for (int j = 1; j < 3; j++)
        if (n->in[j]->dims[0] != a->B || n->in[j]->dims[1] != a->T) fail("query, key and value have different batch or time sizes");
    if (q->dims[2] % a->Hq || k->dims[2] % a->Hkv || v->dims[2] % a->Hkv) fail("the hidden sizes are not multiples of the head counts");
    a->Dk = q->dims[2] / a->Hq;
    a->Dv = v->dims[2] / a->Hkv;
    if (k->dims[2] / a->Hkv != a->Dk) fail("query and key have different head sizes");
    if (ps && (ps->rank != 4 || ps->dims[0] != a->B || ps->dims[1] != a->Hkv || ps->dims[2] != a->Dk || ps->dims[3] != a->Dv))
        fail("past_state %s is not (batch, kv_num_heads, dk, dv) = (%lld, %lld, %lld, %lld)", tensor_shape_str(ps), (long long)a->B, (long long)a->Hkv, (long long)a->Dk, (long long)a->Dv);
    a->gate = a->beta = 0;
    if (g) {
        if (g->rank != 3 || g->dims[0] != a->B || g->dims[1] != a->T) fail("decay %s is not (batch, time, ...)", tensor_shape_str(g));
        if (g->dims[2] == a->Hkv) a->gate = 1;
        else if (g->dims[2] == a->Hkv * a->Dk) a->gate = 2;
        else fail("decay's last dim %lld is neither kv_num_heads nor kv_num_heads * dk", (long long)g->dims[2]);
    }
    if (bt) {
        if (bt->rank != 3 || bt->dims[0] != a->B || bt->dims[1] != a->T) fail("beta %s is not (batch, time, ...)", tensor_shape_str(bt));
        if (bt->dims[2] == a->Hkv) a->beta = 1;
        else if (bt->dims[2] == 1) a->beta = 2;
        else fail("beta's last dim %lld is neither kv_num_heads nor 1", (long long)bt->dims[2]);
    }
}

void infer_linear_attention(Node *n)
{
    Tensor *q = n->in[0];
    static const int FL[] = {DT_FLOAT, 0};
    need_dtype(n, q, FL);
    for (int j = 1; j < n->nin; j++)
        if (in_t(n, j) && n->in[j]->dtype != DT_FLOAT) fail("input %d must be a floating type like the query", j);
    static const int INS[] = {0, 1, 2, 3, 4, 5};
    need_one_float_type(n, INS, n->nin);
    LinAtt a;
    linatt_shape(n, &a);
    int64_t yd[3] = {a.B, a.T, a.Hq * a.Dv}, sd[4] = {a.B, a.Hkv, a.Dk, a.Dv};
    set_out(n, 0, DT_FLOAT, 3, yd);
    set_out(n, 1, DT_FLOAT, 4, sd);
}

void lower_linear_attention(Node *n, Lowering *L)
{
    LinAtt a;
    linatt_shape(n, &a);
    int64_t sd[4] = {a.B, a.Hkv, a.Dk, a.Dv};
    Tensor *st = n->nout > 1 && n->out[1] ? n->out[1] : lower_temp(L, DT_FLOAT, 4, sd);
    KCall *c = lower_call(L, "o2c_linatt_f32", a.B * a.Hkv * a.Dv);
    for (int j = 0; j < 6; j++) c->x[j] = in_t(n, j);
    c->y[0] = n->out[0];
    c->y[1] = st;
    c->k[O2C_LINATT_T] = a.T;
    c->k[O2C_LINATT_HQ] = a.Hq;
    c->k[O2C_LINATT_HKV] = a.Hkv;
    c->k[O2C_LINATT_DK] = a.Dk;
    c->k[O2C_LINATT_DV] = a.Dv;
    c->k[O2C_LINATT_GATE] = a.gate;
    c->k[O2C_LINATT_BETA] = a.beta;
    double scale = attr_has(n, "scale") ? attr_f(n, "scale") : 0;
    c->f[O2C_LINATT_FSCALE] = scale == 0 ? 1 / sqrt((double)a.Dk) : scale;
}

/* ---- CausalConvWithState (opset 27) -----------------------------------------
 * input (B, C, L), weight (C, 1, K), bias (C), past_state (B, C, K - 1):
 * a depthwise causal conv over the input padded on the left by the state;
 * present_state is the padded input's last K - 1 positions. */

void infer_causal_conv_with_state(Node *n)
{
    Tensor *x = n->in[0], *w = n->in[1], *b = in_t(n, 2), *ps = in_t(n, 3);
    static const int FL[] = {DT_FLOAT, 0};
    need_dtype(n, x, FL);
    for (int j = 1; j < n->nin; j++)
        if (in_t(n, j) && n->in[j]->dtype != DT_FLOAT) fail("input %d must have the input's type", j);
    static const int INS[] = {0, 1, 2, 3};
    need_one_float_type(n, INS, n->nin);
    const char *act = attr_s(n, "activation");
    if (strcmp(act, "none") && strcmp(act, "silu") && strcmp(act, "swish")) fail("activation '%s' is not none, silu or swish", act);
    if (x->rank != 3) fail("input must be (batch, channels, length), it is %s", tensor_shape_str(x));
    int64_t B = x->dims[0], C = x->dims[1];
    if (w->rank != 3 || w->dims[0] != C || w->dims[1] != 1 || w->dims[2] < 1)
        fail("weight %s is not (channels, 1, k)", tensor_shape_str(w));
    int64_t K = w->dims[2];
    if (b && (b->rank != 1 || b->dims[0] != C)) fail("bias %s is not (channels)", tensor_shape_str(b));
    if (ps && (ps->rank != 3 || ps->dims[0] != B || ps->dims[1] != C || ps->dims[2] != K - 1))
        fail("past_state %s is not (batch, channels, k - 1)", tensor_shape_str(ps));
    int64_t sd[3] = {B, C, K - 1};
    out_like(n, 0, x);
    set_out(n, 1, x->dtype, 3, sd);
}

void lower_causal_conv_with_state(Node *n, Lowering *L)
{
    Tensor *x = n->in[0];
    int64_t K = n->in[1]->dims[2];
    for (int j = 0; j < 2; j++) {
        if (j == 1 && !sdpa_used(n, 1)) break;
        KCall *c = lower_call(L, j ? "o2c_ccstate_present_f32" : "o2c_ccstate_f32", tensor_numel(n->out[j]));
        c->x[O2C_CCS_XX] = x;
        c->x[O2C_CCS_XW] = n->in[1];
        c->x[O2C_CCS_XB] = in_t(n, 2);
        c->x[O2C_CCS_XPAST] = in_t(n, 3);
        c->y[0] = n->out[j];
        c->k[O2C_CCS_C] = x->dims[1];
        c->k[O2C_CCS_L] = x->dims[2];
        c->k[O2C_CCS_K] = K;
        c->k[O2C_CCS_SILU] = strcmp(attr_s(n, "activation"), "none") != 0;
        c->k[O2C_CCS_HALF] = promoted_mode(n, 0);
    }
}
