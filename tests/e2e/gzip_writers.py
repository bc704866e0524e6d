#!/usr/bin/python3
"""Writes every compressed input kind calscope reads by several writers, for test_gzip_writers.sh.

    gzip_writers.py write OUT STATS     prints lines "KIND NAME PATH REFERENCE": each PATH must
                                        give the numbers REFERENCE gives
    gzip_writers.py flips OUT FILE.gz   prints lines "PATH WORDS": FILE.gz with one byte of its
                                        deflate data flipped, and Python's zlib's words for it
    gzip_writers.py same A.json B.json  'same' when the two reports hold the same numbers
    gzip_writers.py bomb OUT            a gzip CSV whose second field inflates to 256 MiB

Writers: Python's gzip at levels 1, 6 and 9, zlib's compressobj (gzip wrapper) at 1, 6 and 9,
igzip at levels 1 and 3, and two concatenated members; zipfile deflated at 1, 6 and 9 and
zip64 (force_zip64) for .npz. The volumes are the committed samples (samples/seg/softmax)."""
import gzip
import io
import json
import os
import subprocess
import sys
import zipfile
import zlib

import numpy as np

SEG = "samples/seg/softmax"


def gz_variants(raw):
    """name -> gzip bytes of raw, by each writer."""
    out = {}
    for lvl in (1, 6, 9):
        out["gzip%d" % lvl] = gzip.compress(raw, compresslevel=lvl, mtime=0)
        c = zlib.compressobj(lvl, zlib.DEFLATED, 31)
        out["zlib%d" % lvl] = c.compress(raw) + c.flush()
    for lvl in (1, 3):
        out["igzip%d" % lvl] = subprocess.run(["igzip", "-c", "-%d" % lvl], input=raw,
                                              stdout=subprocess.PIPE, check=True).stdout
    half = len(raw) // 2
    out["members"] = gzip.compress(raw[:half], 1, mtime=0) + gzip.compress(raw[half:], 9, mtime=0)
    return out


def write_variants(out, stem, suffix, raw, kind, reference):
    for name, data in gz_variants(raw).items():
        path = os.path.join(out, "%s_%s%s" % (stem, name, suffix))
        with open(path, "wb") as f:
            f.write(data)
        print(kind, name, path, reference)


def csv_text():
    rng = np.random.default_rng(7)
    p = rng.dirichlet([1.0, 2.0, 3.0, 0.5], size=3000)
    y = np.array([rng.choice(4, p=row) for row in p])
    lines = ["label,p_0,p_1,p_2,p_3"]
    for yi, row in zip(y, p):
        lines.append("%d,%s" % (yi, ",".join("%.17g" % v for v in row)))
    return ("\n".join(lines) + "\n").encode()


def write_manifest(path, rows):
    with open(path, "w") as f:
        f.write("case,probs,labels\n")
        for case, probs, labels in rows:
            f.write("%s,%s,%s\n" % (case, os.path.abspath(probs), os.path.abspath(labels)))


def nifti_variants(out):
    cases = ["case000", "case001", "case002"]
    plain = []
    for c in cases:
        for part in ("nifti", "labels"):
            raw = gzip.decompress(open(os.path.join(SEG, part, c + ".nii.gz"), "rb").read())
            with open(os.path.join(out, "%s_%s.nii" % (c, part)), "wb") as f:
                f.write(raw)
    ref = os.path.join(out, "m_nii_plain.csv")
    write_manifest(ref, [(c, os.path.join(out, c + "_nifti.nii"), os.path.join(out, c + "_labels.nii")) for c in cases])
    names = None
    for c in cases:
        raw = open(os.path.join(out, c + "_nifti.nii"), "rb").read()
        vs = gz_variants(raw)
        names = list(vs)
        for name, data in vs.items():
            with open(os.path.join(out, "%s_nifti_%s.nii.gz" % (c, name)), "wb") as f:
                f.write(data)
    for name in names:
        m = os.path.join(out, "m_nii_%s.csv" % name)
        write_manifest(m, [(c, os.path.join(out, "%s_nifti_%s.nii.gz" % (c, name)),
                            os.path.join(out, c + "_labels.nii")) for c in cases])
        print("volume", "nii-" + name, m, ref)


def npz_variants(out):
    cases = ["case000", "case001", "case002"]
    labels = [os.path.join(SEG, "labels", c + ".nii.gz") for c in cases]
    arrays = [np.load(os.path.join(SEG, "npz", c + ".npz"))["probabilities"] for c in cases]
    variants = {"stored": (zipfile.ZIP_STORED, None, False)}
    for lvl in (1, 6, 9):
        variants["deflate%d" % lvl] = (zipfile.ZIP_DEFLATED, lvl, False)
    variants["zip64"] = (zipfile.ZIP_DEFLATED, 6, True)
    variants["zip64-stored"] = (zipfile.ZIP_STORED, None, True)
    for name, (method, lvl, z64) in variants.items():
        rows = []
        for c, a, lab in zip(cases, arrays, labels):
            buf = io.BytesIO()
            np.save(buf, a)
            path = os.path.join(out, "%s_%s.npz" % (c, name))
            with zipfile.ZipFile(path, "w", compression=method, compresslevel=lvl) as z:
                with z.open("probabilities.npy", "w", force_zip64=z64) as m:
                    m.write(buf.getvalue())
            if z64:   # numpy writes zip64 for large members: the local header's extra field id 1
                head = open(path, "rb").read(64)
                name_len = int.from_bytes(head[26:28], "little")
                assert head[30 + name_len:32 + name_len] == b"\x01\x00", "no zip64 extra field"
            rows.append((c, path, lab))
        write_manifest(os.path.join(out, "m_npz_%s.csv" % name), rows)
    for name in variants:
        if name != "stored":
            print("volume", "npz-" + name, os.path.join(out, "m_npz_%s.csv" % name),
                  os.path.join(out, "m_npz_stored.csv"))


def write(out, stats):
    raw = csv_text()
    ref = os.path.join(out, "preds.csv")
    with open(ref, "wb") as f:
        f.write(raw)
    write_variants(out, "preds", ".csv.gz", raw, "csv", ref)
    write_variants(out, "stats", ".csv.gz", open(stats, "rb").read(), "stats", stats)
    nifti_variants(out)
    npz_variants(out)


def flips(out, path):
    """path (a statistics file) as two gzip members, its first 500 bytes and the rest, with one
    byte of the second member's deflate data flipped: in its block header (the code tables), then
    across its data. Python's zlib names each fault; flips only the CRC catches are left out."""
    raw = open(path, "rb").read()
    first = gzip.compress(raw[:500], 6, mtime=0)
    data = first + gzip.compress(raw[500:], 6, mtime=0)
    start = len(first) + 10
    places = list(range(start, start + 40)) + list(range(start + 40, len(data) - 8, (len(data) - start) // 40))
    for at in places:
        bad = bytearray(data)
        bad[at] ^= 0x20
        try:
            rest = bytes(bad)
            while rest:         # member after member, as gzip(1) reads them
                d = zlib.decompressobj(31)
                d.decompress(rest)
                rest = d.unused_data
            continue            # still a valid stream
        except zlib.error as e:
            words = str(e).split(": ", 1)[1]
        if words == "incorrect data check":
            continue
        p = os.path.join(out, "flip%d.csv.gz" % at)
        with open(p, "wb") as f:
            f.write(bad)
        print(p, words)


def numbers(path):
    files = json.load(open(path))["files"]
    for f in files:
        f.pop("path", None)
        f.get("load", {}).pop("gzip", None)
    return files


def bomb(out):
    """label,p_a,p_b then a row whose second field is 256 MiB of '5': ~1 MB of gzip."""
    path = os.path.join(out, "bomb.csv.gz")
    c = zlib.compressobj(1, zlib.DEFLATED, 31)
    chunk = b"5" * (1 << 20)
    with open(path, "wb") as f:
        f.write(c.compress(b"label,p_a,p_b\n0,0."))
        for _ in range(256):
            f.write(c.compress(chunk))
        f.write(c.compress(b",0.5\n") + c.flush())
    print(path)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "write":
        write(sys.argv[2], sys.argv[3])
    elif cmd == "flips":
        flips(sys.argv[2], sys.argv[3])
    elif cmd == "same":
        print("same" if numbers(sys.argv[2]) == numbers(sys.argv[3]) else "differ")
    elif cmd == "bomb":
        bomb(sys.argv[2])
