"""bench.alignment_versus's COMET column (issue 51 item 1): the truth and both tools are scored in
one batch, and each system's score must be what scoring it alone gives; the table shows the column
only when COMET was scored."""

import pytest

from bench import alignment_versus
from contextual_mt.metrics import comet_predict

SRCS = ["I see the small cat .", "It is green .", "The house is big and old ."]
REFS = ["Je vois le petit chat .", "Il est vert .", "La maison est grande et vieille ."]
HYPS = [REFS, ["Je vois le chat .", "", "La maison est vieille ."], ["Il est vert .", "Je vois", "La maison"]]


def test_one_batch_gives_each_system_its_own_score(comet_model):
    comet = alignment_versus.Comet(str(comet_model), SRCS, batch_size=2)
    together = comet.systems(HYPS, REFS)
    alone = [comet_predict(comet.scorer, SRCS, h, REFS, str(comet_model), 2, gpus=0)["score"] for h in HYPS]
    assert together == pytest.approx(alone, abs=1e-6)
    assert len({round(s, 6) for s in together}) == 3  # the systems differ: a mix-up would show


def _result(comet):
    row = dict.fromkeys(alignment_versus.COLUMNS, 0.5)
    row.update({"COMET - true": comet, "link accuracy": None})
    return {"distance": "noise 0.3", "tools": {"align": row, "mweralign": dict(row)}}


def test_the_table_has_the_comet_column_only_when_scored():
    with_comet = alignment_versus.table([_result(-0.01234)])
    assert "COMET - true" in with_comet.splitlines()[0] and "-0.0123" in with_comet
    without = alignment_versus.table([_result(None)])
    assert "COMET - true" not in without and without.splitlines()[2].count("|") == len(alignment_versus.COLUMNS) + 2


def test_a_missing_comet_model_is_one_line_before_any_work(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:  # no demo, no mweralign: the option is checked first
        alignment_versus.main(["--demo", str(tmp_path), "--mweralign", "absent", "--comet", str(tmp_path / "none")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--comet:" in err and "COMET model not found" in err and "Traceback" not in err
