#!/usr/bin/env bash
# End-to-end test of the dashboard's --follow at 80x24: a folder of a training run's prediction
# files, watched while this script adds to it (one file renamed into place, one broken). The
# Trend view's numbers are the report's of each file; Left/Right move the other views to that
# epoch; a file arriving while an older epoch is shown does not move the view and the status
# line counts it (+1 new); a broken file is a gap with the loader's message; `a` compares the
# first, selected and last epochs in the Compare view. Each check polls
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

# ---- a: the Compare view on the first, selected and last epochs ------------------------------
# Four epochs of the same 1,797 held-out digits (the samples' labels are the same rows), so the
# Compare view's paired bootstrap applies. Epoch 2 selected, a: the files are epochs 1, 2 and 4
# (not 3), epoch 2 the reference; each file's ECE is the report's, and each paired difference
# the one `calscope report --compare` prints for the command `:` shows.
CMP=$TMP/cmp
mkdir -p "$CMP"
cp samples/digits_gnb.csv "$CMP/epoch_1.csv"; cp samples/digits_ts.csv "$CMP/epoch_2.csv"
cp samples/digits_logreg.csv "$CMP/epoch_3.csv"; cp samples/digits_rf.csv "$CMP/epoch_4.csv"
touch -d '1 minute ago' "$CMP"/epoch_*.csv
cmp_row() { printf '%s\n' "$SCREEN" | grep -E -- "^epoch_$1\.csv +[0-9]"; }
cmp_has() { cmp_row "$1" | grep -Fq -- "$2"; }
new_server
T new-session -d -x 80 -y 24 "$CALSCOPE --follow $CMP; echo EXITED \$?; sleep 86400"
if poll 0 status_is ' epoch 4/4 \|'; then ok "compare: four epochs, the last shown"
else not_ok "compare: four epochs, the last shown" "$SCREEN"; fi
keys Left Left
if poll 0 status_is ' epoch_2\.csv epoch 2/4 \|'; then ok "compare: epoch 2 selected"
else not_ok "compare: epoch 2 selected" "$SCREEN"; fi
keys a
check_screen "compare: a opens the Compare view" '\[5 Compare\]'
check_screen "compare: the diagrams of epochs 1, 2 (the reference) and 4" '^epoch_1\.csv +> epoch_2\.csv +epoch_4\.csv *$'
for e in 1 2 4; do
    E=$(ece4 "$CMP/epoch_$e.csv")
    if poll 0 cmp_has "$e" " $E "; then ok "compare: epoch $e's ECE is the report's ($E)"
    else not_ok "compare: epoch $e's ECE is the report's ($E)" "$SCREEN"; fi
done
check_screen "compare: epoch 2 is the reference" '^epoch_2\.csv .*\(reference\)'
check_not_screen "compare: epoch 3 is not compared" '^epoch_3\.csv'
check_screen "compare: the paired differences are there" '^epoch_4\.csv .*\+0\.[0-9]{4} \['
keys :
check_cmdline "compare: the : line is whole"
expect_match "compare: the : line compares epochs 1, 2, 4 with 2 the reference" \
    "^calscope report .*--compare --reference 2 .*$CMP/epoch_1\.csv $CMP/epoch_2\.csv $CMP/epoch_4\.csv\$" "$CMD"
# shellcheck disable=SC2086
WANT=$(${CMD/calscope/$CALSCOPE} --format json | /usr/bin/python3 -c '
import json, sys
for c in json.load(sys.stdin)["compare"]:
    if c["metric"] == "ece":
        print(c["method"].rsplit("/", 1)[1], "%+.4f [%+.4f,%+.4f]" % (c["diff"], c["lo"], c["hi"]))')
keys Escape
check_screen "compare: the : overlay closed" '^epoch_1\.csv +> epoch_2\.csv'
while read -r name diff; do
    e=${name#epoch_}; e=${e%.csv}
    if poll 0 cmp_has "$e" "$diff"; then ok "compare: $name - reference is the report's ($diff)"
    else not_ok "compare: $name - reference is the report's ($diff)" "$SCREEN"; fi
done <<<"$WANT"
[ "$(printf '%s\n' "$WANT" | wc -l)" -eq 2 ] && ok "compare: the report compares two files with the reference" \
    || not_ok "compare: the report's differences" "$WANT"
# Left: epoch 1 is both the first and the selected: two files
keys Left
check_screen "compare: Left: epochs 1 (selected, the reference) and 4" '^> epoch_1\.csv +epoch_4\.csv *$'
if poll 0 status_is ' epoch_1\.csv epoch 1/4 \|'; then ok "compare: Left steps the selected epoch"
else not_ok "compare: Left steps the selected epoch" "$SCREEN"; fi
# a again: the selected epoch alone; the Compare view says how to compare
keys a
check_screen "compare: a again: one file, the view says how to compare" 'a compares the first, selected and last epochs'
check_not_screen "compare: ... no other file" '^epoch_4\.csv'
keys 7
check_screen "compare: the Trend view's legend names a" '\^ shown \(Left/Right\)  a: compare'
keys q
check_screen "compare: q quits, status 0" 'EXITED 0'

# ---- never half a file: a CSV written in place in pieces, an .npy pair in parts ---------------
# Each step is followed by a marker CSV renamed into the folder (taken at once): once the
# marker's row is on the screen, the dashboard has scanned the folder after that step, and the
# file being written must not have a row. The pauses between the pieces are these waits.
name_row() { printf '%s\n' "$SCREEN" | grep -E -- "^.. +[0-9]+ $1 "; }
has_row() { name_row "$1" | grep -Fq -- "$2"; }
# check_row NAME ROW-RE TEXT: until the row of ROW-RE holds TEXT
check_row() { if poll 0 has_row "$2" "$3"; then ok "$1"; else not_ok "$1" "$SCREEN"; fi; }
MARK=0
# marker DIR: renames the next marker in and waits for its row; then checks that none of the
# names given has a row
marker() {
    local dir=$1 name; shift
    MARK=$((MARK + 1))
    cp samples/iris_gnb.csv "$dir/.m" && mv "$dir/.m" "$dir/m$MARK.csv"
    if ! poll 0 has_row "m$MARK\.csv" " 150 "; then not_ok "marker m$MARK" "$SCREEN"; return; fi
    for name in "$@"; do
        if name_row "$name" >/dev/null; then not_ok "marker m$MARK: no row for $name yet" "$SCREEN"; return; fi
    done
    ok "marker m$MARK: no row for $* yet"
}
# piece SRC DST FROM TO: appends bytes FROM..TO-1 of SRC to DST
piece() { tail -c +$(($3 + 1)) "$1" | head -c $(($4 - $3)) >>"$2"; }

# a CSV in three pieces, cut inside lines, each dated a minute back as it is written: its
# --settle (0.2 s) has passed at every look, so the final newline alone keeps it out
IP=$TMP/inplace
mkdir -p "$IP"
cp samples/iris_gnb.csv "$IP/e0.csv"
touch -d '1 minute ago' "$IP/e0.csv"
SRC=samples/digits_gnb.csv
SIZE=$(stat -c %s "$SRC")
read -r C1 C2 < <(/usr/bin/python3 - "$SRC" <<'EOF'
import sys
d = open(sys.argv[1], "rb").read()
cuts = [len(d) // 3, 2 * len(d) // 3]
cuts = [c if d[c - 1:c] != b"\n" else c + 1 for c in cuts]   # inside a line, never after its end
print(*cuts)
EOF
)
EGNB=$(ece4 "$SRC")
new_server
T new-session -d -x 80 -y 24 "$CALSCOPE --follow $IP --settle 0.2; echo EXITED \$?; sleep 86400"
check_row "in place: the file there at the start" 'e0\.csv' ' 150 '
piece "$SRC" "$IP/e2.csv" 0 "$C1"
touch -d '1 minute ago' "$IP/e2.csv"
marker "$IP" 'e2\.csv'
piece "$SRC" "$IP/e2.csv" "$C1" "$C2"
touch -d '1 minute ago' "$IP/e2.csv"
marker "$IP" 'e2\.csv'
piece "$SRC" "$IP/e2.csv" "$C2" "$SIZE"
touch -d '1 minute ago' "$IP/e2.csv"
check_row "in place: the whole file once settled (1797 rows, the report's ECE $EGNB)" 'e2\.csv' " 1797   $EGNB "
check_not_screen "in place: never a gap (no load of a half file)" 'gap:'
keys q
check_screen "in place: q quits, status 0" 'EXITED 0'

# an .npy pair: the labels file comes in two parts after the probabilities started, then a
# second probabilities file in two parts after the labels are whole
NP=$TMP/npypair
mkdir -p "$NP"
/usr/bin/python3 - "$TMP" <<'EOF'
import sys, numpy as np
rng = np.random.default_rng(3)
p = rng.dirichlet(np.ones(4), size=300)
y = rng.integers(0, 4, size=300)
np.save(f"{sys.argv[1]}/p1.npy", p)
np.save(f"{sys.argv[1]}/p2.npy", np.roll(p, 1, axis=1))
np.save(f"{sys.argv[1]}/y.npy", y)
EOF
cp samples/iris_gnb.csv "$NP/e0.csv"
touch -d '1 minute ago' "$NP/e0.csv"
E1=$("$CALSCOPE" report --format json --labels "$TMP/y.npy" "$TMP/p1.npy" | /usr/bin/python3 -c 'import json,sys; print("%.4f" % json.load(sys.stdin)["files"][0]["metrics"]["ece"])')
E2=$("$CALSCOPE" report --format json --labels "$TMP/y.npy" "$TMP/p2.npy" | /usr/bin/python3 -c 'import json,sys; print("%.4f" % json.load(sys.stdin)["files"][0]["metrics"]["ece"])')
P1=$(stat -c %s "$TMP/p1.npy"); Y=$(stat -c %s "$TMP/y.npy")
new_server
T new-session -d -x 80 -y 24 "$CALSCOPE --follow $NP --labels $NP/labels.npy; echo EXITED \$?; sleep 86400"
check_row "npy pair: the file there at the start" 'e0\.csv' ' 150 '
piece "$TMP/p1.npy" "$NP/e1.npy" 0 $((P1 / 2))
marker "$NP" 'e1\.npy'                                   # half of it, no labels yet
piece "$TMP/y.npy" "$NP/labels.npy" 0 $((Y / 2))
marker "$NP" 'e1\.npy' 'labels\.npy'                     # half of each
piece "$TMP/p1.npy" "$NP/e1.npy" $((P1 / 2)) "$P1"
marker "$NP" 'e1\.npy' 'labels\.npy'                     # probabilities whole, labels half
piece "$TMP/y.npy" "$NP/labels.npy" $((Y / 2)) "$Y"
check_row "npy pair: taken once its labels are whole (300 rows, ECE $E1)" 'e1\.npy' "     300   $E1 "
piece "$TMP/p2.npy" "$NP/e2.npy" 0 $((P1 - 100))
marker "$NP" 'e2\.npy' 'labels\.npy'                     # labels whole, probabilities not
piece "$TMP/p2.npy" "$NP/e2.npy" $((P1 - 100)) "$P1"
check_row "npy pair: the probabilities arriving after the labels, once whole (ECE $E2)" 'e2\.npy' "     300   $E2 "
check_not_screen "npy pair: never a gap, the labels never an epoch" 'gap:|labels\.npy'
keys q
check_screen "npy pair: q quits, status 0" 'EXITED 0'

# ---- --ci: each epoch's bootstrap band, the report's interval ---------------------------------
# One epoch: the chart's scale runs from the lowest to the highest of the value and the band's
# ends, so with the value inside the interval the scale's labels are the interval's ends.
CI=$TMP/ci
mkdir -p "$CI"
cp samples/digits_ts.csv "$CI/epoch_1.csv"
touch -d '1 minute ago' "$CI/epoch_1.csv"
read -r CLO CHI INSIDE < <("$CALSCOPE" report --format json --ci 200 --seed 0 "$CI/epoch_1.csv" | /usr/bin/python3 -c '
import json, sys
m = json.load(sys.stdin)["files"][0]["metrics"]
v, (lo, hi) = m["ece"], m["ece_ci"]
print("%.4f %.4f %d" % (min(v, lo), max(v, hi), lo < v < hi))')
[ "$INSIDE" = 1 ] && ok "ci: the report's ECE is inside its interval (both ends are on the scale)" \
    || not_ok "ci: the report's ECE is inside its interval" "$CLO $CHI"
new_server
T new-session -d -x 80 -y 24 "$CALSCOPE --follow $CI --ci 200 --seed 0; echo EXITED \$?; sleep 86400"
check_screen "ci: the legend names the band" '░ 95% band'
check_screen "ci: the scale's top is the interval's upper end ($CHI)" "^$CHI│"
check_screen "ci: the scale's bottom is the interval's lower end ($CLO)" "^$CLO│"
check_screen "ci: the band is drawn" '│ *░'
keys i
no_band() { ! printf '%s' "$SCREEN" | grep -q '░'; }
if poll 0 no_band; then ok "ci: i turns the band off"; else not_ok "ci: i turns the band off" "$SCREEN"; fi
check_screen "ci: ... the legend without it" 'a: compare *$'
keys q
check_screen "ci: q quits, status 0" 'EXITED 0'

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
