"""``testset import --format ctxpro`` on samples of ctxpro's sets (tests/fixtures/ctxpro, Apache-2.0):
the suite it writes, ``testset evaluate`` agreeing per example with ctxpro's own scorer (its
outcomes recorded beside the samples), the contrastive variants, bad input as one line with
nothing written, and a sample translated and scored end to end with a tiny model."""

import json
import shutil
from pathlib import Path

import pytest

from contextual_mt.errors import InputError
from contextual_mt.testsets.ctxpro import CtxproMatcher, ImportOptions, import_ctxpro, never_matched, variants
from contextual_mt.testsets.evaluate import EvaluateOptions, evaluate_testset
from tests.helpers import contextual_mt_cli

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "ctxpro"
SETS = [p.name[: -len(".json")] for p in sorted(FIXTURES.glob("*.json")) if p.name != "ctxpro_outcomes.json"]
OUTCOMES = json.loads((FIXTURES / "ctxpro_outcomes.json").read_text())
FR = "mini.formality.opensubtitles.en-fr.test"


def imported(tmp_path, name=FR, **options):
    out = tmp_path / name
    summary = import_ctxpro(
        ImportOptions(
            evalset=str(FIXTURES / f"{name}.json"), inputs=str(FIXTURES / name), output_dir=str(out), **options
        )
    )
    return out, summary


def test_the_samples_are_small_and_licensed():
    assert (FIXTURES / "LICENSE").read_text().split()[:3] == ["Apache", "License", "Version"]
    for name in SETS:
        assert len(json.loads((FIXTURES / f"{name}.json").read_text())) <= 30


def test_import_writes_one_document_per_example(tmp_path):
    out, summary = imported(tmp_path)
    examples = json.loads((FIXTURES / f"{FR}.json").read_text())
    inputs = (FIXTURES / FR).read_text().splitlines()
    source = (out / "source.en").read_text().splitlines()
    docids = (out / "docids").read_text().splitlines()
    groups = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    assert len(groups) == len(examples) == summary["examples"] == 24
    assert len(source) == len(docids) == summary["lines"] == sum(line.count("<eos>") + 1 for line in inputs)
    for k, (g, e, line) in enumerate(zip(groups, examples, inputs, strict=True)):
        # the group's line is the example's sentence, after its context, in a document of its own
        assert source[g["line"] - 1] == e["src segment"].strip()
        doc = [s for s, d in zip(source, docids, strict=True) if d == g["doc"]]
        assert doc == [p.strip() for p in line.split("<eos>")]
        assert (g["example"], g["word"], g["rule"], g["match"]) == (k + 1, e["expected"], e["rule"], "ctxpro")
        assert g["phenomenon"] == "formality" and g["sentence"] == len(doc) - 1
    assert (out / "examples.fr").read_text().splitlines() == [e["ref segment"].strip() for e in examples]
    by_word = {g["word"]: g["alternatives"] for g in groups}
    assert by_word["tu"] == ["vous"] and by_word["te"] == ["vous"] and by_word["toi"] == ["vous"]
    assert set(by_word["vous"]) >= {"tu"}  # a subject's: the informal subject
    # t' is never found by ctxpro's rule (it deletes punctuation from the translation only)
    assert summary["never_matched"] == sum(e["expected"] == "t'" for e in examples) > 0


def test_context_size_keeps_the_last_sentences(tmp_path):
    out, summary = imported(tmp_path, context_size=1)
    groups = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    assert all(g["sentence"] <= 1 for g in groups) and summary["lines"] <= 2 * summary["examples"]


@pytest.mark.parametrize("name", SETS)
def test_evaluate_passes_what_ctxpro_passes(tmp_path, name):
    """Per example, `testset evaluate`'s "correct" is ctxpro score's pass, on DeepL's output (one
    line per example: the context translated with the sentence) and on the references."""
    out, summary = imported(tmp_path, name)
    systems = {"reference": str(out / f"examples.{summary['language']}")}
    if (FIXTURES / f"deepl.{name}.contexts").exists():
        systems["deepl"] = str(FIXTURES / f"deepl.{name}.contexts")
    result = evaluate_testset(EvaluateOptions(str(out / "manifest.jsonl"), tuple(systems.values()), bootstrap=0))
    for system, path in systems.items():
        ours = next(s for s in result["systems"].values() if s["hypotheses"] == path)["group_outcomes"]
        assert [o == "correct" for o in ours] == OUTCOMES[name][system], system


def test_ctxpro_rule():
    m = CtxproMatcher("fr")
    assert m.last_sentence("Dr. Osmond, qu'attendez-vous ? Je pense que oui.") == "Je pense que oui."
    found = [
        m.found(m.prepare(text), form)
        for text, form in [
            ("Je vous aime. Tu viens ?", "tu"),  # the last sentence only
            ("Tu viens ? Je vous aime.", "tu"),
            ("Qu'attendez-vous de nous ?", "vous"),  # the hyphen is deleted: attendezvous
            ("Je t'aime.", "t'"),  # never: the form keeps its apostrophe
            ("JE VOUS AIME.", "vous"),
            ("Je\u00a0vous aime.", "vous"),  # a non-breaking space is not a space
        ]
    ]
    assert found == [True, False, False, False, True, False]
    assert never_matched("t'") and never_matched("-Fühlst") and not never_matched("vous")
    with pytest.raises(InputError, match="language 'xx': ctxpro's sentence splitter"):
        CtxproMatcher("xx")


def test_contrastive_variants():
    def made(rule, ref, form, alternatives, lang="fr", formal=frozenset({"vous"}), forms=frozenset()):
        example = {"rule": rule, "ref segment": ref, "expected": form}
        return variants(example, "formality" if "FORM" in rule else "gender", alternatives, lang, formal, forms)

    assert made("ACC.INFORM.SING.LIAS", "Je t'aime.", "t'", ["vous"])[0][0]["text"] == "Je vous aime."
    assert made("DISJ.INFORM.SING", "Toi, viens.", "toi", ["vous"])[0][0]["text"] == "Vous, viens."
    assert made("ACC.FORM+PLUR", "Je vous aime.", "vous", ["t'", "te"])[0][0]["text"] == "Je t'aime."
    assert made("ACC.FORM+PLUR", "Pour vous aider.", "vous", ["t'", "te", "toi"])[1] == (
        "the alternative depends on the role or the number"
    )
    assert made("NOM.INFORM.SING", "Tu viens.", "tu", ["vous"])[1] == "a subject (its verb agrees)"
    assert made("ACC.INFORM.SING", "Je te vois, tu sais.", "te", ["vous"], forms=frozenset({"tu"}))[1] == (
        "another form of address in the sentence"
    )
    de = made("ACC.INFORM.SING", "Ich sehe dich.", "dich", ["sie"], "de", frozenset({"sie"}))[0]
    assert de[0]["text"] == "Ich sehe Sie."  # German polite forms are capitalised
    es = made("NOM.MASC.SING", "Él lo sabe.", "él", ["ella"], "es", frozenset())[0]
    assert es[0]["text"] == "Ella lo sabe."


def test_cli_import_then_evaluate(tmp_path, capsys):
    out = tmp_path / "suite"
    argv = ["testset", "import", "--format", "ctxpro", "--evalset", str(FIXTURES / f"{FR}.json")]
    assert contextual_mt_cli(*argv, "--inputs", str(FIXTURES / FR), "--output-dir", str(out)).returncode == 0
    proc = contextual_mt_cli(
        "testset", "evaluate", "--manifest", str(out / "manifest.jsonl"), "--bootstrap", "0",
        "--hyp", str(FIXTURES / f"deepl.{FR}.contexts"), "--output", str(tmp_path / "r.json"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    overall = json.loads((tmp_path / "r.json").read_text())["systems"][f"deepl.{FR}.contexts"]["overall"]
    assert overall["correct"] == pytest.approx(sum(OUTCOMES[FR]["deepl"]) / len(OUTCOMES[FR]["deepl"]))


def _bad(tmp_path, name, evalset, inputs, *extra):
    out = tmp_path / name
    argv = ["testset", "import", "--format", "ctxpro", "--evalset", str(evalset), "--inputs", str(inputs)]
    proc = contextual_mt_cli(*argv, "--output-dir", str(out), *extra)
    err = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 1 and len(err) == 1 and err[0].startswith("error:"), proc.stderr
    assert not out.exists()
    return err[0]


def test_bad_inputs_are_one_line_and_nothing_written(tmp_path):
    examples = json.loads((FIXTURES / f"{FR}.json").read_text())
    inputs = (FIXTURES / FR).read_text().splitlines()
    d = tmp_path / "in"
    d.mkdir()
    short = d / FR
    short.write_text("".join(line + "\n" for line in inputs[:-1]))
    assert f"{short}: has 23 lines but" in _bad(tmp_path, "a", FIXTURES / f"{FR}.json", short)
    swapped = d / "swapped"
    swapped.write_text("".join(line + "\n" for line in [inputs[1], inputs[0], *inputs[2:]]))
    assert f"{swapped}:1: its last sentence is not the source segment" in _bad(
        tmp_path, "b", FIXTURES / f"{FR}.json", swapped
    )
    broken = d / f"{FR}.json"
    broken.write_text(json.dumps([*examples[:3], {k: v for k, v in examples[3].items() if k != "rule"}]))
    assert f"{broken}: example 4: not a ctxpro example (no 'rule')" in _bad(tmp_path, "c", broken, FIXTURES / FR)
    not_json = d / "x.json"
    not_json.write_text("[{")
    assert f"{not_json}:1: not JSON" in _bad(
        tmp_path, "d", not_json, FIXTURES / FR, "--lang", "fr", "--category", "formality"
    )
    assert "is named for en-fr" in _bad(tmp_path, "e", FIXTURES / f"{FR}.json", FIXTURES / FR, "--lang", "de")
    assert "give --lang and --category" in _bad(tmp_path, "f", not_json, FIXTURES / FR)


def test_evaluate_refuses_an_output_of_neither_layout(tmp_path):
    out, summary = imported(tmp_path)
    hyp = tmp_path / "hyp"
    hyp.write_text("x\n" * (summary["examples"] + 1))
    with pytest.raises(InputError, match="has 25 lines but the test set has"):
        evaluate_testset(EvaluateOptions(str(out / "manifest.jsonl"), (str(hyp),), bootstrap=0))


def test_end_to_end_with_a_tiny_model(tmp_path):
    """A sample imported, translated with its context by a tiny Marian (random weights; its
    tokenizers trained on the sample's own text, so nothing maps to <unk>), scored by testset
    evaluate and by contrastive on its variants."""
    from tests.hf_models import build_marian

    out, summary = imported(tmp_path, context_size=1)
    source = (out / "source.en").read_text().splitlines()
    voita = json.loads((out / "voita.json").read_text())
    targets = (out / "examples.fr").read_text().splitlines() + [c for e in voita for c in e["dst"]]
    marian = build_marian(tmp_path / "marian", lines_src=source, lines_tgt=targets, spm_vocab=400, max_positions=512)
    hyp = tmp_path / "hyp.fr"
    proc = contextual_mt_cli(
        "translate", "--hf-model", str(marian), "--source", str(out / "source.en"), "--docids", str(out / "docids"),
        "--source-context-size", "1", "--output", str(hyp), "--beam", "1", "--max-len-b", "8", "--cpu", "--quiet",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert len(hyp.read_text().splitlines()) == summary["lines"]
    result = evaluate_testset(EvaluateOptions(str(out / "manifest.jsonl"), (str(hyp),), bootstrap=0))
    system = result["systems"]["hyp.fr"]
    assert len(system["group_outcomes"]) == system["overall"]["groups"] == 24
    contrastive = contextual_mt_cli(
        "contrastive", "--hf-model", str(marian), "--format", "voita", "--input", str(out / "voita.json"),
        "--source-context-size", "1", "--output", str(tmp_path / "c.scores"), "--summary", str(tmp_path / "c.json"),
        "--cpu",
    )  # fmt: skip
    assert contrastive.returncode == 0, contrastive.stderr
    scored = json.loads((tmp_path / "c.json").read_text())
    assert scored["groups"] == summary["contrastive_groups"] == len(voita) > 0


def test_suite_folder_is_not_an_input(tmp_path):
    shutil.copy(FIXTURES / FR, tmp_path / FR)
    with pytest.raises(InputError, match="would overwrite an input"):
        ImportOptions(evalset=str(FIXTURES / f"{FR}.json"), inputs=str(tmp_path / "docids"), output_dir=str(tmp_path))
