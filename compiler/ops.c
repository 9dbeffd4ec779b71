/* The op table: every op of ops.def as an OpDef (name, domain, arity,
 * attribute schema, shape rule, lowering, decomposition, versions). The
 * loader attaches it to the graph it loads; stages look ops up with
 * op_find, the layers below through the graph (core/optable.c). */
#include <string.h>

#include "ir.h"

/* 3. the ops: declarations of their functions, then the table */
#define UNARY(Name, TS, schema, expr, ...) void infer_unary_##TS(Node *n);
#define BINARY(Name, TS, expr, ...) void infer_binary_##TS(Node *n);
#define COMPARE(Name, TS, expr, ...) void infer_compare_##TS(Node *n);
#define PREDICATE(Name, TS, schema, expr, ...) void infer_predicate_##TS(Node *n);
#define OP(Name, dom, a, b, c, d, schema, inf, low, ...) void inf(Node *n); void low(Node *n, Lowering *L);
#define FIRST(a, ...) a
#define FUSED(Name, a, b, c, d, schema, inf, low, ...) \
    void inf(Node *n); void low(Node *n, Lowering *L); void FIRST(__VA_ARGS__, 0)(const Node *n, Decomp *dc);
#include "ops.def"
void lower_unary(Node *n, Lowering *L);
void lower_binary(Node *n, Lowering *L);
void lower_predicate(Node *n, Lowering *L);

static OpTable TABLE;   /* below: each op names the table it is in (OpDef.table) */

static const OpDef OPS[] = {
/* Every field by name: an op line may end with further fields of its own
 * after its versions (".traits = OPT_VIEW", see OpDef in ir.h). */
/* the elementwise lines: one output; UNARY, BINARY and COMPARE nodes give
 * the same result on any layout (ew_layout) */
#define EW_OP(Name, nin, schema, inf, low, lay, step, ...) \
    {.name = #Name, .domain = "", .min_in = nin, .max_in = nin, .min_out = 1, .max_out = 1, .attrs = schema, \
     .infer = inf, .lower = low, .layout = lay, .ew_step = step, .table = &TABLE, .versions = __VA_ARGS__},
#define UNARY(Name, TS, schema, expr, ...) \
    EW_OP(Name, 1, schema, infer_unary_##TS, lower_unary, ew_layout, ew_step_unary, __VA_ARGS__)
#define BINARY(Name, TS, expr, ...) \
    EW_OP(Name, 2, "", infer_binary_##TS, lower_binary, ew_layout, ew_step_binary, __VA_ARGS__)
#define COMPARE(Name, TS, expr, ...) \
    EW_OP(Name, 2, "", infer_compare_##TS, lower_binary, ew_layout, ew_step_binary, __VA_ARGS__)
#define PREDICATE(Name, TS, schema, expr, ...) \
    EW_OP(Name, 1, schema, infer_predicate_##TS, lower_predicate, NULL, NULL, __VA_ARGS__)
#define OP(Name, dom, a, b, c, d, schema, inf, low, ...) \
    {.name = #Name, .domain = dom, .min_in = a, .max_in = b, .min_out = c, .max_out = d, .attrs = schema, \
     .infer = inf, .lower = low, .table = &TABLE, .versions = __VA_ARGS__},
#define FUSED(Name, a, b, c, d, schema, inf, low, ...) \
    {.name = #Name, .domain = "onnx2c", .min_in = a, .max_in = b, .min_out = c, .max_out = d, .attrs = schema, \
     .infer = inf, .lower = low, .table = &TABLE, .decompose = __VA_ARGS__},
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
