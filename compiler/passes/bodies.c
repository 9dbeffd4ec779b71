/* Pass bodies: the last pass, at every -O level. The bodies of the graph's
 * If, Loop and Scan nodes are bound to the node as the lowering and the
 * planner take them (ops/control.c: control_bind_bodies): a capture that
 * is not constant becomes a view of the node's input, a body's inputs are
 * written by the loop, not given by a caller. Until here (the passes
 * inside bodies) a body looked like any graph, its inputs and captures
 * graph inputs. */
#include "../ir.h"

int pass_bodies(Graph *g)
{
    for (int i = 0; i < g->nnodes; i++)
        if (node_has_subgraph(g->nodes[i])) control_bind_bodies(g->nodes[i]);
    return 0;   /* the graph's own nodes are as they were */
}
