/* The evaluator: runs kernel calls in the compiler, with the same runtime
 * kernels the generated code uses (compiled in: kernels.c). It is the one
 * way anything runs a kernel at compile time: constant folding (the
 * inference loop for shape values, passes/fold.c for the rest), a lowering
 * that computes a constant from constants (eval_call_const), whole-graph
 * evaluation (tests; calibration). */
#include <string.h>

#include "ir.h"
#include "../../runtime/c/params/strings.h"
#include "../../runtime/c/strings.h"

/* A tensor's bytes during evaluation: its data, or (a view inside a
 * subgraph, whose lowering made no call) its source's. */
static void *eval_ptr(Tensor *t)
{
    if (t->data || !t->producer || !node_is_view(t->producer) || !t->producer->in[0]) return t->data;
    char *d = eval_ptr(t->producer->in[0]);
    if (d && t->producer->op->view_offset) d += t->producer->op->view_offset(t->producer);
    return d;
}

void eval_call(const KCall *k)
{
    if (k->count <= 0) return;
    o2c_p p;
    memset(&p, 0, sizeof p);
    for (int j = 0; j < O2C_MAX_Y; j++)   /* temporaries of the lowering */
        if (k->y[j] && !k->y[j]->data) tensor_alloc_data(k->y[j]);
    for (int j = 0; j < O2C_MAX_X; j++) p.x[j] = k->x[j] ? eval_ptr(k->x[j]) : NULL;
    for (int j = 0; j < O2C_MAX_Y; j++) p.y[j] = k->y[j] ? k->y[j]->data : NULL;
    memcpy(p.k, k->k, sizeof p.k);
    memcpy(p.f, k->f, sizeof p.f);
    for (int j = 0; j < O2C_NF; j++) p.ff[j] = (float)k->f[j];
    if (k->kernel->fn) k->kernel->fn(0, k->count, &p);
    else ((const GenKernel *)k->kernel)->interp((const GenKernel *)k->kernel, 0, k->count, &p);   /* generated */
}

void eval_calls(const Lowering *L)
{
    long long back = 0;   /* loop iterations run: a loop that does not end fails */
    for (int c = 0; c < L->n; c++) {
        const KCall *k = &L->calls[c];
        if (k->ctl) {   /* control flow (ops/control.c): interpreted */
            int flag = k->x[0] ? ((const uint8_t *)eval_ptr(k->x[0]))[0] != 0 : 0;
            if (k->ctl == CTL_IF && !flag) c = k->jump;            /* to the else (or the end) */
            else if (k->ctl == CTL_ELSE) c = k->jump;              /* the then branch ran: to the end */
            else if (k->ctl == CTL_BREAK && !flag) c = k->jump;    /* past the loop's end */
            else if (k->ctl == CTL_FAIL && flag)
                fail("a run-time check failed: a loop ran another number of iterations than its scan outputs' "
                     "declared length, or an optional was empty");
            else if (k->ctl == CTL_END && L->calls[k->jump].ctl == CTL_LOOP) {
                c = k->jump;
                if (++back > (1LL << 24)) fail("a loop did not end after %lld iterations at compile time", back);
            }
            continue;
        }
        eval_call(k);
    }
    if (L->strings && L->strings->data && o2c_strs_full(L->strings->data))   /* the strings built fit their space */
        fail("the strings this node builds at compile time exceed %d bytes", EVAL_STRING_SPACE);
}

Tensor *eval_call_const(Lowering *L, KCall *c, const char *what)
{
    for (int j = 0; j < O2C_MAX_X; j++)
        if (c->x[j] && !c->x[j]->data) return c->y[0];
    if (c != &L->calls[L->n - 1] || c->y[1]) fail("internal: eval_call_const of a call that is not the last one");
    Tensor *t = lower_const(L, what, c->y[0]->dtype, c->y[0]->rank, c->y[0]->dims);
    c->y[0] = t;
    eval_call(c);
    L->n--;
    return t;
}

void fold_node(Node *n)
{
    fold_node_lowered(n, 0);
}

/* Integer Div and Mod by zero (or the most negative value by -1) are
 * undefined in C and trap on most machines: a constant one is refused
 * rather than run in the compiler. */
static void check_int_division(Node *n)
{
    if (*n->domain || (strcmp(n->op_type, "Div") && strcmp(n->op_type, "Mod")) || n->nin < 2) return;
    Tensor *a = n->in[0], *b = n->in[1];
    if (!a || !b || !dtype_is_int(b->dtype) || !b->data) return;
    int64_t nb = tensor_numel(b), na = a->data ? tensor_numel(a) : 0;
    int64_t lo = b->dtype == DT_INT32 ? INT32_MIN : b->dtype == DT_INT64 ? INT64_MIN : 0;
    int minus1 = 0;
    for (int64_t i = 0; i < nb; i++) {
        int64_t v = elem_i64(b->dtype, b->data, i);
        if (v == 0) fail("integer %s by zero (element %lld of '%s' is 0): the result is undefined", n->op_type,
                         (long long)i, b->name);
        minus1 |= v == -1;
    }
    for (int64_t k = 0; minus1 && lo && k < na; k++)
        if (elem_i64(a->dtype, a->data, k) == lo)
            fail("integer %s of the most negative %s by -1 overflows", n->op_type, dtype_name(a->dtype));
}

/* tiled: lower as for the C target (the register-tiled kernel variants),
 * which tests compare against the reference kernels */
void fold_node_lowered(Node *n, int tiled)
{
    eval_node(n, tiled);
    if (n->op->lower != lower_view && !n->op->view_offset) note("folded %s '%s'", n->op_type, n->name);
}

void eval_node(Node *n, int tiled)
{
    for (int j = 0; j < n->nout; j++)
        if (n->out[j] && !n->out[j]->data && !node_is_view(n)) tensor_alloc_data(n->out[j]);
    if (n->op->lower == lower_view) {            /* a view: same bytes, new shape */
        if (n->out[0] && !n->out[0]->data) n->out[0]->data = n->in[0]->data;
        return;
    }
    if (n->op->view_offset) {                    /* a view at a byte offset */
        if (n->out[0] && !n->out[0]->data) n->out[0]->data = (char *)n->in[0]->data + n->op->view_offset(n);
        return;
    }
    check_int_division(n);
    Lowering L = {0};
    L.tiled = tiled;
    lower_node(n, &L);
    eval_calls(&L);
}

/* Runs the whole graph in the compiler: every graph input must hold data
 * (tests set it; INT8 calibration will). Each node is evaluated in order
 * with the runtime kernels, so afterwards every tensor holds its value.
 * Tensors keep the layouts the graph gives them (layout.c). */
void graph_evaluate(Graph *g)
{
    graph_evaluate_lowered(g, 0);
}

void graph_evaluate_lowered(Graph *g, int tiled)
{
    for (int i = 0; i < g->ninputs; i++)
        if (!g->inputs[i]->data) fail_plain("internal: graph_evaluate needs a value for input '%s'", g->inputs[i]->name);
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        diag_node = n;
        for (int j = 0; j < n->nout; j++)
            if (n->out[j]) n->out[j]->data = NULL;
        fold_node_lowered(n, tiled);
    }
    diag_node = NULL;
}
