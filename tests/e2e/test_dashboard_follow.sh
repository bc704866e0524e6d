#!/usr/bin/env bash
# End-to-end test of the dashboard's --follow at 80x24: a folder of a training run's prediction
# files, watched while this script adds to it (one file renamed into place, one broken). The
# Trend view's numbers are the report's of each file; Left/Right move the other views to that
# epoch; a file arriving while an older epoch is shown does not move the view and the status
# line counts it (+1 new); a broken file is a gap with the loader's message. Each check polls
# the screen for a state (lib.sh): no check depends on how long anything takes.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

tmux_servers follow
RUN=$TMP/run
mkdir -p "$RUN"
head -n 301 samples/digits_gnb.csv >"$RUN/epoch_1.csv"
head -n 401 samples/digits_ts.csv >"$RUN/epoch_2.csv"
head -n 501 samples/digits_logreg.csv >"$TMP/e3.csv"
printf 'label,p_0,p_1\n0,0.5,abc\n' >"$TMP/e4.csv"
# written long ago: complete when the follow opens (not still settling), so both are there at
# the start and the latest is shown
touch -d '1 minute ago' "$RUN"/epoch_*.csv

# the report's ECE of a file to 4 decimals, as the Trend table prints it
ece4() { "$CALSCOPE" report --format json "$1" | /usr/bin/python3 -c 'import json,sys; print("%.4f" % json.load(sys.stdin)["files"][0]["metrics"]["ece"])'; }
E1=$(ece4 "$RUN/epoch_1.csv"); E2=$(ece4 "$RUN/epoch_2.csv"); E3=$(ece4 "$TMP/e3.csv")
"$CALSCOPE" report "$TMP/e4.csv" >/dev/null 2>"$TMP/e4.err"
# the loader's message for the broken file, as the report says it, from the line and column on
# (the row names the file)
MSG4=$(sed -e "s|^calscope: $TMP/e4.csv:||" "$TMP/e4.err")
status_is() { printf '%s\n' "$SCREEN" | tail -n 1 | grep -Eq -- "$1"; }
row_of() { printf '%s\n' "$SCREEN" | grep -E -- "^.. +$1 epoch_$1\.csv "; }
row_has() { row_of "$1" | grep -Fq -- "$2"; }

new_server
T new-session -d -x 80 -y 24 "$CALSCOPE --follow $RUN --settle 0.2; echo EXITED \$?; sleep 86400"

# the two files there at the start: the Trend view opens, the latest epoch shown
check_screen "follow: opens on the Trend view" '\[7 Trend\]'
if poll 0 row_has 2 "$E2"; then ok "follow: epoch 2's ECE is the report's ($E2)"
else not_ok "follow: epoch 2's ECE is the report's ($E2)" "$SCREEN"; fi
if poll 0 row_has 1 "$E1"; then ok "follow: epoch 1's ECE is the report's ($E1)"
else not_ok "follow: epoch 1's ECE is the report's ($E1)" "$SCREEN"; fi
if poll 0 status_is ' epoch_2\.csv epoch 2/2 \|'; then ok "follow: the latest epoch is shown (epoch 2/2)"
else not_ok "follow: the latest epoch is shown (epoch 2/2)" "$SCREEN"; fi

# Left: epoch 1; the Reliability view shows it (its title and its n)
keys Left
if poll 0 status_is ' epoch_1\.csv epoch 1/2 \|'; then ok "follow: Left steps to epoch 1"
else not_ok "follow: Left steps to epoch 1" "$SCREEN"; fi
keys 1
check_screen "follow: Reliability shows epoch 1 (title)" '^epoch_1\.csv +top1 15 uniform'
check_screen "follow: Reliability shows epoch 1 (n 300)" 'n 300 +bins'
keys Right
check_screen "follow: Right moves Reliability to epoch 2 (n 400)" 'n 400 +bins'
keys Left
check_screen "follow: back at epoch 1 (n 300)" 'n 300 +bins'
# `:` gives the report command of the epoch shown
keys :
check_cmdline "follow: the : line is whole"
expect_match "follow: the : line names the epoch shown" "^calscope report .* $RUN/epoch_1\.csv\$" "$CMD"
keys Escape
check_screen "follow: the : overlay closed" '^epoch_1\.csv +top1 15 uniform'

# a file renamed into the folder while epoch 1 is shown: the view stays, the status counts it
cp "$TMP/e3.csv" "$RUN/.epoch_3.csv.tmp" && mv "$RUN/.epoch_3.csv.tmp" "$RUN/epoch_3.csv"
if poll 0 status_is ' epoch 1/2 \(\+1 new\) \|'; then ok "follow: a new file: epoch 1/2 (+1 new)"
else not_ok "follow: a new file: epoch 1/2 (+1 new)" "$SCREEN"; fi
check_screen "follow: the view did not move (n 300)" 'n 300 +bins'
keys 7
if poll 0 row_has 3 "$E3"; then ok "follow: epoch 3's ECE is the report's ($E3)"
else not_ok "follow: epoch 3's ECE is the report's ($E3)" "$SCREEN"; fi

# a broken file: a gap with the loader's message, and the run goes on
cp "$TMP/e4.csv" "$RUN/.epoch_4.csv.tmp" && mv "$RUN/.epoch_4.csv.tmp" "$RUN/epoch_4.csv"
if poll 0 row_has 4 "gap: $MSG4"; then ok "follow: a broken file is a gap with its message ($MSG4)"
else not_ok "follow: a broken file is a gap with its message ($MSG4)" "$SCREEN"; fi
check_screen "follow: the chart marks the gap" '×'
if poll 0 status_is ' epoch 1/2 \(\+2 new\) \|'; then ok "follow: two new files: (+2 new)"
else not_ok "follow: two new files: (+2 new)" "$SCREEN"; fi
# stepping takes the new ones in: Right, Right, Right reaches the broken epoch, whose load
# error every view shows
keys Right Right Right
if poll 0 status_is ' epoch 4/4 \|'; then ok "follow: Right to the last epoch (epoch 4/4)"
else not_ok "follow: Right to the last epoch (epoch 4/4)" "$SCREEN"; fi
keys 1
check_screen "follow: Reliability shows epoch 4's error" 'non-numeric value'
keys q
check_screen "follow: q quits, status 0" 'EXITED 0'

# SIGTERM while following (inotify watch open, a file being measured or not): curses is left,
# the terminal restored, one line said, death by the signal
new_server
T new-session -d -x 80 -y 24 "sh -c 'echo \$\$ >$TMP/pid; exec $CALSCOPE --follow $RUN'; echo EXITED \$?; stty -a | grep -o ' icanon'; sleep 86400"
check_screen "follow: running before the signal" '\[7 Trend\]'
kill -TERM "$(cat "$TMP/pid")"
check_screen "follow: SIGTERM restores the terminal" 'calscope: SIGTERM; the terminal was restored'
check_screen "follow: ... dies of it (143), the terminal cooked again" 'EXITED 143'
check_screen "follow: ... canonical mode back" '^ icanon'

# usage errors, each with its message and status 2
new_server
T new-session -d -x 80 -y 24 "$CALSCOPE --follow $TMP/none; echo EXITED \$?; sleep 86400"
check_screen "follow: a folder that does not exist" "--follow $TMP/none: cannot open: No such file or directory"
check_screen "follow: ... status 2" 'EXITED 2'
expect_rc "follow: --follow and a FILE refused" 2 "$CALSCOPE" --follow "$RUN" samples/digits_gnb.csv
expect_match "follow: ... says why" "--follow takes its files from the folder: 'samples/digits_gnb.csv' is one too many" "$ERR"
expect_rc "follow: --settle without --follow refused" 2 "$CALSCOPE" --settle 1 samples/digits_gnb.csv
expect_match "follow: ... says why" "--settle needs --follow DIR" "$ERR"
done_testing
