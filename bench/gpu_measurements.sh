#!/usr/bin/env bash
# Every GPU figure of the project in ONE device call (a GPU comes with ~15 minutes in all, start-up
# included, and is released 30 s after each call; ../shared/gpu/README.md). On the device:
#   bash .gpu/setup.sh && bash bench/gpu_measurements.sh $OUT
# Dry run here (CPU, tiny sizes; proves the flags, paths and records, not the figures):
#   DEVICE=cpu PRESET=tiny DOCS=600 MAX_UPDATE=12 SPEED_UPDATES=8 LOG_INTERVAL=2 GATE=0 LINES=60 \
#     HF_SENTENCES=10 HF_TRANSLATE=2 HF_REPEATS=1 bash bench/gpu_measurements.sh /tmp/gpu-dry
# Steps, in this order, each under its own time box and within TOTAL seconds in all; each writes
# its record to OUT_DIR as it ends and summary.md is rewritten after every step, so a step cut
# short leaves the others' results:
#   train         a transformer-small context model trained here: demo corpus at DOCS documents,
#                 pre-norm layers, lr 1e-3, warm-up 300, 16k tokens per update, fp16, MAX_UPDATE
#                 updates (no patience); the gate: last validation loss <= GATE bits
#   decode        on that checkpoint, 18 talks, DECODE_BATCH sentences per batch (512): waves against
#                 parallel decoding (windows 2 8 32)
#                 against fairseq-generate at target context 0, float32 on both sides, the same
#                 beam, batch and output-length bound on both sides; lines differing counted
#   train-speed   target words/s at the preset's batch against 32k tokens per update (what auto
#                 picks for PRESET=small on an 80 GB GPU when the corpus allows) and the 16k run
#                 above; plus what auto picks for this corpus
#   fairseq-dtype translate / cxmi of the checkpoint in float16 and bfloat16 against float32
#   hf-dtype      an opus-mt-size Marian (random weights) through --hf-model: bfloat16 and float16
#                 against float32, P-CXMI and translation
# DATA=folder: the data stage's output for the corpus (made here when absent: ~25 s on 2 cores).
set -uo pipefail
OUT_DIR=${1:?usage: gpu_measurements.sh OUT_DIR}
PY=${PYTHON:-python3}
DOCS=${DOCS:-20000}
PRESET=${PRESET:-small}
DEVICE=${DEVICE:-cuda}
TOTAL=${TOTAL:-480}
MAX_UPDATE=${MAX_UPDATE:-1100}  # 1,200 took 148.5 s of training on an H200 (bench/RESULTS.md)
SPEED_UPDATES=${SPEED_UPDATES:-150}
GATE=${GATE:-3.0}
HF_SENTENCES=${HF_SENTENCES:-2000}
HF_TRANSLATE=${HF_TRANSLATE:-100}
HF_REPEATS=${HF_REPEATS:-1}  # each variant is its own process (~20 s on an H200)
DECODE_BATCH=${DECODE_BATCH:-512}  # sentences per batch: the GPU default of a fairseq model
LINES=${LINES:-0}  # the decoding benches: the first N test lines (0: all 1,644; a dry run takes fewer)
LOG_INTERVAL=${LOG_INTERVAL:-25}
W=${WORK:-$(mktemp -d)}
mkdir -p "$OUT_DIR" "$W"
OUT_DIR=$(cd "$OUT_DIR" && pwd) W=$(cd "$W" && pwd)
cd "$(dirname "$0")/.."  # the repository root: the benchmarks run as python -m bench.NAME
START=$(date +%s)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$OUT_DIR/gpu.txt" 2>/dev/null || echo "$DEVICE" > "$OUT_DIR/gpu.txt"
: > "$OUT_DIR/steps.txt"
LEN=(--max-len-a 0 --max-len-b 200)  # the defaults; bounded on both sides when the gate fails
DEV=$([ "$DEVICE" = cpu ] && echo --cpu || true)

box() {  # seconds for a step: its own box, or what is left of TOTAL
    local left=$((START + TOTAL - $(date +%s)))
    echo $(($1 < left ? $1 : left))
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
# stable with a short warm-up; the post-norm set-up did not train within a device call (RESULTS.md)
MAIN=$(root main)
step train-run 180 $PY -m contextual_mt.cli pipeline train --lang fr --root "$MAIN" --preset "$PRESET" --model context \
    --max-update "$MAX_UPDATE" "${ARCH[@]}" --override dataset.max_tokens=16384 --override "optimization.lr=[1e-3]" \
    --override lr_scheduler.warmup_updates=300 --quiet
CKPT=$MAIN/checkpoints/fr/context/checkpoint_best.pt
LOG=$MAIN/checkpoints/fr/context/train.log
cp "$LOG" "$OUT_DIR/train-main.fairseq.log" 2>/dev/null
if [ -f "$LOG" ]; then
    $PY -m bench.gpu_measurements train "$LOG" "$GATE" --json "$OUT_DIR/train.json"
    [ $? = 3 ] && LEN=(--max-len-a 1.5 --max-len-b 10) && echo "the decoding benches bound the output length: ${LEN[*]}"
fi
$PY -m bench.gpu_measurements summary "$OUT_DIR"

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
