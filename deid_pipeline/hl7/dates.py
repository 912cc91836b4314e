"""HL7 timestamps through the narrative's date surrogates.

A header date must move by the same per-person shift as the same date in the
report text, so header dates go through the rewriter too. The rewriter is
built for dates as notes write them, so the date is offered as
``MM/DD/YYYY`` (the form every surrogate generator reads) and the answer is
put back into HL7 ``YYYY[MM[DD[HHMM[SS]]]]`` form with the original
precision; the time of day and time zone are kept (they are not PHI).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

__all__ = ["parse_written_date", "shift_ts"]

_TS = re.compile(r"(\d{4})(\d{2})?(\d{2})?(\d*(?:\.\d+)?)?([+-]\d{4})?")
_WRITTEN = (
    (re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})"), ("m", "d", "y")),
    (re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})"), ("y", "m", "d")),
    (re.compile(r"(\d{1,2})-(\d{1,2})-(\d{4})"), ("m", "d", "y")),
    (re.compile(r"(\d{4})(\d{2})(\d{2})"), ("y", "m", "d")),
)
_YEAR = re.compile(r"\d{4}")


def parse_written_date(text: str, century_of: int | None = None) -> date | None:
    """Read a date written ``M/D/YYYY``, ``YYYY-MM-DD``, ``M-D-YYYY``, ``YYYYMMDD``."""
    text = text.strip()
    for pattern, order in _WRITTEN:
        m = pattern.fullmatch(text)
        if not m:
            continue
        parts = dict(zip(order, (int(g) for g in m.groups()), strict=True))
        year = parts["y"]
        if year < 100:
            base = (century_of or 2000) // 100 * 100
            year += base
        try:
            return date(year, parts["m"], parts["d"])
        except ValueError:
            return None
    return None


def shift_ts(value: str, replace: Callable[[str, str], str]) -> str | None:
    """Return the shifted HL7 timestamp, or None when no safe value can be made.

    ``replace(text, label)`` is the rewriter's ``replace_value`` bound to the
    person. None tells the caller to empty the field (fail closed).
    """
    m = _TS.fullmatch(value.strip())
    if not m:
        return None
    year, month, day, rest, zone = m.groups()
    y = int(year)
    mo = int(month) if month else 7
    d = int(day) if day else (15 if month else 1)
    try:
        when = date(y, mo, d)
    except ValueError:
        return None
    written = replace(f"{when.month:02d}/{when.day:02d}/{when.year:04d}", "DATE")
    shifted = parse_written_date(written, when.year)
    if shifted is None:
        if _YEAR.fullmatch(written.strip()) and not month:
            return written.strip()
        return None
    out = f"{shifted.year:04d}"
    if month:
        out += f"{shifted.month:02d}"
    if day:
        out += f"{shifted.day:02d}"
    return out + (rest or "") + (zone or "")
