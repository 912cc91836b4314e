"""Boundary tidying of a site model's spans, by category (no language's words).

A site model learns its annotators' boundaries, but two kinds of slip recur
where a value is glued to its neighbours without a blank, and the tokens
around it look like the value's own:

- a contact taken with its cue: ``E-mail.ana@x.es``, ``mail-ana@x.es``,
  ``848428434 Fax``: an e-mail span is cut to the address (from the first
  character after the last non-address character before ``@``), a phone
  span (digits, no ``@``) loses the words of letters at either end;
- a date found from its middle: ``30-marzo-2004`` tagged from ``marzo``: a
  date span grows over digit runs joined to it by ``-``, ``/`` or ``.``.

Only spans whose label is of category CONTACT or DATE are touched; the
English model's spans never pass here (its rules and clean-ups differ).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from deid_pipeline.labels import category
from deid_pipeline.model import PhiSpan

__all__ = ["tidy_spans"]

# An address's characters before the @; a cue glued to it ("E-mail.") ends
# with a character that is not one, or with the word mail and its joiner.
_MAIL_CUE = re.compile(r"^(?:e-?mail|correo(?: electr[oó]nico)?)[\W_]*", re.I)
_LEADING_WORDS = re.compile(r"(?:[^\W\d_]+[\W_]*)+")
_TRAILING_WORDS = re.compile(r"(?:[\W_]+[^\W\d_]+)+[\W_]*$")
_JOINED_DIGITS_LEFT = re.compile(r"\d+[-/.]$")
_JOINED_DIGITS_RIGHT = re.compile(r"^[-/.]\d+")


def _contact(text: str, span: PhiSpan) -> PhiSpan | None:
    value = text[span.start:span.end]
    if "@" in value:
        cue = _MAIL_CUE.match(value)
        start = span.start + (cue.end() if cue else 0)
        end = span.end
        while end > start and text[end - 1] in ".,;:":
            end -= 1
    elif any(c.isdigit() for c in value):
        m = _LEADING_WORDS.match(value)
        lead = m.end() if m and m.end() < len(value) else 0
        m = _TRAILING_WORDS.search(value)
        trail = m.start() if m and m.start() > lead else len(value)
        start, end = span.start + lead, span.start + trail
    else:
        return span
    if start >= end:
        return None
    return dataclasses.replace(span, start=start, end=end)


def _date(text: str, span: PhiSpan) -> PhiSpan:
    start, end = span.start, span.end
    while m := _JOINED_DIGITS_LEFT.search(text, max(0, start - 12), start):
        if m.end() != start:
            break
        start = m.start()
    while m := _JOINED_DIGITS_RIGHT.match(text[end:end + 12]):
        end += m.end()
    return span if (start, end) == (span.start, span.end) else (
        dataclasses.replace(span, start=start, end=end))


def tidy_spans(text: str, spans: Iterable[PhiSpan]) -> tuple[PhiSpan, ...]:
    """``spans`` with contact and date boundaries tidied (module docstring)."""
    out = []
    for span in spans:
        kind = category(span.label)
        if kind == "CONTACT":
            span = _contact(text, span)
        elif kind == "DATE":
            span = _date(text, span)
        if span is not None:
            out.append(span)
    return tuple(out)
