#!/usr/bin/env bash
# End-to-end tests of .npy classification pairs: `calscope report --labels
# y.npy probs.npy`. The arrays are written by numpy (np.save) and the same numbers as a CSV
# (%.17g: every double reads back exactly), so the report of the pair must equal the report of
# the CSV in every JSON field but the path; C and Fortran order, float32 probabilities, integer
# and integral-float labels, logits with --npy-logits. Then every refusal, verbatim, and the
# dashboard on the same pair (tmux, 80x24).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

/usr/bin/python3 - "$TMP" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(12)
n, k = 300, 4
p = rng.dirichlet([0.6] * k, size=n)
y = rng.integers(0, k, n)
def csv(name, cols, vals, label):
    with open(f'{d}/{name}', 'w') as f:
        f.write(','.join(['label'] + cols) + '\n')
        for i in range(n):
            f.write(','.join([str(int(label[i]))] + ['%.17g' % v for v in vals[i]]) + '\n')
np.save(f'{d}/p.npy', p)
np.save(f'{d}/y.npy', y)
csv('p.csv', ['p_%d' % j for j in range(k)], p, y)
np.save(f'{d}/pf.npy', np.asfortranarray(p))
np.save(f'{d}/y8.npy', y.astype(np.uint8))
np.save(f'{d}/yf.npy', y.astype(np.float32))
p32 = p.astype(np.float32)
p32 /= p32.sum(axis=1, keepdims=True)          # rows still sum to 1 within 1e-3
np.save(f'{d}/p32.npy', p32)
csv('p32.csv', ['p_%d' % j for j in range(k)], p32.astype(np.float64), y)
z = rng.normal(0, 2, (n, k))
np.save(f'{d}/z.npy', z)
csv('z.csv', ['logit_%d' % j for j in range(k)], z, y)
# broken ones
q = p.copy(); q[11, 2] = 1.25; np.save(f'{d}/range.npy', q)
q = p.copy(); q[4, 0] += 0.01; np.save(f'{d}/sum.npy', q)
csv('sum.csv', ['p_%d' % j for j in range(k)], q, y)
q = p.copy(); q[6, 1] = np.nan; np.save(f'{d}/nan.npy', q)
yy = y.astype(np.float64); yy[11] = 1.5; np.save(f'{d}/yhalf.npy', yy)
yy = y.copy(); yy[7] = 4; np.save(f'{d}/yrange.npy', yy)
np.save(f'{d}/yshort.npy', y[:40])
np.save(f'{d}/p1.npy', p[:, 0])
np.save(f'{d}/pc.npy', p.astype(np.complex128))
raw = open(f'{d}/p.npy', 'rb').read()
open(f'{d}/trunc.npy', 'wb').write(raw[:len(raw) - 8 * 100])
PY

# pair_vs_csv NAME "PAIR ARGS" CSV [FLAGS...]
pair_vs_csv() {
    local name=$1 pair=$2 csv=$3; shift 3
    # shellcheck disable=SC2086
    run "$CALSCOPE" report --format json "$@" $pair
    if [ "$RC" -ne 0 ]; then not_ok "$name" "pair: exit $RC: ${ERR:0:300}"; return; fi
    printf '%s' "$OUT" >"$TMP/a.json"
    run "$CALSCOPE" report --format json "$@" "$csv"
    if [ "$RC" -ne 0 ]; then not_ok "$name" "csv: exit $RC: ${ERR:0:300}"; return; fi
    printf '%s' "$OUT" >"$TMP/b.json"
    same_json "$name" "$TMP/a.json" "$TMP/b.json"
}

pair_vs_csv "npy pair = CSV (float64, int64 labels)" "--labels $TMP/y.npy $TMP/p.npy" "$TMP/p.csv"
pair_vs_csv "Fortran order, uint8 labels" "--labels $TMP/y8.npy $TMP/pf.npy" "$TMP/p.csv"
pair_vs_csv "float labels with integral values" "--labels $TMP/yf.npy $TMP/p.npy" "$TMP/p.csv"
pair_vs_csv "float32 probabilities" "--labels $TMP/y.npy $TMP/p32.npy" "$TMP/p32.csv"
pair_vs_csv "logits (--npy-logits) = logit_ columns" "--npy-logits --labels $TMP/y.npy $TMP/z.npy" "$TMP/z.csv"
pair_vs_csv "class-wise lens, intervals" "--labels $TMP/y.npy $TMP/p.npy" "$TMP/p.csv" \
    --lens classwise --bins 10 --ci 50 --seed 7
pair_vs_csv "--skip-bad-rows drops the same row" "--labels $TMP/y.npy $TMP/sum.npy" "$TMP/sum.csv" \
    --skip-bad-rows
run "$CALSCOPE" report --format json --skip-bad-rows --labels "$TMP/y.npy" "$TMP/sum.npy"
expect_match "--skip-bad-rows counts the row" '"rows": 299, .*"rejected": 1' "$OUT"
expect_match "... and names it FILE:ROW:COL" "\"skipped\": \[\"$TMP/sum.npy:5:1: probabilities sum to 1.01, not 1 within 0.001\"\]" "$OUT"

run "$CALSCOPE" report --labels "$TMP/y.npy" "$TMP/p.npy"
expect_match "text report: classes named 0..K-1" 'load +300 rows read, 300 used, 0 rejected; 4 classes' "$OUT"

# refusals: usage (2)
expect_rc "a .npy file without --labels: exit 2" 2 "$CALSCOPE" report "$TMP/p.npy"
expect_match "... says to give --labels" \
    "^calscope: $TMP/p.npy: a .npy prediction file needs its labels: --labels FILE.npy$" "$ERR"
expect_rc "--labels with a CSV file: exit 2" 2 "$CALSCOPE" report --labels "$TMP/y.npy" "$TMP/p.csv"
expect_match "... message" \
    "^calscope: $TMP/p.csv: --labels is for .npy prediction files \(a CSV file has its own label column\)$" "$ERR"
expect_rc "--npy-logits with a CSV file: exit 2" 2 "$CALSCOPE" report --npy-logits "$TMP/p.csv"
expect_match "... message" \
    "^calscope: $TMP/p.csv: --npy-logits is for .npy prediction files \(a CSV file names logit_ columns\)$" "$ERR"
expect_rc "--no-header with a .npy pair: exit 2" 2 "$CALSCOPE" report --no-header --labels "$TMP/y.npy" "$TMP/p.npy"
expect_match "... message" "^calscope: $TMP/p.npy: --no-header is for CSV files, not a .npy pair$" "$ERR"
expect_rc "--renormalize with --npy-logits: exit 2" 2 "$CALSCOPE" report --renormalize --npy-logits --labels "$TMP/y.npy" "$TMP/z.npy"
expect_match "... no row of probabilities to rescale" \
    "^calscope: --renormalize rescales rows of class probabilities; no FILE has them \(logits, a binary p column and statistics files have no row to rescale\)$" "$ERR"
expect_rc "--sum-tol with --npy-logits: exit 2" 2 "$CALSCOPE" report --sum-tol 0.01 --npy-logits --labels "$TMP/y.npy" "$TMP/z.npy"
expect_match "... no row sum to check" \
    "^calscope: --sum-tol checks that rows of class probabilities sum to 1; no FILE has them \(logits, a binary p column and statistics files have no row sum to check\)$" "$ERR"
expect_rc "--renormalize on a .npy of probabilities: exit 0" 0 "$CALSCOPE" report --renormalize --labels "$TMP/y.npy" "$TMP/p.npy"
expect_rc "labels not a .npy: exit 2" 2 "$CALSCOPE" report --labels "$TMP/p.csv" "$TMP/p.npy"
expect_match "... message" \
    "^calscope: $TMP/p.npy: $TMP/p.csv: the labels of a .npy prediction file must be a .npy file$" "$ERR"

# refusals: input (3), FILE:ROW:CLASS
bad() {   # bad NAME WANT-STDERR ARGS...
    local name=$1 want=$2; shift 2
    run "$CALSCOPE" report "$@"
    if [ "$RC" -eq 3 ] && [ "$ERR" = "$want" ]; then ok "$name"
    else not_ok "$name" "exit $RC (want 3)" "got:  $ERR" "want: $want"; fi
}
bad "probability out of range" "calscope: $TMP/range.npy:12:3: probability outside [0,1] '1.25' in column 'p_2'" \
    --labels "$TMP/y.npy" "$TMP/range.npy"
bad "row sum" "calscope: $TMP/sum.npy:5:1: probabilities sum to 1.01, not 1 within 0.001" \
    --labels "$TMP/y.npy" "$TMP/sum.npy"
bad "NaN" "calscope: $TMP/nan.npy:7:2: NaN or infinite value 'nan' in column 'p_1'" \
    --labels "$TMP/y.npy" "$TMP/nan.npy"
bad "label not an integer" "calscope: $TMP/p.npy: $TMP/yhalf.npy:12:1: label '1.5' is not an integer" \
    --labels "$TMP/yhalf.npy" "$TMP/p.npy"
bad "label out of range" "calscope: $TMP/p.npy: $TMP/yrange.npy:8:1: label '4' out of range 0..3" \
    --labels "$TMP/yrange.npy" "$TMP/p.npy"
bad "label count" "calscope: $TMP/p.npy: $TMP/yshort.npy: 40 labels, but $TMP/p.npy has 300 rows" \
    --labels "$TMP/yshort.npy" "$TMP/p.npy"
bad "1-D probabilities" "calscope: $TMP/p1.npy: want an N x K array of probabilities, not shape (300,)" \
    --labels "$TMP/y.npy" "$TMP/p1.npy"
bad "complex dtype" "calscope: $TMP/pc.npy: unsupported dtype '<c16' (want <f2 <f4 <f8 |u1 |i1 <i2 <u2 <i4 <u4 <i8 <u8 |b1, or > for big-endian)" \
    --labels "$TMP/y.npy" "$TMP/pc.npy"
bad "truncated" "calscope: $TMP/trunc.npy: truncated: 1100 of 1200 values" \
    --labels "$TMP/y.npy" "$TMP/trunc.npy"
bad "missing" "calscope: $TMP/none.npy: cannot open: No such file or directory" \
    --labels "$TMP/y.npy" "$TMP/none.npy"
run "$CALSCOPE" report --sum-tol 0.02 --labels "$TMP/y.npy" "$TMP/sum.npy"
expect_match "--sum-tol applies" 'load +300 rows read, 300 used' "$OUT"

# ---- the dashboard: calscope --labels y.npy probs.npy ----
run "$CALSCOPE" report --format json --labels "$TMP/y.npy" "$TMP/p.npy"
ECE=$(json_get '"%.4f" % d["files"][0]["metrics"]["ece"]')
tmux_servers npy
BIN=$(cd "$(dirname "$CALSCOPE")" && pwd)/$(basename "$CALSCOPE")
new_server
T new-session -d -x 80 -y 24 "'$BIN' --labels '$TMP/y.npy' '$TMP/p.npy'; echo EXITED \$?; sleep 86400"
check_screen "dashboard: the pair loads" 'rows 300 used 300 rejected 0' 30
check_screen "dashboard: the report's ECE" "ECE +$ECE"
keys q
check_screen "dashboard: q quits with status 0" 'EXITED 0$'
new_server
T new-session -d -x 80 -y 24 "'$BIN' '$TMP/p.npy'; echo EXITED \$?; sleep 86400"
check_screen "dashboard: a .npy file without --labels says to give it" \
    'a .npy prediction file needs its labels: --labels' 30

done_testing
