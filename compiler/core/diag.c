/* Diagnostics and the compiler's memory pool. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

const char *diag_file = "";
const struct Node *diag_node = NULL;
int verbose = 0;
jmp_buf *diag_jmp = NULL;
char diag_msg[2048];

/* Every allocation is a block in one list, freed by pool_release(). */
typedef struct Block { struct Block *next; max_align_t data[]; } Block;
static Block *pool_head = NULL;

void *xalloc(size_t n)
{
    Block *b = calloc(1, sizeof(Block) + (n ? n : 1));
    if (!b) fail_plain("out of memory (asked for %zu bytes)", n);
    b->next = pool_head;
    pool_head = b;
    return b->data;
}

void pool_release(void)
{
    graph_index_reset();
    files_unmap_all();   /* files.c: external data mapped into tensors */
    while (pool_head) {
        Block *n = pool_head->next;
        free(pool_head);
        pool_head = n;
    }
}

void *pool_mark(void) { return pool_head; }

void pool_release_to(void *mark)
{
    while (pool_head && pool_head != (Block *)mark) {
        Block *n = pool_head->next;
        free(pool_head);
        pool_head = n;
    }
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s);
    char *d = xalloc(n + 1);
    memcpy(d, s, n);
    return d;
}

char *xfmt(const char *fmt, ...)
{
    if (!fmt) return xstrdup("");
    va_list ap;
    va_start(ap, fmt);
    char probe[1];
    int n = vsnprintf(probe, sizeof probe, fmt, ap);
    va_end(ap);
    char *s = xalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static void vfail(int with_node, const char *fmt, va_list ap)
{
    size_t len = 0;
    if (diag_file && *diag_file) len += (size_t)snprintf(diag_msg, sizeof diag_msg, "%s: ", diag_file);
    if (with_node && diag_node && len < sizeof diag_msg) {
        const char *nm = diag_node->name && *diag_node->name ? diag_node->name : "(unnamed)";
        const char *dom = diag_node->domain && *diag_node->domain ? diag_node->domain : NULL;
        len += (size_t)snprintf(diag_msg + len, sizeof diag_msg - len, "node '%s' (%s%s%s): ", nm,
                                dom ? dom : "", dom ? "::" : "", diag_node->op_type);
    }
    if (len < sizeof diag_msg) vsnprintf(diag_msg + len, sizeof diag_msg - len, fmt, ap);
    if (diag_jmp) longjmp(*diag_jmp, 1);
    fprintf(stderr, "onnx2c: %s\n", diag_msg);
    exit(1);
}

void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(1, fmt, ap);
    va_end(ap);
    abort(); /* not reached */
}

void fail_plain(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(0, fmt, ap);
    va_end(ap);
    abort(); /* not reached */
}

void note(const char *fmt, ...)
{
    if (!verbose) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("onnx2c: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
