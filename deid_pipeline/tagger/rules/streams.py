r"""A recognizer's patterns scanned apart where only some of them can match.

Why: a recognizer's patterns are joined into one expression, and ``re``
tries every alternative wherever any of them could start: the names scan
tried its seventeen shapes at every word of a note in which one or two can
match, the date scan every date form at every number (issue 45). Each
pattern also has a Hyperscan gate of its own, answered from the one scan of
the note (:class:`~.gate.GateGroup`). Where only some pass, each of those is
scanned alone and the scans are walked together (:func:`_walk`), which
gives the joined expression's own matches: at the leftmost place where any
pattern matches, the match of the first pattern, in the alternation's
order, that matches there; the next looked for from where it ends. A
pattern whose gate rejects the text matches nowhere in it, so leaving it
out changes no match. Where every pattern passes, the joined scan is used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from re import _parser
from typing import Protocol

from deid_pipeline.tagger.rules.gate import gate_of, passing
from deid_pipeline.tagger.rules.scan import Scanner

Matches = Iterator[tuple[re.Match[str], dict[int, int]]]


class _Patterns(Protocol):
    """What a recognizer lends its streams (:class:`~.base.PatternRecognizer`)."""

    patterns: Sequence[object]
    flags: int

    def expression_source(self, indices: Iterable[int]) -> str: ...

    def compiled(self, indices: Iterable[int]
                 ) -> tuple[re.Pattern[str], dict[int, int]]: ...

    def scan_of(self, indices: Iterable[int], regex: re.Pattern[str]) -> Scanner: ...


class PatternStreams:
    """Each pattern of one recognizer alone: its gate, and its scan when needed."""

    def __init__(self, owner: _Patterns) -> None:
        """Gate each of ``owner``'s patterns (none for a one-pattern recognizer).

        The gates are made now, for the detector's group to compile with the
        rest; a pattern's scan is built the first time a text needs it.
        """
        self._owner = owner
        count = len(owner.patterns)
        gates = [gate_of(owner.expression_source((i,)), owner.flags)
                 for i in range(count)]
        self.gates = tuple(gates) if count > 1 and None not in gates else ()
        self._scans: dict[int, tuple[Scanner, dict[int, int]] | None] = {}

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_scans"] = {}  # built again where unpickled
        return state

    def matches(self, text: str, joined: Scanner, kept: Sequence[int]
                ) -> Matches | None:
        """The matches of ``joined`` (the patterns ``kept``) in ``text``, scanned apart.

        None where apart is no better: beyond ASCII, or every pattern passes.
        """
        if not self.gates or not text.isascii():
            return None
        if joined.gate is not None and not joined.gate.passes(text):
            return iter(())
        present = passing([self.gates[i] for i in kept], text)
        if len(present) == len(kept):
            return None
        scans = [self._scan(kept[k]) for k in present]
        if None in scans:
            return None
        return _walk(text, scans)

    def _scan(self, index: int) -> tuple[Scanner, dict[int, int]] | None:
        """Pattern ``index`` alone: its scan and group map; None if it can match empty.

        :func:`_walk` looks for each next match from where the last ended; an
        empty match has ``finditer``'s rules of its own. A scan by character
        is planned only for a pattern that cannot; any other is parsed (once).
        """
        if index not in self._scans:
            owner = self._owner
            regex, by_index = owner.compiled((index,))
            scanner = owner.scan_of((index,), regex)
            empty = not scanner.scans_by_character and _parser.parse(
                regex.pattern, regex.flags).getwidth()[0] == 0
            self._scans[index] = None if empty else (scanner, by_index)
        return self._scans[index]


def _walk(text: str, scans: list[tuple[Scanner, dict[int, int]]]) -> Matches:
    """The joined expression's matches from its patterns' own scans, in order.

    ``scans`` in the patterns' order: at one place the first wins, as the
    alternation tries them.
    """
    firsts = [scanner.cursor(text) for scanner, _ in scans]
    nowhere = len(text) + 1
    pending: list[tuple[int, re.Match[str] | None]] = [(-1, None)] * len(scans)
    pos = 0
    while True:
        best, chosen = nowhere, -1
        for k, first in enumerate(firsts):
            if pending[k][0] < pos:
                pending[k] = first(pos)
            if pending[k][0] < best:
                best, chosen = pending[k][0], k
        if chosen < 0:
            return
        scanner, by_index = scans[chosen]
        match = pending[chosen][1]
        yield match, by_index
        pos = max(scanner.end_of(match), best + 1)
