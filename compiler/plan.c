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
 * line), or, for one smaller than that (no vector pass spans it), its
 * element's natural alignment: every kernel reads it element by element */
static int64_t align_of(const Tensor *t)
{
    if (tensor_bytes(t) >= ARENA_ALIGN) return ARENA_ALIGN;
    int64_t a = 1;
    while (a < (int64_t)dtype_size(t->dtype) && a < 16) a *= 2;
    return a;
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

/* The second check, independent of how the plan was made: replaying the
 * calls, no call writes a byte that holds a value still to be read, except
 * in place as its kernel allows (KCall.inplace: the output starts at the
 * input's first byte and has its size, and the input dies at that call).
 * Each tensor's value lives from the first call that writes it (a view's
 * from its source's) to the last call that reads it (to the end for a
 * graph output or a kept size), widened over a loop it is live across.
 * Tensors of one buffer (a view, a Concat input written in place) are its
 * parts and are not checked against each other. */
/* A loop (ops/control.c) runs its calls again: a value live across its
 * start or end (a state, the counter, a scan output, what the body reads
 * from outside) lives through all of it. Widens [first, last] over every
 * loop it crosses once; returns whether it changed (run to a fixed point:
 * a widened range can cross an enclosing loop). */
static int widen_over_loops(const Lowering *L, int *first, int *last)
{
    int changed = 0;
    for (int c = 0; c < L->n; c++) {
        if (L->calls[c].ctl != CTL_LOOP) continue;
        int b = c, e = L->calls[c].jump;
        if ((*first < b && *last >= b) || (*first <= e && *last > e)) {
            if (*first > b || *last < e) changed = 1;
            if (*first > b) *first = b;
            if (*last < e) *last = e;
        }
    }
    return changed;
}

typedef struct { Tensor *t; int space, born, dies; int64_t lo, hi; } Span;

static int span_space(Tensor *t, int64_t *lo)
{
    Tensor *r = root(t);
    *lo = (t->storage == ST_ALIAS ? t->alias_offset : 0) + (r->storage == ST_ARENA ? r->offset : 0);
    if (r->storage == ST_ARENA) return 1;
    if (r->storage == ST_OUTPUT) return 2 + r->output_index;
    return 0;   /* constants and inputs: never written */
}

/* the span of t (hash by address: tensors made by hand have no ids) */
static Span *span_get(Span **tab, int64_t cap, Span *sp, int *n, Tensor *t, int create)
{
    uint64_t h = ((uint64_t)(uintptr_t)t >> 4) * 0x9E3779B97F4A7C15ull;
    for (int64_t i = (int64_t)(h % (uint64_t)cap);; i = (i + 1) % cap) {
        if (tab[i] && tab[i]->t == t) return tab[i];
        if (!tab[i]) {
            if (!create) return NULL;
            tab[i] = &sp[(*n)++];
            tab[i]->t = t;
            return tab[i];
        }
    }
}

void plan_check(Lowering *L)
{
    int64_t cap = 2 * (int64_t)L->n * (O2C_MAX_X + O2C_MAX_Y) + 1;
    int n = 0;
    Span *sp = xalloc(sizeof(Span) * (size_t)cap);
    Span **tab = xalloc(sizeof(Span *) * (size_t)cap);
    for (int c = 0; c < L->n; c++)
        for (int j = 0; j < O2C_MAX_X + O2C_MAX_Y; j++) {
            Tensor *t = j < O2C_MAX_X ? L->calls[c].x[j] : L->calls[c].y[j - O2C_MAX_X];
            int64_t lo;
            if (!t) continue;
            int space = span_space(t, &lo);
            if (!space || tensor_bytes(t) == 0) continue;
            Span *s = span_get(tab, cap, sp, &n, t, 0);
            if (!s) {
                s = span_get(tab, cap, sp, &n, t, 1);
                *s = (Span){t, space, L->n + 1, -1, lo, lo + (int64_t)tensor_bytes(t)};
            }
            if (j >= O2C_MAX_X && c < s->born) s->born = c;
            if (j < O2C_MAX_X && c > s->dies) s->dies = c;
        }
    for (int i = 0; i < n; i++) {
        Span *s = &sp[i];
        if (s->born > L->n) {   /* never written itself: a view (from its source), or a buffer whose parts are */
            Tensor *t = s->t;
            Span *k = s;
            while (k && k->born > L->n && t->producer && node_is_view(t->producer) && t->producer->in[0]) {
                t = t->producer->in[0];
                k = span_get(tab, cap, sp, &n, t, 0);
            }
            if (k) s->born = k->born;
            for (int q = 0; q < n; q++)
                if (sp[q].t->storage == ST_ALIAS && sp[q].t->alias_of == s->t && sp[q].born < s->born)
                    s->born = sp[q].born;
        }
        if (s->space >= 2 || s->t->keep || s->t == L->strings || root(s->t)->keep) s->dies = L->n;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < n; i++) changed |= widen_over_loops(L, &sp[i].born, &sp[i].dies);
    }
    for (int c = 0; c < L->n; c++) {
        const KCall *k = &L->calls[c];
        for (int o = 0; o < O2C_MAX_Y; o++) {
            const Span *w = k->y[o] ? span_get(tab, cap, sp, &n, k->y[o], 0) : NULL;
            if (!w) continue;
            for (int i = 0; i < n; i++) {
                const Span *s = &sp[i];
                if (s == w || s->space != w->space || s->hi <= w->lo || w->hi <= s->lo) continue;
                if (root(s->t) == root(w->t)) continue;          /* parts of one buffer */
                if (s->born > c || s->dies < c) continue;        /* no value held here */
                if (s->dies == c && s->born < c) {               /* read here: only in place */
                    int ok = 0;
                    for (int j = 0; j < O2C_MAX_X; j++)
                        if (k->x[j] == s->t && (k->inplace & (1u << j)) && o == 0 && s->lo == w->lo && s->hi == w->hi) ok = 1;
                    if (ok) continue;
                }
                fail_plain("internal: the memory plan lets call %d write '%s' over bytes of '%s' (needed from call %d "
                           "to %d)", c, w->t->name, s->t->name, s->born, s->dies);
            }
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

/* Concat in place: where a Concat's inputs are contiguous runs of its
 * output (ops/movement.c concat_in_place_offsets), an input computed by a
 * kernel call of its own becomes an alias of the output at its offset, so
 * its producer writes straight into the output and the copy is dropped.
 * An input qualifies when it is an arena tensor of its own: not a
 * constant, graph input or output, view, run-time size or string, read
 * once by this Concat, in the output's layout, and written by calls with no
 * control-flow marker between them and the Concat (a loop or branch would
 * change when its bytes are live). Later Concats go first, so a Concat
 * feeding another nests (offsets add up). Returns the copies dropped. */
static int input_part_ok(Lowering *L, const Node *n, int j, int begin, const Tensor *y)
{
    Tensor *x = n->in[j];
    if (!x || x->storage != ST_NONE || x->data || x->is_input || x->is_output || !x->producer ||
        node_is_view(x->producer) || x->keep || x->dyn_count || x->seq || x->dtype == DT_STRING || x == L->strings ||
        x->dtype != y->dtype || x->layout != y->layout || tensor_numel(x) == 0)
        return 0;
    for (int i = 0; i < n->nin; i++)
        if (i != j && n->in[i] == x) return 0;
    int p = -1;
    for (int c = 0; c < L->n; c++)
        for (int o = 0; o < O2C_MAX_Y; o++)
            if (L->calls[c].y[o] == x) {
                if (c >= begin) return 0;
                if (p < 0) p = c;
            }
    if (p < 0) return 0;
    for (int c = p; c < begin; c++)
        if (L->calls[c].ctl) return 0;
    return 1;
}

static void drop_calls(Lowering *L, const char *drop)
{
    int *to = xalloc(sizeof(int) * (size_t)(L->n + 1)), m = 0;
    for (int c = 0; c < L->n; c++) {
        to[c] = m;
        m += !drop[c];
    }
    m = 0;
    for (int c = 0; c < L->n; c++) {
        if (drop[c]) continue;
        KCall k = L->calls[c];
        if (k.ctl) k.jump = to[k.jump];   /* markers are never dropped */
        L->calls[m++] = k;
    }
    L->n = m;
}

/* The buffer a tensor will live in, before storage is assigned: its own,
 * its view source's, or the output a Concat input was placed in. */
static Tensor *planned_root(Tensor *t)
{
    for (;;) {
        if (t->storage == ST_ALIAS) return t->alias_of;
        if (t->storage != ST_NONE || t->data || t->is_input || (t->is_output && t->output_index >= 0) ||
            !t->producer || !node_is_view(t->producer) || !t->producer->in[0])
            return t;
        t = t->producer->in[0];
    }
}

/* The liveness bound of the calls not dropped, buffers as planned so far
 * (in place of elementwise calls not counted): how placing a Concat input
 * in its output changes the peak. Writing into the output makes the whole
 * output live from that input's producer on, which can raise the peak. */
static int64_t concat_peak(Lowering *L, const char *drop)
{
    int64_t cap = 2 * (int64_t)L->n * (O2C_MAX_X + O2C_MAX_Y) + 1, peak = 0;
    int n = 0;
    Span *sp = xalloc(sizeof(Span) * (size_t)cap);
    Span **tab = xalloc(sizeof(Span *) * (size_t)cap);
    int64_t *d = xalloc(sizeof(int64_t) * (size_t)(L->n + 2));
    for (int c = 0; c < L->n; c++) {
        if (drop[c]) continue;
        for (int j = 0; j < O2C_MAX_X + O2C_MAX_Y; j++) {
            Tensor *t = j < O2C_MAX_X ? L->calls[c].x[j] : L->calls[c].y[j - O2C_MAX_X];
            if (!t) continue;
            Tensor *r = planned_root(t);
            if (r->storage != ST_ARENA && (r->storage != ST_NONE || r->data || r->is_input ||
                                           (r->is_output && r->output_index >= 0)))
                continue;
            Span *s = span_get(tab, cap, sp, &n, r, 0);
            if (!s) {
                s = span_get(tab, cap, sp, &n, r, 1);
                s->born = c;
            }
            s->dies = c;
        }
    }
    for (int i = 0; i < n; i++) {
        d[sp[i].born] += (int64_t)tensor_bytes(sp[i].t);
        d[sp[i].dies + 1] -= (int64_t)tensor_bytes(sp[i].t);
    }
    int64_t live = 0;
    for (int c = 0; c < L->n; c++) {
        live += d[c];
        if (live > peak) peak = live;
    }
    return peak;
}

static int concat_in_place(Lowering *L)
{
    char *drop = xalloc((size_t)L->n + 1);
    int dropped = 0, kept_apart = 0;
    int64_t peak = -1;
    for (int c = L->n - 1; c >= 0; c--) {
        const Node *n = L->calls[c].node;
        if (!n || L->calls[c].ctl || (c + 1 < L->n && L->calls[c + 1].node == n)) continue;   /* a node's last call */
        int begin = c;
        while (begin > 0 && L->calls[begin - 1].node == n) begin--;
        int64_t *off = xalloc(sizeof(int64_t) * (size_t)(n->nin + 1));
        if (!concat_in_place_offsets(n, off)) continue;
        Tensor *y = n->out[0];
        if (y->keep || y->dyn_count || y->seq || y->dtype == DT_STRING) continue;
        assign(y);
        Tensor *ry = root(y);
        if (ry->storage != ST_ARENA && ry->storage != ST_OUTPUT) continue;
        int64_t base = y->storage == ST_ALIAS ? y->alias_offset : 0;
        for (int j = 0; j < n->nin; j++) {
            if (!input_part_ok(L, n, j, begin, y)) continue;
            int copy = -1;
            for (int i = begin; i <= c; i++)
                if (L->calls[i].x[0] == n->in[j] && L->calls[i].y[0] == y && !drop[i]) copy = i;
            if (copy < 0) continue;
            Tensor *x = n->in[j];
            if (peak < 0) peak = concat_peak(L, drop);
            x->storage = ST_ALIAS;
            x->alias_of = ry;
            x->alias_offset = base + off[j];
            drop[copy] = 1;
            int64_t now = concat_peak(L, drop);
            if (now > peak) {   /* the output would be live too long: keep the copy */
                x->storage = ST_NONE;
                x->alias_of = NULL;
                x->alias_offset = 0;
                drop[copy] = 0;
                kept_apart++;
                continue;
            }
            peak = now;
            dropped++;
        }
    }
    if (dropped) {
        drop_calls(L, drop);
        note("concat in place: %d inputs written straight into their slice of the output", dropped);
    }
    if (kept_apart) note("concat in place: %d inputs copied, as in place would raise the peak", kept_apart);
    return dropped;
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

static int64_t pack_order(Tensor **list, int n, int (*cmp)(const void *, const void *), int best_fit, int64_t *scratch);
/* by the heaviest moment a tensor lives through (the most bytes live at
 * one of its calls), then by size: the tensors of the peak are placed
 * first, side by side, where the liveness bound says they must fit */
static const int64_t *peak_live;
static int64_t peak_of(const Tensor *t)
{
    int64_t m = 0;
    for (int c = t->first; c <= t->last; c++)
        if (peak_live[c] > m) m = peak_live[c];
    return m;
}

static int by_peak(const void *a, const void *b)
{
    const Tensor *x = *(Tensor *const *)a, *y = *(Tensor *const *)b;
    int64_t px = peak_of(x), py = peak_of(y);
    if (px != py) return px > py ? -1 : 1;
    return by_size(a, b);
}


/* Packs in several placement orders and two placement rules, and keeps the
 * smallest arena (the first on a tie): packing intervals of given sizes
 * (dynamic storage allocation) is NP-hard and first fit is a heuristic of
 * which no order and rule is best on every graph. */
#define PACK_SEARCH_WORK 500000000   /* placements x placed tensors the search may spend */
static int64_t pack(Tensor **list, int n)
{
    static int (*const ORDERS[])(const void *, const void *) = {by_size, by_first, by_area, by_peak};
    int64_t best = -1, *off = xalloc(sizeof(int64_t) * (size_t)(n + 1));
    int calls = 0;
    for (int i = 0; i < n; i++)
        if (list[i]->last + 1 > calls) calls = list[i]->last + 1;
    int64_t *live = xalloc(sizeof(int64_t) * (size_t)(calls + 1));
    for (int i = 0; i < n; i++) {
        live[list[i]->first] += (int64_t)tensor_bytes(list[i]);
        live[list[i]->last + 1] -= (int64_t)tensor_bytes(list[i]);
    }
    for (int c = 1; c <= calls; c++) live[c] += live[c - 1];
    peak_live = live;
    int64_t *scratch = xalloc(sizeof(int64_t) * 2 * (size_t)(n + 1));
    Tensor **order = xalloc(sizeof(Tensor *) * (size_t)(n + 1));
    int best_rule = 0;
    for (int rule = 0; rule < 2; rule++)
        for (size_t k = 0; k < sizeof ORDERS / sizeof ORDERS[0]; k++) {
            int64_t size = pack_order(list, n, ORDERS[k], rule, scratch);
            if (best < 0 || size < best) {
                best = size;
                best_rule = rule;
                for (int i = 0; i < n; i++) {
                    order[i] = list[i];
                    off[i] = list[i]->offset;
                }
            }
        }
    /* then a local search from the best order while the arena is above
     * the liveness bound: move one tensor to an earlier place in the
     * order, re-pack, keep the change unless the arena grows (a
     * deterministic generator: the same plan every time), within a budget
     * of placement work */
    int64_t bound = 0;
    for (int c = 0; c <= calls; c++)
        if (live[c] > bound) bound = live[c];
    int rule = best_rule;
    int64_t budget = PACK_SEARCH_WORK / ((int64_t)n * n + 1);
    if (budget > 1000 + 20 * (int64_t)n) budget = 1000 + 20 * (int64_t)n;   /* small graphs: enough tries */
    uint64_t rng = 0x2545F4914F6CDD1Dull;
    Tensor **trial = xalloc(sizeof(Tensor *) * (size_t)(n + 1));
    for (int64_t it = 0; it < budget && best > bound && n > 2; it++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        int from = (int)(rng % (uint64_t)n), top = 0;
        if (rng & (1ull << 62)) {   /* half the moves: a buffer that reaches the top of the arena */
            int k = 0, pick = (int)((rng >> 20) % 64);
            for (int i = 0; i < n; i++)
                if (off[i] + padded(order[i]) == best && k++ <= pick) from = i, top = 1;
        }
        int to = top && (rng & (1ull << 61)) ? 0 : (int)((rng >> 32) % (uint64_t)(from + 1));
        if (from == to) continue;
        memcpy(trial, order, sizeof(Tensor *) * (size_t)n);
        Tensor *moved = trial[from];
        memmove(trial + to + 1, trial + to, sizeof(Tensor *) * (size_t)(from - to));
        trial[to] = moved;
        int64_t size = pack_order(trial, n, NULL, rule, scratch);
        if (size <= best) {
            best = size;
            for (int i = 0; i < n; i++) {
                order[i] = trial[i];
                off[i] = trial[i]->offset;
            }
        }
    }
    for (int i = 0; i < n; i++) {
        list[i] = order[i];
        list[i]->offset = off[i];
    }
    return best < 0 ? 0 : best;
}

static int by_start(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Places list[i] in order. First fit (best_fit 0): the lowest aligned
 * offset clear of every placed tensor live at the same time. Best fit: the
 * smallest gap between those tensors that holds it (the top of the arena
 * only when no gap does), which keeps large gaps for large tensors. */
static int64_t pack_order(Tensor **list, int n, int (*cmp)(const void *, const void *), int best_fit, int64_t *scratch)
{
    if (cmp) qsort(list, (size_t)n, sizeof(Tensor *), cmp);
    int64_t size = 0;
    for (int i = 0; i < n; i++) {
        Tensor *t = list[i];
        int64_t need = padded(t), al = align_of(t), off = 0;
        if (!best_fit) {
            for (int again = 1; again;) {
                again = 0;
                for (int j = 0; j < i; j++) {
                    Tensor *u = list[j];
                    if (u->last < t->first || t->last < u->first) continue;
                    int64_t ue = u->offset + padded(u);
                    if (off < ue && u->offset < off + need) {
                        off = (ue + al - 1) / al * al;
                        again = 1;
                    }
                }
            }
        } else {
            int m = 0;   /* the placed tensors live with t: [start, end) pairs, by start */
            for (int j = 0; j < i; j++) {
                Tensor *u = list[j];
                if (u->last < t->first || t->last < u->first) continue;
                scratch[2 * m] = u->offset;
                scratch[2 * m + 1] = u->offset + padded(u);
                m++;
            }
            qsort(scratch, (size_t)m, 2 * sizeof(int64_t), by_start);
            int64_t at = 0, best_gap = -1, top = 0;
            off = -1;
            for (int j = 0; j <= m; j++) {
                int64_t gap_end = j < m ? scratch[2 * j] : -1;
                int64_t start = (at + al - 1) / al * al;
                if (j < m && start + need <= gap_end && (best_gap < 0 || gap_end - start < best_gap)) {
                    best_gap = gap_end - start;
                    off = start;
                }
                if (j < m && scratch[2 * j + 1] > at) at = scratch[2 * j + 1];
                top = at;
            }
            if (off < 0) off = (top + al - 1) / al * al;
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
    concat_in_place(L);
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
    /* empty tensors hold no byte to place: offset 0, out of the packing
     * (2000 of them, a SplitToSequence of an empty axis, took the -O0
     * search 4 s, a fuzzer's build minutes) */
    int ne = 0;
    for (int i = 0; i < n; i++) {
        if (tensor_bytes(arena_list[i]) == 0) arena_list[i]->offset = 0;
        else arena_list[ne++] = arena_list[i];
    }
    n = ne;
    /* the string space (ops/strings.c) lives through the whole run and
     * after it: outputs point into it until the next run */
    if (L->strings && L->strings->storage == ST_ARENA) { L->strings->first = 0; L->strings->last = L->n; }
    /* a loop (ops/control.c) runs its calls again: a tensor live across its
     * start or end (a state, the counter, a scan output, what the body reads
     * from outside) lives through all of it */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < n; i++) changed |= widen_over_loops(L, &arena_list[i]->first, &arena_list[i]->last);
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
    /* the arena's start is 64-byte aligned; its size is what the plan uses, not rounded up */
    for (int c = 0; c < L->n; c++)   /* in place: the bytes of the tensor written over */
        for (int j = 0; j < O2C_MAX_Y; j++) {
            Tensor *y = L->calls[c].y[j];
            if (y && y->share) y->offset = y->share->offset;
        }
    verify_plan(arena_list, n, size);
    plan_check(L);
    live_profile(L, arena_list, n);
    note("arena: %lld bytes for %d tensors; liveness bound %lld bytes (at call %d), one buffer per tensor %lld bytes",
         (long long)size, n, (long long)L->live_bound, L->live_bound_at, (long long)L->naive_arena);
    return size;
}

static int by_bytes_desc(const void *a, const void *b)
{
    size_t x = tensor_bytes(*(Tensor *const *)a), y = tensor_bytes(*(Tensor *const *)b);
    return x < y ? 1 : x > y ? -1 : 0;
}

/* --max-arena BYTES not met: the message names the call at the peak of live
 * bytes and the tensors live there, largest first */
void plan_budget_fail(const Lowering *L, int64_t arena, int64_t budget)
{
    int at = L->live_bound_at, n = 0;
    Tensor **live = xalloc(sizeof(Tensor *) * (size_t)(2 * L->n * (O2C_MAX_X + O2C_MAX_Y) + 1));
    for (int c = 0; c < L->n; c++)
        for (int j = 0; j < O2C_MAX_X + O2C_MAX_Y; j++) {
            Tensor *t = j < O2C_MAX_X ? L->calls[c].x[j] : L->calls[c].y[j - O2C_MAX_X];
            if (!t) continue;
            t = root(t);
            if (t->share) t = t->share;
            if (t->storage != ST_ARENA || !tensor_bytes(t) || t->first > at || t->last < at) continue;
            int dup = 0;
            for (int i = 0; i < n && !dup; i++) dup = live[i] == t;
            if (!dup) live[n++] = t;
        }
    qsort(live, (size_t)n, sizeof *live, by_bytes_desc);
    const char *list = "";
    for (int i = 0; i < n && i < 8; i++)
        list = xfmt("%s%s'%s' %lld bytes", list, i ? ", " : "", live[i]->name, (long long)tensor_bytes(live[i]));
    if (n > 8) list = xfmt("%s and %d more", list, n - 8);
    const KCall *k = &L->calls[at];
    fail_plain("--max-arena %lld: the arena needs %lld bytes; at its peak, call #%d (%s%s%s%s), %lld bytes are live: %s. "
               "No order or kernel variant onnx2c has needs less (the reference kernels were tried); a smaller input "
               "shape, or a model whose largest layers are smaller, would fit", (long long)budget, (long long)arena, at,
               k->kernel ? k->kernel->name : "?", k->node ? " for '" : "", k->node ? k->node->name : "",
               k->node ? "'" : "", (long long)L->live_bound, list);
}
