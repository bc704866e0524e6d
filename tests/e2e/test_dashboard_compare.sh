#!/usr/bin/env bash
# End-to-end test of "one comparison" (every panel shows the numbers of one computation): the
# Compare view's diagrams panel, its methods panel and `calscope report --compare` show the same
# paired difference of ECE, the same 95% interval and the same P for the same two files and seed,
# and `:` on either panel prints a command (with --compare) that, run, prints those numbers. Before,
# the diagrams panel used 200 resamples and the methods table resampled in the method's row order,
# so the three differed. The second file is the first's partner with its rows shuffled (paired by
# id), which is what made the orders differ. Polls for states (lib.sh); no check depends on elapsed
# time.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SOCK="calscope-compare-$$-$RANDOM"
trap 'T kill-server >/dev/null 2>&1; rm -rf "$TMP"' EXIT

# The first 400 digits (ids 0..399) of two models: what is checked holds on any pair, and the
# dashboard's 1000 paired resamples of every metric (smooth ECE's search among them) cost a
# quarter of the whole file's (the suite's CPU time on a shared machine).
head -n 401 samples/digits_logreg.csv >"$TMP/a.csv"
/usr/bin/python3 - samples/digits_ts.csv "$TMP/b.csv" <<'PY'
import random, sys
rows = open(sys.argv[1]).read().splitlines(True)
body = rows[1:401]
random.Random(3).shuffle(body)
open(sys.argv[2], "w").write(rows[0] + "".join(body))
PY

# paired NAME: "diff lo hi P" of NAME's paired column on the screen ("" when it has none)
paired() {
    printf '%s' "$SCREEN" | /usr/bin/python3 -c '
import re, sys
name = sys.argv[1]
pat = re.compile(r"^[ >]?" + re.escape(name) + r" .*?([+-]\d\.\d{4}) \[([+-]\d\.\d{4}),([+-]\d\.\d{4})\]!?\*? +(\d\.\d{3}|=)")
got = ""
for line in sys.stdin.read().split("\n"):
    m = pat.match(line)
    if m: got = " ".join(m.groups())
print(got)' "$1"
}
# report_paired METHOD_INDEX ARGS...: "diff lo hi P" of that method's ECE row in the methods
# table of `calscope report --format json ARGS...`
report_paired() {
    local i=$1; shift
    run "$CALSCOPE" report --format json "$@"
    json_get "(lambda e: ' '.join(['%+.4f' % e['diff'], '%+.4f' % e['lo'], '%+.4f' % e['hi'], '%.3f' % e['p_better']]))(d['methods'][$i]['vs_reference']['ece'])" 2>/dev/null
}
# expect_same NAME GOT WANT
expect_same() {
    if [ -n "$2" ] && [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "shown '$2', want '$3'"; fi
}

# the report, independently of the dashboard: its two-file table (A - B, P(A better)) turned
# round is its methods table's row (B - A, P(B better))
run "$CALSCOPE" report --format json --compare --seed 5 "$TMP/a.csv" "$TMP/b.csv"
pair=$(json_get "(lambda e: ' '.join(['%+.4f' % -e['diff'], '%+.4f' % -e['hi'], '%+.4f' % -e['lo'], '%.3f' % (1 - e['p_better'] - e['p_equal'])]))([e for e in d['compare'] if e['metric'] == 'ece'][0])" 2>/dev/null)
want=$(report_paired 1 --compare --seed 5 "$TMP/a.csv" "$TMP/b.csv")
expect_same "report: the two-file table and the methods table give one answer" "$pair" "$want"

T new-session -d -x 80 -y 24 "$CALSCOPE --seed 5 $TMP/a.csv $TMP/b.csv; echo EXITED \$?; sleep 86400"
T set-option -g remain-on-exit on >/dev/null 2>&1
check_screen "the dashboard shows the first file" 'ECE +[0-9.]+' 60
keys 5
check_screen "diagrams panel: b.csv's paired difference" '^b\.csv .*\]!?\*? +[0-9.=]+' 120
check_screen "diagrams panel: the resample count is stated" 'share of 1000 resamples' 10
expect_same "diagrams panel = report --compare" "$(paired b.csv)" "$want"

keys :
check_cmdline "':' on the diagrams panel shows the command line"
cmd=$CMD
keys Escape
expect_match "':' on the diagrams panel prints --compare and the seed" ' --compare .*--seed 5 ' "$cmd"
eval "set -- ${cmd#calscope report }"
expect_same "the diagrams panel's ':' command prints the panel's numbers" "$(report_paired 1 "$@")" "$want"

keys p
check_screen "methods panel: b.csv's paired difference" '^[ >]b\.csv +[0-9.]+ +[+-][0-9.]+ \[' 120
expect_same "methods panel = report --compare" "$(paired b.csv)" "$want"
keys :
check_cmdline "':' on the methods panel shows the command line"
cmd=$CMD
keys Escape
eval "set -- ${cmd#calscope report }"
expect_same "the methods panel's ':' command prints the panel's numbers" "$(report_paired 1 "$@")" "$want"

# intervals on (i): the methods panel shows each value's interval; `:` gives --ci and the report
# prints the same interval of b.csv's ECE
keys i
check_screen "i: the methods panel shows value intervals" '^[ >]b\.csv +[0-9.]+ \[[0-9.]+,[0-9.]+\]' 120
ci_shown=$(printf '%s' "$SCREEN" | grep -E '^[ >]b\.csv +[0-9.]+ \[' | tail -1 | sed -E 's/^[ >]b\.csv +[0-9.]+ (\[[0-9.]+,[0-9.]+\]).*/\1/')
keys :
check_cmdline "':' with intervals on shows the command line"
cmd=$CMD
keys Escape
expect_match "':' with intervals on prints --ci" ' --ci [0-9]+ ' "$cmd"
eval "set -- ${cmd#calscope report }"
run "$CALSCOPE" report --format json "$@"
ci_report=$(json_get "'[%.4f,%.4f]' % tuple(d['methods'][1]['metrics']['ece_ci'])" 2>/dev/null)
expect_same "the value interval shown is the report's" "$ci_shown" "$ci_report"

# the active file is the reference: f makes b.csv the reference on every panel, `:` says
# --reference 2, and a.csv's row is then b's turned round
keys p p f
check_screen "diagrams panel after f: a.csv against b.csv" '^a\.csv .*\]!?\*? +[0-9.=]+' 120
want2=$(report_paired 0 --compare --reference 2 --seed 5 "$TMP/a.csv" "$TMP/b.csv")
expect_same "diagrams panel after f = report --compare --reference 2" "$(paired a.csv)" "$want2"
keys :
check_cmdline "':' after f shows the command line"
cmd=$CMD
keys Escape
expect_match "':' after f prints --reference 2" ' --reference 2 ' "$cmd"
eval "set -- ${cmd#calscope report }"
expect_same "the ':' command after f prints the panel's numbers" "$(report_paired 0 "$@")" "$want2"

keys q
check_screen "q quits with status 0" 'EXITED 0' 60
T kill-server >/dev/null 2>&1
SOCK="$SOCK-mix"             # a fresh server: the old one may still be going away

# refused_alike WHAT MSG ARGS...: `calscope report ARGS` and the dashboard on ARGS both exit 2 with
# MSG (a regex), the dashboard once its files are loaded: one rule in session/ for both
refused_alike() {
    local what=$1 msg=$2; shift 2
    expect_rc "report: $what is a usage error" 2 "$CALSCOPE" report "$@"
    expect_match "report: the message" "^$msg" "$ERR"
    T new-session -d -x 80 -y 24 "$CALSCOPE $*; echo EXITED \$?; sleep 86400"
    T set-option -g remain-on-exit on >/dev/null 2>&1
    check_screen "dashboard: $what exits with status 2" 'EXITED 2' 60
    expect_match "dashboard: the report's message" "$msg" "$SCREEN"
    expect_match "dashboard: the pointer to its --help" 'Try `calscope --help`' "$SCREEN"
    T kill-server >/dev/null 2>&1
    SOCK="$SOCK-x"            # a fresh server: the old one may still be going away
}
# taken WHAT PATTERN ARGS...: the dashboard on ARGS shows PATTERN, and q quits with status 0
taken() {
    local what=$1 pat=$2; shift 2
    T new-session -d -x 80 -y 24 "$CALSCOPE $*; echo EXITED \$?; sleep 86400"
    T set-option -g remain-on-exit on >/dev/null 2>&1
    check_screen "dashboard: $what is taken" "$pat" 60
    keys q
    check_screen "and q quits with status 0" 'EXITED 0' 60
    T kill-server >/dev/null 2>&1
    SOCK="$SOCK-x"
}

# --mixture changes RECE-M only: refused when no file has id and tta columns (ss_mixture_unused)
refused_alike "--mixture gmm3 without id/tta" \
    'calscope: --mixture needs an id/tta long file \(it only changes RECE-M\); no FILE has id and tta columns' \
    --mixture gmm3 samples/digits_ts.csv
taken "--mixture gmm3 on an id/tta file" 'RECE-M +[0-9.]+' --mixture gmm3 samples/digits_tta.csv

# --renormalize rescales rows of class probabilities: refused on logit_ columns alone
# (ss_rows_unused), taken when one file has such rows
refused_alike "--renormalize on logit_ columns" \
    'calscope: --renormalize rescales rows of class probabilities; no FILE has them \(logits, a binary p column and statistics files have no row to rescale\)' \
    --renormalize samples/digits_logreg_logits.csv
taken "--renormalize with a file of probabilities among them" 'ECE +[0-9.]+' \
    --renormalize samples/digits_logreg_logits.csv samples/digits_ts.csv
done_testing
