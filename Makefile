# Freshet — developer entry points.
#   make demo   bootstrap the machine, then run the demo (it starts the fixture server itself)
#   make test   bootstrap, then the fixture-server tests (Python), `swift test`, and
#               `freshet-bench --smoke` (every workload small; fails when engines disagree)
#   make stress SIGKILL a writing child process at random points and check the store after each kill
#               (short mode, also part of `make test`; `make stress MODE=long` or `make stress-long`
#               for thousands of iterations; SEED=N replays a run; see docs/reliability.md)
#   make bench  the full side-by-side benchmark (release build, see docs/performance.md)
#   make build  bootstrap, then `swift build`
#   make clean  remove .build and demo-store
#   make freshet ARGS="stats demo-store"   run the freshet tool (release build, as make demo)
# Maintenance: `make fixtures SHARED_DATA=../shared/data` rebuilds fixtures/ from the source data;
# `make fixture-server` runs the fixture API server in the foreground.

SWIFT ?= swift
PYTHON ?= python3
SHARED_DATA ?= ../shared/data
MODE ?= short
SEED ?=

.PHONY: all bootstrap demo test test-python test-swift bench build clean fixtures fixture-server freshet stress stress-long

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
