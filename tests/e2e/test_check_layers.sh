#!/usr/bin/env bash
# The include layers (tools/check-layers, docs/architecture.md): the tree passes, and a copy of
# it with an include planted upwards, or a pair planted to close a cycle inside one layer, fails
# naming the planted line. (Needs no calscope binary; tools/run-tests.sh runs it with each.)
source "$(dirname "$0")/lib.sh"

run python3 tools/check-layers
expect_rc "the tree keeps its layers" 0 python3 tools/check-layers
expect_match "the pass says so" '^check-layers: every include goes down a layer' "$OUT"

copy_tree() { rm -rf "$TMP/t" && mkdir -p "$TMP/t/tools" && cp -r src include "$TMP/t/" && cp tools/check-layers "$TMP/t/tools/"; }

# an include up a layer: the base's dataset reaching for the measurement
copy_tree
n=$(($(wc -l <"$TMP/t/src/engine/dataset.c") + 1))
echo '#include "calscope/measure.h"' >>"$TMP/t/src/engine/dataset.c"
run python3 "$TMP/t/tools/check-layers" "$TMP/t"
[ "$RC" -eq 1 ] && ok "an include up a layer fails" || not_ok "an include up a layer fails" "exit $RC" "$OUT"
expect_match "it names the line and the layers" \
    "^src/engine/dataset.c:$n: #include \"calscope/measure.h\" goes up a layer: dataset \(layer 0\) includes measure \(layer 5\)$" "$OUT"
expect_match "and counts it" '^check-layers: 1 include\(s\) break the layers$' "$OUT"

# a cycle inside one layer: resampling and reduction (layer 3) including each other
copy_tree
echo '#include "calscope/reduce.h"' >>"$TMP/t/src/engine/resample/curves.c"
echo '#include "calscope/resample.h"' >>"$TMP/t/src/engine/reduce/run.c"
run python3 "$TMP/t/tools/check-layers" "$TMP/t"
[ "$RC" -eq 1 ] && ok "a cycle in one layer fails" || not_ok "a cycle in one layer fails" "exit $RC" "$OUT"
expect_match "it names the closing include and the cycle" \
    '^src/engine/(reduce/run|resample/curves)\.c:[0-9]+: #include "calscope/(resample|reduce)\.h" closes a cycle: (reduce -> resample -> reduce|resample -> reduce -> resample)$' "$OUT"

# an engine file including a front end, and a folder the table does not know
copy_tree
echo '#include "tui/model.h"' >>"$TMP/t/src/engine/metrics/lens.c"
mkdir -p "$TMP/t/src/engine/newthing" && echo 'int x;' >"$TMP/t/src/engine/newthing/a.c"
run python3 "$TMP/t/tools/check-layers" "$TMP/t"
expect_match "the engine may not include a front end" \
    '^src/engine/metrics/lens\.c:[0-9]+: #include "tui/model\.h" goes up a layer: metrics \(layer 2\) includes fe:tui \(layer 10\)$' "$OUT"
expect_match "a module outside the table fails" \
    "^src/engine/newthing/a\.c:1: module 'newthing' is not in the layer table \(tools/check-layers\)$" "$OUT"

done_testing
