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

# Jobs run CALSCOPE_TEST_JOBS at a time (default: the core count), each into its own log; the
# results are then read back in a fixed order, so the output does not depend on the timing.
# Running two at once is what `stress --cpu 2` beside the suite does anyway: no test may depend on
# having the machine to itself.
JOBS=${CALSCOPE_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$JOBS" -ge 1 ] 2>/dev/null || JOBS=1
jobs_list=()
for dir in build build-asan build-tsan; do
    [ -d "$dir/tests" ] || continue
    for t in "$dir"/tests/test_*; do
        [ -x "$t" ] && jobs_list+=("unit|$dir|$t")
    done
done
for exe in build/calscope build-asan/calscope; do
    [ -x "$exe" ] || continue
    for t in tests/e2e/test_*.sh; do
        [ -f "$t" ] && jobs_list+=("e2e|$exe|$t")
    done
done

log_of() { # job -> its log file
    local kind where t; IFS='|' read -r kind where t <<<"$1"
    echo "$log_dir/$kind-${where//\//_}-$(basename "$t").log"
}
run_job() {
    local kind where t log t0; IFS='|' read -r kind where t <<<"$1"; log=$(log_of "$1")
    t0=$(date +%s)
    if [ "$kind" = unit ]; then
        CALSCOPE_SAMPLES=samples timeout "$UNIT_LIVENESS" "$t" >"$log" 2>&1
    else
        CALSCOPE="$where" timeout "$E2E_LIVENESS" bash "$t" >"$log" 2>&1
    fi
    echo $? >"$log.rc"
    # wall and CPU (user + system of the job's processes, from `times`) seconds
    times >"$log.times"   # not in a pipe: a subshell would have no children of its own
    local cpu; cpu=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] } printf "%.0f", n }' "$log.times")
    echo "$(( $(date +%s) - t0 )) ${cpu:-?} $kind $where/$(basename "$t")" >"$log.secs"
}
# Reference outputs (Python tools) that the scripts compute once for both variants (lib.sh
# reference_output)
export CALSCOPE_REF_CACHE="$log_dir/refcache"
mkdir -p "$CALSCOPE_REF_CACHE"
# Started longest first, so that no long job is left running alone at the end: the end-to-end
# scripts (sanitized first: they take longest), then the unit tests (TSan, ASan, plain). The
# results are still printed in jobs_list's order.
launch=()
for want in "e2e|build-asan" "e2e|build/" "unit|build-tsan" "unit|build-asan" "unit|build|"; do
    for j in "${jobs_list[@]}"; do [[ "$j" == "$want"* ]] && launch+=("$j"); done
done
[ ${#launch[@]} -eq ${#jobs_list[@]} ] || launch=("${jobs_list[@]}")
running=0
for j in "${launch[@]}"; do
    run_job "$j" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
done
wait

header=""
for j in "${jobs_list[@]}"; do
    IFS='|' read -r kind where t <<<"$j"
    log=$(log_of "$j"); rc=$(cat "$log.rc" 2>/dev/null || echo 1)
    h="== unit tests ($where)"; [ "$kind" = e2e ] && h="== end-to-end tests ($where)"
    [ "$h" != "$header" ] && { echo "$h"; header=$h; }
    if [ "$kind" = unit ]; then
        count_cmocka "$log" "$where/$(basename "$t")" "$rc"
    else
        p=$(grep -c '^ok ' "$log"); f=$(grep -c '^not ok ' "$log")
        if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
        pass=$((pass + p)); fail=$((fail + f))
        if [ "$f" -ne 0 ]; then failed_names+=("$where $t"); grep -A8 '^not ok ' "$log" | sed 's/^/    /' | head -60; fi
        printf '  %-44s %4d passed, %d failed\n' "$(basename "$t")" "$p" "$f"
    fi
done

# Where the wall time went (information only: nothing is asserted on it).
echo "== slowest jobs (wall and CPU seconds, $JOBS at a time)"
cat "$log_dir"/*.secs 2>/dev/null | sort -rn | head -12 | sed 's/^/  /'
if [ ${#failed_names[@]} -gt 0 ]; then printf 'FAILED: %s\n' "${failed_names[@]}"; fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
