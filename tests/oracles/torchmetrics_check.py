#!/usr/bin/python3
"""torchmetrics 1.9.0's calibration error computed by torch itself, to check `calscope report
--compat torchmetrics` / `torchmetrics-binary` (and the torch primitives calscope emulates) against
the real thing. When torchmetrics itself imports (PyPI is out of reach here: run its v1.9.0 source,
commit 700261d3683ba77517e9650043f62a8313027437, with lightning-utilities v0.15.2's, commit
2094525f99d94e25998563f5f7c960d48c12dc87, as
`PYTHONPATH=TORCHMETRICS/src:LIGHTNING_UTILITIES/src`), every number comes from the library;
otherwise from its code path, which is small and copied below with the same torch calls, so every
primitive (linspace, bucketize, scatter_add_, sum, max, division) is torch's own. `fixture` needs
the library and checks that the copy gives the same bits on every file:

  Lightning-AI/torchmetrics v1.9.0 src/torchmetrics/functional/classification/calibration_error.py
    _binning_bucketize, _ce_compute, _multiclass_calibration_error_update,
    _binary_calibration_error_update; confusion_matrix.py _binary_confusion_matrix_format,
    _multiclass_confusion_matrix_format; utilities/compute.py normalize_logits_if_needed.

Users call torchmetrics with a model's float32 output or with float64 tensors made from numpy
arrays; --dtype picks which (calscope: --compat torchmetrics / --torch-dtype float64).

Usage:
  torchmetrics_check.py metric FILE [--bins M] [--dtype float32|float64]
      {"torchmetrics": {"ece", "mce", "rms"}, "torchmetrics-binary": {...} | null} as JSON
      (floats printed with repr: every bit).
  torchmetrics_check.py gen DIR
      writes the edge files: values on bin edges (multiples of 0.01, 0.05, 1/7, 1/40; two and
      three classes, argmax ties in float32 and float64), and the binary grid files: a random
      forest's votes out of 100 trees (grid2_rf100.csv: most p[1] at or near 0 and 1) and p[1] =
      k/M for every M of FIXTURE_BINS but 1 (grid2_mM.csv), made by a fixed LCG (no RNG version
      dependence), so the fixture below is reproducible without torch.
  torchmetrics_check.py fixture
      tests/fixtures/torchmetrics_values.txt (run from the repository root, with torchmetrics
      itself importable): "FILE M DTYPE LIB ece mce rms" from torchmetrics for the edge and grid
      files (FILE edges/NAME), the bundled samples and tests/fixtures/breast_cancer_rf.csv, M in
      FIXTURE_BINS, both dtypes; exits 1 when the copy below differs from the library by a bit.
  torchmetrics_check.py compare FIXTURE CALSCOPE EDGE_DIR
      needs no torch: runs calscope on every (FILE, M, DTYPE) of FIXTURE (edges/ read from
      EDGE_DIR, made by gen) and prints every number that differs from the fixture's by one bit
      or more; exit status 1 when any does.
  torchmetrics_check.py check CALSCOPE FILE...
      the same against torch live, for M in BINS_LIST.
  torchmetrics_check.py prims
      tests/fixtures/torch_prims.txt: FNV-1a hashes of torch.linspace(0, 1, M + 1) (float32,
      float64) and of MONAI's float32 linspace(0, 1 + eps32, M + 1) for M = 1..1000, of
      torch.bucketize(right=True) on values at, just below and just above every edge, on i/M
      and on multiples of 0.01 and 0.05, and of torch.sum of n = 1..1001 mixed-magnitude values;
      one line per 10 consecutive M (or n). test_compat.c hashes calscope's emulation the same way.
"""
import argparse
import json
import os
import sys

import subprocess

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compat_reference import load  # noqa: E402  (the same samples calscope measures)

try:
    import torch
except ImportError:  # gen needs no torch; every other mode does
    torch = None
try:  # torchmetrics itself, when its source is on PYTHONPATH (see above)
    import torchmetrics
    from torchmetrics.functional.classification import binary_calibration_error as tm_binary
    from torchmetrics.functional.classification import multiclass_calibration_error as tm_multiclass
except ImportError:
    torchmetrics = None
TM_VERSION = "1.9.0"
GROUP = 10
BINS_LIST = [1, 2, 3, 7, 10, 15, 16, 20, 25, 33, 40, 50, 64, 100, 128, 500, 1000]
FIXTURE_BINS = [1, 7, 10, 15, 20, 33, 100, 1000]
DTYPES = ["float32", "float64"]


# ------------------------------------------------ torchmetrics 1.9.0, with the same torch calls
def normalize_logits_if_needed(tensor, normalization):
    if not normalization:
        return tensor
    if not torch.all((tensor >= 0) * (tensor <= 1)):
        tensor = tensor.sigmoid() if normalization == "sigmoid" else torch.softmax(tensor, dim=1)
    return tensor


def _binning_bucketize(confidences, accuracies, bin_boundaries):
    accuracies = accuracies.to(dtype=confidences.dtype)
    acc_bin = torch.zeros(len(bin_boundaries), device=confidences.device, dtype=confidences.dtype)
    conf_bin = torch.zeros(len(bin_boundaries), device=confidences.device, dtype=confidences.dtype)
    count_bin = torch.zeros(len(bin_boundaries), device=confidences.device, dtype=confidences.dtype)
    indices = torch.bucketize(confidences, bin_boundaries, right=True) - 1
    count_bin.scatter_add_(dim=0, index=indices, src=torch.ones_like(confidences))
    conf_bin.scatter_add_(dim=0, index=indices, src=confidences)
    conf_bin = torch.nan_to_num(conf_bin / count_bin)
    acc_bin.scatter_add_(dim=0, index=indices, src=accuracies)
    acc_bin = torch.nan_to_num(acc_bin / count_bin)
    prop_bin = count_bin / count_bin.sum()
    return acc_bin, conf_bin, prop_bin


def _ce_compute(confidences, accuracies, bin_boundaries, norm="l1"):
    if isinstance(bin_boundaries, int):
        bin_boundaries = torch.linspace(0, 1, bin_boundaries + 1, dtype=confidences.dtype, device=confidences.device)
    with torch.no_grad():
        acc_bin, conf_bin, prop_bin = _binning_bucketize(confidences, accuracies, bin_boundaries)
    if norm == "l1":
        return torch.sum(torch.abs(acc_bin - conf_bin) * prop_bin)
    if norm == "max":
        ce = torch.max(torch.abs(acc_bin - conf_bin))
    if norm == "l2":
        ce = torch.sum(torch.pow(acc_bin - conf_bin, 2) * prop_bin)
        return torch.sqrt(ce) if ce > 0 else torch.tensor(0)
    return ce


def binary_calibration_error(preds, target, n_bins, norm):
    preds, target = preds.flatten(), target.flatten()            # _binary_confusion_matrix_format
    if preds.is_floating_point():
        preds = normalize_logits_if_needed(preds, "sigmoid")
    confidences, accuracies = preds, target                       # _binary_calibration_error_update
    return _ce_compute(confidences, accuracies, n_bins, norm)


def multiclass_calibration_error(preds, target, num_classes, n_bins, norm):
    preds = torch.movedim(preds, 1, -1).reshape(-1, preds.shape[1])   # _multiclass_confusion_matrix_format
    target = target.flatten()
    preds = normalize_logits_if_needed(preds, "softmax")              # _multiclass_calibration_error_update
    confidences, predictions = preds.max(dim=1)
    accuracies = predictions.eq(target)
    return _ce_compute(confidences.float(), accuracies.float(), n_bins, norm)


def library():
    """torchmetrics itself when it imports (and is the version calscope reproduces), else None."""
    if torchmetrics is None:
        return None
    if torchmetrics.__version__ != TM_VERSION:
        sys.exit(f"torchmetrics_check.py: torchmetrics {torchmetrics.__version__} imports; "
                 f"calscope reproduces {TM_VERSION}")
    return torchmetrics


def metric(path, M, dtype, P=None, y=None, copy=False):
    """The numbers of torchmetrics itself, or of the copy above when it does not import (or
    when copy is set)."""
    if P is None:
        P, y = load(path)
    real = not copy and library() is not None
    multi = tm_multiclass if real else multiclass_calibration_error
    binary = tm_binary if real else binary_calibration_error
    preds = torch.tensor(P, dtype=dtype)
    target = torch.tensor(y, dtype=torch.int64)
    norms = {"ece": "l1", "mce": "max", "rms": "l2"}
    out = {"torchmetrics": {k: float(multi(preds, target, num_classes=P.shape[1], n_bins=M, norm=n))
                            for k, n in norms.items()},
           "torchmetrics-binary": None}
    if P.shape[1] == 2:
        out["torchmetrics-binary"] = {k: float(binary(preds[:, 1], target, n_bins=M, norm=n))
                                      for k, n in norms.items()}
    return out


# ------------------------------------------------ primitives
def fnv(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def probes(edges, M, T):
    """Values at, just below and just above every edge, i/M, and multiples of 0.01 and 0.05,
    in dtype T, in the order test_compat.c builds them."""
    inf = T(np.inf)
    out = []
    for i, e in enumerate(edges):
        out += [np.nextafter(e, -inf), e, np.nextafter(e, inf), T(i / M)]
    out += [T(k / 100) for k in range(101)]
    out += [T(k / 20) for k in range(21)]
    return np.array(out, dtype=T)


def sum_input(n, T):
    """n mixed-magnitude values: ((j * 2654435761) mod 2^32) / 2^32 * 2^(j mod 11 - 5)."""
    j = np.arange(n, dtype=np.int64)
    u = ((j * 2654435761) % (1 << 32)).astype(np.float64) / float(1 << 32)
    return (u * np.ldexp(1.0, (j % 11 - 5).astype(np.int64))).astype(T)


def prims():
    NP = {torch.float32: np.float32, torch.float64: np.float64}
    cap = torch.__config__.show().split("CPU capability usage: ")[1].split("\n")[0].strip() \
        if "CPU capability usage: " in torch.__config__.show() else "unknown"
    print(f"# torch {torch.__version__}, CPU capability {cap}: written by tests/oracles/torchmetrics_check.py prims")
    print("# kind dtype first-last fnv1a64 (hash of the little-endian bytes of every M / n in the group)")
    eps32 = float(np.finfo(np.float32).eps)
    for kind in ("linspace", "monai_linspace", "bucketize"):
        for dt in (torch.float32, torch.float64):
            if kind == "monai_linspace" and dt == torch.float64:
                continue
            T = NP[dt]
            for g in range(1, 1001, GROUP):
                buf = b""
                for M in range(g, g + GROUP):
                    end = 1 + eps32 if kind == "monai_linspace" else 1
                    e = torch.linspace(0, end, M + 1, dtype=dt)
                    if kind == "bucketize":
                        v = torch.from_numpy(probes(e.numpy(), M, T))
                        buf += torch.bucketize(v, e, right=True).to(torch.int32).numpy().astype("<i4").tobytes()
                    else:
                        buf += e.numpy().astype(np.dtype(T).newbyteorder("<")).tobytes()
                print(f"{kind} {'f32' if dt == torch.float32 else 'f64'} {g}-{g + GROUP - 1} {fnv(buf):016x}")
    for dt in (torch.float32, torch.float64):
        T = NP[dt]
        for g in range(1, 1002, GROUP):
            buf = b""
            for n in range(g, min(g + GROUP, 1002)):
                s = torch.sum(torch.from_numpy(sum_input(n, T)))
                buf += np.array([s.item()], dtype=T).astype(np.dtype(T).newbyteorder("<")).tobytes()
            print(f"sum {'f32' if dt == torch.float32 else 'f64'} {g}-{min(g + GROUP, 1002) - 1} {fnv(buf):016x}")


def lcg(seed):
    """Park-Miller minimal standard generator: the same stream on every machine."""
    x = seed
    while True:
        x = x * 48271 % 2147483647
        yield x


def gen(outdir):
    """The edge files: see the usage text."""
    files = []
    for q in (100, 20, 7, 40):
        r = lcg(q)
        rows = []
        for i in range(400):     # two classes, p1 = k/q
            k = next(r) % (q + 1)
            rows.append((int(next(r) % q < k), [(q - k) / q, k / q]))
        files.append((f"edges2_{q}.csv", rows))
        rows = []
        for i in range(400):     # three classes summing to 1, multiples of 1/q, many ties
            a = next(r) % (q + 1); b = next(r) % (q + 1 - a)
            rows.append((next(r) % 3, [a / q, b / q, (q - a - b) / q]))
        files.append((f"edges3_{q}.csv", rows))
    files += grid_files()
    # argmax ties that exist only in float32: classes differ below float32's resolution
    r = lcg(5)
    rows = []
    for i in range(300):
        p = (next(r) % 1000) / 4000 + 0.25
        d = (next(r) % 3) * 1e-9
        rows.append((next(r) % 2, [p, p + d, 1 - 2 * p - d]))
    files.append(("ties32.csv", rows))
    os.makedirs(outdir, exist_ok=True)
    for name, rows in files:
        k = len(rows[0][1])
        with open(os.path.join(outdir, name), "w") as f:
            f.write("id,label," + ",".join(f"p_{c}" for c in range(k)) + "\n")
            for i, (lab, p) in enumerate(rows):
                f.write(f"{i},{lab}," + ",".join(repr(float(v)) for v in p) + "\n")
        print(os.path.join(outdir, name))


def grid_files():
    """Binary files whose p[1] sit on a grid that holds bin edges: a random forest's votes out
    of 100 trees (predict_proba's k/100, most at or near 0 and 1; the label mostly agrees with
    the votes), and k/M for the fixture's M > 1."""
    r = lcg(100100)
    rows = []
    for i in range(600):
        u = next(r) % 101
        k = u * u // 100                 # votes for the other class: 0 for a tenth of the rows
        pos = next(r) % 5 < 2            # 40 % positives
        agree = next(r) % 100 < 100 - k  # the forest is right about as often as it says
        j = 100 - k if pos == agree else k    # trees voting for the positive class
        rows.append((int(pos), [(100 - j) / 100, j / 100]))
    files = [("grid2_rf100.csv", rows)]
    for M in FIXTURE_BINS:
        if M == 1:
            continue
        r = lcg(M + 7)
        rows = []
        for i in range(400):
            k = next(r) % (M + 1)
            rows.append((int(next(r) % M < k), [(M - k) / M, k / M]))
        files.append((f"grid2_m{M}.csv", rows))
    return files


def torch_numbers(files, bins_list, copy=False):
    """(file, M, dtype, lib) -> (ece, mce, rms) from torch (torchmetrics itself unless copy)."""
    out = {}
    for path in files:
        P, y = load(path)
        for M in bins_list:
            for dt in DTYPES:
                got = metric(path, M, getattr(torch, dt), P, y, copy)
                for lib, v in got.items():
                    if v is not None:
                        out[(path, M, dt, lib)] = (v["ece"], v["mce"], v["rms"])
    return out


def calscope_numbers(exe, paths, M, dt):
    """calscope's torchmetrics numbers for every path (one run): {path: {lib: (ece, mce, rms)}},
    or an error text."""
    cmd = [exe, "report", "--compat", "all", "--format", "json", "--bins", str(M)] + paths
    if dt == "float64":
        cmd[4:4] = ["--torch-dtype", "float64"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}"
    out = {}
    for f in json.loads(p.stdout)["files"]:
        c = f["compat"]
        out[f["path"]] = {lib: (c[lib]["ece"], c[lib]["mce"], c[lib]["rms"])
                          for lib in ("torchmetrics", "torchmetrics-binary")}
    return out


def differences(exe, want, path_of=lambda p: p):
    """want: (file, M, dtype, lib) -> numbers; prints each difference, returns their count."""
    bad = 0
    runs = {}
    for path, M, dt, lib in want:
        runs.setdefault((M, dt), [])
        if path_of(path) not in runs[(M, dt)]:
            runs[(M, dt)].append(path_of(path))
    got = {key: calscope_numbers(exe, paths, *key) for key, paths in runs.items()}
    for (path, M, dt, lib), w in want.items():
        g = got[(M, dt)]
        if isinstance(g, str):
            print(g)
            bad += 1
            continue
        for name, a, b in zip(("ece", "mce", "rms"), w, g[path_of(path)][lib]):
            if a != b:
                print(f"{path} --bins {M} {dt} {lib} {name}: torch {a!r}, calscope {b!r}")
                bad += 1
    if not want:
        print("no numbers to compare")
        bad += 1
    return bad


def fixture():
    import glob
    import tempfile
    if library() is None:
        sys.exit("torchmetrics_check.py fixture: torchmetrics itself does not import "
                 "(PYTHONPATH=TORCHMETRICS/src:LIGHTNING_UTILITIES/src, see the usage)")
    print(f"# FILE M DTYPE LIB ece mce rms: torchmetrics {torchmetrics.__version__} itself on torch "
          f"{torch.__version__} (tests/oracles/torchmetrics_check.py fixture; edges/ = its gen files)")
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as d:
        with open(os.devnull, "w") as null:
            saved, sys.stdout = sys.stdout, null
            try:
                gen(os.path.join(d, "edges"))
            finally:
                sys.stdout = saved
        os.chdir(d)
        edge_files = sorted(glob.glob("edges/*.csv"))
        edge = torch_numbers(edge_files, FIXTURE_BINS)
        edge_copy = torch_numbers(edge_files, FIXTURE_BINS, copy=True)
        os.chdir(cwd)
    rest_files = sorted(glob.glob("samples/*.csv")) + ["tests/fixtures/breast_cancer_rf.csv"]
    rest = torch_numbers(rest_files, FIXTURE_BINS)
    rest_copy = torch_numbers(rest_files, FIXTURE_BINS, copy=True)
    bad = [k for k in rest if rest[k] != rest_copy[k]] + [k for k in edge if edge[k] != edge_copy[k]]
    for k in bad:
        print(f"torchmetrics_check.py: the copy differs from torchmetrics on {k}", file=sys.stderr)
    for (path, M, dt, lib), v in list(edge.items()) + list(rest.items()):
        print(path, M, dt, lib, *(repr(x) for x in v))
    if bad:
        sys.exit(1)


def read_fixture(path):
    want = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            p, M, dt, lib, *v = line.split()
            want[(p, int(M), dt, lib)] = tuple(float(x) for x in v)
    return want


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["metric", "prims", "gen", "fixture", "compare", "check"])
    ap.add_argument("args", nargs="*")
    ap.add_argument("--bins", type=int, default=15)
    ap.add_argument("--dtype", choices=DTYPES, default="float32")
    a = ap.parse_args()
    if a.mode == "gen":
        if len(a.args) != 1:
            ap.error("gen needs DIR")
        gen(a.args[0])
        return
    if a.mode == "compare":
        if len(a.args) != 3:
            ap.error("compare needs FIXTURE CALSCOPE EDGE_DIR")
        fx, exe, edges = a.args

        def path_of(p):
            return os.path.join(edges, p[len("edges/"):]) if p.startswith("edges/") else p
        sys.exit(1 if differences(exe, read_fixture(fx), path_of) else 0)
    if torch is None:
        sys.exit("torchmetrics_check.py: torch is not installed (Debian: python3-torch)")
    torch.set_num_threads(1)
    if a.mode == "prims":
        prims()
    elif a.mode == "metric":
        if len(a.args) != 1:
            ap.error("metric needs FILE")
        print(json.dumps(metric(a.args[0], a.bins, getattr(torch, a.dtype))))
    elif a.mode == "fixture":
        fixture()
    else:
        if len(a.args) < 2:
            ap.error("check needs CALSCOPE FILE...")
        sys.exit(1 if differences(a.args[0], torch_numbers(a.args[1:], BINS_LIST)) else 0)


if __name__ == "__main__":
    main()
