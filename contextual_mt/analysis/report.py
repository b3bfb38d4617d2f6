"""``contextual-mt report``: turn P-CXMI records into tables, a plot and an HTML viewer."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Union

import numpy as np

from commandkit.errors import check_number
from commandkit.options import check_required, option
from commandkit.outputs import atomic_write_text, outputs
from contextual_mt.analysis import tables as T
from contextual_mt.analysis.cxmi_summary import read_summary
from contextual_mt.analysis.join import (
    SentenceRecord,
    join,
    moses_has_rules,
    read_attribution,
    read_pcxmi,
    read_tags,
    word_unit,
)
from contextual_mt.analysis.plot import plot_means
from contextual_mt.analysis.viewer import write_viewer
from contextual_mt.errors import Code, InputError, given
from contextual_mt.scored_corpus import summary_path
from muda.annotation import Sentence

OUTPUTS = (
    "report.md",
    "report.json",
    "pos.csv",
    "tags.csv",
    "vocabulary.csv",
    "top_tokens.csv",
    "pcxmi_by_class.png",
    "viewer.html",
)
ATTRIBUTION_OUTPUTS = ("cue_pairs.csv",)  # only with --attribution


def _stanza_annotations(records: List[Dict], lang: str, model_dir: Optional[str], output_dir: str) -> List[Sentence]:
    from muda.annotators.stanza_pipeline import MORPHOLOGY, StanzaAnnotator
    from muda.formats.conllu import write_conllu

    annotator = StanzaAnnotator(lang, model_dir=model_dir, processors=MORPHOLOGY)
    n = max(r["line"] for r in records)
    refs = [""] * n
    for r in records:
        refs[r["line"] - 1] = r["reference"]
    sentences = annotator.annotate(refs)
    # cached beside the report, to pass with --conllu next time
    write_conllu(os.path.join(output_dir, "annotations.conllu"), sentences)
    return sentences


logger = logging.getLogger(__name__)


@dataclass
class ReportOptions:
    """``contextual-mt report``: the P-CXMI records, where to write, and what to join them with.
    Validated when built, before anything is read."""

    pcxmi: str = option(positional=True, default="", help="JSONL written by `contextual-mt cxmi`")
    output_dir: str = option(required=True)
    conllu: Optional[str] = option(help="CoNLL-U of the references (UPOS and FEATS), one sentence per line")
    stanza_lang: Optional[str] = option(help="annotate the references with this stanza pipeline instead")
    stanza_dir: Optional[str] = option(
        help="stanza resources directory (default: $STANZA_RESOURCES_DIR or ~/stanza_resources)"
    )
    tags: Optional[str] = option(help="MuDA tags JSON of the references (`muda tag --dump-tags`)")
    lang: Optional[str] = option(
        help="the references' language: without --conllu/--stanza-lang/--tags, words are "
        "split off their punctuation by its Moses rules (default: --stanza-lang, else "
        "generic rules)"
    )
    min_count: int = option(default=5, help="vocabulary items seen fewer times are left out")
    top: int = option(default=50, help="how many top tokens to list")
    attribution: Optional[str] = option(
        help="JSONL of `contextual-mt attribute --reference` on the same sentences: "
        "the viewer marks context-sensitive words and shows their cues; cue_pairs.csv "
        "and report.md list the most frequent (target word, cue word) pairs per tag"
    )
    top_pairs: int = option(
        default=10,
        help="(target word, cue word) pairs listed per tag in report.md (cue_pairs.csv has all)",
    )

    def __post_init__(self) -> None:
        check_required(self)
        if self.conllu and self.stanza_lang:
            raise InputError("give either --conllu or --stanza-lang, not both", code=Code.OPTIONS_CONFLICT)
        check_number("--min-count", self.min_count, minimum=1, integer=True)
        check_number("--top", self.top, minimum=0, integer=True)
        check_number("--top-pairs", self.top_pairs, minimum=1, integer=True)
        if self.lang and not (self.conllu or self.stanza_lang or self.tags) and not moses_has_rules(self.lang):
            logger.warning(
                f"--lang {self.lang}: the Moses tokenizer (sacremoses) has no rules for {self.lang!r}; "
                "words are split off their punctuation by its default (English) rules"
            )


def run_report(options: Union[ReportOptions, str], output_dir: Optional[str] = None, **kwargs: Any) -> Dict:
    """Write the report files into the output directory (all of them, or none on failure);
    return the numbers of report.json. Takes ``ReportOptions``, or its fields as arguments."""
    o = (
        options
        if isinstance(options, ReportOptions)
        else ReportOptions(options, given(output_dir, "--output-dir"), **kwargs)
    )
    with outputs(directories=[o.output_dir]):
        summary = _run_report(o)
    if o.attribution is None:  # a table of an earlier run with --attribution would now be stale
        for name in ATTRIBUTION_OUTPUTS:
            if os.path.isfile(os.path.join(o.output_dir, name)):
                os.remove(os.path.join(o.output_dir, name))
    return summary


def report_lines(summary: Dict, output_dir: str) -> List[str]:
    """What ``contextual-mt report`` prints: the CXMI, where the report is, a line per tag, and the
    attribution's counts when given."""
    unit = summary["unit"]
    out = [
        f"CXMI {summary['cxmi']:.4f} {unit} per sentence; mean P-CXMI per word {summary['mean_word_pcxmi']:.4f} "
        f"{unit} over {summary['words']} words; report: {os.path.join(output_dir, 'report.md')}, "
        f"viewer: {os.path.join(output_dir, 'viewer.html')}"
    ]
    for row in summary["tag"]:
        auc = f", ROC-AUC vs no tag {row['auc']:.3f}" if row["auc"] is not None else ""
        out.append(f"  {row['key']:<20} {row['count']:>7} words, mean P-CXMI {row['mean']:.4f} {unit}{auc}")
    if "attribution" in summary:
        att = summary["attribution"]
        out.append(
            f"attribution: {att['selected_tokens']} context-sensitive tokens, {att['cues']} cues; "
            f"(target word, cue word) pairs: {os.path.join(output_dir, 'cue_pairs.csv')}"
        )
    return out


def _run_report(options: ReportOptions) -> Dict:
    pcxmi, output_dir, conllu, stanza_lang, tags = (
        options.pcxmi,
        options.output_dir,
        options.conllu,
        options.stanza_lang,
        options.tags,
    )
    records = read_pcxmi(pcxmi)
    # checked before anything slow (stanza) runs
    attribution = read_attribution(options.attribution, records, pcxmi) if options.attribution else None
    annotations = None
    if conllu:
        from muda.formats.conllu import read_conllu

        annotations = read_conllu(conllu)
    elif stanza_lang:
        annotations = _stanza_annotations(records, stanza_lang, options.stanza_dir, output_dir)
    tag_sentences = read_tags(tags) if tags else None
    annotations_name = conllu or (f"stanza {stanza_lang}" if stanza_lang else None)
    sentences = join(
        records,
        annotations,
        annotations_name or "annotations",
        tag_sentences,
        tags or "tags",
        lang=options.lang or stanza_lang,
    )
    meta_path = summary_path(pcxmi)
    meta = read_summary(meta_path) if os.path.exists(meta_path) else {}
    unit = meta.get("unit", "nats")
    values = [u.pcxmi for s in sentences for u in s.units]
    pos_rows = T.by_pos(sentences)
    tag_rows = T.by_tag(sentences) if tag_sentences is not None else []
    vocab_rows = T.by_vocabulary(sentences, options.min_count)
    tops = T.top_rows(sentences, options.top)
    summary = {
        "records": pcxmi,
        "unit": unit,
        "cxmi": float(np.mean([s.sentence_pcxmi for s in sentences])),
        # a word's P-CXMI is the sum over its subword tokens; EOS belongs to no word
        "mean_word_pcxmi": float(np.mean(values)) if values else 0.0,
        "sentences": len(sentences),
        "words": len(values),
        "word_unit": word_unit(
            annotations_name if annotations is not None else None,
            tags if tag_sentences is not None else None,
            options.lang or stanza_lang,
        ),
        "annotations": conllu or (f"stanza:{stanza_lang}" if stanza_lang else None),
        "tags": tags,
        "pos": [vars(r) for r in pos_rows],
        "tag": [vars(r) for r in tag_rows],
        "vocabulary_min_count": options.min_count,
        "vocabulary": [vars(r) for r in vocab_rows],
        "top_tokens": tops,
    }
    pairs = None
    if attribution is not None:
        pairs = T.cue_pairs(sentences, attribution, tagged=tag_sentences is not None)
        summary["attribution"] = _attribution_summary(
            options, given(options.attribution, "--attribution"), attribution, pairs
        )
    _write(output_dir, sentences, summary, pos_rows, tag_rows, vocab_rows, tops, attribution, pairs)
    return summary


def _attribution_summary(
    options: ReportOptions, records: str, attribution: Dict[int, Dict], pairs: List[T.PairRow]
) -> Dict:
    meta_path = summary_path(records)
    meta = read_summary(meta_path) if os.path.exists(meta_path) else {}
    return {
        "records": records,
        "cti": meta.get("cti"),
        "cci": meta.get("cci"),
        "selected_tokens": sum(len(a["selected"]) for a in attribution.values()),
        "cues": sum(len(a["cues"]) for a in attribution.values()),
        "top_pairs": options.top_pairs,
        "pairs": [vars(r) for r in T.top_pairs(pairs, options.top_pairs)],
    }


def _write(
    out: str,
    sentences: List[SentenceRecord],
    summary: Dict,
    pos_rows,
    tag_rows,
    vocab_rows,
    tops,
    attribution: Optional[Dict[int, Dict]] = None,
    pairs: Optional[List[T.PairRow]] = None,
) -> None:
    path = lambda name: os.path.join(out, name)  # noqa: E731
    unit = summary["unit"]
    md = [
        f"# P-CXMI report: {summary['records']}",
        "",
        f"- CXMI (mean over sentences of the sentence's P-CXMI): **{summary['cxmi']:.4f} {unit} per sentence**",
        f"- mean P-CXMI per word: {summary['mean_word_pcxmi']:.4f} {unit} (a word's P-CXMI is the sum over its "
        "subword tokens; the end-of-sentence token belongs to no word)",
        f"- words: {summary['word_unit']}",
        f"- {summary['sentences']} sentences, {summary['words']} words; "
        f"annotations: {summary['annotations'] or 'none'}; tags: {summary['tags'] or 'none'}",
        "",
        "![mean P-CXMI per class](pcxmi_by_class.png)",
        "",
    ]
    if "attribution" in summary:
        att = summary["attribution"]
        md[-3:-3] = [
            f"- attribution: {att['records']}: {att['selected_tokens']} context-sensitive tokens, "
            f"{att['cues']} cues (the viewer underlines the words; click one for its cues)"
        ]
    if pos_rows:
        md.append(T.rows_markdown(pos_rows, "Mean P-CXMI per POS class", "class"))
    if tag_rows:
        md.append(T.rows_markdown(tag_rows, "Mean P-CXMI per tag", "tag"))
    md.append(
        T.rows_markdown(
            vocab_rows, f"Mean P-CXMI per vocabulary item (count ≥ {summary['vocabulary_min_count']})", "item", limit=40
        )
    )
    md.append(T.top_markdown(tops))
    if pairs is not None:
        md.append(T.pairs_markdown(pairs, summary["attribution"]["top_pairs"]))
        atomic_write_text(path("cue_pairs.csv"), T.pairs_csv(pairs))
    atomic_write_text(path("pos.csv"), T.rows_csv(pos_rows, "class"))
    atomic_write_text(path("tags.csv"), T.rows_csv(tag_rows, "tag"))
    atomic_write_text(path("vocabulary.csv"), T.rows_csv(vocab_rows, "item"))
    atomic_write_text(path("top_tokens.csv"), T.top_csv(tops))
    plot_means(path("pcxmi_by_class.png"), pos_rows, tag_rows, unit)
    write_viewer(path("viewer.html"), sentences, summary, attribution)
    atomic_write_text(path("report.json"), json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(path("report.md"), "\n".join(md))
