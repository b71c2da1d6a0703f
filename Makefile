# Two commands: `make run` (check the spec(s) in SPEC) and `make test` (the linter,
# all tests, then every [expect] of specs/: the whole regression set, what CI runs).
# Also: `make regress` (the whole set alone, each spec on the default engine,
# auto, and on the engines its `engines` names), `make regress-quick` (the quick
# set: small configurations and every seeded bug) and `make docs` (regenerate
# the generated pages: docs/findings.md's result tables, docs/models.md,
# bench/README.md).
# Both create .venv and install the project into it when needed; when it is
# already set up they only compare two timestamps.
PYTHON ?= python3
VENV   ?= .venv
# The main job: the KIP-966 reference configuration (3 brokers, RF 3, MinISR 2,
# one lossy shutdown, one fence) to the spec's own depth bound, 11 steps:
# 677,377 distinct states, TLC's figure (well under a minute; TLC's run is
# tests/conformance/data/kraft-tlc-totals.json).
# Several spec paths may be given, separated by spaces.
SPEC   ?= specs/kraft-kip966-reference.toml
# Extra options for `kmc check`, e.g. ARGS="--depth 12 --json".
ARGS   ?=
PYTEST_ARGS ?=
# `kmc regress` runs this many specs at once (default: one per core) and fails
# a spec still running after REGRESS_TIMEOUT seconds.
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
REGRESS_TIMEOUT ?= 1500

BIN   := $(VENV)/bin
STAMP := $(VENV)/.kmc-installed

.PHONY: setup run lint test regress regress-quick docs readme clean

setup: $(STAMP)

# (setup.py and checker/search/_native.c: the compiled hot path is rebuilt when they change)
$(STAMP): pyproject.toml setup.py checker/search/_native.c checker/search/_claims.h
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

# Exit code 1 (a property violated) is a result, not a failure of the run
# (e.g. `make run SPEC=specs/kraft-v3_5-last-replica-standing.toml`
# finds its counterexample); 2 and 3 stop make.
run: $(STAMP)
	@for spec in $(SPEC); do \
	    $(BIN)/kmc check $$spec $(ARGS); rc=$$?; \
	    if [ $$rc -gt 1 ]; then exit $$rc; fi; \
	done

# The linter first (ruff, the rules in pyproject.toml), then every test, then
# every [expect] of specs/ through `kmc regress` (the known results CI keeps
# true, witnesses included; the JUnit file lists each spec).
lint: $(STAMP)
	$(BIN)/ruff check .

test: lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)
	$(MAKE) --no-print-directory regress

regress: $(STAMP)
	$(BIN)/kmc regress specs -j $(JOBS) --timeout $(REGRESS_TIMEOUT) --junit results/regress.xml

regress-quick: $(STAMP)
	$(BIN)/kmc regress specs --quick -j $(JOBS) --junit results/regress-quick.xml

# The generated pages: docs/findings.md's result tables from the specs'
# description and [expect] (tests/regress/test_readme_tables.py fails when
# they differ), docs/models.md from `kmc list` and bench/README.md from the
# bench scripts' docstrings (tests/docs/test_generated_pages.py).
docs: $(STAMP)
	$(BIN)/kmc regress specs --update-readme docs/findings.md
	$(BIN)/kmc list --markdown > docs/models.md.tmp && mv docs/models.md.tmp docs/models.md
	$(BIN)/python bench/readme.py

readme: docs

clean:
	rm -rf $(VENV) build *.egg-info checker/search/_native*.so
