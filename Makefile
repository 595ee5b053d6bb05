# nbagents: one command opens the tutorials, one runs every check.
#
#   make lab     create .venv if missing, install -e .[lab] (and EXTRAS), open JupyterLab on notebooks/;
#                WHEELHOUSE=DIR installs from a folder `make wheelhouse` filled, with no network
#   make test    create .venv, install -e .[test,docs], Arize Phoenix (in .venv/phoenix) and the
#                system packages (graphviz, chromium, postgresql), then ruff, ruff format --check,
#                mypy --strict, pytest (unit tests, browser tests, Phoenix export test, nbval over
#                notebooks/) and the docs build; every step runs, the target fails if any did
#   make quick   the contributor's loop: ruff and the tests that need no
#                browser, server, kernel or install and are not slow (CONTRIBUTING.md)
#   make docs    build the docs site into docs/_build/html (offline)
#   make notebooks  re-execute every tutorial in place (after a change to what they show)
#   make workshop   participant notebooks (exercises unsolved) and facilitator notebooks (solved)
#                   in build/workshop/ (docs/teaching.md)
#   make wheelhouse every wheel .[lab] needs in wheelhouse/; then `make lab WHEELHOUSE=wheelhouse`
#                   installs with no network
#
# Installs use uv (from the package index, into the venv; pip where uv cannot be had) and are quiet
# and idempotent: the installer's output goes to .venv/pip-*.log and is shown only on failure; a
# stamp file skips the install until pyproject.toml changes. PYTHON=python3.12 make ... picks the
# interpreter; EXTRAS=providers (make lab EXTRAS=providers) adds the real model providers' packages.

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STEP := scripts/step.sh
PYTEST_ARGS ?=
# Test files run on this many pytest-xdist workers, each file whole on one (its fixtures, its
# notebook's kernel); most of the suite waits on servers, browsers and kernels, so two workers
# take about two thirds of the time of one even on two cores. PYTEST_WORKERS=0 runs in-process.
PYTEST_WORKERS ?= 2
LAB_ARGS ?=
SPHINX_ARGS ?=
# More extras for the venv of `make lab` / `make test`, comma-separated: EXTRAS=providers adds
# langchain-openai, langchain-anthropic and langchain-ollama, for real models by string.
EXTRAS ?=
comma := ,
MORE_EXTRAS := $(if $(strip $(EXTRAS)),$(comma)$(strip $(EXTRAS)))
# JupyterLab refuses to start as root unless told it may (containers, CI machines).
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

.DEFAULT_GOAL := help
# WHEELHOUSE=DIR: install from that folder only, with no network (`make wheelhouse` fills it).
WHEELHOUSE ?=
INSTALL := WHEELHOUSE="$(WHEELHOUSE)" PYTHON="$(PYTHON)" scripts/pip-install.sh
WORKSHOP ?= build/workshop

.PHONY: help lab test docs notebooks lint typecheck pytest docs-build system-deps \
        install-lab install-test install-docs install-phoenix clean workshop wheelhouse quick

help:
	@sed -n '3,16p' Makefile | sed 's/^# \{0,1\}//'

# --- environment ----------------------------------------------------------------------------------

$(BIN)/python:
	@echo "venv: creating $(VENV) with $$($(PYTHON) --version 2>&1)"
	@$(PYTHON) -m venv --without-pip $(VENV)

install-lab: $(BIN)/python
	@$(INSTALL) $(VENV) lab$(MORE_EXTRAS)

install-test: $(BIN)/python
	@$(INSTALL) $(VENV) test,docs$(MORE_EXTRAS)

install-docs: $(BIN)/python
	@if [[ -f $(VENV)/.nbagents-installed-test-docs ]]; then \
	    $(INSTALL) $(VENV) test,docs; else $(INSTALL) $(VENV) docs; fi

# Arize Phoenix, the OpenTelemetry backend tests/test_export_phoenix.py starts on loopback, gets
# its own venv: it pins packages (anthropic, python-dateutil) older than the main venv's.
PHOENIX_VENV := $(VENV)/phoenix
PHOENIX_REQS := tests/phoenix-requirements.txt
NBAGENTS_PHOENIX ?= $(PHOENIX_VENV)/bin/phoenix

install-phoenix: $(BIN)/python
	@[[ -x $(PHOENIX_VENV)/bin/python ]] || $(PYTHON) -m venv $(PHOENIX_VENV)
	@$(INSTALL) $(PHOENIX_VENV) -r $(PHOENIX_REQS)

system-deps:
	@scripts/system-deps.sh

# --- the two set-up commands ----------------------------------------------------------------------

# The tutorials are ours: trusted, their saved trace outputs draw the interactive view at once.
# Signing them takes seconds: it runs while JupyterLab starts.
lab: install-lab
	@$(BIN)/jupyter trust notebooks/[0-9]*.ipynb > /dev/null &
	$(BIN)/jupyter lab --ServerApp.root_dir=notebooks $(ALLOW_ROOT) $(LAB_ARGS)

test: install-test install-phoenix system-deps
	@$(MAKE) --no-print-directory -k lint typecheck pytest docs-build \
	    || { echo "make test: FAILED (see the steps marked FAILED above)"; exit 1; }
	@echo "make test: all steps passed"

# --- the steps ------------------------------------------------------------------------------------

lint:
	@$(STEP) "ruff" $(BIN)/ruff check .
	@$(STEP) "ruff format --check" $(BIN)/ruff format --check .

typecheck:
	@$(STEP) "mypy --strict nbagents" $(BIN)/mypy

# pyproject's [tool.pytest.ini_options] runs tests/ and notebooks/, where --nbval runs every
# tutorial and compares its outputs.
# Cassettes only replay here: a request missing from one fails instead of calling a provider
# with whatever key happens to be set, and re-recording it behind the test's back. Bytecode is
# kept as in `make quick` (below), so the loop after it starts warm.
pytest:
	@NBAGENTS_CASSETTE_MODE=replay NBAGENTS_PHOENIX=$(NBAGENTS_PHOENIX) $(STEP) "pytest (tests/, tests/browser/, nbval notebooks/)" \
	    env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest --nbval -ra --durations=15 -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# The contributor's loop: ruff, then every test not marked browser, server, kernel, install or
# slow (pyproject's markers), tests taken one by one by whichever worker is free; tests/browser/
# (browser tests only), langsmith's pytest plugin and nbval are not even loaded (importing nbval
# compiles a URI grammar for jsonschema: seconds of CPU in each of the three processes). It prints
# how long it took: past a minute, mark what made it slow. It lets Python keep bytecode even where
# the environment says not to (PYTHONDONTWRITEBYTECODE): pytest then caches its rewrite of every
# test module, a third of the loop's time when it is done afresh at each run.
QUICK_MARKERS := not (browser or server or kernel or install or slow)
quick: install-test
	@start=$$(date +%s); rc=0; \
	$(MAKE) --no-print-directory lint || rc=1; \
	NBAGENTS_CASSETTE_MODE=replay $(STEP) "pytest -m '$(QUICK_MARKERS)'" \
	    env -u PYTHONDONTWRITEBYTECODE \
	    $(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal -m "$(QUICK_MARKERS)" \
	        -p no:langsmith_plugin -p no:nbval -o addopts='-p no:cacheprovider' --ignore tests/browser $(PYTEST_ARGS) || rc=1; \
	echo "make quick: $$([[ $$rc -eq 0 ]] && echo passed || echo FAILED) in $$(($$(date +%s) - start)) s"; \
	exit $$rc

docs: install-docs docs-build

# The tutorials are committed with their outputs, which nbval compares: re-execute them when what
# they show changes, then review the diff (the example CI project's notebook too: its outputs are
# compared by its own tests). NOTEBOOKS="notebooks/07_failures.ipynb" picks some.
NOTEBOOKS ?= $(sort $(wildcard notebooks/[0-9]*.ipynb)) examples/ci-project/research.ipynb
notebooks: install-test
	@for nb in $(NOTEBOOKS); do \
	    echo "executing $$nb"; \
	    NBAGENTS_CASSETTE_MODE=replay NBAGENTS_RUNS=$${NBAGENTS_RUNS:-off} \
	        $(BIN)/jupyter nbconvert --to notebook --execute --inplace \
	        --log-level=ERROR "$$nb" || exit 1; \
	    $(BIN)/python scripts/prune_widget_state.py "$$nb" || exit 1; \
	done

docs-build:
	@$(STEP) "docs (sphinx + myst-nb -> docs/_build/html)" \
	    $(BIN)/sphinx-build -b html -q $(SPHINX_ARGS) docs docs/_build/html

# --- workshops (docs/teaching.md) -----------------------------------------------------------------

# Participant and facilitator notebooks from the tutorials, whose solution cells are tagged
# "solution"; ../examples goes beside them, for tutorial 9.
workshop: install-lab
	@$(BIN)/nbagents workshop notebooks $(WORKSHOP) --also examples

# Every wheel the lab install needs, for this platform and Python, in one folder (plus uv, the
# build backend and nbagents' own wheel): copy it to a USB stick or serve it, then
# `make lab WHEELHOUSE=DIR` installs from it with no network.
wheelhouse: $(BIN)/python
	@scripts/wheelhouse.sh $(VENV) $(or $(WHEELHOUSE),wheelhouse) lab$(MORE_EXTRAS)

clean:
	rm -rf docs/_build docs/jupyter_execute test-artifacts .mypy_cache .ruff_cache
