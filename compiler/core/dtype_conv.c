/* The conversions of the 16-bit float types and the narrow types (float8,
 * float4, int4, int2) between their bit patterns and float: the runtime's
 * own functions (runtime/c/elementwise.h, types.h), compiled into the core,
 * so that constants of those types are read and written exactly as the
 * generated code and the kernels do. */
#include <math.h>

#include "ir.h"
#include "../../runtime/c/params/elementwise.h"
#include "../../runtime/c/elementwise.h"
#include "../../runtime/c/params/types.h"
#include "../../runtime/c/types.h"

float half_to_float(int dt, uint16_t h) { return dt == DT_BFLOAT16 ? o2c_bf2f(h) : o2c_h2f(h); }
uint16_t float_to_half(int dt, float f) { return dt == DT_BFLOAT16 ? o2c_f2bf(f) : o2c_f2h(f); }

int half_candidate_const(const Tensor *t)
{
    return t && t->data && t->dtype == DT_FLOAT && !t->is_input && tensor_numel(t) >= HALF_MIN_ELEMENTS;
}

int half_fits(const Tensor *t)
{
    const float *v = t->data;
    for (int64_t i = 0, n = tensor_numel(t); i < n; i++)
        if (!(v[i] <= HALF_MAX && v[i] >= -HALF_MAX)) return 0;
    return 1;
}
float narrow_to_float(int dt, uint8_t b) { return o2c_n_to_f32(b, dt); }
uint8_t float_to_narrow(int dt, float f) { return o2c_f32_to_n(f, dt, 1, O2C_E8M0_UP); }
