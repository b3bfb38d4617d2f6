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

    def __post_init__(self) -> None:
        self.paths = eval_paths(self.lang, self.root)
        self.muda_tag_args = self.muda_tag_args or ""
        self.hyps = tuple(self.hyps or ()) or self.paths.translations
        if self.muda_args is None:
            self.muda_args = default_muda_args(self.paths, self.comet_model)
        owned = {
            "--muda-args": (
                "--src",
                "--ref",
                "--docids",
                "--tgt-lang",
                "--hyps",
                "--ref-tags",
                "--output",
                "--table",
                "--plot",
            ),
            "--muda-tag-args": ("--src", "--tgt", "--docids", "--tgt-lang", "--dump-tags"),
        }
        for flag, value in (("--muda-args", self.muda_args), ("--muda-tag-args", self.muda_tag_args)):
            # the stage sets these itself (the pair's files and language): given again, they would win
            set_by_stage(split_words(value, flag), flag, owned[flag])


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


def _arg_files(args: str, flag: str) -> Dict[str, Optional[str]]:
    """Content hashes of the files named in pass-through muda options (a lexicon's CoNLL-U and
    alignments, ...), so that changing one remakes the stage; model folders are named, not hashed."""
    return file_hashes({token: token for token in split_words(args, flag) if os.path.isfile(token)})


def _tag_step(muda: MudaEvalOptions):
    """The reference's ``muda tag``: its options, its fingerprint and its stage record."""
    p = muda.paths
    tags, pre = reference_tags(p), _annotations(p)
    inputs = {"src": p.test("en"), "tgt": p.test(p.target), "docids": p.test("docids")}
    fp = {
        **file_hashes({**inputs, **pre}),
        "lang": p.muda_lang,
        "args": muda.muda_tag_args,
        "arg_files": _arg_files(muda.muda_tag_args, "--muda-tag-args"),
        "version": project_version(),
    }
    options = muda_options(
        "tag",
        split_words(muda.muda_tag_args, "--muda-tag-args"),
        **inputs,
        tgt_lang=p.muda_lang,
        dump_tags=tags,
        **_given(pre),
    )
    return options, fp, StageRecord(record_path(p, "muda-tags"), "muda-tags")


def tag_reference(muda: MudaEvalOptions) -> str:
    tags = reference_tags(muda.paths)
    options, fp, record = _tag_step(muda)
    if record.current(fp):
        print(f"reference tags: {tags} (cached)")
        return tags
    _muda(options)
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
    stanza_dir, align_model = None, None
    if tag:
        t = _tag_step(muda)[0]
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
        e = muda_options(
            "eval",
            split_words(muda.muda_args, "--muda-args"),
            src="S",
            ref="R",
            docids="D",
            tgt_lang=p.muda_lang,
            hyps=list(muda.hyps),
            ref_tags="T",
        )
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


def run_muda_eval(muda: MudaEvalOptions) -> None:
    p = muda.paths
    check_inputs(muda)
    tags = reference_tags(p)
    folder = muda_folder(p)
    out = {
        "output": os.path.join(folder, "eval.json"),
        "table": os.path.join(folder, "eval.txt"),
        "plot": os.path.join(folder, "eval.png"),
    }
    src_conllu = _annotations(p)["src_conllu"]
    files = {
        "src": p.test("en"),
        "ref": p.test(p.target),
        "docids": p.test("docids"),
        "ref_tags": tags,
        "src_conllu": src_conllu,
    }

    def muda_eval_fingerprint() -> Dict:
        return {
            **file_hashes(files),
            "hyps": list(file_hashes({str(i): h for i, h in enumerate(muda.hyps)}).values()),
            "hyp_files": list(muda.hyps),
            "lang": p.muda_lang,
            "args": muda.muda_args,
            "arg_files": _arg_files(muda.muda_args, "--muda-args"),
            "version": project_version(),
        }

    record = StageRecord(record_path(p, "muda-eval"), "muda-eval")
    _, tag_fp, tag_record = _tag_step(muda)
    tag_cached = tag_record.current(tag_fp)
    # the models of the steps that will run, all checked before either runs
    check_models(muda, tag=not tag_cached, evaluate=not (tag_cached and record.current(muda_eval_fingerprint())))
    tag_reference(muda)
    fp = muda_eval_fingerprint()
    if record.current(fp):
        print(f"{out['output']}: up to date (made from these translations and reference tags)")
    else:
        _muda_eval_step(muda, files, tags, src_conllu, out)
        record.save(fp, list(out.values()))
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


def _muda_eval_step(muda: MudaEvalOptions, files: Dict, tags: str, src_conllu: Optional[str], out: Dict) -> None:
    p = muda.paths
    _muda(
        muda_options(
            "eval",
            split_words(muda.muda_args, "--muda-args"),
            src=files["src"],
            ref=files["ref"],
            docids=files["docids"],
            tgt_lang=p.muda_lang,
            hyps=list(muda.hyps),
            ref_tags=tags,
            **_given({"src_conllu": src_conllu}),
            output=out["output"],
            table=out["table"],
            plot=out["plot"],
        )
    )
