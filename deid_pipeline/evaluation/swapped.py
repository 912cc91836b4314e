"""The swapped sealed split: sealed notes whose PHI no training data has spelled.

The sealed patients' notes share the corpus's surrogate names and places
(one hospital's doctors, towns and wards recur across patients), so a model
trained on the development 70% has met many of the sealed strings: the
sealed split said recall 0.983 where notes of unseen patients gave 0.951.
Here every gold span of a sealed note is replaced by a surrogate of its label
from the EVALUATION half of every name and place list
(:mod:`deid_pipeline.surrogates.halves`), which training copies and synthetic
training notes never draw from, in one of the case styles nursing notes use,
gold offsets re-mapped. Several copies under different seeds show how much
the figure depends on the draw; the acceptance figure is their worst.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass

from deid_pipeline.evaluation.metrics import PRF, Evaluation
from deid_pipeline.model import ClinicalDocument
from deid_pipeline.surrogates.halves import PoolHalf
from deid_pipeline.training.augment import CASE_STYLES, replaced_copy

# Seeds of the copies scored by default; more copies, more seeds from 1 up.
DEFAULT_COPIES = 3


def swapped_copy(doc: ClinicalDocument, seed: int) -> ClinicalDocument:
    """``doc`` with its gold PHI replaced from the evaluation half under ``seed``."""
    key = hashlib.sha256(f"deid-pipeline swapped sealed|{seed}".encode()).digest()
    style = random.Random(f"swapped|{seed}|{doc.doc_id}").choice(CASE_STYLES)
    return replaced_copy(doc, key, style, PoolHalf.EVALUATION,
                         f"{doc.doc_id}#swap{seed}")


def swapped_split(sealed: Sequence[ClinicalDocument], seed: int
                  ) -> list[ClinicalDocument]:
    """Every sealed note swapped under ``seed`` (notes without PHI unchanged)."""
    return [swapped_copy(d, seed) for d in sealed]


def copy_seeds(copies: int) -> list[int]:
    """The seeds of ``copies`` swapped copies (1..copies); at least one."""
    if copies < 1:
        raise ValueError("--swap-copies must be at least 1")
    return list(range(1, copies + 1))


@dataclass(frozen=True)
class CopyScore:
    """Binary-token scores of one swapped copy (``seed`` None: the mean row)."""

    name: str
    all: PRF
    hipaa: PRF


def summarise(scored: Sequence[tuple[int, Evaluation]]) -> list[CopyScore]:
    """One row per copy, then their mean and the worst (lowest HIPAA recall).

    The mean row's counts are the copies' totals divided by their number and
    its P/R/F1 the means of the copies' (what a reader compares with a single
    split's row).
    """
    rows = [CopyScore(f"copy {seed}", ev.all.binary_token, ev.hipaa.binary_token)
            for seed, ev in scored]
    worst = min(rows, key=lambda r: (r.hipaa.recall, r.hipaa.f1))
    return [*rows, CopyScore("mean", _mean([r.all for r in rows]),
                             _mean([r.hipaa for r in rows])),
            CopyScore(f"worst ({worst.name})", worst.all, worst.hipaa)]


@dataclass(frozen=True)
class _MeanPRF:
    tp: float
    fp: float
    fn: float
    precision: float
    recall: float
    f1: float


def _mean(prfs: Sequence[PRF]) -> _MeanPRF:
    n = len(prfs)
    return _MeanPRF(*(sum(getattr(p, f) for p in prfs) / n
                      for f in ("tp", "fp", "fn", "precision", "recall", "f1")))


def format_swapped(rows: Sequence[CopyScore], title: str) -> str:
    """The copies' binary-token table (counts and scores only, no text)."""
    header = (f"  {'':<22} {'TP':>7} {'FP':>7} {'FN':>7}   {'precision':>9} "
              f"{'recall':>7} {'F1':>7}")
    lines = [title, "", "Binary token (tokens = [A-Za-z0-9] runs, type ignored)",
             header]
    for kind in ("all", "hipaa"):
        lines.append("  all PHI" if kind == "all" else "  HIPAA (no years)")
        for row in rows:
            p = getattr(row, kind)
            tp, fp, fn = (_count(n) for n in (p.tp, p.fp, p.fn))
            lines.append(f"    {row.name:<20} {tp:>7} {fp:>7} {fn:>7}   "
                         f"{p.precision:>9.4f} {p.recall:>7.4f} {p.f1:>7.4f}")
    return "\n".join(lines)


def _count(n: float) -> str:
    """A count as an integer, a mean count to one decimal."""
    return str(n) if isinstance(n, int) else f"{n:.1f}"


def payload(rows: Sequence[CopyScore]) -> list[dict]:
    """The rows as JSON-ready dicts."""
    return [{"copy": r.name,
             **{k: {f: getattr(getattr(r, k), f)
                    for f in ("tp", "fp", "fn", "precision", "recall", "f1")}
                for k in ("all", "hipaa")}}
            for r in rows]
