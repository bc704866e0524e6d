# Shared helpers for end-to-end tests. Source it; then call the checks; finish with `done_testing`.
# Each check prints "ok - NAME" or "not ok - NAME" plus diagnostics (tools/run-tests.sh counts them).
# $CALSCOPE is the binary under test (default build/calscope).
set -u
CALSCOPE=${CALSCOPE:-build/calscope}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
_fails=0

ok()     { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; shift; for l in "$@"; do echo "#   $l"; done; _fails=$((_fails + 1)); }

# run CMD...: runs it, capturing $OUT, $ERR and $RC.
run() { "$@" >"$TMP/out" 2>"$TMP/err"; RC=$?; OUT=$(cat "$TMP/out"); ERR=$(cat "$TMP/err"); }

# expect_rc NAME WANT CMD...
expect_rc() {
    local name=$1 want=$2; shift 2; run "$@"
    if [ "$RC" -eq "$want" ]; then ok "$name"; else not_ok "$name" "exit $RC, want $want" "stderr: ${ERR:0:400}"; fi
}
# expect_match NAME REGEX TEXT
expect_match() {
    if printf '%s' "$3" | grep -Eq -- "$2"; then ok "$1"; else not_ok "$1" "no match for /$2/ in:" "${3:0:600}"; fi
}
# expect_no_match NAME REGEX TEXT
expect_no_match() {
    if printf '%s' "$3" | grep -Eq -- "$2"; then not_ok "$1" "unexpected /$2/ in:" "${3:0:600}"; else ok "$1"; fi
}
# reference_output OUT CMD...: runs a reference (a Python tool whose output depends only on its
# arguments and the files they name) into OUT. Under tools/run-tests.sh, which runs every script
# once per build variant, the second variant reads the first one's output from
# $CALSCOPE_REF_CACHE instead of running it again: the key is the command and the contents of
# every argument that is a file (the tool itself included). Returns the command's status.
reference_output() {
    local out=$1; shift
    if [ -z "${CALSCOPE_REF_CACHE:-}" ] || [ ! -d "$CALSCOPE_REF_CACHE" ]; then "$@" >"$out"; return; fi
    local key a
    # files named by a relative path are hashed (the repository's tools and samples); an absolute
    # path (the interpreter, a per-script temporary file) is taken by its name: the cache lives
    # for one run of the suite
    key=$( { printf '%s\0' "$@"; for a in "$@"; do case $a in /*) ;; *) [ -f "$a" ] && cat -- "$a";; esac; done; } | sha256sum | cut -c1-32)
    if [ -f "$CALSCOPE_REF_CACHE/$key" ]; then cp "$CALSCOPE_REF_CACHE/$key" "$out"; return 0; fi
    "$@" >"$out" || return
    cp "$out" "$CALSCOPE_REF_CACHE/$key.$$" && mv "$CALSCOPE_REF_CACHE/$key.$$" "$CALSCOPE_REF_CACHE/$key"
}
# json_get EXPR  — evaluates a python expression on the parsed $OUT as `d`
json_get() { printf '%s' "$OUT" | /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# same_json NAME A.json B.json: two reports (--format json) equal in every field but "path" and
# the skipped rows' messages (a CSV's line numbers count its header), with an ECE: an array file
# against the CSV of the same numbers
same_json() {
    if /usr/bin/python3 - "$2" "$3" <<'PY'
import json, sys
def strip(x):
    if isinstance(x, dict): return {k: strip(v) for k, v in x.items() if k not in ('path', 'skipped')}
    if isinstance(x, list): return [strip(v) for v in x]
    return x
a, b = (strip(json.load(open(f))) for f in sys.argv[1:3])
sys.exit(0 if a == b and a['files'][0]['metrics']['ece'] is not None else 1)
PY
    then ok "$1"; else not_ok "$1" "$(diff "$2" "$3" | head -8)"; fi
}

# ---- terminal tests (tmux): the caller defines screen_text (prints the pane) ----
LIVENESS=60
# poll SECONDS TEST ARGS...: captures the screen into SCREEN until `TEST ARGS...` succeeds
# (returns 0), or returns 1 when it has not after LIVENESS seconds (or SECONDS, when larger: a
# per-call figure never shortens the wait, so no check can fail because the machine is busy).
poll() {
    local limit=$LIVENESS
    [ "${1:-0}" -gt "$limit" ] && limit=$1
    shift
    local end=$((SECONDS + limit))
    while :; do
        SCREEN=$(screen_text)
        "$@" && return 0
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.05
    done
}
screen_matches() { printf '%s' "$SCREEN" | grep -Eq -- "$1"; }
screen_lines() { [ "$(printf '%s\n' "$SCREEN" | grep -Ec -- "$1")" -ge "$2" ]; }
screen_joined() { printf '%s' "$SCREEN" | tr -s '\n ' '  ' | grep -Eq -- "$1"; }
# wait_for REGEX [SECONDS]: until the screen matches
wait_for() { poll "${2:-0}" screen_matches "$1"; }
# wait_lines REGEX N [SECONDS]: until N lines of the screen match (a table's rows may arrive in
# a later frame than its header)
wait_lines() { poll "${3:-0}" screen_lines "$1" "$2"; }
# wait_joined REGEX [SECONDS]: until the screen's lines joined by single spaces match (a message
# wrapped over several lines, whose last lines may arrive in a later frame)
wait_joined() { poll "${2:-0}" screen_joined "$1"; }
# check_screen NAME REGEX [SECONDS] (SECONDS as in wait_for)
check_screen() {
    if wait_for "$2" "${3:-10}"; then ok "$1"; else not_ok "$1" "screen never matched /$2/:" "$SCREEN"; fi
}
keys() { T send-keys "$@"; }
# check_not_screen NAME REGEX: the screen captured last (SCREEN) does not match
check_not_screen() {
    if printf '%s' "$SCREEN" | grep -Eq -- "$2"; then not_ok "$1" "unexpected /$2/:" "$SCREEN"; else ok "$1"; fi
}
# fits COLS LINES: every captured line is at most COLS columns, the pane at most LINES lines
fits() {
    printf '%s\n' "$SCREEN" | /usr/bin/python3 -c '
import sys
cols, rows = int(sys.argv[1]), int(sys.argv[2])
lines = sys.stdin.read().split("\n")
while lines and lines[-1] == "": lines.pop()
sys.exit(0 if len(lines) <= rows and all(len(l.rstrip()) <= cols for l in lines) else 1)' "$1" "$2"
}

# tmux_servers NAME: one tmux server per session (a fresh socket each time new_server is
# called; T talks to the current one), all killed at exit; UTF-8 locale for the glyphs.
tmux_servers() {
    SOCK_BASE="calscope-$1-$$-$RANDOM"; N_SOCK=0; SOCK=$SOCK_BASE-0
    T() { tmux -L "$SOCK" "$@"; }
    new_server() { T kill-server >/dev/null 2>&1; N_SOCK=$((N_SOCK + 1)); SOCK=$SOCK_BASE-$N_SOCK; }
    kill_all() { local i; for i in $(seq 0 "$N_SOCK"); do tmux -L "$SOCK_BASE-$i" kill-server >/dev/null 2>&1; done; }
    trap 'kill_all; rm -rf "$TMP"' EXIT
    export LANG=C.UTF-8 LC_ALL= LC_CTYPE=C.UTF-8
}

# cmdline: the command of the `:` overlay on SCREEN, its " \" lines joined. Prints nothing and
# fails until the overlay is whole: a frame is written top to bottom, so a capture can hold the
# command's first line and not yet its last; the command is whole when its last line has no " \"
# and the blank line and the closing rule below it are drawn.
cmdline() {
    printf '%s' "$SCREEN" | /usr/bin/python3 -c '
import sys
out, on, blank, cont = [], False, False, False
for r in sys.stdin.read().split("\n"):
    if "equivalent command line" in r: on = True; continue
    if not on: continue
    t = r.strip()
    if t.startswith("\u2500") or t.startswith("---"):
        if out and blank and not cont:
            print(" ".join(out)); sys.exit(0)
        break
    if not t:
        blank = bool(out)
        continue
    if blank: break
    cont = t.endswith(" \\")
    out.append(t[:-2] if cont else t)
sys.exit(1)'
}
# check_cmdline NAME [SECONDS]: polls until the `:` overlay holds a whole command (cmdline), which
# it leaves in CMD
have_cmdline() { CMD=$(cmdline); }
check_cmdline() {
    if poll "${2:-10}" have_cmdline; then ok "$1"; else CMD=; not_ok "$1" "no whole command line on the screen:" "$SCREEN"; fi
}
# The dashboard's tmux server ($SOCK, set by the script) and its screen, long lines joined;
# a script may redefine either. The locale the dashboard is checked in: UTF-8.
T() { tmux -L "$SOCK" "$@"; }
screen_text() { T capture-pane -p -J 2>/dev/null; }
export LANG=C.UTF-8 LC_ALL= LC_CTYPE=C.UTF-8
done_testing() { [ "$_fails" -eq 0 ]; exit $?; }
# unwrap PREFIX_RE: stdin with each line matching PREFIX_RE joined to the lines the report's
# 80-column wrap continued it on (indented deeper than it), one space between (names here are
# short enough to wrap between words)
unwrap() {
    python3 -c 'import re, sys
out, prefix = [], re.compile(sys.argv[1])
for l in sys.stdin.read().split("\n"):
    if out and out[-1][1] is not None and l.startswith(" " * (out[-1][1] + 2)) and l.strip():
        out[-1][0] += " " + l.strip(); continue
    m = prefix.match(l)
    out.append([l, len(l) - len(l.lstrip()) if m else None])
print("\n".join(l for l, _ in out))' "$1"
}

# big_csv FILE: 200,000 rows x 10 classes of seeded random probabilities (label,p_0..p_9), large
# enough that a metrics recompute spans many frames and the full lens has 100,000-odd bins
big_csv() {
    /usr/bin/python3 - "$1" <<'PY'
import sys, random
random.seed(3)
with open(sys.argv[1], "w") as f:
    f.write("label," + ",".join(f"p_{i}" for i in range(10)) + "\n")
    for _ in range(200000):
        w = [random.random() ** 3 for _ in range(10)]
        s = sum(w)
        f.write(f"{random.randrange(10)}," + ",".join(f"{x / s:.5f}" for x in w) + "\n")
PY
}
