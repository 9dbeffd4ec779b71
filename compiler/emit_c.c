/* C back end: one standalone C99 file (kernels, weights, schedule) and its
 * header, from templates/model.c.in and templates/header.h.in. No malloc,
 * no I/O; intermediates live in one arena. */
#define _POSIX_C_SOURCE 200809L   /* open_memstream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* a tensor's bytes in the C file (ctx: the EmitCtx): a constant cN, or
 * NAME_wN in the --weights-bin file (weights_bin.c), the arena, I/O */
static const char *c_ptr(const Tensor *t, int out, void *ctx)
{
    const EmitCtx *c = ctx;
    (void)out;
    const Tensor *b = t;
    while (b->storage == ST_ALIAS && b->alias_of) b = b->alias_of;
    int in_bin = c->o->weights_bin && b->storage == ST_CONST && weights_bin_holds(b);
    const char *s = storage_ptr(t, in_bin ? xfmt("%s_w%%d", c->o->name) : const_ref_fmt(b), "(arena + %lld)");
    if (c->part_call && t->temp)   /* --threads: a split call's scratch, one copy a part (threads.c) */
        for (int j = 0; j < O2C_MAX_Y; j++)
            if (c->part_call->y[j] == t)
                return xfmt("((unsigned char *)%s + (size_t)o2c_part * %lluu)", s,
                            (unsigned long long)(tensor_bytes(t) / (size_t)c->part_call->split));
    return s;
}

/* The largest block of bytes the file addresses (the arena, the constants,
 * a graph input or output): a target where one object cannot be that large
 * (PTRDIFF_MAX: a 32-bit microcontroller and a model of gigabytes) stops
 * the build with a message instead of wrapping sizes around. */
static void emit_size_check(FILE *f, const EmitCtx *c)
{
    int64_t largest = c->arena, consts = 0;
    for (int i = 0; i < c->nconsts; i++) consts += (int64_t)tensor_bytes(c->consts[i]);
    if (consts > largest) largest = consts;
    for (int i = 0; i < c->g->ninputs; i++)
        if ((int64_t)tensor_bytes(c->g->inputs[i]) > largest) largest = (int64_t)tensor_bytes(c->g->inputs[i]);
    for (int i = 0; i < c->g->noutputs; i++)
        if ((int64_t)tensor_bytes(c->g->outputs[i]) > largest) largest = (int64_t)tensor_bytes(c->g->outputs[i]);
    if (largest < ((int64_t)1 << 31)) return;   /* what every 32-bit target holds (and 64-bit ones far more) */
    if (c->o->target == TARGET_CORTEX_M)
        fail_plain("the model needs a block of %lld bytes (arena, constants or a graph input or output), more than a "
                   "32-bit Cortex-M can address as one object", (long long)largest);
    fprintf(f, "#include <stdint.h>\n#if %lld > PTRDIFF_MAX\n#error \"this model needs a block of %lld bytes, more than one "
               "object can have on this target (PTRDIFF_MAX)\"\n#endif\n", (long long)largest, (long long)largest);
}

/* The width of the file's index arithmetic (o2c_int, runtime/c/o2c_rt.h):
 * 32 bits where every size the kernels compute with fits in 31 (the arena,
 * each constant, graph input and output, each call's index space and
 * integer parameters), else 64. --index-bits 32 asks for it (and refuses
 * what does not fit), 64 refuses it; --target cortex-m takes it where it
 * fits: a 32-bit core divides 32-bit integers in an instruction and 64-bit
 * ones in a library call (__aeabi_ldivmod), tens of cycles. why: what did
 * not fit, for the file's comment. */
static int choose_index_bits(const EmitCtx *c, char *why, size_t nwhy)
{
    const int64_t LIMIT = INT32_MAX;
    int want = c->o->index_bits ? c->o->index_bits : c->o->target == TARGET_CORTEX_M ? 32 : 64;
    snprintf(why, nwhy, "%s", c->o->index_bits ? "--index-bits 64" : "the target's default");
    if (want == 64) return 64;
    const char *big = NULL;
    int64_t v = 0;
    if (c->arena > LIMIT) big = "the arena", v = c->arena;
    for (int i = 0; !big && i < c->nconsts; i++)
        if ((int64_t)tensor_bytes(c->consts[i]) > LIMIT) big = xfmt("constant '%s'", c->consts[i]->name), v = (int64_t)tensor_bytes(c->consts[i]);
    for (int i = 0; !big && i < c->g->ninputs; i++)
        if ((int64_t)tensor_bytes(c->g->inputs[i]) > LIMIT) big = xfmt("input '%s'", c->g->inputs[i]->name), v = (int64_t)tensor_bytes(c->g->inputs[i]);
    for (int i = 0; !big && i < c->g->noutputs; i++)
        if ((int64_t)tensor_bytes(c->g->outputs[i]) > LIMIT) big = xfmt("output '%s'", c->g->outputs[i]->name), v = (int64_t)tensor_bytes(c->g->outputs[i]);
    for (int i = 0; !big && i < c->L->n; i++) {
        const KCall *k = &c->L->calls[i];
        if (!k->kernel) continue;
        if (k->count > LIMIT) big = xfmt("call %d's index space (%s)", i, k->kernel->name), v = k->count;
        for (int j = 0; !big && j < O2C_NK; j++)
            if (k->k[j] > LIMIT || k->k[j] < -LIMIT) big = xfmt("call %d's parameter k[%d] (%s)", i, j, k->kernel->name), v = k->k[j];
    }
    if (!big) return 32;
    if (c->o->index_bits == 32)
        fail_plain("--index-bits 32: %s is %lld, past 32-bit index arithmetic", big, (long long)v);
    snprintf(why, nwhy, "%s is %lld, past 32 bits", big, (long long)v);
    return 64;
}

/* The arguments of a run (run_impl's start; the caller's arena is checked
 * by NAME_run_with_arena): NAME_ERR_ARGUMENT for a NULL inputs or outputs
 * array, a NULL output, or an output whose bytes overlap an input's or
 * another output's (the kernels read inputs after writing outputs: an
 * alias would be read back changed). A NULL input is the caller's (an
 * empty optional input). String tensors (arrays of pointers) are not
 * compared. Up to ARG_CHECK_UNROLLED comparisons are written out one by
 * one; past it (a model of a thousand outputs would need half a million)
 * one loop compares every pair through a table of the arguments' bytes. */
#define ARG_CHECK_UNROLLED 32

static int arg_compared(const Tensor *t) { return t->dtype != DT_STRING && tensor_bytes(t) > 0; }

static void emit_arg_check_loop(FILE *f, const EmitCtx *c)
{
    const Graph *g = c->g;
    int nin = g->ninputs, nall = g->ninputs + g->noutputs, strings = 0;
    for (int j = 0; j < g->noutputs; j++) strings += g->outputs[j]->dtype == DT_STRING;
    fprintf(f, "    {   /* no output overlaps an input or another output: each argument's bytes, the inputs' "
               "then the outputs' (0: not compared) */\n        static const unsigned long long o2c_arg_bytes[%d] = {",
            nall);
    for (int i = 0; i < nall; i++) {
        const Tensor *t = i < nin ? g->inputs[i] : g->outputs[i - nin];
        fprintf(f, "%s%lluu", i ? (i % 8 ? ", " : ",\n            ") : "",
                arg_compared(t) ? (unsigned long long)tensor_bytes(t) : 0ull);
    }
    fputs("};\n", f);
    if (strings) {   /* string outputs are arrays of pointers the run fills: not checked */
        fprintf(f, "        static const unsigned char o2c_out_string[%d] = {", g->noutputs);
        for (int j = 0; j < g->noutputs; j++) fprintf(f, "%s%d", j ? ", " : "", g->outputs[j]->dtype == DT_STRING);
        fputs("};\n", f);
    }
    fprintf(f, "        int j, i;\n        for (j = 0; j < %d; j++) {\n", g->noutputs);
    fprintf(f, "            uintptr_t o = (uintptr_t)outputs[j], n = (uintptr_t)o2c_arg_bytes[%d + j];\n", nin);
    if (strings) fputs("            if (o2c_out_string[j]) continue;\n", f);
    fprintf(f, "            if (!o) return %s_ERR_ARGUMENT;\n            if (!n) continue;\n", c->o->name);
    fprintf(f, "            for (i = 0; i < %d + j; i++) {\n"
               "                uintptr_t t = (uintptr_t)(i < %d ? inputs[i] : outputs[i - %d]);\n"
               "                if (t && o2c_arg_bytes[i] && t < o + n && o < t + (uintptr_t)o2c_arg_bytes[i])\n"
               "                    return %s_ERR_ARGUMENT;\n            }\n        }\n    }\n",
            nin, nin, nin, c->o->name);
}

static void emit_arg_check(FILE *f, const EmitCtx *c)
{
    const Graph *g = c->g;
    fprintf(f, "    if (!inputs || !outputs) return %s_ERR_ARGUMENT;\n", c->o->name);
    int nout = 0, pairs = 0;
    for (int j = 0; j < g->noutputs; j++) {
        if (g->outputs[j]->dtype == DT_STRING) continue;
        nout++;
        for (int i = 0; i < g->ninputs + j && arg_compared(g->outputs[j]); i++)
            pairs += arg_compared(i < g->ninputs ? g->inputs[i] : g->outputs[i - g->ninputs]);
    }
    if (!nout) return;
    if (pairs > ARG_CHECK_UNROLLED) {
        emit_arg_check_loop(f, c);
        return;
    }
    fputs("    {   /* no output overlaps an input or another output */\n", f);
    for (int j = 0; j < g->noutputs; j++) {
        const Tensor *o = g->outputs[j];
        if (o->dtype == DT_STRING) continue;
        fprintf(f, "        if (!outputs[%d]) return %s_ERR_ARGUMENT;\n", j, c->o->name);
        for (int i = 0; i < g->ninputs + j; i++) {
            const Tensor *t = i < g->ninputs ? g->inputs[i] : g->outputs[i - g->ninputs];
            if (!arg_compared(t) || !arg_compared(o)) continue;
            const char *tp = i < g->ninputs ? xfmt("inputs[%d]", i) : xfmt("outputs[%d]", i - g->ninputs);
            fprintf(f, "        if (%s && (uintptr_t)%s < (uintptr_t)outputs[%d] + %lluu && (uintptr_t)outputs[%d] < "
                       "(uintptr_t)%s + %lluu)\n            return %s_ERR_ARGUMENT;\n",
                    tp, tp, j, (unsigned long long)tensor_bytes(o), j, tp, (unsigned long long)tensor_bytes(t), c->o->name);
        }
    }
    fputs("    }\n", f);
}

static void emit_profile_key(FILE *f, const char *key, const EmitCtx *c);   /* @PROFILE_*@ (below) */
static void debug_outputs(FILE *f, const KCall *k, const char *ind, const EmitCtx *c);   /* --debug-tensors (below) */

/* A call of the schedule (emit_schedule) run in place; with --profile timed
 * (row: the profile's row of the next call) */
typedef struct CallRun {
    EmitCtx *c;
    int row;
} CallRun;

/* --threads: a split call's kernel call on part o2c_part's range of indices */
static void part_kernel_call(FILE *f, const KCall *k, const char *ind)
{
    fprintf(f, "%s        %s((int64_t)%lld * o2c_part / %d, (int64_t)%lld * (o2c_part + 1) / %d, &p);\n", ind,
            k->kernel->name, (long long)k->count, k->split, (long long)k->count, k->split);
}

static void run_call(FILE *f, const KCall *k, const char *ind, void *ctx)
{
    CallRun *r = ctx;
    EmitCtx *c = r->c;
    if (k->split > 1) {   /* --threads: the part's call, the loop profile_start opened closed */
        part_kernel_call(f, k, ind);
        fprintf(f, "%s    }\n", ind);
        c->part_call = NULL;
    } else {
        fprintf(f, "%s    %s(0, %lld, &p);\n", ind, k->kernel->name, (long long)k->count);
    }
    if (c->o->profile) fprintf(f, "%s    O2C_PROFILE_STOP(%d, o2c_t0);\n", ind, r->row++);
    if (c->o->debug_tensors && k->node) debug_outputs(f, k, ind, c);   /* --debug-tensors */
    if (call_uses_strings(c->L, k))   /* ops/strings.c: the strings built did not fit */
        fprintf(f, "%s    if (o2c_strs_full(%s)) return %s_ERR_STRING_SPACE;\n", ind,
                c_ptr(c->L->strings, 1, c), c->o->name);
}

/* Before a call's o2c_p. --profile: the timer starts before the o2c_p is made (the timer's
 * memory barrier after it made the C compiler read p's parameters from
 * memory, not as the constants they are: an epilogue's activation was then
 * chosen per element, GELU 6x slower than in the timed build) */
static void profile_start(FILE *f, const KCall *k, const char *ind, void *ctx)
{
    EmitCtx *c = ((CallRun *)ctx)->c;
    if (c->o->profile) fprintf(f, "%s    O2C_PROFILE_START(o2c_t0);\n", ind);
    if (k->split > 1) {
        /* --threads (threads.c): the parts as an OpenMP loop, each part's
         * o2c_p made inside it (its parameters constants the C compiler
         * sees, as in a call of one part: made outside, the loop's threads
         * read them from memory and the kernels lost their constant
         * shapes, YOLOX at two threads 60 ms against one thread's 43),
         * with its own copy of the scratch */
        fprintf(f, "%s    int o2c_part;\n%s    O2C_PARALLEL_FOR\n%s    for (o2c_part = 0; o2c_part < %d; o2c_part++) {\n",
                ind, ind, ind, k->split);
        c->part_call = k;
    }
}

/* --threads: a split call as its part's function and a step running the
 * parts (templates/thread_pool.c.in: O2C_RUN_PARTS, on OpenMP threads, the
 * pool's or one after another). The part's o2c_p is made in the part, its
 * parameters constants the C compiler sees (made outside, the threads read
 * them from memory and the kernels lost their constant shapes: YOLOX at two
 * threads 60 ms against one thread's 43), with its own copy of the scratch. */
static void split_step(FILE *f, const KCall *k, const char *ind, void *ctx)
{
    CallRun *r = ctx;
    EmitCtx *c = r->c;
    int i = (int)(k - c->L->calls);
    (void)ind;
    fprintf(f, "static void o2c_part_%d(const void *const inputs[], void *const outputs[], unsigned char *arena, "
               "int o2c_part)\n{\n    (void)inputs;\n    (void)outputs;\n    (void)arena;\n    {\n", i);
    c->part_call = k;
    emit_call_params(f, k, c_ptr, c, "        ", 0);
    c->part_call = NULL;
    part_kernel_call(f, k, "");
    fputs("    }\n}\n\n", f);
    fprintf(f, "static O2C_STEP void o2c_step_%d(const void *const inputs[], void *const outputs[], "
               "unsigned char *arena)\n{\n", i);
    if (c->o->profile) fputs("    O2C_PROFILE_START(o2c_t0);\n", f);
    fprintf(f, "    O2C_RUN_PARTS(o2c_part_%d, %d);\n", i, k->split);
    if (c->o->profile) fprintf(f, "    O2C_PROFILE_STOP(%d, o2c_t0);\n", r->row++);
    fputs("}\n\n", f);
}

/* A call stays in the schedule's function (no step function of its own)
 * where its block returns an error code (string space) or prints
 * (--debug-tensors) */
static int keep_inline(const KCall *k, void *run_ctx)
{
    const EmitCtx *c = ((CallRun *)run_ctx)->c;
    return call_uses_strings(c->L, k) || (c->o->debug_tensors && k->node);
}

static void thread_pool_key(FILE *f, const char *key, void *ctx)
{
    const EmitCtx *c = ctx;
    if (!strcmp(key, "THREADS")) fprintf(f, "%d", c->o->threads);
    else if (!strcmp(key, "THREADS_1")) fprintf(f, "%d", c->o->threads - 1);
    else fail_plain("internal: unknown template key @%s@", key);
}

static void source_key(FILE *f, const char *key, void *ctx)
{
    EmitCtx *c = ctx;
    if (emit_common_key(f, key, c)) return;
    if (!strcmp(key, "TARGET_CHECK")) {   /* --target: the ISA the code was made for */
        static const struct { int target; const char *test, *flags; } CHECKS[] = {
            {TARGET_AVX2, "!defined(__AVX2__) || !defined(__FMA__)", "-mavx2 -mfma"},
            {TARGET_AVX512, "!defined(__AVX512F__)", "-mavx512f -mfma"},
            {TARGET_NEON, "!defined(__ARM_NEON)", "-mfpu=neon (Armv7-A; AArch64 has it)"},
        };
        for (size_t i = 0; i < sizeof CHECKS / sizeof CHECKS[0]; i++)
            if (CHECKS[i].target == c->o->target)
                fprintf(f, "/* generated with --target %s */\n#if %s\n#error \"generated with --target %s: compile "
                           "for that instruction set (%s, or -march= a CPU that has it)\"\n#endif\n",
                        target_name(c->o->target), CHECKS[i].test, target_name(c->o->target), CHECKS[i].flags);
        if (c->o->target == TARGET_CORTEX_M)
            fputs("/* generated with --target cortex-m: the compact reference kernels */\n", f);
        emit_size_check(f, c);
        c->index_bits = choose_index_bits(c, c->index_why, sizeof c->index_why);
        if (c->index_bits == 32)
            fputs("/* index arithmetic in 32 bits (o2c_int): every size of the model fits */\n#define O2C_INDEX_BITS 32\n", f);
        else if (c->o->target == TARGET_CORTEX_M)
            fprintf(f, "/* index arithmetic in 64 bits (o2c_int): %s */\n", c_comment(c->index_why));
    } else if (!strcmp(key, "ARG_CHECK")) {
        emit_arg_check(f, c);
    } else if (!strcmp(key, "CONSTANTS")) {
        /* --weights-section / --arena-section: GNU C section attributes */
        const char *sec[2] = {c->o->weights_section, c->o->arena_section}, *mac[2] = {"O2C_WEIGHTS_SECTION", "O2C_ARENA_SECTION"};
        for (int k = 0; k < 2; k++)
            if (sec[k])
                fprintf(f, "\n#if defined(__GNUC__)\n#define %s __attribute__((section(\"%s\")))\n#else\n#define %s\n#endif\n",
                        mac[k], sec[k], mac[k]);
        if (c->nconsts) fputs("\n/* ---- weights and other constants ---- */\n", f);
        if (c->o->weights_bin) emit_weights_bin(f, c);   /* --weights-bin: weights_bin.c */
        else emit_const_words_guard(f, c->consts, c->nconsts);
        if (!c->o->weights_bin)
            for (int i = 0; i < c->nconsts; i++)
                emit_const_array(f, c->consts[i], "static const", c->o->weights_section != NULL,
                                 c->o->target == TARGET_CORTEX_M);
    } else if (!strcmp(key, "STEPS")) {
        /* every call a function of its own (o2c_step_I), the schedule's
         * function calling them: the C compiler then allocates each
         * kernel's registers over its own loops (one function of hundreds
         * of inlined kernels passed gcc's limit of loops for its regional
         * register allocator, ira-max-loops-num: YOLOv8n 35 ms against 20
         * with the limit raised); the schedule's text is kept for
         * @SCHEDULE@ */
        if (c->o->threads > 1)   /* --threads: how split calls run their parts */
            emit_template(f, "thread_pool.c.in", thread_pool_key, c);
        char *text = NULL;
        size_t len = 0;
        FILE *sched = open_memstream(&text, &len);
        if (!sched) fail_plain("out of memory");
        CallRun run = {c, 0};
        ScheduleSteps steps = {f, keep_inline, profile_start, split_step};
        emit_schedule(sched, c->L, c_ptr, c, xfmt("return %s_ERR_CHECK;", c->o->name), NULL, 0, run_call, &run, &steps);
        fclose(sched);
        c->schedule = xstrdup(text ? text : "");
        free(text);
    } else if (!strcmp(key, "SCHEDULE")) {
        if (c->o->profile) fputs("    O2C_PROFILE_START(o2c_run_t0);\n", f);
        if (c->L->strings)   /* string tensors (ops/strings.c): the string space starts empty every run */
            fprintf(f, "    o2c_strs_reset(%s);\n", c_ptr(c->L->strings, 1, c));
        if (!c->schedule) fail_plain("internal: @SCHEDULE@ before @STEPS@ in the C template");
        fputs(c->schedule, f);
        if (c->o->profile) fputs("    O2C_PROFILE_RUN(o2c_run_t0);\n", f);
    } else {
        fail_plain("internal: unknown template key @%s@", key);
    }
}

void emit_c(Graph *g, Lowering *L, const Options *o, int64_t arena, FILE *src, FILE *hdr)
{
    EmitCtx c = {g, L, o, arena, 0, NULL, 0, emit_profile_key, NULL, NULL, 64, ""};
    emit_model(&c, "model.c.in", source_key, src, hdr);
    if (o->test_main_file) emit_test_main(o->test_main_file, &c);   /* --emit-test-main */
}

/* ---- --profile: a profiling build ---------------------------------------
 * Every kernel call of the schedule is timed (O2C_PROFILE_START/STOP around
 * it) and accumulated into one row per call site: calls and total time. The
 * rows carry the names --report shows (kernel, op, node, covered ONNX nodes)
 * and its FLOPs (on a node's first call; later calls of the same node 0). The
 * timer is a macro the user may define; the default is POSIX
 * clock_gettime(CLOCK_MONOTONIC) in ns, and elsewhere (firmware) an #error
 * asks for one. @PROFILE_*@ keys write nothing without --profile, so the
 * ordinary build is byte-identical. */

static const char PROFILE_PRE[] =
    "/* A profiling build (onnx2c --profile): see @NAME@_profile_print in @HEADER@. */\n"
    "#if !defined(O2C_PROFILE_NOW) && !defined(_POSIX_C_SOURCE) && !defined(__APPLE__)\n"
    "#define _POSIX_C_SOURCE 199309L   /* clock_gettime, the default timer */\n"
    "#endif\n";

static const char PROFILE_DEFS[] =
    "\n/* ---- profiling (onnx2c --profile) ----\n"
    " * O2C_PROFILE_NOW(): a monotonically increasing count, O2C_PROFILE_UNITS_PER_SEC\n"
    " * of them a second, O2C_PROFILE_T its unsigned type (differences wrap correctly:\n"
    " * uint32_t for a 32-bit cycle counter). Define all three to use your own timer,\n"
    " * e.g. on a Cortex-M the DWT cycle counter:\n"
    " *   -D'O2C_PROFILE_NOW()=(*(volatile uint32_t *)0xE0001004u)' -DO2C_PROFILE_T=uint32_t\n"
    " *   -DO2C_PROFILE_UNITS_PER_SEC=SystemCoreClock (DWT->CYCCNT enabled beforehand).\n"
    " * Default on POSIX systems: clock_gettime(CLOCK_MONOTONIC) in nanoseconds. */\n"
    "#ifndef O2C_PROFILE_NOW\n"
    "#if defined(__unix__) || defined(__unix) || defined(__APPLE__)\n"
    "#include <time.h>\n"
    "static uint64_t o2c_profile_now(void)\n"
    "{\n"
    "    struct timespec t;\n"
    "    clock_gettime(CLOCK_MONOTONIC, &t);\n"
    "    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;\n"
    "}\n"
    "#define O2C_PROFILE_NOW() o2c_profile_now()\n"
    "#undef O2C_PROFILE_UNITS_PER_SEC\n"
    "#define O2C_PROFILE_UNITS_PER_SEC 1e9\n"
    "#undef O2C_PROFILE_T\n"
    "#else\n"
    "#error \"onnx2c --profile: no default timer here (not a POSIX system): define O2C_PROFILE_NOW() "
    "(a monotonically increasing count, e.g. a cycle counter) and O2C_PROFILE_UNITS_PER_SEC (counts a second)\"\n"
    "#endif\n"
    "#endif\n"
    "#ifndef O2C_PROFILE_UNITS_PER_SEC\n"
    "#error \"onnx2c --profile: O2C_PROFILE_NOW() is defined: define O2C_PROFILE_UNITS_PER_SEC (its counts a second) too\"\n"
    "#endif\n"
    "#ifndef O2C_PROFILE_T\n"
    "#define O2C_PROFILE_T uint64_t\n"
    "#endif\n"
    "/* keeps the compiler from moving a kernel's memory accesses across the timer */\n"
    "#ifndef O2C_PROFILE_BARRIER\n"
    "#if defined(__GNUC__)\n"
    "#define O2C_PROFILE_BARRIER() __asm__ __volatile__(\"\" ::: \"memory\")\n"
    "#else\n"
    "#define O2C_PROFILE_BARRIER() ((void)0)\n"
    "#endif\n"
    "#endif\n"
    "#define O2C_PROFILE_START(t) \\\n"
    "    O2C_PROFILE_T t; \\\n"
    "    O2C_PROFILE_BARRIER(); \\\n"
    "    t = (O2C_PROFILE_T)O2C_PROFILE_NOW(); \\\n"
    "    O2C_PROFILE_BARRIER()\n"
    "#define O2C_PROFILE_STOP(i, t) \\\n"
    "    do { \\\n"
    "        O2C_PROFILE_T o2c_t1_; \\\n"
    "        O2C_PROFILE_BARRIER(); \\\n"
    "        o2c_t1_ = (O2C_PROFILE_T)O2C_PROFILE_NOW(); \\\n"
    "        o2c_prof[i].calls++; \\\n"
    "        o2c_prof[i].time += (uint64_t)(O2C_PROFILE_T)(o2c_t1_ - (t)); \\\n"
    "    } while (0)\n"
    "#define O2C_PROFILE_RUN(t) \\\n"
    "    do { \\\n"
    "        O2C_PROFILE_T o2c_t1_; \\\n"
    "        O2C_PROFILE_BARRIER(); \\\n"
    "        o2c_t1_ = (O2C_PROFILE_T)O2C_PROFILE_NOW(); \\\n"
    "        o2c_prof_runs++; \\\n"
    "        o2c_prof_run_time += (uint64_t)(O2C_PROFILE_T)(o2c_t1_ - (t)); \\\n"
    "    } while (0)\n"
    "static uint64_t o2c_prof_runs, o2c_prof_run_time;\n";

/* The functions after the entry points: reset, rows, totals, the table. */
static const char PROFILE_FUNCS[] =
    "\n/* ---- profiling (onnx2c --profile) ---- */\n"
    "void @NAME@_profile_reset(void)\n"
    "{\n"
    "    int i;\n"
    "    for (i = 0; i < @NAME@_PROFILE_ROWS; i++) o2c_prof[i].calls = o2c_prof[i].time = 0;\n"
    "    o2c_prof_runs = o2c_prof_run_time = 0;\n"
    "}\n"
    "\n"
    "const @NAME@_profile_row *@NAME@_profile_rows(void) { return o2c_prof; }\n"
    "uint64_t @NAME@_profile_runs(void) { return o2c_prof_runs; }\n"
    "uint64_t @NAME@_profile_run_time(void) { return o2c_prof_run_time; }\n"
    "double @NAME@_profile_units_per_sec(void) { return (double)(O2C_PROFILE_UNITS_PER_SEC); }\n"
    "\n"
    "#ifndef O2C_PROFILE_NO_STDIO\n"
    "void @NAME@_profile_print(FILE *f)\n"
    "{\n"
    "    static int order[@NAME@_PROFILE_ROWS + 1];\n"
    "    const double ms = 1e3 / (double)(O2C_PROFILE_UNITS_PER_SEC);\n"
    "    const double runs = o2c_prof_runs ? (double)o2c_prof_runs : 1.0;\n"
    "    double sum = 0.0, flops = 0.0;\n"
    "    int i, j;\n"
    "    for (i = 0; i < @NAME@_PROFILE_ROWS; i++) {\n"
    "        const @NAME@_profile_row *r = &o2c_prof[i];\n"
    "        int k = i;\n"
    "        sum += (double)r->time;\n"
    "        if (r->flops > 0) flops += (double)r->flops * (double)r->calls;\n"
    "        for (j = i; j > 0 && o2c_prof[order[j - 1]].time < r->time; j--) order[j] = order[j - 1];\n"
    "        order[j] = k;\n"
    "    }\n"
    "    fprintf(f, \"onnx2c profile: @NAME@, %lu runs, %.3f ms a run (%.3f ms in kernels), %d kernel calls, by time\\n\",\n"
    "            (unsigned long)o2c_prof_runs, (double)o2c_prof_run_time * ms / runs, sum * ms / runs, @NAME@_PROFILE_ROWS);\n"
    "    fprintf(f, \"%5s  %-28s %10s %12s %10s %7s %9s  %s\\n\", \"#\", \"kernel\", \"calls\", \"total ms\",\n"
    "            \"ms/run\", \"%\", \"GFLOP/s\", \"op (node), the names in full\");\n"
    "    for (i = 0; i < @NAME@_PROFILE_ROWS; i++) {\n"
    "        const @NAME@_profile_row *r = &o2c_prof[order[i]];\n"
    "        fprintf(f, \"%5d  %-28s %10lu %12.3f %10.4f %7.2f \", order[i], r->kernel, (unsigned long)r->calls,\n"
    "                (double)r->time * ms, (double)r->time * ms / runs, sum > 0.0 ? 100.0 * (double)r->time / sum : 0.0);\n"
    "        if (r->flops > 0 && r->time > 0)\n"
    "            fprintf(f, \"%9.2f\", (double)r->flops * (double)r->calls / ((double)r->time * ms * 1e6));\n"
    "        else\n"
    "            fprintf(f, \"%9s\", \"-\");\n"
    "        fprintf(f, \"  %s (%s)\\n\", r->op, r->node);\n"
    "    }\n"
    "    fprintf(f, \"total: %d kernels, %.3f ms in kernels, %.4f ms/run\", @NAME@_PROFILE_ROWS, sum * ms, sum * ms / runs);\n"
    "    if (sum > 0.0 && flops > 0.0) fprintf(f, \", %.2f GFLOP/s\", flops / (sum * ms * 1e6));\n"
    "    fputc('\\n', f);\n"
    "}\n"
    "#endif\n";

static const char PROFILE_DECL[] =
    "/* ---- profiling (onnx2c --profile) ----\n"
    " * One row per kernel call of the schedule, in schedule order (the rows of\n"
    " * onnx2c --report): accumulated over every run since the start or the last\n"
    " * @NAME@_profile_reset(). time is in units of @NAME@_profile_units_per_sec()\n"
    " * (nanoseconds by default); flops are per call, as --report counts them (a\n"
    " * node's FLOPs on its first call, 0 on its later ones; -1: unknown). */\n"
    "typedef struct @NAME@_profile_row {\n"
    "    const char *kernel;   /* runtime kernel, e.g. \"o2c_conv_tile_f32\" */\n"
    "    const char *op;       /* op, or the fused ops (\"Conv+Add+Relu\") */\n"
    "    const char *node;     /* node name (\"-\": a graph output copy) */\n"
    "    const char *covers;   /* the ONNX nodes it covers, \", \"-separated */\n"
    "    int64_t flops;\n"
    "    uint64_t calls, time;\n"
    "} @NAME@_profile_row;\n"
    "#define @NAME@_PROFILE_ROWS @PROFILE_NROWS@\n"
    "void @NAME@_profile_reset(void);\n"
    "/* @NAME@_PROFILE_ROWS rows, then one whose kernel is NULL */\n"
    "const @NAME@_profile_row *@NAME@_profile_rows(void);\n"
    "uint64_t @NAME@_profile_runs(void);                     /* runs since the reset */\n"
    "uint64_t @NAME@_profile_run_time(void);                 /* their time, kernels and between */\n"
    "double @NAME@_profile_units_per_sec(void);\n"
    "#ifndef O2C_PROFILE_NO_STDIO   /* define it to build without <stdio.h> */\n"
    "/* The rows as a table sorted by time: #, kernel, op (node), calls, total ms,\n"
    " * ms/run, % of the kernels' time, GFLOP/s. */\n"
    "void @NAME@_profile_print(FILE *f);\n"
    "#endif\n"
    "\n";

/* The covered ONNX nodes, ", "-separated (the node itself when none). */
static const char *profile_covers(const Node *n)
{
    if (!n) return "-";
    if (!n->norigins) return n->name;
    size_t len = 1;
    for (int i = 0; i < n->norigins; i++) len += strlen(n->origins[i]) + 2;
    char *s = xalloc(len);
    for (int i = 0; i < n->norigins; i++) {
        if (i) strcat(s, ", ");
        strcat(s, n->origins[i]);
    }
    return s;
}

static void profile_rows(FILE *f, const EmitCtx *c)
{
    fprintf(f, "static %s_profile_row o2c_prof[%s_PROFILE_ROWS + 1] = {\n", c->o->name, c->o->name);
    const Node *last = NULL;
    int rows = 0;
    for (int i = 0; i < c->L->n; i++) {
        const KCall *k = &c->L->calls[i];
        if (k->count <= 0) continue;
        const Node *n = k->node;
        int64_t fl = n && n != last ? node_flops(n) : 0;
        last = n;
        fprintf(f, "    {\"%s\", \"%s\", \"%s\", \"%s\", %lldLL, 0, 0},\n", k->kernel->name,
                n ? c_string(n->fused ? n->fused : n->op_type) : "(graph output copy)", n ? c_string(n->name) : "-",
                c_string(profile_covers(n)), (long long)fl);
        rows++;
    }
    fputs("    {0, 0, 0, 0, 0, 0, 0}   /* the end (and no empty array in C) */\n};\n", f);
}

static int profile_nrows(const Lowering *L)
{
    int rows = 0;
    for (int i = 0; i < L->n; i++) rows += L->calls[i].count > 0;
    return rows;
}

static void profile_key(FILE *f, const char *key, void *ctx)
{
    const EmitCtx *c = ctx;
    if (!strcmp(key, "PROFILE_NROWS")) fprintf(f, "%d", profile_nrows(c->L));
    else if (!emit_common_key(f, key, c)) fail_plain("internal: unknown template key @%s@", key);
}

/* Expands @NAME@, @HEADER@, ... inside the texts above. */
static void profile_text(FILE *f, const char *text, const EmitCtx *c)
{
    for (const char *t = text; *t;) {
        const char *at = strchr(t, '@');
        const char *e = at ? strchr(at + 1, '@') : NULL;
        if (!at || !e) { fputs(t, f); return; }
        fwrite(t, 1, (size_t)(at - t), f);
        char key[32];
        size_t kl = (size_t)(e - at - 1) < sizeof key - 1 ? (size_t)(e - at - 1) : sizeof key - 1;
        memcpy(key, at + 1, kl);
        key[kl] = 0;
        profile_key(f, key, (void *)c);
        t = e + 1;
    }
}

/* ---- --debug-tensors: every computed tensor handed to a callback ---------- */

static const char DEBUG_DECL[] =
    "/* ---- the tensors of a run (onnx2c --debug-tensors) ----\n"
    " * @NAME@_set_debug_callback(fn, user): during every run, fn is called with\n"
    " * each tensor a node of the schedule computes, right after it is computed:\n"
    " * its ONNX name, the ONNX nodes that computed it (\", \"-separated: a fused\n"
    " * node covers several), its element type (onnx.TensorProto.DataType: 1\n"
    " * float, 2 uint8, 3 int8, 6 int32, 7 int64, ...), rank, dimensions and\n"
    " * data (dense, row-major, ONNX's layout), valid during the call only.\n"
    " * An 8-bit tensor that stands for a float one of the model (int8 code)\n"
    " * comes with that tensor's name, its scale and zero point (real = scale *\n"
    " * (q - zero_point)); other tensors with scale 0.\n"
    " * Tensors inside a fused node (see --report), views (Reshape, Flatten,\n"
    " * contiguous slices: the bytes of another tensor) and outputs nothing\n"
    " * reads are not computed, so not reported; -O0 computes every ONNX\n"
    " * node's output. fn NULL: no calls.\n"
    " * tools/compare_tensors.py compares them with onnxruntime's. */\n"
    "typedef void (*@NAME@_debug_fn)(const char *tensor, const char *nodes, int elem_type, int rank,\n"
    "                                const int64_t *dims, const void *data, double scale, long zero_point,\n"
    "                                void *user);\n"
    "void @NAME@_set_debug_callback(@NAME@_debug_fn fn, void *user);\n"
    "\n";

static const char DEBUG_DEFS[] =
    "\n/* ---- the tensors of a run (onnx2c --debug-tensors) ---- */\n"
    "static @NAME@_debug_fn o2c_debug_fn;\n"
    "static void *o2c_debug_user;\n"
    "void @NAME@_set_debug_callback(@NAME@_debug_fn fn, void *user)\n"
    "{\n"
    "    o2c_debug_fn = fn;\n"
    "    o2c_debug_user = user;\n"
    "}\n";

/* After the last call of node n: its computed outputs to the callback */
static void debug_outputs(FILE *f, const KCall *k, const char *ind, const EmitCtx *c)
{
    const Node *n = k->node;
    const KCall *end = c->L->calls + c->L->n;
    for (const KCall *q = k + 1; q < end; q++)
        if (q->count > 0 && q->node == n) return;   /* not its last call */
    for (int j = 0; j < n->nout; j++) {
        const Tensor *t = n->out[j];
        if (!t || t->data || t->dtype == DT_STRING || t->seq || t->dyn_count || t->storage == ST_CONST) continue;
        if (!tensor_nuses(c->g, (Tensor *)t)) continue;   /* read by nobody: a kernel may leave it unwritten */
        fprintf(f, "%s    if (o2c_debug_fn) {\n%s        static const int64_t o2c_dims[] = {", ind, ind);
        for (int d = 0; d < t->rank; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)t->dims[d]);
        char sc[64];
        fprintf(f, "%s};\n%s        o2c_debug_fn(\"%s\", \"%s\", %d, %d, o2c_dims, %s, %s, %ld, o2c_debug_user);\n%s    }\n",
                t->rank ? "" : "0", ind, c_string(t->qof ? t->qof : t->name), c_string(profile_covers(n)), t->dtype,
                t->rank, c_ptr(t, 1, (void *)c), t->qof ? c_double_text(sc, t->qscale) : "0.0",
                t->qof ? (long)t->qzero : 0L, ind);
    }
}

/* @PROFILE_*@: the instrumented builds' additions (--profile, --debug-tensors) */
static void emit_profile_key(FILE *f, const char *key, const EmitCtx *c)
{
    if (c->o->debug_tensors) {
        if (!strcmp(key, "PROFILE_DECL")) profile_text(f, DEBUG_DECL, c);
        else if (!strcmp(key, "PROFILE_DEFS")) profile_text(f, DEBUG_DEFS, c);
        return;
    }
    if (!c->o->profile) return;   /* the ordinary build: nothing */
    if (!strcmp(key, "PROFILE_PRE")) profile_text(f, PROFILE_PRE, c);
    else if (!strcmp(key, "PROFILE_INCLUDES")) fputs("#ifndef O2C_PROFILE_NO_STDIO\n#include <stdio.h>\n#endif\n", f);
    else if (!strcmp(key, "PROFILE_DECL")) profile_text(f, PROFILE_DECL, c);
    else if (!strcmp(key, "PROFILE_DEFS")) {
        profile_text(f, PROFILE_DEFS, c);
        profile_rows(f, c);
    } else if (!strcmp(key, "PROFILE_FUNCS")) profile_text(f, PROFILE_FUNCS, c);
    else fail_plain("internal: unknown template key @%s@", key);
}
