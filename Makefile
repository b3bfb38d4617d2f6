# contextual-mt: set-up, tests and per-language-pair recipes.
# this file, wherever make runs (make -f .../Makefile): for includes and recursive calls
THIS_MAKEFILE := $(abspath $(lastword $(MAKEFILE_LIST)))
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

.PHONY: install test demo cadec-demo pcxmi pcxmi-shard pcxmi-merge report muda-eval data train translate score contrastive all table check-python fairseq-wheel browser clean

# Per-language-pair targets: `make all LANG=fr TED=...`. LANG is also the locale variable, so it is
# only read from the command line (default: demo), and tools run with a UTF-8 locale.
ifeq ($(origin LANG),command line)
PAIR := $(LANG)
else
PAIR := demo
endif
RUN := LC_ALL=C.UTF-8 LANG=C.UTF-8
SUBMAKE := $(RUN) $(MAKE) --no-print-directory -f $(THIS_MAKEFILE)
CMT := $(RUN) $(VENV)/bin/contextual-mt
# The study's folders: WORK/data/xx, WORK/checkpoints/xx/{sentence,context}, WORK/results/xx.
WORK ?= .
# make data: exactly one input (TED: ted_talks.tar.gz or its folder; IWSLT: the en-xx release
# folder; TEXT: {train,valid,test}.{en,xx,docids}); joint sentencepiece vocabulary size (empty:
# the default of `contextual-mt pipeline data --vocab-size`)
TED ?=
IWSLT ?=
TEXT ?=
IWSLT_DEV ?=
IWSLT_TEST ?=
SPM_VOCAB ?=
# make train: PRESET (one of contextual_mt/pipeline/presets.py's; default: its DEFAULT, small),
# MODEL sentence|context (default both), GPUS (default: all visible; 0 = CPU), EPOCHS /
# MAX_UPDATE (default: the preset's), PRETRAINED (PRESET=big)
PRESET ?=
MODEL ?=
GPUS ?=
EPOCHS ?=
MAX_UPDATE ?=
PRETRAINED ?=
# make translate / score: beam size; COMET_MODEL adds COMET (needs the comet extra)
BEAM ?= 5
COMET_MODEL ?=
# OVERWRITE=1: redo a stage whose earlier outputs were made from other inputs or settings
OVERWRITE ?=
# make table LANGS="de fr ja"
LANGS ?=
# make contrastive: the test sets, FORMAT:FILE[,CONTEXT_FILE...] each
SETS ?=
ifeq ($(PAIR),demo)
PAIR_DATA := demo/data
PAIR_TGT := fr
PAIR_CKPT := demo/checkpoints/context/checkpoint_best.pt
PAIR_SPM := --spm demo/spm/spm.model
RESULTS := results/demo
else
PAIR_DATA := $(WORK)/data/$(PAIR)
PAIR_TGT := $(PAIR)
PAIR_CKPT := $(WORK)/checkpoints/$(PAIR)/context/checkpoint_best.pt
PAIR_SPM := $(if $(wildcard $(PAIR_DATA)/spm.model),--spm $(PAIR_DATA)/spm.model,)
RESULTS := $(WORK)/results/$(PAIR)
endif
# MuDA's language: pt for pt-br, zh for zh-cn
MUDA_LANG := $(firstword $(subst -, ,$(PAIR_TGT)))
# muda-eval: systems to compare (the first is the baseline), and annotation options
# (pre-computed files when the data has them)
ifeq ($(PAIR),demo)
HYPS ?= demo/outputs/sentence.test.fr demo/outputs/context.test.fr
MUDA_ARGS ?= --lexicon demo/data/train.en.conllu demo/data/train.fr.conllu demo/data/train.align
else
HYPS ?= $(RESULTS)/sentence.test.$(PAIR_TGT) $(RESULTS)/context.test.$(PAIR_TGT) $(RESULTS)/context-gold.test.$(PAIR_TGT)
MUDA_ARGS ?= $(if $(COMET_MODEL),--comet-model $(COMET_MODEL),)
# model options for tagging the reference when its annotations are not in the data directory
MUDA_TAG_ARGS ?=
endif
MUDA_PRE := $(if $(wildcard $(PAIR_DATA)/test.en.conllu),--src-conllu $(PAIR_DATA)/test.en.conllu,)
MUDA_REF_PRE := $(if $(wildcard $(PAIR_DATA)/test.$(PAIR_TGT).conllu),--tgt-conllu $(PAIR_DATA)/test.$(PAIR_TGT).conllu,) \
    $(if $(wildcard $(PAIR_DATA)/test.align),--alignments $(PAIR_DATA)/test.align,)
MUDA_REF_TAGS := $(RESULTS)/muda/reference.tags.json
# pcxmi-shard SHARD=i/n, pcxmi-merge SHARDS=n (what the Slurm job array runs)
SHARD ?=
SHARDS ?= 4
PCXMI := $(RESULTS)/pcxmi.jsonl
PCXMI_SHARDS := $(foreach i,$(shell seq 1 $(SHARDS) 2>/dev/null),$(RESULTS)/pcxmi.shard-$(i)-of-$(SHARDS).jsonl)
# the targets that need LANG=xx (not the demo)
define need_pair
@if [ "$(PAIR)" = demo ]; then echo "error: 'make $@' needs a language pair: make $@ LANG=xx (README, 'The study on a language pair')" >&2; exit 1; fi
endef
define need_venv
@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
endef

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

# the demo corpus through the study's data and train stages (PRESET=demo), then its comparison
demo:
	@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
	$(PY) -m contextual_mt.demo --workdir demo

cadec-demo:
	@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
	@test -f demo/checkpoints/sentence/checkpoint_best.pt || $(SUBMAKE) demo
	$(CMT) cadec-demo --workdir demo

data:
	$(need_venv)
	$(need_pair)
	$(CMT) pipeline data --lang $(PAIR) --output $(PAIR_DATA) $(if $(SPM_VOCAB),--vocab-size $(SPM_VOCAB),) \
	    $(if $(TED),--ted $(TED),) $(if $(IWSLT),--iwslt $(IWSLT),) $(if $(TEXT),--text $(TEXT),) \
	    $(if $(IWSLT_DEV),--iwslt-dev $(IWSLT_DEV),) $(if $(IWSLT_TEST),--iwslt-test $(IWSLT_TEST),) \
	    $(if $(OVERWRITE),--overwrite,)

train:
	$(need_venv)
	$(need_pair)
	$(CMT) pipeline train --lang $(PAIR) --root $(WORK) $(if $(PRESET),--preset $(PRESET),) $(if $(MODEL),--model $(MODEL),) \
	    $(if $(GPUS),--gpus $(GPUS),) $(if $(EPOCHS),--max-epoch $(EPOCHS),) $(if $(MAX_UPDATE),--max-update $(MAX_UPDATE),) \
	    $(if $(PRETRAINED),--pretrained $(PRETRAINED),) $(if $(OVERWRITE),--overwrite,)

translate:
	$(need_venv)
	$(need_pair)
	$(CMT) pipeline translate --lang $(PAIR) --root $(WORK) --beam $(BEAM)

score:
	$(need_venv)
	$(need_pair)
	$(CMT) pipeline score --lang $(PAIR) --root $(WORK) $(if $(COMET_MODEL),--comet-model $(COMET_MODEL),)

# make contrastive LANG=xx SETS="voita:deixis_test.json bawden:anaphora.json contrapro:contrapro.json,ctx..."
contrastive:
	$(need_venv)
	$(need_pair)
	@test -n "$(SETS)" || { echo "error: give SETS=\"FORMAT:FILE[,CONTEXT_FILE...] ...\" (formats: voita, bawden, contrapro, scat)" >&2; exit 1; }
	$(CMT) pipeline contrastive --lang $(PAIR) --root $(WORK) --sets $(SETS)

all:
	$(need_pair)
	$(SUBMAKE) data LANG=$(PAIR)
	$(SUBMAKE) train LANG=$(PAIR)
	$(SUBMAKE) translate LANG=$(PAIR)
	$(SUBMAKE) score LANG=$(PAIR)
	$(SUBMAKE) pcxmi LANG=$(PAIR)
	$(SUBMAKE) muda-eval LANG=$(PAIR)

table:
	$(need_venv)
	@test -n "$(LANGS)" || { echo 'error: make table needs LANGS="xx yy ..." (pairs with results in $(WORK)/results)' >&2; exit 1; }
	$(CMT) pipeline table --langs $(LANGS) --results-dir $(WORK)/results --output-dir $(WORK)/results/table

pcxmi-inputs:
	$(need_venv)
	@if [ "$(PAIR)" = demo ] && [ ! -f $(PAIR_CKPT) ]; then $(SUBMAKE) demo; fi
	@test -f $(PAIR_CKPT) || { echo "error: $(PAIR_CKPT) not found: train the $(PAIR) context model first ('make train LANG=$(PAIR) MODEL=context')" >&2; exit 1; }
	@for f in test.en test.$(PAIR_TGT) test.docids; do test -f $(PAIR_DATA)/$$f || { echo "error: $(PAIR_DATA)/$$f not found (README, 'make pcxmi')" >&2; exit 1; }; done

CXMI_ARGS = --path $(PAIR_CKPT) $(PAIR_SPM) --source $(PAIR_DATA)/test.en --reference $(PAIR_DATA)/test.$(PAIR_TGT) \
    --docids $(PAIR_DATA)/test.docids --skip-up-to-date

pcxmi: pcxmi-inputs
	$(CMT) cxmi $(CXMI_ARGS) --output $(PCXMI)
	@$(SUBMAKE) report LANG=$(PAIR)

pcxmi-shard: pcxmi-inputs
	@echo "$(SHARD)" | grep -Eq '^[0-9]+/[0-9]+$$' || { echo "error: make pcxmi-shard needs SHARD=i/n (e.g. SHARD=1/4)" >&2; exit 1; }
	@# SHARD is 1-based (as the Slurm array and the file names count); cxmi --shard counts from 0
	$(CMT) cxmi $(CXMI_ARGS) --shard $$(( $(word 1,$(subst /, ,$(SHARD))) - 1 ))/$(word 2,$(subst /, ,$(SHARD))) \
	    --output $(RESULTS)/pcxmi.shard-$(subst /,-of-,$(SHARD)).jsonl

pcxmi-merge: pcxmi-inputs
	@if [ -f $(PCXMI) ] && [ -f $(RESULTS)/pcxmi.summary.json ] && [ -z "$$(find $(PCXMI_SHARDS) -newer $(PCXMI) 2>/dev/null)" ]; then \
	  echo "$(PCXMI): up to date (newer than its shards)"; else \
	  $(CMT) cxmi-merge $(PCXMI_SHARDS) --output $(PCXMI) || exit 1; fi
	@$(SUBMAKE) report LANG=$(PAIR)

# the P-CXMI report, remade when the records are newer
report:
	@if [ -f $(RESULTS)/report/report.md ] && [ $(RESULTS)/report/report.md -nt $(PCXMI) ]; then echo "$(RESULTS)/report: up to date"; else \
	$(CMT) report $(PCXMI) --output-dir $(RESULTS)/report \
	    $(if $(wildcard $(PAIR_DATA)/test.$(PAIR_TGT).conllu),--conllu $(PAIR_DATA)/test.$(PAIR_TGT).conllu,) \
	    $(if $(wildcard $(PAIR_DATA)/test.tags.json),--tags $(PAIR_DATA)/test.tags.json,$(if $(wildcard $(MUDA_REF_TAGS)),--tags $(MUDA_REF_TAGS),)) || exit 1; fi

muda-eval:
	$(need_venv)
	@if [ "$(PAIR)" = demo ] && [ ! -f demo/outputs/context.test.fr ]; then $(SUBMAKE) demo; fi
	@for f in test.en test.$(PAIR_TGT) test.docids; do test -f $(PAIR_DATA)/$$f || { echo "error: $(PAIR_DATA)/$$f not found (README, 'make muda-eval')" >&2; exit 1; }; done
	@for h in $(HYPS); do test -f $$h || { echo "error: $$h not found: translate the test set first ('make translate LANG=$(PAIR)'), or pass HYPS=\"...\" (README, 'make muda-eval')" >&2; exit 1; }; done
	@# the reference is tagged once; muda eval checks by content hash that it is this reference
	@if [ -f $(MUDA_REF_TAGS) ] && [ $(MUDA_REF_TAGS) -nt $(PAIR_DATA)/test.$(PAIR_TGT) ]; then echo "reference tags: $(MUDA_REF_TAGS) (cached)"; else \
	  $(RUN) $(VENV)/bin/muda tag --src $(PAIR_DATA)/test.en --tgt $(PAIR_DATA)/test.$(PAIR_TGT) --docids $(PAIR_DATA)/test.docids \
	    --tgt-lang $(MUDA_LANG) --dump-tags $(MUDA_REF_TAGS) $(MUDA_PRE) $(MUDA_REF_PRE) $(MUDA_TAG_ARGS) || exit 1; fi
	@if [ -f $(RESULTS)/muda/eval.json ] && [ -z "$$(find $(HYPS) $(MUDA_REF_TAGS) -newer $(RESULTS)/muda/eval.json 2>/dev/null)" ]; then \
	  echo "$(RESULTS)/muda/eval.json: up to date (newer than the translations and the reference tags)"; else \
	$(RUN) $(VENV)/bin/muda eval --src $(PAIR_DATA)/test.en --ref $(PAIR_DATA)/test.$(PAIR_TGT) --docids $(PAIR_DATA)/test.docids \
	    --tgt-lang $(MUDA_LANG) --hyps $(HYPS) --ref-tags $(MUDA_REF_TAGS) $(MUDA_PRE) $(MUDA_ARGS) \
	    --output $(RESULTS)/muda/eval.json --table $(RESULTS)/muda/eval.txt --plot $(RESULTS)/muda/eval.png || exit 1; fi

include $(dir $(THIS_MAKEFILE))recipes/slurm/slurm.mk

clean:
	rm -rf $(VENV) build *.egg-info
