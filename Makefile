# Two commands do all the set-up: `make` (venv, launchers, a demo call) and `make test`.
SHELL := bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PREFIX ?= $(HOME)/.local
LIBDIR := $(PREFIX)/lib/ikigai-web-tools
TOOLDIR := $(PREFIX)/libexec/ikigai
BINDIR := $(PREFIX)/bin
USERTOOLS := $(HOME)/.ikigai/tools
# [project.scripts] in pyproject.toml is the single list of tools: its `*-tool` entries.
# Paths are single-quoted in recipes, so a PREFIX or HOME with spaces works.
TOOLS := $(shell sed -n '/^\[project.scripts\]/,/^\[/s/^\([a-z0-9-]*-tool\) *=.*/\1/p' pyproject.toml)
SHARED ?= ../shared
# `make install EXTRAS=browser` adds the optional extras (comma-separated) to the install.
EXTRAS ?=

.PHONY: all launchers demo test test-install lint bench bench-extract fit-pagetype fit-blocks oracle-type oracle-units reading-corpus install install-user \
	uninstall clean tools

all: launchers demo

# The venv's scripts hold its absolute path, written into its stamp: a venv that moved with
# its checkout is made anew. uv installs it (a third of pip's time, downloads in parallel),
# compiling bytecode as pip does: a tool run where PYTHONDONTWRITEBYTECODE is set would
# otherwise compile its libraries on every call. Where uv cannot be had, pip does it (upgraded
# first: old pips fail on some dependency graphs).
MOVED := $(shell [ -s $(BIN)/.installed ] && [ "$$(cat $(BIN)/.installed)" != '$(CURDIR)' ] && echo yes)
ifeq ($(MOVED),yes)
.PHONY: $(BIN)/.installed
endif

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(if $(MOVED),--clear) $(VENV)
	{ $(BIN)/python -m pip install -q --disable-pip-version-check uv \
	  && $(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python -e '.[dev]'; } \
	|| { $(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip \
	  && $(BIN)/python -m pip install -q -e '.[dev]'; }
	printf '%s\n' '$(CURDIR)' > $@

# The checkout is installed editable, and pip compiles no bytecode for it: without this a
# tool run where PYTHONDONTWRITEBYTECODE is set compiles every module on every call.
launchers: $(BIN)/.installed
	$(BIN)/python -m compileall -q ikigai_web
	$(BIN)/python -m ikigai_web.common.launchers libexec/ikigai $(BIN) >/dev/null

demo: launchers
	@echo '$$ echo '"'"'{"query": "what is ikigai", "max_results": 3}'"'"' | libexec/ikigai/web-search-duckduckgo-tool'
	@echo '{"query": "what is ikigai", "max_results": 3}' | libexec/ikigai/web-search-duckduckgo-tool

lint: $(BIN)/.installed
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

# Without a Chromium the rendering tests are skipped (pytest says how to install one), and the
# code that drives it is left out of the coverage total, which it would otherwise fail. CI
# installs one (.ci/run), so there it counts.
HAS_BROWSER := $(BIN)/python -c 'from ikigai_web.common.settings import Settings; \
	from ikigai_web.fetch.network.browser import executable; executable(Settings(environ={}))' 2>/dev/null
# The suite runs in two workers per core (pytest-xdist): many tests spend part of their time
# waiting on a subprocess, a browser or a server, which another worker's test uses meanwhile
# (on 2 cores: 2 workers 299 s, 4 workers 235 s, 6 workers 242 s). JOBS=0 runs it in this
# one process.
JOBS ?= $(shell echo $$(( 2 * $$(nproc 2>/dev/null || echo 1) )))

# The extraction dev pages (../shared, when present) that the no-crash test runs: every fourth
# (sample), or all 1,567 (CORPUS=all, as CI does: about a minute more on 2 cores).
CORPUS ?= sample

test: lint launchers
	rm -f .coverage .coverage.*
	$(BIN)/pytest -n $(JOBS) --dist loadgroup --corpus $(CORPUS) --cov --cov-report= --cov-fail-under=0
	@$(HAS_BROWSER) || echo 'make test: no Chromium found, so ikigai_web/fetch/network/browser.py is left out of the coverage total'
	$(BIN)/coverage report $$($(HAS_BROWSER) || echo --omit=ikigai_web/fetch/network/browser.py)

# Every install route (pipx and uv from the wheel, make install with a PREFIX holding spaces,
# install-user, uninstall) in temporary directories, each tool then called. Slow, and needs
# the package index: CI runs it after `make test`.
test-install: $(BIN)/.installed
	$(BIN)/pytest -m install tests/project/test_install.py

# Every benchmark runs; the report goes to the screen and to BENCHMARKS.md, and any FAIL
# makes the target fail after all have run.
bench: launchers
	@{ echo '# Benchmarks'; echo; echo 'Made by `make bench` on $(shell date -u +%Y-%m-%d), $(shell nproc) cores.'; \
	  echo; echo '```'; status=0; \
	  for b in bench/bench_*.py; do SHARED='$(SHARED)' $(BIN)/python $$b || status=1; done; \
	  echo '```'; exit $$status; } 2>&1 | tee BENCHMARKS.md; exit $${PIPESTATUS[0]}

# BASE=REV scores web-fetch at that git revision beside today's (a temporary worktree);
# SETS=wcxb-dev-full,dev and SAMPLE=N (every Nth page) run a part, to iterate.
bench-extract: $(BIN)/.installed
	$(BIN)/python bench/extract.py '$(SHARED)/bench/extraction' $(if $(BASE),--base '$(BASE)') \
	  $(if $(SETS),--sets '$(SETS)') $(if $(SAMPLE),--sample '$(SAMPLE)')

# Refits the page-type model (ikigai_web/fetch/reading/pagetype_model.py) on half the dev pages and prints
# its accuracy on the other half.
fit-pagetype: $(BIN)/.installed
	$(BIN)/python bench/fit_pagetype.py '$(SHARED)/bench/extraction'

# Reads each dev page as its true type, as an article and as the types the page-type model gives
# it, and prints what each reading scores per type on either half (bench/oracle_type.py).
oracle-type: $(BIN)/.installed
	$(BIN)/python bench/oracle_type.py '$(SHARED)/bench/extraction' $(if $(FOLDS),--folds '$(FOLDS)')

# What deciding perfectly per page (the best whole-page extractor), per end cut or per window of
# blocks would give on either half of wcxb-dev-full: the ceilings of those units (bench/oracle_units.py).
oracle-units: $(BIN)/.installed
	$(BIN)/python bench/oracle_units.py '$(SHARED)/bench/extraction' $(if $(SAMPLE),--sample '$(SAMPLE)')

# Refits the block model (ikigai_web/fetch/reading/blocks_model.py) on the fitting half of wcxb-dev-full,
# the thresholds by cross-validation inside it.
fit-blocks: $(BIN)/.installed
	$(BIN)/python bench/fit_blocks.py '$(SHARED)/bench/extraction'

# Writes the reading benchmark's pages and questions (bench/reading_corpus.py: XQuAD and SQuAD 2.0,
# CC BY-SA 4.0) from git mirrors of their repositories to where `make bench` reads them.
MIRRORS ?= /work/.mirror
reading-corpus: $(BIN)/.installed
	$(BIN)/python bench/reading_corpus.py '$(MIRRORS)/google-deepmind+xquad/repo' \
	  '$(MIRRORS)/VinACE+san_mrc/repo/.git' '$(SHARED)/bench/reading/reading.json.gz'

install:
	$(PYTHON) -m venv '$(LIBDIR)/venv'
	'$(LIBDIR)/venv/bin/python' -m pip install -q --disable-pip-version-check --upgrade pip
	'$(LIBDIR)/venv/bin/python' -m pip install -q '.$(if $(EXTRAS),[$(EXTRAS)])'
	'$(LIBDIR)/venv/bin/python' -I -m ikigai_web.common.launchers '$(TOOLDIR)' '$(LIBDIR)/venv/bin' >/dev/null
	mkdir -p '$(BINDIR)'
	ln -sfn '$(LIBDIR)/venv/bin/web-tools' '$(BINDIR)/web-tools'

install-user: install
	mkdir -p '$(USERTOOLS)'
	for t in $(TOOLS); do ln -sfn '$(TOOLDIR)'/$$t '$(USERTOOLS)'/$$t; done

uninstall:
	for t in $(TOOLS); do \
	  [ "$$(readlink '$(USERTOOLS)'/$$t)" = '$(TOOLDIR)'/$$t ] && rm -f '$(USERTOOLS)'/$$t; \
	  rm -f '$(TOOLDIR)'/$$t; \
	done; true
	[ "$$(readlink '$(BINDIR)/web-tools')" = '$(LIBDIR)/venv/bin/web-tools' ] \
	  && rm -f '$(BINDIR)/web-tools'; true
	rm -rf '$(LIBDIR)'

tools:
	@echo $(TOOLS)

clean:
	rm -rf $(VENV) libexec/ikigai .coverage .coverage.* .mypy_cache .ruff_cache .pytest_cache
