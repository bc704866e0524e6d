#!/usr/bin/python3
"""Independent numpy re-implementations of the calibration libraries that `calscope report
--compat NAME` reproduces. None of these libraries can be installed here (no PyPI), so each code
path is transcribed from the library's public source, keeping its array operations (torch.linspace
is torch's own, python3-torch; tests/oracles/torchmetrics_check.py runs torchmetrics' whole code path on
torch and compares calscope's numbers bit for bit):

  torchmetrics  Lightning-AI/torchmetrics src/torchmetrics/functional/classification/
                calibration_error.py (660df0d): _binning_bucketize, _ce_compute,
                _multiclass_calibration_error_update / _binary_calibration_error_update.
                torch.linspace float32 = torch's own; torch.bucketize(right=True) =
                np.searchsorted(side='right');
                scatter_add_ in float32 = np.add.at on float32 arrays.
  netcal        EFS-OpenSource/calibration-framework netcal/metrics/Miscalibration.py (69f24a5):
                _prepare_input, _prepare_bins, binning (np.histogramdd + scipy
                binned_statistic_dd), process.
  relplot       apple/ml-calibration src/relplot/metrics.py: binning, binnedECE.
  verified      p-lambda/verified_calibration calibration/utils.py: get_ece, get_ece_em,
                lower_bound_scaling_ce(p=1, debias=False, mode='marginal').
  robustcal     MayankGupta73/Robust-Calibration calibration_library/metrics.py: ECELoss,
                MCELoss, AdaptiveECELoss, SCELoss, ACELoss, GECELoss (scipy.stats.t / norm).
  monai         Project-MONAI/MONAI monai/metrics/calibration.py: calibration_binning,
                CalibrationErrorMetric._compute_tensor.

Usage: compat_reference.py FILE [--bins M] [--sigma S] [--lens top1|classwise]
                           [--binning uniform|mass] [--distance tvd|l2]
Prints {"torchmetrics": {"ece": ..., ..., "bins": [...] | null}, ...} (null = the library has
no such number or fails) in the key layout of the "compat" object of `calscope report --format
json`. "bins" is the library's per-bin table behind the reported ece (with --distance l2 behind
its ace / mce) as `calscope report --compat NAME` prints it: {"lo", "hi", "count", "conf",
"acc", "gap"} per bin of the library, empty bins included, with the library's values for them
(0, or null where it has NaN / nothing); class-wise, bin j of every class pooled (counts summed,
conf / acc pooled means, lo / hi the widest over classes); null when it has no table.
"""
import argparse
import json
import math

import numpy as np
import pandas as pd
import scipy.stats
from scipy.stats import binned_statistic_dd

METRICS = ["ece", "ace", "mce", "rms", "aece", "sce", "rece_g", "rece_g_gaussian"]


def fnum(v):
    return None if v is None or not math.isfinite(float(v)) else float(v)


def row(lo, hi, count, conf, acc, gap):
    return {"lo": fnum(lo), "hi": fnum(hi), "count": int(count), "conf": fnum(conf),
            "acc": fnum(acc), "gap": fnum(gap)}


def pool(per_class, empty):
    """Bin j of every class together: per_class is a list (one per class) of lists of
    (lo, hi, count, sum_conf, sum_acc); empty = the (conf, acc, gap) of an empty pooled bin."""
    nb = max(len(c) for c in per_class)
    out = []
    for j in range(nb):
        parts = [c[j] for c in per_class if j < len(c)]
        n = sum(p[2] for p in parts)
        sc = sum(p[3] for p in parts); sa = sum(p[4] for p in parts)
        lo = min(p[0] for p in parts); hi = max(p[1] for p in parts)
        if n:
            out.append(row(lo, hi, n, sc / n, sa / n, abs(sc / n - sa / n)))
        else:
            out.append(row(lo, hi, 0, *empty))
    return out


def load(path):
    """Probabilities and labels of the samples calscope measures (tta == 0 rows of a long
    file; logit columns through a softmax)."""
    df = pd.read_csv(path, float_precision="round_trip")  # correctly rounded, as strtod
    cols = {c.lower(): c for c in df.columns}
    if "tta" in cols:
        df = df[df[cols["tta"]] == 0]
    lab = df[cols.get("label", cols.get("y", cols.get("target")))].to_numpy()
    pc = [c for c in df.columns if c.lower().startswith(("p_", "prob_"))]
    lc = [c for c in df.columns if c.lower().startswith("logit_")]
    if pc:
        P = df[pc].to_numpy(dtype=np.float64)
    else:
        z = df[lc].to_numpy(dtype=np.float64)
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        P = e / e.sum(axis=1, keepdims=True)
    return P, lab.astype(np.int64)


# ---------------------------------------------------------------- torchmetrics (float32)
def torch_linspace_f32(start, end, steps):
    """torch.linspace(start, end, steps) in float32: torch's own CPU kernel (vectorised, so the
    edges are not the scalar formula; tests/oracles/torchmetrics_check.py checks calscope's emulation).
    Without torch, the scalar formula: some edges one float32 step off for M >= 15, inside the
    1e-6 this reference is compared to."""
    try:
        import torch
    except ImportError:
        start, end = np.float32(start), np.float32(end)
        step = np.float32(end - start) / np.float32(steps - 1)
        return np.array([start + step * np.float32(i) if i < steps // 2
                         else end - step * np.float32(steps - i - 1) for i in range(steps)], dtype=np.float32)
    return torch.linspace(start, end, steps, dtype=torch.float32).numpy()


def tm_ce(conf, acc, M):
    bounds = torch_linspace_f32(0, 1, M + 1)
    idx = np.searchsorted(bounds, conf, side="right") - 1
    cnt = np.zeros(M + 1, np.float32); cs = np.zeros(M + 1, np.float32); as_ = np.zeros(M + 1, np.float32)
    np.add.at(cnt, idx, np.float32(1)); np.add.at(cs, idx, conf); np.add.at(as_, idx, acc)
    with np.errstate(invalid="ignore", divide="ignore"):
        cb = np.nan_to_num(cs / cnt); ab = np.nan_to_num(as_ / cnt)
    prop = cnt / cnt.sum(dtype=np.float32)
    l1 = np.sum(np.abs(ab - cb) * prop, dtype=np.float32)
    mx = np.max(np.abs(ab - cb))
    l2 = np.sum(np.power(ab - cb, 2) * prop, dtype=np.float32)
    # the M + 1 entries: [bounds[b], bounds[b+1]) and the extra one [1, 1]; empty ones 0
    table = [row(bounds[b], bounds[min(b + 1, M)], cnt[b], cb[b], ab[b], np.abs(ab[b] - cb[b]))
             for b in range(M + 1)]
    return float(l1), float(mx), float(np.sqrt(l2) if l2 > 0 else 0.0), table


def torchmetrics(P, y, a, binary):
    r = dict.fromkeys(METRICS + ["bins"])
    if binary:
        if P.shape[1] != 2:
            return r
        conf = P[:, 1].astype(np.float32); acc = (y == 1).astype(np.float32)
    else:
        P32 = P.astype(np.float32)
        conf = P32.max(axis=1); acc = (P32.argmax(axis=1) == y).astype(np.float32)
    l1, mx, rms, table = tm_ce(conf, acc, a.bins)
    if a.lens == "top1" and a.binning == "uniform":
        r["rms"] = rms
        r["ece"] = rms if a.distance == "l2" else l1
        r["mce"] = mx
        r["bins"] = table
    return r


# ---------------------------------------------------------------- netcal
def netcal(P, y, a):
    r = dict.fromkeys(METRICS + ["bins"])
    eps = np.finfo(float).eps
    M = a.bins
    if len(np.unique(y)) <= 2:
        if P.shape[1] != 2:
            return r          # measure(P, y) raises ValueError in np.histogramdd
        X = np.clip(P[:, 1], eps, 1 - eps).reshape(-1, 1)
        matched = np.array(y)
    else:
        Xc = np.clip(P, eps, 1 - eps)
        matched = np.argmax(Xc, axis=1) == y
        X = np.max(Xc, axis=1, keepdims=True)

    def measure(bounds):
        n_hist, _ = np.histogramdd(X, bins=[bounds])
        acc, _, _ = binned_statistic_dd(X, matched, statistic="mean", bins=[bounds])
        conf, _, _ = binned_statistic_dd(X, X[:, 0], statistic="mean", bins=[bounds])
        acc[n_hist < 1] = np.nan; conf[n_hist < 1] = np.nan
        acc, conf = np.nan_to_num(acc, nan=0.0), np.nan_to_num(conf, nan=0.0)
        dev = np.abs(acc - conf)
        ece = np.sum(dev * n_hist / np.sum(n_hist))
        ace = np.sum(dev) / np.count_nonzero(n_hist)
        table = [row(bounds[b], bounds[b + 1], n_hist[b], conf[b], acc[b], dev[b]) for b in range(M)]
        return float(ece), float(ace), float(np.max(dev)), table

    u = measure(np.linspace(0.0, 1.0, M + 1))
    try:
        q = np.quantile(X[:, 0], q=np.linspace(0.0, 1.0, M + 1), axis=0)
        q[0] = 0.0; q[-1] = 1.0
        m = measure(q)
    except ValueError:
        m = (None, None, None, None)
    r["aece"] = m[0]
    if a.lens == "top1":
        e = m if a.binning == "mass" else u
        r["ece"], r["ace"], r["mce"], r["bins"] = e
        if a.distance == "l2":
            r["ece"] = None
    return r


# ---------------------------------------------------------------- relplot
def relplot(P, y, a):
    r = dict.fromkeys(METRICS + ["bins"])
    if a.lens != "top1" or a.binning != "uniform" or a.distance != "tvd":
        return r
    f = P.max(axis=-1).reshape(-1)
    yy = (P.argmax(axis=-1) == y) * 1.0
    bin_size = 1.0 / a.bins
    bi = ((f + 0) / bin_size).astype(int)
    bins = np.zeros(int((0 + 1) / bin_size) + 1)
    np.add.at(bins, bi, f - yy)
    r["ece"] = float(np.abs(bins).sum() / len(f))
    # relplot keeps only sum(f - y) per bin; count and means counted beside it
    cnt = np.zeros(len(bins)); sf = np.zeros(len(bins)); sy = np.zeros(len(bins))
    np.add.at(cnt, bi, 1.0); np.add.at(sf, bi, f); np.add.at(sy, bi, yy)
    M = a.bins
    table = []
    for b in range(len(bins)):
        lo, hi = (b * bin_size, min((b + 1) * bin_size, 1.0)) if b < M else (1.0, 1.0)
        if cnt[b]:
            table.append(row(lo, hi, cnt[b], sf[b] / cnt[b], sy[b] / cnt[b], abs(bins[b]) / cnt[b]))
        else:
            table.append(row(lo, hi, 0, None, None, 0.0))
    r["bins"] = table
    return r


# ---------------------------------------------------------------- verified_calibration
def v_equal_bins(probs, num_bins):
    sp = sorted(probs)
    if num_bins > len(sp):
        num_bins = len(sp)
    chunks = [list(c) for c in np.array_split(sp, num_bins)]
    bins = [(chunks[i][-1] + chunks[i + 1][0]) / 2.0 for i in range(len(chunks) - 1)]
    bins.append(1.0)
    return sorted(list(set(bins)))


def v_equal_prob_bins(probs, num_bins):
    return [i * 1.0 / num_bins for i in range(1, num_bins + 1)]


def v_plugin(probs, labels, bins):
    data = np.array(list(zip(probs, labels)))
    idx = np.searchsorted(bins, data[:, 0])
    order = np.argsort(idx)
    binned = np.split(data[order], np.searchsorted(idx[order], list(range(1, len(bins)))))
    sizes = [len(b) for b in binned]
    n = sum(sizes)
    errs = [0.0 if len(b) == 0 else abs(np.mean(b[:, 0]) - np.mean(b[:, 1])) for b in binned]
    # bin j is (bins[j-1], bins[j]], bin 0 from 0: (lo, hi, count, sum of probs, sum of labels)
    parts = [(bins[j - 1] if j else 0.0, bins[j], len(b), float(np.sum(b[:, 0])) if len(b) else 0.0,
              float(np.sum(b[:, 1])) if len(b) else 0.0) for j, b in enumerate(binned)]
    return float(np.dot([s * 1.0 / n for s in sizes], errs)), parts


def v_table(parts):
    return pool([parts], (None, None, 0.0))


def verified(P, y, a):
    r = dict.fromkeys(METRICS + ["bins"])
    M = a.bins
    conf = np.max(P, 1); correct = (np.argmax(P, 1) == y).astype(P.dtype)
    top_u, tu = v_plugin(conf, correct, v_equal_prob_bins(conf, M))
    top_m, tm = v_plugin(conf, correct, v_equal_bins(conf, M))
    r["aece"] = top_m
    mu = mm = pu = pm = None
    if np.min(y) == 0 and np.max(y) == P.shape[1] - 1:
        oh = np.zeros_like(P); oh[np.arange(len(y)), y] = 1
        cu = [v_plugin(P[:, k], oh[:, k], v_equal_prob_bins(P[:, k], M)) for k in range(P.shape[1])]
        cm = [v_plugin(P[:, k], oh[:, k], v_equal_bins(P[:, k], M)) for k in range(P.shape[1])]
        mu = float(np.mean([c[0] for c in cu])); mm = float(np.mean([c[0] for c in cm]))
        pu = pool([c[1] for c in cu], (None, None, 0.0)); pm = pool([c[1] for c in cm], (None, None, 0.0))
    r["sce"] = mu
    if a.distance != "l2":
        if a.lens == "classwise":
            r["ece"] = mm if a.binning == "mass" else mu
            r["bins"] = pm if a.binning == "mass" else pu
        else:
            r["ece"] = top_m if a.binning == "mass" else top_u
            r["bins"] = v_table(tm if a.binning == "mass" else tu)
    return r


# ---------------------------------------------------------------- robustcal
def rc_bins(M, probabilities=None):
    if probabilities is None:
        b = np.linspace(0, 1, M + 1)
    else:
        bin_n = int(len(probabilities) / M)
        s = np.sort(probabilities)
        b = np.append(np.array([s[i * bin_n] for i in range(M)]), 1.0)
    return b[:-1], b[1:]


def rc_ce(conf, acc, lowers, uppers, parts=None):
    prop = np.zeros(len(lowers)); score = np.zeros(len(lowers))
    for i, (lo, hi) in enumerate(zip(lowers, uppers)):
        in_bin = np.greater(conf, lo.item()) * np.less_equal(conf, hi.item())
        prop[i] = np.mean(in_bin)
        if prop[i].item() > 0:
            score[i] = np.abs(np.mean(conf[in_bin]) - np.mean(acc[in_bin]))
        if parts is not None:
            parts.append((float(lo), float(hi), int(np.sum(in_bin)), float(np.sum(conf[in_bin])),
                          float(np.sum(acc[in_bin]))))
    return float(np.dot(prop, score)), float(np.max(score))


def rc_gece(conf, acc, M, sigma, distr_name):
    lowers, uppers = rc_bins(M)
    n = len(conf)
    sample_bin_map = np.zeros(n); bin_prop = np.zeros(M)
    for i, (lo, hi) in enumerate(zip(lowers, uppers)):
        in_bin = np.greater(conf, lo.item()) * np.less_equal(conf, hi.item())
        sample_bin_map[in_bin] = i
        bin_prop[i] = np.mean(in_bin)
    cg = np.zeros(M); ag = np.zeros(M)
    # the library freezes a distribution per sample (scipy.stats.norm(loc, scale)); its cdf is
    # the unfrozen cdf with the same arguments, bit for bit, without ~1 ms of freezing each
    if distr_name == "gaussian":
        cdf = lambda x, c: scipy.stats.norm.cdf(x, loc=c, scale=sigma)
    else:
        cdf = lambda x, c: scipy.stats.t.cdf(x, 3, loc=c, scale=sigma)
    for i in range(n):
        g = cdf(uppers, conf[i]) - cdf(lowers, conf[i])
        if np.sum(g) == 0:
            g = np.zeros(M); g[int(sample_bin_map[i])] = 1.0
        cg += conf[i] * (g / np.sum(g)); ag += acc[i] * (g / np.sum(g))
    score = np.where(bin_prop > 0, np.abs(cg - ag), 0.0)
    return float(np.sum(score) / n)


def robustcal(P, y, a):
    r = dict.fromkeys(METRICS + ["bins"])
    M = a.bins
    conf = np.max(P, axis=1); acc = np.equal(np.argmax(P, axis=1), y)
    tu, tm = [], []
    ece, mce = rc_ce(conf, acc, *rc_bins(M), tu)
    aece, _ = rc_ce(conf, acc, *rc_bins(M, conf), tm)
    K = P.shape[1]
    cu, cm = [[] for _ in range(K)], [[] for _ in range(K)]
    sce = sum(rc_ce(P[:, i], (y == i).astype(float), *rc_bins(M), cu[i])[0] for i in range(K)) / K
    ace = sum(rc_ce(P[:, i], (y == i).astype(float), *rc_bins(M, P[:, i]), cm[i])[0] for i in range(K)) / K
    if a.distance != "l2":   # bin_conf / bin_acc start at 0: empty bins 0
        parts = (cm if a.binning == "mass" else cu) if a.lens == "classwise" else [tm if a.binning == "mass" else tu]
        r["bins"] = pool(parts, (0.0, 0.0, 0.0))
    r["aece"], r["sce"] = aece, sce
    r["rece_g"] = rc_gece(conf, acc, M, a.sigma, "t")
    r["rece_g_gaussian"] = rc_gece(conf, acc, M, a.sigma, "gaussian")
    if a.distance != "l2":
        if a.lens == "classwise":
            r["ece"] = ace if a.binning == "mass" else sce
        else:
            r["ece"] = aece if a.binning == "mass" else ece
            if a.binning == "uniform":
                r["mce"] = mce
    return r


# ---------------------------------------------------------------- MONAI (float32)
def monai_channel(vp, vg, M):
    bounds = torch_linspace_f32(0.0, 1.0 + float(np.finfo(np.float32).eps), M + 1)
    idx = np.minimum(np.searchsorted(bounds[1:], vp, side="left"), M - 1)
    cnt = np.zeros(M, np.float32); sp = np.zeros(M, np.float32); sg = np.zeros(M, np.float32)
    np.add.at(cnt, idx, np.float32(1)); np.add.at(sp, idx, vp); np.add.at(sg, idx, vg)
    safe = np.maximum(cnt, np.float32(1))
    mp = sp / safe; mg = sg / safe
    mp[cnt == 0] = np.nan; mg[cnt == 0] = np.nan
    d = np.abs(mp - mg)
    ece = np.nansum(d * cnt, dtype=np.float32) / np.sum(cnt, dtype=np.float32)
    table = [row(bounds[b], bounds[b + 1], cnt[b], mp[b], mg[b], d[b]) for b in range(M)]
    parts = [(float(bounds[b]), float(bounds[b + 1]), int(cnt[b]), float(sp[b]), float(sg[b])) for b in range(M)]
    return np.float32(ece), np.float32(np.nanmean(d)), np.float32(np.nanmax(d)), table, parts


def monai(P, y, a):
    r = dict.fromkeys(METRICS + ["bins"])
    M = a.bins
    P32 = P.astype(np.float32)
    oh = np.zeros_like(P32); oh[np.arange(len(y)), y] = 1
    ch = [monai_channel(P32[:, c], oh[:, c], M) for c in range(P.shape[1])]
    cw = [float(np.mean(np.array([c[j] for c in ch], dtype=np.float32), dtype=np.float32)) for j in range(3)]
    conf = np.max(P, axis=1).astype(np.float32); cor = (np.argmax(P, axis=1) == y).astype(np.float32)
    tch = monai_channel(conf, cor, M)
    top = [float(v) for v in tch[:3]]
    r["sce"] = cw[0]
    if a.binning == "uniform":
        e = cw if a.lens == "classwise" else top
        r["ece"], r["ace"], r["mce"] = e
        r["bins"] = pool([c[4] for c in ch], (None, None, None)) if a.lens == "classwise" else tch[3]
        if a.distance == "l2":
            r["ece"] = None
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--bins", type=int, default=15)
    ap.add_argument("--sigma", type=float, default=0.1)
    ap.add_argument("--lens", default="top1")
    ap.add_argument("--binning", default="uniform")
    ap.add_argument("--distance", default="tvd")
    a = ap.parse_args()
    P, y = load(a.file)
    out = {
        "torchmetrics": torchmetrics(P, y, a, False),
        "torchmetrics-binary": torchmetrics(P, y, a, True),
        "netcal": netcal(P, y, a),
        "relplot": relplot(P, y, a),
        "verified": verified(P, y, a),
        "robustcal": robustcal(P, y, a),
        "monai": monai(P, y, a),
    }
    for lib in out.values():
        for k, v in lib.items():
            if k != "bins" and v is not None and not math.isfinite(v):
                lib[k] = None
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
