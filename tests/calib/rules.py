"""The calibration histogram and calibrators of compiler/engine/histogram.c,
written again with numpy for tests/calib/test_calib.py: the same bins (the
width the streaming histogram ends at) and the same rule for each
calibrator, computed independently of the C."""
import math

import numpy as np

BINS = 2048


class Hist:
    def __init__(self, x, chunk):
        x = np.asarray(x, np.float32)
        w = 0.0
        for s in range(0, len(x), chunk):   # the width: set by the first non-zero chunk, doubled as needed
            a = float(np.max(np.abs(x[s:s + chunk]))) if len(x[s:s + chunk]) else 0.0
            if a > 0 and w == 0:
                w = a * (1 + 1e-6) / BINS
            while w > 0 and a >= w * BINS:
                w *= 2
        self.width, self.min, self.max, self.count = w, float(x.min()), float(x.max()), len(x)
        self.pos = np.zeros(BINS)
        self.neg = np.zeros(BINS)
        if w == 0:
            self.pos[0] = len(x)
            return
        b = np.minimum(np.floor(np.abs(x.astype(np.float64)) * (1.0 / w)).astype(np.int64), BINS - 1)
        self.pos = np.bincount(b[x >= 0], minlength=BINS).astype(np.float64)
        self.neg = np.bincount(b[x < 0], minlength=BINS).astype(np.float64)

    def clip(self, t):
        return max(self.min, -t), min(self.max, t)

    # ---- thresholds -------------------------------------------------------------
    def percentile(self, p):
        a = self.pos + self.neg
        c = np.cumsum(a)
        i = int(np.argmax(c >= a.sum() * p / 100.0))
        return (i + 1) * self.width

    @staticmethod
    def smooth(c):
        eps = 1e-4
        nz = int(np.sum(c == 0))
        if nz == len(c):
            return None
        s = np.where(c == 0, eps, c - eps * nz / (len(c) - nz))
        return None if np.any(s <= 0) else s

    def kl(self, a, i, nq):
        p = a[:i].copy()
        p[i - 1] += a[i:].sum()
        q = np.zeros(i)
        per = i // nq
        for j in range(nq):
            s, e = j * per, (i if j == nq - 1 else j * per + per)
            seg = a[s:e]
            nz = np.count_nonzero(seg)
            if nz:
                q[s:e] = np.where(seg != 0, seg.sum() / nz, 0)
        ps, qs = self.smooth(p), self.smooth(q)
        if ps is None or qs is None:
            return math.inf
        ps, qs = ps / ps.sum(), qs / qs.sum()
        return float(np.sum(ps * np.log(ps / qs)))

    def nq(self, levels):
        return levels if self.min >= 0 or self.max <= 0 else levels // 2 + 1

    def entropy_scores(self, levels):
        a = self.pos + self.neg
        last = BINS
        while last > 1 and a[last - 1] == 0:
            last -= 1
        nq = self.nq(levels)
        if last <= nq:
            return {last: 0.0}
        return {i: self.kl(a, i, nq) for i in range(nq, last + 1)}

    def mse(self, lo, hi, levels):
        step = (hi - lo) / levels
        c = (np.arange(BINS) + 0.5) * self.width
        ep = np.where(c > hi, (c - hi) ** 2, step * step / 12)
        en = np.where(-c < lo, (lo + c) ** 2, step * step / 12)
        return float(np.sum(self.pos * ep) + np.sum(self.neg * en))

    def mse_scores(self, levels):
        last = BINS
        while last > 1 and self.pos[last - 1] == 0 and self.neg[last - 1] == 0:
            last -= 1
        out = {}
        for i in range(1, last + 1):
            lo, hi = self.clip(i * self.width)
            lo, hi = min(lo, 0.0), max(hi, 0.0)
            if hi - lo > 0:
                out[i] = self.mse(lo, hi, levels)
        return out

    def range(self, rule, param, levels):
        if self.count == 0:
            return 0.0, 0.0
        if rule == "minmax" or self.width == 0:
            return self.min, self.max
        if rule == "percentile":
            return self.clip(self.percentile(param))
        scores = self.entropy_scores(levels) if rule == "entropy" else self.mse_scores(levels)
        if not scores:
            return self.clip(BINS * self.width)
        best = min(scores.values())
        i = min(k for k, v in scores.items() if v == best)   # the first best, as the C loop keeps
        return self.clip(i * self.width)

    def tie(self, rule, levels, got, want):
        """got and want are both thresholds whose scores agree to rounding"""
        if rule not in ("entropy", "mse"):
            return False
        scores = self.entropy_scores(levels) if rule == "entropy" else self.mse_scores(levels)
        def score_of(r):
            for i, v in scores.items():
                if self.clip(i * self.width) == r:
                    return v
            return None
        a, b = score_of(got), score_of(want)
        return a is not None and b is not None and abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)
