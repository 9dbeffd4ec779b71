/* The narrow element types (float8, float4e2m1, int4/uint4, int2/uint2;
 * ir.c: dtype_is_narrow): Cast/CastLike to and from them (kernels in
 * runtime/c/types.h). They are bit patterns, one element a byte; no
 * arithmetic op takes them (ONNX defines them for conversions,
 * quantization and data movement only): the ops that convert them or only
 * move their bytes say so in ops.def (OPT_NARROW), IsNaN/IsInf compute on
 * their float32 value (OPT_NARROW_AS_FLOAT); engine/inference.c refuses
 * the others. */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/types.h"

/* Cast/CastLike with a narrow input or output: o2c_cast_T_n, o2c_cast_n_T
 * or o2c_cast_n_n, the narrow types and the rounding in k[]. */
void lower_cast_narrow(Node *n, Lowering *L)
{
    Tensor *x = n->in[0], *y = n->out[0];
    int nx = dtype_is_narrow(x->dtype), ny = dtype_is_narrow(y->dtype);
    const char *mode = attr_s(n, "round_mode");
    int rnd = !strcmp(mode, "up") ? O2C_E8M0_UP : !strcmp(mode, "down") ? O2C_E8M0_DOWN :
              !strcmp(mode, "nearest") ? O2C_E8M0_NEAREST : -1;
    if (rnd < 0) fail("round_mode '%s' is not one of up, down, nearest", mode);
    const char *name = nx && ny ? "o2c_cast_n_n" :
                       nx ? xfmt("o2c_cast_n_%s", dtype_suffix(y->dtype)) : xfmt("o2c_cast_%s_n", dtype_suffix(x->dtype));
    KCall *c = lower_call(L, name, tensor_numel(y));
    c->x[0] = x;
    c->y[0] = y;
    c->k[O2C_CASTN_FROM] = nx ? x->dtype : 0;
    c->k[O2C_CASTN_TO] = ny ? y->dtype : 0;
    c->k[O2C_CASTN_SAT] = attr_i(n, "saturate") != 0;
    c->k[O2C_CASTN_ROUND] = rnd;
}
