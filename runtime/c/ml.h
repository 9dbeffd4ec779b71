/* Kernels of the ai.onnx.ml ops (compiler/ops/ml.c): Binarizer,
 * ArrayFeatureExtractor, TreeEnsemble. */

/* Binarizer: 1 where x > threshold, else 0 (NaN: 0) */
#define O2C_BINARIZER_DEF(NAME, TY)                                          \
    O2C_KERNEL(NAME)                                                         \
    {                                                                        \
        const TY *X = (const TY *)p->x[0];                                   \
        TY *Y = (TY *)p->y[0];                                               \
        const TY th = O2C_PF(TY, p, O2C_BINARIZER_F_THRESHOLD);              \
        O2C_FOR(i) Y[i] = X[i] > th ? (TY)1 : (TY)0;                         \
    }

/* ArrayFeatureExtractor: y[r][j] = x[r][idx[j]] (indices checked at run time:
 * one outside the row gives 0) */
#define O2C_AFE_DEF(NAME, TY)                                                \
    O2C_KERNEL(NAME)                                                         \
    {                                                                        \
        const TY *X = (const TY *)p->x[0];                                   \
        const int64_t *IX = (const int64_t *)p->x[1];                         \
        TY *Y = (TY *)p->y[0];                                               \
        const o2c_int cols = p->k[O2C_AFE_COLS], ni = p->k[O2C_AFE_NIDX];    \
        O2C_FOR(i) {                                                         \
            const o2c_int r = i / ni, c = IX[i % ni];                         \
            Y[i] = c >= 0 && c < cols ? X[r * cols + c] : (TY)0;             \
        }                                                                    \
    }

/* TreeEnsemble: each sample walks every tree from its root to a leaf (at most
 * O2C_TREES_NODES steps: the compiler checked the trees are acyclic) and adds
 * the leaf's weight into its target (sum, average, min or max over trees). */
#define O2C_TREES_DEF(NAME, TY)                                              \
    O2C_KERNEL(NAME)                                                         \
    {                                                                        \
        const TY *X = (const TY *)p->x[0];                                   \
        const int64_t *N = (const int64_t *)p->x[1];                         \
        const TY *R = (const TY *)p->x[2];                                   \
        const int64_t *roots = (const int64_t *)p->x[3];                     \
        TY *Y = (TY *)p->y[0];                                               \
        const o2c_int nf = p->k[O2C_TREES_FEATURES], nt = p->k[O2C_TREES_TARGETS]; \
        const o2c_int nn = p->k[O2C_TREES_NODES], ntree = p->k[O2C_TREES_TREES]; \
        const o2c_int agg = p->k[O2C_TREES_AGGREGATE];                       \
        const TY *members = R + nn, *weights = members + p->k[O2C_TREES_MEMBERS]; \
        const int64_t *targets = roots + ntree;                              \
        O2C_FOR(i) {                                                         \
            const TY *x = X + i * nf;                                        \
            TY *y = Y + i * nt;                                              \
            for (o2c_int t = 0; t < nt; t++)                                 \
                y[t] = agg == O2C_TREES_MIN ? O2C_TREES_MAXVAL(TY) : agg == O2C_TREES_MAX ? -O2C_TREES_MAXVAL(TY) : (TY)0; \
            for (o2c_int tr = 0; tr < ntree; tr++) {                         \
                o2c_int at = roots[tr];                                      \
                for (o2c_int step = 0; at >= 0 && step < nn; step++) {      \
                    const int64_t *nd = N + at * O2C_TREE_COLS;              \
                    const TY v = x[nd[O2C_TREE_FEATURE]], s = R[at];         \
                    int go;                                                  \
                    switch (nd[O2C_TREE_MODE]) {                             \
                    case O2C_TREE_LEQ: go = v <= s; break;                   \
                    case O2C_TREE_LT: go = v < s; break;                     \
                    case O2C_TREE_GTE: go = v >= s; break;                   \
                    case O2C_TREE_GT: go = v > s; break;                     \
                    case O2C_TREE_EQ: go = v == s; break;                    \
                    case O2C_TREE_NEQ: go = v != s; break;                   \
                    default:                                                 \
                        go = 0;                                              \
                        for (o2c_int m = 0; m < nd[O2C_TREE_SET_LEN]; m++)   \
                            go |= v == members[nd[O2C_TREE_SET_AT] + m];     \
                        break;                                               \
                    }                                                        \
                    if (v != v && nd[O2C_TREE_MISSING_TRUE]) go = 1;         \
                    at = nd[go ? O2C_TREE_TRUE : O2C_TREE_FALSE];            \
                }                                                            \
                if (at >= 0) continue;   /* unreachable for checked trees */ \
                {                                                            \
                    const o2c_int leaf = -1 - at, t = targets[leaf];         \
                    const TY w = weights[leaf];                              \
                    if (agg == O2C_TREES_MIN) y[t] = w < y[t] ? w : y[t];    \
                    else if (agg == O2C_TREES_MAX) y[t] = w > y[t] ? w : y[t]; \
                    else if (agg == O2C_TREES_AVERAGE) y[t] += w / (TY)ntree; \
                    else y[t] += w;                                          \
                }                                                            \
            }                                                                \
        }                                                                    \
    }
#define O2C_TREES_MAXVAL(TY) ((TY)(sizeof(TY) == 4 ? 3.402823466e38 : 1.7976931348623157e308))

/*@ o2c_binarizer_f32 params O2C_BINARIZER */
O2C_BINARIZER_DEF(o2c_binarizer_f32, float)
/*@ o2c_binarizer_f64 params O2C_BINARIZER */
O2C_BINARIZER_DEF(o2c_binarizer_f64, double)
/*@ o2c_afe_f32 params O2C_AFE */
O2C_AFE_DEF(o2c_afe_f32, float)
/*@ o2c_afe_f64 params O2C_AFE */
O2C_AFE_DEF(o2c_afe_f64, double)
/*@ o2c_afe_i32 params O2C_AFE */
O2C_AFE_DEF(o2c_afe_i32, int32_t)
/*@ o2c_afe_i64 params O2C_AFE */
O2C_AFE_DEF(o2c_afe_i64, int64_t)
/*@ o2c_trees_f32 params O2C_TREES */
O2C_TREES_DEF(o2c_trees_f32, float)
/*@ o2c_trees_f64 params O2C_TREES */
O2C_TREES_DEF(o2c_trees_f64, double)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_ML(K, F)                                                    \
    K(o2c_binarizer_f32, F) K(o2c_binarizer_f64, F) K(o2c_afe_f32, F) K(o2c_afe_f64, F)  \
    K(o2c_afe_i32, F) K(o2c_afe_i64, F) K(o2c_trees_f32, F) K(o2c_trees_f64, F)
