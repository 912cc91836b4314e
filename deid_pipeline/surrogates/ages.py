"""AGE: Safe Harbor aggregates ages over 89 into one category; younger ages stay.

Ages of 89 and under are not PHI under Safe Harbor and keep their research
value, so they are returned unchanged. An age over 89 (in years; ``1100
months`` counts too) is rewritten as the category:

- ``90`` when the number is glued to what follows it by ``-``, ``+``, ``s`` or an
  ordinal's ending (``92-year-old`` -> ``90-year-old``, ``95+`` -> ``90+``, ``90s``
  stays, ``100th birthday`` -> ``90th birthday``),
  because ``90+-year-old`` is not a form text takes;
- ``90+`` everywhere else (``92`` -> ``90+``, ``92 yo`` -> ``90+ yo``,
  ``age 101`` -> ``age 90+``), which reads as "90 or older";
- ages in words over 89 (``ninety-two``, ``one hundred and one``) become
  ``ninety`` in the same case.

The limited-dataset policy may keep ages, so it returns them as they are. An
AGE span with no number in digits or words cannot be checked and raises, so
the rewrite step masks it (fail closed).
"""

from __future__ import annotations

import re

from deid_pipeline.policy import Policy
from deid_pipeline.surrogates.base import SurrogateGenerator, policy_of
from deid_pipeline.surrogates.keyed import (
    SurrogateContext,
    SurrogateError,
)
from deid_pipeline.surrogates.text import case_of, refuse_words, with_case

_NUMBER = re.compile(
    r"(?<![\d.])(?P<n>\d+(?:\.\d+)?)(?P<gap>\s*-?\s*)"
    r"(?P<unit>months?|mos?\b|weeks?|wks?\b|days?|hours?|hrs?\b)?",
    re.IGNORECASE)
# Units that make a number smaller than years. Single letters are left out on
# purpose: in "92 M" the M means male, and reading it as months would leak.
_UNIT_YEARS = {"mo": 12, "we": 52, "wk": 52, "da": 365, "ho": 8766, "hr": 8766}
_SMALL = (r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen"
          r"|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen")
_TENS = r"twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_WORDS = re.compile(
    rf"\b(?:ninety[-\s](?:{_SMALL})"
    rf"|(?:(?:a|one)\s+)?hundred(?:(?:\s+and)?[-\s]+(?:(?:{_TENS})(?:[-\s](?:{_SMALL}))?"
    rf"|{_SMALL}))?)\b",
    re.IGNORECASE)
_ANY_WORD_NUMBER = re.compile(rf"\b(?:{_SMALL}|{_TENS}|hundred)\b", re.IGNORECASE)
OVER_89 = "90+"
# "91st birthday" aggregated: the ordinal of ninety is "90th".
_NINETY_ORDINAL = re.compile(r"(?<!\d)(90)(?:st|nd|rd)(?![a-z])", re.IGNORECASE)
# The words an age's text may keep (``92 yo``, ``a ninety-two year old man``);
# any other (``92 Dorchester``: a span run into a town) fails closed.
_AGE_WORDS = frozenset(f"""
y o yo yr yrs year years old age aged male female man woman gentleman lady boy girl
yof yom yowf yowm yobf yobm yohf yohm yoaf yoam
mo mos month months wk wks week weeks day days hr hrs hour hours and s a an in his
her their late early mid over about approx nearly almost is was turned turns
st nd rd th
{_SMALL.replace("|", " ")} {_TENS.replace("|", " ")} hundred
""".split())


class AgeGenerator(SurrogateGenerator):
    """Ages over 89 -> ``90``/``90+``; others unchanged (see the module doc)."""

    labels = ("AGE",)
    # The language's words: a number and its unit, the unit's share of a
    # year (by its first two letters), ages over 89 in words, any number in
    # words, the words an age's text may hold, and ninety in words.
    number_rx: re.Pattern = _NUMBER
    unit_years: dict[str, int] = _UNIT_YEARS
    words_rx: re.Pattern = _WORDS
    any_word_number: re.Pattern = _ANY_WORD_NUMBER
    allowed: frozenset[str] = _AGE_WORDS
    ninety: str = "ninety"

    def _years(self, number: float, unit: str | None) -> float:
        if not unit:
            return number
        return number / self.unit_years[unit[:2].casefold()]

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Aggregate every age over 89 in ``value``; keep the rest of the text."""
        if policy_of(ctx) == Policy.LIMITED_DATASET:
            return value
        refuse_words(value, self.allowed, label)
        found = False

        def number(m: re.Match) -> str:
            nonlocal found
            found = True
            if self._years(float(m.group("n").replace(",", ".")),
                           m.group("unit")) <= 89:
                return m.group()
            nxt = value[m.end("n"):m.end("n") + 1]
            after = value[m.end("n"):m.end("n") + 2].casefold()
            glued = nxt in ("-", "+") or nxt.casefold() == "s" or after in (
                "'s", "st", "nd", "rd", "th")  # "100th birthday": "90th"

            return ("90" if glued else OVER_89) + m.group()[m.end("n") - m.start():]

        def words(m: re.Match) -> str:
            return with_case(self.ninety, case_of(m.group()))

        out = _NINETY_ORDINAL.sub(r"\1th", self.number_rx.sub(number, value))
        out = self.words_rx.sub(words, out)
        if not found and not self.any_word_number.search(value):
            raise SurrogateError("AGE: no number to check")
        return out
