"""How a Hugging Face model reads a sentence with its context, as token ids.

seq2seq (Marian, mBART-50, NLLB, M2M100), by concatenation as in the fairseq models: the
previous source sentences and the current one are joined with the separator and tokenized
together (the encoder input). The previous target sentences, joined the same way and tokenized
without special tokens, are forced after the decoder start token (and the target language code,
if the model has one) and get no score. The current target is tokenized on its own, so its
tokens are the same with and without context; it is scored with the tokens that end it (EOS).

decoder-only: the prompt template lays out the previous pairs and the current source; the
current target follows, tokenized on its own, and is scored with the template's end.

Context is trimmed to fit the model's positions by the one rule of ``inference.context_trim`` (the
furthest sentences first); a sentence that does not fit by itself is an error naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from contextual_mt.backends.hf.model import HFModel
from contextual_mt.errors import Code, InputError, OverPositionsError
from contextual_mt.inference.context_trim import last_sentences, nearest_fitting

Ids = Tuple[int, ...]


@dataclass(frozen=True)
class Row:
    """One scoring input: ``prefix`` (the decoder's forced tokens, or the LM's prompt) is read;
    ``target`` is scored, each token given the prefix and the target tokens before it."""

    encoder: Optional[Ids]  # seq2seq: the encoder input with its special tokens
    prefix: Ids
    target: Ids
    pieces: Tuple[str, ...]  # the target's subword pieces, '▁' marking word starts (records, words)
    context: Tuple[int, int]  # source and target context sentences actually read

    @property
    def encoder_ids(self) -> Ids:
        """The encoder input of a seq2seq row."""
        if self.encoder is None:
            raise ValueError("a decoder-only row has no encoder input")
        return self.encoder

    @property
    def length(self) -> int:
        """Padded positions this row costs in a batch (its longer side)."""
        decoder = len(self.prefix) + len(self.target)
        return max(len(self.encoder), decoder) if self.encoder is not None else decoder


class InputLayout:
    """Builds rows for one loaded model; each distinct text is tokenized once."""

    def __init__(self, hf: HFModel):
        self.hf = hf
        self.tok = hf.tokenizer
        self.limit = hf.max_positions
        self._cache: Dict[Tuple[str, str], Tuple] = {}
        if hf.seq2seq:
            start = hf.model.config.decoder_start_token_id
            if start is None:
                start = getattr(hf.model.generation_config, "decoder_start_token_id", None)
            if start is None:
                raise InputError(f"{hf.folder}: the model config has no decoder_start_token_id", code=Code.MODEL)
            self.start: Ids = (int(start),)
        self.chat_end: Ids = self._chat_end() if hf.template is not None and hf.template.chat else ()

    def _chat_end(self) -> Ids:
        """The tokens that end an answer as the chat template renders it: what follows the
        assistant's content up to the first end token the model declares or special token
        (Llama-3's <|eot_id|>, Qwen's <|im_end|>, Gemma's <end_of_turn>, Phi-3's <|end|>); the
        tokenizer's EOS when the template ends the turn with plain text (a newline)."""
        mark = "Answer"
        messages = [*self.hf.prompt.chat_messages("Question", []), {"role": "assistant", "content": mark}]
        try:
            text = self.tok.apply_chat_template(messages, tokenize=False)
        except Exception as e:  # a template that raises on this conversation
            raise InputError(
                f"{self.hf.folder}: its chat template cannot render a user/assistant conversation ({e})",
                code=Code.MODEL,
            ) from None
        if mark not in text:
            raise InputError(
                f"{self.hf.folder}: its chat template does not render the assistant's answer", code=Code.MODEL
            )
        suffix = tuple(self.tok(text[text.rindex(mark) + len(mark) :], add_special_tokens=False)["input_ids"])
        stops = set(self.hf.end_token_ids()) | set(getattr(self.tok, "all_special_ids", []) or [])
        cut = next((k for k, t in enumerate(suffix) if t in stops), None)
        if cut is not None:
            return suffix[: cut + 1]
        eos = self.tok.eos_token_id
        if eos is None:
            raise InputError(
                f"{self.hf.folder}: neither its chat template nor its tokenizer has a token that ends an answer",
                code=Code.MODEL,
            )
        return (eos,)

    # ------------------------------------------------------------------ tokenization
    def _memo(self, kind: str, text: str, make: Callable[[str], Tuple]) -> Tuple:
        key = (kind, text)
        if key not in self._cache:
            self._cache[key] = make(text)
        return self._cache[key]

    def source_ids(self, text: str) -> Ids:
        return self._memo("src", text, lambda t: tuple(self.tok(self.hf.marian_prefix + t)["input_ids"]))

    def target_parts(self, text: str) -> Tuple[Ids, Ids, Ids, Tuple[str, ...]]:
        """(lead, plain, trail, pieces): the target's forced special tokens (a language code),
        its plain tokens, the special tokens that end it (EOS), and the plain tokens as pieces."""

        def make(t: str):
            full = list(self.tok(text_target=t)["input_ids"])
            plain = list(self.tok(text_target=t, add_special_tokens=False)["input_ids"])
            k = next((k for k in range(len(full) - len(plain) + 1) if full[k : k + len(plain)] == plain), None)
            if k is None:  # tokenizers keep the plain tokens contiguous; anything else would be misread
                raise InputError(
                    f"{self.hf.folder}: the tokenizer's target tokens are not its plain tokens "
                    "with special tokens around them; this model is not supported",
                    code=Code.MODEL,
                )
            return tuple(full[:k]), tuple(plain), tuple(full[k + len(plain) :]), self.pieces(t, plain, target=True)

        return self._memo("tgt", text, make)

    def target_context_ids(self, sentences: Sequence[str]) -> Ids:
        if not sentences:
            return ()
        sep = self.hf.options.separator
        text = sep.join(sentences) + (sep if sep.strip() else "")
        return self._memo("tctx", text, lambda t: tuple(self.tok(text_target=t, add_special_tokens=False)["input_ids"]))

    def lm_ids(self, text: str, special: bool) -> Ids:
        return self._memo(
            "lm" + "+" * special, text, lambda t: tuple(self.tok(t, add_special_tokens=special)["input_ids"])
        )

    def pieces(self, text: str, ids: Sequence[int], target: bool = False) -> Tuple[str, ...]:
        """The tokens of ``text`` as pieces whose concatenation (without '▁') is the text without
        whitespace, '▁' marking the first piece of each whitespace word: what ``split_words``
        and the report read, for SentencePiece and byte-level BPE alike."""
        if getattr(self.tok, "is_fast", False):
            enc = (
                self.tok(text_target=text, add_special_tokens=False, return_offsets_mapping=True)
                if target and self.hf.seq2seq
                else self.tok(text, add_special_tokens=False, return_offsets_mapping=True)
            )
            if list(enc["input_ids"]) == list(ids):
                out, end, bare_space = [], 0, False
                for a, b in enc["offset_mapping"]:
                    a = max(a, end)  # byte-level pieces of one character share its span: count it once
                    piece = text[a:b] if b > a else ""
                    starts = (a == 0 or text[a - 1].isspace() or piece[:1].isspace()) and not bare_space
                    # a token of whitespace alone opens the word that follows it
                    bare_space = bool(piece) and not piece.strip()
                    piece = piece.strip()
                    out.append("▁" + piece if starts and (piece or bare_space) else piece)
                    end = max(end, b)
                return tuple(out)
        tokens = self.tok.convert_ids_to_tokens(list(ids))
        return tuple(t.replace("Ġ", "▁") if isinstance(t, str) else str(t) for t in tokens)

    # ------------------------------------------------------------------ rows
    def row(
        self,
        source: str,
        target: str,
        src_ctx: Sequence[str],
        tgt_ctx: Sequence[str],
        n_src: int,
        n_tgt: int,
        where: Callable[[], str],
    ) -> Row:
        """The row of ``target`` given ``source`` and the nearest ``n_src``/``n_tgt`` context
        sentences (fewer when they do not fit)."""
        make = self._seq2seq_row if self.hf.seq2seq else self._lm_row

        def attempt(k_src: int, k_tgt: int) -> Tuple[bool, Row]:
            r = make(source, target, last_sentences(src_ctx, k_src), last_sentences(tgt_ctx, k_tgt))
            return self._fits(r), r

        def error(r: Row) -> InputError:
            return OverPositionsError(
                f"{where()}: {self._size(r)} tokens, but {self.hf.folder} takes at most "
                f"{self.limit} positions; split the line"
            )

        return nearest_fitting(min(n_src, len(src_ctx)), min(n_tgt, len(tgt_ctx)), attempt, error)

    def _size(self, r: Row) -> int:
        return r.length if r.encoder is not None else len(r.prefix) + len(r.target)

    def _fits(self, r: Row) -> bool:
        return self._size(r) <= self.limit

    def _seq2seq_row(self, source: str, target: str, src_ctx: List[str], tgt_ctx: List[str]) -> Row:
        sep = self.hf.options.separator
        encoder = self.source_ids(sep.join([*src_ctx, source]))
        lead, plain, trail, pieces = self.target_parts(target)
        prefix = self.start + lead + self.target_context_ids(tgt_ctx)
        return Row(encoder, prefix, plain + trail, pieces, (len(src_ctx), len(tgt_ctx)))

    def _lm_row(self, source: str, target: str, src_ctx: List[str], tgt_ctx: List[str]) -> Row:
        t = self.hf.prompt
        # a pair needs both sides: the template shows whole previous pairs
        k = min(len(src_ctx), len(tgt_ctx))
        pairs = list(zip(last_sentences(src_ctx, k), last_sentences(tgt_ctx, k), strict=True))
        if t.chat:
            text = self.tok.apply_chat_template(
                t.chat_messages(source, pairs), tokenize=False, add_generation_prompt=True
            )
            prompt = self.lm_ids(text, special=False)
            rendered = target
        else:
            prompt = self.lm_ids(t.render_prompt(source, pairs), special=True)
            rendered = t.render_target(target)
        plain = self.lm_ids(rendered, special=False)
        if t.chat:
            end = self.chat_end
        elif t.end == "eos":
            end = (self.tok.eos_token_id,)
        else:
            end = self.lm_ids(t.end, special=False) if t.end else ()
        pieces = self._memo("lmp", rendered, lambda x: self.pieces(x, plain))
        return Row(None, prompt, plain + end, pieces, (k, k))

    def end_tokens(self, r: Row) -> int:
        """How many of the row's scored tokens end the target (EOS, a language code, a
        template's end): the records show them as one '</s>'."""
        return len(r.target) - len(r.pieces)


def lm_context_sizes(hf: HFModel, n_src: int, n_tgt: int) -> Tuple[int, int]:
    """A prompt shows whole previous pairs: a decoder-only model reads min(n_src, n_tgt) of them."""
    if hf.seq2seq:
        return n_src, n_tgt
    if n_src != n_tgt:
        raise InputError(
            f"a decoder-only LM reads previous sentences as source/target pairs: give the same "
            f"--source-context-size and --target-context-size (got {n_src} and {n_tgt})",
            code=Code.OPTIONS_CONFLICT,
        )
    return n_src, n_tgt
