"""Places larger than any state: never PHI under Safe Harbor.

A clinician's travel or origin question names a continent, a world region or
a country (``to rural Asia``, ``from Latin America``, ``safari in Kenya``),
and the model, unsure of a capitalised word after ``to`` or ``from``, marks
it. None was marked in the development notes (``SON WHO IS IN EUROPE``,
``from Bermuda``).
"""

from __future__ import annotations

from collections.abc import Sequence

from deid_pipeline.tagger import lexicons
from deid_pipeline.tokenizer import Token

_WORLD_REGIONS = frozenset(tuple(r.split()) for r in (
    "africa", "asia", "europe", "antarctica", "oceania", "north america",
    "south america", "central america", "latin america", "caribbean", "middle east",
    "far east", "scandinavia", "balkans", "southeast asia", "south asia", "east asia",
    "central asia", "eastern europe", "western europe", "sub - saharan africa",
    "west africa", "east africa", "north africa", "southern africa", "polynesia",
    "melanesia", "indian subcontinent"))
_REGION_FIRST_WORDS = frozenset(r[0] for r in _WORLD_REGIONS)
_REGION_LENGTHS = sorted({len(r) for r in _WORLD_REGIONS}, reverse=True)
# A country is no PHI either, written after these (``from Nicaragua``, ``safari
# in Kenya``), unless it is also a US state or town (``Georgia``, ``Lebanon``).
_COUNTRY_BEFORE = frozenset({"from", "to", "in", "visiting", "of"})
_US_PLACE_FLAGS = frozenset({"state", "stab", "uscity", "town"})


def marked_size(tokens: Sequence[Token], kinds: list[str | None], t: int) -> int:
    """How many tokens from t are a marked world region or country (0: none)."""
    word = tokens[t].text.lower()
    for size in _REGION_LENGTHS if word in _REGION_FIRST_WORDS else ():
        words = tuple(tok.text.lower() for tok in tokens[t:t + size])
        if (len(words) == size and words in _WORLD_REGIONS
                and all(k is not None for k in kinds[t:t + size])):
            return size
    flags = lexicons.load().flags(word)
    return int(tokens[t].text[:1].isupper() and "country" in flags
               and not _US_PLACE_FLAGS.intersection(flags)
               and t > 0 and tokens[t - 1].text.lower() in _COUNTRY_BEFORE)
