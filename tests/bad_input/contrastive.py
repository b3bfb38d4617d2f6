"""Bad-input cases: contextual-mt contrastive."""

from __future__ import annotations

import json
from typing import Callable, List

from commandkit.errors import Code
from tests.bad_input.core import (
    EMPTY,
    FORMAT,
    IS_INPUT,
    LINES,
    MODEL,
    MUST,
    NOT_FOUND,
    NOT_GIVEN,
    TOO_LONG,
    Ctx,
    Fragment,
    add,
    at_line,
    do,
    file_cases,
    lines_of,
    opt,
    option_cases,
    output_cases,
)


def voita_set(w, n: int = 6, context: int = 2) -> list:
    """A Voita-format set from the test corpus: each sentence, with up to ``context`` previous
    lines as context, against itself with its last word repeated."""
    src, ref = lines_of(w.src)[:n], lines_of(w.ref)[:n]
    entries = []
    for i in range(n):
        lo = max(0, i - context)
        dst = [ref[i], ref[i] + " " + ref[i].split()[-1]]
        entries.append(
            {
                "src": " _eos ".join(src[lo : i + 1]),
                "dst": [" _eos ".join([*ref[lo:i], d]) for d in dst],
                "true_ind": 0,
                "ctx_dist": 1,
            }
        )
    return entries


def contrastive_command(c: Ctx) -> None:
    c.command = "contextual-mt"
    path = c.write("set.json", json.dumps(voita_set(c.w)))
    c.argv = [
        "contrastive",
        "--format",
        "voita",
        "--input",
        path,
        "--path",
        c.w.ckpt,
        "--output",
        c.o("s.scores"),
        "--summary",
        c.o("s.json"),
        "--cpu",
        "--quiet",
    ]
    c.absent = [c.o("s.scores"), c.o("s.json"), c.o("s.scores.partial")]


def contrastive_entry(name: str, edit: Callable[[list], None], *fragments: Fragment):
    def mutate(c: Ctx) -> List[Fragment]:
        entries = voita_set(c.w)
        edit(entries)
        c.set("--input", c.write(f"{name}.json", json.dumps(entries)))
        return [f"{name}.json", *fragments]

    return mutate


file_cases(
    "contrastive", contrastive_command, "--input", lambda w: w.src, kinds=("missing", "dir", "latin1"), ext=".json"
)
add(
    "contrastive-input-empty",
    contrastive_command,
    opt("--input", lambda c: c.write("empty.json", ""), "empty.json", EMPTY.also("not JSON", codes=(Code.FORMAT,))),
)
add(
    "contrastive-input-not-json",
    contrastive_command,
    opt("--input", lambda c: c.write("bad.json", '[{"src": 1,\n'), "bad.json:", "JSON", FORMAT),
)
add("contrastive-format-unknown", contrastive_command, opt("--format", "xyz", "--format", "unknown", MUST))
add(
    "contrastive-true-ind-out-of-range",
    contrastive_command,
    contrastive_entry("true_ind", lambda e: e[3].update(true_ind=5), "entry 3", "true_ind", "out of range", FORMAT),
)
add(
    "contrastive-empty-group",
    contrastive_command,
    contrastive_entry("empty_group", lambda e: e[2].update(dst=[]), "entry 2", "empty", EMPTY),
)
add(
    "contrastive-one-candidate",
    contrastive_command,
    contrastive_entry("one", lambda e: e[1].update(dst=e[1]["dst"][:1]), "entry 1", "1 candidate", FORMAT),
)
add(
    "contrastive-empty-candidate",
    contrastive_command,
    contrastive_entry(
        "blank", lambda e: e[4]["dst"].__setitem__(1, "a _eos "), "entry 4", "candidate 1", "empty", EMPTY
    ),
)
add(
    "contrastive-overlong-candidate",
    contrastive_command,
    contrastive_entry(
        "long",
        lambda e: e[2]["dst"].__setitem__(1, " ".join(["chat"] * 3000)),
        "entry 2",
        "candidate 1",
        "positions",
        TOO_LONG,
    ),
)
add(
    "contrastive-contrapro-context-count",
    contrastive_command,
    do(
        lambda c: (
            c.set("--format", "contrapro"),
            c.set(
                "--input",
                c.write(
                    "contrapro.json",
                    json.dumps(
                        [
                            {
                                "src segment": "it is big .",
                                "ref segment": "il est grand .",
                                "ante distance": 1,
                                "errors": [{"contrastive": "elle est grand ."}],
                            }
                        ]
                    ),
                ),
            ),
            c.set(
                "--context-files",
                c.write_lines("cp.text.en", ["it is big ."] * 2),
                c.write_lines("cp.text.de", ["a"] * 2),
                c.write_lines("cp.context.en", ["x"] * 3),
                c.write_lines("cp.context.de", ["y"] * 2),
            ),
        ),
        "context",
        ("multiple", "candidates"),
        LINES,
    ),
)
add(
    "contrastive-scores-wrong-length",
    contrastive_command,
    do(
        lambda c: (
            c.drop("--path"),
            c.drop("--output"),
            c.set("--scores", c.write_lines("short.scores", ["1.0"] * 11)),
        ),
        "short.scores",
        "12 candidates",
        LINES,
    ),
)
add(
    "contrastive-scores-not-a-number",
    contrastive_command,
    do(
        lambda c: (
            c.drop("--path"),
            c.drop("--output"),
            c.set("--scores", c.write_lines("nan.scores", ["1.0"] * 5 + ["x"] + ["1"] * 6)),
        ),
        at_line("nan.scores", 6),
        "number",
        FORMAT,
    ),
)
add(
    "contrastive-no-path-no-scores",
    contrastive_command,
    do(lambda c: c.drop("--path"), "--path", "--scores", NOT_GIVEN),
)
add(
    "contrastive-path-missing",
    contrastive_command,
    opt("--path", lambda c: c.missing("nothere.pt"), ("nothere.pt", "--path"), NOT_FOUND),
)
add(
    "contrastive-path-stock-translation-checkpoint",
    contrastive_command,
    opt(
        "--path", lambda c: c.w.ckpt_stock, ("stock_translation.pt", "--path"), ("document_translation", "task"), MODEL
    ),
)
add(
    "contrastive-summary-same-as-output",
    contrastive_command,
    opt("--summary", lambda c: c.value("--output"), "s.scores", ("same", "twice"), IS_INPUT),
)
add(
    "contrastive-output-overwrites-input",
    contrastive_command,
    opt("--output", lambda c: c.value("--input"), "set.json", ("overwrite", "input"), IS_INPUT),
)
option_cases(
    "contrastive", contrastive_command, [("--batch-size", "0"), ("--max-tokens", "0"), ("--source-context-size", "-1")]
)
output_cases("contrastive", contrastive_command, "--output", "s.scores")
output_cases("contrastive", contrastive_command, "--summary", "s.json")
