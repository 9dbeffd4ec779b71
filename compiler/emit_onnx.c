/* --emit-onnx: the optimized graph as an ONNX model (protobuf-c), for
 * Netron and onnxruntime. Nodes in execution order, the type and shape of
 * every intermediate in value_info, the constants as initializers. A fused
 * node (domain onnx2c) becomes a call of an ONNX local function
 * (FunctionProto, one per node, named OPNAME_INDEX, domain onnx2c) whose
 * body is the op's decomposition into standard ops, so onnxruntime can run
 * the file; the compiler reads such a call back as the fused op. A
 * standard op that a pass inserted and that is newer than the model's
 * opset (LayerNormalization into an opset-13 model) is wrapped the same
 * way, its function importing the opset it needs. Every
 * node's doc_string names the original ONNX nodes it covers. */
#include <string.h>

#include "ir.h"
#include "onnx.pb-c.h"


static Onnx__OperatorSetIdProto *opset(const char *domain, int64_t version)
{
    Onnx__OperatorSetIdProto *o = xalloc(sizeof *o);
    onnx__operator_set_id_proto__init(o);
    o->domain = (char *)domain;
    o->has_version = 1;
    o->version = version;
    return o;
}

static Onnx__TensorProto *tensor_proto(const Tensor *t, const char *name)
{
    Onnx__TensorProto *p = xalloc(sizeof *p);
    onnx__tensor_proto__init(p);
    p->name = (char *)name;
    p->has_data_type = 1;
    p->data_type = t->dtype;
    p->n_dims = (size_t)(t->rank > 0 ? t->rank : 0);
    p->dims = xalloc(sizeof(int64_t) * (p->n_dims + 1));
    for (int d = 0; d < t->rank; d++) p->dims[d] = t->dims[d];
    if (t->dtype == DT_STRING) {   /* string tensors (ops/strings.c): string_data */
        int64_t n = tensor_numel(t);
        p->n_string_data = (size_t)n;
        p->string_data = xalloc(sizeof(ProtobufCBinaryData) * (size_t)(n + 1));
        for (int64_t i = 0; i < n; i++) {
            const char *v = ((const char *const *)t->data)[i];
            p->string_data[i].data = (uint8_t *)(v ? v : "");
            p->string_data[i].len = strlen(v ? v : "");
        }
        return p;
    }
    p->has_raw_data = 1;
    p->raw_data.len = tensor_bytes(t);
    p->raw_data.data = t->data;
    int bits = t->dtype == DT_INT4 || t->dtype == DT_UINT4 || t->dtype == DT_FLOAT4E2M1 ? 4 :
               t->dtype == DT_INT2 || t->dtype == DT_UINT2 ? 2 : 8;
    if (bits < 8) {   /* ONNX packs them: two (four) to a byte, the first in the low bits */
        int64_t n = tensor_numel(t);
        uint8_t *pk = xalloc((size_t)(n * bits + 7) / 8 + 1);
        for (int64_t i = 0; i < n; i++)
            pk[i * bits / 8] |= (uint8_t)((((const uint8_t *)t->data)[i] & ((1u << bits) - 1u)) << (i * bits % 8));
        p->raw_data.len = (size_t)(n * bits + 7) / 8;
        p->raw_data.data = pk;
    }
    return p;
}

static Onnx__TypeProto *type_proto(const Tensor *t)
{
    Onnx__TypeProto__Tensor *tt = xalloc(sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = t->dtype;
    if (t->rank >= 0) {
        Onnx__TensorShapeProto *s = xalloc(sizeof *s);
        onnx__tensor_shape_proto__init(s);
        s->n_dim = (size_t)t->rank;
        s->dim = xalloc(sizeof(void *) * (s->n_dim + 1));
        for (int d = 0; d < t->rank; d++) {
            Onnx__TensorShapeProto__Dimension *dm = xalloc(sizeof *dm);
            onnx__tensor_shape_proto__dimension__init(dm);
            if (t->dims[d] >= 0) {
                dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                dm->dim_value = t->dims[d];
            } else if (t->sym[d]) {
                dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                dm->dim_param = t->sym[d];
            }
            s->dim[d] = dm;
        }
        tt->shape = s;
    }
    Onnx__TypeProto *tp = xalloc(sizeof *tp);
    onnx__type_proto__init(tp);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    return tp;
}

static Onnx__ValueInfoProto *value_info(const Tensor *t)
{
    Onnx__ValueInfoProto *v = xalloc(sizeof *v);
    onnx__value_info_proto__init(v);
    v->name = t->name;
    if (t->dtype && t->rank >= 0) v->type = type_proto(t);   /* else a branch not inferred (constant If) */
    return v;
}

/* What writing one model collects: the local functions (fused nodes of
 * every graph) and the external domains its nodes use. */
enum { MAX_EXTERNAL_DOMAINS = 8 };
typedef struct OnnxOut {
    Onnx__FunctionProto **funcs;
    int nfuncs, model_opset;
    const char *ext[MAX_EXTERNAL_DOMAINS];   /* the external domains used */
    int n_ext;
} OnnxOut;

static Onnx__GraphProto *graph_proto(OnnxOut *w, Graph *g);

static Onnx__AttributeProto *attr_proto(OnnxOut *w, const Attr *a, const char *where)
{
    Onnx__AttributeProto *p = xalloc(sizeof *p);
    onnx__attribute_proto__init(p);
    p->name = a->name;
    p->has_type = 1;
    p->type = (Onnx__AttributeProto__AttributeType)a->type;
    switch (a->type) {
    case AT_FLOAT: p->has_f = 1; p->f = (float)a->f; break;
    case AT_INT: p->has_i = 1; p->i = a->i; break;
    case AT_STRING:
        p->has_s = 1;
        p->s.data = (uint8_t *)a->s;
        p->s.len = strlen(a->s);
        break;
    case AT_TENSOR: p->t = tensor_proto(a->t, a->t->name ? a->t->name : a->name); break;
    case AT_GRAPH: p->g = graph_proto(w, a->g); break;   /* a body (If, Loop, Scan) */
    case AT_FLOATS:
        p->n_floats = (size_t)a->n;
        p->floats = xalloc(sizeof(float) * (size_t)(a->n + 1));
        for (int i = 0; i < a->n; i++) p->floats[i] = (float)a->floats[i];
        break;
    case AT_INTS:
        p->n_ints = (size_t)a->n;
        p->ints = a->ints;
        break;
    case AT_STRINGS:
        p->n_strings = (size_t)a->n;
        p->strings = xalloc(sizeof(ProtobufCBinaryData) * (size_t)(a->n + 1));
        for (int i = 0; i < a->n; i++) {
            p->strings[i].data = (uint8_t *)a->strings[i];
            p->strings[i].len = strlen(a->strings[i]);
        }
        break;
    default:
        fail_plain("--emit-onnx: %s: attribute '%s' is a graph or another kind onnx2c does not keep; "
                   "the optimized graph cannot be written as ONNX", where, a->name);
    }
    return p;
}

static Onnx__NodeProto *node_proto(const char *name, const char *op_type, const char *domain)
{
    Onnx__NodeProto *p = xalloc(sizeof *p);
    onnx__node_proto__init(p);
    p->name = (char *)name;
    p->op_type = (char *)op_type;
    p->domain = (char *)domain;
    return p;
}

/* "covers 'a', 'b'" (+ what a pass fused). */
static char *covers(const Node *n)
{
    size_t len = 64 + (n->fused ? strlen(n->fused) : 0);
    for (int i = 0; i < n->norigins; i++) len += strlen(n->origins[i]) + 4;
    char *s = xalloc(len), *d = s;
    d += sprintf(d, "onnx2c: %s covers", n->fused ? n->fused : n->op_type);
    for (int i = 0; i < n->norigins; i++) d += sprintf(d, "%s '%s'", i ? "," : "", n->origins[i]);
    if (!n->norigins) strcpy(d, " nothing (made by a pass)");
    return s;
}

/* Standard ops newer than opset 9 that a pass may insert into an older model
 * (the loaded nodes are valid at the model's opset): the opset they appeared in. */
static const struct { const char *op; int since; } SINCE[] = {
    {"Round", 11}, {"Range", 11}, {"CumSum", 11}, {"GatherElements", 11}, {"GatherND", 11},
    {"ScatterElements", 11}, {"ScatterND", 11}, {"BitShift", 11}, {"Det", 11},
    {"Celu", 12}, {"Einsum", 12}, {"HardSwish", 14}, {"Trilu", 14}, {"CastLike", 15},
    {"LayerNormalization", 17}, {"Mish", 18}, {"BitwiseAnd", 18}, {"BitwiseOr", 18},
    {"BitwiseXor", 18}, {"BitwiseNot", 18}, {"Gelu", 20}, {"RMSNormalization", 23}, {"TensorScatter", 24},
};

static int op_since(const char *op)
{
    for (size_t i = 0; i < sizeof SINCE / sizeof SINCE[0]; i++)
        if (!strcmp(SINCE[i].op, op)) return SINCE[i].since;
    return 1;
}

/* Gelu, Mish and LayerNormalization in older ops (their ONNX function
 * definitions); 0 if n is none of them or has optional outputs. */
static int expand_newer(const Node *n, Decomp *d)
{
    int dt = n->in[0]->dtype;
    const char *x = dc_in(d, 0), *y;
    if (!strcmp(n->op_type, "Mish")) {
        y = dc_op(d, "Mul", 2, x, dc_op(d, "Tanh", 1, dc_op(d, "Softplus", 1, x)));
    } else if (!strcmp(n->op_type, "Gelu")) {
        const char *inner;
        if (!strcmp(attr_s(n, "approximate"), "tanh")) {
            const char *x3 = dc_op(d, "Mul", 2, x, dc_op(d, "Mul", 2, x, x));
            const char *u = dc_op(d, "Add", 2, x, dc_op(d, "Mul", 2, x3, dc_const_f(d, dt, 0.044715)));
            inner = dc_op(d, "Tanh", 1, dc_op(d, "Mul", 2, u, dc_const_f(d, dt, 0.7978845608028654)));
        } else {
            inner = dc_op(d, "Erf", 1, dc_op(d, "Mul", 2, x, dc_const_f(d, dt, 0.7071067811865476)));
        }
        const char *h = dc_op(d, "Mul", 2, x, dc_const_f(d, dt, 0.5));
        y = dc_op(d, "Mul", 2, h, dc_op(d, "Add", 2, inner, dc_const_f(d, dt, 1.0)));
    } else if (!strcmp(n->op_type, "LayerNormalization") && n->nout == 1) {
        int rank = n->in[0]->rank;
        int64_t axis = attr_i(n, "axis"), axes[MAX_RANK];
        if (axis < 0) axis += rank;
        int na = 0;
        for (int64_t a = axis; a < rank; a++) axes[na++] = a;
        const char *mean = dc_op(d, "ReduceMean", 1, x);
        dc_attr_ints(d, "axes", axes, na);
        const char *dev = dc_op(d, "Sub", 2, x, mean);
        const char *var = dc_op(d, "ReduceMean", 1, dc_op(d, "Mul", 2, dev, dev));
        dc_attr_ints(d, "axes", axes, na);
        const char *sd = dc_op(d, "Sqrt", 1, dc_op(d, "Add", 2, var, dc_const_f(d, dt, attr_f(n, "epsilon"))));
        y = dc_op(d, "Mul", 2, dc_op(d, "Div", 2, dev, sd), dc_in(d, 1));
        if (*dc_in(d, 2)) y = dc_op(d, "Add", 2, y, dc_in(d, 2));
    } else {
        return 0;
    }
    dc_output(d, 0, y);
    return 1;
}

/* A standard node whose op is newer than the model's opset: its expansion
 * in older ops, or a body of the node itself (the function then imports
 * the opset it needs). */
static void single_node_body(const Node *n, Decomp *d)
{
    memset(d, 0, sizeof *d);
    d->node = n;
    d->opset = op_since(n->op_type);
    if (expand_newer(n, d)) return;
    const char **in = xalloc(sizeof(char *) * (size_t)(n->nin + 1));
    for (int j = 0; j < n->nin; j++) in[j] = dc_in(d, j);
    dc_op_n(d, n->op_type, in, n->nin, n->nout);
    d->nodes[0].attrs = n->attrs;
    d->nodes[0].nattrs = n->nattrs;
    const char **outs = d->nodes[0].out;
    for (int j = 0; j < n->nout; j++)
        dc_output(d, j, outs[j]);
}

/* ---- function bodies at the model's opset ------------------------------
 * onnxruntime runs an inlined function body at the model's opset, whatever
 * the function imports. A decomposition states the opset it needs at least;
 * the ops whose inputs and attributes traded places between opsets are
 * rewritten here to the model's opset (constant inputs made by the body's
 * Constant nodes <-> attributes), and HardSwish below opset 14 becomes
 * x * HardSigmoid(x). What is left needing a newer opset is written with
 * that opset imported, and a warning says onnxruntime may refuse it. */

static DNode *body_insert(Decomp *d, int at)
{
    DNode *nn = xalloc(sizeof(DNode) * (size_t)(d->n + 2));
    if (at) memcpy(nn, d->nodes, sizeof(DNode) * (size_t)at);
    if (d->n > at) memcpy(nn + at + 1, d->nodes + at, sizeof(DNode) * (size_t)(d->n - at));
    memset(&nn[at], 0, sizeof(DNode));
    d->nodes = nn;
    d->n++;
    d->cap = d->n + 1;
    return &nn[at];
}

/* The value of a body tensor made by a Constant node, or NULL. */
static const Tensor *body_const(const Decomp *d, const char *name)
{
    if (!name || !*name) return NULL;
    for (int i = 0; i < d->n; i++)
        if (!strcmp(d->nodes[i].op_type, "Constant") && d->nodes[i].nout && !strcmp(d->nodes[i].out[0], name))
            for (int a = 0; a < d->nodes[i].nattrs; a++)
                if (!strcmp(d->nodes[i].attrs[a].name, "value")) return d->nodes[i].attrs[a].t;
    return NULL;
}

static Attr *body_attr(DNode *n, const char *name)
{
    for (int a = 0; a < n->nattrs; a++)
        if (!strcmp(n->attrs[a].name, name)) return &n->attrs[a];
    return NULL;
}

static void body_drop_attr(DNode *n, const char *name)
{
    for (int a = 0; a < n->nattrs; a++)
        if (!strcmp(n->attrs[a].name, name)) {
            memmove(n->attrs + a, n->attrs + a + 1, sizeof(Attr) * (size_t)(n->nattrs - a - 1));
            n->nattrs--;
            return;
        }
}

/* Constant int64 inputs from..nin-1 of node i become int list attributes
 * names[k] (NULL: must be all ones, dropped; "" : dropped when absent).
 * 0 if an input is not a body constant. */
static int inputs_to_attrs(Decomp *d, int i, int from, const char *const *names, int nnames)
{
    DNode *n = &d->nodes[i];
    for (int j = from; j < n->nin && j < from + nnames; j++) {
        if (!*n->in[j]) continue;
        const Tensor *t = body_const(d, n->in[j]);
        if (!t || !dtype_is_int(t->dtype)) return 0;
        if (!names[j - from])
            for (int64_t e = 0; e < tensor_numel(t); e++)
                if (elem_i64(t->dtype, t->data, e) != 1) return 0;
    }
    if (n->nin > from + nnames) return 0;
    for (int j = from; j < n->nin; j++) {
        if (!*n->in[j] || !names[j - from]) continue;
        const Tensor *t = body_const(d, n->in[j]);
        Attr *a = dnode_add_attr(n, names[j - from], AT_INTS);
        a->n = (int)tensor_numel(t);
        a->ints = xalloc(sizeof(int64_t) * (size_t)(a->n + 1));
        for (int e = 0; e < a->n; e++) a->ints[e] = elem_i64(t->dtype, t->data, e);
    }
    n->nin = from;
    return 1;
}

/* Int list attributes names[] of node i become constant inputs from.. */
static void attrs_to_inputs(Decomp *d, int i, int from, const char *const *names, int nnames)
{
    int last = -1;
    for (int k = 0; k < nnames; k++)
        if (body_attr(&d->nodes[i], names[k])) last = k;
    if (last < 0) return;
    const char **in = xalloc(sizeof(char *) * (size_t)(from + last + 2));
    for (int j = 0; j < from && j < d->nodes[i].nin; j++) in[j] = d->nodes[i].in[j];
    for (int k = 0; k <= last; k++) {
        Attr *a = body_attr(&d->nodes[i], names[k]);
        if (!a) { in[from + k] = ""; continue; }
        Tensor *t = xalloc(sizeof *t);
        int64_t dims[1] = {a->n};
        t->name = xfmt("%s_c", names[k]);
        t->dtype = DT_INT64;
        t->input_index = t->output_index = -1;
        tensor_set_shape(t, 1, dims);
        tensor_alloc_data(t);
        if (a->n) memcpy(t->data, a->ints, sizeof(int64_t) * (size_t)a->n);
        DNode *c = body_insert(d, i);          /* before the node: i moves to i + 1 */
        c->op_type = "Constant";
        c->out = xalloc(sizeof(char *) * 2);
        c->out[0] = xfmt("t%d", ++d->ntemp);
        c->nout = 1;
        dnode_add_attr(c, "value", AT_TENSOR)->t = t;
        in[from + k] = c->out[0];
        i++;
        body_drop_attr(&d->nodes[i], names[k]);
    }
    d->nodes[i].in = in;
    d->nodes[i].nin = from + last + 1;
}

/* The opset a body node needs in the form it has (1 if any). */
static int body_node_since(const DNode *n)
{
    const char *op = n->op_type;
    if (!strcmp(op, "Clip") && n->nin > 1) return 11;
    if (!strcmp(op, "Slice") && n->nin > 1) return 10;
    if (!strcmp(op, "Pad") && n->nin > 1) return 11;
    if ((!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze") || !strcmp(op, "ReduceSum") || !strcmp(op, "Split")) &&
        n->nin > 1) return 13;
    if (!strncmp(op, "Reduce", 6) && n->nin > 1) return 18;
    return op_since(op);
}

/* Rewrites the body for default-domain opset `target`; returns the opset
 * the body needs afterwards. */
static int body_for_opset(Decomp *d, int target)
{
    static const char *const SLICE[] = {"starts", "ends", "axes", NULL};
    static const char *const AXES[] = {"axes"};
    static const char *const SPLIT[] = {"split"};
    static const char *const PADS[] = {"pads"};
    for (int i = 0; i < d->n; i++) {
        DNode *n = &d->nodes[i];
        const char *op = n->op_type;
        int reduce13 = !strcmp(op, "ReduceSum") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze");
        int reduce18 = !strncmp(op, "Reduce", 6) && strcmp(op, "ReduceSum");
        if (!strcmp(op, "Slice")) {
            if (target < 10) inputs_to_attrs(d, i, 1, SLICE, 4);
            else attrs_to_inputs(d, i, 1, SLICE, 3);
        } else if (reduce13 || reduce18 || !strcmp(op, "Split")) {
            int since = reduce18 ? 18 : 13;
            const char *const *names = !strcmp(op, "Split") ? SPLIT : AXES;
            if (target < since) inputs_to_attrs(d, i, 1, names, 1);
            else attrs_to_inputs(d, i, 1, names, 1);
        } else if (!strcmp(op, "Clip") && target < 11 && n->nin > 1) {
            const Tensor *lo = n->nin > 1 && *n->in[1] ? body_const(d, n->in[1]) : NULL;
            const Tensor *hi = n->nin > 2 && *n->in[2] ? body_const(d, n->in[2]) : NULL;
            if ((n->nin > 1 && *n->in[1] && !lo) || (n->nin > 2 && *n->in[2] && !hi)) continue;
            if (lo) dnode_add_attr(n, "min", AT_FLOAT)->f = elem_f64(lo->dtype, lo->data, 0);
            if (hi) dnode_add_attr(n, "max", AT_FLOAT)->f = elem_f64(hi->dtype, hi->data, 0);
            n->nin = 1;
        } else if (!strcmp(op, "Pad") && target < 11 && n->nin > 1) {
            const Tensor *v = n->nin > 2 && *n->in[2] ? body_const(d, n->in[2]) : NULL;
            if ((n->nin > 2 && *n->in[2] && !v) || n->nin > 3) continue;    /* run-time value, or axes */
            int nin = n->nin;
            n->nin = 2;
            if (!inputs_to_attrs(d, i, 1, PADS, 1)) {
                n->nin = nin;
                continue;
            }
            if (v) dnode_add_attr(n, "value", AT_FLOAT)->f = elem_f64(v->dtype, v->data, 0);
        } else if (!strcmp(op, "Pad") && target >= 11 && body_attr(n, "pads")) {
            const Attr *val = body_attr(n, "value");
            if (val && val->f != 0) continue;    /* a typed constant would be needed */
            body_drop_attr(n, "value");
            attrs_to_inputs(d, i, 1, PADS, 1);
        } else if (!strcmp(op, "HardSwish") && target < 14) {
            /* x * HardSigmoid(x, 1/6, 1/2) */
            const char *x = n->in[0], *y = n->out[0];
            const char *hs = xfmt("t%d", ++d->ntemp);
            n->op_type = "HardSigmoid";
            n->out = xalloc(sizeof(char *) * 2);
            n->out[0] = hs;
            dnode_add_attr(n, "alpha", AT_FLOAT)->f = 1.0 / 6;
            dnode_add_attr(n, "beta", AT_FLOAT)->f = 0.5;
            DNode *m = body_insert(d, i + 1);
            m->op_type = "Mul";
            m->in = xalloc(sizeof(char *) * 3);
            m->in[0] = x;
            m->in[1] = hs;
            m->nin = 2;
            m->out = xalloc(sizeof(char *) * 2);
            m->out[0] = y;
            m->nout = 1;
        }
    }
    int need = 1;
    for (int i = 0; i < d->n; i++) {
        int s = body_node_since(&d->nodes[i]);
        if (s > need) need = s;
    }
    return need;
}

/* The local function of fused node n: its decomposition (or, for a standard
 * op newer than the model, the node itself). */
static Onnx__FunctionProto *function_proto(OnnxOut *w, const Node *n, const char *fname, int opset_default)
{
    Decomp d;
    if (*n->domain) decompose_node(n, &d);
    else single_node_body(n, &d);
    int need = body_for_opset(&d, opset_default);
    Onnx__FunctionProto *f = xalloc(sizeof *f);
    onnx__function_proto__init(f);
    f->name = (char *)fname;
    f->domain = "onnx2c";
    f->doc_string = covers(n);
    f->n_input = (size_t)n->nin;
    f->input = xalloc(sizeof(char *) * (size_t)(n->nin + 1));
    for (int j = 0; j < n->nin; j++) f->input[j] = xfmt("x%d", j);
    f->n_output = (size_t)n->nout;
    f->output = xalloc(sizeof(char *) * (size_t)(n->nout + 1));
    for (int j = 0; j < n->nout; j++) {
        f->output[j] = xfmt("y%d", j);
        int made = 0;
        for (int i = 0; i < d.n; i++)
            for (int k = 0; k < d.nodes[i].nout; k++)
                if (!strcmp(d.nodes[i].out[k], f->output[j])) made = 1;
        if (!made)
            fail_plain("internal: --emit-onnx: the decomposition of %s '%s' does not compute its output %d",
                       n->op_type, n->name, j);
    }
    /* the call passes the node's attributes: declared (the body has them as values) */
    f->n_attribute = (size_t)n->nattrs;
    f->attribute = xalloc(sizeof(char *) * (size_t)(n->nattrs + 1));
    for (int i = 0; i < n->nattrs; i++) f->attribute[i] = n->attrs[i].name;
    f->n_node = (size_t)d.n;
    f->node = xalloc(sizeof(void *) * (size_t)(d.n + 1));
    for (int i = 0; i < d.n; i++) {
        const DNode *dn = &d.nodes[i];
        Onnx__NodeProto *p = node_proto(xfmt("%s/%d_%s", fname, i, dn->op_type), dn->op_type, "");
        p->n_input = (size_t)dn->nin;
        p->input = (char **)dn->in;
        p->n_output = (size_t)dn->nout;
        p->output = (char **)dn->out;
        p->n_attribute = (size_t)dn->nattrs;
        p->attribute = xalloc(sizeof(void *) * (size_t)(dn->nattrs + 1));
        for (int a = 0; a < dn->nattrs; a++) p->attribute[a] = attr_proto(w, &dn->attrs[a], fname);
        f->node[i] = p;
    }
    f->n_opset_import = 1;
    f->opset_import = xalloc(sizeof(void *) * 2);
    f->opset_import[0] = opset("", need > opset_default ? need : opset_default);
    if (need > opset_default)
        fprintf(stderr, "onnx2c: warning: --emit-onnx: %s '%s' is written with ops of opset %d; the model imports "
                "opset %d and onnxruntime may refuse the file\n", n->op_type, n->name, need, opset_default);
    return f;
}

/* A node of another tool's domain that onnx2c supports (com.microsoft's
 * contrib and quantized ops, ai.onnx.ml, ...): written as it is, its domain
 * imported at the model's version of it. */
static int external_domain(const Node *n) { return *n->domain && strcmp(n->domain, "onnx2c"); }
static Onnx__GraphProto *graph_proto(OnnxOut *w, Graph *g)
{
    /* refuse first: internal ops with no standard form */
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (*n->domain && !external_domain(n) && !(n->op && n->op->decompose))
            fail_plain("--emit-onnx: node '%s' is the internal onnx2c op %s, which has no decomposition into "
                       "standard ONNX ops; the optimized graph cannot be written as ONNX (try -O0 or "
                       "--disable-pass for the pass that made it)", n->name, n->op_type);
    }
    Onnx__GraphProto *gp = xalloc(sizeof *gp);
    onnx__graph_proto__init(gp);
    gp->name = g->name;
    gp->doc_string = "the graph as optimized by onnx2c";
    int cap = g->nnodes + g->noutputs + 1;
    gp->node = xalloc(sizeof(void *) * (size_t)cap);
    if (g->parent) cap += g->ncaptures;
    /* initializers: every constant a node reads, and constant graph outputs */
    for (int t = 0; t < g->ntensors; t++) g->tensors[t]->mark = 0;
    for (int k = 0; g->parent && k < g->ncaptures; k++) g->captures[k]->mark = 1;   /* the enclosing graph holds them */
    int icap = 16, ni = 0;
    Onnx__TensorProto **inits = xalloc(sizeof(void *) * (size_t)icap);
#define ADD_INIT(T, NAME) do {                                                      \
        if (ni == icap) {                                                           \
            Onnx__TensorProto **n2 = xalloc(sizeof(void *) * (size_t)icap * 2);     \
            memcpy(n2, inits, sizeof(void *) * (size_t)ni);                         \
            inits = n2;                                                             \
            icap *= 2;                                                              \
        }                                                                           \
        inits[ni++] = tensor_proto((T), (NAME));                                    \
    } while (0)
    int vcap = 1, nv = 0;
    for (int i = 0; i < g->nnodes; i++) vcap += g->nodes[i]->nout;
    Onnx__ValueInfoProto **vis = xalloc(sizeof(void *) * (size_t)vcap);
    /* a body reads a name of an enclosing scope; when a pass renamed that
     * value there, an Identity gives it the body's name */
    for (int k = 0; g->parent && k < g->ncaptures; k++) {
        Tensor *c = g->captures[k];
        const Node *owner = c->producer;   /* the view lowering made (ops/control.c) */
        if (c->data || !owner || !owner->in[0] || !strcmp(owner->in[0]->name, c->name)) continue;
        Onnx__NodeProto *p = node_proto(xfmt("%s__onnx2c_capture", c->name), "Identity", "");
        p->n_input = p->n_output = 1;
        p->input = xalloc(sizeof(char *));
        p->input[0] = owner->in[0]->name;
        p->output = xalloc(sizeof(char *));
        p->output[0] = c->name;
        gp->node[gp->n_node++] = p;
    }
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        Onnx__NodeProto *p;
        if (external_domain(n)) {
            p = node_proto(n->name, n->op_type, n->domain);
            int j = 0;
            while (j < w->n_ext && strcmp(w->ext[j], n->domain)) j++;
            if (j == w->n_ext && w->n_ext < MAX_EXTERNAL_DOMAINS) w->ext[w->n_ext++] = n->domain;
        } else if (*n->domain || op_since(n->op_type) > w->model_opset) {
            /* OP_INDEX: the node's index (in a body, past every index of the graphs) */
            const char *fname = xfmt("%s_%d", n->op_type, g->parent ? 1000000 + w->nfuncs : i);
            Onnx__FunctionProto **f2 = xalloc(sizeof(void *) * (size_t)(w->nfuncs + 2));
            if (w->nfuncs) memcpy(f2, w->funcs, sizeof(void *) * (size_t)w->nfuncs);
            w->funcs = f2;
            w->funcs[w->nfuncs++] = function_proto(w, n, fname, w->model_opset);
            p = node_proto(n->name, fname, "onnx2c");
        } else {
            p = node_proto(n->name, n->op_type, "");
        }
        p->doc_string = covers(n);
        int nin = node_formal_inputs(n);   /* a body's captures are no ONNX inputs (but constants it reads are here) */
        p->n_input = (size_t)nin;
        p->input = xalloc(sizeof(char *) * (size_t)(n->nin + 1));
        for (int j = 0; j < n->nin; j++) {
            Tensor *t = n->in[j];
            if (j < nin) p->input[j] = t ? t->name : "";
            if (t && t->data && !t->is_input && !t->mark) {
                t->mark = 1;
                ADD_INIT(t, t->name);
            }
        }
        p->n_output = (size_t)n->nout;
        p->output = xalloc(sizeof(char *) * (size_t)(n->nout + 1));
        for (int j = 0; j < n->nout; j++) {
            Tensor *t = n->out[j];
            p->output[j] = t ? t->name : "";
            if (t && !t->is_output) vis[nv++] = value_info(t);
        }
        p->n_attribute = (size_t)n->nattrs;
        p->attribute = xalloc(sizeof(void *) * (size_t)(n->nattrs + 1));
        for (int a = 0; a < n->nattrs; a++) p->attribute[a] = attr_proto(w, &n->attrs[a], n->name);
        gp->node[gp->n_node++] = p;
    }
    /* a graph output that is a constant: an initializer under another name, copied by Identity */
    for (int k = 0; k < g->noutputs; k++) {
        Tensor *t = g->outputs[k];
        if (!t->data || t->is_input || t->producer) continue;
        if (t->mark == 2) continue;
        t->mark = 2;
        const char *cname = xfmt("%s__onnx2c_const", t->name);
        ADD_INIT(t, cname);
        Onnx__NodeProto *p = node_proto(xfmt("%s__onnx2c_output", t->name), "Identity", "");
        p->doc_string = "onnx2c: a graph output the compiler computed at compile time";
        p->n_input = p->n_output = 1;
        p->input = xalloc(sizeof(char *));
        p->input[0] = (char *)cname;
        p->output = xalloc(sizeof(char *));
        p->output[0] = t->name;
        gp->node[gp->n_node++] = p;
    }
#undef ADD_INIT
    gp->n_initializer = (size_t)ni;
    gp->initializer = inits;
    gp->n_value_info = (size_t)nv;
    gp->value_info = vis;
    gp->n_input = (size_t)g->ninputs;
    gp->input = xalloc(sizeof(void *) * (size_t)(g->ninputs + 1));
    for (int k = 0; k < g->ninputs; k++) gp->input[k] = value_info(g->inputs[k]);
    gp->n_output = (size_t)g->noutputs;
    gp->output = xalloc(sizeof(void *) * (size_t)(g->noutputs + 1));
    for (int k = 0; k < g->noutputs; k++) gp->output[k] = value_info(g->outputs[k]);
    return gp;
}

static Onnx__ModelProto *build_model(Graph *g)
{
    OnnxOut out = {0}, *w = &out;
    w->model_opset = g->opset;
    Onnx__GraphProto *gp = graph_proto(w, g);
    Onnx__ModelProto *m = xalloc(sizeof *m);
    onnx__model_proto__init(m);
    m->has_ir_version = 1;
    m->ir_version = g->ir_version > 8 ? g->ir_version : 8;   /* 8: local functions */
    m->producer_name = "onnx2c";
    m->producer_version = "0.1.0";
    m->doc_string = xfmt("optimized by onnx2c%s%s", *g->producer ? " from a model by " : "", g->producer);
    m->graph = gp;
    m->n_opset_import = 1;
    m->opset_import = xalloc(sizeof(void *) * (size_t)(3 + w->n_ext));
    m->opset_import[0] = opset("", g->opset);
    if (w->nfuncs) m->opset_import[m->n_opset_import++] = opset("onnx2c", 1);
    for (int j = 0; j < w->n_ext; j++) {   /* the version the model imported (com.microsoft has only 1) */
        int v = 1;
        for (int d = 0; d < g->ndom_opsets; d++)
            if (!strcmp(g->dom_opsets[d].domain, w->ext[j])) v = g->dom_opsets[d].version;
        m->opset_import[m->n_opset_import++] = opset(w->ext[j], v);
    }
    m->n_functions = (size_t)w->nfuncs;
    m->functions = w->funcs;
    return m;
}

uint8_t *emit_onnx_buffer(Graph *g, size_t *len)
{
    Onnx__ModelProto *m = build_model(g);
    *len = onnx__model_proto__get_packed_size(m);
    uint8_t *buf = xalloc(*len + 1);
    onnx__model_proto__pack(m, buf);
    return buf;
}

void emit_onnx(Graph *g, FILE *f)
{
    size_t len;
    uint8_t *buf = emit_onnx_buffer(g, &len);
    fwrite(buf, 1, len, f);
}
