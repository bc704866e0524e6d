#!/usr/bin/python3
"""Independent numpy reference for the calscope metrics, written from their definitions only
(docs/metrics.md and the papers it cites), not from calscope's code.

    /usr/bin/python3 tests/oracles/reference.py [--lens L] [--bins M] [--binning uniform|mass]
                                        [--sigma S] [--distance tvd|l2|max] FILE...
        prints {"files": [...]} in the shape of `calscope report --format json` (docs/json.md)
    /usr/bin/python3 tests/oracles/reference.py --write [--out tests/expected/reference.json]
        evaluates every sample in samples/ (not samples/broken/) under SETTINGS below and writes
        the expected values that tests/e2e/test_reference.sh compares calscope against.
    /usr/bin/python3 tests/oracles/reference.py --write-smece-curve [TSV]
        relplot's smoothed reliability curve (smece_curve) on every sample, for the unit test
        test_estimators (default tests/fixtures/smece_curve.tsv).

Implemented: lenses top1, class:C, classwise, topk:K, full; binning uniform (scalar: (i/M,(i+1)/M],
0 in bin 0; vector lenses: a grid of M cells per coordinate over the first dim-1 coordinates) and
mass (stable sort + numpy array_split, scalar lenses); distances tvd, l2, max; ECE, ACE, MCE,
RECE-G (all M bins, normalised over the M bins), Brier, NLL (g[y] clipped at 1e-15), accuracy,
AECE (top-1 mass ECE), SCE (class-wise uniform ECE); the per-bin table (lo, hi, count, conf, acc).
RECE-M with the kde mixture (long id/tta files); per-case metrics and the dataset reliability
histogram (files with a `case` column).
Not implemented: kdtree, group lens, interval distance, selections, RECE-M gmm3.

Readings of the definitions a reader could take differently (flagged so a mismatch is easy to place):
  * ACE is the plain mean of the per-bin gap d over non-empty bins for every distance (the l2
    square-root aggregate is applied to ECE only); MCE is the max of d.
  * classwise: ece/ace/mce are each the mean over the K classes of the class:c metric; no bin table.
  * mass bins: lo/hi are not recorded (null; the comparer skips them), count/conf/acc are.
  * a long test-time-augmentation file is measured on its tta == 0 rows; a file with a `case` column
    is measured pooled over all rows.
  * empty uniform bins are listed with count 0 and conf/acc null.
  * rece_g is always the top-1 RECE-G; for lenses other than top1 the entry lists it under "skip"
    (not compared), because Gupta, Basu & Arora 2023 define RECE-G on the top-1 confidence only.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import pandas as pd

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
LABEL_NAMES = ("label", "y", "target", "true")

# (name, flags) evaluated for every sample by --write. The first seven are the brief's list.
SETTINGS = [
    ("default", []),
    ("bins10", ["--bins", "10"]),
    ("mass", ["--binning", "mass"]),
    ("l2", ["--distance", "l2"]),
    ("max", ["--distance", "max"]),
    ("sigma0.05", ["--sigma", "0.05"]),
    ("mass20", ["--bins", "20", "--binning", "mass"]),
    ("class1", ["--lens", "class:1"]),
    ("classwise", ["--lens", "classwise"]),
    ("topk2", ["--lens", "topk:2"]),
    ("topk2_l2", ["--lens", "topk:2", "--distance", "l2"]),
    ("full_max", ["--lens", "full", "--distance", "max", "--bins", "5"]),
    ("smece0.05", ["--smece-sigma", "0.05"]),
    ("class0_mass_l2", ["--lens", "class:0", "--binning", "mass", "--distance", "l2", "--bins", "8"]),
]


# ---------------------------------------------------------------------------------------------
# Loading

class Data:
    def __init__(self, path, prob, label, class_names, rows):
        self.path = path
        self.prob = prob            # (N, K) float64, samples only
        self.label = label          # (N,) int
        self.class_names = class_names
        self.rows = rows            # rows in the file (all, incl. tta > 0)
        self.obs_conf = None        # long TTA file: per sample, the top-1 confidence of every
                                    # observation with its id (tta 0 included)
        self.case = None            # (N,) case name per sample, or None

    @property
    def n(self):
        return self.prob.shape[0]

    @property
    def k(self):
        return self.prob.shape[1]


def softmax(z):
    z = np.asarray(z, dtype=np.float64)
    m = z.max(axis=1, keepdims=True)
    e = np.exp(z - m)
    return e / e.sum(axis=1, keepdims=True)


def load(path):
    # round_trip: the exact double nearest to the text, as strtod gives.
    df = pd.read_csv(path, float_precision="round_trip", dtype=str, keep_default_na=False)
    cols = {c.strip().lower(): c for c in df.columns}
    lab = next((cols[n] for n in LABEL_NAMES if n in cols), None)
    if lab is None:
        raise SystemExit(f"{path}: no label column")
    pcols = [c for c in df.columns if c.strip().lower().startswith(("p_", "prob_"))]
    lcols = [c for c in df.columns if c.strip().lower().startswith("logit_")]

    def to_float(series_list):
        return np.array([[float(v) for v in df[c]] for c in series_list], dtype=np.float64).T

    if pcols:
        names = [c.strip().split("_", 1)[1] for c in pcols]
        prob = to_float(pcols)
    elif lcols:
        names = [c.strip().split("_", 1)[1] for c in lcols]
        prob = softmax(to_float(lcols))
    else:
        single = next((cols[n] for n in ("p", "prob", "score") if n in cols), None)
        if single is None:
            raise SystemExit(f"{path}: no probability columns")
        p1 = np.array([float(v) for v in df[single]])
        prob = np.stack([1.0 - p1, p1], axis=1)
        names = ["0", "1"]
    labels = []
    lname = {n.lower(): i for i, n in enumerate(names)}
    for v in df[lab]:
        v = v.strip()
        try:
            labels.append(int(v))
        except ValueError:
            labels.append(lname[v.lower()])
    label = np.array(labels, dtype=np.int64)
    assert label.min() >= 0 and label.max() < prob.shape[1]
    rows = len(df)
    obs_conf = None
    case = None
    if "case" in cols:
        case = np.array([v for v in df[cols["case"]]], dtype=object)
    if "tta" in cols and "id" in cols:
        tta = np.array([int(v) for v in df[cols["tta"]]])
        ids = np.array([v for v in df[cols["id"]]], dtype=object)
        allconf = prob.max(axis=1)
        by_id = {}
        for i, c in zip(ids, allconf):
            by_id.setdefault(i, []).append(c)
        keep = tta == 0
        obs_conf = [np.array(by_id[i]) for i in ids[keep]]
        prob, label = prob[keep], label[keep]
        if case is not None:
            case = case[keep]
    d = Data(path, prob, label, names, rows)
    d.obs_conf = obs_conf
    d.case = case
    return d


# ---------------------------------------------------------------------------------------------
# Lenses: return (o, t) with shape (N, dim); scalar lenses have dim 2 and are binned on column 0.

def top1_parts(prob, label):
    pred = np.argmax(prob, axis=1)          # first maximal index
    conf = prob[np.arange(len(prob)), pred]
    correct = (pred == label).astype(np.float64)
    return conf, correct


def lens_top1(d):
    c, a = top1_parts(d.prob, d.label)
    return np.stack([c, 1.0 - c], 1), np.stack([a, 1.0 - a], 1)


def lens_class(d, c):
    g = d.prob[:, c]
    y = (d.label == c).astype(np.float64)
    return np.stack([g, 1.0 - g], 1), np.stack([y, 1.0 - y], 1)


def lens_topk(d, k):
    k = min(k, d.k)
    order = np.argsort(-d.prob, axis=1, kind="stable")[:, :k]     # ties: lower index first
    o = np.take_along_axis(d.prob, order, axis=1)
    t = (order == d.label[:, None]).astype(np.float64)
    o = np.concatenate([o, 1.0 - o.sum(axis=1, keepdims=True)], axis=1)
    t = np.concatenate([t, 1.0 - t.sum(axis=1, keepdims=True)], axis=1)
    return o, t


def lens_full(d):
    y = np.zeros_like(d.prob)
    y[np.arange(d.n), d.label] = 1.0
    return d.prob.copy(), y


def class_index(d, text):
    for i, n in enumerate(d.class_names):
        if n.lower() == text.lower():
            return i
    i = int(text)
    assert 0 <= i < d.k
    return i


# ---------------------------------------------------------------------------------------------
# Binning

def uniform_edges(m):
    return np.arange(m + 1, dtype=np.float64) / m      # i/M in double, as C computes (double)i/M


def uniform_bin(x, m):
    """Bin index of each value: bin i is (i/M, (i+1)/M], 0 goes to bin 0."""
    b = np.searchsorted(uniform_edges(m), x, side="left") - 1
    return np.clip(b, 0, m - 1)


def mass_groups(x, m):
    order = np.argsort(x, kind="stable")
    return [g for g in np.array_split(order, m)]


# ---------------------------------------------------------------------------------------------
# Estimators

def gap(mo, mt, distance, scalar):
    if scalar:
        return abs(mo[0] - mt[0])
    diff = np.abs(mo - mt)
    if distance == "tvd":
        return 0.5 * float(diff.sum())
    if distance == "l2":
        return math.sqrt(float((diff * diff).sum()))
    if distance == "max":
        return float(diff.max())
    raise ValueError(distance)


def binned(o, t, groups, distance, scalar, n_total):
    """groups: list of (lo, hi, index array). Returns ece, ace, mce, bins."""
    bins, ds, ws = [], [], []
    for lo, hi, idx in groups:
        cnt = len(idx)
        if cnt == 0:
            bins.append({"lo": lo, "hi": hi, "count": 0, "conf": None, "acc": None})
            continue
        mo = o[idx].mean(axis=0)
        mt = t[idx].mean(axis=0)
        dd = gap(mo, mt, distance, scalar)
        ds.append(dd)
        ws.append(cnt / n_total)
        bins.append({"lo": lo, "hi": hi, "count": int(cnt), "conf": float(mo[0]), "acc": float(mt[0])})
    ds, ws = np.array(ds), np.array(ws)
    if distance == "l2":
        ece = math.sqrt(float(np.sum(ws * ds * ds)))
    else:
        ece = float(np.sum(ws * ds))
    return ece, float(np.mean(ds)), float(np.max(ds)), bins


def scalar_groups(x, m, binning):
    if binning == "uniform":
        b = uniform_bin(x, m)
        e = uniform_edges(m)
        return [(float(e[i]), float(e[i + 1]), np.nonzero(b == i)[0]) for i in range(m)]
    if binning == "mass":
        return [(None, None, g) for g in mass_groups(x, m)]
    raise ValueError(binning)


def grid_groups(o, m):
    """Uniform grid on a vector lens: M cells per coordinate over the first dim-1 coordinates;
    non-empty cells only, in lexicographic order of the cell index."""
    cells = np.stack([uniform_bin(o[:, j], m) for j in range(o.shape[1] - 1)], axis=1)
    keys, inv = np.unique(cells, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    e = uniform_edges(m)
    out = []
    for ki in range(len(keys)):
        idx = np.nonzero(inv == ki)[0]
        c0 = int(keys[ki][0])
        out.append((float(e[c0]), float(e[c0 + 1]), idx))
    return out


def scalar_metric(o, t, m, binning, distance):
    return binned(o, t, scalar_groups(o[:, 0], m, binning), distance, True, len(o))


def lens_metrics(d, lens, m, binning, distance):
    """Returns ece, ace, mce, bins (bins None when the table is not defined here)."""
    if lens == "top1":
        o, t = lens_top1(d)
        ece, ace, mce, bins = scalar_metric(o, t, m, binning, distance)
        return ece, ace, mce, bins
    if lens.startswith("class:"):
        o, t = lens_class(d, class_index(d, lens.split(":", 1)[1]))
        return scalar_metric(o, t, m, binning, distance)
    if lens == "classwise":
        r = [scalar_metric(*lens_class(d, c), m, binning, distance) for c in range(d.k)]
        return (float(np.mean([x[0] for x in r])), float(np.mean([x[1] for x in r])),
                float(np.mean([x[2] for x in r])), None)
    if lens.startswith("topk:") or lens == "full":
        if binning != "uniform":
            raise SystemExit("reference: vector lenses support uniform (grid) binning only")
        o, t = lens_topk(d, int(lens.split(":")[1])) if lens != "full" else lens_full(d)
        ece, ace, mce, _ = binned(o, t, grid_groups(o, m), distance, False, len(o))
        return ece, ace, mce, None
    raise SystemExit(f"reference: lens {lens} not implemented")


# ---------------------------------------------------------------------------------------------
# Metrics independent of the lens

_erfc = np.frompyfunc(math.erfc, 1, 1)


def normal_cdf(z, erfc=None):
    """Phi(z) = erfc(-z / sqrt 2) / 2."""
    f = erfc if erfc is not None else (lambda a: _erfc(a).astype(np.float64))
    return 0.5 * f(-z / math.sqrt(2.0))


def rece_g(conf, correct, m, sigma, erfc=None):
    """RECE-G (Gupta, Basu & Arora 2023, eq. 6): every confidence spread over the M uniform bins by
    the mass of Normal(c, sigma) on each bin interval, normalised over the M bins; summed over all M
    bins."""
    e = uniform_edges(m)
    cdf = normal_cdf((e[None, :] - conf[:, None]) / sigma, erfc)    # (N, M+1)
    w = cdf[:, 1:] - cdf[:, :-1]                                     # (N, M)
    w = w / w.sum(axis=1, keepdims=True)
    ct = (w * conf[:, None]).sum(axis=0)
    at = (w * correct[:, None]).sum(axis=0)
    return float(np.abs(at - ct).sum() / len(conf))


def rece_m_kde(conf, correct, obs_conf, m, sigma):
    """RECE-M (Gupta, Basu & Arora 2023, eq. 7), kde mixture: sample j's bin weights are the mean
    over its T observations of the Normal(c_jt, sigma) mass on each bin, then normalised over the M
    bins; c_j and acc_j are those of the clean (tta 0) row; summed over all M bins, divided by N."""
    e = uniform_edges(m)
    ct = np.zeros(m)
    at = np.zeros(m)
    for c, a, oc in zip(conf, correct, obs_conf):
        cdf = normal_cdf((e[None, :] - oc[:, None]) / sigma)       # (T, M+1)
        w = (cdf[:, 1:] - cdf[:, :-1]).mean(axis=0)
        w = w / w.sum()
        ct += w * c
        at += w * a
    return float(np.abs(at - ct).sum() / len(conf))


def case_summary(d, s):
    """The "cases" object (docs/json.md): per-case ece/ace/mce under the lens (mean, population sd
    over cases) and, for uniform binning, the dataset reliability histogram: per class c an M x M
    matrix whose [i][j] counts the cases whose observed frequency of c among their pixels with g_c
    in bin i falls in frequency bin j (cases with no pixel in bin i are not counted)."""
    names = list(dict.fromkeys(d.case))          # order of first appearance
    per = {"ece": [], "ace": [], "mce": []}
    m = s.bins
    hist = np.zeros((d.k, m, m), dtype=np.int64)
    for name in names:
        rows = np.nonzero(d.case == name)[0]
        sub = Data(d.path, d.prob[rows], d.label[rows], d.class_names, len(rows))
        ece, ace, mce, _ = lens_metrics(sub, s.lens, m, s.binning, s.distance)
        per["ece"].append(ece)
        per["ace"].append(ace)
        per["mce"].append(mce)
        for c in range(d.k):
            g = sub.prob[:, c]
            y = (sub.label == c).astype(np.float64)
            b = uniform_bin(g, m)
            for i in np.unique(b):
                freq = float(y[b == i].mean())
                hist[c, i, uniform_bin(np.array([freq]), m)[0]] += 1
    out = {"count": len(names),
           "metrics": {k: {"mean": float(np.mean(v)), "sd": float(np.std(v))} for k, v in per.items()}}
    if s.binning == "uniform":
        out["reliability_histogram"] = hist.tolist()
    return out


def brier(prob, label):
    y = np.zeros_like(prob)
    y[np.arange(len(prob)), label] = 1.0
    return float(((prob - y) ** 2).sum(axis=1).mean())


def nll(prob, label):
    g = prob[np.arange(len(prob)), label]
    return float(-np.mean(np.log(np.maximum(g, 1e-15))))


def aece(conf, correct, m):
    o = np.stack([conf, 1.0 - conf], 1)
    t = np.stack([correct, 1.0 - correct], 1)
    return scalar_metric(o, t, m, "mass", "tvd")[0]


def sce(d, m):
    return float(np.mean([scalar_metric(*lens_class(d, c), m, "uniform", "tvd")[0]
                          for c in range(d.k)]))


# ---------------------------------------------------------------------------------------------
# The estimators built to be less biased (docs/metrics.md, "Which estimator?"), on one value f
# and a 0/1 target y.

SMECE_EPS = 0.001
NEWER = ["smece", "smece_sigma", "l2ce", "l2ce_debiased", "ece_sweep", "ece_sweep_bins"]


def _smece_images(f, y, s):
    """Centres and weights of the reflected kernel's images 2k +- f within 12 sd of [0, 1]."""
    kmax = int(math.ceil((12 * s + 1) / 2)) + 1
    c = np.concatenate([2 * k + sg * f for k in range(-kmax, kmax + 1) for sg in (1.0, -1.0)])
    w = np.tile((f - y) / len(f), 2 * (2 * kmax + 1))
    keep = (c > -12 * s) & (c < 1 + 12 * s)
    return c[keep], w[keep]


def smece_at(f, y, s):
    """smECE_s = integral over [0, 1] of |(1/n) sum r_i K_s(t, f_i)|: the smoothed residual on a
    grid of step s/32 (numpy), each sign change refined by scipy's brentq on the exact sum, and
    the integral between the roots from normal cdf differences (scipy.special.ndtr)."""
    from scipy.optimize import brentq
    from scipy.special import ndtr
    c, w = _smece_images(np.asarray(f, float), np.asarray(y, float), s)

    def g(t):
        t = np.atleast_1d(t)
        out = np.empty(len(t))
        for i in range(0, len(t), 512):
            z = (t[i:i + 512, None] - c[None, :]) / s
            out[i:i + 512] = (w[None, :] * np.exp(-0.5 * z * z)).sum(1)
        return out / (s * math.sqrt(2 * math.pi))

    t = np.linspace(0.0, 1.0, int(math.ceil(32 / s)) + 1)
    gt = g(t)
    cuts = [0.0]
    sg = np.sign(gt)   # signs, not products: the tails underflow (a product of two would be 0)
    for i in range(1, len(t)):
        if sg[i] == 0 and sg[i - 1] != 0:
            cuts.append(t[i])         # a zero on the grid (or a stretch the kernels do not reach)
        elif sg[i - 1] * sg[i] < 0:
            cuts.append(brentq(lambda x: g(np.array([x]))[0], t[i - 1], t[i], xtol=1e-15))
    cuts.append(1.0)

    def integral(a, b):
        hi, lo = (b - c) / s, (a - c) / s
        # the tail on the side that keeps the digits
        d = np.where(lo >= 0, ndtr(-lo) - ndtr(-hi), ndtr(hi) - ndtr(lo))
        return float((w * d).sum())

    return float(sum(abs(integral(a, b)) for a, b in zip(cuts[:-1], cuts[1:]) if b > a))


def smece_auto(f, y):
    """The fixed point s = smECE_s of relplot's bandwidth search (its predicate s < eps or
    s < smECE_s), by brentq on s - smECE_s over [eps, 1]; s = eps when smECE_eps <= eps."""
    from scipy.optimize import brentq

    def h(s):
        return s - smece_at(f, y, s)
    if h(SMECE_EPS) >= 0:
        s = SMECE_EPS
    elif h(1.0) < 0:
        s = 1.0
    else:
        s = brentq(h, SMECE_EPS, 1.0, xtol=1e-15)
    return smece_at(f, y, s), s


SMECE_CURVE_POINTS = 200   # relplot's config.plot_mesh_pts


def smece_curve(f, y, s, points=SMECE_CURVE_POINTS):
    """relplot's smoothed reliability diagram (diagrams.py prepare_rel_diagram with
    plot_confidence_band=False): on t = linspace(0, 1, points), the Nadaraya-Watson smoothing of
    y itself, mu(t) = sum K_s(t, f_i) y_i / sum K_s(t, f_i) (KernelSmoother, not
    CenteredRegressor), and the kde of f, density(t) = sum K_s(t, f_i) / n, with the reflected
    Gaussian K_s(t, f) = sum over k of phi_s(t - f - 2k) + phi_s(t + f - 2k), every image of
    every sample summed (|k| up to 12 s + 2) — not relplot's grids, nor its 1e-4/1e-5 guards.
    Returns (t, mu, density); mu is nan where the density underflows to 0."""
    f = np.asarray(f, float)
    y = np.asarray(y, float)
    t = np.linspace(0.0, 1.0, points)
    kmax = int(math.ceil(12 * s)) + 2
    num = np.zeros(points)
    den = np.zeros(points)
    for k in range(-kmax, kmax + 1):
        for c in (2 * k + f, 2 * k - f):
            z = (t[:, None] - c[None, :]) / s
            e = np.exp(-0.5 * z * z) / (s * math.sqrt(2 * math.pi))
            num += e @ y
            den += e.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = np.where(den > 0, num / den, np.nan)
    return t, mu, den / len(f)


def write_smece_curve(out):
    """tests/fixtures/smece_curve.tsv for test_estimators (cs_smece_curve through cs_evaluate):
    every sample, lenses top1 and class:1, bandwidths smECE's sigma* (this file's root, written
    with repr so C reads the same double) and 0.05; every 9th mesh point and the last."""
    lines = ["# path\tlens\tsigma\tj\tmu\tdensity  (tests/oracles/reference.py --write-smece-curve)"]
    for path in sample_files():
        d = load(os.path.join(ROOT, path))
        for lens in ("top1", "class:1"):
            f, y = scalar_pair(d, lens)
            for s in (smece_auto(f, y)[1], 0.05):
                t, mu, den = smece_curve(f, y, s)
                for j in list(range(0, SMECE_CURVE_POINTS, 9)) + [SMECE_CURVE_POINTS - 1]:
                    lines.append(f"{path}\t{lens}\t{s!r}\t{j}\t{mu[j]!r}\t{den[j]!r}")
        print(f"  {path}", file=sys.stderr)
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"wrote {out}: {len(lines) - 1} lines", file=sys.stderr)


def l2ce(f, y, m):
    """Kumar et al.: plug-in and debiased (closed form) L2 CE over equal-mass groups
    (stable sort, array_split; groups of one add nothing to the debiased sum)."""
    plug = deb = 0.0
    n = len(f)
    for g in np.array_split(np.argsort(f, kind="stable"), m):
        if len(g) == 0:
            continue
        fm, ym = f[g].mean(), y[g].mean()
        plug += len(g) / n * (fm - ym) ** 2
        if len(g) >= 2:
            deb += len(g) / n * ((fm - ym) ** 2 - ym * (1 - ym) / (len(g) - 1))
    return math.sqrt(plug), math.sqrt(max(deb, 0.0))


def ece_sweep(f, y, mass, p):
    """Roelofs et al.'s monotonic sweep, written after caltrain's em/ew_monotonic_sweep: bins
    b = 2..n-1 until the first whose non-empty bins' mean y decrease; the ECE (l_p) of the
    last monotone b (1 bin when b = 2 fails). Equal mass: sorted position i in bin i*b//n
    (stable sort); equal width: calscope's (i/b, (i+1)/b] bins."""
    n = len(f)
    order = np.argsort(f, kind="stable")
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)

    def bins_of(b):
        return (pos * b) // n if mass else uniform_bin(f, b)

    def ece_mono(bins, b):
        tot, last, mono = 0.0, -1.0, True
        for k in range(b):
            sel = bins == k
            if not sel.any():
                continue
            ym, fm = y[sel].mean(), f[sel].mean()
            if ym < last:
                mono = False
            last = ym
            tot += sel.sum() * abs(ym - fm) ** p
        return (tot / n) ** (1.0 / p), mono
    best = 1
    for b in range(2, n):
        if not ece_mono(bins_of(b), b)[1]:
            break
        best = b
    return ece_mono(bins_of(best) if best > 1 else np.zeros(n, dtype=np.int64), best)[0], best


def scalar_pair(d, lens):
    """(f, y) of the top1 and class:C lenses; None for the others."""
    if lens == "top1":
        return top1_parts(d.prob, d.label)
    if lens.startswith("class:"):
        c = class_index(d, lens.split(":", 1)[1])
        return d.prob[:, c].copy(), (d.label == c).astype(np.float64)
    return None


_SMECE_CACHE = {}


def newer_metrics(d, s):
    out = dict.fromkeys(("smece", "smece_sigma", "l2ce", "l2ce_debiased", "ece_sweep", "ece_sweep_bins"))
    pair = scalar_pair(d, s.lens)
    if pair is None:
        return out
    f, y = pair
    key = (d.path, s.lens, s.smece_sigma)
    if key not in _SMECE_CACHE:
        _SMECE_CACHE[key] = (smece_at(f, y, s.smece_sigma), s.smece_sigma) if s.smece_sigma else smece_auto(f, y)
    out["smece"], out["smece_sigma"] = _SMECE_CACHE[key]
    out["l2ce"], out["l2ce_debiased"] = l2ce(f, y, s.bins)
    if s.distance in ("tvd", "l2"):
        out["ece_sweep"], out["ece_sweep_bins"] = ece_sweep(f, y, s.binning == "mass", 1.0 if s.distance == "tvd" else 2.0)
    return out


# ---------------------------------------------------------------------------------------------

def parse_flags(flags):
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--lens", default="top1")
    ap.add_argument("--bins", type=int, default=15)
    ap.add_argument("--binning", default="uniform")
    ap.add_argument("--sigma", type=float, default=0.1)
    ap.add_argument("--distance", default="tvd")
    ap.add_argument("--smece-sigma", type=float, default=0.0)
    return ap.parse_args(flags)


def evaluate(d, s):
    conf, correct = top1_parts(d.prob, d.label)
    ece, ace, mce, bins = lens_metrics(d, s.lens, s.bins, s.binning, s.distance)
    metrics = {
        "accuracy": float(correct.mean()),
        "ece": ece, "ace": ace, "mce": mce,
        "rece_g": rece_g(conf, correct, s.bins, s.sigma),
        "rece_m": (rece_m_kde(conf, correct, d.obs_conf, s.bins, s.sigma)
                   if d.obs_conf is not None else None),
        "brier": brier(d.prob, d.label),
        "nll": nll(d.prob, d.label),
        "aece": aece(conf, correct, s.bins),
        "sce": sce(d, s.bins),
    }
    metrics.update(newer_metrics(d, s))
    skip = {}
    if s.lens != "top1":
        # The metric itself is still the top-1 RECE-G of the paper (recorded above), but the
        # paper does not say what RECE-G means under another lens; calscope computes it on the
        # lens's first coordinate (class, classwise) or not at all (vector lenses), so it is not
        # compared there.
        skip["rece_g"] = "Gupta, Basu & Arora 2023 define RECE-G on the top-1 confidence only"
        skip["rece_m"] = "Gupta, Basu & Arora 2023 define RECE-M on the top-1 confidence only"
    if metrics["smece"] is None:
        for k in NEWER:
            skip[k] = "defined on the top1 and class:C lenses only (calscope: null)"
    if metrics["ece_sweep"] is None:
        for k in ("ece_sweep", "ece_sweep_bins"):
            skip[k] = "ECE_sweep's norm is l1 or l2 (calscope: null for max)"
    return {
        "skip": skip,
        "path": d.path, "rows": d.rows, "samples": d.n, "classes": d.k, "rejected": 0,
        "settings": {"lens": s.lens, "bins": s.bins, "binning": s.binning, "sigma": s.sigma,
                     "distance": s.distance},
        "metrics": metrics,
        "bins": bins,
        "cases": case_summary(d, s) if d.case is not None else None,
    }


def sample_files():
    sd = os.path.join(ROOT, "samples")
    return sorted(os.path.join("samples", f) for f in os.listdir(sd)
                  if f.endswith(".csv") and os.path.isfile(os.path.join(sd, f)))


def write(out):
    entries = []
    for f in sample_files():
        d = load(os.path.join(ROOT, f))
        d.path = f
        for name, flags in SETTINGS:
            r = evaluate(d, parse_flags(flags))
            r.update({"name": name, "flags": flags})
            entries.append(r)
        print(f"  {f}: {len(SETTINGS)} settings", file=sys.stderr)
    doc = {
        "generated_by": "tests/oracles/reference.py --write (independent numpy reference of docs/metrics.md)",
        "tolerance": 1e-12,
        "compare_metrics": ["accuracy", "ece", "ace", "mce", "rece_g", "brier", "nll"] + NEWER,
        # the root-found smooth ECE and its bandwidth: 1e-9
        "metric_tolerance": {"smece": 1e-9, "smece_sigma": 1e-9},
        "optional_metrics": ["aece", "sce", "rece_m"],
        "entries": entries,
    }
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as fh:
        json.dump(doc, fh, indent=1, allow_nan=False)
        fh.write("\n")
    print(f"wrote {out}: {len(entries)} entries", file=sys.stderr)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--write-smece-curve", metavar="TSV", nargs="?",
                    const=os.path.join(ROOT, "tests", "fixtures", "smece_curve.tsv"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "expected", "reference.json"))
    ap.add_argument("--lens", default="top1")
    ap.add_argument("--bins", type=int, default=15)
    ap.add_argument("--binning", default="uniform")
    ap.add_argument("--sigma", type=float, default=0.1)
    ap.add_argument("--distance", default="tvd")
    ap.add_argument("--smece-sigma", type=float, default=0.0)
    ap.add_argument("files", nargs="*")
    args = ap.parse_args(argv)
    if args.write:
        write(args.out)
        return 0
    if args.write_smece_curve:
        write_smece_curve(args.write_smece_curve)
        return 0
    res = [evaluate(load(f), args) for f in args.files]
    json.dump({"files": res}, sys.stdout, indent=1, allow_nan=False)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
