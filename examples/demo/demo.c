/* make demo: runs a model compiled by onnx2c on the input of its
 * test_data_set_0 and prints each output value next to the value
 * onnxruntime computed (output_K.pb).
 *
 * Build: cc -std=c99 -I<dir of MODEL.h> -DMODEL_HEADER='"small_convnet.h"'
 *        -DMODEL=small_convnet demo.c small_convnet.c -lm
 * Run:   ./demo input_0.pb output_0.pb
 *
 * It reads the ONNX TensorProto files with a tiny protobuf reader (dims,
 * data_type, raw_data, float_data): enough for float tensors. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include MODEL_HEADER

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define M(x) CAT(MODEL, x)

typedef struct { int64_t dims[8]; int rank; int dtype; float *data; long n; } Tensor;

static uint64_t varint(const unsigned char **p, const unsigned char *end)
{
    uint64_t v = 0;
    int shift = 0;
    while (*p < end && shift < 64) {
        unsigned char b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
        shift += 7;
    }
    return v;
}

static int read_tensor(const char *path, Tensor *t)
{
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "demo: cannot open %s\n", path); return 1; }
    static unsigned char buf[1 << 22];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    const unsigned char *p = buf, *end = buf + len;
    memset(t, 0, sizeof *t);
    t->n = 1;
    while (p < end) {
        uint64_t key = varint(&p, end);
        int field = (int)(key >> 3), wire = (int)(key & 7);
        if (wire == 0) {
            uint64_t v = varint(&p, end);
            if (field == 1 && t->rank < 8) t->dims[t->rank++] = (int64_t)v;
            if (field == 2) t->dtype = (int)v;
        } else if (wire == 2) {
            uint64_t l = varint(&p, end);
            if (l > (uint64_t)(end - p)) return 1;
            if (field == 1) { /* packed dims */
                const unsigned char *q = p;
                while (q < p + l && t->rank < 8) t->dims[t->rank++] = (int64_t)varint(&q, p + l);
            } else if (field == 9 || field == 4) { /* raw_data or packed float_data */
                t->data = malloc(l);
                memcpy(t->data, p, l);
                t->n = (long)(l / 4);
            }
            p += l;
        } else if (wire == 5) {
            p += 4;
        } else if (wire == 1) {
            p += 8;
        } else {
            return 1;
        }
    }
    if (t->dtype != 1 || !t->data) { fprintf(stderr, "demo: %s is not a float tensor\n", path); return 1; }
    return 0;
}

int main(int argc, char **argv)
{
    Tensor in, want;
    if (argc != 3) { fprintf(stderr, "usage: demo input_0.pb output_0.pb\n"); return 2; }
    if (read_tensor(argv[1], &in) || read_tensor(argv[2], &want)) return 1;
    if (in.n != M(_INPUT0_SIZE) || want.n != M(_OUTPUT0_SIZE)) {
        fprintf(stderr, "demo: the test data does not match the model's shapes\n");
        return 1;
    }
    static float out[M(_OUTPUT0_SIZE)];
    const void *inputs[1];
    void *outputs[1];
    inputs[0] = in.data;
    outputs[0] = out;
    if (M(_run)(inputs, outputs) != 0) { fprintf(stderr, "demo: the model failed\n"); return 1; }
    printf("input '%s': %ld values; output '%s': %ld values\n", M(_INPUT0_NAME), in.n, M(_OUTPUT0_NAME), want.n);
    printf("%6s %14s %14s %10s\n", "index", "onnx2c", "onnxruntime", "|diff|");
    double worst = 0;
    for (long i = 0; i < want.n; i++) {
        double d = fabs((double)out[i] - (double)want.data[i]);
        if (d > worst) worst = d;
        if (i < 20) printf("%6ld %14.7g %14.7g %10.2e\n", i, out[i], want.data[i], d);
    }
    if (want.n > 20) printf("   ... (%ld more)\n", want.n - 20);
    printf("max |diff| = %.3g over %ld values: %s\n", worst, want.n, worst <= 1e-4 ? "MATCH" : "MISMATCH");
    free(in.data);
    free(want.data);
    return worst <= 1e-4 ? 0 : 1;
}
