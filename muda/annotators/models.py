"""Model annotators behind one interface, for whatever the user did not pre-compute: stanza for
morphology and (on the English side) coreference, awesome-align for alignments, and optionally
the BERT ellipsis classifier. Models load once, on first use; results are cached on disk."""
from __future__ import annotations

from dataclasses import replace
from itertools import groupby
from typing import List, Optional, Sequence, Tuple

from muda.formats.pharaoh import Alignment, format_pharaoh, parse_pharaoh
from muda.annotation import Sentence
from muda.annotators.cache import AnnotationCache
from muda.formats.conllu import format_conllu, parse_conllu
from muda.formats.coref import add_corefud


class ModelAnnotators:
    def __init__(self, stanza_dir: Optional[str] = None, align_model: str = "bert-base-multilingual-cased",
                 ellipsis_model: Optional[str] = None, cache_dir: Optional[str] = None, coref_window: int = 0,
                 batch_size: int = 32, cpu: bool = False, source_annotator=None, target_annotators=None,
                 aligner=None):
        self.stanza_dir, self.align_model, self.ellipsis_model = stanza_dir, align_model, ellipsis_model
        self.coref_window, self.batch_size, self.cpu = coref_window, batch_size, cpu
        self.cache = AnnotationCache(cache_dir)
        self._source, self._targets, self._aligner = source_annotator, dict(target_annotators or {}), aligner

    @property
    def has_ellipsis_model(self) -> bool:
        return bool(self.ellipsis_model)

    def _stanza(self, lang: str, **options):
        from muda.annotators.stanza_pipeline import StanzaAnnotator

        return StanzaAnnotator(lang, model_dir=self.stanza_dir, use_gpu=False if self.cpu else None, **options)

    def source(self, lines: Sequence[str], docids: Sequence[str]) -> Tuple[List[Sentence], None]:
        """English source: morphology, dependencies and coreference (one call per document or
        per window of ``coref_window`` sentences); coreference goes into MISC as CorefUD Entity."""
        producer = f"stanza-en-coref:{self.stanza_dir}:window={self.coref_window}"
        key = self.cache.key("source", producer, [f"{d}\t{l}" for d, l in zip(docids, lines)])
        cached = self.cache.get(key, ".conllu")
        if cached is not None:
            return parse_conllu(cached.splitlines(), "annotation cache"), None
        if self._source is None:
            self._source = self._stanza("en", processors="tokenize,pos,lemma,depparse,coref", tokenize_no_ssplit=True)
        chunks: List[Tuple[int, List[str]]] = []
        start = 0
        for _, group in groupby(docids):
            n = len(list(group))
            size = self.coref_window or n
            for lo in range(0, n, size):
                chunks.append((start + lo, list(lines[start + lo:start + min(n, lo + size)])))
            start += n
        sentences: List[Sentence] = [Sentence([]) for _ in lines]
        for (offset, chunk), (sents, mentions) in zip(chunks, self._source.annotate_documents([c for _, c in chunks])):
            # chain ids restart in every window: keep the windows' entities apart
            add_corefud(sents, [replace(m, entity=f"{offset}x{m.entity}") for m in mentions])
            sentences[offset:offset + len(sents)] = sents
        self.cache.put(key, ".conllu", format_conllu(sentences))
        return sentences, None

    def target(self, lines: Sequence[str], lang: str) -> List[Sentence]:
        key = self.cache.key("target", f"stanza-{lang}-morphology:{self.stanza_dir}", lines)
        cached = self.cache.get(key, ".conllu")
        if cached is not None:
            return parse_conllu(cached.splitlines(), "annotation cache")
        if lang not in self._targets:
            from muda.annotators.stanza_pipeline import MORPHOLOGY

            self._targets[lang] = self._stanza(lang, processors=MORPHOLOGY)
        sentences = self._targets[lang].annotate(lines)
        self.cache.put(key, ".conllu", format_conllu(sentences))
        return sentences

    def align(self, src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]]) -> List[Alignment]:
        key = self.cache.key("align", f"awesome:{self.align_model}",
                             [" ".join(s) + "\t" + " ".join(t) for s, t in zip(src, tgt)])
        cached = self.cache.get(key, ".align")
        if cached is not None:
            return [parse_pharaoh(line, "annotation cache") for line in cached.split("\n")[:len(src)]]
        if self._aligner is None:
            from muda.annotators.awesome_align import AwesomeAligner

            self._aligner = AwesomeAligner(self.align_model, batch_size=self.batch_size,
                                           device="cpu" if self.cpu else None)
        aligns = self._aligner.align(src, tgt)
        self.cache.put(key, ".align", "".join(format_pharaoh(a) + "\n" for a in aligns))
        return aligns

    def ellipsis(self, sentences: Sequence[Sentence], lines: Sequence[str]) -> List[bool]:
        from muda.annotators.ellipsis_bert import EllipsisClassifier

        return EllipsisClassifier(self.ellipsis_model, device="cpu" if self.cpu else None).predict(lines)
