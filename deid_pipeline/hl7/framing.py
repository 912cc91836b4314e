r"""Framing: one file's bytes -> its HL7 messages, and back again.

Files come from interface engines as they are: one message, many messages
one after another (with or without blank lines), HL7 batches
(FHS/BHS ... BTS/FTS) or MLLP captures (0x0B ... 0x1C 0x0D), with ``\\r``,
``\\n`` or ``\\r\\n`` terminators and Latin-1 bytes in a "UTF-8" feed. The
framer works on bytes (every delimiter is ASCII, so a bad byte can never
move a message boundary) and keeps everything between messages, so the
de-identified file can be written back with exactly the input's framing.

Nothing here raises on input: content that cannot be framed becomes a
:class:`MessageFrame` carrying a PHI-free ``error``, quarantined at ``read``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = [
    "Block",
    "Envelope",
    "FramedFile",
    "MessageFrame",
    "decode_message",
    "encode_message",
    "frame_file",
    "normalise_segments",
    "render",
]

MLLP_START = b"\x0b"
MLLP_END = b"\x1c"
_LINE = re.compile(rb"([^\r\n]*)(\r\n|\r|\n|$)")
_ENVELOPE = (b"FHS", b"BHS", b"BTS", b"FTS")
_BOM = b"\xef\xbb\xbf"
# Segments whose text may legitimately wrap onto a following raw line.
_WRAPPING_SEGMENTS = ("OBX", "NTE")


@dataclass(frozen=True, slots=True)
class MessageFrame:
    """One message's bytes as they stand in the file (without MLLP wrapper).

    ``ordinal`` is the 1-based position among the file's message frames;
    ``error`` (never containing PHI) is set when the bytes could not be
    framed as a message, and the frame then goes to quarantine.
    """

    ordinal: int
    data: bytes
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Envelope:
    """A batch header or trailer line (FHS, BHS, BTS, FTS) and its terminator."""

    data: bytes
    terminator: bytes

    @property
    def name(self) -> str:
        """The segment id (FHS, BHS, BTS or FTS)."""
        return self.data[:3].decode("ascii")


@dataclass(frozen=True, slots=True)
class Block:
    """One MLLP block: start byte, its content parts, end bytes.

    A block none of whose messages is written is dropped whole, so the output
    never holds an empty MLLP frame.
    """

    prefix: bytes
    parts: tuple[Part, ...]
    suffix: bytes


Part = bytes | MessageFrame | Envelope | Block


@dataclass(frozen=True, slots=True)
class FramedFile:
    """The parts of a file in order; literal ``bytes`` parts are separators."""

    parts: tuple[Part, ...]
    kind: str  # "mllp", "batch" or "messages"
    skipped: int = 0  # runs of stray bytes before the first message, left out

    def frames(self) -> Iterator[MessageFrame]:
        """Every message frame, MLLP blocks included, in file order."""
        yield from _frames(self.parts)


def _frames(parts: tuple[Part, ...]) -> Iterator[MessageFrame]:
    for part in parts:
        if isinstance(part, MessageFrame):
            yield part
        elif isinstance(part, Block):
            yield from _frames(part.parts)


def _is_segment_start(line: bytes, names: tuple[bytes, ...]) -> bool:
    """Tell if ``line`` starts with one of ``names`` then a delimiter or its end."""
    if line[:3] not in names:
        return False
    nxt = line[3:4]
    return not nxt or not (nxt.isalnum() or nxt.isspace())


class _Framer:
    """Splits plain (non-MLLP) content into messages, envelopes and separators."""

    def __init__(self, counter: list[int], error: str | None = None,
                 skipped: list[int] | None = None) -> None:
        self.counter = counter
        self.error = error
        self.skipped = skipped if skipped is not None else [0]
        self.parts: list[Part] = []
        self.current: list[bytes] | None = None
        self.orphan: list[bytes] = []
        self.blanks: list[bytes] = []

    def _frame(self, data: bytes, error: str | None) -> MessageFrame:
        self.counter[0] += 1
        return MessageFrame(self.counter[0], data, error)

    def _close(self) -> None:
        if self.current is not None:
            self.parts.append(self._frame(b"".join(self.current), self.error))
            self.current = None
        if self.orphan:
            content = b"".join(self.orphan)
            if not self.counter[0] and _stray(content):
                self.skipped[0] += 1
            else:
                self.parts.append(self._frame(content, "content outside any message"))
            self.orphan = []
        self.parts.extend(self.blanks)
        self.blanks = []

    def feed(self, content: bytes) -> list[Part]:
        if content.startswith(_BOM):
            self.parts.append(_BOM)
            content = content[len(_BOM):]
        for match in _LINE.finditer(content):
            line, term = match.group(1), match.group(2)
            if not line and not term:
                continue
            stripped = line.lstrip(b" \t")
            if stripped.startswith(_BOM) and _is_segment_start(
                    stripped[len(_BOM):], (b"MSH", *_ENVELOPE)):
                # Files concatenated as they were exported (each with its
                # byte order mark): the mark is kept as a separator.
                self._close()
                cut = len(line) - len(stripped) + len(_BOM)
                self.parts.append(line[:cut])
                line = stripped = line[cut:]
            if _is_segment_start(stripped, (b"MSH",)):
                self._close()
                self.current = [line + term]
            elif _is_segment_start(stripped, _ENVELOPE):
                self._close()
                self.parts.append(Envelope(line, term))
            elif not line.strip():
                self.blanks.append(line + term)
            elif self.current is not None:
                # Blank lines inside a message belong to it (wrapped narrative).
                self.current.extend(self.blanks)
                self.blanks = []
                self.current.append(line + term)
            else:
                if self.blanks:
                    self._close()
                self.orphan.append(line + term)
        self._close()
        return self.parts


def _stray(content: bytes) -> bool:
    """Whether content before the file's first message is stray bytes, not text.

    No letter or digit: a NUL run, a sender's control characters, a line of
    dashes. It can hold no PHI, so it is left out of the output and counted
    instead of sending a frame to quarantine; text (a note, a stray segment)
    may hold PHI and is quarantined. Callers ask only before the first frame:
    between and after messages such bytes still go to quarantine, as a sign
    of a broken transfer.
    """
    return not any(48 <= b <= 57 or 65 <= b <= 90 or 97 <= b <= 122 for b in content)


def _frame_mllp(data: bytes, counter: list[int], skipped: list[int]) -> list[Part]:
    parts: list[Part] = []
    pos, n = 0, len(data)

    def between(chunk: bytes) -> None:
        if not chunk:
            return
        if chunk.strip() == b"":
            parts.append(chunk)
        elif not counter[0] and _stray(chunk):
            skipped[0] += 1
        else:
            counter[0] += 1
            parts.append(MessageFrame(counter[0], chunk, "bytes outside MLLP blocks"))

    while pos < n:
        start = data.find(MLLP_START, pos)
        if start < 0:
            between(data[pos:])
            break
        between(data[pos:start])
        end = data.find(MLLP_END, start + 1)
        nxt = data.find(MLLP_START, start + 1)
        if end < 0 or 0 <= nxt < end:
            stop = nxt if nxt >= 0 else n
            inner = _Framer(counter, "MLLP block not terminated", skipped).feed(
                data[start + 1:stop])
            parts.append(Block(MLLP_START, tuple(inner), b""))
            pos = stop
            continue
        suffix = MLLP_END + (b"\r" if data[end + 1:end + 2] == b"\r" else b"")
        inner = _Framer(counter, None, skipped).feed(data[start + 1:end])
        parts.append(Block(MLLP_START, tuple(inner), suffix))
        pos = end + len(suffix)
    return parts


def frame_file(data: bytes) -> FramedFile:
    """Split a file into message frames and the separators between them."""
    counter, skipped = [0], [0]
    lead = len(data) - len(data.lstrip(b" \t\r\n" + _BOM))
    if data.startswith(MLLP_START, lead):
        if MLLP_END in data or data.count(MLLP_START) > 1:
            parts = _frame_mllp(data, counter, skipped)
            return FramedFile(tuple(parts), "mllp", skipped[0])
        # One start byte and no end byte anywhere: a message saved with the
        # start byte its sender put in front of it (hl7js's oru.hl7), not a
        # capture of blocks. The byte is left out and counted, as other stray
        # bytes before the first message. A lone block cut before its end
        # reads the same way; the parser's truncation checks still apply.
        skipped[0] += 1
        data = data[:lead] + data[lead + 1:]
    parts = _Framer(counter, None, skipped).feed(data)
    kind = "batch" if any(isinstance(p, Envelope) for p in parts) else "messages"
    return FramedFile(tuple(parts), kind, skipped[0])


def render(parts: tuple[Part, ...],
           message: Callable[[MessageFrame], bytes | None],
           envelope: Callable[[Envelope], bytes]) -> tuple[bytes, int]:
    """Reassemble a file: each frame via ``message`` (None drops it).

    Returns the bytes and the number of messages written. Separators are
    copied as they were; an MLLP block whose messages were all dropped goes
    with them.
    """
    out: list[bytes] = []
    written = 0
    for part in parts:
        if isinstance(part, bytes):
            out.append(part)
        elif isinstance(part, MessageFrame):
            rendered = message(part)
            if rendered is not None:
                out.append(rendered)
                written += 1
        elif isinstance(part, Envelope):
            out.append(envelope(part))
        else:
            inner, count = render(part.parts, message, envelope)
            if count:
                out.append(part.prefix + inner + part.suffix)
                written += count
    return b"".join(out), written


# ---------------------------------------------------------------- decoding

# MSH-18 character set names (HL7 table 0211) -> Python codecs.
_CHARSETS = {
    "ASCII": "ascii",
    "8859/1": "latin-1",
    "8859/15": "iso8859-15",
    "UNICODE UTF-8": "utf-8",
    "UNICODE": "utf-8",
    "UTF-8": "utf-8",
    "UTF8": "utf-8",
    "WINDOWS-1252": "cp1252",
    "CP1252": "cp1252",
    "ISO-8859-1": "latin-1",
    "LATIN-1": "latin-1",
}


def declared_charset(data: bytes) -> str | None:
    """Return the codec MSH-18 names, if it names one we know."""
    if not data.startswith(b"MSH") or len(data) < 4:
        return None
    sep = data[3:4]
    first = re.split(rb"\r|\n", data, maxsplit=1)[0]
    fields = first.split(sep)
    if len(fields) < 18:
        return None
    value = fields[17]
    if len(fields[1]) >= 2:  # first repetition, first component
        value = value.split(fields[1][1:2])[0].split(fields[1][0:1])[0]
    name = value.strip().decode("ascii", "replace").upper()
    return _CHARSETS.get(name)


def decode_message(data: bytes) -> tuple[str, str]:
    """Decode one message: ``(text, codec)``; never raises.

    A declared Latin-1 message is read as cp1252 when it holds cp1252-only
    bytes (senders mislabel it often). Anything else is tried as UTF-8, then
    cp1252, then Latin-1, which decodes every byte.
    """
    declared = declared_charset(data)
    if declared in ("latin-1", "iso8859-15"):
        if declared == "latin-1" and re.search(rb"[\x80-\x9f]", data):
            try:
                return data.decode("cp1252"), "cp1252"
            except UnicodeDecodeError:
                pass
        return data.decode(declared), declared
    if declared == "cp1252":
        try:
            return data.decode("cp1252"), "cp1252"
        except UnicodeDecodeError:
            return data.decode("latin-1"), "latin-1"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        try:
            return data.decode("cp1252"), "cp1252"
        except UnicodeDecodeError:
            return data.decode("latin-1"), "latin-1"
    return text, ("ascii" if declared == "ascii" else "utf-8")


def _fallback_char(ch: str) -> str:
    base = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode("ascii")
    return base or "?"


def encode_message(text: str, codec: str) -> bytes:
    """Encode in the input's own codec; characters it lacks lose their accents."""
    try:
        return text.encode(codec)
    except UnicodeEncodeError:
        out = []
        for ch in text:
            try:
                out.append(ch.encode(codec))
            except UnicodeEncodeError:
                out.append(_fallback_char(ch).encode(codec, "replace"))
        return b"".join(out)


# ---------------------------------------------------------------- segments

_SEGMENT_ID = re.compile(r"[A-Z][A-Z0-9]{2}")


class FramingError(ValueError):
    """A message whose lines cannot be made into segments (PHI-free message)."""


# A whole message written on one line: the segment terminators were lost or
# written as text. A segment id with the field separator, after a blank or a
# terminator spelled out, starts a segment again.
_SPELLED_BREAK = r"(?:\\r|\\n|<cr>|<CR>|\s)+"


def _split_one_line(line: str, sep: str) -> list[str]:
    """Cut a one-line message where a segment id follows a blank or spelled break."""
    starts = re.compile(_SPELLED_BREAK + f"(?=[A-Z][A-Z0-9]{{2}}{re.escape(sep)})")
    return [part for part in starts.split(line) if part]


def normalise_segments(text: str, quirks: list[str] | None = None) -> list[str]:
    r"""Split a message into segments, terminators removed (``\r``, ``\n``, ``\r\n``).

    A line that does not start a segment continues the segment before it: in
    an OBX or NTE (report text wrapped by a sender with a raw line break) it
    is joined with an escaped line break, so the text stays in its field; in
    any other segment (a long header line wrapped at a fixed width) it is
    joined as it stands, as hl7apy keeps a stray line break inside its field.
    A message written whole on one line (terminators lost, or spelled ``\r``)
    is cut where segment ids stand. Each of these is noted in ``quirks``
    (``segment_wrapped``, ``segments_on_one_line``). Only a continuation
    before the first segment is refused.
    """
    sep = text[3:4] if text.startswith("MSH") else "|"
    esc = "\\"
    if text.startswith("MSH") and len(text) > 6:
        esc = text[6]
    noted = quirks if quirks is not None else []
    lines = re.split(r"\r\n|\r|\n", text)
    if sum(1 for line in lines if line.strip()) == 1 and sep.strip():
        lines = _split_one_line(text.strip(), sep)
        if len(lines) > 1:
            noted.append("segments_on_one_line")
    segments: list[str] = []
    pending_blank = 0
    for line in lines:
        line = line.strip()
        if not line:
            pending_blank += 1
            continue
        head = line[:3]
        if _SEGMENT_ID.fullmatch(head) and (len(line) == 3 or line[3] == sep):
            segments.append(line)
        elif segments and segments[-1][:3] in _WRAPPING_SEGMENTS:
            brk = f"{esc}.br{esc}"
            segments[-1] = segments[-1] + brk * (1 + pending_blank) + line
        elif segments:
            segments[-1] = segments[-1] + line
            if "segment_wrapped" not in noted:
                noted.append("segment_wrapped")
        else:
            raise FramingError("segment 1: line is not a segment (after start)")
        pending_blank = 0
    return segments
