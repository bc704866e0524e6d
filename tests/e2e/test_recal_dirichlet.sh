#!/bin/bash
# End-to-end: matrix scaling and Dirichlet calibration with ODIR (ms, dir), checked against an
# independent fit of the same objective (tests/oracles/recal_oracle.py: dirichletcal's objective in
# scipy trust-exact, and its own replay of the inner cross-validation): W and b to 1e-6 relative, the
# held-out NLL to 1e-9, the same lambda and mu; a file already calibrated stays as it is; the class
# limit and the degenerate-fold rule with their messages.
source "$(dirname "$0")/lib.sh"
R="--ci 20 --repeats 20 --seed 3 --threads 2"
S=samples

# A 4-class logit file whose labels follow a matrix-scaling map (not the identity), two thirds "fit"
# rows and one third "eval" rows; the same rows as probabilities; a 4-class probability file whose
# labels are drawn from its own probabilities (calibrated: the identity map is the true one).
/usr/bin/python3 - "$TMP" <<'PY'
import sys, math
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
W = np.array([[1.2, 0.3, 0.0, -0.2], [0.1, 0.8, 0.2, 0.0], [0.0, -0.3, 1.1, 0.1], [0.2, 0.0, 0.1, 0.9]])
b = np.array([0.2, -0.1, 0.3, 0.0])
def sm(z):
    e = np.exp(z - z.max(axis=1, keepdims=True)); return e / e.sum(axis=1, keepdims=True)
def draw(p):
    return np.array([rng.choice(len(r), p=r) for r in p])
s = rng.normal(0, 1.5, (900, 4))
y = draw(sm(s @ W.T + b))
p = sm(s)
with open(d + "/logits.csv", "w") as f, open(d + "/probs.csv", "w") as g:
    f.write("id,label,logit_a,logit_b,logit_c,logit_d,split\n"); g.write("id,label,p_a,p_b,p_c,p_d,split\n")
    for i in range(900):
        sp = "eval" if i % 3 == 0 else "fit"
        f.write("r%d,%d,%s,%s\n" % (i, y[i], ",".join("%.17g" % v for v in s[i]), sp))
        g.write("r%d,%d,%s,%s\n" % (i, y[i], ",".join("%.17g" % v for v in p[i]), sp))
q = sm(rng.normal(0, 1.2, (6000, 4)))
y = draw(q)
with open(d + "/calibrated.csv", "w") as f:
    f.write("id,label,p_a,p_b,p_c,p_d,split\n")
    for i in range(6000):
        f.write("c%d,%d,%s,%s\n" % (i, y[i], ",".join("%.17g" % v for v in q[i]), "eval" if i % 3 == 0 else "fit"))
# 21 classes (one above the limit); and a 3-class file whose class 2 has two fitting rows
with open(d + "/k21.csv", "w") as f:
    f.write("id,label," + ",".join("p_%d" % c for c in range(21)) + "\n")
    for i in range(200):
        f.write("k%d,%d,%s\n" % (i, i % 21, ",".join(["%.17g" % (1 / 21)] * 21)))
with open(d + "/rare.csv", "w") as f:
    f.write("id,label,p_0,p_1,p_2,split\n")
    for i in range(300):
        lab = 2 if i in (0, 1, 2) else i % 2
        f.write("x%d,%d,0.5,0.3,0.2,%s\n" % (i, lab, "eval" if i == 2 else "fit"))
PY

# check_dm METHOD FILE NAME: calscope's held-out fit against the oracle's
check_dm() {
    local method=$1 file=$2 name=$3
    reference_output "$TMP/want.json" /usr/bin/python3 tests/oracles/recal_oracle.py "$method" "$file" 3
    expect_rc "$name: exit 0" 0 "$CALSCOPE" report --format json $R --recal "$method" --recal-split-column split "$file"
    local got
    got=$(json_get "json.dumps({'p': d['methods'][1]['recal']['params'], 'nll': d['methods'][1]['metrics']['nll']})")
    expect_match "$name: W, b to 1e-6 relative, held-out NLL to 1e-9, the same lambda and mu (scipy)" "^True$" "$(/usr/bin/python3 - "$TMP/want.json" "$got" <<'PY'
import json, sys
import numpy as np
want = json.load(open(sys.argv[1])); got = json.loads(sys.argv[2])
g = np.concatenate([np.ravel(got['p']['W']), got['p']['b']]); w = np.concatenate([np.ravel(want['W']), want['b']])
rel = float(np.max(np.abs(g - w) / np.maximum(np.abs(w), 1e-3)))
dn = abs(got['nll'] - want['nll'])
same = got['p']['lambda'] == want['lambda'] and got['p']['mu'] == want['mu']
sys.stderr.write("# %s: lambda %g mu %g (oracle %g %g), largest relative parameter difference %.2g, held-out NLL difference %.2g\n"
                 % (sys.argv[1], got['p']['lambda'], got['p']['mu'], want['lambda'], want['mu'], rel, dn))
ok = dn <= 1e-9 and rel <= 1e-6 and same and g.shape == w.shape
print(ok if ok else (ok, got, want))
PY
)"
}

check_dm ms "$TMP/logits.csv" "ms logits"
check_dm ms "$TMP/probs.csv" "ms log-probabilities"
check_dm dir "$TMP/probs.csv" "dir"
check_dm dir "$TMP/logits.csv" "dir on a logit file (ln of its softmax)"

# a calibrated file: dir moves no held-out probability by more than 0.02, the NLL by less than 0.002
expect_rc "dir calibrated: json" 0 "$CALSCOPE" report --format json $R --recal dir --recal-split-column split "$TMP/calibrated.csv"
expect_match "dir calibrated: held-out NLL within 0.002 of the file's" "^True$" \
    "$(json_get "abs(d['methods'][1]['metrics']['nll'] - d['methods'][0]['metrics']['nll']) < 0.002")"

# cross-fitted on digits: every model converges, the parameters of 5 folds and the all-rows model
expect_rc "dir digits: exit 0" 0 "$CALSCOPE" report --format json $R --recal ms,dir $S/digits_gnb.csv
expect_match "digits: ms and dir converge, 10x10 W, 10 b, lambda and mu per model" "^True$" \
    "$(json_get "d['methods_info']['not_converged'] == [] and all(len(m['recal']['fold_params']) == 5 and all(len(p['W']) == 10 and all(len(r) == 10 for r in p['W']) and len(p['b']) == 10 and p['W'][9] == [0]*10 and p['lambda'] in (1e-4, 1e-3, 1e-2, 1e-1, 1) and p['mu'] in (1e-4, 1e-3, 1e-2, 1e-1, 1) for p in m['recal']['fold_params'] + [m['recal']['params']]) for m in d['methods'][1:])")"
expect_match "digits: ms from log-probabilities, dir from ln p" "^\['log-probabilities', 'ln p'\]$" "$(json_get "[m['recal']['scores'] for m in d['methods'][1:]]")"
expect_rc "digits text: exit 0" 0 "$CALSCOPE" report $R --recal dir $S/digits_gnb.csv
expect_match "digits text: the Methods line names the chosen lambda and mu" "Dirichlet calibration \(ODIR\), 5-fold cross-fitted, lambda = [0-9.e-]+, mu = [0-9.e-]+ by inner cross-validation on all rows \(from ln p; [0-9]+ iterations at most\)" "$(unwrap '  [^ ]' <<<"$OUT")"

# the class limit: refused with a message naming vs and ts; --recal all leaves them out
expect_rc "limit: ms above 20 classes is a usage error" 2 "$CALSCOPE" report $R --recal ms "$TMP/k21.csv"
expect_match "limit: message" "k21.csv: matrix scaling fits \(K-1\)\(K\+1\) = 440 parameters per model and is offered up to 20 classes \(it has 21\); use vs or ts" "$ERR"
expect_rc "limit: dir" 2 "$CALSCOPE" report $R --recal dir "$TMP/k21.csv"
expect_match "limit: dir message" "k21.csv: Dirichlet calibration fits \(K-1\)\(K\+1\) = 440 parameters per model and is offered up to 20 classes \(it has 21\); use vs or ts" "$ERR"
expect_rc "limit: all leaves them out" 0 "$CALSCOPE" report --format json $R --recal all "$TMP/k21.csv"
expect_match "limit: all" "^\['ts', 'hist', 'iso', 'vs', 'ets', 'irova'\]$" "$(json_get "[m['recal']['method'] for m in d['methods'][1:]]")"

# the degenerate-fold rule: class 2 has two fitting rows, so some inner fold's fit lacks it
expect_rc "degenerate: an input error" 3 "$CALSCOPE" report $R --recal dir --recal-split-column split "$TMP/rare.csv"
expect_match "degenerate: names the class, the inner fold and the model" "rare.csv: dir needs every class among the fitting rows of every model, but class '2' has none in inner cross-validation fold [123] of the fit \(its parameters would have no finite optimum\); use ts, hist or iso, or fewer folds" "$ERR"

# the budget: a marked row with the reason
expect_rc "budget: exit 0" 0 "$CALSCOPE" report --format json $R --recal ms --recal-max-iter 1 $S/digits_gnb.csv
expect_match "budget: ms left out, with its reason" "^True$" \
    "$(json_get "len(d['methods']) == 1 and 'ms did not converge within 1 iterations' in d['methods_info']['not_converged'][0]['reason']")"

done_testing
