#!/usr/bin/env bash
# End-to-end tests of the synthetic volume generator tools/gen/make_volumes.py:
# NIfTI, npz and the per-voxel CSV put the same voxel in the same place, the labels follow the
# documented calibration function, label scaling and float16 are what they claim, reruns are
# byte-identical, and the committed samples/seg/ are what `make samples` writes.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PY=/usr/bin/python3
GEN="$PY tools/gen/make_volumes.py --quiet"
CHECK=pycheck
# pycheck WHAT ARGS...: the python checks print ok / not ok themselves; a failure counts here too
pycheck() { $PY tests/e2e/make_volumes_check.py "$@" || _fails=$((_fails + 1)); }

# expect_eq NAME WANT GOT
expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "want: $2" "got:  $3"; fi; }

if ! $PY -c 'import numpy, nibabel' 2>/dev/null; then
    echo "not ok - /usr/bin/python3 lacks numpy or nibabel (tools/install-deps.sh installs them)"
    exit 1
fi

$GEN --out "$TMP/a" --cases 3 --shape 13,11,7 --voxel-csv "$TMP/a/vox.csv"
$CHECK layout "$TMP/a" "$TMP/a/vox.csv"

# deterministic for a seed: a rerun writes the same bytes; case i does not depend on --cases
$GEN --out "$TMP/b" --cases 3 --shape 13,11,7 --voxel-csv "$TMP/b/vox.csv"
if diff -r "$TMP/a" "$TMP/b" >/dev/null; then ok "rerun with the same seed: identical files"
else not_ok "rerun with the same seed: identical files" "$(diff -rq "$TMP/a" "$TMP/b" | head -5)"; fi
$GEN --out "$TMP/j" --cases 3 --shape 13,11,7 --voxel-csv "$TMP/j/vox.csv" --jobs 2
if diff -r "$TMP/a" "$TMP/j" >/dev/null; then ok "--jobs 2: the same files"
else not_ok "--jobs 2: the same files" "$(diff -rq "$TMP/a" "$TMP/j" | head -5)"; fi
$GEN --out "$TMP/c" --cases 1 --shape 13,11,7
if cmp -s "$TMP/a/npz/case000.npz" "$TMP/c/npz/case000.npz"; then ok "case000 is the same with --cases 1"
else not_ok "case000 is the same with --cases 1"; fi
$GEN --out "$TMP/d" --cases 1 --shape 13,11,7 --seed 1
if cmp -s "$TMP/a/npz/case000.npz" "$TMP/d/npz/case000.npz"; then not_ok "another seed, other data"
else ok "another seed, other data"; fi

# the truth: labels are drawn from the known calibration function, softmax and regions
$GEN --out "$TMP/t" --cases 4 --shape 40,36,30 --format nifti --temperature 0.5:0.8
$CHECK truth "$TMP/t"
$GEN --out "$TMP/r" --cases 4 --shape 40,36,30 --format nifti --regions --temperature 0.6
$CHECK truth "$TMP/r"
run $PY -c "import json; m=json.load(open('$TMP/r/meta.json')); print(m['calscope_flags'], m['class_names'])"
expect_eq "regions: meta.json gives the calscope flags and region names" \
    "['--regions', 'WT=1,2,4;TC=1,4;ET=4'] ['WT', 'TC', 'ET']" "$OUT"

# regions voxel CSV: one binary file per region
$GEN --out "$TMP/rv" --cases 1 --shape 5,4,3 --regions --voxel-csv "$TMP/rv/vox.csv"
run cat "$TMP/rv/vox_WT.csv" "$TMP/rv/vox_TC.csv" "$TMP/rv/vox_ET.csv"
expect_eq "regions voxel CSVs: header case,label,p, 60 voxels each" "3 183" \
    "$(grep -c '^case,label,p$' <<<"$OUT") $(wc -l <<<"$OUT")"

# label maps with scl_slope / scl_inter, float16 npz
$GEN --out "$TMP/s" --cases 1 --shape 9,8,7 --label-scale 1,-1 --label-dtype int16
$CHECK scale "$TMP/s" 1 -1
$GEN --out "$TMP/h" --cases 2 --shape 9,8,7 --npz-dtype float16
$CHECK f16 "$TMP/h"

# refusals
expect_rc "--label-scale that cannot store a value: exit 2" 2 $GEN --out "$TMP/x" --label-scale 3,0
expect_match "--label-scale refusal says why" 'not \(integer \* SLOPE \+ INTER\)' "$ERR"
expect_rc "--regions with a value that is no label value: exit 2" 2 $GEN --out "$TMP/x" --regions 'A=3'
expect_match "--regions refusal names the value" 'value 3 of region A is not a label value' "$ERR"

# the committed samples are what `make seg-samples` writes (the flags in the Makefile), compared
# by content: another zlib may compress the same arrays to other bytes
mkdir -p "$TMP/samples"
if make -s --no-print-directory SEG_SAMPLES="$TMP/samples/seg" seg-samples >"$TMP/ms.log" 2>&1; then
    ok "make seg-samples runs"
    pycheck same samples/seg "$TMP/samples/seg"
else not_ok "make seg-samples runs" "$(cat "$TMP/ms.log")"; fi

done_testing
