/* Data movement kernels: they move bytes and do not care about the element
 * type beyond its size. Index space: see each kernel. */

/*@ o2c_copy */
/* o2c_copy: y = x, byte by byte. Index space: bytes. */
O2C_KERNEL(o2c_copy)
{
    const unsigned char *X = (const unsigned char *)p->x[0];
    unsigned char *Y = (unsigned char *)p->y[0];
    O2C_FOR(i) Y[i] = X[i];
}

/*@ o2c_fill params O2C_FILL */
/* o2c_fill: y[i] = the O2C_FILL_ESIZE-byte element x[0]. Index space:
 * elements. */
O2C_KERNEL(o2c_fill)
{
    unsigned char *Y = (unsigned char *)p->y[0];
    const o2c_int es = p->k[O2C_FILL_ESIZE];
    const unsigned char *v = (const unsigned char *)p->x[0];
    O2C_FOR(i) memcpy(Y + i * es, v, (size_t)es);
}

/*@ o2c_mv_elem */
/* Copies one element of es bytes (constant sizes for the common cases so
 * that the compiler turns them into plain loads and stores). */
O2C_HD static inline O2C_INLINE void o2c_mv_elem(unsigned char *d, const unsigned char *s, o2c_int es)
{
    switch (es) {
    case 1: *d = *s; break;
    case 2: memcpy(d, s, 2); break;
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    default: memcpy(d, s, (size_t)es); break;
    }
}

/*@ o2c_strided needs o2c_mv_elem params O2C_STRIDED split */
#define O2C_STRIDED_SHORT_RUN 16   /* last axes shorter than this: two axes a step */
/* o2c_strided: a strided copy, the kernel behind Transpose, Slice, Concat,
 * Split, Expand, DepthToSpace and SpaceToDepth. Index space: the elements
 * of a box; parameters O2C_STRIDED_* (runtime/c/params/movement.h). */
O2C_KERNEL(o2c_strided)
{
    const unsigned char *X = (const unsigned char *)p->x[0];
    unsigned char *Y = (unsigned char *)p->y[0];
    const o2c_int es = p->k[O2C_STRIDED_ESIZE], r = p->k[O2C_STRIDED_RANK];
    const o2c_int *dims = p->k + O2C_STRIDED_DIMS, *xs = p->k + O2C_STRIDED_XSTR;
    const o2c_int *ys = p->k + O2C_STRIDED_YSTR;
    /* a run along the last axis at a time: the offsets computed once a run
     * (divisions), then stepped by the last strides (a plain loop, a
     * vector copy where both are 1) */
    const o2c_int D = r > 0 ? dims[r - 1] : 1, sx = r > 0 ? xs[r - 1] : 0, sy = r > 0 ? ys[r - 1] : 0;
    /* short runs (a pixel shuffle's last axis of 3): the last two axes at a time */
    const o2c_int D2 = r > 1 && D < O2C_STRIDED_SHORT_RUN ? dims[r - 2] : 1;
    const o2c_int sx2 = r > 1 ? xs[r - 2] : 0, sy2 = r > 1 ? ys[r - 2] : 0;
    for (o2c_int i = i0; i < i1;) {
        o2c_int q = i, xo = p->k[O2C_STRIDED_XBASE], yo = p->k[O2C_STRIDED_YBASE];
        for (o2c_int d = r - 1; d >= 0; d--) {
            const o2c_int nq = q / dims[d], c = q - nq * dims[d];
            xo += c * xs[d];
            yo += c * ys[d];
            q = nq;
        }
        if (D2 > 1 && i % (D * D2) == 0 && i + D * D2 <= i1) {
            for (o2c_int a = 0; a < D2; a++)
                for (o2c_int j = 0; j < D; j++)
                    o2c_mv_elem(Y + (yo + a * sy2 + j * sy) * es, X + (xo + a * sx2 + j * sx) * es, es);
            i += D * D2;
            continue;
        }
        o2c_int n = D - i % D;
        if (n > i1 - i) n = i1 - i;
        for (o2c_int j = 0; j < n; j++) o2c_mv_elem(Y + (yo + j * sy) * es, X + (xo + j * sx) * es, es);
        i += n;
    }
}

/*@ o2c_tile needs o2c_mv_elem params O2C_TILE split */
/* o2c_tile: Y = Tile(X). Index space: output elements; output coordinate
 * c reads X at c mod xdims (X contiguous).
 *   O2C_TILE_* */
O2C_KERNEL(o2c_tile)
{
    const unsigned char *X = (const unsigned char *)p->x[0];
    unsigned char *Y = (unsigned char *)p->y[0];
    const o2c_int es = p->k[O2C_TILE_ESIZE], r = p->k[O2C_TILE_RANK];
    const o2c_int *yd = p->k + O2C_TILE_YDIMS, *xd = p->k + O2C_TILE_XDIMS;
    O2C_FOR(i) {
        o2c_int q = i, xo = 0, xs = 1;
        for (o2c_int d = r - 1; d >= 0; d--) {
            const o2c_int nq = q / yd[d], c = q - nq * yd[d];
            xo += (c % xd[d]) * xs;
            xs *= xd[d];
            q = nq;
        }
        o2c_mv_elem(Y + i * es, X + xo * es, es);
    }
}

/*@ o2c_pad needs o2c_mv_elem params O2C_PAD split */
/* o2c_pad: Y = Pad(X). Index space: output elements. Output coordinate c
 * maps to input coordinate c - begin (begin < 0 crops); outside the input:
 * mode 0 constant (the one element x[1]), 1 edge (clamp), 2 reflect
 * (mirror without repeating the border), 3 wrap (periodic).
 *   O2C_PAD_* */
O2C_KERNEL(o2c_pad)
{
    const unsigned char *X = (const unsigned char *)p->x[0];
    const unsigned char *V = (const unsigned char *)p->x[1];
    unsigned char *Y = (unsigned char *)p->y[0];
    const o2c_int es = p->k[O2C_PAD_ESIZE], r = p->k[O2C_PAD_RANK], mode = p->k[O2C_PAD_MODE];
    const o2c_int *yd = p->k + O2C_PAD_YDIMS, *xd = p->k + O2C_PAD_XDIMS;
    const o2c_int *pb = p->k + O2C_PAD_BEGIN;
    O2C_FOR(i) {
        o2c_int q = i, xo = 0, xs = 1;
        int outside = 0;
        for (o2c_int d = r - 1; d >= 0; d--) {
            const o2c_int nq = q / yd[d], n = xd[d];
            o2c_int c = q - nq * yd[d] - pb[d];
            q = nq;
            if (c < 0 || c >= n) {
                if (mode == 0 || n == 0) { outside = 1; break; }
                if (mode == 1) c = c < 0 ? 0 : n - 1;
                else if (mode == 2) {
                    const o2c_int per = 2 * (n - 1);
                    if (per == 0) c = 0;
                    else {
                        c %= per;
                        if (c < 0) c += per;
                        if (c >= n) c = per - c;
                    }
                } else {
                    c %= n;
                    if (c < 0) c += n;
                }
            }
            xo += c * xs;
            xs *= n;
        }
        o2c_mv_elem(Y + i * es, outside ? V : X + xo * es, es);
    }
}

/*@ o2c_gather needs o2c_mv_elem o2c_ix_get params O2C_GATHER split */
/* o2c_gather: Y = Gather(X, I, axis). Index space: output elements, seen as
 * (outer, j, inner) with j over the indices. Negative indices count from
 * the end; an index still out of range gives zero bytes (never a read
 * outside X).
 *   O2C_GATHER_* */
O2C_KERNEL(o2c_gather)
{
    const unsigned char *X = (const unsigned char *)p->x[0];
    const unsigned char *XI = (const unsigned char *)p->x[1];
    unsigned char *Y = (unsigned char *)p->y[0];
    const o2c_int es = p->k[O2C_GATHER_ESIZE], inner = p->k[O2C_GATHER_INNER];
    const o2c_int ni = p->k[O2C_GATHER_NIDX], ax = p->k[O2C_GATHER_AXIS];
    const o2c_int ies = p->k[O2C_GATHER_IESIZE];
    O2C_FOR(i) {
        const o2c_int in = i % inner, t = i / inner, j = t % ni, outer = t / ni;
        o2c_int idx = o2c_ix_get(XI, j, ies);
        if (idx < 0) idx += ax;
        if (idx < 0 || idx >= ax) {
            for (o2c_int b = 0; b < es; b++) Y[i * es + b] = 0;
        } else {
            o2c_mv_elem(Y + i * es, X + ((outer * ax + idx) * inner + in) * es, es);
        }
    }
}

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_MOVEMENT(K, F) K(o2c_copy, F) K(o2c_fill, F) K(o2c_strided, F) K(o2c_tile, F) K(o2c_pad, F) K(o2c_gather, F)
