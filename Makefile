# contextual-mt: set-up, tests and per-language-pair recipes.
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
FAIRSEQ := fairseq==0.12.2
# fairseq 0.12.2 has no Python 3.11 wheel: it is built once, without torch in the build
# environment (its optional C++ extensions are not needed), and cached here.
WHEELHOUSE ?= $(HOME)/.cache/contextual-mt/wheels
BUILD_VENV := $(WHEELHOUSE)/build-venv
# UPGRADE_PIP=1 installs with the newest pip instead of the one venv ships; both work.
UPGRADE_PIP ?= 0

.PHONY: install test demo pcxmi muda-eval check-python fairseq-wheel browser clean

# Per-language-pair targets: `make pcxmi LANG=fr`. LANG is also the locale variable, so it is
# only read from the command line (default: demo), and tools run with a UTF-8 locale.
ifeq ($(origin LANG),command line)
PAIR := $(LANG)
else
PAIR := demo
endif
RUN := LC_ALL=C.UTF-8 LANG=C.UTF-8
ifeq ($(PAIR),demo)
PAIR_DATA := demo/data
PAIR_TGT := fr
PAIR_CKPT := demo/checkpoints/context/checkpoint_best.pt
PAIR_SPM := --spm demo/spm/spm.model
else
PAIR_DATA := data/$(PAIR)
PAIR_TGT := $(PAIR)
PAIR_CKPT := checkpoints/$(PAIR)/context/checkpoint_best.pt
PAIR_SPM := $(if $(wildcard data/$(PAIR)/spm.model),--spm data/$(PAIR)/spm.model,)
endif
RESULTS := results/$(PAIR)
# muda-eval: systems to compare, and annotation options (pre-computed files when the data has them)
ifeq ($(PAIR),demo)
HYPS ?= demo/outputs/sentence.test.fr demo/outputs/context.test.fr
MUDA_ARGS ?= --lexicon demo/data/train.en.conllu demo/data/train.fr.conllu demo/data/train.align
else
HYPS ?= $(RESULTS)/sentence.test.$(PAIR_TGT) $(RESULTS)/context.test.$(PAIR_TGT)
MUDA_ARGS ?=
# model options for tagging the reference when its annotations are not in the data directory
MUDA_TAG_ARGS ?=
endif
MUDA_PRE := $(if $(wildcard $(PAIR_DATA)/test.en.conllu),--src-conllu $(PAIR_DATA)/test.en.conllu,)
MUDA_REF_PRE := $(if $(wildcard $(PAIR_DATA)/test.$(PAIR_TGT).conllu),--tgt-conllu $(PAIR_DATA)/test.$(PAIR_TGT).conllu,) \
    $(if $(wildcard $(PAIR_DATA)/test.align),--alignments $(PAIR_DATA)/test.align,)
MUDA_REF_TAGS := $(RESULTS)/muda/reference.tags.json

check-python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { \
	  echo "error: '$(PYTHON)' not found. contextual-mt needs Python 3.11; install it or run 'make install PYTHON=/path/to/python3.11'" >&2; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' || { \
	  echo "error: '$(PYTHON)' is Python $$($(PYTHON) -c 'import platform; print(platform.python_version())'); contextual-mt needs Python 3.11" >&2; exit 1; }

fairseq-wheel: check-python
	@if ls $(WHEELHOUSE)/fairseq-0.12.2-cp311-*.whl >/dev/null 2>&1; then \
	  echo "fairseq wheel: cached in $(WHEELHOUSE)"; \
	else \
	  set -e; mkdir -p $(WHEELHOUSE); \
	  $(PYTHON) -m venv $(BUILD_VENV); \
	  $(BUILD_VENV)/bin/python -m pip install -q "numpy>=1.24,<2" cython setuptools wheel; \
	  $(BUILD_VENV)/bin/python -m pip wheel --no-deps --no-build-isolation -w $(WHEELHOUSE) $(FAIRSEQ) \
	    || { echo "error: building the $(FAIRSEQ) wheel failed (see above); it needs gcc/g++ and the Python 3.11 headers" >&2; exit 1; }; \
	fi

# Debian's chromium, for the HTML viewer's test (headless); installed when we may (root + apt).
browser:
	@if command -v chromium >/dev/null 2>&1; then echo "chromium: $$(chromium --version 2>/dev/null)"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's chromium (for the HTML viewer test)"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 \
	    || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; } \
	    || { echo "error: could not install chromium with apt-get" >&2; exit 1; }; \
	else echo "note: chromium not found; the viewer test needs it ('sudo apt-get install chromium'), or set CONTEXTUAL_MT_SKIP_BROWSER=1"; fi

install: check-python fairseq-wheel browser
	$(PYTHON) -m venv $(VENV)
	@if [ "$(UPGRADE_PIP)" = 1 ]; then $(PIP) install -q --upgrade pip; fi
	$(PIP) --version
	$(PIP) install torch==2.13.0 || { echo "error: installing torch 2.13.0 failed" >&2; exit 1; }
	$(PIP) install --no-deps $(WHEELHOUSE)/fairseq-0.12.2-cp311-*.whl
	$(PIP) install -e ".[test]" || { echo "error: installing contextual-mt's dependencies failed" >&2; exit 1; }
	$(PY) -m contextual_mt_compat
	$(PY) -c "import fairseq, contextual_mt; print('contextual-mt', contextual_mt.__version__, 'with fairseq', fairseq.__version__, 'is installed in $(VENV)')"

test:
	@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
	$(PY) -m pytest -q tests

demo:
	@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
	$(PY) -m contextual_mt.demo --workdir demo

pcxmi:
	@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
	@if [ "$(PAIR)" = demo ] && [ ! -f $(PAIR_CKPT) ]; then $(RUN) $(MAKE) --no-print-directory demo; fi
	@test -f $(PAIR_CKPT) || { echo "error: $(PAIR_CKPT) not found: train the $(PAIR) contextual model there (README, 'make pcxmi')" >&2; exit 1; }
	@for f in test.en test.$(PAIR_TGT) test.docids; do test -f $(PAIR_DATA)/$$f || { echo "error: $(PAIR_DATA)/$$f not found (README, 'make pcxmi')" >&2; exit 1; }; done
	$(RUN) $(VENV)/bin/contextual-mt cxmi --path $(PAIR_CKPT) $(PAIR_SPM) --source $(PAIR_DATA)/test.en \
	    --reference $(PAIR_DATA)/test.$(PAIR_TGT) --docids $(PAIR_DATA)/test.docids --output $(RESULTS)/pcxmi.jsonl
	$(RUN) $(VENV)/bin/contextual-mt report $(RESULTS)/pcxmi.jsonl --output-dir $(RESULTS)/report \
	    $(if $(wildcard $(PAIR_DATA)/test.$(PAIR_TGT).conllu),--conllu $(PAIR_DATA)/test.$(PAIR_TGT).conllu,) \
	    $(if $(wildcard $(PAIR_DATA)/test.tags.json),--tags $(PAIR_DATA)/test.tags.json,)

muda-eval:
	@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
	@if [ "$(PAIR)" = demo ] && [ ! -f demo/outputs/context.test.fr ]; then $(RUN) $(MAKE) --no-print-directory demo; fi
	@for f in test.en test.$(PAIR_TGT) test.docids; do test -f $(PAIR_DATA)/$$f || { echo "error: $(PAIR_DATA)/$$f not found (README, 'make muda-eval')" >&2; exit 1; }; done
	@for h in $(HYPS); do test -f $$h || { echo "error: $$h not found: translate the test set first, or pass HYPS=\"...\" (README, 'make muda-eval')" >&2; exit 1; }; done
	@# the reference is tagged once; muda eval checks by content hash that it is this reference
	@if [ -f $(MUDA_REF_TAGS) ] && [ $(MUDA_REF_TAGS) -nt $(PAIR_DATA)/test.$(PAIR_TGT) ]; then echo "reference tags: $(MUDA_REF_TAGS) (cached)"; else \
	  $(RUN) $(VENV)/bin/muda tag --src $(PAIR_DATA)/test.en --tgt $(PAIR_DATA)/test.$(PAIR_TGT) --docids $(PAIR_DATA)/test.docids \
	    --tgt-lang $(PAIR_TGT) --dump-tags $(MUDA_REF_TAGS) $(MUDA_PRE) $(MUDA_REF_PRE) $(MUDA_TAG_ARGS) || exit 1; fi
	$(RUN) $(VENV)/bin/muda eval --src $(PAIR_DATA)/test.en --ref $(PAIR_DATA)/test.$(PAIR_TGT) --docids $(PAIR_DATA)/test.docids \
	    --tgt-lang $(PAIR_TGT) --hyps $(HYPS) --ref-tags $(MUDA_REF_TAGS) $(MUDA_PRE) $(MUDA_ARGS) \
	    --output $(RESULTS)/muda/eval.json --table $(RESULTS)/muda/eval.txt --plot $(RESULTS)/muda/eval.png

clean:
	rm -rf $(VENV) build *.egg-info
