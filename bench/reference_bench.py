#!/usr/bin/python3
"""The Python reference side of `make bench`: the same work as bench/bench_engine.c done with
pandas / numpy (scipy.special.erfc when scipy is installed), timed in the same run, then the table
"case | calscope | python reference | ratio | target | met?".

    /usr/bin/python3 bench/reference_bench.py [--c-results ENGINE.tsv] [--repeats N] DATA.csv

ENGINE.tsv holds the driver's lines `case <TAB> best s <TAB> median s <TAB> note` (bench/run.sh
adds a `cli` line for `calscope report` end to end; --wide names the 50,000 x 1000 raw dataset of
the top-k / classwise cases, whose numpy side, with the size / bins curves, is in
bench/reference_heavy.py). ratio = python time / calscope time (how many
times faster calscope is). Targets come from the issues; missing one is reported, never an error:
the exit status is 0 whatever the timings.
"""
import argparse
import math
import os
import resource
import sys
import time

import numpy as np
import pandas as pd

import reference_heavy as heavy
import reference_recal as recal

try:
    from scipy.special import erfc as _erfc_vec
    ERFC = "scipy.special.erfc"
except ImportError:  # pragma: no cover - scipy is optional
    _m_erfc = np.frompyfunc(math.erfc, 1, 1)

    def _erfc_vec(x):
        return _m_erfc(x).astype(np.float64)
    ERFC = "math.erfc via np.frompyfunc"

M = 15
SIGMA = 0.1


def best_of(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[0], times[len(times) // 2], out


# ---- the work --------------------------------------------------------------------------------

def top1(P, y):
    pred = P.argmax(axis=1)
    conf = P[np.arange(len(y)), pred]
    return conf, (pred == y).astype(np.float64)


def metric_set(P, y):
    """accuracy, ECE/ACE/MCE (top-1, 15 uniform bins (i/M,(i+1)/M]), Brier, NLL."""
    n = len(y)
    conf, correct = top1(P, y)
    edges = np.arange(M + 1, dtype=np.float64) / M
    b = np.clip(np.searchsorted(edges, conf, side="left") - 1, 0, M - 1)
    cnt = np.bincount(b, minlength=M)
    sc = np.bincount(b, weights=conf, minlength=M)
    sa = np.bincount(b, weights=correct, minlength=M)
    nz = cnt > 0
    gap = np.abs(sc[nz] - sa[nz]) / cnt[nz]
    py = P[np.arange(n), y]
    return {
        "accuracy": float(correct.mean()),
        "ece": float(np.sum(cnt[nz] / n * gap)),
        "ace": float(gap.mean()),
        "mce": float(gap.max()),
        "brier": float(np.mean(np.einsum("ij,ij->i", P, P) - 2.0 * py + 1.0)),
        "nll": float(-np.mean(np.log(np.maximum(py, 1e-15)))),
    }


def rece_g(conf, correct, chunk=100_000):
    """RECE-G (Gupta, Basu & Arora 2023, eq. 6): Normal(c, sigma) mass on each of the M uniform
    bins, normalised over the M bins, summed over all M bins, divided by N. Chunked to bound
    memory."""
    edges = np.arange(M + 1, dtype=np.float64) / M
    ct = np.zeros(M)
    at = np.zeros(M)
    for s in range(0, len(conf), chunk):
        c = conf[s:s + chunk]
        a = correct[s:s + chunk]
        cdf = 0.5 * _erfc_vec((c[:, None] - edges[None, :]) / (SIGMA * math.sqrt(2.0)))
        w = cdf[:, 1:] - cdf[:, :-1]
        w /= w.sum(axis=1, keepdims=True)
        ct += c @ w
        at += a @ w
    return float(np.abs(at - ct).sum() / len(conf))


# ---- table -----------------------------------------------------------------------------------

# key, label, target kind, target value, target text
ROWS = [
    ("load", "load 1M x 10 CSV", "ratio", 5.0, ">= 5x pandas.read_csv"),
    ("load_wide", "load 50,000 x 1000 CSV", "abs", 1.0, "<= 1 s"),
    ("cli_wide", "report, 50,000 x 1000, end to end", "abs", 1.5, "<= 1.5 s"),
    ("metrics", "acc+ECE+ACE+MCE+Brier+NLL, 1M", "abs", 0.020, "< 20 ms"),
    ("rece_g_50k", "RECE-G, 50,000 rows", None, None, "-"),
    ("rece_g", "RECE-G, 1M rows", "abs", 0.100, "< 100 ms"),
    ("cli", "calscope report, end to end", None, None, "-"),
    ("cli_vs_load", "report, end to end, vs read_csv", "ratio", 10.0, ">= 10x pandas.read_csv"),
    ("cli_rss_mb", "report peak RSS, 1M x 10", "rss", None, "<= 1.2 x doubles + 32 MB"),
    ("topk_bars", "top-k bars (9 k), 50,000 x 1000", "abs", 2.0, "< 2 s"),
    ("classwise_1000", "classwise ECE, 50,000 x 1000", "abs", 0.5, "< 0.5 s"),
    ("size_curve_t1", "size curve 6x200, 50k, 1 thread", None, None, "-"),
    ("size_curve", "size curve 6x200, 50k, 2 threads", "both", (2.0, 50.0), "< 2 s, >= 50x numpy"),
    ("bins_curve_t1", "bins curve 10x200, 50k, 1 thread", None, None, "-"),
    ("bins_curve", "bins curve 10x200, 50k, 2 threads", "abs", 1.0, "< 1 s"),
    ("recal_iso_1m", "isotonic recal, 5-fold, 1M", "abs", 0.5, "< 0.5 s"),
    ("recal_ts", "temp. scaling, 5-fold, 50,000 x 1000", "abs", 1.0, "< 1 s"),
    ("peak_rss_mb", "peak memory (MB)", None, None, "-"),
]


def fmt_t(x):
    if x is None:
        return "n/a"
    if x >= 1.0:
        return f"{x:.3f} s"
    if x >= 1e-3:
        return f"{x * 1e3:.2f} ms"
    return f"{x * 1e6:.1f} us"


def read_c(path):
    out = {}
    if not path or not os.path.exists(path):
        return out
    for line in open(path):
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 4:
            continue
        key, best, med, note = parts[0], parts[1], parts[2], parts[3]
        try:
            out[key] = (float(best), float(med), note)
        except ValueError:
            out[key] = (None, None, note)
    return out


def parse_values(note):
    """'... ece 0.123 ace 0.2 ...' -> {'ece': 0.123, ...}"""
    vals = {}
    toks = note.replace(",", " ").replace(":", " ").split()
    for a, b in zip(toks, toks[1:]):
        try:
            vals[a] = float(b)
        except ValueError:
            pass
    return vals


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--c-results")
    ap.add_argument("--repeats", type=int, default=int(os.environ.get("BENCH_REPEATS", "5")))
    ap.add_argument("--load-repeats", type=int, default=int(os.environ.get("BENCH_LOAD_REPEATS", "2")))
    ap.add_argument("--wide", help="raw 50,000 x 1000 dataset written by bench_engine -w")
    ap.add_argument("--wide-csv", help="the 50,000 x 1000 CSV of rows load_wide / cli_wide")
    ap.add_argument("data")
    a = ap.parse_args(argv)
    size_mb = os.path.getsize(a.data) / 1e6

    py = {}
    notes = {}
    t, _, df = best_of(lambda: pd.read_csv(a.data), a.load_repeats)
    py["load"] = t
    notes["load"] = f"pandas.read_csv {size_mb / t:.0f} MB/s, best of {a.load_repeats}"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    pcols = [c for c in df.columns if c.lower().startswith("p_")]
    P = np.ascontiguousarray(df[pcols].to_numpy(dtype=np.float64))
    y = df["label"].to_numpy(dtype=np.int64)
    del df

    t, _, vals = best_of(lambda: metric_set(P, y), a.repeats)
    py["metrics"] = t
    conf, correct = top1(P, y)
    t, _, r50 = best_of(lambda: rece_g(conf[:50000], correct[:50000]), a.repeats)
    py["rece_g_50k"] = t
    notes["rece_g_50k"] = f"numpy + {ERFC}"
    if ERFC.startswith("scipy"):
        t, _, r1m = best_of(lambda: rece_g(conf, correct), max(1, min(a.repeats, 3)))
        py["rece_g"] = t
        notes["rece_g"] = f"numpy + {ERFC}, chunks of 100k rows"
    else:
        r1m = None
        py["rece_g"] = py["rece_g_50k"] * len(conf) / 50000
        notes["rece_g"] = "EXTRAPOLATED from 50,000 rows (no scipy)"
    py["cli"] = py["load"] + py["metrics"] + py["rece_g"]
    notes["cli"] = "python: read_csv + metric set + RECE-G (sum of the rows above)"
    py["cli_vs_load"] = py["load"]   # the whole report against reading the file alone
    notes["cli_vs_load"] = "python: pandas.read_csv alone (the load row)"
    # peak RSS target, 1.2 x the probability matrix as doubles + 32 MB
    rss_target = 1.2 * 8 * len(y) * P.shape[1] / 1e6 + 32
    heavy_vals = heavy.run_all(a.wide, conf[:50000], correct[:50000], _erfc_vec, ERFC, py, notes)
    Pw, yw = heavy.read_wide(a.wide) if a.wide and os.path.exists(a.wide) else (None, None)
    recal_vals = recal.run(Pw, yw, P, y, py, notes)   # bench/reference_recal.py
    del Pw, yw
    py["peak_rss_mb"] = rss
    notes["peak_rss_mb"] = "python process after read_csv"
    wide_mb = None
    if a.wide_csv and os.path.exists(a.wide_csv):
        # the same file through pandas once (it takes many seconds)
        wide_mb = os.path.getsize(a.wide_csv) / 1e6
        t, _, dfw = best_of(lambda: pd.read_csv(a.wide_csv, engine="c"), 1)
        py["load_wide"] = t
        notes["load_wide"] = f"pandas.read_csv {wide_mb / t:.0f} MB/s, once"
        wcols = [c for c in dfw.columns if c.lower().startswith("p_")]
        Pwc = np.ascontiguousarray(dfw[wcols].to_numpy(dtype=np.float64))
        ywc = dfw["label"].to_numpy(dtype=np.int64)
        del dfw
        tm, _, _ = best_of(lambda: metric_set(Pwc, ywc), 1)
        py["cli_wide"] = t + tm
        notes["cli_wide"] = "python: read_csv + metric set"
        del Pwc, ywc

    c = read_c(a.c_results)
    print(f"\ncalscope benchmark: {a.data} ({size_mb:.1f} MB, {len(y)} rows x {P.shape[1]} classes); "
          f"best of {a.repeats} (loads: calscope 3, pandas {a.load_repeats})")
    hdr = ("case", "calscope", "python reference", "ratio", "target", "met?")
    w = (34, 11, 17, 9, 22, 5)
    line = " | ".join(h.ljust(n) for h, n in zip(hdr, w))
    print(line)
    print("-" * len(line))
    nlabel = f"{len(y) / 1e6:g}M" if len(y) >= 1e6 else f"{len(y):,}"
    for key, label, kind, target, ttext in ROWS:
        label = label.replace("1M", nlabel)
        cb = c.get(key, (None, None, ""))[0]
        pb = py.get(key)
        if key in ("peak_rss_mb", "cli_rss_mb"):
            cs = f"{cb:.0f} MB" if cb is not None else "n/a"
            ps = f"{pb:.0f} MB" if pb is not None else "n/a"
        else:
            cs, ps = fmt_t(cb), fmt_t(pb)
        ratio = pb / cb if (cb and pb) else None
        if py.get(key + "_partial"):
            ps, ratio = ps + " (part)", None
        rs = f"{ratio:.1f}x" if ratio is not None else "n/a"
        if kind is None:
            met = "-"
        elif cb is None:
            met = "n/a"
        elif kind == "rss":
            ttext = f"<= {rss_target:.0f} MB (1.2 x doubles + 32)"
            met = "yes" if cb <= rss_target else "NO"
        elif kind == "ratio":
            met = "yes" if ratio is not None and ratio >= target else "NO"
        elif kind == "both":
            met = "yes" if cb < target[0] and ratio is not None and ratio >= target[1] else "NO"
        else:
            met = "yes" if cb <= target else "NO"
        print(" | ".join(s.ljust(n) for s, n in zip((label, cs, ps, rs, ttext, met), w)))
    print("ratio = python time / calscope time (x faster); for memory, python MB / calscope MB")
    # load throughput from page cache on all cores, target >= 1.5 GB/s
    for key, mb, what in (("load", size_mb, "1M x 10"), ("load_wide", wide_mb, "50,000 x 1000")):
        cb = c.get(key, (None,))[0]
        if cb and mb:
            gbs = mb / 1e3 / cb
            pgbs = f"; pandas.read_csv {mb / 1e3 / py[key]:.3f} GB/s, ratio {py[key] / cb:.1f}x" if py.get(key) else ""
            print(f"load throughput {what}: calscope {gbs:.2f} GB/s{pgbs} (target >= 1.5 GB/s: "
                  f"{'met' if gbs >= 1.5 else 'NOT met'}); load average {os.getloadavg()[0]:.2f}")
    sp = []
    for key, what in (("size_curve", "size curve"), ("bins_curve", "bins curve")):
        t1, t2 = c.get(key + "_t1", (None,))[0], c.get(key, (None,))[0]
        if t1 and t2:
            sp.append(f"{what} {t1 / t2:.2f}x ({fmt_t(t1)} -> {fmt_t(t2)})")
    if sp:
        print("speed-up from 1 to 2 threads: " + "; ".join(sp))
    wh = c.get("wide_header")
    if wh and wh[0]:
        v = parse_values(wh[2])
        k10 = v.get("k10")
        if k10:
            r = wh[0] / k10
            cpu = (f"; CPU time {fmt_t(v['cpu_k100000'])} vs {fmt_t(v['cpu_k10'])}, ratio "
                   f"{v['cpu_ratio']:.2f}" if "cpu_ratio" in v else "")
            load = f"; load average {v['average']:.2f}" if "average" in v else ""
            print(f"wide header: K = 100,000 x 3 rows {fmt_t(wh[0])} vs the same bytes "
                  f"at K = 10 {fmt_t(k10)}: ratio {r:.2f} (wide / narrow wall time; target <= 1.0: "
                  f"{'met' if r <= 1.0 else 'NOT met'}){cpu}{load}")

    print("\nnotes:")
    for key, *_ in ROWS:
        if key in c and c[key][2]:
            print(f"  calscope {key}: {c[key][2]}")
        if key in notes:
            print(f"  python   {key}: {notes[key]}")

    # The two sides must agree on the numbers, or the timings compare different work.
    cv = parse_values(c.get("metrics", (None, None, ""))[2])
    cv.update({"rece_g": v for k, v in parse_values(c.get("rece_g", (None, None, ""))[2]).items()
               if k == "rece_g"})
    pv = dict(vals)
    if r1m is not None:
        pv["rece_g"] = r1m
    if cv:
        diffs = [f"{k} |diff| {abs(cv[k] - pv[k]):.1e}" for k in pv if k in cv]
        worst = max((abs(cv[k] - pv[k]) for k in pv if k in cv), default=float("nan"))
        print(f"\nagreement on the full file (calscope vs numpy, values printed to 9 decimals): "
              f"{'OK' if worst < 1e-8 else 'DIFFERENT'}; " + ", ".join(diffs))
    else:
        print("\npython values: " + ", ".join(f"{k} {v:.9f}" for k, v in pv.items()))
    print(heavy.agreement({k: v[2] for k, v in c.items()}, heavy_vals))
    ct = parse_values(c.get("recal_ts", (None, None, ""))[2]).get("temperature")
    if ct is not None and "temperature" in recal_vals:
        d = abs(ct - recal_vals["temperature"])
        print(f"  recal_ts: all-rows temperature {'OK' if d < 1e-6 else 'DIFFERENT'} "
              f"(calscope {ct:.9f}, numpy {recal_vals['temperature']:.9f})")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as e:  # never fail `make bench` on the reference side
        print(f"reference_bench: {e!r}", file=sys.stderr)
        sys.exit(0)
