r"""A first look at an ASCII text, with Hyperscan, before a rule's scan is run.

Why: on the nursing notes most rule scans find nothing in most texts (the
address, employer and facility scans in over 95% of them), and those empty
scans were 60% of the rules' time, because ``re`` must still try every place
where a match could start (issue 45). Hyperscan reads a text once, in C,
against an automaton. Compiled in its prefilter mode it matches a superset
of what the expression matches (lookarounds and back-references are
dropped, never added), so a text it finds nothing in has no match: the scan
is skipped, and every other text is scanned as before. The spans are the
same by construction; ``tests/test_rules_gate.py`` and
``tests/test_rules_scan.py`` check it on real, hostile and generated texts.

The expression is handed over with every single-character piece written as
the ASCII class ``re`` itself says it matches
(:func:`~.ascii_classes.gate_source`), so that ``\s``, ``\w``, ``.``,
case-blindness and ``\u2019`` mean to Hyperscan what they mean to ``re``;
only texts that are ASCII are looked at. Compiling costs about a second for
all rules, so the compiled databases are kept in the data cache
(:class:`~deid_pipeline.runtime.kept_table.KeptTable`). Without Hyperscan
(no wheel for the platform), or for an expression it cannot compile, every
text is scanned, as before.
"""

from __future__ import annotations

import hashlib
import re
import threading

from deid_pipeline.runtime.kept_table import KeptTable
from deid_pipeline.tagger.rules.ascii_classes import gate_source

try:  # a wheel exists for Linux, macOS and Windows on x86-64 and ARM
    import hyperscan
except (ImportError, OSError):  # pragma: no cover - every text is then scanned
    hyperscan = None

_VERSION = getattr(hyperscan, "__version__", "none")
# Bumped when what the gate compiles from an expression changes.
_FORMAT = 1


def _gates_key() -> str:
    return f"{_FORMAT}\0{_VERSION}"


# Serialised databases by a digest of their source (one per rule scan).
GATES = KeptTable("scan-gates", _gates_key, 600)

_FLAGS = 0 if hyperscan is None else (
    hyperscan.HS_FLAG_PREFILTER | hyperscan.HS_FLAG_SINGLEMATCH
    | hyperscan.HS_FLAG_ALLOWEMPTY)
_LOCAL = threading.local()


def _scratch(database: object) -> object:
    """The scratch space of this thread for ``database``.

    Hyperscan's scratch may be used by one scan at a time, so each thread
    has its own (a few kilobytes for each rule scan). The database is held
    with it, so that no new one can take a freed one's id.
    """
    scratches = getattr(_LOCAL, "scratches", None)
    if scratches is None:
        scratches = _LOCAL.scratches = {}
    held = scratches.get(id(database))
    if held is None:
        held = scratches[id(database)] = (database, hyperscan.Scratch(database))
    return held[1]


def _found(*args: object) -> None:
    """Match callback: the scan's ``context`` list records that one was seen."""
    args[-1].append(True)


class Gate:
    """Whether an ASCII text can hold a match of one expression at all.

    The database is compiled (or read back) on first use, so a process that
    never tags (a pipeline's client) never compiles it, and a gate pickles
    as its expression.
    """

    __slots__ = ("pattern", "flags", "_key", "_database", "_lock")

    def __init__(self, pattern: str, flags: int) -> None:
        """Gate the expression ``pattern`` compiled with ``flags``."""
        self.pattern = pattern
        self.flags = flags
        self._key = hashlib.sha256(f"{flags}\0{pattern}".encode()).hexdigest()
        self._database: object | None = None
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple:
        return Gate, (self.pattern, self.flags)

    def _load(self) -> object | bool:
        """The compiled database, or False when Hyperscan cannot take it."""
        with self._lock:
            if self._database is not None:
                return self._database
            kept = GATES.get(self._key)
            database: object | bool = False
            if isinstance(kept, bytes):
                try:
                    database = hyperscan.loadb(kept, hyperscan.HS_MODE_BLOCK)
                except hyperscan.error:  # another build or CPU: compiled again
                    database = False
            new = database is False
            if new:
                database = self._compile()
            if database is not False:
                GATES.use(self._key, hyperscan.dumpb(database) if new else kept, new)
            self._database = database
            return database

    def _compile(self) -> object | bool:
        source = gate_source(self.pattern, self.flags)
        if source is None:
            return False
        flags = _FLAGS | (hyperscan.HS_FLAG_MULTILINE
                          if self.flags & re.MULTILINE else 0)
        database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        try:
            database.compile(expressions=[source.encode("ascii")], ids=[0],
                             elements=1, flags=[flags])
        except (hyperscan.error, UnicodeEncodeError):
            return False
        return database

    def passes(self, data: bytes) -> bool:
        """False only when the expression cannot match the ASCII text ``data``."""
        database = self._database
        if database is None:
            database = self._load()
        if database is False:
            return True
        seen: list[bool] = []
        try:
            database.scan(data, match_event_handler=_found, context=seen,
                          scratch=_scratch(database))
        except hyperscan.error:  # a CPU or build it cannot run on: scan everything
            self._database = False
            return True
        return bool(seen)


def gate_for(regex: re.Pattern[str]) -> Gate | None:
    """A gate for ``regex``; None where Hyperscan is not installed."""
    return None if hyperscan is None else Gate(regex.pattern, regex.flags)


_LAST: tuple[str, bytes] = ("", b"")


def ascii_bytes(text: str) -> bytes:
    """``text`` (ASCII) as bytes; the last text's are kept, as every rule reads it."""
    global _LAST  # noqa: PLW0603 - one slot, replaced whole (thread-safe)
    last = _LAST
    if last[0] is text:
        return last[1]
    data = text.encode("ascii")
    _LAST = (text, data)
    return data
