#!/usr/bin/env bash
# `make bench`: times the calscope engine (bench/bench_engine.c) and `calscope report` on a
# 1,000,000 x 10 prediction CSV, then the same work in Python (bench/reference_bench.py: pandas,
# numpy) in the same run, and prints the table "case | calscope | python reference | ratio |
# target | met?". A benchmark, not a test: the exit status is 0 whatever the timings.
#
#   bench/run.sh [BUILD_DIR]      (default build; make bench passes $(BUILD))
# Environment: BENCH_DATA_DIR (default BUILD_DIR/bench), BENCH_ROWS (default 1000000),
#              BENCH_REPEATS (default 5), BENCH_LOAD_REPEATS (pandas loads, default 2),
#              BENCH_DIGITS (significant digits of the probabilities, default 12) and
#              BENCH_FORMAT (g: printf %.12g, 170 MB; f: plain decimal),
#              BENCH_COMPARE (1 = the two-file --compare case, 0 skips it),
#              BENCH_GZIP (1 = report of the gzip'd file against igzip -dc + the plain report),
#              BENCH_WIDE_CSV (1 = the ImageNet-sized 50,000 x 1000 %.12g CSV, about 0.9 GB,
#              generated once; 0 skips it).
#              BENCH_PY_HEAVY_REPEATS, BENCH_PY_CURVE_REPEATS, BENCH_PY_TOPK_BUDGET: see
#              bench/reference_heavy.py (numpy side of the 50,000-row and 50,000 x 1000 cases).
# The data file is generated once by BUILD_DIR/gen_data (deterministic) and reused. The heavy
# cases (top-k bars and classwise ECE on 50,000 x 1000, size and bins curves on the first 50,000
# rows, each curve with 1 and 2 threads) are in the same driver and table.
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
ROWS=${BENCH_ROWS:-1000000}
DATA_DIR=${BENCH_DATA_DIR:-$BUILD/bench}
DIGITS=${BENCH_DIGITS:-12}
FORMAT=${BENCH_FORMAT:-g}
if [ "$FORMAT" = g ]; then DATA=$DATA_DIR/preds_${ROWS}x10_g${DIGITS}.csv; else DATA=$DATA_DIR/preds_${ROWS}x10_d${DIGITS}.csv; fi
# ImageNet-sized, 50,000 x 1000 with 12 significant digits
WIDE_CSV=$DATA_DIR/wide_50000x1000_g12.csv
ENGINE_TSV=$DATA_DIR/engine.tsv
# The 50,000 x 1000 dataset of the top-k / classwise cases: generated in memory by bench_engine,
# handed to the Python side as raw binary (400 MB) and deleted at the end.
WIDE=$DATA_DIR/wide_50000x1000.raw
REPEATS=${BENCH_REPEATS:-5}
mkdir -p "$DATA_DIR"

if [ ! -s "$DATA" ]; then
    if [ ! -x "$BUILD/gen_data" ]; then echo "bench: $BUILD/gen_data missing (make BUILD=$BUILD $BUILD/gen_data)"; exit 0; fi
    echo "bench: generating $DATA ($ROWS x 10, $DIGITS digits, once)"
    "$BUILD/gen_data" "$ROWS" 10 20261121 "$DIGITS" "$FORMAT" > "$DATA.tmp" && mv "$DATA.tmp" "$DATA"
fi
if [ "${BENCH_WIDE_CSV:-1}" = 1 ] && [ ! -s "$WIDE_CSV" ] && [ -x "$BUILD/gen_data" ]; then
    echo "bench: generating $WIDE_CSV (50,000 x 1000, %.12g, once; about a minute)"
    "$BUILD/gen_data" 50000 1000 20261125 12 g > "$WIDE_CSV.tmp" && mv "$WIDE_CSV.tmp" "$WIDE_CSV"
fi

: > "$ENGINE_TSV"
if [ -x "$BUILD/bench_engine" ]; then
    echo "bench: engine driver ($BUILD/bench_engine, best of $REPEATS)"
    "$BUILD/bench_engine" -r "$REPEATS" -w "$WIDE" "$DATA" > "$ENGINE_TSV" || echo "bench: bench_engine exited with status $?"
else
    echo "bench: $BUILD/bench_engine missing; engine figures will be n/a"
fi

# calscope report end to end (load + every default metric + JSON), best of 3.
# best_report FILE RUNS NAME: the best wall time (ns) of RUNS `calscope report --format json FILE`
# in $best ("" when one failed; its status in $rc, its stderr in $DATA_DIR/NAME.err)
best_report() {
    best=""
    local t0 t1 dt
    for _ in $(seq "$2"); do
        t0=$(date +%s%N)
        "$BUILD/calscope" report --format json "$1" > "$DATA_DIR/$3.json" 2> "$DATA_DIR/$3.err"; rc=$?
        t1=$(date +%s%N)
        if [ "$rc" -ne 0 ]; then best=""; break; fi
        dt=$(( t1 - t0 ))
        if [ -z "$best" ] || [ "$dt" -lt "$best" ]; then best=$dt; fi
    done
}
if [ -x "$BUILD/calscope" ]; then
    best_report "$DATA" 3 cli
    if [ -n "$best" ]; then
        printf 'cli\t%s\t%s\tcalscope report --format json, wall clock, best of 3\n' \
            "$(awk -v n="$best" 'BEGIN{printf "%.6f", n/1e9}')" "$(awk -v n="$best" 'BEGIN{printf "%.6f", n/1e9}')" >> "$ENGINE_TSV"
    else
        printf 'cli\tNA\tNA\tcalscope report failed (exit %s): %s\n' "$rc" "$(head -c 300 "$DATA_DIR/cli.err" | tr '\n' ' ')" >> "$ENGINE_TSV"
    fi
fi

# the same end-to-end time against pandas.read_csv alone (target >= 10x), and the
# report's peak RSS (/usr/bin/time, KiB -> MB of 10^6 bytes; target 1.2 x the 8-byte doubles
# + 32 MB, printed by reference_bench.py as row "cli_rss_mb")
if [ -n "${best:-}" ]; then
    printf 'cli_vs_load\t%s\t%s\tcalscope report --format json (best of 3) against pandas.read_csv alone\n' \
        "$(awk -v n="$best" 'BEGIN{printf "%.6f", n/1e9}')" "$(awk -v n="$best" 'BEGIN{printf "%.6f", n/1e9}')" >> "$ENGINE_TSV"
fi
if [ -x "$BUILD/calscope" ] && [ -x /usr/bin/time ]; then
    kb=$(/usr/bin/time -f '%M' "$BUILD/calscope" report --format json "$DATA" 2>&1 >/dev/null | tail -1)
    case "$kb" in
        ''|*[!0-9]*) printf 'cli_rss_mb\tNA\tNA\tpeak RSS not measured (%s)\n' "$kb" >> "$ENGINE_TSV" ;;
        *) mb=$(awk -v k="$kb" 'BEGIN{printf "%.1f", k*1024/1e6}')
           printf 'cli_rss_mb\t%s\t%s\tpeak RSS of calscope report --format json (/usr/bin/time %%M = %s KiB)\n' "$mb" "$mb" "$kb" >> "$ENGINE_TSV" ;;
    esac
fi

# the same two on the 50,000 x 1000 CSV: cs_load_file alone (best of 3, in bench_engine) and
# calscope report end to end (best of 2); rows load_wide and cli_wide
WIDE_ARGS=()
if [ "${BENCH_WIDE_CSV:-1}" = 1 ] && [ -s "$WIDE_CSV" ]; then
    WIDE_ARGS=(--wide-csv "$WIDE_CSV")
    if [ -x "$BUILD/bench_engine" ]; then
        "$BUILD/bench_engine" -r 3 -c load "$WIDE_CSV" | sed -n 's/^load\t/load_wide\t/p' >> "$ENGINE_TSV"
    fi
    if [ -x "$BUILD/calscope" ]; then
        best_report "$WIDE_CSV" 2 cli_wide
        if [ -n "$best" ]; then
            s=$(awk -v n="$best" 'BEGIN{printf "%.6f", n/1e9}')
            printf 'cli_wide\t%s\t%s\tcalscope report --format json, wall clock, best of 2\n' "$s" "$s" >> "$ENGINE_TSV"
        else
            printf 'cli_wide\tNA\tNA\tcalscope report failed (exit %s): %s\n' "$rc" "$(head -c 300 "$DATA_DIR/cli_wide.err" | tr '\n' ' ')" >> "$ENGINE_TSV"
        fi
    fi
fi

# The two-file comparison at 1M rows with default settings (`report --compare A B`: paired
# bootstrap of every metric, 1000 replicates, and the methods table's intervals), beside one
# file's report: printed as a ratio, target <= 40. B is A temperature-scaled (T = 1.5, the
# same labels and rows, so the pairs are by row), made once by awk.
DATA_B=${DATA%.csv}_t15.csv
if [ -x "$BUILD/calscope" ] && [ "${BENCH_COMPARE:-1}" = 1 ]; then
    if [ ! -s "$DATA_B" ]; then
        echo "bench: generating $DATA_B (temperature 1.5 of $DATA, once)"
        awk -F, -v OFS=, 'NR == 1 { print; next }
            { s = 0; for (i = 2; i <= NF; i++) { q[i] = exp(log($i + 1e-300) / 1.5); s += q[i] }
              out = $1; for (i = 2; i <= NF; i++) out = out "," sprintf("%.12g", q[i] / s); print out }' \
            "$DATA" > "$DATA_B.tmp" && mv "$DATA_B.tmp" "$DATA_B"
    fi
    echo "bench: report --compare of two ${ROWS}-row files (once); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    t0=$(date +%s%N)
    "$BUILD/calscope" report --format json --compare "$DATA" "$DATA_B" > "$DATA_DIR/compare.json" 2> "$DATA_DIR/compare.err"; crc=$?
    t1=$(date +%s%N)
    best_report "$DATA" 1 cli_one
    if [ "$crc" -eq 0 ] && [ -n "$best" ]; then
        awk -v c=$(( t1 - t0 )) -v o="$best" 'BEGIN {
            r = c / o
            printf "compare  two-file report --compare %.2f s | one file report %.2f s | ratio %.1f | target <= 40 | %s\n",
                   c / 1e9, o / 1e9, r, r <= 40 ? "met" : "NOT met" }'
    else
        echo "compare  report --compare failed (exit $crc): $(head -c 300 "$DATA_DIR/compare.err" | tr '\n' ' ')"
    fi
fi

# A gzip'd prediction file: `calscope report preds.csv.gz` (ISA-L inflates it) against ISA-L's
# own `igzip -dc` of it plus the plain file's report, best of 3 each; target <= 1.3x. The .gz is
# made once with gzip -6 (gzip's default).
if [ -x "$BUILD/calscope" ] && [ "${BENCH_GZIP:-1}" = 1 ] && command -v igzip >/dev/null; then
    DATA_GZ=$DATA.gz
    if [ ! -s "$DATA_GZ" ]; then
        echo "bench: generating $DATA_GZ (gzip -6 of $DATA, once)"
        gzip -6 -n -c "$DATA" > "$DATA_GZ.tmp" && mv "$DATA_GZ.tmp" "$DATA_GZ"
    fi
    echo "bench: report of a gzip'd file; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    best_report "$DATA_GZ" 3 cli_gz
    t_gz=$best
    best_report "$DATA" 3 cli_plain
    t_plain=$best
    t_ig=""
    for _ in 1 2 3; do
        t0=$(date +%s%N); igzip -dc "$DATA_GZ" > /dev/null; t1=$(date +%s%N)
        if [ -z "$t_ig" ] || [ $(( t1 - t0 )) -lt "$t_ig" ]; then t_ig=$(( t1 - t0 )); fi
    done
    if [ -n "$t_gz" ] && [ -n "$t_plain" ]; then
        awk -v g="$t_gz" -v i="$t_ig" -v p="$t_plain" 'BEGIN {
            r = g / (i + p)
            printf "gzip     report preds.csv.gz %.3f s | igzip -dc %.3f s + plain report %.3f s | ratio %.2f | target <= 1.3 | %s\n",
                   g / 1e9, i / 1e9, p / 1e9, r, r <= 1.3 ? "met" : "NOT met" }'
    else
        echo "gzip     report of $DATA_GZ failed: $(head -c 300 "$DATA_DIR/cli_gz.err" | tr '\n' ' ')"
    fi
fi

echo "bench: python reference (/usr/bin/python3: pandas, numpy); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 bench/reference_bench.py --c-results "$ENGINE_TSV" --repeats "$REPEATS" --wide "$WIDE" "${WIDE_ARGS[@]}" "$DATA" || true
rm -f "$WIDE"
# the screen first: a recompute beside a long curve, and shutdown under load (rows "backend ...")
if [ -x "$BUILD/bench_backend" ]; then "$BUILD/bench_backend" "$DATA" || true; fi
# dashboard key-to-draw latency and peak RSS under load (rows "tui ...")
BENCH_DATA="$DATA" bash bench/tui_latency.sh "$BUILD" || true
# Costs that grow with M alone: the largest M (--bins 1000; above it is refused) on a small TTA
# file and a case file, wall clock and peak RSS. Before the bound, --bins 1000000 on a small TTA
# file took 79.5 s and 2.4 GB.
if [ -x "$BUILD/calscope" ] && [ -x /usr/bin/time ]; then
    echo "bench: largest M on small files (seconds, peak RSS)"
    for f in samples/digits_tta.csv samples/seg_cases.csv; do
        /usr/bin/time -f "  report --bins 1000 $f: %e s, %M KB" "$BUILD/calscope" report --bins 1000 "$f" >/dev/null || true
    done
fi
# input bounds: 1 GiB of NUL bytes as a header or a field, plain and gzipped (rows "NUL ...")
BENCH_DATA_DIR="$DATA_DIR" bash bench/bounds.sh "$BUILD" || true
exit 0
