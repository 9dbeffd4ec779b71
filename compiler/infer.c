/* The inference stage: the model's inputs get the shapes and values the
 * command line gives (--shape, --dim, --bind; sequence inputs their
 * elements), its opsets are checked, then the engine's inference loop
 * (engine/inference.c) types and shapes every node, evaluating the small
 * constant values shapes depend on. */
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
        if (!o->binds[b].value) fail_plain("internal: --bind %s: the file was not loaded", t->name);
        Tensor v = *o->binds[b].value;   /* the file's tensor (the load stage read it: main.c) */
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

void infer_graph(Graph *g, const Options *o)
{
    check_opsets(g, o);
    seq_bind_inputs(g, o);   /* sequence and optional inputs: their elements (ops/sequence.c) */
    bind_inputs(g, o);
    infer_resolve_ops(g, 0);
    infer_order(g);
    infer_run(g);            /* the engine's inference loop (engine/inference.c) */
    seq_flatten_outputs(g);
    /* nodes evaluated now leave the graph: their outputs are constants */
    infer_drop_folded(g);
    for (int i = 0; i < g->noutputs; i++) {
        Tensor *t = g->outputs[i];
        if (!dtype_supported(t->dtype) && t->dtype != DT_STRING)
            fail_plain("graph output '%s' has data type %s, which onnx2c does not support yet", t->name, dtype_name(t->dtype));
    }
}
