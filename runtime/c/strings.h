/* String tensors (compiler/ops/strings.c): an element is a `const char *`
 * to NUL-terminated UTF-8. Kernels that build strings take their bytes from
 * the string space (x[O2C_STRS_X]: a header of int64 slots, then the bytes),
 * reset at the start of every run; when a string does not fit, the kernel
 * writes "" for it and sets the FULL slot, and the run returns
 * NAME_ERR_STRING_SPACE after that call: nothing is written past the space.
 * Those kernels have an index space of 1 (they take bytes in order). */

/*@ o2c_strs */
/* o2c_strs_reset / o2c_strs_full: the string space emptied at the start of a
 * run; whether a string did not fit. o2c_strs_take: n bytes of it, or NULL
 * (and FULL set) when they do not fit its cap bytes. */
static inline void o2c_strs_reset(void *space)
{
    o2c_int *h = (o2c_int *)space;
    h[O2C_STRS_USED] = 0;
    h[O2C_STRS_FULL] = 0;
}

static inline int o2c_strs_full(const void *space)
{
    return ((const o2c_int *)space)[O2C_STRS_FULL] != 0;
}

static inline char *o2c_strs_take(const void *space_c, o2c_int cap, o2c_int n)
{
    o2c_int *h = (o2c_int *)(uintptr_t)space_c;   /* the space is passed among the inputs (x[O2C_STRS_X]) */
    char *r;
    if (h[O2C_STRS_FULL] || n > cap - h[O2C_STRS_USED]) {
        h[O2C_STRS_FULL] = 1;
        return NULL;
    }
    r = (char *)h + O2C_STRS_HEAD + h[O2C_STRS_USED];
    h[O2C_STRS_USED] += n;
    return r;
}

/*@ o2c_utf8_next */
/* o2c_utf8_next: the code point at s (*cp) and its length in bytes; a byte
 * that starts no valid UTF-8 sequence reads as U+FFFD, one byte long. */
static inline int o2c_utf8_next(const unsigned char *s, int32_t *cp)
{
    int n, k;
    int32_t c = s[0], min;
    if (c < 0x80) { *cp = c; return 1; }
    if ((c & 0xe0) == 0xc0) { n = 2; c &= 0x1f; min = 0x80; }
    else if ((c & 0xf0) == 0xe0) { n = 3; c &= 0x0f; min = 0x800; }
    else if ((c & 0xf8) == 0xf0) { n = 4; c &= 0x07; min = 0x10000; }
    else { *cp = 0xfffd; return 1; }
    for (k = 1; k < n; k++) {
        if ((s[k] & 0xc0) != 0x80) { *cp = 0xfffd; return 1; }
        c = (c << 6) | (s[k] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) { *cp = 0xfffd; return 1; }
    *cp = c;
    return n;
}

/*@ o2c_utf8_put */
/* o2c_utf8_put: c as UTF-8 at d (d may be NULL: only the length). */
static inline int o2c_utf8_put(char *d, int32_t c)
{
    unsigned char b[4];
    int n, k;
    if (c < 0x80) { b[0] = (unsigned char)c; n = 1; }
    else if (c < 0x800) { b[0] = (unsigned char)(0xc0 | (c >> 6)); b[1] = (unsigned char)(0x80 | (c & 0x3f)); n = 2; }
    else if (c < 0x10000) {
        b[0] = (unsigned char)(0xe0 | (c >> 12)); b[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
        b[2] = (unsigned char)(0x80 | (c & 0x3f)); n = 3;
    } else {
        b[0] = (unsigned char)(0xf0 | (c >> 18)); b[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3f));
        b[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3f)); b[3] = (unsigned char)(0x80 | (c & 0x3f)); n = 4;
    }
    if (d)
        for (k = 0; k < n; k++) d[k] = (char)b[k];
    return n;
}

/*@ o2c_case_cp */
/* o2c_case_cp: the simple (one code point) upper- or lowercase of c for
 * ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic; any other code point
 * is returned as it is (so is U+00DF, whose uppercase is two letters). */
static inline int32_t o2c_case_cp(int32_t c, int upper)
{
    if (c < 0x80) {
        if (upper && c >= 'a' && c <= 'z') return c - 32;
        if (!upper && c >= 'A' && c <= 'Z') return c + 32;
        return c;
    }
    if (c < 0x100) {
        if (upper && c >= 0xe0 && c <= 0xfe && c != 0xf7) return c - 32;
        if (!upper && c >= 0xc0 && c <= 0xde && c != 0xd7) return c + 32;
        if (upper && c == 0xff) return 0x178;
        if (upper && c == 0xb5) return 0x39c;
        return c;
    }
    if (c < 0x180) {
        int even_upper = (c < 0x138 && c != 0x130 && c != 0x131) || (c >= 0x14a && c < 0x178);
        int odd_upper = (c >= 0x139 && c < 0x149) || (c >= 0x179 && c < 0x17f);
        if (c == 0x130) return upper ? c : 'i';
        if (c == 0x131) return upper ? 'I' : c;
        if (c == 0x178) return upper ? c : 0xff;
        if (c == 0x17f) return upper ? 'S' : c;
        if (even_upper) return upper ? (c & ~1) : (c | 1);
        if (odd_upper) return upper ? ((c & 1) ? c : c - 1) : ((c & 1) ? c + 1 : c);
        return c;
    }
    if (c >= 0x386 && c <= 0x3ce) {   /* Greek */
        if (c >= 0x391 && c <= 0x3ab && c != 0x3a2) return upper ? c : c + 32;
        if (c >= 0x3b1 && c <= 0x3cb) return upper ? (c == 0x3c2 ? 0x3a3 : c - 32) : c;
        if (c == 0x386) return upper ? c : 0x3ac;
        if (c == 0x3ac) return upper ? 0x386 : c;
        if (c >= 0x388 && c <= 0x38a) return upper ? c : c + 37;
        if (c >= 0x3ad && c <= 0x3af) return upper ? c - 37 : c;
        if (c == 0x38c) return upper ? c : 0x3cc;
        if (c == 0x3cc) return upper ? 0x38c : c;
        if (c == 0x38e || c == 0x38f) return upper ? c : c + 63;
        if (c == 0x3cd || c == 0x3ce) return upper ? c - 63 : c;
        return c;
    }
    if (c >= 0x400 && c <= 0x4ff) {   /* Cyrillic */
        if (c < 0x410) return upper ? c : c + 80;
        if (c < 0x430) return upper ? c : c + 32;
        if (c < 0x450) return upper ? c - 32 : c;
        if (c < 0x460) return upper ? c - 80 : c;
        if ((c >= 0x460 && c <= 0x481) || (c >= 0x48a && c <= 0x4bf) || (c >= 0x4d0 && c <= 0x4ff))
            return upper ? (c & ~1) : (c | 1);
        if (c >= 0x4c1 && c <= 0x4ce) return upper ? ((c & 1) ? c : c - 1) : ((c & 1) ? c + 1 : c);
        if (c == 0x4c0) return upper ? c : 0x4cf;
        if (c == 0x4cf) return upper ? 0x4c0 : c;
    }
    return c;
}

/*@ o2c_str_case needs o2c_case_cp o2c_utf8_next o2c_utf8_put */
/* o2c_str_case: the bytes of s with every code point's case changed, into d
 * (d NULL: only the length, without the NUL). Invalid UTF-8 bytes are kept. */
static inline o2c_int o2c_str_case(const char *s, char *d, int upper)
{
    o2c_int n = 0;
    const unsigned char *u = (const unsigned char *)s;
    while (*u) {
        int32_t c;
        int l = o2c_utf8_next(u, &c);
        if (c == 0xfffd && l == 1 && u[0] >= 0x80) {   /* not UTF-8: the byte as it is */
            if (d) d[n] = (char)u[0];
            n++;
        } else {
            n += o2c_utf8_put(d ? d + n : NULL, o2c_case_cp(c, upper));
        }
        u += l;
    }
    if (d) d[n] = 0;
    return n;
}

/*@ o2c_copy_str */
/* o2c_copy_str: y = x, element by element (the pointers). Index space: elements. */
O2C_KERNEL(o2c_copy_str)
{
    const char *const *X = (const char *const *)p->x[0];
    const char **Y = (const char **)p->y[0];
    O2C_FOR(i) Y[i] = X[i];
}

/*@ o2c_str_equal needs o2c_offset params O2C_STR */
/* o2c_str_equal: y = (strcmp(a, b) == 0), broadcast. Index space: elements. */
O2C_KERNEL(o2c_str_equal)
{
    const char *const *A = (const char *const *)p->x[0];
    const char *const *B = (const char *const *)p->x[1];
    uint8_t *Y = (uint8_t *)p->y[0];
    const o2c_int r = p->k[O2C_STR_RANK];
    O2C_FOR(i) {
        const char *a = A[r ? o2c_offset(i, r, p->k + O2C_STR_DIMS, p->k + O2C_STR_SA) : i];
        const char *b = B[r ? o2c_offset(i, r, p->k + O2C_STR_DIMS, p->k + O2C_STR_SB) : i];
        Y[i] = (uint8_t)(strcmp(a, b) == 0);
    }
}

/*@ o2c_str_concat needs o2c_offset o2c_strs params O2C_STR */
/* o2c_str_concat: y = a + b, broadcast; the result in the string space
 * (either operand itself where the other is empty). Index space: 1. */
O2C_KERNEL(o2c_str_concat)
{
    const char *const *A = (const char *const *)p->x[0];
    const char *const *B = (const char *const *)p->x[1];
    const char **Y = (const char **)p->y[0];
    const o2c_int r = p->k[O2C_STR_RANK];
    O2C_FOR(t) {
        o2c_int i;
        (void)t;
        for (i = 0; i < p->k[O2C_STR_N]; i++) {
            const char *a = A[r ? o2c_offset(i, r, p->k + O2C_STR_DIMS, p->k + O2C_STR_SA) : i];
            const char *b = B[r ? o2c_offset(i, r, p->k + O2C_STR_DIMS, p->k + O2C_STR_SB) : i];
            size_t la = strlen(a), lb = strlen(b);
            char *d;
            if (!lb || !la) { Y[i] = lb ? b : a; continue; }
            d = o2c_strs_take(p->x[O2C_STRS_X], p->k[O2C_STR_CAP], (o2c_int)(la + lb + 1));
            if (!d) { Y[i] = ""; continue; }
            memcpy(d, a, la);
            memcpy(d + la, b, lb + 1);
            Y[i] = d;
        }
    }
}

/*@ o2c_str_case_k needs o2c_str_case o2c_utf8_next o2c_case_cp o2c_strs params O2C_STRCASE */
/* o2c_str_case_k: y = x lowered or uppercased (StringNormalizer); a string
 * the change leaves as it is keeps its pointer. Index space: 1. */
O2C_KERNEL(o2c_str_case_k)
{
    const char *const *X = (const char *const *)p->x[0];
    const char **Y = (const char **)p->y[0];
    const int upper = (int)p->k[O2C_STRCASE_UPPER];
    O2C_FOR(t) {
        o2c_int i;
        (void)t;
        for (i = 0; i < p->k[O2C_STRCASE_N]; i++) {
            const char *s = X[i];
            o2c_int n = o2c_str_case(s, NULL, upper);
            char *d;
            if (n == (o2c_int)strlen(s)) {   /* the same length: maybe the same bytes */
                const unsigned char *u = (const unsigned char *)s;
                int same = 1;
                while (*u && same) {
                    int32_t c;
                    int l = o2c_utf8_next(u, &c);
                    if (!(c == 0xfffd && l == 1) && o2c_case_cp(c, upper) != c) same = 0;
                    u += l;
                }
                if (same) { Y[i] = s; continue; }
            }
            d = o2c_strs_take(p->x[O2C_STRS_X], p->k[O2C_STRCASE_CAP], n + 1);
            if (!d) { Y[i] = ""; continue; }
            o2c_str_case(s, d, upper);
            Y[i] = d;
        }
    }
}

/*@ o2c_label_encode params O2C_LE */
/* o2c_label_encode: y = the value of x's key (binary search of the sorted
 * keys x[1]), else the default (the last value of x[2]). Index space: elements. */
O2C_KERNEL(o2c_label_encode)
{
    const o2c_int nk = p->k[O2C_LE_NKEYS], kind = p->k[O2C_LE_IN];
    const o2c_int vs = p->k[O2C_LE_VSIZE];
    O2C_FOR(i) {
        o2c_int lo = 0, hi = nk - 1, at = nk;   /* not found: the default */
        if (kind == O2C_LE_STR) {
            const char *s = ((const char *const *)p->x[0])[i];
            const char *const *K = (const char *const *)p->x[1];
            while (lo <= hi) {
                o2c_int m = lo + (hi - lo) / 2;
                int c = strcmp(s, K[m]);
                if (!c) { at = m; break; }
                if (c < 0) hi = m - 1; else lo = m + 1;
            }
        } else if (kind == O2C_LE_F32 || kind == O2C_LE_F64) {
            const double v = kind == O2C_LE_F32 ? (double)((const float *)p->x[0])[i] : ((const double *)p->x[0])[i];
            const double *K = (const double *)p->x[1];
            if (v != v) {
                if (p->k[O2C_LE_NAN] >= 0) at = p->k[O2C_LE_NAN];
            } else {
                while (lo <= hi) {
                    o2c_int m = lo + (hi - lo) / 2;
                    if (v == K[m]) { at = m; break; }
                    if (v < K[m]) hi = m - 1; else lo = m + 1;
                }
            }
        } else {
            const int64_t v = kind == O2C_LE_I64 ? ((const int64_t *)p->x[0])[i]
                            : kind == O2C_LE_I32 ? (o2c_int)((const int32_t *)p->x[0])[i]
                                                 : (o2c_int)((const int16_t *)p->x[0])[i];
            const int64_t *K = (const int64_t *)p->x[1];
            while (lo <= hi) {
                o2c_int m = lo + (hi - lo) / 2;
                if (v == K[m]) { at = m; break; }
                if (v < K[m]) hi = m - 1; else lo = m + 1;
            }
        }
        if (p->k[O2C_LE_VSTR]) ((const char **)p->y[0])[i] = ((const char *const *)p->x[2])[at];
        else memcpy((unsigned char *)p->y[0] + i * vs, (const unsigned char *)p->x[2] + at * vs, (size_t)vs);
    }
}

/*@ o2c_regex_full needs o2c_utf8_next params O2C_RE */
/* o2c_regex_full: y = x matches the whole program x[1] (a Thompson NFA made
 * by compiler/ops/strings.c from the pattern; O2C_RE_* instructions), run
 * as a set of states advanced one code point at a time: linear in the
 * input. y[1]: int32 scratch, 5 x O2C_RE_STATES + 2. Index space: 1. */
static inline int o2c_re_word(int c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline int o2c_re_assert(int kind, const unsigned char *s, o2c_int pos, o2c_int len)
{
    int wb, wa;
    if (kind == O2C_RE_BOL) return pos == 0;
    if (kind == O2C_RE_EOL) return pos == len;
    wb = pos > 0 && o2c_re_word(s[pos - 1]);
    wa = pos < len && o2c_re_word(s[pos]);
    return kind == O2C_RE_WORDB ? wb != wa : wb == wa;
}

/* adds pc and the states reached from it without input to list (marked with gen) */
static inline void o2c_re_add(const int32_t *P, int32_t *list, int32_t *n, int32_t *mark, int32_t *stack,
                              int32_t gen, int32_t pc, const unsigned char *s, o2c_int pos, o2c_int len)
{
    int32_t sp = 0;
    stack[sp++] = pc;
    while (sp) {
        int32_t q = stack[--sp];
        if (mark[q] == gen) continue;
        mark[q] = gen;
        switch (P[q]) {
        case O2C_RE_JMP: stack[sp++] = P[q + 1]; break;
        case O2C_RE_SPLIT: stack[sp++] = P[q + 2]; stack[sp++] = P[q + 1]; break;
        case O2C_RE_ASSERT: if (o2c_re_assert(P[q + 1], s, pos, len)) stack[sp++] = q + 2; break;
        default: list[(*n)++] = q; break;
        }
    }
}

O2C_KERNEL(o2c_regex_full)
{
    const char *const *X = (const char *const *)p->x[0];
    const int32_t *P = (const int32_t *)p->x[1];
    uint8_t *Y = (uint8_t *)p->y[0];
    const int32_t S = (int32_t)p->k[O2C_RE_STATES];
    int32_t *cl = (int32_t *)p->y[1], *nl = cl + S, *mark = nl + S, *stack = mark + S;
    O2C_FOR(t) {
        o2c_int i;
        (void)t;
        for (i = 0; i < p->k[O2C_RE_N]; i++) {
            const unsigned char *s = (const unsigned char *)X[i];
            const o2c_int len = (o2c_int)strlen(X[i]);
            o2c_int pos = 0;
            int32_t nc = 0, gen = 1, q, k, ok = 0;
            for (q = 0; q < S; q++) mark[q] = 0;
            o2c_re_add(P, cl, &nc, mark, stack, gen, 0, s, 0, len);
            while (pos < len && nc) {
                int32_t c, nn = 0, *tmp;
                int l = o2c_utf8_next(s + pos, &c);
                gen++;
                for (k = 0; k < nc; k++) {
                    const int32_t *ins = P + cl[k];
                    int32_t next = -1;
                    if (ins[0] == O2C_RE_CHAR) { if (ins[1] == c) next = cl[k] + 2; }
                    else if (ins[0] == O2C_RE_ANY) { if (c != '\n') next = cl[k] + 1; }
                    else if (ins[0] == O2C_RE_CLASS) {
                        int32_t r, in = 0;
                        for (r = 0; r < ins[2]; r++)
                            if (c >= ins[3 + 2 * r] && c <= ins[4 + 2 * r]) in = 1;
                        if (in != ins[1]) next = cl[k] + 3 + 2 * ins[2];
                    }
                    if (next >= 0) o2c_re_add(P, nl, &nn, mark, stack, gen, next, s, pos + l, len);
                }
                tmp = cl; cl = nl; nl = tmp;
                nc = nn;
                pos += l;
            }
            for (k = 0; k < nc && pos == len; k++)
                if (P[cl[k]] == O2C_RE_MATCH) ok = 1;
            Y[i] = (uint8_t)ok;
        }
    }
}

/* ---- registry (not emitted) ---- */
#define O2C_KERNELS_STRINGS(K, F) K(o2c_copy_str, F) K(o2c_str_equal, F) K(o2c_str_concat, F) K(o2c_str_case_k, F) \
    K(o2c_label_encode, F) K(o2c_regex_full, F)
