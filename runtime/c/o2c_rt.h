/* onnx2c runtime core: the kernel calling convention shared by the compiler
 * (constant folding), the generated C and the generated CUDA.
 *
 * Every kernel has the signature
 *     void kernel(int64_t i0, int64_t i1, const o2c_p *p)
 * and computes the elements i0 <= i < i1 of its parallel index space
 * (usually the output elements). C runs it once over [0, n); CUDA runs
 * one thread per index. Pointers and shape parameters travel in o2c_p. */
#ifndef O2C_RT_H
#define O2C_RT_H

#include <stdint.h>
#include <string.h>
#if defined(__cplusplus)
#include <math.h>
#else
#include <tgmath.h>
#endif /* O2C_RT_H */

#if defined(__CUDACC__) || defined(O2C_CUDA_EMULATE)
#define O2C_HD __host__ __device__
#else
#define O2C_HD
#endif /* O2C_RT_H */

#define O2C_MAX_RANK 8
#define O2C_MAX_X 8
#define O2C_MAX_Y 2
#define O2C_NK 64
#define O2C_NF 4

typedef struct o2c_p {
    const void *x[O2C_MAX_X];   /* inputs */
    void *y[O2C_MAX_Y];         /* outputs */
    int64_t k[O2C_NK];          /* integer parameters (shapes, strides) */
    double f[O2C_NF];           /* real parameters (alpha, epsilon, ...) */
} o2c_p;

typedef void (*o2c_kernel_fn)(int64_t i0, int64_t i1, const o2c_p *p);

#define O2C_KERNEL(name) O2C_HD static inline void name(int64_t i0, int64_t i1, const o2c_p *p)
#define O2C_FOR(i) for (int64_t i = i0; i < i1; i++)

#endif /* O2C_RT_H */

/* Runtime files are cut into chunks at lines that start with the marker
 * slash-star-at NAME [needs DEP...]: the compiler copies only the chunks a
 * model needs. The text before the first marker holds no functions. */

/*@ o2c_offset */
/* Row-major flat index i of a tensor with dims[0..rank) -> offset with the
 * given strides (0 stride: broadcast axis). */
O2C_HD static inline int64_t o2c_offset(int64_t i, int64_t rank, const int64_t *dims,
                                       const int64_t *strides)
{
    int64_t off = 0;
    for (int64_t d = rank - 1; d >= 0; d--) {
        int64_t q = i / dims[d];
        off += (i - q * dims[d]) * strides[d];
        i = q;
    }
    return off;
}
