#!/usr/bin/python3
"""Randomized differential check of `calscope report --format json` against the independent numpy
reference tests/oracles/reference.py, on prediction files neither has seen.

    /usr/bin/python3 tests/oracles/random_vs_reference.py [--seed S] [--files N] [--calscope BIN] [--dir DIR]

Writes N random files to DIR (default a temporary folder) — K from 2 to 37 classes, 1 to 3,000 rows,
Dirichlet probabilities of any sharpness, repeated rows (ties), one-hot rows, %.3f to %.17g, logit
files, the binary shorthand, classes named by words — and runs both on each under a set of settings
(bins, mass binning, distances, lenses). Prints every metric that differs by more than 1e-10
relative (smooth ECE, found by a root search: 1e-7) and every exit status that differs, then
"runs R, problems P"; exit status 1 when P > 0. The reference does not check row sums: a file
calscope refuses for a row sum is a problem only when every row's numbers, as written (exact
decimals), sum to 1 within the default 1e-3 (a row written with 3 decimals summing to 1.001 must
pass: docs/input.md, "The row-sum tolerance").
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from fractions import Fraction

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SETTINGS = [[], ["--bins", "10"], ["--binning", "mass"], ["--distance", "l2"], ["--distance", "max"],
            ["--lens", "classwise"], ["--lens", "topk:2"], ["--bins", "7", "--binning", "mass"],
            ["--lens", "class:0"], ["--sigma", "0.03"], ["--bins", "1"], ["--bins", "1", "--binning", "mass"],
            ["--lens", "full", "--bins", "3"], ["--lens", "classwise", "--distance", "max"]]
KEYS = ["accuracy", "ece", "ace", "mce", "rece_g", "brier", "nll", "aece", "sce", "l2ce", "l2ce_debiased",
        "ece_sweep", "ece_sweep_bins", "smece", "smece_sigma"]


def write_file(rng, path):
    kind = rng.choice(["prob", "prob", "logit", "binary", "named"])
    K = 2 if kind == "binary" else int(rng.choice([2, 3, 5, 10, 37] if kind == "prob" else [2, 3, 4, 6]))
    n = int(rng.choice([1, 2, 3, 7, 50, 400, 3000]))
    if kind == "logit":
        Z = rng.normal(0, float(rng.choice([0.5, 3, 20])), size=(n, K))
        P = np.exp(Z - Z.max(1, keepdims=True))
        P /= P.sum(1, keepdims=True)
    else:
        P = rng.dirichlet([float(rng.choice([0.05, 0.3, 1.0, 5.0]))] * K, size=n)
        if rng.random() < 0.3:
            P = P[rng.integers(0, max(1, n // 3), size=n)]
        if rng.random() < 0.3:
            m = rng.random(n) < 0.2
            P[m] = np.eye(K)[rng.integers(0, K, size=n)][m]
    y = np.array([rng.choice(K, p=p) if rng.random() < 0.8 else rng.integers(0, K) for p in P])
    fmt = str(rng.choice(["%.3f", "%.6g", "%.12g", "%.17g"]))
    with open(path, "w") as f:
        if kind == "logit":
            f.write("label," + ",".join(f"logit_{j}" for j in range(K)) + "\n")
            for i in range(n):
                f.write(f"{y[i]}," + ",".join("%.9g" % v for v in Z[i]) + "\n")
        elif kind == "binary":
            f.write("label,p\n")
            for i in range(n):
                f.write(f"{y[i]},{fmt % P[i, 1]}\n")
        elif kind == "named":
            names = ["cat", "dog", "eel", "fox", "gnu", "hen"][:K]
            f.write("y," + ",".join(f"p_{nm}" for nm in names) + "\n")
            for i in range(n):
                f.write(names[y[i]] + "," + ",".join(fmt % v for v in P[i]) + "\n")
        else:
            f.write("label," + ",".join(f"p_{j}" for j in range(K)) + "\n")
            for i in range(n):
                f.write(f"{y[i]}," + ",".join(fmt % v for v in P[i]) + "\n")
    return K


def rows_within(path, tol):
    """Whether every row's probabilities, read as the exact decimals written, sum to 1 within tol."""
    with open(path) as f:
        head = f.readline().strip().split(",")
        if not any(h.startswith("p_") for h in head) or head == ["label", "p"]:
            return False
        for line in f:
            vals = line.strip().split(",")[1:]
            if abs(sum(Fraction(v) for v in vals) - 1) > tol:
                return False
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--calscope", default=os.path.join(ROOT, "build", "calscope"))
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    out = a.dir or tempfile.mkdtemp(prefix="calscope-random-")
    ref = os.path.join(ROOT, "tests", "oracles", "reference.py")
    runs = bad = 0
    for it in range(a.files):
        path = os.path.join(out, f"r{a.seed}_{it}.csv")
        K = write_file(rng, path)
        for s in SETTINGS:
            if any(x.startswith("topk:") and int(x[5:]) > K for x in s):
                continue
            c = subprocess.run([a.calscope, "report", "--format", "json", *s, path], capture_output=True, text=True)
            r = subprocess.run([sys.executable, ref, *s, path], capture_output=True, text=True)
            runs += 1
            if c.returncode or r.returncode:
                if "probabilities sum to" in c.stderr:
                    if rows_within(path, Fraction(1, 1000)):   # every row is 1 within 1e-3 as written
                        print("REFUSED", path, s, c.stderr.strip()[:200])
                        bad += 1
                    continue
                if c.returncode != r.returncode:
                    print("STATUS", path, s, c.returncode, r.returncode, c.stderr.strip()[:200])
                    bad += 1
                continue
            mc = json.loads(c.stdout)["files"][0].get("metrics", {})
            rf = json.loads(r.stdout)["files"][0]
            mr, skip = rf.get("metrics", {}), set(rf.get("skip", {}) or [])
            for k in KEYS:
                if k in skip or k not in mr:
                    continue
                vc, vr = mc.get(k), mr[k]
                rnull = vr is None or (isinstance(vr, float) and math.isnan(vr))
                if vc is None or rnull:
                    if (vc is None) != rnull:
                        print("NULL", path, s, k, vc, vr)
                        bad += 1
                    continue
                tol = 1e-7 if k.startswith("smece") else 1e-10
                if abs(vc - vr) > tol * max(1.0, abs(vr)):
                    print("DIFF", path, s, k, vc, vr)
                    bad += 1
    print(f"runs {runs}, problems {bad}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
