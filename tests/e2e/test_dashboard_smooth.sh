#!/usr/bin/env bash
# End-to-end: the Reliability view's smoothed curve (key `o`): relplot's
# picture in place of the bars, its title naming smECE and sigma with the report's numbers,
# the bars back on a second `o`; the reason instead of a picture on a lens without smECE; two
# files (`f` draws the other file's curve); a resize; ASCII glyphs. At 80x24. Polls for states
# (lib.sh); no check depends on elapsed time.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmux_servers smooth
screen_text() { T capture-pane -p; }

IRIS=samples/iris_gnb.csv
BREAST=samples/breast_cancer_gnb.csv

# start ARGS...: a fresh 80x24 session running the dashboard; "EXITED <status>" when it ends.
start() {
    new_server
    T new-session -d -x 80 -y 24 "$CALSCOPE $*; echo EXITED \$?; sleep 86400"
    T set-option -g remain-on-exit on >/dev/null 2>&1
}
# smece_of FLAGS... FILE: "smECE 0.0319  SIG 0.0319" as the title writes the report's numbers
smece_of() {
    local sig=$1; shift
    run "$CALSCOPE" report --format json "$@"
    json_get "'smECE %.4f  $sig %.4f' % (d['files'][0]['metrics']['smece'], d['files'][0]['metrics']['smece_sigma'])"
}
# plot_cells GLYPHS: how many of these characters the plot rows of panel a hold (the rows
# between the title and the x axis, the columns left of the metrics table)
plot_cells() {
    printf '%s' "$SCREEN" | /usr/bin/python3 -c '
import sys
glyphs, rows = sys.argv[1], sys.stdin.read().split("\n")
axis = next(i for i, r in enumerate(rows) if "\u2514" in r or r.lstrip().startswith("0+"))
print(sum(ch in glyphs for r in rows[2:axis] for ch in r[:44]))' "$1" 2>/dev/null
}
# cells_until GLYPHS OP N: polls the screen (as wait_for) until plot_cells GLYPHS OP N holds
# (OP a test operator: -gt, -ge, -eq), LIVENESS at most: a capture can fall between the table's
# draw and the plot's. Sets SCREEN and CELLS (the last count).
cells_hold() { CELLS=$(plot_cells "$1"); CELLS=${CELLS:-0}; [ "$CELLS" "$2" "$3" ]; }
cells_until() { poll 0 cells_hold "$@"; }

# ---- top1: the curve, its title, the bars back ------------------------------------------------
start "$IRIS"
check_screen "iris: the bars" 'ECE +[0-9.]+' 60
cells_until '█' -gt 10; bars=$CELLS
if [ "$bars" -gt 10 ]; then ok "iris: bars in the plot ($bars cells)"; else not_ok "iris: bars in the plot" "$SCREEN"; fi
want=$(smece_of σ "$IRIS")
keys o
check_screen "o: the title names smECE and sigma, the report's numbers ($want)" "^smooth  $want"
cells_until '●·' -ge 8; curve=$CELLS; bars=$(plot_cells '█░▓')
if [ "$curve" -ge 8 ] && [ "$bars" -eq 0 ]; then ok "o: a curve ($curve cells), no bars"
else not_ok "o: a curve, no bars" "curve cells $curve, bar cells $bars" "$SCREEN"; fi
check_screen "o: the diagonal stays" '╱'
check_screen "o: the density strip under the x axis" '^   d +[▁▂▃▄▅▆▇█]+'
check_screen "o: the legend says what the glyphs are" '● acc, dense +╱ calibrated'
check_screen "o: the legend says how to get the bars" "relplot's smoothed curve \(o: bars\)"
expect_match "o: the status line is unchanged (nothing recomputed)" 'ready *$' "$(printf '%s' "$SCREEN" | tail -1)"

# a resize keeps the curve and widens the plot with the height
T resize-window -x 100 -y 30
check_screen "resize 100x30: the title with the file and the lens" "iris_gnb.csv  top1  smooth  $want"
cells_until '●·' -ge "$curve"; wide=$CELLS
if [ "$wide" -ge "$curve" ]; then ok "resize: the curve grows with the plot ($curve -> $wide cells)"
else not_ok "resize: the curve grows with the plot" "$curve -> $wide" "$SCREEN"; fi
T resize-window -x 80 -y 24
check_screen "resize back to 80x24: the short title" "^smooth  $want"

# the class:C lens (l twice: topk, then class) recomputes: its own smECE, the stale result dimmed
# meanwhile, then the new title. Class 0 (setosa) is separated: every p is 0 or 1 and right, so
# sigma* is relplot's floor 0.001 and the curve is one point at each end (the columns average
# the mesh: a kernel that narrow still shows); class 1 is a curve.
keys l l
want_c=$(smece_of σ --lens 'class:#0' "$IRIS")
check_screen "class:#0: its own smECE ($want_c)" "^smooth  $want_c"
cells_until '●·' -eq 2; c0=$CELLS
if [ "$c0" -eq 2 ] && printf '%s' "$SCREEN" | grep -Eq '^    │●' && printf '%s' "$SCREEN" | grep -Eq '^   1┤ .*●'
then ok "class:#0: a point at (0, 0) and one at (1, 1)"; else not_ok "class:#0: a point at each end" "$SCREEN"; fi
keys c
want_c=$(smece_of σ --lens 'class:#1' "$IRIS")
check_screen "c: class:#1, the curve of its own smECE ($want_c)" "^smooth  $want_c"
cells_until '●·' -ge 8; c1=$CELLS
if [ "$c1" -ge 8 ]; then ok "class:#1: a curve ($c1 cells)"; else not_ok "class:#1: a curve" "$SCREEN"; fi
keys l
check_screen "classwise: the reason, not an empty panel" 'No smooth curve: smECE and relplot.s curve' 60
if wait_joined 'top1 and class:C'; then ok "classwise: the reason names the lenses"
else not_ok "classwise: the reason names the lenses" "$SCREEN"; fi
keys o
check_screen "o again: the bars are back" 'iris_gnb.csv  classwise 15 uniform'
cells_until '█░▓' -gt 10; bars=$CELLS
if [ "$bars" -gt 10 ]; then ok "o again: bars ($bars cells)"; else not_ok "o again: bars" "$SCREEN"; fi
keys q
check_screen "q quits with status 0" 'EXITED 0' 60

# ---- --lens classwise from the start ----------------------------------------------------------
start --lens classwise "$IRIS"
check_screen "--lens classwise: the bars" 'ECE +[0-9.]+' 60
keys o
check_screen "--lens classwise, o: the reason" 'not on classwise\. l: next lens, o:' 60

# ---- two files, a fixed bandwidth, ASCII glyphs ------------------------------------------------
start --ascii --smece-sigma 0.05 "$IRIS" "$BREAST"
check_screen "two files: the first one's bars" 'ECE +[0-9.]+' 60
keys o
want=$(smece_of sigma --smece-sigma 0.05 "$IRIS")
check_screen "--smece-sigma 0.05: the title says sigma 0.0500 ($want)" "^smooth  $want"
cells_until '*.' -ge 8; curve=$CELLS
if [ "$curve" -ge 8 ]; then ok "ASCII: the curve in * and . ($curve cells)"; else not_ok "ASCII: the curve" "$SCREEN"; fi
check_screen "ASCII: the density strip in digits" '^   d +[1-8 ]*[1-8]'
want2=$(smece_of sigma --smece-sigma 0.05 "$BREAST")
keys f
check_screen "f: the second file's curve ($want2)" "^smooth  $want2" 60
check_screen "f: the status line names the second file" 'breast_c.*\[2/2\]'
keys f
check_screen "f again: the first file's curve" "^smooth  $want" 60
keys q
check_screen "q quits with status 0" 'EXITED 0' 60

done_testing
