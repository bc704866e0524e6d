#!/usr/bin/env bash
# End-to-end: a file that shrinks while it loads is refused with "FILE: file changed while
# loading" (exit 3) on every loader path and thread, never a bus error. The loader maps a regular
# file; touching a page past the new end raises SIGBUS in whichever thread touches it, and the
# loader's guard turns that into zeros and the refusal, but only in a thread that does not block
# SIGBUS (calscope/thread.h).
#
# No clock decides when the file shrinks: CALSCOPE_TEST_SHRINK=AT,TO makes the first reader that
# reaches byte AT of the mapped file truncate it to TO bytes, so every run shrinks mid-load, at a
# place the test chooses, and the file's size afterwards (TO) shows that the shrink happened.
# The readers call the hook about once a MiB, so AT stays a MiB or more short of the end. With
# two or three threads, the fast path's first chunk (the calling thread's) ends before 55 % of
# the file: a shrink to 60 % or more faults only in helper threads, the threads whose mask once
# blocked SIGBUS. Shrinks into the first chunk race the threads (any may fault first). Paths: the fast path summing rows as it reads (plain report), keeping the rows (a lens that
# reads them), with a text column (count pass, then parse), the libcsv path chosen by a quote
# and by CALSCOPE_LOADER=csv, a gzip file, and a statistics file (report and reduce --merge);
# the fast path with its default threads, one, two and three (CALSCOPE_LOADER_THREADS).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PY=/usr/bin/python3

expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "want: $2" "got:  $3"; fi; }

# ---- the files: 100,000 rows x 10 classes (about 9 MB: over the 4 MiB from which the fast path
# takes every CPU) ----
"$PY" - "$TMP" <<'EOF'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(30)
p = rng.dirichlet(np.full(10, 0.3), size=100000)
y = np.array([rng.choice(10, p=q) for q in p[:2000]] * 50)
rows = [f"{y[i]}," + ",".join(f"{v:.7f}" for v in p[i]) for i in range(len(p))]
head = "label," + ",".join(f"p_{j}" for j in range(10))
with open(f"{d}/fast.csv", "w") as f: f.write(head + "\n" + "\n".join(rows) + "\n")
with open(f"{d}/quoted.csv", "w") as f: f.write('"label"' + head[5:] + "\n" + "\n".join(rows) + "\n")
with open(f"{d}/text.csv", "w") as f:
    f.write("label,note," + head[6:] + "\n")
    f.write("\n".join(r.split(",", 1)[0] + ",x," + r.split(",", 1)[1] for r in rows) + "\n")
EOF
gzip -1 -c "$TMP/fast.csv" >"$TMP/fast.csv.gz"
# a statistics file of 12 cases (the softmax sample three times over under other case names),
# fine 100000: some 3.4 MB of records, which the reader splits over two threads
SEG=$PWD/samples/seg/softmax
{ echo "case,probs,labels"; for r in a b c d; do for c in 000 001 002; do
    echo "$r$c,$SEG/nifti/case$c.nii.gz,$SEG/labels/case$c.nii.gz"; done; done; } >"$TMP/man.csv"
run "$CALSCOPE" reduce --label-values 0,1,2,4 --fine 100000 -o "$TMP/stats.csv" "$TMP/man.csv"
expect_match "the statistics file is made" '^0 calscope: reduced 12 cases, 26,880 voxels in [0-9.]+ s$' "$RC $ERR"

# the unchanged files load (the refusals below come from the shrink, not from the data)
for f in fast quoted text; do
    run "$CALSCOPE" report "$TMP/$f.csv"
    expect_eq "$f.csv unchanged: loads (exit 0)" 0 "$RC"
done
run "$CALSCOPE" report "$TMP/fast.csv.gz"
expect_eq "fast.csv.gz unchanged: loads (exit 0)" 0 "$RC"
run "$CALSCOPE" report --bins 10 "$TMP/stats.csv"
expect_eq "stats.csv unchanged: loads (exit 0)" 0 "$RC"

# shrink NAME SRC [ENV=VALUE...] -- CMD...: for each place (AT%, TO% of the file's size), a fresh
# copy of SRC shrunk from AT to TO while CMD loads it (the word FILE in CMD is the copy); every
# run must be refused with the message and exit 3, and must have shrunk (the size is TO). One
# check per NAME, listing the runs that failed.
PLACES="3:1 25:10 45:40 60:1 65:60 70:65 80:75 88:85"
shrink() {
    local name=$1 src=$2; shift 2
    local envs=() cmd=() a
    while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
    local size; size=$(stat -c %s "$src")
    local ext=${src##*/}; ext=${ext#*.}
    local copy=$TMP/shrunk.$ext bad=() runs=0
    for place in $PLACES; do
        local at=$((size * ${place%:*} / 100)) to=$((size * ${place#*:} / 100))
        cp "$src" "$copy"
        cmd=(); for a in "$@"; do [ "$a" = FILE ] && cmd+=("$copy") || cmd+=("$a"); done
        run env "${envs[@]}" CALSCOPE_TEST_SHRINK="$at,$to" "${cmd[@]}"
        runs=$((runs + 1))
        local got_size; got_size=$(stat -c %s "$copy")
        if [ "$RC" != 3 ] || [ "$ERR" != "calscope: $copy: file changed while loading" ] || [ "$got_size" != "$to" ]; then
            bad+=("at $at to $to: exit $RC, size $got_size, stderr: ${ERR:0:200}")
        fi
    done
    if [ ${#bad[@]} -eq 0 ]; then ok "$name: $runs shrinks mid-load, each refused (exit 3)"
    else not_ok "$name: ${#bad[@]} of $runs runs not refused as a changed file" "${bad[@]}"; fi
}

for th in default 1 2 3; do
    envs=(); [ "$th" = default ] || envs=(CALSCOPE_LOADER_THREADS="$th")
    shrink "fast path, rows summed as read, threads $th" "$TMP/fast.csv" "${envs[@]}" -- "$CALSCOPE" report FILE
    shrink "fast path, rows kept, threads $th" "$TMP/fast.csv" "${envs[@]}" -- "$CALSCOPE" report --lens classwise FILE
    shrink "fast path, a text column, threads $th" "$TMP/text.csv" "${envs[@]}" -- "$CALSCOPE" report FILE
done
shrink "libcsv path (a quoted field)" "$TMP/quoted.csv" -- "$CALSCOPE" report FILE
shrink "libcsv path (CALSCOPE_LOADER=csv)" "$TMP/fast.csv" CALSCOPE_LOADER=csv -- "$CALSCOPE" report FILE
shrink "gzip file" "$TMP/fast.csv.gz" -- "$CALSCOPE" report FILE
shrink "statistics file: report" "$TMP/stats.csv" -- "$CALSCOPE" report --bins 10 FILE
shrink "statistics file: reduce --merge" "$TMP/stats.csv" -- "$CALSCOPE" reduce --merge -o "$TMP/merged.csv" FILE
expect_eq "reduce --merge of a changed file: no output" "" "$(ls "$TMP" | grep -e merged -e calscope-tmp)"

# ---- the rule itself: no thread is started but through cs_helper_start, which sets the mask ----
others=$(grep -rn 'pthread_create\|pthread_sigmask\|sigprocmask' src | grep -v '^src/engine/thread\.c:')
expect_eq "every thread starts through cs_helper_start (no other pthread_create or mask change in src/)" "" "$others"

done_testing
