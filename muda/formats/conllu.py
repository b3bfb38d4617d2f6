"""Reading and writing CoNLL-U, with errors that name the file and line."""

from __future__ import annotations

from typing import Iterable, List, Sequence

from commandkit.errors import Code, InputError
from commandkit.outputs import atomic_write_text
from commandkit.text import read_lines
from muda.annotation import Sentence, Token, Word, format_feats, parse_feats


def _misc(text: str) -> dict:
    # MISC values may contain '=' (CorefUD Entity brackets do not, SpaceAfter does not)
    return {} if text in ("", "_") else dict(item.partition("=")[::2] for item in text.split("|"))


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()  # int() would also take '-3', ' 3', '3_0' and '³'


def _integer(text: str, column: str, where: str) -> int:
    if not _is_number(text):
        raise InputError(f"{where}: {column} {text!r} is not a word number", code=Code.FORMAT)
    return int(text)


def parse_conllu(lines: Iterable[str], path: str = "<conllu>") -> List[Sentence]:
    """Sentences of a CoNLL-U text. Empty nodes (ids like 3.1) are skipped."""
    sentences: List[Sentence] = []
    tokens: List[Token] = []
    comments: dict = {}
    mwt_end, mwt_token = 0, None

    def finish(lineno: int) -> None:
        nonlocal tokens, comments, mwt_token
        if mwt_token is not None and len(mwt_token.words) == 0:
            raise InputError(f"{path}:{lineno}: multi-word token without its words", code=Code.FORMAT)
        sentences.append(Sentence(tokens, comments.get("sent_id"), comments.get("newdoc"), comments.get("text")))
        tokens, comments, mwt_token = [], {}, None

    lineno = 0
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            if tokens or comments:
                finish(lineno)
            continue
        if line.startswith("#"):
            key, sep, value = line[1:].partition("=")
            key = key.strip()
            if key == "newdoc id" or key.startswith("newdoc"):
                comments["newdoc"] = value.strip() if sep else ""
            elif sep and key in ("sent_id", "text"):  # an empty '# text =' marks an empty sentence
                comments[key] = value.strip()
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise InputError(f"{path}:{lineno}: expected 10 tab-separated columns, found {len(cols)}", code=Code.FORMAT)
        ident = cols[0]
        if "." in ident:  # empty node of enhanced UD
            continue
        if "-" in ident:
            lo, sep, hi = ident.partition("-")
            if not (_is_number(lo) and _is_number(hi)) or int(hi) < int(lo):
                raise InputError(
                    f"{path}:{lineno}: bad multi-word token id {ident!r} (expected a range like 3-4)", code=Code.FORMAT
                )
            mwt_token, mwt_end = Token(cols[1], []), int(hi)
            tokens.append(mwt_token)
            continue
        where = f"{path}:{lineno}"
        try:
            feats = parse_feats(cols[5])
        except ValueError as e:
            raise InputError(f"{where}: {e}", code=Code.FORMAT) from None
        word = Word(
            _integer(ident, "word id (ID)", where),
            cols[1],
            cols[2],
            cols[3],
            feats,
            _integer(cols[6], "HEAD", where) if cols[6] != "_" else 0,
            cols[7],
            _misc(cols[9]),
        )
        expected = len([w for t in tokens for w in t.words]) + 1
        if word.id != expected:
            raise InputError(f"{path}:{lineno}: word id {word.id}, expected {expected}", code=Code.FORMAT)
        if mwt_token is not None and word.id <= mwt_end:
            mwt_token.words.append(word)
        else:
            mwt_token = None
            tokens.append(Token(word.form, [word]))
    if tokens or comments:
        finish(lineno + 1)
    return sentences


def read_conllu(path: str) -> List[Sentence]:
    return parse_conllu(read_lines(path), path)


def format_conllu(sentences: Iterable[Sentence]) -> str:
    out: List[str] = []
    for s in sentences:
        if s.newdoc is not None:
            out.append(f"# newdoc id = {s.newdoc}")
        if s.sent_id is not None:
            out.append(f"# sent_id = {s.sent_id}")
        out.append(f"# text = {s.text if s.text is not None else ' '.join(s.forms)}")
        for t in s.tokens:
            if len(t.words) > 1:
                out.append(f"{t.words[0].id}-{t.words[-1].id}\t{t.form}" + "\t_" * 8)
            for w in t.words:
                misc = "|".join(f"{k}={v}" if v else k for k, v in w.misc.items()) or "_"
                out.append(
                    "\t".join(
                        [
                            str(w.id),
                            w.form,
                            w.lemma,
                            w.upos,
                            "_",
                            format_feats(w.feats),
                            str(w.head),
                            w.deprel,
                            "_",
                            misc,
                        ]
                    )
                )
        out.append("")
    return "\n".join(out) + ("\n" if out else "")


def write_conllu(path: str, sentences: Iterable[Sentence]) -> None:
    atomic_write_text(path, format_conllu(sentences))


def check_sentence_count(sentences: Sequence[Sentence], path: str, expected: int, other: str) -> None:
    if len(sentences) != expected:
        raise InputError(
            f"{path}: has {len(sentences)} sentences but {other} has {expected} lines", code=Code.LINE_COUNT
        )
