#!/usr/bin/env bash
# Runs every test of every build variant that exists, never stopping at the first failure,
# and ends with one line "N passed, N failed" (CI reads it). Exit status 1 when any failed.
#   unit tests:  build*/tests/test_*   (cmocka; a crash counts as one failure)
#   end-to-end:  tests/e2e/test_*.sh   run against build/calscope and build-asan/calscope
set -u
cd "$(dirname "$0")/.."
pass=0; fail=0; failed_names=()
log_dir=$(mktemp -d); trap 'rm -rf "$log_dir"' EXIT

count_cmocka() { # $1 log, $2 name, $3 exit status
    local p f
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$1" | tail -1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$1" | tail -1)
    p=${p:-0}; f=${f:-0}
    if [ "$3" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # crashed or sanitizer abort
    pass=$((pass + p)); fail=$((fail + f))
    if [ "$f" -ne 0 ]; then failed_names+=("$2"); sed 's/^/    /' "$1" | grep -v '^\s*\[ *\(RUN\|OK\) ' | tail -40; fi
    printf '  %-44s %4d passed, %d failed\n' "$2" "$p" "$f"
}

# Per-binary and per-script limits only catch hangs (no test depends on elapsed time; the suite
# must pass beside `stress --cpu 2`): far above the slowest run under TSan on a loaded machine.
UNIT_LIVENESS=1800 E2E_LIVENESS=1800

for dir in build build-asan build-tsan; do
    [ -d "$dir/tests" ] || continue
    echo "== unit tests ($dir)"
    for t in "$dir"/tests/test_*; do
        [ -x "$t" ] || continue
        log="$log_dir/$(basename "$t").log"
        CALSCOPE_SAMPLES=samples timeout "$UNIT_LIVENESS" "$t" >"$log" 2>&1; rc=$?
        count_cmocka "$log" "$dir/$(basename "$t")" "$rc"
    done
done

for exe in build/calscope build-asan/calscope; do
    [ -x "$exe" ] || continue
    echo "== end-to-end tests ($exe)"
    for t in tests/e2e/test_*.sh; do
        [ -f "$t" ] || continue
        log="$log_dir/$(basename "$t").e2e.log"
        CALSCOPE="$exe" timeout "$E2E_LIVENESS" bash "$t" >"$log" 2>&1; rc=$?
        p=$(grep -c '^ok ' "$log"); f=$(grep -c '^not ok ' "$log")
        if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
        pass=$((pass + p)); fail=$((fail + f))
        if [ "$f" -ne 0 ]; then failed_names+=("$exe $t"); grep -A8 '^not ok ' "$log" | sed 's/^/    /' | head -60; fi
        printf '  %-44s %4d passed, %d failed\n' "$(basename "$t")" "$p" "$f"
    done
done

if [ ${#failed_names[@]} -gt 0 ]; then printf 'FAILED: %s\n' "${failed_names[@]}"; fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
