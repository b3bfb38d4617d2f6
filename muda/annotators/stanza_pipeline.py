"""stanza as an annotator: raw or pre-tokenized lines in, one annotated Sentence per line out."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from tqdm import tqdm

from commandkit.errors import Code, InputError
from muda.annotation import Sentence, Token, Word, parse_feats
from muda.annotators.required_models import TARGET_PROCESSORS, default_stanza_dir  # one place says where
from muda.formats.coref import Mention

DEFAULT_PROCESSORS = "tokenize,pos,lemma,depparse"  # stanza adds mwt itself where a language has it
CHUNK = 512  # lines per stanza call: large enough to batch well, small enough for a progress bar
MORPHOLOGY = TARGET_PROCESSORS  # enough for the target side: its rules read UPOS, FEATS and LEMMA


def from_stanza_sentences(sentences) -> Sentence:
    """Merge stanza sentences (one input line may be split in several) into one Sentence."""
    tokens: List[Token] = []
    offset = 0
    for sent in sentences:
        for tok in sent.tokens:
            words = [
                Word(
                    offset + w.id,
                    w.text,
                    w.lemma or "_",
                    w.upos or "_",
                    parse_feats(w.feats or "_"),
                    (offset + w.head) if w.head else 0,
                    w.deprel or "_",
                    {} if not w.misc else dict(i.partition("=")[::2] for i in w.misc.split("|")),
                )
                for w in tok.words
            ]
            tokens.append(Token(tok.text, words))
        offset += len(sent.words)
    return Sentence(tokens)


def from_stanza_document(doc) -> List[Sentence]:
    """One Sentence per stanza sentence (e.g. a Document read with stanza's CoNLL reader)."""
    return [from_stanza_sentences([s]) for s in doc.sentences]


class StanzaAnnotator:
    """A stanza pipeline loaded once; ``annotate`` batches all lines through it."""

    def __init__(
        self,
        lang: str,
        model_dir: Optional[str] = None,
        processors: str = DEFAULT_PROCESSORS,
        pretokenized: bool = False,
        use_gpu: Optional[bool] = None,
        pipeline=None,
        **options,
    ):
        self.lang = lang
        if pipeline is not None:  # an already built pipeline (tests, or a caller's own settings)
            self.pipeline = pipeline
            return
        import stanza
        import torch

        model_dir = model_dir or default_stanza_dir()
        try:
            self.pipeline = stanza.Pipeline(
                lang,
                dir=model_dir,
                processors=processors,
                download_method=None,
                logging_level="WARN",
                tokenize_pretokenized=pretokenized,
                **options,
                use_gpu=torch.cuda.is_available() if use_gpu is None else use_gpu,
            )
        except (FileNotFoundError, ValueError, KeyError) as e:
            raise InputError(
                f"stanza model for '{lang}' not found in {model_dir} ({type(e).__name__}); get it with: "
                f"python -c \"import stanza; stanza.download('{lang}', model_dir='{model_dir}')\"",
                code=Code.MODEL,
            ) from None

    def annotate(self, lines: Sequence[str]) -> List[Sentence]:
        import stanza

        todo = [i for i, line in enumerate(lines) if line.strip()]
        docs = []
        for b in tqdm(range(0, len(todo), CHUNK), desc=f"stanza {self.lang}", unit="chunk", disable=len(todo) <= CHUNK):
            docs.extend(self.pipeline.bulk_process([stanza.Document([], text=lines[i]) for i in todo[b : b + CHUNK]]))
        out = [Sentence([], text="") for _ in lines]  # blank lines stay empty sentences
        for i, doc in zip(todo, docs, strict=True):
            out[i] = from_stanza_sentences(doc.sentences)
            out[i].text = lines[i]
        return out

    def annotate_documents(self, documents: Sequence[Sequence[str]]) -> List[Tuple[List[Sentence], List[Mention]]]:
        """Each document in one call (a pipeline built with tokenize_no_ssplit=True and coref keeps
        one sentence per line); returns its sentences and coreference mentions (token indices)."""
        import stanza

        out = []
        inputs = [[line for line in doc if line.strip()] for doc in documents]
        todo = [k for k, lines in enumerate(inputs) if lines]
        done = []
        step = max(1, CHUNK // 16)  # documents per call
        for b in tqdm(
            range(0, len(todo), step), desc=f"stanza {self.lang} documents", unit="chunk", disable=len(todo) <= step
        ):
            done.extend(
                self.pipeline.bulk_process(
                    [stanza.Document([], text="\n\n".join(inputs[k])) for k in todo[b : b + step]]
                )
            )
        by_doc = dict(zip(todo, done, strict=True))
        for k, doc in enumerate(documents):
            sentences = [Sentence([], text="") for _ in doc]
            mentions: List[Mention] = []
            if k in by_doc:
                sdoc = by_doc[k]
                rows = [i for i, line in enumerate(doc) if line.strip()]
                if len(sdoc.sentences) != len(rows):
                    raise InputError(
                        f"stanza split a document into {len(sdoc.sentences)} sentences, expected "
                        f"{len(rows)}: the pipeline needs tokenize_no_ssplit=True",
                        code=Code.MODEL,
                    )
                token_of = []
                for row, sent in zip(rows, sdoc.sentences, strict=True):
                    sentences[row] = from_stanza_sentences([sent])
                    sentences[row].text = doc[row]
                    token_of.append({w.id - 1: t for t, tok in enumerate(sent.tokens) for w in tok.words})
                for chain in getattr(sdoc, "coref", None) or []:
                    for m in chain.mentions:
                        if not isinstance(m.start_word, int):  # zero anaphora: no surface token
                            continue
                        tokens = token_of[m.sentence]
                        mentions.append(
                            Mention(str(chain.index), rows[m.sentence], tokens[m.start_word], tokens[m.end_word - 1])
                        )
            out.append((sentences, mentions))
        return out
