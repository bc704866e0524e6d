#!/usr/bin/python3
"""Tiny segmentation cases for tests/e2e/test_reduce.sh, written by the real writers (nibabel,
numpy's savez_compressed), and an independent numpy computation of the statistics a
`calscope reduce` file must hold.

  reduce_cases.py write DIR        cases a (NIfTI (X,Y,Z,C) float32, labels .nii.gz int16),
                                   b (nnU-Net v2 npz (C,z,y,x) float32, key probabilities),
                                   c (nnU-Net v1 npz float16, key softmax, multiples of 1/64 so
                                   every sum is exactly 1, values on the fine edges 0.25, 0.5),
                                   r (sigmoid regions, NIfTI float32), the refused ones, and
                                   manifests.
  reduce_cases.py voxels MANIFEST CSV   the same voxels as a per-voxel prediction CSV
  reduce_cases.py metrics STATS M       accuracy, top-1 ECE, SCE, Brier, NLL from the sums
  reduce_cases.py report < JSON         the same five from `calscope report --format json`
  reduce_cases.py same "A" "B"          "ok" when the five agree to 1e-12 (relative)
  reduce_cases.py check STATS MANIFEST KIND F [REGIONS]
                                   recomputes every sum from the files (nibabel / numpy reads)
                                   and compares: counts and Σy exactly, Σp, Σconf and the
                                   scores to 1e-12 (relative); prints "ok" or the differences.
The fine bin of p is found by searching the edges i/F (numpy's correctly rounded division) for
the right-closed rule (i/F, (i+1)/F] with 0 in bin 0 -- not by calscope's cs_ubin.
"""
import csv
import gzip
import io
import os
import struct
import sys
import zipfile

import nibabel as nib

import numpy as np

VALUES = [0, 1, 2, 4]


def softmax_rows(rng, shape, c):
    x = rng.normal(size=shape + (c,)) * 2
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def save_nii(path, data, affine=None):
    nib.save(nib.Nifti1Image(data, np.eye(4) if affine is None else affine), path)


def write(d):
    rng = np.random.default_rng(12)
    X, Y, Z, C = 7, 6, 5, 4
    # a: NIfTI (X, Y, Z, C) float32; some voxels on exact edges
    p = softmax_rows(rng, (X, Y, Z), C).astype(np.float32)
    p[0, 0, 0] = [0.25, 0.25, 0.5, 0.0]
    p[1, 0, 0] = [1.0, 0.0, 0.0, 0.0]
    lab = rng.choice(VALUES, size=(X, Y, Z)).astype(np.int16)
    save_nii(f"{d}/a_prob.nii.gz", p)
    save_nii(f"{d}/a.nii.gz", lab)
    # b: nnU-Net v2, (C, z, y, x) C order; its label map is the same voxels as NIfTI (x, y, z)
    q = softmax_rows(rng, (Z, Y, X), C).astype(np.float32)        # (z, y, x, C)
    labz = rng.choice(VALUES, size=(Z, Y, X)).astype(np.uint8)
    np.savez_compressed(f"{d}/b.npz", probabilities=np.moveaxis(q, -1, 0))
    save_nii(f"{d}/b.nii.gz", labz.transpose(2, 1, 0).copy())
    # c: nnU-Net v1 float16, multiples of 1/64 summing to 1 exactly
    k = rng.multinomial(64, [0.4, 0.3, 0.2, 0.1], size=(Z, Y, X)).astype(np.float64) / 64
    k[0, 0, 0] = [0.25, 0.5, 0.25, 0.0]
    labc = rng.choice(VALUES, size=(Z, Y, X)).astype(np.int32)
    np.savez_compressed(f"{d}/c.npz", softmax=np.moveaxis(k, -1, 0).astype(np.float16))
    save_nii(f"{d}/c.nii.gz", labc.transpose(2, 1, 0).copy())
    with open(f"{d}/m.csv", "w") as f:
        f.write("case,probs,labels\nb,b.npz,b.nii.gz\na,a_prob.nii.gz,a.nii.gz\nc,c.npz,c.nii.gz\n")
    with open(f"{d}/m1.csv", "w") as f:
        f.write("case,probs,labels\na,a_prob.nii.gz,a.nii.gz\nb,b.npz,b.nii.gz\n")
    with open(f"{d}/m2.csv", "w") as f:
        f.write("case,probs,labels\nc,c.npz,c.nii.gz\n")
    # r: independent sigmoids for WT, TC, ET
    s = rng.uniform(size=(X, Y, Z, 3)).astype(np.float32)
    save_nii(f"{d}/r_prob.nii.gz", s)
    with open(f"{d}/mr.csv", "w") as f:
        f.write("case,probs,labels\nr,r_prob.nii.gz,a.nii.gz\n")

    # refusals, each beside the good label map a.nii.gz
    save_nii(f"{d}/shape.nii.gz", p[:, :, :4])                       # Z 4 instead of 5
    aff = np.eye(4)
    aff[0, 3] = 2.5
    save_nii(f"{d}/affine.nii.gz", p, aff)
    save_nii(f"{d}/three.nii.gz", p[..., :3].copy())
    hi = p.copy()
    hi[2, 3, 4, 1] = 1.5
    save_nii(f"{d}/high.nii.gz", hi)
    off = p.copy()
    off[3, 2, 1, 0] += 0.01
    save_nii(f"{d}/off.nii.gz", off)
    lab3 = lab.copy()
    lab3[4, 1, 2] = 3
    save_nii(f"{d}/lab3.nii.gz", lab3)
    h = softmax_rows(rng, (Z, Y, X), C).astype(np.float16)
    h[1, 2, 3] = [0.5, 0.25, 0.25, 0.0078125]                        # sums to 1.0078
    np.savez_compressed(f"{d}/half.npz", probabilities=np.moveaxis(h, -1, 0))
    raw = open(f"{d}/a_prob.nii.gz", "rb").read()
    open(f"{d}/cut.nii.gz", "wb").write(raw[: len(raw) // 2])
    # a NaN in the sform's srow_y[3] (NIfTI-1 offset 308; nibabel writes sform_code 2)
    hdr = bytearray(gzip.decompress(raw))
    assert struct.unpack_from('<h', hdr, 254)[0] > 0
    struct.pack_into('<f', hdr, 308, float('nan'))
    open(f"{d}/nanaff.nii.gz", "wb").write(gzip.compress(bytes(hdr), mtime=0))
    # no sform (sform_code 0), the qform's (qform_code 1) qoffset_x NaN, or its quatern_c
    # infinite: nifti_clib reads either as 0 (NIfTI-1 offsets 252, 254, 268, 260)
    for name, off, val in (("qnan", 268, float('nan')), ("qinf", 260, float('inf'))):
        h1 = bytearray(gzip.decompress(raw))
        struct.pack_into('<hh', h1, 252, 1, 0)
        struct.pack_into('<f', h1, off, val)
        open(f"{d}/{name}.nii.gz", "wb").write(gzip.compress(bytes(h1), mtime=0))
    # nnU-Net's (C, z, y, x) written in Fortran order
    np.savez_compressed(f"{d}/fort.npz", probabilities=np.asfortranarray(np.moveaxis(q, -1, 0)))
    # a flipped byte inside deflate data that stays valid deflate (level 0: stored blocks), so
    # the value it lands in goes wrong and only the CRC at the stream's end says why: b.npz's
    # first probability (its float's top byte: ~1e38)
    b = io.BytesIO()
    np.save(b, np.moveaxis(q, -1, 0))
    npy = b.getvalue()
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED, compresslevel=0) as z:
        z.writestr("probabilities.npy", npy)
    z = bytearray(b.getvalue())
    z[z.index(npy[:64]) + len(npy) - q.nbytes + 3] = 0x7f
    open(f"{d}/flip.npz", "wb").write(bytes(z))


def fine_bins(p, F):
    edges = np.arange(F + 1, dtype=np.float64) / F
    return np.clip(np.searchsorted(edges, p, side="left") - 1, 0, F - 1)


def read_case(probs, labels):
    """(p, lab): p as (V, C) float64 in NIfTI voxel order, lab (V,)."""
    if probs.endswith(".npz"):
        z = np.load(probs)
        a = z[z.files[0]]                                            # (C, z, y, x)
        p = a.reshape(a.shape[0], -1).T.astype(np.float64)
    else:
        a = np.asanyarray(nib.load(probs).dataobj)
        if a.ndim == 3:
            a = a[..., None]
        p = a.reshape(-1, a.shape[-1], order="F").astype(np.float64)
    lab = np.asanyarray(nib.load(labels).dataobj).reshape(-1, order="F").astype(np.int64)
    return p, lab


def expected(manifest, kind, F, regions):
    """{(case, 'c'|'t'|'s', ...): values} from the files."""
    base = os.path.dirname(manifest)
    out = {}
    with open(manifest) as f:
        rows = list(csv.DictReader(f))
    for r in sorted(rows, key=lambda r: r["case"]):
        p, lab = read_case(os.path.join(base, r["probs"]), os.path.join(base, r["labels"]))
        C = p.shape[1]
        if kind == "softmax":
            y = (lab[:, None] == np.array(VALUES[:C])[None, :]).astype(np.int64)
        else:
            y = np.stack([np.isin(lab, vals) for vals in regions], axis=1).astype(np.int64)
        case = r["case"]
        for j in range(C):
            b = fine_bins(p[:, j], F)
            for i in np.unique(b):
                m = b == i
                out[(case, "c", j, int(i))] = (int(m.sum()), float(p[m, j].sum()), int(y[m, j].sum()))
            pos = y[:, j] == 1
            out[(case, "s", j)] = (float(((p[:, j] - y[:, j]) ** 2).sum()),
                                   float(-np.log(np.maximum(p[pos, j], 1e-15)).sum()),
                                   float(-np.log(np.maximum(1 - p[~pos, j], 1e-15)).sum()))
        if kind == "softmax":
            best = p.argmax(1)                                       # the first maximal channel
            conf = p[np.arange(len(p)), best]
            correct = y[np.arange(len(p)), best]
            b = fine_bins(conf, F)
            for i in np.unique(b):
                m = b == i
                out[(case, "t", int(i))] = (int(m.sum()), float(conf[m].sum()), int(correct[m].sum()))
    return out


def read_stats(path):
    got, names = {}, {}
    with open(path) as f:
        for rec in csv.reader(f):
            if not rec or rec[0].startswith("#"):
                continue
            t = rec[0]
            if t == "case":
                names[rec[1]] = rec[2]
            elif t == "c":
                got[(names[rec[1]], "c", int(rec[2]), int(rec[3]))] = (int(rec[4]), float(rec[5]), int(rec[6]))
            elif t == "t":
                got[(names[rec[1]], "t", int(rec[2]))] = (int(rec[3]), float(rec[4]), int(rec[5]))
            elif t == "s":
                got[(names[rec[1]], "s", int(rec[2]))] = tuple(float(v) for v in rec[3:6])
    return got


def close(a, b):
    if isinstance(a, int):
        return a == b
    return abs(a - b) <= 1e-12 * max(1.0, abs(b))


def check(stats, manifest, kind, F, regions_text=None):
    regions = None
    if regions_text:
        regions = [[int(v) for v in part.split("=")[1].split(",")] for part in regions_text.split(";")]
    want = expected(manifest, kind, int(F), regions)
    got = read_stats(stats)
    bad = []
    for key in sorted(set(want) | set(got), key=str):
        w, g = want.get(key), got.get(key)
        if w is None or g is None or not all(close(x, z) for x, z in zip(g, w)):
            bad.append(f"{key}: file {g} numpy {w}")
    print("ok" if not bad else "\n".join(bad[:20]))


def voxels(manifest, out):
    """The manifest's voxels as a per-voxel CSV for `calscope report`: label = the channel of the
    voxel's label value, p_0..p_{C-1} written with repr (exact)."""
    base = os.path.dirname(manifest)
    with open(manifest) as f:
        rows = list(csv.DictReader(f))
    with open(out, "w") as o:
        for n, r in enumerate(sorted(rows, key=lambda r: r["case"])):
            p, lab = read_case(os.path.join(base, r["probs"]), os.path.join(base, r["labels"]))
            C = p.shape[1]
            if n == 0:
                o.write("case,label," + ",".join(f"p_{j}" for j in range(C)) + "\n")
            y = np.searchsorted(np.array(VALUES[:C]), lab)
            for v in range(len(p)):
                o.write(r["case"] + "," + str(int(y[v])) + "," + ",".join(repr(float(x)) for x in p[v]) + "\n")


def metrics(stats, M):
    """accuracy, top-1 ECE, SCE (class-wise), Brier, NLL from a statistics file, M coarse bins."""
    M = int(M)
    F, K, N = None, None, 0
    t, c, sq, nll = {}, {}, 0.0, 0.0
    with open(stats) as f:
        for rec in csv.reader(f):
            if not rec or rec[0].startswith("#"):
                continue
            if rec[0] == "fine":
                F = int(rec[1])
            elif rec[0] == "classes":
                K = int(rec[1])
            elif rec[0] == "case":
                N += int(rec[3])
            elif rec[0] == "t":
                b = int(rec[2]) * M // F
                a = t.setdefault(b, [0.0, 0.0])
                a[0] += float(rec[4])
                a[1] += int(rec[5])
            elif rec[0] == "c":
                b = (int(rec[2]), int(rec[3]) * M // F)
                a = c.setdefault(b, [0.0, 0.0])
                a[0] += float(rec[5])
                a[1] += int(rec[6])
            elif rec[0] == "s":
                sq += float(rec[3])
                nll += float(rec[4])
    acc = sum(a[1] for a in t.values()) / N
    ece = sum(abs(a[0] - a[1]) for a in t.values()) / N
    sce = sum(abs(a[0] - a[1]) for a in c.values()) / N / K
    print(" ".join(repr(x) for x in (acc, ece, sce, sq / N, nll / N)))


def report(json_text):
    import json
    m = json.loads(json_text)["files"][0]["metrics"]
    print(" ".join(repr(m[k]) for k in ("accuracy", "ece", "sce", "brier", "nll")))


def same(a, b):
    x, y = [float(v) for v in a.split()], [float(v) for v in b.split()]
    bad = [f"{i}: {p!r} vs {q!r}" for i, (p, q) in enumerate(zip(x, y)) if abs(p - q) > 1e-12 * max(1.0, abs(q))]
    print("ok" if len(x) == len(y) == 5 and not bad else "; ".join(bad) or f"{a} | {b}")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "write":
        write(sys.argv[2])
    elif cmd == "voxels":
        voxels(*sys.argv[2:])
    elif cmd == "metrics":
        metrics(*sys.argv[2:])
    elif cmd == "report":
        report(sys.stdin.read())
    elif cmd == "same":
        same(*sys.argv[2:])
    else:
        check(*sys.argv[2:])
