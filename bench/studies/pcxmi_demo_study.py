"""The demo proves P-CXMI: planted tokens stand out, and CoWord dropout raises CXMI.

Needs `make demo` first (its data, sentencepiece model and contextual model).

1. P-CXMI of the demo's contextual model on the test split, joined with the demo's gold tags
   (`contextual-mt report`): mean and ROC-AUC of planted tokens against all other tokens, for
   every planted token and for those that need context; tokens that only agree with an earlier
   planted token of the same sentence ("-agreement") are counted apart, since the target prefix
   already fixes them.
2. CoWord dropout: two more contextual models, identical to the demo's (target context 3,
   dynamic size, same epochs) but with CoWord dropout 0.0 and 0.2, for seeds 1 and 2; their
   corpus CXMI on the test split.

    .venv/bin/python -m bench.studies.pcxmi_demo_study --workdir demo --out bench/out/pcxmi_study
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench import harness
from contextual_mt.analysis.cxmi import CxmiOptions, run_cxmi
from contextual_mt.analysis.join import join, read_pcxmi, read_tags
from contextual_mt.analysis.report import run_report
from contextual_mt.analysis.tables import roc_auc
from contextual_mt.backends.fairseq.model import FairseqModelOptions
from contextual_mt.demo.pipeline import LANG, PRESET, demo_layout
from contextual_mt.pipeline.layout import PairLayout, demo_corpus
from contextual_mt.pipeline.train import TrainOptions, train_model


def planted_study(work: Path, out: Path) -> dict:
    data, corpus = Path(demo_layout(work).data), Path(demo_corpus(str(work)))
    pcxmi = out / "context.pcxmi.jsonl"
    if not pcxmi.exists():
        folders = demo_layout(work)
        run_cxmi(
            CxmiOptions(
                FairseqModelOptions(folders.checkpoint("context"), spm=folders.spm),
                str(data / "test.en"),
                str(data / "test.fr"),
                str(data / "test.docids"),
                str(pcxmi),
            )
        )
    run_report(
        str(pcxmi), str(out / "report"), conllu=str(corpus / "test.fr.conllu"), tags=str(corpus / "test.tags.json")
    )
    units = [u for s in join(read_pcxmi(str(pcxmi)), tags=read_tags(str(corpus / "test.tags.json"))) for u in s.units]
    other = [u.pcxmi for u in units if not u.tags]
    groups = {
        "all planted": [u.pcxmi for u in units if u.tags],
        "planted, needing context": [u.pcxmi for u in units if any("-agreement" not in t for t in u.tags)],
        "planted, agreement only": [u.pcxmi for u in units if u.tags and all("-agreement" in t for t in u.tags)],
    }
    for tag in sorted({t for u in units for t in u.tags}):
        groups[tag] = [u.pcxmi for u in units if tag in u.tags]
    return {
        "other": {"count": len(other), "mean": float(np.mean(other))},
        **{k: {"count": len(v), "mean": float(np.mean(v)), "auc": roc_auc(v, other)} for k, v in groups.items()},
    }


@dataclass(frozen=True)
class VariantFolders(PairLayout):
    """The demo's prepared data; the variant's checkpoints in ``save``."""

    save: str = ""

    def checkpoints(self, model: str) -> str:
        return self.save


def coword_study(work: Path, out: Path, epochs: int, rates, seeds) -> dict:
    results = {}
    data = Path(demo_layout(work).data)
    for seed, rate in ((s, r) for s in seeds for r in rates):
        name = f"coword{rate}" + (f"-seed{seed}" if seed != 1 else "")
        save = out / name
        # the demo's contextual model (the study's train stage, demo preset) with another rate and seed
        folders = VariantFolders(LANG, str(work), save=str(save))
        train_model(
            TrainOptions(
                LANG,
                "context",
                preset=PRESET,
                root=str(work),
                layout=folders,
                gpus=0,
                max_epoch=epochs,
                overrides=[f"task.coword_dropout={rate}", f"common.seed={seed}"],
            )
        )
        ckpt = Path(folders.checkpoint("context"))
        summary = run_cxmi(
            CxmiOptions(
                FairseqModelOptions(str(ckpt), spm=folders.spm),
                str(data / "test.en"),
                str(data / "test.fr"),
                str(data / "test.docids"),
                str(out / f"{name}.pcxmi.jsonl"),
            )
        )
        log = (save / "train.log").read_text()
        best = [line for line in log.splitlines() if "| valid on" in line or "| valid |" in line][-1]
        results[name] = {
            "coword_dropout": rate,
            "seed": seed,
            "cxmi": summary["cxmi"],
            "unit": summary["unit"],
            "last_valid": best.split("| valid ")[-1][:200],
        }
    return results


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", default="demo")
    ap.add_argument("--out", default="bench/out/pcxmi_study", help="folder of the study's files and results.json")
    ap.add_argument("--epochs", type=int, help="default: the demo's contextual model's (the demo preset's)")
    ap.add_argument("--rates", default="0.0,0.2")
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--skip-coword", action="store_true")
    harness.add_arguments(ap, repeats=None, json_alias=False)
    args = harness.parse(ap, argv)
    work, out = Path(args.workdir), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {"planted": planted_study(work, out)}
    print(json.dumps(results["planted"], indent=2))
    if not args.skip_coword:
        results["coword"] = coword_study(
            work, out, args.epochs, [float(r) for r in args.rates.split(",")], [int(s) for s in args.seeds.split(",")]
        )
        print(json.dumps(results["coword"], indent=2))
    harness.write_json(str(out / "results.json"), harness.finish(args, "studies.pcxmi_demo_study", results))


if __name__ == "__main__":
    main()
