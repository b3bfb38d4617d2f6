"""The MuDA tagger: documents of annotated, aligned sentence pairs -> tags per target token.

``tag_files`` is the file-level entry point of ``muda tag``: it reads text, document ids and
either pre-computed annotations (CoNLL-U with CorefUD coreference, Pharaoh alignments) or runs
the annotators (stanza, the awesome-align aligner), then writes the tags JSON and, beside it, the
annotations it used.
"""
from __future__ import annotations

import json
import time
import unicodedata
from typing import Dict, List, Optional, Sequence

from muda.formats.pharaoh import Alignment, check_alignment_ranges, format_pharaoh, read_pharaoh
from muda.annotation import Sentence
from muda.formats.conllu import read_conllu, write_conllu
from muda.formats.coref import CorefIndex, Mention, corefud_mentions
from muda.document import Document, SentencePair
from muda.annotators.ellipsis_rules import detect as detect_ellipsis
from muda.errors import InputError
from muda.io import atomic_write_text, read_docids, read_lines
from muda.languages import PHENOMENA as ALL_PHENOMENA, Language, get_language
from muda.phenomena import PHENOMENA
from muda.settings import TaggerSettings
from muda.formats.tags import TagDump, tag_counts, write_tags


def text_hash(lines: Sequence[str]) -> str:
    """Content hash of a text, to recognise the reference a tags file was made from."""
    import hashlib

    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def _norm(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def check_annotations_match(sentences: Sequence[Sentence], lines: Sequence[str], conllu: str, text: str) -> None:
    if len(sentences) != len(lines):
        raise InputError(f"{conllu}: has {len(sentences)} sentences but {text} has {len(lines)} lines")
    for n, (s, line) in enumerate(zip(sentences, lines), start=1):
        if _norm("".join(s.forms)) != _norm(line):
            raise InputError(f"{conllu}: sentence {n} ({' '.join(s.forms)!r}) does not match {text}:{n} ({line!r})")


def build_documents(docids: Sequence[str], src: Sequence[Sentence], tgt: Sequence[Sentence],
                    alignments: Sequence[Alignment], ellipsis: Sequence[bool],
                    mentions: Optional[Dict[str, List[Mention]]] = None) -> List[Document]:
    """Group consecutive lines with the same id into documents (a repeated id later starts a new
    document). Coreference comes from ``mentions`` (document id -> mentions) when given, else from
    the source CoNLL-U's CorefUD Entity values."""
    docs: List[Document] = []
    for n, doc_id in enumerate(docids):
        if not docs or docs[-1].id != doc_id:
            docs.append(Document(doc_id, []))
        docs[-1].pairs.append(SentencePair(src[n], tgt[n], alignments[n], ellipsis[n]))
    for doc in docs:
        found = mentions.get(doc.id) if mentions is not None else \
            corefud_mentions([p.src for p in doc.pairs], f"source CoNLL-U, document {doc.id}")
        doc.coref = CorefIndex(found or [])
    return docs


class MudaTagger:
    """Tags documents for one target language; phenomena that do not apply give no tags."""

    def __init__(self, lang: str, phenomena: Optional[Sequence[str]] = None,
                 settings: Optional[TaggerSettings] = None):
        self.language: Language = get_language(lang)
        wanted = list(phenomena) if phenomena else list(ALL_PHENOMENA)
        unknown = [p for p in wanted if p not in PHENOMENA]
        if unknown:
            raise InputError(f"unknown phenomenon {unknown[0]!r}; known: {', '.join(ALL_PHENOMENA)}")
        self.phenomena = [p for p in wanted if p in self.language.phenomena]
        self.settings = settings or TaggerSettings()

    def tag_document(self, doc: Document) -> List[List[Dict]]:
        per_phenomenon = {p: PHENOMENA[p](doc, self.language, self.settings) for p in self.phenomena}
        out = []
        for s, pair in enumerate(doc.pairs):
            out.append([{"token": tok.form, "tags": [p for p in self.phenomena if j in per_phenomenon[p][s]]}
                        for j, tok in enumerate(pair.tgt.tokens)])
        return out

    def tag(self, docs: Sequence[Document], progress: bool = False) -> TagDump:
        from tqdm import tqdm

        return [self.tag_document(d) for d in tqdm(docs, desc="tagging", unit="doc", disable=not progress)]


def tag_files(src: str, tgt: str, docids: str, tgt_lang: str, output: str,
              src_conllu: Optional[str] = None, tgt_conllu: Optional[str] = None,
              alignments: Optional[str] = None, phenomena: Optional[Sequence[str]] = None,
              settings: Optional[TaggerSettings] = None, annotators=None, progress: bool = True) -> Dict:
    """Tag a corpus; returns a summary with tag counts and per-stage seconds."""
    times: Dict[str, float] = {}
    clock = time.perf_counter()

    def stage(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        times[name] = times.get(name, 0.0) + now - clock
        clock = now

    tagger = MudaTagger(tgt_lang, phenomena, settings)  # unknown language: fail before any work
    src_lines, tgt_lines, ids = read_lines(src), read_lines(tgt), read_docids(docids)
    if len(tgt_lines) != len(src_lines):
        raise InputError(f"{tgt}: has {len(tgt_lines)} lines but {src} has {len(src_lines)}")
    if len(ids) != len(src_lines):
        raise InputError(f"{docids}: has {len(ids)} lines but {src} has {len(src_lines)}")
    stage("read text")
    mentions = None
    if src_conllu:
        src_sents = read_conllu(src_conllu)
        check_annotations_match(src_sents, src_lines, src_conllu, src)
    else:
        src_sents, mentions = _annotators(annotators).source(src_lines, ids)
    if tgt_conllu:
        tgt_sents = read_conllu(tgt_conllu)
        check_annotations_match(tgt_sents, tgt_lines, tgt_conllu, tgt)
    else:
        tgt_sents = _annotators(annotators).target(tgt_lines, tagger.language.code)
    stage("annotations")
    if alignments:
        aligns = read_pharaoh(alignments)
        if len(aligns) != len(src_lines):
            raise InputError(f"{alignments}: has {len(aligns)} lines but {src} has {len(src_lines)}")
        check_alignment_ranges(aligns, [len(s.tokens) for s in src_sents], [len(s.tokens) for s in tgt_sents],
                               alignments)
    else:
        aligns = _annotators(annotators).align([s.forms for s in src_sents], [s.forms for s in tgt_sents])
    stage("alignment")
    ellipsis = _annotators(annotators).ellipsis(src_sents, src_lines) if annotators and \
        getattr(annotators, "has_ellipsis_model", False) else detect_ellipsis(src_sents)
    stage("ellipsis")
    docs = build_documents(ids, src_sents, tgt_sents, aligns, ellipsis, mentions)
    dump = tagger.tag(docs, progress=progress and len(docs) > 1000)
    stage("tagging")
    write_tags(output, dump)
    stem = output[:-5] if output.endswith(".json") else output
    write_conllu(stem + ".src.conllu", src_sents)
    write_conllu(stem + ".tgt.conllu", tgt_sents)
    atomic_write_text(stem + ".align", "".join(format_pharaoh(a) + "\n" for a in aligns))
    atomic_write_text(stem + ".ellipsis", "".join(f"{int(e)}\n" for e in ellipsis))
    stage("writing")
    summary = {"output": output, "language": tagger.language.code, "phenomena": tagger.phenomena,
               "src_sha256": text_hash(src_lines), "tgt_sha256": text_hash(tgt_lines),
               "documents": len(docs), "sentences": len(src_lines),
               "tags": tag_counts(dump, tagger.phenomena), "seconds": {k: round(v, 4) for k, v in times.items()}}
    atomic_write_text(stem + ".summary.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return summary


def _annotators(annotators):
    if annotators is None:
        raise InputError("no pre-computed annotations given (--src-conllu, --tgt-conllu, --alignments) and no "
                         "annotator models configured: pass the CoNLL-U/Pharaoh files, or --stanza-dir and "
                         "--align-model to annotate with models")
    return annotators


def annotation_paths(output: str) -> Dict[str, str]:
    stem = output[:-5] if output.endswith(".json") else output
    return {k: stem + ext for k, ext in (("src_conllu", ".src.conllu"), ("tgt_conllu", ".tgt.conllu"),
                                         ("alignments", ".align"), ("ellipsis", ".ellipsis"))}


__all__ = ["MudaTagger", "tag_files", "build_documents", "annotation_paths"]
