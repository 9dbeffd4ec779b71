/* The narrow element types (float8, float4e2m1, int4/uint4, int2/uint2;
 * ir.c: dtype_is_narrow): Cast/CastLike to and from them (kernels in
 * runtime/c/types.h), and which ops may see them at all. They are bit
 * patterns, one element a byte; no arithmetic op takes them (ONNX defines
 * them for conversions, quantization and data movement only). */
#include <string.h>

#include "../ir.h"
#include "../../runtime/c/params/types.h"

/* Ops that convert these types or only move their bytes (views keep the
 * bytes: node_is_view), and IsNaN/IsInf (node_promotes_narrow).
 * QuantizeLinear/DequantizeLinear join them when they handle the types. */
int node_takes_narrow(const Node *n)
{
    static const char *const OK[] = {"Cast", "CastLike", "Identity", "Constant", "ConstantOfShape", "Shape", "Size",
                                     "Transpose", "Pad", NULL};
    if (*n->domain) return 0;
    if (node_promotes_narrow(n)) return 1;
    /* ops/quant.c: quantization to and from the narrow types */
    if (!strcmp(n->op_type, "QuantizeLinear") || !strcmp(n->op_type, "DequantizeLinear")) return 1;
    if (n->op && node_is_view(n)) return 1;
    for (int i = 0; OK[i]; i++)
        if (!strcmp(n->op_type, OK[i])) return 1;
    return 0;
}

/* IsNaN and IsInf of a float8 run on its float32 value (exact): infer.c's
 * promotion of 16-bit floats takes them too. */
int node_promotes_narrow(const Node *n)
{
    if (*n->domain || (strcmp(n->op_type, "IsNaN") && strcmp(n->op_type, "IsInf")) || n->nin != 1 || !n->in[0]) return 0;
    int dt = n->in[0]->dtype;   /* a float type: not int4/uint4/int2/uint2 */
    return dtype_is_narrow(dt) && dt != DT_INT4 && dt != DT_UINT4 && dt != DT_INT2 && dt != DT_UINT2;
}

/* y (float32) = the values of the narrow tensor x */
void lower_narrow_to_f32(Lowering *L, Tensor *x, Tensor *y)
{
    KCall *c = lower_call(L, "o2c_cast_n_f32", tensor_numel(x));
    c->x[0] = x;
    c->y[0] = y;
    c->k[O2C_CASTN_FROM] = x->dtype;
}

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
