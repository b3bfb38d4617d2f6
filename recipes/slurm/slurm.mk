# Slurm recipes, included by the main Makefile.
#
#   make slurm LANG=xx [PRESET=small] [MODEL=sentence|context] [TED=PATH|IWSLT=PATH|TEXT=DIR]
#              [PARTITION=...] [CPU_PARTITION=...] [ACCOUNT=...] [GPUS=1] [STAGE_GPUS=...]
#              [TRAIN_TIME=48:00:00] [STAGE_TIME=4:00:00] [CPUS=8] [MEM=32G] [SHARDS=4]
#              [STAGES="data train ..."] [WORK=DIR] [JOB_PREFIX=ctxmt] [SBATCH_ARGS="..."] [DRY_RUN=1]
#       submits the pipeline of en-xx as a chain of Slurm jobs (recipes/slurm/submit.sh --help);
#       safe to re-run: finished stages are skipped and queued ones reused.
#   make test-slurm
#       brings up a single-node Slurm in a temporary folder (installs it with apt-get as root when
#       missing), runs `make slurm` on a small synthetic corpus there, checks every job and output,
#       re-runs it (nothing may be submitted) and brings the cluster down (recipes/slurm/test_local.sh).
#
# Only the variables given on the command line or in the environment are passed on, so that
# submit.sh's defaults apply (and not those of the Makefile's own targets, e.g. GPUS).

SLURM_SUBMIT_VARS := PRESET MODEL STAGES WORK TED IWSLT TEXT SPM_VOCAB PARTITION CPU_PARTITION ACCOUNT \
    GPUS STAGE_GPUS TRAIN_TIME STAGE_TIME CPUS MEM SHARDS JOB_PREFIX SBATCH_ARGS DRY_RUN MAKE_ARGS
# Make variables of the stage targets that `make slurm` forwards to every job (through MAKE_ARGS)
# (MAKE_ARGS is split into words like a shell: a value with spaces is put in double quotes)
SLURM_MAKE_VARS := EPOCHS MAX_UPDATE PRETRAINED BATCH DTYPE BEAM DECODING COMET_MODEL IWSLT_DEV IWSLT_TEST MUDA_ARGS MUDA_TAG_ARGS REPORT_ARGS
slurm_given = $(filter command line environment environment override override,$(origin $(1)))
slurm_quote = '$(subst ','\'',$(1))'
SLURM_FORWARD := $(strip $(foreach v,$(SLURM_MAKE_VARS),$(if $(call slurm_given,$(v)),$(v)="$(strip $($(v)))")))

.PHONY: slurm test-slurm

slurm:
	@if [ "$(PAIR)" = demo ]; then echo "error: make slurm needs the language pair: make slurm LANG=xx (see recipes/slurm/submit.sh --help)" >&2; exit 2; fi
	@CTXMT_CLI=$(abspath $(VENV))/bin/contextual-mt bash recipes/slurm/submit.sh LANG=$(PAIR) \
	    $(foreach v,$(filter-out MAKE_ARGS,$(SLURM_SUBMIT_VARS)),$(if $(call slurm_given,$(v)),$(call slurm_quote,$(v)=$($(v))))) \
	    $(if $(or $(call slurm_given,MAKE_ARGS),$(SLURM_FORWARD)),$(call slurm_quote,MAKE_ARGS=$(strip $(if $(call slurm_given,MAKE_ARGS),$(MAKE_ARGS)) $(SLURM_FORWARD))))

test-slurm:
	@bash recipes/slurm/test_local.sh
