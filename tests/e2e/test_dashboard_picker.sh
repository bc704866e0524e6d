#!/usr/bin/env bash
# End-to-end: the method picker (`t`) at 80x24 and 60x20. It lists every recalibration method,
# marks the ones applied, says why platt and beta do not apply to a 10-class file, fits or
# removes the focused method on space/Enter and shows each fit's time once fitted; closed, the
# Compare view's methods panel shows the chosen methods with their paired intervals, and `:`
# gives the matching --recal. Polls for states (lib.sh); no check depends on elapsed time or on
# a time's value (only on its form).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmux_servers picker
screen_text() { T capture-pane -p; }

FILE=samples/digits_logreg.csv     # 10 classes: platt and beta do not apply, ms and dir do
FIT=600                            # ms fits 6 models of an inner cross-validation: seconds, more under ASan
# the +ets row's name at 80 columns: the methods table's 20-column names keep what tells the
# methods apart, and the file's name gives way before the method's ("digits_logreg.c~+ets"
# beside "digits_logreg.csv+ms", never "digits_logreg.csv+e~"; chart/words.h)
ETS='digits_logreg\.c~\+ets'
# a fit time as the picker writes it: "7 ms", "3.4 s", "127 s"
TIME='([0-9]+ ms|[0-9]+\.[0-9] s|[0-9]+ s)'

new_server
T new-session -d -x 80 -y 24 "$CALSCOPE $FILE; echo EXITED \$?; sleep 86400"
T set-option -g remain-on-exit on >/dev/null 2>&1
check_screen "the file loads" 'ready *$' 60

# ---- every method, in the engine's order, with what applies ------------------------------------
keys t
check_screen "t opens the picker over the view" 'methods of digits_logreg\.csv \(t\)'
for m in ts hist iso vs ets irova ms dir; do
    check_screen "$m is listed, not applied" "^ +(> )?\\[ \\] $m +[A-Za-z]"
done
check_screen "the picker opens on ts, the first method" '^ +> \[ \] ts +temperature scaling'
check_screen "platt is marked as not applicable, with the reason" '^ +-  platt +binary files only: this file has 10 classes *$'
check_screen "beta is marked as not applicable, with the reason" '^ +-  beta +binary files only: this file has 10 classes *$'
order=$(printf '%s\n' "$SCREEN" | sed -n 's/^ *\(> \)\{0,1\}\(\[[ x]\]\|-\) \{1,\}\([a-z]\{2,5\}\) .*/\3/p' | tr '\n' ' ')
expect_match "the methods in the engine's order" '^ts platt hist iso vs ets beta irova ms dir $' "$order"
check_screen "the picker says its keys" 'space/Enter fit or remove +j/k move +Esc/q close'

# platt cannot be chosen: space says why, nothing is applied
keys Down Space
check_screen "space on platt is refused with the reason" 'platt: binary files only: this file has 10 classes' 10
check_screen "platt stays unapplied" '^ +> +-  platt '

# ---- ms and ets: toggled on, each gets a fit time -------------------------------------------------
keys j j j j j j j Space           # platt -> ms (row 9 of 10)
check_screen "space on ms applies it" '^ +> \[x\] ms +matrix scaling \(ODIR\)'
keys k k k Space                   # ms -> ets
check_screen "space on ets applies it" '^ +> \[x\] ets +ensemble temperature scaling'
check_screen "ets is listed with its fit time" "^ +> \\[x\\] ets +ensemble temperature scaling +$TIME *\$" "$FIT"
check_screen "ms is listed with its fit time" "^ +\\[x\\] ms +matrix scaling \\(ODIR\\) +$TIME *\$" "$FIT"
check_screen "the methods not chosen have no time" '^ +\[ \] dir +Dirichlet calibration \(ODIR\) *$'
keys z
check_screen "a key the picker does not know says its keys" 'methods: Up/Down or j/k move, space or Enter fits or removes' 10
check_screen "the picker stays open" 'methods of digits_logreg\.csv \(t\)'

# ---- closed: the Compare view's methods panel shows them with paired intervals -----------------
keys Escape
check_screen "Esc closes the picker onto the methods panel" '^methods \(p panel' 30
check_not_screen "the picker is closed" 'methods of digits_logreg'
check_screen "the methods table has the ms row" '^ [^ ]*\+ms +0\.[0-9]{4}' "$FIT"
check_screen "the methods table has the ets row" "^ $ETS +0\\.[0-9]{4}" "$FIT"
check_screen "ms has its paired ECE interval" '^ [^ ]*\+ms +0\.[0-9]{4} +[-+]0\.[0-9]{4} \[[-+]0\.[0-9]{4},[-+]0\.[0-9]{4}\]' "$FIT"
check_screen "ets has its paired ECE interval" "^ $ETS +0\\.[0-9]{4} +[-+]0\\.[0-9]{4} \\[[-+]0\\.[0-9]{4},[-+]0\\.[0-9]{4}\\]" "$FIT"
check_screen "ms's fitted lambda and mu are shown" '\+ms: ODIR lambda = [0-9.e-]+, mu = [0-9.e-]+ by inner CV'
keys :
check_screen ": gives the methods in the order chosen" '--recal ms,ets' 10
keys Escape

# ---- q closes the picker, not the dashboard; removing ms leaves ets's fit alone ----------------
keys t
check_screen "t opens the picker again, focus kept on ets" '^ +> \[x\] ets +ensemble temperature scaling +'"$TIME"
keys q
check_screen "q closes the picker" '^methods \(p panel' 10
check_not_screen "q in the picker does not quit" 'EXITED'
keys t j j j Enter                  # ets -> ms, Enter removes it
check_screen "Enter on ms removes it" '^ +> \[ \] ms +matrix scaling \(ODIR\) *$' 10
check_screen "ets keeps its fit (no refit after ms goes)" "^ +\\[x\\] ets +ensemble temperature scaling +$TIME *\$" 10
keys t
check_screen "t closes the picker too" '^methods \(p panel' 10
# the table without ms: its ets row, no ms row, no longer the stale table of both
without_ms() { screen_matches "^ $ETS +0\\.[0-9]{4} +[-+]" && ! screen_matches '\+ms +0\.|~stale'; }
if poll "$FIT" without_ms; then ok "the methods table has lost the ms row, kept ets"
else not_ok "the methods table has lost the ms row, kept ets" "$SCREEN"; fi

# ---- the help and 60x20 ---------------------------------------------------------------------------
keys '?'
check_screen "the help lists the picker key" 't T +methods: pick, fit, remove, fit times; T drops' 10
keys Escape
T resize-window -x 60 -y 20
keys t
check_screen "the picker at 60x20 lists the last method" '^ +\[ \] dir +Dirichlet calibration \(ODIR\)' 10
check_screen "the picker at 60x20 shows the fit time" "^ +\\[x\\] ets +ensemble temperature scaling +$TIME *\$"
check_screen "the picker at 60x20 keeps the longest title whole" '\[ \] irova +one-vs-rest isotonic regression'
if fits 60 20; then ok "the picker at 60x20: no line past the edge"; else not_ok "the picker at 60x20: no line past the edge" "$SCREEN"; fi
keys Escape q
check_screen "q quits" 'EXITED 0$' 30

done_testing
