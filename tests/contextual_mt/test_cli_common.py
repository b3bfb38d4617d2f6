"""``contextual_mt.cli.common``: a typed command's side outputs (cxmi's summary and .partial,
attribute's, report's files) are read off its options object, the one the command runs on."""

import argparse
from dataclasses import dataclass

from commandkit.command_outputs import command_outputs
from commandkit.options import option
from contextual_mt.cli.common import cxmi_side_outputs, typed_command


@dataclass
class _Toy:
    output: str = option(required=True)


def test_side_outputs_get_the_options_object_the_command_runs_on(tmp_path):
    seen = []

    def side(options):
        seen.append(options)
        return cxmi_side_outputs(options)

    def run(options):
        seen.append(options)
        return 0

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    typed_command(sub, "toy", _Toy, run, "a toy", output_args=("output",), side_outputs=side)
    args = parser.parse_args(["toy", "--output", str(tmp_path / "out.jsonl")])
    with command_outputs(args, parser):
        assert args.func(args) == 0
    assert len(seen) == 2 and isinstance(seen[0], _Toy)
    assert seen[0] is seen[1]  # made once
    assert [path for _, path in cxmi_side_outputs(seen[0])] == [
        str(tmp_path / "out.summary.json"),
        str(tmp_path / "out.jsonl.partial"),
    ]
