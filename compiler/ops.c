/* The op table: every op of ops.def as an OpDef (name, domain, arity,
 * attribute schema, shape rule, lowering, decomposition, versions). The
 * loader attaches it to the graph it loads; stages look ops up with
 * op_find, the layers below through the graph (core/optable.c). */
#include <string.h>

#include "ir.h"

/* 3. the ops: declarations of their functions, then the table */
#define UNARY(Name, TS, schema, expr, vers) void infer_unary_##TS(Node *n);
#define KUNARY(Name, TS, expr)
#define BINARY(Name, TS, expr, vers) void infer_binary_##TS(Node *n);
#define KBINARY(Name, TS, expr)
#define COMPARE(Name, TS, expr, vers) void infer_compare_##TS(Node *n);
#define PREDICATE(Name, TS, schema, expr, vers) void infer_predicate_##TS(Node *n);
#define OP(Name, dom, a, b, c, d, schema, inf, low, vers) void inf(Node *n); void low(Node *n, Lowering *L);
#define FUSED(Name, a, b, c, d, schema, inf, low, dec) \
    void inf(Node *n); void low(Node *n, Lowering *L); void dec(const Node *n, Decomp *dc);
#include "ops.def"
#undef UNARY
#undef KUNARY
#undef BINARY
#undef KBINARY
#undef COMPARE
#undef PREDICATE
#undef OP
#undef FUSED
void lower_unary(Node *n, Lowering *L);
void lower_binary(Node *n, Lowering *L);
void lower_predicate(Node *n, Lowering *L);

static const OpDef OPS[] = {
#define UNARY(Name, TS, schema, expr, vers) {#Name, "", 1, 1, 1, 1, schema, infer_unary_##TS, lower_unary, NULL, vers},
#define KUNARY(Name, TS, expr)
#define KBINARY(Name, TS, expr)
#define BINARY(Name, TS, expr, vers) {#Name, "", 2, 2, 1, 1, "", infer_binary_##TS, lower_binary, NULL, vers},
#define COMPARE(Name, TS, expr, vers) {#Name, "", 2, 2, 1, 1, "", infer_compare_##TS, lower_binary, NULL, vers},
#define PREDICATE(Name, TS, schema, expr, vers) {#Name, "", 1, 1, 1, 1, schema, infer_predicate_##TS, lower_predicate, NULL, vers},
#define OP(Name, dom, a, b, c, d, schema, inf, low, vers) {#Name, dom, a, b, c, d, schema, inf, low, NULL, vers},
#define FUSED(Name, a, b, c, d, schema, inf, low, dec) {#Name, "onnx2c", a, b, c, d, schema, inf, low, dec, ""},
#include "ops.def"
};

static OpTable TABLE = {OPS, (int)(sizeof OPS / sizeof OPS[0]), 0, {0}};

OpTable *op_table(void) { return &TABLE; }

const OpDef *op_find(const char *domain, const char *name) { return optable_find(&TABLE, domain, name); }

/* for the README and tests: the list of op names (the ONNX ops; the
 * onnx2c-domain ops that passes make are not listed) */
int op_count(void) { return (int)(sizeof OPS / sizeof OPS[0]); }
const char *op_name(int i) { return OPS[i].name; }
const OpDef *op_at(int i) { return &OPS[i]; }
