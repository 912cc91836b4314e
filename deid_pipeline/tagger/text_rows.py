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
happens when a document's new texts would not fit, before any is added, so
every row of one document lies in one generation's arrays.

One table per encoder, used by any thread of the process: looking rows up
and adding them holds a lock; arrays handed out stay valid (rows are only
added past them, and growing or turning over makes new arrays).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from itertools import chain, repeat
from typing import NamedTuple

import numpy as np

# Rows a generation starts with room for (it doubles as it fills).
_FIRST_ROWS = 1024


class NewRow(NamedTuple):
    """What a text never met needs to become a row."""

    ids: Sequence[int]       # its blocks of ids, one after another
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
        self.extend([""], [pad])

    def extend(self, texts: list[str], rows: list[NewRow]) -> None:
        """Append a row per text, in one go (a note brings a few new texts)."""
        at, used, count = self.size, self.used, len(rows)
        ids = np.fromiter(chain.from_iterable(row.ids for row in rows), np.int64)
        while at + count > len(self.code):
            self._grow_rows()
        while used + len(ids) > len(self.pool):
            self.pool = np.concatenate([self.pool, np.empty_like(self.pool)])
        self.pool[used:used + len(ids)] = ids
        lengths = np.array([row.lengths for row in rows], np.int64)
        ends = used + np.cumsum(lengths).reshape(lengths.shape)
        self.start[at:at + count] = ends - lengths
        self.length[at:at + count] = lengths
        self.code[at:at + count] = [row.code for row in rows]
        self.letters[at:at + count] = [row.letters for row in rows]
        word_ids = self.word_ids
        self.word[at:at + count] = [word_ids.setdefault(row.lower, len(word_ids))
                                    for row in rows]
        self.lowers.extend(row.lower for row in rows)
        self.index.update(zip(texts, range(at, at + count)))
        self.size, self.used = at + count, used + len(ids)

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
            rows, added = _looked_up(current, texts)
            if current.size + len(added) > self.limit + 1 and current.size > 1:
                self._previous = current
                current = self._current = _Generation(self._pad, _FIRST_ROWS)
                rows, added = _looked_up(current, texts)
            if added:
                current.extend(list(added), [self._recalled(text) or make(text)
                                             for text in added])
            return current.view(rows)

    def _recalled(self, text: str) -> NewRow | None:
        previous = self._previous
        if previous is None:
            return None
        at = previous.index.get(text)
        return None if at is None else previous.row_of(at)


def _looked_up(generation: _Generation, texts: list[str]
               ) -> tuple[np.ndarray, dict[str, int]]:
    """Each text's row in ``generation``; the texts it lacks, with the rows they get."""
    rows = np.fromiter(map(generation.index.get, texts, repeat(-1)), np.int64,
                       len(texts))
    added: dict[str, int] = {}  # a text twice in the document: one row
    for t in np.flatnonzero(rows < 0).tolist():
        rows[t] = added.setdefault(texts[t], generation.size + len(added))
    return rows, added
