"""DATE surrogates: one keyed shift per person, written back in the original format.

Every date of a person moves back by the same number of days (deid.pl's shift
file idea, derived from the key instead of stored), so every interval between
two of their full dates survives exactly. A date is parsed into its fields and
a *form*: the sequence of literal text and field tokens (``M`` with or without
zero padding, a month name in its case and length, a 2- or 4-digit year, an
ordinal suffix...), and the shifted date is rendered through the same form.

Partial dates shift through fixed anchors, so the day difference is still exact
between two of them of the same kind:

- no year (``7/22``, ``July 22nd``): the date in the leap reference year 2000
  (a leap year, so ``2/29`` parses); exact for dates within one year;
- month and year (``July 2006``, ``7/2006``): the 15th of that month;
- a day alone (``the 22nd``): that day of January of the reference year,
  one day further when the shift would land on the same day of another month
  (it would say the original day);
- a month alone (``July``): the 15th of that month in the reference year;
- a weekday alone (``Monday``): moved by the shift modulo 7, which is exact.

Bare years (``1992``, ``'92``) move back by the person's shift rounded to
whole years (:func:`whole_years`), so two bare years of a person keep their
difference exactly, and a bare year and a full date of the same event keep
their year difference to within one (a full date's year moves by the whole
years of the shift or one more, depending on its day; the bare year by the
nearer of the two: for a date within a few months of midsummer, the same).
Years that could be the birth year of someone over 89 (``as_of_year`` minus
90 or earlier) are first top-coded to that cut-off year, the date equivalent
of writing ``90+`` for an age, then shifted like any other, so order is kept
and every such year says one value. A bare 1- or 2-digit number of at most
31 is read as a day of the month (it may be one, and a day must not leak);
larger ones are 2-digit years. Two-digit years are the most recent such year
up to ``as_of_year``. Birth years in the research tables follow the same
shift: see :mod:`deid_pipeline.surrogates.years`.

Under the limited-dataset policy dates are kept as they are. Text no form
matches falls back to digit-for-digit replacement; text without digits that no
form matches (``Thanksgiving``) raises, so the rewrite step masks it.
"""

from __future__ import annotations

import calendar
import datetime
import functools
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass

from deid_pipeline.keys import keyed_hash
from deid_pipeline.policy import Policy
from deid_pipeline.surrogates.base import (
    DEFAULT_MAX_SHIFT_DAYS,
    DEFAULT_MIN_SHIFT_DAYS,
    SurrogateGenerator,
    as_of_year_of,
    policy_of,
    shift_range_of,
)
from deid_pipeline.surrogates.keyed import (
    SurrogateContext,
    SurrogateError,
    normalise,
    seed_of,
)
from deid_pipeline.surrogates.text import redraw, refuse_words

REFERENCE_YEAR = 2000
MIN_YEAR, MAX_YEAR = 1800, 2199

MONTHS = ("january", "february", "march", "april", "may", "june", "july",
          "august", "september", "october", "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
            "sunday")
_MONTH_NUMBER = {**{m: i for i, m in enumerate(MONTHS, 1)},
                 **{m[:3]: i for i, m in enumerate(MONTHS, 1)}, "sept": 9}
_WEEKDAY_NUMBER = {**{w: i for i, w in enumerate(WEEKDAYS)},
                   **{w[:3]: i for i, w in enumerate(WEEKDAYS)},
                   "tues": 1, "thur": 3, "thurs": 3}


YEAR_DAYS = 365.2425
# Shifts closer than this to a whole number of years are skipped: they would
# leave month and day (a birthday, a yearless "7/22") nearly or exactly as they were.
MIN_DAYS_FROM_WHOLE_YEARS = 7


def _far_from_whole_years(days: int) -> bool:
    return abs(days - round(days / YEAR_DAYS) * YEAR_DAYS) >= MIN_DAYS_FROM_WHOLE_YEARS


def whole_years(offset_days: int) -> int:
    """The person's shift rounded to whole years: what a bare year moves by.

    Rounded, not truncated, so a bare year lands on the year a date of
    midsummer of that year lands on (the middle of what a year alone means).
    """
    return round(offset_days / YEAR_DAYS)


def over_89_cutoff(as_of_year: int) -> int:
    """The latest year that could be the birth year of someone over 89."""
    return as_of_year - 90


def shift_bare_year(year: int, offset_days: int, as_of_year: int) -> int:
    """A bare year under Safe Harbor: top-coded at the over-89 cut-off, then shifted."""
    return max(year, over_89_cutoff(as_of_year)) + whole_years(offset_days)


def person_offset(ctx: SurrogateContext) -> int:
    """The context's person's date offset in days, in the context's shift range."""
    min_days, max_days = shift_range_of(ctx)
    return date_shift_days(ctx.key, ctx.person_id, min_days, max_days)


@functools.lru_cache(maxsize=1 << 14)
def date_shift_days(key: bytes, person_id: str, min_days: int = DEFAULT_MIN_SHIFT_DAYS,
                    max_days: int = DEFAULT_MAX_SHIFT_DAYS) -> int:
    """Return the person's date offset in days, in ``[-max_days, -min_days]``.

    Add it to a date (``date + timedelta(days=offset)``) to move it back in
    time. Keyed, so re-runs agree and nobody without the key can undo it.
    Offsets within a week of a whole number of years (or of zero) are
    re-drawn, so month and day always move; only a range too narrow to avoid
    them (say 365..365) keeps the first draw.
    """
    if not 0 <= min_days <= max_days:
        raise ValueError("date shift range needs 0 <= min_days <= max_days")
    width = max_days - min_days + 1
    first = None
    for attempt in range(64):
        h = int.from_bytes(keyed_hash(key, "date-shift", person_id, str(attempt)),
                           "big")
        days = min_days + h % width
        if _far_from_whole_years(days):
            return -days
        first = days if first is None else first
    return -first


# ---- forms -------------------------------------------------------------------

_MON = (r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?"
        r"|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_WD = (r"(?P<wd>mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?"
       r"|fri(?:day)?|sat(?:urday)?|sun(?:day)?)\.?")
_WD_PREFIX = rf"(?:{_WD},?\s+)?"
_ORD = r"(?P<ord>st|nd|rd|th)"
_TIME = (r"(?:(?:\s+(?:at\s+)?|\s*@\s*|T)\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
         r"(?:\s*[ap]\.?m\.?)?(?:\s*(?:Z|[+-]\d{2}:?\d{2}))?)?")
_YEAR = r"(?:(?P<y>\d{4})|'?(?P<yy>\d{2}))"

# (name, regex, zero padded unless the text shows otherwise). Tried in order;
# the first whose fields form a valid date wins, so ambiguous text takes the
# earlier (US) reading.
_LAYOUTS: tuple[tuple[str, str, bool], ...] = (
    ("hl7", r"(?P<y>\d{4})(?P<m>\d{2})(?P<d>\d{2})"
            r"(?:\d{2}(?:\d{2}(?:\d{2}(?:\.\d{1,4})?)?)?)?(?:[+-]\d{4})?", True),
    ("mmddyyyy", r"(?P<m>\d{2})(?P<d>\d{2})(?P<y>\d{4})", True),
    ("mmddyy", r"(?P<m>\d{2})(?P<d>\d{2})(?P<yy>\d{2})", True),
    ("yyyymm", r"(?P<y>\d{4})(?P<m>\d{2})", True),
    ("iso", rf"(?P<y>\d{{4}})(?P<s>[-/.])(?P<m>\d{{1,2}})(?:(?P=s)(?P<d>\d{{1,2}}))?"
            rf"{_TIME}", True),
    ("mdy", rf"{_WD_PREFIX}(?P<m>\d{{1,2}})(?P<s>[-/.])(?P<d>\d{{1,2}})(?P=s)"
            rf"(?:(?P<y>\d{{4}})|(?P<yy>\d{{2}})){_TIME}", False),
    ("dmy", rf"{_WD_PREFIX}(?P<d>\d{{1,2}})(?P<s>[-/.])(?P<m>\d{{1,2}})(?P=s)"
            rf"(?:(?P<y>\d{{4}})|(?P<yy>\d{{2}})){_TIME}", False),
    ("md", rf"{_WD_PREFIX}(?P<m>\d{{1,2}})[-/.](?P<d>\d{{1,2}}){_TIME}", False),
    ("dm", rf"{_WD_PREFIX}(?P<d>\d{{1,2}})[-/.](?P<m>\d{{1,2}}){_TIME}", False),
    ("my", r"(?P<m>\d{1,2})[-/.](?:(?P<y>\d{4})|(?P<yy>\d{2}))", False),
    ("mon_y", rf"{_MON}(?:,?\s*|[-/]\s*)(?:(?P<y>\d{{4}})|'(?P<yy>\d{{2}}))", False),
    # The year separator is a comma, spaces or the separator used before it,
    # so "July 22-25" is a range, not July 22, 2025.
    ("d_mon_y", rf"{_WD_PREFIX}(?:the\s+)?(?P<d>\d{{1,2}}){_ORD}?"
                rf"(?P<s>\s*[-/.]\s*|\s+of\s+|\s*){_MON}"
                rf"(?:(?:,\s*|\s+|(?P=s)){_YEAR})?{_TIME}", False),
    ("mon_d_y", rf"{_WD_PREFIX}{_MON}(?P<s>\s*[-/.]\s*|\s+)(?:the\s+)?"
                rf"(?P<d>\d{{1,2}}){_ORD}?(?:(?:,\s*|\s+|(?P=s)){_YEAR})?{_TIME}",
     False),
    # "Apr-00", "DEC 99": a month and two digits that cannot be its day (the
    # day reading above comes first: "Apr-12" is April 12).
    ("mon_yy", rf"{_MON}(?:[-/]\s*|\s+)(?P<yy>\d{{2}})", False),
    ("d_ord", rf"{_WD_PREFIX}(?:the\s+)?(?P<d>\d{{1,2}}){_ORD}", False),
    ("yy_apos", r"'(?P<yy>\d{2})", False),
    # Two digits alone stay two (a "'09" year read as a day must not come back
    # as "9"); one digit stays one.
    ("d", r"(?P<d>\d{1,2})", True),
    ("yy", r"(?P<yy>\d{2})", False),
    ("y", r"(?P<y>\d{4})", False),
    ("mon", _MON, False),
    ("wd", _WD, False),
)
_COMPILED = tuple((name, re.compile(rx, re.IGNORECASE), padded)
                  for name, rx, padded in _LAYOUTS)
_FIELDS = ("y", "yy", "m", "d", "mon", "ord", "wd")
_RANGE_SEP = re.compile(
    r"\s*(?:-|–|—|/|\bto\b|\bthrough\b|\bthru\b|\buntil\b|\band\b|&)\s*",
    re.IGNORECASE)
_SPACE = re.compile(r"^(\s*)(.*?)(\s*)$", re.DOTALL)
_QUALIFIED = re.compile(
    r"^(\s*(?:(?:in|on|since|by|from|until|till|at|early|mid|late|approx|about|"
    r"around|circa|ca|spring|summer|fall|autumn|winter|of)\.?[\s-]+)*)(.*?)"
    r"([\s.,;:)\]]*)$", re.DOTALL | re.IGNORECASE)
# Words the digit-for-digit fallback may keep: they name no day, person or
# place ("Q3 of 2006 (approx)", "1980s", "early 2000s").
_FALLBACK_WORDS = frozenset("""
st nd rd th of the am pm and or to thru through at on in by from since until till
q approx approximately circa ca about around early mid late before after ago
yr yrs year years wk wks week weeks day days mo mos month months hr hrs
spring summer fall winter autumn
""".split())
# A year among other text: the digit fallback must not redraw it.
_YEAR_RUN = re.compile(r"(?<!\d)(?:1[89]|20)\d\d(?!\d)")
_PUNCT = re.compile(r"^([\s(\[]*)(.*?)([\s.,;:)\]]*)$", re.DOTALL)
# What joins a date to more of one (the ``.93`` of ``11/21.93``).
_AFTER_DATE = re.compile(r"^([\s.,;:/-]*)(.*?)([\s.,;:)\]]*)$", re.DOTALL)


@dataclass(frozen=True)
class DateLanguage:
    """How one language writes dates: names, layouts, joining and fallback words.

    ``layouts`` are tried in order (the first valid reading wins, so their
    order says whether ``03/04`` is month or day first); ``full_months`` are
    the month words written in full (``May`` is both, decided by
    ``ambiguous_may``); ``qualified`` strips the words a tagger takes in
    with a date, ``range_sep`` joins the two ends of a range, and
    ``fallback_words`` are the words the digit-for-digit fallback may keep.
    """

    months: tuple[str, ...]
    month_abbr: tuple[str, ...]
    weekdays: tuple[str, ...]
    weekday_abbr: tuple[str, ...]
    month_number: Mapping[str, int]
    weekday_number: Mapping[str, int]
    full_months: frozenset[str]
    layouts: tuple[tuple[str, re.Pattern, bool], ...]
    qualified: re.Pattern
    range_sep: re.Pattern
    fallback_words: frozenset[str]
    ambiguous_may: bool = False


ENGLISH_DATES = DateLanguage(
    months=MONTHS, month_abbr=tuple(m[:3] for m in MONTHS), weekdays=WEEKDAYS,
    weekday_abbr=tuple(w[:3] for w in WEEKDAYS), month_number=_MONTH_NUMBER,
    weekday_number=_WEEKDAY_NUMBER, full_months=frozenset(MONTHS),
    layouts=_COMPILED, qualified=_QUALIFIED, range_sep=_RANGE_SEP,
    fallback_words=_FALLBACK_WORDS, ambiguous_may=True)


@dataclass(frozen=True, slots=True)
class DateText:
    """A parsed date: its fields (None when absent) and the form it was written in.

    ``form`` is a tuple of tokens: ``("lit", text)``, ``("Y4",)``, ``("Y2",)``,
    ``("M", pad)``, ``("D", pad)``, ``("MON", length, case)``,
    ``("ORD", case)``, ``("WD", length, case)``. ``pad`` is True (zero padded),
    False, or None when the text does not tell (``12/22``).
    """

    year: int | None
    month: int | None
    day: int | None
    weekday: int | None
    form: tuple[tuple, ...]
    layout: str

    @property
    def kind(self) -> str:
        """Which fields are present, e.g. ``ymd``, ``md``, ``ym``, ``y``, ``w``."""
        parts = "".join(c for c, v in zip("ymd", (self.year, self.month, self.day))
                        if v is not None)
        return parts or ("w" if self.weekday is not None else "")


def _case(word: str) -> str:
    if word.isupper() and len(word) > 1:
        return "upper"
    if word.islower():
        return "lower"
    return "title"


def _month_length(word: str, text: str, start: int, end: int,
                  language: DateLanguage = ENGLISH_DATES) -> str:
    w = word.casefold()
    if w == "sept":
        return "sept"
    if w == "may" and language.ambiguous_may:
        # "May" is both the name and its abbreviation: the neighbours decide.
        dotted = text[end:end + 1] == "."
        around = text[max(0, start - 1):start] + text[end:end + 1]
        return "abbr" if dotted or any(c in "-/" for c in around) else "full"
    return "full" if w in language.full_months else "abbr"


def _full_year(yy: int, as_of_year: int) -> int:
    """Return the latest year ending in ``yy`` that is not after ``as_of_year``."""
    year = as_of_year - as_of_year % 100 + yy
    return year - 100 if year > as_of_year else year


def _pad_of(groups: list[str], padded: bool) -> bool | None:
    """Zero padding: the text's evidence, else the layout's default (None: unknown)."""
    if any(len(g) == 2 and g[0] == "0" for g in groups):
        return True
    if any(len(g) == 1 for g in groups):
        return False
    return True if padded else None


def _valid(year: int | None, month: int | None, day: int | None) -> bool:
    if year is not None and not MIN_YEAR <= year <= MAX_YEAR:
        return False
    if month is not None and not 1 <= month <= 12:
        return False
    if day is not None:
        max_day = (calendar.monthrange(year or REFERENCE_YEAR, month)[1]
                   if month else 31)
        if not 1 <= day <= max_day:
            return False
    return True


def parse_date(text: str, as_of_year: int | None = None,
               language: DateLanguage = ENGLISH_DATES) -> DateText | None:
    """Parse ``text`` (no surrounding space) into fields and form, or None."""
    as_of_year = as_of_year or datetime.date.today().year
    for name, rx, padded in language.layouts:
        m = rx.fullmatch(text)
        if m is None:
            continue
        parsed = _from_match(m, name, padded, text, as_of_year, language)
        if parsed is not None:
            return parsed
    return None


def _from_match(m: re.Match, name: str, padded: bool, text: str,
                as_of_year: int, language: DateLanguage) -> DateText | None:
    g = {f: m.group(f) for f in _FIELDS if f in m.re.groupindex and m.group(f)}
    year = int(g["y"]) if "y" in g else (
        _full_year(int(g["yy"]), as_of_year) if "yy" in g else None)
    month = int(g["m"]) if "m" in g else (
        language.month_number[g["mon"].casefold()] if "mon" in g else None)
    day = int(g["d"]) if "d" in g else None
    weekday = (language.weekday_number[g["wd"].casefold()] if "wd" in g
               else None)
    if not _valid(year, month, day):
        return None
    pad = _pad_of([g[f] for f in ("m", "d") if f in g], padded)
    spans = sorted((m.start(f), m.end(f), f) for f in g)
    form: list[tuple] = []
    pos = 0
    for start, end, f in spans:
        if start > pos:
            form.append(("lit", text[pos:start]))
        word = g[f]
        if f == "y":
            form.append(("Y4",))
        elif f == "yy":
            form.append(("Y2",))
        elif f == "m":
            form.append(("M", pad))
        elif f == "d":
            form.append(("D", pad))
        elif f == "mon":
            form.append(("MON", _month_length(word, text, start, end, language),
                         _case(word)))
        elif f == "ord":
            form.append(("ORD", "upper" if word.isupper() else "lower"))
        else:
            form.append(("WD", "full" if len(word) > 4 else "abbr", _case(word)))
        pos = end
    if pos < len(text):
        form.append(("lit", text[pos:]))
    return DateText(year, month, day, weekday, tuple(form), name)


# ---- rendering ---------------------------------------------------------------

def _ordinal(day: int) -> str:
    if 11 <= day % 100 <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _cased(word: str, case: str) -> str:
    if case == "upper":
        return word.upper()
    if case == "lower":
        return word
    return word.capitalize()


def render(form: tuple[tuple, ...], year: int | None, month: int | None,
           day: int | None, weekday: int | None,
           language: DateLanguage = ENGLISH_DATES) -> str:
    """Write the given fields through ``form`` in ``language``'s words."""
    out = []
    for token in form:
        kind = token[0]
        if kind == "lit":
            out.append(token[1])
        elif kind == "Y4":
            out.append(f"{year:04d}")
        elif kind == "Y2":
            out.append(f"{year % 100:02d}")
        elif kind == "M":
            out.append(f"{month:02d}" if token[1] else str(month))
        elif kind == "D":
            out.append(f"{day:02d}" if token[1] else str(day))
        elif kind == "MON":
            name = language.months[month - 1]
            if token[1] == "abbr" or (token[1] == "sept" and month != 9):
                name = language.month_abbr[month - 1]
            elif token[1] == "sept":
                name = "sept"
            out.append(_cased(name, token[2]))
        elif kind == "ORD":
            suffix = _ordinal(day)
            out.append(suffix.upper() if token[1] == "upper" else suffix)
        elif kind == "WD":
            name = (language.weekdays if token[1] == "full"
                    else language.weekday_abbr)[weekday]
            out.append(_cased(name, token[2]))
    return "".join(out)


# ---- shifting ----------------------------------------------------------------

def shift_date_text(parsed: DateText, offset: int, as_of_year: int,
                    language: DateLanguage = ENGLISH_DATES) -> str:
    """Render ``parsed`` moved by ``offset`` days (see the module doc for anchors)."""
    y, m, d = parsed.year, parsed.month, parsed.day
    delta = datetime.timedelta(days=offset)
    new_wd = None if parsed.weekday is None else (parsed.weekday + offset) % 7
    kind = parsed.kind
    if kind == "y":
        return render(parsed.form, shift_bare_year(y, offset, as_of_year), None,
                      None, new_wd, language)
    if kind == "w":
        return render(parsed.form, None, None, None, new_wd, language)
    if kind == "ymd":
        new = datetime.date(y, m, d) + delta
    elif kind == "md":
        new = datetime.date(REFERENCE_YEAR, m, d) + delta
    elif kind == "ym":
        new = datetime.date(y, m, 15) + delta
    elif kind == "d":
        new = datetime.date(REFERENCE_YEAR, 1, d) + delta
        if new.day == d:  # a whole number of months: it would say the day
            new += datetime.timedelta(days=1)
    elif kind == "m":
        new = datetime.date(REFERENCE_YEAR, m, 15) + delta
    else:  # pragma: no cover - every layout yields one of the kinds above
        raise SurrogateError(f"DATE: unsupported date kind {kind!r}")
    return render(parsed.form, new.year, new.month, new.day, new_wd, language)


def shift_range(text: str, offset: int, as_of_year: int,
                language: DateLanguage = ENGLISH_DATES) -> str | None:
    """``7/22-7/25``, ``July 22 to August 3, 2006``: both ends, each in its form."""
    for sep in language.range_sep.finditer(text):
        left, right = text[:sep.start()], text[sep.end():]
        if not left or not right:
            continue
        a = parse_date(left, as_of_year, language)
        b = parse_date(right, as_of_year, language)
        if a is None or b is None:
            continue
        a, b = _inherit(a, b), _inherit(b, a)
        return (shift_date_text(a, offset, as_of_year, language) + sep.group()
                + shift_date_text(b, offset, as_of_year, language))
    return None


def _inherit(a: DateText, b: DateText) -> DateText:
    """Fill ``a``'s missing year (and month) from ``b`` so both shift alike.

    Only the fields ``a``'s form writes are rendered, so ``July 22-25`` stays
    ``Month D-D`` while the 25th shifts as a day of July.
    """
    month = a.month if a.month is not None or a.day is None else b.month
    year = a.year if a.year is not None or month is None else b.year
    if (year, month) == (a.year, a.month) or not _valid(year, month, a.day):
        return a
    return DateText(year, month, a.day, a.weekday, a.form, a.layout)


# Holidays on the same day every year, written as that day for the shift
# (``on christmas eve`` -> ``on November 20``); the others (Thanksgiving,
# Easter, Labor Day) move with the year and stay masked.
_FIXED_HOLIDAYS = {
    "christmas": "December 25", "christmas day": "December 25", "xmas": "December 25",
    "christmas eve": "December 24", "xmas eve": "December 24",
    "christmas morning": "December 25", "christmas night": "December 25",
    "new year's day": "January 1", "new years day": "January 1",
    "new year's": "January 1", "new years": "January 1",
    "new year's eve": "December 31", "new years eve": "December 31",
    "halloween": "October 31", "fourth of july": "July 4",
    "independence day": "July 4", "juneteenth": "June 19",
    "valentine's day": "February 14", "valentines day": "February 14",
    "veterans day": "November 11", "veterans' day": "November 11",
}


class DateGenerator(SurrogateGenerator):
    """Per-person shifted dates in their original format."""

    labels = ("DATE",)
    # The words and layouts dates are read and written in.
    language: DateLanguage = ENGLISH_DATES

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Shift ``value`` by the person's offset, keeping its format."""
        if policy_of(ctx) == Policy.LIMITED_DATASET:
            return value
        lead, core, trail = _SPACE.match(value).groups()
        if not core:
            raise SurrogateError("DATE: empty value")
        as_of = as_of_year_of(ctx)
        offset = person_offset(ctx)
        language = self.language
        # As tagged first; then without brackets or trailing punctuation ("7/22.");
        # then without the words a tagger may take in with a date ("on 3/4/2019",
        # "in 1998": shifted as dates, not redrawn digit by digit).
        readings = ((lead, core, trail), _PUNCT.match(value).groups(),
                    language.qualified.match(value).groups())
        holiday = _FIXED_HOLIDAYS.get(" ".join(core.casefold().split()))
        if holiday is not None and language is ENGLISH_DATES:
            readings = ((lead, holiday, trail),)
        for before, text, after in readings:
            parsed = parse_date(text, as_of, language)
            if parsed is not None:
                return before + shift_date_text(parsed, offset, as_of,
                                                language) + after
        return self.unparsed(readings, offset, as_of, ctx)

    def unparsed(self, readings: tuple[tuple[str, str, str], ...], offset: int,
                 as_of: int, ctx: SurrogateContext) -> str:
        """No reading is one date: a range of two, else the digit fallback."""
        for before, text, after in readings:
            out = shift_range(text, offset, as_of, self.language)
            if out is not None:
                return before + out + after
        lead, core, trail = readings[0]
        shifted = self._leading_date(core, offset, as_of, ctx)
        return lead + (self._digits(core, ctx) if shifted is None else shifted) + trail

    def _leading_date(self, text: str, offset: int, as_of: int,
                      ctx: SurrogateContext) -> str | None:
        """A date and what no form reads after it (``11/21.93``, ``11/3 PM``).

        Redrawn digit for digit these came out as ``50/73.73`` and ``43/0
        PM``, no dates at all. The longest leading date shifts; the rest is
        read again as a date, else redrawn or refused as the fallback does.
        """
        for cut in range(len(text) - 1, 0, -1):
            if text[cut - 1].isalnum() and text[cut].isalnum():
                continue
            head = text[:cut].rstrip()
            parsed = parse_date(head, as_of, self.language)
            if parsed is None:
                continue
            rest = text[len(head):]
            before, tail, after = _AFTER_DATE.match(rest).groups()
            again = parse_date(tail, as_of, self.language) if tail else None
            if again is not None:
                rest = before + shift_date_text(again, offset, as_of,
                                                self.language) + after
            elif any(c.isdigit() for c in rest):
                rest = self._digits(rest, ctx)
            else:
                refuse_words(rest, self.language.fallback_words, "DATE")
            return shift_date_text(parsed, offset, as_of, self.language) + rest
        return None

    def _digits(self, text: str, ctx: SurrogateContext) -> str:
        """Digit-for-digit fallback for text no date form matches.

        Only digits are redrawn, so a word the span holds would pass through:
        ``3, Dorchester`` (a tagger's date running into a town) gave ``7,
        Dorchester``. Any word but an ordinal's suffix or a joining word makes
        it fail, and the rewrite masks the span instead.
        """
        if not any(c.isdigit() for c in text):
            raise SurrogateError("DATE: unparseable date without digits")
        refuse_words(text, self.language.fallback_words, "DATE")
        if _YEAR_RUN.search(text):
            # Redrawn digit for digit, a year would come out as 7545.
            raise SurrogateError("DATE: holds a year it would redraw")
        rng = random.Random(seed_of(ctx.key, ctx.person_id, "DATE", normalise(text)))

        def make() -> str:
            return "".join(rng.choice("0123456789") if c.isdigit() else c for c in text)

        return redraw(make, text, "DATE")
