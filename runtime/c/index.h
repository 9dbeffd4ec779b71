/* Indexing kernels (GatherElements, GatherND, ScatterElements, ScatterND,
 * TopK), more normalizations (RMSNormalization, LpNormalization,
 * MeanVarianceNormalization, LRN) and Einsum. See o2c_rt.h for the calling
 * convention. Element sizes and strides are in elements unless noted.
 *
 * Index inputs (int32 or int64, "ies" = their element size 4 or 8) may
 * be runtime data. A negative index is wrapped once (idx + dim); an index
 * still outside [0, dim) is never used to address memory: gathers write
 * zero bytes for it, scatters skip the update.
 *
 * Scatter kernels run after a copy of the data into the output. Their
 * index space is chosen so that no two indices can write the same output
 * element: every index owns a set of output elements and applies the
 * updates that fall into it sequentially, in the order of the updates
 * (so duplicates behave like the ONNX reference: the last one wins, or
 * all are reduced in order). */

/* Scatter reductions: mode 0 none (assign), 1 add, 2 mul, 3 max, 4 min. */
#define O2C_SCATTER_APPLY(T, mode, y, u)                      \
    do {                                                      \
        const T u_ = (u);                                     \
        switch (mode) {                                       \
        case 1: (y) = (T)((y) + u_); break;                   \
        case 2: (y) = (T)((y) * u_); break;                   \
        case 3: if (u_ > (y)) (y) = u_; break;                \
        case 4: if (u_ < (y)) (y) = u_; break;                \
        default: (y) = u_; break;                             \
        }                                                     \
    } while (0)

/* o2c_scatter_elements (bytes, no reduction) / o2c_scatter_elements_T
 * (reductions): Y (already a copy of the data) = ScatterElements(Y, I, U).
 * Index space: the lines of I along axis (I's elements / I's axis size).
 * Line l (coordinates c of I without axis) owns the output line at c along
 * axis: it applies U[c, j] to Y[c with c[axis] = I[c, j]] for j in order.
 * Out-of-range indices are skipped.
 *   x[0] I, x[1] U (shape of I); y[0] Y
 *   O2C_ELEMENTS_* (runtime/c/params/index.h) */
#define O2C_SCATTER_ELEMENTS_BODY(MOVE)                                              \
    const unsigned char *XI = (const unsigned char *)p->x[0];                        \
    const o2c_int ies = p->k[O2C_ELEMENTS_IESIZE], r = p->k[O2C_ELEMENTS_RANK];      \
    const o2c_int ax = p->k[O2C_ELEMENTS_AXIS], n = p->k[O2C_ELEMENTS_AXLEN];        \
    const o2c_int *dims = p->k + O2C_ELEMENTS_DIMS, *ys = p->k + O2C_ELEMENTS_STR;   \
    O2C_FOR(l) {                                                                     \
        o2c_int q = l, yo = 0, io = 0, is = 1, ias = 1;                              \
        for (o2c_int d = r - 1; d >= 0; d--) {                                       \
            if (d == ax) { ias = is; is *= dims[d]; continue; }                      \
            const o2c_int nq = q / dims[d], c = q - nq * dims[d];                    \
            yo += c * ys[d];                                                         \
            io += c * is;                                                            \
            is *= dims[d];                                                           \
            q = nq;                                                                  \
        }                                                                            \
        for (o2c_int j = 0; j < dims[ax]; j++) {                                     \
            const o2c_int src = io + j * ias;                                        \
            const o2c_int v = o2c_ix_wrap(o2c_ix_get(XI, src, ies), n);              \
            if (v < 0) continue;                                                     \
            const o2c_int dst = yo + v * ys[ax];                                     \
            MOVE;                                                                    \
        }                                                                            \
    }

#define O2C_SCATTER_ELEMENTS_T(NAME, TY)                                             \
    O2C_KERNEL(NAME)                                                                 \
    {                                                                                \
        typedef TY T;                                                                \
        const T *U = (const T *)p->x[1];                                             \
        T *Y = (T *)p->y[0];                                                         \
        const o2c_int mode = p->k[O2C_ELEMENTS_MODE];                                \
        O2C_SCATTER_ELEMENTS_BODY(O2C_SCATTER_APPLY(T, mode, Y[dst], U[src]))        \
    }

/* o2c_scatter_nd (bytes, no reduction) / o2c_scatter_nd_T (reductions):
 * Y (already a copy of the data) = ScatterND(Y, I, U). Index space: the S
 * elements of a slice. Index s applies, for every tuple t in order, the
 * update U[t, s] to Y[tuple offset + s]; different s never meet. A tuple
 * with an out-of-range coordinate is skipped.
 *   x[0] I, x[1] U; y[0] Y
 *   O2C_ND_* */
#define O2C_SCATTER_ND_BODY(MOVE)                                                    \
    const unsigned char *XI = (const unsigned char *)p->x[0];                        \
    const o2c_int ies = p->k[O2C_ND_IESIZE], m = p->k[O2C_ND_M], S = p->k[O2C_ND_S]; \
    const o2c_int NT = p->k[O2C_ND_NT];                                              \
    const o2c_int *dims = p->k + O2C_ND_DIMS, *ys = p->k + O2C_ND_STR;               \
    O2C_FOR(s) {                                                                     \
        for (o2c_int t = 0; t < NT; t++) {                                           \
            o2c_int off = s;                                                         \
            int bad = 0;                                                             \
            for (o2c_int j = 0; j < m; j++) {                                        \
                const o2c_int v = o2c_ix_wrap(o2c_ix_get(XI, t * m + j, ies), dims[j]); \
                if (v < 0) { bad = 1; break; }                                       \
                off += v * ys[j];                                                    \
            }                                                                        \
            if (bad) continue;                                                       \
            const o2c_int src = t * S + s, dst = off;                                \
            MOVE;                                                                    \
        }                                                                            \
    }

#define O2C_SCATTER_ND_T(NAME, TY)                                                   \
    O2C_KERNEL(NAME)                                                                 \
    {                                                                                \
        typedef TY T;                                                                \
        const T *U = (const T *)p->x[1];                                             \
        T *Y = (T *)p->y[0];                                                         \
        const o2c_int mode = p->k[O2C_ND_MODE];                                      \
        O2C_SCATTER_ND_BODY(O2C_SCATTER_APPLY(T, mode, Y[dst], U[src]))              \
    }

/* o2c_topk_T: TopK. Index space: the rows (outer x inner positions); each
 * keeps its best K elements in its output row, sorted (insertion; a new
 * element goes behind the equal ones, so ties keep the lower index first).
 * NaN counts as larger than every number (as numpy's sort orders it).
 *   x[0] X, x[1] K (int64 scalar; NULL: O2C_TOPK_K) read at run time, checked
 *   to lie in [0, A]: the rows are then written densely; y[0] values (T), y[1] indices (int64)
 *   O2C_TOPK_* */
#define O2C_TOPK(NAME, TY, ISNAN)                                                    \
    O2C_KERNEL(NAME)                                                                 \
    {                                                                                \
        typedef TY T;                                                                \
        const T *X = (const T *)p->x[0];                                             \
        T *V = (T *)p->y[0];                                                         \
        int64_t *IX = (int64_t *)p->y[1];                                            \
        const o2c_int A = p->k[O2C_TOPK_A], inner = p->k[O2C_TOPK_INNER];            \
        const int64_t K = p->x[1] ? *(const int64_t *)p->x[1] : p->k[O2C_TOPK_K];  \
        const o2c_int lg = p->k[O2C_TOPK_LARGEST];                                   \
        O2C_FOR(i) {                                                                 \
            const o2c_int o = i / inner, in = i - o * inner;                         \
            const T *x = X + o * A * inner + in;                                     \
            T *v = V + o * K * inner + in;                                           \
            int64_t *ix = IX + o * K * inner + in;                                   \
            o2c_int cnt = 0;                                                         \
            for (o2c_int j = 0; j < A; j++) {                                        \
                const T a = x[j * inner];                                            \
                o2c_int pos = cnt < K ? cnt : K;                                     \
                while (pos > 0) {                                                    \
                    const T b = v[(pos - 1) * inner];                                \
                    const int better = lg ? (a > b || (ISNAN(a) && !ISNAN(b)))       \
                                          : (a < b || (!ISNAN(a) && ISNAN(b)));      \
                    if (!better) break;                                              \
                    if (pos < K) {                                                   \
                        v[pos * inner] = b;                                          \
                        ix[pos * inner] = ix[(pos - 1) * inner];                     \
                    }                                                                \
                    pos--;                                                           \
                }                                                                    \
                if (pos < K) {                                                       \
                    v[pos * inner] = a;                                              \
                    ix[pos * inner] = j;                                             \
                    if (cnt < K) cnt++;                                              \
                }                                                                    \
            }                                                                        \
        }                                                                            \
    }
#define O2C_ISNAN_F(a) ((a) != (a))
#define O2C_ISNAN_I(a) 0

/* o2c_normgroup_T: MeanVarianceNormalization, LpNormalization,
 * RMSNormalization. Index space: the groups (the positions of the kept
 * axes); each group runs over its N elements (the normalized axes) twice,
 * statistics in double.
 *   mode 0 MVN: y = (x - mean) / (sqrt(var) + eps)   (var: biased)
 *   mode 1 L1:  y = x / sum |x|      mode 2 L2: y = x / sqrt(sum x^2)
 *               (a zero norm gives y = 0, as the spec says)
 *   mode 3 RMS: y = x / sqrt(mean x^2 + eps) * scale
 *   x[0] X, x[1] scale (mode 3); y[0] Y (X's layout)
 *   O2C_NORMGROUP_* */
#define O2C_NORMGROUP(NAME, TY)                                                      \
    O2C_KERNEL(NAME)                                                                 \
    {                                                                                \
        typedef TY T;                                                                \
        const T *X = (const T *)p->x[0], *W = (const T *)p->x[1];                    \
        T *Y = (T *)p->y[0];                                                         \
        const o2c_int mode = p->k[O2C_NORMGROUP_MODE], ro = p->k[O2C_NORMGROUP_RO];  \
        const o2c_int ri = p->k[O2C_NORMGROUP_RI], N = p->k[O2C_NORMGROUP_N];        \
        const T eps = O2C_PF(TY, p, O2C_NORMGROUP_F_EPS);                            \
        O2C_FOR(i) {                                                                 \
            const o2c_int base = o2c_offset(i, ro, p->k + O2C_NORMGROUP_ODIMS, p->k + O2C_NORMGROUP_OSTR); \
            T s1 = 0, s2 = 0;                                                   \
            o2c_int j;                                                               \
            for (j = 0; j < N; j++) {                                                \
                const T x = (T)X[base + o2c_offset(j, ri, p->k + O2C_NORMGROUP_IDIMS, p->k + O2C_NORMGROUP_ISTR)]; \
                s1 += mode == 1 ? O2C_M(TY, fabs)(x) : x;                                       \
                s2 += x * x;                                                         \
            }                                                                        \
            T sub = 0, mul = 1;                                                 \
            if (mode == 0) {                                                         \
                const T mean = s1 / (T)N;                                  \
                T var = 0;                                                      \
                for (j = 0; j < N; j++) {                                            \
                    const T d = (T)X[base + o2c_offset(j, ri, p->k + O2C_NORMGROUP_IDIMS, p->k + O2C_NORMGROUP_ISTR)] - mean; \
                    var += d * d;                                                    \
                }                                                                    \
                sub = mean;                                                          \
                mul = 1 / (O2C_M(TY, sqrt)(var / (T)N) + eps);                             \
            } else if (mode == 1) {                                                  \
                mul = s1 == 0 ? 0 : 1 / s1;   /* a zero norm gives 0 (the spec) */  \
            } else if (mode == 2) {                                                  \
                mul = s2 == 0 ? 0 : 1 / O2C_M(TY, sqrt)(s2);                         \
            } else {                                                                 \
                mul = 1 / O2C_M(TY, sqrt)(s2 / (T)N + eps);                                \
            }                                                                        \
            for (j = 0; j < N; j++) {                                                \
                const o2c_int o = base + o2c_offset(j, ri, p->k + O2C_NORMGROUP_IDIMS, p->k + O2C_NORMGROUP_ISTR); \
                T y = ((T)X[o] - sub) * mul;                               \
                if (mode == 3) y *= (T)W[o2c_offset(j, ri, p->k + O2C_NORMGROUP_IDIMS, p->k + O2C_NORMGROUP_SSTR)]; \
                Y[o] = (T)y;                                                         \
            }                                                                        \
        }                                                                            \
    }

/* o2c_lrn_T: LRN. Index space: the elements of X (N x C x inner).
 *   y = x / (bias + alpha / size * sum of x^2 over the channels
 *            c - floor((size-1)/2) .. c + ceil((size-1)/2)) ^ beta
 *   O2C_LRN_* */
#define O2C_LRN(NAME, TY)                                                            \
    O2C_KERNEL(NAME)                                                                 \
    {                                                                                \
        typedef TY T;                                                                \
        const T *X = (const T *)p->x[0];                                             \
        T *Y = (T *)p->y[0];                                                         \
        const o2c_int C = p->k[O2C_LRN_C], inner = p->k[O2C_LRN_INNER], size = p->k[O2C_LRN_SIZE]; \
        const o2c_int lo = (size - 1) / 2, hi = size / 2;                            \
        O2C_FOR(i) {                                                                 \
            const o2c_int c = (i / inner) % C, base = i - c * inner;                 \
            const o2c_int c0 = c - lo < 0 ? 0 : c - lo, c1 = c + hi > C - 1 ? C - 1 : c + hi; \
            T s = 0;                                                            \
            for (o2c_int cc = c0; cc <= c1; cc++) {                                  \
                const T x = (T)X[base + cc * inner];                       \
                s += x * x;                                                          \
            }                                                                        \
            Y[i] = (T)((T)X[i] / O2C_M(TY, pow)(O2C_PF(TY, p, O2C_LRN_F_BIAS) + O2C_PF(TY, p, O2C_LRN_F_ALPHA) / (T)size * s, O2C_PF(TY, p, O2C_LRN_F_BETA))); \
        }                                                                            \
    }

/* o2c_einsum_T: Einsum with nin <= 4 operands. Index space: the output
 * elements. Every label is an output label (no of them, output order) or a
 * summed label (ns); each operand has a stride per label (the sum of its
 * axes' strides for a repeated label, 0 when it lacks the label or the
 * axis broadcasts). Y[o] = sum over the summed labels of the product of
 * the operands. Products accumulate in double (ints: int64).
 *   x[0..nin) the operands; y[0] Y
 *   O2C_EINSUM_* (no + ns <= 16) */
#define O2C_EINSUM(NAME, TY, ACC)                                                    \
    O2C_KERNEL(NAME)                                                                 \
    {                                                                                \
        typedef TY T;                                                                \
        T *Y = (T *)p->y[0];                                                         \
        const o2c_int nin = p->k[O2C_EINSUM_NIN], no = p->k[O2C_EINSUM_NO];          \
        const o2c_int ns = p->k[O2C_EINSUM_NS], nl = no + ns;                        \
        const o2c_int *od = p->k + O2C_EINSUM_DIMS, *sd = p->k + O2C_EINSUM_DIMS + no; \
        o2c_int total = 1;                                                           \
        for (o2c_int d = 0; d < ns; d++) total *= sd[d];                             \
        O2C_FOR(i) {                                                                 \
            o2c_int off[4] = {0, 0, 0, 0}, cnt[16];                                  \
            o2c_int q = i, t, d;                                                     \
            for (d = no - 1; d >= 0; d--) {                                          \
                const o2c_int nq = q / od[d], c = q - nq * od[d];                    \
                for (t = 0; t < nin; t++) off[t] += c * p->k[O2C_EINSUM_STR_AT(nl, t) + d]; \
                q = nq;                                                              \
            }                                                                        \
            for (d = 0; d < ns; d++) cnt[d] = 0;                                     \
            ACC acc = 0;                                                             \
            for (o2c_int s = 0; s < total; s++) {                                    \
                ACC prod = 1;                                                        \
                for (t = 0; t < nin; t++) prod *= (ACC)((const T *)p->x[t])[off[t]]; \
                acc += prod;                                                         \
                for (d = ns - 1; d >= 0; d--) {                                      \
                    for (t = 0; t < nin; t++) off[t] += p->k[O2C_EINSUM_STR_AT(nl, t) + no + d]; \
                    if (++cnt[d] < sd[d]) break;                                     \
                    for (t = 0; t < nin; t++) off[t] -= sd[d] * p->k[O2C_EINSUM_STR_AT(nl, t) + no + d]; \
                    cnt[d] = 0;                                                      \
                }                                                                    \
            }                                                                        \
            Y[i] = (T)acc;                                                           \
        }                                                                            \
    }

/*@ o2c_ix_wrap */
/* A possibly negative index into an axis of size n: the element position,
 * or -1 when it is out of range. */
O2C_HD static inline o2c_int o2c_ix_wrap(o2c_int v, o2c_int n)
{
    if (v < 0) v += n;
    return v < 0 || v >= n ? -1 : v;
}

/*@ o2c_gather_elements needs o2c_mv_elem o2c_ix_get o2c_ix_wrap params O2C_ELEMENTS */
/* o2c_gather_elements: Y = GatherElements(X, I, axis). Index space: the
 * output elements (shape of I). Output coordinate c reads X at c with
 * c[axis] replaced by I[c]; an out-of-range index gives zero bytes.
 *   x[0] X, x[1] I; y[0] Y
 *   O2C_ELEMENTS_* */
O2C_KERNEL(o2c_gather_elements)
{
    const unsigned char *X = (const unsigned char *)p->x[0];
    const unsigned char *XI = (const unsigned char *)p->x[1];
    unsigned char *Y = (unsigned char *)p->y[0];
    const o2c_int es = p->k[O2C_ELEMENTS_ESIZE], ies = p->k[O2C_ELEMENTS_IESIZE];
    const o2c_int r = p->k[O2C_ELEMENTS_RANK], ax = p->k[O2C_ELEMENTS_AXIS];
    const o2c_int n = p->k[O2C_ELEMENTS_AXLEN];
    const o2c_int *dims = p->k + O2C_ELEMENTS_DIMS, *xs = p->k + O2C_ELEMENTS_STR;
    O2C_FOR(i) {
        o2c_int q = i, off = 0;
        for (o2c_int d = r - 1; d >= 0; d--) {
            const o2c_int nq = q / dims[d];
            if (d != ax) off += (q - nq * dims[d]) * xs[d];
            q = nq;
        }
        const o2c_int v = o2c_ix_wrap(o2c_ix_get(XI, i, ies), n);
        if (v < 0) {
            for (o2c_int b = 0; b < es; b++) Y[i * es + b] = 0;
        } else {
            o2c_mv_elem(Y + i * es, X + (off + v * xs[ax]) * es, es);
        }
    }
}

/*@ o2c_gather_nd needs o2c_mv_elem o2c_ix_get o2c_ix_wrap params O2C_ND O2C_ND_BATCH */
/* o2c_gather_nd: Y = GatherND(X, I, batch_dims b). Index space: the output
 * elements, seen as (tuple t, slice element s): tuple t (over I's dims but
 * the last) names m coordinates of X after the batch axes; s runs over the
 * S elements of the slice of X they select. A tuple with an out-of-range
 * coordinate gives a slice of zero bytes.
 *   x[0] X, x[1] I; y[0] Y
 *   O2C_ND_* */
O2C_KERNEL(o2c_gather_nd)
{
    const unsigned char *X = (const unsigned char *)p->x[0];
    const unsigned char *XI = (const unsigned char *)p->x[1];
    unsigned char *Y = (unsigned char *)p->y[0];
    const o2c_int es = p->k[O2C_ND_ESIZE], ies = p->k[O2C_ND_IESIZE];
    const o2c_int m = p->k[O2C_ND_M], S = p->k[O2C_ND_S], G = p->k[O2C_ND_NT];
    const o2c_int BS = p->k[O2C_ND_BATCH];
    const o2c_int *dims = p->k + O2C_ND_DIMS, *xs = p->k + O2C_ND_STR;
    O2C_FOR(i) {
        const o2c_int t = i / S, s = i - t * S;
        o2c_int off = (t / G) * BS + s;
        int bad = 0;
        for (o2c_int j = 0; j < m; j++) {
            const o2c_int v = o2c_ix_wrap(o2c_ix_get(XI, t * m + j, ies), dims[j]);
            if (v < 0) { bad = 1; break; }
            off += v * xs[j];
        }
        if (bad) {
            for (o2c_int b = 0; b < es; b++) Y[i * es + b] = 0;
        } else {
            o2c_mv_elem(Y + i * es, X + off * es, es);
        }
    }
}

/*@ o2c_scatter_elements needs o2c_mv_elem o2c_ix_get o2c_ix_wrap params O2C_ELEMENTS */
O2C_KERNEL(o2c_scatter_elements)
{
    const unsigned char *U = (const unsigned char *)p->x[1];
    unsigned char *Y = (unsigned char *)p->y[0];
    const o2c_int es = p->k[O2C_ELEMENTS_ESIZE];
    O2C_SCATTER_ELEMENTS_BODY(o2c_mv_elem(Y + dst * es, U + src * es, es))
}

/*@ o2c_scatter_nd needs o2c_mv_elem o2c_ix_get o2c_ix_wrap params O2C_ND */
O2C_KERNEL(o2c_scatter_nd)
{
    const unsigned char *U = (const unsigned char *)p->x[1];
    unsigned char *Y = (unsigned char *)p->y[0];
    const o2c_int es = p->k[O2C_ND_ESIZE];
    O2C_SCATTER_ND_BODY(o2c_mv_elem(Y + dst * es, U + src * es, es))
}

/*@ o2c_tensor_scatter needs o2c_mv_elem params O2C_TSCATTER */
/* o2c_tensor_scatter: Y (already a copy of the cache) = TensorScatter.
 * Index space: the update elements, seen as (outer o, sequence s, inner);
 * element goes to Y[o, pos, inner] with pos = W[batch] + s (linear: skipped
 * when outside [0, max); circular: modulo max). Distinct s give distinct pos
 * (the update is no longer than the cache axis), so no two indices write
 * the same element.
 *   x[0] update, x[1] write_indices (int64, one per batch; NULL: all 0);
 *   y[0] Y
 *   O2C_TSCATTER_* */
O2C_KERNEL(o2c_tensor_scatter)
{
    const unsigned char *U = (const unsigned char *)p->x[0];
    const int64_t *W = (const int64_t *)p->x[1];
    unsigned char *Y = (unsigned char *)p->y[0];
    const o2c_int es = p->k[O2C_TSCATTER_ESIZE], mode = p->k[O2C_TSCATTER_MODE];
    const o2c_int L = p->k[O2C_TSCATTER_LEN], inner = p->k[O2C_TSCATTER_INNER];
    const o2c_int M = p->k[O2C_TSCATTER_MAX], per = p->k[O2C_TSCATTER_PER];
    O2C_FOR(i) {
        const o2c_int in = i % inner, t = i / inner, s = t % L, o = t / L;
        o2c_int pos = (W ? W[i / per] : 0) + s;
        if (mode == 1) {
            pos %= M;
            if (pos < 0) pos += M;
        } else if (pos < 0 || pos >= M) {
            continue;
        }
        o2c_mv_elem(Y + ((o * M + pos) * inner + in) * es, U + i * es, es);
    }
}

/*@ o2c_scatter_elements_f32 needs o2c_ix_get o2c_ix_wrap params O2C_ELEMENTS */
O2C_SCATTER_ELEMENTS_T(o2c_scatter_elements_f32, float)
/*@ o2c_scatter_elements_f64 needs o2c_ix_get o2c_ix_wrap params O2C_ELEMENTS */
O2C_SCATTER_ELEMENTS_T(o2c_scatter_elements_f64, double)
/*@ o2c_scatter_elements_i8 needs o2c_ix_get o2c_ix_wrap params O2C_ELEMENTS */
O2C_SCATTER_ELEMENTS_T(o2c_scatter_elements_i8, int8_t)
/*@ o2c_scatter_elements_i16 needs o2c_ix_get o2c_ix_wrap params O2C_ELEMENTS */
O2C_SCATTER_ELEMENTS_T(o2c_scatter_elements_i16, int16_t)
/*@ o2c_scatter_elements_i32 needs o2c_ix_get o2c_ix_wrap params O2C_ELEMENTS */
O2C_SCATTER_ELEMENTS_T(o2c_scatter_elements_i32, int32_t)
/*@ o2c_scatter_elements_i64 needs o2c_ix_get o2c_ix_wrap params O2C_ELEMENTS */
O2C_SCATTER_ELEMENTS_T(o2c_scatter_elements_i64, int64_t)
/*@ o2c_scatter_elements_u8 needs o2c_ix_get o2c_ix_wrap params O2C_ELEMENTS */
O2C_SCATTER_ELEMENTS_T(o2c_scatter_elements_u8, uint8_t)
/*@ o2c_scatter_elements_u16 needs o2c_ix_get o2c_ix_wrap params O2C_ELEMENTS */
O2C_SCATTER_ELEMENTS_T(o2c_scatter_elements_u16, uint16_t)
/*@ o2c_scatter_elements_u32 needs o2c_ix_get o2c_ix_wrap params O2C_ELEMENTS */
O2C_SCATTER_ELEMENTS_T(o2c_scatter_elements_u32, uint32_t)
/*@ o2c_scatter_elements_u64 needs o2c_ix_get o2c_ix_wrap params O2C_ELEMENTS */
O2C_SCATTER_ELEMENTS_T(o2c_scatter_elements_u64, uint64_t)
/*@ o2c_scatter_nd_f32 needs o2c_ix_get o2c_ix_wrap params O2C_ND */
O2C_SCATTER_ND_T(o2c_scatter_nd_f32, float)
/*@ o2c_scatter_nd_f64 needs o2c_ix_get o2c_ix_wrap params O2C_ND */
O2C_SCATTER_ND_T(o2c_scatter_nd_f64, double)
/*@ o2c_scatter_nd_i8 needs o2c_ix_get o2c_ix_wrap params O2C_ND */
O2C_SCATTER_ND_T(o2c_scatter_nd_i8, int8_t)
/*@ o2c_scatter_nd_i16 needs o2c_ix_get o2c_ix_wrap params O2C_ND */
O2C_SCATTER_ND_T(o2c_scatter_nd_i16, int16_t)
/*@ o2c_scatter_nd_i32 needs o2c_ix_get o2c_ix_wrap params O2C_ND */
O2C_SCATTER_ND_T(o2c_scatter_nd_i32, int32_t)
/*@ o2c_scatter_nd_i64 needs o2c_ix_get o2c_ix_wrap params O2C_ND */
O2C_SCATTER_ND_T(o2c_scatter_nd_i64, int64_t)
/*@ o2c_scatter_nd_u8 needs o2c_ix_get o2c_ix_wrap params O2C_ND */
O2C_SCATTER_ND_T(o2c_scatter_nd_u8, uint8_t)
/*@ o2c_scatter_nd_u16 needs o2c_ix_get o2c_ix_wrap params O2C_ND */
O2C_SCATTER_ND_T(o2c_scatter_nd_u16, uint16_t)
/*@ o2c_scatter_nd_u32 needs o2c_ix_get o2c_ix_wrap params O2C_ND */
O2C_SCATTER_ND_T(o2c_scatter_nd_u32, uint32_t)
/*@ o2c_scatter_nd_u64 needs o2c_ix_get o2c_ix_wrap params O2C_ND */
O2C_SCATTER_ND_T(o2c_scatter_nd_u64, uint64_t)
/*@ o2c_topk_f32 params O2C_TOPK */
O2C_TOPK(o2c_topk_f32, float, O2C_ISNAN_F)
/*@ o2c_topk_f64 params O2C_TOPK */
O2C_TOPK(o2c_topk_f64, double, O2C_ISNAN_F)
/*@ o2c_topk_i8 params O2C_TOPK */
O2C_TOPK(o2c_topk_i8, int8_t, O2C_ISNAN_I)
/*@ o2c_topk_i16 params O2C_TOPK */
O2C_TOPK(o2c_topk_i16, int16_t, O2C_ISNAN_I)
/*@ o2c_topk_i32 params O2C_TOPK */
O2C_TOPK(o2c_topk_i32, int32_t, O2C_ISNAN_I)
/*@ o2c_topk_i64 params O2C_TOPK */
O2C_TOPK(o2c_topk_i64, int64_t, O2C_ISNAN_I)
/*@ o2c_topk_u8 params O2C_TOPK */
O2C_TOPK(o2c_topk_u8, uint8_t, O2C_ISNAN_I)
/*@ o2c_topk_u16 params O2C_TOPK */
O2C_TOPK(o2c_topk_u16, uint16_t, O2C_ISNAN_I)
/*@ o2c_topk_u32 params O2C_TOPK */
O2C_TOPK(o2c_topk_u32, uint32_t, O2C_ISNAN_I)
/*@ o2c_topk_u64 params O2C_TOPK */
O2C_TOPK(o2c_topk_u64, uint64_t, O2C_ISNAN_I)
/*@ o2c_normgroup_f32 needs o2c_offset params O2C_NORMGROUP */
O2C_NORMGROUP(o2c_normgroup_f32, float)
/*@ o2c_normgroup_f64 needs o2c_offset params O2C_NORMGROUP */
O2C_NORMGROUP(o2c_normgroup_f64, double)
/*@ o2c_lrn_f32 params O2C_LRN */
O2C_LRN(o2c_lrn_f32, float)
/*@ o2c_lrn_f64 params O2C_LRN */
O2C_LRN(o2c_lrn_f64, double)
/*@ o2c_einsum_f32 params O2C_EINSUM */
O2C_EINSUM(o2c_einsum_f32, float, float)
/*@ o2c_einsum_f64 params O2C_EINSUM */
O2C_EINSUM(o2c_einsum_f64, double, double)
/*@ o2c_einsum_i32 params O2C_EINSUM */
O2C_EINSUM(o2c_einsum_i32, int32_t, int64_t)
/*@ o2c_einsum_i64 params O2C_EINSUM */
O2C_EINSUM(o2c_einsum_i64, int64_t, int64_t)

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_INDEX(K, F) \
    K(o2c_gather_elements, F) K(o2c_gather_nd, F) K(o2c_scatter_elements, F) K(o2c_scatter_nd, F) K(o2c_tensor_scatter, F) \
    K(o2c_scatter_elements_f32, F) K(o2c_scatter_elements_f64, F) K(o2c_scatter_elements_i8, F) \
    K(o2c_scatter_elements_i16, F) K(o2c_scatter_elements_i32, F) K(o2c_scatter_elements_i64, F) \
    K(o2c_scatter_elements_u8, F) K(o2c_scatter_elements_u16, F) K(o2c_scatter_elements_u32, F) \
    K(o2c_scatter_elements_u64, F) \
    K(o2c_scatter_nd_f32, F) K(o2c_scatter_nd_f64, F) K(o2c_scatter_nd_i8, F) K(o2c_scatter_nd_i16, F) \
    K(o2c_scatter_nd_i32, F) K(o2c_scatter_nd_i64, F) K(o2c_scatter_nd_u8, F) K(o2c_scatter_nd_u16, F) \
    K(o2c_scatter_nd_u32, F) K(o2c_scatter_nd_u64, F) \
    K(o2c_topk_f32, F) K(o2c_topk_f64, F) K(o2c_topk_i8, F) K(o2c_topk_i16, F) K(o2c_topk_i32, F) \
    K(o2c_topk_i64, F) K(o2c_topk_u8, F) K(o2c_topk_u16, F) K(o2c_topk_u32, F) K(o2c_topk_u64, F) \
    K(o2c_normgroup_f32, F) K(o2c_normgroup_f64, F) K(o2c_lrn_f32, F) K(o2c_lrn_f64, F) \
    K(o2c_einsum_f32, F) K(o2c_einsum_f64, F) K(o2c_einsum_i32, F) K(o2c_einsum_i64, F)
