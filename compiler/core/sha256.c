/* SHA-256 (FIPS 180-4) of a file: the model's fingerprint in the generated
 * files' banner and header (NAME_MODEL_SHA256), what `sha256sum model.onnx`
 * prints. Checked against known digests in tests/unit/test_sha256.c. */
#include <stdio.h>
#include <string.h>

#include "ir.h"

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void block(uint32_t h[8], const unsigned char *b)
{
    uint32_t w[64], v[8];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 | (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROTR(w[i - 15], 7) ^ ROTR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROTR(w[i - 2], 17) ^ ROTR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(v, h, sizeof v);
    for (int i = 0; i < 64; i++) {
        uint32_t S1 = ROTR(v[4], 6) ^ ROTR(v[4], 11) ^ ROTR(v[4], 25);
        uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
        uint32_t t1 = v[7] + S1 + ch + K[i] + w[i];
        uint32_t S0 = ROTR(v[0], 2) ^ ROTR(v[0], 13) ^ ROTR(v[0], 22);
        uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
        uint32_t t2 = S0 + maj;
        memmove(v + 1, v, 7 * sizeof v[0]);
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++) h[i] += v[i];
}

typedef struct {
    uint32_t h[8];
    unsigned char buf[64];
    size_t nbuf;
    uint64_t n;
} Sha256;

static void sha_init(Sha256 *c)
{
    static const uint32_t H0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, H0, sizeof H0);
    c->nbuf = 0;
    c->n = 0;
}

static void sha_add(Sha256 *c, const unsigned char *d, size_t n)
{
    c->n += n;
    while (n) {
        if (!c->nbuf && n >= 64) {
            block(c->h, d);
            d += 64, n -= 64;
            continue;
        }
        size_t take = 64 - c->nbuf < n ? 64 - c->nbuf : n;
        memcpy(c->buf + c->nbuf, d, take);
        c->nbuf += take, d += take, n -= take;
        if (c->nbuf == 64) block(c->h, c->buf), c->nbuf = 0;
    }
}

/* the padding: 0x80, zeros, the length in bits (big-endian) to a block's end */
static void sha_end(Sha256 *c, char hex[65])
{
    unsigned char pad[72] = {0x80};
    uint64_t bits = c->n * 8;
    size_t npad = (c->nbuf < 56 ? 56 : 120) - c->nbuf;
    for (int i = 0; i < 8; i++) pad[npad + i] = (unsigned char)(bits >> (56 - 8 * i));
    sha_add(c, pad, npad + 8);
    for (int i = 0; i < 8; i++) snprintf(hex + 8 * i, 9, "%08x", c->h[i]);
}

void sha256_hex(const unsigned char *data, size_t n, char hex[65])
{
    Sha256 c;
    sha_init(&c);
    sha_add(&c, data, n);
    sha_end(&c, hex);
}

/* A file's digest, read a block at a time; 0 if it cannot be read */
int sha256_file(const char *path, char hex[65])
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    static unsigned char buf[1 << 16];
    Sha256 c;
    sha_init(&c);
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) sha_add(&c, buf, got);
    int ok = !ferror(f);
    fclose(f);
    if (ok) sha_end(&c, hex);
    return ok;
}
