"""translate --unit document --hf-model: chunks of whole sentences within the budget, each
translated in one generation with the previous chunk as context; the JSONL records and their line
ranges; resuming from OUTPUT.partial; the refusals."""

import json

import pytest
import torch

from commandkit.documents import document_spans
from contextual_mt.backends.hf.document_translator import HFChunkTranslator
from contextual_mt.backends.hf.model import HFModel
from contextual_mt.backends.hf.options import HFModelOptions
from contextual_mt.backends.hf.translator import HFDocumentTranslator
from contextual_mt.cli import main
from contextual_mt.errors import InputError
from contextual_mt.inference.decoding import DecodingOptions
from contextual_mt.inference.document_output import read_document_records
from contextual_mt.inference.document_unit import document_fingerprint, joined, pack, plan_documents
from contextual_mt.inference.translate import TranslateOptions, translate_document_files, translate_files
from tests.hf_models import EN, FR

GPT2 = {"src_lang": "English", "tgt_lang": "French"}


def corpus(tmp_path, lines, ids, refs=None):
    for name, content in (("src.en", lines), ("docids", ids), ("ref.fr", refs)):
        if content is not None:
            (tmp_path / name).write_text("".join(x + "\n" for x in content))
    return tmp_path


def doc_options(model, folder, out, max_source_tokens=None, gold=False, **decoding):
    decoding = {"beam": 2, "max_len_b": 6, "batch_size": 3, **decoding}
    return TranslateOptions(
        model,
        str(folder / "src.en"),
        str(folder / "docids"),
        str(out),
        gold_target_context=str(folder / "ref.fr") if gold else None,
        decoding=DecodingOptions(**decoding),
        progress=False,
        unit="document",
        max_source_tokens=max_source_tokens,
    )


def spy_generate(monkeypatch):
    """The prompts every generation of the translators reads: (encoder ids, prefix, new tokens)."""
    seen = []
    original = HFDocumentTranslator.generate

    def generate(self, prompts):
        seen.extend(prompts)
        return original(self, prompts)

    monkeypatch.setattr(HFDocumentTranslator, "generate", generate)
    return seen


@pytest.mark.parametrize(
    "tokens,budget,expected",
    [
        ([4, 3, 5, 2, 6, 1], 8, [[0, 1], [2, 3], [4, 5]]),
        # by the sum, 4 lines (8 tokens) fit; as one text (+3 joins) they do not: cut back to 3
        ([2, 2, 2, 2, 2, 2, 2], 9, [[0, 1, 2], [3, 4, 5], [6]]),
    ],
)
def test_pack_keeps_whole_lines_within_the_budget_when_a_joined_text_costs_more(tokens, budget, expected):
    count = lambda run: sum(tokens[i] for i in run) + len(run) - 1  # noqa: E731  (one token per join)
    chunks = pack(list(range(len(tokens))), count, budget)
    assert chunks == expected and all(count(c) <= budget for c in chunks)


@pytest.mark.parametrize("model,kw", [("marian", {}), ("gpt2", GPT2)])
@pytest.mark.parametrize("budget", [20, 30, 60])
def test_chunks_hold_whole_sentences_within_the_budget(request, model, kw, budget):
    translator = HFChunkTranslator(HFModel.load(HFModelOptions(str(request.getfixturevalue(model)), **kw)))
    ids = ["a"] * 7 + ["b"] * 5
    plans = plan_documents(EN, ids, document_spans(ids), translator.source_tokens, budget, "--max-source-tokens", "s")
    assert [p.doc for p in plans] == ["a", "b"] and [p.first_line for p in plans] == [1, 8]
    for p, (a, b) in zip(plans, document_spans(ids), strict=True):
        assert [i for c in p.chunks for i in c] == list(range(a, b))  # every line once, in order
        for k, c in enumerate(p.chunks):
            assert translator.source_tokens(joined(EN, c)) <= budget
            if k + 1 < len(p.chunks):  # greedy: the next sentence would not have fitted
                longer = [*c, p.chunks[k + 1][0]]
                total = sum(translator.source_tokens(EN[i]) for i in longer)
                assert total > budget or translator.source_tokens(joined(EN, longer)) > budget
    assert len(plans[0].chunks) > 1 if budget < 60 else len(plans[0].chunks) <= 2


def test_a_document_that_fits_is_one_generation_of_its_joined_text(marian, tmp_path):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    folder = corpus(tmp_path, EN[:4] + EN[6:9], ["a"] * 4 + ["b"] * 3)
    out = tmp_path / "docs.jsonl"
    assert translate_document_files(doc_options(HFModelOptions(str(marian)), folder, out)) == 2
    records = read_document_records(str(out))
    tok = AutoTokenizer.from_pretrained(marian)
    model = AutoModelForSeq2SeqLM.from_pretrained(marian).eval()
    for record, lines in zip(records, (EN[:4], EN[6:9]), strict=True):
        with torch.no_grad():
            ids = model.generate(
                input_ids=tok(" ".join(lines), return_tensors="pt").input_ids,
                decoder_input_ids=torch.tensor([[model.config.decoder_start_token_id]]),
                num_beams=2,
                max_new_tokens=6,
                do_sample=False,
                early_stopping=True,
            )
        expected = " ".join(tok.decode(ids[0, 1:], skip_special_tokens=True).split())
        assert len(record.chunks) == 1 and record.text == record.chunks[0].text == expected


def test_the_previous_chunk_is_the_seq2seq_context(marian, tmp_path, monkeypatch):
    folder = corpus(tmp_path, EN[:6], ["a"] * 6)
    seen = spy_generate(monkeypatch)
    out = tmp_path / "docs.jsonl"
    translate_document_files(doc_options(HFModelOptions(str(marian)), folder, out, max_source_tokens=25))
    (record,) = read_document_records(str(out))
    assert len(record.chunks) >= 3 and record.text == " ".join(c.text for c in record.chunks if c.text)
    hf = HFModel.load(HFModelOptions(str(marian)))
    t = HFDocumentTranslator(hf, DecodingOptions(max_len_b=6))
    lay = t.layout
    assert seen[0][0] == lay.source_ids(record.chunks[0].source) and seen[0][1] == lay.start + t.lead
    for before, chunk, prompt in zip(record.chunks[:-1], record.chunks[1:], seen[1:], strict=True):
        assert prompt[0] == lay.source_ids(before.source + " " + chunk.source)
        assert prompt[1] == lay.start + t.lead + lay.target_context_ids([before.text])


def test_the_previous_chunk_is_the_prompts_example_pair(gpt2, tmp_path, monkeypatch):
    folder = corpus(tmp_path, EN[:5], ["a"] * 5, FR[:5])
    seen = spy_generate(monkeypatch)
    out = tmp_path / "docs.jsonl"
    options = HFModelOptions(str(gpt2), **GPT2)
    translate_document_files(doc_options(options, folder, out, max_source_tokens=20, gold=True, max_len_b=5))
    (record,) = read_document_records(str(out))
    assert len(record.chunks) >= 2
    hf = HFModel.load(options)
    lay = HFDocumentTranslator(hf).layout
    prompts = {p[1] for p in seen}
    for k, chunk in enumerate(record.chunks):
        pairs = []
        if k:  # with --gold-target-context: the previous chunk's references
            before = record.chunks[k - 1]
            refs = " ".join(FR[before.lines[0] - 1 : before.lines[1]])
            pairs = [(before.source, refs)]
        assert lay.lm_ids(hf.prompt.render_prompt(chunk.source, pairs), special=True) in prompts


def test_the_previous_chunk_and_its_translation_are_a_chat_turn(gpt2_chat, tmp_path, monkeypatch):
    from transformers import AutoTokenizer

    folder = corpus(tmp_path, EN[:4], ["a"] * 4)
    seen = spy_generate(monkeypatch)
    out = tmp_path / "docs.jsonl"
    options = HFModelOptions(str(gpt2_chat))
    translate_document_files(doc_options(options, folder, out, max_source_tokens=20, max_len_b=5))
    (record,) = read_document_records(str(out))
    assert len(record.chunks) >= 2
    hf = HFModel.load(options)
    lay, tok = HFDocumentTranslator(hf).layout, AutoTokenizer.from_pretrained(gpt2_chat)
    for k, chunk in enumerate(record.chunks):
        pairs = [(record.chunks[k - 1].source, record.chunks[k - 1].text)] if k else []
        text = tok.apply_chat_template(
            hf.prompt.chat_messages(chunk.source, pairs), tokenize=False, add_generation_prompt=True
        )
        assert seen[k][1] == lay.lm_ids(text, special=False)


def test_records_line_ranges_and_empty_lines(marian, tmp_path):
    lines = [EN[0], EN[1], "", EN[2], EN[3], "", "  ", EN[4], "", EN[5]]
    ids = ["d1"] * 5 + ["empty"] * 2 + ["d3"] * 3
    folder = corpus(tmp_path, lines, ids)
    out = tmp_path / "docs.jsonl"
    argv = ["translate", "--hf-model", str(marian), "--source", str(folder / "src.en"), "--docids"]
    argv += [str(folder / "docids"), "--output", str(out), "--unit", "document", "--max-source-tokens", "24"]
    assert main([*argv, "--max-len-b", "6", "--beam", "1", "--cpu", "--quiet"]) == 0
    raw = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["doc"] for r in raw] == ["d1", "empty", "d3"] and all(set(r) == {"doc", "text", "chunks"} for r in raw)
    d1, empty, d3 = read_document_records(str(out))
    assert [c.lines for c in d1.chunks] == [(1, 2), (4, 5)]  # line 3 (empty) is no chunk's
    assert [c.source for c in d1.chunks] == [f"{EN[0]} {EN[1]}", f"{EN[2]} {EN[3]}"]
    assert empty.text == "" and empty.chunks == ()
    # an empty line inside a chunk: in its range, not in its source
    assert [(c.lines, c.source) for c in d3.chunks] == [((8, 10), f"{EN[4]} {EN[5]}")] and d3.text
    assert not (tmp_path / "docs.jsonl.partial").exists()


def test_resume_translates_only_the_documents_not_in_the_partial(marian, tmp_path, monkeypatch):
    folder = corpus(tmp_path, EN, ["a"] * 6 + ["b"] + ["c"] * 5)
    model = HFModelOptions(str(marian))
    clean = tmp_path / "clean.jsonl"
    translate_document_files(doc_options(model, folder, clean, max_source_tokens=25))
    out = tmp_path / "docs.jsonl"
    partial = tmp_path / "docs.jsonl.partial"
    original, calls = HFChunkTranslator.translate_chunks, []

    def interrupted(self, requests):
        calls.append([r.where for r in requests])
        if len(calls) > 1:
            raise KeyboardInterrupt
        return original(self, requests)

    with monkeypatch.context() as m:  # interrupted after the first wave: b (one chunk) is finished
        m.setattr(HFChunkTranslator, "translate_chunks", interrupted)
        with pytest.raises(KeyboardInterrupt):
            translate_document_files(doc_options(model, folder, out, max_source_tokens=25))
    kept = [json.loads(x) for x in partial.read_text().splitlines()]
    assert "fingerprint" in kept[0] and [(r["line"], r["doc"]) for r in kept[1:]] == [(7, "b")] and not out.exists()
    calls.clear()
    with monkeypatch.context() as m:
        m.setattr(HFChunkTranslator, "translate_chunks", lambda self, r: calls.append(r) or original(self, r))
        translate_document_files(doc_options(model, folder, out, max_source_tokens=25))
    assert out.read_text() == clean.read_text() and not partial.exists()
    assert calls and all(not r.where.endswith(":7") for wave in calls for r in wave)


def test_an_interruption_inside_a_wave_keeps_the_documents_of_the_batches_decoded(marian, tmp_path, monkeypatch):
    """Documents of one chunk are all in the first wave: each batch's documents reach the partial
    as soon as it is decoded, not when the whole wave (here, the whole run) is done."""
    folder = corpus(tmp_path, EN[:5], ["a", "b", "c", "d", "e"])
    model = HFModelOptions(str(marian))
    clean = tmp_path / "clean.jsonl"
    translate_document_files(doc_options(model, folder, clean, batch_size=1))
    out, partial = tmp_path / "docs.jsonl", tmp_path / "docs.jsonl.partial"
    original, calls = HFDocumentTranslator.generate, []

    def interrupted(self, prompts):
        calls.append(prompts)
        if len(calls) > 2:
            raise KeyboardInterrupt
        return original(self, prompts)

    with monkeypatch.context() as m:
        m.setattr(HFDocumentTranslator, "generate", interrupted)
        with pytest.raises(KeyboardInterrupt):
            translate_document_files(doc_options(model, folder, out, batch_size=1))
    kept = [json.loads(x) for x in partial.read_text().splitlines()[1:]]
    assert len(kept) == 2 and not out.exists()
    seen = spy_generate(monkeypatch)
    translate_document_files(doc_options(model, folder, out, batch_size=1))
    assert out.read_text() == clean.read_text() and len(seen) == 3 and not partial.exists()


def test_a_written_partial_is_resumed_and_another_computations_refused(marian, tmp_path, monkeypatch):
    folder = corpus(tmp_path, EN[:5], ["a"] * 2 + ["b"] * 3)
    model = HFModelOptions(str(marian))
    out = tmp_path / "docs.jsonl"
    partial = tmp_path / "docs.jsonl.partial"
    first = {"line": 1, "doc": "a", "text": "RESUMED", "chunks": [{"lines": [1, 2], "source": "x", "text": "RESUMED"}]}

    def write_partial(options):
        fp = json.dumps({"fingerprint": document_fingerprint(options)})
        partial.write_text(fp + "\n" + json.dumps(first) + "\n")

    write_partial(doc_options(model, folder, out, beam=3))
    with pytest.raises(InputError, match=r"different computation \(differs in: beam \(partial 3, now 2\)"):
        translate_document_files(doc_options(model, folder, out))
    assert not out.exists() and partial.exists()
    write_partial(doc_options(model, folder, out))
    seen = spy_generate(monkeypatch)
    translate_document_files(doc_options(model, folder, out))
    a, b = read_document_records(str(out))
    assert a.text == "RESUMED" and b.doc == "b" and len(seen) == len(b.chunks) == 1
    write_partial(doc_options(model, folder, out, beam=3))
    again = doc_options(model, folder, out)
    again.resume = False  # --overwrite: the partial is discarded
    translate_document_files(again)
    assert read_document_records(str(out))[0].text != "RESUMED" and not partial.exists()


def test_refusals_leave_no_output(marian, tmp_path):
    folder = corpus(tmp_path, [EN[1], EN[0]], ["a"] * 2)
    model = HFModelOptions(str(marian))
    with pytest.raises(InputError, match=r"src.en:2: 11 tokens, more than --max-source-tokens \(8\)"):
        translate_document_files(doc_options(model, folder, tmp_path / "o.jsonl", max_source_tokens=8, beam=1))
    assert not (tmp_path / "o.jsonl").exists() and not (tmp_path / "o.jsonl.partial").exists()
    with pytest.raises(InputError, match="--decoding parallel and --parallel-window are for --unit sentence"):
        doc_options(model, folder, tmp_path / "o.jsonl", decoding="parallel")
    with pytest.raises(InputError, match="--unit paragraph: expected one of sentence, document"):
        TranslateOptions(model, "s", "d", "o", unit="paragraph")
    with pytest.raises(ValueError, match="translate_document_files"):
        translate_files(doc_options(model, folder, tmp_path / "o.jsonl"))


@pytest.mark.parametrize(
    "budget,fragment,loads",
    [
        # over the 128 positions of the model's config: refused before its weights load
        ("1000000", "--max-source-tokens 1000000: more than the 128 positions of", False),
        # within them, but no chunk that long fits beside its special tokens: refused once the
        # tokenizer counts them, before any warning and any generation
        ("128", "--max-source-tokens 128: a source text of more than 127 tokens does not fit", True),
    ],
)
def test_a_budget_over_the_model_positions_is_one_line(
    marian, tmp_path, monkeypatch, capsys, caplog, budget, fragment, loads
):
    """Issue 50.4: one error line naming the option, no warning above it, nothing written."""
    import logging

    import transformers

    from contextual_mt.backends.hf.translator import HFDocumentTranslator

    folder = corpus(tmp_path, EN * 3, ["d"] * 36)  # one document of short lines: chunks as long as the budget
    loaded = []
    original = transformers.AutoModelForSeq2SeqLM.from_pretrained
    monkeypatch.setattr(
        transformers.AutoModelForSeq2SeqLM,
        "from_pretrained",
        lambda *a, **k: loaded.append(True) or original(*a, **k),
    )
    monkeypatch.setattr(HFDocumentTranslator, "generate", lambda *a: pytest.fail("generated"))
    out = tmp_path / "docs.jsonl"
    argv = ["translate", "--hf-model", str(marian), "--source", str(folder / "src.en"), "--docids"]
    argv += [str(folder / "docids"), "--output", str(out), "--unit", "document", "--max-source-tokens", budget]
    capsys.readouterr()
    with caplog.at_level(logging.WARNING):
        assert main([*argv, "--cpu", "--quiet"]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith("error: ") and fragment in err[0], err
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert bool(loaded) is loads
    assert not out.exists() and not (tmp_path / "docs.jsonl.partial").exists()


def test_an_untrained_model_is_said_to_be_so_whatever_the_unit(marian, tmp_path, caplog):
    """Issue 50.4: the tiny random Marian's translations, sentence by sentence or chunk by chunk,
    are degenerate; both units say so in the one warning of model_health."""
    import logging

    folder = corpus(tmp_path, EN, ["a"] * 6 + ["b"] * 6)
    model = HFModelOptions(str(marian), cpu=True)
    sentences = doc_options(model, folder, tmp_path / "out.fr", max_len_b=8, beam=1, batch_size=12)
    sentences.unit, sentences.max_source_tokens = "sentence", None
    documents = doc_options(model, folder, tmp_path / "out.jsonl", max_len_b=8, beam=1, batch_size=12)
    warned = {}
    for unit, run in (
        ("sentence", lambda: translate_files(sentences)),
        ("document", lambda: translate_document_files(documents)),
    ):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="contextual_mt.inference.model_health"):
            run()
        warned[unit] = [r.getMessage() for r in caplog.records if "the model looks untrained" in r.getMessage()]
    assert len(warned["sentence"]) == 1 and warned["sentence"][0].startswith(str(tmp_path / "out.fr")), warned
    assert len(warned["document"]) == 1 and warned["document"][0].startswith(str(tmp_path / "out.jsonl")), warned
