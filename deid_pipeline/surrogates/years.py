"""What the research tables say of a person's birth: one rule for every table.

The persons table (``birth_year``) and the HL7 documents' header columns
(``birth_year``, ``birth_date_shifted``, ``age_90_or_over``) both call
:func:`birth_of`, so they cannot disagree about a person.

The birth year is the *shifted* one under Safe Harbor. Every other date of
the extract (the narrative's full dates, bare years, the visit and report
columns) is moved back by the person's shift; an original birth year beside
them would make ages at an event wrong by the shift, and set beside a shifted
date of birth it would tell a reader the shift itself. A full date of birth
moves by the shift in days, a birth year alone by the shift in whole years,
as a bare year in the text does (:func:`~deid_pipeline.surrogates.dates.
shift_bare_year`).

Age is reckoned once, from the original year and the run's ``as_of_year``
(``--as-of-year``, recorded in ``run.json``): over 89 when ``as_of_year``
minus the birth year is over 89, the same cut-off the text's bare years are
top-coded at. Under Safe Harbor such a person's birth year becomes ``90+``
and no date of birth is given: the year goes with the age. The limited data
set may keep dates and ages, and its text keeps dates unshifted, so its
tables give the original year and date of birth (and still say whether the
person is over 89).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

from deid_pipeline.policy import Policy
from deid_pipeline.surrogates.dates import over_89_cutoff, whole_years

OVER_89 = "90+"
# An HL7 TS/DT or a year alone: YYYY[MM[DD[...]]].
_BIRTH = re.compile(r"\s*(?P<y>1[89]\d\d|2[01]\d\d)(?:(?P<m>\d\d)(?P<d>\d\d)?)?")

__all__ = ["OVER_89", "Birth", "birth_of", "parse_birth"]


@dataclass(frozen=True, slots=True)
class Birth:
    """A person's birth as a research table writes it.

    ``year``: four digits, ``90+`` or None (unknown); ``date``: the date of
    birth (shifted under Safe Harbor), None when only a year is known or the
    person is over 89; ``over_89``: the age reckoned at ``as_of_year``.
    """

    year: str | None
    date: datetime.date | None
    over_89: bool


def parse_birth(value: str) -> datetime.date | int | None:
    """The date of birth of a header value, or its year when that is all it says."""
    m = _BIRTH.match(value or "")
    if m is None:
        return None
    year = int(m.group("y"))
    if m.group("d"):
        try:
            return datetime.date(year, int(m.group("m")), int(m.group("d")))
        except ValueError:
            return year
    return year


def birth_of(original: datetime.date | int | None, offset_days: int,
             as_of_year: int, policy: Policy) -> Birth:
    """Decide a person's birth year and age for every research table.

    Args:
      original: the original date of birth, or its year alone.
      offset_days: the person's date shift (negative: back in time).
      as_of_year: the year ages are reckoned at.
      policy: what the run removes (:class:`~deid_pipeline.policy.Policy`).

    """
    if original is None:
        return Birth(None, None, False)
    full = isinstance(original, datetime.date)
    year = original.year if full else original
    over_89 = year <= over_89_cutoff(as_of_year)
    if policy == Policy.LIMITED_DATASET:
        return Birth(f"{year:04d}", original if full else None, over_89)
    if over_89:
        return Birth(OVER_89, None, True)
    if not full:
        return Birth(f"{year + whole_years(offset_days):04d}", None, False)
    shifted = original + datetime.timedelta(days=offset_days)
    return Birth(f"{shifted.year:04d}", shifted, False)
