/* Looking ops up in an op table (the table itself is ops.c, made from
 * ops.def; the loader attaches it to the graph it loads, so the core and
 * the op files find ops through the graph and never name the table), and
 * the version rules of ops.def's last column. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

uint32_t str_hash(const char *s)
{
    uint32_t h = 2166136261u;   /* FNV-1a */
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

uint64_t fnv1a64(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

static uint32_t op_hash(const char *domain, const char *name)
{
    return str_hash(name) * 31u + str_hash(domain);
}

/* The index is made on the first lookup: open addressing, slot = table
 * position + 1 (0: empty). */
static void optable_index(OpTable *t)
{
    if (2 * t->n > OPTABLE_SLOTS) fail_plain("internal: the op table has more than %d ops", OPTABLE_SLOTS / 2);
    for (int i = 0; i < t->n; i++) {
        uint32_t h = op_hash(t->ops[i].domain, t->ops[i].name) % OPTABLE_SLOTS;
        while (t->slot[h]) h = (h + 1) % OPTABLE_SLOTS;
        t->slot[h] = i + 1;
    }
    t->indexed = 1;
}

const OpDef *optable_find(OpTable *t, const char *domain, const char *name)
{
    if (!strcmp(domain, "ai.onnx")) domain = "";
    if (!t->indexed) optable_index(t);
    for (uint32_t h = op_hash(domain, name) % OPTABLE_SLOTS; t->slot[h]; h = (h + 1) % OPTABLE_SLOTS) {
        const OpDef *op = &t->ops[t->slot[h] - 1];
        if (!strcmp(op->name, name) && !strcmp(op->domain, domain)) return op;
    }
    return NULL;
}

const OpDef *graph_op(const Graph *g, const char *domain, const char *name)
{
    while (g->parent) g = g->parent;
    if (!g->ops) fail_plain("internal: graph '%s' has no op table", g->name ? g->name : "");
    return optable_find(g->ops, domain, name);
}

const OpDef *node_op(const Node *n, const char *domain, const char *name)
{
    if (!n->op || !n->op->table) fail_plain("internal: node '%s' has no op", n->name);
    return optable_find(n->op->table, domain, name);
}

/* The op's schema version in effect at opset `opset` of its domain: the
 * largest of its listed versions (ops.def's last column) <= opset; 0 when
 * the op is newer than that opset (or lists none) -- it is then compiled as
 * the op onnx2c knows. *ok: onnx2c implements that version (not marked
 * "!"); *implemented: the implemented ones, "7, 13, 14". */
int op_version(const OpDef *op, int opset, int *ok, const char **implemented)
{
    const char *s = op->versions ? op->versions : "";
    char impl[256];
    size_t len = 0;
    int v = 0;
    *ok = 1;
    impl[0] = 0;
    while (*s) {
        while (*s == ' ') s++;
        if (!*s) break;
        int refused = *s == '!';
        if (refused) s++;
        char *end;
        long x = strtol(s, &end, 10);
        if (end == s) fail_plain("internal: ops.def lists versions '%s' for %s", op->versions, op->name);
        s = end;
        if (!refused && len < sizeof impl - 16) len += (size_t)snprintf(impl + len, sizeof impl - len, "%s%ld", len ? ", " : "", x);
        if (x <= opset) { v = (int)x; *ok = !refused; }
    }
    if (implemented) *implemented = xstrdup(impl);
    return v;
}
