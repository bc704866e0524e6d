#!/bin/bash
# End-to-end: `calscope report --compare` with several methods, post-hoc recalibration (--recal),
# the reference, rankings and mass sections.
source "$(dirname "$0")/lib.sh"
S=samples
R="--ci 40 --repeats 40 --seed 3 --threads 2"

# --- the table's numbers equal single-file reports with the same flags
run "$CALSCOPE" report --format json --ci 40 --seed 3 --threads 2 $S/digits_logreg.csv
single=$(json_get "d['files'][0]['metrics']")
run "$CALSCOPE" report --format json --ci 40 --seed 3 --threads 2 --lens topk:3 $S/digits_logreg.csv
single_k=$(json_get "d['files'][0]['metrics']")
expect_rc "methods: json exit 0" 0 "$CALSCOPE" report --format json $R --compare $S/digits_gnb.csv $S/digits_logreg.csv $S/digits_ts.csv --recal ts,hist,iso
expect_match "methods: 6 rows" "^6$" "$(json_get "len(d['methods'])")"
same=$(json_get "all(d['methods'][1]['metrics'][m] == ${single}[m] and d['methods'][1]['metrics'][m+'_ci'] == ${single}[m+'_ci'] for m in ('accuracy','ece','ace','mce','aece','rece_g','sce','brier','nll'))")
expect_match "methods: values and intervals = single-file report" "^True$" "$same"
expect_match "methods: top-k column = single-file --lens topk:3" "^True$" \
    "$(json_get "d['methods'][1]['metrics']['topk_ece'] == ${single_k}['ece'] and d['methods'][1]['metrics']['topk_ece_ci'] == ${single_k}['ece_ci']")"
expect_match "methods: names" "^\['samples/digits_gnb.csv', 'samples/digits_logreg.csv', 'samples/digits_ts.csv', 'samples/digits_gnb.csv\+ts', 'samples/digits_gnb.csv\+hist', 'samples/digits_gnb.csv\+iso'\]$" \
    "$(json_get "[m['name'] for m in d['methods']]")"
expect_match "methods: compare entries carry the method" "^True$" \
    "$(json_get "len(d['compare']) == 50 and all(set(e) >= {'method','metric','a','b','diff','lo','hi','p_better'} for e in d['compare'])")"
expect_match "methods: diff = method - reference" "^True$" \
    "$(json_get "all(abs(e['diff'] - (e['a'] - e['b'])) < 1e-12 for e in d['compare'])")"
expect_match "methods: recalibration keeps the prediction (accuracy unchanged)" "^True$" \
    "$(json_get "all(m['metrics']['accuracy'] == d['methods'][0]['metrics']['accuracy'] for m in d['methods'][3:])")"
expect_match "methods: cross-fitted, log-probabilities for a probability file" "^cross-fit 5 log-probabilities$" \
    "$(json_get "' '.join(str(d['methods'][3]['recal'][k]) for k in ('fit','folds','scores'))")"
expect_match "rankings: ece ranks" "^True$" "$(json_get "sorted(d['rankings']['ece']) == [1,2,3,4,5,6]")"
expect_match "mass: top-10 means per method" "^True$" \
    "$(json_get "all(len(m['topk_mean']) == 10 and len(m['class_mean']) == 10 for m in d['mass']['methods']) and d['mass']['methods'][0]['topk_delta'][0] == 0")"

# --- a file with itself: zero difference, zero-width interval
expect_rc "self: exit 0" 0 "$CALSCOPE" report --format json $R --compare $S/digits_logreg.csv $S/digits_logreg.csv
expect_match "self: diff 0, interval [0, 0]" "^True$" \
    "$(json_get "all(e['diff'] == 0 and e['lo'] == 0 and e['hi'] == 0 for e in d['compare'])")"

# --- logits: temperature from logits; Platt on a binary file; Platt refused on multiclass
expect_rc "logits: exit 0" 0 "$CALSCOPE" report $R --compare $S/digits_logreg_logits.csv --recal ts
expect_match "logits: says so" "T = [0-9.]+ on all rows \(from logits\)" "$OUT"
expect_rc "platt: binary" 0 "$CALSCOPE" report --format json $R --compare $S/breast_cancer_gnb.csv --recal platt,ts
expect_match "platt: a and b" "^True$" "$(json_get "isinstance(d['methods'][1]['recal']['a'], float) and isinstance(d['methods'][1]['recal']['b'], float)")"
expect_rc "platt: multiclass is a usage error" 2 "$CALSCOPE" report $R --compare $S/digits_gnb.csv --recal platt
expect_match "platt: message" "Platt scaling needs a binary file" "$ERR"

# --- held-out split: every method measured on the same held-out rows
expect_rc "split: exit 0" 0 "$CALSCOPE" report --format json $R --compare $S/digits_gnb.csv $S/digits_logreg.csv --recal ts,iso --recal-split 0.5
expect_match "split: rows" "^True$" \
    "$(json_get "len(set(m['rows'] for m in d['methods'])) == 1 and 700 < d['methods'][0]['rows'] < 1100 and d['methods'][2]['recal']['fit'] == 'split'")"
expect_match "split: fit rows + evaluated rows = file" "^1797$" \
    "$(json_get "d['methods'][2]['recal']['fit_rows'] + d['methods'][2]['rows']")"

# --- reference, text and CSV
expect_rc "reference: exit 0" 0 "$CALSCOPE" report $R --compare $S/digits_gnb.csv $S/digits_logreg.csv --reference 2
expect_match "reference: named" "reference: samples/digits_logreg.csv" "$OUT"
expect_match "text: rankings" "Rankings \(1 = best" "$OUT"
expect_match "text: mass" "Mass: mean k-th largest probability" "$OUT"
expect_rc "select: exit 0" 0 "$CALSCOPE" report $R --compare $S/digits_gnb.csv $S/digits_logreg.csv --select 'y == 3'
expect_match "select: class table" "mean probability of each class \(selection 'y == 3'\)" "$OUT"
expect_rc "csv: exit 0" 0 "$CALSCOPE" report --format csv $R --compare $S/digits_gnb.csv --recal hist,iso
expect_match "csv: header + 3 rows" "^4$" "$(printf '%s\n' "$OUT" | wc -l)"
expect_match "csv: columns" "^method,recal,reference,rows,accuracy,accuracy_lo" "$OUT"
expect_rc "usage: one file without --recal" 2 "$CALSCOPE" report --compare $S/digits_gnb.csv
expect_rc "usage: bad method" 2 "$CALSCOPE" report --recal foo $S/digits_gnb.csv
expect_rc "usage: reference out of range" 2 "$CALSCOPE" report --compare $S/digits_gnb.csv $S/digits_ts.csv --reference 3

done_testing
