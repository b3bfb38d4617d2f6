"""The one stage record (contextual_mt/stage_record.py) and the stage declarations
(contextual_mt/pipeline/stages.py, `contextual-mt pipeline plan`)."""

import json

import pytest

from contextual_mt.errors import InputError
from contextual_mt.pipeline.stages import STAGES, format_plan, jobs, make_all
from contextual_mt.stage_record import (
    FINGERPRINT_KEY,
    PartialFile,
    StageRecord,
    SummaryRecord,
    differences,
    partial_path,
    read_record,
    record_finished,
    resumable_records,
    stale_error,
)


def test_stage_record_is_current_only_for_the_same_fingerprint_and_outputs(tmp_path):
    out = tmp_path / "eval.json"
    out.write_text("{}\n")
    record = StageRecord(str(tmp_path / ".stage" / "eval.json"), "eval")
    assert not record.current({"a": 1})  # no record yet
    record.save({"a": 1}, [str(out)])
    assert json.loads((tmp_path / ".stage" / "eval.json").read_text())["stage"] == "eval"
    assert record.current({"a": 1})
    assert not record.current({"a": 2})  # other inputs or settings
    out.write_text('{"edited": true}\n')
    assert not record.current({"a": 1})  # the output is not the file the stage wrote
    out.unlink()
    assert not record.current({"a": 1})


def test_a_broken_record_is_one_error_naming_it(tmp_path):
    path = tmp_path / "train.done"
    path.write_text("{not json")
    with pytest.raises(InputError, match=r"train\.done: unreadable state file"):
        read_record(str(path))
    assert read_record(str(tmp_path / "absent.json")) is None


def test_summary_record(tmp_path):
    out, summary = tmp_path / "x.jsonl", tmp_path / "x.summary.json"
    out.write_text('{"line": 1}\n{"line": 2}\n')
    summary.write_text(json.dumps({"fingerprint": {"k": 1}, "sentences": 2, "normalize": False}))
    assert SummaryRecord(str(out), str(summary), "sentences").current({"k": 1})["sentences"] == 2
    assert SummaryRecord(str(out), str(summary), "sentences").current({"k": 2}) is None
    assert SummaryRecord(str(out), str(summary), "sentences").current({"k": 1}, normalize=True) is None
    assert SummaryRecord(str(out), str(summary), "sentences").current({"k": 1}, expected=3) is None
    out.write_text('{"line": 1}\n')  # fewer records than the summary counts
    assert SummaryRecord(str(out), str(summary), "sentences").current({"k": 1}) is None


def test_partial_resume_rule(tmp_path):
    path = tmp_path / "out.partial"
    writer = PartialFile(str(path), {"log_base": "e"}, [])
    writer.write([{"line": 1}, {"line": 2}])
    writer.close()
    assert json.loads(path.read_text().splitlines()[0]) == {FINGERPRINT_KEY: {"log_base": "e"}}
    assert sorted(r["line"] for r in resumable_records(str(path), {"log_base": "e"}, [1, 2, 3])) == [1, 2]
    with pytest.raises(
        InputError,
        match=r"left by a different computation \(differs in: log_base "
        r"\(partial 'e', now '2'\)\).*--overwrite",
    ):
        resumable_records(str(path), {"log_base": "2"}, [1])
    path.write_text('{"line": 1}\n')
    with pytest.raises(InputError, match=r"no fingerprint on its first line.*`contextual-mt contrastive`.*--overwrite"):
        resumable_records(str(path), {}, [1], "contrastive")


def test_differences_and_the_overwrite_message():
    assert differences({"a": 1, "h": "x" * 64}, {"a": 2, "h": "y" * 64}, ("was", "now")) == ["a (was 1, now 2)", "h"]
    message = str(stale_error("results/fr", "made from other inputs or settings"))
    assert message.startswith("results/fr: made from other inputs or settings; use --overwrite")
    assert "OVERWRITE=1" in message


def test_a_stage_is_finished_when_its_done_record_says_so(tmp_path):
    out, record = tmp_path / "eval.json", tmp_path / ".stage" / "muda-eval.json"
    out.write_text("{}\n")
    assert not record_finished(str(record))  # never finished
    record.parent.mkdir()
    StageRecord(str(record), "muda-eval").save({"lang": "fr"}, [str(out)])
    assert record_finished(str(record))  # whatever the settings: the chain asks "finished?"
    out.write_text('{"edited": 1}\n')
    assert not record_finished(str(record))  # an output is no longer the file the stage wrote
    record.write_text("{not json")
    assert not record_finished(str(record))  # unreadable: the stage reruns and says so
    (tmp_path / "train.done").write_text("{}")
    assert record_finished(str(tmp_path / "train.done"))  # a record that lists no outputs


def test_a_job_is_not_finished_without_the_outputs_its_record_does_not_list(tmp_path):
    """train.done and translate.json (an earlier version's) name no output hashes: migrated, the
    checkpoint and the three translations must still be there for the chain to count the job as done."""
    import hashlib

    from contextual_mt.pipeline.migrate import migrate

    ckpt = tmp_path / "checkpoints" / "pt-br" / "sentence"
    ckpt.mkdir(parents=True)
    (ckpt / "train.done").write_text(json.dumps({"checkpoint_sha256": hashlib.sha256(b"x").hexdigest()}))
    results = tmp_path / "results" / "pt-br"
    results.mkdir(parents=True)
    output = {"output": hashlib.sha256(b"x\n").hexdigest()}
    (results / "translate.json").write_text(json.dumps(dict.fromkeys(("sentence", "context", "context-gold"), output)))
    assert migrate(str(tmp_path))[1] == []
    assert not {j.name: j for j in jobs("pt-br", str(tmp_path))}["train-sentence"].finished
    (ckpt / "checkpoint_best.pt").write_bytes(b"x")
    assert {j.name: j for j in jobs("pt-br", str(tmp_path))}["train-sentence"].finished
    for system in ("sentence", "context"):
        (results / f"{system}.test.pt-br").write_text("x\n")
    assert not {j.name: j for j in jobs("pt-br", str(tmp_path))}["translate"].finished  # context-gold missing
    (results / "context-gold.test.pt-br").write_text("x\n")
    assert {j.name: j for j in jobs("pt-br", str(tmp_path))}["translate"].finished


def test_plan_declares_the_job_chain(tmp_path):
    graph = {j.name: j for j in jobs("pt-br", str(tmp_path), shards=3)}
    assert list(graph) == [
        "data",
        "train-sentence",
        "train-context",
        "translate",
        "score",
        "pcxmi",
        "pcxmi-merge",
        "muda",
        "cues",
    ]
    assert graph["cues"].needs == ["train-sentence", "train-context"] and graph["cues"].make == "cues"
    assert graph["translate"].needs == ["train-sentence", "train-context"]
    assert graph["pcxmi"].needs == ["train-context"] and graph["pcxmi"].todo == [1, 2, 3]
    assert graph["train-context"].device == "gpus" and graph["data"].device == "cpu"
    assert graph["pcxmi-merge"].device == "cpu" and graph["muda"].make == "muda-eval"
    assert graph["train-sentence"].make_vars == ["PRESET", "MODEL", "GPUS"]
    assert not any(j.finished for j in graph.values())
    assert {s.group for s in STAGES} == {"data", "train", "translate", "score", "pcxmi", "muda", "cues"}
    lines = format_plan(list(graph.values()), as_json=False).splitlines()
    assert lines[3] == "translate train-sentence,train-context translate.sbatch gpu translate - todo -"
    assert json.loads(format_plan(list(graph.values()), as_json=True).splitlines()[0])["name"] == "data"


def test_plan_lists_every_stage_with_its_needs_and_make_all_follows_the_chain(tmp_path):
    """`pipeline plan` prints the job chain, then the stages run by hand (no script, no group: not
    Slurm jobs); `make all` runs the chain's targets in its order (Makefile: make_all())."""
    graph = jobs("fr", str(tmp_path), shards=2, every=True)
    assert [j.name for j in graph] == [
        "data",
        "train-sentence",
        "train-context",
        "translate",
        "score",
        "pcxmi",
        "pcxmi-merge",
        "muda",
        "cues",
        "report",
        "testset",
        "attribute",
        "contrastive",
        "table",
    ]
    by_hand = {j.name: j for j in graph[9:]}
    assert by_hand["attribute"].needs == ["train-context"] and by_hand["report"].needs == ["pcxmi-merge"]
    assert by_hand["contrastive"].needs == ["train-sentence", "train-context"]
    lines = format_plan(graph, as_json=False).splitlines()
    assert lines[:9] == format_plan(jobs("fr", str(tmp_path), shards=2), as_json=False).splitlines()
    assert lines[11] == "attribute train-context - gpu - - todo -"
    assert make_all() == ["data", "train", "translate", "score", "pcxmi", "muda-eval", "cues"]


def test_plan_states_follow_the_outputs(tmp_path):
    results = tmp_path / "results" / "fr"
    results.mkdir(parents=True)
    (results / "pcxmi.shard-2-of-2.summary.json").write_text("{}")
    graph = {j.name: j for j in jobs("fr", str(tmp_path), shards=2)}
    assert graph["pcxmi"].todo == [1] and not graph["pcxmi"].finished
    (results / "report").mkdir()
    (results / "pcxmi.summary.json").write_text("{}")
    (results / "report" / "report.md").write_text("# report\n")
    (results / ".stage").mkdir()  # the report's done-record, as StageRecord writes it
    StageRecord(str(results / ".stage" / "report.json"), "report").save({}, [str(results / "report" / "report.md")])
    graph = {j.name: j for j in jobs("fr", str(tmp_path), shards=2)}
    assert graph["pcxmi-merge"].finished and graph["pcxmi"].finished and graph["pcxmi"].todo == []
    with pytest.raises(InputError, match="--lang 'FR'"):
        jobs("FR", str(tmp_path))


def test_a_partial_file_of_an_earlier_version_still_resumes_once_migrated(tmp_path):
    """Earlier versions named the first line's key "cxmi_fingerprint" for every stage: an
    interrupted run of theirs is one line naming `pipeline migrate`; migrated, it resumes, and is
    refused when it was another computation."""
    from contextual_mt.pipeline.migrate import migrate

    path = tmp_path / "out.partial"
    path.write_text(json.dumps({"cxmi_fingerprint": {"log_base": "e"}}) + "\n" + json.dumps({"line": 2}) + "\n")
    assert FINGERPRINT_KEY != "cxmi_fingerprint"
    with pytest.raises(InputError, match=r"out.partial: a record of an earlier version; run .*migrate"):
        resumable_records(str(path), {"log_base": "e"}, [1, 2])
    assert migrate(str(tmp_path)) == ([str(path)], [])
    assert [r["line"] for r in resumable_records(str(path), {"log_base": "e"}, [1, 2])] == [2]
    with pytest.raises(InputError, match="left by a different computation"):
        resumable_records(str(path), {"log_base": "2"}, [1])
    assert partial_path(str(tmp_path / "out")) == str(path)


def test_a_full_disk_while_journaling_names_the_partial_file(tmp_path):
    """OUTPUT.partial is appended to outside the output transaction: a full disk there is one
    line naming it too (no traceback naming nothing)."""
    import errno

    from commandkit.errors import InputError

    path = tmp_path / "out.partial"
    writer = PartialFile(str(path), {"log_base": "e"}, [])
    writer.write([{"line": 1}])

    class FullDisk:
        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

    writer.file.close()
    writer.file = FullDisk()
    with pytest.raises(InputError, match=r"out.partial: cannot write \(No space left on device\); free some space"):
        writer.write([{"line": 2}])


def test_a_full_disk_met_when_the_partial_file_is_closed_names_it(tmp_path):
    """A record that did not fit stays in the file's buffer: closing the file (the ``finally``
    of every streaming command) flushes it again and meets the full disk again; that too is one
    line naming the partial file, not an OSError naming nothing (which replaced the first)."""
    import errno

    from commandkit.errors import InputError

    path = tmp_path / "out.partial"
    writer = PartialFile(str(path), {"log_base": "e"}, [])
    writer.write([{"line": 1}])

    class FullDisk:
        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

        flush = close = lambda self: FullDisk.write(self, "")

    writer.file.close()
    writer.file = FullDisk()
    with pytest.raises(InputError, match=r"out.partial: cannot write \(No space left on device\)"):
        try:
            writer.write([{"line": 2}])
        finally:
            writer.close()


def test_a_damaged_line_inside_a_partial_file_is_refused_not_resumed_up_to(tmp_path):
    """An interruption leaves whole lines and then at most a cut-off one (dropped); a complete
    line that is not a record, with records after it, is damage: resuming would silently
    score again everything after it and drop the records that follow."""
    path = tmp_path / "out.partial"
    head = json.dumps({FINGERPRINT_KEY: {"log_base": "e"}})
    path.write_text(f'{head}\n{{"line": 1}}\n{{"line": 2, "pcx\n{{"line": 3}}\n')
    with pytest.raises(InputError, match=r"out.partial:3: damaged.*--overwrite"):
        resumable_records(str(path), {"log_base": "e"}, [1, 2, 3])
    path.write_text(f'{head}\n{{"line": 1}}\n[1, 2]\n')  # JSON, but not a record
    with pytest.raises(InputError, match=r"out.partial:3: damaged"):
        resumable_records(str(path), {"log_base": "e"}, [1, 2, 3])
    path.write_text(f'{head}\n{{"line": 1}}\n{{"line": 2, "pcx')  # cut off by an interruption: resumed
    assert [r["line"] for r in resumable_records(str(path), {"log_base": "e"}, [1, 2, 3])] == [1]
