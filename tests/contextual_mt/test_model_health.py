"""model_health: a unigram model's loss as the yardstick of an untrained model, degenerate
translations, and the one loader's warning."""

import logging
from types import SimpleNamespace

import pytest

from contextual_mt.backends.fairseq.checkpoint_file import dictionary_counts, label_smoothing, validation_loss
from contextual_mt.inference.model_health import (
    check_loss,
    check_outputs,
    unigram_loss,
    warn_if_degenerate,
    warn_if_untrained,
)

HEALTH = "contextual_mt.inference.model_health"


def test_unigram_loss_by_hand():
    # add-one: p = 2/6, 4/6; H = 1/3 log2 3 + 2/3 log2 1.5 = 0.918296
    assert unigram_loss([1, 3]) == pytest.approx(0.918296, abs=1e-6)
    # label smoothing 0.1: 0.9 H + 0.1 * mean(log2 3, log2 1.5) = 0.826466 + 0.108496
    assert unigram_loss([1, 3], 0.1) == pytest.approx(0.934962, abs=1e-6)


def test_unigram_loss_of_a_dictionary_file(tmp_path):
    path = tmp_path / "dict.fr.txt"
    path.write_text("a 15\nb 7\n", encoding="utf-8")
    counts = dictionary_counts(str(path))
    assert list(counts) == [1, 1, 1, 1, 15, 7]  # fairseq's <s> <pad> </s> <unk> first, once each
    # add-one: 2,2,2,2,16,8 of 32 -> p = 1/16 (x4), 1/2, 1/4: bits 4,4,4,4,1,2
    # H = 4 * 4/16 + 1/2 + 2/4 = 2; the vocabulary's mean bits = 19/6
    assert unigram_loss(counts) == pytest.approx(2.0)
    assert unigram_loss(counts, 0.1) == pytest.approx(0.9 * 2 + 0.1 * 19 / 6)


def _state(extra, smoothing=0.1):
    cfg = SimpleNamespace(criterion=SimpleNamespace(_name="label_smoothed_cross_entropy", label_smoothing=smoothing))
    return {"extra_state": extra, "cfg": cfg}


def test_checkpoint_figures():
    assert validation_loss(_state({"val_loss": 12.5, "best": 12.0})) == 12.5  # the loss of these weights
    assert validation_loss(_state({"best": 3.25})) == 3.25
    assert validation_loss(_state({"val_loss": None})) is None and validation_loss({}) is None
    assert label_smoothing(_state({}, 0.2)) == 0.2
    assert label_smoothing({"cfg": SimpleNamespace(criterion=SimpleNamespace(_name="cross_entropy"))}) == 0.0
    assert label_smoothing({"cfg": None, "args": SimpleNamespace(label_smoothing=0.1)}) == 0.1


def test_loss_above_or_below_the_unigram_model(caplog):
    counts = [1, 1, 1, 1, 15, 7]  # unigram loss 2.0 bits without smoothing
    with caplog.at_level(logging.WARNING, logger=HEALTH):
        high = warn_if_untrained("ckpt.pt", validation_loss(_state({"val_loss": 2.5})), counts, 0.0)
        low = warn_if_untrained("ok.pt", validation_loss(_state({"val_loss": 1.5})), counts, 0.0)
        unknown = warn_if_untrained("old.pt", validation_loss({}), counts, 0.0)
    assert high.looks_untrained and not low.looks_untrained and not unknown.looks_untrained
    assert [r.getMessage() for r in caplog.records] == [
        "ckpt.pt: validation loss 2.50 bits is no better than a unigram model of the target (2.00): the model "
        "looks untrained; translations, scores and CXMI from it mean little"
    ]
    assert check_loss(2.0, counts).looks_untrained  # equal is no better


@pytest.mark.parametrize(
    "hyps,sources,degenerate,message",
    [
        ([","] * 12, None, True, "out.txt: all 12 translations are the same (',')"),
        (["Oui."] * 3, None, False, None),  # a handful of lines may well have one translation
        (
            [", , ,", ",,,,", "", "Bonjour."],
            None,
            True,
            "out.txt: 3 of 4 translations are mostly one token repeated or empty (e.g. ', , ,')",
        ),
        (["Bonjour.", "Oui", "Merci beaucoup", "la la"], None, False, None),
        (["", "", "Bonjour.", "Merci."], ["", " ", "Hello.", "Thanks."], False, None),  # empty sources left out
        (["Oui"], None, False, None),  # one short answer is no sign of anything
        (  # an untrained model's translations of chunks of documents (--unit document)
            ["see see seeiii see see enen see", "see see see seeii see"],
            None,
            True,
            "out.txt: 2 of 2 translations are mostly one token repeated or empty "
            "(e.g. 'see see seeiii see see enen see')",
        ),
        (["Il voit le chat et le chien .", "Le chat le voit ."], None, False, None),  # "le" twice is no sign
    ],
)
def test_degenerate_outputs(hyps, sources, degenerate, message, caplog):
    assert check_outputs(hyps, sources).degenerate is degenerate
    with caplog.at_level(logging.WARNING, logger=HEALTH):
        warn_if_degenerate("out.txt", hyps, sources)
    got = [r.getMessage() for r in caplog.records]
    assert got == ([message + ": the model looks untrained"] if degenerate else [])


def test_the_loader_warns_for_an_untrained_model_only(zoo, dynamic_model, data_bin, caplog):
    """The zoo's one-epoch sentence model (validation loss ~10 bits on a 42-piece target
    dictionary) is worse than a unigram model; the dynamic model (more epochs) is not."""
    from contextual_mt.backends.fairseq.model import load_document_model

    untrained = str(zoo.checkpoint("sentence"))
    with caplog.at_level(logging.WARNING, logger=HEALTH):
        load_document_model(untrained, data=str(data_bin))
        load_document_model(str(dynamic_model), data=str(data_bin))
    warned = [r.getMessage() for r in caplog.records if r.name == HEALTH]
    assert len(warned) == 1 and warned[0].startswith(f"{untrained}: validation loss ")
    assert "no better than a unigram model of the target" in warned[0]
