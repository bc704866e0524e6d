#!/bin/bash
# samples/train_watch.py beside `calscope report --follow`: a real training loop (torch, digits)
# writing each epoch atomically while the follow runs, as CSV and as .npy with one label file.
# Every epoch is reported once, in order, each line equal to the report of that epoch's file.
# The follow is waited for by polling its output (no sleep decides anything).
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
EPOCHS=6

lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }
wait_out() {
    local end=$((SECONDS + 120))
    while [ "$(lines "$1")" -lt "$2" ]; do [ "$SECONDS" -lt "$end" ] || return 1; sleep 0.05; done
}

for mode in csv npy; do
    R=$TMP/run_$mode
    mkdir -p "$R"
    flags=(); ext=csv
    if [ $mode = npy ]; then flags=(--labels "$R/labels.npy"); ext=npy; fi
    "$CALSCOPE" report --follow "$R" --format ndjson --max-files $EPOCHS "${flags[@]}" >"$TMP/$mode.nd" 2>"$TMP/$mode.err" &
    PID=$!
    extra=(); [ $mode = npy ] && extra=(--npy)
    $PY samples/train_watch.py "$R" --epochs $EPOCHS "${extra[@]}" >"$TMP/$mode.train" 2>&1
    if wait_out "$TMP/$mode.nd" $EPOCHS; then ok "$mode: $EPOCHS epochs, $EPOCHS lines"
    else not_ok "$mode: $EPOCHS lines" "$(cat "$TMP/$mode.err")" "$(tail -3 "$TMP/$mode.train")"; fi
    wait $PID
    RCF=$?
    if [ $RCF -eq 0 ]; then ok "$mode: --max-files $EPOCHS ends with status 0"; else not_ok "$mode: status" "exit $RCF"; fi
    for e in $(seq 1 $EPOCHS); do
        "$CALSCOPE" report --format json "${flags[@]}" "$R/epoch_$e.$ext" >"$TMP/$mode.$e.json"
    done
    if $PY - "$TMP/$mode.nd" "$TMP" "$mode" "$EPOCHS" "$ext" <<'EOF'
import json, sys
nd, tmp, mode, n, ext = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
ls = [json.loads(l) for l in open(nd)]
assert [l["seq"] for l in ls] == list(range(n))
assert [l["path"].rsplit("/", 1)[1] for l in ls] == [f"epoch_{e}.{ext}" for e in range(1, n + 1)], ls
for e, l in enumerate(ls, 1):
    want = json.load(open(f"{tmp}/{mode}.{e}.json"))["files"][0]
    got = dict(l); del got["seq"]
    assert got == want, (e, {k: (got[k], want.get(k)) for k in got if got[k] != want.get(k)})
    assert got["rows"] == 719          # the held-out 40 % of the 1,797 digits
EOF
    then ok "$mode: each epoch's line is the report of its file"
    else not_ok "$mode: lines equal the report" "$(head -c 600 "$TMP/$mode.nd")"; fi
done
# the training improves: accuracy of the last epoch above the first's
if $PY -c "
import json, sys
ls = [json.loads(l) for l in open('$TMP/csv.nd')]
assert ls[-1]['metrics']['accuracy'] > ls[0]['metrics']['accuracy'], [l['metrics']['accuracy'] for l in ls]
"; then ok "the run learns (accuracy grows)"; else not_ok "the run learns"; fi

done_testing
