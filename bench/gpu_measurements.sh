#!/usr/bin/env bash
# Every GPU figure of the project in ONE device call (a GPU comes with ~15 minutes in all, start-up
# included, and is released 30 s after each call; ../shared/gpu/README.md). On the device, with the
# corpus made here beforehand and carried (see bench/RESULTS.md, "GPU figures in one run"):
#   bash .gpu/setup.sh && DATA=bench/out/gpu55/data/fr bash bench/gpu_measurements.sh $OUT/gpu
# Dry run here (CPU, tiny sizes; proves the steps, flags, paths and records, not the figures):
#   DRY_RUN=1 nice bash bench/gpu_measurements.sh /tmp/gpu-dry
# Steps, in this order, each under its own time box and within TOTAL seconds in all; each writes
# its record to OUT_DIR as it ends (the long ones as they go) and summary.md is rewritten after
# every step, so a step cut short leaves the others' results.
# The second edition (issue 55), first:
#   zoo-cuda      every family of the model zoo through cxmi, attribute and translate on DEVICE in
#                 float32 and bfloat16 against the CPU in float32, within the zoo's tolerances
#   llm-build     a Llama-3.2-1B-shaped model (untied output layer: 1.50B parameters), random
#                 weights, built from its config (LLM_SIZE), saved in bfloat16
#   long-context  P-CXMI and attribute (CTI + CCI) on documents whose last line reads CONTEXTS
#                 tokens of context: time, peak GPU memory, passes, batches, P-CXMI's two-forward floor
#   llm-dtype     bfloat16 against float32 on that model, P-CXMI at DTYPE_CONTEXTS tokens of context
#   llm-documents translate --unit document of LLM_DOCS demo documents: tokens/s; the first ones
#                 on DEVICE and on the CPU (float32, greedy): the same?
#   train-run     a transformer-small context model trained here (demo corpus at DOCS documents,
#                 pre-norm, lr 1e-3, warm-up 300, 16k tokens per update, fp16, MAX_UPDATE updates),
#                 pipeline train's phases timed around fairseq (bench.train_phases); the gate: last
#                 validation loss <= GATE bits
#   fairseq-dtype-512  translate / cxmi of that checkpoint in float16 against float32 at 512
#                 sentences per batch
#   batch-cap     the wide GPU batching's 16,384-token cap against 32k, 64k and none at long lines
# The first edition's (issue 42; measured, bench/RESULTS.md), only with FIRST_EDITION=1, after:
#   decode        on that checkpoint, 18 talks, DECODE_BATCH sentences per batch (512): waves against
#                 parallel decoding (windows 2 8 32) against fairseq-generate at target context 0,
#                 float32 on both sides, the same beam, batch and output-length bound; lines differing
#   train-speed   target words/s at the preset's batch against 32k tokens per update and the 16k run
#                 above; plus what auto picks for this corpus
#   fairseq-dtype translate / cxmi of the checkpoint in float16 and bfloat16 against float32
#   hf-dtype      an opus-mt-size Marian (random weights) through --hf-model: bfloat16 and float16
#                 against float32, P-CXMI and translation
# DATA=folder: the data stage's output for the corpus (made here when absent: ~25 s on 2 cores).
set -uo pipefail
OUT_DIR=${1:?usage: gpu_measurements.sh OUT_DIR}
if [ "${DRY_RUN:-0}" = 1 ]; then  # CPU and tiny sizes, unless given
    : "${DEVICE:=cpu}" "${PRESET:=tiny}" "${DOCS:=600}" "${MAX_UPDATE:=12}" "${SPEED_UPDATES:=8}"
    : "${LOG_INTERVAL:=2}" "${GATE:=0}" "${LINES:=60}" "${HF_SENTENCES:=10}" "${HF_TRANSLATE:=2}"
    : "${ZOO_FAMILIES:=marian,gpt2,llama}" "${CONTEXTS:=128 256 512}" "${DTYPE_CONTEXTS:=256}"
    : "${CONTEXT_SENTENCES:=4}" "${LLM_DOCS:=3}" "${CHECK_MAX_LEN_B:=8}" "${CAP_LINES:=12}" "${CAPS:=2048 0}"
    : "${HALF_LINES:=8}" "${HALF_REPEATS:=1}"
    : "${LLM_SIZE:=--hidden 64 --layers 2 --heads 4 --kv-heads 2 --ffn 128 --vocab 2000 --positions 8192}"
    : "${TOTAL:=1800}" "${BOX_SCALE:=4}"  # 2 shared cores: each box 4 times the GPU's
    [ -x .venv/bin/python ] && : "${PYTHON:=$PWD/.venv/bin/python}"  # from the repository root
fi
PY=${PYTHON:-python3}
DOCS=${DOCS:-20000}
PRESET=${PRESET:-small}
DEVICE=${DEVICE:-cuda}
TOTAL=${TOTAL:-450}  # the call's 8 minutes, less setup.sh's ~20 s and the copy back
FIRST_EDITION=${FIRST_EDITION:-0}
# 1,200 took 148.5 s of training on an H200 (bench/RESULTS.md); at 374 the loss was 1.677 bits, under the gate
MAX_UPDATE=${MAX_UPDATE:-$([ "$FIRST_EDITION" = 1 ] && echo 1100 || echo 400)}
SPEED_UPDATES=${SPEED_UPDATES:-150}
GATE=${GATE:-3.0}
HF_SENTENCES=${HF_SENTENCES:-2000}
HF_TRANSLATE=${HF_TRANSLATE:-100}
HF_REPEATS=${HF_REPEATS:-1}  # each variant is its own process (~20 s on an H200)
DECODE_BATCH=${DECODE_BATCH:-512}  # sentences per batch: the GPU default of a fairseq model
LINES=${LINES:-0}  # the decoding benches: the first N test lines (0: all 1,644; a dry run takes fewer)
LOG_INTERVAL=${LOG_INTERVAL:-25}
ZOO_FAMILIES=${ZOO_FAMILIES:-}  # empty: every family of the zoo
LLM_SIZE=${LLM_SIZE:-}  # empty: bench.long_context's defaults (Llama-3.2-1B's shape)
CONTEXTS=${CONTEXTS:-8192 16384 32768}
DTYPE_CONTEXTS=${DTYPE_CONTEXTS:-16384}
CONTEXT_SENTENCES=${CONTEXT_SENTENCES:-8}
LLM_DOCS=${LLM_DOCS:-50}
CHECK_MAX_LEN_B=${CHECK_MAX_LEN_B:-24}
CAP_LINES=${CAP_LINES:-400}
CAPS=${CAPS:-16384 32768 65536 0}
HALF_LINES=${HALF_LINES:-600}  # fairseq-dtype-512: the first N test lines
HALF_REPEATS=${HALF_REPEATS:-2}
W=${WORK:-$(mktemp -d)}
mkdir -p "$OUT_DIR" "$W"
OUT_DIR=$(cd "$OUT_DIR" && pwd) W=$(cd "$W" && pwd)
cd "$(dirname "$0")/.."  # the repository root: the benchmarks run as python -m bench.NAME
START=$(date +%s)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$OUT_DIR/gpu.txt" 2>/dev/null || echo "$DEVICE" > "$OUT_DIR/gpu.txt"
: > "$OUT_DIR/steps.txt"
LEN=(--max-len-a 0 --max-len-b 200)  # the defaults; bounded on both sides when the gate fails
DEV=$([ "$DEVICE" = cpu ] && echo --cpu || true)

box() {  # seconds for a step: its own box (times BOX_SCALE), or what is left of TOTAL
    local want=$(($1 * ${BOX_SCALE:-1})) left=$((START + TOTAL - $(date +%s)))
    echo $((want < left ? want : left))
}
step() {  # step NAME BOX COMMAND...: runs it under its box, logs it to OUT_DIR/NAME.log
    local name=$1 limit t0 rc
    limit=$(box "$2"); shift 2
    if [ "$limit" -lt 15 ]; then
        echo "| $name | skipped: the run's $TOTAL s are spent | 0 |" >> "$OUT_DIR/steps.txt"; return 1
    fi
    t0=$(date +%s)
    echo "== $name (at most $limit s)"
    timeout "$limit" "$@" > "$OUT_DIR/$name.log" 2>&1
    rc=$?
    local status=$([ $rc = 0 ] && echo ok || ([ $rc = 124 ] && echo "cut at $limit s" || echo "exit $rc"))
    echo "| $name | $status | $(($(date +%s) - t0)) |" >> "$OUT_DIR/steps.txt"
    tail -n 14 "$OUT_DIR/$name.log"
    $PY -m bench.gpu_measurements summary "$OUT_DIR"
    return $rc
}

# --- the second edition (issue 55): the zoo and a 1B model first (no corpus needed) ----------------
step zoo-cuda 90 $PY -m bench.zoo_cuda --device "$DEVICE" --families "$ZOO_FAMILIES" --work "$W/zoo" \
    --json "$OUT_DIR/zoo_cuda.json"
LLM=$W/llm
# shellcheck disable=SC2086  # LLM_SIZE, CONTEXTS: words
step llm-build 40 $PY -m bench.long_context --part build --model "$LLM" --device "$DEVICE" $LLM_SIZE \
    --json "$OUT_DIR/llm_build.json"
if [ -f "$LLM/config.json" ]; then
    step long-context 120 $PY -m bench.long_context --part context --model "$LLM" --device "$DEVICE" \
        --contexts $CONTEXTS --context-sentences "$CONTEXT_SENTENCES" --work "$W/llm-context" --json "$OUT_DIR/long_context.json"
    step llm-dtype 50 $PY -m bench.long_context --part dtype --model "$LLM" --device "$DEVICE" \
        --contexts $DTYPE_CONTEXTS --context-sentences "$CONTEXT_SENTENCES" --work "$W/llm-dtype" --json "$OUT_DIR/llm_dtype.json"
    step llm-documents 75 $PY -m bench.long_context --part documents --model "$LLM" --device "$DEVICE" \
        --documents "$LLM_DOCS" --check-max-len-b "$CHECK_MAX_LEN_B" --work "$W/llm-documents" --json "$OUT_DIR/llm_documents.json"
else
    echo "| long-context, llm-dtype, llm-documents | skipped: no model | 0 |" >> "$OUT_DIR/steps.txt"
fi

DATA=${DATA:-$W/data/fr}
if [ ! -f "$DATA/summary.json" ]; then
    step corpus 120 bash -c "$PY -m contextual_mt.cli demo-data --output '$W/corpus' --train-docs $DOCS --test-docs 300 \
        && $PY -m contextual_mt.cli pipeline data --lang fr --text '$W/corpus' --output '$W/data/fr' --vocab-size 1000 --quiet" \
        || exit 1
    DATA=$W/data/fr
fi
DATA=$(cd "$DATA" && pwd)
root() {  # a pipeline root whose data/fr is the corpus
    mkdir -p "$W/$1/data" && ln -sfn "$DATA" "$W/$1/data/fr" && echo "$W/$1"
}
ARCH=(--override +model.encoder_normalize_before=true --override +model.decoder_normalize_before=true
      --override model.dropout=0.1 --override common.log_interval=$LOG_INTERVAL --override checkpoint.patience=-1)

# --- train ----------------------------------------------------------------------------------------
# pre-norm: the same operations per token as the papers' post-norm (so the same decoding cost),
# stable with a short warm-up; the post-norm set-up did not train within a device call (RESULTS.md).
# Run through bench.train_phases: each phase of pipeline train around fairseq timed (issue 55, 5)
MAIN=$(root main)
step train-run 130 $PY -m bench.train_phases --json "$OUT_DIR/train_phases.json" -- pipeline train --lang fr \
    --root "$MAIN" --preset "$PRESET" --model context --max-update "$MAX_UPDATE" "${ARCH[@]}" \
    --override dataset.max_tokens=16384 --override "optimization.lr=[1e-3]" --override lr_scheduler.warmup_updates=300 --quiet
CKPT=$MAIN/checkpoints/fr/context/checkpoint_best.pt
LOG=$MAIN/checkpoints/fr/context/train.log
cp "$LOG" "$OUT_DIR/train-main.fairseq.log" 2>/dev/null
if [ -f "$LOG" ]; then
    $PY -m bench.gpu_measurements train "$LOG" "$GATE" --json "$OUT_DIR/train.json"
    [ $? = 3 ] && LEN=(--max-len-a 1.5 --max-len-b 10) && echo "the decoding benches bound the output length: ${LEN[*]}"
fi
$PY -m bench.gpu_measurements summary "$OUT_DIR"

# --- half precision at 512 sentences per batch, and the batching's token cap (issue 55, 3 and 5) ---
HALF=$([ "$DEVICE" = cpu ] && echo "float32 bfloat16" || echo "float32 float16")
if [ -f "$CKPT" ]; then
    step fairseq-dtype-512 45 $PY -m bench.fairseq_dtype_speed --ckpt "$CKPT" --spm "$DATA/spm.model" --data "$DATA" \
        --device "$DEVICE" --dtypes $HALF --batch-size 512 --lines "$HALF_LINES" --repeats "$HALF_REPEATS" "${LEN[@]}" \
        --json "$OUT_DIR/fairseq_dtype_512.json"
    # shellcheck disable=SC2086  # CAPS: words
    step batch-cap 45 $PY -m bench.batch_cap --ckpt "$CKPT" --spm "$DATA/spm.model" --data "$DATA" --device "$DEVICE" \
        --lines "$CAP_LINES" --caps $CAPS "${LEN[@]}" --json "$OUT_DIR/batch_cap.json"
else
    echo "| fairseq-dtype-512, batch-cap | skipped: no checkpoint | 0 |" >> "$OUT_DIR/steps.txt"
fi

if [ "$FIRST_EDITION" != 1 ]; then
    $PY -m bench.gpu_measurements summary "$OUT_DIR"
    echo "== done in $(($(date +%s) - START)) s"; cat "$OUT_DIR/summary.md"
    exit 0
fi
# --- the first edition (issue 42), measured: only with FIRST_EDITION=1 ------------------------------
# --- decode ---------------------------------------------------------------------------------------
if [ -f "$CKPT" ]; then
    step decode 70 $PY -m bench.parallel_decoding_speed --ckpt "$CKPT" --spm "$DATA/spm.model" --data "$DATA" \
        --bin "$DATA/bin" --talks 18 --windows 2 8 32 --batch-size "$DECODE_BATCH" --lines "$LINES" "${LEN[@]}" $DEV --json "$OUT_DIR/parallel_decoding.json"
else
    echo "| decode | skipped: no checkpoint | 0 |" >> "$OUT_DIR/steps.txt"
fi

# --- train-speed ----------------------------------------------------------------------------------
PRE=$(root preset)
step train-preset 40 $PY -m contextual_mt.cli pipeline train --lang fr --root "$PRE" --preset "$PRESET" --model context \
    --max-update "$SPEED_UPDATES" --batch preset "${ARCH[@]}" --quiet
B32=$(root b32768)
step train-32768 40 $PY -m contextual_mt.cli pipeline train --lang fr --root "$B32" --preset "$PRESET" --model context \
    --max-update "$SPEED_UPDATES" --batch 32768 "${ARCH[@]}" --quiet
cp "$PRE/checkpoints/fr/context/train.log" "$OUT_DIR/train-preset.fairseq.log" 2>/dev/null
cp "$B32/checkpoints/fr/context/train.log" "$OUT_DIR/train-32768.fairseq.log" 2>/dev/null
$PY -m bench.gpu_measurements train-speed "$OUT_DIR/train_speed.json" \
    "preset=$PRE/checkpoints/fr/context/train.log" "16384 (the trained model's run)=$LOG" \
    "32768=$B32/checkpoints/fr/context/train.log"
step auto-plan 15 $PY -m bench.gpu_measurements auto-plan "$MAIN" "$PRESET" --json "$OUT_DIR/auto_plan.json"

# --- fairseq-dtype --------------------------------------------------------------------------------
DTYPES=$([ "$DEVICE" = cpu ] && echo "float32 bfloat16" || echo "float32 float16 bfloat16")
if [ -f "$CKPT" ]; then
    step fairseq-dtype 55 $PY -m bench.fairseq_dtype_speed --ckpt "$CKPT" --spm "$DATA/spm.model" --data "$DATA" \
        --device "$DEVICE" --dtypes $DTYPES --lines "$([ "$LINES" = 0 ] && echo 600 || echo "$LINES")" --repeats 2 "${LEN[@]}" --json "$OUT_DIR/fairseq_dtype.json"
fi
# --- hf-dtype -------------------------------------------------------------------------------------
VARIANTS=$([ "$DEVICE" = cpu ] && echo float32,bfloat16 || echo float32,bfloat16,float16)
step hf-dtype 80 $PY -m bench.hf_dtype_speed --device "$DEVICE" --sentences "$HF_SENTENCES" --repeats "$HF_REPEATS" \
    --translate "$HF_TRANSLATE" --variants "$VARIANTS" --json "$OUT_DIR/hf_dtype.json"

$PY -m bench.gpu_measurements summary "$OUT_DIR"
echo "== done in $(($(date +%s) - START)) s"; cat "$OUT_DIR/summary.md"
