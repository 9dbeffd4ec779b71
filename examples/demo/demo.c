/* make demo: runs a model compiled by onnx2c on the input of its
 * test_data_set_0 and prints each output value next to the value
 * onnxruntime computed (output_K.pb).
 *
 * Build: cc -std=c99 -I<dir of MODEL.h> -DMODEL_HEADER='"small_convnet.h"'
 *        -DMODEL=small_convnet demo.c small_convnet.c -lm
 * Run:   ./demo TEST_DATA_DIR    (its input_K.pb and output_K.pb, any number)
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
    /* the model's inputs and outputs, as the header's array macros list them */
    enum { NI = M(_NUM_INPUTS), NO = M(_NUM_OUTPUTS) };
    static const char *const in_names[NI ? NI : 1] = M(_INPUT_NAMES), *const out_names[NO ? NO : 1] = M(_OUTPUT_NAMES);
    static const int in_types[NI ? NI : 1] = M(_INPUT_ONNX_TYPES), out_types[NO ? NO : 1] = M(_OUTPUT_ONNX_TYPES);
    static const long in_n[NI ? NI : 1] = M(_INPUT_SIZES), out_n[NO ? NO : 1] = M(_OUTPUT_SIZES);
    Tensor in[NI ? NI : 1], want[NO ? NO : 1];
    const void *inputs[NI ? NI : 1];
    void *outputs[NO ? NO : 1];
    char path[4096];
    int k, bad = 0;
    if (argc != 2) { fprintf(stderr, "usage: demo TEST_DATA_DIR (with input_K.pb and output_K.pb)\n"); return 2; }
    for (k = 0; k < NI + NO; k++) {   /* float tensors only: this reader's limit (--emit-test-main reads any) */
        int is_in = k < NI, j = is_in ? k : k - NI;
        if ((is_in ? in_types[j] : out_types[j]) != 1) {
            fprintf(stderr, "demo: %s '%s' is not float32: this demo reads float tensors only\n",
                    is_in ? "input" : "output", is_in ? in_names[j] : out_names[j]);
            return 2;
        }
        snprintf(path, sizeof path, "%s/%s_%d.pb", argv[1], is_in ? "input" : "output", j);
        if (read_tensor(path, is_in ? &in[j] : &want[j])) return 1;
        if ((is_in ? in[j].n : want[j].n) != (is_in ? in_n[j] : out_n[j])) {
            fprintf(stderr, "demo: %s holds %ld values, the model's tensor %ld\n", path, is_in ? in[j].n : want[j].n,
                    is_in ? in_n[j] : out_n[j]);
            return 1;
        }
        if (is_in) inputs[j] = in[j].data;
        else if (!(outputs[j] = malloc((size_t)(out_n[j] ? out_n[j] : 1) * sizeof(float)))) return 1;
    }
    if (M(_run)(inputs, outputs) != 0) { fprintf(stderr, "demo: the model failed\n"); return 1; }
    for (k = 0; k < NO; k++) {
        const float *out = (const float *)outputs[k];
        double worst = 0;
        long i;
        printf("output %d '%s': %ld values\n%6s %14s %14s %10s\n", k, out_names[k], want[k].n, "index", "onnx2c",
               "onnxruntime", "|diff|");
        for (i = 0; i < want[k].n; i++) {
            double d = fabs((double)out[i] - (double)want[k].data[i]);
            if (d > worst) worst = d;
            if (i < 20) printf("%6ld %14.7g %14.7g %10.2e\n", i, out[i], want[k].data[i], d);
        }
        if (want[k].n > 20) printf("   ... (%ld more)\n", want[k].n - 20);
        printf("max |diff| = %.3g over %ld values: %s\n", worst, want[k].n, worst <= 1e-4 ? "MATCH" : "MISMATCH");
        bad |= worst > 1e-4;
        free(outputs[k]);
        free(want[k].data);
    }
    for (k = 0; k < NI; k++) free(in[k].data);
    return bad;
}
