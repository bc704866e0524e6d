#!/usr/bin/env bash
# End-to-end tests of the dashboard's Compare view under a selection and on a lens where some
# metrics have no number: the selection is evaluated on the reference (the active file) and
# every panel shows the numbers `calscope report --compare` prints on those samples, with the
# rule stated; a metric without a number reads n/a with its reason, never NaN. Polls for
# states (lib.sh); no check depends on elapsed time.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmux_servers compare-select

# The first 400 digits of a model and its temperature-scaled twin: 'conf > 0.9' keeps different
# rows in each (the scaling moves the confidences).
head -n 401 samples/digits_gnb.csv >"$TMP/a.csv"
head -n 401 samples/digits_ts.csv >"$TMP/b.csv"
SEL='conf > 0.9'

# the report's numbers: each method's ECE, Brier, NLL and b's paired ECE "diff [lo,hi] P"
run "$CALSCOPE" report --format json --compare --seed 5 --select "$SEL" "$TMP/a.csv" "$TMP/b.csv"
REP=$OUT
rep() { OUT=$REP json_get "$1"; }
want_a=$(rep "'%.4f' % d['methods'][0]['metrics']['ece']")
want_b=$(rep "'%.4f %.4f %.4f' % tuple(d['methods'][1]['metrics'][k] for k in ('ece', 'brier', 'nll'))")
want_pair=$(rep "(lambda e: '%+.4f [%+.4f,%+.4f] %.3f' % (e['diff'], e['lo'], e['hi'], e['p_better']))(d['methods'][1]['vs_reference']['ece'])")
N=$(rep "d['compare_info']['selection']['samples']")
run "$CALSCOPE" report --compare --seed 5 --select "$SEL" "$TMP/a.csv" "$TMP/b.csv"
# the report's verdict after its names (the dashboard names the files by their base names)
verdict_tail=$(printf '%s\n' "$OUT" | unwrap '^verdict: ' | grep -m1 '^verdict: ' | sed 's/^[^;]*; //')
re_escape() { printf '%s' "$1" | sed 's/[][\\.*^$()+?{}|]/\\&/g'; }
run "$CALSCOPE" report --format json --select "$SEL" "$TMP/b.csv"
own_b=$(json_get "'%.4f' % d['files'][0]['metrics']['ece']")
[ -n "$own_b" ] && [ "$own_b" != "${want_b%% *}" ] && ok "b.csv's own selection gives another ECE ($own_b)" \
    || not_ok "b.csv's own selection gives another ECE" "own $own_b, on a's samples ${want_b%% *}"

# NAME's "ECE Brier NLL" and "diff [lo,hi] P" on the diagrams panel's table
files_row() {
    printf '%s' "$SCREEN" | /usr/bin/python3 -c '
import re, sys
for line in sys.stdin.read().split("\n"):
    m = re.match(r"^" + re.escape(sys.argv[1]) + r" +([0-9.]+) +([0-9.]+) +([0-9.]+)(?: +([+-]\d\.\d{4}) \[([+-]\d\.\d{4}),([+-]\d\.\d{4})\]!?\*? +(\d\.\d{3}))?", line)
    if m:
        g = m.groups()
        print(" ".join(g[:3]) + ("|%s [%s,%s] %s" % g[3:] if g[3] else ""))' "$1"
}
expect_same() { if [ -n "$2" ] && [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "shown '$2', want '$3'"; fi; }

T new-session -d -x 80 -y 24 "$CALSCOPE --seed 5 --select '$SEL' $TMP/a.csv $TMP/b.csv; echo EXITED \$?; sleep 86400"
T set-option -g remain-on-exit on >/dev/null 2>&1
check_screen "the dashboard shows the first file" 'ECE +[0-9.]+' 60
keys 5
check_screen "diagrams panel: b.csv's paired difference" '^b\.csv .*\]!?\*? +[0-9.]{5}' 120
expect_same "diagrams panel: b.csv's ECE, Brier, NLL and paired ECE are the report's" "$(files_row b.csv)" "$want_b|$want_pair"
expect_same "diagrams panel: a.csv's ECE is the report's" "$(files_row a.csv | cut -d' ' -f1)" "$want_a"
NN=$(/usr/bin/python3 -c "print(f'{$N:,}')")
# lines_said PANEL: the selection's line and the report's verdict, each joined over its rows
lines_said() {
    if wait_joined "selection: conf > 0\.9 on the reference \(a\.csv\): $NN of 400 samples, the same for every method" 10
    then ok "$1: the selection's line"; else not_ok "$1: the selection's line" "$SCREEN"; fi
    if [ -n "$verdict_tail" ] && wait_joined "verdict: b\.csv is better calibrated than a\.csv; $(re_escape "$verdict_tail")" 10
    then ok "$1: the report's verdict"; else not_ok "$1: the report's verdict" "want ...; $verdict_tail" "$SCREEN"; fi
}
lines_said "diagrams panel"

keys p
check_screen "methods panel: b.csv's row" '^[ >]b\.csv +[0-9.]+\*? +[0-9.]+' 60
shown=$(printf '%s' "$SCREEN" | grep -E '^ b\.csv +[0-9.]+\*? +[0-9.]+' | head -1 | sed -E 's/^ b\.csv +[0-9.]+\*? +([0-9.]+).*/\1/')
expect_same "methods panel: b.csv's ECE is the report's" "$shown" "${want_b%% *}"
lines_said "methods panel"
keys q
check_screen "q quits with status 0" 'EXITED 0' 60

# topk:2 (one `l` from top1): RECE-G, smooth ECE, L2CE and ECE_sweep have no number; the methods
# panel says n/a, and with RECE-G focused (`]` four times from ECE) why, never NaN
new_server
T new-session -d -x 80 -y 24 "$CALSCOPE --seed 5 $TMP/a.csv $TMP/b.csv; echo EXITED \$?; sleep 86400"
T set-option -g remain-on-exit on >/dev/null 2>&1
check_screen "topk:2: the dashboard shows the first file" 'ECE +[0-9.]+' 60
keys l
check_screen "topk:2: the lens is on" '\| topk:2 \|' 30
keys 5 p
check_screen "topk:2: the methods panel's rows" '^ b\.csv +[0-9.]+\*? +[0-9.]+.* n/a' 120
expect_no_match "topk:2: no NaN in the table" '[Nn]a[Nn]' "$SCREEN"
keys ']' ']' ']' ']'
check_screen "topk:2: RECE-G focused" '\[RECE-G\]' 30
check_screen "topk:2: b.csv's RECE-G difference is n/a with its reason" '^ b\.csv +n/a +n/a \(top1/class:C/classwise only\)' 30
check_screen "topk:2: the legend says why the value is n/a" 'n/a: RECE-G has no number here \(top1/class:C/classwise only\)' 10
expect_no_match "topk:2: no NaN on the focused metric" '[Nn]a[Nn]' "$SCREEN"
keys p
check_screen "topk:2: the rankings panel" 'rankings \(1 = best' 30
expect_no_match "topk:2: no NaN in the rankings and mass" '[Nn]a[Nn]' "$SCREEN"
keys q
check_screen "and q quits with status 0" 'EXITED 0' 60
done_testing
