#!/usr/bin/env bash
# `make bench-seg` (and part of `make bench`): the segmentation targets, in one run.
#   1. a BraTS-size set: BENCH_SEG_CASES (default 20) cases of 240x240x155x4 float32 MONAI-style
#      .nii.gz + uint8 label maps, generated once by tools/gen/make_volumes.py and cached under
#      BUILD_DIR/bench/seg (about 130 MB per case: synthetic float32 probabilities barely
#      compress; gzip level 1, nibabel's default).
#   2. `calscope reduce --threads 2` of it (wall clock, peak RSS from /usr/bin/time), against
#      `gzip -dc` of the same files (every probability and label map the reduce reads; one after
#      the other, and two at a time — the ratio uses two at a time: the same 2 cores as
#      --threads 2), against ISA-L's `igzip -dc` of the same files, two at a time (the floor
#      calscope's own inflater sets: target reduce <= 1.3x it) and one after the other (the floor
#      while one case is reduced at a time), and against the same reduction in
#      numpy + nibabel (bench/reference_seg.py, which also checks calscope's numbers: counts
#      equal, sums to 1e-9).
#   3. peak RSS with 2 cases against 20 (must not grow with the number of cases).
#   4. first, and alone with BENCH_SEG_OPEN_ONLY=1 (`make bench-seg-open`, seconds, no big
#      volumes): a 200-case statistics file (24x20x16 volumes, F = 300, 4 classes, 8.8 MB) —
#      `calscope report --format json` of it and `calscope --version` (process start), wall
#      clock and CPU time (user + system of the child, which load on the machine moves less),
#      best and median of BENCH_SEG_OPEN_RUNS (15); then BUILD_DIR/bench_segstats
#      (bench/bench_segstats.c): the read alone and every view the dashboard recomputes, in
#      one process. Target: <= 50 ms wall for the open and for every recompute.
# Prints "case | calscope | reference | ratio | target | met?" and never fails on timing (exit 0).
#   bench/seg_bench.sh [BUILD_DIR]
# Environment: BENCH_SEG_NPZ (1: the .npz float32 / float16 cases), BENCH_SEG_CASES (20), BENCH_SEG_PY_CASES (cases the numpy side reduces; default
# all; its time is compared per case), BENCH_SEG_DIR (BUILD_DIR/bench/seg), BENCH_SEG_OPEN_ONLY,
# BENCH_SEG_OPEN_RUNS.
set -u
cd "$(dirname "$0")/.." || exit 0
BUILD=${1:-build}
PY=/usr/bin/python3
CAL=$BUILD/calscope
N=${BENCH_SEG_CASES:-20}
NPY=${BENCH_SEG_PY_CASES:-$N}
DIR=${BENCH_SEG_DIR:-$BUILD/bench/seg}
SET=$DIR/brats_${N}
SMALL=$DIR/small200
W=$DIR/work
mkdir -p "$DIR" "$W"
VALUES=0,1,2,4

if ! $PY -c 'import numpy, nibabel' 2>/dev/null; then
    echo "bench-seg: /usr/bin/python3 lacks numpy or nibabel (make deps); skipped"; exit 0
fi
if [ ! -x "$CAL" ]; then echo "bench-seg: $CAL missing (make BUILD=$BUILD)"; exit 0; fi

# ---- opening a 200-case statistics file, and the dashboard's recomputes on it ----
if [ ! -s "$SMALL/manifest.csv" ]; then
    rm -rf "$SMALL.tmp"
    $PY tools/gen/make_volumes.py --quiet --out "$SMALL.tmp" --cases 200 --shape 24,20,16 \
        --format nifti --seed 200 || { echo "bench-seg: generation failed"; exit 0; }
    mv "$SMALL.tmp" "$SMALL"
fi
if "$CAL" reduce --label-values $VALUES -o "$W/small200.stats" "$SMALL/manifest.csv" >/dev/null 2>"$W/small.err"; then
    : > "$W/open.tsv"
    [ -x "$BUILD/bench_segstats" ] && "$BUILD/bench_segstats" -r "${BENCH_SEG_OPEN_RUNS:-15}" "$W/small200.stats" > "$W/open.tsv"
    $PY - "$CAL" "$W/small200.stats" "${BENCH_SEG_OPEN_RUNS:-15}" "$W/open.tsv" <<'EOF'
import os, statistics, sys
sys.path.insert(0, "bench")
from child_time import timed_runs
cal, stats, runs, tsv = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

def timed(cmd):
    """wall and CPU of `runs` runs: best, median"""
    t = timed_runs(cmd, runs)
    if t is None:
        return None
    wall, cpu = t
    return min(wall), statistics.median(wall), min(cpu), statistics.median(cpu)

ms = lambda s: f"{s * 1e3:.1f} ms"
rows = []
for case, cmd in (("report --format json, 200-case stats", [cal, "report", "--format", "json", stats]),
                  ("calscope --version (process start)", [cal, "--version"])):
    t = timed(cmd)
    report = "report" in case
    if t is None:
        rows.append((case, "failed", "", "", "", "<= 50 ms" if report else "(information)", "n/a"))
    else:
        met = ("met" if t[0] <= 0.050 else "NOT met") if report else "-"
        rows.append((case, ms(t[0]), ms(t[1]), ms(t[2]), ms(t[3]),
                     "<= 50 ms" if report else "(information)", met))
for line in open(tsv):
    f = line.rstrip("\n").split("\t")
    if len(f) < 5:
        continue
    if f[1] == "NA":
        rows.append(("  " + f[0], "n/a", "", "", "", "", f[4][:60]))
        continue
    best, med, cpu = float(f[1]), float(f[2]), float(f[3])
    target = "<= 50 ms" if f[0].startswith(("view", "report")) else "(information)"
    met = ("met" if best <= 0.050 else "NOT met") if target != "(information)" else "-"
    rows.append(("  in process: " + f[4], ms(best), ms(med), ms(cpu), "", target, met))
head = ("case", "wall best", "wall median", "CPU best", "CPU median", "target", "met?")
print(f"\nstatistics file: 200 cases, F = 300, 4 classes, {os.path.getsize(stats) / 1e6:.1f} MB; "
      f"{runs} runs each; load average {' '.join(open('/proc/loadavg').read().split()[:3])}")
w = [max(len(r[i]) for r in rows + [head]) for i in range(7)]
for r in [head] + rows:
    print(" | ".join(x.ljust(w[i]) for i, x in enumerate(r)).rstrip())
EOF
else
    echo "bench-seg: reduce of the 200-case set failed: $(head -c 300 "$W/small.err")"
fi
[ -n "${BENCH_SEG_OPEN_ONLY:-}" ] && exit 0

# ---- data (once) ----
if [ ! -s "$SET/manifest.csv" ]; then
    echo "bench-seg: generating $N BraTS-size cases (240x240x155x4 float32 .nii.gz) in $SET, once"
    rm -rf "$SET.tmp"
    t0=$(date +%s)
    $PY tools/gen/make_volumes.py --quiet --out "$SET.tmp" --cases "$N" --shape 240,240,155 \
        --format nifti --temperature 0.5:0.9 --seed 2021 --jobs 2 || { echo "bench-seg: generation failed"; exit 0; }
    mv "$SET.tmp" "$SET"
    echo "bench-seg: generated in $(( $(date +%s) - t0 )) s"
fi
mapfile -t FILES < <(cd "$SET" && tail -n +2 manifest.csv | awk -F, '{print $2; print $3}')
BYTES=$(cd "$SET" && du -cb "${FILES[@]}" | tail -1 | cut -f1)
# the same page cache for everyone: read every file once before timing
(cd "$SET" && cat "${FILES[@]}" >/dev/null)

now() { date +%s%N; }
secs() { awk -v n="$1" 'BEGIN{printf "%.3f", n/1e9}'; }

# ---- calscope reduce --threads 2 (peak RSS from /usr/bin/time) ----
TIMEF=()
[ -x /usr/bin/time ] && TIMEF=(/usr/bin/time -f '%M' -o "$W/rss")
t0=$(now)
"${TIMEF[@]}" "$CAL" reduce --threads 2 --label-values $VALUES -o "$W/brats.stats" "$SET/manifest.csv" \
    2>"$W/reduce.err" >/dev/null; rc=$?
t_cal=$(( $(now) - t0 ))
RSS_KB=$(tail -1 "$W/rss" 2>/dev/null || echo NA)
if [ "$rc" -ne 0 ]; then
    echo "bench-seg: calscope reduce failed (exit $rc): $(head -c 400 "$W/reduce.err")"; t_cal=""; RSS_KB=NA
fi
# RSS with 2 cases: must not depend on the number of cases
head -3 "$SET/manifest.csv" >"$SET/.bench2.csv"
"${TIMEF[@]}" "$CAL" reduce --threads 2 --label-values $VALUES -o "$W/two.stats" "$SET/.bench2.csv" \
    >/dev/null 2>&1; rc2=$?
RSS2_KB=NA
[ "$rc2" -eq 0 ] && [ -n "$t_cal" ] && RSS2_KB=$(tail -1 "$W/rss" 2>/dev/null || echo NA)
rm -f "$SET/.bench2.csv"

# ---- gzip -dc of the same files: one after the other, and two at a time ----
t0=$(now); (cd "$SET" && gzip -dc "${FILES[@]}" >/dev/null); t_gz1=$(( $(now) - t0 ))
t0=$(now); (cd "$SET" && printf '%s\0' "${FILES[@]}" | xargs -0 -P2 -n1 gzip -dc >/dev/null); t_gz2=$(( $(now) - t0 ))
# ---- igzip -dc (ISA-L, the inflater calscope uses): the floor, two at a time ----
t_ig2=NA; t_ig1=NA
if command -v igzip >/dev/null; then
    t0=$(now); (cd "$SET" && printf '%s\0' "${FILES[@]}" | xargs -0 -P2 -n1 igzip -dc >/dev/null); t_ig2=$(( $(now) - t0 ))
    t0=$(now); (cd "$SET" && igzip -dc "${FILES[@]}" >/dev/null); t_ig1=$(( $(now) - t0 ))
else
    echo "bench-seg: igzip missing (make deps installs isal): no ISA-L floor"
fi

# ---- numpy + nibabel ----
PYARGS=()
[ -n "$t_cal" ] && PYARGS=(--compare "$W/brats.stats")
echo "bench-seg: numpy + nibabel reduction of $NPY cases (about 6 s a case here)"
$PY bench/reference_seg.py "$SET/manifest.csv" --label-values $VALUES --cases "$NPY" "${PYARGS[@]}" \
    >"$W/py.tsv" 2>"$W/py.err" || echo "bench-seg: reference_seg.py failed: $(head -c 400 "$W/py.err")"
t_py=$(awk -F'\t' '$1=="python_reduce"{print $2}' "$W/py.tsv")
py_rss=$(awk -F'\t' '$1=="python_reduce"{print $4}' "$W/py.tsv")
cmp_line=$(awk -F'\t' '$1=="compare"{print $2 ": " $3}' "$W/py.tsv")

# ---- table ----
VOX=$((240 * 240 * 155))
$PY - "$N" "$NPY" "$BYTES" "${t_cal:-NA}" "$t_gz1" "$t_gz2" "${t_py:-NA}" "$RSS_KB" "$RSS2_KB" \
    "$VOX" "${py_rss:-NA}" "$t_ig2" "$t_ig1" <<'EOF'
import sys
(n, npy, nbytes, t_cal, gz1, gz2, t_py, rss, rss2, vox, py_rss, ig2, ig1) = sys.argv[1:]
n, npy, vox = int(n), int(npy), int(vox)
num = lambda s: None if s in ("NA", "") else float(s)
t_cal, gz1, gz2, ig2, ig1 = (None if num(x) is None else num(x) / 1e9 for x in (t_cal, gz1, gz2, ig2, ig1))
t_py, rss, rss2 = num(t_py), num(rss), num(rss2)
fmt = lambda s: "n/a" if s is None else (f"{s:.2f} s" if s >= 1 else f"{s * 1e3:.1f} ms")
rows = []
def row(case, cal, ref, ratio, target, met):
    rows.append((case, cal, ref, ratio, target, met))
yes = lambda ok: "n/a" if ok is None else ("met" if ok else "NOT met")
print(f"\nsegmentation: {n} cases of 240x240x155x4 float32 .nii.gz + uint8 labels, "
      f"{int(nbytes) / 1e9:.2f} GB on disk, {n * vox * 16 / 1e9:.2f} GB of probabilities")
ri = None if (t_cal is None or ig2 is None) else t_cal / ig2
row("reduce vs igzip -dc (ISA-L), 2 at a time", fmt(t_cal), fmt(ig2), "n/a" if ri is None else f"{ri:.2f}x",
    "<= 1.3x igzip -dc", yes(None if ri is None else ri <= 1.3))
# one case's probabilities are one deflate stream, inflated in order on one thread, and one
# BraTS-size case is reduced at a time (its per-voxel arrays fill the memory budget): the file's
# inflate one after the other is the floor of that
r1i = None if (t_cal is None or ig1 is None) else t_cal / ig1
row("reduce vs igzip -dc (ISA-L), one at a time", fmt(t_cal), fmt(ig1), "n/a" if r1i is None else f"{r1i:.2f}x",
    "(information: the one-case-at-a-time floor)", "-")
r = None if t_cal is None else t_cal / gz2
row("reduce vs gzip -dc, 2 at a time", fmt(t_cal), fmt(gz2), "n/a" if r is None else f"{r:.2f}x",
    "(information)", "-")
rz = None if ig2 is None else gz2 / ig2
row("gzip -dc vs igzip -dc, 2 at a time", fmt(gz2), fmt(ig2), "n/a" if rz is None else f"{rz:.2f}x",
    "(information: ISA-L's gain)", "-")
r1 = None if t_cal is None else t_cal / gz1
row("reduce vs gzip -dc, one at a time", fmt(t_cal), fmt(gz1), "n/a" if r1 is None else f"{r1:.2f}x",
    "(information)", "-")
sp = None if (t_cal is None or t_py is None) else (t_py / npy) / (t_cal / n)
row(f"reduce vs numpy+nibabel (per case, {npy} cases)", fmt(None if t_cal is None else t_cal / n),
    fmt(None if t_py is None else t_py / npy), "n/a" if sp is None else f"{sp:.1f}x",
    ">= 20x numpy+nibabel", yes(None if sp is None else sp >= 20))
# memory budget: one case's label map (uint8 on disk: 1 byte a voxel) + 64 MiB + the statistics
# as held in memory (per case k*F*(8+8+8) + F*24 + k*24 bytes; k = 4, F = 300)
stats_mem = n * (4 * 300 * 24 + 300 * 24 + 4 * 24)
budget_kb = (vox * 1 + 64 * 2**20 + stats_mem) / 1024
row("peak RSS, reduce --threads 2", "n/a" if rss is None else f"{rss / 1024:.0f} MB",
    "n/a" if py_rss in ("NA", "") else f"{py_rss} MB (numpy)", "-",
    f"<= {budget_kb / 1024:.0f} MB (labels {vox / 2**20:.1f} + 64 + stats {stats_mem / 2**20:.1f})",
    yes(None if rss is None else rss <= budget_kb))
row("peak RSS, 2 cases vs all", "n/a" if rss2 is None else f"{rss2 / 1024:.0f} MB",
    "n/a" if rss is None else f"{rss / 1024:.0f} MB", "-", "independent of the cases",
    yes(None if (rss is None or rss2 is None) else rss <= rss2 * 1.1 + 4096))
w = [max(len(r[i]) for r in rows + [("case", "calscope", "reference", "ratio", "target", "met?")])
     for i in range(6)]
for r in [("case", "calscope", "reference", "ratio", "target", "met?")] + rows:
    print(" | ".join(x.ljust(w[i]) for i, x in enumerate(r)).rstrip())
EOF
# ---- nnU-Net .npz, float32 and float16: reduce against the raw inflate of the same streams ----
# One case of each (BENCH_SEG_NPZ=0 skips them). The member's raw deflate bytes are wrapped in a
# gzip header and trailer (CRC and size from the archive), so `igzip -dc` inflates exactly the
# stream calscope inflates; the label map is inflated beside it. CPU time (user + system) and
# wall clock, best of 2; target: reduce <= 1.3x the raw inflate.
if [ "${BENCH_SEG_NPZ:-1}" = 1 ] && command -v igzip >/dev/null; then
    for dt in float32 float16; do
        NS=$DIR/npz_$dt
        if [ ! -s "$NS/manifest.csv" ]; then
            echo "bench-seg: generating one BraTS-size nnU-Net .npz case ($dt) in $NS, once"
            rm -rf "$NS.tmp"
            $PY tools/gen/make_volumes.py --quiet --out "$NS.tmp" --cases 1 --shape 240,240,155 \
                --format npz --npz-dtype $dt --seed 2021 || { echo "bench-seg: npz generation failed"; continue; }
            mv "$NS.tmp" "$NS"
        fi
        $PY - "$NS" "$CAL" "$dt" <<'EOF'
import os, struct, sys, zipfile
sys.path.insert(0, "bench")
from child_time import timed_runs
ns, cal, dt = sys.argv[1:]
npz, labels = os.path.join(ns, "npz", "case000.npz"), os.path.join(ns, "labels", "case000.nii.gz")
gz = os.path.join(ns, "member.gz")
if not os.path.exists(gz):
    info = zipfile.ZipFile(npz).infolist()[0]
    with open(npz, "rb") as f:
        f.seek(info.header_offset)
        h = f.read(30)
        f.seek(info.header_offset + 30 + sum(struct.unpack("<HH", h[26:30])))
        raw = f.read(info.compress_size)
    with open(gz, "wb") as f:
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + raw +
                struct.pack("<II", info.CRC, info.file_size & 0xFFFFFFFF))

def best(cmd):
    """(wall, CPU) of the run of least CPU of 2"""
    t = timed_runs(cmd, 2)
    return None if t is None else min(zip(*t), key=lambda wc: wc[1])

red = best([cal, "reduce", "--threads", "2", "--label-values", "0,1,2,4", "-o", os.devnull,
            os.path.join(ns, "manifest.csv")])
raw = best(["igzip", "-dc", gz, labels])
if red is None or raw is None:
    print(f"npz {dt}: reduce or igzip failed")
else:
    r = red[1] / raw[1]
    print(f"npz {dt:7s} reduce --threads 2 CPU {red[1]:.2f} s (wall {red[0]:.2f}) | raw inflate (igzip -dc) "
          f"CPU {raw[1]:.2f} s (wall {raw[0]:.2f}) | ratio {r:.2f}x CPU | target <= 1.3x | "
          f"{'met' if r <= 1.3 else 'NOT met'}")
EOF
    done
fi
echo "numbers: ${cmp_line:-not compared}"
echo "gzip -dc: one at a time $(secs "$t_gz1") s, two at a time $(secs "$t_gz2") s; igzip -dc one at a time $([ "$t_ig1" = NA ] && echo n/a || secs "$t_ig1") s, two at a time $([ "$t_ig2" = NA ] && echo n/a || secs "$t_ig2") s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
