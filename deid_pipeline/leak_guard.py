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

Three deliberate blind spots, all because a surrogate can coincide with some
original by chance: values with fewer than three letters or digits
(initials) are not searched for; a match is a leak only if three or more
of its letters or digits lie outside text a surrogate wrote (a doctor's
surrogate surname may happen to be the patient's real one; what stands there
is still a surrogate); and a mostly-digit value (matched digit by digit
across separators) is a leak only where none of its digits are a
surrogate's (a nursing shift ``11-7`` before a surrogate date ``12/14``
spells the date ``11/7/12`` that was replaced).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from deid_pipeline.labels import builtin_label
from deid_pipeline.model import DeidentifiedDocument, PatientDictionary, TaggedDocument
from deid_pipeline.policy import Policy
from deid_pipeline.value_search import (
    _MIN_ALNUM,
    HeaderPlan,
    HeaderValue,
    SearchText,
    _Needle,
    _needle,
    offsets,
)


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


def written_regions(result: DeidentifiedDocument) -> Iterator[tuple[int, int]]:
    """Where in the output text each real replacement was written (start, end).

    In order of ``start``. A "replacement" identical to its original is not a
    surrogate and gives no cover to a match inside it.
    """
    shift = 0
    for r in sorted(result.replacements, key=lambda r: r.span.start):
        start = r.span.start + shift
        if r.replacement != r.original:
            yield start, start + len(r.replacement)
        shift += len(r.replacement) - (r.span.end - r.span.start)


def find_leaks(
    text: str, suspects: Iterable[Suspect], regions: Iterable[tuple[int, int]] = ()
) -> Counter:
    """Labels (with counts) of suspects that occur in ``text`` outside ``regions``."""
    return _find_leaks(text, _planned((s.value, s.label) for s in suspects), regions)


def _planned(pairs: Iterable[tuple[str, str]]) -> Iterator[HeaderValue]:
    """(value, label) pairs with their needles, as :func:`header_values` gives them."""
    return ((value, label, _needle(value)) for value, label in pairs)


def _find_leaks(
    text: str, suspects: Iterable[HeaderValue], regions: Iterable[tuple[int, int]],
    header: HeaderPlan | None = None,
) -> Counter:
    """:func:`find_leaks` over planned values, then ``header``'s.

    A value is searched once, under the label of its first case-insensitive
    spelling. Of the header's values only those :meth:`SearchText.present`
    keeps are looked at: the others cannot match under any spelling.
    """
    search = SearchText(text)
    if header is not None:
        suspects = itertools.chain(suspects, search.present(header))
    todo: list[tuple[str, _Needle]] = []
    seen: set[str] = set()
    for value, label, needle in suspects:
        key = value.lower()
        if key not in seen:
            seen.add(key)
            if needle is not None:
                todo.append((label, needle))
    written = _Written(regions, len(text))
    found: Counter = Counter()
    for (label, needle), matches in zip(
            todo, search.find_all([n for _, n in todo]), strict=True):
        for start, end in matches:
            if _survives(text, start, end, written, whole=bool(needle.digits)):
                found[label] += 1
                break
    return found


class _Written:
    """Surrogate regions, sorted, overlapping ones joined: what :func:`_survives` reads.

    Two arrays of machine integers: a document of 40,000 notes has a million
    regions, and as a list of tuples they took 200 MB beside everything else
    the guard holds.
    """

    __slots__ = ("starts", "ends")

    def __init__(self, regions: Iterable[tuple[int, int]], length: int = 0) -> None:
        """``length``: of the text the regions are in (0: not known, 8 bytes each)."""
        if not isinstance(regions, Iterator):
            regions = iter(sorted(regions))  # a caller's list; written_regions: sorted
        self.starts, self.ends = offsets(length or 2**32), offsets(length or 2**32)
        for s, e in regions:
            if self.starts and s < self.ends[-1]:
                self.ends[-1] = max(e, self.ends[-1])
            else:
                self.starts.append(s)
                self.ends.append(e)

    def near(self, start: int, end: int) -> list[tuple[int, int]]:
        """The regions that overlap ``[start, end)``."""
        # Only those from the last one starting before the match can overlap it.
        starts, ends = self.starts, self.ends
        found = []
        for k in range(max(bisect.bisect_left(starts, start) - 1, 0), len(starts)):
            if starts[k] >= end:
                break
            if ends[k] > start:
                found.append((starts[k], ends[k]))
        return found


def _survives(text: str, start: int, end: int, written: _Written,
              whole: bool = False) -> bool:
    """Whether enough of a match lies outside surrogate text to be the original.

    A surrogate surname followed by an untouched ``M.D.`` can spell a
    ``Hernandez M.`` found elsewhere; what survived of the original there is
    one letter, below the length the guard searches for at all. With
    ``whole`` (a digit value), no part of the match may be surrogate text:
    digits are matched across any separators, so untouched digits before a
    surrogate's can spell a replaced value by chance.
    """
    near = written.near(start, end)
    if whole:
        return not near
    outside = [True] * (end - start)
    for s, e in near:
        for i in range(max(s, start), min(e, end)):
            outside[i - start] = False
    kept = sum(1 for i, out in enumerate(outside) if out and text[start + i].isalnum())
    return kept >= _MIN_ALNUM


_AGE = re.compile(r"\d+")
_BARE_YEAR = re.compile(r"'?(?:\d{2}|1[89]\d{2}|20\d{2})")
_LIMITED_DATASET = Policy.LIMITED_DATASET
_LIMITED_DATASET_KEEPS = frozenset(
    {"DATE", "AGE", "CITY", "STATE", "ZIP", "COUNTRY", "LOCATION"}
)


_WORD = re.compile(r"[^\W\d_]+")
# Number words of 90 and over (English and Spanish): what an age in words
# must not hold to stand as written.
_NINETY_AND_OVER = frozenset({"ninety", "hundred", "noventa", "cien", "ciento"})


def _age_in_words_under_90(value: str) -> bool:
    """``trece años``, ``fifty-two years``: an age in words, under 90, stands.

    Every word must be one the age generators keep (English or Spanish, so
    nothing else of the span stands with it), one of them a number word, none
    of 90 or over; the generators then return the value as written.
    """
    from deid_pipeline.surrogates.ages import _AGE_WORDS, _ANY_WORD_NUMBER
    from deid_pipeline.surrogates.es.ages import _AGE_WORDS as _SPANISH_WORDS
    from deid_pipeline.surrogates.es.ages import _ANY_WORD_NUMBER as _SPANISH_NUMBER

    words = [w.casefold() for w in _WORD.findall(value)]
    return (bool(words) and all(w in _AGE_WORDS or w in _SPANISH_WORDS for w in words)
            and not any(w in _NINETY_AND_OVER for w in words)
            and bool(_ANY_WORD_NUMBER.search(value) or _SPANISH_NUMBER.search(value)))


def policy_keeps(label: str, value: str, policy: str) -> bool:
    """Whether the policy lets this value stand (so finding it is not a leak).

    Decided from the value and the policy alone, never from what an operator
    returned: an operator that wrongly echoes its input must still be caught.
    Any policy but the limited data set decides as safe harbor does.
    """
    value = value.strip()
    label = builtin_label(label, value)  # a site label: its category's
    if label == "AGE":
        numbers = _AGE.findall(value)
        if not numbers and policy != _LIMITED_DATASET:
            return _age_in_words_under_90(value)
        return policy == _LIMITED_DATASET or bool(numbers) and int(numbers[0]) <= 89
    if policy == _LIMITED_DATASET:
        return label in _LIMITED_DATASET_KEEPS
    return label == "DATE" and _BARE_YEAR.fullmatch(value) is not None


_Planned = dict[bool, HeaderPlan]
_last_header: tuple[PatientDictionary, _Planned] | None = None


def header_values(dictionary: PatientDictionary, policy: str) -> HeaderPlan:
    """The header values ``policy`` removes, each once, in entry order.

    A value keeps the label of its first entry the policy removes. A header
    expands into a few hundred values, and in a report where (as nearly
    always) few of them occur, deciding each one's policy and needle cost
    more than searching for it. So that is done once per dictionary: the
    last one is remembered (by identity: it is immutable), which covers the
    tagger's reconcile and the guard for every report of a message.
    """
    global _last_header
    limited = policy == _LIMITED_DATASET  # all policy_keeps tells apart
    last = _last_header
    by_kind = last[1] if last is not None and last[0] is dictionary else {}
    planned = by_kind.get(limited)
    if planned is None:
        labels: dict[str, str] = {}
        for value, label, _field in dictionary.rows():
            if value in labels:
                continue
            # Outside the limited data set only ages and dates can be kept.
            if (limited or label == "AGE" or label == "DATE") and policy_keeps(
                    label, value, policy):
                continue
            labels[value] = label
        planned = by_kind[limited] = HeaderPlan(_planned(labels.items()))
        _last_header = (dictionary, by_kind)
    return planned


def suspects_of(
    tagged: TaggedDocument, result: DeidentifiedDocument, policy: str
) -> list[Suspect]:
    """What must not survive: every span and header value the policy removes."""
    values = list(_replaced(result, policy))
    dictionary = tagged.document.dictionary
    if dictionary is not None:
        values.extend((value, label) for value, label, _field in dictionary.rows()
                      if not policy_keeps(label, value, policy))
    return [Suspect(value, label) for value, label in values]


def _replaced(result: DeidentifiedDocument, policy: str) -> Iterator[tuple[str, str]]:
    """(original, label) of every replacement the policy removes, in order."""
    return ((r.original, r.span.label) for r in result.replacements
            if not policy_keeps(r.span.label, r.original, policy))


def check(
    tagged: TaggedDocument, result: DeidentifiedDocument, policy: str
) -> DeidentifiedDocument:
    """Return ``result`` if no known PHI value is left in it; else raise.

    Searches what :func:`suspects_of` lists, in its order (the header values
    planned once per dictionary, see :func:`header_values`).
    """
    dictionary = tagged.document.dictionary
    header = None if dictionary is None else header_values(dictionary, policy)
    leaks = _find_leaks(result.text, _planned(_replaced(result, policy)),
                        written_regions(result), header)
    if leaks:
        detail = ", ".join(f"{label} x{n}" for label, n in sorted(leaks.items()))
        raise LeakDetectedError(f"original PHI values remain in the output: {detail}")
    return result


def removed_values(results: Iterable[DeidentifiedDocument], policy: str,
                   ignore: Callable[[str, str], bool] | None = None
                   ) -> list[HeaderValue]:
    """Every value the rewrite of ``results`` removed, planned once for many searches.

    Values for which ``ignore(value, label)`` is true are left out.
    """
    return list(_planned((value, label) for r in results
                         for value, label in _replaced(r, policy)
                         if ignore is None or not ignore(value, label)))


def find_anywhere(text: str, dictionary: PatientDictionary | None,
                  removed: list[HeaderValue], policy: str) -> Counter:
    """Labels (with counts) of known PHI values anywhere in ``text``.

    The values :func:`check` searches for (the header's, and the removed
    ones :func:`removed_values` planned), with its matching, but with no
    text exempt: used on a whole written HL7 message, where a value inside a
    field the rewrite wrote is as much a leak as one in a field it kept (a
    surrogate that spells an original of the same message is one).
    """
    header = None if dictionary is None else header_values(dictionary, policy)
    return _find_leaks(text, removed, [], header)
