"""Doc-COMET in contextual-mt score and make score: the inputs given to unbabel-comet's document-
context mode, checked with a stand-in model that records them (tests/contextual_mt/test_comet.py
scores with the real unbabel-comet on a tiny model)."""

import json
import sys
import types

import pytest

from contextual_mt.errors import InputError
from contextual_mt.metrics import DOC_COMET_CONTEXT, comet_version, score, summary_line, with_context
from contextual_mt.pipeline.score_stage import ScoreStageOptions, format_scores
from tests.helpers import contextual_mt_cli

# two documents: a has three sentences (the third has two of context), b two (none from a)
SRCS = ["A1 src", "A2 src", "A3 src", "B1 src", "B2 src"]
HYPS = ["A1 hyp", "A2 hyp", "A3 hyp", "B1 hyp", "B2 hyp"]
REFS = ["A1 ref", "A2 ref", "A3 ref", "B1 ref", "B2 ref"]
DOCS = ["a", "a", "a", "b", "b"]
MODEL = "Unbabel/wmt22-comet-da"


class FakeComet:
    """The part of unbabel-comet's model that contextual-mt uses; like RegressionMetric,
    enable_context() turns the mode on only with average pooling. Records every predict."""

    dtype = "torch.float32"

    def __init__(self, pool="avg"):
        self.pool, self.use_context, self.calls = pool, False, []
        self.encoder = types.SimpleNamespace(tokenizer=types.SimpleNamespace(sep_token="</s>"))

    def enable_context(self):
        if self.pool == "avg":
            self.use_context = True

    def predict(self, data, batch_size, gpus, progress_bar):
        self.calls.append({"data": data, "use_context": self.use_context, "batch_size": batch_size})
        scores = [0.1 * (i + 1) + (0.5 if self.use_context else 0.0) for i in range(len(data))]
        return types.SimpleNamespace(scores=scores, system_score=sum(scores) / len(scores))


@pytest.fixture
def fake(monkeypatch):
    model = FakeComet()
    module = types.SimpleNamespace(
        download_model=lambda name: f"/models/{name}.ckpt", load_from_checkpoint=lambda path: model
    )
    monkeypatch.setitem(sys.modules, "comet", module)
    return model


def signature(context=DOC_COMET_CONTEXT):
    return f"Doc-COMET|model:{MODEL}|context:{context}|mtctx:ref|sep:</s>|precision:fp32|version:{comet_version()}"


def test_paper_default_context_is_two_everywhere():
    assert DOC_COMET_CONTEXT == 2 and ScoreStageOptions("fr").doc_comet_context == DOC_COMET_CONTEXT


def test_exact_inputs_given_to_the_context_mode(fake):
    r = score(HYPS, REFS, DOCS, SRCS, comet_model=MODEL, comet_batch_size=4)
    plain, doc = fake.calls
    assert not plain["use_context"] and plain["data"][2] == {"src": "A3 src", "mt": "A3 hyp", "ref": "A3 ref"}
    assert doc["use_context"] and doc["batch_size"] == 4
    # the hypothesis is preceded by the reference's sentences; b starts without a's
    assert doc["data"] == [
        {"src": "A1 src", "mt": "A1 hyp", "ref": "A1 ref"},
        {"src": "A1 src </s> A2 src", "mt": "A1 ref </s> A2 hyp", "ref": "A1 ref </s> A2 ref"},
        {
            "src": "A1 src </s> A2 src </s> A3 src",
            "mt": "A1 ref </s> A2 ref </s> A3 hyp",
            "ref": "A1 ref </s> A2 ref </s> A3 ref",
        },
        {"src": "B1 src", "mt": "B1 hyp", "ref": "B1 ref"},
        {"src": "B1 src </s> B2 src", "mt": "B1 ref </s> B2 hyp", "ref": "B1 ref </s> B2 ref"},
    ]
    assert not fake.use_context  # switched off again: the same model also gives sentence-level COMET
    assert r["doc_comet"]["signature"] == signature() and r["doc_comet"]["context"] == 2
    assert r["doc_comet"]["score"] == pytest.approx(0.8) and r["comet"]["score"] == pytest.approx(0.3)
    assert r["comet"]["signature"] == f"COMET|model:{MODEL}|precision:fp32|version:{comet_version()}"
    assert "d_bleu" in r  # d-BLEU stays
    assert summary_line(r).endswith(f"| COMET 0.3000 | Doc-COMET 0.8000 ({signature()})")


def test_context_size_and_document_boundaries():
    assert with_context(HYPS, REFS, DOCS, 1, "</s>")[2] == "A2 ref </s> A3 hyp"
    # a document id seen again later is a new document (maximal runs, as for d-BLEU)
    assert with_context(["x", "y", "z"], ["X", "Y", "Z"], ["a", "b", "a"], 2, "<sep>") == ["x", "y", "z"]


def test_context_option_reaches_the_signature(fake):
    r = score(HYPS, REFS, DOCS, SRCS, comet_model=MODEL, doc_comet_context=1)
    assert fake.calls[1]["data"][2]["src"] == "A2 src </s> A3 src"
    assert r["doc_comet"]["signature"] == signature(1)


def test_no_docids_no_doc_comet(fake):
    r = score(HYPS, REFS, srcs=SRCS, comet_model=MODEL)
    assert "comet" in r and "doc_comet" not in r and len(fake.calls) == 1


def test_model_without_context_mode_is_skipped_with_a_note(fake, capsys):
    fake.pool = "cls"  # e.g. a UnifiedMetric (XCOMET, CometKiwi): enable_context() does nothing
    r = score(HYPS, REFS, DOCS, SRCS, comet_model=MODEL)
    assert "doc_comet" not in r and "comet" in r and len(fake.calls) == 1
    assert "Doc-COMET: skipped" in capsys.readouterr().err


def cli_error(*args):
    proc = contextual_mt_cli("score", *args)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


def write_files(tmp_path, docs=DOCS):
    for name, rows in (("src", SRCS), ("hyp", HYPS), ("ref", REFS), ("ids", docs)):
        (tmp_path / name).write_text("\n".join(rows) + "\n")
    return [
        "--source",
        tmp_path / "src",
        "--hyp",
        tmp_path / "hyp",
        "--ref",
        tmp_path / "ref",
        "--docids",
        tmp_path / "ids",
        "--comet-model",
        MODEL,
    ]


def test_cli_json_and_summary(fake, tmp_path):
    out = tmp_path / "scores.json"
    proc = contextual_mt_cli("score", *write_files(tmp_path), "--doc-comet-context", "1", "--output", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith(f"Doc-COMET 0.8000 ({signature(1)})")
    data = json.loads(out.read_text())
    assert data["doc_comet"]["signature"] == signature(1) and len(data["doc_comet"]["segments"]) == 5


def test_cli_bad_input_is_one_line_and_no_output(fake, tmp_path):
    files = write_files(tmp_path, DOCS[:4])
    out = tmp_path / "scores.json"
    assert cli_error(*files, "--output", out) == f"error: {tmp_path / 'ids'}: has 4 lines but {tmp_path / 'ref'} has 5"
    files = write_files(tmp_path)
    assert (
        cli_error(*files, "--doc-comet-context", "0", "--output", out)
        == "error: --doc-comet-context must be >= 1 (got 0)"
    )
    assert not out.exists() and fake.calls == []
    with pytest.raises(InputError, match="--doc-comet-context"):
        ScoreStageOptions("fr", str(tmp_path), doc_comet_context=0)


def test_make_score_table_has_doc_comet_and_its_signature():
    row = {
        "bleu": {"score": 1.0},
        "chrf": {"score": 2.0},
        "d_bleu": {"score": 3.0},
        "comet": {"score": 0.3},
        "doc_comet": {"score": 0.8, "signature": signature()},
    }
    table = format_scores({"systems": {"sentence": row, "context": row}}).splitlines()
    assert table[0].split()[-2:] == ["COMET", "Doc-COMET"]
    assert table[1].split()[-2:] == ["0.3000", "0.8000"] and table[-1] == signature() and len(table) == 4
    long = format_scores({"systems": {"sentence": row, "a-long-system-output.jsonl": row}}).splitlines()
    assert long[0].index("BLEU") == long[1].index("1.00") == long[2].index("1.00")  # the columns stay aligned
