#!/usr/bin/env bash
# Submit the contextual-mt pipeline of one language pair (en -> LANG) to Slurm, as jobs chained with
# --dependency=afterok:
#
#   data -> train-sentence ---> translate -> score
#        \> train-context  --/            \> muda
#                          \-> pcxmi (job array, SHARDS tasks) -> pcxmi-merge
#                          \-> cues (with train-sentence)
#
# Usage (usually through `make slurm LANG=xx VAR=value ...`):
#   recipes/slurm/submit.sh LANG=fr [VAR=value ...]
# It prints one line per stage on stdout: `STAGE JOBID STATUS`, STATUS being
#   submitted  a job was submitted now (pcxmi: `submitted shards=1,3/4`, the shards still to do)
#   queued     a job of this stage (same job name) is already pending or running: it is reused
#   done       the stage's done-records say it finished (JOBID is `-`); nothing is submitted
#   off        not selected (STAGES, MODEL) and not done (JOBID `-`)
#   blocked    needs a stage that is off or blocked (JOBID `-`)
#
# Safe to re-run: a stage whose done-records say it finished is not submitted again, and its dependents do
# not wait for it; a stage with a live job named JOB_PREFIX-LANG-STAGE (squeue, this user) is not
# submitted twice, its dependents wait for that job. A pending job whose dependency failed
# (DependencyNeverSatisfied) is cancelled and submitted again. To redo a finished stage, delete its
# done-records (`pipeline plan --json` lists them as `records`; and those of the stages after it).
# The stages, what each needs, its script, GPU or CPU, the Make variables its job gets and whether it
# is finished (by the records the stages write) come from one declaration:
# `contextual-mt pipeline plan --lang LANG --root WORK --shards SHARDS` (contextual_mt/pipeline/stages.py).
#
# Variables: VAR=value arguments, else environment variables of the same name, else the default.
#   LANG=xx          target language (source: en). Required, and only as an argument (the
#                    environment's LANG is the locale)
#   PRESET=          model preset for `make train`: one of contextual_mt/pipeline/presets.py's, checked
#                    by `pipeline plan --preset`; empty: make train's default (that module's DEFAULT)
#   MODEL=           sentence|context: train only that model; empty: both
#   STAGES=          the stages to run, of: data train translate score pcxmi muda cues (pcxmi includes
#                    the merge); empty: all
#   WORK=.           folder for data/, checkpoints/, results/ and logs/ (given to make as WORK=)
#   TED= IWSLT= TEXT= SPM_VOCAB=   for the data stage, given to `make data` when set; one of
#                    TED/IWSLT/TEXT is needed when the data is not there yet
#   PARTITION=       sbatch --partition for the GPU stages (empty: the cluster's default)
#   CPU_PARTITION=   --partition for the CPU-only stages (data, pcxmi-merge; and all when
#                    no GPUs); empty: PARTITION
#   ACCOUNT=         sbatch --account (empty: none)
#   GPUS=1           GPUs of each training job (--gres=gpu:GPUS; a typed count such as a100:2 works);
#                    0 or empty: no --gres at all (CPU-only clusters)
#   STAGE_GPUS=      GPUs of translate, score, muda (stanza, the aligner), cues and each pcxmi task; default 1 (a100:1 for GPUS=a100:N),
#                    0 when GPUS=0
#   TRAIN_TIME=48:00:00   --time of the training jobs (they requeue themselves near the limit)
#   STAGE_TIME=4:00:00    --time of the other jobs
#   CPUS=8           --cpus-per-task of every job
#   MEM=32G          --mem of every job (empty: none, the cluster's default)
#   SHARDS=4         tasks of the P-CXMI job array
#   JOB_PREFIX=ctxmt job names are JOB_PREFIX-LANG-STAGE
#   SBATCH_ARGS=     more sbatch options for every job, split into words as the shell does
#                    (quotes group; nothing is run), e.g. "--qos=long --constraint=a100"
#   MAKE_ARGS=       more Make variables for every job's make, split the same way, e.g.
#                    'EPOCHS=20 MUDA_ARGS="--stanza-dir /data/stanza"'; `make slurm` puts there
#                    EPOCHS, MAX_UPDATE, PRETRAINED, BATCH, DTYPE, BEAM, COMET_MODEL, IWSLT_DEV, IWSLT_TEST,
#                    MUDA_ARGS, MUDA_TAG_ARGS and REPORT_ARGS when they are given
#   DRY_RUN=0        1: print the sbatch commands (stderr) instead of running them; submits and
#                    cancels nothing
#   CTXMT_CLI=.venv/bin/contextual-mt   the command that prints the plan (`make slurm`: VENV's)
# Logs: WORK/logs/LANG/JOB_NAME-JOBID.out (created here: sbatch opens them).
set -euo pipefail

die() { echo "submit.sh: error: $*" >&2; exit 2; }
note() { echo "submit.sh: $*" >&2; }

VARS=(PRESET MODEL STAGES WORK TED IWSLT TEXT SPM_VOCAB PARTITION CPU_PARTITION ACCOUNT GPUS STAGE_GPUS
      TRAIN_TIME STAGE_TIME CPUS MEM SHARDS JOB_PREFIX SBATCH_ARGS MAKE_ARGS DRY_RUN)
PAIR=
for arg in "$@"; do
    case $arg in
        -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0;;
        LANG=*) PAIR=${arg#LANG=};;
        *=*)
            key=${arg%%=*}
            [[ " ${VARS[*]} " == *" $key "* ]] || die "unknown variable '$key' (see --help)"
            printf -v "$key" '%s' "${arg#*=}";;
        *) die "arguments are VAR=value (e.g. LANG=fr); got '$arg' (see --help)";;
    esac
done
# The values are in shell variables now; the jobs must not inherit them (nor make's own variables)
# from this environment: each job gets exactly the Make variables it is given below.
for v in "${VARS[@]}"; do export -n "$v" 2>/dev/null || true; done
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
# `make slurm LANG=fr` exports LANG=fr, which is no locale: the jobs get a UTF-8 one
if [ "${LANG:-}" = "$PAIR" ]; then export LANG=C.UTF-8; fi

PRESET=${PRESET:-}
MODEL=${MODEL:-}
STAGES=${STAGES:-}  # default (below): every stage of the plan
WORK=${WORK:-.}
TED=${TED:-}; IWSLT=${IWSLT:-}; TEXT=${TEXT:-}; SPM_VOCAB=${SPM_VOCAB:-}
PARTITION=${PARTITION:-}
CPU_PARTITION=${CPU_PARTITION:-$PARTITION}
ACCOUNT=${ACCOUNT:-}
GPUS=${GPUS-1}
TRAIN_TIME=${TRAIN_TIME:-48:00:00}
STAGE_TIME=${STAGE_TIME:-4:00:00}
CPUS=${CPUS:-8}
MEM=${MEM-32G}
SHARDS=${SHARDS:-4}
JOB_PREFIX=${JOB_PREFIX:-ctxmt}
SBATCH_ARGS=${SBATCH_ARGS:-}
MAKE_ARGS=${MAKE_ARGS:-}
DRY_RUN=${DRY_RUN:-0}

[ -n "$PAIR" ] || die "give the target language: LANG=xx (e.g. LANG=fr)"
[[ $PAIR =~ ^[A-Za-z][A-Za-z_-]*$ ]] || die "LANG=$PAIR: not a language code"
[ "$PAIR" != demo ] && [ "$PAIR" != en ] || die "LANG=$PAIR: give the target language of an en-xx pair"
case $MODEL in ''|sentence|context) ;; *) die "MODEL=$MODEL: expected sentence, context or nothing (both)";; esac
[[ $SHARDS =~ ^[1-9][0-9]*$ ]] || die "SHARDS=$SHARDS: expected a positive number"
[[ $CPUS =~ ^[1-9][0-9]*$ ]] || die "CPUS=$CPUS: expected a positive number"
[[ $GPUS =~ ^([A-Za-z0-9_.-]+:)?[0-9]+$ || -z $GPUS ]] || die "GPUS=$GPUS: expected a number (or type:number, e.g. a100:2)"
[[ $GPUS =~ ^([A-Za-z0-9_.-]+:)?0*$ ]] && GPUS=0
if [ -z "${STAGE_GPUS:-}" ]; then
    case $GPUS in 0) STAGE_GPUS=0;; *:*) STAGE_GPUS=${GPUS%:*}:1;; *) STAGE_GPUS=1;; esac
fi
[[ $STAGE_GPUS =~ ^([A-Za-z0-9_.-]+:)?[0-9]+$ ]] || die "STAGE_GPUS=$STAGE_GPUS: expected a number (or type:number)"
[[ $STAGE_GPUS =~ ^([A-Za-z0-9_.-]+:)?0*$ ]] && STAGE_GPUS=0
case $DRY_RUN in 0|1) ;; *) die "DRY_RUN=$DRY_RUN: expected 0 or 1";; esac

# Paths given relative to where we were called are made absolute: the jobs run in the repository root.
absolute() { case $1 in ''|/*) printf '%s' "$1";; *) printf '%s' "$PWD/$1";; esac; }
TED=$(absolute "$TED"); IWSLT=$(absolute "$IWSLT"); TEXT=$(absolute "$TEXT")
WORK=$(absolute "$WORK")
if [ -d "$WORK" ]; then WORK=$(cd "$WORK" && pwd); fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"   # sbatch is run from here: the jobs' SLURM_SUBMIT_DIR
export CTXMT_ROOT=$ROOT
SCRIPTS=recipes/slurm
LOGS=$WORK/logs/$PAIR   # made before the first sbatch: sbatch opens the logs
USER_NAME=$(id -un)

# the job graph: NAME NEEDS SCRIPT DEVICE GROUP MAKE_VARS STATE TODO per line (`pipeline plan`)
CTXMT_CLI=${CTXMT_CLI:-$ROOT/.venv/bin/contextual-mt}
[ -x "$CTXMT_CLI" ] || die "$CTXMT_CLI not found: run 'make install' first (or set CTXMT_CLI)"
# (PRESET is checked there too, against the presets module: no job is submitted with a bad one)
PLAN=$(LC_ALL=C.UTF-8 "$CTXMT_CLI" pipeline plan --lang "$PAIR" --root "$WORK" --shards "$SHARDS" \
       ${PRESET:+--preset "$PRESET"} 2>&1) \
    || die "LANG=$PAIR SHARDS=$SHARDS${PRESET:+ PRESET=$PRESET}: $(printf '%s\n' "$PLAN" | grep -v '| INFO |' | tail -n 1)"
PLAN=$(printf '%s\n' "$PLAN" | grep -v '| INFO |')  # fairseq's import notes on stderr
declare -A NEEDS SCRIPT DEVICE GROUP JOB_VARS STATE TODO
ORDER=()
while read -r name needs script device group vars state todo; do
    [ "$script" != - ] || continue  # a stage run by hand, not a job of the chain
    ORDER+=("$name"); NEEDS[$name]=${needs//,/ }; NEEDS[$name]=${NEEDS[$name]#-}; SCRIPT[$name]=$script; DEVICE[$name]=$device
    GROUP[$name]=$group; JOB_VARS[$name]=${vars//,/ }; JOB_VARS[$name]=${JOB_VARS[$name]#-}; STATE[$name]=$state; TODO[$name]=${todo#-}
done <<<"$PLAN"
GROUPS_ALL=$(for name in "${ORDER[@]}"; do printf '%s\n' "${GROUP[$name]}"; done | awk '!seen[$0]++' | paste -sd' ' -)
STAGES=${STAGES:-$GROUPS_ALL}
for s in $STAGES; do
    [[ " $GROUPS_ALL " == *" $s "* ]] || die "STAGES: unknown stage '$s' (expected some of: $GROUPS_ALL)"
done
selected() {  # selected JOB: asked for by STAGES and MODEL
    [[ " $STAGES " == *" ${GROUP[$1]} "* ]] || return 1
    case $1 in
        train-sentence) [ "$MODEL" != context ];;
        train-context) [ "$MODEL" != sentence ];;
    esac
}

HAVE_SQUEUE=1
if ! command -v sbatch >/dev/null 2>&1 || ! probe=$(squeue -h -u "$USER_NAME" -o %i 2>&1 >/dev/null); then
    if [ "$DRY_RUN" = 1 ]; then
        note "no Slurm here (sbatch/squeue missing or failing): the dry run assumes that nothing is queued"
        HAVE_SQUEUE=0
    elif ! command -v sbatch >/dev/null 2>&1; then
        die "sbatch not found: run this where Slurm's commands are (DRY_RUN=1 shows the jobs without Slurm)"
    else
        die "squeue failed: is Slurm reachable (SLURM_CONF)? $(printf '%s' "$probe" | tail -n 1)"
    fi
fi
live_jobs() {  # live_jobs NAME: ids (colon-separated) of this user's pending/running jobs of that name
    local out id state reason ids=()
    [ "$HAVE_SQUEUE" = 1 ] || return 0
    out=$(squeue -h -u "$USER_NAME" -n "$1" -o '%F|%T|%r') || die "squeue failed: is Slurm reachable?"
    while IFS='|' read -r id state reason; do
        [ -n "$id" ] || continue
        if [ "$state" = PENDING ] && [ "$reason" = DependencyNeverSatisfied ]; then
            if [ "$DRY_RUN" = 1 ]; then
                note "would cancel job $id ($1): a job it depends on failed"
            else
                note "cancelling job $id ($1): a job it depends on failed; submitting it again"
                scancel "$id" || die "scancel $id failed"
            fi
            continue
        fi
        [[ " ${ids[*]} " == *" $id "* ]] || ids+=("$id")
    done <<<"$out"
    local IFS=:
    printf '%s' "${ids[*]}"
}

split_words() {  # split_words ARRAY STRING: STRING's words, with shell-like quotes; nothing is run
    local -n _words=$1
    _words=()
    printf '%s' "$2" | xargs -r printf '' 2>/dev/null || return 1
    mapfile -d '' -t _words < <(printf '%s' "$2" | xargs -r printf '%s\0')
}

# resources
ACCOUNT_OPTS=(); [ -z "$ACCOUNT" ] || ACCOUNT_OPTS=(--account="$ACCOUNT")
MEM_OPTS=(); [ -z "$MEM" ] || MEM_OPTS=(--mem="$MEM")
split_words EXTRA_OPTS "$SBATCH_ARGS" || die "SBATCH_ARGS: unbalanced quotes in: $SBATCH_ARGS"
resources() {  # resources GPUS TIME -> RES (array)
    local part
    RES=(--time="$2" --cpus-per-task="$CPUS" "${MEM_OPTS[@]}" "${ACCOUNT_OPTS[@]}")
    if [ "$1" = 0 ]; then part=$CPU_PARTITION; else part=$PARTITION; RES+=(--gres="gpu:$1"); fi
    [ -z "$part" ] || RES+=(--partition="$part")
    RES+=("${EXTRA_OPTS[@]}")
}

split_words EXTRA_VARS "$MAKE_ARGS" || die "MAKE_ARGS: unbalanced quotes in: $MAKE_ARGS"
for v in "${EXTRA_VARS[@]}"; do [[ $v == [A-Za-z_]*=* ]] || die "MAKE_ARGS: '$v' is not VAR=value"; done
COMMON_VARS=(LANG="$PAIR" WORK="$WORK" "${EXTRA_VARS[@]}")
job_vars() {  # job_vars JOB -> JOB_MAKE_VARS (array): the Make variables its job gets
    local v
    JOB_MAKE_VARS=("${COMMON_VARS[@]}")
    for v in ${JOB_VARS[$1]}; do
        case $v in
            MODEL) JOB_MAKE_VARS+=(MODEL="${1#*-}");;   # train-MODEL
            GPUS) JOB_MAKE_VARS+=(GPUS="${GPUS##*:}");;
            *) [ -z "${!v}" ] || JOB_MAKE_VARS+=("$v=${!v}");;
        esac
    done
}

ranges() {  # ranges 0 1 2 5 -> 0-2,5
    local out= start=$1 prev=$1 i
    shift
    for i in "$@" ""; do
        if [ -n "$i" ] && [ "$i" = $((prev + 1)) ]; then prev=$i; continue; fi
        out+=${out:+,}$start; [ "$prev" = "$start" ] || out+=-$prev
        start=$i; prev=$i
    done
    printf '%s' "$out"
}
join_ids() {  # join_ids "ID[:ID...]"...: the distinct ids, colon-separated
    local a id ids out=()
    for a in "$@"; do
        IFS=: read -r -a ids <<<"$a" || true
        for id in "${ids[@]}"; do
            [ -z "$id" ] || [[ " ${out[*]} " == *" $id "* ]] || out+=("$id")
        done
    done
    local IFS=:
    printf '%s' "${out[*]}"
}

declare -A STATUS WAIT
DRY_ID=0
SUBMITTED=0
# stage STAGE "PARENTS" SCRIPT GPUS TIME [ARRAY] -- MAKE_VARS...
stage() {
    local name=$1 parents=$2 script=$3 gpus=$4 time=$5 array=$6
    shift 7
    local job=$JOB_PREFIX-$PAIR-$name p deps=() blocked= ids
    for p in $parents; do
        case ${STATUS[$p]} in
            off|blocked) blocked+=${blocked:+,}$p;;
            *) [ -z "${WAIT[$p]}" ] || deps+=("${WAIT[$p]}");;
        esac
    done
    ids=$(live_jobs "$job")
    if [ -n "$ids" ]; then
        STATUS[$name]=queued; WAIT[$name]=$ids
        echo "$name $ids queued"; return
    fi
    if [ "${STATE[$name]}" = done ]; then
        STATUS[$name]=done; WAIT[$name]=
        echo "$name - done"; return
    fi
    # a stage with no job of its own: its dependents wait for its parents' jobs instead
    WAIT[$name]=$(join_ids "${deps[@]}")
    if ! selected "$name"; then
        STATUS[$name]=off; echo "$name - off"; return
    fi
    if [ -n "$blocked" ]; then
        STATUS[$name]=blocked; echo "$name - blocked (needs $blocked)"; return
    fi
    if [[ " ${JOB_VARS[$name]} " == *" TED "* ]] && [ -z "$TED$IWSLT$TEXT" ]; then
        die "$WORK/data/$PAIR is not prepared yet: give the corpus with TED=PATH, IWSLT=PATH or TEXT=DIR"
    fi
    resources "$gpus" "$time"
    local cmd=(sbatch --parsable --job-name="$job" "${RES[@]}")
    local log=$LOGS/%x-%j.out detail=
    if [ -n "$array" ]; then
        local idx=() s
        IFS=, read -r -a idx <<<"$array"
        for s in "${!idx[@]}"; do idx[$s]=$((idx[$s] - 1)); done
        cmd+=(--array="$(ranges "${idx[@]}")")
        log=$LOGS/%x-%A_%a.out
        detail=" shards=$array/$SHARDS"
    fi
    cmd+=(--output="$log")
    if [ ${#deps[@]} -gt 0 ]; then
        cmd+=(--dependency="afterok:$(join_ids "${deps[@]}")" --kill-on-invalid-dep=yes)
    fi
    cmd+=("$SCRIPTS/$script" "$@")
    local id
    if [ "$DRY_RUN" = 1 ]; then
        DRY_ID=$((DRY_ID + 1)); id=DRY$DRY_ID
        note "would run: $(printf '%q ' "${cmd[@]}")"
    else
        mkdir -p "$LOGS"
        id=$("${cmd[@]}") || die "sbatch failed for $job: ${cmd[*]}"
        id=${id%%;*}
        [[ $id =~ ^[0-9]+$ ]] || die "sbatch printed '$id' for $job, not a job id"
    fi
    SUBMITTED=$((SUBMITTED + 1))
    STATUS[$name]=submitted; WAIT[$name]=$id
    echo "$name $id submitted$detail"
}

# GPUs and time by the plan's device: gpus = the training jobs' GPUS, gpu = STAGE_GPUS, cpu = none
for name in "${ORDER[@]}"; do
    case ${DEVICE[$name]} in
        gpus) gpus=$GPUS; time=$TRAIN_TIME;;
        gpu) gpus=$STAGE_GPUS; time=$STAGE_TIME;;
        *) gpus=0; time=$STAGE_TIME;;
    esac
    job_vars "$name"
    stage "$name" "${NEEDS[$name]}" "${SCRIPT[$name]}" "$gpus" "$time" "${TODO[$name]}" -- "${JOB_MAKE_VARS[@]}"
done

if [ "$DRY_RUN" = 1 ]; then
    note "dry run: $SUBMITTED job(s) would be submitted"
else
    note "$SUBMITTED job(s) submitted for en-$PAIR; logs in $LOGS/"
fi
