"""The generator interface: one surrogate generator per label family.

As in nedap/deidentify's ``SurrogateGenerator``: a generator gets the original
value, its label and the context, and returns the replacement, drawing all its
randomness from keyed seeds. A generator raises instead of guessing when it
cannot make a safe surrogate; the rewrite step then masks the span.
"""

from __future__ import annotations

import datetime
from abc import ABC, abstractmethod
from typing import ClassVar

from deid_pipeline.policy import Policy
from deid_pipeline.surrogates.keyed import (
    FakerPool,
    SurrogateContext,
    SurrogateError,
)

DEFAULT_MIN_SHIFT_DAYS = 365
DEFAULT_MAX_SHIFT_DAYS = 3 * 365


class SurrogateGenerator(ABC):
    """Makes format-preserving surrogates for the labels in ``labels``."""

    labels: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        """Give the generator Faker instances of its own (one per thread)."""
        self._faker = FakerPool()

    @abstractmethod
    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Return the surrogate of ``value`` (a ``label`` span) for ``ctx``'s person."""


_POLICIES = frozenset(Policy)


def policy_of(ctx: SurrogateContext) -> Policy:
    """Return the context's policy, checked: an unknown one must not pass silently."""
    policy = ctx.policy
    if policy not in _POLICIES:
        raise SurrogateError(f"unknown policy {policy!r}")
    return policy


def shift_range_of(ctx: SurrogateContext) -> tuple[int, int]:
    """(min_days, max_days) of the per-person date shift; defaults 1 to 3 years."""
    return (getattr(ctx, "min_shift_days", DEFAULT_MIN_SHIFT_DAYS),
            getattr(ctx, "max_shift_days", DEFAULT_MAX_SHIFT_DAYS))


def as_of_year_of(ctx: SurrogateContext) -> int:
    """Return the year ages are reckoned from (over-89 birth years, 2-digit years)."""
    year = getattr(ctx, "as_of_year", None)
    return int(year) if year else datetime.date.today().year
