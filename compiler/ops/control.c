/* Control flow: If, Loop and Scan with their subgraphs, and the Optional
 * ops on plain tensors.
 *
 * A subgraph is a nested Graph (load.c): its inputs are typed here from
 * the node's inputs, its captures (names of enclosing scopes) are bound to
 * the node's extra inputs, and its nodes are inferred like the main
 * graph's (constant ones folded: a capture of a constant is constant in
 * every iteration; a body input never is). Shapes are static: a loop's
 * carried values keep their shape, an If's branches agree on theirs.
 *
 * Lowering puts the bodies' kernel calls into the schedule between
 * control-flow markers (ir.h: CTL_*), which the emitters write as C
 * control flow (a condition read back from the device for CUDA) and eval.c
 * interprets. An If with a constant condition lowers only its branch.
 * A loop keeps its state in the body's input tensors: the counter, the
 * condition, the carried values; each iteration ends by copying the body's
 * outputs into them (through temporaries where an output is another
 * input's bytes), and the scan outputs' slices are written at the counter.
 * plan.c keeps every tensor that lives across a loop's iterations out of
 * reach of the body's tensors. */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/control.h"


/* Evaluating a loop at compile time takes its iterations: a Loop without
 * a constant trip count, or with a large one, runs at run time (Loop's
 * OpDef.foldable). */
#define LOOP_FOLD_MAX_TRIPS (1 << 16)
#define LOOP_FOLD_MAX_WORK ((int64_t)1 << 24)   /* iterations x the body's output elements */

int loop_foldable(const Node *n)
{
    const Tensor *M = n->nin > 0 ? n->in[0] : NULL;
    if (!M || !M->data || M->dtype != DT_INT64) return 0;
    int64_t trips = ((const int64_t *)M->data)[0];
    if (trips > LOOP_FOLD_MAX_TRIPS) return 0;
    /* the work: each iteration computes every body node's outputs */
    const Attr *a = attr_find(n, "body");
    int64_t per = 1;
    for (int i = 0; a && a->g && i < a->g->nnodes; i++)
        for (int j = 0; j < a->g->nodes[i]->nout; j++)
            if (a->g->nodes[i]->out[j] && a->g->nodes[i]->out[j]->rank >= 0) per += tensor_numel(a->g->nodes[i]->out[j]);
    return trips <= 0 || per <= LOOP_FOLD_MAX_WORK / trips;
}

static Graph *subgraph(Node *n, const char *name)
{
    const Attr *a = attr_find(n, name);
    if (!a || !a->g) fail("needs the graph attribute '%s'", name);
    return a->g;
}


/* After the body's order is made: a capture that is not constant becomes
 * a view of the node's input (plan.c aliases its bytes; what a shape
 * depends on is traced through it to the graph's inputs), and the body's
 * inputs, written by the loop, are no graph inputs. */
static void capture_views(Node *owner, Graph *b)
{
    const OpDef *identity = node_op(owner, "", "Identity");
    for (int k = 0; k < b->ncaptures; k++) {
        Tensor *c = b->captures[k], *x = owner->in[b->capture_in[k]];
        c->is_input = 0;
        if (c->data) continue;
        Node *v = xalloc(sizeof *v);
        v->name = xfmt("%s (read by %s)", x->name, owner->name);
        v->op_type = "Identity";
        v->domain = "";
        v->op = identity;
        v->nin = v->nout = 1;
        v->in = xalloc(sizeof(Tensor *));
        v->out = xalloc(sizeof(Tensor *));
        v->in[0] = x;
        v->out[0] = c;
        c->producer = v;
    }
    for (int i = 0; i < b->ninputs; i++) b->inputs[i]->is_input = 0;
}

/* The message of the failure just caught (diag_msg) without the "FILE: "
 * that fail() puts first and, with self, the "node 'NAME' (OP): " it puts
 * next (both are said again when the message is failed with more words):
 * a copy, which the next failure leaves as it is. */
static const char *caught_message(const Node *self)
{
    static char msg[sizeof diag_msg];
    const char *m = diag_msg;
    size_t fl = diag_file ? strlen(diag_file) : 0;
    if (fl && !strncmp(m, diag_file, fl) && m[fl] == ':' && m[fl + 1] == ' ') m += fl + 2;
    if (self) {
        const char *said = xfmt("node '%s' (%s): ", self->name, self->op_type);
        if (!strncmp(m, said, strlen(said))) m += strlen(said);
    }
    snprintf(msg, sizeof msg, "%s", m);
    return msg;
}

/* Between inference and the end of the passes a body looks like any graph
 * to the passes (passes.c runs them inside bodies): its inputs and the
 * captures that are not constant are graph inputs, produced by no node.
 * The bodies pass makes them what they are at run time again
 * (control_bind_bodies). */
static void body_inputs_open(Graph *b)
{
    for (int k = 0; k < b->ncaptures; k++) {
        Tensor *c = b->captures[k];
        c->producer = NULL;
        c->is_input = !c->data;
    }
    for (int i = 0; i < b->ninputs; i++) b->inputs[i]->is_input = 1;
}

/* ---- shape inference of a body ------------------------------------------- */

/* Set while an unrolled iteration is inferred: its iteration number and
 * condition inputs are constants. */
static int keep_input_data;

/* Infers body b of node owner; its inputs' types and shapes are set. */
static void infer_body(Node *owner, Graph *b)
{
    b->inferred = 0;
    for (int k = 0; k < b->ncaptures; k++) {
        Tensor *c = b->captures[k], *x = owner->in[b->capture_in[k]];
        if (!x) fail("internal: capture '%s' is unbound", c->name);
        c->dtype = x->dtype;
        tensor_set_shape(c, x->rank, x->dims);
        c->data = x->data;
        c->is_input = !x->data;   /* known to the topological order as given */
        c->producer = NULL;
        c->storage = ST_NONE;
        c->seq = x->seq;
        c->optional = x->optional;   /* an optional graph input: read by the body's Optional* nodes */
        if (x->seq) seq_capture(owner, b, k);   /* a run-time body reading a sequence: refused (ops/sequence.c) */
    }
    for (int i = 0; i < b->ninputs; i++) {
        b->inputs[i]->is_input = 1;
        if (!keep_input_data) b->inputs[i]->data = NULL;
        b->inputs[i]->producer = NULL;
    }
    /* its ops (unsupported ones refused as a message about this node) */
    diag_node = owner;
    infer_resolve_ops(b, 1);
    /* a failure inside says where the node is */
    jmp_buf here, *outer = diag_jmp;
    diag_jmp = &here;
    if (setjmp(here)) {
        diag_jmp = outer;
        const char *msg = caught_message(NULL);
        diag_node = owner;
        fail_plain("%s (in subgraph '%s' of node '%s' (%s))", msg, b->name, owner->name, owner->op_type);
    }
    infer_order(b);
    capture_views(owner, b);
    infer_run(b);   /* the engine's inference loop, as for the model's graph */
    diag_jmp = outer;
    diag_node = owner;
    infer_drop_folded(b);
    body_inputs_open(b);
    b->inferred = 1;
    for (int i = 0; i < b->noutputs; i++) {
        Tensor *t = b->outputs[i];
        if (t->seq) continue;   /* a sequence: its elements (seq_flatten_if) */
        int body_input = 0;
        for (int k = 0; k < b->ninputs; k++) body_input |= b->inputs[k] == t;
        if (!t->data && !t->producer && !body_input)
            fail("subgraph '%s': output '%s' is produced by no node", b->name, t->name);
        if (!dtype_supported(t->dtype) || t->rank < 0)
            fail("subgraph '%s': output '%s' has no known type or shape", b->name, t->name);
    }
}

static void type_input(Graph *b, int i, int dtype, int rank, const int64_t *dims)
{
    Tensor *t = b->inputs[i];
    if (t->dtype && t->dtype != dtype && dtype_supported(t->dtype))
        fail("subgraph '%s': input '%s' is declared %s; the node gives it %s", b->name, t->name,
             dtype_name(t->dtype), dtype_name(dtype));
    t->dtype = dtype;
    tensor_set_shape(t, rank, dims);
}

static int same_shape(const Tensor *a, const Tensor *b)
{
    if (a->rank != b->rank) return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return 0;
    return 1;
}

/* The tensor whose bytes t is (through views). The walk is bounded: a body
 * whose inference failed may hold a cycle of views (a node reading its own
 * output). */
static Tensor *bytes_of(Tensor *t)
{
    for (int steps = 0; steps < 100000 && t->producer && t->producer->op && node_is_view(t->producer) &&
                        t->producer->in[0]; steps++)
        t = t->producer->in[0];
    return t;
}

static int flag_value(Node *n, Tensor *c, const char *what)
{
    if (c->dtype != DT_BOOL || tensor_numel(c) != 1)
        fail("%s '%s' must be one bool, not %s[%s]", what, c->name, dtype_name(c->dtype), tensor_shape_str(c));
    (void)n;
    return c->data ? ((const uint8_t *)c->data)[0] != 0 : -1;
}

/* ---- lowering of a body ---------------------------------------------------- */

/* The bodies of an If, Loop or Scan as the lowering and the planner take
 * them (the bodies pass, passes/bodies.c, at the end of the passes): the
 * captures that are not constant become views of the node's inputs, the
 * body's inputs are no graph inputs (the loop writes them). */
void control_bind_bodies(Node *n)
{
    for (int a = 0; a < n->nattrs; a++) {
        Graph *b = n->attrs[a].g;
        if (!b) continue;
        for (int k = 0; k < b->nunrolled; k++) capture_views(n, b->unrolled[k]);
        if (!b->nunrolled && b->inferred) capture_views(n, b);
    }
}

/* The bodies of node n open again as the passes take them (captures and
 * inputs graph inputs): after calibration (calibrate.c), which runs the
 * model between the passes with the bodies bound */
void control_open_bodies(Node *n)
{
    for (int a = 0; a < n->nattrs; a++) {
        Graph *b = n->attrs[a].g;
        if (!b) continue;
        for (int k = 0; k < b->nunrolled; k++) body_inputs_open(b->unrolled[k]);
        if (!b->nunrolled && b->inferred) body_inputs_open(b);
    }
}

static void lower_body(Node *owner, Graph *b, Lowering *L)
{
    (void)owner;
    for (int i = 0; i < b->nnodes; i++) lower_node(b->nodes[i], L);
    L->node = owner;
    diag_node = owner;
}

static KCall *set_value(Lowering *L, Tensor *y, int64_t v)
{
    KCall *c = lower_call(L, "o2c_ctl_set", 1);
    c->y[0] = y;
    c->k[O2C_CTL_SET_VALUE] = v;
    c->k[O2C_CTL_SET_ESIZE] = (int64_t)dtype_size(y->dtype);
    return c;
}

/* ---- If ------------------------------------------------------------------ */

static void infer_if_branches(Node *n, Tensor *cond, int v);

/* An If whose condition is known only at run time compiles both branches.
 * When one cannot be (its shapes do not work for these inputs, or the two
 * give different shapes) and the condition comes from graph inputs, the
 * refusal names them for --bind: bound, the condition is a constant and
 * only the branch it takes is compiled (the way onnxruntime never looks at
 * the other). */
void infer_if(Node *n)
{
    if (node_formal_inputs(n) != 1) fail("takes one input, the condition");
    Tensor *cond = need_in(n, 0);
    int v = flag_value(n, cond, "the condition");
    const char *bind = v < 0 ? bind_suggestion(cond) : NULL;
    if (!bind) {
        infer_if_branches(n, cond, v);
        return;
    }
    jmp_buf here, *outer = diag_jmp;
    diag_jmp = &here;
    if (setjmp(here)) {
        diag_jmp = outer;
        const char *msg = caught_message(n);
        diag_node = n;
        fail("%s; both branches are compiled because the condition ('%s') is a run-time value, computed from graph "
             "inputs: binding them with %s (each FILE a serialized TensorProto of the value) compiles only the "
             "branch they select", msg, cond->name, bind);
    }
    infer_if_branches(n, cond, v);
    diag_jmp = outer;
}

static void infer_if_branches(Node *n, Tensor *cond, int v)
{
    (void)cond;
    Graph *br[2] = {subgraph(n, "then_branch"), subgraph(n, "else_branch")};
    for (int s = 0; s < 2; s++) {
        if (v >= 0 && v != !s) continue;   /* a constant condition: only its branch */
        if (br[s]->ninputs) fail("subgraph '%s' has inputs; an If branch takes none", br[s]->name);
        if (br[s]->noutputs != n->nout)
            fail("has %d outputs, its branch '%s' %d", n->nout, br[s]->name, br[s]->noutputs);
        infer_body(n, br[s]);
    }
    seq_flatten_if(n, v < 0 ? br : br + (v == 0), v < 0 ? 2 : 1);   /* sequence outputs: one per element (ops/sequence.c) */
    for (int j = 0; j < n->nout; j++) {
        Tensor *a = br[v == 0 ? 1 : 0]->outputs[j];
        if (v < 0) {
            Tensor *e = br[1]->outputs[j];
            if (a->dtype != e->dtype)
                fail("output %d is %s in the then branch and %s in the else branch", j, dtype_name(a->dtype),
                     dtype_name(e->dtype));
            if (!same_shape(a, e))
                fail("output %d has shape [%s] in the then branch and [%s] in the else branch, and the condition "
                     "is known only at run time; onnx2c needs static shapes", j, tensor_shape_str(a),
                     tensor_shape_str(e));
        }
        if (!n->out[j]) continue;
        set_out(n, j, a->dtype, a->rank, a->dims);
        if (v >= 0 && a->data) n->out[j]->data = a->data;
    }
}

static void branch_outputs(Node *n, Graph *b, Lowering *L)
{
    for (int j = 0; j < n->nout; j++)   /* (a constant condition's constant outputs are known already) */
        if (n->out[j] && !n->out[j]->data) lower_copy(L, b->outputs[j], n->out[j]);
}

void lower_if(Node *n, Lowering *L)
{
    Tensor *cond = n->in[0];
    Graph *tb = subgraph(n, "then_branch"), *eb = subgraph(n, "else_branch");
    if (cond->data) {
        Graph *b = ((const uint8_t *)cond->data)[0] ? tb : eb;
        lower_body(n, b, L);
        branch_outputs(n, b, L);
        return;
    }
    lower_ctl(L, CTL_IF, cond);
    lower_body(n, tb, L);
    branch_outputs(n, tb, L);
    lower_ctl(L, CTL_ELSE, NULL);
    lower_body(n, eb, L);
    branch_outputs(n, eb, L);
    lower_ctl(L, CTL_END, NULL);
}

/* ---- loops: Loop and Scan ------------------------------------------------- */

#define MAX_LOOP_VALUES 256

typedef struct Iter {
    Graph *b;
    Tensor *iter;                 /* the counter (int64 scalar) */
    Tensor *trip_t;               /* Loop's run-time trip count, or NULL */
    int64_t trip_k;               /* a static trip count, or -1 */
    Tensor *cond_init;            /* Loop's condition input (NULL: none) */
    Tensor *cond_state, *cond_out;
    int has_cond;
    int nstate;
    Tensor *init[MAX_LOOP_VALUES], *state[MAX_LOOP_VALUES], *state_out[MAX_LOOP_VALUES], *final[MAX_LOOP_VALUES];
    int nscan_in;
    Tensor *scan_full[MAX_LOOP_VALUES], *scan_slice[MAX_LOOP_VALUES];
    int in_axis[MAX_LOOP_VALUES], in_rev[MAX_LOOP_VALUES];
    int nscan_out;
    Tensor *out_slice[MAX_LOOP_VALUES], *out_full[MAX_LOOP_VALUES];
    int out_axis[MAX_LOOP_VALUES], out_rev[MAX_LOOP_VALUES];
    int64_t cap;                  /* the scan outputs' static length when checked at run time, else -1 */
} Iter;

static void scan_call(Lowering *L, const char *kernel, Tensor *full, Tensor *slice, int axis, int rev, Tensor *iter)
{
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= full->dims[d];
    for (int d = axis + 1; d < full->rank; d++) inner *= full->dims[d];
    KCall *c = lower_call(L, kernel, outer * inner);
    int get = !strcmp(kernel, "o2c_scan_get");
    c->x[0] = get ? full : slice;
    c->x[1] = iter;
    c->y[0] = get ? slice : full;
    c->k[O2C_SCAN_OUTER] = outer;
    c->k[O2C_SCAN_LEN] = full->dims[axis];
    c->k[O2C_SCAN_INNER] = inner;
    c->k[O2C_SCAN_ESIZE] = (int64_t)dtype_size(full->dtype);
    c->k[O2C_SCAN_REVERSE] = rev;
}

static void lower_iterate(Node *n, Iter *it, Lowering *L)
{
    set_value(L, it->iter, 0);
    if (it->cond_state) {
        if (it->cond_init) lower_copy(L, it->cond_init, it->cond_state);
        else set_value(L, it->cond_state, 1);
    }
    for (int j = 0; j < it->nstate; j++) lower_copy(L, it->init[j], it->state[j]);
    Tensor *go = lower_temp(L, DT_BOOL, 0, NULL), *over = it->cap >= 0 ? lower_temp(L, DT_BOOL, 0, NULL) : NULL;
    lower_ctl(L, CTL_LOOP, NULL);
    KCall *t = lower_call(L, "o2c_loop_test", 1);
    t->x[0] = it->iter;
    t->x[1] = it->trip_t;
    t->x[2] = it->has_cond ? it->cond_state : NULL;
    t->y[0] = go;
    t->y[1] = over;
    t->k[O2C_LOOP_TRIP] = it->trip_k;
    t->k[O2C_LOOP_HAS_TRIP] = it->trip_t != NULL;
    t->k[O2C_LOOP_HAS_COND] = it->has_cond;
    t->k[O2C_LOOP_CAP] = it->cap;
    lower_ctl(L, CTL_BREAK, go);
    if (over) lower_ctl(L, CTL_FAIL, over);
    for (int j = 0; j < it->nscan_in; j++)
        scan_call(L, "o2c_scan_get", it->scan_full[j], it->scan_slice[j], it->in_axis[j], it->in_rev[j], it->iter);
    lower_body(n, it->b, L);
    for (int j = 0; j < it->nscan_out; j++)
        if (it->out_full[j])
            scan_call(L, "o2c_scan_put", it->out_full[j], it->out_slice[j], it->out_axis[j], it->out_rev[j], it->iter);
    /* the next iteration's state: all outputs read before any state is written */
    Tensor *src[MAX_LOOP_VALUES + 1], *dst[MAX_LOOP_VALUES + 1];
    int ns = 0;
    if (it->has_cond) { src[ns] = it->cond_out; dst[ns++] = it->cond_state; }
    for (int j = 0; j < it->nstate; j++) { src[ns] = it->state_out[j]; dst[ns++] = it->state[j]; }
    for (int j = 0; j < ns; j++) {
        Tensor *r = bytes_of(src[j]);
        int other = 0;
        for (int k = 0; k < ns; k++)
            if (k != j && r == dst[k]) other = 1;
        if (r == dst[j]) src[j] = NULL;   /* passed through unchanged */
        else if (other) {                 /* another state's bytes: keep them before they change */
            Tensor *tmp = lower_temp(L, src[j]->dtype, src[j]->rank, src[j]->dims);
            lower_copy(L, src[j], tmp);
            src[j] = tmp;
        }
    }
    for (int j = 0; j < ns; j++)
        if (src[j]) lower_copy(L, src[j], dst[j]);
    KCall *inc = lower_call(L, "o2c_ctl_inc", 1);
    inc->y[0] = it->iter;
    lower_ctl(L, CTL_END, NULL);
    if (it->cap >= 0) {
        KCall *d = lower_call(L, "o2c_loop_done", 1);
        Tensor *bad = lower_temp(L, DT_BOOL, 0, NULL);
        d->x[0] = it->iter;
        d->y[0] = bad;
        d->k[O2C_LOOP_CAP] = it->cap;
        lower_ctl(L, CTL_FAIL, bad);
    }
    for (int j = 0; j < it->nstate; j++)
        if (it->final[j]) lower_copy(L, it->state[j], it->final[j]);
}


/* ---- unrolling: a Loop whose body needs its iteration number at compile
 * time (a shape depends on it) runs as one inferred copy of the body per
 * iteration, when the trip count is a small constant and nothing ends the
 * loop earlier */

#define UNROLL_MAX 64




/* Infers b; 0 (the message in diag_msg) if that fails. */
static int try_infer_body(Node *owner, Graph *b)
{
    jmp_buf here, *outer = diag_jmp;
    diag_jmp = &here;
    if (setjmp(here)) {
        diag_jmp = outer;
        diag_node = owner;
        return 0;
    }
    infer_body(owner, b);
    diag_jmp = outer;
    return 1;
}

/* The graph inputs a value is computed from (the --bind candidates). */
static void bind_names(Tensor *t, char *buf, size_t cap, int depth)
{
    if (!t || t->data || depth > 64) return;
    if (t->is_input) {
        const char *w = xfmt(" --bind %s=FILE.pb", t->name);
        if (!strstr(buf, w) && strlen(buf) + strlen(w) < cap) strcat(buf, w);
        return;
    }
    if (t->producer)
        for (int j = 0; j < t->producer->nin; j++) bind_names(t->producer->in[j], buf, cap, depth + 1);
}

/* The length the model gives a Loop's scan output o (slices like s): the
 * declared shape of the graph output it is, or that a Cast or another
 * one-input elementwise node (the same shape) makes of it alone; on
 * re-inference, the length inferred before (from the same rule). -1: none. */
static int64_t declared_length(const Tensor *o, const Tensor *s)
{
    if (!o) return -1;
    const Tensor *d = o;
    if (!o->is_output && o->rank < 0 && o->nreaders == 1 && o->readers) {
        const Node *r = o->readers[0];
        if (r->nin == 1 && r->nout == 1 && r->out[0] && r->out[0]->is_output &&
            (!strcmp(r->op_type, "Cast") || node_elementwise(r)))
            d = r->out[0];
    }
    if (d == o && !o->is_output && o->rank < 0) return -1;
    if (d->rank != s->rank + 1 || d->dims[0] < 0) return -1;
    for (int k = 0; k < s->rank; k++)
        if (d->dims[k + 1] != s->dims[k]) return -1;
    return d->dims[0];
}

/* Loop: inputs M (trip count), cond, v_initial...; body (iteration_num,
 * cond, v...) -> (cond, v..., scan outputs...). */
static void loop_setup(Node *n, Iter *it, int infer)
{
    memset(it, 0, sizeof *it);
    int formal = node_formal_inputs(n);
    int N = formal - 2;
    if (N < 0) fail("needs the inputs M and cond (either may be empty)");
    if (N > MAX_LOOP_VALUES) fail("has %d loop-carried values; at most %d are supported", N, MAX_LOOP_VALUES);
    Graph *b = subgraph(n, "body");
    it->b = b;
    if (b->ninputs != 2 + N)
        fail("carries %d values, so its body needs %d inputs (iteration number, condition, values); it has %d", N,
             2 + N, b->ninputs);
    int K = n->nout - N;
    if (K < 0 || b->noutputs != 1 + N + K)
        fail("carries %d values and has %d outputs, so its body needs %d outputs; it has %d", N, n->nout, 1 + n->nout,
             b->noutputs);
    if (K > MAX_LOOP_VALUES) fail("has %d scan outputs; at most %d are supported", K, MAX_LOOP_VALUES);
    Tensor *M = in_t(n, 0), *cond = in_t(n, 1);
    if (M && (M->dtype != DT_INT64 || tensor_numel(M) != 1))
        fail("the trip count M must be one int64, not %s[%s]", dtype_name(M->dtype), tensor_shape_str(M));
    int cv = cond ? flag_value(n, cond, "the condition") : 1;
    it->iter = b->inputs[0];
    it->cond_state = b->inputs[1];
    it->cond_init = cond;
    it->has_cond = cond != NULL;
    it->trip_k = -1;
    if (M && M->data) it->trip_k = ((const int64_t *)M->data)[0] < 0 ? 0 : ((const int64_t *)M->data)[0];
    else if (M) it->trip_t = M;
    it->nstate = N;
    for (int j = 0; j < N; j++) {
        it->init[j] = need_in(n, 2 + j);
        it->state[j] = b->inputs[2 + j];
        it->state_out[j] = b->outputs[1 + j];
        it->final[j] = n->out[j];
    }
    if (infer) {
        type_input(b, 0, DT_INT64, 0, NULL);
        type_input(b, 1, DT_BOOL, 0, NULL);
        for (int j = 0; j < N; j++) type_input(b, 2 + j, it->init[j]->dtype, it->init[j]->rank, it->init[j]->dims);
        b->unrolled = NULL;
        b->nunrolled = 0;
        if (!try_infer_body(n, b)) {
            /* a shape in the body may depend on the iteration number: unrolled,
             * each copy knows it (the condition must stay true) */
            const char *msg = caught_message(NULL);
            int passthru = b->noutputs > 0 && b->ninputs > 1 && bytes_of(b->outputs[0]) == b->inputs[1];
            int always = passthru && (!cond || cv == 1);
            if (!always || it->trip_k < 1 || it->trip_k > UNROLL_MAX) {
                char binds[512] = "";
                if (passthru && (it->trip_k < 0 || (cond && cv < 0))) {
                    bind_names(M, binds, sizeof binds, 0);
                    bind_names(cond, binds, sizeof binds, 0);
                }
                if (*binds)
                    fail_plain("%s; the loop could run unrolled (each iteration's number known) with its trip count "
                               "known at compile time:%s", msg, binds);
                fail_plain("%s", msg);
            }
            b->unrolled = xalloc(sizeof(Graph *) * (size_t)it->trip_k);
            for (int64_t k = 0; k < it->trip_k; k++) {
                Graph *c = graph_clone(b, b->parent);
                type_input(c, 0, DT_INT64, 0, NULL);
                type_input(c, 1, DT_BOOL, 0, NULL);
                ((int64_t *)tensor_alloc_data(c->inputs[0]))[0] = k;
                ((uint8_t *)tensor_alloc_data(c->inputs[1]))[0] = 1;
                for (int j = 0; j < N; j++) type_input(c, 2 + j, it->init[j]->dtype, it->init[j]->rank, it->init[j]->dims);
                keep_input_data = 1;
                int ok = try_infer_body(n, c);
                keep_input_data = 0;
                if (!ok)
                    fail_plain("%.1900s (iteration %lld of the loop, unrolled)", caught_message(NULL), (long long)k);
                b->unrolled[b->nunrolled++] = c;
            }
            note("unrolled Loop '%s': %d iterations", n->name, b->nunrolled);
        }
    }
    Graph *ref = b->nunrolled ? b->unrolled[0] : b;   /* the types of the body's outputs */
    for (int k = 1; k < b->nunrolled; k++)
        for (int j = 0; j < b->noutputs; j++)
            if (b->unrolled[k]->outputs[j]->dtype != ref->outputs[j]->dtype ||
                !same_shape(b->unrolled[k]->outputs[j], ref->outputs[j]))
                fail("the body's output %d ('%s') has shape [%s] in iteration 0 and [%s] in iteration %d: onnx2c "
                     "needs static shapes", j, ref->outputs[j]->name, tensor_shape_str(ref->outputs[j]),
                     tensor_shape_str(b->unrolled[k]->outputs[j]), k);
    it->cond_out = ref->outputs[0];
    flag_value(n, it->cond_out, "the body's condition output");
    for (int j = 0; j < N; j++) it->state_out[j] = ref->outputs[1 + j];
    for (int j = 0; j < N; j++) {
        Tensor *o = it->state_out[j], *i = it->init[j];
        if (o->dtype != i->dtype)
            fail("loop-carried value %d ('%s') starts as %s and the body makes it %s", j, i->name,
                 dtype_name(i->dtype), dtype_name(o->dtype));
        if (!same_shape(o, i))
            fail("loop-carried value %d ('%s') starts with shape [%s] and the body makes it [%s]: onnx2c needs "
                 "loop-carried values of one static shape", j, i->name, tensor_shape_str(i), tensor_shape_str(o));
    }
    /* the scan outputs' length: the trip count when nothing ends the loop
     * earlier; else the length the model declares for the graph output,
     * checked at run time */
    int always = !cond || (cv == 1 && bytes_of(it->cond_out) == it->cond_state) || b->nunrolled;
    int64_t len = it->trip_k >= 0 && always ? it->trip_k : -1;
    it->cap = -1;
    it->nscan_out = K;
    for (int k = 0; k < K; k++) {
        Tensor *s = ref->outputs[1 + N + k], *o = n->out[N + k];
        it->out_slice[k] = s;
        it->out_full[k] = o;
        it->out_axis[k] = 0;
        if (s->rank + 1 > MAX_RANK) fail("scan output '%s' would have rank %d; at most %d is supported", s->name, s->rank + 1, MAX_RANK);
        if (len >= 0) continue;
        int64_t decl = declared_length(o, s);
        if (decl < 0 || (it->cap >= 0 && decl != it->cap))
            fail("the number of iterations depends on run-time values (%s), so scan output %d ('%s') has no static "
                 "length; onnx2c needs static shapes: make the trip count a constant, or declare the length of "
                 "the graph output", it->trip_k < 0 ? "the trip count" : "the condition", k, o ? o->name : "");
        it->cap = decl;
    }
    if (K && len < 0) len = it->cap;
    if (infer)
        for (int k = 0; k < K; k++) {
            Tensor *s = it->out_slice[k];
            int64_t dims[MAX_RANK];
            dims[0] = len;
            memcpy(dims + 1, s->dims, sizeof(int64_t) * (size_t)s->rank);
            if (n->out[N + k]) set_out(n, N + k, s->dtype, s->rank + 1, dims);
        }
    if (infer)
        for (int j = 0; j < N; j++)
            if (n->out[j]) out_like(n, j, it->init[j]);
}

void infer_loop(Node *n)
{
    Iter it;
    loop_setup(n, &it, 1);
}

/* The unrolled copies in order: each one's outputs are the next one's
 * inputs; a scan output's slice k is written from copy k. */
static void lower_unrolled(Node *n, Iter *it, Lowering *L)
{
    Graph *b = it->b;
    int T = b->nunrolled, N = it->nstate;
    for (int j = 0; j < N; j++) lower_copy(L, it->init[j], b->unrolled[0]->inputs[2 + j]);
    for (int k = 0; k < T; k++) {
        Graph *c = b->unrolled[k];
        lower_body(n, c, L);
        for (int s = 0; s < it->nscan_out; s++)
            if (it->out_full[s])
                scan_call(L, "o2c_scan_put", it->out_full[s], c->outputs[1 + N + s], 0, 0, c->inputs[0]);
        for (int j = 0; j < N; j++) {
            Tensor *dst = k + 1 < T ? b->unrolled[k + 1]->inputs[2 + j] : it->final[j];
            if (dst) lower_copy(L, c->outputs[1 + j], dst);
        }
    }
}

void lower_loop(Node *n, Lowering *L)
{
    Iter it;
    loop_setup(n, &it, 0);
    if (it.b->nunrolled) lower_unrolled(n, &it, L);
    else lower_iterate(n, &it, L);
}

/* Scan (opset 9+): states..., scan inputs...; body (states..., slices...)
 * -> (states..., scan output slices...). Scan-8: a first input
 * sequence_lens and a batch axis 0 on every input and output (batch 1
 * here: the states and slices are then the same bytes without it). */
static void scan_setup(Node *n, Iter *it, int infer)
{
    memset(it, 0, sizeof *it);
    int formal = node_formal_inputs(n);
    int v8 = n->opset < 9, first = v8 ? 1 : 0;
    if (!attr_has(n, "num_scan_inputs")) fail("needs the attribute num_scan_inputs");
    int64_t M64 = attr_i(n, "num_scan_inputs");
    if (M64 < 1 || M64 > formal - first)
        fail("num_scan_inputs is %lld; it has %d inputs", (long long)M64, formal - first);
    int M = (int)M64;
    int N = formal - first - M;
    if (M > MAX_LOOP_VALUES || N > MAX_LOOP_VALUES) fail("has too many inputs (at most %d of each kind)", MAX_LOOP_VALUES);
    if (v8 && in_t(n, 0))
        fail("sequence_lens is given: onnx2c supports Scan-8 with the full length of every sequence only (omit it)");
    Graph *b = subgraph(n, "body");
    it->b = b;
    int K = n->nout - N;
    if (b->ninputs != N + M) fail("has %d states and %d scan inputs; its body has %d inputs", N, M, b->ninputs);
    if (K < 0 || b->noutputs != N + K) fail("has %d outputs, its body %d", n->nout, b->noutputs);
    if (K > MAX_LOOP_VALUES) fail("has %d scan outputs; at most %d are supported", K, MAX_LOOP_VALUES);
    const int64_t *dirs = NULL, *axes = NULL, *odirs = NULL, *oaxes = NULL;
    int nd = v8 ? attr_ints(n, "directions", &dirs) : attr_ints(n, "scan_input_directions", &dirs);
    int na = v8 ? 0 : attr_ints(n, "scan_input_axes", &axes);
    int nod = v8 ? 0 : attr_ints(n, "scan_output_directions", &odirs);
    int noa = v8 ? 0 : attr_ints(n, "scan_output_axes", &oaxes);
    if ((nd && nd != M) || (na && na != M)) fail("the scan input directions or axes do not list %d values", M);
    if ((nod && nod != K) || (noa && noa != K)) fail("the scan output directions or axes do not list %d values", K);
    int64_t batch = -1, len = -1;
    it->iter = NULL;
    it->trip_k = -1;
    it->cap = -1;
    it->nstate = N;
    it->nscan_in = M;
    it->nscan_out = K;
    for (int j = 0; j < N; j++) {
        Tensor *x = need_in(n, first + j);
        it->init[j] = x;
        it->state[j] = b->inputs[j];
        it->state_out[j] = b->outputs[j];
        it->final[j] = n->out[j];
        if (v8) {
            if (x->rank < 1) fail("Scan-8 state '%s' has no batch axis", x->name);
            if (batch >= 0 && x->dims[0] != batch) fail("the batch sizes of the inputs differ");
            batch = x->dims[0];
        }
    }
    for (int j = 0; j < M; j++) {
        Tensor *x = need_in(n, first + N + j);
        int64_t ax = v8 ? 1 : (na ? axes[j] : 0);
        if (ax < 0) ax += x->rank;
        if (ax < 0 || ax >= x->rank) fail("scan input '%s' (rank %d) has no axis %lld", x->name, x->rank, (long long)ax);
        if (len >= 0 && x->dims[ax] != len)
            fail("scan input '%s' has %lld steps along its scan axis, an earlier one %lld", x->name,
                 (long long)x->dims[ax], (long long)len);
        len = x->dims[ax];
        if (v8) {
            if (x->rank < 2) fail("Scan-8 scan input '%s' needs a batch and a sequence axis", x->name);
            if (batch >= 0 && x->dims[0] != batch) fail("the batch sizes of the inputs differ");
            batch = x->dims[0];
        }
        it->scan_full[j] = x;
        it->scan_slice[j] = b->inputs[N + j];
        it->in_axis[j] = (int)ax;
        it->in_rev[j] = nd ? dirs[j] != 0 : 0;
    }
    if (v8 && batch != 1)
        fail("Scan-8 with a batch of %lld: onnx2c supports a batch of 1 (or use Scan-9 and later)", (long long)batch);
    it->trip_k = len;
    if (infer) {
        for (int j = 0; j < N; j++) {
            Tensor *x = it->init[j];
            type_input(b, j, x->dtype, x->rank - v8, x->dims + v8);
        }
        for (int j = 0; j < M; j++) {
            Tensor *x = it->scan_full[j];
            int64_t dims[MAX_RANK];
            int r = 0;
            for (int d = v8; d < x->rank; d++)
                if (d != it->in_axis[j]) dims[r++] = x->dims[d];
            type_input(b, N + j, x->dtype, r, dims);
        }
        infer_body(n, b);
    }
    for (int j = 0; j < N; j++) {
        Tensor *o = it->state_out[j], *i = b->inputs[j];
        if (o->dtype != i->dtype)
            fail("state %d ('%s') starts as %s and the body makes it %s", j, it->init[j]->name,
                 dtype_name(i->dtype), dtype_name(o->dtype));
        if (!same_shape(o, i))
            fail("state %d ('%s') starts with shape [%s] and the body makes it [%s]: onnx2c needs states of one "
                 "static shape", j, it->init[j]->name, tensor_shape_str(i), tensor_shape_str(o));
        if (infer && n->out[j]) out_like(n, j, it->init[j]);
    }
    for (int k = 0; k < K; k++) {
        Tensor *s = b->outputs[N + k];
        int r = s->rank + 1 + v8;
        if (r > MAX_RANK) fail("scan output '%s' would have rank %d; at most %d is supported", s->name, r, MAX_RANK);
        int64_t ax = v8 ? 1 : (noa ? oaxes[k] : 0);
        if (ax < 0) ax += r;
        if (ax < v8 || ax >= r) fail("scan output %d has no axis %lld", k, (long long)ax);
        it->out_slice[k] = s;
        it->out_full[k] = n->out[N + k];
        it->out_axis[k] = (int)ax;
        it->out_rev[k] = nod ? odirs[k] != 0 : 0;
        if (infer && n->out[N + k]) {
            int64_t dims[MAX_RANK];
            int q = 0;
            if (v8) dims[q++] = 1;
            for (int d = 0; d < s->rank; d++) {
                if (q == ax) dims[q++] = len;
                dims[q++] = s->dims[d];
            }
            if (q == ax) dims[q++] = len;
            set_out(n, N + k, s->dtype, r, dims);
        }
    }
}

void infer_scan(Node *n)
{
    Iter it;
    scan_setup(n, &it, 1);
}

void lower_scan(Node *n, Lowering *L)
{
    Iter it;
    scan_setup(n, &it, 0);
    it.iter = lower_temp(L, DT_INT64, 0, NULL);
    lower_iterate(n, &it, L);
}

/* ---- Optional* on plain tensors ------------------------------------------- */

void infer_optional_has_element(Node *n)
{
    set_out(n, 0, DT_BOOL, 0, NULL);
    Tensor *x = n->nin > 0 ? n->in[0] : NULL;
    if (x && x->optional) return;   /* an optional graph input: known at run time */
    uint8_t *d = tensor_alloc_data(n->out[0]);
    d[0] = x != NULL;   /* a tensor is there, or the input is omitted */
}

static Tensor *has_element(Lowering *L, Tensor *x, Tensor *y)
{
    KCall *c = lower_call(L, "o2c_opt_has", 1);
    c->x[0] = x;
    c->y[0] = y ? y : lower_temp(L, DT_BOOL, 0, NULL);
    return c->y[0];
}

void lower_optional_has_element(Node *n, Lowering *L)
{
    if (!n->out[0]->data) has_element(L, n->in[0], n->out[0]);
}

/* A copy of its input (not a view: the input may be an optional graph
 * input, checked first: empty fails the run with NAME_ERR_CHECK, as the spec makes it an
 * error). */
void lower_optional_get_element(Node *n, Lowering *L)
{
    Tensor *x = n->in[0];
    if (x->optional) {
        Tensor *has = has_element(L, x, NULL);
        Tensor *empty = lower_temp(L, DT_BOOL, 0, NULL);
        KCall *c = lower_call(L, "o2c_Not_b", 1);
        c->x[0] = has;
        c->y[0] = empty;
        lower_ctl(L, CTL_FAIL, empty);
    }
    lower_copy(L, x, n->out[0]);
}
