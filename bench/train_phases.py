"""Where ``pipeline train``'s time goes around fairseq (issue 55, step 5): the command run
in-process (``contextual_mt.cli``) with each phase of ``train_model`` timed from outside, the
library unchanged. On an H200 the stage's box stopped it more than 25 s after fairseq had
finished (bench/RESULTS.md, "GPU figures in one run"); this says which phase took them.

Phases timed (each call: its seconds and when it ended, from the command's start):

- before fairseq: ``require_data``, ``batch_plan``, ``train_fingerprint``, ``keep_asked_limits``,
  ``_plan``, the stage record's first ``save``;
- fairseq itself (``_run``), split at fairseq's last output line: before it, and from it to the
  process's end (its exit: data workers, CUDA teardown); fairseq's own "done training in X
  seconds";
- after fairseq: ``checkpoint_figures`` (reads checkpoint_best.pt and checkpoint_last.pt),
  ``file_sha256`` (of checkpoint_best.pt), ``_health`` (the unigram check, which loads the
  checkpoint), the record's last ``save``;
- the command's end after ``train_model`` returned.

    python -m bench.train_phases --json OUT/train_phases.json -- pipeline train --lang fr --root R ...
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any, Callable, Dict, List, Optional

from bench import harness

BEFORE = ("require_data", "batch_plan", "train_fingerprint", "keep_asked_limits", "_plan")
AFTER = ("checkpoint_figures", "file_sha256", "_health")
DONE = re.compile(r"done training in ([0-9.]+) seconds")


class Phases:
    """The timed calls of one run, in order."""

    def __init__(self, save: Optional[Callable[[Phases], None]] = None) -> None:
        self.save = save  # called after every timed call: a run cut short keeps its phases so far
        self.start = harness.clock()
        self.calls: List[Dict[str, Any]] = []
        self.lines: List[float] = []  # when each line of fairseq's output came
        self.done_training: List[float] = []

    def at(self) -> float:
        return round(harness.clock() - self.start, 3)

    def timed(self, name: str, fn: Callable) -> Callable:
        def wrapper(*args, **kwargs):
            t = harness.time_it(lambda: fn(*args, **kwargs), repeats=1)
            self.calls.append({"phase": name, "seconds": round(t.median, 3), "ended_at_s": self.at()})
            if self.save:
                self.save(self)
            return t.result

        return wrapper

    def feed(self, fn: Callable) -> Callable:
        def wrapper(progress, line):
            self.lines.append(self.at())
            if m := DONE.search(line):
                self.done_training.append(float(m.group(1)))
            return fn(progress, line)

        return wrapper


def instrument(phases: Phases) -> None:
    """Every phase above wrapped where ``train_model`` looks it up (the library's code unchanged)."""
    import contextual_mt.pipeline.train as stage
    from contextual_mt.pipeline.train_progress import TrainProgress
    from contextual_mt.stage_record import StageRecord

    for name in (*BEFORE, "_run", *AFTER):
        setattr(stage, name, phases.timed(name, getattr(stage, name)))
    # the command imports train_model from the stage's module when it runs: wrapped there
    stage.train_model = phases.timed("train_model", stage.train_model)
    StageRecord.save = phases.timed("StageRecord.save", StageRecord.save)  # type: ignore[method-assign]
    TrainProgress.feed = phases.feed(TrainProgress.feed)  # type: ignore[method-assign]


def summary(phases: Phases, total: float, rc: Optional[int], finished_at: float) -> Dict[str, Any]:
    """The record: every call, fairseq's split, the phases after it (``rc`` None: still running)."""
    calls = phases.calls
    run = next((c for c in calls if c["phase"] == "_run"), None)
    model = next((c for c in reversed(calls) if c["phase"] == "train_model"), None)
    out: Dict[str, Any] = {"exit": rc, "complete": rc is not None, "total_s": round(total, 3), "calls": calls}
    if run:
        last_line = phases.lines[-1] if phases.lines else None
        out["fairseq"] = {
            "seconds": run["seconds"],
            "ended_at_s": run["ended_at_s"],
            "lines": len(phases.lines),
            "last_line_at_s": last_line,
            "exit_after_last_line_s": round(run["ended_at_s"] - last_line, 3) if last_line is not None else None,
            "done_training_in_s": phases.done_training[-1] if phases.done_training else None,
        }
        after = [c for c in calls if c["ended_at_s"] > run["ended_at_s"] and c["phase"] != "train_model"]
        out["after_fairseq"] = {
            "seconds": round((model["ended_at_s"] if model else phases.at()) - run["ended_at_s"], 3),
            "phases": {
                c["phase"]: round(sum(x["seconds"] for x in after if x["phase"] == c["phase"]), 3) for c in after
            },
        }
        out["before_fairseq_s"] = round(run["ended_at_s"] - run["seconds"], 3)
    if model:
        out["after_train_model_s"] = round(finished_at - model["ended_at_s"], 3)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- then contextual-mt's arguments (pipeline train ...)")
    harness.add_arguments(p, repeats=None)
    args = harness.parse(p, argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if command[:2] != ["pipeline", "train"]:
        sys.exit("give -- pipeline train OPTIONS (the command whose phases are timed)")
    from contextual_mt.cli import main as cli

    def save(phases: Phases) -> None:
        now = phases.at()
        harness.write_json(args.json, harness.record("train_phases", summary(phases, now, None, now), args))

    phases = Phases(save if args.json else None)
    instrument(phases)
    t = harness.time_it(lambda: cli(command), repeats=1)
    finished_at = phases.at()  # on the phases' clock (started before the command)
    rc = int(t.result or 0)
    results = summary(phases, t.median, rc, finished_at)
    shown: List[Dict[str, Any]] = []  # consecutive calls of one phase on one line
    for c in phases.calls:
        if shown and shown[-1]["phase"] == c["phase"]:
            last = shown[-1]
            last.update(seconds=last["seconds"] + c["seconds"], ended_at_s=c["ended_at_s"], n=last["n"] + 1)
        else:
            shown.append({**c, "n": 1})
    for c in shown:
        times = f" ({c['n']} calls)" if c["n"] > 1 else ""
        print(f"  {c['phase']:18s} {c['seconds']:8.3f} s{times}, ended at {c['ended_at_s']:8.3f} s")
    if "fairseq" in results:
        f, a = results["fairseq"], results["after_fairseq"]
        print(
            f"fairseq: {f['seconds']} s ('done training in {f['done_training_in_s']} s'); its exit "
            f"{f['exit_after_last_line_s']} s after its last line; after it: {a['seconds']} s ({a['phases']})"
        )
    harness.finish(args, "train_phases", results)
    return rc


if __name__ == "__main__":
    sys.exit(main())
