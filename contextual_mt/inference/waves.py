"""The one decoding driver of document translation (fairseq, CADec and Hugging Face alike):
``decode_documents`` picks how a backend's ``decode_wave`` is run and returns the outputs with a
record of how they were decoded.

* one pass: no sentence waits for another's translation (references as target context, or no
  target context): one wave of all sentences, batched freely by length;
* waves: wave t translates the t-th sentence of every document that has one, batched across
  documents, so each sentence's target context (its document's previous translations) is ready
  when it is decoded;
* parallel rounds (``translate_in_rounds``): the waves' output in fewer, fuller batches.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, TypeVar

from tqdm import tqdm

from contextual_mt.inference.context_trim import last_sentences

logger = logging.getLogger(__name__)
T = TypeVar("T")

# (sentence index, indices of the previous sentences of its document, oldest first)
Item = Tuple[int, Sequence[int]]


def waves(docs: Sequence[Sequence[int]], sequential: bool = True) -> List[List[Item]]:
    """The waves of ``docs`` (lists of sentence indices), documents in the order given."""
    if not sequential:
        return [[(d[t], d[:t]) for d in docs for t in range(len(d))]]
    return [[(d[t], d[:t]) for d in docs if len(d) > t] for t in range(max((len(d) for d in docs), default=0))]


def translate_in_waves(
    docs: Sequence[Sequence[int]],
    total: int,
    decode_wave: Callable[[List[Item], Sequence[Optional[T]]], Iterable[Sequence[Tuple[int, T]]]],
    sequential: bool = True,
    desc: str = "translate",
    progress: bool = True,
) -> List[Optional[T]]:
    """Run ``decode_wave(wave, predicted)`` on every wave; it reads the translations so far in
    ``predicted`` (by sentence index) and yields (index, translation) lists as batches finish."""
    predicted: List[Optional[T]] = [None] * total
    bar = tqdm(total=total, unit="sent", desc=desc, disable=not progress)
    for wave in waves(docs, sequential):
        for done in decode_wave(wave, predicted):
            for i, output in done:
                predicted[i] = output
            bar.update(len(done))
    bar.close()
    return predicted


@dataclass
class RoundStats:
    """What a parallel decoding did: its rounds, how many sentences each translated, and how
    many of those translations were of a sentence translated before (its context had changed)."""

    rounds: int = 0
    translated: List[int] = field(default_factory=list)
    retranslated: int = 0

    def as_record(self) -> Dict:
        """What a translation record keeps of it (``make translate``'s translate.json)."""
        return {
            "decoding": "parallel",
            "rounds": self.rounds,
            "sentences_translated": sum(self.translated),
            "translated_per_round": list(self.translated),
            "retranslated": self.retranslated,
        }


def translate_in_rounds(
    docs: Sequence[Sequence[int]],
    total: int,
    decode_wave: Callable[[List[Item], Sequence[Optional[T]]], Iterable[Sequence[Tuple[int, T]]]],
    context_size: int,
    window: int,
    empty: T,
    desc: str = "translate",
    progress: bool = True,
) -> Tuple[List[Optional[T]], RoundStats]:
    """The waves' output, with fewer, fuller batches: each round translates, in every document,
    the first sentence not yet final and up to ``window`` - 1 after it, each with the context the
    translations of the round before give it, and only those whose context changed since they
    were last translated. A sentence is final once its predecessors are and its context was
    theirs: then it holds exactly what the waves would give it, so when every sentence is final
    the output is the waves' (for a decoder whose output depends on its own row only). At least
    one sentence per document becomes final each round: never more rounds than waves; each
    round translates at most ``window`` sentences per document (``window`` 1: the waves). A
    predecessor not translated yet reads as ``empty`` (an empty translation of the backend)."""
    predicted: List[Optional[T]] = [None] * total
    used: Dict[int, tuple] = {}  # sentence -> the context it was last translated with
    final = [0] * len(docs)  # per document: how many leading sentences are final
    stats = RoundStats()

    def view(j: int) -> T:
        p = predicted[j]
        return empty if p is None else p

    def key(prev: Sequence[int]) -> tuple:
        # the predictions the context is made of (the last ``context_size``): equal keys, equal rows
        return tuple(_frozen(view(j)) for j in last_sentences(prev, context_size))

    bar = tqdm(total=total, unit="sent", desc=desc, disable=not progress)
    while True:
        todo: List[Item] = []
        for d, doc in enumerate(docs):
            for t in range(final[d], min(final[d] + window, len(doc))):
                if doc[t] not in used or used[doc[t]] != key(doc[:t]):  # new, or its context changed
                    todo.append((doc[t], doc[:t]))
        if not todo:
            break
        snapshot = [view(j) for j in range(total)]  # every row of a round reads the round's start
        keys = {i: key(prev) for i, prev in todo}
        stats.retranslated += sum(i in used for i, _ in todo)
        for done in decode_wave(todo, snapshot):
            for i, output in done:
                predicted[i] = output
                used[i] = keys[i]
        stats.rounds += 1
        stats.translated.append(len(todo))
        before = sum(final)
        for d, doc in enumerate(docs):
            while final[d] < len(doc) and doc[final[d]] in used and used[doc[final[d]]] == key(doc[: final[d]]):
                final[d] += 1
        bar.update(sum(final) - before)
    bar.close()
    return predicted, stats


class Translations(list):
    """A translator's output lines (a list), with ``record``: how they were decoded (what
    ``make translate``'s translate.json keeps: one pass, sequential, or the parallel rounds)."""

    def __init__(self, lines: Iterable, record: Dict, rounds: Optional[RoundStats] = None):
        super().__init__(lines)
        self.record = record
        self.rounds = rounds


def decode_documents(
    docs: Sequence[Sequence[int]],
    total: int,
    decode_wave: Callable[[List[Item], Sequence[Optional[T]]], Iterable[Sequence[Tuple[int, T]]]],
    options,
    device_type: str,
    predicted_context: bool,
    target_context_size: int,
    empty: T,
    desc: str = "translate",
    progress: bool = True,
) -> Tuple[List[Optional[T]], Dict, Optional[RoundStats]]:
    """Decode every sentence of ``docs`` with ``decode_wave`` as ``options``
    (``DecodingOptions``) ask on this device: (outputs by sentence index, how they were decoded,
    the rounds' statistics or None). ``predicted_context``: a sentence reads the model's own
    translations of the sentences before it (then it waits for them)."""
    if predicted_context and options.parallel(device_type):
        predicted, stats = translate_in_rounds(
            docs, total, decode_wave, target_context_size, options.window, empty, desc=desc, progress=progress
        )
        if progress:  # progress, as the bars are (the record keeps the figures): not under --quiet
            logger.info("parallel decoding: %d rounds, %d sentences translated again", stats.rounds, stats.retranslated)
        return predicted, stats.as_record(), stats
    predicted = translate_in_waves(
        docs, total, decode_wave, predicted_context or not options.free_batching, desc=desc, progress=progress
    )
    return predicted, {"decoding": "sequential" if predicted_context else "one pass"}, None


def _frozen(value):
    """A prediction as a dictionary key (token lists become tuples)."""
    return tuple(value) if isinstance(value, list) else value
