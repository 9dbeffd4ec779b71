/* SliceView (domain onnx2c, made by passes): y = x[start:end] along `axis`,
 * where every axis before `axis` has size 1, so the slice is one contiguous
 * run of x's bytes. It is a view at a byte offset: planning makes y an
 * alias of x with alias_offset (plan.c), the emitters add the offset
 * (storage_ptr), evaluation points into x's data (eval.c). Only when y is a
 * graph output is there a copy (one o2c_strided call from the offset).
 * --emit-onnx states it as a Slice. */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/movement.h"

static int64_t inner_elems(const Tensor *x, int64_t axis)
{
    int64_t m = 1;
    for (int d = (int)axis + 1; d < x->rank; d++) m *= x->dims[d];
    return m;
}

void infer_slice_view(Node *n)
{
    Tensor *x = n->in[0];
    if (x->rank < 1) fail("internal: SliceView of a scalar");
    int64_t axis = norm_axis(n, attr_i(n, "axis"), x->rank);
    int64_t b = attr_i(n, "start"), e = attr_i(n, "end");
    if (b < 0 || e < b || e > x->dims[axis])
        fail("internal: SliceView [%lld, %lld) out of range for axis %lld of %s", (long long)b, (long long)e,
             (long long)axis, tensor_shape_str(x));
    for (int d = 0; d < axis; d++)
        if (x->dims[d] != 1) fail("internal: SliceView along axis %lld of %s is not contiguous", (long long)axis,
                                  tensor_shape_str(x));
    int64_t dims[MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    dims[axis] = e - b;
    set_out(n, 0, x->dtype, x->rank, dims);
}

int64_t slice_view_offset(const Node *n)
{
    const Tensor *x = n->in[0];
    int64_t axis = attr_i(n, "axis");
    if (axis < 0) axis += x->rank;
    return attr_i(n, "start") * inner_elems(x, axis) * (int64_t)dtype_size(x->dtype);
}

void lower_slice_view(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    if (!y || !y->is_output || tensor_numel(y) == 0) return;
    KCall *c = lower_call(L, "o2c_strided", tensor_numel(y));
    c->x[0] = x;
    c->y[0] = y;
    c->k[O2C_STRIDED_ESIZE] = (int64_t)dtype_size(x->dtype);
    c->k[O2C_STRIDED_RANK] = 1;
    c->k[O2C_STRIDED_XBASE] = slice_view_offset(n) / (int64_t)dtype_size(x->dtype);
    c->k[O2C_STRIDED_YBASE] = 0;
    c->k[O2C_STRIDED_DIMS] = tensor_numel(y);
    c->k[O2C_STRIDED_XSTR] = 1;
    c->k[O2C_STRIDED_YSTR] = 1;
}

void decompose_slice_view(const Node *n, Decomp *d)
{
    int64_t axis = attr_i(n, "axis"), b = attr_i(n, "start"), e = attr_i(n, "end");
    const char *cb = dc_const_ints(d, &b, 1);
    const char *ce = dc_const_ints(d, &e, 1);
    const char *ca = dc_const_ints(d, &axis, 1);
    const char *y = dc_op(d, "Slice", 4, dc_in(d, 0), cb, ce, ca);
    d->opset = d->opset > 10 ? d->opset : 10;
    dc_output(d, 0, y);
}
