/* Test harness for generated models (tests/run_models.py builds it with each
 * generated file).
 *
 *     prog [--once-above SECONDS] [--repeat N] IN_0.bin:BYTES ... -- OUT_0.bin:BYTES ...
 *
 * Reads each input file (raw, dense, exactly BYTES bytes) into a buffer of
 * exactly that size, runs the model, writes each output raw. Outputs are
 * poisoned with 0xFF before every run so an element the model never writes
 * shows up (NaN / -1). The model runs twice, and both runs must give the
 * same bytes (--once-above S: no second run when the first one took more
 * than S seconds of CPU time, for models that take long under the sanitizers):
 *   C    (default):          NAME_run_with_arena on a poisoned, 64-byte aligned
 *                            (as the header asks) heap arena of exactly
 *                            NAME_ARENA_SIZE bytes (so the sanitizer sees an
 *                            overrun), then NAME_run (its static arena);
 *                            -DO2C_HARNESS_UNDEFINED_ARENA: the heap arena is
 *                            not poisoned but left undefined (tests/test_valgrind.py:
 *                            memcheck then reports any arena byte read before written);
 *   CUDA (-DO2C_HARNESS_CUDA): NAME_run (host pointers), then NAME_run_device on
 *                            device buffers and a stream; NAME_cuda_release at the end.
 * --repeat N (CUDA): after the checked runs, N more NAME_run_device calls on
 * the same device buffers, each timed with CUDA events around it (launches
 * included, one stream); prints "device run: median M ms, min M ms (N runs)".
 * The inputs must be left unchanged. Exit status: 0 ok, 2 usage, 3 I/O,
 * 4 the model returned an error, 5 runs differ, 6 inputs modified.
 *
 * Compile with -DO2C_NAME=m (the generated --name; default m) and
 * -DO2C_HEADER='"m.h"' (default "m.h"). Valid C99 and C++. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200112L   /* posix_memalign */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef O2C_NAME
#define O2C_NAME m
#endif
#ifndef O2C_HEADER
#define O2C_HEADER "m.h"
#endif
#include O2C_HEADER

#define O2C_CAT_(a, b) a##b
#define O2C_CAT(a, b) O2C_CAT_(a, b)
#define MODEL(sym) O2C_CAT(O2C_NAME, sym)

typedef struct Buf { const char *path; long bytes; unsigned char *data; } Buf;

static int parse_arg(const char *arg, Buf *b)
{
    const char *colon = strrchr(arg, ':');
    char *end = NULL;
    size_t n;
    if (!colon) return 0;
    b->bytes = strtol(colon + 1, &end, 10);
    if (!*(colon + 1) || *end || b->bytes < 0) return 0;
    n = (size_t)(colon - arg);
    b->path = (const char *)malloc(n + 1);
    memcpy((char *)b->path, arg, n);
    ((char *)b->path)[n] = 0;
    /* exactly the size: the sanitizer reports any read or write past it */
    b->data = (unsigned char *)malloc(b->bytes ? (size_t)b->bytes : 1);
    return b->data != NULL;
}

static int read_input(Buf *b)
{
    FILE *f = fopen(b->path, "rb");
    long got;
    if (!f) { fprintf(stderr, "cannot open %s\n", b->path); return 0; }
    got = (long)fread(b->data, 1, (size_t)b->bytes, f);
    if (got != b->bytes || fgetc(f) != EOF) {
        fprintf(stderr, "%s: expected exactly %ld bytes\n", b->path, b->bytes);
        fclose(f);
        return 0;
    }
    fclose(f);
    return 1;
}

static int write_output(const Buf *b)
{
    FILE *f = fopen(b->path, "wb");
    if (!f || fwrite(b->data, 1, (size_t)b->bytes, f) != (size_t)b->bytes) {
        fprintf(stderr, "cannot write %s\n", b->path);
        if (f) fclose(f);
        return 0;
    }
    return fclose(f) == 0;
}

#ifdef O2C_HARNESS_CUDA
static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* --repeat: n timed NAME_run_device calls; the median and the minimum */
static int time_device_runs(const void *const *d_in, void *const *d_out, cudaStream_t stream, int n)
{
    cudaEvent_t start, stop;
    float *ms = (float *)malloc((size_t)n * sizeof *ms);
    int r;
    if (!ms || cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {
        fprintf(stderr, "cannot create the timing events\n");
        return 0;
    }
    for (r = 0; r < n; r++) {
        if (cudaEventRecord(start, stream) != cudaSuccess ||
            MODEL(_run_device)(d_in, d_out, stream) != 0 ||
            cudaEventRecord(stop, stream) != cudaSuccess ||
            cudaEventSynchronize(stop) != cudaSuccess ||
            cudaEventElapsedTime(&ms[r], start, stop) != cudaSuccess) {
            fprintf(stderr, "timed run %d failed: %s\n", r, MODEL(_cuda_error)());
            return 0;
        }
    }
    qsort(ms, (size_t)n, sizeof *ms, cmp_float);
    printf("device run: median %.4f ms, min %.4f ms (%d runs)\n", ms[n / 2], ms[0], n);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    free(ms);
    return 1;
}
#endif

int main(int argc, char **argv)
{
    int ni = 0, no = 0, i, sep = -1, rc, first = 1, once = 0, repeat = 0;
    double once_above = -1;
    clock_t t0;
    Buf *in, *out;
    const void **ins;
    void **outs, **outs2;
    unsigned char **saved;

    for (;;) {
        if (argc > first + 1 && !strcmp(argv[first], "--once-above")) once_above = atof(argv[first + 1]);
        else if (argc > first + 1 && !strcmp(argv[first], "--repeat")) repeat = atoi(argv[first + 1]);
        else break;
        first += 2;
    }
    for (i = first; i < argc; i++)
        if (!strcmp(argv[i], "--")) { sep = i; break; }
    if (sep < 0) { fprintf(stderr, "usage: %s [--once-above S] [--repeat N] IN:BYTES... -- OUT:BYTES...\n", argv[0]); return 2; }
    ni = sep - first;
    no = argc - sep - 1;
    if (ni != MODEL(_NUM_INPUTS) || no != MODEL(_NUM_OUTPUTS)) {
        fprintf(stderr, "the model has %d inputs and %d outputs; got %d and %d files\n", MODEL(_NUM_INPUTS),
                MODEL(_NUM_OUTPUTS), ni, no);
        return 2;
    }
    in = (Buf *)calloc((size_t)ni + 1, sizeof *in);
    out = (Buf *)calloc((size_t)no + 1, sizeof *out);
    ins = (const void **)calloc((size_t)ni + 1, sizeof *ins);
    outs = (void **)calloc((size_t)no + 1, sizeof *outs);
    outs2 = (void **)calloc((size_t)no + 1, sizeof *outs2);
    saved = (unsigned char **)calloc((size_t)ni + 1, sizeof *saved);
    for (i = 0; i < ni; i++) {
        if (!parse_arg(argv[first + i], &in[i])) { fprintf(stderr, "bad argument %s\n", argv[first + i]); return 2; }
        if (!read_input(&in[i])) return 3;
        ins[i] = in[i].data;
        saved[i] = (unsigned char *)malloc(in[i].bytes ? (size_t)in[i].bytes : 1);
        memcpy(saved[i], in[i].data, (size_t)in[i].bytes);
    }
    for (i = 0; i < no; i++) {
        if (!parse_arg(argv[sep + 1 + i], &out[i])) { fprintf(stderr, "bad argument %s\n", argv[sep + 1 + i]); return 2; }
        memset(out[i].data, 0xFF, (size_t)out[i].bytes);
        outs[i] = out[i].data;
        outs2[i] = malloc(out[i].bytes ? (size_t)out[i].bytes : 1);
        memset(outs2[i], 0xFF, (size_t)out[i].bytes);
    }

#ifndef O2C_HARNESS_CUDA
    if (repeat) { fprintf(stderr, "--repeat times device runs: CUDA builds only\n"); return 2; }
    {
        size_t asz = MODEL(_ARENA_SIZE) ? (size_t)MODEL(_ARENA_SIZE) : 1;
        void *arena = NULL;
        if (posix_memalign(&arena, 64, asz)) { fprintf(stderr, "out of memory\n"); return 3; }
#ifndef O2C_HARNESS_UNDEFINED_ARENA
        memset(arena, 0xFF, asz);
#endif  /* else left undefined: under Valgrind, memcheck reports an arena byte read before written */
        t0 = clock();
        rc = MODEL(_run_with_arena)((const void *const *)ins, (void *const *)outs, arena);
        free(arena);
        if (rc) { fprintf(stderr, "run_with_arena returned %d\n", rc); return 4; }
        once = once_above >= 0 && (double)(clock() - t0) / CLOCKS_PER_SEC > once_above;
        if (!once) {
            rc = MODEL(_run)((const void *const *)ins, (void *const *)outs2);
            if (rc) { fprintf(stderr, "second run (NAME_run) returned %d\n", rc); return 4; }
        }
    }
#else
    {
        void **d_in = (void **)calloc((size_t)ni + 1, sizeof *d_in);
        void **d_out = (void **)calloc((size_t)no + 1, sizeof *d_out);
        cudaStream_t stream;
        t0 = clock();
        rc = MODEL(_run)((const void *const *)ins, (void *const *)outs);
        if (rc) { fprintf(stderr, "run returned %d: %s\n", rc, MODEL(_cuda_error)()); return 4; }
        once = once_above >= 0 && (double)(clock() - t0) / CLOCKS_PER_SEC > once_above;
        if (!once) {
            if (cudaStreamCreate(&stream) != cudaSuccess) { fprintf(stderr, "cudaStreamCreate failed\n"); return 4; }
            for (i = 0; i < ni; i++) {
                if (cudaMalloc(&d_in[i], in[i].bytes ? (size_t)in[i].bytes : 1) != cudaSuccess ||
                    cudaMemcpy(d_in[i], in[i].data, (size_t)in[i].bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
                    fprintf(stderr, "cannot copy input %d to the device\n", i);
                    return 4;
                }
            }
            for (i = 0; i < no; i++)
                if (cudaMalloc(&d_out[i], out[i].bytes ? (size_t)out[i].bytes : 1) != cudaSuccess ||
                    cudaMemset(d_out[i], 0xFF, (size_t)out[i].bytes) != cudaSuccess) {
                    fprintf(stderr, "cannot allocate output %d on the device\n", i);
                    return 4;
                }
            rc = MODEL(_run_device)((const void *const *)d_in, (void *const *)d_out, stream);
            if (rc) { fprintf(stderr, "run_device returned %d: %s\n", rc, MODEL(_cuda_error)()); return 4; }
            if (cudaStreamSynchronize(stream) != cudaSuccess) { fprintf(stderr, "stream failed\n"); return 4; }
            for (i = 0; i < no; i++)
                if (cudaMemcpy(outs2[i], d_out[i], (size_t)out[i].bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
                    fprintf(stderr, "cannot copy output %d from the device\n", i);
                    return 4;
                }
            if (repeat > 0 && !time_device_runs((const void *const *)d_in, (void *const *)d_out, stream, repeat))
                return 4;
            for (i = 0; i < ni; i++) cudaFree(d_in[i]);
            for (i = 0; i < no; i++) cudaFree(d_out[i]);
            cudaStreamDestroy(stream);
        }
        MODEL(_cuda_release)();
        free(d_in);
        free(d_out);
    }
#endif

    if (once) printf("second run skipped: the first took %.1f s\n", (double)(clock() - t0) / CLOCKS_PER_SEC);
    for (i = 0; i < no; i++)
        if (!write_output(&out[i])) return 3;
    for (i = 0; i < ni; i++)
        if (memcmp(saved[i], in[i].data, (size_t)in[i].bytes)) {
            fprintf(stderr, "input %d was modified by the run\n", i);
            return 6;
        }
    for (i = 0; i < no && !once; i++)
        if (memcmp(outs[i], outs2[i], (size_t)out[i].bytes)) {
            fprintf(stderr, "output %d differs between the first and the second run\n", i);
            return 5;
        }
    for (i = 0; i < ni; i++) { free(in[i].data); free(saved[i]); free((void *)in[i].path); }
    for (i = 0; i < no; i++) { free(out[i].data); free(outs2[i]); free((void *)out[i].path); }
    free(in); free(out); free(ins); free(outs); free(outs2); free(saved);
    return 0;
}
