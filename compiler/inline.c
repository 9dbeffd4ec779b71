/* Local functions: a node that calls one of the model's FunctionProtos
 * (same domain and name) is replaced by the function's body, before the
 * graph becomes IR (load.c). The body's inputs and outputs take the call's
 * names, its intermediates get names unique to the call ("CALL/f:NAME"), and
 * attributes that refer to the caller's (ref_attr_name) take the call's value
 * or the function's default, or are dropped when neither exists. Calls
 * inside bodies are expanded too (nested functions), to a depth that catches
 * recursion. The PyTorch exporters write such functions (modules exported as
 * functions, and the dynamo exporter's helpers).
 *
 * Everything here is allocated with xalloc (freed with the run's pool); the
 * model's own node list is kept and put back before the ModelProto is freed
 * (protobuf-c frees what it allocated, and only that). */
#include <string.h>

#include "ir.h"
#include "onnx.pb-c.h"

enum { INLINE_MAX_DEPTH = 32 };

typedef struct NodeList {
    Onnx__NodeProto **v;
    size_t n, cap;
} NodeList;

static void push(NodeList *l, Onnx__NodeProto *p)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        Onnx__NodeProto **v = xalloc(sizeof *v * cap);
        if (l->n) memcpy(v, l->v, sizeof *v * l->n);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = p;
}

static const char *str(const char *s) { return s ? s : ""; }
static int is_default_domain(const char *d) { return !d || !*d || !strcmp(d, "ai.onnx"); }

static Onnx__FunctionProto *find_function(Onnx__ModelProto *m, const Onnx__NodeProto *n)
{
    /* domain onnx2c: --emit-onnx's fused ops, whose bodies describe them for
     * other tools; load.c reads such a call back as the op itself */
    if (!strcmp(str(n->domain), "onnx2c")) return NULL;
    for (size_t i = 0; i < m->n_functions; i++) {
        Onnx__FunctionProto *f = m->functions[i];
        if (!strcmp(str(f->name), str(n->op_type)) && !strcmp(str(f->domain), str(n->domain)) &&
            !strcmp(str(f->overload), str(n->overload)))
            return f;
    }
    return NULL;
}

/* A name inside a call: a formal input or output maps to the call's actual
 * name ("" for an omitted optional one), anything else to a private name. */
static char *call_name(const Onnx__FunctionProto *f, const Onnx__NodeProto *call, const char *prefix, const char *name)
{
    if (!*name) return xstrdup("");
    for (size_t i = 0; i < f->n_input; i++)
        if (!strcmp(f->input[i], name)) return xstrdup(i < call->n_input ? call->input[i] : "");
    for (size_t i = 0; i < f->n_output; i++)
        if (!strcmp(f->output[i], name)) return xstrdup(i < call->n_output ? call->output[i] : "");
    return xfmt("%s:%s", prefix, name);
}

static const Onnx__AttributeProto *call_attr(const Onnx__NodeProto *call, const char *name)
{
    for (size_t i = 0; i < call->n_attribute; i++)
        if (!strcmp(str(call->attribute[i]->name), name)) return call->attribute[i];
    return NULL;
}

static void check_opset(Onnx__ModelProto *m, const Onnx__FunctionProto *f)
{
    int64_t model = 0;
    for (size_t i = 0; i < m->n_opset_import; i++)
        if (is_default_domain(m->opset_import[i]->domain)) model = m->opset_import[i]->version;
    for (size_t i = 0; i < f->n_opset_import; i++)
        if (is_default_domain(f->opset_import[i]->domain) && model && f->opset_import[i]->version != model)
            fail_plain("local function '%s' uses opset %lld of the default domain and the model %lld; onnx2c "
                       "inlines functions of the model's opset only", str(f->name),
                       (long long)f->opset_import[i]->version, (long long)model);
}

static void expand(Onnx__ModelProto *m, Onnx__NodeProto **nodes, size_t n, NodeList *out, int depth, int *calls)
{
    for (size_t i = 0; i < n; i++) {
        Onnx__NodeProto *call = nodes[i];
        Onnx__FunctionProto *f = find_function(m, call);
        if (!f) {
            push(out, call);
            continue;
        }
        if (depth >= INLINE_MAX_DEPTH)
            fail_plain("local function '%s' calls functions %d deep (recursion?)", str(f->name), INLINE_MAX_DEPTH);
        if (call->n_input > f->n_input || call->n_output > f->n_output)
            fail_plain("node '%s' calls local function '%s' with %zu inputs and %zu outputs; it has %zu and %zu",
                       str(call->name), str(f->name), call->n_input, call->n_output, f->n_input, f->n_output);
        check_opset(m, f);
        const char *prefix = xfmt("%s/%s#%d", *str(call->name) ? call->name : "call", str(f->name), (*calls)++);
        Onnx__NodeProto **body = xalloc(sizeof *body * (f->n_node + 1));
        for (size_t k = 0; k < f->n_node; k++) {
            const Onnx__NodeProto *b = f->node[k];
            Onnx__NodeProto *c = xalloc(sizeof *c);
            *c = *b;   /* op, domain, doc string: shared with the function (never freed from here) */
            c->name = xfmt("%s/%s", prefix, *str(b->name) ? b->name : b->op_type);
            c->input = xalloc(sizeof(char *) * (b->n_input + 1));
            c->output = xalloc(sizeof(char *) * (b->n_output + 1));
            for (size_t j = 0; j < b->n_input; j++) c->input[j] = call_name(f, call, prefix, b->input[j]);
            for (size_t j = 0; j < b->n_output; j++) c->output[j] = call_name(f, call, prefix, b->output[j]);
            c->attribute = xalloc(sizeof *c->attribute * (b->n_attribute + 1));
            c->n_attribute = 0;
            for (size_t j = 0; j < b->n_attribute; j++) {
                Onnx__AttributeProto *a = b->attribute[j];
                if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH ||
                    a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS)
                    fail_plain("local function '%s': node '%s' (%s) has a subgraph; onnx2c does not inline functions "
                               "with subgraphs yet", str(f->name), str(b->name), str(b->op_type));
                if (!a->ref_attr_name || !*a->ref_attr_name) {
                    c->attribute[c->n_attribute++] = a;
                    continue;
                }
                /* a reference to the caller's attribute, else the function's default */
                const Onnx__AttributeProto *v = call_attr(call, a->ref_attr_name);
                for (size_t d = 0; !v && d < f->n_attribute_proto; d++)
                    if (!strcmp(str(f->attribute_proto[d]->name), a->ref_attr_name)) v = f->attribute_proto[d];
                if (!v) continue;   /* not given, no default: the attribute is absent */
                Onnx__AttributeProto *r = xalloc(sizeof *r);
                *r = *v;
                r->name = a->name;
                r->ref_attr_name = NULL;
                c->attribute[c->n_attribute++] = r;
            }
            body[k] = c;
        }
        expand(m, body, f->n_node, out, depth + 1, calls);
    }
}

int inline_functions(Onnx__ModelProto *m, Onnx__NodeProto ***saved, size_t *nsaved)
{
    Onnx__GraphProto *g = m->graph;
    *saved = g->node;
    *nsaved = g->n_node;
    if (!m->n_functions) return 0;
    NodeList out = {0};
    int calls = 0;
    expand(m, g->node, g->n_node, &out, 0, &calls);
    if (!calls) return 0;
    g->node = out.v;
    g->n_node = out.n;
    note("inlined %d call%s of local functions", calls, calls == 1 ? "" : "s");
    return calls;
}
