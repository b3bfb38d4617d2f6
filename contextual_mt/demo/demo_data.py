"""``contextual-mt demo-data``'s work: the demo corpus (``corpus``), its planted contrastive set
(``contrastive_set``) and, with ``--ted``, the corpus in the TED talks release's layout
(``ted_layout``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, Optional

from contextual_mt.demo.contrastive_set import write_planted_contrastive
from contextual_mt.demo.corpus import PLANTED_SET, DemoDataOptions, generate_demo_data


@dataclass
class DemoData:
    """What ``write_demo_data`` wrote: the per-split counts of the corpus (``stats``), the planted
    contrastive set (``contrastive``, Voita's format) and its ``groups``, and with ``ted`` the
    tarball in the TED layout and the missing-translation rows inserted per split (``nulls``)."""

    stats: Dict[str, Dict[str, int]]
    contrastive: str
    groups: int
    ted: Optional[str] = None
    nulls: Optional[Dict[str, int]] = None


def write_demo_data(options: DemoDataOptions) -> DemoData:
    """``contextual-mt demo-data``: the corpus, its planted contrastive set, the TED layout."""
    stats = generate_demo_data(options.output, options.train_docs, options.valid_docs, options.test_docs, options.seed)
    contrastive = os.path.join(options.output, PLANTED_SET)
    made = DemoData(stats, contrastive, write_planted_contrastive(options.output, contrastive))
    if options.ted:
        from contextual_mt.demo.ted_layout import write_ted_layout

        made.ted = os.path.join(options.output, "ted_talks.tar.gz")
        made.nulls = write_ted_layout(options.output, made.ted, seed=options.seed)
    return made
