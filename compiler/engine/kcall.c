/* Building kernel calls: what an op's lowering uses to say how a node is
 * computed (lower_call and friends, control-flow markers, tunable choices,
 * scratch tensors, constants in a kernel's layout, copies), and lower_node,
 * which runs the node's lowering from the op table. The lower stage
 * (lower.c) lowers the model's graph with it, the evaluator (eval.c) a
 * node at compile time, the tuner (tune.c) every candidate. */
#include <string.h>

#include "ir.h"
#include "../../runtime/c/params/strings.h"

#define LOWER_MAX_CALLS (1 << 16)

KCall *lower_call(Lowering *L, const char *kernel, int64_t count)
{
    const Kernel *k = kernel_find(kernel);
    if (!k) fail("internal: no kernel named '%s'", kernel);
    return lower_call_kernel(L, k, count);
}

KCall *lower_call_kernel(Lowering *L, const Kernel *k, int64_t count)
{
    for (int i = 0; i < L->n && !k->fn; i++)   /* a generated kernel: one Kernel per name */
        if (L->calls[i].kernel != k && !strcmp(L->calls[i].kernel->name, k->name)) {
            if (!L->calls[i].kernel->instance || !k->instance || strcmp(L->calls[i].kernel->instance, k->instance))
                fail("internal: two different kernels named '%s'", k->name);
            k = L->calls[i].kernel;
            break;
        }
    if (L->n == L->cap) {
        if (L->n >= LOWER_MAX_CALLS)   /* a bound on time and memory (tests/fuzz/ found RNNs of 2^31 steps) */
            fail("the model needs more than %d kernel calls (a recurrence or unrolled loop this long is not "
                 "supported)", LOWER_MAX_CALLS);
        int cap = L->cap ? 2 * L->cap : 64;
        KCall *c = xalloc(sizeof(KCall) * (size_t)cap);
        if (L->n) memcpy(c, L->calls, sizeof(KCall) * (size_t)L->n);
        L->calls = c;
        L->cap = cap;
    }
    KCall *c = &L->calls[L->n++];
    memset(c, 0, sizeof *c);
    c->kernel = k;
    c->count = count;
    c->node = L->node;
    return c;
}

/* Control-flow markers (ir.h): no kernel, count 0, so the loops over calls
 * that emit kernels skip them. */
static const Kernel CTL_KERNEL = {"o2c_ctl", NULL, NULL, NULL, NULL};

KCall *lower_ctl(Lowering *L, int ctl, Tensor *x)
{
    KCall *c = lower_call_kernel(L, &CTL_KERNEL, 0);
    int at = L->n - 1;
    c->ctl = ctl;
    c->x[0] = x;
    if (ctl != CTL_ELSE && ctl != CTL_END) return c;
    /* the innermost open IF or LOOP; its ELSE and the loop's BREAKs */
    int depth = 0, mid = -1;
    for (int i = at - 1; i >= 0; i--) {
        KCall *m = &L->calls[i];
        if (m->ctl == CTL_END) depth++;
        else if ((m->ctl == CTL_IF || m->ctl == CTL_LOOP) && depth) depth--;
        else if (m->ctl == CTL_ELSE && !depth) mid = i;
        else if (m->ctl == CTL_BREAK && !depth) m->jump = at;
        else if (m->ctl == CTL_IF || m->ctl == CTL_LOOP) {
            if (ctl == CTL_ELSE && m->ctl != CTL_IF) fail("internal: an else outside an if");
            c = &L->calls[at];
            if (ctl == CTL_ELSE) {
                m->jump = at;
            } else {
                c->jump = i;
                if (mid >= 0) L->calls[mid].jump = at;
                else m->jump = at;
            }
            return c;
        }
    }
    fail("internal: an unmatched control-flow marker");
}

int lower_choose(Lowering *L, KCall *c, const char *key, const char *const *names, int n, int heuristic)
{
    int pick = heuristic;
    double ns = 0;
    if (L->force) {
        pick = L->force - 1 < n ? L->force - 1 : -1;
    } else if (L->tune) {
        const char *v = tune_lookup(L->tune, key, &ns);
        if (v) {
            pick = -1;
            for (int i = 0; i < n; i++)
                if (!strcmp(names[i], v)) pick = i;
            if (pick < 0) fail_plain("the tuning file chooses '%s' for %s, which is not one of its candidates", v, key);
        }
    }
    L->choices++;
    if (n > L->max_candidates) L->max_candidates = n;
    if (pick < 0) pick = heuristic;   /* the tuner's candidate beyond this choice's: the heuristic */
    c->tune_key = xstrdup(key);
    c->variant = names[pick];
    c->tuned_ns = L->force ? 0 : ns;
    return pick;
}

Tensor *lower_temp(Lowering *L, int dtype, int rank, const int64_t *dims)
{
    Tensor *t = xalloc(sizeof *t);
    t->name = xfmt("%s_tmp%d", L->node ? L->node->name : "tmp", L->n);
    t->dtype = dtype;
    t->input_index = t->output_index = -1;
    t->temp = 1;
    t->id = tensor_new_id();
    tensor_set_shape(t, rank, dims);
    return t;
}

Tensor *lower_const(Lowering *L, const char *what, int dtype, int rank, const int64_t *dims)
{
    Tensor *t = lower_temp(L, dtype, rank, dims);
    t->name = xfmt("%s_%s", L->node ? L->node->name : "const", what);
    t->temp = 0;
    tensor_alloc_data(t);
    return t;
}

void lower_copy(Lowering *L, Tensor *x, Tensor *y)
{
    if (y->dtype == DT_STRING) {   /* pointers, not bytes (runtime/c/strings.h) */
        KCall *c = lower_call(L, "o2c_copy_str", tensor_numel(y));
        c->x[0] = x;
        c->y[0] = y;
        return;
    }
    KCall *c = lower_call(L, "o2c_copy", (int64_t)tensor_bytes(y));
    c->x[0] = x;
    c->y[0] = y;
}

void lower_view(Node *n, Lowering *L)
{
    if (n->out[0] && n->out[0]->is_output) lower_copy(L, n->in[0], n->out[0]);
}

/* A view: its output is its input's bytes (lower_view), or bytes at an
 * offset into them (OpDef.view_offset: SliceView). */
int node_is_view(const Node *n)
{
    return n->op && (n->op->lower == lower_view || n->op->view_offset);
}


void lower_node(Node *n, Lowering *L)
{
    const Node *saved = L->node;
    L->node = n;
    diag_node = n;
    for (int j = 0; j < n->nin; j++)   /* the promote pass gives a 16-bit computation float32 inputs */
        if (n->in[j] && (dtype_is_half(n->in[j]->dtype) || dtype_is_narrow(n->in[j]->dtype)) && node_promoted_in(n, j))
            fail("internal: a 16-bit computation was not promoted (passes/promote.c)");
    n->op->lower(n, L);
    L->node = saved;
}

/* ---- the string space ------------------------------------------------- */

/* The kernels that build strings (ops/strings.c) take bytes from the string
 * space: an arena tensor of --string-space bytes after a header
 * (runtime/c/strings.h), made by the first such call of a lowering and
 * passed to each as x[O2C_STRS_X]; returns its capacity. Compile-time
 * evaluation (L->string_space 0) gets a space of its own, allocated here. */
int64_t lower_string_space(Lowering *L, KCall *c)
{
    if (!L->strings) {
        int64_t cap = L->string_space ? L->string_space : EVAL_STRING_SPACE;
        int64_t dims[1] = {O2C_STRS_HEAD + cap};
        Tensor *t = lower_temp(L, DT_UINT8, 1, dims);
        t->name = xstrdup("string space");
        if (!L->string_space) tensor_alloc_data(t);   /* zeroed: an empty space */
        L->strings = t;
    }
    c->x[O2C_STRS_X] = L->strings;
    return L->strings->dims[0] - O2C_STRS_HEAD;
}

int call_uses_strings(const Lowering *L, const KCall *c)
{
    return L->strings && c->x[O2C_STRS_X] == L->strings;
}
