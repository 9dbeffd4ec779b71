/* Lowering: every node of the (optimized) graph becomes kernel calls,
 * through its op's lower function. Views become nothing (or a copy when
 * their output is a graph output); graph outputs not written in place get
 * a final copy. Dead nodes were removed by the dce pass (not at -O0). */
#include <string.h>

#include "ir.h"

void lower_graph(Graph *g, Lowering *L)
{
    for (int i = 0; i < g->nnodes; i++) lower_node(g->nodes[i], L);
    diag_node = NULL;
    /* graph outputs that are not written in place by their producer */
    for (int k = 0; k < g->noutputs; k++) {
        Tensor *t = g->outputs[k];
        int in_place = t->producer && t->output_index == k && !t->data && !t->is_input;
        if (in_place) continue;
        Tensor *o = xalloc(sizeof *o);
        *o = *t;
        o->name = xfmt("%s (output %d)", t->name, k);
        o->data = NULL;
        o->is_input = 0;
        o->is_output = 1;
        o->output_index = k;
        o->producer = NULL;
        o->temp = 0;
        o->id = tensor_new_id();
        o->storage = ST_OUTPUT;
        lower_copy(L, t, o);
    }
}
