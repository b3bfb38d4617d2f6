# Slurm recipes, included by the main Makefile (whose `## ` comments document targets and
# variables: docs/reference/make.md is generated from both files).
#
# Only the variables given on the command line or in the environment are passed on, so that
# submit.sh's defaults apply (and not those of the Makefile's own targets, e.g. GPUS).
## var PARTITION: `make slurm`: the partition of the GPU jobs (default: the cluster's)
## var CPU_PARTITION: `make slurm`: the partition of the CPU-only jobs (data, the P-CXMI merge; default: PARTITION)
## var ACCOUNT: `make slurm`: sbatch's `--account` (default: none)
## var STAGE_GPUS: `make slurm`: GPUs of translate, score (COMET), MuDA (stanza, the aligner), cues and each
##   P-CXMI task (default 1; 0 with `GPUS=0`)
## var TRAIN_TIME: `make slurm`: `--time` of the training jobs (default `48:00:00`)
## var STAGE_TIME: `make slurm`: `--time` of the other jobs (default `4:00:00`)
## var CPUS: `make slurm`: `--cpus-per-task` (default 8)
## var MEM: `make slurm`: `--mem` (default `32G`; empty: the cluster's default)
## var STAGES: `make slurm`: a subset of `data train translate score pcxmi muda cues` (default: all)
## var JOB_PREFIX: `make slurm`: the prefix of the job names, `ctxmt-fr-train-context` (default `ctxmt`)
## var SBATCH_ARGS: `make slurm`: more sbatch options for every job (`"--qos=long"`)
## var MAKE_ARGS: `make slurm`: more Make variables for every stage (split like a shell: a value with
##   spaces is put in double quotes)
## var DRY_RUN: `make slurm`: 1 prints the sbatch commands instead of running them (default 0)
SLURM_SUBMIT_VARS := PRESET MODEL STAGES WORK TED IWSLT TEXT SPM_VOCAB PARTITION CPU_PARTITION ACCOUNT \
    GPUS STAGE_GPUS TRAIN_TIME STAGE_TIME CPUS MEM SHARDS JOB_PREFIX SBATCH_ARGS DRY_RUN MAKE_ARGS
# Make variables of the stage targets that `make slurm` forwards to every job (through MAKE_ARGS)
# (MAKE_ARGS is split into words like a shell: a value with spaces is put in double quotes)
SLURM_MAKE_VARS := EPOCHS MAX_UPDATE PRETRAINED BATCH DTYPE BEAM DECODING COMET_MODEL IWSLT_DEV IWSLT_TEST MUDA_ARGS MUDA_TAG_ARGS REPORT_ARGS
slurm_given = $(filter command line environment environment override override,$(origin $(1)))
slurm_quote = '$(subst ','\'',$(1))'
SLURM_FORWARD := $(strip $(foreach v,$(SLURM_MAKE_VARS),$(if $(call slurm_given,$(v)),$(v)="$(strip $($(v)))")))

.PHONY: slurm test-slurm

## target slurm: submits the study of en-xx as a chain of Slurm jobs, one per stage
##   (`recipes/slurm/*.sbatch`, linked with `--dependency=afterok`): data (CPU), the two trainings
##   (in parallel, GPUS each, default 1; `a100:2` works; 0 = no `--gres`), translate, score and MuDA;
##   the counterfactual cues after the two trainings; P-CXMI as a job array of SHARDS tasks, then the merge and the report. Safe to re-run: finished
##   stages are skipped and queued ones reused. The stage variables are passed on to every job
##   (`recipes/slurm/submit.sh --help`; the Slurm tutorial)
## uses: LANG WORK PRESET MODEL TED IWSLT TEXT SPM_VOCAB GPUS SHARDS EPOCHS MAX_UPDATE PRETRAINED BATCH
##   DTYPE BEAM DECODING COMET_MODEL IWSLT_DEV IWSLT_TEST MUDA_ARGS MUDA_TAG_ARGS REPORT_ARGS PARTITION
##   CPU_PARTITION ACCOUNT STAGE_GPUS TRAIN_TIME STAGE_TIME CPUS MEM STAGES JOB_PREFIX SBATCH_ARGS
##   MAKE_ARGS DRY_RUN
slurm:
	@if [ "$(PAIR)" = demo ]; then echo "error: make slurm needs the language pair: make slurm LANG=xx (see recipes/slurm/submit.sh --help)" >&2; exit 2; fi
	@CTXMT_CLI=$(abspath $(VENV))/bin/contextual-mt bash recipes/slurm/submit.sh LANG=$(PAIR) \
	    $(foreach v,$(filter-out MAKE_ARGS,$(SLURM_SUBMIT_VARS)),$(if $(call slurm_given,$(v)),$(call slurm_quote,$(v)=$($(v))))) \
	    $(if $(or $(call slurm_given,MAKE_ARGS),$(SLURM_FORWARD)),$(call slurm_quote,MAKE_ARGS=$(strip $(if $(call slurm_given,MAKE_ARGS),$(MAKE_ARGS)) $(SLURM_FORWARD))))

## target test-slurm: brings up a single-node Slurm in a temporary folder (installs it with apt-get
##   as root when missing), runs `make slurm` on a small synthetic corpus there, checks every job and
##   output, re-runs it (nothing may be submitted) and brings the cluster down
##   (`recipes/slurm/test_local.sh`)
test-slurm:
	@bash recipes/slurm/test_local.sh
