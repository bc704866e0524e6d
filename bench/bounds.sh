#!/usr/bin/env bash
# Input bounds: small hostile files must not cost gigabytes. Times
# `calscope report` on 1 GiB of NUL bytes — as the header (plain, and gzipped to ~5 MB) and as
# one field of a data row after a valid header (plain and gzipped) — and prints wall time, peak
# RSS of the calscope process and the message it exits with. Before the input limits these took
# 12-43 s and 3.1-4.2 GB; each must now stop within the first MiB or two.
# A measurement, not a test: the exit status is 0 whatever the figures.
#
#   bench/bounds.sh [BUILD_DIR]   (default build; run.sh passes its BUILD_DIR)
# Environment: BENCH_DATA_DIR (default BUILD_DIR/bench). The gzipped inputs are generated once
# and kept (~5 MB each); the two plain 1 GiB files are written for the run and removed.
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
DIR=${BENCH_DATA_DIR:-$BUILD/bench}
CALSCOPE=$BUILD/calscope
PY=/usr/bin/python3
GIB=1073741824
row() { printf '%-44s %10s %12s  %s\n' "$@"; }
if [ ! -x "$CALSCOPE" ]; then echo "bounds bench: $CALSCOPE missing; skipped"; exit 0; fi
mkdir -p "$DIR"

nul_header=$DIR/nul_1g.csv
nul_field=$DIR/nul_field_1g.csv
head -c "$GIB" /dev/zero > "$nul_header"
{ printf 'label,p,note\n0,0.5,'; head -c "$GIB" /dev/zero; } > "$nul_field"
for f in "$nul_header" "$nul_field"; do
    [ -s "$f.gz" ] || { gzip -1 -c "$f" > "$f.gz.tmp" && mv "$f.gz.tmp" "$f.gz"; }
done

# wall seconds, peak RSS (MiB) of the child, exit status; the message on the last line
measure() {
    "$PY" - "$@" <<'EOF'
import resource, subprocess, sys, time
t = time.monotonic()
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
dt = time.monotonic() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
msg = p.stderr.decode(errors="replace").splitlines()
print(f"{dt:.3f} {rss:.1f} {p.returncode}")
print(msg[0] if msg else "")
EOF
}

echo
echo "bounds bench: calscope report on 1 GiB of NUL bytes (targets: refused with exit 3 in < 1 s"
echo "              and < 64 MB; before the limits: 12-43 s and 3.1-4.2 GB)"
row "case" "seconds" "peak RSS MB" "exit, message"
for spec in "NUL header, plain (1 GiB)|$nul_header" "NUL header, .csv.gz (1 GiB inside)|$nul_header.gz" \
            "NUL data field, plain (1 GiB)|$nul_field" "NUL data field, .csv.gz (1 GiB inside)|$nul_field.gz"; do
    name=${spec%%|*}
    file=${spec#*|}
    out=$(measure "$CALSCOPE" report "$file")
    read -r secs rss rc <<< "$(printf '%s\n' "$out" | head -1)"
    msg=$(printf '%s\n' "$out" | sed -n 2p | sed "s|$DIR/||")
    met=$(awk -v s="$secs" -v r="$rss" -v c="$rc" 'BEGIN{print (c == 3 && s < 1 && r < 64) ? "yes" : "no"}')
    row "$name" "$secs" "$rss" "$rc $met: $msg"
done
rm -f "$nul_header" "$nul_field"
exit 0
