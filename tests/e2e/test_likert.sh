#!/usr/bin/env bash
# End-to-end tests of the Likert view in `calscope report` (--likert, --likert-cuts; the
# inter-interval distance of Kirchenbauer, Oaks & Heim 2022, "What is Your Metric Telling You?",
# §5.3): JSON "likert" entries, text table, CSV columns, the base settings (--select, --lens
# class:C) carried into every category, and usage errors. Every expected number below is worked by
# hand from the formulas of docs/metrics.md.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Twelve samples, four classes. conf = max p, pred = first maximal class.
#   row  conf  pred label correct   uniform bin (M = 15) of conf
#    1   0.30   0    0     yes      (4/15, 5/15]
#    2   0.30   1    1     yes      (4/15, 5/15]
#    3   0.33   0    0     yes      (4/15, 5/15]      (three-way tie: pred is the first)
#    4   0.50   0    2     no       (7/15, 8/15]
#    5   0.50   0    0     yes      (7/15, 8/15]
#    6   0.60   0    1     no       (8/15, 9/15]      (0.6 = 9/15 exactly: upper edge)
#    7   0.60   0    3     no       (8/15, 9/15]
#    8   0.66   0    1     no       (9/15, 10/15]
#    9   0.90   0    0     yes      (13/15, 14/15]
#   10   0.90   0    1     no       (13/15, 14/15]
#   11   0.90   0    2     no       (13/15, 14/15]
#   12   1.00   3    3     yes      (14/15, 1]
# Category [l, h) (the last [l, h]) keeps the samples with conf in it; its ECE is
# sum over bins n_b/N * max(0, l - acc_b, acc_b - h) (interval distance on the accuracy).
# Default cuts 0, 0.33, 0.66, 1:
#   [0, 0.33):    rows 1-2, one bin, acc 1 -> gap 1 - 0.33 = 0.67; ece 0.67, count 2
#   [0.33, 0.66): rows 3-7; bins {3}: acc 1 -> 0.34; {4,5}: acc 1/2 -> 0; {6,7}: acc 0 -> 0.33
#                 ece (0.34 + 0 + 2*0.33)/5 = 0.2, count 5
#   [0.66, 1]:    rows 8-12; {8}: acc 0 -> 0.66; {9,10,11}: acc 1/3 -> 0.66 - 1/3; {12}: acc 1 -> 0
#                 ece (0.66 + 3*(0.66 - 1/3))/5 = 1.64/5 = 0.328, count 5
cat >"$TMP/lik.csv" <<'EOF'
label,p_a,p_b,p_c,p_d
0,0.3,0.28,0.22,0.2
1,0.2,0.3,0.25,0.25
0,0.33,0.33,0.33,0.01
2,0.5,0.2,0.2,0.1
0,0.5,0.2,0.2,0.1
1,0.6,0.2,0.1,0.1
3,0.6,0.2,0.1,0.1
1,0.66,0.34,0,0
0,0.9,0.05,0.05,0
1,0.9,0.05,0.05,0
2,0.9,0.05,0.05,0
3,0,0,0,1
EOF
LIK=$TMP/lik.csv

near() { # NAME GOT WANT_EXPR (python expression; None for JSON null)
    if /usr/bin/python3 -c "
import sys
g, w = $2, $3
sys.exit(0 if (g is None and w is None) or (g is not None and w is not None and abs(g - w) < 1e-12) else 1)" 2>/dev/null
    then ok "$1"; else not_ok "$1" "got $2, want $3"; fi
}
lk() { json_get "d['files'][${2:-0}]['likert'][$1]"; }   # INDEX [FILE]
lkv() { json_get "d['files'][${3:-0}]['likert'][$1]['$2']"; }   # INDEX KEY [FILE]

# --- default cut points
expect_rc "json --likert: exit 0" 0 "$CALSCOPE" report --format json --likert "$LIK"
expect_match "json: three categories" "^3$" "$(json_get "len(d['files'][0]['likert'])")"
expect_match "json: keys lo hi count ece" "^True$" "$(json_get "all(sorted(e) == ['count','ece','hi','lo'] for e in d['files'][0]['likert'])")"
near "json: [0] lo" "$(lkv 0 lo)" 0
near "json: [0] hi" "$(lkv 0 hi)" 0.33
near "json: [1] lo" "$(lkv 1 lo)" 0.33
near "json: [1] hi" "$(lkv 1 hi)" 0.66
near "json: [2] lo" "$(lkv 2 lo)" 0.66
near "json: [2] hi" "$(lkv 2 hi)" 1
expect_match "json: counts 2 5 5 (0.33 goes up, 0.66 goes up, 1.0 is in the last)" "^\[2, 5, 5\]$" "$(json_get "[e['count'] for e in d['files'][0]['likert']]")"
near "json: low ece = 1 - 0.33" "$(lkv 0 ece)" "1 - 0.33"
near "json: medium ece = (0.34 + 2*0.33)/5" "$(lkv 1 ece)" 0.2
near "json: high ece = (0.66 + 3*(0.66 - 1/3))/5" "$(lkv 2 ece)" 0.328
# the file's own metrics are untouched by --likert (top-1 ECE over all 12 samples, tvd)
near "json: metrics.accuracy unchanged" "$(json_get "d['files'][0]['metrics']['accuracy']")" "6/12"
expect_match "json: settings.distance stays tvd" "^tvd$" "$(json_get "d['files'][0]['settings']['distance']")"
expect_rc "json: no likert key without --likert" 0 "$CALSCOPE" report --format json "$LIK"
expect_match "json: 'likert' absent by default" "^False$" "$(json_get "'likert' in d['files'][0]")"

# --- custom cut points 0, 0.2, 0.8, 1
#   [0, 0.2):   nothing -> count 0, ece null
#   [0.2, 0.8): rows 1-8; {1,2,3}: acc 1 -> 1 - 0.8 = 0.2; {4,5}: 1/2 -> 0; {6,7}: 0 -> 0.2;
#               {8}: 0 -> 0.2; ece (3*0.2 + 2*0.2 + 0.2)/8 = 0.15
#   [0.8, 1]:   rows 9-12; {9,10,11}: 1/3 -> 0.8 - 1/3; {12}: 1 -> 0; ece 3*(0.8 - 1/3)/4 = 0.35
expect_rc "json --likert-cuts 0,0.2,0.8,1: exit 0" 0 "$CALSCOPE" report --format json --likert-cuts 0,0.2,0.8,1 "$LIK"
expect_match "json cuts: counts 0 8 4" "^\[0, 8, 4\]$" "$(json_get "[e['count'] for e in d['files'][0]['likert']]")"
expect_match "json cuts: empty category has ece null" "^None$" "$(lkv 0 ece)"
near "json cuts: [0.2, 0.8) ece" "$(lkv 1 ece)" 0.15
near "json cuts: [0.8, 1] ece" "$(lkv 2 ece)" 0.35
expect_match "json cuts: bounds 0 0.2 0.8 1" "^\[0, 0\.2, 0\.8, 1\]$" "$(json_get "[e['lo'] for e in d['files'][0]['likert']] + [d['files'][0]['likert'][-1]['hi']]")"
expect_rc "--likert-cuts=LIST spelling and --likert together" 0 "$CALSCOPE" report --format json --likert --likert-cuts=0,0.5,1 "$LIK"
# [0, 0.5): rows 1-3 in one bin, acc 1 -> 1 - 0.5; [0.5, 1]: rows 4-12
#   {4,5}: 1/2 -> 0; {6,7}: 0 -> 0.5; {8}: 0 -> 0.5; {9,10,11}: 1/3 -> 0.5 - 1/3; {12}: 1 -> 0
#   ece (2*0.5 + 0.5 + 3*(0.5 - 1/3))/9 = 2/9
expect_match "cuts 0,0.5,1: counts 3 9" "^\[3, 9\]$" "$(json_get "[e['count'] for e in d['files'][0]['likert']]")"
near "cuts 0,0.5,1: low ece" "$(lkv 0 ece)" 0.5
near "cuts 0,0.5,1: high ece" "$(lkv 1 ece)" "2/9"

# --- the base selection applies inside every category: y == 0 keeps rows 1, 3, 5, 9 (all correct)
#   [0, 0.33): row 1 -> 1 - 0.33; [0.33, 0.66): rows 3, 5 in two bins, acc 1 each -> 1 - 0.66;
#   [0.66, 1]: row 9, acc 1 -> max(0, 0.66 - 1, 1 - 1) = 0
expect_rc "--select 'y == 0' --likert: exit 0" 0 "$CALSCOPE" report --format json --select 'y == 0' --likert "$LIK"
expect_match "select: counts 1 2 1" "^\[1, 2, 1\]$" "$(json_get "[e['count'] for e in d['files'][0]['likert']]")"
near "select: low ece" "$(lkv 0 ece)" "1 - 0.33"
near "select: medium ece" "$(lkv 1 ece)" "1 - 0.66"
near "select: high ece" "$(lkv 2 ece)" 0

# --- class lens: the categories are on p[a], the target is 1[y == a]
#   p_a (target): .3(1) .2(0) .33(1) .5(0) .5(1) .6(0) .6(0) .66(0) .9(1) .9(0) .9(0) 0(0)
#   [0, 0.33): .3 (t 1) -> 0.67; .2 (t 0, bin (2/15, 3/15]) -> 0; 0 (t 0) -> 0; ece 0.67/3
#   [0.33, 0.66): .33 (1) -> 0.34; {.5, .5} acc 1/2 -> 0; {.6, .6} acc 0 -> 0.33; ece 1.0/5
#   [0.66, 1]: .66 (0) -> 0.66; {.9 x3} acc 1/3 -> 0.66 - 1/3; ece 1.64/4
expect_rc "--lens class:a --likert: exit 0" 0 "$CALSCOPE" report --format json --lens class:a --likert "$LIK"
expect_match "class lens: counts 3 5 4" "^\[3, 5, 4\]$" "$(json_get "[e['count'] for e in d['files'][0]['likert']]")"
near "class lens: low ece" "$(lkv 0 ece)" "0.67/3"
near "class lens: medium ece" "$(lkv 1 ece)" 0.2
near "class lens: high ece" "$(lkv 2 ece)" "1.64/4"

# --- classes named by numbers out of column order: a category is on the lens's column, and
# means what the same condition means in --select (class:0 is the column p_0, the second; the
# selection p[0] names it too). Columns p_2, p_0, p_1; M = 15 uniform bins.
#   row label  p_2  p_0  p_1      class:0 (p_0, t = 1[y == 0])   class:1 (p_1, t = 1[y == 1])
#    1    2    .7   .2   .1        .2 t0                          .1 t0
#    2    0    .6   .3   .1        .3 t1                          .1 t0
#    3    1    .5   .1   .4        .1 t0                          .4 t1
#    4    0    .1   .8   .1        .8 t1                          .1 t0
#    5    0    .2   .5   .3        .5 t1                          .3 t0
#    6    1    .1   .2   .7        .2 t0                          .7 t1
#    7    2    .1   .2   .7        .2 t0                          .7 t0
#    8    1    .3   .6   .1        .6 t0                          .1 t1
# class:0  [0, .33): .1 alone (acc 0, inside) 0; .2 x3 (acc 0) 0; .3 (acc 1) 1 - .33 -> .67/5
#          [.33, .66): .5 (acc 1) 1 - .66 = .34; .6 (acc 0, bin (8/15, 9/15]) .33 -> .67/2
#          [.66, 1]: .8 (acc 1) inside -> 0; counts 5 2 1
# class:1  [0, .33): .1 x4 (acc 1/4) inside, .3 (acc 0) inside -> 0, count 5
#          [.33, .66): .4 (acc 1) 1 - .66 = .34, count 1; [.66, 1]: .7 x2 (acc 1/2) .66 - .5 = .16
cat >"$TMP/num.csv" <<'EOF2'
label,p_2,p_0,p_1
2,0.7,0.2,0.1
0,0.6,0.3,0.1
1,0.5,0.1,0.4
0,0.1,0.8,0.1
0,0.2,0.5,0.3
1,0.1,0.2,0.7
2,0.1,0.2,0.7
1,0.3,0.6,0.1
EOF2
NUM=$TMP/num.csv
expect_rc "numbered classes, --lens class:0 --likert: exit 0" 0 "$CALSCOPE" report --format json --lens class:0 --likert "$NUM"
expect_match "class:0: counts 5 2 1 (column p_0)" "^\[5, 2, 1\]$" "$(json_get "[e['count'] for e in d['files'][0]['likert']]")"
near "class:0: low ece" "$(lkv 0 ece)" "0.67/5"
near "class:0: medium ece" "$(lkv 1 ece)" "0.67/2"
near "class:0: high ece" "$(lkv 2 ece)" 0
expect_rc "class:0 with --select 'p[0] in [0.33, 0.66)' and the interval distance: exit 0" 0 \
    "$CALSCOPE" report --format json --lens class:0 --select 'p[0] in [0.33, 0.66)' --distance interval:0.33,0.66 "$NUM"
expect_match "--select p[0]: the medium category's 2 samples" "^2$" "$(json_get "d['files'][0]['selected']")"
near "--select p[0]: the medium category's ece" "$(json_get "d['files'][0]['metrics']['ece']")" "0.67/2"
for lens in class:1 'class:#2'; do
    expect_rc "numbered classes, --lens $lens --likert: exit 0" 0 "$CALSCOPE" report --format json --lens "$lens" --likert "$NUM"
    expect_match "$lens: counts 5 1 2 (column p_1)" "^\[5, 1, 2\]$" "$(json_get "[e['count'] for e in d['files'][0]['likert']]")"
    near "$lens: low ece" "$(lkv 0 ece)" 0
    near "$lens: medium ece" "$(lkv 1 ece)" 0.34
    near "$lens: high ece" "$(lkv 2 ece)" "0.66 - 0.5"
done
# some names numbers, some not: class:cat is the first column, whose position no bare number
# may name (p_cat: .7 t1, .2 t0, .1 t0 -> [0, .33) 2 samples acc 0: 0; [.66, 1] .7 acc 1: 0)
printf 'label,p_cat,p_1,p_bird\ncat,0.7,0.2,0.1\n1,0.2,0.5,0.3\nbird,0.1,0.1,0.8\n' >"$TMP/mixed.csv"
expect_rc "mixed names, --lens class:cat --likert: exit 0" 0 "$CALSCOPE" report --format json --lens class:cat --likert "$TMP/mixed.csv"
expect_match "class:cat: counts 2 0 1" "^\[2, 0, 1\]$" "$(json_get "[e['count'] for e in d['files'][0]['likert']]")"
expect_match "class:cat: eces 0 null 0" "^\[0, None, 0\]$" "$(json_get "[e['ece'] for e in d['files'][0]['likert']]")"

# --- several files: one likert list per file
cp "$LIK" "$TMP/lik2.csv"
expect_rc "two files --likert: exit 0" 0 "$CALSCOPE" report --format json --likert-cuts 0,0.5,1 "$LIK" "$TMP/lik2.csv"
expect_match "two files: both have likert" "^\[2, 2\]$" "$(json_get "[len(f['likert']) for f in d['files']]")"
near "two files: second file's high ece" "$(lkv 1 ece 1)" "2/9"

# --- text
expect_rc "text --likert: exit 0" 0 "$CALSCOPE" report --likert "$LIK"
expect_match "text: section title" "Likert categories" "$OUT"
expect_match "text: low row" "\[0, 0\.33\) +2 +0\.670000" "$OUT"
expect_match "text: medium row" "\[0\.33, 0\.66\) +5 +0\.200000" "$OUT"
expect_match "text: high row (closed)" "\[0\.66, 1\] +5 +0\.328000" "$OUT"
expect_rc "text --likert-cuts: exit 0" 0 "$CALSCOPE" report --likert-cuts 0,0.2,0.8,1 "$LIK"
expect_match "text: empty category shows n/a" "\[0, 0\.2\) +0 +n/a" "$OUT"
expect_rc "text without --likert: exit 0" 0 "$CALSCOPE" report "$LIK"
expect_no_match "text: no Likert section by default" "Likert categories" "$OUT"

# --- CSV: two columns per category after the metrics
expect_rc "csv --likert: exit 0" 0 "$CALSCOPE" report --format csv --likert "$LIK"
expect_match "csv: header columns" "^path,.*,likert_0_0\.33_count,likert_0_0\.33_ece,likert_0\.33_0\.66_count,likert_0\.33_0\.66_ece,likert_0\.66_1_count,likert_0\.66_1_ece$" "$(printf '%s\n' "$OUT" | head -1)"
row=$(printf '%s\n' "$OUT" | sed -n 2p)
near "csv: low count" "$(printf '%s' "$row" | awk -F, '{print $(NF-5)}')" 2
near "csv: low ece" "$(printf '%s' "$row" | awk -F, '{print $(NF-4)}')" "1 - 0.33"
near "csv: medium ece" "$(printf '%s' "$row" | awk -F, '{print $(NF-2)}')" 0.2
near "csv: high count" "$(printf '%s' "$row" | awk -F, '{print $(NF-1)}')" 5
near "csv: high ece" "$(printf '%s' "$row" | awk -F, '{print $NF}')" 0.328
expect_rc "csv --likert-cuts with an empty category: exit 0" 0 "$CALSCOPE" report --format csv --likert-cuts 0,0.2,0.8,1 "$LIK"
expect_match "csv: empty category -> count 0 and an empty ece field" ",0,,8," "$(printf '%s\n' "$OUT" | sed -n 2p)"
expect_rc "csv without --likert: exit 0" 0 "$CALSCOPE" report --format csv "$LIK"
expect_no_match "csv: no likert columns by default" "likert" "$OUT"

# --- usage errors (exit 2, message names the flag)
expect_rc "--likert-cuts decreasing: exit 2" 2 "$CALSCOPE" report --likert-cuts 0,0.5,0.4 "$LIK"
expect_match "--likert-cuts decreasing: message" "likert-cuts.*increase" "$ERR"
expect_rc "--likert-cuts one value: exit 2" 2 "$CALSCOPE" report --likert-cuts 0.5 "$LIK"
expect_rc "--likert-cuts out of [0,1]: exit 2" 2 "$CALSCOPE" report --likert-cuts 0,1.5 "$LIK"
expect_rc "--likert-cuts not a number: exit 2" 2 "$CALSCOPE" report --likert-cuts 0,x,1 "$LIK"
expect_rc "--likert-cuts 18 values: exit 2" 2 "$CALSCOPE" report --likert-cuts 0,0.05,0.1,0.15,0.2,0.25,0.3,0.35,0.4,0.45,0.5,0.55,0.6,0.65,0.7,0.75,0.8,1 "$LIK"
expect_rc "--likert-cuts 17 values: exit 0" 0 "$CALSCOPE" report --format json --likert-cuts 0,0.05,0.1,0.15,0.2,0.25,0.3,0.35,0.4,0.45,0.5,0.55,0.6,0.65,0.7,0.75,1 "$LIK"
expect_match "17 cut points: 16 categories, counts add up to 12" "^16 12$" "$(json_get "len(d['files'][0]['likert']), sum(e['count'] for e in d['files'][0]['likert'])" | tr -d '(),')"
expect_rc "--likert=value: exit 2" 2 "$CALSCOPE" report --likert=1 "$LIK"
expect_rc "--likert-cuts without a value: exit 2" 2 "$CALSCOPE" report "$LIK" --likert-cuts
expect_rc "--likert with --lens classwise: exit 2" 2 "$CALSCOPE" report --likert --lens classwise "$LIK"
expect_match "classwise: message" "likert" "$ERR"
expect_rc "--likert with a group lens: exit 2" 2 "$CALSCOPE" report --likert --lens 'group:a,b' "$LIK"
expect_match "help mentions --likert-cuts" "--likert-cuts" "$("$CALSCOPE" report --help)"

done_testing
