#!/usr/bin/env bash
# End-to-end tests of a selection in `calscope report --compare`: it is evaluated once, on the
# reference's samples (--select-on reference, the default), and every number of the comparison
# is on those samples of every method. digits_ts.csv is digits_gnb.csv temperature-scaled, so
# 'conf > 0.9' keeps different rows in each file: the oracle below picks the reference's rows by
# its own reading of the CSV, writes both files cut to those ids, and a plain `report` of each
# cut file must give the comparison's numbers.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

A=samples/digits_gnb.csv
B=samples/digits_ts.csv
SEL='conf > 0.9'
HINT='Try `calscope report --help`.'

# cut_files: writes $TMP/a_cut.csv and $TMP/b_cut.csv (the rows whose id the reference keeps,
# lines copied as written) and prints how many samples they hold
cut_files() {
    /usr/bin/python3 - "$A" "$B" "$TMP/a_cut.csv" "$TMP/b_cut.csv" <<'EOF'
import sys
a, b, out_a, out_b = sys.argv[1:]
def rows(path):
    with open(path) as f:
        head = f.readline()
        return head, [line for line in f if line.strip()]
ha, ra = rows(a)
keep = set()
for line in ra:
    cells = line.rstrip('\n').split(',')
    if max(float(x) for x in cells[2:]) > 0.9:
        keep.add(cells[0])
for path, out in ((a, out_a), (b, out_b)):
    h, r = rows(path)
    with open(out, 'w') as f:
        f.write(h)
        f.writelines(line for line in r if line.split(',', 1)[0] in keep)
print(len(keep))
EOF
}
N=$(cut_files)
if [ "${N:-0}" -gt 0 ] && [ "$N" -lt 1797 ]; then ok "oracle: the reference keeps $N of 1797"; else not_ok "oracle" "N=$N"; fi

# the files' own selections differ (the reason for the rule)
run "$CALSCOPE" report --format json --select "$SEL" "$A" "$B"
OWN=$(json_get "[f['selected'] for f in d['files']]")
expect_match "each file's own selection differs" "^\[$N, [0-9]+\]$" "$OWN"
[ "$OWN" != "[$N, $N]" ] && ok "the two selections are not the same size" || not_ok "selections differ" "$OWN"

run "$CALSCOPE" report --format json "$TMP/a_cut.csv" "$TMP/b_cut.csv"
printf '%s' "$OUT" >"$TMP/cut.json"
expect_rc "compare json: exit 0" 0 "$CALSCOPE" report --format json --compare --select "$SEL" "$A" "$B"
printf '%s' "$OUT" >"$TMP/cmp.json"

# every number against the cut files' plain reports
CHECK=$(/usr/bin/python3 - "$TMP/cut.json" "$TMP/cmp.json" "$N" <<'EOF'
import json, math, sys
cut = json.load(open(sys.argv[1])); cmp = json.load(open(sys.argv[2])); n = int(sys.argv[3])
bad = []
def near(what, got, want):
    if got is None or want is None:
        if got is not want: bad.append(f'{what}: {got} != {want}')
    elif abs(got - want) > 1e-12 * max(1, abs(want)): bad.append(f'{what}: {got} != {want}')
want = [f['metrics'] for f in cut['files']]
methods = cmp['methods']
for i, m in enumerate(methods):
    for k, v in m['metrics'].items():
        if k.endswith('_ci') or k == 'topk_ece' or k not in want[i]: continue
        near(f'methods[{i}].{k}', v, want[i][k])
# the two-file table: A and B on the same samples, diff = A - B
for e in cmp['compare']:
    k = e['metric']
    near(f'compare {k} a', e['a'], want[0][k])
    near(f'compare {k} b', e['b'], want[1][k])
    near(f'compare {k} diff', e['diff'], want[0][k] - want[1][k])
    near(f'vs_reference {k}', methods[1]['vs_reference'][k]['diff'], want[1][k] - want[0][k])
info = cmp['compare_info']
if info['pairs'] != n: bad.append(f"pairs {info['pairs']} != {n}")
if info['selection'] != {'expr': 'conf > 0.9', 'on': 'reference', 'samples': n, 'of': 1797}:
    bad.append(f"selection {info['selection']}")
if methods[1]['vs_reference']['pairs'] != n: bad.append('vs_reference pairs')
# rankings read the same values
for k, r in cmp['rankings'].items():
    if k in ('differs_from_ece', 'topk_ece', 'accuracy') or k not in want[0]: continue
    a, b = want[0][k], want[1][k]
    if a is None or b is None or abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1): continue
    if (r[0] < r[1]) != (a < b): bad.append(f'ranking {k}: {r} for {a}, {b}')
if cmp['rankings']['accuracy'][0] < cmp['rankings']['accuracy'][1] != (want[0]['accuracy'] > want[1]['accuracy']):
    bad.append('ranking accuracy')
for m in cmp['mass']['methods']:
    if m['samples'] != n: bad.append(f"mass {m['name']} on {m['samples']}")
print('; '.join(bad) if bad else 'same')
EOF
)
if [ "$CHECK" = same ]; then ok "values, differences, rankings and mass on the reference's $N samples"
else not_ok "values, differences, rankings and mass on the reference's $N samples" "$CHECK"; fi

# text: the one line, then the comparison; the compare table's A is the reference's value
expect_rc "compare text: exit 0" 0 "$CALSCOPE" report --compare --select "$SEL" "$A" "$B"
NN=$(printf "%'d" "$N" 2>/dev/null); [ "$NN" = "$N" ] && NN=$(/usr/bin/python3 -c "print(f'{$N:,}')")
LINE="selection: conf > 0.9 on the reference ($A): $NN of 1,797 samples, the same for every method"
if printf '%s\n' "$OUT" | unwrap '^selection: ' | grep -qxF -- "$LINE"; then ok "text: the selection line"
else not_ok "text: the selection line" "want: $LINE" "$(printf '%s\n' "$OUT" | grep '^selection' )"; fi
expect_match "text: the paired table says the same count" "^  $N paired samples \(by id\)" "$OUT"

# a recalibration of the reference is measured on the same samples
run "$CALSCOPE" report --format json --recal ts --select "$SEL" "$A"
expect_match "recal: every method on the reference's samples" "^\[$N, $N\]$" "$(json_get "[m['samples'] for m in d['mass']['methods']]")"
expect_match "recal: compare_info.selection" "reference $N 1797" "$(json_get "d['compare_info']['selection']['on'], d['compare_info']['selection']['samples'], d['compare_info']['selection']['of']" | tr -d "(),'")"

# --select-on each: each file on its own samples, values only; the differences refused
EACH_MSG="calscope: --compare: no paired differences with --select-on each: each method keeps its own samples, and a paired difference needs one set (--select-on reference, the default)"
run "$CALSCOPE" report --format json --compare --select "$SEL" --select-on each "$A" "$B"
[ "$RC" -eq 0 ] && [ "$ERR" = "$EACH_MSG" ] && ok "each: exit 0 with the message" || not_ok "each: exit 0 with the message" "exit $RC" "$ERR"
expect_match "each: no paired entries, each file's own counts" "^True$" \
    "$(json_get "d['compare'] == [] and d['compare_info']['selection'] == {'expr': 'conf > 0.9', 'on': 'each', 'samples': None, 'method_samples': $OWN, 'of': 1797, 'paired': '${EACH_MSG#calscope: --compare: }'}")"
expect_match "each: no vs_reference" "^False$" "$(json_get "'vs_reference' in d['methods'][1]")"
expect_match "each: the values are each file's own" "^True$" \
    "$(json_get "[m['metrics']['ece'] for m in d['methods']] == [f['metrics']['ece'] for f in d['files']]")"
run "$CALSCOPE" report --compare --select "$SEL" --select-on each "$A" "$B"
expect_match "each: the text line" "^selection: conf > 0.9 on each method's own samples \([0-9,]+, [0-9,]+ of 1,797\); values only, no paired differences$" "$(unwrap '^selection: ' <<<"$OUT")"
expect_no_match "each: no paired difference printed" "p_better|^compare  A|[+-][0-9]\.[0-9]{4} \[" "$OUT"
expect_match "each: the rows say why" "no paired difference \(--select-on each\)" "$OUT"

# --select-on where it changes nothing, and a bad value: the flag table's messages
usage() { local name=$1 msg=$2; shift 2; run "$CALSCOPE" report "$@"
    if [ "$RC" -eq 2 ] && [ "$ERR" = "calscope: $msg"$'\n'"$HINT" ]; then ok "usage: $name"; else not_ok "usage: $name" "exit $RC" "$ERR"; fi; }
usage "--select-on without --compare" "--select-on needs --compare or --recal (it says where a comparison's selection is evaluated)" --select "$SEL" --select-on each "$A"
usage "--select-on without --select" "--select-on needs --select (it says where the selection is evaluated)" --compare --select-on each "$A" "$B"
usage "--select-on bad value" "--select-on: 'all' is not reference or each" --compare --select "$SEL" --select-on all "$A" "$B"

# ---- honest marks: n/a with its reason (never NaN), and "!" on a paired interval that misses

# topk:2 has no RECE-G, smooth ECE, L2CE or ECE_sweep: every output says n/a and where there is one
head -n 201 samples/digits_gnb.csv >"$TMP/g.csv"
head -n 201 samples/digits_ts.csv >"$TMP/t.csv"
expect_rc "topk:2 compare: exit 0" 0 "$CALSCOPE" report --compare --lens topk:2 --repeats 50 --ci 20 \
    --metrics ece,rece_g,smece,l2ce,ece_sweep "$TMP/g.csv" "$TMP/t.csv"
expect_no_match "topk:2 text: no NaN anywhere" "[Nn]a[Nn]" "$OUT"
expect_match "topk:2 two-file table: n/a with the reason" "^  rece_g +n/a +n/a +n/a +\(top1/class:C/classwise only\)$" "$OUT"
expect_match "topk:2 methods rows: the value's reason once, the difference n/a" "^    \[2\] +n/a \(top1/class:C only\) n/a$" "$OUT"
run "$CALSCOPE" report --format csv --compare --lens topk:2 --repeats 50 --ci 20 "$TMP/g.csv" "$TMP/t.csv"
expect_no_match "topk:2 csv: no NaN" "[Nn]a[Nn]" "$OUT"

# flat.csv: class 0 at 0.75 for 180 samples, 135 right (ECE 0); spread.csv: at c = 0.55..0.95,
# 20 samples each with 20c right (every group calibrated: ECE 0). MCE differs by exactly 0, but
# the resamples' repeated rows raise spread's nine small groups' MCE more: its paired interval
# lies beside 0 and misses the difference.
/usr/bin/python3 - "$TMP/flat.csv" "$TMP/spread.csv" <<'EOF'
import sys
a = ["id,label,p_0,p_1"]; b = ["id,label,p_0,p_1"]; i = 0
for g in range(9):
    c = (11 + g) / 20
    for j in range(20):
        lab = 0 if j < round(c * 20) else 1
        a.append(f"s{i},{lab},0.75,0.25"); b.append(f"s{i},{lab},{c},{1 - c:.2f}"); i += 1
open(sys.argv[1], "w").write("\n".join(a) + "\n"); open(sys.argv[2], "w").write("\n".join(b) + "\n")
EOF
run "$CALSCOPE" report --format json --compare --seed 1 "$TMP/flat.csv" "$TMP/spread.csv"
MARKS=$(json_get "[(e['metric'], e['ci_excludes_diff'], (e['diff'] < e['lo'] or e['diff'] > e['hi'])) for e in d['compare'] if not e['equal']]")
expect_match "json: mce's paired interval misses its difference" "\('mce', True, True\)" "$MARKS"
expect_no_match "json: the mark is the definition" "True, False|False, True" "$MARKS"
expect_match "json: vs_reference says it too" "^True$" "$(json_get "d['methods'][1]['vs_reference']['mce']['ci_excludes_diff']")"
run "$CALSCOPE" report --compare --seed 1 "$TMP/flat.csv" "$TMP/spread.csv"
expect_match "text: two-file table marks mce" "^  mce .*\]!" "$OUT"
expect_match "text: methods row marks it" "^    \[2\] +[0-9.]+ \[[0-9., ]+\]!? +\+0\.0000 \[\+[0-9.]+, \+[0-9.]+\]!\* p_better" "$OUT"
expect_match "text: the footnote" "! the paired interval does not contain the difference: it is the percentile$" "$OUT"
expect_no_match "text: no mark on accuracy" "^  accuracy .*\]!" "$OUT"

# ---- the verdict: one line first, method - reference, from the paired difference
run "$CALSCOPE" report --format json --compare "$A" "$B"
VJ=$(json_get "(lambda v, e: v['metric'] == 'ece' and v['kind'] == 'better' and v['better'] == 'b' and v['diff'] == e['diff'] and v['lo'] == e['lo'] and v['hi'] == e['hi'] and v['p_better'] == e['p_better'] and v['pairs'] == 1797 and v['min_pairs'] == 150)(d['compare_info']['verdict'], d['methods'][1]['vs_reference']['ece'])")
expect_match "verdict json: B better, the methods table's ECE difference" "^True$" "$VJ"
WANT=$(json_get "(lambda e: 'verdict: $B is better calibrated than $A; ECE %+.4f [%+.4f, %+.4f], P(better) %.3f, 1,797 paired samples' % (e['diff'], e['lo'], e['hi'], e['p_better']))(d['methods'][1]['vs_reference']['ece'])")
run "$CALSCOPE" report --compare "$A" "$B"
FIRST=$(printf '%s\n' "$OUT" | unwrap '^verdict: ' | grep -E '^(verdict|selection|compare  A|Methods)' | head -1)
expect_same_text() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got:  $2" "want: $3"; fi; }
expect_same_text "verdict text: the comparison's first line" "$FIRST" "$WANT"
expect_match "two-file table: B - A, as the methods table" "^  ece +[0-9.]+ +[0-9.]+ +-0\.[0-9]+ +\[-" "$OUT"
expect_match "two-file table: the sign is said" "diff = B - A \(method - reference\)" "$OUT"
run "$CALSCOPE" report --compare --seed 1 "$TMP/flat.csv" "$TMP/spread.csv"
expect_match "verdict: no significant difference" "^verdict: no significant difference between $TMP/spread\.csv and $TMP/flat\.csv; ECE \+0\.0000 \[" "$(unwrap '^verdict: ' <<<"$OUT")"
run "$CALSCOPE" report --compare --seed 1 --verdict-metric MCE "$TMP/flat.csv" "$TMP/spread.csv"
expect_match "verdict --verdict-metric mce: an interval beside its difference decides nothing" "^verdict: no significant difference .*; MCE \+0\.0000 \[\+[0-9.]+, \+[0-9.]+\]!, P\(better\)" "$(unwrap '^verdict: ' <<<"$OUT")"
head -n 101 "$A" >"$TMP/a100.csv"; head -n 101 "$B" >"$TMP/b100.csv"
run "$CALSCOPE" report --compare "$TMP/a100.csv" "$TMP/b100.csv"
expect_match "verdict: too few samples (100 < 10 per bin of 15)" "^verdict: too few paired samples to say \(fewer than 150\); ECE -0\.[0-9]{4} \[.*\], P\(better\) [01]\.[0-9]{3}, 100 paired samples$" "$(unwrap '^verdict: ' <<<"$OUT")"
run "$CALSCOPE" report --compare --bins 10 "$TMP/a100.csv" "$TMP/b100.csv"
expect_match "verdict: 100 pairs are enough for 10 bins" "^verdict: $TMP/b100\.csv is better calibrated than $TMP/a100\.csv; ECE -" "$(unwrap '^verdict: ' <<<"$OUT")"
run "$CALSCOPE" report --compare --lens topk:2 --verdict-metric smece --repeats 50 --ci 20 "$TMP/g.csv" "$TMP/t.csv"
expect_match "verdict: n/a with the reason" "^verdict: n/a; smECE has no paired difference here \(top1/class:C only\)$" "$(unwrap '^verdict: ' <<<"$OUT")"
run "$CALSCOPE" report --format json --recal ts,iso "$A"
expect_match "verdict json: one per method beside the reference" "^\['$A\+ts', '$A\+iso'\]$" "$(json_get "[v['method'] for v in d['compare_info']['verdict']]")"
usage "--verdict-metric without --compare" "--verdict-metric needs --compare or --recal" --verdict-metric ace "$A"

done_testing
