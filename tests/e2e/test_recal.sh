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
expect_match "methods: compare entries carry the method (5 methods x 14 columns)" "^True$" \
    "$(json_get "len(d['compare']) == 70 and all(set(e) >= {'method','metric','a','b','diff','lo','hi','p_better'} for e in d['compare'])")"
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
expect_match "reference: named" "^  \[2\]  samples/digits_logreg.csv \(reference\)$" "$OUT"
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

# --- a named split column (--recal-split-column): fit on the fit/train rows, measure every method
# on the others. 60 rows; rows i % 3 == 0 are "eval", the rest "fit" or "Train" (any case).
# Four confidences, every 4th group of four rows wrong: each bin's fitting rows are >= 70 % right.
/usr/bin/python3 - "$TMP" <<'PY'
import sys
d = sys.argv[1]
confs = [0.62, 0.71, 0.83, 0.95]
rows = []
for i in range(60):
    c = confs[i % 4]
    pred = (i // 4) % 2
    label = pred if (i // 4) % 4 != 3 else 1 - pred
    p1 = c if pred == 1 else round(1 - c, 2)
    split = ["eval", "fit", "Train"][i % 3]
    rows.append((i, label, round(1 - p1, 2), p1, split))
hdr = "id,label,p_0,p_1,split\n"
fmt = lambda r: "s%d,%d,%.2f,%.2f,%s\n" % r
with open(d + "/split.csv", "w") as f: f.write(hdr + "".join(fmt(r) for r in rows))
with open(d + "/eval.csv", "w") as f: f.write(hdr + "".join(fmt(r) for r in rows if r[4] == "eval"))
with open(d + "/nosplit.csv", "w") as f: f.write("id,label,p_0,p_1\n" + "".join("s%d,%d,%.2f,%.2f\n" % r[:4] for r in rows))
# the same rows, split "cal" / "test"
with open(d + "/cal.csv", "w") as f:
    f.write("id,label,p_0,p_1,Part\n" + "".join("s%d,%d,%.2f,%.2f,%s\n" % (r[:4] + ("test" if r[4] == "eval" else "cal",)) for r in rows))
PY
C1="--ci 30 --seed 5 --threads 2"
C="$C1 --repeats 30 --compare"   # (--repeats is checked before --recal implies --compare)
run "$CALSCOPE" report --format json $C1 $TMP/eval.csv
eval_only=$(json_get "d['files'][0]['metrics']")
expect_rc "split column: exit 0" 0 "$CALSCOPE" report --format json $C --recal hist,iso,ts --recal-split-column split $TMP/split.csv
expect_match "split column: every method on the 20 evaluation rows" "^\[20, 20, 20, 20\]$" "$(json_get "[m['rows'] for m in d['methods']]")"
expect_match "split column: the file's values and intervals = a report of its evaluation rows alone" "^True$" \
    "$(json_get "all(d['methods'][0]['metrics'][m] == ${eval_only}[m] and d['methods'][0]['metrics'][m+'_ci'] == ${eval_only}[m+'_ci'] for m in ('accuracy','ece','ace','mce','aece','rece_g','sce','brier','nll'))")"
expect_match "split column: fitted on the 40 fit/Train rows" "^\[40, 40, 40\]$" "$(json_get "[m['recal']['fit_rows'] for m in d['methods'][1:]]")"
expect_match "split column: recal says which split" "^split-column split \['fit', 'train'\]$" \
    "$(json_get "' '.join(str(x) for x in (d['methods'][1]['recal']['fit'], d['methods'][1]['recal']['split_column']['column'], d['methods'][1]['recal']['split_column']['fit_values']))")"
expect_match "split column: methods_info and file settings say which split" "^column split True$" \
    "$(json_get "' '.join(str(x) for x in (d['methods_info']['recal_split']['kind'], d['files'][0]['settings']['split_column'], 'split-column' in d['methods_info']['evaluated_on']))")"
# hist fitted on the fit rows only, by an independent computation: each evaluation row's confidence
# becomes its bin's accuracy on the fitting rows (15 bins (i/15, (i+1)/15]), then the ECE of that
want_hist=$(/usr/bin/python3 - "$TMP/split.csv" <<'PY'
import csv, sys
M = 15
def ubin(x):
    b = 0
    while b < M - 1 and x > (b + 1) / M: b += 1
    return b
rows = [(int(r['label']), float(r['p_0']), float(r['p_1']), r['split']) for r in csv.DictReader(open(sys.argv[1]))]
def conf_correct(r):
    c, pred = (r[1], 0) if r[1] >= r[2] else (r[2], 1)
    return c, int(pred == r[0])
n, k = [0] * M, [0] * M
for r in rows:
    if r[3].lower() in ('fit', 'train'):
        c, ok = conf_correct(r); n[ubin(c)] += 1; k[ubin(c)] += ok
ev = []
for r in rows:
    if r[3].lower() in ('fit', 'train'): continue
    c, ok = conf_correct(r); b = ubin(c)
    ev.append((k[b] / n[b] if n[b] else c, ok))
assert all(c > 0.5 for c, _ in ev)
ece = 0.0
for b in range(M):
    inb = [(c, ok) for c, ok in ev if ubin(c) == b]
    if inb: ece += len(inb) / len(ev) * abs(sum(ok for _, ok in inb) / len(inb) - sum(c for c, _ in inb) / len(inb))
print(repr(ece))
PY
)
expect_match "split column: hist ECE = bin accuracies of the fitting rows (independent)" "^True$" \
    "$(json_get "abs(d['methods'][1]['metrics']['ece'] - $want_hist) < 1e-12 and d['methods'][1]['metrics']['ece'] != d['methods'][0]['metrics']['ece']")"
expect_match "split column: predictions kept" "^True$" "$(json_get "all(m['metrics']['accuracy'] == d['methods'][0]['metrics']['accuracy'] for m in d['methods'])")"
expect_rc "split column: text exit 0" 0 "$CALSCOPE" report $C --recal hist --recal-split-column SPLIT $TMP/split.csv
expect_match "split column: text names the fitting rows" "fitted on the 40 rows whose SPLIT is fit or train" "$(unwrap '^  \[[0-9]+\] ' <<<"$OUT")"
expect_match "split column: text says measured on the rest" "measured on the other 20 rows only" "$OUT"
expect_rc "split column: named value" 0 "$CALSCOPE" report --format json $C --recal hist --recal-split-column=part=CAL $TMP/cal.csv
expect_match "split column: named value fits the same rows" "^\[20, 20\] 40 \['CAL'\]$" \
    "$(json_get "' '.join(str(x) for x in ([m['rows'] for m in d['methods']], d['methods'][1]['recal']['fit_rows'], d['methods_info']['recal_split']['fit_values']))")"
expect_match "split column: named value, same ECE" "^True$" "$(json_get "abs(d['methods'][1]['metrics']['ece'] - $want_hist) < 1e-12")"
# refusals
expect_rc "split column: with --recal-split is a usage error" 2 "$CALSCOPE" report --recal hist --recal-split 0.5 --recal-split-column split $TMP/split.csv
expect_match "split column: says give one" "give one" "$ERR"
expect_rc "split column: with --recal-folds is a usage error" 2 "$CALSCOPE" report --recal hist --recal-folds 3 --recal-split-column split $TMP/split.csv
expect_rc "split column: needs --recal" 2 "$CALSCOPE" report --compare --recal-split-column split $TMP/split.csv $TMP/split.csv
expect_rc "split column: no column name" 2 "$CALSCOPE" report --recal hist --recal-split-column =fit $TMP/split.csv
expect_rc "split column: empty fitting value" 2 "$CALSCOPE" report --recal hist --recal-split-column split= $TMP/split.csv
expect_rc "split column: a file without the column is refused" 3 "$CALSCOPE" report --recal hist --recal-split-column split $TMP/nosplit.csv
expect_match "split column: FILE:1:1 message" "nosplit.csv:1:1: no split column 'split' in the header" "$ERR"
expect_rc "split column: no fitting row is an input error" 3 "$CALSCOPE" report --recal hist --recal-split-column split=holdout $TMP/split.csv
expect_match "split column: no fitting row, values listed" "no row to fit on \(fitting rows: value 'holdout'; its values: 'eval', 'fit', 'Train'\)" "$ERR"
expect_rc "split column: no evaluation row is an input error" 3 "$CALSCOPE" report --recal hist --recal-split-column part=cal $TMP/nosplit.csv $TMP/cal.csv --reference 2
/usr/bin/python3 -c "import sys; open(sys.argv[1] + '/allfit.csv', 'w').write('label,p_0,p_1,split\n0,0.7,0.3,fit\n1,0.2,0.8,train\n')" "$TMP"
expect_rc "split column: every row fitting is an input error" 3 "$CALSCOPE" report --recal hist --recal-split-column split $TMP/allfit.csv
expect_match "split column: no evaluation row message" "no row to evaluate on" "$ERR"

# --recal implies --compare, so --repeats (paired resamples) goes with it alone
expect_rc "recal: --repeats without --compare" 0 "$CALSCOPE" report --format json --recal ts --repeats 50 samples/breast_cancer_gnb.csv
expect_rc "recal: --recal-folds with --recal-split is a usage error" 2 "$CALSCOPE" report --recal ts --recal-split 0.5 --recal-folds 3 samples/breast_cancer_gnb.csv
expect_match "recal: says there are no folds" "no folds" "$ERR"

done_testing
