"""Bad-input cases: muda tag and muda download: models missing."""

from __future__ import annotations

from tests.bad_input.core import MODEL, MUST, Ctx, add, do, opt
from tests.bad_input.muda_tag import tag_command

add(
    "tag-models-missing-all-listed",
    tag_command,
    do(
        lambda c: (
            c.drop("--src-conllu"),
            c.drop("--tgt-conllu"),
            c.drop("--alignments"),
            c.set("--stanza-dir", c.mkdir("no_stanza")),
            c.set("--cache-dir", str(c.inp.parent / "cache")),
        ),
        "needs models not on this machine",
        "stanza en (tokenize,pos,lemma,depparse,coref)",
        "stanza fr (tokenize,pos,lemma)",
        "muda download --tgt-lang fr",
        "--src-conllu",
        "--tgt-conllu",
        "--alignments",
        MODEL,
    ),
)
add(
    "tag-aligner-folder-missing",
    tag_command,
    do(
        lambda c: (c.drop("--alignments"), c.set("--align-model", c.missing("no_aligner"))),
        "no_aligner",
        ("not found", "without config.json"),
        "--alignments",
        MODEL,
    ),
)


def download_command(c: Ctx) -> None:
    c.command = "muda"
    c.argv = ["download", "--tgt-lang", "fr", "--stanza-dir", c.o("stanza")]


add("download-unknown-language", download_command, opt("--tgt-lang", "xx", "xx", ("unknown", "language"), MUST))
add(
    "download-unknown-phenomenon",
    download_command,
    lambda c: (c.set("--phenomena", "sarcasm"), ["--phenomena", "sarcasm"])[1],
    status=2,
)
