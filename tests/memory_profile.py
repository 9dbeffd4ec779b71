#!/usr/bin/env python3
"""The per-step memory picture of one model: the arena bytes live at each
kernel call (the `live` column of `onnx2c --report`), the liveness lower
bound of the schedule and the arena the plan uses, drawn as an SVG.

    python tests/memory_profile.py MODEL_DIR [--out docs/FILE.svg] [onnx2c flags]

MODEL_DIR holds model.onnx (and test_data_set_0 when its inputs have free
dimensions: their shapes become --shape flags, as in tests/memory_table.py).
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def profile(compiler, model_dir, extra):
    """(per-call live bytes, arena, bound, title line) from --report"""
    import memory_table
    flags = memory_table.flags_of(model_dir) + list(extra)
    r = subprocess.run([compiler, os.path.join(model_dir, "model.onnx"), "--report"] + flags,
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("onnx2c failed: " + r.stderr.strip())
    live, arena, bound = [], None, None
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) > 9 and f[0].isdigit():
            live.append(int(f[8]))
        m = re.match(r"memory: arena (\d+) bytes; liveness lower bound of this schedule (\d+) bytes", line)
        if m:
            arena, bound = int(m.group(1)), int(m.group(2))
    if arena is None or not live:
        sys.exit("no memory line or no calls in the report")
    return live, arena, bound


def svg(live, arena, bound, title):
    W, H, L, R, T, B = 900, 360, 80, 20, 40, 50
    top = max(arena, max(live)) * 1.08 or 1
    n = len(live)

    def x(i):
        return L + (W - L - R) * i / max(n, 1)

    def y(v):
        return T + (H - T - B) * (1 - v / top)

    pts = ["%.1f,%.1f" % (x(0), y(0))]
    for i, v in enumerate(live):
        pts.append("%.1f,%.1f" % (x(i), y(v)))
        pts.append("%.1f,%.1f" % (x(i + 1), y(v)))
    pts.append("%.1f,%.1f" % (x(n), y(0)))
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">'
           % (W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="22" font-size="14">%s</text>' % (L, title),
           '<polygon points="%s" fill="#9ecae1" stroke="#3182bd" stroke-width="1"/>' % " ".join(pts)]
    for v, colour, label in ((arena, "#d62728", "arena %d bytes" % arena),
                             (bound, "#2ca02c", "liveness bound %d bytes" % bound)):
        dash = ' stroke-dasharray="6,4"' if v == bound else ""
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"%s/>' % (L, W - R, y(v), y(v), colour, dash))
        out.append('<text x="%d" y="%.1f" fill="%s" text-anchor="end">%s</text>'
                   % (W - R, y(v) - 4 - (14 if v == bound and v == arena else 0), colour, label))
    for k in range(5):   # y axis: bytes
        v = top * k / 4
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ccc"/>' % (L - 4, L, y(v), y(v)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (L - 6, y(v) + 4, "%.2g MB" % (v / 1e6)
                                                                          if top >= 1e5 else "%d" % v))
    out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="black"/>' % (L, W - R, H - B, H - B))
    out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="black"/>' % (L, L, T, H - B))
    for k in range(0, n + 1, max(1, n // 8)):
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (x(k), H - B + 16, k))
    out.append('<text x="%d" y="%d" text-anchor="middle">kernel call (schedule order)</text>'
               % ((L + W - R) // 2, H - 12))
    out.append('</svg>')
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("--out", default=None, help="SVG file (default: standard output)")
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "onnx2c"))
    args, extra = ap.parse_known_args()
    live, arena, bound = profile(args.compiler, args.model_dir, extra)
    name = os.path.basename(os.path.normpath(args.model_dir))
    text = svg(live, arena, bound, "%s: arena bytes live at each kernel call" % name)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
        print("%s: %d calls, arena %d, bound %d, wrote %s" % (name, len(live), arena, bound, args.out))
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
