"""Annotation by lookup in an annotated parallel corpus: target words get their most frequent
analysis (lemma, UPOS, features) and source-target pairs are aligned by how often the corpus
aligns them. For closed-vocabulary data such as the embedded demo this annotates system
outputs with no model; on open text it only covers words seen in the corpus.

It has no parser and no coreference, so it cannot annotate the English source: that comes
pre-computed (``--src-conllu``, or the ``.src.conllu`` that ``muda tag`` wrote beside the
reference tags); ellipsis is then found by the rule-based detector over that parse."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Dict, List, NoReturn, Optional, Sequence, Tuple

from commandkit.errors import Code, InputError
from muda.annotation import Sentence, Token, Word
from muda.annotators.ellipsis_rules import detect as detect_ellipsis
from muda.formats.conllu import read_conllu
from muda.formats.pharaoh import Alignment, read_pharaoh
from muda.languages import Language

# a target side sharing this share of its words with the source side is in the source's language
SAME_LANGUAGE_SHARE = 0.5


def _words(sentences: Sequence[Sentence]) -> List[str]:
    """The lowercased word forms (those with a letter) of ``sentences``."""
    return [t.form.lower() for s in sentences for t in s.tokens if any(ch.isalpha() for ch in t.form)]


def known_words(language: Language) -> frozenset:
    """The words the language file lists (lowercased): its pronouns, forms of address and
    closed-class words, frequent in any text of the language."""
    words = set(language.closed_class) | {w for forms in language.pronouns.values() for w in forms}
    if language.formality is not None:
        words |= language.formality.T | language.formality.V
    return frozenset(w.lower() for w in words)


def check_lexicon_language(
    src: Sequence[Sentence], tgt: Sequence[Sentence], src_name: str, tgt_name: str, language: Language
) -> None:
    """The lexicon's target side is in ``language``, not in the source's language (an English
    CoNLL-U given as the target side would annotate every hypothesis word as unknown): it does
    not share most of its words with the source side, and the language file's pronouns and forms
    of address are more frequent in it than in the English source."""
    src_words, tgt_words = _words(src), _words(tgt)
    if not tgt_words:
        return
    vocabulary = set(src_words)
    shared = sum(w in vocabulary for w in tgt_words) / len(tgt_words)
    if shared >= SAME_LANGUAGE_SHARE:
        raise InputError(
            f"--lexicon: {tgt_name}: reads as the source language, not {language.name}: {shared:.0%} of its words "
            f"are words of {src_name}; give the {language.name} side of the annotated corpus",
            code=Code.MISMATCH,
        )
    known = known_words(language)
    if not known or not src_words:
        return
    rate = sum(w in known for w in tgt_words) / len(tgt_words)
    if rate <= sum(w in known for w in src_words) / len(src_words):
        examples = ", ".join(sorted(known)[:4])
        raise InputError(
            f"--lexicon: {tgt_name}: does not read as {language.name}: its words include {language.name} pronouns "
            f"and forms of address ({examples}, ...) no more often than the English side {src_name} does; give "
            f"the {language.name} side of the annotated corpus",
            code=Code.MISMATCH,
        )


class LexiconAnnotator:
    """An ``Annotator`` for the target side and alignments, from an annotated parallel corpus."""

    has_ellipsis_model = False

    def __init__(self, src_conllu: str, tgt_conllu: str, alignments: str, *, language: Optional[Language] = None):
        """``language``: the target language the lexicon's target side must be in (checked)."""
        src, tgt, aligns = read_conllu(src_conllu), read_conllu(tgt_conllu), read_pharaoh(alignments)
        for path, sentences in ((src_conllu, src), (tgt_conllu, tgt)):
            if not any(s.tokens for s in sentences):
                raise InputError(
                    f"--lexicon: {path}: empty (no annotated sentence); the lexicon is an annotated parallel corpus",
                    code=Code.EMPTY,
                )
        if not (len(src) == len(tgt) == len(aligns)):
            raise InputError(
                f"--lexicon: {src_conllu}, {tgt_conllu} and {alignments} have {len(src)}, {len(tgt)} "
                f"and {len(aligns)} sentences; they must be one annotated parallel corpus",
                code=Code.LINE_COUNT,
            )
        if language is not None:
            check_lexicon_language(src, tgt, src_conllu, tgt_conllu, language)
        analyses: Dict[str, Counter] = defaultdict(Counter)
        for s in tgt:
            for t in s.tokens:
                if len(t.words) == 1:
                    w = t.words[0]
                    analyses[t.form][(w.lemma, w.upos, tuple(sorted(w.feats.items())))] += 1
        self.analysis = {form: c.most_common(1)[0][0] for form, c in analyses.items()}
        self.pairs: Counter = Counter()
        for s, ts, a in zip(src, tgt, aligns, strict=True):
            for i, j in a:
                if i < len(s.tokens) and j < len(ts.tokens):
                    self.pairs[(s.tokens[i].form.lower(), ts.tokens[j].form.lower())] += 1

    def source(self, lines: Sequence[str], docids: Sequence[str]) -> NoReturn:
        """Always an error: the English source must come pre-computed."""
        raise InputError(
            "the --lexicon annotator cannot annotate the English source (it has no parser and no "
            "coreference): pass --src-conllu (CoNLL-U of --src with CorefUD coreference), or --ref-tags "
            "from `muda tag` with the .src.conllu it wrote beside them",
            code=Code.OPTION_MISSING,
        )

    def ellipsis(self, sentences: Sequence[Sentence], lines: Sequence[str]) -> List[bool]:
        """No classifier: the rule-based detector over the source parse."""
        return detect_ellipsis(sentences)

    def words(self, line: str) -> List[str]:
        """Whitespace words, with punctuation and elided articles split off where the corpus
        knows the pieces and not the whole (detokenized text: 'ami.' -> 'ami' '.', "l'homme" ->
        "l'" 'homme'); tokenized text is left as it is."""
        out: List[str] = []
        for form in line.split():
            head: List[str] = []
            tail: List[str] = []
            while len(form) > 1 and form not in self.analysis and not form[0].isalnum():
                head.append(form[0])
                form = form[1:]
            while len(form) > 1 and form not in self.analysis and not form[-1].isalnum():
                tail.insert(0, form[-1])
                form = form[:-1]
            cut = max(form.find("'"), form.find("\u2019"))
            if (
                form not in self.analysis
                and 0 < cut < len(form) - 1
                and form[: cut + 1] in self.analysis
                and form[cut + 1 :] in self.analysis
            ):
                out += [*head, form[: cut + 1], form[cut + 1 :], *tail]
            else:
                out += [*head, form, *tail]
        return out

    def target(self, lines: Sequence[str], lang: str = "") -> List[Sentence]:
        out = []
        for line in lines:
            tokens = []
            for k, form in enumerate(self.words(line), start=1):
                lemma, upos, feats = self.analysis.get(form, (form.lower(), "X", ()))
                tokens.append(
                    Token(
                        form, [Word(k, form, lemma, upos, dict(feats), 0 if k == 1 else 1, "root" if k == 1 else "dep")]
                    )
                )
            out.append(Sentence(tokens, text=line))
        return out

    def align(self, src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]]) -> List[Alignment]:
        """Greedy: the most frequent corpus pairs first, each target word used once, ties broken by
        relative position."""
        out = []
        for s, t in zip(src, tgt, strict=True):
            cands: List[Tuple[int, float, int, int]] = []
            for i, sw in enumerate(s):
                for j, tw in enumerate(t):
                    n = self.pairs.get((sw.lower(), tw.lower()), 0)
                    if n:
                        cands.append((-n, abs(i / max(len(s), 1) - j / max(len(t), 1)), i, j))
            used_s, used_t, pairs = set(), set(), set()
            for _, _, i, j in sorted(cands):
                if i not in used_s and j not in used_t:
                    pairs.add((i, j))
                    used_s.add(i)
                    used_t.add(j)
            out.append(pairs)
        return out
