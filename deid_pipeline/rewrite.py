"""Rewrite operators and the one function that applies them to a document.

Presidio's anonymizer idea in our own code: an ``Operator`` turns one PHI
value into its replacement (``redact``, ``tag``, ``surrogate``), a name ->
class factory builds it once per process (validating its parameters up
front, not per span), and ``rewrite`` applies it to every span right to left,
so the offsets of spans still to do stay valid, returning one audit
``Replacement`` per span.

Failing closed: if an operator raises for a span, that span is written as the
``[**LABEL**]`` mask and the audit record says so; the original never passes
through because an operator failed. Logs carry labels and exception types,
never values or exception messages (which may quote PHI).
"""

from __future__ import annotations

import datetime
import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from deid_pipeline.model import PhiSpan, Replacement
from deid_pipeline.policy import Policy, member_of
from deid_pipeline.runtime.interrupts import reraise_interrupt
from deid_pipeline.runtime.progress import (
    DOCUMENT_PROGRESS,
    LONG_TEXT_CHARS,
    process_progress,
)
from deid_pipeline.surrogates import (
    DEFAULT_MAX_SHIFT_DAYS,
    DEFAULT_MIN_SHIFT_DAYS,
    ENGLISH,
    Originals,
    check_language,
    surrogate,
    warm_up,
)

logger = logging.getLogger(__name__)

_PROGRESS_SPANS = 1_000  # a long text reports its rewrite every this many spans


def _this_year() -> int:
    return datetime.date.today().year


@dataclass(frozen=True, slots=True)
class RewriteContext:
    """Who and under which rules a document is rewritten.

    ``key`` is the run's secret (never in the repr, so a logged context leaks
    nothing); ``person_id`` the linked pseudonymous person; ``policy`` what
    surrogate mode must remove (``safe-harbor``: all 18 identifiers, dates
    shifted, ages over 89 aggregated; ``limited-dataset``: dates, ages, towns,
    cities, states and ZIP codes kept). Each person's dates move back by
    ``min_shift_days``..``max_shift_days``. ``as_of_year`` is the year ages
    are reckoned from (which bare years could be the birth year of someone
    over 89; how 2-digit years expand): pin it for byte-identical re-runs
    across a new year. ``avoid``: the originals of the message or document
    (in the batch run, of all the person's documents) that no surrogate may
    spell (drawn again, keyed, when one does). ``language``: whose
    surrogates (``en``: US names, places and month-first dates; ``es``:
    Spanish ones and day-first dates, ``deid_pipeline.surrogates.es``).
    """

    key: bytes = field(repr=False)
    person_id: str
    policy: Policy = Policy.SAFE_HARBOR
    min_shift_days: int = DEFAULT_MIN_SHIFT_DAYS
    max_shift_days: int = DEFAULT_MAX_SHIFT_DAYS
    as_of_year: int = field(default_factory=_this_year)
    avoid: Originals | None = field(default=None, repr=False, compare=False)
    language: str = ENGLISH

    def __post_init__(self) -> None:
        """Reject a context that could not be used safely, at construction."""
        if not isinstance(self.key, bytes) or not self.key:
            raise ValueError("RewriteContext.key must be non-empty bytes")
        check_language(self.language)
        object.__setattr__(self, "policy", member_of(Policy, self.policy, "policy"))
        if not 0 <= self.min_shift_days <= self.max_shift_days:
            raise ValueError(
                "date shift range needs 0 <= min_shift_days <= max_shift_days")


def mask(label: str) -> str:
    """Return the redaction placeholder of a label, also the fail-closed replacement."""
    return f"[**{label}**]"


class Operator(ABC):
    """Turns one PHI value into its replacement.

    Parameters are checked once, by ``validate`` at construction, so a bad
    configuration fails at startup rather than on the millionth span.
    """

    name: ClassVar[str]

    def __init__(self, **params: Any) -> None:
        """Validate ``params`` once, here, and keep them."""
        self.validate(params)
        self._params = dict(params)  # a plain dict: operators must pickle (Beam)

    @property
    def params(self) -> Mapping[str, Any]:
        """The validated parameters, read-only."""
        return MappingProxyType(self._params)

    def validate(self, params: Mapping[str, Any]) -> None:
        """Raise ValueError for parameters this operator does not take."""
        if params:
            raise ValueError(f"operator {self.name!r} takes no parameters, got "
                             f"{sorted(params)}")

    @abstractmethod
    def apply(self, value: str, span: PhiSpan, ctx: RewriteContext) -> str:
        """Return the replacement of ``value``, the text of ``span``."""

    def __repr__(self) -> str:
        """Show the class and parameters (operators hold no secrets)."""
        return f"{type(self).__name__}({self._params!r})"


OPERATORS: dict[str, type[Operator]] = {}


def register_operator(cls: type[Operator]) -> type[Operator]:
    """Class decorator: make ``cls`` available to ``make_operator`` by its name."""
    if cls.name in OPERATORS:
        raise ValueError(f"operator {cls.name!r} registered twice")
    OPERATORS[cls.name] = cls
    return cls


def make_operator(name: str, **params: Any) -> Operator:
    """Build (and validate) the operator called ``name``."""
    try:
        cls = OPERATORS[name]
    except KeyError:
        raise ValueError(f"unknown operator {name!r}: choose from "
                         f"{sorted(OPERATORS)}") from None
    return cls(**params)


@register_operator
class RedactOperator(Operator):
    """``[**LABEL**]``: nothing of the value survives, not even its length."""

    name = "redact"

    def apply(self, value: str, span: PhiSpan, ctx: RewriteContext) -> str:
        """Return the label's mask."""
        return mask(span.label)


@register_operator
class TagOperator(Operator):
    """``<LABEL>value</LABEL>``: for review of the tagger; the PHI stays in."""

    name = "tag"

    def apply(self, value: str, span: PhiSpan, ctx: RewriteContext) -> str:
        """Return the value wrapped in its label."""
        return f"<{span.label}>{value}</{span.label}>"


@register_operator
class SurrogateOperator(Operator):
    """A realistic, keyed, format-preserving surrogate (see ``surrogates``)."""

    name = "surrogate"

    def __init__(self, **params: Any) -> None:
        """Load the surrogate data now, once per process, not on the first span."""
        super().__init__(**params)
        warm_up()

    def apply(self, value: str, span: PhiSpan, ctx: RewriteContext) -> str:
        """Return the surrogate of ``value`` for ``ctx``'s person and policy."""
        return surrogate(value, span.label, ctx)


def _sorted_checked(spans: Iterable[PhiSpan], length: int) -> tuple[PhiSpan, ...]:
    ordered = tuple(sorted(spans, key=lambda s: (s.start, s.end)))
    for prev, cur in zip(ordered, ordered[1:]):
        if cur.start < prev.end:
            raise ValueError(f"overlapping spans {prev.start}..{prev.end} and "
                             f"{cur.start}..{cur.end}: merge them before rewriting")
    if ordered and ordered[-1].end > length:
        raise ValueError(f"span {ordered[-1].start}..{ordered[-1].end} ends beyond the "
                         f"text ({length} characters)")
    return ordered


def replacement_of(operator: Operator, value: str, span: PhiSpan,
                   ctx: RewriteContext) -> str:
    """What ``operator`` writes for ``value``; the mask if it fails (fail closed)."""
    try:
        new = operator.apply(value, span, ctx)
        if not isinstance(new, str):
            raise TypeError(f"operator returned {type(new).__name__}, not str")
    except Exception as exc:  # any failure must mask, never leak
        reraise_interrupt(exc)
        logger.debug("operator %s failed on a %s span (%s); masked",
                     operator.name, span.label, type(exc).__name__)
        new = mask(span.label)
    return new


def rewrite(text: str, spans: Iterable[PhiSpan], operator: Operator,
            ctx: RewriteContext) -> tuple[str, tuple[Replacement, ...]]:
    """Apply ``operator`` to every span of ``text``, right to left.

    Spans must not overlap (merging is the tagger's job; ValueError here).
    Returns the new text and one Replacement per span, in span order. A span
    whose operator raises is masked as ``[**LABEL**]`` (fail closed).
    """
    ordered = _sorted_checked(spans, len(text))
    pieces: list[str] = []
    replacements: list[Replacement] = []
    end = len(text)
    # A long document's spans take minutes (a million surrogates): count them.
    progress = (process_progress(DOCUMENT_PROGRESS) if len(text) > LONG_TEXT_CHARS
                else None)
    with progress.busy() if progress is not None else nullcontext():
        for k, span in enumerate(reversed(ordered), 1):
            if progress is not None and not k % _PROGRESS_SPANS:
                progress.add(spans_rewritten=_PROGRESS_SPANS)
            original = text[span.start:span.end]
            new = replacement_of(operator, original, span, ctx)
            pieces.append(text[span.end:end])
            pieces.append(new)
            replacements.append(Replacement(span, original, new))
            end = span.start
    pieces.append(text[:end])
    pieces.reverse()
    replacements.reverse()
    return "".join(pieces), tuple(replacements)
