"""Training notes with their PHI swapped for surrogates: teach context, not strings.

The corpus's patients share doctors, hospitals and towns, so a CRF trained on
it learns those strings, and cross-validation across the same patients
rewards it: the strings recur in the held-out fold but not in a new
hospital's notes. Training on each annotated note K more times, with every
gold span replaced by a keyed surrogate of its label (another name, place,
number, date) written in one of the case styles nursing notes use, keeps the
context and varies the strings, so what the model can still learn from the
copies is the context.

The surrogates come from the project's own generators
(:func:`deid_pipeline.surrogates.surrogate`), restricted to the TRAINING half
of their name and place lists, under a key derived from the copy number and
the training seed: the copies, and so the trained model, are the same bytes
on every run. :func:`replaced_copy` is also what writes the swapped sealed
split (:mod:`deid_pipeline.evaluation.swapped`), from the other half.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections.abc import Iterator, Sequence

from deid_pipeline.model import ClinicalDocument, PhiSpan
from deid_pipeline.surrogates import SurrogateError, surrogate
from deid_pipeline.surrogates.halves import PoolContext, PoolHalf

# How a copy writes its surrogates: in the original value's case (an all-caps
# note stays all caps), or all upper, all lower, or title case, as nurses do.
CASE_STYLES = ("original", "upper", "lower", "title")

# Ages are reckoned from a fixed year so a copy does not change with the date.
_AS_OF_YEAR = 2000

# A copy's doc id is its note's followed by this and the copy number.
_COPY_MARK = "#aug"


def _in_style(value: str, original: str, style: str) -> str:
    """``value`` in ``style``; ``original`` decides the case of ``original`` style."""
    if style == "upper" or (style == "original" and original.isupper()):
        return value.upper()
    if style == "lower" or (style == "original" and original.islower()):
        return value.lower()
    if style == "title" and not (original.isupper() and len(original) <= 3):
        return value.title()
    return value


def replaced_copy(doc: ClinicalDocument, key: bytes, style: str,
                  pool: PoolHalf | None, doc_id: str,
                  language: str = "en") -> ClinicalDocument:
    """``doc`` with every gold span replaced by a surrogate, gold offsets re-mapped.

    Surrogates are keyed by ``key``, drawn from ``pool``'s half of every name
    and place list, in ``language``'s generators (a Spanish site's copies take
    Spanish names, places and day-first dates) and written in ``style`` (one
    of :data:`CASE_STYLES`). A
    span whose value the generators cannot replace (a form they refuse)
    keeps its text, still labelled; spans that overlap an earlier one are
    dropped with the text they cover already replaced.
    """
    ctx = PoolContext(key=key, person_id=doc.person_key or doc.doc_id,
                      as_of_year=_AS_OF_YEAR, pool=pool, language=language)
    pieces: list[str] = []
    gold: list[PhiSpan] = []
    cursor = length = 0
    for span in sorted(doc.gold, key=lambda s: (s.start, -s.end)):
        if span.start < cursor:
            continue
        before = doc.text[cursor:span.start]
        original = doc.text[span.start:span.end]
        try:
            value = _in_style(surrogate(original, span.label, ctx), original, style)
        except SurrogateError:
            value = original
        start = length + len(before)
        pieces += [before, value]
        gold.append(dataclasses.replace(span, start=start, end=start + len(value)))
        length = start + len(value)
        cursor = span.end
    pieces.append(doc.text[cursor:])
    return dataclasses.replace(doc, doc_id=doc_id, text="".join(pieces),
                               gold=tuple(gold))


def augmented_copy(doc: ClinicalDocument, copy: int, seed: int = 0,
                   pool: PoolHalf | None = PoolHalf.TRAINING,
                   language: str = "en") -> ClinicalDocument:
    """A training copy of ``doc``: surrogates from the TRAINING half by default.

    The evaluation half is what the swapped sealed split and the genre set
    are written from (:mod:`deid_pipeline.surrogates.halves`), so no string a
    copy teaches is one the model is scored on. ``pool`` None draws from the
    whole lists, as a model for use rather than for scoring may.
    """
    key = hashlib.sha256(f"deid-pipeline augment|{seed}|{copy}".encode()).digest()
    style = random.Random(f"{seed}|{copy}|{doc.doc_id}").choice(CASE_STYLES)
    return replaced_copy(doc, key, style, pool, f"{doc.doc_id}{_COPY_MARK}{copy}",
                         language)


def is_copy(doc: ClinicalDocument) -> bool:
    """Whether ``doc`` is a training copy made by :func:`augmented_copy`."""
    head, mark, number = doc.doc_id.rpartition(_COPY_MARK)
    return bool(head and mark and number.isdigit())


def with_augmented_copies(docs: Sequence[ClinicalDocument], copies: int,
                          seed: int = 0, pool: PoolHalf | None = PoolHalf.TRAINING,
                          language: str = "en") -> Iterator[ClinicalDocument]:
    """``docs`` followed by ``copies`` surrogate copies of each annotated one.

    Synthetic notes are not copied: their PHI is already drawn at random.
    """
    yield from docs
    for copy in range(1, copies + 1):
        for doc in docs:
            if doc.gold and doc.source != "synthetic":
                yield augmented_copy(doc, copy, seed, pool, language)
