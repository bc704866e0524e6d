#!/usr/bin/env bash
# End-to-end tests of the dashboard at 80x24 and 60x20: names that differ only at their ends
# are shortened to forms that tell them apart (the Compare table, the diagrams' titles, the
# methods table, the status line), no count or column header is cut or run together, and the
# status line's cut mark is no operator; the Classes bars say how many classes have no bar, and
# the Likert panel names its confidence bands so. Each check polls the screen for a state (lib.sh);
# LIVENESS only catches hangs.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

tmux_servers narrow

# start [-x COLS -y LINES] [ENV=VALUE...] -- ARGS...: a fresh session running the dashboard
start() {
    local x=80 y=24 env=""
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
        case $1 in -x) x=$2; shift 2;; -y) y=$2; shift 2;; *) env="$env $1"; shift;; esac
    done
    shift
    new_server
    T new-session -d -x "$x" -y "$y" "env $env $CALSCOPE $*; echo EXITED \$?; sleep 86400"
}
screen_text() { T capture-pane -p 2>/dev/null; }
check_fits() {
    if fits "$2" "$3"; then ok "$1"; else not_ok "$1" "a line past ${2} columns:" "$SCREEN"; fi
}
status_line() { printf '%s\n' "$SCREEN" | tail -n 1; }
# panel_joined REGEX: the screen's text from the column where REGEX first matches, on that line
# and the two under it, joined by spaces (a side panel's line wrapped between words)
panel_joined() {
    printf '%s\n' "$SCREEN" | /usr/bin/python3 -c '
import re, sys
lines = sys.stdin.read().split("\n")
for i, l in enumerate(lines):
    m = re.search(sys.argv[1], l)
    if m:
        print(" ".join(x[m.start():].strip() for x in lines[i:i + 3]))
        break' "$1"
}
panel_matches() { panel_joined "$1" | grep -Eq -- "$2"; }

# Two files whose names differ only near their ends (cut to the same 18 columns before:
# "resnet50_cifar10_se" twice)
A="$TMP/resnet50_cifar10_seed1.csv" B="$TMP/resnet50_cifar10_seed2.csv"
cp samples/breast_cancer_gnb.csv "$A"
cp samples/breast_cancer_logreg.csv "$B"

# ---- Compare at 80x24: the table and the diagrams' titles tell the files apart ----------------
start -- "$A" "$B"
wait_for 'ready *$'
keys 5
check_screen "80x24 Compare table: file 1 by its own name" '^resnet5~_seed1\.csv +0\.[0-9]{4}'
check_screen "80x24 Compare table: file 2 by its own name" '^resnet5~_seed2\.csv +0\.[0-9]{4}'
check_not_screen "80x24 Compare table: no name cut to a common head" 'resnet50_cifar10_se( |$)'
check_screen "80x24 diagrams: titles whole when they fit" '> resnet50_cifar10_seed1\.csv +resnet50_cifar10_seed2\.csv'
check_fits "80x24 Compare: no line past the edge" 80 24
# the status line: the active file's name told apart from the other's
if status_line | grep -Eq -- '~_seed1\.csv \[1/2\]'; then ok "80x24 status: file 1 told apart"
else not_ok "80x24 status: file 1 told apart" "$(status_line)"; fi
keys f
if poll 0 eval 'status_line | grep -Eq -- "~_seed2\.csv \[2/2\]"'; then ok "80x24 status: file 2 told apart"
else not_ok "80x24 status: file 2 told apart" "$(status_line)"; fi
keys f

# ---- the methods table and the rankings: names apart, headers apart -----------------------------
keys p
check_screen "80x24 methods table: file 1" '^>resnet50_~_seed1\.csv +0\.[0-9]{4}' 120
check_screen "80x24 methods table: file 2" '^ resnet50_~_seed2\.csv +0\.[0-9]{4}' 10
keys p
check_screen "80x24 rankings panel" 'rankings \(1 = best' 10
# ] 11 times: from ECE (the 2nd of 14 columns) to ECEsweep (the 13th)
keys ] ] ] ] ] ] ] ] ] ] ]
# the last columns in sight: before, "L2CEL2CE-debECEsweep"
check_screen "80x24 rankings header: labels apart" 'L2CE +L2CE-deb +ECEsweep *$' 10
check_not_screen "80x24 rankings header: nothing run together" 'L2CEL2CE|debECE'
check_fits "80x24 rankings: no line past the edge" 80 24
keys p p
check_screen "80x24 methods table: the focused wide label apart" 'L2CE-deb +\[ECEsweep\] *$' 10
check_fits "80x24 methods table: no line past the edge" 80 24

# ---- 60x20 ---------------------------------------------------------------------------------------
T resize-window -x 60 -y 20
keys p p                # the methods table > the rankings > the files
check_screen "60x20 Compare table: file 1 by its own name" '^res~_seed1\.csv +0\.[0-9]{4}' 10
check_screen "60x20 Compare table: file 2 by its own name" '^res~_seed2\.csv +0\.[0-9]{4}' 10
check_fits "60x20 Compare: no line past the edge" 60 20
keys p p
check_screen "60x20 rankings header: labels apart" 'L2CE +L2CE-deb +ECEsweep *$' 10
check_fits "60x20 rankings: no line past the edge" 60 20

# ---- the status line's cut: a mark no selection ends with ----------------------------------------
start -x 60 -y 20 -- --select "'conf > 0.9'" "$A" "$B"
wait_for 'ready *$'
if status_line | grep -q -- 'sel conf > …'; then ok "60x20 status: the cut selection ends in …"
else not_ok "60x20 status: the cut selection ends in …" "$(status_line)"; fi
check_not_screen "60x20 status: no '>' cut mark after the operator" '> > '
start -x 60 -y 20 LANG=C LC_ALL=C -- --select "'conf > 0.9'" "$A" "$B"
wait_for 'ready *$'
if status_line | grep -q -- 'sel conf > ~ '; then ok "60x20 ASCII status: the cut selection ends in ~"
else not_ok "60x20 ASCII status: the cut selection ends in ~" "$(status_line)"; fi

# ---- counts never cut: 200,000 rows, the full lens's 100,000-odd bins ---------------------------
big_csv "$TMP/big.csv"
start -- "$TMP/big.csv"
wait_for '\| top1 \|.* ready *$' 120
keys l l l l
wait_for '\| full \|.* ready *$' 120
# before: "bins 122882/122882  thin" with the count cut off
if poll 10 panel_matches 'n 200000 ' '^n 200000 +bins 122882/122882 +thin [0-9]+ rows 200000'; then
    ok "80x24 full lens: the thin count is shown"
else not_ok "80x24 full lens: the thin count is shown" "$SCREEN"; fi
check_fits "80x24 Reliability: no line past the edge" 80 24
T resize-window -x 60 -y 20
keys l
wait_for '\| top1 \|.* ready *$' 120
# before: "rows 200000 used 200000 rejec"
if poll 10 panel_matches 'rows 200000' '^rows 200000 used 200000 rejected 0'; then
    ok "60x20: the rejected count is shown"
else not_ok "60x20: the rejected count is shown" "$SCREEN"; fi
check_fits "60x20 Reliability: no line past the edge" 60 20

# ---- Classes: the bars say how many classes they leave out; the Likert bands --------------------
/usr/bin/python3 - "$TMP/k40.csv" <<'PY'
import sys, random
random.seed(5)
K = 40
with open(sys.argv[1], "w") as f:
    f.write("label," + ",".join(f"p_k{c:02d}" for c in range(K)) + "\n")
    for i in range(800):
        p = [random.random() + 0.01 for _ in range(K)]
        s = sum(p)
        f.write(f"{random.randrange(K)}," + ",".join(f"{x / s:.6f}" for x in p) + "\n")
PY
# the note is right when it counts the classes without a bar: 40 less the bar rows on screen
# (bar rows: " k07 ███ 0.0032", the chosen one ">k00"; the table's rows start at column 0)
note_counts() {
    local bars
    bars=$(printf '%s\n' "$SCREEN" | grep -Ec -- '^[> ]k[0-9]{2} ')
    [ "$bars" -gt 0 ] && screen_matches "^\\+ $((40 - bars)) classes not shown"
}
start -- "$TMP/k40.csv"
wait_for 'ready *$'
keys 4
if poll 10 note_counts; then ok "80x24 Classes: + N classes not shown, N = 40 less the bars"
else not_ok "80x24 Classes: + N classes not shown, N = 40 less the bars" "$SCREEN"; fi
check_screen "Likert panel: confidence bands" 'Likert: confidence bands'
check_not_screen "Likert panel: not called intervals" 'confidence intervals'
keys c c c c c c c c c c c c c c c
check_screen "Classes: the chosen class k15 has its bar" '^>k15 '
if poll 10 note_counts; then ok "Classes, scrolled: the note still counts"
else not_ok "Classes, scrolled: the note still counts" "$SCREEN"; fi
T resize-window -x 60 -y 20
if poll 10 note_counts; then ok "60x20 Classes: the note counts"
else not_ok "60x20 Classes: the note counts" "$SCREEN"; fi
check_fits "60x20 Classes: no line past the edge" 60 20
# every class has a bar: no note
start -- samples/digits_gnb.csv
wait_for 'ready *$'
keys 4
check_screen "10 classes: every bar" '^ 9 ' 10
check_not_screen "10 classes: no note" 'not shown'
done_testing
