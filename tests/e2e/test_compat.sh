#!/usr/bin/env bash
# --compat: calscope report --compat all --format json against tools/compat_reference.py, the
# numpy transcriptions of each library's code path, on every bundled sample (1e-12; torchmetrics
# and MONAI work in float32: 1e-6), plus the CLI contract (settings.compat, text table, errors).
. "$(dirname "$0")/lib.sh"
REF="/usr/bin/python3 tools/compat_reference.py"

compare() { # compare NAME FILE [OPTIONS...]
    local name=$1 file=$2; shift 2
    $REF "$file" "$@" >"$TMP/ref.json" 2>"$TMP/ref.err" || { not_ok "$name" "reference failed: $(head -c 400 "$TMP/ref.err")"; return; }
    run "$CALSCOPE" report --compat all --format json "$file" "$@"
    [ "$RC" -eq 0 ] || { not_ok "$name" "exit $RC" "${ERR:0:400}"; return; }
    printf '%s' "$OUT" >"$TMP/out.json"
    local diffs
    diffs=$(/usr/bin/python3 - "$TMP/ref.json" "$TMP/out.json" <<'PY'
import json, sys
ref = json.load(open(sys.argv[1])); got = json.load(open(sys.argv[2]))["files"][0]["compat"]
for lib, r in ref.items():
    tol = 1e-6 if lib in ("torchmetrics", "torchmetrics-binary", "monai") else 1e-12
    for k, want in r.items():
        have = got[lib][k]
        if (want is None) != (have is None) or (want is not None and abs(want - have) > tol):
            print(f"{lib}.{k}: reference {want} calscope {have}")
PY
)
    if [ -z "$diffs" ]; then ok "$name"; else not_ok "$name" "$diffs"; fi
}

for f in samples/*.csv; do
    compare "compat matches the reference: $(basename "$f")" "$f"
done
for f in samples/digits_rf.csv samples/breast_cancer_gnb.csv; do
    compare "compat matches the reference: $(basename "$f") --bins 10" "$f" --bins 10
    compare "compat matches the reference: $(basename "$f") --lens classwise" "$f" --lens classwise
    compare "compat matches the reference: $(basename "$f") --binning mass" "$f" --binning mass
    compare "compat matches the reference: $(basename "$f") --distance l2" "$f" --distance l2
done

# --compat NAME: the metrics follow the library and settings.compat names it
run "$CALSCOPE" report --compat torchmetrics --format json samples/digits_gnb.csv
expect_match "--compat NAME: settings.compat" '"compat": "torchmetrics"' "$OUT"
v=$(json_get 'd["files"][0]["metrics"]["ece"] == d["files"][0]["compat"]["torchmetrics"]["ece"] and d["files"][0]["metrics"]["ace"] is None')
expect_match "--compat NAME: metrics.ece is the library's, ace null (torchmetrics has none)" '^True$' "$v"
run "$CALSCOPE" report --compat torchmetrics --format json --check 'ece<=0.5' samples/digits_gnb.csv
[ "$RC" -eq 0 ] && ok "--compat NAME with --check" || not_ok "--compat NAME with --check" "exit $RC"

# --compat all on a file with 1.0 confidences: torchmetrics moves them to the extra bin
run "$CALSCOPE" report --compat all --format json samples/breast_cancer_gnb.csv
v=$(json_get 'd["files"][0]["compat"]["torchmetrics"]["moved"] > 0 and d["files"][0]["compat"]["verified"]["moved"] == 0')
expect_match "--compat all: torchmetrics moves samples, verified none" '^True$' "$v"
v=$(json_get 'any(e["rule"].startswith("exactly 1.0") for e in d["files"][0]["compat"]["torchmetrics"]["examples"])')
expect_match "--compat all: the phantom-bin rule is named" '^True$' "$v"
v=$(json_get 'd["files"][0]["compat"]["netcal"]["aece"] is None and "raises" in d["files"][0]["compat"]["netcal"]["notes"]["aece"]')
expect_match "--compat all: netcal equal-mass fails on duplicate edges, with the reason" '^True$' "$v"
run "$CALSCOPE" report --compat all samples/digits_rf.csv
expect_match "--compat all text: side-by-side table" 'metric +calscope +torchm +tm-bin +netcal +relplot +verified +robustc +monai' "$OUT"
expect_match "--compat all text: moved samples with the rule" 'row [0-9]+ value 0\.8[0-9]*: calscope bin 11, torchmetrics bin 12 \(on an inner edge' "$OUT"

# usage errors
expect_rc "--compat unknown library: exit 2" 2 "$CALSCOPE" report --compat sklearn samples/digits_rf.csv
expect_match "--compat unknown library: message" "not all, torchmetrics" "$ERR"
expect_rc "--compat with --lens full: exit 2" 2 "$CALSCOPE" report --compat all --lens full samples/digits_rf.csv
expect_rc "--compat with --binning kdtree: exit 2" 2 "$CALSCOPE" report --compat all --binning kdtree --lens top1 samples/digits_rf.csv
done_testing
