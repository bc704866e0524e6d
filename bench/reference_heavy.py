"""numpy references for the heavier `make bench` cases (imported by bench/reference_bench.py):
top-k ECE bars and classwise ECE on the 50,000 x 1000 dataset that bench_engine generates in
memory (and writes with -w as raw binary), and the size / bins variance curves on the first
50,000 rows of the 1M x 10 file. Each implements the formulas of docs/metrics.md directly; they
are written for numpy's strengths (one sort of the matrix shared by every k, per-sample bins and
RECE-G weights computed once, bincount for the bin sums), not as a line-by-line port of the C.

Random draws differ from calscope's (numpy's Generator, not cs_rng), so only the values on all
rows are compared; the timing compares the same amount of work.
"""
import math
import os
import time

import numpy as np

M = 15
SIGMA = 0.1


def read_wide(path):
    """Raw file written by `bench_engine -w`: uint64 n, uint64 k, int32 label[n], float64 prob[n*k]."""
    with open(path, "rb") as f:
        n, k = (int(v) for v in np.fromfile(f, dtype="<u8", count=2))
        y = np.fromfile(f, dtype="<i4", count=n).astype(np.int64)
        P = np.fromfile(f, dtype="<f8", count=n * k).reshape(n, k)
    if P.shape != (n, k):
        raise ValueError(f"{path}: truncated")
    return P, y


def edges_of(m):
    return np.arange(m + 1, dtype=np.float64) / m


def ubin(x, m):
    """Uniform bin (i/M, (i+1)/M], 0 in bin 0, exact at decimal edges."""
    b = np.searchsorted(edges_of(m), x, side="left") - 1
    return np.clip(b, 0, m - 1)


# ---- top-k ECE bars --------------------------------------------------------------------------

def topk_shared(P, y, kmax, m=M):
    """The work shared by every k: rows sorted descending (first kmax), the label's position in
    that order (ties: lower class index first) and the uniform cell of every sorted coordinate."""
    n, K = P.shape
    S = np.ascontiguousarray(np.sort(P, axis=1)[:, ::-1][:, :kmax])
    gy = P[np.arange(n), y]
    cls = np.arange(K)
    rank = (P > gy[:, None]).sum(axis=1) + ((P == gy[:, None]) & (cls[None, :] < y[:, None])).sum(axis=1)
    cells = ubin(S, m).astype(np.uint8)
    return S, rank, cells


def topk_ece(S, rank, cells, k):
    """ECE of lens topk:k, tvd, uniform grid of M cells per coordinate over the first dim-1 = k
    coordinates (only non-empty cells), Kirchenbauer, Oaks & Heim 2022 eq. 4."""
    n = S.shape[0]
    o = S[:, :k]
    rem = 1.0 - o.sum(axis=1)
    hot = np.minimum(rank, k)
    _, inv = np.unique(cells[:, :k], axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    G = int(inv.max()) + 1
    cnt = np.bincount(inv, minlength=G)
    order = np.argsort(inv, kind="stable")
    starts = np.concatenate(([0], np.cumsum(cnt)[:-1]))
    osum = np.add.reduceat(o[order], starts, axis=0)              # G x k
    rsum = np.bincount(inv, weights=rem, minlength=G)
    tcnt = np.bincount(inv * (k + 1) + hot, minlength=G * (k + 1)).reshape(G, k + 1)
    l1 = np.abs(osum - tcnt[:, :k]).sum(axis=1) + np.abs(rsum - tcnt[:, k])
    gap = 0.5 * l1 / cnt                                           # tvd of the bin means
    return float(np.sum(cnt / n * gap))


def topk_bars(P, y, ks, budget_s=60.0):
    """Returns ({k: ece}, shared seconds, {k: seconds}, skipped ks)."""
    t0 = time.perf_counter()
    S, rank, cells = topk_shared(P, y, min(max(ks), P.shape[1]))
    shared = time.perf_counter() - t0
    out, per, skipped = {}, {}, []
    for k in ks:
        if time.perf_counter() - t0 > budget_s:
            skipped.append(k)
            continue
        t1 = time.perf_counter()
        out[k] = topk_ece(S, rank, cells, min(k, P.shape[1]))
        per[k] = time.perf_counter() - t1
    return out, shared, per, skipped


# ---- classwise ECE ---------------------------------------------------------------------------

def classwise_ece(P, y, m=M):
    """Mean over classes of the class-conditional ECE (uniform M bins on p_c, target 1[y = c]):
    per class sum_b |sum p - sum y| / N (SCE, Gupta, Basu & Arora 2023 eq. 4)."""
    n, K = P.shape
    b = ubin(P, m)
    key = (np.arange(K)[None, :] * m + b).ravel()
    sp = np.bincount(key, weights=P.ravel(), minlength=K * m)
    sy = np.bincount(y * m + b[np.arange(n), y], minlength=K * m)
    return float(np.abs(sp - sy).sum() / n / K)


# ---- variance curves -------------------------------------------------------------------------

def rece_weights(conf, m=M, sigma=SIGMA, erfc=None):
    e = edges_of(m)
    cdf = 0.5 * erfc((conf[:, None] - e[None, :]) / (sigma * math.sqrt(2.0)))
    w = cdf[:, 1:] - cdf[:, :-1]
    return w / w.sum(axis=1, keepdims=True)


def subset_metrics(c, a, b, W, m=M):
    """ece, ace, mce (uniform), aece (equal mass: stable sort, array_split), rece_g."""
    n = len(c)
    cnt = np.bincount(b, minlength=m)
    sc = np.bincount(b, weights=c, minlength=m)
    sa = np.bincount(b, weights=a, minlength=m)
    nz = cnt > 0
    d = np.abs(sc[nz] - sa[nz])
    gap = d / cnt[nz]
    order = np.argsort(c, kind="stable")
    q, r = divmod(n, m)
    bounds = np.arange(m + 1) * q + np.minimum(np.arange(m + 1), r)
    cc = np.concatenate(([0.0], np.cumsum(c[order])))
    ca = np.concatenate(([0.0], np.cumsum(a[order])))
    aece = np.abs(np.diff(cc[bounds]) - np.diff(ca[bounds])).sum() / n
    Ct = c @ W
    At = a @ W
    return (d.sum() / n, gap.mean(), gap.max(), aece, np.abs(At - Ct).sum() / n)


def summarize(vals, ref):
    return (vals.mean(axis=0), vals.std(axis=0), np.quantile(vals, 0.025, axis=0),
            np.quantile(vals, 0.975, axis=0), np.abs(vals - ref).mean(axis=0))


def size_curve(conf, correct, erfc, fractions=(0.01, 0.05, 0.10, 0.25, 0.50, 1.00), repeats=200,
               run_repeats=None, seed=1):
    """Size curve (docs/metrics.md): for each fraction, `repeats` subsets of ceil(f N) rows without
    replacement, 5 metrics each, summarised. With run_repeats < repeats only that many subsets
    per fraction are drawn and the loop time is scaled by repeats / run_repeats.
    Returns (full values, estimated seconds, measured seconds, setup seconds)."""
    rr = repeats if run_repeats is None else min(run_repeats, repeats)
    rng = np.random.default_rng(seed)
    N = len(conf)
    t0 = time.perf_counter()
    b = ubin(conf, M)
    W = rece_weights(conf, erfc=erfc)
    full = subset_metrics(conf, correct, b, W)
    t1 = time.perf_counter()
    for f in fractions:
        k = min(N, max(1, math.ceil(round(f * N, 9))))
        vals = np.empty((rr, 5))
        for r in range(rr):
            idx = rng.choice(N, size=k, replace=False)
            vals[r] = subset_metrics(conf[idx], correct[idx], b[idx], W[idx])
        summarize(vals, np.array(full))
    t2 = time.perf_counter()
    est = (t1 - t0) + (t2 - t1) * repeats / rr
    return full, est, t2 - t0, t1 - t0


def bins_curve(conf, correct, Ms=(5, 10, 15, 20, 30, 50, 100, 200, 500, 1000), repeats=200,
               run_repeats=None, seed=1):
    """Bins curve (docs/metrics.md): `repeats` bootstrap resamples of N rows (the same resample
    for every M), ece/ace/mce at each M. Returns ({M: full ece}, estimated s, measured s)."""
    rr = repeats if run_repeats is None else min(run_repeats, repeats)
    rng = np.random.default_rng(seed)
    N = len(conf)
    t0 = time.perf_counter()
    bs = [ubin(conf, m) for m in Ms]
    full = {}
    for m, b in zip(Ms, bs):
        cnt = np.bincount(b, minlength=m)
        sc = np.bincount(b, weights=conf, minlength=m)
        sa = np.bincount(b, weights=correct, minlength=m)
        nz = cnt > 0
        d = np.abs(sc[nz] - sa[nz])
        full[m] = (float(d.sum() / N), float((d / cnt[nz]).mean()), float((d / cnt[nz]).max()))
    t1 = time.perf_counter()
    vals = np.empty((len(Ms), rr, 3))
    for r in range(rr):
        idx = rng.integers(0, N, N)
        c = conf[idx]
        a = correct[idx]
        for i, (m, b) in enumerate(zip(Ms, bs)):
            bi = b[idx]
            cnt = np.bincount(bi, minlength=m)
            sc = np.bincount(bi, weights=c, minlength=m)
            sa = np.bincount(bi, weights=a, minlength=m)
            nz = cnt > 0
            d = np.abs(sc[nz] - sa[nz])
            gap = d / cnt[nz]
            vals[i, r] = (d.sum() / N, gap.mean(), gap.max())
    for i, m in enumerate(Ms):
        summarize(vals[i], np.array(full[m]))
    t2 = time.perf_counter()
    return {m: v[0] for m, v in full.items()}, (t1 - t0) + (t2 - t1) * repeats / rr, t2 - t0


# ---- driver (called by reference_bench.py) ---------------------------------------------------

TOPK_KS = (1, 2, 3, 5, 10, 20, 50, 100, 1000)


def _best(fn, repeats):
    best, out = None, None
    for _ in range(max(1, repeats)):
        r = fn()
        if best is None or r[0] < best[0]:
            best, out = r, r
    return out


def run_all(wide_path, conf, correct, erfc, erfc_name, py, notes):
    """Runs the heavy cases, filling py[key] (seconds) and notes[key]; returns the values on all
    rows for the agreement check. Environment: BENCH_PY_HEAVY_REPEATS (runs of each heavy case,
    best kept; default 1), BENCH_PY_CURVE_REPEATS (subsets per size-curve point / resamples of
    the bins curve actually run, the time scaled to 200; default 200 = no extrapolation),
    BENCH_PY_TOPK_BUDGET (seconds; k values not started within it are skipped; default 90)."""
    reps = int(os.environ.get("BENCH_PY_HEAVY_REPEATS", "1"))
    crep = int(os.environ.get("BENCH_PY_CURVE_REPEATS", "200"))
    budget = float(os.environ.get("BENCH_PY_TOPK_BUDGET", "90"))
    vals = {}
    runs = f"{reps} run" + ("s, best kept" if reps > 1 else "")
    if wide_path and os.path.exists(wide_path):
        P, y = read_wide(wide_path)

        def tk():
            t0 = time.perf_counter()
            r = topk_bars(P, y, TOPK_KS, budget)
            return (time.perf_counter() - t0,) + r
        t, out, shared, per, skipped = _best(tk, reps)
        py["topk_bars"] = t
        per_s = ", ".join(f"k={k} {per[k]:.2f}" for k in per)
        notes["topk_bars"] = (f"numpy: one np.sort of the matrix + uniform cells shared by every k "
                              f"{shared:.2f} s, then per k (np.unique rows of cells, reduceat) s: {per_s}; {runs}")
        if skipped:
            notes["topk_bars"] += f"; NOT RUN (over {budget:.0f} s budget): k = {skipped} - the time is partial"
            py["topk_bars_partial"] = True
        vals.update({f"k{k}": v for k, v in out.items()})

        def cw():
            t0 = time.perf_counter()
            v = classwise_ece(P, y)
            return time.perf_counter() - t0, v
        t, v = _best(cw, reps)
        py["classwise_1000"] = t
        notes["classwise_1000"] = f"numpy: searchsorted bins of all 50M probabilities + bincount; {runs}"
        vals["classwise_ece"] = v
        del P, y
    else:
        notes["topk_bars"] = notes["classwise_1000"] = "no wide dataset (bench_engine -w did not write it)"

    def sc():
        full, est, meas, setup = size_curve(conf, correct, erfc, run_repeats=crep)
        return est, full, meas, setup
    est, full, meas, setup = _best(sc, reps)
    py["size_curve"] = py["size_curve_t1"] = est
    extra = "" if crep >= 200 else (f"; EXTRAPOLATED: {crep} of 200 subsets per fraction run in "
                                    f"{meas:.2f} s, loop time scaled x{200 / crep:g}")
    notes["size_curve"] = (f"numpy loop, rng.choice subsets; per-sample bins and RECE-G weights ({erfc_name}) "
                           f"computed once ({setup:.2f} s, included); one thread{extra}; {runs}")
    vals.update(dict(zip(("ece", "ace", "mce", "aece", "rece_g"), (float(x) for x in full))))

    def bc():
        f, est2, meas2 = bins_curve(conf, correct, run_repeats=crep)
        return est2, f, meas2
    est, fullb, meas = _best(bc, reps)
    py["bins_curve"] = py["bins_curve_t1"] = est
    extra = "" if crep >= 200 else (f"; EXTRAPOLATED: {crep} of 200 resamples run in {meas:.2f} s, "
                                    f"scaled x{200 / crep:g}")
    notes["bins_curve"] = f"numpy loop, rng.integers resamples shared by every M, bincount; one thread{extra}; {runs}"
    vals.update({f"M{m}": v for m, v in fullb.items()})
    return vals


def _note_values(note):
    out = {}
    toks = note.replace(",", " ").replace(":", " ").split()
    for a, b in zip(toks, toks[1:]):
        try:
            out[a] = float(b)
        except ValueError:
            pass
    return out


def agreement(c_notes, vals):
    """One line per heavy case: calscope's values (from its notes) against numpy's."""
    lines = []
    groups = (("topk_bars", [k for k in vals if k.startswith("k")]),
              ("classwise_1000", ["classwise_ece"]),
              ("size_curve", ["ece", "ace", "mce", "aece", "rece_g"]),
              ("bins_curve", [k for k in vals if k.startswith("M")]))
    for key, names in groups:
        cv = _note_values(c_notes.get(key, ""))
        pairs = [(n, abs(cv[n] - vals[n])) for n in names if n in cv and n in vals]
        if not pairs:
            lines.append(f"  {key}: nothing to compare")
            continue
        worst = max(d for _, d in pairs)
        lines.append(f"  {key}: {'OK' if worst < 1e-9 else 'DIFFERENT'} on {len(pairs)} values "
                     f"(worst |diff| {worst:.1e})")
    return "agreement of the heavy cases on all rows (calscope vs numpy, 12 decimals):\n" + "\n".join(lines)
