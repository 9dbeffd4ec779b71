/* ai.onnx.ml ops: Binarizer, ArrayFeatureExtractor and TreeEnsemble (the
 * opset 5 form of the tree ensembles; runtime/c/ml.h). TreeEnsemble's trees
 * are checked here (ids in range, no cycles, membership sets complete) and
 * flattened into three constant tables the kernel walks. */
#include <math.h>
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/ml.h"

/* ---- Binarizer -------------------------------------------------------------- */

void infer_binarizer(Node *n)
{
    need_dtype(n, n->in[0], DTS_FLOAT);
    out_like(n, 0, n->in[0]);
}

void lower_binarizer(Node *n, Lowering *L)
{
    KCall *c = lower_call(L, xfmt("o2c_binarizer_%s", dtype_suffix(n->in[0]->dtype)), tensor_numel(n->out[0]));
    c->x[0] = n->in[0];
    c->y[0] = n->out[0];
    c->f[O2C_BINARIZER_F_THRESHOLD] = attr_f(n, "threshold");
}

/* ---- ArrayFeatureExtractor: x[..., indices] ------------------------------------ */

void infer_afe(Node *n)
{
    static const int DTS_AFE[] = {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, 0};
    static const int DTS_I64[] = {DT_INT64, 0};
    Tensor *x = n->in[0], *idx = n->in[1];
    need_dtype(n, x, DTS_AFE);
    need_dtype(n, idx, DTS_I64);
    if (x->rank < 1) fail("input '%s' must have rank 1 or more", x->name);
    /* onnxruntime's shape: the leading dims (a 1-D input as one row), then all the indices */
    int64_t dims[MAX_RANK];
    int r = x->rank == 1 ? 1 : x->rank - 1;
    if (x->rank == 1) dims[0] = 1;
    else memcpy(dims, x->dims, sizeof(int64_t) * (size_t)r);
    dims[r++] = tensor_numel(idx);
    set_out(n, 0, x->dtype, r, dims);
    if (idx->data)
        for (int64_t i = 0; i < tensor_numel(idx); i++) {
            int64_t v = elem_i64(idx->dtype, idx->data, i);
            if (v < 0 || v >= x->dims[x->rank - 1])
                fail("index %lld is outside the input's last dimension (%lld)", (long long)v,
                     (long long)x->dims[x->rank - 1]);
        }
}

void lower_afe(Node *n, Lowering *L)
{
    Tensor *x = n->in[0];
    KCall *c = lower_call(L, xfmt("o2c_afe_%s", dtype_suffix(x->dtype)), tensor_numel(n->out[0]));
    c->x[0] = x;
    c->x[1] = n->in[1];
    c->y[0] = n->out[0];
    c->k[O2C_AFE_COLS] = x->dims[x->rank - 1];
    c->k[O2C_AFE_NIDX] = tensor_numel(n->in[1]);
}

/* ---- TreeEnsemble ------------------------------------------------------------ */

/* a tensor attribute's values as doubles (count in *len), or NULL if absent */
static double *attr_reals(Node *n, const char *name, int64_t *len)
{
    const Attr *a = attr_find(n, name);
    *len = 0;
    if (!a) return NULL;
    if (a->type != AT_TENSOR || !a->t || !a->t->data) fail("attribute %s must be a tensor", name);
    *len = tensor_numel(a->t);
    return tensor_const_f64(a->t);
}

static int64_t need_list(Node *n, const char *name, const int64_t **v)
{
    if (!attr_has(n, name)) fail("TreeEnsemble needs the attribute %s", name);
    return attr_ints(n, name, v);
}

typedef struct Trees {
    int64_t nn, nleaf, ntree, nmember;
    int64_t *table;   /* nn x O2C_TREE_COLS */
    double *reals;    /* splits, member values, leaf weights */
    int64_t *ints;    /* roots, leaf targets */
} Trees;

/* child id: a node, or (leaf) -1 - leaf */
static int64_t child(Node *n, int64_t id, int64_t leaf, const Trees *t)
{
    if (leaf) {
        if (id < 0 || id >= t->nleaf) fail("leaf id %lld is out of range (%lld leaves)", (long long)id, (long long)t->nleaf);
        return -1 - id;
    }
    if (id < 0 || id >= t->nn) fail("node id %lld is out of range (%lld nodes)", (long long)id, (long long)t->nn);
    (void)n;
    return id;
}

/* depth-first: a node on the current path again is a cycle */
static void check_acyclic(const Trees *t, int64_t at, char *state)
{
    if (at < 0) return;
    if (state[at] == 1) fail("the trees have a cycle through node %lld", (long long)at);
    if (state[at] == 2) return;
    state[at] = 1;
    check_acyclic(t, t->table[at * O2C_TREE_COLS + O2C_TREE_TRUE], state);
    check_acyclic(t, t->table[at * O2C_TREE_COLS + O2C_TREE_FALSE], state);
    state[at] = 2;
}

static Trees build_trees(Node *n)
{
    Trees t = {0};
    const int64_t *feat, *tid, *fid, *tleaf, *fleaf, *roots, *targets, *missing = NULL;
    t.nn = need_list(n, "nodes_featureids", &feat);
    int64_t nsplit, nmode, nweight, nmem = 0;
    double *splits = attr_reals(n, "nodes_splits", &nsplit), *modes = attr_reals(n, "nodes_modes", &nmode);
    double *weights = attr_reals(n, "leaf_weights", &nweight), *mem = attr_reals(n, "membership_values", &nmem);
    if (!splits || !modes || !weights) fail("TreeEnsemble needs nodes_splits, nodes_modes and leaf_weights");
    if (need_list(n, "nodes_truenodeids", &tid) != t.nn || need_list(n, "nodes_falsenodeids", &fid) != t.nn ||
        need_list(n, "nodes_trueleafs", &tleaf) != t.nn || need_list(n, "nodes_falseleafs", &fleaf) != t.nn ||
        nsplit != t.nn || nmode != t.nn ||
        (attr_has(n, "nodes_missing_value_tracks_true") && attr_ints(n, "nodes_missing_value_tracks_true", &missing) != t.nn))
        fail("the nodes_* attributes must all have one value per node (%lld)", (long long)t.nn);
    t.ntree = need_list(n, "tree_roots", &roots);
    t.nleaf = need_list(n, "leaf_targetids", &targets);
    if (nweight != t.nleaf) fail("leaf_weights has %lld values for %lld leaves", (long long)nweight, (long long)t.nleaf);
    if (t.ntree < 1 || t.nn < 1) fail("TreeEnsemble needs at least one tree");
    int64_t ntarget = attr_i(n, "n_targets");
    t.table = xalloc(sizeof(int64_t) * (size_t)(t.nn * O2C_TREE_COLS));
    t.nmember = nmem;
    t.reals = xalloc(sizeof(double) * (size_t)(t.nn + nmem + t.nleaf + 1));
    t.ints = xalloc(sizeof(int64_t) * (size_t)(t.ntree + t.nleaf));
    int64_t set_at = 0;
    for (int64_t i = 0; i < t.nn; i++) {
        int64_t *row = t.table + i * O2C_TREE_COLS;
        int64_t mode = (int64_t)modes[i];
        if (mode < O2C_TREE_LEQ || mode > O2C_TREE_MEMBER) fail("node %lld has mode %lld, not one of 0..6", (long long)i, (long long)mode);
        row[O2C_TREE_FEATURE] = feat[i];
        row[O2C_TREE_MODE] = mode;
        row[O2C_TREE_TRUE] = child(n, tid[i], tleaf[i], &t);
        row[O2C_TREE_FALSE] = child(n, fid[i], fleaf[i], &t);
        row[O2C_TREE_MISSING_TRUE] = missing ? missing[i] != 0 : 0;
        row[O2C_TREE_SET_AT] = row[O2C_TREE_SET_LEN] = 0;
        if (mode == O2C_TREE_MEMBER) {
            /* the member nodes' sets lie in membership_values in node order, each ended by a NaN */
            int64_t e = set_at;
            while (e < nmem && !isnan(mem[e])) e++;
            if (e >= nmem) fail("membership_values has no set (ended by NaN) for member node %lld", (long long)i);
            row[O2C_TREE_SET_AT] = set_at;
            row[O2C_TREE_SET_LEN] = e - set_at;
            set_at = e + 1;
        }
        t.reals[i] = splits[i];
    }
    for (int64_t i = 0; i < nmem; i++) t.reals[t.nn + i] = mem[i];
    for (int64_t i = 0; i < t.nleaf; i++) {
        if (targets[i] < 0 || targets[i] >= ntarget)
            fail("leaf %lld has target %lld; n_targets is %lld", (long long)i, (long long)targets[i], (long long)ntarget);
        t.reals[t.nn + nmem + i] = weights[i];
        t.ints[t.ntree + i] = targets[i];
    }
    char *state = xalloc((size_t)t.nn);
    memset(state, 0, (size_t)t.nn);
    for (int64_t r = 0; r < t.ntree; r++) {
        int64_t at = roots[r];
        if (at < 0 || at >= t.nn) fail("tree root %lld is out of range (%lld nodes)", (long long)at, (long long)t.nn);
        const int64_t *row = t.table + at * O2C_TREE_COLS;
        /* a tree that is one leaf: both branches the same leaf */
        if (tleaf[at] && fleaf[at] && tid[at] == fid[at]) at = row[O2C_TREE_TRUE];
        else check_acyclic(&t, at, state);
        t.ints[r] = at;
    }
    return t;
}

void infer_tree_ensemble(Node *n)
{
    Tensor *x = n->in[0];
    need_dtype(n, x, DTS_FLOAT);
    if (x->rank != 2) fail("input '%s' must be 2-D (samples x features), it is %s", x->name, tensor_shape_str(x));
    if (!attr_has(n, "n_targets") || attr_i(n, "n_targets") < 1) fail("TreeEnsemble needs n_targets >= 1");
    int64_t agg = attr_i(n, "aggregate_function");
    if (agg < O2C_TREES_AVERAGE || agg > O2C_TREES_MAX) fail("aggregate_function %lld is not one of 0..3", (long long)agg);
    if (attr_i(n, "post_transform") != 0)
        fail("post_transform %lld is not supported yet (only 0, NONE)", (long long)attr_i(n, "post_transform"));
    Trees t = build_trees(n);
    for (int64_t i = 0; i < t.nn; i++)
        if (t.table[i * O2C_TREE_COLS + O2C_TREE_FEATURE] < 0 || t.table[i * O2C_TREE_COLS + O2C_TREE_FEATURE] >= x->dims[1])
            fail("node %lld reads feature %lld; the input has %lld", (long long)i,
                 (long long)t.table[i * O2C_TREE_COLS + O2C_TREE_FEATURE], (long long)x->dims[1]);
    int64_t dims[2] = {x->dims[0], attr_i(n, "n_targets")};
    set_out(n, 0, x->dtype, 2, dims);
}

void lower_tree_ensemble(Node *n, Lowering *L)
{
    Tensor *x = n->in[0];
    Trees t = build_trees(n);
    int64_t d1 = t.nn * O2C_TREE_COLS, d2 = t.nn + t.nmember + t.nleaf, d3 = t.ntree + t.nleaf;
    Tensor *table = lower_const(L, "tree_nodes", DT_INT64, 1, &d1);
    Tensor *reals = lower_const(L, "tree_reals", x->dtype, 1, &d2);
    Tensor *ints = lower_const(L, "tree_roots_targets", DT_INT64, 1, &d3);
    memcpy(table->data, t.table, sizeof(int64_t) * (size_t)d1);
    for (int64_t i = 0; i < d2; i++) elem_set(x->dtype, reals->data, i, t.reals[i]);
    memcpy(ints->data, t.ints, sizeof(int64_t) * (size_t)d3);
    KCall *c = lower_call(L, xfmt("o2c_trees_%s", dtype_suffix(x->dtype)), x->dims[0]);
    c->x[0] = x;
    c->x[1] = table;
    c->x[2] = reals;
    c->x[3] = ints;
    c->y[0] = n->out[0];
    c->k[O2C_TREES_FEATURES] = x->dims[1];
    c->k[O2C_TREES_TARGETS] = n->out[0]->dims[1];
    c->k[O2C_TREES_NODES] = t.nn;
    c->k[O2C_TREES_TREES] = t.ntree;
    c->k[O2C_TREES_LEAVES] = t.nleaf;
    c->k[O2C_TREES_MEMBERS] = t.nmember;
    c->k[O2C_TREES_AGGREGATE] = attr_i(n, "aggregate_function");
}
