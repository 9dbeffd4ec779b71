/* Inference: bind input shapes, check the graph, order it, infer every
 * node's output types and shapes from the op table, and fold nodes whose
 * inputs are all constant. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static void bind_inputs(Graph *g, const Options *o)
{
    for (int s = 0; s < o->nshapes; s++) {
        Tensor *t = graph_find(g, o->shapes[s].name);
        if (!t || !t->is_input)
            fail_plain("--shape %s: the model has no input named '%s'", o->shapes[s].name, o->shapes[s].name);
        if (t->vkind || o->shapes[s].rank < 0) continue;   /* sequences, optionals: seq_bind_inputs */
        if (t->rank >= 0 && t->rank != o->shapes[s].rank)
            fail_plain("--shape %s: the input has rank %d, the flag gives %d dimensions", t->name, t->rank, o->shapes[s].rank);
        for (int i = 0; i < o->shapes[s].rank; i++) {
            if (t->rank >= 0 && t->dims[i] >= 0 && t->dims[i] != o->shapes[s].dims[i])
                fail_plain("--shape %s: dimension %d is fixed to %lld in the model, the flag gives %lld", t->name, i,
                           (long long)t->dims[i], (long long)o->shapes[s].dims[i]);
        }
        t->rank = o->shapes[s].rank;
        memcpy(t->dims, o->shapes[s].dims, sizeof(int64_t) * (size_t)t->rank);
    }
    for (int d = 0; d < o->ndims; d++) {
        int used = 0;
        for (int i = 0; i < g->ninputs; i++) {
            Tensor *t = g->inputs[i];
            for (int k = 0; k < t->rank; k++)
                if (t->sym[k] && !strcmp(t->sym[k], o->dimv[d].name)) {
                    used = 1;
                    if (t->dims[k] < 0) t->dims[k] = o->dimv[d].value;
                }
        }
        if (!used) fail_plain("--dim %s: no model input has a dimension named '%s'", o->dimv[d].name, o->dimv[d].name);
    }
    for (int b = 0; b < o->nbinds; b++) {
        Tensor *t = graph_find(g, o->binds[b].name);
        if (!t || !t->is_input)
            fail_plain("--bind %s=%s: the model has no input named '%s'", o->binds[b].name, o->binds[b].file, o->binds[b].name);
        if (t->bound) fail_plain("--bind %s: the input is bound twice", t->name);
        Tensor v = {0};
        v.name = t->name;
        load_tensor_file(o->binds[b].file, &v);
        if (t->dtype != DT_UNDEFINED && v.dtype != t->dtype)
            fail_plain("--bind %s=%s: the file holds %s values, the input is %s", t->name, o->binds[b].file,
                       dtype_name(v.dtype), dtype_name(t->dtype));
        if (t->rank >= 0 && v.rank != t->rank)
            fail_plain("--bind %s=%s: the file holds a tensor of shape %s, the input has rank %d", t->name,
                       o->binds[b].file, tensor_shape_str(&v), t->rank);
        for (int k = 0; t->rank >= 0 && k < t->rank; k++)
            if (t->dims[k] >= 0 && t->dims[k] != v.dims[k])
                fail_plain("--bind %s=%s: the file holds a tensor of shape %s, the input is %s", t->name,
                           o->binds[b].file, tensor_shape_str(&v), tensor_shape_str(t));
        t->dtype = v.dtype;
        tensor_set_shape(t, v.rank, v.dims);
        t->data = v.data;
        t->bound = 1;
    }
    for (int i = 0; i < g->ninputs; i++) {
        Tensor *t = g->inputs[i];
        if (t->rank < 0)
            fail_plain("input '%s' has no shape in the model; give it with --shape %s:D0xD1x...", t->name, t->name);
        for (int k = 0; k < t->rank; k++)
            if (t->dims[k] < 0) {
                if (t->sym[k])
                    fail_plain("input '%s' dimension %d ('%s') is not fixed; bind it with --dim %s=<size> or --shape %s:D0xD1x...",
                               t->name, k, t->sym[k], t->sym[k], t->name);
                fail_plain("input '%s' dimension %d is unknown; give the shape with --shape %s:D0xD1x...", t->name, k, t->name);
            }
    }
    /* checked sizes (ir.h TENSOR_MAX_BYTES): the shape set again is validated */
    for (int i = 0; i < g->ninputs; i++)
        if (g->inputs[i]->rank >= 0) tensor_set_shape(g->inputs[i], g->inputs[i]->rank, g->inputs[i]->dims);
}

/* The newest opset of each domain onnx2c knows (those of the pinned onnx
 * 1.23.2, tests/requirements.txt, and onnxruntime's com.microsoft). A model
 * importing a newer one is refused: its ops may mean something else there.
 * --allow-newer-opsets makes it a warning. Other domains are custom: their
 * ops are refused one by one (check_ops). */
static const struct { const char *domain; int newest; } KNOWN_OPSETS[] = {
    {"", 28}, {"ai.onnx.ml", 5}, {"ai.onnx.preview.training", 1}, {"ai.onnx.preview", 1}, {"com.microsoft", 1},
};

static void check_opset(const Options *o, const char *domain, int version)
{
    for (size_t k = 0; k < sizeof KNOWN_OPSETS / sizeof KNOWN_OPSETS[0]; k++) {
        if (strcmp(KNOWN_OPSETS[k].domain, domain) || version <= KNOWN_OPSETS[k].newest) continue;
        if (o->allow_newer_opsets) {
            fprintf(stderr, "onnx2c: warning: the model imports opset %d of domain '%s'; onnx2c knows it up to %d and "
                            "compiles its ops by that version's rules (--allow-newer-opsets)\n",
                    version, *domain ? domain : "ai.onnx", KNOWN_OPSETS[k].newest);
            return;
        }
        fail_plain("the model imports opset %d of domain '%s'; onnx2c knows it up to opset %d, and an op may mean "
                   "something else in a newer one (re-export at opset %d or older, or pass --allow-newer-opsets to "
                   "compile it by the older rules)", version, *domain ? domain : "ai.onnx", KNOWN_OPSETS[k].newest,
                   KNOWN_OPSETS[k].newest);
    }
}

static void check_opsets(Graph *g, const Options *o)
{
    check_opset(o, "", g->opset);
    for (int i = 0; i < g->ndom_opsets; i++) check_opset(o, g->dom_opsets[i].domain, g->dom_opsets[i].version);
}

/* ---- op versions (ops.def's last column) ----------------------------------
 * A node's op is compiled by the rule of its schema version in effect: the
 * largest since_version of the op <= the opset the model imports for the
 * op's domain. A version onnx2c does not implement (marked "!" in ops.def,
 * e.g. Add-6's legacy broadcast attribute) is refused here rather than
 * compiled by another version's rule. An op newer than the imported opset
 * (op_version 0: --emit-onnx writes a newer standard op so) is compiled as
 * onnx2c knows it; a domain the model does not import is not checked. */
static int domain_opset(const Graph *g, const char *domain)
{
    while (g->parent) g = g->parent;   /* a body: the model's imports */
    if (!*domain) return g->opset;
    for (int i = 0; i < g->ndom_opsets; i++)
        if (!strcmp(g->dom_opsets[i].domain, domain)) return g->dom_opsets[i].version;
    return 0;
}

void check_op_versions(const Graph *g)
{
    char msg[1536];
    size_t len = 0;
    int bad = 0;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        int opset = n->op ? domain_opset(g, n->op->domain) : 0, ok;
        const char *impl;
        if (!opset) continue;
        int v = op_version(n->op, opset, &ok, &impl);
        if (!v || ok) continue;
        bad++;
        if (len < sizeof msg - 300)
            len += (size_t)snprintf(msg + len, sizeof msg - len,
                                    "%s%s%s%s-%d (node '%s' at opset %d of domain '%s'; onnx2c implements %s versions %s)",
                                    bad > 1 ? ", " : "", *n->op->domain ? n->op->domain : "", *n->op->domain ? "::" : "",
                                    n->op_type, v, n->name, opset, *n->op->domain ? n->op->domain : "ai.onnx",
                                    n->op_type, impl);
    }
    if (bad)
        fail_plain("%d node%s use%s an op version that onnx2c does not implement: %s. The version of an op is its "
                   "newest definition at the opset the model imports, and the ops of these versions mean something "
                   "onnx2c does not compute; convert the model to a newer opset (onnx.version_converter) and compile "
                   "that", bad, bad > 1 ? "s" : "", bad > 1 ? "" : "s", msg);
}

/* All unsupported ops in one message. */
static void check_ops(Graph *g)
{
    char msg[1536];
    size_t len = 0;
    int bad = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        n->op = op_find(n->domain, n->op_type);
        n->opset = g->opset;
        if (n->op) continue;
        bad++;
        if (len < sizeof msg - 200)
            len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s%s%s (node '%s'%s%s%s)", bad > 1 ? ", " : "",
                                    *n->domain ? n->domain : "", *n->domain ? "::" : "", n->op_type, n->name,
                                    *n->domain ? ", domain '" : "", n->domain, *n->domain ? "'" : "");
    }
    if (bad)
        fail_plain("%d node%s use%s unsupported ops: %s. onnx2c supports the default ONNX domain ops listed in its README; "
                   "custom-domain ops must be replaced or decomposed before compiling",
                   bad, bad > 1 ? "s" : "", bad > 1 ? "" : "s", msg);
    check_op_versions(g);
}


int node_foldable(const Node *n)
{
    for (int j = 0; j < n->nin; j++)
        if (n->in[j] && !n->in[j]->data) return 0;
    if (node_has_subgraph(n) && !control_foldable(n)) return 0;   /* a long loop runs at run time */
    return n->nout > 0 && n->out[0];
}

/* Inference evaluates the small values that shape rules read (the shape
 * subgraphs: Shape -> Gather -> Concat -> Reshape and the like) so that
 * every shape is known at -O0 too; larger constant computations are left
 * to the fold pass (passes/fold.c), which weighs their size. */
#define INFER_FOLD_MAX_ELEMS 1024

/* 16-bit floats: a node that computes on float16/bfloat16 data is inferred
 * and lowered on float32 stand-ins of those inputs, and its float32 results
 * are stored back as 16-bit values (lower.c inserts the casts). Views move
 * bytes and Cast/CastLike/EyeLike convert to a type they are told, so they
 * handle the 16-bit types themselves. */
static int computes_on_half(const Node *n)
{
    int half = 0;
    for (int j = 0; j < n->nin; j++)
        if (n->in[j] && !half &&   /* the first one's type */
            (dtype_is_half(n->in[j]->dtype) || (dtype_is_narrow(n->in[j]->dtype) && node_promotes_narrow(n))))
            half = n->in[j]->dtype;   /* IsNaN/IsInf of a float8 too (ops/types.c) */
    if (!half || node_is_view(n) || node_has_subgraph(n)) return 0;   /* bodies promote their own nodes */
    if (!strcmp(n->op_type, "Cast") || !strcmp(n->op_type, "CastLike") || !strcmp(n->op_type, "EyeLike")) return 0;
    return half;
}

/* A float32 copy of a 16-bit tensor's type and shape (and data, if constant). */
static Tensor *float_shadow(Tensor *t)
{
    Tensor *s = xalloc(sizeof *s);
    s->shadow_of = t;
    s->name = xfmt("%s (as float32)", t->name);
    s->dtype = DT_FLOAT;
    s->input_index = s->output_index = -1;
    s->id = tensor_new_id();
    s->temp = 1;
    tensor_set_shape(s, t->rank, t->dims);
    memcpy(s->sym, t->sym, sizeof s->sym);
    if (t->data) {
        float *d = tensor_alloc_data(s);
        for (int64_t i = 0; i < tensor_numel(t); i++)
            d[i] = dtype_is_narrow(t->dtype) ? narrow_to_float(t->dtype, ((const uint8_t *)t->data)[i])
                                             : half_to_float(t->dtype, ((const uint16_t *)t->data)[i]);
    }
    return s;
}

static void infer_promoted(Node *n, int half)
{
    Tensor *in[64], *out[64];
    if (n->nin > 64 || n->nout > 64) fail("too many inputs or outputs");
    n->promoted = half;
    n->shadow_in = xalloc(sizeof(Tensor *) * (size_t)(n->nin + 1));
    for (int j = 0; j < n->nin; j++) {
        in[j] = n->in[j];
        if (in[j] && (dtype_is_half(in[j]->dtype) || (dtype_is_narrow(in[j]->dtype) && node_promotes_narrow(n))))
            n->in[j] = n->shadow_in[j] = float_shadow(in[j]);   /* a narrow input stays for ops that take it (Q/DQ) */
    }
    for (int j = 0; j < n->nout; j++) {
        out[j] = n->out[j];
        if (out[j]) {
            Tensor *s = xalloc(sizeof *s);
            s->name = out[j]->name;
            s->rank = -1;
            s->input_index = s->output_index = -1;
            n->out[j] = s;
        }
    }
    n->op->infer(n);
    for (int j = 0; j < n->nin; j++) n->in[j] = in[j];
    for (int j = 0; j < n->nout; j++) {
        Tensor *s = n->out[j];
        n->out[j] = out[j];
        if (!s) continue;
        if (s->data) fail("internal: a constant result of a float16 computation");
        out[j]->dtype = s->dtype == DT_FLOAT ? half : s->dtype;
        tensor_set_shape(out[j], s->rank, s->dims);
    }
}

/* The inputs below the op's minimum are required: an empty name (the
 * ONNX way to leave an optional input out) is refused there, except for
 * the ops whose table minimum counts optional inputs too (tests/fuzz/
 * found shape rules reading a required input left out). */
static void check_required_inputs(Node *n)
{
    static const char *const SKIP[] = {"Loop", "Scan", "DynamicQuantizeLSTM", NULL};   /* M, sequence_lens, B */
    for (int k = 0; SKIP[k]; k++)
        if (!strcmp(n->op_type, SKIP[k])) return;
    for (int j = 0; j < n->op->min_in && j < n->nin; j++)
        if (!n->in[j]) fail("input %d is required, but the model leaves it out (an empty name)", j);
}

void infer_node(Node *n)
{
    const OpDef *op = n->op;
    int nin = n->nin, nout = n->nout;
    if (nin < op->min_in || nin > op->max_in)
        fail("has %d inputs; the op takes %d to %d", nin, op->min_in, op->max_in);
    check_required_inputs(n);
    if (nout < op->min_out || nout > op->max_out)
        fail("has %d outputs; the op takes %d to %d", nout, op->min_out, op->max_out);
    for (int j = 0; j < nin; j++) {
        Tensor *t = n->in[j];
        if (!t) continue;
        if (t->seq) {   /* ops/sequence.c resolves the ops that take sequences before this */
            if (node_has_subgraph(n) && j >= node_formal_inputs(n)) continue;   /* a capture: seq_capture says */
            fail("input '%s' is %s, which %s does not take", t->name,
                 t->seq->absent ? "an empty optional" : "a sequence", n->op_type);
        }
        if (t->dtype == DT_STRING && !node_takes_string(n))   /* ops/strings.c */
            fail("input '%s' is a string tensor; onnx2c computes %s on numbers only (string-aware ops: %s)",
                 t->name, n->op_type, STRING_OPS_TEXT);
        if (!dtype_supported(t->dtype) && t->dtype != DT_STRING)
            fail("input '%s' has data type %s, which onnx2c does not support yet", t->name, dtype_name(t->dtype));
        if (t->rank < 0) fail("input '%s' has an unknown shape", t->name);
        if (dtype_is_narrow(t->dtype) && !node_takes_narrow(n))   /* ops/types.c */
            fail("input '%s' has data type %s; onnx2c converts that type (Cast, CastLike) and moves its bytes, "
                 "but does not compute %s on it", t->name, dtype_name(t->dtype), n->op_type);
        if (t->optional && strncmp(n->op_type, "Optional", 8) &&
            !(node_has_subgraph(n) && j >= node_formal_inputs(n)))   /* a body's capture: read there */
            fail("input '%s' is an optional tensor, which only OptionalHasElement and OptionalGetElement read; "
                 "read it through OptionalGetElement", t->name);
    }
    int half = computes_on_half(n);
    if (half) infer_promoted(n, half);
    else if (!strings_infer(n)) op->infer(n);   /* ops/strings.c: a numeric op's string form (Equal) */
    for (int j = 0; j < nout; j++) {
        Tensor *t = n->out[j];
        if (!t) continue;
        if (t->dtype == DT_STRING && !node_takes_string(n))   /* ops/strings.c */
            fail("output '%s' would be a string tensor; onnx2c handles strings only in %s", t->name, STRING_OPS_TEXT);
        if ((!dtype_supported(t->dtype) && t->dtype != DT_STRING) || t->rank < 0)
            fail("internal: the shape rule left output '%s' without type or shape", t->name);
        if (dtype_is_narrow(t->dtype) && !node_takes_narrow(n))
            fail("output '%s' has data type %s; onnx2c converts that type (Cast, CastLike) and moves its bytes, "
                 "but does not compute %s into it", t->name, dtype_name(t->dtype), n->op_type);
    }
    int all_out_const = 1;
    for (int j = 0; j < nout; j++) if (n->out[j] && !n->out[j]->data) all_out_const = 0;
    n->folded = all_out_const && nout > 0;   /* e.g. Shape: known at compile time */
}

static int small_result(const Node *n)
{
    int64_t e = 0;
    for (int j = 0; j < n->nout; j++) if (n->out[j]) e += tensor_numel(n->out[j]);
    return e <= INFER_FOLD_MAX_ELEMS;
}

void infer_graph(Graph *g, const Options *o)
{
    check_opsets(g, o);
    seq_bind_inputs(g, o);   /* sequence and optional inputs: their elements (ops/sequence.c) */
    bind_inputs(g, o);
    check_ops(g);
    topo_sort(g);
    /* readers of each tensor (nodes and graph outputs): ops use it to skip
     * optional outputs nobody reads */
    graph_recount_uses(g);
    for (int i = 0; i < g->nnodes; i++) {
        diag_node = g->nodes[i];
        if (expand_flex_attention(g, g->nodes[i])) { i--; continue; }   /* replaced by standard ops */
        if (seq_expand(g, i)) { i--; continue; }   /* sequences: replaced by plain nodes at i (ops/sequence.c) */
        infer_node(g->nodes[i]);
        if (!g->nodes[i]->folded && node_foldable(g->nodes[i]) && small_result(g->nodes[i])) {
            fold_node(g->nodes[i]);
            g->nodes[i]->folded = 1;
        }
        note("%-14s %-24s -> %s %s%s", g->nodes[i]->op_type, g->nodes[i]->name,
             g->nodes[i]->out[0] ? dtype_name(g->nodes[i]->out[0]->dtype) : "-",
             g->nodes[i]->out[0] ? tensor_shape_str(g->nodes[i]->out[0]) : "",
             g->nodes[i]->folded ? " (folded)" : "");
    }
    diag_node = NULL;
    seq_flatten_outputs(g);
    /* nodes evaluated now leave the graph: their outputs are constants */
    for (int i = g->nnodes - 1; i >= 0; i--)
        if (g->nodes[i]->folded) graph_remove_node(g, g->nodes[i]);
    for (int i = 0; i < g->noutputs; i++) {
        Tensor *t = g->outputs[i];
        if (!dtype_supported(t->dtype) && t->dtype != DT_STRING)
            fail_plain("graph output '%s' has data type %s, which onnx2c does not support yet", t->name, dtype_name(t->dtype));
    }
}

/* A node a pass made or changed: its shape rule again. */
void node_reinfer(Node *n)
{
    const Node *saved = diag_node;
    diag_node = n;
    infer_node(n);
    diag_node = saved;
}
