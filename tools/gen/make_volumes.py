#!/usr/bin/python3
"""Synthetic segmentation test sets with KNOWN per-voxel probabilities.

Run with /usr/bin/python3 (Debian's numpy and nibabel):

    tools/gen/make_volumes.py --out DIR [--cases N] [--shape X,Y,Z] [--classes C]
                          [--label-values LIST] [--regions SPEC] [--temperature T | LO:HI]
                          [--format nifti|npz|both] [--npz-dtype float32|float16]
                          [--npz-key KEY] [--npz-stored] [--label-dtype uint8|int16|int32]
                          [--label-scale SLOPE,INTER] [--voxel-csv FILE] [--seed S] [--jobs N]

The model. Every case has a smooth random "anatomy": for each foreground class a few
axis-aligned Gaussian ellipsoids (separable, so a 240x240x155 volume costs a few outer products)
plus a smooth low-frequency field, giving logits z_c (background z_0 = 0). The TRUE class
probabilities are q = softmax(z); each voxel's label is drawn from q. What is written as the
prediction is miscalibrated by a temperature T (per case, fixed or drawn log-uniformly from
LO:HI): softmax maps p = softmax(z / T); with --regions, one independent sigmoid per region R,
p_R = sigmoid(logit(q_R) / T) with q_R = sum of q over R's label values. So the calibration
function is known: the true probability of a prediction p is softmax(T log p) (softmax) or
sigmoid(T logit p_R) (regions). T < 1 is over-confident (the usual case for segmentation nets).

What is written (DIR relative; CASE = case000, case001, ...):
  labels/CASE.nii.gz    the label map, (X, Y, Z) integer (--label-dtype, default uint8); with
                        --label-scale SLOPE,INTER the stored integers are (value - INTER) / SLOPE
                        and the header's scl_slope / scl_inter bring the values back
  nifti/CASE.nii.gz     MONAI SaveImage style: 4-D (X, Y, Z, C) float32 (--format nifti|both)
  npz/CASE.npz          nnU-Net v2 style: key "probabilities", (C, z, y, x) C order, float32 or
                        float16, np.savez_compressed (np.savez with --npz-stored) (npz|both)
  manifest.csv          case,probs,labels with paths relative to DIR (NIfTI when both formats
                        are written; then manifest_npz.csv lists the npz files)
  meta.json             what was generated: classes, label values / regions, the calscope flags
                        that read it, each case's temperature
  --voxel-csv FILE      the same voxels as calscope's per-voxel CSV: case,label,p_<value>...
                        (label = the label value; classes named by their values), one row per
                        voxel in NIfTI on-disk order (x fastest). With --regions, one binary
                        file per region, FILE with _<REGION> before the extension:
                        case,label,p (label 1 = the voxel is in the region).

Orientation: channel c of the npz array (C, z, y, x), flattened in C order, is the NIfTI
volume's channel c in on-disk order (x fastest) — both formats hold the same voxel in the same
place (tests/e2e/test_make_volumes.sh checks it with nibabel). Probabilities are rounded once
to the stored dtype, so NIfTI, npz and CSV hold the same numbers (float16 values are exact in
float32 and in the CSV's doubles). Everything is deterministic for a seed, and case i is the
same whatever --cases is (its random stream is seeded by (seed, i)). gzip is level 1
(nibabel's default; the npz members are zlib level 6, numpy's default); timestamps are fixed,
so a rerun writes identical bytes.
"""
import argparse
import collections
import functools
import gzip
import json
import os
import struct
import sys

import numpy as np
import nibabel as nib

BRATS_VALUES = [0, 1, 2, 4]
BRATS_REGIONS = "WT=1,2,4;TC=1,4;ET=4"


def fail(msg):
    print(f"make_volumes: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_ints(text, what):
    try:
        vals = [int(v) for v in text.split(",")]
    except ValueError:
        fail(f"{what} '{text}': expected comma-separated integers")
    return vals


def parse_regions(spec, values):
    """'WT=1,2,4;TC=1,4;ET=4' -> [(name, [values])]; every value must be a label value."""
    regions = []
    for part in spec.split(";"):
        name, eq, vals = part.partition("=")
        if not eq or not name.strip():
            fail(f"--regions '{spec}': expected NAME=v,v;NAME=v,...")
        members = parse_ints(vals, "--regions values")
        for v in members:
            if v not in values:
                fail(f"--regions: value {v} of region {name} is not a label value ({values})")
        if len(set(members)) == len(values):
            fail(f"--regions: region {name} holds every label value (nothing outside it)")
        regions.append((name.strip(), members))
    return regions


def parse_temperature(text):
    lo, sep, hi = text.partition(":")
    try:
        lo = float(lo)
        hi = float(hi) if sep else lo
    except ValueError:
        fail(f"--temperature '{text}': expected T or LO:HI")
    if not (0 < lo <= hi):
        fail(f"--temperature '{text}': need 0 < LO <= HI")
    return lo, hi


def smooth_axis(rng, n, n_waves):
    """A few random low-frequency cosines along one axis (float32, length n)."""
    t = (np.arange(n, dtype=np.float32) + 0.5) / n
    out = np.zeros(n, np.float32)
    for _ in range(n_waves):
        f = rng.uniform(0.5, 2.0)
        out += np.cos(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi)).astype(np.float32)
    return out / np.sqrt(n_waves)


def case_logits(rng, shape, n_classes):
    """Logits z (C, X, Y, Z) float32, z_0 = 0: per foreground class 2-3 blurred ellipsoids plus
    a smooth field. Separable Gaussians: each bump is an outer product of three 1-D profiles."""
    X, Y, Z = shape
    axes = [(np.arange(n, dtype=np.float32) + 0.5) / n for n in shape]
    z = np.zeros((n_classes,) + shape, np.float32)
    for c in range(1, n_classes):
        field = np.zeros(shape, np.float32)
        for _ in range(int(rng.integers(2, 4))):
            prof = []
            for a in axes:
                centre = rng.uniform(0.25, 0.75)
                radius = rng.uniform(0.08, 0.22)
                prof.append(np.exp(-0.5 * ((a - centre) / radius) ** 2).astype(np.float32))
            field += prof[0][:, None, None] * prof[1][None, :, None] * prof[2][None, None, :]
        noise = [smooth_axis(rng, n, 2) for n in shape]
        field *= np.float32(9.0)
        field += np.float32(1.2) * (noise[0][:, None, None] + noise[1][None, :, None]
                                    + noise[2][None, None, :])
        field -= np.float32(rng.uniform(3.5, 5.0))
        z[c] = field
    return z


def logsumexp(z, axis=0):
    m = z.max(axis=axis, keepdims=True)
    return (m + np.log(np.exp(z - m).sum(axis=axis, keepdims=True))).squeeze(axis)


def draw_labels(rng, z):
    """Class index per voxel drawn from q = softmax(z) (the truth), shape (X, Y, Z)."""
    q = np.exp(z - z.max(axis=0, keepdims=True))
    np.cumsum(q, axis=0, out=q)
    u = rng.random(z.shape[1:], dtype=np.float32) * q[-1]
    k = np.zeros(z.shape[1:], np.uint8)
    for c in range(z.shape[0] - 1):
        k += u >= q[c]
    return k


def predict_softmax(z, temp):
    s = z / np.float32(temp)
    s -= s.max(axis=0, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=0, keepdims=True)
    return s


def predict_regions(z, temp, regions, values):
    out = np.empty((len(regions),) + z.shape[1:], np.float32)
    for r, (_, members) in enumerate(regions):
        inside = [values.index(v) for v in members]
        outside = [i for i in range(len(values)) if i not in inside]
        # logit(q_R) = log q_R - log(1 - q_R): both as log-sum-exps of the logits, stable
        lg = logsumexp(z[inside]) - logsumexp(z[outside])
        out[r] = 1.0 / (1.0 + np.exp(-lg / np.float32(temp)))
    return out


def label_bytes_with_scale(labels_raw, affine, slope, inter):
    """A .nii.gz whose header carries scl_slope / scl_inter verbatim. nibabel recomputes the
    scaling of integer data on save, so the two fields (NIfTI-1 header bytes 112..119) are set
    on the serialised image; gzip with mtime 0 keeps the bytes reproducible."""
    raw = bytearray(nib.Nifti1Image(labels_raw, affine).to_bytes())
    raw[112:120] = struct.pack("<ff", slope, inter)
    return gzip.compress(bytes(raw), compresslevel=1, mtime=0)


def write_label_map(path, values_map, affine, dtype, scale):
    if scale is None:
        img = nib.Nifti1Image(values_map.astype(dtype), affine)
        img.header.set_slope_inter(1.0, 0.0)
        nib.save(img, path)
        return
    slope, inter = scale
    raw = (values_map.astype(np.float64) - inter) / slope
    stored = np.rint(raw)
    if np.any(np.abs(raw - stored) > 1e-9):
        fail(f"--label-scale {slope},{inter}: a label value is not (integer * SLOPE + INTER)")
    info = np.iinfo(dtype)
    if stored.min() < info.min or stored.max() > info.max:
        fail(f"--label-scale {slope},{inter}: stored values do not fit {np.dtype(dtype).name}")
    with open(path, "wb") as f:
        f.write(label_bytes_with_scale(stored.astype(dtype), affine, slope, inter))


def write_npz(path, probs_xyzc, key, stored):
    # (X, Y, Z, C) -> (C, Z, Y, X), C order: nnU-Net's layout
    arr = np.ascontiguousarray(probs_xyzc.transpose(3, 2, 1, 0))
    (np.savez if stored else np.savez_compressed)(path, **{key: arr})


def voxel_rows(case, label_values_flat, probs_flat):
    """CSV lines of one case: probs_flat (V, C) float32 in NIfTI order; repr of the exact
    double of each float32 (shortest round trip)."""
    labels = label_values_flat.tolist()
    rows = probs_flat.tolist()
    return [f"{case},{lab}," + ",".join(map(repr, row)) + "\n" for lab, row in zip(labels, rows)]


CaseConfig = collections.namedtuple(
    "CaseConfig", "seed shape values regions t_lo t_hi store_dtype out affine label_dtype scale "
    "fmts npz_key npz_stored csv")


def make_case(cfg, i):
    """Generates and writes case i (its random stream is seeded by (seed, i), so any process
    may make it); returns its temperature and, with a voxel CSV, the CSV lines of each file."""
    case = f"case{i:03d}"
    rng = np.random.default_rng([cfg.seed, i])
    t_lo, t_hi = cfg.t_lo, cfg.t_hi
    temp = float(np.exp(rng.uniform(np.log(t_lo), np.log(t_hi)))) if t_hi > t_lo else t_lo
    z = case_logits(rng, cfg.shape, len(cfg.values))
    k = draw_labels(rng, z)
    p = (predict_regions(z, temp, cfg.regions, cfg.values) if cfg.regions
         else predict_softmax(z, temp))
    del z
    # one rounding to the stored type; every format then holds the same numbers
    p = p.astype(cfg.store_dtype).astype(np.float32)
    probs_xyzc = np.moveaxis(p, 0, -1)  # (X, Y, Z, C) view
    label_map = np.array(cfg.values, np.int64)[k]
    write_label_map(os.path.join(cfg.out, "labels", case + ".nii.gz"), label_map, cfg.affine,
                    cfg.label_dtype, cfg.scale)
    if "nifti" in cfg.fmts:
        img = nib.Nifti1Image(np.ascontiguousarray(probs_xyzc), cfg.affine)
        img.header.set_data_dtype(np.float32)
        nib.save(img, os.path.join(cfg.out, "nifti", case + ".nii.gz"))
    if "npz" in cfg.fmts:
        write_npz(os.path.join(cfg.out, "npz", case + ".npz"), probs_xyzc.astype(cfg.store_dtype),
                  cfg.npz_key, cfg.npz_stored)
    chunks = []
    if cfg.csv:
        # NIfTI on-disk order: x fastest = Fortran order of (X, Y, Z)
        lab_flat = label_map.ravel(order="F")
        p_flat = p.transpose(0, 3, 2, 1).reshape(p.shape[0], -1).T
        if cfg.regions:
            for r, (_, members) in enumerate(cfg.regions):
                y = np.isin(lab_flat, members).astype(np.int64)
                chunks.append(voxel_rows(case, y, p_flat[:, r:r + 1]))
        else:
            chunks.append(voxel_rows(case, lab_flat, p_flat))
    return temp, chunks


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output folder (created)")
    ap.add_argument("--cases", type=int, default=4)
    ap.add_argument("--shape", default="24,20,16", help="X,Y,Z (default 24,20,16)")
    ap.add_argument("--classes", type=int, default=4,
                    help="softmax channels / label values (default 4)")
    ap.add_argument("--label-values",
                    help="label value of each class (default 0,1,2,4 for 4 classes, else 0..C-1)")
    ap.add_argument("--regions", nargs="?", const=BRATS_REGIONS,
                    help=f"independent sigmoid channels per region (default spec {BRATS_REGIONS})")
    ap.add_argument("--temperature", default="0.7",
                    help="T, or LO:HI drawn per case (log-uniform); p = softmax(z/T)")
    ap.add_argument("--format", choices=["nifti", "npz", "both"], default="both")
    ap.add_argument("--npz-dtype", choices=["float32", "float16"], default="float32")
    ap.add_argument("--npz-key", default="probabilities",
                    help="array name in the npz (nnU-Net v1: softmax)")
    ap.add_argument("--npz-stored", action="store_true", help="np.savez (no compression)")
    ap.add_argument("--label-dtype", choices=["uint8", "int16", "int32"], default="uint8")
    ap.add_argument("--label-scale", help="SLOPE,INTER written as scl_slope, scl_inter")
    ap.add_argument("--spacing", default="1,1,1", help="voxel size in mm (the affine)")
    ap.add_argument("--voxel-csv", help="also write the voxels as calscope's per-voxel CSV")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1,
                    help="cases made in parallel processes (the same files whatever N)")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)

    shape = tuple(parse_ints(a.shape, "--shape"))
    if len(shape) != 3 or min(shape) < 1:
        fail(f"--shape '{a.shape}': expected three positive sizes X,Y,Z")
    if a.cases < 1:
        fail("--cases must be >= 1")
    if a.jobs < 1:
        fail("--jobs must be >= 1")
    if a.label_values:
        values = parse_ints(a.label_values, "--label-values")
        if a.classes != 4 and len(values) != a.classes:
            fail(f"--label-values has {len(values)} values, --classes is {a.classes}")
    else:
        values = BRATS_VALUES if a.classes == 4 else list(range(a.classes))
    if len(values) < 2 or len(set(values)) != len(values) or min(values) < 0:
        fail(f"label values {values}: need >= 2 distinct values >= 0")
    regions = parse_regions(a.regions, values) if a.regions else None
    t_lo, t_hi = parse_temperature(a.temperature)
    spacing = [float(s) for s in a.spacing.split(",")]
    if len(spacing) != 3:
        fail(f"--spacing '{a.spacing}': expected three sizes")
    scale = None
    if a.label_scale:
        try:
            slope, inter = (float(s) for s in a.label_scale.split(","))
        except ValueError:
            fail(f"--label-scale '{a.label_scale}': expected SLOPE,INTER")
        if slope == 0:
            fail("--label-scale: SLOPE must not be 0")
        scale = (slope, inter)
    label_dtype = np.dtype(a.label_dtype)
    if max(values) > np.iinfo(label_dtype).max and scale is None:
        fail(f"label value {max(values)} does not fit {a.label_dtype}")

    affine = np.diag(spacing + [1.0])
    affine[:3, 3] = [-0.5 * s * n for s, n in zip(spacing, shape)]
    out = a.out
    fmts = ["nifti", "npz"] if a.format == "both" else [a.format]
    for d in ["labels"] + fmts:
        os.makedirs(os.path.join(out, d), exist_ok=True)

    names = [r[0] for r in regions] if regions else [str(v) for v in values]
    csv_files = None
    if a.voxel_csv:
        if regions:
            stem, ext = os.path.splitext(a.voxel_csv)
            csv_files = [open(f"{stem}_{n}{ext or '.csv'}", "w") for n in names]
            for f in csv_files:
                f.write("case,label,p\n")
        else:
            csv_files = [open(a.voxel_csv, "w")]
            csv_files[0].write("case,label," + ",".join("p_" + n for n in names) + "\n")

    manifest = {f: ["case,probs,labels\n"] for f in fmts}
    temps = []
    store_dtype = np.float16 if a.npz_dtype == "float16" else np.float32
    cfg = CaseConfig(a.seed, shape, values, regions, t_lo, t_hi, store_dtype, out, affine,
                     label_dtype, scale, fmts, a.npz_key, a.npz_stored, bool(csv_files))
    if a.jobs > 1:
        import multiprocessing
        pool = multiprocessing.Pool(a.jobs)
        made = pool.imap(functools.partial(make_case, cfg), range(a.cases))
    else:
        pool, made = None, (make_case(cfg, i) for i in range(a.cases))
    # in case order whatever the jobs: the manifests and the CSV are the same
    for i, (temp, chunks) in enumerate(made):
        case = f"case{i:03d}"
        temps.append(temp)
        for f in fmts:
            ext = ".nii.gz" if f == "nifti" else ".npz"
            manifest[f].append(f"{case},{f}/{case}{ext},labels/{case}.nii.gz\n")
        for fh, lines in zip(csv_files or [], chunks):
            fh.writelines(lines)
        if not a.quiet:
            print(f"make_volumes: {case} T={temp:.3f}", file=sys.stderr)
    if pool:
        pool.close()
        pool.join()

    for f in csv_files or []:
        f.close()
    for f in fmts:
        name = "manifest.csv" if f == fmts[0] else f"manifest_{f}.csv"
        with open(os.path.join(out, name), "w") as fh:
            fh.writelines(manifest[f])
    flags = (["--regions", ";".join(f"{n}={','.join(map(str, m))}" for n, m in regions)]
             if regions else ["--label-values", ",".join(map(str, values))])
    meta = {
        "generator": "tools/gen/make_volumes.py",
        "seed": a.seed, "shape": list(shape), "cases": a.cases,
        "kind": "regions" if regions else "softmax",
        "label_values": values, "class_names": names,
        "regions": [{"name": n, "values": m} for n, m in regions] if regions else None,
        "calscope_flags": flags,
        "formats": fmts, "npz_dtype": a.npz_dtype, "npz_key": a.npz_key,
        "label_dtype": a.label_dtype, "label_scale": list(scale) if scale else None,
        "temperature": {f"case{i:03d}": t for i, t in enumerate(temps)},
        "truth": ("q = softmax(T * log p)" if not regions else "q_R = sigmoid(T * logit p_R)"),
    }
    with open(os.path.join(out, "meta.json"), "w") as fh:
        json.dump(meta, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    main()
