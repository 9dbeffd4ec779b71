/* FusedElementwise (domain onnx2c, made by passes/fuse_elementwise.c): a
 * chain or tree of elementwise steps computed in one loop over the output
 * elements. The node's attributes are a small program (see ops.def):
 *
 *   ops     "Sigmoid Mul Add": each step's op, by its kernel-table name
 *   args    two value indices per step (-1: none); values 0..nin-1 are the
 *           inputs, value nin+s is the result of step s
 *   types   each step's result type (DT_*)
 *   params  three reals per step: A, B, C of a unary expression
 *   outs    the values written to the outputs (the last step first)
 *
 * The lowering generates one kernel whose loop body composes the op
 * table's expressions (the same text the per-op kernels are made from, in
 * the same element types, so the results are identical), with each
 * input's broadcast offset computed once per element. The kernel's name is
 * a hash of its text: identical chains share one function. The compiler
 * runs the same program with ew_kernel_run, which calls the per-op
 * kernels on blocks of elements (constant folding, graph_evaluate). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/elementwise.h"


/* ---- the op table's expressions ---------------------------------------- */

enum { EW_UNARY = 1, EW_BINARY, EW_COMPARE, EW_CAST };

typedef struct EwExpr {
    const char *name;
    int kind;
    const char *expr;
    const char *schema;   /* UNARY: the real attributes that are A, B, C */
} EwExpr;

static const EwExpr EXPRS[] = {
#define UNARY(Name, TS, schema, expr, ...) {#Name, EW_UNARY, #expr, schema},
#define KUNARY(Name, TS, expr) {#Name, EW_UNARY, #expr, ""},
#define BINARY(Name, TS, expr, ...) {#Name, EW_BINARY, #expr, ""},
#define KBINARY(Name, TS, expr) {#Name, EW_BINARY, #expr, ""},
#define COMPARE(Name, TS, expr, ...) {#Name, EW_COMPARE, #expr, ""},
#include "../ops.def"
};

/* An op a fused loop can compute: in the table, its expression reads only
 * x (or a, b) and A, B, C (not the kernel parameters), and it is not one
 * of the kernels that are no op of their own and have no decomposition. */
static const EwExpr *ew_expr(const char *name)
{
    static const char *const NOT[] = {"GeluErf", "GeluTanh", "Scale", "ModS", "FmodS", "ModU", "Fmod", "Shl", "Shr", NULL};
    for (int i = 0; NOT[i]; i++)
        if (!strcmp(NOT[i], name)) return NULL;
    for (size_t i = 0; i < sizeof EXPRS / sizeof EXPRS[0]; i++)
        if (!strcmp(EXPRS[i].name, name)) return strstr(EXPRS[i].expr, "p->") ? NULL : &EXPRS[i];
    return NULL;
}

/* ---- the program --------------------------------------------------------- */

#define EW_MAX_STEPS 64

typedef struct ProgStep {
    const char *op;          /* kernel-table name, or "Cast" */
    const EwExpr *e;         /* NULL for Cast */
    int a, b;                /* value indices (b = -1: unary) */
    int dtype;               /* result type */
    double abc[O2C_EW_NF];   /* a unary op's A, B, C (its O2C_EW_FA.. parameters) */
    o2c_kernel_fn fn;        /* the per-op kernel (the interpreter) */
} ProgStep;

enum { IN_FULL, IN_SCALAR, IN_BCAST };

typedef struct EwProg {
    int nin, nsteps, nout;
    int vtype[O2C_MAX_X + EW_MAX_STEPS];   /* type of each value */
    int kind[O2C_MAX_X];                   /* IN_*: how input j is read */
    int bidx[O2C_MAX_X];                   /* IN_BCAST: its stride block in k[] */
    int64_t inner[O2C_MAX_X];              /* IN_BCAST: its stride along the last axis, 0 or 1 (-1: another) */
    int outs[O2C_MAX_Y];
    ProgStep s[EW_MAX_STEPS];
} EwProg;

/* Reads and checks the node's program; the inputs' types from its tensors. */
static EwProg *ew_parse(Node *n)
{
    EwProg *P = xalloc(sizeof *P);
    const char *ops = attr_s(n, "ops");
    const int64_t *args, *types, *outs;
    const double *params;
    int na = attr_ints(n, "args", &args), nt = attr_ints(n, "types", &types);
    int np = attr_floats(n, "params", &params), no = attr_ints(n, "outs", &outs);
    P->nin = n->nin;
    if (P->nin > O2C_MAX_X) fail("at most %d inputs", O2C_MAX_X);
    for (int j = 0; j < n->nin; j++) {
        Tensor *t = need_in(n, j);
        if (!dtype_supported(t->dtype) || dtype_is_half(t->dtype)) fail("input '%s' has an unsupported type", t->name);
        P->vtype[j] = t->dtype;
    }
    char *list = xstrdup(ops ? ops : ""), *save = NULL;
    for (char *w = strtok_r(list, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        if (P->nsteps == EW_MAX_STEPS) fail("more than %d steps", EW_MAX_STEPS);
        P->s[P->nsteps++].op = w;
    }
    if (!P->nsteps || na != 2 * P->nsteps || nt != P->nsteps || np != 3 * P->nsteps || no < 1 || no > O2C_MAX_Y ||
        no != n->nout)
        fail("malformed program (ops, args, types, params, outs)");
    for (int s = 0; s < P->nsteps; s++) {
        ProgStep *st = &P->s[s];
        int v = P->nin + s;
        st->a = (int)args[2 * s];
        st->b = (int)args[2 * s + 1];
        st->dtype = (int)types[s];
        memcpy(st->abc, params + 3 * s, sizeof st->abc);
        if (st->a < 0 || st->a >= v || st->b < -1 || st->b >= v) fail("step %d reads a value not yet computed", s);
        int ta = P->vtype[st->a];
        const char *k;
        if (!strcmp(st->op, "Cast")) {
            if (st->b != -1 || !dtype_supported(st->dtype) || dtype_is_half(st->dtype)) fail("step %d: bad Cast", s);
            k = xfmt("o2c_cast_%s_%s", dtype_suffix(ta), dtype_suffix(st->dtype));
        } else {
            st->e = ew_expr(st->op);
            if (!st->e) fail("step %d: '%s' is no elementwise op a fused loop computes", s, st->op);
            int binary = st->e->kind != EW_UNARY;
            if (binary != (st->b >= 0) || (binary && P->vtype[st->b] != ta))
                fail("step %d: wrong operands for %s", s, st->op);
            if (st->dtype != (st->e->kind == EW_COMPARE ? DT_BOOL : ta)) fail("step %d: wrong result type", s);
            k = xfmt("o2c_%s_%s", st->op, dtype_suffix(ta));
        }
        const Kernel *kd = kernel_find(k);
        if (!kd || !kd->fn) fail("step %d: %s is not defined for %s", s, st->op, dtype_name(ta));
        st->fn = kd->fn;
        P->vtype[v] = st->dtype;
    }
    P->nout = no;
    for (int k = 0; k < no; k++) {
        if (outs[k] < P->nin || outs[k] >= P->nin + P->nsteps) fail("output %d is no step's result", k);
        P->outs[k] = (int)outs[k];
    }
    return P;
}

/* ---- shape rule ---------------------------------------------------------- */

void infer_fused_elementwise(Node *n)
{
    EwProg *P = ew_parse(n);
    Tensor acc = *n->in[0];
    for (int j = 1; j < n->nin; j++) {
        int64_t dims[MAX_RANK];
        int r = broadcast_shapes(n, &acc, n->in[j], dims);
        tensor_set_shape(&acc, r, dims);
    }
    for (int k = 0; k < P->nout; k++) set_out(n, k, P->vtype[P->outs[k]], acc.rank, acc.dims);
}

/* ---- the interpreter: the per-op kernels on blocks of elements ---------- */

#define EW_BLOCK 256

static void ew_kernel_run(const GenKernel *kern, int64_t i0, int64_t i1, const o2c_p *p)
{
    const EwProg *P = kern->prog;
    int nv = P->nin + P->nsteps;
    unsigned char *buf = xalloc((size_t)nv * EW_BLOCK * 8);
    const int64_t r = p->k[O2C_FEW_RANK];
    for (int64_t base = i0; base < i1; base += EW_BLOCK) {
        int64_t cnt = i1 - base < EW_BLOCK ? i1 - base : EW_BLOCK;
        for (int j = 0; j < P->nin; j++) {
            size_t es = dtype_size(P->vtype[j]);
            const unsigned char *x = p->x[j];
            for (int64_t t = 0; t < cnt; t++) {
                int64_t i = base + t, off = i;
                if (P->kind[j] == IN_SCALAR) off = 0;
                else if (P->kind[j] == IN_BCAST) {
                    const int64_t *dims = p->k + O2C_FEW_DIMS, *str = p->k + O2C_FEW_STR_AT(r, P->bidx[j]);
                    int64_t q = i;
                    off = 0;
                    for (int64_t d = r - 1; d >= 0; d--) {
                        off += (q % dims[d]) * str[d];
                        q /= dims[d];
                    }
                }
                memcpy(buf + (size_t)j * EW_BLOCK * 8 + (size_t)t * es, x + (size_t)off * es, es);
            }
        }
        for (int s = 0; s < P->nsteps; s++) {
            const ProgStep *st = &P->s[s];
            o2c_p q;
            memset(&q, 0, sizeof q);   /* O2C_EW_RANK 0: every operand has the block's shape */
            q.x[0] = buf + (size_t)st->a * EW_BLOCK * 8;
            if (st->b >= 0) q.x[1] = buf + (size_t)st->b * EW_BLOCK * 8;
            q.y[0] = buf + (size_t)(P->nin + s) * EW_BLOCK * 8;
            for (int j = 0; j < O2C_EW_NF; j++) {
                q.f[O2C_EW_FA + j] = st->abc[j];
                q.ff[O2C_EW_FA + j] = (float)st->abc[j];
            }
            st->fn(0, cnt, &q);
        }
        for (int k = 0; k < P->nout; k++) {
            size_t es = dtype_size(P->vtype[P->outs[k]]);
            memcpy((unsigned char *)p->y[k] + (size_t)base * es, buf + (size_t)P->outs[k] * EW_BLOCK * 8, (size_t)cnt * es);
        }
    }
}

/* ---- the generated kernel -------------------------------------------------- */

typedef struct Buf { char *s; size_t n, cap; } Buf;

#ifdef __GNUC__
__attribute__((format(printf, 2, 3)))
#endif
static void put(Buf *b, const char *fmt, ...)
{
    if (!fmt) return;   /* never: said so for gcc's -Wformat-truncation under sanitizers */
    va_list ap;
    va_start(ap, fmt);
    char *t = NULL;
    {
        va_list aq;
        va_copy(aq, ap);
        int len = vsnprintf(NULL, 0, fmt, aq);
        va_end(aq);
        t = xalloc((size_t)len + 1);
        vsnprintf(t, (size_t)len + 1, fmt, ap);
    }
    va_end(ap);
    size_t l = strlen(t);
    if (b->n + l + 1 > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 1024;
        while (cap < b->n + l + 1) cap *= 2;
        char *s = xalloc(cap);
        if (b->n) memcpy(s, b->s, b->n);
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->n, t, l + 1);
    b->n += l;
}

/* A real as a C literal that reads back to the same double. */
static const char *lit(double v)
{
    if (isnan(v)) return "NAN";
    if (isinf(v)) return v < 0 ? "(-INFINITY)" : "INFINITY";
    char *s = xfmt("%.17g", v);
    if (!strpbrk(s, ".en")) s = xfmt("%s.0", s);
    return s;
}

static const char *ctype(int dt) { return dt == DT_BOOL ? "uint8_t" : dtype_ctype(dt); }

static const char *ew_text(const EwProg *P, const char **name)
{
    Buf b = {0};
    put(&b, "/* fused elementwise loop:");
    for (int s = 0; s < P->nsteps; s++) {
        const ProgStep *st = &P->s[s];
        put(&b, "%s v%d = %s(v%d", s ? ";" : "", P->nin + s, st->op, st->a);
        if (st->b >= 0) put(&b, ", v%d", st->b);
        put(&b, ")");
    }
    put(&b, " */\n");
    size_t head = b.n;
    put(&b, "{\n");
    int any_bcast = 0;
    for (int j = 0; j < P->nin; j++) {
        const char *T = ctype(P->vtype[j]);
        put(&b, "    const %s *X%d = (const %s *)p->x[%d];\n", T, j, T, j);
        if (P->kind[j] == IN_BCAST) any_bcast = 1;
    }
    for (int k = 0; k < P->nout; k++) {
        const char *T = ctype(P->vtype[P->outs[k]]);
        put(&b, "    %s *Y%d = (%s *)p->y[%d];\n", T, k, T, k);
    }
    /* with broadcast inputs: a run along the last axis at a time, each
     * broadcast input's offset computed once a run, then read at its last
     * stride (0: one value for the run; 1: in step) in a loop the C
     * compiler vectorizes */
    const char *I = any_bcast ? "i + j" : "i";
    if (any_bcast) {
        put(&b, "    const o2c_int r = p->k[O2C_FEW_RANK], D = p->k[O2C_FEW_DIMS + r - 1];\n");
        put(&b, "    for (o2c_int i = i0; i < i1;) {\n");
        put(&b, "        o2c_int n = D - i %% D;\n");
        put(&b, "        if (n > i1 - i) n = i1 - i;\n");
        for (int j = 0; j < P->nin; j++) {
            if (P->kind[j] != IN_BCAST) continue;
            const char *T = ctype(P->vtype[j]);
            put(&b, "        const %s *B%d = X%d + o2c_offset(i, r, p->k + O2C_FEW_DIMS, p->k + O2C_FEW_STR_AT(r, %d));\n",
                T, j, j, P->bidx[j]);
            if (P->inner[j] == 0) put(&b, "        const %s v%d = B%d[0];\n", T, j, j);
            else if (P->inner[j] != 1) put(&b, "        const o2c_int s%d = p->k[O2C_FEW_STR_AT(r, %d) + r - 1];\n", j, P->bidx[j]);
        }
        put(&b, "        for (o2c_int j = 0; j < n; j++) {\n");
    } else {
        put(&b, "    O2C_FOR(i) {\n");
    }
    for (int j = 0; j < P->nin; j++) {
        const char *T = ctype(P->vtype[j]);
        if (P->kind[j] == IN_FULL) put(&b, "        const %s v%d = X%d[%s];\n", T, j, j, I);
        else if (P->kind[j] == IN_SCALAR) put(&b, "        const %s v%d = X%d[0];\n", T, j, j);
        else if (P->inner[j] == 1) put(&b, "        const %s v%d = B%d[j];\n", T, j, j);
        else if (P->inner[j] != 0) put(&b, "        const %s v%d = B%d[j * s%d];\n", T, j, j, j);
    }
    for (int s = 0; s < P->nsteps; s++) {
        const ProgStep *st = &P->s[s];
        int v = P->nin + s;
        const char *T = ctype(P->vtype[st->a]), *TO = ctype(st->dtype);
        put(&b, "        %s v%d;\n        {\n            typedef %s T;\n", TO, v, T);
        if (!st->e) {   /* Cast: to bool is x != 0 */
            if (st->dtype == DT_BOOL) put(&b, "            v%d = (uint8_t)(v%d != 0);\n", v, st->a);
            else put(&b, "            v%d = (%s)(T)v%d;\n", v, TO, st->a);
        } else if (st->e->kind == EW_UNARY) {
            put(&b, "            const T x = v%d;\n", st->a);
            put(&b, "            const T A = (T)%s, B = (T)%s, C = (T)%s;\n", lit(st->abc[0]), lit(st->abc[1]), lit(st->abc[2]));
            put(&b, "            (void)A; (void)B; (void)C;\n");
            put(&b, "            v%d = (T)(%s);\n", v, expr_for_type(st->e->expr, P->vtype[st->a]));
        } else {
            put(&b, "            const T a = v%d, b = v%d;\n", st->a, st->b);
            put(&b, "            v%d = (%s)(%s);\n", v, TO, expr_for_type(st->e->expr, P->vtype[st->a]));
        }
        put(&b, "        }\n");
    }
    for (int k = 0; k < P->nout; k++) put(&b, "        Y%d[%s] = v%d;\n", k, I, P->outs[k]);
    if (any_bcast) put(&b, "        }\n        i += n;\n");
    put(&b, "    }\n}");
    *name = xfmt("o2c_ew_%016llx", (unsigned long long)fnv1a64(FNV1A64_INIT, b.s, strlen(b.s)));
    char *text = xalloc(b.n + 64);
    memcpy(text, b.s, head);
    sprintf(text + head, "O2C_KERNEL(%s)\n%s", *name, b.s + head);
    return text;
}

void lower_fused_elementwise(Node *n, Lowering *L)
{
    EwProg *P = ew_parse(n);
    Tensor *y = n->out[0];
    int64_t ne = tensor_numel(y);
    int r = y->rank, nb = 0;
    for (int j = 0; j < P->nin; j++) {
        int64_t m = tensor_numel(n->in[j]);
        P->kind[j] = m == ne ? IN_FULL : m == 1 ? IN_SCALAR : IN_BCAST;
        if (P->kind[j] == IN_BCAST) P->bidx[j] = nb++;
    }
    /* the output's axes, with neighbours merged where every broadcast input
     * steps through both as one (contiguous, or broadcast along both) and
     * axes of one value dropped: a per-channel bias over N x C x H x W is
     * C x HW, its runs HW long */
    int64_t dims[MAX_RANK], str[O2C_MAX_X][MAX_RANK], full[O2C_MAX_X][MAX_RANK];
    int cr = 0;
    for (int j = 0; j < P->nin; j++)
        if (P->kind[j] == IN_BCAST) bcast_strides(n->in[j], r, full[j]);
    for (int d = 0; d < r; d++) {
        if (y->dims[d] == 1) continue;
        int merge = cr > 0;
        for (int j = 0; merge && j < P->nin; j++)
            if (P->kind[j] == IN_BCAST && str[j][cr - 1] != full[j][d] * y->dims[d]) merge = 0;
        if (merge) {
            dims[cr - 1] *= y->dims[d];
        } else {
            dims[cr] = y->dims[d];
            cr++;
        }
        for (int j = 0; j < P->nin; j++)
            if (P->kind[j] == IN_BCAST) str[j][cr - 1] = full[j][d];
    }
    for (int j = 0; j < P->nin; j++)
        P->inner[j] = P->kind[j] == IN_BCAST && cr > 0 ? (str[j][cr - 1] == 0 || str[j][cr - 1] == 1 ? str[j][cr - 1] : -1) : -1;
    r = cr;
    if (nb && O2C_FEW_NK(r, nb) > O2C_NK) fail("too many broadcast inputs for one kernel");
    GenKernel *k = xalloc(sizeof *k);
    const char *name;
    k->k.instance = ew_text(P, &name);
    k->k.name = name;
    k->k.file = "elementwise.h";
    k->k.deps = nb ? "o2c_offset" : "";
    k->interp = ew_kernel_run;
    k->prog = P;
    KCall *c = lower_call_kernel(L, &k->k, ne);
    for (int j = 0; j < P->nin; j++) c->x[j] = n->in[j];
    for (int j = 0; j < P->nout; j++) c->y[j] = n->out[j];
    if (P->nout == 1) c->inplace = (1u << P->nin) - 1;   /* each index's inputs read before Y[i] is written */
    if (nb) {
        c->k[O2C_FEW_RANK] = r;
        for (int d = 0; d < r; d++) c->k[O2C_FEW_DIMS + d] = dims[d];
        for (int j = 0; j < P->nin; j++)
            if (P->kind[j] == IN_BCAST)
                for (int d = 0; d < r; d++) c->k[O2C_FEW_STR_AT(r, P->bidx[j]) + d] = str[j][d];
    }
}

/* ---- decomposition (--emit-onnx) ------------------------------------------ */

void decompose_fused_elementwise(const Node *n, Decomp *d)
{
    EwProg *P = ew_parse((Node *)n);
    const char **val = xalloc(sizeof(char *) * (size_t)(P->nin + P->nsteps));
    for (int j = 0; j < P->nin; j++) val[j] = dc_in(d, j);
    for (int s = 0; s < P->nsteps; s++) {
        const ProgStep *st = &P->s[s];
        const char *a = val[st->a], *b = st->b >= 0 ? val[st->b] : NULL;
        const char *y;
        if (!st->e) {
            y = dc_op(d, "Cast", 1, a);
            dc_attr_i(d, "to", st->dtype);
        } else if (!strcmp(st->op, "Clip")) {
            const char *lo = dc_const_f(d, P->vtype[st->a], st->abc[0]);
            const char *hi = dc_const_f(d, P->vtype[st->a], st->abc[1]);
            y = dc_op(d, "Clip", 3, a, lo, hi);
            if (d->opset < 11) d->opset = 11;
        } else if (st->e->kind != EW_UNARY) {
            const char *op = !strcmp(st->op, "BMax") ? "Max" : !strcmp(st->op, "BMin") ? "Min" : st->op;
            y = dc_op(d, op, 2, a, b);
        } else {
            y = dc_op(d, st->op, 1, a);
            /* the real attributes, in schema order, are A, B, C */
            char names[EW_STEP_REALS][64], types[EW_STEP_REALS];
            int k = schema_numbers(st->e->schema, 0, names, types, EW_STEP_REALS, st->op);
            for (int j = 0; j < k; j++) dc_attr_f(d, names[j], st->abc[j]);
        }
        val[P->nin + s] = y;
    }
    for (int k = 0; k < P->nout; k++) dc_output(d, k, val[P->outs[k]]);
}

/* ---- a node as one step (for the pass) ------------------------------------- */

int ew_node_step(Node *n, EwStep *s)
{
    if (!n->op || !n->op->ew_step || n->promoted || n->nout != 1 || !n->out[0]) return 0;
    for (int j = 0; j < n->nin; j++) {
        Tensor *in = n->in[j];
        if (in && (!dtype_supported(in->dtype) || dtype_is_half(in->dtype) || dtype_is_narrow(in->dtype))) return 0;
    }
    Tensor *y = n->out[0];
    if (!dtype_supported(y->dtype) || dtype_is_half(y->dtype) || dtype_is_narrow(y->dtype) || tensor_numel(y) <= 0) return 0;
    /* what the op table says the node computes */
    const Node *saved = diag_node;
    diag_node = n;
    int ok = n->op->ew_step(n, s);
    diag_node = saved;
    if (!ok || s->nx < 1 || s->nx > 2) return 0;
    if (!strcmp(s->expr, "Cast")) return s->nx == 1;
    const EwExpr *e = ew_expr(s->expr);
    if (!e || (e->kind == EW_UNARY) != (s->nx == 1)) return 0;   /* an expression a fused loop cannot compute */
    if (s->nx == 2 && s->x[1]->dtype != s->x[0]->dtype) return 0;
    s->expr = e->name;
    return 1;
}
