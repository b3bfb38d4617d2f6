#!/usr/bin/env bash
# Issue 28's GPU measurements, one step per device call (each under 10 minutes on an H100/H200):
#   bash bench/gpu_issue28.sh OUT_DIR train-speed   # item 2: BATCH=preset vs BATCH=auto, PRESET=small
#   bash bench/gpu_issue28.sh OUT_DIR decode-small  # item 1: train a transformer-small context model with
#                                                   # the batch plan, then parallel vs waves vs fairseq-generate
#   bash bench/gpu_issue28.sh OUT_DIR dtype         # items 3-4: half precision against float32
# On the device: `bash .gpu/setup.sh && bash bench/gpu_issue28.sh $OUT STEP` (../shared/gpu/README.md).
# Each step makes its own corpus: the demo's generator at DOCS training documents (default 20000,
# as the issue measured), the study's data stage (1,000 pieces: the demo text has no more).
set -euo pipefail
OUT_DIR=${1:?usage: gpu_issue28.sh OUT_DIR train-speed|decode-small|dtype}
STEP=${2:?usage: gpu_issue28.sh OUT_DIR train-speed|decode-small|dtype}
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
    timeout 480 $PY bench/train_gpu_batch.py --spm "$W/data/fr" --preset small --batches preset auto \
        --updates "${UPDATES:-300}" --out "$OUT_DIR/train_gpu_batch.json" 2>&1 | tail -8
    ;;
decode-small)
    corpus
    # the batch plan's schedule (warm-up 500 at 8x); no patience: a fixed number of updates
    timeout 330 $PY -m contextual_mt.cli pipeline train --lang fr --root "$W" --preset small --model context \
        --max-update "${MAX_UPDATE:-1500}" --override checkpoint.patience=-1 --quiet > "$OUT_DIR/train.out" 2>&1 || true
    cp "$W/checkpoints/fr/context/train.log" "$OUT_DIR/" 2>/dev/null || true
    cp "$W/checkpoints/fr/context/train.done" "$OUT_DIR/" 2>/dev/null || { tail -20 "$OUT_DIR/train.out"; exit 1; }
    grep "valid on" "$OUT_DIR/train.log" | tail -2
    CKPT="$W/checkpoints/fr/context/checkpoint_best.pt"
    timeout 150 $PY bench/parallel_decoding.py --ckpt "$CKPT" --spm "$W/data/fr/spm.model" --data "$W/data/fr" \
        --talks 18 --windows 2 8 32 --out "$OUT_DIR/parallel_decoding.json" 2>&1 | tail -8
    timeout 150 $PY bench/translate_ted_shape.py --ckpt "$CKPT" --spm "$W/data/fr/spm.model" --data "$W/data/fr" \
        --bin "$W/data/fr/bin" --talks 18 --repeats 1 --out "$OUT_DIR/translate_ted_shape.json" 2>&1 | tail -8
    ;;
dtype)
    # the helpers' scripts: fairseq checkpoints (the demo model, trained here in a minute) and an
    # opus-mt-size Marian with random weights
    bash bench/gpu_demo_check.sh "$OUT_DIR/demo" 8 > "$OUT_DIR/demo_train.out" 2>&1 || true
    echo "see bench/RESULTS.md for the dtype commands"
    ;;
*) echo "unknown step $STEP" >&2; exit 2;;
esac
