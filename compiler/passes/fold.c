/* Pass fold: constant folding. Nodes whose inputs are constants (model
 * constants, or results of other such nodes) are run now with the runtime
 * kernels (the evaluator, engine/eval.c) and leave the graph; their
 * outputs become constants.
 *
 * Folding must not inflate the constants. The nodes that can be folded are
 * taken as regions: the connected groups of such nodes (a weight sliced
 * into gates and concatenated again is one region). A region is folded
 * when the bytes of the constants it leaves (its outputs read by other
 * nodes or by the graph's outputs) exceed the bytes of the constants it
 * frees (its constant inputs that nothing else reads) by at most
 * FOLD_SLACK_BYTES; the nodes of a region that is not are folded one by one
 * by the same measure (a node's outputs against the inputs that die with
 * it). So Expand, Tile, ConstantOfShape, and casts or dequantization of
 * int8 weights to float stay compact and run at run time, while a weight's
 * reordering (sliced into gates and concatenated again) is done once, here.
 * All of it within the model's budget (fold_allowed: what folding adds, in
 * all, stays below the model's own size plus FOLD_BUDGET_FLOOR). */
#include "../ir.h"

#define FOLD_SLACK_BYTES 4096

/* A node alone: the bytes of its outputs less those of its inputs that
 * only it reads. */
static int64_t node_growth(Graph *g, Node *n)
{
    int64_t added = 0, freed = 0;
    for (int j = 0; j < n->nout; j++)
        if (n->out[j]) added += (int64_t)tensor_bytes(n->out[j]);
    for (int j = 0; j < n->nin; j++) {
        Tensor *t = n->in[j];
        int first = 1;
        for (int k = 0; k < j; k++) if (n->in[k] == t) first = 0;
        if (t && first && !graph_is_output(g, t) && graph_readers(g, t, &(Node **){0}) == 1)
            freed += (int64_t)tensor_bytes(t);
    }
    return added - freed;
}

/* Regions: every candidate node gets the index of its region's root in
 * reg[] (union-find over candidates, by their position in g). */
static int find(int *reg, int i)
{
    while (reg[i] != i) i = reg[i] = reg[reg[i]];
    return i;
}

/* The candidates: in graph order, a node whose inputs are all constants or
 * outputs of earlier candidates, and whose op may be evaluated now
 * (node_foldable's other conditions). cand[i] is 1 for them; a tensor they
 * make is marked (mark 1). */
static void candidates(Graph *g, char *cand)
{
    for (int t = 0; t < g->ntensors; t++) g->tensors[t]->mark = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        int ok = n->nout > 0 && n->out[0] && (!n->op->foldable || n->op->foldable(n));
        for (int j = 0; ok && j < n->nin; j++)
            if (n->in[j] && !n->in[j]->data && !n->in[j]->mark) ok = 0;
        cand[i] = (char)ok;
        for (int j = 0; ok && j < n->nout; j++)
            if (n->out[j]) n->out[j]->mark = 1;
    }
}

int pass_fold(Graph *g)
{
    int nn = g->nnodes;
    if (!nn) return 0;
    char *cand = xalloc((size_t)nn);
    int *reg = xalloc(sizeof(int) * (size_t)nn);
    candidates(g, cand);
    for (int i = 0; i < nn; i++) {
        reg[i] = i;
        g->nodes[i]->step = i;
    }
    /* a candidate and the candidates whose outputs it reads: one region */
    for (int i = 0; i < nn; i++) {
        Node *n = g->nodes[i];
        if (!cand[i]) continue;
        for (int j = 0; j < n->nin; j++) {
            Node *p = n->in[j] ? n->in[j]->producer : NULL;
            if (p && p->step < nn && g->nodes[p->step] == p && cand[p->step]) reg[find(reg, i)] = find(reg, p->step);
        }
    }
    /* each region's bytes: added (outputs read outside it) and freed (its
     * constant inputs nothing else reads), each tensor counted once */
    int64_t *added = xalloc(sizeof(int64_t) * (size_t)nn), *freed = xalloc(sizeof(int64_t) * (size_t)nn);
    for (int t = 0; t < g->ntensors; t++) g->tensors[t]->mark = 0;
    for (int i = 0; i < nn; i++) {
        if (!cand[i]) continue;
        Node *n = g->nodes[i];
        int r = find(reg, i);
        for (int j = 0; j < n->nout; j++) {
            Tensor *y = n->out[j];
            if (!y || y->mark) continue;
            y->mark = 1;
            Node **rd;
            int nr = graph_readers(g, y, &rd), outside = graph_is_output(g, y);
            for (int k = 0; k < nr; k++)
                if (!cand[rd[k]->step] || find(reg, rd[k]->step) != r) outside = 1;
            if (outside) added[r] += (int64_t)tensor_bytes(y);
        }
        for (int j = 0; j < n->nin; j++) {
            Tensor *x = n->in[j];
            if (!x || x->mark || !x->data || (x->producer && cand[x->producer->step])) continue;
            x->mark = 1;
            Node **rd;
            int nr = graph_readers(g, x, &rd), inside = !graph_is_output(g, x);
            for (int k = 0; k < nr; k++)
                if (!cand[rd[k]->step] || find(reg, rd[k]->step) != r) inside = 0;
            if (inside) freed[r] += (int64_t)tensor_bytes(x);
        }
    }
    /* each region decided once: folded whole (within the model's budget,
     * fold_allowed), node by node, or left to run time */
    enum { UNDECIDED, WHOLE, BY_NODE, KEPT };
    int changes = 0, kept = -1;
    signed char *whole = xalloc((size_t)nn);
    Node **order = xalloc(sizeof(Node *) * (size_t)nn);
    for (int i = 0; i < nn; i++) order[i] = g->nodes[i];
    for (int i = 0; i < nn; i++) {
        if (!cand[i]) continue;
        Node *n = order[i];
        int r = find(reg, i);
        if (whole[r] == UNDECIDED) {
            int64_t grow = added[r] - freed[r];
            whole[r] = grow > FOLD_SLACK_BYTES ? BY_NODE : fold_allowed(g, grow) ? WHOLE : KEPT;
        }
        if (whole[r] == KEPT) continue;
        if (whole[r] == BY_NODE) {   /* the region as a whole inflates: node by node */
            int64_t grow = node_foldable(n) ? node_growth(g, n) : INT64_MAX;
            if (grow > FOLD_SLACK_BYTES || !fold_allowed(g, grow)) {
                if (kept != r && grow != INT64_MAX)
                    note("fold: keep %s '%s' at run time (folding adds %lld bytes of constants)", n->op_type, n->name,
                         (long long)grow);
                kept = r;
                continue;
            }
        }
        diag_node = n;
        fold_node(n);
        n->folded = 1;
        graph_remove_node(g, n);
        changes++;
    }
    return changes;
}
