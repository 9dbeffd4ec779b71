/* --threads N (host C targets): which kernel calls run their index space
 * in parts at once, after lowering and before the planner.
 *
 * A call splits into min(N, count) parts of consecutive indices when
 *   - its kernel's indices are independent: a runtime kernel whose chunk
 *     marker says `split` (ctext.c), an elementwise kernel of the op table
 *     or a fused elementwise loop (each index writes its own elements);
 *   - it is large enough that a part outweighs waking a thread: at least
 *     the grain (--thread-grain FLOPS, default THREAD_GRAIN) by its node's
 *     FLOP count, or a quarter of the grain in bytes written (data
 *     movement); the tests set the grain to 0, splitting every call that
 *     can be;
 *   - every scratch tensor it writes (a lowering's temp) is its own: no
 *     other call reads or writes it. Such scratch is made one copy a part
 *     (the planner sizes it so) and part j gets copy j (emit_c.c). A temp
 *     that carries values to another call keeps the call whole.
 * Each index computes what it computes in one part, so the results do not
 * depend on the number of threads (tests/test_threads.py checks them
 * equal bit for bit). emit_c.c writes the parts as an OpenMP loop, which a C
 * compiler without OpenMP runs one part after another. */
#include <string.h>

#include "ir.h"

/* the default grain: a GNU OpenMP fork and join costs a few microseconds,
 * about the time of 2^20 FLOPs at this project's kernel speeds. A choice,
 * not a measurement per machine: --thread-grain sets another. */
#define THREAD_GRAIN ((int64_t)1 << 20)

static int kernel_splits(const Kernel *k)
{
    if (!k->fn) return 1;   /* a fused elementwise loop (ops/fused_elementwise.c): one row an index */
    if (k->instance && !strcmp(k->file, "elementwise.h")) return 1;   /* the op table's elementwise kernels */
    return runtime_chunk_splits(k->name);
}

/* t is read or written by a call of L other than skip */
static int used_elsewhere(const Lowering *L, int skip, const Tensor *t)
{
    for (int i = 0; i < L->n; i++) {
        if (i == skip) continue;
        const KCall *q = &L->calls[i];
        for (int j = 0; j < O2C_MAX_X; j++)
            if (q->x[j] == t) return 1;
        for (int j = 0; j < O2C_MAX_Y; j++)
            if (q->y[j] == t) return 1;
    }
    return 0;
}

static int large_enough(const KCall *k, int64_t grain)
{
    if (k->node) {
        int64_t fl = node_flops(k->node);
        if (fl >= grain) return 1;
    }
    int64_t bytes = 0;
    for (int j = 0; j < O2C_MAX_Y; j++)
        if (k->y[j] && !k->y[j]->temp && k->y[j]->rank >= 0) bytes += (int64_t)tensor_bytes(k->y[j]);
    return bytes >= grain / 4;
}

void lower_threads(Lowering *L, int threads, int64_t grain)
{
    if (grain < 0) grain = THREAD_GRAIN;
    for (int i = 0; i < L->n; i++) {
        KCall *k = &L->calls[i];
        if (k->ctl || !k->kernel || k->count < 2 || !kernel_splits(k->kernel) || !large_enough(k, grain)) continue;
        int ok = 1;
        for (int j = 0; j < O2C_MAX_X && ok; j++)   /* a temp it reads comes from another call */
            for (int jj = 0; jj < O2C_MAX_Y; jj++)
                if (k->x[j] && k->x[j] == k->y[jj] && k->x[j]->temp) ok = 0;
        for (int j = 0; j < O2C_MAX_Y && ok; j++)
            if (k->y[j] && k->y[j]->temp && used_elsewhere(L, i, k->y[j])) ok = 0;
        if (!ok) continue;
        int parts = k->count < threads ? (int)k->count : threads;
        for (int j = 0; j < O2C_MAX_Y; j++) {
            Tensor *t = k->y[j];
            if (!t || !t->temp) continue;
            int64_t n = tensor_numel(t) * parts;
            tensor_set_shape(t, 1, &n);   /* one copy a part, part p's at p x its bytes */
        }
        k->split = parts;
    }
}
