/* Memory planning: where every tensor of the schedule lives. Constants are
 * static arrays, graph inputs and outputs are the caller's buffers, views
 * share their source's bytes, and everything else gets an offset in one
 * arena, reused once a tensor is dead (greedy by size over live ranges). */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

#define ARENA_ALIGN 64   /* the widest vector: see O2C_ALIGN64 in runtime/c/o2c_rt.h */

static void assign(Tensor *t)
{
    if (t->storage != ST_NONE) return;
    if (t->data) t->storage = ST_CONST;
    else if (t->is_input) t->storage = ST_INPUT;
    else if (t->is_output && t->output_index >= 0) t->storage = ST_OUTPUT;
    else if (t->producer && node_is_view(t->producer)) {
        Tensor *src = t->producer->in[0];
        assign(src);
        t->storage = ST_ALIAS;
        t->alias_of = src->storage == ST_ALIAS ? src->alias_of : src;
        /* a SliceView starts at a byte offset; offsets add up along alias chains */
        t->alias_offset = (src->storage == ST_ALIAS ? src->alias_offset : 0) +
                          (t->producer->op->lower == lower_slice_view ? slice_view_offset(t->producer) : 0);
    } else t->storage = ST_ARENA;
}

static Tensor *root(Tensor *t) { return t->storage == ST_ALIAS ? t->alias_of : t; }

static Tensor **arena_list;

static int by_size(const void *a, const void *b)
{
    const Tensor *x = *(Tensor *const *)a, *y = *(Tensor *const *)b;
    size_t sx = tensor_bytes(x), sy = tensor_bytes(y);
    if (sx != sy) return sx > sy ? -1 : 1;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return x->id < y->id ? -1 : (x->id > y->id);
}

int64_t plan_graph(Graph *g, Lowering *L)
{
    (void)g;
    int cap = 2 * L->n * (O2C_MAX_X + O2C_MAX_Y) + 1, n = 0;
    arena_list = xalloc(sizeof(Tensor *) * (size_t)cap);
    for (int c = 0; c < L->n; c++) {
        KCall *k = &L->calls[c];
        for (int j = 0; j < O2C_MAX_X + O2C_MAX_Y; j++) {
            Tensor *t = j < O2C_MAX_X ? k->x[j] : k->y[j - O2C_MAX_X];
            if (!t) continue;
            assign(t);
            Tensor *r = root(t);
            if (r->storage != ST_ARENA) continue;
            if (!r->first && !r->last && !r->offset) {
                /* first sight: mark with offset -1 as "listed" */
                r->offset = -1;
                r->first = r->last = c;
                arena_list[n++] = r;
            }
            if (c < r->first) r->first = c;
            if (c > r->last) r->last = c;
        }
    }
    /* the string space (ops/strings.c) lives through the whole run and
     * after it: outputs point into it until the next run */
    if (L->strings && L->strings->storage == ST_ARENA) { L->strings->first = 0; L->strings->last = L->n; }
    /* a loop (ops/control.c) runs its calls again: a tensor live across its
     * start or end (a state, the counter, a scan output, what the body reads
     * from outside) lives through all of it */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int c = 0; c < L->n; c++) {
            if (L->calls[c].ctl != CTL_LOOP) continue;
            int b = c, e = L->calls[c].jump;
            for (int i = 0; i < n; i++) {
                Tensor *t = arena_list[i];
                if ((t->first < b && t->last >= b) || (t->first <= e && t->last > e)) {
                    if (t->first > b || t->last < e) changed = 1;
                    if (t->first > b) t->first = b;
                    if (t->last < e) t->last = e;
                }
            }
        }
    }
    qsort(arena_list, (size_t)n, sizeof(Tensor *), by_size);
    int64_t size = 0;
    for (int i = 0; i < n; i++) {
        Tensor *t = arena_list[i];
        int64_t need = (int64_t)tensor_bytes(t), off = 0;
        if (need == 0) need = 1;
        /* lowest offset not overlapping a placed, simultaneously live tensor */
        for (int again = 1; again;) {
            again = 0;
            for (int j = 0; j < i; j++) {
                Tensor *u = arena_list[j];
                if (u->last < t->first || t->last < u->first) continue;
                int64_t ue = u->offset + (int64_t)(tensor_bytes(u) ? tensor_bytes(u) : 1);
                if (off < ue && u->offset < off + need) {
                    off = (ue + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
                    again = 1;
                }
            }
        }
        t->offset = off;
        if (off + need > size) size = off + need;
    }
    size = (size + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    note("arena: %lld bytes for %d tensors", (long long)size, n);
    return size;
}
