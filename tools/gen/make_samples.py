#!/usr/bin/python3
"""Writes the bundled sample prediction files samples/*.csv (run: /usr/bin/python3 tools/gen/make_samples.py).

Everything is deterministic (fixed seeds) and offline: only scikit-learn's bundled datasets
(breast_cancer, digits) are used, nothing is downloaded.

Predictions are out-of-fold: StratifiedKFold(5, shuffle=True, random_state=0); for each fold the
model is fitted on the other four folds and predicts the held-out fold (cross_val_predict style).

Files (see samples/README.md):
  breast_cancer_{gnb,logreg,ts}.csv   569 rows, K=2 (malignant, benign), id,label,p_malignant,p_benign
  digits_{gnb,logreg,ts,rf}.csv       1797 rows, K=10, id,label,p_0..p_9
  digits_logreg_logits.csv            1797 rows, id,label,logit_0..logit_9 (decision_function)
  digits_tta.csv                      long test-time-augmentation file id,tta,label,p_0..p_9
  seg_cases.csv                       SYNTHETIC segmentation-style file case,label,p_bg,p_organ,p_lesion
                                      (generated from a random model, not from real images)

Probabilities are written with Python's repr (shortest round-trip form of the double), so each
file holds exactly the doubles computed here and every row sums to 1 within ~1e-15. Values below
1e-300 are written as 0 (keeps subnormals, which strtod flags with ERANGE, out of the files).
"""
import math
import os
import sys

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "samples")
SEED = 0
FOLDS = 5


def fmt(x):
    x = float(x)
    if abs(x) < 1e-300:
        x = 0.0
    return repr(x)


def write_csv(name, header, rows):
    path = os.path.join(OUT, name)
    with open(path, "w", newline="\n") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(r) + "\n")
    size = os.path.getsize(path)
    assert size < 1_000_000, (name, size)
    print(f"  {name:28s} {len(rows):6d} rows  {size / 1024:7.1f} KiB")


def softmax(z):
    z = np.asarray(z, dtype=np.float64)
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def folds(X, y):
    return list(StratifiedKFold(n_splits=FOLDS, shuffle=True, random_state=SEED).split(X, y))


def oof(make_model, X, y, splits, method):
    """Out-of-fold predictions: method is 'predict_proba' or 'decision_function'."""
    out = None
    for tr, te in splits:
        m = make_model()
        m.fit(X[tr], y[tr])
        p = getattr(m, method)(X[te])
        if out is None:
            out = np.zeros((len(y),) + p.shape[1:], dtype=np.float64)
        out[te] = p
    return out


def as_logits(dec):
    """decision_function output as a K-column logit matrix (binary: [0, z])."""
    dec = np.asarray(dec, dtype=np.float64)
    if dec.ndim == 1:
        return np.stack([np.zeros_like(dec), dec], axis=1)
    return dec


def nll_at(logits, y, t):
    z = logits / t
    z = z - z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1))
    return float(np.mean(lse - z[np.arange(len(y)), y]))


def fit_temperature(logits, y):
    """T minimising NLL, by golden-section search on log T in [-4, 4] (deterministic)."""
    lo, hi = -4.0, 4.0
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = nll_at(logits, y, math.exp(a)), nll_at(logits, y, math.exp(b))
    for _ in range(80):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = nll_at(logits, y, math.exp(a))
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = nll_at(logits, y, math.exp(b))
    return math.exp((lo + hi) / 2.0)


def temperature_scale(logits, y, splits):
    """Cross-fitted temperature scaling: fold f is scaled by the T fitted on the other folds'
    out-of-fold logits. Returns (probabilities, list of T)."""
    p = np.zeros_like(logits)
    ts = []
    for tr, te in splits:
        t = fit_temperature(logits[tr], y[tr])
        ts.append(t)
        p[te] = softmax(logits[te] / t)
    return p, ts


def prob_rows(ids, y, P, label_fmt=str):
    return [[str(i), label_fmt(l)] + [fmt(v) for v in row] for i, l, row in zip(ids, y, P)]


def check_probs(P):
    P = np.asarray(P)
    assert np.all(P >= 0) and np.all(P <= 1)
    assert np.max(np.abs(P.sum(axis=1) - 1.0)) < 1e-9


def logreg():
    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=5000))


def gnb():
    return GaussianNB()


def breast_cancer():
    ds = load_breast_cancer()
    X, y = ds.data.astype(np.float64), ds.target.astype(int)
    names = list(ds.target_names)  # ['malignant', 'benign'], label 0 = malignant
    ids = np.arange(len(y))
    sp = folds(X, y)
    header = ["id", "label"] + ["p_" + n for n in names]
    P = oof(gnb, X, y, sp, "predict_proba")
    check_probs(P)
    write_csv("breast_cancer_gnb.csv", header, prob_rows(ids, y, P))
    P = oof(logreg, X, y, sp, "predict_proba")
    check_probs(P)
    write_csv("breast_cancer_logreg.csv", header, prob_rows(ids, y, P))
    L = as_logits(oof(logreg, X, y, sp, "decision_function"))
    P, ts = temperature_scale(L, y, sp)
    check_probs(P)
    print("    breast_cancer temperatures:", ", ".join(f"{t:.4f}" for t in ts))
    write_csv("breast_cancer_ts.csv", header, prob_rows(ids, y, P))


def iris():
    """150 rows: the small test set of the "Which estimator?" example (docs/metrics.md)."""
    ds = load_iris()
    X, y = ds.data.astype(np.float64), ds.target.astype(int)
    ids = np.arange(len(y))
    header = ["id", "label"] + ["p_" + n for n in ds.target_names]
    P = oof(gnb, X, y, folds(X, y), "predict_proba")
    check_probs(P)
    write_csv("iris_gnb.csv", header, prob_rows(ids, y, P))


def shift(img, dy, dx):
    out = np.zeros_like(img)
    h, w = img.shape
    ys, yd = (slice(0, h - dy), slice(dy, h)) if dy >= 0 else (slice(-dy, h), slice(0, h + dy))
    xs, xd = (slice(0, w - dx), slice(dx, w)) if dx >= 0 else (slice(-dx, w), slice(0, w + dx))
    out[yd, xd] = img[ys, xs]
    return out


def tta_views(x, rng):
    """8 augmented views of one flattened 8x8 digit: 4 one-pixel shifts, 4 noisy copies."""
    img = x.reshape(8, 8)
    views = [shift(img, dy, dx).ravel() for dy, dx in ((0, 1), (0, -1), (1, 0), (-1, 0))]
    for _ in range(4):
        views.append(np.clip(x + rng.normal(0.0, 2.0, size=x.shape), 0.0, 16.0))
    return views


def digits():
    ds = load_digits()
    X, y = ds.data.astype(np.float64), ds.target.astype(int)
    names = [str(c) for c in range(10)]
    ids = np.arange(len(y))
    sp = folds(X, y)
    header = ["id", "label"] + ["p_" + n for n in names]

    P = oof(gnb, X, y, sp, "predict_proba")
    check_probs(P)
    write_csv("digits_gnb.csv", header, prob_rows(ids, y, P))

    P = oof(logreg, X, y, sp, "predict_proba")
    check_probs(P)
    write_csv("digits_logreg.csv", header, prob_rows(ids, y, P))

    L = oof(logreg, X, y, sp, "decision_function")
    write_csv("digits_logreg_logits.csv", ["id", "label"] + ["logit_" + n for n in names],
              prob_rows(ids, y, L))

    P, ts = temperature_scale(L, y, sp)
    check_probs(P)
    print("    digits temperatures:", ", ".join(f"{t:.4f}" for t in ts))
    write_csv("digits_ts.csv", header, prob_rows(ids, y, P))

    P = oof(lambda: RandomForestClassifier(n_estimators=50, random_state=SEED), X, y, sp,
            "predict_proba")
    check_probs(P)
    write_csv("digits_rf.csv", header, prob_rows(ids, y, P))

    # Test-time augmentation: every 6th image (300 of 1797, keeps the file < 1 MB), predicted by
    # the logistic model of the fold that held it out; tta 0 = clean, 1..8 = augmented views.
    rng = np.random.default_rng(SEED + 1)
    keep = set(range(0, len(y), 6))
    rows = []
    per_id = {}
    for tr, te in sp:
        m = logreg()
        m.fit(X[tr], y[tr])
        for i in te:
            if i not in keep:
                continue
            views = [X[i]] + tta_views(X[i], rng)
            per_id[i] = m.predict_proba(np.array(views))
    for i in sorted(per_id):
        Pv = per_id[i]
        check_probs(Pv)
        for t, row in enumerate(Pv):
            rows.append([str(i), str(t), str(y[i])] + [fmt(v) for v in row])
    write_csv("digits_tta.csv", ["id", "tta", "label"] + ["p_" + n for n in names], rows)


def seg_cases():
    """SYNTHETIC segmentation-style data: 12 cases x 400 pixels, 3 classes (bg, organ, lesion).
    Per pixel a latent logit vector z gives calibrated probabilities q = softmax(z); the label is
    drawn from q; the written prediction is softmax(z / T_case) with a per-case temperature
    T_case between 0.5 (overconfident) and 2 (underconfident), so each case is miscalibrated
    its own way."""
    rng = np.random.default_rng(SEED + 2)
    names = ["bg", "organ", "lesion"]
    temps = np.geomspace(0.5, 2.0, 12)
    rng.shuffle(temps)
    rows = []
    for c in range(12):
        n = 400
        prior = np.array([0.70, 0.20, 0.10]) * rng.uniform(0.6, 1.4, size=3)
        prior /= prior.sum()
        region = rng.choice(3, size=n, p=prior)              # what the pixel "looks like"
        z = rng.normal(0.0, 1.0, size=(n, 3))
        z[np.arange(n), region] += rng.uniform(1.0, 4.0, size=n)
        q = softmax(z)
        u = rng.random(n)
        label = np.minimum((u[:, None] > np.cumsum(q, axis=1)).sum(axis=1), 2)
        P = softmax(z / temps[c])
        check_probs(P)
        for i in range(n):
            rows.append([f"case{c:02d}", str(label[i])] + [fmt(v) for v in P[i]])
    write_csv("seg_cases.csv", ["case", "label"] + ["p_" + n for n in names], rows)


def main():
    os.makedirs(OUT, exist_ok=True)
    print("writing samples/ ...")
    breast_cancer()
    digits()
    seg_cases()
    iris()
    return 0


if __name__ == "__main__":
    sys.exit(main())
