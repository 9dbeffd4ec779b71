/* Elementwise kernels. The op table (compiler/ops.def) holds each op's
 * expression; these macros turn an expression into a kernel, once per
 * element type. Index space: the output elements.
 *
 * Broadcasting parameters (binary, ternary):
 *   k[0]       rank of the output, 0 when every input has the output's shape
 *   k[1..8]    output dims
 *   k[9..16]   strides of input 0 (0 on broadcast axes)
 *   k[17..24]  strides of input 1
 *   k[25..32]  strides of input 2
 * Unary kernels read A, B, C from f[0..2] (the op's real attributes). */

#define O2C_EW_DIMS(p) ((p)->k + 1)
#define O2C_EW_STR(p, j) ((p)->k + 9 + 8 * (j))

/* y = EXPR(x); EXPR may name the element type T */
#define O2C_UNARY(NAME, TY, EXPR)                                           \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        typedef TY T;                                                       \
        const T *X = (const T *)p->x[0];                                    \
        T *Y = (T *)p->y[0];                                                \
        const T A = (T)p->f[0], B = (T)p->f[1], C = (T)p->f[2];             \
        (void)A; (void)B; (void)C;                                          \
        O2C_FOR(i) { const T x = X[i]; Y[i] = (T)(EXPR); }                  \
    }

/* bool y = EXPR(x) (IsNaN, IsInf); A, B, C: the op's real and integer
 * attributes in schema order, as T. */
#define O2C_PREDICATE(NAME, TY, EXPR)                                       \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        typedef TY T;                                                       \
        const T *X = (const T *)p->x[0];                                    \
        uint8_t *Y = (uint8_t *)p->y[0];                                    \
        const T A = (T)p->f[0], B = (T)p->f[1], C = (T)p->f[2];             \
        (void)A; (void)B; (void)C;                                          \
        O2C_FOR(i) { const T x = X[i]; Y[i] = (uint8_t)((EXPR) ? 1 : 0); }  \
    }

/* y = EXPR(a, b) with numpy broadcasting; TO is the output type. */
#define O2C_BINARY(NAME, TY, TO, EXPR)                                      \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        typedef TY T;                                                       \
        const T *XA = (const T *)p->x[0], *XB = (const T *)p->x[1];         \
        TO *Y = (TO *)p->y[0];                                              \
        const int64_t r = p->k[0];                                          \
        if (r == 0) {                                                       \
            O2C_FOR(i) { const T a = XA[i], b = XB[i]; Y[i] = (TO)(EXPR); } \
        } else {                                                            \
            O2C_FOR(i) {                                                    \
                const T a = XA[o2c_offset(i, r, O2C_EW_DIMS(p), O2C_EW_STR(p, 0))]; \
                const T b = XB[o2c_offset(i, r, O2C_EW_DIMS(p), O2C_EW_STR(p, 1))]; \
                Y[i] = (TO)(EXPR);                                          \
            }                                                               \
        }                                                                   \
    }

/* Cast: y = (TO)x; to bool is x != 0. */
#define O2C_CAST(NAME, TI, TO)                                              \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const TI *X = (const TI *)p->x[0];                                  \
        TO *Y = (TO *)p->y[0];                                              \
        O2C_FOR(i) Y[i] = (TO)X[i];                                         \
    }
#define O2C_CAST_TO_BOOL(NAME, TI)                                          \
    O2C_KERNEL(NAME)                                                        \
    {                                                                       \
        const TI *X = (const TI *)p->x[0];                                  \
        uint8_t *Y = (uint8_t *)p->y[0];                                    \
        O2C_FOR(i) Y[i] = (uint8_t)(X[i] != 0);                             \
    }

/*@ o2c_where needs o2c_offset */
/* Where(cond, a, b): cond is bool (one byte), a and b of element size k[33]. */
O2C_KERNEL(o2c_where)
{
    const uint8_t *XC = (const uint8_t *)p->x[0];
    const uint8_t *XA = (const uint8_t *)p->x[1], *XB = (const uint8_t *)p->x[2];
    uint8_t *Y = (uint8_t *)p->y[0];
    const int64_t r = p->k[0], es = p->k[33];
    O2C_FOR(i) {
        int64_t ic = i, ia = i, ib = i;
        if (r) {
            ic = o2c_offset(i, r, O2C_EW_DIMS(p), O2C_EW_STR(p, 0));
            ia = o2c_offset(i, r, O2C_EW_DIMS(p), O2C_EW_STR(p, 1));
            ib = o2c_offset(i, r, O2C_EW_DIMS(p), O2C_EW_STR(p, 2));
        }
        memcpy(Y + i * es, XC[ic] ? XA + ia * es : XB + ib * es, (size_t)es);
    }
}

/* ---- registry: every kernel of this file (read by the compiler) ---- */
#define O2C_KERNELS_ELEMENTWISE(K) K(o2c_where)
