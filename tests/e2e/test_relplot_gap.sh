#!/usr/bin/env bash
# Why relplot's smooth ECE is not the paper's definition, tested: tests/oracles/relplot_gap.py computes the
# definition (Błasiok & Nakkiran, 2023) and relplot's deviations from it one at a time, in numpy,
# independently of relplot and of calscope:
#  - the definition at calscope's sigma* is calscope's smECE (1e-6), on six samples and lenses;
#  - the definition with relplot's deviations applied (its grid, end nodes not mirrored, the
#    density's mass as the normaliser, its mesh) is relplot's own smECE from
#    tests/fixtures/relplot_smece.tsv (1e-9 relative);
#  - with the end nodes mirrored, relplot's sums stay within 0.002 of the definition: the end
#    nodes are the cause of the gap (0.0803 against 0.0565 on breast_cancer_gnb, top1).
# The report's relplot block says so too (smECE line, JSON smece_note).
. "$(dirname "$0")/lib.sh"

run /usr/bin/python3 tests/oracles/relplot_gap.py check "$CALSCOPE"
if [ "$RC" -eq 0 ]; then ok "relplot gap: the definition is calscope's and, with relplot's deviations, relplot's (6 cases)"
else not_ok "relplot gap: the definition is calscope's and, with relplot's deviations, relplot's" "${OUT:0:3000}" "${ERR:0:400}"; fi
line=$(printf '%s\n' "$OUT" | grep '^samples/breast_cancer_gnb.csv top1 ')
# calscope 0.056545 = sigma*; relplot 0.080347 at its sigma 0.081055; at that sigma the steps
# definition grid end_once ratio mesh full_ratio; the density's mass is 0.5385 n
expect_match "relplot gap: breast_cancer_gnb top1, every step's figure" \
    '^samples/breast_cancer_gnb.csv top1 \| 0\.056545 \(0\.056545\) 0\.056545 \| 0\.080347 \(0\.081055\) 0\.055718 0\.055718 0\.043413 0\.080622 0\.080347 0\.055554 \| 0\.5385$' "$line"
line=$(printf '%s\n' "$OUT" | grep '^samples/breast_cancer_gnb.csv class:1 ')
expect_match "relplot gap: breast_cancer_gnb class:1 (calscope 0.056157, relplot 0.080041)" \
    '^samples/breast_cancer_gnb.csv class:1 \| 0\.056157 \(0\.056157\) 0\.056157 \| 0\.080041 \(0\.080078\) ' "$line"

# the report: relplot's smECE line names the cause and the samples it touches
run "$CALSCOPE" report --compat relplot samples/breast_cancer_gnb.csv
expect_match "relplot text: the smECE line with relplot's number, calscope's and why they differ" \
    "^    smECE: relplot's 0\.080347 \(sigma 0\.081055\); calscope's 0\.056545 \(sigma\* 0\.056545\) is the definition: relplot's grid does not mirror its end nodes, so 529 of 569 values within 1/1000 of 0 or 1 \(222 exactly\) keep only part of their kernel, and its normaliser counts them as fractions of a sample$" "$OUT"
run "$CALSCOPE" report --compat relplot --lens class:1 --smece-sigma 0.05 samples/breast_cancer_gnb.csv
expect_match "relplot text, class:1 at --smece-sigma 0.05: both numbers at that sigma" \
    "^    smECE: relplot's 0\.081375 \(sigma 0\.050000\); calscope's 0\.056434 is the definition: relplot's grid does not mirror its end nodes, so 529 of 569 values within 1/1000 of 0 or 1 \(81 exactly\) " "$OUT"
run "$CALSCOPE" report --compat relplot --lens classwise samples/breast_cancer_gnb.csv
expect_match "relplot text, classwise: no smECE, and why" "^    smECE: n/a: relplot's smECE is top-1 or one class \(--lens class:C\)$" "$OUT"
run "$CALSCOPE" report --compat relplot --format json samples/breast_cancer_gnb.csv
expect_match "relplot JSON: smece_note says the same" \
    "^calscope's 0\.056545 \(sigma\* 0\.056545\) is the definition: relplot's grid does not mirror its end nodes, so 529 of 569 values" "$(json_get 'd["files"][0]["compat"]["relplot"]["smece_note"]')"
expect_match "relplot JSON: smece and smece_sigma in the compat block" '^0\.08034675551222[0-9]* 0\.0810546875$' \
    "$(json_get 'd["files"][0]["compat"]["relplot"]["smece"], d["files"][0]["compat"]["relplot"]["smece_sigma"]')"
done_testing
