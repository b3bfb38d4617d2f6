"""``contextual-mt`` command line: a thin layer over the library functions."""
from __future__ import annotations

import argparse
import dataclasses
import inspect
import logging
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

from contextual_mt.inference.batching import MAX_TOKENS_HELP
from muda.errors import configure_logging, console_run, install_excepthook, run_command
from contextual_mt.stage_record import partial_path
from muda.io import command_outputs


def _add_symbols(args: argparse.Namespace) -> int:
    from contextual_mt.symbols import add_context_symbols

    for path in args.dicts:
        added = add_context_symbols(path)
        print(f"{path}: " + (f"added {' '.join(added)}" if added else "already has the context symbols"))
    return 0


def _defaults(declared: Any) -> Dict[str, Any]:
    """The defaults of an options dataclass, or of a function's keyword arguments: declared there
    once, and read here for argparse."""
    if dataclasses.is_dataclass(declared):
        return {f.name: f.default for f in dataclasses.fields(declared) if f.default is not dataclasses.MISSING}
    return {name: q.default for name, q in inspect.signature(declared).parameters.items() if q.default is not q.empty}


HF_ONLY = ("hf_separator", "src_lang", "tgt_lang", "prompt_template", "device_map")
FAIRSEQ_ONLY = ("spm", "data")


def _model_options(args: argparse.Namespace):
    """A fairseq checkpoint (--path) or a Hugging Face model (--hf-model), the other's options refused."""
    from contextual_mt.errors import ContextualMTError

    if args.fp16:  # an alias: with another --dtype, which one was meant?
        if args.dtype not in (None, "float16"):
            raise ContextualMTError(f"--fp16 is --dtype float16: give one of them, not --fp16 with --dtype {args.dtype}")
        args.dtype = "float16"
    if args.path and args.hf_model:
        raise ContextualMTError("give one model: --path CHECKPOINT (fairseq) or --hf-model FOLDER_OR_NAME, not both")
    if not (args.path or args.hf_model):
        raise ContextualMTError("give the model: --path CHECKPOINT (fairseq) or --hf-model FOLDER_OR_NAME")
    flag = lambda name: "--" + name.replace("_", "-")  # noqa: E731
    if args.hf_model:
        from contextual_mt.hf.options import HFModelOptions

        given = [flag(n) for n in FAIRSEQ_ONLY if getattr(args, n, None) is not None]
        if given:
            raise ContextualMTError(f"{', '.join(given)}: for fairseq checkpoints only; --hf-model brings its tokenizer")
        if args.dtype == "auto":
            raise ContextualMTError("--dtype auto: for fairseq checkpoints only (--hf-model runs in float32 unless "
                                    "--dtype bfloat16 or float16 is given)")
        sizes = {k: 1 if getattr(args, k) is None else getattr(args, k)
                 for k in ("source_context_size", "target_context_size")}
        return HFModelOptions(args.hf_model, src_lang=args.src_lang, tgt_lang=args.tgt_lang,
                              separator=args.hf_separator if args.hf_separator is not None else " ",
                              prompt_template=args.prompt_template, dtype="float32" if args.dtype is None else args.dtype,
                              device_map=args.device_map, cpu=args.cpu, **sizes)
    given = [flag(n) for n in HF_ONLY if getattr(args, n, None) is not None]
    if given:
        raise ContextualMTError(f"{', '.join(given)}: for --hf-model only")
    from contextual_mt.inference.checkpoint import ModelOptions

    return ModelOptions(args.path, spm=args.spm, data=args.data, source_context_size=args.source_context_size,
                        target_context_size=args.target_context_size, cpu=args.cpu,
                        dtype="auto" if args.dtype is None else args.dtype)  # --dtype= (empty) is refused


def _add_model_arguments(p: argparse.ArgumentParser) -> None:
    """The model options of translate, cxmi and contrastive, declared once (read by ``_model_options``)."""
    g = p.add_argument_group("the model: a fairseq checkpoint (or --hf-model, below)")
    g.add_argument("--path", help="document_translation checkpoint")
    g.add_argument("--spm", help="sentencepiece model (default: the text is already tokenized as the model's)")
    g.add_argument("--data", help="directory with dict.*.txt (default: the checkpoint's directory, "
                   "then the training data directory)")
    g.add_argument("--source-context-size", type=int, help="default: as trained (--hf-model: 1); 0: no source context")
    g.add_argument("--target-context-size", type=int, help="default: as trained (--hf-model: 1); 0: no target context")
    p.add_argument("--cpu", action="store_true", help="do not use a GPU even if one is present")
    # not argparse choices: a bad value is one line (exit 1), checked by the model's options
    precision = p.add_argument_group("precision")
    precision.add_argument("--dtype", metavar="{auto,float32,bfloat16,float16}",
                           help="the model's weights and activations (log-probabilities are float32 in every "
                           "case); fairseq checkpoints: default auto, float16 on a GPU of compute capability >= 7.0, "
                           "else float32; --hf-model: default float32")
    precision.add_argument("--fp16", action="store_true", help="--dtype float16 (fairseq's --fp16 at generation)")
    _add_hf_arguments(p)


def _add_hf_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("Hugging Face models (instead of --path)")
    g.add_argument("--hf-model", metavar="FOLDER_OR_NAME", help="a seq2seq MT model (Marian, mBART-50, NLLB, M2M100) "
                   "or a decoder-only LM: a local folder or a name in the local Hugging Face cache")
    g.add_argument("--hf-separator", help="seq2seq: joins the context sentences and the current one (default: a space)")
    g.add_argument("--src-lang", help="language code of the tokenizer (mBART-50: en_XX, NLLB: eng_Latn, M2M100: en), "
                   "or a language name for prompt templates")
    g.add_argument("--tgt-lang", help="as --src-lang; also the >>xx<< token of multi-target Marian models")
    g.add_argument("--prompt-template", help="decoder-only: a JSON template file, 'plain' or 'chat' (default: the "
                   "tokenizer's chat template if it has one, else 'plain')")
    g.add_argument("--device-map", choices=("auto",), help="spread a model too large for one GPU over the GPUs")


def _translate(args: argparse.Namespace) -> int:
    from contextual_mt.inference.translate import DecodingOptions, TranslateOptions, translate_files

    decoding = DecodingOptions(beam=args.beam, lenpen=args.lenpen, max_len_a=args.max_len_a,
                               max_len_b=args.max_len_b, batch_size=args.batch_size,
                               max_tokens=args.max_tokens, decoding=args.decoding, window=args.parallel_window)
    from contextual_mt.inference.model_spec import model_dtype

    model = _model_options(args)
    hyps = translate_files(TranslateOptions(
        model, args.source, args.docids, args.output,
        gold_target_context=args.gold_target_context, decoding=decoding, progress=not args.quiet))
    print(f"wrote {len(hyps)} lines to {args.output} (the model in {model_dtype(model)})", file=sys.stderr)
    return 0


def _score(args: argparse.Namespace) -> int:
    from contextual_mt.metrics import score_files, summary_line

    result = score_files(args.hyp, args.ref, docids=args.docids, source=args.source,
                         comet_model=args.comet_model, comet_batch_size=args.comet_batch_size,
                         output=args.output, doc_comet_context=args.doc_comet_context)
    print(summary_line(result))
    if args.output is None:
        import json

        print(json.dumps({k: v for k, v in result.items() if k != "files"}, indent=2))
    return 0


def _demo_data(args: argparse.Namespace) -> int:
    from contextual_mt.demo.corpus import generate_demo_data

    from contextual_mt.demo.contrastive_set import write_planted_contrastive

    stats = generate_demo_data(args.output, args.train_docs, args.valid_docs, args.test_docs, args.seed)
    for split, s in stats.items():
        print(f"{split}: {s['documents']} documents, {s['sentences']} sentences, planted: "
              + ", ".join(f"{p} {s[p]}" for p in ("pronouns", "formality", "lexical_choice")))
    contrastive = os.path.join(args.output, "test.contrastive.json")
    n = write_planted_contrastive(args.output, contrastive)
    print(f"contrastive set (Voita format): {contrastive}, {n} groups")
    if args.ted:
        from contextual_mt.demo.ted_layout import write_ted_layout

        tarball = os.path.join(args.output, "ted_talks.tar.gz")
        nulls = write_ted_layout(args.output, tarball, seed=args.seed)
        print(f"TED layout: {tarball} (missing-translation rows inserted: "
              + ", ".join(f"{split} {n}" for split, n in nulls.items()) + ")")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from contextual_mt.demo.pipeline import run_demo

    run_demo(args.workdir, args.train_docs, sentence_epochs=args.sentence_epochs,
             context_epochs=args.context_epochs)
    return 0


def _cadec_demo(args: argparse.Namespace) -> int:
    from contextual_mt.demo.cadec import run_cadec_demo

    run_cadec_demo(args.workdir, epochs=args.epochs, demo_first=args.demo_first)
    return 0


def _cxmi(args: argparse.Namespace) -> int:
    from contextual_mt.analysis.cxmi import CxmiOptions, run_cxmi
    from contextual_mt.analysis.cxmi_summary import summary_line

    summary = run_cxmi(CxmiOptions(
        _model_options(args), args.source, args.reference, args.docids, args.output, log_base=args.log_base,
        random_context=args.random_context, seed=args.seed, shard=args.shard, batch_size=args.batch_size,
        max_tokens=args.max_tokens, resume=not args.overwrite, progress=not args.quiet, skip_up_to_date=args.skip_up_to_date))
    print(summary_line(summary, args.output))
    return 0


def _attribute(args: argparse.Namespace) -> int:
    from contextual_mt.attribution.run import AttributeOptions, run_attribute, summary_line
    from contextual_mt.errors import ContextualMTError
    from contextual_mt.inference.decoding import DecodingOptions
    from contextual_mt.pipeline_cli import attribution_method_options

    if args.beam != _defaults(DecodingOptions)["beam"] and not args.translate:
        raise ContextualMTError("--beam goes with --translate (the translations attribute makes)")
    summary = run_attribute(AttributeOptions(
        _model_options(args), args.source, args.docids, args.output, reference=args.reference,
        hypotheses=args.hypotheses, translate=DecodingOptions(beam=args.beam) if args.translate else None,
        **attribution_method_options(args), shard=args.shard, batch_size=args.batch_size, max_tokens=args.max_tokens,
        resume=not args.overwrite, progress=not args.quiet))
    print(summary_line(summary, args.output))
    return 0


def _cxmi_side_outputs(args: argparse.Namespace) -> List[Tuple[str, str]]:
    """What cxmi writes or removes beside --output (an input may be none of them)."""
    from contextual_mt.analysis.cxmi_summary import summary_path

    return [("--output's summary", summary_path(args.output)), ("--output's .partial", partial_path(args.output))]


def _report_side_outputs(args: argparse.Namespace) -> List[Tuple[str, str]]:
    from contextual_mt.analysis.report import ATTRIBUTION_OUTPUTS, OUTPUTS

    return [(f"the report's {name}", os.path.join(args.output_dir, name))
            for name in (*OUTPUTS, *ATTRIBUTION_OUTPUTS, "annotations.conllu")]


def _cxmi_merge(args: argparse.Namespace) -> int:
    from contextual_mt.analysis.cxmi import merge_shards
    from contextual_mt.analysis.cxmi_summary import summary_line

    print(summary_line(merge_shards(args.shards, args.output), args.output))
    return 0


def _contrastive(args: argparse.Namespace) -> int:
    from contextual_mt.contrastive.run import (ContrastiveOptions, ScoresOptions, evaluate_scores, format_table,
                                               run_contrastive)
    from contextual_mt.errors import ContextualMTError

    if args.scores is not None:
        if args.path or args.hf_model or args.output:
            raise ContextualMTError("--scores evaluates existing scores: give it without --path/--hf-model and --output")
        summary = evaluate_scores(ScoresOptions(args.format, args.input, args.scores, args.summary,
                                                tuple(args.context_files or ()), maximize=args.maximize))
        print(format_table(summary))
        return 0
    if not ((args.path or args.hf_model) and args.output):
        raise ContextualMTError("give --path or --hf-model, and --output (score with a model), or --scores (evaluate "
                                "existing scores)")
    if args.maximize:
        raise ContextualMTError("--maximize applies to --scores only (this command writes losses: lower is better)")
    summary = run_contrastive(ContrastiveOptions(
        _model_options(args), args.format, args.input, args.output, args.summary,
        context_files=tuple(args.context_files or ()), normalize=args.normalize, detokenize=args.detokenize,
        batch_size=args.batch_size, max_tokens=args.max_tokens, resume=not args.overwrite,
        progress=not args.quiet))
    print(format_table(summary))
    print(f"scores: {args.output} (for: {summary['official_scorer']}); summary: {args.summary}")
    return 0


def _report(args: argparse.Namespace) -> int:
    from contextual_mt.analysis.report import ReportOptions, report_lines, run_report

    summary = run_report(ReportOptions(args.pcxmi, args.output_dir, conllu=args.conllu, stanza_lang=args.stanza_lang,
                                       stanza_dir=args.stanza_dir, tags=args.tags, lang=args.lang,
                                       min_count=args.min_count, top=args.top, attribution=args.attribution,
                                       top_pairs=args.top_pairs))
    print("\n".join(report_lines(summary, args.output_dir)))
    return 0


def _testset_build(args: argparse.Namespace) -> int:
    from contextual_mt.testsets.build import PHENOMENA, BuildOptions, run_build, summary_lines

    def options(tags: str) -> BuildOptions:
        return BuildOptions(args.source, args.reference, args.docids, tags, args.output_dir, args.lang,
                            tgt_conllu=args.tgt_conllu, src_conllu=args.src_conllu, alignments=args.alignments,
                            lexicon=tuple(args.lexicon or ()), context_size=args.context_size, seed=args.seed,
                            phenomena=tuple(args.phenomena or PHENOMENA))
    tags = args.tags
    if tags is None:
        tags = os.path.join(args.output_dir, "reference.tags.json")
        options(tags)  # the language and options are checked before anything is annotated
        _tag_reference(args, tags)
    summary = run_build(options(tags))
    print("\n".join(summary_lines(summary)))
    print(f"test suites: {args.output_dir} (voita.json, contrapro.json, manifest.jsonl, summary.json)")
    return 0


def _tag_reference(args: argparse.Namespace, tags: str) -> None:
    """``muda tag`` of the reference, in this process, into the output folder."""
    import shutil

    from contextual_mt.errors import ContextualMTError

    from muda.cli import main as muda_main

    given = [(flag, value) for flag, value in (("--src-conllu", args.src_conllu), ("--tgt-conllu", args.tgt_conllu),
                                                ("--alignments", args.alignments)) if value]
    argv = ["tag", "--src", args.source, "--tgt", args.reference, "--docids", args.docids, "--tgt-lang", args.lang,
            "--dump-tags", tags, "--annotator", args.annotator, *(x for pair in given for x in pair)]
    created = not os.path.exists(args.output_dir)
    try:
        os.makedirs(args.output_dir, exist_ok=True)
    except OSError as e:  # a file on the way (out/afile/sub)
        raise ContextualMTError(f"--output-dir {args.output_dir}: cannot be made ({e.strerror})") from None
    rc = muda_main(argv)
    if rc != 0:
        if created:
            shutil.rmtree(args.output_dir, ignore_errors=True)
        raise SystemExit(rc)


def _testset_evaluate(args: argparse.Namespace) -> int:
    from contextual_mt.testsets.evaluate import EvaluateOptions, evaluate_testset, format_table

    result = evaluate_testset(EvaluateOptions(args.manifest, tuple(args.hyp), summary=args.summary,
                                              docids=args.docids, output=args.output, bootstrap=args.bootstrap,
                                              seed=args.seed))
    print(format_table(result))
    if args.output:
        print(f"result: {args.output}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from contextual_mt.analysis.cxmi import CxmiOptions
    from contextual_mt.analysis.report import ReportOptions
    from contextual_mt.contrastive.run import ContrastiveOptions
    from contextual_mt.demo.corpus import generate_demo_data
    from contextual_mt.inference.decoding import DecodingOptions
    from contextual_mt.metrics import score_files

    parser = argparse.ArgumentParser(prog="contextual-mt", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser(
        "add-symbols",
        help="append <brk> and <mask> to fairseq dictionaries (indices of existing symbols unchanged)",
    )
    p.add_argument("dicts", nargs="+", help="dict.*.txt files written by fairseq-preprocess")
    p.set_defaults(func=_add_symbols, output_args=("dicts",))

    p = sub.add_parser("translate", help="translate documents, with the model's own previous "
                       "translations as target context")
    p.add_argument("--source", required=True, help="source text, one sentence per line")
    p.add_argument("--docids", required=True, help="document id of each line")
    p.add_argument("--output", required=True, help="translations, one line per source line")
    p.add_argument("--gold-target-context", metavar="REF",
                   help="use these references as target context instead of the model's translations")
    default = _defaults(DecodingOptions)
    p.add_argument("--beam", type=int, default=default["beam"])
    p.add_argument("--lenpen", type=float, default=default["lenpen"])
    p.add_argument("--max-len-a", type=float, default=default["max_len_a"])
    p.add_argument("--max-len-b", type=int, default=default["max_len_b"])
    p.add_argument("--batch-size", type=int, default=default["batch_size"],
                   help="sentences decoded together (with predicted context: one per document in a wave)")
    p.add_argument("--max-tokens", type=int, help=MAX_TOKENS_HELP)
    p.add_argument("--decoding", default=default["decoding"],
                   help="with predicted target context: 'sequential' (waves: the t-th sentence of every document "
                   "at once), 'parallel' (rounds of up to --parallel-window sentences per document, re-translating "
                   "those whose context changed; the same output), 'auto' (parallel on a GPU, sequential on CPU)")
    p.add_argument("--parallel-window", type=int, default=default["window"],
                   help="sentences per document a parallel round may translate")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_model_arguments(p)
    p.set_defaults(func=_translate, output_args=("output",))

    p = sub.add_parser("score", help="sacreBLEU BLEU and chrF, document-level BLEU, COMET and Doc-COMET")
    p.add_argument("--hyp", required=True, help="system output, one line per reference line")
    p.add_argument("--ref", required=True, help="references")
    p.add_argument("--docids", help="document ids: adds d-BLEU, and Doc-COMET with --comet-model")
    p.add_argument("--source", help="source sentences (needed by COMET)")
    p.add_argument("--comet-model", help="COMET model name or checkpoint path (unbabel-comet)")
    p.add_argument("--comet-batch-size", type=int, default=_defaults(score_files)["comet_batch_size"])
    p.add_argument("--doc-comet-context", type=int, default=_defaults(score_files)["doc_comet_context"],
                   help="Doc-COMET: preceding sentences of the same document encoded as context "
                   "(default: %(default)s, as in Vernikos et al. 2022)")
    p.add_argument("--output", help="write the full result as JSON here")
    p.set_defaults(func=_score, output_args=("output",))

    p = sub.add_parser("demo-data", help="write the synthetic EN-FR demo corpus with planted phenomena")
    p.add_argument("--output", required=True, help="directory")
    default = _defaults(generate_demo_data)
    p.add_argument("--train-docs", type=int, default=default["train_docs"])
    p.add_argument("--valid-docs", type=int, default=default["valid_docs"])
    p.add_argument("--test-docs", type=int, default=default["test_docs"])
    p.add_argument("--seed", type=int, default=default["seed"])
    p.add_argument("--ted", action="store_true", help="also write OUTPUT/ted_talks.tar.gz: the corpus in the "
                   "layout of the multilingual TED talks release, for `make all LANG=fr TED=...`")
    p.set_defaults(func=_demo_data, output_dir_args=("output",))

    p = sub.add_parser("cxmi", help="corpus CXMI and token-level P-CXMI of references, with one "
                       "model trained with dynamic context size")
    p.add_argument("--source", required=True, help="source text, one sentence per line")
    p.add_argument("--reference", required=True, help="the reference translation, line by line: what is scored")
    p.add_argument("--docids", required=True, help="document id of each line (a document: equal consecutive ids)")
    p.add_argument("--output", required=True, help="JSONL, one record per sentence (a .summary.json "
                   "is written beside it)")
    default = _defaults(CxmiOptions)
    p.add_argument("--log-base", choices=["e", "2"], default=default["log_base"], help="e: nats (default); 2: bits")
    p.add_argument("--random-context", action="store_true",
                   help="control: take the context from random other documents")
    p.add_argument("--seed", type=int, default=default["seed"])
    p.add_argument("--shard", help="i/n: score the i-th of n parts of the documents")
    p.add_argument("--batch-size", type=int, default=default["batch_size"], help="sentences per batch")
    p.add_argument("--max-tokens", type=int, help=MAX_TOKENS_HELP)
    p.add_argument("--overwrite", "--no-resume", dest="overwrite", action="store_true",
                   help="discard OUTPUT.partial (an interrupted run's records) instead of resuming from it")
    p.add_argument("--skip-up-to-date", action="store_true",
                   help="do nothing when OUTPUT and its summary were made from these inputs and options "
                   "(same content hashes); what `make pcxmi` uses")
    p.add_argument("--quiet", action="store_true")
    _add_model_arguments(p)
    p.set_defaults(func=_cxmi, output_args=("output",), side_outputs=_cxmi_side_outputs)

    _add_attribute_parser(sub)

    p = sub.add_parser("cxmi-merge", help="merge the outputs of `cxmi --shard i/n` runs")
    p.add_argument("shards", nargs="+", help="JSONL outputs of the shards")
    p.add_argument("--output", required=True)
    p.set_defaults(func=_cxmi_merge, output_args=("output",), side_outputs=_cxmi_side_outputs)

    p = sub.add_parser("contrastive", help="accuracy on a contrastive test set (Voita, Bawden, ContraPro, "
                       "SCAT): score every candidate and write the scores file the set's own scorer reads")
    p.add_argument("--format", required=True, help="voita | bawden | contrapro | scat")
    p.add_argument("--input", required=True, help="the test set (voita: *.json; bawden: anaphora.json or "
                   "lexical-choice.json; contrapro: contrapro.json; scat: see the README)")
    p.add_argument("--context-files", nargs="+", metavar="FILE",
                   help="contrapro: the text and context files of json2text_and_context.pl; bawden: the four "
                   "*.{prev,current}.{en,fr} files, to score their (preprocessed) text")
    p.add_argument("--output", help="scores file: one loss per candidate, in the order the set's scorer reads")
    p.add_argument("--scores", help="instead of a model: the accuracy of this scores file (one per candidate, in "
                   "the set's order; lower = better unless --maximize)")
    p.add_argument("--maximize", action="store_true", help="with --scores: higher scores are better")
    p.add_argument("--summary", required=True, help="JSON: accuracy overall and by category, and the settings")
    p.add_argument("--normalize", action="store_true", help="loss per token instead of the sentence's sum")
    default = _defaults(ContrastiveOptions)
    p.add_argument("--detokenize", choices=("auto", "yes", "no"), default=default["detokenize"],
                   help="sacremoses-detokenize a Moses-tokenized set (auto: when --spm is given)")
    p.add_argument("--batch-size", type=int, default=default["batch_size"], help="candidates per batch")
    p.add_argument("--max-tokens", type=int, help=MAX_TOKENS_HELP)
    p.add_argument("--overwrite", action="store_true", help="discard OUTPUT.partial instead of resuming from it")
    p.add_argument("--quiet", action="store_true")
    _add_model_arguments(p)
    p.set_defaults(func=_contrastive, output_args=("output", "summary"),
                   side_outputs=lambda a: [("--output's .partial", partial_path(a.output))] if a.output else [])

    p = sub.add_parser("report", help="tables, a plot and an HTML viewer of P-CXMI per POS class, "
                       "tag, vocabulary item and token")
    p.add_argument("pcxmi", help="JSONL written by `contextual-mt cxmi`")
    p.add_argument("--output-dir", required=True)
    p.add_argument("--conllu", help="CoNLL-U of the references (UPOS and FEATS), one sentence per line")
    p.add_argument("--stanza-lang", help="annotate the references with this stanza pipeline instead")
    p.add_argument("--stanza-dir", help="stanza resources directory (default: $STANZA_RESOURCES_DIR or "
                   "~/stanza_resources)")
    p.add_argument("--tags", help="MuDA tags JSON of the references (`muda tag --dump-tags`)")
    p.add_argument("--lang", help="the references' language: without --conllu/--stanza-lang/--tags, words are "
                   "split off their punctuation by its Moses rules (default: --stanza-lang, else generic rules)")
    default = _defaults(ReportOptions)
    p.add_argument("--min-count", type=int, default=default["min_count"],
                   help="vocabulary items seen fewer times are left out")
    p.add_argument("--top", type=int, default=default["top"], help="how many top tokens to list")
    p.add_argument("--attribution", help="JSONL of `contextual-mt attribute --reference` on the same sentences: "
                   "the viewer marks context-sensitive words and shows their cues; cue_pairs.csv and report.md "
                   "list the most frequent (target word, cue word) pairs per tag")
    p.add_argument("--top-pairs", type=int, default=default["top_pairs"],
                   help="(target word, cue word) pairs listed per tag in report.md (cue_pairs.csv has all)")
    p.set_defaults(func=_report, output_dir_args=("output_dir",), side_outputs=_report_side_outputs)

    p = sub.add_parser("demo", help="the offline demo: train a sentence-level and a contextual model "
                       "on the demo corpus and compare them on the planted phenomena")
    p.add_argument("--workdir", default="demo")
    p.add_argument("--train-docs", type=int, default=3000)
    p.add_argument("--sentence-epochs", type=int, help="default: the demo preset's")
    p.add_argument("--context-epochs", type=int, help="default: the demo preset's")
    p.set_defaults(func=_demo, transaction=False)  # resumes step by step

    p = sub.add_parser("cadec-demo", help="after the demo: train CADec on its sentence-level model and compare "
                       "the two-pass translations with the base model's")
    p.add_argument("--workdir", default="demo")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--demo-first", action="store_true", help="run the demo first when its sentence-level model "
                   "is not there yet (make cadec-demo); without it, that is an error")
    p.set_defaults(func=_cadec_demo, transaction=False)  # resumes step by step

    _add_testset_parsers(sub)
    add_pipeline_parsers(sub)
    return parser


def _add_testset_parsers(sub) -> None:
    """``contextual-mt testset build|evaluate``: test suites from MuDA tags."""
    from contextual_mt.testsets.evaluate import EvaluateOptions

    p = sub.add_parser("testset", help="test suites for any language pair from MuDA tags: contrastive groups and "
                       "the generative evaluation of a system's translations")
    testset = p.add_subparsers(dest="testset_command", required=True)

    from contextual_mt.testsets.build import PHENOMENA, BuildOptions

    default = _defaults(BuildOptions)
    b = testset.add_parser("build", help="contrastive groups from the MuDA tags of a parallel document corpus: the "
                           "reference and its variants (the tagged word replaced by its alternatives, agreement "
                           "kept), in Voita's and ContraPro's formats, with a manifest")
    b.add_argument("--source", required=True, help="English source, one sentence per line")
    b.add_argument("--reference", required=True, help="the reference translation, line by line")
    b.add_argument("--docids", required=True, help="document id of each line")
    b.add_argument("--lang", required=True, help="target language (MuDA's code: fr, de, ...)")
    b.add_argument("--output-dir", required=True, help="folder for voita.json, contrapro.json (+ text and context "
                   "files), manifest.jsonl and summary.json")
    b.add_argument("--tags", help="`muda tag` output for these files (its annotations beside it); default: tag the "
                   "reference now (into OUTPUT_DIR/reference.tags.json) with --annotator")
    b.add_argument("--annotator", choices=("stanza", "spacy"), default="stanza",
                   help="without --tags: what annotates the reference (spacy: target morphology only, so pronouns "
                   "and lexical cohesion need --src-conllu/--alignments)")
    b.add_argument("--tgt-conllu", help="the reference's CoNLL-U (default: beside the tags)")
    b.add_argument("--src-conllu", help="the source's CoNLL-U with CorefUD coreference (pronoun distances)")
    b.add_argument("--alignments", help="Pharaoh source-target word alignments (lexical cohesion)")
    b.add_argument("--lexicon", nargs="+", metavar="CONLLU", help="more target CoNLL-U (e.g. the training split) "
                   "where agreeing word forms are looked up")
    b.add_argument("--phenomena", nargs="+", choices=PHENOMENA, help="default: all")
    b.add_argument("--context-size", type=int, default=default["context_size"],
                   help="context sentences written with each group (default %(default)s, as Voita's sets)")
    b.add_argument("--seed", type=int, default=default["seed"], help="places the reference among the candidates")
    # tagging and building are two transactions (the tags are kept when the build fails: a cache)
    b.set_defaults(func=_testset_build, transaction=False)

    default = _defaults(EvaluateOptions)
    p = testset.add_parser("evaluate", help="for systems that cannot be scored (an API, an LLM, another toolkit): "
                           "does the tagged word's correct form, or a wrong alternative, appear in the translation "
                           "of its line; per phenomenon and context distance, with bootstrap intervals")
    p.add_argument("--manifest", required=True, help="manifest.jsonl written by `testset build`")
    p.add_argument("--hyp", required=True, action="append", metavar="SYSTEM.txt",
                   help="a system's translations of the test set, one line per line; repeat for several systems "
                   "(the first is the baseline of the comparisons)")
    p.add_argument("--summary", help="summary.json of `testset build` (default: beside the manifest): the "
                   "language and the test set's line count")
    p.add_argument("--docids", help="document ids of the test set: the documents resampled (default: the "
                   "manifest's 'doc' of each group)")
    p.add_argument("--output", help="write the full result as JSON here")
    p.add_argument("--bootstrap", type=int, default=default["bootstrap"],
                   help="resamples of documents for the 95%% intervals and the paired comparisons (0: none)")
    p.add_argument("--seed", type=int, default=default["seed"])
    p.set_defaults(func=_testset_evaluate, output_args=("output",))


def _add_attribute_parser(sub) -> None:
    from contextual_mt.attribution.run import AttributeOptions
    from contextual_mt.inference.decoding import DecodingOptions

    default = _defaults(AttributeOptions)
    p = sub.add_parser("attribute", help="context attribution: which target tokens depend on context (CTI: "
                       "P-CXMI / KL) and on which context tokens (CCI: gradients or attention), PECoRe batched")
    p.add_argument("--source", required=True, help="source text, one sentence per line")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--reference", help="reference translations: scored by forced decoding")
    target.add_argument("--hypotheses", help="the model's own translations (`contextual-mt translate`): scored, "
                        "and read as target context, as the model produced them")
    target.add_argument("--translate", action="store_true", help="translate the source first with the same model "
                        "(predicted target context, --beam), then attribute its translations")
    p.add_argument("--beam", type=int, default=_defaults(DecodingOptions)["beam"], help="with --translate")
    p.add_argument("--docids", required=True, help="document id of each line (a document: equal consecutive ids)")
    p.add_argument("--output", required=True, help="JSONL, one record per sentence (a .summary.json is written "
                   "beside it)")
    from contextual_mt.pipeline_cli import add_attribution_method_arguments

    add_attribution_method_arguments(p)
    p.add_argument("--shard", help="i/n: the i-th of n parts of the documents (with --cti-scope sentence or "
                   "--cti-top-k: the corpus threshold would be each shard's own)")
    p.add_argument("--batch-size", type=int, default=default["batch_size"], help="sentences per batch of records")
    p.add_argument("--max-tokens", type=int, help=MAX_TOKENS_HELP)
    p.add_argument("--overwrite", "--no-resume", dest="overwrite", action="store_true",
                   help="discard OUTPUT.partial (an interrupted run's records) instead of resuming from it")
    p.add_argument("--quiet", action="store_true")
    _add_model_arguments(p)
    p.set_defaults(func=_attribute, output_args=("output",), side_outputs=_cxmi_side_outputs)


def add_pipeline_parsers(sub) -> None:
    """``contextual-mt pipeline STAGE``: the per-language-pair study behind ``make data|train|...``
    (the stages are declared in ``pipeline/stages.py``)."""
    from contextual_mt.pipeline_cli import StageParser, add_stage_parsers

    p = sub.add_parser("pipeline", help="the per-language-pair study, stage by stage (what `make data LANG=xx`, "
                       "`make train`, `make translate`, `make score`, `make pcxmi`, `make muda-eval`, "
                       "`make contrastive` and `make table` run)")
    commands = p.add_subparsers(dest="stage", required=True, parser_class=StageParser)
    add_stage_parsers(commands)


def main(argv: Optional[List[str]] = None) -> int:
    install_excepthook()  # an InputError escaping a library call still prints one line
    parser = build_parser()
    args = parser.parse_args(argv)
    import warnings

    # fairseq's log set-up, made here because the commands import it late; warnings, whoever
    # logs them (muda's readers, fairseq), read "warning: ..."
    configure_logging(logging.INFO)
    # torch's deprecation notice about fairseq 0.12's attention masks, printed on every run
    warnings.filterwarnings("ignore", message="Support for mismatched key_padding_mask and attn_mask")
    # fairseq logs every dictionary load at INFO; keep the terminal for progress and results
    logging.getLogger("fairseq").setLevel(logging.WARNING)
    logging.getLogger("sacrebleu").setLevel(logging.ERROR if args.command == "demo" else logging.WARNING)
    return run_command(_memory_error_as_one_line(args.func), args, command_outputs(args, parser))


def _memory_error_as_one_line(func):
    """torch's allocation failures (CPU: "can't allocate memory", CUDA: "out of memory") are a
    setting too large for the machine, not a bug: one line saying which settings to lower."""
    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except (MemoryError, RuntimeError) as e:
            text = str(e)
            if not isinstance(e, MemoryError) and "out of memory" not in text and "allocate memory" not in text:
                raise
            from contextual_mt.errors import ContextualMTError

            first = next((line.strip() for line in text.splitlines() if "memory" in line), text)[:160]
            raise ContextualMTError(f"out of memory ({first or type(e).__name__}); lower --batch-size, --max-tokens "
                                    "or --beam, or use a larger machine") from None
    return run


def console() -> None:
    """The ``contextual-mt`` console script."""
    console_run(main)


if __name__ == "__main__":
    console()
