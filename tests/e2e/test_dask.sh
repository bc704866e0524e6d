#!/usr/bin/env bash
# End-to-end tests of contrib/dask_reduce.py: a LocalCluster of 2 workers reduces
# shards of a manifest with `calscope reduce` and merges them; the result is byte-identical to the
# single-machine `calscope reduce` of the same manifest (softmax NIfTI, npz, regions). A shard
# that fails is reported with its cases, worker and calscope's own message, and nothing is merged.
# Skipped (one SKIP line) only when python3-distributed is missing.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PY=/usr/bin/python3
# liveness only: a LocalCluster starts in ~1 s; 300 s catches a hang, never a slow machine
LIVE=300
CALSCOPE_ABS=$(cd "$(dirname "$CALSCOPE")" && pwd)/$(basename "$CALSCOPE")
DASK() { timeout "$LIVE" $PY contrib/dask_reduce.py --local 2 --calscope "$CALSCOPE_ABS" "$@"; }

if ! $PY -c 'import dask, distributed' 2>/dev/null; then
    ok "dask tests skipped: python3-dask / python3-distributed missing (tools/install-deps.sh) # SKIP"
    done_testing
fi

# same_file NAME A B
same_file() {
    if [ -s "$2" ] && cmp -s "$2" "$3"; then ok "$1"
    else not_ok "$1" "$(cmp "$2" "$3" 2>&1 | head -2)" "sizes: $(wc -c <"$2" 2>&1) $(wc -c <"$3" 2>&1)"; fi
}

$PY tools/gen/make_volumes.py --quiet --out "$TMP/s" --cases 5 --shape 12,10,8 --format both --temperature 0.5:0.9
$PY tools/gen/make_volumes.py --quiet --out "$TMP/r" --cases 3 --shape 12,10,8 --format npz --regions

timeout "$LIVE" "$CALSCOPE" reduce -o "$TMP/one.stats" --label-values 0,1,2,4 "$TMP/s/manifest.csv"
run DASK -o "$TMP/dask.stats" --label-values 0,1,2,4 "$TMP/s/manifest.csv"
expect_rc_is() { if [ "$RC" -eq "$2" ]; then ok "$1"; else not_ok "$1" "exit $RC, want $2" "stderr: ${ERR:0:600}"; fi; }
expect_rc_is "NIfTI manifest on 2 workers: exit 0" 0
same_file "NIfTI manifest: merged shards == single-machine reduce (cmp)" "$TMP/one.stats" "$TMP/dask.stats"
expect_match "progress names each shard and its worker" 'shard [0-9]/4 \(case00[0-9]\.\.case00[0-9]\) on .*: done' "$ERR"
left=$(find "$TMP/s" -maxdepth 1 -name '.calscope-shard*' | wc -l)
expect_match "no shard manifest left beside the manifest" '^0$' "$left"

timeout "$LIVE" "$CALSCOPE" reduce -o "$TMP/one_npz.stats" --label-values 0,1,2,4 "$TMP/s/manifest_npz.csv"
run DASK -o "$TMP/dask_npz.stats" --shards 5 --label-values 0,1,2,4 "$TMP/s/manifest_npz.csv"
expect_rc_is "npz manifest, one case per shard: exit 0" 0
same_file "npz manifest, 5 shards: merged == single-machine (cmp)" "$TMP/one_npz.stats" "$TMP/dask_npz.stats"

REG='WT=1,2,4;TC=1,4;ET=4'
timeout "$LIVE" "$CALSCOPE" reduce -o "$TMP/one_reg.stats" --regions "$REG" "$TMP/r/manifest.csv"
run DASK -o "$TMP/dask_reg.stats" --regions "$REG" "$TMP/r/manifest.csv"
expect_rc_is "regions manifest: exit 0" 0
same_file "regions: merged == single-machine (cmp)" "$TMP/one_reg.stats" "$TMP/dask_reg.stats"

# --data-root: the manifest read here, the data where the workers see it (here: elsewhere)
mkdir -p "$TMP/client" && cp "$TMP/s/manifest.csv" "$TMP/client/"
run DASK -o "$TMP/root.stats" --data-root "$TMP/s" --label-values 0,1,2,4 "$TMP/client/manifest.csv"
expect_rc_is "--data-root: exit 0" 0
same_file "--data-root: merged == single-machine (cmp)" "$TMP/one.stats" "$TMP/root.stats"

# a failing shard: case002's probabilities truncated -> exit 1, its message, nothing merged
head -c 2000 "$TMP/s/nifti/case002.nii.gz" >"$TMP/t" && mv "$TMP/t" "$TMP/s/nifti/case002.nii.gz"
rm -f "$TMP/bad.stats"
run DASK -o "$TMP/bad.stats" --label-values 0,1,2,4 "$TMP/s/manifest.csv"
expect_rc_is "a truncated case: exit 1" 1
expect_match "the failing shard is named with its cases and calscope's exit status" \
    "shard [0-9] \(cases [^)]*\) on .*: $CALSCOPE_ABS reduce exited with status [1-9]" "$ERR"
expect_match "calscope's own message (naming the file) is shown" 'nifti/case002\.nii\.gz' "$ERR"
expect_match "nothing merged" '1 of 4 shards failed; nothing merged' "$ERR"
if [ -e "$TMP/bad.stats" ]; then not_ok "no output file after a failure"; else ok "no output file after a failure"; fi

# usage errors
run timeout "$LIVE" $PY contrib/dask_reduce.py -o "$TMP/x" "$TMP/s/manifest.csv"
expect_rc_is "neither --scheduler nor --local: exit 2" 2
expect_match "usage names the two" 'one of the arguments --scheduler --local is required' "$ERR"
printf 'probs,labels\na.nii.gz,b.nii.gz\n' >"$TMP/nocase.csv"
run DASK -o "$TMP/x" "$TMP/nocase.csv"
expect_rc_is "a manifest without a case column: exit 2" 2
expect_match "its message" "nocase.csv: not a manifest \(the header needs the columns case,probs,labels\)" "$ERR"

done_testing
