/* Execution order: among the graph's valid topological orders, one that
 * lowers the peak of live memory. The lowering runs the nodes in g->nodes
 * order and the planner (plan.c) packs the arena for that order, so the
 * order bounds what any packing can reach.
 *
 * Memory model of an order (an estimate before lowering): a node's outputs
 * take their bytes when it runs, unless they are constants, graph inputs or
 * outputs (the caller's memory) or views (Reshape & co., the bytes of their
 * source); a buffer is freed after the last node that reads it or a view of
 * it. Both ends are inclusive: a node's inputs and outputs are live together.
 *
 * Two candidates: the current order (the model's, after the passes) and a
 * greedy one (Kahn's algorithm taking, among the ready nodes, the one whose
 * run adds the fewest bytes net of what it frees; ties by model position).
 * The one with the lower peak is kept (the current one on a tie), so no
 * model gets a higher estimated peak. */
#include <stdint.h>
#include <string.h>

#include "ir.h"

/* the buffer a tensor's bytes belong to (through views), or NULL when it
 * takes no arena bytes */
static Tensor *buffer_of(Tensor *t)
{
    for (int guard = 0; t && guard < 1000; guard++) {
        if (t->data || t->is_input || t->is_output) return NULL;
        if (t->producer && node_is_view(t->producer) && t->producer->nin > 0) t = t->producer->in[0];
        else return t;
    }
    return NULL;
}

typedef struct Sched {
    Graph *g;
    int n;
    int **reads; int *nreads;   /* per node: the buffers it reads (distinct) */
    int *readers;               /* per buffer (tensor mark): nodes reading it, all told */
} Sched;

/* buffer ids: t->mark = index of the tensor in g->tensors */
static void sched_init(Sched *s, Graph *g)
{
    s->g = g;
    s->n = g->nnodes;
    for (int t = 0; t < g->ntensors; t++) g->tensors[t]->mark = t;
    s->reads = xalloc(sizeof(int *) * (size_t)(s->n + 1));
    s->nreads = xalloc(sizeof(int) * (size_t)(s->n + 1));
    s->readers = xalloc(sizeof(int) * (size_t)(g->ntensors + 1));
    for (int i = 0; i < s->n; i++) {
        Node *nd = g->nodes[i];
        s->reads[i] = xalloc(sizeof(int) * (size_t)(nd->nin + 1));
        for (int j = 0; j < nd->nin; j++) {
            Tensor *b = buffer_of(nd->in[j]);
            if (!b) continue;
            int dup = 0;
            for (int k = 0; k < s->nreads[i]; k++) dup |= s->reads[i][k] == b->mark;
            if (dup) continue;
            s->reads[i][s->nreads[i]++] = b->mark;
            s->readers[b->mark]++;
        }
    }
}

/* bytes a node's run makes live (its outputs that are buffers of their own) */
static int64_t node_alloc(const Node *nd)
{
    int64_t a = 0;
    if (node_is_view(nd)) return 0;
    for (int j = 0; j < nd->nout; j++) {
        Tensor *y = nd->out[j];
        if (y && buffer_of(y) == y) a += (int64_t)tensor_bytes(y);
    }
    return a;
}

/* the peak of the memory model for the order ord[0..n) */
static int64_t order_peak(const Sched *s, const int *ord)
{
    Graph *g = s->g;
    int *left = xalloc(sizeof(int) * (size_t)(g->ntensors + 1));
    memcpy(left, s->readers, sizeof(int) * (size_t)g->ntensors);
    int64_t live = 0, peak = 0;
    for (int k = 0; k < s->n; k++) {
        int i = ord[k];
        live += node_alloc(g->nodes[i]);
        if (live > peak) peak = live;
        for (int r = 0; r < s->nreads[i]; r++)
            if (--left[s->reads[i][r]] == 0) live -= (int64_t)tensor_bytes(g->tensors[s->reads[i][r]]);
        /* an output nobody reads dies at once */
        const Node *nd = g->nodes[i];
        if (!node_is_view(nd))
            for (int j = 0; j < nd->nout; j++) {
                Tensor *y = nd->out[j];
                if (y && buffer_of(y) == y && s->readers[y->mark] == 0) live -= (int64_t)tensor_bytes(y);
            }
    }
    return peak;
}

/* the node index of the producer of a node's input j, when that producer
 * is in the graph and feeds no earlier input of the node; else -1 */
static int new_producer(const Graph *g, const Node *nd, int j)
{
    const Tensor *t = nd->in[j];
    if (!t || !t->producer) return -1;
    for (int k = 0; k < j; k++)
        if (nd->in[k] && nd->in[k]->producer == t->producer) return -1;
    int p = t->producer->step;
    return p >= 0 && p < g->nnodes && g->nodes[p] == t->producer ? p : -1;
}

/* Kahn's algorithm, the ready node with the least net allocation first.
 * Each node's allocation and the nodes that depend on each node are found
 * once (finding them again at every step made a graph of 5000 nodes take
 * seconds: fuzzing, SplitToSequence into 1000 pieces at -O0). */
static void greedy_order(const Sched *s, int *ord)
{
    Graph *g = s->g;
    int n = s->n;
    int *indeg = xalloc(sizeof(int) * (size_t)(n + 1)), *done = xalloc(sizeof(int) * (size_t)(n + 1));
    int *left = xalloc(sizeof(int) * (size_t)(g->ntensors + 1));
    int64_t *alloc = xalloc(sizeof(int64_t) * (size_t)(n + 1));
    memcpy(left, s->readers, sizeof(int) * (size_t)g->ntensors);
    for (int i = 0; i < n; i++) g->nodes[i]->step = i;
    /* dependencies: indeg[i] distinct producers of node i's inputs (one
     * outside the graph never runs, so i never becomes ready); the nodes
     * depending on node p are deps[first[p] .. first[p] + ndeps[p]) */
    int *ndeps = xalloc(sizeof(int) * (size_t)(n + 1)), *first = xalloc(sizeof(int) * (size_t)(n + 1));
    int total = 0;
    for (int i = 0; i < n; i++) {
        Node *nd = g->nodes[i];
        for (int j = 0; j < nd->nin; j++) {
            const Tensor *t = nd->in[j];
            int dup = 0;
            if (!t || !t->producer) continue;
            for (int k = 0; k < j; k++) dup |= nd->in[k] && nd->in[k]->producer == t->producer;
            if (dup) continue;
            indeg[i]++;
            int p = new_producer(g, nd, j);
            if (p >= 0) { ndeps[p]++; total++; }
        }
        alloc[i] = node_alloc(nd);
    }
    int *deps = xalloc(sizeof(int) * (size_t)(total + 1));
    for (int p = 0, at = 0; p < n; p++) { first[p] = at; at += ndeps[p]; ndeps[p] = 0; }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < g->nodes[i]->nin; j++) {
            int p = new_producer(g, g->nodes[i], j);
            if (p >= 0) deps[first[p] + ndeps[p]++] = i;
        }
    for (int k = 0; k < n; k++) {
        int best = -1;
        int64_t best_d = 0;
        for (int i = 0; i < n; i++) {
            if (done[i] || indeg[i]) continue;
            int64_t d = alloc[i];
            for (int r = 0; r < s->nreads[i]; r++)
                if (left[s->reads[i][r]] == 1) d -= (int64_t)tensor_bytes(g->tensors[s->reads[i][r]]);
            if (best < 0 || d < best_d) { best = i; best_d = d; }
        }
        if (best < 0) fail_plain("internal: the schedule has a cycle");
        ord[k] = best;
        done[best] = 1;
        for (int r = 0; r < s->nreads[best]; r++) left[s->reads[best][r]]--;
        /* the nodes reading its outputs: one dependency fewer */
        for (int q = 0; q < ndeps[best]; q++) indeg[deps[first[best] + q]]--;
    }
}

/* Local search from the better candidate: move one node to another place
 * between its last producer and its first reader (the order stays
 * topological), keep the move unless the peak grows. A graph with If,
 * Loop or Scan nodes keeps its order (their captures are among their
 * inputs, but moving bodies is not covered by tests yet). A fixed generator, so the same
 * order every time; bounded to SCHEDULE_SEARCH_WORK node visits. */
#define SCHEDULE_SEARCH_WORK 50000000
static int64_t improve_order(const Sched *s, int *ord, int64_t peak)
{
    Graph *g = s->g;
    int n = s->n;
    int *pos = xalloc(sizeof(int) * (size_t)(n + 1)), *trial = xalloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) g->nodes[i]->step = i;   /* node index */
    for (int k = 0; k < n; k++) pos[ord[k]] = k;
    for (int i = 0; i < n; i++)
        if (node_has_subgraph(g->nodes[i])) return peak;
    int64_t budget = SCHEDULE_SEARCH_WORK / ((int64_t)n * 4 + 1);
    if (budget > 500 + 50 * (int64_t)n) budget = 500 + 50 * (int64_t)n;
    /* no order goes below the bytes one node needs at once: its buffer
     * inputs and its own outputs */
    int64_t floor_bytes = 0;
    for (int i = 0; i < n; i++) {
        int64_t b = node_alloc(g->nodes[i]);
        for (int r = 0; r < s->nreads[i]; r++) b += (int64_t)tensor_bytes(g->tensors[s->reads[i][r]]);
        if (b > floor_bytes) floor_bytes = b;
    }
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    for (int64_t it = 0; it < budget && peak > floor_bytes; it++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        int k = (int)(rng % (uint64_t)n), i = ord[k];
        Node *nd = g->nodes[i];
        int lo = 0, hi = n - 1;
        for (int j = 0; j < nd->nin; j++)
            if (nd->in[j] && nd->in[j]->producer && pos[nd->in[j]->producer->step] + 1 > lo)
                lo = pos[nd->in[j]->producer->step] + 1;
        for (int o = 0; o < nd->nout; o++) {
            Node **rd;
            int nr = nd->out[o] ? graph_readers(g, nd->out[o], &rd) : 0;
            for (int r = 0; r < nr; r++)
                if (pos[rd[r]->step] - 1 < hi) hi = pos[rd[r]->step] - 1;
        }
        if (hi <= lo) continue;
        int q = lo + (int)((rng >> 32) % (uint64_t)(hi - lo + 1));
        if (q == k) continue;
        memcpy(trial, ord, sizeof(int) * (size_t)n);
        if (q < k) memmove(trial + q + 1, trial + q, sizeof(int) * (size_t)(k - q));
        else memmove(trial + k, trial + k + 1, sizeof(int) * (size_t)(q - k));
        trial[q] = i;
        int64_t p = order_peak(s, trial);
        if (p > peak) continue;
        peak = p;
        memcpy(ord, trial, sizeof(int) * (size_t)n);
        for (int m = 0; m < n; m++) pos[ord[m]] = m;
    }
    return peak;
}

void schedule_graph(Graph *g)
{
    int n = g->nnodes;
    g->peak_model = g->peak_scheduled = 0;
    if (n < 3) return;
    Sched s;
    sched_init(&s, g);
    int *cur = xalloc(sizeof(int) * (size_t)(n + 1)), *gr = xalloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) cur[i] = i;
    greedy_order(&s, gr);
    int64_t p0 = order_peak(&s, cur), p1 = order_peak(&s, gr);
    if (p0 <= p1) {   /* search from the better of the two */
        memcpy(gr, cur, sizeof(int) * (size_t)n);
        p1 = p0;
    }
    p1 = improve_order(&s, gr, p1);
    g->peak_model = p0;
    g->peak_scheduled = p1 < p0 ? p1 : p0;
    note("schedule: estimated peak %lld bytes in the model's order, %lld in the memory-aware one%s", (long long)p0,
         (long long)p1, p1 < p0 ? " (taken)" : "");
    if (p1 >= p0) return;
    Node **nodes = xalloc(sizeof(Node *) * (size_t)(n + 1));
    for (int k = 0; k < n; k++) nodes[k] = g->nodes[gr[k]];
    for (int k = 0; k < n; k++) {
        g->nodes[k] = nodes[k];
        g->nodes[k]->step = k;
    }
    graph_touch(g);
}
