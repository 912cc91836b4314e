"""Street addresses by their shape: a house number, a name, a street word.

``1140 Commonwealth Ave Apt 3``, ``55 Prospect St``, ``18 Wentworth Rd``: the
model knows an address by the words around it (``lives at``) and the
address tail rule only the town, state and ZIP after it; a street line alone
(``address on file is ...``, ``landlord at ...``) was left in clear. The
shape is one clinical text has little other use for: a number, one to three
capitalised words, one of rules.json's ``places.street_suffixes``, then an
optional unit. A name word that is a unit or a clinical word (``2 Units
St``, ``40 Lasix Dr``), ``Dr`` before a name (``3 West Dr Lee``, ``120 PER DR.
kenney``: a title) and, in capitals, a street word not spelt out (``3 EPSIODES
ST``: a segment; ``IN PLACE``) are no street.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from deid_pipeline.tagger.rules.base import Hit, Pattern, PatternRecognizer, _trie

_WORD = r"(?:[A-Z][a-z]+|[A-Z]{2,}|\d{1,3}(?:st|nd|rd|th))"
_DIRECTION = r"(?:(?:[NSEW]\.?|North|South|East|West|NORTH|SOUTH|EAST|WEST)[ ]+)?"
_UNIT = (r"(?:[ ]*,?[ ]*(?i:apt|apartment|unit|suite|ste|\#)\.?[ ]*\#?[ ]*"
         r"[A-Za-z0-9-]{1,6}(?![\w-]))?")


# In capitals, where ST, SQ, DR and PLACE are a segment, an injection, a
# doctor and "in place": only the street words spelt out, or unmistakable.
_SPELT_OUT = frozenset({
    "street", "avenue", "ave", "road", "rd", "lane", "drive", "court", "boulevard",
    "blvd", "terrace", "circle", "parkway", "pkwy", "highway", "hwy", "square",
    "trail"})
# What may follow a street named "... Dr" (else it is a doctor's title).
_WORD_AFTER = re.compile(r"\.?[ ]+([A-Za-z]+)")
_AFTER_STREET = frozenset({"in", "on", "at", "and", "with", "near", "off", "apt",
                           "apartment", "unit", "suite", "ste"})


def _street(suffixes: Iterable[str]) -> str:
    """The street line's expression, the suffix case-blind."""
    return (rf"(?<![\w/.,#<>=-])(?P<phi>\d{{1,6}}(?:-\d{{1,4}})?[ ]+{_DIRECTION}"
            rf"(?P<name>{_WORD}(?:[ ]+{_WORD}){{0,2}})"
            rf"[ ]+(?i:(?P<suffix>{_trie(suffixes)}))"
            rf"(?:\.(?![ ]+[A-Z]))?(?![\w-]){_UNIT})")


# Where one lives, a street without its number: "lives on Centre St".
_LIVES_ON = r"(?<![\w/])(?i:lives|living|resides|residing)[ ]+(?i:on|off)[ ]+"


def _street_lived_on(suffixes: Iterable[str]) -> str:
    """A street's name and word after ``lives on`` (the verb says street)."""
    return (rf"{_LIVES_ON}(?P<phi>{_DIRECTION}(?P<name>{_WORD}(?:[ ]+{_WORD}){{0,2}})"
            rf"[ ]+(?i:(?P<suffix>{_trie(suffixes)}))(?:\.(?![ ]+[A-Z]))?(?![\w-]))")


class StreetRecognizer(PatternRecognizer):
    """A house number, a street's name and a street word: a STREET."""

    def __init__(self, config: Mapping[str, Any], units: Iterable[str]) -> None:
        suffixes = config.get("street_suffixes", ("street", "st", "avenue", "ave"))
        self._units = frozenset(u.lower() for u in units)
        super().__init__("streets", "STREET", [
            Pattern("street", _street(suffixes), confidence=0.9),
            Pattern("lived_on", _street_lived_on(suffixes), confidence=0.9)],
            prefilter=r"\d[ \t]+[A-Za-z]|[Ll][Ii][Vv]|[Rr][Ee][Ss][Ii][Dd]",
            flags=0)

    def validate(self, hit: Hit, text: str) -> bool:
        """See the module: no unit or clinical word, no title, capitals spelt out."""
        from deid_pipeline.tagger import lexicons

        suffix = hit.group("suffix").lower()
        if suffix == "dr":
            after = _WORD_AFTER.match(text, hit.end)
            if after is not None and after.group(1).lower() not in _AFTER_STREET:
                return False  # "120 PER DR. kenney": a doctor
        if hit.group("name").isupper() and suffix not in _SPELT_OUT and (
                hit.pattern.name == "street"):
            return False  # "3 EPSIODES ST", "4 REG SQ", "3 WAY FOLEY IN PLACE"
        lex = lexicons.load()
        for word in hit.group("name").split():
            key = word.lower()
            if key in self._units or lexicons.is_clinical_word(lex.flags(key)):
                return False
        return True
