/* --weights-bin FILE.bin (C target): the constants as one binary file that
 * the build links without parsing text, beside today's C arrays.
 *
 * Every constant but the string tensors goes into FILE.bin, in the order of
 * the C arrays (c1, c2, ...), each at a 64-byte aligned offset (the C arrays'
 * O2C_ALIGN64), zero bytes between, an empty one as one zero element (as its
 * C array). The bytes are the values as the target holds them: little-endian,
 * IEEE floats. The .c gets them with a file-scope GNU assembler stub:
 *
 *   __asm__(".pushsection .rodata.NAME_weights,\"a\",%progbits\n"
 *           ".balign 64\n" "NAME_weights:\n" ".incbin \"" NAME_WEIGHTS_BIN "\"\n"
 *           "NAME_w1 = NAME_weights + 0\n" ... ".popsection\n");
 *   extern const float NAME_w1[N] O2C_WB_HIDDEN;
 *
 * so each constant is a const object of its real type and size (hidden
 * visibility: it does not leave a shared library). GCC and Clang accept
 * file-scope __asm__ under -std=c99 -pedantic; the assembler reads FILE.bin
 * by its path from the .c's folder (NAME_WEIGHTS_BIN; gcc -I<the .c's
 * folder> -c model.c from any build folder: GCC and Clang pass the include
 * folders to the assembler, which searches them for .incbin; or
 * -DNAME_WEIGHTS_BIN='"/path/model.bin"'). ELF targets (Linux, Cortex-M
 * firmware with arm-none-eabi-gcc); elsewhere the .c stops with #error. With
 * --weights-section S the blob goes in section S instead. */
#define _XOPEN_SOURCE 700   /* realpath */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* Whether constant t goes into the .bin (the string tensors stay C arrays:
 * arrays of pointers). */
int weights_bin_holds(const Tensor *t)
{
    return t->dtype != DT_STRING;
}

/* The .bin's path from the .c's folder, as the .c records it (the
 * assembler's .incbin searches the include folders: -I<the .c's folder>
 * finds it from any build folder): the file name where both are in one
 * folder, else a path of ../ steps and names; the path as given where the
 * folders cannot be resolved. */
static const char *bin_path_from_source(const Options *o)
{
    const char *bs = strrchr(o->weights_bin, '/'), *cs = strrchr(o->output, '/');
    char *bdir = bs ? xfmt("%.*s", (int)(bs - o->weights_bin), o->weights_bin) : xstrdup(".");
    char *cdir = cs ? xfmt("%.*s", (int)(cs - o->output), o->output) : xstrdup(".");
    char b[PATH_MAX], c[PATH_MAX];
    if (!*bdir) bdir = xstrdup("/");
    if (!*cdir) cdir = xstrdup("/");
    if (!realpath(bdir, b) || !realpath(cdir, c)) return o->weights_bin;
    const char *name = bs ? bs + 1 : o->weights_bin;
    if (!strcmp(b, c)) return name;
    /* from c up to the folders' common prefix (at a '/'), then down to b */
    size_t lb = strlen(b), lc = strlen(c), k = 0;
    while (k < lb && k < lc && b[k] == c[k]) k++;
    while (k > 0 && !((k == lb || b[k] == '/') && (k == lc || c[k] == '/'))) k--;
    const char *up = "";
    for (const char *p = c + k; *p; p++)
        if (*p == '/') up = xfmt("%s../", up);
    const char *down = b + k;
    while (*down == '/') down++;
    return xfmt("%s%s%s%s", up, down, *down ? "/" : "", name);
}

/* Its bytes in the blob: its C array's (at least one element). */
static size_t blob_bytes(const Tensor *t)
{
    int64_t ne = tensor_numel(t);
    return (size_t)(ne ? ne : 1) * dtype_size(t->dtype);
}

static void put_zeros(FILE *bin, size_t n)
{
    static const unsigned char z[64];
    while (n) {
        size_t k = n < sizeof z ? n : sizeof z;
        fwrite(z, 1, k, bin);
        n -= k;
    }
}

/* Writes the blob into `bin` and the stub and declarations into the .c. */
void emit_weights_bin(FILE *f, const EmitCtx *c)
{
    const Options *o = c->o;
    const char *nm = o->name;
    FILE *bin = o->weights_bin_file;
    size_t *off = xalloc(sizeof(size_t) * (size_t)(c->nconsts + 1)), pos = 0;
    int nbin = 0;
    for (int i = 0; i < c->nconsts; i++) {
        Tensor *t = c->consts[i];
        if (!weights_bin_holds(t)) continue;
        size_t pad = (64 - pos % 64) % 64;
        put_zeros(bin, pad);
        pos += pad;
        off[i] = pos;
        size_t n = blob_bytes(t), have = (size_t)tensor_numel(t) * dtype_size(t->dtype);
        if (have && fwrite(t->data, 1, have, bin) != have) break;   /* main.c reports the write error */
        put_zeros(bin, n - have);
        pos += n;
        nbin++;
    }
    /* the string tensors, if any: C arrays as without the option */
    for (int i = 0; i < c->nconsts; i++)
        if (!weights_bin_holds(c->consts[i]))
            emit_const_array(f, c->consts[i], "static const", o->weights_section != NULL, o->target == TARGET_CORTEX_M);
    if (!nbin) return;
    const char *rel = bin_path_from_source(o);
    fprintf(f, "\n/* ---- weights and other constants: %zu bytes in %s (onnx2c --weights-bin), linked by the\n"
               " * assembler's .incbin below, which finds it by its path from this file's folder: compile\n"
               " * with -I<this file's folder> (GCC and Clang pass it to the assembler: from any build\n"
               " * folder), or define %s_WEIGHTS_BIN as the file's path in quotes\n"
               " * (-D'%s_WEIGHTS_BIN=\"/path/to/file.bin\"'); rebuild when it changes. GCC or Clang, ELF\n"
               " * targets (Linux, Cortex-M and other firmware). ---- */\n",
            pos, c_comment(rel), nm, nm);
    fprintf(f, "#if !defined(__GNUC__) || !defined(__ELF__)\n"
               "#error \"onnx2c --weights-bin: the weights are linked by a GNU assembler .incbin (GCC or Clang, "
               "an ELF target); for this compiler generate the C arrays (without --weights-bin)\"\n"
               "#endif\n"
               "#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__\n"
               "#error \"onnx2c --weights-bin: the weights file holds little-endian values; for a big-endian "
               "target generate the C arrays (without --weights-bin)\"\n"
               "#endif\n"
               "#ifndef %s_WEIGHTS_BIN\n#define %s_WEIGHTS_BIN \"%s\"\n#endif\n"
               "#define O2C_WB_HIDDEN __attribute__((visibility(\"hidden\")))\n",
            nm, nm, c_string(rel));
    if (o->weights_section)
        fprintf(f, "__asm__(\".pushsection %s,\\\"a\\\",%%progbits\\n\"\n", o->weights_section);
    else
        fprintf(f, "__asm__(\".pushsection .rodata.%s_weights,\\\"a\\\",%%progbits\\n\"\n", nm);
    fprintf(f, "        \".balign 64\\n\"\n"
               "        \".globl %s_weights\\n\"\n"
               "        \".hidden %s_weights\\n\"\n"
               "        \".type %s_weights, %%object\\n\"\n"
               "        \".size %s_weights, %zu\\n\"\n"
               "        \"%s_weights:\\n\"\n"
               "        \".incbin \\\"\" %s_WEIGHTS_BIN \"\\\", 0, %zu\\n\"\n"
               "        \".popsection\\n\");\n"
               "/* each constant: a symbol at its offset (one statement each: C99 strings stay short) */\n",
            nm, nm, nm, nm, pos, nm, nm, pos);
    for (int i = 0; i < c->nconsts; i++) {
        Tensor *t = c->consts[i];
        if (!weights_bin_holds(t)) continue;
        fprintf(f, "__asm__(\".globl %s_w%d\\n.hidden %s_w%d\\n.type %s_w%d, %%object\\n.size %s_w%d, %zu\\n"
                   "%s_w%d = %s_weights + %zu\\n\");\n",
                nm, t->const_id, nm, t->const_id, nm, t->const_id, nm, t->const_id, blob_bytes(t), nm, t->const_id, nm,
                off[i]);
    }
    for (int i = 0; i < c->nconsts; i++) {
        Tensor *t = c->consts[i];
        if (!weights_bin_holds(t)) continue;
        int64_t ne = tensor_numel(t);
        fprintf(f, "/* %s: %s[%s] */\nextern const %s %s_w%d[%lld] O2C_WB_HIDDEN;\n", c_comment(t->name),
                dtype_name(t->dtype), tensor_shape_str(t), dtype_ctype(t->dtype), nm, t->const_id,
                (long long)(ne ? ne : 1));
    }
}
