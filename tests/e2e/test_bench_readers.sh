#!/usr/bin/env bash
# bench_readers (make bench-readers; docs/performance.md): the readers it
# times must give today's reader's doubles bit for bit, or the program says which row and exits
# 1; a reader that declines a row says so; the refusals of its input, verbatim. Nothing is timed
# here. The program sits beside the calscope under test (the plain build of make test or make
# bench-readers; make all does not build it, the sanitized build has none, and then this script
# only says it skipped).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BR="$(dirname "$CALSCOPE")/bench_readers"
if [ ! -x "$BR" ]; then
    echo "# skipped: no $BR (make test and make bench-readers build it in build/ only)"
    done_testing
fi

/usr/bin/python3 - "$TMP" <<'PY'
import random, sys
d = sys.argv[1]
random.seed(5)
def write(name, rows, header="label,p_0,p_1,p_2"):
    with open(f"{d}/{name}", "w") as f:
        f.write(header + "\n")
        for r in rows: f.write(",".join(r) + "\n")
rows = []
for i in range(300):
    w = [random.random() ** 4 + 1e-7 for _ in range(3)]; s = sum(w); p = [x / s for x in w]
    rows.append([str(random.randrange(3))] + ["%.12g" % x for x in p])   # the small ones as 3.2e-06
write("plain.csv", rows)
write("one.csv", rows[:4] + [["1", "1", "0", "0"]] + rows[4:])            # "1" and "0": no point
write("id.csv", [["7"] + r for r in rows], "id,label,p_0,p_1,p_2")
PY

expect_rc "plain %.12g rows: exit 0" 0 "$BR" -n 1 "$TMP/plain.csv"
expect_match "every reader's doubles equal A's" "every reader's doubles" "$OUT"
expect_match "the rows and probabilities read" "300 rows x 3 probabilities, best of 1 rounds" "$OUT"
expect_match "readers A, S, I and B are timed" "^A .*"$'\n'"S .*"$'\n'"I .*"$'\n'"B " "$OUT"
n=$(grep -c 'e-' "$TMP/plain.csv")
expect_match "the file has exponent-form numbers for the readers ($n lines)" '^[1-9][0-9]*$' "$n"

run "$BR" -n 1 "$TMP/one.csv"
expect_match "a row B does not read: exit 1" '^1$' "$RC"
expect_match "a row B does not read: message" \
    '^bench_readers: reader B declines data row 5 \(a field of a shape it does not read; the readers are measured on probabilities as %\.12g writes them\)$' "$ERR"

run "$BR" "$TMP/id.csv"
expect_match "a file not led by its label: exit 2" '^2$' "$RC"
expect_match "a file not led by its label: message" \
    "^$TMP/id.csv:1: the first column is not 'label' \\(bench_readers reads plain files: the label, then the probabilities\\)\$" "$ERR"

run "$BR"
expect_match "no file: exit 2" '^2$' "$RC"
expect_match "no file: usage" '^usage: bench_readers \[-n ROUNDS\] FILE\.csv \[ROWS\]$' "$ERR"
done_testing
