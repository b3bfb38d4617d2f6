#!/usr/bin/env bash
# CUDA check on a GPU machine: demo corpus -> the study's data stage -> train the contextual
# demo model on the GPU (the train stage, demo preset, --fp16) -> bench/gpu_check.py (the same checkpoint on
# CUDA and on CPU: identical translations? same P-CXMI?). Writes $OUT_DIR/gpu_check.json.
#   bash bench/gpu_demo_check.sh OUT_DIR [EPOCHS]
# Environment: WORK (keep the corpus, data and checkpoint there; default: a temporary directory),
# TRAIN_EXTRA (more `pipeline train` options, e.g. '--override model._name=contextual_transformer_small
# --override optimization.lr=[1e-3]'),
# SKIP_CHECK=1 (train only).
set -euo pipefail
OUT_DIR=${1:?usage: gpu_demo_check.sh OUT_DIR [EPOCHS]}
EPOCHS=${2:-12}
PY=${PYTHON:-python3}
W=${WORK:-$(mktemp -d)}
mkdir -p "$W"
mkdir -p "$OUT_DIR"
$PY -m contextual_mt.cli demo-data --output "$W/corpus" --train-docs 3000 --test-docs 300
# the study's data and train stages with the demo preset (pipeline/presets.py), as `make demo` runs them
VOCAB=$($PY -c "from contextual_mt.pipeline.presets import get_preset; print(get_preset('demo').vocab_size)" 2>/dev/null | tail -1)
$PY -m contextual_mt.cli pipeline data --lang fr --text "$W/corpus" --output "$W/data/fr" --vocab-size "$VOCAB" --quiet
start=$(date +%s)
$PY -m contextual_mt.cli pipeline train --lang fr --root "$W" --preset demo --model context --gpus 1 --fp16 \
    --max-epoch "$EPOCHS" ${TRAIN_EXTRA:-} > "$OUT_DIR/train.out" 2>&1
cp "$W/checkpoints/fr/context/train.log" "$OUT_DIR/train.log"
echo "training: $(( $(date +%s) - start )) s on the GPU; last valid line:"; grep "valid on" "$OUT_DIR/train.log" | tail -1
[ "${SKIP_CHECK:-0}" = 1 ] && exit 0
$PY bench/gpu_check.py --path "$W/checkpoints/fr/context/checkpoint_best.pt" --spm "$W/data/fr/spm.model" \
    --source "$W/corpus/test.en" --reference "$W/corpus/test.fr" --docids "$W/corpus/test.docids" \
    --out "$OUT_DIR/gpu_check.json"
