#!/usr/bin/env bash
# End-to-end tests of what the dashboard shows where a number is missing, at 80x24: a table
# cell reads "n/a" (one formatting rule, tui_fmt_cell), never a raw "nan", and a compat library
# that cannot take the file at all gives its reason, not "moves 0 of N". Polls the screen for
# states (lib.sh); no check depends on elapsed time.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

tmux_servers na
start() {
    new_server
    T new-session -d -x 80 -y 24 "$CALSCOPE $*; echo EXITED \$?; sleep 86400"
    T set-option -g remain-on-exit on >/dev/null 2>&1
}

# ---- Variance under the topk lens: RECE-G has no value, its column says n/a ---------------------
start samples/digits_logreg.csv
wait_for 'ready *$' 60
keys l
check_screen "l: the topk lens" '\| topk:2 \|' 60
keys 3
check_screen "Variance: the size table's rows under topk" '^.* 1\.00 +1797 +0\.0000 +n/a *$' 120
check_not_screen "Variance: no raw nan in the size table" 'nan'
keys q
check_screen "q quits with status 0" 'EXITED 0' 60

# ---- compat on a 10-class file: torchmetrics-binary is not applicable, and says why ------------
start samples/digits_logreg.csv
wait_for 'ready *$' 60
keys x X
check_screen "compat: torchmetrics-binary chosen" '^.*>tm-bin +n/a +n/a +n/a +n/a' 120
check_not_screen "compat: no count of moves for a library that cannot take the file" 'torchmetrics-binary moves'
# the side panel's lines (from column 45) joined by single spaces: the reason is wrapped there
side_joined() {
    printf '%s\n' "$SCREEN" | /usr/bin/python3 -c '
import re, sys
print(" ".join(l[45:].strip() for l in sys.stdin.read().split("\n") if l[45:].strip()))' | grep -Eq -- "$1"
}
if poll 10 side_joined 'torchmetrics-binary \(X: lib\): not applicable: binary_calibration_error needs a two-class file \(p\[1\] and 0/1 targets\)'; then
    ok "compat: the reason the library cannot take the file (the report's)"
else
    not_ok "compat: the reason the library cannot take the file (the report's)" "$SCREEN"
fi
run "$CALSCOPE" report --compat torchmetrics-binary samples/digits_logreg.csv
expect_match "the report gives the same reason" 'not applicable: binary_calibration_error needs a two-class file' "$OUT"
keys X
check_screen "X: the next library counts its moves again" 'netcal moves [0-9]+ of 1797 \(X: lib\)' 60
keys q
check_screen "compat: q quits with status 0" 'EXITED 0' 60

done_testing
