"""The MuDA tagger: documents of annotated, aligned sentence pairs -> tags per target token.

``tag_files(TagOptions(...))`` is the file-level entry point of ``muda tag``, in stages: read the
text and document ids; take the pre-computed annotations (CoNLL-U with CorefUD coreference,
Pharaoh alignments) or ask an ``Annotator`` for what is missing; tag; write the tags JSON and,
beside it, the annotations it used and a summary.
"""

from __future__ import annotations

import json
import logging
import os
import time
import unicodedata
from dataclasses import dataclass, field
from typing import ClassVar, Dict, FrozenSet, List, Optional, Sequence, Tuple

from commandkit.documents import document_spans, read_docids
from commandkit.errors import Code, InputError
from commandkit.options import group, option
from commandkit.outputs import atomic_write_text, check_not_inputs, output_exists, outputs
from commandkit.text import check_input_file, read_lines, read_text
from muda.annotation import Sentence
from muda.annotators.base import Annotator, SourceMentions
from muda.annotators.ellipsis_rules import detect as detect_ellipsis
from muda.annotators.models import ANNOTATOR_GROUP, AnnotatorOptions
from muda.document import Document, SentencePair
from muda.formats.conllu import check_sentence_count, read_conllu, write_conllu
from muda.formats.coref import CorefIndex, corefud_mentions
from muda.formats.pharaoh import Alignment, check_alignment_ranges, format_pharaoh, read_pharaoh
from muda.formats.tags import TagDump, tag_counts, write_tags
from muda.languages import Language, get_language
from muda.phenomena import applicable, check_phenomena, get_tagger, phenomenon_names, required_annotations
from muda.phenomena.requirements import ALIGNMENT, ALL, ELLIPSIS_DETECTION, SOURCE_PARSE, precomputed
from muda.settings import TaggerSettings

logger = logging.getLogger("muda")


def text_hash(lines: Sequence[str]) -> str:
    """Content hash of a text, to recognise the reference a tags file was made from."""
    import hashlib

    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def _norm(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def check_annotations_match(
    sentences: Sequence[Sentence],
    lines: Sequence[str],
    conllu: str,
    text: str,
    line_numbers: Optional[Sequence[int]] = None,
) -> None:
    """Pre-computed annotations must be of this text: one sentence per line, with its words.
    ``line_numbers``: where each sentence is in ``text`` when not on line n (fairseq output)."""
    check_sentence_count(sentences, conllu, len(lines), text)
    for n, (s, line) in enumerate(zip(sentences, lines, strict=True), start=1):
        if _norm("".join(s.forms)) != _norm(line):
            where = line_numbers[n - 1] if line_numbers else n
            raise InputError(
                f"{conllu}: sentence {n} ({' '.join(s.forms)!r}) does not match {text}:{where} ({line!r})",
                code=Code.MISMATCH,
            )


def build_documents(
    docids: Sequence[str],
    src: Sequence[Sentence],
    tgt: Sequence[Sentence],
    alignments: Sequence[Alignment],
    ellipsis: Sequence[bool],
    mentions: SourceMentions = None,
    src_name: str = "source CoNLL-U",
) -> List[Document]:
    """Group consecutive lines with the same id into documents (a repeated id later starts a new
    document). Coreference comes from ``mentions`` (document id -> mentions) when given, else from
    the source CoNLL-U's CorefUD Entity values (errors name ``src_name`` and the sentence)."""
    pairs = [SentencePair(src[n], tgt[n], alignments[n], ellipsis[n]) for n in range(len(docids))]
    docs = []
    for start, end in document_spans(docids):
        doc = Document(docids[start], pairs[start:end])
        found = (
            mentions.get(doc.id)
            if mentions is not None
            else corefud_mentions([p.src for p in doc.pairs], src_name, first_sentence=start + 1)
        )
        doc.coref = CorefIndex(found or [])
        docs.append(doc)
    return docs


class MudaTagger:
    """Tags documents for one target language; phenomena that do not apply give no tags."""

    def __init__(self, lang: str, phenomena: Optional[Sequence[str]] = None, settings: Optional[TaggerSettings] = None):
        self.language: Language = get_language(lang)
        check_phenomena(phenomena)
        # None: all; an empty list: none (a summary that recorded none is read back as none)
        wanted = list(phenomena) if phenomena is not None else phenomenon_names()
        applies = set(applicable(self.language))
        self.phenomena = [p for p in wanted if p in applies]
        self.settings = settings or TaggerSettings()

    def tag_document(self, doc: Document) -> List[List[Dict]]:
        per_phenomenon = {p: get_tagger(p)(doc, self.language, self.settings) for p in self.phenomena}
        out = []
        for s, pair in enumerate(doc.pairs):
            out.append(
                [
                    {"token": tok.form, "tags": [p for p in self.phenomena if j in per_phenomenon[p][s]]}
                    for j, tok in enumerate(pair.tgt.tokens)
                ]
            )
        return out

    def tag(self, docs: Sequence[Document], progress: bool = False) -> TagDump:
        from tqdm import tqdm

        return [self.tag_document(d) for d in tqdm(docs, desc="tagging", unit="doc", disable=not progress)]


PRECOMPUTED_GROUP = "pre-computed annotations (no model needed)"


@dataclass(frozen=True)
class TagOptions:
    """``muda tag`` (and ``tag_files``): the text, where the tags go, whichever annotations are
    pre-computed (the others come from the annotators' models, ``annotators``) and the tagger's
    thresholds (``settings``); checked when built, before any file is read or model loaded."""

    src: str = option(required=True, help="English source, one sentence per line")
    tgt: str = option(required=True, help="target text (reference or system output), aligned to --src")
    docids: str = option(required=True, help="document id of each line")
    tgt_lang: str = option(required=True, help="target language: ISO code or TED variant (pt-br, zh-cn)")
    dump_tags: str = option(
        required=True,
        metavar="OUT.json",
        help="tags JSON; the annotations used are written beside it (OUT.src.conllu, ...)",
    )
    phenomena: Optional[Sequence[str]] = option(
        nargs="+", choices=phenomenon_names(), help="default: all that apply to the language"
    )
    src_conllu: Optional[str] = option(
        group=PRECOMPUTED_GROUP, help="CoNLL-U of --src (with CorefUD Entity in MISC for coreference)"
    )
    tgt_conllu: Optional[str] = option(group=PRECOMPUTED_GROUP, help="CoNLL-U of --tgt")
    alignments: Optional[str] = option(
        group=PRECOMPUTED_GROUP, help="Pharaoh alignments over the CoNLL-U tokens, one line per pair"
    )
    annotators: AnnotatorOptions = group(AnnotatorOptions, ANNOTATOR_GROUP)
    settings: Optional[TaggerSettings] = group(TaggerSettings, "thresholds")  # None: the defaults
    # how messages name the target text: `muda eval` tags a copy of each system output, but the
    # user must read the name of their file and the line there (fairseq output is re-ordered)
    tgt_name: Optional[str] = None  # default: tgt
    tgt_line_numbers: Optional[Sequence[int]] = None  # line in tgt_name of each sentence; default: n

    OUTPUT_ARGS: ClassVar[Tuple[str, ...]] = ("dump_tags",)

    def __post_init__(self) -> None:
        # every value checked before any file is read or model loaded
        for flag, path in (
            ("--src", self.src),
            ("--tgt", self.tgt),
            ("--docids", self.docids),
            ("--dump-tags", self.dump_tags),
        ):
            if not isinstance(path, str) or not path:
                raise InputError(f"{flag}: a file path is required (got {path!r})", code=Code.OPTION_MISSING)
        if not isinstance(self.tgt_lang, str):
            raise InputError(f"--tgt-lang must be a language code (got {self.tgt_lang!r})", code=Code.OPTION_VALUE)
        get_language(self.tgt_lang)
        check_phenomena(self.phenomena)
        if self.settings is not None and not isinstance(self.settings, TaggerSettings):
            raise InputError(
                f"settings must be a TaggerSettings (got {type(self.settings).__name__})", code=Code.OPTION_VALUE
            )

    @property
    def tgt_label(self) -> str:
        return self.tgt_name or self.tgt


@dataclass
class _Text:
    src: List[str]
    tgt: List[str]
    ids: List[str]


@dataclass
class _Annotations:
    src: List[Sentence]
    tgt: List[Sentence]
    mentions: SourceMentions
    alignments: List[Alignment] = field(default_factory=list)
    ellipsis: List[bool] = field(default_factory=list)


class _StageClock:
    """Seconds spent in each stage (the ``seconds`` of the summary)."""

    def __init__(self) -> None:
        self.seconds: Dict[str, float] = {}
        self._last = time.perf_counter()

    def done(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage] = self.seconds.get(stage, 0.0) + now - self._last
        self._last = now


def tag_files(options: TagOptions, annotators: Optional[Annotator] = None, progress: bool = True) -> Dict:
    """Tag a corpus; returns a summary with tag counts and per-stage seconds. Every output is
    checked before any work and written together at the end (or none, on any error)."""
    with outputs(*output_paths(options.dump_tags)):
        _check_not_inputs(options)
        return _tag_files(options, annotators, progress)


def output_paths(output: str) -> List[str]:
    """Every file ``tag_files`` writes for the tags file ``output``."""
    return [output, summary_path(output), *annotation_paths(output).values()]


def _check_not_inputs(options: TagOptions) -> None:
    inputs = {
        "--src": options.src,
        "--tgt": options.tgt,
        "--docids": options.docids,
        "--src-conllu": options.src_conllu,
        "--tgt-conllu": options.tgt_conllu,
        "--alignments": options.alignments,
    }
    check_not_inputs({"--dump-tags": options.dump_tags, "its summary": summary_path(options.dump_tags)}, inputs)
    side = annotation_paths(options.dump_tags)
    check_not_inputs({"its .ellipsis": side["ellipsis"]}, inputs)
    # a side file may be the very annotation it stores again (tagging from them in place)
    for kind, flag in (("src_conllu", "--src-conllu"), ("tgt_conllu", "--tgt-conllu"), ("alignments", "--alignments")):
        check_not_inputs(
            {f"the {kind} written beside --dump-tags": side[kind]}, {k: v for k, v in inputs.items() if k != flag}
        )


def _tag_files(options: TagOptions, annotators: Optional[Annotator], progress: bool) -> Dict:
    clock = _StageClock()
    tagger = MudaTagger(options.tgt_lang, options.phenomena, options.settings)  # unknown language: fail before any work
    available = _available(options, tagger, annotators)
    skipped, warning = _skip_unannotated(tagger, available, annotators)
    text = _read_text(options)
    clock.done("read text")
    ann = _annotate(options, text, tagger.language.code, annotators)
    clock.done("annotations")
    # no alignments at all (no tagged phenomenon reads them): one empty alignment per pair
    ann.alignments = _align(options, text, ann, annotators) if ALIGNMENT in available else [set() for _ in text.src]
    clock.done("alignment")
    ann.ellipsis = _ellipsis(ann.src, text.src, annotators)
    clock.done("ellipsis")
    docs = build_documents(
        text.ids,
        ann.src,
        ann.tgt,
        ann.alignments,
        ann.ellipsis,
        ann.mentions,
        options.src_conllu or "source annotations",
    )
    dump = tagger.tag(docs, progress=progress and len(docs) > 1000)
    clock.done("tagging")
    _write_outputs(
        options.dump_tags, dump, ann, [options.src_conllu, options.tgt_conllu, options.alignments], available
    )
    clock.done("writing")
    summary = {
        "output": options.dump_tags,
        "language": tagger.language.code,
        "phenomena": tagger.phenomena,
        **({"skipped": skipped} if skipped else {}),
        "settings": tagger.settings.to_json(),
        "src_sha256": text_hash(text.src),
        "tgt_sha256": text_hash(text.tgt),
        "documents": len(docs),
        "sentences": len(text.src),
        "tags": tag_counts(dump, tagger.phenomena),
        "seconds": {k: round(v, 4) for k, v in clock.seconds.items()},
    }
    atomic_write_text(summary_path(options.dump_tags), json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    # every input read and every output written: no warning above an input's or an output's error line
    _warn_once(warning, annotators)
    return summary


def _available(options: TagOptions, tagger: MudaTagger, annotators: Optional[Annotator]) -> FrozenSet[str]:
    """The annotations this run has (``muda.phenomena.requirements``): the pre-computed files' and
    what the annotators provide; annotators that do not say (stanza, the lexicon) provide every kind,
    and so does none at all (what is then missing is the error of ``_annotators``)."""
    provides = getattr(annotators, "provides", None)
    made = provides(tagger.language) if provides is not None else ALL
    return precomputed(options.src_conllu, options.tgt_conllu, options.alignments) | made


def _skip_unannotated(
    tagger: MudaTagger, available: FrozenSet[str], annotators: Optional[Annotator]
) -> Tuple[Dict, Optional[str]]:
    """Leave out the phenomena whose annotations this run lacks (one error when none is left);
    returns {phenomenon: missing annotations} and the warning saying what would enable them."""
    lacking = {p: required_annotations(p, tagger.language) - available for p in tagger.phenomena}
    skipped = {p: sorted(m) for p, m in lacking.items() if m}
    if not skipped:
        return {}, None
    missing = set().union(*lacking.values())
    enabling = getattr(annotators, "enabling", None)
    how = enabling(missing, tagger.language) if enabling else "give them pre-computed"
    if len(skipped) == len(tagger.phenomena):
        raise InputError(
            f"no phenomenon can be tagged here: {', '.join(skipped)} need {', '.join(sorted(missing))}; {how}",
            code=Code.MODEL,
        )
    tagger.phenomena = [p for p in tagger.phenomena if p not in skipped]
    return skipped, f"skipping {', '.join(skipped)} (no {', '.join(sorted(missing))}): {how}"


def _warn_once(line: Optional[str], annotators: Optional[Annotator]) -> None:
    warned = getattr(annotators, "warned", None)  # muda eval tags several files: say it once
    if line is not None and (warned is None or line not in warned):
        logger.warning(line)
        if warned is not None:
            warned.add(line)


def _read_text(options: TagOptions) -> _Text:
    text = _Text(read_lines(options.src), read_lines(options.tgt), read_docids(options.docids))
    if len(text.tgt) != len(text.src):
        raise InputError(
            f"{options.tgt_label}: has {len(text.tgt)} lines but {options.src} has {len(text.src)}",
            code=Code.LINE_COUNT,
        )
    if len(text.ids) != len(text.src):
        raise InputError(
            f"{options.docids}: has {len(text.ids)} lines but {options.src} has {len(text.src)}", code=Code.LINE_COUNT
        )
    return text


def _annotate(options: TagOptions, text: _Text, lang: str, annotators: Optional[Annotator]) -> _Annotations:
    """Both sides' morphology (and the source's coreference): pre-computed, or from the annotators."""
    mentions = None
    if options.src_conllu:
        src = read_conllu(options.src_conllu)
        check_annotations_match(src, text.src, options.src_conllu, options.src)
    else:
        src, mentions = _annotators(annotators).source(text.src, text.ids)
    if options.tgt_conllu:
        tgt = read_conllu(options.tgt_conllu)
        check_annotations_match(tgt, text.tgt, options.tgt_conllu, options.tgt_label, options.tgt_line_numbers)
    else:
        tgt = _annotators(annotators).target(text.tgt, lang)
    return _Annotations(src, tgt, mentions)


def _align(options: TagOptions, text: _Text, ann: _Annotations, annotators: Optional[Annotator]) -> List[Alignment]:
    if not options.alignments:
        return _annotators(annotators).align([s.forms for s in ann.src], [s.forms for s in ann.tgt])
    aligns = read_pharaoh(options.alignments)
    if len(aligns) != len(text.src):
        raise InputError(
            f"{options.alignments}: has {len(aligns)} lines but {options.src} has {len(text.src)}", code=Code.LINE_COUNT
        )
    check_alignment_ranges(
        aligns, [len(s.tokens) for s in ann.src], [len(s.tokens) for s in ann.tgt], options.alignments
    )
    return aligns


def _ellipsis(src: List[Sentence], lines: List[str], annotators: Optional[Annotator]) -> List[bool]:
    """The annotators' trained classifier when they have one, else the rule-based detector."""
    if annotators is not None and annotators.has_ellipsis_model:
        return annotators.ellipsis(src, lines)
    return detect_ellipsis(src)


def _write_outputs(
    output: str, dump: TagDump, ann: _Annotations, inputs: Sequence[Optional[str]], available: FrozenSet[str] = ALL
) -> None:
    """The tags, and beside them the annotations they were made from (to tag again without models).
    A side file that is the very input it would store (tagging from them in place) is left as
    the user gave it: rewritten, it would lose what our writer does not keep (comments, spacing).
    A source only tokenized, alignments not made, or ellipsis not detected are not written: given
    back as pre-computed files they would pass for a parse and alignments, all-zero ellipsis flags
    for "no ellipsis anywhere". One such file left by an earlier run is removed."""
    paths = annotation_paths(output)
    given = {os.path.realpath(p) for p in inputs if p}
    unmade = {
        k
        for k, need in (("src_conllu", SOURCE_PARSE), ("alignments", ALIGNMENT), ("ellipsis", ELLIPSIS_DETECTION))
        if need not in available
    }
    for kind in unmade:  # one from an earlier run would pass for this run's (eval reads them beside the tags)
        if os.path.realpath(paths[kind]) not in given and os.path.lexists(paths[kind]):
            os.remove(paths[kind])
    write_tags(output, dump)
    for kind, write in (
        ("src_conllu", lambda path: write_conllu(path, ann.src)),
        ("tgt_conllu", lambda path: write_conllu(path, ann.tgt)),
        ("alignments", lambda path: atomic_write_text(path, "".join(format_pharaoh(a) + "\n" for a in ann.alignments))),
    ):
        if os.path.realpath(paths[kind]) not in given and kind not in unmade:
            write(paths[kind])
    if "ellipsis" not in unmade:
        atomic_write_text(paths["ellipsis"], "".join(f"{int(e)}\n" for e in ann.ellipsis))


def _annotators(annotators: Optional[Annotator]) -> Annotator:
    if annotators is None:
        raise InputError(
            "no pre-computed annotations given (--src-conllu, --tgt-conllu, --alignments) and no "
            "annotator models configured: pass the CoNLL-U/Pharaoh files, or --stanza-dir and "
            "--align-model to annotate with models",
            code=Code.MODEL,
        )
    return annotators


def _stem(output: str) -> str:
    """OUT.json -> OUT: the files written beside the tags share it."""
    return output[:-5] if output.endswith(".json") else output


def summary_path(output: str) -> str:
    """The summary ``tag_files`` writes beside the tags file ``output``."""
    return _stem(output) + ".summary.json"


def read_summary(tags: str) -> Optional[Dict]:
    """The summary ``tag_files`` wrote beside the tags file ``tags``; None when there is none
    (tags from elsewhere, e.g. the original MuDA)."""
    path = summary_path(tags)
    if not output_exists(path):
        return None
    check_input_file(path, "summary file")
    text = read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(
            f"{path}: not a JSON file ({e}); it should be the summary `muda tag` wrote beside {tags}", code=Code.FORMAT
        ) from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: not a `muda tag` summary (expected a JSON object)", code=Code.FORMAT)
    return data


def skipped_phenomena(summary: Optional[Dict]) -> Dict[str, List[str]]:
    """The phenomena a summary of ``tag_files`` records as skipped (not tagged: the annotations
    they read were missing), with what they lacked; {} for none or no summary."""
    skipped = (summary or {}).get("skipped")
    if not isinstance(skipped, dict):
        return {}
    return {
        str(p): [str(m) for m in missing] if isinstance(missing, list) else [str(missing)]
        for p, missing in skipped.items()
    }


def annotation_paths(output: str) -> Dict[str, str]:
    """The annotations ``tag_files`` writes beside the tags file ``output``, by kind."""
    stem = _stem(output)
    return {
        k: stem + ext
        for k, ext in (
            ("src_conllu", ".src.conllu"),
            ("tgt_conllu", ".tgt.conllu"),
            ("alignments", ".align"),
            ("ellipsis", ".ellipsis"),
        )
    }


__all__ = [
    "MudaTagger",
    "TagOptions",
    "annotation_paths",
    "build_documents",
    "check_phenomena",
    "output_paths",
    "read_summary",
    "skipped_phenomena",
    "summary_path",
    "tag_files",
]
