#!/usr/bin/env bash
# End-to-end: a statistics file (calscope reduce) is a dataset for the report, with the same
# numbers as the same voxels written as a per-voxel CSV (to 1e-12, histograms
# cell for cell); a manifest reduces on the fly; what statistics cannot give exactly is refused
# with its reason; cases are resampled (intervals, size curve, paired comparison) and the result
# does not depend on the thread count.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PY=/usr/bin/python3

expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "want: $2" "got:  $3"; fi; }

# ---- three small softmax cases as MONAI writes them (X,Y,Z,C float32 .nii.gz), labels .nii.gz,
# and the same voxels as a per-voxel CSV (case,label,p_0..p_2, every float32 value in %.17g) ----
"$PY" - "$TMP" <<'EOF'
import sys, os, numpy as np, nibabel as nib
out = sys.argv[1]
rng = np.random.default_rng(12)
shape = (6, 5, 4)
rows = []
with open(os.path.join(out, "manifest.csv"), "w") as man:
    man.write("case,probs,labels\n")
    for ci, case in enumerate(["c01", "c02", "c03"]):
        logits = rng.normal(size=shape + (3,)) * (1.5 + ci)
        p = np.exp(logits); p /= p.sum(axis=-1, keepdims=True)
        p = p.astype(np.float32)
        # values exactly on fine and coarse edges, and 0 / 1
        flat = p.reshape(-1, 3)
        flat[0] = [0.25, 0.25, 0.5]; flat[1] = [0.5, 0.5, 0.0]; flat[2] = [1.0, 0.0, 0.0]
        flat[3] = [0.0, 0.75, 0.25]
        lab = np.array([rng.choice(3, p=np.asarray(q, np.float64) / float(np.sum(q, dtype=np.float64)))
                        for q in flat], dtype=np.int16).reshape(shape, order="C")
        p = flat.reshape(shape + (3,))
        aff = np.diag([1.0, 1.0, 2.0, 1.0])
        nib.save(nib.Nifti1Image(p, aff), os.path.join(out, case + "_prob.nii.gz"))
        nib.save(nib.Nifti1Image(lab, aff), os.path.join(out, case + ".nii.gz"))
        man.write(f"{case},{case}_prob.nii.gz,{case}.nii.gz\n")
        # NIfTI voxel order: x fastest = Fortran order of the (X, Y, Z) array
        pv = np.stack([p[..., c].ravel(order="F") for c in range(3)], 1)
        lv = lab.ravel(order="F")
        for v in range(lv.size):
            rows.append(f"{case},{lv[v]}," + ",".join("%.17g" % float(x) for x in pv[v]))
with open(os.path.join(out, "voxels.csv"), "w") as f:
    f.write("case,label,p_0,p_1,p_2\n")
    f.write("\n".join(rows) + "\n")
EOF

expect_rc "reduce the manifest" 0 "$CALSCOPE" reduce -o "$TMP/stats.csv" "$TMP/manifest.csv"

# compare NAME FLAGS...: the report's JSON on the statistics and on the voxels agree to 1e-12
compare() {
    local name=$1; shift
    "$CALSCOPE" report --format json "$@" "$TMP/stats.csv" >"$TMP/s.json" 2>"$TMP/s.err"
    local rs=$?
    "$CALSCOPE" report --format json "$@" "$TMP/voxels.csv" >"$TMP/v.json" 2>"$TMP/v.err"
    local rv=$?
    local diff
    diff=$("$PY" - "$TMP/s.json" "$TMP/v.json" <<'EOF'
import json, math, sys
s = json.load(open(sys.argv[1]))["files"][0]; v = json.load(open(sys.argv[2]))["files"][0]
bad = []
def close(a, b, what):
    if a is None or b is None:
        if a != b: bad.append(f"{what}: {a} vs {b}")
    elif abs(a - b) > 1e-12 * max(1.0, abs(b)): bad.append(f"{what}: {a!r} vs {b!r}")
for k in ("accuracy", "ece", "ace", "mce", "brier", "nll"):
    close(s["metrics"][k], v["metrics"][k], k)
if s["source"] != "statistics": bad.append("source")
if s["rows"] != v["rows"]: bad.append(f"rows {s['rows']} vs {v['rows']}")
if len(s["bins"]) != len(v["bins"]): bad.append("bin count")
for i, (a, b) in enumerate(zip(s["bins"], v["bins"])):
    if a["count"] != b["count"]: bad.append(f"bin {i} count {a['count']} vs {b['count']}")
    for key in ("lo", "hi", "conf", "acc", "gap"): close(a[key], b[key], f"bin {i} {key}")
sc, vc = s.get("cases"), v.get("cases")
if sc["count"] != vc["count"]: bad.append("case count")
for m in ("ece", "ace", "mce"):
    for key in ("mean", "sd", "pooled"):
        close(sc["metrics"][m][key], vc["metrics"][m][key], f"cases {m} {key}")
if sc["reliability_histogram"] != vc["reliability_histogram"]: bad.append("reliability histogram")
print("; ".join(bad[:6]))
EOF
)
    if [ "$rs" -eq 0 ] && [ "$rv" -eq 0 ] && [ -z "$diff" ]; then ok "$name"
    else not_ok "$name" "exit $rs / $rv: $(head -c 300 "$TMP/s.err")" "$diff"; fi
}
for lens in top1 classwise class:1; do
    for m in 5 10 15 30; do
        compare "statistics = voxels: --lens $lens --bins $m" --lens "$lens" --bins "$m"
    done
done
compare "statistics = voxels: --distance l2" --distance l2 --bins 20
compare "statistics = voxels: --distance max, classwise" --distance max --lens classwise --bins 25
compare "statistics = voxels: --select on case" --select 'case in {c01, c03}' --bins 10

# ---- what statistics cannot give is null, never a number (0 would read as "perfectly calibrated")
run "$CALSCOPE" report --format json "$TMP/stats.csv"
expect_eq "not exact from statistics: null in JSON" "[None, None, None, None, None, None, None]" \
    "$(json_get '[d["files"][0]["metrics"].get(k, "absent") for k in ("rece_g", "aece", "smece", "l2ce", "l2ce_debiased", "ece_sweep", "rece_m")]')"

# ---- regions: no top-1, said in place of accuracy ----
run "$CALSCOPE" report --regions 'WT=1,2,4;TC=1,4;ET=4' --lens classwise samples/seg/regions/manifest.csv
expect_eq "regions: exit 0" 0 "$RC"
expect_match "regions: accuracy says why it is n/a" 'accuracy +n/a .*top-1 is undefined for independent sigmoid regions' "$OUT"

# ---- a manifest is reduced on the fly: the same report as its statistics file ----
run "$CALSCOPE" report --format json "$TMP/stats.csv"; want=$(json_get 'd["files"][0]["metrics"]["ece"]')
run "$CALSCOPE" report --format json "$TMP/manifest.csv"
expect_eq "report MANIFEST.csv: exit 0" 0 "$RC"
expect_eq "report MANIFEST.csv = report STATS" "$want" "$(json_get 'd["files"][0]["metrics"]["ece"]')"
expect_eq "report MANIFEST.csv: source statistics, fine 300" "statistics 300" \
    "$(json_get 'd["files"][0]["source"], d["files"][0]["fine"]' | tr -d "(),'")"

# ---- a NIfTI-2 header whose dim[0] is 2^40 (it overflowed nifti_clib's stack): refused by name ----
mkdir -p "$TMP/h"
cp tests/fixtures/vol/n2_dim0_huge.nii "$TMP/h/"
cp "samples/seg/regions/$(sed -n 2p samples/seg/regions/manifest.csv | cut -d, -f3)" "$TMP/h/lab.nii.gz"
printf 'case,probs,labels\nx,n2_dim0_huge.nii,lab.nii.gz\n' >"$TMP/h/m.csv"
run "$CALSCOPE" report --regions 'WT=1,2,4;TC=1,4;ET=4' "$TMP/h/m.csv"
expect_eq "report MANIFEST with a NIfTI-2 dim[0] of 2^40: exit 3 and calscope's line alone" \
    "3 calscope: $TMP/h/m.csv: $TMP/h/n2_dim0_huge.nii: NIfTI header: dim[0] = 1099511627776, must be 1..7 (labels: $TMP/h/lab.nii.gz)" \
    "$RC $ERR"

# ---- a pair of folders opens directly (--probs DIR --labels DIR), the same as its manifest ----
mkdir -p "$TMP/P" "$TMP/L"
for c in c01 c02 c03; do cp "$TMP/${c}_prob.nii.gz" "$TMP/P/"; cp "$TMP/$c.nii.gz" "$TMP/L/"; done
run "$CALSCOPE" report --format json --probs "$TMP/P" --labels "$TMP/L" --prob-suffix _prob
expect_eq "--probs DIR --labels DIR: exit 0" 0 "$RC"
expect_eq "--probs DIR --labels DIR = the manifest" "$want" "$(json_get 'd["files"][0]["metrics"]["ece"]')"
run "$CALSCOPE" report --prob-suffix _prob "$TMP/voxels.csv"
expect_eq "--prob-suffix without folders: exit 2" 2 "$RC"
expect_match "--prob-suffix without folders: why" '--prob-suffix names files in a folder of probabilities' "$ERR"
run "$CALSCOPE" report --probs "$TMP/P" --labels "$TMP/L"
expect_eq "folders without the suffix: exit 3" 3 "$RC"

# ---- what is not exact from statistics is refused, with the reason ----
run "$CALSCOPE" report --bins 7 "$TMP/stats.csv"
expect_eq "--bins 7: exit 2" 2 "$RC"
expect_match "--bins 7: does not divide F" 'does not divide .*fine resolution 300' "$ERR"
run "$CALSCOPE" report --binning mass "$TMP/stats.csv"
expect_eq "--binning mass: exit 2" 2 "$RC"
expect_match "--binning mass: the reason" 'equal-mass' "$ERR"
run "$CALSCOPE" report --lens topk:2 "$TMP/stats.csv"
expect_eq "--lens topk:2: exit 2" 2 "$RC"
run "$CALSCOPE" report --compat all "$TMP/stats.csv"
expect_eq "--compat all: exit 2" 2 "$RC"
expect_match "--compat: not from statistics" '--compat: not from a statistics file, which keeps per-bin sums per case, not per-voxel values' "$ERR"
run "$CALSCOPE" report --select 'conf > 0.5' "$TMP/stats.csv"
expect_eq "--select on conf: exit 2" 2 "$RC"

# ---- a volume flag that would change nothing is refused, never ignored ----
run "$CALSCOPE" report --label-values 0,1,2 "$TMP/voxels.csv"
expect_eq "--label-values without a manifest: exit 2" 2 "$RC"
expect_match "--label-values without a manifest: why" '--label-values maps the channels of volumes; no FILE is a manifest \(case,probs,labels\)' "$ERR"
run "$CALSCOPE" report --fine 600 "$TMP/stats.csv"
expect_eq "--fine on a statistics file: exit 2" 2 "$RC"
expect_match "--fine on a statistics file: why" '--fine applies when volumes are reduced; a statistics file is reduced already' "$ERR"
run "$CALSCOPE" report --renormalize "$TMP/manifest.csv"
expect_eq "--renormalize on a manifest: exit 2" 2 "$RC"
expect_match "--renormalize on a manifest: why" '--renormalize applies to prediction rows; this is a manifest of segmentation volumes' "$ERR"
# --sum-tol checks the softmax channels' sums when volumes are reduced, not a statistics file's
# (even at its default value); --sigma and --smece-sigma change RECE-G, RECE-M and smECE, all n/a
# from statistics
run "$CALSCOPE" report --sum-tol 0.001 "$TMP/stats.csv"
expect_eq "--sum-tol on a statistics file: exit 2" 2 "$RC"
expect_match "--sum-tol on a statistics file: why" '^calscope: --sum-tol checks that rows of class probabilities sum to 1; no FILE has them \(logits, a binary p column and statistics files have no row sum to check\)$' "$ERR"
run "$CALSCOPE" report --sum-tol 0.01 "$TMP/manifest.csv"
expect_eq "--sum-tol on a manifest (softmax channels): exit 0" 0 "$RC"
run "$CALSCOPE" report --sum-tol 0.01 --regions 'WT=1,2,4;TC=1,4;ET=4' samples/seg/regions/manifest.csv
expect_eq "--sum-tol on --regions volumes (sigmoids): exit 2" 2 "$RC"
expect_match "--sum-tol on --regions volumes: why" '^calscope: --sum-tol checks that rows of class probabilities sum to 1; no FILE has them' "$ERR"
run "$CALSCOPE" report --sigma 0.3 "$TMP/stats.csv"
expect_eq "--sigma on a statistics file: exit 2" 2 "$RC"
expect_match "--sigma on a statistics file: why" '^calscope: --sigma changes RECE-G and RECE-M only: RECE-G is n/a on statistics files \(not exact from statistics\), and RECE-M needs an id/tta long file, which no FILE is$' "$ERR"
run "$CALSCOPE" report --smece-sigma 0.05 "$TMP/stats.csv"
expect_eq "--smece-sigma on a statistics file: exit 2" 2 "$RC"
expect_match "--smece-sigma on a statistics file: why" '^calscope: --smece-sigma changes smECE only, which is n/a on statistics files \(not exact from statistics\)$' "$ERR"
run "$CALSCOPE" report --sigma 0.3 "$TMP/stats.csv" samples/digits_ts.csv
expect_eq "--sigma with a statistics file and a file of rows: exit 0 (RECE-G of the second)" 0 "$RC"
run "$CALSCOPE" report --fine 60 --format json "$TMP/manifest.csv"
expect_eq "--fine 60 on a manifest: the statistics' fine resolution" "60" "$(json_get 'd["files"][0]["fine"]')"

# ---- cases are the unit: intervals, size curve, comparison; threads do not matter ----
run "$CALSCOPE" report --format json --ci 200 --seed 7 --threads 1 "$TMP/stats.csv"; one=$OUT
run "$CALSCOPE" report --format json --ci 200 --seed 7 --threads 2 "$TMP/stats.csv"
expect_eq "--ci over cases: threads 1 = threads 2" "$one" "$OUT"
expect_match "--ci over cases: an interval" '"ece_ci": \[' "$OUT"
run "$CALSCOPE" report --format json --curve size --repeats 10 "$TMP/stats.csv"
expect_eq "size curve: unit cases" "cases" "$(json_get 'd["files"][0]["curve"]["unit"]')"
expect_eq "size curve: rows are cases (fraction 1 = 3 cases)" "3" "$(json_get 'd["files"][0]["curve"]["points"][-1]["rows"]')"
run "$CALSCOPE" report --format json --curve bins --repeats 10 "$TMP/stats.csv"
expect_eq "bins curve: the divisors of 300 from 5" "[5, 6, 10, 12, 15, 20, 25, 30, 50, 60, 75, 100, 150, 300]" \
    "$(json_get '[int(p["bins"]) for p in d["files"][0]["curve"]["points"]]')"
cp "$TMP/stats.csv" "$TMP/same.csv"
run "$CALSCOPE" report --format json --compare "$TMP/stats.csv" "$TMP/same.csv"
expect_eq "--compare two statistics files: exit 0" 0 "$RC"
expect_eq "--compare: paired by case, 3 pairs" "True 3" "$(json_get 'd["compare_info"]["by_case"], d["compare_info"]["pairs"]' | tr -d '(),')"
expect_eq "--compare with itself: diff 0" "0.0" "$(json_get 'float(d["compare"][0]["diff"])')"

# ---- a damaged statistics file: the line and the reason ----
# the first class record's count becomes "x"
awk -F, -v OFS=, '!done && $1 == "c" { $5 = "x"; done = 1 } 1' "$TMP/stats.csv" >"$TMP/bad.csv"
line=$(grep -n '^c,' "$TMP/stats.csv" | head -1 | cut -d: -f1)
run "$CALSCOPE" report "$TMP/bad.csv"
expect_eq "damaged statistics file: exit 3" 3 "$RC"
expect_match "damaged statistics file: FILE:LINE:COL of the bad count" "^calscope: $TMP/bad.csv:$line:5: " "$ERR"

done_testing
