/* onnx2c internal header: the map of the compiler.
 *
 * Pipeline (one stage per file, in this order):
 *   main.c     CLI, options, error handling, atomic output
 *   load.c     ONNX protobuf (protobuf-c) -> IR
 *   infer.c    topological order, shape/type inference from the op table,
 *              evaluation of the small values shapes depend on (eval.c)
 *   passes.c   the optimizer: runs compiler/passes/NAME.c in the order of
 *              passes/passes.def (fold, dce, cleanups, fusions), editing the
 *              graph through graph.c
 *   plan.c     tensor storage: constants, I/O, aliases, arena offsets
 *   lower.c    every node -> kernel calls (KCall) through the op table
 *   emit_c.c   C99 source + header
 *   emit_cuda.c CUDA source + header
 * ops/FAMILY.c hold the per-op glue (shape rule, lowering); ops.def is the
 * op table; runtime/c/FAMILY.h hold the kernels (compiled into the compiler for
 * folding and copied into every generated file). */
#ifndef ONNX2C_IR_H
#define ONNX2C_IR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>

#include "../runtime/c/o2c_rt.h"

#define MAX_RANK O2C_MAX_RANK

/* ---- diagnostics and memory (diag.c) ---------------------------------- */

/* All compiler memory comes from one pool that is released at once; a
 * failure anywhere longjmps back to the handler with the message set. */
void *xalloc(size_t n);                 /* zeroed, never NULL */
char *xstrdup(const char *s);
#ifdef __GNUC__
__attribute__((format(printf, 1, 2)))
#endif
char *xfmt(const char *fmt, ...);        /* formatted, pool-allocated */
void pool_release(void);
/* a point in the pool, and every block allocated after it freed (the
 * calibration stage bounds its memory per input set so) */
void *pool_mark(void);
void pool_release_to(void *mark);

/* Context for messages: the model file and the node being processed. */
extern const char *diag_file;
extern const struct Node *diag_node;
extern int verbose;

/* Prints "onnx2c: FILE: node 'N' (Op): MESSAGE" into the error buffer and
 * unwinds to diag_catch. Never returns. */
#ifdef __GNUC__
__attribute__((noreturn, format(printf, 1, 2)))
#endif
void fail(const char *fmt, ...);
/* fail() without the node context. */
#ifdef __GNUC__
__attribute__((noreturn, format(printf, 1, 2)))
#endif
void fail_plain(const char *fmt, ...);
#ifdef __GNUC__
__attribute__((format(printf, 1, 2)))
#endif
void note(const char *fmt, ...);        /* -v messages on stderr */

extern jmp_buf *diag_jmp;               /* set by the caller of a stage */
extern char diag_msg[2048];             /* the message of the last fail() */

/* ---- files (files.c) ---------------------------------------------------- */

/* sha256.c: SHA-256 of n bytes as 64 hex digits and a NUL */
void sha256_hex(const unsigned char *data, size_t n, char hex[65]);
int sha256_file(const char *path, char hex[65]);   /* 0: unreadable */

/* A whole file in pool memory; `what` names it in messages. */
uint8_t *file_read(const char *path, size_t *len, const char *what);
/* A file mapped (private, writable) until pool_release: external data of
 * large models; read whole where it cannot be mapped. */
uint8_t *file_map(const char *path, size_t *len, const char *what);
/* Bytes of a constant copied into a new form: a mapped file's pages are
 * handed back (a hint; nothing for other memory). */
void file_pages_done(const void *p, size_t n);
void files_unmap_all(void);   /* pool_release: the mappings */

/* ---- text (text.c): what the compiler writes into generated files ------- */

char *c_ident(const char *s);                        /* valid C identifier */
const char *c_comment(const char *s);                /* model text safe inside a C comment */
const char *c_string(const char *s);                 /* model text escaped for a C string literal */
const char *source_name(const char *path);           /* a path's file name (no folders): generated banners */

/* ---- data types ------------------------------------------------------- */

/* Values are ONNX TensorProto.DataType. */
typedef enum {
    DT_UNDEFINED = 0, DT_FLOAT = 1, DT_UINT8 = 2, DT_INT8 = 3, DT_UINT16 = 4,
    DT_INT16 = 5, DT_INT32 = 6, DT_INT64 = 7, DT_STRING = 8, DT_BOOL = 9,
    DT_FLOAT16 = 10, DT_DOUBLE = 11, DT_UINT32 = 12, DT_UINT64 = 13,
    DT_COMPLEX64 = 14, DT_COMPLEX128 = 15, DT_BFLOAT16 = 16,
    /* narrow types (dtype_is_narrow): one element a byte, its bit pattern in the low bits */
    DT_FLOAT8E4M3FN = 17, DT_FLOAT8E4M3FNUZ = 18, DT_FLOAT8E5M2 = 19, DT_FLOAT8E5M2FNUZ = 20,
    DT_UINT4 = 21, DT_INT4 = 22, DT_FLOAT4E2M1 = 23, DT_FLOAT8E8M0 = 24, DT_UINT2 = 25, DT_INT2 = 26
} DType;

const char *dtype_name(int dt);          /* "float32", ... */
const char *dtype_ctype(int dt);         /* "float", "int64_t", ... */
const char *dtype_suffix(int dt);        /* "f32", "i64", ... (kernel names) */
size_t dtype_size(int dt);               /* 0 for unsupported */
int dtype_supported(int dt);             /* a type the kernels handle */
int dtype_is_float(int dt);
int dtype_is_int(int dt);                /* signed or unsigned integer */
int dtype_is_half(int dt);               /* float16 or bfloat16 (stored as 16-bit patterns) */
float half_to_float(int dt, uint16_t h); /* dtype_conv.c: the runtime's conversions */
uint16_t float_to_half(int dt, float f);
/* float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0), float4e2m1, int4/uint4,
 * int2/uint2: bit patterns, one element a byte (runtime/c/types.h); only
 * conversions and byte moves take them (infer.c) */
int dtype_is_narrow(int dt);
float narrow_to_float(int dt, uint8_t b);   /* dtype_conv.c: exact (int4: -8..7) */
uint8_t float_to_narrow(int dt, float f);   /* dtype_conv.c: as Cast with its defaults */
/* Reads element i of a buffer of type dt as double / int64. */
double elem_f64(int dt, const void *p, int64_t i);
int64_t elem_i64(int dt, const void *p, int64_t i);
void elem_set(int dt, void *p, int64_t i, double v);   /* element i = v, converted */

/* ---- graph ------------------------------------------------------------ */

typedef enum {
    ST_NONE = 0,     /* not yet placed */
    ST_CONST,        /* static const array (weights, folded values) */
    ST_INPUT,        /* inputs[io] */
    ST_OUTPUT,       /* outputs[io] */
    ST_ARENA,        /* arena + offset */
    ST_ALIAS         /* same bytes as alias_of (Reshape & co.) */
} Storage;

typedef struct Tensor {
    char *name;
    int dtype;               /* DT_* (DT_UNDEFINED until inferred) */
    int rank;                /* -1: unknown */
    int64_t dims[MAX_RANK];
    char *sym[MAX_RANK];     /* symbolic dimension names from the model */
    void *data;              /* constant value, or NULL */
    int is_input, is_output; /* graph input (not initializer) / graph output */
    int input_index, output_index;
    struct Node *producer;
    int nuses;               /* readers: node inputs and graph outputs */
    /* planning */
    Storage storage;
    struct Tensor *alias_of;
    int64_t offset;          /* arena offset (ST_ARENA) */
    int const_id;            /* index among emitted constants (ST_CONST) */
    int const_words;         /* emitted as 64-bit words of its bytes (emit_common.c: emit_const_array) */
    int first, last;         /* live range in kernel-call positions */
    int64_t alias_offset;    /* ST_ALIAS: byte offset into alias_of (a slice view) */
    int id;                  /* unique among all tensors of the run (tensor_new_id) */
    int temp;                /* a scratch tensor made by a lowering */
    int mark;                /* scratch for graph algorithms */
    struct Node **readers;   /* nodes reading it (each once, graph order): graph_readers() */
    int nreaders;
    int layout;              /* LAYOUT_*: its bytes in the arena (layout.c, C target only) */
    int bound;               /* a graph input bound by --bind: data holds the value it must have */
    struct Tensor *shadow_of; /* a float32 stand-in (infer.c): the 16-bit tensor it stands for */
    int optional;            /* a graph input of optional tensor type: NULL means empty (ops/control.c) */
    /* A size known only at run time (NonZero, Compress, Unique, TopK with a
     * run-time K; the op's output is a graph output nobody else reads):
     * dims[dyn_axis] is the upper bound the caller's buffer holds, the
     * elements are written densely for the run's size, and that size is
     * the int64 scalar dyn_count, which lives in the arena to the end of the
     * run (keep) for NAME_output_dims (emit_common.c). */
    int dyn_axis;
    struct Tensor *dyn_count;
    int keep;                /* an arena tensor live to the end of the run */
    struct Tensor *share;    /* plan.c: written in place over this tensor's bytes (KCall.inplace) */
    /* sequences and optionals (ops/sequence.c): resolved at compile time */
    int vkind;               /* declared kind of a graph input/output: VK_* (load.c) */
    struct SeqVal *seq;      /* a sequence (a list of tensors) or an absent optional: no bytes of its own */
    /* an 8-bit tensor standing for a float one (a QuantizeLinear's output:
     * passes/quantize.c): real = qscale * (q - qzero), qof the float tensor's
     * name; qscale 0 otherwise (--debug-tensors reports it so) */
    double qscale;
    int32_t qzero;
    const char *qof;
} Tensor;

/* Value kinds beside tensors (ops/sequence.c). A sequence is resolved at
 * compile time into a list of element tensors (SeqVal); an optional holding
 * a tensor is that tensor, an absent one a SeqVal with absent set. */
enum { VK_TENSOR = 0, VK_SEQ, VK_OPT_SEQ, VK_OPT_TENSOR };
typedef struct SeqVal {
    int absent;              /* an optional holding nothing */
    int is_seq;              /* a sequence (else: an absent optional tensor) */
    int dtype;               /* element type (kept by an empty sequence) */
    int n;                   /* length */
    struct Tensor **elem;
} SeqVal;

/* How an arena tensor's elements lie: the ONNX order (NCHW), or channels
 * innermost (N x spatial x C) inside chains of convolutions whose kernels
 * run faster that way (layout.c). Only the C target's lowering sets it. */
enum { LAYOUT_NCHW = 0, LAYOUT_NHWC = 1 };

typedef enum {
    AT_UNDEFINED = 0, AT_FLOAT = 1, AT_INT = 2, AT_STRING = 3, AT_TENSOR = 4,
    AT_GRAPH = 5, AT_FLOATS = 6, AT_INTS = 7, AT_STRINGS = 8, AT_TENSORS = 9,
    AT_GRAPHS = 10, AT_SPARSE_TENSOR = 11, AT_SPARSE_TENSORS = 12,
    AT_TYPE_PROTO = 13, AT_TYPE_PROTOS = 14
} AttrType;

typedef struct Attr {
    char *name;
    int type;
    int64_t i;
    double f;
    char *s;
    int64_t *ints;
    double *floats;
    int n;                   /* length of ints / floats / strings */
    char **strings;
    Tensor *t;               /* AT_TENSOR value (data set) */
    struct Graph *g;         /* AT_GRAPH: the subgraph (If, Loop, Scan bodies; ops/control.c) */
} Attr;

struct OpDef;

typedef struct Node {
    char *name;
    char *op_type;
    char *domain;            /* "" for the default domain */
    Tensor **in;             /* NULL entries for omitted optional inputs */
    int nin;
    Tensor **out;
    int nout;
    Attr *attrs;
    int nattrs;
    const struct OpDef *op;  /* from the op table */
    int opset;               /* opset of the node's domain */
    int step;                /* position in the schedule */
    int folded;              /* evaluated at compile time */
    const char **origins;    /* the original ONNX nodes this node covers (provenance) */
    int norigins;
    const char *fused;       /* what a pass fused into it ("Conv+BatchNormalization+Relu"), or NULL */
    /* DT_FLOAT16/DT_BFLOAT16 (or a float8 for IsNaN/IsInf): the node computes
     * 16-bit data in float32. Inference types it so (engine/inference.c);
     * the promote pass (passes/promote.c) gives it float32 inputs and outputs
     * between explicit Casts; its lowering may round as the 16-bit type. */
    int promoted;
    uint64_t promoted_in;    /* bit j: input j is 16-bit data (read in float32) */
    int dyn_size;            /* an output's size depends on values known at run time (ops/common.c need_const_or_dyn) */
} Node;

typedef struct Graph {
    char *name;
    Tensor **tensors; int ntensors, cap_tensors;
    Node **nodes; int nnodes, cap_nodes;
    Tensor **inputs; int ninputs;      /* graph inputs that are not initializers */
    Tensor **outputs; int noutputs;
    int opset;                         /* default-domain opset */
    struct { char *domain; int version; } dom_opsets[8];   /* the model's other domains (ai.onnx.ml, com.microsoft, ...) */
    int ndom_opsets;
    int64_t ir_version;
    char *producer;
    const char *model_dir;             /* for external data */
    int uses_stale;                    /* readers/nuses must be recounted (graph.c) */
    /* a subgraph (an If branch, a Loop or Scan body; ops/control.c): the
     * names it reads from enclosing scopes are its captures, local tensors
     * bound to inputs capture_in[k] of the node that owns it (load.c
     * appends them to that node's inputs, so passes see the dependency) */
    struct Graph *parent;
    int tiled;                         /* compiled for the C target's tiled kernels (the driver sets it): the layout pass may keep tensors channels innermost */
    struct OpTable *ops;               /* the model's op table (load.c): graph_op looks ops up in it */
    int64_t peak_model, peak_scheduled; /* schedule.c: estimated live-memory peaks of the model's order and the chosen one */
    Tensor **captures; int *capture_in; int ncaptures;
    struct Graph **unrolled; int nunrolled;   /* a Loop body unrolled: one copy per iteration */
    int inferred;                      /* a body inferred for its owner (an If's branch not taken is not; nor an unrolled body) */
    /* the model's own bytes (its file and external data: load.c) and the
     * bytes of constants folding has added so far (fold_allowed); the
     * model's graph holds them for its bodies too */
    int64_t model_bytes, folded_bytes;
    uint64_t model_hash;               /* FNV-1a 64 of the model file's bytes (load.c; the calibration cache's key) */
    const char *calib_report;          /* calibrate.c: the int8 calibration's table, for --report */
    /* calibrate.c with --fp16: the nodes (names and origins) whose constants
     * stay float32 (--keep-float, fallback); lower_half_constants reads it */
    const char **fp32_nodes; int nfp32_nodes;
    /* graph inputs/outputs that are sequences or optionals (ops/sequence.c):
     * which caller slots each one took when flattened */
    struct SeqSlots { const char *name; int is_out, index, kind, first, count; } *seqio; int nseqio;
} Graph;

Tensor *graph_tensor(Graph *g, const char *name);       /* find or create */
Tensor *graph_find(Graph *g, const char *name);         /* find or NULL */
void graph_index_reset(void);                           /* forget the name index (pool_release) */
Node *graph_add_node(Graph *g);
int tensor_new_id(void);                                /* a fresh unique tensor id */
/* the ids given so far, and back to that point (calibrate.c: what its runs
 * made is freed, and the names made after do not depend on them) */
int tensor_id_now(void);
void tensor_id_rewind(int id);
int64_t tensor_numel(const Tensor *t);
size_t tensor_bytes(const Tensor *t);
const char *tensor_shape_str(const Tensor *t);          /* "1x3x224x224" */
/* The largest tensor (and arena) in bytes: 2^47, half of a 48-bit virtual
 * address space; tensor_set_shape refuses larger shapes, so element counts
 * and byte sizes computed from a tensor's dims never overflow int64. */
#define TENSOR_MAX_BYTES_LOG2 47
#define TENSOR_MAX_BYTES (INT64_C(1) << TENSOR_MAX_BYTES_LOG2)
void tensor_set_shape(Tensor *t, int rank, const int64_t *dims);
/* Allocates zeroed constant data for a tensor whose type and shape are set. */
void *tensor_alloc_data(Tensor *t);

/* ---- graph editing (graph.c): the API the passes use ----------------- */

/* Every edit keeps g->nodes in a valid order only if the caller inserts a
 * node before its first reader; graph_remove_node unlinks a node (its
 * outputs lose their producer). Readers lists and nuses are recounted
 * lazily after any edit made through this API (or after graph_touch). */
void graph_touch(Graph *g);                              /* the caller edited n->in[] directly */
void graph_recount_uses(Graph *g);                       /* readers and nuses now */
int graph_readers(Graph *g, Tensor *t, Node ***readers); /* nodes reading t */
int tensor_nuses(Graph *g, Tensor *t);                   /* input slots reading t, + graph outputs */
int tensor_single_use(Graph *g, Tensor *t);              /* read by exactly one node input, not an output */
int graph_is_output(const Graph *g, const Tensor *t);    /* an output of g (the model's, or a body's) */
Tensor *graph_new_tensor(Graph *g, const char *hint);    /* fresh, uniquely named intermediate */
Tensor *graph_new_const(Graph *g, const char *hint, int dtype, int rank, const int64_t *dims); /* zeroed data */
void node_set_input(Graph *g, Node *n, int j, Tensor *t);  /* j may be n->nin (appends) */
/* Every node input reading old reads new instead (graph outputs are not
 * changed: a pass must not remove the producer of a graph output). */
int graph_replace_uses(Graph *g, Tensor *old_t, Tensor *new_t);
void graph_remove_node(Graph *g, Node *n);
/* n's output 0 equals its input j: readers read the input, n is removed;
 * a graph output is taken over by the input's producer. 0: n had to stay. */
int graph_bypass_node(Graph *g, Node *n, int j);
/* A new node (op from the table) placed before `before` (NULL: at the end);
 * its inputs and outputs are copied; origins empty; not yet inferred. */
Node *graph_insert_node(Graph *g, Node *before, const char *op_type, const char *domain,
                        Tensor *const *in, int nin, Tensor *const *out, int nout);
void node_set_output(Node *n, int j, Tensor *t);          /* sets t's producer */
void node_add_origins(Node *dst, const Node *src);       /* dst covers src's ONNX nodes too */
void node_note_fused(Node *dst, const char *what);       /* "Conv" -> "Conv+Relu" */
void node_reinfer(Node *n);                              /* re-run the shape rule */
/* Attributes: set (replacing one of the same name) or remove. */
void node_set_attr_i(Node *n, const char *name, int64_t v);
void node_set_attr_f(Node *n, const char *name, double v);
void node_set_attr_s(Node *n, const char *name, const char *v);
void node_set_attr_ints(Node *n, const char *name, const int64_t *v, int len);
void node_set_attr_floats(Node *n, const char *name, const double *v, int len);
void node_remove_attr(Node *n, const char *name);
int graph_node_index(const Graph *g, const Node *n);    /* position in g->nodes, -1 if absent */
int node_promoted_in(const Node *n, int j);              /* input j is 16-bit data the node computes in float32 */
/* The constant value of t as doubles (NULL if t is not constant). */
double *tensor_const_f64(const Tensor *t);
/* t holds one value repeated (a scalar or a splat constant); sets *v. */
int tensor_const_splat(const Tensor *t, double *v);

/* ---- attributes (defaults come from the op table's schema) ----------- */

const Attr *attr_find(const Node *n, const char *name);
int64_t attr_i(const Node *n, const char *name);   /* default from schema */
double attr_f(const Node *n, const char *name);
const char *attr_s(const Node *n, const char *name);
/* Integer list: returns length (0 if absent and no default), sets *v. */
int attr_ints(const Node *n, const char *name, const int64_t **v);
int attr_floats(const Node *n, const char *name, const double **v);
int attr_has(const Node *n, const char *name);

/* ---- op table (ops.def) ---------------------------------------------- */

/* A kernel call: one entry of the generated schedule. The pointers name
 * tensors; x/y element offsets are kernel parameters (k[]) where needed. */
typedef struct KCall {
    const struct Kernel *kernel;
    int64_t count;           /* size of the parallel index space */
    Tensor *x[O2C_MAX_X];
    Tensor *y[O2C_MAX_Y];
    int64_t k[O2C_NK];       /* slots named in runtime/c/params/FAMILY.h: c->k[O2C_CONV_GROUP] */
    double f[O2C_NF];
    const struct Node *node;  /* the node this call implements (NULL: output copy) */
    const char *tune_key;     /* a tunable call (lower_choose): its key and chosen variant */
    const char *variant;
    double tuned_ns;          /* the variant's time in the tuning file (0: none) */
    unsigned inplace;         /* bit j: y[0] may take x[j]'s bytes when x[j] dies here (each index
                                 read before it is written: elementwise; plan.c decides) */
    int ctl;                  /* CTL_*: a control-flow marker, no kernel (count 0; ops/control.c) */
    int jump;                 /* a marker: the index of its matching marker (else/end) */
    int split;                /* --threads: its index space run in this many parts at once (threads.c; 0: one) */
} KCall;

/* Control flow in the schedule (If, Loop, Scan: ops/control.c). Markers are
 * calls with ctl set and count 0 (kernel NULL): the emitters write C control
 * flow, eval.c interprets them, plan.c keeps what lives across a loop's
 * iterations out of reach of its body's tensors.
 *   CTL_IF x[0] (bool scalar)    if (x[0]) {      jump: its CTL_ELSE or CTL_END
 *   CTL_ELSE                     } else {         jump: its CTL_END
 *   CTL_LOOP                     for (;;) {       jump: its CTL_END
 *   CTL_BREAK x[0] (bool scalar) if (!x[0]) break;  (innermost loop)
 *   CTL_FAIL x[0] (bool scalar)  if (x[0]) return NAME_ERR_CHECK; (a check failed)
 *   CTL_END                      }                jump: its opening marker */
enum { CTL_NONE, CTL_IF, CTL_ELSE, CTL_LOOP, CTL_BREAK, CTL_FAIL, CTL_END };

typedef struct Lowering {
    KCall *calls;
    int n, cap;
    const struct Node *node;  /* the node being lowered (recorded in calls) */
    int tiled;                /* 1: the C target, which may use the register-tiled
                                 kernel variants; 0: the reference kernels (the
                                 compiler's own evaluation, the CUDA target) */
    int target;               /* TARGET_* (ir.h): tuning keys name it */
    const struct TuneTable *tune;  /* --tune-file: the variant chosen per key (tune.c) */
    int force;                /* the tuner: 1 + the candidate to take at every choice (0: none) */
    int choices;              /* choices made so far and the most candidates one had */
    int max_candidates;
    /* memory facts of the plan (plan.c), for --report and the header */
    int64_t *live;            /* bytes of arena tensors live at each call */
    int64_t live_bound;       /* the most of them at one call: no arena for this order is smaller */
    int live_bound_at;        /* that call */
    int64_t naive_arena;      /* one buffer per arena tensor (each aligned) */
    /* string tensors (ops/strings.c): the string space, an arena tensor that
     * the kernels building strings take bytes from (made by the first such
     * call), and its size in bytes (--string-space; 0: the compiler's own
     * evaluation, which sizes it itself) */
    Tensor *strings;
    int64_t string_space;
    /* --fp16 (lower.c lower_half_constants): constants stored as half, and
     * those kept float32 (a value beyond half's range; calibration's choice) */
    int half_consts, half_kept, half_chosen;
} Lowering;

/* Tunable choices (tune.c). A lowering that can compute a call in several
 * ways (kernel variants, tile sizes) names the candidates and the heuristic
 * pick; the tuning file (key -> variant) or the tuner's forced candidate
 * overrides the heuristic. The key names the kernel family, the shape and
 * type, and the target. Returns the index chosen and records it in c. */
int lower_choose(Lowering *L, KCall *c, const char *key, const char *const *names, int n, int heuristic);
typedef struct TuneTable TuneTable;
const TuneTable *tune_load(const char *path);
const char *tune_lookup(const TuneTable *t, const char *key, double *ns);   /* NULL: not in the table */
struct Options;
/* --tune: times every candidate of every distinct key of the graph with the
 * runner (tune.c) and writes the tuning file */
void tune_graph(Graph *g, const struct Options *o);

typedef void (*InferFn)(Node *n);
typedef void (*LowerFn)(Node *n, Lowering *L);
struct Decomp;
typedef void (*DecomposeFn)(const Node *n, struct Decomp *d);

/* How an op's FLOPs are counted (OpDef.flops; report.c: node_flops), a
 * multiply-add counting 2. The zero value: one per output element. */
enum {
    FLOPS_DEFAULT = 0,  /* output elements */
    FLOPS_OUT,          /* factor * output elements (elementwise ops) */
    FLOPS_IN,           /* factor * elements of input 0 (reductions) */
    FLOPS_ZERO,         /* data movement, views, shape values */
    FLOPS_INPUTS,       /* factor * output elements * (inputs - 1) (Sum, Max, ...) */
    FLOPS_CONV, FLOPS_QCONV, FLOPS_CONVT, FLOPS_MATMUL, FLOPS_GEMM, FLOPS_QGEMM, FLOPS_POOL, FLOPS_RNN, FLOPS_GRU, FLOPS_LSTM,
    FLOPS_DQLSTM,       /* com.microsoft DynamicQuantizeLSTM: W [D, input, 4H], R [D, H, 4H] (transposed) */
    FLOPS_SDPA          /* attention: Q K^T and P V, factor * (Q + Y elements) * keys */
};
typedef struct Flops { int rule, factor; } Flops;

/* Traits of an op (OpDef.traits): what it takes beyond the numeric types,
 * and what the stages may assume of it. */
enum {
    OPT_STRINGS = 1 << 0,          /* reads or makes string tensors (ops/strings.c; infer.c refuses the others) */
    OPT_NARROW = 1 << 1,           /* converts or moves the bytes of the narrow types (float8, int4, ...) */
    OPT_NARROW_AS_FLOAT = 1 << 2,  /* computes on a float8's exact float32 value (IsNaN, IsInf) */
    OPT_OPTIONAL_LEADING = 1 << 3, /* inputs below min_in may be left out too (Loop's M, Scan-8's sequence_lens) */
    OPT_FOLD_IN_PASSES = 1 << 4    /* not folded during inference: the passes see it first (DequantizeLinear: the
                                      quantize pass keeps int8 weights int8; the fold pass folds the others) */
};

/* A node as one step of a fused elementwise loop (OpDef.ew_step; the
 * fuse_elementwise pass builds onnx2c::FusedElementwise nodes from it):
 * the ops.def expression it computes (a UNARY/BINARY/COMPARE/KUNARY/KBINARY
 * name, or "Cast"), the inputs that expression reads, its reals A, B, C. */
#define EW_STEP_REALS 3
typedef struct EwStep {
    const char *expr;
    struct Tensor *x[2];
    int nx;
    double abc[EW_STEP_REALS];
} EwStep;

/* What a node can do with channels-innermost tensors (OpDef.layout;
 * the layout of the C target's arena, passes/layout.c). */
enum { LAYOUT_ROLE_NONE, LAYOUT_ROLE_PW, LAYOUT_ROLE_DW, LAYOUT_ROLE_ANY };

typedef struct OpDef {
    const char *name;
    const char *domain;
    int min_in, max_in, min_out, max_out;
    const char *attrs;       /* schema: "alpha:f=0.01 perm:ints axis:i=1" */
    InferFn infer;
    LowerFn lower;           /* lower_view: the op is a view (Reshape & co.) */
    DecomposeFn decompose;   /* ops of domain onnx2c (FUSED lines): the same in standard ops */
    struct OpTable *table;   /* the table it is in: node_op finds other ops there */
    const char *versions;    /* the op's schema versions in its domain, "!" before one onnx2c
                                refuses: "!1 !6 7 13 14" (tools/opset_versions.py checks them) */
    /* facts and hooks an op line may add after its versions, by name
     * (".traits = OPT_STRINGS"); zero when it does not */
    unsigned traits;         /* OPT_* */
    /* replaces node n of g by other nodes once its inputs are inferred, as
     * ONNX's context-dependent function bodies do (sequences, FlexAttention);
     * 1 if it did (the engine's inference loop then infers them) */
    int (*expand)(Graph *g, Node *n);
    int (*foldable)(const Node *n);        /* evaluating it at compile time is cheap enough (NULL: yes) */
    int64_t (*view_offset)(const Node *n); /* a view at this byte offset into its input (SliceView) */
    int (*layout)(Node *n);                /* LAYOUT_ROLE_* (NULL: none) */
    int (*ew_step)(Node *n, EwStep *s);    /* the node as one fused elementwise step (1), or not (0; NULL: never) */
    Flops flops;                           /* report.c: how its FLOPs are counted */
} OpDef;

/* An op table with the index the core looks ops up by (optable.c). The
 * table is ops.c's (op_table); the loader attaches it to the model's graph
 * (Graph.ops), and everything below the stages finds ops through the graph
 * (graph_op), never by naming the table. */
#define OPTABLE_SLOTS 1024
typedef struct OpTable {
    const OpDef *ops;
    int n;
    int indexed;                 /* slot[] is made on the first lookup */
    int slot[OPTABLE_SLOTS];     /* open addressing by (domain, name): table position + 1, 0 empty */
} OpTable;
uint32_t str_hash(const char *s);                                          /* optable.c: FNV-1a */
/* optable.c: FNV-1a 64 of n bytes, continuing from h (FNV1A64_INIT to start) */
#define FNV1A64_INIT 1469598103934665603ULL
uint64_t fnv1a64(uint64_t h, const void *p, size_t n);
const OpDef *optable_find(OpTable *t, const char *domain, const char *name);  /* "ai.onnx" is "" */
const OpDef *graph_op(const Graph *g, const char *domain, const char *name);  /* in the table of g's model */
const OpDef *node_op(const Node *n, const char *domain, const char *name);    /* in the table of n's op */
/* the op's schema version in effect at opset `opset` of its domain (the
 * largest listed <= opset; 0: none, the op is newer than that opset); *ok
 * says whether onnx2c implements it; implemented: "7, 13, 14" */
int op_version(const OpDef *op, int opset, int *ok, const char **implemented);
OpTable *op_table(void);                 /* ops.c: the op table (the stages' and the loader's) */
const OpDef *op_find(const char *domain, const char *name);   /* ops.c: an op of the table */
int op_count(void);                      /* the table, for --list-ops */
const char *op_name(int i);
const OpDef *op_at(int i);

/* Kernels (kernels.c): name, function for folding, runtime file, and the
 * kernels it needs. */
typedef struct Kernel {
    const char *name;
    o2c_kernel_fn fn;
    const char *file;        /* runtime/c file holding its text */
    const char *instance;    /* for macro-made kernels: the instantiation line */
    const char *deps;        /* for those: runtime chunks they need */
} Kernel;

/* A kernel generated by a lowering (fn NULL, its text in instance): the
 * compiler runs it by interpreting prog (eval.c). */
typedef struct GenKernel {
    Kernel k;
    void (*interp)(const struct GenKernel *k, int64_t i0, int64_t i1, const o2c_p *p);
    const void *prog;
} GenKernel;

const Kernel *kernel_find(const char *name);            /* kernels.c: by hash */
extern const char *const KERNEL_FAMILY_FILES[];         /* kernels.c: "elementwise.h", ... (families.def order), NULL */
const char *kernel_instance(const Kernel *k);           /* its text in generated code */
const char *expr_for_type(const char *expr, int dtype); /* float: expf, not exp */

/* Building kernel calls (lower.c). */
KCall *lower_call(Lowering *L, const char *kernel, int64_t count);
/* A call to a kernel made by the lowering (not in the registry): calls to
 * kernels of the same name share one Kernel, so its text is emitted once. */
KCall *lower_call_kernel(Lowering *L, const Kernel *k, int64_t count);
/* A control-flow marker (CTL_*, x the flag it reads or NULL); an ELSE or
 * END is linked to its opening marker (jump). ops/control.c. */
KCall *lower_ctl(Lowering *L, int ctl, Tensor *x);
int node_has_subgraph(const Node *n);                    /* If, Loop, Scan (core/graph.c) */
void control_bind_bodies(Node *n);                       /* ops/control.c: n's bodies as lowering takes them (passes/bodies.c) */
void control_open_bodies(Node *n);                       /* ops/control.c: and open again as the passes take them (calibrate.c) */
int node_formal_inputs(const Node *n);                   /* its ONNX inputs (nin less its bodies' captures) */
int loop_foldable(const Node *n);
int expand_ms_fused_conv(Graph *g, Node *n);           /* ops/contrib.c: com.microsoft FusedConv -> onnx2c FusedConv */
int expand_matmul_nbits(Graph *g, Node *n);            /* ops/quant.c: com.microsoft MatMulNBits -> onnx2c FusedWQMatMul */
int expand_ms_fused_matmul(Graph *g, Node *n);         /* ops/contrib.c: com.microsoft FusedMatMul -> Transpose, MatMul, Mul */                        /* Loop's OpDef.foldable: few iterations, known at compile time */
/* A scratch tensor living for the node's calls only. */
Tensor *lower_temp(Lowering *L, int dtype, int rank, const int64_t *dims);
/* A new constant (zeroed data for the caller to fill): weights in the
 * layout a kernel variant reads, made at lowering time. */
Tensor *lower_const(Lowering *L, const char *what, int dtype, int rank, const int64_t *dims);
/* Copy of a whole tensor (any type): y = x. */
void lower_copy(Lowering *L, Tensor *x, Tensor *y);
/* The lowering of views: nothing, or a copy when the output is a graph output. */
void lower_view(Node *n, Lowering *L);
/* SliceView (ops/slice_view.c): a view of its input at a byte offset. */
void lower_slice_view(Node *n, Lowering *L);
int64_t slice_view_offset(const Node *n);                /* bytes into the input */
int node_is_view(const Node *n);                         /* lower_view or SliceView */
int concat_in_place_offsets(const Node *n, int64_t *byte_off);   /* ops/movement.c, for plan.c */

/* ---- shared helpers for op files (ops/common.c) ---------------------- */

Tensor *in_t(Node *n, int i);                /* input i or NULL if absent */
Tensor *need_in(Node *n, int i);             /* input i, error if absent */
void need_dtype(Node *n, Tensor *t, const int *allowed); /* allowed: DT_ list ending 0 */
void need_const(Node *n, Tensor *t, const char *what);   /* error if not constant: names --bind inputs */
const char *bind_suggestion(Tensor *t);   /* "--bind NAME=FILE.pb ..." of t's graph inputs, or NULL */
void need_const_value(Node *n, Tensor *t, const char *what);   /* the same for a value that decides no shape */
/* outputs whose size depends on t's values: 1 when t is constant (sizes
 * computed now), 0 when every output of n may take a run-time size (graph
 * outputs nobody else reads: ir.h dyn_count), else need_const's refusal */
int need_const_or_dyn(Node *n, Tensor *t, const char *what);
/* marks y (when present) as sized at run time along axis by cnt, a kept int64
 * scalar (made when cnt is NULL); returns cnt */
Tensor *lower_dyn_output(Lowering *L, Tensor *y, int axis, Tensor *cnt);
int64_t norm_axis(Node *n, int64_t axis, int rank);       /* negative -> positive, checked */
void out_like(Node *n, int o, const Tensor *src);          /* copy type and shape */
void set_out(Node *n, int o, int dtype, int rank, const int64_t *dims);
/* numpy-style broadcast of a and b into dims; returns rank. */
int broadcast_shapes(Node *n, const Tensor *a, const Tensor *b, int64_t *dims);
/* Row-major strides of t as seen from an output of rank `rank` and dims
 * `dims` (0 stride on broadcast axes). */
void bcast_strides(const Tensor *t, int rank, int64_t *strides);
/* The scalar numbers among the attributes of an attribute schema ("alpha:f
 * axis:i=1 perm:ints"), in its order: the reals ('f') and, with ints, the
 * integers ('i'); their names into names and types ('f', 'i') into types;
 * returns how many (more than max: an internal error naming op). A UNARY
 * or PREDICATE op's A, B, C. */
int schema_numbers(const char *schema, int ints, char (*names)[64], char *types, int max, const char *op);
/* t converted to type dt by a call (into a scratch tensor), or t itself
 * when it has that type (or is NULL) */
Tensor *lower_cast_temp(Lowering *L, Tensor *t, int dt);
/* The batch axes of a matrix product (all but the last two axes of a and
 * b, numpy broadcasting): the output's batch dims, the strides of A and B
 * along them (matrices of mk and kn elements; 0: broadcast); returns how
 * many (MatMul, QLinearMatMul, MatMulInteger). */
int matmul_batch(Node *n, const Tensor *a, const Tensor *b, int64_t mk, int64_t kn, int64_t *bdims, int64_t *astr,
                 int64_t *bstr);
/* Constant tensor -> int64 list (any integer type). */
int const_ints(Node *n, Tensor *t, int64_t *v, int max);
extern const int DTS_FLOAT[], DTS_NUM[], DTS_ALL[], DTS_INT[], DTS_BOOL[], DTS_INDEX[];

/* Window geometry of a convolution or pool, normalized to 3 spatial axes:
 * an op with nsp < 3 spatial axes uses the last nsp entries, the leading
 * ones are size 1 (kernel 1, stride 1, dilation 1, pad 0). */
typedef struct ConvGeom {
    int nsp;                  /* real spatial rank (1..3) */
    int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
} ConvGeom;

/* ops/conv.c, used by ops/pool.c too */
void conv_geom_init(Node *n, const Tensor *x, const int64_t *kernel, int nk, ConvGeom *g);
void conv_geom_forward(Node *n, ConvGeom *g, int ceil_mode);
/* The kernel call of a Conv (transpose 0) or ConvTranspose (1) node, and of
 * a MatMul or Gemm node, reading inputs 0..2 (ops/conv.c, ops/matmul.c);
 * ops/fused_linear.c adds the epilogue to it. */
KCall *lower_conv_call(Node *n, Lowering *L, int transpose);
KCall *lower_matmul_call(Node *n, Lowering *L);
/* matmul.c: Y = alpha * op(A) op(B) of inputs 0, 1 (MatMul's batching; op
 * a transpose of the last two axes where ta, tb): MatMul's and
 * com.microsoft FusedMatMul's lowering, with the tiled, packed, tuned variants */
KCall *lower_product_call(Node *n, Lowering *L, int ta, int tb, double alpha);
KCall *lower_gemm_call(Node *n, Lowering *L);
/* matmul.c: Y (M x N) = A (M x K) W^T + bias (N, or NULL), constant float W
 * stored N x K: the Gemm path (tiled, packed, tuned) for another op's product */
KCall *lower_linear_call(Lowering *L, Tensor *a, Tensor *w, Tensor *bias, Tensor *y, int64_t M, int64_t N, int64_t K);

/* ops/fused_elementwise.c: node n as one step of a fused elementwise loop,
 * by its op's OpDef.ew_step (the expression of ops.def it computes, the
 * inputs that reads, its reals), checked against what a fused loop can
 * compute (types, the expression's text); 0 if it cannot be one. */
int ew_node_step(Node *n, EwStep *s);
/* ops/elementwise.c: OpDef.ew_step of the elementwise ops */
int ew_step_unary(Node *n, EwStep *s);
int ew_step_binary(Node *n, EwStep *s);
int ew_step_clip(Node *n, EwStep *s);
int ew_step_variadic(Node *n, EwStep *s);
int ew_step_cast(Node *n, EwStep *s);

/* ops/types.c: the narrow types (dtype_is_narrow). Whether op n may take
 * or make them (infer.c refuses the others), and Cast/CastLike with one. */
int node_takes_narrow(const Node *n);
void lower_cast_narrow(Node *n, Lowering *L);

/* ops/strings.c: string tensors (DT_STRING, elements `const char *`).
 * node_takes_string: op n may read or make them (infer.c refuses the
 * others); strings_infer/strings_lower: the string form of an op whose table
 * line is numeric (Equal), 1 if n was handled; lower_copy_strings: y = x
 * element by element (pointers); strings_check_cuda: refuses a graph with
 * strings for the .cu output. */
#define STRING_OPS_TEXT "Equal, StringConcat, StringSplit, StringNormalizer, RegexFullMatch, ai.onnx.ml LabelEncoder, " \
    "Constant, and the moves Identity, Reshape, Flatten, Squeeze, Unsqueeze, Shape, Size"
void infer_string_equal(Node *n);          /* Equal of string tensors (ops/elementwise.c hands it over) */
void lower_string_equal(Node *n, Lowering *L);
int graph_has_strings(const Graph *g);
/* emit_c.c: the string space's first bytes reset at the start of a run, and
 * the check after a call that took bytes from it */
int call_uses_strings(const Lowering *L, const KCall *c);    /* kcall.c */
/* kcall.c: the string space (Lowering.strings) for call c of a kernel that
 * builds strings; returns its capacity in bytes. Compile-time evaluation's
 * space is EVAL_STRING_SPACE bytes. */
int64_t lower_string_space(Lowering *L, KCall *c);
#define EVAL_STRING_SPACE (1 << 22)
struct EmitCtx;
void strings_header_note(FILE *f, const struct EmitCtx *c);
/* the header's words on string I/O */

/* ---- decompositions (decompose.c) -------------------------------------- */

/* A fused node (an op of domain "onnx2c", made by a pass) states what it
 * computes in standard ONNX ops: --emit-onnx writes that as an ONNX local
 * function, so onnxruntime can run the optimized graph. The body reads the
 * node's inputs as "x0", "x1", ... (dc_in) and must write "y0", "y1", ...
 * (dc_output). */
typedef struct DNode {
    const char *op_type;
    const char **in;
    int nin;
    const char **out;
    int nout;
    Attr *attrs;
    int nattrs;
} DNode;

typedef struct Decomp {
    const Node *node;
    DNode *nodes;
    int n, cap;
    int ntemp;
    int opset;               /* the default-domain opset the body needs (at least) */
} Decomp;

const char *dc_in(Decomp *d, int j);                       /* "xJ", or "" if input j is absent */
/* Appends a node; returns the name of its first output (a fresh temporary). */
const char *dc_op(Decomp *d, const char *op_type, int nin, ...);
const char *dc_op_n(Decomp *d, const char *op_type, const char *const *in, int nin, int nout);
Attr *dnode_add_attr(DNode *n, const char *name, int type);   /* a new attribute of node n */
void dc_attr_i(Decomp *d, const char *name, int64_t v);    /* attributes of the last node */
void dc_attr_f(Decomp *d, const char *name, double v);
void dc_attr_ints(Decomp *d, const char *name, const int64_t *v, int len);
void dc_copy_attrs(Decomp *d, const Node *n, const char *const *names); /* NULL-terminated; absent ones skipped */
const char *dc_const_f(Decomp *d, int dtype, double v);   /* a scalar Constant */
const char *dc_const_ints(Decomp *d, const int64_t *v, int len); /* an int64 vector Constant */
void dc_output(Decomp *d, int j, const char *name);        /* formal output j is `name` */
void decompose_node(const Node *n, Decomp *d);             /* runs the op's decompose */

/* ---- stages ----------------------------------------------------------- */

/* --target: what the generated code is for (main.c; lowering picks kernel
 * variants by it, the C file checks the ISA it was made for) */
enum {
    TARGET_C,          /* portable C99 (default): SIMD paths by the C compiler's predefined macros */
    TARGET_AVX2,       /* x86-64 with AVX2 and FMA */
    TARGET_AVX512,     /* x86-64 with AVX-512F */
    TARGET_NEON,       /* Arm with NEON (AArch64, Armv7-A) */
    TARGET_CORTEX_M,   /* Cortex-M (DSP extension, single-precision FPU): compact reference kernels */
    TARGET_CUDA        /* the .cu output */
};
const char *target_name(int target);   /* "c", "avx2", ... */
int target_tiled(int target);          /* may the lowering use the register-tiled variants */

#define ONNX2C_VERSION "0.1.0"

typedef struct Options {
    const char *input, *output;
    const char *flags_text;    /* main.c: the command's flags, paths as their file names (the banner, NAME_ONNX2C_FLAGS) */
    char model_sha256[65];     /* main.c: SHA-256 of the model file, hex (the banner, NAME_MODEL_SHA256) */
    int opt_level;             /* -O0 no passes, -O1 cleanups, -O2 (default) everything */
    const char *disabled[64];  /* --disable-pass NAME */
    int ndisabled;
    const char *report;        /* --report: "-" for stdout, or a file */
    const char *emit_onnx;     /* --emit-onnx FILE */
    const char *dot;           /* --dot FILE */
    const char *name;          /* symbol prefix */
    const char *header;        /* file name of the header, as the source includes it */
    int cuda;
    int profile;               /* --profile: time every kernel call (C target) */
    int threads;               /* --threads N: large calls split across N OpenMP threads (host C targets; 0: one) */
    int64_t max_arena;         /* --max-arena BYTES: the arena's budget (0: none; main.c) */
    int reference_kernels;     /* main.c, --max-arena: lower with the reference kernels only (pipeline.c) */
    int index_bits;            /* --index-bits 32|64 (0: 32 for cortex-m where every size fits, else 64; emit_c.c) */
    int64_t thread_grain;      /* --thread-grain FLOPS: the least work a call splits (-1: threads.c's default) */
    int debug_tensors;         /* --debug-tensors: every computed tensor to a callback (C target) */
    int fp16;                  /* --fp16: float constants stored as IEEE half (lower.c lower_half_constants) */
    int allow_newer_opsets;    /* --allow-newer-opsets: a warning, not a refusal (infer.c check_opsets) */
    int caller_arena;          /* --caller-arena: only NAME_run_with_arena, no mutable static state (C target) */
    const char *weights_section, *arena_section;   /* --weights-section / --arena-section NAME (C target) */
    const char *weights_bin;   /* --weights-bin FILE.bin: the constants as binary data (weights_bin.c) */
    int element_constants;     /* --element-constants: every constant element by element (emit_common.c) */
    const char *test_main;     /* --emit-test-main FILE.c: a verification harness (emit_test_main.c) */
    FILE *test_main_file;      /* main.c: FILE.c's temporary, open for writing */
    FILE *weights_bin_file;    /* main.c: FILE.bin's temporary, open for writing */
    struct { char *name; int rank; int64_t dims[MAX_RANK]; const char *text; } shapes[64];   /* rank -1: a sequence's or optional's shapes (text) */
    int nshapes;
    struct { char *name; int64_t value; } dimv[64];
    int ndims;
    struct { char *name; const char *file; struct Tensor *value; } binds[64];   /* --bind INPUT=FILE.pb (value: main.c loads it) */
    int nbinds;
    int target;                /* --target: TARGET_* */
    int target_given;
    int tune;                  /* --tune: time the candidates, write --tune-file */
    const char *tune_file;     /* --tune-file FILE: the choices (read, or written by --tune) */
    const char *tune_runner;   /* --tune-runner CMD: builds and runs a timing program (its C source is the argument) */
    double tune_budget;        /* --tune-budget SECONDS: the timing program's time (0: no limit) */
    int64_t string_space;      /* --string-space BYTES: the strings one run may build (ops/strings.c) */
    /* precision (calibrate.c) */
    int int8;                  /* --int8: a float model calibrated into int8 (QDQ nodes the quantize pass takes) */
    const char *calibrate;     /* --calibrate DIR: the calibration inputs (DIR/NAME/input_K.pb) */
    const char *calib_cache;   /* --calib-cache FILE: written after calibrating; read when no DIR is given */
    int calib_method;          /* --calibration: CALIB_* */
    double calib_param;        /* percentile's P */
    int act_scheme;            /* --int8-activations: ACT_U8, ACT_S8, ACT_SYM; -1: the target's default */
    double min_sqnr;           /* --min-sqnr DB: the model's output SQNR layers fall back to float for */
    const char *keep_float;    /* --keep-float NODE[,NODE]: layers kept float */
    FILE *qdq_onnx;            /* --emit-onnx with --int8: the calibrated QDQ model is written here */
    /* the driver's reader of TensorProto files (load.c), which calibration
     * reads its sets with one at a time */
    void (*read_tensor)(const char *path, struct Tensor *t, const char *what);
} Options;

/* pipeline.c: the stages from a loaded model to a planned schedule (infer,
 * passes, tune, schedule, lower, plan); returns the arena size */
int64_t pipeline_run(Graph *g, Lowering *L, const Options *o);
Graph *load_model(const char *path);                 /* load.c */
Graph *load_model_buffer(const uint8_t *buf, size_t len, const char *path);
void load_tensor_file(const char *path, Tensor *t, const char *what);  /* a TensorProto file: t's type, shape and data */
/* inline.c: expands calls of the model's local functions in its graph's node
 * list (before load.c reads it); *saved: the model's own list, to put back
 * before the model is freed. Returns the number of calls expanded. */
struct Onnx__ModelProto;
struct Onnx__NodeProto;
int inline_functions(struct Onnx__ModelProto *m, struct Onnx__NodeProto ***saved, size_t *nsaved);
void infer_graph(Graph *g, const Options *o);        /* infer.c */
/* ops/attention.c: a FlexAttention with score_mod / prob_mod, its inputs
 * inferred, replaced in g by standard ops (its modifiers inlined); 0 for
 * any other node. Called by the inference loops before infer_node. */
int expand_flex_attention(Graph *g, Node *n);
/* image_decode.c: an encoded BMP, PNG, PNM or TIFF image -> H x W x channels
 * uint8 pixels (channels 3: RGB, or BGR with bgr; 1: PIL's "L" luma);
 * fail()s with a message on an unsupported format or a corrupt stream */
uint8_t *image_decode(const uint8_t *p, size_t n, int channels, int bgr, int64_t *h, int64_t *w);
void infer_node(Node *n);                            /* one node's shape rule (checks arity and types) */
/* engine/inference.c: the inference loop of the model's graph and of every
 * body. resolve_ops: ops looked up (all unsupported ones refused in one
 * message; body: as a message about the owner, diag_node), versions
 * checked; order: nodes ordered, readers counted; run: each node in order
 * expanded (OpDef.expand), inferred, folded when constant and small;
 * drop_folded: folded nodes leave the graph (their outputs are constants). */
void infer_resolve_ops(Graph *g, int body);
void infer_order(Graph *g);
void infer_run(Graph *g);
void infer_drop_folded(Graph *g);
void topo_sort(Graph *g);                            /* infer.c: re-runnable, stable */
/* engine/eval.c: the evaluator, the one way to run kernels at compile time.
 * eval_call: one call on its tensors' data (outputs allocated);
 * eval_calls: a lowering's calls in order, control flow interpreted;
 * eval_call_const: the lowering's last call c, when its inputs are all
 * constant, run now: its output becomes a constant (named what) and the
 * call is dropped (else c->y[0] is returned and c stays). */
void eval_call(const KCall *c);
void eval_calls(const Lowering *L);
Tensor *eval_call_const(Lowering *L, KCall *c, const char *what);
void fold_node(Node *n);                             /* eval.c: run a node's kernels on its constant inputs */
void fold_node_lowered(Node *n, int tiled);
void eval_node(Node *n, int tiled);                  /* the same, quietly (whole-graph runs: calibrate.c) */          /* the same, lowered as for the C target when tiled is 1 */
int node_foldable(const Node *n);                    /* every input is constant */
/* engine/inference.c: the one size rule of constant folding. Folding that
 * adds `growth` bytes of constants (its results less what it frees) is
 * allowed while all folding of the model has added at most
 * FOLD_BUDGET_FLOOR + the model's own bytes (Graph.model_bytes); it is
 * then charged. Beyond that the node stays a run-time node. */
#define FOLD_BUDGET_FLOOR ((int64_t)1 << 20)
int fold_allowed(Graph *g, int64_t growth);
void run_passes(Graph *g, const Options *o);         /* passes.c: the pass table */
void run_standard_passes(Graph *g, const Options *o); /* passes.c: those whose results are standard ops (before calibrate.c) */
void schedule_graph(Graph *g);                      /* schedule.c: a memory-aware node order */
void lower_graph(Graph *g, Lowering *L);
/* --fp16: every float constant of HALF_MIN_ELEMENTS or more that the calls
 * read stored as IEEE half, and widened to float32 by a call (o2c_h2f_f32)
 * into a scratch tensor before each call that reads it (lower.c); the
 * constants of the graph's fp32_nodes stay float32 */
#define HALF_MIN_ELEMENTS 256   /* smaller constants (biases, scales) stay float32: no call is worth it */
#define HALF_MAX 65504.0        /* the largest finite half */
void lower_half_constants(Graph *g, Lowering *L);   /* lower.c */
void lower_share_constants(Lowering *L);   /* lower.c: calls reading equal constants read one */
/* core/dtype_conv.c: what --fp16 stores as half (the lowering; calibration
 * measures the same constants): a float constant of HALF_MIN_ELEMENTS or
 * more, every value within half's range */
int half_candidate_const(const Tensor *t);
int half_fits(const Tensor *t);
/* passes/layout.c: chooses each tensor's layout (LAYOUT_*); all NCHW
 * unless tiled (the C target's kernel variants). The layout pass calls it
 * with Graph.tiled; tests call it to compare the variants. */
void layout_assign(Graph *g, int tiled);
int conv_layout_role(Node *n);         /* conv.c: Conv's and FusedConv's OpDef.layout */
int node_elementwise(const Node *n);   /* elementwise.c: the same result on any layout */
int ew_layout(Node *n);                /* elementwise.c: OpDef.layout of the elementwise ops */
/* elementwise.c: one call of the elementwise kernel KNAME (an ops.def UNARY/KUNARY
 * name) on x; of BINARY/KBINARY kernel OP on a and b with numpy broadcasting */
KCall *ew_unary_call(Lowering *L, const char *kname, Tensor *x, Tensor *y);
void matmul_out_shape(Node *n, Tensor *a, Tensor *b, int dt);   /* matmul.c: MatMul's shape rule, output type dt */
void ew_binary_call(Lowering *L, const char *op, Tensor *a, Tensor *b, Tensor *y);
/* matmul.c: constant B (K x N, rows sbk apart, N >= 32) packed for
 * o2c_matmul_tile_f32 (O2C_MATMUL_BPACKED): ceil(N / 32) x K x 32 floats */
void matmul_pack_panels(const float *B, int64_t K, int64_t N, int64_t sbk, float *dst);
/* conv.c: 3x3 weights (M x C x 3 x 3) transformed for o2c_conv_wino_f32:
 * 16 x ceil(M / 8) x C x 8 floats */
void conv_wino_weights(const float *W, int64_t M, int64_t C, float *dst);
int64_t plan_graph(Graph *g, Lowering *L);           /* plan.c: returns the arena size */
void plan_check(Lowering *L);                        /* plan.c: no call writes bytes still to be read */
void plan_budget_fail(const Lowering *L, int64_t arena, int64_t budget);   /* plan.c: --max-arena not met */
void lower_node(Node *n, Lowering *L);
void emit_c(Graph *g, Lowering *L, const Options *o, int64_t arena, FILE *src, FILE *hdr);    /* emit_c.c */
void emit_cuda(Graph *g, Lowering *L, const Options *o, int64_t arena, FILE *src, FILE *hdr); /* emit_cuda.c */

/* --report, --emit-onnx, --dot (report.c, emit_onnx.c, emit_dot.c): run after
 * lowering and planning, on the optimized graph; the report's rows are the
 * emitted kernel calls. */
int64_t node_flops(const Node *n);                   /* FLOPs of one node (-1: unknown) */
void write_report(FILE *f, Graph *g, Lowering *L, int64_t arena, const Options *o);
uint8_t *emit_onnx_buffer(Graph *g, size_t *len);    /* the ONNX model (fails on internal ops) */
void emit_onnx(Graph *g, FILE *f);
void emit_dot(Graph *g, FILE *f);

/* ---- passes (passes.c runs compiler/passes/NAME.c from passes.def) ---- */
#define PASS(name, level, phase, need, what) int pass_##name(Graph *g);
#include "passes/passes.def"
#undef PASS
int pass_count(void);
const char *pass_name(int i);
const char *pass_what(int i);
int pass_level(int i);
int pass_exists(const char *name);
int run_pass(Graph *g, const char *name);            /* one pass by name (tests, A/B): its change count */
void graph_evaluate(Graph *g);                       /* eval.c: run every node in the compiler */
void graph_evaluate_lowered(Graph *g, int tiled);    /* the same with fold_node_lowered (tests of the variants; layouts: layout_assign first) */

/* engine/histogram.c: streaming fixed-size histograms and the calibrators */
#define HIST_BINS 2048   /* on each side of zero */
typedef struct Hist {
    double width;                          /* of a bin; 0 until a non-zero value */
    double pos[HIST_BINS], neg[HIST_BINS]; /* counts of [i*w, (i+1)*w), negatives by magnitude */
    double min, max;
    int64_t count;
} Hist;
enum { CALIB_MINMAX, CALIB_PERCENTILE, CALIB_ENTROPY, CALIB_MSE,
       CALIB_AUTO /* calibrate.c choose_ranges: minmax, mse and percentile measured on held-out sets, one kept */ };
enum { ACT_U8, ACT_S8, ACT_SYM };
void hist_init(Hist *h);
int hist_add(Hist *h, const float *x, int64_t n);   /* 0: a NaN or infinity (nothing added) */
void hist_range(const Hist *h, int method, double param, int levels, double *lo, double *hi);
const char *calib_method_name(int method);
/* calibrate.c: the precision stage (--int8, --fp16 with --calibrate or
 * --calib-cache), between inference and the passes: the float model
 * calibrated and written as a QDQ model; with --fp16 the layers whose
 * constants stay float32 named in Graph.fp32_nodes */
void calibrate_graph(Graph *g, const Options *o);

/* engine/ctext.c: the C text of kernels and kernel calls (the emitters
 * and the tuner's timing program write with it) */
typedef const char *(*TensorText)(const Tensor *t, int out, void *ctx);   /* a tensor's bytes as C */
const char *runtime_text(const char *file);          /* embedded runtime/c file */
int runtime_chunk_splits(const char *name);          /* ctext.c: its marker says `split` */
/* threads.c: --threads N, the calls whose index space runs in parts at once
 * (KCall.split), their scratch made one copy a part; before plan_graph */
void lower_threads(Lowering *L, int threads, int64_t grain);   /* grain < 0: the default */
void emit_kernel_sources(FILE *f, Lowering *L);      /* the kernels used, in file order */
void emit_call_params(FILE *f, const KCall *c, TensorText ptr, void *ctx, const char *indent, int cxx);
const char *c_float_text(char *buf, float v);        /* a float literal that reads back to v (buf: 64 bytes) */
const char *c_double_text(char *buf, double v);
void c_put_float(FILE *f, float v);
void c_put_double(FILE *f, double v);

/* emit_common.c: shared between the C and CUDA emitters */
/* a constant's array; section: with O2C_WEIGHTS_SECTION (--weights-section) */
void emit_const_array(FILE *f, Tensor *t, const char *qual, int section, int natural);   /* natural: no O2C_ALIGN64 (cortex-m) */
const char *const_ref_fmt(const Tensor *t);   /* "c%d", or "c%d.v" for the unions of bit patterns or words */
void emit_const_words_guard(FILE *f, Tensor *const *consts, int n);   /* the byte-order check where constants are words */
const char *storage_ptr(const Tensor *t, const char *const_fmt, const char *arena_fmt);
/* The schedule: every call of L as a block (its comment, `{`, its
 * parameters p; cxx: C++'s form) in which `run` writes the kernel's run
 * on p (ind: the block's indentation), and the control-flow markers
 * (CTL_*) between as C control flow: fail_stmt what a failed run-time
 * check does, flag_read (NULL: none) how the host reads a flag first,
 * with %s its pointer (CUDA); ctx is ptr's, run_ctx run's */
typedef void (*CallText)(FILE *f, const KCall *k, const char *ind, void *run_ctx);
/* Calls as step functions (the C target): each call's block becomes a
 * function `static O2C_STEP void o2c_step_I(inputs, outputs, arena)`
 * written to f, and the schedule calls it, except the calls keep_inline
 * says stay (a block that returns an error code) */
typedef struct ScheduleSteps {
    FILE *f;
    int (*keep_inline)(const KCall *k, void *run_ctx);
    CallText before;         /* written at the top of each block, before its parameters (NULL: nothing) */
    /* a call split into parts (--threads, KCall.split): writes the part's
     * function o2c_part_I (its parameters and call; I: the call's index in
     * the lowering) and the step o2c_step_I that runs the parts (NULL: the
     * parts as a loop in the step, through before and run) */
    CallText split_step;
} ScheduleSteps;
void emit_schedule(FILE *f, const Lowering *L, TensorText ptr, void *ctx, const char *fail_stmt,
                   const char *flag_read, int cxx, CallText run, void *run_ctx, const ScheduleSteps *steps);
void emit_typed_entry(FILE *f, Graph *g, const char *name, int caller_arena);
/* templates/NAME.in: text with @KEY@ placeholders written by a fill function */
typedef void (*TemplateFill)(FILE *f, const char *key, void *ctx);
void emit_template(FILE *f, const char *name, TemplateFill fill, void *ctx);
typedef struct EmitCtx {
    Graph *g;
    Lowering *L;
    const Options *o;
    int64_t arena;
    int cuda;
    Tensor **consts;
    int nconsts;
    /* the back end's own template keys in the shared texts (the header):
     * emit_c.c's @PROFILE_*@ (NULL: they write nothing) */
    void (*backend_key)(FILE *f, const char *key, const struct EmitCtx *c);
    char *schedule;          /* emit_c.c: the schedule's text, made with the step functions */
    const struct KCall *part_call;   /* emit_c.c: the split call (--threads) whose part's parameters are written */
    int index_bits;          /* emit_c.c: the generated file's o2c_int, 32 or 64 bits (runtime/c/o2c_rt.h) */
    char index_why[160];     /* why 64 where 32 was wanted */
} EmitCtx;
int emit_common_key(FILE *f, const char *key, const EmitCtx *c);  /* 0 if not a common key */
/* A back end's files: the header (templates/header.h.in) into hdr, then
 * the source, templates/<source_template> filled by source_key, into src;
 * the constants the calls read collected into c first */
void emit_model(EmitCtx *c, const char *source_template, TemplateFill source_key, FILE *src, FILE *hdr);
/* float_text.c: put_float's shortest round-trip text of v into buf (48
 * bytes) by integer arithmetic; 0 where it does not apply (the slow way) */
int float_text_fast(float v, char *buf);
/* weights_bin.c: --weights-bin, the constants in a binary file linked by .incbin */
int weights_bin_holds(const Tensor *t);                  /* a constant that goes into the file */
void emit_weights_bin(FILE *f, const EmitCtx *c);        /* writes the file, and the stub into f */
/* emit_test_main.c: --emit-test-main, the harness that checks a run against expected outputs */
void emit_test_main(FILE *f, EmitCtx *c);

/* ---- sequences and optionals (ops/sequence.c) --------------------------- */
/* Before bind_inputs: sequence/optional graph inputs become their element
 * tensors (consecutive slots) from --shape NAME:E0,E1,... / empty / none. */
void seq_bind_inputs(Graph *g, const Options *o);
/* Before node i of g is inferred: a node that makes, reads or carries a
 * sequence or an optional is replaced by plain nodes at i (1), else 0. */
int seq_expand(Graph *g, Node *n);
/* After inference: sequence/optional graph outputs become their elements. */
void seq_flatten_outputs(Graph *g);
/* An If with a run-time condition: sequence outputs of both branches become
 * one output per element (same lengths and types). */
void seq_flatten_if(Node *n, Graph **br, int nbr);
/* A body inferred for run time captures a sequence or an absent optional:
 * refused with what to bind (infer_body). */
void seq_capture(Node *owner, Graph *b, int k);
/* The header's comment on flattened sequence/optional inputs and outputs. */
void seq_io_notes(FILE *f, Graph *g, const char *name);
/* ops/control.c: a copy of a subgraph as loaded (nested subgraphs copied) */
Graph *graph_clone(const Graph *src, Graph *parent);

#endif
