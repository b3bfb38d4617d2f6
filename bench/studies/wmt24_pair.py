"""A document-level English-German pair in `make data TEXT=`'s layout from the WMT24 general task's
test set and submissions (bench/RESULTS.md, "On real English-German text (WMT24)").

    python -m bench.studies.wmt24_pair --wmt WMT24/txt --output /tmp/wmtpair [--json FILE]
    make data train translate score pcxmi LANG=de WORK=/tmp/wmtstudy TEXT=/tmp/wmtpair PRESET=tiny

``--wmt``: the ``txt`` folder of github.com/wmt-conference/wmt24-news-systems. The 171 documents
(the canary line left out) are split by document (seed 5): 25 for test and 10 for valid, with
reference A; each of the others is written once per German version of it (references A and B and
``--systems``), as a document of its own (``DOC#VERSION``), a line whose source or target is empty
left out. Writes ``{train,valid,test}.{en,de,docids}`` into ``--output``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from typing import Dict, List, Sequence, Tuple

from bench import harness
from commandkit.text import read_lines

SYSTEMS = ("GPT-4", "Claude-3.5", "Unbabel-Tower70B", "ONLINE-B", "ONLINE-W", "Llama3-70B", "Mistral-Large")


def write_split(folder: str, name: str, rows: Sequence[Tuple[str, str, str]]) -> Dict[str, int]:
    for suffix, column in (("en", 0), ("de", 1), ("docids", 2)):
        with open(os.path.join(folder, f"{name}.{suffix}"), "w", encoding="utf-8") as f:
            f.writelines(row[column] + "\n" for row in rows)
    return {"lines": len(rows), "documents": len({row[2] for row in rows})}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wmt", required=True, help="the txt folder of wmt24-news-systems")
    parser.add_argument("--output", required=True, help="the folder to write")
    parser.add_argument("--systems", nargs="*", default=list(SYSTEMS), help="the submissions used as targets")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--json", help="write the split sizes here")
    args = harness.parse(parser, argv)
    source = read_lines(os.path.join(args.wmt, "sources/en-de.txt"))
    ids = [line.split("\t")[1].strip() for line in read_lines(os.path.join(args.wmt, "documents/en-de.docs"))]
    versions: Dict[str, List[str]] = {
        "refA": read_lines(os.path.join(args.wmt, "references/en-de.refA.txt")),
        "refB": read_lines(os.path.join(args.wmt, "references/en-de.refB.txt")),
    }
    for name in args.systems:
        versions[name] = read_lines(os.path.join(args.wmt, "system-outputs/en-de", f"{name}.txt"))
    documents = sorted(set(ids) - {"canary"})
    random.Random(args.seed).shuffle(documents)
    test, valid = set(documents[:25]), set(documents[25:35])
    train = set(documents[35:])
    os.makedirs(args.output, exist_ok=True)
    rows: List[Tuple[str, str, str]] = []
    for version, target in versions.items():
        rows += [
            (s.strip(), t.strip(), f"{d}#{version}")
            for s, t, d in zip(source, target, ids, strict=True)
            if d in train and s.strip() and t.strip()
        ]
    sizes = {"train": write_split(args.output, "train", rows)}
    for name, split in (("valid", valid), ("test", test)):
        pairs = zip(source, versions["refA"], ids, strict=True)
        chosen = [(s.strip(), t.strip(), d) for s, t, d in pairs if d in split]
        sizes[name] = write_split(args.output, name, chosen)
    for name, size in sizes.items():
        print(f"{name}: {size['lines']} lines in {size['documents']} documents")
    if args.json:
        harness.write_json(args.json, {"sizes": sizes, "systems": args.systems, "seed": args.seed})
    return 0


if __name__ == "__main__":
    sys.exit(main())
