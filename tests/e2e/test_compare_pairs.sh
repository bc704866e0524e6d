#!/usr/bin/env bash
# End-to-end tests of what a comparison pairs and says: a verdict on a tie reads as the table's
# row; with a held-out split the reference's split decides the held-out samples of every method
# (a file whose own split column disagrees is refused at the row); files without ids read with
# --skip-bad-rows pair by their data row position; a recalibration that fails leaves the
# comparison of the others standing.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

A=samples/digits_gnb.csv
cp "$A" "$TMP/copy.csv"

# ---- a tie: the verdict's numbers are the table's row (no P(better)) ----
run "$CALSCOPE" report --compare "$A" "$TMP/copy.csv"
V=$(printf '%s\n' "$OUT" | unwrap '^verdict:' | grep '^verdict:')
expect_match "tie: the verdict says no difference" "^verdict: no significant difference between $TMP/copy.csv and $A; ECE \+0\.0000 \[\+0\.0000, \+0\.0000\], P\(better\) n/a \(a tie\), 1,797 paired samples$" "$V"
expect_match "tie: the table reads =" "^  ece +0\.136953 +0\.136953 +0\.000000 .* =$" "$OUT"
run "$CALSCOPE" report --compare --format json "$A" "$TMP/copy.csv"
expect_match "tie: JSON verdict p_better null, as the compare entry" "^None None no difference$" \
    "$(json_get "d['compare_info']['verdict']['p_better'], [e for e in d['compare'] if e['metric'] == 'ece'][0]['p_better'], d['compare_info']['verdict']['kind']")"
done_testing
