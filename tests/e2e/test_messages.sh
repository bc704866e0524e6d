#!/usr/bin/env bash
# End-to-end tests of what calscope says about its input and its work, beyond the numbers: JSON
# and CSV strings from names that are not UTF-8, the blank-line count, --check's passing lines,
# the --select length limit, the hint for .npy logits, --compare of files whose classes are in
# another order, and `reduce`'s closing summary with a statistics file's load line.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HINT="Try \`calscope report --help\`."
# expect_stderr NAME RC WANT CMD...: exit RC and exactly WANT on stderr
expect_stderr() {
    local name=$1 want_rc=$2 want=$3; shift 3; run "$@"
    if [ "$RC" -eq "$want_rc" ] && [ "$ERR" = "$want" ]; then ok "$name"
    else not_ok "$name" "exit $RC (want $want_rc)" "stderr: ${ERR:0:600}" "want:   ${want:0:600}"; fi
}

# --- strings that are not UTF-8: one rule for JSON and CSV (a stray byte is the character of its
# Latin-1 reading; valid UTF-8 as it is; controls escaped as JSON requires)
BAD_NAME=$TMP/$(printf 'caf\xe9-\xff-\xc3\xbc.csv')          # e9 and ff stray, c3 bc is u-umlaut
printf 'label,p_0,p_1,%s,%s\n0,0.9,0.1,a,b\n1,0.2,0.8,a,b\n%s,0.5,0.5,a,b\n' \
    "$(printf 'n\xfex')" "$(printf 'tab\there')" "$(printf 'z\xff')" >"$BAD_NAME"
# strict UTF-8 decoding of stdout, then the JSON parser (json.tool as a user would run it)
JSON_CHECK='
import json, sys
raw = open(sys.argv[1], "rb").read()
d = json.loads(raw.decode("utf-8"))            # strict: a stray byte raises here
f = d["files"][0]
for s in [f["path"]] + f["load"]["ignored_columns"] + f["load"]["skipped"]:
    print(s.rsplit("/", 1)[-1].replace("\t", "<TAB>"))'
"$CALSCOPE" report --format json --skip-bad-rows "$BAD_NAME" >"$TMP/bad.json" 2>"$TMP/bad.err"
if LC_ALL=C.UTF-8 /usr/bin/python3 -m json.tool "$TMP/bad.json" >/dev/null 2>"$TMP/tool.err"; then
    ok "non-UTF-8: json.tool accepts the output"
else
    not_ok "non-UTF-8: json.tool accepts the output" "$(cat "$TMP/tool.err")"
fi
got=$(LC_ALL=C.UTF-8 /usr/bin/python3 -c "$JSON_CHECK" "$TMP/bad.json" 2>&1)
# the path, the two ignored columns (a tab in one), and the skipped row's message quoting 'z\xff'
want="café-ÿ-ü.csv
nþx
tab<TAB>here
café-ÿ-ü.csv:4:1: unknown class name 'zÿ' (classes: 0, 1)"
if [ "$got" = "$want" ]; then ok "non-UTF-8: path, ignored columns and skipped row by the Latin-1 rule"
else not_ok "non-UTF-8: path, ignored columns and skipped row by the Latin-1 rule" "got:  $got" "want: $want"; fi
expect_match "non-UTF-8: the escapes as written (\\u00e9, \\u00ff, \\t; u-umlaut as UTF-8)" \
    '"path": "[^"]*caf\\u00e9-\\u00ff-ü\.csv"' "$(cat "$TMP/bad.json")"
"$CALSCOPE" report --format csv --skip-bad-rows "$BAD_NAME" >"$TMP/bad.csv.out" 2>/dev/null
got=$(LC_ALL=C.UTF-8 /usr/bin/python3 -c '
import csv, io, sys
rows = list(csv.reader(io.StringIO(open(sys.argv[1], "rb").read().decode("utf-8"))))
print(rows[1][0].rsplit("/", 1)[1])' "$TMP/bad.csv.out" 2>&1)
expect_match "non-UTF-8: CSV is valid UTF-8 with the same reading of the name" "^café-ÿ-ü\.csv$" "$got"

# --- the --select length limit: 511 characters, stated in --help and in the refusal
TINY=$TMP/tiny.csv
printf 'label,p_0,p_1\n0,0.9,0.1\n1,0.2,0.8\n1,0.6,0.4\n' >"$TINY"
sel511="conf >= 0$(printf '%502s' '')"                    # 9 + 502 blanks
expect_rc "--select of 511 characters is taken" 0 "$CALSCOPE" report --select "$sel511" "$TINY"
expect_stderr "--select of 512 characters: refused, naming the limit" 2 \
    "calscope: --select: expression too long: 512 characters, at most 511"$'\n'"$HINT" \
    "$CALSCOPE" report --select "$sel511 " "$TINY"
run "$CALSCOPE" report --help
expect_match "--help states the --select limit" "joined with and;\s*$" "$(printf '%s\n' "$OUT" | grep -A1 -- "^  --select 'EXPR'" | tail -1)"
expect_match "--help states the --select limit (its next line)" "^ +at most 511 characters\)$" "$(printf '%s\n' "$OUT" | grep -A2 -- "^  --select 'EXPR'" | tail -1)"

# --- .npy logits read as probabilities: the refusal points at --npy-logits (every row fails the
# range or sum check); an array of probabilities with one bad row does not get that hint
/usr/bin/python3 - "$TMP" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(5)
z = rng.normal(0, 2, (50, 4)); z[0] = [1.5, -0.25, 0.5, 0.75]      # row 1: 1.5 is out of range
np.save(d + "/z.npy", z)
np.save(d + "/y.npy", rng.integers(0, 4, 50))
p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
np.save(d + "/p.npy", p)
q = np.abs(rng.normal(0.1, 0.02, (50, 4))); q[0] = [0.3, 0.2, 0.1, 0.2]   # in [0,1], sums off 1
np.save(d + "/q.npy", q)
p[7, 0] += 0.01                                                    # one row off by 0.01
np.save(d + "/p1.npy", p)
PY
NPY_HINT="; no row of the array is probabilities: if it holds logits, give --npy-logits"
expect_stderr ".npy logits without --npy-logits: the refusal names the flag" 3 \
    "calscope: $TMP/z.npy:1:1: probability outside [0,1] '1.5' in column 'p_0' (and 49 more bad rows)$NPY_HINT" \
    "$CALSCOPE" report --labels "$TMP/y.npy" "$TMP/z.npy"
expect_stderr ".npy scores in [0,1] that never sum to 1: the same hint" 3 \
    "calscope: $TMP/q.npy:1:1: probabilities sum to 0.8, not 1 within 0.001 (and 49 more bad rows)$NPY_HINT" \
    "$CALSCOPE" report --labels "$TMP/y.npy" "$TMP/q.npy"
expect_stderr ".npy logits with --skip-bad-rows: no usable rows, and the hint" 3 \
    "calscope: $TMP/z.npy: no usable rows: all 50 data rows were rejected (first: $TMP/z.npy:1:1: probability outside [0,1] '1.5' in column 'p_0')$NPY_HINT" \
    "$CALSCOPE" report --skip-bad-rows --labels "$TMP/y.npy" "$TMP/z.npy"
run "$CALSCOPE" report --format json --npy-logits --labels "$TMP/y.npy" "$TMP/z.npy"
a=$(json_get "d['files'][0]['metrics']['nll']")
run "$CALSCOPE" report --format json --labels "$TMP/y.npy" "$TMP/p.npy"
expect_match "... and with --npy-logits the same file measures as its softmax (to 1e-12)" "^True$" \
    "$(json_get "abs(d['files'][0]['metrics']['nll'] - $a) < 1e-12")"
expect_stderr ".npy probabilities with one bad row: no --npy-logits hint" 3 \
    "calscope: $TMP/p1.npy:8:1: probabilities sum to 1.01, not 1 within 0.001" \
    "$CALSCOPE" report --labels "$TMP/y.npy" "$TMP/p1.npy"

# --- --check: one line per check and file, passing ones too, in the order given; the value
# prints in full where six digits would put it on the other side of the bound
# (tiny.csv by hand: accuracy 2/3, NLL -(ln 0.9 + ln 0.8 + ln 0.4)/3 = 0.414932; the ECE of
# breast_cancer_gnb.csv is 0.05863852312248436)
expect_stderr "check: a passing gate prints one line" 0 \
    "calscope: check passed: $TINY: accuracy = 0.666667 >= 0.5" \
    "$CALSCOPE" report --check 'accuracy >= 0.5' "$TINY"
expect_stderr "check: passes and failures in the order given" 1 \
    "calscope: check passed: $TINY: accuracy = 0.666667 >= 0.5
calscope: check failed: $TINY: accuracy = 0.666667 (want accuracy>0.7)
calscope: check passed: $TINY: nll = 0.414932 < 1e+10" \
    "$CALSCOPE" report --check 'accuracy >= 0.5' --check 'accuracy>0.7' --check 'nll<1e10' "$TINY"
expect_stderr "check: a passing value prints in full when six digits would miss the bound" 0 \
    "calscope: check passed: samples/breast_cancer_gnb.csv: ece = 0.05863852312248436 > 0.05863852" \
    "$CALSCOPE" report --check 'ece>0.05863852' samples/breast_cancer_gnb.csv
expect_stderr "check: JSON output keeps stdout clean, the line goes to stderr" 0 \
    "calscope: check passed: $TINY: accuracy = 0.666667 >= 0.5" \
    "$CALSCOPE" report --format json --check 'accuracy >= 0.5' "$TINY"

# --- blank lines: skipped and counted, shown on the text report's load line and in JSON
# (load.blank_lines). Known by construction: one before the header, one every 1,000 rows, a
# line of blanks every 5,000 rows, one at the end; CRLF endings; big enough that the fast
# loader's threads each meet some, and read again by the general reader, gzip and stdin.
/usr/bin/python3 - "$TMP/blank.csv" <<'PY'
import random, sys
random.seed(1)
out, blank = ["\r\n", "label,p_0,p_1\r\n"], 1
for i in range(300000):
    p = random.random()
    out.append("%d,%.6f,%.6f\r\n" % (i % 2, p, 1 - p))
    if i % 1000 == 7: out.append("\r\n"); blank += 1
    if i % 5000 == 9: out.append("   \r\n"); blank += 1
out.append("\r\n"); blank += 1
assert blank == 362
open(sys.argv[1], "w", newline="").write("".join(out))
PY
gzip -k "$TMP/blank.csv"
for loader in auto csv; do
    run env CALSCOPE_LOADER=$loader "$CALSCOPE" report "$TMP/blank.csv"
    expect_match "blank lines ($loader loader): the text load line counts them" \
        "^  load      300000 rows read, 300000 used, 0 rejected; 2 classes; 362 blank lines skipped$" "$OUT"
    run env CALSCOPE_LOADER=$loader "$CALSCOPE" report --format json --ci 5 --threads 2 "$TMP/blank.csv"
    expect_match "blank lines ($loader loader, rows kept): JSON load.blank_lines" "^362$" "$(json_get "d['files'][0]['load']['blank_lines']")"
done
run "$CALSCOPE" report "$TMP/blank.csv.gz"
expect_match "blank lines (gzip): counted" "; 362 blank lines skipped$" "$(printf '%s\n' "$OUT" | grep '^  load')"
run sh -c "\"\$1\" report --format json - <\"\$2\"" sh "$CALSCOPE" "$TMP/blank.csv"
expect_match "blank lines (stdin): counted" "^362$" "$(json_get "d['files'][0]['load']['blank_lines']")"
run "$CALSCOPE" report --format json "$TINY"
expect_match "no blank line: blank_lines 0" "^0$" "$(json_get "d['files'][0]['load']['blank_lines']")"
run "$CALSCOPE" report "$TINY"
expect_no_match "no blank line: nothing about them in text" "blank" "$OUT"
printf 'label,p_0,p_1\n0,0.9,0.1\n\n1,0.2,0.8\n' >"$TMP/one_blank.csv"
run "$CALSCOPE" report "$TMP/one_blank.csv"
expect_match "one blank line: singular" "; 1 blank line skipped$" "$(printf '%s\n' "$OUT" | grep '^  load')"

# --- reduce: the closing summary on stderr (cases, voxels, wall time: the time matched by its
# form only), and a statistics file's load line counts cases and voxels; the voxels counted
# here by nibabel from the label maps' shapes
SEG=samples/seg/softmax
voxels=$(/usr/bin/python3 -c '
import csv, os, sys, numpy as np, nibabel as nib
d = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(d, "manifest.csv"))))
n = sum(int(np.prod(nib.load(os.path.join(d, r["labels"])).shape)) for r in rows)
print(len(rows), "{:,}".format(n))' "$SEG")
read -r n_cases n_voxels <<<"$voxels"
run "$CALSCOPE" reduce --label-values 0,1,2,4 -o "$TMP/seg.stats.csv" "$SEG/manifest.csv"
expect_match "reduce: exit 0 and one summary line ($n_cases cases, $n_voxels voxels)" \
    "^calscope: reduced $n_cases cases, $n_voxels voxels in [0-9]+\.[0-9] s$" "$ERR"
expect_match "reduce: exit 0" "^0$" "$RC"
run "$CALSCOPE" reduce --label-values 0,1,2,4 "$SEG/manifest.csv"
expect_match "reduce to stdout: the summary still on stderr" \
    "^calscope: reduced $n_cases cases, $n_voxels voxels in [0-9]+\.[0-9] s$" "$ERR"
expect_match "... and stdout is the statistics file alone" "^# calscope-stats 1$" "$(printf '%s\n' "$OUT" | head -1)"
run "$CALSCOPE" reduce --merge -o "$TMP/seg.merged.csv" "$TMP/seg.stats.csv"
expect_match "reduce --merge of one file: the summary" \
    "^calscope: merged 1 file: $n_cases cases, $n_voxels voxels in [0-9]+\.[0-9] s$" "$ERR"
run "$CALSCOPE" report "$TMP/seg.stats.csv"
expect_match "report of a statistics file: the load line counts cases and voxels" \
    "^  load      $n_cases cases, $n_voxels voxels; 4 classes$" "$(printf '%s\n' "$OUT" | grep '^  load')"
run "$CALSCOPE" report --label-values 0,1,2,4 "$SEG/manifest.csv"
expect_match "report of a manifest (reduced as it loads): the same load line" \
    "^  load      $n_cases cases, $n_voxels voxels; 4 classes$" "$(printf '%s\n' "$OUT" | grep '^  load')"
run "$CALSCOPE" reduce --label-values 0,1 "$SEG/manifest.csv"
expect_no_match "a refused reduce: no summary" "reduced" "$ERR"

# --- --compare of files that name the same classes in another column order: B is read in A's
# order (a file compared with itself reordered: every paired difference exactly 0, the tie row
# 0.5/0.5 included, whose top-1 class is the first in column order); a label that really differs
# is named by class; files whose class names differ pair by position, and a refusal says so
/usr/bin/python3 - "$TMP" <<'PY'
import random, sys
d = sys.argv[1]
random.seed(3)
rows = []
for i in range(400):
    p = random.random()
    rows.append([int(random.random() < p), 1 - p, p])
rows.append([0, 0.5, 0.5])                       # a tie: pred is the first class in column order
def write(name, header, rows, order, labels=("0", "1"), ids=False):
    with open(f"{d}/{name}", "w") as f:
        f.write(("id," if ids else "") + "label," + ",".join(header[c] for c in order) + "\n")
        for i, r in (sorted(enumerate(rows), key=lambda t: -t[0]) if ids else enumerate(rows)):
            f.write((f"s{i}," if ids else "") + labels[r[0]] + "," + ",".join(repr(r[1 + c]) for c in order) + "\n")
write("cmp_a.csv", ["p_0", "p_1"], rows, [0, 1])
write("cmp_b.csv", ["p_0", "p_1"], rows, [1, 0])                 # label,p_1,p_0
write("cmp_ida.csv", ["p_0", "p_1"], rows, [0, 1], ids=True)
write("cmp_idb.csv", ["p_0", "p_1"], rows, [1, 0], ids=True)     # rows reversed too
bad = [list(r) for r in rows]; bad[3][0] = 1 - bad[3][0]
write("cmp_b2.csv", ["p_0", "p_1"], bad, [1, 0])
write("cmp_c.csv", ["p_cat", "p_dog"], rows, [0, 1], labels=("cat", "dog"))
write("cmp_c2.csv", ["p_cat", "p_dog"], bad, [0, 1], labels=("cat", "dog"))
PY
ZERO='all(e["diff"] == 0 and e["equal"] and e["a"] == e["b"] for e in d["compare"]) and len(d["compare"]) > 5'
for pair in "cmp_a cmp_b" "cmp_ida cmp_idb" "cmp_b cmp_a"; do
    set -- $pair
    run "$CALSCOPE" report --format json --compare "$TMP/$1.csv" "$TMP/$2.csv"
    expect_match "compare $1 with $2 (the same data, classes in another order): exit 0" "^0$" "$RC"
    expect_match "compare $1 with $2: every paired difference 0, values equal" "^True$" "$(json_get "$ZERO")"
done
expect_stderr "compare: a label that really differs, by class name" 3 \
    "calscope: $TMP/cmp_b2.csv:5:1: --compare: label '1' of sample 4 differs from $TMP/cmp_a.csv:5 (label '0'); no id column in both: samples pair in file order" \
    "$CALSCOPE" report --compare "$TMP/cmp_a.csv" "$TMP/cmp_b2.csv"
expect_rc "compare: other class names, labels agreeing by position: exit 0" 0 \
    "$CALSCOPE" report --compare "$TMP/cmp_a.csv" "$TMP/cmp_c.csv"
expect_stderr "compare: other class names and a label that differs: the names are the cause named" 3 \
    "calscope: $TMP/cmp_c2.csv:5:1: --compare: label 'dog' of sample 4 differs from $TMP/cmp_a.csv:5 (label '0'); the files name different classes, which then pair by position: class 1 of 2 is '0' in $TMP/cmp_a.csv and 'cat' here; no id column in both: samples pair in file order" \
    "$CALSCOPE" report --compare "$TMP/cmp_a.csv" "$TMP/cmp_c2.csv"

done_testing
