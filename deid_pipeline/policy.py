"""What a run removes (``Policy``) and how it writes what it removes (``Mode``).

Enumerations rather than bare strings, as hl7apy's ``VALIDATION_LEVEL`` and
Beam's ``EmptyMatchTreatment`` are: a misspelt policy fails where it is
named, not as a silent default three modules later. Both are ``StrEnum``s, so
a member equals, hashes and serialises as its value: the CLI's choices, the
``policy``/``mode`` of run.json and objects pickled before keep their
spelling.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

__all__ = ["Mode", "Policy", "member_of"]

_E = TypeVar("_E", bound=StrEnum)


class Policy(StrEnum):
    """What surrogate mode must remove.

    ``SAFE_HARBOR``: all 18 HIPAA identifiers (dates shifted, ages over 89
    aggregated); ``LIMITED_DATASET``: dates, ages, towns, cities, states and
    ZIP codes kept.
    """

    SAFE_HARBOR = "safe-harbor"
    LIMITED_DATASET = "limited-dataset"


class Mode(StrEnum):
    """How a PHI span is written: the name of its rewrite operator."""

    SURROGATE = "surrogate"
    REDACT = "redact"
    TAG = "tag"


def member_of(kind: type[_E], value: str, what: str) -> _E:
    """Return ``value`` as a member of ``kind``; ValueError naming the choices.

    The message quotes a configuration value, never document text.
    """
    try:
        return kind(value)
    except ValueError:
        choices = tuple(m.value for m in kind)
        raise ValueError(f"{what} {value!r}: choose from {choices}") from None
