#!/usr/bin/python3
"""Checks of tools/gen/make_volumes.py's output (called by test_make_volumes.sh; prints ok / not ok).

    make_volumes_check.py layout DIR CSV       NIfTI, npz and the voxel CSV hold the same voxel in
                                               the same place; label maps agree
    make_volumes_check.py truth DIR            labels follow the KNOWN calibration function
                                               (softmax(T log p), or sigmoid(T logit p) per region)
    make_volumes_check.py scale DIR SLOPE INTER  the label map stores (v - INTER) / SLOPE and nibabel
                                               reads the values back
    make_volumes_check.py f16 DIR              npz float16 (<f2), equal to the NIfTI float32 values
    make_volumes_check.py same A B             two trees hold the same files with the same content
                                               (text equal; volumes: arrays, dtypes, affines) —
                                               bytes may differ with another zlib
"""
import csv
import json
import os
import sys
import zipfile

import numpy as np
import nibabel as nib

fails = 0


def check(name, cond, *diag):
    global fails
    if cond:
        print(f"ok - {name}")
    else:
        fails += 1
        print(f"not ok - {name}")
        for d in diag:
            print(f"#   {d}")


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def nifti(path):
    return np.asanyarray(nib.load(path).dataobj)


def layout(d, csv_path):
    meta = json.load(open(os.path.join(d, "meta.json")))
    man = rows(os.path.join(d, "manifest.csv"))
    man_npz = {r["case"]: r for r in rows(os.path.join(d, "manifest_npz.csv"))}
    check("manifest lists every case with relative paths",
          [r["case"] for r in man] == sorted(meta["temperature"]) and
          all(not os.path.isabs(r["probs"]) for r in man), man)
    vox = {}
    with open(csv_path) as f:
        rd = csv.reader(f)
        header = next(rd)
        check("voxel CSV header: case,label,p_<value>",
              header == ["case", "label"] + ["p_" + n for n in meta["class_names"]], header)
        for r in rd:
            vox.setdefault(r[0], []).append(r[1:])
    for r in man:
        case = r["case"]
        lab = nifti(os.path.join(d, r["labels"]))
        img = nib.load(os.path.join(d, r["probs"]))
        pn = np.asanyarray(img.dataobj)
        npz = np.load(os.path.join(d, man_npz[case]["probs"]))
        pz = npz["probabilities"]
        X, Y, Z = meta["shape"]
        C = len(meta["class_names"])
        check(f"{case}: NIfTI (X,Y,Z,C) float32, npz (C,z,y,x) float32, labels (X,Y,Z)",
              pn.shape == (X, Y, Z, C) and pn.dtype == np.float32 and
              pz.shape == (C, Z, Y, X) and pz.dtype == np.float32 and lab.shape == (X, Y, Z),
              (pn.shape, pn.dtype, pz.shape, pz.dtype, lab.shape))
        check(f"{case}: npz channel transposed == NIfTI channel, every voxel",
              all(np.array_equal(pz[c].T, pn[..., c]) for c in range(C)))
        # C-order flattening of the npz channel = NIfTI on-disk order (x fastest)
        check(f"{case}: npz C-order flatten == NIfTI Fortran (on-disk) order",
              all(np.array_equal(pz[c].ravel(order="C"), pn[..., c].ravel(order="F"))
                  for c in range(C)))
        check(f"{case}: probs and labels share the affine",
              np.array_equal(img.affine, nib.load(os.path.join(d, r["labels"])).affine))
        sums = pn.astype(np.float64).sum(axis=-1)
        check(f"{case}: softmax channels sum to 1 within 1e-6 and lie in [0,1]",
              np.abs(sums - 1).max() < 1e-6 and pn.min() >= 0 and pn.max() <= 1,
              np.abs(sums - 1).max())
        rr = vox.get(case, [])
        want_lab = lab.ravel(order="F")
        want_p = np.stack([pn[..., c].ravel(order="F") for c in range(C)], axis=1)
        got_lab = np.array([int(x[0]) for x in rr])
        got_p = np.array([[float(v) for v in x[1:]] for x in rr])
        check(f"{case}: voxel CSV rows = NIfTI voxels in on-disk order, values exact",
              got_lab.shape == want_lab.shape and np.array_equal(got_lab, want_lab) and
              np.array_equal(got_p, want_p.astype(np.float64)),
              f"rows {len(rr)} want {want_lab.size}")
        present = set(np.unique(lab).tolist())
        check(f"{case}: label values drawn from {meta['label_values']}",
              present <= set(meta["label_values"]) and len(present) >= 2, present)


def truth(d):
    """Pooled over cases: bin the TRUE probability q (recovered from p and the case's T by
    the documented calibration function) in 10 bins; in every bin with >= 400 voxels the label
    frequency is within 4 standard errors of mean q — and p itself is further from the labels
    (the miscalibration is real)."""
    meta = json.load(open(os.path.join(d, "meta.json")))
    regions = meta["regions"]
    qs, ps, ys = [], [], []
    for r in rows(os.path.join(d, "manifest.csv")):
        T = meta["temperature"][r["case"]]
        lab = nifti(os.path.join(d, r["labels"]))
        p = np.asanyarray(nib.load(os.path.join(d, r["probs"])).dataobj).astype(np.float64)
        if regions:
            for j, reg in enumerate(regions):
                pj = np.clip(p[..., j], 1e-12, 1 - 1e-12)
                qj = 1 / (1 + np.exp(-T * np.log(pj / (1 - pj))))
                qs.append(qj.ravel()); ps.append(pj.ravel())
                ys.append(np.isin(lab, reg["values"]).ravel())
        else:
            lp = T * np.log(np.maximum(p, 1e-30))
            q = np.exp(lp - lp.max(axis=-1, keepdims=True))
            q /= q.sum(axis=-1, keepdims=True)
            for j, v in enumerate(meta["label_values"]):
                qs.append(q[..., j].ravel()); ps.append(p[..., j].ravel())
                ys.append((lab == v).ravel())
    q, p, y = np.concatenate(qs), np.concatenate(ps), np.concatenate(ys).astype(np.float64)

    def worst_z(s):
        b = np.minimum((s * 10).astype(int), 9)
        zs = []
        for i in range(10):
            m = b == i
            n = m.sum()
            if n < 400:
                continue
            mq = s[m].mean()
            se = np.sqrt(max(mq * (1 - mq), 1e-4) / n)
            zs.append(abs(y[m].mean() - mq) / se)
        return max(zs)

    zq, zp = worst_z(q), worst_z(p)
    kind = "regions" if regions else "softmax"
    check(f"{kind}: labels follow the known calibration function (worst bin {zq:.2f} SE <= 4)",
          zq <= 4, zq)
    check(f"{kind}: the written p is miscalibrated (worst bin {zp:.1f} SE > 10)", zp > 10, zp)


def scale(d, slope, inter):
    meta = json.load(open(os.path.join(d, "meta.json")))
    r = rows(os.path.join(d, "manifest.csv"))[0]
    img = nib.load(os.path.join(d, r["labels"]))
    s, i = img.dataobj.slope, img.dataobj.inter  # a loaded header hands its scaling to the proxy
    raw = np.asanyarray(img.dataobj.get_unscaled())
    vals = np.asanyarray(img.dataobj)
    check("label map header carries scl_slope / scl_inter", (s, i) == (slope, inter), (s, i))
    check("stored integers are (value - INTER) / SLOPE, scaled values are the label values",
          np.array_equal(raw * slope + inter, vals) and
          set(np.unique(vals).tolist()) <= set(meta["label_values"]) and
          not np.array_equal(raw, vals), (np.unique(raw), np.unique(vals)))


def f16(d):
    man = {r["case"]: r for r in rows(os.path.join(d, "manifest.csv"))}
    man_npz = rows(os.path.join(d, "manifest_npz.csv"))
    for r in man_npz:
        z = np.load(os.path.join(d, r["probs"]))
        pz = z["probabilities"]
        pn = np.asanyarray(nib.load(os.path.join(d, man[r["case"]]["probs"])).dataobj)
        check(f"{r['case']}: npz float16 '<f2', same values as the NIfTI float32",
              pz.dtype == np.dtype("<f2") and
              np.array_equal(pz.astype(np.float32).transpose(3, 2, 1, 0), pn), pz.dtype)
        with zipfile.ZipFile(os.path.join(d, r["probs"])) as zf:
            info = zf.infolist()
        check(f"{r['case']}: one deflated member probabilities.npy",
              [x.filename for x in info] == ["probabilities.npy"] and
              info[0].compress_type == zipfile.ZIP_DEFLATED, info)


def same(a, b):
    def tree(d):
        return sorted(os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs)
    ta, tb = tree(a), tree(b)
    check(f"{b} has the files of {a}", ta == tb, set(ta) ^ set(tb))
    bad = []
    for rel in (x for x in ta if x in tb):
        pa, pb = os.path.join(a, rel), os.path.join(b, rel)
        if rel.endswith(".nii.gz"):
            ia, ib = nib.load(pa), nib.load(pb)
            da, db = np.asanyarray(ia.dataobj), np.asanyarray(ib.dataobj)
            eq = (da.dtype == db.dtype and np.array_equal(da, db) and
                  np.array_equal(ia.affine, ib.affine) and
                  ia.get_data_dtype() == ib.get_data_dtype())
        elif rel.endswith(".npz"):
            with np.load(pa) as za, np.load(pb) as zb:
                eq = za.files == zb.files and all(
                    za[k].dtype == zb[k].dtype and np.array_equal(za[k], zb[k]) for k in za.files)
        else:
            eq = open(pa, "rb").read() == open(pb, "rb").read()
        if not eq:
            bad.append(rel)
    check(f"{b}: every file's content equals {a}'s", not bad, bad[:5])


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "layout":
        layout(sys.argv[2], sys.argv[3])
    elif what == "truth":
        truth(sys.argv[2])
    elif what == "scale":
        scale(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
    elif what == "f16":
        f16(sys.argv[2])
    elif what == "same":
        same(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"unknown check {what}")
    sys.exit(1 if fails else 0)
