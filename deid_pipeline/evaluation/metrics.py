"""DESIGN.md's metrics, one definition used by tests, evaluation and benchmarks.

- binary token: tokens are maximal ``[A-Za-z0-9]`` runs; a token is PHI if it
  overlaps a span; type is ignored. Recall here is the share of PHI tokens that
  would not leak.
- token by type: a confusion matrix of gold vs predicted label per token.
- phrase: strict (same offsets) and relaxed (overlap), both requiring the same
  label category.
Each comes in a HIPAA variant that ignores bare years (``1992``, ``'92``),
which Safe Harbor lets through.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from deid_pipeline.labels import category
from deid_pipeline.model import PhiSpan
from deid_pipeline.tokenizer import metric_tokens

OUTSIDE = "O"
_BARE_YEAR = re.compile(r"'?(?:\d{2}|1[89]\d{2}|20\d{2})")


@dataclass
class PRF:
    """True/false positive and false negative counts with the derived scores."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def add(self, other: PRF) -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn

    def as_dict(self) -> dict[str, float]:
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
        }


@dataclass
class OverlapPRF(PRF):
    """Relaxed phrase scores: a prediction is right if it overlaps a gold phrase.

    Matches are counted from each side, so one prediction covering two gold
    words counts once for precision and twice for recall.
    """

    pred_hit: int = 0
    gold_hit: int = 0

    @property
    def precision(self) -> float:
        n = self.pred_hit + self.fp
        return self.pred_hit / n if n else 1.0

    @property
    def recall(self) -> float:
        n = self.gold_hit + self.fn
        return self.gold_hit / n if n else 1.0

    def as_dict(self) -> dict[str, float]:
        return {
            "pred_hit": self.pred_hit,
            "fp": self.fp,
            "gold_hit": self.gold_hit,
            "fn": self.fn,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
        }


@dataclass
class Scores:
    """All metrics for one variant (all PHI, or HIPAA without bare years)."""

    binary_token: PRF = field(default_factory=PRF)
    strict_phrase: PRF = field(default_factory=PRF)
    relaxed_phrase: OverlapPRF = field(default_factory=OverlapPRF)
    confusion: Counter = field(default_factory=Counter)

    def label_recall(self) -> dict[str, float]:
        """Per gold label: share of its tokens predicted as PHI of any label."""
        totals: Counter = Counter()
        found: Counter = Counter()
        for (gold, pred), n in self.confusion.items():
            if gold == OUTSIDE:
                continue
            totals[gold] += n
            if pred != OUTSIDE:
                found[gold] += n
        return {label: found[label] / totals[label] for label in sorted(totals)}

    def as_dict(self) -> dict:
        return {
            "binary_token": self.binary_token.as_dict(),
            "strict_phrase": self.strict_phrase.as_dict(),
            "relaxed_phrase": self.relaxed_phrase.as_dict(),
            "label_token_recall": {
                k: round(v, 4) for k, v in self.label_recall().items()
            },
            "confusion": {
                f"{g}->{p}": n for (g, p), n in sorted(self.confusion.items())
            },
        }


@dataclass
class Evaluation:
    """Scores over a set of documents, in both variants."""

    all: Scores = field(default_factory=Scores)
    hipaa: Scores = field(default_factory=Scores)
    documents: int = 0

    def as_dict(self) -> dict:
        return {
            "documents": self.documents,
            "all": self.all.as_dict(),
            "hipaa": self.hipaa.as_dict(),
        }


def is_bare_year(text: str, span: PhiSpan) -> bool:
    """A DATE span that is only a year (Safe Harbor does not require removing it)."""
    return (
        span.label == "DATE"
        and _BARE_YEAR.fullmatch(text[span.start : span.end]) is not None
    )


def _label_at(spans: Sequence[PhiSpan], start: int, end: int) -> str:
    for s in spans:
        if s.start < end and start < s.end:
            return s.label
    return OUTSIDE


def _score_variant(
    text: str,
    gold: Sequence[PhiSpan],
    pred: Sequence[PhiSpan],
    ignored: Sequence[PhiSpan],
    scores: Scores,
) -> None:
    for start, end in metric_tokens(text):
        if any(s.start < end and start < s.end for s in ignored):
            continue
        g = _label_at(gold, start, end)
        p = _label_at(pred, start, end)
        scores.confusion[(g, p)] += 1
        if g != OUTSIDE and p != OUTSIDE:
            scores.binary_token.tp += 1
        elif g != OUTSIDE:
            scores.binary_token.fn += 1
        elif p != OUTSIDE:
            scores.binary_token.fp += 1

    def same_kind(a: PhiSpan, b: PhiSpan) -> bool:
        return category(a.label) == category(b.label)

    exact = {(s.start, s.end, category(s.label)) for s in gold}
    strict_tp = sum((s.start, s.end, category(s.label)) in exact for s in pred)
    scores.strict_phrase.add(
        PRF(strict_tp, len(pred) - strict_tp, len(gold) - strict_tp)
    )
    pred_hit = sum(any(p.overlaps(g) and same_kind(p, g) for g in gold) for p in pred)
    gold_hit = sum(any(p.overlaps(g) and same_kind(p, g) for p in pred) for g in gold)
    relaxed = scores.relaxed_phrase
    relaxed.pred_hit += pred_hit
    relaxed.fp += len(pred) - pred_hit
    relaxed.gold_hit += gold_hit
    relaxed.fn += len(gold) - gold_hit


def evaluate(
    items: Iterable[tuple[str, Sequence[PhiSpan], Sequence[PhiSpan]]],
) -> Evaluation:
    """Score ``(text, gold_spans, predicted_spans)`` triples."""
    result = Evaluation()
    for text, gold, pred in items:
        result.documents += 1
        gold = sorted(gold)
        pred = sorted(pred)
        _score_variant(text, gold, pred, (), result.all)
        years = [s for s in (*gold, *pred) if is_bare_year(text, s)]
        _score_variant(
            text,
            [s for s in gold if s not in years],
            [s for s in pred if s not in years],
            years,
            result.hipaa,
        )
    return result
