"""Every model family of the zoo (tests/hf_models.py, ZOO: tiny random models built from each
family's transformers config class) through every --hf-model command, in float32:

- P-CXMI per token equals an independent per-example computation: the model's own forward on one
  unpadded example, the prompt from ``apply_chat_template`` (or the plain template), the answer's
  end as the family's template renders it;
- batch size 1, 8 and a --max-tokens that forces splits give the same scores and translations;
  the tokenizer's padding side (left or right) changes nothing;
- eager and SDPA attention give the same scores;
- the prompt's token ids are the template's; generation stops at every end token the model
  declares; the answer is cut from the prompt with nothing lost (emoji, multi-byte characters);
- translate (sentence, predicted context; --unit document), contrastive, attribute and align run.

A passing test records its cell (family, check, tolerance) in the file named by
CONTEXTUAL_MT_ZOO_REPORT, when set: docs/examples/supported_models.py builds the "Supported models"
page from those records under each transformers major."""

from __future__ import annotations

import json
import os
from typing import Dict, List, Optional, Tuple

import numpy as np
import pytest
import torch

from contextual_mt.analysis.cxmi import CxmiOptions, run_cxmi
from contextual_mt.backends.hf.model import HFModel
from contextual_mt.backends.hf.options import HFModelOptions
from contextual_mt.backends.hf.scoring import HFScoringBackend
from contextual_mt.backends.hf.translator import HFDocumentTranslator
from contextual_mt.cli import main
from contextual_mt.inference.decoding import DecodingOptions
from tests.hf_models import BF16_TOL, CAUSAL, EN, FR, MULTIBYTE, OUTSIDE, TOL, ZOO, ZooFamily, write_voita_set

pytestmark = pytest.mark.zoo  # make test-zoo and make test-compat run them (not make test: their time)

FAMILIES = list(ZOO)
CHAT = [name for name in FAMILIES if name in CAUSAL]
INSTRUCTION = "Translate each of my messages{langs}. Reply with the translation only.\n\n"


def record(family: str, check: str, tolerance: Optional[float] = None) -> None:
    """A passed cell of the Supported models page."""
    path = os.environ.get("CONTEXTUAL_MT_ZOO_REPORT")
    if path:
        import transformers

        line = {"family": family, "check": check, "tolerance": tolerance, "transformers": transformers.__version__}
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")


def spec(family: str) -> ZooFamily:
    return ZOO[family] if family in ZOO else OUTSIDE[family]


def options(family: str, folder, **kw) -> HFModelOptions:
    z = spec(family)
    return HFModelOptions(str(folder), src_lang=z.src_lang, tgt_lang=z.tgt_lang, **kw)


def lang_args(family: str) -> List[str]:
    z = spec(family)
    return [*(["--src-lang", z.src_lang] if z.src_lang else []), *(["--tgt-lang", z.tgt_lang] if z.tgt_lang else [])]


def ids_of(encoded) -> List[int]:
    """apply_chat_template's ids (a list under transformers 4, a BatchEncoding under 5)."""
    if hasattr(encoded, "keys"):
        encoded = encoded["input_ids"]
    return list(encoded)


# ---------------------------------------------------------------------------------- references
class Reference:
    """One example at a time, unpadded, through the model's own forward (full logits)."""

    def __init__(self, family: str, folder):
        from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

        self.family, self.z = family, spec(family)
        self.tok = AutoTokenizer.from_pretrained(folder)
        auto = AutoModelForSeq2SeqLM if self.z.kind == "seq2seq" else AutoModelForCausalLM
        self.model = auto.from_pretrained(folder).eval()
        if self.z.src_lang and hasattr(self.tok, "src_lang"):
            self.tok.src_lang, self.tok.tgt_lang = self.z.src_lang, self.z.tgt_lang

    def ends(self) -> List[int]:
        """Every end token the model declares (generation config, config, tokenizer)."""
        out = set()
        for value in (self.model.generation_config.eos_token_id, self.model.config.eos_token_id):
            out.update(value if isinstance(value, list) else [value] if value is not None else [])
        if self.tok.eos_token_id is not None:
            out.add(self.tok.eos_token_id)
        return sorted(out)

    def messages(self, source: str, ctx: Optional[Tuple[str, str]]) -> List[Dict[str, str]]:
        head = INSTRUCTION.format(langs="")
        if ctx:
            return [
                {"role": "user", "content": head + ctx[0]},
                {"role": "assistant", "content": ctx[1]},
                {"role": "user", "content": source},
            ]
        return [{"role": "user", "content": head + source}]

    def prompt_and_scored(self, source: str, target: str, ctx: Optional[Tuple[str, str]]):
        """(prompt ids, scored ids) of a decoder-only model: the prompt as apply_chat_template
        renders it; the scored tokens, the answer and what ends it, as the template renders the
        conversation with the answer (up to the first end token)."""
        tok = self.tok
        if not getattr(tok, "chat_template", None):  # the plain template (GPT-2, base models)
            pairs = f"English: {ctx[0]}\nFrench: {ctx[1]}\n" if ctx else ""
            prompt = tok(f"Translate from English to French.\n{pairs}English: {source}\nFrench:").input_ids
            return prompt, tok(" " + target, add_special_tokens=False).input_ids + tok("\n").input_ids
        msgs = self.messages(source, ctx)
        prompt = ids_of(tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=True))
        full = ids_of(tok.apply_chat_template([*msgs, {"role": "assistant", "content": target}], tokenize=True))
        assert full[: len(prompt)] == prompt, "the template renders the answer after the generation prompt"
        rest, ends = full[len(prompt) :], self.ends()
        cut = next(k for k, t in enumerate(rest) if t in ends)
        return prompt, rest[: cut + 1]

    @torch.no_grad()
    def log_probs(self, source: str, target: str, ctx: Optional[Tuple[str, str]]) -> np.ndarray:
        tok, model = self.tok, self.model
        if self.z.kind == "seq2seq":
            prefix = f"<2{self.z.tgt_lang}> " if self.family == "madlad" else ""
            enc = tok(prefix + " ".join(([ctx[0]] if ctx else []) + [source])).input_ids
            labels = tok(text_target=target).input_ids
            plain = tok(text_target=target, add_special_tokens=False).input_ids
            lead = labels[: len(labels) - len(plain) - 1]
            forced = [model.config.decoder_start_token_id, *lead]
            forced += tok(text_target=ctx[1], add_special_tokens=False).input_ids if ctx else []
            scored = [*plain, labels[-1]]
            out = model(input_ids=torch.tensor([enc]), decoder_input_ids=torch.tensor([forced + scored[:-1]]))
            first = len(forced) - 1
        else:
            prompt, scored = self.prompt_and_scored(source, target, ctx)
            out = model(input_ids=torch.tensor([prompt + scored[:-1]]))
            first = len(prompt) - 1
        lp = torch.log_softmax(out.logits[0].float(), -1)
        return np.array([lp[first + t, s].item() for t, s in enumerate(scored)])


_references: Dict[str, Reference] = {}


@pytest.fixture
def ref(family, hf_zoo) -> Reference:
    if family not in _references:
        _references[family] = Reference(family, hf_zoo(family))
    return _references[family]


def cxmi(family, folder, corpus, out, dtype: str = "float32", **kw) -> List[Dict]:
    run_cxmi(
        CxmiOptions(
            options(family, folder, dtype=dtype),
            str(corpus / "src.en"),
            str(corpus / "ref.fr"),
            str(corpus / "docids"),
            str(out),
            progress=False,
            **kw,
        )
    )
    return [json.loads(line) for line in out.read_text().splitlines()]


def merged(values: np.ndarray, n_pieces: int) -> np.ndarray:
    return np.append(values[:n_pieces], values[n_pieces:].sum())


# ---------------------------------------------------------------------------------- the checks
@pytest.mark.parametrize("family", FAMILIES)
def test_pcxmi_equals_the_per_example_computation(family, hf_zoo, ref, corpus, tmp_path):
    assert_pcxmi_per_example(family, hf_zoo(family), ref, corpus, tmp_path)
    record(family, "cxmi", TOL)


def assert_pcxmi_per_example(family, folder, ref, corpus, tmp_path) -> None:
    records = cxmi(family, folder, corpus, tmp_path / "p.jsonl", max_tokens=400)
    worst, differ = 0.0, 0
    for i, r in enumerate(records):
        prev = (EN[i - 1], FR[i - 1]) if i not in (0, 6) else None
        a = ref.log_probs(EN[i], FR[i], None)
        c = ref.log_probs(EN[i], FR[i], prev) if prev else a
        n = len(r["tokens"]) - 1
        expected = merged(c, n) - merged(a, n)
        assert len(r["token_pcxmi"]) == len(expected), f"line {i + 1}: the tokens scored differ"
        worst = max(worst, float(np.abs(np.array(r["token_pcxmi"]) - expected).max()))
        # a sum of len(c) float32 log-probabilities, each within TOL (a sum of -143 was 1.06e-5 off
        # under transformers 5 with every token within TOL)
        assert r["logprob_context"] == pytest.approx(c.sum(), abs=TOL * len(c))
        differ += prev is not None and abs(r["sentence_pcxmi"]) > 1e-3
    assert worst <= TOL, f"P-CXMI differs from the per-example computation by {worst:.2g}"
    assert differ >= 8  # the context changes the scores: two passes that differ


@pytest.mark.parametrize("family", FAMILIES)
def test_batch_size_and_splits_give_the_same_scores(family, hf_zoo, corpus, tmp_path):
    folder = hf_zoo(family)
    runs = [
        cxmi(family, folder, corpus, tmp_path / f"{k}.jsonl", **kw)
        for k, kw in enumerate(({"batch_size": 1}, {"batch_size": 8, "max_tokens": 4000}, {"max_tokens": 60}))
    ]
    for other in runs[1:]:
        for a, b in zip(runs[0], other, strict=True):
            assert a["tokens"] == b["tokens"]
            np.testing.assert_allclose(a["token_pcxmi"], b["token_pcxmi"], atol=TOL, rtol=0)
    record(family, "batch invariance", TOL)


@pytest.mark.parametrize("family", FAMILIES)
def test_bfloat16_within_its_tolerance_of_float32(family, hf_zoo, corpus, tmp_path):
    """--dtype bfloat16 on the CPU: the same tokens, every token's P-CXMI within BF16_TOL nats of
    float32's (bfloat16 keeps 8 bits of mantissa: its log-probabilities are off by about 1e-2)."""
    folder = hf_zoo(family)
    single = cxmi(family, folder, corpus, tmp_path / "32.jsonl", max_tokens=400)
    half = cxmi(family, folder, corpus, tmp_path / "16.jsonl", dtype="bfloat16", max_tokens=400)
    worst = 0.0
    for a, b in zip(single, half, strict=True):
        assert a["tokens"] == b["tokens"]
        worst = max(worst, float(np.abs(np.array(a["token_pcxmi"]) - np.array(b["token_pcxmi"])).max()))
    assert 0 < worst <= BF16_TOL, f"bfloat16's P-CXMI differs from float32's by {worst:.2g} (0: not run in bfloat16)"
    record(family, "bfloat16", BF16_TOL)


def assert_quiet(err: str) -> None:
    """No warning, notice or progress bar on a correct input: stderr holds the command's own
    summary lines only."""
    for line in err.splitlines():
        assert not any(w in line for w in ("arning", "Loading", "it/s]", "%|", "Traceback", "deprecated")), line


def translate(family, folder, corpus, out, *extra) -> List[str]:
    argv = ["translate", "--hf-model", str(folder), *lang_args(family), "--source", str(corpus / "src.en")]
    argv += ["--docids", str(corpus / "docids"), "--output", str(out), "--max-len-b", "8", "--cpu", "--quiet"]
    assert main([*argv, *extra]) == 0
    return out.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("family", FAMILIES)
def test_translations_do_not_depend_on_batching_or_padding_side(family, hf_zoo, corpus, tmp_path, capsys):
    """Beam search with predicted target context: batch size 1, 8 and a --max-tokens that splits
    the waves give the same translations, whichever padding side the tokenizer declares (the
    backend pads itself: prompts on the left, scored rows on the right)."""
    import shutil

    folder = hf_zoo(family)
    one = translate(family, folder, corpus, tmp_path / "1.txt", "--batch-size", "1", "--beam", "2")
    assert len(one) == 12
    for side, batching in (("left", ("--batch-size", "8")), ("right", ("--max-tokens", "40"))):
        copy = tmp_path / side
        shutil.copytree(folder, copy)
        config = json.loads((copy / "tokenizer_config.json").read_text())
        (copy / "tokenizer_config.json").write_text(json.dumps({**config, "padding_side": side}))
        assert translate(family, copy, corpus, tmp_path / f"{side}.txt", *batching, "--beam", "2") == one
    assert_quiet(capsys.readouterr().err)
    record(family, "translate (batch, padding)", 0.0)


@pytest.mark.parametrize("family", FAMILIES)
def test_eager_and_sdpa_attention_give_the_same_scores(family, hf_zoo):
    backend = HFScoringBackend.open(options(family, hf_zoo(family)), max_tokens=400)
    backend.load(EN, FR, np.array([0] * 6 + [6] * 6))
    model = backend.hf.model
    if model.config._attn_implementation == "eager":  # transformers has no SDPA path for it (T5)
        assert not getattr(model, "_supports_sdpa", False)
        record(family, "eager = SDPA", None)
        return
    assert model.config._attn_implementation == "sdpa"
    sdpa = backend.token_log_probs(range(12), context=True)
    model.set_attn_implementation("eager")
    assert model.config._attn_implementation == "eager"
    eager = backend.token_log_probs(range(12), context=True)
    worst = max(float(np.abs(sdpa[i] - eager[i]).max()) for i in range(12))
    assert worst <= TOL, f"eager and SDPA differ by {worst:.2g}"
    record(family, "eager = SDPA", TOL)


@pytest.mark.parametrize("family", CHAT)
def test_the_prompt_is_the_families_template(family, hf_zoo, ref):
    """The rows' token ids: the prompt as apply_chat_template renders the conversation, the answer
    and its end as the template renders them after it."""
    backend = HFScoringBackend.open(options(family, hf_zoo(family)))
    for source, target, ctx in (
        (EN[1], FR[1], (EN[0], FR[0])),
        (EN[0], FR[0], None),
        *[(m, m, None) for m in MULTIBYTE],
    ):
        row = backend.layout.row(source, target, [ctx[0]] if ctx else [], [ctx[1]] if ctx else [], 1, 1, str)
        prompt, scored = ref.prompt_and_scored(source, target, ctx)
        assert list(row.prefix) == prompt
        assert list(row.target) == scored
    record(family, "template ids", 0.0)


@pytest.mark.parametrize("family", CHAT)
def test_generation_stops_at_every_end_token(family, hf_zoo, ref):
    """Each end token the model declares, made the likeliest next token, ends the answer at once."""
    hf = HFModel.load(options(family, hf_zoo(family)))
    translator = HFDocumentTranslator(hf, DecodingOptions(beam=1, max_len_b=8))
    prompt = translator.prompt(EN[0], [], [], 0, 0, "s:1")
    lengths = []
    original = hf.model.generate

    def generate(**kwargs):
        out = original(**kwargs)
        lengths.append(out.shape[1] - kwargs["input_ids"].shape[1])
        return out

    hf.model.generate = generate
    for end in ref.ends():
        hook = hf.model.get_output_embeddings().register_forward_hook(
            lambda module, args, out, end=end: out.index_fill(-1, torch.tensor([end]), 1e4)
        )
        try:
            assert translator.generate([prompt]) == [""]
        finally:
            hook.remove()
        assert lengths[-1] == 1, f"generation went on after end token {end}"
    record(family, "end tokens", 0.0)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_answer_is_cut_whole_from_the_prompt(family, hf_zoo):
    """Whatever the model generates after its (left-padded) prompt comes back whole, emoji and
    multi-byte characters included, without the end token or the padding."""
    hf = HFModel.load(options(family, hf_zoo(family)))
    translator = HFDocumentTranslator(hf, DecodingOptions(beam=1, max_len_b=40))
    prompts = [translator.prompt(s, [], [], 0, 0, "s:1") for s in (EN[0], EN[2] + " " + EN[3])]
    tok = hf.tokenizer
    end = translator._end_ids()[0] if not hf.seq2seq else tok.eos_token_id
    answers = MULTIBYTE

    def generate(**kwargs):
        start = kwargs["input_ids"] if not hf.seq2seq else kwargs["decoder_input_ids"]
        rows = []
        for k, answer in enumerate(answers):
            encoded = tok(text_target=answer, add_special_tokens=False) if hf.seq2seq else tok(answer)
            rows.append(start[k].tolist() + list(encoded.input_ids) + [end])
        width = max(len(r) for r in rows)
        return torch.tensor([r + [translator.pad] * (width - len(r)) for r in rows])

    hf.model.generate = generate
    assert translator.generate(prompts) == answers
    record(family, "answer cut", 0.0)


# ---------------------------------------------------------------------------------- the commands
@pytest.mark.parametrize("family", FAMILIES)
def test_translate_by_document(family, hf_zoo, corpus, tmp_path, capsys):
    out = translate(family, hf_zoo(family), corpus, tmp_path / "d.txt", "--unit", "document", "--beam", "1")
    documents = [json.loads(line) for line in out]
    assert [d["doc"] for d in documents] == ["a", "b"]
    assert next(c["lines"] for d in documents for c in d["chunks"])[0] == 1
    assert_quiet(capsys.readouterr().err)
    record(family, "translate --unit document", 0.0)


@pytest.mark.parametrize("family", FAMILIES)
def test_contrastive(family, hf_zoo, ref, tmp_path):
    from contextual_mt.contrastive.evaluate import ContrastiveOptions, run_contrastive

    path = write_voita_set(tmp_path / "deixis_test.json")
    run_contrastive(
        ContrastiveOptions(
            options(family, hf_zoo(family)),
            "voita",
            str(path),
            str(tmp_path / "s.scores"),
            str(tmp_path / "s.json"),
            detokenize="no",
            progress=False,
        )
    )
    losses = [float(x) for x in (tmp_path / "s.scores").read_text().splitlines()]
    expected = []
    for e in json.loads(path.read_text()):
        src_ctx, src = e["src"].split(" _eos ")
        for d in e["dst"]:
            tgt_ctx, tgt = d.split(" _eos ")
            expected.append(-ref.log_probs(src, tgt, (src_ctx, tgt_ctx)).sum())
    np.testing.assert_allclose(losses, expected, atol=1e-4, rtol=0)
    record(family, "contrastive", 1e-4)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("method", ["saliency", "attention"])
def test_attribute(family, method, hf_zoo, corpus, tmp_path, capsys):
    out = tmp_path / "a.jsonl"
    argv = ["attribute", "--hf-model", str(hf_zoo(family)), *lang_args(family), "--source", str(corpus / "src.en")]
    argv += ["--reference", str(corpus / "ref.fr"), "--docids", str(corpus / "docids"), "--output", str(out)]
    argv += ["--method", method, "--cti-scope", "sentence", "--cpu", "--quiet"]
    assert main(argv) == 0, capsys.readouterr().err
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) >= 10  # the sentences with context (the first of each document has none)
    assert any(r.get("cues") for r in records)
    assert_quiet(capsys.readouterr().err)
    record(family, f"attribute ({method})", 0.0)


@pytest.mark.parametrize("family", FAMILIES)
def test_align_with_the_model_link_score(family, hf_zoo, corpus, tmp_path, capsys):
    ids = ["a"] * 6 + ["b"] * 6
    docs = tmp_path / "docs.jsonl"
    lines = [{"doc": d, "text": " ".join(t for t, i in zip(FR, ids, strict=True) if i == d)} for d in ("a", "b")]
    docs.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8")
    out, alignment = tmp_path / "out.fr", tmp_path / "alignment.jsonl"
    argv = ["align", "--hyp-documents", str(docs), "--docids", str(corpus / "docids"), "--pivot"]
    argv += [str(corpus / "ref.fr"), "--output", str(out), "--alignment", str(alignment), "--source"]
    argv += [str(corpus / "src.en"), "--hf-model", str(hf_zoo(family)), *lang_args(family), "--quiet"]
    assert main(argv) == 0, capsys.readouterr().err
    assert out.read_text(encoding="utf-8").splitlines() == FR
    record(family, "align", 0.0)


# ---------------------------------------------------------------------------------- attribution paths
STARTS = np.array([0] * 6 + [6] * 6)


def attribution_backend(family, folder, max_tokens):
    from contextual_mt.backends.hf.attribution import HFAttributionBackend

    o = options(family, folder, source_context_size=2, target_context_size=2)
    backend = HFAttributionBackend.open(o, max_tokens=max_tokens)
    backend.load(EN, FR, STARTS)
    return backend


def checkpointed_equals_whole_graph(family, folder, monkeypatch) -> None:
    """A sentence over --max-tokens (a long document context) is read alone with every
    Transformer layer under activation checkpointing (each layer counted as it is recomputed);
    its cue scores equal the whole graph's."""
    import torch.utils.checkpoint

    from contextual_mt.attribution.gradients import Passes
    from contextual_mt.attribution.interface import CueRequest

    backend = attribution_backend(family, folder, 100_000)
    requests = [CueRequest(i, t) for i in (2, 8) for t in (0, 1)]
    whole = backend.cue_scores(requests, "saliency")
    assert backend.passes.checkpointed == 0
    layers = backend._layers()
    config = backend.hf.model.config
    expected = 4 if backend.hf.seq2seq else 2  # the zoo's models: 2 (+ 2 decoder) layers
    assert len(layers) == expected, f"{len(layers)} checkpointable layers of {type(backend.hf.model).__name__}"
    assert config.is_encoder_decoder == backend.hf.seq2seq
    calls = []
    original = torch.utils.checkpoint.checkpoint

    def counting(function, *args, **kwargs):
        calls.append(function)
        return original(function, *args, **kwargs)

    monkeypatch.setattr(torch.utils.checkpoint, "checkpoint", counting)
    backend.max_tokens, backend.passes = 1, Passes()
    long = backend.cue_scores(requests, "saliency")
    assert backend.passes.checkpointed == backend.passes.forwards == 2  # each sentence alone
    assert len(calls) >= 2 * len(layers)  # every layer of both forwards (and their recomputations)
    for a, b in zip(whole, long, strict=True):
        assert a.shape == b.shape and len(a)
        np.testing.assert_allclose(b, a, atol=TOL, rtol=1e-4)


@pytest.mark.parametrize("family", FAMILIES)
def test_checkpointed_long_context_attribution(family, hf_zoo, monkeypatch):
    checkpointed_equals_whole_graph(family, hf_zoo(family), monkeypatch)
    record(family, "attribute checkpointed", TOL)


@pytest.mark.parametrize("family", FAMILIES)
def test_attention_attribution_takes_the_eager_path(family, hf_zoo):
    """--method attention reads the weights with eager attention, the model's own implementation
    restored after (SDPA returns no weights); a model returning none is refused in one line."""
    from contextual_mt.attribution.interface import CueRequest
    from contextual_mt.errors import ContextualMTError

    backend = attribution_backend(family, hf_zoo(family), 400)
    model = backend.hf.model
    own = model.config._attn_implementation
    seen = []
    hook = model.register_forward_pre_hook(lambda m, args: seen.append(m.config._attn_implementation))
    try:
        scores = backend.cue_scores([CueRequest(2, 0), CueRequest(8, 1)], "attention")
    finally:
        hook.remove()
    assert seen == ["eager"] and model.config._attn_implementation == own
    assert all(len(v) and np.isfinite(v).all() and (v >= 0).all() for v in scores)
    original = model.forward

    def no_weights(*args, **kwargs):
        out = original(*args, **kwargs)
        return out.__class__(**{k: v for k, v in out.items() if not k.endswith("attentions")})

    model.forward = no_weights
    with pytest.raises(ContextualMTError, match="returns no attention weights") as e:
        backend.cue_scores([CueRequest(2, 0)], "attention")
    assert "\n" not in str(e.value) and model.config._attn_implementation == own
    record(family, "attention: eager path", 0.0)


# ---------------------------------------------------------------------------------- outside the zoo
# families the backend knows nothing of, built from their transformers config classes
# (tests/hf_models.py, OUTSIDE): each works, or is refused in one line naming why
# family -> (why, the commands refused): FSMT's tokenizer encodes target text with the source
# vocabulary; ProphetNet's n-gram decoder lets a target position see the padding after it (it
# translates: generation pads no target)
REFUSED = {
    "fsmt": ("separate source and target vocabularies", ("cxmi", "translate")),
    "prophetnet": ("scores change when its rows are padded", ("cxmi",)),
}


@pytest.mark.parametrize("family", list(OUTSIDE))
def test_outside_the_zoo(family, hf_zoo, corpus, tmp_path, capsys, monkeypatch):
    """P-CXMI equals the per-example computation, translate runs quietly, and attribution's
    checkpointed path equals its whole graph; or every command is refused in one line."""
    folder = hf_zoo(family)
    if family in REFUSED:
        why, commands = REFUSED[family]
        for command in commands:
            extra = ["--reference", str(corpus / "ref.fr")] if command == "cxmi" else []
            argv = [command, "--hf-model", str(folder), "--source", str(corpus / "src.en")]
            argv += ["--docids", str(corpus / "docids"), "--output", str(tmp_path / command), *extra, "--cpu"]
            assert main(argv) == 1
            err = capsys.readouterr().err.strip()
            assert err.count("\n") == 0 and why in err and "Traceback" not in err, err
            assert not (tmp_path / command).exists()
        if "translate" not in commands:
            assert len(translate(family, folder, corpus, tmp_path / "t.txt", "--beam", "1")) == 12
        record(family, "refused", None)
        return
    assert_pcxmi_per_example(family, folder, Reference(family, folder), corpus, tmp_path)
    lines = translate(family, folder, corpus, tmp_path / "t.txt", "--batch-size", "8", "--beam", "1")
    assert len(lines) == 12
    capsys.readouterr()
    checkpointed_equals_whole_graph(family, folder, monkeypatch)
    record(family, "outside the zoo", TOL)
