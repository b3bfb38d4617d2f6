"""The documentation's figures, example outputs and reference parts, made by a run or from the
code, never typed.

``docs/examples/run.json`` is the committed record of one run on a finished demo (``make demo``):
for each example, the commands as the documentation shows them and the lines they printed; beside
it, ``docs/examples/demo.json``, the demo's own results file (``demo/results/fr/demo.json``) of that
run. In README.md and the pages under docs/, a generated block sits between ``<!-- example:ID -->``
and ``<!-- /example:ID -->`` (an inline figure between ``<!-- figure:ID -->`` and
``<!-- /figure:ID -->``); the reference pages' usage and options sit between ``<!-- cli:PROG-SUB -->``
markers, the make targets between ``<!-- make:reference -->`` markers and the error codes between
``<!-- errors:codes -->`` markers, generated from the parsers, the Makefiles and the code
(docs/examples/reference.py). ``tests/test_documented_examples.py`` checks that
every block is what this script renders from the committed files and the code, and that every one
is shown somewhere, so a figure cannot be edited by hand or go stale against the record.

    make demo && python docs/examples/refresh.py --run     # run the examples, record, rewrite the pages
    python docs/examples/refresh.py --run ID ...           # run these examples again (the rest is kept)
    python docs/examples/refresh.py                        # rewrite the pages from the record and the code

What varies: the figures are those of one machine (the run names it: CPU, threads, versions).
On another CPU the demo's training sums in another order (other vector units), so its models and
every figure after them may differ in the last digits; on one machine, every run gives the same
figures (the demo preset fixes its training threads; tests/contextual_mt/pipeline/test_train_determinism.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import textwrap
import time
from typing import Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RUN = os.path.join(HERE, "run.json")
DEMO = os.path.join(HERE, "demo.json")
SUPPORTED = os.path.join(HERE, "supported_models.json")  # the model zoo's runs (docs/examples/supported_models.py)
README = os.path.join(ROOT, "README.md")
DOCS = os.path.join(ROOT, "docs")
DEMO_RESULTS = os.path.join("demo", "results", "fr", "demo.json")  # demo.pipeline.demo_results("demo")

D, C, R = "demo/data/fr", "demo/corpus", "demo/results/fr"  # the demo pair's data, its corpus, its results
CKPT = "demo/checkpoints/fr/context/checkpoint_best.pt"
MODEL = f"--path {CKPT} --spm {D}/spm.model"
TEST = f"--source {D}/test.en --reference {D}/test.fr --docids {D}/test.docids"

# id -> the commands, in the order they run (each may read what the ones before wrote), and the
# printed lines to show (``keep``: a regular expression; default all but progress bars and logs;
# ``show`` False: the commands alone; ``block`` False: no block, its printed lines feed a figure;
# ``render``: "bash" (the commands and, as comments, what they printed), "text" (the shown lines in a
# plain block) or "markdown" (the shown lines as they are: a table); ``exit``: the exit status the
# last command must have, default 0 (an example of an error); ``env``: variables the commands need,
# data from outside the project: set them to run it)
EXAMPLES: List[Dict] = [
    {
        "id": "translate",
        "commands": [
            f"contextual-mt translate {MODEL} \\\n    --source {D}/test.en --docids {D}/test.docids \\\n"
            "    --output demo/test.hyp.fr --beam 4"
        ],
    },
    {
        "id": "score",
        "commands": [
            f"contextual-mt score --hyp {R}/context.test.fr --ref {D}/test.fr --docids {D}/test.docids \\\n"
            "    --output demo/scores.json"
        ],
    },
    {"id": "cxmi", "commands": [f"contextual-mt cxmi {MODEL} \\\n    {TEST} \\\n    --output {R}/pcxmi.jsonl"]},
    {
        "id": "cxmi-random-context",
        "block": False,
        "commands": [  # a figure of the prose only
            f"contextual-mt cxmi {MODEL} \\\n    {TEST} \\\n    --random-context --output {R}/pcxmi.random.jsonl"
        ],
    },
    {
        "id": "report",
        "commands": [
            f"contextual-mt report {R}/pcxmi.jsonl --output-dir {R}/report \\\n"
            f"    --conllu {C}/test.fr.conllu --tags {C}/test.tags.json"
        ],
    },
    {
        "id": "attribute",
        "commands": [f"contextual-mt attribute {MODEL} \\\n    {TEST} \\\n    --output {R}/attribution.jsonl"],
    },
    {
        "id": "attribution-planted",
        "block": False,
        "commands": [  # figures of the prose only: docs/explanations/attribution.md
            "python -m bench.studies.attribution_planted --demo demo --methods saliency input_x_gradient attention"
        ],
    },
    {
        "id": "report-attribution",
        "keep": r"^attribution:",
        "commands": [
            f"contextual-mt report {R}/pcxmi.jsonl --output-dir {R}/report \\\n"
            f"    --conllu {C}/test.fr.conllu --tags {C}/test.tags.json \\\n    --attribution {R}/attribution.jsonl"
        ],
    },
    {
        "id": "testset",
        "commands": [
            "make testset          # the demo pair: its test split, tagged by muda-eval's cached step",
            f"contextual-mt contrastive --format voita --input {R}/testset/voita.json \\\n    {MODEL} \\\n"
            f"    --output {R}/testset/context.scores --summary {R}/testset/context.summary.json",
            f"contextual-mt contrastive --format voita --input {R}/testset/voita.json \\\n"
            f"    --path demo/checkpoints/fr/sentence/checkpoint_best.pt --spm {D}/spm.model \\\n"
            f"    --output {R}/testset/sentence.scores --summary {R}/testset/sentence.summary.json",
        ],
    },
    {
        "id": "testset-evaluate",
        "commands": [
            f"contextual-mt testset evaluate --manifest {R}/testset/manifest.jsonl \\\n"
            f"    --hyp {R}/sentence.test.fr --hyp {R}/context.test.fr \\\n"
            f"    --docids {D}/test.docids --output {R}/testset/evaluate.json"
        ],
    },
    # an external suite: a sample of ctxpro's French formality set (tests/fixtures/ctxpro), imported and
    # DeepL's output of it (ctxpro's paper/outputs) scored as ctxpro scores it (docs/explanations/external-suites.md)
    {
        "id": "testset-import",
        "commands": [
            "contextual-mt testset import --format ctxpro \\\n"
            "    --evalset tests/fixtures/ctxpro/mini.formality.opensubtitles.en-fr.test.json \\\n"
            "    --inputs tests/fixtures/ctxpro/mini.formality.opensubtitles.en-fr.test "
            "--output-dir demo/results/ctxpro-fr",
            "contextual-mt testset evaluate --manifest demo/results/ctxpro-fr/manifest.jsonl --bootstrap 0 \\\n"
            "    --hyp tests/fixtures/ctxpro/deepl.mini.formality.opensubtitles.en-fr.test.contexts",
        ],
    },
    # counterfactual context suites (docs/explanations/testsets.md): does the model follow the cue?
    {
        "id": "testset-counterfactual",
        "commands": [
            f"contextual-mt testset build {TEST} \\\n"
            f"    --lang fr --tags {R}/muda/reference.tags.json --lexicon {C}/train.fr.conllu \\\n"
            f"    --output-dir {R}/cues --counterfactual"
        ],
    },
    {
        "id": "testset-counterfactual-scores",
        "keep": r"^voita",
        "commands": [
            f"contextual-mt contrastive --format voita --input {R}/cues/counterfactual/voita.json \\\n"
            f"    --path demo/checkpoints/fr/{name}/checkpoint_best.pt --spm {D}/spm.model \\\n"
            f"    --output {R}/cues/{name}.scores --summary {R}/cues/{name}.summary.json"
            for name in ("context", "sentence")
        ],
    },
    {
        "id": "testset-cues",
        "commands": [
            f"contextual-mt testset cues --suite {R}/cues/counterfactual \\\n"
            f"    --contrastive {R}/cues/context.summary.json --contrastive {R}/cues/sentence.summary.json \\\n"
            f"    --output {R}/cues/cues.json --plot {R}/cues/cues.png"
        ],
    },
    {
        "id": "planted-contrastive",
        "commands": [
            f"contextual-mt contrastive --format voita --input {C}/test.contrastive.json \\\n"
            f"    {MODEL} --detokenize no \\\n    --output {R}/planted.scores --summary {R}/planted.json"
        ],
    },
    {
        "id": "muda-tag",
        "commands": [
            f"muda tag --src {D}/test.en --tgt {D}/test.fr --docids {D}/test.docids --tgt-lang fr \\\n"
            f"    --src-conllu {C}/test.en.conllu --tgt-conllu {C}/test.fr.conllu \\\n"
            f"    --alignments {C}/test.align --dump-tags {R}/muda/test.tags.json"
        ],
    },
    {
        "id": "muda-eval",
        "commands": [
            f"muda eval --src {D}/test.en --ref {D}/test.fr --docids {D}/test.docids --tgt-lang fr \\\n"
            f"    --hyps {R}/sentence.test.fr {R}/context.test.fr {R}/context-gold.test.fr \\\n"
            f"    --ref-tags {R}/muda/reference.tags.json --src-conllu {C}/test.en.conllu \\\n"
            f"    --lexicon {C}/train.en.conllu {C}/train.fr.conllu {C}/train.align \\\n"
            f"    --output {R}/muda/eval.json --table {R}/muda/eval.txt --plot {R}/muda/eval.png"
        ],
    },
    {"id": "cadec-demo", "commands": ["make cadec-demo"]},
    # whole-document output (docs/explanations/alignment.md): the context model's translations made
    # into documents with merged, split, dropped and added sentences, as an LLM writes them
    {
        "id": "align",
        "commands": [
            f"python docs/examples/document_output.py {R}/context.test.fr {D}/test.docids demo/context.documents.jsonl",
            "contextual-mt align --hyp-documents demo/context.documents.jsonl --docids demo/data/fr/test.docids \\\n"
            f"    --pivot {R}/sentence.test.fr --segmenter-lang fr \\\n"
            "    --output demo/context.aligned.fr --alignment demo/context.alignment.jsonl",
            'grep -m2 \'"link": "2-1"\' demo/context.alignment.jsonl',
        ],
    },
    {
        "id": "score-documents",
        "keep": r"^BLEU",
        "commands": [
            "contextual-mt score --hyp demo/context.documents.jsonl --ref demo/data/fr/test.fr \\\n"
            "    --docids demo/data/fr/test.docids --output demo/scores.documents.json"
        ],
    },
    # align against mweralign on real systems (docs/explanations/alignment.md's figures): WMT24's
    # English-German submissions (github.com/wmt-conference/wmt24-news-systems, its txt folder),
    # mweralign in its own environment, a lexical corpus for --pivot none; the JSON resumes
    {
        "id": "alignment-wmt",
        "block": False,
        "env": ["WMT24_TXT", "MWERALIGN", "WMT_LEXICAL"],
        "commands": [
            'python -m bench.alignment_wmt --wmt "$WMT24_TXT" --mweralign "$MWERALIGN" \\\n'
            '    --lexical-train "$WMT_LEXICAL.en" "$WMT_LEXICAL.de" --json bench/out/alignment_wmt.json'
        ],
    },
    # the study on the demo corpus in the TED release's layout (docs/tutorials/study.md)
    {
        "id": "ted-study",
        "show": False,
        "commands": [
            ".venv/bin/contextual-mt demo-data --output demo-ted --ted",
            "make all LANG=fr WORK=study TED=demo-ted/ted_talks.tar.gz SPM_VOCAB=1000 PRESET=tiny \\\n"
            '    MUDA_TAG_ARGS="--src-conllu demo-ted/test.en.conllu --tgt-conllu demo-ted/test.fr.conllu '
            '--alignments demo-ted/test.align" \\\n'
            '    MUDA_ARGS="--src-conllu demo-ted/test.en.conllu --lexicon demo-ted/train.en.conllu '
            'demo-ted/train.fr.conllu demo-ted/train.align"',
            "make table LANGS=fr WORK=study",
        ],
    },
    {
        "id": "ted-scores",
        "render": "text",
        "keep": r"^(system|sentence|context)\b",
        "commands": ["make score LANG=fr WORK=study"],
    },
    {"id": "ted-table", "render": "markdown", "keep": r"^\|", "commands": ["make table LANGS=fr WORK=study"]},
    # the reference pages' examples (docs/reference/): each command on the finished demo (demo/) or
    # the TED-layout study above (study/), whose stages are up to date, so they say so
    {
        "id": "add-symbols",
        "commands": [
            "cut -d' ' -f1,2 demo/data/fr/bin/dict.en.txt | grep -v '^<' > demo/dict.en.txt   # without them",
            "contextual-mt add-symbols demo/dict.en.txt",
            "contextual-mt add-symbols demo/dict.en.txt",
        ],
    },
    {"id": "demo-data", "commands": ["contextual-mt demo-data --output demo/corpus-again"]},
    {
        "id": "cxmi-merge",
        "commands": [
            f"contextual-mt cxmi {MODEL} \\\n    {TEST} \\\n    --shard {i}/2 --output {R}/shards/pcxmi.{i}.jsonl"
            for i in (0, 1)
        ]
        + [
            f"contextual-mt cxmi-merge {R}/shards/pcxmi.0.jsonl {R}/shards/pcxmi.1.jsonl \\\n"
            f"    --output {R}/shards/pcxmi.jsonl"
        ],
    },
    {
        "id": "testset-build",
        "commands": [
            f"contextual-mt testset build --source {D}/test.en --reference {D}/test.fr --docids {D}/test.docids \\\n"
            f"    --lang fr --tags {R}/muda/reference.tags.json --lexicon {C}/train.fr.conllu \\\n"
            f"    --output-dir {R}/testset-by-hand"
        ],
    },
    {"id": "pipeline-plan", "commands": ["contextual-mt pipeline plan --lang fr --root study"]},
    {
        "id": "pipeline-migrate",
        "commands": [
            "rm -rf /tmp/old-study && cp -r tests/fixtures/study_records /tmp/old-study    # an earlier version's",
            "contextual-mt pipeline migrate /tmp/old-study",
            "contextual-mt pipeline migrate /tmp/old-study    # again: nothing left to rewrite",
        ],
    },
    {
        "id": "pipeline-data",
        "commands": [
            "contextual-mt pipeline data --lang fr --output study/data/fr --ted demo-ted/ted_talks.tar.gz "
            "--vocab-size 1000"
        ],
    },
    {"id": "pipeline-train", "commands": ["contextual-mt pipeline train --lang fr --root study --preset tiny"]},
    {"id": "pipeline-translate", "commands": ["contextual-mt pipeline translate --lang fr --root study"]},
    {"id": "pipeline-score", "commands": ["contextual-mt pipeline score --lang fr --root study"]},
    {"id": "pipeline-pcxmi", "commands": ["contextual-mt pipeline pcxmi --lang fr --root study"]},
    {"id": "pipeline-report", "commands": ["contextual-mt pipeline report --lang fr --root study"]},
    {
        "id": "pipeline-table",
        "keep": r"^(\||wrote)",
        "commands": [
            "contextual-mt pipeline table --langs fr --results-dir study/results --output-dir study/results/table"
        ],
    },
    {"id": "pipeline-attribute", "commands": ["contextual-mt pipeline attribute    # the demo pair"]},
    {"id": "pipeline-testset", "commands": ["contextual-mt pipeline testset    # the demo pair"]},
    {"id": "pipeline-cues", "commands": ["contextual-mt pipeline cues    # the demo pair"]},
    {"id": "pipeline-muda-eval", "commands": ["contextual-mt pipeline muda-eval    # the demo pair"]},
    {
        "id": "pipeline-contrastive",
        "commands": [
            f"contextual-mt pipeline contrastive --lang fr --root demo --sets voita:{C}/test.contrastive.json"
        ],
    },
    # offline (this machine has no network), what the two commands that need it say
    {"id": "muda-download", "exit": 1, "commands": ["muda download --tgt-lang fr --stanza-dir stanza_resources"]},
    {
        "id": "muda-train-ellipsis",
        "exit": 1,
        "commands": ["muda train-ellipsis wsj_0001.mrg --base-model bert-base-cased --output ellipsis-model"],
    },
]
# a way through several examples, shown as one block (the README's): their commands in the order
# they run, each with its printed lines or without them (False: shown in full on another page)
WAYS: Dict[str, List[tuple]] = {
    "cues-way": [("testset-counterfactual", False), ("testset-counterfactual-scores", True), ("testset-cues", True)],
}
WIDTH = 112  # a shown line longer than this is folded, its continuation indented
_LOG = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \| [A-Z]+ \|")


def printed_lines(text: str) -> List[str]:
    """What stays on a terminal: the last state of each carriage-returned line, without progress
    bars and timestamped log lines."""
    lines = []
    for raw in text.splitlines():
        line = raw.split("\r")[-1].rstrip()
        if not line or _LOG.match(line) or re.search(r"\d+%\|", line) or line.startswith("[demo]"):
            continue
        lines.append(line)
    return lines


def run_examples(only: Sequence[str] = ()) -> Dict:
    """Run every example (``only``: those) on the finished demo (in the repository root, as the
    documentation's reader would); returns the record."""
    if not os.path.isfile(os.path.join(ROOT, DEMO_RESULTS)):
        raise SystemExit(f"error: {DEMO_RESULTS} not found: run `make demo` first")
    # stdout and stderr in one stream, in the order a terminal shows them; make without its echo
    env = dict(
        os.environ,
        PATH=os.path.join(ROOT, ".venv", "bin") + os.pathsep + os.environ.get("PATH", ""),
        COLUMNS="200",
        PYTHONUNBUFFERED="1",
        MAKEFLAGS="s",
    )
    record: Dict = {"machine": machine(), "examples": {}}
    chosen = [e for e in EXAMPLES if not only or e["id"] in only]
    for example in list(chosen):
        unset = [v for v in example.get("env", ()) if not os.environ.get(v)]
        if unset and only:
            raise SystemExit(
                f"error: example {example['id']} needs {', '.join(unset)} set (see its comment in EXAMPLES)"
            )
        if unset:  # the whole run after `make demo`: data from outside the project keeps its record
            print(f"note: example {example['id']} kept as recorded ({', '.join(unset)} not set)", file=sys.stderr)
            chosen.remove(example)
    for example in chosen:
        outputs, printed, start = [], [], time.time()
        load = LoadSampler()
        for command in example["commands"]:
            print(f"$ {command}", file=sys.stderr, flush=True)
            proc = subprocess.run(
                ["bash", "-c", command], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
            if proc.returncode != example.get("exit", 0):
                sys.stderr.write(proc.stdout)
                raise SystemExit(
                    f"error: example {example['id']} exited {proc.returncode}, not {example.get('exit', 0)}"
                )
            lines = printed_lines(proc.stdout)
            printed.append(lines)
            shown = [x for x in lines if re.search(example["keep"], x)] if example.get("keep") else lines
            outputs.append(shown if example.get("show", True) else [])
        record["examples"][example["id"]] = {
            "commands": example["commands"],
            "outputs": outputs,
            "printed": printed,
            "seconds": round(time.time() - start, 1),
            # what else ran: a time taken on a shared machine is read against it
            "load_average": load.stop(),
        }
    return record


class LoadSampler:
    """The mean one-minute load average over an example's run, sampled every few seconds."""

    def __init__(self, every: float = 5.0):
        import threading

        self.samples: List[float] = [os.getloadavg()[0]]
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, args=(every,), daemon=True)
        self.thread.start()

    def _sample(self, every: float) -> None:
        while not self.done.wait(every):
            self.samples.append(os.getloadavg()[0])

    def stop(self) -> float:
        self.done.set()
        self.thread.join()
        return round(sum(self.samples) / len(self.samples), 1)


def machine() -> Dict:
    import torch

    cpu = platform.machine()
    if os.path.isfile("/proc/cpuinfo"):
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        cpu = names[0] if names else cpu
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(), "torch": torch.__version__}


def render_example(entry: Dict, render: str = "bash") -> str:
    if render != "bash":
        lines = [x for shown in entry["outputs"] for x in shown]
        return "\n".join(lines) if render == "markdown" else "```\n" + "\n".join(lines) + "\n```"
    body = []
    for command, lines in zip(entry["commands"], entry["outputs"], strict=True):
        body.append(command)
        for line in lines:
            folded = textwrap.wrap(
                line, WIDTH - 2, subsequent_indent="  ", break_on_hyphens=False, drop_whitespace=True
            ) or [""]
            body += [f"# {x}" if x else "#" for x in folded]
    return "```bash\n" + "\n".join(body) + "\n```"


def render_demo_table(demo: Dict) -> str:
    sys.path.insert(0, ROOT)
    from contextual_mt.demo.pipeline import format_demo_table

    return "```\n" + format_demo_table(demo) + "\n```"


def printed_figure(run: Dict, example: str, pattern: str) -> str:
    """A number an example printed (``pattern``'s group), as printed; its output is recorded even
    where no page shows it."""
    for lines in run["examples"][example].get("printed", run["examples"][example]["outputs"]):
        for line in lines:
            m = re.search(pattern, line)
            if m:
                return m.group(1)
    raise SystemExit(f"error: docs/examples/run.json: example {example} printed no {pattern!r}")


def span(values: Sequence[float], digits: int = 0, scale: float = 100.0, unit: str = "%") -> str:
    """Figures of several runs as one: their range (low, an en dash, high), or the one value they share."""
    low, high = (f"{v * scale:.{digits}f}" for v in (min(values), max(values)))
    return f"{low}{unit}" if low == high else f"{low}\u2013{high}{unit}"


_STUDY_RUN = re.compile(r"^(\w+), CTI threshold per (\w+): [0-9.]+ s, (\d+) of (\d+) tokens selected")
_STUDY_ROW = re.compile(
    r"^\s+(\w+)\s+planted\s+(\d+)\s+CTI selected ([0-9.]+)\s+top cue planted ([0-9.]+) \(of selected [^)]*\), "
    r"in the cue sentence ([0-9.]+)\s+chance ([0-9.]+)(?:\s+precision ([0-9.]+))?$"
)


def attribution_study(run: Dict) -> Dict[tuple, Dict]:
    """What bench/studies/attribution_planted.py printed in the recorded run: per (method, CTI
    scope), the selected tokens and per phenomenon the planted tokens and the shares it found."""
    study: Dict[tuple, Dict] = {}
    current: Optional[Dict] = None
    for lines in run["examples"]["attribution-planted"]["printed"]:
        for line in lines:
            head, row = _STUDY_RUN.match(line), _STUDY_ROW.match(line)
            if head:
                current = study[(head.group(1), head.group(2))] = {"selected": int(head.group(3)), "rows": {}}
            elif row and current is not None:
                current["rows"][row.group(1)] = {
                    "planted": int(row.group(2)),
                    "selected": float(row.group(3)),
                    "top_cue": float(row.group(4)),
                    "cue_sentence": float(row.group(5)),
                    "precision": float(row.group(7)) if row.group(7) else None,
                }
    if not study:
        raise SystemExit("error: docs/examples/run.json: example attribution-planted printed no study")
    return study


def attribution_figures(run: Dict) -> Dict[str, str]:
    """The attribution page's figures on the planted tokens: the three methods with a CTI
    threshold per sentence, and the default run (saliency, one threshold for the corpus), which
    is the attribute example's: its selected tokens must be the example's."""
    study = attribution_study(run)
    sentence = [v["rows"] for (_, scope), v in study.items() if scope == "sentence"]
    corpus = study[("saliency", "corpus")]
    selected = printed_figure(run, "attribute", r" (\d+) of \d+ tokens context-sensitive")
    if int(selected) != corpus["selected"]:
        raise SystemExit(
            f"error: docs/examples/run.json: the attribution study selected {corpus['selected']} tokens, the "
            f"attribute example {selected}: run both again (refresh.py --run attribute attribution-planted)"
        )
    return {
        "attribution-planted": str(sentence[0]["all"]["planted"]),
        "attribution-sentence-selected": span([r["all"]["selected"] for r in sentence]),
        "attribution-pronouns-top-cue": span([r["pronouns"]["top_cue"] for r in sentence]),
        "attribution-formality-top-cue": span([r["formality"]["top_cue"] for r in sentence]),
        "attribution-lexical-cue-sentence": span([r["lexical_choice"]["cue_sentence"] for r in sentence]),
        "attribution-lexical-top-cue": span([r["lexical_choice"]["top_cue"] for r in sentence]),
        "attribution-corpus-precision": span([corpus["rows"]["all"]["precision"]], digits=1),
        "attribution-corpus-selected": selected,
        "attribution-corpus-pronouns": span([corpus["rows"]["pronouns"]["selected"]], digits=1),
    }


_WMT_TOOL = re.compile(  # a summary row: tool, exact, near, worst exact, BLEU - true, ..., CPU s
    r"^\| `(align|mweralign|align --pivot none)` \| ([0-9.]+) \| ([0-9.]+) \| [0-9.]+ "
    r"\| (-?[0-9.]+) \| .* \| ([0-9.]+) \|$"
)
_WMT_SYSTEM = re.compile(r"^\| ([^|]+) \| [0-9.]+ \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$")


def alignment_wmt_figures(run: Dict) -> Dict[str, str]:
    """The alignment page's figures on WMT24's systems: what bench/alignment_wmt.py printed (its
    summary rows per tool; per system, BLEU through each alignment minus through the true lines)."""
    lines = [x for printed in run["examples"]["alignment-wmt"]["printed"] for x in printed]
    tools = {m.group(1): m.groups()[1:] for m in map(_WMT_TOOL.match, lines) if m}
    systems = [m.groups() for m in map(_WMT_SYSTEM.match, lines) if m and m.group(1).strip() != "system"]
    if set(tools) != {"align", "mweralign", "align --pivot none"} or not systems:
        raise SystemExit("error: docs/examples/run.json: example alignment-wmt printed no summary table")

    def moved(cell: str) -> float:  # |BLEU - true| of a cell "exact / near / BLEU - true"
        return abs(float(cell.split("/")[2]))

    behind = sum(moved(a) > moved(m) for _, a, m, _ in systems)
    none_behind = sum(moved(n) > moved(m) for _, _, m, n in systems)
    (a_exact, a_near, a_bleu, a_cpu), (m_exact, m_near, m_bleu, m_cpu) = tools["align"], tools["mweralign"]
    minus = lambda v: v.replace("-", "\u2212")  # noqa: E731 (a minus sign)
    return {
        "wmt-systems": str(len(systems)),
        "wmt-align-exact": a_exact,
        "wmt-mweralign-exact": m_exact,
        "wmt-align-near": a_near,
        "wmt-mweralign-near": m_near,
        "wmt-align-bleu": minus(a_bleu),
        "wmt-mweralign-bleu": minus(m_bleu),
        "wmt-align-behind": str(behind),
        "wmt-none-behind": str(none_behind),
        "wmt-none-exact": tools["align --pivot none"][0],
        "wmt-none-bleu": minus(tools["align --pivot none"][2]),
        "wmt-cpu-ratio": f"{float(a_cpu) / float(m_cpu):.0f}",
    }


def figures(demo: Dict, run: Dict) -> Dict[str, str]:
    """The inline figures the prose of the README and the pages quotes."""
    context, contrastive = demo["context"], demo["contrastive"]
    cxmi = r"^CXMI (-?[0-9.]+) nats"
    mean = r"^\s*{} +\d+ words, mean P-CXMI (-?[0-9.]+) nats"  # a tag's line of the report
    roc_auc = r"^\s*{} +\d+ words, mean P-CXMI -?[0-9.]+ nats, ROC-AUC vs no tag ([0-9.]+)"
    planted = [
        float(printed_figure(run, "report", roc_auc.format(t))) for t in ("pronouns", "lexical_choice", "formality")
    ]
    return {
        **attribution_figures(run),
        **alignment_wmt_figures(run),
        "pcxmi-agreement": printed_figure(run, "report", mean.format("formality-agreement")).replace("-", "\u2212"),
        "pcxmi-planted-roc-auc": span(planted, digits=3, scale=1.0, unit=""),
        "cxmi": printed_figure(run, "cxmi", cxmi),
        "cxmi-random-context": printed_figure(run, "cxmi-random-context", cxmi).replace("-", "\u2212"),  # a minus sign
        "demo-minutes": f"{demo['seconds'] / 60:.1f} minutes",
        "ted-study-minutes": f"{run['examples']['ted-study']['seconds'] / 60:.0f} minutes",
        "ted-study-load": f"{run['examples']['ted-study'].get('load_average', 'not recorded')}",
        "demo-machine": f"{run['machine']['cores']} CPU cores",
        "demo-context-bleu": f"{context['bleu']:.2f}",
        "demo-sentence-bleu": f"{demo['sentence']['bleu']:.2f}",
        "demo-contrastive": f"{contrastive['context']['accuracy']:.3f}",
        "demo-contrastive-0": f"{contrastive['context-0']['accuracy']:.3f}",
    }


def blocks(run: Dict, demo: Dict, reference: bool = True) -> Dict[str, str]:
    """Every generated block and figure of the documentation, by marker id (``reference``: with the
    reference pages' parts, generated from the parsers and the Makefiles)."""
    blockless = {e["id"] for e in EXAMPLES if e.get("block") is False}
    render = {e["id"]: e.get("render", "bash") for e in EXAMPLES}
    out = {
        f"example:{k}": render_example(v, render.get(k, "bash"))
        for k, v in run["examples"].items()
        if k not in blockless
    }
    for way, steps in WAYS.items():
        entries = [(run["examples"][k], printed) for k, printed in steps]
        out[f"example:{way}"] = render_example(
            {
                "commands": [c for e, _ in entries for c in e["commands"]],
                "outputs": [lines if printed else [] for e, printed in entries for lines in e["outputs"]],
            }
        )
    out["example:demo"] = render_demo_table(demo)
    out["example:supported-models"] = _supported_models().render(load(SUPPORTED))
    out.update({f"figure:{k}": v for k, v in figures(demo, run).items()})
    if reference:
        out.update(_reference().blocks())
    return out


def _supported_models():
    """docs/examples/supported_models.py, the Supported models page's runs and table."""
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import supported_models

    return supported_models


def _reference():
    """docs/examples/reference.py, the reference pages' generator."""
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import reference

    return reference


def pages() -> List[str]:
    """The files that hold generated parts: README.md and every page under docs/."""
    found = [README]
    for folder, dirs, files in os.walk(DOCS):
        dirs[:] = sorted(d for d in dirs if d != "examples")
        found += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".md")]
    return found


_MARKED = re.compile(r"<!-- (example|figure|cli|make|errors):([\w-]+) -->(.*?)<!-- /\1:\2 -->", re.S)


def marked(text: str) -> Dict[str, str]:
    """A page's generated parts, by marker id (a block's text without its surrounding newlines)."""
    return {
        f"{kind}:{name}": body if kind == "figure" else body.strip("\n") for kind, name, body in _MARKED.findall(text)
    }


# a figure's marker that starts a line (after its indentation) opens an HTML block in CommonMark and
# in the site's Markdown: the paragraph or list item around it is split there
_FIGURE_STARTS_LINE = re.compile(r"^[ \t]*<!-- /?figure:[\w-]+ -->", re.M)


def misplaced(text: str) -> List[int]:
    """The lines of a page that start with a figure's marker."""
    return [text.count("\n", 0, m.start()) + 1 for m in _FIGURE_STARTS_LINE.finditer(text)]


def rewrite(text: str, generated: Dict[str, str], name: str = "README.md") -> str:
    def one(m: re.Match) -> str:
        key = f"{m.group(1)}:{m.group(2)}"
        if key not in generated:
            raise SystemExit(f"error: {name} marks {key}, which docs/examples/refresh.py does not make")
        if m.group(1) == "figure" and "\n" in generated[key]:
            raise SystemExit(f"error: figure {m.group(2)} is more than one line; a figure sits inside a sentence")
        body = generated[key] if m.group(1) == "figure" else f"\n{generated[key]}\n"
        return f"<!-- {key} -->{body}<!-- /{key} -->"

    new = _MARKED.sub(one, text)
    starts = misplaced(new)
    if starts:
        raise SystemExit(
            f"error: {name}:{starts[0]}: a figure's marker starts the line, which splits its paragraph or list item "
            "there (an HTML block): move a word of the sentence before it onto the line"
        )
    return new


def stale(text: str, generated: Dict[str, str]) -> List[str]:
    """The generated parts a page shows otherwise than ``generated`` (by marker id)."""
    return sorted(k for k, v in marked(text).items() if generated.get(k) != v)


def missing(texts: Sequence[str], generated: Dict[str, str]) -> List[str]:
    """The generated parts no page shows."""
    shown = set()
    for text in texts:
        shown |= set(marked(text))
    return sorted(set(generated) - shown)


def load(path: str) -> Dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--run",
        nargs="*",
        metavar="ID",
        help="run the examples (or these) on the finished demo and record them first (the others' records are kept)",
    )
    ap.add_argument(
        "--try",
        dest="try_ids",
        nargs="+",
        metavar="ID",
        help="run these examples and print their blocks; nothing is written (a dry run)",
    )
    args = ap.parse_args(argv)
    if args.try_ids:
        for key, entry in run_examples(args.try_ids)["examples"].items():
            print(f"<!-- example:{key} -->\n{render_example(entry)}")
        return 0
    if args.run is not None:
        record = run_examples(args.run)
        if args.run:  # some examples again: the rest of the record stays
            record = {
                **load(RUN),
                "machine": record["machine"],
                "examples": {**load(RUN)["examples"], **record["examples"]},
            }
        else:  # the whole run after `make demo`: its results file too (examples not run keep theirs)
            kept = {k: v for k, v in load(RUN)["examples"].items() if k not in record["examples"]}
            record["examples"] = {**kept, **record["examples"]}
            shutil.copyfile(os.path.join(ROOT, DEMO_RESULTS), DEMO + ".tmp")
            os.replace(DEMO + ".tmp", DEMO)
        with open(RUN + ".tmp", "w", encoding="utf-8") as f:
            f.write(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
        os.replace(RUN + ".tmp", RUN)
    generated = blocks(load(RUN), load(DEMO))
    changed, count = [], 0
    for path in pages():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        name = os.path.relpath(path, ROOT)
        new = rewrite(text, generated, name)
        count += len(marked(new))
        if new != text:
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                f.write(new)
            os.replace(path + ".tmp", path)
            changed.append(name)
    texts = []
    for path in pages():
        with open(path, encoding="utf-8") as f:
            texts.append(f.read())
    print(f"{count} generated parts in {len(texts)} pages; changed: {', '.join(changed) or 'none'}")
    unshown = missing(texts, generated)
    if unshown:
        print(f"warning: shown on no page: {', '.join(unshown)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
