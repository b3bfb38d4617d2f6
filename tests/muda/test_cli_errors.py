"""Bad input to `muda tag`, `muda eval` and `muda train-ellipsis`: each case is one 'error:' line
naming the file (and line) or the option, exit status 1, no traceback, and nothing written."""

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from muda.formats.conllu import format_conllu, read_conllu
from tests.muda.helpers import PTB_TREES, assert_one_error, eval_args, muda, tag_args


@pytest.fixture(scope="module")
def bad(tmp_path_factory, demo):
    """Broken files, each made from the demo corpus with one defect."""
    d = tmp_path_factory.mktemp("bad")
    (d / "nonutf8").write_bytes(b"ok\n\xff\xfe bad\n")
    (d / "empty").write_text("")
    (d / "adir").mkdir()
    (d / "badcols.conllu").write_text("1\tI\n")
    conllu = (demo / "test.en.conllu").read_text().splitlines()
    first_word = next(k for k, line in enumerate(conllu) if line.startswith("1\t"))
    cols = conllu[first_word].split("\t")
    (d / "badhead.conllu").write_text(
        "\n".join([*conllu[:first_word], "\t".join([*cols[:6], "x", *cols[7:]]), *conllu[first_word + 1 :]]) + "\n"
    )
    sents = read_conllu(str(demo / "test.en.conllu"))
    free = next(w for w in sents[2].words if "Entity" not in w.misc)
    free.misc["Entity"] = "e99)"  # closes a mention never opened, in sentence 3
    (d / "entity.conllu").write_text(format_conllu(sents))
    align = (demo / "test.align").read_text().splitlines()
    (d / "superscript.align").write_text("\n".join(["²-1", *align[1:]]) + "\n")  # int() refuses '²'
    (d / "dict.json").write_text('{"a": 1}\n')
    (d / "string_tags.json").write_text('[[[{"token": "il", "tags": "pronouns"}]]]\n')
    (d / "hyp_copy.txt").write_text((demo / "context.txt").read_text())
    (d / "a.mrg").write_text(PTB_TREES)
    (d / "user_dir").mkdir()
    (d / "user_dir" / "keep.txt").write_text("mine\n")
    return d


def _tag(demo, bad, out, **change):
    """`muda tag` arguments with some options replaced (key: the option without dashes)."""
    args = tag_args(demo, out / "t.json")
    for key, value in change.items():
        flag = "--" + key.replace("_", "-")
        if flag in args:
            args[args.index(flag) + 1] = str(value)
        else:
            args += [flag, str(value)]
    return args


def _no_annotations(args):
    """Drop the pre-computed annotations: the model annotators' options are used."""
    for flag in ("--src-conllu", "--tgt-conllu", "--alignments"):
        k = args.index(flag)
        del args[k : k + 2]
    return args


def _eval(demo, out, *extra):
    return eval_args(
        demo,
        "--hyps",
        demo / "sentence.txt",
        demo / "context.txt",
        "--bootstrap",
        "10",
        "--output",
        out / "e.json",
        *map(str, extra),
    )


def _eval_with(demo, out, flag, value, *extra):
    """``_eval`` with the value after ``flag`` (an option, or a file given before it) replaced."""
    args = _eval(demo, out, *extra)
    args[args.index(str(flag)) + 1] = str(value)
    return args


def _train(bad, out, *extra):
    return [
        str(a)
        for a in ("train-ellipsis", bad / "a.mrg", "--base-model", bad / "adir", "--output", out / "model", *extra)
    ]


CASES = {
    # muda tag: input files
    "tag-missing-src": (lambda d, b, o: _tag(d, b, o, src=b / "nope.en"), ["nope.en: file not found"]),
    "tag-dir-as-tgt": (lambda d, b, o: _tag(d, b, o, tgt=b / "adir"), ["adir: is a directory"]),
    "tag-empty-docids": (lambda d, b, o: _tag(d, b, o, docids=b / "empty"), ["empty: docids file is empty"]),
    "tag-non-utf8-conllu": (lambda d, b, o: _tag(d, b, o, src_conllu=b / "nonutf8"), ["nonutf8:2: not UTF-8"]),
    "tag-non-utf8-alignments": (lambda d, b, o: _tag(d, b, o, alignments=b / "nonutf8"), ["nonutf8:2: not UTF-8"]),
    "tag-conllu-columns": (
        lambda d, b, o: _tag(d, b, o, src_conllu=b / "badcols.conllu"),
        ["badcols.conllu:1: expected 10 tab-separated columns"],
    ),
    "tag-conllu-head": (
        lambda d, b, o: _tag(d, b, o, src_conllu=b / "badhead.conllu"),
        ["badhead.conllu:", "HEAD 'x' is not a word number"],
    ),
    "tag-coref-entity": (
        lambda d, b, o: _tag(d, b, o, src_conllu=b / "entity.conllu"),
        ["entity.conllu: sentence 3: entity e99 closed but not opened"],
    ),
    "tag-alignment-superscript": (
        lambda d, b, o: _tag(d, b, o, alignments=b / "superscript.align"),
        ["superscript.align:1: '\u00b2-1' is not a Pharaoh pair"],
    ),
    "tag-ellipsis-model-missing": (
        lambda d, b, o: _tag(d, b, o, ellipsis_model=b / "no-model"),
        ["no-model: ellipsis model directory not found"],
    ),
    "tag-unknown-language": (lambda d, b, o: _tag(d, b, o, tgt_lang="xx"), ["unknown target language 'xx'"]),
    # muda tag: option values (checked before any file is read or model loaded)
    "tag-lexical-min-count-0": (
        lambda d, b, o: _tag(d, b, o, lexical_min_count="0"),
        ["--lexical-min-count must be >= 1 (got 0)"],
    ),
    "tag-coref-window-negative": (
        lambda d, b, o: _no_annotations(_tag(d, b, o, coref_window="-1")),
        ["--coref-window must be >= 0 (got -1)"],
    ),
    "tag-batch-size-0": (
        lambda d, b, o: _no_annotations(_tag(d, b, o, batch_size="0")),
        ["--batch-size must be >= 1 (got 0)"],
    ),
    # muda tag: outputs
    "tag-output-under-a-file": (
        lambda d, b, o: _tag(d, b, o, dump_tags=b / "empty" / "t.json"),
        ["empty/t.json: cannot write here", "is a file"],
    ),
    "tag-output-is-a-directory": (lambda d, b, o: _tag(d, b, o, dump_tags=b / "adir"), ["adir: is a directory"]),
    "tag-output-is-an-input": (
        lambda d, b, o: _tag(d, b, o, dump_tags=b / "hyp_copy.txt", tgt=b / "hyp_copy.txt"),
        ["hyp_copy.txt: --dump-tags would overwrite the input given as --tgt"],
    ),
    # muda eval: option values
    "eval-fewer-names": (lambda d, b, o: _eval(d, o, "--names", "a"), ["--names: 1 given for 2 --hyps files"]),
    "eval-more-names": (lambda d, b, o: _eval(d, o, "--names", "a", "b", "c"), ["--names: 3 given for 2 --hyps"]),
    "eval-bootstrap-negative": (
        lambda d, b, o: _eval_with(d, o, "--bootstrap", "-5"),
        ["--bootstrap must be >= 0 (got -5)"],
    ),
    "eval-bootstrap-huge": (lambda d, b, o: _eval_with(d, o, "--bootstrap", "1000000000"), ["--bootstrap must be <="]),
    "eval-seed-negative": (lambda d, b, o: _eval(d, o, "--seed", "-1"), ["--seed must be >= 0 (got -1)"]),
    "eval-hyp-conllu-count": (
        lambda d, b, o: _eval(d, o, "--hyp-conllu", d / "test.fr.conllu"),
        ["--hyp-conllu: 1 given for 2 --hyps files"],
    ),
    "eval-name-with-slash": (lambda d, b, o: _eval(d, o, "--names", "a/b", "c"), ["--names: 'a/b' cannot be"]),
    "eval-name-reference": (
        lambda d, b, o: _eval(d, o, "--names", "reference", "c"),
        ["--names: 'reference' is taken"],
    ),
    "eval-batch-size-0": (lambda d, b, o: _eval(d, o, "--batch-size", "0"), ["--batch-size must be >= 1"]),
    "eval-ellipsis-model-with-lexicon": (
        lambda d, b, o: _eval(d, o, "--ellipsis-model", b / "no-model"),
        ["--ellipsis-model needs the model annotators", "--lexicon"],
    ),
    "eval-unknown-language": (lambda d, b, o: _eval_with(d, o, "--tgt-lang", "xx"), ["unknown target language 'xx'"]),
    # muda eval: input files
    "eval-ref-tags-missing": (
        lambda d, b, o: _eval(d, o, "--ref-tags", b / "nope.json"),
        ["nope.json: tags file not found"],
    ),
    "eval-ref-tags-directory": (lambda d, b, o: _eval(d, o, "--ref-tags", b / "adir"), ["adir: is a directory"]),
    "eval-ref-tags-empty": (lambda d, b, o: _eval(d, o, "--ref-tags", b / "empty"), ["empty: not a JSON file"]),
    "eval-ref-tags-non-utf8": (lambda d, b, o: _eval(d, o, "--ref-tags", b / "nonutf8"), ["nonutf8:2: not UTF-8"]),
    "eval-ref-tags-object": (
        lambda d, b, o: _eval(d, o, "--ref-tags", b / "dict.json"),
        ["dict.json: not the MuDA tags layout", "top level is an object"],
    ),
    "eval-ref-tags-string-tags": (
        lambda d, b, o: _eval(d, o, "--ref-tags", b / "string_tags.json"),
        ["string_tags.json: document 1, sentence 1, token 1"],
    ),
    "eval-hyp-empty": (
        lambda d, b, o: _eval_with(d, o, "--hyps", b / "empty"),
        ["empty: has 0 lines: not one per source line (155)"],
    ),
    "eval-hyp-non-utf8": (lambda d, b, o: _eval_with(d, o, "--hyps", b / "nonutf8"), ["nonutf8:2: not UTF-8"]),
    "eval-hyp-directory": (lambda d, b, o: _eval_with(d, o, "--hyps", b / "adir"), ["adir: is a directory"]),
    "eval-lexicon-missing": (
        lambda d, b, o: _eval_with(d, o, "--lexicon", b / "nope.conllu"),
        ["nope.conllu: file not found"],
    ),
    "eval-lexicon-bad-alignments": (
        lambda d, b, o: _eval_with(d, o, str(d / "train.fr.conllu"), b / "badcols.conllu"),
        ["badcols.conllu:1: '1' is not a Pharaoh pair"],
    ),
    "eval-lexicon-sizes": (
        lambda d, b, o: _eval_with(d, o, "--lexicon", d / "test.en.conllu"),
        ["--lexicon: ", "have 155, 815 and 815 sentences"],
    ),
    # muda eval: outputs
    "eval-output-twice": (
        lambda d, b, o: _eval(d, o, "--table", o / "e.json"),
        ["e.json: --output and --table would be the same file"],
    ),
    "eval-output-is-a-hypothesis": (
        lambda d, b, o: _eval_with(d, o, "--output", b / "hyp_copy.txt", "--hyps", b / "hyp_copy.txt"),
        ["hyp_copy.txt: --output would overwrite the input given as --hyps"],
    ),
    "eval-table-is-the-reference": (
        lambda d, b, o: _eval(d, o, "--table", d / "test.fr"),
        ["test.fr: --table would overwrite the input given as --ref"],
    ),
    "eval-plot-under-a-file": (
        lambda d, b, o: _eval(d, o, "--plot", b / "empty" / "e.png"),
        ["empty/e.png: cannot write here"],
    ),
    "eval-table-is-a-directory": (
        lambda d, b, o: _eval(d, o, "--table", b / "adir", "--plot", o / "e.png"),
        ["adir: is a directory"],
    ),
    # muda train-ellipsis
    "train-missing-trees": (
        lambda d, b, o: [*_train(b, o)[:1], b / "nope.mrg", *_train(b, o)[2:]],
        ["nope.mrg: file not found"],
    ),
    "train-non-utf8-trees": (
        lambda d, b, o: [*_train(b, o)[:1], b / "nonutf8", *_train(b, o)[2:]],
        ["nonutf8:2: not UTF-8"],
    ),
    "train-epochs-0": (lambda d, b, o: _train(b, o, "--epochs", "0"), ["--epochs must be >= 1 (got 0)"]),
    "train-lr-nan": (lambda d, b, o: _train(b, o, "--lr", "nan"), ["--lr must be a finite number"]),
    "train-lr-negative": (lambda d, b, o: _train(b, o, "--lr", "-0.1"), ["--lr must be > 0"]),
    "train-batch-size-0": (lambda d, b, o: _train(b, o, "--batch-size", "0"), ["--batch-size must be >= 1"]),
    "train-positive-weight-0": (
        lambda d, b, o: _train(b, o, "--positive-weight", "0"),
        ["--positive-weight must be > 0"],
    ),
    "train-base-model-path-missing": (
        lambda d, b, o: _train(b, o, "--base-model", b / "no-model"),
        ["no-model: base model directory not found"],
    ),
    "train-output-holds-other-files": (
        lambda d, b, o: [*_train(b, o)[:-2], "--output", b / "user_dir"],
        ["user_dir: a directory with other files in it"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_one_error_line_and_nothing_is_written(case, demo, bad, tmp_path):
    build, needles = CASES[case]
    out = tmp_path / "out"
    out.mkdir()
    before = {p: p.read_bytes() for p in bad.rglob("*") if p.is_file()}
    assert_one_error(muda(*build(demo, bad, out)), *needles)
    assert not list(out.iterdir())
    assert {p: p.read_bytes() for p in bad.rglob("*") if p.is_file()} == before  # no input touched


@pytest.mark.parametrize(
    "missing, needle",
    [
        ("comet", "COMET needs the unbabel-comet package, which is not installed: run make install"),
        (
            "pkg_resources",
            "unbabel-comet is installed but cannot be imported (ModuleNotFoundError: No module named 'pkg_resources')",
        ),
    ],
)
def test_eval_without_comet_fails_before_any_work(demo, tmp_path, tmp_path_factory, missing, needle):
    """unbabel-comet missing, or one of its dependencies (a stand-in ``comet`` first on the path
    raises what Python raises then): one line, before tagging and BLEU (whose warnings would come
    first); "not installed" only for the first."""
    stub = tmp_path_factory.mktemp("stub") / "comet"
    stub.mkdir()
    (stub / "__init__.py").write_text(f"raise ModuleNotFoundError(\"No module named '{missing}'\", name='{missing}')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(stub.parent), os.environ.get("PYTHONPATH", "")]))
    proc = muda(*_eval(demo, tmp_path, "--comet-model", "Unbabel/wmt22-comet-da"), env=env)
    assert_one_error(proc, needle)
    assert not list(tmp_path.iterdir())


def test_tag_summary_path_is_a_directory_nothing_else_is_written(demo, tmp_path):
    (tmp_path / "x.summary.json").mkdir()
    assert_one_error(muda(*tag_args(demo, tmp_path / "x.json")), "x.summary.json: is a directory")
    assert [p.name for p in tmp_path.iterdir()] == ["x.summary.json"]


def test_eval_table_is_a_directory_nothing_else_is_written(demo, tmp_path):
    (tmp_path / "table").mkdir()
    args = _eval(demo, tmp_path, "--plot", tmp_path / "e.png", "--table", tmp_path / "table")
    assert_one_error(muda(*args), "table: is a directory")
    assert [p.name for p in tmp_path.iterdir()] == ["table"]  # no e.json, e.png or e.work/


def test_eval_work_directory_is_a_file(demo, tmp_path):
    (tmp_path / "e.work").write_text("")
    assert_one_error(muda(*_eval(demo, tmp_path)), "e.work: exists and is not a directory")
    assert [p.name for p in tmp_path.iterdir()] == ["e.work"]


def test_train_ellipsis_keeps_a_directory_of_other_files(bad, tmp_path):
    target = tmp_path / "mine"
    shutil.copytree(bad / "user_dir", target)
    assert_one_error(muda(*_train(bad, tmp_path)[:-2], "--output", target), "a directory with other files")
    assert (target / "keep.txt").read_text() == "mine\n"


def _python(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_warnings_read_as_warning_lines_whoever_logs_them():
    proc = _python(
        "import logging\nfrom commandkit.console import configure_logging\nconfigure_logging()\n"
        "logging.getLogger('muda').warning('a.docids:3: document id %r appears again', 'd1')\n"
        "logging.getLogger('fairseq.x').info('not shown at WARNING')\n"
    )
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and err == "warning: a.docids:3: document id 'd1' appears again\n", err


def test_ctrl_c_while_python_waits_for_threads_is_one_line():
    # a worker thread still running when main() returns: Python waits for it, and a Ctrl-C then
    # used to print "Exception ignored in: <module 'threading'>" and a traceback
    proc = _python(
        "import threading, time\nfrom commandkit.console import console_run\n"
        "def main():\n    threading.Thread(target=time.sleep, args=(30,)).start()\n"
        "    print('ready', flush=True)\n    return 0\nconsole_run(main)\n"
    )
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err == "error: interrupted\n", err


def test_sigterm_stops_like_ctrl_c_and_cleans_up(tmp_path):
    # kill / timeout / scancel: the command's clean-up runs (Python's default would end it on
    # the spot, leaving its temporary files)
    marker = tmp_path / "cleaned"
    proc = _python(
        "import time\nfrom commandkit.console import console_run, run_command\n"
        "def work(args):\n    try:\n        print('ready', flush=True)\n        time.sleep(30)\n"
        f"    finally:\n        open({str(marker)!r}, 'w').close()\n"
        "console_run(lambda: run_command(work, None))\n"
    )
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err == "error: interrupted\n" and marker.exists(), err


def test_a_sigterm_that_reaches_a_child_before_its_fork_hooks_ends_it():
    # a pool that ends at once sends SIGTERM to workers still starting: the signal must end them,
    # not be swallowed by the inherited handler inside a fork hook (the pool then waited forever).
    # Here a hook registered before console_run's sends the child its SIGTERM, deterministically.
    proc = _python(
        "import os, signal\n"
        "os.register_at_fork(after_in_child=lambda: os.kill(os.getpid(), signal.SIGTERM))\n"
        "from commandkit.console import console_run\n"
        "def main():\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n"
        "    _, status = os.waitpid(pid, 0)\n"
        "    print(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM)\n"
        "    return 0\nconsole_run(main)\n"
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out == "True\n", (out, err)
    assert "KeyboardInterrupt" not in err, err


def test_forked_pool_workers_still_end_on_their_pools_sigterm():
    # a Pool's workers inherit console_run's SIGTERM handler, and the pool ends them with
    # SIGTERM: they must die at once (an exception in a worker could leave a queue lock held
    # and hang the next worker: `make data` once hung so)
    proc = _python(
        "import multiprocessing\nfrom commandkit.console import console_run\n"
        "def main():\n    for _ in range(30):\n"
        "        with multiprocessing.get_context('fork').Pool(2) as pool:\n"
        "            pool.map(abs, range(200))\n    return 0\nconsole_run(main)\n"
    )
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and err == "", err
