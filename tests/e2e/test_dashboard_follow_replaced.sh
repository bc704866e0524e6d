#!/usr/bin/env bash
# End-to-end test of the dashboard's --follow at 80x24 when a file that is already an epoch is
# replaced by another renamed over its name: the new file is a new epoch, and the old epoch stays
# bound to the file it was taken from — its row keeps its numbers, marked "replaced"; selecting
# it, re-measuring it (`l`) or comparing it (`a`) never shows the new file's numbers under it.
# Each check polls the screen for a state (lib.sh): no check depends on how long anything takes.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

tmux_servers follow-replaced
RUN=$TMP/run
mkdir -p "$RUN"
cp samples/digits_gnb.csv "$RUN/epoch_1.csv"
head -n 401 samples/digits_ts.csv >"$RUN/epoch_2.csv"
head -n 501 samples/digits_logreg.csv >"$RUN/epoch_3.csv"
head -n 601 samples/digits_rf.csv >"$RUN/epoch_4.csv"
touch -d '1 minute ago' "$RUN"/epoch_*.csv
cp samples/digits_tta.csv "$TMP/tta.csv"

ece4() { "$CALSCOPE" report --format json "$1" | /usr/bin/python3 -c 'import json,sys; print("%.4f" % json.load(sys.stdin)["files"][0]["metrics"]["ece"])'; }
E1=$(ece4 "$RUN/epoch_1.csv"); ENEW=$(ece4 "$TMP/tta.csv")
# the new file's Brier score and NLL as the Compare table prints them (the lens changes neither)
BNEW=$("$CALSCOPE" report --format json "$TMP/tta.csv" | /usr/bin/python3 -c 'import json,sys; m=json.load(sys.stdin)["files"][0]["metrics"]; print("%.4f +%.4f" % (m["brier"], m["nll"]))')
status_is() { printf '%s\n' "$SCREEN" | tail -n 1 | grep -Eq -- "$1"; }
# the table row of epoch $1 (file epoch_$2.csv)
row_of() { printf '%s\n' "$SCREEN" | grep -E -- "^.. +$1 epoch_$2\.csv\*? "; }
row_has() { row_of "$1" "$2" | grep -Eq -- "$3"; }
MSG='epoch_1\.csv was replaced after epoch 1 was taken \(the new file is epoch 5\)'

new_server
T new-session -d -x 80 -y 24 "$CALSCOPE --follow $RUN --settle 0.2; echo EXITED \$?; sleep 86400"
if poll 0 row_has 1 1 " 1797 +$E1 "; then ok "replaced: epoch 1 is digits_gnb (n 1797, ECE $E1)"
else not_ok "replaced: epoch 1 is digits_gnb (n 1797, ECE $E1)" "$SCREEN"; fi
if poll 0 status_is ' epoch_4\.csv epoch 4/4 \|'; then ok "replaced: the latest epoch is shown (4/4)"
else not_ok "replaced: the latest epoch is shown (4/4)" "$SCREEN"; fi

# another file renamed over epoch_1.csv: a new epoch of that name
cp "$TMP/tta.csv" "$RUN/.epoch_1.csv.tmp" && mv "$RUN/.epoch_1.csv.tmp" "$RUN/epoch_1.csv"
if poll 0 row_has 5 1 " 300 +$ENEW "; then ok "replaced: the new file is epoch 5 (n 300, ECE $ENEW)"
else not_ok "replaced: the new file is epoch 5 (n 300, ECE $ENEW)" "$SCREEN"; fi
if poll 0 row_has 1 1 "epoch_1\.csv\* +1797 +$E1 "; then ok "replaced: epoch 1 keeps its row, marked replaced"
else not_ok "replaced: epoch 1 keeps its row, marked replaced" "$SCREEN"; fi
check_screen "replaced: the legend names the mark" "a: compare +\\* replaced"

# select epoch 1: every view says it was replaced, never the new file's numbers
keys Left Left Left
if poll 0 status_is ' epoch_1\.csv epoch 1/5 \|'; then ok "replaced: Left steps to epoch 1"
else not_ok "replaced: Left steps to epoch 1" "$SCREEN"; fi
keys 1
if wait_joined "$MSG"; then ok "replaced: Reliability of epoch 1 says it was replaced"
else not_ok "replaced: Reliability of epoch 1 says it was replaced" "$SCREEN"; fi
check_not_screen "replaced: Reliability of epoch 1 shows no n 300" 'n 300 +bins'
check_not_screen "replaced: Reliability of epoch 1 shows no accuracy 0.9800" '0\.9800'

# a settings change measures the epochs again: epoch 1 is not measured from the new file
keys l
keys 7
if poll 0 row_has 1 1 "gap: .*replaced"; then ok "replaced: re-measured, epoch 1 says it was replaced"
else not_ok "replaced: re-measured, epoch 1 says it was replaced" "$SCREEN"; fi
if poll 0 row_has 5 1 " 300 "; then ok "replaced: re-measured, epoch 5 is still the new file"
else not_ok "replaced: re-measured, epoch 5 is still the new file" "$SCREEN"; fi
if row_of 1 1 | grep -Eq ' 300 '; then not_ok "replaced: re-measured, epoch 1 has no n 300" "$SCREEN"
else ok "replaced: re-measured, epoch 1 has no n 300"; fi
keys 1
if wait_joined "$MSG"; then ok "replaced: after l, Reliability of epoch 1 still says it was replaced"
else not_ok "replaced: after l, Reliability of epoch 1 still says it was replaced" "$SCREEN"; fi

# `a` from epoch 2: first (epoch 1, replaced) is left out and said so; the new file once
keys Right
if poll 0 status_is ' epoch_2\.csv epoch 2/5 \|'; then ok "replaced: Right steps to epoch 2"
else not_ok "replaced: Right steps to epoch 2" "$SCREEN"; fi
keys a
check_screen "replaced: a opens Compare" '\[5 Compare\]'
if wait_joined 'epoch 1 left out: epoch_1\.csv was replaced'; then ok "replaced: a says epoch 1 is left out"
else not_ok "replaced: a says epoch 1 is left out" "$SCREEN"; fi
cmp_rows() { [ "$(printf '%s\n' "$SCREEN" | grep -Ec -- '^epoch_[0-9]\.csv +[0-9]+\.[0-9]{4} ')" -eq 2 ]; }
if poll 0 cmp_rows; then ok "replaced: Compare has two files (epochs 2 and 5)"
else not_ok "replaced: Compare has two files (epochs 2 and 5)" "$SCREEN"; fi
if [ "$(printf '%s\n' "$SCREEN" | grep -Ec -- '^epoch_1\.csv +')" -eq 1 ] && printf '%s\n' "$SCREEN" | grep -Eq -- "^epoch_1\.csv +[0-9.]+ +$BNEW "
then ok "replaced: Compare holds epoch_1.csv once, the new file (Brier, NLL $BNEW)"
else not_ok "replaced: Compare holds epoch_1.csv once, the new file (Brier, NLL $BNEW)" "$SCREEN"; fi

keys q
check_screen "replaced: q quits (status 0)" '^EXITED 0'
done_testing
