#!/usr/bin/env bash
# Issue 28's GPU measurements, one step per device call (each under 10 minutes on an H100/H200):
#   bash bench/gpu_issue28.sh OUT_DIR train-speed   # item 2: BATCH=preset vs 4x and 8x, PRESET=small
#   bash bench/gpu_issue28.sh OUT_DIR decode-small  # item 1: train a transformer-small context model,
#                                                   # then parallel vs waves vs fairseq-generate
#                                                   # and float16/bfloat16 against float32 on it (item 4)
#   bash bench/gpu_issue28.sh OUT_DIR hf-dtype      # item 3: --hf-model in bfloat16/float16 against float32
# On the device: `bash .gpu/setup.sh && bash bench/gpu_issue28.sh $OUT STEP` (../shared/gpu/README.md).
# Each step makes its own corpus: the demo's generator at DOCS training documents (default 20000,
# as the issue measured), the study's data stage (1,000 pieces: the demo text has no more).
set -euo pipefail
OUT_DIR=${1:?usage: gpu_issue28.sh OUT_DIR train-speed|decode-small|hf-dtype}
STEP=${2:?usage: gpu_issue28.sh OUT_DIR train-speed|decode-small|hf-dtype}
PY=${PYTHON:-python3}
DOCS=${DOCS:-20000}
W=${WORK:-$(mktemp -d)}
mkdir -p "$OUT_DIR" "$W"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$OUT_DIR/gpu.txt" 2>/dev/null || true

corpus() {  # the demo corpus at DOCS documents, then the data stage -> $W/data/fr
    [ -f "$W/data/fr/summary.json" ] && return 0
    $PY -m contextual_mt.cli demo-data --output "$W/corpus" --train-docs "$DOCS" --test-docs 300
    $PY -m contextual_mt.cli pipeline data --lang fr --text "$W/corpus" --output "$W/data/fr" --vocab-size 1000 --quiet
}

case $STEP in
train-speed)
    corpus
    # explicit sizes: on this corpus (~430 updates per epoch at 4,096) auto's epoch guard keeps the preset's
    timeout 480 $PY bench/train_gpu_batch.py --spm "$W/data/fr" --preset small --batches preset 16384 32768 \
        --updates "${UPDATES:-300}" --out "$OUT_DIR/train_gpu_batch.json" 2>&1 | tail -8
    ;;
decode-small)
    corpus
    # no patience: a fixed number of updates. Then, on that
    # transformer-small checkpoint: parallel decoding vs the waves, translate vs fairseq-generate
    # (float32 on both sides), and half precision against float32 (items 1 and 4)
    # (a short schedule that trains this easy corpus in minutes: 16k tokens per update, lr 1e-3, warm-up 300)
    timeout 300 $PY -m contextual_mt.cli pipeline train --lang fr --root "$W" --preset small --model context \
        --max-update "${MAX_UPDATE:-1200}" --override checkpoint.patience=-1 --override dataset.max_tokens=16384 \
        --override "optimization.lr=[1e-3]" --override lr_scheduler.warmup_updates=300 --quiet \
        > "$OUT_DIR/train.out" 2>&1 || true
    cp "$W/checkpoints/fr/context/train.log" "$OUT_DIR/" 2>/dev/null || true
    cp "$W/checkpoints/fr/context/train.done" "$OUT_DIR/" 2>/dev/null || { tail -20 "$OUT_DIR/train.out"; exit 1; }
    grep "valid on" "$OUT_DIR/train.log" | tail -2 | cut -c1-160
    CKPT="$W/checkpoints/fr/context/checkpoint_best.pt"
    timeout 100 $PY bench/parallel_decoding.py --ckpt "$CKPT" --spm "$W/data/fr/spm.model" --data "$W/data/fr" \
        --talks 18 --windows 2 8 32 --out "$OUT_DIR/parallel_decoding.json" 2>&1 | tail -6 || true
    timeout 100 $PY bench/translate_ted_shape.py --ckpt "$CKPT" --spm "$W/data/fr/spm.model" --data "$W/data/fr" \
        --bin "$W/data/fr/bin" --talks 18 --repeats 1 --out "$OUT_DIR/translate_ted_shape.json" 2>&1 | tail -12 || true
    timeout 90 $PY bench/fairseq_dtype.py --ckpt "$CKPT" --spm "$W/data/fr/spm.model" --data "$W/data/fr" \
        --device cuda --dtypes float32 float16 bfloat16 --lines 600 --repeats 2 \
        --out "$OUT_DIR/fairseq_dtype.json" 2>&1 | tail -12 || true
    ;;
hf-dtype)
    # item 3: an opus-mt-size Marian with random weights, built here (no download)
    timeout 540 $PY bench/hf_dtype_speed.py --device cuda --sentences 3000 --repeats 2 --translate 200 \
        --json "$OUT_DIR/hf_dtype_speed.json" 2>&1 | tail -16
    ;;
*) echo "unknown step $STEP" >&2; exit 2;;
esac
