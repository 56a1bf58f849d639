# nmt — build, test, benchmark.  `make` builds ./nmt; `make test` runs the suite;
# `make mpi` builds ./nmt-mpi, the same program able to train over MPI ranks.
CC      ?= cc
# CFLAGS is the optimisation/instrumentation part (the sanitizer target replaces it);
# the flags every build needs are in ALL_CFLAGS.
CFLAGS  ?= -O3 -march=native -fno-math-errno -g
ALL_CFLAGS = $(CFLAGS) -fopenmp-simd -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wshadow -Isrc -I/usr/include/x86_64-linux-gnu
LDLIBS   = -lopenblas -lutf8proc -lcjson -lm

SRC      = $(filter-out src/main.c,$(wildcard src/*.c))
TESTS    = $(patsubst tests/%.c,build/%,$(wildcard tests/test_*.c))
BUILD   ?= build
OBJ      = $(patsubst src/%.c,$(BUILD)/%.o,$(SRC))

all: nmt

nmt: $(OBJ) $(BUILD)/main.o
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: src/%.c src/*.h | $(BUILD)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD):
	mkdir -p $(BUILD)

# The same sources compiled with mpicc and -DNMT_MPI (src/dist.c then speaks MPI), in
# an object directory of their own: `mpirun -np N ./nmt-mpi train CONFIG.json`.
# Needs OpenMPI: sh scripts/install-deps.sh --mpi.
MPICC   ?= mpicc
MPI_OBJ  = $(patsubst src/%.c,build-mpi/%.o,$(SRC))

mpi: nmt-mpi

nmt-mpi: $(MPI_OBJ) build-mpi/main.o
	$(MPICC) $(ALL_CFLAGS) -DNMT_MPI -o $@ $^ $(LDLIBS)

build-mpi/%.o: src/%.c src/*.h
	@mkdir -p build-mpi
	$(MPICC) $(ALL_CFLAGS) -DNMT_MPI -c -o $@ $<

# A small tool of the MPI test: the largest difference between two models' weights.
build-mpi/weights_diff: tests/tools/weights_diff.c $(MPI_OBJ)
	$(MPICC) $(ALL_CFLAGS) -DNMT_MPI -o $@ $< $(MPI_OBJ) $(LDLIBS)

# Trains with one process and with two MPI ranks and compares them, stops and kills
# ranks (tests/test_mpi.sh); skipped, saying so, where mpicc is missing.
test-mpi:
	@if command -v $(MPICC) >/dev/null 2>&1; then \
	    $(MAKE) nmt nmt-mpi build-mpi/weights_diff && sh tests/test_mpi.sh; \
	else \
	    echo "test_mpi: skipped: no $(MPICC) (sh scripts/install-deps.sh --mpi installs OpenMPI)"; \
	fi

build/test_%: tests/test_%.c tests/*.h $(OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(OBJ) $(LDLIBS)

# Every test binary, then the end-to-end shell test against ./nmt and the test of the
# documentation machinery (tests/test_docs.sh).
test: nmt $(TESTS)
	@sh tests/run.sh $(TESTS) tests/test_docs.sh

# The same suite built with AddressSanitizer and UndefinedBehaviorSanitizer.
test-sanitize:
	$(MAKE) clean
	$(MAKE) test CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
	$(MAKE) clean

# libFuzzer targets (tests/fuzz/fuzz_*.c), built with clang: FUZZ_SECONDS of fuzzing
# each, non-zero on a crash with the saved input named (scripts/fuzz.sh). Needs clang
# and its compiler-rt: sh scripts/install-deps.sh --fuzz. (-Wno-pass-failed: at -O1
# clang does not vectorise, and would warn at every `#pragma omp simd`.)
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all \
               -fopenmp-simd -Wno-pass-failed -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wshadow -Isrc \
               -I/usr/include/x86_64-linux-gnu
FUZZ_OBJ     = $(patsubst src/%.c,build/fuzz/obj/%.o,$(SRC))
FUZZERS      = $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))

# Kept between builds (make would delete them as intermediates of the pattern rule below).
.SECONDARY: $(FUZZ_OBJ)
build/fuzz/obj/%.o: src/%.c src/*.h
	@mkdir -p build/fuzz/obj
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(LDLIBS)

build/fuzz/seed_modelfile: tests/fuzz/seed_modelfile.c $(OBJ)
	@mkdir -p build/fuzz
	$(CC) $(ALL_CFLAGS) -o $@ $< $(OBJ) $(LDLIBS)

fuzz:
	@sh scripts/fuzz.sh --check $(FUZZ_CC)
	$(MAKE) $(FUZZERS) build/fuzz/seed_modelfile
	@sh scripts/fuzz.sh $(FUZZ_SECONDS) $(FUZZERS)

# The shipped default: train on data/mar.txt, translate a few sentences, score the
# held-out split.
demo: nmt
	./nmt train configs/default.json
	./nmt translate runs/default/model.bin < data/examples.txt
	./nmt eval runs/default/model.bin runs/default/valid.tsv

# nmt against PyTorch (scripts/bench.py; needs python3-torch): writes the raw results to
# docs/bench/pytorch.json and renders BENCHMARKS.md and README's Speed table from them.
bench: nmt
	/usr/bin/python3 scripts/bench.py

# The generated blocks of README.md, BENCHMARKS.md and docs/*.md (scripts/docs/docs.py):
# `make docs` reruns every block's command and writes its output in place (hours: the
# model family trains 14 models; DOCS="NAME ..." for some: python3 scripts/docs/docs.py
# list names them), `make check-docs` reruns them and fails where a block differs beyond
# scripts/docs/tolerances.tsv.
DOCS ?=
docs: nmt
	sh scripts/docs/regenerate.sh $(DOCS)

check-docs: nmt
	sh scripts/docs/check.sh $(DOCS)

# Installs the binary and the man page under PREFIX (default /usr/local), and
# nmt-mpi when `make mpi` has built it.
PREFIX ?= /usr/local
install: nmt
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 nmt $(DESTDIR)$(PREFIX)/bin/nmt
	if [ -x nmt-mpi ]; then install -m 755 nmt-mpi $(DESTDIR)$(PREFIX)/bin/nmt-mpi; fi
	install -m 644 docs/nmt.1 $(DESTDIR)$(PREFIX)/share/man/man1/nmt.1

clean:
	rm -rf build build-mpi nmt nmt-mpi

.PHONY: all mpi test test-mpi test-sanitize fuzz demo bench docs check-docs install clean
