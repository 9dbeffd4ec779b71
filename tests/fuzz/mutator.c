/* A structure-aware mutator for fuzz_compile: the input is parsed as an
 * ONNX ModelProto (protobuf-c), one to four edits are made to it (shapes,
 * attributes, element types, op names and domains, opset versions, node
 * input/output names, initializer sizes against their dims, node order),
 * and it is serialized again. An input that does not parse, a result that
 * does not fit, and one call in five (or every call when the environment
 * sets O2C_FUZZ_BYTES=1) get libFuzzer's own byte-level mutation.
 * Deterministic given libFuzzer's seed.
 *
 * Memory: the model is unpacked with an allocator that records every
 * block, the edits allocate from the same record, and everything is freed
 * at once after packing (protobuf-c's free_unpacked is never called, so
 * edited pointers need no care). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* ---- the recording allocator ---- */
static void **blocks;
static size_t nblocks, capblocks;

static void *rec_alloc(void *ud, size_t n)
{
    (void)ud;
    if (nblocks == capblocks) {
        capblocks = capblocks ? 2 * capblocks : 256;
        blocks = realloc(blocks, capblocks * sizeof *blocks);
        if (!blocks) abort();
    }
    void *p = calloc(1, n ? n : 1);
    if (!p) abort();
    blocks[nblocks++] = p;
    return p;
}

static void rec_free(void *ud, void *p) { (void)ud; (void)p; }

static void rec_release(void)
{
    for (size_t i = 0; i < nblocks; i++) free(blocks[i]);
    nblocks = 0;
}

static ProtobufCAllocator rec = {rec_alloc, rec_free, NULL};

static char *rec_str(const char *s)
{
    if (!s) s = "";
    size_t n = strlen(s);
    char *d = rec_alloc(NULL, n + 1);
    memcpy(d, s, n);
    return d;
}

/* ---- the random source (xorshift64*, seeded by libFuzzer) ---- */
static uint64_t rs;

static uint64_t rnd(void)
{
    rs ^= rs >> 12;
    rs ^= rs << 25;
    rs ^= rs >> 27;
    return rs * 2685821657736338717ull;
}

static size_t pick(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

/* ---- what one model holds, collected for picking ---- */
#define CAP 4096
typedef struct {
    Onnx__GraphProto *graphs[CAP];
    size_t ngraphs;
    Onnx__NodeProto *nodes[CAP];
    size_t nnodes;
    Onnx__AttributeProto *attrs[CAP];
    size_t nattrs;
    Onnx__ValueInfoProto *vis[CAP];
    size_t nvis;
    Onnx__TensorProto *tensors[CAP];
    size_t ntensors;
    Onnx__TypeProto__Tensor *ttypes[CAP];
    size_t nttypes;
    const char *names[CAP];     /* tensor names seen (for rewiring) */
    size_t nnames;
} Parts;

static Parts P;

static void add_name(const char *s)
{
    if (s && P.nnames < CAP) P.names[P.nnames++] = s;
}

static void walk_type(Onnx__TypeProto *tp, int depth)
{
    if (!tp || depth > 8) return;
    if (tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type) {
        if (P.nttypes < CAP) P.ttypes[P.nttypes++] = tp->tensor_type;
    } else if (tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && tp->sequence_type) {
        walk_type(tp->sequence_type->elem_type, depth + 1);
    } else if (tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && tp->optional_type) {
        walk_type(tp->optional_type->elem_type, depth + 1);
    }
}

static void walk_vi(Onnx__ValueInfoProto *v)
{
    if (!v) return;
    if (P.nvis < CAP) P.vis[P.nvis++] = v;
    add_name(v->name);
    walk_type(v->type, 0);
}

static void walk_graph(Onnx__GraphProto *g, int depth);

static void walk_nodes(Onnx__NodeProto **nodes, size_t n, int depth)
{
    for (size_t i = 0; i < n; i++) {
        Onnx__NodeProto *nd = nodes[i];
        if (P.nnodes < CAP) P.nodes[P.nnodes++] = nd;
        for (size_t j = 0; j < nd->n_output; j++) add_name(nd->output[j]);
        for (size_t j = 0; j < nd->n_attribute; j++) {
            Onnx__AttributeProto *a = nd->attribute[j];
            if (P.nattrs < CAP) P.attrs[P.nattrs++] = a;
            if (a->t && P.ntensors < CAP) P.tensors[P.ntensors++] = a->t;
            for (size_t k = 0; k < a->n_tensors; k++)
                if (P.ntensors < CAP) P.tensors[P.ntensors++] = a->tensors[k];
            if (a->g) walk_graph(a->g, depth + 1);
            for (size_t k = 0; k < a->n_graphs; k++) walk_graph(a->graphs[k], depth + 1);
            walk_type(a->tp, 0);
        }
    }
}

static void walk_graph(Onnx__GraphProto *g, int depth)
{
    if (!g || depth > 8) return;
    if (P.ngraphs < CAP) P.graphs[P.ngraphs++] = g;
    for (size_t i = 0; i < g->n_input; i++) walk_vi(g->input[i]);
    for (size_t i = 0; i < g->n_output; i++) walk_vi(g->output[i]);
    for (size_t i = 0; i < g->n_value_info; i++) walk_vi(g->value_info[i]);
    for (size_t i = 0; i < g->n_initializer; i++) {
        if (P.ntensors < CAP) P.tensors[P.ntensors++] = g->initializer[i];
        add_name(g->initializer[i]->name);
    }
    walk_nodes(g->node, g->n_node, depth);
}

/* ---- values ---- */
static int64_t interesting_int(int64_t old)
{
    static const int64_t v[] = {
        0, 1, 2, 3, 4, 7, 8, 16, 255, 256, 1024, 65536, -1, -2, -3, -7,
        INT32_MAX, (int64_t)INT32_MAX + 1, (int64_t)1 << 32, (int64_t)1 << 40, (int64_t)1 << 62,
        INT64_MAX, INT64_MIN, INT64_MIN + 1, -((int64_t)1 << 31), -((int64_t)1 << 40)};
    switch (pick(4)) {
    case 0: return (int64_t)pick(6);
    case 1: return (int64_t)((uint64_t)old + pick(5) - 2);   /* wraps */
    case 2: return (int64_t)(rnd() >> pick(64));
    default: return v[pick(sizeof v / sizeof v[0])];
    }
}

static float interesting_float(float old)
{
    static const float v[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 1e-30f, 1e30f, 3.4e38f, -3.4e38f,
                              1.0f / 0.0f, -1.0f / 0.0f, 0.0f / 0.0f, 1e-45f, 100.0f, 0.999f};
    if (pick(3) == 0) return old * (float)(pick(5)) - 1.0f;
    return v[pick(sizeof v / sizeof v[0])];
}

static int64_t interesting_dim(int64_t old)
{
    static const int64_t v[] = {0, 1, 2, 3, 4, 5, 8, 16, 64, 1000, -1, -2,
                                (int64_t)1 << 31, (int64_t)1 << 32, (int64_t)1 << 40, (int64_t)1 << 62,
                                INT64_MAX, (int64_t)1 << 20, (int64_t)1 << 24, 46341};
    if (pick(3) == 0) return (int64_t)((uint64_t)old + pick(3) - 1);
    return v[pick(sizeof v / sizeof v[0])];
}

static const char *const OPS[] = {
    "Abs", "Add", "And", "ArgMax", "AveragePool", "BatchNormalization", "Cast", "CastLike", "Ceil", "Clip",
    "Compress", "Concat", "ConcatFromSequence", "Constant", "ConstantOfShape", "Conv", "ConvTranspose",
    "CumSum", "DepthToSpace", "DequantizeLinear", "Div", "Dropout", "Einsum", "Equal", "Erf", "Exp", "Expand",
    "EyeLike", "Flatten", "Gather", "GatherElements", "GatherND", "Gemm", "GlobalAveragePool", "GRU",
    "HardSigmoid", "Identity", "If", "InstanceNormalization", "LayerNormalization", "LeakyRelu", "Less",
    "Log", "Loop", "LRN", "LSTM", "MatMul", "MatMulInteger", "Max", "MaxPool", "Mean", "Min", "Mod", "Mul",
    "Neg", "NonZero", "Not", "OneHot", "Pad", "Pow", "QLinearConv", "QLinearMatMul", "QuantizeLinear",
    "Range", "Reciprocal", "ReduceMax", "ReduceMean", "ReduceSum", "Relu", "Reshape", "Resize", "RNN",
    "Scan", "ScatterElements", "ScatterND", "SequenceAt", "SequenceConstruct", "Shape", "Sigmoid", "Sign",
    "Size", "Slice", "Softmax", "SpaceToDepth", "Split", "SplitToSequence", "Sqrt", "Squeeze", "STFT", "Sub",
    "Sum", "Tanh", "Tile", "TopK", "Transpose", "Trilu", "Unique", "Unsqueeze", "Where", "Xor",
    "DFT", "GridSample", "RoiAlign", "NonMaxSuppression", "Attention", "RMSNormalization", "RotaryEmbedding",
    "TreeEnsemble", "TreeEnsembleClassifier", "LinearClassifier", "Scaler", "Col2Im", "CenterCropPad",
    "StringNormalizer", "RegexFullMatch", "ImageDecoder", "AffineGrid", "Bernoulli", "RandomNormal",
    "FusedMatMul", "QuickGelu", "SkipLayerNormalization", "BiasGelu", "Gelu", "Optional", "OptionalGetElement"};

static const char *const DOMAINS[] = {"", "ai.onnx", "ai.onnx.ml", "com.microsoft", "onnx2c", "pkg", "x.y"};

static const char *const ATTR_NAMES[] = {
    "axis", "axes", "perm", "keepdims", "kernel_shape", "strides", "pads", "dilations", "group", "auto_pad",
    "to", "value", "alpha", "beta", "epsilon", "transA", "transB", "mode", "split", "num_outputs", "then_branch",
    "else_branch", "body", "direction", "hidden_size", "layout", "ceil_mode", "count_include_pad", "blocksize",
    "start", "end", "exclusive", "reverse", "largest", "sorted", "k", "upper", "min", "max", "seed", "dtype",
    "shape", "batch_dims", "reduction", "allowzero", "output_padding", "output_shape", "coordinate_transformation_mode"};

static void replace_strings(char ***arr, size_t *n, size_t at, const char *s)
{
    if (*n == 0 || at >= *n) return;
    char **d = rec_alloc(NULL, sizeof(char *) * (*n));
    memcpy(d, *arr, sizeof(char *) * (*n));
    d[at] = rec_str(s);
    *arr = d;
}

/* Appends or removes one element of a repeated field (elements of size
 * sz); a new element is a copy of one already there, so an empty field
 * of pointers (messages, strings) is left empty. */
static void resize_array(void **arr, size_t *n, size_t sz, int grow)
{
    if (!grow) {
        if (*n) (*n)--;
        return;
    }
    if (*n >= 64) return;
    char *d = rec_alloc(NULL, sz * (*n + 1));
    if (*n) memcpy(d, *arr, sz * (*n));
    if (*n) memcpy(d + sz * (*n), d + sz * pick(*n), sz);   /* a copy of one of them */
    *arr = d;
    (*n)++;
}

/* The same for a field of pointers (messages, strings): never grown from
 * empty (there is nothing to copy, and protobuf-c cannot pack a NULL). */
static void resize_ptrs(void **arr, size_t *n, int grow)
{
    if (grow && *n == 0) return;
    resize_array(arr, n, sizeof(void *), grow);
}

/* ---- the edits ---- */
static int mut_dim(void)
{
    if (!P.nttypes) return 0;
    Onnx__TypeProto__Tensor *tt = P.ttypes[pick(P.nttypes)];
    if (pick(6) == 0) {   /* the element type */
        tt->has_elem_type = 1;
        tt->elem_type = (int32_t)pick(27);
        return 1;
    }
    if (!tt->shape) {
        tt->shape = rec_alloc(NULL, sizeof *tt->shape);
        onnx__tensor_shape_proto__init(tt->shape);
    }
    Onnx__TensorShapeProto *sh = tt->shape;
    int r = (int)pick(8);
    if (r == 0 || sh->n_dim == 0) {   /* a new dim (a copy of one, or a fresh 1) */
        if (sh->n_dim == 0) {
            Onnx__TensorShapeProto__Dimension *d = rec_alloc(NULL, sizeof *d);
            onnx__tensor_shape_proto__dimension__init(d);
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = 1;
            sh->dim = rec_alloc(NULL, sizeof(void *));
            sh->dim[0] = d;
            sh->n_dim = 1;
        } else {
            resize_ptrs((void **)&sh->dim, &sh->n_dim, 1);
        }
        return 1;
    }
    if (r == 1) { sh->n_dim--; return 1; }
    if (r == 2) { tt->shape = NULL; return 1; }   /* no shape at all */
    size_t k = pick(sh->n_dim);
    Onnx__TensorShapeProto__Dimension *d = rec_alloc(NULL, sizeof *d);
    onnx__tensor_shape_proto__dimension__init(d);
    if (pick(6) == 0) {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        d->dim_param = rec_str(pick(2) ? "N" : "batch");
    } else {
        Onnx__TensorShapeProto__Dimension *o = sh->dim[k];
        int64_t old = o->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ? o->dim_value : 1;
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = interesting_dim(old);
    }
    Onnx__TensorShapeProto__Dimension **nd = rec_alloc(NULL, sizeof(void *) * sh->n_dim);
    memcpy(nd, sh->dim, sizeof(void *) * sh->n_dim);
    nd[k] = d;
    sh->dim = nd;
    return 1;
}

static int mut_tensor(void)
{
    if (!P.ntensors) return 0;
    Onnx__TensorProto *t = P.tensors[pick(P.ntensors)];
    switch (pick(6)) {
    case 0:   /* one dim */
        if (t->n_dims) {
            int64_t *d = rec_alloc(NULL, sizeof(int64_t) * t->n_dims);
            memcpy(d, t->dims, sizeof(int64_t) * t->n_dims);
            size_t k = pick(t->n_dims);
            d[k] = interesting_dim(d[k]);
            t->dims = d;
            return 1;
        }
        /* fall through */
    case 1:   /* a dim more or less */
        resize_array((void **)&t->dims, &t->n_dims, sizeof(int64_t), pick(2) || !t->n_dims);
        return 1;
    case 2:   /* the element type */
        t->has_data_type = 1;
        t->data_type = (int32_t)pick(27);
        return 1;
    case 3:   /* the data shorter or longer */
        if (t->has_raw_data) {
            size_t n = t->raw_data.len;
            size_t m = pick(2) ? (n ? pick(n) : 0) : n + 1 + pick(16);
            uint8_t *b = rec_alloc(NULL, m + 1);
            if (t->raw_data.data && (m < n ? m : n)) memcpy(b, t->raw_data.data, m < n ? m : n);
            t->raw_data.data = b;
            t->raw_data.len = m;
        } else if (t->n_float_data) {
            resize_array((void **)&t->float_data, &t->n_float_data, sizeof(float), pick(2));
        } else if (t->n_int64_data) {
            resize_array((void **)&t->int64_data, &t->n_int64_data, sizeof(int64_t), pick(2));
        } else if (t->n_int32_data) {
            resize_array((void **)&t->int32_data, &t->n_int32_data, sizeof(int32_t), pick(2));
        } else {
            return 0;
        }
        return 1;
    case 4:   /* one value */
        if (t->has_raw_data && t->raw_data.len) {
            uint8_t *b = rec_alloc(NULL, t->raw_data.len);
            memcpy(b, t->raw_data.data, t->raw_data.len);
            size_t at = pick(t->raw_data.len);
            b[at] = pick(2) ? (uint8_t)rnd() : (pick(2) ? 0xff : 0x80);
            t->raw_data.data = b;
            return 1;
        }
        if (t->n_int64_data) {
            int64_t *d = rec_alloc(NULL, sizeof(int64_t) * t->n_int64_data);
            memcpy(d, t->int64_data, sizeof(int64_t) * t->n_int64_data);
            size_t k = pick(t->n_int64_data);
            d[k] = interesting_int(d[k]);
            t->int64_data = d;
            return 1;
        }
        if (t->n_float_data) {
            float *d = rec_alloc(NULL, sizeof(float) * t->n_float_data);
            memcpy(d, t->float_data, sizeof(float) * t->n_float_data);
            size_t k = pick(t->n_float_data);
            d[k] = interesting_float(d[k]);
            t->float_data = d;
            return 1;
        }
        return 0;
    default:   /* raw data <-> typed fields, external data */
        if (pick(4) == 0) {
            t->has_data_location = 1;
            t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
            return 1;
        }
        if (t->has_raw_data) { t->has_raw_data = 0; t->raw_data.len = 0; t->raw_data.data = NULL; }
        else { t->n_float_data = t->n_int64_data = t->n_int32_data = 0; }
        return 1;
    }
}

static int mut_attr(void)
{
    if (!P.nattrs) return 0;
    Onnx__AttributeProto *a = P.attrs[pick(P.nattrs)];
    switch (pick(8)) {
    case 0:
        a->has_i = 1;
        a->i = interesting_int(a->i);
        return 1;
    case 1:
        a->has_f = 1;
        a->f = interesting_float(a->f);
        return 1;
    case 2: {   /* an element of ints */
        if (!a->n_ints) { resize_array((void **)&a->ints, &a->n_ints, sizeof(int64_t), 1); return 1; }
        int64_t *d = rec_alloc(NULL, sizeof(int64_t) * a->n_ints);
        memcpy(d, a->ints, sizeof(int64_t) * a->n_ints);
        size_t k = pick(a->n_ints);
        d[k] = interesting_int(d[k]);
        a->ints = d;
        return 1;
    }
    case 3:
        resize_array((void **)&a->ints, &a->n_ints, sizeof(int64_t), pick(2) || !a->n_ints);
        return 1;
    case 4:
        if (a->n_floats && pick(2)) {
            float *d = rec_alloc(NULL, sizeof(float) * a->n_floats);
            memcpy(d, a->floats, sizeof(float) * a->n_floats);
            size_t k = pick(a->n_floats);
            d[k] = interesting_float(d[k]);
            a->floats = d;
        } else {
            resize_array((void **)&a->floats, &a->n_floats, sizeof(float), pick(2) || !a->n_floats);
        }
        return 1;
    case 5: {   /* the declared type */
        static const int types[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 99};
        a->has_type = 1;
        a->type = (Onnx__AttributeProto__AttributeType)types[pick(sizeof types / sizeof types[0])];
        return 1;
    }
    case 6:
        a->name = rec_str(ATTR_NAMES[pick(sizeof ATTR_NAMES / sizeof ATTR_NAMES[0])]);
        return 1;
    default:   /* a string value */
        if (pick(2)) { a->has_s = 1; a->s.data = (uint8_t *)rec_str("NOTSET"); a->s.len = 6; }
        else { a->has_s = 1; a->s.len = 0; }
        return 1;
    }
}

static int mut_node(void)
{
    if (!P.nnodes) return 0;
    Onnx__NodeProto *n = P.nodes[pick(P.nnodes)];
    switch (pick(8)) {
    case 0:
        n->op_type = rec_str(OPS[pick(sizeof OPS / sizeof OPS[0])]);
        return 1;
    case 1:
        n->domain = rec_str(DOMAINS[pick(sizeof DOMAINS / sizeof DOMAINS[0])]);
        return 1;
    case 2:   /* an input from another tensor, or left out ("") */
        if (!n->n_input) return 0;
        replace_strings(&n->input, &n->n_input, pick(n->n_input),
                        P.nnames && pick(4) ? P.names[pick(P.nnames)] : "");
        return 1;
    case 3:
        if (!n->n_output) return 0;
        replace_strings(&n->output, &n->n_output, pick(n->n_output),
                        P.nnames && pick(2) ? P.names[pick(P.nnames)] : (pick(2) ? "" : "fresh"));
        return 1;
    case 4:
        resize_ptrs((void **)&n->input, &n->n_input, pick(2) || !n->n_input);
        return 1;
    case 5:
        resize_ptrs((void **)&n->output, &n->n_output, pick(2) || !n->n_output);
        return 1;
    case 6:   /* an attribute more or less */
        if (pick(2) && n->n_attribute) { n->n_attribute--; return 1; }
        if (P.nattrs) {
            /* one without a subgraph: the graph may hold this node (a cycle) */
            Onnx__AttributeProto *a = P.attrs[pick(P.nattrs)];
            if (a->g || a->n_graphs) return 0;
            Onnx__AttributeProto **d = rec_alloc(NULL, sizeof(void *) * (n->n_attribute + 1));
            if (n->n_attribute) memcpy(d, n->attribute, sizeof(void *) * n->n_attribute);
            d[n->n_attribute++] = a;
            n->attribute = d;
            return 1;
        }
        return 0;
    default:   /* the attributes in another order */
        if (n->n_attribute > 1) {
            Onnx__AttributeProto **d = rec_alloc(NULL, sizeof(void *) * n->n_attribute);
            memcpy(d, n->attribute, sizeof(void *) * n->n_attribute);
            size_t i = pick(n->n_attribute), j = pick(n->n_attribute);
            Onnx__AttributeProto *x = d[i];
            d[i] = d[j];
            d[j] = x;
            n->attribute = d;
            return 1;
        }
        return 0;
    }
}

static int mut_graph(Onnx__ModelProto *m)
{
    Onnx__GraphProto *g = P.graphs[pick(P.ngraphs)];
    switch (pick(6)) {
    case 0:   /* two nodes swapped */
        if (g->n_node > 1) {
            Onnx__NodeProto **d = rec_alloc(NULL, sizeof(void *) * g->n_node);
            memcpy(d, g->node, sizeof(void *) * g->n_node);
            size_t i = pick(g->n_node), j = pick(g->n_node);
            Onnx__NodeProto *x = d[i];
            d[i] = d[j];
            d[j] = x;
            g->node = d;
            return 1;
        }
        return 0;
    case 1:
        resize_ptrs((void **)&g->node, &g->n_node, pick(2) || !g->n_node);
        return 1;
    case 2:
        resize_ptrs((void **)&g->input, &g->n_input, pick(2) || !g->n_input);
        return 1;
    case 3:
        resize_ptrs((void **)&g->output, &g->n_output, pick(2) || !g->n_output);
        return 1;
    case 4:
        resize_ptrs((void **)&g->initializer, &g->n_initializer, pick(2) || !g->n_initializer);
        return 1;
    default:   /* a node's output renamed to a graph output's name, or the reverse */
        if (g->n_output && g->n_node) {
            Onnx__NodeProto *n = g->node[pick(g->n_node)];
            if (n->n_output) replace_strings(&n->output, &n->n_output, pick(n->n_output), g->output[pick(g->n_output)]->name);
            return 1;
        }
        (void)m;
        return 0;
    }
}

static int mut_model(Onnx__ModelProto *m)
{
    switch (pick(4)) {
    case 0:
        m->has_ir_version = 1;
        m->ir_version = pick(2) ? (int64_t)pick(13) : interesting_int(m->ir_version);
        return 1;
    case 1:
        if (!m->n_opset_import) return 0;
        {
            Onnx__OperatorSetIdProto *o = m->opset_import[pick(m->n_opset_import)];
            o->has_version = 1;
            o->version = pick(2) ? (int64_t)pick(26) : interesting_int(o->version);
        }
        return 1;
    case 2:
        resize_ptrs((void **)&m->opset_import, &m->n_opset_import, pick(2) || !m->n_opset_import);
        return 1;
    default:
        if (!m->n_opset_import) return 0;
        m->opset_import[pick(m->n_opset_import)]->domain = rec_str(DOMAINS[pick(sizeof DOMAINS / sizeof DOMAINS[0])]);
        return 1;
    }
}

static size_t structured(uint8_t *data, size_t size, size_t max_size)
{
    Onnx__ModelProto *m = onnx__model_proto__unpack(&rec, size, data);
    if (!m || !m->graph) { rec_release(); return 0; }
    memset(&P, 0, sizeof P);
    walk_graph(m->graph, 0);
    for (size_t i = 0; i < m->n_functions; i++)
        walk_nodes(m->functions[i]->node, m->functions[i]->n_node, 1);
    int edits = 1 + (int)pick(4), done = 0;
    for (int tries = 0; done < edits && tries < 20; tries++) {
        int r = (int)pick(100);
        if (r < 30) done += mut_dim();
        else if (r < 45) done += mut_tensor();
        else if (r < 65) done += mut_attr();
        else if (r < 85) done += mut_node();
        else if (r < 93) done += mut_graph(m);
        else done += mut_model(m);
    }
    size_t n = onnx__model_proto__get_packed_size(m);
    if (!done || n > max_size) { rec_release(); return 0; }
    uint8_t *out = malloc(n ? n : 1);
    if (!out) abort();
    onnx__model_proto__pack(m, out);
    rec_release();
    memcpy(data, out, n);
    free(out);
    return n;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    static int bytes_only = -1;
    if (bytes_only < 0) {
        const char *e = getenv("O2C_FUZZ_BYTES");
        bytes_only = e && *e == '1';
    }
    rs = ((uint64_t)seed << 1) | 1;
    rs ^= 0x9E3779B97F4A7C15ull;
    rnd();
    if (bytes_only || pick(5) == 0) return LLVMFuzzerMutate(data, size, max_size);
    size_t n = structured(data, size, max_size);
    return n ? n : LLVMFuzzerMutate(data, size, max_size);
}
