"""Every Make variable of `make translate` reaches its option of `contextual-mt pipeline translate`
(a dry run of make), and the option reaches the stage's decoding options."""

import subprocess

from tests.contextual_mt.pipeline.chain import ROOT


def dry_run(*variables: str) -> str:
    proc = subprocess.run(
        ["make", "-C", str(ROOT), "--no-print-directory", "-n", "translate", "LANG=fr", *variables],
        capture_output=True,
        text=True,
        check=True,
    )
    return next(line for line in proc.stdout.splitlines() if "pipeline translate" in line)


def test_make_translate_passes_decoding_beam_and_dtype():
    assert "--decoding 'parallel'" in dry_run("DECODING=parallel")
    assert "--beam 3" in dry_run("BEAM=3")
    assert "--dtype 'bfloat16'" in dry_run("DTYPE=bfloat16")
    line = dry_run()  # none given: the stage's own defaults (declared once, in its options)
    assert "--decoding" not in line and "--beam" not in line and "--dtype" not in line
    assert "--beam " in dry_run("BEAM=") + " "  # given empty: the stage says it needs a value


def test_pipeline_translate_decoding_reaches_the_decoding_options(tmp_path):
    from contextual_mt.api import options_from
    from contextual_mt.cli import build_parser
    from contextual_mt.pipeline.translate_stage import STUDY_BATCH_SIZE, TranslateStageOptions

    def stage_options(args):
        return options_from(TranslateStageOptions, args)

    def parsed(*extra):
        return build_parser().parse_args(["pipeline", "translate", "--lang", "fr", "--root", str(tmp_path), *extra])

    args = parsed("--decoding", "parallel")
    assert args.decoding == "parallel"
    assert stage_options(args).decoding.decoding == "parallel"
    assert stage_options(parsed()).decoding.decoding == "auto"  # DecodingOptions' default
    assert TranslateStageOptions("fr", str(tmp_path)).decoding.decoding == "auto"
    assert (
        stage_options(parsed()).decoding.batch_size
        == TranslateStageOptions("fr").decoding.batch_size
        == STUDY_BATCH_SIZE
        == 64
    )
    assert stage_options(parsed("--beam", "3", "--max-tokens", "900")).decoding.beam == 3
