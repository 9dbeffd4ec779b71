#define _POSIX_C_SOURCE 200809L
/* Emission helpers shared by the C and CUDA back ends: runtime kernel
 * text, constants, identifiers, kernel-call parameters. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* made at build time from runtime/c (tools/embed.c) */
extern const char *const o2c_runtime_files[][2];

const char *runtime_text(const char *file)
{
    for (int i = 0; o2c_runtime_files[i][0]; i++)
        if (!strcmp(o2c_runtime_files[i][0], file)) return o2c_runtime_files[i][1];
    fail_plain("internal: runtime file '%s' is not embedded", file);
}

/* Runtime files are cut into chunks at marker lines
 *     / *@ NAME [needs DEP ...] [params GROUP ...] * /        (without the spaces)
 * The text before the first marker (macros, types, comments: no functions)
 * is the file's preamble; the registry at the end is not emitted. Only
 * the chunks a call needs, with their dependencies, are emitted, so the
 * generated file holds no unused function. A kernel's `params` name the
 * groups of runtime/c/params/ its parameter slots belong to (slot_names
 * below); they are the compiler's and are cut from the emitted marker. */
/* The table is made once per process and outlives pool_release() (a
 * process may compile several models: tests/fuzz/), so it holds no pool
 * memory: a chunk's name is kept in the chunk itself. */
typedef struct Chunk {
    const char *file, *name, *text;
    size_t len, cut, cut_end;   /* text[cut, cut_end): " params ..." of the marker, not emitted */
    char deps[256], params[256];
    int need;
    char namebuf[64];
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

static void need_chunk(const char *name)
{
    for (int i = 0; i < nchunks; i++)
        if (!strcmp(chunks[i].name, name)) {
            if (chunks[i].need) return;
            chunks[i].need = 1;
            char deps[256];
            strcpy(deps, chunks[i].deps);
            for (char *save, *d = strtok_r(deps, " ", &save); d; d = strtok_r(NULL, " ", &save)) need_chunk(d);
            return;
        }
    fail_plain("internal: runtime chunk '%s' not found", name);
}

void emit_kernel_sources(FILE *f, Lowering *L)
{
    parse_chunks();
    for (int i = 0; i < nchunks; i++) chunks[i].need = 0;
    int instances = 0;
    for (int c = 0; c < L->n; c++) {
        const Kernel *k = L->calls[c].kernel;
        if (L->calls[c].count <= 0) continue;   /* empty tensors: the call is not emitted */
        if (k->instance) {
            instances = 1;
            char deps[128];
            strcpy(deps, k->deps ? k->deps : "");
            for (char *save, *d = strtok_r(deps, " ", &save); d; d = strtok_r(NULL, " ", &save)) need_chunk(d);
        } else {
            need_chunk(k->name);
        }
    }
    for (int fi = 0; file_at(fi); fi++) {
        int used = fi == 0 || (instances && !strcmp(file_at(fi), "elementwise.h"));
        for (int i = 0; i < nchunks; i++)
            if (chunks[i].need && !strcmp(chunks[i].file, file_at(fi))) used = 1;
        if (!used) continue;
        if (fi) fprintf(f, "\n/* ---- runtime/c/%s ---- */\n", file_at(fi));
        /* the family's parameter slots (runtime/c/params/FILE), before its kernels */
        for (int i = 0; o2c_runtime_files[i][0]; i++)
            if (!strncmp(o2c_runtime_files[i][0], "params/", 7) && !strcmp(o2c_runtime_files[i][0] + 7, file_at(fi)))
                fputs(o2c_runtime_files[i][1], f);
        for (int i = 0; i < nchunks; i++)
            if (!strcmp(chunks[i].file, file_at(fi)) && (!*chunks[i].name || chunks[i].need)) {
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
static const char *float_text(char *buf, float v)
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

static void put_float(FILE *f, float v)
{
    char buf[64];
    fputs(float_text(buf, v), f);
}

static const char *double_text(char *buf, double v)
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

static void put_double(FILE *f, double v)
{
    char buf[64];
    fputs(double_text(buf, v), f);
}

static void put_elem(FILE *f, int dt, const void *p, int64_t i)
{
    switch (dt) {
    case DT_FLOAT: put_float(f, ((const float *)p)[i]); break;
    case DT_DOUBLE: put_double(f, ((const double *)p)[i]); break;
    case DT_INT64: {
        int64_t v = ((const int64_t *)p)[i];
        if (v == INT64_MIN) fputs("(-9223372036854775807LL - 1)", f);
        else fprintf(f, "%lldLL", (long long)v);
        break;
    }
    case DT_UINT64: fprintf(f, "%lluULL", (unsigned long long)((const uint64_t *)p)[i]); break;
    case DT_INT32: {
        int32_t v = ((const int32_t *)p)[i];
        if (v == INT32_MIN) fputs("(-2147483647 - 1)", f);
        else fprintf(f, "%ld", (long)v);
        break;
    }
    case DT_UINT32: fprintf(f, "%luU", (unsigned long)((const uint32_t *)p)[i]); break;
    case DT_FLOAT16: case DT_BFLOAT16: fprintf(f, "0x%04x", (unsigned)((const uint16_t *)p)[i]); break;
    default:
        if (dtype_is_narrow(dt)) { fprintf(f, "0x%02x", (unsigned)((const uint8_t *)p)[i]); break; }   /* bit pattern */
        fprintf(f, "%lld", (long long)elem_i64(dt, p, i)); break;
    }
}

/* Every constant a kernel call reads, once, numbered 1.. in order of use. */
int emit_collect_constants(Lowering *L, Tensor ***out)
{
    int n = 0, cap = 16;
    Tensor **list = xalloc(sizeof(Tensor *) * (size_t)cap);
    for (int c = 0; c < L->n; c++)
        for (int j = 0; j < O2C_MAX_X && L->calls[c].count > 0; j++) {
            Tensor *t = L->calls[c].x[j];
            if (t && t->storage == ST_ALIAS) t = t->alias_of;   /* a view of a constant (at -O0) */
            if (!t || t->storage != ST_CONST || t->const_id) continue;
            if (n == cap) {
                Tensor **nl = xalloc(sizeof(Tensor *) * (size_t)cap * 2);
                memcpy(nl, list, sizeof(Tensor *) * (size_t)n);
                list = nl;
                cap *= 2;
            }
            list[n++] = t;
            t->const_id = n;   /* 1-based: 0 means not yet emitted */
        }
    *out = list;
    return n;
}

int emit_weights_section;   /* emit_c.c: --weights-section given */

void emit_const_array(FILE *f, Tensor *t, const char *qual)
{
    int64_t ne = tensor_numel(t);
    if (t->dtype == DT_STRING) {   /* ops/strings.c: an array of string literals (the exact bytes) */
        fprintf(f, "/* %s: string[%s] */\n%s char *const c%d[%lld] = {", c_comment(t->name), tensor_shape_str(t), qual,
                t->const_id, (long long)(ne ? ne : 1));
        if (!ne) fputs("\"\"", f);
        for (int64_t i = 0; i < ne; i++) {
            const char *v = ((const char *const *)t->data)[i];
            fprintf(f, "%s\"%s\"", i ? ",\n    " : "\n    ", c_string(v ? v : ""));
        }
        fputs("\n};\n", f);
        return;
    }
    fprintf(f, "/* %s: %s[%s] */\n%s %s c%d[%lld] O2C_ALIGN64%s = {", c_comment(t->name), dtype_name(t->dtype), tensor_shape_str(t), qual,
            dtype_ctype(t->dtype), t->const_id, (long long)(ne ? ne : 1), emit_weights_section ? " O2C_WEIGHTS_SECTION" : "");
    if (!ne) fputs("0", f);
    for (int64_t i = 0; i < ne; i++) {
        fputs(i % 8 ? ", " : (i ? ",\n    " : "\n    "), f);
        put_elem(f, t->dtype, t->data, i);
    }
    fputs("\n};\n", f);
}

/* The expression for a tensor's bytes in generated code: constants and the
 * arena are named by the back end's formats, I/O are the caller's arrays. */
const char *storage_ptr(const Tensor *t, const char *const_fmt, const char *arena_fmt)
{
    if (t->storage == ST_ALIAS && t->alias_offset) {   /* a slice view, or a Concat input written in place */
        int writable = t->alias_of->storage == ST_ARENA || t->alias_of->storage == ST_OUTPUT;
        return xfmt("((%sunsigned char *)%s + %lld)", writable ? "" : "const ",
                    storage_ptr(t->alias_of, const_fmt, arena_fmt), (long long)t->alias_offset);
    }
    if (t->storage == ST_ALIAS) t = t->alias_of;
    switch (t->storage) {
    case ST_CONST: return xfmt(const_fmt, t->const_id);
    case ST_INPUT: return xfmt("inputs[%d]", t->input_index);
    case ST_OUTPUT: return xfmt("outputs[%d]", t->output_index);
    case ST_ARENA: return xfmt(arena_fmt, (long long)t->offset);
    default: fail_plain("internal: tensor '%s' has no storage", t->name);
    }
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

#include "../runtime/c/params/elementwise.h"
#include "../runtime/c/params/index.h"
#include "../runtime/c/params/rnn.h"

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
 * each line from `indent`, ptr() naming each tensor. */
void emit_call_params(FILE *f, const KCall *c, const char *(*ptr)(const Tensor *, int out), const char *indent, int cxx)
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
                items[nitems++] = xfmt("p.%s[%d] = %s;   /* '%s' */", FIELD[a], j, ptr(t[j], a), c_comment(t[j]->name));
            else if (!cxx) items[nitems++] = t[j] ? xfmt("%s /* '%s' */", ptr(t[j], a), c_comment(t[j]->name)) : "0";
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
                       arr ? double_text(buf, c->f[s]) : k_text(c->k[s]));
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
                                           : xfmt("%s", field == 3 ? double_text(buf, c->f[s]) : float_text(buf, (float)c->f[s]));
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

/* A comment line describing what a call computes. */
void emit_call_comment(FILE *f, const KCall *c, const char *indent)
{
    if (c->node && (c->node->fused || c->node->norigins != 1 || strcmp(c->node->origins[0], c->node->name))) {
        /* a node made or changed by a pass: what it fused and the ONNX nodes it covers */
        const Node *n = c->node;
        fprintf(f, "%s/* %s '%s'", indent, c_comment(n->fused ? n->fused : n->op_type), c_comment(n->name));
        fputs(n->norigins ? " covers" : "", f);
        for (int i = 0; i < n->norigins && i < 16; i++) fprintf(f, "%s '%s'", i ? "," : "", c_comment(n->origins[i]));
        if (n->norigins > 16) fprintf(f, " and %d more", n->norigins - 16);
        fprintf(f, " -> %s[%s] */\n", c->y[0] ? dtype_name(c->y[0]->dtype) : "", c->y[0] ? tensor_shape_str(c->y[0]) : "");
    } else if (c->node)
        fprintf(f, "%s/* %s '%s' -> %s[%s] */\n", indent, c_comment(c->node->op_type), c_comment(c->node->name),
                c->y[0] ? dtype_name(c->y[0]->dtype) : "", c->y[0] ? tensor_shape_str(c->y[0]) : "");
    else
        fprintf(f, "%s/* graph output '%s' */\n", indent, c_comment(c->y[0]->name));
}

static const char *const KEYWORDS[] = {"auto", "break", "case", "char", "const", "continue", "default", "do",
    "double", "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
    "unsigned", "void", "volatile", "while", "inputs", "outputs", "arena", "class", "new", "delete",
    "this", "template", "private", "public", "bool", "true", "false",
    /* the rest of C++'s keywords and its alternative tokens (the header is C++ too: .cu, extern "C" users) */
    "alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "catch", "char8_t", "char16_t", "char32_t",
    "compl", "concept", "consteval", "constexpr", "constinit", "const_cast", "co_await", "co_return", "co_yield",
    "decltype", "dynamic_cast", "explicit", "export", "friend", "mutable", "namespace", "noexcept", "not",
    "not_eq", "nullptr", "operator", "or", "or_eq", "protected", "reinterpret_cast", "requires", "static_assert",
    "static_cast", "thread_local", "throw", "try", "typeid", "typename", "using", "virtual", "wchar_t", "xor",
    "xor_eq", NULL};

/* Parameter names for the typed entry: C identifiers, unique, never a C
 * or C++ keyword, and never a name the entry itself uses: the locals are
 * o2c_*, the functions NAME_* (a parameter named NAME_run would hide the
 * function it calls). */
static char **param_names(Graph *g, const char *model)
{
    size_t mlen = strlen(model);
    int n = g->ninputs + g->noutputs;
    char **names = xalloc(sizeof(char *) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        Tensor *t = i < g->ninputs ? g->inputs[i] : g->outputs[i - g->ninputs];
        char *id = c_ident(t->name);
        for (int k = 0; KEYWORDS[k]; k++)
            if (!strcmp(id, KEYWORDS[k])) id = xfmt("%s_", id);
        if (!strncmp(id, "o2c_", 4) || (!strncmp(id, model, mlen) && id[mlen] == '_')) id = xfmt("p_%s", id);
        for (int again = 1; again;) {
            again = 0;
            for (int j = 0; j < i; j++)
                if (!strcmp(names[j], id)) { id = xfmt("%s_%d", id, i); again = 1; }
        }
        names[i] = id;
    }
    return names;
}

/* Inputs of rank 2 and more are not declared const: C before C23 does not
 * convert a pointer to an array of T into a pointer to an array of const T
 * (gcc -pedantic warns at every call with an ordinary array). The run never
 * writes its inputs. */
static void typed_param(FILE *f, Tensor *t, const char *name, int is_in)
{
    int arr = t->rank > 0 && tensor_numel(t) > 0 && !t->dyn_count;   /* a run-time size: a flat buffer */
    if (t->dtype == DT_STRING)   /* ops/strings.c: "const char *const x[2][3]" in, "const char *y[2][3]" out */
        fprintf(f, "const char *%s%s%s", is_in && t->rank < 2 ? "const " : "", arr ? "" : "*", name);
    else
        fprintf(f, "%s%s %s%s", is_in && t->rank < 2 ? "const " : "", dtype_ctype(t->dtype), arr ? "" : "*", name);
    if (arr)
        for (int d = 0; d < t->rank; d++) fprintf(f, "[%lld]", (long long)t->dims[d]);
}

/* caller_arena (--caller-arena): a last parameter, the arena */
static void typed_signature(FILE *f, Graph *g, const char *name, int caller_arena)
{
    char **pn = param_names(g, name);
    fprintf(f, "int %s_predict(", name);
    for (int i = 0; i < g->ninputs + g->noutputs; i++) {
        if (i) fputs(", ", f);
        int is_in = i < g->ninputs;
        typed_param(f, is_in ? g->inputs[i] : g->outputs[i - g->ninputs], pn[i], is_in);
    }
    if (caller_arena) fprintf(f, "%svoid *o2c_arena", g->ninputs + g->noutputs ? ", " : "");
    else if (!g->ninputs && !g->noutputs) fputs("void", f);
    fputs(")", f);
}

/* Templates (templates/NAME.in, embedded like the runtime): literal text with
 * @KEY@ placeholders that fill() writes. */
void emit_template(FILE *f, const char *name, TemplateFill fill, void *ctx)
{
    const char *t = runtime_text(name);
    while (*t) {
        const char *at = strchr(t, '@');
        if (!at) { fputs(t, f); return; }
        fwrite(t, 1, (size_t)(at - t), f);
        const char *e = at + 1;
        while ((*e >= 'A' && *e <= 'Z') || (*e >= '0' && *e <= '9') || *e == '_') e++;
        if (*e != '@' || e == at + 1) { fputc('@', f); t = at + 1; continue; }
        char key[64];
        size_t kl = (size_t)(e - at - 1) < sizeof key - 1 ? (size_t)(e - at - 1) : sizeof key - 1;
        memcpy(key, at + 1, kl);
        key[kl] = 0;
        fill(f, key, ctx);
        t = e + 1;
    }
}

static void emit_dyn_funcs(FILE *f, const EmitCtx *c);

/* --bind: the run starts by checking that each bound input holds the bytes
 * it was bound to (the code was specialized for them), and returns
 * NAME_ERR_BOUND_INPUT otherwise. On CUDA the input is on the device: it is
 * copied back to the host for the check (a synchronous copy of a few bytes). */
static void emit_bind_check(FILE *f, const EmitCtx *c)
{
    Graph *g = c->g;
    for (int i = 0; i < g->ninputs; i++) {
        Tensor *t = g->inputs[i];
        size_t nb = tensor_bytes(t);
        if (!t->bound || !nb) continue;
        if (t->dtype == DT_STRING) {   /* ops/strings.c: each string compared */
            int64_t ne = tensor_numel(t);
            fprintf(f, "    {   /* --bind: input %d ('%s') was fixed at compile time to these strings */\n", i,
                    c_comment(t->name));
            fprintf(f, "        static const char *const want[%lld] = {", (long long)ne);
            for (int64_t k = 0; k < ne; k++) fprintf(f, "%s\n            \"%s\"", k ? "," : "", c_string(((char **)t->data)[k]));
            fprintf(f, "};\n        const char *const *got = (const char *const *)inputs[%d];\n        int64_t k;\n", i);
            fprintf(f, "        for (k = 0; k < %lld; k++)\n            if (!got[k] || strcmp(got[k], want[k])) return %s_ERR_BOUND_INPUT;\n    }\n",
                    (long long)ne, c->o->name);
            continue;
        }
        const unsigned char *b = t->data;
        fprintf(f, "    {   /* --bind: input %d ('%s') was fixed at compile time to this value */\n", i, c_comment(t->name));
        fprintf(f, "        static const unsigned char want[%zu] = {", nb);
        for (size_t k = 0; k < nb; k++) fprintf(f, "%s%s%u", k ? "," : "", k % 16 ? "" : "\n            ", b[k]);
        fputs("};\n", f);
        if (c->cuda) {
            fprintf(f, "        static unsigned char got[%zu];\n", nb);
            fprintf(f, "        O2C_CHECK(cudaMemcpy(got, inputs[%d], %zu, cudaMemcpyDeviceToHost));\n", i, nb);
        } else {
            fprintf(f, "        const unsigned char *got = (const unsigned char *)inputs[%d];\n", i);
        }
        fprintf(f, "        size_t k;\n        for (k = 0; k < %zu; k++)\n            if (got[k] != want[k]) return %s_ERR_BOUND_INPUT;\n    }\n",
                nb, c->o->name);
    }
}

/* Keys every template may use: the model's name and facts about it. */
int emit_common_key(FILE *f, const char *key, const EmitCtx *c)
{
    Graph *g = c->g;
    if (!strcmp(key, "NAME")) fputs(c->o->name, f);
    else if (!strcmp(key, "SOURCE")) fputs(c_comment(source_name(diag_file)), f);
    else if (!strcmp(key, "HEADER")) fputs(c->o->header, f);
    else if (!strcmp(key, "GRAPH")) fputs(c_comment(g->name), f);
    else if (!strcmp(key, "IR")) fprintf(f, "%lld", (long long)g->ir_version);
    else if (!strcmp(key, "OPSET")) fprintf(f, "%d", g->opset);
    else if (!strcmp(key, "PRODUCER")) { if (*g->producer) fprintf(f, ", producer %s", c_comment(g->producer)); }
    else if (!strcmp(key, "NIN")) fprintf(f, "%d", g->ninputs);
    else if (!strcmp(key, "NOUT")) fprintf(f, "%d", g->noutputs);
    else if (!strcmp(key, "NIN1")) fprintf(f, "%d", g->ninputs + 1);
    else if (!strcmp(key, "NOUT1")) fprintf(f, "%d", g->noutputs + 1);
    else if (!strcmp(key, "ARENA")) fprintf(f, "%lld", (long long)c->arena);
    else if (!strcmp(key, "ARENA_ALLOC")) fprintf(f, "%lld", (long long)(c->arena ? c->arena : 1));
    else if (!strcmp(key, "KERNELS")) emit_kernel_sources(f, c->L);
    else if (!strcmp(key, "PREDICT")) emit_typed_entry(f, g, c->o->name, c->o->caller_arena);
    else if (!strcmp(key, "STATIC_ARENA")) {   /* the arena of NAME_run (none with --caller-arena) */
        if (!c->o->caller_arena)
            fprintf(f, "static union { unsigned char b[%lld]; long double align_ld; void *align_p; } o2c_arena O2C_ALIGN64%s;"
                       "   /* of %s_run */\n", (long long)(c->arena ? c->arena : 1), c->o->arena_section ? " O2C_ARENA_SECTION" : "",
                    c->o->name);
    } else if (!strcmp(key, "STATIC_RUN")) {
        if (!c->o->caller_arena)
            fprintf(f, "int %s_run(const void *const inputs[], void *const outputs[])\n{\n"
                       "    return run_impl(inputs, outputs, o2c_arena.b);\n}\n", c->o->name);
    }
    else if (!strncmp(key, "PROFILE_", 8)) {   /* --profile (emit_c.c) */
        if (c->backend_key) c->backend_key(f, key, c);
    }
    else if (!strcmp(key, "BIND_CHECK")) emit_bind_check(f, c);
    else if (!strcmp(key, "DYN_FUNCS")) emit_dyn_funcs(f, c);
    else return 0;
    return 1;
}

/* ---- outputs sized at run time (ir.h dyn_count) ---- */

static int dyn_outputs(const Graph *g)
{
    int n = 0;
    for (int i = 0; i < g->noutputs; i++) n += g->outputs[i]->dyn_count != NULL;
    return n;
}

/* the arena offset of output t's run-time size */
static long long dyn_offset(const Tensor *t)
{
    if (t->storage != ST_OUTPUT || t->dyn_count->storage != ST_ARENA)
        fail_plain("internal: output '%s' has a run-time size but is not written in place", t->name);
    return (long long)t->dyn_count->offset;
}

/* NAME_output_dims (and on C NAME_output_dims_with_arena); on CUDA also the
 * bytes NAME_run copies back of each output (o2c_out_run_bytes). */
static void emit_dyn_funcs(FILE *f, const EmitCtx *c)
{
    const Graph *g = c->g;
    const char *N = c->o->name;
    if (!dyn_outputs(g)) return;
    fputs("\n/* ---- the shapes of the outputs sized at run time ---- */\n", f);
    if (c->cuda) {
        fprintf(f, "static int64_t o2c_dyn_read(long long off)\n{\n    int64_t v = -1;\n"
                   "    if (!d_arena || cudaMemcpy(&v, d_arena + off, sizeof v, cudaMemcpyDeviceToHost) != cudaSuccess) "
                   "return -1;\n    return v;\n}\n\n");
        fprintf(f, "int %s_output_dims(int k, int64_t dims[])\n{\n", N);
    } else {
        fprintf(f, "int %s_output_dims_with_arena(const void *arena, int k, int64_t dims[])\n{\n"
                   "    const unsigned char *a = (const unsigned char *)arena;\n    int64_t v;\n    (void)a;\n    (void)v;\n", N);
    }
    fputs("    switch (k) {\n", f);
    for (int i = 0; i < g->noutputs; i++) {
        const Tensor *t = g->outputs[i];
        fprintf(f, "    case %d:\n", i);
        if (t->dyn_count) {
            if (c->cuda) fprintf(f, "        if (o2c_dyn_read(%lld) < 0) return -1;\n", dyn_offset(t));
            else fprintf(f, "        memcpy(&v, a + %lld, sizeof v);\n", dyn_offset(t));
        }
        for (int d = 0; d < t->rank; d++) {
            if (t->dyn_count && d == t->dyn_axis && c->cuda)
                fprintf(f, "        dims[%d] = o2c_dyn_read(%lld);\n", d, dyn_offset(t));
            else if (t->dyn_count && d == t->dyn_axis)
                fprintf(f, "        dims[%d] = v;\n", d);
            else fprintf(f, "        dims[%d] = %lld;\n", d, (long long)t->dims[d]);
        }
        fprintf(f, "        return %d;\n", t->rank);
    }
    fputs("    default:\n        return -1;\n    }\n}\n", f);
    if (c->cuda) {
        fputs("\n/* the bytes of output i that a run wrote */\nstatic size_t o2c_out_run_bytes(int i)\n{\n    int64_t d[8];\n"
              "    int r, j;\n    size_t e = 1;\n    switch (i) {\n", f);
        for (int i = 0; i < g->noutputs; i++)
            if (g->outputs[i]->dyn_count)
                fprintf(f, "    case %d: e = %zu; break;\n", i, dtype_size(g->outputs[i]->dtype));
        fprintf(f, "    default: return out_bytes[i];\n    }\n    r = %s_output_dims(i, d);\n    if (r < 0) return 0;\n"
                   "    for (j = 0; j < r; j++) e *= (size_t)d[j];\n    return e;\n}\n", N);
    } else {
        if (!c->o->caller_arena)
            fprintf(f, "\nint %s_output_dims(int k, int64_t dims[])\n{\n    return %s_output_dims_with_arena(o2c_arena.b, k, dims);\n}\n",
                    N, N);
    }
}

static void io_macros(FILE *f, Graph *g, const char *N)
{
    for (int i = 0; i < g->ninputs + g->noutputs; i++) {
        int is_in = i < g->ninputs;
        Tensor *t = is_in ? g->inputs[i] : g->outputs[i - g->ninputs];
        int k = is_in ? i : i - g->ninputs;
        const char *kind = is_in ? "INPUT" : "OUTPUT";
        fprintf(f, "/* %s %d: \"%s\", %s[%s]%s */\n", is_in ? "input" : "output", k, c_comment(t->name), dtype_name(t->dtype),
                tensor_shape_str(t), dtype_is_narrow(t->dtype) ? ", one element a byte (uint8_t, the bits in the low end)" : "");
        fprintf(f, "#define %s_%s%d_NAME \"%s\"\n", N, kind, k, c_string(t->name));
        fprintf(f, "#define %s_%s%d_TYPE \"%s\"\n", N, kind, k, dtype_name(t->dtype));
        fprintf(f, "#define %s_%s%d_RANK %d\n", N, kind, k, t->rank);
        fprintf(f, "#define %s_%s%d_SIZE %lld /* elements */\n", N, kind, k, (long long)tensor_numel(t));
        fprintf(f, "#define %s_%s%d_DIMS {", N, kind, k);
        for (int d = 0; d < t->rank; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)t->dims[d]);
        fputs(t->rank ? "}\n" : "0}\n", f);
        if (!is_in && t->dyn_count)
            fprintf(f, "/* its dim %d is known only at run time (the data decides it): _DIMS and _SIZE are\n"
                       " * the upper bound the buffer must hold; a run writes its elements densely\n"
                       " * (row-major, from the start) and %s_output_dims(%d, dims) gives their shape */\n"
                       "#define %s_%s%d_DYNAMIC_AXIS %d\n", t->dyn_axis, N, k, N, kind, k, t->dyn_axis);
        fputc('\n', f);
    }
    seq_io_notes(f, g, N);   /* sequence and optional inputs/outputs: their slots (ops/sequence.c) */
}

static void header_key(FILE *f, const char *key, void *ctx)
{
    const EmitCtx *c = ctx;
    const char *N = c->o->name;
    if (emit_common_key(f, key, c)) return;
    if (!strcmp(key, "GUARD")) {
        for (const char *p = N; *p; p++) fputc(toupper((unsigned char)*p), f);
        fputs("_H", f);
    } else if (!strcmp(key, "TARGET_INCLUDES")) {
        if (c->cuda) fputs("#ifdef O2C_CUDA_EMULATE\n#include \"o2c_cuda_emulate.h\"\n#else\n#include <cuda_runtime_api.h>\n#endif\n", f);
    } else if (!strcmp(key, "CONST_BYTES")) {
        long long b = 0;
        for (int i = 0; i < c->nconsts; i++) b += (long long)tensor_bytes(c->consts[i]);
        fprintf(f, "%lld", b);
    } else if (!strcmp(key, "CONST_NOTE")) {
        fputs(c->cuda ? "uploaded to the device by the init" : "each array 64-byte aligned", f);
    } else if (!strcmp(key, "ARENA_NOTE")) {
        fputs(c->cuda ? "device memory, allocated by the first run" : "its start must be 64-byte aligned", f);
    } else if (!strcmp(key, "IO_MACROS")) {
        io_macros(f, c->g, N);
    } else if (!strcmp(key, "BIND_API")) {
        int nb = 0;
        for (int i = 0; i < c->g->ninputs; i++) nb += c->g->inputs[i]->bound;
        if (nb) {
            fprintf(f, "/* Inputs fixed by --bind (the code is specialized for their values):");
            for (int i = 0; i < c->g->ninputs; i++)
                if (c->g->inputs[i]->bound) fprintf(f, " %d ('%s')", i, c_comment(c->g->inputs[i]->name));
            fprintf(f, ". A run whose bound input holds another value computes nothing and returns\n"
                       " * %s_ERR_BOUND_INPUT. */\n#define %s_ERR_BOUND_INPUT 2\n\n", N, N);
        }
    } else if (!strcmp(key, "ARENA_INTRO")) {
        fputs(c->o->caller_arena ? "Runs the model with" : "The same, with", f);
    } else if (!strcmp(key, "ARENA_REENTRANT")) {
        if (c->o->caller_arena)
            fprintf(f, "The file has no %s_run and no mutable static state (--caller-arena):\n"
                       " * models may share one buffer (one run at a time), and a model may run in\n"
                       " * several threads with one arena each.", N);
        else
            fprintf(f, "%s_run uses a static buffer and is not reentrant; this one is, with\n"
                       " * one arena per concurrent call.", N);
    } else if (!strcmp(key, "RUN_WHAT")) {
        fputs(c->o->caller_arena ? "The model runs through the entry below that takes the caller's arena" : "Runs the model", f);
    } else if (!strcmp(key, "RUN_DECL")) {
        if (!c->o->caller_arena) fprintf(f, "int %s_run(const void *const inputs[], void *const outputs[]);\n", N);
    } else if (!strcmp(key, "DYN_API")) {
        if (dyn_outputs(c->g)) {
            if (!c->o->caller_arena)
                fprintf(f, "/* The shape of output k after a run (%s_run%s): fills dims[] and returns the\n"
                           " * rank (-1: no such output%s). Outputs marked _DYNAMIC_AXIS above take a size\n"
                           " * decided by the data; the others always have their _DIMS. */\n"
                           "int %s_output_dims(int k, int64_t dims[]);\n",
                           N, c->cuda ? " or a synchronized _run_device" : "", c->cuda ? ", or a CUDA error" : "", N);
            if (!c->cuda)
                fprintf(f, "/* The same after %s_run_with_arena, read from that run's arena. */\n"
                           "int %s_output_dims_with_arena(const void *arena, int k, int64_t dims[]);\n", N, N);
            fputc('\n', f);
        }
    } else if (!strcmp(key, "CHECK_API")) {   /* control flow (ops/control.c): run-time checks */
        if (graph_has_strings(c->g)) strings_header_note(f, c);   /* string tensors (ops/strings.c) */
        int checks = 0;
        for (int i = 0; i < c->L->n; i++) checks |= c->L->calls[i].ctl == CTL_FAIL;
        if (checks)
            fprintf(f, "/* A run-time check of the model failed (the run stops; its outputs are not all\n"
                       " * written): a loop ran another number of iterations than the length the model\n"
                       " * declares for its scan output, an optional input that OptionalGetElement\n"
                       " * reads was empty (NULL), or a size read at run time (TopK's K) was out of\n"
                       " * range. */\n#define %s_ERR_CHECK 3\n\n", N);
    } else if (!strcmp(key, "TARGET_API")) {
        emit_template(f, c->cuda ? "api_cuda.h.in" : "api_c.h.in", header_key, ctx);
    } else if (!strcmp(key, "PREDICT_DECL")) {
        typed_signature(f, c->g, N, c->o->caller_arena);
    } else {
        fail_plain("internal: unknown template key @%s@", key);
    }
}

void emit_header(FILE *f, const EmitCtx *c)
{
    emit_template(f, "header.h.in", header_key, (void *)c);
}

void emit_typed_entry(FILE *f, Graph *g, const char *N, int caller_arena)
{
    char **pn = param_names(g, N);
    typed_signature(f, g, N, caller_arena);
    fputs("\n{\n", f);
    fprintf(f, "    const void *o2c_in[%d];\n    void *o2c_out[%d];\n", g->ninputs ? g->ninputs : 1, g->noutputs ? g->noutputs : 1);
    for (int i = 0; i < g->ninputs; i++) fprintf(f, "    o2c_in[%d] = %s;\n", i, pn[i]);
    for (int i = 0; i < g->noutputs; i++) fprintf(f, "    o2c_out[%d] = %s;\n", i, pn[g->ninputs + i]);
    if (!g->ninputs) fputs("    o2c_in[0] = 0;\n", f);
    if (!g->noutputs) fputs("    o2c_out[0] = 0;\n", f);
    if (caller_arena) fprintf(f, "    return %s_run_with_arena(o2c_in, o2c_out, o2c_arena);\n}\n", N);
    else fprintf(f, "    return %s_run(o2c_in, o2c_out);\n}\n", N);
}

/* A control-flow marker (ir.h: CTL_*) as C; returns the new nesting depth.
 * fail_stmt: what a failed run-time check does. The CUDA emitter reads a
 * flag into o2c_flag on the host first (flag_read, with %s the pointer). */
int emit_ctl_flag(FILE *f, const KCall *k, int depth, const char *(*ptr)(const Tensor *, int out),
                  const char *fail_stmt, const char *flag_read)
{
    int d = depth < 30 ? depth : 30;
    const char *flag = "";
    if (k->x[0]) {
        const char *p = ptr(k->x[0], 0);
        if (flag_read) {
            fprintf(f, "%*s", 4 * (d + 1), "");
            fprintf(f, flag_read, p);
            fputc('\n', f);
            flag = "o2c_flag";
        } else {
            flag = xfmt("*(const unsigned char *)%s", p);
        }
    }
    switch (k->ctl) {
    case CTL_IF: fprintf(f, "%*sif (%s) {\n", 4 * (d + 1), "", flag); return depth + 1;
    case CTL_ELSE: fprintf(f, "%*s} else {\n", 4 * d, ""); return depth;
    case CTL_LOOP: fprintf(f, "%*sfor (;;) {\n", 4 * (d + 1), ""); return depth + 1;
    case CTL_BREAK: fprintf(f, "%*sif (!%s) break;\n", 4 * (d + 1), "", flag); return depth;
    case CTL_FAIL:
        fprintf(f, "%*sif (%s) %s   /* a run-time check failed: a loop's iteration count, an empty optional */\n",
                4 * (d + 1), "", flag, fail_stmt);
        return depth;
    case CTL_END: fprintf(f, "%*s}\n", 4 * d, ""); return depth - 1;
    default: fail_plain("internal: control-flow marker %d", k->ctl);
    }
}

int emit_ctl(FILE *f, const KCall *k, int depth, const char *(*ptr)(const Tensor *, int out), const char *fail_stmt)
{
    return emit_ctl_flag(f, k, depth, ptr, fail_stmt, NULL);
}
