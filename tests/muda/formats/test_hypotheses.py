"""fairseq-generate output: the best of each n-best list, and two different runs in one file."""

import pytest

from commandkit.errors import InputError
from muda.formats.hypotheses import load_hypotheses, parse_fairseq, parse_fairseq_output


def run(hyps, nbest=1, order=None, with_source=True):
    """fairseq-generate's lines for ``hyps`` (sample id -> best text): per sample S-, T-, then
    H-, D-, P- for each of the n best (the alternatives get ' altK')."""
    lines = []
    for i in order or range(len(hyps)):
        if with_source:
            lines += [f"S-{i}\tsource {i}", f"T-{i}\treference {i}"]
        for k in range(nbest):
            text = hyps[i] + (f" alt{k}" if k else "")
            lines += [f"H-{i}\t-0.{k + 1}\t{text}", f"D-{i}\t-0.{k + 1}\t{text}", f"P-{i}\t-0.1 -0.2"]
    return lines


HYPS = ["a b .", "c d .", "e f ."]


def test_nbest_keeps_the_first_of_each_sample():
    lines = run(HYPS, nbest=3, order=[2, 0, 1])
    assert parse_fairseq_output(lines, "gen.out", 3) == HYPS
    got = parse_fairseq(lines, "gen.out", 3)
    assert [lines[n - 1] for n in got.line_numbers] == [f"D-{i}\t-0.1\t{HYPS[i]}" for i in range(3)]


def test_nbest_without_source_lines_keeps_the_first():
    lines = [text for text in run(HYPS, nbest=2) if text.startswith("H-")]  # grep ^H
    assert parse_fairseq_output(lines, "gen.out", 3) == HYPS


def test_the_same_run_twice_is_accepted():
    assert parse_fairseq_output(run(HYPS) + run(HYPS, order=[1, 2, 0]), "gen.out", 3) == HYPS
    assert parse_fairseq_output(run(HYPS, nbest=2) + run(HYPS, nbest=2), "gen.out", 3) == HYPS


@pytest.mark.parametrize("order", [None, [2, 1, 0], [2, 0, 1]])
def test_two_runs_with_different_outputs_are_an_error_naming_the_second(order):
    """Two fairseq-generate runs in one file whose hypotheses differ: an error naming the second
    one's line. Also when the second run starts with the sample that ended the first (its S- line
    starts a new block)."""
    other = ["a b .", "C D .", "e f ."]
    first = run(HYPS, order=[0, 2, 1] if order == [2, 0, 1] else None)
    lines = first + run(other, order=order)
    second = len(first) + next(n for n, text in enumerate(run(other, order=order), start=1) if text.startswith("D-1\t"))
    with pytest.raises(
        InputError,
        match=rf"gen.out:{second}: sample id 1 again, with another hypothesis than at "
        rf"line \d+ \('C D \.' vs 'c d \.'\)",
    ):
        parse_fairseq_output(lines, "gen.out", 3)


def test_two_runs_without_source_lines_are_an_error():
    lines = [text for text in run(HYPS) + run(["x .", "y .", "z ."]) if text.startswith("H-")]
    with pytest.raises(InputError, match=r"gen.out:4: sample id 0 again"):
        parse_fairseq_output(lines, "gen.out", 3)


def test_a_sample_beyond_the_reference_names_its_line(tmp_path):
    with pytest.raises(InputError, match=r"gen.out:\d+: sample id 2 but the reference has only 2 lines"):
        parse_fairseq_output(run(HYPS), "gen.out", 2)
    (tmp_path / "plain.txt").write_text("x\ny\n")
    assert load_hypotheses(str(tmp_path / "plain.txt"), 2).line_numbers == [1, 2]
