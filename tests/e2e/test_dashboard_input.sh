#!/usr/bin/env bash
# End-to-end tests of the dashboard's input edges in tmux at 80x24: data on stdin with the keys
# from /dev/tty, a terminal on stdin refused, user text (file names) escaped on screen, the
# load-error screen's advice, loading flags and `:`, a terminal curses cannot drive (TERM), the
# selection prompt at its length limit, and a fatal signal leaving the terminal usable. Every wait polls for a state; LIVENESS only catches hangs.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SOCK_BASE="calscope-input-$$-$RANDOM"; N_SOCK=0; SOCK=$SOCK_BASE-0
kill_all() { local i; for i in $(seq 0 "$N_SOCK"); do tmux -L "$SOCK_BASE-$i" kill-server >/dev/null 2>&1; done; }
trap 'kill_all; rm -rf "$TMP"' EXIT
BIN=$(cd "$(dirname "$CALSCOPE")" && pwd)/$(basename "$CALSCOPE")
SAMPLE=$PWD/samples/digits_gnb.csv

# shell: a fresh 80x24 session (on a fresh server) running an interactive shell; commands are
# typed into it.
shell() {
    T kill-server >/dev/null 2>&1
    N_SOCK=$((N_SOCK + 1)); SOCK=$SOCK_BASE-$N_SOCK
    T new-session -d -x 80 -y 24 "env PS1='$ ' bash --norc --noprofile"
    wait_for '^\$ ' || true
}
type_line() { T send-keys -l "$1"; T send-keys Enter; }
# expect_message NAME WANT: the screen, without the shell's lines, is exactly WANT (one message)
expect_message() {
    local got
    got=$(printf '%s' "$SCREEN" | grep -v '^\$' | grep -v '^EXITED' | tr -d '\n')
    if [ "$got" = "$2" ]; then ok "$1"; else not_ok "$1" "got:  $got" "want: $2"; fi
}
check_not_screen() {
    if printf '%s' "$SCREEN" | grep -Eq -- "$2"; then not_ok "$1" "unexpected /$2/:" "$SCREEN"; else ok "$1"; fi
}

# ---- data from stdin, keys from /dev/tty ----
shell
type_line "cat '$SAMPLE' | '$BIN' -; echo EXITED \$?"
check_screen "stdin: the piped file is loaded and shown" ' - \[1/1\] .*ready'
T send-keys q
check_screen "stdin: q (read from /dev/tty) quits with status 0" 'EXITED 0$'

# ---- a terminal on stdin is refused ----
shell
type_line "'$BIN' -; echo EXITED \$?"
check_screen "stdin is a terminal: refused with status 2" 'EXITED 2$'
expect_message "stdin is a terminal: message verbatim" 'calscope: -: standard input is a terminal, not data; pipe a file in (cat FILE | calscope -) or name it'
type_line "'$BIN' - - </dev/null; echo EXITED \$?"
check_screen "stdin named twice: usage error" 'calscope: -: standard input can be read only once'

# ---- file names with control bytes are shown escaped ----
esc_name="$TMP/a$(printf '\033')[31mb.csv"
cp "$SAMPLE" "$esc_name"
shell
type_line "'$BIN' $TMP/a*b.csv $TMP/missing.csv; echo EXITED \$?"
check_screen "escaped file name in the status line" 'a\\x1b\[31mb\.csv \[1/2\]'
T send-keys f
check_screen "missing file: error in place" 'missing\.csv: cannot open: No such file or directory'
check_not_screen "missing file: no --skip-bad-rows advice" 'skip-bad-rows'
check_screen "missing file: says how to go on" '\(f switches file; q quits\)'
T send-keys q
check_screen "quit after an error screen" 'EXITED 0$'

# ---- a file with bad rows and good ones: the advice applies ----
printf 'label,p_0,p_1\n0,0.9,0.1\n1,0.2,0.3\n1,0.3,0.7\n' > "$TMP/bad_row.csv"
shell
type_line "'$BIN' $TMP/bad_row.csv; echo EXITED \$?"
check_screen "bad row: located error in place" 'bad_row\.csv:3:2: '
check_screen "bad row: --skip-bad-rows advice" '\(--skip-bad-rows loads the good rows; f switches file; q quits\)'
T send-keys q
check_screen "quit after a bad-row screen" 'EXITED 0$'

# ---- loading flags act in the dashboard and `:` repeats them (one flag table) ----
shell
type_line "'$BIN' --skip-bad-rows $TMP/bad_row.csv; echo EXITED \$?"
check_screen "--skip-bad-rows in the dashboard: the good rows load" 'bad_row\.csv \[1/1\].*ready'
T send-keys :
check_screen "':' repeats the loading flag" '--skip-bad-rows [^ ]*bad_row\.csv'
T send-keys Escape q
check_screen "quit after ':'" 'EXITED 0$'

# ---- a terminal curses cannot draw on is refused before curses starts, naming the report ----
shell
type_line "TERM=dumb '$BIN' '$SAMPLE'; echo EXITED \$?"
check_screen "TERM=dumb: refused with status 2" 'EXITED 2$'
expect_message "TERM=dumb: message verbatim, nothing else on screen" 'calscope: TERM=dumb: this terminal cannot move the cursor, so the dashboard cannot draw on it; set TERM to your terminal (e.g. TERM=xterm-256color) or use `calscope report` for headless output'
shell
type_line "TERM=no-such-term '$BIN' '$SAMPLE'; echo EXITED \$?"
check_screen "unknown TERM: refused with status 2" 'EXITED 2$'
expect_message "unknown TERM: message verbatim" 'calscope: TERM=no-such-term: unknown terminal type (no terminfo entry); set TERM to your terminal (e.g. TERM=xterm-256color) or use `calscope report` for headless output'
shell
type_line "env -u TERM '$BIN' '$SAMPLE'; echo EXITED \$?"
check_screen "TERM unset: refused with status 2" 'EXITED 2$'
expect_message "TERM unset: message verbatim" 'calscope: TERM is not set, so the dashboard cannot draw; set it to your terminal (e.g. TERM=xterm-256color) or use `calscope report` for headless output'

# ---- the selection prompt never cuts silently ----
shell
type_line "'$BIN' '$SAMPLE'; echo EXITED \$?"
check_screen "dashboard up" 'ready'
T send-keys /
long=$(printf 'conf > 0.1 and %.0s' $(seq 1 40))
T send-keys -l "$long"
check_screen "overlong selection: refused with a message" 'too long: at most [0-9]+ characters'
T send-keys Escape
T send-keys q
check_screen "quit after the prompt" 'EXITED 0$'

# ---- a selection typed while the file loads is checked as on a loaded file ----
# The load is held open deterministically: the file is a fifo whose writer (fd 7 of this
# script) stays open, with some rows written, until the checks are done.
SEL_WANT="selection: unexpected 'garbage': expected a condition on y, label, pred, conf, p\\[CLASS\\] or case"
mkfifo "$TMP/slow.csv"
shell
type_line "'$BIN' '$TMP/slow.csv'; echo EXITED \$?"
exec 7<>"$TMP/slow.csv"                      # read-write: never blocks, keeps the fifo open
head -n 200 "$SAMPLE" >&7
check_screen "fifo: the dashboard is loading" 'loading'
T send-keys /
T send-keys -l 'garbage (('
T send-keys Enter
check_joined() {
    if wait_joined "$2" 10; then ok "$1"; else not_ok "$1" "screen (joined) never matched /$2/:" "$SCREEN"; fi
}
check_joined "while loading: a malformed selection is refused with its message" "$SEL_WANT garbage \\(\\( \\^"
caret_line() { printf '%s\n' "$SCREEN" | grep -A1 -E '^  garbage \(\( *$' | tail -n +2; }
expect_match "... the expression under it, the caret at its first character" '^  \^ *$' "$(caret_line)"
check_not_screen "while loading: the selection is not taken" ' sel garbage'
check_screen "while loading: still loading" 'loading'
tail -n +201 "$SAMPLE" >&7
exec 7>&-                                    # the end of the file: the load finishes
check_screen "fifo: the load finishes" 'ready'
T send-keys /
T send-keys -l 'garbage (('
T send-keys Enter
check_joined "loaded: the same message" "$SEL_WANT garbage \\(\\( \\^"
expect_match "... the expression and caret as while loading" '^  \^ *$' "$(caret_line)"
T send-keys q
check_screen "quit after the selection" 'EXITED 0$'

# ---- a fatal signal restores the terminal ----
shell
type_line "'$BIN' '$SAMPLE'; echo EXITED \$?"
check_screen "dashboard up before the signal" 'ready'
pkill -TERM -f "^$BIN $SAMPLE\$" || pkill -TERM -f "$BIN '$SAMPLE'"
check_screen "SIGTERM: one line says the terminal was restored" 'calscope: SIGTERM; the terminal was restored'
check_screen "SIGTERM: re-raised (status 143)" 'EXITED 143$'
type_line "echo typed-and-echoed"
check_screen "terminal usable after the signal" '^typed-and-echoed'

done_testing
