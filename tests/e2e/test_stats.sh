#!/usr/bin/env bash
# End-to-end tests of the statistics around the metrics: --compare of files that do not pair
# (one message, with its place, and no table), ties from rounding noise (a probability file
# against the softmax of its logits), bootstrap interval methods (BCa checked against scipy's
# own _bca_interval on the same resamples) and the bins curve's samples-per-bin floor.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PY=/usr/bin/python3

# expect_eq NAME WANT GOT
expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "want: $2" "got:  $3"; fi; }

# ---- item 8: --compare of files that do not pair ---------------------------------------------
printf 'id,label,p_0,p_1\n0,0,0.9,0.1\n1,1,0.2,0.8\n2,1,0.4,0.6\n3,0,0.7,0.3\n4,1,0.35,0.65\n' >"$TMP/a.csv"
printf 'id,label,p_0,p_1\n0,0,0.8,0.2\n1,1,0.3,0.7\n2,1,0.45,0.55\n3,0,0.6,0.4\n9,1,0.3,0.7\n' >"$TMP/b_missing.csv"
printf 'id,label,p_0,p_1\n0,0,0.8,0.2\n1,1,0.3,0.7\n1,1,0.45,0.55\n3,0,0.6,0.4\n4,1,0.3,0.7\n' >"$TMP/b_dup.csv"
printf 'id,label,p_0,p_1\n4,1,0.3,0.7\n0,0,0.8,0.2\n1,1,0.3,0.7\n2,0,0.45,0.55\n3,0,0.6,0.4\n' >"$TMP/b_label.csv"
printf 'label,p_0,p_1\n0,0.9,0.1\n1,0.2,0.8\n1,0.4,0.6\n' >"$TMP/a_noid.csv"
printf 'label,p_0,p_1\n0,0.8,0.2\n1,0.3,0.7\n1,0.45,0.55\n0,0.5,0.5\n' >"$TMP/b_noid.csv"

# no_table NAME: stdout has no table built on the comparison
no_table() {
    expect_no_match "$1: no Methods/Rankings/Mass/compare table" '^(Methods|compare  A)|Rankings|  Mass:' "$OUT"
}
run "$CALSCOPE" report --compare samples/digits_ts.csv samples/breast_cancer_gnb.csv
expect_eq "classes differ: exit 3" 3 "$RC"
expect_eq "classes differ: one message, at the header column of the first class without a partner" \
    "calscope: samples/digits_ts.csv:1:5: --compare: class '2' has no partner: samples/digits_ts.csv has 10 classes, samples/breast_cancer_gnb.csv has 2" "$ERR"
no_table "classes differ"
expect_match "classes differ: each file's own metrics still shown" '^samples/breast_cancer_gnb.csv$' "$OUT"

run "$CALSCOPE" report --compare "$TMP/a.csv" "$TMP/b_missing.csv"
expect_eq "id of A missing from B: exit 3" 3 "$RC"
expect_eq "id of A missing from B: the first such id of A, its line and the id column" \
    "calscope: $TMP/a.csv:6:1: --compare: id '4' is not in $TMP/b_missing.csv" "$ERR"
no_table "id missing"
run "$CALSCOPE" report --compare "$TMP/b_missing.csv" "$TMP/a.csv"
expect_eq "id of A missing from B, files swapped: names A's row" \
    "calscope: $TMP/b_missing.csv:6:1: --compare: id '9' is not in $TMP/a.csv" "$ERR"

run "$CALSCOPE" report --compare "$TMP/a.csv" "$TMP/b_dup.csv"
expect_eq "repeated id: at its second occurrence" \
    "calscope: $TMP/b_dup.csv:4:1: --compare: id '1' occurs twice (first on line 3)" "$ERR"
run "$CALSCOPE" report --compare "$TMP/a.csv" "$TMP/b_label.csv"
expect_eq "labels differ: at B's label, naming A's line" \
    "calscope: $TMP/b_label.csv:5:2: --compare: label '0' of id '2' differs from $TMP/a.csv:4 (label '1')" "$ERR"
no_table "labels differ"
run "$CALSCOPE" report --compare "$TMP/a_noid.csv" "$TMP/b_noid.csv"
expect_eq "no id column, counts differ: the first sample without a partner" \
    "calscope: $TMP/b_noid.csv:5: --compare: sample 4 has no partner: $TMP/a_noid.csv has 3 samples, $TMP/b_noid.csv has 4 (no id column in both: samples pair in file order)" "$ERR"
run "$CALSCOPE" report --compare "$TMP/a.csv" "$TMP/a.csv" "$TMP/b_missing.csv"
expect_eq "three files, one does not pair: exit 3" 3 "$RC"
expect_eq "three files: one message" "calscope: $TMP/a.csv:6:1: --compare: id '4' is not in $TMP/b_missing.csv" "$ERR"
no_table "three files"
run "$CALSCOPE" report --format json --compare "$TMP/a.csv" "$TMP/b_missing.csv"
expect_eq "JSON: the refusal under errors, no methods table" \
    "[{'path': '$TMP/b_missing.csv', 'status': 3, 'message': \"$TMP/a.csv:6:1: --compare: id '4' is not in $TMP/b_missing.csv\"}] False []" \
    "$(json_get "d['errors'], 'methods' in d, d['compare']")"

# ---- item 9: ties from rounding noise ----------------------------------------------------------
# the same model as probabilities and as logits whose softmax differs by about 1e-14
$PY - "$TMP" <<'PY'
import sys, numpy as np
out = sys.argv[1]
rng = np.random.default_rng(5)
n, k = 600, 4
z = rng.normal(0, 2.0, (n, k))
y = rng.integers(0, k, n)
def softmax(a):
    e = np.exp(a - a.max(1, keepdims=True)); return e / e.sum(1, keepdims=True)
p = softmax(z)
zl = z + rng.uniform(-1, 1, (n, k)) * 3e-14          # noise of about 1e-14 in the softmax
d = np.abs(softmax(zl) - p).max()
assert 1e-15 < d < 1e-12, d
with open(f"{out}/probs.csv", "w") as f:
    f.write("id,label," + ",".join(f"p_{j}" for j in range(k)) + "\n")
    for i in range(n): f.write(f"{i},{y[i]}," + ",".join(repr(float(v)) for v in p[i]) + "\n")
with open(f"{out}/logits.csv", "w") as f:
    f.write("id,label," + ",".join(f"logit_{j}" for j in range(k)) + "\n")
    for i in range(n): f.write(f"{i},{y[i]}," + ",".join(repr(float(v)) for v in zl[i]) + "\n")
PY
run "$CALSCOPE" report --format json --compare "$TMP/probs.csv" "$TMP/logits.csv"
expect_eq "noise pair: exit 0" 0 "$RC"
expect_eq "noise pair: the files really differ (brier, nll not bit-identical)" "True" \
    "$(json_get "all(e['a'] != e['b'] for e in d['compare'] if e['metric'] in ('brier', 'nll'))")"
expect_eq "noise pair: every paired difference is a tie (equal true, p_better null)" "True" \
    "$(json_get "all(e['equal'] and e['p_better'] is None and e['p_equal'] == 1 for e in d['compare'])")"
expect_eq "noise pair: both methods rank 1 under every metric" "True" \
    "$(json_get "all(r == [1, 1] for k, r in d['rankings'].items() if k != 'differs_from_ece')")"
expect_eq "noise pair: no vs_reference interval excludes 0" "False" \
    "$(json_get "any(v['excludes_zero'] for k, v in d['methods'][1]['vs_reference'].items() if k not in ('pairs', 'too_few'))")"
run "$CALSCOPE" report --compare "$TMP/probs.csv" "$TMP/logits.csv"
expect_match "noise pair text: brier shows = for p_better" '^  brier +[0-9.]+ +[0-9.]+ +0\.000000  \[ 0\.000000,  0\.000000\] +=$' "$OUT"
expect_match "noise pair text: the = legend" '^  = : a tie, A and B and every resample within 1e-09 of the metric.s scale \(rounding noise\)$' "$(unwrap '^  = : ' <<<"$OUT")"
expect_match "noise pair methods table: = for p_better" '^    \[2\] +[0-9.]+ \[[0-9.]+, [0-9.]+\]  \+0\.0000 \[\+0\.0000, \+0\.0000\]   p_better =$' "$OUT"
expect_no_match "noise pair methods table: no rank 2" '^  \[2\]( +1)* +2( |$)' "$OUT"
# a real difference is still one: the logits scaled by 2 (a sharper, worse-calibrated model)
$PY - "$TMP" <<'PY'
import sys
out = sys.argv[1]
rows = open(f"{out}/logits.csv").read().splitlines()
with open(f"{out}/sharp.csv", "w") as f:
    f.write(rows[0] + "\n")
    for r in rows[1:]:
        a = r.split(","); f.write(",".join(a[:2] + [repr(2 * float(v)) for v in a[2:]]) + "\n")
PY
run "$CALSCOPE" report --format json --compare "$TMP/probs.csv" "$TMP/sharp.csv"
expect_eq "real difference: no tie, p_better a number" "False True" \
    "$(json_get "d['compare'][1]['equal'], d['compare'][1]['p_better'] is not None")"

# ---- item 10: interval methods -----------------------------------------------------------------
run "$CALSCOPE" report --ci 200 samples/digits_ts.csv
expect_match "percentile interval that misses the value: marked" '^  sce             0\.004182   \[ 0\.004815,  0\.006712\] !$' "$OUT"
expect_no_match "an interval that contains its value: not marked" '^  ece .*!$' "$OUT"
expect_eq "the note under the table" \
"  ! the interval does not contain the value: it is the percentile bootstrap of a
    biased statistic (binned errors are biased upwards, resamples with their
    repeated rows more so); --ci-method bca (or basic) gives a bias-corrected
    interval" \
    "$(printf '%s\n' "$OUT" | grep -A3 '^  ! the interval')"
run "$CALSCOPE" report --ci 200 --format json samples/digits_ts.csv
expect_eq "JSON: ci_info names the method and the metrics whose interval misses the value (smooth ECE is biased too)" \
    "percentile ['sce', 'smece'] [] True" \
    "$(json_get "d['files'][0]['ci_info']['method'], d['files'][0]['ci_info']['excludes_value'], d['files'][0]['ci_info']['undefined'], d['files'][0]['ci_info']['bias']['sce'] > 0")"
expect_eq "JSON: settings.ci_method" "percentile" "$(json_get "d['files'][0]['settings']['ci_method']")"
run "$CALSCOPE" report --ci 200 --ci-method bca samples/digits_ts.csv
expect_match "BCa undefined when every resample is on one side: n/a" '^  sce             0\.004182   \[      n/a,       n/a\]$' "$OUT"
expect_match "BCa: the ECE interval contains the value" '^  ece             0\.007230   \[ 0\.00[0-6][0-9]+,  0\.00(72[4-9]|7[3-9]|[89])[0-9]*\]$' "$OUT"
expect_rc "--ci-method without --ci: usage error" 2 "$CALSCOPE" report --ci-method bca samples/digits_ts.csv
expect_eq "--ci-method without --ci: message" \
    "calscope: --ci-method needs --ci, --compare or --recal
Try \`calscope report --help\`." "$ERR"
expect_rc "--ci-method unknown: usage error" 2 "$CALSCOPE" report --ci 10 --ci-method bootstrap samples/digits_ts.csv
expect_eq "--ci-method unknown: message" \
    "calscope: --ci-method: 'bootstrap' is not percentile, basic or bca
Try \`calscope report --help\`." "$ERR"

# BCa, basic and percentile against scipy.stats' own BCa code on the same resamples: the
# resamples are redrawn here from calscope's documented generator (splitmix64 streams,
# Lemire bounded draws), the metrics recomputed in numpy, and scipy's _bca_interval (the
# function scipy.stats.bootstrap calls) gives the BCa quantile levels.
$PY - "$TMP" <<'PY'
import sys, numpy as np
out = sys.argv[1]
rng = np.random.default_rng(11)
n, k = 60, 3
z = rng.normal(0, 1.5, (n, k)); p = np.exp(z); p /= p.sum(1, keepdims=True)
y = np.array([rng.choice(k, p=q) for q in p])
with open(f"{out}/tiny.csv", "w") as f:
    f.write("label," + ",".join(f"p_{j}" for j in range(k)) + "\n")
    for i in range(n): f.write(f"{y[i]}," + ",".join(repr(float(v)) for v in p[i]) + "\n")
PY
for m in percentile basic bca; do
    "$CALSCOPE" report --ci 300 --seed 7 --ci-method $m --format json "$TMP/tiny.csv" >"$TMP/ci_$m.json"
done
CHECK=$($PY - "$TMP" <<'PY' 2>&1
import sys, json, numpy as np
from scipy.stats._resampling import _bca_interval
out = sys.argv[1]
rows = [l.split(",") for l in open(f"{out}/tiny.csv").read().split()[1:]]
y = np.array([int(r[0]) for r in rows]); P = np.array([[float(v) for v in r[1:]] for r in rows])
n, k = P.shape
M64 = (1 << 64) - 1; G = 0x9e3779b97f4a7c15
def mix(z):
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return z ^ (z >> 31)
class Rng:
    def __init__(s, seed, stream, point, rep):
        h = mix((seed + G) & M64)
        for v, c in ((stream, 0x632be59bd9b4e019), (point, 0x8cb92ba72f3d8dd7), (rep, 0xd1b54a32d192ed03)):
            h = mix(h ^ ((v + c) & M64))
        s.state = h
    def next(s):
        s.state = (s.state + G) & M64; return mix(s.state)
    def below(s, b):
        m = (s.next() >> 32) * b
        if (m & 0xffffffff) < b:
            t = ((1 << 32) - b) % b
            while (m & 0xffffffff) < t: m = (s.next() >> 32) * b
        return m >> 32
conf = P.max(1); pred = P.argmax(1); corr = (pred == y).astype(float)
def metrics(idx):
    idx = np.asarray(idx); c = conf[idx]; a = corr[idx]
    b = np.clip(np.ceil(c * 15) - 1, 0, 14).astype(int)
    ece = sum(abs(c[b == i].mean() - a[b == i].mean()) * (b == i).sum() for i in range(15) if (b == i).any()) / len(idx)
    Y = np.eye(k)[y[idx]]
    return {"accuracy": a.mean(), "ece": ece, "brier": ((P[idx] - Y) ** 2).sum(1).mean(),
            "nll": -np.log(np.maximum(P[idx, y[idx]], 1e-15)).mean()}
R, seed = 300, 7
boot = [metrics([r.below(n) for _ in range(n)]) for r in (Rng(seed, 3, 0, i) for i in range(R))]
full = metrics(np.arange(n))
bad = []
for name in ("accuracy", "ece", "brier", "nll"):
    tb = np.array([b[name] for b in boot]); th = full[name]
    stat = lambda x, axis=-1, name=name: np.apply_along_axis(lambda i: metrics(i.astype(int))[name], axis, x)
    a1, a2, _ = _bca_interval((np.arange(n),), stat, -1, 0.025, tb, None)
    want = {"percentile": np.percentile(tb, [2.5, 97.5]),
            "basic": [max(2 * th - np.percentile(tb, 97.5), 0), 2 * th - np.percentile(tb, 2.5)],
            "bca": np.percentile(tb, [100 * a1, 100 * a2])}
    for m, w in want.items():
        got = json.load(open(f"{out}/ci_{m}.json"))["files"][0]["metrics"][name + "_ci"]
        if not np.allclose(got, w, rtol=1e-9, atol=1e-12): bad.append(f"{m} {name}: calscope {got}, reference {list(w)}")
print("; ".join(bad) if bad else "same")
PY
)
expect_eq "percentile, basic and BCa intervals = numpy/scipy on the same resamples (N=60, leave-one-out jackknife)" "same" "$CHECK"
expect_eq "JSON: BCa's jackknife groups (leave-one-out below 100 samples)" "bca 60" \
    "$($PY -c "import json; c = json.load(open('$TMP/ci_bca.json'))['files'][0]['ci_info']; print(c['method'], c['jackknife_groups'])")"

# ---- item 11: no stability claim on too few samples per bin --------------------------------------
$PY - "$TMP" <<'PY'
import sys, numpy as np
out = sys.argv[1]
rng = np.random.default_rng(2)
with open(f"{out}/few.csv", "w") as f:
    f.write("label,p_0,p_1,p_2\n")
    for i in range(300):
        top = 0.97 if i >= 4 else 0.5 + 0.02 * i       # 4 samples with conf < 0.6
        r = (1 - top) / 2
        f.write(f"{rng.integers(0, 3)},{top!r},{r!r},{r!r}\n")
PY
run "$CALSCOPE" report --curve bins --select 'conf < 0.6' "$TMP/few.csv"
expect_no_match "4 samples: no point is marked stable" ' stable$' "$OUT"
expect_eq "4 samples: the floor is said" \
"  no stable range: stability is only claimed where there are at least 10 samples per bin
  (N/M for M bins, gamma*N for kd-tree cells)" "$(printf '%s\n' "$OUT" | grep -A1 '^  no stable range')"
run "$CALSCOPE" report --format json --curve bins --select 'conf < 0.6' "$TMP/few.csv"
expect_eq "4 samples JSON: stable null, the floor given" "None 10" \
    "$(json_get "d['files'][0]['curve']['stable'], d['files'][0]['curve']['stable_min_per_bin']")"
run "$CALSCOPE" report --format json --curve bins samples/digits_ts.csv
expect_eq "1797 samples: the stable range lies where N/M >= 10 (M <= 179)" "True" \
    "$(json_get "d['files'][0]['curve']['stable'] is not None and d['files'][0]['curve']['stable']['to'] <= 179")"

# ---- the dashboard: --ci-method, the marker, ':' and ties ---------------------------------------
SOCK_BASE="calscope-stats-$$-$RANDOM"; N_SOCK=0; SOCK=$SOCK_BASE-0
T() { tmux -L "$SOCK" "$@"; }
kill_all() { local i; for i in $(seq 0 "$N_SOCK"); do tmux -L "$SOCK_BASE-$i" kill-server >/dev/null 2>&1; done; }
trap 'kill_all; rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$SOCK_BASE"-*; rm -rf "$TMP"' EXIT
# dash ARGS...: a fresh 80x24 dashboard on a fresh server (the pane stays after it exits and
# says EXITED <status>)
dash() {
    T kill-server >/dev/null 2>&1
    N_SOCK=$((N_SOCK + 1)); SOCK=$SOCK_BASE-$N_SOCK
    T new-session -d -x 80 -y 24 "env LANG=C.UTF-8 $CALSCOPE $*; echo EXITED \$?; sleep 120"
}
if command -v tmux >/dev/null; then
    dash --ci 200 samples/digits_ts.csv
    check_screen "dashboard: the interval that misses its value is marked" 'SCE +0\.0042 \[0\.0048,0\.0067\]!'
    check_screen "dashboard: the marker explained" 'intervals: percentile, R=200'
    check_screen "dashboard: the marker's line" '\]! misses the value: biased'
    T send-keys q
    dash --ci 200 --ci-method bca samples/digits_ts.csv
    check_screen "dashboard --ci-method bca: BCa intervals, undefined as n/a" 'SCE +0\.0042 \[n/a\]'
    check_screen "dashboard --ci-method bca: named" 'intervals: bca, R=200'
    T send-keys :
    check_screen "dashboard ':' shows --ci-method beside --ci" '--ci 200 --ci-method bca'
    T send-keys Escape q
    dash --ci-method basic samples/digits_ts.csv
    T send-keys :
    check_cmdline "dashboard ':' shows the command line"
    expect_match "dashboard ':' without intervals: a whole command" '^calscope report .*digits_ts\.csv$' "$CMD"
    expect_no_match "dashboard ':' without intervals: no --ci-method (the report would refuse it)" 'ci-method' "$CMD"
    T send-keys Escape q
    dash --ci-method jackknife samples/digits_ts.csv
    check_screen "dashboard: unknown --ci-method refused" "calscope: --ci-method: 'jackknife' is not percentile, basic or bca"
    check_screen "dashboard: unknown --ci-method exits 2" 'EXITED 2'
    dash "$TMP/probs.csv" "$TMP/logits.csv"
    T send-keys 5
    check_screen "dashboard compare: the noise pair shows = for P<" 'logits\.csv +[0-9.]+ .* \+0\.0000 +\[\+0\.0000,\+0\.0000\] +=$'
    T send-keys q
else
    ok "dashboard checks skipped: no tmux # SKIP"
fi

done_testing
