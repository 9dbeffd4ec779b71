/* Self-test of runtime/cuda/o2c_cuda_emulate.h (tests/run_models.py builds
 * and runs it before the models):
 *     g++ -std=c++17 -Wall -Wextra -Werror -fsanitize=address,undefined \
 *         -I runtime/cuda tests/harness/emulate_selftest.cpp -o st && ./st
 * Checks the launch grid (every block and thread, the wrapper's bounds
 * check), poisoned allocations, and that host/device mix-ups are errors. */
#include <stdint.h>
#include <stdio.h>

#include "o2c_cuda_emulate.h"

typedef struct o2c_p {
    const void *x[4];
    void *y[2];
    int64_t k[64];
    double f[4];
} o2c_p;

static int failures;
#define CHECK(c)                                                            \
    do {                                                                    \
        if (!(c)) { fprintf(stderr, "FAILED line %d: %s\n", __LINE__, #c); failures++; } \
    } while (0)

static int64_t calls, max_block, max_thread;

/* like the generated kernels and wrappers */
__host__ __device__ static inline void k_twice(int64_t i0, int64_t i1, const o2c_p *p)
{
    const float *X = (const float *)p->x[0];
    float *Y = (float *)p->y[0];
    for (int64_t i = i0; i < i1; i++) Y[i] = 2 * X[i];
}

static __global__ void k_twice_g(int64_t n, o2c_p p)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    calls++;
    if ((int64_t)blockIdx.x > max_block) max_block = blockIdx.x;
    if ((int64_t)threadIdx.x > max_thread) max_thread = threadIdx.x;
    if (i < n) k_twice(i, i + 1, &p);
}

int main(void)
{
    const int64_t n = 1000;
    float host[1000], back[1000];
    for (int i = 0; i < n; i++) host[i] = (float)i;

    void *dx = 0, *dy = 0;
    CHECK(cudaMalloc(&dx, sizeof host) == cudaSuccess);
    CHECK(cudaMalloc(&dy, sizeof host) == cudaSuccess);
    /* poisoned */
    CHECK(cudaMemcpy(back, dy, sizeof back, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(back[0] != back[0] && back[999] != back[999]);   /* 0xFFFFFFFF is a NaN */

    CHECK(cudaMemcpy(dx, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess);
    o2c_p p = {{dx}, {dy}, {0}, {0}};
    O2C_LAUNCH(k_twice, n, p, 0);
    CHECK(cudaGetLastError() == cudaSuccess);
    /* 4 blocks of 256: 1024 threads, 24 of them past n */
    CHECK(calls == 1024 && max_block == 3 && max_thread == 255);
    CHECK(gridDim.x == 4 && blockDim.x == 256);
    CHECK(cudaMemcpy(back, dy, sizeof back, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(back[0] == 0 && back[999] == 1998);

    /* copies in the wrong direction or past the end are errors */
    CHECK(cudaMemcpy(back, dy, sizeof back, cudaMemcpyHostToDevice) != cudaSuccess);
    CHECK(cudaGetLastError() != cudaSuccess);
    CHECK(cudaGetLastError() == cudaSuccess);   /* cleared */
    CHECK(cudaMemcpy(back, (char *)dy + 4, sizeof back, cudaMemcpyDeviceToHost) != cudaSuccess);
    CHECK(cudaMemcpy(host, back, sizeof back, cudaMemcpyDeviceToHost) != cudaSuccess);
    cudaGetLastError();
    CHECK(cudaMemset(back, 0, sizeof back) != cudaSuccess);
    cudaGetLastError();
    CHECK(cudaFree(back) != cudaSuccess);
    cudaGetLastError();

    /* an empty grid is an invalid configuration (not sticky) */
    O2C_LAUNCH(k_twice, 0, p, 0);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    CHECK(cudaGetLastError() == cudaSuccess);

    /* a host pointer given to a kernel: a sticky illegal address */
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s) == cudaSuccess);
    o2c_p bad = {{host}, {dy}, {0}, {0}};
    calls = 0;
    O2C_LAUNCH(k_twice, n, bad, s);
    CHECK(calls == 0);
    CHECK(cudaGetLastError() == cudaErrorIllegalAddress);
    CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    CHECK(cudaStreamDestroy(s) == cudaSuccess);
    cudaDeviceReset();
    CHECK(cudaDeviceSynchronize() == cudaSuccess);

    CHECK(cudaFree(dx) == cudaSuccess);
    CHECK(cudaFree(dy) == cudaSuccess);
    CHECK(cudaFree(0) == cudaSuccess);
    printf("%s\n", failures ? "emulate self-test FAILED" : "emulate self-test ok");
    return failures != 0;
}
