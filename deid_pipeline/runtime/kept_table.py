"""A table of derived values kept in the data cache between processes.

Why: some values a process derives at start-up are pure functions of their
key and the interpreter (a regular expression's compiled program, the plan
of a rule's scan) and cost more to derive than to read back. A
:class:`KeptTable` hands back what an earlier process derived and keeps
what this one derived, in one ``marshal`` file of the data cache
(:mod:`deid_pipeline.runtime.data_cache`) under the table's name and a key
saying which interpreter and format its values are for. The caller always
checks or rebuilds: a missing, foreign or damaged file only costs the
derivation.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

from deid_pipeline.runtime import data_cache


class KeptTable:
    """Values by key, read from the data cache once, written back when new ones came.

    A file keeps at most ``limit`` entries: those this process used, then
    those it read, in that order, so a table does not grow without bound
    when the rules change. With ``max_bytes``, the entries read are kept
    only while the bytes of all stay under it (a process holds the whole
    file in memory: a test run's many gate databases made every later
    process 17 MB bigger); those used are kept whatever their size.
    """

    def __init__(self, name: str, key: Callable[[], str], limit: int,
                 max_bytes: int | None = None) -> None:
        """``key()`` names the interpreter and format the values are for."""
        self.name = name
        self._key = key
        self.limit = limit
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._stored: dict | None = None
        self._used: dict = {}
        self._dirty = False
        self.enabled = True

    def stored(self) -> dict:
        """What the cache file held (read on first call; empty if none)."""
        if self._stored is None:
            try:
                value = data_cache.load(self.name, self._key())
            except OSError:  # a key read from files that cannot be read
                value, self.enabled = None, False
            self._stored = value if isinstance(value, dict) else {}
        return self._stored

    def get(self, key: Hashable) -> object | None:
        """The kept value of ``key``, or None; the caller checks it before use."""
        with self._lock:
            return self.stored().get(key)

    def use(self, key: Hashable, value: object, new: bool) -> None:
        """Record that this process used ``value`` for ``key`` (``new``: made here)."""
        with self._lock:
            self._used[key] = value
            self._dirty = self._dirty or new

    def used(self) -> dict:
        """What this process used, by key (a copy)."""
        with self._lock:
            return dict(self._used)

    @property
    def dirty(self) -> bool:
        """Whether a value was derived since the last :meth:`save`."""
        return self._dirty

    def save(self) -> None:
        """Write the table back if this process derived a value; else nothing."""
        with self._lock:
            if not self._dirty or not self.enabled:
                return
            self._dirty = False
            kept = dict(self._used)
            size = sum(map(_size, kept.values()))
            for key, value in self.stored().items():
                if len(kept) >= self.limit:
                    break
                if key in kept:
                    continue
                size += _size(value)
                if self.max_bytes is not None and size > self.max_bytes:
                    break
                kept[key] = value
            self.stored().update(self._used)
            if not self.enabled:
                return
        data_cache.store(self.name, self._key(), kept)


def _size(value: object) -> int:
    """The bytes a kept value holds, for ``max_bytes`` (its bytes, in tuples too)."""
    if isinstance(value, tuple):
        return sum(map(_size, value))
    return len(value) if isinstance(value, (bytes, bytearray)) else 0
