"""``make muda-eval``: MuDA's evaluation of the study's translations (``contextual-mt pipeline muda-eval``).

The reference is tagged once (``results/xx/muda/reference.tags.json``, ``muda tag``), then
``muda eval`` compares the systems (the first is the baseline) into ``muda/eval.{json,txt,png}``.
Both steps run through muda's own command functions, so their options (``--muda-args``,
``--muda-tag-args``: what MUDA_ARGS / MUDA_TAG_ARGS hold) mean what they mean for ``muda``; each
step is kept while its stage record says it was made from the same inputs and options.
"""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from contextual_mt.errors import ContextualMTError
from contextual_mt.pipeline.layout import DEMO, EvalPaths, eval_paths, muda_folder, reference_tags
from contextual_mt.pipeline.pcxmi import record_path
from contextual_mt.stage_record import StageRecord, file_hashes, project_version


def default_muda_args(p: EvalPaths, comet_model: Optional[str]) -> str:
    """The demo's lexicon (its data has an annotated training corpus); else COMET when asked for."""
    if p.pair == DEMO:
        return "--lexicon " + " ".join(os.path.join(p.data, f) for f in ("train.en.conllu", "train.fr.conllu",
                                                                          "train.align"))
    return f"--comet-model {shlex.quote(comet_model)}" if comet_model else ""


@dataclass
class MudaEvalOptions:
    lang: Optional[str]  # None: the demo pair
    root: str = "."
    hyps: Sequence[str] = ()  # default: the study's translations
    muda_args: Optional[str] = None  # more `muda eval` options, one string (default: default_muda_args)
    muda_tag_args: str = ""  # more `muda tag` options for tagging the reference
    comet_model: Optional[str] = None
    paths: EvalPaths = field(init=False)

    def __post_init__(self) -> None:
        self.paths = eval_paths(self.lang, self.root)
        self.hyps = tuple(self.hyps) or self.paths.translations
        if self.muda_args is None:
            self.muda_args = default_muda_args(self.paths, self.comet_model)
        for flag, value in (("--muda-args", self.muda_args), ("--muda-tag-args", self.muda_tag_args)):
            try:
                shlex.split(value)
            except ValueError as e:
                raise ContextualMTError(f"{flag} {value!r}: {e}") from None


def _muda(argv: List[str]) -> None:
    """``muda ARGV`` in this process; its error line is printed by muda, then this stage stops."""
    from muda.cli import build_parser
    from muda.errors import run_command
    from muda.io import command_outputs

    parser = build_parser()
    args = parser.parse_args(argv)
    rc = run_command(args.func, args, command_outputs(args, parser))
    if rc != 0:
        raise SystemExit(rc)


def check_inputs(o: MudaEvalOptions) -> None:
    p = o.paths
    for side in ("en", p.target, "docids"):
        if not os.path.isfile(p.test(side)):
            raise ContextualMTError(f"{p.test(side)} not found (README, 'make muda-eval')")
    for h in o.hyps:
        if not os.path.isfile(h):
            where = "" if p.pair == DEMO else f" LANG={p.pair}"
            raise ContextualMTError(f"{h} not found: translate the test set first ('make translate{where}'), or "
                                    "pass HYPS=\"...\" (README, 'make muda-eval')")


def _annotations(p: EvalPaths) -> Dict[str, Optional[str]]:
    return {"src_conllu": p.optional("test.en.conllu"), "tgt_conllu": p.optional(f"test.{p.target}.conllu"),
            "alignments": p.optional("test.align")}


def _flags(files: Dict[str, Optional[str]]) -> List[str]:
    out: List[str] = []
    for name, path in files.items():
        if path:
            out += ["--" + name.replace("_", "-"), path]
    return out


def _arg_files(args: str) -> Dict[str, Optional[str]]:
    """Content hashes of the files named in pass-through muda options (a lexicon's CoNLL-U and
    alignments, ...), so that changing one remakes the stage; model folders are named, not hashed."""
    return file_hashes({token: token for token in shlex.split(args) if os.path.isfile(token)})


def tag_reference(o: MudaEvalOptions) -> str:
    p = o.paths
    tags, pre = reference_tags(p), _annotations(p)
    inputs = {"src": p.test("en"), "tgt": p.test(p.target), "docids": p.test("docids")}
    fp = {**file_hashes({**inputs, **pre}), "lang": p.muda_lang, "args": o.muda_tag_args,
          "arg_files": _arg_files(o.muda_tag_args), "version": project_version()}
    record = StageRecord(record_path(p, "muda-tags"), "muda-tags")
    if record.current(fp):
        print(f"reference tags: {tags} (cached)")
        return tags
    _muda(["tag", "--src", inputs["src"], "--tgt", inputs["tgt"], "--docids", inputs["docids"],
           "--tgt-lang", p.muda_lang, "--dump-tags", tags, *_flags(pre), *shlex.split(o.muda_tag_args)])
    record.save(fp, [tags])
    return tags


def run_muda_eval(o: MudaEvalOptions) -> None:
    p = o.paths
    check_inputs(o)
    tags = tag_reference(o)
    folder = muda_folder(p)
    out = {"output": os.path.join(folder, "eval.json"), "table": os.path.join(folder, "eval.txt"),
           "plot": os.path.join(folder, "eval.png")}
    src_conllu = _annotations(p)["src_conllu"]
    files = {"src": p.test("en"), "ref": p.test(p.target), "docids": p.test("docids"), "ref_tags": tags,
             "src_conllu": src_conllu}
    fp = {**file_hashes(files), "hyps": [file_hashes({"h": h})["h"] for h in o.hyps], "hyp_files": list(o.hyps),
          "lang": p.muda_lang, "args": o.muda_args, "arg_files": _arg_files(o.muda_args),
          "version": project_version()}
    record = StageRecord(record_path(p, "muda-eval"), "muda-eval")
    if record.current(fp):
        print(f"{out['output']}: up to date (made from these translations and reference tags)")
        return
    _muda(["eval", "--src", files["src"], "--ref", files["ref"], "--docids", files["docids"],
           "--tgt-lang", p.muda_lang, "--hyps", *o.hyps, "--ref-tags", tags,
           *_flags({"src_conllu": src_conllu}), *shlex.split(o.muda_args),
           "--output", out["output"], "--table", out["table"], "--plot", out["plot"]])
    record.save(fp, list(out.values()))
