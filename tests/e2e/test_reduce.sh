#!/usr/bin/env bash
# End-to-end tests of `calscope reduce` (docs/segmentation.md): tiny cases written by
# nibabel and numpy (NIfTI (X,Y,Z,C) float32, nnU-Net npz (C,z,y,x) float32 and float16, sigmoid
# regions), the statistics file checked against an independent numpy computation of every sum
# (tests/e2e/reduce_cases.py: counts and Σy exactly, Σp and the scores to 1e-12), the metrics
# from those sums against `calscope report` on the voxels as a per-voxel CSV, merge of two
# shards = the whole (cmp), 1 and 2 threads identical, folders paired by stem, and every refusal
# with its message verbatim and exit status 3, leaving no output file behind.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PY=/usr/bin/python3
CASES=tests/e2e/reduce_cases.py
D=$TMP/cases
mkdir -p "$D"
$PY $CASES write "$D" || { not_ok "writing the cases with nibabel/numpy"; exit 1; }

expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "want: $2" "got:  $3"; fi; }
# numpy NAME STATS MANIFEST KIND F [REGIONS]
numpy_check() {
    local name=$1; shift
    local res; res=$($PY $CASES check "$@" 2>&1)
    expect_eq "$name" ok "$res"
}

# ---- the sums -----------------------------------------------------------------------------------
expect_rc "manifest of three cases (NIfTI, npz float32, npz float16): exit 0" 0 \
    "$CALSCOPE" reduce --label-values 0,1,2,4 -o "$TMP/all.csv" "$D/m.csv"
# stderr not a terminal: no progress line, only the closing summary (reduce_cases.py: three
# cases of 7x6x5 voxels; the time is whatever it was)
expect_match "no progress line when stderr is not a terminal, only the summary" \
    '^calscope: reduced 3 cases, 630 voxels in [0-9]+\.[0-9] s$' "$ERR"
numpy_check "every count, Σp, Σy, top-1 and score equals numpy's" "$TMP/all.csv" "$D/m.csv" softmax 300
run "$CALSCOPE" reduce --label-values 0,1,2,4 -o - "$D/m.csv"
if [ "$RC" = 0 ] && cmp -s "$TMP/out" "$TMP/all.csv"; then ok "-o - writes the same bytes to stdout"; else not_ok "-o - writes the same bytes to stdout" "rc $RC"; fi
expect_match "the header records F, the kind, the mapping and the inputs with their sizes" \
    '^fine,300$' "$(head -5 "$TMP/all.csv")"
expect_match "inputs as written in the manifest" "^case,0,a,210,a_prob.nii.gz,$(stat -c %s "$D/a_prob.nii.gz"),a.nii.gz," "$(cat "$TMP/all.csv")"

# the row engine on the same voxels written as a per-voxel CSV: the five numbers from the sums
$PY $CASES voxels "$D/m.csv" "$TMP/vox.csv"
from_sums=$($PY $CASES metrics "$TMP/all.csv" 15)
run "$CALSCOPE" report --format json "$TMP/vox.csv"
from_rows=$(printf '%s' "$OUT" | $PY $CASES report)
expect_eq "accuracy, top-1 ECE (M = 15 of F = 300), SCE, Brier, NLL from the sums = calscope report on the per-voxel CSV" \
    ok "$($PY $CASES same "$from_sums" "$from_rows")"

"$CALSCOPE" reduce --threads 1 --label-values 0,1,2,4 -o "$TMP/t1.csv" "$D/m.csv"
"$CALSCOPE" reduce --threads 2 --label-values 0,1,2,4 -o "$TMP/t2.csv" "$D/m.csv"
if cmp -s "$TMP/t1.csv" "$TMP/t2.csv" && cmp -s "$TMP/t1.csv" "$TMP/all.csv"; then ok "1 and 2 threads: identical files"; else not_ok "1 and 2 threads: identical files"; fi
"$CALSCOPE" reduce --threads 3 --memory 0 --label-values 0,1,2,4 -o "$TMP/m0.csv" "$D/m.csv"
if cmp -s "$TMP/t1.csv" "$TMP/m0.csv"; then ok "--memory 0 (one case at a time, each read by a helper thread): identical file"
else not_ok "--memory 0 (one case at a time, each read by a helper thread): identical file"; fi

expect_rc "--fine 7" 0 "$CALSCOPE" reduce --fine 7 --label-values 0,1,2,4 -o "$TMP/f7.csv" "$D/m.csv"
numpy_check "--fine 7: equals numpy's" "$TMP/f7.csv" "$D/m.csv" softmax 7

expect_rc "regions: exit 0" 0 "$CALSCOPE" reduce --regions 'WT=1,2,4;TC=1,4;ET=4' -o "$TMP/r.csv" "$D/mr.csv"
numpy_check "regions: one-vs-rest sums and scores equal numpy's, no top-1" "$TMP/r.csv" "$D/mr.csv" regions 300 'WT=1,2,4;TC=1,4;ET=4'

# ---- shards ---------------------------------------------------------------------------------------
"$CALSCOPE" reduce --label-values 0,1,2,4 -o "$TMP/s1.csv" "$D/m1.csv"
"$CALSCOPE" reduce --label-values 0,1,2,4 -o "$TMP/s2.csv.gz" "$D/m2.csv"
expect_rc "--merge of two shards (one gzip): exit 0" 0 "$CALSCOPE" reduce --merge -o "$TMP/merged.csv" "$TMP/s2.csv.gz" "$TMP/s1.csv"
expect_match "--merge: the closing summary" '^calscope: merged 2 files: 3 cases, 630 voxels in [0-9]+\.[0-9] s$' "$ERR"
if cmp -s "$TMP/merged.csv" "$TMP/all.csv"; then ok "merge of the shards = the whole, byte for byte"; else not_ok "merge of the shards = the whole, byte for byte"; fi
run "$CALSCOPE" reduce --merge -o "$TMP/twice.csv" "$TMP/s1.csv" "$TMP/s1.csv"
expect_eq "--merge of a case twice: exit 3" 3 "$RC"
expect_match "--merge of a case twice: named" "case 'a' is in both" "$ERR"
[ -e "$TMP/twice.csv" ] && not_ok "--merge refused: no output file" || ok "--merge refused: no output file"

# ---- a statistics file through standard input or a pipe reads as one (gzip'd or not) -------
"$CALSCOPE" report "$TMP/all.csv" | tail -n +2 >"$TMP/rep_file.txt"
run "$CALSCOPE" report - <"$TMP/s1.csv"
expect_eq "stats on stdin (a regular file): exit 0" 0 "$RC"
cat "$TMP/all.csv" | "$CALSCOPE" report - | tail -n +2 >"$TMP/rep_pipe.txt"
if cmp -s "$TMP/rep_file.txt" "$TMP/rep_pipe.txt"; then ok "stats through a pipe: the file's report"; else not_ok "stats through a pipe: the file's report"; fi
gzip -c "$TMP/all.csv" | "$CALSCOPE" report - | tail -n +2 >"$TMP/rep_gz.txt"
if cmp -s "$TMP/rep_file.txt" "$TMP/rep_gz.txt"; then ok "gzip'd stats through a pipe: the file's report"; else not_ok "gzip'd stats through a pipe: the file's report"; fi
run "$CALSCOPE" report --label-values 0,1,2,4 - <"$TMP/all.csv"
expect_eq "stats through a pipe: --label-values refused as for a file" \
    "calscope: -: --label-values applies when volumes are reduced; a statistics file is reduced already" "$ERR"
run sh -c "head -n 3 '$TMP/all.csv' | '$CALSCOPE' report -"
expect_eq "a cut statistics file through a pipe: exit 3" 3 "$RC"
expect_match "a cut statistics file through a pipe: the statistics reader's message" '^calscope: -:[0-9]+:1: ' "$ERR"

# ---- folders paired by stem --------------------------------------------------------------------
mkdir -p "$TMP/P" "$TMP/L"
cp "$D/a_prob.nii.gz" "$TMP/P/a_prob.nii.gz"; cp "$D/b.npz" "$TMP/P/b_prob.npz"; cp "$D/c.npz" "$TMP/P/c_prob.npz"
cp "$D/a.nii.gz" "$D/b.nii.gz" "$D/c.nii.gz" "$TMP/L/"
echo '{}' >"$TMP/L/dataset.json"
expect_rc "--probs DIR --labels DIR --prob-suffix _prob: exit 0" 0 \
    "$CALSCOPE" reduce --label-values 0,1,2,4 --probs "$TMP/P" --labels "$TMP/L" --prob-suffix _prob -o "$TMP/dirs.csv"
if diff <(grep -v '^case,' "$TMP/dirs.csv") <(grep -v '^case,' "$TMP/all.csv") >/dev/null; then
    ok "folders: the same sums as the manifest"; else not_ok "folders: the same sums as the manifest"; fi
expect_match "folders: inputs recorded as DIR/FILE" "^case,0,a,210,$TMP/P/a_prob.nii.gz," "$(cat "$TMP/dirs.csv")"
rm "$TMP/L/c.nii.gz"
run "$CALSCOPE" reduce --probs "$TMP/P" --labels "$TMP/L" --prob-suffix _prob
expect_eq "folders: a case without labels, exit 3" 3 "$RC"
expect_eq "folders: the message names both folders and the stem" \
    "calscope: case 'c': $TMP/P/c_prob.npz has no label file c.* in $TMP/L" "$ERR"

# ---- refusals: exit 3, both files named, no output left ----------------------------------------
# refuse NAME PROBS LABELS MESSAGE [FLAGS...]
refuse() {
    local name=$1 p=$2 l=$3 msg=$4; shift 4
    printf 'case,probs,labels\nx,%s,%s\n' "$p" "$l" >"$D/bad.csv"
    rm -f "$TMP/bad_out.csv"
    run "$CALSCOPE" reduce --label-values 0,1,2,4 "$@" -o "$TMP/bad_out.csv" "$D/bad.csv"
    if [ "$RC" = 3 ] && [ "$ERR" = "calscope: $msg" ]; then ok "$name"; else not_ok "$name" "exit $RC" "want: calscope: $msg" "got:  $ERR"; fi
    local left; left=$(ls -A "$TMP" | grep -c -e '^bad_out.csv$' -e '^\.calscope-tmp')
    expect_eq "$name: no output file, no temporary file" 0 "$left"
}
refuse "spatial shapes differ" shape.nii.gz a.nii.gz \
    "$D/shape.nii.gz and $D/a.nii.gz: spatial shapes differ: 7x6x4 (4 channels) vs 7x6x5 (fastest axis first)"
refuse "affines differ" affine.nii.gz a.nii.gz \
    "$D/affine.nii.gz and $D/a.nii.gz: affines differ by 2.5, more than --affine-tol 0.001 (resampled or reoriented?)"
expect_rc "--affine-tol 3 accepts them" 0 "$CALSCOPE" reduce --label-values 0,1,2,4 --affine-tol 3 -o "$TMP/aff.csv" "$D/bad.csv"
refuse "channel count against the mapping" three.nii.gz a.nii.gz \
    "$D/three.nii.gz: 3 channels, but --label-values 0,1,2,4 has 4 classes (labels: $D/a.nii.gz)"
refuse "a probability outside [0,1], by voxel and channel" high.nii.gz a.nii.gz \
    "$D/high.nii.gz: probability 1.5 outside [0,1] at voxel 2,3,4, channel 1 (labels: $D/a.nii.gz)"
refuse "softmax channels not summing to 1" off.nii.gz a.nii.gz \
    "$D/off.nii.gz: probabilities sum to 1.010000004, not 1 within 0.001 at voxel 3,2,1 (labels: $D/a.nii.gz)"
refuse "float16: the message says why and names --sum-tol" half.npz b.nii.gz \
    "$D/half.npz: probabilities sum to 1.0078125, not 1 within 0.001 at voxel 3,2,1; float16 rounds each value to ~5e-4 (up to 2.4e-4 off), so 4 channels may miss 1 by up to 0.00098: raise --sum-tol (labels: $D/b.nii.gz)"
expect_rc "--sum-tol 0.01 accepts the float16 case" 0 "$CALSCOPE" reduce --label-values 0,1,2,4 --sum-tol 0.01 -o "$TMP/h.csv" "$D/bad.csv"
refuse "a label value not in the mapping" a_prob.nii.gz lab3.nii.gz \
    "$D/lab3.nii.gz: label value 3 at voxel 4,1,2 is not in --label-values 0,1,2,4 (probabilities: $D/a_prob.nii.gz)"
refuse "a truncated .nii.gz: the reader's message and the other file" cut.nii.gz a.nii.gz \
    "$D/cut.nii.gz: truncated: 398 of 840 values (labels: $D/a.nii.gz)"
# headers that lie about sizes (tests/fixtures/vol, made by tools/gen/make_vol_fixtures.py): calscope's
# message alone on stderr (refuse compares all of it: no nifti_clib line above it), no crash
for f in n2_dim0_huge.nii n2_dim0_neg.nii.gz n1_dims_gz.nii.gz n2_voxoff_far.nii n1_dtype_unknown.nii; do
    cp "tests/fixtures/vol/$f" "$D/$f"
done
refuse "a NIfTI-2 dim[0] of 2^40 (overflowed nifti_clib's stack)" n2_dim0_huge.nii a.nii.gz \
    "$D/n2_dim0_huge.nii: NIfTI header: dim[0] = 1099511627776, must be 1..7 (labels: $D/a.nii.gz)"
refuse "a NIfTI-2 dim[0] of -5, gzip" n2_dim0_neg.nii.gz a.nii.gz \
    "$D/n2_dim0_neg.nii.gz: NIfTI header: dim[0] = -5, must be 1..7 (labels: $D/a.nii.gz)"
refuse "dims asking for more than a gzip file can hold" a_prob.nii.gz n1_dims_gz.nii.gz \
    "$D/n1_dims_gz.nii.gz: NIfTI header: the dims ask for 450000 values, 3600000 bytes from vox_offset 352, and 623 bytes of gzip hold at most 642936 (probabilities: $D/a_prob.nii.gz)"
refuse "vox_offset past the end of the file" n2_voxoff_far.nii a.nii.gz \
    "$D/n2_voxoff_far.nii: NIfTI header: vox_offset = 1000000 is beyond the end of the file (664 bytes) (labels: $D/a.nii.gz)"
refuse "a datatype code that is none" n1_dtype_unknown.nii a.nii.gz \
    "$D/n1_dtype_unknown.nii: unsupported NIfTI datatype code 77 (labels: $D/a.nii.gz)"
refuse "a NaN in an affine, named by its element" nanaff.nii.gz a.nii.gz \
    "$D/nanaff.nii.gz: affine[1][3] is nan, which --affine-tol cannot compare (labels: $D/a.nii.gz)"
refuse "a NaN qform offset with no sform (nifti_clib reads 0)" qnan.nii.gz a.nii.gz \
    "$D/qnan.nii.gz: affine[0][3] is nan, which --affine-tol cannot compare (labels: $D/a.nii.gz)"
refuse "an infinite qform quaternion with no sform: the rotation" a_prob.nii.gz qinf.nii.gz \
    "$D/qinf.nii.gz: affine[0][0] is inf, which --affine-tol cannot compare (probabilities: $D/a_prob.nii.gz)"
refuse "a Fortran-order npz member, named" fort.npz b.nii.gz \
    "$D/fort.npz[probabilities.npy]: Fortran order is not supported (write the array in C order, e.g. np.ascontiguousarray) (labels: $D/b.nii.gz)"
printf 'case,probs,labels\nx,fort.npz,b.nii.gz\n' >"$D/fort.csv"
run "$CALSCOPE" reduce -o "$TMP/fort_out.csv" "$D/fort.csv"
expect_eq "a Fortran-order npz member with no mapping given (the first case sets the channels)" \
    "3 calscope: $D/fort.npz[probabilities.npy]: Fortran order is not supported (write the array in C order, e.g. np.ascontiguousarray) (labels: $D/b.nii.gz)" "$RC $ERR"
# a flipped byte in deflate data that still inflates: the value it spoils is refused first, then
# the stream is read to its end, and its CRC names the corruption instead of the value (gzip
# NIfTI: below, in a case of many slabs)
refuse "a corrupt deflated npz member: the CRC, not the spoilt probability" flip.npz b.nii.gz \
    "$D/flip.npz[probabilities.npy]: bad CRC (corrupt archive) (labels: $D/b.nii.gz)"
head -c 300 "$D/b.npz" >"$D/cutz.npz"
refuse "a truncated .npz" cutz.npz b.nii.gz \
    "$D/cutz.npz: truncated or corrupt zip archive (no central directory) (labels: $D/b.nii.gz)"

# ---- -o naming an input: refused before anything is read or written ------------------------------
# out_is_input NAME OUT MESSAGE: exit 2, the message, and the input it names left as it was
out_is_input() {
    local name=$1 out=$2 msg=$3
    cp "$out" "$TMP/before.bin"
    run "$CALSCOPE" reduce --label-values 0,1,2,4 -o "$out" "$D/m.csv"
    expect_eq "$name: exit 2 and the message" "2 calscope: $msg" "$RC $ERR"
    if cmp -s "$out" "$TMP/before.bin"; then ok "$name: the input is unchanged"; else not_ok "$name: the input is unchanged"; fi
}
out_is_input "-o naming the manifest" "$D/m.csv" "$D/m.csv: -o names an input of the reduction (the manifest)"
out_is_input "-o naming a probability file through another path" "$D/../cases/b.npz" \
    "$D/../cases/b.npz: -o names an input of the reduction (probabilities of case 'b')"
out_is_input "-o naming a label map" "$D/c.nii.gz" "$D/c.nii.gz: -o names an input of the reduction (labels of case 'c')"
ln -sf "$D/a_prob.nii.gz" "$TMP/link.nii.gz"
run "$CALSCOPE" reduce --label-values 0,1,2,4 -o "$TMP/link.nii.gz" "$D/m.csv"
expect_eq "-o naming a probability file through a symbolic link (the same device and inode)" \
    "2 calscope: $TMP/link.nii.gz: -o names an input of the reduction (probabilities of case 'a')" "$RC $ERR"

# ---- a case larger than a slab, read on a helper thread ------------------------------------------
# One case with --threads 2 is read by a helper thread a slab ahead (the budget's rule: fewer
# cases in flight than threads); 70x64x60 voxels are two slabs a channel. The gzip NIfTI and the
# deflated npz of the same values, on 1 and 2 threads, give the same sums; the numpy check
# confirms them. A truncated stream, a bad gzip CRC and a bad zip CRC are found by the helper and
# reported as on one thread.
B=$TMP/big
$PY tools/gen/make_volumes.py --quiet --out "$B" --cases 1 --shape 70,64,60 --seed 9 \
    || not_ok "make_volumes.py: a 70x64x60 case"
for t in 1 2; do
    "$CALSCOPE" reduce --label-values 0,1,2,4 --threads $t -o "$TMP/big_nii$t.csv" "$B/manifest.csv" 2>"$TMP/big.err" \
        || not_ok "reduce of the 70x64x60 NIfTI, $t threads" "$(cat "$TMP/big.err")"
    "$CALSCOPE" reduce --label-values 0,1,2,4 --threads $t -o "$TMP/big_npz$t.csv" "$B/manifest_npz.csv" 2>"$TMP/big.err" \
        || not_ok "reduce of the 70x64x60 npz, $t threads" "$(cat "$TMP/big.err")"
done
same=1
for f in nii2 npz1 npz2; do
    diff <(grep -v '^case,' "$TMP/big_nii1.csv") <(grep -v '^case,' "$TMP/big_$f.csv") >/dev/null || same=0
done
expect_eq "two slabs a channel: NIfTI and npz, 1 and 2 threads (a helper thread), the same sums" 1 "$same"
run $PY bench/reference_seg.py "$B/manifest.csv" --label-values 0,1,2,4 --compare "$TMP/big_nii2.csv"
expect_match "two slabs a channel: the sums equal numpy+nibabel's" $'^compare\tok\t' "$OUT"
$PY - "$B" <<'PYEOF'
import gzip, sys
d = sys.argv[1] + '/'
b = open(d + 'nifti/case000.nii.gz', 'rb').read()
open(d + 'cut.nii.gz', 'wb').write(b[:len(b) // 2])
c = bytearray(b); c[-8] ^= 1                     # the gzip trailer's CRC-32
open(d + 'crc.nii.gz', 'wb').write(bytes(c))
z = bytearray(open(d + 'npz/case000.npz', 'rb').read())
z[14] ^= 1                                       # the member's CRC-32: local header ...
z[z.index(b'PK\x01\x02') + 16] ^= 1              # ... and central directory agree
open(d + 'crc.npz', 'wb').write(bytes(z))
# a flipped byte inside deflate data that stays valid deflate (level 0: stored blocks): the first
# probability's top byte (~1e38), the second label (uint8: 127)
def flip(src, at, name):
    plain = gzip.decompress(open(d + src, 'rb').read())
    z = bytearray(gzip.compress(plain, compresslevel=0, mtime=0))
    z[z.index(plain[:64]) + at] = 0x7f
    open(d + name, 'wb').write(bytes(z))
flip('nifti/case000.nii.gz', 352 + 3, 'flip.nii.gz')
flip('labels/case000.nii.gz', 352 + 1, 'flip_lab.nii.gz')
PYEOF
# helper_refuse NAME PROBS MESSAGE: refused alike on 1 and 2 threads
helper_refuse() {
    printf 'case,probs,labels\nx,%s,labels/case000.nii.gz\n' "$2" >"$B/bad.csv"
    for t in 1 2; do
        run "$CALSCOPE" reduce --label-values 0,1,2,4 --threads $t -o "$TMP/bad_out.csv" "$B/bad.csv"
        expect_eq "$1, $t thread(s)" "3 calscope: $B/$3 (labels: $B/labels/case000.nii.gz)" "$RC $ERR"
    done
}
helper_refuse "a gzip NIfTI cut in the middle of a channel" cut.nii.gz "cut.nii.gz: truncated: 550210 of 1075200 values"
helper_refuse "a bad gzip CRC, found at the last value" crc.nii.gz "crc.nii.gz: corrupt gzip data: incorrect data check"
helper_refuse "a bad zip CRC, found at the last value" crc.npz "crc.npz[probabilities.npy]: bad CRC (corrupt archive)"
helper_refuse "a corrupt gzip NIfTI: its CRC, not the spoilt probability" flip.nii.gz "flip.nii.gz: corrupt gzip data: incorrect data check"
printf 'case,probs,labels\nx,nifti/case000.nii.gz,flip_lab.nii.gz\n' >"$B/bad.csv"
for t in 1 2; do
    run "$CALSCOPE" reduce --label-values 0,1,2,4 --threads $t -o "$TMP/bad_out.csv" "$B/bad.csv"
    expect_eq "a corrupt gzip label map: its CRC, not the spoilt label, $t thread(s)" \
        "3 calscope: $B/flip_lab.nii.gz: corrupt gzip data: incorrect data check (probabilities: $B/nifti/case000.nii.gz)" "$RC $ERR"
done

printf 'not an image' >"$D/junk.nii"
printf 'case,probs,labels\nx,junk.nii,a.nii.gz\n' >"$D/junk.csv"
run "$CALSCOPE" reduce -o "$TMP/junk_out.csv" "$D/junk.csv"
expect_eq "an unreadable first case (no mapping given): exit 3" 3 "$RC"
expect_match "an unreadable first case: the reader's message and the other file" "^calscope: $D/junk.nii: .*\\(labels: $D/a.nii.gz\\)\$" "$ERR"

printf 'case,probs,labels\na,a_prob.nii.gz,a.nii.gz\na,b.npz,b.nii.gz\n' >"$D/dup.csv"
run "$CALSCOPE" reduce "$D/dup.csv"
expect_eq "manifest: a duplicate case, FILE:LINE:COL" "calscope: $D/dup.csv:3:1: case 'a' is already on line 2" "$ERR"
expect_eq "manifest: exit 3" 3 "$RC"
# a line break inside a quoted field: said at the manifest's line and column, before any output
printf 'case,probs,labels\na,a_prob.nii.gz,a.nii.gz\n"b\nc",b.npz,b.nii.gz\n' >"$D/nl.csv"
run "$CALSCOPE" reduce --label-values 0,1,2,4 -o "$TMP/nl_out.csv" "$D/nl.csv"
expect_eq "manifest: a case name with a line break, at its FILE:LINE:COL" \
    "calscope: $D/nl.csv:3:1: 'case' contains a line break, which a statistics file cannot hold" "$ERR"
expect_eq "manifest: a case name with a line break: exit 3, no output" "3 0" "$RC $(ls -A "$TMP" | grep -c -e '^nl_out.csv$' -e '^\.calscope-tmp')"
printf 'case,probs,labels\na,"a_prob\r.nii.gz",a.nii.gz\n' >"$D/cr.csv"
run "$CALSCOPE" reduce --label-values 0,1,2,4 -o "$TMP/nl_out.csv" "$D/cr.csv"
expect_eq "manifest: a path with a carriage return, at its FILE:LINE:COL" \
    "calscope: $D/cr.csv:2:2: 'probs' contains a line break, which a statistics file cannot hold" "$ERR"

# ---- Ctrl-C: exit 130, no file ------------------------------------------------------------------
# The manifest is a FIFO: once the writer's open returns, calscope is reading it (its handler is
# installed), so SIGINT arrives during the run whatever the machine's speed; reads restart and
# the reduction sees the flag at its first slab (or, if it were done, before writing).
mkfifo "$D/int.fifo"
"$CALSCOPE" reduce --label-values 0,1,2,4 -o "$TMP/int.csv" "$D/int.fifo" 2>"$TMP/int.err" &
pid=$!
timeout 60 $PY -c "
import os, signal, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
os.kill(int(sys.argv[2]), signal.SIGINT)
os.write(fd, open(sys.argv[3], 'rb').read())
os.close(fd)" "$D/int.fifo" "$pid" "$D/m.csv"
wait "$pid"; rc=$?
expect_eq "SIGINT: exit 130 and one message" "130 calscope: interrupted; nothing written" "$rc $(cat "$TMP/int.err")"
left=$(ls -A "$TMP" | grep -c -e '^int.csv$' -e '^\.calscope-tmp')
expect_eq "SIGINT: no output file, no temporary file" 0 "$left"

run "$CALSCOPE" reduce --label-values 0,1,2,4 -o "$TMP/no/such/dir/s.csv" "$D/m.csv"
expect_eq "-o in a folder that does not exist: refused before reducing, exit 3" \
    "3 calscope: $TMP/no/such/dir/s.csv: cannot write: No such file or directory" "$RC $ERR"

# ---- usage --------------------------------------------------------------------------------------
run "$CALSCOPE" reduce
expect_eq "no manifest: exit 2" 2 "$RC"
expect_eq "no manifest: the message" "calscope: no MANIFEST given (or --probs DIR --labels DIR)
Try \`calscope reduce --help\`." "$ERR"
run "$CALSCOPE" reduce --label-values 0,x "$D/m.csv"
expect_eq "--label-values: the bad token named, exit 2" "2 calscope: --label-values: 'x' is not an integer label value (in '0,x')" "$RC $(head -1 <<<"$ERR")"
run "$CALSCOPE" reduce --memory 1.5 "$D/m.csv"
expect_eq "--memory: not a whole MiB, exit 2" "2 calscope: --memory: '1.5' is not a size in MiB, 0..1048576" "$RC $(head -1 <<<"$ERR")"
# -o on something that is not a regular file is written in place: a temporary file renamed over
# it would replace the device (as root, -o /dev/null turned /dev/null into a plain file)
expect_rc "-o /dev/null: exit 0" 0 "$CALSCOPE" reduce --label-values 0,1,2,4 -o /dev/null "$D/m.csv"
if [ -c /dev/null ]; then ok "-o /dev/null: /dev/null is still the device"
else not_ok "-o /dev/null: /dev/null is still the device" "$(ls -l /dev/null)"; fi
mkfifo "$TMP/fifo"
cat "$TMP/fifo" >"$TMP/from_fifo" &
cat_pid=$!
expect_rc "-o FIFO: exit 0" 0 "$CALSCOPE" reduce --label-values 0,1,2,4 -o "$TMP/fifo" "$D/m.csv"
[ -p "$TMP/fifo" ] || kill "$cat_pid" 2>/dev/null   # replaced: nobody will ever write to cat's FIFO
wait "$cat_pid"
run "$CALSCOPE" reduce --label-values 0,1,2,4 -o - "$D/m.csv"
if [ -p "$TMP/fifo" ] && [ "$(cat "$TMP/from_fifo")" = "$OUT" ]; then ok "-o FIFO: the statistics came through the FIFO, which is still one"
else not_ok "-o FIFO: the statistics came through the FIFO, which is still one" "$(ls -l "$TMP/fifo")"; fi

run "$CALSCOPE" reduce --help
expect_match "--help lists the reduce flags" '--prob-suffix S' "$OUT"
expect_match "--help lists --memory" '--memory MB' "$OUT"

done_testing
