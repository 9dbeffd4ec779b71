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
    KCall *c = lower_call(L, xfmt("o2c_attention_%s", dtype_suffix(y->dtype)), rows);
    c->x[O2C_ATT_XQ] = n->in[0];
    c->x[O2C_ATT_XK] = n->in[1];
    c->x[O2C_ATT_XV] = n->in[2];
    c->x[O2C_ATT_XMASK] = in_t(n, 3);
    c->y[0] = y;
    c->nk = O2C_ATT_NK;
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
    c->nf = O2C_ATT_NF;
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
