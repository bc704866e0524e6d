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
    src/engine/dataset.c src/engine/error.c -lcsv -lz -lm
cp -n tests/fuzz/corpus/* "$out/corpus/" 2>/dev/null || true
"$out/fuzz_load" -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=1024 \
    -print_final_stats=1 "$out/corpus" tests/fuzz/corpus
