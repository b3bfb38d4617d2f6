"""--dtype of fairseq checkpoints at inference (inference/precision.py): the option and its default
by device (a GPU mocked: none is needed), the dtype the model really runs in, the records that
name it (a run in another dtype is not reused), and the refusals, each one line before any model
loads. bfloat16 against float32 on a trained model: tests/contextual_mt/inference/test_translate.py."""

import json

import pytest
import torch

from contextual_mt.analysis.cxmi import CxmiOptions, run_cxmi
from contextual_mt.backends.fairseq.model import DocumentModel, FairseqModelOptions
from contextual_mt.errors import InputError
from contextual_mt.inference.precision import resolve_dtype
from contextual_mt.inference.registry import model_fingerprint
from contextual_mt.stage_record import differences
from tests.helpers import contextual_mt_cli


def no_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def fake_gpu(monkeypatch, capability):
    """torch.cuda as on a machine with one GPU of this compute capability (nothing runs on it)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: capability)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "Fake GPU")


def test_the_default_is_auto_and_auto_is_float32_on_cpu(monkeypatch):
    assert FairseqModelOptions("x.pt").dtype == "auto"
    no_gpu(monkeypatch)
    assert FairseqModelOptions("x.pt").resolved_dtype() == "float32"
    fake_gpu(monkeypatch, (9, 0))
    assert FairseqModelOptions("x.pt", cpu=True).resolved_dtype() == "float32"  # --cpu: the model stays on the CPU


@pytest.mark.parametrize("capability", [(9, 0), (8, 0), (7, 0), (6, 1)])
def test_auto_is_float32_on_a_gpu_too(monkeypatch, capability):
    # float16 ran at 0.47-0.89x float32's speed on an H200 (bench/RESULTS.md, "GPU figures in one run")
    fake_gpu(monkeypatch, capability)
    assert FairseqModelOptions("x.pt").resolved_dtype() == "float32"


def test_an_explicit_dtype_is_kept_where_the_device_has_it(monkeypatch):
    no_gpu(monkeypatch)
    assert [resolve_dtype(d) for d in ("float32", "bfloat16", "float16")] == ["float32", "bfloat16", "float16"]
    fake_gpu(monkeypatch, (7, 5))
    with pytest.raises(
        InputError,
        match=r"^--dtype bfloat16: this GPU \(Fake GPU, compute capability 7.x\) "
        r"has no bfloat16; give float16 or float32$",
    ):
        resolve_dtype("bfloat16")
    assert resolve_dtype("bfloat16", cpu=True) == "bfloat16" and resolve_dtype("float16") == "float16"
    fake_gpu(monkeypatch, (8, 0))
    assert resolve_dtype("bfloat16") == "bfloat16"


def test_a_bad_value_is_refused_when_the_options_are_built():
    with pytest.raises(
        InputError,
        match=r"^--dtype must be one of auto, float32, bfloat16, float16 "
        r"\(got 'half'\)$",
    ):
        FairseqModelOptions("x.pt", dtype="half")


def one_line_error(proc, output, *fragments):
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert len(errors) == 1 and proc.stderr.strip().splitlines()[-1] == errors[0], proc.stderr[-2000:]
    assert not output.exists()
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


@pytest.mark.parametrize("command", ["translate", "cxmi", "contrastive", "attribute"])
@pytest.mark.parametrize(
    "extra, fragment",
    [
        (["--dtype", "half"], "--dtype must be one of auto, float32, bfloat16, float16 (got 'half')"),
        (["--fp16", "--dtype", "bfloat16"], "--fp16 is --dtype float16: give one of them"),
        (["--dtype="], "--dtype must be one of auto, float32, bfloat16, float16 (got '')"),  # not auto in disguise
    ],
)
def test_bad_values_are_one_line_before_anything_is_read(command, extra, fragment, tmp_path):
    out = tmp_path / "out"
    files = {"--source": "missing.en", "--docids": "missing.docids", "--output": str(out)}
    if command in ("cxmi", "attribute"):
        files["--reference"] = "missing.fr"
    if command == "contrastive":
        files = {"--format": "voita", "--input": "missing.json", "--output": str(out), "--summary": str(out) + ".json"}
    argv = [command, "--path", "missing.pt", *[x for pair in files.items() for x in pair], *extra]
    one_line_error(contextual_mt_cli(*argv), out, fragment)


def test_half_precision_attribution_and_auto_with_hf_are_refused(tmp_path):
    out = tmp_path / "a.jsonl"
    for extra, fragment in (
        (
            ["--path", "missing.pt", "--dtype", "bfloat16"],
            "--dtype bfloat16: attribute computes the gradients of fairseq checkpoints in float32",
        ),
        (["--path", "missing.pt", "--fp16"], "--dtype float16: attribute computes"),
        (["--hf-model", "nowhere", "--dtype", "auto"], "--dtype auto: for fairseq checkpoints only"),
    ):
        proc = contextual_mt_cli(
            "attribute", *extra, "--source", "s.en", "--reference", "r.fr", "--docids", "d", "--output", str(out)
        )
        one_line_error(proc, out, fragment)


@pytest.mark.parametrize(
    "stage, extra", [("translate", []), ("pcxmi", []), ("contrastive", ["--sets", "voita:x.json"]), ("attribute", [])]
)
@pytest.mark.parametrize("under_make, name", [(False, "--dtype"), (True, "DTYPE")])
def test_pipeline_stages_refuse_a_bad_dtype_in_the_words_typed(stage, extra, under_make, name, tmp_path):
    from contextual_mt.pipeline.make_names import MAKE_ENV

    proc = contextual_mt_cli(
        "pipeline",
        stage,
        "--lang",
        "fr",
        "--root",
        str(tmp_path),
        *extra,
        "--dtype",
        "fp8",
        env={MAKE_ENV: "1"} if under_make else {MAKE_ENV: "0"},
    )
    one_line_error(proc, tmp_path / "results", f"{name} must be one of auto, float32, bfloat16, float16 (got 'fp8')")


def test_attribution_runs_and_records_float32_whatever_auto_means_here(monkeypatch, dynamic_model, raw_corpus):
    from contextual_mt.attribution.attribute import AttributeOptions, attribute_fingerprint

    fake_gpu(monkeypatch, (8, 0))  # a GPU with bfloat16 and float16: still float32
    o = AttributeOptions(
        FairseqModelOptions(str(dynamic_model)),
        str(raw_corpus / "test.en"),
        str(raw_corpus / "test.docids"),
        "a.jsonl",
        reference=str(raw_corpus / "test.fr"),
    )
    assert o.model.dtype == "float32" and attribute_fingerprint(o)["dtype"] == "float32"
    assert model_fingerprint(FairseqModelOptions(str(dynamic_model)))["dtype"] == "float32"


def cxmi(dynamic_model, raw_corpus, data_bin, out, dtype, **kw):
    model = FairseqModelOptions(str(dynamic_model), data=str(data_bin), dtype=dtype)
    return run_cxmi(
        CxmiOptions(
            model,
            str(raw_corpus / "test.en"),
            str(raw_corpus / "test.fr"),
            str(raw_corpus / "test.docids"),
            str(out),
            progress=False,
            **kw,
        )
    )


def test_records_name_the_dtype_and_another_dtype_is_not_reused(
    dynamic_model, raw_corpus, data_bin, tmp_path, monkeypatch
):
    no_gpu(monkeypatch)
    specs = [
        FairseqModelOptions(str(dynamic_model), data=str(data_bin), dtype=d) for d in ("auto", "float32", "bfloat16")
    ]
    auto, f32, bf16 = (model_fingerprint(s) for s in specs)
    assert auto == f32 and differences(f32, bf16, ("here", "there")) == ["dtype (here 'float32', there 'bfloat16')"]

    loaded = []
    original = DocumentModel.load.__func__

    def load(cls, options):
        model = original(cls, options)
        loaded.append({p.dtype for p in model.model.parameters()})
        return model

    monkeypatch.setattr(DocumentModel, "load", classmethod(load))
    out = tmp_path / "p.jsonl"
    first = cxmi(dynamic_model, raw_corpus, data_bin, out, "float32", skip_up_to_date=True)
    records32 = out.read_text()
    second = cxmi(dynamic_model, raw_corpus, data_bin, out, "bfloat16", skip_up_to_date=True)
    assert loaded == [{torch.float32}, {torch.bfloat16}]  # scored again, by the model cast to bfloat16
    assert (first["dtype"], second["dtype"], second["fingerprint"]["dtype"]) == ("float32", "bfloat16", "bfloat16")
    assert json.loads((tmp_path / "p.summary.json").read_text())["dtype"] == "bfloat16"
    assert out.read_text() != records32
    cxmi(dynamic_model, raw_corpus, data_bin, out, "bfloat16", skip_up_to_date=True)
    assert len(loaded) == 2  # the same dtype again: up to date

    # shards scored in different dtypes are not parts of one computation
    cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / "s0.jsonl", "float32", shard="0/2")
    cxmi(dynamic_model, raw_corpus, data_bin, tmp_path / "s1.jsonl", "bfloat16", shard="1/2")
    merged = tmp_path / "m.jsonl"
    proc = contextual_mt_cli(
        "cxmi-merge", str(tmp_path / "s0.jsonl"), str(tmp_path / "s1.jsonl"), "--output", str(merged)
    )
    one_line_error(proc, merged, "not a shard of the same computation", "differs in: dtype")


def test_the_translate_command_names_the_dtype(dynamic_model, raw_corpus, data_bin, tmp_path):
    out = tmp_path / "out.fr"
    proc = contextual_mt_cli(
        "translate",
        "--path",
        str(dynamic_model),
        "--data",
        str(data_bin),
        "--source",
        str(raw_corpus / "test.en"),
        "--docids",
        str(raw_corpus / "test.docids"),
        "--output",
        str(out),
        "--fp16",
        "--quiet",
    )
    n = len((raw_corpus / "test.en").read_text().splitlines())
    assert proc.returncode == 0 and f"wrote {n} lines to {out} (the model in float16)" in proc.stderr, proc.stderr


def test_nan_log_probabilities_are_one_line(dynamic_model, raw_corpus, data_bin):
    """A half-precision model whose activations overflow gives NaN: an error, not NaN scores or
    tokens picked at random (here the weights themselves are made NaN)."""
    from commandkit.documents import document_starts
    from contextual_mt.backends.fairseq.scoring import FairseqScoringBackend
    from contextual_mt.backends.fairseq.translator import DocumentTranslator

    model = DocumentModel.load(FairseqModelOptions(str(dynamic_model), data=str(data_bin), dtype="bfloat16"))
    with torch.no_grad():
        model.model.decoder.output_projection.weight[:] = float("nan")
    src, ref, ids = ((raw_corpus / f"test.{x}").read_text().splitlines() for x in ("en", "fr", "docids"))
    message = r"in bfloat16 gave NaN log-probabilities \(its activations overflow .*; run it with --dtype float32"
    with pytest.raises(InputError, match="beam search: the model " + message):
        DocumentTranslator(model).translate(src, ids, progress=False)
    backend = FairseqScoringBackend(model)
    backend.load(src, ref, document_starts(ids))
    with pytest.raises(InputError, match=f"{dynamic_model}: the model " + message):
        backend.token_log_probs(list(range(len(src))), context=True)
