/* Shape inference by the op table: a node's shape rule with the checks
 * every node gets (arity, types the op takes, shapes known), and the one
 * inference loop that the model's graph and every subgraph body go
 * through (infer.c for the model, ops/control.c for bodies): ops looked up
 * in the graph's op table (every unsupported one refused in one message),
 * their versions checked, the nodes ordered, then each node in order is
 * expanded where its op says so (OpDef.expand), inferred, and evaluated at
 * compile time when its inputs are constant and its result is small, so
 * that the small values shapes depend on are known at every -O level. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

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

static void check_op_versions(const Graph *g)
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

/* Looks up the op of every node of g (in the table of g's model), all
 * unsupported ones refused in one message: for a body, as a message about
 * its owner (the current diag_node). */
void infer_resolve_ops(Graph *g, int body)
{
    char msg[1536];
    size_t len = 0;
    int bad = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        n->op = graph_op(g, n->domain, n->op_type);
        n->opset = g->opset;
        if (n->op) continue;
        bad++;
        if (len < sizeof msg - 200) {
            if (body)
                len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s%s%s (node '%s')", bad > 1 ? ", " : "",
                                        *n->domain ? n->domain : "", *n->domain ? "::" : "", n->op_type, n->name);
            else
                len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s%s%s (node '%s'%s%s%s)", bad > 1 ? ", " : "",
                                        *n->domain ? n->domain : "", *n->domain ? "::" : "", n->op_type, n->name,
                                        *n->domain ? ", domain '" : "", n->domain, *n->domain ? "'" : "");
        }
    }
    if (bad && body)
        fail("its subgraph '%s' has %d node%s with unsupported ops: %s (custom-domain ops "
             "are not supported)", g->name, bad, bad > 1 ? "s" : "", msg);
    if (bad)
        fail_plain("%d node%s use%s unsupported ops: %s. onnx2c supports the default ONNX domain ops listed in its README; "
                   "custom-domain ops must be replaced or decomposed before compiling",
                   bad, bad > 1 ? "s" : "", bad > 1 ? "" : "s", msg);
    check_op_versions(g);
}

void infer_order(Graph *g)
{
    topo_sort(g);
    /* readers of each tensor (nodes and graph outputs): ops use it to skip
     * optional outputs nobody reads */
    graph_recount_uses(g);
}

int node_foldable(const Node *n)
{
    for (int j = 0; j < n->nin; j++)
        if (n->in[j] && !n->in[j]->data) return 0;
    if (n->op->foldable && !n->op->foldable(n)) return 0;   /* a long loop runs at run time */
    return n->nout > 0 && n->out[0];
}

/* IsNaN and IsInf of a float8 (OPT_NARROW_AS_FLOAT) run on its exact
 * float32 value, as the 16-bit floats below. */
static int node_promotes_narrow(const Node *n)
{
    if (!(n->op->traits & OPT_NARROW_AS_FLOAT) || n->nin != 1 || !n->in[0]) return 0;
    int dt = n->in[0]->dtype;   /* a float type: not int4/uint4/int2/uint2 */
    return dtype_is_narrow(dt) && dt != DT_INT4 && dt != DT_UINT4 && dt != DT_INT2 && dt != DT_UINT2;
}

/* the ops that convert or move the narrow types (OPT_NARROW), and those above */
static int takes_narrow(const Node *n) { return (n->op->traits & OPT_NARROW) || node_promotes_narrow(n); }
static int takes_strings(const Node *n) { return (n->op->traits & OPT_STRINGS) != 0; }

/* Inference evaluates the small values that shape rules read (the shape
 * subgraphs: Shape -> Gather -> Concat -> Reshape and the like) so that
 * every shape is known at -O0 too; larger constant computations are left
 * to the fold pass (passes/fold.c), which weighs their size. */
#define INFER_FOLD_MAX_ELEMS 1024

/* 16-bit floats: a node that computes on float16/bfloat16 data is inferred
 * on float32 stand-ins of those inputs, its float32 results typed as the
 * 16-bit type (Node.promoted); the promote pass makes that explicit with
 * Cast nodes (passes/promote.c). Views move
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
    n->promoted_in = 0;
    for (int j = 0; j < n->nin; j++) {
        in[j] = n->in[j];
        if (in[j] && (dtype_is_half(in[j]->dtype) || (dtype_is_narrow(in[j]->dtype) && node_promotes_narrow(n)))) {
            n->in[j] = float_shadow(in[j]);   /* a narrow input stays for ops that take it (Q/DQ) */
            if (j < 64) n->promoted_in |= (uint64_t)1 << j;
            else fail("input %d: more than 64 inputs of 16-bit data", j);
        }
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
    if (n->op->traits & OPT_OPTIONAL_LEADING) return;   /* Loop's M, Scan-8's sequence_lens, DynamicQuantizeLSTM's B */
    for (int j = 0; j < n->op->min_in && j < n->nin; j++)
        if (!n->in[j]) fail("input %d is required, but the model leaves it out (an empty name)", j);
}

/* The numbers of inputs and outputs the op takes, and its required inputs. */
static void check_arity(Node *n)
{
    const OpDef *op = n->op;
    int nin = node_formal_inputs(n);   /* a subgraph's captures come after the op's inputs */
    if (nin < op->min_in || nin > op->max_in)
        fail("has %d inputs; the op takes %d to %d", nin, op->min_in, op->max_in);
    check_required_inputs(n);
    if (n->nout < op->min_out || n->nout > op->max_out)
        fail("has %d outputs; the op takes %d to %d", n->nout, op->min_out, op->max_out);
}

void infer_node(Node *n)
{
    const OpDef *op = n->op;
    int nin = n->nin, nout = n->nout;
    check_arity(n);
    for (int j = 0; j < nin; j++) {
        Tensor *t = n->in[j];
        if (!t) continue;
        if (t->seq) {   /* ops/sequence.c resolves the ops that take sequences before this */
            if (node_has_subgraph(n) && j >= node_formal_inputs(n)) continue;   /* a capture: seq_capture says */
            fail("input '%s' is %s, which %s does not take", t->name,
                 t->seq->absent ? "an empty optional" : "a sequence", n->op_type);
        }
        if (t->dtype == DT_STRING && !takes_strings(n))
            fail("input '%s' is a string tensor; onnx2c computes %s on numbers only (string-aware ops: %s)",
                 t->name, n->op_type, STRING_OPS_TEXT);
        if (!dtype_supported(t->dtype) && t->dtype != DT_STRING)
            fail("input '%s' has data type %s, which onnx2c does not support yet", t->name, dtype_name(t->dtype));
        if (t->rank < 0) fail("input '%s' has an unknown shape", t->name);
        if (dtype_is_narrow(t->dtype) && !takes_narrow(n))
            fail("input '%s' has data type %s; onnx2c converts that type (Cast, CastLike) and moves its bytes, "
                 "but does not compute %s on it", t->name, dtype_name(t->dtype), n->op_type);
        if (t->optional && strncmp(n->op_type, "Optional", 8) &&
            !(node_has_subgraph(n) && j >= node_formal_inputs(n)))   /* a body's capture: read there */
            fail("input '%s' is an optional tensor, which only OptionalHasElement and OptionalGetElement read; "
                 "read it through OptionalGetElement", t->name);
    }
    int half = computes_on_half(n);
    if (half) infer_promoted(n, half);
    else op->infer(n);
    for (int j = 0; j < nout; j++) {
        Tensor *t = n->out[j];
        if (!t) continue;
        if (t->dtype == DT_STRING && !takes_strings(n))
            fail("output '%s' would be a string tensor; onnx2c handles strings only in %s", t->name, STRING_OPS_TEXT);
        if ((!dtype_supported(t->dtype) && t->dtype != DT_STRING) || t->rank < 0)
            fail("internal: the shape rule left output '%s' without type or shape", t->name);
        if (dtype_is_narrow(t->dtype) && !takes_narrow(n))
            fail("output '%s' has data type %s; onnx2c converts that type (Cast, CastLike) and moves its bytes, "
                 "but does not compute %s into it", t->name, dtype_name(t->dtype), n->op_type);
    }
    int all_out_const = 1;
    for (int j = 0; j < nout; j++) if (n->out[j] && !n->out[j]->data) all_out_const = 0;
    n->folded = all_out_const && nout > 0;   /* e.g. Shape: known at compile time */
}

static int64_t result_bytes(const Node *n)
{
    int64_t b = 0;
    for (int j = 0; j < n->nout; j++) if (n->out[j]) b += (int64_t)tensor_bytes(n->out[j]);
    return b;
}

int fold_allowed(Graph *g, int64_t growth)
{
    while (g->parent) g = g->parent;
    if (growth <= 0) return 1;
    if (g->folded_bytes + growth > FOLD_BUDGET_FLOOR + g->model_bytes) {
        note("fold: the constants folding has made (%lld bytes) would pass %lld bytes (the model's own %lld + %lld): "
             "left to run time", (long long)g->folded_bytes, (long long)(FOLD_BUDGET_FLOOR + g->model_bytes),
             (long long)g->model_bytes, (long long)FOLD_BUDGET_FLOOR);
        return 0;
    }
    g->folded_bytes += growth;
    return 1;
}

static int small_result(const Node *n)
{
    int64_t e = 0;
    for (int j = 0; j < n->nout; j++) if (n->out[j]) e += tensor_numel(n->out[j]);
    return e <= INFER_FOLD_MAX_ELEMS;
}

void infer_run(Graph *g)
{
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        diag_node = n;
        if (n->op->expand) {   /* replaced by other nodes at i (their inputs are inferred) */
            check_arity(n);
            if (n->op->expand(g, n)) { i--; continue; }
        }
        infer_node(n);
        /* (a 16-bit computation is folded after the promote pass made it float32) */
        if (!n->folded && !n->promoted && !(n->op->traits & OPT_FOLD_IN_PASSES) && node_foldable(n) && small_result(n) &&
            fold_allowed(g, result_bytes(n))) {
            fold_node(n);
            n->folded = 1;
        }
        note("%-14s %-24s -> %s %s%s", n->op_type, n->name, n->out[0] ? dtype_name(n->out[0]->dtype) : "-",
             n->out[0] ? tensor_shape_str(n->out[0]) : "", n->folded ? " (folded)" : "");
    }
    diag_node = NULL;
}

void infer_drop_folded(Graph *g)
{
    for (int i = g->nnodes - 1; i >= 0; i--)
        if (g->nodes[i]->folded) graph_remove_node(g, g->nodes[i]);
}

/* A node a pass made or changed: its shape rule again. */
void node_reinfer(Node *n)
{
    const Node *saved = diag_node;
    diag_node = n;
    infer_node(n);
    diag_node = saved;
}
