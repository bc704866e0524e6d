# calscope — plain Makefile with variants.
#   make                  optimised build: build/calscope
#   make test             unit (cmocka) + end-to-end tests, then the same under ASan+UBSan,
#                         then the backend tests under TSan; ends with "N passed, N failed"
#   make bench            benchmark against the Python reference (pandas/numpy/sklearn), then
#                         bench-seg
#   make profile          perf profile of `calscope report` on the bench file (top entries)
#   make bench-seg        segmentation volumes: calscope reduce vs gzip -dc vs numpy+nibabel
#   make bench-seg-open   its quick part: opening a 200-case statistics file, view recomputes
#   make bench-readers    number readers side by side, one core (docs/performance.md)
#   make samples          regenerates samples/ (seg-samples: the synthetic volumes in samples/seg)
#   make demo             opens the dashboard on two bundled samples
#   make watch-demo       trains samples/train_watch.py (30 epochs) beside report --follow
#   make install          installs build/calscope and its man page under PREFIX (/usr/local;
#                         DESTDIR too): bin/calscope, share/man/man1/calscope.1
#   make readme-flags     rewrites the flag reference in docs/flags.md from the flag table
#   make deps             installs the Debian packages the build needs (root)
#   make fuzz             builds the fuzz targets (clang libFuzzer) and runs them for FUZZ_SECONDS
#                         in total
# Variants: BUILD=dir SANITIZE=address,undefined|thread V=1

BUILD    ?= build
SANITIZE ?=
V        ?= 0
CC       ?= cc
FUZZ_SECONDS ?= 60

Q := $(if $(filter 1,$(V)),,@)

PKGS     := ncursesw
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lncursesw)

WARN     := -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wformat=2 -Wwrite-strings -Werror
OPT      := $(if $(SANITIZE),-O1 -g -fno-omit-frame-pointer -fsanitize=$(SANITIZE) -fno-sanitize-recover=all,-O2 -g)
CPPFLAGS = -Iinclude -Isrc $(VOL_CFLAGS) -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -MMD -MP
CFLAGS   := $(WARN) $(OPT) -pthread
LDFLAGS  := $(if $(SANITIZE),-fsanitize=$(SANITIZE),) -pthread
# nifti_clib (NIfTI-1/2 + its znz gzip streams) and minizip (npz archives): the volume readers.
VOL_CFLAGS  := -I/usr/include/nifti $(shell pkg-config --cflags minizip 2>/dev/null || echo -I/usr/include/minizip)
ENGINE_LIBS := -lnifti2 -lznz -lminizip -lisal -lcsv -lz -lm

ENGINE_SRC := $(sort $(wildcard src/engine/*.c src/engine/*/*.c))
CHART_SRC  := $(sort $(wildcard src/chart/*.c))
SESSION_SRC := $(sort $(wildcard src/session/*.c))
REPORT_SRC := $(sort $(wildcard src/cli/report/*.c))
TUI_SRC    := $(sort $(wildcard src/tui/*.c))
REDUCE_SRC := $(sort $(wildcard src/cli/reduce/*.c))
MAIN_SRC   := src/main.c

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

ENGINE_LIB := $(BUILD)/libcalscope.a
FRONT_LIB  := $(BUILD)/libcsfront.a
BIN        := $(BUILD)/calscope

UNIT_SRC   := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN   := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
TEST_SUPPORT := $(sort $(wildcard tests/unit/support/*.c))

PREFIX   ?= /usr/local
DESTDIR  ?=

.PHONY: all test unit e2e tsan-unit bench bench-readers profile demo watch-demo deps fuzz fuzz-bins clean samples seg-samples bench-seg bench-seg-open install readme-flags
all: $(BIN) $(BUILD)/calscope.1

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC  $<")
	$(Q)$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) -c $< -o $@

$(ENGINE_LIB): $(call obj,$(ENGINE_SRC))
	$(Q)rm -f $@ && ar rcs $@ $^

# The session layer (flag table) is no engine and no curses; both front ends sit on it.
$(FRONT_LIB): $(call obj,$(SESSION_SRC) $(CHART_SRC) $(REPORT_SRC) $(REDUCE_SRC) $(TUI_SRC))
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN): $(call obj,$(MAIN_SRC)) $(FRONT_LIB) $(ENGINE_LIB)
	$(if $(Q),@echo "  LD  $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(ENGINE_LIBS)
	$(Q)$(if $(filter build,$(BUILD)),ln -sf $(BIN) calscope,true)

$(BUILD)/tests/%: tests/unit/%.c $(call obj,$(TEST_SUPPORT)) $(FRONT_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC  $<")
	$(Q)$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) -Itests/unit -o $@ $^ -lcmocka $(PKG_LIBS) $(ENGINE_LIBS) $(TEST_WRAP)

# test_no_threads makes pthread_create fail on demand: the engine's calls go to its wrapper.
$(BUILD)/tests/test_no_threads: TEST_WRAP := -Wl,--wrap=pthread_create

# ---- documents generated from the flag table (src/session/flags.c) ----
$(BUILD)/gen_flags: tools/gen/gen_flags.c $(call obj,$(SESSION_SRC)) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD  $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(call obj,$(SESSION_SRC)) $(ENGINE_LIB) $(LDFLAGS) $(ENGINE_LIBS)

$(BUILD)/calscope.1: $(BUILD)/gen_flags
	$(Q)$(BUILD)/gen_flags man > $@.tmp && mv $@.tmp $@

install: $(BIN) $(BUILD)/calscope.1
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/calscope
	install -m 644 $(BUILD)/calscope.1 $(DESTDIR)$(PREFIX)/share/man/man1/calscope.1

readme-flags: $(BUILD)/gen_flags
	$(Q)tools/readme-flags.sh $(BUILD)/gen_flags docs/flags.md
# ---- end of documents ----

# Unit tests and end-to-end tests of one build variant; tools/run-tests.sh adds up the counts.
unit: $(UNIT_BIN)
e2e: $(BIN)

# The three variants build with every core (JOBS, default the core count; a -j given to make
# itself wins); tools/run-tests.sh runs the tests that many at a time.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
SUBJ := $(if $(findstring j,$(firstword -$(MAKEFLAGS))),,-j$(JOBS))
test:
	$(Q)$(MAKE) --no-print-directory $(SUBJ) BUILD=build $(BIN) build/bench_readers unit
	$(Q)$(MAKE) --no-print-directory $(SUBJ) BUILD=build-asan SANITIZE=address,undefined build-asan/calscope unit
	$(Q)$(MAKE) --no-print-directory $(SUBJ) BUILD=build-tsan SANITIZE=thread tsan-unit
	$(Q)tools/run-tests.sh

TSAN_SRC := $(sort $(wildcard tests/unit/test_backend*.c tests/unit/test_resample*.c tests/unit/test_tui_model.c tests/unit/test_reduce.c tests/unit/test_metrics.c tests/unit/test_rowsums.c tests/unit/test_sort.c tests/unit/test_no_threads.c))
tsan-unit: $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TSAN_SRC))

# ---- benchmark (bench/): engine driver + data generator; `make bench` never fails on timing ----
BENCH_ENGINE := $(BUILD)/bench_engine
BENCH_BACKEND := $(BUILD)/bench_backend
BENCH_GEN    := $(BUILD)/gen_data
BENCH_SEGSTATS := $(BUILD)/bench_segstats

$(BUILD)/bench_engine: bench/bench_engine.c $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD  $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(ENGINE_LIB) $(LDFLAGS) $(ENGINE_LIBS)

$(BUILD)/bench_segstats: bench/bench_segstats.c $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD  $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(ENGINE_LIB) $(LDFLAGS) $(ENGINE_LIBS)

$(BUILD)/bench_backend: bench/bench_backend.c $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD  $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(ENGINE_LIB) $(LDFLAGS) $(ENGINE_LIBS)

$(BUILD)/gen_data: bench/gen_data.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -lm

bench: $(BIN) $(BENCH_ENGINE) $(BENCH_BACKEND) $(BENCH_GEN) $(BENCH_SEGSTATS)
	$(Q)bench/run.sh $(BUILD)
	$(Q)bench/seg_bench.sh $(BUILD)

# number readers side by side (bench/bench_readers.c; docs/performance.md): an experiment,
# not part of `make all` (`make test` builds it for tests/e2e/test_bench_readers.sh);
# the first 20,000 rows of a gen_data file, on one core
bench-readers: $(BUILD)/bench_readers $(BENCH_GEN)
	$(Q)mkdir -p $(BUILD)/bench
	$(Q)[ -s $(BUILD)/bench/readers_20000x10.csv ] || $(BENCH_GEN) 20000 10 20261121 12 g > $(BUILD)/bench/readers_20000x10.csv
	$(Q)if command -v taskset >/dev/null; then taskset -c 0 $(BUILD)/bench_readers $(BUILD)/bench/readers_20000x10.csv; \
	    else $(BUILD)/bench_readers $(BUILD)/bench/readers_20000x10.csv; fi

$(BUILD)/bench_readers: bench/bench_readers.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC  $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $<

# where `calscope report` spends its time on the bench file: perf stat + perf record -g, top
# entries of perf report (bench/profile.sh; perf from `make deps`)
profile: $(BIN) $(BENCH_GEN)
	$(Q)bench/profile.sh $(BUILD)

# the segmentation targets alone (heavy: ~2.6 GB of generated volumes, cached in
# $(BUILD)/bench/seg; reduce vs gzip -dc vs numpy+nibabel, peak RSS, opening 200 cases)
bench-seg: $(BIN) $(BENCH_SEGSTATS)
	$(Q)bench/seg_bench.sh $(BUILD)

# its first part alone, in seconds: opening a 200-case statistics file and the dashboard's
# recomputes on it (generates 200 small volumes once, no BraTS-size set)
bench-seg-open: $(BIN) $(BENCH_SEGSTATS)
	$(Q)BENCH_SEG_OPEN_ONLY=1 bench/seg_bench.sh $(BUILD)
# ---- end of benchmark section ----

demo: $(BIN)
	$(Q)$(BIN) samples/digits_gnb.csv samples/digits_ts.csv

# A training run watched live: the trainer renames each epoch into $(BUILD)/watch-demo while
# report --follow prints each epoch's accuracy, ECE and NLL as it arrives (docs/follow.md).
watch-demo: $(BIN)
	$(Q)rm -rf $(BUILD)/watch-demo && mkdir -p $(BUILD)/watch-demo
	$(Q)/usr/bin/python3 samples/train_watch.py $(BUILD)/watch-demo --delay 0.3 >/dev/null & \
	$(BIN) report --follow $(BUILD)/watch-demo --format ndjson --max-files 30 | /usr/bin/python3 -c \
	  'import json, sys; [print("epoch %2d  accuracy %.4f  ece %.4f  nll %.4f" % (d["seq"] + 1, d["metrics"]["accuracy"], d["metrics"]["ece"], d["metrics"]["nll"]), flush=True) for d in map(json.loads, sys.stdin)]'; \
	wait

deps:
	$(Q)tools/install-deps.sh

samples: seg-samples
	$(Q)/usr/bin/python3 tools/gen/make_samples.py
	$(Q)/usr/bin/python3 tools/make_bias_sample.py samples/synthetic_bias.csv --n 400 --a 2 --b 2 --affine 0.2,0.75 --seed 0

# Synthetic segmentation volumes (tools/gen/make_volumes.py; samples/README.md): a softmax set in
# NIfTI and npz, and a BraTS-style regions set in npz. tests/e2e/test_make_volumes.sh checks
# that the committed files are what this writes.
SEG_SAMPLES ?= samples/seg
seg-samples:
	$(Q)rm -rf $(SEG_SAMPLES)/softmax $(SEG_SAMPLES)/regions
	$(Q)/usr/bin/python3 tools/gen/make_volumes.py --quiet --out $(SEG_SAMPLES)/softmax --cases 3 \
	    --shape 16,14,10 --format both --temperature 0.5:0.9 --seed 12
	$(Q)/usr/bin/python3 tools/gen/make_volumes.py --quiet --out $(SEG_SAMPLES)/regions --cases 3 \
	    --shape 16,14,10 --format npz --regions --temperature 0.6 --seed 13

# ---- fuzzing (tests/fuzz/): libFuzzer targets, clang with ASan+UBSan, in build-fuzz/ ----
# `make fuzz` builds the engine and front-end libraries instrumented for coverage, links every
# tests/fuzz/fuzz_*.c against them and runs them all for FUZZ_SECONDS in total (run.sh).
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))

$(BUILD)/fuzz/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) $(FRONT_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD  $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -fsanitize=fuzzer -o $@ $< $(FRONT_LIB) $(ENGINE_LIB) \
	    $(LDFLAGS) $(PKG_LIBS) $(ENGINE_LIBS)

fuzz-bins: $(addprefix $(BUILD)/fuzz/,$(FUZZ_TARGETS))

fuzz:
	$(Q)$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang \
	    SANITIZE=fuzzer-no-link,address,undefined fuzz-bins
	$(Q)tests/fuzz/run.sh $(FUZZ_SECONDS)
# ---- end of fuzzing section ----

clean:
	rm -rf build build-asan build-tsan build-fuzz calscope

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
