/* Helpers shared by the op files: input checks, axes, broadcasting. */
#include <string.h>

#include "../ir.h"

const int DTS_FLOAT[] = {DT_FLOAT, DT_DOUBLE, 0};
const int DTS_INT[] = {DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64, 0};
const int DTS_NUM[] = {DT_FLOAT, DT_DOUBLE, DT_INT8, DT_INT16, DT_INT32, DT_INT64,
                       DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64, 0};
const int DTS_ALL[] = {DT_FLOAT, DT_DOUBLE, DT_INT8, DT_INT16, DT_INT32, DT_INT64,
                       DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64, DT_BOOL, 0};
const int DTS_BOOL[] = {DT_BOOL, 0};
const int DTS_INDEX[] = {DT_INT32, DT_INT64, 0};

Tensor *in_t(Node *n, int i) { return i < n->nin ? n->in[i] : NULL; }

Tensor *need_in(Node *n, int i)
{
    Tensor *t = in_t(n, i);
    if (!t) fail("input %d is required", i);
    return t;
}

void need_dtype(Node *n, Tensor *t, const int *allowed)
{
    (void)n;
    for (const int *a = allowed; *a; a++)
        if (*a == t->dtype) return;
    fail("input '%s' has data type %s, which this op does not support in onnx2c", t->name, dtype_name(t->dtype));
}

/* A value (not a shape) the lowering needs at compile time (Dropout's training_mode). */
void need_const_value(Node *n, Tensor *t, const char *what)
{
    (void)n;
    if (!t->data)
        fail("%s ('%s') must be a constant (an initializer or computable at compile time)", what, t->name);
}

/* The graph inputs a tensor's value is computed from: walks producers back
 * to constants and graph inputs. Adds each (once) to in[]; returns the count. */
enum { BIND_MAX_INPUTS = 16, BIND_MAX_VISIT = 512 };
static int bind_sources(Tensor *t, Tensor **in, int nin, Tensor **seen, int *nseen)
{
    if (!t || t->data) return nin;
    for (int i = 0; i < *nseen; i++)
        if (seen[i] == t) return nin;
    if (*nseen == BIND_MAX_VISIT) return nin;
    seen[(*nseen)++] = t;
    if (t->is_input) {
        if (nin < BIND_MAX_INPUTS) in[nin++] = t;
        return nin;
    }
    if (t->shadow_of) return bind_sources(t->shadow_of, in, nin, seen, nseen);
    if (t->producer)
        for (int j = 0; j < t->producer->nin; j++)
            nin = bind_sources(t->producer->in[j], in, nin, seen, nseen);
    return nin;
}

/* "--bind A=FILE.pb --bind B=FILE.pb" for the graph inputs t is computed
 * from, or NULL when it comes from none (a contract: tools read the text). */
const char *bind_suggestion(Tensor *t)
{
    Tensor *in[BIND_MAX_INPUTS], *seen[BIND_MAX_VISIT];
    int nseen = 0, nin = bind_sources(t, in, 0, seen, &nseen);
    if (!nin) return NULL;
    char *names = xalloc(1024);
    size_t len = 0;
    for (int i = 0; i < nin && len < 1023; i++)
        len += (size_t)snprintf(names + len, 1024 - len, "%s--bind %s=FILE.pb", i ? " " : "", in[i]->name);
    return names;
}

/* A shape-deciding input (a shape, sizes, axes, counts) must be known at
 * compile time. When it comes from graph inputs, the message names each as
 * `--bind NAME=` (a contract: tools read exactly that): the failing input's
 * sources and those of the node's other non-constant inputs that follow the
 * data (index 1 on, or all when the failing one is input 0), so that one
 * retry binds them all. */
void need_const(Node *n, Tensor *t, const char *what)
{
    if (t->data) return;
    Tensor *in[BIND_MAX_INPUTS], *seen[BIND_MAX_VISIT];
    int nin = 0, nseen = 0, at = 0;
    for (int j = 0; j < n->nin; j++)
        if (n->in[j] == t) { at = j; break; }
    nin = bind_sources(t, in, nin, seen, &nseen);
    for (int j = at ? 1 : 0; nin && j < n->nin; j++)
        nin = bind_sources(n->in[j], in, nin, seen, &nseen);
    if (!nin)
        fail("%s ('%s') must be a constant (an initializer or computable at compile time); "
             "onnx2c generates code for fixed shapes", what, t->name);
    char names[1024];
    size_t len = 0;
    for (int i = 0; i < nin && len < sizeof names - 1; i++)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s--bind %s=FILE.pb", i ? " " : "", in[i]->name);
    fail("%s ('%s') decides a shape and is computed from graph input '%s'%s; onnx2c generates code for fixed "
         "shapes: bind the shape-deciding input%s at compile time with %s (each FILE a serialized TensorProto of the "
         "value; the generated code returns NAME_ERR_BOUND_INPUT when a run's input holds another value)",
         what, t->name, in[0]->name, nin > 1 ? " and others" : "", nin > 1 ? "s" : "", names);
}

int need_const_or_dyn(Node *n, Tensor *t, const char *what)
{
    if (t->data) return 1;
    int ok = !n->promoted;   /* 16-bit floats go through float32 stand-ins: not written in place */
    for (int j = 0; j < n->nout; j++) {
        Tensor *y = n->out[j];
        if (!y || (!y->is_output && y->nuses == 0)) continue;   /* absent, or read by nobody */
        if (!y->is_output || y->output_index < 0 || y->nuses != 1) ok = 0;
        for (int k = 0; k < j; k++)
            if (n->out[k] == y) ok = 0;
    }
    if (ok) {
        n->dyn_size = 1;
        return 0;
    }
    need_const(n, t, what);   /* refuses */
    return 1;
}

Tensor *lower_dyn_output(Lowering *L, Tensor *y, int axis, Tensor *cnt)
{
    if (!cnt) {
        cnt = lower_temp(L, DT_INT64, 0, NULL);
        cnt->keep = 1;
    }
    if (y && (y->is_output || y->nuses > 0)) {
        if (!y->is_output || y->output_index < 0)
            fail("output '%s' would take a size known only at run time, which onnx2c supports where the op writes "
                 "a graph output directly (not through a float32 stand-in of a 16-bit type); bind the input that "
                 "decides it (--bind) or Cast around the op", y->name);
        y->dyn_axis = axis;
        y->dyn_count = cnt;
    }
    return cnt;
}

int64_t norm_axis(Node *n, int64_t axis, int rank)
{
    (void)n;
    if (axis < -rank || axis >= (rank ? rank : 1))
        fail("axis %lld is out of range for rank %d", (long long)axis, rank);
    return axis < 0 ? axis + rank : axis;
}

void set_out(Node *n, int o, int dtype, int rank, const int64_t *dims)
{
    Tensor *t = o < n->nout ? n->out[o] : NULL;
    if (!t) return;
    t->dtype = dtype;
    tensor_set_shape(t, rank, dims);
}

void out_like(Node *n, int o, const Tensor *src) { set_out(n, o, src->dtype, src->rank, src->dims); }

int broadcast_shapes(Node *n, const Tensor *a, const Tensor *b, int64_t *dims)
{
    (void)n;
    int r = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            fail("inconsistent shapes: '%s' is %s and '%s' is %s, which do not broadcast", a->name,
                 tensor_shape_str(a), b->name, tensor_shape_str(b));
        dims[i] = da == 1 ? db : da;
    }
    return r;
}

void bcast_strides(const Tensor *t, int rank, int64_t *strides)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        int it = i - (rank - t->rank);
        int64_t d = it >= 0 ? t->dims[it] : 1;
        strides[i] = d == 1 ? 0 : s;
        s *= d;
    }
}

int schema_numbers(const char *schema, int ints, char (*names)[64], char *types, int max, const char *op)
{
    const char *s = schema;
    int k = 0;
    while (*s) {
        while (*s == ' ') s++;
        const char *colon = strchr(s, ':'), *end = strchr(s, ' ');
        if (!end) end = s + strlen(s);
        if (colon && colon < end && (colon[1] == 'f' || (ints && colon[1] == 'i')) &&
            (colon + 2 == end || colon[2] == '=')) {
            if (k == max) fail("internal: %s has more than %d numeric attributes", op, max);
            size_t l = (size_t)(colon - s) < 63 ? (size_t)(colon - s) : 63;
            memcpy(names[k], s, l);
            names[k][l] = 0;
            types[k++] = colon[1];
        }
        s = end;
    }
    return k;
}

Tensor *lower_cast_temp(Lowering *L, Tensor *t, int dt)
{
    if (!t || t->dtype == dt) return t;
    Tensor *y = lower_temp(L, dt, t->rank, t->dims);
    KCall *c = lower_call(L, xfmt("o2c_cast_%s_%s", dtype_suffix(t->dtype), dtype_suffix(dt)), tensor_numel(t));
    c->x[0] = t;
    c->y[0] = y;
    return y;
}

int matmul_batch(Node *n, const Tensor *a, const Tensor *b, int64_t mk, int64_t kn, int64_t *bdims, int64_t *astr,
                 int64_t *bstr)
{
    Tensor ba = *a, bb = *b;
    ba.rank = a->rank > 2 ? a->rank - 2 : 0;
    bb.rank = b->rank > 2 ? b->rank - 2 : 0;
    int r = broadcast_shapes(n, &ba, &bb, bdims);
    bcast_strides(&ba, r, astr);
    bcast_strides(&bb, r, bstr);
    for (int i = 0; i < r; i++) {
        astr[i] *= mk;
        bstr[i] *= kn;
    }
    return r;
}

int const_ints(Node *n, Tensor *t, int64_t *v, int max)
{
    need_const(n, t, "this input");
    if (!dtype_is_int(t->dtype)) fail("input '%s' should hold integers, it is %s", t->name, dtype_name(t->dtype));
    int64_t ne = tensor_numel(t);
    if (ne > max) fail("input '%s' has %lld values; at most %d are supported", t->name, (long long)ne, max);
    for (int64_t i = 0; i < ne; i++) v[i] = elem_i64(t->dtype, t->data, i);
    return (int)ne;
}
