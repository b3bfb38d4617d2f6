#!/usr/bin/env bash
# `make test-slurm`: the Slurm recipes, end to end, on a single-node Slurm brought up on this machine.
#
#  1. recipes/slurm/local_cluster.sh up TMP/cluster (installs Slurm with apt-get as root when missing)
#  2. a small synthetic corpus (contextual-mt demo-data: 200/20/20 documents) in TMP/corpus
#  3. make slurm LANG=fr PRESET=tiny EPOCHS=3 GPUS=0 SHARDS=2 CPUS=1 TEXT=TMP/corpus SPM_VOCAB=500
#     WORK=TMP/work MUDA_TAG_ARGS=... (EPOCHS: the recipes are under test, not the models; it also
#     checks that a stage's Make variables reach the jobs) MUDA_ARGS=... (MuDA annotates with the corpus' CoNLL-U and alignments:
#     no stanza models needed); WORK: nothing is written to the repository's data/, checkpoints/,
#     results/ or logs/
#  4. waits for the jobs; each must end COMPLETED with exit code 0, and every stage's outputs exist
#  5. make slurm again: every stage must be `done`, nothing submitted
#  6. brings the cluster down (always, on any exit)
# Prints PASS or FAIL (with the failed jobs' log tails); exits non-zero on failure.
# Environment: TEST_SLURM_TIMEOUT (seconds to wait for the jobs, default 5400), KEEP=1 (keep TMP
# even on success; it is always kept on failure), SLURM_PORT (local_cluster.sh; default: the first
# free pair from 16817 on),
# TEST_SLURM_ARGS (more `make slurm` variables, e.g. "PRESET=small").
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
PAIR=fr
SHARDS=2
TIMEOUT=${TEST_SLURM_TIMEOUT:-5400}
START=$(date +%s)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ctxmt-test-slurm.XXXXXX")
chmod 755 "$TMP"   # munged's socket lives below it: every folder above must be searchable by all
CLUSTER=$TMP/cluster
WORK=$TMP/work
CORPUS=$TMP/corpus
FAILURES=()
RESULT=FAIL

log() { echo "test-slurm [$(( $(date +%s) - START ))s]: $*"; }
fail() { FAILURES+=("$*"); log "FAIL: $*"; }

finish() {
    local rc=$?
    if [ -f "$CLUSTER/slurm.conf" ]; then
        bash recipes/slurm/local_cluster.sh down "$CLUSTER" 2>&1 | sed 's/^/  /'
    fi
    local took=$(( $(date +%s) - START ))
    echo
    if [ "$RESULT" = PASS ]; then
        echo "test-slurm: PASS in ${took}s (Slurm $(sinfo --version 2>/dev/null | awk '{print $2}'), $(nproc) CPUs)"
        if [ "${KEEP:-0}" = 1 ]; then echo "test-slurm: kept $TMP"; else rm -rf "$TMP"; fi
        exit 0
    fi
    echo "test-slurm: FAIL in ${took}s; files kept in $TMP"
    local f
    for f in "${FAILURES[@]}"; do echo "  - $f"; done
    [ "$rc" != 0 ] || rc=1
    exit "$rc"
}
trap finish EXIT
trap 'log "interrupted"; exit 130' INT TERM

[ -x .venv/bin/contextual-mt ] || { fail ".venv/bin/contextual-mt not found: run 'make install' first"; exit 1; }

log "bringing up a local Slurm in $CLUSTER"
conf=$(SLURM_PORT=${SLURM_PORT:-auto} bash recipes/slurm/local_cluster.sh up "$CLUSTER") || { fail "local_cluster.sh up failed"; exit 1; }
eval "$conf"
export SLURM_CONF

log "writing the synthetic corpus in $CORPUS"
LC_ALL=C.UTF-8 .venv/bin/contextual-mt demo-data --output "$CORPUS" --train-docs 200 --valid-docs 20 \
    --test-docs 20 >"$TMP/demo-data.log" 2>&1 || { fail "contextual-mt demo-data failed (see $TMP/demo-data.log)"; exit 1; }

# the variables of both `make slurm` runs (the second must find everything done)
read -r -a EXTRA <<<"${TEST_SLURM_ARGS:-}"
# MuDA annotates offline with the corpus' own annotations (no stanza models needed)
SLURM_VARS=(LANG=$PAIR PRESET=tiny EPOCHS=3 GPUS=0 SHARDS=$SHARDS CPUS=1 MEM=2G STAGE_TIME=2:00:00 TRAIN_TIME=4:00:00
            TEXT="$CORPUS" SPM_VOCAB=500 WORK="$WORK"
            MUDA_TAG_ARGS="--src-conllu $CORPUS/test.en.conllu --tgt-conllu $CORPUS/test.$PAIR.conllu --alignments $CORPUS/test.align"
            MUDA_ARGS="--src-conllu $CORPUS/test.en.conllu --lexicon $CORPUS/train.en.conllu $CORPUS/train.$PAIR.conllu $CORPUS/train.align"
            "${EXTRA[@]}")
# not the caller's make flags (e.g. -j, or variables of `make test-slurm X=Y`)
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

log "make slurm $(printf "%q " "${SLURM_VARS[@]}")"
make --no-print-directory slurm "${SLURM_VARS[@]}" >"$TMP/submit1.out" 2>"$TMP/submit1.err"
rc=$?
sed 's/^/  /' "$TMP/submit1.out" "$TMP/submit1.err"
[ "$rc" = 0 ] || { fail "make slurm exited with $rc"; exit 1; }
STAGE_NAMES=(data train-sentence train-context translate score pcxmi pcxmi-merge muda cues)
for s in "${STAGE_NAMES[@]}"; do
    awk -v s="$s" '$1 == s && $3 == "submitted" {f=1} END {exit !f}' "$TMP/submit1.out" \
        || fail "make slurm did not submit the $s stage"
done
IDS=$(awk '$3 == "submitted" {print $2}' "$TMP/submit1.out" | paste -sd, -)
[ -n "$IDS" ] || { fail "no job ids in the output of make slurm"; exit 1; }

job_states() {  # one line per job (array tasks too): ID NAME STATE EXITCODE
    local id
    for id in ${IDS//,/ }; do
        scontrol show job -o "$id" 2>/dev/null | awk '{
            for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = substr($i, length(kv[1]) + 2) }
            id = (v["ArrayTaskId"] != "") ? v["ArrayJobId"] "_" v["ArrayTaskId"] : v["JobId"]
            print id, v["JobName"], v["JobState"], v["ExitCode"] }'
    done
}

log "waiting for jobs $IDS (at most ${TIMEOUT}s)"
last=0
while :; do
    live=$(squeue -h -o %i 2>/dev/null | wc -l)
    states=$(job_states)
    if echo "$states" | awk '$3 ~ /FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED/ {f=1} END {exit !f}'; then
        log "a job failed: not waiting for the others"
        break
    fi
    [ "$live" = 0 ] && break
    now=$(date +%s)
    if [ $((now - START)) -gt "$TIMEOUT" ]; then fail "the jobs did not finish in ${TIMEOUT}s"; break; fi
    if [ $((now - last)) -ge 60 ]; then
        log "$(echo "$states" | awk '{n[$3]++} END {for (s in n) printf "%s %d  ", s, n[s]}')"
        last=$now
    fi
    sleep 5
done

states=$(job_states)
echo "$states" | sed 's/^/  /'
bad=$(echo "$states" | awk '!($3 == "COMPLETED" && $4 == "0:0")')
if [ -n "$bad" ]; then
    fail "jobs not COMPLETED with exit code 0: $(echo "$bad" | awk '{print $2 " (" $1 ") " $3 " " $4}' | paste -sd, -)"
    for id in $(echo "$bad" | awk '$3 != "PENDING" && $3 != "CANCELLED" {print $1}'); do
        for f in "$WORK"/logs/$PAIR/*-"$id".out; do
            [ -f "$f" ] || continue
            echo "  ---- the end of $f"; tail -n 30 "$f" | sed 's/^/  | /'
        done
    done
    exit 1
fi
expected=$(( ${#STAGE_NAMES[@]} - 1 + SHARDS ))
[ "$(echo "$states" | grep -c .)" = "$expected" ] || fail "expected $expected jobs (array tasks included), scontrol knows $(echo "$states" | grep -c .)"
[ "$(ls "$WORK/logs/$PAIR" 2>/dev/null | wc -l)" = "$expected" ] \
    || fail "expected $expected logs in $WORK/logs/$PAIR, found $(ls "$WORK/logs/$PAIR" 2>/dev/null | wc -l)"

D=$WORK/data/$PAIR; C=$WORK/checkpoints/$PAIR; R=$WORK/results/$PAIR
for f in "$D/bin/dict.$PAIR.txt" "$D/summary.json" \
         "$C/sentence/checkpoint_best.pt" "$C/sentence/.stage/train.json" "$C/context/checkpoint_best.pt" "$C/context/.stage/train.json" \
         "$R/sentence.test.$PAIR" "$R/context.test.$PAIR" "$R/context-gold.test.$PAIR" "$R/scores.json" \
         "$R/pcxmi.shard-1-of-$SHARDS.jsonl" "$R/pcxmi.shard-$SHARDS-of-$SHARDS.jsonl" "$R/pcxmi.jsonl" \
         "$R/pcxmi.summary.json" "$R/report/report.md" "$R/muda/eval.json" "$R/cues/cues.json"; do
    [ -s "$f" ] || fail "missing output: ${f#"$WORK"/}"
done
for m in sentence context; do  # EPOCHS=3 went through MAKE_ARGS to the training jobs
    grep -q '"max_epoch": 3,' "$C/$m/.stage/train.json" 2>/dev/null || fail "the $m model was not trained with EPOCHS=3"
done
for d in data checkpoints results logs; do
    [ ! -e "$ROOT/$d/$PAIR" ] || [ "$ROOT/$d/$PAIR" -ot "$TMP" ] || fail "$ROOT/$d/$PAIR was written: WORK= not honoured"
done

log "make slurm again: every stage must be done"
make --no-print-directory slurm "${SLURM_VARS[@]}" >"$TMP/submit2.out" 2>"$TMP/submit2.err"
rc=$?
sed 's/^/  /' "$TMP/submit2.out" "$TMP/submit2.err"
[ "$rc" = 0 ] || fail "the second make slurm exited with $rc"
for s in "${STAGE_NAMES[@]}"; do
    awk -v s="$s" '$1 == s && $2 == "-" && $3 == "done" {f=1} END {exit !f}' "$TMP/submit2.out" \
        || fail "the second make slurm did not find the $s stage done"
done
[ -z "$(squeue -h -o %i)" ] || fail "the second make slurm submitted jobs: $(squeue -h -o '%i %j' | paste -sd, -)"

[ ${#FAILURES[@]} = 0 ] && RESULT=PASS
exit 0
