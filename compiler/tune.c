/* Autotuning (--tune, --tune-file): the lowering's tunable choices (kernel
 * variants, tile sizes; see lower_choose in lower.c) decided by timing.
 *
 * --tune lowers every node of the optimized graph once per candidate of its
 * choice and writes one timing program: the candidates of every distinct
 * key (the kernel family, shape, type and target of the choice), each a
 * function that runs the node's kernel calls with the candidate's
 * parameters in place, as the generated code does, on buffers of
 * pseudo-random floats. A runner builds and runs it: by default the host's C
 * compiler (`$CC`, else cc) with -O3 -march=native; `--tune-runner CMD` runs
 * `CMD PROGRAM.c` instead, which may build it for a board or an emulator and
 * run it there, as long as it prints the program's output. The program
 * prints one line per candidate, `o2c-tune KEY CANDIDATE NANOSECONDS`
 * (the best of several timed batches, per call). The winners go into the
 * tuning file, one line per key:
 *
 *     KEY<TAB>VARIANT<TAB>NANOSECONDS
 *
 * sorted by key, '#' lines are comments (every candidate's time). With
 * --tune-budget SECONDS the program times the sites largest first (by
 * FLOPs) and skips those it reaches after the budget: their keys are not
 * written, so they keep the heuristic. Given
 * with --tune-file (without --tune), the file replays those choices: the
 * generated code depends only on the variants, so it is byte-identical to
 * the tuning run's. Keys missing from the file keep the heuristic. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir.h"

#define TUNE_MAX_CANDIDATES 16   /* per choice (the results table's width) */

/* ---- the timing program ---- */

/* A tunable node: its key, how many candidates, and the calls of each. */
typedef struct Site {
    Node *node;
    const char *key;
    int ncand;
    Lowering *cand;        /* ncand lowerings, candidate j forced */
} Site;

/* The buffers of one candidate's calls: each tensor they use, numbered
 * (its buffer B[i] in the timing program). */
#define TUNE_MAX_BUFFERS 64
typedef struct Buffers {
    const Tensor *t[4 * O2C_MAX_X * TUNE_MAX_BUFFERS];
    int n;
} Buffers;

static int buf_index(Buffers *b, const Tensor *t)
{
    if (t->storage == ST_ALIAS && t->alias_of) t = t->alias_of;
    for (int i = 0; i < b->n; i++)
        if (b->t[i] == t) return i;
    if (b->n == (int)(sizeof b->t / sizeof b->t[0])) fail_plain("internal: too many tensors in a tuned node");
    b->t[b->n] = t;
    return b->n++;
}

static const char *buf_ptr(const Tensor *t, int out, void *ctx)
{
    (void)out;
    return xfmt("(void *)B[%d]", buf_index(ctx, t));
}

static int64_t buf_bytes(const Tensor *t)
{
    if (t->storage == ST_ALIAS && t->alias_of) t = t->alias_of;
    return (int64_t)tensor_bytes(t);
}

/* order: the sites in timing order (the largest layers first, so that a
 * --tune-budget is spent where it gains most) */
static void write_program(FILE *f, Site *s, int ns, const int *order, double budget_s)
{
    fputs("/* onnx2c --tune: times the candidates of each tunable kernel call */\n"
          "#define _POSIX_C_SOURCE 199309L\n#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n", f);
    Lowering all = {0};
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < s[i].ncand; j++)
            for (int c = 0; c < s[i].cand[j].n; c++) {
                KCall *k = lower_call_kernel(&all, s[i].cand[j].calls[c].kernel, 1);
                (void)k;
            }
    emit_kernel_sources(f, &all);
    int maxbuf = 1;
    fprintf(f, "\n/* ---- candidates ---- */\nstatic unsigned char *B[%d];\n", TUNE_MAX_BUFFERS);
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < s[i].ncand; j++) {
            Lowering *L = &s[i].cand[j];
            Buffers *bufs = xalloc(sizeof *bufs);
            fprintf(f, "/* %s: %s */\nstatic void c%d_%d(void)\n{\n", c_comment(s[i].key),
                    L->n ? c_comment(L->calls[0].variant ? L->calls[0].variant : "") : "", i, j);
            for (int c = 0; c < L->n; c++) {
                KCall *k = &L->calls[c];
                if (k->count <= 0) continue;
                fputs("    {\n", f);
                emit_call_params(f, k, buf_ptr, bufs, "        ", 0);
                fprintf(f, "        %s(0, %lld, &p);\n    }\n", k->kernel->name, (long long)k->count);
            }
            fputs("}\n", f);
            if (bufs->n > TUNE_MAX_BUFFERS) fail_plain("internal: too many tensors in a tuned node");
            if (bufs->n > maxbuf) maxbuf = bufs->n;
            fprintf(f, "static const long s%d_%d[] = {", i, j);
            for (int b = 0; b < bufs->n; b++) fprintf(f, "%lld, ", (long long)buf_bytes(bufs->t[b]));
            fputs("0};\n", f);
        }
    fputs("\n/* ---- timing ---- */\n"
          "#ifndef O2C_TUNE_NOW\n"
          "static double o2c_tune_now(void)\n{\n    struct timespec t;\n    clock_gettime(CLOCK_MONOTONIC, &t);\n"
          "    return t.tv_sec * 1e9 + t.tv_nsec;\n}\n#define O2C_TUNE_NOW() o2c_tune_now()   /* nanoseconds */\n#endif\n"
          "static unsigned rng = 12345u;\n"
          "static double run(void (*fn)(void), const long *sz)\n{\n"
          "    int b, i, reps = 1, batch;\n    double best = 1e300;\n"
          "    for (b = 0; sz[b]; b++) {\n"
          "        long k, nf = sz[b] / (long)sizeof(float);\n"
          "        B[b] = malloc((size_t)sz[b] + 64);\n"
          "        if (!B[b]) { fprintf(stderr, \"out of memory\\n\"); exit(1); }\n"
          "        for (k = 0; k < nf; k++) { rng = rng * 1664525u + 1013904223u; ((float *)B[b])[k] = (float)(rng >> 8) / 16777216.0f - 0.5f; }\n"
          "    }\n"
          "    fn();   /* warm-up */\n"
          "    for (;;) {   /* a batch long enough to time: 2 ms */\n"
          "        double t0 = O2C_TUNE_NOW(), t;\n"
          "        for (i = 0; i < reps; i++) fn();\n"
          "        t = O2C_TUNE_NOW() - t0;\n"
          "        if (t >= 2e6 || reps >= 1 << 20) break;\n"
          "        reps *= t > 0 && 2e6 / t < 64 ? (int)(2e6 / t) + 1 : 64;\n"
          "    }\n"
          "    for (batch = 0; batch < 5; batch++) {\n"
          "        double t0 = O2C_TUNE_NOW(), t;\n"
          "        for (i = 0; i < reps; i++) fn();\n"
          "        t = (O2C_TUNE_NOW() - t0) / reps;\n"
          "        if (t < best) best = t;\n"
          "    }\n"
          "    for (b = 0; sz[b]; b++) free(B[b]);\n"
          "    return best;\n}\n\nint main(void)\n{\n", f);
    /* --tune-budget: after the first (largest) site, a site starts only
     * while time is left (all its candidates or none); a skipped one keeps
     * the heuristic's choice */
    fprintf(f, "    const double budget = %.17g, t_start = O2C_TUNE_NOW();\n", budget_s * 1e9);
    for (int oi = 0; oi < ns; oi++) {
        int i = order[oi];
        fprintf(f, "    if (%d && budget > 0 && O2C_TUNE_NOW() - t_start > budget) {\n        printf(\"o2c-tune-skip %d\\n\");\n"
                   "    } else {\n", oi > 0, i);
        for (int j = 0; j < s[i].ncand; j++)
            fprintf(f, "        printf(\"o2c-tune %d %d %%.1f\\n\", run(c%d_%d, s%d_%d));\n        fflush(stdout);\n", i, j,
                    i, j, i, j);
        fputs("    }\n", f);
    }
    fputs("    return 0;\n}\n", f);
}

/* the shell quoting of s */
static char *sh_quote(const char *s)
{
    size_t n = 3;
    for (const char *p = s; *p; p++) n += *p == '\'' ? 4 : 1;
    char *q = xalloc(n), *o = q;
    *o++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') { memcpy(o, "'\\''", 4); o += 4; }
        else *o++ = *p;
    }
    *o++ = '\'';
    *o = 0;
    return q;
}

void tune_graph(Graph *g, const Options *o)
{
    if (!o->tune_file) fail_plain("--tune needs --tune-file FILE, where it writes the choices");
    /* the tunable nodes, one per distinct key */
    Site *sites = xalloc(sizeof *sites * (size_t)(g->nnodes + 1));
    int ns = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        if (n->folded || node_has_subgraph(n)) continue;   /* bodies keep the heuristic's choices */
        Lowering probe = {0};
        probe.target = o->target;
        probe.tiled = target_tiled(o->target);
        lower_node(n, &probe);
        if (probe.choices != 1) continue;   /* none (or several, which the tuner leaves to the heuristic) */
        const char *key = NULL;
        for (int c = 0; c < probe.n && !key; c++) key = probe.calls[c].tune_key;
        int dup = 0;
        for (int k = 0; k < ns && !dup; k++) dup = !strcmp(sites[k].key, key);
        if (dup) continue;
        Site *s = &sites[ns++];
        s->node = n;
        s->key = key;
        s->ncand = probe.max_candidates;
        if (s->ncand > TUNE_MAX_CANDIDATES) fail_plain("internal: %s has more than %d candidates", key, TUNE_MAX_CANDIDATES);
        s->cand = xalloc(sizeof(Lowering) * (size_t)s->ncand);
        for (int j = 0; j < s->ncand; j++) {
            s->cand[j].target = o->target;
            s->cand[j].tiled = target_tiled(o->target);
            s->cand[j].force = j + 1;
            lower_node(n, &s->cand[j]);
        }
    }
    FILE *out = fopen(o->tune_file, "w");
    if (!out) fail_plain("cannot write the tuning file '%s': %s", o->tune_file, strerror(errno));
    fprintf(out, "# onnx2c tuning file for %s: KEY<TAB>VARIANT<TAB>NANOSECONDS per call\n", c_comment(o->input));
    if (!ns) {
        fputs("# (no tunable kernel calls)\n", out);
        if (fclose(out) != 0) fail_plain("cannot write the tuning file '%s'", o->tune_file);
        return;
    }

    const char *tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char *dir = xfmt("%s/onnx2c-tune-XXXXXX", tmpdir);
    if (!mkdtemp(dir)) fail_plain("cannot make a folder in %s: %s", tmpdir, strerror(errno));
    char *src = xfmt("%s/tune.c", dir), *bin = xfmt("%s/tune", dir), *log = xfmt("%s/out.txt", dir);
    FILE *f = fopen(src, "w");
    if (!f) fail_plain("cannot write '%s': %s", src, strerror(errno));
    int *torder = xalloc(sizeof(int) * (size_t)ns);   /* timing order: FLOPs, largest first */
    int64_t *fl = xalloc(sizeof(int64_t) * (size_t)ns);
    for (int i = 0; i < ns; i++) {
        torder[i] = i;
        fl[i] = node_flops(sites[i].node);
    }
    for (int i = 1; i < ns; i++)
        for (int j = i; j > 0 && fl[torder[j - 1]] < fl[torder[j]]; j--) {
            int x = torder[j]; torder[j] = torder[j - 1]; torder[j - 1] = x;
        }
    write_program(f, sites, ns, torder, o->tune_budget);
    if (fclose(f) != 0) fail_plain("cannot write '%s'", src);
    const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
    char *cmd = o->tune_runner ? xfmt("%s %s >%s 2>&1", o->tune_runner, sh_quote(src), sh_quote(log))
                               : xfmt("%s -O3 -march=native -std=c99 -w -o %s %s -lm >%s 2>&1 && %s >>%s 2>&1", cc,
                                      sh_quote(bin), sh_quote(src), sh_quote(log), sh_quote(bin), sh_quote(log));
    note("tuning %d kernel shapes: %s", ns, cmd);
    fflush(stdout);
    int rc = system(cmd);
    /* the results */
    double *t = xalloc(sizeof(double) * (size_t)ns * TUNE_MAX_CANDIDATES);
    for (int i = 0; i < ns * TUNE_MAX_CANDIDATES; i++) t[i] = -1;
    char *skipped = xalloc((size_t)ns);
    FILE *r = fopen(log, "r");
    char line[4096], tail[2048] = "";
    while (r && fgets(line, sizeof line, r)) {
        int a, b;
        double v;
        if (sscanf(line, "o2c-tune %d %d %lf", &a, &b, &v) == 3 && a >= 0 && a < ns && b >= 0 && b < sites[a].ncand)
            t[a * TUNE_MAX_CANDIDATES + b] = v;
        else if (sscanf(line, "o2c-tune-skip %d", &a) == 1 && a >= 0 && a < ns && o->tune_budget > 0)
            skipped[a] = 1;
        else if (strlen(tail) + strlen(line) < sizeof tail) strcat(tail, line);
    }
    if (r) fclose(r);
    int missing = 0, nskipped = 0;
    for (int i = 0; i < ns; i++) {
        nskipped += skipped[i];
        for (int j = 0; j < sites[i].ncand && !skipped[i]; j++) missing |= t[i * TUNE_MAX_CANDIDATES + j] < 0;
    }
    if (rc != 0 || missing) {
        fclose(out);
        remove(o->tune_file);
        fail_plain("the tuning run failed (%s%s)%s%s; its program is %s", rc != 0 ? "exit status " : "results missing",
                   rc != 0 ? xfmt("%d", rc) : "", *tail ? ":\n" : "", tail, src);
    }
    remove(src);
    remove(bin);
    remove(log);
    rmdir(dir);

    /* the winners, sorted by key */
    int *order = xalloc(sizeof(int) * (size_t)ns);
    for (int i = 0; i < ns; i++) order[i] = i;
    for (int i = 1; i < ns; i++)
        for (int j = i; j > 0 && strcmp(sites[order[j - 1]].key, sites[order[j]].key) > 0; j--) {
            int x = order[j]; order[j] = order[j - 1]; order[j - 1] = x;
        }
    if (nskipped)
        fprintf(out, "# --tune-budget %g s: %d of %d kernel shapes timed (the largest first); the others keep the "
                     "heuristic's choice\n", o->tune_budget, ns - nskipped, ns);
    for (int oi = 0; oi < ns; oi++) {
        int i = order[oi], best = 0;
        Site *s = &sites[i];
        if (skipped[i]) {
            fprintf(out, "# %s: not timed (--tune-budget)\n", s->key);
            continue;
        }
        fputs("# ", out);
        for (int j = 0; j < s->ncand; j++) {
            const char *v = s->cand[j].n ? s->cand[j].calls[0].variant : NULL;
            for (int c = 0; c < s->cand[j].n && !v; c++) v = s->cand[j].calls[c].variant;
            fprintf(out, "%s%s %.1f", j ? ", " : "", v ? v : "?", t[i * TUNE_MAX_CANDIDATES + j]);
            if (t[i * TUNE_MAX_CANDIDATES + j] < t[i * TUNE_MAX_CANDIDATES + best]) best = j;
        }
        const char *v = NULL;
        for (int c = 0; c < s->cand[best].n && !v; c++) v = s->cand[best].calls[c].variant;
        fprintf(out, "\n%s\t%s\t%.1f\n", s->key, v, t[i * TUNE_MAX_CANDIDATES + best]);
    }
    if (fclose(out) != 0) fail_plain("cannot write the tuning file '%s'", o->tune_file);
    note("wrote %s (%d keys%s)", o->tune_file, ns - nskipped, nskipped ? xfmt(", %d not timed within --tune-budget", nskipped) : "");
}
