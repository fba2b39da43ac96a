# Freshet — developer entry points.
#   make demo   bootstrap the machine, then run the demo (it starts the fixture server itself)
#   make test   bootstrap, then the fixture-server tests (Python), `swift test`, and
#               `freshet-bench --smoke` (every workload small; fails when engines disagree)
#   make stress SIGKILL a writing child process at random points and check the store after each kill
#               (short mode, also part of `make test`; `make stress MODE=long` or `make stress-long`
#               for thousands of iterations; SEED=N replays a run; see docs/reliability.md)
#   make bench  the full side-by-side benchmark (release build, see docs/performance.md)
#   make build  bootstrap, then `swift build`
#   make fuzz   libFuzzer on each parser of untrusted input, FUZZ_SECONDS (20) each (docs/reliability.md)
#   make sanitize  the suite under ThreadSanitizer, then AddressSanitizer (own build folders)
#   make clean  remove .build and demo-store
#   make freshet ARGS="stats demo-store"   run the freshet tool (release build, as make demo)
# Maintenance: `make fixtures SHARED_DATA=../shared/data` rebuilds fixtures/ from the source data;
# `make fixture-server` runs the fixture API server in the foreground.

SWIFT ?= swift
PYTHON ?= python3
SHARED_DATA ?= ../shared/data
MODE ?= short
SEED ?=

.PHONY: all bootstrap demo test test-python test-swift bench build clean fixtures fixture-server freshet stress stress-long fuzz sanitize

all: build

bootstrap:
	@bash scripts/bootstrap.sh

demo: bootstrap
	$(SWIFT) run -c release freshet-demo

freshet:
	$(SWIFT) run -c release freshet $(ARGS)

test: bootstrap
	$(PYTHON) -m unittest discover -s tools/fixture-server
	$(SWIFT) test --disable-xctest
	$(SWIFT) run freshet-bench --smoke
	$(SWIFT) run freshet-stress --mode short

test-python:
	$(PYTHON) -m unittest discover -s tools/fixture-server -v

test-swift: bootstrap
	$(SWIFT) test --disable-xctest

# The long mode runs a release build: thousands of reopen-and-verify rounds.
stress: bootstrap
	$(SWIFT) run $(if $(filter long,$(MODE)),-c release) freshet-stress --mode $(MODE) $(if $(SEED),--seed $(SEED))

stress-long:
	$(MAKE) stress MODE=long

bench: bootstrap
	$(SWIFT) run -c release freshet-bench

build: bootstrap
	$(SWIFT) build

clean:
	rm -rf .build demo-store

fixtures:
	$(PYTHON) tools/fixture-server/make_fixtures.py $(SHARED_DATA)

fixture-server:
	$(PYTHON) tools/fixture-server/fixture_server.py

# Fuzzing (docs/reliability.md, "Fuzzing"): new inputs go to .build-fuzz/corpus/TARGET, the kept
# seeds and fixed crashes are fuzz/corpus/TARGET (replayed by `swift test`), crashes land in
# fuzz/crashes/ and fail the run.
FUZZ_SECONDS ?= 20
FUZZ_TARGETS ?= record jsonl headers rows events

fuzz:
	$(SWIFT) build --product freshet-fuzz --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
	@mkdir -p fuzz/crashes
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p .build-fuzz/corpus/$$t; \
		echo "fuzz $$t for $(FUZZ_SECONDS) s"; \
		FRESHET_FUZZ_TARGET=$$t .build-fuzz/debug/freshet-fuzz -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=fuzz/crashes/$$t- .build-fuzz/corpus/$$t fuzz/corpus/$$t > .build-fuzz/$$t.log 2>&1; \
		status=$$?; grep -E 'stat::number_of_executed_units|ERROR|SUMMARY' .build-fuzz/$$t.log; \
		test $$status -eq 0 || { tail -40 .build-fuzz/$$t.log; exit 1; }; \
	done

# Sanitizers (docs/reliability.md, "Sanitizers"): separate build folders, so the normal build stays.
# FRESHET_TEST_TIME_SCALE multiplies the suites' time limits (hang guards) by the sanitizer's
# slowdown; the tests also detect the sanitizer by themselves (Tests/TestSupport/ScaledTimeLimit.swift).
# SANITIZE_NICE (10) keeps the long sanitized builds and runs behind other work on a shared machine.
SANITIZE_NICE ?= 10
sanitize:
	FRESHET_TEST_TIME_SCALE=15 TSAN_OPTIONS="suppressions=$(CURDIR)/scripts/tsan.supp" nice -n $(SANITIZE_NICE) $(SWIFT) test --disable-xctest --sanitize=thread --scratch-path .build-tsan
	FRESHET_TEST_TIME_SCALE=5 ASAN_OPTIONS="suppressions=$(CURDIR)/scripts/asan.supp" LSAN_OPTIONS="suppressions=$(CURDIR)/scripts/lsan.supp:print_suppressions=0" nice -n $(SANITIZE_NICE) $(SWIFT) test --disable-xctest --sanitize=address --scratch-path .build-asan
