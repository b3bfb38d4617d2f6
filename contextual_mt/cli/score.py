"""``contextual-mt score``: its options are ``ScoreOptions`` (``metrics``), its run
``contextual_mt.api.score``."""

from __future__ import annotations

from contextual_mt.cli.common import typed_command
from contextual_mt.metrics import ScoreOptions


def score(options: ScoreOptions) -> int:
    from contextual_mt import api
    from contextual_mt.metrics import summary_line

    result = api.score(options)
    print(summary_line(result))
    if options.output is None:
        import json

        print(json.dumps({k: v for k, v in result.items() if k != "files"}, indent=2))
    return 0


def add(sub) -> None:
    typed_command(
        sub,
        "score",
        ScoreOptions,
        score,
        "sacreBLEU BLEU and chrF, document-level BLEU, COMET and Doc-COMET",
        output_args=("output", "alignment_output"),
    )
