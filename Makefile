# mcpkit — `make test` and `make demo` bootstrap their own .venv (Python 3.11+).
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed-stamp

.PHONY: test lint typecheck unit demo demo-ui screenshots docs conformance bench clean eval-tools eval-tools-cv eval-screening

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "mcpkit needs Python 3.11+ (set PYTHON=...)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests examples eval
	$(BIN)/ruff format --check src tests examples eval
	$(BIN)/lint-imports --no-cache  # the layers and no cycles (.importlinter)

typecheck: $(STAMP)
	$(BIN)/mypy

# The suite on every core (pytest-xdist; a test file stays on one worker), then the tests
# marked `serial` on their own. JOBS=0: all in one process; CONTRIBUTING.md has the markers.
JOBS ?= auto
unit: $(STAMP)
	$(BIN)/pytest -n $(JOBS) --dist loadfile -m "not serial"
	$(BIN)/pytest -m serial

test: lint typecheck unit

demo: $(STAMP)
	$(BIN)/python examples/northwind/demo.py

# The Northwind support agent in the web UI (prints the address with its access token).
demo-ui: $(STAMP)
	$(BIN)/python examples/northwind/demo_ui.py

# PNGs of the web UI for the README: the browser test's own session (Debian's chromium),
# writing into docs/ instead of build/screenshots; then the official PDF viewer and cohort
# heatmap example apps rendered through `mcpkit dev`.
screenshots: $(STAMP)
	MCPKIT_SCREENSHOTS=docs MCPKIT_BROWSER_TESTS=required $(BIN)/pytest tests/test_web_ui.py -k northwind
	MCPKIT_SCREENSHOTS=docs MCPKIT_BROWSER_TESTS=required $(BIN)/pytest tests/test_browser_apps.py -k "pdf or cohort"

# search_tools over 41 real tool catalogues (829 tools) and 268 labelled requests, split by
# server into tune (choices made on it) and held-out (only reported): each ranker's
# recall@1/5/10 and MRR per split, index time cold and warm, query p50/p95, then the host's
# default end to end (5 to 10 minutes; the dev extras bring the embedding model).
eval-tools: $(STAMP)
	$(BIN)/python eval/tool_search.py

eval-tools-cv: $(STAMP)
	$(BIN)/python eval/cross_validate.py

eval-screening: $(STAMP)
	$(BIN)/python eval/screening.py

# The documentation site (MkDocs Material, strict: any warning fails) into site/.
DOCS_STAMP = $(VENV)/.docs-stamp
$(DOCS_STAMP): $(STAMP)
	$(BIN)/pip install -q -e '.[dev,docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

conformance: $(STAMP)
	bash ../shared/conformance/run.sh --baseline conformance/baseline.txt \
	  server '$(BIN)/python tests/conformance/everything_server.py --port $$PORT' 2026-07-28,2025-11-25

# Venvs under bench/.venvs (mcpkit wheel, mcp==2.3.0, fastmcp==4.1.6, generator + matplotlib),
# the shared harness (../shared/bench) over HTTP and stdio, both eras; writes docs/performance.md
# and docs/performance.png. About 20-25 minutes on 2 cores (REPEAT=3).
bench:
	bash bench/run_bench.sh

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache conformance-results site .cache
