/* Loading: ONNX ModelProto (protobuf-c) -> IR. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "onnx.pb-c.h"

static Graph *G;

static char *dup_bytes(ProtobufCBinaryData b)
{
    char *s = xalloc(b.len + 1);
    if (b.len) memcpy(s, b.data, b.len);
    return s;
}

/* External data files are read once each (many tensors share one file);
 * the cache is emptied for every model. */
static struct { char *path; uint8_t *buf; size_t len; } cache[16];
static int ncache;

/* External data: the file must lie inside the model's folder. */
static const uint8_t *external_data(Onnx__TensorProto *tp, size_t want)
{
    const char *loc = NULL;
    long long off = 0, len = -1;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        Onnx__StringStringEntryProto *e = tp->external_data[i];
        if (!e->key || !e->value) continue;
        if (!strcmp(e->key, "location")) loc = e->value;
        else if (!strcmp(e->key, "offset")) off = strtoll(e->value, NULL, 10);
        else if (!strcmp(e->key, "length")) len = strtoll(e->value, NULL, 10);
    }
    if (!loc || !*loc) fail_plain("tensor '%s' has external data without a location", tp->name);
    if (loc[0] == '/' || loc[0] == '\\' || strstr(loc, "..") || strchr(loc, ':'))
        fail_plain("tensor '%s': external data location '%s' is outside the model's folder; "
                   "keep external data files next to the model", tp->name, loc);
    char *path = xfmt("%s/%s", G->model_dir, loc);
    size_t flen;
    uint8_t *buf = NULL;
    for (int i = 0; i < ncache; i++)
        if (!strcmp(cache[i].path, path)) { buf = cache[i].buf; flen = cache[i].len; }
    if (!buf) {
        buf = file_map(path, &flen, "external data file");
        int slot = ncache < 16 ? ncache++ : 0;
        cache[slot].path = path;
        cache[slot].buf = buf;
        cache[slot].len = flen;
    }
    if (off < 0 || (size_t)off > flen) fail_plain("tensor '%s': offset %lld is past the end of '%s'", tp->name, off, path);
    if (len < 0) len = (long long)(flen - (size_t)off);
    if ((unsigned long long)len > flen - (size_t)off)
        fail_plain("tensor '%s': external data in '%s' should hold %lld bytes from offset %lld, but the file has "
                   "only %zu bytes", tp->name, path, len, off, flen);
    if ((size_t)len != want)
        fail_plain("tensor '%s': external data in '%s' holds %lld bytes, the tensor needs %zu",
                   tp->name, path, len, want);
    Graph *root = G;
    while (root->parent) root = root->parent;
    root->model_bytes += (int64_t)want;
    return buf + off;
}

/* Bits an element of type dt takes in an ONNX file: 4 (int4, uint4,
 * float4e2m1), 2 (int2, uint2) or 8 (the others; their data is read
 * whole). */
static int narrow_bits(int dt)
{
    if (dt == DT_INT4 || dt == DT_UINT4 || dt == DT_FLOAT4E2M1) return 4;
    if (dt == DT_INT2 || dt == DT_UINT2) return 2;
    return 8;
}

/* Packed elements of `bits` bits (the first in the lowest bits of the
 * first byte) -> one element a byte, in its low bits. */
static void unpack_bits(uint8_t *dst, const uint8_t *src, int64_t numel, int bits)
{
    const int per = 8 / bits;
    const unsigned mask = (1u << bits) - 1u;
    for (int64_t i = 0; i < numel; i++)
        dst[i] = (uint8_t)((src[i / per] >> (bits * (int)(i % per))) & mask);
}

/* A TensorProto's shape into t (rank and dims); returns its element count. */
static int64_t shape_from_proto(Onnx__TensorProto *tp, Tensor *t)
{
    if (tp->n_dims > MAX_RANK) fail_plain("tensor '%s' has rank %zu; at most %d is supported", tp->name, tp->n_dims, MAX_RANK);
    t->rank = (int)tp->n_dims;
    int64_t numel = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0) fail_plain("tensor '%s' has a negative dimension", tp->name);
        t->dims[i] = tp->dims[i];
        if (tp->dims[i] && numel > INT64_MAX / tp->dims[i]) fail_plain("tensor '%s' is too large", tp->name);
        numel *= tp->dims[i];
    }
    return numel;
}

/* A string TensorProto (string_data) -> constant tensor whose elements are
 * `const char *` (ops/strings.c); bytes kept as they are (NUL-terminated
 * copies: a string holding a NUL byte is refused). */
static void strings_from_proto(Onnx__TensorProto *tp, Tensor *t)
{
    int64_t numel = shape_from_proto(tp, t);
    if ((tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) || tp->has_raw_data)
        fail_plain("string tensor '%s' is stored as raw or external data; strings must be in string_data", tp->name);
    t->dtype = DT_STRING;
    if (tp->n_string_data != (size_t)numel)
        fail_plain("tensor '%s' holds %zu strings; its shape needs %lld", tp->name, tp->n_string_data, (long long)numel);
    const char **d = tensor_alloc_data(t);
    for (size_t i = 0; i < tp->n_string_data; i++) {
        if (tp->string_data[i].len && memchr(tp->string_data[i].data, 0, tp->string_data[i].len))
            fail_plain("string tensor '%s': element %zu holds a NUL byte, which a C string cannot carry", tp->name, i);
        d[i] = dup_bytes(tp->string_data[i]);
    }
}

/* TensorProto -> constant tensor (type, shape and data). */
static void tensor_from_proto(Onnx__TensorProto *tp, Tensor *t)
{
    int dt = tp->has_data_type ? tp->data_type : 0;
    if (dt == DT_STRING) { strings_from_proto(tp, t); return; }
    if (!dtype_supported(dt))
        fail_plain("tensor '%s' has data type %s, which onnx2c does not support yet", tp->name ? tp->name : "", dtype_name(dt));
    if (tp->segment) fail_plain("tensor '%s' is segmented, which is not supported", tp->name);
    t->dtype = dt;
    int64_t numel = shape_from_proto(tp, t);
    size_t es = dtype_size(dt);
    if ((uint64_t)numel > (uint64_t)SIZE_MAX / 8) fail_plain("tensor '%s' is too large", tp->name);
    size_t bytes = (size_t)numel * es;
    /* the 4-bit types are stored two to a byte, the 2-bit ones four (the
     * first element in the lowest bits); in memory one element a byte */
    int bits = narrow_bits(dt);
    size_t stored = bits == 8 ? bytes : ((size_t)numel * (size_t)bits + 7) / 8;
    /* check the data's size before allocating: the shape alone can be huge */
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        const uint8_t *src = external_data(tp, stored);
        if (bits != 8) unpack_bits(tensor_alloc_data(t), src, numel, bits);
        else if (bytes && (uintptr_t)src % es == 0) t->data = (void *)(uintptr_t)src;   /* in the mapping: no copy */
        else memcpy(tensor_alloc_data(t), src, bytes);
        return;
    }
    if (tp->has_raw_data) {
        if (tp->raw_data.len != stored)
            fail_plain("tensor '%s' holds %zu bytes of raw data; its type and shape need %zu", tp->name, tp->raw_data.len, stored);
        uint8_t *d = tensor_alloc_data(t);
        if (bits != 8) unpack_bits(d, tp->raw_data.data, numel, bits);
        else if (bytes) memcpy(d, tp->raw_data.data, bytes);
        return;
    }
    size_t n = 0;
    switch (dt) {
    case DT_FLOAT: n = tp->n_float_data; break;
    case DT_DOUBLE: n = tp->n_double_data; break;
    case DT_INT64: n = tp->n_int64_data; break;
    case DT_UINT32: case DT_UINT64: n = tp->n_uint64_data; break;
    default: n = tp->n_int32_data; break;
    }
    if (bits != 8) {   /* int32_data: each holds one packed byte */
        if (n != stored)
            fail_plain("tensor '%s' holds %zu values; its shape needs %zu packed bytes", tp->name, n, stored);
        uint8_t *pk = xalloc(stored ? stored : 1);
        for (size_t i = 0; i < n; i++) pk[i] = (uint8_t)tp->int32_data[i];
        unpack_bits(tensor_alloc_data(t), pk, numel, bits);
        return;
    }
    if (n != (size_t)numel)
        fail_plain("tensor '%s' holds %zu values; its shape needs %lld", tp->name, n, (long long)numel);
    uint8_t *d = tensor_alloc_data(t);
    for (size_t i = 0; i < n; i++) {
        switch (dt) {
        case DT_FLOAT: ((float *)d)[i] = tp->float_data[i]; break;
        case DT_DOUBLE: ((double *)d)[i] = tp->double_data[i]; break;
        case DT_INT64: ((int64_t *)d)[i] = tp->int64_data[i]; break;
        case DT_UINT32: ((uint32_t *)d)[i] = (uint32_t)tp->uint64_data[i]; break;
        case DT_UINT64: ((uint64_t *)d)[i] = tp->uint64_data[i]; break;
        case DT_INT32: ((int32_t *)d)[i] = tp->int32_data[i]; break;
        case DT_INT16: ((int16_t *)d)[i] = (int16_t)tp->int32_data[i]; break;
        case DT_UINT16: ((uint16_t *)d)[i] = (uint16_t)tp->int32_data[i]; break;
        case DT_INT8: ((int8_t *)d)[i] = (int8_t)tp->int32_data[i]; break;
        case DT_UINT8: ((uint8_t *)d)[i] = (uint8_t)tp->int32_data[i]; break;
        case DT_BOOL: ((uint8_t *)d)[i] = tp->int32_data[i] != 0; break;
        case DT_FLOAT16: case DT_BFLOAT16: ((uint16_t *)d)[i] = (uint16_t)tp->int32_data[i]; break;
        default: d[i] = (uint8_t)tp->int32_data[i]; break;   /* float8: the bit pattern */
        }
    }
}

/* A graph input/output declared as a sequence of tensors, an optional
 * sequence or an optional tensor output: t->vkind says which (ops/sequence.c
 * flattens them into slots), the element's tensor type is returned. */
static Onnx__TypeProto *seq_io_type(Onnx__TypeProto *tp, Tensor *t)
{
    int opt = 0;
    if (tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && tp->optional_type && tp->optional_type->elem_type) {
        tp = tp->optional_type->elem_type;
        opt = 1;
        t->vkind = VK_OPT_TENSOR;
    }
    if (tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && tp->sequence_type && tp->sequence_type->elem_type) {
        tp = tp->sequence_type->elem_type;
        t->vkind = opt ? VK_OPT_SEQ : VK_SEQ;
    }
    return tp;
}

/* ValueInfoProto -> declared type and shape (symbolic dims kept by name). */
/* A declared shape's known dims must fit what tensor_set_shape allows
 * (ir.h TENSOR_MAX_BYTES): a declared shape that inference does not
 * replace is used as it is. */
static void check_declared_size(const Tensor *t)
{
    int64_t n = 1, es = dtype_size(t->dtype) ? (int64_t)dtype_size(t->dtype) : 8;
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] == 0) return;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0) continue;
        if (t->dims[i] > TENSOR_MAX_BYTES / es / n)
            fail_plain("tensor '%s' is declared with shape [%s], which is too large: more than %lld bytes (2^%d), "
                       "which no generated code can address", t->name, tensor_shape_str(t),
                       (long long)TENSOR_MAX_BYTES, TENSOR_MAX_BYTES_LOG2);
        n *= t->dims[i];
    }
}

static void value_info(Onnx__ValueInfoProto *vi, Tensor *t, int is_io)
{
    Onnx__TypeProto *tp = vi->type;
    if (!tp) {
        if (is_io) fail_plain("graph %s '%s' has no type", t->is_output ? "output" : "input", t->name);
        return;
    }
    if (is_io && tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && t->is_input && !t->is_output &&
        tp->optional_type && tp->optional_type->elem_type &&
        tp->optional_type->elem_type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
        tp = tp->optional_type->elem_type;   /* an optional tensor input: the caller may pass NULL (ops/control.c) */
        t->optional = 1;
    }
    if (is_io) tp = seq_io_type(tp, t);   /* a sequence or an optional: its element type (ops/sequence.c) */
    if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
        if (is_io) fail_plain("graph input/output '%s' is not a tensor, a sequence of tensors or an optional of one of them "
                              "(maps and nested sequences are not supported)", t->name);
        return;
    }
    Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    int dt = tt->has_elem_type ? tt->elem_type : 0;
    if (is_io && !dtype_supported(dt) && dt != DT_STRING)   /* strings: ops/strings.c */
        fail_plain("graph input/output '%s' has data type %s, which onnx2c does not support yet", t->name, dtype_name(dt));
    if (!t->dtype) t->dtype = dt;
    if (!tt->shape || t->rank >= 0) return;
    if (tt->shape->n_dim > MAX_RANK) fail_plain("tensor '%s' has rank %zu; at most %d is supported", t->name, tt->shape->n_dim, MAX_RANK);
    t->rank = (int)tt->shape->n_dim;
    for (size_t i = 0; i < tt->shape->n_dim; i++) {
        Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        t->dims[i] = -1;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0)
            t->dims[i] = d->dim_value;
        else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param && *d->dim_param)
            t->sym[i] = xstrdup(d->dim_param);
    }
    check_declared_size(t);
}

static Graph *load_subgraph(Onnx__GraphProto *gp);
static void load_graph(Onnx__GraphProto *gp);

static void load_attr(Attr *a, Onnx__AttributeProto *p)
{
    a->name = xstrdup(p->name ? p->name : "");
    int ty = p->has_type ? (int)p->type : 0;
    if (!ty) { /* IR version 1 style: infer from the field that is set */
        if (p->has_f) ty = AT_FLOAT;
        else if (p->has_i) ty = AT_INT;
        else if (p->has_s) ty = AT_STRING;
        else if (p->t) ty = AT_TENSOR;
        else if (p->g) ty = AT_GRAPH;
        else if (p->n_floats) ty = AT_FLOATS;
        else if (p->n_ints) ty = AT_INTS;
        else if (p->n_strings) ty = AT_STRINGS;
    }
    a->type = ty;
    switch (ty) {
    case AT_FLOAT: a->f = p->f; break;
    case AT_INT: a->i = p->i; break;
    case AT_STRING: a->s = dup_bytes(p->s); break;
    case AT_TENSOR:
        if (!p->t) fail_plain("attribute '%s' has no tensor", a->name);
        a->t = xalloc(sizeof(Tensor));
        a->t->name = xstrdup(p->t->name ? p->t->name : a->name);
        tensor_from_proto(p->t, a->t);
        break;
    case AT_FLOATS:
        a->n = (int)p->n_floats;
        a->floats = xalloc(sizeof(double) * p->n_floats);
        for (size_t i = 0; i < p->n_floats; i++) a->floats[i] = p->floats[i];
        break;
    case AT_INTS:
        a->n = (int)p->n_ints;
        a->ints = xalloc(sizeof(int64_t) * p->n_ints);
        for (size_t i = 0; i < p->n_ints; i++) a->ints[i] = p->ints[i];
        break;
    case AT_STRINGS:
        a->n = (int)p->n_strings;
        a->strings = xalloc(sizeof(char *) * p->n_strings);
        for (size_t i = 0; i < p->n_strings; i++) a->strings[i] = dup_bytes(p->strings[i]);
        break;
    case AT_GRAPH:   /* a subgraph (If, Loop, Scan): loaded as a nested Graph */
        if (!p->g) fail_plain("attribute '%s' has no graph", a->name);
        a->g = load_subgraph(p->g);
        break;
    default: break; /* others: kept as type only; ops that need them are refused */
    }
}

/* A subgraph: its own tensors; names it does not define (inputs,
 * initializers, its nodes' outputs) are read from the enclosing scopes, as
 * its captures (ir.h). Loaded while G is the enclosing graph; a name it
 * captures is looked up there (and captured by that graph in turn if it is
 * a subgraph whose scope does not define it either). */
static Graph *load_subgraph(Onnx__GraphProto *gp)
{
    Graph *outer = G, *sub = xalloc(sizeof *sub);
    sub->parent = outer;
    sub->opset = outer->opset;
    sub->ir_version = outer->ir_version;
    sub->model_dir = outer->model_dir;
    G = sub;
    load_graph(gp);
    G = outer;
    return sub;
}

/* After a node's attributes are loaded: the captures of its subgraphs
 * become extra inputs of the node (after its ONNX inputs), so ordering,
 * liveness and the passes see what its bodies read. */
static void bind_captures(Node *n)
{
    for (int a = 0; a < n->nattrs; a++) {
        Graph *sub = n->attrs[a].g;
        if (!sub) continue;
        for (int k = 0; k < sub->ncaptures; k++) {
            Tensor *t = graph_tensor(G, sub->captures[k]->name);
            int j = 0;
            while (j < n->nin && n->in[j] != t) j++;
            if (j == n->nin) {
                Tensor **in = xalloc(sizeof(Tensor *) * (size_t)(n->nin + 2));
                memcpy(in, n->in, sizeof(Tensor *) * (size_t)n->nin);
                in[n->nin++] = t;
                n->in = in;
            }
            sub->capture_in[k] = j;
        }
    }
}

static void load_graph(Onnx__GraphProto *gp)
{
    int sub = G->parent != NULL;
    G->name = xstrdup(gp->name ? gp->name : "model");
    if (gp->n_sparse_initializer)
        fail_plain("the model has sparse initializers, which are not supported");
    for (size_t i = 0; i < gp->n_initializer; i++) {
        Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp->name || !*tp->name) fail_plain("initializer %zu has no name", i);
        Tensor *t = graph_tensor(G, tp->name);
        tensor_from_proto(tp, t);
    }
    G->inputs = xalloc(sizeof(Tensor *) * (gp->n_input + 1));
    for (size_t i = 0; i < gp->n_input; i++) {
        Onnx__ValueInfoProto *vi = gp->input[i];
        if (!vi->name || !*vi->name) fail_plain("graph input %zu has no name", i);
        Tensor *t = graph_tensor(G, vi->name);
        if (t->data && !sub) continue;  /* an initializer also listed as input: a constant */
        if (t->data) fail_plain("subgraph '%s': input '%s' is also an initializer", G->name, vi->name);
        if (t->is_input) fail_plain("graph input '%s' is listed twice", vi->name);
        t->is_input = 1;
        t->input_index = G->ninputs;
        value_info(vi, t, !sub);   /* a body's inputs take their types from the node */
        G->inputs[G->ninputs++] = t;
    }
    G->outputs = xalloc(sizeof(Tensor *) * (gp->n_output + 1));
    for (size_t i = 0; i < gp->n_output; i++) {
        Onnx__ValueInfoProto *vi = gp->output[i];
        if (!vi->name || !*vi->name) fail_plain("graph output %zu has no name", i);
        Tensor *t = graph_tensor(G, vi->name);
        if (!sub) {   /* a body's outputs are no caller buffers */
            if (!t->is_output) { t->is_output = 1; t->output_index = (int)i; }
            value_info(vi, t, 1);
        }
        G->outputs[G->noutputs++] = t;
    }
    if (!G->noutputs && !sub) fail_plain("the graph has no outputs");   /* a body's: its node checks */
    for (size_t i = 0; i < gp->n_node; i++) {
        Onnx__NodeProto *np = gp->node[i];
        Node *n = graph_add_node(G);
        n->name = xstrdup(np->name && *np->name ? np->name : xfmt("%s_%zu", np->op_type ? np->op_type : "node", i));
        n->op_type = xstrdup(np->op_type ? np->op_type : "");
        n->domain = xstrdup(np->domain ? np->domain : "");
        if (!strcmp(n->domain, "ai.onnx")) n->domain = "";
        if (!*n->op_type) fail_plain("node %zu ('%s') has no op_type", i, n->name);
        /* --emit-onnx writes a fused node (and a standard op newer than the model's opset)
         * as a call of local function OP_INDEX (domain onnx2c) */
        if (!strcmp(n->domain, "onnx2c") && !op_find("onnx2c", n->op_type)) {
            char *us = strrchr(n->op_type, '_');
            if (us && us[1] && strspn(us + 1, "0123456789") == strlen(us + 1)) {
                *us = 0;
                if (op_find("", n->op_type) && !op_find("onnx2c", n->op_type)) n->domain = "";  /* a newer standard op */
                else if (!op_find("onnx2c", n->op_type)) *us = '_';
            }
        }
        n->origins = xalloc(sizeof(char *));
        n->origins[0] = n->name;
        n->norigins = 1;
        n->nin = (int)np->n_input;
        n->in = xalloc(sizeof(Tensor *) * (np->n_input + 1));
        for (size_t j = 0; j < np->n_input; j++)
            n->in[j] = np->input[j] && *np->input[j] ? graph_tensor(G, np->input[j]) : NULL;
        while (n->nin > 0 && !n->in[n->nin - 1]) n->nin--;  /* trailing omitted inputs */
        n->nout = (int)np->n_output;
        n->out = xalloc(sizeof(Tensor *) * (np->n_output + 1));
        for (size_t j = 0; j < np->n_output; j++) {
            if (!np->output[j] || !*np->output[j]) continue;
            Tensor *t = graph_tensor(G, np->output[j]);
            if (t->producer || t->data || t->is_input)
                fail_plain("tensor '%s' is produced twice (by node '%s' and earlier)", t->name, n->name);
            t->producer = n;
            n->out[j] = t;
        }
        while (n->nout > 0 && !n->out[n->nout - 1]) n->nout--;
        n->nattrs = (int)np->n_attribute;
        n->attrs = xalloc(sizeof(Attr) * (np->n_attribute + 1));
        for (size_t j = 0; j < np->n_attribute; j++) load_attr(&n->attrs[j], np->attribute[j]);
        bind_captures(n);
    }
    if (sub) {   /* the names this subgraph reads from enclosing scopes */
        G->captures = xalloc(sizeof(Tensor *) * (size_t)(G->ntensors + 1));
        G->capture_in = xalloc(sizeof(int) * (size_t)(G->ntensors + 1));
        for (int t = 0; t < G->ntensors; t++) {
            Tensor *x = G->tensors[t];
            if (!x->producer && !x->data && !x->is_input) G->captures[G->ncaptures++] = x;
        }
    }
    /* declared types of intermediates are not needed: inference computes them */
}

Graph *load_model_buffer(const uint8_t *buf, size_t len, const char *path)
{
    if (len == 0) fail_plain("the file is empty; expected an ONNX model");
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    if (!m) fail_plain("not a valid ONNX model: the protobuf data is truncated or corrupt");
    G = xalloc(sizeof *G);
    G->ops = op_table();   /* the graph's ops are looked up in it (graph_op) */
    G->model_bytes = (int64_t)len;   /* and its external data's (external_data) */
    G->model_hash = fnv1a64(FNV1A64_INIT, buf, len);   /* (calibrate.c's cache) */
    ncache = 0;
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0; else dir = ".";
    G->model_dir = dir;
    /* the ModelProto is freed on every path: copy what we keep */
    jmp_buf here, *outer = diag_jmp;
    /* inline.c may swap in a node list with local functions expanded; the
     * model's own list goes back before protobuf-c frees the model */
    static Onnx__NodeProto **own_nodes;
    static size_t own_n;
    own_nodes = m->graph ? m->graph->node : NULL;
    own_n = m->graph ? m->graph->n_node : 0;
    diag_jmp = &here;
    if (setjmp(here)) {
        diag_jmp = outer;
        if (m->graph) { m->graph->node = own_nodes; m->graph->n_node = own_n; }
        onnx__model_proto__free_unpacked(m, NULL);
        if (outer) longjmp(*outer, 1);
        fprintf(stderr, "onnx2c: %s\n", diag_msg);
        exit(1);
    }
    if (!m->graph) fail_plain("not an ONNX model: it has no graph (is this really a .onnx file?)");
    if (!m->has_ir_version) fail_plain("not an ONNX model: ir_version is missing");
    if (m->ir_version < 3) fail_plain("ONNX IR version %lld is too old; onnx2c reads IR version 3 and later", (long long)m->ir_version);
    G->ir_version = m->ir_version;
    G->producer = xstrdup(m->producer_name ? m->producer_name : "");
    G->opset = 0;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        Onnx__OperatorSetIdProto *os = m->opset_import[i];
        if (!os->domain || !*os->domain || !strcmp(os->domain, "ai.onnx")) G->opset = (int)os->version;
        else if (G->ndom_opsets < (int)(sizeof G->dom_opsets / sizeof G->dom_opsets[0])) {
            G->dom_opsets[G->ndom_opsets].domain = xstrdup(os->domain);
            G->dom_opsets[G->ndom_opsets++].version = (int)os->version;
        }
    }
    if (!G->opset) G->opset = 1;
    inline_functions(m, &own_nodes, &own_n);
    load_graph(m->graph);
    diag_jmp = outer;
    m->graph->node = own_nodes;
    m->graph->n_node = own_n;
    onnx__model_proto__free_unpacked(m, NULL);
    return G;
}

/* --bind: the value of a graph input, from a serialized TensorProto. */
void load_tensor_file(const char *path, Tensor *t, const char *what)
{
    size_t len;
    uint8_t *buf = file_read(path, &len, what);
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, buf);
    if (!tp) fail_plain("%s: not a serialized ONNX TensorProto", path);
    tensor_from_proto(tp, t);
    onnx__tensor_proto__free_unpacked(tp, NULL);
}

Graph *load_model(const char *path)
{
    size_t len;
    uint8_t *buf = file_read(path, &len, "model file");
    return load_model_buffer(buf, len, path);
}
