#!/usr/bin/env bash
# End-to-end tests of --boot-size: intervals and paired comparisons of more than 30,000 samples
# draw 30,000 of them (m out of n) and say so; MCE, ACE and SCE (and on a lens of several
# coordinates every metric that reads it) then have no interval and say what gives one
# (--boot-size full); full draws all n, as below the threshold; every refusal
# with its message. The numbers of an m-out-of-n replicate are checked in
# tests/unit/test_replicates.c (each replicate against its draw evaluated whole).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HINT='Try `calscope report --help`.'
# every line of $OUT at most 80 columns
width_ok() {
    if printf '%s' "$OUT" | /usr/bin/python3 -c 'import sys; t=sys.stdin.read(); sys.exit(0 if t and max(len(l) for l in t.split("\n")) <= 80 else 1)'
    then ok "$1"; else not_ok "$1" "a line wider than 80 columns"; fi
}
A=$TMP/a.csv
B=$TMP/b.csv
# 40,000 rows of 4 classes, labels drawn from the probabilities (a calibrated B), and A the same
# rows sharpened (overconfident): A's ECE is clearly larger
/usr/bin/python3 - "$A" "$B" <<'PY'
import sys, random
random.seed(5)
with open(sys.argv[1], "w") as fa, open(sys.argv[2], "w") as fb:
    fa.write("label,p_0,p_1,p_2,p_3\n")
    fb.write("label,p_0,p_1,p_2,p_3\n")
    for _ in range(40000):
        w = [random.random() ** 2 for _ in range(4)]
        s = sum(w)
        p = [x / s for x in w]
        u, c, y = random.random(), 0.0, 3
        for j, x in enumerate(p):
            c += x
            if u < c:
                y = j
                break
        q = [x ** 2 for x in p]
        t = sum(q)
        fa.write(f"{y}," + ",".join(f"{x / t:.6f}" for x in q) + "\n")
        fb.write(f"{y}," + ",".join(f"{x:.6f}" for x in p) + "\n")
PY

# ---- intervals of one file ----
expect_rc "json --ci on 40,000 samples" 0 $CALSCOPE report --format json --ci 30 --seed 2 "$A"
expect_match "draws of 30,000" '^30000$' "$(json_get "d['files'][0]['ci_info']['draw_size']")"
expect_match "mce, ace, sce need full draws" "^\['ace', 'mce', 'sce'\]$" \
    "$(json_get "d['files'][0]['ci_info']['needs_full_draws']")"
expect_match "not listed as undefined" '^\[\]$' "$(json_get "d['files'][0]['ci_info']['undefined']")"
expect_match "mce has no interval" '^\[None, None\]$' "$(json_get "d['files'][0]['metrics'].get('mce_ci')")"
expect_match "ece has one around its value" '^True$' \
    "$(json_get "(lambda m: m['ece_ci'][0] < m['ece'] < m['ece_ci'][1])(d['files'][0]['metrics'])")"

expect_rc "text --ci" 0 $CALSCOPE report --ci 30 --seed 2 "$A"
expect_match "the draws line" '^  draws     30000 of the 40000 samples each \(m out of n\), spread scaled by$' "$OUT"
expect_match "mce says how to get one" '^  mce +[0-9.]+   n/a: --boot-size full$' "$OUT"
expect_match "ece has an interval" '^  ece +[0-9.]+   \[ *[0-9.]+, +[0-9.]+\]' "$OUT"
expect_no_match "no nan" 'nan' "$OUT"
width_ok "text fits 80 columns"

run $CALSCOPE report --format json --ci 30 --seed 2 --boot-size full "$A"
expect_match "full: all 40,000" '^40000$' "$(json_get "d['files'][0]['ci_info']['draw_size']")"
expect_match "full: none missing" '^\[\]$' "$(json_get "d['files'][0]['ci_info']['needs_full_draws']")"
expect_match "full: mce has an interval" '^2$' "$(json_get "len(d['files'][0]['metrics']['mce_ci'])")"
cp "$TMP/out" "$TMP/full.json"
run $CALSCOPE report --format json --ci 30 --seed 2 --boot-size 40000 "$A"
if cmp -s "$TMP/out" "$TMP/full.json"; then ok "a size of n or more is full"; else not_ok "a size of n or more is full"; fi
run $CALSCOPE report --format json --ci 30 --seed 2 --boot-size 35000 "$A"
expect_match "an explicit size" '^35000$' "$(json_get "d['files'][0]['ci_info']['draw_size']")"

# a lens of several coordinates: its grid cells are sparse, so ECE has no m-out-of-n interval
# either; Brier does not read the lens and keeps one
run $CALSCOPE report --format json --lens topk:2 --ci 30 --seed 2 "$A"
expect_match "topk:2: ece needs full draws too" "^\['ece', 'ace', 'mce', 'sce'\]$" \
    "$(json_get "d['files'][0]['ci_info']['needs_full_draws']")"
expect_match "topk:2: brier keeps its interval" '^2$' "$(json_get "len([x for x in d['files'][0]['metrics']['brier_ci'] if x is not None])")"
run $CALSCOPE report --lens topk:2 --ci 30 --seed 2 "$A"
expect_match "topk:2 text: ece says how" '^  ece +[0-9.]+   n/a: --boot-size full$' "$OUT"
expect_match "the draws line says where" '^            sqrt\(m/n\); no interval where marked n/a \(--boot-size full\)$' "$OUT"

# below the threshold nothing changes: the same bytes with or without full
run $CALSCOPE report --format json --ci 20 --seed 1 samples/digits_gnb.csv
cp "$TMP/out" "$TMP/small.json"
run $CALSCOPE report --format json --ci 20 --seed 1 --boot-size full samples/digits_gnb.csv
if cmp -s "$TMP/out" "$TMP/small.json"; then ok "1,797 samples: all of them either way"; else not_ok "1,797 samples: all of them either way"; fi

# ---- a paired comparison ----
expect_rc "compare json" 0 $CALSCOPE report --compare --repeats 60 --format json "$A" "$B"
expect_match "compare draws 30,000 pairs" '^30000 40000$' \
    "$(json_get "d['compare_info']['draw_size'], d['compare_info']['pairs']" | tr -d '(),')"
expect_match "mce: a difference, no interval" '^True None None$' \
    "$(json_get "(lambda e: (e['diff'] is not None, e['lo'], e['p_better']))([e for e in d['compare'] if e['metric'] == 'mce'][0])" | tr -d '(),')"
expect_match "the verdict on ECE stands" "^b$" "$(json_get "d['compare_info']['verdict']['better']")"

run $CALSCOPE report --compare --repeats 60 "$A" "$B"
expect_match "compare text: mce says how" '^  mce( +-?[0-9.]+){3}  n/a: --boot-size full$' "$OUT"
expect_match "compare text: the draws line" '^  draws     30000 of the 40000 samples each' "$OUT"
expect_no_match "compare text: no nan" 'nan' "$OUT"
width_ok "compare text fits 80 columns"

run $CALSCOPE report --compare --repeats 60 --verdict-metric mce "$A" "$B"
expect_match "a verdict on mce says why not" \
    "verdict: n/a; MCE [-+][0-9.]+ has no interval from draws of fewer than all samples" "$(printf '%s' "$OUT" | tr -s '\n ' '  ')"

run $CALSCOPE report --compare --repeats 60 --boot-size full --format json "$A" "$B"
expect_match "compare full: an mce interval" '^True$' \
    "$(json_get "[e for e in d['compare'] if e['metric'] == 'mce'][0]['lo'] is not None")"

# ---- the methods table (--recal): the same draws, said under the table and in methods_info ----
expect_rc "recal json" 0 $CALSCOPE report --format json --recal ts --repeats 40 --ci 20 "$A"
expect_match "methods_info.draw_size" '^30000$' "$(json_get "d['methods_info'].get('draw_size')")"
expect_match "the top-k column: no m-of-n interval" '^\[None, None\] None$' \
    "$(json_get "d['methods'][1]['metrics']['topk_ece_ci'], d['methods'][1]['vs_reference']['topk_ece']['lo']" | tr -d '()' | sed 's/\], /] /')"
run $CALSCOPE report --format json --recal ts --repeats 40 --ci 20 --boot-size full "$A"
expect_match "the top-k column: full draws give one" '^2 True$' \
    "$(json_get "len([x for x in d['methods'][1]['metrics']['topk_ece_ci'] if x is not None]), d['methods'][1]['vs_reference']['topk_ece']['lo'] is not None" | tr -d '(),')"
run $CALSCOPE report --recal ts --repeats 40 --ci 20 "$A"
expect_match "recal text: ts's mce says how" '\[2\] +[0-9.]+ \[n/a, n/a\] +-[0-9.]+ n/a: --boot-size full' "$OUT"
expect_match "recal text: the draws line under the table" '^            sqrt\(m/n\); no interval where marked n/a \(--boot-size full\)$' \
    "$(printf '%s\n' "$OUT" | sed -n '/^Methods (lens/,/^  Rankings/p')"
width_ok "recal text fits 80 columns"

# ---- the dashboard at 80x24: the metrics table and the Compare view's methods panel ----
tmux_servers boot
screen_text() { T capture-pane -p; }
new_server
T new-session -d -x 80 -y 24 "$CALSCOPE --ci 40 $A $B; echo EXITED \$?; sleep 86400"
if wait_for 'm<n: drew 30000 of 40000'; then ok "dashboard: the draws line"; else not_ok "dashboard: the draws line" "$SCREEN"; fi
check_screen "dashboard: MCE says m<n" 'MCE +[0-9.]+ n/a: m<n'
check_screen "dashboard: and what gives one" 'n/a: needs --boot-size full'
check_not_screen "dashboard: no nan" 'nan'
keys 5
keys p
if wait_for 'draws of 30000 of the 40000 pairs \(m out of n\); no interval where'; then ok "Compare: the draws note"; else not_ok "Compare: the draws note" "$SCREEN"; fi
# focus the SCE column: ] until the header marks it
for _ in $(seq 14); do
    wait_for 'column [0-9]+/14' >/dev/null
    screen_matches '\[SCE\]' && break
    col=$(printf '%s' "$SCREEN" | grep -Eo 'column [0-9]+/14' | grep -Eo '[0-9]+/' | tr -d /)
    keys ']'
    wait_for "column $((col % 14 + 1))/14" >/dev/null   # the press drawn before the next look
done
if wait_for 'b.csv +[0-9.]+ +-[0-9.]+ n/a: --boot-size full'; then ok "Compare: SCE's paired n/a"; else not_ok "Compare: SCE's paired n/a" "$SCREEN"; fi
check_not_screen "Compare: no nan" 'nan'
keys q
if wait_for 'EXITED 0'; then ok "q quits"; else not_ok "q quits" "$SCREEN"; fi

# ---- refusals ----
expect_rc "too small a size" 2 $CALSCOPE report --ci 10 --boot-size 999 "$A"
expect_match "its message" "^calscope: --boot-size: need auto, full or a whole number of samples from 1000 to 4294967295, got '999'
$HINT$" "$ERR"
expect_rc "not a number" 2 $CALSCOPE report --ci 10 --boot-size lots "$A"
expect_match "its message too" "got 'lots'" "$ERR"
expect_rc "nothing to resample" 2 $CALSCOPE report --boot-size 5000 "$A"
expect_match "what it needs" "^calscope: --boot-size needs --ci, --compare or --recal
$HINT$" "$ERR"

done_testing
