#!/usr/bin/env bash
# End-to-end: the dashboard on segmentation statistics. A statistics file and a
# manifest open like prediction files: the reliability view and its metrics, the Cases view
# (per-case metrics and the dataset reliability histogram), the Variance view resampling cases,
# the Classes view; what needs per-voxel values says why instead of drawing nothing. Polls for
# states (lib.sh); no check depends on elapsed time.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
tmux_servers seg

# four small softmax cases (MONAI layout) and their statistics
/usr/bin/python3 - "$TMP" <<'EOF'
import sys, os, numpy as np, nibabel as nib
out = sys.argv[1]
rng = np.random.default_rng(5)
with open(os.path.join(out, "manifest.csv"), "w") as man:
    man.write("case,probs,labels\n")
    for i in range(4):
        case = f"brain{i:02d}"
        logits = rng.normal(size=(8, 7, 6, 4)) * 2
        p = np.exp(logits); p /= p.sum(-1, keepdims=True)
        lab = np.argmax(p + rng.normal(size=p.shape) * 0.3, -1).astype(np.uint8)
        vals = np.array([0, 1, 2, 4], np.uint8)
        nib.save(nib.Nifti1Image(p.astype(np.float32), np.eye(4)), os.path.join(out, case + "_prob.nii.gz"))
        nib.save(nib.Nifti1Image(vals[lab], np.eye(4)), os.path.join(out, case + ".nii.gz"))
        man.write(f"{case},{case}_prob.nii.gz,{case}.nii.gz\n")
EOF
"$CALSCOPE" reduce --label-values 0,1,2,4 -o "$TMP/stats.csv" "$TMP/manifest.csv" 2>"$TMP/reduce.err" \
    || not_ok "reduce for the dashboard" "$(cat "$TMP/reduce.err")"

T new-session -d -x 80 -y 24 "$CALSCOPE $TMP/stats.csv; echo EXITED \$?; sleep 86400"
T set-option -g remain-on-exit on >/dev/null 2>&1
check_screen "a statistics file opens: ECE in the metrics table" 'ECE +[0-9.]+' 60
check_screen "metrics not exact from statistics show n/a" 'RECE-G +n/a'
check_screen "the status counts cases and voxels (4 x 8x7x6)" 'statistics: 4 cases, fine 300'
check_screen "... and the voxels under it" '  1,344 voxels *$'
keys o
check_screen "o on a statistics file: why there is no smooth curve" 'No smooth curve: a statistics file' 60
keys o
check_screen "o again: the bars" 'stats.csv  top1 15 uniform' 60
keys 6
check_screen "Cases view: the four cases listed" 'brain03' 60
check_screen "Cases view: every case listed" 'brain00'
keys 3
check_screen "Variance view: curves over cases" 'cases' 60
keys 2
check_screen "Top-k view: says why it cannot draw" 'per-voxel values' 60
keys 4
check_screen "Classes view: per-class values" 'class|Class' 60
T resize-window -x 100 -y 30 >/dev/null 2>&1
keys 1
check_screen "after a resize: the reliability view again" 'ECE +[0-9.]+' 60
keys q
check_screen "q quits with status 0" 'EXITED 0' 60

# two statistics files of the same cases: the Compare view's methods table, paired over cases
"$CALSCOPE" reduce --label-values 0,1,2,4 --fine 60 -o "$TMP/fine60.csv" "$TMP/manifest.csv" 2>/dev/null
new_server
T new-session -d -x 80 -y 24 "$CALSCOPE $TMP/stats.csv $TMP/fine60.csv; echo EXITED \$?; sleep 86400"
T set-option -g remain-on-exit on >/dev/null 2>&1
check_screen "two statistics files open" 'ECE +[0-9.]+' 60
keys 5
check_screen "Compare view: the second file against the reference" 'fine60.csv +[0-9.]+ .*[-+]0\.0000' 60
check_screen "Compare view: the reference row" 'stats.csv .*\(reference\)'
keys q
check_screen "compare: q quits with status 0" 'EXITED 0' 60

# a manifest opens directly (reduced when loaded)
new_server
T new-session -d -x 80 -y 24 "$CALSCOPE --label-values 0,1,2,4 $TMP/manifest.csv; echo EXITED \$?; sleep 86400"
T set-option -g remain-on-exit on >/dev/null 2>&1
check_screen "a manifest opens: ECE in the metrics table" 'ECE +[0-9.]+' 60
keys q
check_screen "manifest: q quits with status 0" 'EXITED 0' 60

# a volume flag with no manifest among the files changes nothing: refused once loaded (exit 2)
new_server
T new-session -d -x 80 -y 24 "$CALSCOPE --label-values 0,1,2,4 samples/digits_ts.csv; echo EXITED \$?; sleep 86400"
T set-option -g remain-on-exit on >/dev/null 2>&1
check_screen "--label-values without a manifest: exit 2" 'EXITED 2' 60
expect_match "--label-values without a manifest: why" 'no FILE is a manifest' "$SCREEN"

# cases appear as they are reduced: case c2's probabilities come through a named pipe that stays
# empty until the test writes it, so the other cases are done and c2 is not (no timing involved)
mkdir -p "$TMP/fifo"
/usr/bin/python3 - "$TMP/fifo" <<'EOF2'
import sys, os, numpy as np
out = sys.argv[1]
rng = np.random.default_rng(9)
with open(os.path.join(out, "manifest.csv"), "w") as man:
    man.write("case,probs,labels\n")
    for i in range(4):
        p = rng.dirichlet([1, 1, 1], size=(5, 4, 3)).transpose(3, 0, 1, 2).astype(np.float32)  # (C, z, y, x)
        lab = rng.integers(0, 3, size=(5, 4, 3)).astype(np.uint8)
        name = f"c{i}_real.npy" if i == 2 else f"c{i}.npy"
        np.save(os.path.join(out, name), p)
        np.save(os.path.join(out, f"c{i}_lab.npy"), lab)
        man.write(f"c{i},c{i}.npy,c{i}_lab.npy\n")
EOF2
mkfifo "$TMP/fifo/c2.npy"
new_server
T new-session -d -x 80 -y 24 "$CALSCOPE --label-values 0,1,2 $TMP/fifo/manifest.csv; echo EXITED \$?; sleep 86400"
T set-option -g remain-on-exit on >/dev/null 2>&1
check_screen "a manifest being reduced shows the cases done so far (3 x 5x4x3 voxels)" 'reducing: 3 cases so far' 60
check_screen "... and their voxels under it" ' 180 voxels so far *$' 60
keys 6
check_screen "Cases view while reducing: the cases done" 'c3 ' 60
expect_no_match "Cases view while reducing: not the case still running" '(^| )c2 ' "$SCREEN"
cat "$TMP/fifo/c2_real.npy" >"$TMP/fifo/c2.npy" &
check_screen "once the last case is in: every case" '(^| )c2 ' 60
keys 1
check_screen "once reduced: the statistics of all 4 cases" 'statistics: 4 cases' 60
check_screen "... and all their voxels" ' 240 voxels *$' 60
keys q
check_screen "reducing: q quits with status 0" 'EXITED 0' 60
wait

# a broken statistics file: the message, and the dashboard stays usable
head -c 300 "$TMP/stats.csv" >"$TMP/broken.csv"
new_server
T new-session -d -x 80 -y 24 "$CALSCOPE $TMP/broken.csv; echo EXITED \$?; sleep 86400"
T set-option -g remain-on-exit on >/dev/null 2>&1
check_screen "a truncated statistics file: its name and line" 'broken.csv:[0-9]+' 60
keys q
check_screen "broken file: q quits" 'EXITED' 60

# cut inside its trailing 's' records (the last two lines missing): refused, not half-used
head -n -2 "$TMP/stats.csv" >"$TMP/cut.csv"
new_server
T new-session -d -x 80 -y 24 "$CALSCOPE $TMP/cut.csv; echo EXITED \$?; sleep 86400"
T set-option -g remain-on-exit on >/dev/null 2>&1
check_screen "cut inside the 's' records: the case's line and the missing record" \
    "cut.csv:10:1: case 'brain03': no 's' record" 60
keys q
check_screen "cut file: q quits" 'EXITED' 60
done_testing
