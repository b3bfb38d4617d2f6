"""Speed of the data stage (`contextual-mt pipeline data`, ``prepare_data``) at the size of TED EN-XX.

Writes a synthetic corpus in the format of the multilingual TED talks corpus (Qi et al. 2018):
``all_talks_{train,dev,test}.tsv`` with a ``talk_name`` column and ``en``, ``fr`` and two extra
language columns, 230,000 pairs in about 2,000 talks. The text is Moses-tokenized English- and
French-like text: words drawn from a Zipfian vocabulary of ~50k word types per language (made of
syllables, so subwords are shared as in real text), ~20 tokens a sentence, with commas, quotes,
``&apos;`` contractions (``it &apos;s``, ``l&apos; homme``), numbers and a few ``__NULL__`` rows.
Then it times ``prepare_data`` end to end (vocabulary 16000, 2 workers) and prints the time of
each step: read, detokenize, spm train, encode, binarize.

    .venv/bin/python -m bench.make_data_speed [--pairs 230000] [--talks 2000] [--workers 2] [--json result.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile

import numpy as np

from bench import harness

SYLLABLES = {
    "en": [
        "th",
        "er",
        "on",
        "an",
        "re",
        "he",
        "in",
        "ed",
        "nd",
        "ha",
        "at",
        "en",
        "es",
        "of",
        "or",
        "nt",
        "ea",
        "ti",
        "to",
        "it",
        "st",
        "io",
        "le",
        "is",
        "ou",
        "ar",
        "as",
        "de",
        "rt",
        "ve",
        "wh",
        "ch",
        "sh",
        "ly",
        "ing",
        "tion",
        "ment",
        "ble",
        "ful",
        "ness",
        "pro",
        "con",
        "com",
        "per",
        "ex",
        "un",
        "str",
        "gr",
        "pl",
        "bl",
        "cr",
        "tr",
    ],
    "fr": [
        "le",
        "de",
        "es",
        "en",
        "re",
        "nt",
        "on",
        "er",
        "ou",
        "an",
        "ai",
        "qu",
        "ti",
        "la",
        "et",
        "ur",
        "it",
        "me",
        "se",
        "ne",
        "ce",
        "eu",
        "oi",
        "au",
        "in",
        "em",
        "ie",
        "ment",
        "tion",
        "eur",
        "eux",
        "ais",
        "ait",
        "ons",
        "ez",
        "che",
        "gn",
        "pr",
        "tr",
        "cr",
        "br",
        "pl",
        "vr",
        "ét",
        "é",
        "è",
        "ê",
        "à",
        "ç",
    ],
}
CONTRACTIONS = {
    "en": ["&apos;s", "&apos;re", "n&apos;t", "&apos;ve", "&apos;ll", "&apos;m"],
    "fr": ["l&apos;", "d&apos;", "qu&apos;", "c&apos;", "n&apos;", "j&apos;", "s&apos;"],
}
PUNCT_END = [".", ".", ".", "?", "!"]


def vocabulary(lang: str, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` distinct word types, short ones first (frequent words are short)."""
    syl = SYLLABLES[lang]
    words, seen = [], set()
    while len(words) < size:
        n = 1 + min(4, int(rng.exponential(0.5 + len(words) / size * 2.0)))
        w = "".join(syl[i] for i in rng.integers(0, len(syl), n))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return np.array(words, dtype=object)


def sentences(lang: str, count: int, words: np.ndarray, rng: np.random.Generator) -> list:
    ranks = np.arange(1, len(words) + 1, dtype=np.float64)
    p = 1.0 / (ranks + 2.7) ** 1.07
    p /= p.sum()
    lengths = np.clip(rng.normal(20, 8, count).astype(int), 3, 60)
    tokens = words[rng.choice(len(words), size=int(lengths.sum()), p=p)]
    out, pos = [], 0
    contractions = CONTRACTIONS[lang]
    for n in lengths:
        toks = list(tokens[pos : pos + n])
        pos += n
        toks[0] = toks[0].capitalize()
        r = rng.random(6)
        if r[0] < 0.5:
            toks.insert(int(r[1] * (len(toks) - 1)) + 1, ",")
        if r[2] < 0.3:  # a contraction, Moses-style
            k = int(r[3] * len(toks))
            if lang == "en":
                toks.insert(k + 1, contractions[int(r[4] * len(contractions))])
            else:
                toks.insert(k, contractions[int(r[4] * len(contractions))])
        if r[5] < 0.08:  # a quotation
            a = int(r[1] * len(toks))
            toks[a : a + 3] = ["&quot;", *toks[a : a + 3], "&quot;"]
        if r[4] < 0.05:
            toks.insert(int(r[2] * len(toks)), str(int(r[3] * 2000)))
        toks.append(PUNCT_END[int(r[3] * len(PUNCT_END))])
        out.append(" ".join(toks))
    return out


def write_synthetic_ted(folder: str, pairs: int = 230_000, talks: int = 2000, seed: int = 0) -> dict:
    """all_talks_{train,dev,test}.tsv in ``folder``; returns the row counts."""
    rng = np.random.default_rng(seed)
    vocab = {lang: vocabulary(lang, 50_000, rng) for lang in ("en", "fr")}
    text = {lang: sentences(lang, pairs, vocab[lang], rng) for lang in ("en", "fr")}
    # talks of different lengths (20 to ~300 rows), in proportion to a lognormal draw
    weights = rng.lognormal(0, 0.6, talks)
    sizes = np.maximum(1, np.round(weights / weights.sum() * pairs)).astype(int)
    sizes[-1] += pairs - sizes.sum()
    n_test = n_dev = max(1, talks // 40)
    split_of = ["test"] * n_test + ["dev"] * n_dev + ["train"] * (talks - n_test - n_dev)
    header = "talk_name\tde\ten\tfr\tja\n"
    with contextlib.ExitStack() as stack:
        files = {
            s: stack.enter_context(open(os.path.join(folder, f"all_talks_{s}.tsv"), "w", encoding="utf-8"))
            for s in ("train", "dev", "test")
        }
        return write_talks(files, header, text, sizes, split_of, rng.random(pairs))


def write_talks(files, header, text, sizes, split_of, nulls) -> dict:
    """The talks' rows into the open split files; the row count of each split."""
    counts = dict.fromkeys(files, 0)
    for f in files.values():
        f.write(header)
    row = 0
    for t, size in enumerate(sizes):
        f = files[split_of[t]]
        name = f"talk_{t:05d}_synthetic_speaker"
        lines = []
        for _ in range(size):
            en, fr = text["en"][row], text["fr"][row]
            if nulls[row] < 0.002:
                fr = "__NULL__"
            elif nulls[row] < 0.003:
                en = "_ _ NULL _ _"
            lines.append(f"{name}\t__NULL__\t{en}\t{fr}\t__NULL__\n")
            row += 1
        f.writelines(lines)
        counts[split_of[t]] += size
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=230_000)
    parser.add_argument("--talks", type=int, default=2000)
    parser.add_argument("--vocab-size", type=int, default=16000)
    parser.add_argument("--spm-type", default=None, help="default: prepare_data's default")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--workdir", help="keep the corpus and outputs here (default: a temporary folder)")
    harness.add_arguments(parser, repeats=None)
    args = harness.parse(parser, argv)
    print(harness.machine_line(harness.machine_info()), flush=True)

    from contextual_mt.pipeline.prepare import DataOptions, prepare_data

    work = args.workdir or tempfile.mkdtemp(prefix="make-data-speed.")
    os.makedirs(work, exist_ok=True)
    corpus = os.path.join(work, "ted_talks")
    os.makedirs(corpus, exist_ok=True)
    written = harness.time_it(lambda: write_synthetic_ted(corpus, args.pairs, args.talks), repeats=1)
    counts = written.result
    print(f"synthetic TED corpus: {counts} rows, written in {written.median:.1f} s", flush=True)
    out = os.path.join(work, "out")
    extra = {"spm_type": args.spm_type} if args.spm_type else {}
    options = DataOptions(
        lang="fr", output=out, ted=corpus, vocab_size=args.vocab_size, workers=args.workers, overwrite=True, **extra
    )
    load = os.getloadavg()
    timed = harness.time_it(lambda: prepare_data(options, progress=False), repeats=1)
    summary, total = timed.result, timed.median
    print(json.dumps({s: dict(summary["splits"][s]) for s in summary["splits"]}, indent=1))
    print(
        f"spm: {summary['spm']['model_type']}, {summary['spm']['pieces']} pieces, trained on "
        f"{summary['spm']['training_sentences']} sentences"
    )
    for step, seconds in summary["seconds"].items():
        print(f"{step:12s} {seconds:8.1f} s")
    print(
        f"{'total':12s} {total:8.1f} s (wall, end to end)   load average before: {load[0]:.2f}, "
        f"after: {os.getloadavg()[0]:.2f}"
    )
    harness.finish(
        args,
        "make_data_speed",
        {
            "rows": counts,
            "splits": summary["splits"],
            "spm": summary["spm"],
            "seconds": summary["seconds"],
            "total_s": total,
        },
    )
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
