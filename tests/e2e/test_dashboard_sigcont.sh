#!/usr/bin/env bash
# End-to-end test of a stop that does not come through the terminal: the dashboard runs as a job
# of an interactive bash in the pane, is stopped with `kill -STOP` from outside (no SIGTSTP for
# curses to leave its mode by; the shell takes the terminal back in cooked mode), then `fg` is
# typed into the pane. A key must then act at once, without Enter: on SIGCONT the dashboard sets
# its terminal mode again and repaints. Ctrl-Z then fg is checked too. Polls the screen and the
# process state; no check depends on elapsed time.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

tmux_servers sigcont
new_server
T new-session -d -x 80 -y 24 "env -i HOME=$TMP TERM=screen LANG=C.UTF-8 PS1='sh\$ ' PATH=$PATH bash --norc --noprofile -i"
wait_for '^sh\$ ' 30
keys "$CALSCOPE samples/digits_gnb.csv" Enter
check_screen "the dashboard runs in the shell's pane" 'ready *$' 60
shell=$(T display-message -p '#{pane_pid}')
pid=$(ps -o pid= --ppid "$shell" | tr -d ' ' | head -1)
state() { awk '{print $3}' "/proc/$pid/stat" 2>/dev/null; }
stopped() { [ "$(state)" = T ]; }
running() { [ "$(state)" != T ]; }

# ---- kill -STOP from outside, fg typed into the pane -------------------------------------------
kill -STOP "$pid"
if poll 30 stopped; then ok "kill -STOP stops it"; else not_ok "kill -STOP stops it" "state $(state)"; fi
check_screen "the shell takes the terminal back" 'Stopped' 30
keys fg Enter
if poll 30 running; then ok "fg continues it"; else not_ok "fg continues it" "state $(state)"; fi
check_screen "fg: the dashboard repaints its screen" '^\[1 Reliability\]' 30
keys 2                                   # no Enter: a key in the dashboard's own mode acts at once
check_screen "after kill -STOP and fg a key acts at once (no Enter)" '\[2 Top-k\]' 30
check_not_screen "the key was not echoed by a cooked terminal" '^2$'

# ---- Ctrl-Z and fg, as before ----------------------------------------------------------------
keys C-z
if poll 30 stopped; then ok "Ctrl-Z stops it"; else not_ok "Ctrl-Z stops it" "state $(state)"; fi
wait_for '^sh\$ ' 30
keys fg Enter
check_screen "Ctrl-Z, fg: the dashboard repaints" '\[2 Top-k\]' 30
keys 3
check_screen "Ctrl-Z, fg: a key acts at once" '\[3 Variance\]' 30

keys q
check_screen "q quits to the shell" 'sh\$ *$' 30
done_testing
