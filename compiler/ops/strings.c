/* String tensors (DT_STRING): an element is a `const char *` to
 * NUL-terminated UTF-8, in constants (literals), the caller's buffers (a
 * string input is an array of pointers; an output an array of pointer
 * slots the run fills) and the arena. Strings a run builds (StringConcat,
 * a case change) live in the string space, an arena tensor of
 * --string-space bytes reset at the start of every run (runtime/c/strings.h).
 *
 * Ops (their ops.def lines have OPT_STRINGS): Equal on strings (the
 * numeric op's table line; ops/elementwise.c hands a string Equal to
 * infer_string_equal and lower_string_equal), StringConcat, RegexFullMatch (the pattern
 * compiled here into a Thompson NFA that the kernel runs in linear time),
 * StringNormalizer, StringSplit (shapes that depend on the data: their
 * input must be known at compile time, --bind), ai.onnx.ml LabelEncoder
 * (sorted keys, binary search), and the moves that only pass pointers
 * along (views, Shape, Size). Every other op refuses string inputs
 * (engine/inference.c). The CUDA target refuses string models. */
#include <stdlib.h>
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/strings.h"
#include "../../runtime/c/strings.h"

static int graph_strings(const Graph *g)
{
    for (int i = 0; i < g->ntensors; i++)
        if (g->tensors[i]->dtype == DT_STRING) return 1;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        for (int j = 0; j < n->nin; j++)
            if (n->in[j] && n->in[j]->dtype == DT_STRING) return 1;
        for (int j = 0; j < n->nout; j++)
            if (n->out[j] && n->out[j]->dtype == DT_STRING) return 1;
        for (int a = 0; a < n->nattrs; a++)
            if (n->attrs[a].g && graph_strings(n->attrs[a].g)) return 1;
    }
    return 0;
}

int graph_has_strings(const Graph *g) { return graph_strings(g); }

void strings_header_note(FILE *f, const struct EmitCtx *c)
{
    const char *N = c->o->name;
    fprintf(f, "/* String tensors: an input is an array of `const char *` (NUL-terminated UTF-8),\n"
               " * one per element, row-major; an output is an array of `const char *` slots that\n"
               " * the run fills with pointers into the model's constants, into the caller's input\n"
               " * strings, or into the strings the run builds. Those live in the run's arena\n"
               " * (%lld bytes of it, onnx2c --string-space) and stay valid until the next run\n"
               " * (with NAME_run_with_arena: until that arena is used again). A run whose\n"
               " * strings do not fit returns %s_ERR_STRING_SPACE (its outputs are not all\n"
               " * written). */\n#define %s_ERR_STRING_SPACE 4\n\n",
            (long long)(c->L->strings ? c->L->strings->dims[0] - O2C_STRS_HEAD : 0), N, N);
}

static void need_string(Node *n, Tensor *t)
{
    (void)n;
    if (t->dtype != DT_STRING)
        fail("input '%s' has data type %s; the op takes strings", t->name, dtype_name(t->dtype));
}

/* numpy broadcasting of x[0] and x[1] into y (O2C_STR_* slots) */
static void bcast2(KCall *c, Tensor *a, Tensor *b, Tensor *y)
{
    int same = a->rank == y->rank && b->rank == y->rank && tensor_numel(a) == tensor_numel(y) &&
               tensor_numel(b) == tensor_numel(y);
    for (int d = 0; same && d < y->rank; d++) same = a->dims[d] == y->dims[d] && b->dims[d] == y->dims[d];
    if (same) return;
    c->k[O2C_STR_RANK] = y->rank ? y->rank : 1;
    int64_t sa[MAX_RANK], sb[MAX_RANK];
    bcast_strides(a, y->rank, sa);
    bcast_strides(b, y->rank, sb);
    if (!y->rank) { c->k[O2C_STR_DIMS] = 1; return; }
    for (int d = 0; d < y->rank; d++) {
        c->k[O2C_STR_DIMS + d] = y->dims[d];
        c->k[O2C_STR_SA + d] = sa[d];
        c->k[O2C_STR_SB + d] = sb[d];
    }
}

/* ---- Equal (the numeric op's line) ------------------------------------- */

/* Equal of two string tensors (the COMPARE line's shape rule and lowering
 * hand a string Equal here: ops/elementwise.c) */
void infer_string_equal(Node *n)
{
    need_string(n, n->in[0]);
    need_string(n, n->in[1]);
    int64_t dims[MAX_RANK];
    int r = broadcast_shapes(n, n->in[0], n->in[1], dims);
    set_out(n, 0, DT_BOOL, r, dims);
}

void lower_string_equal(Node *n, Lowering *L)
{
    Tensor *y = n->out[0];
    KCall *c = lower_call(L, "o2c_str_equal", tensor_numel(y));
    c->x[0] = n->in[0];
    c->x[1] = n->in[1];
    c->y[0] = y;
    bcast2(c, n->in[0], n->in[1], y);
}

/* ---- StringConcat ------------------------------------------------------ */

void infer_string_concat(Node *n)
{
    need_string(n, n->in[0]);
    need_string(n, n->in[1]);
    int64_t dims[MAX_RANK];
    int r = broadcast_shapes(n, n->in[0], n->in[1], dims);
    set_out(n, 0, DT_STRING, r, dims);
}

void lower_string_concat(Node *n, Lowering *L)
{
    Tensor *y = n->out[0];
    if (!tensor_numel(y)) return;
    KCall *c = lower_call(L, "o2c_str_concat", 1);
    c->x[0] = n->in[0];
    c->x[1] = n->in[1];
    c->y[0] = y;
    bcast2(c, n->in[0], n->in[1], y);
    c->k[O2C_STR_N] = tensor_numel(y);
    c->k[O2C_STR_CAP] = lower_string_space(L, c);
}

/* ---- StringNormalizer -------------------------------------------------- */

static int case_action(Node *n)
{
    const char *a = attr_s(n, "case_change_action");
    if (!strcmp(a, "NONE")) return -1;
    if (!strcmp(a, "LOWER")) return 0;
    if (!strcmp(a, "UPPER")) return 1;
    fail("case_change_action '%s' is not one of NONE, LOWER, UPPER", a);
}

static char *case_changed(const char *s, int upper)
{
    char *d = xalloc((size_t)o2c_str_case(s, NULL, upper) + 1);
    o2c_str_case(s, d, upper);
    return d;
}

static int nstopwords(Node *n, char ***words)
{
    const Attr *a = attr_find(n, "stopwords");
    if (a && a->type != AT_STRINGS) fail("attribute 'stopwords' should be a list of strings");
    *words = a ? a->strings : NULL;
    return a ? a->n : 0;
}

void infer_string_normalizer(Node *n)
{
    Tensor *x = n->in[0];
    need_string(n, x);
    if (x->rank != 1 && !(x->rank == 2 && x->dims[0] == 1))
        fail("input '%s' has shape %s; StringNormalizer takes [C] or [1, C]", x->name, tensor_shape_str(x));
    const char *loc = attr_find(n, "locale") ? attr_s(n, "locale") : "";
    (void)loc;   /* the case mapping is the same for every locale (runtime/c/strings.h: o2c_case_cp) */
    int act = case_action(n), cs = attr_i(n, "is_case_sensitive") != 0;
    char **stop;
    int ns = nstopwords(n, &stop);
    if (!ns) {   /* the shape does not depend on the data */
        out_like(n, 0, x);
        return;
    }
    /* stopwords: how many elements stay depends on the values */
    need_const(n, x, "the input of a StringNormalizer with stopwords (its output length depends on the values)");
    int64_t C = tensor_numel(x), kept = 0;
    const char *const *xs = x->data;
    const char **out = xalloc(sizeof(char *) * (size_t)(C + 1));
    char **stop_cmp = xalloc(sizeof(char *) * (size_t)ns);
    for (int w = 0; w < ns; w++) stop_cmp[w] = cs ? stop[w] : case_changed(stop[w], 0);
    for (int64_t i = 0; i < C; i++) {
        const char *cmp = cs ? xs[i] : case_changed(xs[i], 0);
        int drop = 0;
        for (int w = 0; w < ns && !drop; w++) drop = !strcmp(cmp, stop_cmp[w]);
        if (drop) continue;
        out[kept++] = act < 0 ? xs[i] : case_changed(xs[i], act);
    }
    if (!kept) out[kept++] = "";   /* all dropped: one empty string */
    int64_t dims[2] = {1, kept};
    set_out(n, 0, DT_STRING, x->rank, x->rank == 1 ? dims + 1 : dims);
    const char **d = tensor_alloc_data(n->out[0]);
    memcpy(d, out, sizeof(char *) * (size_t)kept);
}

void lower_string_normalizer(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int act = case_action(n);
    if (!tensor_numel(y)) return;
    if (act < 0) { lower_copy(L, x, y); return; }
    KCall *c = lower_call(L, "o2c_str_case_k", 1);
    c->x[0] = x;
    c->y[0] = y;
    c->k[O2C_STRCASE_N] = tensor_numel(y);
    c->k[O2C_STRCASE_UPPER] = act;
    c->k[O2C_STRCASE_CAP] = lower_string_space(L, c);
}

/* ---- StringSplit -------------------------------------------------------- */

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

/* the pieces of s (Python's str.split semantics, as the spec describes) */
static int64_t split_one(const char *s, const char *delim, int64_t maxsplit, const char ***pieces)
{
    size_t len = strlen(s), dl = delim ? strlen(delim) : 0;
    const char **p = xalloc(sizeof(char *) * (len + 2));
    int64_t np = 0, splits = 0;
    if (!dl) {   /* runs of whitespace; leading and trailing ones dropped */
        size_t i = 0;
        while (i < len) {
            while (i < len && is_space(s[i])) i++;
            if (i == len) break;
            size_t j = i;
            if (maxsplit >= 0 && splits == maxsplit) {
                j = len;   /* the rest, trailing whitespace included (as Python's str.split) */
            } else {
                while (j < len && !is_space(s[j])) j++;
            }
            char *w = xalloc(j - i + 1);
            memcpy(w, s + i, j - i);
            p[np++] = w;
            splits++;
            i = j;
        }
    } else {
        size_t i = 0;
        for (;;) {
            const char *hit = maxsplit >= 0 && splits == maxsplit ? NULL : strstr(s + i, delim);
            size_t j = hit ? (size_t)(hit - s) : len;
            char *w = xalloc(j - i + 1);
            memcpy(w, s + i, j - i);
            p[np++] = w;
            if (!hit) break;
            splits++;
            i = j + dl;
        }
    }
    *pieces = p;
    return np;
}

void infer_string_split(Node *n)
{
    Tensor *x = n->in[0];
    need_string(n, x);
    if (x->rank >= MAX_RANK) fail("input '%s' has rank %d; the output's rank (one more) is at most %d", x->name, x->rank, MAX_RANK);
    need_const(n, x, "the input of StringSplit (its output shape depends on the values)");
    const char *delim = attr_find(n, "delimiter") ? attr_s(n, "delimiter") : NULL;
    int64_t maxsplit = attr_find(n, "maxsplit") ? attr_i(n, "maxsplit") : -1;
    if (attr_find(n, "maxsplit") && maxsplit < 0) fail("maxsplit is %lld; it must not be negative", (long long)maxsplit);
    int64_t ne = tensor_numel(x), most = 0;
    const char ***pieces = xalloc(sizeof(char **) * (size_t)(ne + 1));
    int64_t *counts = xalloc(sizeof(int64_t) * (size_t)(ne + 1));
    for (int64_t i = 0; i < ne; i++) {
        counts[i] = split_one(((const char *const *)x->data)[i], delim, maxsplit, &pieces[i]);
        if (counts[i] > most) most = counts[i];
    }
    int64_t dims[MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    dims[x->rank] = most;
    set_out(n, 0, DT_STRING, x->rank + 1, dims);
    const char **y = tensor_alloc_data(n->out[0]);
    for (int64_t i = 0; i < ne; i++)
        for (int64_t k = 0; k < most; k++) y[i * most + k] = k < counts[i] ? pieces[i][k] : "";
    if (n->nout > 1 && n->out[1]) {
        set_out(n, 1, DT_INT64, x->rank, x->dims);
        int64_t *cnt = tensor_alloc_data(n->out[1]);
        if (ne) memcpy(cnt, counts, sizeof(int64_t) * (size_t)ne);
    }
}

void lower_string_split(Node *n, Lowering *L)
{
    (void)L;
    fail("internal: StringSplit '%s' was not computed at compile time", n->name);
}

/* ---- LabelEncoder (ai.onnx.ml) ------------------------------------------ */

/* A list attribute or tensor of keys or values: its type, count, and the
 * elements as strings, int64 or double. */
typedef struct LeList {
    int dtype, n;
    const char **s;
    int64_t *i;
    double *f;
    const Tensor *t;   /* from a tensor attribute: the values as they are */
} LeList;

static int le_list(Node *n, const char *prefix, LeList *l)
{
    static const char *const SUFFIX[] = {"strings", "int64s", "floats", "tensor"};
    int found = 0;
    memset(l, 0, sizeof *l);
    for (int k = 0; k < 4; k++) {
        const Attr *a = attr_find(n, xfmt("%s_%s", prefix, SUFFIX[k]));
        if (!a) continue;
        if (found++) fail("more than one %s_* attribute is set", prefix);
        if (k == 0) {
            if (a->type != AT_STRINGS) fail("%s_strings should be a list of strings", prefix);
            l->dtype = DT_STRING; l->n = a->n; l->s = (const char **)a->strings;
        } else if (k == 1) {
            if (a->type != AT_INTS) fail("%s_int64s should be a list of integers", prefix);
            l->dtype = DT_INT64; l->n = a->n; l->i = a->ints;
        } else if (k == 2) {
            if (a->type != AT_FLOATS) fail("%s_floats should be a list of floats", prefix);
            l->dtype = DT_FLOAT; l->n = a->n; l->f = a->floats;
        } else {
            if (a->type != AT_TENSOR || !a->t) fail("%s_tensor should be a tensor", prefix);
            l->t = a->t;
            l->dtype = a->t->dtype;
            l->n = (int)tensor_numel(a->t);
        }
    }
    if (!found) fail("no %s_* attribute is set", prefix);
    static const int OK[] = {DT_STRING, DT_INT64, DT_INT32, DT_INT16, DT_FLOAT, DT_DOUBLE, 0};
    int ok = 0;
    for (int k = 0; OK[k]; k++) ok |= OK[k] == l->dtype;
    if (!ok) fail("%s are %s; LabelEncoder takes string, int64, int32, int16, float or double", prefix, dtype_name(l->dtype));
    return l->n;
}

void infer_label_encoder(Node *n)
{
    Tensor *x = n->in[0];
    LeList k, v;
    le_list(n, "keys", &k);
    le_list(n, "values", &v);
    if (k.n != v.n) fail("%d keys and %d values: the lists must have the same length", k.n, v.n);
    if (k.dtype != x->dtype)
        fail("input '%s' is %s but the keys are %s", x->name, dtype_name(x->dtype), dtype_name(k.dtype));
    out_like(n, 0, x);
    n->out[0]->dtype = v.dtype;
}

static const char *le_key_s(const LeList *l, int i) { return l->t ? ((const char *const *)l->t->data)[i] : l->s[i]; }
static int64_t le_key_i(const LeList *l, int i) { return l->t ? elem_i64(l->t->dtype, l->t->data, i) : l->i[i]; }
static double le_key_f(const LeList *l, int i)
{
    if (l->t) return elem_f64(l->t->dtype, l->t->data, i);
    return l->dtype == DT_FLOAT ? (double)(float)l->f[i] : l->f[i];
}

static const LeList *sort_keys;
static int le_cmp(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb, c = 0;
    const LeList *k = sort_keys;
    if (k->dtype == DT_STRING) c = strcmp(le_key_s(k, a), le_key_s(k, b));
    else if (k->dtype == DT_FLOAT || k->dtype == DT_DOUBLE) {
        double x = le_key_f(k, a), y = le_key_f(k, b);
        c = x < y ? -1 : x > y;
    } else {
        int64_t x = le_key_i(k, a), y = le_key_i(k, b);
        c = x < y ? -1 : x > y;
    }
    return c ? c : (a > b) - (a < b);   /* equal keys: in the order given (the last one wins) */
}

static int le_same(const LeList *k, int a, int b)
{
    if (k->dtype == DT_STRING) return !strcmp(le_key_s(k, a), le_key_s(k, b));
    if (k->dtype == DT_FLOAT || k->dtype == DT_DOUBLE) return le_key_f(k, a) == le_key_f(k, b);
    return le_key_i(k, a) == le_key_i(k, b);
}

/* value i (or the default, i < 0) into element `at` of the values table */
static void le_put_value(Node *n, const LeList *v, int i, Tensor *tab, int64_t at)
{
    if (i >= 0) {
        if (v->t) memcpy((char *)tab->data + at * (int64_t)dtype_size(v->dtype),
                         (const char *)v->t->data + i * (int64_t)dtype_size(v->dtype), dtype_size(v->dtype));
        else if (v->dtype == DT_STRING) ((const char **)tab->data)[at] = v->s[i];
        else if (v->dtype == DT_INT64) ((int64_t *)tab->data)[at] = v->i[i];
        else ((float *)tab->data)[at] = (float)v->f[i];
        return;
    }
    const Attr *dt = attr_find(n, "default_tensor");
    if (dt) {
        if (dt->type != AT_TENSOR || !dt->t || tensor_numel(dt->t) != 1 || dt->t->dtype != v->dtype)
            fail("default_tensor must hold one value of the values' type (%s)", dtype_name(v->dtype));
        memcpy((char *)tab->data + at * (int64_t)dtype_size(v->dtype), dt->t->data, dtype_size(v->dtype));
        return;
    }
    if (v->dtype == DT_STRING) ((const char **)tab->data)[at] = v->t ? "_Unused" : xstrdup(attr_s(n, "default_string"));
    else if (v->dtype == DT_FLOAT) ((float *)tab->data)[at] = v->t ? -0.0f : (float)attr_f(n, "default_float");
    else if (v->dtype == DT_DOUBLE) ((double *)tab->data)[at] = -0.0;
    else if (v->dtype == DT_INT64) ((int64_t *)tab->data)[at] = v->t ? -1 : attr_i(n, "default_int64");
    else elem_set(v->dtype, tab->data, at, -1.0);   /* int32, int16 values: the spec's default */
}

void lower_label_encoder(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    LeList k, v;
    le_list(n, "keys", &k);
    le_list(n, "values", &v);
    if (!tensor_numel(y)) return;
    int *order = xalloc(sizeof(int) * (size_t)(k.n + 1)), m = 0, nan_at = -1;
    for (int i = 0; i < k.n; i++) {
        if ((k.dtype == DT_FLOAT || k.dtype == DT_DOUBLE) && le_key_f(&k, i) != le_key_f(&k, i)) { nan_at = i; continue; }
        order[m++] = i;
    }
    sort_keys = &k;
    qsort(order, (size_t)m, sizeof(int), le_cmp);
    int u = 0;   /* one entry a key: the last one given */
    for (int i = 0; i < m; i++) {
        if (u && le_same(&k, order[u - 1], order[i])) order[u - 1] = order[i];
        else order[u++] = order[i];
    }
    int64_t nk = u, nv = u + 1 + (nan_at >= 0);
    int kdt = k.dtype == DT_STRING ? DT_STRING : (k.dtype == DT_FLOAT || k.dtype == DT_DOUBLE) ? DT_DOUBLE : DT_INT64;
    int64_t nk1 = nk ? nk : 1;
    Tensor *keys = lower_const(L, "keys", kdt, 1, &nk1);
    Tensor *vals = lower_const(L, "values", v.dtype, 1, &nv);
    for (int i = 0; i < u; i++) {
        if (kdt == DT_STRING) ((const char **)keys->data)[i] = le_key_s(&k, order[i]);
        else if (kdt == DT_DOUBLE) ((double *)keys->data)[i] = le_key_f(&k, order[i]);
        else ((int64_t *)keys->data)[i] = le_key_i(&k, order[i]);
        le_put_value(n, &v, order[i], vals, i);
    }
    if (!nk && kdt == DT_STRING) ((const char **)keys->data)[0] = "";
    le_put_value(n, &v, -1, vals, u);   /* the default, after the keys' values */
    if (nan_at >= 0) le_put_value(n, &v, nan_at, vals, u + 1);
    KCall *c = lower_call(L, "o2c_label_encode", tensor_numel(y));
    c->x[0] = x;
    c->x[1] = keys;
    c->x[2] = vals;
    c->y[0] = y;
    c->k[O2C_LE_IN] = x->dtype == DT_STRING ? O2C_LE_STR : x->dtype == DT_INT64 ? O2C_LE_I64 : x->dtype == DT_INT32 ? O2C_LE_I32
                    : x->dtype == DT_INT16 ? O2C_LE_I16 : x->dtype == DT_FLOAT ? O2C_LE_F32 : O2C_LE_F64;
    c->k[O2C_LE_NKEYS] = nk;
    c->k[O2C_LE_NAN] = nan_at >= 0 ? u + 1 : -1;
    c->k[O2C_LE_VSTR] = v.dtype == DT_STRING;
    c->k[O2C_LE_VSIZE] = v.dtype == DT_STRING ? 0 : (int64_t)dtype_size(v.dtype);
}

/* ---- RegexFullMatch ----------------------------------------------------
 * The pattern (RE2 syntax) is parsed here into a tree and compiled into a
 * Thompson NFA: a program of O2C_RE_* instructions (runtime/c/params/
 * strings.h) that o2c_regex_full runs as a set of states, one code point
 * of the input at a time (linear time, no backtracking). Supported:
 * literals (UTF-8), '.', classes [a-z\d] and [^...], \d \D \w \W \s \S,
 * escapes of punctuation and \t \n \r \f \v \a \xHH \x{H...}, groups (...)
 * (?:...) (?P<name>...), alternation, * + ? {n} {n,} {n,m} (and their lazy
 * forms: the same for a full match), ^ $ \A \z \b \B. Refused with a
 * message: flags (?i) & co, \p{...} classes, [[:alpha:]], \C, \Q...\E,
 * back references. */

enum { RX_LIT, RX_ANY, RX_CLASS, RX_CAT, RX_ALT, RX_REP, RX_ASSERT, RX_EMPTY };

typedef struct Rx {
    int kind;
    int32_t c;               /* RX_LIT: code point; RX_ASSERT: O2C_RE_BOL & co */
    int neg, nr;             /* RX_CLASS: negated, ranges */
    int32_t *r;              /* lo, hi pairs */
    struct Rx **sub;         /* RX_CAT, RX_ALT: parts; RX_REP: sub[0] */
    int nsub;
    int min, max;            /* RX_REP: max -1 unbounded */
} Rx;

typedef struct RxParse {
    const unsigned char *s;
    size_t pos, len;
    const char *pattern;
} RxParse;

#define RX_MAX_REPEAT 1000
#define RX_MAX_PROGRAM (1 << 20)

#ifdef __GNUC__
__attribute__((noreturn))
#endif
static void rx_fail(RxParse *p, const char *why)
{
    fail("pattern '%s': %s (at byte %zu); onnx2c supports literals, ., classes, \\d \\w \\s \\b, groups, alternation, "
         "* + ? {m,n} and ^ $ of RE2's syntax", c_comment(p->pattern), why, p->pos);
}

static Rx *rx_new(int kind)
{
    Rx *r = xalloc(sizeof *r);
    r->kind = kind;
    return r;
}

static void rx_add(Rx *r, Rx *sub)
{
    Rx **n = xalloc(sizeof(Rx *) * (size_t)(r->nsub + 1));
    if (r->nsub) memcpy(n, r->sub, sizeof(Rx *) * (size_t)r->nsub);
    n[r->nsub++] = sub;
    r->sub = n;
}

static void rx_range(Rx *r, int32_t lo, int32_t hi)
{
    int32_t *n = xalloc(sizeof(int32_t) * (size_t)(2 * r->nr + 2));
    if (r->nr) memcpy(n, r->r, sizeof(int32_t) * (size_t)(2 * r->nr));
    n[2 * r->nr] = lo;
    n[2 * r->nr + 1] = hi;
    r->nr++;
    r->r = n;
}

static int32_t rx_next(RxParse *p)
{
    int32_t c;
    p->pos += (size_t)o2c_utf8_next(p->s + p->pos, &c);
    return c;
}

/* \d \w \s and their negations as ranges added to cls; 0 if e is none of them */
static int rx_perl_class(Rx *cls, int32_t e, int in_class, RxParse *p)
{
    static const int32_t D[] = {'0', '9'}, W[] = {'0', '9', 'A', 'Z', '_', '_', 'a', 'z'},
                         S[] = {'\t', '\n', '\f', '\r', ' ', ' '};
    const int32_t *set;
    int n;
    switch (e) {
    case 'd': case 'D': set = D; n = 1; break;
    case 'w': case 'W': set = W; n = 4; break;
    case 's': case 'S': set = S; n = 3; break;
    default: return 0;
    }
    if (e >= 'a') {
        for (int i = 0; i < n; i++) rx_range(cls, set[2 * i], set[2 * i + 1]);
        return 1;
    }
    if (in_class && cls->neg) rx_fail(p, "a negated class escape (\\D, \\W, \\S) inside a negated class is not supported");
    /* the complement of the sorted ranges */
    int32_t lo = 0;
    for (int i = 0; i < n; i++) {
        if (set[2 * i] > lo) rx_range(cls, lo, set[2 * i] - 1);
        lo = set[2 * i + 1] + 1;
    }
    rx_range(cls, lo, 0x10ffff);
    return 1;
}

static int rx_hex(int32_t c) { return (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1; }

/* an escaped literal after '\\' (not a class or an assertion) */
static int32_t rx_escape_lit(RxParse *p, int32_t e)
{
    switch (e) {
    case 't': return '\t';
    case 'n': return '\n';
    case 'r': return '\r';
    case 'f': return '\f';
    case 'v': return '\v';
    case 'a': return 7;
    case '0': return 0;
    case 'x': {
        int32_t v = 0;
        if (p->pos < p->len && p->s[p->pos] == '{') {
            p->pos++;
            int nd = 0;
            while (p->pos < p->len && p->s[p->pos] != '}') {
                int h = rx_hex(p->s[p->pos++]);
                if (h < 0 || ++nd > 6) rx_fail(p, "a bad \\x{...} escape");
                v = v * 16 + h;
            }
            if (p->pos >= p->len || !nd) rx_fail(p, "a bad \\x{...} escape");
            p->pos++;
        } else {
            for (int k = 0; k < 2; k++) {
                int h = p->pos < p->len ? rx_hex(p->s[p->pos]) : -1;
                if (h < 0) rx_fail(p, "a bad \\x escape");
                p->pos++;
                v = v * 16 + h;
            }
        }
        if (v > 0x10ffff) rx_fail(p, "a code point beyond U+10FFFF");
        return v;
    }
    default:
        if (e < 0x80 && !((e >= '0' && e <= '9') || (e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')))
            return e;   /* escaped punctuation */
        rx_fail(p, xfmt("the escape \\%c is not supported", (char)(e < 0x80 ? e : '?')));
    }
}

static Rx *rx_class(RxParse *p)
{
    Rx *cls = rx_new(RX_CLASS);
    if (p->pos < p->len && p->s[p->pos] == '^') { cls->neg = 1; p->pos++; }
    int first = 1;
    for (;;) {
        if (p->pos >= p->len) rx_fail(p, "a class without its closing ']'");
        if (p->s[p->pos] == ']' && !first) { p->pos++; break; }
        first = 0;
        if (p->s[p->pos] == '[' && p->pos + 1 < p->len && p->s[p->pos + 1] == ':')
            rx_fail(p, "POSIX classes ([:alpha:]) are not supported");
        int32_t lo = rx_next(p);
        if (lo == '\\') {
            if (p->pos >= p->len) rx_fail(p, "a trailing backslash");
            int32_t e = rx_next(p);
            if (rx_perl_class(cls, e, 1, p)) continue;
            if (e == 'p' || e == 'P') rx_fail(p, "Unicode classes (\\p) are not supported");
            lo = rx_escape_lit(p, e);
        }
        int32_t hi = lo;
        if (p->pos + 1 < p->len && p->s[p->pos] == '-' && p->s[p->pos + 1] != ']') {
            p->pos++;
            hi = rx_next(p);
            if (hi == '\\') {
                if (p->pos >= p->len) rx_fail(p, "a trailing backslash");
                hi = rx_escape_lit(p, rx_next(p));
            }
            if (hi < lo) rx_fail(p, "a class range whose end is below its start");
        }
        rx_range(cls, lo, hi);
    }
    return cls;
}

static Rx *rx_alt(RxParse *p, int depth);

static Rx *rx_atom(RxParse *p, int depth)
{
    int32_t c = rx_next(p);
    switch (c) {
    case '(': {
        if (p->pos < p->len && p->s[p->pos] == '?') {
            if (p->pos + 1 < p->len && p->s[p->pos + 1] == ':') p->pos += 2;
            else if (p->pos + 2 < p->len && (p->s[p->pos + 1] == 'P' || p->s[p->pos + 1] == '<')) {
                p->pos += p->s[p->pos + 1] == 'P' ? 2 : 1;
                if (p->s[p->pos] != '<') rx_fail(p, "a bad named group");
                while (p->pos < p->len && p->s[p->pos] != '>') p->pos++;
                if (p->pos >= p->len) rx_fail(p, "a named group without its '>'");
                p->pos++;
            } else rx_fail(p, "flags and other (?...) groups are not supported");
        }
        Rx *r = rx_alt(p, depth + 1);
        if (p->pos >= p->len || p->s[p->pos] != ')') rx_fail(p, "a group without its closing ')'");
        p->pos++;
        return r;
    }
    case '.': return rx_new(RX_ANY);
    case '[': return rx_class(p);
    case '^': case '$': {
        Rx *r = rx_new(RX_ASSERT);
        r->c = c == '^' ? O2C_RE_BOL : O2C_RE_EOL;
        return r;
    }
    case '*': case '+': case '?': rx_fail(p, "a repetition operator without an operand");
    case '\\': {
        if (p->pos >= p->len) rx_fail(p, "a trailing backslash");
        int32_t e = rx_next(p);
        Rx *r;
        if (e == 'b' || e == 'B' || e == 'A' || e == 'z') {
            r = rx_new(RX_ASSERT);
            r->c = e == 'b' ? O2C_RE_WORDB : e == 'B' ? O2C_RE_NWORDB : e == 'A' ? O2C_RE_BOL : O2C_RE_EOL;
            return r;
        }
        r = rx_new(RX_CLASS);
        if (rx_perl_class(r, e, 0, p)) return r;
        if (e == 'p' || e == 'P') rx_fail(p, "Unicode classes (\\p) are not supported");
        if (e == 'Q' || e == 'C' || e == 'Z' || (e >= '1' && e <= '9'))
            rx_fail(p, xfmt("\\%c is not supported", (char)e));
        r = rx_new(RX_LIT);
        r->c = rx_escape_lit(p, e);
        return r;
    }
    default: {
        Rx *r = rx_new(RX_LIT);
        r->c = c;
        return r;
    }
    }
}

/* {n}, {n,}, {n,m} at p->pos: 1 and the bounds, or 0 (then '{' is a literal, as in RE2) */
static int rx_braces(RxParse *p, int *min, int *max)
{
    size_t q = p->pos + 1;
    long a = 0, b;
    int nd = 0;
    while (q < p->len && p->s[q] >= '0' && p->s[q] <= '9') { if (a < 100000) a = a * 10 + (p->s[q] - '0'); q++; nd++; }
    if (!nd) return 0;
    b = a;
    if (q < p->len && p->s[q] == ',') {
        q++;
        b = -1;
        int md = 0;
        long m = 0;
        while (q < p->len && p->s[q] >= '0' && p->s[q] <= '9') { if (m < 100000) m = m * 10 + (p->s[q] - '0'); q++; md++; }
        if (md) b = m;
    }
    if (q >= p->len || p->s[q] != '}') return 0;
    if (a > RX_MAX_REPEAT || b > RX_MAX_REPEAT) rx_fail(p, "a repetition count above 1000");
    if (b >= 0 && b < a) rx_fail(p, "a repetition {n,m} with m below n");
    p->pos = q + 1;
    *min = (int)a;
    *max = (int)b;
    return 1;
}

static Rx *rx_repeat(RxParse *p, int depth)
{
    Rx *a = rx_atom(p, depth);
    int reps = 0;
    while (p->pos < p->len) {
        int min, max;
        unsigned char c = p->s[p->pos];
        if (c == '*') { min = 0; max = -1; p->pos++; }
        else if (c == '+') { min = 1; max = -1; p->pos++; }
        else if (c == '?') { min = 0; max = 1; p->pos++; }
        else if (c == '{' && rx_braces(p, &min, &max)) {}
        else break;
        if (reps++) rx_fail(p, "a repetition of a repetition (write a group around the first)");
        if (a->kind == RX_ASSERT) rx_fail(p, "a repetition of an assertion (^, $, \\b)");
        if (p->pos < p->len && p->s[p->pos] == '?') p->pos++;   /* lazy: the same set of full matches */
        Rx *r = rx_new(RX_REP);
        rx_add(r, a);
        r->min = min;
        r->max = max;
        a = r;
    }
    return a;
}

static Rx *rx_alt(RxParse *p, int depth)
{
    if (depth > 100) rx_fail(p, "groups nested more than 100 deep");
    Rx *alt = rx_new(RX_ALT);
    for (;;) {
        Rx *cat = rx_new(RX_CAT);
        while (p->pos < p->len && p->s[p->pos] != '|' && p->s[p->pos] != ')') rx_add(cat, rx_repeat(p, depth));
        rx_add(alt, cat);
        if (p->pos < p->len && p->s[p->pos] == '|') { p->pos++; continue; }
        break;
    }
    return alt->nsub == 1 ? alt->sub[0] : alt;
}

typedef struct RxProg { int32_t *w; int n, cap; RxParse *p; } RxProg;

static int rx_emit(RxProg *g, int32_t v)
{
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 256;
        if (cap > RX_MAX_PROGRAM) rx_fail(g->p, "the compiled pattern is too large (over 1M instructions)");
        int32_t *w = xalloc(sizeof(int32_t) * (size_t)cap);
        if (g->n) memcpy(w, g->w, sizeof(int32_t) * (size_t)g->n);
        g->w = w;
        g->cap = cap;
    }
    g->w[g->n] = v;
    return g->n++;
}

static void rx_compile(RxProg *g, const Rx *r)
{
    switch (r->kind) {
    case RX_LIT: rx_emit(g, O2C_RE_CHAR); rx_emit(g, r->c); break;
    case RX_ANY: rx_emit(g, O2C_RE_ANY); break;
    case RX_CLASS:
        rx_emit(g, O2C_RE_CLASS); rx_emit(g, r->neg); rx_emit(g, r->nr);
        for (int i = 0; i < 2 * r->nr; i++) rx_emit(g, r->r[i]);
        break;
    case RX_ASSERT: rx_emit(g, O2C_RE_ASSERT); rx_emit(g, r->c); break;
    case RX_CAT: for (int i = 0; i < r->nsub; i++) rx_compile(g, r->sub[i]); break;
    case RX_ALT: {
        /* SPLIT a next; a: sub; JMP end; next: SPLIT ... ; the last one plain */
        int *jumps = xalloc(sizeof(int) * (size_t)r->nsub);
        for (int i = 0; i < r->nsub; i++) {
            int split = -1;
            if (i + 1 < r->nsub) { split = rx_emit(g, O2C_RE_SPLIT); rx_emit(g, 0); rx_emit(g, 0); g->w[split + 1] = g->n; }
            rx_compile(g, r->sub[i]);
            if (i + 1 < r->nsub) {
                jumps[i] = rx_emit(g, O2C_RE_JMP);
                rx_emit(g, 0);
                g->w[split + 2] = g->n;
            }
        }
        for (int i = 0; i + 1 < r->nsub; i++) g->w[jumps[i] + 1] = g->n;
        break;
    }
    case RX_REP: {
        for (int i = 0; i < r->min; i++) rx_compile(g, r->sub[0]);
        if (r->max < 0) {   /* L: SPLIT body out; body: x; JMP L */
            int l = rx_emit(g, O2C_RE_SPLIT);
            rx_emit(g, l + 3);
            rx_emit(g, 0);
            rx_compile(g, r->sub[0]);
            rx_emit(g, O2C_RE_JMP);
            rx_emit(g, l);
            g->w[l + 2] = g->n;
        } else {
            int opt = r->max - r->min, *splits = xalloc(sizeof(int) * (size_t)(opt + 1));
            for (int i = 0; i < opt; i++) {   /* SPLIT body end; body: x; ... */
                splits[i] = rx_emit(g, O2C_RE_SPLIT);
                rx_emit(g, splits[i] + 3);
                rx_emit(g, 0);
                rx_compile(g, r->sub[0]);
            }
            for (int i = 0; i < opt; i++) g->w[splits[i] + 2] = g->n;
        }
        break;
    }
    default: break;   /* RX_EMPTY */
    }
}

static RxProg rx_program(Node *n)
{
    const char *pat = attr_s(n, "pattern");
    RxParse p = {(const unsigned char *)pat, 0, strlen(pat), pat};
    Rx *r = rx_alt(&p, 0);
    if (p.pos < p.len) rx_fail(&p, "an unmatched ')'");
    RxProg g = {NULL, 0, 0, &p};
    rx_compile(&g, r);
    rx_emit(&g, O2C_RE_MATCH);
    g.p = NULL;
    return g;
}

void infer_regex_full_match(Node *n)
{
    need_string(n, n->in[0]);
    (void)rx_program(n);   /* refuses an unsupported pattern at once */
    set_out(n, 0, DT_BOOL, n->in[0]->rank, n->in[0]->dims);
}

void lower_regex_full_match(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    if (!tensor_numel(y)) return;
    RxProg g = rx_program(n);
    int64_t len = g.n, scratch = 5 * (int64_t)g.n + 2;
    Tensor *prog = lower_const(L, "regex", DT_INT32, 1, &len);
    memcpy(prog->data, g.w, sizeof(int32_t) * (size_t)g.n);
    KCall *c = lower_call(L, "o2c_regex_full", 1);
    c->x[0] = x;
    c->x[1] = prog;
    c->y[0] = y;
    c->y[1] = lower_temp(L, DT_INT32, 1, &scratch);
    c->k[O2C_RE_N] = tensor_numel(y);
    c->k[O2C_RE_STATES] = g.n;
}
