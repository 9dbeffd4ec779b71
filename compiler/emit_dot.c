/* --dot: the optimized graph in Graphviz syntax. One box per node, labelled
 * with its op (what a pass fused) and the original ONNX nodes it covers;
 * edges labelled with the tensor's type and shape; graph inputs and outputs
 * as ellipses; small constants as small boxes, large ones (weights) folded
 * into the reading node's label. Every model-given text is escaped. */
#include <string.h>

#include "ir.h"

#define DOT_CONST_MAX 16      /* constants of at most this many elements are drawn */
#define DOT_ORIGINS_MAX 8     /* covered nodes named in a label */

/* Text inside a double-quoted DOT string. */
static void put_esc(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') { fputc('\\', f); fputc(*p, f); }
        else if (*p == '\n') fputs("\\n", f);
        else if (*p < 32 || *p == 127) fputc(' ', f);
        else fputc(*p, f);
    }
}

static void put_edge_label(FILE *f, const Tensor *t)
{
    fprintf(f, " [label=\"%s[%s]\"]", dtype_name(t->dtype), tensor_shape_str(t));
}

static void tensor_source(FILE *f, const Tensor *t, int *drawn)
{
    if (t->producer) fprintf(f, "  n%d", t->producer->step);
    else if (t->is_input) fprintf(f, "  in%d", t->input_index);
    else { fprintf(f, "  t%d", t->id); *drawn = 1; }
}

void emit_dot(Graph *g, FILE *f)
{
    fputs("digraph onnx2c {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
          "  edge [fontname=\"Helvetica\", fontsize=8];\n  label=\"", f);
    put_esc(f, g->name);
    fputs(" (optimized by onnx2c)\";\n", f);
    for (int i = 0; i < g->nnodes; i++) g->nodes[i]->step = i;
    for (int k = 0; k < g->ninputs; k++) {
        fprintf(f, "  in%d [shape=ellipse, style=filled, fillcolor=\"#d8ecff\", label=\"", k);
        put_esc(f, g->inputs[k]->name);
        fprintf(f, "\\n%s[%s]\"];\n", dtype_name(g->inputs[k]->dtype), tensor_shape_str(g->inputs[k]));
    }
    for (int t = 0; t < g->ntensors; t++) g->tensors[t]->mark = 0;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        int64_t hidden = 0;
        int nhidden = 0;
        for (int j = 0; j < n->nin; j++)
            if (n->in[j] && n->in[j]->data && !n->in[j]->is_input && tensor_numel(n->in[j]) > DOT_CONST_MAX) {
                hidden += (int64_t)tensor_bytes(n->in[j]);
                nhidden++;
            }
        fprintf(f, "  n%d [shape=box, style=\"rounded,filled\", fillcolor=\"%s\", label=\"", i,
                *n->domain ? "#ffe0b0" : "#f0f0f0");
        put_esc(f, n->fused ? n->fused : n->op_type);
        fputs("\\n", f);
        put_esc(f, n->name);
        if (n->norigins && !(n->norigins == 1 && !strcmp(n->origins[0], n->name))) {
            fputs("\\ncovers:", f);
            for (int k = 0; k < n->norigins && k < DOT_ORIGINS_MAX; k++) {
                fputs(k ? ", " : " ", f);
                put_esc(f, n->origins[k]);
            }
            if (n->norigins > DOT_ORIGINS_MAX) fprintf(f, " and %d more", n->norigins - DOT_ORIGINS_MAX);
        }
        if (nhidden) fprintf(f, "\\n+%d constant%s, %lld bytes", nhidden, nhidden > 1 ? "s" : "", (long long)hidden);
        fputs("\"];\n", f);
        for (int j = 0; j < n->nin; j++) {
            Tensor *t = n->in[j];
            if (!t) continue;
            if (t->data && !t->is_input && !t->producer) {
                if (tensor_numel(t) > DOT_CONST_MAX) continue;
                if (!t->mark) {
                    t->mark = 1;
                    fprintf(f, "  t%d [shape=box, fontsize=8, height=0.2, style=filled, fillcolor=\"#fff8c0\", label=\"", t->id);
                    put_esc(f, t->name);
                    fprintf(f, "\\n%s[%s]\"];\n", dtype_name(t->dtype), tensor_shape_str(t));
                }
            }
            int drawn = 0;
            tensor_source(f, t, &drawn);
            fprintf(f, " -> n%d", i);
            put_edge_label(f, t);
            fputs(";\n", f);
        }
    }
    for (int k = 0; k < g->noutputs; k++) {
        Tensor *t = g->outputs[k];
        fprintf(f, "  out%d [shape=ellipse, style=filled, fillcolor=\"#d8ffd8\", label=\"", k);
        put_esc(f, t->name);
        fprintf(f, "\\n%s[%s]\"];\n", dtype_name(t->dtype), tensor_shape_str(t));
        if (t->producer || t->is_input) {
            int drawn = 0;
            tensor_source(f, t, &drawn);
            fprintf(f, " -> out%d", k);
            put_edge_label(f, t);
            fputs(";\n", f);
        } else if (t->data) {
            fprintf(f, "  c_out%d [shape=box, fontsize=8, label=\"constant\"];\n  c_out%d -> out%d;\n", k, k, k);
        }
    }
    fputs("}\n", f);
}
