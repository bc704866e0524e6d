#!/usr/bin/env bash
# --compat: calscope report --compat all --format json against tests/oracles/compat_reference.py, the
# numpy transcriptions of each library's code path, on every bundled sample (1e-12; torchmetrics
# and MONAI work in float32: 1e-6); per library, the "bins" table of --compat NAME against the
# reference's table (bins_from, edges, counts, conf/acc/gap, empty bins), counts summing to N
# (N*K class-wise; fewer only where robustcal leaves samples in no bin) and, for the top-1 L1
# tables, sum(count/N * gap) = the library's ece; plus the CLI contract (settings.compat, text
# table, CSV columns, errors).
. "$(dirname "$0")/lib.sh"
REF="/usr/bin/python3 tests/oracles/compat_reference.py"

compare() { # compare NAME FILE [OPTIONS...]
    local name=$1 file=$2; shift 2
    reference_output "$TMP/ref.json" $REF "$file" "$@" 2>"$TMP/ref.err" || { not_ok "$name" "reference failed: $(head -c 400 "$TMP/ref.err")"; return; }
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
        if k == "bins":
            continue
        have = got[lib][k]
        if (want is None) != (have is None) or (want is not None and abs(want - have) > tol):
            print(f"{lib}.{k}: reference {want} calscope {have}")
PY
2>&1)
    if [ -z "$diffs" ]; then ok "$name"; else not_ok "$name" "$diffs"; fi
    # the per-bin table of each library under --compat NAME
    diffs=$(/usr/bin/python3 - "$TMP/ref.json" "$CALSCOPE" "$file" "$@" <<'PY'
import json, subprocess, sys
ref = json.load(open(sys.argv[1])); exe, path, opts = sys.argv[2], sys.argv[3], sys.argv[4:]
classwise = "classwise" in opts; l2 = "l2" in opts
for lib, r in ref.items():
    tol = 1e-6 if lib in ("torchmetrics", "torchmetrics-binary", "monai") else 1e-12
    p = subprocess.run([exe, "report", "--compat", lib, "--format", "json", path] + opts, capture_output=True, text=True)
    f = json.loads(p.stdout)["files"][0]
    want, got = r["bins"], f["bins"]
    if f["bins_from"] != (lib if want is not None else "calscope"):
        print(f"{lib}: bins_from {f['bins_from']!r} (reference table: {want is not None})"); continue
    if want is None:
        continue
    if len(got) != len(want):
        print(f"{lib}: {len(got)} bins, reference {len(want)}"); continue
    for i, (g, w) in enumerate(zip(got, want)):
        for k in ("lo", "hi", "count", "conf", "acc", "gap"):
            if (w[k] is None) != (g[k] is None) or (w[k] is not None and abs(w[k] - g[k]) > tol):
                print(f"{lib}: bins[{i}].{k} = {g[k]}, reference {w[k]}")
    n = f["selected"] if "selected" in f else f["samples"]
    total = sum(b["count"] for b in got)
    if total != f["bins_counted"]:
        print(f"{lib}: counts sum to {total}, bins_counted {f['bins_counted']}")
    full = n * f["classes"] if classwise else n
    if total != full and not (lib == "robustcal" and total < full):
        print(f"{lib}: counts sum to {total}, want {full}")
    if not classwise and not l2:
        e = sum(b["count"] / n * b["gap"] for b in got if b["count"])
        if abs(e - f["metrics"]["ece"]) > tol:
            print(f"{lib}: sum(count/N * gap) = {e}, metrics.ece {f['metrics']['ece']}")
PY
2>&1)
    if [ -z "$diffs" ]; then ok "$name: bin tables"; else not_ok "$name: bin tables" "$diffs"; fi
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

# whose bins: calscope's without --compat NAME, the library's with it (text table, --plot)
run "$CALSCOPE" report --format json samples/digits_gnb.csv
v=$(json_get 'd["files"][0]["bins_from"] == "calscope" and "bins_note" not in d["files"][0]')
expect_match "bins_from is calscope without --compat" '^True$' "$v"
run "$CALSCOPE" report --compat all --format json samples/digits_gnb.csv
v=$(json_get 'd["files"][0]["bins_from"] == "calscope"')
expect_match "bins_from is calscope with --compat all" '^True$' "$v"
run "$CALSCOPE" report --compat torchmetrics --format json --binning mass samples/digits_gnb.csv
v=$(json_get 'd["files"][0]["bins_from"] == "calscope" and "equal-mass" in d["files"][0]["bins_note"]')
expect_match "--compat NAME without a table for the settings: calscope's bins, and why" '^True$' "$v"
run "$CALSCOPE" report --compat torchmetrics --bins 5 --plot samples/breast_cancer_gnb.csv
expect_match "--compat NAME text: the table says whose bins" 'bins from torchmetrics: ' "$OUT"
expect_match "--compat NAME text: the extra bin at 1.0 with 473 members" '^ +6 +1\.0000 +1\.0000 +473 ' "$OUT"
expect_match "--compat NAME text: empty bins show the library's 0" '^ +1 +0\.0000 +0\.2000 +0 +0\.000000 +0\.000000 +0\.000000$' "$OUT"
expect_match "--compat NAME --plot: the diagram says whose bins" "Reliability: top1, 5 uniform bins \(torchmetrics's\)" "$OUT"

# CSV: four columns per library with --compat all, the same numbers as the JSON, empty for n/a
run "$CALSCOPE" report --compat all --format json samples/breast_cancer_gnb.csv samples/digits_rf.csv
printf '%s' "$OUT" >"$TMP/all.json"
run "$CALSCOPE" report --compat all --format csv samples/breast_cancer_gnb.csv samples/digits_rf.csv
printf '%s\n' "$OUT" >"$TMP/all.csv"
diffs=$(/usr/bin/python3 - "$TMP/all.json" "$TMP/all.csv" <<'PY' 2>&1
import csv, json, sys
libs = ["torchmetrics", "torchmetrics-binary", "netcal", "relplot", "verified", "robustcal", "monai"]
files = json.load(open(sys.argv[1]))["files"]
rows = list(csv.reader(open(sys.argv[2])))
head = rows[0]
want = [f"{l}_{k}" for l in libs for k in ("ece", "ace", "mce", "moved")] + [f"{l}_na" for l in libs]
if head[-len(want):] != want or head[:19] != "path,rows,classes,rejected,selected,accuracy,ece,ace,mce,rece_g,rece_m,brier,nll,aece,sce,smece,l2ce,l2ce_debiased,ece_sweep".split(","):
    print("header:", head)
for f, r in zip(files, rows[1:]):
    got = dict(zip(head, r))
    for l in libs:
        c = f["compat"][l]
        for k in ("ece", "ace", "mce"):
            w = "" if c[k] is None else repr(c[k])
            if (w == "") != (got[f"{l}_{k}"] == "") or (w and float(got[f"{l}_{k}"]) != c[k]):
                print(f"{f['path']} {l}_{k}: csv {got[f'{l}_{k}']!r} json {c[k]!r}")
        w = str(c["moved"]) if c["applicable"] else ""
        if got[f"{l}_moved"] != w:
            print(f"{f['path']} {l}_moved: csv {got[f'{l}_moved']!r} want {w!r}")
        # <lib>_na: the JSON note of every empty ece/ace/mce field, in that order
        w = "; ".join(f"{k}: {c['notes'][k]}" for k in ("ece", "ace", "mce") if c[k] is None and k in c["notes"])
        if got[f"{l}_na"] != w:
            print(f"{f['path']} {l}_na: csv {got[f'{l}_na']!r} want {w!r}")
if len(rows) != 3:
    print("rows:", len(rows))
# spot values: digits_rf has 10 classes, so torchmetrics-binary is all empty; torchmetrics has no ACE
d = dict(zip(head, rows[2]))
if [d[f"torchmetrics-binary_{k}"] for k in ("ece", "ace", "mce", "moved")] != ["", "", "", ""] or d["torchmetrics_ace"] != "":
    print("n/a columns not empty:", d)
if d["torchmetrics_moved"] != "200":
    print("torchmetrics_moved on digits_rf:", d["torchmetrics_moved"])
PY
)
if [ -z "$diffs" ]; then ok "csv --compat all: per-library columns match the JSON"; else not_ok "csv --compat all: per-library columns match the JSON" "$diffs"; fi
expect_match "csv --compat all: torchmetrics_na says why its ace is empty" ',ace: torchmetrics has no such metric,' "$(sed -n 2p "$TMP/all.csv")"

# Every row follows the lens and binning, or shows n/a with the reason: with
# --lens classwise --binning mass calscope's rms is its class-wise equal-mass L2 ECE (the plain
# report's ece under --distance l2), no library has an RMS there, and each says why.
run "$CALSCOPE" report --format json --lens classwise --binning mass --distance l2 samples/breast_cancer_gnb.csv
want=$(json_get 'repr(d["files"][0]["metrics"]["ece"])')
run "$CALSCOPE" report --compat all --format json --lens classwise --binning mass samples/breast_cancer_gnb.csv
v=$(json_get 'repr(d["files"][0]["compat"]["calscope"]["rms"])')
expect_match "compat rms follows --lens classwise --binning mass (calscope's L2 ECE $want)" "^${want}\$" "$v"
v=$(json_get '[l for l, c in d["files"][0]["compat"].items() if l != "calscope" and c["rms"] is not None]')
expect_match "compat rms: no library has a class-wise equal-mass RMS" '^\[\]$' "$v"
v=$(json_get 'd["files"][0]["compat"]["torchmetrics"]["notes"]["rms"]')
expect_match "compat rms: JSON says why torchmetrics has none" '^torchmetrics has no such metric \(no class-wise calibration error\)$' "$v"
run "$CALSCOPE" report --compat all --lens classwise --binning mass samples/breast_cancer_gnb.csv
expect_match "compat text: the rms row stays, calscope's number and n/a" '^  rms +0\.09044 +n/a +n/a +n/a +n/a +n/a +n/a +n/a$' "$OUT"
expect_match "compat text: the reason under the library" '^    rms: n/a under these settings: torchmetrics has no such metric \(no class-wise calibration error\)$' "$OUT"
expect_match "compat text: MONAI says it has only uniform bins" '^    ece: n/a under these settings: MONAI has only uniform bins$' "$OUT"
run "$CALSCOPE" report --compat all --binning mass samples/breast_cancer_gnb.csv
expect_match "compat text --binning mass: torchmetrics has uniform bins only" '^    mce: n/a under these settings: torchmetrics has no such metric \(uniform bins only\)$' "$OUT"
run "$CALSCOPE" report --compat all --format csv --lens classwise samples/breast_cancer_gnb.csv
expect_match "compat csv --lens classwise: the reason in torchmetrics_na" ',"?ece: torchmetrics has no such metric \(no class-wise calibration error\); ace: torchmetrics has no such metric; mce: torchmetrics has no such metric \(no class-wise calibration error\)"?,' "$OUT"
# --binning mass --distance l2: netcal's equal-mass ECE is L1 only (it was reported as the L2 one)
run "$CALSCOPE" report --compat all --format json --binning mass --distance l2 samples/digits_rf.csv
v=$(json_get 'd["files"][0]["compat"]["netcal"]["ece"], d["files"][0]["compat"]["netcal"]["notes"]["ece"]')
expect_match "compat --binning mass --distance l2: netcal ece n/a, L1 only" '^None netcal has no L2 calibration error$' "$v"
run "$CALSCOPE" report --compat netcal --format csv samples/digits_rf.csv
expect_no_match "csv --compat NAME: no per-library columns" 'netcal_ece' "$OUT"

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
expect_rc "--torch-dtype without a torchmetrics --compat: exit 2" 2 "$CALSCOPE" report --compat netcal --torch-dtype float64 samples/digits_rf.csv
expect_match "--torch-dtype without a torchmetrics --compat: message" '^calscope: --torch-dtype needs --compat torchmetrics, torchmetrics-binary or all \(only torchmetrics gets torch tensors\)$' "$(printf '%s' "$ERR" | head -1)"
expect_rc "--torch-dtype float16: exit 2" 2 "$CALSCOPE" report --compat all --torch-dtype float16 samples/digits_rf.csv
expect_match "--torch-dtype float16: message" "^calscope: --torch-dtype: 'float16' is not float32 or float64\$" "$(printf '%s' "$ERR" | head -1)"
# --compat with --compare: the file sections are the library's, the methods table calscope's own
expect_rc "--compat with --compare: exit 0" 0 "$CALSCOPE" report --compat torchmetrics --compare samples/digits_gnb.csv samples/digits_ts.csv
expect_match "--compat with --compare: the methods table says whose definitions it uses" \
    "^  calscope's own definitions: --compat changes each file's section above only\$" \
    "$(grep -A1 '^Methods (lens top1)$' <<<"$OUT" | tail -n 1)"
expect_rc "--compare without --compat: exit 0" 0 "$CALSCOPE" report --compare samples/digits_gnb.csv samples/digits_ts.csv
expect_no_match "--compare without --compat: no such line" "calscope's own definitions" "$OUT"
done_testing
