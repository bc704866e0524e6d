#!/usr/bin/python3
"""relplot's own smooth ECE on the bundled samples, for calscope's --compat relplot.

    /usr/bin/python3 tests/oracles/relplot_check.py RELPLOT_SRC [--out tests/fixtures/relplot_smece.tsv]

RELPLOT_SRC is the directory holding relplot's package directory `relplot/` (the `src/` of
apple/ml-calibration; e.g. `git archive HEAD src/relplot | tar -x -C /tmp/r` gives /tmp/r/src).
relplot's own files are run unchanged; its __init__ (which imports matplotlib for the diagrams)
is bypassed by importing relplot.metrics from a bare package object. relplot needs numpy, scipy
and deprecation (Debian: python3-numpy python3-scipy python3-deprecation).

Writes one line per (sample, lens, bandwidth): path, lens, sigma (auto or the fixed value),
relplot's smECE and the bandwidth it used, both with 17 significant digits. The samples are
loaded by tests/oracles/reference.py's loader (a long tta file: its tta 0 rows, as calscope measures).
"""
import argparse
import os
import sys
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference  # noqa: E402  (the loader of the samples)

# (lens, fixed sigma or None): the fixture's cases for every sample.
CASES = [("top1", None), ("top1", 0.05), ("class:1", None), ("class:0", 0.1)]


def import_relplot(src):
    pkg = types.ModuleType("relplot")
    pkg.__path__ = [os.path.join(src, "relplot")]
    sys.modules["relplot"] = pkg
    import relplot.metrics  # noqa: E402
    return relplot.metrics


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("--out", default=os.path.join(reference.ROOT, "tests", "fixtures", "relplot_smece.tsv"))
    args = ap.parse_args(argv)
    metrics = import_relplot(os.path.abspath(args.src))
    lines = ["# path\tlens\tsigma\tsmece\tsmece_sigma  (tests/oracles/relplot_check.py: relplot's own smECE)"]
    for path in reference.sample_files():
        d = reference.load(os.path.join(reference.ROOT, path))
        for lens, sigma in CASES:
            if lens == "top1":
                f, y = metrics.multiclass_logits_to_confidences(d.prob, d.label, probs=True)
            else:
                c = int(lens.split(":")[1])
                f, y = d.prob[:, c].astype(np.float64), (d.label == c).astype(np.float64)
            if sigma is None:
                v, w = metrics.smECE(f, y, return_width=True)
            else:
                v, w = metrics.smECE_sigma(f, y, sigma), sigma
            lines.append(f"{path}\t{lens}\t{'auto' if sigma is None else repr(sigma)}\t{v:.17g}\t{w:.17g}")
            print(lines[-1], file=sys.stderr)
    with open(args.out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
