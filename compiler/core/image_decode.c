/* ImageDecoder's decoders (ops/image_decoder.c): an encoded image, known
 * at compile time, decoded into 8-bit RGB pixels (H x W x 3, row-major).
 * Formats by their magic bytes: BMP (1/4/8-bit palettes, 24-bit, 32-bit
 * BI_RGB or 8-bit bit fields; no RLE), PNM (P1-P6 with maxval 255 or
 * bitmaps), PNG (every color type at bit depths up to 8, Adam7, the CRCs
 * and the zlib checksum checked), baseline TIFF (strips, 8-bit gray, RGB,
 * RGBA and palettes, 1-bit bilevel; uncompressed, PackBits, LZW, Deflate,
 * horizontal predictor), baseline JPEG (gray, YCbCr 4:4:4, 4:2:2, 4:2:0;
 * bit for bit what libjpeg-turbo gives PIL, the onnx reference). JPEG 2000
 * and WebP are recognized and refused. Grayscale output is PIL's "L" of
 * the RGB pixels; 16-bit samples are refused.
 * Every read is bounds-checked: a truncated or corrupt stream is refused
 * with fail(), never read past. Memory comes from the pool. */
#include <string.h>

#include "ir.h"

#define IMG_MAX_PIXELS ((int64_t)1 << 24)

typedef struct Img {
    int64_t w, h;
    uint8_t *rgb;
} Img;

static void img_alloc(Img *im, const char *fmt, int64_t w, int64_t h)
{
    if (w <= 0 || h <= 0) fail("the %s image has size %lldx%lld", fmt, (long long)w, (long long)h);
    if (w > IMG_MAX_PIXELS || h > IMG_MAX_PIXELS || w * h > IMG_MAX_PIXELS)
        fail("the %s image is %lldx%lld pixels, more than onnx2c decodes (%lld)", fmt, (long long)w,
             (long long)h, (long long)IMG_MAX_PIXELS);
    im->w = w;
    im->h = h;
    im->rgb = xalloc((size_t)(w * h * 3));
}

static void put(Img *im, int64_t x, int64_t y, int r, int g, int b)
{
    uint8_t *p = im->rgb + (y * im->w + x) * 3;
    p[0] = (uint8_t)r;
    p[1] = (uint8_t)g;
    p[2] = (uint8_t)b;
}

/* ---- bounds-checked reading ------------------------------------------------ */

typedef struct Rd {
    const uint8_t *p;
    size_t n;
    const char *fmt;
    int be;   /* big-endian (TIFF MM) */
} Rd;

static void need(const Rd *r, size_t off, size_t len)
{
    if (off > r->n || len > r->n - off)
        fail("the %s stream is truncated or corrupt (it ends before offset %zu)", r->fmt, off + len);
}

static uint32_t u8at(const Rd *r, size_t off) { need(r, off, 1); return r->p[off]; }

static uint32_t u16at(const Rd *r, size_t off)
{
    need(r, off, 2);
    const uint8_t *p = r->p + off;
    return r->be ? (uint32_t)p[0] << 8 | p[1] : (uint32_t)p[1] << 8 | p[0];
}

static uint32_t u32at(const Rd *r, size_t off)
{
    need(r, off, 4);
    const uint8_t *p = r->p + off;
    return r->be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                 : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* ---- inflate (RFC 1950 zlib around RFC 1951 deflate) -------------------- */

typedef struct Bits {
    const uint8_t *p;
    size_t n, pos;
    uint32_t buf;
    int cnt;
    const char *fmt;
} Bits;

static int bits(Bits *b, int k)
{
    while (b->cnt < k) {
        if (b->pos >= b->n) fail("the %s stream is truncated (compressed data ends early)", b->fmt);
        b->buf |= (uint32_t)b->p[b->pos++] << b->cnt;
        b->cnt += 8;
    }
    int v = (int)(b->buf & ((1u << k) - 1));
    b->buf >>= k;
    b->cnt -= k;
    return v;
}

/* a canonical Huffman code: how many codes of each length, symbols by code */
typedef struct Huff {
    int count[16];
    int sym[288];
} Huff;

static void huff_build(Huff *h, const uint8_t *len, int n, const char *fmt)
{
    int offs[16];
    memset(h->count, 0, sizeof h->count);
    for (int s = 0; s < n; s++) h->count[len[s]]++;
    int left = 1;
    for (int l = 1; l < 16; l++) {
        left <<= 1;
        left -= h->count[l];
        if (left < 0) fail("the %s stream is corrupt (an over-subscribed Huffman code)", fmt);
    }
    offs[1] = 0;
    for (int l = 1; l < 15; l++) offs[l + 1] = offs[l] + h->count[l];
    for (int s = 0; s < n; s++)
        if (len[s]) h->sym[offs[len[s]]++] = s;
}

static int huff_decode(Bits *b, const Huff *h)
{
    int code = 0, first = 0, index = 0;
    for (int l = 1; l < 16; l++) {
        code |= bits(b, 1);
        int c = h->count[l];
        if (code - first < c) return h->sym[index + code - first];
        index += c;
        first = (first + c) << 1;
        code <<= 1;
    }
    fail("the %s stream is corrupt (an invalid Huffman code)", b->fmt);
}

static const int LBASE[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
                              35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const int LEXTRA[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const int DBASE[30] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769,
                              1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const int DEXTRA[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

/* Inflates a zlib stream into exactly `want` bytes (more or fewer: corrupt). */
static uint8_t *zlib_inflate(const uint8_t *src, size_t n, size_t want, const char *fmt)
{
    if (n < 2 || (src[0] & 15) != 8 || (src[0] >> 4) > 7 || ((unsigned)src[0] << 8 | src[1]) % 31 || (src[1] & 32))
        fail("the %s stream's compressed data is not a zlib stream", fmt);
    Bits b = {src, n, 2, 0, 0, fmt};
    uint8_t *out = xalloc(want ? want : 1);
    size_t o = 0;
    Huff lit, dist;
    int last;
    do {
        last = bits(&b, 1);
        int type = bits(&b, 2);
        if (type == 0) {   /* stored */
            b.buf = 0;
            b.cnt = 0;
            if (b.pos + 4 > b.n) fail("the %s stream is truncated (compressed data ends early)", fmt);
            unsigned len = b.p[b.pos] | (unsigned)b.p[b.pos + 1] << 8, nlen = b.p[b.pos + 2] | (unsigned)b.p[b.pos + 3] << 8;
            b.pos += 4;
            if (len != (~nlen & 0xffffu)) fail("the %s stream is corrupt (a stored block's length)", fmt);
            if (len > b.n - b.pos) fail("the %s stream is truncated (compressed data ends early)", fmt);
            if (len > want - o) fail("the %s stream holds more pixel data than its image", fmt);
            memcpy(out + o, b.p + b.pos, len);
            o += len;
            b.pos += len;
            continue;
        }
        if (type == 3) fail("the %s stream is corrupt (a compressed block of type 3)", fmt);
        uint8_t len[320];
        int nlit = 288, ndist = 30;
        if (type == 1) {   /* fixed codes */
            for (int s = 0; s < 288; s++) len[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
            for (int s = 0; s < 30; s++) len[288 + s] = 5;
        } else {           /* dynamic codes */
            static const int ORDER[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
            nlit = bits(&b, 5) + 257;
            ndist = bits(&b, 5) + 1;
            int ncl = bits(&b, 4) + 4;
            if (nlit > 286 || ndist > 30) fail("the %s stream is corrupt (bad code counts)", fmt);
            uint8_t cl[19] = {0};
            for (int k = 0; k < ncl; k++) cl[ORDER[k]] = (uint8_t)bits(&b, 3);
            Huff ch;
            huff_build(&ch, cl, 19, fmt);
            memset(len, 0, sizeof len);
            for (int k = 0; k < nlit + ndist;) {
                int s = huff_decode(&b, &ch), rep = 0, v = 0;
                if (s < 16) {
                    len[k++] = (uint8_t)s;
                    continue;
                }
                if (s == 16) {
                    if (!k) fail("the %s stream is corrupt (a repeat with nothing before)", fmt);
                    v = len[k - 1];
                    rep = 3 + bits(&b, 2);
                } else if (s == 17) {
                    rep = 3 + bits(&b, 3);
                } else {
                    rep = 11 + bits(&b, 7);
                }
                if (k + rep > nlit + ndist) fail("the %s stream is corrupt (too many code lengths)", fmt);
                while (rep--) len[k++] = (uint8_t)v;
            }
            if (!len[256]) fail("the %s stream is corrupt (no end-of-block code)", fmt);
            memmove(len + 288, len + nlit, (size_t)ndist);
        }
        huff_build(&lit, len, nlit, fmt);
        huff_build(&dist, len + 288, ndist, fmt);
        for (;;) {
            int s = huff_decode(&b, &lit);
            if (s < 256) {
                if (o >= want) fail("the %s stream holds more pixel data than its image", fmt);
                out[o++] = (uint8_t)s;
                continue;
            }
            if (s == 256) break;
            s -= 257;
            if (s >= 29) fail("the %s stream is corrupt (a bad length code)", fmt);
            size_t l = (size_t)(LBASE[s] + bits(&b, LEXTRA[s]));
            int ds = huff_decode(&b, &dist);
            if (ds >= 30) fail("the %s stream is corrupt (a bad distance code)", fmt);
            size_t d = (size_t)(DBASE[ds] + bits(&b, DEXTRA[ds]));
            if (d > o) fail("the %s stream is corrupt (a distance before the start)", fmt);
            if (l > want - o) fail("the %s stream holds more pixel data than its image", fmt);
            for (size_t k = 0; k < l; k++, o++) out[o] = out[o - d];
        }
    } while (!last);
    if (o != want)
        fail("the %s stream is truncated or corrupt (%zu bytes of pixel data, the image needs %zu)", fmt, o, want);
    /* Adler-32 after the deflate data, on a byte boundary */
    size_t at = b.pos;
    if (at + 4 > n) fail("the %s stream is truncated (the zlib checksum is missing)", fmt);
    uint32_t s1 = 1, s2 = 0;
    for (size_t k = 0; k < want; k++) {
        s1 = (s1 + out[k]) % 65521;
        s2 = (s2 + s1) % 65521;
    }
    uint32_t want_sum = (uint32_t)src[at] << 24 | (uint32_t)src[at + 1] << 16 | (uint32_t)src[at + 2] << 8 | src[at + 3];
    if ((s2 << 16 | s1) != want_sum) fail("the %s stream is corrupt (zlib checksum mismatch)", fmt);
    return out;
}

/* ---- BMP --------------------------------------------------------------------- */

static int mask_shift(uint32_t m)
{
    int s = 0;
    if (!m) return -1;
    while (!(m & 1)) { m >>= 1; s++; }
    return m == 0xff ? s : -2;   /* only 8-bit fields */
}

static void decode_bmp(Rd *r, Img *im)
{
    uint32_t off = u32at(r, 10), hsize = u32at(r, 14);
    int64_t w, h;
    uint32_t bpp, comp = 0, nclr = 0;
    int pal_entry = 4;
    if (hsize == 12) {
        w = u16at(r, 18);
        h = (int16_t)u16at(r, 20);
        bpp = u16at(r, 24);
        pal_entry = 3;
    } else if (hsize >= 40 && hsize <= 124) {
        w = (int32_t)u32at(r, 18);
        h = (int32_t)u32at(r, 22);
        if (u16at(r, 26) != 1) fail("the BMP header is corrupt (planes is not 1)");
        bpp = u16at(r, 28);
        comp = u32at(r, 30);
        nclr = u32at(r, 46);
    } else {
        fail("BMP header of %u bytes is not supported (12, 40 to 124)", hsize);
    }
    int top_down = h < 0;
    if (top_down) h = -h;
    uint32_t masks[3] = {0xff0000, 0xff00, 0xff};
    if (comp == 3 || comp == 6) {
        if (bpp != 32) fail("BMP with bit fields at %u bits a pixel is not supported (32 only)", bpp);
        size_t mo = hsize >= 52 ? 54 : 14 + hsize;   /* in the header, or after a 40-byte one */
        for (int k = 0; k < 3; k++) masks[k] = u32at(r, mo + 4 * (size_t)k);
    } else if (comp == 1 || comp == 2) {
        fail("run-length compressed BMP is not supported");
    } else if (comp != 0) {
        fail("BMP compression %u is not supported (uncompressed and bit fields only)", comp);
    }
    if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 24 && bpp != 32)
        fail("BMP at %u bits a pixel is not supported (1, 4, 8, 24, 32)", bpp);
    int shift[3];
    for (int k = 0; k < 3; k++) {
        shift[k] = mask_shift(masks[k]);
        if (shift[k] < 0) fail("BMP bit field 0x%x is not supported (8-bit fields only)", masks[k]);
    }
    uint8_t pal[256][3];
    memset(pal, 0, sizeof pal);
    int npal = 0;
    if (bpp <= 8) {
        npal = nclr ? (int)nclr : 1 << bpp;
        if (npal > 1 << bpp) fail("the BMP palette has %d colors for %u-bit pixels", npal, bpp);
        size_t po = 14 + hsize;
        for (int k = 0; k < npal; k++) {
            size_t e = po + (size_t)k * (size_t)pal_entry;
            pal[k][0] = (uint8_t)u8at(r, e + 2);
            pal[k][1] = (uint8_t)u8at(r, e + 1);
            pal[k][2] = (uint8_t)u8at(r, e);
        }
    }
    img_alloc(im, "BMP", w, h);
    size_t stride = ((size_t)w * bpp + 31) / 32 * 4;
    need(r, off, stride * (size_t)h);
    for (int64_t y = 0; y < h; y++) {
        const uint8_t *row = r->p + off + stride * (size_t)(top_down ? y : h - 1 - y);
        for (int64_t x = 0; x < w; x++) {
            if (bpp <= 8) {
                int per = 8 / (int)bpp, v = row[x / per] >> ((per - 1 - x % per) * (int)bpp) & ((1 << bpp) - 1);
                if (v >= npal) fail("the BMP has a color index %d past its palette of %d", v, npal);
                put(im, x, y, pal[v][0], pal[v][1], pal[v][2]);
            } else if (bpp == 24) {
                const uint8_t *p = row + 3 * x;
                put(im, x, y, p[2], p[1], p[0]);
            } else {
                const uint8_t *p = row + 4 * x;
                uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
                put(im, x, y, (int)(v >> shift[0] & 255), (int)(v >> shift[1] & 255), (int)(v >> shift[2] & 255));
            }
        }
    }
}

/* ---- PNM --------------------------------------------------------------------- */

static void pnm_space(const Rd *r, size_t *i)
{
    for (;;) {
        if (*i >= r->n) return;
        uint8_t c = r->p[*i];
        if (c == '#') {
            while (*i < r->n && r->p[*i] != '\n' && r->p[*i] != '\r') (*i)++;
        } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
            (*i)++;
        } else {
            return;
        }
    }
}

static int64_t pnm_int(const Rd *r, size_t *i)
{
    pnm_space(r, i);
    if (*i >= r->n) fail("the PNM stream is truncated");
    if (r->p[*i] < '0' || r->p[*i] > '9') fail("the PNM stream is corrupt (a number expected)");
    int64_t v = 0;
    while (*i < r->n && r->p[*i] >= '0' && r->p[*i] <= '9') {
        v = v * 10 + (r->p[*i] - '0');
        if (v > IMG_MAX_PIXELS) fail("the PNM stream has a number too large");
        (*i)++;
    }
    return v;
}

static void decode_pnm(Rd *r, Img *im)
{
    int kind = r->p[1] - '0';
    size_t i = 2;
    int64_t w = pnm_int(r, &i), h = pnm_int(r, &i), maxval = 1;
    if (kind != 1 && kind != 4) {
        maxval = pnm_int(r, &i);
        if (maxval != 255) fail("PNM with maxval %lld is not supported (255 only)", (long long)maxval);
    }
    img_alloc(im, "PNM", w, h);
    int ch = kind == 3 || kind == 6 ? 3 : 1;
    if (kind >= 4) {   /* raw: one whitespace byte, then the samples */
        if (i >= r->n) fail("the PNM stream is truncated");
        i++;
        size_t stride = kind == 4 ? ((size_t)w + 7) / 8 : (size_t)w * (size_t)ch;
        need(r, i, stride * (size_t)h);
        for (int64_t y = 0; y < h; y++) {
            const uint8_t *row = r->p + i + stride * (size_t)y;
            for (int64_t x = 0; x < w; x++) {
                if (kind == 4) {
                    int v = row[x / 8] >> (7 - x % 8) & 1 ? 0 : 255;   /* 1 is black */
                    put(im, x, y, v, v, v);
                } else if (ch == 1) {
                    put(im, x, y, row[x], row[x], row[x]);
                } else {
                    put(im, x, y, row[3 * x], row[3 * x + 1], row[3 * x + 2]);
                }
            }
        }
        return;
    }
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
            int v[3];
            for (int c = 0; c < ch; c++) {
                if (kind == 1) {   /* plain bitmap: digits need no separators */
                    pnm_space(r, &i);
                    if (i >= r->n) fail("the PNM stream is truncated");
                    if (r->p[i] != '0' && r->p[i] != '1') fail("the PNM stream is corrupt (a bit expected)");
                    v[c] = r->p[i++] == '1' ? 0 : 255;
                    continue;
                }
                int64_t s = pnm_int(r, &i);
                if (s > maxval) fail("the PNM stream has a sample %lld above maxval", (long long)s);
                v[c] = (int)s;
            }
            if (ch == 1) v[1] = v[2] = v[0];
            put(im, x, y, v[0], v[1], v[2]);
        }
}

/* ---- PNG --------------------------------------------------------------------- */

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    static uint32_t table[256];
    if (!table[1])
        for (uint32_t k = 0; k < 256; k++) {
            uint32_t c = k;
            for (int j = 0; j < 8; j++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[k] = c;
        }
    uint32_t c = 0xffffffffu;
    for (size_t k = 0; k < n; k++) c = table[(c ^ p[k]) & 255] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

/* a chunk type for a message: its 4 letters, or hex */
static const char *chunk_name(const uint8_t *t)
{
    for (int k = 0; k < 4; k++)
        if (!((t[k] >= 'a' && t[k] <= 'z') || (t[k] >= 'A' && t[k] <= 'Z'))) return xfmt("0x%02x%02x%02x%02x", t[0], t[1], t[2], t[3]);
    return xfmt("%.4s", (const char *)t);
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = p > a ? p - a : a - p, pb = p > b ? p - b : b - p, pc = p > c ? p - c : c - p;
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

static void decode_png(Rd *r, Img *im)
{
    r->be = 1;
    size_t at = 8, idat_len = 0, idat_cap = 0;
    int64_t w = 0, h = 0;
    int depth = 0, ctype = -1, interlace = 0, npal = 0, seen_idat = 0, idat_done = 0;
    uint8_t pal[256][3];
    uint8_t *idat = NULL;
    memset(pal, 0, sizeof pal);
    while (at < r->n) {
        uint32_t len = u32at(r, at);
        need(r, at + 4, (size_t)len + 8);
        const uint8_t *type = r->p + at + 4, *data = type + 4;
        if (crc32_of(type, (size_t)len + 4) != u32at(r, at + 8 + len))
            fail("the PNG stream is corrupt (CRC mismatch in chunk '%s')", chunk_name(type));
        int first = at == 8;
        at += (size_t)len + 12;
        if (first && memcmp(type, "IHDR", 4)) fail("the PNG stream is corrupt (no IHDR first)");
        if (!memcmp(type, "IHDR", 4)) {
            if (!first || len != 13) fail("the PNG stream is corrupt (a bad IHDR)");
            Rd d = {data, len, "PNG", 1};
            w = u32at(&d, 0);
            h = u32at(&d, 4);
            depth = data[8];
            ctype = data[9];
            interlace = data[12];
            if (data[10] || data[11] || interlace > 1) fail("the PNG stream is corrupt (bad IHDR methods)");
            int ok = (ctype == 0 && (depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16)) ||
                     (ctype == 3 && (depth == 1 || depth == 2 || depth == 4 || depth == 8)) ||
                     ((ctype == 2 || ctype == 4 || ctype == 6) && (depth == 8 || depth == 16));
            if (!ok) fail("the PNG stream is corrupt (color type %d with bit depth %d)", ctype, depth);
            if (depth == 16) fail("PNG with 16-bit samples is not supported (8 bits or fewer)");
        } else if (!memcmp(type, "PLTE", 4)) {
            if (len % 3 || len > 768 || !len) fail("the PNG stream is corrupt (a bad PLTE)");
            npal = (int)(len / 3);
            for (int k = 0; k < npal; k++) {
                pal[k][0] = data[3 * k];
                pal[k][1] = data[3 * k + 1];
                pal[k][2] = data[3 * k + 2];
            }
        } else if (!memcmp(type, "IDAT", 4)) {
            if (idat_done) fail("the PNG stream is corrupt (IDAT chunks not consecutive)");
            seen_idat = 1;
            if (idat_len + len > idat_cap) {   /* doubling: many small IDATs stay linear */
                idat_cap = 2 * (idat_len + len);
                uint8_t *m = xalloc(idat_cap);
                if (idat_len) memcpy(m, idat, idat_len);
                idat = m;
            }
            if (len) memcpy(idat + idat_len, data, len);
            idat_len += len;
        } else if (!memcmp(type, "IEND", 4)) {
            break;
        } else if (!(type[0] & 32)) {
            fail("the PNG stream has an unknown critical chunk '%s'", chunk_name(type));
        }
        if (seen_idat && memcmp(type, "IDAT", 4)) idat_done = 1;
    }
    if (!seen_idat) fail("the PNG stream is truncated or corrupt (no image data)");
    if (ctype == 3 && !npal) fail("the PNG stream is corrupt (a palette image without PLTE)");
    img_alloc(im, "PNG", w, h);
    int ch = ctype == 2 ? 3 : ctype == 4 ? 2 : ctype == 6 ? 4 : 1;
    int bpp = (ch * depth + 7) / 8;   /* bytes a pixel, for the filters */
    static const int X0[7] = {0, 4, 0, 2, 0, 1, 0}, Y0[7] = {0, 0, 4, 0, 2, 0, 1};
    static const int XS[7] = {8, 8, 4, 4, 2, 2, 1}, YS[7] = {8, 8, 8, 4, 4, 2, 2};
    int npass = interlace ? 7 : 1;
    int64_t pw[7], ph[7];
    size_t total = 0;
    for (int s = 0; s < npass; s++) {
        int xs = interlace ? XS[s] : 1, ys = interlace ? YS[s] : 1, x0 = interlace ? X0[s] : 0, y0 = interlace ? Y0[s] : 0;
        pw[s] = w > x0 ? (w - x0 + xs - 1) / xs : 0;
        ph[s] = h > y0 ? (h - y0 + ys - 1) / ys : 0;
        if (pw[s] && ph[s]) total += (size_t)ph[s] * (1 + ((size_t)pw[s] * (size_t)(ch * depth) + 7) / 8);
    }
    uint8_t *raw = zlib_inflate(idat, idat_len, total, "PNG");
    size_t pos = 0;
    for (int s = 0; s < npass; s++) {
        if (!pw[s] || !ph[s]) continue;
        size_t rb = ((size_t)pw[s] * (size_t)(ch * depth) + 7) / 8;
        uint8_t *prev = NULL;
        for (int64_t y = 0; y < ph[s]; y++) {
            int f = raw[pos];
            uint8_t *row = raw + pos + 1;
            if (f > 4) fail("the PNG stream is corrupt (filter type %d)", f);
            for (size_t k = 0; k < rb; k++) {
                int a = k >= (size_t)bpp ? row[k - (size_t)bpp] : 0, b = prev ? prev[k] : 0;
                int c = prev && k >= (size_t)bpp ? prev[k - (size_t)bpp] : 0;
                int v = f == 0 ? 0 : f == 1 ? a : f == 2 ? b : f == 3 ? (a + b) / 2 : paeth(a, b, c);
                row[k] = (uint8_t)(row[k] + v);
            }
            for (int64_t x = 0; x < pw[s]; x++) {
                int64_t ox = interlace ? X0[s] + x * XS[s] : x, oy = interlace ? Y0[s] + y * YS[s] : y;
                if (depth < 8) {
                    int per = 8 / depth, v = row[x / per] >> ((per - 1 - x % per) * depth) & ((1 << depth) - 1);
                    if (ctype == 3) {
                        if (v >= npal) fail("the PNG has a color index %d past its palette of %d", v, npal);
                        put(im, ox, oy, pal[v][0], pal[v][1], pal[v][2]);
                    } else {
                        v = v * (255 / ((1 << depth) - 1));
                        put(im, ox, oy, v, v, v);
                    }
                } else if (ctype == 3) {
                    int v = row[x];
                    if (v >= npal) fail("the PNG has a color index %d past its palette of %d", v, npal);
                    put(im, ox, oy, pal[v][0], pal[v][1], pal[v][2]);
                } else if (ch <= 2) {
                    int v = row[x * ch];
                    put(im, ox, oy, v, v, v);
                } else {
                    const uint8_t *p = row + x * ch;
                    put(im, ox, oy, p[0], p[1], p[2]);
                }
            }
            prev = row;
            pos += rb + 1;
        }
    }
}

/* ---- TIFF -------------------------------------------------------------------- */

typedef struct TEntry {
    uint32_t type, count, voff;   /* voff: where the values are */
    int present;
} TEntry;

static size_t ttype_size(uint32_t t)
{
    switch (t) {
    case 1: case 2: case 6: case 7: return 1;
    case 3: case 8: return 2;
    case 4: case 9: case 11: return 4;
    case 5: case 10: case 12: return 8;
    default: return 0;
    }
}

static uint32_t tval(const Rd *r, const TEntry *e, uint32_t i)
{
    if (i >= e->count) fail("the TIFF stream is corrupt (a tag has too few values)");
    switch (e->type) {
    case 1: return u8at(r, e->voff + i);
    case 3: return u16at(r, e->voff + 2 * (size_t)i);
    case 4: return u32at(r, e->voff + 4 * (size_t)i);
    default: fail("the TIFF stream has a tag of type %u where an integer is expected", e->type);
    }
}

static void packbits(const uint8_t *s, size_t n, uint8_t *d, size_t want)
{
    size_t i = 0, o = 0;
    while (o < want) {
        if (i >= n) fail("the TIFF stream is truncated (a PackBits strip ends early)");
        int c = (int8_t)s[i++];
        if (c >= 0) {
            size_t k = (size_t)c + 1;
            if (k > n - i || k > want - o) fail("the TIFF stream is corrupt (a PackBits run)");
            memcpy(d + o, s + i, k);
            i += k;
            o += k;
        } else if (c != -128) {
            size_t k = (size_t)(1 - c);
            if (i >= n || k > want - o) fail("the TIFF stream is corrupt (a PackBits run)");
            memset(d + o, s[i++], k);
            o += k;
        }
    }
}

static void tiff_lzw(const uint8_t *s, size_t n, uint8_t *d, size_t want)
{
    if (n >= 2 && s[0] == 0 && (s[1] & 1))
        fail("TIFF with old-style (LSB-first) LZW is not supported");
    /* a code's string: its prefix code and last byte; lengths bound the copy */
    static uint16_t prefix[4096];
    static uint8_t last[4096], first[4096];
    static uint16_t slen[4096];
    uint8_t stack[4096];
    size_t bitpos = 0, o = 0;
    int width = 9, next = 258, old = -1;
    for (int k = 0; k < 256; k++) { prefix[k] = 0; last[k] = first[k] = (uint8_t)k; slen[k] = 1; }
    while (o < want) {
        if (bitpos + (size_t)width > n * 8) fail("the TIFF stream is truncated (an LZW strip ends early)");
        int code = 0;
        for (int k = 0; k < width; k++, bitpos++) code = code << 1 | (s[bitpos / 8] >> (7 - bitpos % 8) & 1);
        if (code == 257) break;
        if (code == 256) { width = 9; next = 258; old = -1; continue; }
        int cur;
        if (code < next && (code < 256 || code >= 258)) cur = code;
        else if (code == next && old >= 0) cur = -1;   /* the KwKwK case */
        else fail("the TIFF stream is corrupt (an LZW code out of range)");
        if (old >= 0 && next < 4096) {
            prefix[next] = (uint16_t)old;
            last[next] = cur >= 0 ? first[cur] : first[old];
            first[next] = first[old];
            slen[next] = (uint16_t)(slen[old] + 1);
            next++;
        }
        int c = cur >= 0 ? cur : next - 1;
        if (old < 0 && c >= 258) fail("the TIFF stream is corrupt (an LZW code out of range)");
        int l = slen[c];
        if ((size_t)l > want - o) fail("the TIFF stream holds more pixel data than its strip");
        for (int k = l - 1; k >= 0; k--, c = prefix[c]) stack[k] = last[c];
        memcpy(d + o, stack, (size_t)l);
        o += (size_t)l;
        old = cur >= 0 ? cur : next - 1;
        if (next + 1 >= (1 << width) && width < 12) width++;
    }
    if (o < want) fail("the TIFF stream is truncated (an LZW strip ends early)");
}

static void decode_tiff(Rd *r, Img *im)
{
    r->be = r->p[0] == 'M';
    uint32_t ifd = u32at(r, 4), nent = u16at(r, ifd);
    TEntry tag[16];   /* the tags read, by TAGS index */
    static const uint32_t TAGS[16] = {256, 257, 258, 259, 262, 273, 277, 278, 279, 284, 317, 320, 322, 338, 0, 0};
    memset(tag, 0, sizeof tag);
    for (uint32_t k = 0; k < nent; k++) {
        size_t e = ifd + 2 + 12 * (size_t)k;
        uint32_t id = u16at(r, e), type = u16at(r, e + 2), count = u32at(r, e + 4);
        for (int t = 0; t < 14; t++) {
            if (TAGS[t] != id) continue;
            size_t sz = ttype_size(type);
            if (!sz || count == 0) fail("the TIFF stream is corrupt (tag %u)", id);
            tag[t].type = type;
            tag[t].count = count;
            tag[t].voff = (uint64_t)sz * count <= 4 ? (uint32_t)(e + 8) : u32at(r, e + 8);
            if ((uint64_t)sz * count > r->n) fail("the TIFF stream is truncated or corrupt (tag %u)", id);
            need(r, tag[t].voff, sz * count);
            tag[t].present = 1;
        }
    }
    enum { W, H, BPS, COMP, PHOTO, SOFF, SPP, RPS, SBC, PLANAR, PRED, CMAP, TILEW, EXTRA };
    if (tag[TILEW].present) fail("tiled TIFF is not supported (strips only)");
    if (!tag[W].present || !tag[H].present || !tag[SOFF].present || !tag[PHOTO].present)
        fail("the TIFF stream is corrupt (width, height, strip offsets or photometric missing)");
    int64_t w = tval(r, &tag[W], 0), h = tval(r, &tag[H], 0);
    uint32_t spp = tag[SPP].present ? tval(r, &tag[SPP], 0) : 1, comp = tag[COMP].present ? tval(r, &tag[COMP], 0) : 1;
    uint32_t photo = tval(r, &tag[PHOTO], 0), pred = tag[PRED].present ? tval(r, &tag[PRED], 0) : 1;
    uint32_t bps = tag[BPS].present ? tval(r, &tag[BPS], 0) : 1;
    for (uint32_t k = 1; tag[BPS].present && k < spp && k < tag[BPS].count; k++)
        if (tval(r, &tag[BPS], k) != bps) fail("TIFF with different sample sizes is not supported");
    if (tag[PLANAR].present && tval(r, &tag[PLANAR], 0) != 1) fail("planar TIFF is not supported (interleaved only)");
    int ok = ((photo == 0 || photo == 1) && ((bps == 8 && (spp == 1 || spp == 2)) || (bps == 1 && spp == 1))) ||
             (photo == 2 && bps == 8 && spp >= 3 && spp <= 4) || (photo == 3 && bps == 8 && spp == 1);
    if (!ok)
        fail("TIFF with photometric %u, %u samples of %u bits is not supported (8-bit gray, RGB, RGBA "
             "and palettes, 1-bit bilevel)", photo, spp, bps);
    if (comp != 1 && comp != 5 && comp != 8 && comp != 32946 && comp != 32773)
        fail("TIFF compression %u is not supported (none, LZW, Deflate, PackBits)", comp);
    if (pred != 1 && !(pred == 2 && bps == 8)) fail("TIFF predictor %u is not supported", pred);
    uint8_t pal[256][3];
    if (photo == 3) {
        if (!tag[CMAP].present || tag[CMAP].count != 768 || tag[CMAP].type != 3)
            fail("the TIFF palette (ColorMap) is missing or not 3 x 256 16-bit values");
        for (int k = 0; k < 256; k++)
            for (int c = 0; c < 3; c++) pal[k][c] = (uint8_t)(tval(r, &tag[CMAP], (uint32_t)(c * 256 + k)) >> 8);
    }
    img_alloc(im, "TIFF", w, h);
    int64_t rps = tag[RPS].present ? tval(r, &tag[RPS], 0) : h;
    if (rps <= 0 || rps > h) rps = h;
    int64_t nstrips = (h + rps - 1) / rps;
    if (tag[SOFF].count < nstrips) fail("the TIFF stream is corrupt (too few strips)");
    if (!tag[SBC].present || tag[SBC].count < nstrips) fail("the TIFF stream is corrupt (strip byte counts missing)");
    size_t rowbytes = ((size_t)w * spp * bps + 7) / 8;
    uint8_t *pix = xalloc(rowbytes * (size_t)h);
    for (int64_t s = 0; s < nstrips; s++) {
        int64_t rows = h - s * rps < rps ? h - s * rps : rps;
        size_t want = rowbytes * (size_t)rows, off = tval(r, &tag[SOFF], (uint32_t)s), cnt = tval(r, &tag[SBC], (uint32_t)s);
        need(r, off, cnt);
        uint8_t *d = pix + rowbytes * (size_t)(s * rps);
        const uint8_t *src = r->p + off;
        if (comp == 1) {
            if (cnt < want) fail("the TIFF stream is truncated (a strip has %zu of %zu bytes)", cnt, want);
            memcpy(d, src, want);
        } else if (comp == 32773) {
            packbits(src, cnt, d, want);
        } else if (comp == 5) {
            tiff_lzw(src, cnt, d, want);
        } else {
            memcpy(d, zlib_inflate(src, cnt, want, "TIFF"), want);
        }
        if (pred == 2)
            for (int64_t y = 0; y < rows; y++)
                for (size_t k = spp; k < (size_t)w * spp; k++) d[rowbytes * (size_t)y + k] += d[rowbytes * (size_t)y + k - spp];
    }
    for (int64_t y = 0; y < h; y++) {
        const uint8_t *row = pix + rowbytes * (size_t)y;
        for (int64_t x = 0; x < w; x++) {
            if (bps == 1) {
                int bit = row[x / 8] >> (7 - x % 8) & 1, v = (bit ^ (photo == 0)) ? 255 : 0;
                put(im, x, y, v, v, v);
            } else if (photo == 3) {
                const uint8_t *c = pal[row[x]];
                put(im, x, y, c[0], c[1], c[2]);
            } else if (photo == 2) {
                const uint8_t *p = row + (size_t)x * spp;
                put(im, x, y, p[0], p[1], p[2]);
            } else {
                int v = row[(size_t)x * spp];
                if (photo == 0) v = 255 - v;
                put(im, x, y, v, v, v);
            }
        }
    }
}

/* ---- JPEG (baseline, as libjpeg-turbo decodes it for PIL) ------------------
 * Sequential Huffman (SOF0/SOF1) 8-bit streams with every component in one
 * scan, or one component: the accurate integer IDCT (13-bit constants, 2
 * extra bits between the passes, the result wrapped into the sample range
 * as the library's range-limit table does), "fancy" triangle-filter
 * upsampling of 2x1 and 2x2 subsampled chroma (the ImageDecoder spec's
 * formulas), and YCbCr -> RGB in 16-bit fixed point, rounded. Progressive,
 * arithmetic-coded, 12-bit, CMYK and Adobe RGB streams are refused. */

typedef struct JHuff {
    int count[17];          /* codes of each length 1..16 */
    uint8_t val[256];
    int nval;
    int present;
} JHuff;

typedef struct JBits {
    const Rd *r;
    size_t pos;             /* next byte of entropy-coded data */
    uint32_t buf;
    int cnt;
} JBits;

static int jbit(JBits *b)
{
    if (!b->cnt) {
        if (b->pos >= b->r->n) fail("the JPEG stream is truncated (entropy-coded data ends early)");
        uint8_t c = b->r->p[b->pos];
        if (c == 0xff) {
            if (b->pos + 1 >= b->r->n) fail("the JPEG stream is truncated (entropy-coded data ends early)");
            if (b->r->p[b->pos + 1] != 0) fail("the JPEG stream is truncated or corrupt (a marker inside the image data)");
            b->pos += 2;
        } else {
            b->pos++;
        }
        b->buf = c;
        b->cnt = 8;
    }
    b->cnt--;
    return (int)(b->buf >> b->cnt & 1);
}

static int jbits(JBits *b, int n)
{
    int v = 0;
    while (n--) v = v << 1 | jbit(b);
    return v;
}

static int jdecode(JBits *b, const JHuff *h)
{
    int code = 0, first = 0, index = 0;
    for (int l = 1; l <= 16; l++) {
        code = code << 1 | jbit(b);
        if (code - first < h->count[l]) return h->val[index + code - first];
        index += h->count[l];
        first = (first + h->count[l]) << 1;
    }
    fail("the JPEG stream is corrupt (an invalid Huffman code)");
}

static int jextend(int v, int s) { return s && v < 1 << (s - 1) ? v - (1 << s) + 1 : v; }

/* floor(v / 2^n), whatever the platform's >> of negative numbers */
static int64_t jshift(int64_t v, int n) { return v >= 0 ? v >> n : -((-v + ((int64_t)1 << n) - 1) >> n); }

static uint8_t jrange(int64_t v)   /* the sample for IDCT output v: v + 128 clamped, v taken modulo 1024 */
{
    int i = (int)(((v % 1024) + 1024) % 1024);
    return (uint8_t)(i < 128 ? i + 128 : i < 512 ? 255 : i < 896 ? 0 : i - 896);
}

enum { JC = 13, JP = 2 };

/* one 8-point pass of the accurate integer IDCT (constants: cosines in
 * 13-bit fixed point), before its final descaling */
static void jidct8(const int64_t *in, int64_t *o)
{
    int64_t z1 = (in[2] + in[6]) * 4433, t2 = z1 + in[6] * -15137, t3 = z1 + in[2] * 6270;
    int64_t t0 = (in[0] + in[4]) * (1 << JC), t1 = (in[0] - in[4]) * (1 << JC);
    int64_t t10 = t0 + t3, t13 = t0 - t3, t11 = t1 + t2, t12 = t1 - t2;
    int64_t a0 = in[7], a1 = in[5], a2 = in[3], a3 = in[1];
    int64_t z5 = (a0 + a2 + a1 + a3) * 9633;
    int64_t y1 = (a0 + a3) * -7373, y2 = (a1 + a2) * -20995;
    int64_t y3 = (a0 + a2) * -16069 + z5, y4 = (a1 + a3) * -3196 + z5;
    a0 = a0 * 2446 + y1 + y3;
    a1 = a1 * 16819 + y2 + y4;
    a2 = a2 * 25172 + y2 + y3;
    a3 = a3 * 12299 + y1 + y4;
    o[0] = t10 + a3;
    o[7] = t10 - a3;
    o[1] = t11 + a2;
    o[6] = t11 - a2;
    o[2] = t12 + a1;
    o[5] = t12 - a1;
    o[3] = t13 + a0;
    o[4] = t13 - a0;
}

static void jidct(const int16_t *coef, const uint16_t *q, uint8_t *out, size_t stride)
{
    int64_t ws[64], in[8], o[8];
    for (int c = 0; c < 8; c++) {   /* columns, keeping JP extra bits */
        for (int k = 0; k < 8; k++) in[k] = (int64_t)coef[8 * k + c] * q[8 * k + c];
        jidct8(in, o);
        for (int k = 0; k < 8; k++) ws[8 * k + c] = jshift(o[k] + ((int64_t)1 << (JC - JP - 1)), JC - JP);
    }
    for (int rw = 0; rw < 8; rw++) {   /* rows, to samples */
        jidct8(ws + 8 * rw, o);
        for (int k = 0; k < 8; k++)
            out[stride * (size_t)rw + (size_t)k] = jrange(jshift(o[k] + ((int64_t)1 << (JC + JP + 2)), JC + JP + 3));
    }
}

typedef struct JComp {
    int id, h, v, tq, td, ta;
    int64_t dc;             /* the DC prediction (wide: a corrupt stream's sums cannot overflow) */
    int64_t bw, bh;         /* blocks across and down in its buffer */
    int64_t dw, dh;         /* its samples in the image (downsampled size) */
    uint8_t *pix;           /* bw*8 x bh*8 samples */
} JComp;

static const uint8_t ZIGZAG[64] = {0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48,
                                   41, 34, 27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23,
                                   30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63};

static void jblock(JBits *b, JComp *c, const JHuff *dc, const JHuff *ac, const uint16_t *q, int64_t bx, int64_t by)
{
    int16_t coef[64];
    memset(coef, 0, sizeof coef);
    int t = jdecode(b, dc);
    if (t > 15) fail("the JPEG stream is corrupt (a DC difference of %d bits)", t);
    c->dc += jextend(jbits(b, t), t);
    coef[0] = (int16_t)c->dc;
    for (int k = 1; k < 64;) {
        int rs = jdecode(b, ac), run = rs >> 4, s = rs & 15;
        if (!s) {
            if (run != 15) break;
            k += 16;
            continue;
        }
        k += run;
        if (k > 63) fail("the JPEG stream is corrupt (a coefficient past the block)");
        coef[ZIGZAG[k++]] = (int16_t)jextend(jbits(b, s), s);
    }
    if (bx < c->bw && by < c->bh) jidct(coef, q, c->pix + (size_t)(by * 8) * (size_t)(c->bw * 8) + (size_t)bx * 8, (size_t)(c->bw * 8));
}

/* component c upsampled to the image's grid: fw x fv times its size */
static uint8_t *jupsample(const JComp *c, int fh, int fv, int64_t *uw)
{
    int64_t W = c->dw * fh, H = c->dh * fv, S = c->bw * 8;
    uint8_t *u = xalloc((size_t)(W * H));
    *uw = W;
    for (int64_t y = 0; y < c->dh; y++) {
        const uint8_t *row = c->pix + (size_t)(y * S);
        for (int e = 0; e < fv; e++) {
            uint8_t *o = u + (size_t)((y * fv + e) * W);
            if (fh == 1) {
                memcpy(o, row, (size_t)c->dw);
            } else if (c->dw <= 2) {   /* the library's plain replication for narrow components */
                for (int64_t x = 0; x < c->dw; x++) o[2 * x] = o[2 * x + 1] = row[x];
            } else if (fv == 1) {      /* 2x1: 3/4 of the nearer sample, 1/4 of the farther, rounding alternated */
                for (int64_t x = 0; x < c->dw; x++) {
                    int v3 = row[x] * 3;
                    o[2 * x] = (uint8_t)(x == 0 ? row[0] : (v3 + row[x - 1] + 1) >> 2);
                    o[2 * x + 1] = (uint8_t)(x == c->dw - 1 ? row[x] : (v3 + row[x + 1] + 2) >> 2);
                }
            } else {                   /* 2x2: the same vertically (rows clamped), then across */
                const uint8_t *nb = c->pix + (size_t)((e ? (y + 1 < c->dh ? y + 1 : y) : (y > 0 ? y - 1 : 0)) * S);
                int64_t x;
                for (x = 0; x < c->dw; x++) {
                    int cur = row[x] * 3 + nb[x];
                    int prv = x > 0 ? row[x - 1] * 3 + nb[x - 1] : 0, nxt = x + 1 < c->dw ? row[x + 1] * 3 + nb[x + 1] : 0;
                    o[2 * x] = (uint8_t)(x == 0 ? (cur * 4 + 8) >> 4 : (cur * 3 + prv + 8) >> 4);
                    o[2 * x + 1] = (uint8_t)(x == c->dw - 1 ? (cur * 4 + 7) >> 4 : (cur * 3 + nxt + 7) >> 4);
                }
            }
        }
    }
    return u;
}

static int jclamp(int64_t v) { return v < 0 ? 0 : v > 255 ? 255 : (int)v; }

static void decode_jpeg(Rd *r, Img *im)
{
    r->be = 1;
    uint16_t qt[4][64];
    int qset[4] = {0};
    JHuff hdc[4], hac[4];
    memset(hdc, 0, sizeof hdc);
    memset(hac, 0, sizeof hac);
    JComp comp[3];
    int nc = 0, ri = 0, frame = 0, adobe = 0;
    int64_t W = 0, H = 0;
    size_t at = 2, sos = 0, sos_end = 0;
    for (;;) {
        if (u8at(r, at) != 0xff) fail("the JPEG stream is corrupt (a marker expected at offset %zu)", at);
        uint32_t m = u8at(r, at + 1);
        at += 2;
        if (m == 0xff) { at--; continue; }   /* fill bytes */
        if (m == 0xd9) fail("the JPEG stream has no image data");
        if (m >= 0xd0 && m <= 0xd7) continue;
        uint32_t len = u16at(r, at);
        if (len < 2) fail("the JPEG stream is corrupt (a segment of length %u)", len);
        need(r, at, len);
        size_t seg = at + 2, end = at + len;
        at = end;
        if (m == 0xdb) {   /* DQT */
            for (size_t i = seg; i < end;) {
                uint32_t pq = u8at(r, i) >> 4, tq = u8at(r, i) & 15;
                i++;
                if (tq > 3 || pq > 1) fail("the JPEG stream is corrupt (a quantization table %u of precision %u)", tq, pq);
                if (i + 64 * (pq + 1) > end) fail("the JPEG stream is corrupt (a short quantization table)");
                for (int k = 0; k < 64; k++) qt[tq][ZIGZAG[k]] = (uint16_t)(pq ? u16at(r, i + 2 * (size_t)k) : u8at(r, i + (size_t)k));
                i += 64 * (pq + 1);
                qset[tq] = 1;
            }
        } else if (m == 0xc4) {   /* DHT */
            for (size_t i = seg; i < end;) {
                uint32_t tc = u8at(r, i) >> 4, th = u8at(r, i) & 15;
                if (tc > 1 || th > 3) fail("the JPEG stream is corrupt (a Huffman table %u/%u)", tc, th);
                JHuff *hf = tc ? &hac[th] : &hdc[th];
                int total = 0;
                hf->count[0] = 0;
                for (int l = 1; l <= 16; l++) total += hf->count[l] = (int)u8at(r, i + (size_t)l);
                if (total > 256 || i + 17 + (size_t)total > end) fail("the JPEG stream is corrupt (a Huffman table)");
                for (int k = 0; k < total; k++) hf->val[k] = (uint8_t)u8at(r, i + 17 + (size_t)k);
                hf->nval = total;
                hf->present = 1;
                i += 17 + (size_t)total;
            }
        } else if (m == 0xdd) {   /* DRI */
            ri = (int)u16at(r, seg);
        } else if (m == 0xee) {   /* APP14 Adobe: a color transform flag */
            if (len >= 14 && !memcmp(r->p + seg, "Adobe", 5)) adobe = 1;
        } else if (m == 0xc0 || m == 0xc1) {
            if (frame) fail("the JPEG stream is corrupt (two frames)");
            frame = 1;
            if (u8at(r, seg) != 8) fail("JPEG with %u-bit samples is not supported (8 only)", u8at(r, seg));
            H = u16at(r, seg + 1);
            W = u16at(r, seg + 3);
            nc = (int)u8at(r, seg + 5);
            if (nc != 1 && nc != 3) fail("JPEG with %d components is not supported (gray or YCbCr)", nc);
            if (H == 0) fail("JPEG with the height in a DNL marker is not supported");
            for (int k = 0; k < nc; k++) {
                size_t o = seg + 6 + 3 * (size_t)k;
                if (o + 3 > end) fail("the JPEG stream is corrupt (a short frame header)");
                comp[k].id = (int)u8at(r, o);
                comp[k].h = (int)(u8at(r, o + 1) >> 4);
                comp[k].v = (int)(u8at(r, o + 1) & 15);
                comp[k].tq = (int)u8at(r, o + 2);
                if (comp[k].h < 1 || comp[k].h > 4 || comp[k].v < 1 || comp[k].v > 4 || comp[k].tq > 3)
                    fail("the JPEG stream is corrupt (component %d's sampling or table)", k);
            }
        } else if ((m >= 0xc2 && m <= 0xc3) || (m >= 0xc5 && m <= 0xc7) || (m >= 0xc9 && m <= 0xcb) || (m >= 0xcd && m <= 0xcf)) {
            fail("%s JPEG is not supported (baseline sequential only)", m == 0xc2 || m == 0xc6 || m == 0xca || m == 0xce ? "progressive" :
                 m == 0xc3 || m == 0xc7 || m == 0xcb || m == 0xcf ? "lossless" : "arithmetic-coded");
        } else if (m == 0xda) {   /* SOS: the image */
            sos = seg;
            sos_end = end;
            break;
        }
    }
    if (!frame) fail("the JPEG stream is corrupt (no frame header before the scan)");
    if (adobe) fail("JPEG with an Adobe color transform marker is not supported (JFIF YCbCr or gray only)");
    if (nc == 3 && comp[0].id == 'R' && comp[1].id == 'G' && comp[2].id == 'B') fail("RGB JPEG is not supported (YCbCr only)");
    /* the scan */
    int ns = (int)u8at(r, sos);
    if (ns != nc) fail("JPEG with its components in separate scans is not supported (one interleaved scan only)");
    if (sos + 4 + 2 * (size_t)ns > sos_end) fail("the JPEG stream is corrupt (a short scan header)");
    JComp *sc[3];
    for (int k = 0; k < ns; k++) {
        int id = (int)u8at(r, sos + 1 + 2 * (size_t)k), t = (int)u8at(r, sos + 2 + 2 * (size_t)k), j = 0;
        while (j < nc && comp[j].id != id) j++;
        if (j == nc) fail("the JPEG stream is corrupt (the scan names component %d, which the frame lacks)", id);
        sc[k] = &comp[j];
        sc[k]->td = t >> 4;
        sc[k]->ta = t & 15;
        if (sc[k]->td > 3 || sc[k]->ta > 3 || !hdc[sc[k]->td].present || !hac[sc[k]->ta].present)
            fail("the JPEG stream is corrupt (the scan uses a Huffman table it does not define)");
        if (!qset[sc[k]->tq]) fail("the JPEG stream is corrupt (a component uses an undefined quantization table)");
    }
    size_t sp = sos + 1 + 2 * (size_t)ns;
    if (u8at(r, sp) != 0 || u8at(r, sp + 1) != 63 || u8at(r, sp + 2) != 0)
        fail("the JPEG stream is corrupt (a baseline scan with spectral selection or approximation)");
    int hmax = 1, vmax = 1;
    for (int k = 0; k < nc; k++) {
        if (comp[k].h > hmax) hmax = comp[k].h;
        if (comp[k].v > vmax) vmax = comp[k].v;
    }
    img_alloc(im, "JPEG", W, H);
    int64_t mx = (W + 8 * hmax - 1) / (8 * hmax), my = (H + 8 * vmax - 1) / (8 * vmax);
    for (int k = 0; k < nc; k++) {
        JComp *c = &comp[k];
        int fh = hmax / c->h, fv = vmax / c->v;
        if (nc == 3 && (hmax % c->h || vmax % c->v || !((fh == 1 && fv == 1) || (fh == 2 && fv == 1) || (fh == 2 && fv == 2))))
            fail("JPEG with component sampling %dx%d of %dx%d is not supported (4:4:4, 4:2:2 and 4:2:0)", c->h, c->v, hmax, vmax);
        c->dw = (W * c->h + hmax - 1) / hmax;
        c->dh = (H * c->v + vmax - 1) / vmax;
        c->bw = nc == 1 ? (c->dw + 7) / 8 : mx * c->h;
        c->bh = nc == 1 ? (c->dh + 7) / 8 : my * c->v;
        c->pix = xalloc((size_t)(c->bw * c->bh * 64));
        c->dc = 0;
    }
    JBits b = {r, sos_end, 0, 0};
    int64_t total = nc == 1 ? comp[0].bw * comp[0].bh : mx * my;
    for (int64_t m = 0; m < total; m++) {
        if (ri && m > 0 && m % ri == 0) {   /* a restart marker: byte-aligned, predictions reset */
            b.cnt = 0;
            if (u8at(r, b.pos) != 0xff || u8at(r, b.pos + 1) != 0xd0 + (uint32_t)((m / ri - 1) % 8))
                fail("the JPEG stream is corrupt (a restart marker missing)");
            b.pos += 2;
            for (int k = 0; k < nc; k++) comp[k].dc = 0;
        }
        if (nc == 1) {
            JComp *c = sc[0];
            jblock(&b, c, &hdc[c->td], &hac[c->ta], qt[c->tq], m % c->bw, m / c->bw);
            continue;
        }
        for (int k = 0; k < ns; k++) {
            JComp *c = sc[k];
            for (int v = 0; v < c->v; v++)
                for (int h = 0; h < c->h; h++)
                    jblock(&b, c, &hdc[c->td], &hac[c->ta], qt[c->tq], (m % mx) * c->h + h, (m / mx) * c->v + v);
        }
    }
    if (nc == 1) {
        for (int64_t y = 0; y < H; y++)
            for (int64_t x = 0; x < W; x++) {
                int v = comp[0].pix[(size_t)(y * comp[0].bw * 8 + x)];
                put(im, x, y, v, v, v);
            }
        return;
    }
    int64_t uw[3];
    uint8_t *u[3];
    for (int k = 0; k < 3; k++) u[k] = jupsample(&comp[k], hmax / comp[k].h, vmax / comp[k].v, &uw[k]);
    for (int64_t y = 0; y < H; y++)
        for (int64_t x = 0; x < W; x++) {
            int64_t yy = u[0][y * uw[0] + x], cb = u[1][y * uw[1] + x] - 128, cr = u[2][y * uw[2] + x] - 128;
            /* 1.402, 0.34414, 0.71414, 1.772 in 16-bit fixed point, rounded once */
            int rr = jclamp(yy + jshift(91881 * cr + 32768, 16));
            int gg = jclamp(yy + jshift(-22554 * cb + 32768 - 46802 * cr, 16));
            int bb = jclamp(yy + jshift(116130 * cb + 32768, 16));
            put(im, x, y, rr, gg, bb);
        }
}

/* ---- entry ------------------------------------------------------------------- */

uint8_t *image_decode(const uint8_t *p, size_t n, int channels, int bgr, int64_t *h, int64_t *w)
{
    Rd r = {p, n, "", 0};
    Img im = {0, 0, NULL};
    static const uint8_t PNG[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static const uint8_t JP2[12] = {0, 0, 0, 12, 'j', 'P', ' ', ' ', '\r', '\n', 0x87, '\n'};
    if (n >= 8 && !memcmp(p, PNG, 8)) {
        r.fmt = "PNG";
        decode_png(&r, &im);
    } else if (n >= 2 && p[0] == 'B' && p[1] == 'M') {
        r.fmt = "BMP";
        decode_bmp(&r, &im);
    } else if (n >= 2 && p[0] == 'P' && p[1] >= '1' && p[1] <= '6') {
        r.fmt = "PNM";
        decode_pnm(&r, &im);
    } else if (n >= 4 && ((p[0] == 'I' && p[1] == 'I' && p[2] == 42 && p[3] == 0) ||
                          (p[0] == 'M' && p[1] == 'M' && p[2] == 0 && p[3] == 42))) {
        r.fmt = "TIFF";
        decode_tiff(&r, &im);
    } else if (n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff) {
        r.fmt = "JPEG";
        decode_jpeg(&r, &im);
    } else if ((n >= 12 && !memcmp(p, JP2, 12)) || (n >= 4 && p[0] == 0xff && p[1] == 0x4f && p[2] == 0xff && p[3] == 0x51)) {
        fail("JPEG 2000 is not supported; decode it before the model (onnx2c decodes BMP, JPEG, PNG, PNM and TIFF)");
    } else if (n >= 12 && !memcmp(p, "RIFF", 4) && !memcmp(p + 8, "WEBP", 4)) {
        fail("WebP is not supported; decode it before the model (onnx2c decodes BMP, JPEG, PNG, PNM and TIFF)");
    } else if (n >= 4 && p[0] == 'I' && p[1] == 'I' && p[2] == 43) {
        fail("BigTIFF is not supported (classic TIFF only)");
    } else {
        fail("the %zu bytes are no image format onnx2c recognizes (BMP, JPEG, PNG, PNM, TIFF; JPEG 2000 "
             "and WebP are recognized but not decoded)", n);
    }
    *h = im.h;
    *w = im.w;
    int64_t np = im.w * im.h;
    uint8_t *out = xalloc((size_t)(np * channels));
    for (int64_t i = 0; i < np; i++) {
        const uint8_t *s = im.rgb + 3 * i;
        if (channels == 1) {   /* ITU-R 601-2 luma in 16-bit fixed point, rounded (PIL's "L") */
            out[i] = (uint8_t)((s[0] * 19595u + s[1] * 38470u + s[2] * 7471u + 0x8000u) >> 16);
        } else {
            out[3 * i] = s[bgr ? 2 : 0];
            out[3 * i + 1] = s[1];
            out[3 * i + 2] = s[bgr ? 0 : 2];
        }
    }
    return out;
}
