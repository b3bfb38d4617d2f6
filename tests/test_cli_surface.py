"""Every command's options, defaults, help and usage errors are those of the fixture (issue 37: the
option dataclasses became the one source of the parsers, and the command line did not change)."""

import json
import os

from tests.cli_surface import current_surface

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "cli_surface.json")


def test_every_command_line_is_unchanged():
    with open(FIXTURE, encoding="utf-8") as f:
        expected = json.load(f)
    actual = json.loads(json.dumps(current_surface()))
    assert sorted(actual) == sorted(expected)
    for command in expected:
        for key in expected[command]:
            assert actual[command][key] == expected[command][key], (command, key)
