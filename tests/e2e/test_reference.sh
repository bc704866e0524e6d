#!/usr/bin/env bash
# calscope report --format json against the independent numpy reference (tests/oracles/reference.py):
# for every entry of tests/expected/reference.json (sample file x settings) every metric and every
# bin must match within 1e-12 absolute. Regenerate the expectations with
#   /usr/bin/python3 tests/oracles/reference.py --write
. "$(dirname "$0")/lib.sh"
REF=tests/expected/reference.json
CMP="/usr/bin/python3 tests/e2e/compare_json.py"

# The comparer itself: an entry of the reference passes against itself, and fails when a metric
# moves by 1e-11 or a bin count by one (so a comparer that passes everything cannot go unnoticed).
/usr/bin/python3 - "$REF" "$TMP" <<'PY'
import json, sys
ref = json.load(open(sys.argv[1]))
e = dict(ref["entries"][0])
json.dump({"files": [e]}, open(sys.argv[2] + "/self.json", "w"))
e["metrics"] = dict(e["metrics"], ece=e["metrics"]["ece"] + 1e-11)
e["bins"] = [dict(b) for b in e["bins"]]
next(b for b in e["bins"] if b["count"] > 0)["count"] += 1
json.dump({"files": [e]}, open(sys.argv[2] + "/perturbed.json", "w"))
PY
if $CMP "$REF" 0 "$TMP/self.json" >/dev/null; then ok "compare_json: reference entry matches itself"
else not_ok "compare_json: reference entry matches itself"; fi
diffs=$($CMP "$REF" 0 "$TMP/perturbed.json")
if [ $? -eq 1 ] && printf '%s' "$diffs" | grep -q 'metrics.ece' && printf '%s' "$diffs" | grep -q 'count'; then
    ok "compare_json: catches a 1e-11 metric change and a bin count change"
else
    not_ok "compare_json: catches a 1e-11 metric change and a bin count change" "$diffs"
fi

while IFS=$'\t' read -r idx name path flags; do
    tname="reference: $path [$name]${flags:+ ($flags)}"
    # shellcheck disable=SC2086  # flags are whitespace-separated words
    run "$CALSCOPE" report --format json $flags "$path"
    if [ "$RC" -ne 0 ]; then
        not_ok "$tname" "exit $RC" "stderr: ${ERR:0:400}"
        continue
    fi
    printf '%s' "$OUT" >"$TMP/actual.json"
    diffs=$($CMP "$REF" "$idx" "$TMP/actual.json"); crc=$?
    if [ "$crc" -eq 0 ]; then
        ok "$tname"
    else
        mapfile -t lines < <(printf '%s\n' "$diffs" | head -12)
        not_ok "$tname" "${lines[@]}"
    fi
done < <($CMP --list "$REF")

done_testing
