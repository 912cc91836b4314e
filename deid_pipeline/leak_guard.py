"""The residual-leak guard: the last check before anything reaches a research output.

Every PHI value the run knows about for a document (what the detectors found,
and every identifier of its header) is searched for in the rewritten text. A
hit means some path let an original through (a detector missed an occurrence,
an operator kept a value it should not have), so the document is quarantined
instead of written. Values the policy deliberately keeps (ages under 90, bare
years, limited-dataset dates and towns) are not searched for.

Matching is case-insensitive and whitespace-tolerant; values with five or
more digits (IDs, phones, SSNs) also match with any punctuation or spacing
between the digits, because ``617-555-0142`` leaks as ``6175550142`` too.

Two deliberate blind spots, both because a surrogate can coincide with some
original by chance: values with fewer than three letters or digits
(initials) are not searched for, and a match is a leak only if three or more
of its letters or digits lie outside text a surrogate wrote (a doctor's
surrogate surname may happen to be the patient's real one; what stands there
is still a surrogate).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from deid_pipeline.model import DeidentifiedDocument, TaggedDocument

# Shorter values (initials) collide with surrogate initials and ordinary words.
_MIN_ALNUM = 3
_MIN_DIGITS_FOR_LOOSE_MATCH = 5
_DIGIT_GAP = r"[\s\-./()+]*"


class LeakDetectedError(Exception):
    """An original PHI value is still in the output text.

    The message names labels and counts only: it is logged and counted, so it
    must not quote the value.
    """


@dataclass(frozen=True, slots=True)
class Suspect:
    """A value that must not appear in the output, and what kind of PHI it is."""

    value: str
    label: str


@functools.lru_cache(maxsize=65_536)
def value_pattern(value: str) -> re.Pattern | None:
    """How a PHI value is found in text (None for values too short to search).

    Shared with :func:`deid_pipeline.merge.reconcile`, which marks every
    occurrence of a found value *before* rewriting: what the tagger marks and
    what the guard searches for are the same matches, so the guard only fires
    when a later step (an operator, a writer) lets an original through.
    """
    value = " ".join(value.split())
    if len(re.sub(r"[\W_]", "", value)) < _MIN_ALNUM:
        return None
    digits = re.sub(r"\D", "", value)
    if (
        len(digits) >= _MIN_DIGITS_FOR_LOOSE_MATCH
        and len(digits) >= len(re.sub(r"[\W_]", "", value)) - 1
    ):
        # Mostly digits: an ID or phone; any separators between the digits.
        body = _DIGIT_GAP.join(re.escape(d) for d in digits)
        return re.compile(rf"(?<!\d){body}(?!\d)")
    body = r"\s+".join(re.escape(part) for part in value.split())
    left = r"(?<!\w)" if value[0].isalnum() else ""
    right = r"(?!\w)" if value[-1].isalnum() else ""
    return re.compile(left + body + right, re.IGNORECASE)


def written_regions(result: DeidentifiedDocument) -> list[tuple[int, int]]:
    """Where in the output text each real replacement was written (start, end).

    A "replacement" identical to its original is not a surrogate and gives no
    cover to a match inside it.
    """
    regions = []
    shift = 0
    for r in sorted(result.replacements, key=lambda r: r.span.start):
        start = r.span.start + shift
        if r.replacement != r.original:
            regions.append((start, start + len(r.replacement)))
        shift += len(r.replacement) - (r.span.end - r.span.start)
    return regions


def find_leaks(
    text: str, suspects: Iterable[Suspect], regions: list[tuple[int, int]] = ()
) -> Counter:
    """Labels (with counts) of suspects that occur in ``text`` outside ``regions``."""
    found: Counter = Counter()
    seen: set[str] = set()
    for suspect in suspects:
        key = suspect.value.lower()
        if key in seen:
            continue
        seen.add(key)
        pattern = value_pattern(suspect.value)
        if pattern is None:
            continue
        for m in pattern.finditer(text):
            if _survives(text, m.start(), m.end(), regions):
                found[suspect.label] += 1
                break
    return found


def _survives(text: str, start: int, end: int, regions) -> bool:
    """Whether enough of a match lies outside surrogate text to be the original.

    A surrogate surname followed by an untouched ``M.D.`` can spell a
    ``Hernandez M.`` found elsewhere; what survived of the original there is
    one letter, below the length the guard searches for at all.
    """
    outside = [True] * (end - start)
    for s, e in regions:
        for i in range(max(s, start), min(e, end)):
            outside[i - start] = False
    kept = sum(1 for i, out in enumerate(outside) if out and text[start + i].isalnum())
    return kept >= _MIN_ALNUM


_AGE = re.compile(r"\d+")
_BARE_YEAR = re.compile(r"'?(?:\d{2}|1[89]\d{2}|20\d{2})")
_LIMITED_DATASET_KEEPS = frozenset(
    {"DATE", "AGE", "CITY", "STATE", "ZIP", "COUNTRY", "LOCATION"}
)


def policy_keeps(label: str, value: str, policy: str) -> bool:
    """Whether the policy lets this value stand (so finding it is not a leak).

    Decided from the value and the policy alone, never from what an operator
    returned: an operator that wrongly echoes its input must still be caught.
    """
    value = value.strip()
    if label == "AGE":
        numbers = _AGE.findall(value)
        return policy == "limited-dataset" or bool(numbers) and int(numbers[0]) <= 89
    if policy == "limited-dataset":
        return label in _LIMITED_DATASET_KEEPS
    return label == "DATE" and _BARE_YEAR.fullmatch(value) is not None


def suspects_of(
    tagged: TaggedDocument, result: DeidentifiedDocument, policy: str
) -> list[Suspect]:
    """What must not survive: every span and header value the policy removes."""
    values = [(r.span.label, r.original) for r in result.replacements]
    dictionary = tagged.document.dictionary
    if dictionary is not None:
        values.extend((e.label, e.value) for e in dictionary.entries)
    return [
        Suspect(value, label)
        for label, value in values
        if not policy_keeps(label, value, policy)
    ]


def check(
    tagged: TaggedDocument, result: DeidentifiedDocument, policy: str
) -> DeidentifiedDocument:
    """Return ``result`` if no known PHI value is left in it; else raise."""
    leaks = find_leaks(
        result.text, suspects_of(tagged, result, policy), written_regions(result)
    )
    if leaks:
        detail = ", ".join(f"{label} x{n}" for label, n in sorted(leaks.items()))
        raise LeakDetectedError(f"original PHI values remain in the output: {detail}")
    return result
