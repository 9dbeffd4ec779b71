/* Data movement: Transpose, Concat, Split, Slice, Gather, Pad, Expand,
 * Tile, DepthToSpace, SpaceToDepth. These ops move elements without
 * looking at them, so every kernel works on element sizes (any type).
 * Most of them are one strided copy (o2c_strided in runtime/c/movement.h):
 * a box of elements read with one set of strides and written with another.
 * Inputs that decide shapes (Slice's starts, Pad's pads, Split's sizes,
 * Expand's and Tile's shapes) must be constant. */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/movement.h"

/* ---- helpers ----------------------------------------------------------- */

static void contiguous_strides(int rank, const int64_t *dims, int64_t *s)
{
    int64_t m = 1;
    for (int d = rank - 1; d >= 0; d--) {
        s[d] = m;
        m *= dims[d];
    }
}

/* One o2c_strided call: for every coordinate c of the box dims[0..rank),
 * y[ybase + c.ys] = x[xbase + c.xs]. Size-1 axes are dropped and axes
 * that are contiguous in both x and y are merged, so the kernel does as
 * few divisions as it can. An empty box makes no call. */
static void strided_call(Lowering *L, Tensor *x, Tensor *y, int rank, const int64_t *dims, int64_t xbase,
                         const int64_t *xs, int64_t ybase, const int64_t *ys)
{
    int64_t d2[MAX_RANK], x2[MAX_RANK], y2[MAX_RANK], count = 1;
    int r = 0;
    for (int d = 0; d < rank; d++) {
        count *= dims[d];
        if (dims[d] == 1) continue;
        if (r > 0 && x2[r - 1] == xs[d] * dims[d] && y2[r - 1] == ys[d] * dims[d]) {
            d2[r - 1] *= dims[d];
            x2[r - 1] = xs[d];
            y2[r - 1] = ys[d];
            continue;
        }
        d2[r] = dims[d];
        x2[r] = xs[d];
        y2[r] = ys[d];
        r++;
    }
    if (count == 0) return;
    KCall *c = lower_call(L, "o2c_strided", count);
    c->x[0] = x;
    c->y[0] = y;
    c->k[O2C_STRIDED_ESIZE] = (int64_t)dtype_size(x->dtype);
    c->k[O2C_STRIDED_RANK] = r;
    c->k[O2C_STRIDED_XBASE] = xbase;
    c->k[O2C_STRIDED_YBASE] = ybase;
    for (int d = 0; d < r; d++) {
        c->k[O2C_STRIDED_DIMS + d] = d2[d];
        c->k[O2C_STRIDED_XSTR + d] = x2[d];
        c->k[O2C_STRIDED_YSTR + d] = y2[d];
    }
}

/* y (contiguous, dims of the box) = x read with strides xs from xbase */
static void gather_box(Lowering *L, Tensor *x, Tensor *y, int rank, const int64_t *dims, int64_t xbase,
                       const int64_t *xs)
{
    int64_t ys[MAX_RANK];
    contiguous_strides(rank, dims, ys);
    strided_call(L, x, y, rank, dims, xbase, xs, 0, ys);
}

/* An integer list from an input (newer opsets) or an attribute (older). */
static int ints_of(Node *n, int input, const char *attr, int64_t *v, int max, int *present)
{
    Tensor *t = in_t(n, input);
    *present = 1;
    if (t) return const_ints(n, t, v, max);
    const int64_t *a;
    int k = attr_ints(n, attr, &a);
    if (!attr_has(n, attr)) *present = 0;
    if (k > max) fail("attribute '%s' has %d values; at most %d are supported", attr, k, max);
    if (k) memcpy(v, a, sizeof(int64_t) * (size_t)k);
    return k;
}

/* ---- Transpose --------------------------------------------------------- */

static void transpose_perm(Node *n, int64_t *perm)
{
    Tensor *x = n->in[0];
    const int64_t *a;
    int k = attr_ints(n, "perm", &a);
    if (!attr_has(n, "perm")) {
        for (int i = 0; i < x->rank; i++) perm[i] = x->rank - 1 - i;
        return;
    }
    if (k != x->rank) fail("perm has %d entries, the input %s has rank %d", k, tensor_shape_str(x), x->rank);
    char seen[MAX_RANK] = {0};
    for (int i = 0; i < k; i++) {
        int64_t p = norm_axis(n, a[i], x->rank);
        if (seen[p]) fail("perm is not a permutation: axis %lld appears twice", (long long)a[i]);
        seen[p] = 1;
        perm[i] = p;
    }
}

void infer_transpose(Node *n)
{
    Tensor *x = n->in[0];
    int64_t perm[MAX_RANK], d[MAX_RANK];
    transpose_perm(n, perm);
    for (int i = 0; i < x->rank; i++) d[i] = x->dims[perm[i]];
    set_out(n, 0, x->dtype, x->rank, d);
}

void lower_transpose(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int64_t perm[MAX_RANK], xs[MAX_RANK], s[MAX_RANK];
    transpose_perm(n, perm);
    contiguous_strides(x->rank, x->dims, s);
    for (int i = 0; i < x->rank; i++) xs[i] = s[perm[i]];
    gather_box(L, x, y, y->rank, y->dims, 0, xs);
}

/* ---- Concat ------------------------------------------------------------ */

static int64_t concat_axis(Node *n)
{
    Tensor *x = n->in[0];
    int64_t axis;
    if (attr_has(n, "axis")) axis = attr_i(n, "axis");
    else if (n->opset < 4) axis = 1;
    else fail("required attribute 'axis' is missing");
    if (x->rank == 0) fail("cannot concatenate scalars ('%s' has rank 0)", x->name);
    return norm_axis(n, axis, x->rank);
}

void infer_concat(Node *n)
{
    Tensor *x = need_in(n, 0);
    int64_t axis = concat_axis(n), d[MAX_RANK];
    memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
    d[axis] = 0;
    for (int j = 0; j < n->nin; j++) {
        Tensor *t = need_in(n, j);
        if (t->dtype != x->dtype)
            fail("all inputs must have the same data type: '%s' is %s, '%s' is %s", x->name, dtype_name(x->dtype),
                 t->name, dtype_name(t->dtype));
        if (t->rank != x->rank)
            fail("inconsistent shapes: '%s' is %s and '%s' is %s (ranks differ)", x->name, tensor_shape_str(x),
                 t->name, tensor_shape_str(t));
        for (int i = 0; i < x->rank; i++)
            if (i != axis && t->dims[i] != x->dims[i])
                fail("inconsistent shapes: '%s' is %s and '%s' is %s; they may differ on axis %lld only", x->name,
                     tensor_shape_str(x), t->name, tensor_shape_str(t), (long long)axis);
        d[axis] += t->dims[axis];
    }
    set_out(n, 0, x->dtype, x->rank, d);
}

/* one copy per input, into its slice of the output */
void lower_concat(Node *n, Lowering *L)
{
    Tensor *y = n->out[0];
    int64_t axis = concat_axis(n), ys[MAX_RANK], xs[MAX_RANK], pos = 0;
    contiguous_strides(y->rank, y->dims, ys);
    for (int j = 0; j < n->nin; j++) {
        Tensor *x = n->in[j];
        contiguous_strides(x->rank, x->dims, xs);
        strided_call(L, x, y, x->rank, x->dims, 0, xs, pos * ys[axis], ys);
        pos += x->dims[axis];
    }
}

/* A Concat whose inputs are contiguous runs of its output's bytes (every
 * axis before the concatenation axis has size 1): fills each input's byte
 * offset in the output and returns 1 (plan.c then lets the inputs'
 * producers write straight into the output, without the copies); else 0. */
int concat_in_place_offsets(const Node *n, int64_t *byte_off)
{
    if (n->op->lower != lower_concat || !n->out[0] || n->out[0]->rank < 1) return 0;
    const Tensor *y = n->out[0];
    int64_t axis = attr_has(n, "axis") ? attr_i(n, "axis") : 1;
    if (axis < 0) axis += y->rank;
    if (axis < 0 || axis >= y->rank) return 0;
    for (int d = 0; d < axis; d++)
        if (y->dims[d] != 1) return 0;
    int64_t inner = (int64_t)dtype_size(y->dtype), pos = 0;
    for (int d = (int)axis + 1; d < y->rank; d++) inner *= y->dims[d];
    for (int j = 0; j < n->nin; j++) {
        if (!n->in[j] || n->in[j]->rank != y->rank) return 0;
        byte_off[j] = pos * inner;
        pos += n->in[j]->dims[axis];
    }
    return 1;
}

/* ---- Split ------------------------------------------------------------- */

/* the sizes of the parts along the axis; returns the axis */
static int64_t split_sizes(Node *n, int64_t *sizes)
{
    Tensor *x = n->in[0];
    int64_t axis = norm_axis(n, attr_i(n, "axis"), x->rank), len = x->dims[axis];
    int present, k = ints_of(n, 1, "split", sizes, 64, &present);
    if (present && k > 0) {
        if (k != n->nout) fail("split has %d sizes for %d outputs", k, n->nout);
        int64_t sum = 0;
        for (int i = 0; i < k; i++) {
            if (sizes[i] < 0) fail("split size %d is negative (%lld)", i, (long long)sizes[i]);
            sum += sizes[i];
        }
        if (sum != len)
            fail("the split sizes add up to %lld, but axis %lld of %s has %lld elements", (long long)sum,
                 (long long)axis, tensor_shape_str(x), (long long)len);
        return axis;
    }
    int64_t parts = n->nout;
    if (attr_has(n, "num_outputs")) {
        parts = attr_i(n, "num_outputs");
        if (parts != n->nout) fail("num_outputs is %lld, but the node has %d outputs", (long long)parts, n->nout);
    }
    if (parts <= 0) fail("nothing to split into");
    /* equal parts; when they do not divide evenly the last one is smaller */
    int64_t each = (len + parts - 1) / parts;
    for (int64_t i = 0, left = len; i < parts; i++) {
        sizes[i] = each < left ? each : left;
        left -= sizes[i];
    }
    return axis;
}

void infer_split(Node *n)
{
    Tensor *x = n->in[0];
    if (x->rank == 0) fail("cannot split a scalar");
    int64_t sizes[64], d[MAX_RANK];
    int64_t axis = split_sizes(n, sizes);
    memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
    for (int o = 0; o < n->nout; o++) {
        d[axis] = sizes[o];
        set_out(n, o, x->dtype, x->rank, d);
    }
}

/* one copy per output */
void lower_split(Node *n, Lowering *L)
{
    Tensor *x = n->in[0];
    int64_t sizes[64], xs[MAX_RANK], d[MAX_RANK];
    int64_t axis = split_sizes(n, sizes), pos = 0;
    contiguous_strides(x->rank, x->dims, xs);
    for (int o = 0; o < n->nout; o++) {
        if (n->out[o]) {
            memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
            d[axis] = sizes[o];
            gather_box(L, x, n->out[o], x->rank, d, pos * xs[axis], xs);
        }
        pos += sizes[o];
    }
}

/* ---- Slice ------------------------------------------------------------- */

typedef struct {
    int64_t start[MAX_RANK], step[MAX_RANK], count[MAX_RANK];
} SliceSpec;

static void slice_spec(Node *n, SliceSpec *s)
{
    Tensor *x = n->in[0];
    int r = x->rank;
    int64_t starts[MAX_RANK], ends[MAX_RANK], axes[MAX_RANK], steps[MAX_RANK];
    int ps, pe, pa, pst, ns, ne, na, nst;
    if (n->opset < 10 && n->nin == 1) {
        ns = ints_of(n, 99, "starts", starts, MAX_RANK, &ps);
        ne = ints_of(n, 99, "ends", ends, MAX_RANK, &pe);
        na = ints_of(n, 99, "axes", axes, MAX_RANK, &pa);
        nst = 0;
        pst = 0;
    } else {
        if (n->nin < 3) fail("Slice (opset %d) takes starts and ends as inputs", n->opset);
        need_const(n, need_in(n, 1), "starts");
        need_const(n, need_in(n, 2), "ends");
        if (in_t(n, 3)) need_const(n, n->in[3], "axes");
        if (in_t(n, 4)) need_const(n, n->in[4], "steps");
        ns = const_ints(n, n->in[1], starts, MAX_RANK);
        ne = const_ints(n, n->in[2], ends, MAX_RANK);
        pa = in_t(n, 3) != NULL;
        na = pa ? const_ints(n, n->in[3], axes, MAX_RANK) : 0;
        pst = in_t(n, 4) != NULL;
        nst = pst ? const_ints(n, n->in[4], steps, MAX_RANK) : 0;
        ps = pe = 1;
    }
    if (!ps || !pe) fail("starts and ends are required");
    if (ns != ne) fail("starts has %d values and ends %d; they must match", ns, ne);
    if (pa && na != ns) fail("axes has %d values, starts %d; they must match", na, ns);
    if (pst && nst != ns) fail("steps has %d values, starts %d; they must match", nst, ns);
    if (ns > r) fail("%d slices for an input of rank %d", ns, r);
    for (int d = 0; d < r; d++) {
        s->start[d] = 0;
        s->step[d] = 1;
        s->count[d] = x->dims[d];
    }
    char seen[MAX_RANK] = {0};
    for (int i = 0; i < ns; i++) {
        int64_t a = pa ? norm_axis(n, axes[i], r) : i;
        if (seen[a]) fail("axis %lld is sliced twice", (long long)a);
        seen[a] = 1;
        int64_t dim = x->dims[a], st = pst ? steps[i] : 1, b = starts[i], e = ends[i];
        if (st == 0) fail("step %d is 0", i);
        if (b < 0) b += dim;
        if (e < 0) e += dim;
        int64_t cnt;
        if (st > 0) {
            b = b < 0 ? 0 : (b > dim ? dim : b);
            e = e < 0 ? 0 : (e > dim ? dim : e);
            cnt = e > b ? (e - b + st - 1) / st : 0;
        } else {
            b = b < 0 ? 0 : (b > dim - 1 ? dim - 1 : b);
            e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
            cnt = b > e ? (b - e + (-st) - 1) / (-st) : 0;
        }
        s->start[a] = cnt ? b : 0;
        s->step[a] = st;
        s->count[a] = cnt;
    }
}

void infer_slice(Node *n)
{
    SliceSpec s;
    slice_spec(n, &s);
    set_out(n, 0, n->in[0]->dtype, n->in[0]->rank, s.count);
}

void lower_slice(Node *n, Lowering *L)
{
    Tensor *x = n->in[0];
    SliceSpec s;
    slice_spec(n, &s);
    int64_t xs[MAX_RANK], st[MAX_RANK], base = 0;
    contiguous_strides(x->rank, x->dims, xs);
    for (int d = 0; d < x->rank; d++) {
        base += s.start[d] * xs[d];
        st[d] = s.step[d] * xs[d];
    }
    gather_box(L, x, n->out[0], x->rank, s.count, base, st);
}

/* ---- Gather ------------------------------------------------------------ */

void infer_gather(Node *n)
{
    Tensor *x = n->in[0], *idx = n->in[1];
    need_dtype(n, idx, DTS_INDEX);
    if (x->rank == 0) fail("cannot gather from a scalar");
    int64_t axis = norm_axis(n, attr_i(n, "axis"), x->rank), d[MAX_RANK * 2];
    int r = 0;
    for (int i = 0; i < axis; i++) d[r++] = x->dims[i];
    for (int i = 0; i < idx->rank; i++) d[r++] = idx->dims[i];
    for (int i = (int)axis + 1; i < x->rank; i++) d[r++] = x->dims[i];
    if (r > MAX_RANK) fail("the result would have rank %d; at most %d is supported", r, MAX_RANK);
    if (idx->data) {
        for (int64_t i = 0; i < tensor_numel(idx); i++) {
            int64_t v = elem_i64(idx->dtype, idx->data, i);
            if (v < -x->dims[axis] || v >= x->dims[axis])
                fail("index %lld is out of range for axis %lld of %s", (long long)v, (long long)axis,
                     tensor_shape_str(x));
        }
    }
    set_out(n, 0, x->dtype, r, d);
}

void lower_gather(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *idx = n->in[1], *y = n->out[0];
    int64_t axis = norm_axis(n, attr_i(n, "axis"), x->rank), inner = 1;
    for (int i = (int)axis + 1; i < x->rank; i++) inner *= x->dims[i];
    KCall *c = lower_call(L, "o2c_gather", tensor_numel(y));
    c->x[0] = x;
    c->x[1] = idx;
    c->y[0] = y;
    c->k[O2C_GATHER_ESIZE] = (int64_t)dtype_size(x->dtype);
    c->k[O2C_GATHER_INNER] = inner;
    c->k[O2C_GATHER_NIDX] = tensor_numel(idx);
    c->k[O2C_GATHER_AXIS] = x->dims[axis];
    c->k[O2C_GATHER_IESIZE] = (int64_t)dtype_size(idx->dtype);
}

/* ---- Pad --------------------------------------------------------------- */

typedef struct {
    int mode;                          /* 0 constant, 1 edge, 2 reflect, 3 wrap */
    int64_t begin[MAX_RANK], dims[MAX_RANK];
} PadSpec;

static void pad_spec(Node *n, PadSpec *s)
{
    Tensor *x = n->in[0];
    int r = x->rank;
    const char *m = attr_s(n, "mode");
    if (!strcmp(m, "constant")) s->mode = 0;
    else if (!strcmp(m, "edge")) s->mode = 1;
    else if (!strcmp(m, "reflect")) s->mode = 2;
    else if (!strcmp(m, "wrap")) s->mode = 3;
    else fail("mode '%s' is not one of constant, reflect, edge, wrap", m);
    int64_t pads[2 * MAX_RANK], axes[MAX_RANK];
    int np, present, na = r;
    if (n->opset >= 11) {
        Tensor *p = need_in(n, 1);
        need_const(n, p, "pads");
        np = const_ints(n, p, pads, 2 * MAX_RANK);
        Tensor *ta = in_t(n, 3);
        if (ta) {
            need_const(n, ta, "axes");
            na = const_ints(n, ta, axes, MAX_RANK);
            for (int i = 0; i < na; i++) axes[i] = norm_axis(n, axes[i], r);
        } else {
            for (int i = 0; i < r; i++) axes[i] = i;
        }
    } else {
        np = ints_of(n, 99, n->opset < 2 && attr_has(n, "paddings") ? "paddings" : "pads", pads, 2 * MAX_RANK,
                     &present);
        if (!present) fail("the pads attribute is missing");
        for (int i = 0; i < r; i++) axes[i] = i;
    }
    if (np != 2 * na) fail("pads has %d values; %d axes need %d", np, na, 2 * na);
    for (int d = 0; d < r; d++) {
        s->begin[d] = 0;
        s->dims[d] = x->dims[d];
    }
    for (int i = 0; i < na; i++) {
        int64_t a = axes[i];
        s->begin[a] = pads[i];
        s->dims[a] = x->dims[a] + pads[i] + pads[na + i];
        if (s->dims[a] < 0)
            fail("pads %lld and %lld on axis %lld of %s leave a negative size", (long long)pads[i],
                 (long long)pads[na + i], (long long)a, tensor_shape_str(x));
        if (s->mode && x->dims[a] == 0 && s->dims[a] > 0)
            fail("mode '%s' cannot pad axis %lld, which is empty", m, (long long)a);
    }
}

void infer_pad(Node *n)
{
    PadSpec s;
    pad_spec(n, &s);
    Tensor *v = in_t(n, 2);
    if (n->opset >= 11 && v && v->dtype != n->in[0]->dtype)
        fail("constant_value is %s, the input %s; they must match", dtype_name(v->dtype), dtype_name(n->in[0]->dtype));
    if (n->opset >= 11 && v && tensor_numel(v) > 1) fail("constant_value must hold one value");
    set_out(n, 0, n->in[0]->dtype, n->in[0]->rank, s.dims);
}

void lower_pad(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    PadSpec s;
    pad_spec(n, &s);
    Tensor *v = n->opset >= 11 ? in_t(n, 2) : NULL;
    if (!v || tensor_numel(v) == 0) {
        v = lower_temp(L, x->dtype, 0, NULL);
        v->data = xalloc(16);
        elem_set(x->dtype, v->data, 0, n->opset >= 11 ? 0.0 : attr_f(n, "value"));
    }
    KCall *c = lower_call(L, "o2c_pad", tensor_numel(y));
    c->x[0] = x;
    c->x[1] = v;
    c->y[0] = y;
    c->k[O2C_PAD_ESIZE] = (int64_t)dtype_size(x->dtype);
    c->k[O2C_PAD_RANK] = x->rank;
    c->k[O2C_PAD_MODE] = s.mode;
    for (int d = 0; d < x->rank; d++) {
        c->k[O2C_PAD_YDIMS + d] = y->dims[d];
        c->k[O2C_PAD_XDIMS + d] = x->dims[d];
        c->k[O2C_PAD_BEGIN + d] = s.begin[d];
    }
}

/* ---- Expand, Tile ------------------------------------------------------- */

void infer_expand(Node *n)
{
    Tensor *x = n->in[0], *sh = n->in[1];
    need_const(n, sh, "the target shape");
    Tensor s;
    memset(&s, 0, sizeof s);
    s.name = sh->name;
    s.rank = const_ints(n, sh, s.dims, MAX_RANK);
    for (int i = 0; i < s.rank; i++)
        if (s.dims[i] < 0) fail("the target shape has a negative entry (%lld)", (long long)s.dims[i]);
    int64_t d[MAX_RANK];
    int r = broadcast_shapes(n, x, &s, d);
    set_out(n, 0, x->dtype, r, d);
}

void lower_expand(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int64_t xs[MAX_RANK];
    bcast_strides(x, y->rank, xs);
    gather_box(L, x, y, y->rank, y->dims, 0, xs);
}

static void tile_repeats(Node *n, int64_t *rep)
{
    Tensor *x = n->in[0];
    for (int i = 0; i < x->rank; i++) rep[i] = 1;
    if (n->nin == 3) {   /* Tile-1: tiles, axis */
        need_const(n, n->in[1], "tiles");
        need_const(n, n->in[2], "axis");
        int64_t a = norm_axis(n, elem_i64(n->in[2]->dtype, n->in[2]->data, 0), x->rank);
        rep[a] = elem_i64(n->in[1]->dtype, n->in[1]->data, 0);
    } else {
        need_const(n, n->in[1], "repeats");
        int64_t v[MAX_RANK];
        int k = const_ints(n, n->in[1], v, MAX_RANK);
        if (k != x->rank) fail("repeats has %d values, the input %s has rank %d", k, tensor_shape_str(x), x->rank);
        memcpy(rep, v, sizeof(int64_t) * (size_t)k);
    }
    for (int i = 0; i < x->rank; i++)
        if (rep[i] < 0) fail("repeat count %lld is negative", (long long)rep[i]);
}

void infer_tile(Node *n)
{
    Tensor *x = n->in[0];
    int64_t rep[MAX_RANK], d[MAX_RANK];
    tile_repeats(n, rep);
    for (int i = 0; i < x->rank; i++) d[i] = x->dims[i] * rep[i];
    set_out(n, 0, x->dtype, x->rank, d);
}

void lower_tile(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    if (tensor_numel(y) == 0) return;
    KCall *c = lower_call(L, "o2c_tile", tensor_numel(y));
    c->x[0] = x;
    c->y[0] = y;
    c->k[O2C_TILE_ESIZE] = (int64_t)dtype_size(x->dtype);
    c->k[O2C_TILE_RANK] = x->rank;
    for (int d = 0; d < x->rank; d++) {
        c->k[O2C_TILE_YDIMS + d] = y->dims[d];
        c->k[O2C_TILE_XDIMS + d] = x->dims[d];
    }
}

/* ---- DepthToSpace, SpaceToDepth ------------------------------------------ */

static int64_t block_size(Node *n)
{
    Tensor *x = n->in[0];
    if (x->rank != 4) fail("the input must have rank 4 (NCHW), it is %s", tensor_shape_str(x));
    int64_t b = attr_i(n, "blocksize");
    if (b <= 0) fail("blocksize is %lld; it must be positive", (long long)b);
    if (b > 4096) fail("blocksize is %lld; at most 4096 is supported", (long long)b);   /* b*b and dims*b in range */
    return b;
}

static int dcr_mode(Node *n)
{
    if (!attr_has(n, "mode")) return 1;
    const char *m = attr_s(n, "mode");
    if (!strcmp(m, "DCR")) return 1;
    if (!strcmp(m, "CRD")) return 0;
    fail("mode '%s' is not one of DCR, CRD", m);
}

void infer_depth_to_space(Node *n)
{
    Tensor *x = n->in[0];
    int64_t b = block_size(n);
    (void)dcr_mode(n);
    if (x->dims[1] % (b * b)) fail("%lld channels do not divide by blocksize^2 = %lld", (long long)x->dims[1], (long long)(b * b));
    int64_t d[4] = {x->dims[0], x->dims[1] / (b * b), x->dims[2] * b, x->dims[3] * b};
    set_out(n, 0, x->dtype, 4, d);
}

/* output box (N, C', H, b1, W, b2) read from the input seen as
 * DCR: (N, b1, b2, C', H, W) or CRD: (N, C', b1, b2, H, W) */
void lower_depth_to_space(Node *n, Lowering *L)
{
    Tensor *x = n->in[0];
    int64_t b = block_size(n), N = x->dims[0], C = x->dims[1] / (b * b), H = x->dims[2], W = x->dims[3];
    int64_t box[6] = {N, C, H, b, W, b}, xs[6];
    int64_t sN = x->dims[1] * H * W;
    if (dcr_mode(n)) {
        int64_t s[6] = {sN, H * W, W, b * C * H * W, 1, C * H * W};
        memcpy(xs, s, sizeof s);
    } else {
        int64_t s[6] = {sN, b * b * H * W, W, b * H * W, 1, H * W};
        memcpy(xs, s, sizeof s);
    }
    gather_box(L, x, n->out[0], 6, box, 0, xs);
}

void infer_space_to_depth(Node *n)
{
    Tensor *x = n->in[0];
    int64_t b = block_size(n);
    (void)dcr_mode(n);
    if (x->dims[2] % b || x->dims[3] % b)
        fail("the spatial size %lldx%lld does not divide by blocksize %lld", (long long)x->dims[2],
             (long long)x->dims[3], (long long)b);
    int64_t d[4] = {x->dims[0], x->dims[1] * b * b, x->dims[2] / b, x->dims[3] / b};
    set_out(n, 0, x->dtype, 4, d);
}

/* output box DCR: (N, b1, b2, C, H', W'), CRD (opset 25): (N, C, b1, b2,
 * H', W'), read from the input seen as (N, C, H', b1, W', b2) */
void lower_space_to_depth(Node *n, Lowering *L)
{
    Tensor *x = n->in[0];
    int64_t b = block_size(n), N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
    if (dcr_mode(n)) {
        int64_t box[6] = {N, b, b, C, H / b, W / b};
        int64_t xs[6] = {C * H * W, W, 1, H * W, b * W, b};
        gather_box(L, x, n->out[0], 6, box, 0, xs);
    } else {
        int64_t box[6] = {N, C, b, b, H / b, W / b};
        int64_t xs[6] = {C * H * W, H * W, W, 1, b * W, b};
        gather_box(L, x, n->out[0], 6, box, 0, xs);
    }
}
