#!/usr/bin/env bash
# End-to-end: what each ending signal leaves behind.
#  - `calscope reduce` takes HUP and QUIT as it takes INT and TERM: the run is cancelled, exit
#    130 with one message, and neither the output nor its temporary file is left;
#  - a temporary file left by a run killed outright (SIGKILL: no handler runs) is removed by the
#    next run into the same folder, named on stderr, when its process is gone and no process
#    holds its lock; a live process's file, a locked one and other names are left alone;
#  - the dashboard: Ctrl-C (SIGINT) leaves curses, prints one line and dies of SIGINT (status
#    130), the terminal usable; a file that shrinks while the dashboard loads it with helper
#    threads is an error on screen, not a bus error.
# Every wait polls for a state (a FIFO's open, a screen); LIVENESS only catches hangs.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmux_servers signals
PY=/usr/bin/python3
BIN=$(cd "$(dirname "$CALSCOPE")" && pwd)/$(basename "$CALSCOPE")
SEG=$PWD/samples/seg/softmax

expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "want: $2" "got:  $3"; fi; }

{ echo "case,probs,labels"; for c in 000 001 002; do
    echo "case$c,$SEG/nifti/case$c.nii.gz,$SEG/labels/case$c.nii.gz"; done; } >"$TMP/m.csv"

# ---- reduce: HUP and QUIT cancel like INT and TERM ------------------------------------------------
# The manifest is a FIFO: once the writer's open returns, calscope is reading it (its handlers are
# installed), so the signal arrives during the run whatever the machine's speed.
for sig in HUP QUIT INT TERM; do
    out=$TMP/$sig/s.csv
    mkdir -p "$TMP/$sig"
    mkfifo "$TMP/$sig/m.fifo"
    "$CALSCOPE" reduce --label-values 0,1,2,4 -o "$out" "$TMP/$sig/m.fifo" 2>"$TMP/$sig/err" &
    pid=$!
    timeout 60 $PY -c "
import os, signal, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
os.kill(int(sys.argv[2]), getattr(signal, 'SIG' + sys.argv[4]))
os.write(fd, open(sys.argv[3], 'rb').read())
os.close(fd)" "$TMP/$sig/m.fifo" "$pid" "$TMP/m.csv" "$sig"
    wait "$pid"; rc=$?
    expect_eq "reduce, SIG$sig: exit 130 and one message" "130 calscope: interrupted; nothing written" "$rc $(cat "$TMP/$sig/err")"
    expect_eq "reduce, SIG$sig: no output file, no temporary file" "" "$(ls -A "$TMP/$sig" | grep -v -e '^m\.fifo$' -e '^err$')"
done

# what reduce says beside its closing summary (that line is test_reduce's)
said() { printf '%s\n' "$1" | grep -v '^calscope: reduced [0-9,]* cases, [0-9,]* voxels in ' || true; }

# ---- reduce: stale temporary files ------------------------------------------------------------------
O=$TMP/outdir
mkdir -p "$O"
sh -c 'exit 0' & dead=$!; wait "$dead"         # a PID whose process is gone
while kill -0 "$dead" 2>/dev/null; do sh -c 'exit 0' & dead=$!; wait "$dead"; done
printf 'partial' >"$O/.calscope-tmp-$dead-s.csv"
printf 'partial' >"$O/.calscope-tmp-$dead-other.csv.gz"
printf 'live' >"$O/.calscope-tmp-$$-s.csv"               # this shell: alive
printf 'locked' >"$O/.calscope-tmp-$dead-locked.csv"     # written by a run elsewhere (its lock)
printf 'not ours' >"$O/.calscope-tmp-x$dead-s.csv"
printf 'not ours' >"$O/calscope-tmp-$dead-s.csv"
exec {lockfd}<>"$O/.calscope-tmp-$dead-locked.csv"
flock -x "$lockfd"
run "$CALSCOPE" reduce --label-values 0,1,2,4 -o "$O/s.csv" "$TMP/m.csv"
exec {lockfd}>&-
expect_eq "stale temporary files: the run succeeds" 0 "$RC"
expect_eq "stale temporary files: one line each, naming the file and its process" \
    "calscope: removed $O/.calscope-tmp-$dead-other.csv.gz: a temporary file left by process $dead, which is gone
calscope: removed $O/.calscope-tmp-$dead-s.csv: a temporary file left by process $dead, which is gone" \
    "$(said "$ERR" | sort)"
expect_eq "stale temporary files: removed; a live process's, a locked one and other names kept" \
    ".calscope-tmp-$$-s.csv .calscope-tmp-$dead-locked.csv .calscope-tmp-x$dead-s.csv calscope-tmp-$dead-s.csv s.csv" \
    "$(ls -A "$O" | sort | tr '\n' ' ' | sed 's/ $//')"
# the lock released (that run ended without finishing), its file goes at the next run
run "$CALSCOPE" reduce --label-values 0,1,2,4 -o "$O/s.csv" "$TMP/m.csv"
expect_eq "stale temporary files: the file whose lock was released goes next" \
    "0 calscope: removed $O/.calscope-tmp-$dead-locked.csv: a temporary file left by process $dead, which is gone" "$RC $(said "$ERR")"
run "$CALSCOPE" reduce --label-values 0,1,2,4 -o "$O/s.csv" "$TMP/m.csv"
expect_eq "stale temporary files: then nothing is left to say" "0 " "$RC $(said "$ERR")"
# -o - (standard output) has no folder to clean
printf 'partial' >"$O/.calscope-tmp-$dead-s.csv"
(cd "$O" && "$BIN" reduce --label-values 0,1,2,4 -o - "$TMP/m.csv" >/dev/null 2>"$TMP/stdout.err")
expect_eq "-o -: the current folder's temporary files are not touched" "0 " "$? $(said "$(cat "$TMP/stdout.err")")"
expect_eq "-o -: the file is still there" partial "$(cat "$O/.calscope-tmp-$dead-s.csv")"

# ---- the dashboard: Ctrl-C ----------------------------------------------------------------------------
shell() {
    new_server
    T new-session -d -x 80 -y 24 "env PS1='$ ' bash --norc --noprofile"
    wait_for '^\$ ' || true
}
type_line() { T send-keys -l "$1"; T send-keys Enter; }
SAMPLE=$PWD/samples/digits_gnb.csv
shell
type_line "'$BIN' '$SAMPLE'"
check_screen "dashboard up before Ctrl-C" 'ready'
T send-keys C-c
check_screen "SIGINT: one line says the terminal was restored" 'calscope: SIGINT; the terminal was restored$'
# bash stops a command list whose command died of SIGINT: the status is asked for afterwards
type_line 'echo EXITED $?'
check_screen "SIGINT: the dashboard died of SIGINT (status 130)" '^EXITED 130$'
type_line "echo typed-and-echoed"
check_screen "terminal usable after Ctrl-C" '^typed-and-echoed'

# ---- the dashboard: a file that shrinks while it loads, two loader threads ----------------------------
# 2 MB, shrunk from 70 % to 65 %: past the first chunk, so only the helper thread faults
$PY - "$TMP/big.csv" <<'EOF'
import sys, numpy as np
rng = np.random.default_rng(6)
p = rng.dirichlet(np.full(4, 0.5), size=60000)
with open(sys.argv[1], "w") as f:
    f.write("label,p_0,p_1,p_2,p_3\n")
    f.writelines(f"{i % 4}," + ",".join(f"{v:.7f}" for v in q) + "\n" for i, q in enumerate(p))
EOF
size=$(stat -c %s "$TMP/big.csv")
at=$((size * 70 / 100)) to=$((size * 65 / 100))
shell
type_line "CALSCOPE_LOADER_THREADS=2 CALSCOPE_TEST_SHRINK=$at,$to '$BIN' '$TMP/big.csv'; echo EXITED \$?"
check_screen "dashboard: a file that shrank while loading is an error on screen" 'big\.csv: file changed while loading'
expect_eq "dashboard: the file was shrunk mid-load" "$to" "$(stat -c %s "$TMP/big.csv")"
T send-keys q
check_screen "dashboard: quits normally after the error (status 0)" '^EXITED 0$'
check_not() { if printf '%s' "$SCREEN" | grep -Eq -- "$2"; then not_ok "$1" "unexpected /$2/:" "$SCREEN"; else ok "$1"; fi; }
check_not "dashboard: no bus error" 'SIGBUS|Bus error'

done_testing
