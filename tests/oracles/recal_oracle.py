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
  irova one-vs-rest isotonic regression (Zadrozny & Elkan, 2002): per class c,
       sklearn.isotonic.IsotonicRegression(out_of_bounds="clip") of 1[y = c] on p_c, rows
       renormalised (a zero row uniform, as sklearn's CalibratedClassifierCV); no parameters
       printed, but the held-out Brier score and the count of held-out rows whose argmax changed.
       The NLL here clips p[label] at 1e-15, as calscope's metric does.

Usage: recal_oracle.py METHOD FILE.csv
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


def main(argv):
    method, path = argv[1], argv[2]
    s, y, fit, prob = load(path)
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
