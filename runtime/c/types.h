/* Narrow element types: float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0),
 * float4e2m1, int4/uint4, int2/uint2 (O2C_NT_*, runtime/c/params/types.h).
 *
 * Memory layout: ONE ELEMENT A BYTE, its bit pattern in the low bits
 * (4 or 2 bits for float4/int4/uint4/int2/uint2, the upper bits written
 * 0 and ignored when read): what ml_dtypes and onnx.numpy_helper.to_array
 * hold, and what a caller passes and gets for a graph input or output of
 * such a type. (ONNX files store the 4-bit types two to a byte and the
 * 2-bit types four to a byte; the compiler unpacks constants on loading.)
 *
 * The conversions (a chunk each, named as the function), for other
 * kernels to call too:
 *   o2c_n_to_f32(b, nt)             any narrow byte -> float, exact
 *   o2c_f32_to_n(f, nt, sat, rnd)   float -> narrow byte as Cast does it
 *   o2c_mf_to_f32 / o2c_f32_to_mf   the minifloats (float8 but e8m0, float4)
 *   o2c_e8m0_to_f32 / o2c_f32_to_e8m0(f, sat, rnd)
 *   o2c_nint(b, nt)                 int4/uint4/int2/uint2 byte -> int32
 *   o2c_nint_bits(v, nt)            integer -> its low 4 or 2 bits (wraps)
 * Rounding: float8 and float4 to nearest, ties to even; with sat, a value
 * past the largest finite one (infinities too) becomes that value, without
 * it NaN (inf for e5m2); float4e2m1 always saturates and takes NaN to a
 * zero of the opposite sign (as the ONNX reference, through ml_dtypes,
 * does). float8e8m0 keeps the float32 exponent, rounded by rnd
 * (O2C_E8M0_*), ignoring the sign; with sat the largest value (2^127)
 * does not round up to NaN and an infinity becomes it. Integers from
 * floats: truncated toward zero, then wrapped to the low bits.
 *
 * Cast kernels (index space: the elements): o2c_cast_T_n (T -> the narrow
 * type k[O2C_CASTN_TO]), o2c_cast_n_T (the narrow type k[O2C_CASTN_FROM]
 * -> T), o2c_cast_n_n. A double or wide integer source becomes a float
 * (rounded to nearest) first, and that float the narrow float: what the
 * ONNX reference (ml_dtypes) and onnxruntime compute; integer targets take
 * the value truncated from the source itself. */

/* T -> narrow: TOF(x) x as float (rounded to nearest), TOI(x) x truncated
 * to an integer, as uint64_t (wraps) */
#define O2C_CASTN_TO_DEF(NAME, TI, TOF, TOI)                               \
    O2C_KERNEL(NAME)                                                       \
    {                                                                      \
        const TI *X = (const TI *)p->x[0];                                 \
        uint8_t *Y = (uint8_t *)p->y[0];                                   \
        const int to = (int)p->k[O2C_CASTN_TO], sat = (int)p->k[O2C_CASTN_SAT]; \
        const int rnd = (int)p->k[O2C_CASTN_ROUND];                        \
        if (o2c_nt_is_int(to)) {                                           \
            O2C_FOR(i) Y[i] = (uint8_t)o2c_nint_bits(TOI(X[i]), to);       \
        } else if (to == O2C_NT_E8M0) {                                    \
            O2C_FOR(i) Y[i] = (uint8_t)o2c_f32_to_e8m0(TOF(X[i]), sat, rnd); \
        } else {                                                           \
            O2C_FOR(i) Y[i] = (uint8_t)o2c_f32_to_mf(TOF(X[i]), to, sat);  \
        }                                                                  \
    }

/* narrow -> T: FROMF(f) from the exact float value of a float8/float4,
 * FROMI(v) from the int32 value of an int4/uint4/int2/uint2 */
#define O2C_CASTN_FROM_DEF(NAME, TO, FROMF, FROMI)                         \
    O2C_KERNEL(NAME)                                                       \
    {                                                                      \
        const uint8_t *X = (const uint8_t *)p->x[0];                       \
        TO *Y = (TO *)p->y[0];                                             \
        const int from = (int)p->k[O2C_CASTN_FROM];                        \
        if (o2c_nt_is_int(from)) {                                         \
            O2C_FOR(i) Y[i] = FROMI(o2c_nint(X[i], from));                 \
        } else {                                                           \
            O2C_FOR(i) Y[i] = FROMF(o2c_n_to_f32(X[i], from));             \
        }                                                                  \
    }

/* the conversions the kernels are made with */
#define O2C_NX_SAME(x) (x)
#define O2C_NX_F32(x) ((float)(x))
#define O2C_NX_F64(x) ((double)(x))
#define O2C_NX_U64(x) ((uint64_t)(x))
#define O2C_NX_BOOL(x) ((uint8_t)((x) != 0))
#define O2C_NX_FTRUNC(x) ((uint64_t)o2c_f2i64(x))
#define O2C_NX_DTRUNC(x) ((uint64_t)o2c_d2i64(x))
#define O2C_NX_H2TRUNC(x) ((uint64_t)o2c_f2i64(o2c_h2f(x)))
#define O2C_NX_BF2TRUNC(x) ((uint64_t)o2c_f2i64(o2c_bf2f(x)))
#define O2C_NX_TOF16(x) o2c_f2h((float)(x))
#define O2C_NX_TOBF16(x) o2c_f2bf((float)(x))
#define O2C_NX_I8(x) ((int8_t)o2c_f2i64(x))
#define O2C_NX_I16(x) ((int16_t)o2c_f2i64(x))
#define O2C_NX_I32(x) ((int32_t)o2c_f2i64(x))
#define O2C_NX_I64(x) (o2c_f2i64(x))
#define O2C_NX_U8(x) ((uint8_t)o2c_f2i64(x))
#define O2C_NX_U16(x) ((uint16_t)o2c_f2i64(x))
#define O2C_NX_U32(x) ((uint32_t)o2c_f2i64(x))
#define O2C_NX_UU64(x) ((uint64_t)o2c_f2i64(x))
#define O2C_NX_TI8(x) ((int8_t)(x))
#define O2C_NX_TI16(x) ((int16_t)(x))
#define O2C_NX_TI32(x) ((int32_t)(x))
#define O2C_NX_TI64(x) ((int64_t)(x))
#define O2C_NX_TU8(x) ((uint8_t)(x))
#define O2C_NX_TU16(x) ((uint16_t)(x))
#define O2C_NX_TU32(x) ((uint32_t)(x))
#define O2C_NX_TU64(x) ((uint64_t)(int64_t)(x))

/* the minifloats' special codes: e5m2 (infinities, NaNs), e4m3fn (NaN
 * S.1111.111), the fnuz types (NaN 0x80), e2m1 (none) */
enum { O2C_MF_IEEE, O2C_MF_FN, O2C_MF_FNUZ, O2C_MF_NONE };

/*@ o2c_nbits_f32 */
O2C_HD static inline float o2c_nbits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/*@ o2c_nt_is_int */
O2C_HD static inline int o2c_nt_is_int(int nt)
{
    return nt == O2C_NT_U4 || nt == O2C_NT_I4 || nt == O2C_NT_U2 || nt == O2C_NT_I2;
}

/*@ o2c_nint */
/* int4/uint4/int2/uint2: the value of a byte (its low bits) and the low
 * bits of an integer (wrapped, as casts between integer types wrap) */
O2C_HD static inline int32_t o2c_nint(uint32_t b, int nt)
{
    switch (nt) {
    case O2C_NT_I4: return (int32_t)((b & 15u) ^ 8u) - 8;
    case O2C_NT_U2: return (int32_t)(b & 3u);
    case O2C_NT_I2: return (int32_t)((b & 3u) ^ 2u) - 2;
    default: return (int32_t)(b & 15u);
    }
}
/*@ o2c_nint_bits */
O2C_HD static inline uint32_t o2c_nint_bits(uint64_t v, int nt)
{
    return (uint32_t)(v & (nt == O2C_NT_U2 || nt == O2C_NT_I2 ? 3u : 15u));
}

/*@ o2c_f2i64 */
/* float -> int64 truncated toward zero; NaN and values past the range: 0
 * (the cast is undefined there) */
O2C_HD static inline int64_t o2c_f2i64(float f)
{
    return f > -9.2e18f && f < 9.2e18f ? (int64_t)f : 0;
}

/*@ o2c_mf_format */
/* The minifloats: float8 e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, float4 e2m1.
 * m mantissa bits, bias, the largest finite code (without sign), the sign
 * bit, and which codes are special. */
O2C_HD static inline void o2c_mf_format(int nt, int *m, int *bias, uint32_t *maxc, uint32_t *sbit, int *kind)
{
    *sbit = 0x80u;
    switch (nt) {
    case O2C_NT_E4M3FN: *m = 3; *bias = 7; *maxc = 0x7eu; *kind = O2C_MF_FN; break;
    case O2C_NT_E4M3FNUZ: *m = 3; *bias = 8; *maxc = 0x7fu; *kind = O2C_MF_FNUZ; break;
    case O2C_NT_E5M2: *m = 2; *bias = 15; *maxc = 0x7bu; *kind = O2C_MF_IEEE; break;
    case O2C_NT_E5M2FNUZ: *m = 2; *bias = 16; *maxc = 0x7fu; *kind = O2C_MF_FNUZ; break;
    default: *m = 1; *bias = 1; *maxc = 0x7u; *sbit = 0x8u; *kind = O2C_MF_NONE; break;   /* e2m1 */
    }
}

/*@ o2c_mf_to_f32 needs o2c_mf_format o2c_nbits_f32 */
O2C_HD static inline float o2c_mf_to_f32(uint32_t b, int nt)
{
    int m, bias, kind;
    uint32_t maxc, sbit;
    o2c_mf_format(nt, &m, &bias, &maxc, &sbit, &kind);
    b &= 2 * sbit - 1;
    const uint32_t s = b & sbit ? 0x80000000u : 0u, mag = b & (sbit - 1);
    if ((kind == O2C_MF_FNUZ && b == 0x80u) || (kind == O2C_MF_FN && mag == 0x7fu) ||
        (kind == O2C_MF_IEEE && mag > 0x7cu))
        return o2c_nbits_f32(s | 0x7fc00000u);                   /* NaN */
    if (kind == O2C_MF_IEEE && mag == 0x7cu) return o2c_nbits_f32(s | 0x7f800000u);
    const uint32_t e = mag >> m, mm = mag & ((1u << m) - 1u);
    float v;
    if (e) {
        v = o2c_nbits_f32(((e - (uint32_t)bias + 127u) << 23) | (mm << (23 - m)));
    } else {                                                      /* mm * 2^(1 - bias - m) */
        v = (float)mm * o2c_nbits_f32((uint32_t)(128 - bias - m) << 23);
    }
    return s ? -v : v;
}

/*@ o2c_f32_to_mf needs o2c_mf_format */
/* rounded to nearest, ties to even; sat: see the file's comment */
O2C_HD static inline uint32_t o2c_f32_to_mf(float f, int nt, int sat)
{
    int m, bias, kind;
    uint32_t maxc, sbit, u;
    o2c_mf_format(nt, &m, &bias, &maxc, &sbit, &kind);
    memcpy(&u, &f, 4);
    const uint32_t s = u >> 31 ? sbit : 0u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u)                                          /* NaN */
        return kind == O2C_MF_FNUZ ? 0x80u : kind == O2C_MF_FN ? (s | 0x7fu) :
               kind == O2C_MF_IEEE ? (s | 0x7eu) : (s ^ sbit);
    const uint32_t over = sat || kind == O2C_MF_NONE ? (s | maxc) : kind == O2C_MF_IEEE ? (s | 0x7cu) :
                          kind == O2C_MF_FNUZ ? 0x80u : (s | 0x7fu);
    if (a == 0x7f800000u) return over;
    int fe = (int)(a >> 23) - 127;
    uint32_t sig = a & 0x7fffffu;
    if (a >> 23) sig |= 0x800000u;
    else fe = -126;
    const int emin = 1 - bias, lsb = (fe > emin ? fe : emin) - m, sh = lsb - (fe - 23);
    uint32_t r = 0;
    if (sh <= 25) {                                               /* sh >= 23 - m > 0 */
        const uint32_t rem = sig & ((1u << sh) - 1u), half = 1u << (sh - 1);
        r = sig >> sh;
        if (rem > half || (rem == half && (r & 1u))) r++;
    }
    if (!r) return kind == O2C_MF_FNUZ ? 0u : s;                  /* zero (no -0 in the fnuz types) */
    const uint32_t code = ((uint32_t)(lsb + m + bias) << m) + r - (1u << m);
    return code > maxc ? over : (s | code);
}

/*@ o2c_e8m0_to_f32 needs o2c_nbits_f32 */
O2C_HD static inline float o2c_e8m0_to_f32(uint32_t b)
{
    b &= 0xffu;
    return o2c_nbits_f32(b == 0xffu ? 0x7fc00000u : b ? b << 23 : 0x400000u);   /* 0: 2^-127 */
}

/*@ o2c_f32_to_e8m0 */
O2C_HD static inline uint32_t o2c_f32_to_e8m0(float f, int sat, int rnd)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    const uint32_t e = (u >> 23) & 0xffu, frac = u & 0x7fffffu;
    if (e == 0xffu) return frac || !sat ? 0xffu : 0xfeu;        /* NaN; an infinity */
    uint32_t up = 0;
    if (rnd == O2C_E8M0_UP) up = frac != 0;
    else if (rnd == O2C_E8M0_NEAREST) up = (frac & 0x400000u) && ((frac & 0x3fffffu) || e);
    if (up && e == 0xfeu && sat) up = 0;
    return e + up;                                                /* 0xfe + 1: NaN */
}

/*@ o2c_n_to_f32 needs o2c_nt_is_int o2c_nint o2c_e8m0_to_f32 o2c_mf_to_f32 */
/* any narrow byte -> float (exact), and float -> narrow as Cast does */
O2C_HD static inline float o2c_n_to_f32(uint32_t b, int nt)
{
    if (o2c_nt_is_int(nt)) return (float)o2c_nint(b, nt);
    return nt == O2C_NT_E8M0 ? o2c_e8m0_to_f32(b) : o2c_mf_to_f32(b, nt);
}
/*@ o2c_f32_to_n needs o2c_nt_is_int o2c_nint_bits o2c_f2i64 o2c_f32_to_e8m0 o2c_f32_to_mf */
O2C_HD static inline uint8_t o2c_f32_to_n(float f, int nt, int sat, int rnd)
{
    if (o2c_nt_is_int(nt)) return (uint8_t)o2c_nint_bits((uint64_t)o2c_f2i64(f), nt);
    return (uint8_t)(nt == O2C_NT_E8M0 ? o2c_f32_to_e8m0(f, sat, rnd) : o2c_f32_to_mf(f, nt, sat));
}

/*@ o2c_d2i64 */
O2C_HD static inline int64_t o2c_d2i64(double d)
{
    return d > -9.2e18 && d < 9.2e18 ? (int64_t)d : 0;
}

/*@ o2c_cast_f32_n needs o2c_nt_is_int o2c_nint_bits o2c_f32_to_e8m0 o2c_f32_to_mf o2c_f2i64 params O2C_CASTN */
O2C_CASTN_TO_DEF(o2c_cast_f32_n, float, O2C_NX_SAME, O2C_NX_FTRUNC)
/*@ o2c_cast_f64_n needs o2c_nt_is_int o2c_nint_bits o2c_f32_to_e8m0 o2c_f32_to_mf o2c_d2i64 params O2C_CASTN */
O2C_CASTN_TO_DEF(o2c_cast_f64_n, double, O2C_NX_F32, O2C_NX_DTRUNC)
/*@ o2c_cast_f16_n needs o2c_nt_is_int o2c_nint_bits o2c_f32_to_e8m0 o2c_f32_to_mf o2c_h2f o2c_f2i64 params O2C_CASTN */
O2C_CASTN_TO_DEF(o2c_cast_f16_n, uint16_t, o2c_h2f, O2C_NX_H2TRUNC)
/*@ o2c_cast_bf16_n needs o2c_nt_is_int o2c_nint_bits o2c_f32_to_e8m0 o2c_f32_to_mf o2c_bf2f o2c_f2i64 params O2C_CASTN */
O2C_CASTN_TO_DEF(o2c_cast_bf16_n, uint16_t, o2c_bf2f, O2C_NX_BF2TRUNC)
/*@ o2c_cast_i8_n needs o2c_nt_is_int o2c_nint_bits o2c_f32_to_e8m0 o2c_f32_to_mf params O2C_CASTN */
O2C_CASTN_TO_DEF(o2c_cast_i8_n, int8_t, O2C_NX_F32, O2C_NX_U64)
/*@ o2c_cast_i16_n needs o2c_nt_is_int o2c_nint_bits o2c_f32_to_e8m0 o2c_f32_to_mf params O2C_CASTN */
O2C_CASTN_TO_DEF(o2c_cast_i16_n, int16_t, O2C_NX_F32, O2C_NX_U64)
/*@ o2c_cast_i32_n needs o2c_nt_is_int o2c_nint_bits o2c_f32_to_e8m0 o2c_f32_to_mf params O2C_CASTN */
O2C_CASTN_TO_DEF(o2c_cast_i32_n, int32_t, O2C_NX_F32, O2C_NX_U64)
/*@ o2c_cast_i64_n needs o2c_nt_is_int o2c_nint_bits o2c_f32_to_e8m0 o2c_f32_to_mf params O2C_CASTN */
O2C_CASTN_TO_DEF(o2c_cast_i64_n, int64_t, O2C_NX_F32, O2C_NX_U64)
/*@ o2c_cast_u8_n needs o2c_nt_is_int o2c_nint_bits o2c_f32_to_e8m0 o2c_f32_to_mf params O2C_CASTN */
O2C_CASTN_TO_DEF(o2c_cast_u8_n, uint8_t, O2C_NX_F32, O2C_NX_U64)
/*@ o2c_cast_u16_n needs o2c_nt_is_int o2c_nint_bits o2c_f32_to_e8m0 o2c_f32_to_mf params O2C_CASTN */
O2C_CASTN_TO_DEF(o2c_cast_u16_n, uint16_t, O2C_NX_F32, O2C_NX_U64)
/*@ o2c_cast_u32_n needs o2c_nt_is_int o2c_nint_bits o2c_f32_to_e8m0 o2c_f32_to_mf params O2C_CASTN */
O2C_CASTN_TO_DEF(o2c_cast_u32_n, uint32_t, O2C_NX_F32, O2C_NX_U64)
/*@ o2c_cast_u64_n needs o2c_nt_is_int o2c_nint_bits o2c_f32_to_e8m0 o2c_f32_to_mf params O2C_CASTN */
O2C_CASTN_TO_DEF(o2c_cast_u64_n, uint64_t, O2C_NX_F32, O2C_NX_U64)
/*@ o2c_cast_b_n needs o2c_nt_is_int o2c_nint_bits o2c_f32_to_e8m0 o2c_f32_to_mf params O2C_CASTN */
O2C_CASTN_TO_DEF(o2c_cast_b_n, uint8_t, O2C_NX_F32, O2C_NX_U64)

/*@ o2c_cast_n_f32 needs o2c_nt_is_int o2c_nint o2c_n_to_f32 params O2C_CASTN */
O2C_CASTN_FROM_DEF(o2c_cast_n_f32, float, O2C_NX_SAME, O2C_NX_F32)
/*@ o2c_cast_n_f64 needs o2c_nt_is_int o2c_nint o2c_n_to_f32 params O2C_CASTN */
O2C_CASTN_FROM_DEF(o2c_cast_n_f64, double, O2C_NX_F64, O2C_NX_F64)
/*@ o2c_cast_n_f16 needs o2c_nt_is_int o2c_nint o2c_n_to_f32 o2c_f2h params O2C_CASTN */
O2C_CASTN_FROM_DEF(o2c_cast_n_f16, uint16_t, o2c_f2h, O2C_NX_TOF16)
/*@ o2c_cast_n_bf16 needs o2c_nt_is_int o2c_nint o2c_n_to_f32 o2c_f2bf params O2C_CASTN */
O2C_CASTN_FROM_DEF(o2c_cast_n_bf16, uint16_t, o2c_f2bf, O2C_NX_TOBF16)
/*@ o2c_cast_n_i8 needs o2c_nt_is_int o2c_nint o2c_n_to_f32 o2c_f2i64 params O2C_CASTN */
O2C_CASTN_FROM_DEF(o2c_cast_n_i8, int8_t, O2C_NX_I8, O2C_NX_TI8)
/*@ o2c_cast_n_i16 needs o2c_nt_is_int o2c_nint o2c_n_to_f32 o2c_f2i64 params O2C_CASTN */
O2C_CASTN_FROM_DEF(o2c_cast_n_i16, int16_t, O2C_NX_I16, O2C_NX_TI16)
/*@ o2c_cast_n_i32 needs o2c_nt_is_int o2c_nint o2c_n_to_f32 o2c_f2i64 params O2C_CASTN */
O2C_CASTN_FROM_DEF(o2c_cast_n_i32, int32_t, O2C_NX_I32, O2C_NX_TI32)
/*@ o2c_cast_n_i64 needs o2c_nt_is_int o2c_nint o2c_n_to_f32 o2c_f2i64 params O2C_CASTN */
O2C_CASTN_FROM_DEF(o2c_cast_n_i64, int64_t, O2C_NX_I64, O2C_NX_TI64)
/*@ o2c_cast_n_u8 needs o2c_nt_is_int o2c_nint o2c_n_to_f32 o2c_f2i64 params O2C_CASTN */
O2C_CASTN_FROM_DEF(o2c_cast_n_u8, uint8_t, O2C_NX_U8, O2C_NX_TU8)
/*@ o2c_cast_n_u16 needs o2c_nt_is_int o2c_nint o2c_n_to_f32 o2c_f2i64 params O2C_CASTN */
O2C_CASTN_FROM_DEF(o2c_cast_n_u16, uint16_t, O2C_NX_U16, O2C_NX_TU16)
/*@ o2c_cast_n_u32 needs o2c_nt_is_int o2c_nint o2c_n_to_f32 o2c_f2i64 params O2C_CASTN */
O2C_CASTN_FROM_DEF(o2c_cast_n_u32, uint32_t, O2C_NX_U32, O2C_NX_TU32)
/*@ o2c_cast_n_u64 needs o2c_nt_is_int o2c_nint o2c_n_to_f32 o2c_f2i64 params O2C_CASTN */
O2C_CASTN_FROM_DEF(o2c_cast_n_u64, uint64_t, O2C_NX_UU64, O2C_NX_TU64)
/*@ o2c_cast_n_b needs o2c_nt_is_int o2c_nint o2c_n_to_f32 params O2C_CASTN */
O2C_CASTN_FROM_DEF(o2c_cast_n_b, uint8_t, O2C_NX_BOOL, O2C_NX_BOOL)

/*@ o2c_cast_n_n needs o2c_n_to_f32 o2c_f32_to_n params O2C_CASTN */
/* narrow -> narrow, through the exact float value */
O2C_KERNEL(o2c_cast_n_n)
{
    const uint8_t *X = (const uint8_t *)p->x[0];
    uint8_t *Y = (uint8_t *)p->y[0];
    const int from = (int)p->k[O2C_CASTN_FROM], to = (int)p->k[O2C_CASTN_TO];
    const int sat = (int)p->k[O2C_CASTN_SAT], rnd = (int)p->k[O2C_CASTN_ROUND];
    O2C_FOR(i) Y[i] = o2c_f32_to_n(o2c_n_to_f32(X[i], from), to, sat, rnd);
}

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_TYPES(K, F)                                                   \
    K(o2c_cast_f32_n, F) K(o2c_cast_f64_n, F) K(o2c_cast_f16_n, F) K(o2c_cast_bf16_n, F)   \
    K(o2c_cast_i8_n, F) K(o2c_cast_i16_n, F) K(o2c_cast_i32_n, F) K(o2c_cast_i64_n, F)     \
    K(o2c_cast_u8_n, F) K(o2c_cast_u16_n, F) K(o2c_cast_u32_n, F) K(o2c_cast_u64_n, F)     \
    K(o2c_cast_b_n, F)                                                            \
    K(o2c_cast_n_f32, F) K(o2c_cast_n_f64, F) K(o2c_cast_n_f16, F) K(o2c_cast_n_bf16, F)   \
    K(o2c_cast_n_i8, F) K(o2c_cast_n_i16, F) K(o2c_cast_n_i32, F) K(o2c_cast_n_i64, F)     \
    K(o2c_cast_n_u8, F) K(o2c_cast_n_u16, F) K(o2c_cast_n_u32, F) K(o2c_cast_n_u64, F)     \
    K(o2c_cast_n_b, F) K(o2c_cast_n_n, F)
