"""Bad-input cases: the demo's data command, the test-set stages, merged shards, and the probe's defects (issue 38)."""

from __future__ import annotations

from tests.bad_input.attribute import attribute_command
from tests.bad_input.core import MODEL, MUST, NOT_GIVEN, Ctx, add, do, opt, option_cases
from tests.bad_input.score import score_command
from tests.bad_input.translate import translate_command


# ---- the demo's data command, the test-set stages, merged shards and the other late cases
def demo_data_command(c: Ctx) -> None:
    c.command = "contextual-mt"
    c.argv = ["demo-data", "--output", c.o("corpus"), "--train-docs", "5", "--valid-docs", "2", "--test-docs", "2"]
    c.absent = [c.o("corpus")]


option_cases("demo-data", demo_data_command, [("--train-docs", "0"), ("--test-docs", "100000000000")])
add("score-output-empty-path", score_command, opt("--output", "", "--output", "empty path", NOT_GIVEN))
add(
    "plan-shards-a-billion",
    lambda c: (
        setattr(c, "command", "contextual-mt"),
        setattr(c, "argv", ["pipeline", "plan", "--lang", "fr", "--root", str(c.out), "--shards", "1000000000"]),
    )[-1],
    opt("--shards", "1000000000", "--shards", MUST),
)


# ---- the probe's defects (issue 38): messages that fitted another command, warnings before the error
add(
    "attribute-context-sizes-zero",
    attribute_command,
    do(
        lambda c: (c.set("--source-context-size", "0"), c.set("--target-context-size", "0")),
        "0/0",
        "no token can depend on context",
        "attribution needs context",
        MODEL,
    ),
)
add(
    "translate-path-garbage-text",
    translate_command,
    opt(
        "--path",
        lambda c: c.write("garbage.pt", "garbage\n"),
        ("garbage.pt", "--path"),
        "not a checkpoint",
        ("damaged", "another kind"),
        MODEL,
    ),
)
