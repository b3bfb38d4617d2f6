"""The bad-input matrix: every command, every kind of bad input.

The project's rule: a bad input gets ONE clear line ``error: ...`` on stderr naming the file (and
line) or the option at fault, exit status 1, and NO output afterwards (no partial file, no
temporary file, no empty directory); never a traceback, never exit 0 with a wrong number.

Each case builds its command line from shared session fixtures, runs it in its own directories
(``in/`` for the bad inputs it writes, ``out/`` for outputs) and checks: the exit status; that
the last non-empty stderr line is the only ``error:`` line and holds the expected fragments
(the file or flag at fault plus a key word; a tuple means "any of these"); that no stderr line
holds "Traceback"; that ``in/`` and ``out/`` are exactly as before (no output, no temporary or
``.partial`` file, no directory; inputs unchanged). ``contextual-mt`` and ``muda`` run in-process
(an exception escaping ``main()`` is a traceback: the test fails with it); ``fairseq-train`` /
``fairseq-generate`` and the Ctrl-C case run as subprocesses.

Cases live in ``tests/bad_input/`` (one module per command); this file holds the fixtures and the
runner. A case may expect a ``Kind`` of error: the code of the error the command's boundary
reported (``commandkit.console.report``), not its wording.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict

import pytest

from tests.bad_input import CASES, Ctx, voita_set, write_big_input
from tests.bad_input.core import Kind
from tests.helpers import BIN, run, train


# ----------------------------------------------------------------------------- fixtures
def _cmt(argv):
    from contextual_mt.cli import main

    return main([str(a) for a in argv])


def _muda(argv):
    from muda.cli import main

    return main([str(a) for a in argv])


def _conllu_of(lines):
    """A plain CoNLL-U of whitespace-tokenized French lines (UPOS guessed from the tiny corpus)."""
    upos = {"je": "PRON", "il": "PRON", "elle": "PRON", "vois": "VERB", "est": "AUX", "le": "DET", ".": "PUNCT"}
    out = []
    for n, line in enumerate(lines, start=1):
        out.append(f"# sent_id = {n}")
        out.append(f"# text = {line}")
        for k, form in enumerate(line.split(), start=1):
            pos = upos.get(form, "NOUN" if k == 4 else "ADJ")
            feats = (
                "Gender=Masc|Number=Sing|Person=3|PronType=Prs"
                if form == "il"
                else "Gender=Fem|Number=Sing|Person=3|PronType=Prs"
                if form == "elle"
                else "_"
            )
            out.append(
                "\t".join(
                    [str(k), form, form, pos, "_", feats, "0" if k == 1 else "1", "root" if k == 1 else "dep", "_", "_"]
                )
            )
        out.append("")
    return "\n".join(out) + "\n"


def _tags_of(lines, ids):
    """A MuDA tags dump of whitespace-tokenized lines grouped by document (il/elle tagged)."""
    from commandkit.documents import group_by_document

    sents = [
        [{"token": t, "tags": ["pronouns"] if t in ("il", "elle") else []} for t in line.split()] for line in lines
    ]
    return group_by_document(sents, ids)


@pytest.fixture(scope="session")
def mx_base(tmp_path_factory, raw_corpus, data_bin) -> Dict:
    """The tiny corpus (raw and binarized), a system output, annotations and tags of its test
    references, and a sentencepiece model that does not belong to the dictionary."""
    root = tmp_path_factory.mktemp("matrix_base")
    refs = (raw_corpus / "test.fr").read_text().splitlines()
    ids = (raw_corpus / "test.docids").read_text().splitlines()
    shutil.copy(raw_corpus / "test.fr", root / "sys.fr")
    (root / "ref.conllu").write_text(_conllu_of(refs))
    (root / "ref.tags.json").write_text(json.dumps(_tags_of(refs, ids)) + "\n")
    import sentencepiece as spm

    spm.SentencePieceTrainer.train(
        input=str(raw_corpus / "train.en"),
        model_prefix=str(root / "other_spm"),
        vocab_size=24,
        model_type="char",
        minloglevel=2,
    )
    return {
        "raw": raw_corpus,
        "bin": data_bin,
        "src": raw_corpus / "test.en",
        "ref": raw_corpus / "test.fr",
        "ids": raw_corpus / "test.docids",
        "hyp": root / "sys.fr",
        "ref_conllu": root / "ref.conllu",
        "ref_tags": root / "ref.tags.json",
        "other_spm": root / "other_spm.model",
    }


@pytest.fixture(scope="session")
def mx_models(tmp_path_factory, zoo) -> Dict:
    """Three tiny checkpoints of the model zoo (tests/zoo.py), trained side by side: the
    contextual one (--sample-context-size, target context 2, 2 epochs) shared by translate/cxmi, a
    sentence-level document_translation one (context 0) and a stock ``--task translation --arch
    transformer`` one."""
    root = tmp_path_factory.mktemp("matrix_models")
    zoo.train_side_by_side(["target_context_dynamic", "sentence", "stock_transformer"])
    shutil.copy(zoo.checkpoint("sentence"), root / "sentence_level.pt")
    shutil.copy(zoo.checkpoint("stock_transformer"), root / "stock_translation.pt")
    ctx = zoo.folder("target_context_dynamic")
    return {
        "ckpt": ctx / "checkpoint_last.pt",
        "ckpt_epoch1": ctx / "checkpoint1.pt",
        "ckpt_sent": root / "sentence_level.pt",
        "ckpt_stock": root / "stock_translation.pt",
    }


@pytest.fixture(scope="session")
def mx_pcxmi(tmp_path_factory, mx_base, mx_models) -> Dict:
    """P-CXMI of the test references: the full run (nats and bits) and shards i/2 of the same run
    and of other computations (another checkpoint, another context size, bits, random context)."""
    root = tmp_path_factory.mktemp("matrix_pcxmi")
    b = mx_base

    def cxmi(out, *extra, path=mx_models["ckpt"]):
        rc = _cmt(
            [
                "cxmi",
                "--path",
                path,
                "--source",
                b["src"],
                "--reference",
                b["ref"],
                "--docids",
                b["ids"],
                "--output",
                root / out,
                "--cpu",
                "--quiet",
                *extra,
            ]
        )
        assert rc == 0, f"fixture: cxmi {out} failed"
        return root / out

    paths = {
        "pcxmi": cxmi("full.jsonl"),
        "pcxmi_bits": cxmi("bits.jsonl", "--log-base", "2"),
        "s0": cxmi("s0.jsonl", "--shard", "0/2"),
        "s1": cxmi("s1.jsonl", "--shard", "1/2"),
        "s1_ck1": cxmi("s1_ck1.jsonl", "--shard", "1/2", path=mx_models["ckpt_epoch1"]),
        "s1_ctx1": cxmi("s1_ctx1.jsonl", "--shard", "1/2", "--target-context-size", "1"),
        "s1_bits": cxmi("s1_bits.jsonl", "--shard", "1/2", "--log-base", "2"),
        "s1_random": cxmi("s1_random.jsonl", "--shard", "1/2", "--random-context"),
    }
    for key in ("s0", "s1"):
        assert paths[key].read_text().strip(), f"fixture: shard {key} is empty (too few documents)"
    return paths


@pytest.fixture(scope="session")
def mx_demo(tmp_path_factory) -> Dict:
    """The demo corpus (small), the reference tagged once (fr), the same tagged as Spanish, and
    the tags of another reference (one word changed); two system outputs."""
    from contextual_mt.demo.corpus import generate_demo_data
    from muda.formats.conllu import format_conllu, read_conllu

    root = tmp_path_factory.mktemp("matrix_demo")
    d = root / "demo"
    generate_demo_data(str(d), train_docs=40, valid_docs=1, test_docs=8, seed=3)

    def tag(tgt, tgt_conllu, out, lang="fr"):
        rc = _muda(
            [
                "tag",
                "--src",
                d / "test.en",
                "--tgt",
                tgt,
                "--docids",
                d / "test.docids",
                "--tgt-lang",
                lang,
                "--dump-tags",
                out,
                "--src-conllu",
                d / "test.en.conllu",
                "--tgt-conllu",
                tgt_conllu,
                "--alignments",
                d / "test.align",
            ]
        )
        assert rc == 0, f"fixture: muda tag {out} failed"
        return out

    (root / "es").mkdir()
    (root / "other").mkdir()
    sents = read_conllu(str(d / "test.fr.conllu"))
    sents[1].tokens[0].form = sents[1].tokens[0].words[0].form = "Zzz"
    sents[1].text = " ".join(sents[1].forms)
    other_lines = (d / "test.fr").read_text().splitlines()
    other_lines[1] = " ".join(sents[1].forms)
    (root / "other" / "other.fr").write_text("\n".join(other_lines) + "\n")
    (root / "other" / "other.fr.conllu").write_text(format_conllu(sents))
    shutil.copy(d / "test.fr", root / "sys_a.txt")
    shutil.copy(d / "test.fr", root / "sys_b.txt")
    return {
        "demo": d,
        "d_src": d / "test.en",
        "d_ref": d / "test.fr",
        "d_ids": d / "test.docids",
        "d_src_conllu": d / "test.en.conllu",
        "d_ref_conllu": d / "test.fr.conllu",
        "d_align": d / "test.align",
        "lex": [d / "train.en.conllu", d / "train.fr.conllu", d / "train.align"],
        "d_tags": tag(d / "test.fr", d / "test.fr.conllu", root / "reference.tags.json"),
        "d_tags_es": tag(d / "test.fr", d / "test.fr.conllu", root / "es" / "spanish.tags.json", lang="es"),
        "d_tags_other": tag(
            root / "other" / "other.fr", root / "other" / "other.fr.conllu", root / "other" / "other.tags.json"
        ),
        "sys_a": root / "sys_a.txt",
        "sys_b": root / "sys_b.txt",
    }


def interrupt_when_partial(argv, partial: Path, stderr_path: Path, min_lines: int = 2, watch: Path | None = None):
    """Run ``contextual-mt ARGV``; once ``partial`` holds ``min_lines`` lines (it is scoring),
    send SIGINT as Ctrl-C would. (After 20 s, anything written under ``watch`` will do.)
    Returns the exit status."""
    with open(stderr_path, "w") as err_file:
        # SIGINT back to its default in the child: a shell that starts the suite in the
        # background (`make test &`) ignores it, and the child would inherit that
        proc = subprocess.Popen(
            [str(BIN / "contextual-mt"), *map(str, argv)],
            stdout=subprocess.DEVNULL,
            stderr=err_file,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            start = time.time()
            while proc.poll() is None and time.time() - start < 60:
                if partial.exists() and partial.read_bytes().count(b"\n") >= min_lines:
                    break
                if watch is not None and time.time() - start > 20 and any(watch.iterdir()):
                    break
                time.sleep(0.05)
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return proc.returncode


@pytest.fixture(scope="session")
def mx_partials(tmp_path_factory, mx_base, mx_models) -> Dict:
    """Genuine OUTPUT.partial files of interrupted cxmi runs on a large input: one in bits, one
    in nats (both side by side, interrupted after their first records)."""
    root = tmp_path_factory.mktemp("matrix_partials")
    src, ref, ids = write_big_input(mx_base["raw"], root)
    runs = {"partial_bits": ("bits", ["--log-base", "2"]), "partial_nats": ("nats", [])}
    argv = {
        key: [
            "cxmi",
            "--path",
            mx_models["ckpt"],
            "--source",
            src,
            "--reference",
            ref,
            "--docids",
            ids,
            "--output",
            root / name / "p.jsonl",
            "--batch-size",
            "1",
            "--cpu",
            "--quiet",
            *extra,
        ]
        for key, (name, extra) in runs.items()
    }
    for name, _ in runs.values():
        (root / name).mkdir()
    with ThreadPoolExecutor(2) as pool:
        futures = {
            key: pool.submit(
                interrupt_when_partial, argv[key], root / name / "p.jsonl.partial", root / f"{name}.stderr", 3
            )
            for key, (name, _) in runs.items()
        }
        for future in futures.values():
            future.result()
    paths = {"big_src": src, "big_ref": ref, "big_ids": ids}
    for key, (name, _) in runs.items():
        partial = root / name / "p.jsonl.partial"
        log = (root / f"{name}.stderr").read_text()[-2000:]
        assert partial.exists() and partial.read_text().count("\n") >= 2, (
            f"fixture: the interrupted cxmi run left no partial records:\n{log}"
        )
        paths[key] = partial
    return paths


@pytest.fixture(scope="session")
def mx_hf(marian) -> Dict:
    """The tiny Hugging Face Marian of tests/conftest.py (what --hf-model cases translate with)."""
    return {"marian": marian}


FIXTURES = ("mx_base", "mx_models", "mx_pcxmi", "mx_demo", "mx_partials", "mx_hf")


class World:
    """The fixtures' paths as attributes; each session fixture is built on first use only, so a
    case needs (and is broken by) only the fixtures it uses."""

    def __init__(self, request):
        self._request = request

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        for fixture in FIXTURES:
            keys = _KEYS[fixture]
            if name in keys:
                value = self._request.getfixturevalue(fixture)[name]
                return [str(v) for v in value] if isinstance(value, list) else str(value)
        raise AttributeError(name)


_KEYS = {
    "mx_base": {"raw", "bin", "src", "ref", "ids", "hyp", "ref_conllu", "ref_tags", "other_spm"},
    "mx_models": {"ckpt", "ckpt_epoch1", "ckpt_sent", "ckpt_stock"},
    "mx_pcxmi": {"pcxmi", "pcxmi_bits", "s0", "s1", "s1_ck1", "s1_ctx1", "s1_bits", "s1_random"},
    "mx_demo": {
        "demo",
        "d_src",
        "d_ref",
        "d_ids",
        "d_src_conllu",
        "d_ref_conllu",
        "d_align",
        "lex",
        "d_tags",
        "d_tags_es",
        "d_tags_other",
        "sys_a",
        "sys_b",
    },
    "mx_partials": {"big_src", "big_ref", "big_ids", "partial_bits", "partial_nats"},
    "mx_hf": {"marian"},
}


# ----------------------------------------------------------------------------- checking
def _snapshot(root: Path) -> Dict[str, str]:
    """Every file and directory under ``root``: relative path -> content hash ('dir' for dirs)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            out[os.path.relpath(os.path.join(dirpath, name), root) + "/"] = "dir"
        for name in filenames:
            p = os.path.join(dirpath, name)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


def _problems(c: Ctx, rc, err: str, before: Dict[str, Dict[str, str]]):
    problems = []
    lines = [line for line in err.splitlines() if line.strip()]
    if any("Traceback" in line for line in lines):
        k = max(i for i, line in enumerate(lines) if "Traceback" in line)
        exc = next((line.strip() for line in lines[k + 1 :] if line and not line.startswith(" ")), lines[-1])
        problems.append(f"traceback ({exc[:200]})")
    if rc != c.status:
        problems.append(f"exit status {rc} (expected {c.status})")
    last = lines[-1].strip() if lines else ""
    if c.status == 2:  # argparse usage error: 'usage: ...' then 'PROG: error: ...'
        ok = ": error:" in last or last.startswith("error:")
    else:
        errors = [line for line in lines if line.startswith("error:")]
        ok = last.startswith("error:") and len(errors) == 1
        if last.startswith("error:") and len(errors) != 1:
            problems.append(f"{len(errors)} 'error:' lines")
    if not ok:
        problems.append(f"last stderr line is not an 'error:' line: {last[:200]!r}")
    else:
        low = last.lower()
        reported = getattr(c, "reported", None) if c.command in ("contextual-mt", "muda") and c.status == 1 else None
        words = [f for f in c.expect if not (isinstance(f, Kind) and reported is not None)]
        missing = [f for f in words if not any(alt.lower() in low for alt in _alternatives(f))]
        if missing:
            problems.append(f"message lacks {missing}: {last[:300]!r}")
        code = getattr(reported, "code", None)
        for kind in (f for f in c.expect if isinstance(f, Kind) and reported is not None):
            if code not in kind.codes:
                problems.append(f"error code {code!r}, expected one of {[k.value for k in kind.codes]}: {last[:300]!r}")
    if c.command in ("contextual-mt", "muda") and c.status == 1 and ok and getattr(c, "reported", None) is None:
        problems.append("the error line was not printed by the boundary (commandkit.console.report)")
    for path in c.absent:
        if os.path.lexists(path):
            problems.append(f"left behind {path}")
    for name, root in (("in", c.inp), ("out", c.out)):
        after = _snapshot(root)
        new = sorted(set(after) - set(before[name]) - set(c.allow_new))
        gone = sorted(set(before[name]) - set(after))
        changed = sorted(k for k in set(after) & set(before[name]) if after[k] != before[name][k])
        if new:
            problems.append(f"new in {name}/: {new}")
        if gone:
            problems.append(f"removed from {name}/: {gone}")
        if changed:
            problems.append(f"changed in {name}/: {changed}")
    for path, digest in c.unchanged_before.items():
        now = hashlib.sha256(Path(path).read_bytes()).hexdigest() if os.path.exists(path) else None
        if now != digest:
            problems.append(f"{path} was modified")
    return problems


def _alternatives(fragment):
    if isinstance(fragment, Kind):
        return fragment.words
    return fragment if isinstance(fragment, tuple) else (fragment,)


def _run_in_process(c: Ctx, capsys, monkeypatch):
    """The command's exit status and stderr; ``c.reported``: the error its boundary
    (``commandkit.console.report``) printed, whose code the case may check."""
    from commandkit import console

    report = console.report

    def seen(e, memory_hint=None):
        status = report(e, memory_hint)
        if status is not None:
            c.reported = (console.out_of_memory(e, memory_hint) if memory_hint is not None else None) or e
        return status

    monkeypatch.setattr(console, "report", seen)
    main = _cmt if c.command == "contextual-mt" else _muda
    capsys.readouterr()
    try:
        rc = main(c.argv)
    except SystemExit as e:  # argparse
        rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    captured = capsys.readouterr()
    return rc, captured.err


def _run_subprocess(c: Ctx):
    if c.command == "fairseq-train":
        proc = train(Path(c.argv[0]), Path(c.argv[1]), *c.argv[2:], epochs=1, check=False)
    else:
        proc = run([str(BIN / c.command), *c.argv], check=False)
    return proc.returncode, proc.stderr


def _run_interrupted(c: Ctx):
    """Ctrl-C once the command has scored something (its .partial holds records)."""
    stderr_path = c.out.parent / "stderr.txt"
    rc = interrupt_when_partial(c.argv, Path(c.wait_for), stderr_path, min_lines=2, watch=c.out)
    return rc, stderr_path.read_text()


# ----------------------------------------------------------------------------- the matrix
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input(case, request, tmp_path, capsys, monkeypatch):
    c = Ctx(case, World(request), tmp_path)
    case.build(c)
    before = {"in": _snapshot(c.inp), "out": _snapshot(c.out)}
    c.unchanged_before = {p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in c.unchanged}
    if c.command in ("contextual-mt", "muda"):
        rc, err = _run_in_process(c, capsys, monkeypatch)
    elif c.command == "interrupt":
        rc, err = _run_interrupted(c)
    else:
        rc, err = _run_subprocess(c)
    problems = _problems(c, rc, err, before)
    if os.environ.get("BAD_INPUT_MATRIX_LOG"):  # a review aid: every case's status and last stderr line
        last = ([line for line in err.splitlines() if line.strip()] or [""])[-1]
        with open(os.environ["BAD_INPUT_MATRIX_LOG"], "a", encoding="utf-8") as f:
            code = getattr(getattr(c, "reported", None), "code", "")
            f.write(f"{case.id}\t{rc}\t{'FAIL' if problems else 'ok'}\t{code}\t{last}\n")
    assert not problems, "; ".join(problems) + "\n--- stderr (tail) ---\n" + err[-2500:]


def test_matrix_covers_every_command_with_enough_cases():
    counts = {}
    for case in CASES:
        counts[case.id.split("-")[0]] = counts.get(case.id.split("-")[0], 0) + 1
    assert set(counts) >= {
        "translate",
        "score",
        "cxmi",
        "merge",
        "report",
        "addsym",
        "tag",
        "eval",
        "train",
        "generate",
        "contrastive",
    }, counts
    assert len(CASES) >= 130 and len({c.id for c in CASES}) == len(CASES)


def test_fixtures_are_good_input(request, tmp_path, capsys, caplog):
    """The unmodified inputs the cases start from are accepted: each case fails because of what
    it changed, not because of the fixture."""
    w = World(request)
    out = tmp_path

    def clean(run, argv):
        """``run(argv)`` succeeded with no warning (a log record, or a line on stderr) and nothing
        but its own summary on stderr: nothing is wrong with good input. (translate and contrastive
        warn here: the zoo's model is barely trained; so does making the fixture's P-CXMI records.)"""
        capsys.readouterr()
        caplog.clear()
        status = run(argv)
        err = capsys.readouterr().err
        said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        bad = [line for line in err.splitlines() if line.startswith(("warning", "error", "Traceback", "WARNING"))]
        return (status == 0 and not said and not bad) or (status, said, err[-2000:])

    assert (
        _cmt(
            [
                "translate",
                "--path",
                w.ckpt,
                "--source",
                w.src,
                "--docids",
                w.ids,
                "--output",
                out / "h.fr",
                "--cpu",
                "--quiet",
                "--beam",
                "2",
            ]
        )
        == 0
    )
    assert len((out / "h.fr").read_text().splitlines()) == len(Path(w.src).read_text().splitlines())
    assert clean(_cmt, ["score", "--hyp", w.hyp, "--ref", w.ref, "--docids", w.ids, "--output", out / "s.json"]) is True
    assert (
        clean(
            _cmt,
            [
                "report",
                w.pcxmi,
                "--output-dir",
                out / "rep",
                "--conllu",
                w.ref_conllu,
                "--tags",
                w.ref_tags,
                "--min-count",
                "1",
                "--top",
                "5",
            ],
        )
        is True
    )
    assert clean(_cmt, ["cxmi-merge", w.s0, w.s1, "--output", out / "m.jsonl"]) is True
    (out / "set.json").write_text(json.dumps(voita_set(w)))
    assert (
        _cmt(
            [
                "contrastive",
                "--format",
                "voita",
                "--input",
                out / "set.json",
                "--path",
                w.ckpt,
                "--output",
                out / "c.scores",
                "--summary",
                out / "c.json",
                "--cpu",
                "--quiet",
            ]
        )
        == 0
    )
    assert len((out / "c.scores").read_text().splitlines()) == 12
    shutil.copy(w.bin + "/dict.en.txt", out / "dict.txt")
    assert clean(_cmt, ["add-symbols", out / "dict.txt"]) is True
    assert (
        clean(
            _muda,
            [
                "eval",
                "--src",
                w.d_src,
                "--ref",
                w.d_ref,
                "--docids",
                w.d_ids,
                "--tgt-lang",
                "fr",
                "--hyps",
                w.sys_a,
                w.sys_b,
                "--ref-tags",
                w.d_tags,
                "--src-conllu",
                w.d_src_conllu,
                "--lexicon",
                *w.lex,
                "--output",
                out / "e.json",
                "--table",
                out / "e.txt",
                "--bootstrap",
                "10",
            ],
        )
        is True
    )
    capsys.readouterr()
