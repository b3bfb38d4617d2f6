"""``contextual-mt align --pivot none``: a document whose sentences were merged and dropped linked
to the source lines through the gloss of a table learned from tiny training data."""

from __future__ import annotations

import json

from contextual_mt.cli import main
from tests.docalign.test_lexical import corpus, write


def test_align_without_a_reference_links_the_output_to_the_source_lines(tmp_path):
    """--pivot none: two documents whose output merged two sentences and dropped one; no reference
    is read, the source lines glossed by the table learned from the training data are the pivot."""
    en, fr = corpus()
    train_en, train_fr = write(tmp_path / "train.en", en), write(tmp_path / "train.fr", fr)
    source = ["Paul sees the cat .", "Anna likes the bread .", "my friend wants the car .", "Paul likes the dog ."]
    source += ["Anna sees the house .", "my friend likes the cat ."]
    ids = ["a"] * 4 + ["b"] * 2
    documents = [
        {"doc": "a", "text": "Paul voit le chat. Anna aime le pain et mon ami veut la voiture. Paul aime le chien."},
        {"doc": "b", "text": "Anna voit la maison."},
    ]
    hyp = tmp_path / "docs.jsonl"
    hyp.write_text("".join(json.dumps(d) + "\n" for d in documents), encoding="utf-8")
    out, alignment = tmp_path / "aligned.fr", tmp_path / "alignment.jsonl"
    argv = ["align", "--hyp-documents", str(hyp), "--docids", write(tmp_path / "ids", ids), "--pivot", "none"]
    argv += ["--source", write(tmp_path / "src.en", source), "--lexical-train", train_en, train_fr]
    argv += ["--output", str(out), "--alignment", str(alignment), "--segmenter-lang", "fr"]
    assert main(argv) == 0
    links = [json.loads(line)["link"] for line in alignment.read_text(encoding="utf-8").splitlines()]
    assert links == ["1-1", "2-1", "2-1", "1-1", "1-1", "1-0"]
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "Paul voit le chat." and lines[3] == "Paul aime le chien." and lines[5] == ""
    assert lines[1].startswith("Anna aime le pain") and lines[2].endswith("veut la voiture.")
    assert (tmp_path / "train.en-train.fr.model1.json").exists()  # cached beside the training data
