#!/usr/bin/env bash
# End-to-end tests of `calscope report`: exit codes, JSON / text / CSV output,
# --check gates, --select, --plot width and glyphs, error messages naming FILE:LINE:COL.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Five samples, worked by hand (15 uniform bins):
#   conf .9 in bin (0.8667, 0.9333]: 2 samples, acc 1/2, gap .4
#   conf .7 in bin (0.6667, 0.7333]: 3 samples, acc 2/3, gap 1/30
#   accuracy 3/5, ECE (2*.4 + 3/30)/5 = .18, ACE (.4 + 1/30)/2, MCE .4
cat >"$TMP/tiny.csv" <<'EOF'
label,p_a,p_b,note
0,0.9,0.1,x
1,0.9,0.1,y
1,0.3,0.7,z
1,0.3,0.7,
0,0.3,0.7,w
EOF
TINY=$TMP/tiny.csv

num_near() { # NAME GOT WANT
    if /usr/bin/python3 -c "import sys; g=float('$2'); sys.exit(0 if abs(g-$3) < 1e-12 else 1)" 2>/dev/null
    then ok "$1"; else not_ok "$1" "got $2, want $3"; fi
}

# Every message is checked verbatim (stderr compared whole) with its exit status.
HINT='Try `calscope report --help`.'
DHINT='Try `calscope --help`.'
# expect_stderr NAME RC "STDERR" CMD...
expect_stderr() {
    local name=$1 want_rc=$2 want=$3; shift 3; run "$@"
    if [ "$RC" -eq "$want_rc" ] && [ "$ERR" = "$want" ]; then ok "$name"
    else not_ok "$name" "exit $RC (want $want_rc)" "stderr: ${ERR:0:600}" "want:   ${want:0:600}"; fi
}
# usage NAME "MESSAGE" ARGS...: `calscope report ARGS` exits 2 with "calscope: MESSAGE" and the hint
usage() { local name=$1 msg=$2; shift 2; expect_stderr "usage: $name" 2 "calscope: $msg"$'\n'"$HINT" "$CALSCOPE" report "$@"; }

# --- success, JSON structure and hand-worked numbers
expect_rc "json: exit 0" 0 "$CALSCOPE" report --format json "$TINY"
if printf '%s' "$OUT" | /usr/bin/python3 -c 'import json,sys; json.load(sys.stdin)' 2>/dev/null
then ok "json: stdout is one JSON document"; else not_ok "json: stdout is one JSON document" "${OUT:0:300}"; fi
expect_match "json: file keys" "^True$" "$(json_get "all(k in d['files'][0] for k in ('path','rows','classes','rejected','settings','metrics','bins','load'))")"
expect_match "json: rows/classes/rejected" "^5 2 0$" "$(json_get "' '.join(str(d['files'][0][k]) for k in ('rows','classes','rejected'))")"
expect_match "json: no 'selected' without --select" "^False$" "$(json_get "'selected' in d['files'][0]")"
num_near "json: accuracy" "$(json_get "d['files'][0]['metrics']['accuracy']")" 0.6
num_near "json: ece" "$(json_get "d['files'][0]['metrics']['ece']")" 0.18
num_near "json: ace" "$(json_get "d['files'][0]['metrics']['ace']")" "(0.4+1/30)/2"
num_near "json: mce" "$(json_get "d['files'][0]['metrics']['mce']")" 0.4
expect_match "json: rece_m is null without id/tta" "^None$" "$(json_get "d['files'][0]['metrics']['rece_m']")"
expect_match "json: every metric key" "^True$" "$(json_get "all(k in d['files'][0]['metrics'] for k in ('accuracy','ece','ace','mce','rece_g','rece_m','brier','nll','aece','sce'))")"
expect_match "json: 15 bins with lo/hi/count/conf/acc" "^15 True$" "$(json_get "len(d['files'][0]['bins']), all(all(k in b for k in ('lo','hi','count','conf','acc')) for b in d['files'][0]['bins'])" | tr -d '(),')"
expect_match "json: bin counts add up" "^5$" "$(json_get "sum(b['count'] for b in d['files'][0]['bins'])")"
expect_match "json: settings" "^top1 15 uniform tvd 0.1$" "$(json_get "' '.join(str(d['files'][0]['settings'][k]) for k in ('lens','bins','binning','distance','sigma'))")"
expect_match "json: ignored columns listed" "^\['note'\]$" "$(json_get "d['files'][0]['load']['ignored_columns']")"
expect_match "json: integers printed as integers" '"rows": 5,' "$OUT"

expect_rc "json: --bins 10 --binning mass --distance l2 --sigma 0.05" 0 "$CALSCOPE" report --format json --bins 10 --binning mass --distance l2 --sigma 0.05 "$TINY"
expect_match "json: settings follow the flags" "^10 mass l2 0.05$" "$(json_get "' '.join(str(d['files'][0]['settings'][k]) for k in ('bins','binning','distance','sigma'))")"
expect_rc "json: --flag=value spelling" 0 "$CALSCOPE" report --format=json --bins=7 "$TINY"
expect_match "json: --bins=7 gives 7 bins" "^7$" "$(json_get "len(d['files'][0]['bins'])")"

# JSON strings are escaped: a path with a quote and a backslash
cp "$TINY" "$TMP/we\"ird\\name.csv"
expect_rc "json: odd path exit 0" 0 "$CALSCOPE" report --format json "$TMP/we\"ird\\name.csv"
expect_match "json: odd path round-trips" 'we"ird\\name.csv$' "$(json_get "d['files'][0]['path']")"

# --- text
expect_rc "text: exit 0" 0 "$CALSCOPE" report "$TINY"
expect_match "text: metrics with 6 decimals" "ece +0\.180000" "$OUT"
expect_match "text: accuracy line" "accuracy +0\.600000" "$OUT"
expect_match "text: rece_m n/a" "rece_m +n/a" "$OUT"
expect_match "text: settings line" "settings +lens top1, 15 uniform bins, distance tvd" "$OUT"
expect_match "text: load summary" "5 rows read, 5 used, 0 rejected; 2 classes" "$OUT"
expect_match "text: ignored columns" "ignored +note" "$OUT"
expect_match "text: bin table" "bin +lo +hi +count +conf +acc +gap" "$OUT"
expect_match "text: the .9 bin row" " 14 +0\.8667 +0\.9333 +2 +0\.900000 +0\.500000 +0\.400000" "$OUT"
printf 'label,p_a,p_b,\n0,0.3,0.7,\n' >"$TMP/trailing_comma.csv"
run "$CALSCOPE" report "$TMP/trailing_comma.csv"
expect_match "text: a header ending in a delimiter names its ignored column" "ignored +a column with no name$" "$OUT"

# --- CSV
expect_rc "csv: exit 0" 0 "$CALSCOPE" report --format csv "$TINY" "$TINY"
expect_match "csv: header" "^path,rows,classes,rejected,selected,accuracy,ece,ace,mce,rece_g,rece_m,brier,nll,aece,sce,smece,l2ce,l2ce_debiased,ece_sweep$" "$(printf '%s\n' "$OUT" | head -1)"
expect_match "csv: one row per file" "^3$" "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')"
expect_match "csv: values, empty rece_m" "tiny\.csv,5,2,0,5,0\.(6|59999)[0-9]*,0\.(18|17999)[0-9]*,[0-9.]+,0\.(4|39999)[0-9]*,[0-9.]+,,[0-9.]+" "$OUT"

# --- checks
expect_rc "check: passing gate exits 0" 0 "$CALSCOPE" report --check 'ece<=0.2' --check 'accuracy >= 0.5' "$TINY"
expect_rc "check: failing gate exits 1" 1 "$CALSCOPE" report --check 'ece<=0.05' "$TINY"
expect_match "check: failure names metric, value and file" "check failed: .*tiny\.csv: ece = 0\.18 \(want ece<=0\.05\)" "$ERR"
expect_rc "check: strict < fails on equality" 1 "$CALSCOPE" report --format json --check 'mce<0.4' "$TINY"
expect_rc "check: > passes" 0 "$CALSCOPE" report --check 'nll>0' "$TINY"
expect_rc "check: unavailable metric fails" 1 "$CALSCOPE" report --check 'rece_m<=1' "$TINY"
expect_match "check: unavailable metric says so" "rece_m is not available" "$ERR"
# --- usage errors: one line per message a flag can give (exit 2, text verbatim)
usage "check: unknown metric" "--check 'eec<=0.1': unknown metric 'eec' (known: accuracy ece ace mce rece_g rece_m brier nll aece sce smece l2ce l2ce_debiased ece_sweep)" --check 'eec<=0.1' "$TINY"
usage "check: missing operator" "--check 'ece=0.1': expected one of <= < >= > after 'ece'" --check 'ece=0.1' "$TINY"
usage "check: missing number" "--check 'ece<=': expected a number after '<='" --check 'ece<=' "$TINY"
usage "check: text after the number" "--check 'ece<=0.1 x': unexpected text 'x' after the number" --check 'ece<=0.1 x' "$TINY"
usage "check: overflowing number" "--check 'ece<=1e999': expected a number after '<='" --check 'ece<=1e999' "$TINY"
usage "unknown flag" "unknown option '--no-such-flag'" --no-such-flag "$TINY"
usage "unknown flag=value" "unknown option '--no-such-flag'" --no-such-flag=3 "$TINY"
usage "flag without value" "--bins needs a value" "$TINY" --bins
usage "no FILE" "no FILE given"
usage "--plot takes no value" "--plot takes no value" --plot=yes "$TINY"
usage "--lens bogus" "--lens: unknown lens 'bogus' (top1|topk:K|class:C|classwise|group:A,B;C,D|full)" --lens bogus "$TINY"
usage "--lens foo (one prefix)" "--lens: unknown lens 'foo' (top1|topk:K|class:C|classwise|group:A,B;C,D|full)" --lens foo "$TINY"
usage "--lens topk:0" "--lens: topk needs a whole number k >= 1 (topk:K), got 'topk:0'" --lens topk:0 "$TINY"
usage "--lens class:" "--lens: class needs an argument (class:C, a class name, number or #index)" --lens class: "$TINY"
usage "--lens group:" "--lens: group needs an argument (group:A,B;C,D)" --lens group: "$TINY"
usage "--bins abc (one prefix)" "--bins: need a whole number between 1 and 1000, got 'abc'" --bins abc "$TINY"
usage "--bins 0" "--bins: need a whole number between 1 and 1000, got '0'" --bins 0 "$TINY"
usage "--bins 1001 (above the maximum M)" "--bins: need a whole number between 1 and 1000, got '1001'" --bins 1001 "$TINY"
usage "--bins 1000000" "--bins: need a whole number between 1 and 1000, got '1000000'" --bins 1000000 "$TINY"
usage "--binning bogus" "--binning: unknown scheme 'bogus' (uniform|mass|kdtree)" --binning bogus "$TINY"
usage "--gamma 0" "--gamma: need a number in (0, 1], got '0'" --gamma 0 --binning kdtree "$TINY"
usage "--sigma -1" "--sigma: need a number in [1e-06, 10], got '-1'" --sigma -1 "$TINY"
usage "--sigma 1e300 (masses underflow)" "--sigma: need a number in [1e-06, 10], got '1e300'" --sigma 1e300 "$TINY"
usage "--sigma 1e-7 (below the range)" "--sigma: need a number in [1e-06, 10], got '1e-7'" --sigma 1e-7 "$TINY"
usage "--sigma 10.5" "--sigma: need a number in [1e-06, 10], got '10.5'" --sigma 10.5 "$TINY"
usage "--mixture bogus" "--mixture: unknown mixture 'bogus' (kde|gmm3)" --mixture bogus "$TINY"
usage "--distance bogus" "--distance: unknown distance 'bogus' (tvd|l2|max|interval:L,H)" --distance bogus "$TINY"
usage "--distance interval:0.5" "--distance: interval needs two numbers (interval:L,H), got 'interval:0.5'" --distance interval:0.5 "$TINY"
usage "--distance interval:0.6,0.5" "--distance: interval needs 0 <= L <= H <= 1, got 'interval:0.6,0.5'" --distance interval:0.6,0.5 "$TINY"
usage "--select too long" "--select: expression too long: 610 characters, at most 511" --select "$(printf 'conf > 0.5 and %.0s' $(seq 40))conf > 0.5" "$TINY"
usage "--format xml" "--format: 'xml' is not text, json, csv or ndjson" --format xml "$TINY"
usage "--sum-tol 1" "--sum-tol: need a tolerance in [0, 1), got '1'" --sum-tol 1 "$TINY"
usage "--sum-tol abc" "--sum-tol: need a tolerance in [0, 1), got 'abc'" --sum-tol abc "$TINY"
usage "--label-col 0" "--label-col: '0' is not a column number (1, 2, ...)" --label-col 0 --no-header "$TINY"
usage "--delimiter :" "--delimiter: ':' is not , ; or tab" --delimiter : "$TINY"
usage "--seed -1" "--seed: '-1' is not a non-negative integer" --seed -1 --ci 5 "$TINY"
usage "--threads 1024 (above the maximum)" "--threads: need a whole number between 0 (all cores) and 256, got '1024'" --threads 1024 --ci 5 "$TINY"
usage "--threads -1" "--threads: need a whole number between 0 (all cores) and 256, got '-1'" --threads -1 --ci 5 "$TINY"
usage "--ci 0" "--ci: need a whole number between 1 and 100000, got '0'" --ci 0 "$TINY"
usage "--ci 100001" "--ci: need a whole number between 1 and 100000, got '100001'" --ci 100001 "$TINY"
usage "--repeats 100001" "--repeats: need a whole number between 1 and 100000, got '100001'" --repeats 100001 --curve size "$TINY"
usage "--curve bogus" "--curve: 'bogus' is not size or bins" --curve bogus "$TINY"
usage "--fractions without --curve size" "--fractions needs --curve size" --fractions 0.5 "$TINY"
usage "--bins-list without --curve bins" "--bins-list needs --curve bins" --bins-list 5 "$TINY"
usage "--replace without --curve size" "--replace needs --curve size" --replace "$TINY"
usage "--fractions 0.5,2" "--fractions: '2' is not a fraction in (0, 1] (or a percentage)" --curve size --fractions 0.5,2 "$TINY"
usage "--fractions 150%" "--fractions: '150%' is not a fraction in (0, 1] (or a percentage)" --curve size --fractions 150% "$TINY"
usage "--fractions bad number" "--fractions: bad number 'x' in '0.5,x'" --curve size --fractions 0.5,x "$TINY"
usage "--fractions empty entry" "--fractions: bad number '' in '0.5,'" --curve size --fractions 0.5, "$TINY"
usage "--bins-list 1000001 echoes the token" "--bins-list: '1000001' is not a whole number of bins between 1 and 1000" --curve bins --bins-list 5,1000001 "$TINY"
usage "--bins-list 2.5" "--bins-list: '2.5' is not a whole number of bins between 1 and 1000" --curve bins --bins-list 2.5 "$TINY"
usage "--bins-list gamma 2 with kdtree" "--bins-list: '2' is not a gamma in (0, 1] (--binning kdtree)" --curve bins --binning kdtree --bins-list 0.1,2 "$TINY"
usage "--bins-list 33 values" "--bins-list: at most 32 values" --curve bins --bins-list "$(seq -s, 1 33)" "$TINY"
usage "--repeats without a resampler" "--repeats needs --curve, --compare or --recal" --repeats 5 "$TINY"
usage "--topk-bars 0" "--topk-bars: bad k '0' in '0,1' (a whole number k >= 1, or full)" --topk-bars 0,1 "$TINY"
usage "--topk-bars fool" "--topk-bars: bad k 'fool' in '1,fool' (a whole number k >= 1, or full)" --topk-bars 1,fool "$TINY"
usage "--topk-bars 33 values" "--topk-bars: at most 32 values" --topk-bars "$(seq -s, 1 33)" "$TINY"
usage "--likert-cuts bad number" "--likert-cuts: bad number 'x' in '0,x,1'" --likert-cuts 0,x,1 "$TINY"
usage "--likert-cuts 1.5" "--likert-cuts: '1.5' is not in [0, 1]" --likert-cuts 0,1.5 "$TINY"
usage "--likert-cuts not increasing" "--likert-cuts: cut points must increase ('0.5' then '0.5')" --likert-cuts 0,0.5,0.5,1 "$TINY"
usage "--likert-cuts one point" "--likert-cuts: need at least 2 cut points, got '0.5'" --likert-cuts 0.5 "$TINY"
usage "--likert-cuts 19 points" "--likert-cuts: at most 17 cut points" --likert-cuts "$(seq -s, 0 0.05 0.9)" "$TINY"
usage "--likert with classwise" "--likert: the classwise and group lenses have no single first coordinate; use top1, topk, class or full" --likert --lens classwise "$TINY"
usage "--compat sklearn" "--compat: 'sklearn' is not all, torchmetrics, torchmetrics-binary, netcal, relplot, verified, robustcal or monai" --compat sklearn "$TINY"
usage "--compat with a full lens" "--compat needs --lens top1 or classwise (the libraries measure nothing else)" --compat netcal --lens full "$TINY"
usage "--compat with kdtree" "--compat needs --binning uniform or mass (no library has kd-tree bins)" --compat netcal --binning kdtree "$TINY"
usage "--torch-dtype without --compat" "--torch-dtype needs --compat torchmetrics, torchmetrics-binary or all (only torchmetrics gets torch tensors)" --torch-dtype float64 "$TINY"
usage "--torch-dtype half" "--torch-dtype: 'half' is not float32 or float64" --compat torchmetrics --torch-dtype half "$TINY"
usage "--compare one file" "--compare needs two or more files (A and B), or a file and --recal" --compare "$TINY"
usage "--recal bogus" "--recal: 'bogus' is not ts, platt, hist, iso, vs, ets, beta, irova, ms or dir (or all)" --recal ts,bogus "$TINY"
usage "--recal twice" "--recal: 'ts' is given twice" --recal ts,ts "$TINY"
usage "--recal empty" "--recal: empty list" --recal , "$TINY"
usage "--reference 0" "--reference: '0' is not a method number (1 = the first file)" --reference 0 --recal ts "$TINY"
usage "--reference 3 of 2" "--reference 3: there are only 2 methods (files first, then recalibrations)" --reference 3 --recal ts "$TINY"
usage "--compare-k 0" "--compare-k: '0' is not a k >= 1" --compare-k 0 --recal ts "$TINY"
usage "--compare-k without --compare" "--reference and --compare-k need --compare or --recal" --compare-k 2 "$TINY"
usage "--recal-folds 1" "--recal-folds: '1' is not a fold count in 2..32" --recal-folds 1 --recal ts "$TINY"
usage "--recal-bins 0" "--recal-bins: '0' is not a bin count in 1..100000" --recal-bins 0 --recal hist "$TINY"
usage "--recal-bins without hist" "--recal-bins: no method in --recal has bins (only hist does)" --recal-bins 5 --recal ts,iso "$TINY"
usage "--compare-k where the text shows no topk_ece" "--compare-k sets the k of topk_ece, which the text tables do not show: add topk_ece to --metrics, or use --format json or csv" --compare-k 2 --recal ts "$TINY"
expect_rc "--compare-k with topk_ece in --metrics: exit 0" 0 "$CALSCOPE" report --compare-k 2 --metrics ece,topk_ece --recal ts "$TINY"
expect_rc "--compare-k in JSON: exit 0" 0 "$CALSCOPE" report --format json --compare-k 2 --recal ts "$TINY"
usage "--recal-split 1" "--recal-split: '1' is not a fitting fraction in (0, 1)" --recal-split 1 --recal ts "$TINY"
usage "--recal-split-column =x" "--recal-split-column: '=x' names no column (COL or COL=FITVALUE)" --recal-split-column =x --recal ts "$TINY"
usage "--recal-split-column c=" "--recal-split-column: 'c=' has an empty fitting value" --recal-split-column c= --recal ts "$TINY"
usage "--recal-folds without --recal" "--recal-folds, --recal-bins, --recal-max-iter, --recal-split and --recal-split-column need --recal" --recal-folds 3 "$TINY"
usage "--recal-split and --recal-split-column" "--recal-split and --recal-split-column both choose the fitting rows: give one" --recal ts --recal-split 0.5 --recal-split-column c "$TINY"
usage "--recal-folds with a split" "--recal-folds: a held-out split (--recal-split, --recal-split-column) fits once on its fitting rows, there are no folds" --recal ts --recal-folds 3 --recal-split 0.5 "$TINY"

# --- no flag is accepted and then ignored: one that would change nothing is refused
usage "--seed alone" "--seed needs --ci, --curve, --compare or --recal (nothing else is random)" --seed 3 "$TINY"
usage "--threads alone" "--threads needs --ci, --curve, --compare or --recal (nothing else runs on worker threads)" --threads 2 "$TINY"
usage "--gamma without kdtree" "--gamma needs --binning kdtree (it is the kd-tree's cell size)" --gamma 0.2 "$TINY"
usage "--label-col without --no-header" "--label-col needs --no-header (with a header the label column is found by its name)" --label-col 2 "$TINY"
usage "--sum-tol with --renormalize" "--sum-tol and --renormalize: --renormalize divides every row by its sum, so no tolerance applies; give one" --sum-tol 0.01 --renormalize "$TINY"
usage "--ascii without --plot" "--ascii needs --plot (only the plot draws glyphs)" --ascii "$TINY"
usage "--curve with csv" "--curve has no CSV form (one row per file); use --format text or json" --format csv --curve size "$TINY"
usage "--topk-bars with csv --compare" "--topk-bars is not in --format csv with --compare (one row per method); use --format text or json" --format csv --topk-bars 1 --recal ts "$TINY"
usage "--likert with csv --compare" "--likert is not in --format csv with --compare (one row per method); use --format text or json" --format csv --likert --recal ts "$TINY"
usage "--likert-cuts with csv --compare" "--likert-cuts is not in --format csv with --compare (one row per method); use --format text or json" --format csv --likert-cuts 0,0.5,1 --recal ts "$TINY"
usage "--mixture without an id/tta file" "--mixture needs an id/tta long file (it only changes RECE-M); no FILE has id and tta columns" --mixture gmm3 "$TINY"
usage "--compat with csv --compare" "--compat is not in --format csv with --compare (one row per method); use --format text or json" --format csv --compat netcal --recal ts "$TINY"

# --renormalize and --sum-tol act on rows of class probabilities: refused when no FILE has any
# (logit_ columns are softmaxed, a binary p column has 1 - p beside it), taken when one FILE has
printf 'label,logit_0,logit_1,logit_2\n1,2,-1,0\n0,2,1,0.5\n' >"$TMP/logit.csv"
printf 'label,p\n0,0.2\n1,0.9\n' >"$TMP/bin.csv"
RENORM_MSG="--renormalize rescales rows of class probabilities; no FILE has them (logits, a binary p column and statistics files have no row to rescale)"
SUMTOL_MSG="--sum-tol checks that rows of class probabilities sum to 1; no FILE has them (logits, a binary p column and statistics files have no row sum to check)"
usage "--renormalize on logit_ columns" "$RENORM_MSG" --renormalize "$TMP/logit.csv"
usage "--sum-tol on logit_ columns" "$SUMTOL_MSG" --sum-tol 0.01 "$TMP/logit.csv"
usage "--renormalize on a binary p column" "$RENORM_MSG" --renormalize "$TMP/bin.csv"
usage "--sum-tol on a binary p column" "$SUMTOL_MSG" --sum-tol 0.01 "$TMP/bin.csv" "$TMP/logit.csv"
expect_rc "--renormalize with one FILE of probability rows among them" 0 "$CALSCOPE" report --renormalize "$TMP/bin.csv" "$TINY"
expect_rc "--sum-tol with one FILE of probability rows among them" 0 "$CALSCOPE" report --sum-tol 0.01 "$TMP/logit.csv" "$TINY"

# --sigma changes RECE-G and RECE-M, --smece-sigma smECE: refused where those are n/a
usage "--sigma on a lens without RECE-G" "--sigma changes RECE-G and RECE-M only: RECE-G is n/a on --lens group:0;1 (top1/class:C/classwise only), and RECE-M needs an id/tta long file, which no FILE is" \
    --sigma 0.3 --lens 'group:0;1' "$TINY"
usage "--sigma on --lens full" "--sigma changes RECE-G and RECE-M only: RECE-G is n/a on --lens full (top1/class:C/classwise only), and RECE-M needs an id/tta long file, which no FILE is" \
    --sigma 0.3 --lens full "$TMP/logit.csv"
expect_rc "--sigma on --lens full with an id/tta FILE (RECE-M)" 0 "$CALSCOPE" report --sigma 0.3 --lens full samples/digits_tta.csv
expect_rc "--sigma on --lens classwise (RECE-G)" 0 "$CALSCOPE" report --sigma 0.3 --lens classwise "$TINY"
usage "--smece-sigma on --lens classwise" "--smece-sigma changes smECE only, which is n/a on --lens classwise (top1/class:C only)" --smece-sigma 0.1 --lens classwise "$TINY"
usage "--smece-sigma on --lens topk:2" "--smece-sigma changes smECE only, which is n/a on --lens topk:2 (top1/class:C only)" --smece-sigma 0.1 --lens topk:2 "$TMP/logit.csv"
usage "--smece-sigma on a group lens" "--smece-sigma changes smECE only, which is n/a on --lens group:0;1 (top1/class:C only)" --smece-sigma 0.1 --lens 'group:0;1' "$TINY"
expect_rc "--smece-sigma on --lens class:b" 0 "$CALSCOPE" report --smece-sigma 0.1 --lens class:b "$TINY"

# a flag given twice would replace its first value: refused, unless the flag table marks it
# repeatable (--check)
usage "--select twice" "--select given twice (write one expression: A and B)" --select 'y == 0' --select 'conf > 0.5' "$TINY"
usage "--bins twice" "--bins given twice" --bins 10 --bins=20 "$TINY"
usage "--labels twice" "--labels given twice" --labels a.npy --labels b.npy "$TINY"
expect_rc "--check twice is repeatable" 0 "$CALSCOPE" report --check 'ece<=1' --check 'accuracy>=0' "$TINY"

# numbers users type follow the data loader's rule: a subnormal is a number, a hex float is not
expect_rc "--select 'conf > 1e-320' runs" 0 "$CALSCOPE" report --format json --select 'conf > 1e-320' "$TINY"
expect_match "--select 'conf > 1e-320' keeps every sample" "^5$" "$(json_get "d['files'][0]['selected']")"
expect_stderr "--select with a hex float is refused" 2 "calscope: $TINY: selection: bad number '0x1p-1'"$'\n'"  conf > 0x1p-1"$'\n'"         ^" \
    "$CALSCOPE" report --select 'conf > 0x1p-1' "$TINY"
usage "--sigma with a hex float" "--sigma: need a number in [1e-06, 10], got '0x1p-3'" --sigma 0x1p-3 "$TINY"
usage "--check with a hex float" "--check 'ece<=0x1p-3': unexpected text 'x1p-3' after the number" --check 'ece<=0x1p-3' "$TINY"
printf 'label,p_a,p_b\n0,0x1p-1,0.5\n' >"$TMP/hex.csv"
expect_stderr "a hex float in a data file is refused alike" 3 "calscope: $TMP/hex.csv:2:2: non-numeric value '0x1p-1' in column 'p_a'" "$CALSCOPE" report "$TMP/hex.csv"

# every flag x format that is accepted does something: the outputs differ from the plain run
# (a table: flags | formats; "-" = the flag's effect is on stderr, compared there)
plain_out() { "$CALSCOPE" report --format "$1" "$TINY" 2>&1; }
while IFS='|' read -r flags formats; do
    [ -n "$flags" ] || continue
    for fmt in $formats; do
        # shellcheck disable=SC2086
        got=$("$CALSCOPE" report --format "$fmt" $flags "$TINY" 2>&1); rc=$?
        if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then not_ok "flag x format: $flags with $fmt runs" "exit $rc: ${got:0:300}"
        elif [ "$got" = "$(plain_out "$fmt")" ]; then not_ok "flag x format: $flags changes the $fmt output" "same as without it"
        else ok "flag x format: $flags changes the $fmt output"; fi
    done
done <<'EOF'
--lens classwise|text json csv
--bins 2|text json csv
--binning mass|text json csv
--binning kdtree --gamma 1|text json
--sigma 0.05|text json csv
--distance l2|text json csv
--select conf>0.8|text json csv
--plot|text json csv
--plot --ascii|text json csv
--check ece<=0.01|text json csv
--ci 5|text json csv
--ci 5 --seed 1|text json csv
--ci 5 --threads 1|text json csv
--curve size --repeats 2|text json
--curve bins --bins-list 2,3 --repeats 2|text json
--topk-bars 1,full|text json csv
--likert|text json csv
--likert-cuts 0,0.5,1|text json csv
--compat netcal|text json
--compat all|text json csv
--compat torchmetrics --torch-dtype float64|text json csv
EOF
# the input flags, on files they change: rows that do not sum to 1, a file without a header
printf 'label,p_a,p_b\n0,0.9,0.08\n1,0.3,0.7\n' >"$TMP/sum98.csv"
printf '0.9,0.1,0\n0.3,0.7,1\n' >"$TMP/nohead.csv"
for fmt in text json csv; do
    expect_rc "input flags: a row summing to 0.98 is refused ($fmt)" 3 "$CALSCOPE" report --format "$fmt" "$TMP/sum98.csv"
    expect_rc "input flags: --renormalize loads it ($fmt)" 0 "$CALSCOPE" report --format "$fmt" --renormalize "$TMP/sum98.csv"
    expect_rc "input flags: --sum-tol 0.05 loads it ($fmt)" 0 "$CALSCOPE" report --format "$fmt" --sum-tol 0.05 "$TMP/sum98.csv"
    expect_rc "input flags: --no-header --label-col 3 ($fmt)" 0 "$CALSCOPE" report --format "$fmt" --no-header --label-col 3 "$TMP/nohead.csv"
done
run "$CALSCOPE" report --format csv --no-header --label-col 3 "$TMP/nohead.csv"
expect_match "input flags: --label-col 3 takes the third column as the label" "nohead\.csv,2,2,0,2,1," "$OUT"
# --- messages at run time, verbatim, with their exit status
expect_stderr "run: missing file" 3 "calscope: $TMP/nope.csv: cannot open: No such file or directory" "$CALSCOPE" report "$TMP/nope.csv"
expect_stderr "run: unknown class is a usage error" 2 "calscope: $TINY: --lens class: unknown class 'foo' (2 classes)" "$CALSCOPE" report --lens class:foo "$TINY"
expect_stderr "run: an empty selection is said, exit 0" 0 "calscope: $TINY: the selection 'conf>0.95' kept no sample" "$CALSCOPE" report --select 'conf>0.95' "$TINY"
expect_stderr "run: failed check" 1 "calscope: check failed: $TINY: ece = 0.18 (want ece<=0.05)" "$CALSCOPE" report --check 'ece<=0.05' "$TINY"
expect_stderr "run: unavailable metric fails its check" 1 "calscope: check failed: $TINY: rece_m is not available (want rece_m<=1)" "$CALSCOPE" report --check 'rece_m<=1' "$TINY"
expect_stderr "run: metric names are case-insensitive (the dashboard says ECE)" 1 "calscope: check failed: $TINY: ece = 0.18 (want ECE<=0.05)" "$CALSCOPE" report --check 'ECE<=0.05' "$TINY"
expect_stderr "run: RECE-G, RECE_G and Accuracy are names too" 0 "calscope: check passed: $TINY: rece_g = 0.18 <= 1
calscope: check passed: $TINY: rece_g = 0.18 <= 1
calscope: check passed: $TINY: accuracy = 0.6 >= 0.5" "$CALSCOPE" report --check 'RECE-G<=1' --check 'RECE_G<=1' --check 'Accuracy>=0.5' "$TINY"
usage "check: a name with '-' that is no metric" "--check 'ec-e<=0.1': unknown metric 'ec-e' (known: accuracy ece ace mce rece_g rece_m brier nll aece sce smece l2ce l2ce_debiased ece_sweep)" --check 'ec-e<=0.1' "$TINY"
# a value that misses the bound beyond six digits prints in full, not as one that meets it
# (the ECE of breast_cancer_gnb.csv is 0.05863852312248436)
expect_stderr "run: a failed check never prints a value that passes" 1 "calscope: check failed: samples/breast_cancer_gnb.csv: ece = 0.05863852312248436 (want ece<=0.0586385)" "$CALSCOPE" report --check 'ece<=0.0586385' samples/breast_cancer_gnb.csv
expect_stderr "run: six digits when they say why" 1 "calscope: check failed: samples/breast_cancer_gnb.csv: ece = 0.0586385 (want ece<0.0586)" "$CALSCOPE" report --check 'ece<0.0586' samples/breast_cancer_gnb.csv
expect_stderr "run: a subnormal threshold is a number" 1 "calscope: check failed: $TINY: ece = 0.18 (want ece<=1e-320)" "$CALSCOPE" report --check 'ece<=1e-320' "$TINY"
expect_stderr "run: --compat with the interval distance" 2 "calscope: $TINY: --compat does not apply to the interval distance" "$CALSCOPE" report --compat netcal --distance interval:0.1,0.2 "$TINY"
# a usage error found while loading is exit 2, not 3 (it was 3)
expect_stderr "run: loader usage error exits 2" 2 "calscope: $TINY: a split column is found by name: it needs a header row" "$CALSCOPE" report --no-header --recal ts --recal-split-column c "$TINY"
# the tolerance is on the numbers as written (engine/num/rowsum.h): 0.7,0.2,0.1 is 1 with
# --sum-tol 0 although its double sum is 0.9999999999999999 (it was refused); 1e-14 short of 1
# is refused, its sum printed with every digit it takes (ten would print 1)
printf 'label,p_a,p_b,p_c\n0,0.7,0.2,0.1\n' >"$TMP/sum1ulp.csv"
expect_stderr "run: --sum-tol 0 takes a row that is 1 as written" 0 "" "$CALSCOPE" report --sum-tol 0 "$TMP/sum1ulp.csv"
printf 'label,p_a,p_b,p_c\n0,0.7,0.2,0.09999999999999\n' >"$TMP/sumshort.csv"
expect_stderr "run: --sum-tol 0 prints the sum that is not 1" 3 "calscope: $TMP/sumshort.csv:2:2: probabilities sum to 0.9999999999999899, not 1 within 0" "$CALSCOPE" report --sum-tol 0 "$TMP/sumshort.csv"
expect_stderr "run: --sum-tol 1e-320 is accepted and printed as given" 3 "calscope: $TMP/sumshort.csv:2:2: probabilities sum to 0.9999999999999899, not 1 within 1e-320" "$CALSCOPE" report --sum-tol 1e-320 "$TMP/sumshort.csv"
expect_stderr "run: a tolerance that covers it" 0 "" "$CALSCOPE" report --sum-tol 1e-13 "$TMP/sumshort.csv"
expect_stderr "run: sum to 0.9 (ten digits read well)" 3 "calscope: $TMP/badsum.csv:2:2: probabilities sum to 0.9, not 1 within 0.001" \
    sh -c 'printf "label,p_a,p_b,p_c\n0,0.3,0.3,0.3\n" >"$1"; "$2" report "$1"' sh "$TMP/badsum.csv" "$CALSCOPE"
printf 'label,p_a,p_b\n0,0.8,0.2\n' >"$TMP/one.csv"
expect_stderr "run: --recal iso with no row to fit on exits 3" 3 "calscope: $TMP/one.csv+iso: $TMP/one.csv: iso has no row to fit on in some cross-fitting fold (too few samples)" "$CALSCOPE" report --recal iso "$TMP/one.csv"
# the per-case histogram is K*M*M counts: bounded, refused with the largest M that fits
{ printf 'case,label'; for c in $(seq 0 19); do printf ',p_%d' "$c"; done; printf '\n'
  for r in 1 2 3; do printf 'c%d,%d' "$r" "$r"; for c in $(seq 0 19); do printf ',0.05'; done; printf '\n'; done; } >"$TMP/case20.csv"
expect_stderr "run: case histogram above 2^24 cells" 2 "calscope: $TMP/case20.csv: the per-case reliability histogram needs K*M*M = 20*1000*1000 cells, more than 16777216: use --bins 915 or fewer" "$CALSCOPE" report --bins 1000 "$TMP/case20.csv"
expect_rc "run: case histogram at the largest M that fits" 0 "$CALSCOPE" report --format json --bins 915 "$TMP/case20.csv"
expect_match "run: that histogram is K x M x M" "^20 915 915$" "$(json_get "(lambda h: '%d %d %d' % (len(h), len(h[0]), len(h[0][0])))(d['files'][0]['cases']['reliability_histogram'])")"

# output that cannot be written is exit 3 everywhere (here a full device)
if [ -w /dev/full ]; then
    for args in "report --help" "report --version" "--help" "--version" "report $TINY" "report --format json $TINY"; do
        # shellcheck disable=SC2086
        expect_stderr "full device: calscope $args" 3 "calscope: error writing the output" sh -c '"$0" "$@" >/dev/full' "$CALSCOPE" $args
    done
    expect_rc "full device: json --plot with the plot's stderr full" 3 sh -c '"$0" report --format json --plot "$1" >/dev/null 2>/dev/full' "$CALSCOPE" "$TINY"
fi

# --- RECE-G at both ends of the sigma range, against the definition computed here (docs/metrics.md:
# Normal(c, sigma) masses on the M uniform bins, normalised; sum_i |A_i - C_i| / N)
rece_g_ref() { /usr/bin/python3 - "$1" <<'PY'
import math, sys
s = float(sys.argv[1]); M = 15
conf = [0.9, 0.9, 0.7, 0.7, 0.7]; acc = [1, 0, 1, 1, 0]   # TINY's top-1 confidence and correctness
Phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))
A = [0.0] * M; C = [0.0] * M
for c, a in zip(conf, acc):
    w = [Phi((( i + 1) / M - c) / s) - Phi((i / M - c) / s) for i in range(M)]
    t = sum(w)
    for i in range(M):
        A[i] += w[i] / t * a; C[i] += w[i] / t * c
print(repr(sum(abs(x - y) for x, y in zip(A, C)) / len(conf)))
PY
}
for sg in 10 1e-6 0.1; do
    run "$CALSCOPE" report --format json --sigma "$sg" "$TINY"
    num_near "rece_g at --sigma $sg matches the definition" "$(json_get "d['files'][0]['metrics']['rece_g']")" "$(rece_g_ref "$sg")"
done

# --- CSV carries --ci and --topk-bars (columns documented in docs/json.md)
run "$CALSCOPE" report --format csv --ci 20 --seed 4 --topk-bars 1,full,5 "$TINY"
expect_match "csv --ci --topk-bars: header" "^path,rows,classes,rejected,selected,accuracy,ece,ace,mce,rece_g,rece_m,brier,nll,aece,sce,smece,l2ce,l2ce_debiased,ece_sweep,accuracy_lo,accuracy_hi,ece_lo,ece_hi,ace_lo,ace_hi,mce_lo,mce_hi,rece_g_lo,rece_g_hi,rece_m_lo,rece_m_hi,brier_lo,brier_hi,nll_lo,nll_hi,aece_lo,aece_hi,sce_lo,sce_hi,smece_lo,smece_hi,l2ce_lo,l2ce_hi,l2ce_debiased_lo,l2ce_debiased_hi,ece_sweep_lo,ece_sweep_hi,topk_1,topk_full,topk_5$" "$(printf '%s\n' "$OUT" | head -1)"
csv_row=$(printf '%s\n' "$OUT" | sed -n 2p)
OUT=$("$CALSCOPE" report --format json --ci 20 --seed 4 --topk-bars 1,full,5 "$TINY")
want=$(json_get "','.join(['' if v is None else repr(v) for m in ('accuracy','ece','ace','mce','rece_g','rece_m','brier','nll','aece','sce','smece','l2ce','l2ce_debiased','ece_sweep') for v in (d['files'][0]['metrics'].get(m+'_ci') or [None, None])] + [repr(d['files'][0]['topk'][i]['ece']) for i in (0, 1, 1)])")
got=$(printf '%s\n' "$csv_row" | cut -d, -f20-)
if [ "$(printf '%s' "$got" | /usr/bin/python3 -c "import sys; a=sys.stdin.read().strip().split(','); b='$want'.split(','); print(all((x=='' and y=='') or (x!='' and y!='' and float(x)==float(y)) for x,y in zip(a,b)) and len(a)==len(b))")" = True ]
then ok "csv --ci --topk-bars: the JSON's intervals and bars (full and 5 are k = 2 here)"
else not_ok "csv --ci --topk-bars: the JSON's intervals and bars" "csv  $got" "json $want"; fi
if [ -f samples/digits_ts.csv ]; then
    run "$CALSCOPE" report --format json --topk-bars 1,2,3,5,10,full samples/digits_ts.csv
    expect_match "topk: 10 and full on a 10-class file are one bar" "^\[1, 2, 3, 5, 10\]$" "$(json_get "[t['k'] for t in d['files'][0]['topk']]")"
    run "$CALSCOPE" report --topk-bars 1,2,3,5,10,full samples/digits_ts.csv
    expect_match "topk: text lists k=10 once" "^1$" "$(printf '%s\n' "$OUT" | grep -c '^  k=10 ')"
fi

# --- thread counts: the documented maximum works, above it is refused (also in the dashboard)
expect_rc "threads: --threads 256 (the maximum) works" 0 "$CALSCOPE" report --ci 5 --threads 256 "$TINY"
expect_stderr "dashboard: --threads 1024" 2 "calscope: --threads: need a whole number between 0 (all cores) and 256, got '1024'"$'\n'"$DHINT" "$CALSCOPE" --threads 1024 "$TINY"
expect_stderr "dashboard: --sigma 1e300" 2 "calscope: --sigma: need a number in [1e-06, 10], got '1e300'"$'\n'"$DHINT" "$CALSCOPE" --sigma 1e300 "$TINY"
expect_stderr "dashboard: --ci 100001" 2 "calscope: --ci: need a whole number between 0 and 100000, got '100001'"$'\n'"$DHINT" "$CALSCOPE" --ci 100001 "$TINY"
expect_stderr "dashboard: --repeats 0" 2 "calscope: --repeats: need a whole number between 1 and 100000, got '0'"$'\n'"$DHINT" "$CALSCOPE" --repeats 0 "$TINY"
expect_stderr "dashboard: --sum-tol 1" 2 "calscope: --sum-tol: need a tolerance in [0, 1), got '1'"$'\n'"$DHINT" "$CALSCOPE" --sum-tol 1 "$TINY"
expect_stderr "dashboard: --bins 1001" 2 "calscope: --bins: need a whole number between 1 and 1000, got '1001'"$'\n'"$DHINT" "$CALSCOPE" --bins 1001 "$TINY"

expect_rc "help: exit 0" 0 "$CALSCOPE" report --help
for f in --lens --bins --binning --gamma --sigma --mixture --distance --select --format --plot \
         --ci --seed --threads --curve --check --compat --torch-dtype --ascii --skip-bad-rows --sum-tol; do
    expect_match "help: lists $f" -- "$f" "$OUT"
done
expect_match "help: ACE explained" "not Nixon's adaptive ECE" "$OUT"
expect_match "help: defaults shown" "default 15" "$OUT"

# --- input errors
expect_rc "input: missing file" 3 "$CALSCOPE" report "$TMP/nope.csv"
expect_match "input: missing file message" "^calscope: .*nope\.csv" "$ERR"
mkdir "$TMP/adir.csv"
expect_rc "input: a directory is unreadable" 3 "$CALSCOPE" report "$TMP/adir.csv"
printf 'label,p_0,p_1\n0,0.5,0.5\n1,1.5,-0.5\n0,0.2,0.8\n' >"$TMP/badprob.csv"
expect_rc "input: probability outside [0,1]" 3 "$CALSCOPE" report "$TMP/badprob.csv"
expect_match "input: FILE:LINE:COL message" "^calscope: [^ ]*badprob\.csv:3:[0-9]+: " "$ERR"
printf 'label,p_0,p_1\n0,0.5,0.5\n1,0.5\n' >"$TMP/ragged.csv"
expect_rc "input: ragged row" 3 "$CALSCOPE" report "$TMP/ragged.csv"
expect_match "input: ragged row names line 3" "ragged\.csv:3:" "$ERR"
for f in samples/broken/*; do
    [ -e "$f" ] || continue
    b=$(basename "$f")
    expect_rc "broken: $b exits 3" 3 "$CALSCOPE" report "$f"
    first=$(printf '%s\n' "$ERR" | head -1)
    # every rejection, row- or file-level (empty, header only, bad gzip), reads FILE:LINE:COL: reason
    expect_match "broken: $b first stderr line is FILE:LINE:COL: reason" "^calscope: samples/broken/$(printf '%s' "$b" | sed 's/[.[\*^$]/\\&/g'):[1-9][0-9]*:[1-9][0-9]*: [A-Za-z]" "$first"
    # and its own message, verbatim (tests/e2e/broken_expected.tsv; a new sample needs its line)
    want=$(awk -F '\t' -v b="$b" '$1 == b { sub(/^[^\t]*\t/, ""); print; exit }' tests/e2e/broken_expected.tsv)
    if [ -z "$want" ]; then
        not_ok "broken: $b has its message in tests/e2e/broken_expected.tsv"
    elif [ "$first" = "calscope: samples/broken/$b$want" ]; then
        ok "broken: $b message verbatim"
    else
        not_ok "broken: $b message verbatim (got '$first', want 'calscope: samples/broken/$b$want')"
    fi
done

# class names that are digits out of column order match labels by name, in both
# loader paths, and the load summary says so; a perfect classifier is 100 % accurate
printf 'label,p_1,p_0\n1,0.9,0.1\n0,0.2,0.8\n' >"$TMP/digits_swapped.csv"
for loader in auto csv; do
    run env CALSCOPE_LOADER=$loader "$CALSCOPE" report "$TMP/digits_swapped.csv"
    expect_match "classes by name ($loader path): accuracy 1" "accuracy +1\.000000" "$OUT"
    expect_match "classes by name ($loader path): the classes line" \
        "^  classes   named by numbers other than 0\.\.1 in column order \(p_1, p_0\): labels match names, not positions$" "$OUT"
done
run "$CALSCOPE" report --format json "$TMP/digits_swapped.csv"
expect_match "classes by name: JSON class_note" "^named by numbers other than 0\.\.1 in column order \(p_1, p_0\): labels match names, not positions$" "$(json_get "d['files'][0]['load']['class_note']")"
run "$CALSCOPE" report --select 'y == 1' --format json "$TMP/digits_swapped.csv"
expect_match "classes by name: y == 1 selects the p_1 row" "^1 1$" "$(json_get "d['files'][0]['selected'], d['files'][0]['metrics']['accuracy']")"
run "$CALSCOPE" report --format json "$TINY"
expect_match "classes in order: class_note null" "^None$" "$(json_get "d['files'][0]['load']['class_note']")"

# several files, one rejected: the good one is still reported, exit 3
expect_rc "multi: one rejected file exits 3" 3 "$CALSCOPE" report --format json "$TINY" "$TMP/badprob.csv"
expect_match "multi: good file still in JSON, bad one under errors" "^1 1 3$" "$(json_get "len(d['files']), len(d['errors']), d['errors'][0]['status']")"
expect_rc "multi: input error wins over a failing check" 3 "$CALSCOPE" report --check 'ece<=0' "$TINY" "$TMP/badprob.csv"

# --skip-bad-rows
expect_rc "skip: exit 0" 0 "$CALSCOPE" report --format json --skip-bad-rows "$TMP/badprob.csv"
expect_match "skip: rows and rejected" "^2 1$" "$(json_get "d['files'][0]['rows'], d['files'][0]['rejected']" | tr -d '(),')"
expect_match "skip: skipped row reported" "badprob\.csv:3:" "$(json_get "d['files'][0]['load']['skipped']")"
run "$CALSCOPE" report --skip-bad-rows "$TMP/badprob.csv"
expect_match "skip: text lists the skipped row" "skipped +[^ ]*badprob\.csv:3:" "$OUT"

# --- --select
expect_rc "select: exit 0" 0 "$CALSCOPE" report --format json --select 'conf > 0.8' "$TINY"
expect_match "select: selected count, rows unchanged" "^2 5$" "$(json_get "d['files'][0]['selected'], d['files'][0]['rows']" | tr -d '(),')"
num_near "select: ece on the kept samples" "$(json_get "d['files'][0]['metrics']['ece']")" 0.4
expect_match "select: settings.select" "^conf > 0.8$" "$(json_get "d['files'][0]['settings']['select']")"
run "$CALSCOPE" report --select 'y == b' "$TINY"
expect_match "select: text says what it kept" "select +'y == b' kept 3 of 5 samples" "$OUT"
expect_rc "select: keeping nothing is not an error" 0 "$CALSCOPE" report --format json --select 'conf > 0.95' "$TINY"
expect_match "select: nothing kept gives null metrics" "^0 None$" "$(json_get "d['files'][0]['selected'], d['files'][0]['metrics']['ece']" | tr -d '(),')"
expect_rc "select: a check on an empty selection fails" 1 "$CALSCOPE" report --select 'conf > 0.95' --check 'ece<=1' "$TINY"

# --- --plot
width_ok() { /usr/bin/python3 -c 'import sys; t=sys.stdin.buffer.read().decode("utf-8"); sys.exit(0 if t and max(len(l) for l in t.split("\n")) <= 80 else 1)'; }
expect_rc "plot: exit 0 (UTF-8)" 0 env LC_ALL=C.UTF-8 "$CALSCOPE" report --plot "$TINY"
if printf '%s' "$OUT" | width_ok; then ok "plot: within 80 columns"; else not_ok "plot: within 80 columns"; fi
expect_match "plot: axis ticks" "0 +\.25 +\.5 +\.75 +1" "$OUT"
expect_match "plot: UTF-8 glyphs in a UTF-8 locale" "█" "$OUT"
expect_match "plot: legend" "over-confident" "$OUT"
expect_match "plot: thin bins flagged" "! thin bin" "$OUT"
expect_rc "plot: exit 0 (C locale)" 0 env LC_ALL=C "$CALSCOPE" report --plot "$TINY"
if printf '%s' "$OUT" | LC_ALL=C grep -q '[^ -~]'; then not_ok "plot: ASCII only in the C locale" "${OUT:0:300}"; else ok "plot: ASCII only in the C locale"; fi
expect_match "plot: ASCII bars" "#" "$OUT"
expect_rc "plot: --ascii in a UTF-8 locale" 0 env LC_ALL=C.UTF-8 "$CALSCOPE" report --plot --ascii "$TINY"
if printf '%s' "$OUT" | LC_ALL=C grep -q '[^ -~]'; then not_ok "plot: --ascii gives ASCII" "${OUT:0:300}"; else ok "plot: --ascii gives ASCII"; fi
expect_rc "plot: with json" 0 "$CALSCOPE" report --plot --format json "$TINY"
if printf '%s' "$OUT" | /usr/bin/python3 -c 'import json,sys; json.load(sys.stdin)' 2>/dev/null
then ok "plot: json stdout stays parseable"; else not_ok "plot: json stdout stays parseable" "${OUT:0:300}"; fi
expect_match "plot: with json the plot is on stderr" "perfect calibration" "$ERR"

# --- resampling: intervals, curves, comparison, top-k bars
expect_rc "ci: exit 0" 0 "$CALSCOPE" report --format json --ci 50 --seed 7 "$TINY"
expect_match "ci: <metric>_ci pairs around the value" "^True$" "$(json_get "all(len(d['files'][0]['metrics'][k+'_ci'])==2 and d['files'][0]['metrics'][k+'_ci'][0] <= d['files'][0]['metrics'][k+'_ci'][1] for k in ('ece','ace','mce','rece_g','brier','nll','accuracy'))")"
ci1=$OUT
expect_rc "ci: same seed, other thread count" 0 "$CALSCOPE" report --format json --ci 50 --seed 7 --threads 1 "$TINY"
if [ "$ci1" = "$OUT" ]; then ok "ci: identical output for any --threads"; else not_ok "ci: identical output for any --threads"; fi
expect_rc "ci: text" 0 "$CALSCOPE" report --ci 30 "$TINY"
expect_match "ci: text shows the interval" "ece +0\.180000 +\[ *[0-9.]+, +[0-9.]+\]" "$OUT"

expect_rc "curve size: exit 0" 0 "$CALSCOPE" report --format json --curve size --fractions 0.2,50%,1 --repeats 5 "$TINY"
expect_match "curve size: kind, repeats, replace" "^size 5 False$" "$(json_get "d['files'][0]['curve']['kind'], d['files'][0]['curve']['repeats'], d['files'][0]['curve']['replace']" | tr -d "(),'")"
expect_match "curve size: fractions and ceil(f*N) rows" "^\[\(0\.2, 1\), \(0\.5, 3\), \(1(\.0)?, 5\)\]$" "$(json_get "[(p['fraction'], p['rows']) for p in d['files'][0]['curve']['points']]")"
expect_match "curve size: stats per metric" "^True$" "$(json_get "all(set(m) >= {'mean','sd','lo','hi','abs_dev'} for p in d['files'][0]['curve']['points'] for m in p['metrics'].values())")"
expect_rc "curve bins: exit 0" 0 "$CALSCOPE" report --format json --curve bins --bins-list 2,5,10 --repeats 5 "$TINY"
expect_match "curve bins: points keyed by bins" "^\[2, 5, 10\]$" "$(json_get "[p['bins'] for p in d['files'][0]['curve']['points']]")"
expect_rc "curve: text table" 0 "$CALSCOPE" report --curve size --repeats 3 "$TINY"
expect_match "curve: text header" "size curve: 3 repeats without replacement" "$OUT"
expect_rc "curve: plot" 0 env LC_ALL=C "$CALSCOPE" report --plot --curve size --repeats 3 "$TINY"
expect_match "curve: plot legend" "\* ece +o rece_g +: 95% band" "$OUT"
expect_rc "curve: --fractions without --curve size" 2 "$CALSCOPE" report --fractions 0.5 "$TINY"
expect_rc "curve: fraction above 1" 2 "$CALSCOPE" report --curve size --fractions 0.5,2 "$TINY"
expect_rc "curve: --curve bogus" 2 "$CALSCOPE" report --curve bogus "$TINY"
expect_rc "curve: --replace needs --curve size" 2 "$CALSCOPE" report --replace "$TINY"

awk -F, 'NR==1{print "id," $0; next} {print NR-1 "," $0}' "$TINY" >"$TMP/a.csv"
awk -F, 'NR==1{print "id," $0; next} {print NR-1 "," $1 ",0.5,0.5," $4}' "$TINY" >"$TMP/b.csv"
expect_rc "compare: exit 0" 0 "$CALSCOPE" report --format json --compare --repeats 50 "$TMP/a.csv" "$TMP/b.csv"
expect_match "compare: entries" "^True$" "$(json_get "all(set(e) >= {'metric','a','b','diff','lo','hi','p_better'} for e in d['compare']) and len(d['compare']) > 0")"
num_near "compare: ece of A" "$(json_get "[e['a'] for e in d['compare'] if e['metric']=='ece'][0]")" 0.18
num_near "compare: diff = a - b" "$(json_get "[e['diff'] - (e['a'] - e['b']) for e in d['compare'] if e['metric']=='ece'][0]")" 0
expect_match "compare: paired by id" "^True 5$" "$(json_get "d['compare_info']['by_id'], d['compare_info']['pairs']" | tr -d '(),')"
expect_rc "compare: needs two files" 2 "$CALSCOPE" report --compare "$TMP/a.csv"
expect_rc "compare: text" 0 "$CALSCOPE" report --compare --repeats 20 "$TMP/a.csv" "$TMP/b.csv"
expect_match "compare: text table" "metric +A +B +diff +95% interval +p_better" "$OUT"

expect_rc "topk: exit 0" 0 "$CALSCOPE" report --format json --topk-bars 1,2,full "$TINY"
expect_match "topk: k values, full = K = 2 given once" "^\[1, 2\]$" "$(json_get "[t['k'] for t in d['files'][0]['topk']]")"
num_near "topk: k=1 is the top-1 ECE" "$(json_get "d['files'][0]['topk'][0]['ece']")" 0.18
expect_rc "topk: bad k" 2 "$CALSCOPE" report --topk-bars 0,1 "$TINY"
expect_rc "compat: a known library" 0 "$CALSCOPE" report --format json --compat netcal "$TINY"
expect_match "compat: settings.compat names it" "^netcal$" "$(json_get "d['files'][0]['settings']['compat']")"
expect_rc "compat: an unknown library is a usage error" 2 "$CALSCOPE" report --compat sklearn "$TINY"

# TTA long file: rece_m is a number; case column: the "cases" object
printf 'id,tta,label,p_a,p_b\na,0,0,0.8,0.2\na,1,0,0.6,0.4\nb,0,1,0.3,0.7\nb,1,1,0.45,0.55\n' >"$TMP/tta.csv"
expect_rc "tta: exit 0" 0 "$CALSCOPE" report --format json "$TMP/tta.csv"
expect_match "tta: rece_m is a number, samples are the tta 0 rows" "^True 4 2$" "$(json_get "isinstance(d['files'][0]['metrics']['rece_m'], float), d['files'][0]['rows'], d['files'][0]['samples']" | tr -d '(),')"
expect_rc "tta: rece_m check passes" 0 "$CALSCOPE" report --check 'rece_m<=1' "$TMP/tta.csv"
expect_rc "tta: --mixture gmm3 applies to it" 0 "$CALSCOPE" report --format json --mixture gmm3 "$TMP/tta.csv" "$TINY"
expect_match "tta: --mixture gmm3 is in its settings" "^gmm3$" "$(json_get "d['files'][0]['settings']['mixture']")"
printf 'case,label,p_a,p_b\nc1,0,0.9,0.1\nc1,1,0.9,0.1\nc2,1,0.2,0.8\nc2,1,0.4,0.6\n' >"$TMP/cases.csv"
expect_rc "cases: exit 0" 0 "$CALSCOPE" report --format json --bins 4 "$TMP/cases.csv"
expect_match "cases: count, stats, K x M x M histogram" "^2 True 2 4 4$" "$(json_get "d['files'][0]['cases']['count'], all(set(v) >= {'mean','sd'} for v in d['files'][0]['cases']['metrics'].values()), len(d['files'][0]['cases']['reliability_histogram']), len(d['files'][0]['cases']['reliability_histogram'][0]), len(d['files'][0]['cases']['reliability_histogram'][0][0])" | tr -d '(),')"
expect_match "json: no cases object without a case column" "^False$" "$(cd . && OUT=$("$CALSCOPE" report --format json "$TINY") && json_get "'cases' in d['files'][0]")"

# --- the summary: a file over 4 MB is read on two threads, which sum its rows' probabilities
# instead of keeping them when the report prints nothing else of them. Read on one thread
# (CALSCOPE_LOADER_THREADS=1) the file is loaded whole, and the report must print the same
# values to the last digit, in every format and with other bins. A blank --select keeps every
# sample and is summed too (it prints its count).
awk 'BEGIN { srand(7); printf "label"; for (c = 0; c < 10; c++) printf ",p_%d", c; printf "\n";
             for (i = 0; i < 30000; i++) { s = 0; for (c = 0; c < 10; c++) { w[c] = rand() ^ 4; s += w[c] }
               printf "%d", int(rand() * 10); for (c = 0; c < 10; c++) printf ",%.12g", w[c] / s; printf "\n" } }' >"$TMP/big.csv"
if [ "$(wc -c <"$TMP/big.csv")" -gt 4200000 ]; then ok "one pass: the file is over 4 MB"; else not_ok "one pass: the file is over 4 MB"; fi
for args in "--format json" "--format json --bins 7" "--format csv" "--plot" "--check sce<=1"; do
    # shellcheck disable=SC2086
    run "$CALSCOPE" report $args "$TMP/big.csv"; A=$OUT; ARC=$RC
    # shellcheck disable=SC2086
    run env CALSCOPE_LOADER_THREADS=1 "$CALSCOPE" report $args "$TMP/big.csv"; B=$OUT
    if [ "$ARC" -eq 0 ] && [ "$RC" -eq 0 ] && [ "$A" = "$B" ]; then ok "one pass: report $args prints what the whole load prints"
    else not_ok "one pass: report $args prints what the whole load prints" "exit $ARC / $RC" "$(diff <(printf '%s\n' "$A") <(printf '%s\n' "$B") | head -5)"; fi
done
run "$CALSCOPE" report --format json --select '' "$TMP/big.csv"; A=$OUT; ARC=$RC
run env CALSCOPE_LOADER_THREADS=1 "$CALSCOPE" report --format json --select '' "$TMP/big.csv"
if [ "$ARC" -eq 0 ] && [ "$RC" -eq 0 ] && [ "$A" = "$OUT" ]; then ok "one pass: a blank --select prints what the whole load prints"
else not_ok "one pass: a blank --select prints what the whole load prints" "exit $ARC / $RC" "$(diff <(printf '%s\n' "$A") <(printf '%s\n' "$OUT") | head -5)"; fi
expect_match "one pass: a blank --select prints its count" '"selected": 30000' "$A"

# --- real samples, when present
for f in samples/digits_gnb.csv samples/breast_cancer_logreg.csv; do
    [ -f "$f" ] || continue
    expect_rc "sample: $f" 0 "$CALSCOPE" report --format json "$f"
    expect_match "sample: $f ece in [0,mce]" "^True$" "$(json_get "0 <= d['files'][0]['metrics']['ece'] <= d['files'][0]['metrics']['mce']")"
    expect_rc "sample: $f --plot" 0 env LC_ALL=C.UTF-8 "$CALSCOPE" report --plot "$f"
    if printf '%s' "$OUT" | width_ok; then ok "sample: $f plot within 80 columns"; else not_ok "sample: $f plot within 80 columns"; fi
done

# --version, and the dashboard's own flags (it exits before opening a screen on these)
expect_rc "version: report" 0 "$CALSCOPE" report --version
expect_match "version: report prints it" "^calscope [0-9]+\.[0-9]+\.[0-9]+$" "$OUT"
expect_rc "version: dashboard" 0 "$CALSCOPE" --version
expect_match "version: dashboard prints it" "^calscope [0-9]+\.[0-9]+\.[0-9]+$" "$OUT"
expect_rc "dashboard: unknown option is a usage error" 2 "$CALSCOPE" --bogus samples/digits_ts.csv
expect_stderr "dashboard: names the unknown option, not the file after it" 2 "calscope: unknown option '--bogus'"$'\n'"$DHINT" "$CALSCOPE" --bogus samples/digits_ts.csv
expect_rc "dashboard: bad --bins is a usage error" 2 "$CALSCOPE" --bins 0 samples/digits_ts.csv
expect_stderr "dashboard: --bins message from the engine's parser" 2 "calscope: --bins: need a whole number between 1 and 1000, got '0'"$'\n'"$DHINT" "$CALSCOPE" --bins 0 samples/digits_ts.csv

done_testing
