/* Decompositions: a fused node (domain onnx2c) stated in standard ONNX
 * ops, built with the dc_* functions by the op's decompose function, and
 * written by --emit-onnx as an ONNX local function. */
#include <stdarg.h>
#include <string.h>

#include "ir.h"

const char *dc_in(Decomp *d, int j)
{
    if (j >= d->node->nin || !d->node->in[j]) return "";
    return xfmt("x%d", j);
}

static DNode *push(Decomp *d)
{
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 8;
        DNode *nn = xalloc(sizeof(DNode) * (size_t)cap);
        if (d->n) memcpy(nn, d->nodes, sizeof(DNode) * (size_t)d->n);
        d->nodes = nn;
        d->cap = cap;
    }
    DNode *n = &d->nodes[d->n++];
    memset(n, 0, sizeof *n);
    return n;
}

const char *dc_op_n(Decomp *d, const char *op_type, const char *const *in, int nin, int nout)
{
    DNode *n = push(d);
    n->op_type = op_type;
    n->nin = nin;
    n->in = xalloc(sizeof(char *) * (size_t)(nin + 1));
    for (int j = 0; j < nin; j++) n->in[j] = in[j] ? in[j] : "";
    n->nout = nout;
    n->out = xalloc(sizeof(char *) * (size_t)(nout + 1));
    for (int j = 0; j < nout; j++) n->out[j] = xfmt("t%d", ++d->ntemp);
    return n->out[0];
}

const char *dc_op(Decomp *d, const char *op_type, int nin, ...)
{
    const char *in[16];
    if (nin > 16) fail_plain("internal: dc_op with %d inputs", nin);
    va_list ap;
    va_start(ap, nin);
    for (int j = 0; j < nin; j++) in[j] = va_arg(ap, const char *);
    va_end(ap);
    return dc_op_n(d, op_type, in, nin, 1);
}

Attr *dnode_add_attr(DNode *n, const char *name, int type)
{
    Attr *a = xalloc(sizeof(Attr) * (size_t)(n->nattrs + 2));
    if (n->nattrs) memcpy(a, n->attrs, sizeof(Attr) * (size_t)n->nattrs);
    n->attrs = a;
    Attr *s = &a[n->nattrs++];
    s->name = xstrdup(name);
    s->type = type;
    return s;
}

static Attr *attr(Decomp *d, const char *name, int type)
{
    if (!d->n) fail_plain("internal: a decomposition attribute before any node");
    return dnode_add_attr(&d->nodes[d->n - 1], name, type);
}

void dc_attr_i(Decomp *d, const char *name, int64_t v) { attr(d, name, AT_INT)->i = v; }
void dc_attr_f(Decomp *d, const char *name, double v) { attr(d, name, AT_FLOAT)->f = v; }

void dc_attr_ints(Decomp *d, const char *name, const int64_t *v, int len)
{
    Attr *a = attr(d, name, AT_INTS);
    a->ints = xalloc(sizeof(int64_t) * (size_t)(len + 1));
    if (len) memcpy(a->ints, v, sizeof(int64_t) * (size_t)len);
    a->n = len;
}

void dc_copy_attrs(Decomp *d, const Node *n, const char *const *names)
{
    for (int k = 0; names[k]; k++) {
        const Attr *a = attr_find(n, names[k]);
        if (!a) continue;
        Attr *c = attr(d, names[k], a->type);
        *c = *a;
    }
}

static const char *constant(Decomp *d, Tensor *t)
{
    const char *y = dc_op_n(d, "Constant", NULL, 0, 1);
    attr(d, "value", AT_TENSOR)->t = t;
    return y;
}

const char *dc_const_f(Decomp *d, int dtype, double v)
{
    Tensor *t = xalloc(sizeof *t);
    t->name = xfmt("c%d", d->ntemp + 1);
    t->dtype = dtype;
    t->rank = 0;
    t->input_index = t->output_index = -1;
    tensor_alloc_data(t);
    elem_set(dtype, t->data, 0, v);
    return constant(d, t);
}

const char *dc_const_ints(Decomp *d, const int64_t *v, int len)
{
    Tensor *t = xalloc(sizeof *t);
    int64_t dims[1] = {len};
    t->name = xfmt("c%d", d->ntemp + 1);
    t->dtype = DT_INT64;
    t->input_index = t->output_index = -1;
    tensor_set_shape(t, 1, dims);
    tensor_alloc_data(t);
    if (len) memcpy(t->data, v, sizeof(int64_t) * (size_t)len);
    return constant(d, t);
}

void dc_output(Decomp *d, int j, const char *name)
{
    const char *y = xfmt("y%d", j);
    for (int i = 0; i < d->n; i++)
        for (int k = 0; k < d->nodes[i].nout; k++)
            if (!strcmp(d->nodes[i].out[k], name)) {
                d->nodes[i].out[k] = y;
                for (int u = i + 1; u < d->n; u++)     /* later readers of the old name */
                    for (int v = 0; v < d->nodes[u].nin; v++)
                        if (!strcmp(d->nodes[u].in[v], name)) d->nodes[u].in[v] = y;
                return;
            }
    dc_op(d, "Identity", 1, name);                /* an input passed through */
    d->nodes[d->n - 1].out[0] = y;
}

void decompose_node(const Node *n, Decomp *d)
{
    memset(d, 0, sizeof *d);
    d->node = n;
    if (!n->op || !n->op->decompose) fail_plain("internal: %s has no decomposition", n->op_type);
    n->op->decompose(n, d);
}
