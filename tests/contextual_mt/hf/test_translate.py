"""translate --hf-model: batched waves give what one-sentence-at-a-time generate gives with the
same context (the previous translations), for a seq2seq model and a decoder-only LM."""

import pytest
import torch

from contextual_mt.backends.hf.model import HFModel
from contextual_mt.backends.hf.options import HFModelOptions
from contextual_mt.backends.hf.translator import HFDocumentTranslator
from contextual_mt.inference.decoding import DecodingOptions
from contextual_mt.inference.translate import TranslateOptions, translate_files
from tests.hf_models import EN, FR

DOCS = ["a"] * 6 + ["b"] * 6


@torch.no_grad()
def one_by_one_seq2seq(folder, beam, new_tokens):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    out = []
    for i, src in enumerate(EN):
        first = i in (0, 6)
        text = src if first else f"{EN[i - 1]} {src}"
        forced = [model.config.decoder_start_token_id]
        if not first:
            forced += tok(text_target=out[-1], add_special_tokens=False).input_ids if out[-1] else []
        ids = model.generate(
            input_ids=tok(text, return_tensors="pt").input_ids,
            decoder_input_ids=torch.tensor([forced]),
            num_beams=beam,
            max_new_tokens=new_tokens,
            do_sample=False,
            early_stopping=beam > 1,
        )
        out.append(" ".join(tok.decode(ids[0, len(forced) :], skip_special_tokens=True).split()))
    return out


@pytest.mark.parametrize("beam", [1, 3])
def test_seq2seq_waves_equal_one_sentence_at_a_time(marian, beam):
    translator = HFDocumentTranslator(
        HFModel.load(HFModelOptions(str(marian))), DecodingOptions(beam=beam, max_len_b=6, batch_size=4)
    )
    assert translator.translate(EN, DOCS, progress=False) == one_by_one_seq2seq(marian, beam, 6)


@pytest.mark.parametrize("window", [2, 6])
def test_seq2seq_parallel_decoding_equals_one_sentence_at_a_time(marian, window):
    # rounds of `window` sentences per document: the sequential output exactly
    translator = HFDocumentTranslator(
        HFModel.load(HFModelOptions(str(marian))),
        DecodingOptions(beam=3, max_len_b=6, batch_size=4, decoding="parallel", window=window),
    )
    out = translator.translate(EN, DOCS, progress=False)
    assert out == one_by_one_seq2seq(marian, 3, 6)
    assert out.rounds.rounds <= 6 and out.rounds.translated[0] == 2 * window


@pytest.mark.parametrize("gold", [True, False])
def test_gold_or_no_target_context_is_one_pass_with_the_waves_lines(marian, gold):
    """With references as target context (or none), no sentence waits for another: the one
    driver decodes all sentences in one pass, batched freely, and gives the waves' lines."""
    options = HFModelOptions(str(marian), target_context_size=1 if gold else 0)
    decoding = DecodingOptions(beam=3, max_len_b=6, batch_size=4)
    translator = HFDocumentTranslator(HFModel.load(options), decoding)
    targets = FR if gold else None
    one_pass = translator.translate(EN, DOCS, targets, progress=False)
    assert one_pass.record == {"decoding": "one pass"} and one_pass.rounds is None
    decoding.free_batching = False  # the waves, one sentence per document at a time
    waves = translator.translate(EN, DOCS, targets, progress=False)
    assert one_pass == waves and waves.record == {"decoding": "one pass"}
    assert translator.translate(EN, DOCS, progress=False).record == (
        {"decoding": "sequential"} if gold else {"decoding": "one pass"}
    )


def test_decoder_only_with_gold_context_and_the_cli(gpt2, corpus, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    options = HFModelOptions(str(gpt2), src_lang="English", tgt_lang="French")
    hyps = HFDocumentTranslator(HFModel.load(options), DecodingOptions(beam=1, max_len_b=5)).translate(
        EN, DOCS, gold_targets=FR, progress=False
    )
    tok = AutoTokenizer.from_pretrained(gpt2)
    model = AutoModelForCausalLM.from_pretrained(gpt2).eval()
    newline = tok("\n", add_special_tokens=False).input_ids[0]
    for i in (0, 4):
        pairs = f"English: {EN[i - 1]}\nFrench: {FR[i - 1]}\n" if i else ""
        prompt = tok(f"Translate from English to French.\n{pairs}English: {EN[i]}\nFrench:", return_tensors="pt")
        ids = model.generate(
            **prompt,
            max_new_tokens=5,
            do_sample=False,
            num_beams=1,
            eos_token_id=[tok.eos_token_id, newline],
            pad_token_id=tok.eos_token_id,
        )
        text = tok.decode(ids[0, prompt.input_ids.shape[1] :], skip_special_tokens=True).split("\n")[0]
        assert hyps[i] == " ".join(text.split())
    out = tmp_path / "hyp.fr"
    written = translate_files(
        TranslateOptions(
            options,
            str(corpus / "src.en"),
            str(corpus / "docids"),
            str(out),
            gold_target_context=str(corpus / "ref.fr"),
            decoding=DecodingOptions(beam=1, max_len_b=5),
            progress=False,
        )
    )
    assert written == hyps and out.read_text().splitlines() == hyps
