#!/usr/bin/env bash
# Runs the libFuzzer targets that `make fuzz` built in build-fuzz/fuzz/ (ASan + UBSan), splitting
# SECONDS (default 60) evenly between TARGETs (default: all of them). Each target grows its own
# scratch corpus build-fuzz/corpus/NAME from the committed seeds tests/fuzz/corpus/SEEDS.
#   tests/fuzz/run.sh [SECONDS [TARGET...]]       e.g. tests/fuzz/run.sh 3600 fuzz_select
# Prints one line per target (runs, runs per second, new units) and fails on the first finding,
# printing the log's tail; the crashing input is saved as build-fuzz/crash-*.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-60}
shift || true
out=build-fuzz
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_load fuzz_load_mt fuzz_select fuzz_check fuzz_vol fuzz_nifti fuzz_manifest fuzz_stats fuzz_follow)
per=$(( secs / ${#targets[@]} )); [ "$per" -ge 1 ] || per=1

# ASan keeps freed memory in a 256 MB quarantine by default, so every input allocates fresh
# pages (page faults, shadow poisoning: half the time per input). 16 MB still holds everything
# one input frees, which is what use-after-free detection needs here. Options given in
# ASAN_OPTIONS come later and win.
export ASAN_OPTIONS="quarantine_size_mb=16${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

# target -> seeds directory, dictionary, largest input
declare -A seeds=([fuzz_load]=load [fuzz_load_mt]=load [fuzz_select]=select [fuzz_check]=check [fuzz_vol]=vol [fuzz_nifti]=nifti [fuzz_manifest]=manifest [fuzz_stats]=stats)
declare -A max_len=([fuzz_load]=4096 [fuzz_load_mt]=16384 [fuzz_select]=512 [fuzz_check]=256 [fuzz_vol]=4096 [fuzz_nifti]=4096 [fuzz_manifest]=2048 [fuzz_stats]=8192 [fuzz_follow]=1024)

for t in "${targets[@]}"; do
    bin=$out/fuzz/$t
    [ -x "$bin" ] || { echo "fuzz: $bin not built (run make fuzz)"; exit 2; }
    s=${seeds[$t]:-${t#fuzz_}}
    mkdir -p "$out/corpus/$t"
    log=$out/$t.log
    # -timeout: a liveness limit for one input (a hang), never a speed target
    if "$bin" -max_total_time="$per" -max_len="${max_len[$t]:-4096}" -timeout=30 \
        -rss_limit_mb=1024 -print_final_stats=1 -dict="tests/fuzz/$s.dict" \
        -artifact_prefix="$out/" "$out/corpus/$t" "tests/fuzz/corpus/$s" >"$log" 2>&1; then
        awk -v t="$t" '
            /^stat::number_of_executed_units:/ { runs = $2 }
            /^stat::new_units_added:/ { added = $2 }
            /^Done [0-9]+ runs in [0-9]+ second/ { secs = $5 }
            END { printf "fuzz: %-13s %9d runs in %3d s (%d/s), %d new units\n",
                         t, runs, secs, secs ? runs / secs : runs, added }' "$log"
    else
        tail -60 "$log"
        echo "fuzz: $t FAILED (full log: $log; the input is saved as $out/crash-* or leak-*)"
        exit 1
    fi
done
echo "fuzz: no crash, leak, sanitizer report or broken invariant in ${secs} s"
