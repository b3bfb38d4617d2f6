"""Bad-input cases across commands: no output over an input, NUL bytes, contrastive sets, cxmi
options, Make variables, shard merging, the sentencepiece model and the dictionary."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import List, Sequence

from tests.bad_input.contrastive import contrastive_command, contrastive_entry
from tests.bad_input.core import IS_INPUT, MUST, NOT_FOUND, UTF8, Ctx, Fragment, add, at_line, do, edited, opt
from tests.bad_input.cxmi import cxmi_command
from tests.bad_input.merge import copy_shard, merge_command, shards
from tests.bad_input.muda_eval import eval_command
from tests.bad_input.muda_tag import tag_command
from tests.bad_input.report import report_command
from tests.bad_input.score import score_command
from tests.bad_input.translate import translate_command


# ---- file reading and writing rules (no output over an input, NUL bytes)
def output_over_input(out_flag: str, in_flag: str, name: str, link: bool = False):
    """``out_flag`` given the file of ``in_flag`` (copied into in/ as ``name``), or with ``link``
    a symbolic link to it in out/: refused before any work, naming both options; the input is
    unchanged (in/ and out/ are checked as they were)."""

    def mutate(c: Ctx) -> List[Fragment]:
        path = c.write(name, Path(c.value(in_flag)).read_bytes())
        c.set(in_flag, path)
        target = path
        if link:
            target = c.o("link_to_" + name)
            os.symlink(path, target)
        c.set(out_flag, target)
        return [os.path.basename(target), name, out_flag, in_flag, "overwrite", IS_INPUT]

    return mutate


add("cxmi-output-is-the-reference", cxmi_command, output_over_input("--output", "--reference", "ref.fr"))
add("cxmi-output-is-the-docids", cxmi_command, output_over_input("--output", "--docids", "test.docids"))
add("translate-output-is-the-source", translate_command, output_over_input("--output", "--source", "src.en"))
add(
    "translate-output-is-a-link-to-the-source",
    translate_command,
    output_over_input("--output", "--source", "src.en", link=True),
)
add("score-output-is-the-hyp", score_command, output_over_input("--output", "--hyp", "hyp.fr"))
add(
    "score-output-is-a-link-to-the-docids",
    score_command,
    output_over_input("--output", "--docids", "test.docids", link=True),
)
add("eval-output-is-the-ref", eval_command, output_over_input("--output", "--ref", "ref.fr"))
add("eval-plot-is-a-link-to-the-hyps", eval_command, output_over_input("--plot", "--hyps", "sys.hyp", link=True))
add("tag-dump-tags-is-the-src", tag_command, output_over_input("--dump-tags", "--src", "src.en"))


def input_is_a_side_output(in_flag: str, name: str, output: str, out_flag: str = "--output"):
    """The file of ``in_flag`` copied into in/ as ``name``, a file the command writes or removes
    beside ``out_flag`` = in/``output`` (OUTPUT.partial, its summary): refused before any work."""

    def mutate(c: Ctx) -> List[Fragment]:
        source = c.value(in_flag) if in_flag.startswith("--") else c.argv[1]
        path = c.write(name, Path(source).read_bytes())
        if in_flag.startswith("--"):
            c.set(in_flag, path)
        else:
            c.argv[1] = path
        c.set(out_flag, str(c.inp / output))
        return [name, in_flag, "overwrite", IS_INPUT]

    return mutate


add(
    "cxmi-source-is-the-outputs-partial", cxmi_command, input_is_a_side_output("--source", "p.jsonl.partial", "p.jsonl")
)
add("cxmi-docids-is-the-outputs-summary", cxmi_command, input_is_a_side_output("--docids", "p.summary.json", "p.jsonl"))
add(
    "contrastive-input-is-the-outputs-partial",
    contrastive_command,
    input_is_a_side_output("--input", "s.scores.partial", "s.scores"),
)


def report_pcxmi_in_the_output_dir(c: Ctx) -> List[Fragment]:
    path = c.write("rep/report.json", Path(c.w.pcxmi).read_bytes())
    c.argv[1] = path
    c.set("--output-dir", str(c.inp / "rep"))
    return ["report.json", "PCXMI", "overwrite", IS_INPUT]


add("report-pcxmi-is-a-file-the-report-writes", report_command, report_pcxmi_in_the_output_dir)


def merge_output_is_a_shard(c: Ctx) -> List[Fragment]:
    shard = c.write("shard0.jsonl", Path(c.w.s0).read_bytes())
    c.argv[1] = shard
    c.set("--output", shard)
    return ["shard0.jsonl", "--output", "SHARDS", "overwrite", IS_INPUT]


add("merge-output-is-a-shard", merge_command, merge_output_is_a_shard)


def nul_byte(line: int):
    """A NUL byte inside line ``line`` (the rest of the file as it was)."""

    def edit(lines):
        lines = list(lines)
        lines[line - 1] = lines[line - 1][:2] + "\0" + lines[line - 1][2:]
        return lines

    return edit


add(
    "translate-source-nul-byte",
    translate_command,
    lambda c: [edited(c, "--source", "nul.en", nul_byte(3)), at_line("nul.en", 3), "NUL", UTF8],
)
add(
    "cxmi-docids-nul-byte",
    cxmi_command,
    lambda c: [edited(c, "--docids", "nul.docids", nul_byte(2)), at_line("nul.docids", 2), "NUL", UTF8],
)
add(
    "score-ref-nul-byte",
    score_command,
    lambda c: [edited(c, "--ref", "nul.fr", nul_byte(1), start=c.w.ref), at_line("nul.fr", 1), "NUL", UTF8],
)
add(
    "tag-tgt-nul-byte",
    tag_command,
    lambda c: [edited(c, "--tgt", "nul.fr", nul_byte(4)), at_line("nul.fr", 4), "NUL", UTF8],
)
add(
    "eval-ref-tags-nul-byte",
    eval_command,
    lambda c: [edited(c, "--ref-tags", "nul_tags.json", nul_byte(1)), at_line("nul_tags.json", 1), "NUL", UTF8],
)


# ---- contrastive sets, cxmi options, make variables, shard merging
def same_tokens(entries: list) -> None:
    """Entry 1: two different strings that differ only in words outside the tiny vocabulary."""
    reference = entries[1]["dst"][0]
    entries[1]["dst"] = [reference + " zzyzx", reference + " qwvkj"]


add(
    "contrastive-different-strings-same-tokens",
    contrastive_command,
    contrastive_entry("same_tokens", same_tokens, "entry 1", "candidates 0 and 1", "same tokens"),
)
add(
    "cxmi-random-context-seed-neg",
    cxmi_command,
    do(lambda c: c.argv.extend(["--random-context", "--seed", "-1"]), "--seed", MUST),
)


def shard_without_records(c):
    """A shard whose summary is there but whose .jsonl is not (deleted, or never finished)."""
    path = copy_shard(c, c.w.s1, "gone")
    os.unlink(path)
    shards(c, c.w.s0, path)
    return ["gone.jsonl", "does not exist", NOT_FOUND]


add("merge-shard-jsonl-absent", merge_command, shard_without_records)


# ---- the sentencepiece model and the dictionary
def spm_of_the_corpus(c: Ctx, drop: int = 0, extra: Sequence[str] = ()) -> List[Fragment]:
    """--spm: a sentencepiece model of the tiny corpus; --data: dictionaries holding its pieces
    but the last ``drop``, and the symbols ``extra`` (both fail before the weights load)."""
    import sentencepiece as spm

    from contextual_mt.backends.fairseq.codec import model_pieces

    raw = Path(c.w.raw)
    prefix = c.inp / "corpus_spm"
    spm.SentencePieceTrainer.train(
        input=f"{raw / 'train.en'},{raw / 'train.fr'}",
        model_prefix=str(prefix),
        vocab_size=60,
        model_type="bpe",
        hard_vocab_limit=False,
        minloglevel=2,
    )
    pieces = model_pieces(spm.SentencePieceProcessor(model_file=f"{prefix}.model"))
    entries = pieces[: len(pieces) - drop] + list(extra) + ["<brk>", "<mask>"]
    for lang in ("en", "fr"):
        c.write_lines(f"data/dict.{lang}.txt", [f"{w} 1" for w in entries])
    c.set("--spm", f"{prefix}.model")
    c.set("--data", str(c.inp / "data"))
    found = (
        (f"{drop} of its {len(pieces)} pieces", "not in the dictionary")
        if drop
        else (f"{len(extra)} of the {len(entries)} dictionary symbols", "not pieces of the model")
    )
    return ["corpus_spm.model", "dict.en.txt", *found]


for _prefix, _base in (("translate", translate_command), ("cxmi", cxmi_command), ("contrastive", contrastive_command)):
    add(f"{_prefix}-spm-more-pieces-than-the-dictionary", _base, lambda c: spm_of_the_corpus(c, drop=3))
    add(
        f"{_prefix}-spm-dictionary-symbols-not-pieces",
        _base,
        lambda c: spm_of_the_corpus(c, extra=["▁zebra", "quokka"]),
    )
add(
    "contrastive-spm-other-dictionary",
    contrastive_command,
    opt("--spm", lambda c: c.w.other_spm, ("other_spm.model", "--spm"), ("dictionary", "match")),
)


def data_folder_of_an_older_dictionary(c: Ctx) -> List[Fragment]:
    """`pipeline data` into a folder prepared before the dictionary held every piece of the
    sentencepiece model: its record lacks that setting, and the folder is refused as made with
    other options (its models map unseen pieces to <unk>), not reused."""
    from contextual_mt.pipeline.data_plan import STATE, DataOptions, make_plan

    c.command = "contextual-mt"
    out = c.out / "data"
    c.argv = [
        "pipeline",
        "data",
        "--lang",
        "fr",
        "--text",
        c.w.raw,
        "--output",
        str(out),
        "--vocab-size",
        "50",
        "--workers",
        "1",
        "--quiet",
    ]
    settings = make_plan(DataOptions(lang="fr", output=str(out), text=c.w.raw, vocab_size=50, workers=1)).settings
    settings.pop("dictionary")
    done = {"files": {}, "stats": {}, "seconds": {}}
    out.mkdir()
    (out / STATE).parent.mkdir(parents=True)
    (out / STATE).write_text(
        json.dumps(
            {
                "stage": "data",
                "base": "record",
                "outputs": {},
                "format": 1,
                "fingerprint": "0" * 64,
                "settings": settings,
                "steps": dict.fromkeys(("text", "spm", "bin"), done),
            }
        )
        + "\n"
    )
    return ["data", "dictionary", "--overwrite"]


add("pipeline-data-folder-of-an-older-dictionary", lambda c: None, data_folder_of_an_older_dictionary)
