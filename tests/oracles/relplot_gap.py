#!/usr/bin/python3
"""Why relplot's smooth ECE is not the paper's, step by step, computed here independently of
relplot and of calscope (numpy only).

The definition (Błasiok & Nakkiran, 2023, "Smooth ECE: Principled Reliability Diagrams via
Kernel Smoothing"), which calscope computes exactly:

    smECE_s = (1/n) * integral over [0, 1] of |sum_i K_s(t, f_i) (f_i - y_i)| dt

with K_s the Gaussian of width s reflected at 0 and 1 (images 2k + f and 2k - f), so that every
sample's kernel has mass 1 inside [0, 1], also a sample at exactly 0 or 1.

relplot (apple/ml-calibration commit 18ff21a, src/relplot/kernels.py and metrics.py:
smooth_ece, ReflectedGaussianKernel, smooth_round_to_grid, interpolate) computes

    sum over t of |A_r(t)| / sum over t of (A_1(t) + 1e-4),   t = linspace(0, 1, max(200, round(10 / s)))

where A_g is sum_i g_i K(t, f_i) as relplot evaluates it: each sample's weight is split between
the two nodes of an E-point grid around it (E = max(2000, round(20 / s)) // 2 + 1, 1001 nodes for
s >= 0.01), the node values are mirrored by np.concatenate([flip(v)[:-1], v, flip(v)[1:]]) — the
end nodes 0 and E - 1 are not mirrored — convolved with the kernel cut at +-0.5, and read back at
t by linear interpolation.

The steps below add relplot's deviations one at a time (each row = the previous plus one):

  definition  the exact integral (trapezoid rule on 20,001 points), full reflection, / n
  grid        the samples moved to relplot's grid nodes (weights split as relplot splits them)
  end_once    the end nodes without their mirror image: a sample within one grid step
              (1/(E - 1)) of 0 or 1 keeps only part of its kernel inside [0, 1] — one at exactly
              0 or 1 half of it — so A_1 integrates to less than n
  ratio       divided by the integral of A_1 (the density's mass, now < n) instead of by n:
              the saturated samples count as fractions of a sample in the normaliser
  mesh        relplot's sums on its mesh of max(200, round(10 / s)) points (both ends at full
              weight), its interpolation, cut kernel and eps: relplot's number (1e-9 relative)
  full_ratio  mesh with relplot's sums but with the end nodes mirrored: what relplot would
              report with a full reflection (a control: close to the definition)

Usage:
  relplot_gap.py steps FILE LENS SIGMA
      prints each step's value for the samples of FILE (top1, or class:C) at bandwidth SIGMA.
  relplot_gap.py check CALSCOPE
      for the cases in CASES: the definition at calscope's sigma* equals calscope's smECE
      (1e-6), the mesh step at relplot's sigma equals relplot's own smECE from
      tests/fixtures/relplot_smece.tsv (1e-9 relative), and the control full_ratio is within
      FULL_RATIO_TOL of the definition at that sigma; prints one table line per case and
      exits 1 when any check fails.
"""
import json
import math
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from compat_reference import load  # noqa: E402  (the samples as calscope reads them)

SQ2PI = math.sqrt(2 * math.pi)
FINE = 20001            # points of the trapezoid rule for the integrals
MESH = 200              # relplot's config.smECE_mesh_pts: at least this many points
EPS = 1e-4              # relplot's smooth(eps=0.0001)
FULL_RATIO_TOL = 0.002  # the control's distance from the definition (seen: at most 0.0007)
CASES = [("samples/breast_cancer_gnb.csv", "top1"), ("samples/breast_cancer_gnb.csv", "class:1"),
         ("samples/iris_gnb.csv", "top1"), ("samples/digits_gnb.csv", "top1"),
         ("samples/digits_logreg.csv", "top1"), ("samples/breast_cancer_ts.csv", "top1")]
STEPS = ["definition", "grid", "end_once", "ratio", "mesh", "full_ratio"]


def lens_values(path, lens):
    """(f, y): the top-1 confidence and correctness (first argmax, as numpy's), or p[C] and
    label == C."""
    P, lab = load(path)
    if lens == "top1":
        return P.max(axis=1), (P.argmax(axis=1) == lab).astype(float)
    c = int(lens.split(":")[1])
    return P[:, c].astype(float), (lab == c).astype(float)


def grid_size(s):
    return max(2000, round(20 / s)) // 2 + 1


def smoothed(t, pos, w, s, mirror0=None, mirror1=None):
    """sum_m w_m (phi(t - pos_m) + mirror0_m phi(t + pos_m) + mirror1_m phi(t - 2 + pos_m)) at
    every t, phi the normal density of width s: the reflected kernel (images beyond these are
    below 1e-19 for s <= 0.15). mirror0 / mirror1 weigh the two mirror images (1 = reflected)."""
    m0 = np.ones_like(w) if mirror0 is None else mirror0
    m1 = np.ones_like(w) if mirror1 is None else mirror1
    out = np.zeros(len(t))
    for i in range(0, len(t), 1024):
        tt = t[i:i + 1024, None]
        k = (np.exp(-0.5 * ((tt - pos) / s) ** 2) + m0 * np.exp(-0.5 * ((tt + pos) / s) ** 2)
             + m1 * np.exp(-0.5 * ((tt - 2 + pos) / s) ** 2))
        out[i:i + 1024] = (k * w).sum(axis=1)
    return out / (SQ2PI * s)


def trapezoid(t, v):
    return float(np.sum((v[1:] + v[:-1]) * np.diff(t)) / 2)


def node_masses(f, g, E):
    """relplot's split of each weight g_i between the nodes floor(f (E-1)) (clipped to E - 2)
    and the next, in proportion to the distance."""
    x = f * (E - 1)
    lo = np.clip(x.astype(int), 0, E - 2)
    frac = x - lo
    mass = np.zeros(E)
    np.add.at(mass, lo, (1 - frac) * g)
    np.add.at(mass, lo + 1, frac * g)
    return mass


def node_values(mass, s, E, end_once):
    """The smoothed masses at every node as relplot's convolution gives them: the kernel cut at
    +-(E - 1) / 2 nodes, one mirror image of every node but (end_once) the two end nodes."""
    j = np.arange(E)[:, None]
    m = np.arange(E)[None, :]
    h = (E - 1) // 2
    x = np.arange(E) / (E - 1)

    def part(d):     # kernel at a distance of d nodes, inside the cut
        return np.where(np.abs(d) <= h, np.exp(-0.5 * (d / (E - 1) / s) ** 2), 0.0)
    w0 = np.ones(E)
    w1 = np.ones(E)
    if end_once:
        w0[0] = 0.0
        w1[E - 1] = 0.0
    k = part(j - m) + part(j + m) * w0[None, :] + part(2 * (E - 1) - j - m) * w1[None, :]
    del x
    return (k * mass[None, :]).sum(axis=1) / (SQ2PI * s)


def interpolate(t, y):
    """Linear interpolation of y given on i / (len(y) - 1)."""
    B = len(y)
    ind = np.clip((t * (B - 1)).astype(int), 0, B - 2)
    res = (t - ind / (B - 1)) * (B - 1)
    return y[ind] * (1 - res) + y[ind + 1] * res


def steps(f, y, s):
    """{step: value} for the samples (f, y) at bandwidth s (see the usage)."""
    n = len(f)
    r = f - y
    t = np.linspace(0.0, 1.0, FINE)
    out = {"definition": trapezoid(t, np.abs(smoothed(t, f, r, s))) / n}
    E = grid_size(s)
    nodes = np.arange(E) / (E - 1)
    mr, m1 = node_masses(f, r, E), node_masses(f, np.ones(n), E)
    out["grid"] = trapezoid(t, np.abs(smoothed(t, nodes, mr, s))) / n
    keep0 = np.ones(E)
    keep0[0] = 0.0
    keep1 = np.ones(E)
    keep1[E - 1] = 0.0
    ar = smoothed(t, nodes, mr, s, keep0, keep1)
    a1 = smoothed(t, nodes, m1, s, keep0, keep1)
    out["end_once"] = trapezoid(t, np.abs(ar)) / n
    out["density_mass"] = trapezoid(t, a1)
    out["ratio"] = trapezoid(t, np.abs(ar)) / out["density_mass"]
    tm = np.linspace(0.0, 1.0, max(round(10 / s), MESH))
    for name, end_once in (("mesh", True), ("full_ratio", False)):
        vr = interpolate(tm, node_values(mr, s, E, end_once))
        v1 = interpolate(tm, node_values(m1, s, E, end_once))
        out[name] = float(np.sum(np.abs(vr)) / np.sum(v1 + EPS))
    return out


def relplot_fixture():
    """(path, lens) -> (smECE, sigma) of relplot itself, automatic bandwidth."""
    got = {}
    with open(os.path.join(ROOT, "tests", "fixtures", "relplot_smece.tsv")) as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            path, lens, sigma, v, w = line.split("\t")
            if sigma == "auto":
                got[(path, lens)] = (float(v), float(w))
    return got


def calscope_smece(exe, path, lens):
    p = subprocess.run([exe, "report", "--format", "json", "--lens", lens, os.path.join(ROOT, path)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"relplot_gap.py: {exe} on {path}: exit {p.returncode}: {p.stderr.strip()}")
    m = json.loads(p.stdout)["files"][0]["metrics"]
    return m["smece"], m["smece_sigma"]


def check(exe):
    fixture = relplot_fixture()
    bad = 0
    print("file lens | calscope smECE (sigma*) definition(sigma*) | relplot smECE (sigma) "
          "definition grid end_once ratio mesh full_ratio (all at relplot's sigma) | density mass / n")
    for path, lens in CASES:
        f, y = lens_values(os.path.join(ROOT, path), lens)
        cs, cs_sigma = calscope_smece(exe, path, lens)
        at_cs = steps(f, y, cs_sigma)
        rp, rp_sigma = fixture[(path, lens)]
        at_rp = steps(f, y, rp_sigma)
        print(f"{path} {lens} | {cs:.6f} ({cs_sigma:.6f}) {at_cs['definition']:.6f} | {rp:.6f} ({rp_sigma:.6f}) "
              + " ".join(f"{at_rp[k]:.6f}" for k in STEPS) + f" | {at_rp['density_mass'] / len(f):.4f}")
        if abs(at_cs["definition"] - cs) > 1e-6:
            print(f"  FAIL: the definition at sigma* {at_cs['definition']!r} is not calscope's {cs!r}")
            bad += 1
        if abs(at_rp["mesh"] - rp) > 1e-9 * rp:
            print(f"  FAIL: the definition with relplot's deviations {at_rp['mesh']!r} is not relplot's {rp!r}")
            bad += 1
        if abs(at_rp["full_ratio"] - at_rp["definition"]) > FULL_RATIO_TOL:
            print(f"  FAIL: relplot's sums with the end nodes mirrored {at_rp['full_ratio']!r} are not near "
                  f"the definition {at_rp['definition']!r}")
            bad += 1
    return bad


def main(argv):
    if len(argv) == 4 and argv[0] == "steps":
        f, y = lens_values(argv[1], argv[2])
        for k, v in steps(f, y, float(argv[3])).items():
            print(f"{k} {v!r}")
        return 0
    if len(argv) == 2 and argv[0] == "check":
        return 1 if check(argv[1]) else 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
