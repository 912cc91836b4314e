"""Dates written in digits in Spanish notes: what a site model may miss.

A CRF learns the date formats its training notes use; MEDDOCAN's training
part writes ``22/07/2004`` a thousand times and ``22-7-04`` fifteen, so a
note that writes every date the second way loses most of them. A day, a
month and a year in digits with one separator (day first, as Spain writes
them), or a month name joined to a year (``diciembre-08``), is a date
whatever the model says: in MEDDOCAN's training and development parts the
numeric form matches a gold date 1,516 times in 1,518 (the other two: a
date the annotators missed, and one annotated as a place).
"""

from __future__ import annotations

import re

__all__ = ["MONTHS", "written_dates"]

MONTHS = frozenset(
    "enero febrero marzo abril mayo junio julio agosto septiembre setiembre "
    "octubre noviembre diciembre ene feb mar abr may jun jul ago sep sept oct "
    "nov dic".split())
_MONTH_NAMES = "|".join(sorted(MONTHS, key=lambda m: (-len(m), m)))
_NUMERIC = re.compile(
    r"(?<![\w/.-])(\d{1,2})([-/.])(\d{1,2})\2(?:\d{4}|\d{2})(?![\w/-]|\.\d)")
_MONTH_YEAR = re.compile(
    r"(?<![\w/.-])(?:(\d{1,2})[-/])?(?:%s)[-/](?:\d{4}|\d{2})(?![\w/-]|\.\d)"
    % _MONTH_NAMES, re.I)


def written_dates(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each date of ``text`` in the forms above, in order."""
    found = []
    for m in _NUMERIC.finditer(text):
        if 1 <= int(m.group(1)) <= 31 and 1 <= int(m.group(3)) <= 12:
            found.append(m.span())
    for m in _MONTH_YEAR.finditer(text):
        if m.group(1) is None or 1 <= int(m.group(1)) <= 31:
            found.append(m.span())
    return sorted(found)
