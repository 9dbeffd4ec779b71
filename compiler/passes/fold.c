/* Pass fold: constant folding. A node whose inputs are all constant is run
 * now with the runtime kernels (eval.c) and leaves the graph; its outputs
 * become constants. A fold must not inflate the constants: the bytes it
 * adds may exceed the bytes it frees (inputs read by this node alone) by
 * at most FOLD_SLACK_BYTES. So Expand, Tile, ConstantOfShape, and casts or
 * dequantization of int8 weights to float stay compact and run at run time. */
#include "../ir.h"

#define FOLD_SLACK_BYTES 4096

static int64_t growth(Graph *g, Node *n)
{
    int64_t added = 0, freed = 0;
    for (int j = 0; j < n->nout; j++)
        if (n->out[j]) added += (int64_t)tensor_bytes(n->out[j]);
    for (int j = 0; j < n->nin; j++) {
        Tensor *t = n->in[j];
        int first = 1;
        for (int k = 0; k < j; k++) if (n->in[k] == t) first = 0;
        if (t && first && !t->is_output && graph_readers(g, t, &(Node **){0}) == 1)
            freed += (int64_t)tensor_bytes(t);
    }
    return added - freed;
}

int pass_fold(Graph *g)
{
    int changes = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        if (!node_foldable(n)) continue;
        int64_t grow = growth(g, n);
        if (grow > FOLD_SLACK_BYTES) {
            note("fold: keep %s '%s' at run time (folding adds %lld bytes of constants)", n->op_type, n->name,
                 (long long)grow);
            continue;
        }
        diag_node = n;
        fold_node(n);
        n->folded = 1;
        graph_remove_node(g, n);
        i--;
        changes++;
    }
    return changes;
}
