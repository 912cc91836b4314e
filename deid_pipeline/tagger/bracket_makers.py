"""The maker in a product's brackets: ``(Vibracina 100, Pfizer, Madrid)``.

Spanish case reports name a drug's or a device's maker and its town in
brackets after it: product, maker, town[, country]. The town is a place the
model finds; the maker, a company name it has seen once or never
(``Schering-Plough``, ``Carl Zeiss Meditec``), it mostly misses. In MEDDOCAN's
training and development gold, of the 31 bracketed lists of three items or
more whose place follows an unmarked-by-place item, that item is an
institution 29 times (the other two: a product, ``timoftol 0,5%®``, and a
maker the annotators left out).

So: in a bracket of three comma- or semicolon-separated items or more, the
item right before the first item the model found as a place (a town,
province or country, not a street or an institution) is the site's
institution, when no span touches it, it starts with a capital and holds
no digit (a product's strength, ``Vibracina 100``, is no maker). A
trademark sign after it is not part of it (``Allergan®``); a legal form
standing as an item of its own (``Co, Inc.``) is part of the maker before it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from deid_pipeline.labels import builtin_label, category, site_labels
from deid_pipeline.model import PhiSpan

__all__ = ["MAKER_SOURCE", "bracket_makers"]

MAKER_SOURCE = "rules:bracket_makers"
_BRACKET = re.compile(r"\(([^()\n]{5,160})\)")
_ITEM = re.compile(r"[^,;]+")
_MIN_ITEMS = 3
_MAX_WORDS = 6
# What stands around a maker's name in its item and is not part of it.
_EDGE = " \t®™"
_PLACE_BUILTINS = frozenset({"LOCATION", "CITY", "STATE", "COUNTRY", "ZIP"})
# A company's legal form standing as an item of its own (``Ohio Medical
# Instrument Co, Inc., Cincinnati``) belongs to the item before it.
_COMPANY_SUFFIX = re.compile(r"(?:Inc|Ltd|Corp|Co|S\.?\s?[AL]|GmbH|AG|SpA)\.?", re.I)


def _maker_label() -> str | None:
    """The site's one institution label (built-in ORGANIZATION), if it has one."""
    labels = [label for label in site_labels("LOCATION")
              if builtin_label(label) == "ORGANIZATION"]
    return labels[0] if len(labels) == 1 else None


def _items(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The items of ``text[start:end]``, blanks and trademark signs trimmed."""
    out = []
    for match in _ITEM.finditer(text, start, end):
        a, b = match.start(), match.end()
        while a < b and text[a] in _EDGE:
            a += 1
        while b > a and text[b - 1] in _EDGE:
            b -= 1
        if b > a:
            out.append((a, b))
    return out


def _is_place(text: str, item: tuple[int, int], spans: Sequence[PhiSpan]) -> bool:
    """Whether a place span covers the item's letters and digits."""
    a, b = item
    value = text[a:b]
    first = a + next((i for i, c in enumerate(value) if c.isalnum()), 0)
    last = a + max((i + 1 for i, c in enumerate(value) if c.isalnum()), default=0)
    return any(s.start <= first and last <= s.end and category(s.label) == "LOCATION"
               and builtin_label(s.label, text[s.start:s.end]) in _PLACE_BUILTINS
               for s in spans)


def _maker_shaped(value: str) -> bool:
    return (value[:1].isupper() and not any(c.isdigit() for c in value)
            and len(value.split()) <= _MAX_WORDS)


def bracket_makers(text: str, spans: Sequence[PhiSpan]) -> list[PhiSpan]:
    """Maker spans the model missed in product brackets (module docstring)."""
    label = _maker_label()
    if label is None or "(" not in text:
        return []
    out = []
    for bracket in _BRACKET.finditer(text):
        items = _items(text, bracket.start(1), bracket.end(1))
        if len(items) < _MIN_ITEMS:
            continue
        near = [s for s in spans if s.start < bracket.end() and bracket.start() < s.end]
        place = next((i for i in range(1, len(items))
                      if _is_place(text, items[i], near)), None)
        if place is None:
            continue
        a, b = items[place - 1]
        if place >= 2 and _COMPANY_SUFFIX.fullmatch(text, a, b):
            a = items[place - 2][0]
        if (_maker_shaped(text[a:b])
                and not any(s.start < b and a < s.end for s in near)):
            out.append(PhiSpan(a, b, label, MAKER_SOURCE, 1.0))
    return out
