/* The kernel registry: every runtime kernel (runtime/c/FAMILY.h, the
 * families of families.def) compiled into the compiler, so that it runs
 * them at compile time (constant folding, evaluation: eval.c), with the
 * text that instantiates each one in generated code. The elementwise
 * kernels are made from the op table's expressions (ops.def UNARY, BINARY,
 * COMPARE, PREDICATE, KUNARY, KBINARY lines): a kernel per element type.
 * Kernels are found by name through a hash index (kernel_find). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
/* The folding kernels made from the op table's expressions call exp(x) on a
 * float x: type-generic here, as in the generated code, where expr_for_type
 * writes the float function (the generated code itself never uses it); exp,
 * log, log1p, tanh and erf are redefined below for the vectorizable ones. */
#include <tgmath.h>

/* runtime kernels, compiled in for constant folding, each after its
 * parameter slots (runtime/c/params/), in the order of families.def */
#include "../../runtime/c/params/elementwise.h"
#include "../../runtime/c/elementwise.h"
#include "../../runtime/c/params/matmul.h"
#include "../../runtime/c/matmul.h"
#include "../../runtime/c/params/conv.h"
#include "../../runtime/c/conv.h"
#include "../../runtime/c/params/pool.h"
#include "../../runtime/c/pool.h"
#include "../../runtime/c/params/norm.h"
#include "../../runtime/c/norm.h"
#include "../../runtime/c/params/reduce.h"
#include "../../runtime/c/reduce.h"
#include "../../runtime/c/params/movement.h"
#include "../../runtime/c/movement.h"
#include "../../runtime/c/params/resize.h"
#include "../../runtime/c/resize.h"
#include "../../runtime/c/params/rnn.h"
#include "../../runtime/c/rnn.h"
#include "../../runtime/c/params/index.h"
#include "../../runtime/c/index.h"
#include "../../runtime/c/params/misc.h"
#include "../../runtime/c/misc.h"
#include "../../runtime/c/params/attention.h"
#include "../../runtime/c/attention.h"
#include "../../runtime/c/params/loss.h"
#include "../../runtime/c/loss.h"
#include "../../runtime/c/params/training.h"
#include "../../runtime/c/training.h"
#include "../../runtime/c/params/ml.h"
#include "../../runtime/c/ml.h"
#include "../../runtime/c/params/signal.h"
#include "../../runtime/c/signal.h"
#include "../../runtime/c/params/image.h"
#include "../../runtime/c/image.h"
#include "../../runtime/c/params/types.h"
#include "../../runtime/c/types.h"
#include "../../runtime/c/params/extra.h"
#include "../../runtime/c/extra.h"
#include "../../runtime/c/params/quant.h"
#include "../../runtime/c/quant.h"
#include "../../runtime/c/params/control.h"
#include "../../runtime/c/control.h"
#include "../../runtime/c/params/strings.h"
#include "../../runtime/c/strings.h"

/* The float kernels of the op table's expressions call the vectorizable
 * functions, as the generated code does (expr_for_type): constant folding
 * computes what the generated code would. */
#undef exp
#undef log
#undef log1p
#undef tanh
#undef erf
#define exp(x) _Generic((x), float: o2c_vexp_f32, default: exp)(x)
#define log(x) _Generic((x), float: o2c_vlog_f32, default: log)(x)
#define log1p(x) _Generic((x), float: o2c_vlog1p_f32, default: log1p)(x)
#define tanh(x) _Generic((x), float: o2c_vtanh_f32, default: tanh)(x)
#define erf(x) _Generic((x), float: o2c_verf_f32, default: erf)(x)

/* element type sets: M(suffix, C type, ...) */
#define TS_FLOAT(M, ...) M(f32, float, __VA_ARGS__) M(f64, double, __VA_ARGS__)
#define TS_SINT(M, ...) M(i8, int8_t, __VA_ARGS__) M(i16, int16_t, __VA_ARGS__) \
    M(i32, int32_t, __VA_ARGS__) M(i64, int64_t, __VA_ARGS__)
#define TS_UINT(M, ...) M(u8, uint8_t, __VA_ARGS__) M(u16, uint16_t, __VA_ARGS__) \
    M(u32, uint32_t, __VA_ARGS__) M(u64, uint64_t, __VA_ARGS__)
#define TS_SIGNED(M, ...) TS_FLOAT(M, __VA_ARGS__) TS_SINT(M, __VA_ARGS__)
#define TS_INT(M, ...) TS_SINT(M, __VA_ARGS__) TS_UINT(M, __VA_ARGS__)
#define TS_NUM(M, ...) TS_SIGNED(M, __VA_ARGS__) TS_UINT(M, __VA_ARGS__)
#define TS_BOOL(M, ...) M(b, uint8_t, __VA_ARGS__)
#define TS_ALL(M, ...) TS_NUM(M, __VA_ARGS__) TS_BOOL(M, __VA_ARGS__)
/* a second copy of the numeric set, for the inner loop of the cast pairs */
#define TS2_NUM(M, ...) M(f32, float, __VA_ARGS__) M(f64, double, __VA_ARGS__) \
    M(i8, int8_t, __VA_ARGS__) M(i16, int16_t, __VA_ARGS__) M(i32, int32_t, __VA_ARGS__) \
    M(i64, int64_t, __VA_ARGS__) M(u8, uint8_t, __VA_ARGS__) M(u16, uint16_t, __VA_ARGS__) \
    M(u32, uint32_t, __VA_ARGS__) M(u64, uint64_t, __VA_ARGS__)

/* 1. the kernels */
#define K_UNARY(sfx, T, Name, text, expr) O2C_UNARY(o2c_##Name##_##sfx, T, expr)
#define K_BINARY(sfx, T, Name, text, expr) O2C_BINARY(o2c_##Name##_##sfx, T, T, expr)
#define K_COMPARE(sfx, T, Name, text, expr) O2C_BINARY(o2c_##Name##_##sfx, T, uint8_t, expr)
#define K_PREDICATE(sfx, T, Name, text, expr) O2C_PREDICATE(o2c_##Name##_##sfx, T, expr)
#define UNARY(Name, TS, schema, expr, ...) TS_##TS(K_UNARY, Name, #expr, expr)
#define KUNARY(Name, TS, expr) TS_##TS(K_UNARY, Name, #expr, expr)
#define BINARY(Name, TS, expr, ...) TS_##TS(K_BINARY, Name, #expr, expr)
#define KBINARY(Name, TS, expr) TS_##TS(K_BINARY, Name, #expr, expr)
#define COMPARE(Name, TS, expr, ...) TS_##TS(K_COMPARE, Name, #expr, expr)
#define PREDICATE(Name, TS, schema, expr, ...) TS_##TS(K_PREDICATE, Name, #expr, expr)
#include "../ops.def"

/* casts between every pair of supported types */
#define K_CAST_TO(sfxo, TO, sfxi, TI) O2C_CAST(o2c_cast_##sfxi##_##sfxo, TI, TO)
#define K_CAST_FROM(sfxi, TI, x) TS2_NUM(K_CAST_TO, sfxi, TI) O2C_CAST_TO_BOOL(o2c_cast_##sfxi##_b, TI)
TS_ALL(K_CAST_FROM, 0)

/* casts from and to the 16-bit float types */
#define K_FROM16(sfxo, TO, sfxi, CONV) O2C_CAST_FROM16(o2c_cast_##sfxi##_##sfxo, TO, CONV)
#define K_TO16(sfxi, TI, sfxo, CONV) O2C_CAST_TO16(o2c_cast_##sfxi##_##sfxo, TI, CONV)
TS2_NUM(K_FROM16, f16, o2c_h2f)
TS2_NUM(K_FROM16, bf16, o2c_bf2f)
O2C_CAST_FROM16_TO_BOOL(o2c_cast_f16_b, o2c_h2f)
O2C_CAST_FROM16_TO_BOOL(o2c_cast_bf16_b, o2c_bf2f)
TS_ALL(K_TO16, f16, o2c_f2h)
TS_ALL(K_TO16, bf16, o2c_f2bf)
O2C_CAST_16(o2c_cast_f16_bf16, o2c_h2f, o2c_f2bf)
O2C_CAST_16(o2c_cast_bf16_f16, o2c_bf2f, o2c_f2h)


/* 2. the registry */
#define R_UNARY(sfx, T, Name, text, expr) \
    {"o2c_" #Name "_" #sfx, o2c_##Name##_##sfx, "elementwise.h", "O2C_UNARY(o2c_" #Name "_" #sfx ", " #T ", " text ")", ""},
#define R_BINARY(sfx, T, Name, text, expr) \
    {"o2c_" #Name "_" #sfx, o2c_##Name##_##sfx, "elementwise.h", "O2C_BINARY(o2c_" #Name "_" #sfx ", " #T ", " #T ", " text ")", "o2c_offset"},
#define R_COMPARE(sfx, T, Name, text, expr) \
    {"o2c_" #Name "_" #sfx, o2c_##Name##_##sfx, "elementwise.h", "O2C_BINARY(o2c_" #Name "_" #sfx ", " #T ", uint8_t, " text ")", "o2c_offset"},
#define R_PREDICATE(sfx, T, Name, text, expr) \
    {"o2c_" #Name "_" #sfx, o2c_##Name##_##sfx, "elementwise.h", "O2C_PREDICATE(o2c_" #Name "_" #sfx ", " #T ", " text ")", ""},
#define R_CAST_TO(sfxo, TO, sfxi, TI) \
    {"o2c_cast_" #sfxi "_" #sfxo, o2c_cast_##sfxi##_##sfxo, "elementwise.h", "O2C_CAST(o2c_cast_" #sfxi "_" #sfxo ", " #TI ", " #TO ")", ""},
#define R_CAST_FROM(sfxi, TI, x) TS2_NUM(R_CAST_TO, sfxi, TI) \
    {"o2c_cast_" #sfxi "_b", o2c_cast_##sfxi##_b, "elementwise.h", "O2C_CAST_TO_BOOL(o2c_cast_" #sfxi "_b, " #TI ")", ""},
#define R_FROM16(sfxo, TO, sfxi, CONV) \
    {"o2c_cast_" #sfxi "_" #sfxo, o2c_cast_##sfxi##_##sfxo, "elementwise.h", \
     "O2C_CAST_FROM16(o2c_cast_" #sfxi "_" #sfxo ", " #TO ", " #CONV ")", #CONV},
#define R_TO16(sfxi, TI, sfxo, CONV) \
    {"o2c_cast_" #sfxi "_" #sfxo, o2c_cast_##sfxi##_##sfxo, "elementwise.h", \
     "O2C_CAST_TO16(o2c_cast_" #sfxi "_" #sfxo ", " #TI ", " #CONV ")", #CONV},
#define R_FILE(name, file) {#name, name, file, NULL, NULL},

static const Kernel KERNELS[] = {
#define UNARY(Name, TS, schema, expr, ...) TS_##TS(R_UNARY, Name, #expr, expr)
#define KUNARY(Name, TS, expr) TS_##TS(R_UNARY, Name, #expr, expr)
#define BINARY(Name, TS, expr, ...) TS_##TS(R_BINARY, Name, #expr, expr)
#define KBINARY(Name, TS, expr) TS_##TS(R_BINARY, Name, #expr, expr)
#define COMPARE(Name, TS, expr, ...) TS_##TS(R_COMPARE, Name, #expr, expr)
#define PREDICATE(Name, TS, schema, expr, ...) TS_##TS(R_PREDICATE, Name, #expr, expr)
#include "../ops.def"
    TS_ALL(R_CAST_FROM, 0)
    TS2_NUM(R_FROM16, f16, o2c_h2f)
    TS2_NUM(R_FROM16, bf16, o2c_bf2f)
    TS_ALL(R_TO16, f16, o2c_f2h)
    TS_ALL(R_TO16, bf16, o2c_f2bf)
    {"o2c_cast_f16_b", o2c_cast_f16_b, "elementwise.h", "O2C_CAST_FROM16_TO_BOOL(o2c_cast_f16_b, o2c_h2f)", "o2c_h2f"},
    {"o2c_cast_bf16_b", o2c_cast_bf16_b, "elementwise.h", "O2C_CAST_FROM16_TO_BOOL(o2c_cast_bf16_b, o2c_bf2f)", "o2c_bf2f"},
    {"o2c_cast_f16_bf16", o2c_cast_f16_bf16, "elementwise.h", "O2C_CAST_16(o2c_cast_f16_bf16, o2c_h2f, o2c_f2bf)", "o2c_h2f o2c_f2bf"},
    {"o2c_cast_bf16_f16", o2c_cast_bf16_f16, "elementwise.h", "O2C_CAST_16(o2c_cast_bf16_f16, o2c_bf2f, o2c_f2h)", "o2c_bf2f o2c_f2h"},
#define FAMILY(name, UPPER) O2C_KERNELS_##UPPER(R_FILE, #name ".h")
#include "../families.def"
#undef FAMILY
};
#define NKERNELS (int)(sizeof KERNELS / sizeof KERNELS[0])

/* The index by name: open addressing, slot = registry position + 1 (0:
 * empty), made on the first lookup (it holds no pool memory: a process may
 * compile several models). */
#define KERNEL_SLOTS 4096
static int kernel_slot[KERNEL_SLOTS];

const Kernel *kernel_find(const char *name)
{
    static int indexed;
    if (!indexed) {
        if (2 * NKERNELS > KERNEL_SLOTS) fail_plain("internal: more than %d kernels", KERNEL_SLOTS / 2);
        for (int i = 0; i < NKERNELS; i++) {
            uint32_t h = str_hash(KERNELS[i].name) % KERNEL_SLOTS;
            while (kernel_slot[h]) h = (h + 1) % KERNEL_SLOTS;
            kernel_slot[h] = i + 1;
        }
        indexed = 1;
    }
    for (uint32_t h = str_hash(name) % KERNEL_SLOTS; kernel_slot[h]; h = (h + 1) % KERNEL_SLOTS)
        if (!strcmp(KERNELS[kernel_slot[h] - 1].name, name)) return &KERNELS[kernel_slot[h] - 1];
    return NULL;
}

/* The runtime files of the families, in emission order (families.def),
 * NULL-terminated. */
const char *const KERNEL_FAMILY_FILES[] = {
#define FAMILY(name, UPPER) #name ".h",
#include "../families.def"
#undef FAMILY
    NULL};

/* float32 stays float32: the op table's expression text as the generated
 * code of element type dt uses it. For float, the math functions are the
 * float ones: the vectorizable runtime functions where there is one
 * (exp( -> o2c_vexp_f32(, runtime/c/o2c_rt.h: a loop calling them is vector
 * code, a loop calling libm is not), else libm's (sqrt( -> sqrtf(); other
 * types keep the text. The chunks the result names are emitted with it
 * (ctext.c emit_kernel_sources). */
const char *expr_for_type(const char *expr, int dt)
{
    static const char *const MATH[] = {"exp", "log", "log1p", "tanh", "erf", "sqrt", "fabs", "floor", "ceil",
                                       "nearbyint", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
                                       "asinh", "acosh", "atanh", "pow", "fmod", NULL};
    static const char *const VMATH[] = {"exp", "log", "log1p", "tanh", "erf", NULL};
    if (dt != DT_FLOAT) return expr;
    size_t n = strlen(expr), o = 0;
    char *out = xalloc(8 * n + 1);
    for (size_t i = 0; i < n;) {
        if (isalpha((unsigned char)expr[i]) || expr[i] == '_') {
            size_t j = i;
            while (j < n && (isalnum((unsigned char)expr[j]) || expr[j] == '_')) j++;
            size_t k = j;
            while (k < n && expr[k] == ' ') k++;
            int fn = 0, vec = 0;
            for (int m = 0; MATH[m] && k < n && expr[k] == '('; m++)
                if (strlen(MATH[m]) == j - i && !memcmp(MATH[m], expr + i, j - i)) fn = 1;
            for (int m = 0; fn && VMATH[m]; m++)
                if (strlen(VMATH[m]) == j - i && !memcmp(VMATH[m], expr + i, j - i)) vec = 1;
            if (fn && i > 0 && (expr[i - 1] == '.' || expr[i - 1] == '>')) fn = vec = 0;
            if (vec) {
                o += (size_t)sprintf(out + o, "o2c_v%.*s_f32", (int)(j - i), expr + i);
            } else {
                memcpy(out + o, expr + i, j - i);
                o += j - i;
                if (fn) out[o++] = 'f';
            }
            i = j;
        } else {
            out[o++] = expr[i++];
        }
    }
    out[o] = 0;
    return out;
}

/* A registry kernel's instantiation line as generated code writes it: a
 * float kernel's expression calls the float math functions. */
const char *kernel_instance(const Kernel *k)
{
    const Kernel *end = KERNELS + NKERNELS;
    size_t n = strlen(k->name);
    if (k >= KERNELS && k < end && k->instance && n > 4 && !strcmp(k->name + n - 4, "_f32"))
        return expr_for_type(k->instance, DT_FLOAT);
    return k->instance;
}

