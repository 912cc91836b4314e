"""The one tokenizer: runs of letters, runs of digits, single other characters.

Splitting digits from letters (Liu et al. 2017) lets ``MRN12345`` or
``7/22/2006`` yield the pieces a CRF and the rules reason about. Training,
tagging and evaluation all use this module, so offsets always agree.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

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


# What _TOKEN makes of each ASCII character: 0 space (no token), 1 letter
# and 2 digit (runs of one class), 3 anything else (a token of its own).
# Asked of the expression itself, so the two cannot disagree.
_ASCII_CLASS = np.array(
    [0 if not _TOKEN.match(c) else 3 if len(_TOKEN.findall(c + c)) == 2
     else 1 if c.isalpha() else 2 for c in map(chr, range(128))], np.int8)


def _ascii_bounds(text: str) -> tuple[list[int], list[int]]:
    """Token starts and ends of an ASCII ``text``, as ``_TOKEN`` cuts it.

    Found with numpy from each character's class (a token starts where the
    class changes or at every symbol, and ends likewise): tokenizing a note
    match by match spent two thirds of its time building match objects.
    """
    cls = _ASCII_CLASS[np.frombuffer(text.encode("ascii"), np.uint8)]
    before = np.empty_like(cls)
    before[0] = 0
    before[1:] = cls[:-1]
    after = np.empty_like(cls)
    after[-1] = 0
    after[:-1] = cls[1:]
    symbol = cls == 3
    word = cls != 0
    starts = np.flatnonzero(word & ((cls != before) | symbol))
    ends = np.flatnonzero(word & ((cls != after) | symbol)) + 1
    return starts.tolist(), ends.tolist()


def tokenize(text: str) -> list[Token]:
    """Cut ``text`` into tokens; ``text[t.start:t.end] == t.text`` for every token."""
    new = tuple.__new__
    if text.isascii() and text:
        starts, ends = _ascii_bounds(text)
        return [new(Token, (text[s:e], s, e)) for s, e in zip(starts, ends)]
    return [new(Token, (m[0], *m.span())) for m in _TOKEN.finditer(text)]


def token_spans(text: str) -> list[tuple[int, int]]:
    """Offsets only, for hot paths that do not need the token strings."""
    if text.isascii() and text:
        return list(zip(*_ascii_bounds(text)))
    return [m.span() for m in _TOKEN.finditer(text)]


def metric_tokens(text: str) -> list[tuple[int, int]]:
    """Maximal ``[A-Za-z0-9]`` runs: the token unit of DESIGN.md's binary metric."""
    return [m.span() for m in _ALNUM_RUN.finditer(text)]
