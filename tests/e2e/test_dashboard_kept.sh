#!/usr/bin/env bash
# End-to-end test of the dashboard's kept results: after the lens goes round from top1 to full
# (each lens's metrics computed) and back to top1, the very first frame that says top1 already
# shows top1's numbers, not dimmed and not `~stale`, and the status line says `ready`: nothing
# was submitted. (Before, only the latest result was kept: top1 was recomputed and shown
# `~stale` with `metrics +1 0%` meanwhile.) A file large enough that a recompute spans many
# frames; each check polls the screen for a state (lib.sh), LIVENESS only catches hangs.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

tmux_servers kept

# 200,000 rows x 10 classes: a metrics recompute takes many frames, so a recompute cannot hide
# between two captures
big_csv "$TMP/big.csv"

new_server
T new-session -d -x 80 -y 24 "$CALSCOPE $TMP/big.csv; echo EXITED \$?; sleep 86400"
status_is() { printf '%s\n' "$SCREEN" | tail -n 1 | grep -Eq -- "$1"; }
wait_status() { poll "${2:-0}" status_is "$1"; }

if wait_status '\| top1 \|.* ready *$' 120; then ok "kept: top1 computed"
else not_ok "kept: top1 computed" "$SCREEN"; fi
# l: topk, class, classwise, full — each one's result computed before the next key
for lens in topk class classwise full; do
    keys l
    if wait_status "\\| $lens[^|]*\\|.* ready *\$" 120; then ok "kept: $lens computed"
    else not_ok "kept: $lens computed" "$SCREEN"; fi
done
# l once more: back to top1 (the file has no groups)
keys l
if wait_status '\| top1 \|'; then
    # the first captured frame of top1: already the kept result
    if printf '%s' "$SCREEN" | grep -q -- '~stale'; then
        not_ok "kept: back to top1, no ~stale" "$SCREEN"
    else ok "kept: back to top1, no ~stale"; fi
    if status_is ' ready *$'; then ok "kept: back to top1, nothing recomputed (ready)"
    else not_ok "kept: back to top1, nothing recomputed (ready)" "$SCREEN"; fi
else
    not_ok "kept: back to top1" "$SCREEN"
fi
done_testing
