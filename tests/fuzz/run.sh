#!/usr/bin/env bash
# Builds the loader fuzzer with clang (libFuzzer + ASan + UBSan) into build-fuzz/ and runs it
# for SECONDS (default 60) over a scratch copy of the committed seed corpus.
#   tests/fuzz/run.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-60}
out=build-fuzz
mkdir -p "$out/corpus"
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -std=c11
       -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Iinclude -Isrc -pthread"
# shellcheck disable=SC2086
clang $flags -o "$out/fuzz_load" tests/fuzz/fuzz_load.c src/engine/load/*.c \
    src/engine/dataset.c src/engine/classes.c src/engine/error.c -lcsv -lz -lm
cp -n tests/fuzz/corpus/* "$out/corpus/" 2>/dev/null || true
# libFuzzer's progress goes to a log (thousands of lines); a finding prints the log's tail and
# fails; a clean run prints the final statistics.
log=$out/fuzz.log
if "$out/fuzz_load" -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=1024 \
    -print_final_stats=1 "$out/corpus" tests/fuzz/corpus >"$log" 2>&1; then
    grep -E '^(Done|stat::number_of_executed_units|stat::new_units_added|stat::peak_rss_mb)' "$log"
    echo "fuzz: no crash, leak or sanitizer report in ${secs} s"
else
    tail -60 "$log"
    echo "fuzz: FAILED (full log: $log; crashing input saved as crash-* in the current directory)"
    exit 1
fi
