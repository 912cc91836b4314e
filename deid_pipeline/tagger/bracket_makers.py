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
standing as an item of its own (``Co, Inc.``) is skipped for the item before.
When the first place found is a country, the item before it is the maker
only in a bracket of three (``(Topógrafo corneal, Baush and Lomb, U.S.A.)``):
in a longer one it is likely the town the model missed (``Johnson & Johnson,
New Jersey, EE.UU.``).

A bracket of two items whose first holds a trademark sign is a product and
its maker (``(Cellcept®, Roche)``, ``(Prograf®, MSD)``): its second item, of
the same shape, is the maker. In the gold of both parts, 13 of the 15 such
second items that start with a capital and hold no digit are institutions
(the other two are makers the annotators left out).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from deid_pipeline.labels import builtin_label, category, site_labels
from deid_pipeline.model import PhiSpan

__all__ = ["MAKER_SOURCE", "bracket_makers"]

MAKER_SOURCE = "rules:bracket_makers"
_BRACKET = re.compile(r"\(([^()\n]{5,160})\)")
# Items are split at commas and semicolons, but not at a decimal comma (0,5%).
_ITEM = re.compile(r"(?:[^,;]|(?<=\d),(?=\d))+")
_MIN_ITEMS = 3
_MAX_WORDS = 6
# What stands around a maker's name in its item and is not part of it.
_EDGE = " \t®™"
_TRADEMARK = re.compile(r"[®™]")
_PLACE_BUILTINS = frozenset({"LOCATION", "CITY", "STATE", "COUNTRY", "ZIP"})
# A company's legal form standing as an item of its own (``Ohio Medical
# Instrument Co, Inc., Cincinnati``) is not the maker: the item before it is
# (the annotators leave the form out).
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


def _place_kind(text: str, item: tuple[int, int],
                spans: Sequence[PhiSpan]) -> str | None:
    """The built-in label of a place span covering the item's letters and digits."""
    a, b = item
    value = text[a:b]
    first = a + next((i for i, c in enumerate(value) if c.isalnum()), 0)
    last = a + max((i + 1 for i, c in enumerate(value) if c.isalnum()), default=0)
    for s in spans:
        kind = builtin_label(s.label, text[s.start:s.end])
        if (s.start <= first and last <= s.end and category(s.label) == "LOCATION"
                and kind in _PLACE_BUILTINS):
            return kind
    return None


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
        near = [s for s in spans if s.start < bracket.end() and bracket.start() < s.end]
        if len(items) == 2 and _TRADEMARK.search(text, bracket.start(1),
                                                 items[0][1] + 1):
            a, b = items[1]
            if (_maker_shaped(text[a:b])
                    and not any(s.start < b and a < s.end for s in near)):
                out.append(PhiSpan(a, b, label, MAKER_SOURCE, 1.0))
            continue
        if len(items) < _MIN_ITEMS:
            continue
        kinds = [_place_kind(text, item, near) for item in items]
        place = next((i for i in range(1, len(items)) if kinds[i]), None)
        if place is None or (kinds[place] == "COUNTRY" and len(items) > _MIN_ITEMS):
            continue
        a, b = items[place - 1]
        if place >= 2 and _COMPANY_SUFFIX.fullmatch(text, a, b):
            a, b = items[place - 2]
        if (_maker_shaped(text[a:b])
                and not any(s.start < b and a < s.end for s in near)):
            out.append(PhiSpan(a, b, label, MAKER_SOURCE, 1.0))
    return out
