#!/bin/bash
# End-to-end: the recalibrations beyond ts/platt/hist/iso (vs, ets, beta, irova), each checked against an
# independent fit of its documented objective (tests/oracles/recal_oracle.py, scipy.optimize): the fitted
# parameters to 1e-6 relative and the held-out NLL to 1e-9, on a well-conditioned synthetic file.
source "$(dirname "$0")/lib.sh"
R="--ci 20 --repeats 20 --seed 3 --threads 2"
S=samples

# A 4-class logit file whose labels follow softmax(w * s + b) (w, b known, not the identity), two
# thirds "fit" rows and one third "eval" rows; and the same rows as probabilities.
/usr/bin/python3 - "$TMP" <<'PY'
import sys, random, math
random.seed(11)
d = sys.argv[1]
w, b = [0.6, 1.4, 0.9, 1.1], [0.3, -0.2, 0.0, -0.1]
L, P = ["id,label,logit_a,logit_b,logit_c,logit_d,split\n"], ["id,label,p_a,p_b,p_c,p_d,split\n"]
for i in range(900):
    s = [random.gauss(0, 1.5) for _ in range(4)]
    z = [w[c] * s[c] + b[c] for c in range(4)]
    m = max(z); e = [math.exp(v - m) for v in z]; t = sum(e)
    u, y, acc = random.random(), 3, 0.0
    for c in range(4):
        acc += e[c] / t
        if u < acc: y = c; break
    split = "eval" if i % 3 == 0 else "fit"
    L.append("r%d,%d,%s,%s\n" % (i, y, ",".join("%.17g" % v for v in s), split))
    m = max(s); e = [math.exp(v - m) for v in s]; t = sum(e)
    P.append("r%d,%d,%s,%s\n" % (i, y, ",".join("%.17g" % (v / t) for v in e), split))
open(d + "/logits.csv", "w").write("".join(L))
open(d + "/probs.csv", "w").write("".join(P))
# labels from 0.5 softmax(0.4 s) + 0.3 softmax(s) + 0.2 / K: every ETS weight is inside (0, 1)
M = ["id,label,logit_a,logit_b,logit_c,logit_d,logit_e,split\n"]
sm = lambda z: [math.exp(v - max(z)) / sum(math.exp(u - max(z)) for u in z) for v in z]
for i in range(1500):
    s = [random.gauss(0, 1.5) for _ in range(5)]
    q = [0.5 * a + 0.3 * b + 0.2 / 5 for a, b in zip(sm([0.4 * v for v in s]), sm(s))]
    u, y, acc = random.random(), 4, 0.0
    for c in range(5):
        acc += q[c]
        if u < acc: y = c; break
    M.append("r%d,%d,%s,%s\n" % (i, y, ",".join("%.17g" % v for v in s), "eval" if i % 3 == 0 else "fit"))
open(d + "/mix.csv", "w").write("".join(M))
# binary files whose labels follow beta calibration maps: logit = a ln p - b ln(1 - p) + c with
# (a, b, c) = (1.6, 0.7, 0.3) (both features kept) and (-0.4, 1.3, 0.2) (a < 0: betacal refits
# without ln p)
for name, (a, b, c) in (("beta", (1.6, 0.7, 0.3)), ("beta_neg", (-0.4, 1.3, 0.2))):
    B = ["id,label,p_0,p_1,split\n"]
    for i in range(1200):
        p = random.betavariate(0.8, 0.8)
        p = min(max(p, 1e-6), 1 - 1e-6)
        z = a * math.log(p) - b * math.log(1 - p) + c
        y = int(random.random() < 1 / (1 + math.exp(-z)))
        B.append("r%d,%d,%.17g,%.17g,%s\n" % (i, y, 1 - p, p, "eval" if i % 3 == 0 else "fit"))
    open(d + "/" + name + ".csv", "w").write("".join(B))
PY

# check_fit METHOD FILE: calscope's held-out fit against the oracle's
check_fit() {
    local method=$1 file=$2 name=$3
    reference_output "$TMP/want.json" /usr/bin/python3 tests/oracles/recal_oracle.py "$method" "$file"
    expect_rc "$name: exit 0" 0 "$CALSCOPE" report --format json $R --recal "$method" --recal-split-column split "$file"
    local got
    got=$(json_get "json.dumps({'p': d['methods'][1]['recal']['params'], 'nll': d['methods'][1]['metrics']['nll']})")
    expect_match "$name: parameters to 1e-6 relative, held-out NLL to 1e-9 (scipy)" "^True$" "$(/usr/bin/python3 - "$TMP/want.json" "$got" <<'PY'
import json, sys
want = json.load(open(sys.argv[1])); got = json.loads(sys.argv[2])
dn = abs(got['nll'] - want['nll'])
L = lambda v: v if isinstance(v, list) else [v]
rel = max(abs(a - b) / max(abs(b), 1e-3) for key, vals in got['p'].items() for a, b in zip(L(vals), L(want[key])))
sys.stderr.write("# largest relative parameter difference %.2g, held-out NLL difference %.2g\n" % (rel, dn))
ok = dn <= 1e-9 and rel <= 1e-6 and all(len(L(v)) == len(L(want[k])) for k, v in got['p'].items())
print(ok if ok else (ok, got, want))
PY
)"
}

# --- ets
check_fit ets "$TMP/logits.csv" "ets logits"
check_fit ets "$TMP/probs.csv" "ets log-probabilities"
check_fit ets "$TMP/mix.csv" "ets mixture"
expect_match "ets mixture: every weight inside (0, 1), summing to 1" "^True$" \
    "$(json_get "(w := d['methods'][1]['recal']['params']['w']) and all(0.01 < v < 0.99 for v in w) and abs(sum(w) - 1) < 1e-12")"
expect_match "ets: text line" "ensemble temperature scaling, 5-fold cross-fitted, w = \(0.4578, 0.5422, 0.0000\) for \(softmax\(s/T\), the file, uniform\), T = 27.2444 on all rows \(from log-probabilities\)" \
    "$("$CALSCOPE" report $R --recal ets $S/digits_gnb.csv 2>&1 | unwrap '  [^ ]')"
expect_rc "ets: cross-fitted json" 0 "$CALSCOPE" report --format json $R --recal ts,ets $S/digits_gnb.csv
expect_match "ets: T per fold = ts's, weights per fold on the simplex" "^True$" \
    "$(json_get "(e := d['methods'][2]['recal']) and [f['T'] for f in e['fold_params']] == d['methods'][1]['recal']['fold_temperatures'] and e['params']['T'] == d['methods'][1]['recal']['temperature'] and all(abs(sum(f['w']) - 1) < 1e-12 and min(f['w']) >= 0 for f in e['fold_params'])")"
expect_match "ets: keeps the prediction" "^True$" "$(json_get "d['methods'][2]['metrics']['accuracy'] == d['methods'][0]['metrics']['accuracy']")"

# --- beta
check_fit beta "$TMP/beta.csv" "beta"
expect_match "beta: both features kept" "^True$" "$(json_get "(p := d['methods'][1]['recal']['params']) and p['a'] > 0 and p['b'] > 0 and d['methods'][1]['recal']['scores'] == 'probabilities'")"
check_fit beta "$TMP/beta_neg.csv" "beta, a negative a refitted"
expect_match "beta: a = 0 after the refit" "^True$" "$(json_get "(p := d['methods'][1]['recal']['params']) and p['a'] == 0 and p['b'] > 0")"
expect_rc "beta: text exit 0" 0 "$CALSCOPE" report $R --recal platt,beta $S/breast_cancer_logreg.csv
expect_match "beta: text line" "beta calibration, 5-fold cross-fitted, logit p' = 3.5112 ln p - 0.5222 ln\(1 - p\) \+ 2.0145 on all rows \(from probabilities\)" "$(unwrap '  [^ ]' <<<"$OUT")"
expect_rc "beta: multiclass is a usage error" 2 "$CALSCOPE" report $R --recal beta $S/digits_gnb.csv
expect_match "beta: message" "samples/digits_gnb.csv: beta calibration needs a binary file \(it has 10 classes\); use ts, vs or ets for multiclass files" "$ERR"
expect_rc "all: binary exit 0" 0 "$CALSCOPE" report --format json $R --recal all $S/breast_cancer_logreg.csv
expect_match "all: binary has platt and beta" "^\['ts', 'platt', 'hist', 'iso', 'vs', 'ets', 'beta', 'irova', 'ms', 'dir'\]$" "$(json_get "[m['recal']['method'] for m in d['methods'][1:]]")"

# --- irova: digits_gnb with every third row held out
/usr/bin/python3 - "$TMP" <<'PY'
import sys
lines = open("samples/digits_gnb.csv").read().splitlines()
out = [lines[0] + ",split"] + ["%s,%s" % (l, "eval" if i % 3 == 0 else "fit") for i, l in enumerate(lines[1:])]
open(sys.argv[1] + "/digits_split.csv", "w").write("\n".join(out) + "\n")
PY
reference_output "$TMP/irova.json" /usr/bin/python3 tests/oracles/recal_oracle.py irova "$TMP/digits_split.csv"
expect_rc "irova: exit 0" 0 "$CALSCOPE" report --format json $R --recal iso,irova --recal-split-column split "$TMP/digits_split.csv"
expect_match "irova: held-out NLL to 1e-9, Brier to 1e-12 and the changed predictions = sklearn's isotonic one-vs-rest" "^True$" \
    "$(json_get "(w := json.load(open('$TMP/irova.json'))) and (m := d['methods'][2]) and abs(m['metrics']['nll'] - w['nll']) <= 1e-9 and abs(m['metrics']['brier'] - w['brier']) <= 1e-12 and m['recal']['argmax_changed'] == w['argmax_changed'] > 0")"
expect_match "irova: the accuracy moves with the changed predictions, iso's does not" "^True$" \
    "$(json_get "d['methods'][2]['metrics']['accuracy'] != d['methods'][0]['metrics']['accuracy'] == d['methods'][1]['metrics']['accuracy']")"
expect_rc "irova: text exit 0" 0 "$CALSCOPE" report $R --recal irova --recal-split-column split "$TMP/digits_split.csv"
expect_match "irova: text says how many predictions changed" "one-vs-rest isotonic regression, fitted on the 1198 rows whose split is fit or train, renormalised; it changed the predicted class of $(/usr/bin/python3 -c "import json; print(json.load(open('$TMP/irova.json'))['argmax_changed'])") of 599 samples" "$(unwrap '  [^ ]' <<<"$OUT")"

# --- iso: confidences 1 ulp apart are one point to scikit-learn's IsotonicRegression (it pools
# scores less than 1e-15 apart before the fit); ordered exactly they give other steps
/usr/bin/python3 - "$TMP" <<'PY'
import sys
import numpy as np
rng = np.random.default_rng(5)
rows, i = ["id,label,p_0,p_1,p_2,split"], 0
for rep in range(40):
    for b in (0.55, 0.62, 0.7, 0.81, 0.9, 0.97):
        for j in range(3):
            c = b
            for _ in range(j):
                c = np.nextafter(c, 1)
            correct = rng.random() < (b if j != 1 else 1 - b)
            label = 0 if correct else 1 + int(rng.random() < 0.5)
            r = (1 - c) / 2
            rows.append(f"r{i},{label},{float(c)!r},{float(r)!r},{float((1 - c) - r)!r},{'eval' if i % 4 == 0 else 'fit'}")
            i += 1
open(sys.argv[1] + "/near_ties.csv", "w").write("\n".join(rows) + "\n")
PY
reference_output "$TMP/iso.json" /usr/bin/python3 tests/oracles/recal_oracle.py iso "$TMP/near_ties.csv"
expect_rc "iso, confidences 1 ulp apart: exit 0" 0 "$CALSCOPE" report --format json $R --recal iso --recal-split-column split "$TMP/near_ties.csv"
expect_match "iso, confidences 1 ulp apart: held-out NLL and Brier to 1e-12 = scikit-learn's isotonic regression" "^True$" \
    "$(json_get "(w := json.load(open('$TMP/iso.json'))) and (m := d['methods'][1]['metrics']) and abs(m['nll'] - w['nll']) <= 1e-12 and abs(m['brier'] - w['brier']) <= 1e-12")"
expect_rc "iso, digits_gnb with a third held out: exit 0" 0 "$CALSCOPE" report --format json $R --recal iso --recal-split-column split "$TMP/digits_split.csv"
reference_output "$TMP/iso_digits.json" /usr/bin/python3 tests/oracles/recal_oracle.py iso "$TMP/digits_split.csv"
expect_match "iso, digits_gnb: held-out NLL and Brier to 1e-12 = scikit-learn's isotonic regression, rescaled as documented" "^True$" \
    "$(json_get "(w := json.load(open('$TMP/iso_digits.json'))) and (m := d['methods'][1]['metrics']) and abs(m['nll'] - w['nll']) <= 1e-12 and abs(m['brier'] - w['brier']) <= 1e-12")"

# --- vs
check_fit vs "$TMP/logits.csv" "vs logits"
check_fit vs "$TMP/probs.csv" "vs log-probabilities"
expect_rc "vs: cross-fitted, exit 0" 0 "$CALSCOPE" report --format json $R --recal ts,vs $S/digits_logreg_logits.csv
expect_match "vs: params of the all-rows model and of 5 folds, K scales and biases each" "^True$" \
    "$(json_get "(r := d['methods'][2]['recal']) and len(r['params']['w']) == 10 and len(r['params']['b']) == 10 and len(r['fold_params']) == 5 and r['scores'] == 'logits' and abs(sum(r['params']['b'])) < 1e-9")"
expect_match "argmax_changed: 0 for the methods that keep the prediction, counted for vs" "^True$" \
    "$(json_get "d['methods'][1]['recal']['argmax_changed'] == 0 and d['methods'][2]['recal']['argmax_changed'] > 0")"
expect_match "vs: text line" "vector scaling, 5-fold cross-fitted, w in \[[0-9.]+, [0-9.]+\], b in \[-?[0-9.]+, -?[0-9.]+\] on all rows \(from logits" \
    "$("$CALSCOPE" report $R --recal vs $S/digits_logreg_logits.csv 2>&1 | unwrap '  [^ ]')"
# a class with no fitting row: the shared degenerate-fold rule
/usr/bin/python3 - "$TMP" <<'PY'
import sys
d = sys.argv[1]
rows = ["id,label,p_0,p_1,p_2,split\n"]
for i in range(30):
    y = 2 if i % 3 == 0 else i % 2
    rows.append("r%d,%d,0.5,0.3,0.2,%s\n" % (i, y, "eval" if y == 2 else "fit"))
open(d + "/noclass.csv", "w").write("".join(rows))
PY
expect_rc "vs: a class with no fitting row is an input error" 3 "$CALSCOPE" report $R --recal vs --recal-split-column split "$TMP/noclass.csv"
expect_match "vs: says which class and which model" "vs needs every class among the fitting rows of every model, but class '2' has none in the fit" "$ERR"
# a fit that spends its iteration budget: a marked row with the reason, never a result
expect_rc "budget: exit 0" 0 "$CALSCOPE" report --format json $R --recal ts,vs,iso --recal-max-iter 2 $S/digits_gnb.csv
expect_match "budget: vs left out of the table, named with its reason" "^True$" \
    "$(json_get "[m['name'] for m in d['methods']] == ['samples/digits_gnb.csv', 'samples/digits_gnb.csv+ts', 'samples/digits_gnb.csv+iso'] and [u['name'] for u in d['methods_info']['not_converged']] == ['samples/digits_gnb.csv+vs']")"
expect_match "budget: the reason" "^samples/digits_gnb.csv: vs did not converge within 2 iterations in cross-fitting fold 1 \(largest gradient component [0-9.e-]+, wanted <= 1e-08\); not shown$" \
    "$(json_get "d['methods_info']['not_converged'][0]['reason']")"
expect_match "budget: said on stderr" "digits_gnb.csv\+vs: .*vs did not converge within 2 iterations" "$ERR"
expect_rc "budget: text exit 0" 0 "$CALSCOPE" report $R --recal vs --recal-max-iter 2 $S/digits_gnb.csv
expect_match "budget: text marks the row" "samples/digits_gnb.csv\+vs: NOT CONVERGED, left out of the tables: samples/digits_gnb.csv: vs did not converge" "$(unwrap '  [^ ]' <<<"$OUT")"
expect_match "budget: nothing measured for it" "^0$" "$(printf '%s\n' "$OUT" | grep -c '^  samples/digits_gnb.csv+vs ')"
expect_rc "budget: the default converges (no not_converged entry)" 0 "$CALSCOPE" report --format json $R --recal vs $S/digits_gnb.csv
expect_match "budget: default" "^\[\] 2$" "$(json_get "d['methods_info']['not_converged'], len(d['methods'])" | tr -d '(),')"
expect_rc "usage: --recal-max-iter needs --recal" 2 "$CALSCOPE" report --recal-max-iter 5 $S/digits_gnb.csv
expect_rc "usage: --recal-max-iter with no iterative method" 2 "$CALSCOPE" report --recal ts,iso --recal-max-iter 5 $S/digits_gnb.csv
expect_match "usage: --recal-max-iter message (not ignored)" "--recal-max-iter: no method in --recal iterates \(only vs, beta, ms and dir do\)" "$ERR"
expect_rc "usage: --recal-max-iter 0" 2 "$CALSCOPE" report --recal vs --recal-max-iter 0 $S/digits_gnb.csv
expect_match "usage: --recal-max-iter message" "--recal-max-iter: '0' is not an iteration count in 1..100000" "$ERR"

# --recal all takes vs; platt is left out for a multiclass file
expect_rc "all: exit 0" 0 "$CALSCOPE" report --format json $R --recal all $S/digits_logreg_logits.csv
expect_match "all: every multiclass method" "^\['ts', 'hist', 'iso', 'vs', 'ets', 'irova', 'ms', 'dir'\]$" "$(json_get "[m['recal']['method'] for m in d['methods'][1:]]")"
expect_rc "usage: unknown method names them all" 2 "$CALSCOPE" report --recal foo $S/digits_gnb.csv
expect_match "usage: message" "'foo' is not ts, platt, hist, iso, vs, ets, beta, irova, ms or dir \(or all\)" "$ERR"

done_testing
