"""Spanish dates: read and written day first, shifted by the person's one offset.

The English machinery (:mod:`deid_pipeline.surrogates.dates`: forms, anchors
for partial dates, bare years, the per-person offset) with Spanish layouts and
words: ``03/04/2019`` is 3 April (day first, any one of ``/``, ``-``, ``.``),
``3 de abril de 2019``, ``3-abr-2019``, ``30-marzo-2004``, ``abril de 2019``,
``abril 2019``, ``diciembre-08``, ``lunes, 3 de abril``; month names and
abbreviations ``ene feb mar abr may jun jul ago sep sept oct nov dic`` (and
``set``/``setiembre``); weekdays; ``1993 y 1994``, ``de 2010 a 2012``.

An impossible date is never written. Text that reads as no valid day-first
date takes the English fallback for unparseable dates (a range of two dates,
else digit for digit with only joining words allowed, else masked), with one
case made stricter: a number in the shape of a date (``12/31/2019``: digits
joined by ``/``, ``-`` or ``.``) is masked rather than redrawn, since a
digit-for-digit draw could write the 45th of a month.
"""

from __future__ import annotations

import calendar
import re

from deid_pipeline.surrogates.dates import (
    _LAYOUTS,
    DateGenerator,
    DateLanguage,
    shift_range,
)
from deid_pipeline.surrogates.keyed import SurrogateContext, SurrogateError

MONTHS = ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
          "septiembre", "octubre", "noviembre", "diciembre")
MONTH_ABBR = ("ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sep", "oct",
              "nov", "dic")
WEEKDAYS = ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo")
WEEKDAY_ABBR = ("lun", "mar", "mié", "jue", "vie", "sáb", "dom")
_MONTH_NUMBER = {**{m: i for i, m in enumerate(MONTHS, 1)},
                 **{m: i for i, m in enumerate(MONTH_ABBR, 1)},
                 "sept": 9, "set": 9, "setiembre": 9}
_WEEKDAY_NUMBER = {**{w: i for i, w in enumerate(WEEKDAYS)},
                   **{w: i for i, w in enumerate(WEEKDAY_ABBR)},
                   "miercoles": 2, "sabado": 5, "mie": 2, "sab": 5}

_MON = (r"(?P<mon>ene(?:ro)?|feb(?:rero)?|mar(?:zo)?|abr(?:il)?|may(?:o)?|jun(?:io)?"
        r"|jul(?:io)?|ago(?:sto)?|sep(?:tiembre|t)?|set(?:iembre)?|oct(?:ubre)?"
        r"|nov(?:iembre)?|dic(?:iembre)?)\.?")
_WD = (r"(?P<wd>lun(?:es)?|mar(?:tes)?|mi[ée](?:rcoles)?|jue(?:ves)?|vie(?:rnes)?"
       r"|s[áa]b(?:ado)?|dom(?:ingo)?)\.?")
_WD_PREFIX = rf"(?:{_WD},?\s+)?"
_TIME = (r"(?:(?:,?\s+(?:a\s+las?\s+)?|T)\d{1,2}:\d{2}(?::\d{2})?"
         r"(?:\s*(?:h|horas|hrs?)\b\.?)?)?")
_YEAR_SEP = r"(?:\s+del?\s+|,\s*|\s+|(?P=s))"

# Day first wherever the text allows either reading; year first only with a
# 4-digit year in front (ISO, HL7).
_SPANISH_LAYOUTS: tuple[tuple[str, str, bool], ...] = (
    next(layout for layout in _LAYOUTS if layout[0] == "hl7"),
    ("ddmmyyyy", r"(?P<d>\d{2})(?P<m>\d{2})(?P<y>\d{4})", True),
    ("ddmmyy", r"(?P<d>\d{2})(?P<m>\d{2})(?P<yy>\d{2})", True),
    next(layout for layout in _LAYOUTS if layout[0] == "yyyymm"),
    next(layout for layout in _LAYOUTS if layout[0] == "iso"),
    ("dmy", rf"{_WD_PREFIX}(?P<d>\d{{1,2}})(?P<s>[-/.])(?P<m>\d{{1,2}})(?P=s)"
            rf"(?:(?P<y>\d{{4}})|(?P<yy>\d{{2}})){_TIME}", False),
    ("dm", rf"{_WD_PREFIX}(?P<d>\d{{1,2}})[-/.](?P<m>\d{{1,2}}){_TIME}", False),
    ("my", r"(?P<m>\d{1,2})[-/.](?:(?P<y>\d{4})|(?P<yy>\d{2}))", False),
    ("d_mon_y", rf"{_WD_PREFIX}(?P<d>\d{{1,2}})(?P<s>\s+de\s+|\s*[-/.]\s*|\s+)"
                rf"{_MON}(?:{_YEAR_SEP}(?:(?P<y>\d{{4}})|(?P<yy>\d{{2}})))?{_TIME}",
     False),
    ("mon_y", rf"{_MON}(?:\s+del?\s+|\s*[-/.]\s*|,?\s+)(?P<y>\d{{4}})", False),
    ("mon_yy", rf"{_MON}(?:\s*[-/]\s*|\s+del?\s+|\s*')(?P<yy>\d{{2}})", False),
    ("yy_apos", r"'(?P<yy>\d{2})", False),
    ("d", r"(?P<d>\d{1,2})", False),
    ("yy", r"(?P<yy>\d{2})", False),
    ("y", r"(?P<y>\d{4})", False),
    ("mon", _MON, False),
    ("wd", _WD, False),
)

SPANISH_DATES = DateLanguage(
    months=MONTHS, month_abbr=MONTH_ABBR, weekdays=WEEKDAYS,
    weekday_abbr=WEEKDAY_ABBR, month_number=_MONTH_NUMBER,
    weekday_number=_WEEKDAY_NUMBER,
    full_months=frozenset(MONTHS) | {"setiembre"},
    layouts=tuple((name, re.compile(rx, re.IGNORECASE), padded)
                  for name, rx, padded in _SPANISH_LAYOUTS),
    qualified=re.compile(
        r"^(\s*(?:(?:en|el|la|los|desde|hasta|de|del|a|al|hacia|sobre|día|dia|"
        r"fecha|año|mes|principios|finales|mediados|aprox|aproximadamente|"
        r"circa|ca|primavera|verano|oto[ñn]o|invierno)\.?[\s-]+)*)(.*?)"
        r"([\s.,;:)\]]*)$", re.DOTALL | re.IGNORECASE),
    range_sep=re.compile(r"\s*(?:-|–|—|/|\bal?\b|\by\b|\be\b|\bhasta\b)\s*",
                         re.IGNORECASE),
    fallback_words=frozenset("""
        de del el la los las y e a al en hasta desde hacia sobre año años mes meses
        día días dia dias semana semanas principios finales mediados aprox
        aproximadamente circa ca primavera verano otoño invierno
        """.split()),
)
# Digits joined by a date separator: what must never be redrawn digit by digit.
_NUMERIC_DATE = re.compile(r"\d{1,4}\s*[-/.]\s*\d{1,2}(?:\s*[-/.]\s*\d{1,4})?")
# One numeric date, whole: d/m/y (one separator) is no range of two dates.
_ONE_NUMERIC_DATE = re.compile(r"\d{1,2}(?P<s>[-/.])\d{1,2}(?P=s)\d{2,4}")
# A day and month in digits (and a year) as the output writes them.
_DAY_MONTH = re.compile(r"(?<![\d.,/-])(?P<d>\d{1,2})(?P<s>[-/.])(?P<m>\d{1,2})"
                        r"(?:(?P=s)(?P<y>\d{2}|\d{4}))?(?![\d/-])")


def impossible_day_first(text: str) -> bool:
    """Whether ``text`` holds a day and month in digits no calendar has (31/02)."""
    for m in _DAY_MONTH.finditer(text):
        day, month = int(m.group("d")), int(m.group("m"))
        year = int(m.group("y")) if m.group("y") and len(m.group("y")) == 4 else 2000
        if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year,
                                                                        month)[1]:
            return True
    return False


class SpanishDateGenerator(DateGenerator):
    """Per-person shifted dates, read and written day first, in Spanish words."""

    language = SPANISH_DATES

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """The English steps in Spanish; an output with an impossible date fails."""
        out = super().generate(value, label, ctx)
        if out != value and impossible_day_first(out):
            raise SurrogateError("DATE: would write an impossible date")
        return out

    def unparsed(self, readings: tuple[tuple[str, str, str], ...], offset: int,
                 as_of: int, ctx: SurrogateContext) -> str:
        """A range of two dates in any reading; else the fallback, never a bad date."""
        lead, core, trail = readings[0]
        if any(_ONE_NUMERIC_DATE.fullmatch(text) for _, text, _ in readings):
            raise SurrogateError("DATE: not a valid day-first date")
        for before, text, after in readings:
            out = shift_range(text, offset, as_of, self.language)
            if out is not None:
                return before + out + after
        if _NUMERIC_DATE.search(core):
            raise SurrogateError("DATE: not a valid day-first date")
        return lead + self._digits(core, ctx) + trail

