/* Parameter slots of the narrow-type conversions (runtime/c/types.h): the
 * lowering (compiler/ops/types.c) writes c->k[NAME], the kernel reads
 * p->k[NAME]. */

/* The narrow element types, by their ONNX TensorProto.DataType numbers
 * (the compiler's DT_* values): one element a byte, the bit pattern in the
 * low bits. */
enum {
    O2C_NT_E4M3FN = 17,    /* float8e4m3fn: NaN S.1111.111, no infinities */
    O2C_NT_E4M3FNUZ = 18,  /* float8e4m3fnuz: NaN 0x80, no infinities, no -0 */
    O2C_NT_E5M2 = 19,      /* float8e5m2: IEEE-like, infinities and NaNs */
    O2C_NT_E5M2FNUZ = 20,  /* float8e5m2fnuz: NaN 0x80, no infinities, no -0 */
    O2C_NT_U4 = 21,        /* uint4: 0..15 */
    O2C_NT_I4 = 22,        /* int4: -8..7, two's complement in 4 bits */
    O2C_NT_E2M1 = 23,      /* float4e2m1: no infinities, no NaN */
    O2C_NT_E8M0 = 24,      /* float8e8m0: 2^(b - 127), 0xff NaN */
    O2C_NT_U2 = 25,        /* uint2: 0..3 */
    O2C_NT_I2 = 26         /* int2: -2..1 */
};

/* float8e8m0 rounding (Cast's round_mode) */
enum {
    O2C_E8M0_UP,           /* "up": any fraction rounds away from zero */
    O2C_E8M0_DOWN,         /* "down": toward zero */
    O2C_E8M0_NEAREST       /* "nearest": to the nearest power of two, ties up */
};

/* o2c_cast_T_n (T -> narrow), o2c_cast_n_T (narrow -> T), o2c_cast_n_n */
enum {
    O2C_CASTN_FROM,        /* the narrow input type (O2C_NT_*) */
    O2C_CASTN_TO,          /* the narrow output type (O2C_NT_*) */
    O2C_CASTN_SAT,         /* saturate: float8 overflow to the largest finite value (1) or to inf/NaN (0) */
    O2C_CASTN_ROUND,       /* O2C_E8M0_*: rounding of a cast to float8e8m0 */
    O2C_CASTN_NK
};
O2C_PARAMS_FIT(castn, O2C_CASTN_NK, 0)
