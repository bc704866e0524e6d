#!/usr/bin/env bash
# `report --compare` text fits 80 columns: every line of 2-file, 4-file and --recal comparisons
# with long file names, the verdict line first, and the text tables' numbers equal the JSON's
# for the --metrics chosen.
source "$(dirname "$0")/lib.sh"
S=samples
LONG=$TMP/a_very_long_directory_name_for_the_files_that_a_user_keeps_their_model_dumps_in
mkdir -p "$LONG"
for f in digits_gnb digits_ts digits_logreg digits_rf breast_cancer_gnb; do cp "$S/$f.csv" "$LONG/${f}_predictions_on_the_held_out_split.csv"; done
F() { echo "$LONG/$1_predictions_on_the_held_out_split.csv"; }
R="--repeats 40 --ci 40 --seed 5 --threads 2"

# check_width NAME: every line of $TMP/out is at most 80 display columns, the verdict first
check_width() {
    local wide
    wide=$(python3 -c 'import sys
for i, l in enumerate(open(sys.argv[1], encoding="utf-8").read().split("\n")):
    if len(l) > 80: print(i + 1, len(l), l[:60])' "$TMP/out")
    if [ -z "$wide" ]; then ok "$1: every line <= 80 columns"; else not_ok "$1: every line <= 80 columns" "$wide"; fi
}

# check_first NAME: the comparison part (after the files' own sections) begins with its verdict
check_first() {
    local first
    first=$(grep -m1 -E '^(verdict: |compare  A = |Methods \(|  selection )' "$TMP/out")
    expect_match "$1: the verdict line first" "^verdict: " "$first"
}

# check_numbers NAME: the methods table's values (legend numbers) equal the JSON's, 4 decimals
check_numbers() {
    python3 - "$TMP/out" "$TMP/json" "$2" <<'PY' && ok "$1: text values equal JSON" || not_ok "$1: text values equal JSON"
import json, re, sys
text = open(sys.argv[1]).read().split("\n")
js = json.load(open(sys.argv[2]))
metrics = sys.argv[3].split(",")
methods = js["methods"]
checked = 0
for i, l in enumerate(text):
    m = re.match(r"  method((?:\s+\S+)+)$", l)
    if not m or "k=" in l: continue
    heads = m.group(1).split()
    if not all(h.rstrip("!") in metrics for h in heads): continue
    for row in text[i + 1:i + 1 + len(methods)]:
        cells = row.split()
        k = int(cells[0].strip("[]")) - 1
        for h, c in zip(heads, cells[1:]):
            if "." not in c: break      # the rankings table: integers
            want = methods[k]["metrics"][h]
            assert f"{want:.4f}" == c, (h, k, c, want)
            checked += 1
assert checked >= len(metrics) * len(methods), checked
PY
}

run "$CALSCOPE" report --compare $R "$(F digits_gnb)" "$(F digits_ts)"
echo "$OUT" > "$TMP/out"
check_width "2 files"
check_first "2 files"
"$CALSCOPE" report --format json --compare $R "$(F digits_gnb)" "$(F digits_ts)" > "$TMP/json"
check_numbers "2 files" ece,ace,mce,brier,nll,smece
# the two-file table: A, B and diff = B - A (JSON's diff is a - b), six decimals
python3 - "$TMP/out" "$TMP/json" <<'PY' && ok "2 files: A/B table equals JSON compare" || not_ok "2 files: A/B table equals JSON compare"
import json, re, sys
text = open(sys.argv[1]).read()
section = text[text.index("compare  A = "):].split("\n\n")[0].split("\n")
rows = {l.split()[0]: l.split() for l in section if re.match(r"  [a-z_2]+ +-?[0-9]+\.[0-9]{6} ", l)}
shown = 0
for e in json.load(open(sys.argv[2]))["compare"]:
    if e["metric"] not in rows: continue
    r = rows[e["metric"]]
    assert r[1:4] == [f"{e['a']:.6f}", f"{e['b']:.6f}", f"{-e['diff']:.6f}"], (r, e)
    shown += 1
assert sorted(rows) == sorted("ece ace mce brier nll smece".split()) and shown == 6, (sorted(rows), shown)
PY

run "$CALSCOPE" report --compare $R "$(F digits_gnb)" "$(F digits_ts)" "$(F digits_logreg)" "$(F digits_rf)" \
    --metrics accuracy,ece,ace,mce,aece,rece_g,sce,brier,nll,smece,l2ce,l2ce_debiased,ece_sweep,topk_ece
echo "$OUT" > "$TMP/out"
check_width "4 files, every metric"
check_first "4 files"
expect_match "4 files: a legend names the methods by number" "  \[4\] " "$OUT"
"$CALSCOPE" report --format json --compare $R "$(F digits_gnb)" "$(F digits_ts)" "$(F digits_logreg)" "$(F digits_rf)" > "$TMP/json"
check_numbers "4 files" accuracy,ece,ace,mce,aece,rece_g,sce,brier,nll,smece,l2ce,l2ce_debiased,ece_sweep

run "$CALSCOPE" report --compare --recal ts,platt,hist,iso $R "$(F breast_cancer_gnb)"
echo "$OUT" > "$TMP/out"
check_width "--recal ts,platt,hist,iso"
check_first "--recal"
"$CALSCOPE" report --format json --compare --recal ts,platt,hist,iso $R "$(F breast_cancer_gnb)" > "$TMP/json"
check_numbers "--recal" ece,ace,mce,brier,nll,smece

run "$CALSCOPE" report --compare $R --metrics ece,nll "$(F digits_gnb)" "$(F digits_ts)"
COMPARE=$(sed -n '/^verdict: /,$p' <<<"$OUT")
expect_no_match "--metrics ece,nll: no brier row in the comparison" "^  brier" "$COMPARE"
expect_match "--metrics ece,nll: the nll block" "^  nll$" "$COMPARE"
expect_match "--metrics ece,nll: the table's columns" "^  method +ece +nll$" "$COMPARE"
expect_rc "--metrics without --compare: refused" 2 "$CALSCOPE" report --metrics ece "$(F digits_gnb)"
run "$CALSCOPE" report --metrics ece "$(F digits_gnb)"
expect_match "--metrics without --compare: says why" "--metrics needs --compare or --recal" "$ERR"
run "$CALSCOPE" report --format json --compare --metrics ece "$(F digits_gnb)" "$(F digits_ts)"
expect_match "--metrics with json: refused" "--metrics chooses the text tables' metrics; JSON and CSV always carry every metric" "$ERR"
run "$CALSCOPE" report --compare --metrics ece,bogus "$(F digits_gnb)" "$(F digits_ts)"
expect_match "--metrics: an unknown name" "--metrics: 'bogus' is not a metric of the comparison" "$ERR"

done_testing
