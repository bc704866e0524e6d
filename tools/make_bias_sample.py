#!/usr/bin/python3
"""Writes a synthetic binary prediction file whose true top-1 ECE is known
(docs/metrics.md, "Bias where the truth is known").

    /usr/bin/python3 tools/make_bias_sample.py OUT.csv [--n 400] [--a 2] [--b 1] [--k 2]
                                                       [--affine A,B] [--seed 0]

Model (the synthetic generator of the calibration-estimator literature):
  u ~ Beta(a, b), top-1 confidence c = 0.5 + 0.5 u  (a binary top-1 confidence lies in [0.5, 1])
  correct ~ Bernoulli(f(c)), f(c) = c**k (default; k > 1 over-confident, k < 1 under-confident)
  or, with --affine A,B, f(c) = clip(A + B c, 0, 1).
File: calscope's CSV `label,p_0,p_1` with p_1 = c and p_0 = 1 - c, so class 1 is predicted with
confidence c (the top-1 confidence is exactly c); label = 1 when the draw is correct, else 0.

Truth: true top-1 ECE = E|f(c) - c| = integral over u of |f(c(u)) - c(u)| Beta(u; a, b) du,
computed by scipy.integrate.quad (absolute error under 1e-10; the points where f(c) = c are
passed as breakpoints). Written beside the CSV as OUT.truth.json (the CSV loader takes no
comment lines): {"true_ece": X, "model": ..., "n": N, "seed": S}. Pass X to
`calscope report --curve size --true-ece X`.
"""
import argparse
import json
import sys

import numpy as np
from scipy import integrate, optimize, stats


def make_f(args):
    if args.affine is not None:
        a0, a1 = (float(v) for v in args.affine.split(","))
        return (lambda c: np.clip(a0 + a1 * c, 0.0, 1.0)), {"f": "affine", "A": a0, "B": a1}
    k = args.k
    return (lambda c: c ** k), {"f": "power", "k": k}


def true_ece(f, a, b):
    conf = lambda u: 0.5 + 0.5 * u
    g = lambda u: f(conf(u)) - conf(u)
    # breakpoints: sign changes of f(c) - c on a fine grid, refined by brentq
    grid = np.linspace(0.0, 1.0, 2001)
    vals = np.array([g(u) for u in grid])
    cuts = [optimize.brentq(g, grid[i], grid[i + 1]) for i in range(len(grid) - 1)
            if vals[i] * vals[i + 1] < 0]
    pdf = stats.beta(a, b).pdf
    edges = [0.0] + cuts + [1.0]
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        v, err = integrate.quad(lambda u: abs(g(u)) * pdf(u), lo, hi, epsabs=1e-12, epsrel=1e-12,
                                limit=200)
        assert err < 1e-10, err
        total += v
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--a", type=float, default=2.0)
    ap.add_argument("--b", type=float, default=1.0)
    ap.add_argument("--k", type=float, default=2.0)
    ap.add_argument("--affine", default=None, help="A,B: f(c) = clip(A + B c, 0, 1)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    f, model = make_f(args)
    rng = np.random.default_rng(args.seed)
    c = 0.5 + 0.5 * rng.beta(args.a, args.b, size=args.n)
    correct = rng.random(args.n) < f(c)
    with open(args.out, "w", newline="\n") as fh:
        fh.write("label,p_0,p_1\n")
        for ci, ok in zip(c, correct):
            fh.write(f"{1 if ok else 0},{repr(float(1.0 - ci))},{repr(float(ci))}\n")
    model.update({"confidence": "0.5 + 0.5 * Beta(a, b)", "a": args.a, "b": args.b})
    truth = {"true_ece": true_ece(f, args.a, args.b), "model": model, "n": args.n,
             "seed": args.seed, "integration": "scipy.integrate.quad"}
    with open(args.out.rsplit(".csv", 1)[0] + ".truth.json", "w") as fh:
        json.dump(truth, fh, indent=1)
        fh.write("\n")
    print(f"  {args.out}: {args.n} rows, true top-1 ECE {truth['true_ece']:.6f}")


if __name__ == "__main__":
    sys.exit(main())
