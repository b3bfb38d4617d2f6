"""COMET and Doc-COMET with the real unbabel-comet (installed by make install) on a tiny model
built offline (tests/hf_models.py, build_comet): `contextual-mt score` gives, segment by
segment, what unbabel-comet's own API gives (``predict``, and ``enable_context()`` for
Doc-COMET); and how unbabel-comet's failures reach the user."""

import hashlib
import json
import subprocess
import sys
import time
from importlib.metadata import version

import pytest

from contextual_mt.errors import InputError
from contextual_mt.metrics import score
from muda.evaluation.metrics import quiet_comet
from tests.helpers import BIN
from tests.hf_models import EN, FR

# three documents of 5, 4 and 3 sentences; the hypotheses differ from the references here and there
SRCS = EN
REFS = FR
HYPS = [
    f.replace("est", "sont") if i % 3 == 0 else f.replace(" .", " !") if i % 3 == 1 else f for i, f in enumerate(FR)
]
DOCS = ["a"] * 5 + ["b"] * 4 + ["c"] * 3
BATCH = 4


def own_scores(model, srcs, hyps, refs, context=False):
    """unbabel-comet's own API, as its documentation uses it (Doc-COMET: enable_context)."""
    model.use_context = False
    if context:
        model.enable_context()
    data = [{"src": s, "mt": h, "ref": r} for s, h, r in zip(srcs, hyps, refs, strict=True)]
    with quiet_comet():  # Lightning's banners (its numbers are the same)
        out = model.predict(data, batch_size=BATCH, gpus=0, progress_bar=False)
    model.use_context = False
    return list(out.scores), out.system_score


def paper_inputs(sep, size=2):
    """Doc-COMET's inputs written out here (not with contextual_mt's code): each sentence after up
    to ``size`` previous ones of its document, the hypothesis after the reference's."""
    srcs, hyps, refs = [], [], []
    for i, doc in enumerate(DOCS):
        prev = [j for j in range(max(0, i - size), i) if DOCS[j] == doc]
        srcs.append(f" {sep} ".join([SRCS[j] for j in prev] + [SRCS[i]]))
        hyps.append(f" {sep} ".join([REFS[j] for j in prev] + [HYPS[i]]))
        refs.append(f" {sep} ".join([REFS[j] for j in prev] + [REFS[i]]))
    return srcs, hyps, refs


@pytest.fixture(scope="module")
def own(comet_model):
    with quiet_comet():
        import comet

        return comet.load_from_checkpoint(str(comet_model / "checkpoints" / "model.ckpt"))


@pytest.fixture(scope="module")
def own_comet(own):
    """COMET's segment scores and system score from unbabel-comet's own predict."""
    return own_scores(own, SRCS, HYPS, REFS)


def checkpoint_id(folder):
    return "sha256:" + hashlib.sha256((folder / "checkpoints" / "model.ckpt").read_bytes()).hexdigest()[:12]


def test_score_command_equals_comets_own_predict(comet_model, own, own_comet, tmp_path):
    """`contextual-mt score` as a user runs it (a new process): COMET and Doc-COMET per segment
    as unbabel-comet's API gives them; the signature names the checkpoint by its hash and the
    precision; none of Lightning's banners, tips or warnings on the terminal."""
    files = {}
    for name, rows in (("src", SRCS), ("hyp", HYPS), ("ref", REFS), ("ids", DOCS)):
        files[name] = tmp_path / name
        files[name].write_text("\n".join(rows) + "\n")
    out = tmp_path / "scores.json"
    proc = subprocess.run(
        [
            str(BIN / "contextual-mt"),
            "score",
            "--source",
            files["src"],
            "--hyp",
            files["hyp"],
            "--ref",
            files["ref"],
            "--docids",
            files["ids"],
            "--comet-model",
            comet_model,
            "--comet-batch-size",
            str(BATCH),
            "--output",
            out,
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for chatter in (
        "GPU available",
        "TPU available",
        "Tip",
        "💡",
        "litlogger",
        "Encoder model frozen",
        "srun",
        "pkg_resources",
        "Warning",
        "warn",
    ):
        assert chatter not in proc.stderr, proc.stderr[-3000:]
    result = json.loads(out.read_text())

    segments, system = own_comet
    assert max(abs(a - b) for a, b in zip(result["comet"]["segments"], segments, strict=True)) < 1e-6
    assert result["comet"]["score"] == pytest.approx(system, abs=1e-6)
    sep = own.encoder.tokenizer.sep_token
    doc_segments, doc_system = own_scores(own, *paper_inputs(sep), context=True)
    assert max(abs(a - b) for a, b in zip(result["doc_comet"]["segments"], doc_segments, strict=True)) < 1e-6
    assert result["doc_comet"]["score"] == pytest.approx(doc_system, abs=1e-6)
    # the context matters: a document's first sentence scores as in COMET, the others do not
    firsts = [i for i, d in enumerate(DOCS) if i == 0 or DOCS[i - 1] != d]
    diffs = [abs(a - b) for a, b in zip(result["comet"]["segments"], result["doc_comet"]["segments"], strict=True)]
    assert all(diffs[i] < 1e-6 for i in firsts) and all(d > 1e-4 for i, d in enumerate(diffs) if i not in firsts)
    assert len({round(x, 4) for x in segments}) > 6  # the tiny model tells the segments apart

    ident = f"model:{checkpoint_id(comet_model)}"
    assert result["comet"]["signature"] == f"COMET|{ident}|precision:fp32|version:{version('unbabel-comet')}"
    assert (
        result["doc_comet"]["signature"]
        == f"Doc-COMET|{ident}|context:2|mtctx:ref|sep:{sep}|precision:fp32|version:{version('unbabel-comet')}"
    )
    assert str(tmp_path.parent) not in json.dumps([result["comet"]["signature"], result["doc_comet"]["signature"]])
    assert proc.stdout.strip().endswith(f"({result['doc_comet']['signature']})")
    # `score > file` holds only the score line: the progress bars are on standard error
    assert len(proc.stdout.splitlines()) == 1 and "Predicting" in proc.stderr


def test_checkpoint_path_is_the_same_model(comet_model, own_comet):
    """The checkpoint file instead of the folder, from Python: the same scores and signature."""
    r = score(
        HYPS, REFS, srcs=SRCS, comet_model=str(comet_model / "checkpoints" / "model.ckpt"), comet_batch_size=BATCH
    )
    assert max(abs(a - b) for a, b in zip(r["comet"]["segments"], own_comet[0], strict=True)) < 1e-6
    assert r["comet"]["signature"].startswith(f"COMET|model:{checkpoint_id(comet_model)}|precision:fp32|")


def test_missing_local_model_is_not_found_at_once(monkeypatch, tmp_path):
    """A local path that is not there: "not found", before unbabel-comet is imported (it would say
    "not installed" here) and without a download attempt."""
    monkeypatch.setitem(sys.modules, "comet", None)
    start = time.monotonic()
    with pytest.raises(InputError) as e:
        score(HYPS, REFS, srcs=SRCS, comet_model=str(tmp_path / "models" / "wmt22"))
    assert time.monotonic() - start < 1
    assert str(e.value) == f"{tmp_path / 'models' / 'wmt22'}: COMET model not found (no such file or folder)"


def test_not_installed_only_when_comet_itself_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "comet", None)
    with pytest.raises(
        InputError, match=r"^COMET needs the unbabel-comet package, which is not installed: run make install"
    ):
        score(HYPS, REFS, srcs=SRCS, comet_model="Unbabel/wmt22-comet-da")


def test_a_broken_dependency_is_named_not_called_not_installed(monkeypatch, tmp_path):
    """unbabel-comet is there but one of its dependencies is not (torchmetrics < 0.11 without
    setuptools' pkg_resources): that error, not "not installed"."""
    stub = tmp_path / "comet"
    stub.mkdir()
    (stub / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'pkg_resources'\", name='pkg_resources')\n"
    )
    monkeypatch.delitem(sys.modules, "comet", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(InputError) as e:
        score(HYPS, REFS, srcs=SRCS, comet_model="Unbabel/wmt22-comet-da")
    assert str(e.value).startswith(
        "unbabel-comet is installed but cannot be imported (ModuleNotFoundError: No "
        "module named 'pkg_resources'); run make install"
    )
    assert "not installed" not in str(e.value)


def test_a_document_level_output_gets_the_comet_and_doc_comet_of_its_lines(comet_model, tmp_path):
    """The hypotheses joined per document (JSONL) are aligned back to their lines: COMET and
    Doc-COMET per segment are those of the line-aligned file."""
    from contextual_mt.metrics import score_files

    files = {}
    for name, rows in (("src", SRCS), ("hyp", HYPS), ("ref", REFS), ("ids", DOCS)):
        files[name] = tmp_path / name
        files[name].write_text("\n".join(rows) + "\n")
    docs = [{"doc": d, "text": " ".join(h for h, i in zip(HYPS, DOCS, strict=True) if i == d)} for d in "abc"]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in docs))
    kwargs = {"docids": str(files["ids"]), "source": str(files["src"]), "comet_model": str(comet_model)}
    lines = score_files(str(files["hyp"]), str(files["ref"]), comet_batch_size=BATCH, **kwargs)
    aligned = score_files(str(tmp_path / "docs.jsonl"), str(files["ref"]), comet_batch_size=BATCH, **kwargs)
    assert aligned["alignment"]["links"]["1-1"] == len(HYPS)
    for metric in ("comet", "doc_comet"):
        assert aligned[metric]["segments"] == pytest.approx(lines[metric]["segments"], abs=1e-6), metric
