#!/usr/bin/env bash
# `calscope reduce` against an independent reduction in numpy + nibabel (bench/reference_seg.py:
# np.floor bins corrected on the exact edges, np.bincount sums) on volumes from
# tools/gen/make_volumes.py: every count equal, every sum within 1e-9 relative — NIfTI and npz
# (float32 and float16), label maps with scl_slope/scl_inter, 2 threads.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PY=/usr/bin/python3
LIVE=300

# check NAME MANIFEST [REDUCE FLAGS...]
check() {
    local name=$1 man=$2; shift 2
    if ! timeout "$LIVE" "$CALSCOPE" reduce -o "$TMP/x.stats" --label-values 0,1,2,4 "$@" "$man" 2>"$TMP/err"; then
        not_ok "$name" "calscope reduce failed: $(head -c 400 "$TMP/err")"; return
    fi
    run timeout "$LIVE" $PY bench/reference_seg.py "$man" --label-values 0,1,2,4 --compare "$TMP/x.stats"
    expect_match "$name" $'^compare\tok\t' "$OUT"
}

check "samples/seg/softmax NIfTI: reduce == numpy+nibabel" samples/seg/softmax/manifest.csv
check "samples/seg/softmax npz: reduce == numpy" samples/seg/softmax/manifest_npz.csv --threads 2
$PY tools/gen/make_volumes.py --quiet --out "$TMP/h" --cases 3 --shape 20,17,9 --npz-dtype float16 \
    --label-scale 1,-1 --label-dtype int16 --seed 5
check "float16 npz, scaled int16 labels: reduce == numpy" "$TMP/h/manifest_npz.csv" --sum-tol 0.01
check "float16-valued NIfTI, scaled int16 labels, 2 threads: reduce == numpy+nibabel" \
    "$TMP/h/manifest.csv" --threads 2 --sum-tol 0.01

# the check can fail: a statistics file of other volumes is not accepted
$PY tools/gen/make_volumes.py --quiet --out "$TMP/o" --cases 3 --shape 20,17,9 --seed 6
timeout "$LIVE" "$CALSCOPE" reduce -o "$TMP/o.stats" --label-values 0,1,2,4 "$TMP/o/manifest.csv" 2>/dev/null
run $PY bench/reference_seg.py "$TMP/h/manifest.csv" --label-values 0,1,2,4 --compare "$TMP/o.stats"
expect_match "other volumes' statistics: DIFF" $'^compare\tDIFF\t' "$OUT"

done_testing
