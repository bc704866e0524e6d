#!/usr/bin/env bash
# End-to-end tests of .npz prediction files: `np.savez(f, probs=P, labels=y)` is a prediction
# file wherever a CSV is (report, dashboard, --follow). The archives are written by numpy and the
# same numbers as a CSV (%.17g: every double reads back exactly), so the report of the .npz must
# equal the report of the CSV in every JSON field but the path: stored and deflated archives,
# every pair of member names, Fortran order, logits with --npy-logits, --skip-bad-rows. Then every
# refusal, verbatim; then a follow of .npz epochs written in place in pieces (never half a file).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PY=/usr/bin/python3

$PY - "$TMP" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(21)
n, k = 300, 4
p = rng.dirichlet([0.6] * k, size=n)
y = rng.integers(0, k, n)
def csv(name, cols, vals, label):
    with open(f'{d}/{name}', 'w') as f:
        f.write(','.join(['label'] + cols) + '\n')
        for i in range(n):
            f.write(','.join([str(int(label[i]))] + ['%.17g' % v for v in vals[i]]) + '\n')
csv('p.csv', ['p_%d' % j for j in range(k)], p, y)
np.savez(f'{d}/probs.npz', probs=p, labels=y)
np.savez_compressed(f'{d}/deflated.npz', probabilities=p, y=y.astype(np.uint8))
np.savez(f'{d}/fortran.npz', probs=np.asfortranarray(p), y=y.astype(np.float32), epoch=np.array(3))
z = rng.normal(0, 2, (n, k))
np.savez(f'{d}/logits.npz', logits=z, probs=p, labels=y)   # --npy-logits reads 'logits'
csv('z.csv', ['logit_%d' % j for j in range(k)], z, y)
q = p.copy(); q[4, 0] += 0.01
np.savez(f'{d}/sum.npz', probs=q, labels=y)
csv('sum.csv', ['p_%d' % j for j in range(k)], q, y)
# broken ones
np.savez(f'{d}/noprobs.npz', scores=p, labels=y)
np.savez(f'{d}/nolabels.npz', probs=p, target=y)
np.savez(f'{d}/both.npz', probs=p, probabilities=p, labels=y)
np.savez(f'{d}/bothy.npz', probs=p, labels=y, y=y)
np.savez(f'{d}/onlylogits.npz', logits=z, labels=y)
np.savez(f'{d}/shape.npz', probs=p[:, 0], labels=y)
np.savez(f'{d}/shape3.npz', probs=p.reshape(n, 2, 2), labels=y)
np.savez(f'{d}/yshape.npz', probs=p, labels=np.stack([y, y], axis=1))
np.savez(f'{d}/short.npz', probs=p, labels=y[:40])
r = p.copy(); r[11, 2] = 1.25
np.savez(f'{d}/range.npz', probs=r, labels=y)
yy = y.astype(np.float64); yy[11] = 1.5
np.savez(f'{d}/yhalf.npz', probs=p, labels=yy)
np.savez(f'{d}/complex.npz', probs=p.astype(np.complex128), labels=y)
raw = open(f'{d}/probs.npz', 'rb').read()
open(f'{d}/trunc.npz', 'wb').write(raw[:len(raw) - 30])        # its central directory cut
open(f'{d}/notzip.npz', 'wb').write(b'label,p_0,p_1\n')
# a member whose data is cut but whose central directory is whole: the zip is rebuilt with the
# probabilities member's bytes shortened (sizes and CRC recomputed), so only numpy's header
# disagrees with the data
import io, zipfile
src = zipfile.ZipFile(f'{d}/probs.npz')
with zipfile.ZipFile(f'{d}/cutmember.npz', 'w') as out:
    for name in src.namelist():
        data = src.read(name)
        out.writestr(name, data[:-800] if name == 'probs.npy' else data)
PY

# npz_vs_csv NAME NPZ CSV [FLAGS...]
npz_vs_csv() {
    local name=$1 npz=$2 csv=$3; shift 3
    run "$CALSCOPE" report --format json "$@" "$npz"
    if [ "$RC" -ne 0 ]; then not_ok "$name" "npz: exit $RC: ${ERR:0:300}"; return; fi
    printf '%s' "$OUT" >"$TMP/a.json"
    # --npy-logits is for the array files only: the CSV names logit_ columns
    local a f=()
    for a in "$@"; do [ "$a" = --npy-logits ] || f+=("$a"); done
    run "$CALSCOPE" report --format json "${f[@]}" "$csv"
    if [ "$RC" -ne 0 ]; then not_ok "$name" "csv: exit $RC: ${ERR:0:300}"; return; fi
    printf '%s' "$OUT" >"$TMP/b.json"
    same_json "$name" "$TMP/a.json" "$TMP/b.json"
}

npz_vs_csv "np.savez(probs=, labels=) = CSV" "$TMP/probs.npz" "$TMP/p.csv"
npz_vs_csv "np.savez_compressed(probabilities=, y=uint8) = CSV" "$TMP/deflated.npz" "$TMP/p.csv"
npz_vs_csv "Fortran order, float labels, another member beside" "$TMP/fortran.npz" "$TMP/p.csv"
npz_vs_csv "--npy-logits reads 'logits' = logit_ columns" "$TMP/logits.npz" "$TMP/z.csv" --npy-logits
npz_vs_csv "class-wise lens, intervals" "$TMP/probs.npz" "$TMP/p.csv" --lens classwise --bins 10 --ci 50 --seed 7
npz_vs_csv "--skip-bad-rows drops the same row" "$TMP/sum.npz" "$TMP/sum.csv" --skip-bad-rows
npz_vs_csv "without --npy-logits, 'probs' beside 'logits' is read" "$TMP/logits.npz" "$TMP/p.csv"
run "$CALSCOPE" report --format json --skip-bad-rows "$TMP/sum.npz"
expect_match "--skip-bad-rows names the row FILE[MEMBER]:ROW:COL" \
    "\"skipped\": \[\"$TMP/sum.npz\[probs.npy\]:5:1: probabilities sum to 1.01, not 1 within 0.001\"\]" "$OUT"
run "$CALSCOPE" report "$TMP/probs.npz"
expect_match "text report: classes named 0..K-1" 'load +300 rows read, 300 used, 0 rejected; 4 classes' "$OUT"

# refused NAME STATUS WANT-STDERR ARGS...: the report exits STATUS saying exactly WANT-STDERR
refused() {
    local name=$1 rc=$2 want=$3; shift 3
    run "$CALSCOPE" report "$@"
    if [ "$RC" -eq "$rc" ] && [ "$ERR" = "$want" ]; then ok "$name"
    else not_ok "$name" "exit $RC (want $rc)" "got:  $ERR" "want: $want"; fi
}
usage() { local name=$1; shift; refused "$name" 2 "$@"; }
bad() { local name=$1; shift; refused "$name" 3 "$@"; }

# refusals: usage (2)
usage "--labels with an .npz" \
    "calscope: $TMP/probs.npz: --labels is for .npy prediction files (an .npz holds its labels: member 'labels' or 'y')" \
    --labels "$TMP/p.csv" "$TMP/probs.npz"
usage "--delimiter with an .npz" "calscope: $TMP/probs.npz: --delimiter is for CSV files, not an .npz" \
    --delimiter ';' "$TMP/probs.npz"

# refusals: input (3), naming the file and the member
bad "no probabilities member" \
    "calscope: $TMP/noprobs.npz: no probabilities: want a member 'probs' or 'probabilities' (members: scores.npy, labels.npy)" \
    "$TMP/noprobs.npz"
bad "no labels member" \
    "calscope: $TMP/nolabels.npz: no labels: want a member 'labels' or 'y' (members: probs.npy, target.npy)" \
    "$TMP/nolabels.npz"
bad "both probabilities names" \
    "calscope: $TMP/both.npz: members 'probs' and 'probabilities' are both probabilities: keep one" "$TMP/both.npz"
bad "both label names" "calscope: $TMP/bothy.npz: members 'labels' and 'y' are both labels: keep one" "$TMP/bothy.npz"
bad "only logits, no --npy-logits" \
    "calscope: $TMP/onlylogits.npz: the member 'logits' holds logits: give --npy-logits" "$TMP/onlylogits.npz"
bad "--npy-logits, no logits member" \
    "calscope: $TMP/probs.npz: no logits: want a member 'logits' with --npy-logits (members: probs.npy, labels.npy)" \
    --npy-logits "$TMP/probs.npz"
bad "1-D probabilities" \
    "calscope: $TMP/shape.npz[probs.npy]: want an N x K array of probabilities, not shape (300,)" "$TMP/shape.npz"
bad "3-D probabilities" \
    "calscope: $TMP/shape3.npz[probs.npy]: want an N x K array of probabilities, not shape (300, 2, 2)" "$TMP/shape3.npz"
bad "2-D labels" "calscope: $TMP/yshape.npz[labels.npy]: want N labels, shape (N,), not (300, 2)" "$TMP/yshape.npz"
bad "label count" "calscope: $TMP/short.npz[labels.npy]: 40 labels, but $TMP/short.npz[probs.npy] has 300 rows" \
    "$TMP/short.npz"
bad "probability out of range" \
    "calscope: $TMP/range.npz[probs.npy]:12:3: probability outside [0,1] '1.25' in column 'p_2'" "$TMP/range.npz"
bad "label not an integer" "calscope: $TMP/yhalf.npz[labels.npy]:12:1: label '1.5' is not an integer" "$TMP/yhalf.npz"
bad "complex dtype" \
    "calscope: $TMP/complex.npz[probs.npy]: unsupported dtype '<c16' (want <f2 <f4 <f8 |u1 |i1 <i2 <u2 <i4 <u4 <i8 <u8 |b1, or > for big-endian)" \
    "$TMP/complex.npz"
bad "truncated zip (no central directory)" \
    "calscope: $TMP/trunc.npz: truncated or corrupt zip archive (no central directory)" "$TMP/trunc.npz"
bad "a member cut short" "calscope: $TMP/cutmember.npz[probs.npy]: truncated: 1100 of 1200 values" "$TMP/cutmember.npz"
bad "not a zip" "calscope: $TMP/notzip.npz: not an npz file (bad magic)" "$TMP/notzip.npz"
bad "missing" "calscope: $TMP/none.npz: cannot open: No such file or directory" "$TMP/none.npz"

# paths FILE: the files of an ndjson's lines, with their status when they failed
paths() { $PY -c 'import json,sys; [print(d["path"].rsplit("/",1)[1], d.get("status","")) for d in map(json.loads, open(sys.argv[1]))]' "$1"; }

# ---- --follow: .npz epochs written in place in pieces ------------------------------------------
# Each piece is followed by a CSV renamed in (reported at once): once its line is out, the follow
# has looked at the .npz as it was after that piece, and must not have reported it. The pieces
# cut the archive in its member data, just before its central directory, inside it, and two
# bytes before the end of its end record. No check depends on elapsed time.
lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }
wait_out() {   # FILE N: until FILE has N lines (60 s liveness, not a timing claim)
    local end=$((SECONDS + 60))
    while [ "$(lines "$1")" -lt "$2" ]; do [ "$SECONDS" -lt "$end" ] || return 1; sleep 0.05; done
}
F=$TMP/follow
mkdir -p "$F"
read -r CD EOCD SIZE < <($PY - "$TMP/deflated.npz" <<'PY'
import sys
raw = open(sys.argv[1], 'rb').read()
eocd = raw.rindex(b'PK\x05\x06')
print(int.from_bytes(raw[eocd + 16:eocd + 20], 'little'), eocd, len(raw))
PY
)
cp samples/iris_gnb.csv "$F/e0.csv"
touch -d '1 hour ago' "$F/e0.csv"
"$CALSCOPE" report --follow "$F" --format ndjson --settle 1800 >"$TMP/f.nd" 2>"$TMP/f.err" &
PID=$!
wait_out "$TMP/f.nd" 1 && ok "follow: the file already there" || not_ok "follow start" "$(cat "$TMP/f.err")"
at=0 n=1
for cut in $((CD / 2)) "$CD" $((CD + 40)) $((SIZE - 2)); do
    tail -c +$((at + 1)) "$TMP/deflated.npz" | head -c $((cut - at)) >>"$F/e1.npz"
    at=$cut
    cp samples/iris_gnb.csv "$F/.m" && mv "$F/.m" "$F/m$n.csv"
    n=$((n + 1))
    wait_out "$TMP/f.nd" "$n" || not_ok "follow: marker $n" "$(cat "$TMP/f.err")"
done
if grep -q 'e1.npz' "$TMP/f.nd"; then not_ok "follow: no half-written .npz reported" "$(paths "$TMP/f.nd")"
else ok "follow: no half-written .npz reported (4 pieces, each seen)"; fi
tail -c +$((at + 1)) "$TMP/deflated.npz" >>"$F/e1.npz"
wait_out "$TMP/f.nd" $((n + 1)) && ok "follow: the .npz once its central directory is whole" \
    || not_ok "follow: .npz whole" "$(paths "$TMP/f.nd")"
kill -TERM $PID
wait $PID
"$CALSCOPE" report --format json "$F/e1.npz" >"$TMP/e1.json"
if $PY - "$TMP/f.nd" "$TMP/e1.json" <<'PY'
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
assert [l["path"].rsplit("/", 1)[1] for l in ls] == ["e0.csv", "m1.csv", "m2.csv", "m3.csv", "m4.csv", "e1.npz"], ls
got = dict(ls[-1]); del got["seq"]
assert got == json.load(open(sys.argv[2]))["files"][0]
assert got["rows"] == 300
PY
then ok "follow: one line for the .npz, the report's entry, all 300 rows"
else not_ok "follow: the .npz line" "$(paths "$TMP/f.nd")" "$(cat "$TMP/f.err")"; fi
if [ ! -s "$TMP/f.err" ] || ! grep -q 'e1.npz' "$TMP/f.err"; then ok "follow: no load of the half-written .npz tried"
else not_ok "follow: stderr names e1.npz" "$(cat "$TMP/f.err")"; fi

# ---- the dashboard opens an .npz --------------------------------------------------------------
run "$CALSCOPE" report --format json "$TMP/probs.npz"
ECE=$(json_get '"%.4f" % d["files"][0]["metrics"]["ece"]')
tmux_servers npz
BIN=$(cd "$(dirname "$CALSCOPE")" && pwd)/$(basename "$CALSCOPE")
new_server
T new-session -d -x 80 -y 24 "'$BIN' '$TMP/probs.npz'; echo EXITED \$?; sleep 86400"
check_screen "dashboard: the .npz loads" 'rows 300 used 300 rejected 0' 30
check_screen "dashboard: the report's ECE" "ECE +$ECE"
keys q
check_screen "dashboard: q quits with status 0" 'EXITED 0$'

done_testing
