"""``contextual-mt pipeline STAGE``: the argument parsers of the study's stages, each a thin
layer over its library call (argparse -> options object -> function of pipeline/). The stages
themselves (pipeline/) know nothing of argparse; ``make`` and submit.sh call these commands."""
from __future__ import annotations

import argparse
import sys
from typing import Any, Dict, List

from contextual_mt.inference.batching import MAX_TOKENS_HELP
from contextual_mt.pipeline.contrastive_stage import CONTRASTIVE_SYSTEMS, ContrastiveStageOptions, markdown, run_stage
from contextual_mt.pipeline.layout import eval_paths
from contextual_mt.errors import ContextualMTError
from contextual_mt.pipeline.make_names import in_make_words, make_usage_error, under_make
from contextual_mt.pipeline.muda_eval import MudaEvalOptions, run_muda_eval
from contextual_mt.pipeline.layout import DEMO, EvalPaths
from contextual_mt.pipeline.pcxmi import PcxmiStageOptions, ReportInputs, report_stage, run_pcxmi_stage
from contextual_mt.pipeline.data_plan import SPM_TYPES
from contextual_mt.pipeline.prepare import SPLITS, DataOptions, default_workers, prepare_data_steps
from contextual_mt.pipeline.presets import DEFAULT, PRESETS
from contextual_mt.pipeline.stages import format_plan, jobs
from contextual_mt.pipeline.study_table import TableOptions, build_table, format_markdown
from contextual_mt.pipeline.systems import (SYSTEMS, ScoreOptions, SystemsOptions, format_scores, score_systems,
                                            translate_systems)
from contextual_mt.pipeline.train import MODELS, TrainOptions, train_model


class StageParser(argparse.ArgumentParser):
    """A stage's parser: run by make, a bad option value is one line naming the Make variable
    (``error: SPM_VOCAB: invalid int value: 'x'``, exit 1) instead of a usage dump naming an
    option the user never typed."""

    def error(self, message: str):
        if under_make():
            print(f"error: {make_usage_error(message)}", file=sys.stderr)
            sys.exit(1)
        super().error(message)


def add_stage_parsers(commands: Any) -> None:
    """Every stage's subcommand, in the order of the study."""
    add_data_parser(commands)
    add_train_parser(commands)
    add_translate_score_parsers(commands)
    add_pcxmi_parsers(commands)
    add_attribute_parser(commands)
    add_testset_parser(commands)
    add_muda_eval_parser(commands)
    add_contrastive_parser(commands)
    add_table_parser(commands)
    add_plan_parser(commands)
    for parser in commands.choices.values():
        parser.set_defaults(func=_in_make_words(parser.get_default("func")))


def _in_make_words(func):
    """A stage's errors, under make, name the Make variables (BEAM, EPOCHS, ...) the user typed."""
    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except ContextualMTError as e:
            words = in_make_words(str(e))
            if words == str(e):
                raise
            raise ContextualMTError(words) from None
    return run


# ---------------------------------------------------------------- prepare.py
def _data(args: argparse.Namespace) -> int:
    options = DataOptions(lang=args.lang, output=args.output, ted=args.ted, iwslt=args.iwslt, text=args.text,
                          vocab_size=args.vocab_size, spm_type=args.spm_type,
                          character_coverage=args.character_coverage,
                          input_sentence_size=args.input_sentence_size, iwslt_dev=args.iwslt_dev,
                          iwslt_test=args.iwslt_test, workers=args.workers, overwrite=args.overwrite)
    summary, ran = prepare_data_steps(options, progress=not args.quiet)
    for split in SPLITS:
        s = summary["splits"][split]
        print(f"{split}: {s['documents']} documents, {s['sentences']} sentences ({s['dropped']} rows dropped), "
              + ", ".join(f"{lang} {n} tokens" for lang, n in s["tokens"].items()))
    what = (f"text splits, spm.model ({summary['spm']['pieces']} pieces), bin/ (dictionary "
            f"{summary['bin']['dictionary_size']}), summary.json")
    if ran:
        print(f"wrote {options.output}: {what}")
    else:
        print(f"{options.output}: up to date (made from these inputs and options): {what}")
    return 0


DATA_DESCRIPTION = """\
Prepare one language pair (en -> LANG) from one corpus. Writes into OUTPUT:
  {train,valid,test}.{en,LANG,docids}  detokenized text, one document id per line
  spm.model, spm.vocab                 a joint sentencepiece model (train.en + train.LANG)
  bin/                                 fairseq-preprocess --joined-dictionary output, the dictionaries
                                       holding every piece of spm.model, <brk> and <mask>, and
                                       {split}.en-LANG.docids
  summary.json                         counts per split, settings, fingerprint, seconds per step
Each step is renamed into place when complete; a re-run with the same inputs and options skips
the finished steps, one with other inputs or options is refused unless --overwrite."""


def add_data_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``data`` subcommand to ``subparsers`` (of ``contextual-mt pipeline``)."""
    p = subparsers.add_parser(
        "data", help="prepare one language pair: text splits, a joint sentencepiece model, fairseq-binarized data",
        description=DATA_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lang", required=True, help="target language code (the source is en), e.g. fr, de, pt-br")
    source = p.add_argument_group("input (exactly one)")
    source.add_argument("--ted", metavar="PATH", help="the TED talks corpus of Qi et al. 2018: ted_talks.tar.gz or "
                        "the folder it unpacks to (Moses-tokenized: detokenized with sacremoses)")
    source.add_argument("--iwslt", metavar="DIR", help="an IWSLT17 en-XX release folder (train.tags.* and "
                        "IWSLT17.TED.*.xml)")
    source.add_argument("--text", metavar="DIR", help="a folder with {train,valid,test}.{en,XX,docids}, used as is")
    p.add_argument("--output", required=True, metavar="DIR", help="folder to write (e.g. data/fr)")
    p.add_argument("--vocab-size", type=int, default=DataOptions.vocab_size,
                   help=f"sentencepiece pieces (default: {DataOptions.vocab_size})")
    p.add_argument("--spm-type", choices=SPM_TYPES, default=DataOptions.spm_type,
                   help=f"sentencepiece model type (default: {DataOptions.spm_type})")
    p.add_argument("--character-coverage", type=float,
                   help="sentencepiece character coverage (default: 0.9995 for ja/zh/ko, else 1.0)")
    p.add_argument("--input-sentence-size", type=int, default=DataOptions.input_sentence_size,
                   help="sentencepiece trains on a random sample of at most this many sentences "
                        f"(default: {DataOptions.input_sentence_size})")
    p.add_argument("--iwslt-dev", metavar="SETS", help="IWSLT set(s) for the valid split, comma-separated "
                   "(default: dev2010)")
    p.add_argument("--iwslt-test", metavar="SETS", help="IWSLT set(s) for the test split, comma-separated "
                   "(default: tst2015 if present, else the newest tst set)")
    p.add_argument("--workers", type=int, default=DataOptions.workers,
                   help=f"processes for detokenization, encoding and binarization (default: {default_workers()})")
    p.add_argument("--overwrite", action="store_true",
                   help="replace what OUTPUT holds (by default, a run with other inputs or options is refused, "
                        "and a run with the same ones skips the finished steps)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=_data, transaction=False)  # the stage writes and resumes step by step
    return p


# ---------------------------------------------------------------- train.py
def _train(args: argparse.Namespace) -> int:
    models = [args.model] if args.model else list(MODELS)
    options = [TrainOptions(args.lang, m, preset=args.preset, root=args.root, pretrained=args.pretrained,
                            gpus=args.gpus, fp16=args.fp16, max_epoch=args.max_epoch, max_update=args.max_update,
                            batch=args.batch, overrides=args.override, overwrite=args.overwrite, progress=not args.quiet)
               for m in models]  # every option checked before anything trains
    for o in options:
        record = train_model(o)
        print(f"{o.model} model: {o.layout.checkpoint(o.model)} ({record.get('num_updates', '?')} updates, "
              f"valid loss {record.get('valid_loss')})")
    return 0


def add_train_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("train", help="train the study's sentence-level and context models of a language pair")
    p.add_argument("--lang", required=True, help="target language (source: English)")
    p.add_argument("--model", choices=MODELS, help="default: both")
    p.add_argument("--preset", choices=sorted(PRESETS), default=DEFAULT,
                   help="; ".join(f"{p.name}: {p.about}" for p in PRESETS.values()).replace("%", "%%"))
    p.add_argument("--root", default=".", help="the folder holding data/, checkpoints/ and results/")
    p.add_argument("--pretrained", help="sentence-level checkpoint to fine-tune (--preset big)")
    p.add_argument("--gpus", type=int, help="default: every visible GPU; 0 = CPU")
    p.add_argument("--fp16", action=argparse.BooleanOptionalAction, default=None,
                   help="default: on GPUs with compute capability >= 7.0")
    p.add_argument("--max-epoch", type=int, help="default: the preset's (per model kind for the demo preset)")
    p.add_argument("--max-update", type=int)
    p.add_argument("--batch", default="auto", metavar="auto|preset|N",
                   help="tokens per update: auto (default; on a GPU as many as its memory holds, up to 8x the "
                        "preset's, with the learning rate and warm-up scaled; on CPU the preset's), preset (the "
                        "config's exact settings) or N tokens per update (scaled the same way); README 'Batch size'")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="extra Hydra override (repeatable), e.g. optimization.lr=[1e-3]")
    p.add_argument("--overwrite", action="store_true", help="discard checkpoints trained from other data or settings")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=_train, transaction=False)  # resumable: manages its own files
    return p


# ---------------------------------------------------------------- systems.py
def _translate(args: argparse.Namespace) -> int:
    out = translate_systems(SystemsOptions(args.lang, args.root, systems=args.systems, beam=args.beam,
                                           lenpen=args.lenpen, batch_size=args.batch_size,
                                           max_tokens=args.max_tokens, cpu=args.cpu, dtype=args.dtype,
                                           progress=not args.quiet))
    for system, path in out.items():
        print(f"{system}: {path}")
    return 0


def _score(args: argparse.Namespace) -> int:
    result = score_systems(ScoreOptions(args.lang, args.root, systems=args.systems, comet_model=args.comet_model,
                                        comet_batch_size=args.comet_batch_size))
    print(format_scores(result))
    return 0


def add_translate_score_parsers(sub) -> List[argparse.ArgumentParser]:
    p = sub.add_parser("translate", help="translate the test set with the sentence, context and context-gold systems")
    p.add_argument("--lang", required=True)
    p.add_argument("--root", default=".", help="the folder holding data/, checkpoints/ and results/")
    p.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    p.add_argument("--beam", type=int, default=5)
    p.add_argument("--lenpen", type=float, default=1.0)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--max-tokens", type=int, help=MAX_TOKENS_HELP)
    p.add_argument("--cpu", action="store_true")
    add_dtype_argument(p)
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=_translate, transaction=False)  # its own transaction, after the up-to-date check
    q = sub.add_parser("score", help="BLEU, chrF, d-BLEU (and COMET) of every system into results/xx/scores.json")
    q.add_argument("--lang", required=True)
    q.add_argument("--root", default=".")
    q.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    q.add_argument("--comet-model", help="COMET model name or checkpoint path (unbabel-comet)")
    q.add_argument("--comet-batch-size", type=int, default=16)
    q.set_defaults(func=_score, transaction=False)
    return [p, q]


def add_dtype_argument(p: argparse.ArgumentParser) -> None:
    """--dtype of the stages that run a model (make: DTYPE=); checked by the stage's options (one line)."""
    p.add_argument("--dtype", default="auto", metavar="{auto,float32,bfloat16,float16}",
                   help="the models' precision (log-probabilities are float32 in every case); default auto: float16 "
                   "on a GPU of compute capability >= 7.0, else float32; the outputs' records name it, and a run in "
                   "another dtype does not reuse them")


# ---------------------------------------------------------------- pcxmi.py
def demo_first(p: EvalPaths, needed: str) -> None:
    """The demo pair's inputs are the offline demo's outputs: it runs first when ``needed`` is not
    there yet (other pairs' stages only check their inputs)."""
    if p.pair == DEMO:
        from contextual_mt.demo.pipeline import run_demo_first

        run_demo_first(needed)


def _pcxmi(args: argparse.Namespace) -> int:
    options = PcxmiStageOptions(args.lang, args.root, shard=args.shard, merge_shards=args.merge_shards,
                                overwrite=args.overwrite, progress=not args.quiet, report=_report_inputs(args),
                                dtype=args.dtype)
    demo_first(options.paths, options.paths.checkpoint)
    run_pcxmi_stage(options)
    return 0


def _report_inputs(args: argparse.Namespace) -> ReportInputs:
    return ReportInputs(conllu=args.conllu, stanza=args.stanza, stanza_dir=args.stanza_dir, tags=args.tags)


def _report(args: argparse.Namespace) -> int:
    report_stage(eval_paths(args.lang, args.root), _report_inputs(args))
    return 0


def add_report_input_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("what the report joins P-CXMI with (make: REPORT_ARGS=\"...\"); by default "
                             "data/xx/test.xx.conllu and the MuDA tags of the reference when they are there")
    g.add_argument("--conllu", help="CoNLL-U of the test references: P-CXMI per POS class")
    g.add_argument("--stanza", action="store_true", help="annotate the test references with stanza (the target "
                   "language's model; cached in the report folder as annotations.conllu)")
    g.add_argument("--stanza-dir", help="stanza's model folder (with --stanza)")
    g.add_argument("--tags", help="MuDA tags of the test references (muda tag's JSON): P-CXMI per phenomenon")


def add_pair_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lang", help="target language (source: English); default: the demo pair (demo/, results/demo)")
    p.add_argument("--root", default=".", help="the folder holding data/, checkpoints/ and results/")


def add_pcxmi_parsers(sub) -> List[argparse.ArgumentParser]:
    p = sub.add_parser("pcxmi", help="P-CXMI of the test references with the context model, and its report")
    add_pair_options(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--shard", metavar="I/N", help="only shard I of N (1-based; no report): the Slurm array's task")
    g.add_argument("--merge-shards", metavar="N", help="join the N shards, then the report")
    p.add_argument("--overwrite", action="store_true", help="discard the records of an interrupted run made "
                   "from other inputs or settings (OUTPUT.partial)")
    add_dtype_argument(p)
    p.add_argument("--quiet", action="store_true")
    add_report_input_options(p)
    p.set_defaults(func=_pcxmi, transaction=False)  # each output is its own transaction
    q = sub.add_parser("report", help="the P-CXMI report (tables, plot, viewer) of results/xx/pcxmi.jsonl")
    add_pair_options(q)
    add_report_input_options(q)
    q.set_defaults(func=_report, transaction=False)
    return [p, q]


# ---------------------------------------------------------------- attribute_stage.py
def add_attribution_method_arguments(p: argparse.ArgumentParser) -> None:
    """How attribute selects tokens and attributes them: `contextual-mt attribute`'s options and
    `make attribute`'s ATTRIBUTE_ARGS (declared here, where the stage reads them)."""
    from contextual_mt.attribution.interface import CONTRASTS, METHODS
    from contextual_mt.attribution.run import METRICS, SCOPES, AttributeOptions
    from contextual_mt.attribution.selection import Rule

    rule = Rule()
    g = p.add_argument_group("context-sensitive tokens (CTI)")
    g.add_argument("--cti-metric", choices=METRICS, default=AttributeOptions.cti_metric,
                   help="what selects tokens: KL(p_C || p_A) of the next-token distributions, or P-CXMI "
                   "(both are written)")
    g.add_argument("--cti-std", type=float, help="λ: a token is selected when its score exceeds "
                   f"mean + λ·std over the run's tokens read with context (default {rule.std:g})")
    g.add_argument("--cti-top-k", type=int, help="instead: the k highest-scoring tokens of each sentence")
    g.add_argument("--cti-scope", choices=SCOPES, default=AttributeOptions.cti_scope,
                   help="the tokens whose mean and std set the threshold: the whole run (corpus, default) or "
                   "each sentence (sentence: as per-example tools such as Inseq's attribute-context)")
    g = p.add_argument_group("contextual cues (CCI)")
    g.add_argument("--method", choices=METHODS, default=AttributeOptions.method,
                   help="saliency: |gradient| of the input embedding; input_x_gradient: |embedding x gradient|; "
                   "attention: last decoder layer, mean over heads (no backward pass)")
    g.add_argument("--contrast", choices=CONTRASTS, default=AttributeOptions.contrast,
                   help="what is attributed: foil = log p_C(y) - log p_C(ỹ), ỹ the no-context prediction "
                   "(its second choice when it is y); logprob = log p_C(y)")
    g.add_argument("--cue-std", type=float, help="λ: a context token is a cue when its score "
                   f"exceeds mean + λ·std over the context tokens of that target token (default {rule.std:g})")
    g.add_argument("--cue-top-k", type=int, help="instead: the k highest-scoring context tokens")
    p.add_argument("--log-base", choices=["e", "2"], default=AttributeOptions.log_base,
                   help="units of P-CXMI and KL: e = nats (default), 2 = bits")


def attribution_method_options(args: argparse.Namespace) -> Dict[str, Any]:
    """The AttributeOptions fields of ``add_attribution_method_arguments``."""
    return dict(cti_metric=args.cti_metric, cti=_rule("cti", args.cti_std, args.cti_top_k), cti_scope=args.cti_scope,
                method=args.method, contrast=args.contrast, cci=_rule("cue", args.cue_std, args.cue_top_k),
                log_base=args.log_base)


def _rule(name: str, std, top_k):
    """The selection rule: λ (default 1) or top k, not both (one would be ignored)."""
    from contextual_mt.attribution.selection import Rule

    if std is not None and top_k is not None:
        raise ContextualMTError(f"give --{name}-std or --{name}-top-k, not both")
    return Rule(top_k=top_k) if top_k is not None else Rule(std if std is not None else Rule().std)


def _attribute(args: argparse.Namespace) -> int:
    import shlex

    from contextual_mt.pipeline.attribute_stage import AttributeStageOptions, attribute_options, run_attribute_stage

    name = "ATTRIBUTE_ARGS" if under_make() else "--attribute-args"

    class Refusing(argparse.ArgumentParser):
        def error(self, message: str):  # one line naming what the user typed, not a usage dump
            raise ContextualMTError(f"{name}: attribute refuses it: {message}")

    parser = Refusing(prog="attribute", add_help=False)
    add_attribution_method_arguments(parser)
    try:
        words = shlex.split(args.attribute_args or "")
    except ValueError as e:
        raise ContextualMTError(f"{name}: {e} ({args.attribute_args})") from None
    method = parser.parse_args(words)
    options = AttributeStageOptions(args.lang, args.root, attribution_method_options(method),
                                    overwrite=args.overwrite, progress=not args.quiet,
                                    dtype="auto" if args.dtype is None else args.dtype)
    attribute_options(options)  # checked before the demo runs
    demo_first(eval_paths(options.lang, options.root), eval_paths(options.lang, options.root).checkpoint)
    run_attribute_stage(options)
    return 0


def add_attribute_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("attribute", help="context attribution (CTI + CCI) of the test references with the "
                       "context model: results/xx/attribution.jsonl")
    add_pair_options(p)
    p.add_argument("--attribute-args", help="`contextual-mt attribute` method options, as one string (e.g. "
                   "\"--method input_x_gradient --cti-top-k 2\"; make: ATTRIBUTE_ARGS)")
    p.add_argument("--overwrite", action="store_true", help="discard the records of an interrupted run made "
                   "from other inputs or settings (OUTPUT.partial)")
    p.add_argument("--dtype", help="float32 (and auto, which is float32 here): the gradients of fairseq checkpoints "
                   "are computed in float32; half precision is refused (make: DTYPE)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=_attribute, transaction=False)  # attribute writes its own outputs atomically
    return p


# ---------------------------------------------------------------- testset_stage.py
def _testset(args: argparse.Namespace) -> int:
    from contextual_mt.pipeline.testset_stage import run_testset_stage

    run_testset_stage(args.lang, args.root, muda_tag_args=args.muda_tag_args or "")
    return 0


def add_testset_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("testset", help="contrastive test suites of the test split from the reference's MuDA tags "
                       "(results/xx/testset/)")
    add_pair_options(p)
    p.add_argument("--muda-tag-args", help="more `muda tag` options for tagging the reference, as one string")
    p.set_defaults(func=_testset, transaction=False)  # testset build writes its own outputs together
    return p


# ---------------------------------------------------------------- muda_eval.py
def _muda_eval(args: argparse.Namespace) -> int:
    paths = eval_paths(args.lang, args.root)
    demo_first(paths, paths.translations[-1])  # the demo's context model's translation
    run_muda_eval(MudaEvalOptions(args.lang, args.root, hyps=args.hyps or (), muda_args=args.muda_args,
                                  muda_tag_args=args.muda_tag_args or "", comet_model=args.comet_model))
    return 0


def add_muda_eval_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("muda-eval", help="MuDA evaluation of the translations (the reference tagged once)")
    add_pair_options(p)
    p.add_argument("--hyps", nargs="+", help="systems to compare, the first the baseline (default: the study's "
                   "translations)")
    p.add_argument("--muda-args", help="more `muda eval` options, as one string (default: the demo's lexicon, or "
                   "--comet-model)")
    p.add_argument("--muda-tag-args", help="more `muda tag` options for tagging the reference, as one string")
    p.add_argument("--comet-model", help="also COMET in `muda eval` (when --muda-args is not given)")
    p.set_defaults(func=_muda_eval, transaction=False)  # muda's commands run their own transactions
    return p


# ---------------------------------------------------------------- contrastive_stage.py
def _contrastive(args: argparse.Namespace) -> int:
    table = run_stage(ContrastiveStageOptions(args.lang, args.sets, args.root, systems=args.systems,
                                              batch_size=args.batch_size, cpu=args.cpu, progress=not args.quiet,
                                              dtype=args.dtype))
    print(markdown(table, args.systems))
    return 0


def add_contrastive_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("contrastive", help="accuracy of the sentence and context models on contrastive test sets")
    p.add_argument("--lang", required=True)
    p.add_argument("--root", default=".")
    p.add_argument("--sets", nargs="+", required=True, metavar="FORMAT:FILE[,CONTEXT_FILE...]")
    p.add_argument("--systems", nargs="+", default=list(CONTRASTIVE_SYSTEMS), choices=list(CONTRASTIVE_SYSTEMS))
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--cpu", action="store_true")
    add_dtype_argument(p)
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=_contrastive, transaction=False)  # one transaction per set and system, kept as each ends
    return p


# ---------------------------------------------------------------- study_table.py
def _table(args: argparse.Namespace) -> int:
    table = build_table(TableOptions(args.langs, args.results_dir, args.output_dir, args.alpha))
    print(format_markdown(table))
    print("wrote " + ", ".join(table["files"].values()))
    return 0


def add_table_parser(subparsers: Any) -> argparse.ArgumentParser:
    """The ``table`` subcommand (``contextual-mt pipeline table``)."""
    p = subparsers.add_parser("table", help="the cross-language results table (BLEU, COMET, word f-measure per "
                              "MuDA tag; significance against the sentence-level system)")
    p.add_argument("--langs", nargs="+", required=True, help="target languages, e.g. --langs de fr ja")
    p.add_argument("--results-dir", default="results",
                   help="where RESULTS/xx/muda/eval.json and RESULTS/xx/scores.json are (default: results)")
    p.add_argument("--output-dir", default=None,
                   help="where table.md, table.csv, table.json and table.png go (default: RESULTS_DIR/table, "
                        "i.e. results/table)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default: 0.05)")
    p.set_defaults(func=_table, output_dir_args=("output_dir",))
    return p


# ---------------------------------------------------------------- stages.py
def _plan(args: argparse.Namespace) -> int:
    print(format_plan(jobs(args.lang, args.root, args.shards, every=True), args.json))
    return 0


def add_plan_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("plan", help="print the job graph of a language pair (what recipes/slurm/submit.sh submits)")
    p.add_argument("--lang", required=True)
    p.add_argument("--root", default=".", help="the folder holding data/, checkpoints/ and results/")
    p.add_argument("--shards", type=int, default=4, help="tasks of the P-CXMI job array (default: 4)")
    p.add_argument("--json", action="store_true", help="one JSON object per job (default: one line of words)")
    # the plan does not depend on the preset; submit.sh passes PRESET here so that the presets
    # module, not the script, says which names exist
    p.add_argument("--preset", choices=sorted(PRESETS), help="check that the train jobs' preset exists (submit.sh's "
                   "PRESET); the plan is the same for every preset")
    p.set_defaults(func=_plan, transaction=False)
    return p
