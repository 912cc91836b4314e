"""Which spans lie inside a clinical eponym, and go (see :mod:`.allowlist`).

:mod:`.allowlist` finds where eponyms stand in a text; here a document's
spans are checked against them once all detectors have run: a span inside
an eponym in its clinical context is dropped, unless a dictionary gave it
or its value is tagged elsewhere in the text too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from deid_pipeline.model import PhiSpan
from deid_pipeline.tagger import lexicons
from deid_pipeline.tagger.allowlist import (
    _WORD,
    METHOD_OR_DISEASE_WORDS,
    eponym_regions,
    load,
)
from deid_pipeline.tagger.intervals import Intervals

_METHOD_OR_DISEASE_WORD = re.compile(r"(?i)\b(?:%s)\b" % "|".join(
    sorted(METHOD_OR_DISEASE_WORDS)))
_WORD_RUN = re.compile(r"\w+")


def _has_method_or_disease_word(text: str) -> bool:
    r"""Whether ``text`` holds one of those words, as ``_METHOD_OR_DISEASE_WORD`` finds.

    On ASCII text a whole-word match is a maximal ``\w`` run equal to the word:
    a set lookup per word, where the expression tried all 94 words case-blind
    at every word start (0.5 ms a note, issue 45). Other text keeps ``re``'s
    case folding.
    """
    if text.isascii():
        return not METHOD_OR_DISEASE_WORDS.isdisjoint(_WORD_RUN.findall(text.lower()))
    return _METHOD_OR_DISEASE_WORD.search(text) is not None


def _lines_around(text: str, spans: Sequence[PhiSpan]) -> Iterator[str]:
    """The lines each span stands on, with the line before and after, merged.

    Every region is read within one line (its words are joined by blanks,
    hyphens or marks, never a line end), so a method or disease word
    elsewhere makes no region a span can meet: only these lines need one.
    Made one at a time (a long document's spans cover most of it).
    """
    window: tuple[int, int] | None = None
    for span in sorted(spans, key=lambda s: s.start):
        line = text.rfind("\n", 0, span.start) + 1
        lo = text.rfind("\n", 0, line - 1) + 1 if line > 0 else 0
        end = text.find("\n", span.end)
        hi = len(text) if end < 0 else text.find("\n", end + 1)
        hi = len(text) if hi < 0 else hi
        if window is not None and lo <= window[1]:
            window = (window[0], max(hi, window[1]))
            continue
        if window is not None:
            yield text[window[0]:window[1]]
        window = (lo, hi)
    if window is not None:
        yield text[window[0]:window[1]]


def drop_eponyms(text: str, spans: Sequence[PhiSpan]) -> tuple[PhiSpan, ...]:
    """``spans`` without those inside a clinical eponym (see the module docstring)."""
    index = load()
    if not any(word in index.words for s in spans
               for word in _WORD.findall(text[s.start:s.end].lower())) \
            and not any("-" in text[max(s.start - 1, 0):s.end + 1] for s in spans) \
            and not any(map(_has_method_or_disease_word, _lines_around(text, spans))):
        return tuple(spans)  # no eponym's word, hyphen or method word: no scan
    regions = eponym_regions(text, index)
    if not regions:
        return tuple(spans)
    eponyms = Intervals(regions)
    inside = [(eponyms.contains(_after_article(text, s), s.end)
               or _only_filler_outside(text, s, eponyms.overlapping(s.start, s.end)))
              and "dictionary" not in s.source for s in spans]
    kept_values = {_value(text, s) for s, drop in zip(spans, inside) if not drop}
    # Also kept: a span holding a word that is a value tagged elsewhere (a
    # place eponym spans a surname some doctor of a long document bears).
    return tuple(s for s, drop in zip(spans, inside)
                 if not drop or _value(text, s) in kept_values
                 or any(len(w) >= 3 and w in kept_values
                        for w in _WORD.findall(text[s.start:s.end].lower())))


# What a span may hold beside an eponym and still be all eponym: the grade
# after it (``Child-Pugh C``), a word joining two (``Osgood-Schlatter vs
# Sinding-Larsen``), a very common word the model ran on into (``still``).
_JOINING_WORDS = frozenset({"vs", "versus", "and", "or"})
_FILLER_BAND = 5


def _only_filler_outside(text: str, span: PhiSpan,
                         regions: Sequence[tuple[int, int]]) -> bool:
    """Whether ``span`` meets an eponym and holds nothing else but filler words.

    ``regions``: the eponyms' regions, at least those that overlap the span
    (a long document has thousands; each span is given its own few).

    The model at a recall bias runs a span over an eponym's edge; the
    eponym names no one, and what lies past its edge is a name only if it
    has a word of its own that is no grade letter after the eponym, joining
    word or very common English word (``L. Foley`` is a nurse).
    """
    chars = list(text[span.start:span.end])
    first = None  # where the first eponym starts in the span
    for start, end in regions:
        lo, hi = max(start, span.start), min(end, span.end)
        if lo < hi:
            first = lo - span.start if first is None else min(first, lo - span.start)
            chars[lo - span.start:hi - span.start] = " " * (hi - lo)
    if first is None:
        return False
    lex = lexicons.load()
    for m in _WORD.finditer("".join(chars).lower()):
        word = m.group()
        # A letter after the eponym is its grade; before it, a name's initial.
        if not (len(word) == 1 and m.start() > first or word in _JOINING_WORDS
                or lex.english_band(word) >= _FILLER_BAND):
            return False
    return True


_ARTICLE = re.compile(r"(?i:an?|the)\s+")


def _after_article(text: str, span: PhiSpan) -> int:
    """Where ``span`` starts once a leading article is left out.

    The model at a recall bias runs a span into the article before a name it
    takes the eponym for (``after [a Nissen] fundoplication``); the article
    names no one, so the span is inside the eponym if the rest is.
    """
    m = _ARTICLE.match(text, span.start, span.end)
    return m.end() if m and m.end() < span.end else span.start


def _value(text: str, span: PhiSpan) -> str:
    """A span's letters and digits, lower-cased: how the leak guard compares."""
    return "".join(_WORD.findall(text[span.start:span.end])).lower()
