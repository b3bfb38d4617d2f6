"""Compact builders for hand-written annotated sentences, and small sample files (tests only)."""

import subprocess
import sys
from pathlib import Path

from muda.annotation import Sentence, Token, Word, parse_feats
from muda.document import Document, SentencePair
from muda.formats.coref import CorefIndex, corefud_mentions


def sentence(*tokens):
    """sentence(("Tu", "PRON", "Person=2|Number=Sing", 2, "nsubj"), ...): head/deprel default to a flat
    tree; a sixth item is MISC (e.g. "Entity=(e1)"), a seventh the lemma (default: lowercase form)."""
    toks = []
    for i, t in enumerate(tokens, start=1):
        t = tuple(t) + (None,) * (7 - len(t))
        form, upos, feats, head, deprel, misc, lemma = t
        misc_d = dict(x.partition("=")[::2] for x in misc.split("|")) if misc else {}
        toks.append(
            Token(
                form,
                [
                    Word(
                        i,
                        form,
                        lemma or form.lower(),
                        upos or "X",
                        parse_feats(feats or "_"),
                        0 if head is None else head,
                        deprel or ("root" if i == 1 else "dep"),
                        misc_d,
                    )
                ],
            )
        )
    return Sentence(toks)


def doc(pairs, doc_id="d1"):
    """pairs: (src Sentence, tgt Sentence, alignment set, src_elliptical)."""
    sp = [SentencePair(s, t, set(a), bool(e)) for s, t, a, e in pairs]
    return Document(doc_id, sp, CorefIndex(corefud_mentions([p.src for p in sp])))


def filler(sentence_text, upos="X"):
    """A sentence of plain words with one UPOS (filler)."""
    return sentence(*[(w, upos) for w in sentence_text.split()])


# Penn Treebank trees: two with the ellipsis trace *?*, two without
PTB_TREES = """( (S (NP-SBJ (PRP I)) (VP (VBP do) (RB n't) (VP (-NONE- *?*) )) (. .)) )
( (S (NP-SBJ (PRP She)) (VP (VBD ate) (NP (DT an) (NN apple))) (. .)) )
( (S (NP-SBJ (DT Both)) (VP (VBD did) (VP (-NONE- *?*))) (. .)) )
( (S (NP-SBJ (PRP We)) (VP (VBP like) (NP (NNS cats))) (. .)) )
"""


# ----------------------------------------------------------------------------- the muda command
# the `muda` console script of this venv
MUDA_SCRIPT = Path(sys.executable).parent / "muda"


def muda(*args, env=None):
    """Run the `muda` command of this venv."""
    return subprocess.run([str(MUDA_SCRIPT), *map(str, args)], capture_output=True, text=True, env=env)


def assert_one_error(proc, *needles):
    """Exit status 1 and exactly one stderr line, 'error: ...', holding every needle; no traceback."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr[-3000:]
    for needle in needles:
        assert str(needle) in lines[0], (needle, lines[0])
    return lines[0]


def tag_args(d, out, lang="fr", split="test"):
    """`muda tag` on the demo corpus ``d`` with its gold annotations."""
    return [
        str(a)
        for a in (
            "tag",
            "--src",
            d / f"{split}.en",
            "--tgt",
            d / f"{split}.fr",
            "--docids",
            d / f"{split}.docids",
            "--tgt-lang",
            lang,
            "--dump-tags",
            out,
            "--src-conllu",
            d / f"{split}.en.conllu",
            "--tgt-conllu",
            d / f"{split}.fr.conllu",
            "--alignments",
            d / f"{split}.align",
        )
    ]


def eval_args(d, *extra, lang="fr"):
    """`muda eval` on the demo corpus ``d``: gold reference annotations, lexicon for hypotheses."""
    return [
        str(a)
        for a in (
            "eval",
            "--src",
            d / "test.en",
            "--ref",
            d / "test.fr",
            "--docids",
            d / "test.docids",
            "--tgt-lang",
            lang,
            "--src-conllu",
            d / "test.en.conllu",
            "--ref-conllu",
            d / "test.fr.conllu",
            "--ref-alignments",
            d / "test.align",
            "--lexicon",
            d / "train.en.conllu",
            d / "train.fr.conllu",
            d / "train.align",
            *extra,
        )
    ]
