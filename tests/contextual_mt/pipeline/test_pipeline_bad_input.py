"""Bad inputs and broken states of the per-language-pair pipeline (``contextual-mt pipeline ...``
and ``make data|train|translate|score|table``).

The rule (README, "Errors"): a bad input stops the command with ONE line ``error: ...`` naming the
file (and line) or the option at fault, exit status 1, and no output left behind; never a
traceback, never exit 0 with numbers computed from stale or mismatched state.

Data-stage tests build tiny inputs directly. The stale-state tests work on copies of the make
chain that test_chain.py inspects (conftest.py: built once per run, PRESET=tiny on CPU).
"""

import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.helpers import BIN, contextual_mt_cli

ROOT = Path(__file__).resolve().parents[3]
CMT = str(BIN / "contextual-mt")
SYSTEMS = ("sentence", "context", "context-gold")


# ----------------------------------------------------------------------------- helpers
def run(cmd, cwd=None):
    env = dict(os.environ, LC_ALL="C.UTF-8", PYTHONWARNINGS="ignore")
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True)


def cmt(*args):
    """``contextual-mt ARGS`` in this process (a subprocess would only add its start-up)."""
    return contextual_mt_cli(*args)


def cmt_script(*args):
    """``contextual-mt ARGS`` through the real console script."""
    return run([CMT, *args])


def make(*args):
    return run(["make", "-C", str(ROOT), "--no-print-directory", *args])


def meaningful(stderr):
    """stderr lines without fairseq's import-time INFO line and progress bars."""
    return [
        line
        for line in stderr.replace("\r", "\n").splitlines()
        if line.strip() and "tensorboardX" not in line and "%|" not in line
    ]


def one_error(proc, *fragments):
    """The command failed with exactly one ``error:`` line (the last), no traceback."""
    lines = meaningful(proc.stderr)
    assert proc.returncode == 1, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], lines[-5:]
    for fragment in fragments:
        assert fragment in errors[0], (fragment, errors[0])
    return errors[0]


def ok(proc):
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-3000:])
    return proc


TSV_HEADER = "talk_name\ten\tfr"


def ted_rows(split, docs=3, lines=6):
    return [
        f"{split}_talk_{d}\tThe cat number {i} sees the dog .\tLe chat numéro {i} voit le chien ."
        for d in range(docs)
        for i in range(lines)
    ]


def write_ted_folder(path, header=TSV_HEADER, mutate=None):
    """A TED folder (all_talks_{train,dev,test}.tsv); ``mutate(split, bytes) -> bytes``."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    for split, name in (("train", "all_talks_train.tsv"), ("dev", "all_talks_dev.tsv"), ("test", "all_talks_test.tsv")):
        data = ("\n".join([header, *ted_rows(split)]) + "\n").encode("utf-8")
        if mutate:
            data = mutate(split, data)
        (path / name).write_bytes(data)
    return path


def write_ted_tarball(path, folder, skip=()):
    with tarfile.open(path, "w:gz") as tar:
        for f in sorted(os.listdir(folder)):
            if f not in skip:
                tar.add(os.path.join(folder, f), arcname=f"ted_talks/{f}")
    return path


def write_text_folder(path, lang="fr"):
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    for split in ("train", "valid", "test"):
        src, tgt, ids = [], [], []
        for doc in "abc":
            for i in range(4):
                src.append(f"The cat {i} sees the dog .")
                tgt.append(f"Le chat {i} voit le chien .")
                ids.append(f"{split}-{doc}")
        (path / f"{split}.en").write_text("\n".join(src) + "\n", encoding="utf-8")
        (path / f"{split}.{lang}").write_text("\n".join(tgt) + "\n", encoding="utf-8")
        (path / f"{split}.docids").write_text("\n".join(ids) + "\n", encoding="utf-8")
    return path


def data(out, *args, lang="fr", vocab=50):
    return cmt("pipeline", "data", "--lang", lang, "--output", out, "--vocab-size", str(vocab), "--quiet", *args)


# ============================================================================ data stage: refusals
def test_data_output_under_a_file_is_one_line_error(tmp_path):
    """--output below a regular file: one error line naming the file, which is left as it was."""
    corpus = write_ted_folder(tmp_path / "ted")
    (tmp_path / "afile").write_text("x\n")
    proc = data(tmp_path / "afile" / "sub", "--ted", corpus)
    one_error(proc, "afile")
    assert (tmp_path / "afile").read_text() == "x\n"


def test_data_vocab_size_too_small_names_the_option_and_leaves_nothing(tmp_path):
    """A --vocab-size below the corpus's character count fails in sentencepiece after the text
    step: the message names --vocab-size, and the new output folder is removed (no text splits,
    no state file)."""
    corpus = write_ted_folder(tmp_path / "ted")
    out = tmp_path / "out"
    proc = data(out, "--ted", corpus, vocab=12)
    one_error(proc, "--vocab-size")
    assert not out.exists(), sorted(os.listdir(out))


def test_data_rerun_with_a_fixed_vocab_size_is_not_refused(tmp_path):
    """After the --vocab-size failure above, the corrected command runs: the failed run left no
    state of other options to refuse."""
    corpus = write_ted_folder(tmp_path / "ted")
    out = tmp_path / "out"
    assert data(out, "--ted", corpus, vocab=12).returncode == 1
    ok(data(out, "--ted", corpus, vocab=300))
    assert (out / "bin" / "dict.fr.txt").exists() and (out / "summary.json").exists()


def test_data_duplicate_language_column_is_refused(tmp_path):
    """A header with the target column twice is ambiguous: refused, naming the file."""

    def dup(split, raw):
        return raw.replace(b"talk_name\ten\tfr", b"talk_name\ten\tfr\tfr").replace(b" .\n", b" .\tautre\n")

    corpus = write_ted_folder(tmp_path / "ted", mutate=dup)
    out = tmp_path / "out"
    one_error(data(out, "--ted", corpus), "all_talks_")
    assert not out.exists()


def test_data_gzip_without_its_trailer_is_refused(tmp_path):
    """A ted_talks.tar.gz cut before its CRC trailer (an interrupted download) is refused: the
    gzip checksum is verified."""
    folder = write_ted_folder(tmp_path / "ted")
    good = write_ted_tarball(tmp_path / "good.tar.gz", folder)
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(good.read_bytes()[:-8])
    out = tmp_path / "out"
    one_error(data(out, "--ted", cut), "cut.tar.gz")
    assert not out.exists()


def test_data_refuses_language_codes_the_later_stages_refuse(tmp_path):
    """`pipeline data --lang FR` is refused up front, as the later stages refuse it
    (layout.check_lang), and nothing is written."""
    corpus = tmp_path / "text"
    write_text_folder(corpus, lang="FR")
    out = tmp_path / "data" / "FR"
    one_error(data(out, "--text", corpus, lang="FR", vocab=40), "--lang")
    assert not (tmp_path / "data").exists()


# ============================================================================ data stage: malformed corpora
@pytest.mark.parametrize(
    "kind, fragment",
    [
        ("ragged", "all_talks_test.tsv:5: 4 tab-separated fields"),
        ("noheader", "all_talks_test.tsv:1: no 'talk_name' column"),
        ("notalk", "all_talks_test.tsv:8: empty talk_name"),
        ("latin1", "all_talks_test.tsv:2: not UTF-8"),
        ("empty", "all_talks_test.tsv: empty file"),
        ("allnull", "all_talks_test.tsv: no row with both"),
    ],
)
def test_data_malformed_tsv_is_one_line_error(tmp_path, kind, fragment):
    def mutate(split, raw):
        if split != "test":
            return raw
        if kind == "ragged":
            return raw.replace("\tLe chat numéro 3".encode(), "\tLe chat\tnuméro 3".encode(), 1)
        if kind == "noheader":
            return raw.split(b"\n", 1)[1]
        if kind == "notalk":
            return raw.replace(b"test_talk_1\t", b"\t", 1)
        if kind == "latin1":
            return raw.replace("é".encode(), b"\xe9", 1)
        if kind == "empty":
            return b""
        lines = raw.split(b"\n")
        return b"\n".join([lines[0]] + [line.rsplit(b"\t", 1)[0] + b"\t__NULL__" for line in lines[1:] if line]) + b"\n"

    corpus = write_ted_folder(tmp_path / "ted", mutate=mutate)
    out = tmp_path / "out"
    one_error(data(out, "--ted", corpus), fragment)
    assert not out.exists()


def test_data_bom_and_crlf_are_read(tmp_path):
    corpus = write_ted_folder(tmp_path / "ted", mutate=lambda s, raw: b"\xef\xbb\xbf" + raw.replace(b"\n", b"\r\n"))
    out = tmp_path / "out"
    ok(data(out, "--ted", corpus))
    assert (out / "test.fr").read_text(encoding="utf-8").splitlines()[0] == "Le chat numéro 0 voit le chien."
    assert "\r" not in (out / "test.docids").read_text() and (out / "test.docids").read_text().startswith(
        "test_talk_0\n"
    )


@pytest.mark.parametrize(
    "case, fragment",
    [
        ("notgzip", "not a readable tar archive"),
        ("missing", "the archive has no all_talks_test.tsv"),
        ("wronglang", "no 'de' column"),
    ],
)
def test_data_bad_tarball_is_one_line_error(tmp_path, case, fragment):
    folder = write_ted_folder(tmp_path / "ted")
    tarball = tmp_path / "ted_talks.tar.gz"
    if case == "notgzip":
        tarball.write_bytes(os.urandom(300))
    else:
        write_ted_tarball(tarball, folder, skip=("all_talks_test.tsv",) if case == "missing" else ())
    out = tmp_path / "out"
    one_error(data(out, "--ted", tarball, lang="de" if case == "wronglang" else "fr"), fragment)
    assert not out.exists()


def test_data_text_folder_mismatches_are_one_line_errors(tmp_path):
    uneq = write_text_folder(tmp_path / "uneq")
    with open(uneq / "valid.fr", "a") as f:
        f.write("extra\n")
    one_error(data(tmp_path / "o1", "--text", uneq, vocab=40), "valid.fr: has 13 lines")
    blank = write_text_folder(tmp_path / "blank")
    ids = (blank / "test.docids").read_text().splitlines()
    ids[2] = "  "
    (blank / "test.docids").write_text("\n".join(ids) + "\n")
    one_error(data(tmp_path / "o2", "--text", blank, vocab=40), "test.docids:3: empty document id")
    assert not (tmp_path / "o1").exists() and not (tmp_path / "o2").exists()


def test_data_text_document_in_two_splits_is_refused(tmp_path):
    # refused for TED input already; the same rule for text (and IWSLT) input
    corpus = write_text_folder(tmp_path / "text")
    ids = (corpus / "test.docids").read_text().splitlines()
    ids[4:8] = ["train-b"] * 4
    (corpus / "test.docids").write_text("\n".join(ids) + "\n")
    out = tmp_path / "out"
    one_error(
        data(out, "--text", corpus, vocab=40),
        "test.docids:5: document 'train-b' is also in",
        "train.docids",
        "one split only",
    )
    assert not out.exists()


def test_data_iwslt_segment_mismatch_is_one_line_error(tmp_path):
    iw = tmp_path / "iwslt"
    iw.mkdir()
    for side, word, n2 in (("en", "The cat", 4), ("fr", "Le chat", 3)):
        rows = []
        for talk in (1, 2):
            rows += [f"<url>http://x/{talk}</url>", f"<talkid>{talk}</talkid>"]
            rows += [f"{word} {i} of talk {talk} ." for i in range(n2 if talk == 2 else 4)]
        (iw / f"train.tags.en-fr.{side}").write_text("\n".join(rows) + "\n")
        for name in ("dev2010", "tst2015"):
            segs = "\n".join(f'<seg id="{i}"> {word} {i} </seg>' for i in range(3))
            (iw / f"IWSLT17.TED.{name}.en-fr.{side}.xml").write_text(
                f'<mteval>\n<doc docid="10">\n{segs}\n</doc>\n</mteval>\n'
            )
    out = tmp_path / "out"
    one_error(data(out, "--iwslt", iw, vocab=40), "document '2'", "has 3 lines but 4")
    assert not out.exists()


@pytest.mark.parametrize(
    "argv, fragment",
    [
        ([], "give exactly one of --ted, --iwslt, --text (got none)"),
        (["--ted", "TED", "--vocab-size", "0"], "--vocab-size must be >= 10"),
    ],
)
def test_data_bad_options(tmp_path, argv, fragment):
    corpus = write_ted_folder(tmp_path / "ted")
    argv = [str(corpus) if a == "TED" else a for a in argv]
    out = tmp_path / "out"
    proc = cmt("pipeline", "data", "--lang", "fr", "--output", out, "--quiet", *argv)
    one_error(proc, fragment)
    assert not out.exists()


def test_make_data_with_two_inputs_is_refused(tmp_path):
    corpus = write_ted_folder(tmp_path / "ted")
    text = write_text_folder(tmp_path / "text")
    proc = make("data", "LANG=fr", f"WORK={tmp_path / 'w'}", f"TED={corpus}", f"TEXT={text}", "SPM_VOCAB=50")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "give exactly one of TED=, IWSLT=, TEXT= (got TED= and TEXT=)" in proc.stderr  # the Make variables
    assert not (tmp_path / "w").exists()


def test_data_output_that_is_a_file_is_refused(tmp_path):
    corpus = write_ted_folder(tmp_path / "ted")
    (tmp_path / "afile").write_text("x\n")
    # through the console script: exit status 1 and one line, no traceback
    one_error(
        cmt_script(
            "pipeline",
            "data",
            "--lang",
            "fr",
            "--output",
            tmp_path / "afile",
            "--vocab-size",
            "50",
            "--quiet",
            "--ted",
            corpus,
        ),
        "exists and is not a folder",
    )


def test_data_rerun_with_a_changed_input_is_refused(tmp_path):
    corpus = write_ted_folder(tmp_path / "ted")
    out = tmp_path / "out"
    ok(data(out, "--ted", corpus))
    before = (out / "train.fr").read_bytes()
    path = corpus / "all_talks_train.tsv"
    path.write_text(path.read_text(encoding="utf-8").replace("chien", "loup", 1), encoding="utf-8")
    one_error(data(out, "--ted", corpus), "other inputs or options", "--overwrite")
    assert (out / "train.fr").read_bytes() == before


def test_make_data_pt_br(tmp_path):
    corpus = write_ted_folder(tmp_path / "ted", header="talk_name\ten\tpt-br")
    work = tmp_path / "w"
    ok(make("data", "LANG=pt-br", f"WORK={work}", f"TED={corpus}", "SPM_VOCAB=50"))
    assert (work / "data" / "pt-br" / "bin" / "dict.pt-br.txt").exists()
    assert (work / "data" / "pt-br" / "bin" / "test.en-pt-br.docids").exists()


# ============================================================================ the trained study
def setting(study, name):
    """The value of the chain's make variable ``name`` (e.g. EPOCHS)."""
    return next(v.split("=", 1)[1] for v in study["variables"] if v.startswith(name + "="))


@pytest.fixture(scope="module")
def study(make_chain, tmp_path_factory):
    """The shared make chain (conftest.py: a TED corpus through make data/train (tiny, CPU)/
    translate/score/...), which the tests below copy; and the data of the same corpus without its
    last training talk (what `make data OVERWRITE=1` with an edited corpus writes)."""
    root = tmp_path_factory.mktemp("edited")
    tarball = make_chain["demo"] / "ted_talks.tar.gz"
    edited = root / "edited"
    with tarfile.open(tarball) as tar:
        tar.extractall(edited)
    train_tsv = next(edited.rglob("all_talks_train.tsv"))
    rows = train_tsv.read_text(encoding="utf-8").splitlines()
    last = rows[-1].split("\t")[0]
    train_tsv.write_text("\n".join(r for r in rows if not r.startswith(last + "\t")) + "\n", encoding="utf-8")
    other = root / "other"
    ok(
        make(
            "data",
            "LANG=fr",
            f"WORK={other}",
            f"TED={train_tsv.parent}",
            f"SPM_VOCAB={setting(make_chain, 'SPM_VOCAB')}",
        )
    )
    return {
        "root": root,
        "work": make_chain["work"],
        "other_data": other / "data" / "fr",
        "variables": make_chain["variables"],
    }


@pytest.fixture
def work(study, tmp_path):
    copy = tmp_path / "work"
    shutil.copytree(study["work"], copy)
    return copy


def variables(study, work):
    return [v if not v.startswith("WORK=") else f"WORK={work}" for v in study["variables"]]


def scores_text(work):
    return (work / "results" / "fr" / "scores.json").read_text()


def test_score_refuses_a_hand_edited_translation(study, work):
    """A translation edited by hand no longer matches the hash translate.json recorded for its
    system: score refuses it, naming the file, and the scores stay as they were."""
    hyp = work / "results" / "fr" / "context.test.fr"
    lines = hyp.read_text(encoding="utf-8").splitlines()
    lines[0] = "Le chat voit le chien."
    hyp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = scores_text(work)
    one_error(cmt("pipeline", "score", "--lang", "fr", "--root", work), "context.test.fr")
    assert scores_text(work) == before or not (work / "results" / "fr" / "scores.json").exists()


def test_score_refuses_translations_of_another_checkpoint(study, work):
    """The context model changed since its translations were made (trained again): score
    refuses them, naming the system, and never answers 'up to date'."""
    import torch

    ckpt = work / "checkpoints" / "fr" / "context" / "checkpoint_best.pt"
    state = torch.load(ckpt, map_location="cpu", weights_only=False)
    name = next(k for k, v in state["model"].items() if v.is_floating_point())
    state["model"][name] = state["model"][name] + 0.01
    torch.save(state, ckpt)
    proc = cmt("pipeline", "score", "--lang", "fr", "--root", work)
    one_error(proc, "context")
    assert "up to date" not in proc.stderr


def test_score_refuses_translations_of_another_source(study, work):
    """data/fr/test.en changed after translating: score refuses the translations of the old
    source."""
    src = work / "data" / "fr" / "test.en"
    lines = src.read_text(encoding="utf-8").splitlines()
    lines[0] = "A completely different source sentence."
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    one_error(cmt("pipeline", "score", "--lang", "fr", "--root", work))


def test_score_after_a_failed_translate_on_a_corrupt_checkpoint(study, work):
    """translate refuses a truncated checkpoint with one line naming it; score then refuses too
    (no numbers of a checkpoint that no longer exists)."""
    ckpt = work / "checkpoints" / "fr" / "context" / "checkpoint_best.pt"
    ckpt.write_bytes(ckpt.read_bytes()[:100_000])
    one_error(
        cmt("pipeline", "translate", "--lang", "fr", "--root", work, "--beam", "2", "--quiet"), "checkpoint_best.pt"
    )
    one_error(cmt("pipeline", "score", "--lang", "fr", "--root", work))


def test_translate_refuses_checkpoints_trained_on_other_data(study, work):
    """data/fr re-prepared from an edited corpus (OVERWRITE=1): train refuses the old
    checkpoints ('other data or settings'), and so does translate, leaving the old translation
    as it was."""
    shutil.rmtree(work / "data" / "fr")
    shutil.copytree(study["other_data"], work / "data" / "fr")
    one_error(
        cmt(
            "pipeline",
            "train",
            "--lang",
            "fr",
            "--root",
            work,
            "--preset",
            "tiny",
            "--gpus",
            "0",
            "--max-epoch",
            setting(study, "EPOCHS"),
            "--model",
            "sentence",
        ),
        "other data or settings",
    )
    before = {s: (work / "results" / "fr" / f"{s}.test.fr").read_bytes() for s in SYSTEMS}
    one_error(
        cmt("pipeline", "translate", "--lang", "fr", "--root", work, "--beam", "2", "--quiet", "--systems", "sentence"),
        "sentence",
    )
    assert (work / "results" / "fr" / "sentence.test.fr").read_bytes() == before["sentence"]


def test_train_recovers_from_a_deleted_checkpoint_best(study, work):
    """checkpoint_best.pt deleted (its record and checkpoint_last.pt kept): train either trains
    again, or refuses with one line naming --overwrite and --overwrite trains again; either way
    checkpoint_best.pt and the finished record are back."""
    save = work / "checkpoints" / "fr" / "sentence"
    (save / "checkpoint_best.pt").unlink()
    args = [
        "pipeline",
        "train",
        "--lang",
        "fr",
        "--root",
        work,
        "--preset",
        "tiny",
        "--gpus",
        "0",
        "--max-epoch",
        setting(study, "EPOCHS"),
        "--model",
        "sentence",
        "--quiet",
    ]  # the chain's settings
    first = cmt(*args)
    if first.returncode != 0:  # refusing is fine if it says how to get out ...
        one_error(first)
        assert "--overwrite" in first.stderr or "OVERWRITE" in first.stderr, meaningful(first.stderr)[-1]
        ok(cmt(*args, "--overwrite"))  # ... and the way out works
    assert (save / "checkpoint_best.pt").exists() and json.loads((save / ".stage" / "train.json").read_text())[
        "outputs"
    ]


def test_train_goes_on_to_more_epochs_and_refuses_fewer(study, work):
    """Issue 38.5 for real: the chain's sentence model (EPOCHS=3). EPOCHS=2 is refused in one line
    (it rewrote the record as 0 updates for the 3-epoch checkpoint); EPOCHS=4 goes on from
    checkpoint_last.pt (fairseq begins at epoch 4) and the record is the checkpoint's."""
    import torch

    save = work / "checkpoints" / "fr" / "sentence"
    record = save / ".stage" / "train.json"
    before = json.loads(record.read_text())
    args = [
        "pipeline",
        "train",
        "--lang",
        "fr",
        "--root",
        work,
        "--preset",
        "tiny",
        "--gpus",
        "0",
        "--model",
        "sentence",
        "--quiet",
    ]
    one_error(
        cmt(*args, "--max-epoch", "2"),
        "sentence was trained for 3 epochs; --max-epoch 2 asks for fewer: --overwrite retrains",
    )
    assert json.loads(record.read_text()) == before
    proc = ok(cmt(*args, "--max-epoch", "4"))
    after = json.loads(record.read_text())
    run = (save / "train.log").read_text().split("\n$ ")[-1]  # this run's part of the log
    assert "begin training epoch 4" in run and "begin training epoch 1\n" not in run
    state = torch.load(save / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    assert (before["epochs"], after["epochs"], state["extra_state"]["train_iterator"]["epoch"]) == (3, 4, 5)
    assert after["num_updates"] == state["optimizer_history"][-1]["num_updates"] > before["num_updates"]
    assert f"(4 epochs, {after['num_updates']} updates, valid loss" in proc.stdout


def test_translate_source_docids_mismatch_names_the_file(study, work):
    """data/fr/test.en one line short: the error names test.en or test.docids."""
    src = work / "data" / "fr" / "test.en"
    lines = src.read_text(encoding="utf-8").splitlines()
    src.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    err = one_error(
        cmt("pipeline", "translate", "--lang", "fr", "--root", work, "--beam", "2", "--quiet", "--systems", "sentence")
    )
    assert "test.en" in err or "test.docids" in err, err


# ----------------------------------------------------------------------------- missing and edited state
def test_translate_and_train_refuse_a_deleted_bin(study, work):
    shutil.rmtree(work / "data" / "fr" / "bin")
    one_error(cmt("pipeline", "translate", "--lang", "fr", "--root", work, "--quiet"), "make data LANG=fr")
    one_error(
        cmt("pipeline", "train", "--lang", "fr", "--root", work, "--preset", "tiny", "--gpus", "0"), "make data LANG=fr"
    )


def test_translate_again_after_an_edited_translation(study, work):
    hyp = work / "results" / "fr" / "sentence.test.fr"
    good = hyp.read_bytes()
    hyp.write_text("edited\n" * len(good.splitlines()))
    ok(cmt("pipeline", "translate", "--lang", "fr", "--root", work, "--beam", "2", "--quiet", "--systems", "sentence"))
    assert hyp.read_bytes() == good


def test_table_with_a_missing_language(study, work):
    out = work / "results" / "table"
    shutil.rmtree(out)  # the shared chain made the table of fr: this test starts without one
    one_error(
        cmt("pipeline", "table", "--langs", "fr", "de", "--results-dir", work / "results", "--output-dir", out),
        "results/de/scores.json",
        "make score LANG=de",
        "make muda-eval LANG=de",
    )
    assert not out.exists()
