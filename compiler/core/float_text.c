/* The text of a float constant in generated C, fast: emit_common.c's
 * put_float writes the shortest "%.6g" .. "%.9g" that reads back as the same
 * float, which takes up to four snprintf and strtof calls a value (most of
 * onnx2c's time on a model of 90 MB of float weights). float_text_fast gives
 * the same text from exact integer arithmetic: |v| = m * 2^e is scaled to P
 * decimal digits in 128 bits, rounded half to even (as printf), checked
 * against the halfway points to v's neighbours (as strtof reads, ties to
 * even) and laid out as %g does (tests: the text is compared with the
 * snprintf/strtof loop's on a stride of all float bit patterns). Values it
 * does not take (0, below 1e-10, 1e10 and above, subnormal, inf, NaN; or a
 * host without 128-bit integers) return 0 and go the slow way. */
#include <math.h>
#include <string.h>

#include "ir.h"

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 u128;

static u128 pow10_u128(int k)
{
    u128 r = 1;
    while (k-- > 0) r *= 10;
    return r;
}

int float_text_fast(float v, char *buf)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    int bexp = (int)((bits >> 23) & 0xff);
    if (bexp == 0 || bexp == 0xff) return 0;    /* zero, subnormal, inf, nan */
    double av = fabs((double)v);
    if (!(av >= 1e-10 && av < 1e10)) return 0;
    uint64_t m = (bits & 0x7fffff) | 0x800000;
    int e = bexp - 150;                           /* |v| = m * 2^e */
    int E = (int)floor(log10(av));
    uint64_t D = 0;
    int p, X = 0;
    for (p = 6; p <= 9; p++) {
        int s, fixes = 0;
        for (;;) {
            s = p - 1 - E;
            u128 N = (u128)m, Q = 1;
            if (e > 0) N <<= e; else Q <<= -e;
            if (s > 0) N *= pow10_u128(s); else Q *= pow10_u128(-s);
            u128 q = N / Q, r = N % Q;
            u128 lo = pow10_u128(p - 1), hi = lo * 10;
            if ((q < lo || q >= hi) && fixes++ < 2) { E += q < lo ? -1 : 1; continue; }
            if (q < lo || q >= hi) return 0;
            if (2 * r > Q || (2 * r == Q && (q & 1))) q++;
            X = E;
            if (q == hi) { q = lo; X = E + 1; }
            D = (uint64_t)q;
            break;
        }
        /* does D * 10^(X-p+1) read back as v (nearest, ties to even)? */
        int t = X - p + 1;
        int pow2 = (m == 0x800000 && bexp > 1);   /* the lower neighbour is closer */
        u128 Bl = pow2 ? 4 * m - 1 : 2 * m - 1, Bh = 2 * m + 1;
        int fl = pow2 ? e - 2 : e - 1, fh = e - 1;
        u128 L = (u128)D, Rl = Bl, Rh = Bh;
        if (t > 0) L *= pow10_u128(t); else { Rl *= pow10_u128(-t); Rh *= pow10_u128(-t); }
        u128 Ll = L, Lh = L;
        if (fl > 0) Rl <<= fl; else Ll <<= -fl;
        if (fh > 0) Rh <<= fh; else Lh <<= -fh;
        int even = (m & 1) == 0;
        int above_low = Ll > Rl || (Ll == Rl && even), below_high = Lh < Rh || (Lh == Rh && even);
        if (above_low && below_high) break;
    }
    if (p > 9) return 0;
    char dig[16];
    int k = 0;
    for (int i = p - 1; i >= 0; i--) { dig[i] = (char)('0' + D % 10); D /= 10; }
    k = p;
    while (k > 1 && dig[k - 1] == '0') k--;
    char *o = buf;
    if (v < 0) *o++ = '-';
    if (X >= -4 && X < p) {
        if (X >= 0) {
            for (int i = 0; i <= X; i++) *o++ = i < k ? dig[i] : '0';
            if (k > X + 1) {
                *o++ = '.';
                for (int i = X + 1; i < k; i++) *o++ = dig[i];
            }
        } else {
            *o++ = '0';
            *o++ = '.';
            for (int i = 0; i < -X - 1; i++) *o++ = '0';
            for (int i = 0; i < k; i++) *o++ = dig[i];
        }
    } else {
        *o++ = dig[0];
        if (k > 1) {
            *o++ = '.';
            for (int i = 1; i < k; i++) *o++ = dig[i];
        }
        *o++ = 'e';
        *o++ = X < 0 ? '-' : '+';
        int ax = X < 0 ? -X : X;
        if (ax >= 10) *o++ = (char)('0' + ax / 10);
        else *o++ = '0';
        *o++ = (char)('0' + ax % 10);
    }
    *o = 0;
    return 1;
}
#else
int float_text_fast(float v, char *buf)
{
    (void)v;
    (void)buf;
    return 0;
}
#endif
