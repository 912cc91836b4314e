"""The one tokenizer: runs of letters, runs of digits, single other characters.

Splitting digits from letters (Liu et al. 2017) lets ``MRN12345`` or
``7/22/2006`` yield the pieces a CRF and the rules reason about. Training,
tagging and evaluation all use this module, so offsets always agree.
"""

from __future__ import annotations

import re
from functools import lru_cache
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


# What _TOKEN makes of each character: 0 space (no token), 1 letter and 2
# digit (runs of one class), 3 anything else (a token of its own). Asked of
# the expression itself, so the two cannot disagree.
_LETTER = re.compile(r"[^\W\d_]")
_DIGIT = re.compile(r"\d")


@lru_cache(maxsize=4096)
def _char_class(c: str) -> int:
    if _LETTER.fullmatch(c):
        return 1
    if _DIGIT.fullmatch(c):
        return 2
    return 3 if _TOKEN.match(c) else 0


_ASCII_CLASS = np.array([_char_class(chr(c)) for c in range(128)], np.int8)


def _classes(text: str) -> np.ndarray:
    """Each character's class (above), one per character of ``text``.

    ASCII by table; beyond it (a curly quote, an accented name) each distinct
    character is asked once, so such a text is cut as fast as plain ASCII.
    """
    if text.isascii():
        return _ASCII_CLASS[np.frombuffer(text.encode("ascii"), np.uint8)]
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
    cls = _ASCII_CLASS[np.minimum(codes, 127)]
    wide = np.flatnonzero(codes >= 128)
    distinct, which = np.unique(codes[wide], return_inverse=True)
    cls[wide] = np.array([_char_class(chr(c)) for c in distinct.tolist()],
                         np.int8)[which]
    return cls


def _bounds(text: str) -> tuple[list[int], list[int]]:
    """Token starts and ends of a non-empty ``text``, as ``_TOKEN`` cuts it.

    Found with numpy from each character's class (a token starts where the
    class changes or at every symbol, and ends likewise): tokenizing a note
    match by match spent two thirds of its time building match objects.
    """
    cls = _classes(text)
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
    if not text:
        return []
    new = tuple.__new__
    starts, ends = _bounds(text)
    return [new(Token, (text[s:e], s, e)) for s, e in zip(starts, ends)]


def token_spans(text: str) -> list[tuple[int, int]]:
    """Offsets only, for hot paths that do not need the token strings."""
    return list(zip(*_bounds(text))) if text else []


def metric_tokens(text: str) -> list[tuple[int, int]]:
    """Maximal ``[A-Za-z0-9]`` runs: the token unit of DESIGN.md's binary metric."""
    return [m.span() for m in _ALNUM_RUN.finditer(text)]
