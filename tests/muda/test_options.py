"""Option dataclasses check their values when built, before any file is read or model loaded:
one InputError naming the option. (EvalOptions: tests/muda/evaluation/test_eval_checks.py.)"""

import pytest

from commandkit.errors import InputError
from muda.annotators.ellipsis_bert import TrainEllipsisOptions, train_ellipsis
from muda.annotators.models import AnnotatorOptions
from muda.settings import TaggerSettings
from muda.tagger import MudaTagger, TagOptions


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"tgt_lang": "xx"}, "unknown target language 'xx'"),
        ({"tgt_lang": None}, "--tgt-lang must be a language code"),
        ({"phenomena": ["pronouns", "foo"]}, "unknown phenomenon 'foo'"),
        ({"phenomena": "pronouns"}, "phenomena must be a list of names"),
        ({"dump_tags": ""}, "--dump-tags: a file path is required"),
        ({"settings": {"lexical_min_count": 2}}, "settings must be a TaggerSettings"),
    ],
)
def test_tag_options(change, needle):
    values = {"src": "nope.en", "tgt": "nope.fr", "docids": "nope.ids", "tgt_lang": "fr", "dump_tags": "x.json"}
    values.update(change)
    with pytest.raises(InputError, match=needle):
        TagOptions(**values)


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"lexical_min_count": 0}, r"--lexical-min-count must be >= 1 \(got 0\)"),
        ({"lexical_min_count": 1.5}, "--lexical-min-count must be an integer"),
        ({"same_sentence_counts": "yes"}, "--same-sentence-counts must be true or false"),
    ],
)
def test_tagger_settings(change, needle):
    with pytest.raises(InputError, match=needle):
        TaggerSettings(**change)


def test_tagger_settings_round_trip_through_json():
    s = TaggerSettings(lexical_min_count=5, same_sentence_counts=True)
    assert TaggerSettings.from_json(s.to_json(), "x") == s
    with pytest.raises(InputError, match="x: 'settings' is not"):
        TaggerSettings.from_json({"colour": 1}, "x")


def test_an_empty_list_of_phenomena_tags_nothing():
    assert MudaTagger("fr", []).phenomena == [] and MudaTagger("fr").phenomena


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"coref_window": -1}, r"--coref-window must be >= 0 \(got -1\)"),
        ({"batch_size": 0}, r"--batch-size must be >= 1 \(got 0\)"),
        ({"batch_size": float("inf")}, "--batch-size must be an integer"),
        ({"align_model": ""}, "--align-model: a model name or path is required"),
    ],
)
def test_annotator_options(change, needle):
    with pytest.raises(InputError, match=needle):
        AnnotatorOptions(**change)


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"epochs": 0}, r"--epochs must be >= 1 \(got 0\)"),
        ({"batch_size": 0}, "--batch-size must be >= 1"),
        ({"lr": 0.0}, r"--lr must be > 0 \(got 0.0\)"),
        ({"lr": float("nan")}, "--lr must be a finite number"),
        ({"positive_weight": -1.0}, "--positive-weight must be > 0"),
        ({"positive_weight": float("inf")}, "--positive-weight must be a finite number"),
    ],
)
def test_train_ellipsis_options(change, needle, tmp_path):
    with pytest.raises(InputError, match=needle):
        TrainEllipsisOptions(**change)
    # train_ellipsis checks them before reading the trees (there are none) or loading a model
    with pytest.raises(InputError, match=needle):
        train_ellipsis(
            TrainEllipsisOptions(
                ptb=[str(tmp_path / "none.mrg")],
                base_model=str(tmp_path / "no-model"),
                output=str(tmp_path / "out"),
                **change,
            )
        )
    assert not list(tmp_path.iterdir())


def test_the_annotation_cache_follows_xdg_cache_home(monkeypatch, tmp_path):
    """The default cache is $XDG_CACHE_HOME/contextual-mt/muda (the XDG rule: only an absolute
    XDG_CACHE_HOME counts), else ~/.cache/contextual-mt/muda; --cache-dir wins over both."""
    import os

    from muda.annotators.cache import AnnotationCache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert AnnotationCache().directory == str(tmp_path / "xdg" / "contextual-mt" / "muda")
    assert AnnotationCache(str(tmp_path / "given")).directory == str(tmp_path / "given")
    home = os.path.join(os.path.expanduser("~"), ".cache", "contextual-mt", "muda")
    for value in ("", "relative/cache"):
        monkeypatch.setenv("XDG_CACHE_HOME", value)
        assert AnnotationCache().directory == home


def test_the_command_line_builds_the_library_options_themselves():
    """One options class per command, shared by the command line and the library: what ``muda``
    parses is the very object the library functions take (no second class kept in step by glue)."""
    from commandkit.options import from_namespace
    from muda.annotators.download import DownloadOptions, download_plan
    from muda.cli import SUBCOMMANDS, build_parser
    from muda.commands import options as command_options

    classes = {name: getattr(command_options, cls) for name, cls, _ in SUBCOMMANDS}
    assert classes["download"] is DownloadOptions and classes["train-ellipsis"] is TrainEllipsisOptions
    parser = build_parser()
    tag_line = [
        "tag",
        "--src",
        "a.en",
        "--tgt",
        "a.fr",
        "--docids",
        "a.ids",
        "--tgt-lang",
        "fr",
        "--dump-tags",
        "t.json",
    ]
    tag = from_namespace(TagOptions, parser.parse_args([*tag_line, "--coref-window", "3", "--cpu"]))
    assert type(tag.annotators) is AnnotatorOptions
    assert (tag.annotators.coref_window, tag.annotators.cpu) == (3, True)
    args = parser.parse_args(["download", "--tgt-lang", "de", "--no-source", "--no-aligner", "--stanza-dir", "s"])
    download = from_namespace(DownloadOptions, args)
    assert [m.kind for m in download_plan(download)] == ["stanza"]
    args = parser.parse_args(["train-ellipsis", "a.mrg", "--output", "m", "--epochs", "2", "--cpu"])
    train = from_namespace(TrainEllipsisOptions, args)
    assert (train.ptb, train.output, train.epochs, train.cpu, train.max_length) == (["a.mrg"], "m", 2, True, 128)
    with pytest.raises(InputError, match=r"--coref-window must be >= 0 \(got -1\)"):
        from_namespace(TagOptions, parser.parse_args([*tag_line, "--coref-window", "-1"]))
