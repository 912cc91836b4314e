r"""A small, fast ER7 parser: segments and raw fields, split further only on demand.

hl7apy builds an object per field, component and group (a few hundred
messages a second); a nightly load of report feeds needs ten times that. This
parser keeps each segment as a list of raw field strings (``fields[n]`` is
field ``n``, as in python-hl7's ``PID.5`` addresses, MSH included) and splits
repetitions and components only where the caller looks. Writing back is the
reverse: set a raw field, serialise with ``\\r`` terminators.

Errors are :class:`Hl7ParseError` with messages that name segment positions
and ids only, never field values, so they can be logged and counted.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import replace

from deid_pipeline.hl7.escapes import Delimiters, declared_delimiters, unescape
from deid_pipeline.hl7.framing import FramingError, normalise_segments

__all__ = [
    "DEFAULT_VERSION",
    "SUPPORTED_VERSIONS",
    "Hl7Message",
    "Hl7ParseError",
    "Segment",
    "parse_message",
    "parse_segments",
]

_SEGMENT_ID = re.compile(r"[A-Z][A-Z0-9]{2}")
# The versions hl7apy can parse: a message we write must stay readable by it.
SUPPORTED_VERSIONS = frozenset(
    {"2.1", "2.2", "2.3", "2.3.1", "2.4", "2.5", "2.5.1", "2.6", "2.7", "2.8", "2.8.1",
     "2.8.2"})
# The version hl7apy assumes when MSH-12 is absent: an empty MSH-12 is read as
# it, and written so, or hl7apy would refuse the output.
DEFAULT_VERSION = "2.5"
# Segments a message of a given type cannot do without; their absence is how a
# message cut short in transit shows (an ORU that ends before its OBR).
_REQUIRED = {"ORU": ("OBR",), "MDM": ("PID", "TXA"), "ADT": ("PID",)}


class Hl7ParseError(ValueError):
    """The message cannot be parsed; the message text names positions, not values."""


class Segment:
    """One segment: ``fields[0]`` is the id, ``fields[n]`` the raw field ``n``.

    For MSH, ``fields[1]`` is the field separator and ``fields[2]`` the
    encoding characters, so numbering matches the standard for every segment.
    """

    __slots__ = ("fields", "name")

    def __init__(self, name: str, fields: list[str]) -> None:
        """Hold the segment id and its raw fields (``fields[0]`` is the id)."""
        self.name = name
        self.fields = fields

    def __repr__(self) -> str:
        """Id and field count only: no field values, so safe to log."""
        return f"Segment({self.name}, {len(self.fields) - 1} fields)"

    def get(self, n: int) -> str:
        """Raw field ``n`` ('' when absent)."""
        fields = self.fields
        return fields[n] if n < len(fields) else ""

    def set(self, n: int, value: str) -> None:
        """Replace raw field ``n``, padding with empty fields if needed."""
        fields = self.fields
        if n >= len(fields):
            if not value:
                return
            fields.extend([""] * (n + 1 - len(fields)))
        fields[n] = value

    def to_er7(self, field_separator: str) -> str:
        """Serialise the segment as ER7 (without terminator)."""
        if self.name == "MSH":
            return "MSH" + field_separator + field_separator.join(self.fields[2:])
        return field_separator.join(self.fields)


class Hl7Message:
    """A parsed message: delimiters, segments in order, and MSH shortcuts.

    ``quirks`` names what a real sender did that the standard does not allow
    and the parser accepted (see :data:`QUIRKS`), in the order met.
    """

    __slots__ = ("delimiters", "quirks", "segments")

    def __init__(self, delimiters: Delimiters, segments: list[Segment],
                 quirks: tuple[str, ...] = ()) -> None:
        """Hold the delimiters, the segments (MSH first) and the accepted quirks."""
        self.delimiters = delimiters
        self.segments = segments
        self.quirks = quirks

    def __repr__(self) -> str:
        """Type and segment count only: safe to log."""
        return f"Hl7Message({self.message_type}, {len(self.segments)} segments)"

    @property
    def msh(self) -> Segment:
        """The MSH segment (always first)."""
        return self.segments[0]

    def first(self, name: str) -> Segment | None:
        """Return the first segment with id ``name``, if any."""
        for seg in self.segments:
            if seg.name == name:
                return seg
        return None

    def named(self, name: str) -> Iterator[Segment]:
        """Iterate over the segments with id ``name``."""
        return (seg for seg in self.segments if seg.name == name)

    def component(self, raw: str, n: int) -> str:
        """Return component ``n`` (1-based) of ``raw``'s first repetition, unescaped."""
        d = self.delimiters
        first = raw.split(d.repetition, 1)[0]
        parts = first.split(d.component)
        return unescape(parts[n - 1], d) if n <= len(parts) else ""

    @property
    def message_type(self) -> str:
        """MSH-9 as ``ORU^R01`` (code and trigger event)."""
        d = self.delimiters
        parts = self.msh.get(9).split(d.repetition, 1)[0].split(d.component)
        return d.component.join(p for p in parts[:2])

    @property
    def message_code(self) -> str:
        """MSH-9.1, upper case (``ORU``)."""
        return self.component(self.msh.get(9), 1).strip().upper()

    @property
    def control_id(self) -> str:
        """MSH-10, the message control id (document ids start with it)."""
        return unescape(self.msh.get(10), self.delimiters).strip()

    @property
    def version(self) -> str:
        """MSH-12.1 (``2.5``), empty when absent."""
        return self.component(self.msh.get(12), 1).strip()

    def to_er7(self) -> str:
        r"""Serialise the message with ``\r`` after every segment."""
        sep = self.delimiters.field
        return "\r".join(seg.to_er7(sep) for seg in self.segments) + "\r"


def _delimiters(msh: str) -> Delimiters:
    if len(msh) < 8:
        raise Hl7ParseError("segment 1 (MSH): encoding characters missing")
    sep = msh[3]
    if sep.isalnum() or sep.isspace():
        raise Hl7ParseError("segment 1 (MSH): invalid field separator")
    end = msh.find(sep, 4)
    enc = msh[4:] if end < 0 else msh[4:end]
    if len(enc) not in (4, 5):
        raise Hl7ParseError(f"segment 1 (MSH): {len(enc)} encoding characters")
    d = declared_delimiters(sep, enc)
    if d is None:
        raise Hl7ParseError("segment 1 (MSH): invalid encoding characters")
    return d


def parse_segments(segments: list[str], quirks: tuple[str, ...] = ()) -> Hl7Message:
    """Parse already separated segment strings (the first one being MSH).

    ``quirks`` are those noted while the segments were separated; the header
    repairs of :func:`_accept` are added to them.
    """
    if not segments or not segments[0].startswith("MSH"):
        raise Hl7ParseError("message does not start with an MSH segment")
    d = _delimiters(segments[0])
    sep = d.field
    parsed: list[Segment] = []
    for index, line in enumerate(segments, 1):
        name = line[:3]
        if not _SEGMENT_ID.fullmatch(name) or (len(line) > 3 and line[3] != sep):
            raise Hl7ParseError(f"segment {index}: invalid segment id")
        if name == "MSH":
            if index != 1:
                raise Hl7ParseError(f"segment {index} (MSH): second MSH in one message")
            rest = line[4:].split(sep)
            parsed.append(Segment("MSH", ["MSH", sep, *rest]))
        else:
            parsed.append(Segment(name, line.split(sep)))
    message = Hl7Message(d, parsed, quirks)
    _accept(message)
    _check(message)
    return message


# What a real sender does that the standard does not allow, and what the
# parser does instead of refusing the message (docs/hl7-audit.md):
QUIRKS = {
    "msh2_truncation_dropped": "MSH-2 has 5 encoding characters before v2.7: the "
                               "fifth (truncation) is dropped, as v2.7 defines it",
    "msh10_generated": "MSH-10 empty: a control id is made from the message hash",
    "msh12_default": f"MSH-12 empty or absent: read and written as {DEFAULT_VERSION}",
    "segment_wrapped": "a header segment continues on the next line: joined",
    "segments_on_one_line": "the whole message on one line: cut at segment ids",
}


def _accept(message: Hl7Message) -> None:
    """Repair, and note in ``message.quirks``, the header faults senders make.

    Each repair is what hl7apy or HAPI reads the message as, written out so
    the output parses with hl7apy too; the control id made for an empty
    MSH-10 is a hash of the whole message, so a re-run makes the same one.
    """
    msh, d = message.msh, message.delimiters
    noted = list(message.quirks)
    if not msh.get(12).strip():
        msh.set(12, DEFAULT_VERSION)
        noted.append("msh12_default")
    if d.truncation and message.version < "2.7":
        message.delimiters = replace(d, truncation="")
        msh.set(2, msh.get(2)[:4])
        noted.append("msh2_truncation_dropped")
    if not message.control_id and message.message_code:
        digest = hashlib.sha256(message.to_er7().encode("utf-8")).hexdigest()
        msh.set(10, f"H{digest[:19].upper()}")
        noted.append("msh10_generated")
    message.quirks = tuple(noted)


def _check(message: Hl7Message) -> None:
    msh = message.msh
    if not message.message_code:
        raise Hl7ParseError("segment 1 (MSH): MSH-9 message type empty")
    # Like hl7apy: a present MSH-12 must be a version it knows, or the output
    # would not parse (an empty or absent one was made the default above).
    if message.version not in SUPPORTED_VERSIONS:
        raise Hl7ParseError("segment 1 (MSH): MSH-12 version missing or not supported")
    if len(message.segments) == 1:
        raise Hl7ParseError(
            f"message truncated after MSH ({len(msh.fields) - 1} fields)")
    present = {seg.name for seg in message.segments}
    for required in _REQUIRED.get(message.message_code, ()):
        if required not in present:
            last = message.segments[-1]
            raise Hl7ParseError(
                f"message truncated: no {required} segment (last is segment "
                f"{len(message.segments)} ({last.name}))")


def parse_message(text: str) -> Hl7Message:
    r"""Parse one message (any of ``\r``, ``\n``, ``\r\n`` as terminators)."""
    text = text.lstrip()
    if not text.startswith("MSH"):
        raise Hl7ParseError("message does not start with an MSH segment")
    quirks: list[str] = []
    try:
        segments = normalise_segments(text, quirks)
    except FramingError as exc:
        raise Hl7ParseError(str(exc)) from None
    return parse_segments(segments, tuple(quirks))
