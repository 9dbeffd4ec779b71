/* Parameter slots of the string kernels (runtime/c/strings.h): the lowering
 * (compiler/ops/strings.c) writes c->k[NAME], the kernel reads p->k[NAME].
 * A string tensor's element is a `const char *` (NUL-terminated UTF-8). */

/* The string space: an arena tensor that the kernels building strings take
 * bytes from, passed in x[O2C_STRS_X]; int64 header slots, then the bytes. */
enum { O2C_STRS_USED, O2C_STRS_FULL, O2C_STRS_NHEAD };
#define O2C_STRS_HEAD ((int64_t)(O2C_STRS_NHEAD * (int64_t)sizeof(int64_t)))
#define O2C_STRS_X (O2C_MAX_X - 1)

/* o2c_str_equal, o2c_str_concat: numpy broadcasting of x[0] and x[1] */
enum {
    O2C_STR_RANK,                              /* the output's rank (0: no broadcasting) */
    O2C_STR_DIMS,                              /* its dims */
    O2C_STR_SA = O2C_STR_DIMS + O2C_MAX_RANK,  /* x[0]'s strides (0 on broadcast axes) */
    O2C_STR_SB = O2C_STR_SA + O2C_MAX_RANK,    /* x[1]'s strides */
    O2C_STR_N = O2C_STR_SB + O2C_MAX_RANK,     /* o2c_str_concat: output elements (index space 1) */
    O2C_STR_CAP,                               /* o2c_str_concat: bytes of the string space */
    O2C_STR_NK
};
O2C_PARAMS_FIT(str, O2C_STR_NK, 0)

/* o2c_str_case (StringNormalizer's case change): y = x lowered or uppercased */
enum {
    O2C_STRCASE_N,        /* elements (index space 1) */
    O2C_STRCASE_UPPER,    /* 1 upper, 0 lower */
    O2C_STRCASE_CAP,      /* bytes of the string space */
    O2C_STRCASE_NK
};
O2C_PARAMS_FIT(strcase, O2C_STRCASE_NK, 0)

/* o2c_label_encode (ai.onnx.ml LabelEncoder): x[1] the keys, sorted (int64,
 * double or strings), x[2] the values, the default last */
enum {
    O2C_LE_IN,            /* the input's type: O2C_LE_* below */
    O2C_LE_NKEYS,         /* keys */
    O2C_LE_NAN,           /* the value index of a NaN key (-1: none) */
    O2C_LE_VSTR,          /* 1: the values are strings (pointers copied) */
    O2C_LE_VSIZE,         /* else: a value's size in bytes */
    O2C_LE_NK
};
enum { O2C_LE_I64, O2C_LE_I32, O2C_LE_I16, O2C_LE_F32, O2C_LE_F64, O2C_LE_STR };
O2C_PARAMS_FIT(le, O2C_LE_NK, 0)

/* o2c_regex_full: x[1] the program (int32, made by compiler/ops/strings.c),
 * y[1] scratch (int32, 3 x O2C_RE_STATES); index space 1 */
enum {
    O2C_RE_N,             /* elements */
    O2C_RE_STATES,        /* the program's length */
    O2C_RE_NK
};
O2C_PARAMS_FIT(re, O2C_RE_NK, 0)
/* instructions: an opcode, then its operands */
enum {
    O2C_RE_CHAR,          /* c: the code point c */
    O2C_RE_ANY,           /* any code point but '\n' */
    O2C_RE_CLASS,         /* neg, n, then n pairs lo hi: a code point in (or, neg, outside) the ranges */
    O2C_RE_SPLIT,         /* a b: go on at a and at b */
    O2C_RE_JMP,           /* a */
    O2C_RE_ASSERT,        /* kind: O2C_RE_BOL, _EOL, _WORDB, _NWORDB at the current position */
    O2C_RE_MATCH
};
enum { O2C_RE_BOL, O2C_RE_EOL, O2C_RE_WORDB, O2C_RE_NWORDB };
