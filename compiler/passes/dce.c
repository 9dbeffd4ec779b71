/* Pass dce: dead-node elimination. A node none of whose outputs is read by
 * another node or is a graph output is removed (ONNX ops have no side
 * effects). Walks backwards so whole dead chains go in one run. */
#include "../ir.h"

int pass_dce(Graph *g)
{
    int changes = 0;
    for (int i = g->nnodes - 1; i >= 0; i--) {
        Node *n = g->nodes[i];
        int live = 0;
        for (int j = 0; j < n->nout; j++)
            if (n->out[j] && tensor_nuses(g, n->out[j]) > 0) live = 1;
        if (live) continue;
        note("dce: remove %s '%s'", n->op_type, n->name);
        graph_remove_node(g, n);
        changes++;
    }
    return changes;
}
