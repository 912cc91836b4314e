"""Date recognizer: numeric and named dates, and their clinical look-alikes."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from deid_pipeline.tagger.rules.base import (
    _FLAGS,
    _G_NUM,
    Hit,
    Pattern,
    PatternRecognizer,
    _clause_start,
    _normal_words,
    _trie,
    _window_end,
    _window_start,
    _word_regex,
)

_MONTHS = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
           "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}
_DAYS_IN_MONTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_MONTH = (r"(?<![a-z])(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|"
          r"may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|"
          r"nov(?:ember)?|dec(?:ember)?)(?![a-z])(?P<dot>\.)?")
_ORD = r"(?P<ord>st|nd|rd|th)"
# Where a day's ordinal alone ends its clause: punctuation, a line's end, or
# a word that starts the next part (not "2nd dose", "3rd floor").
_CLAUSE_ENDS = (r"(?=[ \t]*(?:[,.;:)]|\r?\n|$)|[ \t]+(?:for|and|at|@|with|in|to|"
                r"after|but|secondary|d/t|due|when)(?![a-z]))")
_YEAR4 = r"(?:19|20)\d{2}"
# Not inside a number, ratio or decimal; a dot after a word is fine ("unit.8/31").
_DATE_LEFT = r"(?<![\w/])(?<![^a-z]\.)"
# Not followed by more of a number, unless by a second date ("10/15-10/16").
_DATE_RIGHT = r"(?![\d/]|\.\d|-\d(?!\d?/\d))"
_MONTH_WORDS = (
    "january", "february", "march", "april", "may", "june", "july", "august",
    "september", "october", "november", "december", "jan", "feb", "mar", "apr",
    "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "month",
)
# Shift names follow dates ("7/22 days: stable"); these units do not unmake one.
_SPAN_UNITS = frozenset({"day", "days", "wk", "wks", "week", "weeks"})
# "in" where a date is said to have happened, not a length in inches.
_IN_A_PLACE = (r"[ \t]*in[ \t]+(?:the|our|his|her|their|a|an|clinic|office|ed|er)"
               r"(?![a-z])")
# A shift's hours right before: what follows is the shift's date ("MICU 7A-7P 3/4").
_SHIFT_BEFORE = re.compile(r"(?<![\w/])(?:\d{1,2}(?::?\d\d)?[ \t]*[ap]m?[ \t]*-[ \t]*"
                           r"\d{1,2}(?::?\d\d)?[ \t]*[ap]m?"
                           # or in 24-hour clock: "0700-1900 3-4"
                           r"|(?:[01]\d|2[0-3])[0-5]\d[ \t]*-[ \t]*"
                           r"(?:[01]\d|2[0-3])[0-5]\d)"
                           r"[ \t]+$", re.IGNORECASE)
# Marks that, right before a number, make it a quantity or a setting.
_QUANTITY_MARKS = "+#~^*=<>$\u00d7"


def _valid_day(month: int, day: int, year: int | None = None) -> bool:
    """Check a calendar date; without a year February 29 is allowed."""
    if not 1 <= month <= 12 or day < 1:
        return False
    if month == 2 and day == 29 and year is not None:
        return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return day <= _DAYS_IN_MONTH[month - 1]


# The scales of clinical grades written like m/d: reflexes out of 4,
# strength out of 5, murmurs out of 6.
_GRADE_SCALES = frozenset({4, 5, 6})
# A gestational age is written in weeks and sevenths (``34 3/7 wk``).
_DAYS_A_WEEK = 7
_WEEKS_BEFORE = re.compile(r"(?<![\d/.])[1-4]\d[ \t]+$")


def _is_fraction(month: int, day: int) -> bool:
    """Tell whether m/d reads as a simple fraction (1/2, 2/3, 3/4)."""
    return day in (2, 3, 4) and month < day


class DateRecognizer(PatternRecognizer):
    """Dates in the numeric and named forms of clinical notes, never bare years.

    Every candidate must be a real calendar date. Forms without a four-digit
    year, above all ``m/d``, are what clinical shorthand imitates (``1/2 NS``,
    ``5/5 strength``, ``PSV 10/5``, ``pain 8/10``, ``CO/CI 5-6/2.5``), so
    they are dropped when a vital-sign, ventilator, exam or pain word precedes
    them in their clause, a unit or clinical word follows them, they are a
    simple fraction or a pain score, they sit in a numeric range or after a
    quantity mark, an FiO2 percentage follows, or a grade's scale word comes
    a word or two later (``4/5 deltoid strength``, ``3/6 systolic murmur``).
    A date word right before
    (``on``, ``since``, ``admitted``) outweighs the negative words. ``m-d``
    is taken only after such a word. Named months that are also words or
    abbreviations (``may``, ``mar``, ``dec``) need a year, an ordinal, a
    period or a date word before them.

    Year-less forms that leaked on unseen notes and queries: a fraction-shaped
    ``m/d`` right after a date word (``SINCE 3/4 PER FAMILY``: the
    ``fraction_before`` words) or before an event (``1/3 EXTUBATED``: the
    ``fraction_after`` words), ``m/d`` glued to a date word
    (``admitted3/14``), a range of days (``3/14-16``, one span) and a month
    alone after a ``month_before`` word (``in March``, ``SINCE SEPT``), where
    ``May`` counts only capitalised before punctuation and ``jan``/``dec``
    only with a capital.
    """

    SHORT = frozenset({"mdy", "mdy_dot2", "myy", "md", "md_dash", "md_range",
                       "md_glued"})
    # Read like m/d: a fraction, a pain score, a range of ones.
    MONTH_DAY = frozenset({"md", "md_dash", "md_range", "md_glued"})

    def __init__(self, config: Mapping[str, Any], units: Iterable[str] = ()) -> None:
        """Build the date patterns with the date words of ``config``."""
        num = {"guard": _G_NUM}
        month_words = config.get("month_before", ("in", "since"))
        month_before = _trie(month_words)
        ordinal_before = _trie(config.get("ordinal_before", ("extubated",)))
        month_initials = re.escape("".join(sorted({w[0] for w in
                                                   _normal_words(month_words)})))
        named = {"guard": r"(?<![a-z])(?=[adfjmnos])", "check_negative": False}
        full = {"check_negative": False, **num}
        patterns = [
            Pattern("iso", rf"(?<![\w/.-])(?P<y>{_YEAR4})(?P<s>[-/.])(?P<m>\d{{1,2}})"
                           rf"(?P=s)(?P<d>\d{{1,2}}){_DATE_RIGHT}", **full),
            Pattern("mdy", rf"{_DATE_LEFT}(?P<m>\d{{1,2}})(?P<s>[/-])(?P<d>\d{{1,2}})"
                           rf"(?P=s)(?P<y>\d{{4}}|\d{{2}}){_DATE_RIGHT}", **num),
            Pattern("mdy_dot", rf"{_DATE_LEFT}(?P<m>\d{{1,2}})\.(?P<d>\d{{1,2}})\."
                               rf"(?P<y>{_YEAR4}){_DATE_RIGHT}", **full),
            # "admitted 11.25.26": three dotted parts are no decimal, but a
            # version is written so ("version 2.10.14": negative_before).
            Pattern("mdy_dot2", rf"{_DATE_LEFT}(?P<m>\d{{1,2}})\.(?P<d>\d{{1,2}})\."
                                rf"(?P<y>\d{{2}}){_DATE_RIGHT}", **num),
            Pattern("dmy_sep", rf"{_DATE_LEFT}(?P<d>\d{{1,2}})(?P<s>[-/ ]){_MONTH}"
                               r"(?P=s)(?P<y>\d{4}|\d{2})(?!\w)", **full),
            Pattern("dmy", rf"{_DATE_LEFT}(?P<d>\d{{1,2}}){_ORD}?[ \t]*(?:of[ \t]+)?"
                           rf"{_MONTH}(?:[ \t]*,?[ \t]*(?P<y>{_YEAR4})(?!\w))?",
                    **full),
            Pattern("my4", rf"{_DATE_LEFT}(?P<m>\d{{1,2}})/(?P<y>{_YEAR4})"
                           f"{_DATE_RIGHT}", **full),
            Pattern("myy", rf"{_DATE_LEFT}(?P<m>\d{{1,2}})/(?P<y>3[2-9]|[4-9]\d)"
                           rf"{_DATE_RIGHT}(?!')", confidence=0.8, **num),
            Pattern("md", rf"{_DATE_LEFT}(?P<m>\d{{1,2}})/(?P<d>\d{{1,2}})"
                          f"{_DATE_RIGHT}", confidence=0.9, **num),
            # "3/14-16": a range of days in one month, one span.
            Pattern("md_range", rf"{_DATE_LEFT}(?P<m>\d{{1,2}})/(?P<d>\d{{1,2}})"
                                r"-(?P<d2>\d{1,2})(?![\d/-]|\.\d)", confidence=0.9,
                    **num),
            Pattern("md_dash", r"(?<![\w/.-])(?P<m>\d{1,2})-(?P<d>\d{1,2})"
                               r"(?![\d/-]|\.\d)", confidence=0.7, **num),
            # "admitted3/14": glued to a date word (checked in invalidate).
            Pattern("md_glued", rf"(?P<m>\d{{1,2}})/(?P<d>\d{{1,2}}){_DATE_RIGHT}",
                    confidence=0.9, guard=r"(?<=[a-z])(?=\d)"),
            Pattern("mdy_named", rf"{_MONTH}[ \t]*[,-]?[ \t]*(?P<d>\d{{1,2}}){_ORD}?"
                                 rf"(?!\w)(?:[ \t]*,?[ \t]*(?P<y>{_YEAR4})(?!\w))?",
                    **named),
            Pattern("month_year", rf"{_MONTH}[ \t]*,?[ \t]*(?:of[ \t]+)?"
                                  rf"(?P<y>{_YEAR4}|'\d{{2}})(?!\w)", **named),
            # "in March", "since SEPT": a month alone after a date preposition,
            # never before a number (the shapes above take "since Jan 5").
            Pattern("month_alone", rf"(?<![a-z])(?:{month_before})[ \t]+"
                                   rf"(?P<phi>{_MONTH})"
                                   r"(?![\w']|\.?[ \t]*[,-]?[ \t]*\d)",
                    confidence=0.8, check_negative=False,
                    guard=rf"(?<![a-z])(?=[{month_initials}])"),
            # "reintubated 24th for distress": a day's ordinal alone after an
            # event, ending its clause (not "started 2nd dose", "on 3rd floor").
            Pattern("ordinal_after",
                    rf"(?<![a-z])(?:{ordinal_before})[ \t]+(?:(?:on[ \t]+)?the[ \t]+)?"
                    rf"(?P<phi>(?P<d>\d{{1,2}}){_ORD}){_CLAUSE_ENDS}",
                    confidence=0.8, check_negative=False),
            Pattern("ordinal", rf"(?<![a-z])the[ \t]+(?P<phi>(?P<d>\d{{1,2}}){_ORD}"
                               rf"(?:[ \t]+of[ \t]+{_MONTH})?)(?!\w)", confidence=0.9,
                    needs_context=True, context=_MONTH_WORDS, check_negative=False,
                    guard=r"(?<![a-z])(?=the)"),
        ]
        units = [u for u in units if u not in _SPAN_UNITS]
        super().__init__("date", "DATE", patterns,
                         negative_before=config.get("negative_before", ()),
                         negative_after=[*units, *config.get("negative_after", ())],
                         context_before=40, context_after=40, negative_window=24)
        if self._negative_after is not None:
            # "seen 8-14 in our clinic": "in" before a place is no inch.
            self._negative_after = re.compile(
                rf"(?!{_IN_A_PLACE}){self._negative_after.pattern}", _FLAGS)
        self._count_before = _word_regex(config.get("count_before", ()))
        self._ambiguous = frozenset(config.get("ambiguous_months", ("may", "mar")))
        self._pain = _word_regex(config.get("pain_context", ("pain",)))
        # "4/5 deltoid strength", "3/6 systolic murmur": a grade whose scale
        # word comes a word or two later than negative_after looks.
        grade = _trie(config.get("grade_after", ("strength",)))
        self._grade_after = re.compile(
            rf"[ \t]+(?:[a-z]+[ \t]+){{0,2}}(?:{grade})(?![a-z])", _FLAGS)
        strong_words = config.get("strong_before", ("on", "since"))
        self._glued = frozenset(w for w in _normal_words(strong_words) if w.isalpha())
        fraction = _trie(config.get("fraction_before", ("since",)))
        self._fraction_before = re.compile(
            rf"(?<![a-z0-9])(?:{fraction})[ \t]*[:,]?[ \t]*$", _FLAGS)
        after = _trie(config.get("fraction_after", ("extubated",)))
        self._fraction_after = re.compile(rf"[ \t]*[:,]?[ \t]*(?:{after})(?![a-z])",
                                          _FLAGS)
        strong = _trie(strong_words)
        self._strong = re.compile(rf"(?<![a-z0-9])(?:{strong})[ \t]*[:,]?[ \t]*$",
                                  _FLAGS)
        dash = _trie(config.get("dash_context", ("on", "since")))
        self._dash_before = re.compile(rf"(?<![a-z0-9])(?:{dash})[ \t]+$", _FLAGS)
        follow = _trie(config.get("dash_follow", ("at", "for")))
        self._dash_after = re.compile(
            rf"[ \t]*(?:$|[.,;:)\]]|[ \t](?:{follow})(?![a-z])|[ \t]+\d)",
            _FLAGS | re.MULTILINE)
        # A real m/d and a range word just before: "8/2 - 8/10" is two dates.
        self._date_before = re.compile(
            r"(?<![\d/])(?P<m>\d{1,2})/(?P<d>\d{1,2})[ \t]*(?:-|to|thru|or|and|&)"
            r"(?:[ \t]+again)?[ \t]*$", _FLAGS)
        self._date_after = re.compile(
            r"[ \t]*(?:-|to|thru|or|and|&)[ \t]*(?P<m>\d{1,2})/(?P<d>\d{1,2})(?![\d/])",
            _FLAGS)
        self._range_before = re.compile(r"\d[ \t]*-[ \t]*$")
        self._range_after = re.compile(r"[ \t]*-[ \t]*\d(?!\d?/\d)")
        self._times_before = re.compile(r"(?:^|[\s\d])[x\u00d7][ \t]*$|%[ \t,;]*$",
                                        _FLAGS)
        # Ventilator settings come with an FiO2: "5/5, 40%", "10/5 c 35%".
        self._percent_after = re.compile(
            r"[ \t]*\)?[ \t]*[,;&]?[ \t]*(?:c|with|w/?|@|on|and)?[ \t]*\.?\d+"
            r"(?:\.\d+)?[ \t]*%", _FLAGS)
        self._clause_end = re.compile(r"[ \t]*(?:$|[.,;:)\]]|-[^\d])", re.MULTILINE)
        self._header_colon = re.compile(r":(?!\d)")
        self._after_may = re.compile(r"[ \t]*(?:$|[.,;:)]|(?:and|or|to|thru)(?![a-z]))",
                                     re.MULTILINE)

    def has_context(self, text: str, hit: Hit,
                    words: re.Pattern[str] | None = None) -> bool:
        """Count a month named in the match itself (``the 22nd of July``)."""
        return hit.group("mon") is not None or super().has_context(text, hit, words)

    def validate(self, hit: Hit, text: str) -> bool:
        """Check the month, day and year make a real calendar date."""
        name = hit.group("mon")
        month = _MONTHS[name[:3].lower()] if name else int(hit.group("m") or 0)
        year_text = hit.group("y")
        year = int(year_text) if year_text and len(year_text) == 4 else None
        if year is not None and not 1850 <= year <= 2150:
            return False
        day = hit.group("d")
        if day is None:
            return 1 <= month <= 12
        if not name and hit.pattern.name in ("ordinal", "ordinal_after"):
            return 1 <= int(day) <= 31
        last = hit.group("d2")
        if last is not None and not int(day) < int(last):
            return False  # 3/14-12 is no range of days
        return _valid_day(month, int(last or day), year)

    def invalidate(self, hit: Hit, text: str, sure: bool = False) -> bool:
        """Drop the clinical look-alikes of short dates (see the class doc).

        ``sure`` keeps a fraction-shaped m/d that nothing else around it
        calls a quantity, and an m-d without the words a dashed date needs
        (see :meth:`is_lookalike`).
        """
        start, end = hit.whole
        name = hit.pattern.name
        if name == "month_alone":
            return self._invalid_month_alone(hit, text)
        strong = self._strong_before(text, start)
        if hit.group("mon") is not None:
            return self._invalid_named(hit, text, strong)
        if name == "md_glued":
            if not self._glued_to_date_word(text, start):
                return True  # SIMV12/5, x2/3
            strong = True
        if name not in self.SHORT or (name == "mdy" and len(hit.group("y")) == 4):
            return False
        if end < len(text) and text[end].isalpha():
            return True  # 1/2NS, 10/5PEEP, 2/2cm
        lo = _window_start(text, start, 12)
        if name == "md_dash" and not sure and not (
                (self._dash_before.search(text, lo, start) or _SHIFT_BEFORE.search(
                    text, _window_start(text, start, 24), start))
                and self._dash_after.match(text, end)):
            return True  # 2-3 L, q 2-3 hours, ICP 6-7
        if self._times_before.search(text, lo, start):
            return True  # 500x12/5, 50% 5/5
        prev = text[lo:start].rstrip(" \t")
        if prev and prev[-1] in _QUANTITY_MARKS and not (
                prev[-1] == "~" and int(hit.group("d") or 0) > 12):
            return True  # +3/6 murmur, #4/10; not "d/c planned ~3/14"
        date_before = self._is_date_before(text, lo, start)
        if not date_before and (self._range_before.search(text, lo, start)
                                or self._range_after.match(text, end)):
            return True  # CO/CI 4-6/2-4
        if self._percent_after.match(text, end):
            return True  # CPAP 5/5, 40%
        if name in self.MONTH_DAY and not date_before:
            month, day = int(hit.group("m")), int(hit.group("d"))
            fraction = (_is_fraction(month, day)
                        and not self._header_colon.match(text, end))
            if fraction and not sure and not (
                    strong and self._clause_end.match(text, end)) and (
                    not self._fraction_before.search(text, lo, start)) and (
                    not self._fraction_after.match(text, end)) and (
                    not _SHIFT_BEFORE.search(text, _window_start(text, start, 24),
                                             start)):
                return True  # 1/2 NS, 3/4 of the way up; "Labs 3/4:" is a date
            if day == 10 and month <= 10 and self._pain_near(text, start, end):
                return True  # had 3/10 incisional pain
            if (day in _GRADE_SCALES and month <= day
                    and self._grade_after.match(text, end)):
                return True  # 4/5 deltoid strength, 3/6 systolic murmur
            if day == _DAYS_A_WEEK and month < day and _WEEKS_BEFORE.search(
                    text, lo, start):
                return True  # GA 34 3/7 wk: weeks and days of gestation
        if self._negative_after is not None and self._negative_after.match(
                text, end) and not (strong and not self._a_count(hit)):
            return True  # not "PICC PLACED 11/14 L BASILIC": no 11/14 liters
        if strong or date_before or self._listed_with_date(hit, text, end):
            return False
        if self._counted(hit, text, start) and self._a_count(hit):
            return True
        return self.negative_context(text, hit)

    def _counted(self, hit: Hit, text: str, start: int) -> bool:
        """Whether a word of things counted (``cultures``, ``bottles``) is before."""
        lo = _clause_start(text, start, self.negative_window)
        return self._count_before is not None and bool(
            self._count_before.search(text, lo, start))

    def _a_count(self, hit: Hit) -> bool:
        """``cultures 2/4`` counts bottles; ``cultures 2/28`` is a day no count has."""
        return hit.pattern.name not in self.MONTH_DAY or int(hit.group("d") or 0) <= 12

    def is_lookalike(self, text: str, start: int, end: int,
                     sure: bool = False) -> bool:
        """Whether a short date found by another detector is a look-alike.

        Look-alikes are what this recognizer rejects at ``start:end``: ``PSV
        10/5``, ``pain 8/10``, ``1/2 NS``. The candidate is re-read from the
        start of its run of digits and separators, so a span covering only
        ``5`` of ``10/5`` is judged as ``10/5``. Forms this recognizer does
        not read as a short date are not look-alikes: the caller keeps them.
        ``sure``: for a caller sure of its date, the shape of a fraction
        alone (``transfer to floor 2/4``) does not make one, nor a dash
        without a date's words around it (``BC drawn on 3-11``); a unit, a
        fluid or a score after it still does.
        """
        # A short date is at most 10 characters: look no further back, so a
        # hostile run of digits and slashes costs no more than a date.
        floor = max(start - 10, 0)
        # isdecimal: the digits \d matches; isdigit is also true for "²".
        while start > floor and (text[start - 1].isdecimal()
                                 or text[start - 1] in "/-"):
            start -= 1
        match = self.regex.match(text, start)
        if match is None:
            return False
        i = self._by_index[match.lastindex]
        pattern = self.patterns[i]
        if pattern.name not in self.SHORT:
            return False
        hit = Hit(pattern, match, i, self._groups[i])
        if hit.start >= end or hit.end <= start:
            return False
        # Context only: an impossible day (2/31/14) is a typo more often
        # than a look-alike, and the CRF read it as a date.
        return self.invalidate(hit, text, sure)

    def _glued_to_date_word(self, text: str, start: int) -> bool:
        """Whether the letters right before ``start`` are a date word (``admitted``)."""
        lo = max(start - 16, 0)
        i = start
        while i > lo and text[i - 1].isalpha():
            i -= 1
        return (i == 0 or not text[i - 1].isalnum()) and (
            text[i:start].lower() in self._glued)

    def _invalid_month_alone(self, hit: Hit, text: str) -> bool:
        """Drop ``may`` the verb, and ambiguous abbreviations in lower case.

        ``May`` counts only written so and before punctuation, a line end or
        a conjunction (``in May, pt``); ``Jan``, ``Mar``, ``Dec`` only with a
        capital (``since Dec``, ``SINCE SEPT``): lower case they are a name,
        a word or ``dec`` the decrease.
        """
        word = hit.group("mon") or ""
        key = word.lower()
        if key == "may":
            return word != "May" or not self._after_may.match(text, hit.end)
        if key in self._ambiguous and not hit.group("dot"):
            return word.islower()
        return False

    def _strong_before(self, text: str, start: int) -> bool:
        """Tell whether a date word (on, since, ...) or a shift's hours come before.

        The shift's hours: ``NPN 7p-7a Sept 14``.
        """
        lo = _window_start(text, start, 24)
        return bool(self._strong.search(text, lo, start)
                    or _SHIFT_BEFORE.search(text, lo, start))

    def _listed_with_date(self, hit: Hit, text: str, end: int) -> bool:
        """``cultures 2/28 and 3/1``: a day no count or setting has, then a date.

        An m/d whose day is past 12 and a real m/d after it joined by a
        range or list word outweigh the words of counts before it
        (``cultures 1/2``, ``bottles 2/4``).
        """
        if hit.pattern.name not in self.MONTH_DAY or int(hit.group("d") or 0) <= 12:
            return False
        m = self._date_after.match(text, end)
        return m is not None and _valid_day(int(m.group("m")), int(m.group("d"))) and (
            not _is_fraction(int(m.group("m")), int(m.group("d"))))

    def _is_date_before(self, text: str, lo: int, start: int) -> bool:
        """Tell whether a real m/d and a range word precede: ``8/2 - 8/10``."""
        m = self._date_before.search(text, lo, start)
        if m is None:
            return False
        month, day = int(m.group("m")), int(m.group("d"))
        return _valid_day(month, day) and not _is_fraction(month, day)

    def _pain_near(self, text: str, start: int, end: int) -> bool:
        """Tell whether a pain word is around an x/10: a score, not October."""
        if self._pain is None:
            return False
        lo = _clause_start(text, start, 40)
        hi = _window_end(text, end, 30)
        return bool(self._pain.search(text, lo, start)
                    or self._pain.search(text, end, hi))

    def _invalid_named(self, hit: Hit, text: str, strong: bool) -> bool:
        """Drop ``dec 10 mg`` (a dose), and ``may 2`` without more to go on."""
        end = hit.whole[1]
        year = hit.group("y")
        # A four-digit, apostrophe or dash-joined year settles it ("22-Dec-06");
        # "2 may 10" could still be a count, a verb and a dose.
        if year is not None and (len(year) > 2 or hit.group("s") in ("-", "/")):
            return False
        if self._negative_after is not None and self._negative_after.match(text, end):
            return True
        word = hit.group("mon").lower()
        if word in self._ambiguous and not (hit.group("ord") or hit.group("dot")):
            return not strong
        return False
