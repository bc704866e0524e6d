#!/usr/bin/python3
"""Compares one `calscope report --format json` output with one entry of tests/expected/reference.json.

    /usr/bin/python3 tests/e2e/compare_json.py REFERENCE.json INDEX ACTUAL.json
    /usr/bin/python3 tests/e2e/compare_json.py --list REFERENCE.json
        prints one line per entry: INDEX <tab> NAME <tab> PATH <tab> FLAGS (space separated)

Exit status 0 when everything matches, 1 with one line per differing key on stdout, 2 when the
actual output is not JSON of the documented shape (docs/json.md).

Compared, with absolute tolerance `tolerance` (1e-12) from the reference file:
  * rows and classes (exactly);
  * the metrics in `compare_metrics` (accuracy ece ace mce rece_g brier nll, smece smece_sigma l2ce
    l2ce_debiased ece_sweep ece_sweep_bins) — each must be there, except those the entry lists
    under "skip" (with the reason); a metric in `metric_tolerance` (the root-found smece and
    smece_sigma: 1e-9) uses its own tolerance;
  * the metrics in `optional_metrics` (aece sce rece_m) when the output has them (not null);
  * for files with a `case` column, when the output has "cases": count, the mean/sd of each per-case
    metric, and the reliability histogram (exactly) when both sides have it;
  * the bin table when the reference has one: the bins with count > 0 are matched in order (the
    output may list empty bins or not); count exactly, lo/hi/conf/acc within the tolerance
    (fields that are null in the reference, such as lo/hi of equal-mass bins, are skipped).
"""
import json
import math
import sys


def num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def close(a, b, tol):
    return num(a) and num(b) and math.isfinite(a) and abs(a - b) <= tol


def compare(exp, doc):
    tol = exp.get("tolerance", 1e-12)
    diffs = []
    try:
        f = doc["files"][0]
    except (KeyError, IndexError, TypeError):
        return None
    if not isinstance(f, dict):
        return None
    for key in ("rows", "classes"):
        if key in exp["entry"] and f.get(key) != exp["entry"][key]:
            diffs.append(f"{key}: got {f.get(key)!r} want {exp['entry'][key]!r}")
    got_m = f.get("metrics") or {}
    want_m = exp["entry"]["metrics"]
    skip = exp["entry"].get("skip") or {}
    for key in exp["compare"]:
        if key in skip:
            continue
        if key not in got_m:
            diffs.append(f"metrics.{key}: missing (want {want_m[key]!r})")
        elif not close(got_m[key], want_m[key], exp["metric_tolerance"].get(key, tol)):
            d = abs(got_m[key] - want_m[key]) if num(got_m[key]) else float("nan")
            diffs.append(f"metrics.{key}: got {got_m[key]!r} want {want_m[key]!r} (|diff| {d:.3g})")
    for key in exp["optional"]:
        if key in skip or got_m.get(key) is None or key not in want_m:
            continue
        if not close(got_m[key], want_m[key], tol):
            diffs.append(f"metrics.{key}: got {got_m[key]!r} want {want_m[key]!r}")
    want_c = exp["entry"].get("cases")
    got_c = f.get("cases")
    if want_c is not None and isinstance(got_c, dict):
        if got_c.get("count") != want_c["count"]:
            diffs.append(f"cases.count: got {got_c.get('count')!r} want {want_c['count']!r}")
        for key, wv in want_c["metrics"].items():
            gv = (got_c.get("metrics") or {}).get(key) or {}
            for stat in ("mean", "sd"):
                if not close(gv.get(stat), wv[stat], tol):
                    diffs.append(f"cases.metrics.{key}.{stat}: got {gv.get(stat)!r} want {wv[stat]!r}")
        wh, gh = want_c.get("reliability_histogram"), got_c.get("reliability_histogram")
        if wh is not None and gh is not None and gh != wh:
            diffs.append("cases.reliability_histogram differs")
    want_b = exp["entry"].get("bins")
    if want_b is not None:
        got_b = f.get("bins")
        if not isinstance(got_b, list):
            diffs.append("bins: missing")
        else:
            wb = [b for b in want_b if b["count"] > 0]
            gb = [b for b in got_b if isinstance(b, dict) and b.get("count", 0) > 0]
            if len(wb) != len(gb):
                diffs.append(f"bins: {len(gb)} non-empty bins, want {len(wb)}"
                             f" (counts got {[b.get('count') for b in gb]} want {[b['count'] for b in wb]})")
            for i, (w, g) in enumerate(zip(wb, gb)):
                if g.get("count") != w["count"]:
                    diffs.append(f"bins[{i}].count: got {g.get('count')!r} want {w['count']!r}"
                                 f" (bin lo {w['lo']!r})")
                for key in ("lo", "hi", "conf", "acc"):
                    if w.get(key) is None:
                        continue
                    if not close(g.get(key), w[key], tol):
                        diffs.append(f"bins[{i}].{key}: got {g.get(key)!r} want {w[key]!r}")
    return diffs


def main(argv):
    if len(argv) == 2 and argv[0] == "--list":
        ref = json.load(open(argv[1]))
        for i, e in enumerate(ref["entries"]):
            print(f"{i}\t{e['name']}\t{e['path']}\t{' '.join(e['flags'])}")
        return 0
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    ref = json.load(open(argv[0]))
    entry = ref["entries"][int(argv[1])]
    exp = {"tolerance": ref.get("tolerance", 1e-12), "metric_tolerance": ref.get("metric_tolerance", {}),
           "entry": entry,
           "compare": ref.get("compare_metrics", []), "optional": ref.get("optional_metrics", [])}
    try:
        doc = json.load(open(argv[2]))
    except (OSError, ValueError) as e:
        print(f"output is not JSON: {e}")
        return 2
    diffs = compare(exp, doc)
    if diffs is None:
        print("output has no files[0] object")
        return 2
    for d in diffs:
        print(d)
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
