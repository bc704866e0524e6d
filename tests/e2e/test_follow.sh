#!/bin/bash
# calscope report --follow DIR --format ndjson: one JSON line per file, each the report's own
# "files" entry plus "seq", in natural order; errors as lines; --idle-exit, --max-files,
# --fail-fast, SIGINT/SIGTERM; files renamed in, written in place in pieces (never half), an .npy
# written in two parts; 1,000 small files. No check depends on elapsed time: files meant to be
# complete are renamed in or dated in the past (touch -d), and a background follow is waited
# for by polling its output.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

# old FILE...: dated an hour ago, so a --settle of a second or of half an hour has passed
old() { touch -d '1 hour ago' "$@"; }
# lines FILE: its line count
lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }
# wait_out FILE N: until FILE has N lines (or 60 s go by: liveness, not a timing claim)
wait_out() {
    local end=$((SECONDS + 60))
    while [ "$(lines "$1")" -lt "$2" ]; do [ "$SECONDS" -lt "$end" ] || return 1; sleep 0.05; done
}

# stop_and_wait SIGNAL PID: sends it and waits (60 s liveness) for the process to end; STATUS is
# its exit status, or "alive" when it did not end (then it is killed: the check fails, not hangs)
stop_and_wait() {
    kill -"$1" "$2"
    local end=$((SECONDS + 60))
    while kill -0 "$2" 2>/dev/null; do
        if [ "$SECONDS" -ge "$end" ]; then kill -KILL "$2"; wait "$2"; STATUS=alive; return; fi
        sleep 0.05
    done
    wait "$2"
    STATUS=$?
}
expect_status() { if [ "$STATUS" = "$2" ]; then ok "$1"; else not_ok "$1" "status $STATUS, want $2"; fi; }

# ---- the files already there: order, seq, each line the report's own entry ----------------
D=$TMP/run
mkdir -p "$D"
cp samples/digits_logreg.csv "$D/epoch_1.csv"
cp samples/digits_gnb.csv "$D/epoch_2.csv"
cp samples/digits_ts.csv "$D/epoch_10.csv"
printf 'label,p_0,p_1\n0,0.5\n' >"$D/epoch_3.csv"          # a broken file: a line with its error
cp samples/iris_gnb.csv "$D/notes.txt"                      # not a prediction file
old "$D"/*
run "$CALSCOPE" report --follow "$D" --format ndjson --idle-exit 0.2
expect_rc "idle-exit ends with status 0" 0 "$CALSCOPE" report --follow "$D" --format ndjson --idle-exit 0.2
printf '%s\n' "$OUT" >"$TMP/nd"
if [ "$(lines "$TMP/nd")" -eq 4 ]; then ok "one line per file (4)"; else not_ok "one line per file" "$OUT"; fi
expect_match "the closing line: files and the best epoch by ECE" "^calscope: --follow: 4 files; best ece 0.00723 at $D/epoch_10.csv$" "$ERR"
expect_match "the broken file's message on stderr" "calscope: $D/epoch_3.csv:2:3: ragged row: 2 fields, expected 3" "$ERR"
for f in epoch_1 epoch_2 epoch_3 epoch_10; do
    "$CALSCOPE" report --format json "$D/$f.csv" >"$TMP/$f.json" 2>/dev/null
done
if $PY - "$TMP/nd" "$TMP" "$D" <<'EOF'
import json, sys
nd, tmp, d = sys.argv[1:]
lines = [json.loads(l) for l in open(nd)]
names = ["epoch_1", "epoch_2", "epoch_3", "epoch_10"]
assert [l["seq"] for l in lines] == [0, 1, 2, 3], [l["seq"] for l in lines]
assert [l["path"] for l in lines] == [f"{d}/{n}.csv" for n in names], [l["path"] for l in lines]
for l, n in zip(lines, names):
    rep = json.load(open(f"{tmp}/{n}.json"))
    want = rep["files"][0] if rep["files"] else rep["errors"][0]
    got = dict(l)
    del got["seq"]
    assert got == want, (n, got, want)
    assert list(l)[0] == "seq"
assert lines[2] == {"seq": 2, "path": f"{d}/epoch_3.csv", "status": 3,
                    "message": f"{d}/epoch_3.csv:2:3: ragged row: 2 fields, expected 3"}, lines[2]
EOF
then ok "each line equals the report's files (or errors) entry, seq 0..3, natural order"
else not_ok "each line equals the report's entry" "$OUT"; fi

# the same numbers under settings: --ci (intervals) and --lens
run "$CALSCOPE" report --follow "$D/epoch_1*.csv" --format ndjson --max-files 2 --ci 20 --seed 3 --lens classwise
"$CALSCOPE" report --format json --ci 20 --seed 3 --lens classwise "$D/epoch_10.csv" >"$TMP/ci.json"
if printf '%s\n' "$OUT" | $PY -c "
import json, sys
ls = [json.loads(l) for l in sys.stdin]
assert [l['path'].rsplit('/', 1)[1] for l in ls] == ['epoch_1.csv', 'epoch_10.csv'], ls
want = json.load(open('$TMP/ci.json'))['files'][0]
got = dict(ls[1]); del got['seq']
assert got == want
assert 'ece_ci' in got['metrics']
"; then ok "a glob, --ci and --lens: the report's entry"; else not_ok "glob --ci --lens" "$OUT" "$ERR"; fi

# ---- --max-files, --order mtime, --fail-fast ------------------------------------------------
run "$CALSCOPE" report --follow "$D" --format ndjson --max-files 2
if [ "$RC" -eq 0 ] && [ "$(printf '%s\n' "$OUT" | wc -l)" -eq 2 ]; then ok "--max-files 2: two lines, status 0"
else not_ok "--max-files 2" "rc $RC" "$OUT"; fi
touch -d '3 hours ago' "$D/epoch_10.csv"
touch -d '2 hours ago' "$D/epoch_2.csv"
run "$CALSCOPE" report --follow "$D" --format ndjson --order mtime --max-files 2
expect_match "--order mtime: the oldest first" '^\{"seq": 0, "path": "[^"]*/epoch_10.csv".*
\{"seq": 1, "path": "[^"]*/epoch_2.csv"' "$OUT"
old "$D"/*
# epoch_1 (logreg, ECE 0.0145) passes ece<=0.05; epoch_2 (gnb, ECE 0.137) fails it
run "$CALSCOPE" report --follow "$D" --format ndjson --check 'ece<=0.05' --fail-fast --idle-exit 5
if [ "$RC" -eq 1 ] && [ "$(printf '%s\n' "$OUT" | wc -l)" -eq 2 ]; then ok "--fail-fast: status 1 after the first failing file's line"
else not_ok "--fail-fast" "rc $RC" "$OUT" "$ERR"; fi
expect_match "--fail-fast: the check's message" "calscope: check failed: $D/epoch_2.csv: ece = 0.136953 \(want ece<=0.05\)" "$ERR"
# without --fail-fast every file is reported and the status says a check failed; the best epoch
# is by the first check's metric
run "$CALSCOPE" report --follow "$D" --format ndjson --check 'accuracy>=0.9' --check 'ece<=0.05' --idle-exit 0.1
expect_match "the closing line: the best epoch by the first check's metric" "^calscope: --follow: 4 files; best accuracy 0.9688 at $D/epoch_1.csv$" "$ERR"
if [ "$RC" -eq 1 ] && [ "$(printf '%s\n' "$OUT" | wc -l)" -eq 4 ]; then ok "--check without --fail-fast: all 4 lines, status 1"
else not_ok "--check without --fail-fast" "rc $RC" "$OUT"; fi

# ---- live: renamed in, written in place in pieces, an .npy in two parts, a broken file ------
L=$TMP/live
mkdir -p "$L"
$PY - "$L" <<'EOF'
import numpy as np, sys
rng = np.random.default_rng(5)
p = rng.dirichlet(np.ones(4), size=300)
y = rng.integers(0, 4, size=300)
np.save(f"{sys.argv[1]}/../probs.npy", p)
np.save(f"{sys.argv[1]}/labels.npy", y)            # in the folder: never a prediction file
EOF
cp samples/iris_gnb.csv "$L/e0.csv"
old "$L/labels.npy" "$L/e0.csv"
"$CALSCOPE" report --follow "$L" --format ndjson --settle 1800 --labels "$L/labels.npy" >"$TMP/live.nd" 2>"$TMP/live.err" &
PID=$!
# 0. the file already there: its line says the follow is watching (a file renamed in before
#    would be a file already there, not yet settled)
wait_out "$TMP/live.nd" 1 && ok "the file already there first" || not_ok "file already there" "$(cat "$TMP/live.err")"
# 1. renamed in: at once, whatever --settle
cp samples/digits_logreg.csv "$L/.tmp1" && mv "$L/.tmp1" "$L/e1.csv"
wait_out "$TMP/live.nd" 2 && ok "a renamed-in file is reported at once" || not_ok "renamed-in file" "$(cat "$TMP/live.err")"
# 2. written in place in pieces, each ending with a newline: never reported until it has not
#    changed for --settle (here: dated back past it once whole)
head -n 600 samples/digits_gnb.csv >"$L/e2.csv"
tail -n +601 samples/digits_gnb.csv | head -n 600 >>"$L/e2.csv"
# 3. an .npy in two parts: its header's size decides
head -c 2000 "$TMP/probs.npy" >"$L/e3.npy"
# 4. a broken file, renamed in: a line with its error, and the run goes on
printf 'label,p_0\n' >"$L/.tmp4" && mv "$L/.tmp4" "$L/e4.csv"
wait_out "$TMP/live.nd" 3 && ok "the broken file's line" || not_ok "broken file line" "$(cat "$TMP/live.nd")"
tail -c +2001 "$TMP/probs.npy" >>"$L/e3.npy"
wait_out "$TMP/live.nd" 4 && ok "the .npy once whole" || not_ok ".npy whole" "$(cat "$TMP/live.nd")"
tail -n +1201 samples/digits_gnb.csv >>"$L/e2.csv"
touch -d '1 hour ago' "$L/e2.csv"
wait_out "$TMP/live.nd" 5 && ok "the CSV written in place, once settled" || not_ok "CSV settled" "$(cat "$TMP/live.nd")"
stop_and_wait TERM $PID
expect_status "SIGTERM: status 0" 0
"$CALSCOPE" report --format json "$L/e2.csv" >"$TMP/e2.json"
"$CALSCOPE" report --format json --labels "$L/labels.npy" "$L/e3.npy" >"$TMP/e3.json"
if $PY - "$TMP/live.nd" "$TMP" "$L" <<'EOF'
import json, sys
nd, tmp, d = sys.argv[1:]
ls = [json.loads(l) for l in open(nd)]
assert [l["path"].rsplit("/", 1)[1] for l in ls] == ["e0.csv", "e1.csv", "e4.csv", "e3.npy", "e2.csv"], ls
assert [l["seq"] for l in ls] == [0, 1, 2, 3, 4]
assert ls[2]["status"] == 3 and "e4.csv" in ls[2]["message"], ls[2]
for i, name in ((3, "e3"), (4, "e2")):
    want = json.load(open(f"{tmp}/{name}.json"))["files"][0]
    got = dict(ls[i]); del got["seq"]
    assert got == want, name
assert ls[4]["rows"] == 1797 and ls[3]["rows"] == 300     # never half a file
EOF
then ok "live: order of arrival, whole files only, each the report's entry"
else not_ok "live lines" "$(cat "$TMP/live.nd")" "$(cat "$TMP/live.err")"; fi

# ---- a file that changes while it loads is read again, never reported half-read ------------
# CALSCOPE_TEST_SHRINK=AT,TO: the loader's first read past byte AT truncates the file to TO bytes
# (a line end), so the first load is refused ("file changed while loading") at a place the test
# chooses; the follow takes the file again once complete, and the second load (shorter than AT)
# reads the TO bytes whole.
S=$TMP/shrink
mkdir -p "$S"
big_csv "$S/e1.csv"
old "$S/e1.csv"
read -r AT TO KEEP < <($PY - "$S/e1.csv" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
to = data.index(b"\n", len(data) // 4) + 1
print(len(data) // 2, to, data[:to].count(b"\n") - 1)
EOF
)
run env CALSCOPE_TEST_SHRINK="$AT,$TO" "$CALSCOPE" report --follow "$S" --format ndjson --settle 0 --max-files 1 --lens classwise
if [ "$RC" -eq 0 ] && [ "$(stat -c %s "$S/e1.csv")" -eq "$TO" ] && printf '%s\n' "$OUT" | $PY -c "
import json, sys
ls = [json.loads(l) for l in sys.stdin]
assert len(ls) == 1 and ls[0]['seq'] == 0 and ls[0]['rows'] == $KEEP, ls[0].get('rows')
"; then ok "changed while loading: read again, one line of the whole file ($KEEP rows)"
else not_ok "changed while loading: read again" "rc $RC" "${OUT:0:300}" "$ERR"; fi
expect_match "the refused load is said on stderr" "file changed while loading" "$ERR"

# ---- SIGINT while waiting: status 0 after the lines so far ------------------------------------
"$CALSCOPE" report --follow "$D" --format ndjson >"$TMP/int.nd" 2>"$TMP/int.err" &
PID=$!
wait_out "$TMP/int.nd" 4
stop_and_wait INT $PID
expect_status "SIGINT: status 0" 0
if [ "$(lines "$TMP/int.nd")" -eq 4 ]; then ok "SIGINT: the 4 lines so far"; else not_ok "SIGINT lines" "$(cat "$TMP/int.nd")"; fi

# ---- an incomplete file when --idle-exit ends the run: said --------------------------------------
I=$TMP/inc
mkdir -p "$I"
printf 'label,p_0,p_1\n0,0.5,0.5' >"$I/e1.csv"
old "$I/e1.csv"
run "$CALSCOPE" report --follow "$I" --format ndjson --idle-exit 0.1
expect_match "an incomplete file is named, not reported" "^calscope: $I/e1.csv: not complete when the follow ended; not reported$" "$ERR"
if [ -z "$OUT" ] && [ "$RC" -eq 0 ]; then ok "no line for it, status 0"; else not_ok "incomplete: no line" "$OUT"; fi

# ---- no inotify (the hook stands for a file system without it): polling, said ------------
run env CALSCOPE_TEST_NO_INOTIFY=1 "$CALSCOPE" report --follow "$D" --format ndjson --idle-exit 0.1
expect_match "no inotify: said" "^calscope: --follow: no inotify here \(Function not implemented\): the folder is listed every 0.25 s$" "$ERR"
if [ "$(printf '%s\n' "$OUT" | wc -l)" -eq 4 ]; then ok "polling: the same 4 lines"; else not_ok "polling lines" "$OUT"; fi
run env CALSCOPE_FOLLOW_POLL=1 "$CALSCOPE" report --follow "$D" --format ndjson --idle-exit 0.1
expect_no_match "asked to poll: nothing said" "inotify" "$ERR"

# ---- 1,000 small files ----------------------------------------------------------------------
M=$TMP/many
mkdir -p "$M"
$PY - "$M" <<'EOF'
import sys
for i in range(1, 1001):
    with open(f"{sys.argv[1]}/epoch_{i}.csv", "w") as f:
        f.write("label,p_0,p_1\n" + "".join(f"{(i + r) % 2},{0.1 + 0.8 * ((i * r) % 7) / 6:.4f},{0.9 - 0.8 * ((i * r) % 7) / 6:.4f}\n" for r in range(20)))
EOF
old "$M"/*
run "$CALSCOPE" report --follow "$M" --format ndjson --idle-exit 0.1
if printf '%s\n' "$OUT" | $PY -c "
import json, sys
ls = [json.loads(l) for l in sys.stdin]
assert len(ls) == 1000, len(ls)
assert [l['seq'] for l in ls] == list(range(1000))
assert [l['path'].rsplit('/', 1)[1] for l in ls] == [f'epoch_{i}.csv' for i in range(1, 1001)]
assert all(l['rows'] == 20 for l in ls)
"; then ok "1,000 files: 1,000 lines in natural order"; else not_ok "1,000 files" "${ERR:0:300}"; fi
"$CALSCOPE" report --format json "$M/epoch_737.csv" >"$TMP/737.json"
if printf '%s\n' "$OUT" | sed -n 737p | $PY -c "
import json, sys
l = json.loads(sys.stdin.read()); del l['seq']
assert l == json.load(open('$TMP/737.json'))['files'][0]
"; then ok "1,000 files: line 737 is epoch_737's entry"; else not_ok "line 737"; fi

# ---- the folder removed under a running follow: an input error, said ------------------------
for how in inotify poll; do
    G=$TMP/gone_$how
    mkdir -p "$G"
    cp samples/iris_gnb.csv "$G/e1.csv"
    old "$G/e1.csv"
    envs=(); [ $how = poll ] && envs=(CALSCOPE_FOLLOW_POLL=1)
    # one output per pass, emptied before the start: the previous pass's line must not be
    # mistaken for this one's before the child's redirection truncates the file
    : >"$TMP/gone_$how.nd"
    env "${envs[@]}" "$CALSCOPE" report --follow "$G" --format ndjson >"$TMP/gone_$how.nd" 2>"$TMP/gone.err" &
    PID=$!
    wait_out "$TMP/gone_$how.nd" 1
    rm -rf "$G"
    end=$((SECONDS + 60))
    while kill -0 $PID 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.05; done
    kill -0 $PID 2>/dev/null && kill -KILL $PID
    wait $PID
    STATUS=$?
    expect_status "$how: the folder removed: status 3" 3
    expect_match "$how: the folder removed: message" "^calscope: $G: cannot read the folder: No such file or directory$" "$(head -1 "$TMP/gone.err")"
done

# ---- usage and folder errors -------------------------------------------------------------------
expect_rc "a missing folder: status 2" 2 "$CALSCOPE" report --follow "$TMP/nope" --format ndjson
expect_match "a missing folder: message" "^calscope: --follow $TMP/nope: cannot open: No such file or directory$" "$ERR"
expect_rc "a file, not a folder: status 2" 2 "$CALSCOPE" report --follow samples/iris_gnb.csv --format ndjson
expect_match "a file, not a folder: message" "^calscope: --follow samples/iris_gnb.csv: not a folder \(--follow takes a folder or a glob on file names\)$" "$ERR"
expect_rc "a glob on folders: status 2" 2 "$CALSCOPE" report --follow "$TMP/r*/e.csv" --format ndjson
expect_match "a glob on folders: message" "a glob may match file names only, not folders$" "$ERR"
expect_rc "--follow without ndjson: status 2" 2 "$CALSCOPE" report --follow "$D"
expect_match "--follow without ndjson: message" "^calscope: --follow prints one JSON line per file: it needs --format ndjson$" "$ERR"
expect_rc "--idle-exit without --follow: status 2" 2 "$CALSCOPE" report --idle-exit 1 samples/iris_gnb.csv
expect_match "--idle-exit without --follow: message" "^calscope: --idle-exit needs --follow DIR$" "$ERR"

done_testing
