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

/* A tensor's alignment in the arena: 64 bytes (the widest vector, a cache
 * line), or 16 for one smaller than that (no vector spans it; 16 covers
 * every element type) */
#define SMALL_ALIGN 16
static int64_t align_of(const Tensor *t)
{
    return tensor_bytes(t) >= ARENA_ALIGN ? ARENA_ALIGN : SMALL_ALIGN;
}

static int64_t padded(const Tensor *t)
{
    int64_t b = (int64_t)tensor_bytes(t);
    return b ? b : 1;
}

/* The plan's invariant, checked on every compile: two arena tensors live at
 * the same call never share a byte, and each lies inside the arena. */
static void verify_plan(Tensor **list, int n, int64_t size)
{
    for (int i = 0; i < n; i++) {
        const Tensor *t = list[i];
        if (t->offset < 0 || t->offset % align_of(t) || t->offset + padded(t) > size)
            fail_plain("internal: the memory plan puts '%s' at %lld (+%lld) in an arena of %lld bytes", t->name,
                       (long long)t->offset, (long long)padded(t), (long long)size);
        for (int j = i + 1; j < n; j++) {
            const Tensor *u = list[j];
            if (u->last < t->first || t->last < u->first) continue;
            if (u->offset < t->offset + padded(t) && t->offset < u->offset + padded(u))
                fail_plain("internal: the memory plan overlaps '%s' and '%s', both live at calls %d..%d", t->name,
                           u->name, t->first > u->first ? t->first : u->first, t->last < u->last ? t->last : u->last);
        }
    }
}

/* Bytes live at each call (the tensors' own sizes, no alignment), their
 * peak: the liveness lower bound of this schedule; and the arena of one
 * buffer per tensor. */
static void live_profile(Lowering *L, Tensor **list, int n)
{
    int64_t *d = xalloc(sizeof(int64_t) * (size_t)(L->n + 2));
    L->live = xalloc(sizeof(int64_t) * (size_t)(L->n + 1));
    L->live_bound = 0;
    L->live_bound_at = 0;
    L->naive_arena = 0;
    for (int i = 0; i < n; i++) {
        const Tensor *t = list[i];
        int last = t->last < L->n ? t->last : L->n - 1;
        d[t->first] += (int64_t)tensor_bytes(t);
        d[last + 1] -= (int64_t)tensor_bytes(t);
        L->naive_arena += (padded(t) + align_of(t) - 1) / align_of(t) * align_of(t);
    }
    for (int c = 0; c < L->n; c++) {
        L->live[c] = (c ? L->live[c - 1] : 0) + d[c];
        if (L->live[c] > L->live_bound) {
            L->live_bound = L->live[c];
            L->live_bound_at = c;
        }
    }
}

/* In place (KCall.inplace): a call's output takes the bytes of an input that
 * dies at that call, when both are arena tensors of the same element count
 * and byte size (the same flat index mapping) and layout. The output then
 * joins the input's buffer: it leaves the list and the buffer lives on to
 * the output's last use. Returns the new list length. */
static int plan_inplace(Lowering *L, Tensor **list, int n)
{
    int merged = 0;
    for (int c = 0; c < L->n; c++) {
        KCall *k = &L->calls[c];
        Tensor *y = k->y[0];
        if (!k->inplace || !y || k->y[1] || y->storage != ST_ARENA || y->share || y->keep || y->first != c) continue;
        for (int j = 0; j < O2C_MAX_X; j++) {
            Tensor *x = k->x[j];
            if (!(k->inplace & (1u << j)) || !x) continue;
            if (x->storage == ST_ALIAS && x->alias_offset) continue;
            Tensor *b = root(x);
            while (b->share) b = b->share;
            if (b->storage != ST_ARENA || b->keep || b->last != c || b == y) continue;
            if (tensor_numel(root(x)) != tensor_numel(y) || tensor_bytes(b) != tensor_bytes(y) ||
                tensor_numel(x) != tensor_numel(y) || root(x)->layout != y->layout || x->layout != y->layout)
                continue;
            /* no other input of this call reads bytes of b at another index: only x (or
             * views of b's whole bytes) may name it */
            int other = 0;
            for (int i = 0; i < O2C_MAX_X; i++) {
                Tensor *o = k->x[i];
                if (!o || o == x) continue;
                Tensor *ob = root(o);
                while (ob->share) ob = ob->share;
                if (ob == b && (!(k->inplace & (1u << i)) || tensor_numel(o) != tensor_numel(y))) other = 1;
            }
            if (other) continue;
            y->share = b;
            if (y->last > b->last) b->last = y->last;
            merged++;
            break;
        }
    }
    if (!merged) return n;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!list[i]->share) list[m++] = list[i];
    note("in place: %d outputs written over a dying input", merged);
    return m;
}

/* Largest first, each at the lowest aligned offset that overlaps no placed
 * tensor live at the same time; returns the arena size (unaligned). The
 * list is sorted in place. */
/* other orders of placement: by start of life (then size), by size times
 * lifetime */
static int by_first(const void *a, const void *b)
{
    const Tensor *x = *(Tensor *const *)a, *y = *(Tensor *const *)b;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return by_size(a, b);
}

static int by_area(const void *a, const void *b)
{
    const Tensor *x = *(Tensor *const *)a, *y = *(Tensor *const *)b;
    double ax = (double)tensor_bytes(x) * (x->last - x->first + 1), ay = (double)tensor_bytes(y) * (y->last - y->first + 1);
    if (ax != ay) return ax > ay ? -1 : 1;
    return by_size(a, b);
}

static int64_t pack_order(Tensor **list, int n, int (*cmp)(const void *, const void *));

/* Packs in several placement orders and keeps the smallest arena (the
 * first order on a tie): first fit is a heuristic, none of its orders is
 * best on every graph. */
static int64_t pack(Tensor **list, int n)
{
    static int (*const ORDERS[])(const void *, const void *) = {by_size, by_first, by_area};
    int64_t best = -1, *off = xalloc(sizeof(int64_t) * (size_t)(n + 1));
    Tensor **order = xalloc(sizeof(Tensor *) * (size_t)(n + 1));
    for (size_t k = 0; k < sizeof ORDERS / sizeof ORDERS[0]; k++) {
        int64_t size = pack_order(list, n, ORDERS[k]);
        if (best < 0 || size < best) {
            best = size;
            for (int i = 0; i < n; i++) {
                order[i] = list[i];
                off[i] = list[i]->offset;
            }
        }
    }
    for (int i = 0; i < n; i++) {
        list[i] = order[i];
        list[i]->offset = off[i];
    }
    return best < 0 ? 0 : best;
}

static int64_t pack_order(Tensor **list, int n, int (*cmp)(const void *, const void *))
{
    qsort(list, (size_t)n, sizeof(Tensor *), cmp);
    int64_t size = 0;
    for (int i = 0; i < n; i++) {
        Tensor *t = list[i];
        int64_t need = padded(t), off = 0;
        for (int again = 1; again;) {
            again = 0;
            for (int j = 0; j < i; j++) {
                Tensor *u = list[j];
                if (u->last < t->first || t->last < u->first) continue;
                int64_t ue = u->offset + padded(u);
                if (off < ue && u->offset < off + need) {
                    off = (ue + align_of(t) - 1) / align_of(t) * align_of(t);
                    again = 1;
                }
            }
        }
        t->offset = off;
        if (off + need > size) size = off + need;
        if (size > TENSOR_MAX_BYTES)
            fail_plain("the arena would exceed %lld bytes (2^%d) at tensor '%s': the model's intermediate tensors are "
                       "too large for any generated code", (long long)TENSOR_MAX_BYTES, TENSOR_MAX_BYTES_LOG2, t->name);
    }
    return size;
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
    /* a run-time size (ir.h dyn_count) is read after the run */
    for (int i = 0; i < n; i++)
        if (arena_list[i]->keep) arena_list[i]->last = L->n;
    /* in place where the packing gets no larger for it (first fit is a
     * heuristic: longer merged live ranges can pack worse on tiny graphs) */
    int *last0 = xalloc(sizeof(int) * (size_t)(n + 1));
    Tensor **all = xalloc(sizeof(Tensor *) * (size_t)(n + 1)), **sorted = xalloc(sizeof(Tensor *) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        last0[i] = arena_list[i]->last;
        all[i] = sorted[i] = arena_list[i];
    }
    int n0 = n;
    int64_t size0 = pack(sorted, n0);
    n = plan_inplace(L, arena_list, n);
    int64_t size = pack(arena_list, n);
    if (n < n0 && size > size0) {
        note("in place packs worse (%lld > %lld bytes): not taken", (long long)size, (long long)size0);
        for (int i = 0; i < n0; i++) {
            all[i]->share = NULL;
            all[i]->last = last0[i];
            arena_list[i] = all[i];
        }
        n = n0;
        size = pack(arena_list, n);
    }
    size = (size + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    for (int c = 0; c < L->n; c++)   /* in place: the bytes of the tensor written over */
        for (int j = 0; j < O2C_MAX_Y; j++) {
            Tensor *y = L->calls[c].y[j];
            if (y && y->share) y->offset = y->share->offset;
        }
    verify_plan(arena_list, n, size);
    live_profile(L, arena_list, n);
    note("arena: %lld bytes for %d tensors; liveness bound %lld bytes (at call %d), one buffer per tensor %lld bytes",
         (long long)size, n, (long long)L->live_bound, L->live_bound_at, (long long)L->naive_arena);
    return size;
}
