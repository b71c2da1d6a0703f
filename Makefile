# Two commands: `make run` (check the spec(s) in SPEC) and `make test` (all tests,
# then the quick regression set).
# Both create .venv and install the project into it when needed; when it is
# already set up they only compare two timestamps.
PYTHON ?= python3
VENV   ?= .venv
# The main job: the KIP-966 reference configuration (3 brokers, RF 3, MinISR 2,
# one lossy shutdown, one fence) to the spec's own depth bound, 11 steps:
# 677,377 distinct states, TLC's figure (well under a minute).
# Several spec paths may be given, separated by spaces.
SPEC   ?= specs/kraft-kip966-reference.toml
# Extra options for `kmc check`, e.g. ARGS="--depth 12 --json".
ARGS   ?=
PYTEST_ARGS ?=

BIN   := $(VENV)/bin
STAMP := $(VENV)/.kmc-installed

.PHONY: setup run test clean

setup: $(STAMP)

# (setup.py and checker/_native.c: the compiled hot path is rebuilt when they change)
$(STAMP): pyproject.toml setup.py checker/_native.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e .
	touch $(STAMP)

# Exit code 1 (a property violated) is a result, not a failure of the run
# (e.g. `make run SPEC=specs/kraft-v3_5-last-replica-standing.toml`
# finds its counterexample); 2 and 3 stop make.
run: $(STAMP)
	@for spec in $(SPEC); do \
	    $(BIN)/kmc check $$spec $(ARGS); rc=$$?; \
	    if [ $$rc -gt 1 ]; then exit $$rc; fi; \
	done

# Then every quick [expect] of specs/ through `kmc regress` (the known results
# CI keeps true; the JUnit file lists each spec).
test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)
	$(BIN)/kmc regress specs --quick -j 2 --junit results/regress-quick.xml

clean:
	rm -rf $(VENV) build *.egg-info checker/_native*.so
