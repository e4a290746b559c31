# CUDA programming from Python: the course's commands.
#   make lab    build the environment if needed and open JupyterLab on notebook 00
#   make test   build the environment if needed and run the whole CPU test suite
# Everything else is for maintainers, instructors and GPU machines; `make help` lists it.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON   ?= python3
VENV     ?= .venv
# Which locked set: auto (from the driver's CUDA version), cpu, cu12 or cu13.
CUDA_SET ?= auto
# COURSE_ENV=current uses the Python already on PATH instead of building $(VENV):
# for offline GPU nodes and classroom servers where the packages are already installed.
COURSE_ENV ?=
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
PORT     ?= 8888
LAB_ARGS ?=
# What make test-gpu runs (narrow it to re-run one notebook on a GPU node).
GPU_TESTS ?= notebooks solutions tests/gpu tests/problems/test_catalogue.py
# More options for make grade (python -m helpers.grade --help), e.g. GRADE_ARGS="--roster roster.csv --lms-columns exercise".
GRADE_ARGS ?=
# Notebook workers sharing the GPU in make test-gpu (timings in notebooks are illustrations, never asserted).
GPU_JOBS ?= 1

# Notebooks run from notebooks/; the repo root must be importable for `import helpers`
# (.venv gets a .pth file for it; this covers COURSE_ENV=current).
export PYTHONPATH := $(CURDIR)$(if $(PYTHONPATH),:$(PYTHONPATH))

ifeq ($(COURSE_ENV),current)
  PY      := $(PYTHON)
  ENV_DEP :=
else
  PY      := $(VENV)/bin/python
  ENV_DEP := env
endif

NOTEBOOK_TESTS := --nbval --nbval-kernel-name python3 --nbval-cell-timeout 600 --nbval-kernel-startup-timeout 600 \
  -p no:cacheprovider
XDIST := $(if $(filter 1,$(JOBS)),,-n $(JOBS) --dist loadfile)

.PHONY: help env lab lint test test-busy test-fast test-gpu notebooks lock pycuda bench grade clean browser-deps test-browser test-slurm screenshots mutation-report

help:
	@echo "make lab        open the course in JupyterLab (builds .venv the first time)"
	@echo "make test       run every test in CPU mode (lint, unit tests, every notebook through nbval)"
	@echo "make test-fast  unit tests only, CPU mode (no notebooks, no end-to-end grading or fuzz runs): the quick loop"
	@echo "make test-busy  make test while spinning processes keep every CPU busy (tools/busy.py): the suite must pass on a loaded CI machine"
	@echo "make lint       ruff check + ruff format --check over helpers/, tools/, bench/, tests/; tools/lint_tests.py over tests/"
	@echo "make test-gpu   run the notebooks on a real GPU and write docs/gpu-test-record.md"
	@echo "make notebooks  regenerate notebooks/ from solutions/ (the source of truth)"
	@echo "make mutation-report  grade every mutant of every exercise's reference -> docs/mutation-report.md (COURSE_MODE=gpu on a GPU: the GPU column)"
	@echo "make lock       re-resolve requirements/*.lock from requirements/*.in"
	@echo "make test-browser  JupyterLab in headless Chromium: notebooks, widgets, exercises (installs Chromium as root)"
	@echo "make test-slurm    grade a small class as a Slurm job array on a one-node cluster started here (installs Slurm as root)"
	@echo "make screenshots   retake the README pictures (docs/img) with the browser tests"
	@echo "make bench      GPU benchmarks -> docs/benchmarks-<gpu>.md and docs/data/*-<gpu>.json (one record per GPU kind)"
	@echo "make grade SUBMISSIONS=dir-or-zip [OUT=grades] [GRADE_ARGS='--roster r.csv ...']   grade students' notebooks: report.html, grades.csv, canvas.csv, moodle.csv (docs/grading.md)"
	@echo "make env        build (or reuse) .venv from the locked set CUDA_SET picks (make lab and make test do it first)"
	@echo "make pycuda     build PyCUDA into the environment (needs a CUDA toolkit: nvcc, cuda.h, curand.h; notebook 09)"
	@echo "make browser-deps  Playwright (locked) and Debian's Chromium for the browser tests (apt-get, as root)"
	@echo "make clean      remove build/, .pytest_cache and __pycache__ folders"
	@echo "variables: CUDA_SET=auto|cpu|cu12|cu13  COURSE_ENV=current  JOBS=N  PORT=N  PYTHON=python3.X"

env:
	@bash tools/build-env.sh "$(PYTHON)" "$(VENV)" "$$($(PYTHON) tools/envset.py $(CUDA_SET))"

lab: $(ENV_DEP)
	$(PY) -m jupyter lab --ip=127.0.0.1 --port=$(PORT) --notebook-dir=. \
	  $$( [ "$$(id -u)" = 0 ] && echo --allow-root ) $(LAB_ARGS) notebooks/00_setup.ipynb

# The pinned ruff (requirements/common.in); make test runs it first, so CI does.
LINT_PATHS := helpers tools bench tests conftest.py
lint: $(ENV_DEP)
	$(PY) -m ruff check $(LINT_PATHS)
	$(PY) -m ruff format --check $(LINT_PATHS)
	$(PY) tools/lint_tests.py

test: $(ENV_DEP) lint
	COURSE_MODE=cpu $(PY) -m pytest $(XDIST) $(NOTEBOOK_TESTS) --ignore=tests/gpu --ignore=tests/browser tests notebooks solutions

# make test while every CPU is kept busy by spinning processes (tools/busy.py), as on a shared CI machine.
test-busy: $(ENV_DEP)
	$(PY) tools/busy.py -- $(MAKE) test

# Unit tests only: the quick loop while editing helpers/ (no notebooks, and not the end-to-end runs
# marked slow: classes graded by the real CLI, the fuzz kernel; make test runs those).
test-fast: $(ENV_DEP)
	COURSE_MODE=cpu $(PY) -m pytest $(XDIST) -m "not slow" --ignore=tests/gpu --ignore=tests/browser tests

# On a GPU: the same notebooks with the simulator off; every GPU-only cell must run.
test-gpu: $(ENV_DEP)
	@mkdir -p build docs; rm -f build/gpu-only.jsonl build/gpu-junit.xml
	COURSE_MODE=gpu COURSE_GPU_ONLY_LOG=$(CURDIR)/build/gpu-only.jsonl COURSE_REPORT=$(CURDIR)/build/gpu-report.json \
	  $(PY) -m pytest $(if $(filter 1,$(GPU_JOBS)),,-n $(GPU_JOBS) --dist loadfile) --junitxml=build/gpu-junit.xml -o junit_family=xunit1 \
	  $(NOTEBOOK_TESTS) $(GPU_TESTS); \
	  rc=$$?; $(PY) tools/gpu_record.py build/gpu-report.json build/gpu-only.jsonl docs/gpu-test-record.md build/gpu-junit.xml || rc=1; exit $$rc

notebooks: $(ENV_DEP)
	$(PY) tools/sync_notebooks.py

# Wrong answers derived from every reference, graded by each exercise's check (helpers/mutation):
# writes docs/data/mutation-<mode>.json and docs/mutation-report.md, which make test checks.
mutation-report: $(ENV_DEP)
	$(PY) -W ignore -m helpers.mutation

lock:
	$(PYTHON) -m uv --version >/dev/null 2>&1 || $(PYTHON) -m pip install -q "uv==0.13.9"
	for s in cpu cu12 cu13; do $(PYTHON) -m uv pip compile requirements/$$s.in --universal --python-version 3.11 --generate-hashes -q -o requirements/$$s.lock; done
	$(PYTHON) -m uv pip compile requirements/pycuda.in -c requirements/cu13.lock --universal --python-version 3.11 --generate-hashes -q -o requirements/pycuda.lock

pycuda: $(ENV_DEP)
	CUDA_ROOT=$${CUDA_HOME:-/usr/local/cuda} $(PY) -m pip install --no-deps --require-hashes -r requirements/pycuda.lock

CHROMIUM ?= /usr/bin/chromium
BROWSER_TEST_ARGS ?=

# Playwright (locked, hashes) into the environment, and Debian's Chromium (Playwright's own
# browser download is never used: CI and classrooms are often offline).
browser-deps: $(ENV_DEP)
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --require-hashes -r requirements/browser.lock
	@if [ ! -x "$(CHROMIUM)" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Chromium with apt-get (browser tests)"; \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; \
	  else \
	    echo "The browser tests need Chromium at $(CHROMIUM): install it (sudo apt-get install -y chromium) or pass CHROMIUM=/path/to/chromium." >&2; exit 1; \
	  fi; \
	fi

# The course as a learner sees it: JupyterLab in headless Chromium (tests/browser, about a minute).
test-browser: browser-deps
	COURSE_CHROMIUM=$(CHROMIUM) $(PY) -m pytest -p no:cacheprovider tests/browser --browser $(BROWSER_TEST_ARGS)

# python -m helpers.grade --slurm on a one-node Slurm cluster started on this machine (tools/slurm_cluster.sh:
# installs slurm-wlm and munge with apt-get, as root): a small class graded as a job array must give the
# single-host results, also after a killed task and --resume (tools/slurm_check.py). The outer timeout
# stops a hung cluster; the script's trap takes its daemons down either way.
test-slurm: $(ENV_DEP)
	timeout -k 60 1500 bash tools/slurm_cluster.sh build/slurm-cluster $(PY) tools/slurm_check.py build/slurm-check

# The README's pictures (docs/img/grid-explorer.png, docs/img/tracer.png), taken by the browser tests.
screenshots: browser-deps
	COURSE_CHROMIUM=$(CHROMIUM) $(PY) -m pytest -p no:cacheprovider tests/browser --browser --screenshots docs/img -k "grid_explorer or tracer"

bench: $(ENV_DEP)
	@rm -rf build/bench && mkdir -p build/bench/data
	COURSE_MODE=gpu $(PY) bench/run.py --out build/bench/benchmarks.md --record build/bench/data
	COURSE_MODE=gpu $(PY) bench/interop.py --out build/bench/interop.md
	{ echo; cat build/bench/interop.md; } >> build/bench/benchmarks.md
	COURSE_MODE=gpu $(PY) -m bench.crossover --out build/bench/data --docs build/bench/benchmarks.md
	COURSE_MODE=gpu $(PY) bench/cccl.py --out build/bench/data/cccl.json --docs build/bench/benchmarks.md
	COURSE_MODE=gpu $(PY) bench/streams_graphs.py --out build/bench/data/streams_graphs.json
	COURSE_MODE=gpu $(PY) bench/launch_cost.py --out docs/data --docs build/bench/benchmarks.md
	COURSE_MODE=gpu $(PY) bench/tensor_gemm.py --out docs/data --docs build/bench/benchmarks.md
	$(PY) -m bench.record place build/bench docs
	if command -v ncu >/dev/null; then COURSE_MODE=gpu ncu --csv $$($(PY) bench/streaming.py --ncu-args) \
		$(PY) bench/streaming.py --once > build/bench/streaming-ncu.csv; fi
	COURSE_MODE=gpu $(PY) bench/streaming.py --ptx --ncu-csv build/bench/streaming-ncu.csv --out docs/data

grade: $(ENV_DEP)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=folder-or-zip [OUT=grades] [GRADE_ARGS='...']"; exit 2; }
	$(PY) -m helpers.grade "$(SUBMISSIONS)" --out "$(or $(OUT),grades)" $(GRADE_ARGS)

clean:
	rm -rf build .pytest_cache
	find . -name __pycache__ -prune -exec rm -rf {} +
