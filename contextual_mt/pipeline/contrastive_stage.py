"""``make contrastive LANG=xx SETS="FORMAT:FILE[,CONTEXT_FILE...] ..."``: the study's models on
contrastive test sets.

Each set is scored by three systems: ``sentence`` (the sentence-level model), ``context`` (the
context model with its trained context sizes) and ``context-0`` (the context model at context
0/0, the ablation papers report). Outputs: ``results/xx/contrastive/SET.SYSTEM.{scores,json}``
(the scores file for the set's own scorer, and its summary) and ``summary.{json,md}``, the
accuracies side by side. A re-run scores only what is missing or made from other inputs.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Dict, Sequence, Tuple

from commandkit.options import option
from commandkit.outputs import atomic_write_text, outputs
from contextual_mt.errors import Code, InputError
from contextual_mt.inference.model_args import progress_option
from contextual_mt.pipeline.layout import PairLayout, require_data
from contextual_mt.pipeline.stage_options import dtype_option

# system -> (model, context sizes: None = as trained)
CONTRASTIVE_SYSTEMS = {"sentence": ("sentence", None), "context": ("context", None), "context-0": ("context", 0)}


def parse_set(spec: str) -> Tuple[str, str, Tuple[str, ...]]:
    """``FORMAT:FILE[,CONTEXT_FILE...]`` as (format, file, context files)."""
    from contextual_mt.contrastive.formats import get_format

    fmt, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise InputError(
            f"SETS entry {spec!r}: expected FORMAT:FILE[,CONTEXT_FILE...], e.g. "
            "voita:deixis_test.json or contrapro:contrapro.json,contrapro.text.en,...",
            code=Code.OPTION_VALUE,
        )
    get_format(fmt)
    files = rest.split(",")
    return fmt, files[0], tuple(files[1:])


@dataclass
class ContrastiveStageOptions:
    lang: str = option(required=True)
    sets: Sequence[str] = option(nargs="+", required=True, metavar="FORMAT:FILE[,CONTEXT_FILE...]", after="root")
    root: str = option(default=".")
    systems: Sequence[str] = option(nargs="+", default=list(CONTRASTIVE_SYSTEMS), choices=list(CONTRASTIVE_SYSTEMS))
    batch_size: int = option(default=64)
    cpu: bool = option(action="store_true", default=False)
    progress: bool = progress_option(after="detokenize")
    dtype: str = dtype_option()  # of the models (inference.precision); each set's fingerprint names it
    # contrastive.evaluate's: "no" where the pair's text is tokenized (the demo's)
    detokenize: str = option(
        choices=("auto", "yes", "no"),
        default="auto",
        help="sacremoses-detokenize Moses-tokenized sets (auto: yes; no where the pair's text "
        "is tokenized, as the demo's)",
    )

    def __post_init__(self) -> None:
        from contextual_mt.inference.precision import check_dtype

        check_dtype(self.dtype)
        self.layout = PairLayout(self.lang, self.root)
        if not self.sets:
            raise InputError(
                'SETS is empty: give the test sets, e.g. SETS="voita:deixis_test.json"', code=Code.OPTION_MISSING
            )
        self.parsed = [parse_set(s) for s in self.sets]
        names = [os.path.splitext(os.path.basename(f))[0] for _, f, _ in self.parsed]
        if len(set(names)) != len(names):
            raise InputError(
                f"SETS: two sets share a name ({', '.join(names)}); their outputs would collide",
                code=Code.OUTPUT_IS_INPUT,
            )
        unknown = [s for s in self.systems if s not in CONTRASTIVE_SYSTEMS]
        if unknown or not self.systems:
            raise InputError(f"--systems: expected some of {', '.join(CONTRASTIVE_SYSTEMS)}", code=Code.OPTION_VALUE)

    @property
    def folder(self) -> str:
        return os.path.join(self.layout.results, "contrastive")


def run_stage(options: ContrastiveStageOptions) -> Dict:
    """Score every set with every system (up-to-date ones are kept); returns the summary table."""
    from contextual_mt.backends.fairseq.model import FairseqModelOptions
    from contextual_mt.contrastive.evaluate import ContrastiveOptions, run_contrastive
    from contextual_mt.pipeline.systems import finished_checkpoint

    require_data(options.layout)
    checkpoints = {
        m: finished_checkpoint(options.layout, m)[0] for m in {CONTRASTIVE_SYSTEMS[s][0] for s in options.systems}
    }
    runs = []
    for fmt, path, context_files in options.parsed:
        name = os.path.splitext(os.path.basename(path))[0]
        for system in options.systems:
            model, size = CONTRASTIVE_SYSTEMS[system]
            stem = os.path.join(options.folder, f"{name}.{system}")
            runs.append(
                (
                    name,
                    system,
                    ContrastiveOptions(
                        FairseqModelOptions(
                            checkpoints[model],
                            spm=options.layout.spm,
                            data=options.layout.bin,
                            source_context_size=size,
                            target_context_size=size,
                            cpu=options.cpu,
                            dtype=options.dtype,
                        ),
                        fmt,
                        path,
                        stem + ".scores",
                        stem + ".json",
                        context_files=context_files,
                        batch_size=options.batch_size,
                        detokenize=options.detokenize,
                        progress=options.progress,
                        skip_up_to_date=True,
                    ),
                )
            )
    table: Dict[str, Dict] = {}
    for name, system, run in runs:
        summary = run_contrastive(run)
        table.setdefault(name, {"format": summary["format"], "groups": summary["groups"]})[system] = {
            "accuracy": summary["accuracy"],
            "by": {k: {v: r["accuracy"] for v, r in values.items()} for k, values in summary["by"].items()},
        }
    with outputs(os.path.join(options.folder, "summary.json"), os.path.join(options.folder, "summary.md")):
        atomic_write_text(os.path.join(options.folder, "summary.json"), json.dumps(table, indent=2) + "\n")
        atomic_write_text(os.path.join(options.folder, "summary.md"), markdown(table, options.systems))
    return table


def markdown(table: Dict, systems: Sequence[str]) -> str:
    head = "| set | format | groups | " + " | ".join(systems) + " |"
    rows = [head, "|" + "---|" * (3 + len(systems))]
    for name, r in table.items():
        rows.append(
            f"| {name} | {r['format']} | {r['groups']} | "
            + " | ".join(f"{r[s]['accuracy']:.3f}" for s in systems)
            + " |"
        )
    return "Contrastive accuracy (fraction of groups where the correct translation wins)\n\n" + "\n".join(rows) + "\n"
