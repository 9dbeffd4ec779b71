/* Pass dce: dead-node elimination. A node none of whose outputs is read by
 * another node or is a graph output is removed (ONNX ops have no side
 * effects). Walks backwards so whole dead chains go in one run. The uses
 * are counted once and decremented as nodes go (recounting the graph after
 * each removal made a model with thousands of dead nodes quadratic: a
 * fuzzing input of 2000 dead Slice/Squeeze pieces spent seconds here). */
#include "../ir.h"

int pass_dce(Graph *g)
{
    graph_recount_uses(g);
    int changes = 0;
    for (int i = g->nnodes - 1; i >= 0; i--) {
        Node *n = g->nodes[i];
        int live = 0;
        for (int j = 0; j < n->nout; j++)
            if (n->out[j] && n->out[j]->nuses > 0) live = 1;
        if (live) continue;
        note("dce: remove %s '%s'", n->op_type, n->name);
        for (int j = 0; j < n->nin; j++)   /* every use, as graph_recount_uses counts them */
            if (n->in[j]) n->in[j]->nuses--;
        graph_remove_node(g, n);   /* marks the counts stale for everyone after this pass */
        changes++;
    }
    return changes;
}
