#!/usr/bin/env bash
# End-to-end tests of the dashboard in a real terminal (tmux), at 80x24 unless said otherwise.
# Each check polls the screen for a state instead of sleeping a fixed time; no check depends on
# how fast the dashboard answers (CI shares its machine: the suite must pass beside
# `stress --cpu 2`). Waits end after LIVENESS seconds, a limit that only catches hangs.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SOCK_BASE="calscope-dash-$$-$RANDOM"; SOCK=$SOCK_BASE-0; N_SOCK=0
kill_all() { local i; for i in $(seq 0 "$N_SOCK"); do tmux -L "$SOCK_BASE-$i" kill-server >/dev/null 2>&1; done; }
trap 'kill_all; rm -rf "$TMP"' EXIT

SAMPLE=samples/digits_gnb.csv
SAMPLE2=samples/digits_logreg.csv
[ -f "$SAMPLE" ] || { /usr/bin/python3 - "$TMP" <<'PY'
import sys, random
random.seed(1)
out = sys.argv[1]
for name in ("a.csv", "b.csv"):
    with open(f"{out}/{name}", "w") as f:
        f.write("id,label,p_0,p_1,p_2\n")
        for i in range(600):
            p = [random.random() + 0.01 for _ in range(3)]
            s = sum(p); p = [x / s for x in p]
            f.write(f"{i},{random.randrange(3)},{p[0]!r},{p[1]!r},{1 - p[0] - p[1]!r}\n")
PY
SAMPLE=$TMP/a.csv; SAMPLE2=$TMP/b.csv; }

# start [ENV=VAL...] -- ARGS...: a fresh 80x24 session running the dashboard; the pane stays
# after it exits and prints "EXITED <status>".
start() {
    local envs=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    T kill-server >/dev/null 2>&1
    N_SOCK=$((N_SOCK + 1)); SOCK=$SOCK_BASE-$N_SOCK      # a fresh server for every run
    local cmd="env ${envs[*]} $CALSCOPE $*; echo EXITED \$?; sleep 86400"
    T new-session -d -x 80 -y 24 "$cmd"
    T set-option -g remain-on-exit on >/dev/null 2>&1
}
# shown VALUE_NAME: the number after the metric name in the metrics table
shown() { printf '%s' "$SCREEN" | sed -n "s/.*[[:space:]]$1 \{1,\}\([0-9.]\{6,\}\).*/\1/p" | head -1; }
# same_numbers NAME FLAGS...: every metric in the table equals the report's, rounded to 4 places,
# and — for the flags tests/oracles/reference.py knows (not --select) — the independent numpy reference's
# (the report and the dashboard both go through cs_measure: only the reference can tell that
# both are wrong). SAME_METRICS lists them as DASHBOARD-LABEL:JSON-KEY (RECE-M joins once the
# dashboard shows it).
SAME_METRICS="accuracy:accuracy ECE:ece ACE:ace MCE:mce AECE:aece SCE:sce Brier:brier NLL:nll RECE-G:rece_g RECE-M:rece_m"
# as4 KEY: metric KEY of the first file of the JSON in $OUT to 4 places ('' when null)
as4() { json_get "'' if d['files'][0]['metrics']['$1'] is None else '%.4f' % d['files'][0]['metrics']['$1']"; }
same_numbers() {
    local name=$1; shift
    local bad=() m k want got ref_json=""
    case " $* " in
        *" --select "*|*" --mixture "*) ;;   # not in tests/oracles/reference.py
        *) reference_output "$TMP/reference.json" /usr/bin/python3 tests/oracles/reference.py "$@" "$SAMPLE" &&
               ref_json=$(cat "$TMP/reference.json") ;;
    esac
    run "$CALSCOPE" report --format json "$@" "$SAMPLE"
    local report_json=$OUT
    for m in $SAME_METRICS; do
        k=${m#*:}; got=$(shown "${m%%:*}")
        OUT=$report_json; want=$(as4 "$k")
        # a row exactly when the report has a number (RECE-M: a long id/tta file)
        [ "$got" = "$want" ] && { [ -n "$got" ] || [ "$k" = rece_m ]; } ||
            bad+=("${m%%:*}: dashboard '$got', report '$want'")
        if [ -n "$ref_json" ]; then
            OUT=$ref_json; want=$(as4 "$k")
            [ "$got" = "$want" ] || bad+=("${m%%:*}: dashboard '$got', tests/oracles/reference.py '$want'")
        fi
    done
    if [ ${#bad[@]} -eq 0 ]; then ok "$name"; else not_ok "$name" "${bad[@]}" "$SCREEN"; fi
}

# ---- the Reliability view, its numbers and a toggle --------------------------------------------
start -- "$SAMPLE"
check_screen "reliability view renders" 'ECE +0\.[0-9]{4}'
check_screen "diagram axes and count strip" '0 +\.25 +\.5 +\.75 +1'
check_screen "status line shows the settings" 'top1 \| M 15 uniform'
wait_for ' ready *$' 10
same_numbers "default numbers equal calscope report --format json"

ece_before=$(shown ECE)
keys +
check_screen "bins + updates the status line" 'M 16 uniform'
wait_for ' ready *$' 10; wait_for 'ECE +0\.[0-9]{4} *$|ECE +0\.[0-9]{4} ' 5
ece_after=$(shown ECE)
if [ -n "$ece_after" ] && [ "$ece_after" != "$ece_before" ]; then ok "bins + changes the ECE shown"
else not_ok "bins + changes the ECE shown" "before $ece_before after $ece_after" "$SCREEN"; fi
same_numbers "numbers after bins + equal report --bins 16" --bins 16

keys m
check_screen "binning toggle to equal-mass" 'M 16 mass'
wait_for ' ready *$' 10
same_numbers "numbers with --binning mass equal the report" --bins 16 --binning mass

# ---- `:` shows the equivalent command line, and running it gives the same numbers -------------
keys :
# the command is broken into lines ending in " \" between two rules: join them back
check_cmdline "':' shows the command line"
cmdline=$CMD
expect_match "':' starts with the dashboard's settings" '^calscope report --lens top1 --bins 16 --binning mass ' "$cmdline"
ece_shown=$(shown ECE)
keys Escape
args=${cmdline#calscope report }
# shellcheck disable=SC2086
eval "set -- $args"
run "$CALSCOPE" report --format json "$@"
got=$(json_get "'%.4f' % d['files'][0]['metrics']['ece']" 2>/dev/null)
if [ "$RC" -eq 0 ] && [ -n "$got" ]; then
    wait_for 'ECE +0\.' 5; ece_shown=$(shown ECE)
    if [ "$got" = "$ece_shown" ]; then ok "the shown command line reproduces the ECE"
    else not_ok "the shown command line reproduces the ECE" "report $got, dashboard $ece_shown" "$cmdline"; fi
else
    not_ok "the shown command line reproduces the ECE" "exit $RC: $ERR" "$cmdline"
fi

keys '?'
check_screen "'?' shows the keys" 'calscope keys'
check_screen "help lists the bins toggle" '\+ -.*bins'
keys Escape
check_screen "help closes" 'ECE +0\.'

# ---- selection prompt: a parse error shows a caret and keeps the old selection -----------------
keys /
check_screen "'/' opens the selection prompt" 'select: '
keys 'conf >> 2' Enter
check_screen "a bad selection shows an error with a caret" '^ *\^'
expect_no_match "the old selection is kept" '\| sel ' "$(printf '%s' "$SCREEN" | tail -1)"
keys Escape
keys /
keys Up
check_screen "Up recalls the selection history" 'select: conf >> 2'
keys C-u 'y in {1, 2} and conf > 0.5' Enter
check_screen "a good selection is applied" 'select y in \{1, 2\} and conf > 0\.5'
wait_for ' ready *$' 10
same_numbers "numbers with a selection equal report --select" --bins 16 --binning mass --select 'y in {1, 2} and conf > 0.5'
keys / C-u Enter
check_screen "an empty selection clears it" 'M 16 mass \| [^|]+ \| tvd \| seed 0 *ready'

# ---- every view renders ------------------------------------------------------------------------
keys 2; check_screen "view 2: Top-k bars" 'Top-k ECE'
check_screen "top-k bars show values" 'k=1 .*0\.[0-9]{4}'
keys 3; check_screen "view 3: size curve with band" 'size curve: mean and 95% band over 20 subsets' 30
check_screen "view 3: |sub-full| table" 'frac +rows +\|ECE d\|' 30
check_screen "view 3: bins curve with stable range" 'bins curve: ECE vs M.*(stable M|no stable)' 30
run "$CALSCOPE" report --format json --bins 16 --binning mass "$SAMPLE"   # the settings shown now
check_screen "view 3: the bins curve's title names the sweep's M (the report's ece_sweep_bins)" \
    "bins curve: ECE vs M.*; sweep M=$(json_get "d['files'][0]['metrics']['ece_sweep_bins']")\$" 30
keys 4; check_screen "view 4: per-class ECE bars" 'per-class ECE'
check_screen "view 4: Likert panel" 'high +\[0\.66,1\.00\] +[0-9]+ +(0\.[0-9]{4}|n/a)'
keys 5; check_screen "view 5: Compare table" 'file +ECE +Brier +NLL'
keys 6; check_screen "view 6 without a case column says what it needs" 'no case column'
keys Tab; check_screen "Tab wraps to Reliability" '\[1 Reliability\]'

# ---- RECE-G overlay: g toggles its markers and legend ------------------------------------------
keys 1; check_screen "the RECE-G curve is in the legend" 'RECE-G curve \(g\)'
n_on=$(printf '%s' "$SCREEN" | head -18 | grep -o '●' | wc -l)
keys g; wait_for 'thin \(<20\) *$' 5
n_off=$(printf '%s' "$SCREEN" | head -18 | grep -o '●' | wc -l)
if [ "$n_on" -gt 0 ] && [ "$n_off" -eq 0 ]; then ok "g hides the RECE-G markers"
else not_ok "g hides the RECE-G markers" "markers on $n_on, off $n_off" "$SCREEN"; fi
keys g; check_screen "g shows them again" 'RECE-G curve \(g\)'

# ---- resize ---------------------------------------------------------------------------------
T resize-window -x 60 -y 20
check_screen "renders at 60x20" 'ECE +0\.[0-9]{4}'
T resize-window -x 50 -y 15
check_screen "below the minimum says so" 'terminal too small: need 60.20, have 50.15'
T resize-window -x 80 -y 24
check_screen "back at 80x24" 'ECE +0\.[0-9]{4}'

keys q
check_screen "q quits" 'EXITED 0' 3

# ---- the Cases view on a segmentation-style file ---------------------------------------------
SEG=samples/seg_cases.csv
if [ -f "$SEG" ]; then
    start -- "$SEG"
    keys 6
    check_screen "Cases: heat map of class 1" 'class bg \(1/3, c C\)'
    check_screen "Cases: density legend and mean curve" '░▒▓█ 1\.\.[0-9]+ cases \(log\) +◆ mean'
    run "$CALSCOPE" report --format json "$SEG"
    want=$(json_get "'mean %.4f' % d['files'][0]['cases']['metrics']['ace']['mean'] + ' ' + '%.4f' % d['files'][0]['cases']['metrics']['ace']['sd']")
    wait_for 'mean [0-9.]+ ± sd [0-9.]+'    # the curve's caption may come in a later frame
    got=$(printf '%s' "$SCREEN" | sed -n 's/.*\(mean [0-9.]*\) ± sd \([0-9.]*\).*/\1 \2/p' | head -1)
    if [ -n "$got" ] && [ "$got" = "$want" ]; then ok "Cases: ACE mean ± sd equal the report's"
    else not_ok "Cases: ACE mean ± sd equal the report's" "dashboard '$got', report '$want'" "$SCREEN"; fi
    check_screen "Cases: table sorted worst ACE first" 'case +n +ECE +ACE +MCE'
    wait_lines 'case[0-9][0-9] +400 ' 3
    read -r -a first <<< "$(printf '%s' "$SCREEN" | sed -n 's/.*case[0-9][0-9] \{1,\}400 [0-9.]* \([0-9.]*\) .*/\1/p' | head -3 | tr '\n' ' ')"
    if [ ${#first[@]} -eq 3 ] && /usr/bin/python3 -c "import sys; a=[float(x) for x in sys.argv[1:]]; sys.exit(0 if a == sorted(a, reverse=True) else 1)" "${first[@]}"
    then ok "Cases: worst ACE first"
    else not_ok "Cases: worst ACE first" "first rows: ${first[*]}" "$SCREEN"; fi
    keys c
    check_screen "c cycles the heat map class" 'class organ \(2/3, c C\)'
    expect_match "c does not mark the cases stale" ' ready *$' "$(printf '%s' "$SCREEN" | tail -1)"
    keys C C
    check_screen "C cycles back, wrapping" 'class lesion \(3/3, c C\)'
    keys +
    check_screen "bins + recomputes the histogram (M 16)" 'M 16 uniform'
    wait_for ' ready *$' 10
    expect_no_match "no stale mark once recomputed" '~stale' "$SCREEN"
    keys q
    check_screen "q quits from Cases" 'EXITED 0' 3
fi

# ---- a file of 120,000 rows: the size table's row counts keep their 5 columns ------------------
/usr/bin/python3 - "$TMP/big.csv" <<'PY'
import random, sys
random.seed(7)
with open(sys.argv[1], "w") as f:
    f.write("label,p_0,p_1\n")
    for _ in range(120000):
        p = random.random()
        f.write(f"{int(random.random() < p)},{1 - p:.6f},{p:.6f}\n")
PY
start -- "$TMP/big.csv"
wait_for ' ready *$' 30
keys 3
check_screen "120,000 rows: the size table's counts in 5 columns (100k and more as k)" \
    '0\.01  1200  [0-9]\.[0-9]{4} [0-9]\.[0-9]{4}' 60
check_screen "120,000 rows: all rows as 120k, the deviations still in their columns" \
    '1\.00  120k  0\.0000 0\.0000' 60
keys q

# ---- --ascii, NO_COLOR, terminal types ---------------------------------------------------------
start -- --ascii "$SAMPLE"
check_screen "--ascii renders" 'ECE +0\.[0-9]{4}'
if printf '%s' "$SCREEN" | LC_ALL=C grep -q '[^ -~]'; then
    not_ok "--ascii draws only ASCII" "$(printf '%s' "$SCREEN" | LC_ALL=C grep -n '[^ -~]' | head -3)"
else ok "--ascii draws only ASCII"; fi
keys q

start NO_COLOR=1 -- "$SAMPLE"
check_screen "NO_COLOR renders" 'ECE +0\.[0-9]{4}'
esc=$(T capture-pane -p -e)
if printf '%s' "$esc" | grep -Eq $'\e\\[([0-9;]*;)?(3[0-7]|4[0-7]|38;|48;)'; then
    not_ok "NO_COLOR uses no colour" "$(printf '%s' "$esc" | grep -E $'\e\\[[0-9;]*(3[0-7]|4[0-7])' | head -2 | cat -v)"
else ok "NO_COLOR uses no colour"; fi
keys q

start -- --no-color "$SAMPLE"
check_screen "--no-color renders" 'ECE +0\.[0-9]{4}'
esc=$(T capture-pane -p -e)
if printf '%s' "$esc" | grep -Eq $'\e\\[([0-9;]*;)?(3[0-7]|4[0-7]|38;|48;)'; then not_ok "--no-color uses no colour"
else ok "--no-color uses no colour"; fi
keys q

for term in xterm xterm-256color screen tmux-256color vt100; do
    start TERM=$term -- "$SAMPLE"
    check_screen "renders under TERM=$term" 'ECE +0\.[0-9]{4}'
    keys 2; check_screen "Top-k under TERM=$term" 'k=1 '
    keys q; check_screen "quits under TERM=$term" 'EXITED 0' 3
done

# ---- a broken file shows its error in the dashboard --------------------------------------------
printf 'label,p_0,p_1\n0,0.9,0.1\n1,0.2,oops\n' > "$TMP/bad.csv"
start -- "$TMP/bad.csv" "$SAMPLE"
check_screen "a broken file shows FILE:LINE:COL" 'bad\.csv:3:3'
expect_no_match "the dashboard keeps running" 'EXITED' "$SCREEN"
keys f
check_screen "the other file still works" 'ECE +0\.[0-9]{4}'
keys q

# ---- q during a long bootstrap cancels it and exits --------------------------------------------
# 100,000 resamples (the most --ci takes) of ~36,000 rows (the sample 20 times over) take far
# longer than the liveness limit: the dashboard can only exit within it if q cancels the
# running bootstrap.
awk 'NR == 1 { print; next } { row[++n] = substr($0, index($0, ",")) }
     END { for (r = 0; r < 20; r++) for (i = 1; i <= n; i++) print r * n + i row[i] }' \
    "$SAMPLE" > "$TMP/big.csv"
start -- --ci 100000 "$TMP/big.csv"
check_screen "a long bootstrap is running" 'metrics +[0-9]+%'
keys q
check_screen "q during a long bootstrap cancels it and exits" 'EXITED 0'

# ---- bootstrap intervals equal the report's for the same --ci and --seed ----------------------
start -- --ci 50 --seed 3 "$SAMPLE"
check_screen "intervals are shown" 'ECE +0\.[0-9]{4} \[0\.[0-9]{4},0\.[0-9]{4}\]' 20
got=$(printf '%s' "$SCREEN" | sed -n 's/.* ECE \{1,\}0\.[0-9]\{4\} \(\[[0-9.]*,[0-9.]*\]\).*/\1/p' | head -1)
run "$CALSCOPE" report --format json --ci 50 --seed 3 "$SAMPLE"
want=$(json_get "'[%.4f,%.4f]' % tuple(d['files'][0]['metrics']['ece_ci'])" 2>/dev/null)
if [ -n "$got" ] && [ "$got" = "$want" ]; then ok "ECE interval equals report --ci 50 --seed 3"
else not_ok "ECE interval equals report --ci 50 --seed 3" "dashboard '$got', report '$want'"; fi
keys q

# ---- a result being recomputed is dimmed and marked stale --------------------------------------
# (the big file again: its bootstrap cannot finish before the checks below have seen it run)
start -- --ci 100000 "$TMP/big.csv"
keys i                                   # intervals off: the plain metrics arrive at once
check_screen "metrics without intervals" 'ECE +0\.[0-9]{4}'
keys i                                   # on again: a long bootstrap replaces them
check_screen "the old result is marked stale while recomputing" '~stale'
check_screen "the status line shows the backend's progress" 'metrics +[0-9]+% *$'
expect_match "the stale numbers stay visible" 'ECE +0\.[0-9]{4}' "$SCREEN"
keys q
check_screen "q quits mid-computation" 'EXITED 0' 2

# ---- CALSCOPE_TRACE writes key-to-draw latencies ---------------------------------------------
start CALSCOPE_TRACE="$TMP/trace" -- "$SAMPLE"
check_screen "trace run renders" 'ECE +0\.[0-9]{4}'
keys + + -
check_screen "trace run takes keys" 'M 16 uniform'
keys q
wait_for 'EXITED' 3
if [ -s "$TMP/trace" ] && awk 'NF != 2 || $1 < 1 || $2 < 0 { bad = 1 } END { exit bad }' "$TMP/trace"; then
    ok "CALSCOPE_TRACE records one line per drawn key batch"
else not_ok "CALSCOPE_TRACE records one line per drawn key batch" "$(cat "$TMP/trace" 2>&1)"; fi

# ---- RECE-M on a long test-time-augmentation file: the report's number, `i`, the curves --------
TTA=samples/digits_tta.csv
if [ -f "$TTA" ]; then
    PLAIN=$SAMPLE; SAMPLE=$TTA          # same_numbers measures $SAMPLE
    start -- "$TTA"
    check_screen "TTA: the table shows RECE-M" 'RECE-M +0\.[0-9]{4}'
    wait_for ' ready *$' 10
    same_numbers "TTA: every number, RECE-M included, equals the report's"
    keys s
    check_screen "TTA: s changes sigma" 'σ 0\.15 '
    keys +
    check_screen "TTA: + changes the bins" 'M 16 uniform'
    wait_for ' ready *$' 10
    same_numbers "TTA: RECE-M follows sigma and M like the report" --sigma 0.15 --bins 16
    keys i
    check_screen "TTA: i gives RECE-M an interval" 'RECE-M +0\.[0-9]{4} \[0\.[0-9]{4},0\.[0-9]{4}\]' 30
    got=$(printf '%s' "$SCREEN" | sed -n 's/.* RECE-M \{1,\}0\.[0-9]\{4\} \(\[[0-9.]*,[0-9.]*\]\).*/\1/p' | head -1)
    run "$CALSCOPE" report --format json --ci 200 --sigma 0.15 --bins 16 "$TTA"
    want=$(json_get "'[%.4f,%.4f]' % tuple(d['files'][0]['metrics']['rece_m_ci'])" 2>/dev/null)
    if [ -n "$got" ] && [ "$got" = "$want" ]; then ok "TTA: RECE-M interval equals report --ci 200 ($want)"
    else not_ok "TTA: RECE-M interval equals report --ci 200" "dashboard '$got', report '$want'" "$SCREEN"; fi
    keys 3
    check_screen "TTA: the size curve draws RECE-M" '▲ RECE-M' 30
    check_screen "TTA: the |sub-full| table has a RECE-M column" 'frac +\|ECE d\| +\|RG d\| +\|RM d\|' 30
    # one glyph per metric in both charts: RECE-M is ▲ in the size and in the bins curve
    check_screen "TTA: the bins curve draws RECE-M with the size curve's glyph" '◆ ACE +▲ RECE-M' 60
    # the size curve's |RECE-M sub-full| at fraction 0.05 equals the report's (20 subsets, seed 0)
    # (a subset under the small-sample rule ends in "<")
    wait_for ' 0\.05  [0-9.]+ [0-9.]+ [0-9.]+<? *$'
    got=$(printf '%s' "$SCREEN" | sed -n 's/.* 0\.05  [0-9.]* [0-9.]* \([0-9.]*\)<\{0,1\} *$/\1/p' | head -1)
    run "$CALSCOPE" report --format json --curve size --sigma 0.15 --bins 16 "$TTA"
    want=$(json_get "'%.4f' % [p for p in d['files'][0]['curve']['points'] if p['fraction'] == 0.05][0]['metrics']['rece_m']['abs_dev']" 2>/dev/null)
    if [ -n "$got" ] && [ "$got" = "$want" ]; then ok "TTA: |RECE-M sub-full| at 5% equals report --curve size ($want)"
    else not_ok "TTA: |RECE-M sub-full| at 5% equals report --curve size" "dashboard '$got', report '$want'" "$SCREEN"; fi
    keys q
    start -- --mixture gmm3 --bins 20 "$TTA"
    check_screen "TTA gmm3: the table shows RECE-M" 'RECE-M +0\.[0-9]{4}'
    wait_for ' ready *$' 10
    same_numbers "TTA gmm3: RECE-M equals report --mixture gmm3 --bins 20" --mixture gmm3 --bins 20
    keys q
    SAMPLE=$PLAIN
fi

# ---- two files: compare and file switching ----------------------------------------------------
start -- "$SAMPLE" "$SAMPLE2"
check_screen "two files load" 'ECE +0\.[0-9]{4}'
keys f
check_screen "f switches the active file" "$(basename "$SAMPLE2") \[2/2\]"
keys 5
check_screen "Compare shows the paired difference" '\[[-+]0\.[0-9]{4},[-+]0\.[0-9]{4}\]\*? +[01]\.[0-9]{3}' 30
keys q

if [ -f samples/seg_cases.csv ]; then
    start -- samples/seg_cases.csv
    keys 6
    check_screen "Cases view lists the cases of a segmentation file" 'per-case ACE, [0-9]+ cases'
    keys q
fi

# ---- methods: recalibrations beside the files (t), rankings and mass (p), compat (x) ------------
# fits_60x20: every captured line is at most 60 columns and the pane has at most 20 lines
fits_60x20() {
    printf '%s\n' "$SCREEN" | /usr/bin/python3 -c '
import sys, unicodedata
lines = sys.stdin.read().split("\n")
while lines and lines[-1] == "": lines.pop()
sys.exit(0 if len(lines) <= 20 and all(len(l.rstrip()) <= 60 for l in lines) else 1)'
}
MSAMPLE=samples/digits_gnb.csv
if [ -f "$MSAMPLE" ]; then
    start -- "$MSAMPLE"
    check_screen "methods: file loads" 'ECE +0\.[0-9]{4}'
    keys t Space Escape      # the picker opens on ts, its first method
    check_screen "t, space adds the ts recalibration as a method row" 'digits_gnb\.csv\+ts +[0-9]\.[0-9]{4}' 60
    run "$CALSCOPE" report --compare "$MSAMPLE" --recal ts --format json
    want=$(json_get "'%.4f' % [m for m in d['methods'] if m['name'].endswith('+ts')][0]['metrics']['ece']")
    # the focused column is ECE: the detail row's first number is the method's ECE. The table's
    # rows and the detail row under them may arrive in separate frames: poll for the detail row
    wait_for '^ digits_gnb\.csv\+ts +[0-9.]{6} +[-+]' 60
    got=$(printf '%s\n' "$SCREEN" | sed -n 's/^ digits_gnb\.csv+ts \{1,\}\([0-9.]\{6\}\) \{1,\}[-+].*/\1/p' | head -1)
    if [ -n "$want" ] && [ "$got" = "$want" ]; then ok "ts row's ECE equals the report's ($want)"
    else not_ok "ts row's ECE equals the report's" "dashboard '$got', report '$want'" "$SCREEN"; fi
    check_screen "the ts row marks a difference that excludes 0" 'digits_gnb\.csv\+ts +[-+0-9. ]+\[[-+.0-9,]+\]\*'
    keys :
    check_screen ": prints --recal ts" '--recal ts'
    keys Escape p
    check_screen "p shows the rankings" 'rankings \(1 = best' 30
    check_screen "rankings: +ts is 2nd by ECE (acc ties at 1)" 'digits_gnb\.csv\+ts +1 +2 '
    check_screen "rankings: ECE itself is not marked" 'acc +ECE +ACE'
    # page the columns (]) until NLL is in sight: ECE ranks +ts 2nd, NLL 1st -> NLL is marked
    keys ] ] ] ] ] ] ]
    check_screen "rankings mark the NLL/ECE disagreement" 'NLL! *$' 10
    check_screen "rankings: +ts is 1st by NLL" 'digits_gnb\.csv\+ts( +[0-9]+){5} +1 *$'
    check_screen "mass panel: k=1 moves mass off the top class" 'digits_gnb\.csv\+ts +-0\.3147 +\+0\.1600'
    T resize-window -x 60 -y 20
    check_screen "rankings render at 60x20" 'rankings' 5
    if fits_60x20; then ok "rankings at 60x20: no line past the edge"; else not_ok "rankings at 60x20: no line past the edge" "$SCREEN"; fi
    keys p p
    check_screen "methods table renders at 60x20" 'methods \(p panel' 5
    if fits_60x20; then ok "methods table at 60x20: no line past the edge"; else not_ok "methods table at 60x20" "$SCREEN"; fi
    check_screen "methods table at 60x20 still shows the ts row" 'digits_gnb(\.csv|~)\+ts'
    T resize-window -x 80 -y 24
    keys T
    check_screen "T drops the recalibration" 'load two or more files|digits_gnb\.csv\+ts' 10
    keys q
fi
CSAMPLE=samples/breast_cancer_gnb.csv
if [ -f "$CSAMPLE" ]; then
    start -- "$CSAMPLE"
    check_screen "compat: file loads" 'ECE +0\.[0-9]{4}'
    keys x
    check_screen "x shows the compat panel" '>torchm +\.[0-9]{4}' 30
    run "$CALSCOPE" report --compat torchmetrics --format json "$CSAMPLE"
    want=$(json_get "('%.4f' % d['files'][0]['metrics']['ece'])[1:]")
    got=$(printf '%s\n' "$SCREEN" | sed -n 's/.*>torchm \{1,\}\(\.[0-9]\{4\}\).*/\1/p' | head -1)
    if [ -n "$want" ] && [ "$got" = "$want" ]; then ok "compat torchmetrics ECE equals report --compat torchmetrics ($want)"
    else not_ok "compat torchmetrics ECE equals the report's" "dashboard '$got', report '$want'" "$SCREEN"; fi
    # the panel, the legend and the axis marks may arrive in separate frames: poll for each
    check_screen "compat lists moved samples with the rule" 'torchmetrics moves [0-9]+ of 569'
    check_screen "compat marks receiving bins on the axis, glyph in the legend" '▲ bins holding moved'
    check_screen "the diagram's x axis carries the mark" '0└[─┬]+▲' 
    keys :
    check_screen ": prints --compat torchmetrics" '--compat torchmetrics'
    keys Escape X
    check_screen "X cycles the library" '>tm-bin +\.[0-9]{4}'
    T resize-window -x 60 -y 20
    check_screen "compat renders at 60x20" 'compat +ECE' 5
    if fits_60x20; then ok "compat at 60x20: no line past the edge"; else not_ok "compat at 60x20" "$SCREEN"; fi
    keys ?
    check_screen "? lists the smooth-curve key" 'o +Reliability: bars / smooth curve' 5
    keys ?
    check_screen "? (page 2 at 60x20) lists the recalibration key" 't T +methods: pick, fit, remove, fit times' 5
    check_screen "? (page 2 at 60x20) lists the compat key" 'x X +compat panel on / off'
    keys q
fi
# compat under --lens classwise: calscope's RMS follows the lens, torchmetrics has none and says why
if [ -f "$CSAMPLE" ]; then
    start -- --lens classwise "$CSAMPLE"
    check_screen "compat classwise: file loads" 'classwise \| M 15'
    keys x
    check_screen "compat classwise: torchmetrics says why ECE, MCE and RMS are n/a" 'ECE MCE RMS n/a: torchmetrics has$' 30
    run "$CALSCOPE" report --compat all --lens classwise --format json "$CSAMPLE"
    want=$(json_get "('%.4f' % d['files'][0]['compat']['calscope']['rms'])[1:]")
    wait_for ' calscope .* \.[0-9]{4} *$' 30    # the panel's rows may arrive in separate frames
    got=$(printf '%s\n' "$SCREEN" | sed -n 's/.* calscope .* \(\.[0-9]\{4\}\) *$/\1/p' | head -1)
    if [ -n "$want" ] && [ "$got" = "$want" ]; then ok "compat classwise: calscope's RMS is the report's class-wise one ($want)"
    else not_ok "compat classwise: calscope's RMS is the report's class-wise one" "dashboard '$got', report '$want'" "$SCREEN"; fi
    check_screen "compat classwise: torchmetrics' RMS is n/a" '>torchm +n/a +n/a +n/a +n/a'
    keys q
fi

# --lens class:NAME: the class is found by name once the file is loaded, and c cycles from it
start -- --lens class:benign samples/breast_cancer_gnb.csv
check_screen "class:NAME starts on that class" '\| class:benign \|'
keys c
check_screen "c moves from the named class (benign = 1) to the next one (#0: positions, never names)" '\| class:#0 \|'
keys c
check_screen "and on to 1" '\| class:#1 \|'
keys q

done_testing
