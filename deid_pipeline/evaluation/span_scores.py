"""The MEDDOCAN task's span scores (also the i2b2 2014 scorer's): how sites compare.

Computed as the official scorer (``../shared/corpora/meddocan/scorer``,
``classes.py``) computes them, micro-averaged over documents:

- subtask 1: a span counts when its offsets AND label equal a gold span's;
- subtask 2 strict: offsets equal, label ignored;
- subtask 2 merged: spans are first merged with their neighbour when only
  non-alphanumeric characters stand between them (``Ernesto`` + ``Rivera``
  -> ``Ernesto Rivera``); a span counts when it is inside a span matched
  strictly or after merging, on both sides.

These are per-span scores of the site's own labels, unlike the token and
phrase scores of :mod:`deid_pipeline.evaluation.metrics` (categories).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from deid_pipeline.model import ClinicalDocument, PhiSpan

__all__ = ["SpanScore", "format_span_scores", "span_scores"]

Pair = tuple[int, int]


@dataclass(frozen=True)
class SpanScore:
    """Micro-averaged counts and P/R/F1 of one metric."""

    name: str
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def _merged(text: str, pairs: Iterable[Pair]) -> set[Pair]:
    """The scorer's ``add_spans``: join neighbours separated by no letter or digit."""
    out: list[Pair] = []
    for start, end in sorted(pairs):
        if out and not any(c.isalnum() for c in text[out[-1][1]:start]):
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return set(out)


def _inside(pair: Pair, container: Iterable[Pair]) -> bool:
    return any(a <= pair[0] and pair[1] <= b for a, b in container)


def span_scores(docs: Sequence[ClinicalDocument],
                predicted: Mapping[str, Sequence[PhiSpan]]) -> list[SpanScore]:
    """Subtask 1, subtask 2 strict and merged over ``docs``' gold spans."""
    counts = {"subtask1": [0, 0, 0], "subtask2 strict": [0, 0, 0],
              "subtask2 merged": [0, 0, 0]}

    def add(name: str, tp: int, fp: int, fn: int) -> None:
        c = counts[name]
        c[0] += tp
        c[1] += fp
        c[2] += fn

    for doc in docs:
        pred = predicted.get(doc.doc_id, ())
        gold_typed = {(s.label, s.start, s.end) for s in doc.gold}
        sys_typed = {(s.label, s.start, s.end) for s in pred}
        add("subtask1", len(gold_typed & sys_typed), len(sys_typed - gold_typed),
            len(gold_typed - sys_typed))
        gold = {(s.start, s.end) for s in doc.gold}
        system = {(s.start, s.end) for s in pred}
        add("subtask2 strict", len(gold & system), len(system - gold),
            len(gold - system))
        matched = (gold & system) | (_merged(doc.text, gold)
                                     & _merged(doc.text, system))
        fp = {p for p in system - gold if not _inside(p, matched)}
        fn = {p for p in gold - system if not _inside(p, matched)}
        add("subtask2 merged", len(matched), len(fp), len(fn))
    return [SpanScore(name, *c) for name, c in counts.items()]


def format_span_scores(scores: Sequence[SpanScore], title: str) -> str:
    """A small table: one line per metric (no PHI, counts and ratios only)."""
    lines = [title, f"{'metric':<18}{'P':>8}{'R':>8}{'F1':>8}{'TP':>8}{'FP':>7}"
             f"{'FN':>7}"]
    for s in scores:
        lines.append(f"{s.name:<18}{s.precision:>8.4f}{s.recall:>8.4f}{s.f1:>8.4f}"
                     f"{s.tp:>8}{s.fp:>7}{s.fn:>7}")
    return "\n".join(lines)
