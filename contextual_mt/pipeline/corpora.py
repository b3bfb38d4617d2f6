"""Readers of the parallel corpora of the per-language-pair study: English source, target ``lang``.

Each reader returns ``{"train": Split, "valid": Split, "test": Split}``: parallel sentence lists
with one document id per line, each document one contiguous run of lines. Every reader applies
one rule: a document is in one split only (``check_one_split_per_document``).

* ``read_ted``: the multilingual TED talks corpus of Qi et al. (2018), ``ted_talks.tar.gz`` or
  the folder it unpacks to (``all_talks_{train,dev,test}.tsv``). Its text is Moses-tokenized;
  ``moses_detokenize`` undoes that (sacremoses, one language per side, over a process pool).
* ``read_iwslt``: an IWSLT17 release folder (``train.tags.en-xx.*`` and the
  ``IWSLT17.TED.<set>.en-xx.*.xml`` dev and test sets). Plain text: no detokenization.
* ``read_text``: ``{train,valid,test}.{en,xx,docids}`` files, used as they are.

Every error is a ``InputError`` of one line naming the file (and line) at fault.
"""

from __future__ import annotations

import html
import os
import re
import tarfile
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from commandkit.documents import read_docids
from commandkit.errors import shown
from commandkit.text import check_input_file, decoded_lines, read_lines
from contextual_mt.errors import Code, InputError

SOURCE_LANG = "en"
SPLITS = ("train", "valid", "test")
TED_FILES = {"train": "all_talks_train.tsv", "valid": "all_talks_dev.tsv", "test": "all_talks_test.tsv"}
TED_DOC_COLUMN = "talk_name"
# a missing translation in the TED corpus (compared with all spaces removed); blank cells too
TED_NULLS = {"__NULL__"}
DETOKENIZE_CHUNK = 2000  # sentences per task of the detokenization pool


@dataclass
class Split:
    """One split: parallel ``src`` / ``tgt`` sentences, the document id of each line, and the
    number of rows dropped because a side had no translation."""

    src: List[str] = field(default_factory=list)
    tgt: List[str] = field(default_factory=list)
    docids: List[str] = field(default_factory=list)
    dropped: int = 0

    def __len__(self) -> int:
        return len(self.src)

    @property
    def documents(self) -> int:
        return sum(1 for i, d in enumerate(self.docids) if i == 0 or d != self.docids[i - 1])


Corpus = Dict[str, Split]


# characters some readers take for a line break (fairseq reads text files with universal newlines)
_LINE_BREAKS = str.maketrans(dict.fromkeys("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029", " "))


def one_line(text: str) -> str:
    """``text`` stripped, with any line-break character inside it made a space."""
    return text.translate(_LINE_BREAKS).strip()


def base_language(lang: str) -> str:
    """The language of a code with a region or script ('pt-br' -> 'pt', 'zh-cn' -> 'zh')."""
    return re.split(r"[-_]", lang, maxsplit=1)[0].lower()


# ============================================================================ TED (Qi et al. 2018)
def _is_null(cell: str) -> bool:
    compact = "".join(cell.split())
    return not compact or compact in TED_NULLS


def _ted_header(header: Optional[str], name: str) -> List[str]:
    if header is None:
        raise InputError(
            f"{name}: empty file (expected a header row with '{TED_DOC_COLUMN}' and one column per language)",
            code=Code.EMPTY,
        )
    columns = [c.strip() for c in header.lstrip("\ufeff").split("\t")]
    if TED_DOC_COLUMN not in columns:
        raise InputError(
            f"{name}:1: no '{TED_DOC_COLUMN}' column in the header (the document "
            f"of each row); columns: {', '.join(columns[:12])}" + (", ..." if len(columns) > 12 else ""),
            code=Code.FORMAT,
        )
    return columns


def _languages(columns: Sequence[str]) -> List[str]:
    return [c for c in columns if c and c != TED_DOC_COLUMN]


def _parse_ted_tsv(lines: Iterator[Tuple[int, str]], name: str, lang: str) -> Split:
    first = next(lines, None)
    columns = _ted_header(first[1] if first else None, name)
    for code in (SOURCE_LANG, lang):
        if code not in columns:
            raise InputError(
                f"{name}: no '{code}' column; the languages are: " + " ".join(sorted(_languages(columns))),
                code=Code.FORMAT,
            )
        if columns.count(code) > 1:  # which one holds the translation is anyone's guess
            raise InputError(f"{name}:1: the header has {columns.count(code)} '{code}' columns", code=Code.FORMAT)
    width = len(columns)
    i_doc, i_src, i_tgt = columns.index(TED_DOC_COLUMN), columns.index(SOURCE_LANG), columns.index(lang)
    talks: Dict[str, List[Tuple[str, str]]] = {}  # insertion-ordered: first appearance
    dropped = 0
    for lineno, line in lines:
        cells = line.split("\t")
        if len(cells) != width:
            if not line.strip():
                continue  # a trailing empty line
            raise InputError(
                f"{name}:{lineno}: {len(cells)} tab-separated fields, the header has {width}", code=Code.FORMAT
            )
        talk = cells[i_doc].strip()
        if not talk:
            raise InputError(f"{name}:{lineno}: empty {TED_DOC_COLUMN}", code=Code.EMPTY)
        rows = talks.setdefault(talk, [])
        src, tgt = cells[i_src], cells[i_tgt]
        if _is_null(src) or _is_null(tgt):
            dropped += 1
            continue
        rows.append((one_line(src), one_line(tgt)))
    split = Split(dropped=dropped)
    for talk, rows in talks.items():  # a talk's rows stay in order, and together
        for src, tgt in rows:
            split.src.append(src)
            split.tgt.append(tgt)
            split.docids.append(talk)
    return split


def _ted_folder_files(path: str) -> Dict[str, str]:
    """The three TSV files in ``path`` or in one of its sub-folders (the unpacked tarball)."""
    candidates = [
        path,
        *sorted(os.path.join(path, d) for d in os.listdir(path) if os.path.isdir(os.path.join(path, d))),
    ]
    for folder in candidates:
        found = {
            split: os.path.join(folder, f) for split, f in TED_FILES.items() if os.path.isfile(os.path.join(folder, f))
        }
        if found:
            missing = [TED_FILES[s] for s in SPLITS if s not in found]
            if missing:
                raise InputError(
                    f"{folder}: no {', '.join(missing)} (the TED corpus has " + ", ".join(TED_FILES.values()) + ")",
                    code=Code.NOT_FOUND,
                )
            return found
    raise InputError(
        f"{path}: no "
        + ", ".join(TED_FILES.values())
        + " in this folder or its sub-folders (is it the unpacked ted_talks.tar.gz?)",
        code=Code.NOT_FOUND,
    )


def ted_files(path: str) -> List[str]:
    """The files ``read_ted`` reads: the tarball itself, or the three TSV files of the folder."""
    if os.path.isdir(path):
        files = _ted_folder_files(path)
        return [files[split] for split in SPLITS]
    check_input_file(path, "TED corpus (ted_talks.tar.gz or its folder)")
    return [path]


def _open_ted_tar(path: str) -> tarfile.TarFile:
    try:
        return tarfile.open(path, "r|*")  # streamed: the archive is decompressed once
    except (tarfile.TarError, OSError) as e:
        raise InputError(f"{path}: not a readable tar archive ({e})", code=Code.FORMAT) from None


def _check_gzip(path: str) -> None:
    """A gzip file read to its end, so that its checksum and length trailer are verified: the tar
    reader stops at the archive's end marker and would take a download cut just before the
    trailer for a whole one."""
    import gzip

    stat = os.stat(path)
    key = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns)
    if key in _GZIP_CHECKED:  # the header is read first, the whole corpus after
        return
    with open(path, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            return
    try:
        with gzip.open(path, "rb") as g:
            while g.read(1 << 24):
                pass
    except (OSError, EOFError, zlib.error) as e:
        raise InputError(
            f"{path}: damaged or incomplete gzip file ({e}); download it again", code=Code.FORMAT
        ) from None
    _GZIP_CHECKED.add(key)


_GZIP_CHECKED: set = set()


def _ted_members(path: str) -> Iterator[Tuple[str, str, Iterable[bytes]]]:
    """(split, display name, raw lines) of the TSV files of a tarball, in archive order."""
    _check_gzip(path)
    wanted = {f: s for s, f in TED_FILES.items()}
    seen: Dict[str, str] = {}
    try:
        with _open_ted_tar(path) as tar:
            for member in tar:
                base = os.path.basename(member.name)
                if not member.isfile() or base not in wanted:
                    continue
                split = wanted[base]
                if split in seen:
                    raise InputError(
                        f"{path}: {base} twice in the archive ({seen[split]} and {member.name})", code=Code.FORMAT
                    )
                seen[split] = member.name
                f = tar.extractfile(member)
                if f is None:
                    raise InputError(f"{path}: {member.name} is not a regular file", code=Code.FORMAT)
                yield split, f"{path}:{member.name}", f
    except (tarfile.TarError, EOFError, OSError) as e:
        raise InputError(f"{path}: cannot read the archive ({e})", code=Code.FORMAT) from None
    missing = [TED_FILES[s] for s in SPLITS if s not in seen]
    if missing:
        raise InputError(
            f"{path}: the archive has no {', '.join(missing)} (the TED corpus has "
            + ", ".join(TED_FILES.values())
            + ")",
            code=Code.NOT_FOUND,
        )


def ted_languages(path: str) -> List[str]:
    """The language columns of a TED corpus (tarball or folder), from the train file's header."""
    if os.path.isdir(path):
        name = _ted_folder_files(path)["train"]
        with open(name, "rb") as f:
            first = next(decoded_lines(f, name), None)
        return sorted(_languages(_ted_header(first[1] if first else None, name)))
    check_input_file(path, "TED corpus (ted_talks.tar.gz or its folder)")
    for _split, name, raw in _ted_members(path):
        first = next(decoded_lines(raw, name), None)
        return sorted(_languages(_ted_header(first[1] if first else None, name)))
    return []  # not reached: _ted_members raises when a file is missing


def read_ted(
    path: str, lang: str, detokenize: bool = True, workers: int = 1, progress: Optional[Callable[[int], None]] = None
) -> Corpus:
    """The ``en``-``lang`` pairs of the TED corpus at ``path`` (``ted_talks.tar.gz`` or the folder
    it unpacks to); dev is the valid split. Rows where either side is missing (``__NULL__``,
    ``_ _ NULL _ _``, blank) are dropped and counted in ``Split.dropped``. With ``detokenize``, the
    Moses tokenization is undone (see ``moses_detokenize``)."""
    if os.path.isdir(path):
        files = _ted_folder_files(path)
        sources = []
        for split in SPLITS:
            name = files[split]
            with open(name, "rb") as f:
                sources.append((split, name, _parse_ted_tsv(decoded_lines(f, name), name, lang)))
    else:
        check_input_file(path, "TED corpus (ted_talks.tar.gz or its folder)")
        try:
            sources = [
                (split, name, _parse_ted_tsv(decoded_lines(raw, name), name, lang))
                for split, name, raw in _ted_members(path)
            ]
        except (tarfile.TarError, EOFError, OSError, zlib.error) as e:  # a damaged archive
            raise InputError(f"{path}: cannot read the archive ({e})", code=Code.FORMAT) from None
    corpus: Corpus = {}
    names: Dict[str, str] = {}
    for split, name, data in sources:
        corpus[split], names[split] = data, name
    check_one_split_per_document([(split, name, data.docids) for split, name, data in sources], "talk")
    for split in SPLITS:
        if not corpus[split].src:
            raise InputError(
                f"{names[split]}: no row with both '{SOURCE_LANG}' and '{lang}' text "
                f"({corpus[split].dropped} rows dropped as missing a translation)",
                code=Code.EMPTY,
            )
    corpus = {s: corpus[s] for s in SPLITS}
    if detokenize:
        moses_detokenize(corpus, lang, workers=workers, progress=progress)
    return corpus


def check_one_split_per_document(
    sources: Iterable[Tuple[str, str, Sequence[str]]], what: str = "document", numbered: bool = False
) -> None:
    """The rule of every corpus format: a document (talk) is in one split only, else test scores
    would be measured on training text. ``sources``: (split, file name, document id of each line
    or document); ``numbered``: the ids are the file's lines, so the error names the line."""
    first: Dict[str, Tuple[str, str]] = {}  # document id -> (split, file) where first seen
    for split, name, docids in sources:
        for k, docid in enumerate(docids):
            seen_split, seen_name = first.setdefault(docid, (split, name))
            if seen_split != split:
                where = f"{name}:{k + 1}" if numbered else name
                raise InputError(
                    f"{where}: {what} {docid!r} is also in {seen_name}; a {what} must be in one split only",
                    code=Code.MISMATCH,
                )


# ============================================================================ detokenization
_DETOKENIZERS: Dict[str, Any] = {}  # sacremoses' detokenizers (untyped), by language


def _detokenize_chunk(task: Tuple[str, List[str]]) -> List[str]:
    lang, lines = task
    detok = _DETOKENIZERS.get(lang)
    if detok is None:
        from sacremoses import MosesDetokenizer

        detok = _DETOKENIZERS[lang] = MosesDetokenizer(lang=lang)
    return [detok.detokenize(line.split()) for line in lines]


def moses_detokenize(
    corpus: Corpus, lang: str, workers: int = 1, progress: Optional[Callable[[int], None]] = None
) -> Dict[str, str]:
    """Undo the Moses tokenization of every split in place: the source with the English
    detokenizer, the target with ``base_language(lang)``'s (sacremoses ``MosesDetokenizer``,
    which also unescapes ``&apos;``, ``&quot;``, ...). ``workers`` processes share the work in
    chunks; ``progress(n)`` is called after each chunk of ``n`` sentences. Returns the
    detokenizer language of each side."""
    try:  # fail here, before the pool starts, if it is missing
        import sacremoses  # noqa: F401
    except ImportError:
        raise InputError(
            "the TED corpus is Moses-tokenized and detokenizing it needs sacremoses; "
            "install it (pip install sacremoses)",
            code=Code.MODEL,
        ) from None

    langs = {SOURCE_LANG: base_language(SOURCE_LANG), lang: base_language(lang)}
    tasks: List[Tuple[str, List[str]]] = []
    slots: List[Tuple[List[str], int, int]] = []
    for split in corpus.values():
        for side, code in ((split.src, SOURCE_LANG), (split.tgt, lang)):
            for start in range(0, len(side), DETOKENIZE_CHUNK):
                tasks.append((langs[code], side[start : start + DETOKENIZE_CHUNK]))
                slots.append((side, start, start + DETOKENIZE_CHUNK))

    def place(results: Iterable[List[str]]) -> None:
        for (side, a, b), out in zip(slots, results, strict=True):
            side[a:b] = out
            if progress is not None:
                progress(len(out))

    if workers <= 1 or len(tasks) <= 1:
        place(map(_detokenize_chunk, tasks))
    else:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(min(workers, len(tasks))) as pool:
            place(pool.imap(_detokenize_chunk, tasks, chunksize=1))
    return langs


# ============================================================================ IWSLT17
_XML_SET = re.compile(r"^IWSLT\d*\.TED\.([A-Za-z]+\d*)\.([A-Za-z-]+?-[A-Za-z-]+?)\.([A-Za-z-]+)\.xml$")
_DOC_OPEN = re.compile(r"<doc\b([^>]*)>", re.IGNORECASE)
_DOC_ID = re.compile(r"""\bdocid\s*=\s*["']([^"']*)["']""", re.IGNORECASE)
_SEG = re.compile(r"<seg\b[^>]*>(.*?)</seg\s*>", re.IGNORECASE | re.DOTALL)
_TALKID = re.compile(r"^\s*<talkid>\s*(.*?)\s*</talkid>\s*$", re.IGNORECASE)
_TAG_LINE = re.compile(r"^\s*</?([A-Za-z][\w-]*)\b[^>]*>")
_FULL_TAG_LINE = re.compile(r"^\s*<([A-Za-z][\w-]*)\b[^>]*>.*</\1\s*>\s*$", re.DOTALL)
# the metadata of a talk in train.tags files, one line each
IWSLT_META_TAGS = {
    "doc",
    "url",
    "keywords",
    "speaker",
    "talkid",
    "title",
    "description",
    "reviewer",
    "translator",
    "transcription",
    "mteval",
    "srcset",
    "refset",
    "tstset",
    "head",
}
# inline markup that may be part of a sentence: never taken for a metadata line
INLINE_TAGS = {"i", "b", "u", "em", "strong", "span", "font", "br", "sup", "sub", "a"}


@dataclass
class _Doc:
    docid: str
    lines: List[str]
    where: str  # file:line where it starts


def _iwslt_pair(path: str, lang: str) -> str:
    if not os.path.isdir(path):
        raise InputError(
            f"{path}: IWSLT folder not found"
            if not os.path.exists(path)
            else f"{path}: not a folder (give the IWSLT17 {SOURCE_LANG}-{lang} release folder)",
            code=Code.NOT_FOUND,
        )
    for pair in (f"{SOURCE_LANG}-{lang}", f"{lang}-{SOURCE_LANG}"):
        if all(os.path.isfile(os.path.join(path, f"train.tags.{pair}.{side}")) for side in (SOURCE_LANG, lang)):
            return pair
    found = sorted(f for f in os.listdir(path) if f.startswith("train.tags."))
    raise InputError(
        f"{path}: no train.tags.{SOURCE_LANG}-{lang}.{SOURCE_LANG} and "
        f"train.tags.{SOURCE_LANG}-{lang}.{lang} (an IWSLT17 {SOURCE_LANG}-{lang} release "
        "folder)" + (f"; found: {', '.join(found)}" if found else ""),
        code=Code.NOT_FOUND,
    )


def iwslt_sets(path: str, lang: str) -> Dict[str, Dict[str, str]]:
    """The dev/test sets of an IWSLT folder: ``{set name: {side: xml file}}`` (both sides present)."""
    pair = _iwslt_pair(path, lang)
    sets: Dict[str, Dict[str, str]] = {}
    for name in sorted(os.listdir(path)):
        m = _XML_SET.match(name)
        if m and m.group(2) == pair and m.group(3) in (SOURCE_LANG, lang):
            sets.setdefault(m.group(1), {})[m.group(3)] = os.path.join(path, name)
    for name, sides in sorted(sets.items()):
        if len(sides) != 2:
            have = next(iter(sides.values()))
            missing = SOURCE_LANG if SOURCE_LANG not in sides else lang
            raise InputError(
                f"{have}: no {missing} side for {name} (expected "
                f"{os.path.basename(have).rsplit('.', 2)[0]}.{missing}.xml beside it)",
                code=Code.NOT_FOUND,
            )
    return sets


def _set_year(name: str) -> Tuple[int, str]:
    digits = re.sub(r"\D", "", name)
    return (int(digits) if digits else -1, name)


def default_iwslt_test(sets: Iterable[str]) -> Optional[str]:
    """tst2015 if present, else the newest tst set."""
    tests = [s for s in sets if s.startswith("tst")]
    if "tst2015" in tests:
        return "tst2015"
    return max(tests, key=_set_year) if tests else None


def _read_train_tags(path: str) -> List[_Doc]:
    """The documents of a train.tags file: one per <doc> block, or (without <doc> markup) one per
    <talkid> line; metadata lines skipped."""
    lines = read_lines(path)
    has_docs = any(_DOC_OPEN.match(line.lstrip()) for line in lines)
    docs: List[_Doc] = []
    inside = False
    for lineno, line in enumerate(lines, start=1):
        stripped = line.strip()
        tag = _TAG_LINE.match(line)
        if has_docs and tag and tag.group(1).lower() == "doc":
            if stripped.startswith("</"):
                if not inside:
                    raise InputError(f"{path}:{lineno}: </doc> without an open <doc>", code=Code.FORMAT)
                inside = False
                continue
            if inside:
                raise InputError(f"{path}:{lineno}: <doc> inside another <doc> (no </doc> before it)", code=Code.FORMAT)
            m = _DOC_ID.search(line)
            inside = True
            docs.append(_Doc(m.group(1).strip() if m else "", [], f"{path}:{lineno}"))
            continue
        if tag and (
            tag.group(1).lower() in IWSLT_META_TAGS
            or (tag.group(1).lower() not in INLINE_TAGS and _FULL_TAG_LINE.match(line))
        ):
            talkid = _TALKID.match(line)
            if talkid:
                if not has_docs:
                    docs.append(_Doc(talkid.group(1), [], f"{path}:{lineno}"))
                elif docs and inside and not docs[-1].docid:
                    docs[-1].docid = talkid.group(1)  # <doc> without a docid attribute
            continue
        if has_docs and not inside:
            if stripped:
                raise InputError(f"{path}:{lineno}: text outside a <doc> ... </doc> block", code=Code.FORMAT)
            continue
        if not docs:
            if stripped:
                raise InputError(
                    f"{path}:{lineno}: text before any <doc> or <talkid> line (cannot tell its document)",
                    code=Code.FORMAT,
                )
            continue
        docs[-1].lines.append(one_line(stripped))
    if inside:
        raise InputError(f"{path}: the last <doc> block ({docs[-1].where}) has no </doc>", code=Code.FORMAT)
    if not docs:
        raise InputError(
            f"{path}: no <doc docid=...> blocks or <talkid> lines: cannot tell the documents", code=Code.FORMAT
        )
    for doc in docs:
        if not doc.docid:
            raise InputError(f"{doc.where}: <doc> without a docid attribute or <talkid> line", code=Code.FORMAT)
    return docs


def _read_xml_set(path: str) -> List[_Doc]:
    """The documents of an IWSLT dev/test xml file: ``<doc docid=...>`` with ``<seg>`` lines."""
    text = "\n".join(read_lines(path))
    opens = list(_DOC_OPEN.finditer(text))
    if not opens:
        raise InputError(f"{path}: no <doc docid=...> elements", code=Code.FORMAT)
    docs = []
    for k, m in enumerate(opens):
        end = text.find("</doc>", m.end())
        limit = opens[k + 1].start() if k + 1 < len(opens) else len(text)
        lineno = text.count("\n", 0, m.start()) + 1
        if end < 0 or end > limit:
            raise InputError(f"{path}:{lineno}: <doc> without </doc>", code=Code.FORMAT)
        ident = _DOC_ID.search(m.group(1))
        if not ident or not ident.group(1).strip():
            raise InputError(f"{path}:{lineno}: <doc> without a docid attribute", code=Code.FORMAT)
        segs = [one_line(html.unescape(s)) for s in _SEG.findall(text, m.end(), end)]
        docs.append(_Doc(ident.group(1).strip(), segs, f"{path}:{lineno}"))
    return docs


def _pair_docs(
    src_docs: List[_Doc], tgt_docs: List[_Doc], src_path: str, tgt_path: str, prefix: str, split: Split
) -> None:
    """Append two sides' documents to ``split``; they must match document by document."""
    if [d.docid for d in src_docs] != [d.docid for d in tgt_docs]:
        src_ids, tgt_ids = [d.docid for d in src_docs], [d.docid for d in tgt_docs]
        for k in range(max(len(src_ids), len(tgt_ids))):
            a = src_ids[k] if k < len(src_ids) else None
            b = tgt_ids[k] if k < len(tgt_ids) else None
            if a != b:
                if a is None:
                    raise InputError(
                        f"{tgt_path}: document {b!r} ({tgt_docs[k].where}) is not in {src_path}", code=Code.MISMATCH
                    )
                if b is None:
                    raise InputError(
                        f"{src_path}: document {a!r} ({src_docs[k].where}) is not in {tgt_path}", code=Code.MISMATCH
                    )
                raise InputError(
                    f"{tgt_path}: document {k + 1} is {b!r} ({tgt_docs[k].where}) but in "
                    f"{src_path} it is {a!r}; the two sides must hold the same documents",
                    code=Code.MISMATCH,
                )
    seen = set()
    for s, t in zip(src_docs, tgt_docs, strict=True):
        if len(s.lines) != len(t.lines):
            raise InputError(
                f"{tgt_path}: document {t.docid!r} ({t.where}) has {len(t.lines)} lines but "
                f"{len(s.lines)} in {src_path}",
                code=Code.LINE_COUNT,
            )
        docid = f"{prefix}{s.docid}"
        if docid in seen:
            raise InputError(f"{s.where}: document {s.docid!r} appears twice in {src_path}", code=Code.FORMAT)
        seen.add(docid)
        for a, b in zip(s.lines, t.lines, strict=True):
            if not a or not b:
                split.dropped += 1  # a blank line on either side: no translation to learn from
                continue
            split.src.append(a)
            split.tgt.append(b)
            split.docids.append(docid)


def _set_list(value: str, flag: str) -> List[str]:
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names:
        raise InputError(
            f"{flag}: give one or more set names (e.g. dev2010 or tst2014,tst2015)", code=Code.OPTION_MISSING
        )
    if len(set(names)) != len(names):
        raise InputError(f"{flag}: a set is named twice in {value!r}", code=Code.OPTION_VALUE)
    return names


def resolve_iwslt_sets(path: str, lang: str, dev: str = "dev2010", test: Optional[str] = None) -> Dict[str, List[str]]:
    """The IWSLT set names that make the valid and test splits (``test`` None: tst2015, else the
    newest tst set)."""
    available = iwslt_sets(path, lang)
    listing = ", ".join(sorted(available, key=_set_year)) or "none"
    if test is None:
        test = default_iwslt_test(available)
        if test is None:
            raise InputError(
                f"{path}: no tst*.xml test set (sets: {listing}); give {shown('--iwslt-test')}",
                code=Code.OPTION_MISSING,
            )
    chosen = {"valid": _set_list(dev, "--iwslt-dev"), "test": _set_list(test, "--iwslt-test")}
    for split, flag in (("valid", "--iwslt-dev"), ("test", "--iwslt-test")):
        for name in chosen[split]:
            if name not in available:
                raise InputError(f"{shown(flag)}: no {name} set in {path} (sets: {listing})", code=Code.NOT_FOUND)
    both = set(chosen["valid"]) & set(chosen["test"])
    if both:
        raise InputError(
            f"{shown('--iwslt-dev')} and {shown('--iwslt-test')} both name {', '.join(sorted(both))}; "
            "a set can be in one split only",
            code=Code.OPTIONS_CONFLICT,
        )
    return chosen


def iwslt_files(path: str, lang: str, dev: str = "dev2010", test: Optional[str] = None) -> List[str]:
    """The files ``read_iwslt`` reads with these options."""
    pair = _iwslt_pair(path, lang)
    sets = iwslt_sets(path, lang)
    chosen = resolve_iwslt_sets(path, lang, dev, test)
    files = [os.path.join(path, f"train.tags.{pair}.{side}") for side in (SOURCE_LANG, lang)]
    for split in ("valid", "test"):
        files += [sets[name][side] for name in chosen[split] for side in (SOURCE_LANG, lang)]
    return files


def read_iwslt(path: str, lang: str, dev: str = "dev2010", test: Optional[str] = None) -> Corpus:
    """The IWSLT17 ``en``-``lang`` release in folder ``path``: train from the train.tags files,
    valid from the ``dev`` set(s), test from the ``test`` set(s) (comma lists; several sets are
    concatenated, their docids prefixed with the set name, e.g. ``tst2014:1850``). The text is
    used as it is (not Moses-tokenized); lines blank on either side are dropped and counted."""
    files = iwslt_files(path, lang, dev, test)
    sets = iwslt_sets(path, lang)
    chosen = resolve_iwslt_sets(path, lang, dev, test)
    corpus: Corpus = {split: Split() for split in SPLITS}
    train = _read_train_tags(files[0])
    _pair_docs(train, _read_train_tags(files[1]), files[0], files[1], "", corpus["train"])
    talks = [("train", files[0], [d.docid for d in train])]  # talk ids before any set-name prefix
    for split in ("valid", "test"):
        for name in chosen[split]:
            src_path, tgt_path = sets[name][SOURCE_LANG], sets[name][lang]
            prefix = f"{name}:" if len(chosen[split]) > 1 else ""
            docs = _read_xml_set(src_path)
            _pair_docs(docs, _read_xml_set(tgt_path), src_path, tgt_path, prefix, corpus[split])
            talks.append((split, src_path, [d.docid for d in docs]))
    check_one_split_per_document(talks, "talk")
    for split in SPLITS:
        if not corpus[split].src:
            where = files[0] if split == "train" else ", ".join(chosen[split])
            raise InputError(f"{where}: the {split} split has no sentence pairs", code=Code.EMPTY)
    return corpus


# ============================================================================ plain text
def text_files(path: str, lang: str) -> List[str]:
    return [os.path.join(path, f"{split}.{ext}") for split in SPLITS for ext in (SOURCE_LANG, lang, "docids")]


def read_text(path: str, lang: str) -> Corpus:
    """``{train,valid,test}.{en,lang,docids}`` in folder ``path``, used as they are; the three
    files of a split must have the same number of lines, no document id may be blank, and a
    document is in one split only."""
    if not os.path.isdir(path):
        raise InputError(
            f"{path}: text folder not found"
            if not os.path.exists(path)
            else f"{path}: not a folder (give the folder with train.{SOURCE_LANG}, ...)",
            code=Code.NOT_FOUND,
        )
    corpus: Corpus = {}
    for split in SPLITS:
        src_path, tgt_path, ids_path = (os.path.join(path, f"{split}.{ext}") for ext in (SOURCE_LANG, lang, "docids"))
        src, tgt = read_lines(src_path), read_lines(tgt_path)
        ids = read_docids(ids_path)
        for other, lines in ((tgt_path, tgt), (ids_path, ids)):
            if len(lines) != len(src):
                raise InputError(
                    f"{other}: has {len(lines)} lines but {src_path} has {len(src)}; "
                    "the files of a split must be parallel",
                    code=Code.LINE_COUNT,
                )
        corpus[split] = Split(src, tgt, ids)
    check_one_split_per_document(
        [(split, os.path.join(path, f"{split}.docids"), corpus[split].docids) for split in SPLITS], numbered=True
    )
    return corpus


__all__ = [
    "SOURCE_LANG",
    "SPLITS",
    "Corpus",
    "Split",
    "base_language",
    "default_iwslt_test",
    "iwslt_files",
    "iwslt_sets",
    "moses_detokenize",
    "one_line",
    "read_iwslt",
    "read_ted",
    "read_text",
    "resolve_iwslt_sets",
    "ted_files",
    "ted_languages",
    "text_files",
]
