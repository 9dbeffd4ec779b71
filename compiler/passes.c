/* The pass manager: runs the passes of compiler/passes/passes.def in table
 * order, again and again while any of them changes the graph (at most
 * MAX_ROUNDS times), between inference and lowering; on the bodies of
 * If/Loop/Scan nodes first (innermost first), then on the graph. -O0 runs
 * none, -O1 the cleanups, -O2 everything; --disable-pass NAME skips one.
 * After each pass that changed something the graph is re-sorted and
 * checked. */
#include <string.h>

#include "ir.h"

#define MAX_ROUNDS 8

enum { FIRST, ROUNDS, LAST };
enum { OPTIONAL, REQUIRED };

typedef struct Pass {
    const char *name;
    int level;
    int phase;
    int required;
    int (*run)(Graph *g);
    const char *what;
} Pass;

static const Pass PASSES[] = {
#define PASS(name, level, phase, need, what) {#name, level, phase, need, pass_##name, what},
#include "passes/passes.def"
#undef PASS
};
#define NPASSES (int)(sizeof PASSES / sizeof PASSES[0])

int pass_count(void) { return NPASSES; }
const char *pass_name(int i) { return PASSES[i].name; }
const char *pass_what(int i) { return PASSES[i].what; }
int pass_level(int i) { return PASSES[i].level; }

static int pass_level_of(const char *name)
{
    for (int i = 0; i < NPASSES; i++)
        if (!strcmp(PASSES[i].name, name)) return PASSES[i].level;
    return 99;
}

int pass_exists(const char *name)
{
    for (int i = 0; i < NPASSES; i++)
        if (!strcmp(PASSES[i].name, name)) return 1;
    return 0;
}

/* Internal consistency after a pass: every input is a constant, a graph
 * input or the output of an earlier node, and every output is typed. */
static void verify(Graph *g, const char *after)
{
    for (int t = 0; t < g->ntensors; t++) g->tensors[t]->mark = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        for (int j = 0; j < n->nin; j++) {
            Tensor *t = n->in[j];
            if (t && !t->data && !t->is_input && !t->mark)
                fail_plain("internal: after pass %s, node '%s' (%s) reads '%s', which nothing before it produces",
                           after, n->name, n->op_type, t->name);
        }
        for (int j = 0; j < n->nout; j++) {
            Tensor *t = n->out[j];
            if (!t) continue;
            if (t->producer != n)
                fail_plain("internal: after pass %s, tensor '%s' has a stale producer", after, t->name);
            if (t->rank < 0 || (!dtype_supported(t->dtype) && t->dtype != DT_STRING))   /* strings: ops/strings.c */
                fail_plain("internal: after pass %s, tensor '%s' has no type or shape", after, t->name);
            t->mark = 1;
        }
    }
    for (int k = 0; k < g->noutputs; k++) {
        Tensor *t = g->outputs[k];
        if (!t->data && !t->is_input && !(t->producer && graph_node_index(g, t->producer) >= 0))
            fail_plain("internal: after pass %s, graph output '%s' lost its producer", after, t->name);
    }
}

static int disabled(const Options *o, const char *name)
{
    for (int i = 0; i < o->ndisabled; i++)
        if (!strcmp(o->disabled[i], name)) return 1;
    return 0;
}

int run_pass(Graph *g, const char *name)
{
    for (int p = 0; p < NPASSES; p++)
        if (!strcmp(PASSES[p].name, name)) {
            graph_recount_uses(g);
            int k = PASSES[p].run(g);
            diag_node = NULL;
            if (k) {
                topo_sort(g);
                verify(g, name);
            }
            graph_recount_uses(g);
            return k;
        }
    fail_plain("internal: no pass named '%s'", name);
}

/* The bodies of g's nodes (If branches, Loop and Scan bodies, a Loop's
 * unrolled iterations), innermost first: the same passes as the graph. */
static void run_passes_in_bodies(Graph *g, const Options *o)
{
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        for (int a = 0; a < n->nattrs; a++) {
            Graph *b = n->attrs[a].g;
            if (!b) continue;
            if (b->nunrolled)   /* the iterations are the copies */
                for (int k = 0; k < b->nunrolled; k++) run_passes(b->unrolled[k], o);
            else if (b->inferred)
                run_passes(b, o);
        }
    }
}

/* Runs pass p on g: its changes noted, the graph re-sorted and checked */
static int run_one(Graph *g, const Pass *p)
{
    graph_recount_uses(g);
    int k = p->run(g);
    diag_node = NULL;
    if (!k) return 0;
    note("pass %s: %d change%s (%d nodes)", p->name, k, k > 1 ? "s" : "", g->nnodes);
    topo_sort(g);
    verify(g, p->name);
    return k;
}

static int runs(const Pass *p, const Options *o, int phase)
{
    return p->phase == phase && p->level <= o->opt_level && (p->required || !disabled(o, p->name));
}

void run_passes(Graph *g, const Options *o)
{
    for (int i = 0; i < o->ndisabled; i++) {
        if (!pass_exists(o->disabled[i]))
            fail_plain("--disable-pass %s: no such pass (see --list-passes)", o->disabled[i]);
        for (int p = 0; p < NPASSES; p++)
            if (PASSES[p].required && !strcmp(PASSES[p].name, o->disabled[i]))
                fail_plain("--disable-pass %s: the lowering needs this pass (it cannot be disabled)", o->disabled[i]);
    }
    run_passes_in_bodies(g, o);
    int before = g->nnodes;
    for (int p = 0; p < NPASSES; p++)
        if (runs(&PASSES[p], o, FIRST)) run_one(g, &PASSES[p]);
    for (int round = 0; round < MAX_ROUNDS; round++) {
        int changed = 0;
        for (int p = 0; p < NPASSES; p++)
            if (runs(&PASSES[p], o, ROUNDS)) changed += run_one(g, &PASSES[p]);
        if (!changed) break;
    }
    for (int p = 0; p < NPASSES; p++)
        if (runs(&PASSES[p], o, LAST)) run_one(g, &PASSES[p]);
    graph_recount_uses(g);
    note("passes at -O%d: %d nodes -> %d", o->opt_level, before, g->nnodes);
}

/* The passes whose results are standard ONNX ops, until none changes the
 * graph: the cleanups and the folds into weights, before calibration
 * (calibrate.c), which quantizes what these leave. Not noop: it makes
 * SliceViews, which the quantize pass does not take. */
void run_standard_passes(Graph *g, const Options *o)
{
    static const char *const NAMES[] = {"fold", "transpose", "dce", "fuse_layernorm", "fuse_gelu", "fuse_clip",
                                        "fuse_softmax", "fuse_hardswish", "fuse_affine", NULL};
    if (o->opt_level < 1) return;
    for (int round = 0; round < MAX_ROUNDS; round++) {
        int k = 0;
        for (int p = 0; NAMES[p]; p++)
            if (!disabled(o, NAMES[p]) && (o->opt_level >= 2 || pass_level_of(NAMES[p]) <= o->opt_level))
                k += run_pass(g, NAMES[p]);
        if (!k) break;
    }
}
