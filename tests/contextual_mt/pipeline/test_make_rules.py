"""The Makefile's stage targets and the Slurm job scripts are written from the one stage table
(contextual_mt/pipeline/stages.py, by contextual_mt/pipeline/make_rules.py): what is checked in is
what the table makes, and each piece of the table reaches them."""

import dataclasses

from contextual_mt.pipeline import make_rules, stages
from tests.contextual_mt.pipeline.chain import ROOT


def test_the_makefile_and_the_sbatch_scripts_are_what_the_table_makes():
    assert make_rules.stale(str(ROOT)) == []


def test_a_change_to_the_table_reaches_the_makefile_and_the_scripts(monkeypatch):
    beam = stages.MakeVar("BEAM", "--beam-size", when="given")
    translate = stages.STAGES[2]
    target = dataclasses.replace(translate.targets[0], options=(beam,))
    changed = dataclasses.replace(translate, targets=(target,), requeue=True)
    monkeypatch.setattr(stages, "EVERY", (*stages.EVERY[:2], changed, *stages.EVERY[3:]))
    monkeypatch.setattr(make_rules, "EVERY", stages.EVERY)
    assert sorted(make_rules.stale(str(ROOT))) == ["Makefile", "recipes/slurm/translate.sbatch"]
    assert (
        "$(STAGE) translate $(PAIR_OPTS) $(if $(call given,BEAM),--beam-size $(BEAM),)" in make_rules.makefile_block()
    )
    assert stages.make_variables()["--beam-size"] == "BEAM"


def test_every_stage_target_is_documented_and_runs_its_command():
    block = make_rules.makefile_block()
    for s in stages.EVERY:
        for t in s.targets:
            assert f"## target {t.name}: " in block and f"\n{t.name}:\n" in block
            assert f"$(STAGE) {t.command}" in block


def test_check_without_the_makefile_block_is_one_line_and_status_1(tmp_path, monkeypatch, capsys):
    (tmp_path / "Makefile").write_text("all:\n\ttrue\n", encoding="utf-8")  # no `# stages:` block
    monkeypatch.chdir(tmp_path)
    assert make_rules.main(["--check"]) == 1  # not SystemExit out of a library function
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: Makefile: no block between '{make_rules.BEGIN}' and '{make_rules.END}'"]


def test_an_unknown_argument_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys):
    (tmp_path / "Makefile").write_text("all:\n\ttrue\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert make_rules.main(["--chek"]) == 1  # a typo of --check must not rewrite the files
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown arguments '--chek'" in err[0]
    assert (tmp_path / "Makefile").read_text(encoding="utf-8") == "all:\n\ttrue\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Makefile"]
