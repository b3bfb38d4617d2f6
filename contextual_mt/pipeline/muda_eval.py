"""``make muda-eval``: MuDA's evaluation of the study's translations (``contextual-mt pipeline muda-eval``).

The reference is tagged once (``results/xx/muda/reference.tags.json``, ``muda tag``), then
``muda eval`` compares the systems (the first is the baseline) into ``muda/eval.{json,txt,png}``.
Both steps run through muda's API (``muda.commands``) with muda's own options objects, so their
options (``--muda-args``, ``--muda-tag-args``: what MUDA_ARGS / MUDA_TAG_ARGS hold) mean what they
mean for ``muda``; each step is kept while its stage record says it was made from the same inputs
and options.
"""

from __future__ import annotations

import logging
import os
import shlex
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from commandkit.options import option
from contextual_mt.errors import Code, InputError
from contextual_mt.pipeline.layout import DEMO, EvalPaths, eval_paths, muda_folder, reference_tags, testset_folder
from contextual_mt.pipeline.make_names import parse_words, set_by_stage, split_words
from contextual_mt.pipeline.pcxmi import record_path
from contextual_mt.pipeline.stage_options import MUDA_TAG_ARGS_HELP, demo_lang_option, root_option
from contextual_mt.stage_record import StageRecord, file_hashes, project_version

logger = logging.getLogger(__name__)


def default_muda_args(p: EvalPaths, comet_model: Optional[str]) -> str:
    """The demo's lexicon (its data has an annotated training corpus); else COMET when asked for."""
    if p.pair == DEMO:
        return "--lexicon " + " ".join(
            os.path.join(p.annotations, f) for f in ("train.en.conllu", "train.fr.conllu", "train.align")
        )
    return f"--comet-model {shlex.quote(comet_model)}" if comet_model else ""


@dataclass
class MudaEvalOptions:
    lang: Optional[str] = demo_lang_option()  # None: the demo pair
    root: str = root_option()
    hyps: Sequence[str] = option(
        nargs="+", help="systems to compare, the first the baseline (default: the study's translations)"
    )
    # default: default_muda_args
    muda_args: str = option(
        help="more `muda eval` options, as one string (default: the demo's lexicon, or --comet-model)"
    )
    muda_tag_args: str = option(help=MUDA_TAG_ARGS_HELP)  # None: ""
    comet_model: Optional[str] = option(help="also COMET in `muda eval` (when --muda-args is not given)")
    paths: EvalPaths = field(init=False)
    # MUDA_TAG_ARGS / MUDA_ARGS as words, and ``muda tag`` / ``muda eval``'s options objects
    # (``TagOptions``, ``EvalOptions``) made from them and the pair's files: parsed once, here
    tag_words: List[str] = field(init=False)
    eval_words: List[str] = field(init=False)
    tag: Any = field(init=False)
    evaluate: Any = field(init=False)

    def __post_init__(self) -> None:
        self.paths = p = eval_paths(self.lang, self.root)
        self.muda_tag_args = self.muda_tag_args or ""
        self.hyps = tuple(self.hyps or ()) or p.translations
        if self.muda_args is None:
            self.muda_args = default_muda_args(p, self.comet_model)
        self.tag_words = split_words(self.muda_tag_args, "--muda-tag-args")
        self.eval_words = split_words(self.muda_args, "--muda-args")
        # the stage sets these itself (the pair's files and language): given again, they would win
        set_by_stage(self.tag_words, "--muda-tag-args", ("--src", "--tgt", "--docids", "--tgt-lang", "--dump-tags"))
        set_by_stage(
            self.eval_words,
            "--muda-args",
            ("--src", "--ref", "--docids", "--tgt-lang", "--hyps", "--ref-tags", "--output", "--table", "--plot"),
        )
        pre, folder = _annotations(p), muda_folder(p)
        self.tag = muda_options(
            "tag", self.tag_words, **tag_inputs(p), tgt_lang=p.muda_lang, dump_tags=reference_tags(p), **_given(pre)
        )
        self.evaluate = muda_options(
            "eval",
            self.eval_words,
            **eval_inputs(p),
            tgt_lang=p.muda_lang,
            hyps=list(self.hyps),
            **_given({"src_conllu": pre["src_conllu"]}),
            output=os.path.join(folder, "eval.json"),
            table=os.path.join(folder, "eval.txt"),
            plot=os.path.join(folder, "eval.png"),
        )


def tag_inputs(p: EvalPaths) -> Dict[str, str]:
    """The files ``muda tag`` tags: the pair's test set, its reference as the target."""
    return {"src": p.test("en"), "tgt": p.test(p.target), "docids": p.test("docids")}


def eval_inputs(p: EvalPaths) -> Dict[str, str]:
    """The files ``muda eval`` compares the systems on: the test set and the reference's tags."""
    return {"src": p.test("en"), "ref": p.test(p.target), "docids": p.test("docids"), "ref_tags": reference_tags(p)}


def _muda(options: Any) -> None:
    """A ``muda`` command in this process (``muda.commands.run``); its error stops this stage."""
    from muda.commands import run

    run(options)


def check_inputs(muda: MudaEvalOptions) -> None:
    p = muda.paths
    for side in ("en", p.target, "docids"):
        if not os.path.isfile(p.test(side)):
            raise InputError(
                f"{p.test(side)} not found (docs/reference/contextual-mt/pipeline/muda-eval.md)", code=Code.NOT_FOUND
            )
    for h in muda.hyps:
        if not os.path.isfile(h):
            where = "" if p.pair == DEMO else f" LANG={p.pair}"
            raise InputError(
                f"{h} not found: translate the test set first ('make translate{where}'), or "
                'pass HYPS="..." (docs/reference/contextual-mt/pipeline/muda-eval.md)',
                code=Code.NOT_FOUND,
            )


def _annotations(p: EvalPaths) -> Dict[str, Optional[str]]:
    return {
        "src_conllu": p.optional("test.en.conllu"),
        "tgt_conllu": p.optional(f"test.{p.target}.conllu"),
        "alignments": p.optional("test.align"),
    }


def _given(files: Dict[str, Optional[str]]) -> Dict[str, str]:
    return {name: path for name, path in files.items() if path}


def _arg_files(words: List[str]) -> Dict[str, Optional[str]]:
    """Content hashes of the files named in pass-through muda options (a lexicon's CoNLL-U and
    alignments, ...), so that changing one remakes the stage; model folders are named, not hashed."""
    return file_hashes({token: token for token in words if os.path.isfile(token)})


def tag_fingerprint(muda: MudaEvalOptions) -> Dict:
    """What the reference's tags are made from (their stage record's fingerprint): the files,
    MUDA_TAG_ARGS as typed and the files it names, the version."""
    p = muda.paths
    return {
        **file_hashes({**tag_inputs(p), **_annotations(p)}),
        "lang": p.muda_lang,
        "args": muda.muda_tag_args,
        "arg_files": _arg_files(muda.tag_words),
        "version": project_version(),
    }


def tag_reference(muda: MudaEvalOptions) -> str:
    tags = muda.tag.dump_tags
    record = StageRecord(record_path(muda.paths, "muda-tags"), "muda-tags")
    fp = tag_fingerprint(muda)
    if record.current(fp):
        print(f"reference tags: {tags} (cached)")
        return tags
    _muda(muda.tag)
    record.save(fp, [tags])
    return tags


def muda_options(command: str, words: List[str], **given: Any):
    """``muda COMMAND``'s options object (``TagOptions`` / ``EvalOptions``): the stage's own
    files and language ``given``, the rest from the user's ``words`` (MUDA_TAG_ARGS / MUDA_ARGS)."""
    from muda.commands import EvalOptions, TagOptions

    flag = "--muda-tag-args" if command == "tag" else "--muda-args"
    return parse_words({"tag": TagOptions, "eval": EvalOptions}[command], words, flag, f"muda {command}", **given)


def check_models(muda: MudaEvalOptions, tag: bool = True, evaluate: bool = True, target: str = "muda-eval") -> None:
    """Every model the steps still to run need (the reference's ``muda tag`` unless cached, the
    hypotheses' annotation in ``muda eval`` unless --lexicon or pre-computed), checked before either
    runs: one error listing all that are missing, with the command that gets them and the Make
    variables that give pre-computed annotations instead. ``target``: the make target that was run
    (``make testset`` tags the reference with this stage's own step), which the error names."""
    from muda.annotators.required_models import RequiredModel, missing_message, missing_models, required_models

    p = muda.paths
    needed: Dict[str, RequiredModel] = {}
    t, e = muda.tag, muda.evaluate
    stanza_dir, align_model = None, None
    if tag:
        stanza_dir, align_model = t.annotators.stanza_dir, t.annotators.align_model
        for m in required_models(
            p.muda_lang,
            t.phenomena,
            src_conllu=t.src_conllu,
            tgt_conllu=t.tgt_conllu,
            alignments=t.alignments,
            stanza_dir=stanza_dir,
            align_model=align_model,
        ):
            needed.setdefault(m.label, m)
    if evaluate:
        stanza_dir, align_model = stanza_dir or e.annotators.stanza_dir, align_model or e.annotators.align_model
        # the source side comes from the reference's tags (the CoNLL-U written beside them)
        for m in required_models(
            p.muda_lang,
            src_conllu="from the reference tags",
            tgt_conllu=e.hyp_conllu,
            alignments=e.hyp_alignments,
            stanza_dir=e.annotators.stanza_dir,
            align_model=e.annotators.align_model,
            lexicon=bool(e.lexicon),
        ):
            needed.setdefault(m.label, m)
    missing = missing_models(list(needed.values()))
    if not missing:
        return
    pre = (
        f"test.en.conllu, test.{p.target}.conllu, test.align in {p.annotations}, or "
        'MUDA_TAG_ARGS="--src-conllu FILE --tgt-conllu FILE --alignments FILE"'
    )
    if evaluate and any(m.name != "en" for m in missing):
        pre += ' with MUDA_ARGS="--lexicon SRC.conllu TGT.conllu ALIGN" for the systems'
    where = "" if p.pair == DEMO else f" LANG={p.pair}"
    raise InputError(
        missing_message(
            f"make {target}{where}",
            missing,
            p.muda_lang,
            stanza_dir,
            align_model or "bert-base-multilingual-cased",
            pre,
        ),
        code=Code.MODEL,
    )


def eval_fingerprint(muda: MudaEvalOptions) -> Dict:
    """What ``muda eval``'s outputs are made from (their stage record's fingerprint): the files
    (the test set, the reference's tags, the systems), MUDA_ARGS as typed and the files it names,
    the version."""
    p, e = muda.paths, muda.evaluate
    files = {**eval_inputs(p), "src_conllu": _annotations(p)["src_conllu"]}
    hyps = {f"hyp {i}": h for i, h in enumerate(muda.hyps)}
    hashes = file_hashes({**files, **hyps})  # the stage's files, hashed in one call
    return {
        **{name: hashes[name] for name in files},
        "hyps": [hashes[name] for name in hyps],
        "hyp_files": list(e.hyps),
        "lang": p.muda_lang,
        "args": muda.muda_args,
        "arg_files": _arg_files(muda.eval_words),
        "version": project_version(),
    }


def run_muda_eval(muda: MudaEvalOptions) -> None:
    p = muda.paths
    check_inputs(muda)
    e = muda.evaluate
    outputs = [e.output, e.table, e.plot]
    record = StageRecord(record_path(p, "muda-eval"), "muda-eval")
    tag_cached = StageRecord(record_path(p, "muda-tags"), "muda-tags").current(tag_fingerprint(muda))
    # the models of the steps that will run, all checked before either runs
    check_models(muda, tag=not tag_cached, evaluate=not (tag_cached and record.current(eval_fingerprint(muda))))
    tag_reference(muda)
    fp = eval_fingerprint(muda)
    if record.current(fp):
        print(f"{e.output}: up to date (made from these translations and reference tags)")
    else:
        _muda(e)
        record.save(fp, outputs)
    generative_testset(muda)


def generative_testset(muda: MudaEvalOptions) -> None:
    """With the pair's test suites (``make testset``): the generative evaluation of the same
    translations (``testset evaluate``) beside muda eval's, in ``muda/testset_eval.{json,txt}``."""
    from contextual_mt.testsets.evaluate import evaluate_on_suites

    p = muda.paths
    manifest = os.path.join(testset_folder(p.results), "manifest.jsonl")
    if not os.path.isfile(manifest):
        print(f"no test suites ({manifest}): 'make testset' adds their generative evaluation here")
        return
    folder = muda_folder(p)
    table = evaluate_on_suites(  # a document-level system output is aligned to the references
        manifest,
        muda.hyps,
        p.test(p.target),
        p.test("docids"),
        os.path.join(folder, "testset_eval.json"),
        os.path.join(folder, "testset_eval.txt"),
    )
    if table is None:
        logger.warning(
            "%s: made from another reference than %s; run 'make testset' again for its generative evaluation",
            manifest,
            p.test(p.target),
        )
        return
    print(f"generative evaluation on the test suites ({manifest}):\n{table}")
