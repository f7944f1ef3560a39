# rankeval developer commands. `make` alone lists them.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Always install this checkout: an unrelated project holds the name "rankeval" on the index.
PIP    := $(BIN)/python -m pip install --quiet --disable-pip-version-check

.DEFAULT_GOAL := help
.PHONY: help install run test test-fast golden lint fmt docs smoke bench clean

help: ## Show this list of targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(VENV)/.runtime: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -e .
	@touch $@

$(VENV)/.test: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -e '.[test]'
	@touch $@ $(VENV)/.runtime

install: $(VENV)/.test ## Create .venv with rankeval and the test tools

run: $(VENV)/.runtime ## Score the bundled sample data
	$(BIN)/rankeval score sample_data/preds.csv sample_data/truth.csv --k 5,10 -m ndcg,map,recall

# ranx (a test oracle) compiles its numba kernels on first use, minutes on a cold machine: keep
# the compiled code outside the clone, so that later runs and fresh CI clones reuse it.
export NUMBA_CACHE_DIR ?= $(HOME)/.cache/rankeval/numba

test: $(VENV)/.test ## Lint and run the test suite
	$(BIN)/ruff check .
	$(BIN)/pytest

test-fast: $(VENV)/.test ## The test suite without the tests marked slow
	$(BIN)/pytest -m "not slow"

golden: $(VENV)/.test ## Rewrite tests/golden/ from the current code (review the diff)
	rm -f tests/golden/*.json
	$(BIN)/pytest -q tests/test_api.py -k golden

lint: $(VENV)/.test ## Lint only
	$(BIN)/ruff check .

fmt: $(VENV)/.test ## Sort imports and fix what ruff can fix
	$(BIN)/ruff check --fix .

docs: $(VENV)/.runtime ## Regenerate the README's metric table from the registry
	$(BIN)/python -c "import re, pathlib; from rankeval.cli import metrics_markdown; \
	p = pathlib.Path('README.md'); s = p.read_text(); \
	a, b = s.index('<!-- metrics:start'), s.index('<!-- metrics:end -->'); \
	a = s.index('\n', a) + 1; p.write_text(s[:a] + metrics_markdown() + s[b:])"

smoke: $(VENV)/.runtime ## Pipe and stdin runs of the installed command
	cat sample_data/preds.csv | $(BIN)/rankeval score - sample_data/truth.csv --preds-format csv -f json > /dev/null
	$(BIN)/rankeval score sample_data/preds.parquet sample_data/truth.parquet --per-user - | head -3

BENCH ?= S
bench: $(VENV)/.test ## Time rankeval against pytrec_eval, ranx, a pandas loop and the floor (BENCH=S,M,W), then the beyond-accuracy timings
	$(BIN)/python benchmarks/bench.py --shapes $(BENCH)
	$(BIN)/python benchmarks/beyond.py

bench-beyond: $(VENV)/.test ## Time ild, personalization and evaluate_scores at 1M users / 100k x 50k
	$(BIN)/python benchmarks/beyond.py

clean: ## Remove the virtualenv and caches
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build *.egg-info
