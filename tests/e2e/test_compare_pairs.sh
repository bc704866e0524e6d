#!/usr/bin/env bash
# End-to-end tests of what a comparison pairs and says: a verdict on a tie reads as the table's
# row; with a held-out split the reference's split decides the held-out samples of every method
# (a file whose own split column disagrees is refused at the row); files without ids read with
# --skip-bad-rows pair by their data row position; a recalibration that fails leaves the
# comparison of the others standing.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

A=samples/digits_gnb.csv
cp "$A" "$TMP/copy.csv"

# ---- a tie: the verdict's numbers are the table's row (no P(better)) ----
run "$CALSCOPE" report --compare "$A" "$TMP/copy.csv"
V=$(printf '%s\n' "$OUT" | unwrap '^verdict:' | grep '^verdict:')
expect_match "tie: the verdict says no difference" "^verdict: no significant difference between $TMP/copy.csv and $A; ECE \+0\.0000 \[\+0\.0000, \+0\.0000\], P\(better\) n/a \(a tie\), 1,797 paired samples$" "$V"
expect_match "tie: the table reads =" "^  ece +0\.136953 +0\.136953 +0\.000000 .* =$" "$OUT"
run "$CALSCOPE" report --compare --format json "$A" "$TMP/copy.csv"
expect_match "tie: JSON verdict p_better null, as the compare entry" "^None None no difference$" \
    "$(json_get "d['compare_info']['verdict']['p_better'], [e for e in d['compare'] if e['metric'] == 'ece'][0]['p_better'], d['compare_info']['verdict']['kind']")"

# ---- a held-out split: the reference's split decides for every method ----
# split.csv: digits_gnb with a split column (ids divisible by 3 fit); ts.csv: digits_ts with the
# same split, its rows in another order (paired by id); noid_*.csv: the same without ids
/usr/bin/python3 - samples/digits_gnb.csv samples/digits_ts.csv "$TMP" <<'PY'
import sys
gnb, ts, tmp = sys.argv[1:]
def rows(path):
    with open(path) as f:
        head = f.readline().rstrip('\n')
        return head, [l.rstrip('\n') for l in f if l.strip()]
def split_of(i): return 'fit' if i % 3 == 0 else ('test' if i % 2 else 'val')
def write(path, head, body):
    with open(path, 'w') as f: f.write(head + '\n' + ''.join(l + '\n' for l in body))
for src, name in ((gnb, 'split'), (ts, 'ts')):
    h, r = rows(src)
    body = [f'{l.split(",", 1)[0]},{split_of(int(l.split(",", 1)[0]))},{l.split(",", 1)[1]}' for l in r]
    if name == 'ts': body = body[::-1]
    write(f'{tmp}/{name}.csv', 'id,split,' + h.split(',', 1)[1], body)
    # without ids, in file order; 'val' written as 'test' (both held out: no disagreement)
    nb = [f'{split_of(int(l.split(",", 1)[0])).replace("val", "test")},{l.split(",", 1)[1]}' for l in r]
    write(f'{tmp}/noid_{name}.csv', 'split,' + h.split(',', 1)[1], nb)
    if name == 'split':
        bad = list(nb); bad[100] = 'fit,' + bad[100].split(',', 1)[1]   # data row 101 is 'test' in the reference
        write(f'{tmp}/noid_bad.csv', 'split,' + h.split(',', 1)[1], bad)
        badid = [l for l in body]; badid[7] = badid[7].replace(',test,', ',fit,', 1)  # id 7 is 'test'
        write(f'{tmp}/split_bad.csv', 'id,split,' + h.split(',', 1)[1], badid)
        # ids shifted by 1000 (pairing by row with a file without ids)
        write(f'{tmp}/id1000.csv', h, [f'{int(l.split(",", 1)[0]) + 1000},{l.split(",", 1)[1]}' for l in r])
        write(f'{tmp}/noid.csv', h.split(',', 1)[1], [l.split(',', 1)[1] for l in r])
PY
HELD=$(( 1797 - 599 ))   # ids 0..1796: 599 divisible by 3 fit, the rest are held out
cp "$TMP/split.csv" "$TMP/split_copy.csv"
run "$CALSCOPE" report --compare --format json --recal ts --recal-split-column split "$TMP/split.csv" "$TMP/split_copy.csv"
expect_match "split column, same data: exit 0, the file ties on the held-out samples" "^0 $HELD True True$" \
    "$RC $(json_get "d['methods'][1]['vs_reference']['pairs'], d['methods'][1]['metrics'] == d['methods'][0]['metrics'], all(v['equal'] for k, v in d['methods'][1]['vs_reference'].items() if isinstance(v, dict) and 'equal' in v)")"
run "$CALSCOPE" report --compare --format json --recal ts --recal-split-column split "$TMP/split.csv" "$TMP/ts.csv"
expect_match "split column, rows in another order: measured on the reference's held-out samples" "^0 $HELD $HELD$" \
    "$RC $(json_get "d['methods'][1]['vs_reference']['pairs'], d['methods'][2]['vs_reference']['pairs']")"
run "$CALSCOPE" report --compare --recal ts --recal-split-column split "$TMP/split.csv" "$TMP/split_bad.csv"
expect_match "split column disagrees (ids): refused at the row, both values named" \
    "^3 calscope: $TMP/split_bad.csv:9:2: --compare: split 'fit' of id '7' \(a fitting row\) differs from $TMP/split.csv:9 \(split 'test', held out\): the reference's split decides which samples are fitted on and which every method is measured on$" \
    "$RC $ERR"
run "$CALSCOPE" report --compare --recal ts --recal-split-column split "$TMP/noid_split.csv" "$TMP/noid_bad.csv"
expect_match "split column disagrees (no ids): refused at the data row" \
    "^3 calscope: $TMP/noid_bad.csv:102:1: --compare: split 'fit' of data row 101 \(a fitting row\) differs from $TMP/noid_split.csv:102 \(split 'test', held out\): " \
    "$RC $ERR"
run "$CALSCOPE" report --compare --format json --recal ts --recal-split-column split "$TMP/split.csv" "$TMP/noid_split.csv"
expect_match "split column: two held-out values ('val', 'test') agree" "^0 $HELD True$" \
    "$RC $(json_get "d['methods'][1]['vs_reference']['pairs'], d['methods'][1]['metrics'] == d['methods'][0]['metrics']")"
# --recal-split F: ids in the reference only; the reference's id hash decides, the other file follows by row
run "$CALSCOPE" report --compare --format json --recal iso --recal-split 0.5 "$TMP/id1000.csv" "$TMP/noid.csv"
P=$(json_get "d['methods'][1]['vs_reference']['pairs'], d['methods'][2]['vs_reference']['pairs'], d['methods'][1]['metrics'] == d['methods'][0]['metrics']")
expect_match "--recal-split with ids on one side: exit 0, one set of held-out samples, the copy ties" "^0 ([0-9]+) \1 True$" "$RC $P"
run "$CALSCOPE" report --compare --format json --recal iso --recal-split 0.5 "$TMP/id1000.csv" "$TMP/id1000.csv"
expect_match "--recal-split: as many held-out samples as the reference alone gives" "^$(json_get "d['methods'][1]['vs_reference']['pairs']") " "$P"

# ---- --skip-bad-rows without ids: rows pair by their data row position ----
/usr/bin/python3 - samples/breast_cancer_gnb.csv "$TMP" <<'PY'
import sys
src, tmp = sys.argv[1:]
with open(src) as f:
    head = f.readline().rstrip('\n').split(',', 1)[1]
    rows = [l.rstrip('\n').split(',', 1)[1] for l in f if l.strip()]
def write(name, body):
    with open(f'{tmp}/{name}', 'w') as f: f.write(head + '\n' + ''.join(l + '\n' for l in body))
def bad(i):
    b = list(rows); b[i] = b[i].split(',')[0] + ',abc,0.5'; return b
write('skipA.csv', bad(5))                   # line 7
write('skipB.csv', bad(7))                   # line 9
write('skipC.csv', rows + rows[:1])          # one row more
write('cut.csv', [r for i, r in enumerate(rows) if i not in (5, 7)])   # the samples both hold
PY
run "$CALSCOPE" report --compare "$TMP/skipA.csv" "$TMP/skipB.csv" --skip-bad-rows
expect_match "skipped rows: the samples without a partner are said (stderr)" \
    "calscope: --compare: 2 samples without a partner \(skipped rows\) left out: every method is measured on the 567 samples all the files hold" "$ERR"
expect_match "skipped rows: and in the text" \
    "^2 samples without a partner \(skipped rows\) left out: every method is measured on the 567 samples all the files hold$" \
    "$(printf '%s\n' "$OUT" | unwrap '^[0-9]+ samples without' )"
expect_match "skipped rows: the identical rows tie" "P\(better\) n/a \(a tie\), 567 paired samples" "$(printf '%s\n' "$OUT" | unwrap '^verdict:')"
run "$CALSCOPE" report --compare --format json "$TMP/skipA.csv" "$TMP/skipB.csv" --skip-bad-rows
printf '%s' "$OUT" >"$TMP/skip.json"
run "$CALSCOPE" report --format json "$TMP/cut.csv"
printf '%s' "$OUT" >"$TMP/cut.json"
CHECK=$(/usr/bin/python3 - "$TMP/skip.json" "$TMP/cut.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
bad = []
info = s['compare_info']
if info['left_out'] != 2 or info['pairs'] != 567: bad.append(f"left_out {info['left_out']} pairs {info['pairs']}")
want = c['files'][0]['metrics']
for i, m in enumerate(s['methods']):
    for k, v in m['metrics'].items():
        if k in want and not k.endswith('_ci') and v != want[k]: bad.append(f'methods[{i}].{k} {v} != {want[k]}')
if any(e['diff'] != 0 for e in s['compare']): bad.append('a non-zero difference')
print('; '.join(bad) or 'ok')
PY
)
expect_match "skipped rows: every method measured on the rows both files hold (the cut file's report)" "^ok$" "$CHECK"
run "$CALSCOPE" report --compare "$TMP/skipA.csv" "$TMP/skipC.csv" --skip-bad-rows
expect_match "skipped rows: files of different lengths are still refused" \
    "^3 calscope: $TMP/skipC.csv:571: --compare: sample 570 has no partner: $TMP/skipA.csv has 569 data rows, $TMP/skipC.csv has 570 \(rows skipped by --skip-bad-rows counted; no id column in both: samples pair in file order\)" \
    "$RC $ERR"

# ---- a recalibration that does not converge, with --reference on a recalibration ----
R="$CALSCOPE report --recal ts,vs,iso --recal-max-iter 2 $A"
NC="calscope: $A+vs: $A: vs did not converge within 2 iterations in cross-fitting fold 1 (largest gradient component 0.0472, wanted <= 1e-08); not shown"
run $R --reference 2
expect_match "not converged, reference +ts: exit 0, the failed method said" "^0 $(printf '%s' "$NC" | sed 's/[][().+*]/\\&/g')$" "$RC $ERR"
expect_match "not converged, reference +ts: the comparison of the others goes on" \
    "^verdict: $A\+iso is better calibrated than $A\+ts; ECE -0\.1658" "$(printf '%s\n' "$OUT" | unwrap '^verdict:')"
expect_match "not converged: the legend marks the chosen reference, the failed one named" \
    "\[2\]  $A\+ts \(reference\).*$A\+vs: NOT CONVERGED, left out of the tables" "$(printf '%s' "$OUT" | tr '\n' ' ')"
run $R --reference 4 --format json
expect_match "not converged before the reference (+iso): it stays the reference" "^0 $A\+iso \['$A\+vs'\] 2$" \
    "$RC $(json_get "d['compare_info']['reference'], [x['name'] for x in d['methods_info']['not_converged']], len(d['compare_info']['verdict'])")"
run $R --reference 3 --format json
MSG="--reference 3: $A+vs did not converge, so there is no reference to compare the other methods with (give another --reference or a larger --recal-max-iter)"
expect_match "the reference did not converge: exit 3, said on stderr" "calscope: $(printf '%s' "$MSG" | sed 's/[][().+*-]/\\&/g')$" "$RC $ERR"
[ "$RC" -eq 3 ] && ok "the reference did not converge: exit 3" || not_ok "the reference did not converge: exit 3" "exit $RC"
expect_match "the reference did not converge: in JSON errors" "^\[\{'path': '$A\+vs', 'status': 3, 'message': '$(printf '%s' "$MSG" | sed 's/[][().+*-]/\\&/g')'\}\]$" \
    "$(json_get "d['errors']")"

# ---- --select-on each: a method whose own selection keeps nothing kept 0 samples ----
run "$CALSCOPE" report --recal ts,hist,iso "$A" --select 'conf > 0.9' --select-on each
expect_match "select-on each: a method keeping no sample counts 0" \
    "^selection: conf > 0\.9 on each method's own samples \(1,725, 417, 0, 980 of 1,797\); values only, no paired differences$" \
    "$(printf '%s\n' "$OUT" | unwrap '^selection:' | grep '^selection:')"
run "$CALSCOPE" report --recal ts,hist,iso "$A" --select 'conf > 0.9' --select-on each --format json
expect_match "select-on each: JSON method_samples has 0, not null" "^\[1725, 417, 0, 980\]$" "$(json_get "d['compare_info']['selection']['method_samples']")"
run "$CALSCOPE" report --recal ts,hist "$A" --select 'conf > 2'
expect_match "an empty selection: each n/a verdict names its method" \
    "^verdict: n/a for $A\+ts; no paired samples
verdict: n/a for $A\+hist; no paired samples$" "$(printf '%s\n' "$OUT" | grep '^verdict:')"

done_testing
