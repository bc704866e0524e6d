#!/usr/bin/env bash
# `make profile`: where the time of `calscope report --format json` goes on the bench file
# (1,000,000 x 10, %.12g, generated once as bench/run.sh does): perf stat (task clock, page
# faults) and perf record -g, then the top entries of `perf report --stdio`. Needs perf
# (Debian linux-perf, in `make deps`); the sampling event is cpu-clock, which works where the
# hardware counters are not available (virtual machines). A measurement, never a failure.
#
#   bench/profile.sh [BUILD_DIR]     (make profile passes $(BUILD))
# Environment: PROFILE_DATA (another file to profile), PROFILE_TOP (entries shown, default 25).
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
DATA_DIR=${BENCH_DATA_DIR:-$BUILD/bench}
DATA=${PROFILE_DATA:-$DATA_DIR/preds_1000000x10_g12.csv}
TOP=${PROFILE_TOP:-25}
mkdir -p "$DATA_DIR"
if ! command -v perf > /dev/null; then echo "profile: perf not found (make deps installs linux-perf)"; exit 0; fi
if [ ! -s "$DATA" ]; then
    if [ ! -x "$BUILD/gen_data" ]; then echo "profile: $BUILD/gen_data missing"; exit 0; fi
    echo "profile: generating $DATA (once)"
    "$BUILD/gen_data" 1000000 10 20261121 12 g > "$DATA.tmp" && mv "$DATA.tmp" "$DATA"
fi
echo "profile: $BUILD/calscope report --format json $DATA; load average $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$DATA" > /dev/null     # from page cache, as the bench measures
perf stat -e task-clock,page-faults,context-switches -r 3 -- "$BUILD/calscope" report --format json "$DATA" 2>&1 >/dev/null |
    grep -E "task-clock|page-faults|elapsed"
PD=$DATA_DIR/perf.data
perf record -q -e cpu-clock -F 4000 -g -o "$PD" -- "$BUILD/calscope" report --format json "$DATA" > /dev/null 2>&1 || {
    echo "profile: perf record failed (perf_event_paranoid?)"; exit 0; }
echo "top $TOP entries by self time (perf report --stdio --no-children --sort dso,symbol):"
perf report -i "$PD" --stdio --no-children --sort dso,symbol 2>/dev/null | grep -E '^ +[0-9]+\.[0-9]+%' |
    sed -E 's/ +- +- *$//' | head -n "$TOP"
if [ -x "$BUILD/bench_engine" ]; then
    echo "the loader alone (cs_load_file in bench_engine, best of 3):"
    "$BUILD/bench_engine" -r 3 -c load "$DATA" | grep '^load'
    perf record -q -e cpu-clock -F 4000 -o "$PD.load" -- "$BUILD/bench_engine" -r 3 -c load "$DATA" > /dev/null 2>&1 &&
        perf report -i "$PD.load" --stdio --no-children --sort symbol 2>/dev/null | grep -E '^ +[0-9]+\.[0-9]+%' |
        sed -E 's/ +- +- *$//' | head -n 12
fi
exit 0
