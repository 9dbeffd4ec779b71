/* o2c_cuda_emulate.h: just enough of the CUDA runtime, on the CPU, to build
 * and run the .cu files onnx2c generates with a C++ compiler:
 *
 *     g++ -x c++ -std=c++17 -DO2C_CUDA_EMULATE -I<onnx2c>/runtime/cuda -c model.cu
 *
 * The generated .cu and .h include this file instead of <cuda_runtime.h>
 * when O2C_CUDA_EMULATE is defined. It is a test device, not a fast one:
 *
 * - Kernel launches (O2C_LAUNCH) run every block and every thread of the
 *   same grid a GPU would run ((n + 255) / 256 blocks of 256 threads, one
 *   after the other), through the generated __global__ wrapper, so the
 *   wrapper's index arithmetic and bounds check run as on the device.
 * - "Device" memory comes from malloc. cudaMalloc fills it with 0xFF (a NaN
 *   pattern for floats, -1 for integers) so reads of memory nobody wrote
 *   show up in the results. Every allocation is recorded: a kernel launched
 *   with a pointer that is not inside device memory (a host pointer given
 *   to a kernel), a cudaMemcpy whose direction does not match where its
 *   pointers live, or a copy past the end of an allocation is an error, as
 *   it would be (or would crash) on a GPU. Such errors print a line on
 *   stderr and are returned as CUDA errors (sticky for kernels, like
 *   cudaErrorIllegalAddress on a GPU).
 * - Streams are accepted and ignored: everything runs synchronously. Events
 *   read the host's monotonic clock when recorded (tests/harness/main.c's
 *   --repeat times runs with them).
 *
 * Also usable from C (only the types are declared there), so a C file can
 * include the generated header with O2C_CUDA_EMULATE defined. */
#ifndef O2C_CUDA_EMULATE_H
#define O2C_CUDA_EMULATE_H

#include <stddef.h>
#include <stdint.h>

#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __global__
#define __global__
#endif
#ifndef __forceinline__
#define __forceinline__ inline
#endif
#ifndef __restrict__
#define __restrict__
#endif

typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchFailure = 719
} cudaError_t;

typedef enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
} cudaMemcpyKind;

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;

typedef struct uint3 { unsigned int x, y, z; } uint3;

#ifdef __cplusplus

#include <chrono>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dim3 {
    unsigned int x, y, z;
    dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
    dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    operator uint3() const { uint3 r = {x, y, z}; return r; }
};

/* The built-in variables a kernel reads; set by O2C_LAUNCH for each thread. */
#if __cplusplus >= 201703L
#define O2C_EMU_GLOBAL inline
#else
#define O2C_EMU_GLOBAL static __attribute__((unused))
#endif
O2C_EMU_GLOBAL uint3 threadIdx = {0, 0, 0};
O2C_EMU_GLOBAL uint3 blockIdx = {0, 0, 0};
O2C_EMU_GLOBAL dim3 blockDim(1, 1, 1);
O2C_EMU_GLOBAL dim3 gridDim(1, 1, 1);

/* ---- the emulator's state: device allocations, the last error ---- */
struct o2c_emu_block_t { const unsigned char *p; size_t n; };
struct o2c_emu_state {
    o2c_emu_block_t *blocks = 0;          /* device allocations (a model has a few hundred at most) */
    size_t nblocks = 0, cap = 0;
    cudaError_t last = cudaSuccess;       /* returned (and cleared) by cudaGetLastError */
    cudaError_t sticky = cudaSuccess;     /* a kernel fault: every later call fails */
    int streams = 0;
    ~o2c_emu_state() { free(blocks); }
};

inline o2c_emu_state &o2c_emu(void)
{
    static o2c_emu_state s;
    return s;
}

inline cudaError_t o2c_emu_fail(cudaError_t e, const char *what)
{
    fprintf(stderr, "o2c_cuda_emulate: %s\n", what);
    o2c_emu().last = e;
    return e;
}

/* The allocation holding [p, p + n), or null when p is not device memory
 * (n == 0: p itself must lie inside an allocation, or at its end). */
inline const unsigned char *o2c_emu_block(const void *p, size_t n, size_t *size)
{
    o2c_emu_state &s = o2c_emu();
    uintptr_t q = (uintptr_t)p;
    for (size_t i = 0; i < s.nblocks; i++) {
        uintptr_t b = (uintptr_t)s.blocks[i].p;
        if (q < b || q - b > s.blocks[i].n) continue;
        if (n > 0 && q - b == s.blocks[i].n) continue;   /* one past the end: perhaps another block */
        if (n > s.blocks[i].n - (q - b)) return 0;         /* runs past the end */
        if (size) *size = s.blocks[i].n;
        return s.blocks[i].p;
    }
    return 0;
}

inline int o2c_emu_is_device(const void *p) { return p && o2c_emu_block(p, 0, 0) != 0; }

/* ---- memory ---- */
inline cudaError_t cudaMalloc(void **ptr, size_t bytes)
{
    if (!ptr) return o2c_emu_fail(cudaErrorInvalidValue, "cudaMalloc: null result pointer");
    if (o2c_emu().sticky) return o2c_emu().sticky;
    *ptr = 0;
    unsigned char *p = (unsigned char *)malloc(bytes ? bytes : 1);
    if (!p) return o2c_emu_fail(cudaErrorMemoryAllocation, "cudaMalloc: out of memory");
    memset(p, 0xFF, bytes ? bytes : 1);   /* poison: unwritten device memory reads as NaN / -1 */
    o2c_emu_state &s = o2c_emu();
    if (s.nblocks == s.cap) {
        size_t cap = s.cap ? 2 * s.cap : 64;
        o2c_emu_block_t *nb = (o2c_emu_block_t *)realloc(s.blocks, cap * sizeof *nb);
        if (!nb) { free(p); return o2c_emu_fail(cudaErrorMemoryAllocation, "cudaMalloc: out of memory"); }
        s.blocks = nb;
        s.cap = cap;
    }
    s.blocks[s.nblocks].p = p;
    s.blocks[s.nblocks++].n = bytes;
    *ptr = p;
    return cudaSuccess;
}

template <class T>
inline cudaError_t cudaMalloc(T **ptr, size_t bytes)
{
    return cudaMalloc((void **)ptr, bytes);
}

inline cudaError_t cudaFree(void *p)
{
    if (!p) return cudaSuccess;
    o2c_emu_state &s = o2c_emu();
    for (size_t i = 0; i < s.nblocks; i++)
        if (s.blocks[i].p == (const unsigned char *)p) {
            s.blocks[i] = s.blocks[--s.nblocks];
            free(p);
            return cudaSuccess;
        }
    return o2c_emu_fail(cudaErrorInvalidDevicePointer, "cudaFree: not a pointer cudaMalloc returned");
}

inline cudaError_t cudaMallocHost(void **ptr, size_t bytes)
{
    if (!ptr) return o2c_emu_fail(cudaErrorInvalidValue, "cudaMallocHost: null result pointer");
    *ptr = malloc(bytes ? bytes : 1);
    return *ptr ? cudaSuccess : o2c_emu_fail(cudaErrorMemoryAllocation, "cudaMallocHost: out of memory");
}

inline cudaError_t cudaFreeHost(void *p)
{
    free(p);
    return cudaSuccess;
}

/* Checks one side of a copy: device memory (with n bytes in one allocation)
 * or host memory, as the copy's kind says. */
inline cudaError_t o2c_emu_check_side(const char *fn, const char *side, const void *p, size_t n, int device)
{
    char msg[200];
    if (!p && n) {
        snprintf(msg, sizeof msg, "%s: null %s pointer", fn, side);
        return o2c_emu_fail(cudaErrorInvalidValue, msg);
    }
    if (!n) return cudaSuccess;
    if (device && !o2c_emu_block(p, n, 0)) {
        if (o2c_emu_is_device(p))
            snprintf(msg, sizeof msg, "%s: %zu bytes at %s %p run past the end of its allocation", fn, n, side, p);
        else
            snprintf(msg, sizeof msg, "%s: %s %p is not device memory", fn, side, p);
        return o2c_emu_fail(cudaErrorInvalidValue, msg);
    }
    if (!device && o2c_emu_is_device(p)) {
        snprintf(msg, sizeof msg, "%s: %s %p is device memory but the copy's kind says host", fn, side, p);
        return o2c_emu_fail(cudaErrorInvalidValue, msg);
    }
    return cudaSuccess;
}

inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    if (o2c_emu().sticky) return o2c_emu().sticky;
    int dd, sd;
    switch (kind) {
    case cudaMemcpyHostToHost: dd = 0; sd = 0; break;
    case cudaMemcpyHostToDevice: dd = 1; sd = 0; break;
    case cudaMemcpyDeviceToHost: dd = 0; sd = 1; break;
    case cudaMemcpyDeviceToDevice: dd = 1; sd = 1; break;
    case cudaMemcpyDefault: dd = o2c_emu_is_device(dst); sd = o2c_emu_is_device(src); break;
    default: return o2c_emu_fail(cudaErrorInvalidMemcpyDirection, "cudaMemcpy: invalid cudaMemcpyKind");
    }
    cudaError_t e = o2c_emu_check_side("cudaMemcpy", "destination", dst, bytes, dd);
    if (e == cudaSuccess) e = o2c_emu_check_side("cudaMemcpy", "source", src, bytes, sd);
    if (e != cudaSuccess) return e;
    if (bytes) memmove(dst, src, bytes);
    return cudaSuccess;
}

inline cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                                   cudaStream_t stream = 0)
{
    (void)stream;
    return cudaMemcpy(dst, src, bytes, kind);
}

inline cudaError_t cudaMemset(void *dst, int value, size_t bytes)
{
    if (o2c_emu().sticky) return o2c_emu().sticky;
    cudaError_t e = o2c_emu_check_side("cudaMemset", "destination", dst, bytes, 1);
    if (e != cudaSuccess) return e;
    if (bytes) memset(dst, value, bytes);
    return cudaSuccess;
}

inline cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t stream = 0)
{
    (void)stream;
    return cudaMemset(dst, value, bytes);
}

/* ---- errors, synchronization, streams ---- */
inline cudaError_t cudaGetLastError(void)
{
    cudaError_t e = o2c_emu().last;
    o2c_emu().last = o2c_emu().sticky;
    return e;
}

inline cudaError_t cudaPeekAtLastError(void) { return o2c_emu().last; }

inline const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    }
    return "unknown error";
}

inline const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    }
    return "cudaErrorUnknown";
}

inline cudaError_t cudaDeviceSynchronize(void) { return o2c_emu().sticky; }

inline cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    (void)stream;
    return o2c_emu().sticky;
}

inline cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
    if (!stream) return o2c_emu_fail(cudaErrorInvalidValue, "cudaStreamCreate: null result pointer");
    /* a distinct non-null handle; never dereferenced */
    *stream = (cudaStream_t)(uintptr_t)(0x5100 + 16 * ++o2c_emu().streams);
    return cudaSuccess;
}

inline cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    if (!stream) return o2c_emu_fail(cudaErrorInvalidResourceHandle, "cudaStreamDestroy: null stream");
    return cudaSuccess;
}

/* events: the time on the host's monotonic clock when recorded, in ms */
struct CUevent_st { double ms; };

inline cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    if (!event) return o2c_emu_fail(cudaErrorInvalidValue, "cudaEventCreate: null result pointer");
    *event = (cudaEvent_t)calloc(1, sizeof **event);
    return *event ? cudaSuccess : o2c_emu_fail(cudaErrorMemoryAllocation, "cudaEventCreate: out of memory");
}

inline cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0)
{
    (void)stream;
    if (!event) return o2c_emu_fail(cudaErrorInvalidResourceHandle, "cudaEventRecord: null event");
    event->ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
    return o2c_emu().sticky;
}

inline cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    if (!event) return o2c_emu_fail(cudaErrorInvalidResourceHandle, "cudaEventSynchronize: null event");
    return o2c_emu().sticky;
}

inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (!ms || !start || !end) return o2c_emu_fail(cudaErrorInvalidValue, "cudaEventElapsedTime: null argument");
    *ms = (float)(end->ms - start->ms);
    return cudaSuccess;
}

inline cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    if (!event) return o2c_emu_fail(cudaErrorInvalidResourceHandle, "cudaEventDestroy: null event");
    free(event);
    return cudaSuccess;
}

inline cudaError_t cudaDeviceReset(void)
{
    o2c_emu().last = o2c_emu().sticky = cudaSuccess;
    return cudaSuccess;
}

/* ---- kernel launches ---- */
/* Runs kernel wrapper g(n, p) on a grid of (n + 255) / 256 blocks of 256
 * threads, the configuration the generated launch uses on a GPU. Before
 * that, every input and output pointer of the parameter block p must lie
 * in device memory. */
template <class P>
inline void o2c_emu_launch(const char *name, void (*g)(int64_t, P), int64_t n, const P &p, cudaStream_t stream)
{
    (void)stream;
    char msg[300];
    if (o2c_emu().sticky) { o2c_emu().last = o2c_emu().sticky; return; }
    const unsigned threads = 256;
    const int64_t blocks = n > 0 ? (n + threads - 1) / threads : 0;
    if (blocks <= 0 || blocks > 2147483647) {
        snprintf(msg, sizeof msg, "launch of %s with %lld elements: grid of %lld blocks is invalid", name,
                      (long long)n, (long long)blocks);
        o2c_emu_fail(cudaErrorInvalidConfiguration, msg);
        return;
    }
    for (size_t j = 0; j < sizeof p.x / sizeof p.x[0]; j++)
        if (p.x[j] && !o2c_emu_is_device(p.x[j])) {
            snprintf(msg, sizeof msg, "kernel %s: input pointer x[%zu] = %p is not device memory", name, j,
                          (const void *)p.x[j]);
            o2c_emu().sticky = o2c_emu_fail(cudaErrorIllegalAddress, msg);
            return;
        }
    for (size_t j = 0; j < sizeof p.y / sizeof p.y[0]; j++)
        if (p.y[j] && !o2c_emu_is_device(p.y[j])) {
            snprintf(msg, sizeof msg, "kernel %s: output pointer y[%zu] = %p is not device memory", name, j,
                          (const void *)p.y[j]);
            o2c_emu().sticky = o2c_emu_fail(cudaErrorIllegalAddress, msg);
            return;
        }
    gridDim = dim3((unsigned)blocks, 1, 1);
    blockDim = dim3(threads, 1, 1);
    for (int64_t b = 0; b < blocks; b++) {
        blockIdx.x = (unsigned)b;
        blockIdx.y = blockIdx.z = 0;
        for (unsigned t = 0; t < threads; t++) {
            threadIdx.x = t;
            threadIdx.y = threadIdx.z = 0;
            g(n, p);
        }
    }
}

#define O2C_LAUNCH(K, n, p, s) o2c_emu_launch(#K, K##_g, (int64_t)(n), (p), (s))

#endif /* __cplusplus */

#endif /* O2C_CUDA_EMULATE_H */
