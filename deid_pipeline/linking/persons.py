"""The persons table: one row per person, with generalised quasi-identifiers.

Quasi-identifiers (birth year, sex, ZIP3) are what a k-anonymity check needs;
they are generalised here the Safe Harbor way before they reach any output:
birth years of people over 89 are collapsed into one bucket.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable
from dataclasses import dataclass

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tokenizer import ASCII_DIGITS

_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|20\d\d)(?!\d)")
OVER_89 = "90+"


@dataclass(frozen=True, slots=True)
class QuasiIdentifiers:
    """What a document's header says about its person, already generalised."""

    birth_year: str | None = None
    sex: str | None = None
    zip3: str | None = None


def _generalise_birth_year(year: int, today: datetime.date | None = None) -> str:
    today = today or datetime.date.today()
    return OVER_89 if today.year - year > 89 else str(year)


def quasi_identifiers(
    doc: ClinicalDocument, today: datetime.date | None = None
) -> QuasiIdentifiers:
    """Birth year, sex and ZIP3 from the document's header, when it has one."""
    from deid_pipeline.surrogates.zip3 import safe_harbor_zip3

    birth_year = zip3 = None
    if doc.dictionary is not None:
        for entry in doc.dictionary.entries:
            if (
                entry.label == "DATE"
                and entry.field.startswith("PID.7")
                and not birth_year
            ):
                m = _YEAR.search(entry.value)
                if m:
                    birth_year = _generalise_birth_year(int(m.group(1)), today)
            elif entry.label == "ZIP" and entry.field.startswith("PID.11") and not zip3:
                digits = "".join(ch for ch in entry.value if ch in ASCII_DIGITS)
                if len(digits) >= 5:
                    zip3 = safe_harbor_zip3(digits[:3])
    sex = dict(doc.metadata).get("sex") or None
    return QuasiIdentifiers(birth_year, sex, zip3)


def merge_quasi(items: Iterable[QuasiIdentifiers]) -> QuasiIdentifiers:
    """One person's values across documents: the first (sorted) known value of each."""
    items = list(items)

    def first(values):
        known = sorted(v for v in values if v)
        return known[0] if known else None

    return QuasiIdentifiers(
        first(q.birth_year for q in items),
        first(q.sex for q in items),
        first(q.zip3 for q in items),
    )
