r"""A first look at a text, with Hyperscan, before a rule's scan is run.

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
case-blindness and ``\u2019`` mean to Hyperscan what they mean to ``re``. A
text beyond ASCII (one curly quote made every rule scan the plain, slower
way: 3.3 -> 5.7 ms a note) is read, one byte a character, by a second
database, in which a piece that can match a character beyond ASCII matches
every byte beyond ASCII and word boundaries are dropped: a looser superset,
still a gate. Compiling costs
about a second for all rules, so the compiled databases are kept in the
data cache (:class:`~deid_pipeline.runtime.kept_table.KeptTable`), under
the bytes of the code that writes them. Without Hyperscan (no wheel for the
platform), or for an expression it cannot compile, every text is scanned,
as before.
"""

from __future__ import annotations

import codecs
import hashlib
import re
import threading

from deid_pipeline.runtime import data_cache
from deid_pipeline.runtime.kept_table import KeptTable
from deid_pipeline.tagger.rules import ascii_classes
from deid_pipeline.tagger.rules.ascii_classes import gate_source

try:  # a wheel exists for Linux, macOS and Windows on x86-64 and ARM
    import hyperscan
except (ImportError, OSError):  # pragma: no cover - every text is then scanned
    hyperscan = None

_VERSION = getattr(hyperscan, "__version__", "none")
# Bumped when what the gate compiles from an expression changes.
_FORMAT = 1


def _gates_key() -> str:
    # The rewrite's and this module's bytes: a changed way of writing a gate
    # never reads a database written the old way.
    return data_cache.content_key([ascii_classes.__file__, __file__],
                                  f"{_FORMAT}\0{_VERSION}")


# Serialised databases by a digest of their source: two per rule scan, about
# 80 for the English and Spanish rules (6 MB); a process holds the file in
# memory, so it keeps no more than those and a site's or a test's few.
GATES = KeptTable("scan-gates", _gates_key, 200)

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
    """Whether a text can hold a match of one expression at all.

    Two databases: one for ASCII texts, where each piece is exactly the ASCII
    class ``re`` reads, and one (``wide``) for any other text, one byte a
    character (:func:`encoded`), where a piece that can match a character
    beyond ASCII matches every byte beyond ASCII
    (:func:`~.ascii_classes.gate_source`). Each is compiled (or read back) on
    first use, so a process that never tags (a pipeline's client) never
    compiles one, and a gate pickles as its expression.
    """

    __slots__ = ("pattern", "flags", "_databases", "_lock")

    def __init__(self, pattern: str, flags: int) -> None:
        """Gate the expression ``pattern`` compiled with ``flags``."""
        self.pattern = pattern
        self.flags = flags
        self._databases: list[object | None] = [None, None]  # ASCII, wide
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple:
        return Gate, (self.pattern, self.flags)

    def _key(self, wide: bool) -> str:
        kind = "wide" if wide else "ascii"
        return hashlib.sha256(f"{kind}\0{self.flags}\0{self.pattern}".encode()
                              ).hexdigest()

    def _load(self, wide: bool) -> object | bool:
        """The compiled database, or False when Hyperscan cannot take it."""
        with self._lock:
            if self._databases[wide] is not None:
                return self._databases[wide]
            key = self._key(wide)
            kept = GATES.get(key)
            database: object | bool = False
            if isinstance(kept, bytes):
                try:
                    database = hyperscan.loadb(kept, hyperscan.HS_MODE_BLOCK)
                except hyperscan.error:  # another build or CPU: compiled again
                    database = False
            new = database is False
            if new:
                database = self._compile(wide)
            if database is not False:
                GATES.use(key, hyperscan.dumpb(database) if new else kept, new)
            self._databases[wide] = database
            return database

    def _compile(self, wide: bool) -> object | bool:
        source = gate_source(self.pattern, self.flags, wide)
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

    def passes(self, text: str) -> bool:
        """False only when the expression cannot match anywhere in ``text``."""
        data, wide = encoded(text)
        database = self._databases[wide]
        if database is None:
            database = self._load(wide)
        if database is False:
            return True
        seen: list[bool] = []
        try:
            database.scan(data, match_event_handler=_found, context=seen,
                          scratch=_scratch(database))
        except hyperscan.error:  # a CPU or build it cannot run on: scan everything
            self._databases[wide] = False
            return True
        return bool(seen)


def gate_for(regex: re.Pattern[str]) -> Gate | None:
    """A gate for ``regex``; None where Hyperscan is not installed."""
    return None if hyperscan is None else Gate(regex.pattern, regex.flags)


def _one_byte(error: UnicodeEncodeError) -> tuple[str, int]:
    """Each character Latin-1 cannot hold as one byte beyond ASCII (0x80)."""
    return "\x80" * (error.end - error.start), error.end


codecs.register_error("deid-one-byte", _one_byte)

_LAST: tuple[str, bytes, bool] = ("", b"", False)


def encoded(text: str) -> tuple[bytes, bool]:
    """``text`` as the bytes a gate reads, and whether it is beyond ASCII.

    One byte a character, so that a piece's count of characters is its
    count of bytes: ASCII as is, every other character a byte from 0x80 up
    (its Latin-1 byte, or 0x80), which the wide database's pieces that can
    match beyond ASCII all match. The last text's are kept, as every rule
    reads it.
    """
    global _LAST  # noqa: PLW0603 - one slot, replaced whole (thread-safe)
    last = _LAST
    if last[0] is text:
        return last[1], last[2]
    wide = not text.isascii()
    data = text.encode("latin-1", "deid-one-byte") if wide else text.encode("ascii")
    _LAST = (text, data, wide)
    return data, wide
