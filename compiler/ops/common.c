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

void need_const(Node *n, Tensor *t, const char *what)
{
    (void)n;
    if (!t->data)
        fail("%s ('%s') must be a constant (an initializer or computable at compile time); "
             "onnx2c generates code for fixed shapes", what, t->name);
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

int const_ints(Node *n, Tensor *t, int64_t *v, int max)
{
    need_const(n, t, "this input");
    if (!dtype_is_int(t->dtype)) fail("input '%s' should hold integers, it is %s", t->name, dtype_name(t->dtype));
    int64_t ne = tensor_numel(t);
    if (ne > max) fail("input '%s' has %lld values; at most %d are supported", t->name, (long long)ne, max);
    for (int64_t i = 0; i < ne; i++) v[i] = elem_i64(t->dtype, t->data, i);
    return (int)ne;
}
