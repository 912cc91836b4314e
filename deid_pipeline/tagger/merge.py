"""The one place where spans from all detectors are reconciled.

Recall comes first: overlapping spans are unioned into one wider span, so a
disagreement between detectors can widen a redaction but never drop one; and
a value found once is marked wherever else it occurs in the document.
"""

from __future__ import annotations

import heapq
import re
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import replace

import numpy as np

from deid_pipeline.labels import category, is_site_label
from deid_pipeline.leak_guard import header_values, policy_keeps
from deid_pipeline.model import PatientDictionary, PhiSpan
from deid_pipeline.policy import Policy
from deid_pipeline.tagger.span_tidy import dropped_by_tidying
from deid_pipeline.value_search import SearchText, offsets

PROPAGATED = "propagated"

# When overlapping spans disagree on the label, the label of the more specific
# detector wins: the header dictionary knows what a value is, rules know their
# formats, the CRF guesses from context.
_SOURCE_PRIORITY = ("dictionary", "rules", "crf")
# Rules that find a name by its place in a sentence, not by a word that says
# whose it is (``Heather reports``): their label is a guess, and any other
# detector's wins.
_LABEL_GUESSING_RULES = frozenset({"rules:subjects"})


def _priority(span: PhiSpan) -> tuple[int, int, str]:
    kind = span.source.split(":", 1)[0]
    rank = (
        _SOURCE_PRIORITY.index(kind)
        if kind in _SOURCE_PRIORITY and span.source not in _LABEL_GUESSING_RULES
        else len(_SOURCE_PRIORITY)
    )
    return (rank, -(span.end - span.start), span.label)


# Labels whose values are words: a span of digits alone cannot be one of them.
_WORD_LABELS = frozenset({
    "PATIENT", "DOCTOR", "RELATIVE", "PROFESSION", "HOSPITAL", "ORGANIZATION",
    "CITY", "STATE", "COUNTRY", "DEPARTMENT", "LOCATION"})
_YEAR = re.compile(r"(?:1[89]|20)\d\d")


def years_as_dates(text: str, spans: Iterable[PhiSpan]) -> list[PhiSpan]:
    """``spans`` with a bare year tagged as a word label (``1998`` HOSPITAL) a DATE.

    The CRF sometimes labels a year after a place name as part of it. As a
    HOSPITAL it was replaced, and the leak guard then found the same year
    standing elsewhere as a date the policy keeps: the document, and with a
    long one all of its notes, was quarantined. Any other digit run keeps its
    label and its redaction (recall first).
    """
    out = []
    for span in spans:
        if (span.label in _WORD_LABELS and span.end - span.start == 4
                and _YEAR.fullmatch(text, span.start, span.end)):
            span = replace(span, label="DATE")
        out.append(span)
    return out


def _merged(group: list[PhiSpan]) -> PhiSpan:
    """One span for a group of overlapping spans (see :func:`merge_spans`)."""
    if len(group) == 1:
        return group[0]
    best = min(group, key=_priority)
    sources = sorted({s.source for s in group})
    confidences = [s.confidence for s in group if s.confidence is not None]
    return PhiSpan(
        start=min(s.start for s in group),
        end=max(s.end for s in group),
        label=best.label,
        source="+".join(sources),
        confidence=max(confidences) if confidences else None,
    )


def _position(span: PhiSpan) -> tuple[int, int]:
    return (span.start, span.end)


def merge_spans(spans: Iterable[PhiSpan]) -> tuple[PhiSpan, ...]:
    """Union overlapping spans; the result is sorted and non-overlapping.

    The merged span takes the label of its highest-priority member, the
    detectors of all members as its source (``+``-joined) and the highest
    member confidence, since any member alone would have been redacted.
    """
    return _merge_sorted(sorted(spans, key=_position))


def _merge_sorted(spans: Iterable[PhiSpan]) -> tuple[PhiSpan, ...]:
    """:func:`merge_spans` of spans that come in (start, end) order."""
    # Each group is merged as soon as it ends: a long document has a million
    # spans, and a list per group for all of them at once was a copy too many.
    merged: list[PhiSpan] = []
    group: list[PhiSpan] = []
    group_end = -1
    for span in spans:
        if group and span.start < group_end:
            group.append(span)
            group_end = max(group_end, span.end)
        else:
            if group:
                merged.append(_merged(group))
            group = [span]
            group_end = span.end
    if group:
        merged.append(_merged(group))
    return tuple(merged)


Seeds = dict[str, tuple[str, float | None]]


def found_values(text: str, spans: Iterable[PhiSpan]) -> Seeds:
    """Value -> (label, confidence) of the spans worth marking elsewhere.

    Values the default policy keeps (ages under 90, bare years) are left out:
    they are too often not PHI elsewhere; so are the values of a label map's
    ``keep`` labels (``madre``, ``varón``): the site keeps them, and marked
    elsewhere they only add spans its annotators do not mark.
    """
    seeds: Seeds = {}
    for span in spans:
        if category(span.label) == "KEEP":
            continue  # a site keeps it: marking it elsewhere removes nothing
        value = text[span.start:span.end]
        if not policy_keeps(span.label, value, Policy.SAFE_HARBOR):
            seeds.setdefault(value, (span.label, span.confidence))
    return seeds


class Occurrences:
    """Where propagated values stand, as machine integers until they are merged.

    A document of 40,000 notes has 70,000 found values and a million further
    occurrences of them; as span objects they cost more memory than the rest
    of the tagging (380 MB at 16,000 notes). Here each occurrence is three
    integers (start, end, which value), and :meth:`spans` makes the spans one
    at a time, in text order, as the merge reads them.
    """

    def __init__(self, length: int = 0) -> None:
        """``length``: of the text searched (0: not known, 8 bytes a place)."""
        self._starts = offsets(length or 2**32)
        self._ends = offsets(length or 2**32)
        self._values = array("I")
        self._kinds: list[tuple[str, float | None]] = []

    def add(self, label: str, confidence: float | None,
            matches: Iterable[tuple[int, int]]) -> None:
        """Record the non-empty ``matches`` of one value found as ``label``."""
        kind = len(self._kinds)
        self._kinds.append((label, confidence))
        for start, end in matches:
            if end > start:
                self._starts.append(start)
                self._ends.append(end)
                self._values.append(kind)

    def __len__(self) -> int:
        return len(self._starts)

    def spans(self) -> Iterator[PhiSpan]:
        """One :data:`PROPAGATED` span per occurrence, by (start, end).

        Ties keep the order the values were added in, as a stable sort of
        the spans would.
        """
        starts = np.asarray(self._starts)
        ends = np.asarray(self._ends)
        for i in np.lexsort((ends, starts)).tolist():
            label, confidence = self._kinds[self._values[i]]
            yield PhiSpan(self._starts[i], self._ends[i], label, PROPAGATED,
                          confidence)


def occurrences(search: SearchText, seeds: Seeds) -> Occurrences:
    """Every occurrence of the ``seeds`` values in ``search``'s text."""
    found = Occurrences(len(search.text))
    for (label, confidence), matches in zip(
            seeds.values(), search.iter_matches(list(seeds)), strict=True):
        found.add(label, confidence, matches)
    return found


def with_occurrences(spans: tuple[PhiSpan, ...], found: Occurrences,
                     text: str | None = None) -> tuple[PhiSpan, ...]:
    """``spans`` (sorted, as :func:`merge_spans` leaves them) merged with ``found``.

    With the ``text``, an occurrence of a site label's value where a site
    model's tidying drops a span (``familia`` after ``médico de``,
    :func:`~deid_pipeline.tagger.span_tidy.dropped_by_tidying`) is not
    marked: the detector did not tag it there, and a copy must not either.
    """
    if not found:
        return spans
    copies = found.spans()
    if text is not None:
        copies = (s for s in copies if not (is_site_label(s.label)
                                            and dropped_by_tidying(text, s)))
    return _merge_sorted(heapq.merge(spans, copies, key=_position))


# ``1/2``: a date of two digits, too short for the value search (a third of
# all year-less dates are written so).
_SHORT_DATE = re.compile(r"[1-9]/[1-9]")


# Where any two-digit date stands as one: not inside a number, a fraction, a
# range or ``3/4 of meal``.
_SHORT_DATE_ALONE = re.compile(r"(?<![\w/.,-])[1-9]/[1-9](?![\w/-]|[.,]\d|[ \t]+of\b)",
                               re.IGNORECASE)


def short_date_occurrences(text: str, values: Iterable[str]
                           ) -> dict[str, list[tuple[int, int]]]:
    """Where each two-digit date of ``values`` found in ``text`` stands again as a date.

    ``d/c IABP 1/2 and pressors d/c 1/2``: the rules read the first from its
    date word; the value search skips values under three digits, which stand
    for too much else. Another occurrence counts only where the date rules
    would not call it a clinical look-alike even of a date they are sure of
    (``1/2 NS``, ``3/4 strength``, ``5/5, 40%``), nor a part of something
    (``3/4 of meal``). One pass over the text for all of them: a long
    document has dozens (81 can be written), each a pass of its own before.
    """
    from deid_pipeline.tagger.rules.detector import is_date_lookalike

    where: dict[str, list[tuple[int, int]]] = {value: [] for value in values}
    for m in _SHORT_DATE_ALONE.finditer(text):
        found = where.get(m.group())
        if found is not None and not is_date_lookalike(text, m.start(), m.end(),
                                                       sure=True):
            found.append(m.span())
    return where


def other_occurrences(text: str, spans: Iterable[PhiSpan],
                      dictionary: PatientDictionary | None = None) -> Occurrences:
    """Every further occurrence of a found value or a header value.

    Detectors decide occurrence by occurrence, so a name found after its cue
    ("son David Moss") is often missed where it stands alone ("Moss called").
    Each value is searched for with the leak guard's own matching
    (:class:`~deid_pipeline.value_search.SearchText`: case- and
    whitespace-insensitive, digits with any separators), so the guard and
    the tagger agree on what an occurrence is. Values the default policy
    keeps (ages under 90, bare years) and values under three letters or
    digits are not propagated: they are too often not PHI elsewhere.
    """
    seeds = found_values(text, spans)
    # One SearchText for all values: the header alone expands into hundreds
    # of forms per message, and a regex per value cost more than tagging.
    search = SearchText(text)
    found = occurrences(search, seeds)
    short = [value for value, (label, _) in seeds.items()
             if label == "DATE" and _SHORT_DATE.fullmatch(value)]
    if short:
        where = short_date_occurrences(text, short)
        for value in short:
            label, confidence = seeds[value]
            found.add(label, confidence, where[value])
    if dictionary is not None:
        # A header value also found by a detector is searched once, as that span.
        plan = header_values(dictionary, Policy.SAFE_HARBOR)
        for value, label, needle in search.present(plan):
            if needle is not None and value not in seeds:
                found.add(label, 1.0, search.find(needle))
    return found


def reconcile(text: str, spans: Iterable[PhiSpan],
              dictionary: PatientDictionary | None = None) -> tuple[PhiSpan, ...]:
    """Every detector's spans plus all other occurrences of their values, merged."""
    merged = merge_spans(years_as_dates(text, spans))
    return with_occurrences(merged, other_occurrences(text, merged, dictionary), text)
