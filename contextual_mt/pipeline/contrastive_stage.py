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

from commandkit.outputs import atomic_write_text, outputs
from contextual_mt.errors import ContextualMTError
from contextual_mt.pipeline.layout import PairLayout, require_data

# system -> (model, context sizes: None = as trained)
CONTRASTIVE_SYSTEMS = {"sentence": ("sentence", None), "context": ("context", None), "context-0": ("context", 0)}


def parse_set(spec: str) -> Tuple[str, str, Tuple[str, ...]]:
    """``FORMAT:FILE[,CONTEXT_FILE...]`` as (format, file, context files)."""
    from contextual_mt.contrastive.formats import get_format

    fmt, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ContextualMTError(
            f"SETS entry {spec!r}: expected FORMAT:FILE[,CONTEXT_FILE...], e.g. "
            "voita:deixis_test.json or contrapro:contrapro.json,contrapro.text.en,..."
        )
    get_format(fmt)
    files = rest.split(",")
    return fmt, files[0], tuple(files[1:])


@dataclass
class ContrastiveStageOptions:
    lang: str
    sets: Sequence[str]
    root: str = "."
    systems: Sequence[str] = tuple(CONTRASTIVE_SYSTEMS)
    batch_size: int = 64
    cpu: bool = False
    progress: bool = True
    dtype: str = "auto"  # of the models (inference.precision); each set's fingerprint names it
    detokenize: str = "auto"  # contrastive.evaluate's: "no" where the pair's text is tokenized (the demo's)

    def __post_init__(self) -> None:
        from contextual_mt.inference.precision import check_dtype

        check_dtype(self.dtype)
        self.layout = PairLayout(self.lang, self.root)
        if not self.sets:
            raise ContextualMTError('SETS is empty: give the test sets, e.g. SETS="voita:deixis_test.json"')
        self.parsed = [parse_set(s) for s in self.sets]
        names = [os.path.splitext(os.path.basename(f))[0] for _, f, _ in self.parsed]
        if len(set(names)) != len(names):
            raise ContextualMTError(f"SETS: two sets share a name ({', '.join(names)}); their outputs would collide")
        unknown = [s for s in self.systems if s not in CONTRASTIVE_SYSTEMS]
        if unknown or not self.systems:
            raise ContextualMTError(f"--systems: expected some of {', '.join(CONTRASTIVE_SYSTEMS)}")

    @property
    def folder(self) -> str:
        return os.path.join(self.layout.results, "contrastive")


def run_stage(options: ContrastiveStageOptions) -> Dict:
    """Score every set with every system (up-to-date ones are kept); returns the summary table."""
    from contextual_mt.backends.fairseq.model import FairseqModelOptions
    from contextual_mt.contrastive.evaluate import ContrastiveOptions, run_contrastive
    from contextual_mt.pipeline.systems import finished_checkpoint

    o = options
    require_data(o.layout)
    checkpoints = {m: finished_checkpoint(o.layout, m)[0] for m in {CONTRASTIVE_SYSTEMS[s][0] for s in o.systems}}
    runs = []
    for fmt, path, context_files in o.parsed:
        name = os.path.splitext(os.path.basename(path))[0]
        for system in o.systems:
            model, size = CONTRASTIVE_SYSTEMS[system]
            stem = os.path.join(o.folder, f"{name}.{system}")
            runs.append(
                (
                    name,
                    system,
                    ContrastiveOptions(
                        FairseqModelOptions(
                            checkpoints[model],
                            spm=o.layout.spm,
                            data=o.layout.bin,
                            source_context_size=size,
                            target_context_size=size,
                            cpu=o.cpu,
                            dtype=o.dtype,
                        ),
                        fmt,
                        path,
                        stem + ".scores",
                        stem + ".json",
                        context_files=context_files,
                        batch_size=o.batch_size,
                        detokenize=o.detokenize,
                        progress=o.progress,
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
    with outputs(os.path.join(o.folder, "summary.json"), os.path.join(o.folder, "summary.md")):
        atomic_write_text(os.path.join(o.folder, "summary.json"), json.dumps(table, indent=2) + "\n")
        atomic_write_text(os.path.join(o.folder, "summary.md"), markdown(table, o.systems))
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
