#!/usr/bin/env bash
# End-to-end tests of the dashboard's results keyed by what they show: a view
# draws a result with the dataset it was computed on. Two segmentation files with different case
# counts, the Cases view, then `f`: before, the view indexed the second file's case names with
# the first file's per-case result and the dashboard died of SIGSEGV. Polls for states (lib.sh);
# no check depends on elapsed time.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SOCK="calscope-keyed-$$-$RANDOM"
trap 'T kill-server >/dev/null 2>&1; rm -rf "$TMP"' EXIT

# Two segmentation files: MANY with 400 cases (every name "zzNNN"), ONE
# with a single case. Each case is 50 pixels over 3 classes.
/usr/bin/python3 - "$TMP" <<'PY'
import random, sys
random.seed(7)
def write(path, cases):
    with open(path, "w") as f:
        f.write("case,label,p_bg,p_organ,p_lesion\n")
        for name in cases:
            for _ in range(50):
                p = [random.random() + 0.05 for _ in range(3)]
                s = sum(p); p = [x / s for x in p]
                f.write(f"{name},{random.randrange(3)},{p[0]!r},{p[1]!r},{1 - p[0] - p[1]!r}\n")
write(sys.argv[1] + "/many.csv", [f"zz{i:03d}" for i in range(400)])
write(sys.argv[1] + "/one.csv", ["solo"])
PY

T new-session -d -x 80 -y 24 "$CALSCOPE $TMP/many.csv $TMP/one.csv; echo EXITED \$?; sleep 86400"
T set-option -g remain-on-exit on >/dev/null 2>&1
check_screen "the dashboard shows the first file" 'ECE +[0-9.]+' 60
keys 6
check_screen "view 6 lists the first file's cases" 'zz[0-9]{3}' 60
keys f
check_screen "after f: the second file's only case" 'solo' 60
if printf '%s' "$SCREEN" | grep -Eq 'EXITED|SIG'; then
    not_ok "the dashboard is still running after f" "$SCREEN"
else
    ok "the dashboard is still running after f"
fi
expect_no_match "no case of the first file drawn beside the second file's name" 'zz[0-9]{3}' "$SCREEN"
keys f
check_screen "f again: back to the first file's cases" 'zz[0-9]{3}' 60
keys q
check_screen "q quits with status 0" 'EXITED 0' 60
done_testing
