#!/usr/bin/python3
"""Independent fits of calscope's parametric recalibrations, for tests/e2e/test_recal_methods.sh.

Each method's documented objective is minimised with scipy.optimize from the same start calscope
uses, on the rows of a CSV (columns id,label,p_*/logit_*[,split]) whose split value is a fitting
value ("fit" or "train", any case); every row is a fitting row when there is no split column.
Printed as JSON: the fitted parameters (in calscope's representative) and the mean NLL of the
recalibrated probabilities over the other rows (the held-out rows), or over all rows when there
are none held out.

  vs   vector scaling (Guo et al., 2017, "On Calibration of Modern Neural Networks"):
       softmax(w * s + b), s = the logits, else ln max(p, 1e-300); mean NLL minimised by
       scipy.optimize.minimize(method="trust-exact") with the analytic gradient and Hessian,
       from w = 1, b = 0; b reported with sum 0 (the model is invariant to a common shift).
  ets  ensemble temperature scaling (Zhang, Kailkhura & Han, 2020, "Mix-n-Match: Ensemble and
       Compositional Methods for Uncertainty Calibration in Deep Learning"): T by
       scipy.optimize.minimize_scalar on the mean NLL of softmax(s / T) (in log T); the weights
       as the paper's code fits them (ensemble_scaling: SLSQP from (1, 0, 0) on the mean squared
       error against the one-hot labels, bounds [0, 1], sum 1; here with the analytic gradient
       and tol 1e-15) of
       w1 softmax(s / T) + w2 softmax(s) + w3 / K.
  beta beta calibration (Kull, Silva Filho & Flach, 2017), the "abm" model: logit p' =
       a ln p - b ln(1 - p) + c, p = the probability of class 1 clipped to [eps, 1 - eps]
       (eps = float64 machine epsilon), fitted as betacal's _beta_calibration fits it (a
       logistic regression on (ln p, -ln(1 - p)); a negative a: refit on -ln(1 - p) alone, a
       = 0; else a negative b: refit on ln p alone, b = 0), each logistic regression here
       unpenalised by scipy.optimize.minimize(method="trust-exact").
  iso  isotonic regression of the top-1 correctness on the top-1 confidence (the first of tied
       maxima): sklearn.isotonic.IsotonicRegression(out_of_bounds="clip"), c' floored at
       p2 / (r + p2) (p2 the runner-up, r the sum of the other classes) and capped at 1; the
       other classes scaled by (1 - c') / r, or sharing 1 - c' equally when r = 0; the held-out
       Brier score printed beside the NLL.
  irova one-vs-rest isotonic regression (Zadrozny & Elkan, 2002): per class c,
       sklearn.isotonic.IsotonicRegression(out_of_bounds="clip") of 1[y = c] on p_c, rows
       renormalised (a zero row uniform, as sklearn's CalibratedClassifierCV); no parameters
       printed, but the held-out Brier score and the count of held-out rows whose argmax changed.
       The NLL here clips p[label] at 1e-15, as calscope's metric does.

  ms, dir matrix scaling and Dirichlet calibration with ODIR (Kull et al., 2019, "Beyond temperature
       scaling: Obtaining well-calibrated multiclass probabilities with Dirichlet calibration"):
       softmax(W x + b), x = the scores as vs reads them (ms) or ln p with p clipped to
       [float64 tiny, 1 - eps] (dir), the objective of dirichletcal (github.com/dirichletcal/
       dirichlet_python at b03f65fc6582cad89497b977b3b33a3c4fe48e39, calib/multinomial.py
       _objective with ref_row=True and reg_norm): mean NLL + lambda/(K(K-1)) * sum of the
       squared off-diagonal entries of W + mu/K * sum b^2, the last row of (W | b) fixed at 0,
       without the clip of the outputs (calscope's documented difference). Minimised by
       scipy.optimize.minimize(method="trust-exact") with the analytic gradient and Hessian on
       the raw scores, from the identity. lambda and mu from the grid {1e-4, ..., 1}^2 by a 3-fold
       inner cross-validation on the fitting rows: inner fold = splitmix64(fnv1a(id) ^
       splitmix64(seed ^ 0x696e6e6572)) % 3, the lowest pooled held-out NLL, the first pair on a
       tie. Printed: W (K x K), b, lambda, mu.

Usage: recal_oracle.py METHOD FILE.csv [SEED]
"""
import csv
import json
import sys

import numpy as np
from scipy import optimize


def load(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    cols = list(rows[0].keys())
    logits = [c for c in cols if c.startswith("logit_")]
    probs = [c for c in cols if c.startswith("p_")]
    score_cols = logits or probs
    x = np.array([[float(r[c]) for c in score_cols] for r in rows])
    s = x if logits else np.log(np.maximum(x, 1e-300))
    y = np.array([int(r["label"]) for r in rows])
    if "split" in cols:
        fit = np.array([r["split"].lower() in ("fit", "train") for r in rows])
    else:
        fit = np.ones(len(rows), dtype=bool)
    prob = softmax(s) if logits else x
    return s, y, fit, prob


def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def mean_nll(q, y):
    return float(-np.mean(np.log(np.maximum(q[np.arange(len(y)), y], 1e-15))))


def vs_fit(s, y):
    n, k = s.shape
    onehot = np.eye(k)[y]

    def parts(x):
        w, b = x[:k], x[k:]
        z = s * w + b
        m = z.max(axis=1, keepdims=True)
        lse = np.log(np.exp(z - m).sum(axis=1)) + m[:, 0]
        p = softmax(z)
        return z, p, float(np.mean(lse - (z * onehot).sum(axis=1)))

    def f(x):
        _, p, L = parts(x)
        e = p - onehot
        return L, np.concatenate([(e * s).mean(axis=0), e.mean(axis=0)])

    def hess(x):
        _, p, _ = parts(x)
        J = np.zeros((n, k, 2 * k))          # dz/dparams per row
        J[:, np.arange(k), np.arange(k)] = s
        J[:, np.arange(k), k + np.arange(k)] = 1.0
        A = np.einsum("na,ab->nab", p, np.eye(k)) - np.einsum("na,nb->nab", p, p)
        return np.einsum("nai,nab,nbj->ij", J, A, J) / n

    x0 = np.concatenate([np.ones(k), np.zeros(k)])
    r = optimize.minimize(lambda x: f(x)[0], x0, jac=lambda x: f(x)[1], hess=hess, method="trust-exact",
                          options={"gtol": 1e-12, "maxiter": 1000})
    w, b = r.x[:k], r.x[k:] - r.x[k:].mean()
    return {"w": w.tolist(), "b": b.tolist(), "grad": float(np.abs(r.jac).max())}, (w, b)


def ts_fit(s, y):
    def nll(logt):
        return mean_nll(softmax(s / np.exp(logt)), y)
    r = optimize.minimize_scalar(nll, bounds=(-9.2, 9.2), method="bounded", options={"xatol": 1e-13})
    return float(np.exp(r.x))


def ets_fit(s, y):
    n, k = s.shape
    T = ts_fit(s, y)
    p0, p1, p2 = softmax(s / T), softmax(s), np.ones((n, k)) / k
    onehot = np.eye(k)[y]

    # the paper's objective without its row renormalisation p / sum(p), which is 1 on the
    # simplex, so that the gradient can be given (SLSQP's finite differences stop near 1e-8)
    def mse(w):
        p = w[0] * p0 + w[1] * p1 + w[2] * p2
        return np.mean((p - onehot) ** 2)

    def mse_grad(w):
        e = w[0] * p0 + w[1] * p1 + w[2] * p2 - onehot
        return np.array([np.mean(2 * e * v) for v in (p0, p1, p2)])

    r = optimize.minimize(mse, (1.0, 0.0, 0.0), jac=mse_grad, method="SLSQP", bounds=((0, 1),) * 3,
                          constraints={"type": "eq", "fun": lambda x: np.sum(x) - 1, "jac": lambda x: np.ones(3)},
                          tol=1e-15, options={"maxiter": 1000})
    return {"w": [float(v) for v in r.x], "T": [T]}, (T, r.x)


def logistic_fit(X, y):
    """Unpenalised logistic regression with an intercept (the last parameter)."""
    Z = np.hstack([X, np.ones((len(y), 1))])

    def f(x):
        z = Z @ x
        L = np.mean(np.logaddexp(0, z) - y * z)
        p = 1 / (1 + np.exp(-z))
        return L, Z.T @ (p - y) / len(y)

    def hess(x):
        p = 1 / (1 + np.exp(-(Z @ x)))
        return (Z * (p * (1 - p))[:, None]).T @ Z / len(y)

    r = optimize.minimize(lambda x: f(x)[0], np.zeros(Z.shape[1]), jac=lambda x: f(x)[1], hess=hess,
                          method="trust-exact", options={"gtol": 1e-13, "maxiter": 1000})
    return r.x


def beta_features(prob1):
    eps = np.finfo(float).eps
    p = np.clip(prob1, eps, 1 - eps)
    return np.log(p), -np.log(1 - p)


def beta_fit(prob1, y):
    f1, f2 = beta_features(prob1)
    x = logistic_fit(np.column_stack([f1, f2]), y)
    a, b, c = x
    if a < 0:
        b, c = logistic_fit(f2[:, None], y)
        a = 0.0
    elif b < 0:
        a, c = logistic_fit(f1[:, None], y)
        b = 0.0
    return {"a": [float(a)], "b": [float(b)], "c": [float(c)]}, (a, b, c)


GRID = [1e-4, 1e-3, 1e-2, 1e-1, 1.0]
M64 = (1 << 64) - 1


def splitmix64(z):
    z = (z + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def fnv1a(s):
    h = 0xcbf29ce484222325
    for ch in s.encode():
        h = ((h ^ ch) * 0x100000001b3) & M64
    return h


def inner_folds(ids, seed):
    mix = splitmix64(seed ^ 0x696e6e6572)
    return np.array([splitmix64(fnv1a(i) ^ mix) % 3 for i in ids])


def dm_fit(s, y, lam, mu):
    """(W, b) of softmax(W s + b) under the ODIR objective, last row 0."""
    n, k = s.shape
    x = np.hstack([s, np.ones((n, 1))])
    onehot = np.eye(k)[y][:, :k - 1]
    lam_n, mu_n = lam / (k * (k - 1)), mu / k
    off = np.ones((k - 1, k + 1))
    off[np.arange(k - 1), np.arange(k - 1)] = 0
    off[:, k] = 0
    bias = np.zeros((k - 1, k + 1))
    bias[:, k] = 1

    def probs(v):
        z = np.hstack([x @ v.reshape(k - 1, k + 1).T, np.zeros((n, 1))])
        return softmax(z), z

    def f(v):
        p, z = probs(v)
        m = z.max(axis=1)
        lse = np.log(np.exp(z - m[:, None]).sum(axis=1)) + m
        L = np.mean(lse - z[np.arange(n), y])
        V = v.reshape(k - 1, k + 1)
        L += lam_n * np.sum(off * V ** 2) + mu_n * np.sum(bias * V ** 2)
        g = ((p[:, :k - 1] - onehot).T @ x) / n + 2 * lam_n * off * V + 2 * mu_n * bias * V
        return L, g.ravel()

    def hess(v):
        p, _ = probs(v)
        q = p[:, :k - 1]
        A = np.einsum("na,ab->nab", q, np.eye(k - 1)) - np.einsum("na,nb->nab", q, q)
        H = np.einsum("nab,ni,nj->aibj", A, x, x).reshape((k - 1) * (k + 1), (k - 1) * (k + 1)) / n
        return H + np.diag((2 * lam_n * off + 2 * mu_n * bias).ravel())

    v0 = np.hstack([np.eye(k)[:k - 1] - np.eye(k)[k - 1], np.zeros((k - 1, 1))]).ravel()
    r = optimize.minimize(lambda v: f(v)[0], v0, jac=lambda v: f(v)[1], hess=hess, method="trust-exact",
                          options={"gtol": 1e-13, "maxiter": 1000})
    V = np.vstack([r.x.reshape(k - 1, k + 1), np.zeros((1, k + 1))])
    return V[:, :k], V[:, k]


def dm_apply(s, W, b):
    return softmax(s @ W.T + b)


def dm_choose(s, y, inner):
    best = None
    for lam in GRID:
        for mu in GRID:
            loss = 0.0
            for f in range(3):
                W, b = dm_fit(s[inner != f], y[inner != f], lam, mu)
                q = dm_apply(s[inner == f], W, b)
                loss -= np.sum(np.log(q[np.arange((inner == f).sum()), y[inner == f]]))
            if best is None or loss < best[0]:
                best = (loss, lam, mu)
    return best[1], best[2]


def main(argv):
    method, path = argv[1], argv[2]
    s, y, fit, prob = load(path)
    if method in ("ms", "dir"):
        if method == "dir":
            s = np.log(np.clip(prob, np.finfo(float).tiny, 1 - np.finfo(float).eps))
        with open(path) as f:
            ids = [r["id"] for r in csv.DictReader(f)]
        inner = inner_folds(ids, int(argv[3]) if len(argv) > 3 else 0)
        held = ~fit if (~fit).any() else fit
        lam, mu = dm_choose(s[fit], y[fit], inner[fit])
        W, b = dm_fit(s[fit], y[fit], lam, mu)
        q = dm_apply(s[held], W, b)
        params = {"W": W.tolist(), "b": b.tolist(), "lambda": lam, "mu": mu, "nll": mean_nll(q, y[held])}
        json.dump(params, sys.stdout)
        print()
        return
    prob1 = prob[:, 1]
    held = ~fit if (~fit).any() else fit
    if method == "vs":
        params, (w, b) = vs_fit(s[fit], y[fit])
        q = softmax(s[held] * w + b)
    elif method == "ets":
        params, (T, w) = ets_fit(s[fit], y[fit])
        k = s.shape[1]
        q = w[0] * softmax(s[held] / T) + w[1] * softmax(s[held]) + w[2] / k
    elif method == "beta":
        params, (a, b, c) = beta_fit(prob1[fit], y[fit])
        f1, f2 = beta_features(prob1[held])
        z = a * f1 + b * f2 + c
        p1 = 1 / (1 + np.exp(-z))
        q = np.column_stack([1 - p1, p1])
    elif method == "iso":
        from sklearn.isotonic import IsotonicRegression
        k = prob.shape[1]
        top = prob.argmax(axis=1)                          # the first of tied maxima
        conf = prob[np.arange(len(y)), top]
        iso = IsotonicRegression(out_of_bounds="clip").fit(conf[fit], (top[fit] == y[fit]).astype(float))
        ph, rows, t = prob[held], np.arange(held.sum()), top[held]
        others = ph.copy()
        others[rows, t] = 0
        r, p2 = others.sum(axis=1), others.max(axis=1)
        floor = np.where(r > 0, p2 / np.where(r > 0, r + p2, 1), 1 / k)
        c2 = np.minimum(np.maximum(iso.predict(conf[held]), floor), 1)
        q = np.where(r[:, None] > 0, others * ((1 - c2) / np.where(r > 0, r, 1))[:, None],
                     np.repeat(((1 - c2) / (k - 1))[:, None], k, axis=1))
        q[rows, t] = c2
        params = {"brier": float(np.mean(((q - np.eye(k)[y[held]]) ** 2).sum(axis=1)))}
    elif method == "irova":
        from sklearn.isotonic import IsotonicRegression
        k = prob.shape[1]
        q = np.zeros((held.sum(), k))
        for c in range(k):
            iso = IsotonicRegression(out_of_bounds="clip").fit(prob[fit, c], (y[fit] == c).astype(float))
            q[:, c] = iso.predict(prob[held, c])
        tot = q.sum(axis=1)
        q = np.where(tot[:, None] > 0, q / np.where(tot > 0, tot, 1)[:, None], 1.0 / k)
        params = {"brier": float(np.mean(((q - np.eye(k)[y[held]]) ** 2).sum(axis=1))),
                  "argmax_changed": int((q.argmax(axis=1) != prob[held].argmax(axis=1)).sum())}
    else:
        raise SystemExit("unknown method " + method)
    params["nll"] = mean_nll(q, y[held])
    json.dump(params, sys.stdout)
    print()


if __name__ == "__main__":
    main(sys.argv)
