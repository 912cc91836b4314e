"""How often each Spanish rule fires right and wrong against a BRAT gold: counts only.

``python -m deid_pipeline.evaluation.rule_fires --corpus DIR --label-map NAME``
runs every recognizer of :mod:`deid_pipeline.tagger.rules.es` (with the site
labels the map gives it) over every ``.txt`` of DIR and sorts its spans:

- right: a gold span with the same offsets and label;
- boundary: overlaps a gold span of its label, other offsets;
- other label: overlaps only gold spans of other labels;
- no gold: overlaps no gold span.

Only counts are printed, never a value or a document id.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable, Sequence

from deid_pipeline.evaluation.brat import load_brat_corpus
from deid_pipeline.label_maps import load_label_map
from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tagger.rules.base import PatternRecognizer
from deid_pipeline.tagger.rules.es import ALL_KINDS, spanish_recognizers

__all__ = ["OUTCOMES", "fires", "main"]

OUTCOMES = ("right", "boundary", "other label", "no gold")


def fires(docs: Iterable[ClinicalDocument],
          recognizers: Sequence[PatternRecognizer]) -> dict[str, Counter]:
    """Recognizer name -> Counter of :data:`OUTCOMES` over ``docs``."""
    out = {r.name: Counter({o: 0 for o in OUTCOMES}) for r in recognizers}
    for doc in docs:
        gold = doc.gold
        exact = {(g.start, g.end, g.label) for g in gold}
        for r in recognizers:
            for span in r.analyze(doc.text):
                if (span.start, span.end, span.label) in exact:
                    outcome = "right"
                else:
                    touched = {g.label for g in gold
                               if g.start < span.end and span.start < g.end}
                    outcome = ("boundary" if span.label in touched
                               else "other label" if touched else "no gold")
                out[r.name][outcome] += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Print each recognizer's fires by outcome; 0."""
    parser = argparse.ArgumentParser(
        prog="python -m deid_pipeline.evaluation.rule_fires",
        description="Count the Spanish rules' fires right and wrong on a BRAT gold.")
    parser.add_argument("--corpus", required=True, action="append", metavar="DIR")
    parser.add_argument("--label-map", required=True, metavar="NAME|FILE")
    args = parser.parse_args(argv)
    label_map = load_label_map(args.label_map)
    recognizers = spanish_recognizers(label_map.categories,
                                      label_map.surrogate_labels, ALL_KINDS)
    for corpus in args.corpus:
        docs = load_brat_corpus(corpus)
        print(f"{corpus}: {len(docs)} documents")
        for name, counts in fires(docs, recognizers).items():
            total = sum(counts.values())
            share = f"{100 * counts['right'] / total:.1f}% right" if total else "-"
            print(f"  {name}: {total} fires, "
                  + ", ".join(f"{o} {counts[o]}" for o in OUTCOMES) + f" ({share})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
