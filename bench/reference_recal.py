"""numpy / scikit-learn references for the recalibration cases of `make bench` (imported by
bench/reference_bench.py): 5-fold cross-fitted temperature scaling on the 50,000 x 1000 dataset
(logits = ln p of the generated probabilities, as bench_engine uses) and 5-fold cross-fitted
isotonic regression on the top-1 confidence of the 1M x 10 file, each including the application
of the fits to the held-out rows (softmax, or the rescaling of the other classes).

Temperature scaling is fitted the way a careful numpy user would: Newton's method on beta = 1/T
(the NLL is convex there; gradient = mean(E_p[s] - s_y), Hessian = mean(Var_p[s])), each of the
6 fits (5 folds + all rows) on its own rows. Isotonic regression is
sklearn.isotonic.IsotonicRegression(out_of_bounds="clip"), the same model as calscope's.
Fold assignments differ from calscope's (numpy permutation vs id hash), so only the all-rows
temperature is compared.
"""
import os
import time

import numpy as np


def _nll_newton(L, y, beta=1.0, tol=1e-10, max_iter=50):
    rows = np.arange(len(y))
    Ly = L[rows, y]
    for _ in range(max_iter):
        Z = beta * L
        Z -= Z.max(axis=1, keepdims=True)
        E = np.exp(Z)
        E /= E.sum(axis=1, keepdims=True)
        m1 = (E * L).sum(axis=1)
        var = (E * L * L).sum(axis=1) - m1 * m1
        g = np.mean(m1 - Ly)
        h = np.mean(var)
        if not h > 0:
            break
        step = -g / h
        step = min(max(step, -beta / 2), beta)   # trust region [beta/2, 2 beta]
        beta += step
        if abs(step) <= tol * beta:
            break
    return beta


def ts_crossfit(P, y, folds=5, seed=0, budget=60.0):
    """Returns (seconds, all-rows temperature, fits run of 6). Fits not started within the budget
    are skipped and the time is extrapolated to all 6."""
    t0 = time.perf_counter()
    L = np.log(P)
    n = len(y)
    fold = np.random.default_rng(seed).permutation(n) % folds
    beta_all = _nll_newton(L, y)
    done = 1
    out = np.empty_like(P)
    for f in range(folds):
        if time.perf_counter() - t0 > budget:
            break
        tr = fold != f
        b = _nll_newton(L[tr], y[tr], beta=beta_all)
        Z = b * L[~tr]
        Z -= Z.max(axis=1, keepdims=True)
        E = np.exp(Z)
        out[~tr] = E / E.sum(axis=1, keepdims=True)
        done += 1
    t = time.perf_counter() - t0
    return t * (folds + 1) / done, 1.0 / beta_all, done


def iso_crossfit(P, y, folds=5, seed=0):
    """Returns (seconds, mean recalibrated top-1 confidence)."""
    from sklearn.isotonic import IsotonicRegression
    t0 = time.perf_counter()
    n, k = P.shape
    top = P.argmax(axis=1)
    conf = P[np.arange(n), top]
    correct = (top == y).astype(np.float64)
    fold = np.random.default_rng(seed).permutation(n) % folds
    newc = np.empty(n)
    for f in range(folds):
        tr = fold != f
        ir = IsotonicRegression(out_of_bounds="clip").fit(conf[tr], correct[tr])
        newc[~tr] = ir.predict(conf[~tr])
    # the other classes rescaled to keep the row sum, the prediction kept (calscope's rule)
    rest = 1.0 - conf
    P2 = P.copy()
    P2[np.arange(n), top] = 0.0
    p2 = P2.max(axis=1)
    floor = np.where(rest > 0, p2 / np.maximum(rest + p2, 1e-300), 1.0 / k)
    newc = np.minimum(np.maximum(newc, floor), 1.0)
    f = np.where(rest > 0, (1.0 - newc) / np.maximum(rest, 1e-300), 0.0)
    out = P2 * f[:, None]
    out[np.arange(n), top] = newc
    t = time.perf_counter() - t0
    return t, float(newc.mean())


def run(P_wide, y_wide, P, y, py, notes):
    """Fills py['recal_ts'], py['recal_iso_1m'] and their notes; returns values to compare."""
    vals = {}
    budget = float(os.environ.get("BENCH_PY_RECAL_BUDGET", "60"))
    if P_wide is not None:
        t, T, done = ts_crossfit(P_wide, y_wide, budget=budget)
        py["recal_ts"] = t
        notes["recal_ts"] = (f"numpy Newton on 1/T per fit (6 fits: 5 folds + all rows) + softmax of the "
                             f"held-out rows; temperature {T:.9f}"
                             + ("" if done == 6 else f"; EXTRAPOLATED from {done} of 6 fits (budget {budget:.0f} s)"))
        vals["temperature"] = T
    else:
        notes["recal_ts"] = "no wide dataset"
    try:
        t, mc = iso_crossfit(P, y)
        py["recal_iso_1m"] = t
        notes["recal_iso_1m"] = (f"sklearn IsotonicRegression(out_of_bounds='clip') per fold + numpy rescale; "
                                 f"mean_conf {mc:.6f} (folds differ from calscope's)")
    except ImportError:
        notes["recal_iso_1m"] = "sklearn not available"
    return vals
