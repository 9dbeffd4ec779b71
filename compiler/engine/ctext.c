#define _POSIX_C_SOURCE 200809L
/* The C text of kernels and kernel calls, which the emitters (the generated
 * .c and .cu) and the tuner (its timing program) write: the runtime's
 * kernels a lowering uses, cut from the embedded runtime/c files (only the
 * chunks its calls need, with their dependencies, in file order), a call's
 * parameter block spelled with the slots' names, and floating-point
 * literals that read back to the same value. Nothing here is mutable per
 * compilation: the chunk table and the name index are made once per process
 * from static text. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "../../runtime/c/params/elementwise.h"
#include "../../runtime/c/params/index.h"
#include "../../runtime/c/params/rnn.h"

/* made at build time from runtime/c (tools/embed.c) */
extern const char *const o2c_runtime_files[][2];

const char *runtime_text(const char *file)
{
    for (int i = 0; o2c_runtime_files[i][0]; i++)
        if (!strcmp(o2c_runtime_files[i][0], file)) return o2c_runtime_files[i][1];
    fail_plain("internal: runtime file '%s' is not embedded", file);
}

/* Runtime files are cut into chunks at marker lines
 *     / *@ NAME [needs DEP ...] [params GROUP ... [split]] * /        (without the spaces)
 * The text before the first marker (macros, types, comments: no functions)
 * is the file's preamble; the registry at the end is not emitted. Only
 * the chunks a call needs, with their dependencies, are emitted, so the
 * generated file holds no unused function. A kernel's `params` name the
 * groups of runtime/c/params/ its parameter slots belong to (slot_names
 * below); they are the compiler's and are cut from the emitted marker, as
 * is `split`: the kernel's indices are independent (each writes only its
 * own outputs and fills whatever scratch it reads), so --threads may run
 * parts of its index space at once (threads.c). */
/* The table is made once per process and outlives pool_release() (a
 * process may compile several models: tests/fuzz/), so it holds no pool
 * memory: a chunk's name is kept in the chunk itself. */
typedef struct Chunk {
    const char *file, *name, *text;
    size_t len, cut, cut_end;   /* text[cut, cut_end): " params ..." of the marker, not emitted */
    char deps[256], params[256];
    char namebuf[64];
    int split;                  /* `split` in the marker */
} Chunk;
static Chunk chunks[512];
static int nchunks;
/* o2c_rt.h, then the families' files (kernels.c, from families.def) */
static const char *file_at(int fi) { return fi ? KERNEL_FAMILY_FILES[fi - 1] : "o2c_rt.h"; }

static void parse_chunks(void)
{
    if (nchunks) return;
    for (int fi = 0; file_at(fi); fi++) {
        const char *t = runtime_text(file_at(fi));
        const char *reg = strstr(t, "/* ---- registry");
        const char *end = reg ? reg : t + strlen(t);
        /* preamble */
        const char *m = strstr(t, "\n/*@ ");
        const char *pre_end = m && m < end ? m + 1 : end;
        Chunk *c = &chunks[nchunks++];
        c->file = file_at(fi);
        c->name = "";
        c->text = t;
        c->len = (size_t)(pre_end - t);
        for (const char *p = pre_end; p < end;) {
            if (nchunks == (int)(sizeof chunks / sizeof chunks[0])) fail_plain("internal: too many runtime chunks");
            const char *eol = strchr(p, '\n');
            const char *next = strstr(p + 1, "\n/*@ ");
            const char *stop = next && next < end ? next + 1 : end;
            c = &chunks[nchunks++];
            c->file = file_at(fi);
            c->text = p;
            c->len = (size_t)(stop - p);
            /* header: NAME [needs ...] [params ...] */
            char hdr[512];
            size_t hl = (size_t)(eol - p - 4);
            if (hl >= sizeof hdr) fail_plain("internal: runtime/c/%s: a chunk marker longer than %zu bytes", file_at(fi), sizeof hdr);
            memcpy(hdr, p + 4, hl);
            hdr[hl] = 0;
            char *close = strstr(hdr, "*/");
            if (close) *close = 0;
            char *nm = strtok(hdr, " ");
            if (nm && strlen(nm) >= sizeof c->namebuf) fail_plain("internal: runtime chunk name '%s' too long", nm);
            snprintf(c->namebuf, sizeof c->namebuf, "%s", nm ? nm : "?");
            c->name = c->namebuf;
            char *w, *into = c->deps;
            while ((w = strtok(NULL, " ")))
                if (!strcmp(w, "params")) into = c->params;
                else if (!strcmp(w, "split")) c->split = 1;
                else if (strcmp(w, "needs")) {
                    if (strlen(into) + strlen(w) + 2 > sizeof c->deps)
                        fail_plain("internal: runtime chunk '%s': marker too long", c->name);
                    strcat(into, w);
                    strcat(into, " ");
                }
            /* the marker as emitted: without its params */
            const char *pp = strstr(p, " params "), *ce = strstr(p, "*/");
            if (pp && ce && pp < eol && ce < eol && pp < ce) {
                while (ce > pp && ce[-1] == ' ') ce--;
                c->cut = (size_t)(pp - p);
                c->cut_end = (size_t)(ce - p);   /* from the space before the comment's end */
            }
            p = stop;
        }
    }
}

/* need[i]: chunk i is written (one emission's marks: the table is shared) */
static void need_chunk(const char *name, char *need)
{
    for (int i = 0; i < nchunks; i++)
        if (!strcmp(chunks[i].name, name)) {
            if (need[i]) return;
            need[i] = 1;
            char deps[256];
            strcpy(deps, chunks[i].deps);
            for (char *save, *d = strtok_r(deps, " ", &save); d; d = strtok_r(NULL, " ", &save)) need_chunk(d, need);
            return;
        }
    fail_plain("internal: runtime chunk '%s' not found", name);
}

int runtime_chunk_splits(const char *name)
{
    parse_chunks();
    for (int i = 0; i < nchunks; i++)
        if (!strcmp(chunks[i].name, name)) return chunks[i].split;
    return 0;
}

/* the chunks an expression's text calls (o2c_vexp_f32, ...: expr_for_type) */
static void need_named_chunks(const char *text, char *need)
{
    for (const char *p = strstr(text, "o2c_v"); p; p = strstr(p + 1, "o2c_v")) {
        if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;
        size_t n = 0;
        while (isalnum((unsigned char)p[n]) || p[n] == '_') n++;
        for (int i = 0; i < nchunks; i++)
            if (strlen(chunks[i].name) == n && !strncmp(chunks[i].name, p, n)) need_chunk(chunks[i].name, need);
    }
}

void emit_kernel_sources(FILE *f, Lowering *L)
{
    parse_chunks();
    char *need = xalloc((size_t)nchunks + 1);
    int instances = 0;
    for (int c = 0; c < L->n; c++) {
        const Kernel *k = L->calls[c].kernel;
        if (L->calls[c].count <= 0) continue;   /* empty tensors: the call is not emitted */
        if (k->instance) {
            instances = 1;
            char deps[128];
            strcpy(deps, k->deps ? k->deps : "");
            for (char *save, *d = strtok_r(deps, " ", &save); d; d = strtok_r(NULL, " ", &save)) need_chunk(d, need);
            need_named_chunks(kernel_instance(k), need);
        } else {
            need_chunk(k->name, need);
        }
    }
    for (int fi = 0; file_at(fi); fi++) {
        int used = fi == 0 || (instances && !strcmp(file_at(fi), "elementwise.h"));
        for (int i = 0; i < nchunks; i++)
            if (need[i] && !strcmp(chunks[i].file, file_at(fi))) used = 1;
        if (!used) continue;
        if (fi) fprintf(f, "\n/* ---- runtime/c/%s ---- */\n", file_at(fi));
        /* the family's parameter slots (runtime/c/params/FILE), before its kernels */
        for (int i = 0; o2c_runtime_files[i][0]; i++)
            if (!strncmp(o2c_runtime_files[i][0], "params/", 7) && !strcmp(o2c_runtime_files[i][0] + 7, file_at(fi)))
                fputs(o2c_runtime_files[i][1], f);
        for (int i = 0; i < nchunks; i++)
            if (!strcmp(chunks[i].file, file_at(fi)) && (!*chunks[i].name || need[i])) {
                const Chunk *c = &chunks[i];
                size_t cut = c->cut_end > c->cut ? c->cut : c->len;
                fwrite(c->text, 1, cut, f);
                if (cut < c->len) fwrite(c->text + c->cut_end, 1, c->len - c->cut_end, f);
            }
    }
    /* instances, each once, in order of first use */
    int first = 1;
    for (int c = 0; c < L->n; c++) {
        const Kernel *k = L->calls[c].kernel;
        if (!k->instance || L->calls[c].count <= 0) continue;
        int seen = 0;
        for (int d = 0; d < c && !seen; d++) if (L->calls[d].kernel == k && L->calls[d].count > 0) seen = 1;
        if (seen) continue;
        if (first) fputs("\n/* ---- kernels made from the op table's expressions ---- */\n", f);
        first = 0;
        fprintf(f, "%s\n", kernel_instance(k));
    }
}

/* Shortest decimal that reads back to the same float (buf: 64 bytes). */
const char *c_float_text(char *buf, float v)
{
    if (isnan(v)) return "NAN";
    if (isinf(v)) return v < 0 ? "-INFINITY" : "INFINITY";
    if (!float_text_fast(v, buf))   /* float_text.c: the same text without snprintf and strtof */
        for (int prec = 6; prec <= 9; prec++) {
            snprintf(buf, 48, "%.*g", prec, (double)v);
            if (strtof(buf, NULL) == v) break;
        }
    if (!strpbrk(buf, ".en")) strcat(buf, ".");
    strcat(buf, "f");
    return buf;
}

void c_put_float(FILE *f, float v)
{
    char buf[64];
    fputs(c_float_text(buf, v), f);
}

const char *c_double_text(char *buf, double v)
{
    if (isnan(v)) return "NAN";
    if (isinf(v)) return v < 0 ? "-INFINITY" : "INFINITY";
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, 48, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (!strpbrk(buf, ".en")) strcat(buf, ".");
    return buf;
}

void c_put_double(FILE *f, double v)
{
    char buf[64];
    fputs(c_double_text(buf, v), f);
}

/* ---- a call's parameters, by name ----------------------------------------
 * Each call site writes its o2c_p with every nonzero k[]/f[] slot under the
 * name runtime/c/params/ gives it, and its pointers with the tensors' names:
 *
 *     const o2c_p p = {.x = {inputs[0], c1},
 *                      .y = {(arena + 9216)},
 *                      .k = {[O2C_CONV_C] = 3, [O2C_CONV_M] = 8, [O2C_CONV_IN] = 1, 16, 16, ...},
 *                      .f = {[O2C_EPI_FA] = 0.5},
 *                      .ff = {[O2C_EPI_FA] = 0.5f}};
 *
 * each pointer followed by a comment with its tensor's name (C99 designated
 * initializers; a list's slots follow its name, zero slots after a list's
 * last nonzero one and outside lists are left out). C++ (the
 * CUDA file) has no array designators: there p is zeroed and each slot
 * assigned, p.k[O2C_CONV_IN + 1] = 16;. The names of a kernel's slots are
 * the groups of its marker's `params` (runtime/c/FAMILY.h):
 *   GROUP        the enum ending with GROUP_NK names k[] (one ending with
 *                GROUP_NF names f[]); a name spans the slots up to the next
 *                one when a later one is defined from it (a list:
 *                O2C_CONV_OUT = O2C_CONV_IN + 3);
 *   GROUP_NK, GROUP_NF   only that enum of a group that has both;
 *   NAME         one name, preferred to the other names of its slot
 *                (O2C_ND_BATCH = O2C_ND_MODE, O2C_NORM_F_MOMENTUM);
 *   O2C_EPI      the linear kernels' epilogue (o2c_rt.h: O2C_EPI_ACT, ...);
 *   O2C_FEW, O2C_EINSUM   lists whose place depends on the call
 *                (O2C_FEW_STR_AT(r, b), O2C_EINSUM_STR_AT(nl, t)).
 * The op table's kernels (elementwise.h's macros) use O2C_EW, the fused
 * element-wise kernels a lowering writes O2C_FEW. A nonzero slot without a
 * name, or two groups naming one slot, is an internal error: the
 * annotation is wrong (tests/check_params.py checks it against the names
 * each kernel's text reads). The values come from the C compiler
 * (tools/embed.c --slots writes the table), never from parsing here. */



/* made at build time from runtime/c/params (tools/embed.c --slots): name,
 * file, enum block (-1: a macro), value, and the first name of its
 * initializer (an enumerator) or its body when that is one name (a macro) */
extern const struct o2c_slot_name {
    const char *name, *file;
    int block;
    long long value;
    const char *of;
} o2c_slot_names[];

enum { BLOCK_EPI = -2, BLOCK_FEW = -3, BLOCK_EINSUM = -4, MAX_SLOT_NAMES = 192 };

typedef struct Slot { const char *name; int64_t at, span; int block; } Slot;
typedef struct Slots { Slot a[2][MAX_SLOT_NAMES]; int n[2]; } Slots;   /* [0] k[], [1] f[] */

/* The table's index, made once per process from static data only (no pool
 * memory: it outlives pool_release()): the entries by name, each block's first. */
static const struct o2c_slot_name *slot_by_name[2048];
static int nslot_names, block_first[512], nblocks;

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const struct o2c_slot_name *const *)a)->name, (*(const struct o2c_slot_name *const *)b)->name);
}

static void slot_index(void)
{
    if (nslot_names) return;
    int n = 0;
    while (o2c_slot_names[n].name) n++;
    if (n > (int)(sizeof slot_by_name / sizeof slot_by_name[0]))
        fail_plain("internal: too many names in runtime/c/params");
    for (int i = 0; i < n; i++) {
        const struct o2c_slot_name *e = &o2c_slot_names[i];
        slot_by_name[i] = e;
        if (e->block > 0 && (i == 0 || o2c_slot_names[i - 1].block != e->block)) {
            if (e->block >= (int)(sizeof block_first / sizeof block_first[0]) || e->block <= nblocks)
                fail_plain("internal: runtime/c/params: enum blocks out of order");
            while (nblocks < e->block) block_first[++nblocks] = i;
        }
    }
    qsort(slot_by_name, (size_t)n, sizeof slot_by_name[0], by_name);
    nslot_names = n;
}

static const struct o2c_slot_name *slot_entry(const char *name)
{
    slot_index();
    int lo = 0, hi = nslot_names;
    while (lo < hi) {
        int mid = (lo + hi) / 2, c = strcmp(slot_by_name[mid]->name, name);
        if (!c) return slot_by_name[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* block b's entries: [*lo, *hi) of the table (the tool numbers the blocks
 * 1, 2, ... and writes a block's entries in a row) */
static void block_range(int b, const struct o2c_slot_name **lo, const struct o2c_slot_name **hi)
{
    slot_index();
    if (b < 1 || b > nblocks) fail_plain("internal: runtime/c/params: no enum block %d", b);
    const struct o2c_slot_name *e = &o2c_slot_names[block_first[b]];
    *lo = e;
    while (e->name && e->block == b) e++;
    *hi = e;
}

/* 0: block b names k[] slots (it ends with NAME_NK), 1: f[] (NAME_NF), -1: neither */
static int block_array(int b)
{
    const struct o2c_slot_name *lo, *hi;
    block_range(b, &lo, &hi);
    for (const struct o2c_slot_name *e = lo; e < hi; e++) {
        if (ends_with(e->name, "_NK")) return 0;
        if (ends_with(e->name, "_NF")) return 1;
    }
    return -1;
}

/* the slots entry e of an enum spans: up to the block's next value when a
 * later entry is defined from it (or from an alias of it), else one */
static int64_t entry_span(const struct o2c_slot_name *e)
{
    const struct o2c_slot_name *lo, *hi;
    block_range(e->block, &lo, &hi);
    int64_t next = -1;
    int list = 0;
    for (const struct o2c_slot_name *d = lo; d < hi; d++) {
        if (d->value <= e->value) continue;
        if (next < 0 || d->value < next) next = d->value;
        for (const struct o2c_slot_name *b = lo; d->of && b < hi && !list; b++)
            list = b->value == e->value && !strcmp(b->name, d->of);
    }
    return list && next > e->value ? next - e->value : 1;
}

static void slot_put(Slots *S, int arr, const char *kernel, const char *name, int64_t at, int64_t span, int block)
{
    Slot *v = S->a[arr];
    for (int i = 0; i < S->n[arr]; i++)
        if (at < v[i].at + v[i].span && v[i].at < at + span) {
            if (v[i].block == block) return;   /* an alias: the name given first is kept */
            fail_plain("internal: kernel %s: parameter names %s and %s share a slot (its params in runtime/c)", kernel,
                       v[i].name, name);
        }
    if (S->n[arr] == MAX_SLOT_NAMES) fail_plain("internal: kernel %s: too many parameter names", kernel);
    v[S->n[arr]++] = (Slot){name, at, span, block};
}

/* a list written as lists of its own: the broadcast strides of each input
 * (O2C_EW_STR_AT(j)), the activations of each direction (O2C_RNN_ACT_AT(d, a)) */
static void slot_put_list(Slots *S, int arr, const char *kernel, const char *name, int64_t at, int64_t span, int block)
{
    int64_t end = at;
    if (!strcmp(name, "O2C_EW_STRIDES")) {
        for (int j = 0; O2C_EW_STR_AT(j) < at + span; j++, end += O2C_MAX_RANK) {
            if (O2C_EW_STR_AT(j) != end) fail_plain("internal: O2C_EW_STR_AT does not match O2C_EW_STRIDES");
            slot_put(S, arr, kernel, xfmt("O2C_EW_STR_AT(%d)", j), end, O2C_MAX_RANK, block);
        }
    } else if (!strcmp(name, "O2C_RNN_ACTS")) {
        for (int d = 0; d < 2; d++)
            for (int a = 0; a < 3; a++, end += O2C_RNN_ACT_SLOTS) {
                if (O2C_RNN_ACT_AT(d, a) != end) fail_plain("internal: O2C_RNN_ACT_AT does not match O2C_RNN_ACTS");
                slot_put(S, arr, kernel, xfmt("O2C_RNN_ACT_AT(%d, %d)", d, a), end, O2C_RNN_ACT_SLOTS, block);
            }
    } else {
        slot_put(S, arr, kernel, name, at, span, block);
        return;
    }
    if (end != at + span) fail_plain("internal: %s is not a whole number of lists", name);
}

/* the groups of a kernel's parameter slots (the `params` of its marker) */
static const char *kernel_params(const Kernel *k)
{
    if (k->instance && !k->fn) {   /* written by a lowering: only ops/fused_elementwise.c does */
        if (strncmp(k->name, "o2c_ew_", 7))
            fail_plain("internal: generated kernel '%s' has no parameter names", k->name);
        return "O2C_FEW";
    }
    if (k->instance) {   /* the op table's: elementwise.h's macros (O2C_UNARY, O2C_BINARY, casts) */
        if (strcmp(k->file, "elementwise.h")) fail_plain("internal: kernel '%s' has no parameter names", k->name);
        return "O2C_EW";
    }
    parse_chunks();
    for (int i = 0; i < nchunks; i++)
        if (!strcmp(chunks[i].name, k->name)) return chunks[i].params;
    fail_plain("internal: runtime chunk '%s' not found", k->name);
}

/* the names of call c's k[] and f[] slots */
static void slot_names(const KCall *c, Slots *S)
{
    const char *kn = c->kernel->name;
    char ann[256];
    snprintf(ann, sizeof ann, "%s", kernel_params(c->kernel));
    S->n[0] = S->n[1] = 0;
    for (int pass = 0; pass < 2; pass++) {   /* single names first: they are preferred */
        char buf[256], *save;
        strcpy(buf, ann);
        for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
            const struct o2c_slot_name *nk = slot_entry(xfmt("%s_NK", t)), *nf = slot_entry(xfmt("%s_NF", t));
            const struct o2c_slot_name *self = slot_entry(t);
            if (self && self->block > 0 && (ends_with(t, "_NK") || ends_with(t, "_NF")))   /* GROUP_NK: only k[] */
                nk = ends_with(t, "_NK") ? self : NULL, nf = ends_with(t, "_NF") ? self : NULL;
            int group = nk || nf || !strcmp(t, "O2C_EPI") || !strcmp(t, "O2C_FEW") || !strcmp(t, "O2C_EINSUM");
            if (!group) {
                const struct o2c_slot_name *e = slot_entry(t), *b = e;
                for (int hops = 0; b && b->block < 0 && b->of && hops < 8; hops++)   /* a macro alias */
                    b = slot_entry(b->of);
                int arr = b && b->block > 0 ? block_array(b->block) : -1;
                if (arr < 0 || b->value != e->value)
                    fail_plain("internal: kernel %s: params '%s' names no slot group and no slot", kn, t);
                if (pass == 0) slot_put_list(S, arr, kn, xfmt("%s", t), e->value, entry_span(b), b->block);
                continue;
            }
            if (pass == 0) continue;
            if (!strcmp(t, "O2C_EPI")) {   /* o2c_rt.h: macros */
                slot_put(S, 0, kn, "O2C_EPI_ACT", O2C_EPI_ACT, 1, BLOCK_EPI);
                slot_put(S, 0, kn, "O2C_EPI_RES", O2C_EPI_RES, 1, BLOCK_EPI);
                slot_put(S, 0, kn, "O2C_EPI_NSLOPE", O2C_EPI_NSLOPE, 1, BLOCK_EPI);
                slot_put(S, 1, kn, "O2C_EPI_FA", O2C_EPI_FA, 1, BLOCK_EPI);
                slot_put(S, 1, kn, "O2C_EPI_FB", O2C_EPI_FB, 1, BLOCK_EPI);
            } else if (!strcmp(t, "O2C_FEW")) {   /* rank r, r dims, then r strides per broadcast input */
                int64_t r = c->k[O2C_FEW_RANK];
                slot_put(S, 0, kn, "O2C_FEW_RANK", O2C_FEW_RANK, 1, BLOCK_FEW);
                if (r > 0 && r <= O2C_MAX_RANK) {
                    slot_put(S, 0, kn, "O2C_FEW_DIMS", O2C_FEW_DIMS, r, BLOCK_FEW);
                    for (int b = 0; O2C_FEW_STR_AT(r, b) < O2C_NK; b++)
                        slot_put(S, 0, kn, xfmt("O2C_FEW_STR_AT(%lld, %d)", (long long)r, b), O2C_FEW_STR_AT(r, b), r,
                                 BLOCK_FEW);
                }
            } else if (!strcmp(t, "O2C_EINSUM")) {   /* counts, nl dims, then nl strides per operand */
                int64_t nl = c->k[O2C_EINSUM_NO] + c->k[O2C_EINSUM_NS];
                slot_put(S, 0, kn, "O2C_EINSUM_NIN", O2C_EINSUM_NIN, 1, BLOCK_EINSUM);
                slot_put(S, 0, kn, "O2C_EINSUM_NO", O2C_EINSUM_NO, 1, BLOCK_EINSUM);
                slot_put(S, 0, kn, "O2C_EINSUM_NS", O2C_EINSUM_NS, 1, BLOCK_EINSUM);
                if (nl > 0 && nl < O2C_NK) {
                    slot_put(S, 0, kn, "O2C_EINSUM_DIMS", O2C_EINSUM_DIMS, nl, BLOCK_EINSUM);
                    for (int u = 0; O2C_EINSUM_STR_AT(nl, u) < O2C_NK; u++)
                        slot_put(S, 0, kn, xfmt("O2C_EINSUM_STR_AT(%lld, %d)", (long long)nl, u), O2C_EINSUM_STR_AT(nl, u), nl,
                                 BLOCK_EINSUM);
                }
            } else {
                for (int arr = 0; arr < 2; arr++) {
                    const struct o2c_slot_name *term = arr ? nf : nk, *lo, *hi;
                    if (!term) continue;
                    if (block_array(term->block) != arr)
                        fail_plain("internal: %s ends an enum of both k[] and f[] names", term->name);
                    block_range(term->block, &lo, &hi);
                    for (const struct o2c_slot_name *e = lo; e < hi; e++)
                        if (!ends_with(e->name, "_NK") && !ends_with(e->name, "_NF"))
                            slot_put_list(S, arr, kn, e->name, e->value, entry_span(e), e->block);
                }
            }
        }
    }
    for (int arr = 0; arr < 2; arr++)   /* in slot order */
        for (int i = 1; i < S->n[arr]; i++)
            for (int j = i; j > 0 && S->a[arr][j].at < S->a[arr][j - 1].at; j--) {
                Slot t = S->a[arr][j];
                S->a[arr][j] = S->a[arr][j - 1];
                S->a[arr][j - 1] = t;
            }
}

static const char *k_text(int64_t v)
{
    return v == INT64_MIN ? "(-9223372036854775807LL - 1)" : xfmt("%lld", (long long)v);
}

/* a slot's value; the epilogue's activation and residual by their names (o2c_rt.h) */
static const char *k_value(const char *slot, int64_t v)
{
    static const struct { const char *slot; int64_t v; const char *name; } NAMED[] = {
        {"O2C_EPI_ACT", O2C_ACT_RELU, "O2C_ACT_RELU"}, {"O2C_EPI_ACT", O2C_ACT_CLIP, "O2C_ACT_CLIP"},
        {"O2C_EPI_ACT", O2C_ACT_LEAKYRELU, "O2C_ACT_LEAKYRELU"}, {"O2C_EPI_ACT", O2C_ACT_PRELU, "O2C_ACT_PRELU"},
        {"O2C_EPI_ACT", O2C_ACT_SIGMOID, "O2C_ACT_SIGMOID"}, {"O2C_EPI_ACT", O2C_ACT_TANH, "O2C_ACT_TANH"},
        {"O2C_EPI_ACT", O2C_ACT_HARDSIGMOID, "O2C_ACT_HARDSIGMOID"}, {"O2C_EPI_ACT", O2C_ACT_HARDSWISH, "O2C_ACT_HARDSWISH"},
        {"O2C_EPI_ACT", O2C_ACT_SILU, "O2C_ACT_SILU"}, {"O2C_EPI_ACT", O2C_ACT_GELU_ERF, "O2C_ACT_GELU_ERF"},
        {"O2C_EPI_ACT", O2C_ACT_GELU_TANH, "O2C_ACT_GELU_TANH"}, {"O2C_EPI_ACT", O2C_ACT_MISH, "O2C_ACT_MISH"},
        {"O2C_EPI_RES", O2C_RES_BEFORE, "O2C_RES_BEFORE"}, {"O2C_EPI_RES", O2C_RES_AFTER, "O2C_RES_AFTER"},
    };
    for (size_t i = 0; i < sizeof NAMED / sizeof NAMED[0]; i++)
        if (NAMED[i].v == v && !strcmp(NAMED[i].slot, slot)) return NAMED[i].name;
    return k_text(v);
}

/* items separated by ", " from column col, a new line at column indent
 * before an item that would pass column 110 */
static void put_items(FILE *f, const char *const *items, int n, int col, int indent)
{
    for (int i = 0; i < n; i++) {
        int len = (int)strlen(items[i]);
        if (i && col + 2 + len > 110) {
            fprintf(f, ",\n%*s", indent, "");
            col = indent;
        } else if (i) {
            fputs(", ", f);
            col += 2;
        }
        fputs(items[i], f);
        col += len;
    }
}

/* p for call c: "const o2c_p p = {.x = ..., .k = {[NAME] = v, ...}};" (C99),
 * or, cxx, a zeroed p and its nonzero slots assigned one by one (C++: CUDA);
 * each line from `indent`, ptr(t, out, ctx) naming each tensor. */
void emit_call_params(FILE *f, const KCall *c, TensorText ptr, void *ctx, const char *indent, int cxx)
{
    const char *kn = c->kernel->name;
    Slots S;
    slot_names(c, &S);
    const char **items = xalloc(sizeof(char *) * (O2C_NK + O2C_MAX_X + 2 * MAX_SLOT_NAMES));
    int ni[5] = {0}, nitems = 0, start[5];
    static const char *const FIELD[5] = {"x", "y", "k", "f", "ff"};
    char buf[64];
    /* the pointers, each with its tensor's name */
    for (int a = 0; a < 2; a++) {
        Tensor *const *t = a ? c->y : c->x;
        int n = 0;
        for (int j = 0; j < (a ? O2C_MAX_Y : O2C_MAX_X); j++) if (t[j]) n = j + 1;
        start[a] = nitems;
        for (int j = 0; j < n; j++)
            if (cxx && t[j])
                items[nitems++] = xfmt("p.%s[%d] = %s;   /* '%s' */", FIELD[a], j, ptr(t[j], a, ctx), c_comment(t[j]->name));
            else if (!cxx) items[nitems++] = t[j] ? xfmt("%s /* '%s' */", ptr(t[j], a, ctx), c_comment(t[j]->name)) : "0";
        ni[a] = nitems - start[a];
    }
    /* k[] and f[]: every nonzero slot named */
    for (int j = 0; j < O2C_NK + O2C_NF; j++) {
        int arr = j >= O2C_NK, s = arr ? j - O2C_NK : j;
        if (arr ? c->f[s] == 0.0 : !c->k[s]) continue;
        int named = 0;
        for (int i = 0; i < S.n[arr] && !named; i++)
            named = s >= S.a[arr][i].at && s < S.a[arr][i].at + S.a[arr][i].span;
        if (!named)
            fail_plain("internal: kernel %s: parameter %s[%d] = %s has no name (add its group to the kernel's params in "
                       "runtime/c, names in runtime/c/params)", kn, arr ? "f" : "k", s,
                       arr ? c_double_text(buf, c->f[s]) : k_text(c->k[s]));
    }
    for (int field = 2; field < 5; field++) {
        int arr = field > 2;
        start[field] = nitems;
        for (int i = 0; i < S.n[arr]; i++) {
            const Slot *sl = &S.a[arr][i];
            int64_t last = -1;
            for (int64_t s = sl->at; s < sl->at + sl->span && s < (arr ? O2C_NF : O2C_NK); s++)
                if (arr ? c->f[s] != 0.0 : c->k[s] != 0) last = s;
            const char *run = NULL;   /* C: "[NAME] = v0, v1, ...": a list's slots follow its name */
            for (int64_t s = sl->at; s <= last; s++) {
                const char *v = field == 2 ? k_value(sl->name, c->k[s])
                                           : xfmt("%s", field == 3 ? c_double_text(buf, c->f[s]) : c_float_text(buf, (float)c->f[s]));
                if (!cxx) {
                    run = run ? xfmt("%s, %s", run, v) : xfmt("[%s] = %s", sl->name, v);
                } else if (field == 2 ? c->k[s] != 0 : c->f[s] != 0.0) {   /* C++: p is zeroed, nonzero slots assigned */
                    const char *st = s == sl->at ? xfmt("p.%s[%s] = %s;", FIELD[field], sl->name, v)
                                                 : xfmt("p.%s[%s + %lld] = %s;", FIELD[field], sl->name, (long long)(s - sl->at), v);
                    run = run ? xfmt("%s %s", run, st) : st;
                }
            }
            if (run) items[nitems++] = run;
        }
        ni[field] = nitems - start[field];
    }
    if (cxx) {
        fprintf(f, "%so2c_p p = {};\n", indent);
        for (int field = 0; field < 5; field++) {
            if (!ni[field]) continue;
            if (field < 2) {   /* the pointers one a line */
                for (int i = 0; i < ni[field]; i++) fprintf(f, "%s%s\n", indent, items[start[field] + i]);
                continue;
            }
            fputs(indent, f);
            int col = (int)strlen(indent);
            for (int i = 0; i < ni[field]; i++) {   /* statements, a new line before column 110 */
                const char *it = items[start[field] + i];
                int len = (int)strlen(it);
                if (i && col + 1 + len > 110) {
                    fprintf(f, "\n%s", indent);
                    col = (int)strlen(indent);
                } else if (i) {
                    fputc(' ', f);
                    col++;
                }
                fputs(it, f);
                col += len;
            }
            fputc('\n', f);
        }
        return;
    }
    const char *head = "const o2c_p p = {";
    int base = (int)(strlen(indent) + strlen(head)), first = 1;
    fprintf(f, "%s%s", indent, head);
    for (int field = 0; field < 5; field++) {
        if (!ni[field]) continue;
        if (!first) fprintf(f, ",\n%*s", base, "");
        first = 0;
        fprintf(f, ".%s = {", FIELD[field]);
        int col = base + (int)strlen(FIELD[field]) + 5;
        put_items(f, items + start[field], ni[field], col, col);
        fputc('}', f);
    }
    if (first) fputs(".x = {0}", f);   /* no pointer, no parameter */
    fputs("};\n", f);
}

