/* calib_hist: the calibration histogram and calibrators (compiler/engine/
 * histogram.c) on a file of float32 values, for tests/calib/test_calib.py,
 * which computes the same rules with numpy.
 *
 *   calib_hist FILE.f32 CHUNK LEVELS   -> one line per calibrator:
 *       NAME LO HI            (hexadecimal floats)
 * The values are added CHUNK at a time (a streaming histogram). */
#include <stdio.h>
#include <stdlib.h>

#include "ir.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: calib_hist FILE.f32 CHUNK LEVELS\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) return 2;
    long chunk = atol(argv[2]);
    int levels = atoi(argv[3]);
    if (chunk < 1 || levels < 2) return 2;
    float *buf = malloc(sizeof(float) * (size_t)chunk);
    static Hist h;
    hist_init(&h);
    size_t n;
    while ((n = fread(buf, sizeof(float), (size_t)chunk, f)) > 0)
        if (!hist_add(&h, buf, (int64_t)n)) {
            printf("nonfinite\n");
            return 0;
        }
    fclose(f);
    free(buf);
    static const struct { int method; double param; const char *name; } RULES[] = {
        {CALIB_MINMAX, 0, "minmax"}, {CALIB_PERCENTILE, 99.99, "percentile99.99"}, {CALIB_PERCENTILE, 99.9, "percentile99.9"},
        {CALIB_ENTROPY, 0, "entropy"}, {CALIB_MSE, 0, "mse"}};
    printf("width %a\n", h.width);
    for (size_t r = 0; r < sizeof RULES / sizeof RULES[0]; r++) {
        double lo, hi;
        hist_range(&h, RULES[r].method, RULES[r].param, levels, &lo, &hi);
        printf("%s %a %a\n", RULES[r].name, lo, hi);
    }
    return 0;
}
