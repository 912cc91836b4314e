r"""A first look at a text, with Hyperscan, before a rule's scan is run.

Why: on the nursing notes most rule scans find nothing in most texts (the
address, employer and facility scans in over 95% of them), and those empty
scans were 60% of the rules' time, because ``re`` must still try every place
where a match could start (issue 45). Hyperscan reads a text once, in C,
against an automaton. Compiled in its prefilter mode it matches a superset
of what the expression matches (lookarounds and back-references are
dropped, never added), so a text it finds nothing in has no match: the scan
is skipped, and every other text is scanned as before. Dropped, a
lookaround passed texts no match can be in (half the notes passed the names
gate for nothing), so those at a match's edges are read as the text they
test instead (:mod:`.lookarounds`: still a superset). The spans are the
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

The rule detector asks some 33 gates about every note, and a scan a gate
cost about 5 us (a fifth of the rules' time beyond the scans themselves).
A :class:`GateGroup` compiles its gates' expressions into one database and
reads the note once for all of them; each gate then answers from the set
of expressions found. The answers are the same as each gate's own: each
expression is compiled as it is alone (the same source and flags, one id
each).
"""

from __future__ import annotations

import codecs
import hashlib
import re
import threading
from collections.abc import Callable, Iterable, Sequence

from deid_pipeline.runtime import data_cache
from deid_pipeline.runtime.kept_table import KeptTable
from deid_pipeline.tagger.rules import ascii_classes, lookarounds
from deid_pipeline.tagger.rules.ascii_classes import UnsupportedError, gate_source

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
    return data_cache.content_key(
        [ascii_classes.__file__, lookarounds.__file__, __file__],
        f"{_FORMAT}\0{_VERSION}")


# Serialised databases by a digest of their source: two per rule scan, about
# 80 for the English and Spanish rules (6 MB), and two per group (about
# 1.4 MB each); a process holds the file in memory, so it keeps no more than
# those and a site's or a test's few.
GATES = KeptTable("scan-gates", _gates_key, 200, max_bytes=12_000_000)

_FLAGS = 0 if hyperscan is None else (
    hyperscan.HS_FLAG_PREFILTER | hyperscan.HS_FLAG_SINGLEMATCH
    | hyperscan.HS_FLAG_ALLOWEMPTY)
_LOCAL = threading.local()
# The group that answers for its gates in this thread (``GateGroup.expect``).
_ANNOUNCED = threading.local()


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


def _add_id(expression: int, *args: object) -> None:
    """Match callback: the scan's ``context`` set records the expression's id."""
    args[-1].add(expression)


def _matched(database: object, data: bytes) -> set[int] | None:
    """The ids of the expressions found in ``data``; None if the scan failed."""
    ids: set[int] = set()
    try:
        database.scan(data, match_event_handler=_add_id, context=ids,
                      scratch=_scratch(database))
    except hyperscan.error:  # a CPU or build it cannot run on
        return None
    return ids


def _read(owner: Gate | GateGroup, text: str
          ) -> tuple[set[int], frozenset[int]] | None:
    """The ids ``owner``'s database finds in ``text``, and the ids it reads.

    None when it has no database, or its scan failed (it then has none).
    """
    data, wide = encoded(text)
    loaded = owner._databases[wide]  # noqa: SLF001
    if loaded is None:
        loaded = owner._load(wide)  # noqa: SLF001
    if loaded is False:
        return None
    ids = _matched(loaded[0], data)
    if ids is None:
        owner._databases[wide] = False  # noqa: SLF001
        return None
    return ids, loaded[1]


_ONE = frozenset({0})
# A compiled database and the ids of the expressions it reads.
Loaded = tuple[object, frozenset[int]]


def _kept_or_compiled(key: str, compile_new: Callable[[], Loaded | bool]
                      ) -> Loaded | bool:
    """The database kept under ``key``, else ``compile_new()``'s; False if none.

    Kept as its bytes and the ids it reads, recorded in :data:`GATES` for the
    next process. A damaged or foreign entry is compiled again.
    """
    kept = GATES.get(key)
    loaded: Loaded | bool = False
    if (isinstance(kept, tuple) and len(kept) == 2 and isinstance(kept[0], bytes)
            and isinstance(kept[1], tuple)):
        try:
            loaded = (hyperscan.loadb(kept[0], hyperscan.HS_MODE_BLOCK),
                      frozenset(kept[1]))
        except (hyperscan.error, TypeError):  # another build or CPU, or damaged
            loaded = False
    new = loaded is False
    if new:
        loaded = compile_new()
    if loaded is not False:
        GATES.use(key, (hyperscan.dumpb(loaded[0]), tuple(sorted(loaded[1])))
                  if new else kept, new)
    return loaded


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
        # (database, the ids it reads) or False: ASCII, wide.
        self._databases: list[tuple[object, frozenset[int]] | bool | None] = [
            None, None]
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple:
        return Gate, (self.pattern, self.flags)

    def _key(self, wide: bool) -> str:
        kind = "wide" if wide else "ascii"
        return hashlib.sha256(f"{kind}\0{self.flags}\0{self.pattern}".encode()
                              ).hexdigest()

    def _load(self, wide: bool) -> tuple[object, frozenset[int]] | bool:
        """The compiled database and the ids it reads, or False when refused."""
        with self._lock:
            if self._databases[wide] is not None:
                return self._databases[wide]
            loaded = _kept_or_compiled(self._key(wide), lambda: self._compile(wide))
            self._databases[wide] = loaded
            return loaded

    def _compile(self, wide: bool) -> Loaded | bool:
        source = _gate_source(self, wide)
        if source is None:
            return False
        database = _compiled({0: (source, _flags_for(self))})
        return False if database is False else (database, _ONE)

    def passes(self, text: str) -> bool:
        """False only when the expression cannot match anywhere in ``text``."""
        group = getattr(_ANNOUNCED, "group", None)
        if group is not None:
            index = group.index.get(self)
            if index is not None:
                found = group.found(text)
                if found is not None and index in found[1]:
                    return index in found[0]
        read = _read(self, text)
        return read is None or bool(read[0])


class GateGroup:
    """Many gates' answers for one document from one Hyperscan scan.

    Each expression is compiled into one database, with its own id, source
    and flags, exactly as its gate compiles it alone (an expression it
    cannot write is left out, and its gate answers for itself). The group
    answers only for the text announced with :meth:`expect`, in the thread
    that announced it: a recognizer that scans a piece of the document, or
    a gate asked about another text, reads that text alone, as before.
    Gates answer from the group announced last in their thread (one
    detector's; two detectors may share gates). Compiled on first use and
    kept in the data cache like the gates (:data:`GATES`); when Hyperscan
    cannot compile the whole, every gate answers for itself.
    """

    def __init__(self, gates: Iterable[Gate]) -> None:
        """Answer for ``gates`` (duplicates are one gate)."""
        self.gates = tuple(dict.fromkeys(gates))
        self.index = {gate: index for index, gate in enumerate(self.gates)}
        # (database, the ids it covers), or False: ASCII, wide.
        self._databases: list[tuple[object, frozenset[int]] | bool | None] = [
            None, None]
        self._lock = threading.Lock()
        self._local = threading.local()

    def __reduce__(self) -> tuple:
        return GateGroup, (self.gates,)

    def expect(self, text: str | None) -> None:
        """Answer for ``text`` in this thread from now on (None: for no text)."""
        self._local.text = text
        self._local.found = None
        _ANNOUNCED.group = self if text is not None else None

    def found(self, text: str) -> tuple[set[int], frozenset[int]] | None:
        """The ids of the expressions that can match ``text``, and the ids read.

        None unless ``text`` is the one this thread announced (or the whole
        cannot be compiled).
        """
        local = self._local
        if getattr(local, "text", None) is not text:
            return None
        found = local.found
        if found is None:
            found = local.found = self._scan(text)
        return found or None

    def _scan(self, text: str) -> tuple[set[int], frozenset[int]] | bool:
        return _read(self, text) or False

    def _load(self, wide: bool) -> Loaded | bool:
        if wide:
            # Read one byte a character, the rules' expressions compiled
            # together took 10 s and 9 MB (alone: 1.2 s, 4 MB in all): beyond
            # ASCII each gate answers for itself.
            return False
        with self._lock:
            if self._databases[wide] is not None:
                return self._databases[wide]
            # The ids are the gates' places: the key holds both. Read from
            # the gates' expressions, so that a kept database is found
            # without writing any of them for Hyperscan.
            key = hashlib.sha256("\0".join(
                ["group", *(f"{index}:{gate._key(wide)}"
                            for index, gate in enumerate(self.gates))]
            ).encode()).hexdigest()
            loaded = _kept_or_compiled(key, lambda: self._compile(wide))
            self._databases[wide] = loaded
            return loaded

    def _compile(self, wide: bool) -> Loaded | bool:
        sources = {index: _gate_source(gate, wide)
                   for index, gate in enumerate(self.gates)}
        members = {index: (source, _flags_for(self.gates[index]))
                   for index, source in sources.items() if source is not None}
        database = _compiled(members) if members else False
        if database is False and len(members) > 1:
            # One expression Hyperscan refuses (too long, read one byte a
            # character) must not cost the others their one scan: it is
            # left out, and its gate answers for itself.
            members = {index: member for index, member in members.items()
                       if _compiled({index: member}) is not False}
            database = _compiled(members) if members else False
        return False if database is False else (database, frozenset(members))


def _compiled(expressions: dict[int, tuple[str, int]]) -> object | bool:
    """A block-mode database of ``{id: (source, flags)}``, or False if refused."""
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        database.compile(
            expressions=[source.encode("ascii") for source, _ in expressions.values()],
            ids=list(expressions), elements=len(expressions),
            flags=[flags for _, flags in expressions.values()])
    except (hyperscan.error, UnicodeEncodeError):
        return False
    return database


def _gate_source(gate: Gate, wide: bool) -> str | None:
    """What Hyperscan reads for ``gate``; None for what it cannot read.

    Its expression as explicit classes, the lookarounds at a match's edges
    as text (:mod:`.lookarounds`). Where the edges cannot be read so (or a
    back-reference would lose its group), the classes alone, every
    lookaround dropped. None beyond Hyperscan's length: one such expression
    made the whole group fail to compile, and every gate scan alone.
    """
    source = gate_source(gate.pattern, gate.flags, wide)
    if source is None:
        return None
    try:
        edged = lookarounds.widened(source)
    except (UnsupportedError, ValueError):
        edged = source
    if any(f"(?P<{name}>" not in edged for name in _GROUP_REF.findall(edged)):
        edged = source
    return edged if len(edged) <= _MAX_SOURCE else None


# Hyperscan refuses a longer expression ("Pattern length exceeds limit"):
# the names expression read one byte a character, with its wider classes.
_MAX_SOURCE = 16_000
_GROUP_REF = re.compile(r"\(\?P=(\w+)\)")


def _flags_for(gate: Gate) -> int:
    """The Hyperscan flags of a gate's expression."""
    return _FLAGS | (hyperscan.HS_FLAG_MULTILINE if gate.flags & re.MULTILINE else 0)


def group_for(gates: Iterable[Gate | None]) -> GateGroup | None:
    """A group for the gates given (None where Hyperscan is not installed)."""
    present = [gate for gate in gates if gate is not None]
    return GateGroup(present) if hyperscan is not None and present else None


def gate_for(regex: re.Pattern[str]) -> Gate | None:
    """A gate for ``regex``; None where Hyperscan is not installed."""
    return gate_of(regex.pattern, regex.flags)


def gate_of(pattern: str, flags: int) -> Gate | None:
    """A gate for the expression ``pattern`` (not compiled by ``re`` here)."""
    return None if hyperscan is None else Gate(pattern, flags)


def passing(gates: Sequence[Gate], text: str) -> list[int]:
    """Where in ``gates`` the gates that pass ``text`` stand.

    Each as :meth:`Gate.passes` answers, from the announced group's one scan
    when it covers the gate (a set lookup each, not a call).
    """
    group = getattr(_ANNOUNCED, "group", None)
    found = group.found(text) if group is not None else None
    if found is None:
        return [k for k, gate in enumerate(gates) if gate.passes(text)]
    ids, covered = found
    index = group.index
    out = []
    for k, gate in enumerate(gates):
        at = index.get(gate)
        if at in covered:
            if at in ids:
                out.append(k)
        elif gate.passes(text):
            out.append(k)
    return out


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
