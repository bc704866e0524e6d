#!/usr/bin/env bash
# Bias where the truth is known: samples/synthetic_bias.csv is drawn from a
# known calibration function (tools/make_bias_sample.py) and its true top-1 ECE is in
# samples/synthetic_bias.truth.json. `--curve size --true-ece X` adds the truth to the curve and
# per estimator per point bias = mean - X. Checked: the truth itself against an independent
# midpoint rule; the arithmetic (exactly mean - truth) and which metrics carry it; the text; the
# flag's rules, verbatim. Not asserted: which estimator is least biased (a property of this draw,
# not a guarantee).
. "$(dirname "$0")/lib.sh"
HINT='Try `calscope report --help`.'
F=samples/synthetic_bias.csv
TRUTH=$(/usr/bin/python3 -c "import json; print(repr(json.load(open('samples/synthetic_bias.truth.json'))['true_ece']))")
usage() {
    local name=$1 msg=$2; shift 2; run "$CALSCOPE" report "$@"
    if [ "$RC" -eq 2 ] && [ "$ERR" = "calscope: $msg"$'\n'"$HINT" ]; then ok "usage: $name"
    else not_ok "usage: $name" "exit $RC" "stderr: $ERR"; fi
}

# the truth file: E|0.2 + 0.75 c - c| for c = 0.5 + 0.5 u, u ~ Beta(2, 2) (density 6u(1-u)), by a
# 2e6-point midpoint rule
expect_match "truth file: quad's value equals an independent midpoint rule (1e-9)" "^True$" "$(/usr/bin/python3 -c "
import numpy as np
u = (np.arange(2000000) + 0.5) / 2000000; c = 0.5 + 0.5 * u
print(abs(np.mean(np.abs(0.2 + 0.75 * c - c) * 6 * u * (1 - u)) - $TRUTH) < 1e-9)")"

run "$CALSCOPE" report --format json --curve size --repeats 7 --seed 2 --true-ece "$TRUTH" "$F"
if [ "$RC" -eq 0 ]; then ok "json with --true-ece runs"; else not_ok "json with --true-ece runs" "exit $RC" "$ERR"; fi
expect_match "json: the curve carries the truth" "^True$" "$(json_get "d['files'][0]['curve']['truth'] == $TRUTH")"
expect_match "json: bias = mean - truth exactly, for ece ace rece_g smece ece_sweep at every point" "^True 6$" "$(json_get "
all(p['metrics'][m]['bias'] == p['metrics'][m]['mean'] - $TRUTH for p in d['files'][0]['curve']['points']
    for m in ('ece', 'ace', 'rece_g', 'smece', 'ece_sweep')), len(d['files'][0]['curve']['points'])")"
expect_match "json: no bias for what does not estimate the top-1 ECE" "^True$" "$(json_get "
all('bias' not in p['metrics'][m] for p in d['files'][0]['curve']['points']
    for m in ('accuracy', 'mce', 'brier', 'nll', 'l2ce', 'l2ce_debiased'))")"
expect_match "json: at fraction 1 the ece mean is the file's ece" "^True$" "$(json_get "
d['files'][0]['curve']['points'][-1]['metrics']['ece']['mean'] == d['files'][0]['metrics']['ece']")"
run "$CALSCOPE" report --format json --curve size --repeats 7 --seed 2 "$F"
expect_match "json without a truth: no truth, no bias keys" "^True$" "$(json_get "
'truth' not in d['files'][0]['curve'] and all('bias' not in s for p in d['files'][0]['curve']['points'] for s in p['metrics'].values())")"

run "$CALSCOPE" report --curve size --repeats 7 --seed 2 --true-ece "$TRUTH" "$F"
expect_match "text: the truth line" "^  true top-1 ECE 0\.025300 \(--true-ece\); bias = mean - true ECE, for the estimators of it$" "$OUT"
want=$(printf '%s' "$OUT" | awk '$1 == "ece" && $2 == "fraction" {on = 1; next} on && $1 == "1" {printf "%+.6f", $3 - 0.0253; exit}')
expect_match "text: ece's bias at fraction 1 is its mean - 0.0253" "^  +1 +400 +[0-9.]+ .* bias \\$want$" "$OUT"
run "$CALSCOPE" report --curve size --repeats 7 --seed 2 "$F"
expect_match "text without a truth: abs_dev is not bias" "^  abs_dev is the deviation from the metric on all samples, not bias \(the true value is$" "$OUT"
expect_no_match "text without a truth: no bias column" "bias [+-]" "$OUT"

usage "--true-ece without a curve" "--true-ece needs --curve size" --true-ece 0.1 "$F"
usage "--true-ece with the bins curve" "--true-ece needs --curve size" --curve bins --true-ece 0.1 "$F"
usage "--true-ece out of range" "--true-ece: '1.5' is not an ECE in [0, 1]" --curve size --true-ece 1.5 "$F"
usage "--true-ece not a number" "--true-ece: 'x' is not an ECE in [0, 1]" --curve size --true-ece x "$F"
usage "--true-ece on classwise" "--true-ece is a top-1 ECE: it needs --lens top1 and --distance tvd" --curve size --lens classwise --true-ece 0.1 "$F"
usage "--true-ece with the l2 distance" "--true-ece is a top-1 ECE: it needs --lens top1 and --distance tvd" --curve size --distance l2 --true-ece 0.1 "$F"

# the generator writes what is committed (make samples)
TMPF=$(mktemp -d)
/usr/bin/python3 tools/make_bias_sample.py "$TMPF/s.csv" --n 400 --a 2 --b 2 --affine 0.2,0.75 --seed 0 >/dev/null
if cmp -s "$TMPF/s.csv" "$F" && cmp -s "$TMPF/s.truth.json" samples/synthetic_bias.truth.json; then ok "generator: committed sample is reproducible"
else not_ok "generator: committed sample is reproducible"; fi
rm -rf "$TMPF"

done_testing
