/* Parameter slots of the ai.onnx.ml kernels (runtime/c/ml.h): the lowering
 * (compiler/ops/ml.c) writes c->k[NAME] / c->f[NAME], the kernel reads them. */

/* o2c_binarizer_T: y = x > threshold */
enum { O2C_BINARIZER_F_THRESHOLD, O2C_BINARIZER_NF };
O2C_PARAMS_FIT(binarizer, 0, O2C_BINARIZER_NF)

/* o2c_afe_T (ArrayFeatureExtractor): y[r][j] = x[r][idx[j]], x seen as rows x cols */
enum {
    O2C_AFE_COLS,         /* the input's last dimension */
    O2C_AFE_NIDX,         /* indices per row */
    O2C_AFE_NK
};
O2C_PARAMS_FIT(afe, O2C_AFE_NK, 0)

/* o2c_trees_T (TreeEnsemble): one index a sample. x[1]: the node table, int64,
 * O2C_TREE_COLS columns a node; x[2]: the reals: splits (one a node), then the
 * member sets' values, then the leaf weights; x[3]: int64, the tree roots (a
 * root that is a leaf as -1 - leaf) then each leaf's target. */
enum {
    O2C_TREES_FEATURES,   /* the input's columns */
    O2C_TREES_TARGETS,    /* n_targets: the output's columns */
    O2C_TREES_NODES,      /* nodes (also the longest walk) */
    O2C_TREES_TREES,      /* trees */
    O2C_TREES_LEAVES,     /* leaves */
    O2C_TREES_MEMBERS,    /* values of all member sets */
    O2C_TREES_AGGREGATE,  /* O2C_TREES_AVERAGE, _SUM, _MIN, _MAX */
    O2C_TREES_NK
};
O2C_PARAMS_FIT(trees, O2C_TREES_NK, 0)

/* columns of the node table; a child < 0 is the leaf -1 - child */
enum {
    O2C_TREE_FEATURE, O2C_TREE_MODE, O2C_TREE_TRUE, O2C_TREE_FALSE, O2C_TREE_MISSING_TRUE,
    O2C_TREE_SET_AT, O2C_TREE_SET_LEN, O2C_TREE_COLS
};
/* modes (the ONNX values of nodes_modes) */
enum { O2C_TREE_LEQ, O2C_TREE_LT, O2C_TREE_GTE, O2C_TREE_GT, O2C_TREE_EQ, O2C_TREE_NEQ, O2C_TREE_MEMBER };
/* aggregate_function values */
enum { O2C_TREES_AVERAGE, O2C_TREES_SUM, O2C_TREES_MIN, O2C_TREES_MAX };
