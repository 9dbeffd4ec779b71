/* IR: data types, graph and tensor bookkeeping, attribute access. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* ---- data types ------------------------------------------------------ */

static const struct { int dt; const char *name, *ctype, *sfx; size_t size; int kind; } DTYPES[] = {
    /* kind: 1 float, 2 signed int, 3 unsigned int, 4 bool, 5 16-bit float
     * (kept as bit patterns; ops compute on them in float32, see infer.c) */
    {DT_FLOAT, "float32", "float", "f32", 4, 1},
    {DT_DOUBLE, "float64", "double", "f64", 8, 1},
    {DT_INT8, "int8", "int8_t", "i8", 1, 2},
    {DT_INT16, "int16", "int16_t", "i16", 2, 2},
    {DT_INT32, "int32", "int32_t", "i32", 4, 2},
    {DT_INT64, "int64", "int64_t", "i64", 8, 2},
    {DT_UINT8, "uint8", "uint8_t", "u8", 1, 3},
    {DT_UINT16, "uint16", "uint16_t", "u16", 2, 3},
    {DT_UINT32, "uint32", "uint32_t", "u32", 4, 3},
    {DT_UINT64, "uint64", "uint64_t", "u64", 8, 3},
    {DT_BOOL, "bool", "uint8_t", "b", 1, 4},
    {DT_FLOAT16, "float16", "uint16_t", "f16", 2, 5},
    {DT_BFLOAT16, "bfloat16", "uint16_t", "bf16", 2, 5},
    /* kind 6: narrow types, one element a byte (the bit pattern in its low
     * bits); only Cast/CastLike convert them (ops/types.c) */
    {DT_FLOAT8E4M3FN, "float8e4m3fn", "uint8_t", "e4m3fn", 1, 6},
    {DT_FLOAT8E4M3FNUZ, "float8e4m3fnuz", "uint8_t", "e4m3fnuz", 1, 6},
    {DT_FLOAT8E5M2, "float8e5m2", "uint8_t", "e5m2", 1, 6},
    {DT_FLOAT8E5M2FNUZ, "float8e5m2fnuz", "uint8_t", "e5m2fnuz", 1, 6},
    {DT_FLOAT8E8M0, "float8e8m0", "uint8_t", "e8m0", 1, 6},
    {DT_FLOAT4E2M1, "float4e2m1", "uint8_t", "e2m1", 1, 6},
    {DT_INT4, "int4", "uint8_t", "i4", 1, 6},
    {DT_UINT4, "uint4", "uint8_t", "u4", 1, 6},
    {DT_INT2, "int2", "uint8_t", "i2", 1, 6},
    {DT_UINT2, "uint2", "uint8_t", "u2", 1, 6},
};
#define NDTYPES (int)(sizeof DTYPES / sizeof DTYPES[0])

static int dt_index(int dt)
{
    for (int i = 0; i < NDTYPES; i++)
        if (DTYPES[i].dt == dt) return i;
    return -1;
}

const char *dtype_name(int dt)
{
    static const char *other[] = {"undefined", "float32", "uint8", "int8", "uint16", "int16",
                                  "int32", "int64", "string", "bool", "float16", "float64",
                                  "uint32", "uint64", "complex64", "complex128", "bfloat16",
                                  "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
                                  "uint4", "int4", "float4e2m1", "float8e8m0", "uint2", "int2"};
    if (dt >= 0 && dt < (int)(sizeof other / sizeof other[0])) return other[dt];
    return "unknown";
}
/* string tensors (ops/strings.c) are not in the table, so dtype_supported
 * stays 0 for them and every op that is not string-aware refuses them: an
 * element is a `const char *` (NUL-terminated UTF-8) */
const char *dtype_ctype(int dt) { int i = dt_index(dt); return dt == DT_STRING ? "const char *" : i < 0 ? "void" : DTYPES[i].ctype; }
const char *dtype_suffix(int dt) { int i = dt_index(dt); return dt == DT_STRING ? "str" : i < 0 ? "x" : DTYPES[i].sfx; }
size_t dtype_size(int dt) { int i = dt_index(dt); return dt == DT_STRING ? sizeof(const char *) : i < 0 ? 0 : DTYPES[i].size; }
int dtype_supported(int dt) { return dt_index(dt) >= 0; }
int dtype_is_float(int dt) { int i = dt_index(dt); return i >= 0 && DTYPES[i].kind == 1; }
int dtype_is_half(int dt) { return dt == DT_FLOAT16 || dt == DT_BFLOAT16; }
int dtype_is_narrow(int dt) { int i = dt_index(dt); return i >= 0 && DTYPES[i].kind == 6; }
int dtype_is_int(int dt) { int i = dt_index(dt); return i >= 0 && (DTYPES[i].kind == 2 || DTYPES[i].kind == 3); }

double elem_f64(int dt, const void *p, int64_t i)
{
    switch (dt) {
    case DT_FLOAT: return ((const float *)p)[i];
    case DT_DOUBLE: return ((const double *)p)[i];
    case DT_INT8: return ((const int8_t *)p)[i];
    case DT_INT16: return ((const int16_t *)p)[i];
    case DT_INT32: return ((const int32_t *)p)[i];
    case DT_INT64: return (double)((const int64_t *)p)[i];
    case DT_UINT8: case DT_BOOL: return ((const uint8_t *)p)[i];
    case DT_UINT16: return ((const uint16_t *)p)[i];
    case DT_UINT32: return ((const uint32_t *)p)[i];
    case DT_UINT64: return (double)((const uint64_t *)p)[i];
    case DT_FLOAT16: case DT_BFLOAT16: return half_to_float(dt, ((const uint16_t *)p)[i]);
    default:
        if (dtype_is_narrow(dt)) return narrow_to_float(dt, ((const uint8_t *)p)[i]);
        fail("cannot read elements of type %s", dtype_name(dt));
    }
}

void elem_set(int dt, void *p, int64_t i, double v)
{
    switch (dt) {
    case DT_FLOAT: ((float *)p)[i] = (float)v; break;
    case DT_DOUBLE: ((double *)p)[i] = v; break;
    case DT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case DT_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case DT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case DT_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    case DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case DT_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case DT_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case DT_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case DT_FLOAT16: case DT_BFLOAT16: ((uint16_t *)p)[i] = float_to_half(dt, (float)v); break;
    default:
        if (dtype_is_narrow(dt)) { ((uint8_t *)p)[i] = float_to_narrow(dt, (float)v); break; }
        fail("cannot write elements of type %s", dtype_name(dt));
    }
}

int64_t elem_i64(int dt, const void *p, int64_t i)
{
    switch (dt) {
    case DT_INT8: return ((const int8_t *)p)[i];
    case DT_INT16: return ((const int16_t *)p)[i];
    case DT_INT32: return ((const int32_t *)p)[i];
    case DT_INT64: return ((const int64_t *)p)[i];
    case DT_UINT8: case DT_BOOL: return ((const uint8_t *)p)[i];
    case DT_UINT16: return ((const uint16_t *)p)[i];
    case DT_UINT32: return ((const uint32_t *)p)[i];
    case DT_UINT64: return (int64_t)((const uint64_t *)p)[i];
    case DT_FLOAT: case DT_DOUBLE: case DT_FLOAT16: case DT_BFLOAT16: return (int64_t)elem_f64(dt, p, i);
    default:
        if (dtype_is_narrow(dt)) {
            double v = elem_f64(dt, p, i);
            return v == v && v > -9.2e18 && v < 9.2e18 ? (int64_t)v : 0;   /* NaN, e8m0's huge values: 0 */
        }
        fail("cannot read elements of type %s", dtype_name(dt));
    }
}

/* ---- graph ----------------------------------------------------------- */

/* Tensor lookup by name: open hashing over the graph's tensor list. */
static unsigned hash_str(const char *s)
{
    unsigned h = 2166136261u;
    while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

typedef struct { Graph *g; int *slots; int cap; } NameIndex;
static NameIndex index_of = {0};

/* Called by pool_release(): the index lives in pool memory, and a later
 * Graph may get the address of a released one. */
void graph_index_reset(void) { memset(&index_of, 0, sizeof index_of); }

static void index_rebuild(Graph *g, int cap)
{
    index_of.g = g;
    index_of.cap = cap;
    index_of.slots = xalloc(sizeof(int) * (size_t)cap);
    for (int i = 0; i < cap; i++) index_of.slots[i] = -1;
    for (int t = 0; t < g->ntensors; t++) {
        unsigned h = hash_str(g->tensors[t]->name) & (unsigned)(cap - 1);
        while (index_of.slots[h] >= 0) h = (h + 1) & (unsigned)(cap - 1);
        index_of.slots[h] = t;
    }
}

Tensor *graph_find(Graph *g, const char *name)
{
    if (index_of.g != g || index_of.cap < 2 * g->ntensors + 16) {
        int cap = 64;
        while (cap < 4 * (g->ntensors + 16)) cap *= 2;
        index_rebuild(g, cap);
    }
    unsigned h = hash_str(name) & (unsigned)(index_of.cap - 1);
    while (index_of.slots[h] >= 0) {
        Tensor *t = g->tensors[index_of.slots[h]];
        if (!strcmp(t->name, name)) return t;
        h = (h + 1) & (unsigned)(index_of.cap - 1);
    }
    return NULL;
}

static int next_tensor_id;

int tensor_new_id(void) { return ++next_tensor_id; }
int tensor_id_now(void) { return next_tensor_id; }
void tensor_id_rewind(int id) { next_tensor_id = id; }

Tensor *graph_tensor(Graph *g, const char *name)
{
    Tensor *t = graph_find(g, name);
    if (t) return t;
    if (g->ntensors == g->cap_tensors) {
        int cap = g->cap_tensors ? 2 * g->cap_tensors : 64;
        Tensor **n = xalloc(sizeof(Tensor *) * (size_t)cap);
        if (g->ntensors) memcpy(n, g->tensors, sizeof(Tensor *) * (size_t)g->ntensors);
        g->tensors = n;
        g->cap_tensors = cap;
    }
    t = xalloc(sizeof *t);
    t->name = xstrdup(name);
    t->rank = -1;
    t->id = tensor_new_id();
    t->input_index = t->output_index = -1;
    g->tensors[g->ntensors++] = t;
    g->uses_stale = 1;
    /* insert into the index (rebuilt lazily when it fills up) */
    if (index_of.g == g && index_of.cap >= 2 * g->ntensors + 16) {
        unsigned h = hash_str(name) & (unsigned)(index_of.cap - 1);
        while (index_of.slots[h] >= 0) h = (h + 1) & (unsigned)(index_of.cap - 1);
        index_of.slots[h] = g->ntensors - 1;
    } else {
        index_of.g = NULL;
    }
    return t;
}

Node *graph_add_node(Graph *g)
{
    if (g->nnodes == g->cap_nodes) {
        int cap = g->cap_nodes ? 2 * g->cap_nodes : 64;
        Node **n = xalloc(sizeof(Node *) * (size_t)cap);
        if (g->nnodes) memcpy(n, g->nodes, sizeof(Node *) * (size_t)g->nnodes);
        g->nodes = n;
        g->cap_nodes = cap;
    }
    Node *n = xalloc(sizeof *n);
    g->nodes[g->nnodes++] = n;
    return n;
}

int64_t tensor_numel(const Tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->dims[i];
    return n;
}

size_t tensor_bytes(const Tensor *t) { return (size_t)tensor_numel(t) * dtype_size(t->dtype); }

const char *tensor_shape_str(const Tensor *t)
{
    if (t->rank < 0) return "?";
    if (t->rank == 0) return "scalar";
    char buf[256];
    size_t len = 0;
    for (int i = 0; i < t->rank && len < sizeof buf - 24; i++) {
        if (t->dims[i] < 0 && t->sym[i])
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? "x" : "", t->sym[i]);
        else if (t->dims[i] < 0)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s?", i ? "x" : "");
        else
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%lld", i ? "x" : "", (long long)t->dims[i]);
    }
    return xstrdup(buf);
}

void tensor_set_shape(Tensor *t, int rank, const int64_t *dims)
{
    if (rank > MAX_RANK) fail("tensor '%s' has rank %d; at most %d is supported", t->name, rank, MAX_RANK);
    t->rank = rank;
    int64_t n = 1, es = dtype_size(t->dtype) ? (int64_t)dtype_size(t->dtype) : 8;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) fail("tensor '%s' would get a negative dimension (%lld)", t->name, (long long)dims[i]);
        t->dims[i] = dims[i];
    }
    /* checked size: element count and bytes within what an address space can hold;
     * with a 0 dim too (the product of the others: the ops multiply them) */
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 0) continue;
        if (dims[i] > TENSOR_MAX_BYTES / es / n)
            fail("tensor '%s' of shape [%s] is too large: more than %lld bytes (2^%d), which no generated code can "
                 "address", t->name, tensor_shape_str(t), (long long)TENSOR_MAX_BYTES, TENSOR_MAX_BYTES_LOG2);
        n *= dims[i];
    }
}

void *tensor_alloc_data(Tensor *t)
{
    size_t n = tensor_bytes(t);
    t->data = xalloc(n ? n : 1);
    return t->data;
}

/* ---- attributes ------------------------------------------------------ */

const Attr *attr_find(const Node *n, const char *name)
{
    for (int i = 0; i < n->nattrs; i++)
        if (!strcmp(n->attrs[i].name, name)) return &n->attrs[i];
    return NULL;
}

int attr_has(const Node *n, const char *name) { return attr_find(n, name) != NULL; }

/* Looks NAME up in the op's schema; returns the default text or NULL and
 * the type in *type. Fails if the op does not declare the attribute. */
static const char *schema_default(const Node *n, const char *name, char *type, size_t tlen)
{
    const char *s = n->op ? n->op->attrs : "";
    size_t nl = strlen(name);
    while (*s) {
        while (*s == ' ') s++;
        const char *e = s;
        while (*e && *e != ' ') e++;
        if ((size_t)(e - s) > nl && !strncmp(s, name, nl) && s[nl] == ':') {
            const char *ty = s + nl + 1, *eq = ty;
            while (eq < e && *eq != '=') eq++;
            size_t l = (size_t)(eq - ty) < tlen - 1 ? (size_t)(eq - ty) : tlen - 1;
            memcpy(type, ty, l);
            type[l] = 0;
            if (eq < e) {
                size_t dl = (size_t)(e - eq - 1);
                char *d = xalloc(dl + 1);
                memcpy(d, eq + 1, dl);
                return d;
            }
            return NULL;
        }
        s = e;
    }
    fail("internal: attribute '%s' is not in the op table's schema for %s", name, n->op_type);
}

static const Attr *attr_typed(const Node *n, const char *name, int want, const char *want_name)
{
    const Attr *a = attr_find(n, name);
    if (a && a->type != want) fail("attribute '%s' should be %s", name, want_name);
    return a;
}

int64_t attr_i(const Node *n, const char *name)
{
    char ty[16];
    const char *d = schema_default(n, name, ty, sizeof ty);
    const Attr *a = attr_typed(n, name, AT_INT, "an integer");
    if (a) return a->i;
    if (!d) fail("required attribute '%s' is missing", name);
    return strtoll(d, NULL, 10);
}

double attr_f(const Node *n, const char *name)
{
    char ty[16];
    const char *d = schema_default(n, name, ty, sizeof ty);
    const Attr *a = attr_find(n, name);
    if (a && a->type == AT_INT) return (double)a->i;   /* lenient: some exporters write ints */
    if (a && a->type != AT_FLOAT) fail("attribute '%s' should be a float", name);
    if (a) return a->f;
    if (!d) fail("required attribute '%s' is missing", name);
    return strtod(d, NULL);
}

const char *attr_s(const Node *n, const char *name)
{
    char ty[16];
    const char *d = schema_default(n, name, ty, sizeof ty);
    const Attr *a = attr_typed(n, name, AT_STRING, "a string");
    if (a) return a->s;
    if (!d) fail("required attribute '%s' is missing", name);
    return d;
}

int attr_ints(const Node *n, const char *name, const int64_t **v)
{
    char ty[16];
    (void)schema_default(n, name, ty, sizeof ty);
    static const int64_t none[1] = {0};
    const Attr *a = attr_typed(n, name, AT_INTS, "a list of integers");
    *v = a && a->ints ? a->ints : none;   /* never NULL: callers may memcpy 0 bytes */
    return a ? a->n : 0;
}

int attr_floats(const Node *n, const char *name, const double **v)
{
    char ty[16];
    (void)schema_default(n, name, ty, sizeof ty);
    static const double none[1] = {0};
    const Attr *a = attr_typed(n, name, AT_FLOATS, "a list of floats");
    *v = a && a->floats ? a->floats : none;
    return a ? a->n : 0;
}

/* ---- targets (--target) ------------------------------------------------ */

static const char *const TARGET_NAMES[] = {"c", "avx2", "avx512", "neon", "cortex-m", "cuda"};

const char *target_name(int target)
{
    return target >= 0 && target <= TARGET_CUDA ? TARGET_NAMES[target] : "?";
}

/* The register-tiled variants keep 8 x 32 accumulators in registers: right
 * for 16 or 32 vector registers; a Cortex-M's 32 single-precision
 * registers would spill them, and their scratch panels cost RAM there, so
 * that target keeps the compact reference kernels, as CUDA does. */
int target_tiled(int target)
{
    return target != TARGET_CUDA && target != TARGET_CORTEX_M;
}
