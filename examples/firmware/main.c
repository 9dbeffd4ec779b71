/* Firmware-style integration of a model compiled by onnx2c.
 *
 *   build/onnx2c examples/small_convnet/model.onnx -o small_convnet.c
 *   cc -std=c99 -I. examples/firmware/main.c small_convnet.c -lm
 *
 * What a microcontroller build looks like: no heap, the scratch memory is a
 * static buffer the application owns (it could live in a specific RAM bank),
 * weights are const (they stay in flash), one call per inference. The
 * sensor and the result handling are stand-ins. */
#include <stdint.h>

#include "small_convnet.h"

/* Scratch memory for intermediate tensors: exactly what the model needs,
 * 64-byte aligned as the header asks (C99 has no alignment specifier: the
 * GNU attribute, or your compiler's spelling). */
#if defined(__GNUC__) || defined(__clang__)
#define ALIGN64 __attribute__((aligned(64)))
#else
#define ALIGN64
#endif
static union {
    unsigned char bytes[small_convnet_ARENA_SIZE];
    long double align;
} scratch ALIGN64;

static float frame[1][3][16][16];   /* input: NCHW image */
static float scores[1][5][1][1];    /* output */

/* stand-in for a camera driver */
static void read_sensor(float img[1][3][16][16], uint32_t seed)
{
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 16; y++)
            for (int x = 0; x < 16; x++) {
                seed = seed * 1664525u + 1013904223u;
                img[0][c][y][x] = (float)(seed >> 8) / 16777216.0f;
            }
}

#ifdef FIRMWARE_TRACE
/* tests/test_firmware_qemu.py: the scores of each inference, printed the
 * same way on the host and on the emulated Cortex-M4 */
void firmware_trace(const float *scores, int n);
#endif

/* returns the index of the best class */
static int classify(void)
{
    const void *inputs[small_convnet_NUM_INPUTS];
    void *outputs[small_convnet_NUM_OUTPUTS];
    inputs[0] = frame;
    outputs[0] = scores;
    if (small_convnet_run_with_arena(inputs, outputs, scratch.bytes) != 0) return -1;
#ifdef FIRMWARE_TRACE
    firmware_trace(&scores[0][0][0][0], 5);
#endif
    int best = 0;
    for (int k = 1; k < 5; k++)
        if (scores[0][k][0][0] > scores[0][best][0][0]) best = k;
    return best;
}

int main(void)
{
    int votes[5] = {0};
    for (uint32_t frame_no = 0; frame_no < 8; frame_no++) {
        read_sensor(frame, frame_no);
        int c = classify();
        if (c < 0) return 1;
        votes[c]++;
    }
    /* a real firmware would act on the result; here the exit status says
     * that every inference ran */
    return votes[0] + votes[1] + votes[2] + votes[3] + votes[4] == 8 ? 0 : 1;
}
