#!/usr/bin/env bash
# End-to-end tests of how the dashboard uses the screen and the keys:
# long tables scroll with a "more" marker, q closes the help, the status line keeps the
# selection and ci at 80 columns, messages wrap between words, the too-small note fits.
# Each check polls the screen for a state (lib.sh); LIVENESS only catches hangs.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

tmux_servers screen

# start [-x COLS -y LINES] -- ARGS...: a fresh session (80x24 unless said) running the dashboard;
# the pane stays after it exits and prints "EXITED <status>".
start() {
    local x=80 y=24
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
        case $1 in -x) x=$2; shift 2;; -y) y=$2; shift 2;; *) shift;; esac
    done
    shift
    new_server
    T new-session -d -x "$x" -y "$y" "$CALSCOPE $*; echo EXITED \$?; sleep 86400"
    T set-option -g remain-on-exit on >/dev/null 2>&1
}
screen_text() { T capture-pane -p 2>/dev/null; }
check_not_screen() {
    if printf '%s' "$SCREEN" | grep -Eq -- "$2"; then not_ok "$1" "unexpected /$2/:" "$SCREEN"; else ok "$1"; fi
}

# 1800 cases of 4 pixels (case0000..case1798): random ones, and one perfectly calibrated case (ACE 0, so the last
# of the table, worst ACE first); 12 named classes, the last one "zulu"
/usr/bin/python3 - "$TMP" <<'PY'
import sys, random
random.seed(7)
out = sys.argv[1]
with open(f"{out}/cases.csv", "w") as f:
    f.write("case,label,p_a,p_b\n")
    for c in range(1799):
        for _ in range(4):
            p = random.uniform(0.55, 0.95)
            f.write(f"case{c:04d},{random.randrange(2)},{p!r},{1 - p!r}\n")
    for _ in range(4):
        f.write("zzbest,0,1.0,0.0\n")
names = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliet", "kilo", "zulu"]
with open(f"{out}/classes.csv", "w") as f:
    f.write("label," + ",".join("p_" + n for n in names) + "\n")
    for i in range(1200):
        p = [random.random() + 0.01 for _ in names]
        s = sum(p)
        p = [x / s for x in p]
        p[-1] = 1 - sum(p[:-1])
        f.write(f"{random.randrange(len(names))}," + ",".join(repr(x) for x in p) + "\n")
PY

# ---- Cases: 1800 cases scroll; the marker says where the window is ----------------------------
start -- "$TMP/cases.csv"
wait_for 'ready *$'
keys 6
check_screen "Cases: the table says there is more below" 'rows 1-[0-9]+ of 1800, more below'
check_not_screen "Cases: the best case is not on the first page" 'zzbest'
# readable at 1800 cases: whole names (cut to 7 columns, case1690..case1699 all read "case169"),
# and a heat map whose shading is on a log scale, said in its legend
check_screen "Cases: the table shows the case names whole" ' case[0-9]{4} +4 +[0-9.]+ +[0-9.]+ +[0-9.]+ *$'
check_not_screen "Cases: no name cut to 7 columns" ' case[0-9]{3} +4 '
check_screen "Cases: the heat map legend says its log scale" '1\.\.[0-9]+ cases \(log\)'
keys End
check_screen "Cases: End shows the last case (ACE 0, worst ACE first)" 'zzbest +4 +0\.0000 +0\.0000'
check_screen "Cases: the marker says more above" 'rows [0-9]+-1800 of 1800, more above'
keys Home
check_screen "Cases: Home returns to the first rows" 'rows 1-[0-9]+ of 1800, more below'
first=$(printf '%s' "$SCREEN" | sed -n 's/.*rows 1-\([0-9]*\) of 1800.*/\1/p')
keys NPage
# the marker shortens in the narrow panel ("9-17/1800 ^v")
check_screen "Cases: PgDn moves a page (less one line)" "(rows )?$first-$((2 * first - 1))( of |/)1800"
keys Down
check_screen "Cases: Down moves one row" "(rows )?$((first + 1))-$((2 * first))( of |/)1800"
keys Up Up
check_screen "Cases: Up moves back" "(rows )?$((first - 1))-$((2 * first - 2))( of |/)1800"
keys PPage
check_screen "Cases: PgUp moves back a page" 'rows 1-[0-9]+ of 1800, more below'

# ---- the mouse: the wheel scrolls the table (X10 mouse reports, as tmux forwards them) -----------
keys Home
check_screen "Cases: back at the top" 'rows 1-[0-9]+ of 1800, more below'
T send-keys -l $'\e[Ma5-'        # wheel down (button 64+1) over the table
check_screen "mouse: the wheel scrolls the table three rows" '4-[0-9]+/1800 \^v|rows 4-[0-9]+ of 1800'
T send-keys -l $'\e[M 5!'; T send-keys -l $'\e[M#5!'   # click column 20 of the top row
check_screen "mouse: a click on a tab shows its view" '^ 1 Reliability \[2 Top-k\]'

# ---- Classes: 12 classes at 80x24, the table scrolls to the last ---------------------------------
start -- "$TMP/classes.csv"
wait_for 'ready *$'
keys 4
check_screen "Classes: a marker under the table" 'rows 1-[0-9]+ of 12, more below'
check_not_screen "Classes: zulu is below the window" '^zulu '
keys End
check_screen "Classes: End shows the last class" '^zulu +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+'
keys Home
check_screen "Classes: Home shows the first class" '^alpha +[0-9.]+ '

# ---- a view with nothing to scroll says why ----------------------------------------------------
keys 1
wait_for 'ready *$'
keys Down
check_screen "a scroll key where nothing scrolls says why" 'nothing to scroll: this view fits \(x shows the compat panel'

# ---- compat: the moved samples scroll, each rule in full ------------------------------------------
start -- samples/breast_cancer_logreg.csv
wait_for 'ready *$'
keys x
check_screen "compat: the moved samples have a marker" 'rows 1-[0-9]+ of [0-9]+, more below'
check_screen "compat: the rule text is whole, wrapped between words" ' value/edges put it across the *$'
keys End
check_screen "compat: End reaches the last moved sample" 'rows [0-9]+-([0-9]+) of \1, more above'

# ---- --no-mouse: the clicks are not taken ---------------------------------------------------------
start -- --no-mouse samples/digits_gnb.csv
wait_for 'ready *$'
T send-keys -l $'\e[M 5!'; T send-keys -l $'\e[M#5!'
keys z                                # a key after the click: its message shows both were read
check_screen "--no-mouse: the dashboard reads keys after the click" 'z does nothing here \(\? lists the keys\)'
check_not_screen "--no-mouse: the click did not reach the Top-k tab" '\[2 Top-k\]'
expect_rc "--no-mouse in --help" 0 "$CALSCOPE" --help
expect_match "--help lists --no-mouse" '--no-mouse +leave the mouse to the terminal' "$OUT"

# ---- Compare: the methods and rankings panels scroll (5 files + 4 recalibrations at 80x24) -------
for i in 4 5; do cp samples/breast_cancer_logreg.csv "$TMP/bc_fold$i.csv"; done
start -- samples/breast_cancer_gnb.csv samples/breast_cancer_logreg.csv samples/breast_cancer_ts.csv \
    "$TMP/bc_fold4.csv" "$TMP/bc_fold5.csv"
wait_for 'ready *$'
keys t Space j Space j Space j Space Escape     # ts, platt, hist, iso from the picker
check_screen "Compare methods: the table of 9 methods has a marker" 'rows 1-[0-9]+ of [0-9]+, more below' 120
check_not_screen "Compare methods: the legend is below the window" 'P<: share of'
keys End
check_screen "Compare methods: End reaches the legend" 'P<: share of [0-9]+ resamples where it beats the ref' 120
check_screen "Compare methods: the marker says more above" 'rows [0-9]+-([0-9]+) of \1, more above'
check_screen "Compare methods: the title stays" '^methods \(p panel'
check_screen "Compare methods: the column header stays" '^method +acc +\[ECE\]'
keys Home
check_screen "Compare methods: Home shows the first rows" 'rows 1-[0-9]+ of [0-9]+, more below'
keys p
check_screen "Compare rankings: the panel has a marker" 'rows 1-[0-9]+ of [0-9]+, more below' 120
check_not_screen "Compare rankings: the last mass row is below the window" '^ [^ ]*\+iso +[-+][0-9.]+ +[-+][0-9.]+ *$'
keys End
check_screen "Compare rankings: End shows the last mass row" '^ [^ ]*\+iso +[-+][0-9.]+ +[-+][0-9.]+ *$' 120
keys p
wait_for '^file +ECE'
keys Down
check_screen "Compare files: Down scrolls the files' table (5 files)" 'rows 2-[0-9]+ of [0-9]+, more above and below' 60
check_not_screen "Compare files: no 'nothing to scroll' message" 'nothing to scroll'

# ---- the fitted temperature beside the recalibrated method, as the report gives it ---------------
start -- samples/breast_cancer_logreg.csv
wait_for 'ready *$'
keys t Space Escape
run "$CALSCOPE" report --compare samples/breast_cancer_logreg.csv --recal ts
want=$(printf '%s\n' "$OUT" | unwrap '^  \[[0-9]+\] ' | sed -n 's/.*+ts: temperature scaling.* T = \([0-9.]*\) on all rows.*/\1/p')
check_screen "Compare: the fitted temperature of +ts ($want, as the report)" "\\+ts: fitted temperature T = ${want//./\\.} " 60

# ---- vector scaling's one-line summary (the picker's fifth method) ----------------------------------
start -- samples/digits_gnb.csv
wait_for 'ready *$'
keys t j j j j Space Escape
run "$CALSCOPE" report --compare samples/digits_gnb.csv --recal vs
want=$(printf '%s' "$OUT" | unwrap '  [^ ]' | sed -n 's/.*+vs: vector scaling.* w in \[\([0-9.]*, [0-9.]*\)\].*/\1/p')
check_screen "Compare: +vs's scales, as the report ($want)" "\\+vs: 10 scales in \\[${want//./\\.}\\] and biases" 120

# ---- help: q closes it; the first page says how to quit ------------------------------------------
keys Escape '?'
check_screen "the first help page at 80x24 says how to quit" 'calscope keys 1/[0-9].*q closes, q again quits'
keys q
check_screen "q closes the help, the dashboard stays (the tabs are back)" '\[[1-6] [A-Za-z-]+\] .*\? keys'
check_not_screen "q in the help does not quit" 'EXITED'
keys q
check_screen "q again quits" 'EXITED 0$'

# ---- the status line at 80 columns: selection and ci kept, the file name shortened first --------
cp samples/digits_gnb.csv "$TMP/a_rather_long_experiment_file_name_v2.csv"
start -- --ci 50 --select "'conf > 0.5'" "$TMP/a_rather_long_experiment_file_name_v2.csv"
check_screen "status: ci and selection kept at 80 columns" ' a_r~\.csv \[1/1\] \| top1 \| M 15 uniform \| σ 0\.1 \| ci 50 \| sel conf > 0\.5 +ready' 120

# ---- load errors wrap between words -------------------------------------------------------------
start -- samples/broken/stray_quote.csv
check_screen "load error shown" 'cannot load this file'
msg=$("$CALSCOPE" report samples/broken/stray_quote.csv 2>&1 | sed 's/^calscope: //')
# the message's last word, then every word: the wrapped lines may come in later frames
last=${msg##* }
wait_for "$(printf '%s' "$last" | sed 's/[][\\.*^$(){}?+|/]/\\&/g')"
cut=()
for w in $msg; do printf '%s' "$SCREEN" | grep -qF -- "$w" || cut+=("$w"); done
if [ ${#cut[@]} -eq 0 ]; then ok "every word of the load error is whole on screen"
else not_ok "every word of the load error is whole on screen" "cut: ${cut[*]}" "$SCREEN"; fi

# ---- too small: the note fits the screen it is shown on ----------------------------------------
start -x 30 -y 10 -- samples/digits_gnb.csv
check_screen "too small: the note is shown" 'terminal too small'
check_screen "too small: the sizes are whole, wrapped between words" '^60×20, have 30×10$'
check_screen "too small: how to quit" 'q quits'

# ---- method names: the shortest that tell the methods apart (dashboard and report tables) ----
# three files whose names share a 30-character head (the symptom: "breast_cancer__lr~" three times)
mkdir -p "$TMP/runs/of/a/long/experiment/directory"
for i in 1 2 3; do
    cp samples/breast_cancer_logreg.csv "$TMP/runs/of/a/long/experiment/directory/breast_cancer__lr_calibration_fold$i.csv"
done
FOLDS=$(printf "$TMP/runs/of/a/long/experiment/directory/breast_cancer__lr_calibration_fold%s.csv " 1 2 3)
# distinct_names NAME: the method column of the table rows after HEADING in $SCREEN or $OUT
distinct_names() {
    local name=$1 text=$2 heading=$3 names
    names=$(printf '%s\n' "$text" | awk -v h="$heading" '$0 ~ h {on=1; next} on && NF == 0 {exit} on {print $1}' | tr -d '>')
    local n=$(printf '%s\n' "$names" | grep -c .) u=$(printf '%s\n' "$names" | sort -u | grep -c .)
    if [ "$n" -eq 3 ] && [ "$u" -eq 3 ]; then ok "$name"; else not_ok "$name" "names: $(echo $names)" "$text"; fi
}
start -- $FOLDS
wait_for 'ready *$'
keys p p
check_screen "Compare: the rankings panel" 'rankings \(1 = best'
wait_for 'mass: mean' 60
distinct_names "Rankings panel: three distinct method names" "$SCREEN" '^method +acc'
distinct_names "Mass panel: three distinct method names" "$SCREEN" '^method +k=1'
run "$CALSCOPE" report --compare $FOLDS
distinct_names "report tables: three distinct method labels" "$OUT" '^  method +ece +ace +mce +brier +nll +smece$'
# the legend names each method in full; a path longer than a line continues on the next
LEGEND=$(printf '%s\n' "$OUT" | sed -n '/^Methods (lens/,/^$/p' | sed 's/^       //' | tr -d '\n')
expect_match "report: the legend names each method in full" \
    '\[1\]  [^ ]*/breast_cancer__lr_calibration_fold1\.csv \(reference\)  \[2\]  [^ ]*/breast_cancer__lr_calibration_fold2\.csv  \[3\]  [^ ]*/breast_cancer__lr_calibration_fold3\.csv$' "$LEGEND"

# ---- Compare methods panel with intervals at 80 columns: the names give way, P< stays whole ----
start -- samples/digits_logreg.csv samples/digits_ts.csv
wait_for 'ready *$'
keys 5 p i
check_screen "Compare methods with intervals: the paired row ends in a whole P< at 80 columns" \
    '^ digits_ts[^ ]* +0\.0072 \[[0-9.,]+\] +-0\.0073 \[-[0-9.]+,-[0-9.]+\]\* [01]\.[0-9]{3}$' 120
check_screen "Compare methods with intervals: the header ends in P<" '95% paired +P<$'
keys q

done_testing
