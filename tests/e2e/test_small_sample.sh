#!/bin/bash
# The small-sample rule (docs/metrics.md "Too few to say"): on 4 segmentation cases no stable
# range is claimed, the size curve marks its subsets, the comparison says "too few paired cases
# to say" and marks its intervals; the dashboard's Variance view claims nothing either, and its
# Compare view's verdict follows --verdict-metric.
. "$(dirname "$0")/lib.sh"

# 4 cases: the three sample cases and case000's volumes again under a fourth name (softmax
# channels from NIfTI and from .npz: the same probabilities, so every difference is a tie)
P=$PWD/samples/seg/softmax
for kind in nifti npz; do
    {
        echo "case,probs,labels"
        for i in 0 1 2 0; do
            name=case00$i; [ "$kind" = npz ] && prob=npz/case00$i.npz || prob=nifti/case00$i.nii.gz
            echo "$name,$P/$prob,$P/labels/case00$i.nii.gz"
        done | awk -F, 'NR == 4 {$1 = "case003"} {print}' OFS=,
    } >"$TMP/m_$kind.csv"
    expect_rc "reduce: 4 cases ($kind)" 0 "$CALSCOPE" reduce --label-values 0,1,2,4 -o "$TMP/$kind.csst" "$TMP/m_$kind.csv"
done
expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "want: $2" "got:  $3"; fi; }

# ---- the bins curve: no stable claim on 4 cases, whatever the voxels ----------------------------
run "$CALSCOPE" report --curve bins --repeats 20 --seed 1 "$TMP/nifti.csst"
expect_no_match "4 cases: no point of the bins curve is marked stable" ' stable$' "$OUT"
expect_eq "4 cases: the rule is said" \
    "  no stable range: stability is only claimed on at least 10 cases (4 here)" \
    "$(printf '%s\n' "$OUT" | grep '^  no stable range')"
expect_match "4 cases: the header counts cases and voxels" \
    '^  bins curve: 20 repeats with replacement, N=4 cases, 8960 voxels \(cases are resampled, not voxels\)' "$OUT"
expect_match "4 cases: every bins point is marked too few" '^ +300 +8960 .*  too few$' "$OUT"
run "$CALSCOPE" report --format json --curve bins --repeats 20 --seed 1 "$TMP/nifti.csst"
expect_eq "4 cases JSON: stable null, cases 4, the rule's floors, every point too_few" "None 4 10 10 True" \
    "$(json_get "(lambda c: (c['stable'], c['cases'], c['stable_min_cases'], c['stable_min_per_bin'], all(p['too_few'] for p in c['points'])))(d['files'][0]['curve'])" | tr -d '(),')"

# ---- the size curve: subsets of fewer than 10 cases marked -------------------------------------
run "$CALSCOPE" report --curve size --repeats 5 --seed 1 "$TMP/nifti.csst"
expect_match "size curve on 4 cases: 1 case at 1 %, marked" '^ +0\.01 +1 .*  too few$' "$OUT"
expect_eq "size curve on 4 cases: the note" \
"  too few: fewer than 10 cases per subset (cases are the unit resampled): its
  spread is that of a handful of cases" "$(printf '%s\n' "$OUT" | grep -m1 -A1 '^  too few:')"
run "$CALSCOPE" report --format json --curve size --repeats 5 --seed 1 "$TMP/nifti.csst"
expect_eq "size curve JSON: cases 1,1,1,1,2,4, all too_few, too_few_below 10" "[1, 1, 1, 1, 2, 4] True 10 cases" \
    "$(json_get "(lambda c: ' '.join(map(str, ([p['rows'] for p in c['points']], all(p['too_few'] for p in c['points']), c['too_few_below'], c['unit']))))(d['files'][0]['curve'])")"
# rows: 150 rows at M = 15 are enough, fewer are not (digits: ceil(0.05 x 1797) = 90 rows)
run "$CALSCOPE" report --format json --curve size --repeats 2 --seed 1 samples/digits_ts.csv
expect_eq "size curve on rows: too_few below 150 rows (M=15)" "150 [(18, True), (90, True), (180, False), (450, False), (899, False), (1797, False)]" \
    "$(json_get "(lambda c: '%d %s' % (c['too_few_below'], [(p['rows'], p['too_few']) for p in c['points']]))(d['files'][0]['curve'])")"

# ---- the comparison: too few cases to say, intervals marked --------------------------------------
run "$CALSCOPE" report --compare --seed 1 "$TMP/nifti.csst" "$TMP/npz.csst"
expect_eq "compare on 4 cases: the verdict" \
    "verdict: too few paired cases to say (fewer than 10); ECE +0.0000 [+0.0000, +0.0000], P(better) n/a (a tie), 4 paired cases" \
    "$(unwrap '^verdict: ' <<<"$OUT" | grep '^verdict: ')"
run "$CALSCOPE" report --format json --compare --seed 1 "$TMP/nifti.csst" "$TMP/npz.csst"
expect_eq "compare JSON on 4 cases: too_few, the verdict's kind and floor" "True too few 4 10" \
    "$(json_get "(lambda c: ' '.join(map(str, (c['too_few'], c['verdict']['kind'], c['verdict']['pairs'], c['verdict']['min_pairs']))))(d['compare_info'])")"
# a pair of row files under the rule: 100 paired samples at M = 15 (the methods table's row too)
head -101 samples/digits_gnb.csv >"$TMP/a100.csv"
head -101 samples/digits_ts.csv >"$TMP/b100.csv"
run "$CALSCOPE" report --compare --metrics ece --seed 1 "$TMP/a100.csv" "$TMP/b100.csv"
expect_match "100 pairs: the two-file table marks the interval ?" '^  ece +0\.166642 +0\.040725 +-0\.125917  \[-0\.[0-9]{6}, -0\.[0-9]{6}\]\?  1\.000$' "$OUT"
expect_match "100 pairs: the methods table marks it ? (no *)" '^    \[2\] +0\.0407 \[[0-9., ]+\]  -0\.1259 \[-0\.[0-9]{4}, -0\.[0-9]{4}\]\?  p_better 1\.000$' "$OUT"
expect_eq "100 pairs: the note, wrapped" \
"  ? too few paired samples (100, fewer than 150): the interval and p_better rest
    on a bootstrap over too few samples per bin to decide anything" "$(printf '%s\n' "$OUT" | grep -m1 -A1 '^  ? too few')"
run "$CALSCOPE" report --format json --compare --seed 1 "$TMP/a100.csv" "$TMP/b100.csv"
expect_eq "100 pairs JSON: compare_info and vs_reference say too_few" "True True" \
    "$(json_get "d['compare_info']['too_few'], d['methods'][1]['vs_reference']['too_few']" | tr -d '(),')"
run "$CALSCOPE" report --format json --compare --seed 1 samples/digits_gnb.csv samples/digits_ts.csv
expect_eq "1797 pairs JSON: not too few" "False False" \
    "$(json_get "d['compare_info']['too_few'], d['methods'][1]['vs_reference']['too_few']" | tr -d '(),')"

# ---- the dashboard -----------------------------------------------------------------------------
if command -v tmux >/dev/null; then
    tmux_servers small
    dash() {
        new_server
        T new-session -d -x 80 -y 24 "$CALSCOPE $*; echo EXITED \$?; sleep 120"
    }
    dash "$TMP/nifti.csst"
    keys 3
    check_screen "Variance on 4 cases: the bins curve claims no stable range" \
        'bins curve: ECE vs M, 20 resamples of the cases; no stable range \(4 cases, <10\)' 60
    expect_no_match "Variance on 4 cases: no 'stable M'" 'stable M' "$SCREEN"
    check_screen "Variance on 4 cases: the size table's subsets marked, and why" '< too few: under 10 cases' 60
    expect_match "Variance on 4 cases: 1 case at 1 %, marked <" ' 0\.01 +1  [0-9.]+<' "$SCREEN"
    keys q

    dash --verdict-metric brier samples/digits_logreg.csv samples/digits_ts.csv
    keys 5
    if wait_joined 'verdict: no significant difference between digits_ts\.csv and digits_logreg\.csv; Brier -0\.0008 \[-0\.0017, \+0\.0001\], P\(better\) 0\.964, 1,797 paired samples' 60
    then ok "dashboard --verdict-metric brier: the Compare view's verdict is on Brier"
    else not_ok "dashboard --verdict-metric brier: the Compare view's verdict is on Brier" "$SCREEN"; fi
    keys p
    check_screen "methods panel: its column header" '^method +acc +\[ECE\]' 60
    if wait_joined 'methods \(p panel[^)]*\) verdict: no significant difference between digits_ts\.csv and digits_logreg\.csv; Brier .* 1,797 paired samples method +acc +\[ECE\]' 60
    then ok "methods panel: the verdict is pinned between the title and the column header"
    else not_ok "methods panel: the verdict is pinned between the title and the column header" "$SCREEN"; fi
    keys :
    check_cmdline "dashboard ':' on the Compare view"
    expect_match "dashboard ':' repeats --verdict-metric" ' --compare --verdict-metric brier ' "$CMD"
    keys Escape q

    # two statistics files of 4 cases: the methods table's pairs are cases
    dash "$TMP/nifti.csst" "$TMP/npz.csst"
    keys 5
    check_screen "dashboard, 4 paired cases: the verdict counts cases" \
        '^verdict: too few paired cases to say \(fewer than 10\); ECE \+0\.0000' 60
    check_screen "dashboard, 4 paired cases: the legend of ?" '^\? too few paired cases \(4, fewer than 10\) to decide anything$' 60
    keys q

    dash "$TMP/a100.csv" "$TMP/b100.csv"
    keys 5
    check_screen "dashboard, 100 pairs: the verdict says too few" \
        '^verdict: too few paired samples to say \(fewer than 150\); ECE -0\.1259' 60
    check_screen "dashboard, 100 pairs: the interval marked ?" '^b100\.csv .* -0\.1259 \[-0\.[0-9]{4},-0\.[0-9]{4}\]\? 1\.000$' 60
    check_screen "dashboard, 100 pairs: the legend of ?" '^\? too few paired samples \(100, fewer than 150\) to decide anything$' 60
    keys q
else
    ok "dashboard checks skipped: no tmux # SKIP"
fi

done_testing
