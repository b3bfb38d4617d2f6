"""The demo corpus that the evaluation and error tests share (built once per session): the
reference as the "context" system, and a "sentence" system with every planted word wrong."""

import json
import shutil

import pytest


@pytest.fixture(scope="session")
def demo(tmp_path_factory, demo_corpus):
    d = tmp_path_factory.mktemp("eval") / "demo"
    shutil.copytree(demo_corpus(train_docs=150, valid_docs=2, test_docs=30, seed=8), d)
    refs = (d / "test.fr").read_text().splitlines()
    planted = [json.loads(text) for text in (d / "test.planted.jsonl").read_text().splitlines()]
    wrong = [line.split() for line in refs]
    for p in planted:
        wrong[p["line"] - 1][p["index"]] = p["alternative"]
    (d / "context.txt").write_text("\n".join(refs) + "\n")
    (d / "sentence.txt").write_text("\n".join(" ".join(w) for w in wrong) + "\n")
    return d
