#!/usr/bin/python3
"""The Python side of `make bench-seg`: the same reduction as `calscope reduce`, done the
straightforward way in numpy + nibabel (Debian python3-nibabel), timed, and checked against
calscope's statistics file.

    reference_seg.py MANIFEST.csv --label-values 0,1,2,4 [--fine 300] [--cases N]
                     [--compare STATS]

Per case: nibabel loads the probability map (X, Y, Z, C) and the label map whole; for each class
j the fine bin of p_j is floor(p_j * F) corrected on the exact edges i/F (bin i is
(i/F, (i+1)/F], 0 in bin 0 — the rule of src/engine/num/ubin.h), and np.bincount gives count,
sum p and sum y per bin; the same for the top-1 confidence (first maximum) and its correctness;
then sum (p - y)^2, sum over y=1 of -ln max(p, 1e-15) and over y=0 of -ln max(1 - p, 1e-15).
Softmax maps only (what the bench generates); NIfTI or npz (its one array, (C, z, y, x)).

Prints one line "python_reduce<TAB>SECONDS<TAB>CASES<TAB>PEAK_RSS_MB" (time of the loop over the
cases, not the interpreter's start), and with --compare one line "compare<TAB>ok|DIFF<TAB>what":
counts must be equal, sums equal to 1e-9 relative (the order of additions differs).
"""
import argparse
import csv
import math
import os
import resource
import sys
import time

import numpy as np
import nibabel as nib


def fine_bins(p, F, edges):
    """Fine bin of every value of p (float64) under the (i/F, (i+1)/F] rule."""
    b = np.floor(p * F).astype(np.int64)
    np.clip(b, 0, F - 1, out=b)
    # p * F can round across an edge; one step either way settles it on the exact doubles
    b -= (b > 0) & (p <= edges[b])
    b += (b < F - 1) & (p > edges[b + 1])
    return b


def reduce_case(probs_path, labels_path, values, F, edges):
    if probs_path.endswith(".npz"):                             # nnU-Net: (C, z, y, x)
        with np.load(probs_path) as z:
            p4 = z[z.files[0]].transpose(3, 2, 1, 0)
    else:
        p4 = np.asanyarray(nib.load(probs_path).dataobj)      # (X, Y, Z, C) float32
    lab = np.asanyarray(nib.load(labels_path).dataobj)        # (X, Y, Z), scaling applied
    k = p4.shape[-1]
    out = {"cnt": np.zeros((k, F), np.int64), "sum_p": np.zeros((k, F)),
           "sum_y": np.zeros((k, F), np.int64), "sq": np.zeros(k), "nll_pos": np.zeros(k),
           "nll_neg": np.zeros(k)}
    lab = lab.ravel()
    for j in range(k):
        p = p4[..., j].ravel().astype(np.float64)
        y = lab == values[j]
        b = fine_bins(p, F, edges)
        out["cnt"][j] = np.bincount(b, minlength=F)
        out["sum_p"][j] = np.bincount(b, weights=p, minlength=F)
        out["sum_y"][j] = np.bincount(b[y], minlength=F)
        out["sq"][j] = np.sum((p - y) ** 2)
        out["nll_pos"][j] = -np.sum(np.log(np.maximum(p[y], 1e-15)))
        out["nll_neg"][j] = -np.sum(np.log(np.maximum(1.0 - p[~y], 1e-15)))
    flat = p4.reshape(-1, k)
    arg = flat.argmax(axis=1)
    conf = flat[np.arange(flat.shape[0]), arg].astype(np.float64)
    correct = np.asarray(values)[arg] == lab
    b = fine_bins(conf, F, edges)
    out["t_cnt"] = np.bincount(b, minlength=F)
    out["t_sum_conf"] = np.bincount(b, weights=conf, minlength=F)
    out["t_sum_correct"] = np.bincount(b[correct], minlength=F)
    out["voxels"] = lab.size
    return out


def read_stats(path):
    """calscope's statistics file (docs/segmentation.md, "Statistics files"): records c / t / s
    keyed by case index; returns {case_name: arrays like reduce_case's}."""
    import gzip
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    names, k, F, cases = {}, None, None, {}
    with opener(path, "rt", newline="") as f:
        for r in csv.reader(f):
            if not r or r[0].startswith("#"):
                continue
            tag = r[0]
            if tag == "fine":
                F = int(r[1])
            elif tag == "classes":
                k = int(r[1])
            elif tag == "case":
                names[int(r[1])] = r[2]
                cases[r[2]] = {"cnt": np.zeros((k, F), np.int64), "sum_p": np.zeros((k, F)),
                               "sum_y": np.zeros((k, F), np.int64), "sq": np.zeros(k),
                               "nll_pos": np.zeros(k), "nll_neg": np.zeros(k),
                               "t_cnt": np.zeros(F, np.int64), "t_sum_conf": np.zeros(F),
                               "t_sum_correct": np.zeros(F, np.int64), "voxels": int(r[3])}
            elif tag == "c":
                c, j, i = cases[names[int(r[1])]], int(r[2]), int(r[3])
                c["cnt"][j, i], c["sum_p"][j, i], c["sum_y"][j, i] = int(r[4]), float(r[5]), int(r[6])
            elif tag == "t":
                c, i = cases[names[int(r[1])]], int(r[2])
                c["t_cnt"][i], c["t_sum_conf"][i], c["t_sum_correct"][i] = \
                    int(r[3]), float(r[4]), int(r[5])
            elif tag == "s":
                c, j = cases[names[int(r[1])]], int(r[2])
                c["sq"][j], c["nll_pos"][j], c["nll_neg"][j] = float(r[3]), float(r[4]), float(r[5])
    return cases


def compare(ref, stats_path):
    try:
        got = read_stats(stats_path)
    except (KeyError, ValueError, IndexError, TypeError) as e:
        return "DIFF", f"cannot read {stats_path} as a statistics file ({e!r})"
    worst, where = 0.0, ""
    for name, r in ref.items():
        g = got.get(name)
        if g is None:
            return "DIFF", f"case {name} missing from {stats_path}"
        for key in ("cnt", "sum_y", "t_cnt", "t_sum_correct"):
            if not np.array_equal(r[key], g[key]):
                return "DIFF", f"{name} {key} differs (counts must be equal)"
        if r["voxels"] != g["voxels"]:
            return "DIFF", f"{name} voxels {g['voxels']} != {r['voxels']}"
        for key in ("sum_p", "t_sum_conf", "sq", "nll_pos", "nll_neg"):
            d = np.abs(np.asarray(r[key]) - np.asarray(g[key])) / np.maximum(1.0, np.abs(r[key]))
            if d.max() > worst:
                worst, where = float(d.max()), f"{name} {key}"
    if worst > 1e-9:
        return "DIFF", f"largest relative difference {worst:.2e} ({where})"
    return "ok", (f"{len(ref)} cases: counts equal, sums within {worst:.1e} relative")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("manifest")
    ap.add_argument("--label-values", required=True)
    ap.add_argument("--fine", type=int, default=300)
    ap.add_argument("--cases", type=int, help="only the first N cases")
    ap.add_argument("--compare", help="calscope's statistics file of the same manifest")
    a = ap.parse_args()
    values = [int(v) for v in a.label_values.split(",")]
    F = a.fine
    edges = np.array([i / F for i in range(F + 1)])   # each a correctly rounded division
    base = os.path.dirname(os.path.abspath(a.manifest))
    with open(a.manifest, newline="") as f:
        rows = list(csv.DictReader(f))
    if a.cases:
        rows = rows[:a.cases]
    ref = {}
    t0 = time.perf_counter()
    for r in rows:
        ref[r["case"]] = reduce_case(os.path.join(base, r["probs"]),
                                     os.path.join(base, r["labels"]), values, F, edges)
    dt = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"python_reduce\t{dt:.6f}\t{len(rows)}\t{rss_mb:.0f}")
    if a.compare:
        status, what = compare(ref, a.compare)
        print(f"compare\t{status}\t{what}")
    return 0 if math.isfinite(dt) else 1


if __name__ == "__main__":
    sys.exit(main())
