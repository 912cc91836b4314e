"""The hybrid tagger: every configured detector, then the one merge policy.

This is the single function training-time evaluation, the Beam tag stage and
the MLLP gateway call, so the score measured is the score shipped.

Detectors see a *visible* view of the text: invisible characters (zero-width
spaces and joiners, soft hyphens, bidi controls, BOMs) are dropped and exotic
spaces (NBSP, thin spaces, ...) become plain blanks, because a phone number
split by a zero-width space is still a phone number to a reader, and no
pattern or model should have to know every Unicode trick. Span offsets are
mapped back onto the original text, so the rewrite covers the invisible
characters too.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections.abc import Sequence
from contextlib import nullcontext
from typing import NamedTuple

from deid_pipeline.labels import category
from deid_pipeline.model import ClinicalDocument, PhiSpan, TaggedDocument
from deid_pipeline.runtime.progress import DOCUMENT_PROGRESS, Progress, process_progress
from deid_pipeline.tagger.allowlist import eponym_regions
from deid_pipeline.tagger.confidence import TokenPhi, document_confidence
from deid_pipeline.tagger.detectors import Detector, TaggerConfig, create
from deid_pipeline.tagger.eponym_spans import drop_eponyms
from deid_pipeline.tagger.intervals import Intervals
from deid_pipeline.tagger.merge import (
    Occurrences,
    Seeds,
    found_values,
    merge_spans,
    occurrences,
    reconcile,
    with_occurrences,
)
from deid_pipeline.value_search import SearchText

_INVISIBLE = (
    "\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d"
    "\u202e\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\ufeff"
)
_SPACES = (
    "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u202f\u205f\u3000"
)
_ODD = re.compile(f"[{_INVISIBLE}{_SPACES}]")
_TO_BLANK = str.maketrans({c: " " for c in _SPACES})
_INVISIBLE_CHAR = re.compile(f"[{_INVISIBLE}]")


class VisibleMap:
    """Offsets of the visible view back to the text, held as the dropped characters.

    ``dropped[k]`` is the visible offset before which the k-th dropped
    character stood: one entry per invisible character (rare), not one per
    character of the text (a list of 50 million offsets is gigabytes).
    """

    __slots__ = ("dropped",)

    def __init__(self, dropped: list[int]) -> None:
        self.dropped = dropped

    def __getitem__(self, visible: int) -> int:
        """The original offset of visible character ``visible``."""
        return visible + bisect.bisect_right(self.dropped, visible)


def visible_view(text: str) -> tuple[str, VisibleMap | None]:
    """The text detectors should see, and the map of its offsets to ``text``.

    The map is None when the text has nothing to clean (the common case).
    ``positions[i]`` is the original offset of visible character ``i``.
    """
    if _ODD.search(text) is None:
        return text, None
    dropped = [m.start() - k for k, m in enumerate(_INVISIBLE_CHAR.finditer(text))]
    visible = _INVISIBLE_CHAR.sub("", text).translate(_TO_BLANK)
    return visible, VisibleMap(dropped)


# Texts longer than this are tagged in parts of at most this many characters,
# cut at a line end (else a blank, else any non-alphanumeric character): the
# CRF holds the features of every token of what it tags at once (about 600 MB
# per MB of text) and the rules rescan it, so a 50 MB "note" would exhaust a
# worker. Spans from all parts are reconciled once over the whole text, so a
# value found in one part is still marked in every other.
PART_CHARS = 100_000
_LINE_END = re.compile(r"\n")
_BLANK = re.compile(r"\s")
_NOT_ALNUM = re.compile(r"[^\w]")


def part_bounds(text: str, limit: int = PART_CHARS) -> list[tuple[int, int]]:
    """``(start, end)`` of the parts ``text`` is tagged in (one part if short)."""
    bounds = []
    start = 0
    while len(text) - start > limit:
        end = start + limit
        for boundary in (_LINE_END, _BLANK, _NOT_ALNUM):
            cut = None
            for m in boundary.finditer(text, start + limit // 2, end):
                cut = m.end()
            if cut is not None:
                end = cut
                break
        bounds.append((start, end))
        start = end
    bounds.append((start, len(text)))
    return bounds


def document_parts(doc: ClinicalDocument) -> list[tuple[int, ClinicalDocument]]:
    """``(offset, part)`` pairs to run detectors on: the document itself if short."""
    bounds = part_bounds(doc.text)
    if len(bounds) == 1:
        return [(0, doc)]
    return [(a, dataclasses.replace(doc, text=doc.text[a:b])) for a, b in bounds]


# Each part is tagged with up to this many characters of the text before and
# after it, so a value at a cut is seen whole and the CRF and the rules see
# the context they would in one piece; a part keeps the spans that start in
# it, so each span comes from the one part that saw it whole.
OVERLAP_CHARS = 2_000


class Window(NamedTuple):
    """What a detector sees of a long document, and which of its spans count.

    ``part`` is the text from ``offset`` on; spans starting at ``start`` ..
    ``end`` (offsets of the whole text) are kept, the others belong to a
    neighbour that saw them with more context.
    """

    offset: int
    start: int
    end: int
    part: ClinicalDocument


def document_windows(doc: ClinicalDocument, limit: int = PART_CHARS,
                     overlap: int = OVERLAP_CHARS) -> list[Window]:
    """The windows to run detectors on: the document itself if short.

    Each :func:`part_bounds` part widened by ``overlap`` characters on each
    side, cut at a blank so no word is split at the window's edge.
    """
    text = doc.text
    bounds = part_bounds(text, limit)
    if len(bounds) == 1:
        return [Window(0, 0, len(text), doc)]
    windows = []
    for a, b in bounds:
        lo, hi = max(0, a - overlap), min(len(text), b + overlap)
        if lo:
            blank = _BLANK.search(text, lo, a)
            lo = blank.end() if blank else a
        if hi < len(text):
            hi = max(b, text.rfind(" ", b, hi), text.rfind("\n", b, hi))
        windows.append(Window(lo, a, b, dataclasses.replace(doc, text=text[lo:hi])))
    return windows


def shifted(span: PhiSpan, offset: int) -> PhiSpan:
    """``span`` of a part, in the offsets of the whole text."""
    if not offset:
        return span
    return dataclasses.replace(span, start=span.start + offset, end=span.end + offset)


def _map_back(span: PhiSpan, positions: VisibleMap) -> PhiSpan:
    return dataclasses.replace(
        span, start=positions[span.start], end=positions[span.end - 1] + 1
    )


def _message_of(doc: ClinicalDocument) -> tuple[str, str] | None:
    """The HL7 message a report belongs to (doc id ``<MSH-10>-<group>``), or None."""
    if doc.source != "hl7" or "-" not in doc.doc_id:
        return None
    return doc.origin, doc.doc_id.rsplit("-", 1)[0]


# What a patient's other documents lend each of them: names, places, ids and
# contacts found at least this sure. Not dates or ages: "3/4" is a date in
# one note and a fraction in the next (on the sealed split, lending dates
# found 2 tokens and added 6 false positives per copy). 0.7 lets the context
# rules lend (a hospital's letters after "transferred to" are 0.7): on three
# development hold-out folds, plain and 3 swapped copies each, 0.9 -> 0.7
# found 6 more PHI tokens for no false positive, 0.5 added 12 false positives.
LENT_CATEGORIES = frozenset({"NAME", "LOCATION", "ID", "CONTACT"})
LENT_CONFIDENCE = 0.7
# Nor a value all of whose words are this common in English (wordfreq band):
# Dr. Brown of one note is no reason to mark the brown stool of the next.
_COMMON_BAND = 5
_LETTERS = re.compile(r"[^\W\d_]+")


def _lent_values(doc: TaggedDocument) -> Seeds:
    """The values of ``doc`` its patient's other documents are marked with."""
    from deid_pipeline.tagger import lexicons

    lex = lexicons.load()
    found = found_values(doc.document.text, (
        s for s in doc.spans if category(s.label) in LENT_CATEGORIES
        and (s.confidence is None or s.confidence >= LENT_CONFIDENCE)))
    return {value: how for value, how in found.items()
            if not all(lex.english_band(w.lower()) >= _COMMON_BAND
                       for w in _LETTERS.findall(value) or ("",))}


def _groups(tagged: Sequence[TaggedDocument], key) -> list[list[int]]:
    """Positions of the documents that share a ``key`` (not None), 2 or more."""
    groups: dict[object, list[int]] = {}
    for i, t in enumerate(tagged):
        k = key(t.document)
        if k is not None:
            groups.setdefault(k, []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def reconcile_documents(tagged: Sequence[TaggedDocument]) -> list[TaggedDocument]:
    """Each document also marked wherever a value tagged in a related one stands.

    The reports of one HL7 message are one patient's, written into one
    message: a name the tagger found in one report and missed in another
    would reach the research text of the other, which its own leak guard
    cannot know about. So each report gets every occurrence of the values
    tagged in the others, with the propagation's own matching. The
    documents of one patient (the same ``person_key``: PhysioNet patient,
    HL7 MRN, a JSONL ``person_key``) lend each other their names, places,
    ids and contacts tagged with confidence >= :data:`LENT_CONFIDENCE`, as
    HIDE's patient dictionaries do: a relative named after ``daughter`` in
    one note is marked where another note names her alone (sealed split,
    notes of patients development never read: missed HIPAA tokens 13 -> 10,
    no false positive more). The order is kept; a document nothing is lent
    to comes back as it was.
    """
    shared: list[Seeds] = [{} for _ in tagged]
    lent: list[Seeds] = [{} for _ in tagged]
    for members in _groups(tagged, _message_of):
        values = [found_values(tagged[i].document.text, tagged[i].spans)
                  for i in members]
        _share(members, values, shared)
    for members in _groups(tagged, lambda d: d.person_key):
        _share(members, [_lent_values(tagged[i]) for i in members], lent)
    out = list(tagged)
    for i, doc in enumerate(tagged):
        if not (shared[i] or lent[i]):
            continue
        text = doc.document.text
        search = SearchText(text)
        extra = occurrences(search, shared[i])
        if lent[i]:
            extra = _outside_eponyms(text, extra, occurrences(search, lent[i]))
        if extra:
            out[i] = dataclasses.replace(
                doc, spans=with_occurrences(merge_spans(doc.spans), extra, text))
    return out


def _outside_eponyms(text: str, into: Occurrences, lent: Occurrences) -> Occurrences:
    """``into`` plus the ``lent`` occurrences that are not a clinical eponym.

    One note's Dr. Foley does not make the next note's Foley catheter a name.
    """
    regions = eponym_regions(text)
    eponyms = Intervals(regions) if regions else None
    for span in lent.spans():
        if eponyms is None or not eponyms.contains(span.start, span.end):
            into.add(span.label, span.confidence, ((span.start, span.end),))
    return into


def _share(members: list[int], values: list[Seeds], seeds: list[Seeds]) -> None:
    """Give each member of a group the values of the others (first found wins)."""
    for k, i in enumerate(members):
        for j, other in enumerate(values):
            if j != k:
                for value, found in other.items():
                    seeds[i].setdefault(value, found)


class PhiTagger:
    """Runs detectors over a document and merges their spans (recall first)."""

    def __init__(self, detectors: Sequence[Detector], part_chars: int = PART_CHARS,
                 progress: Progress | None = None) -> None:
        """Keep the detectors; long texts are tagged in parts of ``part_chars``.

        ``progress``: what a document of several parts reports them to
        (default: the process's line, :func:`process_progress`).
        """
        self.detectors = tuple(detectors)
        self.part_chars = part_chars
        self.progress = progress

    @classmethod
    def from_config(cls, config: TaggerConfig) -> PhiTagger:
        return cls(create(config))

    def tag(self, doc: ClinicalDocument) -> TaggedDocument:
        visible, positions = visible_view(doc.text)
        view = doc if positions is None else dataclasses.replace(doc, text=visible)
        spans = []
        token_parts = []
        windows = document_windows(view, self.part_chars,
                                   min(OVERLAP_CHARS, self.part_chars // 4))
        progress = None
        if len(windows) > 1:
            progress = self.progress or process_progress(DOCUMENT_PROGRESS)
            progress.mark(long_documents=1)
        # Some steps of a huge document count nothing for long: keep a line coming.
        with progress.busy() if progress is not None else nullcontext():
            for offset, start, end, part in windows:
                for detector in self.detectors:
                    found = detector.analyze(part)
                    for s in found.spans:
                        if start <= s.start + offset < end:
                            spans.append(shifted(s, offset))
                    if found.tokens is not None:
                        token_parts.append(
                            found.tokens.shifted(offset).within(start, end))
                if progress is not None:
                    # A long document takes minutes: say how far it is (a count).
                    progress.add(characters_tagged=end - start)
            spans = drop_eponyms(view.text, reconcile(view.text, spans, doc.dictionary))
        confidence = document_confidence(TokenPhi.concatenate(token_parts), spans)
        if positions is not None:
            spans = tuple(_map_back(s, positions) for s in spans)
        return TaggedDocument(document=doc, spans=spans, confidence=confidence)

    def versions(self) -> dict[str, str]:
        """Detector name -> version, for run.json."""
        return {d.name: d.version for d in self.detectors}
