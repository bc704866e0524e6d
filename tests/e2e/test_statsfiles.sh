#!/usr/bin/env bash
# End-to-end tests of damaged statistics files (README "Statistics files"): what a cluster sends
# back is refused when it is cut short, has a line missing or a value edited out of range, holds
# duplicate or unmapped classes, or declares more than it holds — by `report` (the loader the
# dashboard uses too) and by `reduce --merge`, with FILE:LINE:COL and the reason, exit 3, and no
# merged file; and `report --compare` refuses two files whose classes differ. The files are the
# bundled softmax sample reduced with --label-values 0,1,2,4: cases 000-001 in one file, 002 in
# another, all three in a third.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PY=/usr/bin/python3
expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "want: $2" "got:  $3"; fi; }
# peak_kb ARGS...: the peak RSS in kB of calscope ARGS (its output discarded)
peak_kb() {
    $PY -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$CALSCOPE" "$@"
}

S=$PWD/samples/seg/softmax
printf 'case,probs,labels\n' >"$TMP/head.csv"
for c in 000 001 002; do printf 'case%s,%s/nifti/case%s.nii.gz,%s/labels/case%s.nii.gz\n' $c "$S" $c "$S" $c >"$TMP/row$c.csv"; done
cat "$TMP/head.csv" "$TMP/row000.csv" "$TMP/row001.csv" >"$TMP/ma.csv"
cat "$TMP/head.csv" "$TMP/row002.csv" >"$TMP/mb.csv"
cat "$TMP/head.csv" "$TMP/row000.csv" "$TMP/row001.csv" "$TMP/row002.csv" >"$TMP/mall.csv"
for m in a b all; do
    "$CALSCOPE" reduce --label-values 0,1,2,4 -o "$TMP/$m.stats.csv" "$TMP/m$m.csv" || not_ok "reduce $m"
done
A=$TMP/a.stats.csv B=$TMP/b.stats.csv ALL=$TMP/all.stats.csv

# the whole: the merge of the two is it, and it fails brier <= 0.25
run "$CALSCOPE" reduce --merge -o "$TMP/m.csv" "$A" "$B"
if [ "$RC" = 0 ] && cmp -s "$TMP/m.csv" "$ALL"; then ok "merge of the intact files = the whole"; else not_ok "merge of the intact files = the whole" "rc $RC $ERR"; fi
run "$CALSCOPE" report --check 'brier<=0.25' "$ALL"
expect_eq "the whole fails brier<=0.25 (Brier 0.276143)" "1 calscope: check failed: $ALL: brier = 0.276143 (want brier<=0.25)" "$RC $ERR"

# refused NAME FILE MESSAGE: report, report --check and reduce --merge (with B) refuse FILE with
# MESSAGE (the text after "calscope: "), exit 3, and leave no merged file
refused() {
    local name=$1 f=$2 want="calscope: $3"
    run "$CALSCOPE" report "$f"
    expect_eq "$name: report refuses it" "3 $want" "$RC $ERR"
    run "$CALSCOPE" report --check 'brier<=0.25' "$f"
    expect_eq "$name: report --check refuses it (never passes)" "3 $want" "$RC $ERR"
    rm -f "$TMP/m.csv"
    run "$CALSCOPE" reduce --merge -o "$TMP/m.csv" "$f" "$B"
    expect_eq "$name: reduce --merge refuses it" "3 $want" "$RC $ERR"
    [ -e "$TMP/m.csv" ] && not_ok "$name: no merged file" || ok "$name: no merged file"
}

# ---- cut inside the trailing 's' records: the last two lines missing ----
head -n -2 "$A" >"$TMP/cut.csv"
refused "cut inside the 's' records" "$TMP/cut.csv" \
    "$TMP/cut.csv:8:1: case 'case001': no 's' record for class '2' (every case has one per class: a truncated or edited file?)"

# ---- one 's' line deleted (case000's first) ----
first_s=$(grep -n '^s,0,0,' "$A" | cut -d: -f1)
sed "${first_s}d" "$A" >"$TMP/no_s.csv"
refused "one 's' line deleted" "$TMP/no_s.csv" \
    "$TMP/no_s.csv:7:1: case 'case000': no 's' record for class '0' (every case has one per class: a truncated or edited file?)"

# ---- cut at 99.9 % of the file: inside its last line, which still reads as numbers ----
size=$(stat -c %s "$A")
head -c $((size * 999 / 1000)) "$A" >"$TMP/cut999.csv"
last=$(( $(wc -l <"$TMP/cut999.csv") + 1 ))
refused "cut at 99.9 %" "$TMP/cut999.csv" \
    "$TMP/cut999.csv:$last:1: the file ends inside this line, without its line break (a truncated file?)"

# ---- an 's' value edited to 1e308: case001, class 2, NLL_POS ----
line=$(grep -n '^s,1,2,' "$A" | cut -d: -f1)
awk -F, -v OFS=, '$1 == "s" && $2 == 1 && $3 == 2 { $5 = "1e308" } 1' "$A" >"$TMP/huge.csv"
refused "an 's' value of 1e308" "$TMP/huge.csv" \
    "$TMP/huge.csv:$line:5: NLL_POS 1e+308 is more than the case's 2240 voxels can give (at most -ln 1e-15 = 34.5388 each)"

# ---- a 'c' sum edited outside its bin (case000, class 0, bin 0 holds values in (0, 1/300]) ----
line=$(grep -n '^c,0,0,0,' "$A" | cut -d: -f1)
count=$(sed -n "${line}p" "$A" | cut -d, -f5)
awk -F, -v OFS=, '$1 == "c" && $2 == 0 && $3 == 0 && $4 == 0 { $6 = "1" } 1' "$A" >"$TMP/csum.csv"
refused "a bin's sum outside the bin" "$TMP/csum.csv" \
    "$TMP/csum.csv:$line:6: sum 1 is not what $count values in fine bin 0 (0, 0.0033333333333333335] add up to"

# ---- cut one byte before the end of the last case line (a read past the end: SIGSEGV) ----
L=$(head -n 8 "$A" | wc -c)
head -c $((L - 1)) "$A" >"$TMP/cut_case.csv"
refused "cut inside the last case line" "$TMP/cut_case.csv" \
    "$TMP/cut_case.csv:8:1: the file ends inside this line, without its line break (a truncated file?)"

# ---- duplicate class names; a mapping that does not name the classes ----
sed 's/^mapping,"0,1,2,4"$/mapping,"0,1,2,2"/; s/^classes,4,0,1,2,4$/classes,4,0,1,2,2/' "$A" >"$TMP/dup.csv"
refused "duplicate class names" "$TMP/dup.csv" \
    "$TMP/dup.csv:5:6: class name '2' is given twice (also column 5): class names must be distinct"
sed 's/^mapping,"0,1,2,4"$/mapping,"0,1,2,5"/' "$A" >"$TMP/map.csv"
refused "a mapping that disagrees with the classes" "$TMP/map.csv" \
    "$TMP/map.csv:5:6: class 3 is '4', but the mapping '0,1,2,5' (line 4) names it '5'"

# ---- 800 cases declared at F = 100000 in 36 KB, with no records: refused before allocation ----
$PY - "$TMP/decl.csv" <<'PY'
import sys
n = 800
lines = ['# calscope-stats 1', 'fine,100000', 'kind,softmax', 'mapping,"0,1,2"', 'classes,3,0,1,2', f'cases,{n}']
lines += [f'case,{c},case{c:04d},1,p/case{c:04d}.nii,1,l/case{c:04d}.nii,1' for c in range(n)]
open(sys.argv[1], 'w').write('\n'.join(lines) + '\n')
PY
# without the check the sums take 7.7 GB (the pages were prefaulted); a 1 GB address space
# limit turns that into "out of memory" — where the sanitizers' own reservations allow a limit
limit=unlimited
(ulimit -v 1000000 && "$CALSCOPE" --help >/dev/null 2>&1) 2>/dev/null && limit=1000000
run bash -c "ulimit -v $limit; exec \"\$0\" report --bins 1 \"\$1\"" "$CALSCOPE" "$TMP/decl.csv"
expect_eq "800 cases declared, none held: refused after the case lines, before allocating (address space $limit)" \
    "3 calscope: $TMP/decl.csv:6:2: the records of 800 cases of 3 classes take at least 72000 bytes, but 0 bytes follow the case lines (a truncated file?)" "$RC $ERR"

# ---- a valid sparse file (100 one-voxel cases at F = 100000): memory follows its records ----
$PY - "$TMP/sparse.csv" <<'PY'
import sys
n = 100
L = ['# calscope-stats 1', 'fine,100000', 'kind,softmax', 'mapping,"0,1,2"', 'classes,3,0,1,2', f'cases,{n}']
L += [f'case,{c},c{c:04d},1,p,1,l,1' for c in range(n)]
for c in range(n):   # p = (0.5, 0.3, 0.2), label 0
    L += [f'c,{c},0,49999,1,0.5,1', f'c,{c},1,29999,1,0.29999999999999999,0',
          f'c,{c},2,19999,1,0.20000000000000001,0', f't,{c},49999,1,0.5,1',
          f's,{c},0,0.25,0.69314718055994529,0', f's,{c},1,0.089999999999999997,0,0.35667494393873245',
          f's,{c},2,0.040000000000000008,0,0.22314355131420976']
open(sys.argv[1], 'w').write('\n'.join(L) + '\n')
PY
run "$CALSCOPE" report --format json --bins 1 "$TMP/sparse.csv"
expect_eq "the sparse file is valid: Brier 0.38 = .25+.09+.04, NLL -ln 0.5" "0 0.38 0.693147" \
    "$RC $(json_get "round(d['files'][0]['metrics']['brier'], 6), round(d['files'][0]['metrics']['nll'], 6)")"
# its dense sums are 100 x 4 x 100000 x 24 bytes = 960 MB; read, measured and merged in far less
# (22-25 MB under ASan; 950 MB when they are prefaulted)
for cmd in "report --bins 1 $TMP/sparse.csv" "reduce --merge -o $TMP/sm.csv $TMP/sparse.csv"; do
    kb=$(peak_kb $cmd)
    if [ "$kb" -lt 300000 ]; then ok "sparse file, $cmd: peak RSS $kb kB < 300 MB"; else not_ok "sparse file, $cmd: peak RSS $kb kB < 300 MB"; fi
done
if cmp -s "$TMP/sm.csv" "$TMP/sparse.csv"; then ok "the sparse file merged alone: the same bytes"; else not_ok "the sparse file merged alone: the same bytes"; fi

# ---- a header of 20000 regions, one label value each (367 KB): checked in memory of its size ----
$PY - "$TMP/bigreg.csv" <<'PY'
import sys
k = 20000
m = ";".join(f"R{i}={i + 1}" for i in range(k))
lines = ['# calscope-stats 1', 'fine,1', 'kind,regions', f'mapping,"{m}"',
         f'classes,{k},' + ",".join(f"R{i}" for i in range(k)), 'cases,0']
open(sys.argv[1], 'w').write('\n'.join(lines) + '\n')
PY
# the mapping's regions x label values matrix (20000 x 20001 bytes, 88 MB touched) is not built
# to check a header, nor is its text copied once a piece (2.5 GB under ASan): 7 MB, 29 under ASan
kb=$(peak_kb report --bins 1 --lens classwise "$TMP/bigreg.csv")
if [ "$kb" -lt 60000 ]; then ok "20000-region header: peak RSS $kb kB < 60 MB"; else not_ok "20000-region header: peak RSS $kb kB < 60 MB"; fi

# ---- report --compare of a 4-class softmax file and a 3-region file ----
R=$PWD/samples/seg/regions
printf 'case,probs,labels\n' >"$TMP/mr.csv"
for c in 000 001 002; do printf 'case%s,%s/npz/case%s.npz,%s/labels/case%s.nii.gz\n' $c "$R" $c "$R" $c >>"$TMP/mr.csv"; done
"$CALSCOPE" reduce --regions 'WT=1,2,4;TC=1,4;ET=4' -o "$TMP/reg.csv" "$TMP/mr.csv" || not_ok "reduce regions"
run "$CALSCOPE" report --compare --lens classwise "$ALL" "$TMP/reg.csv"
expect_eq "--compare, classes differ: the per-sample compare's message, at the class's column" \
    "3 calscope: $ALL:5:6: --compare: class '4' has no partner: $ALL has 4 classes, $TMP/reg.csv has 3" "$RC $ERR"
expect_no_match "--compare, classes differ: no compare table" '^compare  A' "$OUT"
run "$CALSCOPE" report --compare --lens classwise "$TMP/reg.csv" "$ALL"
expect_eq "--compare, classes differ, files swapped" \
    "3 calscope: $ALL:5:6: --compare: class '4' has no partner: $TMP/reg.csv has 3 classes, $ALL has 4" "$RC $ERR"
sed 's/^mapping,"0,1,2,4"$/mapping,"0,1,2,5"/; s/^classes,4,0,1,2,4$/classes,4,0,1,2,5/' "$ALL" >"$TMP/five.csv"
run "$CALSCOPE" report --compare "$ALL" "$TMP/five.csv"
expect_eq "--compare, same count, a class named differently" \
    "3 calscope: $TMP/five.csv:5:6: --compare: class '5' has no partner: class 3 of $ALL is '4'" "$RC $ERR"
# three statistics files: cases pair two files at a time, and the methods table says so
run "$CALSCOPE" report --compare "$ALL" "$A" "$B"
expect_eq "--compare of three statistics files: refused with its reason" \
    "2 calscope: $A: --compare pairs statistics files case by case two at a time; a methods table of three or more is offered for prediction files only" \
    "$RC $(printf '%s\n' "$ERR" | head -1)"

done_testing
