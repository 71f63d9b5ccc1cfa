# `make run`, `make test` and `make bench` each set everything up on a fresh machine first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
BROWSER_STAMP := $(VENV)/.browser-stamp

.PHONY: setup run test mindeps accuracy accuracy-record bench browser chromium e2e lint clean clean-cache

# pip byte-compiles what it installs one file at a time (42 of its 72 seconds here): install
# without, then byte-compile the environment and the sources on every core. The .pyc files
# must exist: where PYTHONDONTWRITEBYTECODE is set (as on our CI machine) Python never writes
# them, and every process would compile SciPy, pandas and Dask again on import (13 s instead of
# 4 s for the test suite's imports). The packages' own test suites (directories named tests, a
# third of the files) are never imported here: skipped, 10 s instead of 18 s (16 instead of 28
# CPU-seconds) on 2 cores.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -e ".[dev,serve]"
	$(BIN)/python -m compileall -q -j 0 -x '/tests/' $$($(BIN)/python -c "import sysconfig; print(sysconfig.get_path('purelib'))") src > /dev/null
	touch $(STAMP)

setup: $(STAMP)

# The main job: Ada.OLMR and the best OnlineBMR on the four bundled MULAN sets beside the
# published numbers (2 seeds, a few minutes; `olboost reproduce mlr --seeds 20` for the paper's 20,
# which ran OnlineBMR on mediamill-reduced 10 times).
run: setup
	$(BIN)/olboost reproduce mlr --seeds 2 --no-progress

# In parallel (pytest-xdist; the workers share one Numba cache, see conftest.py), work stolen
# between workers so the long tests do not pile up on one. One worker more than there are cores:
# with one per core the cores idled a fifth of the time (tests waiting on their servers, Dask
# clusters, killed processes and other processes' compiles). A fresh clone's make test on 2
# cores, 2026-12-06: 13:45 with 2 workers (782 s of tests, 172% CPU); 13:01 and 13:51 with 3
# (743 s at 181% and 788 s at 183%, the second installing Chromium too): within the host's
# noise, which is wide, but the cores are busier. The 30 slowest tests are listed at the end:
# split or speed up those first when the suite grows. The browser test too (see browser below).
TEST_WORKERS ?= $(shell $(PYTHON) -c "import os; print((os.cpu_count() or 1) + 1)")

# Chromium's apt-get (about 40 s on a machine without it) runs beside the environment's pip
# install, not after it: both mostly wait on downloads.
test:
	@$(MAKE) --no-print-directory -j2 chromium $(BROWSER_STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal --durations=30

# The whole suite on the oldest release of every dependency pyproject.toml allows
# (.ci/lower-bounds.txt, which tests/test_dependencies.py holds to pyproject's bounds), in an
# environment of its own with a Numba cache of its own. River is not there (the oldest release
# it allows needs a newer NumPy than olboost's floor): River's tests skip, saying so; make test
# runs them. Not part of make test: a second environment and every kernel compiled again.
MIN_VENV := .venv-min
mindeps:
	rm -rf $(MIN_VENV)
	$(PYTHON) -m venv $(MIN_VENV)
	$(MIN_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(MIN_VENV)/bin/python -m pip install --quiet -r .ci/lower-bounds.txt
	$(MIN_VENV)/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
	NUMBA_CACHE_DIR=$(CURDIR)/.numba_cache_min $(MIN_VENV)/bin/python -m pytest -q \
		-n $(TEST_WORKERS) --dist worksteal -p no:cacheprovider

# The paper-protocol accuracy tests with every seed run (make test reruns one seed of each
# against tests/data/protocol_record.json; see tests/protocol.py): 13 CPU-minutes on a warm
# Numba cache, 17 on a fresh one.
# accuracy-record writes the values instead, after a change that moves results on purpose.
accuracy: setup
	OLBOOST_PROTOCOL=full $(BIN)/python -m pytest -q -n auto --dist worksteal -m protocol

accuracy-record: setup
	OLBOOST_PROTOCOL=record $(BIN)/python -m pytest -q -n auto --dist worksteal -m protocol

bench: setup
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/cold_start_paired.py
	$(BIN)/python benchmarks/potentials.py
	$(BIN)/python benchmarks/online_bmr.py
	$(BIN)/python benchmarks/multiclass.py
	$(BIN)/python benchmarks/booster_share.py
	$(BIN)/python benchmarks/large_k.py
	$(BIN)/python benchmarks/topk.py
	$(BIN)/python benchmarks/weak_learners.py
	$(BIN)/python benchmarks/label_ranking.py
	$(BIN)/python benchmarks/sweep.py
	$(BIN)/python benchmarks/serve.py
	$(BIN)/python benchmarks/serve.py --learning

# The status page of olboost serve in a real headless browser (tests/test_serve_browser.py, in
# make test): Debian's Chromium, installed when missing where apt-get runs as root (about 40 s
# here), driven by Playwright's Python API (the e2e extra; Playwright downloads no browser of
# its own). Elsewhere the test skips and says why; a failed apt-get is said, not fatal.
browser: $(BROWSER_STAMP) chromium

chromium:
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ] && command -v apt-get > /dev/null; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
			> /dev/null) || echo "make: apt-get could not install chromium: the browser test skips"; fi

$(BROWSER_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet --no-compile -e ".[e2e]"
	touch $(BROWSER_STAMP)

e2e: browser
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_serve_browser.py

lint: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

# Numba's on-disk cache is keyed on each function's own source file, not on the compiled
# functions it calls in other modules: after editing a kernel module, drop it.
# The test workers share the cache in .numba_cache/ (see conftest.py).
clean-cache:
	find src -name '*.nbi' -delete -o -name '*.nbc' -delete
	rm -rf .numba_cache .numba_cache_min

clean: clean-cache
	rm -rf $(VENV) $(MIN_VENV) build dist src/*.egg-info .pytest_cache .ruff_cache
