#!/usr/bin/env bash
# End-to-end tests of the Compare view's files panel (5) at 80x24: with more files than the
# diagrams and the table have room for, every file stays reachable: the diagrams name the files
# they do not draw ("+3 more (f F): ...") and the files' table scrolls with a "rows a-b of n"
# marker; with one good file and one that failed to load, the good one is the reference and
# the panel says there is nothing to compare it with (no "paired bootstrap..." that never
# comes). Polls the screen for states (lib.sh); no check depends on elapsed time.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

tmux_servers compare-files
start() {
    new_server
    T new-session -d -x 80 -y 24 "$CALSCOPE $*; echo EXITED \$?; sleep 86400"
    T set-option -g remain-on-exit on >/dev/null 2>&1
}

# six files of 400 digits each (the paired bootstrap of six is cheap at that size)
i=0
for f in gnb logreg ts rf gnb logreg; do
    n=$(printf "\\x$(printf %x $((97 + i)))")          # a b c d e f
    head -n 401 "samples/digits_$f.csv" >"$TMP/$n.csv"
    i=$((i + 1))
done

# ---- six files: the diagrams name the three they do not draw, the table scrolls ----------------
start "$TMP/a.csv" "$TMP/b.csv" "$TMP/c.csv" "$TMP/d.csv" "$TMP/e.csv" "$TMP/f.csv"
wait_for 'ready *$' 120
keys 5
check_screen "diagrams: the files not drawn are named with their count" '^\+3 more \(f F\): d\.csv, e\.csv, f\.csv' 60
check_screen "table: a marker says more rows are below" 'rows 1-[0-9]+ of [0-9]+, more below' 120
check_screen "table: the reference's row" '^a\.csv +[0-9.]+ .*\(reference\)'
check_not_screen "table: f.csv's row is below the window" '^f\.csv +[0-9.]+ '
keys NPage
check_screen "PgDn: f.csv's row comes into view" '^f\.csv +[0-9.]+ +[0-9.]+ +[0-9.]+ +[-+][0-9.]+ \[' 60
check_screen "PgDn: the marker says more above" 'rows [0-9]+-[0-9]+ of [0-9]+, more above'
check_screen "PgDn: the column header stays" '^file +ECE +Brier +NLL +-ref'
keys End
check_screen "End: the last line of the table (a verdict) with the marker" 'rows [0-9]+-([0-9]+) of \1, more above' 60
keys Home
check_screen "Home: the first rows again" 'rows 1-[0-9]+ of [0-9]+, more below' 60
check_screen "Home: a.csv's row" '^a\.csv +[0-9.]+ '
keys Down
check_screen "Down: one row on" 'rows 2-[0-9]+ of [0-9]+, more above and below' 60
# f brings a file not drawn into the diagrams
keys f f f
check_screen "f: d.csv's diagram is drawn, a.csv named as not drawn" '^\+3 more \(f F\): a\.csv, e\.csv, f\.csv' 60
check_screen "f: d.csv's diagram is titled, marked active" '> d\.csv'
keys q
check_screen "q quits with status 0" 'EXITED 0' 60

# ---- four files: the fourth is named under the diagrams, its row is in the table ----------------
start "$TMP/a.csv" "$TMP/b.csv" "$TMP/c.csv" "$TMP/d.csv"
wait_for 'ready *$' 120
keys 5
check_screen "four files: the fourth is named under the diagrams" '^\+1 more \(f F\): d\.csv' 60
check_screen "four files: the fourth file's row" '^d\.csv +[0-9.]+ +[0-9.]+ +[0-9.]+ +[-+][0-9.]+ \[' 120
keys q
check_screen "four files: q quits with status 0" 'EXITED 0' 60

# ---- one good file and one that failed to load: nothing pending, nothing to compare -----------
start samples/digits_gnb.csv samples/broken/nan.csv
wait_for 'ready *$' 120
keys 5
check_screen "failed partner: the good file is the reference" '^digits_gnb\.csv +[0-9.]+ +[0-9.]+ +[0-9.]+ \(reference\)' 60
check_screen "failed partner: the panel says there is nothing to compare it with" \
    'nothing to compare digits_gnb\.csv with: the other file failed to load'
check_screen "failed partner: the failed file's row gives its load error" "^nan\\.csv +samples/broken/nan\\.csv:[0-9]+:[0-9]+: NaN or infinite value 'nan' in\$"
check_screen "failed partner: the error ends on the next line, between words" "^column 'p_a'"
check_screen "failed partner: the status line says ready" 'ready *$'
check_not_screen "failed partner: no paired bootstrap is promised" 'paired bootstrap\.\.\.'
keys f
check_screen "failed partner active: the good file is still the reference" '^digits_gnb\.csv .*\(reference\)' 60
check_not_screen "failed partner active: no paired bootstrap is promised" 'paired bootstrap\.\.\.'
keys q
check_screen "failed partner: q quits with status 0" 'EXITED 0' 60

done_testing
