# nmt — build, test, benchmark.
#
#   make                ./nmt for any CPU of its architecture: no -march, so the x86-64
#                       baseline (or the compiler's default target elsewhere, e.g.
#                       arm64), with the hot element-wise kernels also compiled for AVX2
#                       and AVX-512 and chosen when nmt starts (src/kernels/dispatch.h). README's
#                       install command and `make install` use this build.
#   make native         ./nmt-native, -march=native (objects in build-native/): for this
#                       machine only, a CPU without its instruction sets stops it with
#                       SIGILL; never installed. scripts/bench/bench_portable.sh compares the two.
#   make test           the unit tests and the end-to-end shell tests (tests/*.sh) against ./nmt
#   make test-sanitize  the same suite built with ASan/UBSan in build-sanitize/ (its own
#                       nmt); ./nmt and build/ are left as they are
#   make mpi            ./nmt-mpi, the same program able to train over MPI ranks
#   make install        ./nmt, the man page, the example configs and the docs under PREFIX
#                       (default /usr/local); make install-data the last three alone
#   make man            docs/nmt.1's option lists and version from nmt's option tables
#
# Cross-compiling, e.g. for arm64 (scripts/ci/check_portable.sh --arm64):
#   make CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ \
#        PKG_CONFIG=aarch64-linux-gnu-pkg-config BUILD=build-arm64 NMT_BIN=nmt-arm64
#
# nmt is C but for one C++ file, src/text/spm.cc, the C interface (src/text/spm.h) to Debian's
# libsentencepiece (a C++ library): it is compiled with CXX and the program is linked
# with libstdc++.
CC      ?= cc
CXX     ?= g++
# CFLAGS is the optimisation/instrumentation part (make native and the sanitizer target
# replace it); the flags every build needs are in ALL_CFLAGS (-pthread: the workers,
# src/base/threadpool.h). -fno-math-errno and
# -fno-trapping-math change no result (nmt reads neither errno after a math call nor
# the floating-point exception flags), but without them GCC keeps sqrtf a library call
# and will not vectorise a loop whose float operations sit behind a branch (the clamp
# in expf_fast) unless the target can mask them, as only AVX-512 can.
CFLAGS  ?= -O3 -g
ALL_CFLAGS = $(CFLAGS) -pthread -fno-math-errno -fno-trapping-math -fopenmp-simd -std=c11 -D_POSIX_C_SOURCE=200809L \
             -Wall -Wextra -Wshadow -Isrc $(DEPS_CFLAGS)
# The C++ file gets the same optimisation/instrumentation (CFLAGS) and warnings.
ALL_CXXFLAGS = $(CFLAGS) -std=c++17 -Wall -Wextra -Wshadow -Isrc $(SPM_CFLAGS)
NATIVE_CFLAGS ?= -O3 -march=native -g

# Include paths and libraries from pkg-config where Debian ships a .pc file (openblas.pc
# from libopenblas*-dev, libutf8proc.pc, libcjson.pc, libmicrohttpd.pc: nmt serve's
# HTTP); the plain -l flag where pkg-config or the .pc file is missing (cblas.h and
# cjson/ are then found on the default paths).
PKG_CONFIG ?= pkg-config
pkg_cflags  = $(shell $(PKG_CONFIG) --cflags $(1) 2>/dev/null)
pkg_libs    = $(shell $(PKG_CONFIG) --libs $(1) 2>/dev/null || echo $(2))
DEPS_CFLAGS := $(strip $(call pkg_cflags,openblas) $(call pkg_cflags,libutf8proc) $(call pkg_cflags,libcjson) \
               $(call pkg_cflags,libmicrohttpd))
DEPS_LIBS   := $(strip $(call pkg_libs,openblas,-lopenblas) $(call pkg_libs,libutf8proc,-lutf8proc) \
               $(call pkg_libs,libcjson,-lcjson) $(call pkg_libs,libmicrohttpd,-lmicrohttpd))
# libsentencepiece-dev's sentencepiece.pc (the trainer is a library of its own).
SPM_CFLAGS  := $(call pkg_cflags,sentencepiece)
SPM_LIBS    := $(strip $(call pkg_libs,sentencepiece,-lsentencepiece -lsentencepiece_train))
LDLIBS       = $(DEPS_LIBS) $(SPM_LIBS) -lstdc++ -lm

# src/ is in folders by layer (src/README.md); every .c but main.c's is linked into the
# test binaries too.
SRC      = $(filter-out src/cli/main.c,$(wildcard src/*/*.c))
CXX_SRC  = $(wildcard src/*/*.cc)
HEADERS  = $(wildcard src/*/*.h)
BUILD   ?= build
NMT_BIN ?= nmt
TESTS    = $(patsubst tests/%.c,$(BUILD)/%,$(wildcard tests/test_*.c))
OBJ      = $(patsubst src/%.c,$(BUILD)/%.o,$(SRC)) $(patsubst src/%.cc,$(BUILD)/%.o,$(CXX_SRC))

# DIR/flags holds the compiler and flags DIR's objects are built with, rewritten (when
# make reads this file) only if they changed. The objects depend on it, so a build with
# other flags (make CFLAGS=...) recompiles everything instead of mixing old objects with
# new, and make install can tell what ./nmt was built for.
flags_stamp = $(shell mkdir -p $(1) && if [ "`cat $(1)/flags 2>/dev/null`" != "$(2)" ]; then \
                  echo "$(2)" >$(1)/flags; fi)
$(call flags_stamp,$(BUILD),$(CC) $(ALL_CFLAGS) $(CXX) $(ALL_CXXFLAGS))

all: $(NMT_BIN)

$(NMT_BIN): $(OBJ) $(BUILD)/cli/main.o
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: src/%.c $(HEADERS) $(BUILD)/flags
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/%.o: src/%.cc $(HEADERS) $(BUILD)/flags
	@mkdir -p $(dir $@)
	$(CXX) $(ALL_CXXFLAGS) -c -o $@ $<

# src/serve/page.c holds the bytes of page.html (the assembler's .incbin): in every build.
$(BUILD)/serve/page.o build-mpi/serve/page.o build/fuzz/obj/serve/page.o: src/serve/page.html

# The same program built with -march=native for this machine alone, beside ./nmt.
native:
	$(MAKE) BUILD=build-native NMT_BIN=nmt-native CFLAGS="$(NATIVE_CFLAGS) -DNMT_NO_CLONES" nmt-native

# The same sources compiled with mpicc and -DNMT_MPI (src/train/dist.c then speaks MPI), in
# an object directory of their own: `mpirun -np N ./nmt-mpi train CONFIG.json`.
# Needs OpenMPI: sh scripts/install-deps.sh --mpi.
MPICC   ?= mpicc
# (src/text/spm.cc has nothing to do with MPI: plain CXX compiles it.)
MPI_OBJ  = $(patsubst src/%.c,build-mpi/%.o,$(SRC)) $(patsubst src/%.cc,build-mpi/%.o,$(CXX_SRC))
ifneq ($(filter mpi nmt-mpi build-mpi/%,$(MAKECMDGOALS)),)
$(call flags_stamp,build-mpi,$(MPICC) $(ALL_CFLAGS) -DNMT_MPI $(CXX) $(ALL_CXXFLAGS))
endif

mpi: nmt-mpi

nmt-mpi: $(MPI_OBJ) build-mpi/cli/main.o
	$(MPICC) $(ALL_CFLAGS) -DNMT_MPI -o $@ $^ $(LDLIBS)

build-mpi/%.o: src/%.c $(HEADERS) build-mpi/flags
	@mkdir -p $(dir $@)
	$(MPICC) $(ALL_CFLAGS) -DNMT_MPI -c -o $@ $<

build-mpi/%.o: src/%.cc $(HEADERS) build-mpi/flags
	@mkdir -p $(dir $@)
	$(CXX) $(ALL_CXXFLAGS) -c -o $@ $<

# A small tool of the MPI test: the largest difference between two models' weights.
build-mpi/weights_diff: tests/tools/weights_diff.c $(MPI_OBJ)
	$(MPICC) $(ALL_CFLAGS) -DNMT_MPI -o $@ $< $(MPI_OBJ) $(LDLIBS)

# Trains with one process and with two MPI ranks and compares them, stops and kills
# ranks (tests/test_mpi.sh); where mpicc is missing, one skipped check, saying so.
test-mpi:
	@if command -v $(MPICC) >/dev/null 2>&1; then \
	    $(MAKE) nmt nmt-mpi build-mpi/weights_diff && sh tests/test_mpi.sh; \
	else \
	    echo "skip test_mpi: no $(MPICC) (sh scripts/install-deps.sh --mpi installs OpenMPI)"; \
	    echo "test_mpi: 0 passed, 0 failed, 1 skipped"; \
	fi

$(BUILD)/test_%: tests/test_%.c tests/*.h $(OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(OBJ) $(LDLIBS)

# A tool of tests/test_failures.sh: a model file with NaN, infinite or huge weights and
# valid checksums (the reader refuses the first two, so nmt cannot make them).
$(BUILD)/set_weights: tests/tools/set_weights.c $(OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(OBJ) $(LDLIBS)

# A tool of tests/test_serve.sh: values out of the server's JSON answers (cJSON alone).
$(BUILD)/json_get: tests/tools/json_get.c
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDLIBS)
# A tool of tests/test_threads.sh and tests/test_train_keys.sh (and of the MPI test, built
# there with mpicc): the largest difference between two models' weights.
$(BUILD)/weights_diff: tests/tools/weights_diff.c $(OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(OBJ) $(LDLIBS)

# A tool of tests/test_mixups.sh: a model file whose stored config and architecture
# disagree, with valid checksums.
$(BUILD)/set_config: tests/tools/set_config.c $(OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(OBJ) $(LDLIBS)

# Every test binary, then the end-to-end shell tests against $(NMT_BIN) (./nmt): the
# test of the documentation machinery (tests/test_docs.sh), the tests of what nmt does
# with the files around it (tests/test_files.sh, test_limits.sh, test_failures.sh), of
# its options, man page and installed files (tests/test_options.sh), of a careless
# user's mix-ups (tests/test_mixups.sh), of jobs that stop (tests/test_stops.sh), of nmt
# on several threads (tests/test_threads.sh), of translate's read-ahead and compute types
# (tests/test_translate_order.sh), of int8 model files and shortlists
# (tests/test_quantize.sh, test_shortlist.sh), of nmt serve (tests/test_serve.sh, and its
# page in Chromium: tests/test_browser.sh), the decoding and adaptation tools of issue 32
# (tests/test_toolbox.sh), issue 29's training keys (tests/test_train_keys.sh), and last
# the commands end to end: options, config errors, training, eval and damaged files
# (tests/test_cli.sh), translate, score, checkpoints and resuming, the model families,
# subword units (tests/test_cli_*.sh).
test: $(NMT_BIN) $(TESTS) $(BUILD)/set_weights $(BUILD)/set_config $(BUILD)/weights_diff $(BUILD)/json_get
	@NMT=$(NMT_BIN) TOOLS=$(BUILD) BUILD=$(BUILD) sh tests/run.sh $(TESTS) tests/test_layers.sh tests/test_docs.sh tests/test_files.sh tests/test_limits.sh tests/test_failures.sh tests/test_options.sh \
	    tests/test_mixups.sh tests/test_stops.sh tests/test_threads.sh tests/test_translate_order.sh tests/test_quantize.sh tests/test_shortlist.sh tests/test_serve.sh \
	    tests/test_browser.sh tests/test_toolbox.sh tests/test_train_keys.sh \
	    tests/test_cli.sh tests/test_cli_translate.sh tests/test_cli_score.sh tests/test_cli_resume.sh tests/test_cli_family.sh \
	    tests/test_cli_subwords.sh

# The same suite built with AddressSanitizer and UndefinedBehaviorSanitizer, objects,
# test binaries and nmt in build-sanitize/.
SANITIZE_CFLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
test-sanitize:
	$(MAKE) BUILD=build-sanitize NMT_BIN=build-sanitize/nmt CFLAGS="$(SANITIZE_CFLAGS)" test

# libFuzzer targets (tests/fuzz/fuzz_*.c), built with clang: FUZZ_SECONDS of fuzzing
# each, non-zero on a crash with the saved input named (scripts/ci/fuzz.sh). Needs clang
# and its compiler-rt: sh scripts/install-deps.sh --fuzz. (-Wno-pass-failed: at -O1
# clang does not vectorise, and would warn at every `#pragma omp simd`.)
FUZZ_CC      ?= clang
FUZZ_CXX     ?= clang++
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all \
               -fopenmp-simd -Wno-pass-failed -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wshadow -Isrc \
               $(DEPS_CFLAGS)
# (src/text/spm.cc without UBSan's vptr check: its runtime is clang's C++ one, which the C
# driver that links the targets leaves out.)
FUZZ_CXXFLAGS = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize=vptr \
               -fno-sanitize-recover=all -std=c++17 -Wall -Wextra -Isrc $(SPM_CFLAGS)
FUZZ_OBJ     = $(patsubst src/%.c,build/fuzz/obj/%.o,$(SRC)) $(patsubst src/%.cc,build/fuzz/obj/%.o,$(CXX_SRC))
FUZZERS      = $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))

# Kept between builds (make would delete them as intermediates of the pattern rule below).
.SECONDARY: $(FUZZ_OBJ)
build/fuzz/obj/%.o: src/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

build/fuzz/obj/%.o: src/%.cc $(HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(LDLIBS)

build/fuzz/seed_modelfile: tests/fuzz/seed_modelfile.c $(OBJ)
	@mkdir -p build/fuzz
	$(CC) $(ALL_CFLAGS) -o $@ $< $(OBJ) $(LDLIBS)

fuzz:
	@sh scripts/ci/fuzz.sh --check $(FUZZ_CC)
	$(MAKE) $(FUZZERS) build/fuzz/seed_modelfile
	@sh scripts/ci/fuzz.sh $(FUZZ_SECONDS) $(FUZZERS)

# The shipped default: train on data/mar.txt, translate a few sentences, score the
# held-out split.
demo: nmt
	./nmt train configs/default.json
	./nmt translate runs/default/model.bin < data/examples.txt
	./nmt eval runs/default/model.bin runs/default/valid.tsv

# nmt against PyTorch (scripts/bench/bench.py; needs python3-torch): writes the raw results to
# docs/bench/pytorch.json and renders BENCHMARKS.md and docs/measurements.md's Speed table from them.
bench: nmt
	/usr/bin/python3 scripts/bench/bench.py

# nmt's Transformer against PyTorch's nn.Transformer modules (issue 17; scripts/bench/bench_transformer.py,
# 30-45 minutes): training, greedy and beam decoding against a cached and a recomputing
# PyTorch decoder, memory and the roofline; docs/bench/transformer.json and
# docs/bench-transformer.md's section rendered from it.
bench-transformer: nmt
	/usr/bin/python3 scripts/bench/bench_transformer.py

# Time to quality, nmt against PyTorch on mar, swe and fra from ../shared/data
# (scripts/bench/time_to_quality.py; hours): docs/bench/time_to_quality.json and
# docs/bench-time-to-quality.md's section. What shuffled batches cost against bucketed
# ones: scripts/bench/bench_batching.sh.
bench-ttq: nmt
	/usr/bin/python3 scripts/bench/time_to_quality.py

# Time to quality of the Transformer (configs/transformer.json) against the best
# recurrent config (configs/family/luong_concat.json) on mar, swe and fra, greedy and
# beam-5 BLEU at 2, 5, 10 and 20 minutes of training (scripts/bench/transformer_quality.py;
# hours): docs/bench/transformer_quality.json and docs/bench-time-to-quality.md's section.
bench-transformer-quality: nmt
	/usr/bin/python3 scripts/bench/transformer_quality.py
# Which recipe for which budget, in CPU time (issue 29; scripts/bench/recipes.py): the
# shipped translation configs on swe and mar from ../shared/data, validation loss and BLEU
# per update (1 thread, deterministic) and CPU seconds per update (alternated runs), so
# that a busy machine measures them as well as a quiet one; docs/bench/recipes.json and
# docs/bench-time-to-quality.md's section. Hours of wall time (about 30 CPU minutes);
# RECIPES_WORK keeps the runs, and a second make resumes where the first stopped.
RECIPES_WORK ?= /tmp/nmt-recipes
RECIPES = --recipe default=configs/default.json --recipe transformer=configs/transformer.json \
          --recipe transformer-quick=configs/transformer-quick.json
bench-recipes: nmt
	python3 scripts/bench/recipes.py split --work $(RECIPES_WORK) --corpora swe mar
	python3 scripts/bench/recipes.py quality --work $(RECIPES_WORK) $(RECIPES) --corpora swe mar --steps 1500 --every 250
	python3 scripts/bench/recipes.py cost --work $(RECIPES_WORK) $(RECIPES) --reference default --corpora swe mar
	python3 scripts/bench/recipes.py collect --work $(RECIPES_WORK)
	python3 scripts/docs/docs.py regenerate recipes
# The sentence classifier against a bag-of-words naive Bayes on amazon and yelp, in-domain
# and across (scripts/bench/naive_bayes.py; docs/bench/naive_bayes.json): a few minutes.
bench-naive-bayes: nmt
	python3 scripts/bench/naive_bayes.py --jobs 2

# How nmt's speed grows with the cores (issue 30; scripts/bench/bench_scaling.py; needs idle
# cores, and the callgrind counts take CPU-minutes per run): training tokens/s and `nmt translate
# --batch 64` sentences/s with 1, 2, 4, ... workers up to the machine's cores, PyTorch beside
# them, and callgrind's instruction counts of a step (its serial fraction, Amdahl's prediction):
# docs/bench/scaling.json and BENCHMARKS.md's section.
bench-scaling: nmt
	/usr/bin/python3 scripts/bench/bench_scaling.py

bench-batching: nmt
	sh scripts/bench/bench_batching.sh --write
# The products of a decoder step (issue 31): OpenBLAS's sgemm against the packed float
# and the int8 kernels (src/kernels/matmul_*.h), one thread, alternated rounds; prints
# the CPU and a Markdown table (scripts/bench/bench_matmul.sh; about 3 minutes).
$(BUILD)/bench_matmul: scripts/bench/bench_matmul.c $(OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(OBJ) $(LDLIBS)
bench-matmul: $(BUILD)/bench_matmul
	sh scripts/bench/bench_matmul.sh $(BUILD)/bench_matmul
# A recurrent training pass with its per-step weights packed once per pass against the
# same pass with OpenBLAS packing them at every step (issue 30): alternated passes in one
# process, one thread, median CPU time (scripts/bench/bench_rnn_packs.c; about a minute).
$(BUILD)/bench_rnn_packs: scripts/bench/bench_rnn_packs.c $(OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(OBJ) $(LDLIBS)
bench-rnn-packs: $(BUILD)/bench_rnn_packs
	$(BUILD)/bench_rnn_packs
# int8 decoding against float32 (issue 31): CPU seconds of nmt translate (greedy and
# beam 5, line by line and --batch 64, one thread, alternated rounds) and nmt eval's BLEU,
# on INT8_MODEL and its held-out INT8_TEST (scripts/bench/bench_int8.sh; minutes).
bench-int8: nmt
	sh scripts/bench/bench_int8.sh $(INT8_MODEL) $(INT8_TEST)
# The sentiment classifier against the attention-pooling demonstration it reproduces
# (docs/bench/sentiment.json, the table in docs/measurements.md): 6 settings x 5 seeds, about a minute.
bench-sentiment: nmt
	python3 scripts/bench/sentiment_experiment.py --jobs 2
# How well the quality estimates of nmt translate --scores rank bad translations
# (correlation with sentence BLEU and chrF on held-out pairs of mar, swe and fra), and
# fine-tuning on new data with and without train.extend_vocab (issue 32): each prints
# BENCHMARKS.md's table and writes its figures to docs/bench/ (the runs under runs/).
bench-qe: nmt
	python3 scripts/bench/qe_correlation.py
bench-extend-vocab: nmt
	python3 scripts/bench/extend_vocab.py
# BPE on a 40,000-letter word and on a normal corpus, against the nmt of 9c1acf3 (built
# from git archive): the learner linear, the applier n log n (issue 19). 2-3 minutes.
bench-bpe-long-word: nmt
	sh scripts/bench/bench_bpe_long_word.sh

# nmt serve under load (scripts/bench/bench_serve.py, with wrk: sh scripts/install-deps.sh
# --bench): requests/s, CPU per sentence and p50/p99 latency at 1, 4 and 16 clients against
# nmt translate on the same lines, alternated, and a soak of three minutes for memory;
# about 10 minutes. Writes docs/bench/serve.json; BENCHMARKS.md's section renders it.
bench-serve: nmt
	/usr/bin/python3 scripts/bench/bench_serve.py

# The generated blocks of README.md, BENCHMARKS.md, CONTRIBUTING.md and docs/*.md
# (scripts/docs/docs.py):
# `make docs` reruns every block's command and writes its output in place (hours: the
# model family trains 14 models; DOCS="NAME ..." for some: python3 scripts/docs/docs.py
# list names them), `make check-docs` reruns them and fails where a block differs beyond
# scripts/docs/tolerances.tsv.
DOCS ?=
docs: nmt
	sh scripts/docs/regenerate.sh $(DOCS)

check-docs: nmt
	sh scripts/docs/check.sh $(DOCS)

# The man page's option lists and version, from nmt's own tables (scripts/docs/man.sh;
# tests/test_options.sh fails when docs/nmt.1 disagrees with them).
man: nmt
	NMT=./nmt sh scripts/docs/man.sh

# Installs the binary, and nmt-mpi when `make mpi` has built it, under PREFIX (default
# /usr/local), with install-data. Refuses a binary built with -march=native (make
# CFLAGS=...): on a CPU without this one's instruction sets it stops with SIGILL.
PREFIX ?= /usr/local
install: nmt install-data
	@for d in $(BUILD) $(if $(wildcard nmt-mpi),build-mpi); do \
	    if grep -q -e '-march=native' -e '-mcpu=native' -e '-mtune=native' $$d/flags; then \
	        echo "nmt: make install: $$d was compiled for this CPU only ($$d/flags says -march=native);" \
	             "run plain make (make install does) for a build any CPU runs" >&2; exit 1; \
	    fi; \
	done
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 nmt $(DESTDIR)$(PREFIX)/bin/nmt
	if [ -x nmt-mpi ]; then install -m 755 nmt-mpi $(DESTDIR)$(PREFIX)/bin/nmt-mpi; fi

# What nmt's files need no build for: the man page (share/man/man1), the example configs
# (share/nmt/configs, family/ too) and the documentation (share/doc/nmt: README.md and
# the documents beside it, docs/*.md, the pictures and the man page's source, as the
# documents link them).
DOC_FILES = README.md $(wildcard BENCHMARKS.md CHANGELOG.md CONTRIBUTING.md)
DOC_DOCS  = $(wildcard docs/*.md docs/*.svg) docs/nmt.1
install-data:
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/nmt/configs/family \
	    $(DESTDIR)$(PREFIX)/share/doc/nmt/docs
	install -m 644 docs/nmt.1 $(DESTDIR)$(PREFIX)/share/man/man1/nmt.1
	install -m 644 configs/*.json $(DESTDIR)$(PREFIX)/share/nmt/configs
	install -m 644 configs/family/*.json $(DESTDIR)$(PREFIX)/share/nmt/configs/family
	install -m 644 $(DOC_FILES) $(DESTDIR)$(PREFIX)/share/doc/nmt
	install -m 644 $(DOC_DOCS) $(DESTDIR)$(PREFIX)/share/doc/nmt/docs

clean:
	rm -rf build build-mpi build-native build-sanitize nmt nmt-mpi nmt-native

.PHONY: all native mpi test test-mpi test-sanitize fuzz demo bench bench-serve bench-transformer bench-ttq bench-transformer-quality bench-recipes bench-naive-bayes bench-batching bench-scaling bench-matmul bench-rnn-packs bench-int8 bench-sentiment bench-bpe-long-word docs check-docs man install install-data clean bench-qe bench-extend-vocab
