# nmt — build, test, benchmark.  `make` builds ./nmt; `make test` runs the suite.
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

build/test_%: tests/test_%.c tests/check.h $(OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(OBJ) $(LDLIBS)

# Every test binary, then the end-to-end shell test against ./nmt.
test: nmt $(TESTS)
	@sh tests/run.sh $(TESTS)

# The same suite built with AddressSanitizer and UndefinedBehaviorSanitizer.
test-sanitize:
	$(MAKE) clean
	$(MAKE) test CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
	$(MAKE) clean

# The shipped default: train on data/mar.txt, translate a few sentences, score the
# held-out split.
demo: nmt
	./nmt train configs/default.json
	./nmt translate runs/default/model.bin < data/examples.txt
	./nmt eval runs/default/model.bin runs/default/valid.tsv

# nmt against PyTorch (scripts/bench.py; ~10 minutes, writes BENCHMARKS.md).
bench: nmt
	/usr/bin/python3 scripts/bench.py

clean:
	rm -rf build nmt

.PHONY: all test test-sanitize demo bench clean
