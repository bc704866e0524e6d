#!/usr/bin/env bash
# Every compressed input kind calscope reads, written by other writers (tests/e2e/gzip_writers.py):
# Python's gzip and zlib at levels 1, 6 and 9, igzip at 1 and 3, two concatenated members; zipfile
# deflated at 1, 6 and 9 and zip64 for .npz. A prediction CSV, a statistics file, NIfTI volumes
# and npz volumes each give the numbers of the uncompressed (or stored) file, from a file and
# (CSV, statistics) through stdin. A statistics file with a byte of its deflate data flipped is
# refused in Python zlib's words, a flipped CRC as "incorrect data check"; a gzip bomb (a 256 MiB
# field in 1.2 MB) is refused at the field limit within a few MB of memory.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PY=/usr/bin/python3
GEN=tests/e2e/gzip_writers.py
D=$TMP/w
mkdir -p "$D"

expect_eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "want: $2" "got:  $3"; fi; }

"$CALSCOPE" reduce --label-values 0,1,2,4 -o "$D/stats.csv" samples/seg/softmax/manifest.csv 2>/dev/null \
    || { not_ok "reducing the samples"; exit 1; }
$PY $GEN write "$D" "$D/stats.csv" >"$D/list" || { not_ok "writing the streams"; exit 1; }

# report FILE OUT.json [ARGS...]: the JSON report of FILE (exit 0 expected)
report() {
    local f=$1 out=$2; shift 2
    "$CALSCOPE" report --format json --lens classwise "$@" "$f" >"$out" 2>"$TMP/err"
}
same() { $PY $GEN same "$1" "$2"; }

while read -r kind name path ref; do
    case $kind in
    csv|stats)
        report "$ref" "$D/ref.json"
        report "$path" "$D/got.json"
        expect_eq "$kind by $name: the uncompressed file's numbers" same "$(same "$D/ref.json" "$D/got.json")"
        ;;&
    csv)   # (a statistics file is recognised by name, never on stdin)
        "$CALSCOPE" report --format json --lens classwise - <"$path" >"$D/stdin.json" 2>"$TMP/err"
        expect_eq "$kind by $name through stdin: the same numbers" same "$(same "$D/ref.json" "$D/stdin.json")"
        ;;
    volume)
        report "$ref" "$D/ref.json" --label-values 0,1,2,4
        report "$path" "$D/got.json" --label-values 0,1,2,4
        expect_eq "volumes $name: the uncompressed (stored) files' numbers" same "$(same "$D/ref.json" "$D/got.json")"
        ;;
    esac
done <"$D/list"
expect_eq "every writer was read" 32 "$(wc -l <"$D/list" | tr -d ' ')"

# a flipped byte in the deflate data of a statistics file (its code tables, then its data):
# Python zlib's words, exactly
gzip -6 -n -c "$D/stats.csv" >"$D/stats6.csv.gz"
$PY $GEN flips "$D" "$D/stats.csv" >"$D/flips"
[ -s "$D/flips" ] || not_ok "some flipped byte breaks the deflate data"
while read -r path words; do
    run "$CALSCOPE" report "$path"
    expect_eq "statistics, byte $(basename "$path" .csv.gz) flipped: refused in zlib's words" \
        "3 calscope: $path: cannot read: $words" "$RC $ERR"
done <"$D/flips"
# the CRC (the trailer's first byte) flipped
$PY -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[-8]^=1; open(sys.argv[2],'wb').write(b)" \
    "$D/stats6.csv.gz" "$D/crc.csv.gz"
run "$CALSCOPE" report "$D/crc.csv.gz"
expect_eq "statistics, CRC flipped" "3 calscope: $D/crc.csv.gz: cannot read: incorrect data check" "$RC $ERR"
run "$CALSCOPE" reduce --merge -o "$D/merged.csv" "$D/crc.csv.gz"
expect_eq "statistics, CRC flipped, merged: the same refusal" "3 calscope: $D/crc.csv.gz: cannot read: incorrect data check" "$RC $ERR"

# a gzip bomb: refused at the field limit, never inflated whole
bomb=$($PY $GEN bomb "$D")
/usr/bin/time -f '%M' -o "$D/rss" "$CALSCOPE" report "$bomb" >"$TMP/out" 2>"$TMP/err"
RC=$?
expect_eq "a 256 MiB field in 1.2 MB of gzip: refused at the limit" \
    "3 calscope: $bomb:2:2: field longer than 1048576 bytes (the limit)" "$RC $(cat "$TMP/err")"
rss=$(tail -1 "$D/rss")
if grep -q __asan_init "$CALSCOPE"; then
    ok "# skip: the bomb's peak RSS under ASan (its quarantine keeps freed blocks: ~400 MB)"
elif [ "$rss" -lt 65536 ]; then ok "the bomb is refused within 64 MB ($rss KB)"; else not_ok "the bomb's peak RSS" "$rss KB"; fi

done_testing
