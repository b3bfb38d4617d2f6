"""--scoring muda: its inputs are checked when the scorer is built, and muda's errors name the
scorer's own flags (--muda-*)."""

import dataclasses

import pytest

from commandkit.errors import InputError
from contextual_mt.backends.fairseq.generation import generation_order
from contextual_mt.backends.fairseq.generation.muda_scorer import MudaScorer, MudaScorerConfig, as_scorer_flags
from contextual_mt.demo.corpus import generate_demo_data


@pytest.fixture(autouse=True)
def recorder_off():
    yield
    generation_order.start()  # forget what the tests recorded, and stop recording
    generation_order._ACTIVE[0] = False


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    work = tmp_path_factory.mktemp("muda-scorer")
    generate_demo_data(str(work), train_docs=4, valid_docs=2, test_docs=6, seed=5)
    return work


def config(corpus, **changes):
    cfg = MudaScorerConfig(
        muda_ref_tags=str(corpus / "test.tags.json"),
        muda_docids=str(corpus / "test.docids"),
        muda_src=str(corpus / "test.en"),
        muda_tgt_lang="fr",
        muda_ref=str(corpus / "test.fr"),
        muda_src_conllu=str(corpus / "test.en.conllu"),
        muda_lexicon=",".join(str(corpus / f) for f in ("train.en.conllu", "train.fr.conllu", "train.align")),
    )
    return dataclasses.replace(cfg, **changes)


def test_flags_are_the_scorers():
    msg = as_scorer_flags("pass --src-conllu (CoNLL-U of --src), or --ref-tags; --lexicon, --tgt-lang, --docids")
    assert msg == (
        "pass --muda-src-conllu (CoNLL-U of --muda-src), or --muda-ref-tags; --muda-lexicon, "
        "--muda-tgt-lang, --muda-docids"
    )
    assert as_scorer_flags("--muda-src-conllu and --hyps") == "--muda-src-conllu and --hyps"


def test_good_inputs_build(corpus):
    scorer = MudaScorer(config(corpus))
    assert scorer.lexicon is not None


def short(corpus, tmp_path, name, keep=-1):
    path = tmp_path / name
    path.write_text("\n".join((corpus / name).read_text().splitlines()[:keep]) + "\n")
    return str(path)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda c, t: {"muda_docids": str(t / "none.docids")}, "none.docids: docids file not found"),
        (lambda c, t: {"muda_docids": short(c, t, "test.docids")}, "test.docids: has"),
        (lambda c, t: {"muda_src": str(t)}, "is a directory"),
        (lambda c, t: {"muda_ref": short(c, t, "test.fr")}, "test.fr: has"),
        (lambda c, t: {"muda_tgt_lang": "xx"}, "unknown target language 'xx'"),
        (lambda c, t: {"muda_ref_tags": short(c, t, "test.tags.json", 0)}, "not a JSON file"),
        (lambda c, t: {"muda_ref_tags": str(c / "valid.tags.json")}, "valid.tags.json: "),
        (lambda c, t: {"muda_lexicon": str(c / "train.align")}, "--muda-lexicon takes three files"),
        (lambda c, t: {"muda_lexicon": f"{c}/train.en.conllu,{t}/no.conllu,{c}/train.align"}, "no.conllu"),
        (lambda c, t: {"muda_src_conllu": None}, "pass --muda-src-conllu (CoNLL-U of --muda-src"),
    ],
)
def test_bad_inputs_fail_when_the_scorer_is_built(corpus, tmp_path, change, message):
    with pytest.raises(InputError) as e:
        MudaScorer(config(corpus, **change(corpus, tmp_path)))
    assert message in str(e.value)
    assert "--src-conllu" not in str(e.value).replace("--muda-src-conllu", "")


def test_errors_during_evaluation_name_the_scorers_flags(corpus, monkeypatch):
    from muda.evaluation import evaluate as muda_run

    scorer = MudaScorer(config(corpus))
    n = len((corpus / "test.en").read_text().splitlines())
    for _ in range(n):
        scorer.add_string("ref", "hyp")
    generation_order.record(range(n))

    def fails(options, annotators):
        raise InputError("the --lexicon annotator cannot annotate the English source: pass --src-conllu")

    monkeypatch.setattr(muda_run, "run_eval", fails)
    with pytest.raises(
        InputError,
        match=r"^the --muda-lexicon annotator cannot annotate the English "
        r"source: pass --muda-src-conllu$",
    ):
        scorer.score()
