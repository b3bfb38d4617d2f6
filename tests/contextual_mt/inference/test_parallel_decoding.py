"""Parallel predicted-context decoding (``inference.waves.translate_in_rounds``) gives exactly the
waves' output, for any decoder whose output depends on its own row only; with fewer rounds."""

import hashlib
import random

import pytest

from contextual_mt.inference.waves import translate_in_rounds, translate_in_waves


def decoder(k, sensitive=lambda i: True, log=None):
    """A deterministic stand-in for a model: sentence i's 'translation' is a function of i and of
    the previous k predictions it is given (only i, where the context does not matter to it)."""

    def decode_wave(wave, predicted):
        if log is not None:
            log.append(len(wave))
        out = []
        for i, prev in wave:
            ctx = [tuple(predicted[j]) for j in (prev[len(prev) - k :] if k else [])] if sensitive(i) else []
            h = hashlib.sha256(repr((i, ctx)).encode()).digest()
            out.append((i, [h[0] % 5, h[1] % 5]))
        yield out[: len(out) // 2]  # as batches finish
        yield out[len(out) // 2 :]

    return decode_wave


def documents(lengths):
    docs, start = [], 0
    for n in lengths:
        docs.append(list(range(start, start + n)))
        start += n
    return docs, start


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("window", [1, 2, 5, 100])
def test_rounds_give_the_waves_output(k, window):
    docs, total = documents([1, 7, 30, 3, 12])
    sequential = translate_in_waves(docs, total, decoder(k), progress=False)
    parallel, stats = translate_in_rounds(docs, total, decoder(k), k, window, [], progress=False)
    assert parallel == sequential
    assert stats.rounds <= max(len(d) for d in docs)  # never more rounds than waves
    assert max(stats.translated) <= window * len(docs)


def test_one_change_ripples_through_every_later_sentence():
    # every translation depends on the one before: each round can only fix one more sentence,
    # so the rounds are the waves, and the output still theirs
    docs, total = documents([25])
    log = []
    parallel, stats = translate_in_rounds(docs, total, decoder(1, log=log), 1, 8, [], progress=False)
    assert parallel == translate_in_waves(docs, total, decoder(1), progress=False)
    assert stats.rounds == 25 and log[0] == 8 and stats.retranslated == sum(log) - 25  # each once first


def test_context_that_changes_nothing_costs_two_rounds_per_window():
    # a model that ignores its context: a window's speculative translations (made with the empty
    # predictions of predecessors not translated yet) are made again once with their real context,
    # and are then known final: two rounds per window instead of one wave per sentence
    docs, total = documents([20, 20, 5])
    parallel, stats = translate_in_rounds(docs, total, decoder(2, sensitive=lambda i: False), 2, 10, [], progress=False)
    assert parallel == translate_in_waves(docs, total, decoder(2, sensitive=lambda i: False), progress=False)
    assert stats.rounds == 4 and stats.translated[0] == 25  # 10 + 10 + 5 first translations


def test_random_documents_and_sensitivity():
    rng = random.Random(7)
    for _ in range(20):
        docs, total = documents([rng.randint(1, 15) for _ in range(rng.randint(1, 6))])
        touchy = {i for i in range(total) if rng.random() < 0.3}
        k, window = rng.randint(1, 3), rng.randint(1, 6)
        dec = decoder(k, sensitive=touchy.__contains__)
        parallel, stats = translate_in_rounds(docs, total, dec, k, window, [], progress=False)
        assert parallel == translate_in_waves(docs, total, dec, progress=False)
        assert stats.rounds <= max(len(d) for d in docs)
        assert stats.retranslated == sum(stats.translated) - total  # every sentence translated at least once


def test_the_rounds_line_is_progress_said_only_with_progress(caplog):
    """ "parallel decoding: N rounds, ..." is progress: not printed under --quiet (progress off)."""
    from types import SimpleNamespace

    from contextual_mt.inference.waves import decode_documents

    docs, total = documents([3, 4])
    options = SimpleNamespace(parallel=lambda device: True, window=4, free_batching=True)
    for progress, said in ((False, False), (True, True)):
        caplog.clear()
        with caplog.at_level("INFO", logger="contextual_mt.inference.waves"):
            _, record, _ = decode_documents(docs, total, decoder(1), options, "cpu", True, 1, [], progress=progress)
        assert record["decoding"] == "parallel"
        assert any("parallel decoding:" in r.getMessage() for r in caplog.records) == said
