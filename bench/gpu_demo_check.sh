#!/usr/bin/env bash
# CUDA check on a GPU machine: demo corpus -> sentencepiece -> binarize -> train the contextual
# demo model on the GPU (fairseq-train, --fp16) -> bench/gpu_check.py (the same checkpoint on
# CUDA and on CPU: identical translations? same P-CXMI?). Writes $OUT_DIR/gpu_check.json.
#   bash bench/gpu_demo_check.sh OUT_DIR [EPOCHS]
# Environment: WORK (keep the corpus, data and checkpoint there; default: a temporary directory),
# TRAIN_EXTRA (more fairseq-train options, e.g. '--arch contextual_transformer_small --lr 1e-3'),
# SKIP_CHECK=1 (train only).
set -euo pipefail
OUT_DIR=${1:?usage: gpu_demo_check.sh OUT_DIR [EPOCHS]}
EPOCHS=${2:-12}
PY=${PYTHON:-python3}
W=${WORK:-$(mktemp -d)}
mkdir -p "$W"
mkdir -p "$OUT_DIR"
$PY -m contextual_mt.cli demo-data --output "$W/data" --train-docs 3000 --test-docs 300
$PY - "$W" <<'PYEOF'
import sys
from pathlib import Path
from contextual_mt.demo.pipeline import encode_splits, train_sentencepiece
w = Path(sys.argv[1]); (w / "spm").mkdir()
encode_splits(w / "data", w / "spm", train_sentencepiece(w / "data", w / "spm"))
PYEOF
$PY -m fairseq_cli.preprocess -s en -t fr --joined-dictionary --trainpref "$W/spm/train.spm" \
    --validpref "$W/spm/valid.spm" --testpref "$W/spm/test.spm" --destdir "$W/bin" --workers 8 >/dev/null
$PY -m contextual_mt.cli add-symbols "$W/bin/dict.en.txt" "$W/bin/dict.fr.txt"
for s in train valid test; do cp "$W/data/$s.docids" "$W/bin/$s.en-fr.docids"; done
# (fairseq logs to stdout on import: the options are the last line)
COMMON=$($PY -c "from contextual_mt.demo.pipeline import COMMON, MODELS; import shlex; print(shlex.join(COMMON + MODELS['context']))" 2>/dev/null | tail -1)
start=$(date +%s)
eval $PY -m fairseq_cli.train "$W/bin" --user-dir contextual_mt --task document_translation $COMMON \
    --max-epoch "$EPOCHS" --save-dir "$W/ckpt" --fp16 --no-progress-bar ${TRAIN_EXTRA:-} > "$OUT_DIR/train.log" 2>&1
echo "training: $(( $(date +%s) - start )) s on the GPU; last valid line:"; grep "valid on" "$OUT_DIR/train.log" | tail -1
cp "$W"/bin/dict.*.txt "$W/ckpt/"
[ "${SKIP_CHECK:-0}" = 1 ] && exit 0
$PY bench/gpu_check.py --path "$W/ckpt/checkpoint_best.pt" --spm "$W/spm/spm.model" --source "$W/data/test.en" \
    --reference "$W/data/test.fr" --docids "$W/data/test.docids" --out "$OUT_DIR/gpu_check.json"
