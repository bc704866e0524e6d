#!/usr/bin/env bash
# End-to-end tests of `calscope report` (SPEC §5): exit codes, JSON / text / CSV output,
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

# --- CSV
expect_rc "csv: exit 0" 0 "$CALSCOPE" report --format csv "$TINY" "$TINY"
expect_match "csv: header" "^path,rows,classes,rejected,selected,accuracy,ece,ace,mce,rece_g,rece_m,brier,nll,aece,sce$" "$(printf '%s\n' "$OUT" | head -1)"
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
expect_rc "check: unknown metric is a usage error" 2 "$CALSCOPE" report --check 'eec<=0.1' "$TINY"
expect_rc "check: missing operator is a usage error" 2 "$CALSCOPE" report --check 'ece=0.1' "$TINY"
expect_rc "check: missing number is a usage error" 2 "$CALSCOPE" report --check 'ece<=' "$TINY"

# --- usage errors
expect_rc "usage: unknown flag" 2 "$CALSCOPE" report --no-such-flag "$TINY"
expect_match "usage: unknown flag names it and hints --help" "unknown option '--no-such-flag'.*" "$ERR"
expect_match "usage: hint" "calscope report --help" "$ERR"
expect_rc "usage: --bins abc" 2 "$CALSCOPE" report --bins abc "$TINY"
expect_rc "usage: --bins 0" 2 "$CALSCOPE" report --bins 0 "$TINY"
expect_rc "usage: --sigma -1" 2 "$CALSCOPE" report --sigma -1 "$TINY"
expect_rc "usage: --lens bogus" 2 "$CALSCOPE" report --lens bogus "$TINY"
expect_rc "usage: --format xml" 2 "$CALSCOPE" report --format xml "$TINY"
expect_rc "usage: flag without value" 2 "$CALSCOPE" report "$TINY" --bins
expect_rc "usage: no FILE" 2 "$CALSCOPE" report
expect_match "usage: no FILE message" "no FILE given" "$ERR"
expect_rc "usage: --plot takes no value" 2 "$CALSCOPE" report --plot=yes "$TINY"
expect_rc "usage: bad --select" 2 "$CALSCOPE" report --select 'conf >> 0.5' "$TINY"
expect_match "usage: bad --select shows a caret" "\^" "$ERR"
expect_rc "help: exit 0" 0 "$CALSCOPE" report --help
for f in --lens --bins --binning --gamma --sigma --mixture --distance --select --format --plot \
         --ci --seed --threads --curve --check --compat --ascii --skip-bad-rows --sum-tol; do
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

# issue 15.1: class names that are digits out of column order match labels by name, in both
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
expect_match "topk: k values (full = K)" "^\[1, 2, 2\]$" "$(json_get "[t['k'] for t in d['files'][0]['topk']]")"
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
printf 'case,label,p_a,p_b\nc1,0,0.9,0.1\nc1,1,0.9,0.1\nc2,1,0.2,0.8\nc2,1,0.4,0.6\n' >"$TMP/cases.csv"
expect_rc "cases: exit 0" 0 "$CALSCOPE" report --format json --bins 4 "$TMP/cases.csv"
expect_match "cases: count, stats, K x M x M histogram" "^2 True 2 4 4$" "$(json_get "d['files'][0]['cases']['count'], all(set(v) >= {'mean','sd'} for v in d['files'][0]['cases']['metrics'].values()), len(d['files'][0]['cases']['reliability_histogram']), len(d['files'][0]['cases']['reliability_histogram'][0]), len(d['files'][0]['cases']['reliability_histogram'][0][0])" | tr -d '(),')"
expect_match "json: no cases object without a case column" "^False$" "$(cd . && OUT=$("$CALSCOPE" report --format json "$TINY") && json_get "'cases' in d['files'][0]")"

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
expect_match "dashboard: names the unknown option, not the file after it" "unknown option: --bogus" "$ERR"
expect_rc "dashboard: bad --bins is a usage error" 2 "$CALSCOPE" --bins 0 samples/digits_ts.csv
expect_match "dashboard: --bins message from the engine's parser" "between 1 and 1000000" "$ERR"

done_testing
