#define _POSIX_C_SOURCE 200809L
/* Emission helpers shared by the C and CUDA back ends: constants, storage
 * expressions, call comments, control flow, the header and the keys every
 * template may use. (The kernels' and the calls' own text: engine/ctext.c.) */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"


static void put_elem(FILE *f, int dt, const void *p, int64_t i)
{
    switch (dt) {
    case DT_FLOAT: {   /* its bit pattern (emit_const_array's union) */
        uint32_t b;
        memcpy(&b, (const float *)p + i, sizeof b);
        fprintf(f, "0x%08lx", (unsigned long)b);
        break;
    }
    case DT_DOUBLE: {
        uint64_t b;
        memcpy(&b, (const double *)p + i, sizeof b);
        fprintf(f, "0x%016llx", (unsigned long long)b);
        break;
    }
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

/* Constants of at least CONST_WORDS_MIN_BYTES are written as 64-bit words
 * of their bytes (emit_const_array): a large model's source is mostly its
 * weights, and a C compiler's time goes by the initializer's elements (gcc
 * -O2 -c of 4 M floats: 16 s as 32-bit patterns, 8 s as 2 M words; an
 * int8 weight is one element a byte, eight to a word). The smaller ones
 * (biases, shapes, scales) stay one element each, readable. */
#define CONST_WORDS_MIN_BYTES 1024

/* Every constant a kernel call reads, once, numbered 1.. in order of use;
 * words: the larger ones may be written as words (not for --element-constants
 * or cortex-m: any byte order, any compiler) */
static int emit_collect_constants(Lowering *L, Tensor ***out, int words)
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
            t->const_words = words && t->dtype != DT_STRING && dtype_size(t->dtype) && tensor_bytes(t) >= CONST_WORDS_MIN_BYTES;
        }
    *out = list;
    return n;
}

/* float and double constants: a union of bit patterns (const_ref_fmt) */
static int as_bits(int dt)
{
    return dt == DT_FLOAT || dt == DT_DOUBLE;
}

/* A constant as 64-bit words of its bytes, least significant byte first
 * (the element's own bit pattern, whatever the compiler's host), in a
 * union with the view the code reads (cN.v) */
static void emit_const_words(FILE *f, const Tensor *t, const char *qual, const char *attrs)
{
    size_t es = dtype_size(t->dtype), bytes = tensor_bytes(t), nw = (bytes + 7) / 8, per = 8 / es;
    fprintf(f, "/* %s: %s[%s], as 64-bit words of its bytes */\n%s union { uint64_t w[%zu]; %s v[%lld]; } c%d%s = {{",
            c_comment(t->name), dtype_name(t->dtype), tensor_shape_str(t), qual, nw, dtype_ctype(t->dtype),
            (long long)tensor_numel(t), t->const_id, attrs);
    int64_t ne = tensor_numel(t);
    for (size_t w = 0; w < nw; w++) {
        uint64_t word = 0;
        for (size_t j = 0; j < per && (int64_t)(w * per + j) < ne; j++) {
            const unsigned char *e = (const unsigned char *)t->data + (w * per + j) * es;
            uint64_t bits = 0;
            switch (es) {   /* the element's value as bits, in the host's order */
            case 1: bits = e[0]; break;
            case 2: { uint16_t b; memcpy(&b, e, 2); bits = b; break; }
            case 4: { uint32_t b; memcpy(&b, e, 4); bits = b; break; }
            default: memcpy(&bits, e, 8); break;
            }
            word |= bits << (8 * es * j);
        }
        fprintf(f, "%s0x%016llxu", w % 4 ? ", " : (w ? ",\n    " : "\n    "), (unsigned long long)word);
    }
    fputs("\n}};\n", f);
}

void emit_const_words_guard(FILE *f, Tensor *const *consts, int n)
{
    int any = 0;
    for (int i = 0; i < n; i++) any |= consts[i]->const_words;
    if (!any) return;
    fprintf(f, "\n/* Constants of %d bytes or more are written as 64-bit words of their bytes, least\n"
               " * significant byte first (a C compiler parses them up to eight times faster than\n"
               " * one element at a time): the layout of a little-endian target. onnx2c\n"
               " * --element-constants writes every element on its own, for any byte order. */\n"
               "#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)\n"
               "#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__\n"
               "#error \"the constants are written for a little-endian target: generate this file with onnx2c "
               "--element-constants\"\n#endif\n"
               "#elif !defined(_MSC_VER) && !defined(O2C_LITTLE_ENDIAN)\n"
               "#error \"the compiler does not name its byte order: define O2C_LITTLE_ENDIAN for a little-endian "
               "target, else generate this file with onnx2c --element-constants\"\n#endif\n",
            CONST_WORDS_MIN_BYTES);
}

void emit_const_array(FILE *f, Tensor *t, const char *qual, int section, int natural)
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
    const char *attrs = xfmt("%s%s", natural ? "" : " O2C_ALIGN64", section ? " O2C_WEIGHTS_SECTION" : "");
    if (t->const_words) {
        emit_const_words(f, t, qual, attrs);
        return;
    }
    long long n = (long long)(ne ? ne : 1);
    int bits = as_bits(t->dtype);
    if (bits)   /* the bit patterns (put_elem), read through the view .v */
        fprintf(f, "/* %s: %s[%s], as bit patterns */\n%s union { %s bits[%lld]; %s v[%lld]; } c%d%s = {{",
                c_comment(t->name), dtype_name(t->dtype), tensor_shape_str(t), qual,
                t->dtype == DT_DOUBLE ? "uint64_t" : "uint32_t", n, dtype_ctype(t->dtype), n, t->const_id, attrs);
    else
        fprintf(f, "/* %s: %s[%s] */\n%s %s c%d[%lld]%s = {", c_comment(t->name), dtype_name(t->dtype),
                tensor_shape_str(t), qual, dtype_ctype(t->dtype), t->const_id, n, attrs);
    if (!ne) fputs("0", f);
    for (int64_t i = 0; i < ne; i++) {
        fputs(i % 8 ? ", " : (i ? ",\n    " : "\n    "), f);
        put_elem(f, t->dtype, t->data, i);
    }
    fputs(bits ? "\n}};\n" : "\n};\n", f);
}

/* Float and double constants are written as their bit patterns (hex
 * integers), and constants of CONST_WORDS_MIN_BYTES or more of any type as
 * 64-bit words of their bytes, in a union with the view the code reads (cN.v): exact by
 * construction, and parsed by gcc, clang and nvcc two to three times faster
 * than decimal literals, which are most of a large model's source (a 32 MB
 * model is 8 M weights). Reading the .v member of a union whose .bits
 * member was initialized reinterprets the bytes (C99 TC3 6.5.2.3 footnote 82,
 * C11 footnote 95); the CUDA host code only copies the bytes (&cN). This is
 * the format of the expression naming a constant's elements in the C. */
const char *const_ref_fmt(const Tensor *t)
{
    return as_bits(t->dtype) || t->const_words ? "c%d.v" : "c%d";
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

/* A comment line describing what a call computes. */
static void emit_call_comment(FILE *f, const KCall *c, const char *indent)
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
        fprintf(f, "%s%s %s%s", is_in ? "const " : "", dtype_ctype(t->dtype), arr ? "" : "*", name);
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
    else if (!strcmp(key, "VERSION")) fputs(ONNX2C_VERSION, f);
    else if (!strcmp(key, "MODEL_SHA256")) fputs(c->o->model_sha256, f);
    else if (!strcmp(key, "FLAGS")) fputs(c->o->flags_text && *c->o->flags_text ? c_comment(c->o->flags_text) : "(none)", f);
    else if (!strcmp(key, "FLAGS_C")) fputs(c_string(c->o->flags_text ? c->o->flags_text : ""), f);
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

/* The inputs' and outputs' facts as array initializers, for a harness that
 * walks any model's inputs and outputs (--emit-test-main's, examples/demo):
 * static const char *const names[] = NAME_INPUT_NAMES; ... */
static void io_arrays(FILE *f, Graph *g, const char *N)
{
    int maxr = 1;
    for (int i = 0; i < g->ninputs + g->noutputs; i++) {
        const Tensor *t = i < g->ninputs ? g->inputs[i] : g->outputs[i - g->ninputs];
        if (t->rank > maxr) maxr = t->rank;
    }
    fprintf(f, "/* The same as array initializers, one entry an input (output), for a harness\n"
               " * over any model: static const char *const names[] = %s_INPUT_NAMES; ...\n"
               " * TYPES: the ONNX names; ONNX_TYPES: TensorProto.DataType codes; ELEM_BYTES:\n"
               " * bytes an element; SIZES: elements; DIMS: each padded with 0 to %s_IO_MAX_RANK.\n"
               " * A model without inputs (outputs) has one 0 entry. */\n#define %s_IO_MAX_RANK %d\n", N, N, N, maxr);
    for (int io = 0; io < 2; io++) {
        int n = io ? g->noutputs : g->ninputs;
        Tensor *const *ts = io ? g->outputs : g->inputs;
        const char *kind = io ? "OUTPUT" : "INPUT";
        static const char *const FIELD[6] = {"NAMES", "TYPES", "ONNX_TYPES", "ELEM_BYTES", "RANKS", "SIZES"};
        for (int fld = 0; fld < 7; fld++) {
            fprintf(f, "#define %s_%s_%s {", N, kind, fld < 6 ? FIELD[fld] : "DIMS");
            for (int i = 0; i < n; i++) {
                const Tensor *t = ts[i];
                if (i) fputs(", ", f);
                switch (fld) {
                case 0: fprintf(f, "\"%s\"", c_string(t->name)); break;
                case 1: fprintf(f, "\"%s\"", dtype_name(t->dtype)); break;
                case 2: fprintf(f, "%d", (int)t->dtype); break;
                case 3: fprintf(f, "%d", (int)dtype_size(t->dtype)); break;
                case 4: fprintf(f, "%d", t->rank); break;
                case 5: fprintf(f, "%lld", (long long)tensor_numel(t)); break;
                default:
                    fputc('{', f);
                    for (int d = 0; d < maxr; d++) fprintf(f, "%s%lld", d ? ", " : "", d < t->rank ? (long long)t->dims[d] : 0LL);
                    fputc('}', f);
                }
            }
            if (!n) fputs(fld == 6 ? "{0}" : "0", f);
            fputs("}\n", f);
        }
    }
    fputc('\n', f);
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
    io_arrays(f, g, N);
}

/* The stack a run takes on a Cortex-M4F (--target cortex-m): the entry
 * points' and run_impl's frames plus the largest step's, each kernel's
 * as tools/stack_table.py measured it (engine/stack_cortexm.def: the most
 * any call of it took over the examples and node tests, built by
 * arm-none-eabi-gcc -Os); a kernel the table lacks counts as its largest.
 * Fused element-wise kernels (o2c_ew_HASH, made per model) share a row. */
#define STACK_MARGIN 32
static const struct { const char *kernel; int bytes; } STACK_TABLE[] = {
#define STACK_BASE(n)
#define STACK(k, n) {#k, n},
#include "engine/stack_cortexm.def"
#undef STACK
#undef STACK_BASE
};
static const int STACK_TABLE_BASE = 0
#define STACK_BASE(n) + n
#define STACK(k, n)
#include "engine/stack_cortexm.def"
#undef STACK
#undef STACK_BASE
    ;

static void stack_macro(FILE *f, const EmitCtx *c)
{
    int most = 0, largest = 0, unknown = 0;
    const char *first_unknown = NULL;
    for (size_t i = 0; i < sizeof STACK_TABLE / sizeof STACK_TABLE[0]; i++)
        if (STACK_TABLE[i].bytes > largest) largest = STACK_TABLE[i].bytes;
    for (int i = 0; i < c->L->n; i++) {
        const KCall *k = &c->L->calls[i];
        if (!k->kernel || k->ctl) continue;   /* a control-flow marker: code of run_impl's, in STACK_BASE */
        const char *name = strncmp(k->kernel->name, "o2c_ew_", 7) ? k->kernel->name : "o2c_ew_";
        int b = -1;
        for (size_t j = 0; j < sizeof STACK_TABLE / sizeof STACK_TABLE[0] && b < 0; j++)
            if (!strcmp(STACK_TABLE[j].kernel, name)) b = STACK_TABLE[j].bytes;
        if (b < 0) {
            b = largest;
            if (!unknown++) first_unknown = name;
        }
        if (b > most) most = b;
    }
    fprintf(f, "/* Bytes of stack one run takes at most (the model's own functions; the C library's\n"
               " * expf, memcpy, ... apart): the deepest call chain as arm-none-eabi-gcc 12.2\n"
               " * -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -Os builds it\n"
               " * (tools/stack_table.py measured each kernel%s), plus %d bytes. Other\n"
               " * compilers, versions and flags differ: -fstack-usage tells. */\n"
               "#define %s_STACK_BYTES %d\n",
            unknown ? xfmt(";\n * %s%s, which it has not measured, counted as its largest", first_unknown,
                           unknown > 1 ? " and others" : "") : "", STACK_MARGIN, c->o->name,
            STACK_TABLE_BASE + most + STACK_MARGIN);
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
    } else if (!strcmp(key, "STACK_MACRO")) {
        if (c->o->target == TARGET_CORTEX_M && !c->cuda) stack_macro(f, c);
    } else if (!strcmp(key, "CONST_NOTE")) {
        fputs(c->cuda ? "uploaded to the device by the init"
              : c->o->target == TARGET_CORTEX_M ? "each array at its element type's alignment: no vector loads"
              : "each array 64-byte aligned", f);
    } else if (!strcmp(key, "ARENA_NOTE")) {
        fputs(c->cuda ? "device memory, allocated by the first run" : "its start must be 64-byte aligned", f);
    } else if (!strcmp(key, "IO_MACROS")) {
        io_macros(f, c->g, N);
    } else if (!strcmp(key, "ARG_API")) {   /* emit_c.c's emit_arg_check */
        if (!c->cuda)
            fprintf(f, "/* A run's arguments are wrong (nothing is computed): a NULL inputs or outputs\n"
                       " * array, a NULL output, an output whose bytes overlap an input's or another\n"
                       " * output's (outputs must not alias inputs: the kernels read inputs after\n"
                       " * writing outputs), or an arena that is NULL or not %s_ARENA_ALIGN-aligned. */\n"
                       "#define %s_ERR_ARGUMENT 5\n\n", N, N);
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

void emit_model(EmitCtx *c, const char *source_template, TemplateFill source_key, FILE *src, FILE *hdr)
{
    c->nconsts = emit_collect_constants(c->L, &c->consts, !c->o->element_constants && c->o->target != TARGET_CORTEX_M);
    emit_template(hdr, "header.h.in", header_key, c);
    emit_template(src, source_template, source_key, c);
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
static int emit_ctl_flag(FILE *f, const KCall *k, int depth, TensorText ptr, void *ctx, const char *fail_stmt,
                         const char *flag_read)
{
    int d = depth < 30 ? depth : 30;
    const char *flag = "";
    if (k->x[0]) {
        const char *p = ptr(k->x[0], 0, ctx);
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

void emit_schedule(FILE *f, const Lowering *L, TensorText ptr, void *ctx, const char *fail_stmt,
                   const char *flag_read, int cxx, CallText run, void *run_ctx, const ScheduleSteps *steps)
{
    int depth = 0;  /* control flow (ops/control.c): nesting of if and for */
    char ind[160];
    for (int i = 0; i < L->n; i++) {
        const KCall *k = &L->calls[i];
        if (k->ctl) {
            depth = emit_ctl_flag(f, k, depth, ptr, ctx, fail_stmt, flag_read);
            continue;
        }
        if (k->count <= 0) continue;
        snprintf(ind, sizeof ind, "%*s", 4 * (depth < 30 ? depth + 1 : 31), "");
        if (steps && !steps->keep_inline(k, run_ctx) && k->split > 1 && steps->split_step) {
            emit_call_comment(steps->f, k, "");
            steps->split_step(steps->f, k, "", run_ctx);
            emit_call_comment(f, k, ind);
            fprintf(f, "%so2c_step_%d(inputs, outputs, arena);\n", ind, i);
            continue;
        }
        if (steps && !steps->keep_inline(k, run_ctx)) {
            FILE *sf = steps->f;
            emit_call_comment(sf, k, "");
            fprintf(sf, "static O2C_STEP void o2c_step_%d(const void *const inputs[], void *const outputs[], "
                        "unsigned char *arena)\n{\n    (void)inputs;\n    (void)outputs;\n    (void)arena;\n    {\n", i);
            if (steps->before) steps->before(sf, k, "    ", run_ctx);
            emit_call_params(sf, k, ptr, ctx, "        ", cxx);
            run(sf, k, "    ", run_ctx);
            fputs("    }\n}\n\n", sf);
            emit_call_comment(f, k, ind);
            fprintf(f, "%so2c_step_%d(inputs, outputs, arena);\n", ind, i);
            continue;
        }
        emit_call_comment(f, k, ind);
        fprintf(f, "%s{\n", ind);
        if (steps && steps->before) steps->before(f, k, ind, run_ctx);
        emit_call_params(f, k, ptr, ctx, xfmt("%s    ", ind), cxx);
        run(f, k, ind, run_ctx);
        fprintf(f, "%s}\n", ind);
    }
}
