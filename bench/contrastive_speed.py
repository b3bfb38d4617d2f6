"""Contrastive scoring throughput: `contextual-mt contrastive`'s scorer against stock
`fairseq-generate --score-reference` on the same candidate pairs, in one run.

The pairs: every sentence of the demo's test split (run `make demo` first), with its gold
context (up to 3 previous sentences), twice: the reference, and the reference with its first two
words swapped (the same subword pieces, so both candidates cost exactly what the reference
does). fairseq-generate scores the test split (the references with their gold context) and a
copy whose target side has every sentence so swapped: the same number of pairs, of the same
lengths. Ours scores the groups [reference, swapped] of one contrastive set.

The model: `contextual_transformer_small` (512/1024, 6 layers, 8 heads; target context 3),
made with one training update on the demo data: speed does not depend on the weights. Timings
exclude model loading: fairseq-generate's own "Translated N sentences (T tokens) in Xs", and the
wall time of encoding the pairs plus `score_candidates` for ours. Same batch size for both.

    .venv/bin/python -m bench.contrastive_speed --workdir demo [--repeats 3] [--batch-size 64] [--json result.json]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import harness
from bench.fairseq_generate import USER_DIR, generate
from contextual_mt.demo.pipeline import demo_layout

BIN = Path(sys.executable).parent


def swapped(line: str) -> str:
    words = line.split()
    if len(words) > 1:
        words[0], words[1] = words[1], words[0]
    return " ".join(words)


def small_model(work: Path, out: Path) -> Path:
    cmd = [
        str(BIN / "fairseq-train"),
        demo_layout(work).bin,
        "--user-dir",
        USER_DIR,
        "--task",
        "document_translation",
        "-s",
        "en",
        "-t",
        "fr",
        "--arch",
        "contextual_transformer_small",
        "--share-all-embeddings",
        "--source-context-size",
        "0",
        "--target-context-size",
        "3",
        "--sample-context-size",
        "--optimizer",
        "adam",
        "--lr",
        "1e-4",
        "--max-tokens",
        "2048",
        "--max-update",
        "1",
        "--save-dir",
        str(out),
        "--cpu",
        "--no-progress-bar",
        "--no-epoch-checkpoints",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    for d in (Path(demo_layout(work).bin)).glob("dict.*.txt"):
        shutil.copy(d, out / d.name)
    return out / "checkpoint_last.pt"


def swapped_bin(work: Path, tmp: Path) -> Path:
    """The demo's binarized data with the test split's targets word-swapped."""
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=demo_layout(work).spm)
    raw = tmp / "raw"
    raw.mkdir()
    src = (Path(demo_layout(work).data) / "test.en").read_text().splitlines()
    tgt = [swapped(x) for x in (Path(demo_layout(work).data) / "test.fr").read_text().splitlines()]
    (raw / "test.en").write_text("".join(" ".join(sp.encode(x, out_type=str)) + "\n" for x in src))
    (raw / "test.fr").write_text("".join(" ".join(sp.encode(x, out_type=str)) + "\n" for x in tgt))
    dest = tmp / "bin"
    subprocess.run(
        [
            str(BIN / "fairseq-preprocess"),
            "-s",
            "en",
            "-t",
            "fr",
            "--srcdict",
            str(Path(demo_layout(work).bin) / "dict.en.txt"),
            "--tgtdict",
            str(Path(demo_layout(work).bin) / "dict.fr.txt"),
            "--testpref",
            str(raw / "test"),
            "--destdir",
            str(dest),
            "--workers",
            "2",
        ],
        check=True,
        capture_output=True,
    )
    shutil.copy(Path(demo_layout(work).bin) / "test.en-fr.docids", dest / "test.en-fr.docids")
    return dest


def score_reference(data: Path, ckpt: Path, batch: int):
    g = generate(
        str(data), str(ckpt), "--score-reference", "--batch-size", str(batch), target_context=3, source_context=0
    )
    return g.sentences, g.tokens, g.seconds


def groups(work: Path):
    from commandkit.documents import document_starts
    from contextual_mt.inference.interface import ContextPair

    data = Path(demo_layout(work).data)
    src, ref = (data / "test.en").read_text().splitlines(), (data / "test.fr").read_text().splitlines()
    starts = document_starts((data / "test.docids").read_text().splitlines())
    pairs = []
    for i in range(len(src)):
        lo = max(int(starts[i]), i - 3)
        ctx_s, ctx_t = tuple(src[lo:i]), tuple(ref[lo:i])
        pairs += [ContextPair(src[i], ref[i], ctx_s, ctx_t), ContextPair(src[i], swapped(ref[i]), ctx_s, ctx_t)]
    return pairs


def ours(backend, pairs, batch: int) -> dict:
    """Encoding the pairs and scoring them (timed whole by the harness)."""
    from contextual_mt.contrastive.evaluate import score_candidates

    backend.load_pairs(pairs, where=str)
    tokens = sum(
        r["tokens"] for records in score_candidates(backend, range(len(pairs)), batch, progress=False) for r in records
    )
    return {"candidates": len(pairs), "tokens": tokens}


def fairseq_both(work: Path, swapped_data: Path, ckpt: Path, batch: int) -> harness.Elapsed:
    """fairseq-generate on the references and on the swapped copy: their own times added."""
    n1, t1, s1 = score_reference(Path(demo_layout(work).bin), ckpt, batch)
    n2, t2, s2 = score_reference(swapped_data, ckpt, batch)
    return harness.Elapsed(s1 + s2, {"candidates": n1 + n2, "tokens": t1 + t2})


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workdir", default="demo")
    p.add_argument("--batch-size", type=int, default=64)
    harness.add_arguments(p, repeats=3)
    args = harness.parse(p, argv)
    import torch

    from contextual_mt.backends.fairseq.model import DocumentModel, FairseqModelOptions
    from contextual_mt.backends.fairseq.scoring import FairseqScoringBackend

    work = Path(args.workdir)
    print(harness.machine_line(harness.machine_info()), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ckpt = small_model(work, tmp / "ckpt")
        swapped_data = swapped_bin(work, tmp)
        backend = FairseqScoringBackend(
            DocumentModel.load(FairseqModelOptions(str(ckpt), spm=demo_layout(work).spm, cpu=True))
        )
        pairs = groups(work)
        timings = harness.time_interleaved(  # interleaved, so that both see the same machine load
            {
                "fairseq": lambda: fairseq_both(work, swapped_data, ckpt, args.batch_size),
                "ours": lambda: ours(backend, pairs, args.batch_size),
            },
            repeats=args.repeats,
            rotate=False,
        )
    result = {"threads": torch.get_num_threads(), "batch_size": args.batch_size}
    for name, t in timings.items():
        result[name] = {
            "timing": t.to_dict(items=t.result["candidates"]),
            "tokens": t.result["tokens"],
            "candidates_per_s": [round(t.result["candidates"] / x, 1) for x in t.times],
            "median": round(t.rate(t.result["candidates"]), 1),
        }
    row = harness.Row("contrastive scoring", "candidates/s", result["fairseq"]["median"], result["ours"]["median"])
    result["ratio"] = round(row.ratio, 3)
    print(harness.table([row], baseline="fairseq-generate --score-reference", ours="contextual-mt contrastive"))
    harness.finish(args, "contrastive_speed", result)


if __name__ == "__main__":
    main()
