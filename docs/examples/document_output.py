"""A document-level output for the documentation's examples, standing in for an LLM that
translates whole documents: the demo's line-aligned translations joined per document after
merging 10% of the lines with the next, splitting 5% at a comma, dropping 3% and adding 2% from
other documents (``docalign.perturb``, as bench/alignment.py does), written as JSONL records
{"doc", "text"}.

    python docs/examples/document_output.py LINES DOCIDS OUTPUT.jsonl
"""

from __future__ import annotations

import json
import sys

from commandkit.outputs import atomic_write_lines
from commandkit.text import read_lines
from docalign.perturb import perturb


def main(lines: str, docids: str, output: str) -> None:
    docs = perturb(read_lines(lines), read_lines(docids), seed=1)
    atomic_write_lines(output, (json.dumps({"doc": d.doc, "text": d.text}, ensure_ascii=False) for d in docs))
    edits = {k: sum(d.edits[k] for d in docs) for k in ("merge", "split", "drop", "add")}
    print(f"wrote {len(docs)} documents to {output} ({', '.join(f'{v} {k}' for k, v in edits.items())})")


if __name__ == "__main__":
    main(*sys.argv[1:])
