"""What the CRF encoder keeps of each distinct token text: one row of arrays.

A row holds where the text's blocks of attribute ids start in one pool and
their lengths, its layout code, its letter counts, an id of its lower-cased
word and that word. A document's texts become rows with one dict lookup each,
run in C (``map`` over the tokens); every per-text array of the document is
then a gather by rows, and the layout kernel reads the blocks from the pool
where they lie. Looking each distinct text up in Python, in a cache of base
records and another of blocks, then copying the blocks into a pool per
document took a sixth of encoding (issue 45); and a base record, ~2.4 kB of
feature strings a text, no longer stays in memory after its ids are known.

Bounded like :class:`~deid_pipeline.tagger.generations.Generations`: rows
fill the current generation up to ``limit`` texts; then it becomes the
previous one, and a text met again is copied back from it, so the working
vocabulary survives the turnover while texts seen once fall out. The turnover
happens before a document's texts are looked up, never in the middle, so
every row of one document lies in one generation's arrays.

One table per encoder, used by any thread of the process: looking rows up
and adding them holds a lock; arrays handed out stay valid (rows are only
added past them, and growing or turning over makes new arrays).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import NamedTuple

import numpy as np

# Rows a generation starts with room for (it doubles as it fills).
_FIRST_ROWS = 1024


class NewRow(NamedTuple):
    """What a text never met needs to become a row."""

    ids: np.ndarray          # its blocks of ids, one after another
    lengths: Sequence[int]   # the length of each block
    code: int                # its layout code (features._text_code)
    letters: tuple[int, int]  # its upper- and lower-case letter counts
    lower: str               # its lower-cased text


class Rows(NamedTuple):
    """A document's rows and the arrays they index (one generation's)."""

    rows: np.ndarray      # per token
    pool: np.ndarray      # the blocks of ids of every row
    start: np.ndarray     # (rows, blocks): where each block starts in pool
    length: np.ndarray    # (rows, blocks): its length
    code: np.ndarray      # per row
    letters: np.ndarray   # (rows, 2)
    word: np.ndarray      # per row: an id of its lower-cased text
    lowers: list[str]     # per row: its lower-cased text


class _Generation:
    """One generation's rows; row 0 is the pad."""

    def __init__(self, pad: NewRow, capacity: int) -> None:
        blocks = len(pad.lengths)
        self.index: dict[str, int] = {}
        self.word_ids: dict[str, int] = {}
        self.lowers: list[str] = []
        self.size = 0
        self.used = 0  # ids in the pool
        self.pool = np.empty(capacity * 48, np.int64)  # ~40 ids a text
        self.start = np.empty((capacity, blocks), np.int64)
        self.length = np.empty((capacity, blocks), np.int64)
        self.code = np.empty(capacity, np.int64)
        self.letters = np.empty((capacity, 2), np.int64)
        self.word = np.empty(capacity, np.int64)
        self.add(pad)

    def add(self, row: NewRow) -> int:
        """Append ``row``; its number."""
        at, used, count = self.size, self.used, len(row.ids)
        if at == len(self.code):
            self._grow_rows()
        while used + count > len(self.pool):
            self.pool = np.concatenate([self.pool, np.empty_like(self.pool)])
        self.pool[used:used + count] = row.ids
        lengths = np.asarray(row.lengths, np.int64)
        self.length[at] = lengths
        self.start[at] = used + np.cumsum(lengths) - lengths
        self.code[at] = row.code
        self.letters[at] = row.letters
        self.word[at] = self.word_ids.setdefault(row.lower, len(self.word_ids))
        self.lowers.append(row.lower)
        self.size, self.used = at + 1, used + count
        return at

    def _grow_rows(self) -> None:
        for name in ("start", "length", "code", "letters", "word"):
            array = getattr(self, name)
            setattr(self, name, np.concatenate([array, np.empty_like(array)]))

    def row_of(self, at: int) -> NewRow:
        """Row ``at`` as a new row (to copy it into another generation)."""
        start, length = self.start[at], self.length[at]
        return NewRow(self.pool[start[0]:start[0] + int(length.sum())].copy(),
                      length.tolist(), int(self.code[at]),
                      tuple(self.letters[at].tolist()), self.lowers[at])

    def view(self, rows: np.ndarray) -> Rows:
        n = self.size
        return Rows(rows, self.pool[:self.used], self.start[:n], self.length[:n],
                    self.code[:n], self.letters[:n], self.word[:n], self.lowers)


class TextRows:
    """Rows of the texts an encoder meets, at most ``limit`` a generation."""

    def __init__(self, pad: NewRow, limit: int) -> None:
        """``pad``: row 0 of every generation (what tokens past either end read)."""
        self.limit = limit
        self._pad = pad
        self._lock = threading.Lock()
        self._current = _Generation(pad, _FIRST_ROWS)
        self._previous: _Generation | None = None

    def __len__(self) -> int:
        """Texts held in the current generation (the pad not counted)."""
        return self._current.size - 1

    def rows(self, texts: list[str], make: Callable[[str], NewRow]) -> Rows:
        """The row of each text, adding rows (``make(text)``) for texts not held."""
        with self._lock:
            current = self._current
            if current.size + len(texts) > self.limit + 1 and current.size > 1:
                self._previous = current
                current = self._current = _Generation(self._pad, _FIRST_ROWS)
            index = current.index
            rows = np.fromiter(map(index.get, texts, repeat(-1)), np.int64, len(texts))
            for t in np.flatnonzero(rows < 0).tolist():
                text = texts[t]
                row = index.get(text)  # a text twice in the document
                if row is None:
                    row = index[text] = current.add(self._recalled(text) or make(text))
                rows[t] = row
            return current.view(rows)

    def _recalled(self, text: str) -> NewRow | None:
        previous = self._previous
        if previous is None:
            return None
        at = previous.index.get(text)
        return None if at is None else previous.row_of(at)
