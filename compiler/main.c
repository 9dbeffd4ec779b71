#define _POSIX_C_SOURCE 200809L
/* onnx2c: compiles an ONNX model into one standalone C or CUDA file.
 *
 *   onnx2c MODEL.onnx -o OUT.c  [--name NAME] [--shape INPUT:D0xD1x...] [--dim SYMBOL=N]
 *                               [--bind INPUT=FILE.pb] [-v]
 *   onnx2c MODEL.onnx -o OUT.cu ...
 *   onnx2c MODEL.onnx [-o OUT.c] [--report[=FILE]] [--emit-onnx FILE] [--dot FILE]
 *
 * Any failure: one message on stderr, exit status 1, no output file. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir.h"

#define MAX_THREADS 1024   /* --threads */

/* --int8's defaults (docs/PRECISION.md has the measurements behind them) */
#define DEFAULT_CALIBRATION CALIB_AUTO
#define DEFAULT_PERCENTILE 99.99
#define DEFAULT_MIN_SQNR 0.0

static void usage(FILE *f)
{
    fputs("usage: onnx2c MODEL.onnx -o OUT.c|OUT.cu [options]\n"
          "       onnx2c MODEL.onnx [-o OUT.c|OUT.cu] [--report[=FILE]] [--emit-onnx FILE] [--dot FILE]\n"
          "  -o OUT.c        write portable C99 (OUT.c and OUT.h)\n"
          "  -o OUT.cu       write CUDA (OUT.cu and OUT.h)\n"
          "  --report[=FILE] per kernel call: kernel, ONNX nodes covered, output, FLOPs, weights,\n"
          "                  arena placement; then totals (stdout, or FILE)\n"
          "  --emit-onnx FILE  write the optimized graph as an ONNX model (fused nodes as local\n"
          "                  functions in standard ops: runs in onnxruntime, opens in Netron)\n"
          "  --dot FILE      write the optimized graph for Graphviz (dot -Tsvg FILE)\n"
          "  --debug-tensors a debug build of the C: NAME_set_debug_callback(fn, user) hands every\n"
          "                  tensor a node computes to fn during a run (tools/compare_tensors.py\n"
          "                  compares them with onnxruntime and names the first node that is off)\n"
          "  --threads N     host C: the large kernel calls split their work into N parts run\n"
          "                  by OpenMP threads when the C is compiled with -fopenmp, or by the\n"
          "                  file's own POSIX thread pool with -DO2C_THREAD_POOL -pthread (with\n"
          "                  neither, one after another); the results are the same for any N\n"
          "                  (default: one thread, no threading code in the file)\n"
          "  --thread-grain FLOPS  with --threads: the least work (FLOPs; a quarter as bytes\n"
          "                  moved) of a call that splits (default 1048576)\n"
          "  --profile       a profiling build: the C times every kernel call and offers\n"
          "                  NAME_profile_print() and NAME_profile_rows() (C target only)\n"
          "  --name NAME     prefix of every exported symbol (default: OUT's file name)\n"
          "  --shape IN:D0xD1x...  fix the shape of input IN ('scalar': rank 0); a sequence\n"
          "                  input: its elements' shapes in order, IN:2x3,2x3,scalar (IN:empty\n"
          "                  for none); an optional sequence: the same, or IN:none (absent)\n"
          "  --dim SYMBOL=N  bind a symbolic dimension\n"
          "  --bind IN=FILE.pb  fix the value of input IN (a serialized TensorProto): for inputs\n"
          "                  that decide a shape; the code returns NAME_ERR_BOUND_INPUT when a\n"
          "                  run's input holds another value\n"
          "  --string-space BYTES  bytes for the strings one run builds (string tensors:\n"
          "                  StringConcat, StringSplit, ...; default 4096): a run whose strings\n"
          "                  do not fit returns NAME_ERR_STRING_SPACE\n"
          "  --caller-arena  only NAME_run_with_arena (and a typed entry taking the arena): the\n"
          "                  file has no mutable static state (C target)\n"
          "  --weights-section NAME, --arena-section NAME  put the constants / the static arena\n"
          "                  of NAME_run in that linker section (GNU C attribute; C target)\n"
          "  --emit-test-main FILE.c  also write a verification harness: a C program that reads\n"
          "                  the inputs and expected outputs (.pb or raw files), runs the model\n"
          "                  and prints each output's error; exit 0 within tolerance (C target)\n"
          "  --weights-bin FILE.bin  write the constants as binary data into FILE.bin, which the\n"
          "                  .c links by an assembler .incbin (GCC/Clang, ELF; C target): no\n"
          "                  weight text to parse (large models; docs/LARGE_MODELS.md)\n"
          "  --element-constants  write every constant element by element, for a target of any\n"
          "                  byte order (by default constants of 1 KiB or more are 64-bit words of\n"
          "                  their bytes in little-endian order, parsed up to 8x faster; the file\n"
          "                  refuses to compile for a big-endian target; always so for cortex-m)\n"
          "  --allow-newer-opsets  compile a model importing an opset newer than onnx2c knows\n"
          "                  (by the newest rules it knows, with a warning) instead of refusing it\n"
          "  --int8          calibrate the float model into int8 (weights symmetric per output\n"
          "                  channel, activations per tensor) with --calibrate DIR or --calib-cache\n"
          "  --fp16          float constants (weights, packed panels) stored as IEEE half: half\n"
          "                  the bytes; widened to float32 before the call that reads them (with\n"
          "                  --int8: the layers left float); with --calibrate, --min-sqnr and\n"
          "                  --keep-float keep the most sensitive layers' constants float32\n"
          "  --calibrate DIR calibration inputs: DIR/NAME/input_K.pb (ONNX's test-data layout, K in\n"
          "                  graph-input order), any number of sets\n"
          "  --calibration C the activations' ranges: auto (the default: mse, minmax and\n"
          "                  percentile measured, the best output SQNR kept), mse, minmax,\n"
          "                  percentile[=P] (P 99.99 unless given) or entropy (TensorRT's KL)\n"
          "  --int8-activations u8|s8|sym  asymmetric uint8 (the default; cortex-m: s8),\n"
          "                  asymmetric int8, or symmetric int8\n"
          "  --min-sqnr DB   layers go back to float (int8: first to fp16 with --fp16), the most\n"
          "                  damaging first, until the output's SQNR on the calibration sets is\n"
          "                  at least DB\n"
          "  --keep-float NODE[,NODE]  these layers stay float\n"
          "  --calib-cache FILE  the calibrated ranges: written after --calibrate, read without it\n"
          "  -O0, -O1, -O2   optimization level: none, cleanups (folding, dead nodes, no-ops),\n"
          "                  everything (fusion; the default)\n"
          "  --disable-pass NAME  skip one optimization pass (see --list-passes)\n"
          "  --target T      what the code is for: c (portable C99, the default: vector paths\n"
          "                  by the C compiler's predefined macros), avx2, avx512, neon (the C\n"
          "                  file stops with #error where the ISA is missing), cortex-m (the\n"
          "                  compact reference kernels: no register tiles, no scratch panels),\n"
          "                  cuda (the .cu output)\n"
          "  --max-arena BYTES  the most scratch memory a run may take (k, M: KiB, MiB): over\n"
          "                  it, the reference kernels (no packed panels) are tried, then the\n"
          "                  compile fails naming the tensors live at the peak\n"
          "  --index-bits N  32 or 64: the width of the generated code's index arithmetic\n"
          "                  (o2c_int). Default: 32 for --target cortex-m where every size\n"
          "                  fits in 31 bits (else 64, said in the file), 64 elsewhere; 32\n"
          "                  refuses a model whose sizes do not fit (C target)\n"
          "  --tune          time the candidate kernel variants of every tunable layer on this\n"
          "                  machine (or with --tune-runner) and write the winners to --tune-file\n"
          "  --tune-file FILE  the tuning file: written by --tune, else read (replays its choices)\n"
          "  --tune-runner CMD  run `CMD PROGRAM.c` to build and run the timing program (a board,\n"
          "                  an emulator); default: $CC (else cc) -O3 -march=native, run here\n"
          "  --tune-budget SECONDS  start no layer's timing after SECONDS (the largest layers\n"
          "                  first, the first always; the others keep the heuristic's choice)\n"
          "  -v              print what each stage and pass does\n"
          "  --list-ops      print the supported ONNX ops (other domains as DOMAIN::Name)\n"
          "  --list-passes   print the optimization passes in the order they run\n"
          "  --version, --help\n", f);
}

static int64_t parse_dim(const char *s, const char *flag, const char *arg)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || (*end && *end != 'x') || v < 0 || v > (1LL << 40))
        fail_plain("%s %s: '%s' is not a dimension (a non-negative integer)", flag, arg, s);
    return v;
}

/* --weights-bin FILE.bin: C target, a path the assembler's string can hold */
static void check_weights_bin(const Options *o)
{
    if (!o->weights_bin) return;
    if (o->cuda)
        fail_plain("--weights-bin: the CUDA target copies its weights to the device from C arrays; it is not "
                   "supported there (use -o OUT.c, or leave out --weights-bin)");
    if (strpbrk(o->weights_bin, "\"\\\n\r"))
        fail_plain("--weights-bin %s: the file name may not contain quotes, backslashes or line breaks (the .c "
                   "names it in an assembler string)", o->weights_bin);
}

/* --calibration auto | minmax | percentile[=P] | entropy | mse */
static void parse_calibration(const char *v, Options *o)
{
    if (!strcmp(v, "auto")) o->calib_method = CALIB_AUTO;
    else if (!strcmp(v, "minmax")) o->calib_method = CALIB_MINMAX;
    else if (!strcmp(v, "entropy")) o->calib_method = CALIB_ENTROPY;
    else if (!strcmp(v, "mse")) o->calib_method = CALIB_MSE;
    else if (!strncmp(v, "percentile", 10) && (!v[10] || v[10] == '=')) {
        o->calib_method = CALIB_PERCENTILE;
        o->calib_param = DEFAULT_PERCENTILE;
        if (v[10]) {
            char *end;
            double p = strtod(v + 11, &end);
            if (end == v + 11 || *end || !(p > 50 && p <= 100))
                fail_plain("--calibration %s: the percentile is a number above 50 and at most 100", v);
            o->calib_param = p;
        }
    } else {
        fail_plain("--calibration %s: expected auto, minmax, percentile[=P], entropy or mse", v);
    }
}

/* the precision flags together */
static void check_precision(Options *o)
{
    if (!o->int8 && (o->act_scheme >= 0 || o->calib_method >= 0))
        fail_plain("--calibration and --int8-activations go with --int8");
    if (!o->int8 && !o->fp16) {
        if (o->calibrate || o->calib_cache || o->keep_float || o->min_sqnr >= 0)
            fail_plain("--calibrate, --calib-cache, --min-sqnr and --keep-float go with --int8 or --fp16");
        return;
    }
    if (o->int8 && !o->calibrate && !o->calib_cache)
        fail_plain("--int8 needs calibration inputs: --calibrate DIR (DIR/NAME/input_K.pb, ONNX's test-data layout), "
                   "or --calib-cache FILE written by an earlier --calibrate run");
    if (!o->int8 && o->keep_float && !o->calibrate && !o->calib_cache)
        fail_plain("--fp16 --keep-float needs --calibrate DIR or --calib-cache FILE (the layers are found by the "
                   "calibration stage)");
    if (!o->calibrate && o->calib_cache && access(o->calib_cache, R_OK) != 0)
        fail_plain("--calib-cache %s: no such file, and no --calibrate DIR to make it", o->calib_cache);
    if (!o->calibrate && o->min_sqnr >= 0)
        fail_plain("--min-sqnr needs --calibrate DIR: the accuracy is measured on the calibration inputs");
    if (o->calib_method < 0) o->calib_method = DEFAULT_CALIBRATION;
    if ((o->calib_method == CALIB_PERCENTILE || o->calib_method == CALIB_AUTO) && !o->calib_param) o->calib_param = DEFAULT_PERCENTILE;
    if (o->act_scheme < 0) o->act_scheme = o->target == TARGET_CORTEX_M ? ACT_S8 : ACT_U8;
    if (o->min_sqnr < 0) o->min_sqnr = DEFAULT_MIN_SQNR;
}

static void parse_args(int argc, char **argv, Options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
        if (!strcmp(a, "--version")) { printf("onnx2c %s\n", ONNX2C_VERSION); exit(0); }
        if (!strcmp(a, "--list-ops")) {
            /* the default domain's ops, then the other ONNX domains' as DOMAIN::Name
             * (the onnx2c domain's fused ops are made by passes, not read from models) */
            for (int k = 0; k < op_count(); k++)
                if (!*op_at(k)->domain) printf("%s\n", op_name(k));
            for (int k = 0; k < op_count(); k++)
                if (*op_at(k)->domain && strcmp(op_at(k)->domain, "onnx2c")) printf("%s::%s\n", op_at(k)->domain, op_name(k));
            exit(0);
        }
        if (!strcmp(a, "--list-passes")) {
            for (int k = 0; k < pass_count(); k++) printf("%-20s -O%d  %s\n", pass_name(k), pass_level(k), pass_what(k));
            exit(0);
        }
        if (!strcmp(a, "-v")) { verbose = 1; continue; }
        if (!strcmp(a, "--tune")) { o->tune = 1; continue; }
        if (!strcmp(a, "--thread-grain")) {
            if (!val || !*val) fail_plain("--thread-grain needs a value (see --help)");
            char *end;
            long long v = strtoll(val, &end, 10);
            if (end == val || *end || v < 0) fail_plain("--thread-grain %s: expected a number of FLOPs, 0 or more", val);
            o->thread_grain = v;
            i++;
            continue;
        }
        if (!strcmp(a, "--max-arena")) {
            char *end;
            long long v = val ? strtoll(val, &end, 10) : 0;
            if (!val || end == val || v <= 0) fail_plain("--max-arena: expected a number of bytes (with k or M: KiB, MiB)");
            long long unit = *end == 'k' || *end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024 : 1;
            if (unit > 1) end++;
            if (*end || v > INT64_MAX / unit)
                fail_plain("--max-arena %s: expected a number of bytes (with k or M: KiB, MiB)", val);
            v *= unit;
            o->max_arena = v;
            i++;
            continue;
        }
        if (!strcmp(a, "--index-bits")) {
            if (!val || (strcmp(val, "32") && strcmp(val, "64"))) fail_plain("--index-bits: expected 32 or 64");
            o->index_bits = atoi(val);
            i++;
            continue;
        }
        if (!strcmp(a, "--threads")) {
            if (!val || !*val) fail_plain("--threads needs a value (see --help)");
            char *end;
            long v = strtol(val, &end, 10);
            if (end == val || *end || v < 1 || v > MAX_THREADS)
                fail_plain("--threads %s: expected a number of threads from 1 to %d", val, MAX_THREADS);
            o->threads = (int)v;
            i++;
            continue;
        }
        if (!strcmp(a, "--target")) {
            if (!val || !*val) fail_plain("--target needs a value (see --help)");
            int t = -1;
            for (int k = TARGET_C; k <= TARGET_CUDA; k++)
                if (!strcmp(val, target_name(k))) t = k;
            if (t < 0) fail_plain("--target %s: not one of c, avx2, avx512, neon, cortex-m, cuda", val);
            o->target = t;
            o->target_given = 1;
            i++;
            continue;
        }
        if (!strcmp(a, "--tune-budget")) {
            if (!val || !*val) fail_plain("--tune-budget needs a value (see --help)");
            char *end;
            double v = strtod(val, &end);
            if (end == val || *end || !(v > 0 && v <= 1e6)) fail_plain("--tune-budget %s: expected seconds, more than 0", val);
            o->tune_budget = v;
            i++;
            continue;
        }
        if (!strcmp(a, "--tune-file") || !strcmp(a, "--tune-runner")) {
            if (!val || !*val) fail_plain("%s needs a value (see --help)", a);
            if (a[7] == 'f') o->tune_file = val;
            else o->tune_runner = val;
            i++;
            continue;
        }
        if (!strcmp(a, "--int8")) { o->int8 = 1; continue; }
        if (!strcmp(a, "--fp16")) { o->fp16 = 1; continue; }
        if (!strcmp(a, "--calibrate") || !strcmp(a, "--calib-cache") || !strcmp(a, "--keep-float")) {
            if (!val || !*val) fail_plain("%s needs a value (see --help)", a);
            if (!strcmp(a, "--calibrate")) o->calibrate = val;
            else if (!strcmp(a, "--calib-cache")) o->calib_cache = val;
            else o->keep_float = val;
            i++;
            continue;
        }
        if (!strcmp(a, "--calibration")) {
            if (!val) fail_plain("%s needs a value (see --help)", a);
            i++;
            parse_calibration(val, o);
            continue;
        }
        if (!strcmp(a, "--int8-activations")) {
            if (!val) fail_plain("%s needs a value (see --help)", a);
            i++;
            if (!strcmp(val, "u8")) o->act_scheme = ACT_U8;
            else if (!strcmp(val, "s8")) o->act_scheme = ACT_S8;
            else if (!strcmp(val, "sym")) o->act_scheme = ACT_SYM;
            else fail_plain("--int8-activations %s: expected u8 (asymmetric uint8), s8 (asymmetric int8) or sym "
                            "(symmetric int8)", val);
            continue;
        }
        if (!strcmp(a, "--min-sqnr")) {
            if (!val) fail_plain("%s needs a value (see --help)", a);
            i++;
            char *end;
            double v = strtod(val, &end);
            if (end == val || *end || !(v >= 0 && v <= 200))
                fail_plain("--min-sqnr %s: expected a number of dB from 0 to 200", val);
            o->min_sqnr = v;
            continue;
        }
        if (!strcmp(a, "--report")) { o->report = "-"; continue; }
        if (!strcmp(a, "--profile")) { o->profile = 1; continue; }
        if (!strcmp(a, "--debug-tensors")) { o->debug_tensors = 1; continue; }
        if (!strcmp(a, "--allow-newer-opsets")) { o->allow_newer_opsets = 1; continue; }
        if (!strcmp(a, "--caller-arena")) { o->caller_arena = 1; continue; }
        if (!strcmp(a, "--element-constants")) { o->element_constants = 1; continue; }
        if (!strcmp(a, "--weights-section") || !strcmp(a, "--arena-section")) {
            if (!val || !*val) fail_plain("%s needs a section name (see --help)", a);
            for (const char *q = val; *q; q++)
                if (!(isalnum((unsigned char)*q) || *q == '.' || *q == '_' || *q == '$'))
                    fail_plain("%s %s: a section name is letters, digits, '.', '_' and '$'", a, val);
            if (a[2] == 'w') o->weights_section = val;
            else o->arena_section = val;
            i++;
            continue;
        }
        if (!strcmp(a, "--emit-test-main")) {   /* emit_test_main.c */
            if (!val || !*val) fail_plain("%s needs a file name (see --help)", a);
            o->test_main = val;
            i++;
            continue;
        }
        if (!strcmp(a, "--weights-bin")) {   /* weights_bin.c */
            if (!val || !*val) fail_plain("%s needs a file name (see --help)", a);
            o->weights_bin = val;
            i++;
            continue;
        }
        if (!strncmp(a, "--report=", 9)) {
            if (!a[9]) fail_plain("--report=FILE: the file name is empty");
            o->report = a + 9;
            continue;
        }
        if (!strncmp(a, "--emit-onnx=", 12) || !strncmp(a, "--dot=", 6)) {
            const char *v = strchr(a, '=') + 1;
            if (!*v) fail_plain("%.*s: the file name is empty", (int)(strchr(a, '=') - a), a);
            if (a[2] == 'e') o->emit_onnx = v;
            else o->dot = v;
            continue;
        }
        if (!strcmp(a, "--emit-onnx") || !strcmp(a, "--dot")) {
            if (!val || !*val) fail_plain("%s needs a file name (see --help)", a);
            if (a[2] == 'e') o->emit_onnx = val;
            else o->dot = val;
            i++;
            continue;
        }
        if (!strcmp(a, "-O0") || !strcmp(a, "-O1") || !strcmp(a, "-O2")) { o->opt_level = a[2] - '0'; continue; }
        if (!strcmp(a, "--disable-pass")) {
            if (!val) fail_plain("%s needs a value (see --help)", a);
            if (!pass_exists(val)) fail_plain("--disable-pass %s: no such pass (see --list-passes)", val);
            if (o->ndisabled == 64) fail_plain("too many --disable-pass flags");
            o->disabled[o->ndisabled++] = val;
            i++;
            continue;
        }
        if (!strcmp(a, "--string-space")) {   /* string tensors: ops/strings.c */
            if (!val) fail_plain("%s needs a value (see --help)", a);
            i++;
            char *end;
            errno = 0;
            long long v = strtoll(val, &end, 10);
            if (errno || end == val || *end || v < 1 || v > (1LL << 40))
                fail_plain("--string-space %s: expected a number of bytes from 1 to 2^40", val);
            o->string_space = v;
            continue;
        }
        if (!strcmp(a, "--bind")) {
            if (!val) fail_plain("%s needs a value (see --help)", a);
            i++;
            const char *eq = strchr(val, '=');
            if (!eq || eq == val || !eq[1]) fail_plain("--bind %s: expected INPUT=FILE.pb", val);
            if (o->nbinds == 64) fail_plain("too many --bind flags");
            char *name = xstrdup(val);
            name[eq - val] = 0;
            o->binds[o->nbinds].name = name;
            o->binds[o->nbinds++].file = eq + 1;
            continue;
        }
        if (!strcmp(a, "-o") || !strcmp(a, "--name") || !strcmp(a, "--shape") || !strcmp(a, "--dim")) {
            if (!val) fail_plain("%s needs a value (see --help)", a);
            i++;
            if (!strcmp(a, "-o")) o->output = val;
            else if (!strcmp(a, "--name")) o->name = val;
            else if (!strcmp(a, "--shape")) {
                const char *colon = strrchr(val, ':');
                if (!colon || colon == val || !colon[1]) fail_plain("--shape %s: expected INPUT:D0xD1x...", val);
                if (o->nshapes == 64) fail_plain("too many --shape flags");
                char *name = xstrdup(val);
                name[colon - val] = 0;
                o->shapes[o->nshapes].name = name;
                o->shapes[o->nshapes].text = colon + 1;
                if (strchr(colon + 1, ',') || !strcmp(colon + 1, "empty") || !strcmp(colon + 1, "none")) {
                    o->shapes[o->nshapes++].rank = -1;   /* a sequence's or optional's shapes: ops/sequence.c reads the text */
                    continue;
                }
                if (!strcmp(colon + 1, "scalar")) {
                    o->shapes[o->nshapes++].rank = 0;
                    continue;
                }
                int r = 0;
                for (const char *p = colon + 1;;) {
                    if (r == MAX_RANK) fail_plain("--shape %s: at most %d dimensions", val, MAX_RANK);
                    o->shapes[o->nshapes].dims[r++] = parse_dim(p, "--shape", val);
                    p = strchr(p, 'x');
                    if (!p) break;
                    p++;
                }
                o->shapes[o->nshapes++].rank = r;
            } else {
                const char *eq = strchr(val, '=');
                if (!eq || eq == val || !eq[1]) fail_plain("--dim %s: expected SYMBOL=N", val);
                if (o->ndims == 64) fail_plain("too many --dim flags");
                char *name = xstrdup(val);
                name[eq - val] = 0;
                o->dimv[o->ndims].name = name;
                const char *num = eq + 1;
                if (strchr(num, 'x')) fail_plain("--dim %s: '%s' is not a number", val, num);
                o->dimv[o->ndims++].value = parse_dim(num, "--dim", val);
            }
            continue;
        }
        if (a[0] == '-' && a[1]) fail_plain("unknown option '%s' (see --help)", a);
        if (o->input) fail_plain("more than one model given ('%s' and '%s')", o->input, a);
        o->input = a;
    }
    if (!o->input) { usage(stderr); fail_plain("no model given"); }
    check_precision(o);
    if (o->tune && !o->tune_file) fail_plain("--tune needs --tune-file FILE, where it writes the choices");
    if (o->tune && o->target == TARGET_CORTEX_M)
        fail_plain("--tune: --target cortex-m has one kernel per layer (the compact reference kernels), so there is "
                   "nothing to time; its cost is counted by `make bench-mcu-models` (instructions under QEMU)");
    if (o->tune_runner && !o->tune) fail_plain("--tune-runner is only used with --tune");
    if (o->tune_budget > 0 && !o->tune) fail_plain("--tune-budget is only used with --tune");
    if (o->profile && !o->output) fail_plain("--profile needs -o OUT.c (it makes a profiling build of the generated C)");
    if (o->debug_tensors && !o->output) fail_plain("--debug-tensors needs -o OUT.c (it makes a build of the generated C)");
    if (o->debug_tensors && o->profile) fail_plain("--debug-tensors and --profile: one instrumented build at a time");
    if (o->debug_tensors) {   /* the tensors in ONNX's layout, as the callback promises */
        if (o->ndisabled == 64) fail_plain("too many --disable-pass flags");
        o->disabled[o->ndisabled++] = "layout";
    }
    if (o->weights_bin && !o->output) fail_plain("--weights-bin needs -o OUT.c (the C file that links it)");
    if (o->test_main && !o->output) fail_plain("--emit-test-main needs -o OUT.c (the harness runs the C file)");
    if (!o->output) {
        if (!o->report && !o->emit_onnx && !o->dot)
            fail_plain("no output given: use -o OUT.c (C) or -o OUT.cu (CUDA), or --report, --emit-onnx, --dot");
        if (o->name && strcmp(c_ident(o->name), o->name))
            fail_plain("--name %s: not a valid C identifier", o->name);
        return;
    }
    if (strpbrk(o->output, "\"\\\n\r"))
        fail_plain("-o %s: the output file name may not contain quotes, backslashes or line breaks "
                   "(the source includes the header by that name)", o->output);
    size_t n = strlen(o->output);
    if (n > 3 && !strcmp(o->output + n - 3, ".cu")) o->cuda = 1;
    else if (!(n > 2 && !strcmp(o->output + n - 2, ".c")))
        fail_plain("-o %s: the output must end in .c (C) or .cu (CUDA)", o->output);
    if (o->test_main && o->cuda)
        fail_plain("--emit-test-main needs -o OUT.c: the harness runs the C file (the CUDA target has none yet)");
    if (o->cuda && o->target_given && o->target != TARGET_CUDA)
        fail_plain("--target %s is a C target; -o %s writes CUDA (use -o OUT.c)", target_name(o->target), o->output);
    if (!o->cuda && o->target == TARGET_CUDA)
        fail_plain("--target cuda writes CUDA: use -o OUT.cu");
    if (o->cuda) o->target = TARGET_CUDA;
    if (o->cuda && o->tune_file)
        fail_plain("--tune and --tune-file choose among the C target's kernel variants; the CUDA target has none yet");
    if (o->cuda && (o->caller_arena || o->weights_section || o->arena_section))
        fail_plain("--caller-arena, --weights-section and --arena-section shape the C target's memory; the CUDA "
                   "target keeps its weights and arena in device memory (use -o OUT.c)");
    check_weights_bin(o);
    if (o->caller_arena && o->arena_section)
        fail_plain("--arena-section names the section of NAME_run's static arena, which --caller-arena leaves out");
    if (o->debug_tensors && o->cuda)
        fail_plain("--debug-tensors: the CUDA target is not supported; make the debug build of the C (-o OUT.c)");
    if (o->debug_tensors && o->caller_arena)
        fail_plain("--debug-tensors keeps the callback in static state, which --caller-arena rules out");
    if (o->thread_grain >= 0 && o->threads < 2) fail_plain("--thread-grain goes with --threads N (N > 1)");
    if (o->threads > 1 && o->cuda)
        fail_plain("--threads: the CUDA target runs on the GPU's threads already (use -o OUT.c for host threads)");
    if (o->cuda && o->index_bits)
        fail_plain("--index-bits: the CUDA target's index arithmetic is 64-bit (use -o OUT.c)");
    if (o->threads > 1 && o->target == TARGET_CORTEX_M)
        fail_plain("--threads: --target cortex-m is single-threaded firmware (no OS, no threads)");
    if (o->profile && o->cuda)
        fail_plain("--profile: the CUDA target is not supported; profile the C build (-o OUT.c), or time the .cu with "
                   "Nsight Systems (nsys profile), which shows every kernel launch");
    if (!o->name) {
        const char *base = strrchr(o->output, '/');
        base = base ? base + 1 : o->output;
        char *stem = xstrdup(base);
        *strrchr(stem, '.') = 0;
        o->name = c_ident(stem);
    } else if (strcmp(c_ident(o->name), o->name)) {
        fail_plain("--name %s: not a valid C identifier", o->name);
    }
}

static char *tmp_src, *tmp_hdr, *tmp_bin, *tmp_test;
static char *tmp_extra[3];    /* --report=FILE, --emit-onnx, --dot */

static void cleanup_tmp(void)
{
    if (tmp_src) unlink(tmp_src);
    if (tmp_hdr) unlink(tmp_hdr);
    if (tmp_bin) unlink(tmp_bin);
    if (tmp_test) unlink(tmp_test);
    for (int i = 0; i < 3; i++)
        if (tmp_extra[i]) unlink(tmp_extra[i]);
}

/* An existing output that is not a regular file (/dev/null, /dev/stdout, a
 * FIFO): written in place, never replaced by a renamed temporary. */
static int special_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

static FILE *open_tmp(const char *final, char **tmp)
{
    if (special_file(final)) {   /* no temporary: *tmp stays NULL, commit_tmp does nothing */
        *tmp = NULL;
        FILE *f = fopen(final, "wb");
        if (!f) fail_plain("cannot write '%s': %s", final, strerror(errno));
        return f;
    }
    *tmp = xfmt("%s.tmp%ld", final, (long)getpid());
    FILE *f = fopen(*tmp, "wb");
    if (!f) { *tmp = NULL; fail_plain("cannot write '%s': %s", final, strerror(errno)); }
    return f;
}

static void close_tmp(FILE *f, const char *final)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) fail_plain("cannot write '%s': %s", final, strerror(errno));
}

/* Renames a finished temporary over its final name. */
static void commit_tmp(char **tmp, const char *final)
{
    if (!*tmp) return;   /* written in place (special_file) */
    if (rename(*tmp, final) != 0) fail_plain("cannot write '%s': %s", final, strerror(errno));
    *tmp = NULL;
}

/* An output that would be the model itself (the same file, by any path):
 * refused before anything is written */
static void not_the_input(const char *out, const Options *o)
{
    struct stat a, b;
    if (out && strcmp(out, "-") && stat(out, &a) == 0 && stat(o->input, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
        fail_plain("'%s' is the input model: onnx2c does not overwrite it (choose another output name)", out);
}

static void compile(Options *o)
{
    diag_file = o->input;
    /* every output file is opened (as a temporary) before any work: a bad
     * path fails at once and leaves nothing behind */
    const char *extra[3] = {o->report && strcmp(o->report, "-") ? o->report : NULL, o->emit_onnx, o->dot};
    FILE *fx[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < i; j++)
            if (extra[i] && extra[j] && !strcmp(extra[i], extra[j]))
                fail_plain("'%s' is given for two outputs", extra[i]);
    for (int i = 0; i < 3; i++) not_the_input(extra[i], o);
    if (o->output) {
        not_the_input(o->output, o);
        char *h = xstrdup(o->output);
        strcpy(strrchr(h, '.'), ".h");
        not_the_input(h, o);
        not_the_input(o->weights_bin, o);
        not_the_input(o->test_main, o);
    }
    for (int i = 0; i < 3; i++)
        if (extra[i]) fx[i] = open_tmp(extra[i], &tmp_extra[i]);
    char *src = NULL, *hdr = NULL;
    FILE *fs = NULL, *fh = NULL;
    if (o->output) {
        src = xstrdup(o->output);
        hdr = xstrdup(o->output);
        strcpy(strrchr(hdr, '.'), ".h");
        o->header = strrchr(hdr, '/') ? strrchr(hdr, '/') + 1 : hdr;
        for (int i = 0; i < 3; i++)
            if (extra[i] && (!strcmp(extra[i], src) || !strcmp(extra[i], hdr)))
                fail_plain("'%s' is given for two outputs", extra[i]);
        if (o->weights_bin && (!strcmp(o->weights_bin, src) || !strcmp(o->weights_bin, hdr)))
            fail_plain("'%s' is given for two outputs", o->weights_bin);
        for (int i = 0; i < 3; i++)
            if (o->weights_bin && extra[i] && !strcmp(extra[i], o->weights_bin))
                fail_plain("'%s' is given for two outputs", extra[i]);
        fs = open_tmp(src, &tmp_src);
        fh = open_tmp(hdr, &tmp_hdr);
        const char *mine[3] = {src, hdr, o->weights_bin};
        for (int i = 0; i < 3 && o->test_main; i++)
            if (mine[i] && !strcmp(o->test_main, mine[i])) fail_plain("'%s' is given for two outputs", o->test_main);
        for (int i = 0; i < 3 && o->test_main; i++)
            if (extra[i] && !strcmp(o->test_main, extra[i])) fail_plain("'%s' is given for two outputs", o->test_main);
        if (o->weights_bin) o->weights_bin_file = open_tmp(o->weights_bin, &tmp_bin);
        if (o->test_main) o->test_main_file = open_tmp(o->test_main, &tmp_test);
    } else if (!o->name) {
        const char *base = strrchr(o->input, '/');
        base = base ? base + 1 : o->input;
        char *stem = xstrdup(base);
        if (strrchr(stem, '.')) *strrchr(stem, '.') = 0;
        o->name = c_ident(stem);
    }

    Graph *g = load_model(o->input);
    if (!sha256_file(o->input, o->model_sha256))   /* the model's fingerprint (the banner, NAME_MODEL_SHA256) */
        fail_plain("cannot read '%s' again to hash it: %s", o->input, strerror(errno));
    for (int b = 0; b < o->nbinds; b++) {   /* --bind values */
        Tensor *v = xalloc(sizeof *v);
        v->name = o->binds[b].name;
        load_tensor_file(o->binds[b].file, v, "--bind file");
        o->binds[b].value = v;
    }
    o->qdq_onnx = o->int8 ? fx[1] : NULL;
    o->read_tensor = load_tensor_file;
    Lowering L = {0};
    int64_t arena = pipeline_run(g, &L, o);   /* infer, passes, tune, schedule, lower, plan (pipeline.c) */
    if (o->max_arena && arena > o->max_arena && target_tiled(o->target)) {
        /* over the budget: the model again with the reference kernels, which
         * keep no packed panels or scratch in the arena; taken if smaller */
        Options ref = *o;
        ref.reference_kernels = 1;
        ref.tune = 0;
        ref.tune_file = NULL;
        ref.qdq_onnx = NULL;   /* --int8: written once, by the first run */
        Graph *g2 = load_model(o->input);
        Lowering L2 = {0};
        int64_t small = pipeline_run(g2, &L2, &ref);
        note("--max-arena %lld: arena %lld bytes with the tiled kernels, %lld with the reference kernels",
             (long long)o->max_arena, (long long)arena, (long long)small);
        if (small < arena) g = g2, L = L2, arena = small;
    }
    if (o->max_arena && arena > o->max_arena) plan_budget_fail(&L, arena, o->max_arena);

    if (o->output) {
        if (o->cuda) emit_cuda(g, &L, o, arena, fs, fh);
        else emit_c(g, &L, o, arena, fs, fh);
        close_tmp(fs, src);
        close_tmp(fh, hdr);
        if (o->weights_bin_file) close_tmp(o->weights_bin_file, o->weights_bin);
        if (o->test_main_file) close_tmp(o->test_main_file, o->test_main);
    }
    if (o->report) write_report(fx[0] ? fx[0] : stdout, g, &L, arena, o);
    if (o->emit_onnx && !o->int8) emit_onnx(g, fx[1]);   /* --int8: the QDQ model (pipeline.c) */
    if (o->dot) emit_dot(g, fx[2]);
    for (int i = 0; i < 3; i++)
        if (fx[i]) close_tmp(fx[i], extra[i]);
    if (o->report && !fx[0] && (fflush(stdout) != 0 || ferror(stdout)))
        fail_plain("cannot write the report to standard output: %s", strerror(errno));
    for (int i = 0; i < 3; i++)
        if (tmp_extra[i]) commit_tmp(&tmp_extra[i], extra[i]);
    if (!o->output) return;
    if (tmp_bin) commit_tmp(&tmp_bin, o->weights_bin);
    if (tmp_test) commit_tmp(&tmp_test, o->test_main);
    commit_tmp(&tmp_hdr, hdr);
    if (tmp_src && rename(tmp_src, src) != 0) {
        int e = errno;
        if (!special_file(hdr)) unlink(hdr);
        if (o->weights_bin && !special_file(o->weights_bin)) unlink(o->weights_bin);
        if (o->test_main && !special_file(o->test_main)) unlink(o->test_main);
        fail_plain("cannot write '%s': %s", src, strerror(e));
    }
    tmp_src = NULL;
    note("wrote %s and %s (%d kernel calls, arena %lld bytes)", src, hdr, L.n, (long long)arena);
}

/* The flags as the generated files record them (NAME_ONNX2C_FLAGS): every
 * argument but the model's path, one that names a path as its file name
 * (the files do not change with the folder onnx2c ran in), quoted where it
 * holds a space. */
static const char *flags_text(int argc, char **argv, const Options *o)
{
    const char *t = "";
    for (int i = 1; i < argc; i++) {
        if (argv[i] == o->input) continue;
        const char *v = argv[i], *eq = !strncmp(v, "--", 2) ? strchr(v, '=') : NULL;   /* --flag=VALUE */
        if (eq) v = eq + 1;
        const char *a = strrchr(v, '/') ? strrchr(v, '/') + 1 : v;
        if (eq) a = xfmt("%.*s%s", (int)(eq + 1 - argv[i]), argv[i], a);
        t = xfmt("%s%s%s%s%s", t, *t ? " " : "", strchr(a, ' ') || !*a ? "'" : "", a, strchr(a, ' ') || !*a ? "'" : "");
    }
    return t;
}

int main(int argc, char **argv)
{
    static Options o;
    o.opt_level = 2;
    o.calib_method = o.act_scheme = -1;
    o.min_sqnr = -1;
    o.thread_grain = -1;   /* --thread-grain: threads.c's default */
    jmp_buf jb;
    diag_jmp = &jb;
    if (setjmp(jb)) {
        cleanup_tmp();
        fprintf(stderr, "onnx2c: %s\n", diag_msg);
        pool_release();
        return 1;
    }
    parse_args(argc, argv, &o);
    o.flags_text = flags_text(argc, argv, &o);
    compile(&o);
    pool_release();
    return 0;
}
