"""The one tokenizer: runs of letters, runs of digits, single other characters.

Splitting digits from letters (Liu et al. 2017) lets ``MRN12345`` or
``7/22/2006`` yield the pieces a CRF and the rules reason about. Training,
tagging and evaluation all use this module, so offsets always agree.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_TOKEN = re.compile(r"[^\W\d_]+|\d+|\S", re.UNICODE)
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")
ASCII_DIGITS = frozenset("0123456789")


class Token(NamedTuple):
    """A token with offsets into the text it was cut from (end exclusive).

    A named tuple, not a frozen dataclass: a note has thousands of tokens and
    a frozen dataclass's ``__init__`` made tokenizing a third slower.
    """

    text: str
    start: int
    end: int


def is_digits(text: str) -> bool:
    """True for a non-empty run of ASCII digits, the only digits read as numbers.

    ``str.isdigit()`` is also true for superscripts and other digit-like
    characters (``²``, ``①``) that ``int()`` refuses: a note with ``3/4²``
    must not cost its record.
    """
    return text.isascii() and text.isdigit()


def tokenize(text: str) -> list[Token]:
    """Cut ``text`` into tokens; ``text[t.start:t.end] == t.text`` for every token."""
    new = tuple.__new__
    return [new(Token, (m[0], *m.span())) for m in _TOKEN.finditer(text)]


def token_spans(text: str) -> list[tuple[int, int]]:
    """Offsets only, for hot paths that do not need the token strings."""
    return [m.span() for m in _TOKEN.finditer(text)]


def metric_tokens(text: str) -> list[tuple[int, int]]:
    """Maximal ``[A-Za-z0-9]`` runs: the token unit of DESIGN.md's binary metric."""
    return [m.span() for m in _ALNUM_RUN.finditer(text)]
