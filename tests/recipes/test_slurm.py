"""The Slurm recipes (recipes/slurm/), with stubs: `bash -n` on every script; submit.sh's chaining
and skipping, with stub `sbatch`, `squeue` and `scancel` on PATH that record their arguments; the
sbatch scripts with a stub `make`. The real Slurm is test_slurm_cluster.py.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SLURM = ROOT / "recipes" / "slurm"
SUBMIT = SLURM / "submit.sh"
STAGES = ["data", "train-sentence", "train-context", "translate", "score", "pcxmi", "pcxmi-merge", "muda", "cues"]
SCRIPTS = {
    "data": "data.sbatch",
    "train-sentence": "train.sbatch",
    "train-context": "train.sbatch",
    "translate": "translate.sbatch",
    "score": "score.sbatch",
    "pcxmi": "pcxmi.sbatch",
    "pcxmi-merge": "pcxmi-merge.sbatch",
    "muda": "muda.sbatch",
    "cues": "cues.sbatch",
}
# variables of submit.sh that the caller's environment must not set for these tests
SUBMIT_VARS = [
    "PRESET",
    "MODEL",
    "STAGES",
    "WORK",
    "TED",
    "IWSLT",
    "TEXT",
    "SPM_VOCAB",
    "PARTITION",
    "CPU_PARTITION",
    "ACCOUNT",
    "GPUS",
    "STAGE_GPUS",
    "TRAIN_TIME",
    "STAGE_TIME",
    "CPUS",
    "MEM",
    "SHARDS",
    "JOB_PREFIX",
    "SBATCH_ARGS",
    "MAKE_ARGS",
    "DRY_RUN",
]

STUB_SBATCH = r"""#!/usr/bin/env bash
# records its arguments (one per line) in $STUBS/sbatch.N and prints job id 100+N
set -eu
n=$(( $(cat "$STUBS/sbatch.count" 2>/dev/null || echo 0) + 1 ))
echo "$n" >"$STUBS/sbatch.count"
printf '%s\n' "$@" >"$STUBS/sbatch.$n"
echo "$((100 + n))"
"""
STUB_SQUEUE = r"""#!/usr/bin/env bash
# prints, as `-o %F|%T|%r`, the lines NAME|ID|STATE|REASON of $STUBS/queue whose NAME is given with -n
set -eu
printf '%s\n' "$*" >>"$STUBS/squeue.calls"
name=
while [ $# -gt 0 ]; do case $1 in -n) name=$2; shift;; esac; shift; done
[ -f "$STUBS/queue" ] || exit 0
while IFS='|' read -r n id state reason; do
    [ "$n" = "$name" ] && echo "$id|$state|$reason"
done <"$STUBS/queue"
exit 0
"""
STUB_SCANCEL = r"""#!/usr/bin/env bash
printf '%s\n' "$*" >>"$STUBS/scancel.calls"
"""
STUB_MAKE = r"""#!/usr/bin/env bash
printf '%s\n' "$PWD" "$@" >"$STUBS/make.args"
exit "${STUB_MAKE_RC:-0}"
"""


def _write_exe(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


@pytest.fixture
def stubs(tmp_path):
    d = tmp_path / "stubs"
    d.mkdir()
    for name, text in (
        ("sbatch", STUB_SBATCH),
        ("squeue", STUB_SQUEUE),
        ("scancel", STUB_SCANCEL),
        ("make", STUB_MAKE),
    ):
        _write_exe(d / name, text)
    return d


def _env(stubs: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in SUBMIT_VARS and not k.startswith(("SLURM_", "MAKE"))}
    env.update(PATH=f"{stubs}:{env['PATH']}", STUBS=str(stubs), LC_ALL="C.UTF-8")
    env.update(extra)
    return env


class Submission:
    def __init__(self, proc, stubs: Path):
        self.proc = proc
        self.lines = {}
        for line in proc.stdout.splitlines():
            parts = line.split()
            self.lines[parts[0]] = parts[1:]
        self.calls = []  # the sbatch calls, in order: list of argument lists
        n = int((stubs / "sbatch.count").read_text()) if (stubs / "sbatch.count").exists() else 0
        for i in range(1, n + 1):
            self.calls.append((stubs / f"sbatch.{i}").read_text().splitlines())
        self.cancelled = (stubs / "scancel.calls").read_text().split() if (stubs / "scancel.calls").exists() else []

    def status(self, stage):
        return self.lines[stage][1]

    def job(self, stage):
        return self.lines[stage][0]

    def call(self, stage):
        """The sbatch arguments of this stage's submission."""
        found = [c for c in self.calls if f"--job-name=ctxmt-fr-{stage}" in c]
        assert len(found) == 1, (stage, self.calls)
        return found[0]

    def option(self, stage, name):
        values = [a.split("=", 1)[1] for a in self.call(stage) if a.startswith(f"--{name}=")]
        assert len(values) <= 1
        return values[0] if values else None

    def deps(self, stage):
        dep = self.option(stage, "dependency")
        if dep is None:
            return set()
        assert dep.startswith("afterok:"), dep
        return set(dep[len("afterok:") :].split(":"))

    def make_vars(self, stage):
        call = self.call(stage)
        i = next(i for i, a in enumerate(call) if a.endswith(".sbatch"))
        return call[i], call[i + 1 :]


def _reset(stubs: Path) -> None:
    """Forget the calls recorded by the stubs (the queue stays)."""
    for f in stubs.iterdir():
        if f.name.startswith(("sbatch.", "scancel.", "squeue.")):
            f.unlink()


def submit(stubs: Path, work: Path, *args, check=True, **env) -> Submission:
    _reset(stubs)
    proc = subprocess.run(
        ["bash", str(SUBMIT), "LANG=fr", f"WORK={work}", *args],
        cwd=str(work.parent),
        env=_env(stubs, **env),
        capture_output=True,
        text=True,
        timeout=60,
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return Submission(proc, stubs)


def _touch(path: Path, text: str = "x\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _record(path: Path, stage: str, *made: Path, fingerprint: object = None) -> None:
    """A done-record as the stages write it (stage_record.StageRecord): the outputs with their sha256,
    named relative to the record's folder."""
    _touch(
        path,
        json.dumps(
            {
                "stage": stage,
                "fingerprint": {} if fingerprint is None else fingerprint,
                "outputs": {os.path.relpath(p, path.parent): hashlib.sha256(p.read_bytes()).hexdigest() for p in made},
                "base": "record",
            }
        ),
    )


def finish(work: Path, *stages: str, shards: int = 4) -> None:
    """Write the outputs and the done-records of these stages (`pipeline plan` reads the records)."""
    d, c, r = work / "data" / "fr", work / "checkpoints" / "fr", work / "results" / "fr"
    for stage in stages:
        if stage == "data":
            _touch(d / "bin" / "dict.fr.txt"), _touch(d / "summary.json", "{}")
            _record(d / ".stage" / "data.json", "data", d / "bin" / "dict.fr.txt", fingerprint="0" * 64)
        elif stage.startswith("train-"):
            model = stage[len("train-") :]
            _touch(c / model / "checkpoint_best.pt")
            _record(c / model / ".stage" / "train.json", "train", c / model / "checkpoint_best.pt")
        elif stage == "translate":
            record = {}
            for s in ("sentence", "context", "context-gold"):
                _touch(r / f"{s}.test.fr")
                record[s] = {"fingerprint": {}, "output": hashlib.sha256(b"x\n").hexdigest()}
            _touch(r / "translate.json", json.dumps(record))
            made = [r / f"{s}.test.fr" for s in record]
            _record(r / ".stage" / "translate.json", "translate", *made, r / "translate.json")
        elif stage == "score":
            _touch(r / "scores.json", "{}")
            _record(r / ".stage" / "score.json", "score", r / "scores.json")
        elif stage.startswith("shard-"):
            _touch(r / f"pcxmi.shard-{stage[len('shard-') :]}-of-{shards}.summary.json", "{}")
        elif stage == "pcxmi-merge":
            _touch(r / "pcxmi.summary.json", "{}"), _touch(r / "report" / "report.md")
            _record(r / ".stage" / "report.json", "report", r / "report" / "report.md")
        elif stage == "muda":
            _touch(r / "muda" / "eval.json", "{}")
            _record(r / ".stage" / "muda-eval.json", "muda-eval", r / "muda" / "eval.json")
        elif stage == "cues":
            _touch(r / "cues" / "cues.json", "{}")
            _record(r / ".stage" / "cues.json", "cues", r / "cues" / "cues.json")
        else:
            raise ValueError(stage)


# ---------------------------------------------------------------------------------------- syntax


@pytest.mark.parametrize("script", sorted(p.name for p in SLURM.iterdir() if p.suffix in (".sh", ".sbatch")))
def test_bash_syntax(script):
    proc = subprocess.run(["bash", "-n", str(SLURM / script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    text = (SLURM / script).read_text()
    assert text.startswith("#!/usr/bin/env bash\n")
    if script.endswith(".sbatch"):
        assert "set -euo pipefail" in text
        # resources are site-specific: passed by submit.sh, never hard-coded
        for option in ("--partition", "--account", "--time", "--mem", "--cpus-per-task", "--gres"):
            assert not re.search(rf"^#SBATCH\s+{option}", text, re.M), (script, option)


def test_all_stage_scripts_exist():
    for script in set(SCRIPTS.values()) | {"submit.sh", "local_cluster.sh", "test_local.sh", "slurm.mk"}:
        assert (SLURM / script).is_file(), script
    train = (SLURM / "train.sbatch").read_text()
    assert re.search(r"^#SBATCH --requeue$", train, re.M)
    assert re.search(r"^#SBATCH --open-mode=append$", train, re.M)


# ------------------------------------------------------------------------------------ submit.sh


def test_fresh_submits_the_whole_chain(stubs, tmp_path):
    work = tmp_path / "work"
    s = submit(stubs, work, "TEXT=corpus", "SPM_VOCAB=500", "GPUS=0", "PRESET=tiny")
    assert [s.status(st) for st in STAGES] == ["submitted"] * 9
    assert len(s.calls) == 9
    ids = {st: s.job(st) for st in STAGES}
    assert len(set(ids.values())) == 9 and all(i.isdigit() for i in ids.values())
    assert s.deps("data") == set()
    assert s.deps("train-sentence") == {ids["data"]}
    assert s.deps("train-context") == {ids["data"]}
    assert s.deps("translate") == {ids["train-sentence"], ids["train-context"]}
    assert s.deps("score") == {ids["translate"]}
    assert s.deps("pcxmi") == {ids["train-context"]}
    assert s.deps("pcxmi-merge") == {ids["pcxmi"]}
    assert s.deps("muda") == {ids["translate"]}
    assert s.deps("cues") == {ids["train-sentence"], ids["train-context"]}
    for st in STAGES:
        script, make_vars = s.make_vars(st)
        assert script == f"recipes/slurm/{SCRIPTS[st]}"
        assert make_vars[:2] == ["LANG=fr", f"WORK={work}"]
        assert s.option(st, "gres") is None  # GPUS=0: no --gres at all
        assert s.option(st, "partition") is None and s.option(st, "account") is None
        assert s.option(st, "cpus-per-task") == "8" and s.option(st, "mem") == "32G"
        assert "--parsable" in s.call(st)
        log = s.option(st, "output")
        assert log == (f"{work}/logs/fr/%x-%A_%a.out" if st == "pcxmi" else f"{work}/logs/fr/%x-%j.out")
        if st != "data":
            assert s.option(st, "kill-on-invalid-dep") == "yes"
    assert (work / "logs" / "fr").is_dir()  # sbatch opens the logs: the folder must exist
    assert s.make_vars("data")[1][2:] == [f"TEXT={tmp_path}/corpus", "SPM_VOCAB=500"]  # made absolute
    assert s.make_vars("train-context")[1][2:] == ["PRESET=tiny", "MODEL=context", "GPUS=0"]
    assert s.make_vars("train-sentence")[1][2:] == ["PRESET=tiny", "MODEL=sentence", "GPUS=0"]
    assert s.option("train-context", "time") == "48:00:00" and s.option("translate", "time") == "4:00:00"
    assert s.option("pcxmi", "array") == "0-3" and s.make_vars("pcxmi")[1][2:] == ["SHARDS=4"]
    assert s.make_vars("pcxmi-merge")[1][2:] == ["SHARDS=4"]
    assert s.lines["pcxmi"][2] == "shards=1,2,3,4/4"


def test_resources_and_gpus(stubs, tmp_path):
    s = submit(
        stubs,
        tmp_path / "w",
        "TEXT=/c",
        "GPUS=2",
        "PARTITION=gpu",
        "CPU_PARTITION=cpu",
        "ACCOUNT=lab",
        "CPUS=4",
        "MEM=",
        "TRAIN_TIME=12:00:00",
        "STAGE_TIME=1:00:00",
        "SHARDS=3",
        "JOB_PREFIX=ctxmt",
        "SBATCH_ARGS=--qos=long --constraint=a100",
        "MAKE_ARGS=EPOCHS=3 BEAM=4",
    )
    for st in STAGES:
        assert s.option(st, "account") == "lab" and s.option(st, "cpus-per-task") == "4"
        assert s.option(st, "mem") is None  # MEM= empty: none
        assert s.option(st, "qos") == "long" and s.option(st, "constraint") == "a100"
        assert s.make_vars(st)[1][2:4] == ["EPOCHS=3", "BEAM=4"]
    for st in ("train-sentence", "train-context"):
        assert s.option(st, "gres") == "gpu:2" and s.option(st, "partition") == "gpu"
        assert s.option(st, "time") == "12:00:00"
        assert s.make_vars(st)[1][-1] == "GPUS=2"
    for st in ("translate", "score", "pcxmi", "muda", "cues"):  # muda: stanza and the aligner on the GPU
        assert s.option(st, "gres") == "gpu:1" and s.option(st, "partition") == "gpu"
        assert s.option(st, "time") == "1:00:00"
    for st in ("data", "pcxmi-merge"):
        assert s.option(st, "gres") is None and s.option(st, "partition") == "cpu"
    assert s.option("pcxmi", "array") == "0-2"

    s = submit(stubs, tmp_path / "w2", "TEXT=/c", "GPUS=a100:4")
    assert s.option("train-context", "gres") == "gpu:a100:4" and s.option("translate", "gres") == "gpu:a100:1"
    assert s.make_vars("train-context")[1][-1] == "GPUS=4"


def test_quoted_extra_arguments(stubs, tmp_path):
    """SBATCH_ARGS and MAKE_ARGS are split into words like a shell does (quotes group), nothing run."""
    s = submit(
        stubs,
        tmp_path / "w",
        "TEXT=/c",
        "SBATCH_ARGS=--qos=long --comment='a b'",
        'MAKE_ARGS=MUDA_ARGS="--lexicon x y z" BEAM=4 X="$(touch pwned)"',
    )
    assert s.option("muda", "qos") == "long" and s.option("muda", "comment") == "a b"
    assert s.make_vars("muda")[1][2:] == ["MUDA_ARGS=--lexicon x y z", "BEAM=4", "X=$(touch pwned)"]
    assert not (tmp_path / "pwned").exists() and not (ROOT / "pwned").exists()
    s = submit(stubs, tmp_path / "w", "TEXT=/c", 'MAKE_ARGS=A="b', check=False)
    assert s.proc.returncode == 2 and "unbalanced quotes" in s.proc.stderr and s.calls == []


def test_environment_defaults_and_arguments(stubs, tmp_path):
    """Environment variables are defaults; arguments win; the jobs do not inherit them."""
    s = submit(
        stubs, tmp_path / "w", "TEXT=/c", "CPUS=2", PARTITION="envpart", CPUS="16", MODEL="context", LANG="de_DE.UTF-8"
    )
    assert s.option("data", "partition") == "envpart" and s.option("data", "cpus-per-task") == "2"
    assert s.status("train-sentence") == "off" and s.status("translate") == "blocked"


def test_finished_stages_are_skipped(stubs, tmp_path):
    work = tmp_path / "work"
    finish(work, "data", "train-sentence")
    _touch(work / "checkpoints" / "fr" / "context" / "checkpoint_best.pt")  # no train record: not finished
    s = submit(stubs, work)  # no TEXT needed: the data is there
    assert s.status("data") == "done" and s.job("data") == "-"
    assert s.status("train-sentence") == "done"
    assert s.status("train-context") == "submitted" and s.deps("train-context") == set()
    ids = {st: s.job(st) for st in STAGES}
    assert s.deps("translate") == {ids["train-context"]}
    assert s.deps("pcxmi") == {ids["train-context"]}
    assert s.deps("score") == {ids["translate"]} and s.deps("muda") == {ids["translate"]}
    assert s.deps("cues") == {ids["train-context"]}  # the sentence model is done
    assert len(s.calls) == 7


def test_everything_done_submits_nothing(stubs, tmp_path):
    work = tmp_path / "work"
    finish(work, "data", "train-sentence", "train-context", "translate", "score", "pcxmi-merge", "muda", "cues")
    s = submit(stubs, work)
    assert [s.status(st) for st in STAGES] == ["done"] * 9
    assert s.calls == [] and s.cancelled == []


def test_downstream_of_finished_stages(stubs, tmp_path):
    """Only the tail of the chain is left: it depends on nothing that is done."""
    work = tmp_path / "work"
    finish(work, "data", "train-sentence", "train-context", "translate", "shard-1", "shard-3")
    s = submit(stubs, work)
    assert s.status("score") == "submitted" and s.deps("score") == set()
    assert s.status("muda") == "submitted" and s.deps("muda") == set()
    assert s.option("pcxmi", "array") == "1,3" and s.lines["pcxmi"][2] == "shards=2,4/4"
    assert s.deps("pcxmi") == set() and s.deps("pcxmi-merge") == {s.job("pcxmi")}

    finish(work, "shard-2", "shard-4")  # all shards done, the merge not
    s = submit(stubs, work)
    assert s.status("pcxmi") == "done" and s.status("pcxmi-merge") == "submitted"
    assert s.deps("pcxmi-merge") == set()


def test_queued_stages_are_reused(stubs, tmp_path):
    work = tmp_path / "work"
    finish(work, "data")
    (stubs / "queue").write_text(
        "ctxmt-fr-train-context|77|RUNNING|None\n"
        "ctxmt-de-train-sentence|78|RUNNING|None\n"  # another language
        "ctxmt-fr-pcxmi|79|PENDING|Dependency\n"
        "ctxmt-fr-pcxmi|79|RUNNING|None\n"
    )  # array: several lines, one id
    s = submit(stubs, work)
    assert s.lines["train-context"] == ["77", "queued"]
    assert s.lines["pcxmi"] == ["79", "queued"]
    assert s.status("train-sentence") == "submitted"
    assert s.deps("translate") == {"77", s.job("train-sentence")}
    assert s.deps("pcxmi-merge") == {"79"}
    assert len(s.calls) == 6  # train-sentence, translate, score, pcxmi-merge, muda, cues
    assert s.deps("cues") == {"77", s.job("train-sentence")}
    calls = (stubs / "squeue.calls").read_text()
    assert "-n ctxmt-fr-train-context" in calls and "-u " in calls


def test_failed_dependency_is_cancelled_and_resubmitted(stubs, tmp_path):
    work = tmp_path / "work"
    finish(work, "data", "train-sentence", "train-context")
    (stubs / "queue").write_text(
        "ctxmt-fr-translate|90|PENDING|DependencyNeverSatisfied\nctxmt-fr-score|91|PENDING|Dependency\n"
    )
    s = submit(stubs, work)
    assert s.cancelled == ["90"]
    assert s.status("translate") == "submitted" and s.job("translate") != "90"
    assert s.lines["score"] == ["91", "queued"]


def test_data_needs_a_corpus(stubs, tmp_path):
    s = submit(stubs, tmp_path / "w", check=False)
    assert s.proc.returncode == 2 and "TEXT=" in s.proc.stderr
    assert s.calls == []


def test_model_and_stages_select(stubs, tmp_path):
    work = tmp_path / "work"
    finish(work, "data")
    s = submit(stubs, work, "MODEL=context")
    assert s.status("train-sentence") == "off" and s.status("train-context") == "submitted"
    assert s.status("translate") == "blocked" and s.status("score") == "blocked" and s.status("muda") == "blocked"
    assert s.status("pcxmi") == "submitted" and s.status("cues") == "blocked"

    finish(work, "train-sentence")
    s = submit(stubs, work, "MODEL=context")
    assert s.status("train-sentence") == "done" and s.status("translate") == "submitted"

    s = submit(stubs, tmp_path / "w2", "TEXT=/c", "STAGES=data train")
    assert [s.status(st) for st in STAGES] == ["submitted"] * 3 + ["off"] * 6


@pytest.mark.parametrize(
    "args, message",
    [
        (["LANG=demo"], "LANG=demo"),
        (["PRESET=huge"], "PRESET"),
        (["MODEL=both"], "MODEL"),
        (["SHARDS=0"], "SHARDS"),
        (["GPUS=two"], "GPUS"),
        (["STAGES=data eval"], "eval"),
        (["NOPE=1"], "unknown variable"),
        (["fr"], "VAR=value"),
    ],
)
def test_bad_arguments(stubs, tmp_path, args, message):
    proc = subprocess.run(
        ["bash", str(SUBMIT), "LANG=fr", f"WORK={tmp_path}/w", "TEXT=/c", *args],
        env=_env(stubs),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not (stubs / "sbatch.count").exists()


def test_dry_run_submits_nothing(stubs, tmp_path):
    s = submit(stubs, tmp_path / "w", "TEXT=/c", "DRY_RUN=1")
    assert s.calls == [] and [s.status(st) for st in STAGES] == ["submitted"] * 9
    assert "would run: sbatch" in s.proc.stderr
    assert not (tmp_path / "w").exists()


def test_make_slurm_passes_the_variables(stubs, tmp_path):
    """`make slurm` (recipes/slurm/slurm.mk, included by the Makefile) runs submit.sh with the given
    variables only."""
    work = tmp_path / "work"
    env = _env(stubs)
    env["PATH"] = env["PATH"].split(":", 1)[1]  # the real make
    env["PATH"] = f"{tmp_path / 'bin'}:{env['PATH']}"
    (tmp_path / "bin").mkdir()
    for name in ("sbatch", "squeue", "scancel"):
        shutil.copy(stubs / name, tmp_path / "bin" / name)
    proc = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "slurm",
            "LANG=fr",
            f"WORK={work}",
            "TEXT=/c",
            "GPUS=0",
            "SHARDS=2",
            "PRESET=tiny",
            "EPOCHS=2",
            "BATCH=preset",
            "MUDA_ARGS=--lexicon a  b c",
            "SBATCH_ARGS=--comment='it''s'",
        ],
        cwd=str(ROOT),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    s = Submission(proc, stubs)
    assert [s.status(st) for st in STAGES] == ["submitted"] * 9
    assert s.option("pcxmi", "array") == "0-1" and s.option("train-context", "gres") is None
    assert s.make_vars("train-context")[1] == [
        "LANG=fr",
        f"WORK={work}",
        "EPOCHS=2",
        "BATCH=preset",
        "MUDA_ARGS=--lexicon a b c",
        "PRESET=tiny",
        "MODEL=context",
        "GPUS=0",
    ]
    assert s.option("data", "comment") == "its"  # the shell's quoting rules
    proc = subprocess.run(
        ["make", "--no-print-directory", "slurm"], cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode != 0 and "LANG=xx" in proc.stderr


# ------------------------------------------------------------------------------- sbatch scripts


def _run_script(stubs, tmp_path, script, *args, **env):
    return subprocess.run(
        ["bash", str(SLURM / script), *args],
        cwd=str(tmp_path),
        env=_env(stubs, CTXMT_ROOT=str(ROOT), **env),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "script, target",
    [
        ("data.sbatch", "data"),
        ("train.sbatch", "train"),
        ("translate.sbatch", "translate"),
        ("score.sbatch", "score"),
        ("pcxmi-merge.sbatch", "pcxmi-merge"),
        ("muda.sbatch", "muda-eval"),
        ("cues.sbatch", "cues"),
    ],
)
def test_sbatch_scripts_run_their_target(stubs, tmp_path, script, target):
    proc = _run_script(stubs, tmp_path, script, "LANG=fr", "WORK=/w", SLURM_JOB_ID="5", SLURM_CPUS_PER_TASK="3")
    assert proc.returncode == 0, proc.stderr
    args = (stubs / "make.args").read_text().splitlines()
    assert args[0] == str(ROOT)  # runs in the repository root
    assert args[1:] == ["--no-print-directory", target, "LANG=fr", "WORK=/w"]
    proc = _run_script(stubs, tmp_path, script, "LANG=fr", STUB_MAKE_RC="3")
    assert proc.returncode == 3  # the job fails with make


def test_sbatch_scripts_run_in_the_submit_dir(stubs, tmp_path):
    env = _env(stubs, SLURM_SUBMIT_DIR=str(tmp_path))
    proc = subprocess.run(
        ["bash", str(SLURM / "score.sbatch"), "LANG=fr"],
        cwd=str(ROOT),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "not the contextual-mt repository" in proc.stderr


def test_pcxmi_array_task_runs_its_shard(stubs, tmp_path):
    proc = _run_script(stubs, tmp_path, "pcxmi.sbatch", "LANG=fr", "SHARDS=4", SLURM_ARRAY_TASK_ID="2")
    assert proc.returncode == 0, proc.stderr
    args = (stubs / "make.args").read_text().splitlines()
    assert args[1:] == ["--no-print-directory", "pcxmi-shard", "LANG=fr", "SHARDS=4", "SHARD=3/4"]
    proc = _run_script(stubs, tmp_path, "pcxmi.sbatch", "LANG=fr", "SHARDS=4")
    assert proc.returncode == 2 and "--array" in proc.stderr
    proc = _run_script(stubs, tmp_path, "pcxmi.sbatch", "LANG=fr", SLURM_ARRAY_TASK_ID="0")
    assert proc.returncode == 2 and "SHARDS" in proc.stderr
    proc = _run_script(stubs, tmp_path, "pcxmi.sbatch", "LANG=fr", "SHARDS=2", SLURM_ARRAY_TASK_ID="2")
    assert proc.returncode == 2


def test_train_requeues_itself_near_the_time_limit(stubs, tmp_path):
    """USR1 (sent by Slurm 10 minutes before the limit, --signal=B:USR1@600) makes the job requeue
    itself with `scontrol requeue`; make goes on until Slurm stops the job."""
    _write_exe(stubs / "make", '#!/usr/bin/env bash\nsleep 4\necho made >"$STUBS/make.done"\n')
    _write_exe(stubs / "scontrol", '#!/usr/bin/env bash\nprintf \'%s\\n\' "$*" >>"$STUBS/scontrol.calls"\n')
    env = _env(stubs, CTXMT_ROOT=str(ROOT), SLURM_JOB_ID="42", SLURM_RESTART_COUNT="0")
    proc = subprocess.Popen(
        ["bash", str(SLURM / "train.sbatch"), "LANG=fr", "MODEL=context"],
        cwd=str(tmp_path),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.5)
    proc.send_signal(10)  # SIGUSR1
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert (stubs / "scontrol.calls").read_text().split() == ["requeue", "42"]
    assert (stubs / "make.done").exists() and "requeueing job 42" in out

    (stubs / "scontrol.calls").unlink()
    env.update(SLURM_RESTART_COUNT="2", CTXMT_MAX_REQUEUE="2")
    proc = subprocess.Popen(
        ["bash", str(SLURM / "train.sbatch"), "LANG=fr"],
        cwd=str(tmp_path),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.5)
    proc.send_signal(10)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "not requeueing" in out
    assert not (stubs / "scontrol.calls").exists()
