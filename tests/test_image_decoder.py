#!/usr/bin/env python3
"""ImageDecoder: images written here with numpy (BMP, PNM, PNG through
Python's zlib, TIFF uncompressed, PackBits, LZW and Deflate, baseline JPEG)
in the layouts onnx2c decodes (compiler/image_decode.c), each decoded by a
compiled model (the encoded input bound with --bind, which
run_node_tests.py does on the refusal's suggestion) and compared with the
pixels written, in RGB, BGR and Grayscale (ITU-R 601-2 luma in 16-bit fixed
point, rounded: PIL's "L"): exactly, JPEG within 4 levels (lossy; its
exactness against libjpeg-turbo is what the ONNX node tests check).

Then robustness: truncated and corrupted versions of the images are
compiled with --bind; the compiler must decode or refuse them (exit 0, or
exit 1 with one 'onnx2c:' line), never crash (run it under ASan:
--compiler build/asan/onnx2c).

    python tests/test_image_decoder.py [--compiler build/onnx2c] [-j 2] [--keep DIR]

The last line is 'N passed, N failed, N skipped'."""
import argparse, os, shutil, struct, subprocess, sys, tempfile, zlib

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

from corpus_run import run_corpus

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# ---- encoders ---------------------------------------------------------------

def bmp(px, bpp=24, top_down=False, palette=None, bitfields=False):
    """px: H x W x 3 (bpp 24/32) or H x W indices (bpp 1/4/8 with palette N x 3)"""
    H, W = px.shape[:2]
    stride = (W * bpp + 31) // 32 * 4
    rows = []
    for y in range(H):
        r = px[y]
        if bpp == 24:
            b = r[:, ::-1].astype(np.uint8).tobytes()
        elif bpp == 32:
            b = np.concatenate([r[:, ::-1], np.full((W, 1), 7, np.uint8)], 1).tobytes()   # BGRX, X ignored
        else:
            per = 8 // bpp
            v = np.zeros((W + per - 1) // per, np.uint8)
            for x in range(W):
                v[x // per] |= int(r[x]) << ((per - 1 - x % per) * bpp)
            b = v.tobytes()
        rows.append(b + b"\0" * (stride - len(b)))
    if not top_down:
        rows = rows[::-1]
    data = b"".join(rows)
    comp = 3 if bitfields else 0
    hsize = 40
    extra = struct.pack("<III", 0xff0000, 0xff00, 0xff) if bitfields else b""
    pal = b"".join(struct.pack("<BBBB", c[2], c[1], c[0], 0) for c in palette) if palette is not None else b""
    off = 14 + hsize + len(extra) + len(pal)
    dib = struct.pack("<IiiHHIIiiII", hsize, W, -H if top_down else H, 1, bpp, comp, len(data), 2835, 2835,
                      len(palette) if palette is not None else 0, 0)
    return b"BM" + struct.pack("<IHHI", off + len(data), 0, 0, off) + dib + extra + pal + data


def pnm(px, kind):
    H, W = px.shape[:2]
    head = ("P%d\n# a comment\n%d %d\n" % (kind, W, H)).encode()
    if kind in (1, 4):
        bits = (px == 0).astype(np.uint8)   # 1 is black
        if kind == 1:
            return head + "\n".join("".join(str(b) for b in row) for row in bits).encode() + b"\n"
        return head + b"".join(np.packbits(row).tobytes() for row in bits)
    head += b"255\n"
    if kind in (2, 3):
        return head + "\n".join(" ".join(str(v) for v in row.ravel()) for row in px).encode() + b"\n"
    return head + px.astype(np.uint8).tobytes()


def png_chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)


def png_filter(rows, bpp, r):
    """each row with a filter type 0-4 (cycled, seeded), applied forward"""
    out, prev = [], None
    for y, row in enumerate(rows):
        row = np.frombuffer(row, np.uint8).astype(np.int32)
        p = prev if prev is not None else np.zeros_like(row)
        a = np.concatenate([np.zeros(bpp, np.int32), row[:-bpp]]) if len(row) > bpp else np.zeros_like(row)
        c = np.concatenate([np.zeros(bpp, np.int32), p[:-bpp]]) if len(row) > bpp else np.zeros_like(row)
        f = (y + r) % 5
        if f == 0:
            v = row
        elif f == 1:
            v = row - a
        elif f == 2:
            v = row - p
        elif f == 3:
            v = row - (a + p) // 2
        else:
            pa, pb, pc = np.abs(p - c), np.abs(a - c), np.abs(a + p - 2 * c)
            pr = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, p, c))
            v = row - pr
        out.append(bytes([f]) + (v & 255).astype(np.uint8).tobytes())
        prev = row
    return b"".join(out)


def pack_rows(s, depth):
    """H x W x C samples -> rows of bytes at the bit depth"""
    rows = []
    for row in s:
        flat = row.reshape(-1)
        if depth == 8:
            rows.append(flat.astype(np.uint8).tobytes())
        else:
            per = 8 // depth
            v = np.zeros((len(flat) + per - 1) // per, np.uint8)
            for i, x in enumerate(flat):
                v[i // per] |= int(x) << ((per - 1 - i % per) * depth)
            rows.append(v.tobytes())
    return rows


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def png(samples, ctype, depth=8, palette=None, interlace=False, level=6, seed=0):
    H, W = samples.shape[:2]
    s = samples.reshape(H, W, -1)
    ch = s.shape[2]
    bpp = max(1, ch * depth // 8)
    raw = b""
    for (x0, y0, xs, ys) in (ADAM7 if interlace else [(0, 0, 1, 1)]):
        sub = s[y0::ys, x0::xs]
        if sub.size:
            raw += png_filter(pack_rows(sub, depth), bpp, seed)
    out = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, depth, ctype, 0, 0, int(interlace)))
    out += png_chunk(b"tEXt", b"Comment\0ancillary chunks are skipped")
    if palette is not None:
        out += png_chunk(b"PLTE", np.asarray(palette, np.uint8).tobytes())
    z = zlib.compress(raw, level)
    # two IDAT chunks
    out += png_chunk(b"IDAT", z[: len(z) // 2]) + png_chunk(b"IDAT", z[len(z) // 2:])
    return out + png_chunk(b"IEND", b"")


def packbits(data):
    out, i = bytearray(), 0
    while i < len(data):
        j = i
        while j + 1 < len(data) and data[j + 1] == data[i] and j - i < 127:
            j += 1
        if j > i:
            out += bytes([(257 - (j - i + 1)) & 255, data[i]])
            i = j + 1
            continue
        j = i + 1
        while j < len(data) and j - i < 128 and not (j + 1 < len(data) and data[j] == data[j + 1]):
            j += 1
        out += bytes([j - i - 1]) + data[i:j]
        i = j
    return bytes(out)


def lzw(data):
    """TIFF LZW: MSB-first codes, 9 to 12 bits, the width raised one code early (at 511 in the decoder)"""
    table = {bytes([k]): k for k in range(256)}
    nxt, width, bits, nbits = 258, 9, 0, 0
    out = bytearray()

    def emit(code):
        nonlocal bits, nbits
        bits = bits << width | code
        nbits += width
        while nbits >= 8:
            out.append(bits >> (nbits - 8) & 255)
            nbits -= 8
            bits &= (1 << nbits) - 1

    emit(256)
    w = b""
    for b in data:
        wc = w + bytes([b])
        if wc in table:
            w = wc
            continue
        emit(table[w])
        table[wc] = nxt
        nxt += 1
        if nxt >= 1 << width and width < 12:   # the decoder, a code behind, switches at 511
            width += 1
        if nxt >= 4094:
            emit(256)
            table = {bytes([k]): k for k in range(256)}
            nxt, width = 258, 9
        w = bytes([b])
    if w:
        emit(table[w])
        nxt += 1
        if nxt >= 1 << width and width < 12:
            width += 1
    emit(257)
    if nbits:
        out.append(bits << (8 - nbits) & 255)
    return bytes(out)


def tiff(s, photo, comp=1, rps=None, be=False, colormap=None, predictor=1):
    """s: H x W x C uint8 samples (C 1, 3 or 4)"""
    H, W = s.shape[:2]
    s = s.reshape(H, W, -1)
    C = s.shape[2]
    rps = rps or H
    e = ">" if be else "<"
    strips = []
    for y in range(0, H, rps):
        blk = s[y:y + rps].astype(np.int32)
        if predictor == 2:
            blk = blk.copy()
            blk[:, 1:] = (blk[:, 1:] - s[y:y + rps, :-1].astype(np.int32)) & 255
        raw = blk.astype(np.uint8).tobytes()
        strips.append({1: lambda d: d, 32773: packbits, 5: lzw, 8: lambda d: zlib.compress(d, 6)}[comp](raw))
    entries = [(256, 4, [W]), (257, 4, [H]), (258, 3, [8] * C), (259, 3, [comp]), (262, 3, [photo]),
               (273, 4, None), (277, 3, [C]), (278, 4, [rps]), (279, 4, [len(x) for x in strips])]
    if C == 4:
        entries.append((338, 3, [2]))
    if predictor != 1:
        entries.append((317, 3, [predictor]))
    if colormap is not None:
        entries.append((320, 3, list(colormap)))
    entries.sort()
    data = bytearray((b"MM\0*" if be else b"II*\0") + struct.pack(e + "I", 0))
    offs = []
    for st in strips:
        offs.append(len(data))
        data += st
    if len(data) % 2:
        data += b"\0"
    ext = {}
    for tag, typ, vals in entries:
        vals = offs if vals is None else vals
        b = b"".join(struct.pack(e + ("H" if typ == 3 else "I"), v) for v in vals)
        if len(b) > 4:
            ext[tag] = len(data)
            data += b + (b"\0" if len(b) % 2 else b"")
    ifd = len(data)
    data[4:8] = struct.pack(e + "I", ifd)
    data += struct.pack(e + "H", len(entries))
    for tag, typ, vals in entries:
        vals = offs if vals is None else vals
        b = b"".join(struct.pack(e + ("H" if typ == 3 else "I"), v) for v in vals)
        field = struct.pack(e + "I", ext[tag]) if tag in ext else b + b"\0" * (4 - len(b))
        data += struct.pack(e + "HHI", tag, typ, len(vals)) + field
    return bytes(data + struct.pack(e + "I", 0))


ZIGZAG = [0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14,
          21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60,
          61, 54, 47, 55, 62, 63]


def jpeg(rgb, sampling=(1, 1), gray=False, q=1, restart=0):
    """a baseline JPEG: YCbCr (or gray), luma sampled h x v against chroma,
    flat quantization q, Huffman tables of fixed-length codes (8 bits for
    every run/size symbol, 4 for every DC size), an optional restart interval"""
    H, W = rgb.shape[:2]
    f = rgb.astype(np.float64)
    Y = 0.299 * f[..., 0] + 0.587 * f[..., 1] + 0.114 * f[..., 2]
    planes = [Y] if gray else [Y, 128 - 0.168736 * f[..., 0] - 0.331264 * f[..., 1] + 0.5 * f[..., 2],
                               128 + 0.5 * f[..., 0] - 0.418688 * f[..., 1] - 0.081312 * f[..., 2]]
    hs, vs = (1, 1) if gray else sampling
    mx, my = -(-W // (8 * hs)), -(-H // (8 * vs))
    comps = []
    for k, p in enumerate(planes):
        h, v = (hs, vs) if k == 0 else (1, 1)
        full = np.pad(p, ((0, my * 8 * vs - H), (0, mx * 8 * hs - W)), mode="edge")
        if k:   # chroma: the mean of each hs x vs cell
            full = full.reshape(full.shape[0] // vs, vs, full.shape[1] // hs, hs).mean(axis=(1, 3))
        comps.append((h, v, full - 128))
    u = np.arange(8)
    C = np.cos((2 * u[None, :] + 1) * u[:, None] * np.pi / 16) * np.where(u[:, None] == 0, np.sqrt(1 / 8), np.sqrt(2 / 8))
    out = bytearray()
    acc, nacc = 0, 0

    def put(v, n):
        nonlocal acc, nacc
        acc = acc << n | v
        nacc += n
        while nacc >= 8:
            b = acc >> (nacc - 8) & 255
            out.append(b)
            if b == 255:
                out.append(0)
            nacc -= 8
            acc &= (1 << nacc) - 1

    def flush():
        nonlocal acc, nacc
        if nacc:
            put((1 << (8 - nacc)) - 1, 8 - nacc)

    ac_syms = [0x00, 0xF0] + [r << 4 | s for r in range(16) for s in range(1, 11)]
    ac_code = {sym: i for i, sym in enumerate(ac_syms)}

    def code_val(v):
        s = int(abs(v)).bit_length()
        return s, (v if v >= 0 else v + (1 << s) - 1)

    def block(blk, pred):
        co = np.rint(C @ blk @ C.T / q).astype(int).ravel()
        zz = [co[ZIGZAG[k]] for k in range(64)]
        s, b = code_val(zz[0] - pred)
        put(s, 4)
        if s:
            put(b, s)
        run = 0
        for k in range(1, 64):
            if zz[k] == 0:
                run += 1
                continue
            while run > 15:
                put(ac_code[0xF0], 8)
                run -= 16
            s, b = code_val(zz[k])
            put(ac_code[run << 4 | s], 8)
            put(b, s)
            run = 0
        if run:
            put(ac_code[0x00], 8)
        return zz[0]

    preds = [0] * len(comps)
    for m in range(mx * my):
        if restart and m and m % restart == 0:
            flush()
            out.extend([0xFF, 0xD0 + (m // restart - 1) % 8])
            preds = [0] * len(comps)
        bx, by = m % mx, m // mx
        for k, (h, v, p) in enumerate(comps):
            for yy in range(v):
                for xx in range(h):
                    y0, x0 = (by * v + yy) * 8, (bx * h + xx) * 8
                    preds[k] = block(p[y0:y0 + 8, x0:x0 + 8], preds[k])
    flush()
    seg = lambda m, d: bytes([0xFF, m]) + struct.pack(">H", len(d) + 2) + d
    nc = len(comps)
    head = b"\xff\xd8" + seg(0xE0, b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0")
    head += seg(0xDB, bytes([0]) + bytes([q] * 64))
    sof = struct.pack(">BHHB", 8, H, W, nc) + b"".join(bytes([k + 1, (h << 4) | v, 0]) for k, (h, v, _) in enumerate(comps))
    head += seg(0xC0, sof)
    dc_counts = bytes([0, 0, 0, 12] + [0] * 12)
    ac_counts = bytes([0] * 7 + [len(ac_syms)] + [0] * 8)
    for t in range(2 if nc > 1 else 1):
        head += seg(0xC4, bytes([t]) + dc_counts + bytes(range(12)))
        head += seg(0xC4, bytes([0x10 | t]) + ac_counts + bytes(ac_syms))
    if restart:
        head += seg(0xDD, struct.pack(">H", restart))
    sos = bytes([nc]) + b"".join(bytes([k + 1, 0x00 if k == 0 else 0x11]) for k in range(nc)) + bytes([0, 63, 0])
    return head + seg(0xDA, sos) + bytes(out) + b"\xff\xd9"


# ---- cases ------------------------------------------------------------------

def luma(rgb):
    r, g, b = (rgb[..., k].astype(np.uint32) for k in range(3))
    return ((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16).astype(np.uint8)


def images(r):
    """(name, encoded bytes, expected H x W x 3 RGB)"""
    out = []
    rgb = lambda H, W: r.randint(0, 256, (H, W, 3)).astype(np.uint8)
    gray3 = lambda g: np.repeat(g[..., None], 3, 2)
    a = rgb(5, 7)
    out.append(("bmp24", bmp(a), a))
    a = rgb(4, 6)
    out.append(("bmp24_topdown", bmp(a, top_down=True), a))
    a = rgb(3, 5)
    out.append(("bmp32", bmp(a, bpp=32), a))
    out.append(("bmp32_bitfields", bmp(a, bpp=32, bitfields=True), a))
    for bpp in (1, 4, 8):
        pal = r.randint(0, 256, (1 << bpp, 3)).astype(np.uint8)
        idx = r.randint(0, 1 << bpp, (6, 11))
        out.append(("bmp%d_palette" % bpp, bmp(idx, bpp=bpp, palette=pal), pal[idx]))
    a = rgb(4, 5)
    out.append(("ppm_raw", pnm(a, 6), a))
    out.append(("ppm_plain", pnm(a, 3), a))
    g = r.randint(0, 256, (3, 6)).astype(np.uint8)
    out.append(("pgm_raw", pnm(g, 5), gray3(g)))
    out.append(("pgm_plain", pnm(g, 2), gray3(g)))
    bw = (r.randint(0, 2, (5, 10)) * 255).astype(np.uint8)
    out.append(("pbm_raw", pnm(bw, 4), gray3(bw)))
    out.append(("pbm_plain", pnm(bw, 1), gray3(bw)))
    for il in (False, True):
        t = "_adam7" if il else ""
        a = rgb(9, 11)
        out.append(("png_rgb" + t, png(a, 2, interlace=il, seed=1), a))
        a4 = r.randint(0, 256, (7, 10, 4)).astype(np.uint8)
        out.append(("png_rgba" + t, png(a4, 6, interlace=il, level=0, seed=2), a4[..., :3]))
        g = r.randint(0, 256, (6, 13)).astype(np.uint8)
        out.append(("png_gray" + t, png(g, 0, interlace=il, level=9, seed=3), gray3(g)))
        ga = r.randint(0, 256, (5, 4, 2)).astype(np.uint8)
        out.append(("png_gray_alpha" + t, png(ga, 4, interlace=il, seed=4), gray3(ga[..., 0])))
        for d in (1, 2, 4):
            g = r.randint(0, 1 << d, (5, 9))
            out.append(("png_gray%d%s" % (d, t), png(g, 0, depth=d, interlace=il), gray3((g * (255 // ((1 << d) - 1))).astype(np.uint8))))
        for d in (1, 2, 4, 8):
            n = min(1 << d, 200)
            pal = r.randint(0, 256, (n, 3)).astype(np.uint8)
            idx = r.randint(0, n, (7, 12))
            out.append(("png_palette%d%s" % (d, t), png(idx, 3, depth=d, palette=pal, interlace=il, seed=d), pal[idx]))
    # a smooth image: long matches for the deflate window
    yy, xx = np.mgrid[0:40, 0:48]
    sm = np.stack([(xx * 5) % 256, (yy * 6) % 256, ((xx + yy) * 3) % 256], 2).astype(np.uint8)
    out.append(("png_smooth", png(sm, 2, level=9), sm))
    a = rgb(6, 5)
    out.append(("tiff_rgb", tiff(a, 2), a))
    out.append(("tiff_rgb_be_strips", tiff(a, 2, rps=4, be=True), a))
    out.append(("tiff_rgb_packbits", tiff(sm, 2, comp=32773, rps=7), sm))
    out.append(("tiff_rgb_lzw", tiff(sm, 2, comp=5, rps=16), sm))
    big = np.tile(sm, (3, 3, 1))   # past 4094 LZW codes: a Clear inside a strip
    out.append(("tiff_rgb_lzw_clear", tiff(big, 2, comp=5), big))
    out.append(("tiff_rgb_deflate_predictor", tiff(sm, 2, comp=8, predictor=2, rps=9), sm))
    a4 = r.randint(0, 256, (4, 5, 4)).astype(np.uint8)
    out.append(("tiff_rgba", tiff(a4, 2), a4[..., :3]))
    g = r.randint(0, 256, (5, 6)).astype(np.uint8)
    out.append(("tiff_gray", tiff(g, 1), gray3(g)))
    out.append(("tiff_gray_white_is_zero", tiff(g, 0, comp=5), gray3(255 - g)))
    cmap = r.randint(0, 65536, 768)
    idx = r.randint(0, 256, (4, 7)).astype(np.uint8)
    pal = np.stack([cmap[0:256] >> 8, cmap[256:512] >> 8, cmap[512:] >> 8], 1).astype(np.uint8)
    out.append(("tiff_palette", tiff(idx, 3, colormap=cmap, be=True), pal[idx]))
    # JPEG (lossy: the decoded pixels within a few levels of the source); the
    # subsampled ones with chroma that varies slowly, so averaging and
    # interpolating it stays close
    a = r.randint(0, 256, (11, 13, 3)).astype(np.uint8)
    out.append(("jpeg444", jpeg(a), a))
    out.append(("jpeg444_restart", jpeg(a, restart=1), a))
    for hs, vs, H, W in ((2, 1, 13, 29), (2, 2, 21, 35), (2, 2, 16, 16)):
        yy, xx = np.mgrid[0:H, 0:W]
        t = np.stack([60 + 3 * xx + 2 * yy, 90 + 2 * xx + yy, 140 - xx + 2 * yy], 2).clip(0, 255).astype(np.uint8)
        out.append(("jpeg%d%d_%dx%d" % (hs, vs, H, W), jpeg(t, (hs, vs), restart=2 if H == 21 else 0), t))
    g = r.randint(0, 256, (9, 17)).astype(np.uint8)
    out.append(("jpeg_gray", jpeg(np.repeat(g[..., None], 3, 2), gray=True), np.repeat(g[..., None], 3, 2)))
    return out


def model(enc_len, fmt, H, W, C, as_float=False):
    """as_float: the pixels cast to float32 (the runner compares integers exactly, floats within atol)"""
    nodes = [h.make_node("ImageDecoder", ["data"], ["pixels" if as_float else "image"], pixel_format=fmt)]
    if as_float:
        nodes.append(h.make_node("Cast", ["pixels"], ["image"], to=TP.FLOAT))
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("data", TP.UINT8, [enc_len])],
                     [h.make_tensor_value_info("image", TP.FLOAT if as_float else TP.UINT8, [H, W, C])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 20)])
    m.ir_version = 9
    return m


def write_case(root, name, enc, exp_rgb, fmt):
    H, W = exp_rgb.shape[:2]
    exp = {"RGB": exp_rgb, "BGR": exp_rgb[..., ::-1], "Grayscale": luma(exp_rgb)[..., None]}[fmt]
    d = os.path.join(root, "test_" + name)
    ds = os.path.join(d, "test_data_set_0")
    os.makedirs(ds)
    data = np.frombuffer(enc, np.uint8)
    lossy = name.startswith("jpeg")
    if lossy:
        exp = exp.astype(np.float32)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model(len(enc), fmt, H, W, exp.shape[2], lossy).SerializeToString())
    with open(os.path.join(ds, "input_0.pb"), "wb") as f:
        f.write(nh.from_array(data, "data").SerializeToString())
    with open(os.path.join(ds, "output_0.pb"), "wb") as f:
        f.write(nh.from_array(np.ascontiguousarray(exp), "image").SerializeToString())
    with open(os.path.join(d, "tolerance.txt"), "w") as f:
        f.write("rtol 0\natol %d\n" % (4 if lossy else 0))
    return "test_" + name


def robustness(root, compiler, imgs, r):
    """truncated and corrupted streams: decoded or refused, never a crash"""
    d = os.path.join(root, "robust")
    os.makedirs(d)
    m = os.path.join(d, "model.onnx")
    npass = nfail = 0
    env = dict(os.environ)   # a sanitizer report is never mistaken for a refusal (exit 1)
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":exitcode=86").lstrip(":")
    env["UBSAN_OPTIONS"] = (env.get("UBSAN_OPTIONS", "") + ":halt_on_error=1:exitcode=88").lstrip(":")
    picks = [x for x in imgs if x[0] in ("bmp24", "bmp8_palette", "ppm_raw", "pgm_plain", "pbm_raw", "png_rgb",
                                          "png_palette4_adam7", "png_smooth", "tiff_rgb_be_strips",
                                          "tiff_rgb_packbits", "tiff_rgb_lzw", "tiff_rgb_deflate_predictor",
                                          "tiff_palette", "jpeg444_restart", "jpeg22_21x35", "jpeg_gray")]
    for name, enc, _ in picks:
        variants = []
        for cut in sorted(set([1, 2, 3, 7, 8, 12, 20, 33, 50] + [len(enc) * k // 8 for k in range(1, 8)] + [len(enc) - 1])):
            if 0 < cut < len(enc):
                variants.append(("cut%d" % cut, enc[:cut]))
        for k in range(24):
            b = bytearray(enc)
            for _ in range(1 + k % 3):
                b[r.randint(0, len(b))] = r.randint(0, 256)
            variants.append(("flip%d" % k, bytes(b)))
        for vname, v in variants:
            pb = os.path.join(d, "data.pb")
            with open(pb, "wb") as f:
                f.write(nh.from_array(np.frombuffer(v, np.uint8), "data").SerializeToString())
            with open(m, "wb") as f:
                f.write(model(len(v), "RGB", 1, 1, 3).SerializeToString())
            p = subprocess.run([compiler, m, "-o", os.path.join(d, "out.c"), "--bind", "data=" + pb],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, env=env)
            p.stderr = p.stderr.decode("utf-8", "replace")
            lines = p.stderr.strip().splitlines()
            ok = p.returncode == 0 or (p.returncode == 1 and len(lines) == 1 and lines[0].startswith("onnx2c: ")
                                       and "internal" not in lines[0])
            if ok:
                npass += 1
            else:
                nfail += 1
                print("FAIL robustness %s %s: exit %d: %s" % (name, vname, p.returncode, p.stderr.strip()[-500:]))
    print("robustness: %d of %d truncated or corrupted streams decoded or refused cleanly" % (npass, npass + nfail))
    return npass, nfail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--keep", default=None, help="write the corpus here and keep it")
    a = ap.parse_args()
    root = a.keep or tempfile.mkdtemp(prefix="o2c_imgdec_")
    try:
        if a.keep:
            shutil.rmtree(root, ignore_errors=True)
            os.makedirs(root)
        r = np.random.RandomState(5)
        imgs = images(r)
        corpus = os.path.join(root, "corpus")
        os.makedirs(corpus)
        names = []
        for i, (name, enc, exp) in enumerate(imgs):
            for fmt in ("RGB", "BGR", "Grayscale"):
                if fmt == "RGB" or i % 3 == ("BGR", "Grayscale").index(fmt) + 1 or name.startswith("png_rgb"):
                    names.append(write_case(corpus, "%s_%s" % (name, fmt.lower()), enc, exp, fmt))
        npass, nfail = run_corpus(corpus, names, a.compiler, a.jobs, expected=os.path.join(root, "expected.txt"))
        rp, rf = robustness(root, os.path.abspath(a.compiler), imgs, np.random.RandomState(9))
        print("%d passed, %d failed, 0 skipped" % (npass + rp, nfail + rf))
        return 1 if nfail or rf else 0
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
