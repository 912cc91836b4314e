"""Written forms of dates, phone numbers and regional place names.

How notes write a value (``3/4/98``, ``(617) 555-0142``) is separate from
which value a document mentions: the slots pick the value, these functions
its surface form.
"""

from __future__ import annotations

import datetime as dt
import random

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)

# Date styles and how often each is the document's house style.
DATE_STYLES = (
    ("m/d", 5),
    ("m/d/yy", 4),
    ("m/d/yyyy", 4),
    ("mm/dd/yyyy", 6),
    ("mm/dd/yy", 2),
    ("dd-Mon-yy", 2),
    ("dd-MON-yyyy", 1),
    ("Month d, yyyy", 4),
    ("Mon d, yyyy", 2),
    ("Mon. d, yyyy", 1),
    ("d Month yyyy", 1),
    ("yyyy-mm-dd", 3),
    ("Month d", 2),
    ("Month dth", 1),
    ("mm-dd-yyyy", 1),
    ("m-d-yy", 1),
    ("yyyymmdd", 1),
)


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


def format_date(d: dt.date, style: str) -> str:
    """Write ``d`` in a format of :data:`DATE_STYLES` or a month-year form."""
    month, mon = MONTHS[d.month - 1], MONTHS[d.month - 1][:3]
    table = {
        "m/d": f"{d.month}/{d.day}",
        "m/d/yy": f"{d.month}/{d.day}/{d.year % 100:02d}",
        "m/d/yyyy": f"{d.month}/{d.day}/{d.year}",
        "mm/dd/yyyy": f"{d.month:02d}/{d.day:02d}/{d.year}",
        "mm/dd/yy": f"{d.month:02d}/{d.day:02d}/{d.year % 100:02d}",
        "dd-Mon-yy": f"{d.day:02d}-{mon}-{d.year % 100:02d}",
        "dd-MON-yyyy": f"{d.day:02d}-{mon.upper()}-{d.year}",
        "Month d, yyyy": f"{month} {d.day}, {d.year}",
        "Mon d, yyyy": f"{mon} {d.day}, {d.year}",
        "Mon. d, yyyy": f"{mon}. {d.day}, {d.year}",
        "d Month yyyy": f"{d.day} {month} {d.year}",
        "yyyy-mm-dd": d.isoformat(),
        "Month d": f"{month} {d.day}",
        "Month dth": f"{month} {_ordinal(d.day)}",
        "dth": _ordinal(d.day),
        "mm-dd-yyyy": f"{d.month:02d}-{d.day:02d}-{d.year}",
        "m-d-yy": f"{d.month}-{d.day}-{d.year % 100:02d}",
        "yyyymmdd": f"{d.year}{d.month:02d}{d.day:02d}",
        # month-year and year forms
        "Month yyyy": f"{month} {d.year}",
        "Mon yyyy": f"{mon} {d.year}",
        "mm/yyyy": f"{d.month:02d}/{d.year}",
        "m/yyyy": f"{d.month}/{d.year}",
        "Mon-yy": f"{mon}-{d.year % 100:02d}",
        "yyyy": str(d.year),
        "yy": f"{d.year % 100:02d}",
    }
    return table[style]


# Regional place names made of common words ("North Shore", "Oak Ridge", "Cape
# Pine"): how nurses name where a patient lives or comes from, with no cue in
# the words themselves. Built from generic parts, none taken from any corpus.
_REGION_DIRECTIONS = ("North", "South", "East", "West", "Upper", "Lower")
_REGION_LAND = ("Shore", "End", "Side", "Hills", "Valley", "Ridge", "Point",
                "Harbor", "Falls", "Woods", "Meadows", "Heights")
_REGION_LEADS = ("Cape", "Lake", "Mount", "Port", "Glen", "Bay")
_REGION_NATURE = ("Pine", "Cedar", "Oak", "Maple", "Elm", "Willow", "Stone",
                  "Rock", "Spring", "Clear", "Green", "Fox", "Deer", "Bear")


def region_name(rng: random.Random) -> str:
    """A regional place name of two common words."""
    form = rng.randrange(3)
    if form == 0:
        return f"{rng.choice(_REGION_DIRECTIONS)} {rng.choice(_REGION_LAND)}"
    if form == 1:
        return f"{rng.choice(_REGION_LEADS)} {rng.choice(_REGION_NATURE)}"
    return f"{rng.choice(_REGION_NATURE)} {rng.choice(_REGION_LAND)}"


def format_phone(digits: str, style: int) -> str:
    """Ten digits in one of several written forms (style 0..8)."""
    a, e, n = digits[:3], digits[3:6], digits[6:]
    forms = (
        f"({a}) {e}-{n}",
        f"{a}-{e}-{n}",
        f"{a}.{e}.{n}",
        f"({a}){e}-{n}",
        f"{e}-{n}",
        f"{a} {e} {n}",
        f"+1 {a} {e} {n}",
        f"{a}{e}{n}",
        f"1-{a}-{e}-{n}",
    )
    return forms[style % len(forms)]
